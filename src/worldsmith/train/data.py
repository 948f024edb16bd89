"""Training data from the exported SFT examples: rendered with the model's tool-aware chat
template, labels on assistant tokens only (the template's `{% generation %}` spans give the
mask), and batches of similar lengths so padding stays small."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

IGNORE = -100


def load_split(export_dir: str | Path, split: str) -> list[dict[str, Any]]:
    """Rows of `jsonl/<split>.jsonl` of an export folder (messages, tools as a JSON string)."""
    path = Path(export_dir) / "jsonl" / f"{split}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def encode(tokenizer, example: dict[str, Any], max_length: int) -> dict[str, list[int]] | None:
    """input_ids and labels (IGNORE outside assistant turns), cut at `max_length`; None when
    nothing trainable is left."""
    tools = json.loads(example["tools"]) if isinstance(example.get("tools"), str) else example.get("tools")
    messages = [{k: v for k, v in m.items() if v is not None} for m in example["messages"]]
    enc = tokenizer.apply_chat_template(messages, tools=tools or None, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    ids, mask = list(enc["input_ids"])[:max_length], list(enc["assistant_masks"])[:max_length]
    labels = [t if m else IGNORE for t, m in zip(ids, mask, strict=True)]
    if all(x == IGNORE for x in labels):
        return None
    return {"input_ids": ids, "labels": labels}


@dataclass
class Batch:
    input_ids: torch.Tensor
    labels: torch.Tensor
    attention_mask: torch.Tensor

    @property
    def tokens(self) -> int:
        return int(self.attention_mask.sum())

    @property
    def trained_tokens(self) -> int:
        return int((self.labels != IGNORE).sum())


def make_batches(encoded: list[dict[str, list[int]]], batch_size: int, pad_id: int, seed: int = 0, shuffle: bool = True) -> list[Batch]:
    """Length-bucketed batches: sort by length, cut into batches, shuffle the batch order."""
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]["input_ids"]))
    groups = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    if shuffle:
        random.Random(seed).shuffle(groups)
    batches = []
    for group in groups:
        width = max(len(encoded[i]["input_ids"]) for i in group)
        ids = torch.full((len(group), width), pad_id, dtype=torch.long)
        labels = torch.full((len(group), width), IGNORE, dtype=torch.long)
        attn = torch.zeros((len(group), width), dtype=torch.long)
        for row, i in enumerate(group):
            n = len(encoded[i]["input_ids"])
            ids[row, :n] = torch.tensor(encoded[i]["input_ids"])
            labels[row, :n] = torch.tensor(encoded[i]["labels"])
            attn[row, :n] = 1
        batches.append(Batch(ids, labels, attn))
    return batches


def padding_fraction(batches: list[Batch]) -> float:
    total = sum(b.attention_mask.numel() for b in batches)
    return 1 - sum(b.tokens for b in batches) / total if total else 0.0


def lm_loss(model, batch: Batch) -> torch.Tensor:
    """Mean next-token loss over labelled positions. The output head runs only where a label
    is (assistant tokens), not over the whole sequence: most of the fp32 logits memory saved."""
    hidden = model.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).last_hidden_state
    targets = batch.labels[:, 1:]
    keep = targets != IGNORE
    logits = model.lm_head(hidden[:, :-1][keep]).float()
    return torch.nn.functional.cross_entropy(logits, targets[keep])
