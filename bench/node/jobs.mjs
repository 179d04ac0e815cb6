// The measured work of bench/node/echo_latency.mjs, one process of one
// variant at a time: a job runs the real TypeScript sync client (`API`, the
// sync API of the version echo_latency.mjs's --ts picks: typescript-7.0/
// unstable/sync, typescript-7.1-dev/sync, …) against one server and returns
// its figures. The pure-JS channel's jobs run inside echo_latency.mjs; the
// binding's run in a child Node started with `--import node/register.mjs`
// (bench/node/job_child.mjs), the way a user runs it, so the module graph
// of each is the one its users get.

import { procCpuSeconds, selfCpuSeconds } from "./proc_cpu.mjs";

/** Deterministic payloads of `size` bytes, distinct so a stale reply shows. */
export const NPAYLOADS = 64;
export function makePayloads(size) {
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

export function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/** A reply that differs from what was sent: no time may be reported. */
export class IntegrityError extends Error {}
export function mismatch(variant, i, sent, got) {
  const hex = (u) => Buffer.from(u.buffer, u.byteOffset, Math.min(u.byteLength, 32)).toString("hex");
  throw new IntegrityError(`${variant}: echo ${i} came back wrong: sent ${sent.length} bytes ${hex(sent)}…, got ${got.length} bytes ${hex(got)}…`);
}

/** Runs fn with process.env[k] = env[k] for each k, restoring them after. */
export function withEnv(env, fn) {
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

/** The server's pid behind an API: the TS 7 channel's ChildProcess, or spinrpc's `pid`. */
export const serverPid = (api) => api.client.channel.child?.pid ?? api.client.channel.pid;

/** Opens the API on `server` with `env` in the server's environment. */
const openApi = (API, server, env = {}) => withEnv(env, () => new API({ tsserverPath: server, cwd: process.cwd() }));

/**
 * latency: `warmup` untimed echoes, then n timed back-to-back echoBinary
 * calls of `size` bytes. `check(api)` may verify the server's settings.
 * Returns { lat: ns per echo, wall, clientCpu, serverCpu } (seconds).
 */
export function latencyJob(API, { variant, server, env, n, warmup, size }, check = null) {
  const payloads = makePayloads(size);
  const api = openApi(API, server, env);
  try {
    const pid = serverPid(api);
    const c = api.client;
    if (check) check(api);
    for (let i = 0; i < warmup; i++) {
      const p = payloads[i % NPAYLOADS];
      const r = c.echoBinary(p);
      if (!sameBytes(r, p)) mismatch(variant, `warm-up ${i}`, p, r);
    }
    const lat = new Float64Array(n);
    const srv0 = procCpuSeconds(pid);
    const cli0 = selfCpuSeconds();
    const w0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const p = payloads[i % NPAYLOADS];
      const t0 = process.hrtime.bigint();
      const r = c.echoBinary(p);
      const t1 = process.hrtime.bigint();
      lat[i] = Number(t1 - t0);
      if (!sameBytes(r, p)) mismatch(variant, i, p, r);
    }
    const wall = Number(process.hrtime.bigint() - w0) / 1e9;
    return { lat, wall, clientCpu: selfCpuSeconds() - cli0, serverCpu: procCpuSeconds(pid) - srv0 };
  } finally {
    api.close();
  }
}

// Sleeps without the event loop and without CPU, as a tool that does other
// work between its questions.
const sleepCell = new Int32Array(new SharedArrayBuffer(4));
const sleepMs = (ms) => Atomics.wait(sleepCell, 0, 0, ms);

/**
 * sparse: n echoes of `size` bytes, one every `intervalMs` (the request time
 * included), after a few warm-up ones. Returns { clientCpu, serverCpu, n }:
 * the CPU seconds both sides spent over the n requests and the idle gaps.
 */
export function sparseJob(API, { variant, server, env, n, size, intervalMs }) {
  const payloads = makePayloads(size);
  const api = openApi(API, server, env);
  try {
    const pid = serverPid(api);
    for (let i = 0; i < 5; i++) api.client.echoBinary(payloads[i % NPAYLOADS]);
    const srv0 = procCpuSeconds(pid);
    const cli0 = selfCpuSeconds();
    let next = performance.now();
    for (let i = 0; i < n; i++) {
      next += intervalMs;
      const p = payloads[i % NPAYLOADS];
      const r = api.client.echoBinary(p);
      if (!sameBytes(r, p)) mismatch(variant, i, p, r);
      const wait = next - performance.now();
      if (wait > 0) sleepMs(wait);
    }
    return { clientCpu: selfCpuSeconds() - cli0, serverCpu: procCpuSeconds(pid) - srv0, n };
  } finally {
    api.close();
  }
}

/**
 * spawn: k times, `new API(...)` (which constructs the channel and spawns
 * the server) and one echo, timed together; close() is not timed.
 * Returns { ns: [k times], ctorNs: [k times of new API alone] }: the server's
 * own start-up is in the first, the client's part is the second.
 */
export function spawnJob(API, { variant, server, env, k }) {
  const ns = [];
  const ctorNs = [];
  for (let i = 0; i < k; i++) {
    const t0 = process.hrtime.bigint();
    const api = openApi(API, server, env);
    ctorNs.push(Number(process.hrtime.bigint() - t0));
    let r;
    try {
      r = api.client.echo("first");
      ns.push(Number(process.hrtime.bigint() - t0));
    } finally {
      api.close();
    }
    if (r !== "first") throw new IntegrityError(`${variant}: first echo came back as ${JSON.stringify(r).slice(0, 40)}`);
  }
  return { ns, ctorNs };
}

/**
 * The spawn floor of one server executable: k times, spinrpc's binding
 * (`SyncRpcChannel`) starts `server --version` (spinrpc-server, or the
 * TypeScript version's own server: each prints a line and exits without
 * reading), and close() reaps it; timed together, the new channel alone in
 * ctorNs. What that executable costs here before it does anything of its
 * own: posix_spawn from this Node process, exec, the loader and the
 * runtime's start (a Go runtime for tsc and tsgo), one write, exit. No
 * first reply of that server can come sooner (docs/NODE.md, "Spawn to
 * first reply").
 */
export function spawnFloorJob(SyncRpcChannel, { server, k }) {
  const ns = [];
  const ctorNs = [];
  for (let i = 0; i < k; i++) {
    const t0 = process.hrtime.bigint();
    const channel = new SyncRpcChannel(server, ["--version"]);
    ctorNs.push(Number(process.hrtime.bigint() - t0));
    channel.close();
    ns.push(Number(process.hrtime.bigint() - t0));
  }
  return { ns, ctorNs };
}

/** The large payloads: ASCII text (JSON-like) and random bytes. */
function largePayload(kind, bytes) {
  if (kind === "string") return "0123456789abcdef{\"k\":[1,2]}\n".repeat(Math.ceil(bytes / 28)).slice(0, bytes);
  const p = Buffer.allocUnsafeSlow(bytes);
  let x = 0x9e3779b9;
  for (let i = 0; i < bytes; i += 4) { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; p.writeUInt32LE(x, i); }
  return new Uint8Array(p.buffer, 0, bytes);
}

/**
 * large: for each size (MiB) and kind (string: echo, binary: echoBinary),
 * `warmup` untimed echoes (at least one, compared), then `reps` timed ones,
 * each reply compared after its time is taken. Returns
 * { ns: { "1 MiB string": [reps times], ... }, faults: { same keys: the
 * process's minor page faults during each timed echo } }: whether an echo
 * landed on fresh memory is most of its time (docs/NODE.md, "Large payloads").
 */
export function largeJob(API, { variant, server, env, mib, reps, warmup = 1 }) {
  const api = openApi(API, server, env);
  const ns = {};
  const faults = {};
  try {
    for (const m of mib) {
      for (const kind of ["string", "binary"]) {
        const payload = largePayload(kind, m << 20);
        const echo = (p) => (kind === "string" ? api.client.echo(p) : api.client.echoBinary(p));
        const same = (r) => (kind === "string" ? r === payload : sameBytes(r, payload));
        for (let i = 0; i < Math.max(1, warmup); i++) {
          if (!same(echo(payload))) throw new IntegrityError(`${variant}: ${m} MiB ${kind} echo came back wrong`);
        }
        const key = `${m} MiB ${kind}`;
        ns[key] = [];
        faults[key] = [];
        for (let i = 0; i < reps; i++) {
          // getrusage(2) around the timed region, not inside it.
          const f0 = process.resourceUsage().minorPageFault;
          const t0 = process.hrtime.bigint();
          const r = echo(payload);
          ns[key].push(Number(process.hrtime.bigint() - t0));
          faults[key].push(process.resourceUsage().minorPageFault - f0);
          if (!same(r)) throw new IntegrityError(`${variant}: ${key} echo ${i} came back wrong`);
        }
      }
    }
    return { ns, faults };
  } finally {
    api.close();
  }
}

export const JOBS = { latency: latencyJob, sparse: sparseJob, spawn: spawnJob, large: largeJob };
/** Jobs that take spinrpc's SyncRpcChannel class instead of the API. */
export const BINDING_JOBS = { spawnFloor: spawnFloorJob };
