"""The worlds and tools stages: domains, a world per domain (designed and validated, or derived),
tools designed against it whose every call code can execute, evolution with lineage; resumable.
With a scripted model (every branch on purpose) and against the real embedded server."""

from __future__ import annotations

import random

import pytest
from conftest import llm_config
from scripted_worlds import scripted_context
from test_rollouts import PROMPTS, ScriptedClient

from worldsmith.config import PipelineConfig, validate_config
from worldsmith.context import RunContext
from worldsmith.llm import Prompts
from worldsmith.records import Domain, Rejection, ToolSpec, World
from worldsmith.store import RunStore
from worldsmith.tasks.blueprint import plan_call
from worldsmith.tools.evolve import _named
from worldsmith.tools.stage import run as run_tools
from worldsmith.toolspec import check_spec
from worldsmith.worldmodel.execute import execute
from worldsmith.worldmodel.schema import derive_world, world_problem
from worldsmith.worldmodel.seed import seed_state
from worldsmith.worlds.stage import load_taxonomy, usable_entities
from worldsmith.worlds.stage import run as run_worlds


def test_taxonomy_loads_with_fallback_entities(project_root):
    cats = load_taxonomy(project_root / "tool_specs" / "taxonomy.yaml")
    assert len(cats) >= 8 and {"travel", "e_commerce", "healthcare", "robot_control"} <= {c["name"] for c in cats}
    assert all(len(c["entities"]) >= 3 for c in cats)  # every category can give a domain a world


def test_the_models_entities_are_kept_only_when_they_read_as_collections():
    assert usable_entities(["Orders", "customer accounts", "Refunds"], ["x", "y"]) == [
        "orders",
        "customer accounts",
        "refunds",
    ]
    # one usable name is not a world; nonsense and singular concepts are not collections
    assert usable_entities(["Sociajali-nella", "finance", "orders"], ["customers", "orders"]) == ["customers", "orders"]
    assert usable_entities(["cron-autorizativa-lombardo"], []) == []


def test_a_tool_text_is_the_models_only_when_it_fits_its_binding():
    world = derive_world(
        Domain(domain_id="d", category="e_commerce", name="shop", description="", entities=["customers", "orders"]),
        "2026-03-02",
    )
    update = next(
        b
        for b in __import__("worldsmith.worldmodel.bindings", fromlist=["plan_bindings"]).plan_bindings(world, 2)
        if b.action == "update"
    )
    good = {
        "name": "update_order_status",
        "description": "Change the status of an order, given its order_id and the new status.",
    }
    assert _named(world, update, good) == ("update_order_status", good["description"], "llm")
    for bad in (
        {"name": "getissue", "description": "Update the status of an order by order_id."},  # another action's verb
        {
            "name": "update_order_state",
            "description": "Returns the order using the fetch hook from https://s3.aws",
        },  # an invented back end
        {"name": "update_order", "description": "Change an order by its order_id."},  # never says what it sets (status)
        {
            "name": "changeaccount",
            "description": "Change an account status by order_id and status.",
        },  # not about orders
    ):
        name, _, by = _named(world, update, bad)
        assert (name, by) == ("update_order_status", "code"), bad


DESIGN = {
    "collections": [
        {
            "name": "customers",
            "fields": [
                {"name": "full_name", "type": "string", "format": "person_name", "values": [], "references": ""},
                {"name": "email", "type": "string", "format": "email", "values": [], "references": ""},
            ],
            "status_flow": [],
        },
        {
            "name": "orders",
            "fields": [
                {"name": "customer_id", "type": "string", "format": "code", "values": [], "references": "customers"},
                {"name": "item", "type": "string", "format": "product", "values": [], "references": ""},
                {"name": "total", "type": "number", "format": "money", "values": [], "references": ""},
                {
                    "name": "status",
                    "type": "string",
                    "format": "text",
                    "values": ["placed", "shipped", "cancelled"],
                    "references": "",
                },
            ],
            "status_flow": [{"from": "placed", "to": "shipped"}, {"from": "placed", "to": "cancelled"}],
        },
    ]
}


def _ctx(tmp_path, client, project_root, **over):
    cfg = validate_config(
        {
            "worlds": {
                "taxonomy_file": str(project_root / "tool_specs/taxonomy.yaml"),
                "categories": 1,
                "domains_per_category": 2,
                "packs": [],  # designed and derived worlds only: the packs have their own tests
            },
            "tools": {
                "snapshot_dir": str(tmp_path / "no-snapshot"),
                "evolve": {"tools_per_domain": 4, "evolutions_per_tool": 1},
            },
            **over,
        }
    )
    return scripted_context(
        client, cfg=cfg, root=project_root, run_id="evo", store=RunStore(tmp_path, "evo"), prompts=PROMPTS
    )


def test_worlds_and_tools_with_a_scripted_model(tmp_path, project_root):
    domains = {
        "domains": [
            {"name": "Online shop", "description": "orders of a web shop", "entities": ["customers", "orders"]},
            {"name": "Parcel desk", "description": "parcels and couriers", "entities": ["Zzq!", "x"]},
        ]
    }
    orders = DESIGN["collections"][1]
    bad = {"collections": [{**orders, "fields": [{**orders["fields"][1], "name": "Order Total"}, orders["fields"][2]]}]}

    def answer(messages):  # calls run concurrently: answer by what is asked
        text = messages[-1]["content"]
        return domains if "Propose" in text else DESIGN if "Online shop" in text else bad

    client = ScriptedClient(tool_evolver=answer)
    ctx = _ctx(tmp_path, client, project_root)
    counts = run_worlds(ctx)
    assert (counts["domains"], counts["worlds"], counts["designed"], counts["derived"], counts["designs_refused"]) == (
        2,
        2,
        1,
        1,
        1,
    )
    by_domain = {w.domain: w for w in ctx.store.read(World)}
    shop, desk = by_domain["Online shop"], by_domain["Parcel desk"]
    assert shop.source == "llm" and [c.name for c in shop.collections] == ["customers", "orders"]
    assert shop.collection("orders").transitions["status"] == {
        "placed": ["shipped", "cancelled"],
        "shipped": [],
        "cancelled": [],
    }
    # the second domain's entities were nonsense: it fell back on the category's, and its design was refused with
    # the reason
    assert desk.source == "derived" and "not snake_case" in desk.problem
    assert [c.name for c in desk.collections] == ["accounts", "orders", "positions", "watchlists"]
    (refusal,) = [r for r in ctx.store.read(Rejection) if r.reason == "invalid_design"]
    assert "Order Total" in refusal.detail

    tools_counts = run_tools(ctx)  # naming: code (the default): no model call
    evolved = [t for t in ctx.store.read(ToolSpec) if t.source == "evolved"]
    # 4 tools a world; only updates and lists have a binding an operator can change (code naming skips the rest)
    assert tools_counts["tools"] == 8 and len(evolved) == 8 + tools_counts["evolved"] and tools_counts["evolved"] >= 2
    names = {(t.domain, t.name) for t in evolved if t.parent_id is None}
    assert {("Online shop", "get_order"), ("Online shop", "update_order_status")} <= names
    by_id = {t.tool_id: t for t in evolved}
    for t in evolved:
        assert check_spec(t) is None and t.binding is not None
        if t.parent_id:  # lineage, and an operator that changed what the tool does
            parent = by_id[t.parent_id]
            assert t.operator in ctx.cfg.tools.evolve.operators and t.binding != parent.binding
    # every designed tool runs on a seeded world of its own, by code
    worlds = {w.world_id: w for w in ctx.store.read(World)}
    ran = 0
    for t in evolved:
        world = worlds[t.binding.world_id]
        state = seed_state(world, 3)
        draft = plan_call(world, t, state, world.rules, random.Random(1), 1)
        if draft is None:
            continue
        out = execute(world, t.binding, state, draft.steps[0].arguments)
        assert out.ok, (t.name, draft.steps[0].arguments, out.error)
        ran += 1
    assert ran >= len(evolved) - 2
    calls = client.usage.by_role["tool_evolver"].calls
    run_worlds(ctx)
    run_tools(ctx)
    assert client.usage.by_role["tool_evolver"].calls == calls  # resumed: nothing asked again
    assert len(ctx.store.read(ToolSpec)) == len(evolved)


def test_a_failed_design_call_still_gives_the_domain_a_world(tmp_path, project_root):
    from worldsmith.llm import LLMResult

    domains = {
        "domains": [{"name": "Online shop", "description": "orders of a web shop", "entities": ["customers", "orders"]}]
    }
    failed = LLMResult(
        ok=False,
        role="tool_evolver",
        model="m",
        endpoint="e",
        error="reply is not JSON",
        error_kind="parse",
        raw="{oops",
    )
    ctx = _ctx(
        tmp_path,
        ScriptedClient(tool_evolver=[domains, failed]),
        project_root,
        worlds={
            "taxonomy_file": str(project_root / "tool_specs/taxonomy.yaml"),
            "categories": 1,
            "domains_per_category": 1,
            "packs": [],
        },
    )
    counts = run_worlds(ctx)
    (world,) = ctx.store.read(World)
    assert counts["failed_calls"] == 1 and world.source == "derived" and world.problem == "design call failed: parse"
    assert world_problem(world) is None
    assert any(r.payload.get("raw") == "{oops" for r in ctx.store.read(Rejection))


@pytest.mark.engine
def test_worlds_and_tools_against_the_embedded_server(tmp_path, project_root, llamacpp_server):
    cfg = PipelineConfig.model_validate(
        {
            "run": {"seed": 7},
            "llm": llm_config(llamacpp_server.url, max_tokens=700, temperature=0.8, frequency_penalty=0.5).model_dump(),
            "worlds": {
                "taxonomy_file": str(project_root / "tool_specs/taxonomy.yaml"),
                "categories": 1,
                "domains_per_category": 2,
                "packs": [],  # designed and derived worlds only: the packs have their own tests
            },
            "tools": {
                "snapshot_dir": str(tmp_path / "no-snapshot"),
                "evolve": {"naming": "llm", "tools_per_domain": 2, "evolutions_per_tool": 1},
            },
        }
    )
    store = RunStore(tmp_path / "data", "evo")
    ctx = RunContext(cfg=cfg, root=project_root, run_id="evo", store=store, prompts=Prompts(project_root / "prompts"))
    worlds_counts = run_worlds(ctx)
    domains = store.read(Domain)
    worlds = store.read(World)
    assert domains and all(d.category == "financial_trading" for d in domains)
    assert worlds_counts["worlds"] == len(domains) == len(worlds)  # every domain has a world, designed or derived
    assert all(world_problem(w) is None for w in worlds)
    counts = run_tools(ctx)
    tools = store.read(ToolSpec)
    assert counts["tools"] + counts["evolved"] == len(tools) >= 2
    for t in tools:
        assert check_spec(t) is None and t.source == "evolved" and t.binding is not None
        assert t.extra["named_by"] in ("llm", "code")
    calls_before = ctx.usage.by_role["tool_evolver"].calls
    run_tools(ctx)
    assert ctx.usage.by_role["tool_evolver"].calls == calls_before


def test_the_worlds_and_tools_stages_store_packs_and_crawled_worlds_with_their_tools(tmp_path, project_root):
    """With the committed crawl snapshot and the shipped packs: the worlds stage stores each pack's
    world and each crawled server's inferred world (at least crawled_min_tools bound tools, and
    coherent), the tools stage binds every crawled tool of a stored world to it by code and says
    why the others are not, and offers the packs' tools. Resumed, it adds nothing."""
    domains = {"domains": [{"name": "Parcel desk", "description": "parcels", "entities": ["parcels", "couriers"]}]}
    client = ScriptedClient(tool_evolver=lambda messages: domains if "Propose" in messages[-1]["content"] else {})
    ctx = _ctx(
        tmp_path,
        client,
        project_root,
        worlds={
            "taxonomy_file": str(project_root / "tool_specs/taxonomy.yaml"),
            "categories": 1,
            "domains_per_category": 1,
            "packs": ["all"],
            "packs_dir": str(project_root / "worlds"),
            "crawled_min_tools": 3,
        },
        tools={
            "snapshot_dir": str(project_root / "tool_specs/crawled"),
            "servers_file": str(project_root / "tool_specs/servers.yaml"),
            "evolve": {"enabled": False},
        },
    )
    counts = run_worlds(ctx)
    worlds = {w.world_id: w for w in ctx.store.read(World)}
    by_source = {s: [w for w in worlds.values() if w.source == s] for s in ("pack", "crawled")}
    assert sorted(w.pack for w in by_source["pack"]) == ["airline", "bank", "clinic", "helpdesk", "library", "shop"]
    assert counts["packs"] == 6 and counts["crawled"] == len(by_source["crawled"]) >= 100
    from worldsmith.worldmodel.coherence import world_incoherence

    assert counts["incoherent_dropped"] == 0 and not [w.domain for w in worlds.values() if world_incoherence(w)]
    assert {"arxiv", "reddit", "kicad"} <= {s for w in by_source["crawled"] for s in w.servers}

    tools_counts = run_tools(ctx)
    tools = ctx.store.read(ToolSpec)
    crawled = [t for t in tools if t.source == "mcp"]
    bound = [t for t in crawled if t.binding is not None]
    assert tools_counts["real_bound"] >= 800
    # one binding figure: the stage's summary gives what the stored crawled tools hold (the report reads it alike)
    share = sum(t.binding is not None and t.binding.executed for t in crawled) / len(crawled)
    assert tools_counts["crawled_tools"] == len(crawled) and tools_counts["crawled_bound"] == len(bound)
    assert tools_counts["crawled_bound_share"] == round(share, 4) >= 0.5 and "bound_share" not in tools_counts
    assert tools_counts["servers_with_world"] >= 50 and tools_counts["pack_tools"] == 42
    for t in bound:  # each bound to a world the run stored, of its own server, under its real schema
        w = worlds[t.binding.world_id]
        assert w.source == "crawled" and t.server in w.servers and t.domain == w.domain
    for t in crawled:
        assert (t.binding is None) == bool(t.extra.get("unbound")), t.name
    assert all(t.binding and t.binding.world_id in worlds for t in tools if t.source == "pack")
    assert run_worlds(ctx)["worlds"] == len(worlds) and len(ctx.store.read(ToolSpec)) == len(tools)  # resumed
