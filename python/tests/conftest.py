"""Shared fixtures of the Python suite: the repository's bundled tasks and demonstrations,
and the `swerve` executable built from the same tree (to compare with the command line)."""

import ast
import functools
import importlib.util
import os
import subprocess
from types import SimpleNamespace
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


def package_root(name):
    """The directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, f"{name} is not installed (scripts/python-tests.sh installs it)"
    return Path(spec.submodule_search_locations[0])


def real_definitions(path, names, namespace):
    """The top-level classes and functions ``names`` of the real source file ``path``,
    compiled and run in ``namespace`` (which gives them the names they use): the package's
    own definitions, for a module whose imports cannot be met here."""
    tree = ast.parse(Path(path).read_text(), filename=str(path))
    nodes = [node for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name in names]
    assert sorted(node.name for node in nodes) == sorted(names), f"{path}: {names} not all defined at top level"
    exec(compile(ast.Module(body=nodes, type_ignores=[]), str(path), "exec"), namespace)
    return [namespace[name] for name in names]


@functools.lru_cache(maxsize=None)
def verl_definitions():
    """verl's own ``AgentLoopMetrics``, ``AgentLoopOutput`` and ``DictConfigWrap``
    (``verl/experimental/agent_loop/agent_loop.py``) and ``TokenOutput``
    (``verl/workers/rollout/replica.py``), compiled from the installed verl (pinned in
    scripts/python-tests.sh; its modules import torch, ray, tensordict and hydra, which are not
    installed: see test_trainer_packages.py)."""
    from typing import Any, Optional

    from pydantic import BaseModel, ConfigDict

    root = package_root("verl")
    # DictConfig (omegaconf) is only an annotation of DictConfigWrap's.
    namespace = {"__name__": "verl_agent_loop_source", "BaseModel": BaseModel, "ConfigDict": ConfigDict, "Any": Any, "Optional": Optional, "DictConfig": Any}
    metrics, output, wrap = real_definitions(
        root / "experimental" / "agent_loop" / "agent_loop.py", ["AgentLoopMetrics", "AgentLoopOutput", "DictConfigWrap"], namespace
    )
    (token_output,) = real_definitions(root / "workers" / "rollout" / "replica.py", ["TokenOutput"], dict(namespace))
    return SimpleNamespace(AgentLoopMetrics=metrics, AgentLoopOutput=output, DictConfigWrap=wrap, TokenOutput=token_output)
