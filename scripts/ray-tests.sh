#!/usr/bin/env bash
# Ray scale-out tests (docs/cluster.md): a local multi-node Ray cluster on this machine (a
# head and two worker nodes, each with its own CPUs, `swerve` resource and cache), then
# scripts/ray-tests.py runs `swerve run --ray` and `swerve eval --ray` against it and
# against one-machine runs, kills a node mid-run, and checks the errors of bad input.
#
# Ray comes from PyPI into target/venvs/ray (pinned). The cluster is stopped when the
# script ends, also on failure. Needs the swerve binary ($CARGO_TARGET_DIR/debug/swerve,
# built here if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
RAY_VERSION=2.60.0
started=$(date +%s)
target=${CARGO_TARGET_DIR:-target}
venv=target/venvs/ray
if ! "$venv/bin/python" -c "import ray, sys; sys.exit(ray.__version__ != '$RAY_VERSION')" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "ray==$RAY_VERSION"
fi
# The Python package's wheel, when scripts/python-tests.sh built one: swerve.Env in Ray tasks.
wheel=$(ls "$target"/wheels/swerve-*.whl 2>/dev/null | head -n 1 || true)
if [ -n "$wheel" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
  export RAY_TESTS_WHEEL=1
elif [ "${SWERVE_REQUIRE_WHEEL:-}" = 1 ]; then
  echo "ray-tests: no wheel in $target/wheels; run scripts/python-tests.sh first" >&2
  exit 1
fi
installed=$(date +%s)
cargo build --quiet -p swerve-cli
scratch=$(mktemp -d /tmp/swerve-ray-tests.XXXXXX)
port=$((20000 + RANDOM % 20000))
export RAY_ADDRESS_FOR_TESTS=127.0.0.1:$port
export SWERVE=$target/debug/swerve RAY_PYTHON=$venv/bin/python RAY_BIN=$venv/bin/ray
export RAY_TESTS_SCRATCH=$scratch
# Small nodes: the machine is shared; Ray's own processes need ~300 MB a node.
node_options=(--num-cpus=1 --object-store-memory=80000000 --disable-usage-stats)

stop() {
  "$venv/bin/ray" stop --force >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap stop EXIT

SWERVE_CACHE_DIR=$scratch/cache-head "$venv/bin/ray" start --head --port="$port" \
  --include-dashboard=false --resources='{"swerve": 1}' "${node_options[@]}" >"$scratch/head.log" 2>&1
SWERVE_CACHE_DIR=$scratch/cache-node1 "$venv/bin/ray" start --address="127.0.0.1:$port" \
  --resources='{"swerve": 1}' "${node_options[@]}" >"$scratch/node1.log" 2>&1
cluster_up=$(date +%s)
"$venv/bin/python" scripts/ray-tests.py
finished=$(date +%s)
echo "ray tests: ray install $((installed - started)) s, cluster start $((cluster_up - installed)) s (build included), tests $((finished - cluster_up)) s"
