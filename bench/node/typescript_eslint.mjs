#!/usr/bin/env node
// typescript_eslint: a real tool's wall clock, pure-JS channel against
// spinrpc's binding. ESLint with typescript-eslint's recommendedTypeChecked
// on its tsgo backend (`@typescript/native`, the 7.1 nightly aliased;
// tests/eslint) lints rxjs 7.8's `src/` from its npm tarball; each round
// runs it once on the TypeScript channel and once through
// `--import node/register.mjs`, in an order that alternates from round to
// round, and checks that both runs found the same problems
// (docs/BENCHMARKING.md).
//
//   node bench/node/typescript_eslint.mjs [--rounds R] [--json FILE]
//
// --rounds R   rounds (default 5)
// --json FILE  also write the per-round figures as JSON
//
// Prints each round's two wall-clock times and their ratio (binding /
// pure-JS), the median of the per-round ratios and their range, the load
// average before and after, and the Node it ran on (run it with another
// Node's executable for another line).

import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ESLINT_DIR = join(REPO, "tests", "eslint");
const ESLINT = join(ESLINT_DIR, "node_modules", "eslint", "bin", "eslint.js");
const RXJS = join(ESLINT_DIR, "node_modules", "rxjs");
const REGISTER = join(REPO, "node", "register.mjs");

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};
const rounds = Number(option("--rounds", "5"));
const jsonFile = option("--json", null);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error("--rounds takes a positive integer");
for (const needed of [ESLINT, join(RXJS, "src", "index.ts")]) {
  if (!existsSync(needed)) throw new Error(`${needed} is missing: scripts/setup.sh installs tests/eslint`);
}

// The project linted: rxjs's sources, with the fixture's configuration
// shape (tests/eslint/fixture/eslint.config.mjs), under tests/eslint so
// that typescript-eslint resolves from its node_modules.
const project = mkdtempSync(join(ESLINT_DIR, ".bench-rxjs-"));
process.on("exit", () => rmSync(project, { recursive: true, force: true }));
cpSync(join(RXJS, "src"), join(project, "src"), { recursive: true });
writeFileSync(join(project, "tsconfig.json"), `${JSON.stringify({
  compilerOptions: { target: "es2022", module: "esnext", moduleResolution: "bundler", strict: true, noEmit: true,
    lib: ["es2022", "dom"], skipLibCheck: true },
  include: ["src/**/*.ts"],
}, null, 2)}\n`);
writeFileSync(join(project, "eslint.config.mjs"), readFileSync(join(ESLINT_DIR, "fixture", "eslint.config.mjs"), "utf8"));

function lint(binding) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SPINRPC_") && k !== "NODE_OPTIONS"));
  if (binding) env.SPINRPC_BINDING = "required";
  const started = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [...(binding ? ["--import", REGISTER] : []), ESLINT, "--format", "json", "src"],
    { cwd: project, env, encoding: "utf8", maxBuffer: 1 << 28, timeout: 900_000 });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (r.status !== 0 && r.status !== 1) throw new Error(`eslint (${binding ? "binding" : "pure-JS"}) failed: ${r.error ?? r.status} ${r.stderr}`);
  const findings = JSON.parse(r.stdout).map((f) => [f.filePath.slice(project.length), f.messages.map((m) => [m.ruleId, m.line, m.column])]);
  return { seconds, findings: JSON.stringify(findings), count: findings.reduce((n, [, m]) => n + m.length, 0) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const loadBefore = loadavg()[0];
console.log(`typescript_eslint: rxjs ${JSON.parse(readFileSync(join(RXJS, "package.json"), "utf8")).version} src/, ` +
  `Node ${process.version}, ${rounds} rounds, load average ${loadBefore.toFixed(2)} before`);
const results = [];
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? [false, true] : [true, false];
  const run = {};
  for (const binding of order) run[binding ? "binding" : "pureJs"] = lint(binding);
  if (run.binding.findings !== run.pureJs.findings) throw new Error(`round ${round + 1}: the binding's findings differ from the pure-JS channel's`);
  const ratio = run.binding.seconds / run.pureJs.seconds;
  results.push({ round: round + 1, pureJs: run.pureJs.seconds, binding: run.binding.seconds, ratio, findings: run.pureJs.count });
  console.log(`round ${round + 1}: pure-JS ${run.pureJs.seconds.toFixed(2)} s, binding ${run.binding.seconds.toFixed(2)} s, ` +
    `ratio ${ratio.toFixed(3)} (${run.pureJs.count} findings, the same)`);
}
const ratios = results.map((r) => r.ratio);
const loadAfter = loadavg()[0];
console.log(`binding / pure-JS: median ${median(ratios).toFixed(3)} [${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}]; ` +
  `load average ${loadAfter.toFixed(2)} after`);
if (jsonFile) {
  writeFileSync(jsonFile, `${JSON.stringify({ node: process.version, rounds: results, median: median(ratios), loadBefore, loadAfter }, null, 2)}\n`);
}
