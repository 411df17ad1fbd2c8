#!/usr/bin/env bash
# Runs every test of Canopy: formatting, clippy, the Rust tests (with a private, unlocked
# gnome-keyring so keychain tests hit the real Secret Service), the UI's type check, lint, unit tests
# and build, the end-to-end tests of the real app in real WebKit under Xvfb, and the installed .deb
# (scripts/test-package.sh). Sets itself up first.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

step() { printf '\n=== %s ===\n' "$*"; }

step "set-up"
scripts/setup.sh

# A full run writes about 7 GiB under target/ (1.6 of it the release build of the packages). When the
# disk cannot hold that, say so here rather than leave it to a rustc "No space left on device" halfway
# through clippy.
target_dir=${CARGO_TARGET_DIR:-$PWD/target}
mkdir -p "$target_dir"
free_kib=$(df -Pk "$target_dir" | awk 'NR==2 {print $4}')
echo "disk: $((free_kib / 1024 / 1024)) GiB free for $target_dir (a full run needs about 8 GiB)"
if [ "${free_kib:-0}" -lt $((8 * 1024 * 1024)) ]; then
  echo "warning: less than 8 GiB free; the build may fail with 'No space left on device'." >&2
  echo "         free space (e.g. old target/ folders) or point CARGO_TARGET_DIR at a larger disk." >&2
fi
# A one-shot CI build never reuses incremental caches; they only cost disk and time.
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL=0; fi

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

step "Benchmarks in quick mode (smoke test: each still completes and its own checks hold; no timings)"
CANOPY_BENCH_QUICK=1 cargo test -p canopy-runtime --benches --quiet
CANOPY_BENCH_QUICK=1 npm run --prefix ui bench
scripts/bench-search.sh --quick
# The WebKit benches reuse the debug app the WebDriver tests just built (target/canopy-app/canopy).
if [ -x scripts/e2e-webdriver.sh ]; then
  scripts/bench-history.sh --quick
  scripts/bench-frames.sh --quick
fi

# Last, as it is the slowest: a release build (a few minutes) of the packages a person downloads.
step "The installed app: build the .deb/.rpm, install the .deb, test it under Xvfb, remove it"
scripts/test-package.sh

step "all tests passed"
