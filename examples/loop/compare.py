"""Greedy parity: swerve's embedded engine against transformers on the same prompt.

Reads the first step of a trajectory that ``swerve run --model embedded:MODEL`` wrote at
temperature 0 with ``agent.capture_tokens = true``: the prompt's token ids and the greedy
completion's ids, as swerve's engine (candle) computed them. transformers loads the same
model (a GGUF file through its GGUF loader, or a Hugging Face directory), renders the same
messages with the model's chat template and tokenizes them, then continues swerve's prompt
ids greedily for as many tokens. Prints and writes (``--out``) whether the prompt ids and
the greedy tokens agree, and where they first differ.

Usage: compare.py --model GGUF_FILE|DIR --trajectory FILE --out JSON
"""

from __future__ import annotations

import argparse
import copy
import json
import pathlib


def request_of(records: list[dict], index: int) -> list[dict]:
    """The messages step `index` sent, rebuilt from its `messages_sent`: the full list, or a
    delta on an earlier step's request (or the header's `prompt`) as docs/trajectories.md
    describes (`base`, `keep`, `drop_reasoning`, `append`)."""
    step = next(record for record in records if record["type"] == "step" and record["index"] == index)
    sent = step["messages_sent"]
    if isinstance(sent, list):
        return sent
    if "base" in sent:
        base = request_of(records, sent["base"])
    else:
        base = next(record for record in records if record["type"] == "header")["prompt"]
    messages = copy.deepcopy(base[: sent.get("keep", 0)])
    for position in sent.get("drop_reasoning", []):
        messages[position].pop("reasoning_content", None)
    return messages + sent.get("append", [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=pathlib.Path, required=True)
    parser.add_argument("--trajectory", type=pathlib.Path, required=True)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    records = [json.loads(line) for line in args.trajectory.read_text().splitlines() if line]
    step = next(record for record in records if record["type"] == "step")
    tokens = step.get("tokens") or {}
    if not tokens.get("prompt_ids") or not tokens.get("completion_ids"):
        raise SystemExit(f"{args.trajectory}: its first step has no token ids (capture_tokens)")
    prompt_ids = tokens["prompt_ids"]
    swerve_ids = tokens["completion_ids"]

    model_path = args.model.resolve()
    if model_path.is_file():
        from train import gguf_tokenizer

        where = {"pretrained_model_name_or_path": model_path.parent, "gguf_file": model_path.name}
        tokenizer = gguf_tokenizer(model_path)
    else:
        where = {"pretrained_model_name_or_path": model_path}
        tokenizer = AutoTokenizer.from_pretrained(**where)
    model = AutoModelForCausalLM.from_pretrained(**where, dtype=torch.float32)
    model.eval()

    messages = request_of(records, step["index"])
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    hf_prompt_ids = tokenizer(text, add_special_tokens=False)["input_ids"]

    with torch.no_grad():
        output = model.generate(
            torch.tensor([prompt_ids]),
            attention_mask=torch.ones(1, len(prompt_ids), dtype=torch.long),
            # As many tokens as swerve's, ending where the model ends (its end-of-turn
            # token, which swerve's completion ends with when it stopped there).
            max_new_tokens=len(swerve_ids),
            do_sample=False,
            pad_token_id=tokenizer.eos_token_id,
        )
    hf_ids = output[0, len(prompt_ids) :].tolist()
    first_difference = next(
        (index for index, (a, b) in enumerate(zip(swerve_ids, hf_ids)) if a != b),
        None if len(swerve_ids) == len(hf_ids) else min(len(swerve_ids), len(hf_ids)),
    )
    result = {
        "model": str(args.model),
        "trajectory": str(args.trajectory),
        "prompt_tokens": len(prompt_ids),
        "prompt_ids_equal": hf_prompt_ids == prompt_ids,
        "greedy_tokens": len(swerve_ids),
        "greedy_tokens_equal": hf_ids == swerve_ids,
        "first_difference": first_difference,
        "swerve_text": tokenizer.decode(swerve_ids),
        "transformers_text": tokenizer.decode(hf_ids),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"{args.model}: prompt ids {'equal' if result['prompt_ids_equal'] else 'DIFFER'} "
        f"({len(prompt_ids)} tokens); greedy tokens "
        + (
            f"equal ({len(swerve_ids)})"
            if result["greedy_tokens_equal"]
            else f"differ from token {first_difference} of {len(swerve_ids)}"
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
