#!/usr/bin/env node
// e2e: the real walk against the real tsgo, end to end: the pure-JS
// SyncRpcChannel against the Node binding loaded with `node --import`, in
// paired rounds that alternate their order. What a jsii user would ask:
// how much sooner does my tool finish, for how much CPU.
//
//   node bench/workload/e2e.mjs --import PATH [--rounds R] [--every K] [--json FILE]
//
// --import PATH  the binding's register module (node/register.mjs); without
//                it only the pure-JS client runs (a baseline)
// --rounds R     paired rounds (default 5)
// --every K      the module sample, as record.mjs (default 12)
// --json FILE    one JSON object per walk (bench/workload/report.mjs --e2e-json)
//
// Each walk is bench/workload/walk.mjs over the sampled aws-cdk-lib
// modules (installed on demand) with tsgo at its defaults; its output must
// be byte-identical between the two clients, or the run fails.
import { execFileSync } from "node:child_process";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_EVERY, ensureLibrary, writeSampleProject } from "./library.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "..", "..");
const OUT = join(REPO, "bench", "out", "workload", "e2e");
const opts = { import: null, rounds: 5, every: DEFAULT_EVERY, json: null };
{
  const argv = process.argv.slice(2);
  const usage = "usage: node bench/workload/e2e.mjs --import PATH [--rounds R] [--every K] [--json FILE]";
  if (argv.includes("--help") || argv.includes("-h")) { console.log(usage); process.exit(0); }
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i], v = argv[++i];
    if (v === undefined || !["--import", "--rounds", "--every", "--json"].includes(k)) {
      console.error(usage);
      process.exit(2);
    }
    opts[k.slice(2)] = k === "--import" || k === "--json" ? resolve(v) : Number(v);
  }
}
ensureLibrary();
const project = join(OUT, "project");
writeSampleProject(project, opts.every);
if (opts.json) writeFileSync(opts.json, "");
const clients = opts.import ? ["js", "binding"] : ["js"];
const sha = {};
for (let round = 0; round < opts.rounds; round++) {
  for (let k = 0; k < clients.length; k++) {
    const client = clients[(k + round) % clients.length];
    const summary = join(OUT, `${client}-${round}.json`);
    const nodeArgs = client === "binding" ? ["--import", opts.import] : [];
    const load = loadavg()[0];
    execFileSync(process.execPath, [...nodeArgs, join(HERE, "walk.mjs"), "--project", project, "--json", summary], { stdio: "inherit" });
    const s = JSON.parse(readFileSync(summary, "utf8"));
    sha[client] ??= s.outputSha1;
    if (s.outputSha1 !== sha[client] || (sha.js && sha.binding && sha.js !== sha.binding)) {
      console.error(`e2e: walk output differs (${JSON.stringify(sha)}, this walk ${s.outputSha1})`);
      process.exit(1);
    }
    // The binding's counters that say how its waits went (docs/SPIN.md#counters).
    const c = s.channelStats;
    const spin = c ? { suspensions: c.suspensions, blockedWhileSuspended: c.blocked_while_suspended, spinContended: c.spin_contended, stolenYields: c.stolen_yields } : undefined;
    const line = JSON.stringify({ client, round, requests: s.requests, wallMs: s.wallMs, clientCpuMs: s.clientCpuMs, serverCpuMs: s.serverCpuMs, load1: load, spin });
    console.log(line);
    if (opts.json) appendFileSync(opts.json, line + "\n");
  }
}
