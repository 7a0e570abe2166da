"""The trainer integrations under the trainers' own interfaces: skyrl-gym's environment
registry and ``BaseTextEnv`` (the real package), verl's ``AgentLoopOutput`` (the installed
verl's own class definition), OpenRLHF's executor protocol and rLLM's ``BaseEnv`` interface
(run through the real packages in test_trainer_packages.py), driven by the replay model
through a real tokenizer. Under ``--preset agile`` (a history rewritten each turn) verl,
SkyRL and rLLM train step-wise: each step's prompt ids must be swerve's own ids of that step's
windowed context (``run.tokenizer`` set to the same Qwen3 tokenizer, rendered by swerve's Rust
chat template engine) and its response ids the ids the model gave."""

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

import swerve
from conftest import DEMOS, TASKS, task_by_id, verl_definitions


def replay_replies(instance_id):
    return swerve.replay_turns(DEMOS / f"{instance_id}.json")


# --- SkyRL (skyrl-gym 0.4.0, installed) -------------------------------------------------


def test_skyrl_gym_makes_and_runs_the_swerve_env():
    import skyrl_gym
    from skyrl_gym.envs.base_text_env import BaseTextEnv

    from swerve.integrations import skyrl

    skyrl.register()
    env = skyrl_gym.make("swerve", env_config={"tasks": str(TASKS)}, extras={"task_id": "swerve-examples__durations-1"})
    assert isinstance(env, BaseTextEnv)
    messages, info = env.init([{"role": "user", "content": "ignored: swerve renders its own opening"}])
    assert [message["role"] for message in messages] == ["system", "user"]
    outputs = [env.step(reply) for reply in replay_replies("swerve-examples__durations-1")]
    last = outputs[-1]
    assert last["done"] and last["reward"] == 1.0 and last["metadata"]["resolved"]
    assert last["metadata"]["no_reward"] is False
    for output in outputs[:-1]:
        assert not output["done"] and output["reward"] == 0.0
        (observation,) = output["observations"]
        assert observation["role"] in ("user", "tool") and isinstance(observation["content"], str)
    assert env.get_metrics()["resolved"] == 1.0
    assert BaseTextEnv.aggregate_metrics([env.get_metrics()])["resolved"] == 1.0
    env.close()


def test_skyrl_env_names_a_missing_task_id():
    from swerve.integrations import skyrl

    with pytest.raises(swerve.SwerveError, match="no task with instance_id 'nope'"):
        skyrl.SwerveTextEnv({"tasks": str(TASKS)}, {"task_id": "nope"})


def test_skyrl_step_wise_output_keeps_trainer_invariants():
    from swerve.integrations import skyrl

    trajectories = [
        {"instance_id": "a", "repetition_id": 0, "reward": 1.0, "steps": [{"prompt_ids": [1, 2], "response_ids": [3, 4]}, {"prompt_ids": [1, 2, 3, 4, 5], "response_ids": [6]}]},
        {"instance_id": "a", "repetition_id": 1, "reward": None, "steps": [{"prompt_ids": [1, 2], "response_ids": [7]}]},
        {"instance_id": "a", "repetition_id": 2, "reward": 0.0, "steps": [{"prompt_ids": [1, 2], "response_ids": [8, 9]}]},
    ]
    output = skyrl.step_wise_output(trajectories)
    assert output["skipped_no_reward"] == [1]
    assert [(t.instance_id, t.repetition_id) for t in output["trajectory_ids"]] == [("a", 0), ("a", 0), ("a", 2)]
    assert output["is_last_step"] == [False, True, True]
    assert output["rewards"] == [[0.0, 0.0], [1.0], [0.0, 0.0]]
    assert output["rollout_logprobs"] is None  # not captured: None, never 0.0
    ids = {skyrl.session_id("3", 0, step, phase) for step in (1, 2) for phase in ("train", "eval")}
    assert len(ids) == 4


# --- verl (AgentLoopOutput of the installed verl 0.9.1, compiled from its source) ---------


def verl_output_model():
    """verl's own ``AgentLoopOutput`` (conftest.verl_definitions: the installed package's
    class definition; test_trainer_packages.py says why it is not imported)."""
    return verl_definitions().AgentLoopOutput


def qwen3_directory():
    root = Path(os.environ.get("SWERVE_TEST_DATA", Path.home() / ".cache" / "swerve" / "test-data"))
    directory = root / "tokenizers" / "qwen3"
    if not (directory / "tokenizer.json").is_file():
        pytest.fail(f"{directory} is missing: run scripts/fetch-tokenizers.sh")
    return directory


def qwen3_tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(qwen3_directory()))


class ReplayServer:
    """A token-in/token-out server that answers the replay model's replies, and records
    the prompt ids it was sent."""

    def __init__(self, tokenizer, replies):
        self.tokenizer, self.replies, self.prompts = tokenizer, list(replies), []

    async def generate(self, prompt_ids, sampling_params, request_id):
        self.prompts.append(list(prompt_ids))
        ids = self.tokenizer.encode(self.replies.pop(0), add_special_tokens=False) + [self.tokenizer.convert_tokens_to_ids("<|im_end|>")]
        return ids, [-0.5] * len(ids)


def test_verl_episode_is_token_in_token_out_and_validates_as_agent_loop_output(tasks):
    from swerve.integrations import verl

    tokenizer = qwen3_tokenizer()
    task = task_by_id(tasks, "swerve-examples__calc-1")
    server = ReplayServer(tokenizer, replay_replies(task.instance_id))
    fields = asyncio.run(
        verl.run_episode(swerve.AsyncEnv(task), tokenizer, server.generate, prompt_length=8192, response_length=32768)
    )
    output = verl_output_model()(**fields)
    assert output.reward_score == 1.0 and output.extra_fields["resolved"] and output.extra_fields["submitted"]
    assert len(output.response_ids) == len(output.response_mask) == len(output.response_logprobs)
    # Each request is the previous one plus what came back and the observation: never re-rendered.
    for earlier, later in zip(server.prompts, server.prompts[1:]):
        assert later[: len(earlier)] == earlier
    assert server.prompts[-1] == output.prompt_ids + output.response_ids[: len(server.prompts[-1]) - len(output.prompt_ids)]
    generated = sum(output.response_mask)
    assert 0 < generated < len(output.response_ids)
    assert output.num_turns == 2 * len(server.prompts)  # user + assistants + observations + 1


# --- TRL (GRPOTrainer's rollout_func; TRL itself needs torch: scripts/loop.sh runs it) ---


def test_trl_rollouts_give_grpo_its_fields_and_a_run_that_swerve_data_grades_alike(cli, tmp_path, tasks):
    """One group of two episodes of calc-1 (the demonstration: resolved; a reply that
    submits at once: not), as GRPOTrainer's RepeatSampler hands the prompt twice. The
    written trajectories are a run whose advantages, with TRL's ε, are TRL's formula over
    the rewards TRL received: (r − mean) / (sample std + 1e-4)."""
    from types import SimpleNamespace

    from swerve.integrations import trl

    tokenizer = qwen3_tokenizer()
    task = task_by_id(tasks, "swerve-examples__calc-1")
    replies = replay_replies(task.instance_id)
    server = ReplayServer(tokenizer, replies + replies[-1:])
    rollouts = trl.Rollouts(tasks, tokenizer=tokenizer, generate=server.generate, run_dir=tmp_path / "grpo")
    trainer = SimpleNamespace(args=SimpleNamespace(max_completion_length=32768), processing_class=tokenizer)
    fields = rollouts([task.instance_id, [{"role": "user", "content": task.instance_id}]], trainer)

    assert fields["swerve_reward"] == [1.0, 0.0] and fields["resolved"] == [True, False]
    for key in ("prompt_ids", "completion_ids", "logprobs", "env_mask", "trajectory_id"):
        assert len(fields[key]) == 2, key
    for completion, mask, logprobs in zip(fields["completion_ids"], fields["env_mask"], fields["logprobs"]):
        assert len(completion) == len(mask) == len(logprobs)
        assert all(value == 0.0 for value, masked in zip(logprobs, mask) if not masked)
    assert 0 in fields["env_mask"][0] and sum(fields["env_mask"][1]) == len(fields["completion_ids"][1])
    assert trl.env_reward([], [], fields["swerve_reward"]) == [1.0, 0.0]
    assert rollouts.batches == [fields["trajectory_id"]]
    with pytest.raises(swerve.SwerveError, match="give a task's instance_id"):
        rollouts(["no-such-task"], trainer)

    done = cli("data", "advantages", "--run", tmp_path / "grpo" / "0", "--epsilon", "1e-4")
    assert done.returncode == 0, done.stderr
    rows = {row["trajectory_id"]: row for row in map(json.loads, (tmp_path / "grpo" / "0" / "advantages.jsonl").read_text().splitlines())}
    rewards = fields["swerve_reward"]
    mean = sum(rewards) / 2
    std = (sum((r - mean) ** 2 for r in rewards) / 1) ** 0.5
    for id, reward in zip(fields["trajectory_id"], rewards):
        assert rows[id]["reward"] == reward
        assert abs(rows[id]["advantage"] - (reward - mean) / (std + 1e-4)) < 1e-9


def test_observation_ids_under_a_template_that_reads_every_role():
    """verl's prefix trick renders an empty message ``{}``, which a template reading each
    message's role unguarded (SmolLM2's) refuses; the observation is then taken against a
    one-system-message conversation, with the same tokens."""
    from swerve.integrations import verl

    tokenizer = qwen3_tokenizer()
    tokenizer.chat_template = (
        "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
        "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
    )
    ids = verl.observation_ids(tokenizer, {"role": "user", "content": "EXECUTION RESULT:\n1 2"})
    assert tokenizer.decode(ids) == "<|im_start|>user\nEXECUTION RESULT:\n1 2<|im_end|>\n<|im_start|>assistant\n"


def test_verl_episode_is_cut_to_response_length(tasks):
    from swerve.integrations import verl

    tokenizer = qwen3_tokenizer()
    task = task_by_id(tasks, "swerve-examples__pager-1")
    server = ReplayServer(tokenizer, replay_replies(task.instance_id))
    fields = asyncio.run(verl.run_episode(swerve.AsyncEnv(task), tokenizer, server.generate, prompt_length=8192, response_length=300))
    output = verl_output_model()(**fields)
    assert len(output.response_ids) == len(output.response_mask) == 300
    assert output.extra_fields["truncated"] and not output.extra_fields["submitted"]
    assert output.reward_score == 0.0


def test_verl_episode_refuses_an_opening_longer_than_prompt_length(tasks):
    from swerve.integrations import verl

    tokenizer = qwen3_tokenizer()
    server = ReplayServer(tokenizer, [])
    with pytest.raises(swerve.SwerveError, match="more than data.max_prompt_length"):
        asyncio.run(verl.run_episode(swerve.AsyncEnv(tasks[0]), tokenizer, server.generate, prompt_length=10, response_length=100))


# --- OpenRLHF (the protocol of openrlhf/utils/agent.py 0.11.2; its executor itself runs the
# instance in test_trainer_packages.py) --------------------------------------------------
#
# MultiTurnAgentExecutor.execute: ``instance = cls()``; ``reset({"observation": prompt,
# "label": label})`` → ``{"observation"}``; per turn ``step({"observation_text",
# "action_text", "label", "sampling_params"})`` → ``{"rewards", "scores",
# "environment_feedback", "done", "sampling_params", "extra_logs"}``.

OPENRLHF_STEP_KEYS = {"rewards", "scores", "environment_feedback", "done", "sampling_params", "extra_logs"}


def test_openrlhf_agent_instance_runs_a_task_under_the_executor_protocol():
    from swerve.integrations import openrlhf

    tokenizer = qwen3_tokenizer()
    AgentInstance = openrlhf.agent_instance_class(tasks=str(TASKS), tokenizer=tokenizer)

    async def execute():
        instance = AgentInstance()
        prompt = "<|im_start|>user\nfix it<|im_end|>\n<|im_start|>assistant\n"
        reset = await instance.reset({"observation": prompt, "label": "swerve-examples__envfile-1"})
        assert reset["observation"] == prompt
        results = []
        for reply in replay_replies("swerve-examples__envfile-1"):
            result = await instance.step({"observation_text": prompt, "action_text": reply, "label": "swerve-examples__envfile-1", "sampling_params": None})
            assert set(result) == OPENRLHF_STEP_KEYS
            results.append(result)
            if result["done"]:
                break
        return results

    results = asyncio.run(execute())
    assert results[-1]["done"] and results[-1]["rewards"] == 1.0 and results[-1]["extra_logs"]["no_reward"] == 0.0
    feedback = results[0]["environment_feedback"]
    assert feedback.startswith("<|im_start|>user\n") and feedback.endswith("<|im_start|>assistant\n")


# --- rLLM (BaseEnv interface; rLLM's own classes in test_trainer_packages.py) ------------


def test_rllm_env_has_the_base_env_interface_and_ends_resolved():
    from swerve.integrations.rllm import SwerveRllmEnv

    assert SwerveRllmEnv.is_multithread_safe()
    env = SwerveRllmEnv.from_dict({"tasks": str(TASKS), "task_id": "swerve-examples__wrapline-1"})
    instruction, info = env.reset()
    assert instruction == env.env.task.problem_statement
    assert info["messages"][0]["role"] == "system"
    for reply in replay_replies("swerve-examples__wrapline-1"):
        observation, reward, done, info = env.step(reply)
        assert isinstance(observation, str)
        if done:
            break
    assert done and reward == 1.0 and env.compute_final_reward() == 1.0 and info["no_reward"] is False
    env.close()


# --- --preset agile: one sample per step (verl, SkyRL, rLLM) ----------------------------


KEEP_REASONING_RULE = "{%- if loop.index0 > ns.last_query_index %}"


@pytest.fixture(scope="module")
def qwen3_keeping_reasoning(tmp_path_factory):
    """The real Qwen3 tokenizer with its chat template's rule that drops the reasoning of
    every turn before the last user message replaced by ``true`` (docs/agile.md: with the
    stock template no earlier turn keeps reasoning, so a window would not show in the
    tokens). Both sides use it: the trainer's tokenizer (transformers) and swerve's
    ``run.tokenizer`` (its Rust template engine)."""
    from transformers import AutoTokenizer

    source = qwen3_directory()
    directory = tmp_path_factory.mktemp("qwen3-keep-reasoning")
    config = json.loads((source / "tokenizer_config.json").read_text())
    assert KEEP_REASONING_RULE in config["chat_template"]
    config["chat_template"] = config["chat_template"].replace(KEEP_REASONING_RULE, "{%- if true %}")
    (directory / "tokenizer_config.json").write_text(json.dumps(config))
    shutil.copy(source / "tokenizer.json", directory / "tokenizer.json")
    return directory, AutoTokenizer.from_pretrained(str(directory))


def agile_options(directory, id):
    """``--preset agile`` with swerve's own tokenizer: each step's ``info["prompt_ids"]``
    and ``info["sample"]`` are then swerve's ids of the windowed context. The reasoning
    window is drawn from the trajectory ``id``: fixed, so a failure repeats."""
    return {"presets": ["agile"], "set": {"run.tokenizer": str(directory)}, "id": id}


class AgileServer(ReplayServer):
    """The replay model's calls in SWE-AGILE's structure (reasoning, digest, call), as a
    token-in/token-out server: it records the prompt ids it was sent and the ids (and
    logprobs, distinct per step) it gave."""

    def __init__(self, tokenizer, instance_id):
        calls = swerve.replay_turns(DEMOS / f"{instance_id}.json", presets=["agile"])
        replies = [
            f"<think>\nreasoning {k}: what call {k} is for\n</think>\n<reasoning_digest>\ndigest {k}\n</reasoning_digest>\n{call}"
            for k, call in enumerate(calls)
        ]
        super().__init__(tokenizer, replies)
        self.outputs = []

    async def generate(self, prompt_ids, sampling_params, request_id):
        self.prompts.append(list(prompt_ids))
        k = len(self.outputs)
        ids = self.tokenizer.encode(self.replies.pop(0), add_special_tokens=False) + [self.tokenizer.convert_tokens_to_ids("<|im_end|>")]
        logprobs = [-0.01 * (k + 1)] * len(ids)
        self.outputs.append((ids, logprobs))
        return list(ids), list(logprobs)


class SwerveIds:
    """What swerve itself gave: the opening's and each step's ``prompt_ids`` (its own
    rendering of the next prompt) and each step's ``sample``."""

    def __init__(self):
        self.opening, self.infos = None, []

    def prompts(self):
        """Swerve's ids of the prompt each step answered."""
        return [self.opening["prompt_ids"]] + [info["prompt_ids"] for info in self.infos[:-1]]

    def messages(self):
        return [self.opening["messages"]] + [info["messages"] for info in self.infos[:-1]]


class RecordingAsyncEnv(swerve.AsyncEnv):
    def __init__(self, task, seen, **options):
        super().__init__(task, **options)
        self.seen = seen

    async def reset(self):
        self.seen.opening = await super().reset()
        return self.seen.opening

    async def step(self, action):
        step = await super().step(action)
        self.seen.infos.append(step.info)
        return step


def check_windowed_samples(seen, server, prompt_ids, response_ids, logprobs=None):
    """The samples' prompt ids are swerve's ids of each step's windowed context, their
    response ids (and logprobs) the ones the server gave; and the context was windowed."""
    swerve_prompts = seen.prompts()
    assert len(prompt_ids) == len(response_ids) == len(swerve_prompts) == len(server.outputs) >= 8
    window = seen.opening["reasoning_window"]
    assert window in (1, 2, 3, 4)
    for k, (ids, response) in enumerate(zip(prompt_ids, response_ids)):
        assert swerve_prompts[k] is not None
        assert ids == swerve_prompts[k], f"step {k}: {len(ids)} prompt ids, swerve's windowed context is {len(swerve_prompts[k])}"
        assert ids == seen.infos[k]["sample"]["prompt_ids"] == server.prompts[k]
        assert response == server.outputs[k][0] == seen.infos[k]["sample"]["response_ids"]
        if logprobs is not None:
            assert logprobs[k] == server.outputs[k][1]
    # The history was rewritten: past the window, earlier replies lose their reasoning, in
    # swerve's messages and in the samples' tokens (past the system prompt's, which names the
    # tag, the only <think> are the window's).
    think = server.tokenizer.convert_tokens_to_ids("<think>")
    opening = prompt_ids[0].count(think)
    for k, messages in enumerate(seen.messages()):
        replies = [message.get("content") or "" for message in messages if message["role"] == "assistant"]
        assert len(replies) == k and all("<reasoning_digest>" in reply for reply in replies)
        assert sum("<think>" in reply for reply in replies) == min(window, k)
        assert prompt_ids[k].count(think) - opening == min(window, k), f"step {k}"
    assert len(prompt_ids) > window + 1


def test_verl_step_wise_episode_under_agile_gives_swerve_windowed_prompts(tasks, qwen3_keeping_reasoning):
    from swerve.integrations import verl

    directory, tokenizer = qwen3_keeping_reasoning
    task = task_by_id(tasks, "swerve-examples__calc-1")
    server, seen = AgileServer(tokenizer, task.instance_id), SwerveIds()
    env = RecordingAsyncEnv(task, seen, **agile_options(directory, f"{task.instance_id}__agile"))
    steps = asyncio.run(verl.run_step_wise_episode(env, tokenizer, server.generate, prompt_length=16384, response_length=4096))
    outputs = [verl_output_model()(**fields) for fields in steps]
    check_windowed_samples(
        seen,
        server,
        [output.prompt_ids for output in outputs],
        [output.response_ids for output in outputs],
        [output.response_logprobs for output in outputs],
    )
    assert all(output.reward_score == 1.0 and output.extra_fields["resolved"] for output in outputs)
    assert all(output.response_mask == [1] * len(output.response_ids) for output in outputs)
    assert [output.extra_fields["is_last_step"] for output in outputs] == [False] * (len(outputs) - 1) + [True]
    assert len({output.extra_fields["trajectory_id"] for output in outputs}) == 1


def test_verl_agent_loop_refuses_a_rewritten_history(tasks):
    from swerve.integrations import verl

    tokenizer = qwen3_tokenizer()
    task = task_by_id(tasks, "swerve-examples__calc-1")
    server = AgileServer(tokenizer, task.instance_id)
    with pytest.raises(swerve.SwerveError, match="rewrites the history.*run_step_wise_episode"):
        asyncio.run(verl.run_episode(swerve.AsyncEnv(task, presets=["agile"]), tokenizer, server.generate, prompt_length=16384, response_length=32768))
    assert server.prompts == []


def test_skyrl_step_wise_trajectory_under_agile_gives_swerve_windowed_prompts(tasks, qwen3_keeping_reasoning):
    from swerve.integrations import skyrl

    directory, tokenizer = qwen3_keeping_reasoning
    task = task_by_id(tasks, "swerve-examples__envfile-1")
    server, seen = AgileServer(tokenizer, task.instance_id), SwerveIds()
    env = RecordingAsyncEnv(task, seen, **agile_options(directory, f"{task.instance_id}__agile"))
    trajectory = asyncio.run(skyrl.run_step_wise_trajectory(env, tokenizer, server.generate, repetition_id=3))
    assert trajectory["reward"] == 1.0 and trajectory["metrics"]["resolved"] == 1.0
    output = skyrl.step_wise_output([trajectory])
    check_windowed_samples(seen, server, output["prompt_token_ids"], output["response_ids"], output["rollout_logprobs"])
    assert output["is_last_step"] == [False] * (len(output["is_last_step"]) - 1) + [True]
    assert output["rewards"][-1][-1] == 1.0 and not any(any(rewards) for rewards in output["rewards"][:-1])
    assert {(t.instance_id, t.repetition_id) for t in output["trajectory_ids"]} == {(task.instance_id, 3)}


def test_skyrl_text_env_refuses_a_rewritten_history():
    from swerve.integrations import skyrl

    env = skyrl.SwerveTextEnv({"tasks": str(TASKS), "presets": ["agile"]}, {"task_id": "swerve-examples__envfile-1"})
    with pytest.raises(swerve.SwerveError, match="SkyRL's generator only appends.*run_step_wise_trajectory"):
        env.init([])


def test_rllm_step_wise_episode_under_agile_gives_swerve_windowed_prompts(tasks, qwen3_keeping_reasoning):
    from swerve.integrations import rllm

    directory, tokenizer = qwen3_keeping_reasoning
    task = task_by_id(tasks, "swerve-examples__wrapline-1")
    server, seen = AgileServer(tokenizer, task.instance_id), SwerveIds()

    class RecordingEnv(rllm.SwerveRllmEnv):
        def reset(self):
            instruction, info = super().reset()
            seen.opening = {**self.opening, **info}
            return instruction, info

        def step(self, action):
            observation, reward, done, info = super().step(action)
            seen.infos.append(info)
            return observation, reward, done, info

    env = RecordingEnv(task, **agile_options(directory, f"{task.instance_id}__agile"))
    trajectory = asyncio.run(rllm.run_step_wise_episode(env, tokenizer, server.generate))
    steps = trajectory.steps
    check_windowed_samples(
        seen,
        server,
        [step.prompt_ids for step in steps],
        [step.response_ids for step in steps],
        [step.logprobs for step in steps],
    )
    # Each step's chat_completions are the windowed context swerve gave for it.
    assert [step.chat_completions for step in steps] == seen.messages()
    assert trajectory.reward == 1.0 and all(step.reward == 1.0 for step in steps)
    assert steps[-1].done and not any(step.done for step in steps[:-1])


def test_openrlhf_agent_instance_refuses_a_rewritten_history():
    from swerve.integrations import openrlhf

    AgentInstance = openrlhf.agent_instance_class(tasks=str(TASKS), tokenizer=qwen3_tokenizer(), presets=["agile"])
    instance = AgentInstance()
    with pytest.raises(swerve.SwerveError, match="OpenRLHF's multi-turn executor only appends"):
        asyncio.run(instance.reset({"observation": "", "label": "swerve-examples__envfile-1"}))
