#!/usr/bin/env bash
# Starts the Canopy desktop app, building it first when the binary is missing or older than the sources.
#
#   scripts/run-app.sh [FOLDER]
#
# FOLDER is opened as the project. CANOPY_* variables (model overrides, CANOPY_CONFIG_DIR,
# CANOPY_DATA_DIR, API keys) reach the app unchanged.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
APP="$TARGET_DIR/canopy-app/canopy"

newest_source=$(find "$ROOT/src-tauri/src" "$ROOT/src-tauri/crates" "$ROOT/tauri.conf.json" "$ROOT/ui/dist" \
    -type f -newer "$APP" -print -quit 2>/dev/null || true)
if [ ! -x "$APP" ] || [ -n "$newest_source" ]; then
    "$ROOT/scripts/setup.sh" --app
    "$ROOT/scripts/build-app.sh" >/dev/null
fi
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
    echo "run-app: no display (DISPLAY and WAYLAND_DISPLAY are unset)." >&2
    echo "run-app: on a headless machine use scripts/screenshot.sh OUT.png [FOLDER], or run under" >&2
    echo "run-app:   xvfb-run -a dbus-run-session -- env NO_AT_BRIDGE=1 $APP [FOLDER]" >&2
    exit 1
fi
exec "$APP" "$@"
