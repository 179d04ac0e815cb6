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

let binding;
try {
  binding = createRequire(import.meta.url)(ADDON);
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
export const SyncRpcChannel = isMainThread ? binding.SyncRpcChannel : withWorkerEnv(binding.SyncRpcChannel);

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

// A channel left open must not outlive the process: process.exit() skips
// Node's environment teardown, so the children are ended here too.
process.on("exit", () => binding.endAll());
