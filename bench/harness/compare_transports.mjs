#!/usr/bin/env node
// Shared memory against pipes, side by side in one run (docs/SHARED-MEMORY.md;
// the figures of bench/REPORT.md, "Shared memory"). Each round runs every
// measurement twice, once over shared memory (the default) and once with
// SPINRPC_SHM=off (pipes, the transport as it was), in an order that
// alternates from round to round:
//   spinrpc-bench    BM_ShmFloor and BM_PipeFloor (polled) 8 B, BM_Echo 8 B and
//                    1 MiB (adaptive, the defaults), BM_Oversubscribed with 2-4
//                    pairs and BM_Sparse (adaptive): p50 and server CPU
//   echo_latency     the real TypeScript 7 client through the Node binding →
//                    spinrpc-server: 8 B echo p50, 1 MiB and 16 MiB echoes
// then, once, spinrpc-bench's BM_DeadPeer (both transports, its own rounds)
// and spinrpc-replay's recorded walk (--variants default,pipes, its own
// alternating rounds): transport time = wall clock - the handler and gap
// time the trace records.
//
//   node bench/harness/compare_transports.mjs [--build DIR] [--rounds N] [--echo-count N]
//                                             [--replay-rounds N] [--replay-limit N] [--skip replay,dead] [--json FILE]
//
// Needs SPINRPC_TSGO (typescript@7.0.2's lib/tsc) for echo_latency's reference rows.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { commandLine } from "./cli.mjs";
import { median } from "./stats.mjs";

const cli = commandLine("compare_transports", "usage: node bench/harness/compare_transports.mjs [--build DIR] [--rounds N] " +
  "[--echo-count N] [--replay-rounds N] [--replay-limit N] [--skip replay,dead] [--json FILE]");
const values = cli.parse({
  build: { type: "string", default: "." },
  rounds: { type: "string", default: "6" },
  "echo-count": { type: "string", default: "6000" },
  "replay-rounds": { type: "string", default: "3" },
  "replay-limit": { type: "string", default: "0" },
  skip: { type: "string", default: "" },
  json: { type: "string" },
});
const dir = resolve(values.build);
const bin = join(dir, "build", "bin");
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) cli.fail(`--rounds ${values.rounds}: want a whole number of at least 1`);
const skip = new Set(values.skip.split(",").filter(Boolean));
if (!process.env.SPINRPC_TSGO) cli.fail("SPINRPC_TSGO: typescript@7.0.2's lib/tsc, echo_latency's reference server");
const scratch = mkdtempSync(join(tmpdir(), "compare-transports-"));
const TRANSPORTS = ["shm", "pipes"];

function envFor(transport) {
  const env = { ...process.env, SPINRPC_SERVER: join(bin, "spinrpc-server") };
  delete env.SPINRPC_SHM;
  if (transport === "pipes") env.SPINRPC_SHM = "off";
  return env;
}

const BENCH_FILTER = "^(BM_ShmFloor/bytes:8/|BM_PipeFloor/bytes:8/.*polled|BM_Echo/bytes:(8|1048576)/.*variant:adaptive|" +
  "BM_Oversubscribed/pairs:[234]/.*variant:adaptive|BM_Sparse/.*variant:adaptive)";

// A benchmark's name without its round and the Google Benchmark suffixes.
const key = (name) => name.replace(/\/round:\d+.*$/, "");

function runBench(transport, tag, filter) {
  const out = join(scratch, `${tag}-bench.json`);
  execFileSync(join(bin, "spinrpc-bench"), ["--rounds=1", `--benchmark_filter=${filter}`, `--benchmark_out=${out}`,
    "--benchmark_out_format=json"], { env: envFor(transport), stdio: ["ignore", "ignore", "inherit"] });
  return JSON.parse(readFileSync(out, "utf8")).benchmarks;
}

function measure(transport, round) {
  const m = {};
  for (const b of runBench(transport, `${transport}-${round}`, BENCH_FILTER)) {
    m[key(b.name)] = { p50_us: b.p50_us, server_cpu_s: b.server_cpu_s };
  }
  const echoJson = join(scratch, `${transport}-${round}-echo.json`);
  execFileSync("node", [join(dir, "bench", "node", "echo_latency.mjs"), "--size", "8", "--count", values["echo-count"],
    "--rounds", "1", "--warmup", "300", "--server-spin", "default", "--no-floor", "--sparse", "0", "--spawn", "0",
    "--large-mib", "1,16", "--large-reps", "2", "--json", echoJson], { env: envFor(transport), stdio: ["ignore", "ignore", "inherit"] });
  const echo = JSON.parse(readFileSync(echoJson, "utf8"));
  m["binding → spinrpc-server 8 B"] = { p50_us: echo.variants.find((v) => v.name === "binding → spinrpc-server").p50_ns / 1000 };
  for (const [k, ns] of Object.entries(echo.binding.large["binding → spinrpc-server"])) {
    m[`binding → spinrpc-server large ${k}`] = { p50_us: median(ns) / 1000 };
  }
  return m;
}

const loadBefore = loadavg();
console.log(`load before: ${loadBefore.map((x) => x.toFixed(2)).join(" ")}`);
const results = { shm: [], pipes: [] };
for (let r = 0; r < rounds; r++) {
  for (const t of r % 2 === 0 ? TRANSPORTS : [...TRANSPORTS].reverse()) {
    results[t].push(measure(t, r));
    const e = results[t][r]["BM_Echo/bytes:8/count:30000/variant:adaptive"] ?? Object.values(results[t][r])[0];
    console.log(`round ${r} ${t}: done (echo 8 B p50 ${e?.p50_us} µs)`);
  }
}
const keys = Object.keys(results.shm[0]).filter((k) => results.pipes.every((m) => k in m));
const rows = [];
console.log("\n| measurement | shm p50 µs, median [min–max] | pipes p50 µs | shm / pipes p50, median of per-round ratios [min–max] | shm / pipes server CPU |");
console.log("| --- | --- | --- | --- | --- |");
for (const k of keys) {
  const s = results.shm.map((m) => m[k].p50_us), p = results.pipes.map((m) => m[k].p50_us);
  const ratios = s.map((v, i) => v / p[i]);
  const cpu = results.shm.map((m, i) => m[k].server_cpu_s / results.pipes[i][k].server_cpu_s).filter(Number.isFinite);
  const fmt = (xs) => `${median(xs).toFixed(3)} [${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}]`;
  rows.push({ k, shm: s, pipes: p, ratios, cpu });
  console.log(`| ${k} | ${fmt(s)} | ${fmt(p)} | ${fmt(ratios)} | ${cpu.length ? fmt(cpu) : "–"} |`);
}
// Figure 1: the shim's echo against the shared-memory floor of the same round.
const echoKey = keys.find((k) => k.startsWith("BM_Echo/bytes:8/")), floorKey = keys.find((k) => k.startsWith("BM_ShmFloor/"));
if (echoKey && floorKey) {
  const over = results.shm.map((m) => (m[echoKey].p50_us - m[floorKey].p50_us) * 1000);
  console.log(`\nshim ↔ server 8 B p50 over the shared-memory floor of its round, ns: median ${median(over).toFixed(0)}, per round ${over.map((x) => x.toFixed(0)).join(" ")}`);
}
let dead = null, replay = null;
if (!skip.has("dead")) {
  dead = runBench("shm", "dead", "^BM_DeadPeer/").map((b) => ({ name: b.name, p50_us: b.p50_us, max_us: b.max_us }));
  console.log("\n| dead peer | p50 ms | max ms |\n| --- | --- | --- |");
  for (const d of dead) console.log(`| ${d.name.replace(/\/count.*/, "")} | ${(d.p50_us / 1000).toFixed(2)} | ${(d.max_us / 1000).toFixed(2)} |`);
}
if (!skip.has("replay")) {
  const replayJson = join(scratch, "replay.json");
  execFileSync(join(bin, "spinrpc-replay"), ["--trace", join(dir, "bench", "workload", "aws-cdk-lib.trace.gz"), "--start", "2",
    "--limit", values["replay-limit"], "--rounds", values["replay-rounds"], "--variants", "default,pipes",
    "--server", join(bin, "spinrpc-bench-server"), "--json", replayJson], { env: envFor("shm"), stdio: ["ignore", "ignore", "inherit"] });
  replay = readFileSync(replayJson, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const transportMs = (v) => replay.filter((r) => r.variant === v).map((r) => r.wallMs - r.recordedMs);
  const s = transportMs("default"), p = transportMs("pipes");
  console.log(`\nreplay (${replay[0].requests} requests, recorded handler + gap time ${replay[0].recordedMs.toFixed(0)} ms):`);
  console.log(`  wall ms, shm: ${replay.filter((r) => r.variant === "default").map((r) => r.wallMs.toFixed(0)).join(" ")}; pipes: ${replay.filter((r) => r.variant === "pipes").map((r) => r.wallMs.toFixed(0)).join(" ")}`);
  console.log(`  transport ms, shm: ${s.map((x) => x.toFixed(0)).join(" ")}; pipes: ${p.map((x) => x.toFixed(0)).join(" ")}; shm / pipes per round: ${s.map((x, i) => (x / p[i]).toFixed(3)).join(" ")}`);
}
const loadAfter = loadavg();
console.log(`\nload after: ${loadAfter.map((x) => x.toFixed(2)).join(" ")}`);
if (values.json) writeFileSync(values.json, JSON.stringify({ rounds, loadBefore, loadAfter, results, dead, replay }, null, 1));
