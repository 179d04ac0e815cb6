// Differential conformance: the same input bytes and command line go to
// spinrpc-server and to the real tsgo; stdout bytes, stderr text and exit
// status must be identical, except for the deliberate differences on the
// allow-list (./differences.mjs): a case that names one (`differs`) checks
// tsgo against its pin and spinrpc-server against its own result (`ours`). Where a case also pins tsgo's observed behaviour
// (`pin`), tsgo itself is checked against it, so a tsgo upgrade that changes
// the facts shows up as a failure on the tsgo side, not as a spinrpc bug.
//
// Failure messages print the input bytes and both peers' results in hex.

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  spinrpcPeer, versionPeer, requireBinary, request, frame, bytes, bin, bin8, bin16, bin32,
  bin32Header, parseFrames, hexdump, T, closeWithRepliesUnread,
} from "./peers.mjs";
import { deliberateDifference, eofAtFieldBoundary } from "./differences.mjs";
import { VERSIONS } from "./versions.mjs";
import { dialectOf, withDialect } from "./goldens/dialects.mjs";

const SPINRPC = spinrpcPeer();
const TIMEOUT_MS = Number(process.env.SPINRPC_CONFORMANCE_TIMEOUT_MS || 20_000);

const scratch = mkdtempSync(join(tmpdir(), "spinrpc-conformance-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
const realDir = join(scratch, "real");
const linkDir = join(scratch, "link");
mkdirSync(realDir);
symlinkSync(realDir, linkDir);

// ── running a peer ───────────────────────────────────────────────────

/** Octal-escaped printf argument for raw bytes (no trailing newline allowed). */
function shBytes(buf) {
  return `"$(printf '${[...buf].map((b) => "\\" + b.toString(8).padStart(3, "0")).join("")}')"`;
}

/**
 * Runs one peer with args (strings, or Buffers for raw non-UTF-8 argv bytes)
 * and the given stdin bytes. Never hangs: spawnSync's timeout kills it.
 */
function run(peer, args, input, { cwd = scratch, env } = {}) {
  requireBinary(peer);
  let file = peer.path;
  let argv = args;
  if (args.some((a) => Buffer.isBuffer(a))) {
    // Node only passes UTF-8 strings as argv; let sh build the raw bytes.
    const words = args.map((a) => (Buffer.isBuffer(a) ? shBytes(a) : `'${a.replaceAll("'", "'\\''")}'`));
    file = "/bin/sh";
    argv = ["-c", `exec "$0" ${words.join(" ")}`, peer.path];
  }
  const t0 = Date.now();
  const r = spawnSync(file, argv, {
    input,
    cwd,
    env: env ?? process.env,
    timeout: TIMEOUT_MS,
    killSignal: "SIGKILL",
    maxBuffer: 256 * 1024 * 1024,
  });
  const t1 = Date.now();
  // EPIPE: the peer exited without reading all of its input (a command-line
  // error, or a malformed header early in a long stream). Its status counts.
  if (r.error && !(r.error.code === "EPIPE" && (r.status !== null || r.signal !== null))) {
    throw new Error(`${peer.name} ${JSON.stringify(args)}: ${r.error.code === "ETIMEDOUT" ? `did not finish within ${TIMEOUT_MS} ms` : r.error.message}`);
  }
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr.toString("utf8"), t0, t1 };
}

const show = (r) => `status ${r.status}${r.signal ? ` signal ${r.signal}` : ""}\n    stdout: ${hexdump(r.stdout, 160)}\n    stderr: ${JSON.stringify(r.stderr.slice(0, 400))}`;

function describeCase(c, ours, theirs) {
  return `case "${c.name}"\n  args: ${JSON.stringify(c.args ?? ["--api"])}\n  input: ${hexdump(c.input ?? Buffer.alloc(0), 160)}` +
    `\n  tsgo (expected):\n    ${show(theirs)}\n  spinrpc-server (got):\n    ${show(ours)}`;
}

/** Where two stdouts first differ, frame by frame when both parse. */
function firstDifference(ours, theirs) {
  const a = ours.stdout;
  const b = theirs.stdout;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  let msg = `first stdout difference at byte ${i} (spinrpc-server wrote ${a.length} bytes, tsgo ${b.length})`;
  const pa = parseFrames(a).frames;
  const pb = parseFrames(b).frames;
  for (let k = 0; k < Math.max(pa.length, pb.length); k++) {
    if (pa[k] && pb[k] && pa[k].raw.equals(pb[k].raw)) continue;
    // Show the payloads around their first differing byte.
    let j = 0;
    const x = pa[k]?.payload ?? Buffer.alloc(0);
    const y = pb[k]?.payload ?? Buffer.alloc(0);
    while (j < x.length && j < y.length && x[j] === y[j]) j++;
    const from = Math.max(0, j - 80);
    const fr = (f) => (f ? `type ${f.type} name ${hexdump(f.name, 48)}\n      payload (${f.payload.length} bytes) from byte ${from}: ` +
      JSON.stringify(f.payload.subarray(from, from + 240).toString("utf8")) : "(no such frame)");
    msg += `\n  frame ${k} differs:\n    tsgo:           ${fr(pb[k])}\n    spinrpc-server: ${fr(pa[k])}`;
    break;
  }
  return msg;
}

/** The comparison: byte-identical stdout, identical stderr text and status. */
function assertSamePeers(c, ours, theirs, { stderr = true, stdout = true } = {}) {
  const problems = [];
  if (ours.status !== theirs.status || ours.signal !== theirs.signal) problems.push(`exit status ${ours.status}/${ours.signal} vs tsgo ${theirs.status}/${theirs.signal}`);
  if (stderr && ours.stderr !== theirs.stderr) problems.push(`stderr ${JSON.stringify(ours.stderr.slice(0, 300))} vs tsgo ${JSON.stringify(theirs.stderr.slice(0, 300))}`);
  if (stdout && !ours.stdout.equals(theirs.stdout)) problems.push(firstDifference(ours, theirs));
  if (problems.length) assert.fail(`${describeCase(c, ours, theirs)}\n  ${problems.join("\n  ")}`);
}

/** A deliberate difference: spinrpc-server's own exact result, as listed in docs/. */
function assertOurs(c, ours, theirs) {
  const where = deliberateDifference(c.differs);
  const problems = [];
  if (typeof c.ours === "function") {
    problems.push(...c.ours(ours, theirs));
  } else {
    if (ours.status !== c.ours.status || ours.signal !== null) problems.push(`exit status ${ours.status}/${ours.signal}, want ${c.ours.status}`);
    if (ours.stderr !== c.ours.stderr) problems.push(`stderr ${JSON.stringify(ours.stderr.slice(0, 300))}, want ${JSON.stringify(c.ours.stderr)}`);
    if (!ours.stdout.equals(Buffer.from(c.ours.stdout))) problems.push(`stdout ${hexdump(ours.stdout, 160)}, want ${hexdump(Buffer.from(c.ours.stdout), 160)}`);
  }
  if (problems.length) assert.fail(`${describeCase(c, ours, theirs)}\n  (a deliberate difference, ${where})\n  ${problems.join("\n  ")}`);
}

/**
 * For a deliberate difference that is only in the text of an Error reply to
 * batchRequests: the same status, stderr and frames, except that such an
 * Error's payload may differ after `prefix` (which both must start with).
 */
function sameButBatchErrorText(prefix) {
  return (ours, theirs) => {
    const problems = [];
    if (ours.status !== theirs.status || ours.signal !== theirs.signal) problems.push(`exit status ${ours.status}/${ours.signal} vs tsgo ${theirs.status}/${theirs.signal}`);
    if (ours.stderr !== theirs.stderr) problems.push(`stderr ${JSON.stringify(ours.stderr)} vs tsgo ${JSON.stringify(theirs.stderr)}`);
    const a = parseFrames(ours.stdout);
    const b = parseFrames(theirs.stdout);
    if (a.rest.length || b.rest.length || a.frames.length !== b.frames.length) problems.push(firstDifference(ours, theirs));
    let differing = 0;
    for (let i = 0; i < Math.min(a.frames.length, b.frames.length); i++) {
      const [x, y] = [a.frames[i], b.frames[i]];
      if (x.raw.equals(y.raw)) continue;
      const texts = [x.payload.toString("utf8"), y.payload.toString("utf8")];
      if (x.type === T.Error && y.type === T.Error && x.name.toString() === "batchRequests" && y.name.toString() === "batchRequests" &&
          texts.every((t) => t.startsWith(prefix) && t.length > prefix.length)) { differing++; continue; }
      problems.push(`frame ${i}: spinrpc-server ${JSON.stringify(texts[0])}, tsgo ${JSON.stringify(texts[1])}`);
    }
    return problems;
  };
}

/**
 * tsgo's JSON decoder (Go's encoding/json/v2) words its errors "cannot
 * unmarshal" or "unable to unmarshal", picked at random once per process so
 * that nobody depends on either; spinrpc-server says "cannot". This folds
 * the Error replies of a run to that wording (each frame re-encoded), so
 * that everything else is compared byte for byte.
 */
function foldGoWording(r) {
  const { frames, rest } = parseFrames(r.stdout);
  const folded = frames.map((f) => {
    if (f.type !== T.Error) return f.raw;
    const text = f.payload.toString("latin1");
    const fold = text.replaceAll("json: unable to unmarshal", "json: cannot unmarshal");
    return fold === text ? f.raw : frame(f.type, f.name, Buffer.from(fold, "latin1"));
  });
  return { ...r, stdout: bytes(...folded, rest) };
}

function assertPin(c, theirs) {
  if (!c.pin) return;
  const want = {};
  const got = {};
  for (const k of ["status", "stderr", "stdout"]) {
    if (!(k in c.pin)) continue;
    want[k] = k === "stdout" ? Buffer.from(c.pin.stdout).toString("hex") : c.pin[k];
    got[k] = k === "stdout" ? theirs.stdout.toString("hex") : theirs[k];
  }
  assert.deepStrictEqual(got, want, `tsgo no longer behaves as pinned for case "${c.name}" (tsgo version changed?)\n    ${show(theirs)}`);
}

// ── the input table ──────────────────────────────────────────────────

const ECHO = Buffer.from("echo");
const echoReq = (p) => request("echo", p);
const echoReply = (p) => frame(T.Response, "echo", p);
const unknownReply = (m, quoted) => frame(T.Error, m, `api: invalid request: unknown API method ${quoted}`);
const invalid = (s) => `api: invalid request: ${s}\n`;
const pseudo = (n, seed = 7) => { const b = Buffer.allocUnsafe(n); let x = seed; for (let i = 0; i < n; i++) { x = (x * 1103515245 + 12345) >>> 0; b[i] = x >>> 24; } return b; };
const all256 = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

const initReq = request("initialize", "null");
const E = [...ECHO];

/**
 * The case table for one version: the inputs are the same for every
 * version; the pins of what the real server answers differently per
 * dialect come from goldens/dialects.mjs (`D`).
 */
function buildCases(v) {
const D = dialectOf(v);
const cases = [];
const add = (c) => cases.push(c);
const UNEXPECTED_RESPONSE = D.transportError;

// Malformed input (each ends the server with exit 1 and one stderr line).
for (const first of [0x92, 0x94, 0x90, 0x80, 0xdc, 0x00, 0x05, 0x7f, 0xc4, 0xff]) {
  add({ name: `first byte 0x${first.toString(16).padStart(2, "0")}`, input: bytes([first, 1, 0xc4, 0, 0xc4, 0]),
    pin: { status: 1, stdout: "", stderr: invalid(`expected fixed 3-element array (0x93), received: 0x${first.toString(16).padStart(2, "0")}`) } });
}
add({ name: "first byte 0x92 alone", input: bytes([0x92]), pin: { status: 1, stderr: invalid("expected fixed 3-element array (0x93), received: 0x92") } });
for (const t of [0, 7, 9, 0x7f]) {
  add({ name: `unknown message type ${t}`, input: bytes([0x93, t, 0xc4, 4], ECHO, [0xc4, 0]),
    pin: { status: 1, stdout: "", stderr: invalid(`unknown message type: ${t}`) } });
}
add({ name: "type 9 then EOF (type checked before the name is read)", input: bytes([0x93, 9]), pin: { status: 1, stderr: invalid("unknown message type: 9") } });
add({ name: "uint8 type 0xcc 0x09", input: bytes([0x93, 0xcc, 9, 0xc4, 0, 0xc4, 0]), pin: { status: 1, stderr: invalid("unknown message type: 9") } });
add({ name: "uint8 type 0xcc 0x80", input: bytes([0x93, 0xcc, 0x80, 0xc4, 0, 0xc4, 0]), pin: { status: 1, stderr: invalid("unknown message type: 128") } });
add({ name: "uint8 type 0xcc 0x00", input: bytes([0x93, 0xcc, 0, 0xc4, 0, 0xc4, 0]), pin: { status: 1, stderr: invalid("unknown message type: 0") } });
for (const m of [0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xca, 0xcb, 0xc0, 0xc2, 0xc3, 0xe0, 0xff, 0x80, 0x90, 0xa1, 0xc4]) {
  add({ name: `type marker 0x${m.toString(16)}`, input: bytes([0x93, m, 0, 1, 0xc4, 0, 0xc4, 0]),
    pin: { status: 1, stdout: "", stderr: invalid(`expected positive fixint or uint8 marker, received: 0x${m.toString(16)}`) } });
}
add({ name: "type marker 0xcd then EOF", input: bytes([0x93, 0xcd]), pin: { status: 1, stderr: invalid("expected positive fixint or uint8 marker, received: 0xcd") } });
for (const [what, mk] of [["str (fixstr 0xa4)", [0xa4, ...ECHO]], ["str8 0xd9", [0xd9, 4, ...ECHO]], ["nil 0xc0", [0xc0]], ["fixarray 0x90", [0x90]], ["ext8 0xc7", [0xc7, 1, 1, 0]], ["positive fixint 0x04", [0x04]]]) {
  add({ name: `name is ${what}`, input: bytes([0x93, 1], mk, [0xc4, 0]),
    pin: { status: 1, stdout: "", stderr: invalid(`expected binary data (0xc4-0xc6), received: 0x${mk[0].toString(16).padStart(2, "0")}`) } });
  add({ name: `payload is ${what}`, input: bytes([0x93, 1, 0xc4, 4], ECHO, mk),
    pin: { status: 1, stdout: "", stderr: invalid(`expected binary data (0xc4-0xc6), received: 0x${mk[0].toString(16).padStart(2, "0")}`) } });
}
add({ name: "str name 0xa4 then EOF", input: bytes([0x93, 1, 0xa4]), pin: { status: 1, stderr: invalid("expected binary data (0xc4-0xc6), received: 0xa4") } });
for (const t of [2, 3]) {
  add({ name: `type ${t} with no Call open`, input: frame(t, "", ""), pin: { status: 1, stdout: "", stderr: UNEXPECTED_RESPONSE } });
  add({ name: `type ${t} named readFile with no Call open`, input: frame(t, "readFile", '{"content":"x"}'), pin: { status: 1, stdout: "", stderr: UNEXPECTED_RESPONSE } });
  add({ name: `type ${t} after an echo (reply still written)`, input: bytes(echoReq("one"), frame(t, "echo", "")), pin: { status: 1, stdout: echoReply("one"), stderr: UNEXPECTED_RESPONSE } });
  add({ name: `type ${t} then EOF at the name`, input: bytes([0x93, t]), pin: { status: 0, stdout: "", stderr: "" } });
}
// spinrpc-server's own line, under the dialect's transport prefix (api: / ipc:).
const EMPTY_METHOD = `${D.transportError.split(":")[0]}: invalid request: a Request with an empty method name\n`;
add({ name: "request with an empty method name", input: request("", ""), pin: { status: 1, stdout: "", stderr: UNEXPECTED_RESPONSE },
  differs: "empty-method", ours: { status: 1, stdout: "", stderr: EMPTY_METHOD } });
add({ name: "request with an empty method name and a payload", input: request("", "null"), pin: { status: 1, stdout: "", stderr: UNEXPECTED_RESPONSE },
  differs: "empty-method", ours: { status: 1, stdout: "", stderr: EMPTY_METHOD } });
add({ name: "empty method name after an echo", input: bytes(echoReq("a"), request("", ""), echoReq("b")), pin: { status: 1, stdout: echoReply("a"), stderr: UNEXPECTED_RESPONSE },
  differs: "empty-method", ours: { status: 1, stdout: echoReply("a"), stderr: EMPTY_METHOD } });
add({ name: "empty method name then EOF in the payload header", input: bytes([0x93, 1, 0xc4, 0]), pin: { status: 0, stdout: "", stderr: "" } });
for (const t of [4, 5, 6]) {
  add({ name: `type ${t} from the client`, input: frame(t, "echo", "x"), pin: { status: 1, stdout: "", stderr: `unexpected message type: ${t}\n` } });
  add({ name: `type ${t} after an echo`, input: bytes(echoReq("A"), frame(t, "", "")), pin: { status: 1, stdout: echoReply("A"), stderr: `unexpected message type: ${t}\n` } });
  add({ name: `type ${t} truncated (whole message is read before the type is judged)`, input: bytes([0x93, t, 0xc4]), pin: { status: 0, stdout: "", stderr: "" } });
}
add({ name: "type 4 as uint8", input: bytes([0x93, 0xcc, 4, 0xc4, 0, 0xc4, 0]), pin: { status: 1, stderr: "unexpected message type: 4\n" } });

// EOF: at a field boundary it is a clean end; inside a multi-byte field it is an error.
for (const [name, inp, st] of [
  ["empty input", [], 0],
  ["0x93", [0x93], 0],
  ["0x93 01", [0x93, 1], 0],
  ["0x93 cc (uint8 type marker, no value)", [0x93, 0xcc], 0],
  ["name marker c4, no length", [0x93, 1, 0xc4], 0],
  ["name bin8 length 4, no bytes", [0x93, 1, 0xc4, 4], 0],
  ["name bin8 length 4, 2 bytes", [0x93, 1, 0xc4, 4, E[0], E[1]], 1],
  ["name bin8 length 4, 3 bytes", [0x93, 1, 0xc4, 4, E[0], E[1], E[2]], 1],
  ["full name, no payload marker", [0x93, 1, 0xc4, 4, ...E], 0],
  ["payload marker c4, no length", [0x93, 1, 0xc4, 4, ...E, 0xc4], 0],
  ["payload bin8 length 1, no byte", [0x93, 1, 0xc4, 4, ...E, 0xc4, 1], 0],
  ["payload bin8 length 2, 1 byte", [0x93, 1, 0xc4, 4, ...E, 0xc4, 2, 0x41], 1],
  ["name bin16 marker, no length", [0x93, 1, 0xc5], 0],
  ["name bin16, half a length", [0x93, 1, 0xc5, 0], 1],
  ["name bin32, 3 of 4 length bytes", [0x93, 1, 0xc6, 0, 0, 0], 1],
  ["name bin32 marker, no length", [0x93, 1, 0xc6], 0],
  ["payload bin16, half a length", [0x93, 1, 0xc4, 4, ...E, 0xc5, 0], 1],
  ["payload bin16 length 0x0100, no bytes", [0x93, 1, 0xc4, 4, ...E, 0xc5, 1, 0], 0],
  ["payload bin16 length 0x0100, 255 bytes", [0x93, 1, 0xc4, 4, ...E, 0xc5, 1, 0, ...Buffer.alloc(255, 0x61)], 1],
  ["payload bin32, 1 of 4 length bytes", [0x93, 1, 0xc4, 4, ...E, 0xc6, 0], 1],
  ["payload bin32 length 1 MiB, 3 bytes", [0x93, 1, 0xc4, 4, ...E, 0xc6, 0, 0x10, 0, 0, 1, 2, 3], 1],
  ["payload bin32 length 1 MiB, no bytes", [0x93, 1, 0xc4, 4, ...E, 0xc6, 0, 0x10, 0, 0], 0],
]) {
  add({ name: `EOF: ${name}`, input: Buffer.from(inp), pin: { status: st, stdout: "", stderr: st ? "unexpected EOF\n" : "" } });
}
add({ name: "EOF: echo, then 0x93", input: bytes(echoReq("x"), [0x93]), pin: { status: 0, stdout: echoReply("x"), stderr: "" } });
add({ name: "EOF: echo, then half a bin16 length", input: bytes(echoReq("x"), [0x93, 1, 0xc4, 4, ...E, 0xc5, 0]), pin: { status: 1, stdout: echoReply("x"), stderr: "unexpected EOF\n" } });
add({ name: "EOF: echo, then 2 of 4 name bytes", input: bytes(echoReq("x"), [0x93, 1, 0xc4, 4, E[0], E[1]]), pin: { status: 1, stdout: echoReply("x"), stderr: "unexpected EOF\n" } });
add({ name: "EOF: 3 echoes then a truncated 1 MiB payload", input: bytes(echoReq("1"), echoReq("2"), echoReq("3"), [0x93, 1, 0xc4, 4, ...E], bin32Header(1 << 20), pseudo(1000)),
  pin: { status: 1, stdout: bytes(echoReply("1"), echoReply("2"), echoReply("3")), stderr: "unexpected EOF\n" } });

// Well-formed request streams, several header encodings.
add({ name: "echo hi", input: echoReq("hi"), pin: { status: 0, stdout: echoReply("hi"), stderr: "" } });
add({ name: "echo empty payload", input: echoReq(""), pin: { status: 0, stdout: echoReply(""), stderr: "" } });
add({ name: "echo bytes 0..255", input: echoReq(all256), pin: { status: 0, stdout: echoReply(all256), stderr: "" } });
for (const n of [255, 256, 65535, 65536, 65537]) {
  const p = pseudo(n, n);
  add({ name: `echo ${n} bytes (reply header minimal)`, input: echoReq(p), pin: { status: 0, stdout: echoReply(p), stderr: "" } });
}
add({ name: "echo 1 MiB", input: echoReq(pseudo(1 << 20)), pin: { status: 0, stdout: echoReply(pseudo(1 << 20)), stderr: "" } });
add({ name: "echo 8 MiB", input: echoReq(pseudo(8 << 20, 3)) });
add({ name: "100 echoes of 64 KiB + 1 in one stream", input: bytes(...Array.from({ length: 100 }, (_, i) => echoReq(pseudo(65537, i + 1)))) });
add({ name: "1000 small echoes in one stream", input: bytes(...Array.from({ length: 1000 }, (_, i) => echoReq(`#${i}`))) });
add({ name: "uint8-encoded type 0xcc 0x01", input: bytes([0x93, 0xcc, 1], bin8("echo"), bin8("u8")), pin: { status: 0, stdout: echoReply("u8"), stderr: "" } });
add({ name: "name as bin16, payload as bin16", input: bytes([0x93, 1], bin16("echo"), bin16("b16")), pin: { status: 0, stdout: echoReply("b16"), stderr: "" } });
add({ name: "name as bin32, payload as bin32", input: bytes([0x93, 1], bin32("echo"), bin32("b32")), pin: { status: 0, stdout: echoReply("b32"), stderr: "" } });
add({ name: "empty payload as bin16 and bin32", input: bytes([0x93, 1], bin8("echo"), bin16(""), [0x93, 1], bin8("echo"), bin32("")), pin: { status: 0, stdout: bytes(echoReply(""), echoReply("")), stderr: "" } });
add({ name: "initialize with name as bin32 and uint8 type", input: bytes([0x93, 0xcc, 1], bin32("initialize"), bin16("null")) });
add({ name: "mixed sequence", input: bytes(echoReq("a"), request("initialize", "null"), request("nope", "{}"), request("getServerTiming", ""), request("resetServerTiming", ""), echoReq("z")) });
for (const p of ["null", "", "{}", "42", "not json"]) {
  add({ name: `initialize with payload ${JSON.stringify(p)}`, input: request("initialize", p) });
}
// ping: tsgo's undocumented liveness check, "pong" whatever the payload.
for (const p of ["", "null", "[null]", "{}", "not json"]) {
  add({ name: `ping with payload ${JSON.stringify(p)}`, input: request("ping", p), pin: { status: 0, stderr: "", stdout: frame(T.Response, "ping", '"pong"') } });
}
add({ name: "ping between echoes, and Ping (unknown)", input: bytes(echoReq("a"), request("ping", ""), request("Ping", ""), echoReq("b")) });
for (const m of ["getServerTiming", "resetServerTiming"]) {
  for (const p of ["", "null", "{}"]) add({ name: `${m} without --timing, payload ${JSON.stringify(p)}`, input: request(m, p) });
}
add({ name: "getServerTiming without --timing (pinned)", input: bytes(echoReq("x"), request("getServerTiming", ""), request("resetServerTiming", "")),
  pin: { status: 0, stderr: "", stdout: bytes(echoReply("x"), frame(T.Response, "getServerTiming", '{"enabled":false,"totals":{"requestCount":0,"totalProcessingTimeMs":0},"recentRequests":[]}'), frame(T.Response, "resetServerTiming", "null")) } });

// Method names are matched byte for byte; the unknown-method message quotes
// the name Go-%q style (strconv.Quote: printable runes kept, the rest escaped).
// (Real tsgo methods that need a TypeScript program, such as updateSnapshot,
// are outside the transport and deliberately not compared here.)
for (const m of ["Echo", "ECHO", "echo ", " echo", "echo\0", "initialize ", "getservertiming", "getServerTiming\n"]) {
  add({ name: `near-miss name ${JSON.stringify(m)}`, input: request(m, "null") });
}
const quoting = [
  ['a"b', '"a\\"b"'],
  [Buffer.from([0xff]), '"\\xff"'],
  ["x\ny", '"x\\ny"'],
  ["nope", '"nope"'],
  ["\\", '"\\\\"'],
  ["'`", "\"'`\""],
  ["\x07\b\f\r\v\t\x1b", '"\\a\\b\\f\\r\\v\\t\\x1b"'],
  ["a\x00b\x7f", '"a\\x00b\\x7f"'],
  ["\u00a0\ufeff\ue000", '"\\u00a0\\ufeff\\ue000"'],
  ["\u2028\u2029", '"\\u2028\\u2029"'],
  ["é😀\u0301", '"é😀\u0301"'],
  ["\u{10FFFF}", '"\\U0010ffff"'],
  ["\ufffd", '"\ufffd"'],
  [Buffer.from([0xed, 0xa0, 0x80]), '"\\xed\\xa0\\x80"'],
  [Buffer.from([0xc0, 0x80]), '"\\xc0\\x80"'],
  [Buffer.from([0xe2, 0x82]), '"\\xe2\\x82"'],
  [Buffer.from([0xe2, 0x82, 0x41]), '"\\xe2\\x82A"'],
  [Buffer.from([0xf4, 0x90, 0x80, 0x80]), '"\\xf4\\x90\\x80\\x80"'],
  [Buffer.from([0x80]), '"\\x80"'],
  [Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]), '"\\xf8\\x88\\x80\\x80\\x80"'],
];
for (const [m, quoted] of quoting) {
  add({ name: `Go quoting of ${hexdump(bin(m).subarray(2))}`, input: request(m, ""), pin: { status: 0, stderr: "", stdout: unknownReply(m, quoted) } });
}
// Unpinned: printability depends on the Unicode tables of tsgo's Go version.
for (const m of ["\u0085\u00ad\u200b\u3000", "\u{1F1E6}\u{E0001}\u{F0000}", "\ud7ff\uffff\u0378", "\u061c\u180e\u2066", "\u{1FAE8}\u{1F6DC}\u{31350}"]) {
  add({ name: `Go quoting (Unicode tables) of ${hexdump(Buffer.from(m))}`, input: request(m, "") });
}
add({ name: "unknown method with a 300-byte name (bin16 reply name)", input: request("m".repeat(300), "") });
add({ name: "unknown method with a 70000-byte name (bin32 reply name)", input: request(pseudo(70000, 9), "") });
add({ name: "unknown method then echo (server keeps serving)", input: bytes(request('a"b', ""), echoReq("after")),
  pin: { status: 0, stderr: "", stdout: bytes(unknownReply('a"b', '"a\\"b"'), echoReply("after")) } });

// initialize reports --cwd as JSON without HTML escaping: verbatim in 7.0,
// normalized and made absolute in 7.1 (goldens/dialects.mjs, recorded).
const initReply = (cwd) => frame(T.Response, "initialize", D.initialize(cwd));
const cwdPin = (cwd, run = scratch) => JSON.stringify(D.cwd[cwd].replace("{run}", run));
for (const cwd of Object.keys(D.cwd)) {
  add({ name: `initialize --cwd ${JSON.stringify(cwd)}`, args: ["--api", "--cwd", cwd], input: initReq, pin: { status: 0, stderr: "", stdout: initReply(cwdPin(cwd)) } });
}
add({ name: "initialize --cwd=/tmp/ (one-word flag)", args: ["--api", "--cwd=/tmp/"], input: initReq, pin: { status: 0, stdout: initReply(cwdPin("/tmp/")) } });
add({ name: "initialize -cwd . (single dash)", args: ["--api", "-cwd", "."], input: initReq, pin: { status: 0, stdout: initReply(cwdPin(".")) } });
add({ name: "initialize --cwd twice (last wins)", args: ["--api", "--cwd", "/a", "--cwd", "/b"], input: initReq, pin: { status: 0, stdout: initReply('"/b"') } });
add({ name: "initialize --cwd with invalid UTF-8 (each bad byte -> U+FFFD)", args: ["--api", "--cwd", Buffer.from([0x2f, 0x78, 0xff, 0xc0, 0x79])], input: initReq,
  pin: { status: 0, stdout: initReply('"/x\ufffd\ufffdy"') } });
// Without --cwd: the process's working directory, found the way Go's
// os.Getwd finds it ($PWD when it is absolute and names ".", else getcwd).
const noPwd = { ...process.env }; delete noPwd.PWD;
add({ name: "initialize without --cwd, PWD unset", args: ["--api"], input: initReq, cwd: realDir, env: noPwd, pin: { status: 0, stdout: initReply(JSON.stringify(realDir)) } });
add({ name: "initialize without --cwd, PWD = symlink to cwd", args: ["--api"], input: initReq, cwd: linkDir, env: { ...noPwd, PWD: linkDir }, pin: { status: 0, stdout: initReply(JSON.stringify(linkDir)) } });
add({ name: "initialize without --cwd, PWD = symlink/ (trailing slash kept)", args: ["--api"], input: initReq, cwd: linkDir, env: { ...noPwd, PWD: linkDir + "/" }, pin: { status: 0, stdout: initReply(JSON.stringify(D.pwdSymlinkSlash(linkDir))) } });
add({ name: "initialize without --cwd, PWD names another dir", args: ["--api"], input: initReq, cwd: realDir, env: { ...noPwd, PWD: "/" }, pin: { status: 0, stdout: initReply(JSON.stringify(realDir)) } });
add({ name: "initialize without --cwd, PWD relative", args: ["--api"], input: initReq, cwd: linkDir, env: { ...noPwd, PWD: "link" }, pin: { status: 0, stdout: initReply(JSON.stringify(realDir)) } });
add({ name: "initialize without --cwd, PWD does not exist", args: ["--api"], input: initReq, cwd: linkDir, env: { ...noPwd, PWD: "/nonexistent" }, pin: { status: 0, stdout: initReply(JSON.stringify(realDir)) } });

// Command-line surface that stays byte-identical.
add({ name: "--callbacks=readFile does not change echo", args: ["--api", "--callbacks=readFile,fileExists"], input: bytes(echoReq("cb"), initReq) });
if (v.dialect === "7.1") {
  // 7.1's --callbacks items (in 7.0 an unknown name: tsgo panics, see the async suite).
  add({ name: "--callbacks with 7.1's names does not change echo", args: ["--api", "--callbacks=readFile,fileExists,directoryExists,getAccessibleEntries,realpath,stat,writeFile,removeFile"], input: bytes(echoReq("cb"), initReq) });
  add({ name: "--callbacks with 7.1's NAME:SENTINEL items does not change echo", args: ["--api", "--callbacks=readFile:error,realpath:identity,stat:fakeStat,writeFile:noop,removeFile:error,fileExists"], input: bytes(echoReq("cb"), initReq) });
}
add({ name: "--timing=false is timing off", args: ["--api", "--timing=false"], input: bytes(echoReq("x"), request("getServerTiming", "")) });
add({ name: "positional argument is ignored", args: ["--api", "extra"], input: echoReq("pos") });

// batchRequests (API 7.1): many requests in one Request, answered in one
// reply or in pages fetched with continuation tokens ("api-session-1-N",
// numbered per session, so a stream can name the tokens it will be given).
// In 7.0 it is an unknown method. The page sweep and the sessions that
// follow tokens from the replies are under "batchRequests pages" below.
const batch = (o) => request("batchRequests", typeof o === "string" ? o : JSON.stringify(o));
const B3 = [{ method: "echo", params: "aaaa" }, { method: "ping" }, { method: "echo", params: [1, 2, 3] }];
if (!D.batchRequests) {
  const unknownBatch = unknownReply("batchRequests", '"batchRequests"');
  add({ name: "batchRequests is an unknown method in 7.0", input: bytes(batch({ requests: B3 }), echoReq("after")),
    pin: { status: 0, stderr: "", stdout: bytes(unknownBatch, echoReply("after")) } });
  add({ name: "batchRequests with a continuation token is an unknown method in 7.0", input: batch({ continuationToken: "api-session-1-1" }),
    pin: { status: 0, stderr: "", stdout: unknownBatch } });
  add({ name: "batchRequests with params that are not JSON is an unknown method in 7.0", input: batch("not json"),
    pin: { status: 0, stderr: "", stdout: unknownBatch } });
} else {
  const R = D.batch;
  const reply = (p) => frame(T.Response, "batchRequests", p);
  const error = (p) => frame(T.Error, "batchRequests", p);
  const mixed = [{ method: "echo", params: { a: 1 } }, { method: "ping" }, { method: "nope" }, { method: "batchRequests", params: {} }, { method: "getServerTiming" }];
  add({ name: "batchRequests: one page; per-item errors (unknown method, nested batch, getServerTiming)", input: batch({ requests: mixed }),
    pin: { status: 0, stderr: "", stdout: reply(R.mixed) } });
  add({ name: "batchRequests: 3 items, 1 byte a page, the token followed, reused, and one never handed out",
    input: bytes(batch({ requests: B3, maxResponseBytesPerPage: 1 }), batch({ continuationToken: "api-session-1-1" }),
      batch({ continuationToken: "api-session-1-1" }), batch({ continuationToken: "api-session-1-2" })),
    pin: { status: 0, stderr: "", stdout: bytes(reply(R.page1), reply(R.page2), error(R.badToken), error(R.badToken)) } });
  for (const [what, p] of [["requests []", { requests: [] }], ["{}", {}], ["requests null", { requests: null }], ["params null", "null"]]) {
    add({ name: `batchRequests: empty batch, ${what}`, input: batch(p), pin: { status: 0, stderr: "", stdout: reply(R.empty) } });
  }
  add({ name: "batchRequests: no requests, only a page size", input: bytes(batch({ maxResponseBytesPerPage: 1 }), echoReq("after")) });
  add({ name: "batchRequests: the last page with the limit repeated, every page 1 byte",
    input: bytes(batch({ requests: B3, maxResponseBytesPerPage: 1 }), batch({ continuationToken: "api-session-1-1", maxResponseBytesPerPage: 1 }),
      batch({ continuationToken: "api-session-1-2", maxResponseBytesPerPage: 1 }), batch({ continuationToken: "api-session-1-3", maxResponseBytesPerPage: 1 })) });
  add({ name: "batchRequests: interleaved batches, continued in the other order",
    input: bytes(batch({ requests: [{ method: "echo", params: "a1" }, { method: "echo", params: "a2" }], maxResponseBytesPerPage: 1 }),
      batch({ requests: [{ method: "echo", params: "b1" }, { method: "echo", params: "b2" }, { method: "echo", params: "b3" }], maxResponseBytesPerPage: 1 }),
      batch({ continuationToken: "api-session-1-2", maxResponseBytesPerPage: 1 }), batch({ continuationToken: "api-session-1-1", maxResponseBytesPerPage: 1 }),
      batch({ continuationToken: "api-session-1-3", maxResponseBytesPerPage: 1 }), batch({ continuationToken: "api-session-1-3" })) });
  add({ name: "batchRequests: a request between the pages", input: bytes(batch({ requests: B3, maxResponseBytesPerPage: 1 }), echoReq("between"), request("nope", ""),
    batch({ continuationToken: "api-session-1-1" })) });
  add({ name: "batchRequests: a token together with new requests", input: bytes(batch({ requests: B3, maxResponseBytesPerPage: 1 }),
    batch({ requests: [{ method: "echo", params: "new" }], continuationToken: "api-session-1-1" }), batch({ requests: [{ method: "echo", params: "after" }] })) });
  for (const token of ["bogus", "api-session-1-0", "api-session-1-1", "api-session-2-1", "API-SESSION-1-1", "api-session-1-01", " api-session-1-1"]) {
    add({ name: `batchRequests: token ${JSON.stringify(token)} never handed out`, input: bytes(batch({ continuationToken: token }), batch({ requests: [{ method: "ping" }], continuationToken: token }), echoReq("after")) });
  }
  add({ name: "batchRequests: token null is no token", input: batch({ requests: [{ method: "echo", params: "z" }], continuationToken: null }) });
  add({ name: "batchRequests: token \"\" is no token", input: bytes(batch({ requests: [{ method: "echo", params: "z" }], continuationToken: "" }), batch({ continuationToken: "" })) });
  add({ name: "batchRequests: items without a method, method null or \"\", params absent or null",
    input: batch({ requests: [{ params: 1 }, { method: null }, { method: "" }, { method: "echo" }, { method: "echo", params: null }, {}] }) });
  add({ name: "batchRequests: initialize, resetServerTiming and odd names inside a batch",
    input: batch({ requests: [{ method: "initialize" }, { method: "resetServerTiming" }, { method: "Echo" }, { method: 'a"b\n\u20c1' }, { method: "ping", params: "x" }] }) });
  add({ name: "batchRequests: getServerTiming and resetServerTiming inside a batch, with --timing", args: ["--api", "--timing"],
    input: batch({ requests: [{ method: "getServerTiming" }, { method: "resetServerTiming" }, { method: "echo", params: 1 }] }) });
  add({ name: "batchRequests: nested batch with pages asked for", input: batch({ requests: [{ method: "batchRequests", params: { requests: B3, maxResponseBytesPerPage: 1 } }, { method: "ping" }] }) });
  add({ name: "batchRequests: a negative or zero page size is the default page", input: bytes(batch({ requests: B3, maxResponseBytesPerPage: -5 }), batch({ requests: B3, maxResponseBytesPerPage: 0 })) });
  add({ name: "batchRequests: echo of non-ASCII and escapes (written as JSON.stringify writes them)",
    input: batch({ requests: [{ method: "echo", params: { s: "wörld 😀 \u2028 <>&\"\\\n\u0001" } }, { method: "echo", params: "é\u2028" }] }) });
  add({ name: "batchRequests: echo of params of 1 to 40 bytes", input: batch({ requests: Array.from({ length: 40 }, (_, i) => ({ method: "echo", params: "x".repeat(i) })) }) });
  for (const n of [1.5, -0, 0.1, 0.30000000000000004, 5e-324, 1.7976931348623157e308, 1e21, 123456789012345680000, 1e-7, 2.5e-8, 100, -1]) {
    add({ name: `batchRequests: echo of the number ${JSON.stringify(n)} (as JSON.stringify writes it)`, input: batch({ requests: [{ method: "echo", params: n }] }) });
  }
  add({ name: "batchRequests: 1000 items in one page", input: batch({ requests: Array.from({ length: 1000 }, (_, i) => ({ method: i % 2 ? "ping" : "echo", params: i })) }) });
  add({ name: "batchRequests: 1 MiB of echo in one item", input: batch({ requests: [{ method: "echo", params: "y".repeat(1 << 20) }] }) });
  // An item's params reach its handler as written: echo inside a batch
  // returns the bytes, spaces and all, as tsgo does.
  const spaced = '{ "requests" : [ { "method" : "echo" , "params" : { "a" : [ 1 , 2 ] } } ] }';
  add({ name: "batchRequests: echo of params written with spaces", input: batch(spaced),
    pin: { status: 0, stderr: "", stdout: reply(`{"responses":[{"method":"echo","result":"${Buffer.from('{ "a" : [ 1 , 2 ] }').toString("base64")}"}]}`) } });
  // Deliberate: malformed params are an Error with tsgo's prefix; the text
  // after it is ours.
  // A page size that is a JSON number but no Go int (int64): refused with
  // Go's own error, byte for byte (foldGoWording); the edges of int64 taken.
  for (const n of ["9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
    "-9223372036854775808", "-9223372036854775809", "100000000000000000000000", "-0", "1e3", "1.5", "0.0", "-1.0E+2"]) {
    add({ name: `batchRequests: maxResponseBytesPerPage ${n}`, input: bytes(batch(`{"requests":[{"method":"ping"}],"maxResponseBytesPerPage":${n}}`), echoReq("after")) });
  }
  for (const p of ["", "not json", "[]", "5", '"x"', '{"requests":5}', '{"requests":[5]}', '{"requests":[{"method":5}]}', '{"requests":{}}',
    '{"maxResponseBytesPerPage":"x"}', '{"continuationToken":5}', '{"requests":[],"requests":[]}',
    '{"requests":[{"method":"echo","method":"ping"}]}', '{"requests":[{"method":"echo","params":{"a":1,"a":2}}]}', '{"requests":[]} x']) {
    add({ name: `batchRequests: malformed params ${JSON.stringify(p)}`, input: bytes(batch(p), echoReq("after")),
      differs: "batch-differences", ours: sameButBatchErrorText(R.paramsPrefix) });
  }
}

// Deliberate difference: input that ends at a field boundary inside a
// message. tsgo exits 0 silently (pinned above); spinrpc-server says the
// message is incomplete and exits 1.
for (const c of cases) {
  const { rest } = parseFrames(c.input ?? Buffer.alloc(0));
  if (c.differs || !c.pin || c.pin.status !== 0 || !rest?.length) continue;
  c.differs = "eof-at-field-boundary";
  c.ours = { status: 1, stdout: c.pin.stdout ?? "", stderr: eofAtFieldBoundary(rest.length) };
}

return cases;
}

// ── the tests: every version in VERSIONS ─────────────────────────────
//
// Each version's own server against spinrpc-server, the version's dialect
// flag (goldens/dialects.mjs: --useCaseSensitiveFileNames=true for 7.1,
// nothing for 7.0) inserted right after --api on both command lines, as
// that version's client passes it.

/** The newest version of each dialect in VERSIONS (the last listed): the every-scalar test runs there. */
const NEWEST = new Map(VERSIONS.map((v) => [v.dialect, v]));

// Every Unicode scalar value as a one-rune method name, in one stream: the
// quoting must follow Go's strconv.IsPrint tables exactly (unassigned code
// points are not printable and come out as \uXXXX / \UXXXXXXXX). ~30 s a
// version, so once per dialect: on its newest version.
function everyScalar(v, THEIRS) {
  test("Go quoting of every Unicode scalar value U+0000..U+10FFFF (surrogates excluded), one request each", () => {
    const cps = [];
    const reqs = [];
    for (let cp = 0; cp < 0x110000; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      cps.push(cp);
      reqs.push(request(String.fromCodePoint(cp), ""));
    }
    const input = Buffer.concat(reqs);
    const args = withDialect(v, ["--api"]);
    const theirs = run(THEIRS, args, input);
    const ours = run(SPINRPC, args, input);
    assert.deepStrictEqual({ status: ours.status, stderr: ours.stderr }, { status: theirs.status, stderr: theirs.stderr });
    if (ours.stdout.equals(theirs.stdout)) return;
    const prefix = "api: invalid request: unknown API method ".length;
    const quoted = (r) => parseFrames(r.stdout).frames.map((f) => f.payload.toString("utf8").slice(prefix));
    const a = quoted(ours);
    const b = quoted(theirs);
    const ranges = [];
    for (let i = 0; i < cps.length; i++) {
      if (a[i] === b[i]) continue;
      const last = ranges.at(-1);
      if (last && last.to === cps[i] - 1) { last.to = cps[i]; last.n++; } else ranges.push({ from: cps[i], to: cps[i], n: 1, tsgo: b[i], ours: a[i] });
    }
    const hex = (cp) => `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
    const total = ranges.reduce((s, r) => s + r.n, 0);
    assert.fail(`${total} code points quoted differently in ${ranges.length} ranges (frames: spinrpc ${a.length}, ${v.id} ${b.length}); first ranges:\n` +
      ranges.slice(0, 25).map((r) => `  ${hex(r.from)}..${hex(r.to)}: tsgo ${JSON.stringify(r.tsgo)} spinrpc-server ${JSON.stringify(r.ours)}`).join("\n"));
  });
}

// ── --timing: values differ run to run, so compare structurally ────────

const NUM_FIELDS = /"(processingTimeMs|totalProcessingTimeMs|timestamp)":(-?[0-9][0-9.eE+-]*)/g;

/**
 * Splits stdout into frames; every frame but getServerTiming's must match
 * byte for byte; getServerTiming's JSON must match with its three timing
 * numbers masked, and each masked number must be formatted as Go formats a
 * float64 (which is what JavaScript's Number#toString produces).
 */
function timingSkeleton(peer, r, c) {
  const { frames, rest } = parseFrames(r.stdout);
  assert.equal(rest.length, 0, `${peer.name}: trailing unparsable stdout bytes: ${hexdump(rest)}`);
  return frames.map((f) => {
    if (f.name.toString("latin1") !== "getServerTiming" || f.type !== T.Response) return { raw: f.raw.toString("hex") };
    const text = f.payload.toString("utf8");
    const nums = [];
    const masked = text.replace(NUM_FIELDS, (_, k, v) => { nums.push([k, v]); return `"${k}":#`; });
    const parsed = JSON.parse(text);
    for (const [k, v] of nums) {
      const n = Number(v);
      assert.ok(Number.isFinite(n) && n >= 0, `${peer.name}: ${k} ${v} is not a non-negative number`);
      assert.equal(v, String(n), `${peer.name}: ${k} ${v} not formatted as Go's encoding/json formats a float64`);
      if (k === "timestamp") {
        assert.ok(Number.isInteger(n) && n >= r.t0 - 2 && n <= r.t1 + 2, `${peer.name}: timestamp ${v} outside the run [${r.t0}, ${r.t1}]`);
      }
    }
    if (parsed.enabled) {
      const sum = parsed.recentRequests.reduce((a, q) => a + q.processingTimeMs, 0);
      if (parsed.totals.requestCount <= 5) {
        assert.ok(Math.abs(parsed.totals.totalProcessingTimeMs - sum) <= 1e-6 + 1e-9 * sum,
          `${peer.name}: totalProcessingTimeMs ${parsed.totals.totalProcessingTimeMs} != sum of recent ${sum} (case "${c.name}")`);
      } else {
        assert.ok(parsed.totals.totalProcessingTimeMs + 1e-6 >= sum, `${peer.name}: total below the sum of the recent requests`);
      }
      const ts = parsed.recentRequests.map((q) => q.timestamp);
      assert.deepStrictEqual([...ts].sort((a, b) => a - b), ts, `${peer.name}: recent requests not oldest first`);
    }
    return { type: f.type, name: f.name.toString("hex"), masked };
  });
}

const timingCases = [
  { name: "echo, getServerTiming, reset, getServerTiming", input: bytes(echoReq("a"), request("getServerTiming", ""), request("resetServerTiming", ""), request("getServerTiming", "")) },
  { name: "ring of 5, errors counted, timing requests not counted",
    input: bytes(echoReq("1"), request("nope", ""), initReq, request("getServerTiming", ""), echoReq("2"), echoReq("3"), request("x", ""), echoReq("4"),
      request("getServerTiming", ""), request("resetServerTiming", ""), echoReq("5"), request("getServerTiming", "")) },
  { name: "getServerTiming first, nothing counted yet", input: request("getServerTiming", "") },
  { name: "ping is counted", input: bytes(request("ping", ""), echoReq("x"), request("getServerTiming", "")) },
  { name: "odd method names inside the timing JSON", input: bytes(...['a"b', "x\ny", "<>&", "\u2028\u007f\u0001", Buffer.from([0xff, 0x41])].map((m) => request(m, "")), request("getServerTiming", "")) },
  { name: "1000 echoes then getServerTiming", input: bytes(...Array.from({ length: 1000 }, (_, i) => echoReq(`${i}`)), request("getServerTiming", "")) },
  { name: "--timing=true", args: ["--api", "--timing=true"], input: bytes(echoReq("a"), request("getServerTiming", "")) },
  { name: "timing then an error exit (replies before it kept)", input: bytes(echoReq("a"), request("getServerTiming", ""), [0x92]) },
];

// API 7.1: a batch is one request named batchRequests, each continuation one
// more, a refused one too; its items are not counted.
const batch3 = { requests: [{ method: "echo", params: 1 }, { method: "ping" }, { method: "nope" }] };
const batchTimingCases = [
  { name: "a 3-item batch is one request", input: bytes(request("batchRequests", JSON.stringify(batch3)), request("getServerTiming", "")) },
  { name: "each page of a batch is one request, a spent token and bad params too",
    input: bytes(...[{ ...batch3, maxResponseBytesPerPage: 1 }, { continuationToken: "api-session-1-1", maxResponseBytesPerPage: 1 },
      { continuationToken: "api-session-1-2" }, { continuationToken: "api-session-1-2" }].map((p) => request("batchRequests", JSON.stringify(p))),
    request("batchRequests", '{"requests":[],"maxResponseBytesPerPage":18446744073709551615}'), echoReq("x"), request("getServerTiming", "")) },
  { name: "a batch of 7 between other requests, the ring of 5 holding it once",
    input: bytes(echoReq("1"), request("batchRequests", JSON.stringify({ requests: Array.from({ length: 7 }, (_, i) => ({ method: "echo", params: i })) })),
      request("ping", ""), request("getServerTiming", "")) },
];


/** A sync session driven one reply at a time (to follow continuation tokens from the replies). */
function syncSession(peer, args) {
  requireBinary(peer);
  const child = spawn(peer.path, args, { cwd: scratch, stdio: ["pipe", "pipe", "pipe"] });
  let out = Buffer.alloc(0);
  let stderr = "";
  let taken = 0;
  let waiter = null;
  child.stderr.on("data", (d) => { stderr += d; });
  child.stdout.on("data", (d) => { out = Buffer.concat([out, d]); waiter?.(); });
  const closed = new Promise((res) => child.on("close", (status, signal) => { waiter?.(); res({ status, signal }); }));
  let exited = false;
  closed.then(() => { exited = true; });
  const kill = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
  child.stdin.on("error", () => {});
  return {
    /** Sends one Request; resolves to its reply frame. */
    async call(method, payload) {
      child.stdin.write(request(method, payload));
      for (;;) {
        const { frames } = parseFrames(out);
        if (frames.length > taken) return frames[taken++];
        if (exited) throw new Error(`${peer.name} exited before replying: ${stderr}`);
        await new Promise((res) => { waiter = res; });
      }
    },
    async end() {
      child.stdin.end();
      const r = await closed;
      clearTimeout(kill);
      return { ...r, stderr };
    },
  };
}

/**
 * The transcript of a batch followed to its last page: every reply frame's
 * bytes. The token comes from each reply, and every continuation asks for
 * the same page size.
 */
async function followBatch(session, requests, limit, log) {
  let frame = await session.call("batchRequests", JSON.stringify({ requests, maxResponseBytesPerPage: limit }));
  for (let pages = 1; ; pages++) {
    log.push(frame.raw.toString("latin1"));
    if (frame.type !== T.Response || pages > requests.length + 2) return;
    const token = JSON.parse(frame.payload.toString("utf8")).continuationToken;
    if (token === undefined) return;
    frame = await session.call("batchRequests", JSON.stringify({ continuationToken: token, maxResponseBytesPerPage: limit }));
  }
}

function batchPages(v, THEIRS) {
  const args = withDialect(v, ["--api"]);
  const three = [{ method: "echo", params: "aaaa" }, { method: "ping" }, { method: "echo", params: [1, 2, 3] }];
  test("batchRequests pages: a 3-item batch at every maxResponseBytesPerPage from 1 to a page that holds it all, tokens followed from the replies", async () => {
    const whole = JSON.parse(dialectOf(v).batch.page1).responses.length;  // a recorded reply parses
    assert.equal(whole, 1);
    const sweep = async (peer) => {
      const s = syncSession(peer, args);
      const log = [];
      // The single-page reply's size bounds the sweep: past it the batch fits one page.
      const one = await s.call("batchRequests", JSON.stringify({ requests: three }));
      log.push(one.raw.toString("latin1"));
      for (let limit = 1; limit <= one.payload.length + 2; limit++) await followBatch(s, three, limit, log);
      // The last page's token is spent: using it again is an Error.
      log.push((await s.call("batchRequests", JSON.stringify({ continuationToken: "api-session-1-1" }))).raw.toString("latin1"));
      return { log, ...(await s.end()) };
    };
    const [theirs, ours] = await Promise.all([sweep(THEIRS), sweep(SPINRPC)]);
    assert.deepStrictEqual({ status: theirs.status, stderr: theirs.stderr }, { status: 0, stderr: "" }, `${v.id}'s server`);
    // Pages of 1, 2 and 3 entries all occur.
    const sizes = new Set(theirs.log.map((r) => (r.match(/"method":/g) ?? []).length));
    assert.ok([1, 2, 3].every((n) => sizes.has(n)), `page sizes seen: ${[...sizes]}`);
    assert.deepStrictEqual({ status: ours.status, stderr: ours.stderr }, { status: 0, stderr: "" }, "spinrpc-server");
    for (let i = 0; i < Math.max(ours.log.length, theirs.log.length); i++) {
      assert.equal(ours.log[i], theirs.log[i], `reply ${i} differs (of ${theirs.log.length} from ${v.id}'s server, ${ours.log.length} from spinrpc-server)`);
    }
  });
  test("batchRequests pages: two batches paged at once, each followed by its own tokens, items of different sizes", async () => {
    const a = Array.from({ length: 7 }, (_, i) => ({ method: "echo", params: "x".repeat(i * 13) }));
    const b = [{ method: "nope" }, { method: "ping" }, { method: "batchRequests" }, { method: "echo", params: { k: [1, 2] } }];
    const both = async (peer) => {
      const s = syncSession(peer, args);
      const log = [];
      for (const limit of [1, 30, 60, 90, 120]) {
        let ra = await s.call("batchRequests", JSON.stringify({ requests: a, maxResponseBytesPerPage: limit }));
        let rb = await s.call("batchRequests", JSON.stringify({ requests: b, maxResponseBytesPerPage: limit }));
        for (let k = 0; k < 20 && (ra || rb); k++) {
          for (const [which, r] of [["a", ra], ["b", rb]]) {
            if (!r) continue;
            log.push(`${which} ${r.raw.toString("latin1")}`);
            const token = r.type === T.Response ? JSON.parse(r.payload.toString("utf8")).continuationToken : undefined;
            const next = token && await s.call("batchRequests", JSON.stringify({ continuationToken: token, maxResponseBytesPerPage: limit }));
            if (which === "a") ra = next; else rb = next;
          }
        }
      }
      return { log, ...(await s.end()) };
    };
    const [theirs, ours] = await Promise.all([both(THEIRS), both(SPINRPC)]);
    assert.deepStrictEqual({ status: theirs.status, stderr: theirs.stderr }, { status: 0, stderr: "" }, `${v.id}'s server`);
    assert.deepStrictEqual(ours.log, theirs.log);
    assert.deepStrictEqual({ status: ours.status, stderr: ours.stderr }, { status: 0, stderr: "" }, "spinrpc-server");
  });
}

// SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXFSZ while waiting for
// input: both serve on (a C process dies of them by default).
async function survives(peer, args) {
  requireBinary(peer);
  const child = spawn(peer.path, args, { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = Buffer.alloc(0);
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; });
  const replies = (n) => new Promise((res) => {
    const check = () => { if (parseFrames(stdout).frames.length >= n) { child.stdout.off("data", on); res(); } };
    const on = (d) => { stdout = Buffer.concat([stdout, d]); check(); };
    child.stdout.on("data", on);
    check();
  });
  const closed = new Promise((res) => child.once("close", (status, signal) => res({ status, signal })));
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  try {
    child.stdin.write(request("echo", '"1"'));
    await replies(1);  // serving, now waiting for input
    for (const sig of ["SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF", "SIGXFSZ"]) child.kill(sig);
    child.stdin.on("error", () => {});
    child.stdin.write(request("echo", '"2"'));
    await Promise.race([replies(2), closed]);
    child.stdin.end();
    const { status, signal } = await closed;
    return { status, signal, stderr, replies: parseFrames(stdout).frames.length };
  } finally {
    clearTimeout(timer);
  }
}

const cli = [
  { name: "unknown flag --bogus", args: ["--api", "--bogus"], status: 2, compare: { stdout: true, stderr: false }, stderrNonEmpty: true },
  { name: "unknown flag -x", args: ["--api", "-x"], status: 2, compare: { stdout: true, stderr: false }, stderrNonEmpty: true },
  { name: "--help", args: ["--help"], status: 0, compare: { stdout: false, stderr: false } },
  // tsgo's API mode parses flags with flag.ContinueOnError and exits 2 on
  // any parse error, -help included (observed on 7.0.0-dev.20260707.2).
  { name: "--api --help", args: ["--api", "--help"], status: 2, compare: { stdout: true, stderr: false } },
  { name: "--api -h", args: ["--api", "-h"], status: 2, compare: { stdout: true, stderr: false } },
  // --version is a request outside API mode only; tsgo's API flag set does
  // not know it (observed on 7.0.0-dev.20260707.2). stdout differs: its
  // own test below.
  { name: "--version", args: ["--version"], status: 0, compare: { stdout: false, stderr: true } },
  { name: "--api --version", args: ["--api", "--version"], status: 2, compare: { stdout: true, stderr: false }, stderrNonEmpty: true },
  { name: "--cwd without a value", args: ["--api", "--cwd"], status: 2, compare: { stdout: true, stderr: false }, stderrNonEmpty: true },
  // tsgo panics ("StdioServerOptions.Cwd is required"), exit 2.
  { name: "--cwd empty", args: ["--api", "--cwd", ""], input: initReq, status: 2, compare: { stdout: true, stderr: false }, stderrNonEmpty: true },
  { name: "--cwd= empty", args: ["--api", "--cwd="], input: initReq, status: 2, compare: { stdout: true, stderr: false }, stderrNonEmpty: true },
];

for (const v of VERSIONS) {
  const THEIRS = versionPeer(v);
  const argv = (args) => withDialect(v, args);
  const cases = buildCases(v);
  describe(`${v.id} (${v.name}@${v.version}, API ${v.dialect}): spinrpc-server vs its server`, () => {
    describe("byte for byte", () => {
      test("both binaries are present", () => {
        requireBinary(THEIRS);
        requireBinary(SPINRPC);
      });
      for (const c of cases) {
        test(c.name, () => {
          const opts = { cwd: c.cwd, env: c.env };
          const args = argv(c.args ?? ["--api"]);
          const theirs = foldGoWording(run(THEIRS, args, c.input ?? Buffer.alloc(0), opts));
          assertPin(c, theirs);
          const ours = run(SPINRPC, args, c.input ?? Buffer.alloc(0), opts);
          if (c.differs) assertOurs({ ...c, args }, ours, theirs);
          else assertSamePeers({ ...c, args }, ours, theirs);
        });
      }
    });

    if (NEWEST.get(v.dialect) === v) everyScalar(v, THEIRS);
    if (dialectOf(v).batchRequests) describe("batchRequests pages, tokens from the replies", () => batchPages(v, THEIRS));

    describe("--timing (structural)", () => {
      for (const c of [...timingCases, ...(dialectOf(v).batchRequests ? batchTimingCases : [])]) {
        test(c.name, () => {
          const args = argv(c.args ?? ["--api", "--timing"]);
          const theirs = foldGoWording(run(THEIRS, args, c.input));
          const ours = run(SPINRPC, args, c.input);
          const ctx = describeCase({ ...c, args }, ours, theirs);
          assert.deepStrictEqual({ status: ours.status, stderr: ours.stderr }, { status: theirs.status, stderr: theirs.stderr }, ctx);
          const want = timingSkeleton(THEIRS, theirs, c);
          const got = timingSkeleton(SPINRPC, ours, c);
          assert.deepStrictEqual(got, want, ctx);
        });
      }
    });

    describe("--pipe, a client that closes with its replies unread", () => {
      // The connection is reset, not ended: tsgo exits 1 ("read unix PATH->@:
      // read: connection reset by peer"); spinrpc-server exits 1 with its own
      // line for a reply the client did not read (docs/PROTOCOL.md). In 7.1
      // --pipe PATH is a directory holding PATH/socket, for both.
      const pipeDir = v.dialect === "7.1";
      for (const [what, input] of [["one echo", request("echo", '"x"')], ["an echo and half a frame", Buffer.concat([request("echo", '"x"'), request("echo", '"y"').subarray(0, 5)])]]) {
        test(what, async () => {
          const args = argv(["--api", "--cwd", "/"]);
          const [theirs, ours] = await Promise.all([
            closeWithRepliesUnread(THEIRS, args, input, scratch, { pipeDir }),
            closeWithRepliesUnread(SPINRPC, args, input, scratch, { pipeDir }),
          ]);
          assert.equal(theirs.status, 1, `${THEIRS.name}: ${JSON.stringify(theirs)}`);
          assert.match(theirs.stderr, /connection reset by peer/);
          assert.equal(ours.status, 1, `spinrpc-server: ${JSON.stringify(ours)}`);
          assert.equal(ours.stderr, "spinrpc-server: the client closed the connection before reading a reply\n");
          assert.equal(ours.socketLeft, false);
        });
      }
    });

    test("signals Go's runtime catches and ignores: both answer the next request and exit 0 at EOF", async () => {
      const args = argv(["--api", "--cwd", "/"]);
      const [theirs, ours] = await Promise.all([survives(THEIRS, args), survives(SPINRPC, args)]);
      const want = { status: 0, signal: null, stderr: "", replies: 2 };
      assert.deepStrictEqual(theirs, want, THEIRS.name);
      assert.deepStrictEqual(ours, want, "spinrpc-server");
    });

    describe("command line", () => {
      for (const c of cli) {
        test(`${c.name} -> exit ${c.status}`, () => {
          const args = argv(c.args);
          const theirs = run(THEIRS, args, c.input ?? Buffer.alloc(0));
          assert.equal(theirs.status, c.status, `${THEIRS.name} no longer exits ${c.status} for ${JSON.stringify(args)}\n    ${show(theirs)}`);
          const ours = run(SPINRPC, args, c.input ?? Buffer.alloc(0));
          assertSamePeers({ ...c, args }, ours, theirs, c.compare);
          if (c.stderrNonEmpty) assert.notEqual(ours.stderr.trim(), "", `spinrpc-server ${JSON.stringify(args)} printed nothing on stderr`);
        });
      }
    });
  });
}

// ── the dialect spinrpc-server picks ─────────────────────────────────
//
// A 7.0 command line (no 7.1 flag) is answered in 7.0's shapes; --ts-api and
// SPINRPC_TS_API force a version whatever the command line says. Judged
// against the real servers: the newest 7.0 and 7.1 versions in VERSIONS.
describe("dialect selection: spinrpc-server answers the dialect the command line names", () => {
  const v70 = NEWEST.get("7.0");
  const v71 = NEWEST.get("7.1");
  // What differs between the dialects: initialize's shape and --cwd, a
  // Unicode 17 character's quoting, batchRequests, the transport error.
  const input = bytes(initReq, request("\u20c1\u1c89", ""), request("batchRequests", '{"requests":[{"method":"ping"}]}'), frame(T.CallResponse, "", ""));
  const base = ["--cwd", "a/../b"];
  const noApi = { ...process.env }; delete noApi.SPINRPC_TS_API;
  const sel = [
    // [name, the real version, its args, our args, our env]
    ["a 7.0 command line is answered in 7.0", v70, ["--api", ...base], ["--api", ...base], noApi],
    ["a 7.1 command line (--useCaseSensitiveFileNames=true) is answered in 7.1", v71, ["--api", "--useCaseSensitiveFileNames=true", ...base], ["--api", "--useCaseSensitiveFileNames=true", ...base], noApi],
    ["--useCaseSensitiveFileNames=false: 7.1, caseSensitivity 0", v71, ["--api", "--useCaseSensitiveFileNames=false", ...base], ["--api", "--useCaseSensitiveFileNames=false", ...base], noApi],
    ["--useCaseSensitiveFileNames bare: 7.1", v71, ["--api", "--useCaseSensitiveFileNames", ...base], ["--api", "--useCaseSensitiveFileNames", ...base], noApi],
    ["--runExternalCode: 7.1", v71, ["--api", "--runExternalCode", ...base], ["--api", "--runExternalCode", ...base], noApi],
    ["--ts-api=7.1 forces 7.1 on a 7.0 command line", v71, ["--api", "--useCaseSensitiveFileNames=true", ...base], ["--api", "--ts-api=7.1", ...base], noApi],
    ["SPINRPC_TS_API=7.1 forces 7.1 on a 7.0 command line", v71, ["--api", "--useCaseSensitiveFileNames=true", ...base], ["--api", ...base], { ...noApi, SPINRPC_TS_API: "7.1" }],
    ["--ts-api=7.0 forces 7.0 on a 7.1 command line", v70, ["--api", ...base], ["--api", "--useCaseSensitiveFileNames=true", "--ts-api=7.0", ...base], noApi],
    ["SPINRPC_TS_API=7.0 forces 7.0 on a 7.1 command line", v70, ["--api", ...base], ["--api", "--useCaseSensitiveFileNames=true", ...base], { ...noApi, SPINRPC_TS_API: "7.0" }],
    ["--ts-api=7.0 wins over SPINRPC_TS_API=7.1", v70, ["--api", ...base], ["--api", "--ts-api=7.0", ...base], { ...noApi, SPINRPC_TS_API: "7.1" }],
  ];
  for (const [name, v, theirArgs, ourArgs, env] of sel) {
    test(`${name} (as ${v?.id ?? "a version not in VERSIONS"})`, (t) => {
      if (!v) { t.skip(`no ${name.includes("7.0") ? "7.0" : "7.1"} version in SPINRPC_INTEROP_VERSIONS`); return; }
      const theirs = run(versionPeer(v), theirArgs, input);
      const D = dialectOf(v);
      // The recorded shapes hold for the real server (and so, compared, for ours).
      const frames = parseFrames(theirs.stdout).frames.map((f) => f.payload.toString("utf8"));
      assert.equal(theirs.stderr, D.transportError, `${v.id}'s server`);
      assert.ok(frames[0].startsWith(D.initialize("").slice(0, 15)), frames[0]);
      assert.equal(frames[1], `api: invalid request: unknown API method ${D.unicode17}`);
      assert.equal(frames[2].startsWith('{"responses":['), D.batchRequests, frames[2]);
      const ours = run(SPINRPC, ourArgs, input, { env });
      assertSamePeers({ name, args: ourArgs, input }, ours, theirs);
    });
  }
});

test("--version names spinrpc's version and every TypeScript version this suite runs, under its dialect", () => {
  const ours = run(SPINRPC, ["--version"], Buffer.alloc(0));
  assert.equal(ours.status, 0, show(ours));
  const text = ours.stdout.toString();
  // spinrpc-server 0.1.0 (TypeScript 7 API 7.0: typescript 7.0.2, @typescript/native-preview 7.0.0-dev.20260707.2; 7.1: typescript 7.1.0-beta, 7.1.0-dev.20261105.1)
  const m = /^spinrpc-server \d+\.\d+\.\d+ \(TypeScript 7 API (.+)\)\n$/.exec(text);
  assert.ok(m, `spinrpc-server --version printed ${JSON.stringify(text)}`);
  const listed = new Map();  // dialect -> [{ name, version }]
  for (const part of m[1].split("; ")) {
    const [, dialect, items] = /^(\d+\.\d+): (.+)$/.exec(part) ?? [];
    assert.ok(dialect, `a part of --version that names no dialect: ${JSON.stringify(part)}`);
    let name = null;
    listed.set(dialect, items.split(", ").map((item) => {
      const words = item.split(" ");
      if (words.length === 2) name = words[0];
      return { name, version: words.at(-1) };
    }));
  }
  for (const v of VERSIONS) {
    // Each version's own server says which version it is.
    const theirs = run(versionPeer(v), ["--version"], Buffer.alloc(0));
    assert.equal(theirs.stdout.toString(), `Version ${v.version}\n`, `${v.id}'s server --version`);
    assert.ok((listed.get(v.dialect) ?? []).some((x) => x.name === v.name && x.version === v.version),
      `spinrpc-server --version does not list ${v.name} ${v.version} under API ${v.dialect}: ${JSON.stringify(text)}`);
  }
});


// ── spinrpc-only: the max message size (tsgo has none) ───────────────

describe("spinrpc-server only: frames beyond the max message size", () => {
  const over = [
    { name: "payload bin32 0xffffffff", input: bytes([0x93, 1, 0xc4, 4, ...E], bin32Header(0xffffffff)), before: "" },
    { name: "payload bin32 256 MiB + 1", input: bytes([0x93, 1, 0xc4, 4, ...E], bin32Header(256 * 1024 * 1024 + 1), [1, 2, 3]), before: "" },
    { name: "name bin32 0xffffffff", input: bytes([0x93, 1], bin32Header(0xffffffff)), before: "" },
    { name: "after an echo (its reply is still written)", input: bytes(echoReq("ok"), [0x93, 1, 0xc4, 4, ...E], bin32Header(0xffffffff)), before: echoReply("ok") },
  ];
  for (const c of over) {
    test(`${c.name}: refused with one stderr line, exit 1`, () => {
      const r = run(SPINRPC, ["--api"], c.input);
      const ctx = `input ${hexdump(c.input, 64)}\n    ${show(r)}`;
      assert.equal(r.status, 1, ctx);
      assert.equal(r.stdout.toString("hex"), Buffer.from(c.before).toString("hex"), ctx);
      assert.match(r.stderr, /^[^\n]+\n$/, `want exactly one non-empty stderr line\n    ${ctx}`);
      assert.doesNotMatch(r.stderr, /^unexpected EOF/, ctx);
    });
  }
  test("--max-message-bytes 1000: a 500-byte echo passes, a 5000-byte one is refused", () => {
    const small = pseudo(500, 1);
    const input = bytes(echoReq(small), echoReq(pseudo(5000, 2)), echoReq("never"));
    const r = run(SPINRPC, ["--api", "--max-message-bytes", "1000"], input);
    const ctx = `input ${hexdump(input, 64)}\n    ${show(r)}`;
    assert.equal(r.status, 1, ctx);
    assert.ok(r.stdout.equals(echoReply(small)), `want exactly the 500-byte echo's reply on stdout\n    ${ctx}`);
    assert.match(r.stderr, /^[^\n]+\n$/, `want exactly one non-empty stderr line\n    ${ctx}`);
  });
  test("tsgo, for contrast, exits 0 silently on bin32 0xffffffff at EOF", () => {
    const r = run(versionPeer(VERSIONS[0]), withDialect(VERSIONS[0], ["--api"]), over[0].input);
    assert.deepStrictEqual({ status: r.status, stdout: r.stdout.length, stderr: r.stderr }, { status: 0, stdout: 0, stderr: "" });
  });
  test("refused as soon as the header arrives (stdin still open)", async () => {
    requireBinary(SPINRPC);
    const child = spawn(SPINRPC.path, ["--api"], { stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => { stderr += d; });
    child.stdout.resume();
    child.stdin.on("error", () => {});
    child.stdin.write(bytes([0x93, 1, 0xc4, 4, ...E], bin32Header(0xffffffff)));
    let timer;
    try {
      const status = await Promise.race([
        new Promise((res) => child.once("close", (code) => res(code))),
        new Promise((_, rej) => { timer = setTimeout(() => rej(new Error("spinrpc-server still waiting for the payload 5 s after an oversized header")), 5000); }),
      ]);
      assert.equal(status, 1);
      assert.match(stderr, /^[^\n]+\n$/);
    } finally {
      clearTimeout(timer);
      child.kill("SIGKILL");
      child.stdin.destroy();
    }
  });
});
