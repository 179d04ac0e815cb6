// Loads the Node-API addon (spinrpc.node) once, from the first place that
// has one (docs/NODE.md, "Platforms"):
//
//   1. a checkout's own build: node/build/<platform key>/spinrpc.node (a
//      cross build, scripts/build-cross.sh), then node/build/spinrpc.node
//      (scripts/build.sh, for the machine that built it);
//   2. the running platform's package, `@spinrpc/<os>-<cpu>-<libc>`
//      (platforms.mjs), an optional dependency of the installed package,
//      which must carry the same version as this one.
//
// A failure is kept, not thrown, so that the module hook can leave a
// TypeScript API on its own channel with one line on stderr
// (channels.mjs); index.mjs throws it.
//
// Each binary is built against Node-API 8 (any Node from 16); the Linux
// ones need glibc 2.34 or later (pthread_cond_clockwait,
// posix_spawn_file_actions_addclosefrom_np) and libstdc++ from GCC 11 or
// later (GLIBCXX_3.4.29, CXXABI_1.3.13), as `objdump -T spinrpc.node` lists them.

import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PLATFORMS, describeRunningPlatform, packageName, runningPlatform } from "./platforms.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const VERSION = JSON.parse(readFileSync(join(HERE, "package.json"), "utf8")).version;

/** What the addon needs, in words. */
export const PLATFORM_FLOOR = `one of ${PLATFORMS.map((p) => p.key).join(", ")} (glibc 2.34 or later, ` +
  "libstdc++ from GCC 11 or later)";

// The platform package's addon, or an Error saying why there is none.
function fromPlatformPackage(platform) {
  if (platform === null) {
    return { error: new Error(`spinrpc: no addon is built for ${describeRunningPlatform()}; ` +
      `spinrpc builds one for ${PLATFORM_FLOOR}`) };
  }
  const name = packageName(platform);
  let manifest;
  try {
    manifest = require.resolve(`${name}/package.json`);
  } catch {
    return { error: new Error(`spinrpc: the addon for ${describeRunningPlatform()} is in the optional package ` +
      `${name}@${VERSION}, which is not installed (an install with --omit=optional, or a lockfile made on ` +
      "another platform, leaves it out: install it beside spinrpc)") };
  }
  const version = JSON.parse(readFileSync(manifest, "utf8")).version;
  if (version !== VERSION) {
    return { error: new Error(`spinrpc: ${name}@${version} (${dirname(manifest)}) does not match spinrpc@${VERSION}: ` +
      `install ${name}@${VERSION}`) };
  }
  return { file: join(dirname(manifest), "spinrpc.node") };
}

function load() {
  const platform = runningPlatform();
  const local = [platform && join(HERE, "build", platform.key, "spinrpc.node"), join(HERE, "build", "spinrpc.node")]
    .find((file) => file && existsSync(file));
  const found = local ? { file: local } : fromPlatformPackage(platform);
  if (found.error) return found;
  try {
    return { binding: require(found.file), file: found.file };
  } catch (e) {
    return { error: new Error(`spinrpc: cannot load the Node.js addon ${found.file} (${e.message.split("\n")[0]}); ` +
      `it needs ${PLATFORM_FLOOR}; this is ${describeRunningPlatform()}`, { cause: e }) };
  }
}

const loaded = load();

/** The addon's exports, or null when it cannot load here. */
export const binding = loaded.binding ?? null;
/** The file the addon was loaded from, or null. */
export const addonFile = loaded.file ?? null;
/** Why the addon cannot load (an Error naming the platform), or null. */
export const addonError = loaded.error ?? null;
