// SPINRPC_BINDING, read where it is needed: in ES modules (recognize.mjs
// re-exports it) and in watch.cjs, a CommonJS preload that also runs in
// worker threads started from source text, where Node 20 cannot require()
// an ES module. One copy of the rule, one warning per thread.
"use strict";

let warned = false;

/**
 * SPINRPC_BINDING (declared with every variable spinrpc reads in
 * settings/settings.h, kEnvironmentVariables), a comma-separated list:
 *   required  a TypeScript 7 sync API without spinrpc's channel under it is an error
 *   report    one line on stderr for each TypeScript 7 sync channel that starts a server,
 *             spinrpc's or the pure-JS one
 */
exports.bindingSettings = function bindingSettings(env = process.env) {
  const words = new Set(String(env.SPINRPC_BINDING ?? "").split(",").map((w) => w.trim()).filter(Boolean));
  const unknown = [...words].filter((w) => w !== "required" && w !== "report");
  if (unknown.length > 0 && !warned) {
    warned = true;
    process.stderr.write(`spinrpc: SPINRPC_BINDING: ignoring ${unknown.join(", ")} (the words are required, report)\n`);
  }
  return { required: words.has("required"), report: words.has("report") };
};
