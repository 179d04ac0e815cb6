#!/usr/bin/env node
// report (workload): writes the "Production-shaped workload" section of
// bench/REPORT.md from the trace and the replays' JSON lines, with a
// gnuplot picture of the trace's handler-time and client-gap CDFs.
//
//   node bench/workload/report.mjs --trace FILE --replay-json FILE --out REPORT.md
//        --png-dir DIR [--concurrency-json FILE] [--js-json FILE] [--e2e-json FILE]
//        [--command TEXT] [--smoke]
//
// --replay-json  spinrpc-replay --json at --parallel 1 (figure 2)
// --concurrency-json  spinrpc-replay --json at --parallel 1,2,3,4 (figure 4)
// --js-json      bench/workload/replay.mjs --json (the client's own channel)
// --e2e-json     bench/workload/e2e.mjs --json (figure 3), one file per
//                TypeScript version, comma-separated
// --load-before  the load average when the replays started (run.sh passes it)
// The section replaces the one already in --out (between its markers) or is
// appended. Ratios are medians of per-round paired ratios, every round listed.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { commandLine } from "../harness/cli.mjs";
import { gnuplot } from "../reporting/pictures.mjs";
import { median, percentile } from "../harness/stats.mjs";
import { readTrace, TraceError } from "./trace_file.mjs";

const args = (() => {
  const cli = commandLine("report (workload)", "usage: node bench/workload/report.mjs --trace FILE --replay-json FILE --out REPORT.md --png-dir DIR [--concurrency-json FILE] [--js-json FILE] [--e2e-json LIST] [--load-before TEXT] [--command TEXT] [--smoke]");
  const text = { type: "string" };
  const v = cli.parse({
    trace: text, "replay-json": text, "concurrency-json": text, "js-json": text, "e2e-json": text, out: text, "png-dir": text, command: text,
    "load-before": text, smoke: { type: "boolean", default: false },
  });
  for (const k of ["trace", "replay-json", "out", "png-dir"]) if (!v[k]) cli.fail(`--${k} is required`);
  return {
    smoke: v.smoke, trace: v.trace, replayJson: v["replay-json"], concurrencyJson: v["concurrency-json"], jsJson: v["js-json"], e2eJson: v["e2e-json"],
    out: v.out, pngDir: v["png-dir"], command: v.command, loadBefore: v["load-before"],
  };
})();

const f1 = (x) => (x == null || Number.isNaN(x) ? "–" : x.toFixed(1));
const f2 = (x) => (x == null || Number.isNaN(x) ? "–" : x.toFixed(2));
const jsonLines = (file) => (file && existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);

// ── the trace ───────────────────────────────────────────────────────
const { header, methods: names, rows } = (() => {
  try {
    return readTrace(args.trace);
  } catch (e) {
    if (!(e instanceof TraceError)) throw e;
    console.error(`report (workload): ${e.message}`);
    process.exit(1);
  }
})();
const us = (ns) => ns / 1000;
const server = rows.filter((r) => r[3] >= 0).map((r) => us(r[3])).sort((a, b) => a - b);
const gaps = rows.filter((r) => r[4] >= 0).map((r) => us(r[4])).sort((a, b) => a - b);
const byMethod = new Map();
rows.forEach((r, i) => {
  const m = names[r[0]];
  if (!byMethod.has(m)) byMethod.set(m, { n: 0, server: [], gap: [], req: 0, reply: 0 });
  const e = byMethod.get(m);
  e.n++; e.req += r[1]; e.reply += r[2];
  if (r[3] >= 0) e.server.push(us(r[3]));
  if (r[4] >= 0) e.gap.push(us(r[4]));
});
const plateau = (lo, hi) => gaps.filter((g) => g >= lo && g < hi).length / gaps.length;

const out = [];
const say = (...l) => out.push(...l);
say("<!-- workload:begin (bench/workload/report.mjs) -->", "## Production-shaped workload: a recorded aws-cdk-lib walk, replayed", "");
if (args.smoke) say("**Smoke run: a slice of the trace, one round. Not a measurement.**", "");
say(`Trace: \`${relative(process.cwd(), resolve(args.trace))}\` (bench/workload/README.md), made by:`, "",
  ...header.filter((l) => /^# (command|library|client|recorded):/.test(l)).map((l) => "    " + l.slice(2)), "");
say(`Report written ${new Date().toISOString()}; ${cpus().length} CPUs; load average (1, 5, 15 min) ${args.loadBefore ? `${args.loadBefore} when the replays started, ` : ""}${loadavg().map((x) => x.toFixed(2)).join(" ")} at the end. Spinning trades idle CPU for latency: with more runnable tasks than CPUs the replays measure contention, not wake-ups.`, "");

say("### 1. The trace's shape beside the proposal's", "",
  "| | this trace (aws-cdk-lib .d.ts, sampled; walk.mjs) | the proposal (jsii compiling aws-cdk-lib from source) |",
  "| --- | --- | --- |",
  `| requests | ${rows.length} | ~700 000 |`,
  `| handler time (tsgo's own), p50 / p90 / p99 | ${f1(percentile(server, 0.5))} / ${f1(percentile(server, 0.9))} / ${f1(percentile(server, 0.99))} µs | 1.6–5 µs for the hot methods |`,
  `| client gap, p50 / p90 / p99 | ${f1(percentile(gaps, 0.5))} / ${f1(percentile(gaps, 0.9))} / ${f1(percentile(gaps, 0.99))} µs | median 19 µs, p90 31–82 µs |`,
  `| gaps in 150–250 µs (the proposal's plateau) | ${(100 * plateau(150, 250)).toFixed(2)} % | a plateau near 200 µs after the type-materialising methods |`,
  `| total handler / total gap time | ${f1(server.reduce((a, b) => a + b, 0) / 1e6)} s / ${f1(gaps.reduce((a, b) => a + b, 0) / 1e6)} s | server blocked in read 24 s of 45 s |`,
  "");
say("Method mix (handler time is tsgo's getServerTiming figure; the gap is the client's time after that method's reply):", "",
  "| method | requests | share | handler p50 / p90 / p99, µs | gap after it p50 / p90, µs | mean request / reply, bytes |",
  "| --- | ---: | ---: | --- | --- | --- |");
for (const [m, e] of [...byMethod].sort((a, b) => b[1].n - a[1].n)) {
  e.server.sort((a, b) => a - b); e.gap.sort((a, b) => a - b);
  say(`| ${m} | ${e.n} | ${(100 * e.n / rows.length).toFixed(1)} % | ${f1(percentile(e.server, 0.5))} / ${f1(percentile(e.server, 0.9))} / ${f1(percentile(e.server, 0.99))} | ${f1(percentile(e.gap, 0.5))} / ${f1(percentile(e.gap, 0.9))} | ${Math.round(e.req / e.n)} / ${Math.round(e.reply / e.n)} |`);
}
say("");

// picture: handler time and client gap CDFs
function picture() {
  mkdirSync(args.pngDir, { recursive: true });
  const dat = join(dirname(resolve(args.replayJson)), "workload_trace_cdf.dat");
  const png = join(args.pngDir, "workload_trace_cdf.png");
  const block = (sorted) => Array.from({ length: 2000 }, (_, k) => `${Math.max(percentile(sorted, (k + 1) / 2000), 0.05).toFixed(4)} ${((k + 1) / 2000).toFixed(5)}`).join("\n");
  writeFileSync(dat, block(server) + "\n\n\n" + block(gaps) + "\n");
  const script = [
    "set terminal pngcairo size 1000,620 font 'sans,10'", `set output '${png}'`,
    "set title 'Recorded aws-cdk-lib walk: tsgo handler time and client gap per request'",
    "set logscale x", "set xrange [0.5:2000]", "set yrange [0:1]", "set grid", "set key left top noenhanced",
    "set xlabel 'µs (log scale)'", "set ylabel 'fraction of requests at or below'",
    "set arrow from 19,0 to 19,1 nohead dt 2 lw 1.5 lc rgb '#555555'", "set label 'proposal: gap p50 19 us' at 20,0.05 noenhanced",
    "set arrow from 200,0 to 200,1 nohead dt 2 lw 1.5 lc rgb '#555555'", "set label 'proposal: plateau near 200 us' at 210,0.12 noenhanced",
    `plot '${dat}' index 0 with lines lw 2 lc rgb '#d62728' title 'handler time (tsgo --timing, n=${server.length})', '${dat}' index 1 with lines lw 2 lc rgb '#1f77b4' title 'client gap (walker, n=${gaps.length})'`,
  ].join("\n");
  return gnuplot(script, "report (workload)") ? png : null;
}
const png = picture();
if (png) say(`![Handler time and client gap CDFs](${relative(dirname(resolve(args.out)), resolve(png))})`, "", "*Handler time and client gap per request, CDF.*", "");

// ── replays ─────────────────────────────────────────────────────────
function pairedRounds(results, parallel) {
  const rounds = new Map();
  for (const r of results.filter((x) => x.parallel === parallel)) {
    if (!rounds.has(r.round)) rounds.set(r.round, { default: [], off: [] });
    rounds.get(r.round)[r.variant].push(r);
  }
  return [...rounds].map(([round, v]) => {
    const mean = (xs, k) => xs.reduce((s, x) => s + (x[k] ?? NaN), 0) / xs.length;
    return { round, d: { wall: mean(v.default, "wallMs"), cc: mean(v.default, "clientCpuMs"), sc: mean(v.default, "serverCpuMs") },
      o: { wall: mean(v.off, "wallMs"), cc: mean(v.off, "clientCpuMs"), sc: mean(v.off, "serverCpuMs") }, requests: v.default[0]?.requests };
  }).filter((r) => !Number.isNaN(r.d.wall) && !Number.isNaN(r.o.wall));
}
function roundsTable(rounds, label) {
  say(`| round | default wall, s | spin-off wall, s | default / off | default CPU client + server, s | off CPU client + server, s |`, "| ---: | ---: | ---: | ---: | --- | --- |");
  for (const r of rounds) say(`| ${r.round} | ${f2(r.d.wall / 1e3)} | ${f2(r.o.wall / 1e3)} | **${f2(r.d.wall / r.o.wall)}** | ${f2(r.d.cc / 1e3)} + ${f2(r.d.sc / 1e3)} | ${f2(r.o.cc / 1e3)} + ${f2(r.o.sc / 1e3)} |`);
  const ratio = median(rounds.map((r) => r.d.wall / r.o.wall));
  say("", `${label}: median of the per-round ratios **${f2(ratio)}×** over ${rounds.length} round(s).`, "");
  return ratio;
}
const shim = jsonLines(args.replayJson);
say("### 2. Replay wall clock, shim + bench server: default settings vs both ends spin-off", "",
  "`spinrpc-replay` plays every request with its recorded size, the recorded handler time as the server's busy work (benchWork, error-diffused to whole µs) and the recorded client gap as busy work in the client; default = no spin setting anywhere (100 µs, adaptive), off = `--spin-us 0` and shim budget 0. " +
  "Paired rounds alternate their order; CPU is each process's own (schedstat). Target: ≤ 0.8×.", "");
const r2 = pairedRounds(shim, 1);
if (r2.length) roundsTable(r2, `${r2[0].requests} requests`); else say("(no replay results)", "");

const js = jsonLines(args.jsJson);
if (js.length) {
  for (const client of [...new Set(js.map((r) => r.client))]) {
    say(`#### The same replay through the TypeScript client's ${client === "js" ? "pure-JS SyncRpcChannel" : "channel replaced by the binding (--import)"}`, "",
      "The pure-JS channel never spins, so only the server's side varies with it.", "");
    const rj = pairedRounds(js.filter((r) => r.client === client), 1);
    if (rj.length) roundsTable(rj, `${rj[0].requests} requests, ${client}`);
  }
}

say("### 4. N concurrent replays: per-replay wall clock, default vs spin-off", "",
  "N replays at once, each its own client and server process, on this machine's CPUs. Per-replay wall clock is the mean over the N replays of a round; the ratio is the median over rounds. Target: ≤ 1.1× at every N.", "",
  "| N | rounds | per-round default / off | median | default wall, s (mean) | off wall, s (mean) | CPU default / off, s per replay |", "| ---: | ---: | --- | ---: | ---: | ---: | --- |");
const conc = jsonLines(args.concurrencyJson);
for (const n of [...new Set(conc.map((r) => r.parallel))].sort((a, b) => a - b)) {
  const rr = pairedRounds(conc, n);
  if (!rr.length) continue;
  const mean = (k, s) => rr.reduce((a, r) => a + r[s][k], 0) / rr.length / 1e3;
  say(`| ${n} | ${rr.length} | ${rr.map((r) => f2(r.d.wall / r.o.wall)).join(", ")} | **${f2(median(rr.map((r) => r.d.wall / r.o.wall)))}** | ${f2(mean("wall", "d"))} | ${f2(mean("wall", "o"))} | ${f2(mean("cc", "d") + mean("sc", "d"))} / ${f2(mean("cc", "o") + mean("sc", "o"))} |`);
}
if (conc.length) say("", `Requests per replay: ${conc[0].requests}.`, "");

say("### 3. End to end: the real walk against each version's own server, pure-JS client vs the Node binding", "");
// --e2e-json takes one file per version, comma-separated (e2e.mjs --json
// empties its file first, so each version's run has its own).
const e2eFiles = (args.e2eJson ?? "").split(",").filter(Boolean);
const e2eRuns = e2eFiles.map((file) => ({ file, rows: jsonLines(file) })).filter((run) => run.rows.length);
const spinCells = (s) => s ? `${s.suspensions} | ${s.blockedWhileSuspended.toLocaleString("en-US")} | ${s.spinContended} / ${s.stolenYields}` : " |  | ";
for (const { file, rows } of e2eRuns) {
  const ts = rows[0].ts ?? "preview";
  say(`#### ${rows[0].tsVersion ? `typescript ${rows[0].tsVersion}` : ts} (\`--ts ${ts}\`)`, "",
    "| round | variant | wall, s | client CPU, s | server CPU, s | load (1 min) | requests | suspensions | waits blocked while suspended | `spin_contended` / `stolen_yields` |",
    "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const r of rows) {
    const requests = r.batch ? `${r.batchCalls} (${r.questions.toLocaleString("en-US")} questions)` : r.requests.toLocaleString("en-US");
    say(`| ${r.round} | ${r.client} | ${f2(r.wallMs / 1e3)} | ${f2(r.clientCpuMs / 1e3)} | ${f2(r.serverCpuMs / 1e3)} | ${f2(r.load1)} | ${requests} | ${spinCells(r.spin)} |`);
  }
  const byRound = new Map();
  for (const r of rows) { if (!byRound.has(r.round)) byRound.set(r.round, {}); byRound.get(r.round)[r.client] = r; }
  const sha = new Set(rows.map((r) => r.outputSha1).filter(Boolean));
  say("", `Made by \`node bench/workload/e2e.mjs --ts ${ts} --import node/register.mjs --rounds ${byRound.size} --json ${relative(resolve(dirname(fileURLToPath(import.meta.url)), "..", ".."), resolve(file))}\`; ` +
    `every walk's output identical (checked by e2e.mjs${sha.size === 1 ? `; sha1 ${[...sha][0].slice(0, 12)}` : ""}).`, "");
  for (const [label, num, den] of [["binding / pure JS", "binding", "js"], ["pure JS + batch / pure JS", "js+batch", "js"],
    ["binding + batch / binding", "binding+batch", "binding"], ["binding + batch / pure JS", "binding+batch", "js"]]) {
    const ratios = [...byRound.values()].filter((v) => v[num] && v[den]).map((v) => v[num].wallMs / v[den].wallMs);
    if (ratios.length) say(`- ${label} wall clock: per round ${ratios.map(f2).join(", ")}; median **${f2(median(ratios))}×**.`);
  }
  say("");
}
if (e2eRuns.some(({ rows }) => rows.some((r) => r.spin))) {
  say("The last three columns are the binding's `stats()` at the walk's end: suspensions of spinning, the waits that blocked while suspended " +
    "(each costs a wake-up), and the contentions (`spin_contended`: chiefly yields that came back over 20 µs late with the binding's thread switched out, another task on its CPU; " +
    "each suspends spinning) and the yields that came back late without a switch (`stolen_yields`, over 3 µs: the host's or interrupts' time, not taken for contention; " +
    "docs/SPIN-NOTES.md#a-late-yield-is-contention-only-if-another-task-ran). The pure-JS channel has no counters.", "");
}
if (!e2eRuns.length) {
  say("Not measured in this run (it needs the Node binding and aws-cdk-lib). The commands, from the repository root:", "",
    "    node bench/workload/e2e.mjs --ts 7.0 --import node/register.mjs --rounds 5 --json bench/out/workload/e2e.json",
    "    node bench/workload/e2e.mjs --ts 7.1-dev --import node/register.mjs --rounds 3 --json bench/out/workload/e2e-7.1-dev.json", "",
    "then re-run this report with `--e2e-json bench/out/workload/e2e.json,bench/out/workload/e2e-7.1-dev.json` (bench/workload/README.md).", "");
}
if (args.command) say(`Replays made by \`${args.command}\`.`, "");
say("<!-- workload:end -->");

const section = out.join("\n") + "\n";
let report = existsSync(args.out) ? readFileSync(args.out, "utf8") : "";
const re = /<!-- workload:begin[\s\S]*?<!-- workload:end -->\n?/;
report = re.test(report) ? report.replace(re, section) : report + (report.endsWith("\n") || !report ? "" : "\n") + "\n" + section;
writeFileSync(args.out, report);
console.log(`report (workload): wrote its section of ${args.out}`);
