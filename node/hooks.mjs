// Module customization hooks: a TypeScript 7 sync channel module (a known
// version's dist/api/syncChannel.js, recognize.mjs) loads as a module that
// re-exports the original's exports with SyncRpcChannel replaced by
// spinrpc's (channels.mjs channelFor); a TypeScript 7 channel of a version
// spinrpc does not know loads as itself, with one line on stderr. The
// module keeps its URL, so `import` and `require` of it, and of the API
// modules that import it, meet the same module. Every other module loads
// as it would without the hooks.
//
// `load` is the asynchronous hook (module.register, Node 20.6+); `loadSync`
// the synchronous one (module.registerHooks, Node 22.15+ and 23.5+), which
// also sees require(). register.mjs picks.

import { fileURLToPath } from "node:url";
import { identifyChannel } from "./recognize.mjs";

const CHANNELS = new URL("./channels.mjs", import.meta.url).href;
const RECOGNIZE = new URL("./recognize.mjs", import.meta.url).href;
// The original module, loaded under another URL so that it is not replaced.
const ORIGINAL = "spinrpc=original";

function replacement(url) {
  if (!url.startsWith("file:") || !url.endsWith("/syncChannel.js")) return null;  // no query: not ORIGINAL
  const info = identifyChannel(fileURLToPath(url));
  if (info === null) return null;
  const original = JSON.stringify(`${url}?${ORIGINAL}`);
  const infoText = JSON.stringify(info);
  const source = info.known
    ? `import { SyncRpcChannel as Original } from ${original};\n` +
      `import { channelFor } from ${JSON.stringify(CHANNELS)};\n` +
      `export * from ${original};\n` +
      `export const SyncRpcChannel = channelFor(${infoText}, Original);\n`
    : `import { unknownChannel } from ${JSON.stringify(RECOGNIZE)};\n` +
      `export * from ${original};\n` +
      `unknownChannel(${infoText});\n`;
  return { format: "module", source, shortCircuit: true };
}

export async function load(url, context, nextLoad) {
  return replacement(url) ?? nextLoad(url, context);
}

export function loadSync(url, context, nextLoad) {
  return replacement(url) ?? nextLoad(url, context);
}
