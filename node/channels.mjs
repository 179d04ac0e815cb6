// spinrpc's SyncRpcChannel (the addon's class, with a worker thread's own
// environment), and per TypeScript 7 version the class the module hook puts
// in place of that version's pure-JS channel (channelFor). Every class here
// has a static `spinrpc` property; the pure-JS channels have none.

import { isMainThread } from "node:worker_threads";
import { addonError, binding } from "./addon.mjs";
import { bindingSettings, describeChannel } from "./recognize.mjs";

/**
 * new SyncRpcChannel(exe, args, collectTimingOrOptions?)
 *   requestSync(method, payload: string): string
 *   requestBinarySync(method, payload: Uint8Array): Uint8Array
 *   registerCallback(name, (name, payload) => string), unregisterCallback(name)
 *   close()
 *   lastBytesSent, lastBytesReceived (with collectTiming), pid, stats()
 * Null when the addon cannot load here (addonError says why).
 */
export const NativeSyncRpcChannel = binding === null ? null
  : isMainThread ? binding.SyncRpcChannel : withWorkerEnv(binding.SyncRpcChannel);

if (NativeSyncRpcChannel !== null) {
  Object.defineProperty(NativeSyncRpcChannel, "spinrpc", {
    value: Object.freeze({ name: null, version: null, dialect: null, file: null }),
  });
  // A channel left open must not outlive the process: process.exit() skips
  // Node's environment teardown, so the children are ended here too.
  process.on("exit", () => binding.endAll());
}

// In a worker thread, process.env is the worker's own copy (unless it was
// started with env: SHARE_ENV), while the addon would spawn with the
// process's C environment. The TS 7 channel's child_process.spawn takes
// process.env, so here the server gets it too, and the spin settings are
// read from it, unless the caller passes `env` itself. In the main thread
// the two are the same, and nothing is converted per spawn.
function withWorkerEnv(Native) {
  return class SyncRpcChannel extends Native {
    constructor(exe, args, collectTimingOrOptions) {
      const isOptions = typeof collectTimingOrOptions === "object" && collectTimingOrOptions !== null &&
        !Array.isArray(collectTimingOrOptions);
      let options;
      if (isOptions) {
        // Object.create, not a spread: the addon reads inherited options
        // too, and a spread copies own properties only.
        options = collectTimingOrOptions.env !== undefined ? collectTimingOrOptions
          : Object.create(collectTimingOrOptions, { env: { value: process.env, enumerable: true } });
      } else {
        // TS 7's collectTiming, by truthiness as the addon takes it.
        options = { collectTiming: Boolean(collectTimingOrOptions), env: process.env };
      }
      super(exe, args, options);
    }
  };
}

// What a failing callback does to a request, per API dialect, as that
// dialect's own channel: 7.0 throws "Error calling callback …" from the
// request; 7.1 also throws that same error from every later request.
const CALLBACK_FAILURE = { "7.0": "throw", "7.1": "poison" };

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
  const rule = CALLBACK_FAILURE[info.dialect];
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
  if (info.dialect === "7.0") {
    // 7.0's own channel has no unregisterCallback.
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
