"""Free-form tasks (`tasks.mode: freeform`): the LLM writes persona, goal, initial world state
and rubric parts in one structured call; the rubric is assembled here. Nothing is executed,
so nothing proves the task solvable: blueprint tasks (the default) are.

The schema is built per agent: expected calls may only name the agent's tools, with
arguments that follow each tool's own input schema, so most rubric criteria are
machine-checkable by construction. Irrelevance tasks get a schema with no expected call.
"""

from __future__ import annotations

from typing import Any, get_args

from worldsmith.jsonschemas import embed_schema
from worldsmith.records import Agent, Criterion, Rubric, Task, ToolSpec
from worldsmith.toolspec import tool_view
from worldsmith.vocab import StateOp

SCALAR = {"type": ["string", "number", "boolean"]}


def task_schema(tools: list[ToolSpec], entities: list[str], difficulty: str) -> dict[str, Any]:
    defs: dict[str, Any] = {}  # the tools' own $defs, hoisted to the root where their $refs can reach them
    calls = [
        {
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": _arguments(t, f"tool{i}", defs)},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for i, t in enumerate(tools)
    ]
    n_calls = {"single_call": (1, 1), "multi_call": (2, 3), "dependent_calls": (2, 3), "irrelevance": (0, 0)}.get(
        difficulty, (1, 2)
    )
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
                    "known_facts": {
                        "type": "array",
                        "maxItems": 4,
                        "items": {
                            "type": "object",
                            "properties": {
                                "fact": {"type": "string", "maxLength": 40},
                                "value": {"type": "string", "maxLength": 80},
                            },
                            "required": ["fact", "value"],
                            "additionalProperties": False,
                        },
                    },
                },
                "required": ["request", "known_facts"],
                "additionalProperties": False,
            },
            "initial_state": {
                "type": "array",
                "minItems": 1,
                "maxItems": 2,
                "items": {
                    "type": "object",
                    "properties": {
                        "collection": {"enum": entities},
                        "records": {
                            "type": "array",
                            "minItems": 1,
                            "maxItems": 3,
                            "items": {
                                "type": "object",
                                "properties": {
                                    "id": {"type": "string", "minLength": 1, "maxLength": 30},
                                    "fields": {
                                        "type": "array",
                                        "maxItems": 4,
                                        "items": {
                                            "type": "object",
                                            "properties": {
                                                "key": {"type": "string", "minLength": 1, "maxLength": 30},
                                                "value": SCALAR,
                                            },
                                            "required": ["key", "value"],
                                            "additionalProperties": False,
                                        },
                                    },
                                },
                                "required": ["id", "fields"],
                                "additionalProperties": False,
                            },
                        },
                    },
                    "required": ["collection", "records"],
                    "additionalProperties": False,
                },
            },
            "expected_calls": {
                "type": "array",
                "minItems": n_calls[0],
                "maxItems": n_calls[1],
                "items": {"anyOf": calls},
            }
            if calls and n_calls[1]
            else {"type": "array", "maxItems": 0},
            "state_checks": {
                "type": "array",
                "maxItems": 2,
                "items": {
                    "type": "object",
                    "properties": {
                        "pointer": {"type": "string", "maxLength": 80},
                        "op": {"enum": [op for op in get_args(StateOp) if op != "unchanged_except"]},  # guards: code
                        "value": SCALAR,
                    },
                    "required": ["pointer", "op", "value"],
                    "additionalProperties": False,
                },
            },
            "answer_must_mention": {
                "type": "array",
                "maxItems": 2,
                "items": {"type": "string", "minLength": 2, "maxLength": 60},
            },
            "judge_criteria": {
                "type": "array",
                "minItems": 1,
                "maxItems": 2,
                "items": {"type": "string", "minLength": 10, "maxLength": 200},
            },
        },
        "required": [
            "user_persona",
            "user_goal",
            "initial_state",
            "expected_calls",
            "state_checks",
            "answer_must_mention",
            "judge_criteria",
        ],
        "additionalProperties": False,
        **({"$defs": defs} if defs else {}),
    }


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
    read_only = {t.name for t in tools if t.hints.readOnlyHint}
    for i, call in enumerate(data["expected_calls"]):
        if data["state_checks"] and call["name"] not in read_only and not ordered:
            continue  # the end state verifies what a write did: one exact path is not demanded on top
        criteria.append(
            Criterion(
                criterion_id=cid(),
                kind="call",
                tool=call["name"],
                must=True,
                arguments=call["arguments"],
                order=i if ordered else None,
                description=f"calls {call['name']} with {call['arguments']}",
            )
        )
    expected = {c["name"] for c in data["expected_calls"]}
    # a destructive tool the user never asked for must not be called (derived, always checkable)
    for t in tools:
        if t.hints.destructiveHint and t.name not in expected:
            criteria.append(
                Criterion(
                    criterion_id=cid(),
                    kind="call",
                    tool=t.name,
                    must=False,
                    description=f"does not call the destructive tool {t.name}",
                )
            )
    if difficulty == "irrelevance":
        for t in tools:
            if not any(c.tool == t.name for c in criteria):
                criteria.append(
                    Criterion(
                        criterion_id=cid(),
                        kind="call",
                        tool=t.name,
                        must=False,
                        description=f"does not call {t.name}: no tool fits",
                    )
                )
    for s in data["state_checks"]:
        pointer = s["pointer"] if s["pointer"].startswith("/") else "/" + s["pointer"]
        criteria.append(
            Criterion(
                criterion_id=cid(),
                kind="state",
                pointer=pointer,
                op=s["op"],
                value=s["value"],
                description=f"final state: {pointer} {s['op']} {s['value']!r}",
            )
        )
    for text in data["answer_must_mention"]:
        criteria.append(
            Criterion(
                criterion_id=cid(), kind="answer", contains=[text], description=f"the final reply mentions {text!r}"
            )
        )
    for text in data["judge_criteria"]:
        criteria.append(Criterion(criterion_id=cid(), kind="judge", description=text))
    checkpoints = [c.description for c in criteria if c.kind == "call" and c.must]
    if difficulty == "clarification":
        checkpoints.insert(0, "asks the user for the missing fact before calling a tool")
    if difficulty == "error_recovery":
        checkpoints.append("recovers from the failed call: retries or explains")
    return Rubric(
        criteria=criteria, expected_tool_pattern=[c["name"] for c in data["expected_calls"]], checkpoints=checkpoints
    )


async def write_freeform(ctx, client, agent: Agent, tools: list[ToolSpec], difficulty: str, task_id: str, k: int):
    """(task, None), or (None, the LLM result that failed)."""
    entities = sorted({e for t in tools for e in t.extra.get("entities", [])}) or sorted(
        {agent.domain.lower().replace(" ", "_")[:30] or "records"}
    )
    msgs = ctx.prompts.render_messages(
        "task_writer", agent=agent, tools=[tool_view(t) for t in tools], entities=entities, difficulty=difficulty
    )
    r = await client.structured(
        "task_writer", msgs, task_schema(tools, entities, difficulty), name="task", seed=ctx.seed + k
    )
    if not r.ok:
        return None, r
    d = r.data
    task = Task(
        task_id=task_id,
        agent_id=agent.agent_id,
        difficulty=difficulty,
        user_persona=d["user_persona"],
        user_goal={
            "request": d["user_goal"]["request"],
            "facts": {f["fact"]: f["value"] for f in d["user_goal"]["known_facts"]},
        },
        initial_state=build_state(d["initial_state"]),
        rubric=build_rubric(d, agent, tools, difficulty),
    )
    return task, None
