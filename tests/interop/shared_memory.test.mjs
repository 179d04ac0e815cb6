// Shared memory through spinrpc's Node.js binding (docs/SHARED-MEMORY.md,
// docs/NODE.md "Shared memory"): the binding offers a spawned server a
// sealed memfd ring (fd 3, SPINRPC_SHM=fd:3) and moves onto it after the
// first reply if the server took it. Per version in versions.mjs:
//   - the real sync client under the register hook against spinrpc-server:
//     both ends say "shared memory" after the first request (a small one, or
//     a 1 MiB one read into a reply Buffer), and every answer of a fixed
//     script is byte-identical to the same script on pipes (SPINRPC_SHM=off;
//     on the 7.1 nightly also createTransport({ sharedMemory: false }));
//   - the same client against the version's own server (tsgo/tsc), which
//     never takes the offer: it stays on pipes, says why, and works;
//   - the real async client against spinrpc-server --async: never on shared
//     memory, even when its server is handed a real offer.
// Then the class: the sharedMemory option (a non-boolean is a TypeError),
// and a server SIGKILLed while the channel is on shared memory, which must
// give the binding's typed error (each case in a Node of its own, whose
// timeout is a hang guard, never a timing assertion).

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO_ROOT, parseFrames, requireBinary, scriptedServer, spinrpcPeer, versionPeer, watchdog } from "./peers.mjs";
import { VERSIONS } from "./versions.mjs";

const INDEX = join(REPO_ROOT, "node", "index.mjs");
const REGISTER = join(REPO_ROOT, "node", "register.mjs");

// The hook first, then the APIs: each sync client's channel is spinrpc's.
await import(pathToFileURL(REGISTER).href);
const APIS = await Promise.all(VERSIONS.map(async (ts) => ({
  ts,
  API: (await import(ts.sync)).API,
  AsyncAPI: (await import(ts.async)).API,
})));
const { SyncRpcChannel, createTransport } = await import(pathToFileURL(INDEX).href);

// The binding offers unless SPINRPC_SHM=off: these tests set it themselves.
const SHM_WITHOUT = process.env.SPINRPC_SHM;
delete process.env.SPINRPC_SHM;
after(() => { if (SHM_WITHOUT !== undefined) process.env.SPINRPC_SHM = SHM_WITHOUT; });

const scratch = mkdtempSync(join(tmpdir(), "spinrpc-shm-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

const TOOK = /^shared memory: the client offered a ring and the server took it$/;
const NOT_TAKEN = /^pipes: the server did not take the shared-memory offer/;
const OFF = /^pipes: shared memory is off/;

/** Deterministic pseudo-random bytes (xorshift32). */
function pseudoRandomBytes(n, seed) {
  const out = Buffer.allocUnsafe(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

/** What an API's client sends its requests through: its channel, or (7.1 nightly) its transport. */
const requester = (api) => api.client.transport ?? api.client.channel;
/** spinrpc's channel under an API: that, or createTransport's channel (null until its first request). */
const channelOf = (api) => (typeof requester(api).stats === "function" ? requester(api) : requester(api).channel);

/**
 * Records every reply the API's channel gives (a copy of the bytes, or the
 * error's message and code), by wrapping its request methods on the
 * instance as tools do. getChannelStats is left out: its counters differ
 * from run to run.
 */
function recordReplies(api) {
  const log = [];
  const channel = requester(api);
  for (const name of ["requestSync", "requestBinarySync"]) {
    const original = channel[name];
    channel[name] = function (method, payload) {
      if (method === "getChannelStats") return original.call(this, method, payload);
      try {
        const reply = original.call(this, method, payload);
        log.push({ name, method, reply: typeof reply === "string" ? reply : Buffer.from(reply) });
        return reply;
      } catch (e) {
        log.push({ name, method, error: e.message, code: e.code });
        throw e;
      }
    };
  }
  return log;
}

/**
 * The same calls, in the same order, on any API: what the client answers is
 * checked too. `afterFirst()` runs after the first request.
 */
function script(api, first, afterFirst) {
  const { client } = api;
  if (first === "big") {
    const data = pseudoRandomBytes(1 << 20, 1);
    assert.ok(Buffer.from(client.echoBinary(new Uint8Array(data))).equals(data), "first, 1 MiB binary echo");
  } else {
    assert.equal(client.echo("first"), "first");
  }
  afterFirst();
  const transport = channelOf(api).stats().transport;
  assert.equal(client.echo("héllo ✓ 😀 \u0000 end"), "héllo ✓ 😀 \u0000 end");
  assert.equal(client.echo(""), "");
  assert.equal(client.echoBinary(new Uint8Array(0)).length, 0);
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  assert.ok(Buffer.from(client.echoBinary(new Uint8Array(all))).equals(all));
  for (const n of [254, 255, 256, 65535, 65536, 65537, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 << 20, 16 << 20]) {
    const data = pseudoRandomBytes(n, n);
    assert.ok(Buffer.from(client.echoBinary(new Uint8Array(data))).equals(data), `${n}-byte echo`);
  }
  const text = "héllo ✓ 😀 ".repeat(1 << 18);  // 4.5 MiB of UTF-8: more than the ring holds
  assert.ok(client.echo(text) === text, "big string echo");
  client.apiRequest("initialize", null);
  assert.throws(() => client.apiRequest("nope", null), /unknown API method "nope"/);
  for (let i = 0; i < 2000; i++) {
    const payload = `#${i} ${"x".repeat(i % 97)}`;
    if (client.echo(payload) !== payload) assert.fail(`echo ${i}`);
  }
  requester(api).requestSync("getServerTiming", "");
  return transport;
}

/** Runs the script on `open()`'s API; returns the log, and both ends' transport after the first request. */
function run(open, first) {
  const api = open();
  // createTransport's server starts at the first request: its watchdog then.
  let stop = null;
  const guard = () => { if (stop === null && channelOf(api)) stop = watchdog(channelOf(api).pid); };
  guard();
  try {
    const log = recordReplies(api);
    const transport = script(api, first, guard);
    const client = channelOf(api).stats();
    const server = JSON.parse(requester(api).requestSync("getChannelStats", ""));
    return { log, transport, client, server };
  } finally {
    stop?.();
    api.close();
  }
}

function assertSameLog(got, want, what) {
  assert.equal(got.length, want.length, `${what}: as many replies`);
  got.forEach((entry, i) => {
    const other = want[i];
    const where = `${what}: reply ${i} (${entry.method})`;
    assert.deepEqual({ name: entry.name, method: entry.method, error: entry.error, code: entry.code },
      { name: other.name, method: other.method, error: other.error, code: other.code }, where);
    if (Buffer.isBuffer(entry.reply)) assert.ok(Buffer.isBuffer(other.reply) && entry.reply.equals(other.reply), `${where}: bytes differ`);
    else assert.ok(entry.reply === other.reply, `${where}: text differs`);
  });
}

/** `fn()` with SPINRPC_SHM=off in this process's environment (what a hook user sets). */
function withShmOff(fn) {
  process.env.SPINRPC_SHM = "off";
  try {
    return fn();
  } finally {
    delete process.env.SPINRPC_SHM;
  }
}

for (const { ts, API, AsyncAPI } of APIS) {
  const label = `${ts.name}@${ts.version}`;
  const server = spinrpcPeer();

  describe(`${label} sync client through the binding against spinrpc-server`, () => {
    for (const first of ["small", "big"]) {
      test(`on shared memory after the first request (${first}); every answer byte-identical to pipes under SPINRPC_SHM=off`, () => {
        requireBinary(server);
        const open = () => new API({ tsserverPath: server.path, cwd: scratch });
        const shm = run(open, first);
        assert.equal(shm.transport, "shared memory", "the client, after the first request");
        assert.match(shm.client.transport_reason, TOOK);
        assert.equal(shm.server.transport, "shared memory", "the server");
        assert.match(shm.server.transport_reason, TOOK);
        for (const counter of ["ring_sleeps", "ring_wakes", "ring_full_waits"]) {
          assert.equal(typeof shm.client[counter], "number", counter);
        }
        const pipes = withShmOff(() => run(open, first));
        assert.equal(pipes.transport, "descriptor");
        assert.match(pipes.client.transport_reason, OFF);
        assert.equal(pipes.server.transport, "descriptor");
        assert.equal(pipes.server.transport_reason, "pipes: SPINRPC_SHM=off");
        assertSameLog(shm.log, pipes.log, label);
      });
    }

    if (ts.transport) {
      test("createTransport({ sharedMemory: false }) stays on pipes; the answers are the same as with shared memory", () => {
        requireBinary(server);
        const open = (options) => () => new API({
          transport: createTransport({ typescript: ts.dir, tsserverPath: server.path, cwd: scratch, ...options }),
        });
        const shm = run(open({}), "small");
        assert.equal(shm.transport, "shared memory");
        assert.equal(shm.server.transport, "shared memory");
        const pipes = run(open({ sharedMemory: false }), "small");
        assert.equal(pipes.transport, "descriptor");
        assert.match(pipes.client.transport_reason, OFF);
        assert.equal(pipes.server.transport, "descriptor");
        assert.match(pipes.server.transport_reason, /^pipes: no shared memory offered/);
        assertSameLog(shm.log, pipes.log, `${label}, createTransport`);
      });
    }
  });

  describe(`${label} sync client through the binding, a wrapper between it and spinrpc-server`, () => {
    // A logging wrapper ("$@" | tee LOG) and a Node relay: each is the
    // binding's child, and spinrpc-server its child, inheriting fd 3 and the
    // offer. Only the binding's own child may take it: the server stays on
    // its pipes without a word, and the wrapper sees every reply.
    const relay = join(scratch, "relay.mjs");
    writeFileSync(relay, `import { appendFileSync } from "node:fs";
import { spawn } from "node:child_process";
const [log, file, ...args] = process.argv.slice(2);
const child = spawn(file, args, { stdio: ["pipe", "pipe", "inherit"] });
process.stdin.pipe(child.stdin);
child.stdout.on("data", (d) => { appendFileSync(log, d); process.stdout.write(d); });
child.on("exit", (code) => process.exit(code ?? 128));
`);
    const wrappers = {
      "tee": (log, err) => `${JSON.stringify(server.path)} "$@" 2>${JSON.stringify(err)} | tee ${JSON.stringify(log)}`,
      "Node relay": (log, err) =>
        `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(relay)} ${JSON.stringify(log)} ${JSON.stringify(server.path)} "$@" 2>${JSON.stringify(err)}`,
    };
    for (const [kind, body] of Object.entries(wrappers)) {
      test(`${kind}: the server behind it stays on pipes in silence, every reply goes through the wrapper`, () => {
        requireBinary(server);
        const dir = mkdtempSync(join(scratch, "wrapper-"));
        const [path, log, err] = ["server", "log", "err"].map((name) => join(dir, name));
        writeFileSync(path, `#!/bin/sh\n${body(log, err)}\n`);
        chmodSync(path, 0o755);
        const api = new API({ tsserverPath: path, cwd: scratch });
        let stop = null;
        let stats;
        try {
          assert.equal(api.client.echo("first"), "first");
          const channel = channelOf(api);
          stop = watchdog(channel.pid);
          assert.equal(channel.stats().transport, "descriptor");
          assert.match(channel.stats().transport_reason, NOT_TAKEN);
          stats = JSON.parse(requester(api).requestSync("getChannelStats", ""));
          const data = pseudoRandomBytes(3 << 20, 9);
          assert.ok(Buffer.from(api.client.echoBinary(new Uint8Array(data))).equals(data));
          assert.equal(api.client.echo("last"), "last");
        } finally {
          stop?.();
          api.close();
        }
        assert.equal(stats.transport, "descriptor");
        assert.match(stats.transport_reason, new RegExp(`^pipes: the shared memory offered is for a child of pid ${process.pid}, `));
        // The log is exactly the replies, in order: initialize (the client's
        // own), the echoes and the stats between them.
        const { frames, rest } = parseFrames(readFileSync(log));
        assert.equal(rest.length, 0, "nothing in the log but whole frames");
        const names = frames.map((f) => f.name.toString());
        assert.deepEqual(names.slice(-4), ["echo", "getChannelStats", "echo", "echo"]);
        assert.equal(frames.at(-1).payload.toString(), "last");
        assert.equal(frames.at(-4).payload.toString(), "first");
        assert.equal(readFileSync(err, "utf8"), "", "no line from the server behind the wrapper");
      });
    }
  });

  describe(`${label} sync client through the binding against its own server`, () => {
    test("the offer is not taken: the channel stays on pipes, says why, and works", () => {
      const own = versionPeer(ts);
      requireBinary(own);
      const api = new API({ cwd: scratch });
      const stop = watchdog(api.client.channel.pid);
      try {
        const channel = api.client.channel;
        assert.ok(channel instanceof SyncRpcChannel);
        assert.equal(api.client.echo("first"), "first");
        const stats = channel.stats();
        assert.equal(stats.transport, "descriptor");
        assert.match(stats.transport_reason, NOT_TAKEN);
        const data = pseudoRandomBytes(3 << 20, 5);
        assert.ok(Buffer.from(api.client.echoBinary(new Uint8Array(data))).equals(data));
        for (let i = 0; i < 200; i++) assert.equal(api.client.echo(`n${i}`), `n${i}`);
        assert.throws(() => api.client.apiRequest("nope", null), /unknown API method "nope"/);
        assert.equal(channel.stats().transport, "descriptor");
      } finally {
        stop();
        api.close();
      }
    });
  });

  describe(`${label} async client against spinrpc-server --async`, () => {
    test("never on shared memory: nothing offered by its own spawn, and a real offer refused", async () => {
      requireBinary(server);
      // A real ring to offer: the memfd a binding channel gave its child
      // (cat, which leaves it alone), reopened through /proc by a wrapper
      // that execs spinrpc-server with it as fd 3, as the binding would.
      const holder = new SyncRpcChannel("/bin/sh", ["-c", "exec cat"]);
      const wrapper = join(scratch, `offering-${ts.id}.sh`);
      // The offer names the wrapper's parent (this process, which its exec
      // leaves the server's parent) and the memfd's device and inode.
      writeFileSync(wrapper, `#!/bin/sh\nexec 3<>/proc/${holder.pid}/fd/3\n` +
        `SPINRPC_SHM="fd:3,parent:$PPID,inode:$(stat -L -c %d:%i /proc/self/fd/3)" exec ${JSON.stringify(server.path)} "$@"\n`);
      chmodSync(wrapper, 0o755);
      try {
        for (const [path, reason] of [
          [server.path, /^pipes: no shared memory offered/],
          [wrapper, /^pipes: --async stays on its streams$/],
        ]) {
          const api = new AsyncAPI({ tsserverPath: path, cwd: scratch });
          try {
            const big = { text: "y".repeat(3 << 20) };
            assert.deepEqual(await api.client.apiRequest("echo", big), big);
            const stats = await api.client.apiRequest("getChannelStats", null);
            assert.equal(stats.transport, "descriptor", path);
            assert.match(stats.transport_reason, reason, path);
            assert.equal(stats.ring_sleeps + stats.ring_wakes + stats.ring_full_waits, 0, path);
          } finally {
            await api.close();
          }
        }
      } finally {
        holder.close();
      }
    });
  });
}

describe("SyncRpcChannel: the sharedMemory option", () => {
  test("false stays on pipes, true (the default) moves after the first reply", () => {
    const server = spinrpcPeer();
    requireBinary(server);
    for (const [options, transport, reason] of [
      [undefined, "shared memory", TOOK],
      [{ sharedMemory: true }, "shared memory", TOOK],
      [{ sharedMemory: false }, "descriptor", OFF],
      [{ sharedMemory: true, env: { ...process.env, SPINRPC_SHM: "off" } }, "shared memory", TOOK],
      [{ env: { ...process.env, SPINRPC_SHM: "off" } }, "descriptor", OFF],
    ]) {
      const what = JSON.stringify(options && { ...options, env: options.env && "SPINRPC_SHM=off" });
      const channel = new SyncRpcChannel(server.path, ["--api"], options);
      const stop = watchdog(channel.pid);
      try {
        assert.equal(channel.stats().transport, "descriptor", `${what}: before the first reply`);
        assert.equal(channel.requestSync("echo", "x"), "x");
        assert.equal(channel.stats().transport, transport, what);
        assert.match(channel.stats().transport_reason, reason, what);
        assert.equal(JSON.parse(channel.requestSync("getChannelStats", "")).transport, transport, `${what}: the server`);
      } finally {
        stop();
        channel.close();
      }
    }
  });

  test("a value that is not a boolean is a TypeError naming the option; the unknown-option message lists it", () => {
    const path = spinrpcPeer().path;
    for (const value of [1, 0, "true", "false", null, {}, [], () => true]) {
      assert.throws(() => new SyncRpcChannel(path, ["--api"], { sharedMemory: value }),
        { name: "TypeError", message: "SyncRpcChannel: option sharedMemory must be a boolean" }, String(value));
    }
    assert.throws(() => new SyncRpcChannel(path, ["--api"], { sharedmemory: false }),
      { name: "TypeError", message: /^SyncRpcChannel: unknown option sharedmemory \(.*\bsharedMemory\b.*\)$/ });
  });
});

describe("a server SIGKILLed while the channel is on shared memory", () => {
  // Each case in a Node of its own: a hang there is a timeout here (the
  // hang guard), not a test run that never ends. The case prints the
  // transport before the kill and the request's error.
  const runCase = (body) => {
    const program = `
      import { spawn } from "node:child_process";
      import { SyncRpcChannel } from ${JSON.stringify(pathToFileURL(INDEX).href)};
      const killLater = (pid) => spawn("/bin/sh", ["-c", "sleep 0.1; kill -9 " + pid], { detached: true, stdio: "ignore" }).unref();
      const out = {};
      const shape = (e) => ({ name: e.name, message: e.message, code: e.code, exitCode: e.exitCode, signal: e.signal });
      ${body}
      console.log(JSON.stringify(out));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", program],
      { encoding: "utf8", timeout: 120_000, killSignal: "SIGKILL" });
    assert.equal(r.signal, null, `the case hung (killed after 120 s): ${r.stderr}`);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout.trim());
  };
  const assertKilled = (out, name) => {
    assert.equal(out.transport, "shared memory", "on shared memory before the kill");
    assert.deepEqual(out.error, {
      name: "Error", message: `${name} was killed by signal 9`, code: "ERR_SPINRPC_CHILD_EXITED", exitCode: null, signal: "SIGKILL",
    });
  };
  const server = () => { requireBinary(spinrpcPeer()); return JSON.stringify(spinrpcPeer().path); };

  for (const [what, request] of [
    ["small requests back to back", `c.requestSync("echo", "x" + i)`],
    ["16 MiB requests back to back (the ring full)", `c.requestBinarySync("echo", big)`],
  ]) {
    test(`spinrpc-server, ${what}: the binding's typed error`, () => {
      const out = runCase(`
        const c = new SyncRpcChannel(${server()}, ["--api"]);
        const big = new Uint8Array(16 << 20);
        c.requestSync("echo", "first");
        out.transport = c.stats().transport;
        killLater(c.pid);
        try { for (let i = 0; ; i++) ${request}; } catch (e) { out.error = shape(e); }
        c.close();`);
      assertKilled(out, "spinrpc-server");
    });
  }

  test("spinrpc-server killed between two requests: the next one fails the same way", () => {
    const out = runCase(`
      const c = new SyncRpcChannel(${server()}, ["--api"]);
      c.requestSync("echo", "first");
      out.transport = c.stats().transport;
      process.kill(c.pid, "SIGKILL");
      try { c.requestSync("echo", "after"); } catch (e) { out.error = shape(e); }
      c.close();`);
    assertKilled(out, "spinrpc-server");
  });

  test("a server killed inside a request (its Call's callback kills it; it never answers): the binding's typed error", () => {
    const scripted = scriptedServer();
    requireBinary(scripted);
    const out = runCase(`
      const c = new SyncRpcChannel(${JSON.stringify(scripted.path)}, []);
      c.requestSync("echo", "first");
      out.transport = c.stats().transport;
      c.registerCallback("kill", () => { process.kill(c.pid, "SIGKILL"); return "too late"; });
      try { c.requestSync("callback", "kill"); } catch (e) { out.error = shape(e); }
      c.close();
      const d = new SyncRpcChannel(${JSON.stringify(scripted.path)}, []);
      d.requestSync("echo", "first");
      out.second = d.stats().transport;
      killLater(d.pid);
      try { d.requestSync("neverAnswer", ""); } catch (e) { out.neverAnswer = shape(e); }
      d.close();`);
    assertKilled(out, "scripted_server");
    assertKilled({ transport: out.second, error: out.neverAnswer }, "scripted_server");
  });
});
