"""The tasks stage: per agent and difficulty, a task the simulated user will bring.

Blueprint tasks (the default, `tasks/blueprint.py`): a gold chain over the agent's bound
tools is sampled on a seeded world and executed; only a chain whose calls all succeed
makes a task, and its rubric is read off the execution. Then the user's opening request is
written around the facts the user knows: by the model (`task_writer`, structured output),
checked to carry every fact the agent cannot look up and to leak none it should find out
itself; when no attempt passes, the plain request of `prompts/user_request.jinja`
(recorded as `request_source: template`). Free-form tasks (`tasks.mode: freeform`) are
written in one shot by the model and never executed (`tasks/freeform.py`).

Every task is validated before use (`tasks/validate.py`); every refusal is recorded with
its reason, and a re-run does only what is missing.
"""

from __future__ import annotations

import asyncio
import random
import re
import zlib
from collections.abc import Callable
from typing import Any

from worldsmith.answers import extract, mentions
from worldsmith.context import RunContext
from worldsmith.progress import gather_with_progress
from worldsmith.records import Agent, Persona, Rejection, Task, ToolSpec, UserGoal, World, content_id
from worldsmith.stage import Shard, Stage, holds
from worldsmith.tasks.blueprint import BlueprintFailure, Draft, blueprint_record, rubric_from, sample_blueprint
from worldsmith.tasks.freeform import write_freeform
from worldsmith.tasks.stats import SECTIONS
from worldsmith.tasks.validate import validate_task

REQUEST_SCHEMA = {
    "type": "object",
    "properties": {"request": {"type": "string", "minLength": 12, "maxLength": 400}},
    "required": ["request"],
    "additionalProperties": False,
}
PERSONAS = {
    "communication": ("brief", "casual", "formal", "chatty"),
    "patience": ("low", "medium", "high"),
    "expertise": ("novice", "intermediate", "expert"),
}


def task_id_for(agent: Agent, k: int) -> str:
    return content_id(agent.agent_id, "task", k, prefix="tsk_")


def shingles(text: str, k: int = 4) -> set[str]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {" ".join(words[i : i + k]) for i in range(len(words) - k + 1)}


def request_problems(request: str, d: Draft, scaffold: set[str] = frozenset()) -> list[str]:
    """Why a written request cannot open this task: a fact the agent needs from the user is
    missing, or a value the user cannot know (what it asks to learn, what it holds back, an id
    it was not given) is in it."""
    words = re.findall(r"[A-Za-z]{2,}", request)
    problems = [] if len(words) >= 4 else [f"is not a request in words ({len(words)} words)"]
    echoed = shingles(request) & scaffold
    if echoed:
        problems.append(f"repeats the instructions ({sorted(echoed)[0]!r})")
    # "the customer wants ..." is a task description, not the user talking (imperatives, and a CRM user
    # naming a customer record, are fine)
    third = r"\b(the|a|this) (customer|user|client) (wants|needs|asks|would|is asking|has asked|requests)\b"
    if re.search(third, request.lower()):
        problems.append("is not written by the user to the assistant (it speaks of the user in the third person)")
    if (
        d.entity
        and d.entity.lower() not in request.lower()
        and d.entity.replace("_", " ").lower() not in request.lower()
    ):
        problems.append(f"does not speak of the {d.entity}")
    problems += [f"omits {k} {v!r}" for k, v in d.facts.items() if not mentions(v, [request])[0]]
    secret = {
        **{f"the answer {k}": v for k, v in d.asked.items()},
        **{f"the withheld {k}": v for k, v in d.withheld.items()},
    }
    problems += [
        f"leaks {k} {v!r}" for k, v in secret.items() if v not in d.facts.values() and mentions(v, [request])[0]
    ]
    given = {form for v in d.facts.values() for x in extract(v) if x.kind == "id" for form in x.forms}
    problems += [
        f"names {x.raw!r}, which the user was not given"
        for x in extract(request)
        if x.kind == "id" and not x.forms & given
    ]
    return problems


async def write_request(
    ctx: RunContext,
    client,
    d: Draft,
    persona: Persona,
    world: World,
    seed: int,
    failed: Callable[[Any], None] = lambda r: None,
) -> tuple[str, str, list[str]]:
    """(request, source, problems of the refused attempts); `failed` records a call that gave no usable output."""
    cfg = ctx.cfg.tasks
    problems: list[str] = []
    # the prompt's own wording, without this task's goal and facts: a request that repeats it is the prompt read back
    blank = ctx.prompts.render_messages(
        "task_request", goal="", facts={"x": "x"}, persona=persona, domain="", withheld=["x"]
    )
    scaffold = set().union(*(shingles(m["content"]) for m in blank))
    for attempt in range(cfg.request_attempts):
        msgs = ctx.prompts.render_messages(
            "task_request", goal=d.goal, facts=d.facts, persona=persona, domain=world.domain, withheld=list(d.withheld)
        )
        r = await client.structured("task_writer", msgs, REQUEST_SCHEMA, name="request", seed=seed + attempt)
        if not r.ok:
            problems.append(f"call: {r.error_kind}")
            failed(r)
            continue
        text = " ".join(r.data["request"].split())
        found = request_problems(text, d, scaffold)
        if not found:
            return text, "llm", problems
        problems.append("; ".join(found)[:300])
    if not cfg.template_fallback:
        return "", "", problems
    (plain,) = [
        m["content"]
        for m in ctx.prompts.render_messages("user_request", goal=d.goal, facts=d.facts, difficulty=d.difficulty)
    ]
    found = request_problems(plain, d)
    if found:  # the template says what the blueprint knows; a problem here is a bug in it, recorded, not hidden
        return "", "", [*problems, "template: " + "; ".join(found)]
    return plain, "template", problems


async def make_tasks(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    cfg = ctx.cfg.tasks
    tools_by_id = {t.tool_id: t for t in ctx.store.read(ToolSpec)}
    worlds = {w.world_id: w for w in ctx.store.read(World)}
    agents = ctx.store.read(Agent)
    done = ctx.store.existing_ids(Task)
    done |= {
        r.payload.get("task_id") for r in ctx.store.read(Rejection) if r.kind == "task" and isinstance(r.payload, dict)
    }
    writer = ctx.store.writer(Task, flush_every=16)
    rejections = ctx.store.writer(Rejection, flush_every=16)
    counts = {"new": 0, "rejected": 0, "failed_calls": 0, "requests_by_llm": 0, "requests_by_template": 0}

    def reject(task_id: str, reason: str, detail: str, payload: dict[str, Any]) -> None:
        counts["rejected"] += 1
        rejections.add(
            Rejection(
                rejection_id=content_id("task", task_id, prefix="rej_"),
                kind="task",
                subject=f"task/{task_id}",
                reason=reason,
                detail=detail,
                payload={"task_id": task_id, **payload},
            )
        )

    async def blueprint_task(client, agent: Agent, tools: list[ToolSpec], difficulty: str, task_id: str) -> Task | None:
        world = worlds.get(agent.world_id or "")
        if world is None:
            reject(
                task_id,
                "no_world",
                f"agent {agent.agent_id} has no world (no bound tool in its bundle)",
                {"agent_id": agent.agent_id},
            )
            return None
        draft, failure = None, None
        for attempt in range(cfg.blueprint_attempts):
            seed = zlib.crc32(f"{ctx.seed}:{task_id}:{attempt}".encode())
            try:
                draft = sample_blueprint(world, tools, difficulty, seed, tuple(cfg.world_records))
                break
            except BlueprintFailure as exc:
                failure = exc
        if draft is None:
            reject(task_id, failure.reason, failure.detail, {"agent_id": agent.agent_id, "difficulty": difficulty})
            return None
        rng = random.Random(seed)
        persona = Persona(**{k: rng.choice(v) for k, v in PERSONAS.items()})

        def failed(r) -> None:
            counts["failed_calls"] += 1
            rejections.add(
                Rejection(
                    rejection_id=content_id("request-call", task_id, counts["failed_calls"], r.error, prefix="rej_"),
                    kind="llm_output",
                    subject=f"request/{task_id}",
                    reason=r.error_kind or "error",
                    detail=r.error or "",
                    payload={"raw": r.raw},
                )
            )

        request, source, problems = await write_request(ctx, client, draft, persona, world, seed, failed)
        if not request:
            reject(
                task_id, "request_refused", "; ".join(problems)[:500], {"agent_id": agent.agent_id, "goal": draft.goal}
            )
            return None
        counts[f"requests_by_{source}"] += 1
        return Task(
            task_id=task_id,
            agent_id=agent.agent_id,
            difficulty=difficulty,
            world_id=world.world_id,
            user_persona=persona,
            user_goal=UserGoal(request=request, facts={**draft.facts, **draft.withheld}),
            initial_state=draft.initial,
            rubric=rubric_from(world, draft),
            blueprint=blueprint_record(draft, source, problems),
        )

    async def one(client, agent: Agent, k: int) -> None:
        # each agent starts at its own place in the difficulty list, so one task per agent still covers all
        difficulty = cfg.difficulties[(zlib.crc32(agent.agent_id.encode()) + k) % len(cfg.difficulties)]
        task_id = task_id_for(agent, k)
        tools = [tools_by_id[t] for t in agent.tool_ids if t in tools_by_id]
        if cfg.mode == "blueprint":
            task = await blueprint_task(client, agent, tools, difficulty, task_id)
        else:
            task, failed = await write_freeform(ctx, client, agent, tools, difficulty, task_id, k)
            if failed is not None:
                counts["failed_calls"] += 1
                rejections.add(
                    Rejection(
                        rejection_id=content_id("task-call", task_id, failed.error, prefix="rej_"),
                        kind="llm_output",
                        subject=f"task/{task_id}",
                        reason=failed.error_kind or "error",
                        detail=failed.error or "",
                        payload={"raw": failed.raw, "agent_id": agent.agent_id},
                    )
                )
        if task is None:
            return
        problem = validate_task(task, {t.name: t for t in tools}, cfg.max_state_bytes)
        if problem:
            reject(task_id, problem[0], problem[1], {"task": task.to_row() | {"created_at": None}})
            return
        counts["new"] += 1
        writer.add(task)

    jobs = [
        (a, k)
        for a in agents
        if holds(shard, a.agent_id)
        for k in range(cfg.per_agent)
        if task_id_for(a, k) not in done
    ]
    async with ctx.client() as client:
        with writer, rejections:
            await gather_with_progress("tasks", [one(client, a, k) for a, k in jobs], total=len(jobs))
    return {"tasks": ctx.store.count(Task), **counts}


def run(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    return asyncio.run(make_tasks(ctx, shard))


STAGE = Stage(
    "tasks",
    "Tasks per agent and difficulty: a gold chain executed on a seeded world, the rubric from its end state, and the "
    "user's request written around it.",
    run,
    section="tasks",
    splits_by=(Agent, "agent_id"),
    totals=frozenset({"tasks"}),
    stats=SECTIONS,
)
