"""Near-duplicate tools by MinHash LSH over word shingles of name + description.

Why MinHash and not embeddings: it is deterministic, needs no model download (this
project runs with no model hub), costs microseconds per tool on a CPU, and LSH keeps the
lookup sub-linear, so 20,000+ synthetic tools stay cheap. It catches the copies evolution
makes (same tool reworded a little); semantic paraphrases with no shared wording pass,
which the exact-duplicate check and the graph's coverage weighting tolerate.
"""

from __future__ import annotations

import re

from datasketch import MinHash, MinHashLSH

from worldsmith.records import ToolSpec

_WORD = re.compile(r"[a-z0-9]+")


def shingles(spec: ToolSpec, k: int = 3) -> set[str]:
    words = _WORD.findall(f"{spec.name.replace('_', ' ')} {spec.description}".lower())
    params = sorted((spec.input_schema.get("properties") or {}).keys()) if isinstance(spec.input_schema, dict) else []
    grams = {" ".join(words[i : i + k]) for i in range(max(1, len(words) - k + 1))}
    return grams | {f"param:{p}" for p in params}


class NearDuplicateIndex:
    def __init__(self, threshold: float = 0.8, num_perm: int = 128):
        self.threshold = threshold
        self.num_perm = num_perm
        self.lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
        self.hashes: dict[str, MinHash] = {}

    def _minhash(self, spec: ToolSpec) -> MinHash:
        m = MinHash(num_perm=self.num_perm, seed=1)
        for s in shingles(spec):
            m.update(s.encode())
        return m

    def find(self, spec: ToolSpec) -> tuple[str, float] | None:
        """The most similar indexed tool at or over the threshold, with its estimated Jaccard."""
        m = self._minhash(spec)
        best = None
        for other in self.lsh.query(m):
            if other == spec.tool_id:
                continue
            j = m.jaccard(self.hashes[other])
            if j >= self.threshold and (best is None or j > best[1]):
                best = (other, j)
        return best

    def add(self, spec: ToolSpec) -> None:
        if spec.tool_id not in self.hashes:
            m = self._minhash(spec)
            self.hashes[spec.tool_id] = m
            self.lsh.insert(spec.tool_id, m)

    def __len__(self) -> int:
        return len(self.hashes)
