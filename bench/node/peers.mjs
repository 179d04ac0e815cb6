// The two servers a Node job compares, for the TypeScript version `--ts`
// names (tests/interop/versions.mjs): spinrpc-server (SPINRPC_SERVER, else
// build/bin) and that version's own server (SPINRPC_TSGO, else its own).
// A missing one ends the process with one line naming `tool` and the fix.

import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const VERSIONS_MJS = join(REPO, "tests", "interop", "versions.mjs");

/** { TS: the versions.mjs entry, SPINRPC: path, OWN: path }. */
export async function resolvePeers(tool, tsId) {
  let TS;
  try {
    TS = (await import(pathToFileURL(VERSIONS_MJS).href)).version(tsId);
  } catch (e) {
    console.error(`${tool}: --ts ${tsId}: ${e.message}` +
      (e.code === "ENOENT" || e.code === "ERR_MODULE_NOT_FOUND" ? "; run npm ci in tests/interop (scripts/setup.sh)" : ""));
    process.exit(1);
  }
  const SPINRPC = process.env.SPINRPC_SERVER || join(REPO, "build", "bin", "spinrpc-server");
  const OWN = process.env.SPINRPC_TSGO || TS.server;
  for (const [name, path, hint] of [
    ["spinrpc-server", SPINRPC, "build it with scripts/build.sh"],
    [`${TS.name} ${TS.version}'s server`, OWN, process.env.SPINRPC_TSGO ? "SPINRPC_TSGO names it" : "run npm ci in tests/interop (scripts/setup.sh)"],
  ]) {
    if (!existsSync(path)) {
      console.error(`${tool}: ${name} not found at ${path}: ${hint}`);
      process.exit(1);
    }
  }
  return { TS, SPINRPC, OWN };
}
