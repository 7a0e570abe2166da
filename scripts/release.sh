#!/usr/bin/env bash
# swerve's release artifacts, built from a clean clone of this checkout's HEAD:
#
#   scripts/release.sh [OUT]          (default OUT: dist/)
#
#   swerve-<version>-x86_64-unknown-linux-gnu.tar.gz (+ .sha256): the `swerve` binary for
#       glibc 2.17+ (built with cargo-zigbuild), stripped, with README, CHANGELOG, licences,
#       third-party notices, shell completions and man pages;
#   swerve-<version>-x86_64-unknown-linux-gnu.debug (+ .sha256): its debug info (gdb finds it
#       through the binary's .gnu_debuglink when it lies beside the binary);
#   swerve-<pep440>-cp39-abi3-manylinux2014_x86_64.whl (+ .sha256): the Python package, whose
#       wheel carries the `swerve` command too (pip installs it beside the interpreter), its
#       extension stripped (scripts/finish-wheel.py);
#   swerve-<version>-x86_64-unknown-linux-gnu-extension.debug (+ .sha256): the extension's
#       debug info.
#
# Then checks both: no symbol of the binary or of the wheel's extension needs a glibc newer
# than 2.17 (objdump -T), the extension holds no debug information or symbol table, and the
# binary runs (`--version`). The version is the tag when HEAD
# is tagged vX.Y.Z, else <Cargo version>-dev.<commits>+g<hash> (<…>.dev<commits>+g<hash> for
# the wheel). Tools (ziglang, cargo-zigbuild, maturin) come from PyPI into
# <target>/venvs/release. Settings: CARGO_TARGET_DIR (shared with ordinary builds, so the
# dependencies are built once), RELEASE_SKIP_WHEEL=1 (the tarball alone), RELEASE_PROFILE (default
# dist; scripts/artifact-tests.sh checks with the quicker artifact-check). docs/install.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
# The build runs in a clone under /tmp, and goes to this checkout's target directory, not the
# clone's (deleted with it), so a second release reuses the built dependencies (the
# workspace's own crates are rebuilt: a fresh clone's files are new to cargo).
export CARGO_TARGET_DIR="$target_dir"
triple=x86_64-unknown-linux-gnu
glibc=2.17
profile="${RELEASE_PROFILE:-dist}"
tools="$target_dir/venvs/release"

work="$(mktemp -d /tmp/swerve-release.XXXXXX)"
trap 'rm -rf "$work"' EXIT
git clone --quiet --no-local "$root" "$work/src"
git -C "$work/src" checkout --quiet --detach "$(git -C "$root" rev-parse HEAD)"
cd "$work/src"

cargo_version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
if tag="$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null)"; then
  version="${tag#v}"
  pep440="$version"
else
  commits="$(git rev-list --count HEAD)"
  hash="$(git rev-parse --short=9 HEAD)"
  version="$cargo_version-dev.$commits+g$hash"
  pep440="$cargo_version.dev$commits+g$hash"
fi
export SWERVE_BUILD_VERSION="$version"
echo "release $version (wheel $pep440) from $(git rev-parse HEAD)" >&2

if [ ! -x "$tools/bin/python" ]; then
  python3 -m venv "$tools"
fi
"$tools/bin/pip" install --quiet --disable-pip-version-check \
  ziglang==0.15.2 cargo-zigbuild==0.24.1 maturin==1.16.0
export PATH="$tools/bin:$PATH"

# The binary: glibc 2.17's symbols through zig's linker stubs.
start=$(date +%s)
cargo zigbuild --locked --quiet --profile "$profile" --target "$triple.$glibc" -p swerve-cli
echo "binary built in $(( $(date +%s) - start )) s" >&2
built="$target_dir/$triple/$profile/swerve"
name="swerve-$version-$triple"
stage="$work/$name"
mkdir -p "$stage/completions" "$stage/man"
objcopy --only-keep-debug "$built" "$out/$name.debug"
objcopy --strip-all --add-gnu-debuglink="$out/$name.debug" "$built" "$stage/swerve"
cp README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$stage/"
python3 scripts/third-party-notices.py "$stage/THIRD-PARTY-NOTICES.md"
"$stage/swerve" completions bash >"$stage/completions/swerve.bash"
"$stage/swerve" completions zsh >"$stage/completions/_swerve"
"$stage/swerve" completions fish >"$stage/completions/swerve.fish"
"$stage/swerve" man --out "$stage/man" 2>/dev/null
tar -C "$work" --owner=0 --group=0 --sort=name -czf "$out/$name.tar.gz" "$name"

# The wheel: the extension for manylinux2014 (glibc 2.17), then the command put into it.
if [ "${RELEASE_SKIP_WHEEL:-}" != 1 ]; then
  sed -i "s/^dynamic = \[\"version\"\]$/version = \"$pep440\"/" pyproject.toml
  grep -q "^version = \"$pep440\"$" pyproject.toml
  rm -f "$out"/swerve-*.whl
  start=$(date +%s)
  maturin build --quiet --locked --profile "$profile" --zig --compatibility manylinux2014 \
    --target "$triple" --out "$out"
  echo "wheel built in $(( $(date +%s) - start )) s" >&2
  wheel="$(ls "$out"/swerve-*.whl)"
  # The command in, the extension's debug information out (kept beside it, as the binary's).
  python3 scripts/finish-wheel.py "$wheel" "$stage/swerve" \
    --strip-extension "$out/$name-extension.debug"
fi

# The checks: nothing newer than glibc 2.17, and the binary starts.
newest_glibc() { # the newest GLIBC_x.y symbol version a file asks for
  objdump -T "$1" | grep -o 'GLIBC_[0-9][0-9.]*' | sort -t. -k1,1 -k2,2n -k3,3n -u | tail -n 1
}
check_glibc() {
  local newest
  newest="$(newest_glibc "$1")"
  if [ "$(printf '%s\n%s\n' "GLIBC_$glibc" "$newest" | sort -V | tail -n 1)" != "GLIBC_$glibc" ]; then
    echo "release: $2 needs $newest, newer than glibc $glibc:" >&2
    objdump -T "$1" | grep -v "GLIBC_\(2\.[0-9]\|2\.1[0-7]\)[^0-9.]" | grep GLIBC_ >&2 || true
    exit 1
  fi
  echo "$2: newest glibc symbol $newest" >&2
}
check_glibc "$stage/swerve" "the binary"
if [ "${RELEASE_SKIP_WHEEL:-}" != 1 ]; then
  python3 - "$wheel" "$work/extension.so" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    name = next(n for n in wheel.namelist() if n.endswith(".so"))
    open(sys.argv[2], "wb").write(wheel.read(name))
PY
  check_glibc "$work/extension.so" "the wheel's extension"
  if readelf -S "$work/extension.so" | grep -qE '\.debug_|\.symtab'; then
    echo "release: the wheel's extension still holds debug information or a symbol table" >&2
    exit 1
  fi
fi
"$stage/swerve" --version >&2
cd "$out"
for artifact in "$name.tar.gz" "$name.debug" ${wheel:+"$(basename "$wheel")" "$name-extension.debug"}; do
  sha256sum "$artifact" >"$artifact.sha256"
done
ls -l "$out" >&2
