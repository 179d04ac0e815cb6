// The per-request trace through the Node binding (SPINRPC_TRACE, the
// binding's `trace` option; node/trace-merge.mjs). Per version in
// versions.mjs: a Node of its own runs the real sync client under the
// register hook against spinrpc-server with SPINRPC_TRACE=<dir>/t-%p.json;
// the client's file and the server's (each under its own pid) must be
// valid trace-event JSON by the rules of trace_rules.mjs, with every
// request whole on both sides and the same requests in the same order,
// and spinrpc-trace-merge must make one valid file of them with both
// processes. Then the class's `trace` option: a Call and an Error against
// scripted_server, a name without %p, "" for none, and a non-string is a
// TypeError. Only orderings on the one clock both sides read are asserted,
// never durations; each Node's timeout is a hang guard.

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO_ROOT, requireBinary, scriptedServer, spinrpcPeer } from "./peers.mjs";
import { VERSIONS } from "./versions.mjs";
import { checkClientRequests, checkServerRequests, loadTrace, SLACK_US } from "./trace_rules.mjs";

const INDEX = join(REPO_ROOT, "node", "index.mjs");
const REGISTER = join(REPO_ROOT, "node", "register.mjs");
const MERGE = join(REPO_ROOT, "node", "trace-merge.mjs");

const scratch = mkdtempSync(join(tmpdir(), "spinrpc-trace-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
let cases = 0;
/** A fresh directory for one case's files. */
const caseDir = () => {
  const dir = join(scratch, `case-${++cases}`);
  mkdirSync(dir);
  return dir;
};

/** The environment without any SPINRPC_TRACE* entry, plus `extra`. */
function envWith(extra) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SPINRPC_TRACE")));
  return { ...env, ...extra };
}

/** Runs `program` (an ES module's text) in a Node of its own; returns its JSON line. */
function runNode(program, { env, hook = false }) {
  const args = [...(hook ? ["--import", pathToFileURL(REGISTER).href] : []), "--input-type=module", "-e", program];
  const r = spawnSync(process.execPath, args, { encoding: "utf8", env, cwd: scratch, timeout: 120_000, killSignal: "SIGKILL" });
  assert.equal(r.signal, null, `the Node hung (killed after 120 s): ${r.stderr}`);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split("\n").at(-1));
}

/** The request span of `seq` on `pid`. */
const requestSpan = (trace, pid, seq) => trace.spansOf(pid, seq).find((e) => e.cat === "request");

/**
 * Both files line up on one clock, request by request: the same method and
 * reply, the server's request begins after the client's did and its reply
 * starts out before the client's request ends.
 */
function checkLinedUp(client, clientPid, server, serverPid) {
  const c = checkClientRequests(client, clientPid);
  const s = checkServerRequests(server, serverPid);
  assert.deepEqual([...c], [...s], "the same requests, seq for seq");
  for (const seq of c.keys()) {
    const cr = requestSpan(client, clientPid, seq);
    const sr = requestSpan(server, serverPid, seq);
    assert.equal(cr.args.reply, sr.args.reply, `seq ${seq}`);
    assert.equal(cr.args.bytes_out, sr.args.bytes_out, `seq ${seq}`);
    assert.equal(cr.args.bytes_in, sr.args.bytes_in, `seq ${seq}`);
    assert.ok(sr.ts >= cr.ts, `seq ${seq}: the server's request begins after the client's`);
    const send = server.only(server.spansOf(serverPid, seq), `send ${sr.args.reply}`);
    assert.ok(send.ts <= cr.ts + cr.dur + SLACK_US, `seq ${seq}: the reply goes out before the client's request ends`);
  }
  return c;
}

for (const ts of VERSIONS) {
  const label = `${ts.name}@${ts.version}`;

  describe(`${label} sync client through the binding against spinrpc-server, SPINRPC_TRACE=<dir>/t-%p.json`, () => {
    test("both files valid, every request whole on both sides and lined up; merged into one valid file of two processes", () => {
      const server = spinrpcPeer();
      requireBinary(server);
      const dir = caseDir();
      const out = runNode(`
        import { API } from ${JSON.stringify(ts.syncUrl)};
        // CLOCK_MONOTONIC, the trace's clock, in µs.
        const now = () => Number(process.hrtime.bigint()) / 1000;
        const out = { pid: process.pid, from: now() };
        const api = new API({ tsserverPath: ${JSON.stringify(server.path)}, cwd: ${JSON.stringify(dir)} });
        out.echo = api.client.echo("hello");
        const big = new Uint8Array(3 << 20).map((_, i) => i % 251);
        out.big = Buffer.from(api.client.echoBinary(big)).equals(Buffer.from(big));
        try { api.client.apiRequest("nope", null); } catch (e) { out.error = e.message; }
        for (let i = 0; i < 20; i++) api.client.echo("n" + i);
        api.close();
        out.to = now();
        console.log(JSON.stringify(out));`,
      { env: envWith({ SPINRPC_TRACE: join(dir, "t-%p.json") }), hook: true });
      assert.equal(out.echo, "hello");
      assert.equal(out.big, true);
      assert.match(out.error, /unknown API method "nope"/);

      const files = readdirSync(dir).sort();
      const clientFile = `t-${out.pid}.json`;
      assert.equal(files.length, 2, `two files, one per process: ${files}`);
      assert.ok(files.includes(clientFile), `the client's file under its pid: ${files}`);
      const serverFile = files.find((f) => f !== clientFile);
      const serverPid = Number(/^t-(\d+)\.json$/.exec(serverFile)?.[1]);
      const client = loadTrace(join(dir, clientFile));
      const serverTrace = loadTrace(join(dir, serverFile));
      assert.equal(client.spinrpc.pid, out.pid);
      assert.equal(serverTrace.spinrpc.pid, serverPid);
      // No span reaches back before the session began, or past its end.
      for (const e of [...client.events, ...serverTrace.events].filter((e) => e.ph !== "M")) {
        assert.ok(e.ts >= out.from && e.ts + e.dur <= out.to, `${e.name} (seq ${e.seq}) at ${e.ts}, dur ${e.dur}: outside the session [${out.from}, ${out.to}]`);
      }

      const methods = checkLinedUp(client, out.pid, serverTrace, serverPid);
      const list = [...methods.values()];
      assert.ok(list.length >= 23, `every request: ${list}`);
      assert.equal(list.filter((m) => m === "nope").length, 1);
      const nope = [...methods].find(([, m]) => m === "nope")[0];
      assert.equal(requestSpan(client, out.pid, nope).args.reply, "Error");
      assert.ok(list.filter((m) => m === "echo").length >= 22, `${list}`);
      const bigSeq = [...methods].find(([seq]) => requestSpan(client, out.pid, seq).args.bytes_out >= 3 << 20)?.[0];
      assert.ok(bigSeq !== undefined, "the 3 MiB request");

      const names = (trace, pid) => Object.fromEntries(trace.events.filter((e) => e.ph === "M" && e.pid === pid)
        .map((e) => [e.name, e.args.name]));
      assert.deepEqual(names(client, out.pid), { process_name: "node", thread_name: "spinrpc client: spinrpc-server" });
      assert.deepEqual(names(serverTrace, serverPid), { process_name: "spinrpc-server", thread_name: "spinrpc-server" });

      const merged = join(dir, "merged.json");
      const r = spawnSync(process.execPath, [MERGE, "-o", merged, join(dir, clientFile), join(dir, serverFile)], { encoding: "utf8" });
      assert.equal(r.status, 0, r.stderr);
      const both = loadTrace(merged);
      assert.deepEqual([...new Set(both.events.map((e) => e.pid))].sort((a, b) => a - b), [out.pid, serverPid].sort((a, b) => a - b));
      assert.equal(both.events.length, client.events.length + serverTrace.events.length);
      assert.deepEqual(both.spinrpc.merged.map((p) => [p.file, p.pid]), [[clientFile, out.pid], [serverFile, serverPid]]);
      // The same checks hold on the merged timeline.
      checkLinedUp(both, out.pid, both, serverPid);
      assert.deepEqual(readdirSync(dir).sort(), [...files, "merged.json"].sort(), "no temporary left");
    });
  });
}

describe("spinrpc-trace-merge", () => {
  test("refuses a file that is no trace, naming it, and a missing -o", () => {
    const dir = caseDir();
    const notTrace = join(dir, "not-a-trace.json");
    spawnSync("sh", ["-c", `echo '{"events":[]}' > '${notTrace}'`]);
    const bad = spawnSync(process.execPath, [MERGE, "-o", join(dir, "out.json"), notTrace], { encoding: "utf8" });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /not-a-trace\.json: not a trace-event JSON object/);
    const usage = spawnSync(process.execPath, [MERGE, notTrace], { encoding: "utf8" });
    assert.equal(usage.status, 2);
    assert.deepEqual(readdirSync(dir), ["not-a-trace.json"]);
  });

  test("runs by any path to it: a copy in a folder with a space, a symlink of another name", () => {
    const dir = caseDir();
    const spaced = join(dir, "with space");
    mkdirSync(spaced);
    copyFileSync(MERGE, join(spaced, "trace-merge.mjs"));
    symlinkSync(MERGE, join(dir, "merge-traces"));
    const trace = join(dir, "t.json");
    writeFileSync(trace, JSON.stringify({ traceEvents: [], displayTimeUnit: "ns", otherData: { spinrpc: {} } }));
    for (const program of [join(spaced, "trace-merge.mjs"), join(dir, "merge-traces")]) {
      const out = join(dir, "out.json");
      const r = spawnSync(process.execPath, [program, "-o", out, trace], { encoding: "utf8" });
      assert.equal(r.status, 0, `${program}: ${r.stderr}`);
      assert.deepEqual(loadTrace(out).spinrpc.merged.map((p) => p.file), ["t.json"], program);
      rmSync(out);
      const missing = spawnSync(process.execPath, [program, "-o", out, join(dir, "none.json")], { encoding: "utf8" });
      assert.equal(missing.status, 1, program);
      assert.match(missing.stderr, /none\.json: ENOENT/);
    }
  });
});

describe("SyncRpcChannel: the trace option", () => {
  const program = (body) => `
    import { SyncRpcChannel } from ${JSON.stringify(pathToFileURL(INDEX).href)};
    const out = { pid: process.pid };
    ${body}
    console.log(JSON.stringify(out));`;

  test("a Call and an Error against scripted_server: both files valid, the Call nested on both sides", () => {
    const scripted = scriptedServer();
    requireBinary(scripted);
    const dir = caseDir();
    const out = runNode(program(`
      const c = new SyncRpcChannel(${JSON.stringify(scripted.path)}, [], { trace: ${JSON.stringify(join(dir, "b-%p.json"))} });
      out.server = c.pid;
      c.registerCallback("readFile", (name, path) => "contents of " + path);
      out.echo = c.requestSync("echo", "x");
      out.call = c.requestSync("callback", "readFile /a.ts");
      try { c.requestSync("throwWith", "no luck"); } catch (e) { out.error = e.message; }
      out.big = c.requestSync("echo", "z".repeat(4 << 20)).length;
      c.close();`), { env: envWith({}) });
    assert.equal(out.call, "contents of /a.ts");
    assert.equal(out.error, "no luck");
    assert.equal(out.big, 4 << 20);
    assert.deepEqual(readdirSync(dir).sort(), [`b-${out.pid}.json`, `b-${out.server}.json`].sort());
    const client = loadTrace(join(dir, `b-${out.pid}.json`));
    const server = loadTrace(join(dir, `b-${out.server}.json`));
    const methods = checkLinedUp(client, out.pid, server, out.server);
    assert.deepEqual([...methods], [[1, "echo"], [2, "callback"], [3, "throwWith"], [4, "echo"]]);
    const clientCall = client.only(client.spansOf(out.pid, 2), "call readFile");
    const serverCall = server.only(server.spansOf(out.server, 2), "call readFile");
    assert.equal(clientCall.args.reply, "CallResponse");
    assert.equal(serverCall.parent.name, "handler");
    assert.deepEqual(server.spansOf(out.server, 2).filter((e) => e.parent === serverCall).map((e) => e.name).sort(),
      ["read CallResponse", "send Call"]);
    assert.ok(serverCall.ts <= clientCall.ts, "the server's Call begins before the client's answer");
    assert.equal(requestSpan(client, out.pid, 3).args.reply, "Error");
  });

  test("a name without %p gets each process's pid, the client's and the server's; \"\" writes nothing", () => {
    const server = spinrpcPeer();
    requireBinary(server);
    const dir = caseDir();
    const out = runNode(program(`
      const a = new SyncRpcChannel(${JSON.stringify(server.path)}, ["--api"], { trace: ${JSON.stringify(join(dir, "one.json"))} });
      out.a = a.pid;
      a.requestSync("echo", "x");
      a.close();
      const b = new SyncRpcChannel(${JSON.stringify(server.path)}, ["--api"], { trace: "" });
      b.requestSync("echo", "y");
      b.close();`), { env: envWith({}) });
    assert.deepEqual(readdirSync(dir).sort(), [`one.${out.pid}.json`, `one.${out.a}.json`].sort());
    assert.equal(loadTrace(join(dir, `one.${out.pid}.json`)).spinrpc.pid, out.pid);
    assert.equal(checkServerRequests(loadTrace(join(dir, `one.${out.a}.json`)), out.a).size, 1);
  });

  test("a server SIGKILLed mid-session: the client's file is still written at close() and valid", () => {
    const server = spinrpcPeer();
    requireBinary(server);
    const dir = caseDir();
    const out = runNode(program(`
      const c = new SyncRpcChannel(${JSON.stringify(server.path)}, ["--api"], { trace: ${JSON.stringify(join(dir, "k-%p.json"))} });
      c.requestSync("echo", "x");
      c.requestSync("echo", "y");
      process.kill(c.pid, "SIGKILL");
      try { c.requestSync("echo", "z".repeat(1 << 20)); } catch (e) { out.code = e.code; }
      c.close();`), { env: envWith({}) });
    assert.equal(out.code, "ERR_SPINRPC_CHILD_EXITED");
    assert.deepEqual(readdirSync(dir), [`k-${out.pid}.json`], "the client's file alone: the server's died with it");
    const client = loadTrace(join(dir, `k-${out.pid}.json`));
    assert.deepEqual([...checkClientRequests(client, out.pid)], [[1, "echo"], [2, "echo"]]);
    assert.equal(client.spinrpc.channels[0].requests_begun, 3);
  });

  test("a Node that exits with its channel open: the client's file is written at exit, valid", () => {
    const server = spinrpcPeer();
    requireBinary(server);
    const dir = caseDir();
    const out = runNode(program(`
      const c = new SyncRpcChannel(${JSON.stringify(server.path)}, ["--api"], { trace: ${JSON.stringify(join(dir, "e-%p.json"))} });
      for (let i = 0; i < 5; i++) c.requestSync("echo", "n" + i);`), { env: envWith({}) });
    // The server's file is not asserted: the binding SIGKILLs a child left
    // never closed (docs/NODE.md, "close()"), which ends it before it can write.
    const client = loadTrace(join(dir, `e-${out.pid}.json`));
    assert.deepEqual([...checkClientRequests(client, out.pid).values()], ["echo", "echo", "echo", "echo", "echo"]);
  });

  test("a value that is not a string is a TypeError naming the option; the unknown-option message lists it", async () => {
    const { SyncRpcChannel } = await import(pathToFileURL(INDEX).href);
    const path = spinrpcPeer().path;
    for (const value of [1, true, null, {}, [], () => "t.json", Symbol("t")]) {
      assert.throws(() => new SyncRpcChannel(path, ["--api"], { trace: value }),
        { name: "TypeError", message: "SyncRpcChannel: option trace must be a string (a file name)" }, String(typeof value));
    }
    assert.throws(() => new SyncRpcChannel(path, ["--api"], { Trace: "t.json" }),
      { name: "TypeError", message: /^SyncRpcChannel: unknown option Trace \(.*\btrace\b.*\)$/ });
  });
});
