// Floors: raw pipe ping-pong, blocking and polled, and shared-memory ping-pong.

import { count, perRound, ratio, secs, sizeName, table, us } from "../format.mjs";
import { SIZES } from "../run.mjs";

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, floorOf }) {
  say("## Floors: raw pipe and shared-memory ping-pong", "");
  say("Two processes (this binary and a fork of it), two pipes, C-level read(2)/write(2), no framing, message size equal to the framed echo " +
    "request (`wire_bytes`). Blocking: both ends block in read. Polled: both ends retry a non-blocking read at once, no pause, no yield " +
    "(the 0.78 µs row of docs/SPIN.md#why-spin). A polled floor only holds while each side has a CPU of its own: when the scheduler puts both on one CPU, " +
    "or a message larger than the pipe (64 KiB) leaves the writer blocked behind a spinning reader, a round trip waits for a time slice " +
    "(milliseconds). Its p99 and max say how often that happened. Shm: the same two processes share a sealed memfd and no system call runs " +
    "on either side: the message is copied into a slot, a sequence number published (release store) and spun on (acquire loads, a pause " +
    "between tries) on the other side, then the message copied out; what is left is a cache line crossing between cores each way, the " +
    "limit for two spinrpc ends (bench/peers/shm_floor.h). It holds, like the polled floor, only while each side has a CPU of its own.", "");
  const rows = [];
  for (const b of SIZES) {
    for (const kind of ["blocking", "polled", "shm"]) {
      const g = floorOf(b, kind);
      if (!g) continue;
      const s = g.stats;
      rows.push([`${sizeName(b)} (${g.params.wire_bytes} B on the wire), ${kind}`, count(s.n), us(s.mean), us(s.p50), us(s.p75), us(s.p99), us(s.max),
        kind === "blocking" ? "" : ratio(s.p50, floorOf(b, "blocking")?.stats.p50), secs(g.clientCpu), secs(g.serverCpu), secs(g.wall), perRound(g)]);
    }
  }
  say(table(["floor", "n", "mean µs", "p50 µs", "p75 µs", "p99 µs", "max µs", "p50 / blocking", "client CPU s", "echo child CPU s", "wall s", "p50 per round µs"], rows), "");
}
