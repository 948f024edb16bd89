"""World schemas: a domain's typed collections, designed by the LLM and validated, or derived
by code from the domain's entities when the design does not validate, so a weak model never
leaves a domain without a world. Also the rules agents follow, derived from the schema.

A schema is small on purpose: a few collections of flat records with a key ("ord-1042"),
typed fields with a seeding format, enums (status-like fields) with the transitions a
business allows, and references to other collections' keys.
"""

from __future__ import annotations

import re
from typing import Any

from worldsmith.records import CollectionSpec, Domain, FieldSpec, PolicyRule, World, content_id
from worldsmith.vocab import FIELD_FORMATS

SNAKE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
MAX_COLLECTIONS = 4
MAX_FIELDS = 6
MAX_ENUM = 6


def snake(text: str, max_len: int = 40) -> str:
    out = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:max_len].strip("_")
    return out if out and out[0].isalpha() else f"x_{out}" if out else "items"


UNCOUNTED = (
    "status",
    "news",
    "series",
    "species",
    "analysis",
    "basis",
    "bus",
    "campus",
    "census",
    "chassis",
    "corpus",
    "gas",
    "lens",
)


def singular(plural: str) -> str:
    if plural.endswith(UNCOUNTED) or plural.endswith(("us", "is")):
        return plural
    for tail, repl in (("ies", "y"), ("sses", "ss"), ("ches", "ch"), ("shes", "sh"), ("xes", "x")):
        if plural.endswith(tail) and len(plural) > len(tail) + 1:
            return plural[: -len(tail)] + repl
    return plural[:-1] if plural.endswith("s") and not plural.endswith("ss") and len(plural) > 2 else plural


def plural(entity: str) -> str:
    name = snake(entity)
    if name.endswith("s"):
        return name
    if name.endswith("y") and name[-2:-1] not in "aeiou":
        return name[:-1] + "ies"
    return name + ("es" if name.endswith(("ch", "sh", "x")) else "s")


def a_an(word: str) -> str:
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def id_prefix(entity: str, taken: set[str]) -> str:
    letters = re.sub(r"[^a-z]", "", entity.lower()) or "rec"
    consonants = letters[0] + re.sub(r"[aeiou]", "", letters[1:])
    for cand in (consonants[:3], letters[:3], letters[:2] + letters[-1:], letters[:4]):
        if len(cand) >= 2 and cand not in taken:
            return cand
    n = 2
    while f"{letters[:2]}{n}" in taken:
        n += 1
    return f"{letters[:2]}{n}"


# --------------------------------------------------------------------------- the LLM's design


def design_schema(entities: list[str]) -> dict[str, Any]:
    """JSON Schema of the LLM's world design: collections named after the domain's entities,
    typed fields with a format, enum values, references and a status flow."""
    names = [plural(e) for e in entities][:MAX_COLLECTIONS] or ["records"]
    field = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 2, "maxLength": 30},
            "type": {"enum": ["string", "integer", "number", "boolean"]},
            "format": {"enum": list(FIELD_FORMATS)},
            "values": {
                "type": "array",
                "maxItems": MAX_ENUM,
                "items": {"type": "string", "minLength": 2, "maxLength": 24},
            },
            "references": {"enum": ["", *names]},
        },
        "required": ["name", "type", "format", "values", "references"],
        "additionalProperties": False,
    }
    step = {
        "type": "object",
        "properties": {"from": {"type": "string", "maxLength": 24}, "to": {"type": "string", "maxLength": 24}},
        "required": ["from", "to"],
        "additionalProperties": False,
    }
    collection = {
        "type": "object",
        "properties": {
            "name": {"enum": names},
            "fields": {"type": "array", "minItems": 2, "maxItems": MAX_FIELDS, "items": field},
            "status_flow": {"type": "array", "maxItems": 8, "items": step},
        },
        "required": ["name", "fields", "status_flow"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"collections": {"type": "array", "minItems": 1, "maxItems": len(names), "items": collection}},
        "required": ["collections"],
        "additionalProperties": False,
    }


def world_id_for(domain: Domain) -> str:
    return content_id(domain.domain_id, "world", prefix="wld_")


def world_from_design(domain: Domain, design: dict[str, Any], today: str) -> tuple[World | None, str | None]:
    """(world, None), or (None, the first problem) when the design does not make a usable world."""
    collections: list[CollectionSpec] = []
    taken: set[str] = set()
    names = [c.get("name") for c in design.get("collections", [])]
    allowed = {plural(e) for e in domain.entities}
    if set(names) - allowed:
        return None, f"collections {sorted(set(names) - allowed)} are not the domain's ({', '.join(sorted(allowed))})"
    if len(set(names)) != len(names):
        return None, f"collections named twice: {sorted(n for n in set(names) if names.count(n) > 1)}"
    for c in design.get("collections", []):
        entity = singular(c["name"])
        key = f"{entity}_id"
        fields: list[FieldSpec] = []
        for f in c["fields"]:
            name = f["name"].strip()
            if not SNAKE.match(name):
                return None, f"{c['name']}: field name {name!r} is not snake_case"
            if name == key or name in ("id", *(x.name for x in fields)):
                return None, f"{c['name']}: field {name!r} repeats the key or another field"
            ref = f["references"] or None
            if ref is not None and (ref == c["name"] or ref not in names):
                return None, f"{c['name']}.{name}: references {ref!r}, not another collection of this world"
            values = list(dict.fromkeys(v.strip().lower() for v in f["values"] if v.strip()))
            if values and (f["type"] != "string" or len(values) < 2 or any(not SNAKE.match(v) for v in values)):
                return (
                    None,
                    f"{c['name']}.{name}: enum values {f['values']} must be 2+ distinct snake_case strings "
                    "of a string field",
                )
            if ref is not None and values:
                return (
                    None,
                    f"{c['name']}.{name}: a reference holds another record's key, so it cannot also list values",
                )
            if ref is not None and f["type"] != "string":
                return None, f"{c['name']}.{name}: a reference holds a key, so its type must be string"
            fmt = "code" if ref else ("text" if values else f["format"])
            fields.append(FieldSpec(name=name, type=f["type"], format=fmt, enum=values, ref=ref, unique=fmt == "email"))
        transitions: dict[str, dict[str, list[str]]] = {}
        status = next((f for f in fields if f.enum and f.name in ("status", "state")), None) or next(
            (f for f in fields if f.enum), None
        )
        for step in c["status_flow"]:
            a, b = step["from"].strip().lower(), step["to"].strip().lower()
            if status is None:
                return None, f"{c['name']}: a status flow without an enum field"
            if a not in status.enum or b not in status.enum or a == b:
                return (
                    None,
                    f"{c['name']}: status flow step {a!r} -> {b!r} is not between two different values "
                    f"of {status.name} {status.enum}",
                )
            transitions.setdefault(status.name, {}).setdefault(a, [])
            if b not in transitions[status.name][a]:
                transitions[status.name][a].append(b)
        if status is not None and status.name in transitions:
            for v in status.enum:
                transitions[status.name].setdefault(v, [])
        prefix = id_prefix(entity, taken)
        taken.add(prefix)
        collections.append(
            CollectionSpec(
                name=c["name"], entity=entity, key=key, id_prefix=prefix, fields=fields, transitions=transitions
            )
        )
    world = World(
        world_id=world_id_for(domain),
        domain_id=domain.domain_id,
        domain=domain.name,
        category=domain.category,
        description=domain.description,
        collections=collections,
        today=today,
        source="llm",
    )
    problem = world_problem(world)
    if problem:
        return None, problem
    return world.model_copy(update={"rules": derive_rules(world)}), None


def world_problem(world: World) -> str | None:
    """Why a world cannot be executed and seeded, or None."""
    if not world.collections:
        return "no collections"
    names = {c.name for c in world.collections}
    for c in world.collections:
        if len(c.fields) < 2:
            return f"{c.name}: fewer than 2 fields besides the key"
        for f in c.fields:
            if f.ref is not None and f.ref not in names:
                return f"{c.name}.{f.name}: references unknown collection {f.ref!r}"
            if f.format not in FIELD_FORMATS:
                return f"{c.name}.{f.name}: unknown format {f.format!r}"
        for field, flow in c.transitions.items():
            spec = next((f for f in c.fields if f.name == field), None)
            if (
                spec is None
                or not spec.enum
                or set(flow) - set(spec.enum)
                or {v for vs in flow.values() for v in vs} - set(spec.enum)
            ):
                return f"{c.name}: transitions of {field!r} name values outside its enum"
    if _ref_cycle(world):
        return "references form a cycle (no collection can be seeded first)"
    return None


def _ref_cycle(world: World) -> bool:
    try:
        seeding_order(world)
    except ValueError:
        return True
    return False


def seeding_order(world: World) -> list[CollectionSpec]:
    """Collections in an order where every referenced collection comes first."""
    left = {c.name: c for c in world.collections}
    out: list[CollectionSpec] = []
    while left:
        ready = [
            c for c in left.values() if all(f.ref is None or f.ref not in left or f.ref == c.name for f in c.fields)
        ]
        if not ready:
            raise ValueError("reference cycle")
        for c in ready:
            out.append(c)
            del left[c.name]
    return out


# --------------------------------------------------------------------------- derived by code

PEOPLE = (
    "customer",
    "user",
    "patient",
    "student",
    "member",
    "employee",
    "passenger",
    "guest",
    "client",
    "contact",
    "traveler",
    "traveller",
    "subscriber",
    "tenant",
    "driver",
    "owner",
    "person",
    "account_holder",
    "buyer",
    "seller",
    "vendor",
    "supplier",
    "reviewer",
    "operator",
    "technician",
    "doctor",
    "teacher",
    "instructor",
    "agent",
)
TRANSACTIONS = (
    "order",
    "booking",
    "reservation",
    "ticket",
    "shipment",
    "appointment",
    "request",
    "claim",
    "payment",
    "transfer",
    "trade",
    "invoice",
    "refund",
    "return",
    "delivery",
    "job",
    "task",
    "issue",
    "incident",
    "enrollment",
    "enrolment",
    "prescription",
    "transaction",
    "case",
    "application",
    "loan",
    "purchase",
    "rental",
    "session",
    "trip",
)
MONEY = (
    "order",
    "payment",
    "invoice",
    "transfer",
    "trade",
    "refund",
    "claim",
    "purchase",
    "booking",
    "reservation",
    "rental",
    "loan",
    "transaction",
    "prescription",
    "subscription",
    "bill",
    "return",
    "position",
)
GOODS = (
    "product",
    "item",
    "stock",
    "inventory",
    "part",
    "material",
    "supply",
    "book",
    "medicine",
    "ticket_type",
    "asset",
)
ASSETS = (
    "account",
    "card",
    "device",
    "subscription",
    "policy",
    "license",
    "membership",
    "contract",
    "robot",
    "vehicle",
    "sensor",
)
LIFECYCLES: dict[str, tuple[list[str], dict[str, list[str]]]] = {
    "transaction": (
        ["pending", "confirmed", "completed", "cancelled"],
        {
            "pending": ["confirmed", "cancelled"],
            "confirmed": ["completed", "cancelled"],
            "completed": [],
            "cancelled": [],
        },
    ),
    "asset": (
        ["active", "suspended", "closed"],
        {"active": ["suspended", "closed"], "suspended": ["active", "closed"], "closed": []},
    ),
    "item": (
        ["available", "reserved", "retired"],
        {"available": ["reserved", "retired"], "reserved": ["available", "retired"], "retired": []},
    ),
}


def _is(entity: str, words: tuple[str, ...]) -> bool:
    """Whether a word of the entity's name starts with one of `words` (reagent is not an agent)."""
    return any(part.startswith(w) for part in entity.split("_") for w in words)


def _kind(entity: str) -> str:
    if _is(entity, PEOPLE):
        return "person"
    if _is(entity, TRANSACTIONS):
        return "transaction"
    if _is(entity, ASSETS):
        return "asset"
    return "item"


def derive_world(domain: Domain, today: str, problem: str | None = None) -> World:
    """A plain, valid schema from the domain's entities: people get a name, an email and a
    phone; transactions an amount, a date, a status lifecycle and a reference to the people
    (or the first collection); assets and items a name and a lifecycle of their own."""
    entities = list(dict.fromkeys(plural(e) for e in domain.entities if snake(e)))[:MAX_COLLECTIONS] or ["records"]
    kinds = {name: _kind(singular(name)) for name in entities}
    person = next((n for n in entities if kinds[n] == "person"), None)
    item = next((n for n in entities if kinds[n] == "item"), None)
    collections: list[CollectionSpec] = []
    taken: set[str] = set()
    for name in entities:
        entity, kind = singular(name), kinds[name]
        if kind == "person":
            fields = [
                FieldSpec(name="full_name", format="person_name"),
                FieldSpec(name="email", format="email", unique=True),
                FieldSpec(name="phone", format="phone"),
                FieldSpec(name="city", format="city"),
            ]
            transitions: dict[str, dict[str, list[str]]] = {}
        else:
            values, flow = LIFECYCLES[
                "transaction" if kind == "transaction" else "asset" if kind == "asset" else "item"
            ]
            prose = kind == "transaction" and _is(
                entity, ("ticket", "issue", "incident", "case", "request", "task", "job", "claim")
            )
            goods = _is(entity, GOODS)
            fields = [
                FieldSpec(
                    name="title" if kind == "transaction" else "name",
                    format="sentence" if prose else "product" if kind == "transaction" or goods else "label",
                )
            ]
            # transactions name who and what they are about; assets whom they belong to; items stand alone
            for target in (person, item) if kind == "transaction" else (person,) if kind == "asset" else ():
                if target is not None and target != name:
                    fields.append(FieldSpec(name=f"{singular(target)}_id", format="code", ref=target))
            if kind == "transaction" and _is(entity, MONEY):
                fields.append(FieldSpec(name="amount", type="number", format="money"))
            elif kind == "transaction":
                fields.append(FieldSpec(name="priority", enum=["low", "normal", "high"]))
            if kind == "transaction":
                fields.append(FieldSpec(name="date", format="date"))
            elif kind == "item" and goods:
                fields.append(FieldSpec(name="quantity", type="integer", format="quantity"))
            elif kind == "item":
                fields.append(FieldSpec(name="owner", format="person_name"))
            fields.append(FieldSpec(name="status", enum=list(values)))
            transitions = {"status": {k: list(v) for k, v in flow.items()}}
        prefix = id_prefix(entity, taken)
        taken.add(prefix)
        collections.append(
            CollectionSpec(
                name=name, entity=entity, key=f"{entity}_id", id_prefix=prefix, fields=fields, transitions=transitions
            )
        )
    world = World(
        world_id=world_id_for(domain),
        domain_id=domain.domain_id,
        domain=domain.name,
        category=domain.category,
        description=domain.description,
        collections=collections,
        today=today,
        source="derived",
        problem=problem,
    )
    return world.model_copy(update={"rules": derive_rules(world)})


# --------------------------------------------------------------------------- rules


def terminal_values(c: CollectionSpec, field: str) -> list[str]:
    """The values of an enum field with no way out (completed, closed...)."""
    return [v for v, nxt in c.transitions.get(field, {}).items() if not nxt]


def derive_rules(world: World) -> list[PolicyRule]:
    """Transition rules (the executor enforces them) and forbid rules (only the agent does):
    a record in a final state is neither deleted nor edited."""
    rules: list[PolicyRule] = []
    for c in world.collections:
        for field, flow in c.transitions.items():
            moves = "; ".join(f"{a} -> {' or '.join(b)}" for a, b in flow.items() if b)
            finals = terminal_values(c, field)
            text = f"{a_an(c.entity).capitalize()}'s {field} may change only like this: {moves}."
            if finals:
                text += f" {a_an(c.entity).capitalize()} that is {' or '.join(finals)} keeps that {field}."
            rules.append(
                PolicyRule(
                    rule_id=content_id(world.world_id, c.name, field, "transition")[:12],
                    kind="transition",
                    collection=c.name,
                    action="update",
                    field=field,
                    text=text,
                )
            )
            kept = [v for v in finals if v not in ("cancelled", "canceled")] or finals
            if kept:
                rules.append(
                    PolicyRule(
                        rule_id=content_id(world.world_id, c.name, field, "forbid")[:12],
                        kind="forbid",
                        collection=c.name,
                        action="delete",
                        field=field,
                        values=kept,
                        text=(
                            f"Never delete {a_an(c.entity)} whose {field} is {' or '.join(kept)}: "
                            "its record must be kept."
                        ),
                    )
                )
                rules.append(
                    PolicyRule(
                        rule_id=content_id(world.world_id, c.name, field, "frozen")[:12],
                        kind="forbid",
                        collection=c.name,
                        action="update",
                        field=field,
                        values=kept,
                        text=f"Do not change any detail of {a_an(c.entity)} whose {field} is {' or '.join(kept)}.",
                    )
                )
    return rules
