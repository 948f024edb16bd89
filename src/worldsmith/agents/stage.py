"""Agents: for each tool bundle the LLM designs a role and policies; the system prompt is
rendered from them with `prompts/agent_system_prompt.jinja`. Style and strictness are drawn
per bundle from the config (seeded), so agents differ."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from worldsmith.context import RunContext
from worldsmith.progress import gather_with_progress
from worldsmith.records import Agent, Bundle, Policies, Rejection, ToolSpec, content_id
from worldsmith.stage import Shard, Stage, holds


def agent_schema(tool_names: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "role": {"type": "string", "minLength": 20, "maxLength": 400},
            "confirm_before": {"type": "array", "maxItems": 4, "items": {"enum": tool_names}},
            "never": {"type": "array", "maxItems": 3, "items": {"type": "string", "minLength": 5, "maxLength": 160}},
            "guidelines": {"type": "array", "maxItems": 3, "items": {"type": "string", "minLength": 5, "maxLength": 160}},
        },
        "required": ["role", "confirm_before", "never", "guidelines"],
        "additionalProperties": False,
    }


def tool_view(t: ToolSpec) -> dict[str, Any]:
    return {"name": t.name, "description": t.description, "destructive": bool(t.annotations.get("destructiveHint")),
            "read_only": bool(t.annotations.get("readOnlyHint")), "input_schema": t.input_schema}  # fmt: skip


def agent_id_for(bundle: Bundle) -> str:
    return content_id(bundle.bundle_id, "agent", prefix="agt_")


async def make_agents(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    cfg = ctx.cfg.agents
    tools = {t.tool_id: t for t in ctx.store.read(ToolSpec)}
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
        names = sorted({t.name for t in members})
        msgs = ctx.prompts.render_messages("agent_writer", domain=bundle.domain, tools=[tool_view(t) for t in core], strictness=strictness)
        r = await client.structured("task_writer", msgs, agent_schema(names), name="agent", seed=ctx.seed)
        if not r.ok:
            rejections.add(Rejection(rejection_id=content_id("agent", bundle.bundle_id, r.error, prefix="rej_"), kind="llm_output",
                                     subject=f"agent/{bundle.bundle_id}", reason=r.error_kind or "error", detail=r.error or "",
                                     payload={"raw": r.raw, "bundle_id": bundle.bundle_id}))  # fmt: skip
            return False
        d = r.data
        confirm = set(d["confirm_before"])
        if strictness == "strict":  # destructive tools always need confirmation under a strict policy, whatever the model wrote
            confirm |= {t.name for t in core if t.annotations.get("destructiveHint")}
        policies = Policies(role=d["role"].strip(), confirm_before=sorted(confirm), never=d["never"], guidelines=d["guidelines"])
        (system,) = [m["content"] for m in ctx.prompts.render_messages(
            "agent_system_prompt", style=style, strictness=strictness, **policies.model_dump())]  # fmt: skip
        writer.add(Agent(agent_id=agent_id_for(bundle), bundle_id=bundle.bundle_id, system_prompt=system,
                         tool_ids=[t.tool_id for t in members], domain=bundle.domain, style=style,
                         strictness=strictness, policies=policies))  # fmt: skip
        return True

    async with ctx.client() as client:
        with writer, rejections:
            results = await gather_with_progress("agents", [one(client, b) for b in todo], total=len(todo), failed=lambda ok: not ok)
    return {"agents": ctx.store.count(Agent), "new": sum(results), "failed_calls": sum(not ok for ok in results)}


def run(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    return asyncio.run(make_agents(ctx, shard))


STAGE = Stage("agents", "An agent per tool bundle: an LLM-designed role and policies rendered into a system prompt.", run, section="agents",
              splits_by=(Bundle, "bundle_id"), totals=frozenset({"agents"}))
