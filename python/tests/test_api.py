"""The Python API over the bundled tasks: tasks, environments stepped by the replay model's
replies and by tool calls (threads, asyncio), grading equal to `swerve eval`, trajectories,
and errors with the command line's messages."""

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

import swerve
from conftest import DEMOS, TASKS, task_by_id

BUNDLED = [
    "swerve-examples__calc-1",
    "swerve-examples__durations-1",
    "swerve-examples__envfile-1",
    "swerve-examples__eventbus-1",
    "swerve-examples__pager-1",
    "swerve-examples__spans-1",
    "swerve-examples__tagset-1",
    "swerve-examples__wrapline-1",
]


def test_load_tasks_reads_the_swe_bench_fields(tasks):
    assert sorted(task.instance_id for task in tasks) == BUNDLED
    calc = task_by_id(tasks, "swerve-examples__calc-1")
    assert calc.repo == "swerve-examples/calc"
    assert len(calc.base_commit) == 40
    assert calc.FAIL_TO_PASS and all(isinstance(test, str) for test in calc.FAIL_TO_PASS)
    assert calc.patch.startswith("diff --git")
    assert "associativ" in calc.problem_statement or "10 - 4 - 3" in calc.problem_statement
    assert calc.to_dict()["instance_id"] == calc.instance_id


def replay(env, task):
    """Steps `env` with the replay model's replies for `task` until it is done."""
    opening = env.reset()
    assert opening["instance_id"] == task.instance_id
    assert [message["role"] for message in opening["messages"]] == ["system", "user"]
    for reply in swerve.replay_turns(DEMOS / f"{task.instance_id}.json"):
        observation, reward, done, info = env.step(reply)
        assert info["format_error"] is None, observation
        assert reward == 0.0
        if done:
            break
    assert env.done
    return env.evaluate()


def test_bundled_tasks_through_env_with_the_replay_model_end_resolved(tasks):
    """All eight tasks at once, four threads: environments step in parallel."""

    def run(task):
        with swerve.Env(task) as env:
            return replay(env, task)

    with ThreadPoolExecutor(max_workers=4) as pool:
        graded = list(pool.map(run, tasks))
    for task, evaluation in zip(tasks, graded):
        assert evaluation.instance_id == task.instance_id
        assert evaluation.resolved, (task.instance_id, evaluation.report)
        assert evaluation.reward == 1.0
        assert evaluation.patch.startswith("diff --git")


def test_evaluate_writes_the_graded_episode_that_swerve_data_reads(cli, tmp_path, tasks):
    """A trainer's rollouts through Env, written by evaluate(trajectory=...), are a run to
    `swerve data advantages`: the same rewards, and advantages by them."""
    task = task_by_id(tasks, "swerve-examples__calc-1")
    run = tmp_path / "run"
    graded = {}
    with swerve.Env(task, id="calc-solved") as env:
        replay(env, task)
        graded[env.id] = env.evaluate(trajectory=run / "trajectories" / "solved.jsonl")
    with swerve.Env(task, id="calc-gave-up") as env:
        env.reset()
        assert env.step({"name": "finish", "arguments": {"command": "submit"}}).done
        graded[env.id] = env.evaluate(trajectory=run / "trajectories" / "gave-up.jsonl")
    assert graded["calc-solved"].reward == 1.0 and graded["calc-gave-up"].reward == 0.0

    written = swerve.read_trajectory(run / "trajectories" / "solved.jsonl")
    assert written.id == "calc-solved" and written.instance_id == task.instance_id
    assert written.outcome["eval_report"]["resolved"] is True
    assert len(written.steps) == len(json.loads((DEMOS / f"{task.instance_id}.json").read_text())["calls"])

    done = cli("data", "advantages", "--run", run)
    assert done.returncode == 0, done.stderr
    rows = {row["trajectory_id"]: row for row in map(json.loads, (run / "advantages.jsonl").read_text().splitlines())}
    assert {id: row["reward"] for id, row in rows.items()} == {id: e.reward for id, e in graded.items()}
    assert rows["calc-solved"]["advantage"] > 0 > rows["calc-gave-up"]["advantage"]


def test_tool_calls_and_native_assistant_messages_step_the_env(tasks):
    task = task_by_id(tasks, "swerve-examples__pager-1")
    calls = json.loads((DEMOS / f"{task.instance_id}.json").read_text())["calls"]
    with swerve.Env(task, presets=["native"]) as env:
        opening = env.reset()
        assert opening["format"] == "native"
        assert {tool["function"]["name"] for tool in opening["tools"]} >= {"file_editor", "finish"}
        # The first call as a tool call, the rest as OpenAI assistant messages.
        first = env.step(calls[0])
        assert first.info["call"]["name"] == calls[0]["name"]
        for index, call in enumerate(calls[1:]):
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{index}",
                        "type": "function",
                        "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                    }
                ],
            }
            step = env.step(message)
            assert step.info["message"]["role"] == "tool"
            assert step.info["message"]["tool_call_id"] == f"call_{index}"
        assert step.done
        assert env.evaluate().resolved


FLIP_FAILURES = (
    "import unittest\n"
    "unittest.TextTestResult.addFailure = lambda self, test, err: self.addSuccess(test)\n"
)


@pytest.mark.parametrize(
    "path, verdict",
    [
        # The test package's __init__ is test machinery: put back before the tests run.
        ("tests/__init__.py", "test_machinery_rejected"),
        # The package's own code runs inside the runner: the canaries see the rewrite.
        ("pager/__init__.py", "tampered"),
    ],
)
def test_a_patch_that_rewrites_its_judge_is_not_rewarded(tasks, path, verdict):
    """A policy that makes unittest report every failure as a success, from test machinery
    or from its package's code, fixes nothing and earns nothing (docs/security.md)."""
    task = task_by_id(tasks, "swerve-examples__pager-1")
    with swerve.Env(task) as env:
        env.reset()
        env.step({"name": "execute_bash", "arguments": {"cmd": f"cat >> {path} <<'EOF'\n{FLIP_FAILURES}EOF"}})
        graded = env.evaluate()
    assert not graded.resolved
    assert graded.reward == 0.0
    assert graded.report["guard"]["verdict"] == verdict, graded.report["guard"]


def test_a_reply_without_a_tool_call_is_a_format_error_not_an_exception(tasks):
    with swerve.Env(task_by_id(tasks, "swerve-examples__calc-1")) as env:
        env.reset()
        step = env.step("I think the bug is in the parser.")
        assert step.done is False
        assert step.info["format_error"]
        assert step.info["call"] is None
        assert step.observation  # what the model is told
        assert env.patch() == ""


def test_steps_after_finish_and_before_reset_raise(tasks):
    env = swerve.Env(task_by_id(tasks, "swerve-examples__calc-1"), id="finished-env")
    with pytest.raises(swerve.SwerveError, match=r"call reset\(\) first"):
        env.step({"name": "finish", "arguments": {}})
    env.reset()
    assert env.step({"name": "finish", "arguments": {}}).done
    with pytest.raises(swerve.SwerveError) as raised:
        env.step({"name": "finish", "arguments": {}})
    assert str(raised.value) == 'environment "finished-env" is done (the agent called finish): evaluate or delete it'
    env.close()
    with pytest.raises(swerve.SwerveError, match="not open"):
        env.patch()


def test_reset_opens_a_fresh_workspace(tasks):
    task = task_by_id(tasks, "swerve-examples__envfile-1")
    with swerve.Env(task) as env:
        env.reset()
        env.step({"name": "execute_bash", "arguments": {"cmd": "echo changed >> README.md"}})
        assert "README.md" in env.patch()
        env.reset()
        assert env.patch() == ""


def test_async_env_runs_environments_concurrently(tasks):
    chosen = [task_by_id(tasks, "swerve-examples__tagset-1"), task_by_id(tasks, "swerve-examples__eventbus-1")]

    async def one(task):
        async with swerve.AsyncEnv(task) as env:
            await env.reset()
            for reply in swerve.replay_turns(DEMOS / f"{task.instance_id}.json"):
                step = await env.step(reply)
                if step.done:
                    break
            return await env.evaluate()

    async def both():
        return await asyncio.gather(*(one(task) for task in chosen))

    assert [evaluation.resolved for evaluation in asyncio.run(both())] == [True, True]


def comparable(report):
    return {key: report.get(key) for key in ("resolved", "patch_exists", "patch_successfully_applied", "error_class", "tests_status")}


@pytest.mark.parametrize("mode", ["gold", "empty"])
def test_evaluate_gives_the_verdicts_of_swerve_eval(cli, tmp_path, tasks, mode):
    done = cli("eval", "--tasks", TASKS, f"--{mode}", "--out", tmp_path / "cli")
    assert done.returncode in (0, 1), done.stderr
    by_cli = json.loads((tmp_path / "cli" / "results.json").read_text())
    if mode == "gold":
        by_python = swerve.evaluate(TASKS, gold=True)
    else:
        by_python = swerve.evaluate(tasks, {task.instance_id: "" for task in tasks})
    assert sorted(by_python) == sorted(by_cli) == BUNDLED
    for instance_id, evaluation in by_python.items():
        assert comparable(evaluation.report) == comparable(by_cli[instance_id]), instance_id
        assert evaluation.resolved is (mode == "gold")
        assert evaluation.reward == (1.0 if mode == "gold" else 0.0)


def test_evaluate_reads_a_predictions_file(tmp_path, tasks):
    calc = task_by_id(tasks, "swerve-examples__calc-1")
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text(json.dumps({"instance_id": calc.instance_id, "model_name_or_path": "m", "model_patch": calc.patch}) + "\n")
    graded = swerve.evaluate(TASKS, predictions)
    assert list(graded) == [calc.instance_id]
    assert graded[calc.instance_id].resolved


def test_read_trajectory_of_a_replay_run(cli, tmp_path):
    done = cli("run", "--tasks", TASKS, "--model", "replay", "--demos", DEMOS, "--out", tmp_path, "swerve-examples__calc-1")
    assert done.returncode == 0, done.stderr
    trajectory = swerve.read_trajectory(tmp_path / "trajectories" / "swerve-examples__calc-1__0.jsonl")
    assert trajectory.instance_id == "swerve-examples__calc-1"
    assert trajectory.outcome["exit_reason"] == "submitted"
    assert len(trajectory.steps) == len(swerve.replay_turns(DEMOS / "swerve-examples__calc-1.json"))


def error_of(cli_run):
    assert cli_run.returncode != 0
    return cli_run.stderr.strip()


def test_a_bad_task_file_raises_the_command_line_message(cli, tmp_path):
    bad = tmp_path / "bad.jsonl"
    row = json.loads(TASKS.read_text().splitlines()[0])
    del row["base_commit"]
    bad.write_text(TASKS.read_text().splitlines()[1] + "\n" + json.dumps(row) + "\n")
    with pytest.raises(swerve.SwerveError) as raised:
        swerve.load_tasks(bad)
    assert "base_commit" in str(raised.value) and "bad.jsonl" in str(raised.value)
    assert error_of(cli("eval", "--tasks", bad, "--gold", "--out", tmp_path / "out")) == f"error: {raised.value}"


def test_a_bad_setting_raises_the_command_line_message(cli, tmp_path, tasks):
    with pytest.raises(swerve.SwerveError) as raised:
        swerve.Env(tasks[0], set={"agent.max_steps": "many"})
    assert "agent.max_steps" in str(raised.value)
    assert error_of(cli("config", "show", "--set", "agent.max_steps=many")) == f"error: {raised.value}"


def test_an_unknown_preset_raises_the_command_line_message(cli):
    with pytest.raises(swerve.SwerveError) as raised:
        swerve.config_toml(presets=["no-such-preset"])
    assert error_of(cli("config", "show", "--preset", "no-such-preset")) == f"error: {raised.value}"


def test_one_env_stepped_from_many_threads_takes_turns(tasks):
    task = task_by_id(tasks, "swerve-examples__calc-1")
    with swerve.Env(task) as env:
        env.reset()
        # Each call differs: the agent's step ends an episode that repeats one call.
        def call(k):
            return {"name": "execute_bash", "arguments": {"cmd": f"echo {k} >> counted.txt"}}

        with ThreadPoolExecutor(max_workers=8) as pool:
            steps = list(pool.map(lambda k: env.step(call(k)), range(32)))
        assert all(not step.done and step.info["is_error"] is False for step in steps)
        lines = env.step({"name": "execute_bash", "arguments": {"cmd": "wc -l < counted.txt"}}).observation
        assert "32" in lines


def test_a_dropped_env_leaves_no_workspace(tasks):
    import gc
    from pathlib import Path

    workspaces = Path.home() / ".cache" / "swerve" / "workspaces"
    before = set(workspaces.iterdir()) if workspaces.is_dir() else set()
    env = swerve.Env(task_by_id(tasks, "swerve-examples__calc-1"))
    env.reset()
    assert set(workspaces.iterdir()) - before
    del env
    gc.collect()
    assert set(workspaces.iterdir()) - before == set()


def test_the_type_stubs_name_every_function_of_the_binding():
    import ast
    import inspect
    from pathlib import Path

    from swerve import _swerve

    stub = Path(_swerve.__file__).with_name("_swerve.pyi")
    assert stub.is_file() and stub.with_name("py.typed").is_file()
    tree = ast.parse(stub.read_text())
    stubbed = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    # Constants (the registries' names) are stubbed as annotated names.
    stubbed |= {node.target.id for node in tree.body if isinstance(node, ast.AnnAssign)}
    compiled = {name for name in dir(_swerve) if not name.startswith("_")}
    assert stubbed == compiled
    methods = {node.name for node in next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "NativeEnv").body if isinstance(node, ast.FunctionDef)}
    assert methods - {"__init__"} == {name for name, _ in inspect.getmembers(_swerve.NativeEnv) if not name.startswith("_")}


def test_run_writes_the_run_directory_of_swerve_run(cli, tmp_path):
    ids = ["swerve-examples__calc-1", "swerve-examples__pager-1"]
    settings = {"model.name": "replay", "run.demos": str(DEMOS), "run.eval": True}
    summary = swerve.run(TASKS, tmp_path / "py", ids=ids, set=settings)
    done = cli("run", "--tasks", TASKS, "--model", "replay", "--demos", DEMOS, "--eval", "--out", tmp_path / "cli", *ids)
    assert done.returncode == 0, done.stderr
    by_cli = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert summary == json.loads((tmp_path / "py" / "summary.json").read_text())
    for key in ("expected", "rollouts", "submitted", "evaluated", "resolved", "steps", "exit_reasons"):
        assert summary[key] == by_cli[key], key
    assert summary["resolved"] == 2
    assert (tmp_path / "py" / "preds.jsonl").read_text() == (tmp_path / "cli" / "preds.jsonl").read_text()
    # A second call resumes: no trajectory is written again.
    files = sorted((tmp_path / "py" / "trajectories").iterdir())
    before = [(path.stat().st_mtime_ns, path.read_bytes()) for path in files]
    again = swerve.run(TASKS, tmp_path / "py", ids=ids, set=settings)
    assert again["rollouts"] == again["resolved"] == 2
    assert [(path.stat().st_mtime_ns, path.read_bytes()) for path in files] == before
    # Settings that change results are refused, with the command line's message.
    with pytest.raises(swerve.SwerveError) as raised:
        swerve.run(TASKS, tmp_path / "py", ids=ids, set={**settings, "agent.max_steps": 3})
    refused = cli("run", "--tasks", TASKS, "--model", "replay", "--demos", DEMOS, "--eval", "--out", tmp_path / "py", "--max-steps", "3", *ids)
    assert error_of(refused) == f"error: {raised.value}"
    assert "different settings (agent.max_steps)" in str(raised.value)


def _possible_values(refused) -> list:
    """The values clap lists when it refuses one: `[possible values: a, b, …]`."""
    import re

    listed = re.search(r"\[possible values: ([^\]]*)\]", refused.stderr)
    assert refused.returncode != 0 and listed, refused.stderr
    return listed.group(1).split(", ")


def test_the_registries_are_the_names_the_command_line_takes(cli, tmp_path):
    """`swerve.EXPORT_FORMATS` and `swerve.EVALUATORS` come from the Rust lists the command
    line parses with: the same names, in the same order; an unknown format names them."""
    out = tmp_path / "rows.jsonl"
    export = cli("data", "export", "--format", "nonesuch", "--out", out, "trajectory.jsonl")
    assert _possible_values(export) == list(swerve.EXPORT_FORMATS)
    run = cli("run", "--tasks", TASKS, "--out", tmp_path / "run", "--eval", "nonesuch")
    assert _possible_values(run) == list(swerve.EVALUATORS)
    with pytest.raises(swerve.SwerveError) as raised:
        swerve.export("nonesuch", files=["trajectory.jsonl"])
    assert str(raised.value).endswith("choose one of " + ", ".join(swerve.EXPORT_FORMATS))
