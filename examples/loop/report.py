"""The before/after table of the loop: the base and the trained model on the held-out tasks.

Each ``--base`` and ``--trained`` directory is one ``swerve run --eval`` (one seed) of that
model on the held-out tasks. Per rollout: the format-error rate (steps whose reply could not
be turned into a tool call, over its steps), the steps to the first valid tool call (none
when it never made one) and whether it resolved the task (reward 1). The table gives each
model's mean and standard deviation over its rollouts, the pooled rate, and the resolved
count, with the training record (``training.json``: time, rows, loss per step). With
``--plot`` the loss curve is drawn to a PNG (matplotlib). ``--out`` writes it all as JSON.

Usage: report.py --base DIR... --trained DIR... --training FILE --out JSON [--plot PNG]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics


def rollouts(run_dir: pathlib.Path) -> list[dict]:
    """One summary per trajectory of the run directory."""
    found = []
    for path in sorted((run_dir / "trajectories").glob("*.jsonl")):
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        steps = [record for record in records if record["type"] == "step"]
        outcome = next((record for record in records if record["type"] == "outcome"), None)
        if outcome is None:
            raise SystemExit(f"{path}: the rollout has no outcome (it did not finish)")
        errors = sum(1 for step in steps if step.get("format_error"))
        first_valid = next(
            (
                step["index"] + 1
                for step in steps
                if step.get("tool_call") and not step.get("format_error")
            ),
            None,
        )
        found.append(
            {
                "trajectory": str(path),
                "instance_id": records[0].get("instance_id"),
                "steps": len(steps),
                "format_errors": errors,
                "format_error_rate": errors / len(steps) if steps else 0.0,
                "first_valid_call": first_valid,
                "resolved": outcome.get("reward") == 1,
                "exit_reason": outcome.get("exit_reason"),
            }
        )
    return found


def mean_std(values: list[float]) -> tuple[float, float]:
    if not values:
        return (float("nan"), float("nan"))
    return (statistics.fmean(values), statistics.pstdev(values) if len(values) > 1 else 0.0)


def summarize(runs: list[dict]) -> dict:
    rates = [run["format_error_rate"] for run in runs]
    firsts = [run["first_valid_call"] for run in runs if run["first_valid_call"] is not None]
    steps = sum(run["steps"] for run in runs)
    errors = sum(run["format_errors"] for run in runs)
    return {
        "rollouts": len(runs),
        "steps": steps,
        "format_error_rate_mean_std": mean_std(rates),
        "format_error_rate_pooled": errors / steps if steps else float("nan"),
        "first_valid_call_mean_std": mean_std([float(first) for first in firsts]),
        "rollouts_with_a_valid_call": len(firsts),
        "resolved": sum(1 for run in runs if run["resolved"]),
        "exit_reasons": {
            reason: sum(1 for run in runs if run["exit_reason"] == reason)
            for reason in sorted({run["exit_reason"] for run in runs})
        },
    }


def plot(training: dict, path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    losses = training["losses"]
    figure, axes = plt.subplots(figsize=(6, 3.5), dpi=120)
    axes.plot([entry["step"] for entry in losses], [entry["loss"] for entry in losses], marker=".")
    axes.set_xlabel("optimizer step (batch of 1 row)")
    axes.set_ylabel("training loss (completion tokens)")
    axes.set_title(
        f"SFT of SmolLM2-135M on swerve's export: {training['rows']} rows, "
        f"{training['epochs']:g} epochs, {training['train_seconds']:.0f} s on CPU",
        fontsize=9,
    )
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=pathlib.Path, nargs="+", required=True)
    parser.add_argument("--trained", type=pathlib.Path, nargs="+", required=True)
    parser.add_argument("--training", type=pathlib.Path, required=True)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--plot", type=pathlib.Path)
    args = parser.parse_args()

    training = json.loads(args.training.read_text())
    models = {
        "base": [run for directory in args.base for run in rollouts(directory)],
        "trained": [run for directory in args.trained for run in rollouts(directory)],
    }
    summaries = {name: summarize(runs) for name, runs in models.items()}

    def cell(pair: tuple[float, float], digits: int) -> str:
        return f"{pair[0]:.{digits}f} ± {pair[1]:.{digits}f}"

    lines = [
        "| model | rollouts | steps | format-error rate (mean ± sd) | pooled | "
        "first valid call (mean ± sd) | with a valid call | resolved |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, summary in summaries.items():
        lines.append(
            f"| {name} | {summary['rollouts']} | {summary['steps']} | "
            f"{cell(summary['format_error_rate_mean_std'], 2)} | "
            f"{summary['format_error_rate_pooled']:.2f} | "
            f"{cell(summary['first_valid_call_mean_std'], 1)} | "
            f"{summary['rollouts_with_a_valid_call']}/{summary['rollouts']} | "
            f"{summary['resolved']}/{summary['rollouts']} |"
        )
    losses = training["losses"]
    lines.append("")
    lines.append(
        f"training: {training['rows']} rows, {training['optimizer_steps']} optimizer steps, "
        f"{training['train_seconds']:.0f} s; loss {losses[0]['loss']:.3f} (first step) -> "
        f"{losses[-1]['loss']:.3f} (last step)"
    )
    for name, summary in summaries.items():
        lines.append(f"{name} exit reasons: {summary['exit_reasons']}")
    table = "\n".join(lines)
    print(table, flush=True)
    args.out.write_text(
        json.dumps({"summaries": summaries, "rollouts": models, "table": table}, indent=2) + "\n"
    )
    if args.plot:
        plot(training, args.plot)
        print(f"loss curve: {args.plot}", flush=True)


if __name__ == "__main__":
    main()
