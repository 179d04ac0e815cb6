// Differential conformance in --async mode (JSON-RPC behind Content-Length
// headers, docs/ASYNC.md): the same byte stream and command line go to
// spinrpc-server and to the real tsgo. Exit status must be identical; stdout
// is compared as the set of replies keyed by id (tsgo answers concurrently,
// so their order is free), each reply byte for byte with its header; stderr
// is compared as text, and so is an error reply's message, with json v2's
// random "unable to" / "cannot" wording folded (Go picks one per process). A case that differs passes only through an entry of ALLOWED, each
// one a deliberate difference listed in docs/ASYNC.md; the tally
// (identical / deliberate / different) is printed at the end.
//
// tsgo exits at EOF without waiting for the requests it is still answering
// (docs/ASYNC.md, D5), so stdin is not closed with the input: it stays open
// until every request in the input has its reply (or the peer exits), and
// only then ends.

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spinrpcPeer, versionPeer, requireBinary, hexdump, closeWithRepliesUnread, connectWhenListening } from "./peers.mjs";
import { VERSIONS } from "./versions.mjs";
import { DIALECTS, dialectOf, withDialect } from "./goldens/dialects.mjs";
import { deliberateDifference } from "./differences.mjs";

const SPINRPC = spinrpcPeer();
const TIMEOUT_MS = Number(process.env.SPINRPC_CONFORMANCE_TIMEOUT_MS || 20_000);
// With every request answered, or nothing new on stdout for this long, the
// input ends (a hang guard for cases that expect fewer replies; not a timing
// assertion: both peers get the same treatment and the same bytes).
const QUIET_MS = 1500;
const CWD = "/virtual/probe-cwd";

const scratch = mkdtempSync(join(tmpdir(), "spinrpc-async-conformance-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

// ── messages ─────────────────────────────────────────────────────────

const buf = (x) => (Buffer.isBuffer(x) ? x : Buffer.from(x, "utf8"));
/** One message as the real client frames it. */
const msg = (body) => { const b = buf(body); return Buffer.concat([Buffer.from(`Content-Length: ${b.length}\r\n\r\n`), b]); };
const cat = (...parts) => Buffer.concat(parts.map(buf));
const req = (id, method, params) =>
  msg(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":${JSON.stringify(method)}${params === undefined ? "" : `,"params":${params}`}}`);
const echo = (id, params) => req(id, "echo", params);

/**
 * Splits stdout into messages. Each must have exactly the header tsgo
 * writes; whatever does not parse is returned as `rest`.
 */
function parseReplies(out) {
  const replies = [];
  let off = 0;
  while (off < out.length) {
    const m = /^Content-Length: (\d+)\r\n\r\n/.exec(out.subarray(off, off + 40).toString("latin1"));
    if (!m || off + m[0].length + Number(m[1]) > out.length) break;
    const body = out.subarray(off + m[0].length, off + m[0].length + Number(m[1]));
    let id;
    try { id = JSON.stringify(JSON.parse(body.toString("utf8")).id); } catch { id = "(unparsable)"; }
    replies.push({ id, raw: out.subarray(off, off + m[0].length + body.length).toString("latin1") });
    off += m[0].length + body.length;
  }
  return { replies, rest: out.subarray(off) };
}

/** How many of the input's messages are requests (id present, method non-empty). */
function countRequests(input) {
  let n = 0;
  let off = 0;
  while (off < input.length) {
    const end = input.indexOf("\r\n\r\n", off);
    if (end < 0) break;
    const lengths = [...input.subarray(off, end).toString("latin1").matchAll(/^Content-Length:\s*(\d+)\s*$/gm)];
    if (!lengths.length) break;
    const len = Number(lengths.at(-1)[1]);
    const body = input.subarray(end + 4, end + 4 + len);
    if (body.length < len) break;
    try {
      const v = JSON.parse(body.toString("utf8"));
      if (v && typeof v === "object" && "id" in v && v.id !== null && typeof v.method === "string" && v.method !== "") n++;
    } catch { /* a body the peers will refuse */ }
    off = end + 4 + len;
  }
  return n;
}

// ── running a peer ───────────────────────────────────────────────────

/**
 * Runs `peer` with args, writes `input`, keeps stdin open until `expect`
 * replies came (or stdout stayed quiet for QUIET_MS, or the peer exited),
 * then ends stdin and waits for the exit. Never hangs: SIGKILL after
 * TIMEOUT_MS.
 */
function runPeer(peer, args, input, { expect = countRequests(input) } = {}) {
  requireBinary(peer);
  return new Promise((resolve, reject) => {
    const child = spawn(peer.path, args, { cwd: scratch, stdio: ["pipe", "pipe", "pipe"] });
    const out = [];
    const err = [];
    let ended = false;
    let quiet;
    const end = () => { if (!ended) { ended = true; clearTimeout(quiet); child.stdin.end(); } };
    const rearm = () => { clearTimeout(quiet); quiet = setTimeout(end, QUIET_MS); };
    const kill = setTimeout(() => { child.kill("SIGKILL"); reject(new Error(`${peer.name} ${JSON.stringify(args)}: no exit within ${TIMEOUT_MS} ms`)); }, TIMEOUT_MS);
    child.stdout.on("data", (d) => {
      out.push(d);
      if (parseReplies(Buffer.concat(out)).replies.length >= expect) end(); else rearm();
    });
    child.stderr.on("data", (d) => err.push(d));
    child.stdin.on("error", () => {});  // the peer may exit before reading it all
    child.on("error", reject);
    child.on("close", (status, signal) => {
      clearTimeout(kill);
      clearTimeout(quiet);
      resolve({ status, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") });
    });
    child.stdin.write(input);
    rearm();
  });
}

/** The same over --pipe: connect, send, read until `expect` replies or quiet, disconnect. */
async function runPeerOverPipe(peer, v, input, { expect = countRequests(input) } = {}) {
  requireBinary(peer);
  const path = join(scratch, `${peer.name.replace(/\W/g, "_")}.sock`);
  const child = spawn(peer.path, withDialect(v, ["--api", "--async", "--cwd", CWD, "--pipe", path]), { stdio: ["ignore", "pipe", "pipe"] });
  const err = [];
  const stdout = [];
  child.stderr.on("data", (d) => err.push(d));
  child.stdout.on("data", (d) => stdout.push(d));
  const exited = new Promise((res) => child.on("close", (status, signal) => res({ status, signal })));
  const kill = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
  try {
    // 7.1: --pipe PATH is a directory holding PATH/socket.
    const socket = await connectWhenListening(peer, v.dialect === "7.1" ? join(path, "socket") : path, { timeoutMs: TIMEOUT_MS });
    const out = [];
    await new Promise((res) => {
      let quiet = setTimeout(res, QUIET_MS);
      socket.on("data", (d) => {
        out.push(d);
        clearTimeout(quiet);
        if (parseReplies(Buffer.concat(out)).replies.length >= expect) res(); else quiet = setTimeout(res, QUIET_MS);
      });
      socket.on("close", res);
      socket.write(input);
    });
    socket.end();
    const { status, signal } = await exited;
    return { status, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8"), processStdout: Buffer.concat(stdout), socketLeft: existsSync(path) };
  } finally {
    clearTimeout(kill);
    child.kill("SIGKILL");
  }
}

// ── comparing ────────────────────────────────────────────────────────

const foldStderr = (s) => s.replaceAll("json: unable to unmarshal", "json: cannot unmarshal");
/** A reply (header and body, latin1) with Go's wording folded and its Content-Length made to match. */
function foldReply(raw) {
  const at = raw.indexOf("\r\n\r\n") + 4;
  const body = foldStderr(raw.slice(at));
  return body === raw.slice(at) ? raw : `Content-Length: ${Buffer.byteLength(body, "latin1")}\r\n\r\n${body}`;
}
const keyed = (r) => { const { replies, rest } = parseReplies(r.stdout); return { replies: replies.map((x) => foldReply(x.raw)).sort(), rest: rest.toString("latin1") }; };
const show = (r) => `status ${r.status}${r.signal ? ` signal ${r.signal}` : ""}\n    stdout: ${hexdump(r.stdout, 200)}\n    stderr: ${JSON.stringify(r.stderr.slice(0, 400))}`;

/** What differs between the two runs, by aspect (empty: identical). */
function differences(ours, theirs) {
  const d = {};
  if (ours.status !== theirs.status || ours.signal !== theirs.signal) d.status = true;
  const a = keyed(ours);
  const b = keyed(theirs);
  if (JSON.stringify(a) !== JSON.stringify(b)) d.stdout = true;
  if (foldStderr(ours.stderr) !== foldStderr(theirs.stderr)) d.stderr = true;
  return d;
}

const oneLine = (s) => /^[^\n]+\n$/.test(s);
const subsetOf = (a, b) => { const rest = [...b]; return a.every((x) => { const i = rest.indexOf(x); if (i < 0) return false; rest.splice(i, 1); return true; }); };
const jsonClass = (s) => /^(jsontext|json):/.exec(s)?.[1];

/**
 * Deliberate differences, each a row of docs/ASYNC.md "Deliberate
 * differences": a case may differ from tsgo only in the way its entry says.
 */
const ALLOWED = {
  "json-error-text": {
    doc: "docs/ASYNC.md, Deliberate differences: JSON error texts without offsets and JSON Pointers",
    ok: (o, t, d) => !d.status && !d.stdout && o.status === 1 && oneLine(o.stderr) && oneLine(t.stderr) &&
      jsonClass(o.stderr) !== undefined && jsonClass(o.stderr) === jsonClass(t.stderr),
  },
  "length-limit": {
    doc: "docs/ASYNC.md, Deliberate differences: a Content-Length beyond --max-message-bytes is refused before allocating (tsgo: D2, D3)",
    ok: (o, t, d) => !d.stdout && o.status === 1 && /^jsonrpc: message of \d+ bytes exceeds/.test(o.stderr) && oneLine(o.stderr),
  },
  "header-limit": {
    doc: "docs/ASYNC.md, Deliberate differences: the header block is bounded (tsgo: D4)",
    ok: (o, t) => o.status === 1 && o.stdout.length === 0 && /^jsonrpc: header block exceeds the limit of \d+ bytes\n$/.test(o.stderr) &&
      t.status === 0,
  },
  "eof-inside-message": {
    doc: "docs/ASYNC.md, Deliberate differences: EOF inside a header or before the body is an error (tsgo: D7, exit 0)",
    ok: (o, t, d) => !d.stdout && t.status === 0 && t.stderr === "" && o.status === 1 &&
      /^jsonrpc: read (header|content): unexpected EOF\n$/.test(o.stderr),
  },
  "no-lost-replies": {
    doc: "docs/ASYNC.md, Deliberate differences: every request read is answered (tsgo: D5 loses replies at random)",
    ok: (o, t, d) => !d.status && !d.stderr && subsetOf(keyed(t).replies, keyed(o).replies),
  },
  "usage-instead-of-panic": {
    doc: "docs/ASYNC.md, Deliberate differences: --callbacks with an unknown or empty item, --cwd \"\" are usage errors (tsgo: D11, D12 panic)",
    ok: (o, t, d) => !d.status && !d.stdout && o.status === 2 && /^panic: /.test(t.stderr) && !/goroutine/.test(o.stderr),
  },
  "batch-params-error-text": {
    // deliberateDifference throws if docs/PROTOCOL.md no longer has the item.
    doc: `${deliberateDifference("batch-differences")} (API 7.1): batchRequests params that are not of its shape get tsgo's prefix \"api: invalid request: failed to unmarshal *api.BatchRequestsParams: \" and spinrpc's own account after it`,
    ok: (o, t, d) => !d.status && !d.stderr && maskBatchErrors(o) === maskBatchErrors(t),
  },
  "usage-text": {
    doc: "docs/PROTOCOL.md#command-line: a usage error is our program name, tsgo's message, then our usage block",
    ok: (o, t, d) => !d.status && !d.stdout && o.status === 2 &&
      o.stderr.split("\n")[0] === `spinrpc-server: ${t.stderr.split("\n")[0]}`,
  },
};

/** The replies keyed by id, with the text after tsgo's prefix of a batchRequests params error masked (and each reply's length with it). */
const BATCH_PARAMS_PREFIX = DIALECTS["7.1"].batch.paramsPrefix;
function maskBatchErrors(r) {
  const { replies, rest } = keyed(r);
  const head = `"message":"${JSON.stringify(BATCH_PARAMS_PREFIX).slice(1, -1)}`;
  const masked = replies.map((x) => {
    const i = x.indexOf(head);
    return i < 0 ? x : `${x.slice(0, i + head.length).replace(/^Content-Length: \d+/, "Content-Length: #")}#`;
  });
  return JSON.stringify({ replies: masked.sort(), rest });
}

const tally = { identical: [], deliberate: [], different: [] };
after(() => {
  const byEntry = {};
  for (const { entry } of tally.deliberate) byEntry[entry] = (byEntry[entry] ?? 0) + 1;
  console.log(`# async conformance tally: identical ${tally.identical.length}, deliberate ${tally.deliberate.length}` +
    ` (${Object.entries(byEntry).map(([k, v]) => `${k} ${v}`).join(", ")}), different ${tally.different.length}`);
  for (const { name } of tally.different) console.log(`#   different: ${name}`);
});

function judge(c, ours, theirs) {
  const d = differences(ours, theirs);
  const ctx = `case "${c.name}"\n  args: ${JSON.stringify(c.args)}\n  input: ${hexdump(c.input, 200)}` +
    `\n  tsgo:\n    ${show(theirs)}\n  spinrpc-server:\n    ${show(ours)}\n  differs in: ${Object.keys(d).join(", ")}`;
  if (!Object.keys(d).length) { tally.identical.push({ name: c.name }); return; }
  const entry = c.deliberate && ALLOWED[c.deliberate];
  if (entry && entry.ok(ours, theirs, d)) { tally.deliberate.push({ name: c.name, entry: c.deliberate }); return; }
  tally.different.push({ name: c.name });
  assert.fail(entry ? `${ctx}\n  not the deliberate difference "${c.deliberate}" (${entry.doc})` : ctx);
}

// ── the cases (docs/ASYNC.md's sections) ─────────────────────────────

const cases = [];
const add = (section, name, input, extra = {}) =>
  cases.push({ section, name: `§${section} ${name}`, input: buf(input), args: ["--api", "--async", "--cwd", CWD], ...extra });

// §1 command line
add(1, "-async (single dash)", echo(1, "1"), { args: ["--api", "-async", "--cwd", CWD] });
add(1, "--async=true", echo(1, "1"), { args: ["--api", "--async=true", "--cwd", CWD] });
add(1, "--async=T --cwd=DIR", echo(1, "1"), { args: ["--api", "--async=T", `--cwd=${CWD}`] });
add(1, "--async then a positional argument (ignored)", echo(1, "1"), { args: ["--api", "--async", "--cwd", CWD, "extra", "--bogus"] });
add(1, "--async after --", echo(1, "1"), { args: ["--api", "--async", "--cwd", CWD, "--", "--bogus"] });
add(1, "--cwd verbatim (rel/./dir/)", req(1, "initialize", "null"), { args: ["--api", "--async", "--cwd", "rel/./dir/"] });
add(1, "--cwd with quotes and non-ASCII", req(1, "initialize", "null"), { args: ["--api", "--async", "--cwd", '/a/"é"\\b'] });
add(1, "--callbacks= (empty: none)", echo(1, "1"), { args: ["--api", "--async", "--cwd", CWD, "--callbacks="] });
add(1, "--callbacks with every name", echo(1, "1"), { args: ["--api", "--async", "--cwd", CWD, "--callbacks=readFile,fileExists,directoryExists,getAccessibleEntries,realpath"] });
for (const list of ["bogus", "readFile,,realpath", "READFILE", "readFile,"]) {
  add(1, `--callbacks=${list}`, echo(1, "1"), { args: ["--api", "--async", "--callbacks=" + list], deliberate: "usage-instead-of-panic", expect: 0 });
}
// 7.1's callbacks: stat, writeFile, removeFile and NAME:SENTINEL items (an
// unknown item in 7.0, where tsgo panics).
const CALLBACKS_71 = "readFile,fileExists,directoryExists,getAccessibleEntries,realpath,stat,writeFile,removeFile";
const SENTINELS_71 = "readFile:error,fileExists:error,directoryExists:error,getAccessibleEntries:error,realpath:identity,realpath:error,stat:fakeStat,stat:error,writeFile:noop,writeFile:error,removeFile:noop,removeFile:error";
add(1, "--callbacks with 7.1's names", echo(1, "1"), { args: ["--api", "--async", "--cwd", CWD, `--callbacks=${CALLBACKS_71}`], deliberate: "usage-instead-of-panic" });
add(1, "--callbacks with 7.1's NAME:SENTINEL items", echo(1, "1"), { args: ["--api", "--async", "--cwd", CWD, `--callbacks=${SENTINELS_71}`], deliberate: "usage-instead-of-panic" });
for (const item of ["readFile:useOS", "readFile:bogus", "bogus:error", "readFile:", ":error", "stat:fakeStat:error"]) {
  add(1, `--callbacks=${item}`, echo(1, "1"), { args: ["--api", "--async", "--cwd", CWD, `--callbacks=${item}`], deliberate: "usage-instead-of-panic" });
}
add(1, '--cwd ""', echo(1, "1"), { args: ["--api", "--async", "--cwd", ""], deliberate: "usage-instead-of-panic", expect: 0 });
for (const [what, extra] of [["--bogus", ["--bogus"]], ["--pipe without a value", ["--pipe"]], ["--timing=maybe", ["--timing=maybe"]], ["---cwd", ["---cwd", "x"]], ["-=x", ["-=x"]], ["a second --api", ["--api"]]]) {
  add(1, `usage error: ${what}`, Buffer.alloc(0), { args: ["--api", "--async", ...extra], deliberate: "usage-text", expect: 0 });
}

// §2 framing
const B = '{"jsonrpc":"2.0","id":1,"method":"echo","params":"x"}';
const withHeader = (h, body = B) => cat(h, body);
add(2, "minimal header", withHeader(`Content-Length: ${B.length}\r\n\r\n`));
add(2, "no space after the colon", withHeader(`Content-Length:${B.length}\r\n\r\n`));
add(2, "tabs around the value", withHeader(`Content-Length:\t${B.length}\t\r\n\r\n`));
add(2, "NBSP and U+3000 around the value", withHeader(`Content-Length:\u00a0${B.length}\u3000\r\n\r\n`));
add(2, "leading zeros and +", withHeader(`Content-Length: +000${B.length}\r\n\r\n`));
add(2, "Content-Type too (ignored)", withHeader(`Content-Type: application/vscode-jsonrpc; charset=latin1\r\nContent-Length: ${B.length}\r\n\r\n`));
add(2, "empty name and NUL in a name (ignored)", withHeader(`: x\r\nX\0Y: z\r\nContent-Length: ${B.length}\r\n\r\n`));
add(2, "two lengths: the last wins", withHeader(`Content-Length: 3\r\nContent-Length: ${B.length}\r\n\r\n`));
add(2, "LF-only header line, CR LF block end", withHeader(`Content-Length: ${B.length}\n\r\n`));
add(2, "LF LF block end", withHeader(`Content-Length: ${B.length}\n\n`));
add(2, "lowercase name (ignored: no content length)", withHeader(`content-length: ${B.length}\r\n\r\n`));
add(2, "space before the colon (ignored)", withHeader(`Content-Length : ${B.length}\r\n\r\n`));
add(2, "garbage line", "Garbage\r\n");
add(2, "bare LF line", "\n");
add(2, "Go quoting of the bad line", cat(Buffer.from([0xff, 1, 0x7f, 9]), "é\u2028 x\r\n"));
for (const v of ["0x33", "5\r1", "", "５1", "1_0", "1.0", "1e2", "9223372036854775808", "-5", " 5 5"]) {
  add(2, `bad length ${JSON.stringify(v)}`, withHeader(`Content-Length: ${v}\r\n\r\n`));
}
add(2, "invalid length after a valid one", withHeader(`Content-Length: ${B.length}\r\nContent-Length: x\r\n\r\n`));
add(2, "zero length", "Content-Length: 0\r\n\r\n");
add(2, "no length at all", "X-Other: 1\r\n\r\n");
add(2, "two messages in one write", cat(echo(1, "1"), echo(2, "2")));
add(2, "too short a length (truncated JSON)", withHeader("Content-Length: 10\r\n\r\n"), { deliberate: "json-error-text" });
add(2, "EOF in a header line", "Content-Len", { deliberate: "eof-inside-message" });
add(2, "EOF after a header line", `Content-Length: ${B.length}\r\n`, { deliberate: "eof-inside-message" });
add(2, "EOF after the block", `Content-Length: ${B.length}\r\n\r\n`, { deliberate: "eof-inside-message" });
add(2, "CR-only line ends", `Content-Length: ${B.length}\r\r`, { deliberate: "eof-inside-message" });
add(2, "EOF inside the body", withHeader(`Content-Length: ${B.length}\r\n\r\n`, B.slice(0, 20)));
add(2, "echo then EOF inside the next header", cat(echo(1, "1"), "Content-Length: 5"), { deliberate: "eof-inside-message" });
add(2, "length 2^63-1 (tsgo: makeslice panic)", "Content-Length: 9223372036854775807\r\n\r\n", { deliberate: "length-limit" });
add(2, "length 300 MiB, no body (tsgo: allocates, then EOF)", "Content-Length: 314572800\r\n\r\n", { deliberate: "length-limit" });
add(2, "a 128 KiB header line (tsgo: no limit)", cat("X-Pad: ", "p".repeat(128 << 10), `\r\nContent-Length: ${B.length}\r\n\r\n`, B), { deliberate: "header-limit" });

// §3 JSON rules for incoming bodies
const fatalBodies = [
  ["invalid UTF-8", Buffer.from('{"jsonrpc":"2.0","id":1,"method":"echo","params":"\xff"}', "latin1")],
  ["byte order mark", cat(Buffer.from([0xef, 0xbb, 0xbf]), B)],
  ["raw control character", '{"jsonrpc":"2.0","id":1,"method":"echo","params":"\u0001"}'],
  ["lone surrogate", '{"jsonrpc":"2.0","id":1,"method":"echo","params":"\\ud800"}'],
  ["reversed surrogates", '{"jsonrpc":"2.0","id":1,"method":"echo","params":"\\udc00\\ud800"}'],
  ["bad escape", '{"jsonrpc":"2.0","id":1,"method":"echo","params":"\\x"}'],
  ["duplicate id", '{"jsonrpc":"2.0","id":1,"id":2,"method":"echo"}'],
  ["duplicate inside params", '{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1,"a":2}}'],
  ["duplicate deep inside params", '{"jsonrpc":"2.0","id":1,"method":"echo","params":[{"b":{"c":1,"c":1}}]}'],
  ["duplicate via escapes", '{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1,"\\u0061":2}}'],
  ["10000 nested arrays in params", `{"jsonrpc":"2.0","id":1,"method":"echo","params":${"[".repeat(10000)}${"]".repeat(10000)}}`],
  ["trailing garbage", `${B} x`],
  ["two values", `${B}{}`],
  ["trailing comma in an object", '{"jsonrpc":"2.0","id":1,"method":"echo",}'],
  ["trailing comma in an array", '{"jsonrpc":"2.0","id":1,"method":"echo","params":[1,]}'],
  ["leading zero", '{"jsonrpc":"2.0","id":1,"method":"echo","params":01}'],
  ["NaN", '{"jsonrpc":"2.0","id":1,"method":"echo","params":NaN}'],
  ["single quotes", "{'jsonrpc':'2.0'}"],
  ["a comment", '{"jsonrpc":"2.0",/*x*/"id":1,"method":"echo"}'],
  ["truncated literal", '{"jsonrpc":"2.0","id":1,"method":"echo","params":tru}'],
  ["batch array", `[${B}]`],
  ["number body", "5"],
  ["string body", '"x"'],
  ["boolean body", "true"],
  ["jsonrpc 1.0", '{"jsonrpc":"1.0","id":1,"method":"echo"}'],
  ["jsonrpc escaped 2\\u002e0", '{"jsonrpc":"2\\u002e0","id":1,"method":"echo"}'],
  ["jsonrpc a number", '{"jsonrpc":2,"id":1,"method":"echo"}'],
  ["id 1.5", '{"jsonrpc":"2.0","id":1.5,"method":"echo"}'],
  ["id 1e2", '{"jsonrpc":"2.0","id":1e2,"method":"echo"}'],
  ["id 2147483648", '{"jsonrpc":"2.0","id":2147483648,"method":"echo"}'],
  ["id -2147483649", '{"jsonrpc":"2.0","id":-2147483649,"method":"echo"}'],
  ["id true", '{"jsonrpc":"2.0","id":true,"method":"echo"}'],
  ["id an object", '{"jsonrpc":"2.0","id":{},"method":"echo"}'],
  ["method a number", '{"jsonrpc":"2.0","id":1,"method":5}'],
  ["method an array", '{"jsonrpc":"2.0","id":1,"method":[]}'],
  ["error a number", '{"jsonrpc":"2.0","id":1,"error":5}'],
  ["error code a string", '{"jsonrpc":"2.0","id":"api1","error":{"code":"x","message":"m"}}'],
  ["error code 2147483648 (a Go int32)", '{"jsonrpc":"2.0","id":"api1","error":{"code":2147483648,"message":"m"}}'],
  ["error code -2147483649", '{"jsonrpc":"2.0","id":"api1","error":{"code":-2147483649,"message":"m"}}'],
  ["error code 9223372036854775808", '{"jsonrpc":"2.0","id":"api1","error":{"code":9223372036854775808,"message":"m"}}'],
  ["error code 1.5", '{"jsonrpc":"2.0","id":"api1","error":{"code":1.5,"message":"m"}}'],
  ["error code out of range in a request", '{"jsonrpc":"2.0","id":1,"method":"echo","error":{"code":2147483648}}'],
  ["error data 1e400 (a Go float64)", '{"jsonrpc":"2.0","id":"api1","error":{"code":1,"message":"m","data":1e400}}'],
  ["error data: a number out of range, deep", '{"jsonrpc":"2.0","id":"api1","error":{"code":1,"data":[1e-400,{"x~/\\"\u00e9":[1,-2e999]}]}}'],
  ["error data: 1.7976931348623159e308 rounds past the largest float64", '{"jsonrpc":"2.0","id":"api1","error":{"code":1,"data":[1.7976931348623157e308,1.7976931348623159e308]}}'],
];
for (const [name, body] of fatalBodies) add(3, `fatal: ${name}`, msg(body), { deliberate: "json-error-text" });
add(3, "fatal after good requests (their replies)", cat(echo(1, "1"), echo(2, "2"), msg("[1]")), { deliberate: "no-lost-replies", expect: 2 });
add(3, "9999 nested arrays in params (accepted)", msg(`{"jsonrpc":"2.0","id":1,"method":"echo","params":${"[".repeat(9999)}${"]".repeat(9999)}}`));
add(3, "null and {} bodies are ignored", cat(msg("null"), msg("{}"), msg(" null "), echo(1, "1")));
add(3, "notification: no reply", cat(msg('{"jsonrpc":"2.0","method":"echo","params":1}'), echo(2, "2")));
add(3, "empty method with an id: a response, dropped", cat(msg('{"jsonrpc":"2.0","id":1,"method":"","params":1}'), echo(2, "2")));
add(3, "ID (wrong case) is an unknown member", cat(msg('{"jsonrpc":"2.0","ID":1,"method":"echo"}'), echo(2, "2")));
add(3, "error code null, data 1e-400 and 400 digits in result: taken", cat(msg('{"jsonrpc":"2.0","id":"api1","error":{"code":null,"message":null,"data":[1e-400,-0.0]}}'), msg(`{"jsonrpc":"2.0","id":"api2","result":[${"9".repeat(400)},1e400]}`), echo(2, "2")));
add(3, "response to no pending call: dropped", cat(msg('{"jsonrpc":"2.0","id":"api7","result":{"x":1}}'), msg('{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m","data":[1]}}'), echo(2, "2")));
add(3, "jsonrpc absent", msg('{"id":1,"method":"echo","params":"no version"}'));
add(3, "member order free, unknown members ignored", msg('{"params":[1],"extra":{"a":[1,{"b":null}]},"method":"echo","result":5,"error":null,"id":7,"jsonrpc":"2.0"}'));
add(3, "id null: a notification", cat(msg('{"jsonrpc":"2.0","id":null,"method":"echo","params":1}'), echo(2, "2")));
add(3, 'id "" is answered as 0 (tsgo: D9, kept)', req("", "echo", "1"));
add(3, "id -2147483648 and 2147483647", cat(req(-2147483648, "echo", "1"), req(2147483647, "echo", "2")));
add(3, "id -0 and 007", cat(msg('{"jsonrpc":"2.0","id":-0,"method":"echo"}'), msg('{"jsonrpc":"2.0","id":7,"method":"ping"}')));
add(3, "string ids with escapes", cat(msg('{"jsonrpc":"2.0","id":"\\u00e9/x","method":"echo","params":1}'), msg('{"jsonrpc":"2.0","id":"a\\"b\\\\\\n\\u2028","method":"echo","params":2}')));
add(3, "method null with an id: dropped", cat(msg('{"jsonrpc":"2.0","id":1,"method":null}'), echo(2, "2")));
add(3, "method with escapes", msg('{"jsonrpc":"2.0","id":1,"method":"\\u0065cho","params":"esc"}'));
add(3, "white space everywhere", msg(' \t\r\n{ "jsonrpc" : "2.0" ,\n "id" : 1 , "method" : "echo" , "params" : { "a" :\t1 ,\n "b" : [ true , false , null ] } }\n '));

// §4 replies: encoding of echoed values
add(4, "numbers as written", echo(1, '[1.50e+10,1E+2,0.1e-2,-0,-0.0e-0,1e400,123456789012345678901234567890,-1.5E-7]'));
add(4, "minimal escapes", echo(1, '"\\u003c\\u003e\\u0026 \\/ \\u00e9 \\u2028\\u2029 \\u007f\\u0080 \\uD83D\\uDE00"'));
add(4, "short escapes kept, others \\u00XX", echo(1, '"\\t\\n\\r\\b\\f \\u0001\\u001f\\u0000 \\"\\\\ \\u001B"'));
add(4, "object member order kept", echo(1, '{"b":[1,2],"a":"x","":{},"z":[]}'));
add(4, "params absent -> null", msg('{"jsonrpc":"2.0","id":1,"method":"echo"}'));
add(4, "params null", echo(1, "null"));
add(4, "the real client's [null]", echo(1, "[null]"));
add(4, "non-ASCII literal UTF-8", echo(1, JSON.stringify("wörld 😀 \u2028 \u00a0 \ufeff")));
add(4, "1 MiB string", echo(1, JSON.stringify("y".repeat(1 << 20))));
add(4, "deep but legal object nest", echo(1, `${'{"a":'.repeat(500)}1${"}".repeat(500)}`));

// §5 concurrency: replies keyed by id
add(5, "20 echoes in one write", cat(...Array.from({ length: 20 }, (_, i) => echo(i, `{"i":${i}}`))));
add(5, "1000 mixed requests in one write", cat(...Array.from({ length: 1000 }, (_, i) => (i % 3 === 0 ? req(i, "ping", "[null]") : i % 3 === 1 ? echo(i, `"${i}"`) : req(i, "nope", "{}")))));

// §6 methods
add(6, "ping with any params", cat(req(1, "ping"), req(2, "ping", "[null]"), req(3, "ping", '{"x":1}')));
for (const p of ["null", "[null]", "{}", '"x"', "5"]) add(6, `initialize with ${p}`, req(1, "initialize", p));
add(6, "getServerTiming without --timing", req(1, "getServerTiming", "[null]"));
add(6, "resetServerTiming without --timing", cat(req(1, "resetServerTiming", "[null]"), req(2, "getServerTiming")));
add(6, "unknown method", req(1, "noSuchMethod", "{}"));
add(6, "method names are case-sensitive", cat(req(1, "Echo", "1"), req(2, "PING"), req(3, "Initialize")));
add(6, "Go quoting in the unknown-method message", req(1, 'a"bé\u0001\u2028\\', "null"));
add(6, "Go quoting: \\a \\v DEL, U+FEFF, U+10FFFF", req(1, "\u0007\u000b\u007f\ufeff\u{10FFFF}", "null"));

// §7 --callbacks: the built-ins never call back; stray responses dropped
add(7, "echo and initialize with every callback", cat(echo(1, "1"), req(2, "initialize", "null")), { args: ["--api", "--async", "--cwd", CWD, "--callbacks=readFile,fileExists,directoryExists,getAccessibleEntries,realpath"] });
add(7, "a response to an unknown call id is dropped", cat(msg('{"jsonrpc":"2.0","id":"api1","result":{"content":"x"}}'), echo(1, "1")), { args: ["--api", "--async", "--cwd", CWD, "--callbacks=readFile"] });

// §8 cancellation
add(8, "$/cancelRequest notification ignored", cat(msg('{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}'), echo(1, "1")));
add(8, "$/cancelRequest as a request: unknown method", req(1, "$/cancelRequest", '{"id":0}'));

// §9 lifecycle at end of input
add(9, "empty input: exit 0", "");
add(9, "EOF right after requests: all answered", cat(echo(1, "1"), echo(2, "2")));

// §10 batchRequests (API 7.1; in 7.0 an unknown method). Results are JSON
// values here, not base64. Tokens are "api-session-1-N", numbered per
// session, so a stream can name the tokens it will be given; the page sweep
// that follows tokens from the replies is a test of its own below.
const batchReq = (id, params) => req(id, "batchRequests", typeof params === "string" ? params : JSON.stringify(params));
const B3 = [{ method: "echo", params: "aaaa" }, { method: "ping" }, { method: "echo", params: [1, 2, 3] }];
add(10, "batchRequests: unknown method in 7.0", cat(batchReq(1, { requests: B3 }), batchReq(2, { continuationToken: "api-session-1-1" }), echo(3, "1")), { dialect: "7.0" });
const add71 = (name, input, extra = {}) => add(10, `batchRequests: ${name}`, input, { dialect: "7.1", sequential: true, ...extra });
add71("one page; per-item errors (unknown method, nested batch, getServerTiming, resetServerTiming)",
  batchReq(1, { requests: [{ method: "echo", params: { a: 1 } }, { method: "ping" }, { method: "nope" }, { method: "batchRequests", params: {} }, { method: "getServerTiming" }, { method: "resetServerTiming" }, { method: "initialize" }] }));
add71("3 items, 1 byte a page: the token followed, reused, and one never handed out",
  cat(batchReq(1, { requests: B3, maxResponseBytesPerPage: 1 }), batchReq(2, { continuationToken: "api-session-1-1" }), batchReq(3, { continuationToken: "api-session-1-1" }), batchReq(4, { continuationToken: "api-session-1-2" })));
add71("every page 1 byte, to the end", cat(batchReq(1, { requests: B3, maxResponseBytesPerPage: 1 }),
  ...[1, 2, 3].map((n) => batchReq(n + 1, { continuationToken: `api-session-1-${n}`, maxResponseBytesPerPage: 1 }))));
add71("interleaved batches, continued in the other order",
  cat(batchReq(1, { requests: [{ method: "echo", params: "a1" }, { method: "echo", params: "a2" }], maxResponseBytesPerPage: 1 }),
    batchReq(2, { requests: [{ method: "echo", params: "b1" }, { method: "echo", params: "b2" }, { method: "echo", params: "b3" }], maxResponseBytesPerPage: 1 }),
    batchReq(3, { continuationToken: "api-session-1-2", maxResponseBytesPerPage: 1 }), batchReq(4, { continuationToken: "api-session-1-1", maxResponseBytesPerPage: 1 }),
    batchReq(5, { continuationToken: "api-session-1-3", maxResponseBytesPerPage: 1 }), batchReq(6, { continuationToken: "api-session-1-3" })));
add71("a token together with new requests", cat(batchReq(1, { requests: B3, maxResponseBytesPerPage: 1 }),
  batchReq(2, { requests: [{ method: "echo", params: "new" }], continuationToken: "api-session-1-1" }), batchReq(3, { requests: [{ method: "echo", params: "after" }] })));
for (const token of ["bogus", "api-session-1-0", "api-session-1-1", "api-session-2-1", "API-SESSION-1-1"]) {
  add71(`token ${JSON.stringify(token)} never handed out`, cat(batchReq(1, { continuationToken: token }), batchReq(2, { requests: [{ method: "ping" }], continuationToken: token }), echo(3, "1")));
}
add71("token null is no token", batchReq(1, { requests: [{ method: "echo", params: "z" }], continuationToken: null }));
add71('token "" is no token', cat(batchReq(1, { requests: [{ method: "echo", params: "z" }], continuationToken: "" }), batchReq(2, { continuationToken: "" })));
for (const [what, p] of [["requests []", { requests: [] }], ["{}", {}], ["requests null", { requests: null }], ["params null", "null"], ["only a page size", { maxResponseBytesPerPage: 1 }]]) {
  add71(`empty batch, ${what}`, batchReq(1, p));
}
add71("params absent", msg('{"jsonrpc":"2.0","id":1,"method":"batchRequests"}'), { deliberate: "batch-params-error-text" });
add71("items without a method, method null or \"\", params absent or null",
  batchReq(1, { requests: [{ params: 1 }, { method: null }, { method: "" }, { method: "echo" }, { method: "echo", params: null }, {}] }));
add71("odd method names inside a batch (Go quoting)", batchReq(1, { requests: [{ method: "Echo" }, { method: 'a"b\n\u20c1\u1c89' }, { method: "ping", params: "x" }] }));
add71("getServerTiming and resetServerTiming inside a batch, with --timing", batchReq(1, { requests: [{ method: "getServerTiming" }, { method: "resetServerTiming" }, { method: "echo", params: 1 }] }),
  { args: ["--api", "--async", "--cwd", CWD, "--timing"] });
add71("nested batch asking for pages", batchReq(1, { requests: [{ method: "batchRequests", params: { requests: B3, maxResponseBytesPerPage: 1 } }, { method: "ping" }] }));
add71("a negative or zero page size is the default page", cat(batchReq(1, { requests: B3, maxResponseBytesPerPage: -5 }), batchReq(2, { requests: B3, maxResponseBytesPerPage: 0 })));
add71("echo of strings as JSON.stringify writes them", batchReq(1, { requests: [{ method: "echo", params: { s: "wörld 😀 \u2028 <>&\"\\\n\u0001" } }, { method: "echo", params: "x".repeat(40) }] }));
for (const n of [1.5, -0, 0.1, 0.30000000000000004, 5e-324, 1.7976931348623157e308, 1e21, 123456789012345680000, 1e-7, 2.5e-8, 100, -1]) {
  add71(`echo of the number ${JSON.stringify(n)} (as JSON.stringify writes it)`, batchReq(1, { requests: [{ method: "echo", params: n }] }));
}
// Deliberate: an item's params are re-encoded compactly (docs/PROTOCOL.md#batch-differences).
add71("echo of params written with spaces", batchReq(1, '{"requests":[{ "method" : "echo" , "params" : { "a" : [ 1 , 2 ] } }]}'));
add71("echo of numbers and escapes not as JSON.stringify writes them", batchReq(1, '{"requests":[{"method":"echo","params":[1.50e+10,1E+2,-0.0,"\\u00e9\\/"]}]}'));
add71("1000 items in one page", batchReq(1, { requests: Array.from({ length: 1000 }, (_, i) => ({ method: i % 2 ? "ping" : "echo", params: i })) }));
add71("a batch among concurrent requests", cat(echo(1, "1"), batchReq(2, { requests: B3 }), req(3, "ping"), batchReq(4, { requests: [{ method: "nope" }] }), echo(5, "5")));
for (const p of ["[]", "5", '"x"', '{"requests":5}', '{"requests":[5]}', '{"requests":[{"method":5}]}', '{"requests":{}}',
  '{"maxResponseBytesPerPage":"x"}', '{"continuationToken":5}']) {
  add71(`malformed params ${p}`, cat(batchReq(1, p), echo(2, "1")), { deliberate: "batch-params-error-text" });
}
// A page size that is a JSON number but no Go int (int64): refused with Go's
// own error, byte for byte; the edges of int64 are taken.
for (const n of ["9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
  "-9223372036854775808", "-9223372036854775809", "100000000000000000000000", "-0", "1e3", "1.5", "0.0", "-1.0E+2"]) {
  add71(`maxResponseBytesPerPage ${n}`, cat(batchReq(1, `{"requests":[{"method":"ping"}],"maxResponseBytesPerPage":${n}}`), echo(2, "1")));
}

// ── the tests: every version in VERSIONS ─────────────────────────────
//
// Each version's own server against spinrpc-server, the version's dialect
// flag (goldens/dialects.mjs: --useCaseSensitiveFileNames=true for 7.1,
// nothing for 7.0) inserted right after --api on both command lines.

/** Sends the input's messages one at a time, each after the previous reply (for --timing's ordered list). */
async function runSequential(peer, args, input) {
  const parts = [];
  for (let off = 0; off < input.length;) {
    const m = /^Content-Length: (\d+)\r\n\r\n/.exec(input.subarray(off, off + 40).toString("latin1"));
    const n = m[0].length + Number(m[1]);
    parts.push(input.subarray(off, off + n));
    off += n;
  }
  requireBinary(peer);
  const child = spawn(peer.path, args, { cwd: scratch, stdio: ["pipe", "pipe", "pipe"] });
  const out = [];
  const err = [];
  child.stderr.on("data", (d) => err.push(d));
  let want = 0;
  let wake = () => {};
  child.stdout.on("data", (d) => { out.push(d); if (parseReplies(Buffer.concat(out)).replies.length >= want) wake(); });
  let exited = false;
  const closed = new Promise((res) => child.on("close", (status, signal) => { exited = true; wake(); res({ status, signal }); }));
  child.stdin.on("error", () => {});  // the peer may exit before reading it all
  const kill = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
  for (const p of parts) {
    if (exited) break;
    want += countRequests(p);
    const got = new Promise((res) => { wake = res; });
    child.stdin.write(p);
    if (parseReplies(Buffer.concat(out)).replies.length < want && !exited) await got;
  }
  child.stdin.end();
  const { status, signal } = await closed;
  clearTimeout(kill);
  return { status, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") };
}


/** An --async session driven one reply at a time (to follow continuation tokens from the replies). */
function jsonSession(peer, args) {
  requireBinary(peer);
  const child = spawn(peer.path, args, { cwd: scratch, stdio: ["pipe", "pipe", "pipe"] });
  let out = Buffer.alloc(0);
  let stderr = "";
  let taken = 0;
  let nextId = 1;
  let waiter = null;
  child.stderr.on("data", (d) => { stderr += d; });
  child.stdout.on("data", (d) => { out = Buffer.concat([out, d]); waiter?.(); });
  let exited = false;
  const closed = new Promise((res) => child.on("close", (status, signal) => { exited = true; waiter?.(); res({ status, signal }); }));
  const kill = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
  child.stdin.on("error", () => {});
  return {
    /** Sends one request; resolves to its reply, as raw text. */
    async call(method, params) {
      child.stdin.write(req(nextId++, method, JSON.stringify(params)));
      for (;;) {
        const { replies } = parseReplies(out);
        if (replies.length > taken) return replies[taken++].raw;
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

const bodyOf = (raw) => JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4));

function batchPages(v, THEIRS) {
  const args = withDialect(v, ["--api", "--async", "--cwd", CWD]);
  test("§10 batchRequests pages: a 3-item batch at every maxResponseBytesPerPage from 1 to a page that holds it all, tokens followed from the replies", async () => {
    const sweep = async (peer) => {
      const s = jsonSession(peer, args);
      const log = [];
      const one = await s.call("batchRequests", { requests: B3 });
      log.push(one);
      const size = Buffer.byteLength(JSON.stringify(bodyOf(one).result));
      for (let limit = 1; limit <= size + 2; limit++) {
        let r = await s.call("batchRequests", { requests: B3, maxResponseBytesPerPage: limit });
        for (let pages = 1; pages <= 5; pages++) {
          log.push(r);
          const token = bodyOf(r).result?.continuationToken;
          if (token === undefined) break;
          r = await s.call("batchRequests", { continuationToken: token, maxResponseBytesPerPage: limit });
        }
      }
      log.push(await s.call("batchRequests", { continuationToken: "api-session-1-1" }));  // spent long ago
      return { log: log.map((r) => r.replace(/"id":\d+/, '"id":#')), ...(await s.end()) };
    };
    const [theirs, ours] = await Promise.all([sweep(THEIRS), sweep(SPINRPC)]);
    assert.deepStrictEqual({ status: theirs.status, stderr: theirs.stderr }, { status: 0, stderr: "" }, `${v.id}'s server`);
    const sizes = new Set(theirs.log.map((r) => (r.match(/"method":/g) ?? []).length));
    assert.ok([1, 2, 3].every((n) => sizes.has(n)), `page sizes seen: ${[...sizes]}`);
    for (let i = 0; i < Math.max(ours.log.length, theirs.log.length); i++) {
      assert.equal(ours.log[i], theirs.log[i], `reply ${i} differs (of ${theirs.log.length} from ${v.id}'s server, ${ours.log.length} from spinrpc-server)`);
    }
    assert.deepStrictEqual({ status: ours.status, stderr: ours.stderr }, { status: 0, stderr: "" }, "spinrpc-server");
  });
}

const NEWEST = new Map(VERSIONS.map((v) => [v.dialect, v]));

for (const v of VERSIONS) {
  const TSGO = versionPeer(v);
  const argv = (args) => withDialect(v, args);
  describe(`${v.id} (${v.name}@${v.version}, API ${v.dialect}): spinrpc-server vs its server in --async`, () => {
    describe("replies keyed by id", () => {
      for (const c of cases.filter((x) => !x.dialect || x.dialect === v.dialect)) {
        test(c.name, async () => {
          const opts = c.expect === undefined ? {} : { expect: c.expect };
          const args = argv(c.args);
          const go = (peer) => (c.sequential ? runSequential(peer, args, c.input) : runPeer(peer, args, c.input, opts));
          const [theirs, ours] = await Promise.all([go(TSGO), go(SPINRPC)]);
          judge({ ...c, args, name: `${v.id} ${c.name}` }, ours, theirs);
        });
      }
    });

    if (dialectOf(v).batchRequests) describe("§10 batchRequests pages, tokens from the replies", () => batchPages(v, TSGO));

    describe("--timing (timing values masked)", () => {
      const NUM = /"(processingTimeMs|totalProcessingTimeMs|timestamp)":(-?[0-9][0-9.eE+-]*)/g;
      const mask = (r) => ({ ...r, stdout: Buffer.from(keyed(r).replies.map((x) => x.replace(/^Content-Length: \d+/, "Content-Length: #").replace(NUM, '"$1":#')).join(""), "latin1") });
      const timing = [
        ["ring of 5, errors counted, timing requests and notifications not counted",
          cat(echo(1, "1"), req(2, "nope"), req(3, "initialize", "null"), msg('{"jsonrpc":"2.0","method":"echo"}'), req(4, "ping"), req(5, "getServerTiming")),
          // sequential: each request only after the previous reply, so the recent list's order is fixed
        ],
        ["reset clears", cat(echo(1, "1"), req(2, "resetServerTiming"), req(3, "getServerTiming"))],
      ];
      // A batch is one request named batchRequests, each continuation one
      // more, a refused one too; its items are not counted.
      if (dialectOf(v).batchRequests) {
        const threeItems = { requests: [{ method: "echo", params: 1 }, { method: "ping" }, { method: "nope" }] };
        timing.push(
          ["a 3-item batch is one request", cat(batchReq(1, threeItems), req(2, "getServerTiming"))],
          ["each page of a batch is one request, a spent token and bad params too",
            cat(batchReq(1, { ...threeItems, maxResponseBytesPerPage: 1 }), batchReq(2, { continuationToken: "api-session-1-1", maxResponseBytesPerPage: 1 }),
              batchReq(3, { continuationToken: "api-session-1-2" }), batchReq(4, { continuationToken: "api-session-1-2" }),
              batchReq(5, '{"requests":[],"maxResponseBytesPerPage":18446744073709551615}'), echo(6, "1"), req(7, "getServerTiming"))],
        );
      }
      for (const [name, input] of timing) {
        test(name, async () => {
          const c = { name: `${v.id} §6 --timing: ${name}`, args: argv(["--api", "--async", "--cwd", CWD, "--timing"]), input };
          const [theirs, ours] = await Promise.all([runSequential(TSGO, c.args, input), runSequential(SPINRPC, c.args, input)]);
          judge(c, mask(ours), mask(theirs));
        });
      }
    });


    describe("--pipe", () => {
      test("§9 --pipe: replies on the socket, stdout empty, exit 0 and the socket removed at disconnect", async () => {
        const input = cat(req(1, "initialize", "[null]"), echo(2, '{"a":[1,2.5]}'), req(3, "ping"), req(4, "nope"));
        const [theirs, ours] = await Promise.all([runPeerOverPipe(TSGO, v, input), runPeerOverPipe(SPINRPC, v, input)]);
        for (const r of [theirs, ours]) {
          assert.equal(r.processStdout.length, 0);
          assert.equal(r.socketLeft, false);
        }
        judge({ name: `${v.id} §9 --pipe session`, args: argv(["--api", "--async", "--pipe", "PATH"]), input }, ours, theirs);
      });

      test("§9 --pipe: a client that closes with its replies unread: both exit 1 (connection reset)", async () => {
        const input = cat(echo(1, "1"), req(2, "ping"));
        const args = argv(["--api", "--async", "--cwd", CWD]);
        const pipeDir = v.dialect === "7.1";
        const [theirs, ours] = await Promise.all([
          closeWithRepliesUnread(TSGO, args, input, scratch, { pipeDir }),
          closeWithRepliesUnread(SPINRPC, args, input, scratch, { pipeDir }),
        ]);
        assert.equal(theirs.status, 1, `${TSGO.name}: ${JSON.stringify(theirs)}`);
        assert.match(theirs.stderr, /^jsonrpc: read header: .*connection reset by peer\n$/);
        assert.equal(ours.status, 1, `spinrpc-server: ${JSON.stringify(ours)}`);
        assert.equal(ours.stderr, "spinrpc-server: the client closed the connection before reading a reply\n");
        assert.equal(ours.socketLeft, false);
      });
    });

    // Transport behaviour, the same in both dialects: once per dialect, on its newest version.
    if (NEWEST.get(v.dialect) === v) writesEverythingFirst(v, TSGO);
  });
}


function writesEverythingFirst(v, TSGO) {
describe("a client that writes every request before it reads a reply", () => {
  // A batch driver (Python's subprocess, a shell loop) writes all it has,
  // then reads. tsgo reads stdin on a goroutine of its own, so it takes it
  // all; a server that stops reading while its stdout is full would leave
  // both sides blocked writing. Node's stdio here is a socket pair; the
  // pipe case is a ctest (tests/channel). The 60 s is a hang guard, not a
  // timing assertion.
  test("both servers take all 3 MB of requests while no reply is read, then answer every one", async () => {
    const count = 3000;
    const params = JSON.stringify("x".repeat(1000));
    const input = Buffer.concat(Array.from({ length: count }, (_, i) => echo(i, params)));
    for (const peer of [SPINRPC, TSGO]) {
      requireBinary(peer);
      const child = spawn(peer.path, withDialect(v, ["--api", "--async", "--cwd", CWD]), { stdio: ["pipe", "pipe", "inherit"] });
      const exited = new Promise((res) => child.on("exit", (code, signal) => res({ code, signal })));
      try {
        child.stdout.pause();  // no reply is read until every request is written
        let guard;
        const outcome = await Promise.race([
          new Promise((res) => child.stdin.write(input, () => res("written"))),
          new Promise((res) => { guard = setTimeout(() => res("stuck"), 60_000); }),
        ]);
        clearTimeout(guard);
        assert.equal(outcome, "written", `${peer.name} stopped reading its stdin while its replies went unread`);
        const chunks = [];
        let replies = 0;
        await new Promise((res, rej) => {
          const guardRead = setTimeout(() => rej(new Error(`${peer.name}: ${replies} of ${count} replies after 60 s`)), 60_000);
          child.stdout.on("data", (chunk) => {
            chunks.push(chunk);
            replies = parseReplies(Buffer.concat(chunks)).replies.length;
            if (replies >= count) { clearTimeout(guardRead); res(); }
          });
          child.stdout.resume();
        });
        const ids = parseReplies(Buffer.concat(chunks)).replies.map((r) => Number(r.id));
        assert.deepEqual(ids.sort((a, b) => a - b), Array.from({ length: count }, (_, i) => i), peer.name);
        child.stdin.end();
        assert.deepEqual(await exited, { code: 0, signal: null }, peer.name);
      } finally {
        child.kill("SIGKILL");
      }
    }
  });
});
}
