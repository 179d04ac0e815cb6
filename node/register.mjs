// `node --import spinrpc/register app.mjs` (or --import <checkout>/node/register.mjs):
// every known TypeScript 7 version's sync API (the packages dialects.json
// lists) talks to its server through spinrpc's channel, with no change to
// app.mjs, for `import` and `require` alike. See hooks.mjs and docs/NODE.md.
//
// Node 22.15+ / 23.5+: module.registerHooks, whose synchronous hooks see
// import and require(). Older Node: module.register, whose hooks see import
// only; require() of the API (an ES module) is covered by importing, here
// and now, the channel of each TypeScript 7 package installed in a
// node_modules folder above the main script's folder or the working
// directory, under any name (a module loads once, whichever way it is
// reached), and a require hook
// (require-in-the-middle) says on stderr when a required API still has its
// pure-JS channel.

import * as nodeModule from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { CHANNEL_PATH, bindingSettings, describeChannel, identifyChannel, unknownChannel } from "./recognize.mjs";

// Sync APIs the hook cannot reach (a copy bundled into the tool, a worker
// that runs no --import preload) are watched where they start their server
// (watch.cjs), so that SPINRPC_BINDING=required and =report see them too.
nodeModule.createRequire(import.meta.url)("./watch.cjs");

if (typeof nodeModule.registerHooks === "function") {
  const { loadSync } = await import("./hooks.mjs");
  nodeModule.registerHooks({ load: loadSync });
} else {
  nodeModule.register("./hooks.mjs", import.meta.url);
  await preloadChannels();
  await watchRequire();
}

// The packages the program can reach by a bare name that hold a TypeScript
// 7 sync channel: every package (scoped too) in each node_modules folder
// above the main script's folder and the working directory, whatever it is
// installed as (`typescript`, `@typescript/native-preview`, or an npm alias
// such as `@typescript/native`); identifyChannel then tells by its own
// package.json what it is. One stat per package; a package.json is read only
// where the channel file is. A copy nested deeper (a dependency's own
// node_modules) is not found here: watchRequire says so when it loads.
function candidatePackages() {
  const bases = [process.cwd()];
  if (process.argv[1]) {
    try {
      bases.unshift(dirname(realpathSync(process.argv[1])));
    } catch {
      // not a file (node -e, the REPL): the working directory alone
    }
  }
  const folders = new Set();
  for (const base of bases) {
    for (let dir = base; ; dir = dirname(dir)) {
      folders.add(join(dir, "node_modules"));
      if (dirname(dir) === dir) break;
    }
  }
  const dirs = new Set();
  const consider = (dir) => {
    if (existsSync(join(dir, CHANNEL_PATH))) dirs.add(dir);
  };
  for (const folder of folders) {
    for (const entry of entriesOf(folder)) {
      if (entry.startsWith("@")) {
        for (const scoped of entriesOf(join(folder, entry))) consider(join(folder, entry, scoped));
      } else if (!entry.startsWith(".")) {
        consider(join(folder, entry));
      }
    }
  }
  return dirs;
}

function entriesOf(folder) {
  try {
    return readdirSync(folder);
  } catch {
    return [];  // no such folder, or not one
  }
}

async function preloadChannels() {
  for (const dir of candidatePackages()) {
    // Versions in the table only: another TypeScript 7 is reported when
    // the program loads it, not here.
    if (identifyChannel(join(dir, CHANNEL_PATH))?.known !== true) continue;
    await import(pathToFileURL(join(dir, CHANNEL_PATH)).href);        // through hooks.mjs
  }
}

async function watchRequire() {
  const { Hook } = nodeModule.createRequire(import.meta.url)("require-in-the-middle");
  const { isSpinrpcChannel } = await import("./channels.mjs");
  const SYNC_ENTRIES = [join("dist", "api", "sync", "api.js"), join("dist", "api", "sync", "client.js"), CHANNEL_PATH];
  const checked = new Set();
  // Every module, not only by name: an npm alias or a renamed folder holds
  // TypeScript too. Only the sync API's entry files are looked at.
  new Hook(null, { internals: true }, (exports, name, basedir) => {
    if (basedir === undefined || !SYNC_ENTRIES.some((entry) => name.endsWith(entry))) return exports;
    const channelFile = join(basedir, CHANNEL_PATH);
    if (checked.has(channelFile)) return exports;
    checked.add(channelFile);
    const info = identifyChannel(channelFile);
    if (info === null) return exports;
    if (!info.known) {
      unknownChannel(info);
      return exports;
    }
    const channel = nodeModule.createRequire(channelFile)(channelFile);
    if (isSpinrpcChannel(channel.SyncRpcChannel)) return exports;
    const text = `spinrpc: ${describeChannel(info)} was loaded by require() and keeps its pure-JS channel: ` +
      `on Node ${process.version} module hooks do not reach require() of an ES module, and this copy is not ` +
      "in a node_modules folder above the program's folder or the working directory, whose copies " +
      "spinrpc/register loads ahead; " +
      "import it instead, or use Node 22.15 or later (docs/NODE.md, \"require() on Node 20\")";
    if (bindingSettings().required) {
      throw Object.assign(new Error(`${text}; SPINRPC_BINDING=required makes that an error`),
        { code: "ERR_SPINRPC_BINDING_REQUIRED" });
    }
    process.stderr.write(`${text}\n`);
    return exports;
  });
}
