#!/usr/bin/env bash
# Configures (first time only) and builds spinrpc into build/ with Ninja.
# Idempotent: a second run only rebuilds what changed.
#   SPINRPC_BUILD_DIR   build directory (default: <repo>/build)
#   SPINRPC_BUILD_TYPE  CMAKE_BUILD_TYPE for a fresh configure (default: RelWithDebInfo)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/usage.sh"
exit_with_help_if_asked "${BASH_SOURCE[0]}" "$@"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${SPINRPC_BUILD_DIR:-$ROOT/build}"
BUILD_TYPE="${SPINRPC_BUILD_TYPE:-RelWithDebInfo}"

if [[ -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  # Already configured: re-run the configure step (cheap, picks up new files)
  # with the generator and build type the cache already has.
  cmake -S "$ROOT" -B "$BUILD_DIR"
else
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE"
fi
cmake --build "$BUILD_DIR"
