#!/bin/sh
# Runs a command inside a private D-Bus session with an unlocked gnome-keyring (Secret Service), so
# keychain tests use the real backend without touching anyone's login keyring. HOME and the XDG
# directories point at a throwaway folder that is removed afterwards; cargo/rustup keep their homes.
#
#   scripts/with-keyring.sh cargo test -p canopy-config
#
# Needs: dbus (dbus-run-session), gnome-keyring. On Debian/Ubuntu:
#   apt-get install -y --no-install-recommends dbus dbus-x11 gnome-keyring libsecret-1-0
set -eu

if [ "$#" -eq 0 ]; then
    echo "usage: $0 COMMAND [ARG...]" >&2
    exit 2
fi
for tool in dbus-run-session gnome-keyring-daemon; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "with-keyring: '$tool' not found; install dbus and gnome-keyring (apt-get install dbus gnome-keyring)" >&2
        exit 127
    fi
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/canopy-keyring.XXXXXX")
# gnome-keyring-daemon exits when its session bus goes away, which dbus-run-session ends.
cleanup() {
    rm -rf "$scratch"
}
trap cleanup EXIT INT TERM

mkdir -p "$scratch/home" "$scratch/data" "$scratch/config" "$scratch/cache" "$scratch/runtime"
chmod 700 "$scratch/runtime"

# Keep the toolchain where it is before HOME moves.
if [ -n "${HOME:-}" ]; then
    export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
    export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
fi
export HOME="$scratch/home"
export XDG_DATA_HOME="$scratch/data"
export XDG_CONFIG_HOME="$scratch/config"
export XDG_CACHE_HOME="$scratch/cache"
export XDG_RUNTIME_DIR="$scratch/runtime"
# No display: nothing may pop up an unlock prompter, and GTK's accessibility bus stays off.
unset DISPLAY WAYLAND_DISPLAY
export NO_AT_BRIDGE=1

dbus-run-session -- sh -c '
    set -eu
    # A fresh HOME has no keyring yet: --unlock creates the login keyring with this password.
    vars=$(printf %s "canopy-test" | gnome-keyring-daemon --unlock --components=secrets)
    set -a
    eval "$vars"
    set +a
    exec "$@"
' with-keyring "$@"
