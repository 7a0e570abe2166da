#!/usr/bin/env bash
# The Python package's suite: a fresh virtual environment under <target>/venvs/python with
# maturin, pytest and the trainer packages the integrations are tested against (pinned),
# the wheel built from this tree (debug profile) and installed into it, then pytest over
# python/tests. Needs the `swerve` binary of this tree (the tests compare with it); run
# after `cargo build -p swerve-cli` or `cargo test --workspace`.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
venv="$target/venvs/python"
python="${PYTHON:-python3}"
# Pinned: what the integrations were checked against (docs/python.md lists them).
packages=(
  maturin==1.16.0
  pytest==9.2.0
  datasets==5.2.0
  skyrl-gym==0.4.0
  pydantic==2.14.3
  transformers==5.23.0
  jinja2==3.1.6
)
# The trainers whose whole stacks do not install on a CPU machine (torch: PyPI's is the CUDA
# build, some 6 GB with its nvidia-* wheels; ray, vllm, deepspeed, flash-attn), installed
# without their dependencies: python/tests/test_trainer_packages.py drives the adapters
# through the modules of theirs that need none of them, and says what it leaves out. With
# aiohttp (imported by openrlhf/utils/agent.py) and click (by rLLM's rllm.utils).
# (--no-warn-conflicts: pip would list the left-out dependencies and verl's transformers<5.11 pin.)
no_deps=(
  verl==0.9.1
  openrlhf==0.11.2
)
packages+=(
  aiohttp==3.14.5
  click==8.5.1
)
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-warn-conflicts "${packages[@]}"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-warn-conflicts --no-deps "${no_deps[@]}"
# rLLM is not on PyPI: RLLM_SOURCE=<a checkout of rLLM> installs it (--no-deps) for its tests,
# which are skipped without it (docs/python.md names the commit they were run against).
if [ -n "${RLLM_SOURCE:-}" ]; then
  # codetiming: imported by rllm.trainer, which rLLM's MultiTurnWorkflow imports.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-warn-conflicts --no-deps "$RLLM_SOURCE" codetiming==1.4.0
else
  "$venv/bin/pip" uninstall --quiet --yes rllm 2>/dev/null || true
fi
cargo build --quiet -p swerve-cli
rm -rf "$target/wheels"
"$venv/bin/maturin" build --quiet --profile dev --out "$target/wheels"
# The command goes into the wheel as the release's does (scripts/release.sh), so `pip install`
# gives `swerve` too and the Ray tests' nodes find it there.
"$venv/bin/python" scripts/finish-wheel.py "$(ls "$target"/wheels/swerve-*.whl)" "$target/debug/swerve"
"$venv/bin/pip" install --quiet --force-reinstall --no-deps "$target"/wheels/swerve-*.whl
export SWERVE_BIN="$target/debug/swerve"
# From outside the tree, so `import swerve` is the installed wheel, not python/swerve.
cd python/tests
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@" .
