#!/usr/bin/env bash
# Runs every test of Canopy: formatting, clippy, the Rust tests (with a private, unlocked
# gnome-keyring so keychain tests hit the real Secret Service), the UI's type check, lint, unit tests
# and build, and the end-to-end tests of the real app in real WebKit under Xvfb. Sets itself up first.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

step() { printf '\n=== %s ===\n' "$*"; }

step "set-up"
scripts/setup.sh

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "Rust tests (real Secret Service in a private D-Bus session)"
CANOPY_REQUIRE_KEYRING=1 scripts/with-keyring.sh cargo test --workspace --quiet --no-fail-fast

step "UI: type check, lint, unit tests, build"
npm run --prefix ui check
npm run --prefix ui lint
npm run --prefix ui test
npm run --prefix ui build

if [ -x scripts/e2e-webdriver.sh ]; then
  step "End-to-end: the real app in WebKit (tauri-driver + WebKitWebDriver under Xvfb)"
  scripts/e2e-webdriver.sh
fi

step "all tests passed"
