#!/usr/bin/env bash
# Builds the images the image tests use, once, into an OCI layout (cached across runs):
#
#   base  a Debian bookworm minbase root file system (debootstrap) with git and python3
#   swe   laid out like SWE-bench's images: base + the repository at /testbed with history,
#         a conda-like environment under /opt/miniconda3 activated by `source
#         /opt/miniconda3/bin/activate && conda activate testbed` (as SWE-bench's eval script
#         does), a layer of whiteouts (a file, a directory) and an opaque directory;
#         WorkingDir /testbed. The repository also holds the future, as SWE-bench's images
#         did before its fix of issue #465: the fix of `subtract` committed after the base
#         and tagged, a branch, a remote with its tracking ref, notes, a stash, a reflog and
#         ORIG_HEAD naming the fix, and a dangling commit and blob; HEAD is the base
#         ("subtract, tests"), tagged v0.9 one commit earlier
#   swe-cached  swe with the base's code also outside git: calc's byte-compiled cache in
#         /testbed and a non-editable copy of calc (with its cache) in the environment's
#         site-packages (where a SWE-smith task's code before its bug must not survive)
#   r2e   laid out like R2E-Gym's: base + /testbed with run_tests.sh and r2e_tests/, the
#         tests' output ending as `pytest -rA`'s does (the summary R2E-Gym's parser reads)
#
# Usage: scripts/test-images.sh [DIR]   (default $SWERVE_TEST_IMAGES or
# /var/cache/swerve-test-images); prints the layout directory. Needs root, debootstrap,
# umoci (Debian packages; scripts/prerequisites.sh installs them).
set -euo pipefail

DIR=${1:-${SWERVE_TEST_IMAGES:-/var/cache/swerve-test-images}}
VERSION=7 # bump when the images change
LAYOUT="$DIR/layout-v$VERSION"
if [ -f "$LAYOUT/.ready" ]; then
  echo "$LAYOUT"
  exit 0
fi
mkdir -p "$DIR"
exec 9>"$DIR/.lock"
flock 9
if [ -f "$LAYOUT/.ready" ]; then
  echo "$LAYOUT"
  exit 0
fi

# 1. The root file system, cached as a tar.
if [ ! -f "$DIR/rootfs.tar" ]; then
  rm -rf "$DIR/rootfs.tmp"
  debootstrap --variant=minbase --include=git,python3 bookworm "$DIR/rootfs.tmp" \
    "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >&2
  rm -rf "$DIR"/rootfs.tmp/usr/share/{doc,man,info,locale}/* "$DIR"/rootfs.tmp/var/cache/apt/* \
    "$DIR"/rootfs.tmp/var/lib/apt/lists/* "$DIR"/rootfs.tmp/var/log/*
  tar --numeric-owner -C "$DIR/rootfs.tmp" -cf "$DIR/rootfs.tar.tmp" .
  mv "$DIR/rootfs.tar.tmp" "$DIR/rootfs.tar"
  rm -rf "$DIR/rootfs.tmp"
fi

WORK=$(mktemp -d "$DIR/work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
L="$WORK/layout"
umoci init --layout "$L"
umoci new --image "$L:base"
umoci raw add-layer --image "$L:base" "$DIR/rootfs.tar"
umoci config --image "$L:base" --os linux --architecture amd64 \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.env LANG=C.UTF-8 --config.cmd /bin/bash

git_in() { git -C "$1" -c user.name=dev -c user.email=dev@example.com "${@:2}"; }

# 2. The SWE-bench-like image's repository: a small package with a bug in `subtract`,
#    its tests, and a test runner printing pytest's `-rA` summary lines.
repo="$WORK/testbed"
mkdir -p "$repo/calc" "$repo/tests"
git init -q -b main "$repo"
cat >"$repo/calc/__init__.py" <<'EOF'
def add(a, b):
    return a + b
EOF
printf 'build/\n*.pyc\n' >"$repo/.gitignore"
git_in "$repo" add -A && git_in "$repo" commit -qm "add"
cat >>"$repo/calc/__init__.py" <<'EOF'


def subtract(a, b):
    return a + b
EOF
cat >"$repo/tests/test_calc.py" <<'EOF'
from calc import add, subtract


def test_add():
    assert add(2, 3) == 5


def test_subtract_small():
    assert subtract(1, 1) == 0
EOF
cat >"$repo/run_pytest.py" <<'EOF'
"""A stand-in for pytest (the image has no pytest): runs tests/test_*.py's test functions
and prints pytest's `-rA` summary lines."""
import importlib.util, os, sys, traceback

sys.path.insert(0, os.getcwd())
failed = 0
for name in sorted(os.listdir("tests")):
    if not (name.startswith("test_") and name.endswith(".py")):
        continue
    path = os.path.join("tests", name)
    spec = importlib.util.spec_from_file_location(name[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for attr in sorted(dir(module)):
        if attr.startswith("test_"):
            try:
                getattr(module, attr)()
                print(f"PASSED {path}::{attr}")
            except Exception:
                traceback.print_exc()
                print(f"FAILED {path}::{attr}")
                failed += 1
sys.exit(1 if failed else 0)
EOF
git_in "$repo" add -A && git_in "$repo" commit -qm "subtract, tests"
# The future (see the top): everything here must be gone from the agent's sandbox.
base_commit=$(git_in "$repo" rev-parse HEAD)
git_in "$repo" tag -a -m "version 0.9" v0.9 HEAD~1
sed -i 's/^    return a + b$/    return a - b/; 1,3s/^    return a - b$/    return a + b/' \
  "$repo/calc/__init__.py"
git_in "$repo" commit -qam "fix subtract"
git_in "$repo" tag -a -m "version 1.0" v1.0
git_in "$repo" branch feature
git_in "$repo" remote add origin https://example.com/calc.git
git_in "$repo" update-ref refs/remotes/origin/main HEAD
git_in "$repo" notes add -m "fixes subtract" HEAD
git_in "$repo" reset -q --hard "$base_commit"
echo "# scratch" >>"$repo/run_pytest.py"
git_in "$repo" stash -q
echo "dangling future" | git_in "$repo" hash-object -w --stdin >/dev/null
git_in "$repo" commit-tree -m "dangling" "$base_commit^{tree}" >/dev/null
mkdir -p "$repo/build" && echo junk >"$repo/build/tmp.o"

conda="$WORK/miniconda3"
mkdir -p "$conda/bin" "$conda/envs/testbed/bin"
cat >"$conda/bin/activate" <<'EOF'
# A stand-in for conda's activate script: defines `conda activate ENV`.
conda() {
  if [ "$1" = activate ]; then
    export CONDA_DEFAULT_ENV="$2"
    export PATH="/opt/miniconda3/envs/$2/bin:$PATH"
  fi
}
export CONDA_SHLVL=1
EOF
cat >"$conda/envs/testbed/bin/python" <<'EOF'
#!/bin/sh
# The testbed environment's interpreter: only reachable once the environment is active.
exec /usr/bin/python3 "$@"
EOF
chmod +x "$conda/envs/testbed/bin/python"
mkdir -p "$WORK/junk/sub" && echo old >"$WORK/junk/sub/file"
mkdir -p "$WORK/opaque-old" && echo old >"$WORK/opaque-old/old.txt"
mkdir -p "$WORK/opaque-new" && echo new >"$WORK/opaque-new/new.txt"
echo 'source /opt/miniconda3/bin/activate && conda activate testbed' >"$WORK/bashrc"

umoci insert --image "$L:base" --tag swe "$repo" /testbed
umoci insert --image "$L:swe" "$conda" /opt/miniconda3
umoci insert --image "$L:swe" "$WORK/junk" /opt/junk
umoci insert --image "$L:swe" "$WORK/opaque-old" /etc/swerve
umoci insert --image "$L:swe" "$WORK/bashrc" /root/.bashrc
# The whiteout layer: a directory from an earlier layer, a file of the base layer, a build
# product of the repository; then an opaque directory replacing an earlier one.
umoci insert --image "$L:swe" --whiteout /opt/junk
umoci insert --image "$L:swe" --whiteout /etc/issue
umoci insert --image "$L:swe" --whiteout /testbed/build
umoci insert --image "$L:swe" --opaque "$WORK/opaque-new" /etc/swerve
umoci config --image "$L:swe" --config.workingdir /testbed \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.env LANG=C.UTF-8 --config.env SWERVE_IMAGE=swe

# swe-cached: swe whose code before a SWE-smith-style bug also survives outside git, as it can
# in a real image: the module's byte-compiled cache in the work tree, and a copy installed
# without -e (with its own cache) in the environment's site-packages.
cached="$WORK/cached"
mkdir -p "$cached/testbed-calc" "$cached/site-calc"
git_in "$repo" show "$base_commit:calc/__init__.py" >"$cached/site-calc/__init__.py"
cp "$cached/site-calc/__init__.py" "$cached/testbed-calc/__init__.py"
python3 -m compileall -q "$cached/testbed-calc" "$cached/site-calc"
rm "$cached/testbed-calc/__init__.py"
umoci insert --image "$L:swe" --tag swe-cached "$cached/testbed-calc" /testbed/calc
umoci insert --image "$L:swe-cached" "$cached/site-calc" \
  /opt/miniconda3/envs/testbed/lib/python3.11/site-packages/calc

# 3. The R2E-Gym-like image: /testbed with run_tests.sh and r2e_tests/ (R2E-Gym's layout).
r2e="$WORK/r2e"
mkdir -p "$r2e/textutil" "$r2e/r2e_tests"
git init -q -b main "$r2e"
cat >"$r2e/textutil/__init__.py" <<'EOF'
def shout(text):
    return text.upper()


def whisper(text):
    return text.upper()
EOF
cat >"$r2e/r2e_tests/test_text.py" <<'EOF'
from textutil import shout, whisper


def test_shout():
    assert shout("hi") == "HI"


def test_whisper():
    assert whisper("HI") == "hi"
EOF
# The image has no pytest: this stand-in runs r2e_tests/test_*.py's test functions and prints
# what `pytest -rA r2e_tests` (R2E-Gym's test command) ends with, the part R2E-Gym's parser
# reads: the `short test summary info` section, one `STATUS path::test` line per test
# (` - reason` after a failure's id), then the tally.
cat >"$r2e/run_pytest.py" <<'EOF'
import importlib.util, os, sys, traceback

sys.path.insert(0, os.getcwd())
results = []
for name in sorted(os.listdir("r2e_tests")):
    if not (name.startswith("test_") and name.endswith(".py")):
        continue
    path = os.path.join("r2e_tests", name)
    spec = importlib.util.spec_from_file_location(name[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for attr in sorted(dir(module)):
        if attr.startswith("test_"):
            try:
                getattr(module, attr)()
                results.append(f"PASSED {path}::{attr}")
            except Exception as error:
                traceback.print_exc(file=sys.stdout)
                results.append(f"FAILED {path}::{attr} - {type(error).__name__}")
print("=" * 27 + " short test summary info " + "=" * 28)
print("\n".join(results))
failed = sum(line.startswith("FAILED") for line in results)
passed = len(results) - failed
print(f"{'=' * 25} {failed} failed, {passed} passed in 0.01s {'=' * 25}")
sys.exit(1 if failed else 0)
EOF
cat >"$r2e/run_tests.sh" <<'EOF'
#!/bin/bash
cd /testbed && python3 run_pytest.py
EOF
chmod +x "$r2e/run_tests.sh"
git_in "$r2e" add -A && git_in "$r2e" commit -qm "textutil"
umoci insert --image "$L:base" --tag r2e "$r2e" /testbed
umoci config --image "$L:r2e" --config.workingdir /testbed \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

umoci gc --layout "$L"
rm -rf "$LAYOUT"
mv "$L" "$LAYOUT"
touch "$LAYOUT/.ready"
echo "$LAYOUT"
