#!/usr/bin/env bash
# Benchmark: frame times and click latency of the real app, in real WebKit, while a live run streams
# 2,000 trace records/s and grows to 500 subagents (tests/webdriver/bench/live-frames.mjs; results in
# docs/benchmarks.md, "Live stream"). CI runs `--quick` only. See scripts/bench-webkit.sh.
#
#   CANOPY_APP_BINARY=/abs/canopy scripts/bench-frames.sh
#   scripts/bench-frames.sh --quick     # smoke test: the WebDriver tests' debug app, 10 agents for 3 s
#   BENCH_REPS=3 BENCH_AGENTS=500 BENCH_RATE=2000 BENCH_SECONDS=15 scripts/bench-frames.sh
exec "$(dirname "$0")/bench-webkit.sh" frames "$@"
