// The workload's recording proxy (bench/workload/record_proxy.cpp) is transparent:
// bench/workload/walk.mjs, a jsii-style walker on the real client, gives
// byte-identical output against the real tsgo directly and through
// spinrpc-record-proxy, and the proxy's record matches what the walker sent
// request by request, with tsgo's handling time for each and no contents.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { REPO_ROOT, requireBinary, tsgoPeer } from "./peers.mjs";

const PROXY = process.env.SPINRPC_RECORD_PROXY || join(process.env.SPINRPC_BUILD_DIR || join(REPO_ROOT, "build"), "bin", "spinrpc-record-proxy");
const WALK = join(REPO_ROOT, "bench", "workload", "walk.mjs");
const FIXTURE = join(REPO_ROOT, "bench", "workload", "fixture");

test("the walker's output is identical through spinrpc-record-proxy, and the record matches it", () => {
  const tsgo = tsgoPeer();
  requireBinary(tsgo);
  requireBinary({ name: "spinrpc-record-proxy", path: PROXY });
  const dir = mkdtempSync(join(tmpdir(), "record-proxy-"));
  try {
    const walk = (server, name) => {
      execFileSync(process.execPath, [WALK, "--project", FIXTURE, "--tsgo", server, "--out", join(dir, `${name}.out`), "--gaps", join(dir, `${name}.gaps`)], {
        env: { ...process.env, SPINRPC_RECORD_TSGO: tsgo.path, SPINRPC_RECORD_OUT: join(dir, "record.raw") },
        stdio: ["ignore", "ignore", "pipe"],
      });
      return readFileSync(join(dir, `${name}.out`), "utf8");
    };
    const direct = walk(tsgo.path, "direct");
    const proxied = walk(PROXY, "proxy");
    assert.ok(direct.split("\n").length > 20, "the walk printed the fixture's declarations");
    assert.equal(proxied, direct);

    // The proxy writes its record once the client is gone (bounded wait).
    const raw = join(dir, "record.raw");
    const deadline = Date.now() + 30_000;
    while (!existsSync(raw) && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    const lines = readFileSync(raw, "utf8").split("\n").filter(Boolean);
    const names = lines[1].replace(/^# methods /, "").split(" ");
    const rows = lines.filter((l) => !l.startsWith("#")).map((l) => l.split(" ").map(Number));
    const sent = readFileSync(join(dir, "proxy.gaps"), "utf8").split("\n").filter(Boolean).map((l) => l.split("\t")[0]);
    assert.deepEqual(rows.map((r) => names[r[0]]), sent, "one record per request, in order");
    for (const [m, req, reply, type, serverNs] of rows) {
      assert.equal(type, 4, `${names[m]} answered with a Response`);
      assert.ok(req > 0 && reply > 0, `${names[m]}: sizes recorded`);
      assert.ok(serverNs >= 0, `${names[m]}: tsgo's handling time recorded`);
    }
    assert.ok(!readFileSync(raw, "utf8").includes("Circle"), "no contents of the walked library in the record");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
