#!/usr/bin/env node
// One job of bench/node/jobs.mjs in a process of its own: for the variants
// that go through spinrpc's Node.js binding, and for the pure-JS channel's
// sparse, spawn and large jobs (a fresh process, as the binding's). echo_latency.mjs starts it as
//   node [--import node/register.mjs] bench/node/job_child.mjs JOB_JSON
// (JOB_JSON's `hook` says which) and reads one line of JSON from its
// stdout. JOB_JSON's `sync` is the file URL of the sync API to load (the
// version echo_latency.mjs's --ts picked, resolved by
// tests/interop/versions.mjs; `ts` is its id, for messages). Exit status 3:
// a reply differed from what was sent.

import { BINDING_JOBS, IntegrityError, JOBS } from "./jobs.mjs";

const job = JSON.parse(process.argv[2]);
try {
  const { API } = await import(job.sync);
  // The point of the variant: the real API, with spinrpc's channel under
  // it, or with its own.
  const probe = new API({ tsserverPath: job.server, cwd: process.cwd() });
  const ours = typeof probe.client.channel.stats === "function";
  probe.close();
  if (ours !== job.hook) {
    throw new Error(job.hook ? `the register hook is not on: the API (--ts ${job.ts}) uses its own channel`
      : `the API (--ts ${job.ts}) uses spinrpc's channel although the register hook was not given`);
  }
  const result = job.kind in BINDING_JOBS
    ? BINDING_JOBS[job.kind]((await import("../../node/index.mjs")).SyncRpcChannel, job)
    : JOBS[job.kind](API, job);
  if (result.lat) result.lat = Array.from(result.lat);
  process.stdout.write(JSON.stringify(result) + "\n");
} catch (e) {
  console.error(`job_child: ${job.variant}: ${e.stack || e}`);
  process.exit(e instanceof IntegrityError ? 3 : 1);
}
