// The real asynchronous clients of every version in VERSIONS (vscode-jsonrpc
// underneath) driving spinrpc-server and that version's own server in
// --async mode: the same assertions run against both (docs/ASYNC.md). What
// the dialects answer differently (initialize) comes from the table recorded
// from the real servers (goldens/dialects.mjs). A 7.1 client passes
// --useCaseSensitiveFileNames itself, and sends the requests it is given at
// once as one batchRequests (docs/PROTOCOL.md, "batchRequests").

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { spinrpcPeer, versionPeer, requireBinary, scriptedServer } from "./peers.mjs";
import { VERSIONS } from "./versions.mjs";
import { dialectOf } from "./goldens/dialects.mjs";

const scratch = mkdtempSync(join(tmpdir(), "spinrpc-async-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

const FS_CALLBACKS = ["readFile", "fileExists", "directoryExists", "getAccessibleEntries", "realpath"];

/**
 * A version's async API and a virtual file system for its callbacks: 7.0's
 * createVirtualFileSystem; 7.1 has none (its fs export builds request file
 * systems), so a map of files served through plain callback functions, the
 * callbacks 7.1 adds left to the server (serverFS.useOS).
 */
async function load(v) {
  const { API } = await import(v.async);
  const fsSpecifier = v.async.replace(/async$/, "fs");
  if (v.dialect === "7.0") {
    const { createVirtualFileSystem } = await import(fsSpecifier);
    return { API, virtualFs: createVirtualFileSystem, useOS: undefined, encode: (name, r) => r };
  }
  const { serverFS } = await import(fsSpecifier);
  // How this client encodes a callback's result on the wire (its own code).
  const { encodeFileSystemCallbackResult } = await import(pathToFileURL(join(v.dir, "dist", "api", "fsCallbacks.js")).href);
  const virtualFs = (files) => {
    const dirs = new Set();
    for (const f of Object.keys(files)) for (let d = f; d.lastIndexOf("/") > 0;) { d = d.slice(0, d.lastIndexOf("/")); dirs.add(d); }
    dirs.add("/");
    const children = (dir, set) => [...set].filter((p) => p !== dir && p.slice(0, p.lastIndexOf("/") || 1) === dir).map((p) => p.slice(p.lastIndexOf("/") + 1));
    return {
      readFile: (p) => files[p],
      fileExists: (p) => p in files,
      directoryExists: (p) => dirs.has(p),
      getAccessibleEntries: (p) => ({ files: children(p, Object.keys(files)), directories: children(p, dirs) }),
      realpath: (p) => p,
      stat: serverFS.useOS,
      writeFile: serverFS.useOS,
      removeFile: serverFS.useOS,
    };
  };
  return { API, virtualFs, useOS: serverFS.useOS, encode: encodeFileSystemCallbackResult };
}

/** A virtual file system that records every callback the server makes. */
function recordingFs(lib, files) {
  const fs = lib.virtualFs(files);
  const calls = [];
  const wrapped = { ...fs };
  for (const name of FS_CALLBACKS) {
    wrapped[name] = (path) => { calls.push([name, path]); return fs[name](path); };
  }
  return { fs: wrapped, calls };
}

for (const v of VERSIONS) {
  const lib = await load(v);
  const D = dialectOf(v);

  for (const peer of [spinrpcPeer(), versionPeer(v)]) {
    const open = (options = {}) => {
      requireBinary(peer);
      const api = new lib.API({ tsserverPath: peer.path, cwd: scratch, ...options });
      return { api, client: api.client, request: (m, p) => api.client.apiRequest(m, p) };
    };

    describe(`${v.id} (${v.name}@${v.version}, API ${v.dialect}): real async client against ${peer.name}`, () => {
      test("initialize, echo of objects and large payloads, ping", async () => {
        const { api, request } = open();
        try {
          const init = await request("initialize", null);
          assert.deepEqual(init, D.initializeValue(scratch));
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

      test("200 concurrent requests, each answered by id (7.1: as one batchRequests)", async () => {
        const { api, request } = open();
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
        const { api, request } = open();
        try {
          await assert.rejects(request("noSuchMethod", {}), (e) => e.code === -32603 &&
            e.message === 'api: invalid request: unknown API method "noSuchMethod"');
          assert.equal(await request("ping", null), "pong");  // the session goes on
        } finally {
          await api.close();
        }
      });

      if (D.batchRequests) {
        test("7.1: requests sent together go as one batchRequests; a failing one rejects alone, the others resolve", async () => {
          const { api, request } = open();
          try {
            assert.equal(await request("ping", null), "pong");
            const settled = await Promise.allSettled([request("echo", { a: 1 }), request("nope", 1), request("initialize", null), request("batchRequests", { requests: [] }), request("ping", null)]);
            assert.deepEqual(settled.map((s) => s.status), ["fulfilled", "rejected", "fulfilled", "rejected", "fulfilled"]);
            assert.deepEqual(settled[0].value, { a: 1 });
            assert.equal(settled[1].reason.message, 'api: invalid request: unknown API method "nope"');
            assert.deepEqual(settled[2].value, D.initializeValue(scratch));
            assert.equal(settled[3].reason.message, D.batch.nested);
            assert.equal(settled[4].value, "pong");
          } finally {
            await api.close();
          }
        });

        for (const maxResponseBytesPerPage of [1, 64, 1000]) {
          test(`7.1: maxResponseBytesPerPage ${maxResponseBytesPerPage}: the client follows the continuation tokens to the last page`, async () => {
            const { api, request } = open({ maxResponseBytesPerPage });
            try {
              assert.equal(await request("ping", null), "pong");
              const want = Array.from({ length: 50 }, (_, i) => ({ i, s: "q".repeat(i) }));
              assert.deepEqual(await Promise.all(want.map((x) => request("echo", x))), want);
            } finally {
              await api.close();
            }
          });
        }
      }

      test("timing: getServerTiming and resetServerTiming with collectTiming", async () => {
        const { api, request } = open({ collectTiming: true });
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
        const { api, request, client } = open();
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
  // callbacks and returns what the client answered (7.1's client wraps each
  // result, {"kind":"value","value":…}: its own encoder gives the expected
  // values). The version's own server Calls back when it loads a project.
  describe(`${v.id} (${v.name}@${v.version}, API ${v.dialect}): real async client, server -> client calls through --callbacks`, () => {
    const SCRIPTED = scriptedServer();

    test("scripted server: callFs Calls readFile and fileExists; results in order, a request meanwhile, an error response", async () => {
      requireBinary(SCRIPTED);
      const { fs, calls } = recordingFs(lib, { "/v/a.ts": "export const a = 1;\n" });
      // realpath is not registered: the client answers its call with -32601.
      if (lib.useOS) fs.realpath = lib.useOS; else delete fs.realpath;
      const api = new lib.API({ tsserverPath: SCRIPTED.path, cwd: "/v", fs });
      const request = (m, p) => api.client.apiRequest(m, p);
      // 7.0's virtual fs gives undefined for a missing file, sent as null.
      const enc = (name, r) => (v.dialect === "7.0" && r === undefined ? null : lib.encode(name, r));
      try {
        assert.equal(await request("ping", null), "pong");
        const result = await request("callFs", { calls: [["readFile", "/v/a.ts"], ["fileExists", "/v/a.ts"], ["fileExists", "/v/b.ts"], ["readFile", "/v/b.ts"]] });
        assert.deepEqual(result, [enc("readFile", v.dialect === "7.0" ? { content: "export const a = 1;\n" } : "export const a = 1;\n"),
          enc("fileExists", true), enc("fileExists", false), enc("readFile", undefined)]);
        assert.deepEqual(calls, [["readFile", "/v/a.ts"], ["fileExists", "/v/a.ts"], ["fileExists", "/v/b.ts"], ["readFile", "/v/b.ts"]]);
        // Requests sent while a call is pending are answered (after it: docs/ASYNC.md).
        const [both, echoed] = await Promise.all([
          request("callFs", { calls: [["directoryExists", "/v"], ["getAccessibleEntries", "/v"]] }),
          request("echo", { during: "call" }),
        ]);
        assert.deepEqual(both, [enc("directoryExists", true), enc("getAccessibleEntries", { files: ["a.ts"], directories: [] })]);
        assert.deepEqual(echoed, { during: "call" });
        // The client's error response fails the request with one line, no stack trace.
        await assert.rejects(request("callFs", { calls: [["realpath", "/v"]] }),
          (e) => e.message === "api: remote error [-32601]: Unhandled method realpath" && (v.dialect === "7.1" || e.code === -32603));
        assert.equal(await request("ping", null), "pong");  // the session goes on
      } finally {
        await api.close();
      }
    });

    test(`${v.id}'s server: parseConfigFile reads a virtual project through the client's callbacks`, async () => {
      const real = versionPeer(v);
      requireBinary(real);
      const { fs, calls } = recordingFs(lib, {
        "/virtual/cwd/tsconfig.json": '{"compilerOptions":{"strict":true},"include":["src"]}',
        "/virtual/cwd/src/a.ts": "export const a = 1;\n",
      });
      const api = new lib.API({ tsserverPath: real.path, cwd: "/virtual/cwd", fs });
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
}
