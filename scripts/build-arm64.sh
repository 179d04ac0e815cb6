#!/usr/bin/env bash
# Cross-builds spinrpc for linux-arm64 (glibc) into build-arm64/ on a Debian
# machine of another architecture: spinrpc-server, the C++ shim, the test
# suites and the Node.js addon, which lands in
# node/build/linux-arm64-gnu/spinrpc.node (node/addon.mjs looks there
# first when it runs on linux-arm64; docs/INSTALL.md, "linux-arm64").
# Installs what is missing first, as root or through sudo: Debian's
# crossbuild-essential-arm64, the libraries' :arm64 packages (after
# `dpkg --add-architecture arm64`) and qemu-user-static, which
# scripts/test-arm64.sh runs the results with. libsimdjson-dev is not
# multi-arch, so its :arm64 package is unpacked into build-arm64/deps/
# beside the build (its libsimdjson14:arm64 library is installed as usual).
# Idempotent: a second run only rebuilds what changed.
#   SPINRPC_ARM64_BUILD_DIR  build directory (default: <repo>/build-arm64)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/usage.sh"
exit_with_help_if_asked "${BASH_SOURCE[0]}" "$@"
exit_unless_no_arguments "${BASH_SOURCE[0]}" "$@"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${SPINRPC_ARM64_BUILD_DIR:-$ROOT/build-arm64}"

PACKAGES=(
  crossbuild-essential-arm64 qemu-user-static
  libmsgpack-cxx-dev:arm64 libboost-dev:arm64 libbenchmark-dev:arm64
  libicu-dev:arm64 zlib1g-dev:arm64 libsimdjson14:arm64
)

installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

SUDO=()
[[ "$(id -u)" == 0 ]] || SUDO=(sudo)
missing=()
for p in "${PACKAGES[@]}"; do
  installed "$p" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "build-arm64.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    "${SUDO[@]}" dpkg --add-architecture arm64
  fi
  "${SUDO[@]}" apt-get update -q
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# simdjson's CMake package for arm64, from its unpacked -dev package; the
# library it names is libsimdjson14:arm64's.
DEPS="$BUILD_DIR/deps"
SIMDJSON_LIB=/usr/lib/aarch64-linux-gnu/libsimdjson.so.14.0.0
SIMDJSON_DIR="$DEPS/usr/lib/aarch64-linux-gnu/cmake/simdjson"
if [[ ! -f "$SIMDJSON_DIR/simdjson-config.cmake" ]]; then
  mkdir -p "$DEPS/download"
  version="$(dpkg-query -W -f='${Version}' libsimdjson14:arm64)"
  (cd "$DEPS/download" && apt-get download -q "libsimdjson-dev:arm64=$version" 2>&1 | grep -v "unsandboxed" || true)
  dpkg-deb -x "$DEPS"/download/libsimdjson-dev_*_arm64.deb "$DEPS"
  ln -sf "$SIMDJSON_LIB" "$DEPS/usr/lib/aarch64-linux-gnu/$(basename "$SIMDJSON_LIB")"
fi

if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchains/aarch64-linux-gnu.cmake" \
    -Dsimdjson_DIR="$SIMDJSON_DIR" \
    -DSPINRPC_ADDON_DIR="$ROOT/node/build/linux-arm64-gnu" \
    -DSPINRPC_BUILD_BENCH=OFF
else
  cmake -S "$ROOT" -B "$BUILD_DIR"
fi
cmake --build "$BUILD_DIR"
