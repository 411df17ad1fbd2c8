#!/usr/bin/env bash
# Benchmark: opening a ~100,000-record session from History in the real app, in real WebKit
# (tests/webdriver/bench/history-open.mjs; results in docs/benchmarks.md, "UI"). CI runs `--quick`
# only. See scripts/bench-webkit.sh for the set-up, ports and knobs.
#
#   CANOPY_APP_BINARY=/abs/canopy scripts/bench-history.sh
#   scripts/bench-history.sh --quick    # smoke test: the WebDriver tests' debug app, 2,000 records
#   BENCH_REPS=5 BENCH_RECORDS=100000 BENCH_AGENTS=50 scripts/bench-history.sh
exec "$(dirname "$0")/bench-webkit.sh" history "$@"
