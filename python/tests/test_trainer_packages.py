"""The verl, OpenRLHF and rLLM integrations driven through the trainers' own released code,
installed from the real packages (pinned in scripts/python-tests.sh; docs/python.md), with the
replay model served token-in/token-out on loopback.

None of the three installs whole on this CPU machine, and the tests say exactly what is
missing:

- torch: PyPI's torch for Linux x86-64 is the CUDA build (its nvidia-* wheels come to some
  6 GB), and it is the only torch PyPI has; verl and OpenRLHF are installed with ``--no-deps``
  (also leaving out ray, vllm, deepspeed, flash-attn, tensordict, hydra).
- verl: ``verl/experimental/agent_loop/agent_loop.py`` imports torch, ray, tensordict and
  hydra at its top (and ``verl/__init__.py`` tensordict), so it cannot be imported: the
  classes the adapter hands verl (``AgentLoopOutput``, ``AgentLoopMetrics``,
  ``DictConfigWrap``, and ``TokenOutput`` of ``verl/workers/rollout/replica.py``) are compiled
  from the installed package's own source, those class definitions alone
  (``conftest.real_definitions``). ``AgentLoopBase`` cannot be: its ``__init__`` builds verl's
  continuous-token builder (torch). So ``SwerveAgentLoop`` runs on its fallback base, built
  with the keyword arguments verl's worker passes (read from the installed source's
  ``hydra.utils.instantiate`` call). scripts/loop.sh runs the same verl tests in its venv,
  which has torch (and ray, tensordict, hydra): there verl's module imports, the classes are
  verl's own, and ``SwerveAgentLoop`` is a real ``AgentLoopBase``, built by its ``__init__``
  with an OmegaConf configuration as verl's worker holds it.
- OpenRLHF: ``openrlhf/utils/agent.py`` (``AgentInstanceBase``, ``AgentExecutorBase``,
  ``MultiTurnAgentExecutor``) needs only aiohttp and ``openrlhf.utils.logging_utils``, but its
  package's ``openrlhf/utils/__init__.py`` imports ``math_utils`` (sympy, pylatexenc) and
  ``utils`` (torch, for ``get_strategy`` and ``get_tokenizer``). The fixture imports the real
  ``agent.py`` and ``logging_utils.py`` with the ``openrlhf`` and ``openrlhf.utils`` package
  initializers not run (as OpenRLHF's own ``tests/test_agent.py`` loads ``agent.py``), and
  checks that the initializer does fail here. The executor's own loop runs unchanged; its one
  use of torch on this path, the tokenizer's ``return_tensors="pt"``, is answered with numpy
  arrays of the same ids (:class:`NumpyTensors`).
- rLLM: not on PyPI. Installed from a source checkout with ``--no-deps`` when
  ``RLLM_SOURCE`` is given to scripts/python-tests.sh (its ``rllm.agents``, ``rllm.types``
  and ``rllm.environments`` need pydantic and click only); otherwise its tests are skipped,
  saying so.
"""

import ast
import asyncio
import importlib
import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import swerve
from conftest import TASKS, package_root, real_definitions, task_by_id, verl_definitions
from test_integrations import ReplayServer, qwen3_tokenizer, replay_replies


LEFT_OUT = {"torch", "tensordict", "ray", "hydra", "vllm", "deepspeed", "sympy", "pylatexenc"}
"""The dependencies of verl and OpenRLHF not installed (``--no-deps``), first among them torch."""


def missing_for(module):
    """The left-out dependency importing ``module`` fails for (the reason it is not imported
    whole here), or ``None`` if it imports; the package's half-imported modules are dropped
    from ``sys.modules`` again (the installed ones it loaded on the way, numpy say, stay)."""
    package = module.split(".")[0]
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as error:
        missing = error.name.split(".")[0]
        return missing if missing in LEFT_OUT else f"unexpected: {error.name}"
    finally:
        for name in [name for name in sys.modules if name == package or name.startswith(package + ".")]:
            del sys.modules[name]
    return None


# --- verl 0.9.1 ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def verl_classes():
    """verl's classes: imported from verl itself where its agent loop imports (a venv with
    torch, ray, tensordict and hydra, as scripts/loop.sh makes), and ``SwerveAgentLoop`` is
    then a real ``AgentLoopBase``; else compiled from the installed source."""
    missing = missing_for("verl.experimental.agent_loop.agent_loop")
    if missing is None:
        from types import SimpleNamespace

        from verl.experimental.agent_loop import agent_loop
        from verl.workers.rollout.replica import TokenOutput

        from swerve.integrations import verl

        assert issubclass(verl.SwerveAgentLoop, agent_loop.AgentLoopBase)
        return SimpleNamespace(
            AgentLoopOutput=agent_loop.AgentLoopOutput,
            AgentLoopMetrics=agent_loop.AgentLoopMetrics,
            DictConfigWrap=agent_loop.DictConfigWrap,
            TokenOutput=TokenOutput,
        )
    # verl's package imports tensordict (verl.protocol) before the module's own torch, ray, hydra.
    assert missing in LEFT_OUT
    return verl_definitions()


def verl_instantiate_keywords():
    """The keyword arguments verl's ``AgentLoopWorker._run_agent_loop`` builds an agent loop
    with (its ``hydra.utils.instantiate(config=..., ...)`` call, in the installed source)."""
    path = package_root("verl") / "experimental" / "agent_loop" / "agent_loop.py"
    calls = [
        node
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "hydra.utils.instantiate"
        and any(keyword.arg == "trainer_config" for keyword in node.keywords)
    ]
    assert len(calls) == 1, f"{path}: {len(calls)} agent-loop instantiate calls"
    return {keyword.arg for keyword in calls[0].keywords} - {"config"}


class VerlServerManager:
    """verl's ``LLMServerClient.generate(request_id, *, prompt_ids, sampling_params, ...)``
    → ``TokenOutput``, answering the replay model's replies on loopback."""

    def __init__(self, server, token_output):
        self.server, self.token_output, self.calls = server, token_output, []

    async def generate(self, request_id, *, prompt_ids, sampling_params, image_data=None, **kwargs):
        self.calls.append((request_id, dict(sampling_params)))
        ids, logprobs = await self.server.generate(prompt_ids, sampling_params, request_id)
        return self.token_output(token_ids=ids, log_probs=logprobs, stop_reason="completed")


def test_verl_agent_loop_runs_as_verls_worker_builds_it_and_validates_as_agent_loop_output(tmp_path, tasks, verl_classes):
    from swerve.integrations import verl

    tokenizer = qwen3_tokenizer()
    task = task_by_id(tasks, "swerve-examples__calc-1")
    server = ReplayServer(tokenizer, replay_replies(task.instance_id))
    manager = VerlServerManager(server, verl_classes.TokenOutput)
    config = {
        "actor_rollout_ref": {"rollout": {"prompt_length": 8192, "response_length": 32768}},
        "data": {},
        "swerve": {"tasks": str(TASKS)},
    }
    try:  # verl's worker holds its configuration as an OmegaConf DictConfig (hydra's).
        from omegaconf import OmegaConf

        config = OmegaConf.create(config)
    except ImportError:  # not installed (the Python suite): the fallback base reads dicts alike
        pass
    # What AgentLoopWorker._run_agent_loop passes to hydra.utils.instantiate.
    arguments = {
        "trainer_config": verl_classes.DictConfigWrap(config=config),
        "server_manager": manager,
        "tokenizer": tokenizer,
        "processor": None,
        "hf_model_type": "qwen3",
        "dataset_cls": None,
        "data_config": verl_classes.DictConfigWrap(config["data"]),
        "tools": None,
    }
    assert set(arguments) == verl_instantiate_keywords()
    loop = verl.SwerveAgentLoop(**arguments)
    fields = asyncio.run(loop.run({"temperature": 1.0}, extra_info={"task_id": task.instance_id}, raw_prompt=[]))
    # With verl importable, run() returns verl's own AgentLoopOutput (what its worker expects).
    output = fields if isinstance(fields, verl_classes.AgentLoopOutput) else verl_classes.AgentLoopOutput(**fields)
    assert isinstance(output.metrics, verl_classes.AgentLoopMetrics)
    assert output.reward_score == 1.0 and output.extra_fields["resolved"] and output.extra_fields["submitted"]
    assert len(output.response_ids) == len(output.response_mask) == len(output.response_logprobs)
    assert output.response_logprobs[: output.response_mask.index(0)] == [-0.5] * output.response_mask.index(0)
    assert manager.calls and all(params == {"temperature": 1.0} for _, params in manager.calls)
    # Token-in/token-out: the last request is the prompt and the response so far.
    assert server.prompts[-1] == output.prompt_ids + output.response_ids[: len(server.prompts[-1]) - len(output.prompt_ids)]
    # What verl's AgentLoopOutput.as_dict (its postprocessing) reads, set and typed.
    dumped = output.model_dump(exclude_unset=True)
    assert {"prompt_ids", "response_ids", "response_mask", "reward_score", "metrics", "extra_fields"} <= set(dumped)


def test_verl_step_wise_outputs_validate_as_agent_loop_outputs(tasks, verl_classes):
    from swerve.integrations import verl

    tokenizer = qwen3_tokenizer()
    task = task_by_id(tasks, "swerve-examples__durations-1")
    server = ReplayServer(tokenizer, replay_replies(task.instance_id))
    steps = asyncio.run(verl.run_step_wise_episode(swerve.AsyncEnv(task), tokenizer, server.generate, prompt_length=8192, response_length=4096))
    outputs = [verl_classes.AgentLoopOutput(**fields) for fields in steps]
    assert [output.prompt_ids for output in outputs] == server.prompts
    assert all(output.reward_score == 1.0 and output.num_turns == 2 for output in outputs)
    assert [output.extra_fields["is_last_step"] for output in outputs] == [False] * (len(outputs) - 1) + [True]


def test_verl_agent_loop_output_rejects_what_verl_rejects(verl_classes):
    """The compiled class is verl's model, not a permissive dict: metrics are required."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="metrics"):
        verl_classes.AgentLoopOutput(prompt_ids=[1], response_ids=[2], response_mask=[1])


# --- OpenRLHF 0.11.2 ----------------------------------------------------------------------


@pytest.fixture
def openrlhf_agent():
    """``openrlhf.utils.agent``, the real module, imported with the ``openrlhf`` and
    ``openrlhf.utils`` package initializers not run (``openrlhf/utils/__init__.py`` imports
    ``math_utils``, sympy and pylatexenc, and ``utils``, torch); removed from ``sys.modules``
    afterwards."""
    assert missing_for("openrlhf.utils") in LEFT_OUT
    root = package_root("openrlhf")
    for name, directory in (("openrlhf", root), ("openrlhf.utils", root / "utils")):
        # The package as the import system makes it, its __init__.py not executed.
        spec = importlib.util.spec_from_file_location(name, directory / "__init__.py", submodule_search_locations=[str(directory)])
        sys.modules[name] = importlib.util.module_from_spec(spec)
    try:
        agent = importlib.import_module("openrlhf.utils.agent")
        assert Path(agent.__file__) == root / "utils" / "agent.py"
        yield agent
    finally:
        for name in [name for name in sys.modules if name == "openrlhf" or name.startswith("openrlhf.")]:
            del sys.modules[name]


class NumpyTensors:
    """The policy's tokenizer as OpenRLHF's executor calls it, giving numpy arrays where the
    executor asks for torch tensors (``return_tensors="pt"``, then ``[0].tolist()``): torch is
    not installed (module docstring). The ids are the tokenizer's own."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def __call__(self, *args, return_tensors=None, **kwargs):
        assert return_tensors == "pt"
        return self.tokenizer(*args, return_tensors="np", **kwargs)

    def __getattr__(self, name):
        return getattr(self.tokenizer, name)


class VllmLoopback:
    """OpenRLHF's ``LLMRayActor.generate(prompt_token_ids, sampling_params,
    multi_modal_data=None)`` → a vLLM ``RequestOutput`` (``outputs[0]``: ``token_ids``,
    ``text`` decoded without special tokens, ``finish_reason``, ``logprobs`` as
    ``{token: Logprob}`` per token), answering the replay model's replies cut to
    ``max_tokens``."""

    def __init__(self, tokenizer, replies):
        self.tokenizer, self.replies, self.prompts, self.budgets, self.outputs = tokenizer, list(replies), [], [], []

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        self.prompts.append(list(prompt_token_ids))
        self.budgets.append(sampling_params.max_tokens)
        ids = self.tokenizer.encode(self.replies.pop(0), add_special_tokens=False) + [self.tokenizer.convert_tokens_to_ids("<|im_end|>")]
        finish = "length" if len(ids) > sampling_params.max_tokens else "stop"
        ids = ids[: sampling_params.max_tokens]
        self.outputs.append(ids)
        output = SimpleNamespace(
            token_ids=ids,
            text=self.tokenizer.decode(ids, skip_special_tokens=True),
            finish_reason=finish,
            logprobs=[{token: SimpleNamespace(logprob=-0.25)} for token in ids],
        )
        return SimpleNamespace(outputs=[output])


def openrlhf_row_prompt(cli, tmp_path, tokenizer, task_id):
    """The prompt OpenRLHF's PromptDataset makes of ``swerve data prompts --format openrlhf``'s
    row (``--data.apply_chat_template``): OpenRLHF's own ``preprocess_data`` (compiled from
    ``openrlhf/datasets/prompts_dataset.py``, whose module imports torch's Dataset)."""
    import copy

    out = tmp_path / "openrlhf.jsonl"
    done = cli("data", "prompts", "--tasks", TASKS, "--format", "openrlhf", "--out", out, task_id)
    assert done.returncode == 0, done.stderr
    row = json.loads(out.read_text())
    preprocess, _ = real_definitions(
        package_root("openrlhf") / "datasets" / "prompts_dataset.py", ["preprocess_data", "_str_to_content_list"], {"copy": copy}
    )
    return preprocess(row, input_key="prompt", label_key="label", apply_chat_template=tokenizer.apply_chat_template)


def write_agent_file(tmp_path, **options):
    """The ``--train.agent_func_path`` file, as docs/python.md gives it."""
    path = tmp_path / "swerve_agent.py"
    arguments = ", ".join(f"{key}={value!r}" for key, value in {"tasks": str(TASKS), **options}.items())
    path.write_text(
        "from swerve.integrations.openrlhf import agent_executor_class\n"
        "from test_integrations import qwen3_tokenizer\n"
        f"AgentExecutor = agent_executor_class({arguments}, tokenizer=qwen3_tokenizer())\n"
    )
    return path


def load_agent_executor(agent, path):
    """What OpenRLHF's ``_load_agent_executor`` (openrlhf/trainer/ray/vllm_engine.py, which
    imports vllm and ray) does with ``--train.agent_func_path``: the file's ``AgentExecutor``,
    an ``AgentExecutorBase`` subclass, built with no arguments."""
    spec = importlib.util.spec_from_file_location("agent_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert hasattr(module, "AgentExecutor"), "Agent module must contain AgentExecutor class"
    assert issubclass(module.AgentExecutor, agent.AgentExecutorBase)
    return module.AgentExecutor()


def recording(executor):
    """Records the agent instances the executor creates (one per sample)."""
    instances = []

    class Recorded(executor.agent_instance_cls):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            instances.append(self)

    executor.agent_instance_cls = Recorded
    return instances


def test_openrlhf_multi_turn_executor_runs_the_agent_file(cli, tmp_path, openrlhf_agent):
    tokenizer = qwen3_tokenizer()
    task_id = "swerve-examples__envfile-1"
    prompt, label = openrlhf_row_prompt(cli, tmp_path, tokenizer, task_id)
    assert label == task_id and prompt.endswith("<|im_start|>assistant\n")
    executor = load_agent_executor(openrlhf_agent, write_agent_file(tmp_path))
    assert isinstance(executor, openrlhf_agent.MultiTurnAgentExecutor)
    assert issubclass(executor.AgentInstance, openrlhf_agent.AgentInstanceBase)
    instances = recording(executor)
    engine = VllmLoopback(tokenizer, replay_replies(task_id))
    sampling = SimpleNamespace(max_tokens=None, logprobs=1)  # vLLM SamplingParams' two fields the executor reads
    result = asyncio.run(
        executor.execute(prompt, label, sampling, max_length=32768, hf_tokenizer=NumpyTensors(tokenizer), llm_engine=engine)
    )
    assert result["reward"] == 1.0 and result["scores"] == 1.0 and not result["truncated"]
    assert type(result["scores"]) is float and type(result["reward"]) is float  # plain floats through Ray
    assert result["extra_logs"] == {"format_error": 0.0, "truncated": 0.0, "resolved": 1.0, "no_reward": 0.0}
    (instance,) = instances
    assert instance.closed and instance.steps == len(engine.outputs) == len(result["action_ranges"])
    # The sequence OpenRLHF trains on: the prompt's ids, then each action's ids as sampled,
    # each followed by swerve's observation as chat-template text, tokenized.
    tokens = result["observation_tokens"]
    assert tokens[: result["action_ranges"][0][0]] == tokenizer(prompt, add_special_tokens=False)["input_ids"]
    for (start, end), ids in zip(result["action_ranges"], engine.outputs):
        assert tokens[start:end] == ids
    for (_, end), (start, _) in zip(result["action_ranges"], result["action_ranges"][1:]):
        feedback = tokenizer.decode(tokens[end:start])
        assert feedback.startswith("<|im_start|>user\n") and feedback.endswith("<|im_start|>assistant\n")
    assert result["action_ranges"][-1][1] == len(tokens)
    assert engine.prompts[-1] == tokens[: result["action_ranges"][-1][0]]
    assert result["rollout_log_probs"].count(-0.25) == sum(end - start for start, end in result["action_ranges"])


def test_openrlhf_executor_budget_spent_ends_the_episode_graded_and_closed(cli, tmp_path, openrlhf_agent):
    """Left to the executor, a spent budget stops the loop without a word to the instance:
    the instance ends the episode first (graded as it stands, workspace closed)."""
    tokenizer = qwen3_tokenizer()
    task_id = "swerve-examples__envfile-1"
    prompt, label = openrlhf_row_prompt(cli, tmp_path, tokenizer, task_id)
    executor = load_agent_executor(openrlhf_agent, write_agent_file(tmp_path))
    instances = recording(executor)
    engine = VllmLoopback(tokenizer, replay_replies(task_id))
    max_length = len(tokenizer(prompt, add_special_tokens=False)["input_ids"]) + 700
    result = asyncio.run(
        executor.execute(
            prompt, label, SimpleNamespace(max_tokens=None, logprobs=None), max_length=max_length, hf_tokenizer=NumpyTensors(tokenizer), llm_engine=engine
        )
    )
    (instance,) = instances
    assert instance.closed, "the executor stopped on its budget and the workspace was left open"
    assert result["extra_logs"]["truncated"] == 1.0 and result["extra_logs"]["resolved"] == 0.0
    assert result["reward"] == 0.0 and len(result["observation_tokens"]) <= max_length
    assert 1 <= len(engine.outputs) < len(replay_replies(task_id))


def test_openrlhf_agent_instance_under_agile_is_refused_and_closed(openrlhf_agent):
    from swerve.integrations import openrlhf

    AgentInstance = openrlhf.agent_instance_class(tasks=str(TASKS), tokenizer=qwen3_tokenizer(), presets=["agile"])
    assert issubclass(AgentInstance, openrlhf_agent.AgentInstanceBase)
    instance = AgentInstance()
    with pytest.raises(swerve.SwerveError, match="OpenRLHF's multi-turn executor only appends"):
        asyncio.run(instance.reset({"observation": "", "label": "swerve-examples__envfile-1"}))
    assert instance.closed


# --- rLLM (from source: not on PyPI) --------------------------------------------------------


def rllm_or_skip():
    if importlib.util.find_spec("rllm") is None:
        pytest.skip("rLLM is not installed: it is not on PyPI; give scripts/python-tests.sh RLLM_SOURCE=<an rLLM checkout>")


def test_rllm_env_and_agent_are_rllms_classes_and_run_an_episode(tasks):
    rllm_or_skip()
    from rllm.agents.agent import Action, BaseAgent, Step, Trajectory
    from rllm.environments.base.base_env import BaseEnv

    from swerve.integrations import rllm

    assert issubclass(rllm.SwerveRllmEnv, BaseEnv) and issubclass(rllm.SwerveRllmAgent, BaseAgent)
    env = rllm.SwerveRllmEnv.from_dict({"tasks": str(TASKS), "task_id": "swerve-examples__wrapline-1"})
    assert isinstance(env, BaseEnv) and env.is_multithread_safe()
    env.idx = 3  # BaseEnv's batch index
    assert env.idx == 3
    tokenizer = qwen3_tokenizer()
    server = ReplayServer(tokenizer, replay_replies("swerve-examples__wrapline-1"))
    agent = rllm.SwerveRllmAgent()
    assert isinstance(agent.update_from_model("x"), Action)
    trajectory = asyncio.run(rllm.run_step_wise_episode(env, tokenizer, server.generate, agent=agent))
    assert isinstance(trajectory, Trajectory) and trajectory is agent.trajectory
    assert all(type(step) is Step for step in trajectory.steps)
    assert trajectory.reward == 1.0 and [step.reward for step in trajectory.steps] == [1.0] * len(trajectory.steps)
    assert [step.prompt_ids for step in trajectory.steps] == server.prompts
    assert all(step.logprobs == [-0.5] * len(step.response_ids) for step in trajectory.steps)
    assert trajectory.steps[-1].done and agent.get_current_state() is trajectory.steps[-1]
    # A step's info is rLLM's Step.metadata.
    assert all(step.metadata["no_reward"] is False for step in trajectory.steps)
    # rLLM's own serialization of the trajectory holds what the engine trains on.
    dumped = trajectory.model_dump()
    assert [step["response_ids"] for step in dumped["steps"]] == [step.response_ids for step in trajectory.steps]


def test_rllm_multi_turn_workflow_runs_the_env_and_agent(tasks, monkeypatch):
    """rLLM's own ``MultiTurnWorkflow`` (``rllm/workflows/multi_turn_workflow.py``) over the
    two, as its trainer runs it: the environment built once from ``env_args``, reset with the
    dataset row (twice: ``Workflow.reset`` and ``MultiTurnWorkflow.reset``), stepped with
    rLLM's ``Action``; the model a loopback ``RolloutEngine`` rendering ``chat_completions``
    with the policy's chat template."""
    rllm_or_skip()
    from concurrent.futures import ThreadPoolExecutor

    from rllm.engine.rollout.rollout_engine import ModelOutput, RolloutEngine
    from rllm.types import Episode
    from rllm.workflows.multi_turn_workflow import MultiTurnWorkflow
    from rllm.workflows.workflow import TerminationReason

    from swerve.integrations import _steps, rllm

    tokenizer = qwen3_tokenizer()
    task_id = "swerve-examples__wrapline-1"
    server = ReplayServer(tokenizer, replay_replies(task_id))

    class Loopback(RolloutEngine):
        async def _get_model_response(self, messages, **kwargs):
            prompt_ids = _steps.prompt_ids(tokenizer, messages)
            ids, logprobs = await server.generate(prompt_ids, {}, kwargs.get("application_id", ""))
            text = tokenizer.decode(ids, skip_special_tokens=True)
            return ModelOutput(
                text=text, content=text, prompt_ids=prompt_ids, completion_ids=ids, logprobs=logprobs,
                prompt_length=len(prompt_ids), completion_length=len(ids), finish_reason="stop",
            )

    resets = []
    env_reset = swerve.Env.reset

    def counted_reset(self):
        resets.append(self.task.instance_id)
        return env_reset(self)

    monkeypatch.setattr(swerve.Env, "reset", counted_reset)
    with ThreadPoolExecutor(2) as executor:
        workflow = MultiTurnWorkflow(
            agent_cls=rllm.SwerveRllmAgent,
            env_cls=rllm.SwerveRllmEnv,
            env_args={"tasks": str(TASKS)},
            max_steps=50,
            rollout_engine=Loopback(),
            executor=executor,
        )
        episode = asyncio.run(workflow.run_with_termination_handling(task={"task_id": task_id}, uid="swerve-1"))
    workflow.env.close()
    assert isinstance(episode, Episode)
    assert episode.termination_reason == TerminationReason.ENV_DONE, episode.metadata
    assert resets == [task_id], "one workspace per episode"
    (trajectory,) = episode.trajectories
    assert trajectory.reward == 1.0 and episode.is_correct
    # Each step's chat_completions are the prompt the model was sent.
    assert [_steps.prompt_ids(tokenizer, step.chat_completions) for step in trajectory.steps] == server.prompts
    assert trajectory.steps[-1].done and trajectory.steps[-1].reward == 1.0
