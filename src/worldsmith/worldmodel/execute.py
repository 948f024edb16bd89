"""Executing a bound tool call on a JSON world, by code: the result, the JSON Patch and the
errors a real back end gives (an unknown id, a duplicate of a unique value, a value outside
an enum, a transition the rules forbid, a reference to nothing, deleting a record others
still reference). Nothing here calls a model, so the same call on the same state always
has the same effect: task writing executes gold calls with it, rollouts the agent's calls.

A domain pack's custom action (`ToolBinding.operation`) is code in the pack's folder: the caller
passes the function that runs it (`operation`, `worldmodel.packs.run_operation`; `packs.execute_call`
passes it), so this module never imports the packs that import it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from worldsmith.records import CollectionSpec, FieldSpec, ToolBinding, World
from worldsmith.vocab import error_content
from worldsmith.worldmodel.seed import next_key

MAX_LIST = 20  # a list call returns at most this many records, as paged APIs do


@dataclass
class Execution:
    ok: bool
    result: Any = None  # what the tool returns (JSON)
    patch: list[dict[str, Any]] = field(default_factory=list)
    error: tuple[str, str] | None = None  # (code, message)

    @property
    def content(self) -> str:
        """The tool message the agent reads."""
        import json

        return error_content(*self.error) if self.error else json.dumps(self.result, ensure_ascii=False)


# runs a pack action's call: (world, binding, state, arguments) -> Execution
Operation = Callable[[World, ToolBinding, dict[str, Any], dict[str, Any]], Execution]


def _fail(code: str, message: str) -> Execution:
    return Execution(False, error=(code, message))


def same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().lower() == b.strip().lower()
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return a == b


def find(c: CollectionSpec, records: list[dict[str, Any]], key: Any) -> int | None:
    """The index of the record whose key is `key` (case and spacing ignored), or None."""
    return next((i for i, r in enumerate(records) if same(r.get(c.key), key)), None)


def value_problem(world: World, c: CollectionSpec, f: FieldSpec, value: Any, state: dict[str, Any]) -> Execution | None:
    if f.enum and value not in f.enum:
        return _fail("invalid_value", f"{f.name} must be one of {', '.join(f.enum)}; got {value!r}")
    if f.ref is not None:
        target = world.collection(f.ref)
        if target is not None and find(target, state.get(f.ref, []), value) is None:
            return _fail("invalid_reference", f"{f.name} {value!r} does not name an existing {target.entity}")
    return None


def unique_problem(
    c: CollectionSpec, f: FieldSpec, value: Any, records: list[dict[str, Any]], skip: int | None
) -> Execution | None:
    if f.unique and any(i != skip and same(r.get(f.name), value) for i, r in enumerate(records)):
        return _fail("conflict", f"a {c.entity} with {f.name} {value!r} already exists")
    return None


def transition_problem(c: CollectionSpec, record: dict[str, Any], fname: str, value: Any) -> Execution | None:
    """The error of a change of `fname` to `value` that the collection's lifecycle does not allow."""
    flow = c.transitions.get(fname)
    old = record.get(fname)
    if flow is None or same(old, value) or value in flow.get(str(old), []):
        return None
    allowed = flow.get(str(old), [])
    return _fail(
        "transition_not_allowed",
        f"{c.entity} {record[c.key]} is {old}: its {fname} cannot become {value}"
        + (f" (it can become {', '.join(allowed)})" if allowed else " (no change is allowed from there)"),
    )


def referenced_problem(
    world: World, c: CollectionSpec, state: dict[str, Any], record: dict[str, Any]
) -> Execution | None:
    """The error of deleting `record` while records of another collection still reference it."""
    for other in world.collections:
        users = [f.name for f in other.fields if f.ref == c.name]
        n = sum(1 for r in state.get(other.name, []) for u in users if same(r.get(u), record[c.key]))
        if n:
            return _fail("conflict", f"{c.entity} {record[c.key]} is still referenced by {n} {other.name}")
    return None


def execute(
    world: World,
    binding: ToolBinding,
    state: dict[str, Any],
    arguments: dict[str, Any],
    operation: Operation | None = None,
) -> Execution:
    """Run one call of a bound tool on `state` (not changed: the patch says what would). A pack
    action's call is run by `operation`; without one it is the caller's bug (ValueError)."""
    c = world.collection(binding.collection)
    if c is None:
        return _fail("internal_error", f"no collection {binding.collection!r} in this world")
    if binding.operation is not None:
        if operation is None:
            raise ValueError(
                f"{binding.operation!r} is a pack action of {world.domain}: pass operation= "
                "(worldmodel.packs.run_operation), or call packs.execute_call"
            )
        return operation(world, binding, state, arguments)
    records: list[dict[str, Any]] = state.get(c.name, [])
    fields = {f.name: f for f in c.fields}
    values = {fname: arguments[p] for p, fname in binding.params.items() if p in arguments}
    values.update(binding.fixed)
    action = binding.action

    if action == "list":
        texts = [str(arguments[p]).strip().lower() for p in binding.search if str(arguments.get(p) or "").strip()]
        hits = [
            r
            for r in records
            if all(same(r.get(k), v) for k, v in values.items())
            and all(any(t in str(r.get(f.name, "")).lower() for f in c.fields if f.type == "string") for t in texts)
        ]
        cap = MAX_LIST
        if (
            binding.limit_param
            and isinstance(arguments.get(binding.limit_param), int)
            and arguments[binding.limit_param] > 0
        ):
            cap = min(cap, arguments[binding.limit_param])
        return Execution(True, {c.name: hits[:cap], "count": len(hits)})

    if action == "create":
        for fname, f in fields.items():
            if fname not in values:
                values[fname] = _default(world, f)
            problem = value_problem(world, c, f, values[fname], state) or unique_problem(
                c, f, values[fname], records, None
            )
            if problem:
                return problem
            if fname in c.transitions and values[fname] != _default(world, f):  # a lifecycle starts at its first state
                return _fail(
                    "invalid_value", f"a new {c.entity} starts with {fname} {_default(world, f)}, not {values[fname]!r}"
                )
        record = {c.key: next_key(c, records), **{f: values[f] for f in fields}}
        return Execution(True, record, [{"op": "add", "path": f"/{_escape(c.name)}/-", "value": record}])

    if binding.match and not binding.key_param:  # a record named by several parameters together
        # an optional naming parameter the call leaves out does not narrow (get_income_statement(symbol, freq?))
        wanted = {f: arguments[p] for p, f in binding.match.items() if p in arguments}
        if not wanted:  # naming no record is not naming the first one
            return _fail("invalid_arguments", f"name the {c.entity} by {' or '.join(binding.match)}")
        at = next((i for i, r in enumerate(records) if all(same(r.get(f), v) for f, v in wanted.items())), None)
        if at is None:
            named = ", ".join(f"{f} {v!r}" for f, v in wanted.items())
            return _fail("not_found", f"no {c.entity} with {named}")
    else:
        key = arguments.get(binding.key_param or c.key)
        at = find(c, records, key)
        if at is None:
            return _fail("not_found", f"no {c.entity} with {c.key} {key!r}")
        extra = {f: arguments[p] for p, f in binding.match.items() if p in arguments}
        if any(not same(records[at].get(f), v) for f, v in extra.items()):
            return _fail(
                "not_found", f"no {c.entity} {key!r} with " + ", ".join(f"{f} {v!r}" for f, v in extra.items())
            )
    record = records[at]
    if action == "get":
        return Execution(True, record)
    if action == "delete":
        problem = referenced_problem(world, c, state, record)
        if problem:
            return problem
        return Execution(True, {"deleted": record[c.key]}, [{"op": "remove", "path": f"/{_escape(c.name)}/{at}"}])
    if action == "update":
        patch, new = [], dict(record)
        for fname, value in values.items():
            f = fields.get(fname)
            if f is None:
                continue
            problem = value_problem(world, c, f, value, state) or unique_problem(c, f, value, records, at)
            if problem:
                return problem
            problem = transition_problem(c, record, fname, value)
            if problem:
                return problem
            if not same(record.get(fname), value):
                new[fname] = value
                patch.append({"op": "replace", "path": f"/{_escape(c.name)}/{at}/{_escape(fname)}", "value": value})
        return Execution(True, new, patch)
    return _fail("internal_error", f"action {action!r} is not executed by code")


def _default(world: World, f: FieldSpec) -> Any:
    """What a created record holds for a field the call did not set."""
    if f.enum:
        return f.enum[0]
    if f.format == "date":
        return world.today
    if f.type == "boolean":
        return False
    if f.type in ("integer", "number"):
        return 0
    return ""


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def today(world: World) -> dt.date:
    return dt.date.fromisoformat(world.today)
