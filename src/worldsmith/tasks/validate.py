"""Task validation before use: every failure is a reason code the catalog can group by.

- unknown_tool: a `call` criterion names a tool outside the agent's bundle
- invalid_arguments: a `call` criterion's arguments break the tool's input schema
- bad_pointer: a `state` pointer is malformed, or its parent (or, for `absent`/compare
  operators, the value itself) is missing from the initial state
- already_satisfied: the initial state already meets every state criterion
- no_criteria: nothing machine-checkable (irrelevance tasks excepted) or no criteria at all
- irrelevance_calls: an irrelevance task that expects a tool call
- oversize_state: the initial state is over the configured size
"""

from __future__ import annotations

import json

import jsonschema

from worldsmith.records import Task, ToolSpec
from worldsmith.rubric import _MISSING, check_state, parent_pointer, pointer_problem, resolve

MACHINE_KINDS = ("state", "call", "answer")


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
                return "unknown_tool", f"criterion {c.criterion_id} names tool {c.tool!r}, not in the bundle ({', '.join(sorted(tools))})"
            schema = tools[c.tool].input_schema
            props = schema.get("properties", {}) if isinstance(schema, dict) else {}
            for arg, value in c.arguments.items():
                if props and arg not in props:
                    return "invalid_arguments", f"criterion {c.criterion_id}: {c.tool} has no argument {arg!r}"
                if arg in props:
                    try:
                        jsonschema.validate(value, props[arg])
                    except jsonschema.ValidationError as exc:
                        return "invalid_arguments", f"criterion {c.criterion_id}: {c.tool}.{arg}: {exc.message[:120]}"
                    except jsonschema.SchemaError:
                        pass
        elif c.kind == "state":
            problem = pointer_problem(c.pointer)
            if problem:
                return "bad_pointer", f"criterion {c.criterion_id}: {problem}"
            parent = parent_pointer(c.pointer)
            if parent and resolve(task.initial_state, parent) is _MISSING:
                return "bad_pointer", f"criterion {c.criterion_id}: {parent} does not exist in the initial state"
            if c.op in ("absent", "gte", "lte", "contains") and resolve(task.initial_state, c.pointer) is _MISSING:
                return "bad_pointer", f"criterion {c.criterion_id}: {c.pointer} ({c.op}) does not exist in the initial state"
    if task.difficulty == "irrelevance":
        if any(c.kind == "call" and c.must for c in criteria):
            return "irrelevance_calls", "an irrelevance task must not expect a tool call"
    elif not any(c.kind in MACHINE_KINDS for c in criteria):
        return "no_criteria", "no machine-checkable (state, call or answer) criterion"
    states = [c for c in criteria if c.kind == "state"]
    if states and all(check_state(c, task.initial_state)[0] for c in states):
        return "already_satisfied", "the initial state already meets every state criterion"
    return None
