"""A stage, declared once. The pipeline's loop, the CLI's commands and the Prefect flows are
all built from the tuple of declarations in `pipeline.STAGES`, so adding a stage means one
module (its `run` and its `STAGE`), one record and one config section.

A stage that splits (`splits_by`) works on shards of its input records: a stable partition
by CRC32 of one field, so a shard's inputs, and the cache key the flows give it, do not move
between runs. The parts' counts are merged: amounts add up, run totals (`totals`, read from
the store by every part) are taken from the last part.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from worldsmith.records import Record, content_id

if TYPE_CHECKING:
    from worldsmith.config import PipelineConfig
    from worldsmith.context import RunContext

Counts = dict[str, Any]


@dataclass(frozen=True)
class Shard:
    """Part `index` of `count` of a stage's inputs; `inputs_hash` names the input ids it holds."""

    index: int = 0
    count: int = 1
    inputs_hash: str = ""

    def holds(self, record_id: str) -> bool:
        return self.count <= 1 or zlib.crc32(record_id.encode()) % self.count == self.index


WHOLE = Shard()


def holds(shard: Shard | None, record_id: str) -> bool:
    """Whether `record_id` is in `shard` (None: the whole stage)."""
    return shard is None or shard.holds(record_id)


@dataclass(frozen=True)
class Stage:
    name: str  # CLI command group, Prefect flow, run.json key
    summary: str  # one line: the CLI's help and the flow's description
    run: Callable[..., Counts]  # run(ctx, shard=None) -> counts
    section: str  # the config section whose `enabled` switches the stage
    splits_by: tuple[type[Record], str] | None = None  # shards of these input records, by this field
    # counts that are run totals, not per-shard amounts ("drop:" = every key so prefixed)
    totals: frozenset[str] = frozenset()
    # titled SQL for `worldsmith <name> stats` ($run = the run id)
    stats: Mapping[str, str] = field(default_factory=dict)

    def enabled(self, cfg: PipelineConfig) -> bool:
        return bool(getattr(getattr(cfg, self.section, None), "enabled", True))

    def plan(self, ctx: RunContext, shard_size: int) -> list[Shard]:
        """The shards of this stage's inputs (one whole shard for a stage that does not split)."""
        if self.splits_by is None:
            return [WHOLE]
        record_type, key = self.splits_by
        keys = sorted({row[key] for row in ctx.store.read_rows(record_type)})
        count = max(1, -(-len(keys) // max(shard_size, 1)))
        return [Shard(i, count, content_id([k for k in keys if Shard(i, count).holds(k)])) for i in range(count)]

    def is_total(self, key: str) -> bool:
        return key in self.totals or any(t.endswith(":") and key.startswith(t) for t in self.totals)

    def merge(self, parts: list[Counts]) -> Counts:
        """The counts of this stage's parts together: amounts added up, totals and text from the last part."""
        merged: Counts = {}
        for part in parts:
            for k, v in part.items():
                amount = isinstance(v, int) and not isinstance(v, bool) and isinstance(merged.get(k, 0), int)
                merged[k] = merged.get(k, 0) + v if amount and not self.is_total(k) else v
        return merged
