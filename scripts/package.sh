#!/usr/bin/env bash
# Builds the release packages of Canopy for Linux: a .deb and an .rpm, with the UI embedded, using the
# Tauri CLI pinned in the root package-lock.json. Prints the path of each package, one a line, last.
#
#   scripts/package.sh
#
# The AppImage is left out on purpose: Tauri's AppImage bundler downloads linuxdeploy and its plugins
# while it builds, which cannot work on a machine without internet. The release workflow
# (.github/workflows/release.yml) builds it on GitHub's runners instead.
#
# Packages land in $CARGO_TARGET_DIR/release/bundle/{deb,rpm}/ (target/ when CARGO_TARGET_DIR is unset).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
say() { printf 'package: %s\n' "$*" >&2; }

# System packages, the UI's and the root's npm packages (the Tauri CLI).
scripts/setup.sh --app >&2

# The packages' version (tauri.conf.json; a test in src-tauri/src/lib.rs keeps it equal to Cargo.toml's).
version=$(node -p 'require("./tauri.conf.json").version')
bundle="$TARGET_DIR/release/bundle"
# Packages left by an earlier build (any version) would otherwise be reported as this build's.
rm -f "$bundle"/deb/*.deb "$bundle"/rpm/*.rpm

say "building Canopy $version (release) and bundling deb, rpm"
# --ci: no prompts. The CLI runs tauri.conf.json's beforeBuildCommand (the UI build) first and builds
# the binary with the custom-protocol feature, so the package carries the UI.
npm run --silent tauri -- build --ci --bundles deb,rpm >&2

packages=()
for f in "$bundle"/deb/*_"$version"_*.deb "$bundle"/rpm/*-"$version"-*.rpm; do
    [ -f "$f" ] && packages+=("$f")
done
if [ "${#packages[@]}" -ne 2 ]; then
    say "expected one .deb and one .rpm of version $version under $bundle, found: ${packages[*]:-none}"
    exit 1
fi
printf '%s\n' "${packages[@]}"
