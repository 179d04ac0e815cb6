// Which TypeScript 7 sync channel a module file is, by what it is: the
// nearest package.json above the file's real path names the package and
// its version, and the file must be that version's channel module. No
// addon here: the module hooks (hooks.mjs) run this off the main thread.
//
// dialects.json's "packages" say which versions are known (docs/NODE.md,
// "Supported versions").

import { readFileSync, realpathSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
// SPINRPC_BINDING's words, shared with the CommonJS watch (watch.cjs).
import { bindingSettings } from "./binding-settings.cjs";
import { DIALECTS } from "./dialects.mjs";

export { bindingSettings };

/** The channel module, relative to its package's folder, in every known version. */
export const CHANNEL_PATH = join("dist", "api", "syncChannel.js");

// name, a test of the version, the API dialect it speaks (dialects.json's "packages").
const KNOWN = DIALECTS.flatMap((d) => d.packages.map((p) => {
  const versions = new RegExp(p.versions);
  return { name: p.name, matches: (v) => versions.test(v), dialect: d.name };
}));

/** The versions KNOWN accepts, as people read them (for messages). */
export const KNOWN_TEXT = DIALECTS.flatMap((d) => d.packages.map((p) => p.text)).join(", ");

const TS_NAMES = new Set(KNOWN.map((k) => k.name));

// package folder → { name, version } or null, per process (or hooks thread).
const packages = new Map();

function packageAt(dir) {
  if (packages.has(dir)) return packages.get(dir);
  let found = null;
  try {
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    found = { name: String(pkg.name ?? ""), version: String(pkg.version ?? "") };
  } catch {
    // no package.json here (or not JSON): keep looking further up
  }
  packages.set(dir, found);
  return found;
}

/** The folder holding the nearest package.json above `file`, with its name and version; or null. */
export function nearestPackage(file) {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const pkg = packageAt(dir);
    // A package.json without a name (a folder's "type" marker) is not a package root.
    if (pkg !== null && pkg.name !== "") return { dir, ...pkg };
    if (dirname(dir) === dir) return null;
  }
}

/**
 * What the file at `path` (a path or a file: URL's path) is:
 *   null                          not a TypeScript 7 sync channel module
 *   { known: true,  name, version, dialect, file, dir }    a version spinrpc speaks
 *   { known: false, name, version, file, dir }             a TypeScript 7 channel of another version
 * Symlinks are resolved first (pnpm's store, npm link, workspaces).
 */
export function identifyChannel(path) {
  if (!path.endsWith(`${sep}syncChannel.js`)) return null;  // the cheap test first
  let file;
  try {
    file = realpathSync(path);
  } catch {
    return null;
  }
  const pkg = nearestPackage(file);
  if (pkg === null || !TS_NAMES.has(pkg.name) || !pkg.version.startsWith("7.")) return null;
  if (relative(pkg.dir, file) !== CHANNEL_PATH) return null;
  const known = KNOWN.find((k) => k.name === pkg.name && k.matches(pkg.version));
  return known
    ? { known: true, name: pkg.name, version: pkg.version, dialect: known.dialect, file, dir: pkg.dir }
    : { known: false, name: pkg.name, version: pkg.version, file, dir: pkg.dir };
}


/** "typescript@7.0.2 (/path/dist/api/syncChannel.js)" */
export function describeChannel(info) {
  return `${info.name}@${info.version} (${info.file})`;
}

const reported = new Set();

/**
 * A TypeScript 7 channel of a version spinrpc does not know: one line on
 * stderr (once per file), and its own pure-JS channel stays; under
 * SPINRPC_BINDING=required, an error instead.
 */
export function unknownChannel(info) {
  const text = `spinrpc: ${describeChannel(info)} is a TypeScript 7 version spinrpc does not know ` +
    `(it knows ${KNOWN_TEXT}), so its own pure-JS channel stays`;
  if (bindingSettings().required) {
    throw Object.assign(new Error(`${text}; SPINRPC_BINDING=required makes that an error`),
      { code: "ERR_SPINRPC_BINDING_REQUIRED" });
  }
  if (reported.has(info.file)) return;
  reported.add(info.file);
  process.stderr.write(`${text}\n`);
}
