#!/usr/bin/env node
// async_echo: the real asynchronous client (@typescript/native-preview/
// unstable/async, vscode-jsonrpc) against spinrpc-server --async and tsgo
// --async, side by side in one run, rounds alternating (docs/ASYNC.md).
//
//   node bench/node/async_echo.mjs [--count N] [--inflight N] [--big N]
//                                  [--rounds R] [--warmup W] [--json FILE]
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
// Peers: SPINRPC_SERVER and SPINRPC_TSGO override the default paths.

import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { isDeepStrictEqual } from "node:util";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const INTEROP = join(REPO, "tests", "interop");
const SPINRPC = process.env.SPINRPC_SERVER || join(REPO, "build", "bin", "spinrpc-server");
const TSGO = process.env.SPINRPC_TSGO || join(INTEROP, "node_modules", "@typescript", "native-preview-linux-x64", "lib", "tsgo");

function usage(msg) {
  if (msg) console.error(`async_echo: ${msg}`);
  console.error("usage: node bench/node/async_echo.mjs [--count N] [--inflight N] [--big N] [--rounds R] [--warmup W] [--json FILE]");
  process.exit(2);
}
const opts = { count: 2000, inflight: 10000, big: 20, rounds: 5, warmup: 200, json: null };
{
  const argv = process.argv.slice(2);
  const keys = { "--count": "count", "--inflight": "inflight", "--big": "big", "--rounds": "rounds", "--warmup": "warmup", "--json": "json" };
  for (let i = 0; i < argv.length; i++) {
    let [k, v] = argv[i].split(/=(.*)/s, 2);
    const key = keys[k];
    if (!key) usage(`unknown argument ${argv[i]}`);
    if (v === undefined) { v = argv[++i]; if (v === undefined) usage(`${k} needs a value`); }
    if (key !== "json" && !/^\d+$/.test(v)) usage(`${k} wants a non-negative integer`);
    opts[key] = key === "json" ? v : Number(v);
  }
  if (opts.rounds < 1 || opts.count < 1) usage("--rounds and --count must be at least 1");
}

const req = createRequire(join(INTEROP, "package.json"));
const { API } = await import(pathToFileURL(req.resolve("@typescript/native-preview/unstable/async")).href);
const clientVersion = JSON.parse(readFileSync(req.resolve("@typescript/native-preview/package.json"), "utf8")).version;

/** CPU seconds of a live process: the sum of its threads' schedstat run time. */
function cpuSeconds(pid) {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try { ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]); } catch { /* thread gone */ }
  }
  return ns / 1e9;
}
const percentile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];

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

const variants = [{ name: "spinrpc-server", path: SPINRPC }, { name: "tsgo", path: TSGO }];
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

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const out = {
  tool: "bench/node/async_echo.mjs",
  client: `@typescript/native-preview ${clientVersion} async client (apiRequest) on node ${process.version}`,
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
for (const v of out.variants) {
  console.log(`${v.name}: sequential p50 ${f(v.p50_ns / 1e3)} µs p75 ${f(v.p75_ns / 1e3)} µs (per round p50 ${v.round_p50_ns.map((x) => f(x / 1e3)).join(", ")}); ` +
    `${opts.inflight} in flight: ${v.burst.map((b) => f(b.rps, 0)).join(", ")} req/s, server CPU per 1000 ${v.burst.map((b) => f(b.cpuPer1000 * 1e3, 2)).join(", ")} ms; ` +
    `${(bigBytes / 1048576).toFixed(2)} MiB echo server CPU ${v.big.map((b) => f(b.cpuPerEcho * 1e3, 2)).join(", ")} ms`);
}
console.log(`spinrpc / tsgo: sequential p50 ${f(ours.p50_ns / theirs.p50_ns, 2)}×, p75 ${f(ours.p75_ns / theirs.p75_ns, 2)}×; ` +
  `in-flight throughput ${f(ours.burst_rps_median / theirs.burst_rps_median, 2)}×, server CPU per 1000 ${f(ours.burst_cpu_per_1000_median_s / theirs.burst_cpu_per_1000_median_s, 2)}×`);
if (opts.json) writeFileSync(opts.json, JSON.stringify(out, null, 2) + "\n");
