"""OpenRLHF: a multi-turn ``AgentInstance`` over :class:`swerve.Env` for
``--train.agent_func_path``, and the prompt rows' keys (``swerve data prompts --format
openrlhf``: ``--input_key prompt --label_key label --apply_chat_template``).

OpenRLHF creates one agent instance per sample, with no arguments, and works in text: the
prompt arrives rendered with the chat template, each action is the decoded generation, and
the feedback is text appended to the context. The file ``agent_func_path`` names builds the
class once::

    # swerve_agent.py
    from swerve.integrations.openrlhf import agent_instance_class
    AgentInstance = agent_instance_class(tasks="tasks.jsonl", tokenizer="Qwen/Qwen2.5-Coder-7B-Instruct")

The feedback is the observation message rendered with the same chat template and its
generation prompt (the template's empty-conversation prefix cut). The reward comes on the
last step; when grading failed for the machinery's reason the reward is 0 and
``extra_logs["no_reward"]`` is 1 (filter those samples out).

OpenRLHF's executor only appends the feedback to the running text, so a context policy that
rewrites the history each turn (a SWE-AGILE reasoning window, ``--preset agile``) cannot be
trained through it: ``reset()`` refuses such a preset.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

import swerve

from . import _steps


def feedback_text(tokenizer: Any, message: Dict[str, Any]) -> str:
    """An observation message as chat-template text to append after the model's turn."""
    prefix = tokenizer.apply_chat_template([{}], add_generation_prompt=False, tokenize=False)
    rendered = tokenizer.apply_chat_template([message], add_generation_prompt=True, tokenize=False)
    return rendered[len(prefix) :] if rendered.startswith(prefix) else rendered


def _agent_instance_base() -> type:
    try:
        from openrlhf.utils.agent import AgentInstanceBase  # type: ignore[import-not-found]
    except ImportError:
        return object
    return AgentInstanceBase


def agent_instance_class(
    tasks: str,
    tokenizer: Any,
    config: Optional[str] = None,
    presets: Sequence[str] = (),
    set: Optional[Dict[str, Any]] = None,
) -> type:
    """The ``AgentInstance`` class for OpenRLHF. ``tokenizer`` is the policy's tokenizer (or
    its name or directory, loaded with ``transformers``); the row's label is the task id."""
    if isinstance(tokenizer, str):
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(tokenizer)
    by_id = {task.instance_id: task for task in swerve.load_tasks(tasks)}
    options = {"presets": list(presets), "set": dict(set or {})}

    class AgentInstance(_agent_instance_base()):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.env: Optional[swerve.AsyncEnv] = None
            self.steps = 0
            self.max_steps = 0

        async def reset(self, states: Dict[str, Any], **kwargs: Any) -> Dict[str, Any]:
            label = states.get("label")
            if label not in by_id:
                raise swerve.SwerveError(f"{tasks}: no task with instance_id {label!r} (the row's label)")
            self.env = swerve.AsyncEnv(by_id[label], config, **options)
            opening = await self.env.reset()
            if _steps.rewrites_history(opening):
                await self.env.close()
                raise _steps.windowed_error(
                    opening,
                    "OpenRLHF's multi-turn executor",
                    "only appends each feedback to the running prompt",
                    "train this preset with verl, SkyRL or rLLM step-wise (docs/python.md)",
                )
            self.max_steps = int(opening["max_steps"])
            # The prompt is the row's (swerve's opening, rendered by OpenRLHF).
            return {"observation": states["observation"]}

        async def step(self, states: Dict[str, Any], **kwargs: Any) -> Dict[str, Any]:
            assert self.env is not None, "reset() first"
            self.steps += 1
            step = await self.env.step(states["action_text"])
            done = step.done or self.steps >= self.max_steps
            reward, logs = 0.0, {"format_error": float(bool(step.info.get("format_error")))}
            feedback = ""
            if done:
                evaluation = await self.env.evaluate()
                await self.env.close()
                logs.update(resolved=float(evaluation.resolved), no_reward=float(evaluation.reward is None))
                reward = evaluation.reward or 0.0
            else:
                feedback = feedback_text(tokenizer, step.info["message"])
            return {
                "rewards": reward,
                "scores": reward,
                "environment_feedback": feedback,
                "done": done,
                "sampling_params": states.get("sampling_params"),
                "extra_logs": logs,
            }

    return AgentInstance
