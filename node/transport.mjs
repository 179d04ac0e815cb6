// createTransport(options): a SyncTransport (typescript/sync/transport, the
// 7.1 nightlies' `new API({ transport })`) over spinrpc's channel.
//
//   import { API } from "typescript/sync";
//   import { createTransport } from "spinrpc";
//   const api = new API({ transport: createTransport({ cwd: process.cwd() }) });
//
// The server is the TypeScript package's own (its lib/getExePath.js, as its
// own spawn finds it) unless `tsserverPath` names another, started with the
// arguments that package's own spawn passes (its dist/api/options.js
// getAPIProcessArgs, and `--callbacks=` from its dist/api/fsCallbacks.js
// when the API hands the transport a file system). It starts at the first
// request, once the API has had its say (setFileSystem comes before). What
// can be refused before that is refused by createTransport() itself: an
// option of the wrong kind (a TypeError), a server path where nothing can be
// run (its errno's code: ENOENT, EACCES, …). After close() every request
// throws as the version's own channel does, and no server ever starts.

import * as fs from "node:fs";
import { realpathSync } from "node:fs";
import * as nodeModule from "node:module";
import * as path from "node:path";
import { dirname, join } from "node:path";
import * as url from "node:url";
import { fileURLToPath } from "node:url";
import { addonError, binding } from "./addon.mjs";
import { channelFor } from "./channels.mjs";
import { dialectNamed } from "./dialects.mjs";
import { CHANNEL_PATH, describeChannel, identifyChannel } from "./recognize.mjs";

// createTransport's own options; the rest go to the channel (docs/NODE.md, "The surface").
const OWN = new Set(["cwd", "typescript", "tsserverPath", "useCaseSensitiveFileNames", "runExternalCode", "collectTiming"]);

// createTransport's own options that are not strings: booleans, unset or not.
const BOOLEANS = ["useCaseSensitiveFileNames", "runExternalCode", "collectTiming"];

/** A TypeError for createTransport's own options of the wrong kind. */
function checkOwnOptions(options) {
  const refuse = (key, what) => {
    throw new TypeError(`createTransport: option ${key} must be ${what}, got ${options[key] === null ? "null" : typeof options[key]}`);
  };
  if (options.cwd !== undefined && typeof options.cwd !== "string") refuse("cwd", "a string");
  if (options.tsserverPath !== undefined && (typeof options.tsserverPath !== "string" || options.tsserverPath === "")) {
    refuse("tsserverPath", "a non-empty string");
  }
  if (options.typescript !== undefined && typeof options.typescript !== "string" && !(options.typescript instanceof URL)) {
    refuse("typescript", "a folder (a path or a file: URL)");
  }
  for (const key of BOOLEANS) if (options[key] !== undefined && typeof options[key] !== "boolean") refuse(key, "a boolean");
}

// The server, checked as spawn will find it: a path (a name with a `/`) must
// be something this process may execute, else an Error with the errno's code
// naming the path; a bare name is searched in PATH when the server starts.
function checkServer(exe) {
  if (!exe.includes("/")) return;
  try {
    fs.accessSync(exe, fs.constants.X_OK);
  } catch (error) {
    const why = error.code === "ENOENT" ? "does not exist" : `cannot be run (${error.code})`;
    throw Object.assign(new Error(`createTransport: the server ${exe} ${why}`),
      { code: error.code, errno: error.errno, syscall: error.syscall, path: exe });
  }
}

// The TypeScript package createTransport serves: `from` (its folder, as a
// path or a file: URL), else the one `typescript` resolves to from the main
// script's folder, else from the working directory.
function findPackage(from) {
  if (from !== undefined) {
    const dir = from instanceof URL || String(from).startsWith("file:") ? fileURLToPath(from) : String(from);
    const channel = identifyChannel(join(dir, CHANNEL_PATH));
    if (channel === null) throw new TypeError(`createTransport: no TypeScript 7 package at ${dir}`);
    return channel;
  }
  const bases = [];
  if (process.argv[1]) {
    try { bases.push(dirname(realpathSync(process.argv[1]))); } catch { /* no main script */ }
  }
  bases.push(process.cwd());
  for (const base of bases) {
    let dir;
    try {
      dir = dirname(nodeModule.createRequire(join(base, "[spinrpc]")).resolve("typescript/package.json"));
    } catch {
      continue;
    }
    const channel = identifyChannel(join(dir, CHANNEL_PATH));
    if (channel !== null) return channel;
  }
  throw new Error(`createTransport: no TypeScript 7 \`typescript\` package resolves from ${bases.join(" or ")}; ` +
    "pass `typescript: <its folder>`");
}

/**
 * createTransport({ cwd?, typescript?, tsserverPath?, useCaseSensitiveFileNames?,
 *                   runExternalCode?, collectTiming?, ...channel options })
 * → { requestSync, requestBinarySync, registerCallback, unregisterCallback,
 *     setFileSystem, close, lastBytesSent, lastBytesReceived, channel }
 */
export function createTransport(options = {}) {
  if (typeof options !== "object" || options === null) throw new TypeError("createTransport: options must be an object");
  checkOwnOptions(options);
  const ts = findPackage(options.typescript);
  if (!ts.known) {
    throw new Error(`createTransport: ${describeChannel(ts)} is a TypeScript 7 version spinrpc does not know`);
  }
  const require = nodeModule.createRequire(join(ts.dir, "package.json"));
  const channelOptions = {};
  for (const [key, value] of Object.entries(options)) if (!OWN.has(key)) channelOptions[key] = value;
  if (addonError !== null) throw addonError;
  binding.checkOptions(channelOptions);
  const exe = options.tsserverPath ?? serverOf(ts);
  checkServer(exe);
  // The version's own class: its callback-failure rule and surface.
  const Channel = channelFor(ts, null);
  // Where the package keeps its server's arguments and its file system
  // callbacks' configuration (dialects.json; null: it has none).
  const { spawn_arguments: spawnArguments, file_system_callbacks: fsCallbacks } = dialectNamed(ts.dialect);

  let channel = null;
  let closed = false;
  let fileSystem;
  const callbacks = new Map();  // registered before the server started

  function args() {
    const spawnOptions = {
      cwd: options.cwd,
      useCaseSensitiveFileNames: options.useCaseSensitiveFileNames,
      runExternalCode: options.runExternalCode,
      collectTiming: options.collectTiming,
    };
    let list;
    if (spawnArguments === null) {
      list = ["--api", "--cwd", options.cwd ?? process.cwd()];
      if (options.collectTiming) list.push("--timing");
    } else {
      list = require(join(ts.dir, spawnArguments)).getAPIProcessArgs(spawnOptions, false);
    }
    if (fileSystem !== undefined) {
      const { configureFileSystemCallbacks } = require(join(ts.dir, fsCallbacks));
      const configured = configureFileSystemCallbacks(fileSystem);
      if (configured.arguments.length > 0) list.push(`--callbacks=${configured.arguments.join(",")}`);
    }
    return list;
  }

  function fileSystemCallbacks(started) {
    if (fileSystem === undefined) return;
    const { configureFileSystemCallbacks, encodeFileSystemCallbackResult } = require(join(ts.dir, fsCallbacks));
    // As the version's own client.js registers them on its channel.
    for (const name of configureFileSystemCallbacks(fileSystem).callbackNames) {
      const callback = fileSystem[name];
      if (name === "writeFile") {
        started.registerCallback(name, (_, arg) => {
          const { path: file, data } = JSON.parse(arg);
          return JSON.stringify(encodeFileSystemCallbackResult(name, callback(file, data)));
        });
      } else {
        started.registerCallback(name, (_, arg) =>
          JSON.stringify(encodeFileSystemCallbackResult(name, callback(JSON.parse(arg)))));
      }
    }
  }

  function started() {
    if (channel !== null) return channel;
    // The version's own channel's words for a request after close().
    if (closed) throw new Error("SyncRpcChannel is closed");
    // Byte counts always (TransportClient reads them for the API's timing).
    const made = new Channel(exe, args(), { ...channelOptions, collectTiming: true });
    fileSystemCallbacks(made);
    for (const [name, callback] of callbacks) made.registerCallback(name, callback);
    channel = made;
    return channel;
  }

  return {
    get lastBytesSent() { return channel?.lastBytesSent ?? 0; },
    get lastBytesReceived() { return channel?.lastBytesReceived ?? 0; },
    /** The channel once the server has started (pid, stats()), else null. */
    get channel() { return channel; },
    requestSync(method, payload) { return started().requestSync(method, payload); },
    requestBinarySync(method, payload) { return started().requestBinarySync(method, payload); },
    registerCallback(name, callback) {
      if (channel !== null) channel.registerCallback(name, callback);
      else callbacks.set(name, callback);
    },
    unregisterCallback(name) {
      if (channel !== null) channel.unregisterCallback?.(name);
      else callbacks.delete(name);
    },
    setFileSystem(files) {
      if (channel !== null) {
        throw new Error("createTransport: setFileSystem after the server started (its --callbacks are fixed at spawn)");
      }
      if (files !== undefined && fsCallbacks === null) {
        throw new Error(`createTransport: ${describeChannel(ts)} takes no file system through a transport`);
      }
      fileSystem = files;
    },
    close() {
      closed = true;
      channel?.close();
    },
  };
}

// The version's server, as its own lib/getExePath.js resolves it (7.0 and
// 7.1.0-beta take no argument, the nightlies the Node modules).
function serverOf(ts) {
  const { default: getExePath } = nodeModule.createRequire(join(ts.dir, "package.json"))(join(ts.dir, "lib", "getExePath.js"));
  return getExePath({ fs, module: nodeModule, path, url });
}
