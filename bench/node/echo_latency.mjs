#!/usr/bin/env node
// echo_latency: the real TypeScript 7 sync client (the JS SyncRpcChannel of
// @typescript/native-preview/unstable/sync) timing back-to-back echoes against
// spinrpc-server and against tsgo, side by side in one run (BENCH.md).
//
//   node bench/node/echo_latency.mjs [--count N] [--size BYTES] [--rounds R]
//                                    [--warmup W] [--no-floor]
//                                    [--server-spin LIST] [--json FILE]
//
// --count N     timed echoes per variant, over all rounds (default 20000)
// --size BYTES  echo payload size in bytes (default 16)
// --rounds R    rounds; each round spawns every variant once, in an order that
//               rotates from round to round, so drift falls on all (default 9).
//               Each spinrpc-server variant is compared with tsgo round by
//               round: the median of the per-round p50 (and p75) ratios, and
//               the worst round's p50 of each (docs/PLACEMENT.md).
// --warmup W    untimed echoes per spawned process before timing (default 1000)
// --no-floor    skip the two pipe ping-pong floors
// --server-spin LIST  comma-separated spinrpc-server spin variants, each its
//               own variant: off (TSGO_SYNC_SPIN_US=0), fixed (100 µs,
//               TSGO_SYNC_SPIN_ADAPTIVE=0), adaptive (100 µs, adaptive=1),
//               set in the server's environment at spawn and checked with
//               getChannelStats; default (this process's environment, i.e.
//               the defaults) and placement-off (SPINRPC_PLACEMENT=off). The
//               real client does not spin, so only the server side varies.
//               Default: one spinrpc-server variant with this process's
//               environment.
// --json FILE   also write the statistics as JSON (bench/report.mjs reads it)
//
// Variants: spinrpc-server and tsgo through the real client (echoBinary), and
// two floors measured by this same Node process against `cat` over two pipes
// with the same message size as a framed echo request: blocking reads, and a
// polled non-blocking read. Spawning, warm-up and payload building stay outside
// the timed region; every reply is compared with what was sent, and a single
// wrong byte makes the run exit 1 without printing any time.
//
// Peers: SPINRPC_SERVER and SPINRPC_TSGO override the default paths
// (build/bin/spinrpc-server, tests/interop/node_modules/.../lib/tsgo).

import { spawn, execFileSync } from "node:child_process";
import { existsSync, readFileSync, readSync, readdirSync, writeFileSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const INTEROP = join(REPO, "tests", "interop");

// ── arguments ─────────────────────────────────────────────────────────

function usage(msg) {
  if (msg) console.error(`echo_latency: ${msg}`);
  console.error("usage: node bench/node/echo_latency.mjs [--count N] [--size BYTES] [--rounds R] [--warmup W] [--no-floor] [--server-spin default,placement-off,off,fixed,adaptive] [--json FILE]");
  process.exit(2);
}
const SERVER_SPIN = {
  off: { TSGO_SYNC_SPIN_US: "0", TSGO_SYNC_SPIN_ADAPTIVE: "0" },
  fixed: { TSGO_SYNC_SPIN_US: "100", TSGO_SYNC_SPIN_ADAPTIVE: "0" },
  adaptive: { TSGO_SYNC_SPIN_US: "100", TSGO_SYNC_SPIN_ADAPTIVE: "1" },
  default: {},
  "placement-off": { SPINRPC_PLACEMENT: "off" },
};
const opts = { count: 20000, size: 16, rounds: 9, warmup: 1000, floor: true, serverSpin: null, json: null };
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    let [k, v] = argv[i].split(/=(.*)/s, 2);
    if (k === "--help" || k === "-h") usage();
    if (k === "--no-floor") { opts.floor = false; continue; }
    const key = { "--count": "count", "--size": "size", "--rounds": "rounds", "--warmup": "warmup", "--server-spin": "serverSpin", "--json": "json" }[k];
    if (!key) usage(`unknown argument ${argv[i]}`);
    if (v === undefined) { v = argv[++i]; if (v === undefined) usage(`${k} needs a value`); }
    if (key === "json") { opts.json = v; continue; }
    if (key === "serverSpin") {
      opts.serverSpin = v.split(",").filter(Boolean);
      for (const name of opts.serverSpin) if (!SERVER_SPIN[name]) usage(`--server-spin: unknown variant ${JSON.stringify(name)} (${Object.keys(SERVER_SPIN).join(", ")})`);
      if (opts.serverSpin.length === 0) usage("--server-spin needs at least one variant");
      continue;
    }
    if (!/^\d+$/.test(v)) usage(`${k} wants a non-negative integer, got ${JSON.stringify(v)}`);
    opts[key] = Number(v);
  }
  if (opts.count < 1 || opts.rounds < 1) usage("--count and --rounds must be at least 1");
  if (opts.rounds > opts.count) usage("--rounds cannot exceed --count");
}

// ── peers and the real client ─────────────────────────────────────────

const SPINRPC = process.env.SPINRPC_SERVER || join(REPO, "build", "bin", "spinrpc-server");
const TSGO = process.env.SPINRPC_TSGO || join(INTEROP, "node_modules", "@typescript", "native-preview-linux-x64", "lib", "tsgo");
for (const [name, path, hint] of [
  ["spinrpc-server", SPINRPC, "build it with scripts/build.sh"],
  ["tsgo", TSGO, "run npm ci in tests/interop (scripts/setup.sh)"],
]) {
  if (!existsSync(path)) {
    console.error(`echo_latency: ${name} not found at ${path}: ${hint}`);
    process.exit(1);
  }
}
let API;
let clientVersion;
try {
  const req = createRequire(join(INTEROP, "package.json"));
  ({ API } = await import(pathToFileURL(req.resolve("@typescript/native-preview/unstable/sync")).href));
  clientVersion = JSON.parse(readFileSync(req.resolve("@typescript/native-preview/package.json"), "utf8")).version;
} catch (e) {
  console.error(`echo_latency: cannot load the TypeScript sync client from ${INTEROP}/node_modules (${e.message}); run npm ci in tests/interop`);
  process.exit(1);
}

// ── measurement helpers ───────────────────────────────────────────────

let CLK_TCK = 100;
try { CLK_TCK = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100; } catch { /* keep 100 */ }

/**
 * CPU seconds a live process has used: the sum over its threads of the first
 * field of /proc/PID/task/TID/schedstat (ns on CPU; exact for multi-threaded
 * tsgo, as spinrpc-bench measures it), else utime+stime from /proc/PID/stat
 * in clock ticks.
 */
function procCpuSeconds(pid) {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try { ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]); } catch { /* thread gone */ }
    }
    return ns / 1e9;
  } catch { /* no schedstat: fall back to ticks */ }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / CLK_TCK; // utime, stime (fields 14, 15)
  } catch {
    return NaN;
  }
}
const selfCpuSeconds = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };

/** Deterministic payloads of `size` bytes, distinct so a stale reply shows. */
const NPAYLOADS = 64;
function makePayloads(size) {
  const out = [];
  let x = 0x2545f491;
  for (let k = 0; k < NPAYLOADS; k++) {
    const p = new Uint8Array(size);
    for (let i = 0; i < size; i++) { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; p[i] = x & 0xff; }
    if (size >= 4) new DataView(p.buffer).setUint32(0, k); // never two alike
    out.push(p);
  }
  return out;
}
const PAYLOADS = makePayloads(opts.size);

function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

class IntegrityError extends Error {}
function mismatch(variant, i, sent, got) {
  const hex = (u) => Buffer.from(u.buffer, u.byteOffset, Math.min(u.byteLength, 32)).toString("hex");
  throw new IntegrityError(`${variant}: echo ${i} came back wrong: sent ${sent.length} bytes ${hex(sent)}…, got ${got.length} bytes ${hex(got)}…`);
}

// ── variants ──────────────────────────────────────────────────────────

/** Runs fn with process.env[k] = env[k] for each k, restoring them after. */
function withEnv(env, fn) {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/**
 * One process of a variant: spawn, warm up, time n echoes, close. `env`
 * goes into the server's environment; with `spin`, the server's
 * getChannelStats must report that budget and adaptive setting.
 */
function runApi(path, env = {}, spin = null) {
  return (variant, n, lat, off) => {
    const api = withEnv(env, () => new API({ tsserverPath: path, cwd: REPO }));
    try {
      const pid = api.client.channel.child.pid;
      const c = api.client;
      const want = SERVER_SPIN[spin];
      if (want?.TSGO_SYNC_SPIN_US !== undefined || want?.SPINRPC_PLACEMENT !== undefined) {
        const st = JSON.parse(c.channel.requestSync("getChannelStats", ""));
        if (want.SPINRPC_PLACEMENT !== undefined && st.placement !== want.SPINRPC_PLACEMENT) {
          throw new Error(`${variant}: the server runs placement ${st.placement} (${st.placement_reason}), not ${want.SPINRPC_PLACEMENT}`);
        }
        if (want.TSGO_SYNC_SPIN_US !== undefined && String(st.budget_us) !== want.TSGO_SYNC_SPIN_US || (st.budget_us > 0 && String(Number(st.adaptive)) !== want.TSGO_SYNC_SPIN_ADAPTIVE)) {
          throw new Error(`${variant}: the server runs budget ${st.budget_us} µs, adaptive ${st.adaptive} (${st.budget_reason}), not ${spin}`);
        }
      }
      for (let i = 0; i < opts.warmup; i++) {
        const p = PAYLOADS[i % NPAYLOADS];
        const r = c.echoBinary(p);
        if (!sameBytes(r, p)) mismatch(variant, `warm-up ${i}`, p, r);
      }
      const srv0 = procCpuSeconds(pid);
      const cli0 = selfCpuSeconds();
      const w0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) {
        const p = PAYLOADS[i % NPAYLOADS];
        const t0 = process.hrtime.bigint();
        const r = c.echoBinary(p);
        const t1 = process.hrtime.bigint();
        lat[off + i] = Number(t1 - t0);
        if (!sameBytes(r, p)) mismatch(variant, i, p, r);
      }
      const wall = Number(process.hrtime.bigint() - w0) / 1e9;
      return { wall, clientCpu: selfCpuSeconds() - cli0, serverCpu: procCpuSeconds(pid) - srv0 };
    } finally {
      api.close();
    }
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
  return (variant, n, lat, off) => {
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
      return { wall, clientCpu: selfCpuSeconds() - cli0, serverCpu: procCpuSeconds(child.pid) - srv0 };
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
variants.push({ name: "tsgo", kind: "tsgo", spin: null, run: runApi(TSGO) });
if (opts.floor) {
  variants.push({ name: "floor: pipe, blocking read", kind: "floor", run: runFloor(false), floor: "blocking" });
  variants.push({ name: "floor: pipe, polled read", kind: "floor", run: runFloor(true), floor: "polled" });
}

// ── the run ───────────────────────────────────────────────────────────

for (const v of variants) {
  v.lat = new Float64Array(opts.count);
  v.filled = 0;
  v.wall = 0; v.clientCpu = 0; v.serverCpu = 0;
  v.roundP50 = [];
  v.roundP75 = [];
}
try {
  for (let r = 0; r < opts.rounds; r++) {
    const n = Math.floor(opts.count / opts.rounds) + (r < opts.count % opts.rounds ? 1 : 0);
    const order = variants.map((_, i) => variants[(i + r) % variants.length]);
    for (const v of order) {
      const res = v.run(v.name, n, v.lat, v.filled);
      const sorted = Float64Array.from(v.lat.subarray(v.filled, v.filled + n)).sort();
      v.roundP50.push(percentile(sorted, 0.5));
      v.roundP75.push(percentile(sorted, 0.75));
      v.filled += n;
      v.wall += res.wall; v.clientCpu += res.clientCpu; v.serverCpu += res.serverCpu;
    }
  }
} catch (e) {
  if (e instanceof IntegrityError) {
    console.error(`echo_latency: INTEGRITY FAILURE, no times reported: ${e.message}`);
  } else {
    console.error(`echo_latency: failed: ${e.stack || e}`);
  }
  process.exit(1);
}

// ── report ────────────────────────────────────────────────────────────

/** Nearest-rank percentile of a sorted array. */
function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
const us = (ns) => (ns / 1000).toFixed(ns < 100_000 ? 2 : 1);

for (const v of variants) {
  const s = v.lat.sort();
  let sum = 0;
  for (const x of s) sum += x;
  v.stats = { n: s.length, mean: sum / s.length, p50: percentile(s, 0.5), p75: percentile(s, 0.75), p99: percentile(s, 0.99), max: s[s.length - 1] };
}
const floorBlocking = variants.find((v) => v.floor === "blocking");
const floorPolled = variants.find((v) => v.floor === "polled");
const ratio = (a, b) => (b > 0 ? (a / b).toFixed(2) : "n/a");

const spinEnv = ["TSGO_SYNC_SPIN_US", "TSGO_SYNC_SPIN_ADAPTIVE"].filter((k) => process.env[k] !== undefined).map((k) => `${k}=${process.env[k]}`);
const perRound = Math.floor(opts.count / opts.rounds);
console.log(`## echo_latency: size=${opts.size} B, count=${opts.count} per variant, rounds=${opts.rounds} (~${perRound} timed echoes per process), warm-up=${opts.warmup} per process`);
console.log("");
console.log(`client: @typescript/native-preview ${clientVersion} sync client (echoBinary) on node ${process.version}; ` +
  `${cpus().length} CPUs; server spin settings: ${opts.serverSpin ? `per variant (--server-spin ${opts.serverSpin.join(",")})` : spinEnv.length ? spinEnv.join(" ") : "defaults"}`);
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
const tsgo = variants.find((v) => v.kind === "tsgo");
const ts = tsgo.stats;
/** Median of a list of numbers. */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
/** Round-by-round comparison with tsgo: the rounds ran side by side, so the
 * paired ratio cancels the drift of a shared machine between rounds. */
function pairedRatios(v) {
  const p50 = v.roundP50.map((x, r) => x / tsgo.roundP50[r]);
  const p75 = v.roundP75.map((x, r) => x / tsgo.roundP75[r]);
  return { p50: median(p50), p75: median(p75), worst: Math.max(...v.roundP50), tsgoWorst: Math.max(...tsgo.roundP50) };
}
console.log("");
for (const v of variants.filter((x) => x.kind === "spinrpc")) {
  const r = pairedRatios(v);
  v.paired = r;
  console.log(`${v.name} / tsgo, median of ${opts.rounds} per-round ratios: p50 ${r.p50.toFixed(2)}, p75 ${r.p75.toFixed(2)}; ` +
    `worst round p50 ${us(r.worst)} µs against tsgo's ${us(r.tsgoWorst)} µs; pooled p50 ${ratio(v.stats.p50, ts.p50)}, p75 ${ratio(v.stats.p75, ts.p75)} (below 1 = spinrpc-server faster)`);
}
console.log("");
console.log("Server CPU is the peer process's CPU time over the timed region (/proc/PID/task/*/schedstat, ns); client CPU is this Node process's. " +
  "All replies were checked byte for byte.");

if (opts.json) {
  const out = {
    tool: "bench/node/echo_latency.mjs",
    client: `@typescript/native-preview ${clientVersion} sync client (echoBinary) on node ${process.version}`,
    options: { count: opts.count, size: opts.size, rounds: opts.rounds, warmup: opts.warmup, serverSpin: opts.serverSpin },
    spinEnv: spinEnv,
    variants: variants.map((v) => ({
      name: v.name, kind: v.kind, spin: v.spin ?? null, floor: v.floor ?? null,
      n: v.stats.n, mean_ns: v.stats.mean, p50_ns: v.stats.p50, p75_ns: v.stats.p75, p99_ns: v.stats.p99, max_ns: v.stats.max,
      client_cpu_s: v.clientCpu, server_cpu_s: v.serverCpu, wall_s: v.wall, round_p50_ns: v.roundP50, round_p75_ns: v.roundP75,
      paired_vs_tsgo: v.paired ?? null,
    })),
  };
  writeFileSync(opts.json, JSON.stringify(out, null, 2) + "\n");
}
