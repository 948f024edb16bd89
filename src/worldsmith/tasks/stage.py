"""The tasks stage: per agent and difficulty, a task the simulated user will bring.

Blueprint tasks (the default, `tasks/blueprint.py`): a gold chain over the agent's bound
tools is sampled on a seeded world and executed; only a chain whose calls all succeed
makes a task, and its rubric is read off the execution. Then the user's opening request is
written around the facts the user knows: by the model (`task_writer`, structured output),
checked to carry every fact the agent cannot look up and to leak none it should find out
itself; when no attempt passes (or none is asked for: the CPU default), the request
grammar words it (`prompts/user_request.yaml`, seeded; `request_source: grammar`), and the
plain request of `prompts/user_request.jinja` is the last resort (`template`). Free-form
tasks (`tasks.mode: freeform`) are written in one shot by the model and never executed
(`tasks/freeform.py`).

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

from worldsmith.context import RunContext
from worldsmith.judge.answers import extract, mentions
from worldsmith.progress import gather_with_progress
from worldsmith.records import Agent, Persona, Rejection, Task, ToolSpec, UserGoal, World, content_id
from worldsmith.stage import Shard, Stage, holds
from worldsmith.tasks.blueprint import BlueprintFailure, Draft, blueprint_record, rubric_from, sample_blueprint
from worldsmith.tasks.freeform import write_freeform
from worldsmith.tasks.requests import grammar_request
from worldsmith.tasks.stats import SECTIONS
from worldsmith.tasks.validate import validate_task
from worldsmith.worldmodel import packs

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
    worded = grammar_request(ctx.prompts.data("user_request"), d, persona, seed) if d.intents else None
    if worded is not None:
        found = request_problems(worded, d)
        if not found:
            return worded, "grammar", problems
        problems.append("grammar: " + "; ".join(found)[:300])  # a form that drops a fact: recorded, the plain one used
    (plain,) = [
        m["content"]
        for m in ctx.prompts.render_messages("user_request", goal=d.goal, facts=d.facts, difficulty=d.difficulty)
    ]
    found = request_problems(plain, d)
    if found:  # the template says what the blueprint knows; a problem here is a bug in it, recorded, not hidden
        return "", "", [*problems, "template: " + "; ".join(found)]
    return plain, "template", problems


def stored_or_refused(ctx: RunContext) -> set[str]:
    """The task ids an earlier run already made or refused: a re-run does only what is missing."""
    done = ctx.store.existing_ids(Task)
    done |= {
        r.payload.get("task_id") for r in ctx.store.read(Rejection) if r.kind == "task" and isinstance(r.payload, dict)
    }
    return done


class TaskMaker:
    """One run of the stage over a shard: makes each task (blueprint or free-form), validates
    it and writes it, or records its refusal with the reason; `counts` are the stage's counts."""

    def __init__(self, ctx: RunContext, tools_by_id: dict[str, ToolSpec], worlds: dict[str, World]):
        self.ctx, self.cfg = ctx, ctx.cfg.tasks
        self.tools_by_id, self.worlds = tools_by_id, worlds
        self.writer = ctx.store.writer(Task, flush_every=16)
        self.rejections = ctx.store.writer(Rejection, flush_every=16)
        self.counts = {
            "new": 0,
            "rejected": 0,
            "failed_calls": 0,
            "requests_by_llm": 0,
            "requests_by_grammar": 0,
            "requests_by_template": 0,
        }

    def reject(self, task_id: str, reason: str, detail: str, payload: dict[str, Any]) -> None:
        self.counts["rejected"] += 1
        self.rejections.add(
            Rejection(
                rejection_id=content_id("task", task_id, prefix="rej_"),
                kind="task",
                subject=f"task/{task_id}",
                reason=reason,
                detail=detail,
                payload={"task_id": task_id, **payload},
            )
        )

    def call_failed(self, rejection_id: str, subject: str, r, payload: dict[str, Any]) -> None:
        """A model call that gave no usable output, recorded (it was counted before its id was made)."""
        self.rejections.add(
            Rejection(
                rejection_id=rejection_id,
                kind="llm_output",
                subject=subject,
                reason=r.error_kind or "error",
                detail=r.error or "",
                payload=payload,
            )
        )

    async def one(self, client, agent: Agent, k: int) -> None:
        """The agent's k-th task, made, validated and written (or refused)."""
        cfg = self.cfg
        # each agent starts at its own place in the difficulty list, so one task per agent still covers all
        difficulty = cfg.difficulties[(zlib.crc32(agent.agent_id.encode()) + k) % len(cfg.difficulties)]
        task_id = task_id_for(agent, k)
        tools = [self.tools_by_id[t] for t in agent.tool_ids if t in self.tools_by_id]
        if cfg.mode == "blueprint":
            task = await self.blueprint_task(client, agent, tools, difficulty, task_id)
        else:
            task, failed = await write_freeform(self.ctx, client, agent, tools, difficulty, task_id, k)
            if failed is not None:
                self.counts["failed_calls"] += 1
                rejection_id = content_id("task-call", task_id, failed.error, prefix="rej_")
                self.call_failed(
                    rejection_id, f"task/{task_id}", failed, {"raw": failed.raw, "agent_id": agent.agent_id}
                )
        if task is None:
            return
        problem = validate_task(task, {t.name: t for t in tools}, cfg.max_state_bytes)
        if problem:
            self.reject(task_id, problem[0], problem[1], {"task": task.to_row() | {"created_at": None}})
            return
        self.counts["new"] += 1
        self.writer.add(task)

    async def blueprint_task(
        self, client, agent: Agent, tools: list[ToolSpec], difficulty: str, task_id: str
    ) -> Task | None:
        """A blueprint task: a draft executed on the agent's world, then the user's request written around it."""
        world = self.worlds.get(agent.world_id or "")
        if world is None:
            detail = f"agent {agent.agent_id} has no world (no bound tool in its bundle)"
            self.reject(task_id, "no_world", detail, {"agent_id": agent.agent_id})
            return None
        try:
            draft, seed = self.sample_draft(world, tools, difficulty, task_id)
        except BlueprintFailure as failure:
            self.reject(task_id, failure.reason, failure.detail, {"agent_id": agent.agent_id, "difficulty": difficulty})
            return None
        rng = random.Random(seed)
        persona = Persona(**{k: rng.choice(v) for k, v in PERSONAS.items()})

        def failed(r) -> None:
            self.counts["failed_calls"] += 1
            rejection_id = content_id("request-call", task_id, self.counts["failed_calls"], r.error, prefix="rej_")
            self.call_failed(rejection_id, f"request/{task_id}", r, {"raw": r.raw})

        request, source, problems = await write_request(self.ctx, client, draft, persona, world, seed, failed)
        if not request:
            detail = "; ".join(problems)[:500]
            self.reject(task_id, "request_refused", detail, {"agent_id": agent.agent_id, "goal": draft.goal})
            return None
        self.counts[f"requests_by_{source}"] += 1
        return Task(
            task_id=task_id,
            agent_id=agent.agent_id,
            difficulty=difficulty,
            world_id=world.world_id,
            user_persona=persona,
            user_goal=UserGoal(request=request, facts={**draft.facts, **draft.withheld}),
            initial_state=draft.initial,
            rubric=rubric_from(world, draft, tools),
            blueprint=blueprint_record(draft, source, problems),
        )

    def sample_draft(self, world: World, tools: list[ToolSpec], difficulty: str, task_id: str) -> tuple[Draft, int]:
        """(draft, its seed) from the first of `blueprint_attempts` seeds that makes one; else the last failure."""
        failure = None
        for attempt in range(self.cfg.blueprint_attempts):
            seed = zlib.crc32(f"{self.ctx.seed}:{task_id}:{attempt}".encode())
            try:
                return sample_blueprint(
                    world, tools, difficulty, seed, tuple(world.seed_records or self.cfg.world_records)
                ), seed
            except BlueprintFailure as exc:
                failure = exc
        raise failure


async def make_tasks(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    cfg = ctx.cfg.tasks
    tools_by_id = {t.tool_id: t for t in ctx.store.read(ToolSpec)}
    packs_dir = ctx.path(ctx.cfg.worlds.packs_dir)  # a pack world is stored with its folder relative to it
    worlds = {w.world_id: packs.locate(w, packs_dir) for w in ctx.store.read(World)}
    agents = ctx.store.read(Agent)
    done = stored_or_refused(ctx)
    maker = TaskMaker(ctx, tools_by_id, worlds)
    jobs = [
        (a, k)
        for a in agents
        if holds(shard, a.agent_id)
        for k in range(cfg.per_agent)
        if task_id_for(a, k) not in done
    ]
    async with ctx.client() as client:
        with maker.writer, maker.rejections:
            await gather_with_progress("tasks", [maker.one(client, a, k) for a, k in jobs], total=len(jobs))
    return {"tasks": ctx.store.count(Task), **maker.counts}


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
