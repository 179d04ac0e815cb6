// The watch behind SPINRPC_BINDING=required and =report for the TypeScript 7
// sync APIs the module hook cannot reach: a copy of the API bundled into a
// tool (esbuild and the like inline syncChannel.js, so no module of that name
// ever loads) and worker threads that run no `--import` preload (started
// from source text, or with an execArgv of their own). register.mjs loads it
// in every thread it runs in; workers get it through `--require`, which Node
// runs in every worker, source-text ones included (docs/NODE.md, "When the
// hook cannot reach an API").
//
// What it watches is the pure-JS channel's own start of its server:
// child_process.spawn of an executable with `--api` among its arguments and
// no `--async` (the async client's server, which is no sync channel). spinrpc's
// channel never goes through child_process (the addon spawns), so every such
// spawn is a sync API on a channel that is not spinrpc's. Under `required` it
// throws before anything starts, naming the caller's stack frame; under
// `report` the server starts and one line says so. Without either, nothing.
//
// CommonJS, so that Node 20 can load it as a worker's `--require` preload.
"use strict";

const childProcess = require("node:child_process");
const workerThreads = require("node:worker_threads");
const { syncBuiltinESMExports } = require("node:module");
const { bindingSettings } = require("./binding-settings.cjs");

// Once per thread, whichever of register.mjs and `--require` comes first.
const INSTALLED = Symbol.for("spinrpc.watch");

if (globalThis[INSTALLED] !== true) {
  globalThis[INSTALLED] = true;
  watchSpawn();
  carryIntoWorkers();
  // `import { spawn } from "node:child_process"` (an ES module's, a bundle's)
  // sees the replaced functions from here on, as require() does.
  syncBuiltinESMExports();
}

// The arguments of a TypeScript 7 sync API server's start: `--api` (or
// `-api`, `--api=…`, as Go's flag package reads it), and no `--async`. An
// argument that has no string (a toString that throws or gives no
// primitive) is no flag; what it does to the spawn is Node's to decide
// (Node 20 refuses it, Node 22 and later pass ""), so nothing here throws.
function isSyncServerStart(args) {
  if (!Array.isArray(args)) return false;
  const flags = args.map((arg) => {
    try {
      return `${arg}`;
    } catch {
      return "";
    }
  });
  return flags.some((arg) => /^--?api(=|$)/.test(arg)) && !flags.some((arg) => /^--?async(=|$)/.test(arg));
}

// The stack frame that called `fn` ("new SyncRpcChannel (file:///…:126:26)"),
// or "an unknown caller".
function callerOf(fn) {
  const holder = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 1;
  Error.captureStackTrace(holder, fn);
  Error.stackTraceLimit = limit;
  const frame = String(holder.stack ?? "").split("\n")[1]?.trim().replace(/^at /, "");
  return frame || "an unknown caller";
}

function watchSpawn() {
  const originalSpawn = childProcess.spawn;
  childProcess.spawn = function spawn(file, args, options) {
    if (!isSyncServerStart(args)) return Reflect.apply(originalSpawn, this, arguments);
    const settings = bindingSettings();
    if (!settings.required && !settings.report) return Reflect.apply(originalSpawn, this, arguments);
    const thread = workerThreads.isMainThread ? "" : ` in worker thread ${workerThreads.threadId}`;
    const text = `spinrpc: a TypeScript 7 sync API starts its server (${file}) on its own pure-JS channel, ` +
      `not spinrpc's, from ${callerOf(spawn)}${thread}`;
    if (settings.required) {
      const why = workerThreads.isMainThread
        ? "a copy of the channel the module hook did not replace, such as one bundled into the program " +
          "(leave the TypeScript package out of the bundle: esbuild's --external:typescript)"
        : "this worker runs no --import preload (started from source text, or with an execArgv without it): " +
          "start it from a file, or put --import spinrpc/register in its execArgv";
      throw Object.assign(new Error(`${text}; ${why} (docs/NODE.md, "When the hook cannot reach an API"); ` +
        "SPINRPC_BINDING=required makes that an error"), { code: "ERR_SPINRPC_BINDING_REQUIRED" });
    }
    const child = Reflect.apply(originalSpawn, this, arguments);
    process.stderr.write(`${text} (pid ${child.pid})\n`);
    return child;
  };
}

// new Worker(…) with this file as a `--require` preload of the worker, where
// the worker would not load it otherwise: an execArgv of the caller's (kept,
// this added), or a worker from source text inheriting this thread's
// (an `--import` preload does not run there). A worker from a file that
// inherits this thread's options runs this thread's `--import
// spinrpc/register`, and is left as it is.
function carryIntoWorkers() {
  const OriginalWorker = workerThreads.Worker;
  const preload = ["--require", __filename];
  const hasPreload = (execArgv) => execArgv.some((arg, i) => arg === __filename && execArgv[i - 1] === "--require");
  workerThreads.Worker = new Proxy(OriginalWorker, {
    construct(target, [filename, options, ...rest], newTarget) {
      const given = options ?? {};
      let execArgv = null;
      if (Array.isArray(given.execArgv)) {
        if (!hasPreload(given.execArgv)) execArgv = [...given.execArgv, ...preload];
      } else if (given.eval && !hasPreload(process.execArgv)) {
        execArgv = [...process.execArgv, ...preload];
      }
      if (execArgv === null) return Reflect.construct(target, [filename, options, ...rest], newTarget);
      try {
        return Reflect.construct(target, [filename, { ...given, execArgv }, ...rest], newTarget);
      } catch (error) {
        if (error?.code !== "ERR_WORKER_INVALID_EXEC_ARGV" || Array.isArray(given.execArgv)) throw error;
        // This thread's own flags, copied, can hold some Node takes for the
        // whole process only (V8's --max-old-space-size, --title), which it
        // refuses in a worker's execArgv and names: they are in force for
        // the worker anyway, so it starts without them.
        const refused = new Set(String(error.message).replace(/^[^:]*: /, "").split(", "));
        return Reflect.construct(target, [filename, { ...given, execArgv: execArgv.filter((arg) => !refused.has(arg)) }, ...rest],
          newTarget);
      }
    },
  });
}
