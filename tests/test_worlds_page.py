"""The worlds page (`<run>/worlds.html`, report/worlds.py): a run store with a world of each source
(derived, llm, pack, crawled), tools bound to them or simulated in them, and refused designs. The
page must list every world with its source, collections, rules, policy, tools and refusal, and
the report must link it."""

from __future__ import annotations

import html
import re

import pytest
from test_coherence import helpdesk, library

from worldsmith.records import CollectionSpec, Domain, FieldSpec, Rejection, ToolBinding, ToolSpec, World
from worldsmith.store import RunStore
from worldsmith.tools.evolve import bound_spec
from worldsmith.worldmodel.bindings import binding_for, default_name
from worldsmith.worldmodel.schema import derive_world, world_from_design

RUN = "wrun"
SCRIPT = "<script>alert(1)</script>"


def tool(world: World, collection: str, action: str, **fixed) -> ToolSpec:
    b = binding_for(world, world.collection(collection), action)
    if fixed:
        b = b.model_copy(update={"fixed": fixed, "params": {}})
    return bound_spec(world, b, default_name(world, b), "d", request_id=f"{collection}/{action}", named_by="code")


def plain_tool(name: str, *, domain: str | None = None, server: str | None = None, binding=None) -> ToolSpec:
    return ToolSpec(
        tool_id=f"tool_{name}",
        name=name,
        description=f"{name}.",
        input_schema={"type": "object", "properties": {}},
        source="mcp" if server else "pack" if binding else "evolved",
        server=server,
        domain=domain,
        binding=binding,
    )


def make_worlds() -> dict[str, World]:
    shop = derive_world(
        Domain(
            domain_id="dom_shop",
            category="e_commerce",
            name="web shop",
            description="An online shop.",
            entities=["customers", "orders", "products"],
        ),
        "2026-03-02",
        problem="design call failed: timeout",
    )
    shares = Domain(
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
                ],
                "status_flow": [],
            },
        ]
    }
    llm, problem = world_from_design(shares, design, "2026-03-02")
    assert problem is None
    pack = library().model_copy(
        update={
            "world_id": "wld_library",
            "domain_id": "dom_library",
            "source": "pack",
            "pack": "library",
            "policy": f"A member may renew a loan at most twice. {SCRIPT}",
        }
    )
    desk = helpdesk().model_copy(
        update={
            "world_id": "wld_helpdesk",
            "domain_id": "dom_helpdesk",
            "source": "derived",
            "problem": "tickets.status gives a ticket the lifecycle of goods",
        }
    )
    crawled = World(
        world_id="wld_github",
        domain_id="dom_github",
        domain="github",
        category="software_applications",
        collections=[
            CollectionSpec(
                name="repositories",
                entity="repository",
                key="repository_id",
                id_prefix="rep",
                fields=[FieldSpec(name="full_name", format="label"), FieldSpec(name="stars", type="integer")],
            )
        ],
        today="2026-03-02",
        source="crawled",
        servers=["github"],
    )
    return {"shop": shop, "llm": llm, "pack": pack, "desk": desk, "crawled": crawled}


@pytest.fixture
def store(tmp_path):
    worlds = make_worlds()
    shop, llm, pack = worlds["shop"], worlds["llm"], worlds["pack"]
    s = RunStore(tmp_path / "data", RUN)
    s.append(list(worlds.values()))
    s.append(
        [
            tool(shop, "orders", "get"),
            tool(shop, "orders", "update", status="cancelled"),
            tool(llm, "orders", "get"),
            plain_tool("recommend_products", domain="web shop"),  # simulated in the shop
            plain_tool(
                "renew_loan",
                binding=ToolBinding(
                    world_id=pack.world_id, collection="loans", action="update", operation="renew_loan"
                ),
            ),
            plain_tool(
                "get_repository",
                server="github",
                binding=ToolBinding(
                    world_id="wld_github", collection="repositories", action="get", match={"repo": "full_name"}
                ),
            ),
            plain_tool("search_code", server="github"),  # a crawled tool left unbound
            plain_tool("get_weather", domain="weather"),  # of no world
        ]
    )
    s.append(
        [
            Rejection(
                rejection_id="rej_1",
                kind="world_design",
                subject="world/web shop",
                reason="invalid_design",
                detail="orders.amount: references 'carts', not another collection of this world",
                payload={"domain_id": "dom_shop"},
            ),
            Rejection(
                rejection_id="rej_2",
                kind="world_coherence",
                subject="world/helpdesk tickets",
                reason="incoherent",
                detail=f"tickets.status gives a ticket the lifecycle of goods {SCRIPT}",
                payload={"domain_id": "dom_helpdesk"},
            ),
            Rejection(rejection_id="rej_3", kind="tool_spec", subject="x", reason="invalid_schema", detail="not shown"),
        ]
    )
    s.write_info(status="finished", started_at="2026-03-02T00:00:00", usage={})
    return s


def sections(page: str) -> dict[str, str]:
    """Each world's section of the page, by world id."""
    found = re.findall(r'<section class="world" id="([^"]+)"[^>]*>(.*?)</section>', page, re.S)
    return dict(found)


def test_the_page_lists_every_world_with_its_tools_and_refusals(store):
    from worldsmith.report.worlds import write_worlds

    out = store.root / "worlds.html"
    note = write_worlds(store.data_dir, RUN, out)
    page = out.read_text()
    worlds = make_worlds()
    assert note == "5 worlds: 1 llm, 2 derived, 1 pack, 1 crawled"
    got = sections(page)
    # every world, each once, with its source and domain
    assert sorted(got) == sorted(w.world_id for w in worlds.values())
    for w in worlds.values():
        section = got[w.world_id]
        assert f'<span class="src src-{w.source}">{w.source}</span>' in section
        assert f"<h2>{html.escape(w.domain)} " in section and f"<td>{w.category}</td>" in section
        for c in w.collections:
            assert f"<h4>{c.name} " in section
            assert all(f"<td>{f.name}</td>" in section for f in c.fields)

    shop, llm, pack, desk, crawled = (got[worlds[k].world_id] for k in ("shop", "llm", "pack", "desk", "crawled"))
    # fields with type, format, enum and reference; transitions; rules
    assert "<td>product_id</td><td>string</td><td>code</td><td></td><td>products</td>" in shop
    assert "<td>status</td><td>string</td><td>text</td><td>pending / confirmed / completed / cancelled</td>" in shop
    assert "pending → confirmed, cancelled; confirmed → completed, cancelled; completed → (final)" in shop
    assert "Never delete an order whose status is completed" in shop
    # tools: bound (action, collection) or simulated, in the world they act on
    assert re.search(r"<code>get_order</code></td><td>get</td><td>orders</td><td></td><td>bound</td>", shop)
    assert "<code>cancel_order</code>" in shop and "<code>cancel_order</code>" not in llm
    assert "<code>recommend_products</code></td><td></td><td></td><td></td><td>simulated</td>" in shop
    assert "<code>get_order</code>" in llm and "Tools (1, 1 bound)" in llm
    assert "<td>update</td><td>loans</td><td>renew_loan</td><td>bound</td>" in pack
    assert "<code>get_repository</code>" in crawled and "<code>search_code</code>" in crawled
    assert "<th>servers</th><td>github</td>" in crawled and "<th>pack</th><td>library</td>" in pack
    # the policy, the refusals (model text, escaped), the problem of a failed call
    assert "A member may renew a loan at most twice." in pack and SCRIPT not in page
    assert "refused (world_design: invalid_design)</b> orders.amount: references" in shop
    assert "design call failed: timeout" in shop
    assert "refused (world_coherence: incoherent)</b> tickets.status gives a ticket" in desk
    assert "not shown" not in page
    # a tool of no world is listed after the worlds
    assert "Tools on no world (1)" in page and "<code>get_weather</code>" in page.split("Tools on no world")[1]


def test_a_world_missing_from_the_page_is_caught(store, monkeypatch):
    """The check above fails when the page drops a world."""
    import worldsmith.report.worlds as page_module

    load = page_module.load_worlds
    monkeypatch.setattr(page_module, "load_worlds", lambda *a: (lambda v, t, r: (v[:-1], t, r))(*load(*a)))
    out = store.root / "worlds.html"
    page_module.write_worlds(store.data_dir, RUN, out)
    with pytest.raises(AssertionError):
        assert sorted(sections(out.read_text())) == sorted(w.world_id for w in make_worlds().values())


def test_the_report_links_the_worlds_page(store):
    from worldsmith.report.stage import build_report

    build_report(store.data_dir, RUN, store.root / "report.html", trajectories=False)
    report = (store.root / "report.html").read_text()
    assert '<a href="worlds.html">' in report and "5 worlds: 1 llm, 2 derived, 1 pack, 1 crawled" in report
    assert (store.root / "worlds.html").exists()
