// spinrpc's Node.js binding (node/): the real TypeScript 7 API of every
// version in versions.mjs through it (the register hook puts it under each),
// with each version's server calling the API's file system callbacks while
// it loads a project,
// and the class itself against spinrpc-server, tsgo and the scripted peer:
// failing callbacks, close(), a missing executable, a child that dies
// mid-request, 1 MiB both ways, many channels at once, and a process that
// exits with channels still open. sync_client.test.mjs runs the whole
// client suite through the binding as well (npm test).

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { gone, peers, REPO_ROOT, requireBinary, scriptedPeer, spinrpcPeer, tsgoPeer, watchdog } from "./peers.mjs";
import { VERSIONS } from "./versions.mjs";

const INDEX = join(REPO_ROOT, "node", "index.mjs");
const REGISTER = join(REPO_ROOT, "node", "register.mjs");

// The hook first, then the APIs: each client's channel is spinrpc's.
await import(pathToFileURL(REGISTER).href);
const APIS = await Promise.all(VERSIONS.map(async (ts) => ({
  ts,
  API: (await import(ts.sync)).API,
  // 7.1's serverFS sentinels (typescript/fs), for a file system of callbacks.
  serverFS: ts.dialect === "7.0" ? null : (await import(ts.sync.replace(/sync$/, "fs"))).serverFS,
})));
const { SyncRpcChannel } = await import(pathToFileURL(INDEX).href);

const scratch = mkdtempSync(join(tmpdir(), "spinrpc-binding-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A channel on `peer` with a watchdog; fn(channel) runs, then both end. */
function withChannel(peer, args, fn, options) {
  requireBinary(peer);
  const channel = new SyncRpcChannel(peer.path, args, options);
  const stop = watchdog(channel.pid);
  try {
    return fn(channel);
  } finally {
    stop();
    channel.close();
  }
}

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

async function waitGone(pid, what) {
  const deadline = Date.now() + 10_000;
  while (!gone(pid)) {
    if (Date.now() > deadline) assert.fail(`${what} (pid ${pid}) still running after 10 s`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

for (const { ts, API, serverFS } of APIS) {
  const label = `${ts.name}@${ts.version}`;

  describe(`the register hook, ${label}`, () => {
    test("puts spinrpc's channel under the real API, which starts its own server", () => {
      const api = new API({ cwd: scratch });
      try {
        assert.ok(api.client.channel instanceof SyncRpcChannel);
        assert.deepEqual(api.client.channel.constructor.spinrpc,
          { name: ts.name, version: ts.version, dialect: ts.dialect, file: ts.channel });
        assert.equal(api.client.echo("through the hook"), "through the hook");
      } finally {
        api.close();
      }
    });

    test("without the flag, nothing changes", () => {
      const script = `const { API } = await import(${JSON.stringify(ts.sync)});` +
        `const api = new API({ cwd: ${JSON.stringify(scratch)} });` +
        'console.log(typeof api.client.channel.stats, typeof api.client.channel.child, api.client.echo("x"));' +
        "api.close();";
      const run = spawnSync(process.execPath, ["--input-type=module", "-e", script],
        { cwd: join(REPO_ROOT, "tests", "interop"), encoding: "utf8", timeout: 60_000, env: { ...process.env, NODE_OPTIONS: "" } });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout.trim(), "undefined object x");
    });
  });

  describe(`the API's file system callbacks through the binding, ${label}`, () => {
    if (ts.dialect === "7.0") {
      test("the server loads a project whose files come from the callbacks", () => {
        const dir = mkdtempSync(join(scratch, "project-"));
        writeFileSync(join(dir, "tsconfig.json"), '{"compilerOptions":{"strict":true},"files":["a.ts","virtual.ts"]}');
        writeFileSync(join(dir, "a.ts"), "export const a: number = 1;\n");
        // virtual.ts is not on disk: only the callbacks know it.
        const virtual = { [join(dir, "virtual.ts")]: "export const v = 'from the callback';\n" };
        const calls = new Map();
        const count = (name) => calls.set(name, (calls.get(name) ?? 0) + 1);
        const fs = {
          readFile: (p) => { count("readFile"); return p in virtual ? virtual[p] : undefined; },
          fileExists: (p) => { count("fileExists"); return p in virtual ? true : undefined; },
          directoryExists: () => { count("directoryExists"); return undefined; },
          getAccessibleEntries: () => { count("getAccessibleEntries"); return undefined; },
          realpath: (p) => { count("realpath"); return p; },
        };
        const api = new API({ cwd: dir, fs });
        const stop = watchdog(api.client.channel.pid);
        try {
          assert.ok(api.client.channel instanceof SyncRpcChannel);
          const project = api.updateSnapshot({ openProject: join(dir, "tsconfig.json") }).getProject(join(dir, "tsconfig.json"));
          assert.deepStrictEqual(project.rootFiles, [join(dir, "a.ts"), join(dir, "virtual.ts")]);
          assert.equal(project.program.getSourceFile(join(dir, "virtual.ts")).text, virtual[join(dir, "virtual.ts")]);
          assert.ok(calls.get("readFile") > 0 && calls.get("fileExists") > 0 && calls.get("directoryExists") > 0,
            `callbacks called: ${JSON.stringify([...calls])}`);
        } finally {
          stop();
          api.close();
        }
      });

      test("a throwing callback: the server gets CallError, and the request throws the version's own error", () => {
        const dir = mkdtempSync(join(scratch, "project-"));
        writeFileSync(join(dir, "tsconfig.json"), '{"files":["a.ts"]}');
        writeFileSync(join(dir, "a.ts"), "export {};\n");
        const failure = new Error("  no reading today  ");
        const api = new API({
          cwd: dir,
          fs: { readFile: (p) => { if (p.endsWith("a.ts")) throw failure; return undefined; } },
        });
        const stop = watchdog(api.client.channel.pid);
        try {
          // The 7.0 channel's error for the request; the server panics on a
          // failed readFile Call (exit status 2), which the binding read:
          // requestError.
          assert.throws(() => api.updateSnapshot({ openProject: join(dir, "tsconfig.json") }), (e) => {
            assert.equal(e.message, "Error calling callback `readFile`: no reading today");
            assert.equal(e.cause, failure);
            assert.match(e.requestError.message, /^(tsgo|tsc) exited with status \d+$/);
            assert.equal(e.requestError.code, "ERR_SPINRPC_CHILD_EXITED");
            return true;
          });
        } finally {
          stop();
          api.close();
        }
      });

      test("the scripted peer Calls the API's readFile and fileExists", () => {
        const peer = scriptedPeer();
        requireBinary(peer);
        const files = { "/v/a.ts": "let a = 1;" };
        const api = new API({
          tsserverPath: peer.path, cwd: scratch,
          fs: { readFile: (p) => files[p] ?? null, fileExists: (p) => p in files },
        });
        const stop = watchdog(api.client.channel.pid);
        try {
          const channel = api.client.channel;
          assert.equal(channel.requestSync("callback", 'readFile "/v/a.ts"'), JSON.stringify({ content: "let a = 1;" }));
          assert.equal(channel.requestSync("callback", 'readFile "/v/none.ts"'), JSON.stringify({ content: null }));
          assert.equal(channel.requestSync("callback", 'fileExists "/v/a.ts"'), "true");
          // A name the API did not register: CallError, and the request goes on.
          assert.match(channel.requestSync("callbackError", "realpath"), /realpath/);
        } finally {
          stop();
          api.close();
        }
      });
    } else {
      const osFS = {
        readFile: serverFS.useOS, fileExists: serverFS.useOS, directoryExists: serverFS.useOS,
        getAccessibleEntries: serverFS.useOS, realpath: serverFS.useOS, stat: serverFS.useOS,
        writeFile: serverFS.useOS, removeFile: serverFS.useOS,
      };

      test("the server loads a project whose files come from the callbacks", () => {
        const dir = mkdtempSync(join(scratch, "project-"));
        writeFileSync(join(dir, "tsconfig.json"), '{"compilerOptions":{"strict":true},"files":["a.ts","virtual.ts"]}');
        writeFileSync(join(dir, "a.ts"), "export const a: number = 1;\n");
        const virtual = { [join(dir, "virtual.ts")]: "export const v = 'from the callback';\n" };
        const calls = new Map();
        const count = (name) => calls.set(name, (calls.get(name) ?? 0) + 1);
        const fs = {
          ...osFS,
          readFile: (p) => { count("readFile"); return p in virtual ? virtual[p] : serverFS.useOS; },
          fileExists: (p) => { count("fileExists"); return p in virtual ? true : serverFS.useOS; },
        };
        const api = new API({ cwd: dir, fs });
        const stop = watchdog(api.client.channel.pid);
        try {
          assert.ok(api.client.channel instanceof SyncRpcChannel);
          const snapshot = api.createSnapshot({ openProjects: [join(dir, "tsconfig.json")] });
          const project = snapshot.getProject(join(dir, "tsconfig.json"));
          assert.equal(project.program.getSourceFile(join(dir, "virtual.ts")).text, virtual[join(dir, "virtual.ts")]);
          assert.ok(calls.get("readFile") > 0, `callbacks called: ${JSON.stringify([...calls])}`);
        } finally {
          stop();
          api.close();
        }
      });

      test("a throwing callback: the request throws the version's own error, and so does every later one", () => {
        const dir = mkdtempSync(join(scratch, "project-"));
        writeFileSync(join(dir, "tsconfig.json"), '{"files":["a.ts"]}');
        writeFileSync(join(dir, "a.ts"), "export {};\n");
        const failure = new Error("  no reading today  ");
        const api = new API({
          cwd: dir,
          fs: { ...osFS, readFile: (p) => { if (p.endsWith("a.ts")) throw failure; return serverFS.useOS; } },
        });
        const stop = watchdog(api.client.channel.pid);
        try {
          let first;
          assert.throws(() => api.createSnapshot({ openProjects: [join(dir, "tsconfig.json")] }), (e) => {
            assert.equal(e.message, "Error calling callback `readFile`: no reading today");
            assert.equal(e.cause, failure);
            first = e;
            return true;
          });
          // 7.1's rule: the channel is unusable from then on, with that error.
          assert.throws(() => api.client.echo("after"), (e) => e === first);
        } finally {
          stop();
          api.close();
        }
      });
    }
  });
}

describe("the register hook", () => {
  test("the server's stderr reaches the user's, as through the pure-JS channel", () => {
    // Node marks its own fd 2 close-on-exec; the TS 7 channel passes it to
    // the server ("inherit"), and so must the binding: a bad flag's message,
    // a Go panic or --stats are written there.
    const channelJs = join(dirname(createRequire(join(REPO_ROOT, "tests", "interop", "package.json"))
      .resolve("@typescript/native-preview/package.json")), "dist", "api", "syncChannel.js");
    for (const peer of [spinrpcPeer(), tsgoPeer()]) {
      requireBinary(peer);
      for (const hook of [false, true]) {
        const script = `const { SyncRpcChannel } = await import(${JSON.stringify(pathToFileURL(channelJs).href)});
          const channel = new SyncRpcChannel(${JSON.stringify(peer.path)}, ["--api", "--bogus-flag"]);
          try { channel.requestSync("echo", "x"); } catch {}
          console.log(typeof channel.stats);`;
        const run = spawnSync(process.execPath, [...(hook ? ["--import", REGISTER] : []), "--input-type=module", "-e", script],
          { encoding: "utf8", timeout: 60_000, env: { ...process.env, NODE_OPTIONS: "" } });
        const what = `${peer.name}, ${hook ? "binding" : "pure-JS channel"}`;
        assert.equal(run.status, 0, `${what}: ${run.stderr}`);
        assert.equal(run.stdout.trim(), hook ? "function" : "undefined", what);
        assert.match(run.stderr, /flag provided but not defined: -bogus-flag/, what);
      }
    }
  });
});

describe("SyncRpcChannel", () => {
  test("callbacks: the result goes back; a throw becomes CallError and the request goes on", () => {
    withChannel(scriptedPeer(), [], (channel) => {
      const seen = [];
      channel.registerCallback("twice", (name, payload) => { seen.push([name, payload]); return `<${payload}>`; });
      assert.equal(channel.requestSync("callbackTwice", "twice"), "<1>,<2>");
      assert.deepStrictEqual(seen, [["twice", "1"], ["twice", "2"]]);
      // The TS 7 channel's CallError text: String(e.message).trim(), or String(value).
      channel.registerCallback("fails", () => { throw new Error("  failed on purpose \n"); });
      assert.equal(channel.requestSync("callbackError", "fails"), "failed on purpose");
      channel.registerCallback("throwsString", () => { throw "a bare string"; });
      assert.equal(channel.requestSync("callbackError", "throwsString"), "a bare string");
      // Whatever is thrown, the text is the TS 7 channel's formula
      // (dist/api/syncChannel.js, handleCall) applied to it.
      const ts7Text = (e) => String(e instanceof Error ? e.message : e).trim();
      const odd = new Error("x");
      odd.message = 5;
      for (const [label, thrown] of [["symbol", Symbol("sym")], ["notAnError", { message: "hi" }], ["undefined", undefined],
        ["null", null], ["bigint", 42n], ["unicodeSpaces", "\u00a0\u2028 spaced \ufeff"], ["numberMessage", odd]]) {
        channel.registerCallback(label, () => { throw thrown; });
        assert.equal(channel.requestSync("callbackError", label), ts7Text(thrown), label);
      }
      channel.registerCallback("notAString", () => 42);
      assert.equal(channel.requestSync("callbackError", "notAString"), "callback `notAString` returned a number, not a string");
      // A callback may not re-enter its channel.
      channel.registerCallback("reenters", () => channel.requestSync("echo", "x"));
      assert.match(channel.requestSync("callbackError", "reenters"), /inside a callback/);
      assert.equal(channel.requestSync("echo", "still serving"), "still serving");
    });
  });

  test("a request that fails after its callback threw: `cause` is what was thrown, a primitive included", () => {
    withChannel(scriptedPeer(), [], (channel) => {
      for (const thrown of [undefined, "text", Symbol("s"), { message: "not an Error" }]) {
        channel.registerCallback("t", () => { throw thrown; });
        // The scripted "callback" method fails when its Call does.
        assert.throws(() => channel.requestSync("callback", "t"), (e) => {
          assert.ok("cause" in e);
          assert.equal(e.cause, thrown);
          return true;
        });
        channel.registerCallback("t2", () => "fine");
        assert.equal(channel.requestSync("callback", "t2"), "fine");
      }
    });
  });

  test("an Error reply is an Error with the server's text, and the channel serves on", () => {
    for (const peer of peers()) {
      withChannel(peer, ["--api"], (channel) => {
        assert.throws(() => channel.requestSync("nope", "null"), { message: 'api: invalid request: unknown API method "nope"' });
        assert.equal(channel.requestSync("echo", "after"), "after");
      });
    }
  });

  test("a method can be wrapped on the instance, as on the pure-JS channel", () => {
    // Tools time or log requests by replacing requestSync on the channel
    // (bench/workload/walk.mjs does); a read-only method made that throw.
    withChannel(spinrpcPeer(), ["--api"], (channel) => {
      const seen = [];
      const original = channel.requestSync;
      channel.requestSync = function (method, payload) {
        seen.push(method);
        return original.call(this, method, payload);
      };
      assert.equal(channel.requestSync("echo", "wrapped"), "wrapped");
      assert.deepEqual(seen, ["echo"]);
    });
  });

  test("close() mid-session ends the child; later requests say it is closed", async () => {
    for (const peer of peers()) {
      requireBinary(peer);
      const channel = new SyncRpcChannel(peer.path, ["--api"]);
      const pid = channel.pid;
      assert.equal(channel.requestSync("echo", "before"), "before");
      channel.close();
      assert.ok(gone(pid), `${peer.name} still running after close()`);
      assert.equal(channel.pid, -1);
      assert.throws(() => channel.requestSync("echo", "after"), { message: "SyncRpcChannel is closed" });
      assert.throws(() => channel.requestBinarySync("echo", new Uint8Array(1)), { message: "SyncRpcChannel is closed" });
      channel.close(); // idempotent
    }
    // close() from inside a callback is refused; the request goes on.
    withChannel(scriptedPeer(), [], (channel) => {
      channel.registerCallback("closes", () => { channel.close(); return "closed?"; });
      assert.match(channel.requestSync("callbackError", "closes"), /close from inside a callback/);
      assert.equal(channel.requestSync("echo", "open"), "open");
    });
  });

  test("registerCallback from inside a callback: replacing itself or adding another works, as on the TS 7 channel", () => {
    withChannel(scriptedPeer(), [], (channel) => {
      channel.registerCallback("cb", (name, arg) => {
        channel.registerCallback("cb", (n, a) => `second(${a})`);
        channel.registerCallback("other", () => "other");
        return `first(${arg})`;
      });
      assert.equal(channel.requestSync("callbackTwice", "cb"), "first(1),second(2)");
      assert.equal(channel.requestSync("callback", "other x"), "other");
    });
  });

  test("a missing executable is an ENOENT error from the constructor, as Node's spawn words it", () => {
    for (const exe of ["/nonexistent/spinrpc/tsgo", "spinrpc-no-such-executable"]) {
      assert.throws(() => new SyncRpcChannel(exe, ["--api"]), (e) => {
        assert.equal(e.code, "ENOENT");
        assert.equal(e.message, `spawn ${exe} ENOENT`);
        return true;
      });
    }
    // Every spawn behaviour against Node's own spawn: spawn_like_node.test.mjs.
    assert.throws(() => new APIS[0].API({ tsserverPath: "/nonexistent/spinrpc/tsgo" }), { code: "ENOENT" });
  });

  test("a child that dies mid-request: its exit status or signal is named", () => {
    withChannel(scriptedPeer(), [], (channel) => {
      assert.throws(() => channel.requestSync("exitNow", ""), (e) => {
        assert.equal(e.message, "scripted_peer exited with status 3");
        assert.equal(e.code, "ERR_SPINRPC_CHILD_EXITED");
        assert.equal(e.exitCode, 3);
        assert.equal(e.signal, null);
        return true;
      });
    });
    withChannel(scriptedPeer(), [], (channel) => {
      // SIGKILLed while it waits for a CallResponse.
      channel.registerCallback("kill", () => { process.kill(channel.pid, "SIGKILL"); return "too late"; });
      assert.throws(() => channel.requestSync("callback", "kill"), (e) => {
        assert.equal(e.message, "scripted_peer was killed by signal 9");
        assert.equal(e.signal, "SIGKILL");
        assert.equal(e.exitCode, null);
        return true;
      });
    });
  });

  test("a server that announces a 4 GiB reply and dies: the error comes without writing that memory", () => {
    // The reply Buffer is populated before the read only up to a bound;
    // before, the whole announced length was (4 GiB of RSS).
    const before = process.resourceUsage().maxRSS;
    withChannel(scriptedPeer(), [], (channel) => {
      assert.throws(() => channel.requestBinarySync("announceHuge", new Uint8Array([1])), (e) => {
        assert.equal(e.code, "ERR_SPINRPC_CHILD_EXITED");
        assert.equal(e.message, "scripted_peer exited with status 0");
        return true;
      });
    });
    const grewMiB = (process.resourceUsage().maxRSS - before) / 1024;
    assert.ok(grewMiB < 512, `the process grew by ${grewMiB.toFixed(0)} MiB`);
  });

  test("1 MiB payloads both ways, string and binary, every byte compared", () => {
    const bytes = pseudoRandomBytes(1 << 20, 7);
    // Two- and three-byte UTF-8 characters, and one outside the BMP.
    const text = "héllo ✓ 😀 ".repeat(1 << 16).slice(0, (1 << 20) - 7);
    for (const peer of peers()) {
      withChannel(peer, ["--api"], (channel) => {
        const got = channel.requestBinarySync("echo", bytes);
        assert.ok(Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(bytes), `${peer.name}: binary echo differs`);
        // A Buffer of its own: the API reads buffer.buffer at absolute offsets.
        assert.equal(got.byteOffset, 0);
        assert.equal(got.buffer.byteLength, bytes.length);
        assert.ok(channel.requestSync("echo", text) === text, `${peer.name}: string echo differs`);
      });
    }
    withChannel(scriptedPeer(), [], (channel) => {
      const big = channel.requestBinarySync("bigReply", new Uint8Array(0));
      assert.equal(big.length, 1 << 20);
      for (let i = 0; i < big.length; i += 4093) assert.equal(big[i], i % 251);
    });
  });

  test("16 MiB payloads both ways, three in a row, string and binary, every byte compared", () => {
    // Past the 1 MiB test: many pipe-fulls each way, lent request pages
    // (docs/NODE.md, "Large payloads"); the bytes must come through whole.
    const bytes = pseudoRandomBytes(16 << 20, 11);
    const text = "héllo ✓ 😀 ".repeat(1 << 20).slice(0, (16 << 20) - 7);
    for (const peer of peers()) {
      withChannel(peer, ["--api"], (channel) => {
        for (let i = 0; i < 3; i++) {
          const got = channel.requestBinarySync("echo", bytes);
          assert.equal(got.byteOffset, 0);
          assert.ok(Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(bytes), `${peer.name}: binary echo ${i} differs`);
          assert.ok(channel.requestSync("echo", text) === text, `${peer.name}: string echo ${i} differs`);
        }
        // Small messages after big ones are unchanged.
        assert.equal(channel.requestSync("echo", "small"), "small");
      });
    }
  });

  test("big binary replies of one size, read into Buffers made ahead: each its own, none overwritten", () => {
    // From the second reply of one size on, a Buffer is made for the next
    // reply and populated while the server works on it (docs/NODE.md,
    // "Large payloads"). Each reply must still be a Buffer of its own, and
    // the earlier replies the caller keeps must keep their bytes.
    // Up to 1 MiB: bigger replies are not made ahead (ReplyBuffers::kMaxAheadBytes).
    const size = (768 << 10) + 5;
    for (const peer of peers()) {
      withChannel(peer, ["--api"], (channel) => {
        const sent = [];
        const got = [];
        for (let i = 0; i < 6; i++) {
          sent.push(pseudoRandomBytes(size, 40 + i));
          got.push(channel.requestBinarySync("echo", sent[i]));
        }
        got.forEach((reply, i) => {
          assert.ok(Buffer.isBuffer(reply), `${peer.name}: reply ${i} is a Buffer`);
          assert.equal(reply.byteOffset, 0);
          assert.equal(reply.buffer.byteLength, size);
          assert.ok(Buffer.from(reply.buffer, reply.byteOffset, reply.byteLength).equals(sent[i]),
            `${peer.name}: reply ${i} differs from what was sent`);
        });
        const stats = channel.stats();
        assert.equal(stats.reply_buffers_made_ahead, 5, `${peer.name}: Buffers made ahead`);
        assert.equal(stats.reply_buffers_used_ahead, 4, `${peer.name}: replies read into them`);
        // Another size: nothing made ahead fits, and the reply is whole.
        const other = pseudoRandomBytes(size + 4096, 50);
        assert.ok(Buffer.from(channel.requestBinarySync("echo", other)).equals(other), `${peer.name}: other size differs`);
        assert.equal(channel.stats().reply_buffers_used_ahead, 4);
        assert.equal(channel.stats().reply_buffers_made_ahead, 5);
        // Past 1 MiB, none is made ahead, however many come in one size.
        const large = pseudoRandomBytes(2 << 20, 60);
        for (let i = 0; i < 3; i++) assert.ok(Buffer.from(channel.requestBinarySync("echo", large)).equals(large));
        assert.equal(channel.stats().reply_buffers_made_ahead, 5, `${peer.name}: made ahead past 1 MiB`);
        assert.equal(channel.requestSync("echo", "small"), "small");
      });
    }
  });

  test("collectTiming: lastBytesSent and lastBytesReceived count payload bytes", () => {
    withChannel(spinrpcPeer(), ["--api"], (channel) => {
      channel.requestSync("echo", "héllo");
      assert.equal(channel.lastBytesSent, 6);
      assert.equal(channel.lastBytesReceived, 6);
      channel.requestBinarySync("echo", new Uint8Array(3));
      assert.equal(channel.lastBytesSent, 3);
      assert.equal(channel.lastBytesReceived, 3);
    }, true);
    withChannel(spinrpcPeer(), ["--api"], (channel) => {
      channel.requestSync("echo", "x");
      assert.equal(channel.lastBytesSent, 0);
    });
    // Any value but an options object is collectTiming by truthiness, as
    // the TS 7 channel takes it (the API passes options.collectTiming on).
    for (const [value, on] of [[1, true], ["yes", true], [0, false], [null, false], ["", false]]) {
      withChannel(spinrpcPeer(), ["--api"], (channel) => assert.equal(channel.collectTiming, on, JSON.stringify(value)), value);
    }
  });

  test("replies over 256 MiB are taken, as by the TS 7 channel; maxMessageBytes lowers the bound", () => {
    // tsgo echoes a 260 MiB binary payload; the shim's default (256 MiB,
    // protocol/frame.h) refused it and left the channel unusable.
    const big = pseudoRandomBytes(260 << 20, 11);
    withChannel(tsgoPeer(), ["--api"], (channel) => {
      const reply = channel.requestBinarySync("echo", big);
      assert.equal(reply.length, big.length);
      assert.ok(Buffer.from(reply.buffer, reply.byteOffset, reply.length).equals(big), "the 260 MiB reply differs");
      assert.equal(channel.requestSync("echo", "after"), "after");
    });
    withChannel(spinrpcPeer(), ["--api"], (channel) => {
      assert.throws(() => channel.requestBinarySync("echo", new Uint8Array(2 << 20)),
        (e) => e.code === "ERR_SPINRPC_PROTOCOL" && /exceeds the limit of 1048576 bytes/.test(e.message));
    }, { maxMessageBytes: 1 << 20 });
  });

  test("a NUL byte in the executable or an argument is refused, as Node's spawn refuses it", () => {
    const path = spinrpcPeer().path;
    for (const [exe, args, name] of [[path + "\0junk", ["--api"], "file"], [path, ["--api", "--cwd", "/tmp\0/x"], "args[2]"]]) {
      assert.throws(() => new SyncRpcChannel(exe, args), (e) => {
        assert.equal(e.name, "TypeError");
        assert.equal(e.code, "ERR_INVALID_ARG_VALUE");
        assert.match(e.message, new RegExp(`^The argument '${name.replace(/[[\]]/g, "\\$&")}' must be a string without null bytes`));
        return true;
      });
    }
  });

  test("spin options: the options object, then the environment", () => {
    withChannel(spinrpcPeer(), ["--api"], (channel) => {
      const s = channel.stats();
      assert.equal(s.budget_us, 0);
      assert.equal(channel.requestSync("echo", "x"), "x");
      assert.ok(channel.stats().waits > 0);
    }, { spinUs: 0 });
    process.env.TSGO_SYNC_SPIN_US = "37";
    process.env.TSGO_SYNC_SPIN_ADAPTIVE = "0";
    try {
      withChannel(spinrpcPeer(), ["--api"], (channel) => {
        const s = channel.stats();
        if (s.budget_reason.includes("CPU")) return; // fewer than 2 CPUs: spinning is off whatever the setting
        assert.equal(s.budget_us, 37);
        assert.equal(s.adaptive, false);
      });
    } finally {
      delete process.env.TSGO_SYNC_SPIN_US;
      delete process.env.TSGO_SYNC_SPIN_ADAPTIVE;
    }
    assert.throws(() => new SyncRpcChannel(spinrpcPeer().path, ["--api"], { spinUS: 5 }), { name: "TypeError", message: /unknown option spinUS/ });
    assert.throws(() => new SyncRpcChannel(spinrpcPeer().path, ["--api"], { spinUs: -1 }), TypeError);
    // placement (docs/PLACEMENT.md): the option beats the default; budget 0 turns it off.
    withChannel(spinrpcPeer(), ["--api"], (channel) => {
      assert.equal(channel.requestSync("echo", "p"), "p");
      const s = channel.stats();
      assert.equal(s.placement, "off");
    }, { placement: "off", spinUs: 50 });
    withChannel(spinrpcPeer(), ["--api"], (channel) => {
      const s = channel.stats();
      if (s.budget_reason.includes("CPU")) return; // fewer than 2 CPUs: no budget, no placement
      assert.equal(s.placement, "occupy");
    }, { placement: "occupy", spinUs: 50 });
    assert.throws(() => new SyncRpcChannel(spinrpcPeer().path, ["--api"], { placement: "sometimes" }), { name: "TypeError", message: /placement must be/ });
  });

  test("env: the server gets the option's environment, and the spin settings come from it", () => {
    const env = { PATH: process.env.PATH, TSGO_SYNC_SPIN_US: "41", TSGO_SYNC_SPIN_ADAPTIVE: "0" };
    withChannel(spinrpcPeer(), ["--api"], (channel) => {
      const server = JSON.parse(channel.requestSync("getChannelStats", ""));
      assert.equal(server.budget_reason, "TSGO_SYNC_SPIN_US=41");
      assert.equal(server.budget_us, 41);
      assert.equal(channel.stats().budget_reason, "TSGO_SYNC_SPIN_US=41");
    }, { env });
    assert.equal(process.env.TSGO_SYNC_SPIN_US, undefined); // ours untouched
    for (const bad of [{ A: "x\0y" }, { "A\0B": "x" }]) {
      assert.throws(() => new SyncRpcChannel(spinrpcPeer().path, ["--api"], { env: bad }),
        { name: "TypeError", code: "ERR_INVALID_ARG_VALUE", message: /^The property 'options\.env\['A/ });
    }
    assert.throws(() => new SyncRpcChannel(spinrpcPeer().path, ["--api"], { env: "PATH=/bin" }),
      { name: "TypeError", message: /option env must be an object/ });
  });

  test("worker: the server gets the worker's process.env, as through the TS 7 channel", async () => {
    // The worker changes its own copy of process.env; the process's C
    // environment (what the addon would pass by itself) keeps none of it.
    const code = `
      const { parentPort } = require("node:worker_threads");
      process.env.TSGO_SYNC_SPIN_US = "43";
      import(${JSON.stringify(pathToFileURL(INDEX).href)}).then(({ SyncRpcChannel }) => {
        const out = {};
        for (const third of [undefined, true]) {
          const channel = new SyncRpcChannel(${JSON.stringify(spinrpcPeer().path)}, ["--api"], third);
          try {
            out[String(third)] = {
              server: JSON.parse(channel.requestSync("getChannelStats", "")).budget_reason,
              client: channel.stats().budget_reason,
              timing: channel.collectTiming,
            };
          } finally {
            channel.close();
          }
        }
        // Options whose spinUs is inherited: the addon reads inherited
        // properties, so the worker's wrapper must keep them too.
        const inherited = new SyncRpcChannel(${JSON.stringify(spinrpcPeer().path)}, ["--api"], Object.create({ spinUs: 29 }));
        try {
          out.inherited = {
            server: JSON.parse(inherited.requestSync("getChannelStats", "")).budget_reason,
            clientBudget: inherited.stats().budget_us,
          };
        } finally {
          inherited.close();
        }
        parentPort.postMessage(out);
      });`;
    const { Worker } = await import("node:worker_threads");
    const worker = new Worker(code, { eval: true });
    // Its loop's descriptors close when it has exited; the tests after
    // this one count ours. Listened for from the start: a worker that ends
    // at once has its last message and its exit emitted in one go.
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    const out = await new Promise((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    await exited;
    const { inherited, ...byThird } = out;
    assert.equal(inherited.server, "TSGO_SYNC_SPIN_US=43");
    assert.equal(inherited.clientBudget, 29);
    for (const [third, seen] of Object.entries(byThird)) {
      assert.equal(seen.server, "TSGO_SYNC_SPIN_US=43", third);
      assert.equal(seen.client, "TSGO_SYNC_SPIN_US=43", third);
      assert.equal(seen.timing, third === "true", third);
    }
    assert.equal(process.env.TSGO_SYNC_SPIN_US, undefined);
  });

  test("many channels in one process, requests interleaved", () => {
    const fdsBefore = readdirSync("/proc/self/fd").length;
    const channels = [];
    try {
      for (let i = 0; i < 24; i++) {
        const peer = i % 4 === 3 ? tsgoPeer() : spinrpcPeer();
        channels.push(new SyncRpcChannel(peer.path, ["--api"]));
      }
      for (let round = 0; round < 50; round++) {
        channels.forEach((c, i) => assert.equal(c.requestSync("echo", `${i}:${round}`), `${i}:${round}`));
      }
    } finally {
      for (const c of channels) c.close();
    }
    for (const c of channels) assert.equal(c.pid, -1);
    assert.equal(readdirSync("/proc/self/fd").length, fdsBefore, "every pipe end closed");
  });

  test("channels left open at exit: Node exits and no child is left running", async () => {
    // A sync API server exits on EOF; `sleep` ignores it and must be killed.
    const program = (ending) => `
      import { SyncRpcChannel } from ${JSON.stringify(pathToFileURL(INDEX).href)};
      const a = new SyncRpcChannel(${JSON.stringify(spinrpcPeer().path)}, ["--api"]);
      a.requestSync("echo", "x");
      const b = new SyncRpcChannel("sleep", ["600"]);
      console.log(a.pid, b.pid);
      ${ending}`;
    for (const ending of ["", "process.exit(0);", "throw new Error('uncaught');", "setTimeout(() => {}, 10);"]) {
      const run = spawnSync(process.execPath, ["--input-type=module", "-e", program(ending)],
        { encoding: "utf8", timeout: 30_000 });
      assert.notEqual(run.signal, "SIGTERM", `node did not exit by itself (${JSON.stringify(ending)})`);
      const pids = run.stdout.trim().split(" ").map(Number);
      assert.equal(pids.length, 2, run.stdout + run.stderr);
      for (const pid of pids) await waitGone(pid, `child of a node that ended with ${JSON.stringify(ending)}`);
    }
    // process.exit() from inside a callback: the child is ended and reaped
    // (not left a zombie for init, which here does not reap), and nothing
    // claims it could not be.
    const inCallback = `
      import { SyncRpcChannel } from ${JSON.stringify(pathToFileURL(INDEX).href)};
      const c = new SyncRpcChannel(${JSON.stringify(scriptedPeer().path)}, []);
      console.log(c.pid);
      c.registerCallback("exits", () => process.exit(3));
      c.requestSync("callback", "exits");`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", inCallback], { encoding: "utf8", timeout: 30_000 });
    assert.equal(run.status, 3, run.stderr);
    assert.equal(run.stderr, "");
    const child = Number(run.stdout.trim());
    await waitGone(child, "child of a node that exited inside a callback");
    assert.throws(() => process.kill(child, 0), { code: "ESRCH" }, `child ${child} left unreaped`);
  });
  test("a callback the engine stops (a worker's exit or terminate(), a vm timeout): no crash, the channel is broken", async () => {
    // node-addon-api used to abort the whole process here ("FATAL ERROR:
    // Error::Error napi_define_properties", status 134). Each case in a
    // Node of its own, so that such an abort fails this test, not the run.
    const index = JSON.stringify(pathToFileURL(INDEX).href);
    const peer = JSON.stringify(scriptedPeer().path);
    const inWorker = (stop) => `
      import { Worker, isMainThread, parentPort } from "node:worker_threads";
      import { SyncRpcChannel } from ${index};
      if (isMainThread) {
        const w = new Worker(new URL(import.meta.url));
        let child = 0;
        w.on("message", (pid) => { child = pid; });
        ${stop === "terminate" ? "setTimeout(() => w.terminate(), 300);" : ""}
        w.on("exit", (code) => console.log(JSON.stringify({ code, child })));
      } else {
        const c = new SyncRpcChannel(${peer}, []);
        parentPort.postMessage(c.pid);
        c.registerCallback("cb", () => { ${stop === "terminate" ? "for (;;) {}" : "process.exit(7);"} });
        c.requestSync("callback", "cb");
      }`;
    for (const stop of ["exit", "terminate"]) {
      const dir = mkdtempSync(join(scratch, "worker-"));
      const file = join(dir, "w.mjs");
      writeFileSync(file, inWorker(stop));
      const run = spawnSync(process.execPath, [file], { encoding: "utf8", timeout: 30_000 });
      assert.equal(run.status, 0, `${stop}: ${run.stderr}`);
      const { code, child } = JSON.parse(run.stdout.trim());
      assert.equal(code, stop === "exit" ? 7 : 1, stop);
      await waitGone(child, `child of a worker stopped by ${stop}`);
    }
    const inVm = `
      import vm from "node:vm";
      import { SyncRpcChannel } from ${index};
      const c = new SyncRpcChannel(${peer}, []);
      c.registerCallback("cb", () => { for (;;) {} });
      const out = {};
      // The stop goes on through the script: neither its next statement
      // nor its catch block runs.
      const sandbox = { c, seen: [] };
      const script = "try { c.requestSync('callback', 'cb'); seen.push('returned'); } catch { seen.push('caught'); }";
      try { vm.runInNewContext(script, sandbox, { timeout: 200 }); } catch (e) { out.timeout = e.code; }
      out.seen = sandbox.seen;
      try { c.requestSync("echo", "x"); } catch (e) { out.after = e.message; }
      c.close();
      console.log(JSON.stringify(out));`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", inVm], { encoding: "utf8", timeout: 30_000 });
    assert.equal(run.status, 0, run.stderr);
    const out = JSON.parse(run.stdout.trim());
    assert.equal(out.timeout, "ERR_SCRIPT_EXECUTION_TIMEOUT");
    assert.deepStrictEqual(out.seen, []);
    assert.match(out.after, /unusable; close\(\) it/);
  });
});
