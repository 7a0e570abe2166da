"""rLLM: an environment with the ``BaseEnv`` interface of rLLM's SWE environments
(``rllm/environments/swe/swe.py``, tag v0.2.1, the DeepSWE era): ``reset()`` →
``(instruction, info)``, ``step(action)`` → ``(observation, reward, done, info)``,
``compute_final_reward()``, ``from_dict(extra_info)`` and ``is_multithread_safe()``. rLLM's
workflows (``MultiTurnWorkflow`` on its main branch) build the environment once from
``env_args`` and reset it with each dataset row (``reset(task=row)``), then step it with rLLM's
``Action``: ``SwerveRllmEnv(tasks="tasks.jsonl")`` opens the row's ``task_id`` on reset.

rLLM's ``SWEAgent`` writes its own system prompt and expects the raw problem statement from
``reset()``: that is what ``reset()`` returns (swerve's rendered opening is in
``info["messages"]``). Actions in R2E-Gym's ``<function=…>`` XML are read by swerve's
default ``xml`` format. The reward is given when the episode ends; when grading failed for
the machinery's reason it is ``None`` in ``info["reward"]`` and 0 in the tuple, with
``info["no_reward"]`` true.

rLLM's ``SWEAgent`` keeps its own history, and so sends the whole conversation every turn.
Where swerve's context policy rewrites the history (a SWE-AGILE reasoning window, ``--preset
agile``), pair the environment with :class:`SwerveRllmAgent` instead: an agent with the
``BaseAgent`` interface of ``rllm/agents/agent.py`` (v0.2.1, and ``Step``'s token fields
as rLLM's main branch has them; ``update_from_env``,
``update_from_model``, ``reset``, ``chat_completions``, ``trajectory``,
``get_current_state``) whose ``chat_completions`` are the prompt swerve gives each step
(``info["messages"]``: the windowed context), one ``Step`` per step, for rLLM's step-wise
advantage (``stepwise_advantage.enable``, mode ``broadcast``: the trajectory's reward on
every step). :func:`run_step_wise_episode` is rLLM's engine loop over the two with a
token-in/token-out ``generate``: each step's ``prompt_ids`` are the windowed context
rendered by the policy's chat template, its ``response_ids`` and ``logprobs`` what the
policy produced (rLLM's ``Step`` token fields, as its engine fills them).

Where rLLM is importable its classes are used: :class:`SwerveRllmEnv` is a ``BaseEnv``
(``rllm/environments/base/base_env.py``), :class:`SwerveRllmAgent` a ``BaseAgent`` and its
steps, actions and trajectory rLLM's pydantic ``Step``, ``Action`` and ``Trajectory``
(``rllm.types``, re-exported by ``rllm/agents/agent.py``; a step's ``info`` is its
``metadata``). Without rLLM, stand-ins with the same fields. rLLM is not on PyPI: the tests
check these classes against rLLM's main branch installed from source (``RLLM_SOURCE``, see
docs/python.md); its ``rllm.agents`` and ``rllm.environments`` need only pydantic and click,
not torch.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import swerve

from . import _steps
from ._steps import Generate


def _env_base() -> type:
    try:
        from rllm.environments.base.base_env import BaseEnv  # type: ignore[import-not-found]
    except ImportError:
        return object
    return BaseEnv


class SwerveRllmEnv(_env_base()):  # type: ignore[misc]
    """One task's environment for rLLM's agent execution engine (an rLLM ``BaseEnv`` where
    rLLM is importable)."""

    def __init__(
        self, task: Optional[swerve.Task] = None, config: Optional[str] = None, *, tasks: Optional[str] = None, **options: Any
    ) -> None:
        """One task's environment (``task``); or, for rLLM's workflows, which build the
        environment once (``env_cls(**env_args)``) and reset it with each dataset row, the
        task file ``tasks`` whose row ``task_id`` :meth:`reset` opens. ``options`` are
        :class:`swerve.Env`'s (``presets``, ``set``, ...)."""
        self.config, self.options, self.tasks_file = config, options, tasks
        self._tasks: Dict[str, Dict[str, swerve.Task]] = {}
        self.env: Optional[swerve.Env] = swerve.Env(task, config, **options) if task is not None else None
        self.evaluation: Optional[swerve.Evaluation] = None
        self.opening: Dict[str, Any] = {}
        """What :meth:`swerve.Env.reset` gave (``messages``, ``tools``, ``reasoning_window``, ...)."""
        self._unstepped: Optional[Tuple[str, Dict[str, Any]]] = None

    @staticmethod
    def from_dict(extra_info: Dict[str, Any]) -> "SwerveRllmEnv":
        """From a dataset row's ``extra_info``: ``tasks`` (the task file) and ``task_id``,
        plus optional ``config``, ``presets`` and ``set``."""
        env = SwerveRllmEnv(
            None,
            extra_info.get("config"),
            tasks=extra_info["tasks"],
            presets=list(extra_info.get("presets") or []),
            set=dict(extra_info.get("set") or {}),
        )
        env.env = swerve.Env(env._task(extra_info), env.config, **env.options)
        return env

    def _task(self, row: Any) -> swerve.Task:
        """The task a dataset row names (``task_id``, in the row's ``tasks`` file or this
        environment's), or ``row`` itself if it is a :class:`swerve.Task`."""
        if isinstance(row, swerve.Task):
            return row
        if not isinstance(row, dict) or "task_id" not in row:
            raise swerve.SwerveError(f"SwerveRllmEnv.reset: the task must be a swerve.Task or a row with task_id, not {row!r}")
        file = row.get("tasks") or self.tasks_file
        if not file:
            raise swerve.SwerveError("SwerveRllmEnv: no task file: give tasks= (env_args) or the row's tasks")
        if file not in self._tasks:
            self._tasks[file] = {task.instance_id: task for task in swerve.load_tasks(file)}
        task_id = row["task_id"]
        if task_id not in self._tasks[file]:
            raise swerve.SwerveError(f"{file}: no task with instance_id {task_id!r}")
        return self._tasks[file][task_id]

    @staticmethod
    def is_multithread_safe() -> bool:
        return True

    def reset(self, task: Any = None, **kwargs: Any) -> Tuple[str, Dict[str, Any]]:
        """Opens the episode: ``(problem statement, info)``. ``task`` (rLLM's workflows pass
        the dataset row) switches to the task it names, closing the previous one. rLLM's
        ``Workflow.reset`` and ``MultiTurnWorkflow.reset`` both reset the environment with the
        same row: while the episode has not been stepped, a reset to the same task gives the
        same opening rather than a second workspace."""
        if task is not None:
            chosen = self._task(task)
            if self.env is not None and self.env.task.instance_id == chosen.instance_id and self._unstepped is not None:
                return self._unstepped
            if self.env is not None:
                self.env.close()
            self.env = swerve.Env(chosen, self.config, **self.options)
        if self.env is None:
            raise swerve.SwerveError("SwerveRllmEnv.reset: no task (give the environment a task, or reset it with a row)")
        self.opening = self.env.reset()
        self.evaluation = None
        opening = self.opening
        info = {"messages": opening["messages"], "tools": opening["tools"], "reasoning_window": opening["reasoning_window"]}
        self._unstepped = (self.env.task.problem_statement, info)
        return self._unstepped

    def step(self, action: Any) -> Tuple[str, float, bool, Dict[str, Any]]:
        """``action``: the reply (text, or an assistant message dict), or rLLM's ``Action``
        around one (rLLM's workflows step with the ``Action`` itself)."""
        assert self.env is not None, "reset() first"
        self._unstepped = None
        if not isinstance(action, (str, dict)) and hasattr(action, "action"):
            action = action.action
        if not isinstance(action, (str, dict)):
            action = str(action)
        observation, _, done, info = self.env.step(action)
        reward = 0.0
        if done:
            reward = self.compute_final_reward()
            info.update(reward=self.evaluation.reward if self.evaluation else None, no_reward=bool(self.evaluation and self.evaluation.reward is None))
        return observation, reward, done, info

    def compute_final_reward(self) -> float:
        assert self.env is not None, "reset() first"
        if self.evaluation is None:
            self.evaluation = self.env.evaluate()
        return self.evaluation.reward or 0.0

    def close(self) -> None:
        if self.env is not None:
            self.env.close()


@dataclass
class _Step:
    """rLLM's ``Step`` (``rllm/agents/agent.py``): the token fields first, as rLLM keeps them."""

    prompt_ids: List[int] = field(default_factory=list)
    response_ids: List[int] = field(default_factory=list)
    logprobs: List[float] = field(default_factory=list)
    chat_completions: List[Dict[str, Any]] = field(default_factory=list)
    observation: Any = None
    thought: str = ""
    action: Any = None
    model_response: str = ""
    info: Dict[str, Any] = field(default_factory=dict)
    reward: float = 0.0
    done: bool = False
    mc_return: float = 0.0
    advantage: Any = None


@dataclass
class _Action:
    """rLLM's ``Action``."""

    action: Any = None


@dataclass
class _Trajectory:
    """rLLM's ``Trajectory``."""

    task: Any = None
    steps: List[Any] = field(default_factory=list)
    reward: float = 0.0


def _rllm_types() -> Tuple[type, type, type]:
    try:
        from rllm.agents.agent import Action, Step, Trajectory  # type: ignore[import-not-found]
    except ImportError:
        return _Step, _Action, _Trajectory
    return Step, Action, Trajectory


def _agent_base() -> type:
    try:
        from rllm.agents.agent import BaseAgent  # type: ignore[import-not-found]
    except ImportError:
        return object
    return BaseAgent


class SwerveRllmAgent(_agent_base()):  # type: ignore[misc]
    """An rLLM agent that sends what swerve says to send: its ``chat_completions`` are the
    last ``info["messages"]`` the environment gave (the opening, then each step's next
    prompt under the context policy), so a history rewritten each turn reaches the policy
    as swerve renders it. Each model reply is one ``Step`` whose ``chat_completions`` are
    the prompt it answered. ``update_from_model(response, response_ids=, logprobs=,
    prompt_ids=)`` keeps the ids in the step's ``prompt_ids``, ``response_ids`` and
    ``logprobs`` (rLLM's token fields) and returns an ``Action`` whose
    ``action`` is the assistant message swerve reads, ids included."""

    def __init__(self, **kwargs: Any) -> None:
        self.reset()

    def reset(self) -> None:
        _, _, Trajectory = _rllm_types()
        self._trajectory = Trajectory()
        self._messages: List[Dict[str, Any]] = []

    @property
    def chat_completions(self) -> List[Dict[str, Any]]:
        return list(self._messages)

    @property
    def trajectory(self) -> Any:
        return self._trajectory

    def get_current_state(self) -> Any:
        return self._trajectory.steps[-1] if self._trajectory.steps else None

    def update_from_env(self, observation: Any, reward: float, done: bool, info: Dict[str, Any], **kwargs: Any) -> None:
        step = self.get_current_state()
        if step is not None and step.observation is None:
            step.observation, step.reward, step.done = observation, reward, done
            step.info.update(
                {key: info.get(key) for key in ("format_error", "exit_reason", "call") if key in info}
            )
        messages = info.get("messages")
        if messages is not None:
            self._messages = list(messages)
        elif not done:
            raise swerve.SwerveError("SwerveRllmAgent: the environment gave no messages (use SwerveRllmEnv)")

    def update_from_model(
        self,
        response: str,
        *,
        response_ids: Optional[List[int]] = None,
        logprobs: Optional[List[float]] = None,
        prompt_ids: Optional[List[int]] = None,
        **kwargs: Any,
    ) -> Any:
        Step, Action, _ = _rllm_types()
        action: Dict[str, Any] = {"content": response}
        tokens: Dict[str, Any] = {}
        if response_ids is not None:
            action["response_ids"] = tokens["response_ids"] = [int(token) for token in response_ids]
        if logprobs is not None:
            action["logprobs"] = tokens["logprobs"] = [float(value) for value in logprobs]
        if prompt_ids is not None:
            tokens["prompt_ids"] = [int(token) for token in prompt_ids]
        step = Step(
            chat_completions=self.chat_completions,
            model_response=response,
            action=action,
            **tokens,
        )
        self._trajectory.steps.append(step)
        return Action(action=action)


async def run_step_wise_episode(
    env: SwerveRllmEnv,
    tokenizer: Any,
    generate: Generate,
    *,
    agent: Optional[SwerveRllmAgent] = None,
    sampling_params: Optional[Dict[str, Any]] = None,
    request_id: Optional[str] = None,
) -> Any:
    """rLLM's agent-environment loop for one episode of ``env`` with ``agent`` (a new
    :class:`SwerveRllmAgent` by default), token-in/token-out: each step's prompt ids are
    ``agent.chat_completions`` (swerve's prompt for the step; under a reasoning window, the
    windowed context) rendered by ``tokenizer``'s chat template with the generation prompt,
    sent to ``generate``; the reply is decoded for swerve to read and its ids kept. Returns
    the agent's ``Trajectory``: one ``Step`` per step, each with its ``prompt_ids``,
    ``response_ids`` and ``logprobs``, and ``reward`` the trajectory's on
    every step (rLLM's ``broadcast`` step-wise advantage) and on the trajectory; ``None``
    without reward (grading failed for the machinery's reason). Closes ``env``."""
    agent = agent or SwerveRllmAgent()
    agent.reset()
    sampling_params = dict(sampling_params or {})
    try:
        observation, info = await asyncio.to_thread(env.reset)
        request_id = request_id or env.env.id
        agent.update_from_env(observation, 0.0, False, info)
        tools = info.get("tools") or None
        done = False
        while not done:
            prompt_ids = _steps.prompt_ids(tokenizer, agent.chat_completions, tools)
            ids, logprobs = await generate(prompt_ids, sampling_params, request_id)
            response = tokenizer.decode(list(ids), skip_special_tokens=True)
            action = agent.update_from_model(response, response_ids=ids, logprobs=logprobs, prompt_ids=prompt_ids)
            observation, reward, done, info = await asyncio.to_thread(env.step, action.action)
            agent.update_from_env(observation, reward, done, info)
        await asyncio.to_thread(env.compute_final_reward)
    finally:
        await asyncio.to_thread(env.close)
    reward = env.evaluation.reward if env.evaluation is not None else None
    trajectory = agent.trajectory
    for step in trajectory.steps:
        step.reward = reward
        step.info["no_reward"] = reward is None
    trajectory.reward = reward
    return trajectory
