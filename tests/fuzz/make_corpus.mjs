// Writes the fuzz targets' seed corpora: tests/fuzz/corpus/<target>/seed-*.
//
//   node tests/fuzz/make_corpus.mjs
//
// Every malformed and EOF case of docs/PROTOCOL.md (#framing,
// #ends-and-errors), of tests/interop/conformance.test.mjs and of
// tests/protocol/frame_decoder_test.cpp, well-formed frames in every header
// encoding, and, for the server, request streams that drive the Call path of
// tests/fuzz/server_serve_fuzz.cpp's handlers. Files are small (under 2 KiB).
// Regenerating replaces the seed-* files and keeps everything else (crash-*
// files, which are findings kept as regression tests).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

// ── frame builders (docs/PROTOCOL.md#framing) ─────────────────────
const T = { Request: 1, CallResponse: 2, CallError: 3, Response: 4, Error: 5, Call: 6 };
const buf = (x) => (Buffer.isBuffer(x) ? x : typeof x === "string" ? Buffer.from(x, "utf8") : Buffer.from(x));
const bytes = (...parts) => Buffer.concat(parts.map(buf));
const bin8 = (x) => { const b = buf(x); return bytes([0xc4, b.length], b); };
const bin16 = (x) => { const b = buf(x); return bytes([0xc5, b.length >> 8, b.length & 0xff], b); };
const bin32 = (x) => { const b = buf(x); const h = Buffer.alloc(5); h[0] = 0xc6; h.writeUInt32BE(b.length, 1); return bytes(h, b); };
const bin32Header = (n) => { const h = Buffer.alloc(5); h[0] = 0xc6; h.writeUInt32BE(n, 1); return h; };
// The smallest header, as writers emit it.
const bin = (x) => { const b = buf(x); return b.length < 256 ? bin8(b) : b.length < 65536 ? bin16(b) : bin32(b); };
const frame = (type, name, payload) => bytes([0x93, type], bin(name), bin(payload));
const request = (method, payload) => frame(T.Request, method, payload);
const callResponse = (name, payload) => frame(T.CallResponse, name, payload);
const callError = (name, message) => frame(T.CallError, name, message);
const ECHO = [...Buffer.from("echo")];
const pseudo = (n, seed = 7) => { const b = Buffer.alloc(n); let x = seed; for (let i = 0; i < n; i++) { x = (x * 1103515245 + 12345) >>> 0; b[i] = x >>> 24; } return b; };

// ── cases both targets get: single frames, malformed bytes, EOF points ──
const framing = [];
const add = (list, name, input) => list.push([name, bytes(input)]);

for (const first of [0x92, 0x94, 0x90, 0x80, 0xdc, 0x00, 0x05, 0x7f, 0xc4, 0xff]) {
  add(framing, `first-byte-${hex(first)}`, [first, 1, 0xc4, 0, 0xc4, 0]);
}
add(framing, "first-byte-0x92-alone", [0x92]);
for (const t of [0, 7, 9, 0x7f]) add(framing, `unknown-type-${t}`, bytes([0x93, t, 0xc4, 4], ECHO, [0xc4, 0]));
add(framing, "type-9-then-eof", [0x93, 9]);
for (const t of [0, 9, 0x80, 0xff]) add(framing, `uint8-type-${hex(t)}`, [0x93, 0xcc, t, 0xc4, 0, 0xc4, 0]);
for (const m of [0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xca, 0xcb, 0xc0, 0xc2, 0xc3, 0xe0, 0xff, 0x80, 0x90, 0xa1, 0xc4]) {
  add(framing, `type-marker-${hex(m)}`, [0x93, m, 0, 1, 0xc4, 0, 0xc4, 0]);
}
add(framing, "type-marker-0xcd-then-eof", [0x93, 0xcd]);
for (const [what, mk] of [["fixstr-0xa4", [0xa4, ...ECHO]], ["fixstr-empty-0xa0", [0xa0]], ["str8-0xd9", [0xd9, 4, ...ECHO]],
  ["str16-0xda", [0xda, 0, 4, ...ECHO]], ["str32-0xdb", [0xdb, 0, 0, 0, 4, ...ECHO]], ["nil-0xc0", [0xc0]], ["true-0xc3", [0xc3]],
  ["fixarray-0x90", [0x90]], ["ext8-0xc7", [0xc7, 1, 1, 0]], ["fixint-0x04", [0x04]]]) {
  add(framing, `name-is-${what}`, bytes([0x93, 1], mk, [0xc4, 0]));
  add(framing, `payload-is-${what}`, bytes([0x93, 1, 0xc4, 4], ECHO, mk));
}
add(framing, "str-name-then-eof", [0x93, 1, 0xa4]);
add(framing, "first-error-in-wire-order", [0x93, 0x09, 0xa4]);
add(framing, "str8-name-before-str-payload", [0x93, 0x01, 0xd9, 0x00, 0xa4]);
const E = ECHO;
for (const [name, inp] of [
  ["empty", []], ["0x93", [0x93]], ["0x93-01", [0x93, 1]], ["0x93-cc", [0x93, 0xcc]],
  ["name-marker-no-length", [0x93, 1, 0xc4]], ["name-bin8-4-no-bytes", [0x93, 1, 0xc4, 4]],
  ["name-bin8-4-2-bytes", [0x93, 1, 0xc4, 4, E[0], E[1]]], ["name-bin8-4-3-bytes", [0x93, 1, 0xc4, 4, E[0], E[1], E[2]]],
  ["full-name-no-payload-marker", [0x93, 1, 0xc4, 4, ...E]], ["payload-marker-no-length", [0x93, 1, 0xc4, 4, ...E, 0xc4]],
  ["payload-bin8-1-no-byte", [0x93, 1, 0xc4, 4, ...E, 0xc4, 1]], ["payload-bin8-2-1-byte", [0x93, 1, 0xc4, 4, ...E, 0xc4, 2, 0x41]],
  ["name-bin16-marker-no-length", [0x93, 1, 0xc5]], ["name-bin16-half-length", [0x93, 1, 0xc5, 0]],
  ["name-bin32-3-of-4-length", [0x93, 1, 0xc6, 0, 0, 0]], ["name-bin32-marker-no-length", [0x93, 1, 0xc6]],
  ["payload-bin16-half-length", [0x93, 1, 0xc4, 4, ...E, 0xc5, 0]], ["payload-bin16-256-no-bytes", [0x93, 1, 0xc4, 4, ...E, 0xc5, 1, 0]],
  ["payload-bin16-256-255-bytes", [0x93, 1, 0xc4, 4, ...E, 0xc5, 1, 0, ...Buffer.alloc(255, 0x61)]],
  ["payload-bin32-1-of-4-length", [0x93, 1, 0xc4, 4, ...E, 0xc6, 0]],
  ["payload-bin32-1MiB-3-bytes", [0x93, 1, 0xc4, 4, ...E, 0xc6, 0, 0x10, 0, 0, 1, 2, 3]],
  ["payload-bin32-1MiB-no-bytes", [0x93, 1, 0xc4, 4, ...E, 0xc6, 0, 0x10, 0, 0]],
]) {
  add(framing, `eof-${name}`, inp);
}
// Limits (docs/PROTOCOL.md#where-spinrpc-server-differs-from-tsgo: message size limit).
add(framing, "limit-payload-bin32-0xffffffff", bytes([0x93, 1, 0xc4, 4], E, bin32Header(0xffffffff)));
add(framing, "limit-payload-bin32-256MiB-plus-1", bytes([0x93, 1, 0xc4, 4], E, bin32Header(256 * 1024 * 1024 + 1), [1, 2, 3]));
add(framing, "limit-payload-bin32-exactly-256MiB-frame", bytes([0x93, 1, 0xc4, 0], bin32Header(256 * 1024 * 1024 - 9)));
add(framing, "limit-name-bin32-0xffffffff", bytes([0x93, 1], bin32Header(0xffffffff)));
add(framing, "limit-name-bin16-0xffff", [0x93, 1, 0xc5, 0xff, 0xff]);
// Well-formed frames in every encoding.
add(framing, "echo-hi", request("echo", "hi"));
add(framing, "echo-empty", request("echo", ""));
add(framing, "echo-bytes-0-255", request("echo", Buffer.from(Array.from({ length: 256 }, (_, i) => i))));
add(framing, "echo-300-bytes-bin16", request("echo", pseudo(300)));
add(framing, "uint8-type-0xcc-0x01", bytes([0x93, 0xcc, 1], bin8("echo"), bin8("u8")));
add(framing, "name-and-payload-bin16", bytes([0x93, 1], bin16("echo"), bin16("b16")));
add(framing, "name-and-payload-bin32", bytes([0x93, 1], bin32("echo"), bin32("b32")));
add(framing, "empty-payload-bin16-then-bin32", bytes([0x93, 1], bin8("echo"), bin16(""), [0x93, 1], bin8("echo"), bin32("")));
for (const [t, n] of Object.entries(T).map(([k, v]) => [v, k])) add(framing, `type-${t}-${n}`, frame(t, "m", "p"));
add(framing, "two-frames", bytes(request("echo", "a"), request("echo", "b")));
add(framing, "frame-then-garbage", bytes(request("echo", "a"), [0x92, 0xff, 0xa4]));

// ── server streams: sessions, and the Call path of the fuzz handlers ──
const streams = [];
const echoReq = (p) => request("echo", p);
add(streams, "echo-then-0x93", bytes(echoReq("x"), [0x93]));
add(streams, "echo-then-half-bin16-length", bytes(echoReq("x"), [0x93, 1, 0xc4, 4, ...E, 0xc5, 0]));
add(streams, "echo-then-2-of-4-name-bytes", bytes(echoReq("x"), [0x93, 1, 0xc4, 4, E[0], E[1]]));
add(streams, "three-echoes-then-truncated-payload", bytes(echoReq("1"), echoReq("2"), echoReq("3"), [0x93, 1, 0xc4, 4, ...E], bin32Header(1 << 20), pseudo(200)));
add(streams, "echo-then-limit", bytes(echoReq("ok"), [0x93, 1, 0xc4, 4, ...E], bin32Header(0xffffffff)));
for (const t of [2, 3]) {
  add(streams, `type-${t}-no-call-open`, frame(t, "", ""));
  add(streams, `type-${t}-readFile-no-call-open`, frame(t, "readFile", '{"content":"x"}'));
  add(streams, `type-${t}-after-echo`, bytes(echoReq("one"), frame(t, "echo", "")));
}
for (const t of [4, 5, 6]) add(streams, `type-${t}-after-echo`, bytes(echoReq("A"), frame(t, "", "")));
add(streams, "empty-method", request("", ""));
add(streams, "empty-method-after-echo", bytes(echoReq("a"), request("", ""), echoReq("b")));
add(streams, "unknown-method-then-echo", bytes(request('a"b', ""), echoReq("after")));
add(streams, "unknown-method-odd-bytes", bytes(request(Buffer.from([0xff, 0x41, 0x0a, 0x7f, 0xe2, 0x80, 0xa8]), ""), echoReq("z")));
add(streams, "mixed-builtins", bytes(echoReq("a"), request("initialize", "null"), request("nope", "{}"),
  request("getServerTiming", ""), request("resetServerTiming", ""), request("getChannelStats", ""), echoReq("z")));
add(streams, "timing-ring", bytes(...["1", "2", "3", "4", "5", "6"].map(echoReq), request("x\ny", ""), request("getServerTiming", "")));
add(streams, "many-small-echoes", bytes(...Array.from({ length: 40 }, (_, i) => echoReq(`#${i}`))));
add(streams, "echoes-growing", bytes(...[10, 100, 300, 1000].map((n, i) => echoReq(pseudo(n, i + 1)))));
// The Call path.
const cb = (payload) => request("callback", payload);
add(streams, "callback-response", bytes(cb("readFile /a.ts"), callResponse("readFile", "contents"), echoReq("after")));
add(streams, "callback-error", bytes(cb("readFile /missing.ts"), callError("readFile", "no such file"), echoReq("after")));
add(streams, "callback-wrong-name", bytes(cb("readFile /a.ts"), callResponse("realpath", "x"), echoReq("after")));
add(streams, "callback-stray-response", bytes(cb("readFile /a.ts"), frame(T.Response, "readFile", "x"), echoReq("after")));
add(streams, "callback-stray-request", bytes(cb("readFile /a.ts"), request("echo", "x"), echoReq("after")));
add(streams, "callback-eof-between-frames", cb("readFile /a.ts"));
add(streams, "callback-eof-inside-response", bytes(cb("readFile /a.ts"), [0x93, 2, 0xc4, 8], Buffer.from("read")));
add(streams, "callback-malformed-response", bytes(cb("readFile /a.ts"), [0x92, 2, 0xc4, 0, 0xc4, 0]));
add(streams, "callback-big-response", bytes(cb("readFile /big.ts"), callResponse("readFile", pseudo(1500, 3)), echoReq("after")));
add(streams, "callback-empty-name", bytes(cb(""), callResponse("", "x")));
const loop = (name) => request("callbackLoop", name);
add(streams, "callbackLoop-mixed", bytes(loop("readFile"), callResponse("readFile", "a"), callError("readFile", "b"),
  frame(T.Response, "x", ""), callResponse("readFile", pseudo(400, 5)), echoReq("after")));
add(streams, "callbackLoop-eof-after-two", bytes(loop("realpath"), callResponse("realpath", "a"), callResponse("realpath", "b")));
add(streams, "callbackLoop-then-callback", bytes(loop("f"), ...["1", "2", "3", "4"].map((p) => callResponse("f", p)), cb("g x"), callResponse("g", "y")));
add(streams, "swallow-eof-during-call", request("swallow", "readFile"));
add(streams, "swallow-malformed-during-call", bytes(request("swallow", "readFile"), [0x92]));
add(streams, "swallow-answered", bytes(request("swallow", "f"), callResponse("f", "1"), callError("f", "2"), callResponse("g", "3"), echoReq("after")));
add(streams, "throw-then-echo", bytes(request("throw", "handler failed on purpose"), request("throw", ""), echoReq("after")));
add(streams, "throwInt-then-echo", bytes(request("throwInt", ""), echoReq("after")));
for (const p of ["readFile", "realpath", "", "eadFile", "readFile,realpath", ",readFile,", "readFil", "realpathx"]) {
  add(streams, `hasCallback-${p.replace(/,/g, "_") || "empty"}`, request("hasCallback", p));
}
// batchRequests (API 7.1; the target serves every input in 7.0 and 7.1,
// docs/PROTOCOL.md#batchrequests): pages, tokens, per-item errors, bad params.
const batch = (params) => request("batchRequests", typeof params === "string" ? params : JSON.stringify(params));
const items = (...methods) => methods.map((m) => (typeof m === "string" ? { method: m } : m));
add(streams, "batch-mixed", batch({ requests: items("ping", { method: "echo", params: { a: [1, "x"] } }, "nope", "initialize",
  "batchRequests", "getServerTiming", { method: "throw", params: "boom" }, { method: "callback", params: "readFile /a" }) }));
add(streams, "batch-pages", bytes(batch({ requests: items("ping", "ping", { method: "echo", params: "xyz" }), maxResponseBytesPerPage: 1 }),
  batch({ requests: [], continuationToken: "api-session-1-1", maxResponseBytesPerPage: 1 }),
  batch({ requests: [], continuationToken: "api-session-1-2" }), batch({ requests: [], continuationToken: "api-session-1-2" })));
add(streams, "batch-bad-params", bytes(batch("not json"), batch("5"), batch({ requests: 5 }), batch({ requests: [5] }),
  batch({ requests: [{ method: 5 }] }), batch({ continuationToken: 1 }), batch({ maxResponseBytesPerPage: "x" }), batch("null"), batch("{}")));
add(streams, "batch-callback-answered", bytes(batch({ requests: items({ method: "callback", params: "readFile /a" }, "ping") }),
  callResponse("readFile", "contents"), echoReq("after")));

// ── async mode: Content-Length framing and JSON-RPC bodies (docs/ASYNC.md) ──
const jsonRpc = [];
const lsp = (body) => { const b = buf(body); return bytes(`Content-Length: ${b.length}\r\n\r\n`, b); };
const rpc = (id, method, params) => JSON.stringify(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
const bodies = {
  "echo-object": rpc(1, "echo", { hello: "wörld", n: [1, 2.5] }),
  "echo-null": rpc(2, "echo", [null]),
  "ping": rpc(3, "ping", [null]),
  "initialize": rpc(0, "initialize", [null]),
  "unknown": rpc(4, "noSuchMethod", {}),
  "timing": rpc(5, "getServerTiming", [null]),
  "string-id": rpc("x\u00e9", "echo", "s"),
  "empty-id": '{"jsonrpc":"2.0","id":"","method":"ping"}',
  "response": '{"jsonrpc":"2.0","id":"api1","result":{"content":"x"}}',
  "error-response": '{"jsonrpc":"2.0","id":"api2","error":{"code":-32601,"message":"Unhandled method fileExists"}}',
  "notification": '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}',
  "null": "null", "empty-object": "{}", "batch": '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
  "spaced": '{"jsonrpc":"2.0","id":1,"method":"echo","params": {\r\n "a" :\t1 ,\n "b" : [ true , false , null ] } }',
  "escapes": '{"jsonrpc":"2.0","id":1,"method":"echo","params":"\\u003c\\u003e\\u0026 \\/ \\u00e9 \\u2028 \\uD83D\\uDE00 \\t\\u0001"}',
  "numbers": '{"jsonrpc":"2.0","id":1,"method":"echo","params":[1.50e+10,1E+2,0.1e-2,-0,-0.0e-0,1e400,123456789012345678901234567890]}',
  "dup": '{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1,"\\u0061":2}}',
  "bad-version": '{"jsonrpc":"1.0","id":1,"method":"ping"}',
  "float-id": '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
  "big-id": '{"jsonrpc":"2.0","id":2147483648,"method":"ping"}',
  "lone-surrogate": '{"jsonrpc":"2.0","id":1,"method":"echo","params":"\\ud800"}',
  "trailing": '{"jsonrpc":"2.0","id":1,"method":"ping"} x',
  "deep": '{"jsonrpc":"2.0","id":1,"method":"echo","params":' + "[".repeat(300) + "]".repeat(300) + "}",
};
for (const [name, body] of Object.entries(bodies)) add(jsonRpc, `async-${name}`, lsp(body));
add(jsonRpc, "async-two-in-one", bytes(lsp(bodies["echo-object"]), lsp(bodies.ping)));
add(jsonRpc, "async-bom", lsp(bytes([0xef, 0xbb, 0xbf], "{}")));
add(jsonRpc, "async-invalid-utf8", lsp(bytes('{"jsonrpc":"2.0","id":1,"method":"echo","params":"', [0xff], '"}')));
for (const [name, header] of Object.entries({
  "garbage": "Garbage\r\n", "lf-only-end": "Content-Length: 2\n\n{}", "lf-line": "Content-Length: 2\n\r\n{}",
  "lowercase": "content-length: 2\r\n\r\n{}", "zero": "Content-Length: 0\r\n\r\n", "negative": "Content-Length: -5\r\n\r\n",
  "hex": "Content-Length: 0x33\r\n\r\n", "huge": "Content-Length: 9223372036854775807\r\n\r\n",
  "overflow": "Content-Length: 9223372036854775808\r\n\r\n", "two-lengths": "Content-Length: 9\r\nContent-Length: 2\r\n\r\n{}",
  "content-type": "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}",
  "nbsp": "Content-Length:\u00a02\r\n\r\n{}", "eof-in-header": "Content-Len", "eof-after-block": "Content-Length: 5\r\n\r\n",
  "eof-in-body": "Content-Length: 5\r\n\r\n{}", "short": "Content-Length: 3\r\n\r\n{}}", "cr-only": "Content-Length: 2\r\r\r{}",
})) add(jsonRpc, `async-header-${name}`, header);

// Whole async sessions for server_serve_async: the server's calls to the
// client (tests/fuzz/server_serve_async_fuzz.cpp's handlers) and their answers.
const asyncSessions = [];
const call = (id, method, params = '"/x"') => lsp(rpc(id, method, JSON.parse(params)));
const answer = (n, result) => lsp(`{"jsonrpc":"2.0","id":"api${n}","result":${result}}`);
const errorAnswer = (n) => lsp(`{"jsonrpc":"2.0","id":"api${n}","error":{"code":-32601,"message":"Unhandled method readFile"}}`);
for (const [name, input] of Object.entries({
  "callback-answered": bytes(call(1, "callback"), answer(1, '{"content":"x"}'), lsp(bodies.ping)),
  "callback-error": bytes(call(1, "callback"), errorAnswer(1)),
  "callback-eof": call(1, "callback"),
  "callback-eof-in-answer": bytes(call(1, "callback"), "Content-Length: 40\r\n\r\n{\"jsonrpc\""),
  "callback-malformed-answer": bytes(call(1, "callback"), lsp('{"jsonrpc":"2.0","id":"api1","result":[1,]}')),
  "callback-request-meanwhile": bytes(call(1, "callback"), lsp(bodies["echo-object"]), answer(1, "null"), lsp(bodies.ping)),
  "callback-stray-answers": bytes(call(1, "callback"), answer(9, "1"), lsp('{"jsonrpc":"2.0","id":1,"result":2}'), lsp(bodies.notification), answer(1, '"r"')),
  "callback-loop": bytes(call(1, "callbackLoop", '{"p":[1,2]}'), answer(1, "true"), errorAnswer(2), answer(3, "false"), answer(4, "null")),
  "swallow-eof": call(1, "swallow"),
  "swallow-answered": bytes(call(1, "swallow"), answer(1, "1"), errorAnswer(2), answer(3, '"x"')),
  "throw": call(1, "throw", '"boom"'),
  "not-json-result": call(1, "notJson", "null"),
  "timing-reset": bytes(lsp(bodies.ping), lsp(rpc(2, "resetServerTiming", [null])), lsp(bodies.timing)),
})) add(asyncSessions, `session-${name}`, input);

// ── shm_ring: operations of the scribbler (tests/fuzz/shm_ring_fuzz.cpp) ──
// First byte: bit 0 the server spins. Then operations, each a byte and its
// arguments, little-endian.
const shmSessions = [];
const u16le = (n) => [n & 0xff, (n >> 8) & 0xff];
const u32le = (n) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];
const op = {
  frame: (nameLen, len, seed) => [0, nameLen, ...u16le(len), seed],
  raw: (nameLen, len, seed) => [1, nameLen, ...u16le(len), seed],
  head: (n) => [2, ...u32le(n)],
  nudge: (i) => [3, i], // 0 +1, 1 -1, 2 +size, 3 -size, 4 +size+1, 5 -(size+1), 6 +2^31, 7 +7
  tailSet: (n) => [4, 1, ...u32le(n)],
  tailNudge: (d) => [4, 0, d & 0xff, 0, 0, 0],
  closed: (v) => [5, v],
  asleep: (which, v) => [6, which, v],
  bytes: (offset, list) => [7, ...u16le(offset), list.length, ...list],
  pipe: () => [8],
  run: (n = 255) => [9, n],
  replyHead: (n) => [10, ...u32le(n)],
  header: (field, n) => [11, field, ...u32le(n)],
};
const session = (config, ...ops) => [config, ...ops.flat()];
// A frame header at the ring's start claiming a bin32 payload of `n` bytes.
const claims = (n) => [0x93, 1, 0xc4, 0, 0xc6, ...[n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]];
for (const [name, input] of Object.entries({
  "legit-small": session(0, op.frame(4, 10, 1), op.frame(0, 0, 2), op.run(), op.frame(8, 300, 3)),
  "legit-wrap": session(0, op.frame(4, 4000, 1), op.frame(4, 4096, 2), op.frame(1, 5000, 3), op.frame(4, 12000, 4)),
  "legit-spinning": session(1, op.frame(4, 10, 1), op.run(), op.frame(4, 9000, 2), op.run(), op.frame(4, 1, 3)),
  "head-past-ring": session(0, op.frame(4, 100, 1), op.run(), op.nudge(4)),
  "head-back": session(1, op.frame(4, 100, 1), op.run(), op.nudge(1)),
  "head-full-ring": session(0, op.frame(4, 100, 1), op.run(), op.nudge(2), op.run()),
  "head-far": session(0, op.head(0x80000000)),
  "raw-frames": session(0, op.raw(4, 50, 5), op.run(), op.raw(0, 4000, 6), op.run(), op.frame(4, 10, 7)),
  "raw-overrun": session(0, op.raw(4, 3000, 1), op.raw(4, 3000, 2), op.raw(4, 3000, 3)),
  "tail-back": session(0, op.frame(4, 3000, 1), op.frame(4, 3000, 2), op.run(), op.tailSet(0), op.frame(4, 3000, 3)),
  "tail-nudge": session(1, op.frame(4, 2000, 1), op.run(), op.tailNudge(-1), op.frame(4, 2000, 2), op.tailNudge(5)),
  "closed-early": session(0, op.frame(4, 100, 1), op.closed(1), op.frame(4, 100, 2)),
  "closed-flip": session(0, op.closed(1), op.closed(0), op.frame(4, 100, 1), op.closed(0xff)),
  "asleep-flags": session(0, op.asleep(0, 1), op.asleep(1, 1), op.asleep(2, 7), op.asleep(3, 1), op.frame(4, 5000, 1)),
  "claims-long-payload": session(0, op.bytes(0, claims(60000)), op.head(9), op.run()),
  "claims-over-limit": session(1, op.bytes(0, claims(0x100000)), op.head(9)),
  "pipe-byte": session(0, op.frame(4, 10, 1), op.run(), op.pipe(), op.run()),
  "reply-head": session(0, op.frame(4, 100, 1), op.replyHead(12345), op.frame(4, 100, 2)),
  "header-words": session(0, op.header(0, 0), op.header(1, 0), op.header(2, 7), op.header(3, 3), op.header(4, 0), op.frame(4, 100, 1)),
})) add(shmSessions, `session-${name}`, input);

// ── write ─────────────────────────────────────────────────────────────
write("decode_frame", framing);
write("json_rpc_decode", jsonRpc);
write("server_serve", [...framing, ...streams]);
write("server_serve_async", [...jsonRpc, ...asyncSessions]);
write("shm_ring", shmSessions);

function write(target, list) {
  const dir = join(here, "corpus", target);
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(dir)) if (f.startsWith("seed-")) rmSync(join(dir, f));
  const seen = new Set();
  for (const [name, input] of list) {
    if (seen.has(name)) throw new Error(`duplicate case name ${name}`);
    seen.add(name);
    if (input.length > 2048) throw new Error(`case ${name} is ${input.length} bytes; keep seeds small`);
    writeFileSync(join(dir, `seed-${name.replace(/[^A-Za-z0-9._-]/g, "_")}`), input);
  }
  console.log(`make_corpus: ${list.length} seeds in tests/fuzz/corpus/${target}/`);
}

function hex(b) {
  return "0x" + b.toString(16).padStart(2, "0");
}
