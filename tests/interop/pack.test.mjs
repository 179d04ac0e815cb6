// The packages a tool author installs (docs/NODE.md, "Platforms"):
// scripts/package.mjs packs the platform-free main package and this
// machine's platform package; they go into a fresh project that has only
// typescript@7.0.2 besides them, the platform package taken from its
// tarball (an npm override), never the registry. There
// `node --import spinrpc/register` and the spinrpc-node launcher put
// spinrpc's channel under the API for an ES-module and a CommonJS program;
// without the platform package, or with one of another version, the API
// keeps its pure-JS channel with one line, and SPINRPC_BINDING=required
// makes that an error. npm fetches typescript@7.0.2 and spinrpc's one
// dependency (require-in-the-middle) from its cache or the registry
// (--prefer-offline).

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "./peers.mjs";

const scratch = mkdtempSync(join(tmpdir(), "spinrpc-pack-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
const dist = join(scratch, "dist");
const project = join(scratch, "a-tool");
const VERSION = JSON.parse(readFileSync(join(REPO_ROOT, "node", "package.json"), "utf8")).version;
const PLATFORM_PACKAGE = "@spinrpc/linux-x64-gnu";
const installed = join(project, "node_modules", "@spinrpc", "linux-x64-gnu");

function npm(args, cwd) {
  const r = spawnSync("npm", args, { cwd, encoding: "utf8", timeout: 120_000, env: { ...process.env, NODE_OPTIONS: "" } });
  assert.equal(r.status, 0, `npm ${args.join(" ")}: ${r.error ?? ""}${r.stderr}`);
  return r.stdout;
}

function tarFiles(tarball) {
  return execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).trim().split("\n").map((f) => f.replace(/^package\//, "")).sort();
}

const body = `const api = new API({ cwd: process.cwd() });
console.log(JSON.stringify({ spinrpc: api.client.channel.constructor.spinrpc?.version ?? null, echo: api.client.echo("packed") }));
api.close();\n`;

/** Runs app in the project: { status, stdout, stderr }. */
function run(command, args, env = {}) {
  // An environment as a tool that strips it would give: no SPINRPC_* from ours.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SPINRPC_") && k !== "NODE_OPTIONS"));
  return spawnSync(command, args, { cwd: project, encoding: "utf8", timeout: 60_000, env: { ...base, ...env } });
}

test("the main package carries no binary, the platform package only its addon, and npm installs them with typescript@7.0.2", () => {
  execFileSync(process.execPath, [join(REPO_ROOT, "scripts", "package.mjs"), "pack", "--out", dist], { encoding: "utf8" });
  const main = join(dist, `spinrpc-${VERSION}.tgz`);
  const platform = join(dist, `spinrpc-linux-x64-gnu-${VERSION}.tgz`);
  const files = tarFiles(main);
  assert.ok(!files.some((f) => f.endsWith(".node")), files.join(" "));
  for (const f of ["launcher.mjs", "platforms.mjs", "register.mjs", "register.cjs", "watch.cjs", "binding-settings.cjs", "dialects.mjs", "dialects.json", "package.json"]) {
    assert.ok(files.includes(f), f);
  }
  const manifest = JSON.parse(execFileSync("tar", ["-xzOf", main, "package/package.json"], { encoding: "utf8" }));
  assert.equal(manifest.os, undefined);
  assert.equal(manifest.cpu, undefined);
  assert.equal(manifest.libc, undefined);
  assert.equal(manifest.optionalDependencies[PLATFORM_PACKAGE], VERSION);
  assert.equal(manifest.bin["spinrpc-node"], "./launcher.mjs");
  assert.deepEqual(tarFiles(platform), ["package.json", "spinrpc.node"]);
  const platformManifest = JSON.parse(execFileSync("tar", ["-xzOf", platform, "package/package.json"], { encoding: "utf8" }));
  assert.deepEqual([platformManifest.name, platformManifest.version, platformManifest.os, platformManifest.cpu, platformManifest.libc],
    [PLATFORM_PACKAGE, VERSION, ["linux"], ["x64"], ["glibc"]]);
  assert.equal(platformManifest.scripts, undefined, "no install scripts");

  mkdirSync(project);
  writeFileSync(join(project, "package.json"), `${JSON.stringify({
    name: "a-tool", private: true,
    dependencies: { spinrpc: `file:${main}`, typescript: "7.0.2" },
    // This platform's from its tarball; the arm64 one, which this test does not pack, npm looks up
    // and, as an optional dependency that does not fit this machine, leaves out.
    overrides: { [PLATFORM_PACKAGE]: `file:${platform}` },
  })}\n`);
  npm(["install", "--no-audit", "--no-fund", "--prefer-offline"], project);
  assert.deepEqual(readdirSync(join(project, "node_modules", "@spinrpc")), ["linux-x64-gnu"]);
  writeFileSync(join(project, "app.mjs"), `import { API } from "typescript/unstable/sync";\n${body}`);
  writeFileSync(join(project, "app.cjs"), `const { API } = require("typescript/unstable/sync");\n${body}`);
});

test("--import spinrpc/register engages for import and require under SPINRPC_BINDING=required", () => {
  for (const app of ["app.mjs", "app.cjs"]) {
    const r = run(process.execPath, ["--import", "spinrpc/register", app], { SPINRPC_BINDING: "required" });
    assert.equal(r.status, 0, `${app}: ${r.stderr}`);
    assert.deepEqual(JSON.parse(r.stdout), { spinrpc: "7.0.2", echo: "packed" }, app);
    assert.equal(r.stderr, "", app);
  }
});

test("--require spinrpc/register fails with spinrpc's own error, which says to use --import or spinrpc-node", () => {
  for (const app of ["app.mjs", "app.cjs"]) {
    const r = run(process.execPath, ["--require", "spinrpc/register", app]);
    assert.notEqual(r.status, 0, app);
    assert.equal(r.stdout, "", app);
    assert.match(r.stderr, /code: 'ERR_SPINRPC_USE_IMPORT'/, app);
    assert.match(r.stderr, /spinrpc\/register cannot be loaded with --require or require\(\): .* Preload it with --import instead: node --import spinrpc\/register .* or run the program with spinrpc-node instead of node/, app);
  }
});

test("the spinrpc-node launcher engages with its settings as flags, in an environment stripped of them", () => {
  const launcher = join(project, "node_modules", ".bin", "spinrpc-node");
  for (const app of ["app.mjs", "app.cjs"]) {
    const r = run(launcher, ["--spinrpc-binding=required,report", app]);
    assert.equal(r.status, 0, `${app}: ${r.stderr}`);
    assert.deepEqual(JSON.parse(r.stdout), { spinrpc: "7.0.2", echo: "packed" }, app);
    assert.match(r.stderr, /^spinrpc: typescript@7\.0\.2 \(.*\) runs on spinrpc's channel/, app);
  }
});

test("without the platform package: the pure-JS channel and one line naming it; an error under required", () => {
  const kept = join(scratch, "kept-platform-package");
  cpSync(installed, kept, { recursive: true });
  rmSync(installed, { recursive: true });
  try {
    const r = run(process.execPath, ["--import", "spinrpc/register", "app.mjs"]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { spinrpc: null, echo: "packed" });
    // spinrpc's own lines: the pure-JS client's server shares the app's
    // stderr, and tsc may write Go's "context canceled" there as it is closed.
    const lines = r.stderr.split("\n").filter((line) => line.startsWith("spinrpc: "));
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], new RegExp(`^spinrpc: typescript@7\\.0\\.2 .* keeps its pure-JS channel: .*${PLATFORM_PACKAGE}@${VERSION}, which is not installed`));
    const required = run(process.execPath, ["--import", "spinrpc/register", "app.mjs"], { SPINRPC_BINDING: "required" });
    assert.notEqual(required.status, 0);
    assert.match(required.stderr, /SPINRPC_BINDING=required makes that an error/);
    const direct = run(process.execPath, ["--input-type=module", "-e", 'import("spinrpc").catch((e) => { console.log(e.message); })']);
    assert.match(direct.stdout, new RegExp(`^spinrpc: the addon for linux-x64.* is in the optional package ${PLATFORM_PACKAGE}@`));
  } finally {
    cpSync(kept, installed, { recursive: true });
  }
});

test("a platform package of another version is an error naming both versions", () => {
  const manifestFile = join(installed, "package.json");
  const original = readFileSync(manifestFile, "utf8");
  writeFileSync(manifestFile, JSON.stringify({ ...JSON.parse(original), version: "0.0.1" }));
  try {
    const r = run(process.execPath, ["--import", "spinrpc/register", "app.mjs"], { SPINRPC_BINDING: "required" });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, new RegExp(`${PLATFORM_PACKAGE}@0\\.0\\.1 \\(.*\\) does not match spinrpc@${VERSION.replaceAll(".", "\\.")}`));
  } finally {
    writeFileSync(manifestFile, original);
  }
});
