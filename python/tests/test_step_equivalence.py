"""swerve.Env is the agent of ``swerve run`` minus the policy: for the presets default,
``agile`` and ``rl-stage2``, ``swerve run --eval`` runs every bundled task against a loopback
model answering with each task's demonstration (in SWE-AGILE's structure for ``agile``);
then an Env of the same task, configuration and trajectory id is stepped with the replies
the run's model gave. Per step, ``info["messages"]`` is what the run sent the model (the
server saw it), the observations are the run's, and so are the patch and the shaped reward
of ``[reward]`` with its terms."""

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import swerve
from conftest import DEMOS, REPO, TASKS

SETTINGS = {
    "run.samples": "1",
    "reward.max_turns": "8",
    "reward.step_penalty": "0.5",
    "reward.step_buffer": "4",
    "reward.format_error_penalty": "0.05",
    # Rust's test harness on one thread, so two runs of `cargo test` print the same lines in
    # the same order (with a thread per core, which tests finish first decides which lines
    # `| tail` or the observation's truncation keeps).
    "sandbox.env.RUST_TEST_THREADS": '"1"',
}


class DemoModel:
    """An OpenAI-compatible chat server on loopback answering each session's task with its
    demonstration, one call per turn (``agile``: in SWE-AGILE's structure); it keeps every
    request's messages by session."""

    def __init__(self, presets, agile):
        self.requests = {}
        turns = {}
        for task in swerve.load_tasks(TASKS):
            turns[task.instance_id] = swerve.replay_turns(DEMOS / f"{task.instance_id}.json", presets=presets)
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                session = self.headers.get("X-Session-ID", "")
                messages = body["messages"]
                model.requests.setdefault(session, []).append(messages)
                k = sum(1 for message in messages if message["role"] == "assistant")
                calls = turns[session.rsplit("__", 1)[0]]
                text = calls[k] if k < len(calls) else "I have nothing more to do."
                if agile:
                    text = f"<think>\nreasoning {k}\n</think>\n<reasoning_digest>\ndigest {k}\n</reasoning_digest>\n{text}"
                choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                body_out = {
                    "id": "t",
                    "object": "chat.completion",
                    "model": "demo-model",
                    "choices": [choice],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                }
                if body.get("return_token_ids"):
                    # vLLM's token capture, which rl-stage2 asks for: ids standing in for a
                    # tokenizer's, one logprob per completion token.
                    body_out["prompt_token_ids"] = list(range(1, 11))
                    choice["token_ids"] = [100 + k, 200, 300, 400, 500]
                    choice["logprobs"] = {
                        "content": [
                            {"token": f"token_id:{i}", "logprob": -0.5, "bytes": [], "top_logprobs": []}
                            for i in choice["token_ids"]
                        ]
                    }
                answer = json.dumps(body_out).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *_args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()


TIMING = re.compile(r"( tests in | finished in | target\(s\) in ).*")


def timeless(text):
    """An observation without the test runners' timings (`Ran 5 tests in 0.010s`, cargo's
    `finished in 0.00s`), which differ between two runs of the same command."""
    return "\n".join(TIMING.sub(r"\1", line) for line in text.split("\n"))


def shown(messages):
    """What a message list says: each message's role and text (its timings aside)."""
    return [(message["role"], timeless(message.get("content") or "")) for message in messages]


@pytest.mark.parametrize("preset", ["", "agile", "rl-stage2"])
def test_env_steps_as_swerve_run(cli, tmp_path, tasks, preset):
    presets = [preset] if preset else []
    model = DemoModel(presets, agile=preset == "agile")
    try:
        out = tmp_path / "run"
        args = ["run", "--tasks", TASKS, "--out", out, "--eval", "--model", "demo-model", "--base-url", model.url]
        for name in presets:
            args += ["--preset", name]
        for key, value in SETTINGS.items():
            args += ["--set", f"{key}={value}"]
        done = cli(*args, cwd=REPO)
        assert done.returncode == 0, done.stderr
        for task in tasks:
            id = f"{task.instance_id}__0"
            run = swerve.read_trajectory(out / "trajectories" / f"{id}.jsonl")
            sent = model.requests[id]
            assert len(sent) == len(run.steps)
            with swerve.Env(task, presets=presets, set=SETTINGS, id=id) as env:
                prompt = env.reset()["messages"]
                for k, step in enumerate(run.steps):
                    assert shown(prompt) == shown(sent[k]), (preset, id, k)
                    observation, _reward, done_, info = env.step(step["response_text"])
                    assert timeless(observation) == timeless(step.get("observation") or ""), (preset, id, k)
                    assert info["format_error"] == step.get("format_error")
                    assert done_ == (k + 1 == len(run.steps))
                    prompt = info["messages"]
                assert env.done and prompt is None
                evaluation = env.evaluate()
            outcome = run.outcome
            assert evaluation.patch == outcome["patch"]
            assert evaluation.exit_reason == outcome["exit_reason"]
            assert evaluation.reward_terms == outcome["extra"]["reward"], (preset, id)
            assert evaluation.reward == outcome["extra"]["reward"]["total"]
    finally:
        model.close()
