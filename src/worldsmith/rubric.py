"""Evaluating rubric criteria that are machine-checkable: state assertions and tool calls.

Shared by task validation (is the goal already met by the initial state? do pointers
resolve?) and by the judge (did the episode meet it?), so both read a criterion the same way.
"""

from __future__ import annotations

import json
from typing import Any

from jsonpointer import EndOfList, JsonPointer, JsonPointerException

from worldsmith.records import Criterion

_MISSING = object()


def resolve(state: Any, pointer: str) -> Any:
    """The value at `pointer`, or _MISSING."""
    try:
        value = JsonPointer(pointer).resolve(state)
    except (JsonPointerException, TypeError, KeyError, IndexError):
        return _MISSING
    return _MISSING if isinstance(value, EndOfList) else value  # "/list/-" names no element


def pointer_problem(pointer: str | None) -> str | None:
    if not pointer or not isinstance(pointer, str):
        return "no pointer"
    try:
        JsonPointer(pointer)
    except JsonPointerException as exc:
        return f"not a JSON Pointer: {exc}"
    if pointer == "":
        return "the pointer names the whole state"
    return None


def parent_pointer(pointer: str) -> str:
    return pointer.rsplit("/", 1)[0]


def _num(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _eq(a: Any, b: Any) -> bool:
    if a == b:
        return True
    na, nb = _num(a), _num(b)
    if na is not None and nb is not None:
        return na == nb
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().lower() == b.strip().lower()
    return False


def check_state(criterion: Criterion, state: Any) -> tuple[bool, str]:
    """(passed, evidence) for a `state` criterion on a world state."""
    found = resolve(state, criterion.pointer or "")
    shown = "missing" if found is _MISSING else json.dumps(found, default=str)[:200]
    op, want = criterion.op, criterion.value
    if op == "exists":
        ok = found is not _MISSING
    elif op == "absent":
        ok = found is _MISSING
    elif found is _MISSING:
        ok = False
    elif op == "equals":
        ok = _eq(found, want)
    elif op == "not_equals":
        ok = not _eq(found, want)
    elif op == "contains":
        if isinstance(found, str):
            ok = str(want).lower() in found.lower()
        elif isinstance(found, list):
            ok = any(_eq(x, want) for x in found)
        elif isinstance(found, dict):
            ok = str(want) in found
        else:
            ok = False
    elif op in ("gte", "lte"):
        a, b = _num(found), _num(want)
        ok = a is not None and b is not None and (a >= b if op == "gte" else a <= b)
    else:
        ok = False
    return ok, f"{criterion.pointer} {op} {json.dumps(want, default=str)[:80]}: found {shown}"


def arguments_match(constraints: dict[str, Any], arguments: dict[str, Any]) -> bool:
    """Every constrained argument is present with an equal value (numbers and case tolerant)."""
    return all(k in arguments and _eq(arguments[k], v) for k, v in constraints.items())
