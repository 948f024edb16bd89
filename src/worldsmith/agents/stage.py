"""Agents: for each tool bundle, a system prompt whose rules are its world's (tau2-bench's
policy document): the transitions the executor enforces, the records it must not delete or
edit (which only the agent enforces: a refusal task tests it), and, for strict agents, the
tools that need the user's confirmation. The LLM adds only the role's voice (a role sentence
and guidelines), checked to speak of the domain's records; a voice that does not is replaced
by a plain one (recorded as `policies.source`). Style and strictness are drawn per bundle
(seeded), so agents differ."""

from __future__ import annotations

import asyncio
import datetime as dt
import random
import re
from collections import Counter
from typing import Any

from worldsmith.context import RunContext
from worldsmith.progress import gather_with_progress
from worldsmith.records import Agent, Bundle, Policies, PolicyRule, Rejection, ToolSpec, World, content_id
from worldsmith.stage import Shard, Stage, holds
from worldsmith.toolspec import tool_view

VOICE_SCHEMA = {
    "type": "object",
    "properties": {
        "role": {"type": "string", "minLength": 20, "maxLength": 300},
        "guidelines": {"type": "array", "maxItems": 3, "items": {"type": "string", "minLength": 12, "maxLength": 160}},
    },
    "required": ["role", "guidelines"],
    "additionalProperties": False,
}


def world_of(core: list[ToolSpec]) -> str | None:
    """The world most of the bundle's bound tools act on."""
    worlds = Counter(t.binding.world_id for t in core if t.binding is not None and t.binding.executed)
    return worlds.most_common(1)[0][0] if worlds else None


def rules_for(world: World | None, core: list[ToolSpec]) -> list[PolicyRule]:
    """The world's rules about the collections the agent's tools act on."""
    if world is None:
        return []
    served = {t.binding.collection for t in core if t.binding is not None and t.binding.world_id == world.world_id}
    return [r for r in world.rules if r.collection in served]


def voice_fits(role: str, guidelines: list[str], world: World | None, domain: str) -> list[str] | None:
    """The guidelines to keep when the role speaks of the domain's records, else None."""
    words = {
        domain.lower(),
        *(w for c in (world.collections if world else []) for w in (c.name, c.entity, c.name.replace("_", " "))),
    }
    if not any(w and w in role.lower() for w in words) or re.search(r"(.)\1{3}|https?:", role):
        return None
    return [g.strip() for g in guidelines if len(g.split()) >= 4 and not re.search(r"(.)\1{3}|https?:", g)]


def agent_id_for(bundle: Bundle) -> str:
    return content_id(bundle.bundle_id, "agent", prefix="agt_")


async def make_agents(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    cfg = ctx.cfg.agents
    tools = {t.tool_id: t for t in ctx.store.read(ToolSpec)}
    worlds = {w.world_id: w for w in ctx.store.read(World)}
    bundles = ctx.store.read(Bundle)
    done = ctx.store.existing_ids(Agent)
    todo = [b for b in bundles if agent_id_for(b) not in done and holds(shard, b.bundle_id)]
    rejections = ctx.store.writer(Rejection, flush_every=16)
    writer = ctx.store.writer(Agent, flush_every=16)

    async def one(client, bundle: Bundle) -> bool:
        rng = random.Random(bundle.bundle_id)
        style, strictness = rng.choice(cfg.styles), rng.choice(cfg.strictness)
        members = [tools[t] for t in bundle.tool_ids + bundle.distractor_ids if t in tools]
        core = [tools[t] for t in bundle.tool_ids if t in tools]
        world = worlds.get(world_of(core) or "")
        domain = world.domain if world else bundle.domain
        rules = rules_for(world, core)
        role, guidelines, source = "", [], "template"  # an empty role: the system prompt's plain one
        if cfg.voice == "llm":
            msgs = ctx.prompts.render_messages(
                "agent_writer",
                domain=domain,
                tools=[tool_view(t) for t in core],
                strictness=strictness,
                rules=[r.text for r in rules],
            )
            r = await client.structured("task_writer", msgs, VOICE_SCHEMA, name="agent", seed=ctx.seed)
            if not r.ok:
                rejections.add(
                    Rejection(
                        rejection_id=content_id("agent", bundle.bundle_id, r.error, prefix="rej_"),
                        kind="llm_output",
                        subject=f"agent/{bundle.bundle_id}",
                        reason=r.error_kind or "error",
                        detail=r.error or "",
                        payload={"raw": r.raw, "bundle_id": bundle.bundle_id},
                    )
                )
            kept = voice_fits(r.data["role"], r.data["guidelines"], world, domain) if r.ok else None
            if kept is not None:
                role, guidelines, source = " ".join(r.data["role"].split()), kept, "llm"
        confirm = sorted(t.name for t in core if t.hints.destructiveHint) if strictness == "strict" else []
        policies = Policies(
            role=role,
            confirm_before=confirm,
            never=[r.text for r in rules if r.kind == "forbid"],
            guidelines=guidelines,
            rules=[r.text for r in rules if r.kind != "forbid"],
            rule_ids=[r.rule_id for r in rules],
            policy=world.policy if world else "",
            source=source,
        )
        (system,) = [
            m["content"]
            for m in ctx.prompts.render_messages(
                "agent_system_prompt",
                style=style,
                strictness=strictness,
                domain=domain,
                collections=[c.name.replace("_", " ") for c in (world.collections if world else [])],
                today=long_date(world.today) if world else None,  # what a deployed assistant is told
                **policies.model_dump(exclude={"rule_ids", "source"}),
            )
        ]
        writer.add(
            Agent(
                agent_id=agent_id_for(bundle),
                bundle_id=bundle.bundle_id,
                system_prompt=system,
                tool_ids=[t.tool_id for t in members],
                domain=domain,
                world_id=world.world_id if world else None,
                style=style,
                strictness=strictness,
                policies=policies,
            )
        )
        return source == "llm"

    async with ctx.client() as client:
        with writer, rejections:
            results = await gather_with_progress("agents", [one(client, b) for b in todo], total=len(todo))
    return {"agents": ctx.store.count(Agent), "new": len(results), "voice_by_llm": sum(results)}


def long_date(iso: str) -> str:
    """2026-05-12 -> "Tuesday, May 12, 2026": today's date as the agent's system prompt gives it."""
    day = dt.date.fromisoformat(iso)
    return f"{day:%A}, {day:%B} {day.day}, {day.year}"


def run(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    return asyncio.run(make_agents(ctx, shard))


STAGE = Stage(
    "agents",
    "An agent per tool bundle: its world's rules and an LLM-written voice rendered into a system prompt.",
    run,
    section="agents",
    splits_by=(Bundle, "bundle_id"),
    totals=frozenset({"agents"}),
)
