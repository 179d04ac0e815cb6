#!/usr/bin/env node
// Writes the shared workload-trace test files, tests/workload/traces/*, and
// what every reader must say of each, tests/workload/expected.tsv
// (bench/workload/README.md, "A valid trace"). Both readers
// (bench/workload/trace_file.mjs and bench/workload/trace_file.cpp, through
// `replay.mjs --check` and `spinrpc-replay --check`) must give exactly that
// line for every file: tests/interop/workload_trace.test.mjs.
//
//   node tests/workload/make_traces.mjs
//
// The files are committed; this script is how they were made. The expected
// lines are written here by hand, never taken from a reader.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { constants, crc32, deflateRawSync, gzipSync } from "node:zlib";

const HERE = dirname(fileURLToPath(import.meta.url));
const DIR = join(HERE, "traces");
const gz = (text) => gzipSync(Buffer.from(text, "latin1"), { level: constants.Z_BEST_COMPRESSION });

// A gzip member with the optional header fields `gzip` itself may write
// (FNAME without -n) or others do (FEXTRA, FCOMMENT, FHCRC; RFC 1952).
function gzMember(text, { name, comment, extra, headerCrc = false, flags = 0 } = {}) {
  const data = Buffer.from(text, "latin1");
  const parts = [Buffer.from([0x1f, 0x8b, 8, flags | (headerCrc ? 2 : 0) | (extra ? 4 : 0) | (name ? 8 : 0) | (comment ? 16 : 0), 0, 0, 0, 0, 2, 3])];
  if (extra) parts.push(Buffer.from([extra.length & 0xff, extra.length >> 8]), Buffer.from(extra, "latin1"));
  if (name) parts.push(Buffer.from(name + "\0", "latin1"));
  if (comment) parts.push(Buffer.from(comment + "\0", "latin1"));
  if (headerCrc) {
    const crc = crc32(Buffer.concat(parts)) & 0xffff;
    parts.push(Buffer.from([(headerCrc === "wrong" ? crc ^ 1 : crc) & 0xff, crc >> 8]));
  }
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(data), 0);
  trailer.writeUInt32LE(data.length >>> 0, 4);
  return Buffer.concat([...parts, deflateRawSync(data, { level: constants.Z_BEST_COMPRESSION }), trailer]);
}

const HEADER = [
  "# spinrpc workload trace 2 (bench/workload/README.md)",
  "# command: node tests/workload/make_traces.mjs (made up, not recorded)",
  "# methods echo getSourceFile release",
  "# columns: method (index into methods) request_bytes reply_bytes server_ns gap_ns",
];
const ROWS = ["0 4 4 2000 1500", "1 72 2755 104896 863713", "1 159 467 -1 588590", "0 8 8 1200 0", "2 14 4 22652 -1"];
const text = (header, rows, end = `# end ${rows.length}`) => [...header, ...rows, ...(end === null ? [] : [end])].join("\n") + "\n";
const GOOD = text(HEADER, ROWS);  // lines 1-4 header, 5-9 requests, 10 the end record
const withRow = (i, row) => text(HEADER, ROWS.map((r, j) => (j === i ? row : r)));
const GOOD_GZ = gz(GOOD);
const VALID = (requests, methods = 3) => `a valid trace, version 2: ${requests} requests, ${methods} methods`;
const CUT_AT_LINE = "line 8: the file ends after this line, without its end record ('# end COUNT'): cut short";

// [file name, contents, what every reader says after "FILE: "]
const CASES = [
  ["good.trace", GOOD, VALID(5)],
  ["good.trace.gz", GOOD_GZ, VALID(5)],
  ["no-requests.trace", text(HEADER, []), VALID(0)],
  // cut short
  ["cut-at-line.trace", text(HEADER, ROWS.slice(0, 4), null), CUT_AT_LINE],
  ["cut-at-line.trace.gz", gz(text(HEADER, ROWS.slice(0, 4), null)), CUT_AT_LINE],
  ["cut-mid-line.trace", GOOD.slice(0, GOOD.indexOf("0 8 8") + 4), "line 8: the file ends inside this line, without its newline: cut short"],
  ["cut-in-end-record.trace", GOOD.slice(0, -1), "line 10: the file ends inside this line, without its newline: cut short"],
  ["cut.trace.gz", GOOD_GZ.subarray(0, GOOD_GZ.length >> 1), "the gzip data is cut short"],
  ["cut-trailer.trace.gz", GOOD_GZ.subarray(0, GOOD_GZ.length - 4), "the gzip data is cut short"],
  ["cut-header.trace.gz", GOOD_GZ.subarray(0, 6), "the gzip data is cut short"],
  ["empty.trace", "", "line 1: no trace header: a trace starts with '# spinrpc workload trace 2'; the file is empty"],
  ["empty.trace.gz", "", "not gzip-compressed, which a name ending in .gz says it is"],
  // foreign or other versions
  ["no-header.trace", text(HEADER.slice(2), ROWS), "line 1: no trace header: a trace starts with '# spinrpc workload trace 2'"],
  ["version-1.trace", text(["# spinrpc workload trace 1 (bench/workload/README.md)", ...HEADER.slice(1)], ROWS, null), "line 1: format version 1; this reader reads version 2"],
  ["version-3.trace", text(["# spinrpc workload trace 3", ...HEADER.slice(1)], ROWS), "line 1: format version 3; this reader reads version 2"],
  ["not-gzip.trace.gz", GOOD, "not gzip-compressed, which a name ending in .gz says it is"],
  ["gzip-named-plain.trace", GOOD_GZ, "line 1: byte 0x1f at column 1 is not printable ASCII"],
  ["crlf.trace", GOOD.replaceAll("\n", "\r\n"), `line 1: byte 0x0d at column ${HEADER[0].length + 1} is not printable ASCII`],
  // damaged gzip
  ["trailing-bytes.trace.gz", Buffer.concat([GOOD_GZ, Buffer.from("junk\n")]), "5 bytes after the end of the gzip data"],
  ["trailing-zeros.trace.gz", Buffer.concat([GOOD_GZ, Buffer.alloc(8)]), "8 bytes after the end of the gzip data"],
  ["two-members.trace.gz", Buffer.concat([gz(text(HEADER, ROWS.slice(0, 2), null)), gz(text([], ROWS.slice(2), "# end 5"))]),
   `${gz(text([], ROWS.slice(2), "# end 5")).length} bytes after the end of the gzip data`],
  ["good-fname.trace.gz", gzMember(GOOD, { name: "good.trace" }), VALID(5)],
  ["good-all-header-fields.trace.gz", gzMember(GOOD, { name: "good.trace", comment: "a comment", extra: "AB\x02\x00xy", headerCrc: true }), VALID(5)],
  ["cut-in-fname.trace.gz", gzMember(GOOD, { name: "good.trace" }).subarray(0, 14), "the gzip data is cut short"],
  ["corrupt-header-crc.trace.gz", gzMember(GOOD, { name: "good.trace", headerCrc: "wrong" }), "corrupt gzip data (header crc mismatch)"],
  ["reserved-flag.trace.gz", gzMember(GOOD, { flags: 0x20 }), "corrupt gzip data (unknown header flags set)"],
  ["bad-method-short.trace.gz", Buffer.from([0x1f, 0x8b, 9, 0]), "corrupt gzip data (unknown compression method)"],
  ["header-crc-then-cut.trace.gz", gzMember(GOOD, { name: "good.trace", headerCrc: "wrong" }).subarray(0, 40), "corrupt gzip data (header crc mismatch)"],
  ["magic-only.trace.gz", Buffer.from([0x1f, 0x8b]), "the gzip data is cut short"],
  ["corrupt-crc.trace.gz", Buffer.from(GOOD_GZ).fill(GOOD_GZ[GOOD_GZ.length - 8] ^ 0xff, GOOD_GZ.length - 8, GOOD_GZ.length - 7), "corrupt gzip data (incorrect data check)"],
  ["corrupt-length.trace.gz", Buffer.from(GOOD_GZ).fill(GOOD_GZ[GOOD_GZ.length - 4] ^ 0x01, GOOD_GZ.length - 4, GOOD_GZ.length - 3), "corrupt gzip data (incorrect length check)"],
  ["corrupt-method.trace.gz", Buffer.from(GOOD_GZ).fill(9, 2, 3), "corrupt gzip data (unknown compression method)"],
  // malformed lines
  ["malformed-field.trace", withRow(1, "1 72x 2755 104896 863713"), "line 6: REQUEST_BYTES is '72x', not an integer in decimal digits (no '+', no leading zero)"],
  ["nan.trace", withRow(2, "1 159 NaN -1 588590"), "line 7: REPLY_BYTES is 'NaN', not an integer in decimal digits (no '+', no leading zero)"],
  ["float.trace", withRow(0, "0 4 4 2000.5 1500"), "line 5: SERVER_NS is '2000.5', not an integer in decimal digits (no '+', no leading zero)"],
  ["exponent.trace", withRow(0, "0 4 4 2e3 1500"), "line 5: SERVER_NS is '2e3', not an integer in decimal digits (no '+', no leading zero)"],
  ["leading-zero.trace", withRow(0, "0 04 4 2000 1500"), "line 5: REQUEST_BYTES is '04', not an integer in decimal digits (no '+', no leading zero)"],
  ["plus-sign.trace", withRow(0, "0 +4 4 2000 1500"), "line 5: REQUEST_BYTES is '+4', not an integer in decimal digits (no '+', no leading zero)"],
  ["minus-zero.trace", withRow(0, "0 4 4 -0 1500"), "line 5: SERVER_NS is '-0', not an integer in decimal digits (no '+', no leading zero)"],
  ["negative-size.trace", withRow(2, "1 159 -467 -1 588590"), "line 7: REPLY_BYTES is -467; it cannot be negative"],
  ["negative-one-size.trace", withRow(2, "1 -1 467 -1 588590"), "line 7: REQUEST_BYTES is -1; it cannot be negative"],
  ["negative-method.trace", withRow(2, "-1 159 467 -1 588590"), "line 7: METHOD is -1; it cannot be negative"],
  ["negative-time.trace", withRow(1, "1 72 2755 -2 863713"), "line 6: SERVER_NS is -2; -1 (none) is its only negative value"],
  ["too-big.trace", withRow(1, "1 9007199254740992 2755 104896 863713"), "line 6: REQUEST_BYTES is 9007199254740992, beyond what every reader holds exactly (2^53 - 1)"],
  ["too-many-digits.trace", withRow(1, "1 72 2755 104896 123456789012345678901"), "line 6: GAP_NS is 123456789012345678901, beyond what every reader holds exactly (2^53 - 1)"],
  ["largest.trace", withRow(1, "1 9007199254740991 2755 104896 863713"), VALID(5)],
  ["four-fields.trace", withRow(3, "0 8 8 1200"), "line 8: 4 fields; a request has 5: METHOD REQUEST_BYTES REPLY_BYTES SERVER_NS GAP_NS"],
  ["double-space.trace", withRow(3, "0 8  8 1200 0"), "line 8: 6 fields; a request has 5: METHOD REQUEST_BYTES REPLY_BYTES SERVER_NS GAP_NS"],
  ["trailing-space.trace", withRow(3, "0 8 8 1200 0 "), "line 8: 6 fields; a request has 5: METHOD REQUEST_BYTES REPLY_BYTES SERVER_NS GAP_NS"],
  ["method-out-of-range.trace", withRow(4, "3 14 4 22652 -1"), "line 9: METHOD is 3, but the header names 3 methods"],
  ["tab.trace", withRow(0, "0\t4 4 2000 1500"), "line 5: byte 0x09 at column 2 is not printable ASCII"],
  ["non-ascii.trace", text([HEADER[0], "# command: caf\u00e9", ...HEADER.slice(2)], ROWS), "line 2: byte 0xe9 at column 15 is not printable ASCII"],
  // the structure
  ["count-mismatch.trace", text(HEADER, ROWS, "# end 4"), "line 10: the end record says 4 requests; the file has 5"],
  ["count-too-many.trace", text(HEADER, ROWS.slice(0, 4), "# end 5"), "line 9: the end record says 5 requests; the file has 4"],
  ["count-not-a-number.trace", text(HEADER, ROWS, "# end five"), "line 10: the end record's COUNT is 'five', not an integer in decimal digits (no '+', no leading zero)"],
  ["after-end.trace", GOOD + "2 14 4 22652 -1\n", "line 11: text after the end record (line 10)"],
  ["two-end-records.trace", GOOD + "# end 5\n", "line 11: text after the end record (line 10)"],
  ["newline-after-end.trace", GOOD + "\n", "line 11: text after the end record (line 10)"],
  ["no-methods.trace", text([HEADER[0], HEADER[1], HEADER[3]], ROWS), "line 4: no '# methods' line in the header"],
  ["no-methods-no-requests.trace", text([HEADER[0], HEADER[1]], []), "line 3: no '# methods' line in the header"],
  ["two-methods.trace", text([...HEADER, "# methods echo"], ROWS), "line 5: a second '# methods' line"],
  ["methods-without-names.trace", text([HEADER[0], "# methods", ...HEADER.slice(3)], ROWS), "line 2: '# methods' must be followed by method names, one space before each"],
  ["empty-line.trace", text(HEADER, [...ROWS.slice(0, 2), "", ...ROWS.slice(2)], "# end 5"), "line 7: an empty line"],
  ["comment-among-requests.trace", text(HEADER, [...ROWS.slice(0, 2), "# a note", ...ROWS.slice(2)], "# end 5"), "line 7: a '#' line among the requests; only the end record ('# end COUNT') may follow them"],
];

rmSync(DIR, { recursive: true, force: true });
mkdirSync(DIR, { recursive: true });
const names = new Set();
for (const [name, contents] of CASES) {
  if (names.has(name)) throw new Error(`make_traces: ${name} twice`);
  names.add(name);
  writeFileSync(join(DIR, name), typeof contents === "string" ? Buffer.from(contents, "latin1") : contents);
}
writeFileSync(join(HERE, "expected.tsv"),
  "# file\twhat bench/workload/trace_file.mjs and bench/workload/trace_file.cpp say of it, after \"FILE: \" (node tests/workload/make_traces.mjs)\n" +
  CASES.map(([name, , said]) => `${name}\t${said}\n`).join(""));
console.error(`make_traces: ${readdirSync(DIR).length} files in ${DIR}`);
