#!/usr/bin/env node
// e2e: the real walk against a real TypeScript 7 server, end to end: the
// pure-JS SyncRpcChannel against the Node binding loaded with `node
// --import`, and on the 7.1 API each of them once more through API.batch,
// in rounds that rotate their order. What a jsii user would ask: how much
// sooner does my tool finish, for how much CPU, from spinning, from
// batching, and from both.
//
//   node bench/workload/e2e.mjs [--ts ID] [--import PATH] [--rounds R] [--every K]
//                               [--project DIR] [--no-batch] [--json FILE]
//
// --ts ID        the TypeScript version (tests/interop/versions.mjs: preview,
//                7.0, 7.1-beta, 7.1-dev); its sync API and its own server.
//                Default 7.0 (typescript@7.0.2)
// --import PATH  the binding's register module (node/register.mjs); without
//                it only the pure-JS channel runs (a baseline)
// --rounds R     rounds (default 5); each runs every variant once, the order
//                rotated by one from round to round
// --every K      the module sample, as record.mjs (default 12)
// --project DIR  walk this project (a directory holding tsconfig.json, e.g.
//                bench/workload/fixture) instead of the aws-cdk-lib sample
// --no-batch     on the 7.1 API, leave out the --batch variants
// --json FILE    one JSON object per walk (bench/workload/report.mjs --e2e-json)
//
// Variants: `js` (the pure-JS channel) and `binding` (the same walk under
// --import); on the 7.1 API also `js+batch` and `binding+batch` (walk.mjs
// --batch: API.batch where the walk can batch). Each walk is
// bench/workload/walk.mjs with the version's own server at its defaults;
// every walk's output must be byte-identical to the first one's, whatever
// the variant or round, or the run fails. A binding variant whose walk ran
// on the pure-JS channel (no spin counters) fails it too.
//
// Per walk (stdout and --json): variant (`client`), round, wall clock,
// client and server CPU, requests sent (and on --batch the batches and the
// questions in them), load; per round the ratios, and at the end the
// medians of the per-round ratios: binding / js, js+batch / js,
// binding+batch / binding, binding+batch / js.
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { median } from "../harness/stats.mjs";
import { commandLine } from "../harness/cli.mjs";
import { DEFAULT_EVERY, ensureLibrary, writeSampleProject } from "./library.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "..", "..");
const USAGE = "usage: node bench/workload/e2e.mjs [--ts ID] [--import PATH] [--rounds R] [--every K] [--project DIR] [--no-batch] [--json FILE]";
const opts = (() => {
  const cli = commandLine("e2e", USAGE);
  const text = { type: "string" };
  const v = cli.parse({ ts: { type: "string", default: "7.0" }, import: text, rounds: text, every: text, project: text, "no-batch": { type: "boolean", default: false }, json: text });
  const path = (x) => (x !== undefined ? resolve(x) : null);
  const o = {
    ts: v.ts, import: path(v.import), rounds: cli.count("rounds", v.rounds, 1) ?? 5, every: cli.count("every", v.every, 1) ?? DEFAULT_EVERY,
    project: path(v.project), batch: !v["no-batch"], json: path(v.json),
  };
  if (o.import && !existsSync(o.import)) cli.fail(`--import ${o.import}: no such file`);
  return o;
})();

// The version (walk.mjs resolves it the same way; here for its dialect).
const narrowed = process.env.SPINRPC_INTEROP_VERSIONS;
delete process.env.SPINRPC_INTEROP_VERSIONS;
const { version } = await import("../../tests/interop/versions.mjs");
if (narrowed !== undefined) process.env.SPINRPC_INTEROP_VERSIONS = narrowed;
let ts;
try { ts = version(opts.ts); } catch (e) { console.error(`e2e: --ts ${opts.ts}: ${e.message}`); process.exit(2); }
const canBatch = ts.dialect === "7.1";

const OUT = join(REPO, "bench", "out", "workload", "e2e");
const WALKS = join(OUT, ts.id);
rmSync(WALKS, { recursive: true, force: true });
mkdirSync(WALKS, { recursive: true });
let project = opts.project;
if (!project) {
  ensureLibrary();
  project = join(OUT, "project");
  writeSampleProject(project, opts.every);
}
if (opts.json) writeFileSync(opts.json, "");

const variants = [
  { name: "js", binding: false, batch: false },
  ...(opts.import ? [{ name: "binding", binding: true, batch: false }] : []),
  ...(canBatch && opts.batch ? [
    { name: "js+batch", binding: false, batch: true },
    ...(opts.import ? [{ name: "binding+batch", binding: true, batch: true }] : []),
  ] : []),
];
console.log(`e2e: ${ts.name}@${ts.version} (--ts ${ts.id}, ${ts.dialect} API), server ${process.env.SPINRPC_TSGO ?? ts.server}`);
console.log(`e2e: project ${project}; ${opts.rounds} round(s) of ${variants.map((v) => v.name).join(", ")}` +
  (canBatch ? (opts.batch ? "" : " (--no-batch)") : ` (no batch variants: the ${ts.dialect} API has no API.batch)`));

const f2 = (x) => x.toFixed(2);
const RATIOS = [
  ["binding / js", "binding", "js"],
  ["js+batch / js", "js+batch", "js"],
  ["binding+batch / binding", "binding+batch", "binding"],
  ["binding+batch / js", "binding+batch", "js"],
].filter(([, a, b]) => variants.some((v) => v.name === a) && variants.some((v) => v.name === b));

let reference = null; // { sha, file }: the first walk's output
const rounds = [];
for (let round = 0; round < opts.rounds; round++) {
  const walls = {};
  for (let k = 0; k < variants.length; k++) {
    const v = variants[(k + round) % variants.length];
    const base = join(WALKS, `${v.name}-${round}`);
    const nodeArgs = v.binding ? ["--import", opts.import] : [];
    const walkArgs = [join(HERE, "walk.mjs"), "--project", project, "--ts", ts.id, ...(v.batch ? ["--batch"] : []), "--out", `${base}.out`, "--json", `${base}.json`];
    const load = loadavg()[0];
    execFileSync(process.execPath, [...nodeArgs, ...walkArgs], { stdio: ["ignore", "ignore", "inherit"] });
    const s = JSON.parse(readFileSync(`${base}.json`, "utf8"));
    if (v.binding !== (s.channelStats !== null)) {
      console.error(`e2e: the ${v.name} walk ran on ${s.channelStats ? "spinrpc's" : "the pure-JS"} channel (${base}.json)`);
      process.exit(1);
    }
    if (!reference) {
      reference = { sha: s.outputSha1, file: `${base}.out` };
    } else if (s.outputSha1 !== reference.sha) {
      console.error(`e2e: walk output differs: ${v.name} round ${round} (${base}.out, sha1 ${s.outputSha1}) against ${reference.file} (sha1 ${reference.sha}); diff them`);
      process.exit(1);
    } else {
      rmSync(`${base}.out`);
    }
    walls[v.name] = s.wallMs;
    // The binding's counters that say how its waits went (docs/SPIN.md#counters).
    const c = s.channelStats;
    const spin = c ? { suspensions: c.suspensions, blockedWhileSuspended: c.blocked_while_suspended, spinContended: c.spin_contended, stolenYields: c.stolen_yields } : undefined;
    // `client` is the variant: report.mjs pairs "js" and "binding" by round.
    const record = {
      client: v.name, round, ts: ts.id, tsVersion: ts.version, batch: v.batch,
      requests: s.requests, batchCalls: s.batchCalls, questions: Object.values(s.questions).reduce((a, b) => a + b, 0),
      wallMs: s.wallMs, clientCpuMs: s.clientCpuMs, serverCpuMs: s.serverCpuMs, load1: load, outputSha1: s.outputSha1, spin,
    };
    console.log(`round ${round}  ${v.name.padEnd(13)} wall ${f2(s.wallMs / 1e3).padStart(7)} s  client CPU ${f2(s.clientCpuMs / 1e3).padStart(7)} s  server CPU ${s.serverCpuMs === null ? "   -" : f2(s.serverCpuMs / 1e3).padStart(7)} s  ` +
      `${s.requests} requests${v.batch ? ` (${s.batchCalls} batches, ${record.questions} questions)` : ""}  load ${f2(load)}`);
    if (opts.json) appendFileSync(opts.json, JSON.stringify(record) + "\n");
  }
  rounds.push(walls);
  if (RATIOS.length) console.log(`round ${round}  ${RATIOS.map(([label, a, b]) => `${label} ${f2(walls[a] / walls[b])}`).join(", ")}`);
}
console.log(`e2e: every walk's output identical (sha1 ${reference.sha}, ${reference.file})`);
for (const [label, a, b] of RATIOS) {
  const per = rounds.map((w) => w[a] / w[b]);
  console.log(`e2e: ${label} wall clock: median ${f2(median(per))}x (per round ${per.map(f2).join(", ")})`);
}
