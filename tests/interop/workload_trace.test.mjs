// The workload trace (bench/workload/README.md, "A valid trace") reads the
// same through both readers: the JS one (bench/workload/trace_file.mjs, used
// by record.mjs, replay.mjs and report.mjs) and the C++ one
// (bench/workload/trace_file.cpp, spinrpc-replay). Both say exactly what
// tests/workload/expected.tsv says of every file in tests/workload/traces/
// (node tests/workload/make_traces.mjs); both replayers play exactly the
// committed trace's last requests, so each read it to its end; neither
// plays a file it refuses.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { REPO_ROOT, requireBinary } from "./peers.mjs";
import { readTrace, TraceError } from "../../bench/workload/trace_file.mjs";

const BIN = join(process.env.SPINRPC_BUILD_DIR || join(REPO_ROOT, "build"), "bin");
const REPLAY = join(BIN, "spinrpc-replay");
const REPLAY_JS = join(REPO_ROOT, "bench", "workload", "replay.mjs");
const TRACE = join(REPO_ROOT, "bench", "workload", "aws-cdk-lib.trace.gz");
const UPGRADE = join(REPO_ROOT, "bench", "workload", "upgrade_trace.mjs");
const SHARED = join(REPO_ROOT, "tests", "workload");
const HANG_GUARD_MS = 120_000;

test("the committed trace is gzip-compressed, format 2 and complete", () => {
  assert.deepEqual([...readFileSync(TRACE).subarray(0, 2)], [0x1f, 0x8b], "gzip magic");
  const trace = readTrace(TRACE);
  assert.equal(trace.version, 2);
  assert.match(trace.header[0], /^# spinrpc workload trace 2 /);
  assert.equal(trace.rows.length, 188121, "the recording's 188 121 requests");
  assert.equal(trace.methods.length, 21);
  assert.ok(readFileSync(TRACE).length < 2 << 20, "tracked files stay under 2 MiB");
});

test("both readers say of every shared trace file what tests/workload/expected.tsv says", () => {
  requireBinary({ name: "spinrpc-replay", path: REPLAY });
  const expected = new Map(readFileSync(join(SHARED, "expected.tsv"), "utf8").split("\n")
    .filter((l) => l && !l.startsWith("#")).map((l) => l.split("\t")));
  const files = readdirSync(join(SHARED, "traces")).sort();
  assert.deepEqual(files, [...expected.keys()].sort(), "expected.tsv lists every file, and only those");
  let valid = 0;
  for (const name of files) {
    const path = join(SHARED, "traces", name);
    const want = `${path}: ${expected.get(name)}`;
    const cpp = spawnSync(REPLAY, ["--check", path], { encoding: "utf8", timeout: HANG_GUARD_MS });
    const js = spawnSync(process.execPath, [REPLAY_JS, "--check", path], { encoding: "utf8", timeout: HANG_GUARD_MS });
    const ok = expected.get(name).startsWith("a valid trace");
    valid += ok;
    for (const [who, run, prefix] of [["spinrpc-replay", cpp, "spinrpc-replay: "], ["replay.mjs", js, "replay.mjs: "]]) {
      assert.equal(run.status, ok ? 0 : 1, `${who} --check ${name}: status (${run.stderr})`);
      assert.equal(ok ? run.stdout : run.stderr, ok ? `${want}\n` : `${prefix}${want}\n`, `${who} --check ${name}`);
    }
    // The module replay.mjs and report.mjs read through, called directly.
    if (ok) assert.doesNotThrow(() => readTrace(path), name);
    else assert.throws(() => readTrace(path), (e) => e instanceof TraceError && e.message === want, name);
  }
  assert.ok(valid >= 3 && files.length - valid >= 40, `${valid} valid, ${files.length - valid} refused`);
});

test("both readers agree on seeded damage to the good files: cuts, flipped bits, bytes added or inserted", () => {
  requireBinary({ name: "spinrpc-replay", path: REPLAY });
  const dir = mkdtempSync(join(tmpdir(), "workload-damage-"));
  try {
    let x = 0x5eed;  // xorshift32
    const random = (n) => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x % n; };
    const sources = ["good.trace", "good.trace.gz", "good-all-header-fields.trace.gz"].map((n) => [n, readFileSync(join(SHARED, "traces", n))]);
    const said = { valid: 0, refused: 0 };
    for (let i = 0; i < 200; i++) {
      const [name, source] = sources[random(sources.length)];
      let bytes = Buffer.from(source);
      const how = random(4);
      if (how === 0) bytes = bytes.subarray(0, random(bytes.length));
      else if (how === 1) for (let k = 1 + random(3); k > 0; k--) bytes[random(bytes.length)] ^= 1 << random(8);
      else if (how === 2) bytes = Buffer.concat([bytes, Buffer.from([random(256), random(256)]).subarray(0, 1 + random(2))]);
      else { const at = random(bytes.length); bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from([random(256)]), bytes.subarray(at)]); }
      const path = join(dir, `${i}-${name}`);
      writeFileSync(path, bytes);
      let js;
      try {
        const trace = readTrace(path);
        js = `${path}: a valid trace, version 2: ${trace.rows.length} requests, ${trace.methods.length} methods\n`;
        said.valid++;
      } catch (e) {
        assert.ok(e instanceof TraceError, `${path}: ${e.stack}`);
        js = `spinrpc-replay: ${e.message}\n`;
        said.refused++;
      }
      const cpp = spawnSync(REPLAY, ["--check", path], { encoding: "utf8", timeout: HANG_GUARD_MS });
      assert.equal(cpp.stdout + cpp.stderr, js, `damage ${how} to ${name} (case ${i})`);
    }
    assert.ok(said.refused > 100, `${said.refused} refused, ${said.valid} valid`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a trace either reader refuses is never replayed, not even in part", () => {
  requireBinary({ name: "spinrpc-replay", path: REPLAY });
  for (const name of ["cut-at-line.trace", "version-1.trace", "trailing-bytes.trace.gz", "nan.trace", "negative-size.trace"]) {
    const path = join(SHARED, "traces", name);
    const args = ["--trace", path, "--rounds", "1", "--variants", "off"];
    const cpp = spawnSync(REPLAY, args, { encoding: "utf8", timeout: HANG_GUARD_MS });
    const js = spawnSync(process.execPath, [REPLAY_JS, ...args], { encoding: "utf8", timeout: HANG_GUARD_MS });
    for (const [who, run] of [["spinrpc-replay", cpp], ["replay.mjs", js]]) {
      assert.equal(run.status, 1, `${who} ${name}: ${run.stderr}`);
      assert.equal(run.stdout, "", `${who} ${name}: no replay`);
      assert.ok(run.stderr.includes(`${path}: `), `${who} ${name} names the file: ${run.stderr}`);
    }
  }
});

test("upgrade_trace.mjs rewrites a format-1 trace as format 2 with the same requests", () => {
  const dir = mkdtempSync(join(tmpdir(), "workload-upgrade-"));
  try {
    const old = join(SHARED, "traces", "version-1.trace");
    for (const out of [join(dir, "up.trace"), join(dir, "up.trace.gz")]) {
      execFileSync(process.execPath, [UPGRADE, old, out], { stdio: ["ignore", "ignore", "pipe"] });
      const trace = readTrace(out);
      const oldLines = readFileSync(old, "latin1").split("\n");
      assert.deepEqual(trace.rows.map((r) => r.join(" ")), oldLines.filter((l) => l && !l.startsWith("#")));
      assert.deepEqual(trace.header.slice(2), oldLines.filter((l) => l.startsWith("#")).slice(1), "the rest of the header kept");
    }
    // Only format 1 is upgraded.
    const again = spawnSync(process.execPath, [UPGRADE, join(SHARED, "traces", "good.trace"), join(dir, "x.trace")], { encoding: "utf8" });
    assert.equal(again.status, 1);
    assert.match(again.stderr, /not a format-1 trace/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("both replayers read the whole compressed trace: they play exactly its last 3 requests", () => {
  requireBinary({ name: "spinrpc-replay", path: REPLAY });
  const count = readTrace(TRACE).rows.length;
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
  assert.equal(past.stderr, `spinrpc-replay: ${TRACE}: no requests to replay from --start ${count} (the trace has ${count})\n`);
});

test("the committed trace cut short is an error in every reader, naming the file", () => {
  requireBinary({ name: "spinrpc-replay", path: REPLAY });
  const dir = mkdtempSync(join(tmpdir(), "workload-trace-"));
  try {
    const bytes = readFileSync(TRACE);
    const cut = join(dir, "cut.trace.gz");
    writeFileSync(cut, bytes.subarray(0, bytes.length >> 1));
    const want = `${cut}: the gzip data is cut short`;
    assert.throws(() => readTrace(cut), { message: want });
    for (const [who, run] of [
      ["spinrpc-replay", spawnSync(REPLAY, ["--trace", cut, "--rounds", "1"], { encoding: "utf8", timeout: HANG_GUARD_MS })],
      ["replay.mjs", spawnSync(process.execPath, [REPLAY_JS, "--trace", cut, "--rounds", "1"], { encoding: "utf8", timeout: HANG_GUARD_MS })],
    ]) {
      assert.equal(run.status, 1, `${who}: ${run.stderr}`);
      assert.equal(run.stderr, `${who}: ${want}\n`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
