// The TypeScript 7 versions the interop suite runs against, one entry each:
// the releases node/dialects.json's "checked" lists, all pinned in
// package.json / package-lock.json (npm aliases keep them side by side in
// node_modules). Not a test file itself.
//
//   import { VERSIONS, version } from "./versions.mjs";
//   for (const v of VERSIONS) {
//     const { API } = await import(v.sync);
//     const api = new API({ tsserverPath: v.server, cwd: process.cwd() });
//   }
//
// Each entry:
//   id        short name used in test titles and SPINRPC_INTEROP_VERSIONS
//   name      the package's own name ("typescript", "@typescript/native-preview")
//   version   its exact version, read from its package.json
//   alias     the name it is installed under in node_modules
//   dir       the package's folder (absolute, symlinks resolved)
//   sync      import/require specifier of the sync API (API, …); it resolves
//             from tests/interop, syncUrl is the file it resolves to
//   async     import/require specifier of the async API (asyncUrl likewise)
//   transport specifier of the sync transport types (7.1 nightlies only), or null
//   channel   the pure-JS sync channel module (absolute path)
//   server    the version's own server executable, as its lib/getExePath.js
//             finds it (what `new API({})` spawns when given no tsserverPath)
//   dialect   the API dialect it speaks, a name in node/dialects.json
//             (docs/NODE.md, "Supported versions")
//
// SPINRPC_INTEROP_VERSIONS=7.0,7.1-dev (ids, comma-separated) narrows the list.

import { readFileSync, realpathSync } from "node:fs";
import * as fs from "node:fs";
import * as module from "node:module";
import * as path from "node:path";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as url from "node:url";
import { DIALECTS } from "../../node/dialects.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));

// The releases node/dialects.json says are checked, oldest dialect first,
// each with its dialect's API entries.
const PINNED = DIALECTS.flatMap((d) => d.checked.map((r) => ({
  id: r.id, alias: r.alias, dialect: d.name, exports: d.exports, transport: r.transport,
})));

async function describe({ id, alias, dialect, exports, transport }) {
  const dir = realpathSync(join(HERE, "node_modules", alias));
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  // Both signatures: 7.0 and 7.1-beta take no argument, the 7.1 nightlies
  // take the Node modules.
  const { default: getExePath } = await import(pathToFileURL(join(dir, "lib", "getExePath.js")).href);
  return Object.freeze({
    id,
    name: pkg.name,
    version: pkg.version,
    alias,
    dir,
    sync: `${alias}/${exports.sync}`,
    syncUrl: import.meta.resolve(`${alias}/${exports.sync}`),
    async: `${alias}/${exports.async}`,
    asyncUrl: import.meta.resolve(`${alias}/${exports.async}`),
    transport: transport ? `${alias}/sync/transport` : null,
    channel: join(dir, "dist", "api", "syncChannel.js"),
    server: getExePath({ fs, module, path, url }),
    dialect,
  });
}

const wanted = process.env.SPINRPC_INTEROP_VERSIONS?.split(",").map((s) => s.trim()).filter(Boolean);
for (const id of wanted ?? []) {
  if (!PINNED.some((p) => p.id === id)) {
    throw new Error(`SPINRPC_INTEROP_VERSIONS: unknown id ${id} (${PINNED.map((p) => p.id).join(", ")})`);
  }
}

/** Every supported version, oldest first (narrowed by SPINRPC_INTEROP_VERSIONS). */
export const VERSIONS = Object.freeze(
  await Promise.all(PINNED.filter((p) => !wanted || wanted.includes(p.id)).map(describe)));

/** The entry with this id; throws for an id not in VERSIONS. */
export function version(id) {
  const found = VERSIONS.find((v) => v.id === id);
  if (!found) throw new Error(`no TypeScript version ${id} in VERSIONS (${VERSIONS.map((v) => v.id).join(", ")})`);
  return found;
}
