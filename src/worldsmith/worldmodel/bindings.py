"""Tools designed against a world schema: an action on one collection, each parameter bound
to a field. From a binding come the tool's input schema (types, enums and descriptions from
the fields), its output schema, its MCP annotations, and a plain name and description that
the LLM's own may replace. `plan_bindings` picks which tools a world gets, so that every
domain has lookups and changes on the same collection (what tasks need), and the evolution
operators change a binding deliberately (`evolve_binding`).
"""

from __future__ import annotations

import random
from typing import Any

from worldsmith.records import CollectionSpec, FieldSpec, ToolBinding, ToolSpec, World
from worldsmith.vocab import READ_ACTIONS
from worldsmith.worldmodel.schema import a_an

JSON_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}


def field_schema(c: CollectionSpec, f: FieldSpec, what: str = "") -> dict[str, Any]:
    schema: dict[str, Any] = {"type": JSON_TYPES[f.type]}
    if f.enum:
        schema["enum"] = list(f.enum)
    ref = f" (a {f.ref} key)" if f.ref else ""
    schema["description"] = (what or f.description or f"the {c.entity}'s {f.name.replace('_', ' ')}") + ref
    return schema


def record_schema(c: CollectionSpec) -> dict[str, Any]:
    props = {c.key: {"type": "string", "description": f"the {c.entity}'s id, like {c.id_prefix}-1042"}}
    props.update({f.name: field_schema(c, f) for f in c.fields})
    return {"type": "object", "properties": props}


def input_schema(world: World, b: ToolBinding) -> dict[str, Any]:
    c = world.collection(b.collection)
    assert c is not None
    fields = {f.name: f for f in c.fields}
    props: dict[str, Any] = {}
    required: list[str] = []
    if b.key_param:
        props[b.key_param] = {"type": "string", "description": f"the {c.entity}'s id, like {c.id_prefix}-1042"}
        required.append(b.key_param)
    for param, fname in b.params.items():
        f = fields[fname]
        verb = {
            "list": "only {entity}s whose {field} is this",
            "update": "the new {field}",
            "create": "the {field}",
        }.get(b.action, "{field}")
        props[param] = field_schema(c, f, verb.format(entity=c.entity, field=fname.replace("_", " ")))
        if b.action in ("create", "update"):
            required.append(param)
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def output_schema(world: World, b: ToolBinding) -> dict[str, Any]:
    c = world.collection(b.collection)
    assert c is not None
    if b.action == "list":
        return {
            "type": "object",
            "properties": {c.name: {"type": "array", "items": record_schema(c)}, "count": {"type": "integer"}},
        }
    if b.action == "delete":
        return {"type": "object", "properties": {"deleted": {"type": "string"}}}
    return record_schema(c)


def annotations(b: ToolBinding) -> dict[str, Any]:
    read_only = b.action in READ_ACTIONS
    return {
        "readOnlyHint": read_only,
        "destructiveHint": b.action == "delete" or (b.action == "update" and bool(b.fixed)),
        "idempotentHint": b.action != "create",
        "openWorldHint": False,
    }


def default_name(world: World, b: ToolBinding) -> str:
    c = world.collection(b.collection)
    assert c is not None
    if b.action == "get":
        return f"get_{c.entity}"
    if b.action == "list":
        by = "_and_".join(b.params.values()) or "_and_".join(b.fixed)
        return f"list_{c.name}" + (f"_by_{by}" if by else "")
    if b.action == "update":
        if b.fixed:
            (fname, value), *_ = b.fixed.items()
            return f"{'cancel' if value in ('cancelled', 'canceled') else 'mark'}_{c.entity}" + (
                "" if value in ("cancelled", "canceled") else f"_{value}"
            )
        return f"update_{c.entity}_" + "_and_".join(b.params.values())
    return f"{b.action}_{c.entity}"


def default_description(world: World, b: ToolBinding) -> str:
    c = world.collection(b.collection)
    assert c is not None
    fields = ", ".join(f.name.replace("_", " ") for f in c.fields)
    if b.action == "custom":
        return f"Works on {a_an(c.entity)} in one step, as its description says."
    if b.action == "get":
        return f"Look up one {c.entity} by its {c.key}: returns its {fields}."
    if b.action == "list":
        on = [*(f"{p}" for p in b.params.values()), *(f"{k} = {v}" for k, v in b.fixed.items())]
        return (
            f"List the {c.name}"
            + (f" filtered by {', '.join(on)}" if on else "")
            + f" (at most 20): each with its {c.key} and {fields}."
        )
    if b.action == "create":
        return (
            f"Create a new {c.entity} from its {', '.join(b.params.values())}; "
            f"returns the new {c.entity} with its {c.key}."
        )
    if b.action == "delete":
        return f"Delete {a_an(c.entity)} by its {c.key}. This cannot be undone."
    if b.fixed:
        (fname, value), *_ = b.fixed.items()
        return f"Set {a_an(c.entity)}'s {fname} to {value}, by its {c.key}; returns the updated {c.entity}."
    return f"Change {a_an(c.entity)}'s {', '.join(b.params.values())}, by its {c.key}; returns the updated {c.entity}."


# --------------------------------------------------------------------------- which tools a world gets


def _status(c: CollectionSpec) -> FieldSpec | None:
    return next((f for f in c.fields if f.enum and f.name in c.transitions), None) or next(
        (f for f in c.fields if f.enum), None
    )


def _editable(c: CollectionSpec) -> FieldSpec | None:
    """A plain field worth changing (not the status, not a reference)."""
    return next((f for f in c.fields if not f.enum and f.ref is None and not f.unique and f.format != "date"), None)


def binding_for(world: World, c: CollectionSpec, action: str) -> ToolBinding | None:
    key = c.key
    if action in ("get", "delete"):
        return ToolBinding(world_id=world.world_id, collection=c.name, action=action, key_param=key)
    if action == "list":
        f = _status(c) or next((f for f in c.fields if f.ref), None)
        return ToolBinding(
            world_id=world.world_id, collection=c.name, action="list", params={f.name: f.name} if f else {}
        )
    if action == "update":
        f = _status(c) or _editable(c)
        return (
            ToolBinding(
                world_id=world.world_id, collection=c.name, action="update", key_param=key, params={f.name: f.name}
            )
            if f
            else None
        )
    if action == "create":
        settable = [f for f in c.fields if not (f.enum and f.name in c.transitions) and f.format != "date"]
        return ToolBinding(
            world_id=world.world_id, collection=c.name, action="create", params={f.name: f.name for f in settable}
        )
    return None


def plan_bindings(world: World, n: int) -> list[ToolBinding]:
    """The first `n` tools of a world: get and update on the first collection, then on the
    next, then lists, creates and deletes; never the same binding twice."""
    plan: list[ToolBinding] = []
    # collections with a lifecycle first: their changes are the ones rules and tasks are about
    ordered = sorted(world.collections, key=lambda c: not c.transitions)
    for stage in (("get", "update"), ("list", "create", "delete")):
        for c in ordered:
            for action in stage:
                b = binding_for(world, c, action)
                if b is not None and b not in plan:
                    plan.append(b)
    return plan[:n]


def evolve_binding(world: World, b: ToolBinding, operator: str, rng: random.Random) -> ToolBinding:
    """What an evolution operator does to a binding, deliberately:
    specialize: an update that always sets one enum value (cancel_order), or a list with a fixed filter;
    generalize: an update of one more field, or a list with no filter;
    add_parameter: one more optional list filter, or one more updated field;
    compose: the tool becomes custom (its semantics are the LLM simulator's);
    add_constraint, add_error_modes: the binding is kept (the description changes)."""
    c = world.collection(b.collection)
    assert c is not None
    if operator == "compose":
        return b.model_copy(update={"action": "custom"})
    if operator == "specialize":
        status = _status(c)
        if b.action == "update" and status is not None:
            return b.model_copy(
                update={"params": {}, "fixed": {status.name: rng.choice(status.enum[1:] or status.enum)}}
            )
        if b.action == "list" and status is not None:
            return b.model_copy(update={"params": {}, "fixed": {status.name: rng.choice(status.enum)}})
    if operator in ("generalize", "add_parameter"):
        used = set(b.params.values()) | set(b.fixed)
        spare = [
            f
            for f in c.fields
            if f.name not in used and not f.unique and f.format != "date" and not (b.action == "update" and f.ref)
        ]
        if b.action == "list" and operator == "generalize":
            return b.model_copy(update={"params": {}, "fixed": {}})
        if b.action in ("list", "update") and spare:
            f = rng.choice(spare)
            return b.model_copy(update={"params": {**b.params, f.name: f.name}})
    return b


def chain_pairs(world: World, tools: list[ToolSpec]) -> list[tuple[ToolSpec, ToolSpec]]:
    """(first, second) pairs of `tools` on `world` where the first call's output names the record the second
    acts on: a list and an update or delete of the same collection, or a get whose reference field names
    the record another collection's get reads. A dependent_calls task is drawn on one (its gold chain).
    A list and a get of the same record is not a chain: the list's result already shows the record, so
    an agent that answers from it has done the task, and a gold get after it would be a call no one needs."""
    pairs = []
    for first in tools:
        b = first.binding
        for second in tools:
            sb = second.binding
            if b is None or sb is None:
                continue
            if (
                b.action == "list"
                and sb.action in ("update", "delete")
                and sb.collection == b.collection
                and second is not first
            ):
                pairs.append((first, second))
            if b.action == "get" and b.key_param and sb.action == "get" and sb.collection != b.collection:
                c = world.collection(b.collection)
                if c is not None and any(f.ref == sb.collection for f in c.fields):
                    pairs.append((first, second))
    return pairs
