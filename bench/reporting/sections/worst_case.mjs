// Worst case: fast requests with a slow one between.

import { count, ratio, secs, table, us } from "../format.mjs";
import { VARIANTS } from "../run.mjs";

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, find }) {
  const off = find("BM_WorstCase", { variant: "off" });
  if (off) {
    say(`## Worst case: ${off.params.fast} fast requests, then one slow one (benchWork ${off.params.slow_busy_us} µs), ${off.params.cycles} times`, "");
    say("The proposal measured server CPU 0.03 s (off) → 0.46 s (fixed) → 0.04 s (adaptive) for this shape. CPU figures are per run " +
      `(summed over the rounds, then divided by ${off.runs.length}); latencies are the fast echoes'.`, "");
    const rows = [];
    const n = (g) => g.runs.length;
    for (const v of VARIANTS) {
      const g = find("BM_WorstCase", { variant: v });
      if (!g) continue;
      rows.push([v, secs(g.serverCpu / n(g)), v === "off" ? "" : ratio(g.serverCpu, off.serverCpu), secs(g.clientCpu / n(g)),
        v === "off" ? "" : ratio(g.clientCpu, off.clientCpu), count(g.sum("srv_spin_misses")), count(g.sum("cli_spin_misses")),
        count(g.sum("cli_suspensions")), us(g.stats.p50), us(g.stats.p75), v === "off" ? "" : ratio(g.stats.p75, off.stats.p75),
        us(g.mean("slow_mean_us") * 1000), secs(g.wall / n(g))]);
    }
    say(table(["variant", "server CPU s per run", "server CPU / spin off", "client CPU s per run", "client CPU / spin off",
      "server spin misses", "client spin misses", "client suspensions", "fast p50 µs", "fast p75 µs", "fast p75 / spin off", "slow mean µs", "wall s per run"], rows), "");
  }
}
