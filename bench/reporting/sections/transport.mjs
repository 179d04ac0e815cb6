// Transport: stdio, Unix socket and FIFOs.

import { count, perRound, ratio, secs, table, us } from "../format.mjs";
import { VARIANTS } from "../run.mjs";

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, groups, find, floorOf }) {
  const TRANSPORTS = ["stdio", "socket", "fifo"];
  const transportOf = (transport, variant) => find("BM_Transport", { transport, variant });
  const any = [...groups.values()].find((g) => g.family === "BM_Transport");
  if (any) {
    say(`## Transport: ${any.params.bytes}-byte echoes over stdio, a Unix socket and two FIFOs`, "");
    say("The same back-to-back echo through the client shim over each of spinrpc-server's transports: `stdio` (spawned behind the shim " +
      "on two pipes, as in the echo table), `socket` (`--pipe PATH`, `SyncRpcChannel::connect(Endpoint::pipe)`) and `fifo` (`--fifo-in`/`--fifo-out`, " +
      "`connect(Endpoint::fifos)`); for the last two the benchmark spawns the server itself with its endpoint in a fresh temp dir, and fails unless the " +
      "server exits 0 and removes its files when the channel closes. `/ stdio off` divides by the stdio cell with spin off; `/ stdio` by stdio " +
      "under the same variant (the transport's own cost).", "");
    say("`aux threads` are the server's threads besides the main one (the Boost.Asio signal watcher; with `--pipe` also the acceptor that " +
      "turns further clients away). `aux-thread runs` counts how many times they were put on a CPU during the timed loops " +
      "(/proc/PID/task/TID/schedstat, third field, summed over the rounds): it should be about 0, which is the evidence that these " +
      "threads add no wake-up to the round trip. `main-thread runs` is the same count for the thread that serves the requests, for scale " +
      "and as a check that the count sees wake-ups at all (about one per request when its reads block).", "");
    // A thread counter of one group: summed over the rounds; -1 in any round (unreadable /proc) or a missing counter: unknown.
    const threadSum = (g, k) => (g.runs.some((r) => !(k in r.counters) || Number(r.counters[k]) < 0) ? NaN : g.sum(k));
    const threadRange = (g, k) => {
      const xs = g.runs.map((r) => Number(r.counters[k]));
      if (xs.some((x) => !Number.isFinite(x) || x < 0)) return "–";
      const lo = Math.min(...xs), hi = Math.max(...xs);
      return lo === hi ? String(lo) : `${lo}–${hi}`;
    };
    const fb = floorOf(8, "blocking")?.stats;
    const base = transportOf("stdio", "off")?.stats;
    const rows = [];
    for (const t of TRANSPORTS) {
      for (const v of VARIANTS) {
        const g = transportOf(t, v);
        if (!g) continue;
        const s = g.stats;
        const same = transportOf("stdio", v)?.stats;
        rows.push([`${t}, ${v}`, count(s.n), us(s.mean), us(s.p50), us(s.p75), us(s.p99), us(s.max),
          ratio(s.p50, base?.p50), ratio(s.p75, base?.p75), t === "stdio" ? "" : ratio(s.p50, same?.p50), t === "stdio" ? "" : ratio(s.p75, same?.p75),
          ratio(s.p50, fb?.p50), ratio(s.p75, fb?.p75), secs(g.clientCpu), secs(g.serverCpu),
          threadRange(g, "srv_aux_threads"), count(threadSum(g, "srv_aux_thread_runs")), count(threadSum(g, "srv_main_thread_runs")), perRound(g)]);
      }
    }
    say(table(["transport, variant", "n", "mean µs", "p50 µs", "p75 µs", "p99 µs", "max µs", "p50 / stdio off", "p75 / stdio off",
      "p50 / stdio", "p75 / stdio", "p50 / floor blocking", "p75 / floor blocking", "client CPU s", "server CPU s",
      "aux threads", "aux-thread runs", "main-thread runs", "p50 per round µs"], rows), "");
  }
}
