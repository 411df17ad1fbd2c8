#!/usr/bin/env bash
# Takes a screenshot of the running app on a virtual screen.
#
#   scripts/screenshot.sh OUT.png [FOLDER] [SECONDS]
#
# Starts the app (built by scripts/build-app.sh when needed) under Xvfb in its own D-Bus session, with
# accessibility off so no daemons outlive it, waits SECONDS (default 6), captures the screen with
# ImageMagick's `import`, and stops the app. Config and data go to a scratch folder unless
# CANOPY_CONFIG_DIR / CANOPY_DATA_DIR are set, so a person's real settings are never touched.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:?usage: scripts/screenshot.sh OUT.png [FOLDER] [SECONDS]}
FOLDER=${2:-}
WAIT=${3:-6}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
APP="$TARGET_DIR/canopy-app/canopy"
for tool in xvfb-run dbus-run-session import; do
    command -v "$tool" >/dev/null || { echo "screenshot: $tool is missing (packages xvfb, dbus, imagemagick)" >&2; exit 1; }
done
[ -x "$APP" ] || "$ROOT/scripts/build-app.sh" >/dev/null
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/canopy-shot.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
export CANOPY_CONFIG_DIR=${CANOPY_CONFIG_DIR:-$SCRATCH/config}
export CANOPY_DATA_DIR=${CANOPY_DATA_DIR:-$SCRATCH/data}
ARGS=()
[ -n "$FOLDER" ] && ARGS=("$(cd "$FOLDER" && pwd)")

# A scratch HOME with an unlocked keyring: the settings screen asks the keychain for key status, and a
# locked or missing keyring would put an unlock prompt on the virtual screen.
export CANOPY_SHOT_HOME="$SCRATCH/home"
mkdir -p "$CANOPY_SHOT_HOME"

# Inside the virtual screen: start the app, wait, capture, stop the app by its own PID.
CANOPY_SHOT_OUT="$OUT" xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- env NO_AT_BRIDGE=1 \
    bash -c '
        export HOME="$CANOPY_SHOT_HOME"
        if command -v gnome-keyring-daemon >/dev/null; then
            vars=$(printf %s canopy-shot | gnome-keyring-daemon --unlock --components=secrets)
            set -a; eval "$vars"; set +a
        fi
        "$0" "${@:3}" >"$2/app.log" 2>&1 &
        app=$!
        sleep "$1"
        if ! kill -0 "$app" 2>/dev/null; then
            echo "screenshot: the app exited early; its log:" >&2; cat "$2/app.log" >&2; exit 1
        fi
        import -window root "$CANOPY_SHOT_OUT"
        kill "$app"; wait "$app" 2>/dev/null || true
        [ -n "${GNOME_KEYRING_PID:-}" ] && kill "$GNOME_KEYRING_PID" 2>/dev/null
        true
    ' "$APP" "$WAIT" "$SCRATCH" "${ARGS[@]}"
echo "$OUT"
