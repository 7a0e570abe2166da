"""verl: an async, token-in/token-out agent loop over :class:`swerve.AsyncEnv`.

:func:`run_episode` is the loop: it renders swerve's opening once with the tokenizer's chat
template, then each turn sends the accumulated ids (prompt + every response and observation
token so far) to ``generate``, decodes the reply for swerve to read, and appends the
observation's tokens as verl's ``ToolAgentLoop`` builds them (the observation message
rendered with the generation prompt, the template's empty-conversation prefix cut). Nothing
is ever re-rendered, so the ids the policy is trained on are the ids it produced. The
response is cut to ``response_length``; the result has every field of verl's
``AgentLoopOutput`` (``metrics`` included), and swerve's own counts in ``extra_fields``.

Where the context policy rewrites the history each turn (a SWE-AGILE reasoning window,
``--preset agile``), one growing sequence cannot hold the episode: :func:`run_episode`
refuses it, and :func:`run_step_wise_episode` gives one ``AgentLoopOutput``'s fields per
step instead (the prompt ids of that step's windowed context, the response ids the policy
produced, the trajectory's reward broadcast to every step). verl's ``AgentLoopBase.run``
returns one output per prompt row, which the trainer joins to the row, so
:class:`SwerveAgentLoop` cannot hand verl several: it refuses such a preset with an error
saying so. Use the step-wise samples in a trainer (or a fork of verl's) that takes a
variable number of samples per row.

:class:`SwerveAgentLoop` is the ``AgentLoopBase`` subclass verl instantiates (register it
with ``agent_loop_config_path``; see docs/python.md); rows come from ``swerve data prompts
--format verl`` (``agent_name: swerve``, ``extra_info.task_id``).

When grading fails for the machinery's reason there is no reward: ``reward_score`` is 0
with every response token masked out (``response_mask`` all 0, so the sample trains
nothing) and ``extra_fields["no_reward"]`` is true.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import swerve

from . import _steps
from ._steps import Generate

AGENT_NAME = "swerve"

_ids = _steps.ids


def observation_ids(tokenizer: Any, message: Dict[str, Any]) -> List[int]:
    """The tokens of an observation message as verl's ``ToolAgentLoop`` appends them: the
    message rendered with the generation prompt, minus the template's prefix for an empty
    conversation (its default system prompt, if any). A template that reads every
    message's ``role`` (SmolLM2's) cannot render verl's empty message ``{}``: the
    observation is then what the message and the generation prompt add to a conversation
    of one empty system message."""
    from jinja2 import TemplateError

    try:
        prefix = _ids(tokenizer.apply_chat_template([{}], add_generation_prompt=False, tokenize=True))
        rendered = _ids(tokenizer.apply_chat_template([message], add_generation_prompt=True, tokenize=True))
    except TemplateError:
        base = [{"role": "system", "content": ""}]
        prefix = _ids(tokenizer.apply_chat_template(base, add_generation_prompt=False, tokenize=True))
        rendered = _ids(tokenizer.apply_chat_template(base + [message], add_generation_prompt=True, tokenize=True))
        if rendered[: len(prefix)] != prefix:
            raise swerve.SwerveError(
                "the chat template renders a system message differently when a message follows it: "
                "observation tokens cannot be appended to one growing sequence with this template"
            )
    return rendered[len(prefix) :]


async def run_episode(
    env: swerve.AsyncEnv,
    tokenizer: Any,
    generate: Generate,
    *,
    prompt_length: int,
    response_length: int,
    sampling_params: Optional[Dict[str, Any]] = None,
    request_id: Optional[str] = None,
    trajectory: Optional[swerve.PathLike] = None,
) -> Dict[str, Any]:
    """Runs one episode of ``env`` (reset, turns until done, evaluate, close) and returns the
    fields of verl's ``AgentLoopOutput``. With ``trajectory``, the graded episode is written
    there as a swerve trajectory (:meth:`swerve.Env.evaluate`)."""
    sampling_params = dict(sampling_params or {})
    request_id = request_id or env.id
    opening = await env.reset()
    try:
        if _steps.rewrites_history(opening):
            raise _steps.windowed_error(
                opening,
                "verl's agent loop (run_episode, SwerveAgentLoop)",
                "keeps one growing token sequence, returned as one AgentLoopOutput per prompt row",
                "train step-wise with swerve.integrations.verl.run_step_wise_episode (one AgentLoopOutput "
                "per step, the reward broadcast) in a trainer that takes several samples per row",
            )
        prompt_ids = _steps.prompt_ids(tokenizer, opening["messages"], opening["tools"])
        if len(prompt_ids) > prompt_length:
            raise swerve.SwerveError(
                f"task {opening['instance_id']}: the opening is {len(prompt_ids)} tokens, more than "
                f"data.max_prompt_length / rollout.prompt_length ({prompt_length}): raise it"
            )
        response_ids: List[int] = []
        response_mask: List[int] = []
        logprobs: List[Optional[float]] = []
        generating = tooling = 0.0
        assistant_turns = user_turns = 0
        format_errors = 0
        max_steps = int(opening["max_steps"])
        truncated = submitted = False
        while assistant_turns < max_steps:
            started = time.perf_counter()
            output_ids, output_logprobs = await generate(prompt_ids + response_ids, sampling_params, request_id)
            generating += time.perf_counter() - started
            assistant_turns += 1
            response_ids += output_ids
            response_mask += [1] * len(output_ids)
            logprobs += list(output_logprobs) if output_logprobs is not None else [None] * len(output_ids)
            if len(response_ids) >= response_length:
                truncated = True
                break
            started = time.perf_counter()
            step = await env.step(tokenizer.decode(output_ids, skip_special_tokens=True))
            tooling += time.perf_counter() - started
            format_errors += bool(step.info.get("format_error"))
            if step.done:
                submitted = True
                break
            observation = observation_ids(tokenizer, step.info["message"])
            user_turns += 1
            response_ids += observation
            response_mask += [0] * len(observation)
            logprobs += [0.0] * len(observation)
            if len(response_ids) >= response_length:
                truncated = True
                break
        evaluation = await env.evaluate(trajectory)
    finally:
        await env.close()
    response_ids = response_ids[:response_length]
    response_mask = response_mask[:response_length]
    logprobs = logprobs[:response_length]
    no_reward = evaluation.reward is None
    if no_reward:
        response_mask = [0] * len(response_mask)
    has_logprobs = all(value is not None for value, mask in zip(logprobs, response_mask) if mask)
    return {
        "prompt_ids": prompt_ids,
        "response_ids": response_ids,
        "response_mask": response_mask,
        "response_logprobs": [float(value or 0.0) for value in logprobs] if has_logprobs and logprobs else None,
        "reward_score": 0.0 if no_reward else float(evaluation.reward),
        "num_turns": user_turns + assistant_turns + 1,
        "metrics": {"generate_sequences": generating, "tool_calls": tooling},
        "extra_fields": {
            "instance_id": evaluation.instance_id,
            "resolved": evaluation.resolved,
            "no_reward": no_reward,
            "truncated": truncated,
            "submitted": submitted,
            "format_errors": format_errors,
        },
    }


async def run_step_wise_episode(
    env: swerve.AsyncEnv,
    tokenizer: Any,
    generate: Generate,
    *,
    prompt_length: int,
    response_length: int,
    sampling_params: Optional[Dict[str, Any]] = None,
    request_id: Optional[str] = None,
) -> List[Dict[str, Any]]:
    """Runs one episode of ``env`` step-wise and returns one ``AgentLoopOutput``'s fields
    per step: ``prompt_ids`` the prompt swerve gave for that step (under a reasoning
    window, the windowed context) rendered by ``tokenizer``'s chat template with the
    generation prompt, ``response_ids`` the ids ``generate`` returned (cut to
    ``response_length``), ``response_mask`` all 1 (all 0 without reward),
    ``response_logprobs`` as sampled, ``reward_score`` the trajectory's reward on every
    step (verl's advantage estimators then broadcast it), ``num_turns`` 2. ``extra_fields``
    has ``step``, ``steps``, ``is_last_step``, ``trajectory_id`` (the request id, shared by
    the episode's steps), ``instance_id``, ``resolved``, ``no_reward``, ``truncated``,
    ``submitted`` and ``format_error``. A step whose prompt is longer than
    ``prompt_length`` is not sent: the episode ends there (``truncated``). Works for any
    context policy; it is the only way to train a history rewritten each turn."""
    request_id = request_id or env.id
    episode = await _steps.run_steps(
        env, tokenizer, generate, sampling_params=sampling_params, request_id=request_id, prompt_length=prompt_length
    )
    if not episode["steps"]:
        raise swerve.SwerveError(
            f"task {episode['opening']['instance_id']}: the opening is longer than "
            f"data.max_prompt_length / rollout.prompt_length ({prompt_length}): raise it"
        )
    evaluation = episode["evaluation"]
    no_reward = evaluation.reward is None
    outputs = []
    for sample in episode["steps"]:
        response_ids = sample["response_ids"][:response_length]
        logprobs = sample["logprobs"][:response_length] if sample["logprobs"] is not None else None
        outputs.append(
            {
                "prompt_ids": sample["prompt_ids"],
                "response_ids": response_ids,
                "response_mask": [0 if no_reward else 1] * len(response_ids),
                "response_logprobs": logprobs,
                "reward_score": 0.0 if no_reward else float(evaluation.reward),
                "num_turns": 2,
                "metrics": {"generate_sequences": sample["generate_seconds"], "tool_calls": sample["tool_seconds"]},
                "extra_fields": {
                    "step": sample["step"],
                    "steps": len(episode["steps"]),
                    "is_last_step": sample["is_last_step"],
                    "trajectory_id": request_id,
                    "instance_id": evaluation.instance_id,
                    "resolved": evaluation.resolved,
                    "no_reward": no_reward,
                    "truncated": episode["truncated"] or len(sample["response_ids"]) > response_length,
                    "submitted": episode["done"],
                    "format_error": sample["format_error"],
                },
            }
        )
    return outputs


def _agent_loop_base() -> type:
    try:
        from verl.experimental.agent_loop.agent_loop import AgentLoopBase  # type: ignore[import-not-found]
    except ImportError:
        return object
    return AgentLoopBase


def _config(config: Any, path: Sequence[str], default: Any) -> Any:
    for key in path:
        if config is None:
            return default
        config = config.get(key) if isinstance(config, dict) else getattr(config, key, None)
    return default if config is None else config


class SwerveAgentLoop(_agent_loop_base()):  # type: ignore[misc]
    """verl's ``AgentLoopBase`` over swerve. Its settings come from the trainer
    configuration's ``swerve`` section: ``tasks`` (the task file), ``config``, ``presets``,
    ``set``; lengths from ``actor_rollout_ref.rollout.prompt_length`` / ``response_length``."""

    def __init__(self, trainer_config: Any, server_manager: Any, tokenizer: Any, **kwargs: Any) -> None:
        base = _agent_loop_base()
        if base is not object:
            super().__init__(trainer_config, server_manager, tokenizer, **kwargs)
        config = getattr(trainer_config, "config", trainer_config)
        self.server_manager = server_manager
        self.tokenizer = tokenizer
        self.prompt_length = int(_config(config, ["actor_rollout_ref", "rollout", "prompt_length"], 4096))
        self.response_length = int(_config(config, ["actor_rollout_ref", "rollout", "response_length"], 16384))
        section = _config(config, ["swerve"], {})
        self.tasks_file = str(_config(section, ["tasks"], ""))
        if not self.tasks_file:
            raise swerve.SwerveError("SwerveAgentLoop: set swerve.tasks (the task file) in the trainer configuration")
        self.env_options = {
            "presets": list(_config(section, ["presets"], []) or []),
            "set": dict(_config(section, ["set"], {}) or {}),
        }
        self.env_config = _config(section, ["config"], None)
        self.tasks = {task.instance_id: task for task in swerve.load_tasks(self.tasks_file)}

    async def _generate(self, prompt_ids: List[int], sampling_params: Dict[str, Any], request_id: str) -> Tuple[List[int], Optional[List[float]]]:
        output = await self.server_manager.generate(request_id=request_id, prompt_ids=prompt_ids, sampling_params=sampling_params)
        return list(output.token_ids), getattr(output, "log_probs", None)

    async def run(self, sampling_params: Dict[str, Any], **kwargs: Any) -> Any:
        extra_info = kwargs.get("extra_info") or {}
        task_id = extra_info.get("task_id")
        if task_id not in self.tasks:
            raise swerve.SwerveError(f"{self.tasks_file}: no task with instance_id {task_id!r} (the row's extra_info.task_id)")
        env = swerve.AsyncEnv(self.tasks[task_id], self.env_config, **self.env_options)
        fields = await run_episode(
            env,
            self.tokenizer,
            self._generate,
            prompt_length=self.prompt_length,
            response_length=self.response_length,
            sampling_params=sampling_params,
        )
        try:
            from verl.experimental.agent_loop.agent_loop import AgentLoopOutput  # type: ignore[import-not-found]
        except ImportError:
            return fields
        return AgentLoopOutput(**fields)
