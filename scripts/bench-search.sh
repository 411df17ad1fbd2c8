#!/usr/bin/env bash
# Benchmarks canopy-tools' Grep and Glob (the real tool code, release build) against ripgrep and
# fd on Debian's Linux kernel source tree, and checks first that both sides find the same things.
#
# Usage: scripts/bench-search.sh [runs]     (default 15 interleaved runs per pair)
#        scripts/bench-search.sh --quick   smoke test for CI: a small generated tree, a debug build,
#                                          one run, results checked against a Python reference
#                                          instead of rg/fd (no download, no timing asserted)
# Env:   BENCH_TREE_DIR   where to unpack the tree (default /tmp/canopy-bench)
#        CARGO_TARGET_DIR honoured as usual
#
# Runs are interleaved (ours, theirs, ours, theirs…) rather than one tool's runs back to back, so
# load from other processes on a shared machine hits both sides alike; medians and minimums are
# reported. This is a benchmark, not a test: CI runs only its quick mode (below).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TREE_PARENT="${BENCH_TREE_DIR:-/tmp/canopy-bench}"
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"

if [ "${1:-}" = "--quick" ]; then
  TREE="$(mktemp -d)"
  trap 'rm -rf "$TREE"' EXIT
  # A small tree shaped like the kernel's for these searches, with what every tool must skip: an
  # ignored build folder, a hidden folder and a binary file.
  python3 - "$TREE" <<'PY'
import os, sys
root = sys.argv[1]
os.makedirs(os.path.join(root, ".git"))
open(os.path.join(root, ".gitignore"), "w").write("build/\n")
for d in range(12):
    for f in range(25):
        folder = os.path.join(root, "drivers" if d % 2 else "fs", f"sub{d}")
        os.makedirs(folder, exist_ok=True)
        ext = "c" if f % 3 else "h"
        lines = []
        for i in range(40 + f):
            if (i + f) % 11 == 0:
                lines.append(f"EXPORT_SYMBOL_GPL(sym_{d}_{f}_{i});")
            elif (i * d + f) % 17 == 0:
                lines.append(f"static const struct dev{d}_ops {{")
            else:
                lines.append(f"int fn_{d}_{f}_{i}(void) {{ return {i}; }}")
        open(os.path.join(folder, f"file{f}.{ext}"), "w").write("\n".join(lines) + "\n")
for skipped in ("build", ".cache"):
    os.makedirs(os.path.join(root, skipped), exist_ok=True)
    open(os.path.join(root, skipped, "gen.c"), "w").write("EXPORT_SYMBOL_GPL(x);\nstruct a_ops {\n")
open(os.path.join(root, "fs", "blob.c"), "wb").write(b"EXPORT_SYMBOL_GPL\0\0binary")
PY
  echo "building the search_bench example (debug)…" >&2
  (cd "$REPO" && cargo build --quiet --example search_bench -p canopy-tools)
  exec python3 - "$TARGET_DIR/debug/examples/search_bench" "$TREE" 1 quick <<'PY'
import os, re, subprocess, sys

bench, tree = sys.argv[1], sys.argv[2]

def ours(mode, pattern):
    out = subprocess.run([bench, tree, mode, pattern], check=True, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE).stdout.decode("utf-8", "replace")
    return [l[2:] if l.startswith("./") else l for l in out.splitlines()]

def files():
    for dirpath, dirnames, filenames in os.walk(tree):
        rel_dir = os.path.relpath(dirpath, tree)
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and not (rel_dir == "." and d == "build")]
        for name in filenames:
            if not name.startswith("."):
                path = os.path.join(dirpath, name)
                data = open(path, "rb").read()
                # Grep skips binary files; Glob lists them.
                text = None if b"\0" in data[:8192] else data.decode("utf-8", "replace")
                yield os.path.relpath(path, tree), text

def texts():
    return ((p, t) for p, t in files() if t is not None)

def check(name, got, want):
    if got != want:
        sys.exit(f"MISMATCH in {name}: {got!r:.300} vs {want!r:.300}")
    print(f"same results: {name}: {len(want) if isinstance(want, list) else want}", file=sys.stderr)

for pattern in ["EXPORT_SYMBOL_GPL", r"struct \w+_ops \{"]:
    rx = re.compile(pattern)
    want_files = sorted(p for p, text in texts() if rx.search(text))
    check(f"Grep files `{pattern}`", sorted(ours("grep-files", pattern)), want_files)
    lines = ours("grep-content", pattern)
    shown = [l for l in lines if not l.startswith("… [truncated")]
    m = re.search(r"\[truncated: (\d+) more line", "\n".join(lines))
    total = len(shown) + (int(m.group(1)) if m else 0)
    want_lines = sum(1 for _, text in texts() for l in text.splitlines() if rx.search(l))
    check(f"Grep content `{pattern}` (lines)", total, want_lines)
want_c = sorted(p for p, _ in files() if p.endswith(".c"))
check("Glob `**/*.c`", sorted(ours("glob", "**/*.c")), want_c)
print("bench-search quick mode: the benchmark's result checks hold", file=sys.stderr)
PY
fi

RUNS="${1:-15}"

need_pkg() { # command package
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "installing $2…" >&2
    apt-get install -y --no-install-recommends "$2" >/dev/null
  fi
}
need_pkg rg ripgrep
need_pkg fdfind fd-find
need_pkg python3 python3
if ! ls /usr/src/linux-source-*.tar.xz >/dev/null 2>&1; then
  echo "installing linux-source (≈140 MB)…" >&2
  apt-get install -y --no-install-recommends linux-source >/dev/null
fi
TARBALL="$(ls /usr/src/linux-source-*.tar.xz | sort -V | tail -n1)"
NAME="$(basename "$TARBALL" .tar.xz)"
TREE="$TREE_PARENT/$NAME"

if [ ! -f "$TREE/.bench-ready" ]; then
  echo "unpacking $TARBALL to $TREE_PARENT…" >&2
  rm -rf "$TREE"
  mkdir -p "$TREE_PARENT"
  tar -xf "$TARBALL" -C "$TREE_PARENT"
  # Debian appends "/*" (ignore everything at the top level) to the kernel's .gitignore for its
  # packaging repository; with it every tool would search nothing. Drop that block only.
  python3 - "$TREE/.gitignore" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
cut = text.find("#\n# Debian packaging")
if cut >= 0:
    open(path, "w").write(text[:cut])
PY
  # rg and fd only apply .gitignore inside a git repository; make the tree look like one so all
  # three tools use the same ignore rules (the Canopy tools apply them either way).
  mkdir -p "$TREE/.git"
  touch "$TREE/.bench-ready"
fi

echo "building the release search_bench example…" >&2
(cd "$REPO" && cargo build --release --quiet --example search_bench -p canopy-tools)
BENCH="$TARGET_DIR/release/examples/search_bench"

python3 - "$BENCH" "$TREE" "$RUNS" <<'PY'
import os, re, statistics, subprocess, sys, time

bench, tree, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])

def run(cmd, capture=False):
    # stdin is closed: rg searches stdin when it is not a terminal and no path is given.
    out = subprocess.run(cmd, cwd=tree, check=True, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE if capture else subprocess.DEVNULL)
    return out.stdout.decode("utf-8", "replace") if capture else None

def lines(text):
    return [l[2:] if l.startswith("./") else l for l in text.splitlines()]

cases = [
    ("Grep files_with_matches `EXPORT_SYMBOL_GPL`",
     [bench, tree, "grep-files", "EXPORT_SYMBOL_GPL"], ["rg", "-l", "EXPORT_SYMBOL_GPL", "."], "set"),
    ("Grep content `EXPORT_SYMBOL_GPL`",
     [bench, tree, "grep-content", "EXPORT_SYMBOL_GPL"], ["rg", "-n", "EXPORT_SYMBOL_GPL", "."], "count"),
    ("Grep content regex `struct \\w+_ops \\{`",
     [bench, tree, "grep-content", r"struct \w+_ops \{"], ["rg", "-n", r"struct \w+_ops \{", "."], "count"),
    ("Glob `**/*.c` vs `fdfind -t f -g '*.c'`",
     [bench, tree, "glob", "**/*.c"], ["fdfind", "-t", "f", "-g", "*.c", "."], "set"),
]

# Same work first: identical results (sets of files; for content mode, the same number of lines,
# since the tool caps what it prints and says how many lines it left out).
for name, ours, theirs, check in cases:
    a, b = run(ours, True), run(theirs, True)
    if check == "set":
        if sorted(lines(a)) != sorted(lines(b)):
            sys.exit(f"MISMATCH in {name}: {len(lines(a))} vs {len(lines(b))} results")
        detail = f"{len(lines(b))} results"
    else:
        shown = [l for l in lines(a) if not l.startswith("… [truncated")]
        m = re.search(r"\[truncated: (\d+) more line", a)
        total = len(shown) + (int(m.group(1)) if m else 0)
        if total != len(lines(b)):
            sys.exit(f"MISMATCH in {name}: {total} vs {len(lines(b))} lines")
        detail = f"{len(lines(b))} matching lines"
    print(f"same results: {name}: {detail}", file=sys.stderr)

def timed(cmd):
    t = time.perf_counter()
    run(cmd)
    return time.perf_counter() - t

print(f"| case | Canopy median (min) | rg/fd median (min) | ratio median (min) |")
print(f"|---|---|---|---|")
for name, ours, theirs, _ in cases:
    for _ in range(2):  # warm the page cache and both binaries
        timed(ours); timed(theirs)
    a, b = [], []
    for _ in range(runs):
        a.append(timed(ours)); b.append(timed(theirs))
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"| {name} | {ma*1000:.0f} ms ({min(a)*1000:.0f}) | {mb*1000:.0f} ms ({min(b)*1000:.0f}) "
          f"| {ma/mb:.2f}× ({min(a)/min(b):.2f}×) |", flush=True)
PY
