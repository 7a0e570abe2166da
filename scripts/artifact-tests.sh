#!/usr/bin/env bash
# The release artifacts as users install them (docs/install.md):
#
# 1. scripts/release.sh builds the tarball and the wheel from a clean clone, and checks that
#    neither the binary nor the wheel's extension needs a glibc newer than 2.17;
# 2. the wheel in a fresh virtual environment with no Rust on PATH: `import swerve`, the
#    installed `swerve` command, `python -m swerve`, and the README's first job
#    (scripts/demo.sh, which uses the installed command rather than building one);
# 3. the tarball's binary copied alone into a Debian minbase root (debootstrap; git, no Rust,
#    no Python), made the root of a mount namespace (pivot_root, as a container runtime
#    does; not chroot, under which the kernel refuses user namespaces) as on a bare cluster
#    node: `--version`, `doctor`, and `env exec` in a sandboxed workspace of a bundled task.
#
# Root only (debootstrap, chroot, unshare, mounts). ARTIFACT_PROFILE (default `dist`): the Cargo
# profile; CI uses `artifact-check`, which builds in a fraction of the time and links the
# same glibc symbols. The minbase root is cached in $SWERVE_TEST_IMAGES
# (default /var/cache/swerve-test-images).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/artifacts/dist"
rm -rf "$out"
RELEASE_PROFILE="${ARTIFACT_PROFILE:-dist}" scripts/release.sh "$out"
tarball="$(ls "$out"/swerve-*-x86_64-unknown-linux-gnu.tar.gz)"
wheel="$(ls "$out"/swerve-*.whl)"
echo "artifacts: $(du -h "$tarball" | cut -f1) tarball, $(du -h "$wheel" | cut -f1) wheel" >&2

scratch="$(mktemp -d /tmp/swerve-artifacts.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT

# 2. The wheel, with no Rust anywhere on PATH.
python3 -m venv "$scratch/venv"
no_rust_path="$scratch/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
for tool in cargo rustc; do
  if PATH="$no_rust_path" command -v "$tool" >/dev/null; then
    echo "artifact-tests: $tool is on the system PATH; the no-Rust check needs it elsewhere" >&2
    exit 1
  fi
done
PATH="$no_rust_path" pip install --quiet --disable-pip-version-check "$wheel"
PATH="$no_rust_path" python -c 'import swerve, swerve.command; print("import swerve:", swerve.command.path())'
PATH="$no_rust_path" swerve --version
PATH="$no_rust_path" python -m swerve tasks list examples/tasks/tasks.jsonl >/dev/null
demo="$scratch/demo"
git clone --quiet --no-local "$root" "$demo"   # demo.sh writes runs/ in its checkout
(cd "$demo" && env -u SWERVE_BIN -u CARGO_HOME -u RUSTUP_HOME PATH="$no_rust_path" \
  SWERVE_CACHE_DIR="$scratch/cache" ./scripts/demo.sh) >"$scratch/demo.log" 2>&1 \
  || { cat "$scratch/demo.log" >&2; exit 1; }
expect_in_demo() {
  grep -q "$1" "$scratch/demo.log" || { echo "artifact-tests: $2" >&2; cat "$scratch/demo.log" >&2; exit 1; }
}
expect_in_demo "using swerve .* at $scratch/venv/bin/swerve" "demo.sh did not use the installed command"
expect_in_demo "8 of 8 rollouts finished" "the replay run did not finish its 8 rollouts"
# The six Python tasks resolve; the two Rust ones cannot be graded without cargo, which this
# environment lacks by design.
expect_in_demo "6/8 resolved" "the demo's grading is not 6/8 resolved without Rust"
echo "wheel: import swerve, the installed command, and the demo without Rust: $(grep -m1 'resolved;' "$scratch/demo.log")" >&2

# 3. The tarball's binary alone in a minbase root.
cache="${SWERVE_TEST_IMAGES:-/var/cache/swerve-test-images}"
minbase="$cache/minbase-git.tar"
if [ ! -f "$minbase" ]; then
  mkdir -p "$cache"
  rm -rf "$cache/minbase.tmp"
  debootstrap --variant=minbase --include=git bookworm "$cache/minbase.tmp" \
    "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >&2
  tar --numeric-owner -C "$cache/minbase.tmp" -cf "$minbase.tmp" .
  mv "$minbase.tmp" "$minbase"
  rm -rf "$cache/minbase.tmp"
fi
node="$scratch/node"
mkdir -p "$node"
tar -C "$node" -xf "$minbase"
for tool in python3 cargo rustc; do
  if chroot "$node" sh -c "command -v $tool" >/dev/null 2>&1; then
    echo "artifact-tests: the minbase root has $tool" >&2
    exit 1
  fi
done
tar -C "$scratch" -xzf "$tarball"
cp "$scratch"/swerve-*-x86_64-unknown-linux-gnu/swerve "$node/usr/local/bin/swerve"
mkdir -p "$node/srv/examples"
cp -a examples/tasks examples/repos "$node/srv/examples/"
# The node's root as the root of a mount namespace of its own, the host's /proc, /sys and
# /dev bound in, the host's root detached: what the binary sees is the minbase root alone.
# The mounts go with the namespace.
in_node() {
  unshare --mount --propagation private -- /bin/sh -c '
    set -e
    node="$1"; shift
    mount --bind "$node" "$node"
    for fs in proc sys dev; do mount --rbind "/$fs" "$node/$fs"; done
    mkdir -p "$node/.host"
    cd "$node"
    pivot_root . .host
    umount -l /.host
    exec env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root "$@"
  ' in_node "$node" "$@"
}
in_node swerve --version
in_node swerve doctor >"$scratch/doctor.txt"
grep -q "namespaces .* yes" "$scratch/doctor.txt" || { cat "$scratch/doctor.txt" >&2; exit 1; }
echo "on the node: $(grep -m1 'glibc' "$scratch/doctor.txt" | tr -s ' ')" >&2
exec_out="$(in_node sh -c 'cd /srv && swerve --repos examples/repos env exec \
  --tasks examples/tasks/tasks.jsonl swerve-examples__calc-1 -- "git log --oneline | head -1; ls calc; cat /etc/os-release | head -1"')"
echo "$exec_out"
echo "$exec_out" | grep -q "parser.py" || { echo "artifact-tests: env exec saw no repository" >&2; exit 1; }
echo "tarball: the binary alone runs --version, doctor and env exec in a minbase root" >&2
