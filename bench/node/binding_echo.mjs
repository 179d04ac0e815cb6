#!/usr/bin/env node
// binding_echo: back-to-back binary echoes through spinrpc's Node binding
// used directly (node/index.mjs's SyncRpcChannel, `requestBinarySync("echo")`,
// what the TypeScript 7 client's echoBinary calls under
// `--import node/register.mjs`), timed by jobs.mjs's latencyJob, in a
// process of its own. It exists for the trace figures
// (bench/harness/trace_figures.mjs): the binding's `trace` option and the
// server's environment are set apart, so that either side, both or
// neither is traced, which the TypeScript API does not let a caller say.
//
//   node bench/node/binding_echo.mjs --server PATH [--count N] [--warmup W] [--size BYTES]
//                                    [--client-trace FILE] [--server-trace FILE]
//
// --client-trace FILE  the binding's `trace` option (FILE "" for none; unset:
//                      SPINRPC_TRACE in the channel's environment decides,
//                      which is --server-trace's when given)
// --server-trace FILE  SPINRPC_TRACE in the server's environment, the
//                      binding's `env` option ("" for none; unset: this
//                      process's environment, and with --client-trace the
//                      client's pattern when that has none)
// So: client only = --client-trace F --server-trace ""; server only =
// --client-trace "" --server-trace F; both = --client-trace F.
// Prints one line of JSON: { n, p50_ns, mean_ns, p75_ns, pid } (pid: the
// server's). Exit status 3: a reply differed from what was sent.

import { commandLine } from "../harness/cli.mjs";
import { percentile } from "../harness/stats.mjs";
import { IntegrityError, latencyJob } from "./jobs.mjs";
import { SyncRpcChannel } from "../../node/index.mjs";

const cli = commandLine("binding_echo", "usage: node bench/node/binding_echo.mjs --server PATH [--count N] [--warmup W] [--size BYTES] " +
  "[--client-trace FILE] [--server-trace FILE]");
const v = cli.parse({
  server: { type: "string" }, count: { type: "string", default: "20000" }, warmup: { type: "string", default: "1000" },
  size: { type: "string", default: "8" }, "client-trace": { type: "string" }, "server-trace": { type: "string" },
});
if (!v.server) cli.fail("--server is required");

const options = {};
if (v["client-trace"] !== undefined) options.trace = v["client-trace"];
if (v["server-trace"] !== undefined) options.env = { ...process.env, SPINRPC_TRACE: v["server-trace"] };
let pid = 0;

// latencyJob's API: the TypeScript client's shape ({ client: { channel,
// echoBinary } }, close()) over the binding with our options.
class BindingApi {
  constructor({ tsserverPath, cwd }) {
    const channel = new SyncRpcChannel(tsserverPath, ["--api", "--cwd", cwd], options);
    pid = channel.pid;
    this.client = { channel, echoBinary: (p) => channel.requestBinarySync("echo", p) };
  }
  close() {
    this.client.channel.close();
  }
}

try {
  const { lat } = latencyJob(BindingApi, { variant: "binding", server: v.server, env: {}, n: cli.count("count", v.count, 1),
    warmup: cli.count("warmup", v.warmup), size: cli.count("size", v.size) });
  const sorted = Float64Array.from(lat).sort();
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  process.stdout.write(JSON.stringify({ n: sorted.length, p50_ns: percentile(sorted, 0.5), mean_ns: mean, p75_ns: percentile(sorted, 0.75), pid }) + "\n");
} catch (e) {
  console.error(`binding_echo: ${e.stack || e}`);
  process.exit(e instanceof IntegrityError ? 3 : 1);
}
