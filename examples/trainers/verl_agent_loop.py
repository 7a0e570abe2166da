"""A verl agent loop backed by `swerve serve`'s gym-style environments (docs/serve.md).

verl calls `AgentLoopBase.run(sampling_params, **row) -> AgentLoopOutput`. This loop opens
a swerve environment for the row's task, sends its opening messages to the model, steps
the environment with each reply (parsed by swerve with the configured tool-call format)
until the agent calls `finish` or runs out of turns, grades the patch, and always deletes
the environment. It answers with `AgentLoopOutput`'s fields: `prompt_ids`,
`response_ids` (model tokens, then each observation's tokens), `response_mask` (1 model,
0 observation), `response_logprobs`, `reward_score`, `num_turns`, `metrics`.

Two functions connect it to verl (nothing here imports verl, so it runs without it):

- `generate(messages, sampling_params) -> {"text", "prompt_ids", "token_ids", "logprobs"}`:
  one model call; in verl, the chat template and `AsyncLLMServerManager.generate`.
- `tokenize(message) -> [int]`: an observation message's tokens as the chat template
  renders it.

The row names its task in `extra_info`: `{"task_id": "<instance_id>"}` or `{"task": {...}}`.
"""


class SwerveAgentLoop:
    def __init__(self, client, generate, tokenize, overrides=None, max_turns=None):
        self.client = client
        self.generate = generate
        self.tokenize = tokenize
        self.overrides = overrides or {}
        self.max_turns = max_turns

    def run(self, sampling_params, **row):
        extra = row.get("extra_info") or {}
        env = self.client.create_env(task_id=extra.get("task_id"), task=extra.get("task"),
                                     overrides=self.overrides)
        try:
            return self._episode(env, sampling_params)
        finally:
            self.client.delete_env(env["id"])

    def _episode(self, env, sampling_params):
        messages = list(env["messages"])
        max_turns = self.max_turns or env["max_steps"]
        prompt_ids, response_ids, mask, logprobs = None, [], [], []
        turns, done, format_errors = 0, False, 0
        while turns < max_turns and not done:
            reply = self.generate(messages, sampling_params)
            if prompt_ids is None:
                prompt_ids = list(reply["prompt_ids"])
            tokens = list(reply["token_ids"])
            response_ids += tokens
            mask += [1] * len(tokens)
            logprobs += list(reply.get("logprobs") or [0.0] * len(tokens))
            messages.append({"role": "assistant", "content": reply["text"]})
            turns += 1
            step = self.client.step(env["id"], text=reply["text"])
            format_errors += step["format_error"] is not None
            done = step["done"]
            messages.append(step["message"])
            if not done:
                observation = list(self.tokenize(step["message"]))
                response_ids += observation
                mask += [0] * len(observation)
                logprobs += [0.0] * len(observation)
        graded = self.client.evaluate(env["id"])
        return {
            "prompt_ids": prompt_ids or [],
            "response_ids": response_ids,
            "response_mask": mask,
            "response_logprobs": logprobs,
            "reward_score": graded["reward"],
            "num_turns": turns,
            "metrics": {"submitted": done, "format_errors": format_errors,
                        "resolved": graded["resolved"]},
            "extra_fields": {"patch": graded["patch"], "instance_id": env["instance_id"]},
        }
