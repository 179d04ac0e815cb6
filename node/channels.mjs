// spinrpc's SyncRpcChannel (the addon's class, with Node's spawn checks and
// a worker thread's own environment), and per TypeScript 7 version the class the module hook puts
// in place of that version's pure-JS channel (channelFor). Every class here
// has a static `spinrpc` property; the pure-JS channels have none.

import { createRequire } from "node:module";
import { isMainThread } from "node:worker_threads";
import { addonError, binding } from "./addon.mjs";
import { dialectNamed } from "./dialects.mjs";
import { bindingSettings, describeChannel } from "./recognize.mjs";

const require = createRequire(import.meta.url);

/**
 * new SyncRpcChannel(exe, args, collectTimingOrOptions?)
 *   requestSync(method, payload: string): string
 *   requestBinarySync(method, payload: Uint8Array): Uint8Array
 *   registerCallback(name, (name, payload) => string), unregisterCallback(name)
 *   close()
 *   lastBytesSent, lastBytesReceived (with collectTiming), pid, stats()
 * Null when the addon cannot load here (addonError says why).
 */
export const NativeSyncRpcChannel = binding === null ? null : withSpawnChecks(binding.SyncRpcChannel, !isMainThread);

if (NativeSyncRpcChannel !== null) {
  Object.defineProperty(NativeSyncRpcChannel, "spinrpc", {
    value: Object.freeze({ name: null, version: null, dialect: null, file: null }),
  });
  // A channel left open must not outlive the process: process.exit() skips
  // Node's environment teardown, so the children are ended here too.
  process.on("exit", () => binding.endAll());
}

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
  return args.map(spawnArgumentText);
}

// An element of args as this Node's spawn passes it: `${arg}`. An element
// that has no string (a Symbol; an object whose toString throws or gives no
// primitive) is where Node lines differ: Node 20's spawn throws what the
// conversion throws and starts nothing; Node 22 and later pass "" in its
// place and start the program.
function spawnArgumentText(arg) {
  try {
    return `${arg}`;
  } catch (error) {
    if (spawnRefusesArgumentWithoutText()) throw error;
    return "";
  }
}

// Which of the two this Node's spawn does, asked of it once, the first time
// such an argument comes: with a Symbol for an argument and a file below
// process.execPath, a regular file, so that no program can start. A Node
// that refuses the argument throws the conversion's TypeError before it
// forks; one that passes "" gets as far as the exec, which fails (ENOTDIR,
// thrown as an errno error with `syscall`; an emitted error is taken too).
let refusesArgumentWithoutText;
function spawnRefusesArgumentWithoutText() {
  if (refusesArgumentWithoutText === undefined) {
    try {
      const child = require("node:child_process").spawn(`${process.execPath}/spinrpc-no-such-program`, [Symbol("probe")],
        { stdio: "ignore" });
      child.on("error", () => {});
      refusesArgumentWithoutText = false;
    } catch (error) {
      refusesArgumentWithoutText = error?.syscall === undefined;
    }
  }
  return refusesArgumentWithoutText;
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

/**
 * The class that stands in for `info`'s pure-JS channel (`Original`):
 * spinrpc's, with that version's surface and callback-failure rule. When
 * the addon cannot load here: one line on stderr and `Original`, or under
 * SPINRPC_BINDING=required an error naming the package, its version and
 * the file. `info` is recognize.mjs's identifyChannel().
 */
export function channelFor(info, Original) {
  const settings = bindingSettings();
  if (NativeSyncRpcChannel === null) {
    const text = `spinrpc: ${describeChannel(info)} keeps its pure-JS channel: ${addonError.message}`;
    if (settings.required) {
      throw Object.assign(new Error(`${text}; SPINRPC_BINDING=required makes that an error`, { cause: addonError }),
        { code: "ERR_SPINRPC_BINDING_REQUIRED" });
    }
    process.stderr.write(`${text}\n`);
    return Original;
  }
  // What a failing callback does to a request, as the dialect's own channel
  // does it (dialects.json's callback_failure): "throw" throws "Error
  // calling callback …" from the request; "poison" also throws that same
  // error from every later request.
  const dialect = dialectNamed(info.dialect);
  const rule = dialect.callback_failure;
  class SyncRpcChannel extends NativeSyncRpcChannel {
    // The version's (exe, args, collectTiming), or spinrpc's options object
    // (docs/NODE.md, "The surface"), the rule added unless it names one.
    constructor(exe, args, collectTimingOrOptions = false) {
      const options = typeof collectTimingOrOptions === "object" && collectTimingOrOptions !== null &&
          !Array.isArray(collectTimingOrOptions)
        ? Object.create(collectTimingOrOptions, collectTimingOrOptions.callbackFailure === undefined
          ? { callbackFailure: { value: rule, enumerable: true } } : {})
        : { collectTiming: Boolean(collectTimingOrOptions), callbackFailure: rule };
      super(exe, args, options);
      if (bindingSettings().report) {
        process.stderr.write(`spinrpc: ${describeChannel(info)} runs on spinrpc's channel (server ${exe}, pid ${this.pid})\n`);
      }
    }
  }
  if (!dialect.unregister_callback) {
    // The dialect's own channel has no unregisterCallback.
    Object.defineProperty(SyncRpcChannel.prototype, "unregisterCallback", { value: undefined, writable: true, configurable: true });
  }
  Object.defineProperty(SyncRpcChannel, "spinrpc", {
    value: Object.freeze({ name: info.name, version: info.version, dialect: info.dialect, file: info.file }),
  });
  return SyncRpcChannel;
}

/** Whether `Channel` (a module's SyncRpcChannel export) is one of spinrpc's. */
export function isSpinrpcChannel(Channel) {
  return typeof Channel === "function" && Object.hasOwn(Channel, "spinrpc");
}
