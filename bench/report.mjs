#!/usr/bin/env node
// report: turns one run of the suite into bench/REPORT.md and its pictures.
//
//   node bench/report.mjs --bench-json FILE --latency-dir DIR --out REPORT.md
//                         --png-dir DIR [--node-json FILE] [--async-json FILE]
//                         [--json-bench-dir DIR] [--command TEXT]
//                         [--build-dir DIR] [--smoke]
//
// --bench-json   spinrpc-bench's Google Benchmark JSON (--benchmark_out)
// --latency-dir  its raw latencies (--latency_dir: one .i64 file per benchmark)
// --node-json    bench/node/echo_latency.mjs --json output (optional)
// --async-json   bench/node/async_echo.mjs --json output (optional)
// --json-bench-dir  spinrpc-json-bench(-native) --json files (optional)
// --out          the Markdown report to write
// --png-dir      where the CDF pictures go (linked relative to --out)
// --command      the exact command that produced the run, quoted in the report
// --build-dir    the build directory (for its CMAKE_BUILD_TYPE)
// --smoke        say in the report that it comes from a smoke run
//
// Every round of a workload and variant is pooled: percentiles are taken over
// all rounds' samples (bench/harness/stats.mjs: nearest rank, as spinrpc-bench
// computes them); CPU and wall seconds are summed over the rounds; the p50 of
// each round is listed so drift shows. Ratios are computed here, never in
// the benchmarks (docs/BENCHMARKING.md: a claim is a ratio measured side by side).
// Pictures are drawn with gnuplot (gnuplot-nox, scripts/setup.sh); without
// gnuplot the report says so and has none.
//
// Sections written by other tools into the report being replaced, each
// between <!-- NAME:begin --> and <!-- NAME:end --> with its own date and
// command (a comparison of builds, a run against another TypeScript
// version), are kept at its end. The workload's own section is left out:
// bench/workload/report.mjs writes it afresh.
//
// One file per concern under bench/reporting/: args, latency_files, run (the
// grouped benchmarks), format, machine, pictures, and sections/, one file
// per report section; a new workload adds its section there and to SECTIONS.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

import { parseArgs } from "./reporting/args.mjs";
import { pictures } from "./reporting/pictures.mjs";
import { loadRun } from "./reporting/run.mjs";
import asyncMode from "./reporting/sections/async_mode.mjs";
import echo from "./reporting/sections/echo.mjs";
import blockingClient from "./reporting/sections/blocking_client.mjs";
import echoTsgo from "./reporting/sections/echo_tsgo.mjs";
import floors from "./reporting/sections/floors.mjs";
import headline from "./reporting/sections/headline.mjs";
import interleave from "./reporting/sections/interleave.mjs";
import intro from "./reporting/sections/intro.mjs";
import nodeBinding from "./reporting/sections/node_binding.mjs";
import nodeClient from "./reporting/sections/node_client.mjs";
import oversubscribed from "./reporting/sections/oversubscribed.mjs";
import slowServer from "./reporting/sections/slow_server.mjs";
import sparse from "./reporting/sections/sparse.mjs";
import transport from "./reporting/sections/transport.mjs";
import worstCase from "./reporting/sections/worst_case.mjs";

/** The report's sections, in order. */
const SECTIONS = [intro, headline, floors, echo, echoTsgo, blockingClient, transport, interleave, sparse, slowServer, worstCase, oversubscribed, nodeClient, nodeBinding, asyncMode];

const args = parseArgs(process.argv.slice(2));
const lines = [];
const r = { ...loadRun(args), args, say: (...xs) => lines.push(...xs) };
for (const section of SECTIONS) section(r);
const drawn = pictures(args, r);

/** The marked sections of the report at `path` that other tools wrote (see the header). */
function keptSections(path) {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  return [...text.matchAll(/<!-- ([a-z0-9.-]+):begin[^>]*-->[\s\S]*?<!-- \1:end -->/g)]
    .filter((m) => m[1] !== "workload")
    .map((m) => m[0]);
}
const kept = keptSections(args.out);
// Where bench/workload/report.mjs puts its section: before the kept ones.
if (kept.length) lines.push("<!-- workload:begin (bench/workload/report.mjs) -->", "<!-- workload:end -->");
for (const section of kept) lines.push("", section);

mkdirSync(dirname(resolve(args.out)), { recursive: true });
writeFileSync(args.out, lines.join("\n") + "\n");
console.log(`report: wrote ${args.out}${drawn ? ` and ${drawn} picture(s) in ${args.pngDir}` : ""}` +
  (kept.length ? `, keeping ${kept.length} section(s) other tools wrote` : ""));
