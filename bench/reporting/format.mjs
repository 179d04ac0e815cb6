// How figures and tables are written in the report.

import { median } from "../harness/stats.mjs";

export const us = (ns) => (!Number.isFinite(ns) ? "–" : ns < 10_000 ? (ns / 1000).toFixed(2) : ns < 1_000_000 ? (ns / 1000).toFixed(1) : Math.round(ns / 1000).toLocaleString("en-US"));
export function ratio(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b <= 0) return "–";
  const r = a / b;
  return `${r >= 100 ? r.toFixed(0) : r >= 0.1 ? r.toFixed(2) : r.toPrecision(2)}×`;
}
export const secs = (s) => (!Number.isFinite(s) ? "–" : s < 0.01 ? s.toFixed(5) : s < 1 ? s.toFixed(4) : s.toFixed(3));
export const count = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "–");
export const sizeName = (b) => (b >= 1048576 ? `${b / 1048576} MiB` : b >= 1024 ? `${b / 1024} KiB` : `${b} B`);
export const perRound = (g) => g.roundP50.map(us).join(", ");
/** The median of a group's per-round p50s (robust to one stalled round). */
export function medianRoundP50(g) {
  return g ? median(g.roundP50) : NaN;
}
/**
 * The median over rounds of a[key][r] / b[key][r]: the two groups ran side
 * by side in each round, so one round on a stalled host moves one ratio, not
 * the figure (docs/BENCHMARKING.md#alternation). `key` is a per-round array of the group
 * (roundP50, roundP75, roundServerCpuPerEcho). NaN when either is missing.
 */
export function pairedRatio(a, b, key = "roundP50") {
  if (!a || !b) return NaN;
  return median(a[key].map((x, r) => x / b[key][r]));
}
/** A pairedRatio as the report writes it ("0.93×"), "–" when unknown. */
export const paired = (a, b, key) => ratio(pairedRatio(a, b, key), 1);

/** A Markdown table; numbers right-aligned unless `text` (all left). */
export function table(cols, rows, text = false) {
  const out = [`| ${cols.join(" | ")} |`, `|${cols.map((_, i) => (i === 0 || text ? " --- " : " ---: ")).join("|")}|`];
  for (const r of rows) out.push(`| ${r.join(" | ")} |`);
  return out.join("\n");
}
