#!/usr/bin/env bash
# Interleaved A/B of the live-stream frame benchmark (live-frames.mjs via scripts/bench-frames.sh): runs
# variant 1, 2, …, 1, 2, … so machine noise (other builds on the same cores) falls on every variant alike,
# then prints each variant's per-run values and medians (ab-summary.mjs).
#
#   tests/webdriver/bench/ab-frames.sh REPS OUTDIR NAME=BINARY[,CSSFILE] NAME=BINARY[,CSSFILE] ...
#
# BINARY is a release app binary with its UI embedded; CSSFILE, if given, is a style sheet the bench adds
# before streaming (BENCH_CSS), to try CSS changes without a rebuild. To try a WebKit environment variable
# (e.g. WEBKIT_DISABLE_COMPOSITING_MODE=1), point BINARY at a two-line wrapper script that sets it and
# execs the app. Other BENCH_* knobs pass through. One run takes about 25 s.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
[ $# -ge 3 ] || { echo "usage: $0 REPS OUTDIR NAME=BINARY[,CSSFILE] ..." >&2; exit 2; }
REPS=$1 OUT=$2
shift 2
mkdir -p "$OUT"
for ((rep = 1; rep <= REPS; rep++)); do
    for spec in "$@"; do
        name=${spec%%=*} rest=${spec#*=}
        bin=${rest%%,*} css=""
        [ "$rest" != "$bin" ] && css=$(cat "${rest#*,}")
        echo "ab-frames: rep $rep/$REPS: $name" >&2
        if ! CANOPY_APP_BINARY="$bin" BENCH_CSS="$css" BENCH_REPS=1 BENCH_ARTIFACTS="$OUT/artifacts-$name" \
            BENCH_OUT="$OUT/$name-$rep.json" "$ROOT/scripts/bench-frames.sh" >"$OUT/$name-$rep.log" 2>&1; then
            echo "ab-frames: $name rep $rep FAILED, see $OUT/$name-$rep.log" >&2
        fi
    done
done
node "$ROOT/tests/webdriver/bench/ab-summary.mjs" "$OUT" "${@%%=*}"
