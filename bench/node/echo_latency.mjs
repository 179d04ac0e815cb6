#!/usr/bin/env node
// echo_latency: the real TypeScript 7 sync client (the JS SyncRpcChannel of
// the version --ts picks, typescript@7.0.2 by default) timing back-to-back
// echoes against spinrpc-server and against that version's own server, side
// by side in one run (docs/BENCHMARKING.md).
//
//   node bench/node/echo_latency.mjs [--ts ID] [--count N] [--size BYTES]
//                                    [--rounds R] [--warmup W] [--no-floor]
//                                    [--server-spin LIST] [--json FILE]
//
// --ts ID       the TypeScript 7 version, an id of tests/interop/versions.mjs:
//               7.0 (typescript@7.0.2, the default), 7.1-beta, 7.1-dev
//               (typescript@7.1.0-dev.20261105.1), preview
//               (@typescript/native-preview@7.0.0-dev.20260707.2). It picks
//               the client (its sync API) and the reference server, the
//               version's own server as its `new API({})` would spawn it
//               (7.0/7.1: the platform package's lib/tsc; the preview's:
//               lib/tsgo). Rows and tables name that server by its
//               executable's name (tsc, tsgo); the header gives the
//               package, its version and the server's `--version`.
// --count N     timed echoes per variant, over all rounds (default 20000)
// --size BYTES  echo payload size in bytes (default 8, as the README's table)
// --rounds R    rounds; each round spawns every variant once, in an order that
//               rotates from round to round, so drift falls on all (default 9);
//               each spinrpc-server variant / the version's own server is
//               then the median of the per-round p50 and p75 ratios, with
//               each one's worst round
// --warmup W    untimed echoes per spawned process before timing (default 1000)
// --no-floor    skip the two pipe ping-pong floors
// --server-spin LIST  comma-separated spinrpc-server spin variants, each its
//               own variant: off (TSGO_SYNC_SPIN_US=0), fixed (100 µs,
//               TSGO_SYNC_SPIN_ADAPTIVE=0), adaptive (100 µs, adaptive=1),
//               set in the server's environment at spawn and checked with
//               getChannelStats; default (this process's environment, i.e.
//               the defaults) and placement-off (SPINRPC_PLACEMENT=off,
//               docs/PLACEMENT.md). The real client does not spin, so only
//               the server side varies. Default: one spinrpc-server variant
//               with this process's environment.
// --json FILE   also write the statistics as JSON (bench/report.mjs reads it)
// --no-binding  leave out spinrpc's Node.js binding (node/); by default it
//               is measured too, through `node --import node/register.mjs`
//               (one child Node per job: bench/node/job_child.mjs), against
//               spinrpc-server with default settings and against the
//               version's own server, in the latency table and in three more
//               workloads, each its own set of alternating rounds, the
//               pure-JS channel beside it:
// --sparse N    echoes per variant over all rounds, one every
//               --sparse-interval-ms (default 10): the client CPU they cost
//               (default 500; 0 = skip)
// --spawn K     per variant and round: new API (spawning the server) + one
//               echo, timed together (default 4; 0 = skip); beside them, in
//               the same rounds, each server's spawn floor (the binding
//               starts `spinrpc-server --version` / `<own server> --version`,
//               close() reaps it), each spawn against its own executable's
//               floor
// --large-mib LIST  comma-separated payload sizes in MiB for string and
//               binary echoes (default 1,16; empty = skip), --large-reps R
//               timed echoes of each per variant and round (default 2),
//               after --large-warmup W untimed ones (default 4: a fresh
//               process's first big Buffers land on fresh pages until the
//               collector has freed some; the binding's needs ~3 16 MiB
//               binary replies for that, docs/NODE.md "Large payloads")
//
// Variants: spinrpc-server and the version's own server through the real
// client (echoBinary), the same through spinrpc's binding, and two floors
// measured by this same Node process against `cat` over two pipes
// with the same message size as a framed echo request: blocking reads, and a
// polled non-blocking read. Spawning, warm-up and payload building stay outside
// the timed region; every reply is compared with what was sent, and a single
// wrong byte makes the run exit 1 without printing any time.
//
// Peers: SPINRPC_SERVER and SPINRPC_TSGO override the default paths
// (build/bin/spinrpc-server; the version's own server, from versions.mjs).
// A SPINRPC_TSGO whose `--version` is not the client's version is named so
// in the header and on stderr.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, readSync, writeFileSync, writeSync } from "node:fs";
import { cpus } from "node:os";
import { procCpuSeconds, selfCpuSeconds } from "./proc_cpu.mjs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { commandLine } from "../harness/cli.mjs";
import { median, percentile, summarize } from "../harness/stats.mjs";
import { resolvePeers } from "./peers.mjs";
import { IntegrityError, JOBS, NPAYLOADS, makePayloads, mismatch } from "./jobs.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const REGISTER = join(REPO, "node", "register.mjs");
const ADDON = join(REPO, "node", "build", "spinrpc.node");
const JOB_CHILD = join(REPO, "bench", "node", "job_child.mjs");

// ── arguments ─────────────────────────────────────────────────────────

const cli = commandLine("echo_latency", "usage: node bench/node/echo_latency.mjs [--ts 7.0|7.1-beta|7.1-dev|preview] [--count N] [--size BYTES] [--rounds R] [--warmup W] [--no-floor] [--server-spin default,placement-off,off,fixed,adaptive] [--json FILE]\n" +
  "       [--no-binding] [--sparse N] [--sparse-interval-ms MS] [--spawn K] [--large-mib LIST] [--large-reps R] [--large-warmup W]");
const SERVER_SPIN = {
  off: { TSGO_SYNC_SPIN_US: "0", TSGO_SYNC_SPIN_ADAPTIVE: "0" },
  fixed: { TSGO_SYNC_SPIN_US: "100", TSGO_SYNC_SPIN_ADAPTIVE: "0" },
  adaptive: { TSGO_SYNC_SPIN_US: "100", TSGO_SYNC_SPIN_ADAPTIVE: "1" },
  default: {},
  "placement-off": { SPINRPC_PLACEMENT: "off" },
};
const opts = (() => {
  const v = cli.parse({
    ts: { type: "string", default: "7.0" }, count: { type: "string", default: "20000" }, size: { type: "string", default: "8" },
    rounds: { type: "string", default: "9" }, warmup: { type: "string", default: "1000" }, "no-floor": { type: "boolean", default: false },
    "server-spin": { type: "string" }, json: { type: "string" }, "no-binding": { type: "boolean", default: false },
    sparse: { type: "string", default: "500" }, "sparse-interval-ms": { type: "string", default: "10" }, spawn: { type: "string", default: "4" },
    "large-mib": { type: "string", default: "1,16" }, "large-reps": { type: "string", default: "2" }, "large-warmup": { type: "string", default: "4" },
  });
  const o = {
    ts: v.ts, count: cli.count("count", v.count, 1), size: cli.count("size", v.size), rounds: cli.count("rounds", v.rounds, 1),
    warmup: cli.count("warmup", v.warmup), floor: !v["no-floor"], serverSpin: null, json: v.json ?? null, binding: !v["no-binding"],
    sparse: cli.count("sparse", v.sparse), sparseIntervalMs: cli.count("sparse-interval-ms", v["sparse-interval-ms"]), spawn: cli.count("spawn", v.spawn),
    largeMib: v["large-mib"].split(",").filter(Boolean).map(Number), largeReps: cli.count("large-reps", v["large-reps"]),
    largeWarmup: cli.count("large-warmup", v["large-warmup"]),
  };
  if (o.largeMib.some((m) => !Number.isInteger(m) || m < 1 || m > 256)) cli.fail(`--large-mib wants whole MiB from 1 to 256, got ${JSON.stringify(v["large-mib"])}`);
  if (v["server-spin"] !== undefined) {
    o.serverSpin = v["server-spin"].split(",").filter(Boolean);
    for (const name of o.serverSpin) if (!SERVER_SPIN[name]) cli.fail(`--server-spin: unknown variant ${JSON.stringify(name)} (${Object.keys(SERVER_SPIN).join(", ")})`);
    if (o.serverSpin.length === 0) cli.fail("--server-spin needs at least one variant");
  }
  if (o.rounds > o.count) cli.fail("--rounds cannot exceed --count");
  return o;
})();

// ── peers and the real client ─────────────────────────────────────────

/** The TypeScript 7 version --ts names, and the two servers (bench/node/peers.mjs). */
const { TS, SPINRPC, OWN } = await resolvePeers("echo_latency", opts.ts);
if (opts.binding && !existsSync(ADDON)) {
  console.error(`echo_latency: spinrpc's Node.js addon is not built at ${ADDON}: build it with scripts/build.sh, or pass --no-binding`);
  process.exit(1);
}
let API;
try {
  ({ API } = await import(TS.syncUrl));
} catch (e) {
  console.error(`echo_latency: cannot load ${TS.name} ${TS.version}'s sync client (${TS.sync}: ${e.message}); run npm ci in tests/interop`);
  process.exit(1);
}
/** The first line `exe --version` prints (both servers print one and exit). */
function versionLine(exe) {
  const r = spawnSync(exe, ["--version"], { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "pipe"] });
  const line = (r.stdout || "").split("\n")[0].trim();
  if (r.status !== 0 || !line) {
    console.error(`echo_latency: ${exe} --version failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`}): ${(r.stderr || "").trim().slice(0, 200)}`);
    process.exit(1);
  }
  return line;
}
const CLIENT = `${TS.name} ${TS.version}`;
const SPINRPC_VERSION = versionLine(SPINRPC);
/**
 * The reference server as rows and tables name it: its executable's name
 * (tsc for typescript@7, tsgo for the preview), with its own --version.
 */
const own = (() => {
  const line = versionLine(OWN);
  const version = /^Version (\S+)$/.exec(line)?.[1] ?? null;
  const exe = basename(OWN);
  return {
    label: exe === "spinrpc-server" ? "reference server" : exe,
    path: OWN,
    version_line: line,
    version,
    overridden: Boolean(process.env.SPINRPC_TSGO),
    mismatch: version !== TS.version,
  };
})();
const OWN_DESC = `${own.label} (${own.overridden ? `SPINRPC_TSGO=${OWN}` : `${CLIENT}'s own server`}: ${own.version_line})`;
if (own.mismatch) {
  console.error(`echo_latency: note: the reference server ${OWN} says ${JSON.stringify(own.version_line)}, ` +
    `not ${TS.version}: it is not ${CLIENT}'s own server (${own.overridden ? "SPINRPC_TSGO names it" : TS.server})`);
}

// ── measurement helpers ───────────────────────────────────────────────

const PAYLOADS = makePayloads(opts.size);

// ── variants ──────────────────────────────────────────────────────────

/**
 * One process of a pure-JS variant: spawn, warm up, time n echoes, close
 * (jobs.mjs, latencyJob). `env` goes into the server's environment; with
 * `spin`, the server's getChannelStats must report that budget and
 * adaptive setting.
 */
function runApi(path, env = {}, spin = null) {
  const check = spin && ((api) => {
    const st = JSON.parse(api.client.channel.requestSync("getChannelStats", ""));
    const want = SERVER_SPIN[spin];
    if (want.SPINRPC_PLACEMENT !== undefined && st.placement !== want.SPINRPC_PLACEMENT) {
      throw new Error(`the server runs placement ${st.placement} (${st.placement_setting_reason}), not ${want.SPINRPC_PLACEMENT}`);
    }
    if (want.TSGO_SYNC_SPIN_US === undefined) return;
    if (String(st.budget_us) !== want.TSGO_SYNC_SPIN_US || (st.budget_us > 0 && String(Number(st.adaptive)) !== want.TSGO_SYNC_SPIN_ADAPTIVE)) {
      throw new Error(`the server runs budget ${st.budget_us} µs, adaptive ${st.adaptive} (${st.budget_reason}), not ${spin}`);
    }
  });
  return (variant, n) => JOBS.latency(API, { variant, server: path, env, n, warmup: opts.warmup, size: opts.size }, check);
}

/**
 * One job in a fresh Node process (bench/node/job_child.mjs): through the
 * register hook (the binding: what a user of `node --import` runs) or
 * without it (the pure-JS channel). The sparse, spawn and large jobs run
 * so for both channels, so that neither profits from a heap, compiled code
 * or a settled collector left by earlier rounds in the long-lived bench
 * process (docs/BENCHMARKING.md, "Notes": why Node jobs run in fresh processes).
 */
function inJobChild(job, hook) {
  // The child loads the same client: --ts's sync API, by the file
  // versions.mjs resolved it to.
  const args = [...(hook ? ["--import", REGISTER] : []), JOB_CHILD, JSON.stringify({ ...job, hook, ts: TS.id, sync: TS.syncUrl })];
  const r = spawnSync(process.execPath, args,
    { encoding: "utf8", maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "inherit"] });
  if (r.status === 3) throw new IntegrityError(`${job.variant}: a reply differed from what was sent (see above)`);
  if (r.status !== 0) throw new Error(`${job.variant}: job_child exited with ${r.status ?? r.signal}`);
  return JSON.parse(r.stdout);
}
function runBinding(path) {
  return (variant, n) => {
    const res = inJobChild({ kind: "latency", variant, server: path, env: {}, n, warmup: opts.warmup, size: opts.size }, true);
    return { ...res, lat: Float64Array.from(res.lat) };
  };
}

/** The echo request frame the client writes for one payload (same size on the wire). */
function requestFrame(payload) {
  const n = payload.length;
  const hdr = n < 0x100 ? Buffer.from([0xc4, n]) : n < 0x10000 ? Buffer.from([0xc5, n >> 8, n & 0xff]) : Buffer.from([0xc6, n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);
  return Buffer.concat([Buffer.from([0x93, 0x01, 0xc4, 0x04]), Buffer.from("echo"), hdr, payload]);
}

/**
 * Floor: the same message size ping-ponged through `cat` over two pipes,
 * written with writeSync and read back with readSync, either blocking or
 * polling a non-blocking fd (EAGAIN → try again at once).
 */
function runFloor(polled) {
  return (variant, n) => {
    const lat = new Float64Array(n);
    const off = 0;
    const child = spawn("cat", [], { stdio: ["pipe", "pipe", "inherit"] });
    const rfd = child.stdout._handle.fd;
    const wfd = child.stdin._handle.fd;
    child.stdout._handle.setBlocking?.(!polled);
    child.stdin._handle.setBlocking?.(true);
    child.stdout.pause();
    const frames = PAYLOADS.map(requestFrame);
    const buf = Buffer.allocUnsafe(frames[0].length);
    // cat streams, so a message larger than a pipe buffer would deadlock if
    // written whole before reading: go in 32 KiB chunks (one chunk for small
    // messages, so the small-message floor is a plain ping-pong).
    const CHUNK = 32 * 1024;
    const roundTrip = (msg) => {
      for (let start = 0; start < msg.length; start += CHUNK) {
        const end = Math.min(msg.length, start + CHUNK);
        writeSync(wfd, msg, start, end - start);
        let got = start;
        while (got < end) {
          let k;
          try {
            k = readSync(rfd, buf, got, end - got, null);
          } catch (e) {
            if (e.code === "EAGAIN" || e.code === "EWOULDBLOCK") continue;
            throw e;
          }
          if (k === 0) throw new Error(`${variant}: cat closed its stdout`);
          got += k;
        }
      }
    };
    try {
      for (let i = 0; i < opts.warmup; i++) {
        const m = frames[i % NPAYLOADS];
        roundTrip(m);
        if (!buf.equals(m)) mismatch(variant, `warm-up ${i}`, m, buf);
      }
      const srv0 = procCpuSeconds(child.pid);
      const cli0 = selfCpuSeconds();
      const w0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) {
        const m = frames[i % NPAYLOADS];
        const t0 = process.hrtime.bigint();
        roundTrip(m);
        const t1 = process.hrtime.bigint();
        lat[off + i] = Number(t1 - t0);
        if (!buf.equals(m)) mismatch(variant, i, m, buf);
      }
      const wall = Number(process.hrtime.bigint() - w0) / 1e9;
      return { lat, wall, clientCpu: selfCpuSeconds() - cli0, serverCpu: procCpuSeconds(child.pid) - srv0 };
    } finally {
      child.stdin.destroy();
      child.stdout.destroy();
      child.kill();
    }
  };
}

const variants = opts.serverSpin
  ? opts.serverSpin.map((spin) => ({ name: `spinrpc-server (server spin ${spin})`, kind: "spinrpc", spin, run: runApi(SPINRPC, SERVER_SPIN[spin], spin) }))
  : [{ name: "spinrpc-server", kind: "spinrpc", spin: null, run: runApi(SPINRPC) }];
// kind "own": the version's own server through its own channel; a binding
// variant's `server` is "spinrpc-server" or "own".
variants.push({ name: own.label, kind: "own", spin: null, run: runApi(OWN) });
if (opts.binding) {
  variants.push({ name: "binding → spinrpc-server", kind: "binding", server: "spinrpc-server", spin: null, run: runBinding(SPINRPC) });
  variants.push({ name: `binding → ${own.label}`, kind: "binding", server: "own", spin: null, run: runBinding(OWN) });
}
if (opts.floor) {
  variants.push({ name: "floor: pipe, blocking read", kind: "floor", run: runFloor(false), floor: "blocking" });
  variants.push({ name: "floor: pipe, polled read", kind: "floor", run: runFloor(true), floor: "polled" });
}

// The binding's other workloads, pure-JS and binding side by side against
// both servers (jobs.mjs: sparse, spawn, large).
const CHANNELS = [
  { name: `pure-JS → ${own.label}`, channel: "pure-JS", server: "own", path: OWN },
  { name: "pure-JS → spinrpc-server", channel: "pure-JS", server: "spinrpc-server", path: SPINRPC },
  { name: "binding → spinrpc-server", channel: "binding", server: "spinrpc-server", path: SPINRPC },
  { name: `binding → ${own.label}`, channel: "binding", server: "own", path: OWN },
];
/** A channel variant's name by channel ("pure-JS", "binding") and server ("spinrpc-server", "own"). */
const chan = (channel, server) => CHANNELS.find((c) => c.channel === channel && c.server === server).name;
/** The spawn table's floor rows, one per server executable (jobs.mjs, spawnFloorJob). */
const SPAWN_FLOORS = [
  { name: "floor: binding starts spinrpc-server --version, close() reaps it", channel: "floor", server: "spinrpc-server", path: SPINRPC },
  { name: `floor: binding starts ${own.label} --version, close() reaps it`, channel: "floor", server: "own", path: OWN },
];
const floorOf = (server) => SPAWN_FLOORS.find((f) => f.server === server).name;
/** A job of channel variant c in a fresh process (inJobChild), whichever the channel. */
const freshJob = (c, kind, job) =>
  inJobChild({ ...job, kind, variant: c.name, server: c.path, env: {} }, c.channel === "binding");
/** Round r of `total` split over opts.rounds. */
const share = (total, r) => Math.floor(total / opts.rounds) + (r < total % opts.rounds ? 1 : 0);
/** Runs fn(c, r) for every channel variant, rounds alternating, order rotating. */
function rounds(fn) {
  for (let r = 0; r < opts.rounds; r++) {
    for (let i = 0; i < CHANNELS.length; i++) fn(CHANNELS[(i + r) % CHANNELS.length], r);
  }
}
// An echo that took fewer page faults than the payload's pages over this
// found the reply's memory in place: a fresh reply Buffer faults once per
// 4 KiB page (16 MiB: 4,096), a warm echo 0-100 times.
const FEW_FAULTS_DIVISOR = 16;
/**
 * Of one cell's timed echoes (payloads of `mib`): how many took fewer faults
 * than its pages / FEW_FAULTS_DIVISOR (of all), their median time, and the
 * median faults of all.
 */
function faultSplit(mib, ns, faults) {
  const limit = ((mib << 20) / 4096) / FEW_FAULTS_DIVISOR;
  const few = ns.filter((_, i) => faults[i] < limit);
  return { n: few.length, of: ns.length, nsFew: few.length ? median(few) : null, faultsMedian: median(faults) };
}
const extra = { sparse: null, spawn: null, large: null, largeFaults: {} };
function runBindingWorkloads() {
  if (opts.sparse > 0) {
    extra.sparse = Object.fromEntries(CHANNELS.map((c) => [c.name, { n: 0, clientCpu: 0, serverCpu: 0, roundClientPer1000: [] }]));
    rounds((c, r) => {
      const n = share(opts.sparse, r);
      if (n === 0) return;
      const res = freshJob(c, "sparse", { n, size: opts.size, intervalMs: opts.sparseIntervalMs });
      const e = extra.sparse[c.name];
      e.n += res.n; e.clientCpu += res.clientCpu; e.serverCpu += res.serverCpu;
      e.roundClientPer1000.push(res.clientCpu * 1000 / res.n);
    });
  }
  if (opts.spawn > 0) {
    extra.spawn = Object.fromEntries(CHANNELS.map((c) => [c.name, { ns: [], ctorNs: [], roundMedian: [] }]));
    // Each server's floor beside them, once per round: what starting that
    // executable costs at all.
    for (const fl of SPAWN_FLOORS) extra.spawn[fl.name] = { ns: [], ctorNs: [], roundMedian: [] };
    const add = (name, res) => {
      extra.spawn[name].ns.push(...res.ns);
      extra.spawn[name].ctorNs.push(...res.ctorNs);
      extra.spawn[name].roundMedian.push(median(res.ns));
    };
    // Floor i runs after the channel two places on from floor i-1's, both
    // places moving from round to round, so drift falls on the floors as
    // on the spawns.
    const L = CHANNELS.length;
    rounds((c, r) => {
      add(c.name, freshJob(c, "spawn", { k: opts.spawn }));
      SPAWN_FLOORS.forEach((fl, i) => {
        if (c === CHANNELS[(L - 1 - (r % L) + 2 * i) % L]) {
          add(fl.name, inJobChild({ kind: "spawnFloor", variant: fl.name, server: fl.path, env: {}, k: opts.spawn }, true));
        }
      });
    });
  }
  if (opts.largeMib.length > 0 && opts.largeReps > 0) {
    extra.large = Object.fromEntries(CHANNELS.map((c) => [c.name, {}]));
    rounds((c) => {
      const res = freshJob(c, "large", { mib: opts.largeMib, reps: opts.largeReps, warmup: opts.largeWarmup });
      for (const [key, ns] of Object.entries(res.ns)) (extra.large[c.name][key] ??= []).push(...ns);
      for (const [key, f] of Object.entries(res.faults)) ((extra.largeFaults[c.name] ??= {})[key] ??= []).push(...f);
    });
  }
}

// ── the run ───────────────────────────────────────────────────────────

for (const v of variants) {
  v.lat = new Float64Array(opts.count);
  v.filled = 0;
  v.wall = 0; v.clientCpu = 0; v.serverCpu = 0;
  v.roundP50 = [];
  v.roundP75 = [];
  v.roundMean = [];
  v.roundServerCpuPerEcho = [];  // ns per echo, one entry per round
}
try {
  for (let r = 0; r < opts.rounds; r++) {
    const n = Math.floor(opts.count / opts.rounds) + (r < opts.count % opts.rounds ? 1 : 0);
    const order = variants.map((_, i) => variants[(i + r) % variants.length]);
    for (const v of order) {
      const res = v.run(v.name, n);
      v.lat.set(res.lat, v.filled);
      const sorted = Float64Array.from(res.lat).sort();
      v.roundP50.push(percentile(sorted, 0.5));
      v.roundP75.push(percentile(sorted, 0.75));
      v.roundMean.push(sorted.reduce((a, x) => a + x, 0) / sorted.length);
      v.roundServerCpuPerEcho.push((res.serverCpu * 1e9) / n);
      v.filled += n;
      v.wall += res.wall; v.clientCpu += res.clientCpu; v.serverCpu += res.serverCpu;
    }
  }
  if (opts.binding) runBindingWorkloads();
} catch (e) {
  if (e instanceof IntegrityError) {
    console.error(`echo_latency: INTEGRITY FAILURE, no times reported: ${e.message}`);
  } else {
    console.error(`echo_latency: failed: ${e.stack || e}`);
  }
  process.exit(1);
}

// ── report ────────────────────────────────────────────────────────────

const us = (ns) => (ns / 1000).toFixed(ns < 100_000 ? 2 : 1);

for (const v of variants) {
  v.stats = summarize(v.lat.sort());
}
const floorBlocking = variants.find((v) => v.floor === "blocking");
const floorPolled = variants.find((v) => v.floor === "polled");
const ratio = (a, b) => (b > 0 ? (a / b).toFixed(2) : "n/a");

const spinEnv = ["TSGO_SYNC_SPIN_US", "TSGO_SYNC_SPIN_ADAPTIVE"].filter((k) => process.env[k] !== undefined).map((k) => `${k}=${process.env[k]}`);
const perRound = Math.floor(opts.count / opts.rounds);
const clientDesc = `${CLIENT} sync client (${TS.sync}, echoBinary) on node ${process.version}`;
console.log(`## echo_latency: size=${opts.size} B, count=${opts.count} per variant, rounds=${opts.rounds} (~${perRound} timed echoes per process), warm-up=${opts.warmup} per process`);
console.log("");
console.log(`client: ${clientDesc}; ` +
  `${cpus().length} CPUs; server spin settings: ${opts.serverSpin ? `per variant (--server-spin ${opts.serverSpin.join(",")})` : spinEnv.length ? spinEnv.join(" ") : "defaults"}`);
console.log(`servers: ${SPINRPC_VERSION}; ${OWN_DESC}${own.mismatch ? `, NOT ${CLIENT}'s own server` : ""}`);
console.log("");
const cols = ["variant", "n", "mean µs", "p50 µs", "p75 µs", "p99 µs", "max µs"];
if (floorBlocking) cols.push("p50 / floor blocking", "p50 / floor polled");
cols.push("client CPU s", "server CPU s", "server CPU ms / 1000 echoes", "wall s", "p50 per round µs");
console.log(`| ${cols.join(" | ")} |`);
console.log(`|${cols.map((c, i) => (i === 0 ? " --- " : " ---: ")).join("|")}|`);
for (const v of variants) {
  const s = v.stats;
  const row = [v.name, s.n, us(s.mean), us(s.p50), us(s.p75), us(s.p99), us(s.max)];
  if (floorBlocking) row.push(ratio(s.p50, floorBlocking.stats.p50), ratio(s.p50, floorPolled.stats.p50));
  row.push(v.clientCpu.toFixed(3), v.serverCpu.toFixed(3), (v.serverCpu * 1e6 / s.n).toFixed(2), v.wall.toFixed(3), v.roundP50.map(us).join(", "));
  console.log(`| ${row.join(" | ")} |`);
}
const ownVariant = variants.find((v) => v.kind === "own");
const os = ownVariant.stats;
console.log("");
// Round by round against the version's own server: the rounds ran side by
// side, so a paired ratio cancels a shared machine's drift between rounds
// (docs/PLACEMENT.md).
for (const v of variants.filter((x) => x.kind === "spinrpc")) {
  const paired = (key) => median(v[key].map((x, r) => x / ownVariant[key][r]));
  v.paired = { p50: paired("roundP50"), p75: paired("roundP75"), server_cpu: paired("roundServerCpuPerEcho"),
    worst_p50_ns: Math.max(...v.roundP50), own_worst_p50_ns: Math.max(...ownVariant.roundP50) };
  console.log(`${v.name} / ${own.label}, median of ${opts.rounds} per-round ratios: p50 ${v.paired.p50.toFixed(2)}, p75 ${v.paired.p75.toFixed(2)}; ` +
    `worst round p50 ${us(v.paired.worst_p50_ns)} µs, ${own.label}'s ${us(v.paired.own_worst_p50_ns)} µs; server CPU per echo ${v.paired.server_cpu.toFixed(2)}; pooled p50 ${ratio(v.stats.p50, os.p50)}, p75 ${ratio(v.stats.p75, os.p75)} (below 1 = spinrpc-server faster)`);
}
console.log("");
console.log("Server CPU is the peer process's CPU time over the timed region (/proc/PID/task/*/schedstat, ns); client CPU is this Node process's " +
  "(the binding's: its child Node's). All replies were checked byte for byte.");

// ── spinrpc's binding: the figures ───────────────────────────────────

const figures = {};
const byName = (name) => variants.find((v) => v.name === name);
const ms = (ns) => (ns / 1e6).toFixed(ns < 1e7 ? 3 : 1);
const signed = (x) => `${x >= 0 ? "+" : ""}${x.toFixed(4)}`;
if (opts.binding) {
  const OWN_B = `binding → ${own.label}`;
  const OWN_P = `pure-JS → ${own.label}`;
  console.log("");
  console.log("## spinrpc's Node.js binding (node/), through `node --import node/register.mjs`, beside the pure-JS channel");
  console.log("");
  // Each round ran every variant once: variant a's round r against b's
  // round r, the median of those ratios (mean, p50 and p75 of each round).
  const paired = (a, b, key) => median(byName(a)[key].map((x, r) => x / byName(b)[key][r]));
  const trio = (a, b) => ({ mean: paired(a, b, "roundMean"), p50: paired(a, b, "roundP50"), p75: paired(a, b, "roundP75") });
  figures.latency = {
    binding_spinrpc_vs_purejs_own: trio("binding → spinrpc-server", own.label),
    binding_own_vs_purejs_own: trio(OWN_B, own.label),
  };
  const f = figures.latency;
  const three = (x) => `mean ${x.mean.toFixed(2)}, p50 ${x.p50.toFixed(2)}, p75 ${x.p75.toFixed(2)}`;
  console.log(`(1) binding → spinrpc-server / ${OWN_P}, median of ${opts.rounds} per-round ratios: ${three(f.binding_spinrpc_vs_purejs_own)} (target: p50 and p75 ≤ 0.6)`);
  console.log(`(2) ${OWN_B} / ${OWN_P}, the same: ${three(f.binding_own_vs_purejs_own)} (target: mean and p75 ≤ 0.6, p50 ≤ 1.05)`);
  if (extra.sparse) {
    console.log("");
    console.log(`### Sparse requests: ${opts.sparse} ${opts.size}-byte echoes per variant, one every ${opts.sparseIntervalMs} ms, each variant in a fresh process`);
    console.log("");
    console.log("| variant | echoes | client CPU s per 1000 | server CPU s per 1000 | client CPU per 1000, per round |");
    console.log("| --- | ---: | ---: | ---: | --- |");
    for (const [name, e] of Object.entries(extra.sparse)) {
      console.log(`| ${name} | ${e.n} | ${(e.clientCpu * 1000 / e.n).toFixed(4)} | ${(e.serverCpu * 1000 / e.n).toFixed(4)} | ${e.roundClientPer1000.map((x) => x.toFixed(4)).join(", ")} |`);
    }
    const per1000 = (name) => extra.sparse[name].clientCpu * 1000 / extra.sparse[name].n;
    figures.sparse = {
      binding_spinrpc_minus_purejs_own_s: per1000("binding → spinrpc-server") - per1000(OWN_P),
      binding_own_minus_purejs_own_s: per1000(OWN_B) - per1000(OWN_P),
    };
    console.log("");
    console.log(`(3) client CPU per 1000 requests, binding − ${OWN_P}: → spinrpc-server ${signed(figures.sparse.binding_spinrpc_minus_purejs_own_s)} s, ` +
      `→ ${own.label} ${signed(figures.sparse.binding_own_minus_purejs_own_s)} s`);
  }
  if (extra.spawn) {
    console.log("");
    console.log(`### Spawn to first reply: new API (spawns the server) + one echo, ${opts.spawn} per variant and round; each server's spawn floor in the same rounds`);
    console.log("");
    const serverOf = Object.fromEntries([...CHANNELS, ...SPAWN_FLOORS].map((c) => [c.name, c.server]));
    const med = (name, key = "ns") => median(extra.spawn[name][key]);
    console.log("| variant | n | median ms | p75 ms | max ms | / its server's floor | new API alone, median ms | median per round ms |");
    console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
    for (const [name, e] of Object.entries(extra.spawn)) {
      const sorted = Float64Array.from(e.ns).sort();
      const vsFloor = name.startsWith("floor:") ? "" : (med(name) / med(floorOf(serverOf[name]))).toFixed(2);
      console.log(`| ${name} | ${sorted.length} | ${ms(percentile(sorted, 0.5))} | ${ms(percentile(sorted, 0.75))} | ${ms(sorted[sorted.length - 1])} | ${vsFloor} | ${ms(median(e.ctorNs))} | ${e.roundMedian.map(ms).join(", ")} |`);
    }
    const vsFloor = (channel, server) => med(chan(channel, server)) / med(floorOf(server));
    figures.spawn = {
      binding_vs_purejs_spinrpc: med("binding → spinrpc-server") / med("pure-JS → spinrpc-server"),
      binding_vs_purejs_own: med(OWN_B) / med(OWN_P),
      ctor_binding_vs_purejs_spinrpc: med("binding → spinrpc-server", "ctorNs") / med("pure-JS → spinrpc-server", "ctorNs"),
      ctor_binding_vs_purejs_own: med(OWN_B, "ctorNs") / med(OWN_P, "ctorNs"),
      floor_spinrpc_ms: med(floorOf("spinrpc-server")) / 1e6,
      floor_own_ms: med(floorOf("own")) / 1e6,
      binding_spinrpc_vs_spinrpc_floor: vsFloor("binding", "spinrpc-server"),
      binding_own_vs_own_floor: vsFloor("binding", "own"),
      purejs_spinrpc_vs_spinrpc_floor: vsFloor("pure-JS", "spinrpc-server"),
      purejs_own_vs_own_floor: vsFloor("pure-JS", "own"),
    };
    const f4 = figures.spawn;
    console.log("");
    console.log(`(4) spawn to first reply, binding / pure-JS (median): → spinrpc-server ${f4.binding_vs_purejs_spinrpc.toFixed(2)}, → ${own.label} ${f4.binding_vs_purejs_own.toFixed(2)}; ` +
      `new API alone: → spinrpc-server ${f4.ctor_binding_vs_purejs_spinrpc.toFixed(2)}, → ${own.label} ${f4.ctor_binding_vs_purejs_own.toFixed(2)}`);
    console.log(`(4a) spawn plus first reply, binding → spinrpc-server / spinrpc-server's spawn floor (median): ${f4.binding_spinrpc_vs_spinrpc_floor.toFixed(2)} ` +
      `(floor ${f4.floor_spinrpc_ms.toFixed(3)} ms; pure-JS ${f4.purejs_spinrpc_vs_spinrpc_floor.toFixed(2)}; target ≤ 1.1)`);
    console.log(`(4b) spawn plus first reply, ${OWN_B} / ${own.label}'s spawn floor (median): ${f4.binding_own_vs_own_floor.toFixed(2)} ` +
      `(floor ${f4.floor_own_ms.toFixed(3)} ms; pure-JS ${f4.purejs_own_vs_own_floor.toFixed(2)}; target ≤ 1.1)`);
  }
  if (extra.large) {
    console.log("");
    console.log(`### Large payloads: echo (string) and echoBinary, ${opts.largeReps} timed per variant and round after ${opts.largeWarmup} untimed, each variant in a fresh process (median ms)`);
    console.log("");
    const keys = Object.keys(extra.large[CHANNELS[0].name]);
    console.log(`| payload | ${CHANNELS.map((c) => c.name).join(" | ")} | binding / pure-JS → spinrpc-server | binding / pure-JS → ${own.label} |`);
    console.log(`| --- |${CHANNELS.map(() => " ---: |").join("")} ---: | ---: |`);
    figures.large = {};
    for (const key of keys) {
      const med = (name) => median(extra.large[name][key]);
      const rs = med("binding → spinrpc-server") / med("pure-JS → spinrpc-server");
      const ro = med(OWN_B) / med(OWN_P);
      figures.large[key] = { binding_vs_purejs_spinrpc: rs, binding_vs_purejs_own: ro };
      console.log(`| ${key} | ${CHANNELS.map((c) => ms(med(c.name))).join(" | ")} | ${rs.toFixed(2)} | ${ro.toFixed(2)} |`);
    }
    const worst = Math.max(...Object.values(figures.large).flatMap((x) => [x.binding_vs_purejs_spinrpc, x.binding_vs_purejs_own]));
    console.log("");
    console.log(`(5) large payloads, the largest binding / pure-JS time ratio: ${worst.toFixed(2)}`);
    console.log("");
    console.log(`The same echoes by the page faults each one took in its process: how many took fewer than 1/${FEW_FAULTS_DIVISOR} of the payload's pages (found the reply's memory in place), their median ms, and the median faults of all.`);
    console.log("");
    console.log(`| payload | ${CHANNELS.map((c) => `${c.name}: n, ms, faults`).join(" | ")} |`);
    console.log(`| --- |${CHANNELS.map(() => " ---: |").join("")}`);
    figures.largeFaults = { divisor: FEW_FAULTS_DIVISOR, cells: {} };
    for (const key of keys) {
      const mib = Number.parseInt(key, 10);  // "16 MiB binary"
      const cells = figures.largeFaults.cells[key] = Object.fromEntries(CHANNELS.map((c) =>
        [c.name, faultSplit(mib, extra.large[c.name][key], extra.largeFaults[c.name][key])]));
      console.log(`| ${key} | ${CHANNELS.map((c) => { const f = cells[c.name]; return `${f.n}, ${f.n ? ms(f.nsFew) : "–"}, ${f.faultsMedian}`; }).join(" | ")} |`);
    }
  }
}

if (opts.json) {
  const out = {
    tool: "bench/node/echo_latency.mjs",
    client: clientDesc,
    // --ts's version (tests/interop/versions.mjs) and both servers as run.
    ts: { id: TS.id, name: TS.name, version: TS.version, sync: TS.sync, dialect: TS.dialect, server: TS.server },
    servers: { spinrpc: { path: SPINRPC, version_line: SPINRPC_VERSION }, own },
    options: { ts: opts.ts, count: opts.count, size: opts.size, rounds: opts.rounds, warmup: opts.warmup, serverSpin: opts.serverSpin },
    spinEnv: spinEnv,
    variants: variants.map((v) => ({
      name: v.name, kind: v.kind, spin: v.spin ?? null, floor: v.floor ?? null,
      n: v.stats.n, mean_ns: v.stats.mean, p50_ns: v.stats.p50, p75_ns: v.stats.p75, p99_ns: v.stats.p99, max_ns: v.stats.max,
      client_cpu_s: v.clientCpu, server_cpu_s: v.serverCpu, wall_s: v.wall,
      round_mean_ns: v.roundMean, round_p50_ns: v.roundP50, round_p75_ns: v.roundP75,
      round_server_cpu_ns_per_echo: v.roundServerCpuPerEcho, paired_vs_own: v.paired ?? null,
      server: v.server ?? null,
    })),
    binding: opts.binding ? {
      options: { sparse: opts.sparse, sparseIntervalMs: opts.sparseIntervalMs, spawn: opts.spawn, largeMib: opts.largeMib, largeReps: opts.largeReps, largeWarmup: opts.largeWarmup },
      // The names the tables below are keyed by: channel "pure-JS",
      // "binding" or "floor" (the spawn floors), server "spinrpc-server" or "own".
      channels: [...CHANNELS, ...SPAWN_FLOORS].map(({ name, channel, server }) => ({ name, channel, server })),
      sparse: extra.sparse, spawn: extra.spawn, large: extra.large, figures,
    } : null,
  };
  writeFileSync(opts.json, JSON.stringify(out, null, 2) + "\n");
}
