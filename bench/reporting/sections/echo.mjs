// Echo: back-to-back echoes through the client shim, per size and variant.

import { count, perRound, ratio, secs, sizeName, table, us } from "../format.mjs";
import { SIZES, VARIANTS } from "../run.mjs";

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, floorOf, echoOf, tsgoOf }) {
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
