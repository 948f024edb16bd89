"""Near-duplicate detection by MinHash LSH over word shingles (tools, and SFT examples).

Why MinHash and not embeddings: it is deterministic, needs no model download (this
project runs with no model hub), costs microseconds per item on a CPU, and LSH keeps the
lookup sub-linear, so 20,000+ items stay cheap. It catches copies with small rewordings;
paraphrases with no shared wording pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from datasketch import MinHash, MinHashLSH

_WORD = re.compile(r"[a-z0-9]+")


def word_shingles(text: str, k: int = 3) -> set[str]:
    words = _WORD.findall(text.lower())
    return {" ".join(words[i : i + k]) for i in range(max(1, len(words) - k + 1))}


class MinHashIndex:
    def __init__(self, threshold: float = 0.8, num_perm: int = 128):
        self.threshold = threshold
        self.num_perm = num_perm
        self.lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
        self.hashes: dict[str, MinHash] = {}

    def minhash(self, shingles: Iterable[str]) -> MinHash:
        m = MinHash(num_perm=self.num_perm, seed=1)
        for s in shingles:
            m.update(s.encode())
        return m

    def find(self, key: str, shingles: Iterable[str]) -> tuple[str, float] | None:
        """The most similar indexed item at or over the threshold, with its estimated Jaccard."""
        m = self.minhash(shingles)
        best = None
        for other in self.lsh.query(m):
            if other == key:
                continue
            j = m.jaccard(self.hashes[other])
            if j >= self.threshold and (best is None or j > best[1]):
                best = (other, j)
        return best

    def add(self, key: str, shingles: Iterable[str]) -> None:
        if key not in self.hashes:
            m = self.minhash(shingles)
            self.hashes[key] = m
            self.lsh.insert(key, m)

    def __len__(self) -> int:
        return len(self.hashes)
