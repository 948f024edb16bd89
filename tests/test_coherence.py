"""World coherence: whether a world's lifecycles and field types fit its entities. Hand-written
worlds on both sides: coherent ones (a library with loans, a shop, a trading world with trades
of instruments, a helpdesk) must pass; incoherent ones (each check) must be refused with a reason
that names the collection and the field. Every world derive_world makes for the taxonomy's
domains must pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from worldsmith.records import CollectionSpec, Domain, FieldSpec, World
from worldsmith.worldmodel.coherence import world_incoherence
from worldsmith.worldmodel.schema import derive_world, entity_kind, world_from_design, world_problem
from worldsmith.worlds.stage import load_taxonomy

ROOT = Path(__file__).resolve().parent.parent
TODAY = "2025-03-01"
ORDER_FLOW = ["pending", "confirmed", "completed", "cancelled"]
GOODS_FLOW = ["available", "reserved", "retired"]


def F(name: str, type: str = "string", format: str = "text", enum=(), ref: str | None = None) -> FieldSpec:
    return FieldSpec(name=name, type=type, format="code" if ref else format, enum=list(enum), ref=ref)


def col(name: str, entity: str, *fields: FieldSpec, flow: dict | None = None) -> CollectionSpec:
    return CollectionSpec(
        name=name,
        entity=entity,
        key=f"{entity}_id",
        id_prefix=entity[:3],
        fields=list(fields),
        transitions={"status": flow} if flow else {},
    )


def world(category: str, domain: str, *collections: CollectionSpec) -> World:
    w = World(
        world_id=f"wld_{domain.replace(' ', '_')}",
        domain_id="dom",
        domain=domain,
        category=category,
        collections=list(collections),
        today=TODAY,
        source="llm",
    )
    assert world_problem(w) is None, world_problem(w)  # valid: what is tested here is coherence alone
    return w


def person(name: str = "customers", entity: str = "customer") -> CollectionSpec:
    return col(name, entity, F("full_name", format="person_name"), F("email", format="email"))


# --------------------------------------------------------------------------- coherent worlds


def library() -> World:
    return world(
        "public_services",
        "city library",
        person("members", "member"),
        col(
            "books",
            "book",
            F("title", format="label"),
            F("author", format="person_name"),
            F("copies", type="integer", format="quantity"),
            F("status", enum=GOODS_FLOW),
            flow={"available": ["reserved", "retired"], "reserved": ["available"], "retired": []},
        ),
        col(
            "loans",
            "loan",
            F("member_id", ref="members"),
            F("book_id", ref="books"),
            F("due", format="date"),
            F("late_fee", type="number", format="money"),
            # an account's lifecycle on a loan, which stays open for weeks: fits
            F("status", enum=["active", "suspended", "closed"]),
            flow={"active": ["suspended", "closed"], "suspended": ["active", "closed"], "closed": []},
        ),
    )


def shop() -> World:
    return world(
        "e_commerce",
        "online store",
        person(),
        col(
            "products",
            "product",
            F("name", format="product"),
            F("price", type="number", format="money"),
            F("stock", type="integer", format="quantity"),
            F("status", enum=GOODS_FLOW),
        ),
        col(
            "orders",
            "order",
            F("title", format="product"),
            F("customer_id", ref="customers"),
            F("product_id", ref="products"),
            F("total", type="number", format="money"),
            F("placed", format="date"),
            F("status", enum=ORDER_FLOW),
        ),
    )


def trading(
    *,
    trade_fields: tuple[FieldSpec, ...] | None = None,
    category: str = "financial_trading",
    name: str = "stock brokerage",
) -> World:
    """A brokerage: accounts, instruments and trades of an instrument by an account."""
    fields = trade_fields or (
        F("account_id", ref="accounts"),
        F("instrument_id", ref="instruments"),
        F("quantity", type="integer", format="quantity"),
        F("price", type="number", format="money"),
        F("side", enum=["buy", "sell"]),
        F("status", enum=ORDER_FLOW),
    )
    return world(
        category,
        name,
        col(
            "accounts",
            "account",
            F("holder", format="person_name"),
            F("balance", type="number", format="money"),
            F("status", enum=["active", "suspended", "closed"]),
        ),
        col(
            "instruments",
            "instrument",
            F("symbol", format="code"),
            F("name", format="label"),
            F("status", enum=["listed", "halted", "delisted"]),
        ),
        col("trades", "trade", *fields),
    )


def helpdesk() -> World:
    return world(
        "customer_support",
        "helpdesk tickets",
        person(),
        person("agents", "agent"),
        col(
            "tickets",
            "ticket",
            F("subject", format="sentence"),
            F("customer_id", ref="customers"),
            F("agent_id", ref="agents"),
            F("priority", enum=["low", "normal", "high"]),
            F("opened", format="datetime"),
            F("status", enum=["open", "pending", "solved", "closed"]),
        ),
        col(
            "articles",
            "article",
            F("title", format="sentence"),
            F("url", format="url"),
            F("helpful_votes", type="integer"),
            F("published", type="boolean"),
            F("status", enum=["draft", "active", "archived"]),
        ),
    )


@pytest.mark.parametrize("make", [library, shop, trading, helpdesk])
def test_a_coherent_world_passes(make):
    assert world_incoherence(make()) is None


@pytest.mark.parametrize(
    "name, entity, values",
    [
        ("vehicles", "vehicle", GOODS_FLOW),  # a rental car is available, reserved, retired
        ("tables", "table", GOODS_FLOW),  # a restaurant's table
        ("members", "member", ["active", "suspended", "closed"]),
        ("missions", "mission", ORDER_FLOW),
        ("documents", "document", ["draft", "active", "archived"]),
        ("rentals", "rental", ["active", "suspended", "closed"]),
    ],
)
def test_a_lifecycle_that_fits_its_entity_passes(name, entity, values):
    w = world("services", "anything", col(name, entity, F("label", format="label"), F("status", enum=values)))
    assert world_incoherence(w) is None


def test_a_design_of_its_own_vocabulary_passes():
    """An LLM design (share dealing: accounts active/frozen/closed, orders of a ticker, open/filled/cancelled)."""
    domain = Domain(
        domain_id="dom_shares",
        category="financial_trading",
        name="share dealing",
        description="Buying and selling shares.",
        entities=["orders", "accounts"],
    )
    field = {"type": "string", "format": "text", "values": [], "references": ""}
    design = {
        "collections": [
            {
                "name": "accounts",
                "fields": [
                    {**field, "name": "holder_name", "format": "person_name"},
                    {**field, "name": "status", "values": ["active", "frozen", "closed"]},
                ],
                "status_flow": [{"from": "active", "to": "frozen"}, {"from": "active", "to": "closed"}],
            },
            {
                "name": "orders",
                "fields": [
                    {**field, "name": "account_id", "format": "code", "references": "accounts"},
                    {**field, "name": "ticker", "format": "label"},
                    {**field, "name": "total", "type": "number", "format": "money"},
                    {**field, "name": "status", "values": ["open", "filled", "cancelled"]},
                ],
                "status_flow": [{"from": "open", "to": "filled"}, {"from": "open", "to": "cancelled"}],
            },
        ]
    }
    w, problem = world_from_design(domain, design, TODAY)
    assert problem is None and world_incoherence(w) is None


# --------------------------------------------------------------------------- lifecycles


def test_the_goods_lifecycle_on_repositories_is_refused():
    w = world(
        "software_applications",
        "code hosting",
        col(
            "repositories",
            "repository",
            F("name", format="label"),
            F("status", enum=GOODS_FLOW),
            flow={"available": ["reserved", "retired"], "reserved": ["available", "retired"], "retired": []},
        ),
    )
    assert world_incoherence(w) == (
        "repositories.status gives a repository the lifecycle of goods (available/reserved/retired), "
        "but a repository is not something sold, lent, booked or owned."
    )


def test_a_clear_superset_of_a_lifecycle_is_read_as_it():
    w = world(
        "software_applications",
        "code hosting",
        col("repositories", "repository", F("name", format="label"), F("state", enum=[*GOODS_FLOW, "lost"])),
    )
    assert world_incoherence(w).startswith("repositories.state gives a repository the lifecycle of goods")


def test_an_orders_lifecycle_on_accounts_is_refused():
    w = world(
        "banking",
        "retail banking",
        col("accounts", "account", F("holder", format="person_name"), F("status", enum=ORDER_FLOW)),
    )
    assert world_incoherence(w) == (
        "accounts.status gives an account an order's lifecycle (pending/confirmed/completed/cancelled), "
        "but an account is an asset."
    )


@pytest.mark.parametrize(
    "coll, expected",
    [
        (col("customers", "customer", F("full_name", format="person_name"), F("status", enum=ORDER_FLOW)), "a person"),
        (col("products", "product", F("name", format="product"), F("status", enum=ORDER_FLOW)), "goods"),
        (col("flights", "flight", F("number", format="code"), F("status", enum=GOODS_FLOW)), "scheduled"),
        (
            col(
                "customers",
                "customer",
                F("full_name", format="person_name"),
                F("status", enum=["draft", "active", "archived"]),
            ),
            "a person",
        ),
        (
            col("orders", "order", F("title", format="label"), F("status", enum=["active", "suspended", "closed"])),
            "a transaction",
        ),
    ],
)
def test_a_lifecycle_on_an_entity_of_another_kind_is_refused(coll, expected):
    reason = world_incoherence(world("services", "anything", coll))
    assert reason and reason.startswith(f"{coll.name}.status gives") and expected in reason


def test_an_entitys_kind_comes_from_its_head_noun():
    assert [entity_kind(e) for e in ("order_item", "support_ticket", "booking", "account_holder", "repository")] == [
        "goods",
        "transaction",
        "transaction",
        "person",
        "record",
    ]
    assert entity_kind("reagent") == "record" and entity_kind("bookmark") == "record"


# --------------------------------------------------------------------------- field types


@pytest.mark.parametrize(
    "field, expected",
    [
        (F("price", format="money"), "items.price holds money but is typed string, not number."),
        (
            F("discount", type="integer", format="percent"),
            "items.discount holds percent but is typed integer, not number.",
        ),
        (
            F("count", type="number", format="quantity"),
            "items.count holds a quantity but is typed number, not integer.",
        ),
        (F("due", type="integer", format="date"), "items.due holds a date but is typed integer, not string."),
        (F("contact", type="number", format="email"), "items.contact holds a email but is typed number, not string."),
        (F("homepage", type="boolean", format="url"), "items.homepage holds a url but is typed boolean, not string."),
        (F("mobile", type="integer", format="phone"), "items.mobile holds a phone but is typed integer, not string."),
        (
            F("flag", type="boolean", enum=["yes", "no"]),
            "items.flag is a boolean with enum values ['yes', 'no']: only a string field lists values.",
        ),
        (
            F("kind", enum=["only"]),
            "items.kind has a single enum value 'only': a field that cannot change is no status.",
        ),
        (F("kind", enum=["a_b", "c_d", "a_b"]), "items.kind lists an enum value twice: ['a_b', 'c_d', 'a_b']."),
        (F("item_id", format="code"), "items.item_id is the key item_id listed again as a field."),
    ],
)
def test_a_field_that_does_not_fit_its_type_is_refused(field, expected):
    w = world("services", "anything", col("items", "item", F("name", format="label"), field))
    assert world_incoherence(w) == expected


def test_fitting_types_pass():
    w = world(
        "services",
        "anything",
        col(
            "items",
            "item",
            F("name", format="label"),
            F("price", type="number", format="money"),
            F("discount", type="number", format="percent"),
            F("count", type="integer", format="quantity"),
            F("due", format="date"),
            F("fragile", type="boolean"),
            F("weight", type="number"),
        ),
    )
    assert world_incoherence(w) is None


# --------------------------------------------------------------------------- what a transaction is of


def test_a_product_in_a_world_that_sells_nothing_is_refused():
    """Orders of a "wireless kettle" in a brokerage, even with the instrument referenced."""
    w = trading(
        trade_fields=(
            F("title", format="product"),
            F("account_id", ref="accounts"),
            F("instrument_id", ref="instruments"),
            F("price", type="number", format="money"),
            F("status", enum=ORDER_FLOW),
        )
    )
    assert world_incoherence(w) == (
        "trades.title names a product, but the stock brokerage world (financial_trading) sells no goods: "
        "say what a trade is of in the domain's own terms."
    )


def test_a_transfer_of_a_product_in_a_bank_is_refused():
    w = world(
        "banking",
        "retail banking",
        person(),
        col(
            "transfers",
            "transfer",
            F("title", format="product"),
            F("customer_id", ref="customers"),
            F("amount", type="number", format="money"),
        ),
    )
    assert world_incoherence(w).startswith("transfers.title names a product, but the retail banking world (banking)")
    # of money, its amount says what: no other field is needed
    w.collections[1].fields[0] = F("memo", format="sentence")
    assert world_incoherence(w) is None
    w.collections[1].fields.pop(0)
    assert world_incoherence(w) is None


def test_a_product_in_a_shop_or_a_world_with_goods_passes():
    fields = (F("title", format="product"), F("account_id", ref="accounts"), F("price", type="number", format="money"))
    assert world_incoherence(trading(trade_fields=fields, category="e_commerce", name="gift shop")) is None
    depot = world(
        "logistics",
        "parcel depot",
        col("items", "item", F("name", format="product"), F("quantity", type="integer", format="quantity")),
        col("orders", "order", F("title", format="product"), F("fee", type="number", format="money")),
    )
    assert world_incoherence(depot) is None


def test_a_paid_transaction_that_says_nowhere_what_it_is_of_is_refused():
    """A trade with an account, a date and a price: of what?"""
    bare = (
        F("account_id", ref="accounts"),
        F("trader_name", format="person_name"),
        F("price", type="number", format="money"),
        F("date", format="date"),
        F("status", enum=ORDER_FLOW),
    )
    assert world_incoherence(trading(trade_fields=bare)) == (
        "trades has an amount but nothing says what a trade is of: "
        "no reference to what was traded or booked and no field naming it."
    )
    # a field naming it, or a reference to it, is enough
    assert world_incoherence(trading(trade_fields=(*bare, F("symbol", format="code")))) is None
    assert world_incoherence(trading(trade_fields=(*bare, F("instrument_id", ref="instruments")))) is None


def test_a_booking_that_only_says_who_is_refused():
    w = world(
        "travel",
        "hotel booking",
        person("guests", "guest"),
        col(
            "bookings",
            "booking",
            F("guest_id", ref="guests"),
            F("amount", type="number", format="money"),
            F("status", enum=ORDER_FLOW),
        ),
    )
    assert world_incoherence(w).startswith("bookings has an amount but nothing says what a booking is of")


# --------------------------------------------------------------------------- derived worlds


def taxonomy_domains() -> list[Domain]:
    out = []
    for c in load_taxonomy(ROOT / "tool_specs" / "taxonomy.yaml"):
        for i, name in enumerate([c["name"].replace("_", " "), *c["example_domains"]]):
            out.append(
                Domain(
                    domain_id=f"dom_{c['name']}_{i}",
                    category=c["name"],
                    name=name,
                    description=c["hint"],
                    entities=c["entities"],
                )
            )
    return out


@pytest.mark.parametrize("domain", taxonomy_domains(), ids=lambda d: f"{d.category}/{d.name}")
def test_every_derived_world_of_the_taxonomy_is_coherent(domain):
    w = derive_world(domain, TODAY)
    assert world_problem(w) is None and world_incoherence(w) is None


def test_derived_transactions_say_what_they_are_of_in_the_domains_terms():
    """A trade names an instrument code, a transfer a label and its account, a ticket a sentence, a shop's
    order a product; a repository is draft -> active -> archived, not reserved or retired."""

    def fields(category: str, name: str, entities: list[str], collection: str) -> list[tuple]:
        w = derive_world(Domain(domain_id="d", category=category, name=name, description="", entities=entities), TODAY)
        return [(f.name, f.format, f.ref) for f in w.collection(collection).fields if not f.enum]

    assert fields("financial_trading", "crypto exchange", ["accounts", "orders"], "orders")[:2] == [
        ("symbol", "code", None),
        ("account_id", "code", "accounts"),
    ]
    assert fields("banking", "retail banking", ["customers", "accounts", "transfers"], "transfers")[:3] == [
        ("title", "label", None),
        ("customer_id", "code", "customers"),
        ("account_id", "code", "accounts"),
    ]
    assert fields("customer_support", "helpdesk", ["customers", "tickets"], "tickets")[0] == ("title", "sentence", None)
    assert fields("e_commerce", "online store", ["customers", "orders"], "orders")[0] == ("title", "product", None)
    repos = derive_world(
        Domain(domain_id="d", category="software", name="code hosting", description="", entities=["repositories"]),
        TODAY,
    ).collection("repositories")
    assert repos.fields[-1].enum == ["draft", "active", "archived"]
    assert repos.transitions == {"status": {"draft": ["active", "archived"], "active": ["archived"], "archived": []}}
