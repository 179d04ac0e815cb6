// SPINRPC_BINDING=required and =report under `node --import
// node/register.mjs`, for the TypeScript 7 sync APIs the module hook cannot
// reach (docs/NODE.md, "When the hook cannot reach an API"):
//
// - a tool bundled with esbuild, which inlines its own copy of the sync
//   channel: per version (versions.mjs), an ES-module bundle (and a
//   CommonJS one for the 7.0 API; 7.1's reads import.meta.url at load,
//   which a CommonJS bundle leaves undefined); the same tool bundled with
//   the TypeScript package left out runs on spinrpc's channel;
// - worker threads that run no --import preload: one started from source
//   text (eval: true), one from a file with execArgv: [].
//
// Under `required` each is an error naming where the server was started
// from and nothing starts; under `report` one line, and the API works on its
// own channel. Each runs against the version's own server. Every Node the
// suite runs on (scripts/test.sh: 20, 22, 24, 26) runs these.

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildSync } from "esbuild";
import { INTEROP_DIR, REPO_ROOT } from "./peers.mjs";
import { VERSIONS } from "./versions.mjs";

const REGISTER = join(REPO_ROOT, "node", "register.mjs");
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "spinrpc-required-")));
after(() => rmSync(scratch, { recursive: true, force: true }));
// What a bundle leaves out it imports at run time, from here.
symlinkSync(join(INTEROP_DIR, "node_modules"), join(scratch, "node_modules"));

/** node --import register.mjs FILE under SPINRPC_BINDING=binding: { status, stdout, stderr }. */
function run(file, binding, env = {}) {
  return spawnSync(process.execPath, ["--import", REGISTER, file], {
    cwd: scratch, encoding: "utf8", timeout: 60_000,
    env: { ...process.env, NODE_OPTIONS: "", SPINRPC_BINDING: binding, ...env },
  });
}

// The tool: the version's sync API with its own server, one echo; prints
// which channel's class the client has.
const TOOL = (ts) => `import { API } from ${JSON.stringify(ts.sync)};
const api = new API({ tsserverPath: process.env.SERVER, cwd: process.cwd() });
console.log(JSON.stringify({ spinrpc: api.client.channel.constructor.spinrpc?.version ?? null, echo: api.client.echo("hi") }));
api.close();
`;

function bundle(ts, format, external = []) {
  const source = join(scratch, `tool-${ts.id}.mjs`);
  writeFileSync(source, TOOL(ts));
  const outfile = join(scratch, `bundle-${ts.id}-${format}${external.length ? "-external" : ""}.${format === "esm" ? "mjs" : "cjs"}`);
  buildSync({ entryPoints: [source], bundle: true, platform: "node", format, outfile, external,
    nodePaths: [join(INTEROP_DIR, "node_modules")], logLevel: "error" });
  return outfile;
}

for (const ts of VERSIONS) {
  describe(`${ts.name}@${ts.version} bundled with esbuild`, () => {
    const formats = ts.dialect === "7.0" ? ["esm", "cjs"] : ["esm"];
    for (const format of formats) {
      test(`${format} bundle: an error under required, a line under report`, () => {
        const file = bundle(ts, format);
        const required = run(file, "required,report", { SERVER: ts.server });
        assert.notEqual(required.status, 0, required.stdout);
        assert.equal(required.stdout, "");
        assert.match(required.stderr, /ERR_SPINRPC_BINDING_REQUIRED/);
        assert.match(required.stderr, /spinrpc: a TypeScript 7 sync API starts its server \(.*\) on its own pure-JS channel, not spinrpc's, from new SyncRpcChannel \(/);
        assert.ok(required.stderr.includes(`${pathToFileURL(file).href}:`) || required.stderr.includes(`${file}:`), required.stderr);
        assert.match(required.stderr, /SPINRPC_BINDING=required makes that an error/);

        const report = run(file, "report", { SERVER: ts.server });
        assert.equal(report.status, 0, report.stderr);
        assert.deepEqual(JSON.parse(report.stdout), { spinrpc: null, echo: "hi" });
        const lines = report.stderr.split("\n").filter((line) => line.startsWith("spinrpc: "));
        assert.equal(lines.length, 1, report.stderr);
        assert.match(lines[0], /on its own pure-JS channel, not spinrpc's, from new SyncRpcChannel \(.*\) \(pid \d+\)$/);
      });
    }

    test("the TypeScript package left out of the bundle: spinrpc's channel under required", () => {
      const file = bundle(ts, "esm", [ts.alias]);
      const r = run(file, "required", { SERVER: ts.server });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { spinrpc: ts.version, echo: "hi" });
    });
  });
}

describe("worker threads that run no --import preload", () => {
  const ts = VERSIONS.find((v) => v.id === "7.0") ?? VERSIONS[0];
  const workerFile = join(scratch, "worker.mjs");
  writeFileSync(workerFile, `import { workerData } from "node:worker_threads";
const { API } = await import(workerData.sync);
const api = new API({ tsserverPath: workerData.server, cwd: process.cwd() });
console.log(JSON.stringify({ spinrpc: api.client.channel.constructor.spinrpc?.version ?? null, echo: api.client.echo("w") }));
api.close();
`);
  // Starts the worker `kind` and prints what became of it: its output, or
  // the code and message of its error.
  const main = (kind) => {
    const file = join(scratch, `main-${kind}.mjs`);
    const workerData = { sync: pathToFileURL(join(ts.dir, "dist", "api", "sync", "api.js")).href, server: ts.server };
    const start = kind === "eval"
      ? `new Worker(${JSON.stringify(`const { workerData } = require("node:worker_threads");
import(workerData.sync).then(({ API }) => {
  const api = new API({ tsserverPath: workerData.server, cwd: process.cwd() });
  console.log(JSON.stringify({ spinrpc: api.client.channel.constructor.spinrpc?.version ?? null, echo: api.client.echo("w") }));
  api.close();
});`)}, { eval: true, workerData })`
      : `new Worker(${JSON.stringify(workerFile)}, { execArgv: [], workerData })`;
    writeFileSync(file, `import { Worker } from "node:worker_threads";
const workerData = ${JSON.stringify(workerData)};
const worker = ${start};
worker.on("error", (e) => console.log(JSON.stringify({ code: e.code, message: e.message })));
`);
    return file;
  };

  for (const kind of ["eval", "execArgv"]) {
    test(`${kind === "eval" ? "eval: true" : "execArgv: []"}: an error in the worker under required, a line under report`, () => {
      const file = main(kind);
      const required = run(file, "required");
      assert.equal(required.status, 0, required.stderr);
      const failure = JSON.parse(required.stdout);
      assert.equal(failure.code, "ERR_SPINRPC_BINDING_REQUIRED", required.stdout);
      assert.match(failure.message, /starts its server \(.*\) on its own pure-JS channel, not spinrpc's, from new SyncRpcChannel \(.*syncChannel\.js:\d+:\d+\) in worker thread \d+; /);

      const report = run(file, "report");
      assert.equal(report.status, 0, report.stderr);
      assert.deepEqual(JSON.parse(report.stdout), { spinrpc: null, echo: "w" });
      assert.match(report.stderr, /^spinrpc: a TypeScript 7 sync API starts its server .* in worker thread \d+ \(pid \d+\)$/m);
    });
  }

  test("eval: true in a process started with flags Node refuses in a worker's execArgv: still watched", () => {
    const file = main("eval");
    const r = spawnSync(process.execPath, ["--max-old-space-size=512", "--import", REGISTER, file], {
      cwd: scratch, encoding: "utf8", timeout: 60_000, env: { ...process.env, NODE_OPTIONS: "", SPINRPC_BINDING: "required" },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).code, "ERR_SPINRPC_BINDING_REQUIRED", r.stdout);
  });
});

describe("the spawn watch", () => {
  test("a spawn with an argument that has no string: what this Node's spawn does without the watch", () => {
    // Node 20's spawn throws the conversion's error, Node 22 and later start
    // the program with "" in its place; the watch must not decide.
    const file = join(scratch, "no-text.mjs");
    writeFileSync(file, `import { spawn } from "node:child_process";
      const seen = [];
      for (const arg of [{ toString() { throw new Error("no text"); } }, Object.create(null), Symbol("s")]) {
        try {
          spawn("/bin/sh", ["-c", "exit 0", arg], { stdio: "ignore" }).on("error", () => {});
          seen.push("started");
        } catch (e) {
          seen.push(e.message);
        }
      }
      console.log(JSON.stringify(seen));`);
    const plain = spawnSync(process.execPath, [file], { cwd: scratch, encoding: "utf8", timeout: 60_000 });
    assert.equal(plain.status, 0, plain.stderr);
    for (const binding of ["", "required"]) {
      const watched = run(file, binding);
      assert.equal(watched.status, 0, watched.stderr);
      assert.equal(watched.stdout, plain.stdout, `SPINRPC_BINDING=${binding}`);
    }
  });
});
