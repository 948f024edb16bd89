"""Worlds inferred by code from crawled MCP tools (worldmodel/infer.py): hand-written servers
with the collections, bindings and reasons expected of them, and the real snapshot's bound
tools executed on seeded states with calls that satisfy their real input schemas."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from worldsmith.mcp.snapshot import load_snapshot_specs
from worldsmith.records import ToolBinding, ToolSpec, World
from worldsmith.worldmodel.execute import execute
from worldsmith.worldmodel.infer import InferredWorld, _bounds, binding_coverage, infer_worlds
from worldsmith.worldmodel.schema import world_problem
from worldsmith.worldmodel.seed import seed_state

ROOT = Path(__file__).resolve().parents[1]
TODAY = "2025-06-01"


def spec(server: str, name: str, props: dict[str, Any], required: list[str] = (), category: str = "tools", **kw):
    schema = {"type": "object", "properties": props, "required": list(required)}
    return ToolSpec(
        tool_id=ToolSpec.make_id(name, kw.get("description", name), schema, kw.get("output_schema"), server),
        name=name,
        description=kw.get("description", f"{name.replace('_', ' ')}."),
        input_schema=schema,
        output_schema=kw.get("output_schema"),
        annotations=kw.get("annotations", {}),
        source="mcp",
        server=server,
        category=category,
    )


S = {"type": "string"}
INT = {"type": "integer"}


def github() -> list[ToolSpec]:
    return [
        spec("gh", "get_issue", {"owner": S, "repo": S, "issue_number": INT}, ["owner", "repo", "issue_number"]),
        spec(
            "gh",
            "list_issues",
            {
                "owner": S,
                "repo": S,
                "state": {"type": "string", "enum": ["open", "closed"]},
                "per_page": INT,
                "page": INT,
            },
            ["owner", "repo"],
        ),
        spec(
            "gh",
            "create_issue",
            {"owner": S, "repo": S, "title": S, "body": S, "issue_number": INT},
            ["owner", "repo", "title"],
        ),
        spec(
            "gh",
            "update_issue",
            {
                "owner": S,
                "repo": S,
                "issue_number": INT,
                "title": S,
                "state": {"type": "string", "enum": ["open", "closed"]},
            },
            ["owner", "repo", "issue_number"],
        ),
        spec("gh", "close_issue", {"owner": S, "repo": S, "issue_number": INT}, ["owner", "repo", "issue_number"]),
        spec("gh", "run_workflow", {"owner": S, "repo": S, "workflow": S}, ["owner", "repo", "workflow"]),
    ]


def arxiv() -> list[ToolSpec]:
    return [
        spec(
            "arx",
            "search_papers",
            {"query": S, "max_results": INT, "sort_by": {"type": "string", "enum": ["relevance", "date"]}},
            ["query"],
            category="web_research",
        ),
        spec("arx", "get_paper", {"paper_id": S}, ["paper_id"], category="web_research"),
        spec("arx", "get_abstract", {"paper_id": S}, ["paper_id"], category="web_research"),
        spec("arx", "download_paper", {"paper_id": S}, ["paper_id"], category="web_research"),
    ]


def calculator() -> list[ToolSpec]:
    return [
        spec("calc", "calculate", {"expression": S}, ["expression"], category="utilities"),
        spec("calc", "convert_units", {"value": {"type": "number"}, "from_unit": S, "to_unit": S}, ["value"]),
    ]


def by_name(inferred: list[InferredWorld], tools: list[ToolSpec]) -> tuple[dict[str, Any], dict[str, str], World]:
    names = {t.tool_id: t.name for t in tools}
    bindings = {names[k]: b for w in inferred for k, b in w.bindings.items() if k in names}
    unbound = {names[k]: r for w in inferred for k, r in w.unbound.items() if k in names}
    worlds = [w.world for w in inferred if w.world is not None and set(w.bindings) & set(names)]
    assert len(worlds) == 1
    return bindings, unbound, worlds[0]


def test_github_like_server_composite_keys_and_one_collection():
    tools = github()
    b, unbound, world = by_name(infer_worlds(tools, TODAY), tools)
    assert world_problem(world) is None and world.source == "crawled" and world.servers == ["gh"]
    assert [c.name for c in world.collections] == ["issues"]
    issues = world.collection("issues")
    fields = {f.name: f for f in issues.fields}
    assert fields["issue_number"].type == "integer" and fields["state"].enum[:2] == ["open", "closed"]
    assert {x.collection for x in b.values()} == {"issues"}
    assert b["get_issue"].action == "get" and b["get_issue"].key_param is None
    assert b["get_issue"].match == {"owner": "owner", "repo": "repo", "issue_number": "issue_number"}
    assert b["list_issues"].action == "list" and b["list_issues"].params == {
        "owner": "owner",
        "repo": "repo",
        "state": "state",
    }
    assert b["list_issues"].limit_param == "per_page" and "page" in b["list_issues"].ignored
    assert b["create_issue"].action == "create" and b["create_issue"].params["title"] == "title"
    assert b["update_issue"].action == "update" and b["update_issue"].params == {"title": "title", "state": "state"}
    assert b["close_issue"].action == "update" and b["close_issue"].fixed == {"status": "closed"}
    assert unbound == {"run_workflow": "side_effect_outside: run"}


def test_arxiv_like_search_and_get_and_calculator_unbound():
    tools = arxiv() + calculator()
    inferred = infer_worlds(tools, TODAY)
    names = {t.tool_id: t.name for t in tools}
    b = {names[k]: v for w in inferred for k, v in w.bindings.items()}
    unbound = {names[k]: v for w in inferred for k, v in w.unbound.items()}
    assert b["search_papers"] == ToolBinding(
        world_id=b["search_papers"].world_id,
        collection="papers",
        action="list",
        search=["query"],
        limit_param="max_results",
        ignored={"sort_by": "the order of the results"},
    )
    assert b["get_paper"].action == "get" and b["get_paper"].key_param == "paper_id"
    assert b["get_abstract"].collection == "papers" and b["get_abstract"].key_param == "paper_id"
    assert unbound["download_paper"].startswith("side_effect_outside")
    assert unbound["calculate"].startswith("compute_only") or unbound["calculate"].startswith("side_effect")
    assert unbound["convert_units"].startswith("compute_only")
    calc = [w for w in inferred if w.servers == ["calc"]]
    assert calc and calc[0].world is None and not calc[0].bindings


def test_deterministic():
    tools = github() + arxiv() + calculator()
    a = infer_worlds(tools, TODAY)
    b = infer_worlds(list(reversed(tools)), TODAY)
    assert [(w.world.model_dump(exclude={"created_at"}) if w.world else None, w.bindings, w.unbound) for w in a] == [
        (w.world.model_dump(exclude={"created_at"}) if w.world else None, w.bindings, w.unbound) for w in b
    ]


def _fields(world: World, collection: str) -> dict[str, tuple[str, str]]:
    return {f.name: (f.type, f.format) for f in world.collection(collection).fields}


def _executes(world: World, bindings: dict[str, ToolBinding], tools: list[ToolSpec]) -> None:
    """Each bound tool's planned call succeeds on a seeded state (the fields stay seedable)."""
    state = seed_state(world, seed=4)
    by = {t.name: t for t in tools}
    for name, b in sorted(bindings.items()):
        args, record = plan_call(world, b, by[name], state, random.Random(1))
        jsonschema.validate(args, by[name].input_schema)
        assert execute(world, b, state, args).ok, name


def test_arxiv_like_papers_hold_what_the_tools_return_not_output_options():
    """`get_abstract` says what a paper holds; `abstract_mode` only shapes the search's output."""
    mode = {"type": "string", "enum": ["none", "snippet", "full"]}
    tools = [
        spec(
            "arx2",
            "search_papers",
            {"query": S, "max_results": INT, "abstract_mode": mode},
            ["query"],
            description="Search arXiv papers. Response: total_results, returned, has_more, next_start.",
        ),
        spec(
            "arx2",
            "get_abstract",
            {"paper_id": S},
            ["paper_id"],
            description="Get a paper's abstract to assess relevance. Returns title, authors, abstract, categories, "
            "published date, and PDF URL.",
        ),
        spec("arx2", "get_paper", {"paper_id": S, "verbose": {"type": "boolean"}}, ["paper_id"]),
    ]
    b, _, world = by_name(infer_worlds(tools, TODAY), tools)
    fields = _fields(world, "papers")
    assert fields["title"] == ("string", "sentence")
    assert fields["authors"] == ("string", "person_name")
    assert fields["abstract"] == ("string", "sentence")
    assert fields["published_date"] == ("string", "date")
    assert fields["pdf_url"] == ("string", "url")
    assert fields["categories"] == ("string", "label")
    assert "abstract_mode" not in fields and "verbose" not in fields and "name" not in fields
    assert not {"total_results", "returned", "has_more", "next_start"} & set(fields)  # the envelope
    assert b["search_papers"].ignored["abstract_mode"] == "the shape of the output"
    assert b["get_paper"].ignored == {"verbose": "the shape of the output"}
    _executes(world, b, tools)


def test_output_schema_properties_become_typed_fields():
    """A FastMCP-style `{result: [Book]}` output: the Book's scalar properties, `$ref` resolved, typed."""
    book = {
        "type": "object",
        "properties": {
            "book_id": S,
            "title": S,
            "pages": INT,
            "list_price": {"type": "number"},
            "in_print": {"type": "boolean"},
            "genre": {"type": "string", "enum": ["fiction", "poetry", "essay"]},
            "published_at": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "chapters": {"type": "array", "items": S},
        },
    }
    out = {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Book"}}},
        "$defs": {"Book": book},
    }
    tools = [
        spec("shelf", "list_books", {"limit": INT}, output_schema=out),
        spec("shelf", "get_book", {"book_id": S}, ["book_id"], output_schema={"$defs": {"Book": book}, **book}),
    ]
    b, _, world = by_name(infer_worlds(tools, TODAY), tools)
    books = world.collection("books")
    assert books.key == "book_id"
    fields = {f.name: f for f in books.fields}
    assert (fields["title"].type, fields["title"].format) == ("string", "sentence")
    assert (fields["pages"].type, fields["list_price"].type) == ("integer", "number")
    assert fields["list_price"].format == "money"
    assert fields["in_print"].type == "boolean"
    assert fields["genre"].enum == ["fiction", "poetry", "essay"]
    assert fields["published_at"].format == "datetime"
    assert "chapters" not in fields and "result" not in fields and "name" not in fields
    assert b["list_books"].action == "list" and b["get_book"].key_param == "book_id"
    _executes(world, b, tools)


def test_output_shaping_parameters_are_ignored_with_their_reason():
    shape = "the shape of the output"
    tools = [
        spec(
            "wiki",
            "get_article",
            {
                "article_id": S,
                "format": {"type": "string", "enum": ["json", "markdown"]},
                "verbose": {"type": "boolean"},
                "include_links": {"type": "boolean"},
                "max_chars": INT,
                "detail": {"type": "string", "enum": ["brief", "full"]},
                "output_format": S,
                "return_html": {"type": "boolean"},
            },
            ["article_id"],
            description="Get an article. Returns its title, body, author, and updated date.",
        ),
        spec("wiki", "list_articles", {"category": S, "fields": S, "summary_only": {"type": "boolean"}}),
    ]
    b, _, world = by_name(infer_worlds(tools, TODAY), tools)
    get = b["get_article"]
    assert get.key_param == "article_id"
    assert get.ignored == dict.fromkeys(
        ("format", "verbose", "include_links", "max_chars", "detail", "output_format", "return_html"), shape
    )
    assert b["list_articles"].ignored == {"fields": shape, "summary_only": shape}
    assert b["list_articles"].params == {"category": "category"}
    fields = _fields(world, "articles")
    assert {"title", "body", "author", "updated_date", "category"} <= set(fields)
    assert not {"format", "verbose", "include_links", "detail", "fields", "summary_only"} & set(fields)
    _executes(world, b, tools)


def _bound(tools: list[ToolSpec]) -> tuple[dict[str, ToolBinding], dict[str, str]]:
    inferred = infer_worlds(tools, TODAY)
    names = {t.tool_id: t.name for t in tools}
    bound = {names[k]: v for w in inferred for k, v in w.bindings.items()}
    return bound, {names[k]: v for w in inferred for k, v in w.unbound.items() if names[k] not in bound}


RO = {"readOnlyHint": True}


def test_a_history_of_point_in_time_records_lists_them_and_other_histories_stay_derived():
    tools = [
        spec("af", "get_dag_run_history", {"dag_id": S, "limit": INT, "oldest_first": {"type": "boolean"}}, ["dag_id"]),
        spec("af", "get_dag_run", {"dag_id": S, "dag_run_id": S}, ["dag_id", "dag_run_id"]),
        spec("af", "list_dag_runs", {"dag_id": S, "state": S}),
        spec("fx", "fx_price_history", {"symbol": S, "limit": INT, "from_date": S}, ["symbol"], annotations=RO),
        spec("fx", "fx_get_price", {"symbol": S}, ["symbol"]),
        spec("fx", "fx_list_prices", {"currency": S}),
        spec("fp", "get_player_history", {"player": S, "last_n": INT}, ["player"], annotations=RO),
    ]
    b, unbound = _bound(tools)
    h = b["get_dag_run_history"]
    assert (h.collection, h.action, h.params, h.limit_param) == ("dag_runs", "list", {"dag_id": "dag_id"}, "limit")
    assert h.ignored == {"oldest_first": "the order of the results"}
    p = b["fx_price_history"]
    assert (p.collection, p.action, p.params, p.limit_param) == ("prices", "list", {"symbol": "symbol"}, "limit")
    assert p.ignored == {"from_date": "an optional range filter, not modelled"}
    assert unbound["get_player_history"].startswith("derived_view")


def test_a_noun_that_is_also_a_verb_before_a_trailing_get_or_list_is_the_collection():
    tools = [
        spec("shop", "trace_get", {"run_id": S}, ["run_id"], annotations=RO),
        spec("shop", "trace_list", {"agent_name": S, "case_id": S, "limit": INT}, annotations=RO),
        spec("shop", "order_get", {"order_id": S}, ["order_id"], annotations=RO),
        spec("db", "run_query", {"query": S}, ["query"]),
        spec("db", "list_tables", {}),
    ]
    b, unbound = _bound(tools)
    g = b["trace_get"]
    assert (g.collection, g.action, g.key_param, g.match) == ("traces", "get", None, {"run_id": "run_id"})
    lst = b["trace_list"]
    assert (lst.collection, lst.action, lst.limit_param) == ("traces", "list", "limit")
    assert lst.params == {"agent_name": "agent_name", "case_id": "case_id"}
    assert unbound["run_query"].startswith("side_effect_outside")  # query is no trailing get/list


def test_a_plural_noun_and_index_with_no_input_lists_the_noun():
    tools = [
        spec("who", "topics_index", {}, annotations=RO),
        spec("who", "get_topic", {"topic_id": S}, ["topic_id"]),
        spec("who", "index_status", {}),
        spec("who", "docs_index", {"path": S}, ["path"]),
    ]
    b, unbound = _bound(tools)
    t = b["topics_index"]
    assert (t.collection, t.action, t.params, t.key_param) == ("topics", "list", {}, None)
    assert unbound["index_status"].startswith("side_effect_outside")
    assert unbound["docs_index"].startswith("side_effect_outside")  # an input: indexing the path


# --------------------------------------------------------------------------- the real snapshot


@pytest.fixture(scope="module")
def snapshot() -> tuple[list[ToolSpec], list[InferredWorld]]:
    tools = load_snapshot_specs(ROOT / "tool_specs" / "crawled", ROOT / "tool_specs" / "servers.yaml")
    if not tools:
        pytest.skip("no crawled snapshot")
    return tools, infer_worlds(tools, TODAY)


def _fresh(f, rng: random.Random, state: dict[str, Any]) -> Any:
    if f.ref:
        return state[f.ref][0][next(c.key for c in WORLD[0].collections if c.name == f.ref)]
    if f.enum:
        return f.enum[-1]
    if f.type == "boolean":
        return True
    if f.type == "integer":
        return rng.randint(1, 12) if f.format == "quantity" else rng.randint(13, 400)
    if f.type == "number":
        return round(rng.uniform(1, 99), 2)
    if f.format == "date":
        return "2025-07-04"
    return f"fresh {f.name} {rng.randint(1000, 9999)}"


WORLD: list[World] = []


def _default(schema: dict[str, Any]) -> Any:
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    for s in schema.get("anyOf") or []:
        if s.get("type") != "null":
            return _default(s)
    return {"integer": 1, "number": 1.0, "boolean": False, "array": [], "object": {}}.get(schema.get("type"), "x")


def plan_call(world: World, b: ToolBinding, tool: ToolSpec, state: dict[str, Any], rng: random.Random):
    """A call the lead's blueprint planner would make: (arguments, the record it names or None)."""
    WORLD[:] = [world]
    c = world.collection(b.collection)
    fields = {f.name: f for f in c.fields}
    record = state[c.name][1]
    if b.action == "delete":  # a record no other record references (execute refuses the others)
        used = {r.get(f.name) for o in world.collections for f in o.fields if f.ref == c.name for r in state[o.name]}
        record = next((r for r in state[c.name] if r[c.key] not in used), record)
        if record[c.key] in used:  # every record is referenced: drop the ones that point at it, as a user would first
            for o in world.collections:
                for f in o.fields:
                    if f.ref == c.name:
                        state[o.name] = [r for r in state[o.name] if r.get(f.name) != record[c.key]]
    args: dict[str, Any] = {}
    if b.action in ("get", "update", "delete"):
        if b.key_param:
            args[b.key_param] = record[c.key]
        for p, f in b.match.items():
            args[p] = record[f]
    if b.action == "list":
        for p, f in b.params.items():
            args[p] = record[f]
        texts = [str(record[f.name]) for f in c.fields if f.type == "string" and not f.enum and record[f.name]]
        for p in b.search:
            args[p] = (texts[0] if texts else record[c.key]).split()[0]
        if b.limit_param:
            top = _bounds(tool.input_schema["properties"][b.limit_param]).get("maximum", 20)
            args[b.limit_param] = min(20, top)
    if b.action in ("create", "update"):
        for p, f in b.params.items():
            args[p] = _fresh(fields[f], rng, state)
    props = tool.input_schema.get("properties", {})
    for p in tool.input_schema.get("required", []):
        if p not in args and p in b.ignored:
            args[p] = _default(props[p])
    return args, record if b.action != "create" else None


@pytest.mark.parametrize(
    "server", ["apache-airflow", "arxiv", "ecommerce", "mcp-yahoo-finance", "reddit", "dbt", "notes-vault", "excel"]
)
def test_bound_tools_execute_on_seeded_worlds(snapshot, server):
    tools, inferred = snapshot
    by_id = {t.tool_id: t for t in tools}
    rng = random.Random(3)
    ran = 0
    for w in inferred:
        if server not in w.servers or w.world is None:
            continue
        assert world_problem(w.world) is None
        state = seed_state(w.world, seed=11)
        for tid, b in sorted(w.bindings.items()):
            tool = by_id[tid]
            props = set(tool.input_schema.get("properties", {}))
            accounted = set(b.params) | set(b.match) | set(b.search) | set(b.ignored)
            accounted |= {p for p in (b.key_param, b.limit_param) if p}
            assert props == accounted, (tool.name, props ^ accounted)
            args, record = plan_call(w.world, b, tool, state, rng)
            jsonschema.validate(args, tool.input_schema)
            run = execute(w.world, b, state, args)
            assert run.ok, (tool.name, args, run.error)
            c = w.world.collection(b.collection)
            if b.action == "get":
                assert run.result[c.key] == record[c.key]
            elif b.action == "list":
                assert record[c.key] in [r[c.key] for r in run.result[c.name]], (tool.name, args)
            elif b.action == "create":
                assert run.patch and run.patch[0]["op"] == "add"
            elif b.action == "delete":
                assert run.patch[0]["op"] == "remove"
            ran += 1
    assert ran >= 3


def test_every_bound_snapshot_tool_executes(snapshot):
    """Each bound tool of every inferred world: a schema-valid planned call succeeds."""
    tools, inferred = snapshot
    by_id = {t.tool_id: t for t in tools}
    rng = random.Random(5)
    failures = []
    for w in inferred:
        if w.world is None:
            continue
        assert world_problem(w.world) is None, w.servers
        assert len(w.world.collections) <= 6 and all(len(c.fields) <= 10 for c in w.world.collections)
        state = seed_state(w.world, seed=2)
        for tid, b in sorted(w.bindings.items()):
            tool = by_id[tid]
            args, record = plan_call(w.world, b, tool, state, rng)
            try:
                jsonschema.validate(args, tool.input_schema)
            except jsonschema.ValidationError as e:
                failures.append((w.servers, tool.name, "schema", e.message[:80]))
                continue
            run = execute(w.world, b, state, args)
            if b.action == "delete" and run.error and run.error[0] == "conflict":
                continue  # every record is still referenced: execute refuses, as a back end would
            if not run.ok:
                failures.append((w.servers, tool.name, run.error))
            elif b.action == "list" and record[w.world.collection(b.collection).key] not in [
                r[w.world.collection(b.collection).key] for r in run.result[b.collection]
            ]:
                failures.append((w.servers, tool.name, "list misses the record", args))
    assert not failures, "\n".join(map(str, failures))


COVERAGE_FLOOR = 0.52
SERVERS_FLOOR = 56


def test_snapshot_coverage_above_measured_floor(snapshot):
    tools, inferred = snapshot
    cov = binding_coverage(inferred, tools)
    assert cov["tools"] == len(tools) and cov["servers"] == len({t.server for t in tools})
    assert cov["bound_share"] >= COVERAGE_FLOOR, cov["bound_share"]
    assert cov["servers_with_world_3plus"] >= SERVERS_FLOOR
    assert sum(cov["unbound_reasons"].values()) == cov["tools"] - cov["bound"]
    # tools that are plainly not state: never bound
    names = {t.tool_id: (t.server, t.name) for t in tools}
    bound = {names[k] for w in inferred for k in w.bindings}
    assert ("calculator", "calculate") not in bound
    assert not {n for n in bound if n[0] == "mcp-gnu-units" and "convert" in n[1]}
