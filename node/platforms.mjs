// The platforms spinrpc's addon is built for, one npm package each, and
// which of them this process runs on. The main package `spinrpc` carries
// no binary and installs everywhere; each binary ships in an optional
// dependency named `@spinrpc/<os>-<cpu>-<libc>`, whose package.json sets
// `os`, `cpu` and `libc` so that npm installs only the one that fits
// (docs/NODE.md, "Platforms"). scripts/package.sh writes those packages
// from this table; addon.mjs looks up the running platform's entry.

import { readFileSync } from "node:fs";

/**
 * Every platform package: `key` is the package name's tail and the folder
 * under node/build/ a cross build writes its addon to; `os`, `cpu` and
 * `libc` are the package.json fields npm matches; `triple` is the GNU
 * toolchain that builds it.
 */
export const PLATFORMS = Object.freeze([
  { key: "linux-x64-gnu", os: "linux", cpu: "x64", libc: "glibc", triple: "x86_64-linux-gnu" },
  { key: "linux-arm64-gnu", os: "linux", cpu: "arm64", libc: "glibc", triple: "aarch64-linux-gnu" },
].map(Object.freeze));

/** The npm name of a platform package: "@spinrpc/linux-x64-gnu". */
export function packageName(platform) {
  return `@spinrpc/${platform.key}`;
}

/**
 * The C library of this process on Linux, as npm's `libc` field names it:
 * "glibc", "musl", or null where it cannot tell or the OS is not Linux.
 * Read from the process itself (its report's glibc version), not from a
 * lockfile, which can drop `libc`.
 */
export function runningLibc() {
  if (process.platform !== "linux") return null;
  if (glibcRuntime()) return "glibc";
  // musl's dynamic loader is named in the executable's program interpreter.
  try {
    return readFileSync(process.execPath).subarray(0, 4096).includes("ld-musl-") ? "musl" : null;
  } catch {
    return null;
  }
}

// The glibc version this process runs on ("2.36"), or undefined: read from
// the process's diagnostic report, which takes milliseconds to make, so once.
let glibc;
function glibcRuntime() {
  if (glibc === undefined) glibc = process.report?.getReport?.().header?.glibcVersionRuntime ?? null;
  return glibc ?? undefined;
}

/** "linux-x64, glibc 2.36, Node v22.23.5": the platform, in words for messages. */
export function describeRunningPlatform() {
  const glibc = process.platform === "linux" ? glibcRuntime() : undefined;
  const libc = process.platform !== "linux" ? "" : glibc ? `, glibc ${glibc}` : `, ${runningLibc() ?? "no glibc"}`;
  return `${process.platform}-${process.arch}${libc}, Node ${process.version}`;
}

/** The PLATFORMS entry this process runs on, or null where spinrpc builds no addon. */
export function runningPlatform() {
  const libc = runningLibc();
  return PLATFORMS.find((p) => p.os === process.platform && p.cpu === process.arch && p.libc === libc) ?? null;
}
