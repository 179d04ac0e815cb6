// A client that blocks in read (the shim with spin 0) against spinrpc-server
// at its defaults and against tsgo: placement's case (docs/PLACEMENT.md).

import { count, pairedRatio, perRound, secs, table, us } from "../format.mjs";

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, find }) {
  const sp = find("BM_BlockingClient", { server: "spinrpc" });
  const ts = find("BM_BlockingClient", { server: "tsgo" });
  if (!sp || !ts) return;
  say("## A blocking client: the shim with spin 0 against spinrpc-server at its defaults and against tsgo", "");
  say("The client blocks in read(2) like the real TypeScript client; only placement (on by default in spinrpc-server, " +
    "docs/PLACEMENT.md) can get its wake-up onto the server's CPU. The two servers alternate within each round. " +
    "The ratios are medians of the per-round paired ratios; `worst round` is the slowest round's p50.", "");
  const paired = (key) => pairedRatio(sp, ts, key);
  const per1000 = (g) => (g.serverCpu * 1e6) / g.stats.n;
  const rows = [sp, ts].map((g) => [g === sp ? "spinrpc-server (defaults)" : "tsgo", count(g.stats.n), us(g.stats.p50), us(g.stats.p75),
    us(g.stats.p99), us(Math.max(...g.roundP50)), secs(g.serverCpu), per1000(g).toFixed(2),
    g === sp ? String(g.sum("srv_placement_changes")) : "", perRound(g)]);
  say(table(["server", "n", "p50 µs", "p75 µs", "p99 µs", "worst round p50 µs", "server CPU s", "server CPU ms / 1000 echoes",
    "placement changes", "p50 per round µs"], rows), "");
  say(`spinrpc / tsgo, median of per-round ratios: p50 ${paired("roundP50").toFixed(2)}×, p75 ${paired("roundP75").toFixed(2)}×, ` +
    `server CPU per echo ${paired("roundServerCpuPerEcho").toFixed(2)}×.`, "");
}
