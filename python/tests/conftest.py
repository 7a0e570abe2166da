"""Shared fixtures of the Python suite: the repository's bundled tasks and demonstrations,
and the `swerve` executable built from the same tree (to compare with the command line)."""

import os
import subprocess
from pathlib import Path

import pytest

import swerve

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "examples" / "tasks" / "tasks.jsonl"
DEMOS = REPO / "examples" / "demos"


def swerve_bin() -> Path:
    """The command line of this tree: $SWERVE_BIN, else <target>/debug/swerve."""
    given = os.environ.get("SWERVE_BIN")
    if given:
        return Path(given)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target / "debug" / "swerve"


@pytest.fixture(scope="session")
def cli():
    """Runs the command line; returns the completed process."""
    binary = swerve_bin()
    if not binary.is_file():
        pytest.fail(f"{binary} is missing: build it with `cargo build -p swerve-cli` (or set SWERVE_BIN)")

    def run(*args, check=False, cwd=None):
        return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, check=check, cwd=cwd)

    return run


@pytest.fixture(scope="session")
def tasks():
    return swerve.load_tasks(TASKS)


def task_by_id(tasks, instance_id):
    return next(task for task in tasks if task.instance_id == instance_id)
