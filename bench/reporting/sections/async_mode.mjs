// --async: the real async client against both servers
// (bench/node/async_echo.mjs) and the decode path's throughput
// (spinrpc-json-bench and spinrpc-json-bench-native, docs/ASYNC.md "Parsing").

import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

import { median } from "../../harness/stats.mjs";
import { ratio, table, us } from "../format.mjs";

const ms = (s) => (Number.isFinite(s) ? (s * 1e3).toFixed(2) : "–");

/** spinrpc-json-bench's per-run JSON files: { build: [rounds…], native: [rounds…] } and the kernels. */
function loadJsonBench(dir) {
  if (!dir || !existsSync(dir)) return null;
  const runs = { build: [], native: [] };
  const kernels = {};
  for (const f of readdirSync(dir).filter((x) => x.endsWith(".json")).sort()) {
    const build = f.startsWith("native") ? "native" : "build";
    const j = JSON.parse(readFileSync(join(dir, f), "utf8"));
    kernels[build] = `On-Demand ${j.ondemand_kernel}, DOM ${j.dom_kernel}`;
    runs[build].push(...j.rounds.map((r) => ({ ...r, body: j.body_bytes })));
  }
  return runs.build.length ? { runs, kernels } : null;
}

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, args }) {
  const asyncRun = args.asyncJson && existsSync(args.asyncJson) ? JSON.parse(readFileSync(args.asyncJson, "utf8")) : null;
  const jb = loadJsonBench(args.jsonBenchDir);
  if (!asyncRun && !jb) return;
  say("## Async mode: the real async client (bench/node/async_echo.mjs, spinrpc-json-bench)", "");
  let decodeMsPerMiB = NaN;
  if (jb) {
    const rows = [];
    for (const build of ["build", "native"]) {
      for (const variant of ["decode", "ondemand walk", "dom walk"]) {
        const rs = jb.runs[build].filter((r) => r.variant === variant);
        if (!rs.length) continue;
        rows.push([`${variant} (${build === "build" ? "as built" : "-march=native"})`, median(rs.map((r) => r.mbps)).toFixed(0), rs.map((r) => r.mbps.toFixed(0)).join(", ")]);
      }
    }
    const decode = jb.runs.build.filter((r) => r.variant === "decode");
    decodeMsPerMiB = 1048576 / (median(decode.map((r) => r.mbps)) * 1e6) * 1e3;
    say(`Parsing one ${(jb.runs.build[0].body / 1048576).toFixed(2)} MiB JSON-RPC echo body (JSON.stringify form), MB/s of the thread's CPU time, ` +
      `runs of the two builds alternating (as built: ${jb.kernels.build}; native: ${jb.kernels.native ?? "–"}). ` +
      "`decode` is the server's path (tsgo's strict rules, output form); the walks touch every value and are the floor.", "");
    say(table(["variant", "median MB/s", "per round MB/s"], rows), "");
  }
  if (asyncRun) {
    const [ours, theirs] = asyncRun.variants;
    const o = asyncRun.options;
    say(`${asyncRun.client}; ${o.rounds} rounds, each spawning every variant once per workload, order rotating; ${o.warmup} warm-up echoes per process. ` +
      `Load average at the end: ${asyncRun.loadavg}.`, "");
    const rows = asyncRun.variants.map((v) => [v.name, us(v.p50_ns), us(v.p75_ns), us(v.p99_ns), v.round_p50_ns.map(us).join(", "),
      Math.round(v.burst_rps_median).toLocaleString("en-US"), v.burst.map((b) => Math.round(b.rps)).join(", "),
      ms(v.burst_cpu_per_1000_median_s), v.burst.map((b) => ms(b.cpuPer1000)).join(", "), ms(v.big_cpu_per_echo_median_s)]);
    say(table(["server", "sequential p50 µs", "p75 µs", "p99 µs", "p50 per round µs", `${o.inflight} in flight: req/s (median)`, "req/s per round",
      "server CPU ms per 1000 (median)", "per round", `server CPU ms per ${(o.big_bytes / 1048576).toFixed(2)} MiB echo`], rows), "");
    say(`spinrpc-server / tsgo: sequential p50 ${ratio(ours.p50_ns, theirs.p50_ns)}, p75 ${ratio(ours.p75_ns, theirs.p75_ns)}; ` +
      `${o.inflight} in flight: throughput ${ratio(ours.burst_rps_median, theirs.burst_rps_median)}, server CPU per 1000 requests ` +
      `${ratio(ours.burst_cpu_per_1000_median_s, theirs.burst_cpu_per_1000_median_s)}.`, "");
    if (Number.isFinite(decodeMsPerMiB) && Number.isFinite(ours.big_cpu_per_echo_median_s)) {
      const decodeMs = decodeMsPerMiB * o.big_bytes / 1048576;
      say(`The decode path's share of spinrpc-server's CPU for one ${(o.big_bytes / 1048576).toFixed(2)} MiB echo: ${decodeMs.toFixed(2)} ms ` +
        `(spinrpc-json-bench's decode rate) of ${ms(ours.big_cpu_per_echo_median_s)} ms measured, ${(100 * decodeMs / (ours.big_cpu_per_echo_median_s * 1e3)).toFixed(0)} %. ` +
        "The echoed params are a view of the body (JSON.stringify form), so the rest is reading and writing the bytes.", "");
    }
  }
}
