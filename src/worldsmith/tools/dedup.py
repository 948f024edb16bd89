"""Near-duplicate tools: MinHash LSH (see worldsmith.dedup for why) over word shingles of
name + description, plus the parameter names."""

from __future__ import annotations

from worldsmith.dedup import MinHashIndex, word_shingles
from worldsmith.records import ToolSpec


def shingles(spec: ToolSpec, k: int = 3) -> set[str]:
    params = sorted((spec.input_schema.get("properties") or {}).keys()) if isinstance(spec.input_schema, dict) else []
    return word_shingles(f"{spec.name.replace('_', ' ')} {spec.description}", k) | {f"param:{p}" for p in params}


class NearDuplicateIndex(MinHashIndex):
    """A MinHashIndex keyed by tool id."""

    def find(self, spec: ToolSpec) -> tuple[str, float] | None:  # type: ignore[override]
        return super().find(spec.tool_id, shingles(spec))

    def add(self, spec: ToolSpec) -> None:  # type: ignore[override]
        super().add(spec.tool_id, shingles(spec))
