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
    "quote",
    "bid",
    "registration",
    "submission",
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
    "good",
    "merchandise",
    "sku",
)
# goods whose seeded name is a product's ("blue kettle"); a book or a medicine gets a label
PRODUCT_GOODS = ("product", "item", "stock", "inventory", "part", "material", "supply", "good", "merchandise", "sku")
# things lent or let out for a while: available, reserved, retired fits them as it fits goods
RENTABLE = (
    "room",
    "seat",
    "desk",
    "table",
    "bed",
    "cabin",
    "studio",
    "space",
    "spot",
    "parking",
    "locker",
    "court",
    "equipment",
    "bike",
    "car",
    "boat",
    "copy",
    "slot",
    "venue",
)
# assets that are things, lent or booked as goods are (a rental car, a loaned device), unlike an account
LENDABLE = ("vehicle", "device", "robot", "sensor")
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
    "position",
    "portfolio",
    "wallet",
)
# things that are scheduled, happen and end (a flight, a build, a meeting), not bought or owned
OCCURRENCES = (
    "event",
    "meeting",
    "mission",
    "flight",
    "build",
    "run",
    "deployment",
    "shift",
    "exam",
    "lesson",
    "class",
    "visit",
    "match",
    "game",
    "race",
    "tour",
    "webinar",
    "workshop",
    "inspection",
    "maintenance",
    "consultation",
    "interview",
    "release",
    "sprint",
)
# transactions that stay open for a while, so active -> suspended -> closed fits them too
LONG_RUNNING = ("loan", "rental", "lease", "enrollment", "enrolment", "session", "case")
# words of a category or domain name that make it a shop (its orders are of products), a market (its orders
# name an instrument) or a kind of finance (retail banking is no shop)
SHOPPING = ("shop", "store", "retail", "commerce", "ecommerce", "marketplace", "grocery", "catalog", "merchant", "cart")
TRADING = (
    "trading",
    "brokerage",
    "broker",
    "crypto",
    "exchange",
    "portfolio",
    "investment",
    "invest",
    "securities",
    "forex",
    "equity",
    "equities",
)
FINANCE = (*TRADING, "bank", "banking", "finance", "financial", "insurance", "credit", "lending", "mortgage")
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
    "occurrence": (
        ["scheduled", "in_progress", "completed", "cancelled"],
        {
            "scheduled": ["in_progress", "cancelled"],
            "in_progress": ["completed", "cancelled"],
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
    "record": (
        ["draft", "active", "archived"],
        {"draft": ["active", "archived"], "active": ["archived"], "archived": []},
    ),
}
# the lifecycle each kind of entity gets (people get none)
KIND_LIFECYCLE = {
    "transaction": "transaction",
    "occurrence": "occurrence",
    "goods": "item",
    "asset": "asset",
    "record": "record",
}
KINDS = (
    ("person", PEOPLE),
    ("transaction", TRANSACTIONS),
    ("occurrence", OCCURRENCES),
    ("goods", GOODS + RENTABLE),
    ("asset", ASSETS),
)


def entity_is(entity: str, words: tuple[str, ...]) -> bool:
    """Whether the entity, or a word of its name, is one of `words` (a reagent is not an agent, a booking
    not a book)."""
    return entity in words or any(part in words or singular(part) in words for part in entity.split("_"))


def entity_kind(entity: str) -> str:
    """person, transaction, occurrence, goods, asset, or record (a kind the word lists do not know).
    The whole name decides first, then its head noun (an order_item is goods, a support_ticket a
    transaction), then the words before it."""
    entity = snake(entity)
    for candidate in (entity, *reversed(entity.split("_"))):
        for kind, words in KINDS:
            if candidate in words or singular(candidate) in words:
                return kind
    return "record"


def _words(*texts: str) -> set[str]:
    return {singular(w) for t in texts for w in re.split(r"[^a-z]+", t.lower()) if w}


def shopping_domain(category: str, name: str) -> bool:
    """A shop: its orders are of products. The domain's own name says it first (an "Online shop" a
    model proposed under a trading category is a shop), the category where the name says neither."""
    own = _words(name)
    if own & set(SHOPPING) or own & set(FINANCE):
        return bool(own & set(SHOPPING)) and not own & set(FINANCE)
    words = _words(category)
    return bool(words & set(SHOPPING)) and not words & set(FINANCE)


def trading_domain(category: str, name: str) -> bool:
    """A market: its orders and trades name an instrument."""
    return bool(_words(category, name) & set(TRADING))


def finance_domain(category: str, name: str) -> bool:
    """A bank, a market, an insurer: what it calls products are not goods (the name first, as above)."""
    own = _words(name)
    if own & set(SHOPPING) and not own & set(FINANCE):
        return False
    return bool(_words(category, name) & set(FINANCE))


def sells_goods(world: World) -> bool:
    """Whether the world's transactions may be of products: a shop, or a world with goods that is no bank
    or market."""
    return _sells_goods(world.category, world.domain, [entity_kind(c.entity) for c in world.collections])


def _sells_goods(category: str, name: str, kinds: list[str]) -> bool:
    return shopping_domain(category, name) or (not finance_domain(category, name) and "goods" in kinds)


def _subject(entity: str, kind: str, products: bool, trading: bool) -> FieldSpec:
    """The field that says what a transaction or an occurrence is about: a ticket's sentence, an order's
    product in a shop, a trade's instrument in a market, a flight's number, else a label."""
    if kind == "transaction" and entity_is(
        entity, ("ticket", "issue", "incident", "case", "request", "task", "job", "claim")
    ):
        return FieldSpec(name="title", format="sentence")
    if kind == "transaction" and trading and entity_is(entity, ("order", "trade", "position", "transaction")):
        return FieldSpec(name="symbol", format="code")
    if kind == "transaction" and products:
        return FieldSpec(name="title", format="product")
    return FieldSpec(name="title", format="code" if entity_is(entity, ("flight",)) else "label")


def derive_world(domain: Domain, today: str, problem: str | None = None) -> World:
    """A plain, valid schema from the domain's entities, coherent by construction: people get a
    name, an email and a phone; transactions and occurrences what they are about, a date, a
    lifecycle and references to the people and to what they concern (goods, else an asset, else
    another record); an amount when money changes hands; goods a name, a quantity and the
    available/reserved/retired lifecycle; assets an owner and active/suspended/closed; any other
    record a name, an owner and draft -> active -> archived. A transaction is of products only in
    a shop or a world with goods."""
    entities = list(dict.fromkeys(plural(e) for e in domain.entities if snake(e)))[:MAX_COLLECTIONS] or ["records"]
    kinds = {name: entity_kind(singular(name)) for name in entities}
    person = next((n for n in entities if kinds[n] == "person"), None)
    # what a transaction or an occurrence concerns: goods first, then an asset, then any other record
    concerns = [n for kind in ("goods", "asset", "record", "occurrence") for n in entities if kinds[n] == kind]
    trading = trading_domain(domain.category, domain.name)
    products = _sells_goods(domain.category, domain.name, list(kinds.values()))
    collections: list[CollectionSpec] = []
    taken: set[str] = set()
    for name in entities:
        entity, kind = singular(name), kinds[name]
        transitions: dict[str, dict[str, list[str]]] = {}
        if kind == "person":
            fields = [
                FieldSpec(name="full_name", format="person_name"),
                FieldSpec(name="email", format="email", unique=True),
                FieldSpec(name="phone", format="phone"),
                FieldSpec(name="city", format="city"),
            ]
        elif kind in ("transaction", "occurrence"):
            fields = [_subject(entity, kind, products, trading)]
            # an occurrence concerns goods or an asset (a mission its robot), never a record of another kind
            what = next(
                (n for n in concerns if n != name and (kind == "transaction" or kinds[n] in ("goods", "asset"))), None
            )
            for target in (person, what):
                if target is not None and target != name:
                    fields.append(FieldSpec(name=f"{singular(target)}_id", format="code", ref=target))
            if kind == "transaction" and entity_is(entity, MONEY):
                fields.append(FieldSpec(name="amount", type="number", format="money"))
            elif kind == "transaction":
                fields.append(FieldSpec(name="priority", enum=["low", "normal", "high"]))
            fields.append(FieldSpec(name="date", format="date"))
        elif kind == "goods":
            sold = products and entity_is(entity, PRODUCT_GOODS)
            fields = [FieldSpec(name="name", format="product" if sold else "label")]
            if entity_is(entity, GOODS):
                fields.append(FieldSpec(name="quantity", type="integer", format="quantity"))
            else:
                fields.append(FieldSpec(name="location", format="city"))
        elif kind == "asset":
            fields = [FieldSpec(name="name", format="label")]
            if person is not None:
                fields.append(FieldSpec(name=f"{singular(person)}_id", format="code", ref=person))
        else:
            fields = [FieldSpec(name="name", format="label"), FieldSpec(name="owner", format="person_name")]
        if kind != "person":
            values, flow = LIFECYCLES[KIND_LIFECYCLE[kind]]
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
