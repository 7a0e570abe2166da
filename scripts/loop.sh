#!/usr/bin/env bash
# The training loop closed on one machine, on the CPU: swerve's rollouts -> a real trainer ->
# the trained model back in swerve, measured (docs/training.md#the-loop-on-one-machine).
# Opt-in: not part of scripts/test.sh or CI (it installs torch and trains for minutes).
#
#  1. Data: the demonstrations of the bundled tasks (examples/) replayed and graded by
#     `swerve run --model replay --eval`, on the training tasks only; the resolved rollouts
#     exported as TRL rows (`swerve data export --format trl --min-reward 1`).
#  2. Base: the embedded model (SmolLM2-135M-Instruct, the GGUF file scripts/fetch-model.sh
#     fetches) on the held-out tasks, one `swerve run --eval` per seed.
#  3. Training: TRL's SFTTrainer on those rows, from the same GGUF file (transformers'
#     GGUF loader dequantizes it), with its chat template (examples/loop/train.py), into a
#     Hugging Face directory.
#  4. Trained: `swerve run --model embedded:DIR` on the held-out tasks, the same seeds.
#  5. The before/after table (examples/loop/report.py), the loss curve as a PNG, and the
#     greedy parity of swerve's engine with transformers on each model (compare.py).
#  6. One online RL stage from the trained model: TRL's GRPOTrainer whose rollouts are
#     swerve episodes (swerve.integrations.trl), a group per optimizer step, the reward
#     swerve's; then its logged rewards and advantages checked against `swerve data
#     advantages` over the same trajectories (examples/loop/grpo.py; fails on a difference).
#  7. verl's agent loop for real: with torch in this venv, verl's AgentLoopBase imports (it
#     cannot in the Python suite's), so python/tests/test_trainer_packages.py's verl tests
#     run SwerveAgentLoop as a subclass of it, built as verl's worker builds it.
#
# Outputs go to $LOOP_OUT (runs/loop); reruns resume there (finished rollouts and a trained
# model are kept; LOOP_RETRAIN=1 trains again). Settings, by environment variable:
#   LOOP_HELD_OUT  held-out task ids      (swerve-examples__calc-1 swerve-examples__envfile-1)
#   LOOP_SEEDS     sampling seeds          (1 2 3)
#   LOOP_EPOCHS    training epochs         (2)
#   LOOP_LR        learning rate           (1e-4)
#   LOOP_MAX_LENGTH rows longer than this many tokens are left out (2048)
#   LOOP_MAX_STEPS, LOOP_MAX_TOKENS, LOOP_TEMPERATURE  the held-out rollouts' limits (4, 160, 0.7)
#   LOOP_GRPO_IDS  the GRPO stage's tasks   (the first two training tasks)
#   LOOP_GRPO_GROUP, LOOP_GRPO_STEPS  episodes per group, optimizer steps (4, 2)
#   LOOP_GRPO_PENALTY  reward.format_error_penalty in the GRPO stage (0.1: rewards that vary)
#   LOOP_VENV      the trainer's venv      (target/venvs/loop; about 5 GB with torch's CUDA libraries)
#   SWERVE_BIN     the swerve to run       (else built from this checkout: cargo build -p swerve-cli)
set -euo pipefail
cd "$(dirname "$0")/.."

out="${LOOP_OUT:-runs/loop}"
venv="${LOOP_VENV:-target/venvs/loop}"
held_out="${LOOP_HELD_OUT:-swerve-examples__calc-1 swerve-examples__envfile-1}"
seeds="${LOOP_SEEDS:-1 2 3}"
epochs="${LOOP_EPOCHS:-2}"
lr="${LOOP_LR:-1e-4}"
max_length="${LOOP_MAX_LENGTH:-2048}"
max_steps="${LOOP_MAX_STEPS:-4}"
max_tokens="${LOOP_MAX_TOKENS:-160}"
temperature="${LOOP_TEMPERATURE:-0.7}"
tasks=examples/tasks/tasks.jsonl

free_gb=$(df -Pk . | awk 'NR == 2 { print int($4 / 1024 / 1024) }')
if [ ! -x "$venv/bin/python" ] && [ "$free_gb" -lt 8 ]; then
  echo "loop.sh: the trainer's venv takes about 5 GB (torch with its CUDA libraries); $free_gb GB free" >&2
  exit 1
fi

if [ -n "${SWERVE_BIN:-}" ]; then
  swerve="$SWERVE_BIN"
else
  . scripts/prerequisites.sh
  # The dev profile builds candle's kernels optimized (Cargo.toml), which is all the
  # embedded model's speed needs.
  nice cargo build --quiet -p swerve-cli
  swerve="${CARGO_TARGET_DIR:-target}/debug/swerve"
fi
./scripts/fetch-model.sh
gguf="${SWERVE_MODELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/swerve/models}/SmolLM2-135M-Instruct.Q4_1.gguf"

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
nice "$venv/bin/pip" install --quiet --disable-pip-version-check -r examples/loop/requirements.txt
py="$venv/bin/python"
# The swerve package in the trainer's venv (the GRPO stage's rollouts run swerve.Env), built
# as scripts/python-tests.sh builds it, with this checkout's command in it.
wheels="${CARGO_TARGET_DIR:-target}/wheels-loop"
rm -rf "$wheels"
nice "$venv/bin/maturin" build --quiet --profile dev --out "$wheels"
"$py" scripts/finish-wheel.py "$(ls "$wheels"/swerve-*.whl)" "$swerve"
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheels"/swerve-*.whl
# Everything the trainer reads is local: no hub look-ups (unreachable here, and slow to time
# out), and no progress bars in the log.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 TQDM_DISABLE=1

mkdir -p "$out"
read -r -a held <<<"$held_out"
mapfile -t train < <(python3 - "$tasks" "${held[@]}" <<'PY'
import json, sys
held = set(sys.argv[2:])
ids = [json.loads(line)["instance_id"] for line in open(sys.argv[1]) if line.strip()]
missing = held - set(ids)
if missing:
    sys.exit(f"held-out ids not in {sys.argv[1]}: {sorted(missing)}")
print("\n".join(i for i in ids if i not in held))
PY
)
echo "loop: training tasks: ${train[*]}" >&2
echo "loop: held-out tasks: ${held[*]}" >&2

# 1. The training rows: the training tasks' demonstrations, replayed, graded, exported.
"$swerve" run --tasks "$tasks" --model replay --demos examples/demos --out "$out/demos" --eval tests \
  "${train[@]}"
"$swerve" data export --run "$out/demos" --format trl --min-reward 1 --out "$out/train.jsonl"

# The held-out rollouts of one model (`embedded:PATH`), one run directory per seed.
held_out_runs() {
  local name=$1 model=$2 seed
  for seed in $seeds; do
    "$swerve" run --tasks "$tasks" --model "embedded:$model" --out "$out/$name-seed$seed" --eval tests \
      --max-steps "$max_steps" --set "model.sampling.seed=$seed" \
      --set "model.sampling.temperature=$temperature" \
      --set "model.sampling.max_tokens=$max_tokens" "${held[@]}"
  done
  # Greedy, with token ids: swerve's tokens against transformers' on the same prompt.
  "$swerve" run --tasks "$tasks" --model "embedded:$model" --out "$out/$name-greedy" \
    --max-steps 1 --set agent.capture_tokens=true --set model.sampling.temperature=0 \
    --set model.sampling.max_tokens=48 "${held[0]}"
  nice "$py" examples/loop/compare.py --model "$model" \
    --trajectory "$out/$name-greedy/trajectories/${held[0]}__0.jsonl" --out "$out/parity-$name.json"
}

# 2. The base model.
held_out_runs base "$gguf"

# 3. Training.
if [ -n "${LOOP_RETRAIN:-}" ] || [ ! -f "$out/model/training.json" ]; then
  rm -rf "$out/model"
  nice "$py" examples/loop/train.py --gguf "$gguf" --data "$out/train.jsonl" --out "$out/model" \
    --epochs "$epochs" --lr "$lr" --max-length "$max_length"
fi

# 4. The trained model, back in swerve.
held_out_runs trained "$(cd "$out/model" && pwd)"

# 5. Before and after.
base_runs=() trained_runs=()
for seed in $seeds; do
  base_runs+=("$out/base-seed$seed")
  trained_runs+=("$out/trained-seed$seed")
done
"$py" examples/loop/report.py --base "${base_runs[@]}" --trained "${trained_runs[@]}" \
  --training "$out/model/training.json" --out "$out/report.json" --plot "$out/loss.png"

# 6. One online RL stage from the trained model, checked against swerve's advantages.
read -r -a grpo_ids <<<"${LOOP_GRPO_IDS:-${train[0]} ${train[1]}}"
nice "$py" examples/loop/grpo.py --model "$(cd "$out/model" && pwd)" --tasks "$tasks" --swerve "$swerve" \
  --out "$out/grpo" --ids "${grpo_ids[@]}" --group "${LOOP_GRPO_GROUP:-4}" --steps "${LOOP_GRPO_STEPS:-2}" \
  --turn-tokens "$max_tokens" --set "agent.max_steps=$max_steps" \
  --set "reward.format_error_penalty=${LOOP_GRPO_PENALTY:-0.1}"

# 7. verl's agent loop for real, in the venv that has torch.
nice "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps verl==0.9.1
nice "$venv/bin/pip" install --quiet --disable-pip-version-check -r examples/loop/requirements-verl.txt
./scripts/fetch-tokenizers.sh
venv_python="$(cd "$venv" && pwd)/bin/python"
(cd python/tests && nice "$venv_python" -m pytest -q -p no:cacheprovider test_trainer_packages.py -k verl)
