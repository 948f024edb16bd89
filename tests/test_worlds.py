"""The world model, without a model server: schemas (derived and designed), seeding, execution
of bound tool calls, tool bindings and grounded decoding. Expected values are written by hand."""

from __future__ import annotations

import copy
import random
import re

import jsonschema
import pytest

from worldsmith.records import CollectionSpec, Domain, FieldSpec, ToolBinding, ToolSpec, World
from worldsmith.tools.evolve import bound_spec
from worldsmith.worldmodel.bindings import (
    annotations,
    binding_for,
    default_name,
    evolve_binding,
    input_schema,
    output_schema,
    plan_bindings,
)
from worldsmith.worldmodel.execute import execute
from worldsmith.worldmodel.grounding import ground_tools, seen_keys
from worldsmith.worldmodel.schema import (
    derive_world,
    design_schema,
    id_prefix,
    plural,
    seeding_order,
    singular,
    world_from_design,
    world_problem,
)
from worldsmith.worldmodel.seed import next_key, seed_state
from worldsmith.worldmodel.state import apply_patch
from worldsmith.worldmodel.toolset import ToolSet

TODAY = "2025-03-01"
ORDER_STATUSES = ["pending", "confirmed", "completed", "cancelled"]
PRODUCT_STATUSES = ["available", "reserved", "retired"]


def shop_domain(entities: list[str] | None = None) -> Domain:
    entities = ["customers", "orders", "products"] if entities is None else entities
    return Domain(
        domain_id="dom_shop", category="retail", name="web shop", description="An online shop.", entities=entities
    )


@pytest.fixture(scope="module")
def world() -> World:
    return derive_world(shop_domain(), TODAY)


def shop_state() -> dict:
    """A small hand-made state of the derived shop world (fresh each call)."""
    return {
        "customers": [
            {
                "customer_id": "cst-1001",
                "full_name": "Ada Lovelace",
                "email": "ada@example.com",
                "phone": "+1-555-010-0001",
                "city": "London",
            },
            {
                "customer_id": "cst-1002",
                "full_name": "Alan Turing",
                "email": "alan@example.com",
                "phone": "+1-555-010-0002",
                "city": "Manchester",
            },
            {
                "customer_id": "cst-1003",
                "full_name": "Grace Hopper",
                "email": "grace@example.com",
                "phone": "+1-555-010-0003",
                "city": "Arlington",
            },
        ],
        "orders": [
            {
                "order_id": "ord-2001",
                "title": "blue kettle",
                "customer_id": "cst-1001",
                "product_id": "prd-3001",
                "amount": 39.5,
                "date": "2025-02-10",
                "status": "pending",
            },
            {
                "order_id": "ord-2002",
                "title": "steel toaster",
                "customer_id": "cst-1002",
                "product_id": "prd-3002",
                "amount": 25.0,
                "date": "2025-02-11",
                "status": "completed",
            },
            {
                "order_id": "ord-2005",
                "title": "red blender",
                "customer_id": "cst-1001",
                "product_id": "prd-3002",
                "amount": 80.0,
                "date": "2025-02-12",
                "status": "confirmed",
            },
        ],
        "products": [
            {"product_id": "prd-3001", "name": "blue kettle", "quantity": 4, "status": "available"},
            {"product_id": "prd-3002", "name": "steel toaster", "quantity": 2, "status": "reserved"},
        ],
    }


def bind(world: World, collection: str, action: str, **kw) -> ToolBinding:
    return ToolBinding(world_id=world.world_id, collection=collection, action=action, **kw)


# --------------------------------------------------------------------------- derived worlds


def test_derived_world_is_valid_with_the_expected_collections(world):
    """derive_world makes a valid world: one collection per entity, singular entities, keys and prefixes."""
    assert world_problem(world) is None
    assert world.source == "derived" and world.problem is None and world.today == TODAY
    assert world.world_id.startswith("wld_") and world.world_id == derive_world(shop_domain(), TODAY).world_id
    got = [(c.name, c.entity, c.key, c.id_prefix) for c in world.collections]
    assert got == [
        ("customers", "customer", "customer_id", "cst"),
        ("orders", "order", "order_id", "ord"),
        ("products", "product", "product_id", "prd"),
    ]


def test_derived_people_collection_has_a_unique_email(world):
    """People get name, email (unique), phone and city, and no lifecycle."""
    customers = world.collection("customers")
    assert [(f.name, f.format, f.unique) for f in customers.fields] == [
        ("full_name", "person_name", False),
        ("email", "email", True),
        ("phone", "phone", False),
        ("city", "city", False),
    ]
    assert customers.transitions == {}


def test_derived_transaction_references_people_and_items_with_the_lifecycle(world):
    """An order references the customers and the products, has an amount, a date and the transaction lifecycle."""
    orders = world.collection("orders")
    assert [(f.name, f.type, f.format, f.ref) for f in orders.fields] == [
        ("title", "string", "product", None),
        ("customer_id", "string", "code", "customers"),
        ("product_id", "string", "code", "products"),
        ("amount", "number", "money", None),
        ("date", "string", "date", None),
        ("status", "string", "text", None),
    ]
    status = orders.fields[-1]
    assert status.enum == ORDER_STATUSES
    assert orders.transitions == {
        "status": {
            "pending": ["confirmed", "cancelled"],
            "confirmed": ["completed", "cancelled"],
            "completed": [],
            "cancelled": [],
        }
    }


def test_derived_item_has_the_item_lifecycle(world):
    """Goods get a product name, a quantity and available -> reserved/retired."""
    products = world.collection("products")
    assert [(f.name, f.format) for f in products.fields] == [
        ("name", "product"),
        ("quantity", "quantity"),
        ("status", "text"),
    ]
    assert products.fields[-1].enum == PRODUCT_STATUSES
    assert products.transitions == {
        "status": {"available": ["reserved", "retired"], "reserved": ["available", "retired"], "retired": []}
    }


def test_derived_rules_transition_and_forbid_for_the_final_state(world):
    """Each lifecycle gives a transition rule and forbids deleting or updating a record in its final
    non-cancelled state (completed, not cancelled)."""
    orders = [(r.kind, r.action, r.field, r.values) for r in world.rules if r.collection == "orders"]
    assert orders == [
        ("transition", "update", "status", []),
        ("forbid", "delete", "status", ["completed"]),
        ("forbid", "update", "status", ["completed"]),
    ]
    transition = next(r for r in world.rules if r.collection == "orders" and r.kind == "transition")
    assert transition.text == (
        "An order's status may change only like this: pending -> confirmed or cancelled; "
        "confirmed -> completed or cancelled. An order that is completed or cancelled keeps that status."
    )
    delete = next(r for r in world.rules if r.collection == "orders" and r.action == "delete")
    assert delete.text == "Never delete an order whose status is completed: its record must be kept."
    products = [(r.kind, r.action, r.values) for r in world.rules if r.collection == "products"]
    assert products == [
        ("transition", "update", []),
        ("forbid", "delete", ["retired"]),
        ("forbid", "update", ["retired"]),
    ]
    assert not [r for r in world.rules if r.collection == "customers"]
    assert len({r.rule_id for r in world.rules}) == 6


def test_seeding_order_puts_referenced_collections_first(world):
    """Customers and products are seeded before the orders that reference them."""
    assert [c.name for c in seeding_order(world)] == ["customers", "products", "orders"]


def test_derive_world_without_entities_still_gives_a_world():
    """No entity: one `records` collection; an entity with no letters becomes `items` (snake's fallback)."""
    w = derive_world(shop_domain([]), TODAY)
    assert [c.name for c in w.collections] == ["records"] and world_problem(w) is None
    w = derive_world(shop_domain(["!!!"]), TODAY)
    assert [c.name for c in w.collections] == ["items"] and world_problem(w) is None


@pytest.mark.parametrize(
    "word, expected",
    [
        ("orders", "order"),
        ("categories", "category"),
        ("addresses", "address"),
        ("batches", "batch"),
        ("boxes", "box"),
        ("dishes", "dish"),
        ("glass", "glass"),
    ],
)
def test_singular(word, expected):
    """singular undoes the English plural endings plural() makes."""
    assert singular(word) == expected


@pytest.mark.parametrize(
    "word, expected",
    [
        ("order", "orders"),
        ("category", "categories"),
        ("day", "days"),
        ("box", "boxes"),
        ("Line Item", "line_items"),
        ("orders", "orders"),
        ("match", "matches"),
    ],
)
def test_plural(word, expected):
    """plural snake-cases and adds s/es/ies; a word ending in s is kept."""
    assert plural(word) == expected


@pytest.mark.parametrize(
    "entity, taken, expected",
    [
        ("order", set(), "ord"),
        ("customer", set(), "cst"),
        ("account", set(), "acc"),
        ("order", {"ord"}, "orr"),
        ("ai", set(), "ai"),
        ("order", {"ord", "orr", "orde"}, "or2"),
    ],
)
def test_id_prefix(entity, taken, expected):
    """id_prefix: first letter + consonants, then fallbacks that avoid the prefixes taken."""
    assert id_prefix(entity, taken) == expected


# --------------------------------------------------------------------------- designed worlds


def design() -> dict:
    """A valid design as the LLM would return it for entities customers and orders."""
    return {
        "collections": [
            {
                "name": "customers",
                "fields": [
                    {"name": "full_name", "type": "string", "format": "person_name", "values": [], "references": ""},
                    {"name": "email", "type": "string", "format": "email", "values": [], "references": ""},
                    {"name": "tier", "type": "string", "format": "text", "values": ["Basic", "gold"], "references": ""},
                ],
                "status_flow": [],
            },
            {
                "name": "orders",
                "fields": [
                    {
                        "name": "customer_id",
                        "type": "string",
                        "format": "text",
                        "values": [],
                        "references": "customers",
                    },
                    {"name": "total", "type": "number", "format": "money", "values": [], "references": ""},
                    {
                        "name": "status",
                        "type": "string",
                        "format": "label",
                        "values": ["placed", "shipped", "delivered", "returned"],
                        "references": "",
                    },
                ],
                "status_flow": [
                    {"from": "Placed", "to": "shipped"},
                    {"from": "shipped", "to": "delivered"},
                    {"from": "delivered", "to": "returned"},
                    {"from": "placed", "to": "shipped"},
                ],
            },
        ]
    }


def test_design_schema_validates_the_valid_design():
    """The design JSON Schema accepts the design and refuses a reference outside the world's collections."""
    schema = design_schema(["customers", "orders"])
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(design(), schema)
    bad = design()
    bad["collections"][1]["fields"][0]["references"] = "suppliers"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    bad = design()
    bad["collections"][0]["name"] = "clients"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_world_from_design_keeps_what_was_written():
    """Fields, formats, enums (lower-cased), references and the status flow are as designed; a reference's
    format becomes code, an enum's text; an email is unique; rules come from the flow."""
    w, problem = world_from_design(shop_domain(["customers", "orders"]), design(), TODAY)
    assert problem is None and w is not None and w.source == "llm"
    customers, orders = w.collections
    assert (customers.name, customers.entity, customers.key, customers.id_prefix) == (
        "customers",
        "customer",
        "customer_id",
        "cst",
    )
    assert [(f.name, f.type, f.format, f.enum, f.ref, f.unique) for f in customers.fields] == [
        ("full_name", "string", "person_name", [], None, False),
        ("email", "string", "email", [], None, True),
        ("tier", "string", "text", ["basic", "gold"], None, False),
    ]
    assert customers.transitions == {}
    assert (orders.entity, orders.key, orders.id_prefix) == ("order", "order_id", "ord")
    assert [(f.name, f.type, f.format, f.enum, f.ref) for f in orders.fields] == [
        ("customer_id", "string", "code", [], "customers"),
        ("total", "number", "money", [], None),
        ("status", "string", "text", ["placed", "shipped", "delivered", "returned"], None),
    ]
    assert orders.transitions == {
        "status": {"placed": ["shipped"], "shipped": ["delivered"], "delivered": ["returned"], "returned": []}
    }
    assert [(r.collection, r.kind, r.action, r.values) for r in w.rules] == [
        ("orders", "transition", "update", []),
        ("orders", "forbid", "delete", ["returned"]),
        ("orders", "forbid", "update", ["returned"]),
    ]


def _broken(change) -> dict:
    d = design()
    change(d)
    return d


def _set(path: tuple, value):
    def change(d):
        target = d
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return change


INVALID = [
    (
        "non_snake_field",
        _set(("collections", 0, "fields", 0, "name"), "Full Name"),
        ["customers", "'Full Name'", "snake_case"],
    ),
    (
        "unknown_reference",
        _set(("collections", 1, "fields", 0, "references"), "suppliers"),
        ["orders.customer_id", "'suppliers'", "not another collection"],
    ),
    (
        "self_reference",
        _set(("collections", 1, "fields", 0, "references"), "orders"),
        ["orders.customer_id", "'orders'"],
    ),
    (
        "enum_on_number",
        _set(("collections", 1, "fields", 1, "values"), ["low", "high"]),
        ["orders.total", "['low', 'high']", "string field"],
    ),
    (
        "flow_outside_enum",
        lambda d: d["collections"][1]["status_flow"].append({"from": "placed", "to": "lost"}),
        ["orders", "'placed' -> 'lost'", "status"],
    ),
    (
        "flow_to_itself",
        lambda d: d["collections"][1]["status_flow"].append({"from": "shipped", "to": "shipped"}),
        ["orders", "'shipped' -> 'shipped'"],
    ),
    ("named_twice", lambda d: d["collections"].append(copy.deepcopy(d["collections"][1])), ["named twice", "orders"]),
    ("field_is_the_key", _set(("collections", 1, "fields", 1, "name"), "order_id"), ["orders", "'order_id'", "key"]),
    (
        "flow_without_enum",
        lambda d: (
            d["collections"][0]["status_flow"].append({"from": "basic", "to": "gold"})
            or d["collections"][0]["fields"].pop()
        ),
        ["customers", "without an enum"],
    ),
    (
        "reference_cycle",
        lambda d: d["collections"][0]["fields"].append(
            {"name": "last_order", "type": "string", "format": "code", "values": [], "references": "orders"}
        ),
        ["cycle"],
    ),
]


@pytest.mark.parametrize("kind, change, fragments", INVALID, ids=[i[0] for i in INVALID])
def test_world_from_design_refuses_invalid_designs(kind, change, fragments):
    """Each kind of broken design gives no world and a problem that names what is wrong."""
    w, problem = world_from_design(shop_domain(["customers", "orders"]), _broken(change), TODAY)
    assert w is None
    assert problem is not None and all(frag in problem for frag in fragments), problem


def test_a_field_with_values_and_a_reference_is_refused_or_seeded_with_real_keys():
    """A reference field that also lists enum values must not yield dangling references: either the design
    is refused, or the seeded orders point at existing customers."""
    d = design()
    d["collections"][1]["fields"][0]["values"] = ["vip_one", "vip_two"]
    d["collections"][1]["status_flow"] = []
    w, _ = world_from_design(shop_domain(["customers", "orders"]), d, TODAY)
    if w is not None:
        state = seed_state(w, 0)
        keys = {c["customer_id"] for c in state["customers"]}
        assert all(o["customer_id"] in keys for o in state["orders"])


# --------------------------------------------------------------------------- seeding


def test_seed_state_is_deterministic_per_seed(world):
    """The same seed gives the same state; another seed another one."""
    assert seed_state(world, 7) == seed_state(world, 7)
    assert seed_state(world, 7) != seed_state(world, 8)


@pytest.mark.parametrize("seed", range(6))
def test_seed_state_is_consistent(world, seed):
    """Collections in world order, counts within bounds, keys <prefix>-<4 digits> numbered consecutively,
    references to existing keys, unique emails, enum values inside the enum, dates near today."""
    state = seed_state(world, seed)
    assert list(state) == ["customers", "orders", "products"]
    for name, prefix, key in (
        ("customers", "cst", "customer_id"),
        ("orders", "ord", "order_id"),
        ("products", "prd", "product_id"),
    ):
        rows = state[name]
        assert 3 <= len(rows) <= 5
        keys = [r[key] for r in rows]
        assert all(re.fullmatch(rf"{prefix}-\d{{4}}", k) for k in keys), keys
        numbers = [int(k.split("-")[1]) for k in keys]
        assert numbers == list(range(numbers[0], numbers[0] + len(rows)))
    customer_keys = {r["customer_id"] for r in state["customers"]}
    product_keys = {r["product_id"] for r in state["products"]}
    for order in state["orders"]:
        assert order["customer_id"] in customer_keys and order["product_id"] in product_keys
        assert order["status"] in ORDER_STATUSES
        assert "2024-12-01" <= order["date"] <= "2025-04-30"
        assert isinstance(order["amount"], float)
    emails = [r["email"] for r in state["customers"]]
    assert len(set(emails)) == len(emails) and all("@" in e for e in emails)
    assert all(r["status"] in PRODUCT_STATUSES and 1 <= r["quantity"] <= 12 for r in state["products"])


def test_seed_state_respects_the_record_bounds(world):
    """records=(a, b) bounds the records of every collection."""
    for seed in range(4):
        state = seed_state(world, seed, records=(6, 8))
        assert all(6 <= len(rows) <= 8 for rows in state.values())
        assert all(len(rows) == 2 for rows in seed_state(world, seed, records=(2, 2)).values())


def test_seed_state_unique_values_stay_unique_among_many():
    """A unique field stays unique even when far more records are drawn than usual."""
    w = derive_world(shop_domain(["customers"]), TODAY)
    emails = [r["email"] for r in seed_state(w, 3, records=(60, 60))["customers"]]
    assert len(emails) == 60 and len({e.lower() for e in emails}) == 60


def test_seed_state_makes_a_unique_field_with_few_values_unique():
    """A unique field whose format has only 12 phrases still gets 30 distinct values (the seeder re-draws)."""
    notes = CollectionSpec(
        name="notes",
        entity="note",
        key="note_id",
        id_prefix="nt",
        fields=[FieldSpec(name="headline", format="sentence", unique=True), FieldSpec(name="body", format="text")],
    )
    w = World(
        world_id="wld_notes",
        domain_id="dom_notes",
        domain="notes",
        category="office",
        collections=[notes],
        today=TODAY,
        source="derived",
    )
    assert world_problem(w) is None
    rows = seed_state(w, 1, records=(30, 30))["notes"]
    assert len(rows) == 30 and len({r["headline"] for r in rows}) == 30
    assert all(re.fullmatch(r"nt-\d{4}", r["note_id"]) for r in rows)


def test_seeded_values_read_like_what_the_record_is():
    """A crawled world's fields are filled by what their record is and what their name says: a paper's
    section is named like a section, an abstract is about research, a price's close is a number, a
    username a handle, a revision a short hash; not a word pair ("atlas-falcon") or a support-ticket
    phrase ("Double charge on the card")."""

    def coll(name: str, entity: str, *fields: FieldSpec) -> CollectionSpec:
        return CollectionSpec(name=name, entity=entity, key=f"{entity}_id", id_prefix=name[:3], fields=list(fields))

    w = World(
        world_id="wld_papers",
        domain_id="dom_papers",
        domain="papers",
        category="research",
        collections=[
            coll("sections", "section", FieldSpec(name="name", format="label")),
            coll("papers", "paper", FieldSpec(name="abstract", format="sentence")),
            coll("prices", "price", FieldSpec(name="close", format="text")),
            coll("users", "twitter user", FieldSpec(name="username", format="person_name")),
            coll("commits", "commit", FieldSpec(name="revision", format="text")),
            coll("shipments", "shipment", FieldSpec(name="name", format="label")),
        ],
        today=TODAY,
        source="crawled",
    )
    for seed in range(5):
        state = seed_state(w, seed)
        sections = {"Introduction", "Related work", "Methods", "Results", "Discussion", "Conclusion"}
        assert {r["name"] for r in state["sections"]} <= sections
        assert all(
            r["abstract"].endswith(".") and "charge" not in r["abstract"] and "damaged" not in r["abstract"]
            for r in state["papers"]
        )
        assert all(re.fullmatch(r"\d+\.\d\d", r["close"]) for r in state["prices"])
        assert all(re.fullmatch(r"[a-z0-9_.]+", r["username"]) for r in state["users"])
        assert all(re.fullmatch(r"[0-9a-f]{7}", r["revision"]) for r in state["commits"])
        assert all(re.fullmatch(r"[A-Z][a-z]+ shipment", r["name"]) for r in state["shipments"])


def test_seed_state_shows_every_enum_value_when_records_allow(world):
    """With at least as many records as enum values, every value appears (a refusal task needs a final state)."""
    for seed in range(10):
        state = seed_state(world, seed, records=(4, 4))
        assert {r["status"] for r in state["orders"]} == set(ORDER_STATUSES), seed
        assert {r["status"] for r in state["products"]} == set(PRODUCT_STATUSES), seed


def test_next_key_is_one_past_the_highest_number(world):
    """next_key: the highest number + 1, ignoring keys without a number; 1001 in an empty collection."""
    orders = world.collection("orders")
    assert next_key(orders, []) == "ord-1001"
    assert next_key(orders, [{"order_id": "ord-1042"}, {"order_id": "ord-1007"}, {"order_id": "x"}]) == "ord-1043"


# --------------------------------------------------------------------------- execution


def test_get_found_and_not_found(world):
    """get returns the record (key matched ignoring case and spacing), or not_found naming the key."""
    b = bind(world, "orders", "get", key_param="order_id")
    state = shop_state()
    found = execute(world, b, state, {"order_id": " ORD-2002 "})
    assert found.ok and found.result == shop_state()["orders"][1] and found.patch == []
    missing = execute(world, b, state, {"order_id": "ord-9999"})
    assert not missing.ok and missing.result is None
    assert missing.error == ("not_found", "no order with order_id 'ord-9999'")
    assert '"code": "not_found"' in missing.content


def test_list_filters_on_an_enum_field(world):
    """list returns only the matching records and their count; a fixed filter works like a parameter."""
    state = shop_state()
    by_status = bind(world, "orders", "list", params={"status": "status"})
    r = execute(world, by_status, state, {"status": "pending"})
    assert r.ok and r.patch == []
    assert [o["order_id"] for o in r.result["orders"]] == ["ord-2001"] and r.result["count"] == 1
    by_customer = bind(world, "orders", "list", params={"customer_id": "customer_id"})
    r = execute(world, by_customer, state, {"customer_id": "cst-1001"})
    assert [o["order_id"] for o in r.result["orders"]] == ["ord-2001", "ord-2005"] and r.result["count"] == 2
    confirmed = bind(world, "orders", "list", fixed={"status": "confirmed"})
    r = execute(world, confirmed, state, {})
    assert r.result == {"orders": [shop_state()["orders"][2]], "count": 1}
    r = execute(world, by_status, state, {"status": "cancelled"})
    assert r.result == {"orders": [], "count": 0}


def test_create_adds_a_record_with_the_next_key_and_defaults(world):
    """create: key one past the highest, the lifecycle field starts at its first value, a date at today;
    the patch appends the record."""
    b = binding_for(world, world.collection("orders"), "create")
    state = shop_state()
    args = {"title": "quiet router", "customer_id": "cst-1003", "product_id": "prd-3001", "amount": 59.9}
    r = execute(world, b, state, args)
    expected = {
        "order_id": "ord-2006",
        "title": "quiet router",
        "customer_id": "cst-1003",
        "product_id": "prd-3001",
        "amount": 59.9,
        "date": "2025-03-01",
        "status": "pending",
    }
    assert r.ok and r.result == expected and list(r.result) == list(expected)
    assert r.patch == [{"op": "add", "path": "/orders/-", "value": expected}]
    after = apply_patch(state, r.patch)
    assert [o["order_id"] for o in after["orders"]] == ["ord-2001", "ord-2002", "ord-2005", "ord-2006"]
    assert after["orders"][3] == expected
    assert state == shop_state()  # execute and apply_patch leave the state alone


def test_create_errors(world):
    """create refuses a value outside an enum, a reference to nothing and a duplicate unique value."""
    state = shop_state()
    with_status = bind(
        world,
        "orders",
        "create",
        params={"title": "title", "customer_id": "customer_id", "product_id": "product_id", "status": "status"},
    )
    args = {"title": "x", "customer_id": "cst-1001", "product_id": "prd-3001"}
    r = execute(world, with_status, state, {**args, "status": "shipped"})
    assert not r.ok and r.patch == []
    assert r.error == ("invalid_value", "status must be one of pending, confirmed, completed, cancelled; got 'shipped'")
    r = execute(world, with_status, state, {**args, "customer_id": "cst-9999", "status": "pending"})
    assert r.error == ("invalid_reference", "customer_id 'cst-9999' does not name an existing customer")
    customer = binding_for(world, world.collection("customers"), "create")
    r = execute(
        world, customer, state, {"full_name": "Ada L.", "email": " ADA@example.com", "phone": "1", "city": "Paris"}
    )
    assert r.error is not None and r.error[0] == "conflict" and "email" in r.error[1]
    r = execute(
        world, customer, state, {"full_name": "Ada L.", "email": "ada2@example.com", "phone": "1", "city": "Paris"}
    )
    assert r.ok and r.result["customer_id"] == "cst-1004"


def test_update_allowed_transition_gives_a_replace_patch(world):
    """An allowed status change: the updated record and one replace at the record's index."""
    b = binding_for(world, world.collection("orders"), "update")
    assert b == bind(world, "orders", "update", key_param="order_id", params={"status": "status"})
    state = shop_state()
    r = execute(world, b, state, {"order_id": "ord-2005", "status": "completed"})
    assert r.ok and r.result == {**shop_state()["orders"][2], "status": "completed"}
    assert r.patch == [{"op": "replace", "path": "/orders/2/status", "value": "completed"}]
    after = apply_patch(state, r.patch)
    assert [o["status"] for o in after["orders"]] == ["pending", "completed", "completed"]
    assert after["customers"] == state["customers"] and state == shop_state()


def test_update_refuses_a_transition_the_flow_does_not_allow(world):
    """A forbidden change names the current value and the allowed ones (or that none is)."""
    b = bind(world, "orders", "update", key_param="order_id", params={"status": "status"})
    state = shop_state()
    r = execute(world, b, state, {"order_id": "ord-2001", "status": "completed"})
    assert not r.ok and r.patch == []
    assert r.error == (
        "transition_not_allowed",
        "order ord-2001 is pending: its status cannot become completed (it can become confirmed, cancelled)",
    )
    r = execute(world, b, state, {"order_id": "ord-2002", "status": "cancelled"})
    assert r.error[0] == "transition_not_allowed" and "(no change is allowed from there)" in r.error[1]
    r = execute(world, b, state, {"order_id": "ord-2001", "status": "lost"})
    assert r.error[0] == "invalid_value"
    r = execute(world, b, state, {"order_id": "ord-4040", "status": "confirmed"})
    assert r.error[0] == "not_found"


def test_update_to_the_same_value_is_ok_with_an_empty_patch(world):
    """Setting the value a record already holds succeeds and changes nothing."""
    b = bind(world, "orders", "update", key_param="order_id", params={"status": "status"})
    state = shop_state()
    r = execute(world, b, state, {"order_id": "ord-2002", "status": "completed"})
    assert r.ok and r.patch == [] and r.result == shop_state()["orders"][1]
    assert apply_patch(state, r.patch) == shop_state()


def test_update_plain_field_and_unique_conflict(world):
    """A field without a flow changes freely; a unique field may not take another record's value."""
    state = shop_state()
    name = bind(world, "customers", "update", key_param="customer_id", params={"full_name": "full_name"})
    r = execute(world, name, state, {"customer_id": "cst-1002", "full_name": "Alan M. Turing"})
    assert r.patch == [{"op": "replace", "path": "/customers/1/full_name", "value": "Alan M. Turing"}]
    assert apply_patch(state, r.patch)["customers"][1]["full_name"] == "Alan M. Turing"
    email = bind(world, "customers", "update", key_param="customer_id", params={"email": "email"})
    r = execute(world, email, state, {"customer_id": "cst-1002", "email": "grace@example.com"})
    assert r.error is not None and r.error[0] == "conflict"
    r = execute(world, email, state, {"customer_id": "cst-1002", "email": "alan@example.com"})
    assert r.ok and r.patch == []


def test_delete_removes_at_the_right_index(world):
    """delete: a remove patch at the record's index and the deleted key."""
    b = bind(world, "orders", "delete", key_param="order_id")
    state = shop_state()
    r = execute(world, b, state, {"order_id": "ord-2005"})
    assert r.ok and r.result == {"deleted": "ord-2005"}
    assert r.patch == [{"op": "remove", "path": "/orders/2"}]
    after = apply_patch(state, r.patch)
    assert [o["order_id"] for o in after["orders"]] == ["ord-2001", "ord-2002"]
    unused = execute(
        world, bind(world, "customers", "delete", key_param="customer_id"), state, {"customer_id": "cst-1003"}
    )
    assert unused.patch == [{"op": "remove", "path": "/customers/2"}]
    assert [c["customer_id"] for c in apply_patch(state, unused.patch)["customers"]] == ["cst-1001", "cst-1002"]


def test_delete_refuses_a_record_others_reference(world):
    """A customer with orders cannot be deleted: conflict, with the number of referencing records."""
    b = bind(world, "customers", "delete", key_param="customer_id")
    r = execute(world, b, shop_state(), {"customer_id": "cst-1001"})
    assert not r.ok and r.patch == []
    assert r.error == ("conflict", "customer cst-1001 is still referenced by 2 orders")
    r = execute(
        world, bind(world, "products", "delete", key_param="product_id"), shop_state(), {"product_id": "prd-3002"}
    )
    assert r.error == ("conflict", "product prd-3002 is still referenced by 2 orders")


def test_custom_and_unknown_collection_are_not_executed(world):
    """A custom binding or an unknown collection is an internal_error, not a guess."""
    r = execute(world, bind(world, "orders", "custom", key_param="order_id"), shop_state(), {"order_id": "ord-2001"})
    assert r.error[0] == "internal_error"
    assert execute(world, bind(world, "invoices", "get"), shop_state(), {}).error[0] == "internal_error"


# --------------------------------------------------------------------------- bindings


def test_input_schema_of_get_update_create(world):
    """Key parameter required; update/create values required with the field's enum; no extra properties."""
    get = bind(world, "orders", "get", key_param="order_id")
    assert input_schema(world, get) == {
        "type": "object",
        "properties": {"order_id": {"type": "string", "description": "the order's id, like ord-1042"}},
        "required": ["order_id"],
        "additionalProperties": False,
    }
    update = bind(world, "orders", "update", key_param="order_id", params={"status": "status"})
    schema = input_schema(world, update)
    assert schema["required"] == ["order_id", "status"] and schema["additionalProperties"] is False
    assert schema["properties"]["status"] == {"type": "string", "enum": ORDER_STATUSES, "description": "the new status"}
    create = binding_for(world, world.collection("orders"), "create")
    schema = input_schema(world, create)
    assert schema["required"] == ["title", "customer_id", "product_id", "amount"]
    assert schema["properties"]["customer_id"] == {"type": "string", "description": "the customer id (a customers key)"}
    assert schema["properties"]["amount"]["type"] == "number"
    assert schema["additionalProperties"] is False
    listing = bind(world, "orders", "list", params={"status": "status"})
    assert input_schema(world, listing)["required"] == []


def test_output_schema(world):
    """A list returns the records and a count; a delete the deleted key; others the record."""
    listing = output_schema(world, bind(world, "orders", "list"))
    assert set(listing["properties"]) == {"orders", "count"} and listing["properties"]["count"] == {"type": "integer"}
    assert output_schema(world, bind(world, "orders", "delete", key_param="order_id")) == {
        "type": "object",
        "properties": {"deleted": {"type": "string"}},
    }
    record = output_schema(world, bind(world, "orders", "get", key_param="order_id"))
    assert list(record["properties"]) == ["order_id", "title", "customer_id", "product_id", "amount", "date", "status"]


def test_annotations(world):
    """get/list read-only; delete and a fixed-value update destructive; create not idempotent."""
    get = annotations(bind(world, "orders", "get", key_param="order_id"))
    assert get == {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
    delete = annotations(bind(world, "orders", "delete", key_param="order_id"))
    assert delete["destructiveHint"] is True and delete["readOnlyHint"] is False
    assert annotations(bind(world, "orders", "create"))["idempotentHint"] is False
    assert (
        annotations(bind(world, "orders", "update", key_param="order_id", params={"status": "status"}))[
            "destructiveHint"
        ]
        is False
    )
    assert (
        annotations(bind(world, "orders", "update", key_param="order_id", fixed={"status": "cancelled"}))[
            "destructiveHint"
        ]
        is True
    )


def test_default_names(world):
    """Plain names: get_order, update_order_status, list_orders_by_status, create_order, delete_order, cancel/mark."""
    orders = world.collection("orders")
    names = [default_name(world, binding_for(world, orders, a)) for a in ("get", "update", "list", "create", "delete")]
    assert names == ["get_order", "update_order_status", "list_orders_by_status", "create_order", "delete_order"]
    assert (
        default_name(world, bind(world, "orders", "update", key_param="order_id", fixed={"status": "cancelled"}))
        == "cancel_order"
    )
    assert (
        default_name(world, bind(world, "orders", "update", key_param="order_id", fixed={"status": "completed"}))
        == "mark_order_completed"
    )
    assert default_name(world, binding_for(world, world.collection("customers"), "list")) == "list_customers"


def test_plan_bindings_starts_with_get_and_update_of_a_lifecycle_collection(world):
    """The first tools: get and update (status) of orders, then get of products; never twice the same."""
    plan = plan_bindings(world, 3)
    assert [(b.collection, b.action, b.params) for b in plan] == [
        ("orders", "get", {}),
        ("orders", "update", {"status": "status"}),
        ("products", "get", {}),
    ]
    full = plan_bindings(world, 100)
    assert len(full) == 15 and len({b.model_dump_json() for b in full}) == 15
    assert [(b.collection, b.action) for b in full[:6]] == [
        ("orders", "get"),
        ("orders", "update"),
        ("products", "get"),
        ("products", "update"),
        ("customers", "get"),
        ("customers", "update"),
    ]
    assert full[5].params == {"full_name": "full_name"}


def test_plan_bindings_puts_a_lifecycle_collection_first_whatever_the_order():
    """With the people listed first, the first pair is still on the collection with transitions."""
    w = derive_world(shop_domain(["customers", "bookings"]), TODAY)
    plan = plan_bindings(w, 2)
    assert [(b.collection, b.action) for b in plan] == [("bookings", "get"), ("bookings", "update")]


def test_evolve_binding(world):
    """specialize fixes an enum value and drops the params; add_parameter adds one; compose makes it custom;
    add_constraint keeps it; generalize drops a list's filter."""
    update = binding_for(world, world.collection("orders"), "update")
    for seed in range(5):
        special = evolve_binding(world, update, "specialize", random.Random(seed))
        assert special.params == {} and special.key_param == "order_id"
        assert list(special.fixed) == ["status"] and special.fixed["status"] in ("confirmed", "completed", "cancelled")
        assert input_schema(world, special)["required"] == ["order_id"]
        more = evolve_binding(world, update, "add_parameter", random.Random(seed))
        assert len(more.params) == 2 and more.params["status"] == "status"
        assert set(more.params) - {"status"} <= {"title", "amount"}
    assert evolve_binding(world, update, "compose", random.Random(0)).action == "custom"
    assert evolve_binding(world, update, "compose", random.Random(0)).collection == "orders"
    assert evolve_binding(world, update, "add_constraint", random.Random(0)) == update
    listing = binding_for(world, world.collection("orders"), "list")
    assert evolve_binding(world, listing, "generalize", random.Random(0)).params == {}
    fixed = evolve_binding(world, listing, "specialize", random.Random(1))
    assert fixed.params == {} and fixed.fixed["status"] in ORDER_STATUSES


# --------------------------------------------------------------------------- grounding


MESSAGES = [
    {"role": "system", "content": "Examples: cst-1009, ord-1000."},
    {"role": "user", "content": "Where is my order ORD-2001? Not xord-2002 nor ord-2003x."},
    {"role": "assistant", "content": "Let me check ord-2004 and cst-1001."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"order_id": "ord-2001", "customer_id": "cst-1002"}'},
    {"role": "user", "content": "Also ord-2005, and again ord-2001."},
]


def test_seen_keys_reads_user_and_tool_messages_only(world):
    """Keys of each collection's prefix, lower-cased, in order of appearance, once each; not from the system
    prompt or the assistant; not inside longer words."""
    assert seen_keys(MESSAGES, world) == {"customers": ["cst-1002"], "orders": ["ord-2001", "ord-2005"], "products": []}
    assert seen_keys([], world) == {"customers": [], "orders": [], "products": []}


def _spec(world: World, b: ToolBinding, name: str) -> ToolSpec:
    return bound_spec(world, b, name, f"The {name} tool of the shop.", request_id=f"req-{name}", named_by="code")


def test_ground_tools_narrows_keys_and_drops_tools_without_one(world):
    """Bound key parameters become enums of the seen keys; a tool whose required key has none is left out;
    an optional reference with none is removed; custom and unbound tools are offered as they are."""
    orders = world.collection("orders")
    plain = ToolSpec(
        tool_id="tool_time",
        name="get_current_time",
        description="The current time.",
        input_schema={"type": "object", "properties": {"timezone": {"type": "string"}}},
        source="mcp",
    )
    custom = ToolSpec(
        tool_id="tool_custom",
        name="summarise_orders",
        description="Summarise orders.",
        input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        source="evolved",
        binding=bind(world, "orders", "custom", key_param="order_id"),
    )
    specs = [
        _spec(world, binding_for(world, orders, "get"), "get_order"),
        _spec(world, binding_for(world, orders, "update"), "update_order_status"),
        _spec(world, bind(world, "products", "get", key_param="product_id"), "get_product"),
        _spec(world, binding_for(world, orders, "create"), "create_order"),
        _spec(world, bind(world, "orders", "list", params={"product_id": "product_id"}), "list_orders_by_product_id"),
        _spec(
            world, bind(world, "orders", "list", params={"customer_id": "customer_id"}), "list_orders_by_customer_id"
        ),
        plain,
        custom,
    ]
    toolset = ToolSet.build(specs)
    before = copy.deepcopy(toolset.tools)
    out = ground_tools(toolset, MESSAGES, {world.world_id: world})
    by_name = {t["function"]["name"]: t["function"]["parameters"] for t in out}
    assert list(by_name) == [
        "get_order",
        "update_order_status",
        "list_orders_by_product_id",
        "list_orders_by_customer_id",
        "get_current_time",
        "summarise_orders",
    ]
    assert by_name["get_order"]["properties"]["order_id"]["enum"] == ["ord-2001", "ord-2005"]
    assert by_name["get_order"]["properties"]["order_id"]["type"] == "string"
    assert by_name["update_order_status"]["properties"]["status"]["enum"] == ORDER_STATUSES
    assert by_name["update_order_status"]["properties"]["order_id"]["enum"] == ["ord-2001", "ord-2005"]
    assert by_name["list_orders_by_product_id"]["properties"] == {}
    assert by_name["list_orders_by_customer_id"]["properties"]["customer_id"]["enum"] == ["cst-1002"]
    assert out[4] == before[6] and out[5] == before[7]
    assert toolset.tools == before  # the toolset is not changed
    assert "enum" not in toolset.tools[0]["function"]["parameters"]["properties"]["order_id"]


def test_ground_tools_leaves_tools_of_unknown_worlds(world):
    """Without the tool's world, nothing is narrowed or dropped."""
    toolset = ToolSet.build([_spec(world, bind(world, "products", "get", key_param="product_id"), "get_product")])
    assert ground_tools(toolset, MESSAGES, {}) == toolset.tools
    assert ground_tools(toolset, MESSAGES, {world.world_id: world}) == []


def test_ground_tools_holds_a_date_argument_to_the_days_shown():
    """A pack action's `format: date` parameter (the clinic's reschedule) is narrowed to the days the user and the
    results have shown; with none shown it stays a free date. SmolLM2 moved a visit to 2022-04-09 when asked for
    2026-04-09, and sent timestamps before the grammar held it to a date."""
    from pathlib import Path

    from worldsmith.worldmodel.packs import load_pack
    from worldsmith.worldmodel.toolset import ToolSet

    clinic = load_pack(Path(__file__).resolve().parent.parent / "worlds" / "clinic", today="2026-03-02")
    toolset = ToolSet.build(clinic.tools)
    worlds = {clinic.world.world_id: clinic.world}
    asked = {"role": "user", "content": "Please move appointment apt-8506 to 2026-04-09 at 14:30."}
    result = {"role": "tool", "tool_call_id": "c1", "content": '{"appointment_id": "apt-8506", "date": "2026-03-20"}'}

    def date_param(messages):
        (tool,) = [
            t for t in ground_tools(toolset, messages, worlds) if t["function"]["name"] == "reschedule_appointment"
        ]
        return tool["function"]["parameters"]["properties"]["date"]

    assert date_param([asked])["enum"] == ["2026-04-09"]
    assert date_param([asked, result])["enum"] == ["2026-04-09", "2026-03-20"]
    free = date_param([{"role": "user", "content": "Please move appointment apt-8506 to next Friday."}])
    assert "enum" not in free and free["format"] == "date"
