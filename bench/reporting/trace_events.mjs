// spinrpc's trace files (docs/TRACE.md) as the bench reads them: each
// process's spans grouped by request, the split of every round trip into
// its parts, and the boxes of a timeline (bench/harness/trace_figures.mjs).
//
// Files are merged with the merge tool's own mergeTraces (node/trace-merge.mjs),
// then read event by event; times become ns (the files count µs with three
// decimals). Requests are matched across the two processes by seq: the
// client begins a request as it writes a Request, the server as it reads
// one, so over one channel the two counters go together. A pair whose
// server request does not lie inside its client request is counted, not
// used (`unmatched`).

import { readFileSync } from "node:fs";

import { mergeTraces } from "../../node/trace-merge.mjs";
import { percentile } from "../harness/stats.mjs";

const ns = (us) => Math.round(us * 1000);

/**
 * The processes of the trace files `paths` (one per process, or merged):
 * [{ pid, name, client, spans, instants, requests }], clients first.
 * `client` is true for a process whose thread is a spinrpc client ring
 * ("spinrpc client: <exe>"). `spans` are { cat, name, start, end, seq, args }
 * in ns, sorted by start; `requests` maps seq to { request, sends, reads,
 * waits, handler } of that seq (waits: the "wait" spans, not their spin and
 * block children).
 */
export function readTraces(paths) {
  const merged = mergeTraces(paths.map((name) => ({ name, trace: JSON.parse(readFileSync(name, "utf8")) })));
  const byPid = new Map();
  const proc = (pid) => {
    if (!byPid.has(pid)) byPid.set(pid, { pid, name: "", client: false, spans: [], instants: [], requests: new Map() });
    return byPid.get(pid);
  };
  for (const e of merged.traceEvents) {
    const p = proc(e.pid);
    if (e.ph === "M") {
      if (e.name === "process_name") p.name = e.args.name;
      if (e.name === "thread_name" && e.args.name.startsWith("spinrpc client:")) p.client = true;
    } else if (e.ph === "X") {
      p.spans.push({ cat: e.cat, name: e.name, start: ns(e.ts), end: ns(e.ts) + ns(e.dur), seq: e.args.seq, args: e.args });
    } else if (e.ph === "i") {
      p.instants.push({ name: e.name, at: ns(e.ts), seq: e.args.seq });
    }
  }
  // Two channels of one thread share its track and their seq counters
  // overlap: a file with more than one cannot be split by request here.
  for (const f of merged.otherData.spinrpc.merged) {
    if ((f.channels?.length ?? 0) > 1) {
      throw new Error(`${f.file}: ${f.channels.length} channels in one process; the trace figures want one channel per process`);
    }
  }
  for (const p of byPid.values()) {
    p.spans.sort((a, b) => a.start - b.start || b.end - a.end);
    for (const s of p.spans) {
      if (!p.requests.has(s.seq)) p.requests.set(s.seq, { request: null, sends: [], reads: [], waits: [], handler: null });
      const r = p.requests.get(s.seq);
      if (s.cat === "request") r.request = s;
      else if (s.cat === "send") r.sends.push(s);
      else if (s.cat === "read") r.reads.push(s);
      else if (s.cat === "wait" && s.name === "wait") r.waits.push(s);
      else if (s.cat === "handler" && s.name === "handler") r.handler = s;
    }
  }
  return [...byPid.values()].sort((a, b) => Number(b.client) - Number(a.client));
}

/** The "wait" spans of `proc` that end inside [from, to] (a read's own waits, whatever their seq). */
function waitsWithin(proc, from, to) {
  return proc.spans.filter((s) => s.cat === "wait" && s.name === "wait" && s.end >= from && s.end <= to && s.start >= from - 1);
}

/**
 * Each round trip of `method` that `client` traced, split into its parts
 * (ns): rt the client's request span; send (its Request's send); wait (its
 * waits for the reply, all), spin and block (their two phases), bySpin (the
 * last wait ended while spinning); read (the reply's read after its last
 * wait: decoding, and for a spin hit up to one batch of tries, SpinReader
 * timing a hit by the clock read before its batch). With `server`: serverRead (its Request's read after its
 * wait ended: the wake-up's tail and decoding), handler, reply (its
 * Response's send as the server saw it: it ends after the client has the
 * reply when the doorbell's wake-up takes the server's CPU), handoffs
 * (the client's wait minus the server's time from its wake-up to its
 * reply's send: the two one-way hand-offs with the reply's copy), and
 * inSend (the server's handler ended before the client's send did: the
 * request's doorbell woke the server onto the client's CPU, whose send
 * then returned after the server's turn, and handoffs goes negative). A server
 * request that began before the client's send or whose handler ended after
 * the client's read is counted as unmatched. Returns { rows, unmatched }.
 */
export function splitRoundTrips(client, server, method) {
  const rows = [];
  let unmatched = 0;
  for (const [seq, r] of client.requests) {
    if (!r.request || r.request.name !== method) continue;
    const send = r.sends.find((s) => s.name === "send Request");
    const read = r.reads.find((s) => s.name === "read Response");
    if (!send || !read) continue;
    const waits = r.waits.filter((w) => w.start >= send.end - 1 && w.end <= read.end);
    const wait = waits.reduce((t, w) => t + (w.end - w.start), 0);
    const spin = waits.reduce((t, w) => t + Math.min(ns(w.args.spin_us), w.end - w.start), 0);
    const lastWaitEnd = waits.length ? waits[waits.length - 1].end : read.start;
    const row = {
      rt: r.request.end - r.request.start,
      send: send.end - send.start,
      wait, spin, block: wait - spin,
      bySpin: waits.length > 0 && waits[waits.length - 1].args.ended_by === "spin",
      read: read.end - lastWaitEnd,
    };
    if (server) {
      const s = server.requests.get(seq);
      const sRead = s?.reads.find((x) => x.name === "read Request");
      const sReply = s?.sends.find((x) => x.name === "send Response" || x.name === "send Error");
      if (!s?.request || !s.handler || !sRead || !sReply || s.request.start < send.start || s.handler.end > read.end) {
        ++unmatched;
        continue;
      }
      const sWaits = waitsWithin(server, sRead.start, sRead.end);
      const woke = sWaits.length ? sWaits[sWaits.length - 1].end : sRead.start;
      row.serverRead = sRead.end - woke;
      row.handler = s.handler.end - s.handler.start;
      row.reply = sReply.end - sReply.start;
      row.handoffs = wait - (sReply.start - woke);
      row.inSend = s.handler.end <= send.end;
    }
    rows.push(row);
  }
  return { rows, unmatched };
}

/** The p50 (stats.mjs, nearest rank) of each part of `rows`, and n; the yes-or-no parts (bySpin, inSend) as shares. */
export function splitMedians(rows) {
  const out = { n: rows.length };
  if (rows.length === 0) return out;
  for (const k of Object.keys(rows[0])) {
    if (typeof rows[0][k] === "boolean") out[k] = rows.filter((r) => r[k]).length / rows.length;
    else out[k] = percentile(rows.map((r) => r[k]).sort((a, b) => a - b), 0.5);
  }
  return out;
}

/**
 * The boxes of a timeline of the round trips of `method` (the first `count`
 * the client traced, in order), both processes: per process a lane of its
 * requests (thin), sends, reads after their waits, handlers and callbacks,
 * and a lane of its waits' spin and block phases. x in µs from the first
 * request's start. Returns { lanes, boxes, requests: [{ from, to }] (µs),
 * from, to (the first request's start and the last one's end, ns) }.
 */
export function timelineBoxes(procs, method, count) {
  const client = procs.find((p) => p.client);
  const picked = [...client.requests.values()].filter((r) => r.request?.name === method)
    .sort((a, b) => a.request.start - b.request.start).slice(0, count);
  if (picked.length === 0) return null;
  const t0 = picked[0].request.start;
  const t1 = picked[picked.length - 1].request.end;
  const us = (t) => (t - t0) / 1000;
  const lanes = [];
  const boxes = [];
  for (const p of procs) {
    const who = `${p.name} (${p.client ? "client" : "server"})`;
    const work = `${who}: work`, wait = `${who}: wait`;
    lanes.push(work, wait);
    for (const s of p.spans) {
      if (s.end < t0 || s.start > t1) continue;
      const box = (kind, from = s.start, to = s.end, lane = work) => boxes.push({ lane, kind, from: us(from), to: us(to) });
      if (s.cat === "request") box("request");
      else if (s.cat === "send") box(s.name === "send Request" || s.name === "send Call" ? "send" : "reply");
      else if (s.cat === "handler") box(s.name === "callback" ? "callback" : "handler");
      else if (s.cat === "read") {
        const ws = waitsWithin(p, s.start, s.end);
        box("read", ws.length ? ws[ws.length - 1].end : s.start);
      } else if (s.cat === "wait" && (s.name === "spin" || s.name === "block")) box(s.name, s.start, s.end, wait);
    }
  }
  return { lanes, boxes, requests: picked.map((r) => ({ from: us(r.request.start), to: us(r.request.end) })), from: t0, to: t1 };
}

/**
 * Per process, its waits that began in [from, to] (ns): how many, how many
 * ended while spinning, and the µs spun and blocked in all.
 */
export function waitSummary(procs, from, to) {
  return procs.map((p) => {
    const waits = p.spans.filter((s) => s.cat === "wait" && s.name === "wait" && s.start >= from && s.start <= to);
    const spun = waits.reduce((a, w) => a + Math.min(ns(w.args.spin_us), w.end - w.start), 0);
    const waited = waits.reduce((a, w) => a + (w.end - w.start), 0);
    return { name: p.name, client: p.client, waits: waits.length, bySpin: waits.filter((w) => w.args.ended_by === "spin").length,
      spinUs: spun / 1000, blockUs: (waited - spun) / 1000 };
  });
}

/** The kinds of timelineBoxes, in drawing order, with their colours. */
export const TIMELINE_KINDS = {
  request: { title: "request", colour: "#d9d9d9", height: 0.9 },
  send: { title: "send (Request)", colour: "#d62728", height: 0.6 },
  read: { title: "read (after its wait: decode)", colour: "#9467bd", height: 0.6 },
  handler: { title: "server handler", colour: "#2ca02c", height: 0.6 },
  callback: { title: "client callback", colour: "#8c564b", height: 0.6 },
  reply: { title: "reply (send Response)", colour: "#e377c2", height: 0.6 },
  spin: { title: "wait: spin", colour: "#ff7f0e", height: 0.6 },
  block: { title: "wait: block", colour: "#1f77b4", height: 0.6 },
};
