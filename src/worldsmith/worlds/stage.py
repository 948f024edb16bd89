"""The worlds stage: application domains inside taxonomy categories (Kimi K2's first level),
then a world schema per domain: designed by the LLM with structured output and validated,
or derived by code from the domain's entities when the design fails, so every domain has a
world that code can seed and execute. Beside them, the worlds of the domain packs (written
by hand, `worlds/<name>/`) and the worlds code infers from the crawled MCP servers' tools.

Resumable at both levels: a category whose domains are stored is not asked again, a domain
whose world is stored neither. A refused design is recorded in `rejections` (and in the
world's `problem`), a failed call too; the world is derived either way.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import yaml

from worldsmith.context import RunContext
from worldsmith.mcp.snapshot import load_snapshot_specs
from worldsmith.progress import gather_with_progress
from worldsmith.records import Domain, Rejection, World, content_id
from worldsmith.stage import Shard, Stage
from worldsmith.worldmodel import catalog, packs
from worldsmith.worldmodel.coherence import world_incoherence
from worldsmith.worldmodel.schema import derive_world, design_schema, plural, world_from_design, world_id_for
from worldsmith.worlds.stats import SECTIONS

DOMAINS_SCHEMA = {
    "type": "object",
    "properties": {
        "domains": {
            "type": "array",
            "minItems": 1,
            "maxItems": 8,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 3, "maxLength": 60},
                    "description": {"type": "string", "minLength": 10, "maxLength": 300},
                    "entities": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": 5,
                        "items": {"type": "string", "minLength": 2, "maxLength": 40},
                    },
                },
                "required": ["name", "description", "entities"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["domains"],
    "additionalProperties": False,
}
ENTITY = re.compile(r"^[a-z]{3,16}( [a-z]{3,16})?$")  # one or two plain words: what a collection is called


def load_taxonomy(path: Path) -> list[dict[str, Any]]:
    data = yaml.safe_load(path.read_text()) or {}
    cats = data.get("categories")
    if not isinstance(cats, list) or not cats:
        raise ValueError(f"{path}: expected a non-empty `categories:` list")
    out = []
    for i, c in enumerate(cats):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise ValueError(f"{path}: categories[{i}] needs a `name`")
        out.append(
            {
                "name": c["name"],
                "hint": c.get("hint", ""),
                "example_domains": list(c.get("example_domains", [])),
                "entities": [str(e) for e in c.get("entities", [])],
            }
        )
    return out


def usable_entities(proposed: list[str], fallback: list[str]) -> list[str]:
    """The model's entities that read as collection names; the category's own when fewer than two do."""
    seen, out = set(), []
    for e in proposed:
        name = " ".join(e.lower().split())
        if ENTITY.match(name) and name.endswith("s") and plural(name) not in seen:  # collections are plural nouns
            seen.add(plural(name))
            out.append(name)
    return out if len(out) >= 2 else list(fallback) or out


async def make_worlds(ctx: RunContext) -> dict[str, Any]:
    cfg = ctx.cfg.worlds
    taxonomy = load_taxonomy(ctx.path(cfg.taxonomy_file))
    categories = taxonomy[: cfg.categories] if cfg.categories else taxonomy
    counts = {"failed_calls": 0, "designs_refused": 0, "designs_incoherent": 0, "incoherent_dropped": 0}
    rejections = ctx.store.writer(Rejection, flush_every=16)
    domain_writer = ctx.store.writer(Domain, flush_every=1)
    world_writer = ctx.store.writer(World, flush_every=1)
    today = cfg.today.isoformat()

    def reject(subject: str, reason: str, detail: str, payload: Any, kind: str = "llm_output") -> None:
        """A failed call (llm_output) or a refused design (world_design), with its reason and the model's output."""
        rejections.add(
            Rejection(
                rejection_id=content_id("world", subject, reason, detail, prefix="rej_"),
                kind=kind,
                subject=subject,
                reason=reason,
                detail=detail,
                payload=payload,
            )
        )

    async with ctx.client() as client:
        by_cat: dict[str, list[Domain]] = {}
        for d in ctx.store.read(Domain):
            by_cat.setdefault(d.category, []).append(d)

        async def domains_for(cat: dict[str, Any]) -> list[Domain]:
            msgs = ctx.prompts.render_messages(
                "evolve_domains", category=cat, count=cfg.domains_per_category, existing=[]
            )
            r = await client.structured("tool_evolver", msgs, DOMAINS_SCHEMA, name="domains", seed=ctx.seed)
            if not r.ok:
                counts["failed_calls"] += 1
                reject(f"domains/{cat['name']}", r.error_kind or "error", r.error or "", {"raw": r.raw})
                return []
            out, names = [], set()
            for i, d in enumerate(r.data["domains"][: cfg.domains_per_category]):
                if d["name"].lower() in names:
                    continue
                names.add(d["name"].lower())
                out.append(
                    Domain(
                        domain_id=content_id(ctx.seed, cat["name"], i, prefix="dom_"),
                        category=cat["name"],
                        name=d["name"].strip(),
                        description=d["description"].strip(),
                        entities=usable_entities(d["entities"], cat["entities"]),
                    )
                )
            for d in out:
                domain_writer.add(d)
            return out

        todo = [c for c in categories if c["name"] not in by_cat]
        with domain_writer, rejections:
            for found in await gather_with_progress(
                "worlds: domains", [domains_for(c) for c in todo], total=len(todo), failed=lambda ds: not ds
            ):
                for d in found:
                    by_cat.setdefault(d.category, []).append(d)
        domains = [d for c in categories for d in by_cat.get(c["name"], [])]

        done = ctx.store.existing_ids(World)

        async def world_for(domain: Domain) -> World:
            if cfg.design == "derived":
                return derive_world(domain, today)
            msgs = ctx.prompts.render_messages(
                "world_design", domain=domain, collections=[plural(e) for e in domain.entities]
            )
            r = await client.structured(
                "tool_evolver", msgs, design_schema(domain.entities), name="world", seed=ctx.seed
            )
            if not r.ok:
                counts["failed_calls"] += 1
                reject(
                    f"world/{domain.name}",
                    r.error_kind or "error",
                    r.error or "",
                    {"raw": r.raw, "domain_id": domain.domain_id},
                )
                return derive_world(domain, today, problem=f"design call failed: {r.error_kind}")
            world, problem = world_from_design(domain, r.data, today)
            incoherent = world_incoherence(world) if world is not None else None
            if incoherent:  # it runs, but its lifecycles or types do not fit what it is about
                counts["designs_incoherent"] += 1
                reject(
                    f"world/{domain.name}",
                    "incoherent_design",
                    incoherent,
                    {"design": r.data, "domain_id": domain.domain_id},
                    kind="world_coherence",
                )
                return derive_world(domain, today, problem=f"incoherent: {incoherent}")
            if world is None:
                counts["designs_refused"] += 1
                reject(
                    f"world/{domain.name}",
                    "invalid_design",
                    problem or "",
                    {"design": r.data, "domain_id": domain.domain_id},
                    kind="world_design",
                )
                return derive_world(domain, today, problem=problem)
            return world

        jobs = [world_for(d) for d in domains if world_id_for(d) not in done]
        with world_writer, rejections:
            for w in await gather_with_progress(
                "worlds: schemas", jobs, total=len(jobs), failed=lambda w: w.source != "llm"
            ):
                world_writer.add(w)
            stored = ctx.store.existing_ids(World)
            for w in (*pack_worlds(ctx), *crawled_worlds(ctx)):
                if w.world_id in stored:
                    continue
                incoherent = world_incoherence(w)
                if incoherent:  # a pack's tests keep it coherent; an inferred world can still miss
                    counts["incoherent_dropped"] += 1
                    reject(
                        f"world/{w.domain}", "incoherent_world", incoherent, {"world_id": w.world_id}, "world_coherence"
                    )
                    continue
                world_writer.add(w)
    worlds = ctx.store.read(World)
    return {
        "domains": len(domains),
        "worlds": len(worlds),
        "designed": sum(w.source == "llm" for w in worlds),
        "derived": sum(w.source == "derived" for w in worlds),
        "packs": sum(w.source == "pack" for w in worlds),
        "crawled": sum(w.source == "crawled" for w in worlds),
        "collections": sum(len(w.collections) for w in worlds),
        **counts,
    }


def pack_worlds(ctx: RunContext) -> list[World]:
    """The worlds of the configured domain packs (worlds/<name>/), as written; each stores its folder
    relative to worlds.packs_dir (`packs.portable`: the readers `locate` it against theirs)."""
    cfg = ctx.cfg.worlds
    root = ctx.path(cfg.packs_dir)
    return [packs.portable(p.world, root) for p in catalog.packs(root, cfg.packs, cfg.today.isoformat())]


def crawled_worlds(ctx: RunContext) -> list[World]:
    """The worlds code infers from the crawl snapshot's servers (the tools stage binds their tools)."""
    cfg, tcfg = ctx.cfg.worlds, ctx.cfg.tools
    if not cfg.crawled_min_tools:
        return []
    snapshot = load_snapshot_specs(ctx.path(tcfg.snapshot_dir), ctx.path(tcfg.servers_file))
    return [i.world for i in catalog.crawled(snapshot, cfg.today.isoformat(), cfg.crawled_min_tools) if i.world]


def run(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    return asyncio.run(make_worlds(ctx))


STAGE = Stage(
    "worlds",
    "Domains per taxonomy category and a world schema per domain: typed collections, keys, references, enums "
    "with transitions, and rules.",
    run,
    section="worlds",
    totals=frozenset({"domains", "worlds", "designed", "derived", "packs", "crawled", "collections"}),
    stats=SECTIONS,
)
