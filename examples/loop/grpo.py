"""One online RL stage on the CPU: TRL's ``GRPOTrainer`` whose rollouts are swerve episodes.

The policy (a Hugging Face model directory, e.g. the one ``train.py`` wrote) plays whole
episodes of the given tasks through ``swerve.Env`` (``swerve.integrations.trl.Rollouts``:
token in, token out, the observations masked out of the loss), ``--group`` episodes of one
task per optimizer step, graded by the task's tests and shaped by swerve's ``[reward]``
(``--set`` keys, e.g. ``reward.format_error_penalty=0.1``). No reward when grading fails for
the machinery's reason.

Then the check: every generation batch's episodes are written as a swerve run
(``OUT/rollouts/<batch>/trajectories``), and ``swerve data advantages --epsilon 1e-4`` over
each (TRL adds 1e-4 to the group's standard deviation) must give the rewards TRL received and
the advantages it trained on, trajectory by trajectory. ``OUT/grpo.json`` records both, the
losses and the time; the exit status is 1 when they differ.

Usage: grpo.py --model DIR --tasks FILE --swerve BIN --out DIR --ids ID [ID ...]
               [--group G] [--steps N] [--lr LR] [--turn-tokens N] [--response-length N]
               [--temperature T] [--seed N] [--set KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import time

TRL_EPSILON = 1e-4  # GRPOTrainer: advantages / (std + 1e-4)


def swerve_advantages(swerve: str, run: pathlib.Path, sets: list[str]) -> dict[str, dict]:
    """``swerve data advantages`` over one batch's run, by trajectory id."""
    command = [swerve]
    for setting in sets:
        command += ["--set", setting]
    command += ["data", "advantages", "--run", str(run), "--epsilon", str(TRL_EPSILON), "--json"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    rows = [json.loads(line) for line in (run / "advantages.jsonl").read_text().splitlines() if line.strip()]
    return {row["trajectory_id"]: row for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=pathlib.Path, required=True)
    parser.add_argument("--tasks", type=pathlib.Path, required=True)
    parser.add_argument("--swerve", required=True)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--ids", nargs="+", required=True)
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--turn-tokens", type=int, default=160)
    parser.add_argument("--response-length", type=int, default=1024)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()

    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    import swerve
    from swerve.integrations import trl as swerve_trl
    from train import CPU_TRAINING

    torch.manual_seed(args.seed)
    tasks = [task for task in swerve.load_tasks(args.tasks) if task.instance_id in set(args.ids)]
    missing = set(args.ids) - {task.instance_id for task in tasks}
    if missing:
        raise SystemExit(f"--ids not in {args.tasks}: {sorted(missing)}")
    settings = dict(setting.split("=", 1) for setting in args.sets)
    run_dir = args.out / "rollouts"
    rollouts = swerve_trl.Rollouts(tasks, set=settings, turn_tokens=args.turn_tokens, run_dir=run_dir)

    scored: list[list[float]] = []  # per generation batch, the advantages TRL computed
    received: list[list[float | None]] = []  # and the rewards its reward function returned

    class RecordingTrainer(GRPOTrainer):
        """GRPOTrainer that keeps, per generation batch, the advantages it computed."""

        def _generate_and_score_completions(self, inputs):
            output = super()._generate_and_score_completions(inputs)
            scored.append([float(value) for value in output["advantages"].reshape(-1)])
            return output

    def env_reward(prompts, completions, swerve_reward, **kwargs):
        received.append(list(swerve_reward))
        return swerve_trl.env_reward(prompts, completions, swerve_reward, **kwargs)

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    config = GRPOConfig(
        output_dir=str(args.out / "checkpoints"),
        per_device_train_batch_size=args.group,
        gradient_accumulation_steps=1,
        num_generations=args.group,
        max_steps=args.steps,
        learning_rate=args.lr,
        lr_scheduler_type="constant",
        beta=0.0,
        temperature=args.temperature,
        top_p=1.0,
        top_k=0,
        max_completion_length=args.response_length,
        seed=args.seed,
        **CPU_TRAINING,
    )
    trainer = RecordingTrainer(
        model=model,
        args=config,
        reward_funcs=[env_reward],
        train_dataset=Dataset.from_list([{"prompt": task.instance_id} for task in tasks]),
        processing_class=tokenizer,
        rollout_func=rollouts,
    )
    started = time.monotonic()
    trainer.train()
    seconds = time.monotonic() - started

    batches, mismatches = [], []
    for index, (ids, trl_advantages, trl_rewards) in enumerate(zip(rollouts.batches, scored, received)):
        by_swerve = swerve_advantages(args.swerve, run_dir / str(index), args.sets)
        rows = []
        for id, advantage, reward in zip(ids, trl_advantages, trl_rewards):
            row = by_swerve.get(id)
            swerve_reward = row["reward"] if row else None
            swerve_advantage = row["advantage"] if row else 0.0  # no reward: left out of the group, 0 in TRL
            same = (reward is None) == (row is None) and abs(advantage - swerve_advantage) <= 1e-4 * max(1.0, abs(advantage))
            same = same and (reward is None or abs(reward - swerve_reward) <= 1e-9)
            rows.append(
                {"trajectory_id": id, "trl_reward": reward, "swerve_reward": swerve_reward, "trl_advantage": advantage, "swerve_advantage": swerve_advantage, "same": same}
            )
            if not same:
                mismatches.append(rows[-1])
        batches.append(rows)
    if len(batches) != len(rollouts.batches) or not batches:
        mismatches.append({"batches": len(rollouts.batches), "recorded": len(scored), "rewarded": len(received)})

    losses = [{"step": entry["step"], "loss": entry["loss"]} for entry in trainer.state.log_history if "loss" in entry]
    record = {
        "model": str(args.model),
        "tasks": args.ids,
        "group": args.group,
        "optimizer_steps": trainer.state.global_step,
        "settings": settings,
        "train_seconds": round(seconds, 1),
        "losses": losses,
        "batches": batches,
        "mismatches": mismatches,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "grpo.json").write_text(json.dumps(record, indent=2) + "\n")
    for index, rows in enumerate(batches):
        for row in rows:
            print(
                f"batch {index} {row['trajectory_id']}: reward TRL {row['trl_reward']} swerve {row['swerve_reward']}; "
                f"advantage TRL {row['trl_advantage']:.6f} swerve {row['swerve_advantage']:.6f}"
                + ("" if row["same"] else "  DIFFERENT")
            )
    print(f"GRPO: {trainer.state.global_step} optimizer steps in {seconds:.0f} s; {len(mismatches)} mismatches", flush=True)
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
