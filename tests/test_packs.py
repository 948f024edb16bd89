"""Domain packs (worlds/<name>/), every folder found there: each loads and validates, brings its own tests
(worlds/<name>/test_<name>.py: each action's changes and refusals, the seeders' invariants), saves as a pack
and loads again; any world saves as a pack; bad input names its file and key; a run stores a pack's folder
relative to worlds.packs_dir; the executor and the seeding are handed the packs' code (no import cycle)."""

from __future__ import annotations

import ast
import inspect
import shutil
from pathlib import Path

import pytest

from worldsmith.records import Domain, ToolSpec
from worldsmith.tools.evolve import bound_spec
from worldsmith.worldmodel import execute as execute_mod
from worldsmith.worldmodel import packs as packs_mod
from worldsmith.worldmodel import seed as seed_mod
from worldsmith.worldmodel.bindings import plan_bindings
from worldsmith.worldmodel.execute import execute
from worldsmith.worldmodel.packs import (
    PackError,
    execute_call,
    load_pack,
    load_packs,
    locate,
    pack_folder,
    portable,
    run_operation,
    save_pack,
    seed_world,
)
from worldsmith.worldmodel.schema import derive_world, world_problem
from worldsmith.worldmodel.seed import seed_state

ROOT = Path(__file__).resolve().parent.parent
WORLDS = ROOT / "worlds"
TODAY = "2025-06-01"
# every pack folder: a new pack gets these tests, and its own folder's, with no list to edit
NAMES = sorted(p.name for p in WORLDS.iterdir() if (p / "world.yaml").is_file())


@pytest.fixture(scope="module")
def packs():
    return {p.name: p for p in load_packs(WORLDS, today=TODAY)}


def seeded(pack, seed: int = 3) -> dict:
    return seed_world(pack.world, seed, pack.records)


# --------------------------------------------------------------------------- every pack


def test_the_pack_folders_are_found():
    assert {"airline", "bank", "clinic", "helpdesk", "library", "shop"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_every_pack_loads_and_validates(packs, name):
    p = packs[name]
    w = p.world
    assert world_problem(w) is None
    assert (w.source, w.pack, w.today) == ("pack", name, TODAY)
    assert w.pack_dir == str((WORLDS / name).resolve())
    assert w.world_id == packs_mod.world_id_for_pack(name) and w.world_id.startswith("wld_")
    assert all(t.source == "pack" and t.domain == w.domain for t in p.tools)
    ops = [t for t in p.tools if t.binding.operation]
    assert all(t.binding.executed and t.extra["goal"] for t in ops)
    for t in ops:  # tight schemas: every parameter typed, the goal names them all
        assert t.input_schema["additionalProperties"] is False
        assert all(prop.get("type") for prop in t.input_schema["properties"].values())
        assert all("{" + param + "}" in t.extra["goal"] for param in t.input_schema["properties"])
    if not p.actions:  # a pack saved from a crawled server, before anyone wrote its actions
        return
    # a written pack: a small world with references, a policy, CRUD tools and at least two actions with rules
    assert 2 <= len(w.collections) <= 4
    assert any(f.ref for c in w.collections for f in c.fields), name
    assert len(w.policy) > 100
    assert 4 <= len(p.tools) <= 8
    assert {"get", "list", "custom"} <= {t.binding.action for t in p.tools}, name
    assert len(ops) >= 2
    checks = [r for r in w.rules if r.kind == "check"]
    assert checks and all(r.action == "custom" for r in checks)
    assert any(r.kind == "transition" for r in w.rules)


def test_loading_is_deterministic(packs):
    again = load_pack(WORLDS / "library", TODAY)
    assert [t.tool_id for t in again.tools] == [t.tool_id for t in packs["library"].tools]
    assert again.world.rules == packs["library"].world.rules


def test_load_packs_picks_and_refuses_unknown_names():
    assert [p.name for p in load_packs(WORLDS, names=["shop", "bank"], today=TODAY)] == ["bank", "shop"]
    with pytest.raises(PackError, match=rf"no pack 'zoo' \(there are: {', '.join(NAMES)}\)"):
        load_packs(WORLDS, names=["zoo"], today=TODAY)


@pytest.mark.parametrize("name", NAMES)
def test_every_pack_folder_tests_its_actions(packs, name):
    """A pack with actions brings the tests of each (worlds/<name>/test_*.py, collected by pytest from the folder):
    each action is called there by name."""
    tests = "".join(f.read_text() for f in sorted((WORLDS / name).glob("test_*.py")))
    untested = [a for a in packs[name].actions if f'"{a}"' not in tests]
    assert not untested, f"worlds/{name}: no test in the folder calls {untested}"


def test_seeding_is_deterministic_and_the_seeders_are_handed_in(packs):
    w = packs["airline"].world
    assert seed_world(w, 7, (4, 6)) == seed_world(w, 7, (4, 6))
    with pytest.raises(ValueError, match="pass finish="):  # a pack world seeded without its seeders is a bug
        seed_state(w, 7, (4, 6))
    calls = []
    finished = seed_state(w, 7, (4, 6), finish=lambda *a: calls.append(a) or a[1])
    assert len(calls) == 1 and finished != seed_world(w, 7, (4, 6))  # the airline's seeders change what code drew
    plain = w.model_copy(update={"pack": None, "pack_dir": None, "source": "llm"})
    assert seed_state(plain, 7) == seed_state(plain, 7, finish=lambda *a: pytest.fail("no pack: no seeders"))


def test_a_pack_action_runs_by_the_operation_handed_in(packs):
    p = packs["library"]
    s = seeded(p)
    op = next(t for t in p.tools if t.binding.operation == "renew_loan")
    args = {"loan_id": "ln-1", "days": 7}
    with pytest.raises(ValueError, match="pass operation="):
        execute(p.world, op.binding, s, args)
    assert execute_call(p.world, op.binding, s, args).error[0] == "not_found"
    assert execute(p.world, op.binding, s, args, operation=run_operation) == execute_call(p.world, op.binding, s, args)


def test_the_executor_and_the_seeding_never_import_the_packs():
    """packs.py imports execute.py and seed.py; an import back, even inside a function, is a cycle the layer
    contract cannot see."""
    for module in (execute_mod, seed_mod):
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import | ast.ImportFrom) else []
            assert not any("packs" in n for n in names), (module.__name__, ast.unparse(node))


def test_a_run_stores_a_packs_folder_relative_to_the_packs_dir(packs, tmp_path):
    w = packs["library"].world
    assert Path(w.pack_dir) == (WORLDS / "library").resolve()  # as loaded: absolute
    stored = portable(w, WORLDS)
    assert stored.pack_dir == "library" and stored.model_copy(update={"pack_dir": w.pack_dir}) == w
    with pytest.raises(PackError, match="relative to worlds.packs_dir; locate it first"):
        pack_folder(stored)
    # another checkout of the packs: the stored world runs the actions there
    copy = tmp_path / "elsewhere"
    shutil.copytree(WORLDS / "library", copy / "library")
    actions = copy / "library" / "actions.py"
    text = actions.read_text()
    head = "def renew_loan(db: Db, loan_id: str, days: int) -> dict:\n"
    assert head in text
    actions.write_text(text.replace(head, head + '    raise ActionError("moved", "the copy ran")\n'))
    moved = locate(stored, copy)
    assert pack_folder(moved) == (copy / "library").resolve()
    op = next(t for t in packs["library"].tools if t.binding.operation == "renew_loan")
    s = seeded(packs["library"])
    assert execute_call(moved, op.binding, s, {"loan_id": s["loans"][0]["loan_id"], "days": 7}).error[0] == "moved"
    assert seed_world(moved, 3, packs["library"].records) == s
    # a pack outside the packs folder, and a world stored before folders were relative, keep their absolute path
    assert portable(w, tmp_path).pack_dir == w.pack_dir
    assert locate(w, copy) == w


# --------------------------------------------------------------------------- save and load


def _comparable(tool: ToolSpec) -> tuple:
    b = tool.binding.model_dump(exclude={"world_id"})
    return tool.name, tool.description, tool.input_schema, tool.output_schema, tool.annotations, b


@pytest.mark.parametrize("name", NAMES)
def test_save_pack_round_trips_a_pack(packs, name, tmp_path):
    p = packs[name]
    folder = save_pack(p.world, p.tools, tmp_path / name)
    assert (folder / "actions.py").read_text() == (WORLDS / name / "actions.py").read_text()
    again = load_pack(folder, TODAY)
    assert again.world.collections == p.world.collections
    assert again.world.world_id == p.world.world_id  # the same name: the same world
    assert [(r.kind, r.collection, r.text) for r in again.world.rules] == [
        (r.kind, r.collection, r.text) for r in p.world.rules
    ]
    assert (again.world.policy, again.world.domain, again.world.description) == (
        p.world.policy,
        p.world.domain,
        p.world.description,
    )
    assert [_comparable(t) for t in again.tools] == [_comparable(t) for t in p.tools]
    s = seeded(again)
    op = next(t for t in again.tools if t.binding.operation)
    key = op.binding.key_param
    if key:  # the copied actions run from the new folder
        assert run_operation(again.world, op.binding, s, {key: "nope-1"}).error[0] in ("not_found", "invalid_value")


def test_any_world_saves_as_an_editable_pack(tmp_path):
    domain = Domain(
        domain_id="dom_x",
        category="Retail",
        name="Bike rentals",
        description="A bike shop that rents bikes to customers.",
        entities=["customer", "bike", "rental"],
    )
    world = derive_world(domain, TODAY)
    tools = [
        bound_spec(world, b, f"tool_{i}", f"Tool {i}.", request_id="r", named_by="code")
        for i, b in enumerate(plan_bindings(world, 6))
    ]
    custom_binding = tools[0].binding.model_copy(update={"action": "custom"})
    custom = ToolSpec(
        tool_id="tool_custom",
        name="extend_rental",
        description="Extend a rental by some days.",
        input_schema={"type": "object", "properties": {"rental_id": {"type": "string"}, "days": {"type": "integer"}}},
        source="evolved",
        binding=custom_binding,
    )
    folder = save_pack(world, [*tools, custom], tmp_path / "bikes")
    text = (folder / "world.yaml").read_text()
    assert "an @action named 'extend_rental' is written in actions.py" in text
    p = load_pack(folder, TODAY)
    assert p.world.collections == world.collections and p.world.source == "pack" and p.world.pack == "bikes"
    assert [_comparable(t) for t in p.tools[:-1]] == [_comparable(t) for t in tools]
    sim = p.tools[-1]
    assert (sim.name, sim.binding.action, sim.binding.executed) == ("extend_rental", "custom", False)
    assert sim.input_schema == custom.input_schema

    # edited by hand: a new value of an enum, then loaded again
    status = "rentals"
    edited = text.replace(
        "enum: [pending, confirmed, completed, cancelled]", "enum: [pending, confirmed, completed, cancelled, disputed]"
    )
    assert edited != text
    (folder / "world.yaml").write_text(edited)
    again = load_pack(folder, TODAY)
    assert "disputed" in next(f for f in again.world.collection(status).fields if f.name == "status").enum


# --------------------------------------------------------------------------- bad input


@pytest.fixture
def library_copy(tmp_path):
    folder = tmp_path / "library"
    shutil.copytree(WORLDS / "library", folder)
    return folder


def _edit(folder: Path, old: str, new: str) -> None:
    path = folder / "world.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "book_id: {ref: books}",
            "book_id: {ref: novels}",
            r"collections\.loans\.fields\.book_id\.ref: 'novels' is not a",
        ),
        (
            "{operation: renew_loan}",
            "{operation: renew_lease}",
            r"tools\[5\]\.operation: 'renew_lease' is not an @action",
        ),
        (
            "active: [overdue, returned]",
            "active: [overdue, lost]",
            r"transitions\.status\.active: \['lost'\] are not values",
        ),
        ("renewals: {type: integer", "renewals: {type: int", r"fields\.renewals\.type: 'int' is not string, integer"),
        ("checkout_date: date", "checkout_date: day", r"fields\.checkout_date\.format: 'day' is not one of"),
        (
            "title: {format: label, description: the book's title}",
            "title: {format: label, examples: Dune}",
            r"fields\.title\.examples: expected a list of 1 or more text values",
        ),
        (
            "{action: get, collection: books}",
            "{action: get, collection: novels}",
            r"tools\[1\]\.collection: expected one",
        ),
        (
            "{action: get, collection: books}",
            "{action: fetch, collection: books}",
            r"tools\[1\]\.action: expected one of",
        ),
        ("  - id: lib_renew\n", "  - id: lib_renew\n    when: always\n", r"rules\[0\]: unknown keys \['when'\]"),
        ("domain: Public library loans", "domain:", r"domain: expected the domain's name"),
    ],
)
def test_bad_pack_input_names_file_and_key(library_copy, old, new, message):
    _edit(library_copy, old, new)
    with pytest.raises(PackError, match=message) as err:
        load_pack(library_copy, TODAY)
    assert str(library_copy / "world.yaml") in str(err.value)


def test_bad_actions_module(library_copy):
    path = library_copy / "actions.py"
    path.write_text(
        path.read_text().replace(
            "def renew_loan(db: Db, loan_id: str, days: int)", "def renew_loan(db: Db, loan_id: str)"
        )
    )
    with pytest.raises(PackError, match=r"actions\.py: action renew_loan: the function takes \['loan_id'\]"):
        load_pack(library_copy, TODAY)
    path.write_text("raise RuntimeError('half written')\n")
    with pytest.raises(PackError, match=r"actions\.py: importing it failed: RuntimeError: half written"):
        load_pack(library_copy, TODAY)


def test_a_bug_in_an_action_is_raised(library_copy):
    path = library_copy / "actions.py"
    path.write_text(
        path.read_text().replace(
            'loan = db.get("loans", loan_id)\n    if loan["status"] != "active" or',
            'loan = db.get("loans", loan_id)\n    if loan["state"] != "active" or',
        )
    )
    p = load_pack(library_copy, TODAY)
    s = seeded(p)
    op = next(t for t in p.tools if t.binding.operation == "renew_loan")
    with pytest.raises(KeyError, match="state"):
        run_operation(p.world, op.binding, s, {"loan_id": s["loans"][0]["loan_id"], "days": 7})


def test_bundles_drawn_for_dependent_calls_hold_a_chain_where_the_world_has_one(packs):
    """A run with dependent_calls tasks drew bundles of 2-3 tools that rarely held a list and a get of one
    collection: 5 of 8 such tasks were refused (no_chain). With `partners` the draw completes a chain."""
    from worldsmith.bundles.graph import build_graph, chain_partners, sample_bundles
    from worldsmith.config import BundleConfig
    from worldsmith.worldmodel.bindings import chain_pairs

    tools = [t for p in packs.values() for t in p.tools]
    pairs = [(a.tool_id, b.tool_id) for p in packs.values() for a, b in chain_pairs(p.world, p.tools)]
    names = {t.tool_id: t.name for t in tools}
    assert ("get_order", "get_customer") in {(names[a], names[b]) for a, b in pairs}  # an order names its customer
    partners = chain_partners(pairs)
    cfg = BundleConfig(count=24, size_min=2, size_max=3, crawled_share=0.0, distractors=0)
    g = build_graph(tools)

    def chained(bundle) -> bool:
        return any(partners.get(a, set()) & set(bundle.tool_ids) for a in bundle.tool_ids)

    plain = sample_bundles(g, cfg, seed=5)
    assert sum(map(chained, plain)) < len(plain)  # a walk alone often takes no chain
    drawn = sample_bundles(g, cfg, seed=5, partners=partners)
    assert len(drawn) == len(plain) and all(map(chained, drawn))
    assert all(cfg.size_min <= len(b.tool_ids) <= cfg.size_max for b in drawn)
    by_id = {t.tool_id: t for t in tools}
    assert all(len({by_id[t].binding.world_id for t in b.tool_ids}) == 1 for b in drawn)  # still one world each


def test_a_packs_folder_that_is_not_there_is_a_clear_error(tmp_path):
    """worlds.packs [all] with a packs_dir that does not exist (a relative path read from another folder) names
    the key, instead of a run that quietly goes without packs (test_synth's copied config once did)."""
    from worldsmith.worldmodel import catalog

    with pytest.raises(PackError, match=r"worlds.packs_dir: no folder .*nope"):
        catalog.packs(tmp_path / "nope", ["all"], "2026-03-02")
    assert catalog.packs(tmp_path / "nope", [], "2026-03-02") == []
    assert {p.name for p in catalog.packs(Path(__file__).parent.parent / "worlds", ["all"], "2026-03-02")} >= {"bank"}
