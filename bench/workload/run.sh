#!/usr/bin/env bash
# The workload's replays and its REPORT.md section (bench/workload/README.md).
# scripts/bench.sh runs it after the rest of the suite; by hand:
#
#   bench/workload/run.sh [--smoke] [--report FILE] [--png-dir DIR] [--command TEXT]
#
# Full (default): figure 2 replays the whole committed trace through the
# shim, 5 paired rounds; figure 4 replays requests 2..60001 (after the
# program load) at N = 1, 2, 3, 4 at once, 3 paired rounds each; the JS
# client replays the same slice, 3 rounds. About 8 minutes on 2 vCPUs.
# --smoke: 2 000 requests, one round, N = 1, 2; seconds. Writes its section
# into --report (default bench/REPORT.md; bench/out/smoke/REPORT.md with --smoke).
# SPINRPC_BUILD_DIR as scripts/bench.sh. Heavy: run it under nice on a shared machine.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD_DIR="${SPINRPC_BUILD_DIR:-$ROOT/build}"
TRACE="$ROOT/bench/workload/aws-cdk-lib.trace.gz"
smoke=0 report="" png_dir="" command="bench/workload/run.sh $*"
while (($#)); do
  case "$1" in
    --smoke) smoke=1 ;;
    --report) report="$2"; shift ;;
    --png-dir) png_dir="$2"; shift ;;
    --command) command="$2"; shift ;;
    *) echo "usage: bench/workload/run.sh [--smoke] [--report FILE] [--png-dir DIR] [--command TEXT]" >&2; exit 2 ;;
  esac
  shift
done
if ((smoke)); then
  OUT="$ROOT/bench/out/smoke/workload"
  report="${report:-$ROOT/bench/out/smoke/REPORT.md}"; png_dir="${png_dir:-$ROOT/bench/out/smoke/png}"
  fig2=(--start 2 --limit 2000 --rounds 1)
  fig4=(--start 2 --limit 2000 --rounds 1 --parallel 1,2)
  js=(--start 2 --limit 1000 --rounds 1)
  smoke_flag=(--smoke)
else
  OUT="$ROOT/bench/out/full/workload"
  report="${report:-$ROOT/bench/REPORT.md}"; png_dir="${png_dir:-$ROOT/bench/report}"
  fig2=(--rounds 5)
  fig4=(--start 2 --limit 60000 --rounds 3 --parallel 1,2,3,4)
  js=(--start 2 --limit 60000 --rounds 3)
  smoke_flag=()
fi
rm -rf "$OUT"; mkdir -p "$OUT"
load_before="$(cut -d" " -f1-3 /proc/loadavg)"
REPLAY="$BUILD_DIR/bin/spinrpc-replay"
echo "== spinrpc-replay ${fig2[*]} (figure 2)"
"$REPLAY" --trace "$TRACE" "${fig2[@]}" --json "$OUT/replay.json" >/dev/null
echo "== spinrpc-replay ${fig4[*]} (figure 4)"
"$REPLAY" --trace "$TRACE" "${fig4[@]}" --json "$OUT/concurrency.json" >/dev/null
js_json=()
if [[ -f "$ROOT/tests/interop/node_modules/@typescript/native-preview/dist/api/syncChannel.js" ]]; then
  echo "== bench/workload/replay.mjs ${js[*]} (the client's own SyncRpcChannel)"
  SPINRPC_BUILD_DIR="$BUILD_DIR" node "$ROOT/bench/workload/replay.mjs" --trace "$TRACE" "${js[@]}" --json "$OUT/replay-js.json" >/dev/null
  js_json=(--js-json "$OUT/replay-js.json")
fi
e2e_files=()
for f in "$ROOT"/bench/out/workload/e2e.json "$ROOT"/bench/out/workload/e2e-*.json; do
  [[ -f "$f" ]] && e2e_files+=("$f")
done
e2e_json=()
((${#e2e_files[@]})) && e2e_json=(--e2e-json "$(IFS=,; echo "${e2e_files[*]}")")
node "$ROOT/bench/workload/report.mjs" --trace "$TRACE" --replay-json "$OUT/replay.json" \
  --concurrency-json "$OUT/concurrency.json" "${js_json[@]}" "${e2e_json[@]}" \
  --load-before "$load_before" --out "$report" --png-dir "$png_dir" --command "$command" "${smoke_flag[@]}"
