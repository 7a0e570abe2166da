#!/usr/bin/env bash
# The sandbox's adversarial suite (crates/swerve-sandbox/tests/sandbox/security.rs) inside an image's
# root: the SWE-bench-style test image is imported into a scratch image store, its layers
# unpacked for the sandbox's ids, and the suite runs with them as every workspace's `/`.
# Root only (the test images need it); skipped otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
  echo "image sandbox tests: skipped (not root)" >&2
  exit 0
fi
layout=$(./scripts/test-images.sh)
cargo build --quiet -p swerve-cli
target=${CARGO_TARGET_DIR:-target}
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
"$target/debug/swerve" --cache-dir "$cache" images pull --from "$layout" --name swe localhost/swerve/swe >/dev/null
layers=$("$target/debug/swerve" --cache-dir "$cache" images root localhost/swerve/swe | paste -sd:)
SWERVE_TEST_IMAGE_LAYERS="$layers" cargo test --quiet -p swerve-sandbox --test sandbox security::
