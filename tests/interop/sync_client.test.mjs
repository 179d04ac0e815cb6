// The real TypeScript 7 sync client of every supported version
// (versions.mjs: the preview, typescript@7.0.2, 7.1.0-beta, a 7.1 nightly)
// driving both peers: the same assertions run against spinrpc-server and
// that version's own server, with what differs between the API dialects
// (initialize's reply, the --cwd it echoes) taken from the dialect. A peer
// whose binary is missing fails every one of its tests; nothing skips.
//
// npm test runs this file twice: as it is (the client's own pure-JS channel)
// and under `node --import node/register.mjs` with SPINRPC_INTEROP_CHANNEL=spinrpc
// (spinrpc's Node.js binding in its place); the first test checks which one
// the client really uses.

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gone, spinrpcPeer, requireBinary, watchdog } from "./peers.mjs";
import { VERSIONS } from "./versions.mjs";

// Which channel the client must be using: "spinrpc" (the hook is on) or
// "typescript" (its own).
const CHANNEL = process.env.SPINRPC_INTEROP_CHANNEL || "typescript";

const scratch = mkdtempSync(join(tmpdir(), "spinrpc-interop-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

// What the 7.0 and 7.1 servers answer to initialize for `cwd`: 7.1 reports
// case sensitivity as a number and gives the directory normalised.
function initializeReply(dialect, cwd) {
  return dialect === "7.0"
    ? { useCaseSensitiveFileNames: true, currentDirectory: cwd }
    : { caseSensitivity: 1, currentDirectory: cwd.replaceAll("\\", "/").replace(/(\/\.)?\/$/, "") };
}

/** Opens the real client on a peer; returns { api, close }. */
function open(API, peer, options = {}) {
  requireBinary(peer);
  const api = new API({ tsserverPath: peer.path, cwd: scratch, ...options });
  const pid = serverPid(api);
  const stopWatchdog = watchdog(pid);
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    stopWatchdog();
    api.close();
  };
  return { api, pid, close };
}

/** The server's pid: the TS 7 channel's ChildProcess, or spinrpc's `pid`. */
function serverPid(api) {
  const channel = api.client.channel;
  return channel.child ? channel.child.pid : channel.pid;
}

/** Runs fn(api) with a fresh client on peer, always closing it. */
function withApi(API, peer, options, fn) {
  const { api, close } = open(API, peer, options);
  try {
    return fn(api);
  } finally {
    close();
  }
}

/** Deterministic pseudo-random bytes (xorshift32), so failures reproduce. */
function pseudoRandomBytes(n, seed = 0x9e3779b9) {
  const out = Buffer.allocUnsafe(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

/** Byte-for-byte comparison that names the first differing offset. */
function assertSameBytes(got, want, what) {
  const g = Buffer.from(got.buffer, got.byteOffset, got.byteLength);
  if (g.equals(want)) return;
  let i = 0;
  while (i < Math.min(g.length, want.length) && g[i] === want[i]) i++;
  assert.fail(`${what}: reply differs from what was sent: length ${g.length} vs ${want.length}, ` +
    `first difference at byte ${i} (got ${g[i]}, want ${want[i]})`);
}

const TIMING_DISABLED_JSON =
  '{"enabled":false,"totals":{"requestCount":0,"totalProcessingTimeMs":0},"recentRequests":[]}';

for (const ts of VERSIONS) {
  const { API } = await import(ts.sync);
  const ownServer = { name: `${ts.name}@${ts.version}'s server`, path: process.env.SPINRPC_TSGO || ts.server };
  for (const peer of [spinrpcPeer(), ownServer]) {
  describe(`${ts.name}@${ts.version} sync client against ${peer.name}`, () => {
    test("binary is present and executable", () => {
      requireBinary(peer);
    });

    test(`the client talks through the ${CHANNEL} channel`, () => {
      withApi(API, peer, {}, (api) => {
        const ours = typeof api.client.channel.stats === "function";
        assert.equal(ours ? "spinrpc" : "typescript", CHANNEL);
      });
    });

    test("small echo (string, ASCII and UTF-8)", () => {
      withApi(API, peer, {}, (api) => {
        assert.equal(api.client.echo("hello, spinrpc"), "hello, spinrpc");
        assert.equal(api.client.echo("héllo ✓ 😀 \u0000 end"), "héllo ✓ 😀 \u0000 end");
      });
    });

    test("empty echo (string and binary)", () => {
      withApi(API, peer, {}, (api) => {
        assert.equal(api.client.echo(""), "");
        const r = api.client.echoBinary(new Uint8Array(0));
        assert.equal(r.length, 0);
      });
    });

    test("binary echo of bytes 0..255", () => {
      withApi(API, peer, {}, (api) => {
        const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
        assertSameBytes(api.client.echoBinary(new Uint8Array(all)), all, "bytes 0..255");
        // and the same bytes one at a time: every single-byte payload
        for (let b = 0; b < 256; b++) {
          assertSameBytes(api.client.echoBinary(new Uint8Array([b])), Buffer.from([b]), `byte ${b}`);
        }
      });
    });

    test("echo across the bin8/bin16/bin32 length boundaries", () => {
      withApi(API, peer, {}, (api) => {
        for (const n of [254, 255, 256, 257, 65534, 65535, 65536, 65537, 65536 * 2 + 3]) {
          const data = pseudoRandomBytes(n, n);
          assertSameBytes(api.client.echoBinary(new Uint8Array(data)), data, `${n}-byte echo`);
        }
      });
    });

    test("1 MiB echo, every byte compared (binary and string)", () => {
      withApi(API, peer, {}, (api) => {
        const data = pseudoRandomBytes(1 << 20);
        assertSameBytes(api.client.echoBinary(new Uint8Array(data)), data, "1 MiB binary echo");
        const text = "0123456789abcdef".repeat(1 << 16); // 1 MiB of ASCII
        const got = api.client.echo(text);
        assert.equal(got.length, text.length, "1 MiB string echo length");
        assert.ok(got === text, "1 MiB string echo content differs");
      });
    });

    test("10 000 echoes in a row, each checked", () => {
      withApi(API, peer, {}, (api) => {
        for (let i = 0; i < 10_000; i++) {
          const payload = `echo #${i} ${"x".repeat(i % 97)}`;
          const got = api.client.echo(payload);
          if (got !== payload) {
            assert.fail(`echo ${i}: sent ${JSON.stringify(payload)}, got ${JSON.stringify(got)}`);
          }
        }
      });
    });

    test("initialize through apiRequest returns the --cwd verbatim", () => {
      withApi(API, peer, {}, (api) => {
        assert.deepStrictEqual(api.client.apiRequest("initialize", null), initializeReply(ts.dialect, scratch));
      });
      // The client passes cwd as --cwd; the server must not resolve, check or
      // normalise it (tsgo echoes it byte for byte, JSON without HTML escaping).
      const odd = "/tmp/spin rpc/<>&\"\\é\nline two/./";
      withApi(API, peer, { cwd: odd }, (api) => {
        assert.deepStrictEqual(api.client.apiRequest("initialize", null), initializeReply(ts.dialect, odd));
        const raw = api.client.channel.requestSync("initialize", "null");
        assert.equal(raw, JSON.stringify(initializeReply(ts.dialect, odd)));
      });
    });

    test("unknown method: exact error message, and the connection keeps serving", () => {
      withApi(API, peer, {}, (api) => {
        assert.throws(() => api.client.apiRequest("nope", null), {
          message: 'api: invalid request: unknown API method "nope"',
        });
        assert.throws(() => api.client.apiRequest('a"b', null), {
          message: 'api: invalid request: unknown API method "a\\"b"',
        });
        assert.equal(api.client.echo("still alive"), "still alive");
        assert.deepStrictEqual(api.client.apiRequest("initialize", null), initializeReply(ts.dialect, scratch));
      });
    });

    test("getServerTiming without --timing is the disabled snapshot", () => {
      withApi(API, peer, {}, (api) => {
        api.client.echo("x");
        assert.equal(api.client.channel.requestSync("getServerTiming", ""), TIMING_DISABLED_JSON);
        assert.equal(api.client.channel.requestSync("resetServerTiming", ""), "null");
        // without collectTiming the client never asks the server
        assert.deepStrictEqual(api.getTimingInfo().enabled, false);
      });
    });

    test("getTimingInfo() with collectTiming: true", () => {
      withApi(API, peer, { collectTiming: true }, (api) => {
        const serverTiming = () => JSON.parse(api.client.channel.requestSync("getServerTiming", ""));
        const initReply = JSON.stringify(initializeReply(ts.dialect, scratch));

        // Nothing sent yet: all zero on both sides.
        let info = api.getTimingInfo();
        assert.equal(info.enabled, true);
        assert.equal(info.totals.requestCount, 0);
        assert.equal(info.totals.bytesSent, 0);
        assert.equal(info.totals.bytesReceived, 0);
        assert.equal(info.totals.serverTimeMs, 0);
        assert.deepStrictEqual(info.recentRequests, []);

        const t0 = Date.now();
        // Echoes bypass the client's collector but the server counts them.
        for (let i = 0; i < 3; i++) api.client.echo(`e${i}`);
        api.client.apiRequest("initialize", null);
        api.client.apiRequest("initialize", null);
        const t1 = Date.now();

        info = api.getTimingInfo();
        assert.equal(info.enabled, true);
        assert.equal(info.totals.requestCount, 2, "client counts its timed apiRequests only");
        assert.equal(info.totals.bytesSent, 2 * "null".length);
        assert.equal(info.totals.bytesReceived, 2 * Buffer.byteLength(initReply));
        assert.ok(Number.isFinite(info.totals.serverTimeMs) && info.totals.serverTimeMs >= 0);
        assert.ok(info.totals.transportOverheadMs >= 0);
        assert.deepStrictEqual(info.recentRequests.map((r) => r.method), ["initialize", "initialize"]);
        for (const r of info.recentRequests) {
          // paired newest-to-newest with the server's ring: both are initialize
          assert.equal(typeof r.serverTimeMs, "number", "server time folded into each recent request");
          assert.ok(r.serverTimeMs >= 0 && r.transportOverheadMs >= 0);
          assert.equal(r.bytesSent, 4);
          assert.equal(r.bytesReceived, Buffer.byteLength(initReply));
        }

        // The server's own snapshot: exact shape, exact counts, oldest first.
        let s = serverTiming();
        assert.deepStrictEqual(Object.keys(s), ["enabled", "totals", "recentRequests"]);
        assert.deepStrictEqual(Object.keys(s.totals), ["requestCount", "totalProcessingTimeMs"]);
        assert.equal(s.enabled, true);
        assert.equal(s.totals.requestCount, 5, "3 echoes + 2 initialize; getServerTiming itself not counted");
        assert.deepStrictEqual(s.recentRequests.map((r) => r.method), ["echo", "echo", "echo", "initialize", "initialize"]);
        let sum = 0;
        for (const r of s.recentRequests) {
          assert.deepStrictEqual(Object.keys(r), ["method", "processingTimeMs", "timestamp"]);
          assert.ok(Number.isFinite(r.processingTimeMs) && r.processingTimeMs >= 0);
          assert.ok(Number.isInteger(r.timestamp), "timestamp is integer unix milliseconds");
          assert.ok(r.timestamp >= t0 - 2 && r.timestamp <= t1 + 2, `timestamp ${r.timestamp} outside [${t0}, ${t1}]`);
          sum += r.processingTimeMs;
        }
        assert.ok(Math.abs(s.totals.totalProcessingTimeMs - sum) < 1e-6 + 1e-9 * sum,
          `total ${s.totals.totalProcessingTimeMs} is the sum of the 5 requests (${sum})`);

        // A request newer than the client's last timed one: the newest pair no
        // longer matches (echo vs initialize), so no server time is folded in.
        api.client.apiRequest("initialize", null);
        api.client.echo("last");
        info = api.getTimingInfo();
        assert.equal(info.totals.requestCount, 3);
        assert.equal(info.recentRequests.at(-1).serverTimeMs, undefined);

        // Errors are counted by the server (not by the client, which throws).
        assert.throws(() => api.client.apiRequest("nope", null), /unknown API method "nope"/);
        for (let i = 0; i < 4; i++) api.client.echo(`f${i}`);
        s = serverTiming();
        assert.equal(s.totals.requestCount, 12);
        assert.deepStrictEqual(s.recentRequests.map((r) => r.method), ["nope", "echo", "echo", "echo", "echo"]);
        assert.equal(api.getTimingInfo().totals.requestCount, 3);

        // resetTimingInfo clears both sides; reset itself is not counted.
        api.resetTimingInfo();
        info = api.getTimingInfo();
        assert.equal(info.totals.requestCount, 0);
        assert.equal(info.totals.serverTimeMs, 0);
        assert.deepStrictEqual(info.recentRequests, []);
        assert.deepStrictEqual(serverTiming(), { enabled: true, totals: { requestCount: 0, totalProcessingTimeMs: 0 }, recentRequests: [] });
        assert.equal(api.client.channel.requestSync("getServerTiming", ""),
          '{"enabled":true,"totals":{"requestCount":0,"totalProcessingTimeMs":0},"recentRequests":[]}');
      });
    });

    // The real client's close() destroys the pipes and sends SIGTERM at once;
    // a line on stderr then is what fails users' CI (TypeScript#64242). tsgo
    // prints something in a few of 40 closes; spinrpc-server must never
    // (docs/PROTOCOL.md#where-spinrpc-server-differs-from-tsgo).
    if (peer.name === "spinrpc-server") {
      test("close() 40 times in a row: nothing on the server's stderr", () => {
        const script = `import { API } from ${JSON.stringify(ts.sync)};
for (let i = 0; i < 40; i++) {
  const api = new API({ tsserverPath: ${JSON.stringify(peer.path)}, cwd: ${JSON.stringify(scratch)} });
  api.client.echo("x" + i);
  api.close();
}`;
        // spawnSync returns once every holder of the stderr pipe is gone, so
        // a line a server writes after the script ends is caught too.
        // process.execArgv: under `--import node/register.mjs` the script's
        // client uses the binding too, so both channels' close() are checked.
        const r = spawnSync(process.execPath, [...process.execArgv, "--input-type=module", "-e", script], {
          cwd: dirname(fileURLToPath(import.meta.url)),
          encoding: "utf8",
          timeout: 120_000,  // hang guard only
          killSignal: "SIGKILL",
        });
        assert.equal(r.status, 0, `the client script failed: ${r.error ?? ""} ${r.stderr}`);
        assert.equal(r.stderr, "");
      });
    }

    test("close() ends the server process", async () => {
      const { api, pid, close } = open(API, peer);
      assert.equal(api.client.echo("bye"), "bye");
      close();
      // The TS 7 channel signals the child and Node reaps it from the event
      // loop; spinrpc's close() reaps it before returning. Either way it
      // must be gone soon.
      const deadline = Date.now() + 10_000;
      while (!gone(pid)) {
        if (Date.now() > deadline) assert.fail(`${peer.name} still running 10 s after close()`);
        await new Promise((res) => setTimeout(res, 10));
      }
    });
  });
  }
}
