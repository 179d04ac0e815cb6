#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang++, ASan and UBSan into
# build-fuzz/, then runs each for a bounded time, one after the other.
#
#   scripts/fuzz.sh [SECONDS]   seconds per target (default 60)
#
# Each target starts from its committed seeds (tests/fuzz/corpus/<target>,
# only read) and what earlier runs found (build-fuzz/corpus/<target>, where
# new inputs go), with its dictionary (tests/fuzz/<target>.dict). A crash, a
# leak, a timeout (10 s for one input) or a failed invariant stops that
# target and leaves the input in build-fuzz/artifacts/<target>/: copy it to
# tests/fuzz/corpus/<target>/crash-<what> so it stays a regression test.
# Prints executions per target; exits non-zero if any target found something.
#   SPINRPC_FUZZ_BUILD_DIR  build directory (default: <repo>/build-fuzz)
#   SPINRPC_FUZZ_TARGETS    targets to run (default: all five, "decode_frame server_serve
#                           json_rpc_decode server_serve_async shm_ring")
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/usage.sh"
exit_with_help_if_asked "${BASH_SOURCE[0]}" "$@"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${SPINRPC_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
SECONDS_PER_TARGET="${1:-60}"
TARGETS=(${SPINRPC_FUZZ_TARGETS:-decode_frame server_serve json_rpc_decode server_serve_async shm_ring})

if ! [[ "$SECONDS_PER_TARGET" =~ ^[0-9]+$ ]] || ((SECONDS_PER_TARGET < 1)); then
  echo "usage: scripts/fuzz.sh [SECONDS]  (seconds per target, a whole number >= 1)" >&2
  exit 2
fi
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (scripts/setup.sh installs it)" >&2; exit 1; }

if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  # Only the fuzz suite: the other suites and the benchmarks are not needed here.
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++ -DSPINRPC_FUZZ=ON -DSPINRPC_TEST_SUITES=fuzz \
    -DSPINRPC_BUILD_BENCH=OFF
else
  cmake -S "$ROOT" -B "$BUILD_DIR"
fi
cmake --build "$BUILD_DIR" --target "${TARGETS[@]/%/_fuzz}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

found=()
report=()
for target in "${TARGETS[@]}"; do
  work="$BUILD_DIR/corpus/$target"
  artifacts="$BUILD_DIR/artifacts/$target"
  log="$BUILD_DIR/fuzz-$target.log"
  mkdir -p "$work" "$artifacts"
  echo "== fuzz $target for ${SECONDS_PER_TARGET}s (log: $log)"
  dict=()
  [[ -f "$ROOT/tests/fuzz/$target.dict" ]] && dict=(-dict="$ROOT/tests/fuzz/$target.dict")
  status=0
  "$BUILD_DIR/fuzz/${target}_fuzz" "$work" "$ROOT/tests/fuzz/corpus/$target" "${dict[@]}" \
    -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1 || status=$?
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  units="$(find "$work" -type f | wc -l)"
  line="$target: ${execs:-?} executions (${rate:-?}/s), $units inputs in $work"
  if ((status != 0)); then
    line+=", FOUND SOMETHING (exit $status): $(ls -t "$artifacts" | head -1 | sed "s|^|$artifacts/|")"
    found+=("$target")
    grep -E "ERROR|invariant failed|Sanitizer|SUMMARY|deadly signal|timeout" "$log" | head -20 >&2 || true
  else
    line+=", nothing found"
  fi
  echo "$line"
  report+=("$line")
done

echo "== fuzz summary"
printf '%s\n' "${report[@]}"
if ((${#found[@]})); then
  echo "fuzz.sh: FOUND crashes in: ${found[*]}" >&2
  exit 1
fi
