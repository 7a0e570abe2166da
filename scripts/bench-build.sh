#!/usr/bin/env bash
# Build times and artifact sizes for BENCHMARKS.md: the release artifacts' `dist` profile
# (scripts/release.sh: cargo-zigbuild for glibc 2.17, thin LTO, split debug info, stripped)
# beside the plain `release` profile a source build used before (`debug = 1`, native glibc),
# each in a fresh target directory:
#
#  1. scripts/release.sh, clean (no dependency built): both artifacts;
#  2. scripts/release.sh again (dependencies built; the release clone's workspace crates are
#     rebuilt, being new files to cargo): what a second release costs;
#  3. `cargo build --release -p swerve-cli`, clean;
#  4. the same after touching swerve-core (every workspace crate above it rebuilt, as in 2).
#
# Each line gives wall seconds and CPU seconds (user + system, children included): wall time
# depends on what else the machine runs, CPU time much less, so compare CPU times when the
# machine was shared. Then the sizes: the release binary as built, stripped and gzipped; the
# tarball, the wheel and the debug file; and the dist binary by crate and section
# (scripts/size-by-crate.py).
#
# Usage: scripts/bench-build.sh [WORK] (default: a new directory under /tmp; it holds two
# target directories, ~15 GB). Takes about 1.5 h of CPU on 2 cores. Run it niced beside other
# work: `nice -n 19 scripts/bench-build.sh`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$(mktemp -d /tmp/swerve-bench-build.XXXXXX)}"
mkdir -p "$work"
cd "$root"
echo "bench-build: $(git rev-parse --short HEAD), $(nproc) cores, $(rustc --version), work $work" >&2

measure() { # LABEL COMMAND...: runs COMMAND, prints LABEL, wall and CPU (user + system) seconds
  local label="$1" TIMEFORMAT="%R %U %S" timing
  shift
  timing="$( { time "$@" >"$work/$label.log" 2>&1; } 2>&1 )" || { cat "$work/$label.log" >&2; exit 1; }
  echo "$timing" | awk -v label="$label" '{ printf "%-36s wall %6.0f s   cpu %6.0f s\n", label, $1, $2 + $3 }'
}

dist_target="$work/dist-target"
release_target="$work/release-target"
measure "release.sh (dist), clean" env CARGO_TARGET_DIR="$dist_target" scripts/release.sh "$work/dist"
measure "release.sh (dist), again" env CARGO_TARGET_DIR="$dist_target" scripts/release.sh "$work/dist"
measure "cargo build --release, clean" \
  env CARGO_TARGET_DIR="$release_target" cargo build --locked --quiet --release -p swerve-cli
touch crates/swerve-core/src/lib.rs
measure "cargo build --release, core touched" \
  env CARGO_TARGET_DIR="$release_target" cargo build --locked --quiet --release -p swerve-cli

size() { stat -c %s "$1" | awk '{ printf "%.1f MB", $1 / 1e6 }'; }
binary="$release_target/release/swerve"
objcopy --strip-all "$binary" "$work/swerve.stripped"
gzip -9 -c "$work/swerve.stripped" >"$work/swerve.stripped.gz"
echo "release binary: $(size "$binary") as built, $(size "$work/swerve.stripped") stripped, $(size "$work/swerve.stripped.gz") gzipped"
for artifact in "$work"/dist/*.tar.gz "$work"/dist/*.whl "$work"/dist/*.debug; do
  echo "$(basename "$artifact"): $(size "$artifact")"
done
tar -xzf "$work"/dist/*.tar.gz -C "$work" --wildcards '*/swerve'
dist_binary="$(ls "$work"/swerve-*-x86_64-unknown-linux-gnu/swerve)"
echo "dist binary (in the tarball): $(size "$dist_binary")"
# What is inside it, by crate (the symbol table of its debug file) and by section.
python3 scripts/size-by-crate.py "$(ls "$work"/dist/*-unknown-linux-gnu.debug)" "$dist_binary" --top 15
