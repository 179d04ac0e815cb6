// Echo against tsgo behind the same shim.

import { count, paired, perRound, ratio, secs, sizeName, table, us } from "../format.mjs";
import { SIZES, VARIANTS } from "../run.mjs";

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, groups, floorOf, echoOf, tsgoOf }) {
  if ([...groups.values()].some((g) => g.family === "BM_EchoTsgo")) {
    say("## Echo against tsgo (the real server behind the same shim)", "");
    say("tsgo has no spin: only the client shim's side of the variant applies here. `/ shim off, median of round ratios` pairs each " +
      "round with the shim-off round that ran beside it (docs/BENCHMARKING.md#alternation).", "");
    const rows = [];
    for (const b of SIZES) {
      for (const v of VARIANTS) {
        const g = tsgoOf(b, v);
        if (!g) continue;
        const s = g.stats;
        const offGroup = tsgoOf(b, "off");
        const off = offGroup?.stats;
        const sp = echoOf(b, v)?.stats;
        rows.push([`${sizeName(b)}, shim ${v}`, count(s.n), us(s.mean), us(s.p50), us(s.p75), us(s.p99), us(s.max),
          ratio(s.p50, floorOf(b, "blocking")?.stats.p50), v === "off" ? "" : ratio(s.p50, off?.p50), v === "off" ? "" : ratio(s.p75, off?.p75),
          v === "off" ? "" : paired(g, offGroup), v === "off" ? "" : paired(g, offGroup, "roundP75"),
          ratio(sp?.p50, s.p50), ratio(sp?.p75, s.p75), secs(g.clientCpu), secs(g.serverCpu), secs(g.wall), perRound(g)]);
      }
    }
    say(table(["size, shim", "n", "mean µs", "p50 µs", "p75 µs", "p99 µs", "max µs", "p50 / floor blocking", "p50 / shim off", "p75 / shim off",
      "p50 / shim off, median of round ratios", "p75 / shim off, median of round ratios", "spinrpc / tsgo p50", "spinrpc / tsgo p75", "client CPU s", "tsgo CPU s", "wall s", "p50 per round µs"], rows), "");
  }
}
