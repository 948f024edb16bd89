"""Near-duplicate detection by MinHash LSH over word shingles (tools, and SFT examples).

Why MinHash and not embeddings: it is deterministic, needs no model download (this
project runs with no model hub), costs microseconds per item on a CPU, and LSH keeps the
lookup sub-linear, so 20,000+ items stay cheap. It catches copies with small rewordings;
paraphrases with no shared wording pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from datasketch import LeanMinHash, MinHash, MinHashLSH

_WORD = re.compile(r"[a-z0-9]+")


def word_shingles(text: str, k: int = 3) -> set[str]:
    words = _WORD.findall(text.lower())
    return {" ".join(words[i : i + k]) for i in range(max(1, len(words) - k + 1))}


class MinHashIndex:
    """MinHash LSH keyed by id. Per item it keeps one LeanMinHash (~1 kB at 128 permutations);
    the permutations are made once, not per item, and a find() followed by add() of the same
    key hashes the shingles once."""

    def __init__(self, threshold: float = 0.8, num_perm: int = 128):
        self.threshold = threshold
        self.num_perm = num_perm
        self.lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
        self.hashes: dict[str, LeanMinHash] = {}
        template = MinHash(num_perm=num_perm, seed=1)
        self._permutations, self._scheme = template.permutations, template.scheme
        self._last: tuple[str, LeanMinHash] | None = None

    def minhash(self, shingles: Iterable[str]) -> LeanMinHash:
        m = MinHash(num_perm=self.num_perm, seed=1, permutations=self._permutations, scheme=self._scheme)
        m.update_batch([s.encode() for s in shingles])
        return LeanMinHash(m)

    def _minhash_for(self, key: str, shingles: Iterable[str]) -> LeanMinHash:
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        m = self.minhash(shingles)
        self._last = (key, m)
        return m

    def find(self, key: str, shingles: Iterable[str]) -> tuple[str, float] | None:
        """The most similar indexed item at or over the threshold, with its estimated Jaccard."""
        m = self._minhash_for(key, shingles)
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
            m = self._minhash_for(key, shingles)
            self.hashes[key] = m
            self.lsh.insert(key, m)
        self._last = None

    def __len__(self) -> int:
        return len(self.hashes)
