#!/usr/bin/env bash
# Runs the whole benchmark suite (docs/BENCHMARKING.md) and writes its report:
#   1. build/bin/spinrpc-bench (Google Benchmark): pipe floors, echo, echo
#      against tsgo, transports (stdio, socket, FIFO), interleave, sparse,
#      slow server, worst case, oversubscribed; every workload under spin
#      off / fixed / adaptive, rounds alternating;
#   2. bench/node/echo_latency.mjs: the real TypeScript client against
#      spinrpc-server (server spin off / fixed / adaptive) and tsgo, through
#      its own channel and through spinrpc's Node.js binding (node/), with
#      the binding's sparse-request CPU, spawn and large-payload workloads;
#   3. --async: bench/node/async_echo.mjs (the real async client against
#      spinrpc-server and tsgo: sequential echoes, 10 000 in flight, 1 MiB
#      echoes) and spinrpc-json-bench / spinrpc-json-bench-native (the decode
#      path against a full simdjson walk of a 1 MiB body), runs alternating;
#   4. bench/report.mjs: the tables, ratios and CDF pictures;
#   5. bench/workload/run.sh: the recorded aws-cdk-lib walk replayed through
#      the shim (default vs spin-off, and 1-4 at once) and the JS client; its
#      own section of the report (bench/workload/README.md).
#
#   scripts/bench.sh          full run (about 13 minutes on a 2-vCPU VM);
#                             writes bench/REPORT.md and bench/report/*.png
#   scripts/bench.sh --smoke  a few seconds, tiny counts, not a measurement;
#                             writes bench/out/smoke/REPORT.md, never
#                             bench/REPORT.md. CI runs it (scripts/test.sh).
# Any other argument goes to spinrpc-bench (--rounds=N, --benchmark_filter=RE;
# `build/bin/spinrpc-bench --help` lists them); --help prints this.
# Raw output (JSON, per-request latencies, plot data) goes to bench/out/.
#
# Exit status: 0, or that of the first step that failed; 3 means a reply
# differed from what was sent (an integrity failure). Timings never fail it.
#   SPINRPC_BUILD_DIR   build directory (default: <repo>/build)
#   SPINRPC_SKIP_SETUP  set to 1 to skip scripts/setup.sh
#   SPINRPC_TSGO        the real server to compare with (default: typescript@7.0.2's
#                       lib/tsc from the interop suite's npm install)
#   SPINRPC_SERVER      the spinrpc-server the node script drives (default: the build's)
#   SPINRPC_BENCH_SERVER the server spinrpc-bench spawns (default: the
#                       spinrpc-bench-server next to it: spinrpc-server plus benchWork)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/usage.sh"
exit_with_help_if_asked "${BASH_SOURCE[0]}" "$@"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${SPINRPC_BUILD_DIR:-$ROOT/build}"

smoke=0
bench_args=()
command="scripts/bench.sh"
# The report quotes the command; a build directory other than build/ is part of it.
[[ -n "${SPINRPC_BUILD_DIR:-}" && "$BUILD_DIR" != "$ROOT/build" ]] && command="SPINRPC_BUILD_DIR=$(printf '%q' "$BUILD_DIR") $command"
for arg in "$@"; do
  command+=" $(printf '%q' "$arg")"
  if [[ "$arg" == --smoke ]]; then smoke=1; else bench_args+=("$arg"); fi
done

export SPINRPC_BUILD_DIR="$BUILD_DIR"

if [[ "${SPINRPC_SKIP_SETUP:-0}" != 1 ]]; then
  bash "$ROOT/scripts/setup.sh"
fi
bash "$ROOT/scripts/build.sh"

BENCH="$BUILD_DIR/bin/spinrpc-bench"
# The reference server: typescript@7.0.2's own (tests/interop/versions.mjs,
# id 7.0), the one the Node jobs' default client (--ts 7.0) starts.
TSGO="${SPINRPC_TSGO:-$ROOT/tests/interop/node_modules/@typescript/typescript-linux-x64/lib/tsc}"
export SPINRPC_SERVER="${SPINRPC_SERVER:-$BUILD_DIR/bin/spinrpc-server}"
export SPINRPC_TSGO="$TSGO"

if ((smoke)); then
  OUT="$ROOT/bench/out/smoke"
  REPORT="$OUT/REPORT.md"
  PNG_DIR="$OUT/png"
  mode=(--smoke)
  node_args=(--size 8 --count 200 --rounds 2 --warmup 20 --sparse 4 --spawn 1 --large-mib 1 --large-reps 1)
  async_args=(--count 50 --inflight 200 --big 1 --rounds 1 --warmup 10)
  json_bench_rounds=1
  json_bench_args=(--min-seconds 0.02)
else
  OUT="$ROOT/bench/out/full"
  REPORT="$ROOT/bench/REPORT.md"
  PNG_DIR="$ROOT/bench/report"
  mode=()
  node_args=(--size 8 --count 90000 --rounds 9 --warmup 1000 --sparse 1000 --spawn 6 --large-mib 1,16 --large-reps 7)
  async_args=(--count 2000 --inflight 10000 --big 20 --rounds 5 --warmup 200)
  json_bench_rounds=5
  json_bench_args=(--min-seconds 0.3)
fi
rm -rf "$OUT"
mkdir -p "$OUT"

if ((smoke)); then
  # The integrity check itself: a corrupted expectation must stop the run
  # with status 3 before any time is printed.
  echo "== spinrpc-bench integrity self-check (one corrupted echo must exit 3)"
  status=0
  "$BENCH" --smoke --inject_mismatch --benchmark_filter='^BM_Echo/bytes:8/.*/variant:off/' \
    >"$OUT/integrity-self-check.txt" 2>&1 || status=$?
  if [[ "$status" != 3 ]]; then
    cat "$OUT/integrity-self-check.txt" >&2
    echo "bench.sh: spinrpc-bench --inject_mismatch exited $status, not 3: the integrity check is broken" >&2
    exit 1
  fi
fi

echo "== spinrpc-bench ${mode[*]} ${bench_args[*]}"
status=0
"$BENCH" "${mode[@]}" --latency_dir="$OUT/latency" \
  --benchmark_out="$OUT/spinrpc-bench.json" --benchmark_out_format=json \
  "${bench_args[@]}" || status=$?
if [[ "$status" != 0 ]]; then
  [[ "$status" == 3 ]] && echo "bench.sh: INTEGRITY FAILURE in spinrpc-bench: no report written" >&2
  exit "$status"
fi

node_json=()
if [[ -x "$TSGO" ]]; then
  echo "== bench/node/echo_latency.mjs ${node_args[*]}"
  SPINRPC_TSGO="$TSGO" node "$ROOT/bench/node/echo_latency.mjs" "${node_args[@]}" \
    --server-spin off,fixed,adaptive,placement-off --json "$OUT/echo_latency.json"
  node_json=(--node-json "$OUT/echo_latency.json")
else
  echo "== bench/node/echo_latency.mjs skipped: tsgo not installed at $TSGO (npm ci in tests/interop)"
fi

async_json=()
if [[ -x "$TSGO" ]]; then
  echo "== bench/node/async_echo.mjs ${async_args[*]}"
  SPINRPC_TSGO="$TSGO" node "$ROOT/bench/node/async_echo.mjs" "${async_args[@]}" --json "$OUT/async_echo.json"
  async_json=(--async-json "$OUT/async_echo.json")
else
  echo "== bench/node/async_echo.mjs skipped: tsgo not installed at $TSGO (npm ci in tests/interop)"
fi

# The two builds of spinrpc-json-bench alternate, one round per run, the
# order swapping every round.
echo "== spinrpc-json-bench, spinrpc-json-bench-native: $json_bench_rounds rounds"
mkdir -p "$OUT/json-bench"
for ((r = 0; r < json_bench_rounds; r++)); do
  builds=(spinrpc-json-bench spinrpc-json-bench-native)
  ((r % 2)) && builds=(spinrpc-json-bench-native spinrpc-json-bench)
  for b in "${builds[@]}"; do
    name=build; [[ "$b" == *native ]] && name=native
    "$BUILD_DIR/bin/$b" --rounds 1 --rotate "$r" "${json_bench_args[@]}" --json "$OUT/json-bench/$name-$r.json"
  done
done

echo "== bench/report.mjs"
report_args=(--bench-json "$OUT/spinrpc-bench.json" --latency-dir "$OUT/latency" "${node_json[@]}" "${async_json[@]}"
  --json-bench-dir "$OUT/json-bench"
  --out "$REPORT" --png-dir "$PNG_DIR" --command "$command" --build-dir "$BUILD_DIR")
((smoke)) && report_args+=(--smoke)
node "$ROOT/bench/report.mjs" "${report_args[@]}"

echo "== bench/workload/run.sh"
workload_args=(--report "$REPORT" --png-dir "$PNG_DIR" --command "$command")
((smoke)) && workload_args+=(--smoke)
bash "$ROOT/bench/workload/run.sh" "${workload_args[@]}"
