// The interop suite's one checker of spinrpc's trace files (SPINRPC_TRACE,
// the binding's `trace` option): the Chrome trace-event format's rules and
// the names and fields the trace documents, the same rules as
// tests/trace/trace_rules.cpp applies to the C++ side. Not a test file
// itself (node --test only picks up *.test.mjs here).
//
//   const trace = loadTrace(path);          // throws AssertionError on a broken rule
//   checkClientRequests(trace, pid);         // seq -> method, every request whole
//   checkServerRequests(trace, pid);

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

/** Slack for µs values parsed as doubles (the files hold exact ns). */
export const SLACK_US = 0.001;

const FRAME_TYPES = new Set(["Request", "Response", "Error", "Call", "CallResponse", "CallError"]);
const WAIT_WHYS = new Set(["the bytes came while spinning", "spin budget spent", "CPU contended (a late yield)",
  "spin budget 0", "adaptive rule: spinning suspended", "placement: one blocking read"]);
const INSTANT_PREFIXES = ["adaptive: spinning suspended", "adaptive: spinning resumed", "CPU contended: spin ended",
  "placement: ", "transport: moved to shared memory", "transport: stays on descriptors"];

const isCount = (v) => Number.isInteger(v) && v >= 0;

/** Spans with the same ts and dur: the enclosing kind first (a wait before its spin child). */
function depthRank(e) {
  return { request: 0, call: 1, handler: 2, send: 3, read: 3 }[e.cat] ?? (e.name === "wait" ? 4 : 5);
}

function checkDocumented(e, where) {
  const a = e.args;
  if (e.ph === "i") {
    assert.ok(INSTANT_PREFIXES.some((p) => e.name.startsWith(p)), `${where}: an instant named ${e.name}`);
    return;
  }
  switch (e.cat) {
    case "wait":
      if (e.name === "wait") {
        assert.ok(a.ended_by === "spin" || a.ended_by === "block", where);
        assert.ok(WAIT_WHYS.has(a.why), where);
        assert.ok(typeof a.spin_us === "number" && a.spin_us >= 0, where);
        assert.ok(isCount(a.tries), where);
      } else if (e.name === "spin") {
        assert.ok(isCount(a.tries), where);
      } else {
        assert.equal(e.name, "block", where);
      }
      return;
    case "send":
    case "read":
      assert.ok(e.name.startsWith(`${e.cat} `) && FRAME_TYPES.has(e.name.slice(e.cat.length + 1)), where);
      assert.ok(isCount(a.bytes), where);
      return;
    case "request":
      assert.ok(e.name.length > 0, `${where}: a request span without its method`);
      assert.ok(a.reply === "Response" || a.reply === "Error", where);
      assert.ok(isCount(a.bytes_out) && isCount(a.bytes_in), where);
      return;
    case "handler": {
      assert.ok(e.name === "handler" || e.name === "callback", where);
      const key = e.name === "callback" ? "callback" : "method";
      assert.ok(typeof a[key] === "string" && a[key].length > 0, where);
      return;
    }
    case "call":
      assert.ok(e.name.startsWith("call ") && e.name.length > 5, where);
      assert.ok(a.reply === "CallResponse" || a.reply === "CallError", where);
      return;
    default:
      assert.fail(`${where}: an undocumented cat ${e.cat}`);
  }
}

/**
 * Checks a parsed trace document (`what` names it in failures) and returns
 * { doc, events, spinrpc, spansOf(pid, seq), only(spans, name), requestSeqs(pid), parentOf(e) }.
 * The rules: an object with a traceEvents array, displayTimeUnit "ns" and
 * otherData.spinrpc (a merged file: otherData.spinrpc.merged); each event
 * ph X, i or M with integer pid and tid and a name; X and i a numeric
 * ts >= 0, a cat, args with integer seq and cpu; X a numeric dur >= 0; i
 * s "t", cat "decision", integer args.value; M process_name or thread_name
 * with a string args.name; the documented names, cats and args; and per
 * (pid, tid) the X spans nest (by ts, the longer first: each lies within
 * the smallest open span containing its start, or starts at or after its end).
 */
export function checkTrace(doc, what) {
  assert.ok(doc !== null && typeof doc === "object" && !Array.isArray(doc), `${what}: not a JSON object`);
  assert.ok(Array.isArray(doc.traceEvents), `${what}: no traceEvents array`);
  assert.equal(doc.displayTimeUnit, "ns", what);
  const spinrpc = doc.otherData?.spinrpc;
  assert.ok(spinrpc && typeof spinrpc === "object", `${what}: no otherData.spinrpc`);
  if (!("merged" in spinrpc)) {
    assert.equal(spinrpc.clock, "CLOCK_MONOTONIC", what);
    assert.ok(isCount(spinrpc.pid), what);
    assert.equal(typeof spinrpc.cut, "boolean", what);
    assert.ok(Array.isArray(spinrpc.channels), what);
    for (const c of spinrpc.channels) {
      assert.equal(typeof c.label, "string", what);
      for (const key of ["tid", "requests_begun", "requests_written", "max_requests"]) assert.ok(isCount(c[key]), `${what}: channels[].${key}`);
    }
  }
  const events = doc.traceEvents.map((raw, i) => {
    const where = `${what}: traceEvents[${i}] ${JSON.stringify(raw).slice(0, 300)}`;
    assert.ok(raw && typeof raw === "object", where);
    assert.ok(["X", "i", "M"].includes(raw.ph), where);
    assert.ok(Number.isInteger(raw.pid) && Number.isInteger(raw.tid), where);
    assert.equal(typeof raw.name, "string", where);
    assert.ok(raw.args && typeof raw.args === "object", where);
    const e = { ph: raw.ph, name: raw.name, cat: raw.cat ?? "", pid: raw.pid, tid: raw.tid, args: raw.args, ts: 0, dur: 0, seq: -1, parent: null };
    if (raw.ph === "M") {
      assert.ok(raw.name === "process_name" || raw.name === "thread_name", where);
      assert.equal(typeof raw.args.name, "string", where);
      return e;
    }
    assert.ok(typeof raw.ts === "number" && raw.ts >= 0, where);
    assert.equal(typeof raw.cat, "string", where);
    assert.ok(isCount(raw.args.seq), where);
    assert.ok(Number.isInteger(raw.args.cpu), where);
    e.ts = raw.ts;
    e.seq = raw.args.seq;
    if (raw.ph === "X") {
      assert.ok(typeof raw.dur === "number" && raw.dur >= 0, where);
      e.dur = raw.dur;
    } else {
      assert.equal(raw.s, "t", where);
      assert.equal(raw.cat, "decision", where);
      assert.ok(Number.isInteger(raw.args.value), where);
    }
    checkDocumented(e, where);
    return e;
  });
  const end = (e) => e.ts + e.dur;
  const rows = new Map();
  for (const e of events) {
    if (e.ph !== "X") continue;
    const key = `${e.pid}/${e.tid}`;
    if (!rows.has(key)) rows.set(key, []);
    rows.get(key).push(e);
  }
  for (const row of rows.values()) {
    row.sort((a, b) => a.ts - b.ts || b.dur - a.dur || depthRank(a) - depthRank(b));
    const open = [];
    for (const e of row) {
      while (open.length > 0) {
        const top = open[open.length - 1];
        if (e.ts >= top.ts - SLACK_US && end(e) <= end(top) + SLACK_US) break;
        assert.ok(e.ts >= end(top) - SLACK_US,
          `${what}: "${e.name}" (seq ${e.seq}, ts ${e.ts}, dur ${e.dur}) overlaps "${top.name}" (seq ${top.seq}, ts ${top.ts}, dur ${top.dur}) without nesting in it`);
        open.pop();
      }
      e.parent = open.length > 0 ? open[open.length - 1] : null;
      open.push(e);
    }
  }
  return {
    doc,
    events,
    spinrpc,
    spansOf: (pid, seq) => events.filter((e) => e.ph === "X" && e.pid === pid && e.seq === seq),
    only(spans, name) {
      const found = spans.filter((e) => e.name === name);
      assert.equal(found.length, 1, `expected one span named "${name}", found ${found.length}`);
      return found[0];
    },
    requestSeqs: (pid) => events.filter((e) => e.ph === "X" && e.pid === pid && e.cat === "request" && e.seq > 0)
      .map((e) => e.seq).sort((a, b) => a - b),
    parentOf: (e) => e.parent,
  };
}

/** Reads and checks the trace file at `path` (checkTrace). */
export function loadTrace(path) {
  let doc;
  try {
    doc = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    assert.fail(`${path}: ${e.message}`);
  }
  return checkTrace(doc, path);
}

const descendsFrom = (e, ancestor) => {
  for (let p = e; p; p = p.parent) if (p === ancestor) return true;
  return false;
};

/**
 * Every request the client `pid` wrote in `trace`, whole: the request span
 * at the top, its send Request first, its reply's read (a wait inside) last,
 * every span of its seq inside it; a "call <name>" with its callback and its
 * answer's send inside. Returns a Map seq -> method.
 */
export function checkClientRequests(trace, pid) {
  const methods = new Map();
  for (const seq of trace.requestSeqs(pid)) {
    const what = `client seq ${seq}`;
    const spans = trace.spansOf(pid, seq);
    const request = spans.find((e) => e.cat === "request");
    methods.set(seq, request.name);
    assert.equal(request.parent, null, what);
    const send = trace.only(spans, "send Request");
    const read = trace.only(spans, `read ${request.args.reply}`);
    assert.equal(send.parent, request, what);
    assert.equal(read.parent, request, what);
    assert.equal(send.ts, request.ts, `${what}: the request begins with its send`);
    assert.ok(send.ts + send.dur <= read.ts + SLACK_US, `${what}: the send, then the read`);
    // Both frames carry the method's name: the same count of bytes beside
    // the payloads the request counts.
    const nameBytes = send.args.bytes - request.args.bytes_out;
    assert.ok(nameBytes >= 0, what);
    assert.equal(read.args.bytes - request.args.bytes_in, nameBytes, what);
    assert.ok(spans.some((e) => e.name === "wait" && e.parent === read), `${what}: a wait in the reply's read`);
    for (const e of spans) {
      assert.ok(descendsFrom(e, request), `${what}: ${e.name} outside its request`);
      if (e.cat !== "call") continue;
      assert.equal(e.parent, request, what);
      // Its callback (none for a name not registered: a CallError at once)
      // and its answer's send.
      const children = spans.filter((c) => c.parent === e).map((c) => c.name).sort();
      const expected = children.includes("callback") || e.args.reply === "CallResponse"
        ? ["callback", `send ${e.args.reply}`] : [`send ${e.args.reply}`];
      assert.deepEqual(children, expected.sort(), `${what}: ${e.name}`);
      const callback = spans.find((c) => c.parent === e && c.name === "callback");
      if (callback) assert.equal(callback.args.callback, e.name.slice(5), what);
    }
  }
  return methods;
}

/**
 * Every request the server `pid` wrote in `trace`, whole: its read Request,
 * then the request span with the handler and the reply's send inside; every
 * span of its seq inside one of those two (but the last request's wait for
 * a next frame, after it). Returns a Map seq -> method.
 */
export function checkServerRequests(trace, pid) {
  const methods = new Map();
  const seqs = trace.requestSeqs(pid);
  for (const seq of seqs) {
    const what = `server seq ${seq}`;
    const spans = trace.spansOf(pid, seq);
    const request = spans.find((e) => e.cat === "request");
    methods.set(seq, request.name);
    const read = trace.only(spans, "read Request");
    const send = trace.only(spans, `send ${request.args.reply}`);
    assert.equal(request.parent, null, what);
    assert.equal(read.parent, null, what);
    assert.ok(read.ts + read.dur <= request.ts + SLACK_US, `${what}: the read, then the request`);
    assert.equal(send.parent, request, what);
    const nameBytes = read.args.bytes - request.args.bytes_out;
    assert.ok(nameBytes >= 0, what);
    assert.equal(send.args.bytes - request.args.bytes_in, nameBytes, what);
    // Its handler (batchRequests: one per item, each named for its item's
    // method), before the reply.
    const handlers = spans.filter((e) => e.name === "handler");
    if (request.name === "batchRequests") assert.ok(handlers.length > 0, what);
    else assert.equal(handlers.length, 1, what);
    for (const handler of handlers) {
      assert.equal(handler.parent, request, what);
      if (request.name !== "batchRequests") assert.equal(handler.args.method, request.name, what);
      assert.ok(handler.ts + handler.dur <= send.ts + SLACK_US, `${what}: the handler, then the reply`);
    }
    for (const e of spans) {
      // Only the last request is followed by a wait of its own, the one
      // that saw the end of input, after it.
      const lastWait = e.cat === "wait" && seq === seqs.at(-1) && e.ts >= request.ts + request.dur - SLACK_US;
      assert.ok(descendsFrom(e, read) || descendsFrom(e, request) || lastWait, `${what}: ${e.name} at ${e.ts} outside its read and its request`);
      if (e.cat === "call") assert.ok(handlers.includes(e.parent), `${what}: ${e.name} inside a handler`);
    }
  }
  return methods;
}
