// The workload trace's reader and writer for the JS side (record.mjs,
// replay.mjs, report.mjs). What a valid file is, and the error for each way
// a file is not: bench/workload/README.md, "A valid trace". bench/workload/trace_file.cpp
// is the C++ reader (spinrpc-replay) and follows the same definition with
// the same messages; tests/interop/workload_trace.test.mjs runs both over
// every file in tests/workload/traces/.
//
// A name ending in .gz is one gzip member (node:zlib), any other name plain
// text: the same text either way.
import { readFileSync, writeFileSync } from "node:fs";
import { constants, gunzipSync, gzipSync, inflateRawSync } from "node:zlib";

export const TRACE_VERSION = 2;
export const HEADER_PREFIX = "# spinrpc workload trace ";
export const FIELDS = ["METHOD", "REQUEST_BYTES", "REPLY_BYTES", "SERVER_NS", "GAP_NS"];
const MAX_FIELD = Number.MAX_SAFE_INTEGER;  // 2^53 - 1: every reader holds it exactly

const gzipped = (path) => path.endsWith(".gz");

/** A trace that is not valid: `message` names the file, the line (when there is one) and what is wrong. */
export class TraceError extends Error {
  constructor(path, line, what) {
    super(line ? `${path}: line ${line}: ${what}` : `${path}: ${what}`);
    this.name = "TraceError";
  }
}

// Where the gzip member's header at the start of `bytes` ends (RFC 1952:
// 10 bytes, then the optional fields its flags name); `cut` when the bytes
// end before it does.
function gzipHeaderEnd(bytes) {
  if (bytes.length < 10) return { at: bytes.length, cut: true };
  const flags = bytes[3];
  let at = 10;
  if (flags & 4) {  // FEXTRA: a 2-byte length, then that many bytes
    if (at + 2 > bytes.length) return { at: bytes.length, cut: true };
    at += 2 + (bytes[at] | (bytes[at + 1] << 8));
  }
  for (const flag of [8, 16]) {  // FNAME, FCOMMENT: NUL-terminated
    if ((flags & flag) && at <= bytes.length) {
      const nul = bytes.indexOf(0, at);
      at = nul < 0 ? bytes.length + 1 : nul + 1;
    }
  }
  if (flags & 2) at += 2;  // FHCRC
  return at > bytes.length ? { at: bytes.length, cut: true } : { at, cut: false };
}

// The text of a .gz trace: exactly one gzip member, checked whole (header,
// CRC-32 and length), and nothing after it. node:zlib alone would read on
// into a second member and skip zero bytes after the last, so the member's
// end is found first with a raw inflate of its deflate data. zlib itself
// judges the header (its method, flags and header CRC, in zlib's order):
// the header alone is fed to it, which a valid header ends in Z_BUF_ERROR.
function gunzipOneMember(bytes, fail) {
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) fail("not gzip-compressed, which a name ending in .gz says it is");
  const header = gzipHeaderEnd(bytes);
  try {
    gunzipSync(bytes.subarray(0, header.at));
  } catch (e) {
    if (e.code !== "Z_BUF_ERROR") fail(`corrupt gzip data (${e.message})`);
  }
  if (header.cut) fail("the gzip data is cut short");
  let deflateBytes;
  try {
    deflateBytes = inflateRawSync(bytes.subarray(header.at), { info: true }).engine.bytesWritten;
  } catch (e) {
    if (e.code === "Z_BUF_ERROR") fail("the gzip data is cut short");
    fail(`corrupt gzip data (${e.message})`);
  }
  const end = header.at + deflateBytes + 8;  // the trailer: CRC-32 and length
  if (end > bytes.length) fail("the gzip data is cut short");
  let text;
  try {
    text = gunzipSync(bytes.subarray(0, end));
  } catch (e) {
    fail(`corrupt gzip data (${e.message})`);
  }
  if (end < bytes.length) fail(`${bytes.length - end} bytes after the end of the gzip data`);
  return text;
}

const INTEGER = /^(?:0|-?[1-9][0-9]*)$/;
const notInteger = (name, field) => `${name} is '${field}', not an integer in decimal digits (no '+', no leading zero)`;
// An integer's value, or a throw when it is beyond 2^53 - 1 either way.
function integerValue(name, field, fail) {
  if (!INTEGER.test(field)) fail(notInteger(name, field));
  const value = field.replace("-", "").length > 16 ? Infinity : Number(field);
  if (Math.abs(value) > MAX_FIELD) fail(`${name} is ${field}, beyond what every reader holds exactly (2^53 - 1)`);
  return value;
}

/**
 * Reads and checks a trace. Returns { version, header, methods, rows }:
 * header the '#' lines before the first request, methods the names of the
 * '# methods' line, rows [method, requestBytes, replyBytes, serverNs, gapNs]
 * per request. Throws TraceError for anything that is not a valid trace.
 */
export function readTrace(path) {
  const fail = (what, line) => {
    throw new TraceError(path, line, what);
  };
  let bytes;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    fail(`cannot read: ${e.code ?? e.message}`);
  }
  // latin1: one character per byte, so that any byte outside printable
  // ASCII is seen as itself.
  const text = (gzipped(path) ? gunzipOneMember(bytes, fail) : bytes).toString("latin1");
  if (text === "") fail(`no trace header: a trace starts with '${HEADER_PREFIX}${TRACE_VERSION}'; the file is empty`, 1);
  const lines = text.split("\n");
  const complete = lines.pop() === "";  // the text ends with a newline
  if (!complete) lines.push(text.slice(text.lastIndexOf("\n") + 1));

  let methods = null;
  const header = [];
  const rows = [];
  let ended = 0;  // the end record's line number
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const line = lines[i];
    const bad = line.search(/[^\x20-\x7e]/);
    if (bad >= 0) fail(`byte 0x${line.charCodeAt(bad).toString(16).padStart(2, "0")} at column ${bad + 1} is not printable ASCII`, n);
    if (!complete && i === lines.length - 1) fail("the file ends inside this line, without its newline: cut short", n);
    if (ended) fail(`text after the end record (line ${ended})`, n);
    if (i === 0) {
      const m = line.startsWith(HEADER_PREFIX) ? /^(\S+)(?: .*)?$/.exec(line.slice(HEADER_PREFIX.length)) : null;
      if (!m) fail(`no trace header: a trace starts with '${HEADER_PREFIX}${TRACE_VERSION}'`, n);
      if (m[1] !== String(TRACE_VERSION)) fail(`format version ${m[1]}; this reader reads version ${TRACE_VERSION}`, n);
      header.push(line);
      continue;
    }
    if (line === "") fail("an empty line", n);
    if (line.startsWith("#")) {
      if (rows.length === 0 && !/^# end /.test(line)) {
        if (line.startsWith("# methods")) {
          if (methods) fail("a second '# methods' line", n);
          if (!/^# methods( [^ ]+)+$/.test(line)) fail("'# methods' must be followed by method names, one space before each", n);
          methods = line.slice("# methods ".length).split(" ");
        }
        header.push(line);
        continue;
      }
      if (!line.startsWith("# end ")) fail("a '#' line among the requests; only the end record ('# end COUNT') may follow them", n);
      if (!methods) fail("no '# methods' line in the header", n);
      const count = integerValue("the end record's COUNT", line.slice("# end ".length), (what) => fail(what, n));
      if (count !== rows.length) fail(`the end record says ${count} requests; the file has ${rows.length}`, n);
      ended = n;
      continue;
    }
    if (!methods) fail("no '# methods' line in the header", n);
    const fields = line.split(" ");
    if (fields.length !== FIELDS.length) fail(`${fields.length} fields; a request has ${FIELDS.length}: ${FIELDS.join(" ")}`, n);
    const row = fields.map((field, f) => {
      const value = integerValue(FIELDS[f], field, (what) => fail(what, n));
      if (value < 0 && f < 3) fail(`${FIELDS[f]} is ${field}; it cannot be negative`, n);
      if (value < -1) fail(`${FIELDS[f]} is ${field}; -1 (none) is its only negative value`, n);
      return value;
    });
    if (row[0] >= methods.length) fail(`METHOD is ${row[0]}, but the header names ${methods.length} methods`, n);
    rows.push(row);
  }
  if (!ended) fail("the file ends after this line, without its end record ('# end COUNT'): cut short", lines.length);
  return { version: TRACE_VERSION, header, methods, rows };
}

/** The text of a trace: header lines (the first '# spinrpc workload trace 2 …'), one line per row, the end record. */
export function formatTrace(header, rows) {
  if (!header[0]?.startsWith(`${HEADER_PREFIX}${TRACE_VERSION}`)) throw new Error(`formatTrace: the header must start with '${HEADER_PREFIX}${TRACE_VERSION}'`);
  return [...header, ...rows.map((r) => r.join(" ")), `# end ${rows.length}`].join("\n") + "\n";
}

export function writeTraceText(path, text) {
  writeFileSync(path, gzipped(path) ? gzipSync(text, { level: constants.Z_BEST_COMPRESSION }) : text);
}

/** Writes a trace, then reads it back: a writer never leaves a file its readers refuse. */
export function writeTrace(path, header, rows) {
  writeTraceText(path, formatTrace(header, rows));
  return readTrace(path);
}
