// The trace file's one reader and writer for the JS side (record.mjs,
// replay.mjs, report.mjs). The committed trace is gzip-compressed
// (bench/workload/README.md, "The trace"): a name ending in .gz is read
// and written through node:zlib, any other name as plain text, so the
// content is the same either way.
import { readFileSync, writeFileSync } from "node:fs";
import { constants, gunzipSync, gzipSync } from "node:zlib";

const gzipped = (path) => path.endsWith(".gz");

// The trace's text; throws (ENOENT, Z_DATA_ERROR, "unexpected end of file") on
// a missing, corrupt or truncated file rather than returning part of it.
export function readTraceText(path) {
  const bytes = readFileSync(path);
  return (gzipped(path) ? gunzipSync(bytes) : bytes).toString("utf8");
}

export function writeTraceText(path, text) {
  writeFileSync(path, gzipped(path) ? gzipSync(text, { level: constants.Z_BEST_COMPRESSION }) : text);
}
