"""The wheel carries the `swerve` command (as the release's does): pip installs it beside
the interpreter, `swerve.command.path()` finds it, and `python -m swerve` runs it."""

import os
import subprocess
import sys

import swerve.command


def test_the_wheel_installs_the_command_beside_the_interpreter(cli):
    installed = os.path.join(os.path.dirname(sys.executable), "swerve")
    assert os.access(installed, os.X_OK), f"{installed} missing: the wheel must carry the command"
    assert swerve.command.path() == installed
    # The same program as the tree's binary.
    ours = subprocess.run([installed, "--version"], capture_output=True, text=True, check=True)
    assert ours.stdout == cli("--version", check=True).stdout
    assert ours.stdout.startswith("swerve ")


def test_python_dash_m_swerve_runs_the_command_with_its_arguments():
    tasks = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "tasks", "tasks.jsonl")
    done = subprocess.run([sys.executable, "-m", "swerve", "tasks", "list", tasks],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "swerve-examples__calc-1" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "swerve", "no-such-command"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "unrecognized subcommand" in bad.stderr


def test_without_the_command_path_falls_back_to_PATH(monkeypatch, tmp_path):
    monkeypatch.setattr(swerve.command.sysconfig, "get_path", lambda *args: str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert swerve.command.path() is None
    fake = tmp_path / "swerve"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert swerve.command.path() == str(fake)
