"""The tool-repository stages as the pipeline runs them: `tools` and `bundles`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import yaml

from worldsmith.context import RunContext
from worldsmith.records import Bundle, Rejection, ToolSpec
from worldsmith.specs.dedup import NearDuplicateIndex
from worldsmith.specs.evolve import ToolSink, evolve
from worldsmith.specs.graph import build_graph, coverage, sample_bundles
from worldsmith.specs.normalize import ValidationLimits, dedup_key, from_mcp

SNAPSHOT_TOOLS = "tools.jsonl"


def load_snapshot_specs(snapshot_dir: Path, servers_file: Path | None = None) -> list[ToolSpec]:
    """ToolSpecs from the committed crawl snapshot (no server is started)."""
    path = snapshot_dir / SNAPSHOT_TOOLS
    if not path.exists():
        return []
    categories: dict[str, str] = {}
    if servers_file and servers_file.exists():
        for entry in (yaml.safe_load(servers_file.read_text()) or {}).get("servers", []) or []:
            if isinstance(entry, dict) and entry.get("category"):
                categories[entry["name"]] = entry["category"]
    specs = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        extra = {k: row.get(k) for k in ("package", "package_version", "protocol_version", "crawled_at") if row.get(k) is not None}
        specs.append(from_mcp(row["tool"], server=row["server"], source="mcp", category=categories.get(row["server"]), extra=extra))
    return specs


def _sink(ctx: RunContext) -> ToolSink:
    tcfg = ctx.cfg.tools
    near = NearDuplicateIndex(threshold=tcfg.near_duplicate_threshold)
    exact: dict[str, str] = {}
    for t in ctx.store.read(ToolSpec):  # a resumed run knows what it already kept
        exact[dedup_key(t)] = t.tool_id
        near.add(t)
    return ToolSink(ctx, ValidationLimits(max_spec_bytes=tcfg.max_spec_bytes), near, exact)


def run_tools(ctx: RunContext) -> dict[str, Any]:
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
    counts["rejected"] = sum(1 for r in ctx.store.read(Rejection) if r.kind in ("tool_spec", "llm_output"))
    return counts


def run_bundles(ctx: RunContext) -> dict[str, Any]:
    tools = ctx.store.read(ToolSpec)
    graph = build_graph(tools)
    # sampled once per run: a resumed run whose tool set grew (a retried evolution) must not
    # draw another `count` bundles from the changed graph
    if len(ctx.store.read(Bundle)) < ctx.cfg.tools.bundles.count:
        ctx.store.append(sample_bundles(graph, ctx.cfg.tools.bundles, seed=ctx.seed))
    stored = ctx.store.read(Bundle)
    cov = coverage(tools, stored)
    return {
        "bundles": len(stored),
        "graph_nodes": graph.number_of_nodes(),
        "graph_edges": graph.number_of_edges(),
        "coverage": cov.get("all", 0.0),
        "mixed_real_synthetic": sum(1 for b in stored if len(set(b.sources)) > 1),
    }
