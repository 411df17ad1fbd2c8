#!/usr/bin/env bash
# Tests Canopy as a person installs it. Builds the packages (scripts/package.sh), installs the .deb with
# apt-get (so its declared dependencies are checked), checks the installed desktop entry
# (desktop-file-validate, `canopy %F`, offered for folders, StartupWMClass), the icons (every size the
# hicolor theme asks for, each the size its folder says), the binary's linked libraries (all found,
# each from a package the .deb depends on) and `canopy --version`; compares the .rpm's files with
# those; starts the *installed* /usr/bin/canopy under Xvfb on a folder through WebDriver
# (tests/package/installed-app.test.mjs: the folder opens, WM_CLASS, About, a second launch, a run,
# the Start screen); then upgrades, removes and purges the package and checks that the person's
# settings, traces and recent projects are untouched throughout.
#
#   scripts/test-package.sh                          build the packages, then test the .deb
#   CANOPY_DEB=/abs/Canopy_….deb [CANOPY_RPM=/abs/Canopy-….rpm] scripts/test-package.sh   already built ones
#
# Needs root or sudo (apt-get). Leaves the machine as it found it, also when a step fails: the package
# is removed again and every process started here is stopped. Refuses to run when the package is
# already installed, rather than replace and then remove someone's copy.
# Screenshots go to artifacts/screenshots/package/, logs to artifacts/package/.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
DRIVER_PORT=${CANOPY_E2E_DRIVER_PORT:-4454}
NATIVE_PORT=${CANOPY_E2E_NATIVE_PORT:-4455}
LOGS="$ROOT/artifacts/package"
SHOTS="$ROOT/artifacts/screenshots/package"
# The hicolor sizes desktops ask an application icon in (48 is the one the icon theme spec requires).
ICON_SIZES="16 24 32 48 64 128 256 512"

say() { printf 'test-package: %s\n' "$*" >&2; }
fail() { say "FAIL: $*"; exit 1; }
ok() { say "ok: $*"; }

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || fail "installing the package needs root or sudo"
    sudo="sudo"
fi

scripts/setup.sh
mkdir -p "$LOGS" "$SHOTS"
rm -f "$SHOTS"/*.png

if [ -n "${CANOPY_DEB:-}" ]; then
    deb=$CANOPY_DEB
    rpm_file=${CANOPY_RPM:-}
else
    say "building the packages (release)"
    built=$(scripts/package.sh)
    deb=$(printf '%s\n' "$built" | grep '\.deb$')
    rpm_file=$(printf '%s\n' "$built" | grep '\.rpm$')
fi
[ -f "$deb" ] || fail "no .deb at '$deb'"
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
pkg=$(dpkg-deb -f "$deb" Package)
version=$(dpkg-deb -f "$deb" Version)
say "testing $pkg $version from $deb"

if [ "$(dpkg-query -W -f '${db:Status-Status}' "$pkg" 2>/dev/null || true)" != "" ] &&
   [ "$(dpkg-query -W -f '${db:Status-Status}' "$pkg" 2>/dev/null)" != "not-installed" ]; then
    fail "$pkg is already installed here; this test installs and removes it. Remove it first (apt-get remove $pkg)"
fi

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/canopy-test-package.XXXXXX")
installed=false
RUN_SID=""
MOCK_PID=""
# shellcheck source=scripts/lib/stop-session.sh
. "$ROOT/scripts/lib/stop-session.sh"
cleanup() {
    set +e
    stop_session "$RUN_SID"
    [ -z "$MOCK_PID" ] || { kill "$MOCK_PID" 2>/dev/null; wait "$MOCK_PID" 2>/dev/null; }
    if $installed && dpkg-query -W "$pkg" >/dev/null 2>&1; then
        say "removing $pkg again"
        DEBIAN_FRONTEND=noninteractive $sudo apt-get purge -y -qq "$pkg" >/dev/null 2>&1
    fi
    rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- Install ---------------------------------------------------------------------------------------
# Set first: a failed install can leave the package half-configured, and cleanup removes that too.
installed=true
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$deb" >"$LOGS/apt-install.log" 2>&1 ||
    fail "apt-get install $deb failed: $(tail -n 20 "$LOGS/apt-install.log")"
ok "apt-get installed $pkg $version with its declared dependencies"

# --- The command -----------------------------------------------------------------------------------
app=$(command -v canopy || true)
[ "$app" = /usr/bin/canopy ] || fail "canopy on PATH is '$app', not /usr/bin/canopy"
got=$(canopy --version)
[ "$got" = "canopy $version" ] || fail "canopy --version printed '$got', the package is $version"
ok "canopy --version: $got"

# --- Desktop entry ---------------------------------------------------------------------------------
entries=$(dpkg -L "$pkg" | grep '^/usr/share/applications/.*\.desktop$' || true)
[ "$(printf '%s\n' "$entries" | grep -c .)" -eq 1 ] || fail "expected one desktop entry, the package has: ${entries:-none}"
entry=$entries
desktop-file-validate "$entry" >"$LOGS/desktop-file-validate.log" 2>&1 ||
    fail "desktop-file-validate $entry: $(cat "$LOGS/desktop-file-validate.log")"
! grep -qi 'error' "$LOGS/desktop-file-validate.log" || fail "desktop-file-validate $entry: $(cat "$LOGS/desktop-file-validate.log")"
field() { sed -n "s/^$1=//p" "$entry" | head -n 1; }
[ "$(field Exec)" = "canopy %F" ] || fail "Exec is '$(field Exec)', not 'canopy %F' (folders from a file manager)"
case ";$(field MimeType)" in *";inode/directory;"*) ;; *) fail "MimeType '$(field MimeType)' lacks inode/directory: no 'Open with Canopy' for folders" ;; esac
wm_class=$(field StartupWMClass)
[ -n "$wm_class" ] || fail "no StartupWMClass in $entry"
icon=$(field Icon)
[ -n "$icon" ] || fail "no Icon in $entry"
# The package's dpkg trigger (desktop-file-utils) indexes the entry: this is what file managers read.
grep -q "^inode/directory=.*$(basename "$entry")" /usr/share/applications/mimeinfo.cache ||
    fail "$(basename "$entry") is not in mimeinfo.cache under inode/directory"
ok "desktop entry $entry: valid, Exec=canopy %F, offered for folders, StartupWMClass=$wm_class, Icon=$icon"

# --- Icons -----------------------------------------------------------------------------------------
theme_dirs=$(sed -n 's/^Directories=//p' /usr/share/icons/hicolor/index.theme | tr ',' '\n')
for s in $ICON_SIZES; do
    f="/usr/share/icons/hicolor/${s}x${s}/apps/$icon.png"
    [ -f "$f" ] || fail "no ${s}x${s} icon: $f is missing"
    dims=$(identify -format '%wx%h' "$f")
    [ "$dims" = "${s}x${s}" ] || fail "$f is $dims, not ${s}x${s}"
    printf '%s\n' "$theme_dirs" | grep -qx "${s}x${s}/apps" || fail "the hicolor theme has no ${s}x${s}/apps folder"
done
# Files in NxN@2 must be 2N pixels; none are shipped, so none can be wrong.
! dpkg -L "$pkg" | grep -q '/hicolor/[0-9x]*@' || fail "the package ships scaled (@2) icon folders: $(dpkg -L "$pkg" | grep '@')"
ok "icons: $ICON_SIZES, each the size of its folder"

# --- Linked libraries ------------------------------------------------------------------------------
ldd /usr/bin/canopy >"$LOGS/ldd.txt"
! grep -q 'not found' "$LOGS/ldd.txt" || fail "unresolved libraries: $(grep 'not found' "$LOGS/ldd.txt")"
# Every library the binary names directly must come from a package the .deb depends on, directly or
# through those packages' own dependencies: else installing it on a machine without build tools breaks.
closure=$(apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "$pkg" 2>/dev/null | grep -E '^[a-z0-9]' | sed 's/:.*//' | sort -u)
for lib in $(objdump -p /usr/bin/canopy | awk '/NEEDED/ {print $2}'); do
    # `libx.so => /path (addr)`, or for the dynamic loader `/lib64/ld-linux-x86-64.so.2 (addr)`.
    resolved=$(awk -v l="$lib" '$1 == l && $3 ~ /^\// {print $3; exit}
        substr($1, length($1) - length(l)) == "/" l {print $1; exit}' "$LOGS/ldd.txt")
    [ -n "$resolved" ] || fail "$lib is not resolved"
    owner=$(dpkg -S "$(readlink -f "$resolved")" 2>/dev/null | head -n 1 | cut -d: -f1 || true)
    [ -n "$owner" ] || owner=$(dpkg -S "$resolved" 2>/dev/null | head -n 1 | cut -d: -f1 || true)
    [ -n "$owner" ] || fail "$lib ($resolved) belongs to no Debian package"
    printf '%s\n' "$closure" | grep -qx "$owner" || fail "$lib comes from $owner, which $pkg does not depend on (Depends: $(dpkg-deb -f "$deb" Depends))"
done
ok "linked libraries: all found, all from $pkg's dependencies ($(dpkg-deb -f "$deb" Depends))"

# --- The .rpm carries the same app ------------------------------------------------------------------
# It cannot be installed here (no rpm-based system); it must at least hold exactly the files just
# checked and require the libraries the .deb depends on. The binaries differ only in the marker
# Tauri's bundler writes into each (`__TAURI_BUNDLE_TYPE_VAR_DEB` / `_RPM`, three bytes).
if [ -n "$rpm_file" ]; then
    mkdir "$SCRATCH/rpm-root"
    rpm2archive - <"$rpm_file" | tar -xz -C "$SCRATCH/rpm-root"
    deb_files=$(dpkg -L "$pkg" | while read -r f; do if [ -f "$f" ] && [ ! -L "$f" ]; then echo "$f"; fi; done | sort)
    rpm_files=$(cd "$SCRATCH/rpm-root" && find . -type f | sed 's|^\.||' | sort)
    [ "$deb_files" = "$rpm_files" ] || fail "the .rpm's files differ from the .deb's: $(diff <(echo "$deb_files") <(echo "$rpm_files"))"
    for f in $deb_files; do
        if [ "$f" = /usr/bin/canopy ]; then
            # cmp exits 1 when the files differ, which they do.
            differ=$(cmp -l "$f" "$SCRATCH/rpm-root$f" | wc -l || true)
            [ "$differ" -eq 3 ] && grep -q __TAURI_BUNDLE_TYPE_VAR_RPM "$SCRATCH/rpm-root$f" ||
                fail "the .rpm's /usr/bin/canopy differs from the .deb's in $differ bytes, not just the bundle-type marker"
        else
            cmp -s "$f" "$SCRATCH/rpm-root$f" || fail "the .rpm's $f differs from the .deb's"
        fi
    done
    requires=$(rpm -qpR "$rpm_file")
    for lib in libwebkit2gtk-4.1.so.0 libgtk-3.so.0; do
        printf '%s\n' "$requires" | grep -q "^$lib" || fail "the .rpm does not require $lib (Requires: $requires)"
    done
    ok "the .rpm holds the same $(echo "$deb_files" | wc -l) files and requires WebKitGTK 4.1 and GTK 3"
else
    say "no .rpm given (CANOPY_RPM): its contents are not compared"
fi

# --- The installed app under Xvfb, through WebDriver -----------------------------------------------
say "building canopy-mock-llm (the scripted model server)"
cargo build -p canopy-test-support --bin canopy-mock-llm --quiet
MOCK="$TARGET_DIR/debug/canopy-mock-llm"
"$MOCK" --script tests/fixtures/projects/mock-script.json >"$LOGS/mock-llm.log" 2>&1 &
MOCK_PID=$!
MOCK_URL=""
for _ in $(seq 1 100); do
    MOCK_URL=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$LOGS/mock-llm.log" | head -n 1)
    [ -n "$MOCK_URL" ] && break
    kill -0 "$MOCK_PID" 2>/dev/null || fail "canopy-mock-llm exited: $(cat "$LOGS/mock-llm.log")"
    sleep 0.1
done
[ -n "$MOCK_URL" ] || fail "canopy-mock-llm did not print its address"

# shellcheck source=scripts/lib/webkit-session.sh
. "$ROOT/scripts/lib/webkit-session.sh"
isolate_home "$SCRATCH"
# The installed app must find the person's files where the XDG folders say, with no override.
unset CANOPY_CONFIG_DIR CANOPY_DATA_DIR
config_dir="$XDG_CONFIG_HOME/canopy"
data_dir="$XDG_DATA_HOME/canopy"
mkdir -p "$config_dir" "$SCRATCH/projects"
cp -r tests/fixtures/projects/shop-fixture "$SCRATCH/projects/shop-a"
cp -r tests/fixtures/projects/shop-fixture "$SCRATCH/projects/shop-b"
# The person's settings: both model slots on the scripted server (no key needed on loopback).
node -e '
  const [file, url] = process.argv.slice(1);
  const slot = (model) => ({ provider: "openai", base_url: `${url}/v1`, model, context_window: 200000,
    input_price_per_mtok: null, output_price_per_mtok: null, max_output_tokens: 4096 });
  require("fs").writeFileSync(file, JSON.stringify({ version: 1, main: slot("mock-main"), light: slot("mock-light"), parallelism: 4 }, null, 2));
' "$config_dir/settings.json" "$MOCK_URL"

export CANOPY_INSTALLED_APP=/usr/bin/canopy CANOPY_EXPECT_VERSION="$version" CANOPY_EXPECT_WM_CLASS="$wm_class"
export CANOPY_PROJECT_A="$SCRATCH/projects/shop-a" CANOPY_PROJECT_B="$SCRATCH/projects/shop-b"
export CANOPY_E2E_MOCK_URL="$MOCK_URL" CANOPY_E2E_DRIVER_PORT="$DRIVER_PORT" CANOPY_E2E_SCREENSHOTS="$SHOTS"
set +e
start_webkit_session test-package "$DRIVER_PORT" "$NATIVE_PORT" "$LOGS" \
    node --test --test-concurrency=1 tests/package/installed-app.test.mjs
RUN_SID=$WEBKIT_SID
wait "$RUN_SID"
rc=$?
set -e
stop_session "$RUN_SID"
RUN_SID=""
[ "$rc" -eq 0 ] || fail "the installed app's WebDriver test failed (exit $rc); screenshots in $SHOTS, logs in $LOGS"
ok "the installed app opened the folder, grouped under its launcher, showed its version, took a second launch's folder, ran a prompt, started on the Start screen from the menu"

# --- Remove: the person's files stay -----------------------------------------------------------------
# What the person has after using the app: settings, the recent-projects list and the run's trace.
[ -f "$data_dir/recent-projects.json" ] || fail "the app wrote no recent-projects.json under $data_dir (the XDG data folder)"
find "$data_dir/traces" -name '*.jsonl' | grep -q . || fail "no trace under $data_dir/traces"
# Everything the app left in the person's folders, for whoever reads the README's list of them.
(cd "$SCRATCH" && find home xdg-config xdg-data xdg-cache -maxdepth 3 | sort) >"$LOGS/user-files.txt"
(cd "$SCRATCH" && find xdg-config xdg-data -type f -print0 | sort -z | xargs -0 sha256sum) >"$SCRATCH/before.sha256"
# An upgrade: the same files repacked as a higher version, installed over this one through dpkg's
# upgrade path (the old package's prerm/postrm run as for any upgrade).
dpkg-deb -R "$deb" "$SCRATCH/repack"
sed -i "s/^Version: .*/Version: ${version}+upgrade1/" "$SCRATCH/repack/DEBIAN/control"
dpkg-deb --root-owner-group -b "$SCRATCH/repack" "$SCRATCH/upgrade.deb" >/dev/null
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$SCRATCH/upgrade.deb" >"$LOGS/apt-upgrade.log" 2>&1 ||
    fail "upgrading to ${version}+upgrade1 failed: $(tail -n 20 "$LOGS/apt-upgrade.log")"
[ "$(dpkg-query -W -f '${Version}' "$pkg")" = "${version}+upgrade1" ] || fail "the upgrade did not replace $version"
(cd "$SCRATCH" && sha256sum --quiet -c before.sha256) || fail "upgrading the package changed the person's files"
ok "upgraded $pkg to ${version}+upgrade1; the person's files are untouched"
DEBIAN_FRONTEND=noninteractive $sudo apt-get purge -y -qq "$pkg" >"$LOGS/apt-purge.log" 2>&1 ||
    fail "apt-get purge $pkg failed: $(tail -n 20 "$LOGS/apt-purge.log")"
installed=false
[ ! -e /usr/bin/canopy ] || fail "/usr/bin/canopy is still there after purge"
[ ! -e "$entry" ] || fail "$entry is still there after purge"
(cd "$SCRATCH" && sha256sum --quiet -c before.sha256) || fail "removing the package changed the person's files"
ok "purged $pkg; the person's settings, traces and recent projects ($(wc -l <"$SCRATCH/before.sha256") files) are untouched"
say "passed; screenshots in $SHOTS"
