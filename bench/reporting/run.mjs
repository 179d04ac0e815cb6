// One run of the suite as the report reads it: spinrpc-bench's JSON grouped
// by workload, parameters and variant (every round pooled), plus the
// optional bench/node/echo_latency.mjs result.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { percentile, summarize } from "../harness/stats.mjs";
import { latencyFile, readSamples } from "./latency_files.mjs";

export const VARIANTS = ["off", "fixed", "adaptive"];
export const SIZES = [8, 1024, 65536, 1048576];

/**
 * Reads the run named by `args` (--bench-json, --latency-dir, --node-json).
 * Returns { bench, nodeRun, groups, rounds, find, floorOf, echoOf, tsgoOf }.
 */
export function loadRun(args) {
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
    g.roundP75 = parts.map((p) => percentile(Float64Array.from(p).sort(), 0.75));
    // A counter missing from any round (an older binary) is unknown: NaN, shown as "–".
    const sum = (k) => (g.runs.every((r) => k in r.counters) ? g.runs.reduce((s, r) => s + Number(r.counters[k]), 0) : NaN);
    const mean = (k) => sum(k) / g.runs.length;
    g.sum = sum;
    g.mean = mean;
    g.clientCpu = sum("client_cpu_s");
    // -1 marks a server CPU reading that failed (bench/harness/measurement.h): unknown.
    g.serverCpu = g.runs.some((r) => Number(r.counters.server_cpu_s) < 0) ? NaN : sum("server_cpu_s");
    g.wall = sum("wall_s");
    // Server CPU per echo in each round (ns), for paired per-round ratios.
    g.roundServerCpuPerEcho = g.runs.map((r, i) =>
      Number(r.counters.server_cpu_s) < 0 || !("server_cpu_s" in r.counters) ? NaN : (Number(r.counters.server_cpu_s) * 1e9) / parts[i].length);
  }

  /** The group of `family` whose parameters include all of `want`. */
  function find(family, want) {
    for (const g of groups.values()) {
      if (g.family !== family) continue;
      if (Object.entries(want).every(([k, v]) => g.params[k] === String(v))) return g;
    }
    return null;
  }

  const rounds = Number(bench.context.spinrpc_rounds) || Math.max(0, ...[...groups.values()].map((g) => g.runs.length));

  /** A floor at `bytes`: `kind` "blocking" or "polled" (BM_PipeFloor's read), or "shm" (BM_ShmFloor). */
  const floorOf = (bytes, kind) => (kind === "shm" ? find("BM_ShmFloor", { bytes }) : find("BM_PipeFloor", { bytes, read: kind }));
  const echoOf = (bytes, variant) => find("BM_Echo", { bytes, variant });
  const tsgoOf = (bytes, shim) => find("BM_EchoTsgo", { bytes, shim });
  return { bench, nodeRun, groups, rounds, find, floorOf, echoOf, tsgoOf };
}
