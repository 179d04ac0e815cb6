#!/usr/bin/env node
// upgrade_trace: rewrites a format-1 workload trace in format 2
// (bench/workload/README.md, "A valid trace") without recording again:
// the first line names version 2, one header line says where the file came
// from, and the end record is added. Every other header line and every
// request line is kept byte for byte (checked before writing).
//
//   node bench/workload/upgrade_trace.mjs OLD NEW
//
// OLD and NEW are gzip-compressed when their names end in .gz; NEW may be
// OLD. NEW is read back through trace_file.mjs before this exits 0.
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { HEADER_PREFIX, TRACE_VERSION, writeTrace } from "./trace_file.mjs";

const [input, output] = process.argv.slice(2);
if (!input || !output || process.argv.length !== 4) {
  console.error("usage: node bench/workload/upgrade_trace.mjs OLD NEW");
  process.exit(process.argv.includes("--help") ? 0 : 2);
}
const fail = (what) => {
  console.error(`upgrade_trace: ${input}: ${what}`);
  process.exit(1);
};

const bytes = readFileSync(input);
const text = (input.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("latin1");
const lines = text.split("\n");
if (lines.pop() !== "") fail("the last line has no newline: cut short");
if (!/^# spinrpc workload trace 1( |$)/.test(lines[0])) fail("not a format-1 trace (its first line is not '# spinrpc workload trace 1')");
const firstRow = lines.findIndex((l) => !l.startsWith("#"));
if (firstRow < 0) fail("no requests");
const requestLines = lines.slice(firstRow);
const stray = requestLines.findIndex((l) => l.startsWith("#"));
if (stray >= 0) fail(`line ${firstRow + stray + 1}: a '#' line among the requests`);

const header = [
  `${HEADER_PREFIX}${TRACE_VERSION} (bench/workload/README.md)`,
  "# upgraded: from format 1 by bench/workload/upgrade_trace.mjs; requests unchanged",
  ...lines.slice(1, firstRow),
];
// Format 1 had no rules beyond five numbers a line; format 2's reader
// checks them all when writeTrace reads the file back.
const rows = requestLines.map((l) => l.split(" ").map(Number));
const kept = rows.map((r) => r.join(" "));
const changed = kept.findIndex((l, i) => l !== requestLines[i]);
if (changed >= 0) fail(`line ${firstRow + changed + 1}: '${requestLines[changed]}' would not be kept as it is`);

const trace = writeTrace(output, header, rows);
console.error(`upgrade_trace: ${input} → ${output}: ${trace.rows.length} requests, version ${trace.version}`);
