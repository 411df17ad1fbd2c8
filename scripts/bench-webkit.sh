#!/usr/bin/env bash
# Runs one benchmark of the real app in real WebKit (tests/webdriver/bench/), with the same recipe as
# scripts/e2e-webdriver.sh (Xvfb, private D-Bus, unlocked gnome-keyring, tauri-driver) but on its own
# ports and in its own temp folders, so it can run while the e2e tests do. CI runs only its quick mode
# (below); results are in docs/benchmarks.md. Use the wrappers:
#
#   scripts/bench-history.sh   opening a ~100,000-record session from History (history-open.mjs)
#   scripts/bench-frames.sh    frame times while a live run streams 2,000 records/s to 500 agents (live-frames.mjs)
#
#   CANOPY_APP_BINARY=/abs/canopy scripts/bench-webkit.sh history|frames   # else built with build-app.sh --release
#   scripts/bench-webkit.sh history|frames --quick   # smoke test for CI: the debug app the WebDriver
#       tests build (target/canopy-app/canopy, or CANOPY_APP_BINARY), small sizes, one rep; the bench's
#       own checks must hold, no timing is asserted
#
# Ports: BENCH_DRIVER_PORT / BENCH_NATIVE_PORT (history 4544/4545, frames 4644/4645). Screenshots, the
# tauri-driver log and results.json go to BENCH_ARTIFACTS (default /tmp/canopy-bench-NAME). Every
# process it starts is stopped on exit, also on failure or Ctrl-C.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
NAME=${1:-}
case "$NAME" in
    history) SCRIPT=history-open.mjs; PORT_BASE=4544 ;;
    frames) SCRIPT=live-frames.mjs; PORT_BASE=4644 ;;
    *) echo "usage: scripts/bench-webkit.sh history|frames" >&2; exit 2 ;;
esac
DRIVER_PORT=${BENCH_DRIVER_PORT:-$PORT_BASE}
NATIVE_PORT=${BENCH_NATIVE_PORT:-$((PORT_BASE + 1))}
ARTIFACTS=${BENCH_ARTIFACTS:-/tmp/canopy-bench-$NAME}
QUICK=false
if [ "${2:-}" = "--quick" ]; then
    QUICK=true
    export BENCH_REPS=1 BENCH_RECORDS=2000 BENCH_AGENTS=10 BENCH_RATE=200 BENCH_SECONDS=3
    CANOPY_APP_BINARY=${CANOPY_APP_BINARY:-${CARGO_TARGET_DIR:-$ROOT/target}/canopy-app/canopy}
fi

say() { printf 'bench-%s: %s\n' "$NAME" "$*" >&2; }
die() { say "$*"; exit 1; }

for c in xvfb-run dbus-run-session gnome-keyring-daemon WebKitWebDriver node curl setsid; do
    command -v "$c" >/dev/null 2>&1 || die "'$c' is missing; run scripts/e2e-webdriver.sh once, it installs what is needed"
done
export PATH="$PATH:${CARGO_HOME:-${HOME:-/root}/.cargo}/bin"
command -v tauri-driver >/dev/null 2>&1 || die "tauri-driver is missing: cargo install tauri-driver --version '^2' --locked"
[ -d tests/webdriver/node_modules/webdriverio ] || (cd tests/webdriver && npm ci --no-audit --no-fund)
[ -f ui/node_modules/typescript/package.json ] || die "ui/node_modules is missing (npm ci --prefix ui): the bench injects ui/src/lib/reducer.ts"
if curl -fsS "http://127.0.0.1:$DRIVER_PORT/status" >/dev/null 2>&1; then
    die "something already answers on port $DRIVER_PORT; set BENCH_DRIVER_PORT"
fi

if [ -n "${CANOPY_APP_BINARY:-}" ]; then
    APP="$CANOPY_APP_BINARY"
    $QUICK && [ ! -x "$APP" ] && die "--quick reuses the app the WebDriver tests build; none at $APP (run scripts/e2e-webdriver.sh or scripts/build-app.sh first)"
else
    say "building the app with scripts/build-app.sh --release"
    APP=$(scripts/build-app.sh --release | tail -n 1)
fi
[ -x "$APP" ] || die "no app binary at '$APP'"
APP=$(cd "$(dirname "$APP")" && pwd)/$(basename "$APP")

mkdir -p "$ARTIFACTS"
SCRATCH=$(mktemp -d "/tmp/canopy-bench-$NAME.XXXXXX")
RUN_SID=""
# Everything runs in its own session (setsid), so cleanup finds exactly the processes this run started,
# also the ones re-parented when their parents exit (WebKitNetworkProcess, the app).
# shellcheck source=scripts/lib/stop-session.sh
. "$ROOT/scripts/lib/stop-session.sh"
cleanup() {
    set +e
    stop_session "$RUN_SID"
    rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=scripts/lib/webkit-session.sh
. "$ROOT/scripts/lib/webkit-session.sh"
isolate_home "$SCRATCH"
# The model URL points at a dead port: history sends no prompt, and frames replaces what its run's
# channel carries; the harness only needs the URL to write settings.
export CANOPY_APP_BINARY="$APP" CANOPY_E2E_MOCK_URL="http://127.0.0.1:9" CANOPY_E2E_DRIVER_PORT="$DRIVER_PORT"
export CANOPY_E2E_SCREENSHOTS="$ARTIFACTS" BENCH_OUT="${BENCH_OUT:-$ARTIFACTS/results.json}"
say "app: $APP; ports $DRIVER_PORT/$NATIVE_PORT; artifacts in $ARTIFACTS"

set +e
start_webkit_session "bench-$NAME" "$DRIVER_PORT" "$NATIVE_PORT" "$ARTIFACTS" node "tests/webdriver/bench/$SCRIPT"
RUN_SID=$WEBKIT_SID
wait "$RUN_SID"
rc=$?
set -e
[ "$rc" -eq 0 ] && say "done; results in $BENCH_OUT" || say "FAILED (exit $rc); see $ARTIFACTS"
exit "$rc"
