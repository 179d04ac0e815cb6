// spinrpc's SyncRpcChannel for Node.js: a drop-in for the TypeScript 7
// API's channel (@typescript/native-preview's dist/api/syncChannel.js) and
// for @typescript/libsyncrpc, over spinrpc's spin-aware C++ client.
//
//   import { SyncRpcChannel } from "spinrpc";
//   const channel = new SyncRpcChannel(exe, ["--api"], collectTimingOrOptions);
//
// The addon is node/build/spinrpc.node, built by scripts/build.sh (CMake);
// `npm pack` in node/ ships it. docs/NODE.md has the whole surface.

import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { isMainThread } from "node:worker_threads";

const ADDON = fileURLToPath(new URL("./build/spinrpc.node", import.meta.url));

const require = createRequire(import.meta.url);
let binding;
try {
  binding = require(ADDON);
} catch (e) {
  throw new Error(`spinrpc: cannot load the Node.js addon ${ADDON} (${e.message}); ` +
    "build it with scripts/build.sh in the spinrpc checkout", { cause: e });
}

/**
 * new SyncRpcChannel(exe, args, collectTimingOrOptions?)
 *   requestSync(method, payload: string): string
 *   requestBinarySync(method, payload: Uint8Array): Uint8Array
 *   registerCallback(name, (name, payload) => string)
 *   close()
 *   lastBytesSent, lastBytesReceived (with collectTiming), pid, stats()
 */
export const SyncRpcChannel = withSpawnChecks(binding.SyncRpcChannel, !isMainThread);

// What Node's child_process.spawn refuses before it starts anything
// (lib/child_process.js, normalizeSpawnArguments), refused here with the
// error Node gives, so that a program sees the same through the binding as
// through the TS 7 channel's spawn; the addon then spawns
// (docs/HARDENING.md, "Starting a child as Node does").
//
// In a worker thread, process.env is the worker's own copy (unless it was
// started with env: SHARE_ENV), while the addon would spawn with the
// process's C environment. The TS 7 channel's child_process.spawn takes
// process.env, so there the server gets it too, and the spin settings are
// read from it, unless the caller passes `env` itself. In the main thread
// the two are the same, and nothing is converted per spawn.
function withSpawnChecks(Native, workerEnv) {
  return class SyncRpcChannel extends Native {
    constructor(exe, args, collectTimingOrOptions) {
      const isOptions = typeof collectTimingOrOptions === "object" && collectTimingOrOptions !== null &&
        !Array.isArray(collectTimingOrOptions);
      args = checkedSpawnArguments(exe, args);
      if (isOptions && collectTimingOrOptions.env !== undefined && !collectTimingOrOptions.env) {
        // Node's spawn takes a falsy env (null, false, "") as none:
        // `options.env || process.env`.
        collectTimingOrOptions = Object.create(collectTimingOrOptions, { env: { value: undefined, enumerable: true } });
      }
      let options = collectTimingOrOptions;
      if (isOptions && collectTimingOrOptions.env !== undefined && collectTimingOrOptions.env !== null &&
          typeof collectTimingOrOptions.env === "object") {
        checkEnvironment(collectTimingOrOptions.env);
      } else if (workerEnv && isOptions) {
        // Object.create, not a spread: the addon reads inherited options
        // too, and a spread copies own properties only.
        options = collectTimingOrOptions.env !== undefined ? collectTimingOrOptions
          : Object.create(collectTimingOrOptions, { env: { value: process.env, enumerable: true } });
      } else if (workerEnv) {
        // TS 7's collectTiming, by truthiness as the addon takes it.
        options = { collectTiming: Boolean(collectTimingOrOptions), env: process.env };
      }
      super(exe, args, options);
    }
  };
}

// Node's ERR_INVALID_ARG_VALUE (lib/internal/errors.js): "The argument
// 'file' …", "The property 'options.env['A']' …" (a name with a dot).
function invalidArgValue(name, value, reason) {
  let inspected = require("node:util").inspect(value);  // loaded on a refusal only
  if (inspected.length > 128) inspected = `${inspected.slice(0, 128)}...`;
  const error = new TypeError(`The ${name.includes(".") ? "property" : "argument"} '${name}' ${reason}. Received ${inspected}`);
  error.code = "ERR_INVALID_ARG_VALUE";
  return error;
}

function nullCheck(value, name) {
  if (typeof value === "string" && value.includes("\u0000")) throw invalidArgValue(name, value, "must be a string without null bytes");
}

// The args as spawn passes them: each element converted to a string. The
// checks run in Node's order: the file's type, its NUL bytes, its length,
// then the args' type and their NUL bytes.
function checkedSpawnArguments(exe, args) {
  if (typeof exe !== "string" || (args != null && typeof args !== "object")) {
    // A value of the wrong type: Node's own check says so, in the words of
    // this Node version (they change from one to the next). It throws on the
    // file, or on the args, before it reads the options, and cwd: 0 would be
    // refused next: nothing is ever started here.
    require("node:child_process").spawn(exe, args, { cwd: 0 });
  }
  nullCheck(exe, "file");
  if (exe.length === 0) throw invalidArgValue("file", exe, "cannot be empty");
  if (!Array.isArray(args)) return args ?? [];  // null: none, as spawn takes it; another object: the addon's TypeError
  args.forEach((arg, i) => nullCheck(arg, `args[${i}]`));
  return args.map((arg) => `${arg}`);
}

// The env option's keys and values, checked as spawn checks them: every
// enumerable key, own or inherited, whose value is not undefined.
function checkEnvironment(env) {
  for (const key in env) {
    const value = env[key];
    if (value === undefined) continue;
    nullCheck(key, `options.env['${key}']`);
    nullCheck(value, `options.env['${key}']`);
  }
}

// A channel left open must not outlive the process: process.exit() skips
// Node's environment teardown, so the children are ended here too.
process.on("exit", () => binding.endAll());
