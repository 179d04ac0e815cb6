// The channel itself, per TypeScript 7 version (versions.mjs): the same
// scenarios run on that version's own pure-JS channel (dist/api/syncChannel.js)
// and on the class the register hook puts in its place (node/channels.mjs
// channelFor), against the scripted peer (tests/peers/), and the two must
// agree: replies, error texts, the callback-failure rule (7.0: the request
// throws; 7.1: every later request throws the same error), unregisterCallback
// (7.1 only), byte counts, close(). Where they differ on purpose the
// scenario says so and checks each side (docs/NODE.md, "Supported versions").

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO_ROOT, requireBinary, scriptedPeer, watchdog } from "./peers.mjs";
import { VERSIONS } from "./versions.mjs";

const { channelFor } = await import(pathToFileURL(join(REPO_ROOT, "node", "channels.mjs")).href);
const { identifyChannel } = await import(pathToFileURL(join(REPO_ROOT, "node", "recognize.mjs")).href);

/** Runs fn(channel) on a fresh channel of class Channel to the scripted peer; returns what fn returns. */
function withChannel(Channel, fn, collectTiming = false) {
  const peer = scriptedPeer();
  requireBinary(peer);
  const channel = new Channel(peer.path, [], collectTiming);
  const stop = watchdog(channel.pid ?? channel.child.pid);
  try {
    return fn(channel);
  } finally {
    stop();
    channel.close();
  }
}

/** What a call did: its value, or the error's message (and whether it is `same`). */
function outcome(fn, same) {
  try {
    const value = fn();
    return { value: value instanceof Uint8Array ? [...value] : value };
  } catch (e) {
    return same === undefined ? { error: e.message } : { error: e.message, same: e === same };
  }
}

function errorOf(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

// Each scenario: (channel) → a plain record. `differs(version)` names the
// keys where spinrpc's channel differs on purpose, with a check per side.
const SCENARIOS = [
  {
    name: "echoes: string, binary, empty; a binary reply is a Buffer at offset 0",
    run: (c) => {
      const bytes = c.requestBinarySync("echo", new Uint8Array(Array.from({ length: 256 }, (_, i) => i)));
      return {
        text: c.requestSync("echo", "héllo ✓"),
        empty: c.requestSync("echo", ""),
        bytes: [...bytes],
        offset: bytes.byteOffset,
        isBuffer: Buffer.isBuffer(bytes),
      };
    },
  },
  {
    name: "callbacks: results go back; registerCallback again replaces",
    run: (c) => {
      c.registerCallback("twice", (name, payload) => `<${name}:${payload}>`);
      const first = c.requestSync("callbackTwice", "twice");
      c.registerCallback("twice", (_, payload) => `[${payload}]`);
      return { first, second: c.requestSync("callbackTwice", "twice") };
    },
  },
  {
    name: "an Error reply is an Error with the server's text; the channel serves on",
    run: (c) => ({ error: outcome(() => c.requestSync("throwWith", "boom")), after: c.requestSync("echo", "after") }),
  },
  {
    name: "a callback that throws: the request throws the version's error; what later requests do",
    run: (c, ts) => {
      c.registerCallback("fails", () => { throw new Error("  failed on purpose \n"); });
      const first = errorOf(() => c.requestSync("callbackError", "fails"));
      return {
        first: first?.message,
        later: outcome(() => c.requestSync("echo", "later"), first),
      };
    },
    // 7.0's channel leaves the failed request's reply unread, and the next
    // request reads it; spinrpc's reads it with the failed request.
    differs: (ts) => ts.dialect === "7.0" && {
      later: {
        pure: { error: "name mismatch for response: expected `echo`, got `callbackError`", same: false },
        spinrpc: { value: "later" },
      },
    },
  },
  {
    name: "a callback that throws a string or returns no string",
    run: (c) => {
      c.registerCallback("s", () => { throw "  a bare string "; });
      const thrown = errorOf(() => c.requestSync("callbackError", "s"))?.message;
      return { thrown };
    },
  },
  {
    name: "a callback that returns no string fails the request",
    run: (c) => {
      c.registerCallback("n", () => 42);
      const message = errorOf(() => c.requestSync("callbackError", "n"))?.message;
      return { prefix: message?.slice(0, "Error calling callback `n`: ".length) };
    },
  },
  {
    name: "unregisterCallback: 7.1 has it, and a Call of the name then fails as an unknown one; 7.0 has none",
    run: (c, ts) => {
      if (ts.dialect === "7.0") return { has: typeof c.unregisterCallback };
      c.registerCallback("gone", () => "here");
      const before = c.requestSync("callback", "gone");
      c.unregisterCallback("gone");
      const failed = errorOf(() => c.requestSync("callback", "gone"));
      return {
        has: typeof c.unregisterCallback,
        before,
        failed: failed?.message,
        later: outcome(() => c.requestSync("echo", "later"), failed),
      };
    },
  },
  {
    name: "a Call of a name never registered",
    run: (c) => ({ result: outcome(() => c.requestSync("callbackError", "neverRegistered")) }),
    // The TS 7 channels throw from the request; spinrpc's answers the
    // server with the same CallError text and the request goes on.
    differs: () => ({
      result: {
        pure: { error: "no callback named `neverRegistered` found" },
        spinrpc: { value: "unknown callback: `neverRegistered`. Please make sure to register it on the JavaScript side before invoking it." },
      },
    }),
  },
  {
    name: "byte counts with collectTiming",
    collectTiming: true,
    run: (c) => {
      c.requestSync("echo", "héllo");
      const text = [c.lastBytesSent, c.lastBytesReceived];
      c.requestBinarySync("echo", new Uint8Array(300));
      return { collectTiming: c.collectTiming, text, binary: [c.lastBytesSent, c.lastBytesReceived] };
    },
  },
  {
    name: "close(): later requests say it is closed; close() again is harmless",
    run: (c) => {
      c.requestSync("echo", "x");
      c.close();
      const after = outcome(() => c.requestSync("echo", "y"));
      c.close();
      return { after };
    },
  },
];

for (const ts of VERSIONS) {
  const info = identifyChannel(ts.channel);
  const { SyncRpcChannel: Pure } = await import(pathToFileURL(ts.channel).href);
  const Ours = channelFor(info, Pure);

  describe(`${ts.name}@${ts.version}: its pure-JS channel and spinrpc's agree`, () => {
    test("spinrpc's class is the one the hook uses for this version", () => {
      assert.notEqual(Ours, Pure);
      assert.deepEqual(Ours.spinrpc, { name: ts.name, version: ts.version, dialect: ts.dialect, file: ts.channel });
    });

    for (const scenario of SCENARIOS) {
      test(scenario.name, () => {
        const pure = withChannel(Pure, (c) => scenario.run(c, ts), scenario.collectTiming);
        const ours = withChannel(Ours, (c) => scenario.run(c, ts), scenario.collectTiming);
        const differs = scenario.differs?.(ts) || {};
        for (const [key, { pure: wantPure, spinrpc: wantOurs }] of Object.entries(differs)) {
          assert.deepEqual(pure[key], wantPure, `pure-JS channel, ${key}`);
          assert.deepEqual(ours[key], wantOurs, `spinrpc's channel, ${key}`);
          delete pure[key];
          delete ours[key];
        }
        assert.deepEqual(ours, pure);
      });
    }
  });
}
