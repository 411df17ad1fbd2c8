#!/usr/bin/env bash
# Builds the Canopy desktop app with the UI embedded.
#
#   scripts/build-app.sh [--release]
#
# 1. Builds the UI (npm ci + npm run build in ui/) when ui/ can be built; otherwise uses whatever
#    ui/dist holds (a placeholder page is written if there is none, so the binary still builds).
# 2. Builds the `canopy` binary with `--features tauri/custom-protocol`: without it the binary is a
#    dev build that loads the Vite dev server ("Could not connect to localhost").
# 3. Copies the binary aside to $TARGET_DIR/canopy-app/canopy, because any later plain `cargo build`
#    or `cargo test` of the app overwrites $TARGET_DIR/<profile>/canopy with a dev build.
#
# Prints the path of the copied binary on its last line.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
PROFILE=debug
CARGO_PROFILE=()
if [ "${1:-}" = "--release" ]; then
    PROFILE=release
    CARGO_PROFILE=(--release)
fi
say() { printf 'build-app: %s\n' "$*" >&2; }

if [ -f ui/package.json ] && [ -f ui/package-lock.json ] && grep -q '"build"' ui/package.json; then
    say "building the UI"
    # CANOPY_SKIP_NPM_CI=1 keeps ui/node_modules as it is (several builds sharing one checkout must not
    # wipe it under each other); otherwise the install matches package-lock.json exactly.
    if [ "${CANOPY_SKIP_NPM_CI:-}" = 1 ] && [ -d ui/node_modules ]; then
        say "CANOPY_SKIP_NPM_CI=1: keeping ui/node_modules"
    else
        npm ci --prefix ui --no-audit --no-fund >&2
    fi
    npm run build --prefix ui >&2
else
    say "ui/ has no package-lock.json yet: using the existing ui/dist"
fi
if [ ! -f ui/dist/index.html ]; then
    say "ui/dist/index.html is missing: writing a placeholder page"
    mkdir -p ui/dist
    cat > ui/dist/index.html <<'HTML'
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Canopy</title></head>
<body style="font-family: sans-serif; padding: 2rem"><h1>Canopy</h1>
<p>The UI has not been built. Run <code>npm ci --prefix ui &amp;&amp; npm run build --prefix ui</code>, then
<code>scripts/build-app.sh</code> again.</p></body></html>
HTML
fi

say "building the app ($PROFILE, UI embedded)"
cargo build -p canopy-app --features tauri/custom-protocol "${CARGO_PROFILE[@]}" >&2
OUT="$TARGET_DIR/canopy-app"
mkdir -p "$OUT"
cp "$TARGET_DIR/$PROFILE/canopy" "$OUT/canopy.tmp"
mv "$OUT/canopy.tmp" "$OUT/canopy"
say "binary: $OUT/canopy"
echo "$OUT/canopy"
