#!/usr/bin/env node
// record: makes the committed workload trace (bench/workload/README.md).
//
//   node bench/workload/record.mjs [--ts ID] [--every K] [--out FILE]
//
// --ts ID  the TypeScript version whose client walks and whose own server
//          answers (an id of tests/interop/versions.mjs; default 7.0, the
//          released typescript@7.0.2)
//
// 1. npm ci here (bench/workload/package-lock.json: aws-cdk-lib and
//    constructs; CI never installs them), unless already installed;
// 2. checks the recording proxy is transparent: walks a small fixture
//    (bench/workload/fixture/) straight against tsgo and through
//    spinrpc-record-proxy and requires byte-identical walker output;
// 3. writes a tsconfig over every K-th module of aws-cdk-lib (sorted
//    submodule names, the first one included; default K = 12, library.mjs) into
//    bench/out/workload/project/;
// 4. walks it through the proxy, then merges the proxy's record (sizes,
//    server time) with the walker's client gaps, request by request, into
//    the trace (default bench/workload/aws-cdk-lib.trace.gz; gzip-compressed
//    when FILE ends in .gz, plain text otherwise).
//
// Needs build/bin/spinrpc-record-proxy (SPINRPC_BUILD_DIR) and the interop
// suite's npm install of that version (SPINRPC_TSGO overrides its server).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { commandLine } from "../harness/cli.mjs";
import { DEFAULT_EVERY, ensureLibrary, writeSampleProject } from "./library.mjs";
import { HEADER_PREFIX, TRACE_VERSION, writeTrace } from "./trace_file.mjs";
import { VERSIONS } from "../../tests/interop/versions.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "..", "..");
const BUILD = process.env.SPINRPC_BUILD_DIR ?? join(REPO, "build");
const PROXY = join(BUILD, "bin", "spinrpc-record-proxy");
const OUT_DIR = join(REPO, "bench", "out", "workload");
const WALK = join(HERE, "walk.mjs");

const opts = (() => {
  const cli = commandLine("record", "usage: node bench/workload/record.mjs [--ts ID] [--every K] [--out FILE]");
  const v = cli.parse({ ts: { type: "string", default: "7.0" }, every: { type: "string" }, out: { type: "string" } });
  return { ts: v.ts, every: cli.count("every", v.every, 1) ?? DEFAULT_EVERY, out: v.out !== undefined ? resolve(v.out) : join(HERE, "aws-cdk-lib.trace.gz") };
})();
const TS = VERSIONS.find((v) => v.id === opts.ts);
if (!TS) { console.error(`record: --ts ${opts.ts} is not one of ${VERSIONS.map((v) => v.id).join(", ")}`); process.exit(2); }
const TSGO = process.env.SPINRPC_TSGO ?? TS.server;
for (const [what, path] of [["spinrpc-record-proxy", PROXY], ["tsgo", TSGO]]) {
  if (!existsSync(path)) { console.error(`record: ${what} not found at ${path}`); process.exit(1); }
}

const lockedVersion = ensureLibrary();
rmSync(OUT_DIR, { recursive: true, force: true });
mkdirSync(OUT_DIR, { recursive: true });

// Runs the walker, directly (tsgo) or through the proxy; returns its summary.
function walk(project, name, viaProxy) {
  const files = { out: join(OUT_DIR, `${name}.out`), gaps: join(OUT_DIR, `${name}.gaps`), json: join(OUT_DIR, `${name}.json`), raw: join(OUT_DIR, `${name}.raw`) };
  const env = { ...process.env, SPINRPC_RECORD_TSGO: TSGO, SPINRPC_RECORD_OUT: files.raw };
  execFileSync(process.execPath, [WALK, "--ts", TS.id, "--project", project, "--tsgo", viaProxy ? PROXY : TSGO, "--out", files.out, "--gaps", files.gaps, "--json", files.json], { env, stdio: "inherit" });
  if (viaProxy) {
    // The proxy writes its record once the client has gone; wait for it.
    const deadline = Date.now() + 60_000;
    while (!existsSync(files.raw)) {
      if (Date.now() > deadline) throw new Error(`record: the proxy wrote no ${files.raw}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
  return { ...JSON.parse(readFileSync(files.json, "utf8")), files };
}

// 2. transparency
const fixture = join(HERE, "fixture");
const direct = walk(fixture, "fixture-direct", false);
const proxied = walk(fixture, "fixture-proxy", true);
if (readFileSync(direct.files.out, "utf8") !== readFileSync(proxied.files.out, "utf8")) {
  console.error(`record: the walker's output differs through the proxy (${direct.files.out} vs ${proxied.files.out})`);
  process.exit(1);
}
console.error(`record: proxy transparent on the fixture (${direct.requests} requests, output sha1 ${direct.outputSha1} both ways)`);

// 3. the sample
const project = join(OUT_DIR, "project");
const { modules, sample } = writeSampleProject(project, opts.every);
console.error(`record: walking ${sample.length} of ${modules.length} aws-cdk-lib modules (every ${opts.every}th)`);

// 4. record and merge
const load = loadavg();
const rec = walk(project, "aws-cdk-lib", true);
const raw = readFileSync(rec.files.raw, "utf8").split("\n").filter(Boolean);
const names = raw[1].replace(/^# methods ?/, "").split(" ");
const rows = raw.filter((l) => !l.startsWith("#")).map((l) => l.split(" ").map(Number));
const gaps = readFileSync(rec.files.gaps, "utf8").split("\n").filter(Boolean).map((l) => l.split("\t"));
if (gaps.length !== rows.length) throw new Error(`record: walker saw ${gaps.length} requests, proxy ${rows.length}`);
const lines = rows.map(([m, req, reply, , serverNs], i) => {
  if (gaps[i][0] !== names[m]) throw new Error(`record: request ${i}: walker ${gaps[i][0]}, proxy ${names[m]}`);
  return [m, req, reply, serverNs, Number(gaps[i][1])];
});
const header = [
  `${HEADER_PREFIX}${TRACE_VERSION} (bench/workload/README.md)`,
  `# command: node bench/workload/record.mjs${opts.ts === "7.0" ? "" : ` --ts ${opts.ts}`}${opts.every === DEFAULT_EVERY ? "" : ` --every ${opts.every}`}`,
  `# library: aws-cdk-lib@${lockedVersion} .d.ts, ${sample.length} of ${modules.length} modules (sorted, every ${opts.every}th from the first): ${sample.join(",")}`,
  `# client: walk.mjs on ${TS.name}@${TS.version} (JS SyncRpcChannel), node ${process.version}; server: its own ${TS.server.split("/").pop()} --timing behind spinrpc-record-proxy`,
  `# recorded: ${new Date().toISOString()}, ${cpus().length} CPUs, load average ${load.map((x) => x.toFixed(2)).join(" ")} at start; walk ${(rec.wallMs / 1000).toFixed(1)} s`,
  `# methods ${names.join(" ")}`,
  "# columns: method (index into methods) request_bytes reply_bytes server_ns gap_ns",
  "#   bytes: payload only; server_ns: tsgo's own handling time (-1: not reported);",
  "#   gap_ns: the client's time from this reply to its next request (-1: last)",
];
// Written, then read back and checked as every reader checks it.
writeTrace(opts.out, header, lines);
const missing = rows.filter((r) => r[4] < 0).length;
console.error(`record: ${lines.length} requests (${missing} without a server time) → ${relative(process.cwd(), opts.out)}`);
