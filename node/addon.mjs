// Loads the Node-API addon (build/spinrpc.node) once. A failure is kept, not
// thrown, so that the module hook can leave a TypeScript API on its own
// channel with one line on stderr (channels.mjs); index.mjs throws it.
//
// The addon is built for Linux x86-64 with glibc: it needs glibc 2.34 or
// later (GLIBC_2.34: pthread_cond_clockwait, posix_spawn_file_actions_addclosefrom_np)
// and libstdc++ from GCC 11 or later (GLIBCXX_3.4.29, CXXABI_1.3.13), as
// `objdump -T build/spinrpc.node` lists them; Node-API 8 (any Node from 16).

import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export const ADDON = fileURLToPath(new URL("./build/spinrpc.node", import.meta.url));

/** What the addon needs, in words (package.json's os, cpu, libc and engines say the same). */
export const PLATFORM_FLOOR = "linux-x64 with glibc 2.34 or later and libstdc++ from GCC 11 or later (GLIBCXX_3.4.29)";

function platformText() {
  const glibc = process.platform === "linux" ? process.report?.getReport?.().header?.glibcVersionRuntime : undefined;
  const libc = process.platform !== "linux" ? "" : glibc ? `, glibc ${glibc}` : ", no glibc (musl?)";
  return `${process.platform}-${process.arch}${libc}, Node ${process.version}`;
}

function load() {
  if (process.platform !== "linux" || process.arch !== "x64") {
    return { error: new Error(`spinrpc: the addon is built for ${PLATFORM_FLOOR}; this is ${platformText()}`) };
  }
  try {
    return { binding: createRequire(import.meta.url)(ADDON) };
  } catch (e) {
    const hint = e.code === "MODULE_NOT_FOUND"
      ? "build it with scripts/build.sh in the spinrpc checkout"
      : `it needs ${PLATFORM_FLOOR}; this is ${platformText()}`;
    return { error: new Error(`spinrpc: cannot load the Node.js addon ${ADDON} (${e.message.split("\n")[0]}); ${hint}`, { cause: e }) };
  }
}

const loaded = load();

/** The addon's exports, or null when it cannot load here. */
export const binding = loaded.binding ?? null;
/** Why the addon cannot load (an Error naming the platform), or null. */
export const addonError = loaded.error ?? null;
