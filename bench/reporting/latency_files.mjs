// spinrpc-bench's raw latency files (bench/harness/measurement.cpp), read by
// the same rules it writes them. The statistics are bench/harness/stats.mjs.

import { readFileSync } from "node:fs";

/** A benchmark's latency file name: the rule of bench/harness/measurement.cpp's latency_file_name. */
export const latencyFile = (name) => name.replace(/[^A-Za-z0-9_.-]/g, "_") + ".i64";

/** int64 ns, native byte order (little endian on every machine we run). */
export function readSamples(path) {
  const b = readFileSync(path);
  const big = new BigInt64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
  const out = new Float64Array(big.length);
  for (let i = 0; i < big.length; i++) out[i] = Number(big[i]);
  return out;
}
