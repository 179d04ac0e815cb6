// The command line of bench/report.mjs (its usage is at the top of that file).

function usage(msg) {
  if (msg) console.error(`report: ${msg}`);
  console.error("usage: node bench/report.mjs --bench-json FILE --latency-dir DIR --out REPORT.md --png-dir DIR [--node-json FILE] [--async-json FILE] [--json-bench-dir DIR] [--command TEXT] [--build-dir DIR] [--smoke]");
  process.exit(2);
}
export function parseArgs(argv) {
  const args = { smoke: false };
  const keys = { "--bench-json": "benchJson", "--latency-dir": "latencyDir", "--node-json": "nodeJson", "--async-json": "asyncJson", "--json-bench-dir": "jsonBenchDir", "--out": "out", "--png-dir": "pngDir", "--command": "command", "--build-dir": "buildDir" };
  for (let i = 0; i < argv.length; i++) {
    let [k, v] = argv[i].split(/=(.*)/s, 2);
    if (k === "--smoke") { args.smoke = true; continue; }
    const key = keys[k];
    if (!key) usage(`unknown argument ${argv[i]}`);
    if (v === undefined) { v = argv[++i]; if (v === undefined) usage(`${k} needs a value`); }
    args[key] = v;
  }
  for (const k of ["benchJson", "latencyDir", "out", "pngDir"]) if (!args[k]) usage(`missing --${k.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())}`);
  return args;
}
