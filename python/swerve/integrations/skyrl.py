"""SkyRL: a skyrl-gym text environment over :class:`swerve.Env`, and step-wise generator
outputs keyed by ``TrajectoryID`` objects.

Register the environment once per process (SkyRL's workers import the module named in
``environment.env_class`` setups; call :func:`register` in your entry point)::

    from swerve.integrations import skyrl as swerve_skyrl
    swerve_skyrl.register()          # skyrl_gym.make("swerve", env_config=..., extras=...)

Prompt rows (``swerve data prompts --format skyrl``) carry ``env_class: "swerve"`` and the
task id; SkyRL passes the row's other columns to the environment as ``extras``. The
environment's configuration (``env_config``) names the task file and swerve settings:
``{"tasks": "tasks.jsonl", "config": None, "presets": [], "set": {}}``.

The reward is given on the last step: 1 resolved, 0 not; when grading failed for the
machinery's reason the reward is 0 but ``metadata["no_reward"]`` is true, and
:func:`step_wise_output` leaves such trajectories out.

Where the context policy rewrites the history each turn (a SWE-AGILE reasoning window,
``--preset agile``), SkyRL's generator cannot drive :class:`SwerveTextEnv`: it keeps the
chat history itself and only appends the observations a ``BaseTextEnv`` returns, so the
windowed context never reaches the policy. ``init()`` refuses such a preset. Train it
step-wise from your own generator instead: :func:`run_step_wise_trajectory` runs an episode
sending each step's windowed context (swerve's ``info["messages"]``, rendered by the
policy's chat template) and :func:`step_wise_output` turns the trajectories into SkyRL's
step-wise ``GeneratorOutput`` (the reward on the last step, which SkyRL's step-wise
training broadcasts to the trajectory's other steps).
"""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import swerve

from . import _steps
from ._steps import Generate

ENV_CLASS = "swerve"


def register(env_class: str = ENV_CLASS) -> None:
    """Registers :class:`SwerveTextEnv` with skyrl-gym as ``env_class`` (once)."""
    import skyrl_gym

    if env_class not in skyrl_gym.registry:
        skyrl_gym.register(id=env_class, entry_point="swerve.integrations.skyrl:SwerveTextEnv")


def _config_value(config: Any, key: str, default: Any) -> Any:
    if config is None:
        return default
    if isinstance(config, Mapping):
        return config.get(key, default)
    return getattr(config, key, default)


_TASKS: Dict[str, Dict[str, swerve.Task]] = {}


def _task(tasks_file: str, task_id: str) -> swerve.Task:
    by_id = _TASKS.get(tasks_file)
    if by_id is None:
        by_id = {task.instance_id: task for task in swerve.load_tasks(tasks_file)}
        _TASKS[tasks_file] = by_id
    try:
        return by_id[task_id]
    except KeyError:
        raise swerve.SwerveError(f"{tasks_file}: no task with instance_id {task_id!r} (from the row's task_id)") from None


def _base_text_env() -> type:
    from skyrl_gym.envs.base_text_env import BaseTextEnv

    return BaseTextEnv


class SwerveTextEnv(_base_text_env()):  # type: ignore[misc]
    """A skyrl-gym ``BaseTextEnv``: text in (the model's reply, read with swerve's
    configured tool-call format), chat messages out."""

    def __init__(self, env_config: Any = None, extras: Optional[Dict[str, Any]] = None) -> None:
        super().__init__()
        extras = dict(extras or {})
        tasks_file = extras.get("tasks") or _config_value(env_config, "tasks", None)
        if not tasks_file:
            raise swerve.SwerveError("SwerveTextEnv: env_config.tasks (the task file) is not set")
        task_id = extras.get("task_id") or extras.get("instance_id")
        if not task_id:
            raise swerve.SwerveError("SwerveTextEnv: the row has no task_id (write prompts with `swerve data prompts --format skyrl`)")
        settings = dict(_config_value(env_config, "set", {}) or {})
        self.env = swerve.Env(
            _task(str(tasks_file), str(task_id)),
            _config_value(env_config, "config", None),
            presets=list(_config_value(env_config, "presets", []) or []),
            set=settings,
            id=extras.get("session_id") or f"{task_id}-{uuid.uuid4().hex[:12]}",
        )
        self.max_turns = int(_config_value(env_config, "max_turns", 0) or 0)
        self.format_errors = 0
        self.evaluation: Optional[swerve.Evaluation] = None

    def init(self, prompt: List[Dict[str, Any]]) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
        opening = self.env.reset()
        if _steps.rewrites_history(opening):
            self.env.close()
            raise _steps.windowed_error(
                opening,
                "SkyRL's generator",
                "only appends a BaseTextEnv's observations to the chat history it keeps",
                "train step-wise with swerve.integrations.skyrl.run_step_wise_trajectory and step_wise_output "
                "from your own generator",
            )
        if not self.max_turns:
            self.max_turns = int(opening["max_steps"])
        # swerve's own opening (the row's prompt is the same, written by `data prompts`).
        return opening["messages"], {"tools": opening["tools"], "swerve_env_id": opening["id"]}

    def step(self, action: str) -> Dict[str, Any]:
        self.turns += 1
        step = self.env.step(action)
        if step.info.get("format_error"):
            self.format_errors += 1
        done = step.done or self.turns >= self.max_turns
        reward = 0.0
        metadata: Dict[str, Any] = {"format_error": step.info.get("format_error"), "call": step.info.get("call")}
        if done:
            self.evaluation = self.env.evaluate()
            reward = self.evaluation.reward if self.evaluation.reward is not None else 0.0
            metadata.update(
                resolved=self.evaluation.resolved,
                no_reward=self.evaluation.reward is None,
                report=self.evaluation.report,
            )
        message = step.info["message"]
        observation = {"role": message.get("role", "user"), "content": message.get("content") or ""}
        if message.get("tool_call_id"):
            observation["tool_call_id"] = message["tool_call_id"]
        return {"observations": [] if done else [observation], "reward": reward, "done": done, "metadata": metadata}

    def get_metrics(self) -> Dict[str, Any]:
        evaluation = self.evaluation
        return {
            "resolved": float(bool(evaluation and evaluation.resolved)),
            "no_reward": float(bool(evaluation and evaluation.reward is None)),
            "format_errors": self.format_errors,
            "turns": self.turns,
        }

    def close(self) -> None:
        self.env.close()


def trajectory_id(instance_id: str, repetition_id: int) -> Any:
    """SkyRL's ``TrajectoryID(instance_id, repetition_id)`` when ``skyrl`` is importable,
    else an object with the same two attributes (what the trainer reads)."""
    try:
        from skyrl.train.generators.base import TrajectoryID  # type: ignore[import-not-found]
    except ImportError:
        try:
            from skyrl_train.generators.base import TrajectoryID  # type: ignore[import-not-found]
        except ImportError:
            return SimpleNamespace(instance_id=instance_id, repetition_id=repetition_id)
    return TrajectoryID(instance_id=instance_id, repetition_id=repetition_id)


def session_id(uid: str, repetition: int, global_step: Optional[int], phase: str = "train") -> str:
    """A session id unique across epochs and between training and evaluation: SkyRL's row
    ``uid`` is the row index, which repeats every epoch."""
    step = "x" if global_step is None else str(global_step)
    return f"{uid}__{repetition}__s{step}{phase}-{uuid.uuid4().hex[:8]}"


async def run_step_wise_trajectory(
    env: swerve.AsyncEnv,
    tokenizer: Any,
    generate: Generate,
    *,
    repetition_id: int = 0,
    sampling_params: Optional[Dict[str, Any]] = None,
    session_id: Optional[str] = None,
    max_prompt_length: Optional[int] = None,
) -> Dict[str, Any]:
    """Runs one episode of ``env`` step-wise, for a generator of your own (SkyRL's
    ``InferenceEngineClient`` behind ``generate``: prompt ids in, response ids and logprobs
    out): each step's prompt is the one swerve gives (under a reasoning window, the
    windowed context) rendered by ``tokenizer``'s chat template with the generation
    prompt, and its response ids are the ids ``generate`` returned. A prompt longer than
    ``max_prompt_length`` ends the episode before it is sent.

    Returns the trajectory as :func:`step_wise_output` takes it: ``instance_id``,
    ``repetition_id``, ``steps`` (``prompt_ids``, ``response_ids``, ``loss_mask``,
    ``logprobs``), ``reward`` (``None`` without reward) and ``metrics`` (``resolved``,
    ``no_reward``, ``format_errors``, ``turns``, ``truncated``)."""
    episode = await _steps.run_steps(
        env,
        tokenizer,
        generate,
        sampling_params=sampling_params,
        request_id=session_id or env.id,
        prompt_length=max_prompt_length,
    )
    evaluation = episode["evaluation"]
    return {
        "instance_id": evaluation.instance_id,
        "repetition_id": repetition_id,
        "steps": [
            {key: sample[key] for key in ("prompt_ids", "response_ids", "loss_mask", "logprobs")}
            for sample in episode["steps"]
        ],
        "reward": episode["reward"],
        "metrics": {
            "resolved": float(evaluation.resolved),
            "no_reward": float(evaluation.reward is None),
            "format_errors": episode["format_errors"],
            "turns": len(episode["steps"]),
            "truncated": episode["truncated"],
        },
    }


def step_wise_output(trajectories: Sequence[Mapping[str, Any]]) -> Dict[str, List[Any]]:
    """SkyRL's step-wise ``GeneratorOutput`` lists from trajectories given as
    ``{"instance_id", "repetition_id", "steps": [{"prompt_ids", "response_ids",
    "loss_mask", "logprobs"}], "reward"}``: ``trajectory_ids`` are ``TrajectoryID`` objects,
    missing logprobs stay ``None`` (never 0.0, which would mean probability 1), the reward
    sits on the last token of the last step, and trajectories whose reward is ``None`` (no
    reward: grading failed for the machinery's reason) are left out and counted in
    ``skipped_no_reward``."""
    output: Dict[str, List[Any]] = {
        "prompt_token_ids": [],
        "response_ids": [],
        "loss_masks": [],
        "rewards": [],
        "rollout_logprobs": [],
        "trajectory_ids": [],
        "is_last_step": [],
    }
    skipped = 0
    any_logprobs = all(step.get("logprobs") is not None for trajectory in trajectories for step in trajectory["steps"])
    for trajectory in trajectories:
        if trajectory.get("reward") is None:
            skipped += 1
            continue
        steps = trajectory["steps"]
        for index, step in enumerate(steps):
            last = index == len(steps) - 1
            response = list(step["response_ids"])
            rewards = [0.0] * len(response)
            if last and response:
                rewards[-1] = float(trajectory["reward"])
            output["prompt_token_ids"].append(list(step["prompt_ids"]))
            output["response_ids"].append(response)
            output["loss_masks"].append(list(step.get("loss_mask") or [1] * len(response)))
            output["rewards"].append(rewards)
            output["rollout_logprobs"].append(list(step["logprobs"]) if any_logprobs else None)
            output["trajectory_ids"].append(trajectory_id(trajectory["instance_id"], int(trajectory["repetition_id"])))
            output["is_last_step"].append(last)
    if not any_logprobs:
        output["rollout_logprobs"] = None  # type: ignore[assignment]
    output["skipped_no_reward"] = [skipped]
    return output
