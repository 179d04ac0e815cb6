#!/usr/bin/env node
// spinrpc-node: `node --import spinrpc/register …` as one executable, for
// tools that start Node themselves (a sidecar, a worker pool, a language
// server) and let you name the executable but not its flags or its
// environment. Point the tool's "node path" at this file (the npm bin
// `spinrpc-node`); docs/NODE.md, "spinrpc-node".
//
//   spinrpc-node [--spinrpc-NAME=VALUE …] [node options] [--] script [args…]
//
// Every spinrpc setting is also a flag here (SETTINGS below), so a parent
// that strips the environment cannot lose it; a flag beats the variable.
// The rest goes to Node unchanged, after `--import <register.mjs>`. Where
// Node has process.execve (22.15+, 23.11+) this process becomes that Node,
// so its pid, stdio, signals and exit status are the script's own;
// elsewhere the child inherits stdio, gets every forwarded signal, and its
// exit status (or signal) is this process's.

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const REGISTER = new URL("./register.mjs", import.meta.url).href;
const VERSION = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")).version;

/** --spinrpc-NAME → the variable it sets (every one spinrpc reads; settings/settings.h's table). */
const SETTINGS = Object.freeze({
  "binding": "SPINRPC_BINDING",
  "spin-us": "TSGO_SYNC_SPIN_US",
  "spin-adaptive": "TSGO_SYNC_SPIN_ADAPTIVE",
  "placement": "SPINRPC_PLACEMENT",
  "shm": "SPINRPC_SHM",
  "trace": "SPINRPC_TRACE",
  "trace-max": "SPINRPC_TRACE_MAX",
  "lend-replies": "SPINRPC_LEND_REPLIES",
  "peer-spins": "SPINRPC_PEER_SPINS",
  "ts-api": "SPINRPC_TS_API",
});

const HELP = `Usage: spinrpc-node [--spinrpc-NAME=VALUE ...] [node options] [--] script [args...]

Runs Node with spinrpc's channel under every TypeScript 7 sync API the
script creates: node --import spinrpc/register [node options] script [args...].
Point a tool's "node executable" setting at this program.

spinrpc's settings, as flags (each sets the variable named; a flag beats it):
${Object.entries(SETTINGS).map(([flag, name]) => `  --spinrpc-${flag}=VALUE`.padEnd(32) + name).join("\n")}

  --help, -h      this text (before the script; after it, the script's)
  --version       spinrpc-node's version and Node's

The script's arguments, stdio and exit status pass through; signals reach it.
docs/NODE.md, "spinrpc-node", says more.
`;

function usageError(text) {
  process.stderr.write(`spinrpc-node: ${text} (spinrpc-node --help)\n`);
  process.exit(2);
}

/** Splits argv into spinrpc's settings and Node's arguments: { env, nodeArgs, help, version }. */
function parseArguments(argv) {
  const env = {};
  let i = 0;
  const nodeArgs = [];
  for (; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") { i++; break; }
    if (!arg.startsWith("-") || arg === "-") break;  // the script (or stdin)
    if (arg === "--help" || arg === "-h") return { help: true };
    if (arg === "--version") return { version: true };
    if (arg.startsWith("--spinrpc-")) {
      const eq = arg.indexOf("=");
      const flag = arg.slice("--spinrpc-".length, eq < 0 ? undefined : eq);
      if (!Object.hasOwn(SETTINGS, flag)) usageError(`unknown flag --spinrpc-${flag}`);
      if (eq < 0) usageError(`--spinrpc-${flag} needs a value: --spinrpc-${flag}=VALUE`);
      env[SETTINGS[flag]] = arg.slice(eq + 1);
      continue;
    }
    nodeArgs.push(arg);
  }
  return { env, nodeArgs: [...nodeArgs, ...argv.slice(i)] };
}

function run() {
  const parsed = parseArguments(process.argv.slice(2));
  if (parsed.help) return process.stdout.write(HELP);
  if (parsed.version) return process.stdout.write(`spinrpc-node ${VERSION} (node ${process.version})\n`);
  const args = ["--import", REGISTER, ...parsed.nodeArgs];
  const env = { ...process.env, ...parsed.env };
  if (typeof process.execve === "function") {
    process.execve(process.execPath, [process.execPath, ...args], env);  // does not return
  }
  const child = spawn(process.execPath, args, { stdio: "inherit", env });
  const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR2", "SIGWINCH"];
  const forward = (signal) => { try { child.kill(signal); } catch { /* already gone */ } };
  for (const signal of forwarded) process.on(signal, forward);
  child.on("error", (e) => {
    process.stderr.write(`spinrpc-node: cannot start ${process.execPath}: ${e.message}\n`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    for (const s of forwarded) process.off(s, forward);
    if (signal !== null) {
      process.kill(process.pid, signal);  // the same death as the script's, default action restored
      return;
    }
    process.exit(code ?? 1);
  });
}

run();
