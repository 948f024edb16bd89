"""The bundles stage: a networkx tool graph of the run's tools, and coherent tool bundles
drawn from it by random walks (each the seed of one agent)."""

from __future__ import annotations

from typing import Any

from worldsmith.bundles.graph import build_graph, chain_partners, coverage, sample_bundles
from worldsmith.bundles.stats import SECTIONS
from worldsmith.context import RunContext
from worldsmith.records import Bundle, ToolSpec, World
from worldsmith.stage import Shard, Stage
from worldsmith.worldmodel.bindings import chain_pairs


def run(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    tools = ctx.store.read(ToolSpec)
    graph = build_graph(tools)
    # sampled once per run (one append, so any stored bundle means the draw finished): a resumed
    # run must not draw again, neither from a tool set that grew (a retried evolution) nor when
    # the draw made fewer than `count` distinct bundles, which once added a second set of agents
    if not ctx.store.count(Bundle):
        partners = None
        if "dependent_calls" in ctx.cfg.tasks.difficulties:  # each bundle gets a chain to draw those tasks on
            worlds = {w.world_id: w for w in ctx.store.read(World)}
            by_world: dict[str, list[ToolSpec]] = {}
            for t in tools:
                if t.binding is not None and t.binding.executed and t.binding.world_id in worlds:
                    by_world.setdefault(t.binding.world_id, []).append(t)
            partners = chain_partners(
                (a.tool_id, b.tool_id) for w, ts in sorted(by_world.items()) for a, b in chain_pairs(worlds[w], ts)
            )
        ctx.store.append(sample_bundles(graph, ctx.cfg.bundles, seed=ctx.seed, partners=partners))
    stored = ctx.store.read(Bundle)
    cov = coverage(tools, stored)
    return {
        "bundles": len(stored),
        "graph_nodes": graph.number_of_nodes(),
        "graph_edges": graph.number_of_edges(),
        "coverage": cov.get("all", 0.0),
        "mixed_real_synthetic": sum(1 for b in stored if len(set(b.sources)) > 1),
        # bundles on a crawled server's world, and the share of the bundles' tools that are real MCP tools
        "on_crawled_worlds": sum(1 for b in stored if set(b.sources) == {"mcp"}),
        "real_share": round(
            sum(s == "mcp" for b in stored for s in b.sources) / max(1, sum(len(b.sources) for b in stored)), 3
        ),
    }


STAGE = Stage(
    "bundles",
    "Tool bundles drawn from the tool graph (random walks, each in one world: designed, a pack's or a crawled "
    "server's).",
    run,
    section="bundles",
    totals=frozenset(
        {"bundles", "graph_nodes", "graph_edges", "coverage", "mixed_real_synthetic", "on_crawled_worlds", "real_share"}
    ),
    stats=SECTIONS,
)
