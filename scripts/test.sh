#!/usr/bin/env bash
# Sets up what is missing, builds, then runs every test: the C++ suites
# through ctest, the interop suite (the real TypeScript client and tsgo
# against spinrpc-server) through npm test on the machine's Node and again
# on each maintained Node line of tests/nodes (22, 24, 26), the check of README's headline
# figures against bench/REPORT.md, and the benchmark suite's smoke run
# (scripts/bench.sh --smoke). Runs all even if one fails; exits non-zero
# if anything failed.
#   SPINRPC_BUILD_DIR   build directory (default: <repo>/build)
#   SPINRPC_SKIP_SETUP  set to 1 to skip scripts/setup.sh
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/usage.sh"
exit_with_help_if_asked "${BASH_SOURCE[0]}" "$@"
exit_unless_no_arguments "${BASH_SOURCE[0]}" "$@"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${SPINRPC_BUILD_DIR:-$ROOT/build}"
export SPINRPC_BUILD_DIR="$BUILD_DIR"

if [[ "${SPINRPC_SKIP_SETUP:-0}" != 1 ]]; then
  bash "$ROOT/scripts/setup.sh"
fi
bash "$ROOT/scripts/build.sh"

export SPINRPC_SERVER="${SPINRPC_SERVER:-$BUILD_DIR/bin/spinrpc-server}"
# The hook tests run their tools under Node 22 too (module.registerHooks).
NODES_DIR="$ROOT/tests/nodes/node_modules"
if [[ -z "${SPINRPC_NODE22:-}" && -x "$NODES_DIR/node22/bin/node" ]]; then export SPINRPC_NODE22="$NODES_DIR/node22/bin/node"; fi

failed=()
echo "== ctest"
ctest --test-dir "$BUILD_DIR" --output-on-failure || failed+=(ctest)
echo "== npm test (tests/interop), Node $(node --version)"
(cd "$ROOT/tests/interop" && npm test) || failed+=("npm test")
# The same suite on each maintained Node line: its `node` first on PATH,
# so that npm and every `node` the tests start are that one.
for line in 22 24 26; do
  bin="$NODES_DIR/node$line/bin"
  if [[ ! -x "$bin/node" ]]; then
    [[ "$(uname -s)-$(uname -m)" == Linux-x86_64 ]] && failed+=("Node $line: not installed (scripts/setup.sh)")
    continue
  fi
  echo "== npm test (tests/interop), Node $("$bin/node" --version)"
  (cd "$ROOT/tests/interop" && PATH="$bin:$PATH" npm test) || failed+=("npm test on Node $line")
done
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
