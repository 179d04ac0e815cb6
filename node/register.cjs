// `spinrpc/register` reached through require(): `node --require
// spinrpc/register`, or require("spinrpc/register") from CommonJS. The hook
// is an ES module (register.mjs) that must finish before the program's first
// module loads, which only `--import` waits for, so this entry (the
// "require" condition of package.json's exports) refuses with what to use
// instead, where Node's own error (ERR_REQUIRE_ESM, ERR_REQUIRE_ASYNC_MODULE)
// names neither spinrpc nor --import. docs/NODE.md, "Using it".
"use strict";

throw Object.assign(new Error(
  "spinrpc/register cannot be loaded with --require or require(): it is an ES module that must finish " +
  "before your program's first module loads. Preload it with --import instead: " +
  "node --import spinrpc/register app.js (in NODE_OPTIONS too: NODE_OPTIONS=\"--import spinrpc/register\"), " +
  "or run the program with spinrpc-node instead of node (docs/NODE.md, \"Using it\")"),
{ code: "ERR_SPINRPC_USE_IMPORT" });
