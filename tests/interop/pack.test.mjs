// The package a tool author installs: `npm pack` of node/ goes into a fresh
// project that has only typescript@7.0.2 besides it, and there
// `node --import spinrpc/register` puts spinrpc's channel under the API, for
// an ES-module and a CommonJS program. npm fetches typescript@7.0.2 and
// spinrpc's one dependency (require-in-the-middle) from its cache or the
// registry (--prefer-offline). About 5 s here.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "./peers.mjs";

const scratch = mkdtempSync(join(tmpdir(), "spinrpc-pack-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

function npm(args, cwd) {
  const r = spawnSync("npm", args, { cwd, encoding: "utf8", timeout: 120_000, env: { ...process.env, NODE_OPTIONS: "" } });
  assert.equal(r.status, 0, `npm ${args.join(" ")}: ${r.error ?? ""}${r.stderr}`);
  return r.stdout;
}

test("npm pack of node/ installs beside typescript@7.0.2 alone and works with --import spinrpc/register", () => {
  const [packed] = JSON.parse(npm(["pack", "--json", "--pack-destination", scratch], join(REPO_ROOT, "node")));
  const files = packed.files.map((f) => f.path).sort();
  assert.ok(files.includes("build/spinrpc.node"), files.join(" "));
  assert.ok(!files.some((f) => f.includes("spinrpc-server")), "the tarball carries no spinrpc-server");
  writeFileSync(join(scratch, "package.json"), '{"name":"a-tool","private":true}\n');
  npm(["install", "--no-audit", "--no-fund", "--prefer-offline", "typescript@7.0.2", join(scratch, packed.filename)], scratch);
  assert.deepEqual(readdirSync(join(scratch, "node_modules")).filter((d) => !d.startsWith(".")).sort(),
    ["@typescript", "debug", "module-details-from-path", "ms", "require-in-the-middle", "spinrpc", "typescript"]);
  const body = `const api = new API({ cwd: process.cwd() });
console.log(JSON.stringify({ spinrpc: api.client.channel.constructor.spinrpc?.version ?? null, echo: api.client.echo("packed") }));
api.close();\n`;
  writeFileSync(join(scratch, "app.mjs"), `import { API } from "typescript/unstable/sync";\n${body}`);
  writeFileSync(join(scratch, "app.cjs"), `const { API } = require("typescript/unstable/sync");\n${body}`);
  for (const app of ["app.mjs", "app.cjs"]) {
    const r = spawnSync(process.execPath, ["--import", "spinrpc/register", app],
      { cwd: scratch, encoding: "utf8", timeout: 60_000, env: { ...process.env, NODE_OPTIONS: "", SPINRPC_BINDING: "required" } });
    assert.equal(r.status, 0, `${app}: ${r.stderr}`);
    assert.deepEqual(JSON.parse(r.stdout), { spinrpc: "7.0.2", echo: "packed" }, app);
    assert.equal(r.stderr, "", app);
  }
});
