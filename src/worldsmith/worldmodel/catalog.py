"""Where the worlds beside the designed ones come from, read the same way by the worlds stage
(which stores them) and the tools stage (which stores their tools): the domain packs a person
wrote (`worlds/<name>/`) and the worlds code infers from the crawled MCP servers' tools. Both
are deterministic, so the two stages agree without passing anything but the config."""

from __future__ import annotations

from pathlib import Path

from worldsmith.records import ToolSpec
from worldsmith.worldmodel.infer import InferredWorld, infer_worlds
from worldsmith.worldmodel.packs import Pack, PackError, load_packs


def packs(packs_dir: Path, names: list[str], today: str) -> list[Pack]:
    """The configured packs: `names` is [all], [] or folder names in `packs_dir`."""
    if not names:
        return []
    if not packs_dir.is_dir():  # else [all] would read as "no packs" and the run would quietly go without them
        raise PackError(
            f"worlds.packs_dir: no folder {packs_dir} (worlds.packs is {names}; a relative path is read from the "
            "config's folder; worlds.packs: [] runs without packs)"
        )
    return load_packs(packs_dir, None if names == ["all"] else names, today=today)


def crawled(snapshot: list[ToolSpec], today: str, min_tools: int) -> list[InferredWorld]:
    """The crawled servers' inferred worlds with at least `min_tools` bound tools (0: none)."""
    return kept(infer_worlds(snapshot, today=today), min_tools) if min_tools else []


def kept(inferred: list[InferredWorld], min_tools: int) -> list[InferredWorld]:
    """The inferred worlds a run uses: those with at least `min_tools` bound tools (0: none)."""
    return [i for i in inferred if min_tools and i.world is not None and len(i.bindings) >= min_tools]
