"""TRL: online RL with ``GRPOTrainer``, whose rollouts are whole swerve episodes.

:class:`Rollouts` is a ``rollout_func`` for ``trl.GRPOTrainer``: each prompt of the batch
names a task (its ``instance_id``, the dataset's ``prompt`` column), and each is played as
one episode through :class:`swerve.AsyncEnv`, token in and token out, by the loop verl's
integration uses (:func:`swerve.integrations.verl.run_episode`): the opening rendered once
with the policy's chat template, then each turn the accumulated ids sent to ``generate``,
the reply decoded for swerve to read, the observation's tokens appended. TRL receives one
growing sequence per episode: ``prompt_ids`` (the opening), ``completion_ids`` (every reply
and observation token), ``logprobs`` (0 on observation tokens) and ``env_mask`` (1 on the
policy's tokens, 0 on the observations', which TRL then leaves out of the loss). The
trainer's ``RepeatSampler`` repeats each prompt ``num_generations`` times in a row, so a
group is that many episodes of one task.

The reward is the environment's (:meth:`swerve.Env.evaluate`: graded by the dataset's rules
and shaped by ``[reward]``), handed to the reward function :func:`env_reward` as the extra
field ``swerve_reward``. When grading fails for the machinery's reason there is none:
``None``, which TRL leaves out of its group statistics (its advantage is 0), and the
episode's ``env_mask`` is all 0, so it trains nothing.

With ``run_dir``, every graded episode is also written as a swerve trajectory under
``run_dir/<batch>/trajectories/`` (one directory per generation batch, ``batch`` counting
from 0), so ``swerve data advantages --run run_dir/<batch> --epsilon 1e-4`` (TRL adds 1e-4
to the group's standard deviation) computes the advantages TRL trained on, and ``swerve
data export`` makes SFT rows of them.

``generate`` is ``generate(prompt_ids, sampling_params, request_id) -> (ids, logprobs)``,
async, as for the other integrations; by default :class:`Rollouts` samples from the
trainer's own model with ``transformers`` (``trainer.args.temperature``, ``top_p``,
``top_k``; ``turn_tokens`` new tokens a turn), on the trainer's device, one episode at a
time. torch and TRL are imported only then.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence

import swerve

from . import verl
from ._steps import Generate


class Rollouts:
    """A ``rollout_func`` for ``trl.GRPOTrainer`` over ``tasks`` (see the module's text).

    ``config``, ``presets`` and ``set`` configure every environment as for
    :class:`swerve.Env`. ``tokenizer`` renders the conversation (default: the trainer's
    ``processing_class``). ``response_length`` bounds an episode's completion (replies and
    observations; default ``trainer.args.max_completion_length``) and ``prompt_length`` its
    opening. ``batches`` lists, per call, the environment ids in the order TRL received
    them."""

    def __init__(
        self,
        tasks: Sequence[swerve.Task],
        *,
        config: Optional[swerve.PathLike] = None,
        presets: Sequence[str] = (),
        set: Optional[Mapping[str, Any]] = None,
        tokenizer: Any = None,
        generate: Optional[Generate] = None,
        prompt_length: int = 8192,
        response_length: Optional[int] = None,
        turn_tokens: int = 256,
        run_dir: Optional[swerve.PathLike] = None,
    ) -> None:
        self.tasks = {task.instance_id: task for task in tasks}
        self.config, self.presets, self.set = config, list(presets), dict(set or {})
        self.tokenizer, self.generate = tokenizer, generate
        self.prompt_length, self.response_length, self.turn_tokens = prompt_length, response_length, turn_tokens
        self.run_dir = os.fspath(run_dir) if run_dir is not None else None
        self.batches: List[List[str]] = []

    def task(self, prompt: Any) -> swerve.Task:
        """The task a dataset prompt names (its ``instance_id``, as text or as the content of
        a one-message conversation)."""
        if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], Mapping):
            prompt = prompt[0].get("content")
        task = self.tasks.get(prompt) if isinstance(prompt, str) else None
        if task is None:
            raise swerve.SwerveError(
                f"rollout prompt {prompt!r}: give a task's instance_id as the dataset's prompt (one of {sorted(self.tasks)[:5]}...)"
            )
        return task

    def __call__(self, prompts: Sequence[Any], trainer: Any) -> Dict[str, List[Any]]:
        batch = len(self.batches)
        tokenizer = self.tokenizer if self.tokenizer is not None else trainer.processing_class
        generate = self.generate if self.generate is not None else model_generate(trainer, self.turn_tokens)
        response_length = self.response_length or int(trainer.args.max_completion_length)
        ids: List[str] = []
        fields: Dict[str, List[Any]] = {
            key: []
            for key in ("prompt_ids", "completion_ids", "logprobs", "env_mask", "swerve_reward", "trajectory_id", "instance_id", "resolved", "format_errors")
        }
        for index, prompt in enumerate(prompts):
            task = self.task(prompt)
            id = f"{task.instance_id}-b{batch}-{index}"
            trajectory = os.path.join(self.run_dir, str(batch), "trajectories", f"{id}.jsonl") if self.run_dir else None
            env = swerve.AsyncEnv(task, self.config, presets=self.presets, set=self.set, id=id)
            episode = asyncio.run(
                verl.run_episode(
                    env,
                    tokenizer,
                    generate,
                    prompt_length=self.prompt_length,
                    response_length=response_length,
                    request_id=id,
                    trajectory=trajectory,
                )
            )
            extra = episode["extra_fields"]
            ids.append(id)
            fields["prompt_ids"].append(episode["prompt_ids"])
            fields["completion_ids"].append(episode["response_ids"])
            fields["logprobs"].append(episode["response_logprobs"] or [0.0] * len(episode["response_ids"]))
            fields["env_mask"].append(episode["response_mask"])
            fields["swerve_reward"].append(None if extra["no_reward"] else episode["reward_score"])
            fields["trajectory_id"].append(id)
            fields["instance_id"].append(task.instance_id)
            fields["resolved"].append(extra["resolved"])
            fields["format_errors"].append(extra["format_errors"])
        self.batches.append(ids)
        return fields


def env_reward(prompts: Sequence[Any], completions: Sequence[Any], swerve_reward: Sequence[Optional[float]], **_: Any) -> List[Optional[float]]:
    """The reward function to pass with :class:`Rollouts`: each episode's reward as swerve
    graded and shaped it, ``None`` where grading failed for the machinery's reason."""
    return list(swerve_reward)


def model_generate(trainer: Any, turn_tokens: int) -> Generate:
    """``generate`` by sampling from the trainer's model with ``transformers`` (its
    ``temperature``, ``top_p`` and ``top_k`` settings), at most ``turn_tokens`` new tokens
    a turn, returning the ids and their log-probabilities under the sampling distribution
    (the logits divided by the temperature, as TRL scores them)."""
    import torch

    model = trainer.accelerator.unwrap_model(trainer.model)
    args = trainer.args
    temperature = float(args.temperature)
    tokenizer = trainer.processing_class
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

    async def generate(prompt_ids: List[int], _sampling_params: Dict[str, Any], _request_id: str):
        inputs = torch.tensor([prompt_ids], device=model.device)
        with torch.no_grad():
            output = model.generate(
                inputs,
                attention_mask=torch.ones_like(inputs),
                do_sample=True,
                temperature=temperature,
                top_p=float(args.top_p),
                top_k=int(args.top_k or 0),
                max_new_tokens=turn_tokens,
                pad_token_id=pad,
                return_dict_in_generate=True,
                output_logits=True,
            )
        new = output.sequences[0, len(prompt_ids) :]
        logits = torch.stack([step[0] for step in output.logits]).float() / temperature
        logprobs = torch.log_softmax(logits, dim=-1).gather(1, new.unsqueeze(1)).squeeze(1)
        return [int(token) for token in new], [float(value) for value in logprobs]

    return generate
