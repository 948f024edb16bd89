"""Training data from the exported SFT examples: rendered with the model's tool-aware chat
template, labels on assistant tokens only (the template's `{% generation %}` spans give the
mask), and batches of similar lengths so padding stays small, or packed rows: several
examples per row up to `max_length`, positions restarting at each, and no attention across
them (transformers builds the block-causal mask from the position restarts)."""

from __future__ import annotations

import bisect
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from worldsmith.vocab import export_jsonl

IGNORE = -100


def load_split(export_dir: str | Path, split: str) -> list[dict[str, Any]]:
    """Rows of one split of an export folder (`vocab.export_jsonl`: messages, tools as a JSON string)."""
    path = export_jsonl(export_dir, split)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def encode(tokenizer, example: dict[str, Any], max_length: int) -> dict[str, list[int]] | None:
    """input_ids and labels (IGNORE outside assistant turns), cut at `max_length`; None when
    nothing trainable is left."""
    tools = json.loads(example["tools"]) if isinstance(example.get("tools"), str) else example.get("tools")
    messages = [{k: v for k, v in m.items() if v is not None} for m in example["messages"]]
    enc = tokenizer.apply_chat_template(
        messages, tools=tools or None, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
    )
    ids, mask = list(enc["input_ids"])[:max_length], list(enc["assistant_masks"])[:max_length]
    labels = [t if m else IGNORE for t, m in zip(ids, mask, strict=True)]
    if all(x == IGNORE for x in labels):
        return None
    return {"input_ids": ids, "labels": labels}


@dataclass
class Batch:
    input_ids: torch.Tensor
    labels: torch.Tensor
    # 1 on real tokens; a packed batch is not given it (its positions say where examples start)
    attention_mask: torch.Tensor
    position_ids: torch.Tensor | None = None  # packed rows only: 0, 1, ... from each example's first token

    def to(self, device) -> Batch:
        return Batch(
            *(
                t.to(device) if t is not None else None
                for t in (self.input_ids, self.labels, self.attention_mask, self.position_ids)
            )
        )

    @property
    def tokens(self) -> int:
        return int(self.attention_mask.sum())

    @property
    def trained_tokens(self) -> int:
        return int((self.labels != IGNORE).sum())


def make_batches(
    encoded: list[dict[str, list[int]]], batch_size: int, pad_id: int, seed: int = 0, shuffle: bool = True
) -> list[Batch]:
    """Length-bucketed batches: sort by length, cut into batches, shuffle the batch order."""
    return _batches([(e["input_ids"], e["labels"], None) for e in encoded], batch_size, pad_id, seed, shuffle)


def pack(lengths: list[int], capacity: int) -> list[list[int]]:
    """Best-fit decreasing: indices grouped into bins of at most `capacity` tokens."""
    bins: list[list[int]] = []
    room: list[tuple[int, int]] = []  # (free tokens, bin), sorted
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        k = bisect.bisect_left(room, (lengths[i], -1))
        if k == len(room):
            bins.append([i])
            bisect.insort(room, (capacity - lengths[i], len(bins) - 1))
        else:
            free, b = room.pop(k)
            bins[b].append(i)
            bisect.insort(room, (free - lengths[i], b))
    return bins


def make_packed_batches(
    encoded: list[dict[str, list[int]]],
    batch_size: int,
    max_length: int,
    pad_id: int,
    seed: int = 0,
    shuffle: bool = True,
) -> list[Batch]:
    """Rows of several examples (at most `max_length` tokens each), `batch_size` rows a batch.
    A row's padding tail continues its last example's positions: causal attention keeps it
    out of every real token's view, and it has no labels."""
    rows = []
    for b in pack([len(e["input_ids"]) for e in encoded], max_length):
        ids = [t for i in b for t in encoded[i]["input_ids"]]
        labels = [t for i in b for t in encoded[i]["labels"]]
        positions = [p for i in b for p in range(len(encoded[i]["input_ids"]))]
        rows.append((ids, labels, positions))
    return _batches(rows, batch_size, pad_id, seed, shuffle)


def _batches(
    rows: list[tuple[list[int], list[int], list[int] | None]], batch_size: int, pad_id: int, seed: int, shuffle: bool
) -> list[Batch]:
    """Rows (ids, labels, positions or None) sorted by length, cut into batches of `batch_size`
    rows (the batch order shuffled), each padded to its longest row."""
    rows = sorted(rows, key=lambda r: len(r[0]))
    groups = [rows[i : i + batch_size] for i in range(0, len(rows), batch_size)]
    if shuffle:
        random.Random(seed).shuffle(groups)
    batches = []
    for group in groups:
        width = max(len(r[0]) for r in group)
        ids = torch.full((len(group), width), pad_id, dtype=torch.long)
        labels = torch.full((len(group), width), IGNORE, dtype=torch.long)
        attn = torch.zeros((len(group), width), dtype=torch.long)
        pos = torch.zeros((len(group), width), dtype=torch.long) if group[0][2] is not None else None
        for row, (row_ids, row_labels, row_pos) in enumerate(group):
            n = len(row_ids)
            ids[row, :n], labels[row, :n], attn[row, :n] = torch.tensor(row_ids), torch.tensor(row_labels), 1
            if pos is not None:  # the padding tail continues the row's last positions
                pos[row] = torch.cat(
                    [torch.tensor(row_pos), torch.arange(row_pos[-1] + 1, row_pos[-1] + 1 + width - n)]
                )
        batches.append(Batch(ids, labels, attn, pos))
    return batches


def padding_fraction(batches: list[Batch]) -> float:
    total = sum(b.attention_mask.numel() for b in batches)
    return 1 - sum(b.tokens for b in batches) / total if total else 0.0


def lm_loss(model, batch: Batch) -> torch.Tensor:
    """Mean next-token loss over labelled positions. The output head runs only where a label
    is (assistant tokens), not over the whole sequence: most of the fp32 logits memory saved."""
    if (
        batch.position_ids is not None
    ):  # packed: no 2-D mask and no cache, so the position restarts make the mask block-causal
        hidden = model.model(
            input_ids=batch.input_ids, position_ids=batch.position_ids, use_cache=False
        ).last_hidden_state
    else:
        hidden = model.model(
            input_ids=batch.input_ids, attention_mask=batch.attention_mask, use_cache=False
        ).last_hidden_state
    targets = batch.labels[:, 1:]
    keep = targets != IGNORE
    logits = model.lm_head(hidden[:, :-1][keep]).float()
    return torch.nn.functional.cross_entropy(logits, targets[keep])
