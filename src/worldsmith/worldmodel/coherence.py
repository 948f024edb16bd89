"""Whether a world makes sense for its entities, beyond whether code can run it (schema.world_problem).

A world can validate and still be nonsense: repositories that are available, reserved or
retired (the goods lifecycle on a thing nobody rents), accounts that are pending or confirmed
(an order's lifecycle on something owned), orders of a "wireless kettle" in a trading world
(a product-format field where nothing is sold), a price typed as a string. Agents trained on
such worlds learn the nonsense. `world_incoherence` names the first such problem, in a short
sentence that names the collection and the field, or returns None.

The entity's kind comes from the same word lists derive_world uses (schema.entity_kind):
person, transaction, occurrence, goods, asset, or record (a kind the lists do not know). A
check only refuses what contradicts a known kind, so a design with its own vocabulary (an
order that is open, filled or cancelled) passes.
"""

from __future__ import annotations

from worldsmith.records import CollectionSpec, FieldSpec, World
from worldsmith.vocab import FIELD_FORMATS
from worldsmith.worldmodel.schema import (
    LENDABLE,
    LIFECYCLES,
    LONG_RUNNING,
    PEOPLE,
    entity_is,
    entity_kind,
    sells_goods,
    singular,
)

# the kinds of entity each lifecycle family fits
FITS: dict[str, frozenset[str]] = {
    "transaction": frozenset({"transaction", "occurrence"}),
    "occurrence": frozenset({"transaction", "occurrence"}),
    "item": frozenset({"goods"}),  # and an asset that is a thing (LENDABLE): a rental car
    "asset": frozenset({"asset", "person", "record"}),  # and a transaction that stays open (LONG_RUNNING)
    "record": frozenset({"transaction", "occurrence", "goods", "asset", "record"}),
}
# what the family's values say a record is, for the reason
FAMILY_SAYS = {
    "transaction": "an order's lifecycle",
    "occurrence": "a scheduled event's lifecycle",
    "item": "the lifecycle of goods",
    "asset": "an account's lifecycle",
    "record": "a document's lifecycle",
}
KIND_SAYS = {
    "person": "a person",
    "transaction": "a transaction",
    "occurrence": "something scheduled that happens",
    "goods": "goods",
    "asset": "an asset",
    "record": "not something sold, lent, booked or owned",
}
NUMBER_FORMATS = {"money": "number", "percent": "number", "quantity": "integer"}
# formats seeding fills with text: a field of another type cannot hold them
STRING_FORMATS = frozenset(FIELD_FORMATS) - set(NUMBER_FORMATS) - {"text"}
# words of a field's name that say what a transaction is of (the product, the instrument, the room ...)
SUBJECT_WORDS = frozenset(
    {
        "title",
        "name",
        "item",
        "product",
        "goods",
        "sku",
        "instrument",
        "symbol",
        "ticker",
        "security",
        "asset",
        "fund",
        "coin",
        "currency",
        "service",
        "plan",
        "description",
        "subject",
        "purpose",
        "memo",
        "reference",
        "destination",
        "route",
        "flight",
        "hotel",
        "room",
        "vehicle",
        "course",
        "medication",
        "medicine",
        "drug",
        "treatment",
        "listing",
        "book",
        "ticket",
        "event",
        "what",
    }
)
# formats that say who, where or when, never what
WHO_OR_WHEN = frozenset(
    {"person_name", "email", "phone", "address", "city", "country", "company", "date", "datetime", "time", "url"}
)
# transactions that buy, book or trade something: their record must say what (a payment, a transfer or a
# refund is of money, its amount says what)
BOUGHT = ("order", "purchase", "trade", "booking", "reservation", "rental", "prescription", "return")
# references that say whose a transaction is, not what it is of (a trade's account, a purchase's card)
HOLDERS = ("account", "wallet", "portfolio", "card", "membership")


def world_incoherence(world: World) -> str | None:
    """The first reason the world's lifecycles or field types do not fit its entities, or None."""
    kinds = {c.name: entity_kind(c.entity) for c in world.collections}
    goods = sells_goods(world)
    for c in world.collections:
        reason = (
            _fields_problem(c)
            or _lifecycle_problem(c, kinds[c.name])
            or _transaction_problem(c, kinds[c.name], kinds, goods, world)
        )
        if reason:
            return reason
    return None


def _fields_problem(c: CollectionSpec) -> str | None:
    """A field that repeats the key or another field, a format its type cannot hold, a bad enum."""
    seen: set[str] = set()
    for f in c.fields:
        where = f"{c.name}.{f.name}"
        if f.name == c.key:
            return f"{where} is the key {c.key} listed again as a field."
        if f.name in seen:
            return f"{where} is listed twice."
        seen.add(f.name)
        want = NUMBER_FORMATS.get(f.format)
        if want == "number" and f.type != "number":
            return f"{where} holds {f.format} but is typed {f.type}, not number."
        if want == "integer" and f.type != "integer":
            return f"{where} holds a quantity but is typed {f.type}, not integer."
        if f.format in STRING_FORMATS and f.type != "string":
            return f"{where} holds a {f.format} but is typed {f.type}, not string."
        if f.enum and f.type != "string":
            return f"{where} is a {f.type} with enum values {f.enum}: only a string field lists values."
        if f.enum and len(set(f.enum)) != len(f.enum):
            return f"{where} lists an enum value twice: {f.enum}."
        if len(f.enum) == 1:
            return f"{where} has a single enum value {f.enum[0]!r}: a field that cannot change is no status."
    return None


def family_of(f: FieldSpec) -> str | None:
    """The known lifecycle whose values the enum holds all of (a clear superset counts), or None."""
    values = set(f.enum)
    # the largest family first, so a superset of two is read as the more specific one
    for name, (family, _) in sorted(LIFECYCLES.items(), key=lambda kv: -len(kv[1][0])):
        if values >= set(family):
            return name
    return None


def _lifecycle_problem(c: CollectionSpec, kind: str) -> str | None:
    """A known lifecycle on an entity of a kind it does not fit: reserved/retired repositories, pending/confirmed
    accounts, a customer who is completed."""
    for f in c.fields:
        family = family_of(f) if f.enum else None
        if family is None or kind in FITS[family]:
            continue
        if family == "asset" and kind == "transaction" and entity_is(c.entity, LONG_RUNNING):
            continue
        if family == "item" and kind == "asset" and entity_is(c.entity, LENDABLE):
            continue
        values = "/".join(LIFECYCLES[family][0])
        return (
            f"{c.name}.{f.name} gives {a_an(c.entity)} {FAMILY_SAYS[family]} ({values}), "
            f"but {a_an(c.entity)} is {KIND_SAYS[kind]}."
        )
    return None


def _transaction_problem(c: CollectionSpec, kind: str, kinds: dict[str, str], goods: bool, world: World) -> str | None:
    """A paid transaction that is of products where nothing is sold, or a purchase, booking or trade that says
    nowhere what it is of."""
    if kind != "transaction" or not any(f.format == "money" for f in c.fields):
        return None
    for f in c.fields:
        if f.format == "product" and not goods:
            return (
                f"{c.name}.{f.name} names a product, but the {world.domain} world ({world.category}) sells no goods: "
                f"say what {a_an(c.entity)} is of in the domain's own terms."
            )
    if not entity_is(c.entity, BOUGHT):
        return None
    # a reference to what it is of (a product, an instrument, a room; a customer or an account says whose), or a field
    # naming it (a title, a symbol; a customer_name says who, a date when)
    about = [
        f
        for f in c.fields
        if f.ref is not None and kinds.get(f.ref) != "person" and not entity_is(singular(f.ref), (*PEOPLE, *HOLDERS))
    ]
    named = [
        f
        for f in c.fields
        if f.ref is None
        and f.type == "string"
        and not f.enum
        and f.format not in WHO_OR_WHEN
        and (f.format == "product" or any(w in SUBJECT_WORDS for w in f.name.split("_")))
    ]
    if not about and not named:
        return (
            f"{c.name} has an amount but nothing says what {a_an(c.entity)} is of: "
            "no reference to what was traded or booked and no field naming it."
        )
    return None


def a_an(word: str) -> str:
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word.replace('_', ' ')}"
