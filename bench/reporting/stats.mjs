// Percentiles and raw latency files, by the same rules as spinrpc-bench
// (bench/harness/latency_stats.cpp, bench/harness/measurement.cpp).

import { readFileSync } from "node:fs";

/** Nearest-rank percentile of an ascending array (as latency_stats.cpp). */
export function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export function summarize(sorted) {
  let sum = 0;
  for (const x of sorted) sum += x;
  return { n: sorted.length, mean: sum / sorted.length, p50: percentile(sorted, 0.5), p75: percentile(sorted, 0.75), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1] };
}

/** A benchmark's latency file name: the rule of measurement.cpp's latency_file_name. */
export const latencyFile = (name) => name.replace(/[^A-Za-z0-9_.-]/g, "_") + ".i64";

/** int64 ns, native byte order (little endian on every machine we run). */
export function readSamples(path) {
  const b = readFileSync(path);
  const big = new BigInt64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
  const out = new Float64Array(big.length);
  for (let i = 0; i < big.length; i++) out[i] = Number(big[i]);
  return out;
}
