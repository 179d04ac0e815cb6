#!/usr/bin/env bash
# Installs what spinrpc needs to build, test and benchmark, and only what is
# missing: the Debian packages (apt-get as root, else through sudo), Node.js
# if there is none, and the pinned npm packages of the interop suite (npm ci,
# skipped when node_modules already holds the locked version and tsgo).
# Idempotent; runnable from any directory.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

PACKAGES=(
  build-essential cmake ninja-build
  libmsgpack-cxx-dev libsimdjson-dev libboost-dev doctest-dev libbenchmark-dev
  libicu-dev gnuplot-nox
  # The independent JSON parser the async-mode tests check simdjson's output with.
  nlohmann-json3-dev
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

# The interop suite's npm packages: the real tsgo and its sync client.
INTEROP="$ROOT/tests/interop"
TSGO="$INTEROP/node_modules/@typescript/native-preview-linux-x64/lib/tsgo"
want="$(cd "$INTEROP" && node -p 'require("./package-lock.json").packages["node_modules/@typescript/native-preview"].version')"
have="$(cd "$INTEROP" && node -p 'try { require("./node_modules/@typescript/native-preview/package.json").version } catch { "" }')"
if [[ -x "$TSGO" && "$want" == "$have" ]]; then
  echo "setup.sh: @typescript/native-preview@$have already installed"
else
  echo "setup.sh: npm ci in tests/interop (want @typescript/native-preview@$want, have '${have}')"
  (cd "$INTEROP" && npm ci --no-audit --no-fund)
fi
