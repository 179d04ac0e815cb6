#!/usr/bin/env node
// The per-request trace in the bench (issue 40, docs/TRACE.md): a picture,
// the split of a round trip, and what tracing costs; written as the section
// "Per-request trace" of bench/REPORT.md (between <!-- trace:begin --> and
// <!-- trace:end -->, replaced or appended; bench/report.mjs keeps it).
//
//   node bench/harness/trace_figures.mjs [--build DIR] [--rounds N] [--echo-count N]
//        [--timeline-start I] [--timeline-limit N] [--skip timeline,split,cost]
//        [--out FILE] [--png-dir DIR] [--json FILE]
//
// timeline  spinrpc-replay plays --timeline-limit requests of the recorded
//           aws-cdk-lib walk from --timeline-start (defaults 1000 and 50)
//           against spinrpc-bench-server at the defaults, both traced
//           (SPINRPC_TRACE=<scratch>/t-%p.json); the two files give the
//           picture (bench/report/trace_timeline.png): per process a lane of
//           its requests, sends, reads, handlers, and a lane of its waits,
//           spin and block in two colours; all the requests above, the
//           median one below.
// split     8-byte echoes, traced on both sides: the shim (spinrpc-bench
//           BM_Echo 8 B adaptive) and the Node binding (bench/node/binding_echo.mjs,
//           --echo-count echoes) against spinrpc-server; the binding against
//           the real server (SPINRPC_TSGO), where only the client is traced.
//           Each round trip is split into its parts (trace_events.mjs,
//           splitRoundTrips); the table gives each part's p50.
// cost      --rounds rounds (default 10); in each, both clients echo 8 B
//           with the trace off, on the client only, on the server only and
//           on both, the four in an order that rotates from round to round;
//           the added cost of a side is its p50 minus the same round's p50
//           with the trace off. The shim's server is spinrpc-bench-server
//           started through a two-line sh wrapper that sets its
//           SPINRPC_TRACE (the shim passes its environment on), in all four
//           cases alike; the binding's is given its own environment.
//
// The section is written whole from what this run measured: a part left
// out with --skip is left out of it too.
//
// Trace files live in a scratch directory (never in the repository),
// removed at the end, each run's as soon as it is read; the timeline's
// boxes stay in bench/out/trace_timeline.dat (ignored by git). The load
// average is printed and reported before and after; the whole run takes
// about a minute on a quiet 2-CPU machine.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { commandLine } from "./cli.mjs";
import { median } from "./stats.mjs";
import { timeline } from "../reporting/pictures.mjs";
import { TIMELINE_KINDS, readTraces, splitMedians, splitRoundTrips, timelineBoxes, waitSummary } from "../reporting/trace_events.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const USAGE = "usage: node bench/harness/trace_figures.mjs [--build DIR] [--rounds N] [--echo-count N] [--timeline-start I] " +
  "[--timeline-limit N] [--skip timeline,split,cost] [--out FILE] [--png-dir DIR] [--json FILE]";
const cli = commandLine("trace_figures", USAGE);
const values = cli.parse({
  build: { type: "string", default: REPO },
  rounds: { type: "string", default: "10" },
  "echo-count": { type: "string", default: "20000" },
  "timeline-start": { type: "string", default: "1000" },
  "timeline-limit": { type: "string", default: "50" },
  skip: { type: "string", default: "" },
  out: { type: "string", default: join(REPO, "bench", "REPORT.md") },
  "png-dir": { type: "string", default: join(REPO, "bench", "report") },
  json: { type: "string" },
});
const dir = resolve(values.build);
const bin = join(dir, "build", "bin");
const rounds = cli.count("rounds", values.rounds, 1);
const echoCount = cli.count("echo-count", values["echo-count"], 1);
const timelineStart = cli.count("timeline-start", values["timeline-start"]);
const timelineLimit = cli.count("timeline-limit", values["timeline-limit"], 1);
const skip = new Set(values.skip.split(",").filter(Boolean));
for (const s of skip) if (!["timeline", "split", "cost"].includes(s)) cli.fail(`--skip ${s}: want timeline, split or cost`);
const tsgo = process.env.SPINRPC_TSGO;
if (!skip.has("split") && !tsgo) cli.fail("SPINRPC_TSGO: the real server (typescript@7.0.2's lib/tsc) for the split's client-only row");
const scratch = mkdtempSync(join(tmpdir(), "trace-figures-"));
const BENCH_SERVER = join(bin, "spinrpc-bench-server");
const SPINRPC_SERVER = join(bin, "spinrpc-server");
const BINDING_ECHO = join(dir, "bench", "node", "binding_echo.mjs");
const ECHO_FILTER = "^BM_Echo/bytes:8/.*variant:adaptive";

/** This process's environment without a trace setting: each run says its own. */
function baseEnv(extra = {}) {
  const env = { ...process.env };
  delete env.SPINRPC_TRACE;
  delete env.SPINRPC_TRACE_MAX;
  return Object.assign(env, extra);
}

/** The trace files a run left in `where` (not the writers' temporaries). */
const traceFiles = (where) => readdirSync(where).filter((f) => f.endsWith(".json")).map((f) => join(where, f));

/** A fresh directory for one run's traces. */
let runs = 0;
function runDir(tag) {
  const d = join(scratch, `${String(++runs).padStart(3, "0")}-${tag}`);
  mkdirSync(d);
  return d;
}

// ── the shim: spinrpc-bench's 8-byte echo, the server through a wrapper ──

/** A wrapper that starts spinrpc-bench-server with SPINRPC_TRACE=`trace` ("" for none). */
function serverWrapper(name, trace) {
  const path = join(scratch, name);
  writeFileSync(path, `#!/bin/sh\nSPINRPC_TRACE='${trace}' exec '${BENCH_SERVER}' "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

/** BM_Echo 8 B adaptive, once: { p50_ns, mean_ns }; the client traced into `clientTrace` unless null. */
function shimEcho(clientTrace, server) {
  const out = join(scratch, "bench.json");
  execFileSync(join(bin, "spinrpc-bench"), ["--rounds=1", `--benchmark_filter=${ECHO_FILTER}`, `--benchmark_out=${out}`,
    "--benchmark_out_format=json"], {
    env: baseEnv({ SPINRPC_BENCH_SERVER: server, ...(clientTrace ? { SPINRPC_TRACE: clientTrace } : {}) }),
    stdio: ["ignore", "ignore", "inherit"],
  });
  const [b] = JSON.parse(readFileSync(out, "utf8")).benchmarks;
  return { p50_ns: b.p50_us * 1000, mean_ns: b.mean_us * 1000 };
}

/** binding_echo.mjs, once: { p50_ns, mean_ns }. `clientTrace`/`serverTrace`: its flags (undefined: not given). */
function bindingEcho(server, clientTrace, serverTrace) {
  const args = [BINDING_ECHO, "--server", server, "--count", String(echoCount), "--warmup", "1000", "--size", "8"];
  if (clientTrace !== undefined) args.push("--client-trace", clientTrace);
  if (serverTrace !== undefined) args.push("--server-trace", serverTrace);
  const line = execFileSync("node", args, { env: baseEnv(), encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  return JSON.parse(line.trim().split("\n").pop());
}

const loadBefore = loadavg();
console.log(`load before: ${loadBefore.map((x) => x.toFixed(2)).join(" ")}`);
const started = new Date();
const result = { loadBefore, rounds, echoCount };

// ── timeline ─────────────────────────────────────────────────────────
let picture = null;
if (!skip.has("timeline")) {
  const where = runDir("timeline");
  execFileSync(join(bin, "spinrpc-replay"), ["--trace", join(dir, "bench", "workload", "aws-cdk-lib.trace.gz"),
    "--start", String(timelineStart), "--limit", String(timelineLimit), "--rounds", "1", "--variants", "default",
    "--server", BENCH_SERVER], { env: baseEnv({ SPINRPC_TRACE: join(where, "t-%p.json") }), stdio: ["ignore", "ignore", "inherit"] });
  const procs = readTraces(traceFiles(where));
  const t = timelineBoxes(procs, "benchWork", timelineLimit);
  const durations = t.requests.map((r) => r.to - r.from);
  const mid = t.requests[durations.indexOf([...durations].sort((a, b) => a - b)[Math.floor((durations.length - 1) / 2)])];
  const pad = Math.max(2, (mid.to - mid.from) * 0.15);
  const end = t.requests[t.requests.length - 1].to;
  picture = timeline(join(values["png-dir"], "trace_timeline.png"), join(dir, "bench", "out", "trace_timeline.dat"), {
    title: `${t.requests.length} consecutive requests of the recorded aws-cdk-lib walk (from request ${timelineStart}), spinrpc-replay ↔ spinrpc-bench-server, defaults`,
    lanes: t.lanes, kinds: TIMELINE_KINDS, boxes: t.boxes, xlabel: "µs from the first request's start",
    panels: [
      { title: `all ${t.requests.length} requests`, from: 0, to: Number((end * 1.01).toFixed(1)) },
      { title: `the median request (${(mid.to - mid.from).toFixed(1)} µs)`, from: Number((mid.from - pad).toFixed(2)), to: Number((mid.to + pad).toFixed(2)) },
    ],
  });
  // What the waits of these requests did, per process.
  result.timeline = waitSummary(procs, t.from, t.to);
  result.timelineRequests = t.requests.length;
  console.log(`timeline: ${picture ?? "not drawn"}; ${result.timeline.map((w) => `${w.name}: ${w.waits} waits, ${w.bySpin} ended spinning`).join("; ")}`);
}

// ── split ────────────────────────────────────────────────────────────
if (!skip.has("split")) {
  const cases = [
    ["shim → spinrpc-bench-server", (where) => shimEcho(join(where, "c-%p.json"), BENCH_SERVER), true],
    ["binding → spinrpc-server", (where) => bindingEcho(SPINRPC_SERVER, join(where, "c-%p.json")), true],
    ["binding → tsc (client only)", (where) => bindingEcho(tsgo, join(where, "c-%p.json"), ""), false],
  ];
  result.split = [];
  for (const [name, run, bothSides] of cases) {
    const where = runDir("split");
    const echo = run(where);
    const procs = readTraces(traceFiles(where));
    const client = procs.find((p) => p.client);
    const server = bothSides ? procs.find((p) => !p.client) : null;
    if (bothSides && !server) throw new Error(`${name}: the server wrote no trace in ${where}`);
    const { rows, unmatched } = splitRoundTrips(client, server, "echo");
    const m = splitMedians(rows);
    result.split.push({ name, echoP50Ns: echo.p50_ns, unmatched, ...m });
    console.log(`split ${name}: n ${m.n}, unmatched ${unmatched}, rt p50 ${(m.rt / 1000).toFixed(3)} µs (echo p50 ${(echo.p50_ns / 1000).toFixed(3)} µs)`);
    rmSync(where, { recursive: true, force: true });
  }
}

// ── cost ─────────────────────────────────────────────────────────────
const CONDITIONS = ["off", "client", "server", "both"];
if (!skip.has("cost")) {
  const wrapOff = serverWrapper("server-trace-off.sh", "");
  result.cost = { shim: Object.fromEntries(CONDITIONS.map((c) => [c, []])), binding: Object.fromEntries(CONDITIONS.map((c) => [c, []])) };
  for (let r = 0; r < rounds; r++) {
    const order = CONDITIONS.map((_, i) => CONDITIONS[(i + r) % CONDITIONS.length]);
    for (const c of order) {
      const where = runDir(`cost-${c}`);
      const client = c === "client" || c === "both" ? join(where, "c-%p.json") : null;
      const server = c === "server" || c === "both" ? serverWrapper(`server-trace-on-${r}-${c}.sh`, join(where, "s-%p.json")) : wrapOff;
      result.cost.shim[c].push(shimEcho(client, server));
      const trace = join(where, "b-%p.json");
      const b = { off: ["", ""], client: [trace, ""], server: ["", trace], both: [trace, trace] }[c];
      result.cost.binding[c].push(bindingEcho(SPINRPC_SERVER, b[0], b[1]));
      rmSync(where, { recursive: true, force: true });
    }
    const p = (who, c) => (result.cost[who][c][r].p50_ns / 1000).toFixed(3);
    console.log(`round ${r}: shim p50 µs ${CONDITIONS.map((c) => `${c} ${p("shim", c)}`).join(", ")}; binding ${CONDITIONS.map((c) => `${c} ${p("binding", c)}`).join(", ")}`);
  }
}
const loadAfter = loadavg();
result.loadAfter = loadAfter;
console.log(`load after: ${loadAfter.map((x) => x.toFixed(2)).join(" ")}`);
if (values.json) writeFileSync(values.json, JSON.stringify(result, null, 1));

// ── the report's section ─────────────────────────────────────────────
const lines = [];
const say = (...xs) => lines.push(...xs);
const f3 = (ns) => (Number.isFinite(ns) ? (ns / 1000).toFixed(3) : "–");
const f0 = (x) => (Number.isFinite(x) ? x.toFixed(0) : "–");
const load = (xs) => xs.map((x) => x.toFixed(2)).join(" ");
let commit = "?";
try { commit = execFileSync("git", ["-C", dir, "describe", "--always", "--dirty", "--abbrev=7"], { encoding: "utf8" }).trim(); } catch { /* not a checkout */ }
say("<!-- trace:begin (bench/harness/trace_figures.mjs) -->", "## Per-request trace (issue 40): a timeline, the split of a round trip, the cost", "",
  `${commit}, ${started.toISOString().slice(0, 16).replace("T", " ")}–${new Date().toISOString().slice(11, 16)} UTC; ` +
  `load average ${load(loadBefore)} before, ${load(loadAfter)} after. Written by`, "",
  `    SPINRPC_TSGO=tests/interop/node_modules/@typescript/typescript-linux-x64/lib/tsc node bench/harness/trace_figures.mjs ${process.argv.slice(2).join(" ")}`.trimEnd(), "",
  "Every trace was taken with `SPINRPC_TRACE` or the binding's `trace` option (docs/TRACE.md); its files stay out of the repository, " +
  "the timeline's boxes in bench/out/trace_timeline.dat.", "");
if (result.timeline) {
  say("### A timeline of the recorded walk, both processes", "",
    `${result.timelineRequests} consecutive requests of the recorded aws-cdk-lib walk from request ${timelineStart} ` +
    "(`spinrpc-replay --start " + timelineStart + " --limit " + timelineLimit + " --rounds 1 --variants default`), " +
    "the client's and spinrpc-bench-server's files on one clock (CLOCK_MONOTONIC). Per process, the upper lane holds its requests (grey), " +
    "sends, reads after their waits, and the handler; the lower its waits: spin (orange) and block (blue).", "");
  if (picture) say(`![Trace timeline](${relative(dirname(resolve(values.out)), resolve(picture))})`, "", "*The trace of a slice of the walk: every request above, the median one below.*", "");
  say("| process | waits | ended while spinning | spun, µs in all | blocked, µs in all |", "| --- | ---: | ---: | ---: | ---: |");
  for (const w of result.timeline) say(`| ${w.client ? "client" : "server"} (${w.name}) | ${w.waits} | ${w.bySpin} | ${w.spinUs.toFixed(1)} | ${w.blockUs.toFixed(1)} |`);
  say("");
}
if (result.split) {
  const cols = result.split;
  const row = (label, k, note = "") => say(`| ${label} | ${cols.map((c) => (c[k] === undefined ? "–" : f3(c[k]))).join(" | ")} |${note}`);
  say("### Where an 8-byte round trip goes", "",
    "Each part is the p50 over every traced echo (µs; the parts' medians need not add up to the round trip's). " +
    `Shim: spinrpc-bench \`${ECHO_FILTER}\`; binding: bench/node/binding_echo.mjs, ${echoCount} echoes after 1000 untimed. ` +
    "Against tsc only the client is traced, so its wait holds all of the server's part.", "",
    `| part | ${cols.map((c) => c.name).join(" | ")} |`, `| --- | ${cols.map(() => "---:").join(" | ")} |`);
  row("round trip (client's request span)", "rt");
  say(`| the same echoes timed by the bench, p50 | ${cols.map((c) => f3(c.echoP50Ns)).join(" | ")} |`);
  row("client: send (Request written)", "send");
  row("client: wait for the reply", "wait");
  row("&nbsp;&nbsp;of it spinning", "spin");
  row("&nbsp;&nbsp;of it blocked", "block");
  say(`| &nbsp;&nbsp;waits that ended while spinning | ${cols.map((c) => `${(100 * c.bySpin).toFixed(1)} %`).join(" | ")} |`);
  row("&nbsp;&nbsp;server: read (from its wait's end¹)", "serverRead");
  row("&nbsp;&nbsp;server: handler", "handler");
  row("&nbsp;&nbsp;server: reply (Response written, as the server saw it)", "reply");
  row("&nbsp;&nbsp;hand-offs and the reply's copy (wait − server's wake-up to its reply's start)", "handoffs");
  say(`| &nbsp;&nbsp;server's turn over before the client's send returned | ${cols.map((c) => (c.inSend === undefined ? "–" : `${(100 * c.inSend).toFixed(1)} %`)).join(" | ")} |`);
  row("client: read (after its wait's end¹: decode)", "read");
  say(`| echoes traced (unmatched pairs) | ${cols.map((c) => `${c.n} (${c.unmatched})`).join(" | ")} |`, "",
    "¹ A wait that ends spinning ends, in the trace, at the clock read before the batch of tries that found the bytes " +
    "(the trace adds no clock read there): up to one batch (64 loads on shared memory) of the wait shows in the read after it.", "");
}
if (result.cost) {
  say("### What tracing costs per request", "",
    `${rounds} rounds; in each, the 8-byte echo p50 of each client with the trace off, on the client only, on the server only and on both, ` +
    "in an order that rotates from round to round. The added cost of a side is its p50 minus the same round's p50 with the trace off " +
    "(ns, median of the rounds [min–max]; the issue's goal: ≤ 100 ns per side). Shim: spinrpc-bench BM_Echo 8 B adaptive, " +
    "its server started through a wrapper setting SPINRPC_TRACE in all four cases; binding: bench/node/binding_echo.mjs " +
    `(${echoCount} echoes), its \`trace\` option for the client and its \`env\` for the server.`, "",
    "| pair | p50 off, µs | + client traced, ns | + server traced, ns | + both, ns | per round (client / server / both), ns |",
    "| --- | ---: | ---: | ---: | ---: | --- |");
  for (const [who, label] of [["shim", "shim ↔ spinrpc-bench-server"], ["binding", "binding ↔ spinrpc-server"]]) {
    const p50 = (c) => result.cost[who][c].map((x) => x.p50_ns);
    const off = p50("off");
    const delta = (c) => p50(c).map((v, i) => v - off[i]);
    const cell = (xs) => `${f0(median(xs))} [${f0(Math.min(...xs))}–${f0(Math.max(...xs))}]`;
    const per = off.map((_, i) => `${f0(delta("client")[i])} / ${f0(delta("server")[i])} / ${f0(delta("both")[i])}`).join("; ");
    say(`| ${label} | ${f3(median(off))} | ${cell(delta("client"))} | ${cell(delta("server"))} | ${cell(delta("both"))} | ${per} |`);
  }
  say("");
}
say("<!-- trace:end -->");
const section = lines.join("\n") + "\n";
let report = existsSync(values.out) ? readFileSync(values.out, "utf8") : "";
const re = /<!-- trace:begin[\s\S]*?<!-- trace:end -->\n?/;
report = re.test(report) ? report.replace(re, section) : report + (report.endsWith("\n") || !report ? "" : "\n") + section;
writeFileSync(values.out, report);
console.log(`trace_figures: wrote its section of ${values.out}`);
rmSync(scratch, { recursive: true, force: true });
