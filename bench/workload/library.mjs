// The library the workload walks (bench/workload/README.md): aws-cdk-lib's
// published .d.ts, pinned by bench/workload/package-lock.json and installed
// here on demand (CI never installs it), and the deterministic sample of its
// modules that record.mjs and e2e.mjs walk.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
export const LIBRARY_DIR = join(HERE, "node_modules", "aws-cdk-lib");
/** Every DEFAULT_EVERY-th module: 30 of 358, ~190k requests, under a minute. */
export const DEFAULT_EVERY = 12;

/** npm ci here unless the locked aws-cdk-lib is installed; returns its version. */
export function ensureLibrary() {
  const locked = JSON.parse(readFileSync(join(HERE, "package-lock.json"), "utf8")).packages["node_modules/aws-cdk-lib"].version;
  const manifest = join(LIBRARY_DIR, "package.json");
  if (!existsSync(manifest) || JSON.parse(readFileSync(manifest, "utf8")).version !== locked) {
    console.error(`npm ci in bench/workload (aws-cdk-lib@${locked})`);
    execFileSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: HERE, stdio: "inherit" });
  }
  return locked;
}

/**
 * Writes DIR/tsconfig.json over every `every`-th submodule of aws-cdk-lib
 * that has an index.d.ts, by sorted name, the first included. Returns
 * { modules: all names, sample: the walked names }.
 */
export function writeSampleProject(dir, every = DEFAULT_EVERY) {
  const modules = readdirSync(LIBRARY_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(LIBRARY_DIR, d.name, "index.d.ts")))
    .map((d) => d.name).sort();
  const sample = modules.filter((_, i) => i % every === 0);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
    compilerOptions: { strict: true, target: "es2022", module: "nodenext", skipLibCheck: true, types: [] },
    files: sample.map((m) => join(LIBRARY_DIR, m, "index.d.ts")),
  }, null, 2) + "\n");
  return { modules, sample };
}
