// The committed workload trace (bench/workload/aws-cdk-lib.trace.gz, stored
// gzip-compressed) reads the same through all three readers: the JS reader
// (bench/workload/trace_file.mjs, used by record.mjs, replay.mjs and
// report.mjs) and both replayers play exactly the trace's last requests, so
// each read the file to its end; a truncated copy is an error in each,
// never a shorter trace.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { REPO_ROOT, requireBinary } from "./peers.mjs";
import { readTraceText } from "../../bench/workload/trace_file.mjs";

const BIN = join(process.env.SPINRPC_BUILD_DIR || join(REPO_ROOT, "build"), "bin");
const REPLAY = join(BIN, "spinrpc-replay");
const REPLAY_JS = join(REPO_ROOT, "bench", "workload", "replay.mjs");
const TRACE = join(REPO_ROOT, "bench", "workload", "aws-cdk-lib.trace.gz");
const HANG_GUARD_MS = 120_000;

const rowsOf = (text) => text.split("\n").filter((l) => l && !l.startsWith("#"));

test("the committed trace is gzip-compressed and well formed", () => {
  assert.deepEqual([...readFileSync(TRACE).subarray(0, 2)], [0x1f, 0x8b], "gzip magic");
  const text = readTraceText(TRACE);
  assert.ok(text.startsWith("# spinrpc workload trace 1"), "the trace's header");
  const methods = text.split("\n").find((l) => l.startsWith("# methods ")).slice(10).split(" ");
  const rows = rowsOf(text);
  assert.ok(rows.length > 1000, `${rows.length} requests`);
  for (const row of rows) {
    const fields = row.split(" ").map(Number);
    assert.equal(fields.length, 5, row);
    assert.ok(fields.every(Number.isInteger) && fields[0] < methods.length, row);
  }
});

test("both replayers read the whole compressed trace: they play exactly its last 3 requests", () => {
  requireBinary({ name: "spinrpc-replay", path: REPLAY });
  const count = rowsOf(readTraceText(TRACE)).length;
  const args = ["--trace", TRACE, "--start", String(count - 3), "--rounds", "1", "--variants", "off"];
  const cpp = execFileSync(REPLAY, args, { encoding: "utf8", timeout: HANG_GUARD_MS });
  const js = execFileSync(process.execPath, [REPLAY_JS, ...args], { encoding: "utf8", timeout: HANG_GUARD_MS });
  for (const [who, out] of [["spinrpc-replay", cpp], ["replay.mjs", js]]) {
    const lines = out.split("\n").filter(Boolean).map((l) => JSON.parse(l));
    assert.equal(lines.length, 1, `${who}: one replay`);
    assert.equal(lines[0].requests, 3, `${who}: the trace's last 3 requests`);
  }
  // One past the end: nothing left to play is an error, not an empty run.
  const past = spawnSync(REPLAY, ["--trace", TRACE, "--start", String(count), "--rounds", "1"], { encoding: "utf8", timeout: HANG_GUARD_MS });
  assert.equal(past.status, 1);
  assert.match(past.stderr, /no requests/);
});

test("a truncated trace is an error in every reader", () => {
  requireBinary({ name: "spinrpc-replay", path: REPLAY });
  const dir = mkdtempSync(join(tmpdir(), "workload-trace-"));
  try {
    const bytes = readFileSync(TRACE);
    const cut = join(dir, "cut.trace.gz");
    writeFileSync(cut, bytes.subarray(0, bytes.length >> 1));
    assert.throws(() => readTraceText(cut), /unexpected end of file/);
    const cpp = spawnSync(REPLAY, ["--trace", cut, "--rounds", "1"], { encoding: "utf8", timeout: HANG_GUARD_MS });
    assert.equal(cpp.status, 1, cpp.stderr);
    assert.match(cpp.stderr, /unexpected end of file/);
    const js = spawnSync(process.execPath, [REPLAY_JS, "--trace", cut, "--rounds", "1"], { encoding: "utf8", timeout: HANG_GUARD_MS });
    assert.notEqual(js.status, 0);
    assert.match(js.stderr, /unexpected end of file/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
