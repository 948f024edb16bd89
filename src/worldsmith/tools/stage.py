"""The tools stage: the real MCP tools of the committed crawl snapshot, then evolved ones;
every spec validated and de-duplicated before it is stored."""

from __future__ import annotations

import asyncio
from typing import Any

from worldsmith.context import RunContext
from worldsmith.mcp.snapshot import load_snapshot_specs
from worldsmith.records import Rejection, ToolSpec
from worldsmith.stage import Shard, Stage
from worldsmith.tools.dedup import NearDuplicateIndex
from worldsmith.tools.evolve import ToolSink, evolve
from worldsmith.tools.stats import SECTIONS
from worldsmith.toolspec import ValidationLimits, dedup_key


def _sink(ctx: RunContext) -> ToolSink:
    tcfg = ctx.cfg.tools
    near = NearDuplicateIndex(threshold=tcfg.near_duplicate_threshold)
    exact: dict[str, str] = {}
    for t in ctx.store.read(ToolSpec):  # a resumed run knows what it already kept
        exact[dedup_key(t)] = t.tool_id
        near.add(t)
    return ToolSink(ctx, ValidationLimits(max_spec_bytes=tcfg.max_spec_bytes), near, exact)


def run(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    """Real tools from the snapshot, then evolved ones; each validated and de-duplicated."""
    tcfg = ctx.cfg.tools
    sink = _sink(ctx)
    real = load_snapshot_specs(ctx.path(tcfg.snapshot_dir), ctx.path(tcfg.servers_file))
    real.sort(key=lambda t: (t.server or "", t.name))
    if tcfg.max_real_tools:
        real = real[: tcfg.max_real_tools]
    real_kept = sum(sink.offer(t) for t in real)
    counts: dict[str, Any] = {"real_offered": len(real), "real_kept": real_kept}
    try:
        if tcfg.evolve.enabled:
            counts.update(asyncio.run(evolve(ctx, sink)))
    finally:
        sink.close()
    stored = ctx.store.read(ToolSpec)
    counts["tools_total"] = len(stored)
    counts["bound"] = sum(t.binding is not None and t.binding.action != "custom" for t in stored)
    counts["rejected"] = sum(1 for r in ctx.store.read(Rejection) if r.kind in ("tool_spec", "llm_output"))
    return counts


STAGE = Stage(
    "tools",
    "Real MCP tools from the crawl snapshot, then tools designed against each world and evolved; each validated "
    "and de-duplicated.",
    run,
    section="tools",
    totals=frozenset({"tools_total", "bound", "rejected"}),
    stats=SECTIONS,
)
