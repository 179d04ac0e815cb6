// spinrpc-node (node/launcher.mjs), the executable a tool that starts Node
// itself is pointed at: `node --import spinrpc/register` with spinrpc's
// settings as flags, the script's arguments, stdio and exit status passed
// through, and a signal that ends the script ending the launcher the same
// way. Run on every Node line (on Node 22.15+ it execs Node in place; on
// older Node it stays as the script's parent and forwards signals).

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { REPO_ROOT } from "./peers.mjs";

const LAUNCHER = join(REPO_ROOT, "node", "launcher.mjs");
const VERSION = (await import(join(REPO_ROOT, "node", "package.json"), { with: { type: "json" } })).default.version;

function launch(args, options = {}) {
  return spawnSync(process.execPath, [LAUNCHER, ...args], { encoding: "utf8", timeout: 60_000, ...options });
}

test("--help and --version answer before any script; after the script they are the script's", () => {
  const help = launch(["--help"]);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^Usage: spinrpc-node /);
  for (const variable of ["SPINRPC_BINDING", "SPINRPC_TRACE", "SPINRPC_SHM", "TSGO_SYNC_SPIN_US"]) assert.match(help.stdout, new RegExp(variable));
  const version = launch(["--version"]);
  assert.equal(version.stdout, `spinrpc-node ${VERSION} (node ${process.version})\n`);
  const script = launch(["-e", "console.log(JSON.stringify(process.argv.slice(1)))", "--", "--help", "--version"]);
  assert.equal(script.status, 0, script.stderr);
  assert.deepEqual(JSON.parse(script.stdout), ["--help", "--version"]);
});

test("settings become the variables, node options pass through, the hook is imported, the exit status is the script's", () => {
  const r = launch(["--spinrpc-binding=report", "--spinrpc-spin-us=7", "--no-warnings", "-e",
    "console.log(JSON.stringify([process.env.SPINRPC_BINDING, process.env.TSGO_SYNC_SPIN_US, process.execArgv])); process.exit(7)"],
  { env: { ...process.env, SPINRPC_BINDING: "required" } });
  assert.equal(r.status, 7, r.stderr);
  const [binding, spin, execArgv] = JSON.parse(r.stdout);
  assert.equal(binding, "report", "the flag beats the variable");
  assert.equal(spin, "7");
  assert.equal(execArgv[0], "--import");
  assert.match(execArgv[1], /node\/register\.mjs$/);
  assert.ok(execArgv.includes("--no-warnings"));
});

test("an unknown spinrpc flag, or one without a value, is a usage error that starts nothing", () => {
  for (const [arg, text] of [["--spinrpc-nope=1", /unknown flag --spinrpc-nope/], ["--spinrpc-binding", /needs a value/]]) {
    const r = launch([arg, "-e", "console.log('ran')"]);
    assert.equal(r.status, 2);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, text);
  }
});

test("stdin and stdout pass through, and SIGTERM to the launcher ends the script by that signal", async () => {
  const echo = launch(["-e", "process.stdin.pipe(process.stdout)"], { input: "through\n" });
  assert.equal(echo.stdout, "through\n");
  const child = spawn(process.execPath, [LAUNCHER, "-e", "console.log('ready'); setInterval(() => {}, 1000)"], { stdio: ["ignore", "pipe", "inherit"] });
  const [chunk] = await once(child.stdout, "data");
  assert.equal(String(chunk), "ready\n");
  child.kill("SIGTERM");
  const [code, signal] = await once(child, "exit");
  assert.deepEqual([code, signal], [null, "SIGTERM"]);
});
