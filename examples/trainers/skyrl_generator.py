"""A SkyRL generator backed by `swerve serve` (docs/serve.md).

SkyRL calls `generate(input_batch) -> GeneratorOutput`. This generator runs one swerve
rollout per prompt, against the inference server SkyRL gives it, and answers in SkyRL's
step-wise form (`generator.step_wise_trajectories=true`): one element per model call, with
the token ids and logprobs the server produced (captured by swerve, never re-tokenized),
masks of 1, the trajectory's reward on the last token of its last step, and `is_last_step`.

    generator = SwerveGenerator(SwerveClient(url, token), model="Qwen/Qwen3-8B",
                                base_url="http://127.0.0.1:8000/v1")

Wrap it in a `skyrl.train.generators.base.GeneratorInterface` subclass to register it;
nothing here imports SkyRL, so it runs (and is tested) without it. Each prompt's
`env_extras` must name its task: `{"task_id": "<instance_id>"}` or `{"task": {...}}`.
"""

from concurrent.futures import ThreadPoolExecutor


def _trajectory_id(trajectory_id, index):
    """`(instance_id, repetition_id)` of SkyRL's TrajectoryID, a dict, or `None`."""
    if trajectory_id is None:
        return (f"prompt{index}", 0)
    if isinstance(trajectory_id, dict):
        return (trajectory_id["instance_id"], trajectory_id["repetition_id"])
    return (trajectory_id.instance_id, trajectory_id.repetition_id)


class SwerveGenerator:
    def __init__(self, client, model, base_url, overrides=None, concurrency=32):
        self.client = client
        self.model = model
        self.base_url = base_url
        self.overrides = {**(overrides or {}), "agent.capture_tokens": True}
        self.concurrency = concurrency

    def _rollout(self, extras, sampling, trajectory_id):
        instance, repetition = trajectory_id
        return self.client.rollout(
            model=self.model,
            base_url=self.base_url,
            task_id=extras.get("task_id"),
            task=extras.get("task"),
            sampling=sampling,
            session_id=f"{instance}__{repetition}",
            overrides=self.overrides,
        )

    def generate(self, input_batch):
        extras = input_batch["env_extras"]
        sampling = _sampling(input_batch.get("sampling_params") or {})
        ids = input_batch.get("trajectory_ids") or [None] * len(extras)
        trajectory_ids = [_trajectory_id(t, i) for i, t in enumerate(ids)]
        with ThreadPoolExecutor(self.concurrency) as pool:
            answers = list(pool.map(lambda args: self._rollout(*args),
                                    zip(extras, [sampling] * len(extras), trajectory_ids)))
        output = {key: [] for key in (
            "prompt_token_ids", "response_ids", "loss_masks", "rewards", "rollout_logprobs",
            "trajectory_ids", "is_last_step", "stop_reasons")}
        for trajectory_id, answer in zip(trajectory_ids, answers):
            steps = answer["tokens"]
            if not steps:
                raise ValueError(
                    f"rollout {answer['id']} has no captured token ids: the inference server "
                    "must support vLLM's return_token_ids and logprobs")
            reward = answer["reward"] or 0.0
            for position, step in enumerate(steps):
                last = position == len(steps) - 1
                response = step["completion_ids"]
                output["prompt_token_ids"].append(step["prompt_ids"])
                output["response_ids"].append(response)
                output["loss_masks"].append([1] * len(response))
                output["rewards"].append(
                    [0.0] * (len(response) - 1) + [reward if last else 0.0] if response else [])
                output["rollout_logprobs"].append(step["logprobs"] or [0.0] * len(response))
                output["trajectory_ids"].append(trajectory_id)
                output["is_last_step"].append(last)
                output["stop_reasons"].append(answer["exit_reason"] if last else "step")
        output["rollout_metrics"] = {
            "swerve/mean_reward": sum((a["reward"] or 0.0) for a in answers) / max(len(answers), 1),
            "swerve/mean_steps": sum(a["steps"] for a in answers) / max(len(answers), 1),
        }
        return output


def _sampling(params):
    """SkyRL's sampling parameters, as swerve's `sampling`."""
    keys = ("temperature", "top_p", "max_tokens", "stop", "seed")
    sampling = {key: params[key] for key in keys if params.get(key) is not None}
    if "max_generate_length" in params and "max_tokens" not in sampling:
        sampling["max_tokens"] = params["max_generate_length"]
    return sampling
