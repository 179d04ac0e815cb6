// Headline: the 8-byte echo against the floors and tsgo.

import { medianRoundP50, ratio, table, us } from "../format.mjs";
import { VARIANTS } from "../run.mjs";

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, rounds, floorOf, echoOf, tsgoOf }) {
  say("## Headline: small echo (8 B)", "");
  const fb = floorOf(8, "blocking");
  const fp = floorOf(8, "polled");
  const off = echoOf(8, "off");
  const rows = [];
  for (const v of VARIANTS) {
    const g = echoOf(8, v);
    if (!g) continue;
    rows.push([`spinrpc-server, ${v}`, us(g.stats.p50), us(g.stats.p75), ratio(g.stats.p50, fb?.stats.p50), ratio(g.stats.p75, fb?.stats.p75),
      ratio(g.stats.p50, fp?.stats.p50), ratio(g.stats.p75, fp?.stats.p75), ratio(g.stats.p50, off?.stats.p50), ratio(g.stats.p75, off?.stats.p75),
      us(medianRoundP50(g)), ratio(medianRoundP50(g), medianRoundP50(off))]);
  }
  for (const v of VARIANTS) {
    const g = tsgoOf(8, v);
    if (!g) continue;
    const toff = tsgoOf(8, "off");
    rows.push([`tsgo, shim ${v}`, us(g.stats.p50), us(g.stats.p75), ratio(g.stats.p50, fb?.stats.p50), ratio(g.stats.p75, fb?.stats.p75),
      ratio(g.stats.p50, fp?.stats.p50), ratio(g.stats.p75, fp?.stats.p75), ratio(g.stats.p50, toff?.stats.p50), ratio(g.stats.p75, toff?.stats.p75),
      us(medianRoundP50(g)), ratio(medianRoundP50(g), medianRoundP50(toff))]);
  }
  for (const [label, g] of [["floor, blocking read", fb], ["floor, polled read", fp]]) {
    if (g) rows.push([label, us(g.stats.p50), us(g.stats.p75), ratio(g.stats.p50, fb?.stats.p50), ratio(g.stats.p75, fb?.stats.p75), ratio(g.stats.p50, fp?.stats.p50), ratio(g.stats.p75, fp?.stats.p75), "", "", us(medianRoundP50(g)), ""]);
  }
  say(table(["", "p50 µs", "p75 µs", "p50 / floor blocking", "p75 / floor blocking", "p50 / floor polled", "p75 / floor polled", "p50 / spin off", "p75 / spin off",
    "median of round p50s µs", "… / spin off"], rows), "");
  say("Spin off for the tsgo rows is the shim with spin off against the same tsgo. The median of the rounds' p50s is there for a shared " +
    `machine: one round that landed on a stalled host moves the pooled p75 (1/${rounds} of the samples with ${rounds} rounds) but not that median.`, "");
}
