// Floors: raw pipe ping-pong, blocking and polled.

import { count, perRound, ratio, secs, sizeName, table, us } from "../format.mjs";
import { SIZES } from "../run.mjs";

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, floorOf }) {
  say("## Floors: raw pipe ping-pong", "");
  say("Two processes (this binary and a fork of it), two pipes, C-level read(2)/write(2), no framing, message size equal to the framed echo " +
    "request (`wire_bytes`). Blocking: both ends block in read. Polled: both ends retry a non-blocking read at once, no pause, no yield " +
    "(the 0.78 µs row of docs/SPIN.md#why-spin). A polled floor only holds while each side has a CPU of its own: when the scheduler puts both on one CPU, " +
    "or a message larger than the pipe (64 KiB) leaves the writer blocked behind a spinning reader, a round trip waits for a time slice " +
    "(milliseconds). Its p99 and max say how often that happened.", "");
  const rows = [];
  for (const b of SIZES) {
    for (const read of ["blocking", "polled"]) {
      const g = floorOf(b, read);
      if (!g) continue;
      const s = g.stats;
      rows.push([`${sizeName(b)} (${g.params.wire_bytes} B on the wire), ${read}`, count(s.n), us(s.mean), us(s.p50), us(s.p75), us(s.p99), us(s.max),
        read === "polled" ? ratio(s.p50, floorOf(b, "blocking")?.stats.p50) : "", secs(g.clientCpu), secs(g.serverCpu), secs(g.wall), perRound(g)]);
    }
  }
  say(table(["floor", "n", "mean µs", "p50 µs", "p75 µs", "p99 µs", "max µs", "p50 / blocking", "client CPU s", "echo child CPU s", "wall s", "p50 per round µs"], rows), "");
}
