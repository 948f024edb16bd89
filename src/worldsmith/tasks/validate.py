"""Task validation before use: every failure is a reason code the catalog can group by.

- unknown_tool: a `call` criterion names a tool outside the agent's bundle
- invalid_arguments: a `call` criterion's arguments break the tool's input schema
- bad_pointer: a `state` pointer is malformed (also: an empty key, a control character, or
  "-", the position after a list's end, where nothing can be checked), or its parent is
  missing from the initial state or holds no fields (a string, a number), or, for
  `absent`/compare operators, the value itself is missing
- already_satisfied: the initial state already meets every state criterion
- passes_by_doing_nothing: an agent that calls no tool would pass every checkable criterion
  (a phrase it must say it can say without looking anything up) (only refusal and irrelevance
  tasks, whose right outcome is that nothing changes, may be met that way; they must be)
- unknown_collection: a record criterion names a collection the initial state does not have
- no_criteria: nothing machine-checkable (irrelevance tasks excepted) or no criteria at all
- irrelevance_calls: an irrelevance task that expects a tool call
- oversize_state: the initial state is over the configured size
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import jsonschema
from jsonpointer import JsonPointer
from referencing.exceptions import Unresolvable

from worldsmith.judge.rubric import MISSING, check_state, parent_pointer, pointer_problem, resolve
from worldsmith.records import Task, ToolSpec
from worldsmith.vocab import MACHINE_KINDS


def _shown(pointer: str) -> str:
    return pointer if len(pointer) <= 120 else pointer[:117] + "..."


def _token_problem(pointer: str) -> str | None:
    """What makes a well-formed pointer unusable in a world state, or None."""
    for token in JsonPointer(pointer).parts:
        if token == "":
            return f"{_shown(pointer)} has an empty key"
        if token == "-":
            return f"{_shown(pointer)} names '-', the position after a list's end, which holds no value to check"
        if any(unicodedata.category(c) == "Cc" for c in token):
            return f"{_shown(pointer)} has a control character in a key"
    return None


def _argument_problem(schema: dict[str, Any], arg: str, value: Any) -> str | None:
    """Why `value` breaks the tool's schema for `arg`, or None. Its $refs resolve against
    the whole tool schema ($defs, "#"); a schema the validator cannot use (dangling or
    endless $ref) lets the value through."""
    try:
        root = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(schema)
        error = jsonschema.exceptions.best_match(root.evolve(schema=schema["properties"][arg]).iter_errors(value))
    except (jsonschema.SchemaError, Unresolvable, RecursionError):
        return None
    return None if error is None else error.message[:120]


def validate_task(task: Task, tools: dict[str, ToolSpec], max_state_bytes: int = 8192) -> tuple[str, str] | None:
    """(reason, detail) if the task cannot be used, else None. `tools` maps name -> spec."""
    criteria = task.rubric.criteria
    if not criteria:
        return "no_criteria", "the rubric has no criteria"
    size = len(json.dumps(task.initial_state))
    if size > max_state_bytes:
        return "oversize_state", f"initial state is {size} bytes, over {max_state_bytes}"
    for c in criteria:
        if c.kind == "call":
            if c.tool not in tools:
                return (
                    "unknown_tool",
                    f"criterion {c.criterion_id} names tool {c.tool!r}, not in the bundle ({', '.join(sorted(tools))})",
                )
            schema = tools[c.tool].input_schema
            props = schema.get("properties", {}) if isinstance(schema, dict) else {}
            props = props if isinstance(props, dict) else {}
            for arg, value in c.arguments.items():
                if props and arg not in props:
                    return "invalid_arguments", f"criterion {c.criterion_id}: {c.tool} has no argument {arg!r}"
                if arg in props:
                    problem = _argument_problem(schema, arg, value)
                    if problem:
                        return "invalid_arguments", f"criterion {c.criterion_id}: {c.tool}.{arg}: {problem}"
        elif c.kind == "state" and c.collection:
            if not isinstance(task.initial_state.get(c.collection), list):
                return (
                    "unknown_collection",
                    f"criterion {c.criterion_id}: /{c.collection} is not a collection of the initial state",
                )
        elif c.kind == "state":
            problem = pointer_problem(c.pointer) or _token_problem(c.pointer)
            if problem:
                return "bad_pointer", f"criterion {c.criterion_id}: {problem[:300]}"
            parent = parent_pointer(c.pointer)
            holder = resolve(task.initial_state, parent) if parent else task.initial_state
            if holder is MISSING:
                return (
                    "bad_pointer",
                    f"criterion {c.criterion_id}: {_shown(parent)} does not exist in the initial state",
                )
            if not isinstance(holder, dict | list):
                return (
                    "bad_pointer",
                    f"criterion {c.criterion_id}: {_shown(parent)} is {json.dumps(holder)[:40]}, "
                    "not an object or a list",
                )
            if c.op in ("absent", "gte", "lte", "contains") and resolve(task.initial_state, c.pointer) is MISSING:
                return (
                    "bad_pointer",
                    f"criterion {c.criterion_id}: {_shown(c.pointer)} ({c.op}) does not exist in the initial state",
                )
    if task.difficulty == "irrelevance":
        if any(c.kind == "call" and c.must for c in criteria):
            return "irrelevance_calls", "an irrelevance task must not expect a tool call"
    elif not any(c.kind in MACHINE_KINDS for c in criteria):
        return "no_criteria", "no machine-checkable (state, call or answer) criterion"
    nothing_changes = task.difficulty in NOTHING_CHANGES
    states = [c for c in criteria if c.kind == "state" and c.op != "unchanged_except"]
    if (
        states
        and not nothing_changes
        and all(check_state(c, task.initial_state, task.initial_state)[0] for c in states)
    ):
        return "already_satisfied", "the initial state already meets every state criterion"
    if nothing_changes and not states_hold_idle(task):
        return "nothing_changes_unmet", f"a {task.difficulty} task's state criteria must hold for the world as it is"
    if not nothing_changes and passes_idle(task):
        return (
            "passes_by_doing_nothing",
            "every checkable criterion holds for an agent that does nothing: nothing verifies the task was done",
        )
    return None


NOTHING_CHANGES = ("refusal", "irrelevance")


def states_hold_idle(task: Task) -> bool:
    """Whether every state criterion holds when nothing is done (the world as it began)."""
    return all(
        check_state(c, task.initial_state, task.initial_state)[0] for c in task.rubric.criteria if c.kind == "state"
    )


def passes_idle(task: Task) -> bool:
    """Whether an agent that calls no tool meets every machine-checkable criterion: the state
    criteria hold untouched and no call is required (a phrase to say can be said unchecked)."""
    required = any(c.kind == "call" and c.must for c in task.rubric.criteria)
    return not required and states_hold_idle(task) and any(c.kind in MACHINE_KINDS for c in task.rubric.criteria)
