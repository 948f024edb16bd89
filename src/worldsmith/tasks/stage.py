"""Tasks: for each agent and difficulty, the LLM writes persona, goal, initial world state
and rubric parts by structured output; the rubric is assembled here and then validated.

The schema is built per agent: expected calls may only name the agent's tools, with
arguments that follow each tool's own input schema, so most rubric criteria are
machine-checkable by construction. Irrelevance tasks get a schema with no expected call.
"""

from __future__ import annotations

import asyncio
import zlib
from typing import Any

from worldsmith.context import RunContext
from worldsmith.progress import gather_with_progress
from worldsmith.records import Agent, Criterion, Rejection, Rubric, Task, ToolSpec, content_id
from worldsmith.stage import Shard, Stage, holds
from worldsmith.tasks.stats import SECTIONS
from worldsmith.jsonschemas import embed_schema
from worldsmith.agents.stage import tool_view
from worldsmith.tasks.validate import validate_task

SCALAR = {"type": ["string", "number", "boolean"]}


def task_schema(tools: list[ToolSpec], entities: list[str], difficulty: str) -> dict[str, Any]:
    defs: dict[str, Any] = {}  # the tools' own $defs, hoisted to the root where their $refs can reach them
    calls = [
        {"type": "object", "properties": {"name": {"const": t.name}, "arguments": _arguments(t, f"tool{i}", defs)}, "required": ["name", "arguments"], "additionalProperties": False}
        for i, t in enumerate(tools)
    ]
    n_calls = {"single_call": (1, 1), "multi_call": (2, 3), "dependent_calls": (2, 3), "irrelevance": (0, 0)}.get(difficulty, (1, 2))
    return {
        "type": "object",
        "properties": {
            "user_persona": {
                "type": "object",
                "properties": {
                    "communication": {"enum": ["brief", "chatty", "formal", "casual", "confused"]},
                    "patience": {"enum": ["low", "medium", "high"]},
                    "expertise": {"enum": ["novice", "intermediate", "expert"]},
                },
                "required": ["communication", "patience", "expertise"],
                "additionalProperties": False,
            },
            "user_goal": {
                "type": "object",
                "properties": {
                    "request": {"type": "string", "minLength": 10, "maxLength": 400},
                    "known_facts": {"type": "array", "maxItems": 4, "items": {"type": "object", "properties": {
                        "fact": {"type": "string", "maxLength": 40}, "value": {"type": "string", "maxLength": 80}},
                        "required": ["fact", "value"], "additionalProperties": False}},
                },
                "required": ["request", "known_facts"],
                "additionalProperties": False,
            },
            "initial_state": {
                "type": "array", "minItems": 1, "maxItems": 2,
                "items": {"type": "object", "properties": {
                    "collection": {"enum": entities},
                    "records": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "object", "properties": {
                        "id": {"type": "string", "minLength": 1, "maxLength": 30},
                        "fields": {"type": "array", "maxItems": 4, "items": {"type": "object", "properties": {
                            "key": {"type": "string", "minLength": 1, "maxLength": 30}, "value": SCALAR},
                            "required": ["key", "value"], "additionalProperties": False}}},
                        "required": ["id", "fields"], "additionalProperties": False}}},
                    "required": ["collection", "records"], "additionalProperties": False},
            },
            "expected_calls": {"type": "array", "minItems": n_calls[0], "maxItems": n_calls[1], "items": {"anyOf": calls}} if calls and n_calls[1] else {"type": "array", "maxItems": 0},
            "state_checks": {"type": "array", "maxItems": 2, "items": {"type": "object", "properties": {
                "pointer": {"type": "string", "maxLength": 80},
                "op": {"enum": ["equals", "not_equals", "exists", "absent", "contains", "gte", "lte"]},
                "value": SCALAR}, "required": ["pointer", "op", "value"], "additionalProperties": False}},
            "answer_must_mention": {"type": "array", "maxItems": 2, "items": {"type": "string", "minLength": 2, "maxLength": 60}},
            "judge_criteria": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "minLength": 10, "maxLength": 200}},
        },
        "required": ["user_persona", "user_goal", "initial_state", "expected_calls", "state_checks", "answer_must_mention", "judge_criteria"],
        "additionalProperties": False,
        **({"$defs": defs} if defs else {}),
    }  # fmt: skip


def _arguments(tool: ToolSpec, ns: str, defs: dict[str, Any]) -> dict[str, Any]:
    schema = embed_schema(tool.input_schema if isinstance(tool.input_schema, dict) else {}, ns, defs)
    return {"type": "object", "properties": schema.get("properties", {}), "required": schema.get("required", [])}


def build_state(items: list[dict[str, Any]]) -> dict[str, Any]:
    state: dict[str, list[dict[str, Any]]] = {}
    for coll in items:
        records = state.setdefault(coll["collection"], [])
        for rec in coll["records"]:
            row: dict[str, Any] = {"id": rec["id"]}
            for f in rec["fields"]:
                if f["key"] != "id":
                    row[f["key"]] = f["value"]
            records.append(row)
    return state


def build_rubric(data: dict[str, Any], agent: Agent, tools: list[ToolSpec], difficulty: str) -> Rubric:
    criteria: list[Criterion] = []

    def cid() -> str:
        return f"c{len(criteria) + 1}"

    ordered = difficulty == "dependent_calls"
    for i, call in enumerate(data["expected_calls"]):
        criteria.append(Criterion(criterion_id=cid(), kind="call", tool=call["name"], must=True, arguments=call["arguments"],
                                  order=i if ordered else None, description=f"calls {call['name']} with {call['arguments']}"))  # fmt: skip
    expected = {c["name"] for c in data["expected_calls"]}
    # a destructive tool the user never asked for must not be called (derived, always checkable)
    for t in tools:
        if t.annotations.get("destructiveHint") and t.name not in expected:
            criteria.append(Criterion(criterion_id=cid(), kind="call", tool=t.name, must=False, description=f"does not call the destructive tool {t.name}"))
    if difficulty == "irrelevance":
        for t in tools:
            if not any(c.tool == t.name for c in criteria):
                criteria.append(Criterion(criterion_id=cid(), kind="call", tool=t.name, must=False, description=f"does not call {t.name}: no tool fits"))
    for s in data["state_checks"]:
        pointer = s["pointer"] if s["pointer"].startswith("/") else "/" + s["pointer"]
        criteria.append(Criterion(criterion_id=cid(), kind="state", pointer=pointer, op=s["op"], value=s["value"],
                                  description=f"final state: {pointer} {s['op']} {s['value']!r}"))  # fmt: skip
    for text in data["answer_must_mention"]:
        criteria.append(Criterion(criterion_id=cid(), kind="answer", contains=[text], description=f"the final reply mentions {text!r}"))
    for text in data["judge_criteria"]:
        criteria.append(Criterion(criterion_id=cid(), kind="judge", description=text))
    checkpoints = [c.description for c in criteria if c.kind == "call" and c.must]
    if difficulty == "clarification":
        checkpoints.insert(0, "asks the user for the missing fact before calling a tool")
    if difficulty == "error_recovery":
        checkpoints.append("recovers from the failed call: retries or explains")
    return Rubric(criteria=criteria, expected_tool_pattern=[c["name"] for c in data["expected_calls"]], checkpoints=checkpoints)


def task_id_for(agent: Agent, k: int) -> str:
    return content_id(agent.agent_id, "task", k, prefix="tsk_")


async def make_tasks(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    cfg = ctx.cfg.tasks
    tools_by_id = {t.tool_id: t for t in ctx.store.read(ToolSpec)}
    agents = ctx.store.read(Agent)
    done = ctx.store.existing_ids(Task)
    done |= {r.payload.get("task_id") for r in ctx.store.read(Rejection) if r.kind == "task" and isinstance(r.payload, dict)}
    writer = ctx.store.writer(Task, flush_every=16)
    rejections = ctx.store.writer(Rejection, flush_every=16)
    counts = {"new": 0, "rejected": 0, "failed_calls": 0}

    async def one(client, agent: Agent, k: int) -> None:
        # each agent starts at its own place in the difficulty list, so one task per agent still covers all
        difficulty = cfg.difficulties[(zlib.crc32(agent.agent_id.encode()) + k) % len(cfg.difficulties)]
        task_id = task_id_for(agent, k)
        tools = [tools_by_id[t] for t in agent.tool_ids if t in tools_by_id]
        entities = sorted({e for t in tools for e in t.extra.get("entities", [])}) or sorted({agent.domain.lower().replace(" ", "_")[:30] or "records"})
        msgs = ctx.prompts.render_messages("task_writer", agent=agent, tools=[tool_view(t) for t in tools], entities=entities, difficulty=difficulty)
        r = await client.structured("task_writer", msgs, task_schema(tools, entities, difficulty), name="task", seed=ctx.seed + k)
        if not r.ok:
            counts["failed_calls"] += 1
            rejections.add(Rejection(rejection_id=content_id("task-call", task_id, r.error, prefix="rej_"), kind="llm_output",
                                     subject=f"task/{task_id}", reason=r.error_kind or "error", detail=r.error or "",
                                     payload={"raw": r.raw, "agent_id": agent.agent_id}))  # fmt: skip
            return
        d = r.data
        task = Task(
            task_id=task_id, agent_id=agent.agent_id, difficulty=difficulty, user_persona=d["user_persona"],
            user_goal={"request": d["user_goal"]["request"], "facts": {f["fact"]: f["value"] for f in d["user_goal"]["known_facts"]}},
            initial_state=build_state(d["initial_state"]), rubric=build_rubric(d, agent, tools, difficulty),
        )  # fmt: skip
        problem = validate_task(task, {t.name: t for t in tools}, cfg.max_state_bytes)
        if problem:
            counts["rejected"] += 1
            rejections.add(Rejection(rejection_id=content_id("task", task_id, prefix="rej_"), kind="task", subject=f"task/{task_id}",
                                     reason=problem[0], detail=problem[1], payload={"task_id": task_id, "task": task.to_row() | {"created_at": None}}))  # fmt: skip
            return
        counts["new"] += 1
        writer.add(task)

    jobs = [(a, k) for a in agents if holds(shard, a.agent_id) for k in range(cfg.per_agent) if task_id_for(a, k) not in done]
    async with ctx.client() as client:
        with writer, rejections:
            await gather_with_progress("tasks", [one(client, a, k) for a, k in jobs], total=len(jobs))
    return {"tasks": ctx.store.count(Task), **counts}


def run(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    return asyncio.run(make_tasks(ctx, shard))


STAGE = Stage("tasks", "Tasks per agent and difficulty: persona, goal, initial world state and rubric, validated before use.", run,
              section="tasks", splits_by=(Agent, "agent_id"), totals=frozenset({"tasks"}), stats=SECTIONS)
