"""The tools stage: the real MCP tools of the committed crawl snapshot, then evolved ones;
every spec validated and de-duplicated before it is stored."""

from __future__ import annotations

import asyncio
from typing import Any

from worldsmith.context import RunContext
from worldsmith.mcp.snapshot import load_snapshot_specs
from worldsmith.records import Rejection, ToolSpec, World
from worldsmith.stage import Shard, Stage
from worldsmith.tools.dedup import NearDuplicateIndex
from worldsmith.tools.evolve import ToolSink, evolve
from worldsmith.tools.stats import SECTIONS
from worldsmith.toolspec import ValidationLimits, crawled_binding, dedup_key
from worldsmith.worldmodel import catalog
from worldsmith.worldmodel.infer import InferredWorld, binding_coverage, infer_worlds


def _sink(ctx: RunContext) -> ToolSink:
    tcfg = ctx.cfg.tools
    near = NearDuplicateIndex(threshold=tcfg.near_duplicate_threshold)
    exact: dict[str, str] = {}
    for t in ctx.store.read(ToolSpec):  # a resumed run knows what it already kept
        exact[dedup_key(t)] = t.tool_id
        near.add(t)
    return ToolSink(ctx, ValidationLimits(max_spec_bytes=tcfg.max_spec_bytes), near, exact)


def bind_crawled(real: list[ToolSpec], inferred: list[InferredWorld]) -> list[ToolSpec]:
    """The crawled tools with the binding their server's inferred world gives them (code runs them
    there), or the reason none does in `extra.unbound` (the LLM tool simulator plays them)."""
    worlds = {i.world.world_id: i.world for i in inferred if i.world is not None}
    bound = {tid: b for i in inferred for tid, b in i.bindings.items() if b.world_id in worlds}
    why = {tid: reason for i in inferred for tid, reason in i.unbound.items()}
    out = []
    for t in real:
        b = bound.get(t.tool_id)
        if b is not None:
            out.append(t.model_copy(update={"binding": b, "domain": worlds[b.world_id].domain}))
        else:
            reason = why.get(t.tool_id) or "world_too_small: its server's world has too few bound tools"
            out.append(t.model_copy(update={"extra": {**t.extra, "unbound": reason}}))
    return out


def run(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    """Real tools from the snapshot (bound to their server's inferred world where code can run
    them), the domain packs' tools, then evolved ones; each validated and de-duplicated."""
    tcfg, wcfg = ctx.cfg.tools, ctx.cfg.worlds
    sink = _sink(ctx)
    snapshot = load_snapshot_specs(ctx.path(tcfg.snapshot_dir), ctx.path(tcfg.servers_file))
    today = wcfg.today.isoformat()
    every = infer_worlds(snapshot, today=today)
    # bound only to the worlds the worlds stage stored (it drops an incoherent one)
    stored = ctx.store.existing_ids(World)
    inferred = [i for i in catalog.kept(every, wcfg.crawled_min_tools) if i.world and i.world.world_id in stored]
    coverage = binding_coverage(every, snapshot)
    real = bind_crawled(snapshot, inferred)
    real.sort(key=lambda t: (t.server or "", t.name))
    if tcfg.max_real_tools:
        real = real[: tcfg.max_real_tools]
    real_kept = sum(sink.offer(t) for t in real)
    pack_tools = [t for p in catalog.packs(ctx.path(wcfg.packs_dir), wcfg.packs, today) for t in p.tools]
    counts: dict[str, Any] = {
        "real_offered": len(real),
        "real_kept": real_kept,
        "real_bound": sum(t.binding is not None for t in real),
        "servers_with_world": coverage["servers_with_world_3plus"],
        "pack_tools": sum(sink.offer(t) for t in pack_tools),
    }
    try:
        if tcfg.evolve.enabled:
            counts.update(asyncio.run(evolve(ctx, sink)))
    finally:
        sink.close()
    stored = ctx.store.read(ToolSpec)
    counts["tools_total"] = len(stored)
    counts["bound"] = sum(t.binding is not None and t.binding.executed for t in stored)
    counts.update(crawled_binding(stored))  # the report reads the same figure from the same function
    counts["rejected"] = sum(1 for r in ctx.store.read(Rejection) if r.kind in ("tool_spec", "llm_output"))
    return counts


STAGE = Stage(
    "tools",
    "Real MCP tools from the crawl snapshot, bound to their server's inferred world where code can run them, the "
    "domain packs' tools, then tools designed against each world and evolved; each validated and de-duplicated.",
    run,
    section="tools",
    totals=frozenset(
        {
            "tools_total",
            "bound",
            "rejected",
            "crawled_tools",
            "crawled_bound",
            "crawled_bound_share",
            "servers_with_world",
        }
    ),
    stats=SECTIONS,
)
