// trace_events.mjs on two hand-made trace files, a client's and its
// server's, shaped as spinrpc writes them (docs/TRACE.md#events): one echo
// whose parts are known, so that the split and the timeline's boxes are
// checked number by number.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { readTraces, splitMedians, splitRoundTrips, timelineBoxes, waitSummary } from "./trace_events.mjs";

// ts and dur in µs, as the files count them.
const X = (pid, cat, name, ts, dur, seq, args = {}) => ({ ph: "X", pid, tid: pid, cat, name, ts, dur, args: { seq, cpu: 0, ...args } });
const meta = (pid, process, thread) => [
  { ph: "M", pid, tid: pid, name: "process_name", args: { name: process } },
  { ph: "M", pid, tid: pid, name: "thread_name", args: { name: thread } },
];
const file = (pid, events) => ({ traceEvents: events, displayTimeUnit: "ns", otherData: { spinrpc: { pid, channels: [{ label: "x" }] } } });

// Client 10: request 1 from 100 to 110 µs: send 100–101, read 101–110 with
// a wait 101–109 (spun 2 µs, then blocked). Server 20: its wait for the
// Request 95–102 (seq 0: the server files a wait under the request before),
// read Request 95–102.5, handler 102.5–105, send Response 105–106.
const CLIENT = file(10, [
  ...meta(10, "spinrpc-replay", "spinrpc client: spinrpc-bench-server"),
  X(10, "request", "echo", 100, 10, 1, { reply: "Response" }),
  X(10, "send", "send Request", 100, 1, 1),
  X(10, "read", "read Response", 101, 9, 1),
  X(10, "wait", "wait", 101, 8, 1, { ended_by: "block", spin_us: 2, tries: 40 }),
  X(10, "wait", "spin", 101, 2, 1),
  X(10, "wait", "block", 103, 6, 1),
]);
const SERVER = file(20, [
  ...meta(20, "spinrpc-bench-server", "spinrpc-bench-server"),
  X(20, "read", "read Request", 95, 7.5, 1),
  X(20, "wait", "wait", 95, 7, 0, { ended_by: "spin", spin_us: 7, tries: 90 }),
  X(20, "wait", "spin", 95, 7, 0),
  X(20, "request", "echo", 102.5, 3.5, 1, { reply: "Response" }),
  X(20, "handler", "handler", 102.5, 2.5, 1, { method: "echo" }),
  X(20, "send", "send Response", 105, 1, 1),
]);

function withFiles(fn) {
  const dir = mkdtempSync(join(tmpdir(), "trace-events-test-"));
  try {
    const paths = [["c.json", CLIENT], ["s.json", SERVER]].map(([name, t]) => {
      writeFileSync(join(dir, name), JSON.stringify(t));
      return join(dir, name);
    });
    return fn(readTraces(paths));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the client comes first and requests are grouped by seq", () => withFiles((procs) => {
  assert.deepEqual(procs.map((p) => [p.pid, p.name, p.client]), [[10, "spinrpc-replay", true], [20, "spinrpc-bench-server", false]]);
  assert.equal(procs[0].requests.get(1).waits.length, 1);
  assert.equal(procs[1].requests.get(1).handler.name, "handler");
}));

test("a round trip splits into its parts, in ns", () => withFiles(([client, server]) => {
  const { rows, unmatched } = splitRoundTrips(client, server, "echo");
  assert.equal(unmatched, 0);
  assert.deepEqual(rows, [{
    rt: 10000, send: 1000, wait: 8000, spin: 2000, block: 6000, bySpin: false, read: 1000,
    // woke at 102, read ended 102.5; reply started 105: 8 µs wait − 3 µs.
    serverRead: 500, handler: 2500, reply: 1000, handoffs: 5000, inSend: false,
  }]);
  assert.deepEqual(splitMedians(rows), { n: 1, ...rows[0], bySpin: 0, inSend: 0 });
  assert.equal(splitRoundTrips(client, null, "echo").rows[0].serverRead, undefined);
}));

test("a server request outside its client request is unmatched", () => withFiles(([client, server]) => {
  server.requests.get(1).handler.end = client.requests.get(1).request.end + 1000;
  assert.deepEqual(splitRoundTrips(client, server, "echo"), { rows: [], unmatched: 1 });
}));

test("the timeline's boxes are in µs from the first request, one lane pair per process", () => withFiles((procs) => {
  const t = timelineBoxes(procs, "echo", 50);
  assert.deepEqual(t.lanes, ["spinrpc-replay (client): work", "spinrpc-replay (client): wait",
    "spinrpc-bench-server (server): work", "spinrpc-bench-server (server): wait"]);
  assert.deepEqual(t.requests, [{ from: 0, to: 10 }]);
  const box = (lane, kind) => t.boxes.filter((b) => b.lane.startsWith(lane) && b.kind === kind).map((b) => [b.from, b.to]);
  assert.deepEqual(box("spinrpc-replay (client): work", "read"), [[9, 10]]);
  assert.deepEqual(box("spinrpc-replay (client): wait", "block"), [[3, 9]]);
  assert.deepEqual(box("spinrpc-bench-server (server): work", "handler"), [[2.5, 5]]);
  assert.deepEqual(box("spinrpc-bench-server (server): work", "reply"), [[5, 6]]);
  assert.deepEqual(waitSummary(procs, t.from, t.to).map((w) => [w.waits, w.bySpin, w.spinUs, w.blockUs]), [[1, 0, 2, 6], [0, 0, 0, 0]]);
}));
