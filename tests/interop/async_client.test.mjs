// The real asynchronous client (@typescript/native-preview/unstable/async,
// vscode-jsonrpc underneath) driving both peers in --async mode: the same
// assertions run against spinrpc-server and tsgo (docs/ASYNC.md).

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { API } from "@typescript/native-preview/unstable/async";
import { createVirtualFileSystem } from "@typescript/native-preview/unstable/fs";
import { peers, requireBinary, scriptedServer } from "./peers.mjs";

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

// Server -> client calls through --callbacks (docs/ASYNC.md, "Replies and
// handlers"). spinrpc-server's built-in methods never call the client, as
// tsgo's never do; the scripted server (tests/peers/, the server library
// with test methods) has callFs, which Calls the client's file-system
// callbacks. tsgo Calls back when it loads a project.
const SCRIPTED = scriptedServer();

/** A virtual file system that records every callback the server makes. */
function recordingFs(files) {
  const fs = createVirtualFileSystem(files);
  const calls = [];
  const wrapped = {};
  for (const name of ["readFile", "fileExists", "directoryExists", "getAccessibleEntries", "realpath"]) {
    wrapped[name] = (path) => { calls.push([name, path]); return fs[name](path); };
  }
  return { fs: wrapped, calls };
}

describe("real async client: a server -> client call through --callbacks", () => {
  test("scripted server: callFs Calls readFile and fileExists; results in order, a request meanwhile, an error response", async () => {
    requireBinary(SCRIPTED);
    const { fs, calls } = recordingFs({ "/v/a.ts": "export const a = 1;\n" });
    // realpath is not registered: the client answers its call with -32601.
    delete fs.realpath;
    const api = new API({ tsserverPath: SCRIPTED.path, cwd: "/v", fs });
    const request = (m, p) => api.client.apiRequest(m, p);
    try {
      assert.equal(await request("ping", null), "pong");
      const result = await request("callFs", { calls: [["readFile", "/v/a.ts"], ["fileExists", "/v/a.ts"], ["fileExists", "/v/b.ts"], ["readFile", "/v/b.ts"]] });
      // A missing file: the virtual fs returns undefined, which the client sends as null.
      assert.deepEqual(result, [{ content: "export const a = 1;\n" }, true, false, null]);
      assert.deepEqual(calls, [["readFile", "/v/a.ts"], ["fileExists", "/v/a.ts"], ["fileExists", "/v/b.ts"], ["readFile", "/v/b.ts"]]);
      // Requests sent while a call is pending are answered (after it: docs/ASYNC.md).
      const [both, echoed] = await Promise.all([
        request("callFs", { calls: [["directoryExists", "/v"], ["getAccessibleEntries", "/v"]] }),
        request("echo", { during: "call" }),
      ]);
      assert.deepEqual(both, [true, { files: ["a.ts"], directories: [] }]);
      assert.deepEqual(echoed, { during: "call" });
      // The client's error response fails the request with one line, no stack trace.
      await assert.rejects(request("callFs", { calls: [["realpath", "/v"]] }),
        (e) => e.code === -32603 && e.message === "api: remote error [-32601]: Unhandled method realpath");
      assert.equal(await request("ping", null), "pong");  // the session goes on
    } finally {
      await api.close();
    }
  });

  test("tsgo: parseConfigFile reads a virtual project through the client's callbacks", async () => {
    const tsgo = peers()[1];
    requireBinary(tsgo);
    const { fs, calls } = recordingFs({
      "/virtual/cwd/tsconfig.json": '{"compilerOptions":{"strict":true},"include":["src"]}',
      "/virtual/cwd/src/a.ts": "export const a = 1;\n",
    });
    const api = new API({ tsserverPath: tsgo.path, cwd: "/virtual/cwd", fs });
    try {
      const config = await api.parseConfigFile("/virtual/cwd/tsconfig.json");
      assert.deepEqual(config.fileNames, ["/virtual/cwd/src/a.ts"]);
      assert.equal(config.options.strict, true);
      assert.deepEqual(calls[0], ["readFile", "/virtual/cwd/tsconfig.json"]);
      assert.ok(calls.some(([name, path]) => name === "getAccessibleEntries" && path === "/virtual/cwd/src"), JSON.stringify(calls));
    } finally {
      await api.close();
    }
  });
});
