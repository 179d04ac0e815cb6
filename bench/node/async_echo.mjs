#!/usr/bin/env node
// async_echo: the real asynchronous client (the async API of the version
// --ts picks, typescript@7.0.2 by default: JSON-RPC over the server's stdio)
// against spinrpc-server --async and against that version's own server
// --async, side by side in one run, rounds alternating (docs/ASYNC.md).
//
//   node bench/node/async_echo.mjs [--ts ID] [--count N] [--inflight N]
//                                  [--big N] [--rounds R] [--warmup W]
//                                  [--json FILE]
//
// --ts ID: an id of tests/interop/versions.mjs, 7.0 (typescript@7.0.2, the
// default), 7.1-beta, 7.1-dev (typescript@7.1.0-dev.20261105.1) or preview
// (@typescript/native-preview@7.0.0-dev.20260707.2): the client, and the
// reference server (the version's own, as its `new API({})` spawns it;
// named by its executable, tsc or tsgo). The 7.1 async clients (beta and
// nightly) send the requests issued in one turn of the event loop as one
// batchRequests (their dist/api/async/client.js, doBatch), so with
// --ts 7.1-* the `inflight` burst goes over the wire as a batch, not as
// separate requests.
//
// Three workloads, each round spawning every variant once (order rotating):
//   sequential  N small echoes ({"s":"16 bytes of text"}), each awaited
//               before the next: round-trip p50/p75 over all rounds
//   inflight    one burst of N echoes issued at once (Promise.all):
//               throughput (requests/s, wall) and server CPU per 1000
//   big         N sequential echoes of a 1 MiB JSON params object: server
//               CPU per echo (bench/report.mjs sets simdjson's share of it
//               against spinrpc-json-bench's decode time for 1 MiB)
// --count (default 2000), --inflight (default 10000), --big (default 20)
// per round; --rounds (default 5); --warmup (default 200) echoes per
// spawned process first. Every reply is compared with what was sent; a
// wrong one exits 1 before any figure is printed. Server CPU: the peer's
// /proc/PID/task/*/schedstat over the timed region.
//
// Peers: SPINRPC_SERVER and SPINRPC_TSGO override the default paths
// (build/bin/spinrpc-server; the version's own server). The header names
// both servers' --version, and a SPINRPC_TSGO that is not the client's own
// version is named so.

import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { commandLine } from "../harness/cli.mjs";
import { median, percentile } from "../harness/stats.mjs";
import { resolvePeers } from "./peers.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

const cli = commandLine("async_echo", "usage: node bench/node/async_echo.mjs [--ts 7.0|7.1-beta|7.1-dev|preview] [--count N] [--inflight N] [--big N] [--rounds R] [--warmup W] [--json FILE]");
const opts = (() => {
  const v = cli.parse({
    ts: { type: "string", default: "7.0" }, count: { type: "string", default: "2000" }, inflight: { type: "string", default: "10000" },
    big: { type: "string", default: "20" }, rounds: { type: "string", default: "5" }, warmup: { type: "string", default: "200" }, json: { type: "string" },
  });
  return {
    ts: v.ts, count: cli.count("count", v.count, 1), inflight: cli.count("inflight", v.inflight), big: cli.count("big", v.big),
    rounds: cli.count("rounds", v.rounds, 1), warmup: cli.count("warmup", v.warmup), json: v.json ?? null,
  };
})();

/** The TypeScript 7 version --ts names, and the two servers (bench/node/peers.mjs). */
const { TS, SPINRPC, OWN } = await resolvePeers("async_echo", opts.ts);
const { API } = await import(TS.asyncUrl);
const CLIENT = `${TS.name} ${TS.version}`;
/** The first line `exe --version` prints. */
function versionLine(exe) {
  const r = spawnSync(exe, ["--version"], { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "pipe"] });
  const line = (r.stdout || "").split("\n")[0].trim();
  if (r.status !== 0 || !line) {
    console.error(`async_echo: ${exe} --version failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`})`);
    process.exit(1);
  }
  return line;
}
const SPINRPC_VERSION = versionLine(SPINRPC);
const own = (() => {
  const line = versionLine(OWN);
  const version = /^Version (\S+)$/.exec(line)?.[1] ?? null;
  const exe = basename(OWN);
  return { label: exe === "spinrpc-server" ? "reference server" : exe, path: OWN, version_line: line, version,
    overridden: Boolean(process.env.SPINRPC_TSGO), mismatch: version !== TS.version };
})();
if (own.mismatch) {
  console.error(`async_echo: note: the reference server ${OWN} says ${JSON.stringify(own.version_line)}, not ${TS.version}: it is not ${CLIENT}'s own server`);
}

/** CPU seconds of a live process: the sum of its threads' schedstat run time. */
function cpuSeconds(pid) {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try { ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]); } catch { /* thread gone */ }
  }
  return ns / 1e9;
}

class IntegrityError extends Error {}
const check = (variant, sent, got) => {
  if (!isDeepStrictEqual(sent, got)) throw new IntegrityError(`${variant}: an echo came back different: sent ${JSON.stringify(sent).slice(0, 80)}, got ${JSON.stringify(got).slice(0, 80)}`);
};

const small = (i) => ({ s: "16 bytes of text", i });
const BIG = { items: Array.from({ length: 10700 }, (_, i) => ({ i, name: `node ${i} wörld "q"\n`, f: i + 0.25, b: true, n: null, a: [1, 2, [3, { k: "v" }]] })) };
const bigBytes = Buffer.byteLength(JSON.stringify(BIG));

async function session(path, fn) {
  const api = new API({ tsserverPath: path, cwd: REPO });
  const request = (m, p) => api.client.apiRequest(m, p);
  try {
    await request("ping", null);  // spawns the server: one process for the session
    const pid = api.client.process.pid;
    for (let i = 0; i < opts.warmup; i++) check("warm-up", small(i), await request("echo", small(i)));
    return await fn(request, pid);
  } finally {
    await api.close();
  }
}

// spinrpc-server first, the version's own server second (bench/reporting/
// sections/async_mode.mjs reads them in that order).
const variants = [{ name: "spinrpc-server", path: SPINRPC }, { name: own.label, path: OWN }];
for (const v of variants) Object.assign(v, { lat: [], roundP50: [], seqCpu: 0, seqWall: 0, burst: [], big: [] });

const workloads = {
  async sequential(v) {
    await session(v.path, async (request, pid) => {
      const lat = [];
      const c0 = cpuSeconds(pid);
      const w0 = process.hrtime.bigint();
      for (let i = 0; i < opts.count; i++) {
        const p = small(i);
        const t0 = process.hrtime.bigint();
        const r = await request("echo", p);
        lat.push(Number(process.hrtime.bigint() - t0));
        check(v.name, p, r);
      }
      v.seqWall += Number(process.hrtime.bigint() - w0) / 1e9;
      v.seqCpu += cpuSeconds(pid) - c0;
      v.roundP50.push(percentile([...lat].sort((a, b) => a - b), 0.5));
      v.lat.push(...lat);
    });
  },
  async inflight(v) {
    if (!opts.inflight) return;
    await session(v.path, async (request, pid) => {
      const sent = Array.from({ length: opts.inflight }, (_, i) => small(i));
      const c0 = cpuSeconds(pid);
      const w0 = process.hrtime.bigint();
      const got = await Promise.all(sent.map((p) => request("echo", p)));
      const wall = Number(process.hrtime.bigint() - w0) / 1e9;
      const cpu = cpuSeconds(pid) - c0;
      got.forEach((r, i) => check(v.name, sent[i], r));
      v.burst.push({ wall, cpu, rps: opts.inflight / wall, cpuPer1000: (cpu / opts.inflight) * 1000 });
    });
  },
  async big(v) {
    if (!opts.big) return;
    await session(v.path, async (request, pid) => {
      check(v.name, BIG, await request("echo", BIG));  // untimed: buffers grown
      const c0 = cpuSeconds(pid);
      const w0 = process.hrtime.bigint();
      for (let i = 0; i < opts.big; i++) check(v.name, BIG, await request("echo", BIG));
      v.big.push({ cpuPerEcho: (cpuSeconds(pid) - c0) / opts.big, wallPerEcho: Number(process.hrtime.bigint() - w0) / 1e9 / opts.big });
    });
  },
};

try {
  for (let r = 0; r < opts.rounds; r++) {
    for (const w of Object.keys(workloads)) {
      for (let k = 0; k < variants.length; k++) await workloads[w](variants[(k + r) % variants.length]);
    }
  }
} catch (e) {
  console.error(e instanceof IntegrityError ? `async_echo: INTEGRITY FAILURE, no figures: ${e.message}` : `async_echo: failed: ${e.stack || e}`);
  process.exit(1);
}

const out = {
  tool: "bench/node/async_echo.mjs",
  client: `${CLIENT} async client (${TS.async}, apiRequest) on node ${process.version}`,
  ts: { id: TS.id, name: TS.name, version: TS.version, async: TS.async, dialect: TS.dialect, server: TS.server },
  servers: { spinrpc: { path: SPINRPC, version_line: SPINRPC_VERSION }, own },
  options: { ...opts, json: undefined, big_bytes: bigBytes },
  loadavg: readFileSync("/proc/loadavg", "utf8").trim(),
  variants: variants.map((v) => {
    const s = [...v.lat].sort((a, b) => a - b);
    return {
      name: v.name, n: s.length, p50_ns: percentile(s, 0.5), p75_ns: percentile(s, 0.75), p99_ns: percentile(s, 0.99),
      round_p50_ns: v.roundP50, seq_server_cpu_s: v.seqCpu, seq_wall_s: v.seqWall,
      burst: v.burst, burst_rps_median: median(v.burst.map((b) => b.rps)), burst_cpu_per_1000_median_s: median(v.burst.map((b) => b.cpuPer1000)),
      big: v.big, big_cpu_per_echo_median_s: median(v.big.map((b) => b.cpuPerEcho)),
    };
  }),
};
const [ours, theirs] = out.variants;
const f = (x, d = 1) => x.toFixed(d);
console.log(`## async_echo (${out.client}); rounds ${opts.rounds}, loadavg at end ${out.loadavg}`);
console.log(`servers: ${SPINRPC_VERSION}; ${own.label} (${own.overridden ? `SPINRPC_TSGO=${OWN}` : `${CLIENT}'s own server`}: ${own.version_line})` +
  (own.mismatch ? `, NOT ${CLIENT}'s own server` : ""));
for (const v of out.variants) {
  console.log(`${v.name}: sequential p50 ${f(v.p50_ns / 1e3)} µs p75 ${f(v.p75_ns / 1e3)} µs (per round p50 ${v.round_p50_ns.map((x) => f(x / 1e3)).join(", ")}); ` +
    `${opts.inflight} in flight: ${v.burst.map((b) => f(b.rps, 0)).join(", ")} req/s, server CPU per 1000 ${v.burst.map((b) => f(b.cpuPer1000 * 1e3, 2)).join(", ")} ms; ` +
    `${(bigBytes / 1048576).toFixed(2)} MiB echo server CPU ${v.big.map((b) => f(b.cpuPerEcho * 1e3, 2)).join(", ")} ms`);
}
console.log(`spinrpc-server / ${own.label}: sequential p50 ${f(ours.p50_ns / theirs.p50_ns, 2)}×, p75 ${f(ours.p75_ns / theirs.p75_ns, 2)}×; ` +
  `in-flight throughput ${f(ours.burst_rps_median / theirs.burst_rps_median, 2)}×, server CPU per 1000 ${f(ours.burst_cpu_per_1000_median_s / theirs.burst_cpu_per_1000_median_s, 2)}×`);
if (opts.json) writeFileSync(opts.json, JSON.stringify(out, null, 2) + "\n");
