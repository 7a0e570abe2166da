#!/usr/bin/env bash
# Image benchmarks for BENCHMARKS.md (root; the tools of scripts/prerequisites.sh):
#  1. first use of an image: swerve's pull + unpack from a loopback registry, beside
#     `skopeo copy` + `umoci unpack` (and `podman pull` + `podman run --rm IMAGE true` where
#     podman runs);
#  2. a warm workspace from the cached image (`swerve env exec TASK -- true`: a process
#     start, the task file, the workspace and its sandbox, the command, the teardown);
#  3. disk used by N images sharing a base layer.
# Usage: scripts/bench-images.sh [N] (default 5); needs `cargo build --release -p swerve-cli`.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-5}
target=${CARGO_TARGET_DIR:-target}
swerve="$target/release/swerve"
[ -x "$swerve" ] || swerve="$target/debug/swerve"
layout=$(./scripts/test-images.sh)
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/registry.yml" <<YML
version: 0.1
log: {level: error}
storage: {filesystem: {rootdirectory: $work/registry}}
http: {addr: 127.0.0.1:$port}
YML
docker-registry serve "$work/registry.yml" >/dev/null 2>&1 &
registry_pid=$!
trap 'kill $registry_pid; rm -rf "$work"' EXIT
for _ in $(seq 100); do (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
host=127.0.0.1:$port
skopeo copy --quiet --dest-tls-verify=false "oci:$layout:swe" "docker://$host/swerve/swe:latest"
now() { date +%s.%N; }
secs() { python3 -c "print(f'{$2 - $1:.2f}')"; }

echo "## first use (pull + unpack) of the SWE-bench-style test image"
t0=$(now); "$swerve" --cache-dir "$work/cache" images pull "$host/swerve/swe" >/dev/null 2>&1; t1=$(now)
echo "swerve images pull (pull + verify + unpack): $(secs $t0 $t1) s"
t0=$(now)
skopeo copy --quiet --src-tls-verify=false "docker://$host/swerve/swe:latest" "oci:$work/oci:swe"
t1=$(now)
umoci unpack --image "$work/oci:swe" "$work/bundle" >/dev/null
t2=$(now)
echo "skopeo copy: $(secs $t0 $t1) s; umoci unpack: $(secs $t1 $t2) s; together $(secs $t0 $t2) s"
if command -v podman >/dev/null && podman run --rm --network=none "oci:$layout:swe" true >/dev/null 2>&1; then
  t0=$(now); podman pull -q --tls-verify=false "$host/swerve/swe:latest" >/dev/null; t1=$(now)
  podman run --rm --network=none "$host/swerve/swe:latest" true; t2=$(now)
  echo "podman pull: $(secs $t0 $t1) s; podman run --rm IMAGE true: $(secs $t1 $t2) s"
else
  echo "podman: does not run containers on this machine ($(podman run --rm --network=none "oci:$layout:swe" true 2>&1 | tail -1))"
fi

echo "## warm workspace from the cached image"
printf '{"instance_id":"bench-1","repo":"swerve/calc","image":"%s/swerve/swe:latest","problem_statement":"x"}\n' "$host" >"$work/tasks.jsonl"
times=()
for _ in $(seq 20); do
  t0=$(now); "$swerve" --cache-dir "$work/cache" env exec --tasks "$work/tasks.jsonl" bench-1 -- true; t1=$(now)
  times+=("$(secs $t0 $t1)")
done
printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "swerve env exec TASK -- true (20 runs): median %.3f s, p90 %.3f s\n", a[int((NR+1)/2)], a[int(NR*0.9)]}'

echo "## disk used by $N images sharing a base"
cp -a "$layout" "$work/layout" && layout="$work/layout"
for i in $(seq "$N"); do
  mkdir -p "$work/extra$i" && head -c 1M /dev/urandom >"$work/extra$i/data"
  umoci insert --image "$layout:base" --tag "bench$i" "$work/extra$i" /opt/extra >/dev/null 2>&1 || true
done
for i in $(seq "$N"); do
  skopeo copy --quiet --dest-tls-verify=false "oci:$layout:bench$i" "docker://$host/swerve/bench$i:latest"
  "$swerve" --cache-dir "$work/cache2" images pull "$host/swerve/bench$i" >/dev/null 2>&1
done
"$swerve" --cache-dir "$work/cache2" images list | tail -n 1
du -sh "$work/cache2/images/blobs" "$work/cache2/images/layers" | sed 's/^/du: /'
echo "one unpacked copy per image (what umoci unpack or a docker save/load per image needs): $N x $(du -sh "$work/bundle/rootfs" | cut -f1)"
