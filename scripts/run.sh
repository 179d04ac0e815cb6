#!/usr/bin/env bash
# The main job: set up what is missing, build, then time the real TypeScript
# sync client of the released typescript@7.0.2 (as `npm i typescript@7`
# installs it) against spinrpc-server and against 7.0.2's own server (its
# lib/tsc), through its own channel and through spinrpc's Node.js binding
# (bench/node/echo_latency.mjs: the `binding →` rows, then the binding's
# sparse, spawn (with each server's spawn floor) and large-payload tables).
# Arguments go to the benchmark: --count N --size BYTES --rounds R ...;
# --ts 7.1-dev (typescript@7.1.0-dev.20261105.1), 7.1-beta or preview picks
# another pinned version (tests/interop/versions.mjs), client and server.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/usage.sh"
if help_requested "$@"; then
  print_header "${BASH_SOURCE[0]}"
  echo
  if command -v node >/dev/null; then exec node "$ROOT/bench/node/echo_latency.mjs" --help; fi
  echo "(node is not installed yet: scripts/setup.sh installs it; the options are listed at the top of bench/node/echo_latency.mjs)"
  exit 0
fi
BUILD_DIR="${SPINRPC_BUILD_DIR:-$ROOT/build}"
export SPINRPC_BUILD_DIR="$BUILD_DIR"

bash "$ROOT/scripts/setup.sh"
bash "$ROOT/scripts/build.sh"
export SPINRPC_SERVER="${SPINRPC_SERVER:-$BUILD_DIR/bin/spinrpc-server}"
exec node "$ROOT/bench/node/echo_latency.mjs" "$@"
