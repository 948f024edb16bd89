"""Crawled tools bound to a world by code: the executor's semantics for the parts of a real MCP
schema (a record named by several parameters, a text search, a result cap, parameters with no
effect) and blueprints planned over them, executed before use. The world and bindings are
written here by hand, so these tests stand apart from the inference (tests/test_infer.py)."""

from __future__ import annotations

import json

import pytest

from worldsmith.records import CollectionSpec, FieldSpec, ToolBinding, ToolSpec, World
from worldsmith.tasks.blueprint import BlueprintFailure, sample_blueprint
from worldsmith.worldmodel.execute import execute
from worldsmith.worldmodel.schema import derive_rules

ISSUES = CollectionSpec(
    name="issues",
    entity="issue",
    key="issue_id",
    id_prefix="iss",
    fields=[
        FieldSpec(name="owner", format="label"),
        FieldSpec(name="repo", format="label"),
        FieldSpec(name="number", type="integer"),
        FieldSpec(name="title", format="sentence"),
        FieldSpec(name="state", enum=["open", "closed"]),
    ],
    transitions={"state": {"open": ["closed"], "closed": ["open"]}},
)
WORLD = World(
    world_id="wld_git",
    domain_id="dom_git",
    domain="git hosting",
    category="software_applications",
    collections=[ISSUES],
    today="2026-03-02",
    source="crawled",
    servers=["github"],
)
WORLD = WORLD.model_copy(update={"rules": derive_rules(WORLD)})
STATE = {
    "issues": [
        {
            "issue_id": "iss-1",
            "owner": "acme",
            "repo": "api",
            "number": 7,
            "title": "Login does not work",
            "state": "open",
        },
        {
            "issue_id": "iss-2",
            "owner": "acme",
            "repo": "web",
            "number": 7,
            "title": "Package arrived late",
            "state": "open",
        },
        {
            "issue_id": "iss-3",
            "owner": "acme",
            "repo": "api",
            "number": 8,
            "title": "Wrong login banner",
            "state": "closed",
        },
    ]
}


def spec(name: str, props: dict, required: list[str], binding: ToolBinding) -> ToolSpec:
    schema = {"type": "object", "properties": props, "required": required}
    return ToolSpec(
        tool_id=ToolSpec.make_id(name, name, schema, None, "github"),
        name=name,
        description=name,
        input_schema=schema,
        source="mcp",
        server="github",
        binding=binding,
    )


S = {"type": "string"}
GET_ISSUE = spec(
    "get_issue",
    {"owner": S, "repo": S, "issue_number": {"type": "integer"}, "format": {"type": "string", "enum": ["md", "json"]}},
    ["owner", "repo", "issue_number", "format"],
    ToolBinding(
        world_id="wld_git",
        collection="issues",
        action="get",
        match={"owner": "owner", "repo": "repo", "issue_number": "number"},
        ignored={"format": "how the reply is rendered"},
    ),
)
SEARCH = spec(
    "search_issues",
    {"q": S, "per_page": {"type": "integer"}},
    ["q"],
    ToolBinding(world_id="wld_git", collection="issues", action="list", search=["q"], limit_param="per_page"),
)
CLOSE = spec(
    "update_issue",
    {
        "owner": S,
        "repo": S,
        "issue_number": {"type": "integer"},
        "state": {"type": "string", "enum": ["open", "closed"]},
    },
    ["owner", "repo", "issue_number", "state"],
    ToolBinding(
        world_id="wld_git",
        collection="issues",
        action="update",
        match={"owner": "owner", "repo": "repo", "issue_number": "number"},
        params={"state": "state"},
    ),
)


def test_a_record_named_by_several_parameters_together():
    out = execute(WORLD, GET_ISSUE.binding, STATE, {"owner": "acme", "repo": "web", "issue_number": 7, "format": "md"})
    assert out.ok and out.result["issue_id"] == "iss-2"
    # the same number in another repository is another issue; one that does not exist is not found
    assert (
        execute(WORLD, GET_ISSUE.binding, STATE, {"owner": "acme", "repo": "api", "issue_number": 7}).result["issue_id"]
        == "iss-1"
    )
    miss = execute(WORLD, GET_ISSUE.binding, STATE, {"owner": "acme", "repo": "web", "issue_number": 8})
    assert not miss.ok and miss.error[0] == "not_found" and "repo 'web'" in miss.error[1]
    upd = execute(WORLD, CLOSE.binding, STATE, {"owner": "acme", "repo": "api", "issue_number": 7, "state": "closed"})
    assert upd.ok and upd.patch == [{"op": "replace", "path": "/issues/0/state", "value": "closed"}]


def test_a_lookup_that_names_no_record_is_refused_not_answered_with_the_first():
    out = execute(WORLD, GET_ISSUE.binding, STATE, {"format": "md"})
    assert not out.ok and out.error == ("invalid_arguments", "name the issue by owner or repo or issue_number")


def test_search_matches_words_of_text_fields_and_the_limit_caps_the_list():
    out = execute(WORLD, SEARCH.binding, STATE, {"q": "LOGIN"})
    assert out.ok and [r["issue_id"] for r in out.result["issues"]] == ["iss-1", "iss-3"] and out.result["count"] == 2
    capped = execute(WORLD, SEARCH.binding, STATE, {"q": "login", "per_page": 1})
    assert [r["issue_id"] for r in capped.result["issues"]] == ["iss-1"] and capped.result["count"] == 2
    assert execute(WORLD, SEARCH.binding, STATE, {"q": "kettle"}).result == {"issues": [], "count": 0}


@pytest.mark.parametrize("seed", range(6))
def test_blueprints_over_crawled_bindings_execute(seed):
    tools = [GET_ISSUE, SEARCH, CLOSE]
    d = sample_blueprint(WORLD, tools, "single_call", seed)
    (step,) = d.steps
    b = step.tool.binding
    assert d.calls[0].ok
    if b.action == "get":  # named by owner, repo and number together, and the ignored format gets its first value
        assert set(step.arguments) == {"owner", "repo", "issue_number", "format"} and step.arguments["format"] == "md"
        record = next(
            r
            for r in d.initial["issues"]
            if r["number"] == step.arguments["issue_number"]
            and r["repo"] == step.arguments["repo"]
            and r["owner"] == step.arguments["owner"]
        )
        assert d.calls[0].result == record
        assert {"owner", "repo", "issue number"} <= set(d.facts)
    elif b.action == "list":  # the search word comes from a record the user means, and finds it
        word = step.arguments["q"]
        assert any(word in r["title"].lower() for r in d.calls[0].result["issues"])
        assert d.facts["q"] == word
    else:
        assert d.end_state != d.initial


def test_a_required_parameter_the_binding_cannot_fill_leaves_the_tool_out():
    odd = spec(
        "get_issue_raw",
        {"owner": S, "repo": S, "issue_number": {"type": "integer"}, "token": S},
        ["owner", "repo", "issue_number", "token"],
        ToolBinding(
            world_id="wld_git",
            collection="issues",
            action="get",
            match={"owner": "owner", "repo": "repo", "issue_number": "number"},
            ignored={"token": "authentication"},
        ),
    )
    with pytest.raises(BlueprintFailure):
        sample_blueprint(WORLD, [odd], "single_call", 1)


@pytest.mark.parametrize("seed", range(6))
def test_the_plain_request_names_the_record_as_the_tool_does(seed):
    """A user who knows an issue by its owner, repository and number says so; the request check
    (every fact the agent needs is in it) passes on the template's request."""
    from worldsmith.tasks.stage import request_problems

    d = sample_blueprint(WORLD, [GET_ISSUE, SEARCH, CLOSE], "single_call", seed)
    request = f"Hello, I would like to {d.goal}."
    assert request_problems(request, d) == [], (request, d.facts)
    if d.steps[0].tool.binding.match:
        a = d.steps[0].arguments
        assert f"owner {a['owner']}" in request and f"issue number {a['issue_number']}" in request


def test_a_crawled_world_saved_as_a_pack_loads_again_with_its_real_schemas(tmp_path):
    """`training data for your own tools`: a crawled server's inferred world, saved as a pack to
    edit by hand, loads again with each tool's real input schema and its binding, and its
    blueprints still execute."""
    from pathlib import Path

    from worldsmith.mcp.snapshot import load_snapshot_specs
    from worldsmith.worldmodel.infer import infer_worlds
    from worldsmith.worldmodel.packs import load_pack, save_pack

    root = Path(__file__).resolve().parents[1]
    snapshot = load_snapshot_specs(root / "tool_specs" / "crawled", root / "tool_specs" / "servers.yaml")
    inferred = next(i for i in infer_worlds(snapshot, "2026-03-02") if i.servers == ["arxiv"] and i.world)
    tools = [
        t.model_copy(update={"binding": inferred.bindings[t.tool_id]})
        for t in snapshot
        if t.tool_id in inferred.bindings
    ]
    assert len(tools) >= 3
    pack = load_pack(save_pack(inferred.world, tools, tmp_path / "arxiv"), today="2026-03-02")
    by_name = {t.name: t for t in pack.tools}
    assert set(by_name) == {t.name for t in tools}
    for t in tools:
        loaded = by_name[t.name]
        assert loaded.input_schema == t.input_schema  # the server's own schema, not one made from the binding
        ours = t.binding.model_dump(exclude={"world_id"})
        assert loaded.binding.model_dump(exclude={"world_id"}) == ours
    assert [c.model_dump() for c in pack.world.collections] == [c.model_dump() for c in inferred.world.collections]
    d = sample_blueprint(pack.world, pack.tools, "single_call", 3)
    assert d.calls and all(c.ok for c in d.calls)


# --------------------------------------------------------------------------- values a person would recognise

LIST_FILTERED = spec(
    "list_issues",
    {
        "owner": S,
        "repo": S,
        "state": {"type": "string", "enum": ["open", "closed"]},
        "title": S,
        "is_locked": {"type": "boolean"},
    },
    ["owner"],
    ToolBinding(
        world_id="wld_git",
        collection="issues",
        action="list",
        params={"owner": "owner", "repo": "repo", "state": "state", "title": "title", "is_locked": "locked"},
    ),
)
LOCKABLE = WORLD.model_copy(
    update={
        "collections": [
            ISSUES.model_copy(update={"fields": [*ISSUES.fields, FieldSpec(name="locked", type="boolean")]})
        ]
    }
)


@pytest.mark.parametrize("seed", range(12))
def test_a_list_call_uses_its_required_filters_and_at_most_one_optional_one_never_a_flag(seed):
    """A crawled search tool with many optional filters: the user narrows by what the tool needs
    and at most one more thing, and not by a yes/no flag ("whose is locked is True")."""
    d = sample_blueprint(LOCKABLE, [LIST_FILTERED], "single_call", seed)
    args = d.steps[0].arguments
    assert "owner" in args
    assert len(set(args) - {"owner"}) <= 1, args
    assert "is_locked" not in args
    assert set(d.facts) == {"owner", *(k.replace("_", " ") for k in args if k != "owner")}


@pytest.mark.parametrize("seed", range(6))
def test_a_lookup_does_not_ask_back_what_names_the_record(seed):
    d = sample_blueprint(WORLD, [GET_ISSUE], "single_call", seed)
    asked = " ".join(d.asked)
    assert not any(asked.startswith(f"{f} of") for f in ("owner", "repo", "number")), d.asked


def test_a_record_with_nothing_but_what_names_it_gives_no_lookup():
    """A crawled settlement keyed by its order and payment: every field is one the user names it by, so a look-up
    would ask back a value the request states ("the payment id of settlement stt-5605 (payment id pym-8004)")."""
    settlements = CollectionSpec(
        name="settlements",
        entity="settlement",
        key="settlement_id",
        id_prefix="stt",
        fields=[FieldSpec(name="order_id", format="code"), FieldSpec(name="payment_id", format="code")],
    )
    world = WORLD.model_copy(update={"collections": [settlements], "rules": []})
    get = spec(
        "settlement_get",
        {"settlement_id": S, "order_id": S, "payment_id": S},
        ["settlement_id", "order_id", "payment_id"],
        ToolBinding(
            world_id="wld_git",
            collection="settlements",
            action="get",
            key_param="settlement_id",
            match={"order_id": "order_id", "payment_id": "payment_id"},
        ),
    )
    for seed in range(4):
        with pytest.raises(BlueprintFailure):
            sample_blueprint(world, [get], "single_call", seed)
    # with a field the user does not name, the look-up asks for that one
    settlements.fields.append(FieldSpec(name="amount", type="number", format="money"))
    d = sample_blueprint(world, [get], "single_call", 0)
    assert [k.split(" of ")[0] for k in d.asked] == ["amount"], d.asked


def test_documented_example_values_seed_the_world_and_names_pick_a_kind_of_value():
    import random

    from worldsmith.worldmodel.infer import _examples
    from worldsmith.worldmodel.seed import named_value, seed_state, variant

    schema = {
        "type": "string",
        "description": "AWS region code (e.g., 'us-east-1', \"eu-west-1\"). Defaults to the profile's.",
    }
    assert _examples(schema) == ["us-east-1", "eu-west-1"]
    assert _examples({"type": "string", "description": "The arXiv id, e.g. 2401.12345."}) == ["2401.12345"]
    assert _examples({"type": "string", "description": "Issues like bugs, not features"}) == []  # a word, not a value
    # codetree's find_references: the example is of the results' paths, not of the symbol's name
    found = (
        'name of the symbol to search for; results include\nfile paths relative to the repo root (e.g., "src/main.py")'
    )
    assert _examples({"type": "string", "description": found}) == []
    assert _examples({"type": "string", "description": "Filter results by product (e.g. 'Grafana Loki')"}) == [
        "Grafana Loki"
    ]
    assert _examples({"type": "string", "default": "main", "examples": ["dev"]}) == ["dev", "main"]

    regions = CollectionSpec(
        name="instances",
        entity="instance",
        key="instance_id",
        id_prefix="ins",
        fields=[
            FieldSpec(name="region", examples=["us-east-1", "eu-west-1"]),
            FieldSpec(name="language"),
            FieldSpec(name="base_branch", format="label"),
            # codetree's symbols and notes vault's backlogs: a function, not a stock ticker; a priority, not a label
            FieldSpec(name="symbol_name", format="code"),
            FieldSpec(name="function_name", format="label"),
            FieldSpec(name="priority", format="text"),
        ],
    )
    world = WORLD.model_copy(update={"collections": [regions], "rules": []})
    rows = seed_state(world, seed=3, records=(6, 6))["instances"]
    assert {r["region"] for r in rows} <= {"us-east-1", "eu-west-1"}
    assert all(r["language"] in ("python", "typescript", "go", "rust", "java") for r in rows)
    assert all(r["base_branch"] in ("main", "develop", "release-2.4", "feature-login") for r in rows)
    code = ("parse_config", "UserService", "load_settings", "render_page", "retry_request")
    assert all(r["symbol_name"] in code and r["function_name"] in code for r in rows)
    assert all(r["priority"] in ("urgent", "high", "medium", "low") for r in rows)
    assert named_value(FieldSpec(name="misc"), random.Random(1)) is None
    assert variant("notes/meeting.md", 2) == "notes/meeting-2.md" and variant("main", 3) == "main-3"


def test_grounding_narrows_a_field_that_names_the_record_to_values_the_conversation_showed():
    """A crawled tool names its record by fields (owner, repo): under grounding the decoder may only
    write values the user's messages or the tool results showed, so "acme" but not "acme/api/x.json"."""
    from worldsmith.worldmodel.grounding import ground_tools, seen_values
    from worldsmith.worldmodel.toolset import ToolSet

    messages = [
        {"role": "system", "content": "You help with issues of owner zeta."},
        {"role": "user", "content": "Hi, what is the state of the issue in repo api of owner acme, number 7?"},
    ]
    shown = seen_values(messages)
    assert "acme" in shown and "api" in shown and "owner acme" in shown and "zeta" not in shown
    assert "7?" not in shown and "7" in shown  # edge punctuation off
    toolset = ToolSet.build([GET_ISSUE, SEARCH])
    (get, search) = ground_tools(toolset, messages, {WORLD.world_id: WORLD})
    props = get["function"]["parameters"]["properties"]
    assert props["owner"]["enum"] == props["repo"]["enum"] and set(props["owner"]["enum"]) <= set(shown)
    assert {"acme", "api"} <= set(props["owner"]["enum"])
    # a field's or the entity's name is not a value, nor is a name followed by one; nor a run of words that
    # starts or ends with "the", "Hi"
    assert not {"state", "issue", "number", "repo", "owner", "owner acme"} & set(props["owner"]["enum"])
    assert not {"Hi", "the issue", "state of the", "acme, number"} & set(shown)
    assert "enum" not in props["issue_number"]  # a number: not narrowed
    assert "enum" not in search["function"]["parameters"]["properties"]["q"]  # a search is free text
    # a tool result's strings are values too; before anything was said, a tool that needs a name is not offered
    after = [*messages, {"role": "tool", "tool_call_id": "c1", "content": '{"owner": "acme-labs", "repo": "web"}'}]
    assert "acme-labs" in seen_values(after) and "web" in seen_values(after)
    assert [t["function"]["name"] for t in ground_tools(toolset, [], {WORLD.world_id: WORLD})] == ["search_issues"]


# a crawled optional filter, as FastMCP writes `str | None` (for-oscal's `parent_doc_uuid`)
LIST_BY_OWNER = spec(
    "list_issues_of_owner",
    {"owner": {"anyOf": [S, {"type": "null"}], "default": None, "title": "Owner"}},
    [],
    ToolBinding(world_id="wld_git", collection="issues", action="list", params={"owner": "owner"}),
)


def test_a_narrowed_optional_parameter_is_one_of_the_values_and_nothing_else():
    """llama.cpp's grammar follows an `anyOf` and ignores an `enum` beside it: a default run sampled "wg-2391" for
    the "WG-2391" it was narrowed to, and 5 of 48 episodes ended on the schema error. The narrowed parameter is the
    enum alone (the engine's side: tests/test_engines.py)."""
    from worldsmith.worldmodel.grounding import ground_tools
    from worldsmith.worldmodel.toolset import ToolSet

    messages = [{"role": "user", "content": "Which issues does owner ACME-7 have?"}]
    (tool,) = ground_tools(ToolSet.build([LIST_BY_OWNER]), messages, {WORLD.world_id: WORLD})
    owner = tool["function"]["parameters"]["properties"]["owner"]
    assert "ACME-7" in owner["enum"] and owner["type"] == "string" and not {"anyOf", "oneOf"} & set(owner), owner
    assert owner["title"] == "Owner"  # what describes it stays
    # an integer key takes only the integers shown: none shown, a tool that needs one is not offered
    by_number = spec(
        "get_issue_by_id",
        {"issue_id": {"type": "integer"}},
        ["issue_id"],
        ToolBinding(world_id="wld_git", collection="issues", action="get", key_param="issue_id"),
    )
    toolset = ToolSet.build([by_number])
    assert ground_tools(toolset, [{"role": "user", "content": "Show issue iss-1."}], {WORLD.world_id: WORLD}) == []


def test_grounding_offers_a_tool_named_by_one_field_no_record_it_already_read():
    """A small model repeats a lookup that just succeeded, step after step: a tool that names its
    record by one field is not offered the value of a call that succeeded (as keys are not)."""
    from worldsmith.worldmodel.grounding import ground_tools
    from worldsmith.worldmodel.toolset import ToolSet

    by_title = spec(
        "get_issue_by_title",
        {"title": S},
        ["title"],
        ToolBinding(world_id="wld_git", collection="issues", action="get", match={"title": "title"}),
    )
    messages = [{"role": "user", "content": "What is the state of 'Wrong login banner' and 'Package arrived late'?"}]
    toolset = ToolSet.build([by_title])
    (tool,) = ground_tools(toolset, messages, {WORLD.world_id: WORLD})
    assert {"Wrong login banner", "Package arrived late"} <= set(
        tool["function"]["parameters"]["properties"]["title"]["enum"]
    )
    # SmolLM2, once the value it read was taken, wrote the next run of words: "team/nightly-tests and"
    said = [
        {
            "role": "user",
            "content": "Can you look up the item with fullname team/nightly-tests and tell me its "
            "config xml and folder depth? Thanks in advance, have a good one!",
        }
    ]
    (tool,) = ground_tools(toolset, said, {WORLD.world_id: WORLD}, {("get_issue_by_title", "match:team/nightly-tests")})
    left = tool["function"]["parameters"]["properties"]["title"]["enum"]
    assert not [v for v in left if v.lower().endswith((" and", " tell", " me")) or " and " in v], left
    done = {("get_issue_by_title", "match:wrong login banner")}
    (tool,) = ground_tools(toolset, messages, {WORLD.world_id: WORLD}, done)
    titles = tool["function"]["parameters"]["properties"]["title"]["enum"]
    assert "Wrong login banner" not in titles and "Package arrived late" in titles


def test_grounding_narrows_a_reference_that_names_the_record_and_a_filter_on_the_records_own_key():
    """Crawled arxiv: `get_paper_latex_section(paper_id, section_id)` names a section by its paper (a reference) and
    `search_paper_text(paper_id, query)` filters papers by their own key. Both take only keys the conversation
    showed: SmolLM2 wrote the tool description's example id ("2401.12345") into the filter."""
    from worldsmith.worldmodel.grounding import ground_tools
    from worldsmith.worldmodel.toolset import ToolSet

    papers = CollectionSpec(
        name="papers", entity="paper", key="paper_id", id_prefix="ppr", fields=[FieldSpec(name="title")]
    )
    sections = CollectionSpec(
        name="sections",
        entity="section",
        key="section_id",
        id_prefix="sct",
        fields=[FieldSpec(name="paper_id", format="code", ref="papers"), FieldSpec(name="heading")],
    )
    world = WORLD.model_copy(update={"world_id": "wld_arxiv", "collections": [papers, sections], "rules": []})
    get_section = spec(
        "get_paper_latex_section",
        {"paper_id": S, "section_id": S},
        ["paper_id", "section_id"],
        ToolBinding(
            world_id="wld_arxiv",
            collection="sections",
            action="get",
            key_param="section_id",
            match={"paper_id": "paper_id"},
        ),
    )
    search_text = spec(
        "search_paper_text",
        {"paper_id": S, "query": S},
        ["paper_id", "query"],
        ToolBinding(
            world_id="wld_arxiv", collection="papers", action="list", params={"paper_id": "paper_id"}, search=["query"]
        ),
    )
    messages = [{"role": "user", "content": "I need the heading of section sct-3203 (paper id ppr-5503), thanks."}]
    tools = ground_tools(ToolSet.build([get_section, search_text]), messages, {"wld_arxiv": world})
    props = {t["function"]["name"]: t["function"]["parameters"]["properties"] for t in tools}
    assert props["get_paper_latex_section"]["paper_id"]["enum"] == ["ppr-5503"]
    assert props["get_paper_latex_section"]["section_id"]["enum"] == ["sct-3203"]
    assert props["search_paper_text"]["paper_id"]["enum"] == ["ppr-5503"]
    assert "enum" not in props["search_paper_text"]["query"]
    # before any paper was named, neither tool can be called (its paper would be invented)
    nothing = [{"role": "user", "content": "What papers do you have?"}]
    assert ground_tools(ToolSet.build([get_section, search_text]), nothing, {"wld_arxiv": world}) == []


def test_the_values_a_reply_must_say_are_the_asked_fields_of_the_last_result():
    """grounding.asked_values: after a successful result, the values of the fields the user named (a plural too),
    not those the user wrote, nor any after an error or before a result."""
    from worldsmith.worldmodel.grounding import asked_values

    user = {"role": "user", "content": "I need the name for section sct-3203 (paper id ppr-5503), and its page counts."}
    section = {"section_id": "sct-3203", "paper_id": "ppr-5503", "name": "Related work", "page_count": 4, "x": "y"}
    result = {"role": "tool", "tool_call_id": "c1", "content": json.dumps(section)}
    assert asked_values([user, result]) == ["Related work", "4"]
    listed = {"sections": [section, {**section, "section_id": "sct-3204", "name": "Method"}], "count": 2}
    # ("counts" names the list's count too: one more value the reply may say)
    assert asked_values([user, {**result, "content": json.dumps(listed)}]) == ["Related work", "Method", "4", "2"]
    error = {**result, "content": json.dumps({"error": "not_found", "message": "no section 'sct-3203'"})}
    assert asked_values([user, error]) == [] and asked_values([user]) == []
    # a field the user does not name is not asked
    assert asked_values([{**user, "content": "Show me section sct-3203 of paper ppr-5503."}, result]) == []
    # "how many" asks a list's count only where asked for (benchmarks/reply_grammar.py tries it; the product does not)
    from worldsmith.worldmodel.grounding import asked_fields

    many = [
        {"role": "user", "content": "How many sections does paper ppr-5503 have?"},
        {**result, "content": json.dumps(listed)},
    ]
    assert asked_fields(many, count=True) == [("count", ["2"])] and asked_values(many) == []
    assert asked_fields([user, {**result, "content": json.dumps(listed)}]) == [
        ("name", ["Related work", "Method"]),
        ("page_count", ["4"]),
        ("count", ["2"]),
    ]


def test_the_tools_offered_are_those_whose_record_the_user_named():
    """grounding.named_tools: at every step, the tools whose collection the user's messages name (a plural too);
    none named: None (every tool stays). SmolLM2, asked for a crawled server's projects, called its get_symbols;
    with the record it was asked about read, it read another collection's record and answered about that."""
    from worldsmith.worldmodel.grounding import named_tools
    from worldsmith.worldmodel.toolset import ToolSet

    projects = CollectionSpec(
        name="projects", entity="project", key="project_id", id_prefix="prj", fields=[FieldSpec(name="path")]
    )
    symbols = CollectionSpec(
        name="symbols", entity="symbol", key="symbol_id", id_prefix="sym", fields=[FieldSpec(name="kind")]
    )
    world = WORLD.model_copy(update={"world_id": "wld_ts", "collections": [projects, symbols], "rules": []})
    list_projects = spec(
        "list_projects_tool", {}, [], ToolBinding(world_id="wld_ts", collection="projects", action="list")
    )
    get_symbols = spec(
        "get_symbols",
        {"kind": S},
        ["kind"],
        ToolBinding(world_id="wld_ts", collection="symbols", action="list", params={"kind": "kind"}),
    )
    toolset = ToolSet.build([list_projects, get_symbols])
    worlds = {"wld_ts": world}
    asked = {"role": "user", "content": "Hi! Could you find the projects and tell me their project ids?"}
    assert named_tools(toolset, [asked], worlds) == {"list_projects_tool"}
    both = {"role": "user", "content": "Which symbols does project prj-1401 have?"}
    assert named_tools(toolset, [both], worlds) == {"list_projects_tool", "get_symbols"}
    assert named_tools(toolset, [{"role": "user", "content": "What's the weather in Oslo?"}], worlds) is None
    # after a result too: a symbol the projects' result names is not offered (the user asked about projects)
    result = {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"projects": [{"project_id": "prj-1"}]})}
    assert named_tools(toolset, [asked, result], worlds) == {"list_projects_tool"}
    assert named_tools(toolset, [result], worlds) is None


@pytest.mark.parametrize("seed", range(6))
def test_a_change_to_a_record_named_by_its_parameters_is_confirmed_in_words_that_name_it(seed):
    """A crawled update or delete names its record by what the server takes (owner + repo + number, a file's
    path), not by the world's key; the user is still told what it did, naming those values (N7's `delete_file`
    kept a reply about another, failed call with no word on the file it deleted)."""
    from worldsmith.tasks.blueprint import rubric_from

    d = sample_blueprint(WORLD, [CLOSE], "single_call", seed)
    (step,) = d.steps
    said = [c for c in rubric_from(WORLD, d).criteria if c.kind == "answer"]
    assert len(said) == 1 and said[0].any_of
    assert {str(v) for v in step.arguments.values()} <= set(said[0].contains)


def test_a_read_the_bundle_makes_twice_alike_passes_by_either_tool():
    """Two crawled tools with the same binding (a server's get_echojs_top and get_echojs_latest) read the same
    records: the gold read's call criterion takes a call of either, with the gold arguments; a tool bound to another
    read does not count (N6: 12 episodes on such a world, the criterion named only the gold's tool)."""
    from types import SimpleNamespace

    from worldsmith.judge.rubric import check_call
    from worldsmith.records import ToolCall
    from worldsmith.tasks.blueprint import rubric_from

    twin = spec("find_issues", {"q": S}, ["q"], SEARCH.binding.model_copy(update={"limit_param": None}))
    other = spec("search_titles", {"q": S}, ["q"], SEARCH.binding.model_copy(update={"fixed": {"state": "open"}}))
    tools = [SEARCH, twin, other]
    d = sample_blueprint(WORLD, [SEARCH], "single_call", 2)
    (read,) = [c for c in rubric_from(WORLD, d, tools).criteria if c.kind == "call"]
    assert read.tool == "search_issues" and read.same_read == ["find_issues"]

    def called(name: str, arguments: dict) -> SimpleNamespace:  # what check_call reads of an episode: its calls
        call = ToolCall(turn=1, call_id="c1", name=name, tool=name, arguments=arguments, executor="code", ok=True)
        return SimpleNamespace(calls=[call])

    assert check_call(read, called("find_issues", read.arguments))[0]
    assert not check_call(read, called("search_titles", read.arguments))[0]
    assert not check_call(read, called("find_issues", {"q": "kettle"}))[0]


def test_a_two_request_task_never_asks_the_same_read_twice():
    """multi_call over a bundle with two tools bound to the very same read: P2's task asked "How many echojs are
    there in total? Also, could you tell me how many echojs there are?". The second intent is another read, or the
    draft is refused; and drafts are made (a test that passes on refusals alone proves nothing)."""
    from worldsmith.tasks.blueprint import BlueprintFailure

    twin = spec("find_issues", {"q": S}, ["q"], SEARCH.binding.model_copy(update={"limit_param": None}))
    made = 0
    for seed in range(8):
        try:
            d = sample_blueprint(WORLD, [SEARCH, twin], "multi_call", seed)
        except BlueprintFailure as failure:
            assert failure.reason == "no_second_call"
            continue
        made += 1
        first, second = d.steps
        assert d.intents[0] != d.intents[1], seed
        assert not (
            first.tool.binding.action == second.tool.binding.action == "list" and first.arguments == second.arguments
        )
    assert made >= 4
