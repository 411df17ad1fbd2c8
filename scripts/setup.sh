#!/usr/bin/env bash
# Installs everything Canopy needs to build, run and test on Debian/Ubuntu, skipping what is already
# there: system packages (WebKitGTK, Xvfb, D-Bus, gnome-keyring, bubblewrap for the Bash sandbox, …), the UI's npm packages, the
# WebDriver test packages, and tauri-driver. Safe to run again; prints what it does.
#
#   scripts/setup.sh          everything (what scripts/test-all.sh needs)
#   scripts/setup.sh --app    only what building and running the app needs
set -euo pipefail
cd "$(dirname "$0")/.."
app_only=false
[ "${1:-}" = "--app" ] && app_only=true

packages=(
  libwebkit2gtk-4.1-dev build-essential libssl-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev
  libdbus-1-dev pkg-config file xvfb xauth webkit2gtk-driver dbus dbus-x11 gnome-keyring libsecret-1-0
  libsecret-tools keyutils imagemagick curl bubblewrap desktop-file-utils x11-utils rpm
)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
      echo "setup: missing system packages: ${missing[*]}" >&2
      echo "setup: run as root: apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
      exit 1
    fi
  fi
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

for tool in cargo node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    case "$tool" in
      cargo) echo "setup: Rust is missing: install it with rustup (https://rustup.rs), then run this again" >&2 ;;
      *) echo "setup: $tool is missing: apt-get install nodejs npm (Node.js 20 or newer), then run this again" >&2 ;;
    esac
    exit 1
  fi
done

# npm ci only when the lock file changed since the last install.
npm_install() {
  local dir="$1"
  [ -f "$dir/package-lock.json" ] || return 0
  local stamp="$dir/node_modules/.canopy-lock-stamp"
  if [ -f "$stamp" ] && cmp -s "$dir/package-lock.json" "$stamp"; then
    return 0
  fi
  echo "setup: npm ci in $dir"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$dir/package-lock.json" "$stamp"
}
npm_install ui
# The Tauri CLI (root package.json), which scripts/package.sh builds the packages with.
npm_install .
if $app_only; then
  echo "setup: ok"
  exit 0
fi
npm_install tests/webdriver

if ! command -v tauri-driver >/dev/null 2>&1; then
  echo "setup: cargo install tauri-driver"
  cargo install tauri-driver --version '^2' --locked --quiet
fi
echo "setup: ok"
