#!/usr/bin/env bash
# The sandbox on a cgroup-v2 host, from any host (issue 26: verdicts that do not depend on
# the host). Boots a Debian bookworm VM whose init mounts only the unified hierarchy at
# /sys/fs/cgroup, with no systemd to enable controllers (as a minimal VM, or a container
# host whose runtime manages cgroups itself), and runs in it, as root:
#
#   - the sandbox's integration tests (swerve-sandbox's `sandbox` test binary, built here);
#   - `swerve doctor`;
#   - with TASKS (and REPOS, bare git directories as REPOS/owner/name):
#     `swerve tasks check TASKS` there, its Pythons taken from this host's pyenv.
#
#   scripts/cgroup-v2-check.sh [OUT]          (default OUT: cgroup-v2-check/)
#
# Writes OUT/console.log (the VM's console: each phase's output under a `== ` header) and
# keeps OUT/root (the VM's root, from debootstrap, reused by the next run) and OUT/disk.img.
# Needs root, debootstrap, mkfs.ext4 (e2fsprogs 1.43+, for -d) and qemu-system-x86_64
# (`apt-get install --no-install-recommends qemu-system-x86`); uses KVM when QEMU_ACCEL=kvm,
# else QEMU's emulator (TCG: slower by an order of magnitude, but it runs where nested
# virtualization does not). Settings: TASKS, REPOS, PYTHONS (the pyenv versions TASKS' recipes
# need, copied into the VM, e.g. "3.9.18"), MEMORY (MiB, default 8192), TIMEOUT (seconds for
# the whole VM, default 14400), SWERVE (the binary, default a debug build of this checkout).
# Not part of CI: the sandbox tests alone take about 15 minutes with TCG on 2 cores.
set -euo pipefail
root_dir="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mkdir -p "${1:-cgroup-v2-check}" && cd "${1:-cgroup-v2-check}" && pwd)"
cd "$root_dir"
for tool in debootstrap mkfs.ext4 qemu-system-x86_64; do
    command -v "$tool" >/dev/null || { echo "cgroup-v2-check: $tool is missing" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "cgroup-v2-check: run as root (debootstrap, the VM's image)" >&2; exit 1; }

# The binaries: the sandbox's integration tests and the command.
tests="$(cargo test -q -p swerve-sandbox --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message.get("executable") \
            and message["target"]["name"] == "sandbox":
        print(message["executable"])
')"
if [ -z "${SWERVE:-}" ]; then
    cargo build -q -p swerve-cli
    SWERVE="${CARGO_TARGET_DIR:-$root_dir/target}/debug/swerve"
fi

# The VM's root: bookworm with a kernel and an initramfs, Python and git (the tests use both).
if [ ! -e "$out/root/.swerve-ready" ]; then
    rm -rf "$out/root"
    debootstrap --variant=minbase \
        --include=linux-image-amd64,initramfs-tools,python3,git,ca-certificates,debootstrap,iproute2,procps,kmod,libssl3,libffi8,libsqlite3-0,libbz2-1.0,liblzma5,libreadline8,zlib1g \
        bookworm "$out/root" http://deb.debian.org/debian >"$out/debootstrap.log" 2>&1
    touch "$out/root/.swerve-ready"
fi
# minbase writes no /etc/hosts; a host has one (the sandbox's `hosts` entries extend it).
[ -e "$out/root/etc/hosts" ] || printf '127.0.0.1 localhost\n' >"$out/root/etc/hosts"
check="$out/root/opt/check"
rm -rf "$check" && mkdir -p "$check"
cp "$tests" "$check/sandbox-tests"
cp "$SWERVE" "$check/swerve"
for version in ${PYTHONS:-}; do
    mkdir -p "$out/root/root/.pyenv/versions"
    rm -rf "$out/root/root/.pyenv/versions/$version"
    cp -a "${PYENV_ROOT:-$HOME/.pyenv}/versions/$version" "$out/root/root/.pyenv/versions/"
done
if [ -n "${TASKS:-}" ]; then
    cp "$TASKS" "$check/tasks.jsonl"
    cp -aL "${REPOS:?REPOS: the bare repositories TASKS names}" "$check/repos"
fi
cat >"$check/run.sh" <<'EOF'
#!/bin/sh
cd /opt/check
export HOME=/root PYENV_ROOT=/root/.pyenv SWERVE_CACHE_DIR=/var/swerve-cache
echo "== host: kernel $(uname -r), /sys/fs/cgroup is $(stat -f -c %T /sys/fs/cgroup), root's subtree_control: '$(cat /sys/fs/cgroup/cgroup.subtree_control)'"
echo "== swerve doctor"
./swerve doctor 2>&1
echo "== sandbox tests"
./sandbox-tests --test-threads=1 2>&1 | grep -v '^   [0-9]*:\|^             at '
if [ -f tasks.jsonl ]; then
    echo "== swerve tasks check"
    ./swerve tasks check tasks.jsonl --repos /opt/check/repos --out /opt/check/out --timeout 3600 2>&1
fi
EOF
cat >"$out/root/init-v2" <<'EOF'
#!/bin/sh
# PID 1: a cgroup-v2 host (the unified hierarchy only, no controllers enabled by an init),
# the checks, then power off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc 2>/dev/null
mount -t sysfs sys /sys 2>/dev/null
mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs shm /dev/shm
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -o remount,rw /
modprobe overlay
hostname swerve-v2
ip link set lo up
dev=$(ls /sys/class/net | grep -v '^lo$' | head -n 1)
ip link set "$dev" up && ip addr add 10.0.2.15/24 dev "$dev" && ip route add default via 10.0.2.2
echo "nameserver 10.0.2.3" >/etc/resolv.conf
sh /opt/check/run.sh
echo "== done"
sync
echo o >/proc/sysrq-trigger
EOF
chmod +x "$out/root/init-v2" "$check/run.sh"
rm -f "$out/disk.img"
truncate -s 24G "$out/disk.img"
mkfs.ext4 -q -F -d "$out/root" "$out/disk.img"
kernel="$(ls "$out"/root/boot/vmlinuz-* | tail -n 1)"
initrd="$(ls "$out"/root/boot/initrd.img-* | tail -n 1)"
case "${QEMU_ACCEL:-tcg}" in
    kvm) accel=(-enable-kvm -cpu host) ;;
    *) accel=(-accel tcg,thread=multi -cpu max) ;;
esac
timeout "${TIMEOUT:-14400}" qemu-system-x86_64 "${accel[@]}" -smp 2 -m "${MEMORY:-8192}" \
    -nographic -no-reboot -kernel "$kernel" -initrd "$initrd" \
    -append "root=/dev/vda rw console=ttyS0 init=/init-v2 panic=-1" \
    -drive "file=$out/disk.img,format=raw,if=virtio" \
    -netdev user,id=n0 -device virtio-net-pci,netdev=n0 >"$out/console.log" 2>&1 || true
grep -E '^== |^test result|FAILED|^[a-z_]+::.* \.\.\. |ok +[0-9]|gold resolves' "$out/console.log" || true
grep -q '^== done' "$out/console.log"
