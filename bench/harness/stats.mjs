// The benchmarks' statistics in JavaScript, by the same definitions as
// latency_stats.h in C++ (docs/BENCHMARKING.md, "Distributions"). Every
// script under bench/ takes its percentiles and medians from here.
//
// percentile: nearest rank, the smallest sample with at least q of the
//   samples at or below it. A percentile is always a measured sample, and
//   p50 of latencies is computed the same way in spinrpc-bench, the Node
//   scripts and the report, so pooled figures stay comparable.
// median: of a handful of figures (per-round p50s, per-round ratios, spawn
//   times), the middle value, or the mean of the two middle values for an
//   even count. That is the definition of the report's headline figures
//   (the median of the per-round p50s, the median of paired ratios); with an
//   odd number of rounds it is the middle round's figure itself.

/** Nearest-rank percentile of an ascending array, q in [0, 1]; NaN when empty. */
export function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** The median of the finite numbers of `xs` (mean of the two middle ones for an even count); NaN when there are none. */
export function median(xs) {
  const s = Array.from(xs).filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Count, mean, p50, p75, p99 and max of an ascending array (as latency_stats.cpp's summarize). */
export function summarize(sorted) {
  let sum = 0;
  for (const x of sorted) sum += x;
  return { n: sorted.length, mean: sum / sorted.length, p50: percentile(sorted, 0.5), p75: percentile(sorted, 0.75), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1] };
}
