# Sourced by the scripts that drive the real app in WebKit (e2e-webdriver.sh, bench-webkit.sh): one
# recipe for a throwaway home, and for a virtual X screen with a private D-Bus session, an unlocked
# gnome-keyring and tauri-driver, so the tests and the benchmarks cannot drift apart.

# isolate_home DIR: HOME, XDG folders, TMPDIR and Canopy's config/data folders move under DIR (a fresh
# login keyring, no window state or WebKit data from earlier runs); cargo and rustup keep their homes.
# Keys and model overrides from the caller's shell are cleared: they would change what the app shows.
isolate_home() {
    local dir="$1"
    mkdir -p "$dir/home" "$dir/xdg-data" "$dir/xdg-config" "$dir/xdg-cache" "$dir/runtime" \
        "$dir/canopy-config" "$dir/canopy-data" "$dir/tmp"
    chmod 700 "$dir/runtime"
    if [ -n "${HOME:-}" ]; then
        export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
    fi
    export HOME="$dir/home" XDG_DATA_HOME="$dir/xdg-data" XDG_CONFIG_HOME="$dir/xdg-config"
    export XDG_CACHE_HOME="$dir/xdg-cache" XDG_RUNTIME_DIR="$dir/runtime" TMPDIR="$dir/tmp"
    export CANOPY_CONFIG_DIR="$dir/canopy-config" CANOPY_DATA_DIR="$dir/canopy-data" NO_AT_BRIDGE=1
    # WebKitWebDriver's screenshot never answers when WebKit draws without compositing, which the app
    # picks on a machine without a GPU (src-tauri/src/render.rs); keep WebKit's default unless the
    # caller asks for another mode (the frame benchmark measures `auto`, what such a user gets).
    export CANOPY_WEBKIT_COMPOSITING="${CANOPY_WEBKIT_COMPOSITING:-on}"
    unset CANOPY_MAIN_API_KEY CANOPY_LIGHT_API_KEY CANOPY_MAIN_PROVIDER CANOPY_MAIN_BASE_URL CANOPY_MAIN_MODEL \
        CANOPY_LIGHT_PROVIDER CANOPY_LIGHT_BASE_URL CANOPY_LIGHT_MODEL WAYLAND_DISPLAY
}

# start_webkit_session LABEL DRIVER_PORT NATIVE_PORT LOG_DIR COMMAND [ARG...]
# Starts, in the background and in a session of its own (setsid), an Xvfb screen of 1280x800, a private
# D-Bus session with gnome-keyring unlocked, and tauri-driver on DRIVER_PORT/NATIVE_PORT (log in
# LOG_DIR/tauri-driver.log); once the driver answers, runs COMMAND there. Sets WEBKIT_SID to the
# session's id: `wait "$WEBKIT_SID"` gives COMMAND's exit status, and `stop_session "$WEBKIT_SID"`
# (scripts/lib/stop-session.sh) stops everything it started, re-parented processes included.
start_webkit_session() {
    setsid xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- sh -c '
        set -eu
        label=$1 dport=$2 nport=$3 logs=$4
        shift 4
        # The keyring must be unlocked before the app starts: a locked one makes the app show an unlock
        # prompt on the virtual screen and hang. With a fresh HOME this creates the login keyring.
        vars=$(printf %s "$label" | gnome-keyring-daemon --unlock --components=secrets)
        set -a; eval "$vars"; set +a
        tauri-driver --port "$dport" --native-port "$nport" >"$logs/tauri-driver.log" 2>&1 &
        driver=$!
        up=""
        for _ in $(seq 1 100); do
            if curl -fsS "http://127.0.0.1:$dport/status" >/dev/null 2>&1; then up=1; break; fi
            kill -0 "$driver" 2>/dev/null || break
            sleep 0.1
        done
        if [ -z "$up" ]; then
            echo "$label: tauri-driver did not answer on port $dport:" >&2
            cat "$logs/tauri-driver.log" >&2
            exit 1
        fi
        set +e
        "$@"
        rc=$?
        kill "$driver" 2>/dev/null
        exit $rc
    ' webkit-session "$@" &
    WEBKIT_SID=$!
}
