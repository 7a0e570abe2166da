#!/usr/bin/env bash
# Runs the sandbox's environment benchmark (crates/swerve-sandbox/benches/environment.rs) over
# an earlier revision and over this tree, one after the other on this machine, and prints both
# tables: the before/after figures in BENCHMARKS.md come from here.
#
#   scripts/bench-sandbox-before-after.sh REV     # e.g. the commit before a sandbox change
#
# The earlier revision is checked out in a temporary git worktree and gets this tree's
# benchmark file (it uses only APIs both have) and its bench support crate (swerve-testing).
# SWERVE_BENCH_QUICK=1 makes both runs small.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: scripts/bench-sandbox-before-after.sh REV}
before=$(mktemp -d)
trap 'git worktree remove --force "$before" >/dev/null 2>&1 || rm -rf "$before"' EXIT
git worktree add --quiet --detach "$before" "$rev"
mkdir -p "$before/crates/swerve-sandbox/benches"
cp crates/swerve-sandbox/benches/environment.rs "$before/crates/swerve-sandbox/benches/"
if [ ! -d "$before/crates/swerve-testing" ]; then
  cp -r crates/swerve-testing "$before/crates/"
  sed -i 's|^\[dev-dependencies\]$|[dev-dependencies]\nswerve-testing = { path = "../swerve-testing" }|' \
    "$before/crates/swerve-sandbox/Cargo.toml"
fi
if ! grep -q 'name = "environment"' "$before/crates/swerve-sandbox/Cargo.toml"; then
  printf '\n[[bench]]\nname = "environment"\nharness = false\n' >> "$before/crates/swerve-sandbox/Cargo.toml"
fi
target=${CARGO_TARGET_DIR:-$PWD/target}
echo "## before: $(git rev-parse --short "$rev")"
(cd "$before" && CARGO_TARGET_DIR="$target/bench-before" cargo bench --quiet -p swerve-sandbox --bench environment)
echo
echo "## after: this tree ($(git rev-parse --short HEAD)$(git diff --quiet || echo ', with uncommitted changes'))"
cargo bench --quiet -p swerve-sandbox --bench environment
