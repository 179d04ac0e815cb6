// typescript-eslint's tsgo backend, a real client of the TypeScript 7 sync
// API: ESLint with recommendedTypeChecked over tests/eslint/fixture, where
// typescript-eslint requires `@typescript/native/sync` (an npm alias of
// the interop suite's 7.1 nightly; tests/eslint/package.json). The lint
// results through spinrpc's binding (`--import spinrpc/register`, and the
// spinrpc-node launcher) must be the pure-JS channel's, finding for
// finding; SPINRPC_BINDING=required,report proves the binding was under it.
// npm test runs this on every Node line scripts/test.sh runs.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./peers.mjs";

const ESLINT_DIR = join(REPO_ROOT, "tests", "eslint");
const FIXTURE = join(ESLINT_DIR, "fixture");
const ESLINT = join(ESLINT_DIR, "node_modules", "eslint", "bin", "eslint.js");
const REGISTER = join(REPO_ROOT, "node", "register.mjs");
const LAUNCHER = join(REPO_ROOT, "node", "launcher.mjs");

/** ESLint's JSON report of the fixture, and its stderr. */
function lint(prefix, env = {}) {
  assert.ok(existsSync(ESLINT), `${ESLINT} is missing: scripts/setup.sh installs tests/eslint`);
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SPINRPC_") && k !== "NODE_OPTIONS"));
  const r = spawnSync(process.execPath, [...prefix, ESLINT, "--format", "json", "."],
    { cwd: FIXTURE, encoding: "utf8", timeout: 180_000, env: { ...base, ...env } });
  // ESLint exits 1 when it finds problems, which the fixture has.
  assert.equal(r.status, 1, `eslint: ${r.error ?? ""}${r.stderr}`);
  const findings = JSON.parse(r.stdout).map((file) => ({
    file: file.filePath.slice(FIXTURE.length + 1),
    messages: file.messages.map(({ ruleId, line, column, message }) => ({ ruleId, line, column, message })),
  }));
  return { findings, stderr: r.stderr };
}

const ENGAGED = /^spinrpc: typescript@7\.1\.0-dev\.20261105\.1 \(.*tests\/eslint\/node_modules\/@typescript\/native\/dist\/api\/syncChannel\.js\) runs on spinrpc's channel/m;

let pureJs;

test("typescript-eslint (tsgo backend) on its own pure-JS channel finds the fixture's type-checked problems", () => {
  pureJs = lint([]);
  assert.doesNotMatch(pureJs.stderr, /spinrpc/);
  const rules = new Set(pureJs.findings.flatMap((f) => f.messages.map((m) => m.ruleId)));
  for (const rule of ["@typescript-eslint/no-floating-promises", "@typescript-eslint/no-unsafe-assignment",
    "@typescript-eslint/restrict-template-expressions", "@typescript-eslint/unbound-method"]) {
    assert.ok(rules.has(rule), `${rule} in ${[...rules].join(", ")}`);
  }
  for (const file of pureJs.findings) {
    for (const m of file.messages) assert.notEqual(m.ruleId, null, `${file.file}: ${m.message}`);  // no parsing error
  }
});

test("through --import spinrpc/register under SPINRPC_BINDING=required: the same findings", () => {
  const hooked = lint(["--import", REGISTER], { SPINRPC_BINDING: "required,report" });
  assert.match(hooked.stderr, ENGAGED);
  assert.deepEqual(hooked.findings, pureJs.findings);
});

test("through the spinrpc-node launcher, its settings as flags: the same findings", () => {
  const launched = lint([LAUNCHER, "--spinrpc-binding=required,report"]);
  assert.match(launched.stderr, ENGAGED);
  assert.deepEqual(launched.findings, pureJs.findings);
});
