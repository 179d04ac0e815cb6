#!/usr/bin/env node
// replay (JS): plays a workload trace (bench/workload/README.md; FILE.gz is
// read gzip-compressed, trace_file.mjs) through the
// TypeScript client's own SyncRpcChannel, constructed as
// @typescript/native-preview's dist/api/sync/client.js constructs it,
// against spinrpc-bench-server (spinrpc-server plus benchWork): requests of the recorded
// sizes, the recorded server time as the server's busy work, the recorded
// client gaps as busy work here. Run under `node --import node/register.mjs`
// the Node binding replaces that SyncRpcChannel (same module) unchanged.
//
//   node [--import node/register.mjs] bench/workload/replay.mjs --trace FILE
//        [--start I] [--limit N] [--rounds R] [--parallel LIST]
//        [--variants default,off] [--json FILE]
//   node bench/workload/replay.mjs --check FILE
//
// Options as spinrpc-replay's. --check reads and checks FILE only, as
// spinrpc-replay --check does (bench/workload/README.md, "A valid trace"). Variants set the environment both ends read
// at spawn: default unsets TSGO_SYNC_SPIN_US/TSGO_SYNC_SPIN_ADAPTIVE, off
// sets TSGO_SYNC_SPIN_US=0 (the pure-JS channel never spins; the server and
// a binding do). --parallel N runs N copies of this script at once (same
// node flags). SPINRPC_BENCH_SERVER overrides build/bin/spinrpc-bench-server.
import { spawn } from "node:child_process";
import { appendFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { commandLine } from "../harness/cli.mjs";
import { onlyChildPid, procCpuSeconds } from "../node/proc_cpu.mjs";
import { readTrace, TraceError } from "./trace_file.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "..", "..");
const SERVER = process.env.SPINRPC_BENCH_SERVER || join(process.env.SPINRPC_BUILD_DIR || join(REPO, "build"), "bin", "spinrpc-bench-server");
const CHANNEL = join(REPO, "tests", "interop", "node_modules", "@typescript", "native-preview", "dist", "api", "syncChannel.js");

const cli = commandLine("replay.mjs", "usage: node bench/workload/replay.mjs --trace FILE [--start I] [--limit N] [--rounds R] [--parallel LIST] [--variants default,off] [--json FILE]\n       node bench/workload/replay.mjs --check FILE");
const opts = (() => {
  const text = { type: "string" };
  // --one VARIANT is internal: one replay of that variant, its result on stdout.
  const v = cli.parse({ trace: text, check: text, json: text, one: text, parallel: text, variants: text, start: text, limit: text, rounds: text });
  if (v.parallel !== undefined && !/^[1-9][0-9]{0,8}(,[1-9][0-9]{0,8})*$/.test(v.parallel)) cli.fail(`--parallel takes counts of 1 or more, comma-separated, not ${v.parallel}`);
  for (const k of ["start", "limit", "rounds"]) if (v[k] !== undefined && !/^[0-9]{1,9}$/.test(v[k])) cli.fail(`--${k} takes a whole number, not ${v[k]}`);
  const o = {
    trace: v.trace ?? null, check: v.check ?? null, start: Number(v.start ?? 0), limit: Number(v.limit ?? 0), rounds: Number(v.rounds ?? 5),
    parallel: v.parallel ? v.parallel.split(",").map(Number) : [1], variants: v.variants !== undefined ? v.variants.split(",") : ["default", "off"],
    json: v.json ?? null, one: v.one ?? null,
  };
  if (!o.trace && !o.check) cli.fail("--trace is required");
  for (const x of o.variants) if (x !== "default" && x !== "off") cli.fail(`unknown variant ${x}`);
  return o;
})();

// The requests to play, from --start, at most --limit of them; the whole
// file is read and checked first. A trace that is not valid ends the run:
// status 1 and one line naming the file, the line and what is wrong.
function requestsToPlay() {
  let trace;
  try {
    trace = readTrace(opts.trace);
  } catch (e) {
    if (!(e instanceof TraceError)) throw e;
    console.error(`replay.mjs: ${e.message}`);
    process.exit(1);
  }
  const rows = trace.rows.slice(opts.start, opts.limit ? opts.start + opts.limit : undefined);
  if (rows.length === 0) {
    console.error(`replay.mjs: ${opts.trace}: no requests to replay from --start ${opts.start} (the trace has ${trace.rows.length})`);
    process.exit(1);
  }
  return rows;  // method request_bytes reply_bytes server_ns gap_ns
}

if (opts.check) {
  try {
    const trace = readTrace(opts.check);
    console.log(`${opts.check}: a valid trace, version ${trace.version}: ${trace.rows.length} requests, ${trace.methods.length} methods`);
    process.exit(0);
  } catch (e) {
    if (!(e instanceof TraceError)) throw e;
    console.error(`replay.mjs: ${e.message}`);
    process.exit(1);
  }
}
if (!opts.one) requestsToPlay();  // checked once before any replay starts

async function replayOnce(variant) {
  delete process.env.TSGO_SYNC_SPIN_US;
  delete process.env.TSGO_SYNC_SPIN_ADAPTIVE;
  if (variant === "off") { process.env.TSGO_SYNC_SPIN_US = "0"; process.env.TSGO_SYNC_SPIN_ADAPTIVE = "0"; }
  const { SyncRpcChannel } = await import(pathToFileURL(CHANNEL).href);
  const trace = requestsToPlay();
  let carry = 0;
  const payloads = trace.map(([, req, reply, serverNs]) => {
    carry += Math.max(serverNs, 0);
    const busyUs = Math.floor(carry / 1000);
    carry -= busyUs * 1000;
    let p = `{"busyUs":${busyUs},"replyBytes":${reply}}`;
    if (p.length + 10 < req) p = p.slice(0, -1) + `,"pad":"${"p".repeat(req - p.length - 9)}"}`;
    return p;
  });
  // As dist/api/sync/client.js: new SyncRpcChannel(exe, args, collectTiming).
  const channel = new SyncRpcChannel(SERVER, ["--api", "--cwd", process.cwd()], false);
  for (let i = 0; i < 200; i++) channel.requestSync("echo", "warm");
  const pid = channel.child?.pid ?? onlyChildPid();
  const server0 = pid ? procCpuSeconds(pid) : NaN;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < trace.length; i++) {
    if (i > 0) { const until = performance.now() + trace[i - 1][4] / 1e6; while (performance.now() < until); }
    const reply = channel.requestSync("benchWork", payloads[i]);
    if (reply.length !== trace[i][2]) { console.error(`replay.mjs: request ${i}: reply of ${reply.length} bytes, recorded ${trace[i][2]}`); process.exit(3); }
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const server1 = pid ? procCpuSeconds(pid) : NaN;
  channel.close();
  return { requests: trace.length, wallMs, clientCpuMs: (cpu.user + cpu.system) / 1000, serverCpuMs: Number.isNaN(server1 - server0) ? null : (server1 - server0) * 1e3 };
}

if (opts.one) {
  process.stdout.write(JSON.stringify(await replayOnce(opts.one)) + "\n");
  process.exit(0);
}
const client = process.execArgv.some((a) => a === "--import" || a.startsWith("--import=")) ? "binding" : "js";
if (opts.json) writeFileSync(opts.json, "");
for (const parallel of opts.parallel) {
  for (let round = 0; round < opts.rounds; round++) {
    for (let k = 0; k < opts.variants.length; k++) {
      const variant = opts.variants[(k + round) % opts.variants.length];
      const runs = Array.from({ length: parallel }, () => new Promise((done, fail) => {
        const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2), "--one", variant], { stdio: ["ignore", "pipe", "inherit"] });
        let out = "";
        child.stdout.on("data", (d) => (out += d));
        child.on("exit", (code) => (code === 0 ? done(JSON.parse(out)) : fail(new Error(`replay.mjs: a replay exited ${code}`))));
      }));
      const results = await Promise.all(runs);
      results.forEach((r, replica) => {
        const line = JSON.stringify({ client, variant, parallel, round, replica, ...r });
        console.log(line);
        if (opts.json) appendFileSync(opts.json, line + "\n");
      });
    }
  }
}
