// Module customization hooks (loaded by register.mjs): resolves the
// TypeScript 7 API's pure-JS channel, dist/api/syncChannel.js of
// @typescript/native-preview, to spinrpc's (index.mjs), which exports the
// same SyncRpcChannel. Every other module resolves as it would without it.

const OURS = new URL("./index.mjs", import.meta.url).href;
const TS_CHANNEL = /\/@typescript\/native-preview\/dist\/api\/syncChannel\.js$/;

function redirect(resolved) {
  if (!resolved.url.startsWith("file:") || !TS_CHANNEL.test(new URL(resolved.url).pathname)) {
    return resolved;
  }
  return { url: OURS, format: "module", shortCircuit: true };
}

export async function resolve(specifier, context, nextResolve) {
  return redirect(await nextResolve(specifier, context));
}
