// `node --import spinrpc/register app.mjs` (or --import <checkout>/node/register.mjs):
// makes @typescript/native-preview/unstable/sync talk to its server through
// spinrpc's channel, with no change to app.mjs. See hooks.mjs.

import { register } from "node:module";

register("./hooks.mjs", import.meta.url);
