"""Trainer data written by the command line, loaded by the consumers' own loaders: Hugging
Face ``datasets`` (5.2.0, installed: what TRL, verl's RLHFDataset and SkyRL's PromptDataset
read files with), and SkyRL's environment fed a prompt row the way SkyRL's generator does
(the row's other columns as ``extras``)."""

import json

import pytest

from conftest import REPO, TASKS

SHARED = REPO.parent / "shared" / "data" / "trajectories"


def load(path, kind="json"):
    import datasets

    return datasets.load_dataset(kind, data_files=str(path), split="train")


@pytest.mark.parametrize("fmt,suffix", [("verl", "parquet"), ("skyrl", "jsonl"), ("openrlhf", "jsonl")])
def test_prompt_datasets_load_with_datasets(cli, tmp_path, fmt, suffix):
    out = tmp_path / f"prompts.{suffix}"
    done = cli("data", "prompts", "--tasks", TASKS, "--format", fmt, "--out", out)
    assert done.returncode == 0, done.stderr
    rows = load(out, "parquet" if suffix == "parquet" else "json")
    assert len(rows) == 8
    first = rows[0]
    assert [message["role"] for message in first["prompt"]] == ["system", "user"]
    assert all(isinstance(message["content"], str) for message in first["prompt"])
    if fmt == "verl":
        assert first["agent_name"] == "swerve" and first["data_source"] == "swerve"
        assert first["extra_info"]["task_id"].startswith("swerve-examples__")
    elif fmt == "skyrl":
        assert first["env_class"] == "swerve" and first["task_id"].startswith("swerve-examples__")
    else:
        assert first["label"].startswith("swerve-examples__")


def test_a_skyrl_prompt_row_opens_the_same_conversation_in_the_env(cli, tmp_path):
    import skyrl_gym

    from swerve.integrations import skyrl

    out = tmp_path / "skyrl.jsonl"
    assert cli("data", "prompts", "--tasks", TASKS, "--format", "skyrl", "--out", out, "swerve-examples__spans-1").returncode == 0
    row = json.loads(out.read_text())
    skyrl.register()
    extras = {key: value for key, value in row.items() if key not in ("prompt", "env_class")}
    env = skyrl_gym.make(row["env_class"], env_config={"tasks": str(TASKS)}, extras=extras)
    messages, _ = env.init(row["prompt"])
    assert messages == row["prompt"]
    env.close()


def test_trl_rows_of_a_real_import_load_with_datasets(cli, tmp_path):
    converted = tmp_path / "openhands.jsonl"
    done = cli("traj", "convert", SHARED / "openhands.output.jsonl", "--out", converted)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "trl.jsonl"
    done = cli("data", "export", "--format", "trl", "--out", out, converted)
    assert done.returncode == 0, done.stderr
    rows = load(out)
    assert len(rows) > 5
    assert set(rows.column_names) >= {"prompt", "completion"}
    for row in rows:
        assert [message["role"] for message in row["completion"]] == ["assistant"]
        assert row["prompt"][0]["role"] == "system"
        if "tools" in row:
            assert isinstance(row["tools"], str) and isinstance(json.loads(row["tools"]), list)


def test_llamafactory_v1_rows_of_a_real_import_load_with_datasets(cli, tmp_path):
    """LLaMA-Factory v1's SFTSample (src/llamafactory/v1/utils/types.py at 12129195): content
    blocks typed text / reasoning / tool_call, loss_weight per message, tools a JSON string."""
    converted = tmp_path / "openhands.jsonl"
    assert cli("traj", "convert", SHARED / "openhands.output.jsonl", "--out", converted).returncode == 0
    out = tmp_path / "llamafactory.jsonl"
    done = cli("data", "export", "--format", "llamafactory", "--out", out, converted)
    assert done.returncode == 0, done.stderr
    (row,) = load(out)
    roles = {"system", "user", "assistant", "tool"}
    for message in row["messages"]:
        assert message["role"] in roles
        assert message["content"] and all(block["type"] in ("text", "reasoning", "tool_call") for block in message["content"])
        assert all(isinstance(block["value"], str) for block in message["content"])
        assert message["loss_weight"] == (1.0 if message["role"] == "assistant" else 0.0)
    assert json.loads(row["extra_info"])["instance_id"] == "ponylang__ponyc-4595"


@pytest.mark.parametrize("fmt", ["messages", "trl", "llamafactory"])
def test_export_yields_the_rows_swerve_data_export_writes(cli, tmp_path, fmt):
    import swerve

    run = tmp_path / "run"
    done = cli("run", "--tasks", TASKS, "--model", "replay", "--demos", REPO / "examples" / "demos", "--out", run, "--eval", "tests", "swerve-examples__calc-1", "swerve-examples__pager-1")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "rows.jsonl"
    done = cli("data", "export", "--run", run, "--format", fmt, "--out", out)
    assert done.returncode == 0, done.stderr
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert written and list(swerve.export(fmt, run=run)) == written
    # A replay run captured no token ids: the same error as the command line's.
    with pytest.raises(swerve.SwerveError) as raised:
        swerve.export("verl", run=run)
    assert "no captured token ids" in str(raised.value)
    refused = cli("data", "export", "--run", run, "--format", "verl", "--out", tmp_path / "verl.jsonl")
    assert refused.returncode != 0 and refused.stderr.strip() == f"error: {raised.value}"
