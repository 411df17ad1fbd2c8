#!/usr/bin/env bash
# End-to-end tests of the real Canopy app in real WebKit: tauri-driver + WebKitWebDriver on a virtual
# X screen, a private D-Bus session with an unlocked gnome-keyring (so keychain access never pops up a
# prompt), and the scripted model server on loopback. Runs `node --test tests/webdriver/`.
#
#   scripts/e2e-webdriver.sh                 # build what is needed, run every test
#   CANOPY_APP_BINARY=/abs/canopy scripts/e2e-webdriver.sh   # use an already built app (UI embedded)
#   scripts/e2e-webdriver.sh 02-subagents    # only test files whose name matches this (shell pattern)
#
# Screenshots go to artifacts/screenshots/, logs (tauri-driver, mock server) to artifacts/webdriver/.
# Exits with the test runner's status; every process it started is stopped, also on failure or Ctrl-C.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
FILTER=${1:-}
DRIVER_PORT=${CANOPY_E2E_DRIVER_PORT:-4444}
NATIVE_PORT=${CANOPY_E2E_NATIVE_PORT:-4445}
ARTIFACTS="$ROOT/artifacts"
LOGS="$ARTIFACTS/webdriver"
SHOTS="$ARTIFACTS/screenshots"
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}

say() { printf 'e2e-webdriver: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# --- System packages (only what is missing, so reruns are fast) ---------------------------------
PKGS="libwebkit2gtk-4.1-dev build-essential libssl-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev
pkg-config file curl xvfb xauth webkit2gtk-driver dbus dbus-x11 gnome-keyring libsecret-1-0 libsecret-tools"
missing=""
for p in $PKGS; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    say "installing:$missing"
    $sudo apt-get update
    # shellcheck disable=SC2086
    $sudo apt-get install -y --no-install-recommends $missing
fi
command -v node >/dev/null 2>&1 || die "node (20 or newer) is needed to run the tests"
# cargo install puts binaries here, which a fresh shell may not have on PATH yet.
export PATH="$PATH:${CARGO_HOME:-${HOME:-/root}/.cargo}/bin"
if ! command -v tauri-driver >/dev/null 2>&1; then
    say "installing tauri-driver"
    cargo install tauri-driver --version '^2' --locked
fi

# --- Build -----------------------------------------------------------------------------------------
if [ -n "${CANOPY_APP_BINARY:-}" ]; then
    APP="$CANOPY_APP_BINARY"
elif [ -x scripts/build-app.sh ]; then
    say "building the app with scripts/build-app.sh"
    # It prints the path of the binary (copied aside, so later cargo runs cannot replace it) last.
    APP=$(scripts/build-app.sh | tail -n 1)
else
    say "building the UI and the app (with the UI embedded)"
    (cd ui && npm ci --no-audit --no-fund && npm run build)
    cargo build -p canopy-app --features tauri/custom-protocol
    APP="$TARGET_DIR/debug/canopy"
fi
[ -n "$APP" ] && [ -x "$APP" ] || die "no app binary at '$APP'; set CANOPY_APP_BINARY to one built with scripts/build-app.sh"
APP=$(cd "$(dirname "$APP")" && pwd)/$(basename "$APP")
say "building canopy-mock-llm"
cargo build -p canopy-test-support --bin canopy-mock-llm
MOCK="$TARGET_DIR/debug/canopy-mock-llm"
[ -x "$MOCK" ] || die "canopy-mock-llm was not built at $MOCK"
if [ ! -d tests/webdriver/node_modules/webdriverio ]; then
    (cd tests/webdriver && npm ci --no-audit --no-fund)
fi

# --- Run -------------------------------------------------------------------------------------------
mkdir -p "$LOGS" "$SHOTS"
rm -f "$SHOTS"/*.png
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/canopy-e2e-webdriver.XXXXXX")
MOCK_PID=""
RUN_SID=""

# Everything under xvfb-run runs in its own session (setsid): the app, WebKitWebDriver and the
# WebKitNetworkProcess it leaves behind are re-parented when their parents exit, but keep the session id,
# so cleanup can find exactly the processes this run started.
# shellcheck source=scripts/lib/stop-session.sh
. "$ROOT/scripts/lib/stop-session.sh"
cleanup() {
    set +e
    stop_session "$RUN_SID"
    [ -z "$MOCK_PID" ] || { kill "$MOCK_PID" 2>/dev/null; wait "$MOCK_PID" 2>/dev/null; }
    rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$MOCK" --script tests/fixtures/projects/mock-script.json >"$LOGS/mock-llm.log" 2>&1 &
MOCK_PID=$!
MOCK_URL=""
for _ in $(seq 1 100); do
    MOCK_URL=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$LOGS/mock-llm.log" | head -n 1)
    [ -n "$MOCK_URL" ] && break
    kill -0 "$MOCK_PID" 2>/dev/null || die "canopy-mock-llm exited: $(cat "$LOGS/mock-llm.log")"
    sleep 0.1
done
[ -n "$MOCK_URL" ] || die "canopy-mock-llm did not print its address"
say "mock model server at $MOCK_URL"

# shellcheck source=scripts/lib/webkit-session.sh
. "$ROOT/scripts/lib/webkit-session.sh"
isolate_home "$SCRATCH"
export CANOPY_APP_BINARY="$APP" CANOPY_E2E_MOCK_URL="$MOCK_URL" CANOPY_E2E_DRIVER_PORT="$DRIVER_PORT"
export CANOPY_E2E_SCREENSHOTS="$SHOTS"

tests="tests/webdriver/"
if [ -n "$FILTER" ]; then
    # The filter is a shell pattern matched against the file names (e.g. `0[15]-`).
    tests=""
    for f in tests/webdriver/*.test.mjs; do
        # shellcheck disable=SC2254
        case "$(basename "$f")" in *$FILTER*) tests="$tests $f" ;; esac
    done
    [ -n "$tests" ] || die "no test file in tests/webdriver/ matches '$FILTER'"
fi
set +e
# One app at a time: the app is single-instance, and the files share one tauri-driver.
# shellcheck disable=SC2086
start_webkit_session e2e-webdriver "$DRIVER_PORT" "$NATIVE_PORT" "$LOGS" node --test --test-concurrency=1 $tests
RUN_SID=$WEBKIT_SID
wait "$RUN_SID"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
    say "FAILED (exit $rc); screenshots in $SHOTS, logs in $LOGS"
else
    say "all WebDriver tests passed; screenshots in $SHOTS"
fi
exit "$rc"
