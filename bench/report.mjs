#!/usr/bin/env node
// report: turns one run of the suite into bench/REPORT.md and its pictures.
//
//   node bench/report.mjs --bench-json FILE --latency-dir DIR --out REPORT.md
//                         --png-dir DIR [--node-json FILE] [--command TEXT]
//                         [--build-dir DIR] [--smoke]
//
// --bench-json   spinrpc-bench's Google Benchmark JSON (--benchmark_out)
// --latency-dir  its raw latencies (--latency_dir: one .i64 file per benchmark)
// --node-json    bench/node/echo_latency.mjs --json output (optional)
// --out          the Markdown report to write
// --png-dir      where the CDF pictures go (linked relative to --out)
// --command      the exact command that produced the run, quoted in the report
// --build-dir    the build directory (for its CMAKE_BUILD_TYPE)
// --smoke        say in the report that it comes from a smoke run
//
// Every round of a workload and variant is pooled: percentiles are taken over
// all rounds' samples (nearest rank, as spinrpc-bench and echo_latency.mjs
// compute them); CPU and wall seconds are summed over the rounds; the p50 of
// each round is listed so drift shows. Ratios are computed here, never in
// the benchmarks (BENCH.md: a claim is a ratio measured side by side).
// Pictures are drawn with gnuplot (gnuplot-nox, scripts/setup.sh); without
// gnuplot the report says so and has none.

import { spawnSync, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, release, version as osVersion } from "node:os";
import { dirname, join, relative, resolve } from "node:path";

// ── arguments ─────────────────────────────────────────────────────────

function usage(msg) {
  if (msg) console.error(`report: ${msg}`);
  console.error("usage: node bench/report.mjs --bench-json FILE --latency-dir DIR --out REPORT.md --png-dir DIR [--node-json FILE] [--command TEXT] [--build-dir DIR] [--smoke]");
  process.exit(2);
}
const args = { smoke: false };
{
  const keys = { "--bench-json": "benchJson", "--latency-dir": "latencyDir", "--node-json": "nodeJson", "--out": "out", "--png-dir": "pngDir", "--command": "command", "--build-dir": "buildDir" };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    let [k, v] = argv[i].split(/=(.*)/s, 2);
    if (k === "--smoke") { args.smoke = true; continue; }
    const key = keys[k];
    if (!key) usage(`unknown argument ${argv[i]}`);
    if (v === undefined) { v = argv[++i]; if (v === undefined) usage(`${k} needs a value`); }
    args[key] = v;
  }
  for (const k of ["benchJson", "latencyDir", "out", "pngDir"]) if (!args[k]) usage(`missing --${k.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())}`);
}

// ── statistics ────────────────────────────────────────────────────────

/** Nearest-rank percentile of an ascending array (as latency_stats.cpp). */
function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

function summarize(sorted) {
  let sum = 0;
  for (const x of sorted) sum += x;
  return { n: sorted.length, mean: sum / sorted.length, p50: percentile(sorted, 0.5), p75: percentile(sorted, 0.75), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1] };
}

/** A benchmark's latency file name: the rule of measurement.cpp's latency_file_name. */
const latencyFile = (name) => name.replace(/[^A-Za-z0-9_.-]/g, "_") + ".i64";

/** int64 ns, native byte order (little endian on every machine we run). */
function readSamples(path) {
  const b = readFileSync(path);
  const big = new BigInt64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
  const out = new Float64Array(big.length);
  for (let i = 0; i < big.length; i++) out[i] = Number(big[i]);
  return out;
}

// ── the run ───────────────────────────────────────────────────────────

const bench = JSON.parse(readFileSync(args.benchJson, "utf8"));
const nodeRun = args.nodeJson && existsSync(args.nodeJson) ? JSON.parse(readFileSync(args.nodeJson, "utf8")) : null;

/**
 * Groups the benchmarks by name without `round`: one group per workload,
 * parameters and variant, holding every round.
 */
const groups = new Map();
for (const b of bench.benchmarks) {
  if (b.run_type && b.run_type !== "iteration") continue;
  const name = b.name.replace(/\/iterations:\d+/, "").replace(/\/manual_time$/, "");
  const [family, ...parts] = name.split("/");
  const params = {};
  for (const p of parts) {
    const i = p.indexOf(":");
    params[p.slice(0, i)] = p.slice(i + 1);
  }
  const key = [family, ...parts.filter((p) => !p.startsWith("round:"))].join("/");
  let g = groups.get(key);
  if (!g) groups.set(key, (g = { key, family, params, runs: [] }));
  g.runs.push({ name, round: Number(params.round), counters: b });
}
for (const g of groups.values()) {
  g.runs.sort((a, b) => a.round - b.round);
  const parts = g.runs.map((r) => {
    const path = join(args.latencyDir, latencyFile(r.name));
    if (!existsSync(path)) throw new Error(`no latency file ${path} for ${r.name}`);
    return readSamples(path);
  });
  const total = parts.reduce((n, p) => n + p.length, 0);
  const all = new Float64Array(total);
  let off = 0;
  for (const p of parts) { all.set(p, off); off += p.length; }
  all.sort();
  g.sorted = all;
  g.stats = summarize(all);
  g.roundP50 = parts.map((p) => percentile(Float64Array.from(p).sort(), 0.5));
  // A counter missing from any round (an older binary) is unknown: NaN, shown as "–".
  const sum = (k) => (g.runs.every((r) => k in r.counters) ? g.runs.reduce((s, r) => s + Number(r.counters[k]), 0) : NaN);
  const mean = (k) => sum(k) / g.runs.length;
  g.sum = sum;
  g.mean = mean;
  g.clientCpu = sum("client_cpu_s");
  // -1 marks a server CPU reading that failed (measurement.h): unknown.
  g.serverCpu = g.runs.some((r) => Number(r.counters.server_cpu_s) < 0) ? NaN : sum("server_cpu_s");
  g.wall = sum("wall_s");
}

/** The group of `family` whose parameters include all of `want`. */
function find(family, want) {
  for (const g of groups.values()) {
    if (g.family !== family) continue;
    if (Object.entries(want).every(([k, v]) => g.params[k] === String(v))) return g;
  }
  return null;
}

const VARIANTS = ["off", "fixed", "adaptive"];
const SIZES = [8, 1024, 65536, 1048576];
const rounds = Number(bench.context.spinrpc_rounds) || Math.max(0, ...[...groups.values()].map((g) => g.runs.length));

// ── formatting ────────────────────────────────────────────────────────

const us = (ns) => (!Number.isFinite(ns) ? "–" : ns < 10_000 ? (ns / 1000).toFixed(2) : ns < 1_000_000 ? (ns / 1000).toFixed(1) : Math.round(ns / 1000).toLocaleString("en-US"));
function ratio(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b <= 0) return "–";
  const r = a / b;
  return `${r >= 100 ? r.toFixed(0) : r >= 0.1 ? r.toFixed(2) : r.toPrecision(2)}×`;
}
const secs = (s) => (!Number.isFinite(s) ? "–" : s < 0.01 ? s.toFixed(5) : s < 1 ? s.toFixed(4) : s.toFixed(3));
const count = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "–");
const sizeName = (b) => (b >= 1048576 ? `${b / 1048576} MiB` : b >= 1024 ? `${b / 1024} KiB` : `${b} B`);
const perRound = (g) => g.roundP50.map(us).join(", ");
/** The median of a group's per-round p50s (robust to one stalled round). */
function medianRoundP50(g) {
  if (!g) return NaN;
  const s = [...g.roundP50].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** A Markdown table; numbers right-aligned unless `text` (all left). */
function table(cols, rows, text = false) {
  const out = [`| ${cols.join(" | ")} |`, `|${cols.map((_, i) => (i === 0 || text ? " --- " : " ---: ")).join("|")}|`];
  for (const r of rows) out.push(`| ${r.join(" | ")} |`);
  return out.join("\n");
}
const lines = [];
const say = (...xs) => lines.push(...xs);

// ── machine ───────────────────────────────────────────────────────────

function sh(cmd, argv) {
  try { return execFileSync(cmd, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim(); } catch { return ""; }
}
function readText(path) {
  try { return readFileSync(path, "utf8").trim(); } catch { return ""; }
}
const cpuinfo = readText("/proc/cpuinfo");
const cpuModel = (cpuinfo.match(/^model name\s*:\s*(.*)$/m) || [])[1] || cpus()[0]?.model || "unknown";
const hypervisor = /^flags\s*:.*\bhypervisor\b/m.test(cpuinfo);
const online = readText("/sys/devices/system/cpu/online");
const idleDriver = readText("/sys/devices/system/cpu/cpuidle/current_driver") || "none";
const idleStates = [];
for (let i = 0; i < 16; i++) {
  const dir = `/sys/devices/system/cpu/cpu0/cpuidle/state${i}`;
  if (!existsSync(dir)) break;
  idleStates.push(`${readText(`${dir}/name`)} (exit ${readText(`${dir}/latency`)} µs${readText(`${dir}/disable`) === "1" ? ", disabled" : ""})`);
}
const buildType = args.buildDir ? ((readText(join(args.buildDir, "CMakeCache.txt")).match(/^CMAKE_BUILD_TYPE:STRING=(.*)$/m) || [])[1] || "?") : "?";
const compiler = args.buildDir ? ((readText(join(args.buildDir, "CMakeCache.txt")).match(/^CMAKE_CXX_COMPILER:(?:FILEPATH|STRING)=(.*)$/m) || [])[1] || "") : "";
const compilerVersion = compiler ? sh(compiler, ["--version"]).split("\n")[0] : "";
const repo = resolve(dirname(new URL(import.meta.url).pathname), "..");
const commit = sh("git", ["-C", repo, "describe", "--always", "--dirty", "--abbrev=12"]);

// ── report ────────────────────────────────────────────────────────────

const floorOf = (bytes, read) => find("BM_PipeFloor", { bytes, read });
const echoOf = (bytes, variant) => find("BM_Echo", { bytes, variant });
const tsgoOf = (bytes, shim) => find("BM_EchoTsgo", { bytes, shim });

say(`# spinrpc benchmark report${args.smoke ? " (SMOKE RUN: tiny counts, not a measurement)" : ""}`, "");
say(`Generated ${bench.context.date} by \`${args.command || "(command not recorded)"}\`.`, "");
say("Read the ratios, not the microseconds: the microseconds belong to this machine on this day " +
  "(BENCH.md). Every figure pools all rounds of one workload and variant; the variants and the floors " +
  `ran side by side, alternating round by round (${rounds} round${rounds === 1 ? "" : "s"}, the variant order rotated each round). ` +
  "p50 and p75 are the figures to compare; p99 and max are tail, and on a shared VM mostly the VM's. " +
  "Raw data: spinrpc-bench's JSON and per-request latencies under `bench/out/` (not committed).", "");

say("## Machine", "");
say(table(["what", "value"], [
  ["CPU", `${cpuModel}${hypervisor ? " (virtual machine: hypervisor flag set)" : ""}`],
  ["cores", `${cpus().length} online (${online || "?"}); Google Benchmark saw ${bench.context.num_cpus} at ${bench.context.mhz_per_cpu} MHz`],
  ["kernel", `Linux ${release()} (${osVersion()})`],
  ["CPU idle", `driver ${idleDriver}; cpu0 states: ${idleStates.join(", ") || "none listed"}`],
  ["load average at start", (bench.context.load_avg || []).map((x) => x.toFixed(2)).join(", ") || "?"],
  ["load average at report", loadavg().map((x) => x.toFixed(2)).join(", ")],
  ["build", `${buildType}${compilerVersion ? `, ${compilerVersion}` : ""}; libbenchmark built as ${bench.context.library_build_type} (it only runs the loop; every time here is taken with steady_clock around the request)`],
  ["source", commit || "?"],
  ["peers", `spinrpc-server \`${bench.context.spinrpc_server}\`; tsgo \`${bench.context.spinrpc_tsgo || "not installed: no tsgo rows"}\``],
], true), "");

say("## Variants", "");
say(table(["variant", "client shim", "spinrpc-server", "tsgo"], [
  ["off", "SyncRpcOptions::spin {spin_us 0}", "`--spin-us 0 --adaptive=0`", "no spin (tsgo has none)"],
  ["fixed", "{spin_us 100, adaptive false}", "`--spin-us 100 --adaptive=0`", "no spin"],
  ["adaptive", "{spin_us 100, adaptive true}", "`--spin-us 100 --adaptive=1`", "no spin"],
], true), "");
say("Both ends of a spinrpc pair always run the same variant, checked at spawn through the shim's stats() and the server's " +
  "getChannelStats. tsgo has no spin: in the tsgo rows only the client shim's side varies. CPU seconds are user+system " +
  "over the timed loop only, summed over the rounds: the client's from CLOCK_PROCESS_CPUTIME_ID, the server's as the sum of " +
  "/proc/PID/task/*/schedstat's first field (ns, every thread). Every echo reply was compared with what was sent; a wrong byte " +
  "would have ended the run with status 3 and no report.", "");

// Headline.
{
  say("## Headline: small echo (8 B)", "");
  const fb = floorOf(8, "blocking");
  const fp = floorOf(8, "polled");
  const off = echoOf(8, "off");
  const rows = [];
  for (const v of VARIANTS) {
    const g = echoOf(8, v);
    if (!g) continue;
    rows.push([`spinrpc-server, ${v}`, us(g.stats.p50), us(g.stats.p75), ratio(g.stats.p50, fb?.stats.p50), ratio(g.stats.p75, fb?.stats.p75),
      ratio(g.stats.p50, fp?.stats.p50), ratio(g.stats.p75, fp?.stats.p75), ratio(g.stats.p50, off?.stats.p50), ratio(g.stats.p75, off?.stats.p75),
      us(medianRoundP50(g)), ratio(medianRoundP50(g), medianRoundP50(off))]);
  }
  for (const v of VARIANTS) {
    const g = tsgoOf(8, v);
    if (!g) continue;
    const toff = tsgoOf(8, "off");
    rows.push([`tsgo, shim ${v}`, us(g.stats.p50), us(g.stats.p75), ratio(g.stats.p50, fb?.stats.p50), ratio(g.stats.p75, fb?.stats.p75),
      ratio(g.stats.p50, fp?.stats.p50), ratio(g.stats.p75, fp?.stats.p75), ratio(g.stats.p50, toff?.stats.p50), ratio(g.stats.p75, toff?.stats.p75),
      us(medianRoundP50(g)), ratio(medianRoundP50(g), medianRoundP50(toff))]);
  }
  for (const [label, g] of [["floor, blocking read", fb], ["floor, polled read", fp]]) {
    if (g) rows.push([label, us(g.stats.p50), us(g.stats.p75), ratio(g.stats.p50, fb?.stats.p50), ratio(g.stats.p75, fb?.stats.p75), ratio(g.stats.p50, fp?.stats.p50), ratio(g.stats.p75, fp?.stats.p75), "", "", us(medianRoundP50(g)), ""]);
  }
  say(table(["", "p50 µs", "p75 µs", "p50 / floor blocking", "p75 / floor blocking", "p50 / floor polled", "p75 / floor polled", "p50 / spin off", "p75 / spin off",
    "median of round p50s µs", "… / spin off"], rows), "");
  say("Spin off for the tsgo rows is the shim with spin off against the same tsgo. The median of the rounds' p50s is there for a shared " +
    "machine: one round that landed on a stalled host moves the pooled p75 (a fifth of the samples with 5 rounds) but not that median.", "");
}

// Floors.
{
  say("## Floors: raw pipe ping-pong", "");
  say("Two processes (this binary and a fork of it), two pipes, C-level read(2)/write(2), no framing, message size equal to the framed echo " +
    "request (`wire_bytes`). Blocking: both ends block in read. Polled: both ends retry a non-blocking read at once, no pause, no yield " +
    "(SPIN.md's 0.78 µs row). A polled floor only holds while each side has a CPU of its own: when the scheduler puts both on one CPU, " +
    "or a message larger than the pipe (64 KiB) leaves the writer blocked behind a spinning reader, a round trip waits for a time slice " +
    "(milliseconds). Its p99 and max say how often that happened.", "");
  const rows = [];
  for (const b of SIZES) {
    for (const read of ["blocking", "polled"]) {
      const g = floorOf(b, read);
      if (!g) continue;
      const s = g.stats;
      rows.push([`${sizeName(b)} (${g.params.wire_bytes} B on the wire), ${read}`, count(s.n), us(s.mean), us(s.p50), us(s.p75), us(s.p99), us(s.max),
        read === "polled" ? ratio(s.p50, floorOf(b, "blocking")?.stats.p50) : "", secs(g.clientCpu), secs(g.serverCpu), secs(g.wall), perRound(g)]);
    }
  }
  say(table(["floor", "n", "mean µs", "p50 µs", "p75 µs", "p99 µs", "max µs", "p50 / blocking", "client CPU s", "echo child CPU s", "wall s", "p50 per round µs"], rows), "");
}

// Echo.
{
  say("## Echo: back-to-back echoes through the client shim", "");
  const rows = [];
  for (const b of SIZES) {
    for (const v of VARIANTS) {
      const g = echoOf(b, v);
      if (!g) continue;
      const s = g.stats;
      const off = echoOf(b, "off")?.stats;
      const t = tsgoOf(b, v)?.stats;
      rows.push([`${sizeName(b)}, ${v}`, count(s.n), us(s.mean), us(s.p50), us(s.p75), us(s.p99), us(s.max),
        ratio(s.p50, floorOf(b, "blocking")?.stats.p50), ratio(s.p50, floorOf(b, "polled")?.stats.p50),
        v === "off" ? "" : ratio(s.p50, off?.p50), v === "off" ? "" : ratio(s.p75, off?.p75),
        ratio(s.p50, t?.p50), ratio(s.p75, t?.p75),
        secs(g.clientCpu), secs(g.serverCpu), secs(g.wall), perRound(g)]);
    }
  }
  say(table(["size, variant", "n", "mean µs", "p50 µs", "p75 µs", "p99 µs", "max µs", "p50 / floor blocking", "p50 / floor polled",
    "p50 / spin off", "p75 / spin off", "p50 / tsgo", "p75 / tsgo", "client CPU s", "server CPU s", "wall s", "p50 per round µs"], rows), "");
  say("`/ tsgo` compares with tsgo behind the same shim setting (tsgo itself never spins).", "");
}

// Echo against tsgo.
if ([...groups.values()].some((g) => g.family === "BM_EchoTsgo")) {
  say("## Echo against tsgo (the real server behind the same shim)", "");
  say("tsgo has no spin: only the client shim's side of the variant applies here.", "");
  const rows = [];
  for (const b of SIZES) {
    for (const v of VARIANTS) {
      const g = tsgoOf(b, v);
      if (!g) continue;
      const s = g.stats;
      const off = tsgoOf(b, "off")?.stats;
      const sp = echoOf(b, v)?.stats;
      rows.push([`${sizeName(b)}, shim ${v}`, count(s.n), us(s.mean), us(s.p50), us(s.p75), us(s.p99), us(s.max),
        ratio(s.p50, floorOf(b, "blocking")?.stats.p50), v === "off" ? "" : ratio(s.p50, off?.p50), v === "off" ? "" : ratio(s.p75, off?.p75),
        ratio(sp?.p50, s.p50), ratio(sp?.p75, s.p75), secs(g.clientCpu), secs(g.serverCpu), secs(g.wall), perRound(g)]);
    }
  }
  say(table(["size, shim", "n", "mean µs", "p50 µs", "p75 µs", "p99 µs", "max µs", "p50 / floor blocking", "p50 / shim off", "p75 / shim off",
    "spinrpc / tsgo p50", "spinrpc / tsgo p75", "client CPU s", "tsgo CPU s", "wall s", "p50 per round µs"], rows), "");
}

// Transport.
{
  const TRANSPORTS = ["stdio", "socket", "fifo"];
  const transportOf = (transport, variant) => find("BM_Transport", { transport, variant });
  const any = [...groups.values()].find((g) => g.family === "BM_Transport");
  if (any) {
    say(`## Transport: ${any.params.bytes}-byte echoes over stdio, a Unix socket and two FIFOs`, "");
    say("The same back-to-back echo through the client shim over each of spinrpc-server's transports: `stdio` (spawned behind the shim " +
      "on two pipes, as in the echo table), `socket` (`--pipe PATH`, `SyncRpcChannel::connect_socket`) and `fifo` (`--fifo-in`/`--fifo-out`, " +
      "`connect_fifos`); for the last two the benchmark spawns the server itself with its endpoint in a fresh temp dir, and fails unless the " +
      "server exits 0 and removes its files when the channel closes. `/ stdio off` divides by the stdio cell with spin off; `/ stdio` by stdio " +
      "under the same variant (the transport's own cost).", "");
    say("`aux threads` are the server's threads besides the main one (the Boost.Asio signal watcher; with `--pipe` also the acceptor that " +
      "turns further clients away). `aux-thread runs` counts how many times they were put on a CPU during the timed loops " +
      "(/proc/PID/task/TID/schedstat, third field, summed over the rounds): it should be about 0, which is the evidence that these " +
      "threads add no wake-up to the round trip. `main-thread runs` is the same count for the thread that serves the requests, for scale " +
      "and as a check that the count sees wake-ups at all (about one per request when its reads block).", "");
    // A thread counter of one group: summed over the rounds; -1 in any round (unreadable /proc) or a missing counter: unknown.
    const threadSum = (g, k) => (g.runs.some((r) => !(k in r.counters) || Number(r.counters[k]) < 0) ? NaN : g.sum(k));
    const threadRange = (g, k) => {
      const xs = g.runs.map((r) => Number(r.counters[k]));
      if (xs.some((x) => !Number.isFinite(x) || x < 0)) return "–";
      const lo = Math.min(...xs), hi = Math.max(...xs);
      return lo === hi ? String(lo) : `${lo}–${hi}`;
    };
    const fb = floorOf(8, "blocking")?.stats;
    const base = transportOf("stdio", "off")?.stats;
    const rows = [];
    for (const t of TRANSPORTS) {
      for (const v of VARIANTS) {
        const g = transportOf(t, v);
        if (!g) continue;
        const s = g.stats;
        const same = transportOf("stdio", v)?.stats;
        rows.push([`${t}, ${v}`, count(s.n), us(s.mean), us(s.p50), us(s.p75), us(s.p99), us(s.max),
          ratio(s.p50, base?.p50), ratio(s.p75, base?.p75), t === "stdio" ? "" : ratio(s.p50, same?.p50), t === "stdio" ? "" : ratio(s.p75, same?.p75),
          ratio(s.p50, fb?.p50), ratio(s.p75, fb?.p75), secs(g.clientCpu), secs(g.serverCpu),
          threadRange(g, "srv_aux_threads"), count(threadSum(g, "srv_aux_thread_runs")), count(threadSum(g, "srv_main_thread_runs")), perRound(g)]);
      }
    }
    say(table(["transport, variant", "n", "mean µs", "p50 µs", "p75 µs", "p99 µs", "max µs", "p50 / stdio off", "p75 / stdio off",
      "p50 / stdio", "p75 / stdio", "p50 / floor blocking", "p75 / floor blocking", "client CPU s", "server CPU s",
      "aux threads", "aux-thread runs", "main-thread runs", "p50 per round µs"], rows), "");
  }
}

// Interleave.
{
  const any = [...groups.values()].find((g) => g.family === "BM_Interleave");
  if (any) {
    say("## Interleave: 30 small echoes, then one large request", "");
    say(`Only the ${any.params.small_bytes}-byte echoes are reported. \`/ back-to-back\` divides by the same variant's back-to-back ` +
      "8 B echo: above 1 means the large request's long server turn made the next small requests slower (+70% on a C6 host without " +
      "spinning, in the proposal). `1st after large` is the first small echo after each large request alone (the mean over rounds " +
      "of each round's percentile): the one a long server turn hits hardest.", "");
    const rows = [];
    for (const large of ["echo1MiB", "busy200us"]) {
      for (const v of VARIANTS) {
        const g = find("BM_Interleave", { large, variant: v });
        if (!g) continue;
        const s = g.stats;
        const off = find("BM_Interleave", { large, variant: "off" })?.stats;
        const b2b = echoOf(8, v)?.stats;
        rows.push([`${large === "echo1MiB" ? "1 MiB echo" : "benchWork 200 µs"}, ${v}`, count(s.n), us(s.mean), us(s.p50), us(s.p75), us(s.p99), us(s.max),
          ratio(s.p50, b2b?.p50), ratio(s.p75, b2b?.p75), ratio(s.p50, floorOf(8, "blocking")?.stats.p50),
          v === "off" ? "" : ratio(s.p50, off?.p50), v === "off" ? "" : ratio(s.p75, off?.p75),
          us(g.mean("first_p50_us") * 1000), us(g.mean("first_p75_us") * 1000), ratio(g.mean("first_p75_us") * 1000, b2b?.p75),
          us(g.mean("large_mean_us") * 1000), secs(g.clientCpu), secs(g.serverCpu), perRound(g)]);
      }
    }
    say(table(["large request, variant", "n", "mean µs", "p50 µs", "p75 µs", "p99 µs", "max µs", "p50 / back-to-back", "p75 / back-to-back",
      "p50 / floor blocking", "p50 / spin off", "p75 / spin off", "1st after large p50 µs", "1st after large p75 µs", "1st after large p75 / back-to-back",
      "large request mean µs", "client CPU s", "server CPU s", "p50 per round µs"], rows), "");
  }
}

// Sparse.
{
  const off = find("BM_Sparse", { variant: "off" });
  if (off) {
    say("## Sparse: one request every 10 ms — the server's CPU is the result", "");
    say(`Server CPU over the loop, idle gaps included (${count(off.stats.n)} requests per variant over all rounds). A fixed budget spins on every gap; the adaptive rule should stop after three long waits.`, "");
    const rows = [];
    for (const v of VARIANTS) {
      const g = find("BM_Sparse", { variant: v });
      if (!g) continue;
      rows.push([v, secs(g.serverCpu), v === "off" ? "" : ratio(g.serverCpu, off.serverCpu), us((g.serverCpu / g.stats.n) * 1e9),
        count(g.sum("srv_spin_misses")), count(g.sum("srv_suspensions")), secs(g.clientCpu), us(g.stats.p50), us(g.stats.p75), us(g.stats.p99),
        v === "off" ? "" : ratio(g.stats.p50, off.stats.p50), secs(g.wall)]);
    }
    say(table(["variant", "server CPU s", "server CPU / spin off", "server CPU per request µs", "server spin misses", "server suspensions",
      "client CPU s", "p50 µs", "p75 µs", "p99 µs", "p50 / spin off", "wall s"], rows), "");
  }
}

// Slow server.
{
  const off = find("BM_SlowServer", { variant: "off" });
  if (off) {
    say("## Slow server: every request takes the server 5 ms — the client's CPU is the result", "");
    say("`client spin wall ms` is the time the client's reader spent in its spin loop; it yields the CPU between tries, so on a busy " +
      "machine that time can run far past the 100 µs budget without being CPU time.", "");
    const rows = [];
    for (const v of VARIANTS) {
      const g = find("BM_SlowServer", { variant: v });
      if (!g) continue;
      rows.push([v, secs(g.clientCpu), v === "off" ? "" : ratio(g.clientCpu, off.clientCpu), us((g.clientCpu / g.stats.n) * 1e9),
        count(g.sum("cli_spin_misses")), count(g.sum("cli_suspensions")), Number.isFinite(g.sum("cli_spin_ms")) ? g.sum("cli_spin_ms").toFixed(1) : "–", secs(g.serverCpu),
        us(g.stats.p50), us(g.stats.p75), v === "off" ? "" : ratio(g.stats.p50, off.stats.p50), secs(g.wall)]);
    }
    say(table(["variant", "client CPU s", "client CPU / spin off", "client CPU per request µs", "client spin misses", "client suspensions",
      "client spin wall ms", "server CPU s", "p50 µs", "p75 µs", "p50 / spin off", "wall s"], rows), "");
  }
}

// Worst case.
{
  const off = find("BM_WorstCase", { variant: "off" });
  if (off) {
    say(`## Worst case: ${off.params.fast} fast requests, then one slow one (benchWork ${off.params.slow_busy_us} µs), ${off.params.cycles} times`, "");
    say("The proposal measured server CPU 0.03 s (off) → 0.46 s (fixed) → 0.04 s (adaptive) for this shape. CPU figures are per run " +
      `(summed over the rounds, then divided by ${off.runs.length}); latencies are the fast echoes'.`, "");
    const rows = [];
    const n = (g) => g.runs.length;
    for (const v of VARIANTS) {
      const g = find("BM_WorstCase", { variant: v });
      if (!g) continue;
      rows.push([v, secs(g.serverCpu / n(g)), v === "off" ? "" : ratio(g.serverCpu, off.serverCpu), secs(g.clientCpu / n(g)),
        v === "off" ? "" : ratio(g.clientCpu, off.clientCpu), count(g.sum("srv_spin_misses")), count(g.sum("cli_spin_misses")),
        count(g.sum("cli_suspensions")), us(g.stats.p50), us(g.stats.p75), v === "off" ? "" : ratio(g.stats.p75, off.stats.p75),
        us(g.mean("slow_mean_us") * 1000), secs(g.wall / n(g))]);
    }
    say(table(["variant", "server CPU s per run", "server CPU / spin off", "client CPU s per run", "client CPU / spin off",
      "server spin misses", "client spin misses", "client suspensions", "fast p50 µs", "fast p75 µs", "fast p75 / spin off", "slow mean µs", "wall s per run"], rows), "");
  }
}

// Oversubscribed.
{
  const one = find("BM_Oversubscribed", { pairs: 1, variant: "off" });
  if (one) {
    say(`## Oversubscribed: N pairs echoing ${one.params.bytes} B at once for ${one.params.ms} ms, on ${bench.context.num_cpus} CPUs`, "");
    say("Each pair is its own client process (forked) and its own spinrpc-server. Latencies of all pairs pooled; CPU summed over the pairs. " +
      "Spin must never be slower than spin off here (SPIN.md, \"Never invert\").", "");
    const rows = [];
    for (let pairs = 1; pairs <= 8; pairs++) {
      for (const v of VARIANTS) {
        const g = find("BM_Oversubscribed", { pairs, variant: v });
        if (!g) continue;
        const s = g.stats;
        const off = find("BM_Oversubscribed", { pairs, variant: "off" })?.stats;
        const n1 = find("BM_Oversubscribed", { pairs: 1, variant: v })?.stats;
        rows.push([`${pairs}, ${v}`, count(s.n), us(s.p50), us(s.p75), us(s.p99), us(s.max), count(g.mean("echoes_per_s")),
          v === "off" ? "" : ratio(s.p50, off?.p50), v === "off" ? "" : ratio(s.p75, off?.p75), ratio(s.p50, n1?.p50),
          ratio(s.p50, floorOf(8, "blocking")?.stats.p50), secs(g.clientCpu), secs(g.serverCpu), perRound(g)]);
      }
    }
    say(table(["pairs, variant", "n", "p50 µs", "p75 µs", "p99 µs", "max µs", "echoes/s (all pairs)", "p50 / spin off", "p75 / spin off",
      "p50 / 1 pair", "p50 / floor blocking", "client CPU s", "server CPU s", "p50 per round µs"], rows), "");
  }
}

// The real TypeScript client.
if (nodeRun) {
  say("## The real TypeScript client (bench/node/echo_latency.mjs)", "");
  const o = nodeRun.options;
  say(`${nodeRun.client}; ${o.size}-byte echoes, ${count(o.count)} per variant over ${o.rounds} rounds (each round spawns every variant once, ` +
    `order rotating), ${o.warmup} warm-up echoes per process. The JavaScript client does not spin: only spinrpc-server's side varies ` +
    "(set through TSGO_SYNC_SPIN_* in its environment, checked with getChannelStats). Its floors are Node's own: the same message size " +
    "through `cat` over two pipes, blocking and polled.", "");
  const fb = nodeRun.variants.find((v) => v.floor === "blocking");
  const fp = nodeRun.variants.find((v) => v.floor === "polled");
  const ts = nodeRun.variants.find((v) => v.kind === "tsgo");
  const off = nodeRun.variants.find((v) => v.kind === "spinrpc" && v.spin === "off");
  const rows = nodeRun.variants.map((v) => [v.name, count(v.n), us(v.mean_ns), us(v.p50_ns), us(v.p75_ns), us(v.p99_ns), us(v.max_ns),
    ratio(v.p50_ns, fb?.p50_ns), ratio(v.p50_ns, fp?.p50_ns), v.kind === "spinrpc" && v.spin !== "off" ? ratio(v.p50_ns, off?.p50_ns) : "",
    v.kind === "spinrpc" ? ratio(v.p50_ns, ts?.p50_ns) : "", v.kind === "spinrpc" ? ratio(v.p75_ns, ts?.p75_ns) : "",
    secs(v.client_cpu_s), secs(v.server_cpu_s), secs(v.wall_s), v.round_p50_ns.map(us).join(", ")]);
  say(table(["variant", "n", "mean µs", "p50 µs", "p75 µs", "p99 µs", "max µs", "p50 / floor blocking", "p50 / floor polled", "p50 / server spin off",
    "spinrpc / tsgo p50", "spinrpc / tsgo p75", "client CPU s", "server CPU s", "wall s", "p50 per round µs"], rows), "");
}

// ── pictures ──────────────────────────────────────────────────────────

/** Tick marks 1, 1.5, 2, 3, 5, 7 per decade between lo and hi (log axis). */
function logTicks(lo, hi) {
  const ticks = [];
  for (let d = 10 ** Math.floor(Math.log10(lo)); d <= hi; d *= 10) {
    for (const m of [1, 1.5, 2, 3, 5, 7]) {
      const t = Number((m * d).toPrecision(3));
      if (t >= lo && t <= hi) ticks.push(t);
    }
  }
  return ticks;
}

/**
 * Writes `series` ({title, sorted, style, reference}) as a CDF and plots it;
 * returns the PNG path or null. The x axis ends at the largest p99.5 of the
 * series that are not `reference` (a floor's stalls must not squash the rest).
 * The data file goes next to the benchmark JSON, not into the report.
 */
function cdf(file, title, series) {
  series = series.filter((s) => s.sorted && s.sorted.length > 0);
  if (series.length === 0) return null;
  mkdirSync(args.pngDir, { recursive: true });
  const dat = join(dirname(resolve(args.benchJson)), `${file}.dat`);
  const png = join(args.pngDir, `${file}.png`);
  const blocks = [];
  let xmin = Infinity;
  let xmax = 0;
  for (const s of series) {
    const n = s.sorted.length;
    const pts = [];
    const steps = Math.min(n, 2000);
    for (let k = 0; k < steps; k++) {
      const q = (k + 1) / steps;
      pts.push(`${(percentile(s.sorted, q) / 1000).toFixed(4)} ${q.toFixed(5)}`);
    }
    xmin = Math.min(xmin, s.sorted[0] / 1000);
    if (!s.reference) xmax = Math.max(xmax, percentile(s.sorted, 0.995) / 1000);
    blocks.push(pts.join("\n"));
  }
  writeFileSync(dat, blocks.join("\n\n\n") + "\n");
  const lo = Number((xmin * 0.9).toPrecision(2));
  const hi = Number((xmax * 1.1).toPrecision(2));
  const plots = series.map((s, i) => `'${dat}' index ${i} with lines ${s.style} title '${s.title.replace(/'/g, "''")} (n=${s.sorted.length})'`);
  const script = [
    "set terminal pngcairo size 1000,620 font 'sans,10'",
    `set output '${png}'`,
    `set title '${title.replace(/'/g, "''")}'`,
    "set logscale x",
    `set xrange [${lo}:${hi}]`,
    `set xtics (${logTicks(lo, hi).join(", ")})`,
    "set yrange [0:1]",
    "set xlabel 'round-trip latency, µs (log scale, cut at the largest p99.5)'",
    "set ylabel 'fraction of requests at or below'",
    "set grid",
    "set key right bottom",
    `plot ${plots.join(", \\\n     ")}`,
  ].join("\n");
  const r = spawnSync("gnuplot", [], { input: script, encoding: "utf8" });
  if (r.error || r.status !== 0) {
    console.error(`report: gnuplot failed for ${file}: ${r.error ? r.error.message : r.stderr}`);
    return null;
  }
  return png;
}

const STYLE = { off: "lw 2 lc rgb '#1f77b4'", fixed: "lw 2 lc rgb '#d62728'", adaptive: "lw 2 lc rgb '#2ca02c'" };
const pictures = [];
{
  const s = VARIANTS.map((v) => ({ title: `spinrpc-server, ${v}`, sorted: echoOf(8, v)?.sorted, style: STYLE[v] }));
  s.push({ title: "tsgo, shim off", sorted: tsgoOf(8, "off")?.sorted, style: "lw 1 dt 4 lc rgb '#9467bd'", reference: true });
  s.push({ title: "floor, blocking read", sorted: floorOf(8, "blocking")?.sorted, style: "lw 1 dt 2 lc rgb 'black'", reference: true });
  s.push({ title: "floor, polled read", sorted: floorOf(8, "polled")?.sorted, style: "lw 1 dt 3 lc rgb 'gray40'", reference: true });
  const png = cdf("small_echo_cdf", "8-byte echo through the client shim: latency CDF per variant", s);
  if (png) pictures.push(["Small echo (8 B), back to back, per variant, with the floors", png]);
}
{
  const s = [];
  for (const [large, dt] of [["echo1MiB", 1], ["busy200us", 2]]) {
    for (const v of VARIANTS) s.push({ title: `after ${large}, ${v}`, sorted: find("BM_Interleave", { large, variant: v })?.sorted, style: `${STYLE[v]} dt ${dt}` });
  }
  const png = cdf("interleave_cdf", "Interleave: the 8-byte echoes between large requests, per variant", s);
  if (png) pictures.push(["Interleave: small echoes after a 1 MiB echo (solid) or a 200 µs server turn (dashed)", png]);
}
{
  const s = [];
  for (const [pairs, dt] of [[2, 1], [4, 2]]) {
    for (const v of VARIANTS) s.push({ title: `${pairs} pairs, ${v}`, sorted: find("BM_Oversubscribed", { pairs, variant: v })?.sorted, style: `${STYLE[v]} dt ${dt}` });
  }
  const png = cdf("oversubscribed_cdf", `Oversubscribed: 8-byte echoes with 2 and 4 pairs on ${bench.context.num_cpus} CPUs`, s);
  if (png) pictures.push(["Oversubscribed: 2 pairs (solid) and 4 pairs (dashed)", png]);
}
say("## Pictures", "");
if (pictures.length === 0) {
  say("No pictures: gnuplot is missing or failed (scripts/setup.sh installs gnuplot-nox).", "");
} else {
  for (const [caption, png] of pictures) say(`![${caption}](${relative(dirname(resolve(args.out)), resolve(png))})`, "", `*${caption}.*`, "");
}

mkdirSync(dirname(resolve(args.out)), { recursive: true });
writeFileSync(args.out, lines.join("\n") + "\n");
console.log(`report: wrote ${args.out}${pictures.length ? ` and ${pictures.length} picture(s) in ${args.pngDir}` : ""}`);
