#!/usr/bin/env bash
# Runs swerve's main job on the bundled example tasks: the agent loop with the replay model
# (it replays each task's recorded demonstration, so no model server or API key is needed),
# then grades the patches by SWE-bench's rules. Outputs go to runs/demo/. Then a real
# language model, the embedded SmolLM2-135M run inside swerve on the CPU, drives three steps
# of one task (about a minute; so small a model will not solve it). Its outputs go to
# runs/demo-embedded/.
#
# The swerve it runs: $SWERVE_BIN if set, else a `swerve` on PATH (an installed wheel or
# release tarball: docs/install.md), else one built from this checkout (release profile).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${SWERVE_BIN:-}" ]; then
  swerve="$SWERVE_BIN"
elif command -v swerve >/dev/null 2>&1; then
  swerve="$(command -v swerve)"
else
  . scripts/prerequisites.sh
  cargo build --release --quiet -p swerve-cli
  swerve="${CARGO_TARGET_DIR:-target}/release/swerve"
fi
echo "using $("$swerve" --version) at $swerve" >&2
"$swerve" run --tasks examples/tasks/tasks.jsonl --model replay --out runs/demo "$@"
"$swerve" eval --tasks examples/tasks/tasks.jsonl --predictions runs/demo/preds.jsonl --out runs/demo/eval
./scripts/fetch-model.sh
"$swerve" run --tasks examples/tasks/tasks.jsonl --model embedded --out runs/demo-embedded \
  --max-steps 3 --set model.sampling.max_tokens=256 --set model.sampling.seed=1 swerve-examples__calc-1
