// Shared helpers for the interop suite: where the two peers live, MessagePack
// frame builders for the sync protocol, and a frame parser for the replies.
// Not a test file itself (node --test only picks up *.test.mjs here).

import { spawn } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const INTEROP_DIR = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(INTEROP_DIR, "..", "..");

export const DEFAULT_SPINRPC = join(REPO_ROOT, "build", "bin", "spinrpc-server");
export const DEFAULT_TSGO = join(
  INTEROP_DIR, "node_modules", "@typescript", `native-preview-${process.platform}-${process.arch}`, "lib", "tsgo");

/** The two peers, in a fixed order: ours first, the reference second. */
export function peers() {
  return [
    { name: "spinrpc-server", path: process.env.SPINRPC_SERVER || DEFAULT_SPINRPC },
    { name: "tsgo", path: process.env.SPINRPC_TSGO || DEFAULT_TSGO },
  ];
}

export function spinrpcPeer() { return peers()[0]; }
/** A version's own server (versions.mjs entry `v`), as a peer. */
export function versionPeer(v) { return { name: `${v.id}'s server`, path: v.server, real: true }; }
export function tsgoPeer() { return peers()[1]; }
/** tests/peers' scripted_peer, built beside the spinrpc-server under test. */
export function scriptedPeer() {
  return { name: "scripted_peer", path: join(dirname(spinrpcPeer().path), "scripted_peer") };
}
/** tests/peers' scripted_server (spinrpc-server's command line, --async too), beside it as well. */
export function scriptedServer() {
  return { name: "scripted_server", path: join(dirname(spinrpcPeer().path), "scripted_server") };
}

/**
 * Everything the sync clients do is synchronous: a hung server would block
 * the event loop, and node:test's timeouts could never fire. A watchdog
 * process SIGKILLs server `pid` after `seconds` (SPINRPC_INTEROP_WATCHDOG,
 * default 120); the client then sees EOF and the test fails instead of
 * hanging. Returns a function that stops the watchdog.
 */
export function watchdog(pid, seconds = Number(process.env.SPINRPC_INTEROP_WATCHDOG || 120)) {
  const dog = spawn("sh", ["-c", `sleep ${seconds} & wait $!; kill -9 ${pid} 2>/dev/null`], {
    stdio: "ignore",
    detached: true,
  });
  dog.unref();
  return () => {
    try { process.kill(-dog.pid, "SIGKILL"); } catch { /* already gone */ }
  };
}

/** Whether process `pid` has ended (reaped, or a zombie nobody reaped yet). */
export function gone(pid) {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if (e.code === "ESRCH") return true;
    throw e;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].startsWith("Z");
  } catch {
    return true; // gone between the two looks
  }
}

/**
 * Throws (so the calling test fails, never skips) when a peer's binary is
 * missing or not executable, with a message that says how to get it.
 */
export function requireBinary(peer) {
  const hint = peer.name === "tsgo" || peer.real
    ? "run `npm ci` in tests/interop (or scripts/setup.sh), or set SPINRPC_TSGO"
    : "build it with scripts/build.sh (cmake -S . -B build -G Ninja && ninja -C build), or set SPINRPC_SERVER";
  if (!existsSync(peer.path)) {
    throw new Error(`${peer.name} binary not found at ${peer.path}: ${hint}`);
  }
  try {
    accessSync(peer.path, constants.X_OK);
  } catch {
    throw new Error(`${peer.name} binary at ${peer.path} is not executable: ${hint}`);
  }
}

// ── MessagePack framing ────────────────────────────────────────────────

export const T = { Request: 1, CallResponse: 2, CallError: 3, Response: 4, Error: 5, Call: 6 };

const toBuf = (x) => (typeof x === "string" ? Buffer.from(x, "utf8") : Buffer.from(x));

/** A bin value with the smallest header (what a conforming writer emits). */
export function bin(data) {
  const b = toBuf(data);
  if (b.length < 0x100) return Buffer.concat([Buffer.from([0xc4, b.length]), b]);
  if (b.length < 0x10000) return Buffer.concat([bin16Header(b.length), b]);
  return Buffer.concat([bin32Header(b.length), b]);
}
/** A bin value forced into bin8/bin16/bin32 (readers must accept any that fits). */
export const bin8 = (data) => { const b = toBuf(data); return Buffer.concat([Buffer.from([0xc4, b.length]), b]); };
export const bin16 = (data) => { const b = toBuf(data); return Buffer.concat([bin16Header(b.length), b]); };
export const bin32 = (data) => { const b = toBuf(data); return Buffer.concat([bin32Header(b.length), b]); };
export function bin16Header(len) { const h = Buffer.alloc(3); h[0] = 0xc5; h.writeUInt16BE(len, 1); return h; }
export function bin32Header(len) { const h = Buffer.alloc(5); h[0] = 0xc6; h.writeUInt32BE(len >>> 0, 1); return h; }

/** [type, name, payload] with a fixint type and minimal bin headers. */
export function frame(type, name, payload = "") {
  return Buffer.concat([Buffer.from([0x93, type]), bin(name), bin(payload)]);
}
export const request = (name, payload = "") => frame(T.Request, name, payload);

export const bytes = (...parts) =>
  Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : typeof p === "string" ? Buffer.from(p, "utf8") : Buffer.from(p))));

/**
 * Parse a server's stdout into frames. Returns { frames, rest } where rest is
 * the unparsed tail (should be empty). Each frame is { type, name, payload,
 * raw } with Buffers. Accepts every header form so that a writer that is not
 * minimal still parses (the byte comparison catches that separately).
 */
export function parseFrames(buf) {
  const frames = [];
  let off = 0;
  const need = (n) => { if (off + n > buf.length) throw new RangeError("truncated"); };
  const readBin = () => {
    need(1);
    const m = buf[off++];
    let len;
    if (m === 0xc4) { need(1); len = buf[off]; off += 1; }
    else if (m === 0xc5) { need(2); len = buf.readUInt16BE(off); off += 2; }
    else if (m === 0xc6) { need(4); len = buf.readUInt32BE(off); off += 4; }
    else throw new TypeError(`not a bin marker: 0x${m.toString(16)}`);
    need(len);
    const v = buf.subarray(off, off + len);
    off += len;
    return v;
  };
  while (off < buf.length) {
    const start = off;
    try {
      need(1);
      if (buf[off++] !== 0x93) throw new TypeError("not 0x93");
      need(1);
      let type = buf[off++];
      if (type === 0xcc) { need(1); type = buf[off++]; }
      const name = readBin();
      const payload = readBin();
      frames.push({ type, name, payload, raw: buf.subarray(start, off) });
    } catch {
      return { frames, rest: buf.subarray(start) };
    }
  }
  return { frames, rest: Buffer.alloc(0) };
}

/** Short printable description of a byte buffer for assertion messages. */
export function hexdump(buf, max = 256) {
  const b = Buffer.from(buf);
  const shown = b.subarray(0, max).toString("hex").replace(/(..)/g, "$1 ").trim();
  return b.length > max ? `${shown} … (${b.length} bytes)` : shown || "(empty)";
}

/**
 * Starts `peer` serving one client on a Unix socket (`--pipe`), connects,
 * sends `input`, and closes without reading anything back: the replies stay
 * unread in the socket, so the server's next read finds the connection
 * reset (ECONNRESET), not a clean EOF. Resolves to the server's
 * { status, signal, stderr, socketLeft }. The socket is paused before it
 * connects, so Node never reads from it. With `pipeDir` (API 7.1's layout)
 * --pipe PATH is a directory holding the socket PATH/socket.
 */
export async function closeWithRepliesUnread(peer, args, input, dir, { settleMs = 300, timeoutMs = 20_000, pipeDir = false } = {}) {
  requireBinary(peer);
  const path = join(dir, `${peer.name}-unread.sock`);
  const child = spawn(peer.path, [...args, "--pipe", path], { stdio: ["ignore", "ignore", "pipe"] });
  const err = [];
  child.stderr.on("data", (d) => err.push(d));
  const exited = new Promise((res) => child.on("close", (status, signal) => res({ status, signal })));
  const kill = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  try {
    const socket = await connectWhenListening(peer, pipeDir ? join(path, "socket") : path, { timeoutMs, paused: true });
    await new Promise((res) => socket.write(input, res));
    // Time for the replies to be written into the socket (not asserted: if
    // they were not, the close is a clean EOF and the caller's expectation
    // of tsgo's status fails loudly).
    await new Promise((res) => setTimeout(res, settleMs));
    socket.destroy();
    const { status, signal } = await exited;
    return { status, signal, stderr: Buffer.concat(err).toString("utf8"), socketLeft: existsSync(path) };
  } finally {
    clearTimeout(kill);
    child.kill("SIGKILL");
  }
}

/**
 * Connects to the Unix socket `path` that `peer` is about to listen on,
 * retrying every 20 ms until `timeoutMs`. With `paused`, the socket is
 * paused before it connects, so Node reads nothing from it until resumed.
 */
export async function connectWhenListening(peer, path, { timeoutMs = 20_000, paused = false } = {}) {
  const { createConnection } = await import("node:net");
  const deadline = Date.now() + timeoutMs;
  return new Promise((res, rej) => {
    const tryConnect = () => {
      const s = createConnection(path);
      if (paused) s.pause();
      s.once("connect", () => res(s));
      s.once("error", () => { if (Date.now() > deadline) rej(new Error(`${peer.name}: no socket at ${path}`)); else setTimeout(tryConnect, 20); });
    };
    tryConnect();
  });
}
