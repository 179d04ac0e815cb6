#!/usr/bin/env node
// Compares the report's headline ratios between builds of spinrpc, rounds
// alternating (docs/BENCHMARKING.md, "Comparing two commits"). Each build is
// a checkout with its build/ made (scripts/build.sh): its spinrpc-bench,
// spinrpc-bench-server, spinrpc-replay, the Node binding and its own bench
// scripts are used, so checkouts of different commits compare as they are.
//
//   node bench/harness/compare_builds.mjs --build A=DIR --build A2=DIR2 --build B=DIR3 [--rounds 10] [--json FILE]
//
// Per round, in an order that rotates each round, every build measures:
//   shim ↔ server / shm floor      spinrpc-bench: BM_Echo 8 B adaptive p50 on shared memory (the default)
//                                  / BM_ShmFloor 8 B p50
//   shim ↔ server / polled floor   the same echo on pipes (SPINRPC_SHM=off) / BM_PipeFloor 8 B polled p50
//   shim ↔ server p50              the shared-memory echo's p50 itself, µs (a change that must cost
//                                  nothing, as tracing compiled in and off, is held to it directly)
//   blocking client / real server  spinrpc-bench: BM_BlockingClient p50, spinrpc-server / tsc, median of its rounds
//   binding / pure-JS              echo_latency.mjs: binding → spinrpc-server p50 / pure-JS → tsc p50, median of its rounds
//   binding ↔ server p50           the binding's p50 itself, µs, median of its rounds
//   replay default / spin-off      spinrpc-replay: wall clock of the first --replay-limit requests of the recorded walk
// (--only picks some of bench, echo, replay) and prints each build's
// per-round ratios, their medians, and for each build after the first the
// median of its per-round ratios to the first build's. Needs SPINRPC_TSGO (the
// real server: typescript@7.0.2's lib/tsc) in the environment or --tsgo.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { commandLine } from "./cli.mjs";
import { median } from "./stats.mjs";

const cli = commandLine("compare_builds", "usage: node bench/harness/compare_builds.mjs --build NAME=DIR --build NAME=DIR [...] " +
  "[--rounds N] [--echo-count N] [--replay-limit N] [--only bench,echo,replay] [--tsgo PATH] [--json FILE]");
const values = cli.parse({
  build: { type: "string", multiple: true },
  rounds: { type: "string", default: "10" },
  "echo-count": { type: "string", default: "6000" },
  "replay-limit": { type: "string", default: "40000" },
  only: { type: "string" },
  tsgo: { type: "string" },
  json: { type: "string" },
});
if (!values.build || values.build.length < 2) cli.fail("at least two --build NAME=DIR");
const builds = values.build.map((spec) => {
  const at = spec.indexOf("=");
  if (at <= 0) cli.fail(`--build ${spec}: want NAME=DIR`);
  return { name: spec.slice(0, at), dir: spec.slice(at + 1) };
});
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) cli.fail(`--rounds ${values.rounds}: want a whole number of at least 1`);
const tsgo = values.tsgo ?? process.env.SPINRPC_TSGO;
if (!tsgo) cli.fail("SPINRPC_TSGO or --tsgo: the real server to compare with");
const parts = new Set((values.only ?? "bench,echo,replay").split(","));
for (const p of parts) if (!["bench", "echo", "replay"].includes(p)) cli.fail(`--only ${p}: want bench, echo or replay`);
const scratch = mkdtempSync(join(tmpdir(), "compare-builds-"));

function measure(build, round) {
  const bin = join(build.dir, "build", "bin");
  const env = { ...process.env, SPINRPC_TSGO: tsgo, SPINRPC_SERVER: join(bin, "spinrpc-server") };
  const out = {};
  if (parts.has("bench")) measureBench(build, round, bin, env, out);
  if (parts.has("echo")) measureEcho(build, round, env, out);
  if (parts.has("replay")) measureReplay(build, round, bin, env, out);
  return out;
}

function runBench(build, round, bin, env, filter, tag) {
  const benchJson = join(scratch, `${build.name}-${round}-${tag}.json`);
  execFileSync(join(bin, "spinrpc-bench"), ["--rounds=1", `--benchmark_filter=${filter}`,
    `--benchmark_out=${benchJson}`, "--benchmark_out_format=json"], { env, stdio: ["ignore", "ignore", "inherit"] });
  return JSON.parse(readFileSync(benchJson, "utf8")).benchmarks;
}

function measureBench(build, round, bin, env, out) {
  const shmEnv = { ...env };
  delete shmEnv.SPINRPC_SHM;
  const bench = runBench(build, round, bin, shmEnv,
    "^(BM_Echo/bytes:8/.*variant:adaptive|BM_ShmFloor/bytes:8/|BM_PipeFloor/bytes:8/.*polled|BM_BlockingClient/)", "bench");
  const pipes = runBench(build, round, bin, { ...env, SPINRPC_SHM: "off" }, "^BM_Echo/bytes:8/.*variant:adaptive", "pipes");
  const p50 = (rows, re) => median(rows.filter((b) => re.test(b.name)).map((b) => b.p50_us));
  out.shimEchoUs = p50(bench, /^BM_Echo\/bytes:8\//);
  out.shmOverFloor = out.shimEchoUs / p50(bench, /^BM_ShmFloor\//);
  out.pipesOverFloor = p50(pipes, /^BM_Echo\/bytes:8\//) / p50(bench, /^BM_PipeFloor\//);
  const blocking = (server) => new Map(bench.filter((b) => b.name.startsWith(`BM_BlockingClient/server:${server}/`))
    .map((b) => [/round:(\d+)/.exec(b.name)[1], b.p50_us]));
  const ours = blocking("spinrpc"), theirs = blocking("tsgo");
  out.blockingOverReal = median([...ours].map(([r, v]) => v / theirs.get(r)));
}

function measureEcho(build, round, env, out) {
  const echoJson = join(scratch, `${build.name}-${round}-echo.json`);
  execFileSync("node", [join(build.dir, "bench", "node", "echo_latency.mjs"), "--size", "8", "--count", values["echo-count"],
    "--rounds", "3", "--warmup", "300", "--server-spin", "default", "--no-floor", "--sparse", "0", "--spawn", "0",
    "--large-mib", "", "--json", echoJson], { env, stdio: ["ignore", "ignore", "inherit"] });
  const variants = JSON.parse(readFileSync(echoJson, "utf8")).variants;
  const rows = (name) => variants.find((v) => v.name === name).round_p50_ns;
  const binding = rows("binding → spinrpc-server"), pure = rows("tsc");
  out.bindingOverPureJs = median(binding.map((v, i) => v / pure[i]));
  out.bindingEchoUs = median(binding) / 1000;
}

function measureReplay(build, round, bin, env, out) {
  const replayJson = join(scratch, `${build.name}-${round}-replay.json`);
  execFileSync(join(bin, "spinrpc-replay"), ["--trace", join(build.dir, "bench", "workload", "aws-cdk-lib.trace.gz"),
    "--limit", values["replay-limit"], "--rounds", "1", "--variants", "default,off",
    "--server", join(bin, "spinrpc-bench-server"), "--json", replayJson], { env, stdio: ["ignore", "ignore", "inherit"] });
  const replay = readFileSync(replayJson, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const wall = (v) => replay.find((r) => r.variant === v).wallMs;
  out.replayDefaultOverOff = wall("default") / wall("off");
}

const metrics = [
  ...(parts.has("bench") ? ["shmOverFloor", "pipesOverFloor", "shimEchoUs", "blockingOverReal"] : []),
  ...(parts.has("echo") ? ["bindingOverPureJs", "bindingEchoUs"] : []),
  ...(parts.has("replay") ? ["replayDefaultOverOff"] : []),
];
const results = Object.fromEntries(builds.map((b) => [b.name, []]));
const loadBefore = loadavg();
console.log(`load before: ${loadBefore.map((x) => x.toFixed(2)).join(" ")}`);
for (let r = 0; r < rounds; r++) {
  const order = builds.map((_, i) => builds[(i + r) % builds.length]);
  for (const b of order) {
    const m = measure(b, r);
    results[b.name].push(m);
    console.log(`round ${r} ${b.name}: ${metrics.map((k) => `${k} ${m[k].toFixed(3)}`).join("  ")}`);
  }
}
const loadAfter = loadavg();
console.log(`load after: ${loadAfter.map((x) => x.toFixed(2)).join(" ")}\n`);
const ref = builds[0].name;
console.log(`| metric | ${builds.map((b) => `${b.name} median [min–max]`).join(" | ")} | ${builds.slice(1).map((b) => `${b.name} / ${ref}, median of per-round ratios`).join(" | ")} |`);
console.log(`| --- | ${builds.map(() => "---").join(" | ")} | ${builds.slice(1).map(() => "---").join(" | ")} |`);
const summary = {};
for (const k of metrics) {
  const med = Object.fromEntries(builds.map((b) => [b.name, median(results[b.name].map((m) => m[k]))]));
  const cells = builds.map((b) => {
    const xs = results[b.name].map((m) => m[k]);
    return `${med[b.name].toFixed(3)} [${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}]`;
  });
  // The median of per-round paired ratios: each round's builds ran back to back.
  const rel = builds.slice(1).map((b) =>
    median(results[b.name].map((m, r) => m[k] / results[ref][r][k])).toFixed(3));
  summary[k] = med;
  console.log(`| ${k} | ${cells.join(" | ")} | ${rel.join(" | ")} |`);
}
if (values.json) writeFileSync(values.json, JSON.stringify({ builds, rounds, loadBefore, loadAfter, results, summary }, null, 1));
