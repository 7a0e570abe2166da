"""Step-wise episodes, shared by the trainer integrations: one training sample per step.

Where the context policy rewrites the history each turn (a SWE-AGILE reasoning window,
``--preset agile`` or ``agile-upstream``: the opening's ``reasoning_window`` is set), the
prompt of step k+1 does not extend the prompt and reply of step k (older reasoning is cut),
so a token-in/token-out trainer cannot keep one growing token sequence. Each step is then
its own sample: its prompt ids are swerve's windowed context (``info["messages"]``)
rendered by the policy's chat template with the generation prompt, its response ids are
the ids the policy produced, and the trajectory's reward is broadcast to every step (as
rLLM's step-wise advantage and SkyRL's step-wise training do).

:func:`run_steps` is that loop over :class:`swerve.AsyncEnv` and a token-in/token-out
``generate``; each integration shapes its result into its trainer's records.
"""

from __future__ import annotations

import time
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import swerve

Generate = Callable[[List[int], Dict[str, Any], str], Awaitable[Tuple[List[int], Optional[List[float]]]]]
"""``generate(prompt_ids, sampling_params, request_id)`` → ``(token_ids, logprobs or None)``."""


def rewrites_history(opening: Mapping[str, Any]) -> bool:
    """Whether the configured context policy rewrites the history each turn (a reasoning
    window: the opening's ``reasoning_window`` is set), so that a step's prompt does not
    extend the previous prompt and reply."""
    return opening.get("reasoning_window") is not None


def windowed_error(opening: Mapping[str, Any], trainer: str, why: str, instead: str) -> swerve.SwerveError:
    """The error of an integration that cannot train a context rewritten each turn."""
    return swerve.SwerveError(
        f"task {opening.get('instance_id')}: the context policy rewrites the history each turn "
        f"(reasoning window {opening.get('reasoning_window')}, e.g. --preset agile) and {trainer} "
        f"{why}; {instead}"
    )


def ids(rendered: Any) -> List[int]:
    """Token ids out of what ``apply_chat_template(tokenize=True)`` returns (a list, or a
    ``BatchEncoding`` with ``input_ids``)."""
    if isinstance(rendered, dict) or hasattr(rendered, "input_ids"):
        rendered = rendered["input_ids"]
    return [int(token) for token in rendered]


def prompt_ids(tokenizer: Any, messages: Sequence[Mapping[str, Any]], tools: Optional[Sequence[Any]] = None) -> List[int]:
    """``messages`` rendered by the tokenizer's chat template with the generation prompt
    (and ``tools`` for the native format), as token ids."""
    return ids(
        tokenizer.apply_chat_template(list(messages), tools=list(tools) if tools else None, add_generation_prompt=True, tokenize=True)
    )


async def run_steps(
    env: swerve.AsyncEnv,
    tokenizer: Any,
    generate: Generate,
    *,
    sampling_params: Optional[Dict[str, Any]] = None,
    request_id: Optional[str] = None,
    prompt_length: Optional[int] = None,
) -> Dict[str, Any]:
    """Runs one episode of ``env`` step-wise (reset, steps until done, evaluate, close).
    Each step renders the prompt swerve gives (``info["messages"]``: under a reasoning
    window, the windowed context) with ``tokenizer``'s chat template, sends those ids to
    ``generate``, and steps the environment with the reply decoded and its ids and
    logprobs as sampled. A prompt longer than ``prompt_length`` ends the episode
    (``truncated``) before it is sent.

    Returns ``opening``, ``steps`` (per step: ``step``, ``messages`` (the prompt sent),
    ``prompt_ids``, ``response_ids`` (the ids ``generate`` gave), ``logprobs`` (or
    ``None``), ``loss_mask`` (all 1), ``reward`` (the trajectory's, broadcast; ``None``
    without reward), ``is_last_step``, ``format_error``, ``generate_seconds``,
    ``tool_seconds``), ``evaluation``, ``reward`` (``None`` when grading failed for the
    machinery's reason), ``truncated``, ``done`` and ``format_errors``."""
    sampling_params = dict(sampling_params or {})
    request_id = request_id or env.id
    opening = await env.reset()
    steps: List[Dict[str, Any]] = []
    truncated = done = False
    try:
        messages = opening["messages"]
        tools = opening.get("tools") or None
        # The environment ends the episode at max_steps; the bound only guards the loop.
        for _ in range(int(opening["max_steps"]) + 1):
            ids_ = prompt_ids(tokenizer, messages, tools)
            if prompt_length is not None and len(ids_) > prompt_length:
                truncated = True
                break
            started = time.perf_counter()
            output_ids, output_logprobs = await generate(ids_, sampling_params, request_id)
            generated = time.perf_counter() - started
            output_ids = [int(token) for token in output_ids]
            logprobs = [float(value) for value in output_logprobs] if output_logprobs is not None else None
            started = time.perf_counter()
            action: Dict[str, Any] = {
                "content": tokenizer.decode(output_ids, skip_special_tokens=True),
                "response_ids": output_ids,
            }
            if logprobs is not None:
                action["logprobs"] = logprobs
            step = await env.step(action)
            steps.append(
                {
                    "step": len(steps),
                    "messages": messages,
                    "prompt_ids": ids_,
                    "response_ids": output_ids,
                    "logprobs": logprobs,
                    "loss_mask": [1] * len(output_ids),
                    "format_error": step.info.get("format_error"),
                    "generate_seconds": generated,
                    "tool_seconds": time.perf_counter() - started,
                }
            )
            if step.done:
                done = True
                break
            messages = step.info["messages"]
        evaluation = await env.evaluate()
    finally:
        await env.close()
    reward = evaluation.reward
    for index, sample in enumerate(steps):
        sample["reward"] = reward
        sample["is_last_step"] = index == len(steps) - 1
    return {
        "opening": opening,
        "steps": steps,
        "evaluation": evaluation,
        "reward": reward,
        "truncated": truncated,
        "done": done,
        "format_errors": sum(1 for sample in steps if sample["format_error"]),
    }
