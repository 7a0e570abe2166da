"""Supervised fine-tuning of swerve's embedded model on swerve's own export, on the CPU.

The model is SmolLM2-135M-Instruct from the GGUF file swerve runs (``scripts/fetch-model.sh``),
loaded by transformers' GGUF loader, which dequantizes it to float32. Its chat template is the
one in the GGUF metadata, the template swerve renders the agent's conversations with, so the
trained rows are the text swerve sends. The rows are ``swerve data export --format trl``:
TRL's conversational prompt/completion, one per trained step; TRL's ``SFTTrainer`` trains on
the completions only. The trained model is saved as a Hugging Face directory (config.json,
tokenizer.json, tokenizer_config.json with the chat template, model.safetensors) that
``swerve run --model embedded:DIR`` loads; the loss of each optimizer step and the training
time go to ``training.json`` in it.

Usage: train.py --gguf FILE --data TRL.jsonl --out DIR [--epochs N] [--lr LR]
                [--max-length TOKENS] [--seed N]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time


# The trainer settings both stages share: on the CPU, a log line per optimizer step, no
# checkpoints, no tracker, data loaded in the training process.
CPU_TRAINING = {
    "logging_steps": 1,
    "save_strategy": "no",
    "report_to": "none",
    "use_cpu": True,
    "dataloader_num_workers": 0,
}


def chat_template(gguf_path: pathlib.Path) -> str:
    """The chat template in the GGUF file's metadata (``tokenizer.chat_template``)."""
    from gguf import GGUFReader

    field = GGUFReader(gguf_path).fields["tokenizer.chat_template"]
    return bytes(field.parts[field.data[0]]).decode("utf-8")


def gguf_tokenizer(gguf_path: pathlib.Path):
    """The GGUF file's tokenizer as swerve's engine builds it: transformers' GGUF loader, with
    the file's chat template, and for ``tokenizer.ggml.pre = smollm`` SmolLM's own
    pre-tokenizer (digits split one by one, then byte-level), which that loader leaves out:
    without it ``"\n  1."`` and every other digit run tokenize differently from the text
    swerve sends the model."""
    from gguf import GGUFReader
    from tokenizers import pre_tokenizers
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    tokenizer.chat_template = chat_template(gguf_path)
    field = GGUFReader(gguf_path).fields.get("tokenizer.ggml.pre")
    if field is not None and bytes(field.parts[field.data[0]]).decode("utf-8") == "smollm":
        tokenizer.backend_tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Digits(individual_digits=True),
                pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True),
            ]
        )
    return tokenizer


def load_rows(path: pathlib.Path) -> list[dict]:
    """The exported rows, with ``tools`` as the list of schemas the template takes (the
    export writes them as one JSON string) and left out when there are none."""
    rows = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        tools = row.pop("tools", None)
        if isinstance(tools, str):
            tools = json.loads(tools)
        if tools:
            row["tools"] = tools
        rows.append({key: row[key] for key in ("prompt", "completion", "tools") if key in row})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", type=pathlib.Path, required=True)
    parser.add_argument("--data", type=pathlib.Path, required=True)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--max-length", type=int, default=2048)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import SFTConfig, SFTTrainer

    torch.manual_seed(args.seed)
    gguf = args.gguf.resolve()
    tokenizer = gguf_tokenizer(gguf)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.float32
    )
    # The GGUF loader dequantized every tensor to float32 but leaves its quantizer attached,
    # and the Trainer refuses a model with one as quantized: the weights are plain tensors.
    if getattr(model, "hf_quantizer", None) is not None:
        model.hf_quantizer.remove_quantization_config(model)
    kinds = {parameter.dtype for parameter in model.parameters()}
    if kinds != {torch.float32}:
        raise SystemExit(f"the model loaded from {gguf} has parameters of {kinds}, not float32")

    rows = load_rows(args.data)
    kept = []
    for row in rows:
        text = tokenizer.apply_chat_template(
            row["prompt"] + row["completion"], tools=row.get("tools"), tokenize=False
        )
        length = len(tokenizer(text, add_special_tokens=False)["input_ids"])
        # A row longer than max_length would be cut from the right, losing the completion
        # that is its whole point: it is left out instead.
        if length <= args.max_length:
            kept.append(row)
    print(f"rows: {len(kept)} of {len(rows)} within {args.max_length} tokens", flush=True)
    if not kept:
        raise SystemExit(f"no row of {args.data} fits {args.max_length} tokens")

    config = SFTConfig(
        output_dir=str(args.out / "checkpoints"),
        num_train_epochs=args.epochs,
        per_device_train_batch_size=1,
        gradient_accumulation_steps=1,
        learning_rate=args.lr,
        lr_scheduler_type="constant",
        warmup_steps=0,
        max_length=args.max_length,
        completion_only_loss=True,
        seed=args.seed,
        **CPU_TRAINING,
    )
    trainer = SFTTrainer(
        model=model,
        args=config,
        train_dataset=Dataset.from_list(kept),
        processing_class=tokenizer,
    )
    started = time.monotonic()
    trainer.train()
    seconds = time.monotonic() - started

    args.out.mkdir(parents=True, exist_ok=True)
    trainer.model.save_pretrained(args.out, safe_serialization=True)
    tokenizer.save_pretrained(args.out)
    losses = [
        {"step": entry["step"], "epoch": entry.get("epoch"), "loss": entry["loss"]}
        for entry in trainer.state.log_history
        if "loss" in entry
    ]
    record = {
        "rows": len(kept),
        "rows_exported": len(rows),
        "epochs": args.epochs,
        "learning_rate": args.lr,
        "max_length": args.max_length,
        "seed": args.seed,
        "optimizer_steps": trainer.state.global_step,
        "train_seconds": round(seconds, 1),
        "torch_threads": torch.get_num_threads(),
        "losses": losses,
    }
    (args.out / "training.json").write_text(json.dumps(record, indent=2) + "\n")
    print(
        f"trained {trainer.state.global_step} steps in {seconds:.0f} s; loss "
        f"{losses[0]['loss']:.3f} -> {losses[-1]['loss']:.3f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
