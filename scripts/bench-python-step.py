#!/usr/bin/env python3
"""Per-step cost of driving an environment three ways, side by side in one run (BENCHMARKS.md
§ Python): the Python binding's `Env.step`, the command line's `swerve env tool` (its
marginal cost per call, N calls in one process, and one whole invocation), and an HTTP round
trip to `swerve serve`'s `/v1/envs/{id}/step`. The same two tool calls on the same bundled
task: `file_editor view` of a small file (no process in the sandbox: the front end's own
overhead dominates) and `execute_bash true` (one sandboxed process).

Run with the venv the Python suite makes (the wheel installed), from the repository root:
    target/venvs/python/bin/python scripts/bench-python-step.py [--steps 300]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import swerve

REPO = Path(__file__).resolve().parents[1]
TASKS = REPO / "examples" / "tasks" / "tasks.jsonl"
TASK_ID = "swerve-examples__calc-1"
CALLS = {
    "file_editor view": {"name": "file_editor", "arguments": {"command": "view", "path": "/testbed/calc/__init__.py"}},
    "execute_bash true": {"name": "execute_bash", "arguments": {"cmd": "true"}},
}


def binary() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for profile in ("release", "debug"):
        if (target / profile / "swerve").is_file():
            return target / profile / "swerve"
    sys.exit("build swerve first (cargo build --release -p swerve-cli)")


def per_call(seconds: list) -> str:
    return f"{statistics.median(seconds) * 1e3:.2f} ms"


def python_steps(call: dict, steps: int) -> list:
    task = next(task for task in swerve.load_tasks(TASKS) if task.instance_id == TASK_ID)
    with swerve.Env(task) as env:
        env.reset()
        times = []
        for _ in range(steps):
            started = time.perf_counter()
            env.step(call)
            times.append(time.perf_counter() - started)
    return times


def cli_calls(swerve_bin: Path, call: dict, steps: int) -> tuple:
    """(marginal seconds per call over `steps` calls in one process, one whole invocation)."""

    def run(count: int) -> float:
        started = time.perf_counter()
        subprocess.run(
            [str(swerve_bin), "env", "tool", "--tasks", str(TASKS), TASK_ID, *[json.dumps(call)] * count],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return time.perf_counter() - started

    one = statistics.median(run(1) for _ in range(5))
    many = statistics.median(run(steps + 1) for _ in range(3))
    return (many - one) / steps, one


def http_steps(swerve_bin: Path, call: dict, steps: int) -> list:
    token = "bench-python-step"
    server = subprocess.Popen(
        [str(swerve_bin), "serve", "--tasks", str(TASKS), "--listen", "127.0.0.1:0", "--out", "/tmp/swerve-bench-serve"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "SWERVE_SERVE_TOKEN": token},
    )
    try:
        line = server.stdout.readline()
        if "listening on" not in line:
            sys.exit(f"swerve serve did not start: {line!r}")
        base = line.strip().rsplit(" ", 1)[-1]
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}

        def post(path: str, body: dict) -> dict:
            request = urllib.request.Request(base + path, json.dumps(body).encode(), headers)
            with urllib.request.urlopen(request) as answer:
                return json.loads(answer.read())

        env = post("/v1/envs", {"task_id": TASK_ID})
        times = []
        for _ in range(steps):
            started = time.perf_counter()
            post(f"/v1/envs/{env['id']}/step", {"call": call})
            times.append(time.perf_counter() - started)
        urllib.request.urlopen(urllib.request.Request(f"{base}/v1/envs/{env['id']}", headers=headers, method="DELETE")).read()
        return times
    finally:
        server.terminate()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    steps = parser.parse_args().steps
    swerve_bin = binary()
    print(f"swerve: {swerve_bin}; {steps} steps per way; medians")
    print(f"{'tool call':<20} {'Python Env.step':>16} {'CLI per call':>14} {'HTTP step':>12} {'CLI invocation':>16}")
    for name, call in CALLS.items():
        python = per_call(python_steps(call, steps))
        marginal, invocation = cli_calls(swerve_bin, call, steps)
        http = per_call(http_steps(swerve_bin, call, steps))
        print(f"{name:<20} {python:>16} {marginal * 1e3:>11.2f} ms {http:>12} {invocation * 1e3:>13.1f} ms")


if __name__ == "__main__":
    main()
