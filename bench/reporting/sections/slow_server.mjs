// Slow server: client CPU while the server takes 5 ms.

import { count, ratio, secs, table, us } from "../format.mjs";
import { VARIANTS } from "../run.mjs";

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, find }) {
  const off = find("BM_SlowServer", { variant: "off" });
  if (off) {
    say("## Slow server: every request takes the server 5 ms — the client's CPU is the result", "");
    say("`client spin wall ms` is the time the client's reader spent in its spin loop; it yields the CPU between tries, so on a busy " +
      "machine that time can run far past the 100 µs budget without being CPU time.", "");
    const rows = [];
    for (const v of VARIANTS) {
      const g = find("BM_SlowServer", { variant: v });
      if (!g) continue;
      rows.push([v, secs(g.clientCpu), v === "off" ? "" : ratio(g.clientCpu, off.clientCpu), us((g.clientCpu / g.stats.n) * 1e9),
        count(g.sum("cli_spin_misses")), count(g.sum("cli_suspensions")), Number.isFinite(g.sum("cli_spin_time_us")) ? (g.sum("cli_spin_time_us") / 1e3).toFixed(1) : "–", secs(g.serverCpu),
        us(g.stats.p50), us(g.stats.p75), v === "off" ? "" : ratio(g.stats.p50, off.stats.p50), secs(g.wall)]);
    }
    say(table(["variant", "client CPU s", "client CPU / spin off", "client CPU per request µs", "client spin misses", "client suspensions",
      "client spin wall ms", "server CPU s", "p50 µs", "p75 µs", "p50 / spin off", "wall s"], rows), "");
  }
}
