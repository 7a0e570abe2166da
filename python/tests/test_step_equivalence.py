"""swerve.Env is the agent of ``swerve run`` minus the policy: for the presets default,
``agile``, ``edit-full`` and ``rl-stage2``, ``swerve run --eval`` runs every bundled task
against a loopback model answering with each task's demonstration (in SWE-AGILE's structure
for ``agile``; for ``edit-full`` with its file views and edits moved to ``llm_editor``, whose
viewer and editor subagents the same server plays), and for SWE-World ``swerve run --env
world --eval swr`` does (with loopback transition and reward models answering from a digest
of each request); then an Env of the same task, configuration and trajectory id is stepped
with the replies the run's model gave. Per step, ``info["messages"]`` is what the run sent
the model (the server saw it), the observations are the run's, and so are the patch and the
shaped reward of ``[reward]`` with its terms (and the reward model's verdict); the Env asked
the subagents and the world's models what the run asked them, as many times."""

import hashlib
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

# SWE-World graded by the reward model: the options `swerve run` is given, and the same as
# the settings the Env is opened with.
WORLD_RUN = ["--env", "world", "--eval", "swr"]
WORLD_ENV = {"run.env": '"world"', "run.eval": "true", "run.evaluator": '"swr"'}

# The subagents' system prompts (crates/swerve-edit/src/prompts.rs) begin so.
VIEWER_SYSTEM = "You help a software engineer read a source file."
EDITOR_SYSTEM = "You change a source file as an instruction says."
# The viewer's answer to every question.
VIEWER_RANGES = "[[1, 2], [10, 11]]"
# The task whose edit-full rollout makes two failing edits before its first real one: one the
# editor will not answer in blocks, one whose text is nowhere in the file.
FAILING_TASK = "swerve-examples__calc-1"
NOWHERE = "text that occurs nowhere"

TIMING = re.compile(r"( tests in | finished in | target\(s\) in ).*")


def timeless(text):
    """An observation without the test runners' timings (`Ran 5 tests in 0.010s`, cargo's
    `finished in 0.00s`), which differ between two runs of the same command."""
    return "\n".join(TIMING.sub(r"\1", line) for line in text.split("\n"))


def content(message):
    """A message's text (other content as its JSON)."""
    text = message.get("content") or ""
    return text if isinstance(text, str) else json.dumps(text, sort_keys=True)


def shown(messages):
    """What a message list says: each message's role and text (its timings aside)."""
    return [(message["role"], timeless(content(message))) for message in messages]


def digest(messages):
    """A number that follows from what `messages` say (their timings aside)."""
    text = json.dumps(shown(messages))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def completion(text):
    """A chat completion answering `text`."""
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
    return {
        "id": "t",
        "object": "chat.completion",
        "model": "demo-model",
        "choices": [choice],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


class Loopback:
    """An OpenAI-compatible chat server on 127.0.0.1 (a free port), answering each request
    with ``answer(body, session)``: a chat completion, or text made into one. It keeps every
    request as ``(session, body)`` in arrival order."""

    def __init__(self, answer):
        self.requests = []
        lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                session = self.headers.get("X-Session-ID", "")
                with lock:
                    server.requests.append((session, body))
                answered = answer(body, session)
                if isinstance(answered, str):
                    answered = completion(answered)
                out = json.dumps(answered).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *_args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def kind(body):
    """Who a request is from: the `viewer` or `editor` subagent (by its system prompt), else
    the `agent`."""
    messages = body.get("messages") or [{}]
    system = content(messages[0])
    if system.startswith(VIEWER_SYSTEM):
        return "viewer"
    if system.startswith(EDITOR_SYSTEM):
        return "editor"
    return "agent"


def demo_model(turns, agile=False):
    """The main model: each session's task answered with its turns, one per call (``agile``:
    in SWE-AGILE's structure, with vLLM's token ids when asked); the subagents of
    ``llm_editor`` as the editor test server of crates/swerve/tests/cli/common/edit.rs
    answers them."""

    def answer(body, session):
        messages = body["messages"]
        who = kind(body)
        if who == "viewer":
            return VIEWER_RANGES
        if who == "editor":
            return editor_reply(content(messages[1]))
        k = sum(1 for message in messages if message["role"] == "assistant")
        calls = turns[session.rsplit("__", 1)[0]]
        text = calls[k] if k < len(calls) else "I have nothing more to do."
        if agile:
            text = f"<think>\nreasoning {k}\n</think>\n<reasoning_digest>\ndigest {k}\n</reasoning_digest>\n{text}"
        out = completion(text)
        if body.get("return_token_ids"):
            # vLLM's token capture, which rl-stage2 asks for: ids standing in for a
            # tokenizer's, one logprob per completion token.
            choice = out["choices"][0]
            out["prompt_token_ids"] = list(range(1, 11))
            choice["token_ids"] = [100 + k, 200, 300, 400, 500]
            choice["logprobs"] = {
                "content": [
                    {"token": f"token_id:{i}", "logprob": -0.5, "bytes": [], "top_logprobs": []}
                    for i in choice["token_ids"]
                ]
            }
        return out

    return Loopback(answer)


def editor_reply(user):
    """The editor's answer to its user message: the file it holds, changed as the JSON
    instruction says, as SEARCH/REPLACE blocks (a whole-file rewrite for an insertion)."""
    assert user.startswith("The file:\n"), user[:200]
    fence, rest = user[len("The file:\n") :].split("\n", 1)
    body, rest = rest.split(f"\n{fence}\n\nInstruction: ", 1)
    instruction = json.loads(rest.split("\n\nAnswer with", 1)[0])
    if "refuse" in instruction:
        return "I would rather not change this file."
    new_str = instruction["new_str"]
    if isinstance(instruction.get("insert_line"), int):
        # As `file_editor insert` does: the new lines after line `insert_line`.
        lines = body.split("\n")
        at = instruction["insert_line"]
        lines[at:at] = new_str.split("\n")
        return "<<<<<<< SEARCH\n=======\n" + "\n".join(lines) + "\n>>>>>>> REPLACE\n"
    old_str = instruction["old_str"]
    return f"<<<<<<< SEARCH\n{old_str.rstrip(chr(10))}\n=======\n{new_str.rstrip(chr(10))}\n>>>>>>> REPLACE\n"


def edit_full_calls(instance_id):
    """The calls of the task's demonstration as ``edit-full`` makes them: file views through
    the viewer, edits (and undoing them) through the editor; FAILING_TASK first makes two
    edits that fail."""

    def edit(path, instruction):
        return {
            "name": "llm_editor",
            "arguments": {"command": "edit", "path": path, "instruction": json.dumps(instruction)},
        }

    demo = json.loads((DEMOS / f"{instance_id}.json").read_text())
    calls, edited = [], []
    for call in demo["calls"]:
        arguments = call["arguments"]
        path = arguments.get("path", "")
        command = arguments.get("command", "") if call["name"] == "file_editor" else ""
        if command == "str_replace" and instance_id == FAILING_TASK and not edited:
            calls += [edit(path, {"refuse": True}), edit(path, {"old_str": NOWHERE, "new_str": "x"})]
        if command == "view":
            calls.append(
                {
                    "name": "llm_editor",
                    "arguments": {"command": "view", "path": path, "query": "the code this task is about"},
                }
            )
        elif command == "str_replace":
            edited.append((path, arguments.get("old_str", ""), arguments.get("new_str", "")))
            calls.append(edit(path, {"old_str": arguments.get("old_str", ""), "new_str": arguments.get("new_str", "")}))
        elif command == "insert":
            calls.append(edit(path, {"insert_line": arguments["insert_line"], "new_str": arguments.get("new_str", "")}))
        elif command == "undo_edit":
            _, old, new = next(e for e in reversed(edited) if e[0] == path)
            calls.append(edit(path, {"old_str": new, "new_str": old}))
        else:
            calls.append(call)
    return calls


def turns_of(tasks, presets, tmp_path):
    """Each task's replies: its demonstration's calls (for ``edit-full`` as that preset makes
    them) as the replay model writes them under ``presets``."""
    turns = {}
    for task in tasks:
        demo = DEMOS / f"{task.instance_id}.json"
        if "edit-full" in presets:
            demo = tmp_path / f"{task.instance_id}.edit-full.json"
            demo.write_text(json.dumps({"instance_id": task.instance_id, "calls": edit_full_calls(task.instance_id)}))
        turns[task.instance_id] = swerve.replay_turns(demo, presets=presets)
    return turns


def world_models():
    """SWE-World's transition model (SWT) and reward model (SWR): their replies follow from
    each request's text (its digest), not from the order of the calls, so the run's
    concurrent tasks and the Env get the same answer to the same request, and a request the
    Env assembled differently gets a different one."""

    def transition(body, _session):
        d = digest(body["messages"])
        return json.dumps({"stdout": f"simulated run {d:016x}\n", "stderr": "", "exit_code": d % 2})

    def reward(body, _session):
        d = digest(body["messages"])
        return json.dumps({"test_report": f"predicted {d:016x}", "reward": d % 2})

    return Loopback(transition), Loopback(reward)


def asked(requests):
    """What a server was asked, in an order of its own (the run's tasks run concurrently)."""
    return sorted(json.dumps(shown(body["messages"])) for _, body in requests)


@pytest.mark.parametrize("preset", ["", "agile", "edit-full", "rl-stage2", "world"])
def test_env_steps_as_swerve_run(cli, tmp_path, tasks, preset):
    world = preset == "world"
    presets = [preset] if preset and not world else []
    model = demo_model(turns_of(tasks, presets, tmp_path), agile=preset == "agile")
    servers = [model]
    try:
        sets = dict(SETTINGS)
        mode_run, mode_env = ["--eval"], {}
        if preset == "edit-full":
            for subagent in ("viewer", "editor"):
                sets[f"edit.{subagent}.name"] = f'"{subagent}-model"'
                sets[f"edit.{subagent}.base_url"] = json.dumps(model.url)
        if world:
            swt, swr = world_models()
            servers += [swt, swr]
            sets["world.transition_model.name"] = '"swt-model"'
            sets["world.transition_model.base_url"] = json.dumps(swt.url)
            sets["world.reward_model.name"] = '"swr-model"'
            sets["world.reward_model.base_url"] = json.dumps(swr.url)
            mode_run, mode_env = WORLD_RUN, WORLD_ENV
        out = tmp_path / "run"
        args = ["run", "--tasks", TASKS, "--out", out, *mode_run, "--model", "demo-model", "--base-url", model.url]
        for name in presets:
            args += ["--preset", name]
        for key, value in sets.items():
            args += ["--set", f"{key}={value}"]
        done = cli(*args, cwd=REPO)
        assert done.returncode == 0, done.stderr
        # What the servers were asked during the run; the rest is the Env's.
        ran = [len(server.requests) for server in servers]
        sent = {}
        for session, body in model.requests:
            if kind(body) == "agent":
                sent.setdefault(session, []).append(body["messages"])
        for task in tasks:
            id = f"{task.instance_id}__0"
            run = swerve.read_trajectory(out / "trajectories" / f"{id}.jsonl")
            assert len(sent[id]) == len(run.steps)
            with swerve.Env(task, presets=presets, set={**sets, **mode_env}, id=id) as env:
                prompt = env.reset()["messages"]
                for k, step in enumerate(run.steps):
                    assert shown(prompt) == shown(sent[id][k]), (preset, id, k)
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
            assert evaluation.score == outcome.get("reward"), (preset, id)
            # Who graded (the tests' report names no evaluator; the reward model's does).
            assert evaluation.report.get("evaluator") == outcome["eval_report"].get("evaluator"), (preset, id)
            if world:
                # The reward model's verdict: its votes, their mean and the resolution.
                assert outcome["eval_report"]["evaluator"] == "swr"
                assert evaluation.report == outcome["eval_report"], (preset, id)
        # The Env asked nothing of the main model, and of the subagents and the world's
        # models what the run asked them, as many times.
        assert all(kind(body) != "agent" for _, body in model.requests[ran[0] :])
        if preset == "edit-full":
            for subagent in ("viewer", "editor"):
                by_run = [r for r in model.requests[: ran[0]] if kind(r[1]) == subagent]
                by_env = [r for r in model.requests[ran[0] :] if kind(r[1]) == subagent]
                assert by_run, f"the run called no {subagent}"
                assert len(by_env) == len(by_run), subagent
                assert asked(by_env) == asked(by_run), f"the Env asked the {subagent} otherwise"
        else:
            assert len(model.requests) == ran[0]
        if world:
            for server, name in ((swt, "transition"), (swr, "reward")):
                by_run = server.requests[: ran[servers.index(server)]]
                by_env = server.requests[len(by_run) :]
                assert by_run, f"the run called no {name} model"
                assert len(by_env) == len(by_run), name
                assert asked(by_env) == asked(by_run), f"the Env asked the {name} model otherwise"
    finally:
        for server in servers:
            server.close()
