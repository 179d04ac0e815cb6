// spinrpc for Node.js, over spinrpc's spin-aware C++ client:
//
//   import { SyncRpcChannel } from "spinrpc";   // a drop-in for the TS 7 API's channel and @typescript/libsyncrpc
//   const channel = new SyncRpcChannel(exe, ["--api"], collectTimingOrOptions);
//
//   import { createTransport } from "spinrpc";  // for `new API({ transport })` (TypeScript 7.1 nightlies)
//   const api = new API({ transport: createTransport({ cwd: process.cwd() }) });
//
// The addon is node/build/spinrpc.node, built by scripts/build.sh (CMake);
// `npm pack` in node/ ships it. docs/NODE.md has the whole surface.

import { addonError } from "./addon.mjs";
import { NativeSyncRpcChannel } from "./channels.mjs";

if (addonError !== null) throw addonError;

/**
 * new SyncRpcChannel(exe, args, collectTimingOrOptions?)
 *   requestSync(method, payload: string): string
 *   requestBinarySync(method, payload: Uint8Array): Uint8Array
 *   registerCallback(name, (name, payload) => string), unregisterCallback(name)
 *   close()
 *   lastBytesSent, lastBytesReceived (with collectTiming), pid, stats()
 */
export const SyncRpcChannel = NativeSyncRpcChannel;

export { createTransport } from "./transport.mjs";
