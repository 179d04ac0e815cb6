// Oversubscribed: N pairs at once.

import { count, paired, perRound, ratio, secs, table, us } from "../format.mjs";
import { VARIANTS } from "../run.mjs";

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, bench, find, floorOf }) {
  const one = find("BM_Oversubscribed", { pairs: 1, variant: "off" });
  if (one) {
    say(`## Oversubscribed: N pairs echoing ${one.params.bytes} B at once for ${one.params.ms} ms, on ${bench.context.num_cpus} CPUs`, "");
    say("Each pair is its own client process (forked) and its own spinrpc-server. Latencies of all pairs pooled; CPU summed over the pairs. " +
      "Spin must never be slower than spin off here (docs/SPIN.md#beyond-the-rule, \"Never invert\"). The pooled ratios move with one " +
      "round on a stalled host; the median of the per-round ratios (each round ran both variants, minutes apart at most) does not.", "");
    const rows = [];
    for (let pairs = 1; pairs <= 8; pairs++) {
      for (const v of VARIANTS) {
        const g = find("BM_Oversubscribed", { pairs, variant: v });
        if (!g) continue;
        const s = g.stats;
        const off = find("BM_Oversubscribed", { pairs, variant: "off" })?.stats;
        const n1 = find("BM_Oversubscribed", { pairs: 1, variant: v })?.stats;
        rows.push([`${pairs}, ${v}`, count(s.n), us(s.p50), us(s.p75), us(s.p99), us(s.max), count(g.mean("echoes_per_s")),
          v === "off" ? "" : ratio(s.p50, off?.p50), v === "off" ? "" : ratio(s.p75, off?.p75),
          v === "off" ? "" : paired(g, find("BM_Oversubscribed", { pairs, variant: "off" })), ratio(s.p50, n1?.p50),
          ratio(s.p50, floorOf(8, "blocking")?.stats.p50), secs(g.clientCpu), secs(g.serverCpu), perRound(g)]);
      }
    }
    // One pair against two busy loops (BM_OversubscribedBusy).
    for (const v of VARIANTS) {
      const g = find("BM_OversubscribedBusy", { variant: v });
      if (!g) continue;
      const s = g.stats;
      const off = find("BM_OversubscribedBusy", { variant: "off" })?.stats;
      const n1 = find("BM_Oversubscribed", { pairs: 1, variant: v })?.stats;
      rows.push([`1 + ${g.params.busy_loops} busy loops, ${v}`, count(s.n), us(s.p50), us(s.p75), us(s.p99), us(s.max),
        count(g.mean("echoes_per_s")), v === "off" ? "" : ratio(s.p50, off?.p50), v === "off" ? "" : ratio(s.p75, off?.p75),
        v === "off" ? "" : paired(g, find("BM_OversubscribedBusy", { variant: "off" })), ratio(s.p50, n1?.p50), ratio(s.p50, floorOf(8, "blocking")?.stats.p50), secs(g.clientCpu), secs(g.serverCpu), perRound(g)]);
    }
    say(table(["pairs, variant", "n", "p50 µs", "p75 µs", "p99 µs", "max µs", "echoes/s (all pairs)", "p50 / spin off", "p75 / spin off",
      "p50 / spin off, median of round ratios", "p50 / 1 pair", "p50 / floor blocking", "client CPU s", "server CPU s", "p50 per round µs"], rows), "");
  }
}
