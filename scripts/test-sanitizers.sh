#!/usr/bin/env bash
# Runs the test suites under sanitizers (docs/HARDENING.md, "Sanitizers"):
#  1. ASan + UBSan (g++, -fno-sanitize-recover=all): everything built into
#     build-asan/, the whole ctest suite, then the node interop suite with
#     the ASan spinrpc-server as the server under test. Any ASan or UBSan
#     report, leaks included, fails the run: every spawned server and peer
#     inherits ASAN_OPTIONS/UBSAN_OPTIONS, and its report changes its exit
#     status and stderr, which the tests compare.
#  2. TSan (g++): the suites where more than one thread touches shared state
#     (tests/channel and tests/wait: writer threads that dribble bytes into
#     the pipe a channel reads; tests/server: the hang-guard thread;
#     tests/transport: the servers it spawns run an Asio signal thread and,
#     on a socket, an acceptor thread; tests/stream: the shared-memory ring
#     read and written by two threads, one test on one mapping so that TSan
#     follows the bytes; tests/client-shim: the shim over the ring to a
#     TSan spinrpc-server, and a thread that kills it mid-request) built
#     into build-tsan/ and run.
# Runs every step even if one fails; exits non-zero if any failed.
#   SPINRPC_ASAN_BUILD_DIR  (default: <repo>/build-asan)
#   SPINRPC_TSAN_BUILD_DIR  (default: <repo>/build-tsan)
#   SPINRPC_SKIP_INTEROP    set to 1 to skip the node interop suite
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/usage.sh"
exit_with_help_if_asked "${BASH_SOURCE[0]}" "$@"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ASAN_DIR="${SPINRPC_ASAN_BUILD_DIR:-$ROOT/build-asan}"
TSAN_DIR="${SPINRPC_TSAN_BUILD_DIR:-$ROOT/build-tsan}"

# configure_and_build DIR FLAGS [SUITES]: a fresh configure writes the cache
# once; later runs only rebuild what changed. SUITES narrows
# SPINRPC_TEST_SUITES; without it the cached value is dropped, so every
# suite the tree has now is built, also in an old build directory. The
# Node.js addon is left out (Node cannot load one built with a sanitizer);
# the interop suite below loads the one scripts/build.sh made.
configure_and_build() {
  local dir="$1" flags="$2"
  local suites=(-USPINRPC_TEST_SUITES)
  [[ $# -ge 3 ]] && suites=(-DSPINRPC_TEST_SUITES="$3")
  if [[ ! -f "$dir/CMakeCache.txt" ]]; then
    cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_COMPILER=g++ -DCMAKE_CXX_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="$flags" -DSPINRPC_BUILD_BENCH=OFF -DSPINRPC_NODE_ADDON=OFF "${suites[@]}"
  else
    cmake -S "$ROOT" -B "$dir" -DSPINRPC_NODE_ADDON=OFF "${suites[@]}"
  fi
  cmake --build "$dir"
}

failed=()

echo "== ASan + UBSan build ($ASAN_DIR)"
ASAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
if configure_and_build "$ASAN_DIR" "$ASAN_FLAGS"; then
  (
    # exitcode 86/87: a sanitizer report is never mistaken for an expected exit 1.
    export ASAN_OPTIONS="detect_leaks=1:exitcode=86:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=87"
    export LSAN_OPTIONS="exitcode=86"
    # ASan's frames are large: the async decoder's recursive walk needs more
    # than the default 8 MiB stack for tsgo's 10000 nesting levels
    # (protocol/json_rpc.h).
    ulimit -s 262144 2>/dev/null || ulimit -s unlimited 2>/dev/null || true
    status=0
    echo "== ctest under ASan + UBSan"
    ctest --test-dir "$ASAN_DIR" --output-on-failure || status=1
    if [[ "${SPINRPC_SKIP_INTEROP:-0}" != 1 ]]; then
      echo "== npm test (tests/interop) against the ASan spinrpc-server"
      # Both modes; the scripted peers beside it (tests/interop/peers.mjs) are ASan builds too.
      (cd "$ROOT/tests/interop" && SPINRPC_SERVER="$ASAN_DIR/bin/spinrpc-server" npm test) || status=1
    fi
    exit "$status"
  ) || failed+=("asan")
else
  failed+=("asan build")
fi

echo "== TSan build ($TSAN_DIR)"
TSAN_FLAGS="-fsanitize=thread -fno-omit-frame-pointer"
if configure_and_build "$TSAN_DIR" "$TSAN_FLAGS" "channel;spin;server;transport;peers;stream;client-shim"; then
  echo "== ctest under TSan (channel, spin, server, transport, stream, client-shim)"
  (
    export TSAN_OPTIONS="halt_on_error=1:exitcode=88:second_deadlock_stack=1"
    ctest --test-dir "$TSAN_DIR" --output-on-failure
  ) || failed+=("tsan")
else
  failed+=("tsan build")
fi

if ((${#failed[@]})); then
  echo "test-sanitizers.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test-sanitizers.sh: all sanitizer runs passed"
