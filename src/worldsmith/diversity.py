"""How varied a set of episodes or tasks is, by task family: distinct call-chain shapes (the
read/write pattern of the calls that succeeded: "read>write"), distinct tools and worlds,
the requests' distinct-2 (unique word bigrams over all bigrams), their near-duplicate rate
(the share of requests with an earlier one at MinHash Jaccard >= 0.7 in the same family), and
the items where the agent called no tool at all (restraint: irrelevance, a refusal read off the rule).
Streamed: one `add` per item, nothing but sets, counters and MinHashes kept."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from worldsmith.dedup import MinHashIndex, word_shingles

NEAR_DUPLICATE_JACCARD = 0.7
_WORD = re.compile(r"[a-z0-9']+")


@dataclass
class _Family:
    items: int = 0
    shapes: Counter[str] = field(default_factory=Counter)
    tools: set[str] = field(default_factory=set)
    worlds: set[str] = field(default_factory=set)
    bigrams: set[tuple[str, str]] = field(default_factory=set)
    n_bigrams: int = 0
    near_duplicates: int = 0
    no_call: int = 0  # items where the agent called no tool at all (not even one that failed)
    index: MinHashIndex = field(default_factory=lambda: MinHashIndex(threshold=NEAR_DUPLICATE_JACCARD))


def distinct_2(texts: Iterable[str]) -> float:
    """Unique word bigrams over all word bigrams of `texts` (Li et al., 2016); 0 for none."""
    seen: set[tuple[str, str]] = set()
    total = 0
    for t in texts:
        words = _WORD.findall(t.lower())
        pairs = list(zip(words, words[1:], strict=False))
        seen.update(pairs)
        total += len(pairs)
    return len(seen) / total if total else 0.0


class Diversity:
    """Per family: add(family, request, chain, tools, world); rows() gives the table."""

    def __init__(self) -> None:
        self.families: dict[str, _Family] = {}

    def add(
        self, family: str, request: str, chain: str, tools: Iterable[str], world: str | None, no_call: bool = False
    ) -> None:
        f = self.families.setdefault(family or "unknown", _Family())
        f.items += 1
        f.no_call += no_call
        f.shapes[chain or "no call"] += 1
        f.tools.update(tools)
        if world:
            f.worlds.add(world)
        words = _WORD.findall(request.lower())
        pairs = list(zip(words, words[1:], strict=False))
        f.bigrams.update(pairs)
        f.n_bigrams += len(pairs)
        key = str(f.items)
        shingles = word_shingles(request, k=2)
        if shingles and f.index.find(key, shingles):
            f.near_duplicates += 1
        f.index.add(key, shingles)

    def add_example(self, metadata: dict[str, Any], messages: list[dict[str, Any]]) -> None:
        """An exported example (`SFTExample` metadata and messages): its family, opening request, chain."""
        self.add(
            metadata.get("family") or metadata.get("difficulty") or "unknown",
            next((m.get("content") or "" for m in messages if m["role"] == "user"), ""),
            metadata.get("chain") or "",
            metadata.get("called_tool_ids") or [],
            metadata.get("world_id"),
            no_call=not any(m.get("tool_calls") for m in messages if m["role"] == "assistant"),
        )

    def rows(self) -> list[dict[str, Any]]:
        """One row per family (most items first), then `all` over every family."""
        out = []
        for name, f in sorted(self.families.items(), key=lambda kv: (-kv[1].items, kv[0])):
            out.append(
                {
                    "family": name,
                    "items": f.items,
                    "no_call": f.no_call,
                    "chain_shapes": len(f.shapes),
                    "tools": len(f.tools),
                    "worlds": len(f.worlds),
                    "distinct_2": round(len(f.bigrams) / f.n_bigrams, 3) if f.n_bigrams else 0.0,
                    "near_duplicate_rate": round(f.near_duplicates / f.items, 3) if f.items else 0.0,
                }
            )
        if out:
            fams = list(self.families.values())
            items = sum(f.items for f in fams)
            bigrams = set().union(*(f.bigrams for f in fams))
            n = sum(f.n_bigrams for f in fams)
            out.append(
                {
                    "family": "all",
                    "items": items,
                    "no_call": sum(f.no_call for f in fams),
                    "chain_shapes": len(set().union(*(set(f.shapes) for f in fams))),
                    "tools": len(set().union(*(f.tools for f in fams))),
                    "worlds": len(set().union(*(f.worlds for f in fams))),
                    "distinct_2": round(len(bigrams) / n, 3) if n else 0.0,
                    # within a family, where near copies are the risk (a family's requests share a goal)
                    "near_duplicate_rate": round(sum(f.near_duplicates for f in fams) / items, 3) if items else 0.0,
                }
            )
        return out


def chain_of(calls: Iterable[Any]) -> str:
    """The shape of an episode's calls that succeeded: "read>write" (ToolCall-like: ok, read_only)."""
    return ">".join("read" if c.read_only else "write" for c in calls if c.ok)


def markdown_table(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return ["No items."]
    head = list(rows[0])
    return [
        "| " + " | ".join(h.replace("_", " ") for h in head) + " |",
        "| " + " | ".join("---" for _ in head) + " |",
        *("| " + " | ".join(str(r[h]) for h in head) + " |" for r in rows),
    ]
