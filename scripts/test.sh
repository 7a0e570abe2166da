#!/usr/bin/env bash
# The whole test suite: formatting, lints, then every test of every crate.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/prerequisites.sh
# A one-off build (CI) gains nothing from incremental caches but their 1-2 GB of disk.
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL=0; fi
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
./scripts/check-imports.py      # no import circle between files or crates (docs/development.md)
./scripts/fetch-tokenizers.sh   # real tokenizers for swerve-chat's tests (cached)
./scripts/fetch-model.sh        # the embedded model for its tests (cached)
export SWERVE_REQUIRE_EMBEDDED_MODEL=1   # so they fail rather than skip without it
export SWERVE_REQUIRE_PYTHON_REQUESTS=1  # the trainer shims' smoke test, likewise
export SWERVE_REQUIRE_WHEEL=1            # the Ray tests use the wheel python-tests.sh builds
export INSTA_UPDATE=no                   # snapshots are compared, never written (docs/development.md)
if [ "$(id -u)" = 0 ]; then
  export SWERVE_REQUIRE_IMAGES=1         # the image tests fail rather than skip
  export SWERVE_REQUIRE_BROWSER=1        # so do swerve view's browser tests (chromium)
  ./scripts/test-images.sh >/dev/null    # the test images (cached; debootstrap + umoci)
fi
cargo test --workspace
./scripts/image-sandbox-tests.sh
./scripts/rootless-tests.sh
./scripts/python-tests.sh        # the Python package: wheel, venv, pytest (docs/python.md)
./scripts/ray-tests.sh           # a local multi-node Ray cluster (docs/cluster.md)
if [ "$(id -u)" = 0 ]; then
  # The release artifacts as users install them: glibc 2.17 floor, the wheel with no Rust,
  # the binary alone in a minbase root (docs/install.md; `dist` is measured by hand).
  ARTIFACT_PROFILE=artifact-check ./scripts/artifact-tests.sh
fi
