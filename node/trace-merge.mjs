#!/usr/bin/env node
// spinrpc-trace-merge: puts the trace files of a client and the servers it
// started (SPINRPC_TRACE=trace-%p.json) into one file, so that Perfetto
// shows both processes on one timeline (docs/TRACE.md#merge-open-read).
// Each file must be a trace-event JSON object with a traceEvents array, as
// spinrpc writes them; both ends' timestamps are CLOCK_MONOTONIC, so they
// are copied unchanged. Exit 0 with the merged file written; 2 for usage;
// 1 for a file that cannot be read or is no trace, named on stderr.
import { readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";

const USAGE = `usage: spinrpc-trace-merge -o OUT.json TRACE.json... 
Merges spinrpc trace files (one per process) into OUT.json for Perfetto or
chrome://tracing. docs/TRACE.md says how to take them.`;

export function mergeTraces(traces) {
  const traceEvents = [];
  const processes = [];
  for (const { name, trace } of traces) {
    if (trace === null || typeof trace !== "object" || !Array.isArray(trace.traceEvents)) {
      throw new Error(`${name}: not a trace-event JSON object (no traceEvents array)`);
    }
    for (const event of trace.traceEvents) traceEvents.push(event);
    processes.push({ file: basename(name), ...(trace.otherData?.spinrpc ?? {}) });
  }
  return { traceEvents, displayTimeUnit: "ns", otherData: { spinrpc: { merged: processes } } };
}

function main(argv) {
  let out;
  const inputs = [];
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    if (arg === "-h" || arg === "--help") {
      process.stdout.write(USAGE + "\n");
      return 0;
    }
    if (arg === "-o" || arg === "--output") {
      out = argv[++i];
    } else if (arg.startsWith("-")) {
      process.stderr.write(`spinrpc-trace-merge: unknown flag ${arg}\n${USAGE}\n`);
      return 2;
    } else {
      inputs.push(arg);
    }
  }
  if (!out || inputs.length === 0) {
    process.stderr.write(`spinrpc-trace-merge: ${!out ? "-o OUT.json is required" : "no trace files given"}\n${USAGE}\n`);
    return 2;
  }
  const traces = [];
  for (const name of inputs) {
    let trace;
    try {
      trace = JSON.parse(readFileSync(name, "utf8"));
    } catch (error) {
      process.stderr.write(`spinrpc-trace-merge: ${name}: ${error.message}\n`);
      return 1;
    }
    traces.push({ name, trace });
  }
  let merged;
  try {
    merged = mergeTraces(traces);
  } catch (error) {
    process.stderr.write(`spinrpc-trace-merge: ${error.message}\n`);
    return 1;
  }
  // Whole or not at all: a reader never sees half a file.
  const temporary = `${out}.tmp.${process.pid}`;
  writeFileSync(temporary, JSON.stringify(merged));
  renameSync(temporary, out);
  return 0;
}

// Run as a program (by any path to this file: npm's bin symlink, CMake's
// renamed copy, a path with spaces), not imported for mergeTraces().
function runAsProgram() {
  if (!process.argv[1]) return false;
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (runAsProgram()) {
  process.exitCode = main(process.argv.slice(2));
}
