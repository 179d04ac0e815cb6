// The command line of bench/report.mjs (its usage is at the top of that file).

import { commandLine } from "../harness/cli.mjs";

const USAGE = "usage: node bench/report.mjs --bench-json FILE --latency-dir DIR --out REPORT.md --png-dir DIR [--node-json FILE] [--async-json FILE] [--json-bench-dir DIR] [--command TEXT] [--build-dir DIR] [--smoke]";

export function parseArgs(argv) {
  const cli = commandLine("report", USAGE);
  const text = { type: "string" };
  const v = cli.parse({
    "bench-json": text, "latency-dir": text, "node-json": text, "async-json": text, "json-bench-dir": text, out: text, "png-dir": text,
    command: text, "build-dir": text, smoke: { type: "boolean", default: false },
  }, argv);
  for (const k of ["bench-json", "latency-dir", "out", "png-dir"]) if (!v[k]) cli.fail(`missing --${k}`);
  return {
    smoke: v.smoke, benchJson: v["bench-json"], latencyDir: v["latency-dir"], nodeJson: v["node-json"], asyncJson: v["async-json"],
    jsonBenchDir: v["json-bench-dir"], out: v.out, pngDir: v["png-dir"], command: v.command, buildDir: v["build-dir"],
  };
}
