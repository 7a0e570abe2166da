"""rLLM: an environment with the ``BaseEnv`` interface of rLLM's SWE environments
(``rllm/environments/swe/swe.py``, tag v0.2.1, the DeepSWE era): ``reset()`` →
``(instruction, info)``, ``step(action)`` → ``(observation, reward, done, info)``,
``compute_final_reward()``, ``from_dict(extra_info)`` and ``is_multithread_safe()``.

rLLM's ``SWEAgent`` writes its own system prompt and expects the raw problem statement from
``reset()``: that is what ``reset()`` returns (swerve's rendered opening is in
``info["messages"]``). Actions in R2E-Gym's ``<function=…>`` XML are read by swerve's
default ``xml`` format. The reward is given when the episode ends; when grading failed for
the machinery's reason it is ``None`` in ``info["reward"]`` and 0 in the tuple, with
``info["no_reward"]`` true.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import swerve


class SwerveRllmEnv:
    """One task's environment for rLLM's agent execution engine."""

    def __init__(self, task: swerve.Task, config: Optional[str] = None, **options: Any) -> None:
        self.env = swerve.Env(task, config, **options)
        self.evaluation: Optional[swerve.Evaluation] = None

    @staticmethod
    def from_dict(extra_info: Dict[str, Any]) -> "SwerveRllmEnv":
        """From a dataset row's ``extra_info``: ``tasks`` (the task file) and ``task_id``,
        plus optional ``config``, ``presets`` and ``set``."""
        tasks = {task.instance_id: task for task in swerve.load_tasks(extra_info["tasks"])}
        task_id = extra_info["task_id"]
        if task_id not in tasks:
            raise swerve.SwerveError(f"{extra_info['tasks']}: no task with instance_id {task_id!r}")
        return SwerveRllmEnv(
            tasks[task_id],
            extra_info.get("config"),
            presets=list(extra_info.get("presets") or []),
            set=dict(extra_info.get("set") or {}),
        )

    @staticmethod
    def is_multithread_safe() -> bool:
        return True

    def reset(self) -> Tuple[str, Dict[str, Any]]:
        opening = self.env.reset()
        self.evaluation = None
        return self.env.task.problem_statement, {"messages": opening["messages"], "tools": opening["tools"]}

    def step(self, action: Any) -> Tuple[str, float, bool, Dict[str, Any]]:
        if not isinstance(action, (str, dict)):
            action = str(action)
        observation, _, done, info = self.env.step(action)
        reward = 0.0
        if done:
            reward = self.compute_final_reward()
            info.update(reward=self.evaluation.reward if self.evaluation else None, no_reward=bool(self.evaluation and self.evaluation.reward is None))
        return observation, reward, done, info

    def compute_final_reward(self) -> float:
        if self.evaluation is None:
            self.evaluation = self.env.evaluate()
        return self.evaluation.reward or 0.0

    def close(self) -> None:
        self.env.close()
