// Interleave: small echoes around large requests.

import { count, paired, perRound, ratio, secs, table, us } from "../format.mjs";
import { VARIANTS } from "../run.mjs";

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, groups, find, floorOf, echoOf }) {
  const any = [...groups.values()].find((g) => g.family === "BM_Interleave");
  if (any) {
    say("## Interleave: 30 small echoes, then one large request", "");
    say(`Only the ${any.params.small_bytes}-byte echoes are reported. \`/ back-to-back\` divides by the same variant's back-to-back ` +
      "8 B echo: above 1 means the large request's long server turn made the next small requests slower (+70% on a C6 host without " +
      "spinning, in the proposal). `1st after large` is the first small echo after each large request alone (the mean over rounds " +
      "of each round's percentile): the one a long server turn hits hardest. `median of round ratios` pairs each round with the " +
      "back-to-back echo of the same variant and round (docs/BENCHMARKING.md#alternation).", "");
    const rows = [];
    for (const large of ["echo1MiB", "busy200us"]) {
      for (const v of VARIANTS) {
        const g = find("BM_Interleave", { large, variant: v });
        if (!g) continue;
        const s = g.stats;
        const off = find("BM_Interleave", { large, variant: "off" })?.stats;
        const b2bGroup = echoOf(8, v);
        const b2b = b2bGroup?.stats;
        rows.push([`${large === "echo1MiB" ? "1 MiB echo" : "benchWork 200 µs"}, ${v}`, count(s.n), us(s.mean), us(s.p50), us(s.p75), us(s.p99), us(s.max),
          ratio(s.p50, b2b?.p50), ratio(s.p75, b2b?.p75), paired(g, b2bGroup), paired(g, b2bGroup, "roundP75"), ratio(s.p50, floorOf(8, "blocking")?.stats.p50),
          v === "off" ? "" : ratio(s.p50, off?.p50), v === "off" ? "" : ratio(s.p75, off?.p75),
          us(g.mean("first_p50_us") * 1000), us(g.mean("first_p75_us") * 1000), ratio(g.mean("first_p75_us") * 1000, b2b?.p75),
          us(g.mean("large_mean_us") * 1000), secs(g.clientCpu), secs(g.serverCpu), perRound(g)]);
      }
    }
    say(table(["large request, variant", "n", "mean µs", "p50 µs", "p75 µs", "p99 µs", "max µs", "p50 / back-to-back", "p75 / back-to-back",
      "p50 / back-to-back, median of round ratios", "p75 / back-to-back, median of round ratios", "p50 / floor blocking", "p50 / spin off", "p75 / spin off", "1st after large p50 µs", "1st after large p75 µs", "1st after large p75 / back-to-back",
      "large request mean µs", "client CPU s", "server CPU s", "p50 per round µs"], rows), "");
  }
}
