"""Runs both shims against a live `swerve serve` and an OpenAI-compatible model server
that returns vLLM's token ids and logprobs; exits non-zero when a check fails.

    SWERVE_SERVE_TOKEN=... python3 smoke_test.py SERVICE_URL MODEL_BASE_URL MODEL TASK_ID

The verl loop's observation tokens come from a byte-level stand-in for a chat template
(`tokenize` below): a real trainer passes its model's tokenizer.
"""

import os
import sys

import requests

from skyrl_generator import SwerveGenerator
from swerve_client import SwerveClient
from verl_agent_loop import SwerveAgentLoop


def openai_generate(base_url, model):
    """One chat call returning the text, the prompt's and the reply's token ids, and logprobs."""

    def generate(messages, sampling_params):
        body = {"model": model, "messages": messages, "logprobs": True,
                "return_token_ids": True, **sampling_params}
        answer = requests.post(f"{base_url}/chat/completions", json=body, timeout=600).json()
        choice = answer["choices"][0]
        return {
            "text": choice["message"]["content"],
            "prompt_ids": answer["prompt_token_ids"],
            "token_ids": choice["token_ids"],
            "logprobs": [item["logprob"] for item in choice["logprobs"]["content"]],
        }

    return generate


def tokenize(message):
    return list(message["content"].encode())


def main():
    service, model_url, model, task_id = sys.argv[1:5]
    client = SwerveClient(service, os.environ["SWERVE_SERVE_TOKEN"])

    generator = SwerveGenerator(client, model=model, base_url=model_url, concurrency=2)
    batch = {
        "prompts": [[], []],
        "env_extras": [{"task_id": task_id}, {"task_id": task_id}],
        "sampling_params": {"temperature": 1.0, "max_generate_length": 256},
        "trajectory_ids": [{"instance_id": task_id, "repetition_id": r} for r in (0, 1)],
    }
    output = generator.generate(batch)
    steps = len(output["response_ids"])
    assert steps >= 2, output
    for key in ("prompt_token_ids", "loss_masks", "rewards", "rollout_logprobs",
                "trajectory_ids", "is_last_step"):
        assert len(output[key]) == steps, key
    assert sum(output["is_last_step"]) == 2, output["is_last_step"]
    assert output["is_last_step"][-1]
    for response, mask, rewards, logprobs in zip(output["response_ids"], output["loss_masks"],
                                                 output["rewards"], output["rollout_logprobs"]):
        assert len(mask) == len(rewards) == len(logprobs) == len(response)
        assert all(value == 1 for value in mask)

    loop = SwerveAgentLoop(client, openai_generate(model_url, model), tokenize)
    result = loop.run({"max_tokens": 256}, extra_info={"task_id": task_id})
    assert result["num_turns"] >= 2, result
    assert len(result["response_ids"]) == len(result["response_mask"])
    assert len(result["response_logprobs"]) == len(result["response_ids"])
    assert 0 in result["response_mask"] and 1 in result["response_mask"]
    assert result["metrics"]["submitted"], result
    assert result["reward_score"] in (0.0, 1.0)

    print(f"skyrl generator: {steps} steps; verl agent loop: {result['num_turns']} turns, "
          f"reward {result['reward_score']}")
    print("smoke test passed")


if __name__ == "__main__":
    main()
