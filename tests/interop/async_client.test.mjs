// The real asynchronous client (@typescript/native-preview/unstable/async,
// vscode-jsonrpc underneath) driving both peers in --async mode: the same
// assertions run against spinrpc-server and tsgo (docs/ASYNC.md).

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { API } from "@typescript/native-preview/unstable/async";
import { peers, requireBinary } from "./peers.mjs";

const scratch = mkdtempSync(join(tmpdir(), "spinrpc-async-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

function open(peer, options = {}) {
  requireBinary(peer);
  const api = new API({ tsserverPath: peer.path, cwd: scratch, ...options });
  return { api, client: api.client, request: (m, p) => api.client.apiRequest(m, p) };
}

for (const peer of peers()) {
  describe(`real async client against ${peer.name}`, () => {
    test("initialize, echo of objects and large payloads, ping", async () => {
      const { api, request } = open(peer);
      try {
        const init = await request("initialize", null);
        assert.deepEqual(init, { useCaseSensitiveFileNames: true, currentDirectory: scratch });
        const obj = { hello: "wörld", n: [1, 2.5], nested: { a: [true, false, null], s: "\u2028<>&\"\\\n" } };
        assert.deepEqual(await request("echo", obj), obj);
        const big = { text: "x".repeat(4 << 20), list: Array.from({ length: 20000 }, (_, i) => ({ i, s: `v${i}` })) };
        assert.deepEqual(await request("echo", big), big);
        assert.deepEqual(await request("echo", undefined), [null]);
        assert.equal(await request("ping", null), "pong");
      } finally {
        await api.close();
      }
    });

    test("200 concurrent requests, each answered by id", async () => {
      const { api, request } = open(peer);
      try {
        // One request first: the client spawns its server on the first
        // request and, until that process is up, spawns one more for every
        // further request it is given (Client.connect has no pending state).
        assert.equal(await request("ping", null), "pong");
        const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => request("echo", { i, pad: "p".repeat(i * 10) })));
        replies.forEach((r, i) => assert.deepEqual(r, { i, pad: "p".repeat(i * 10) }));
      } finally {
        await api.close();
      }
    });

    test("unknown methods are a ResponseError with code -32603", async () => {
      const { api, request } = open(peer);
      try {
        await assert.rejects(request("noSuchMethod", {}), (e) => e.code === -32603 &&
          e.message === 'api: invalid request: unknown API method "noSuchMethod"');
        assert.equal(await request("ping", null), "pong");  // the session goes on
      } finally {
        await api.close();
      }
    });

    test("timing: getServerTiming and resetServerTiming with collectTiming", async () => {
      const { api, request } = open(peer, { collectTiming: true });
      try {
        await request("echo", 1);
        await request("nope", 1).catch(() => {});
        const t = await request("getServerTiming", null);
        assert.equal(t.enabled, true);
        assert.equal(t.totals.requestCount, 2);
        assert.deepEqual(t.recentRequests.map((r) => r.method), ["echo", "nope"]);
        assert.equal(await request("resetServerTiming", null), null);
        assert.deepEqual(await request("getServerTiming", null),
          { enabled: true, totals: { requestCount: 0, totalProcessingTimeMs: 0 }, recentRequests: [] });
      } finally {
        await api.close();
      }
    });

    test("close() ends the session; the server exits 0", async () => {
      const { api, request, client } = open(peer);
      await request("ping", null);
      const child = client.process;
      assert.ok(child, "the async client keeps its server process in client.process");
      await api.close();
      if (child.exitCode === null) await new Promise((r) => child.once("exit", r));
      assert.equal(child.exitCode, 0);
    });
  });
}
