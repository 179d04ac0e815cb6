// Sparse: server CPU with one request every 10 ms.

import { count, ratio, secs, table, us } from "../format.mjs";
import { VARIANTS } from "../run.mjs";

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, find }) {
  const off = find("BM_Sparse", { variant: "off" });
  if (off) {
    say("## Sparse: one request every 10 ms — the server's CPU is the result", "");
    say(`Server CPU over the loop, idle gaps included (${count(off.stats.n)} requests per variant over all rounds). A fixed budget spins on every gap; the adaptive rule should stop after three long waits.`, "");
    const rows = [];
    for (const v of VARIANTS) {
      const g = find("BM_Sparse", { variant: v });
      if (!g) continue;
      rows.push([v, secs(g.serverCpu), v === "off" ? "" : ratio(g.serverCpu, off.serverCpu), us((g.serverCpu / g.stats.n) * 1e9),
        count(g.sum("srv_spin_misses")), count(g.sum("srv_suspensions")), secs(g.clientCpu), us(g.stats.p50), us(g.stats.p75), us(g.stats.p99),
        v === "off" ? "" : ratio(g.stats.p50, off.stats.p50), secs(g.wall)]);
    }
    say(table(["variant", "server CPU s", "server CPU / spin off", "server CPU per request µs", "server spin misses", "server suspensions",
      "client CPU s", "p50 µs", "p75 µs", "p99 µs", "p50 / spin off", "wall s"], rows), "");
  }
}
