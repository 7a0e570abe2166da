"""OpenRLHF: a multi-turn ``AgentInstance`` over :class:`swerve.Env`, the ``AgentExecutor``
that ``--train.agent_func_path`` loads, and the prompt rows' keys (``swerve data prompts
--format openrlhf``: ``--input_key prompt --label_key label --apply_chat_template``).

OpenRLHF (0.11) loads the file ``agent_func_path`` names, takes its ``AgentExecutor`` (an
``openrlhf.utils.agent.AgentExecutorBase`` subclass, built with no arguments) and calls its
``execute`` once per sample. Its ``MultiTurnAgentExecutor`` creates one agent instance per
sample, with no arguments, and works in text: the prompt arrives rendered with the chat
template, each action is the decoded generation, and the feedback is text appended to the
context. The file builds the classes once::

    # swerve_agent.py
    from swerve.integrations.openrlhf import agent_executor_class
    AgentExecutor = agent_executor_class(tasks="tasks.jsonl", tokenizer="Qwen/Qwen2.5-Coder-7B-Instruct")

(:func:`agent_instance_class` gives the ``AgentInstanceBase`` subclass alone, for an
executor of your own.)

The feedback is the observation message rendered with the same chat template and its
generation prompt (the template's empty-conversation prefix cut). The reward comes on the
last step as a :class:`Reward`, a float with ``.item()`` (the executor calls
``step_result["rewards"].item()``, as on the tensor OpenRLHF's examples return); when grading
failed for the machinery's reason the reward is 0 and ``extra_logs["no_reward"]`` is 1 (filter
those samples out).

The executor stops without telling the instance once its token budget (``max_len`` less the
running context) is spent: the instance would then neither grade nor close its workspace. So
``step()`` counts what the executor will have left (the ``sampling_params.max_tokens`` it was
given, less the action and the feedback, tokenized as the executor does) and, with fewer than
:data:`BUDGET_MARGIN` tokens left, ends the episode itself: graded as it stands, no feedback,
``extra_logs["truncated"]`` 1.

OpenRLHF's executor only appends the feedback to the running text, so a context policy that
rewrites the history each turn (a SWE-AGILE reasoning window, ``--preset agile``) cannot be
trained through it: ``reset()`` refuses such a preset.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

import swerve

from . import _steps

BUDGET_MARGIN = 16
"""Tokens of budget under which ``step()`` ends the episode rather than leave it to the
executor (the action's length is counted from its text, which may differ from the ids
sampled by a few tokens)."""


class Reward(float):
    """A reward the executor can call ``.item()`` on, as on a 0-d tensor."""

    def item(self) -> float:
        return float(self)


def feedback_text(tokenizer: Any, message: Dict[str, Any]) -> str:
    """An observation message as chat-template text to append after the model's turn."""
    prefix = tokenizer.apply_chat_template([{}], add_generation_prompt=False, tokenize=False)
    rendered = tokenizer.apply_chat_template([message], add_generation_prompt=True, tokenize=False)
    return rendered[len(prefix) :] if rendered.startswith(prefix) else rendered


def _token_count(tokenizer: Any, text: str) -> int:
    """Tokens of ``text`` as the executor counts them (no special tokens added)."""
    return len(_steps.ids(tokenizer(text, add_special_tokens=False))) if text else 0


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
    """The ``AgentInstance`` class for OpenRLHF (an ``AgentInstanceBase`` subclass where
    OpenRLHF is importable). ``tokenizer`` is the policy's tokenizer (or its name or
    directory, loaded with ``transformers``); the row's label is the task id."""
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
            self.closed = False
            """Whether the workspace was closed (the episode graded, or refused)."""

        async def reset(self, states: Dict[str, Any], **kwargs: Any) -> Dict[str, Any]:
            label = states.get("label")
            if label not in by_id:
                raise swerve.SwerveError(f"{tasks}: no task with instance_id {label!r} (the row's label)")
            self.env = swerve.AsyncEnv(by_id[label], config, **options)
            opening = await self.env.reset()
            if _steps.rewrites_history(opening):
                await self._close()
                raise _steps.windowed_error(
                    opening,
                    "OpenRLHF's multi-turn executor",
                    "only appends each feedback to the running prompt",
                    "train this preset with verl, SkyRL or rLLM step-wise (docs/python.md)",
                )
            self.max_steps = int(opening["max_steps"])
            # The prompt is the row's (swerve's opening, rendered by OpenRLHF).
            return {"observation": states["observation"]}

        async def _close(self) -> None:
            assert self.env is not None
            await self.env.close()
            self.closed = True

        async def step(self, states: Dict[str, Any], **kwargs: Any) -> Dict[str, Any]:
            assert self.env is not None, "reset() first"
            self.steps += 1
            action_text = states["action_text"]
            step = await self.env.step(action_text)
            done = step.done or self.steps >= self.max_steps
            logs = {"format_error": float(bool(step.info.get("format_error"))), "truncated": 0.0}
            feedback = "" if done else feedback_text(tokenizer, step.info["message"])
            budget = getattr(states.get("sampling_params"), "max_tokens", None)
            if not done and budget is not None:
                # The action's ids end with the end-of-turn token its text leaves out: + 1.
                left = int(budget) - (_token_count(tokenizer, action_text) + 1) - _token_count(tokenizer, feedback)
                if left < BUDGET_MARGIN:
                    done, feedback = True, ""
                    logs["truncated"] = 1.0
            reward = 0.0
            if done:
                evaluation = await self.env.evaluate()
                await self._close()
                logs.update(resolved=float(evaluation.resolved), no_reward=float(evaluation.reward is None))
                reward = evaluation.reward or 0.0
            return {
                "rewards": Reward(reward),
                # Goes into the sample the executor returns (through Ray): a plain float.
                "scores": float(reward),
                "environment_feedback": feedback,
                "done": done,
                "sampling_params": states.get("sampling_params"),
                "extra_logs": logs,
            }

    return AgentInstance


def agent_executor_class(
    tasks: str,
    tokenizer: Any,
    config: Optional[str] = None,
    presets: Sequence[str] = (),
    set: Optional[Dict[str, Any]] = None,
) -> type:
    """The ``AgentExecutor`` class the ``--train.agent_func_path`` file exports: OpenRLHF's
    ``MultiTurnAgentExecutor`` over :func:`agent_instance_class` (same arguments; its
    ``AgentInstance`` attribute), built with no arguments as OpenRLHF builds it. Needs
    OpenRLHF (``openrlhf.utils.agent``)."""
    from openrlhf.utils.agent import MultiTurnAgentExecutor  # type: ignore[import-not-found]

    instance_class = agent_instance_class(tasks, tokenizer, config=config, presets=presets, set=set)

    class AgentExecutor(MultiTurnAgentExecutor):  # type: ignore[misc]
        AgentInstance = instance_class

        def __init__(self) -> None:
            super().__init__(instance_class)

    return AgentExecutor
