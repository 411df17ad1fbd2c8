# Sourced by scripts that start the app under `setsid`: everything such a run starts (the app,
# WebKitWebDriver, the WebKitNetworkProcess left behind when its parent exits, Xvfb, D-Bus, the keyring)
# keeps the session id even when re-parented, so it can be stopped exactly, without touching anything else.

# Prints the pids in session $1.
in_session() { ps -e -o pid=,sid= | awk -v s="$1" '$2 == s { print $1 }'; }

# Stops every process of session $1 (TERM, then KILL) and waits until they are gone.
stop_session() {
    local sid="$1" sig pids
    [ -n "$sid" ] || return 0
    for sig in TERM KILL; do
        pids=$(in_session "$sid")
        [ -n "$pids" ] || break
        # shellcheck disable=SC2086
        kill -"$sig" $pids 2>/dev/null
        for _ in $(seq 1 50); do
            [ -n "$(in_session "$sid")" ] || break
            sleep 0.1
        done
    done
}
