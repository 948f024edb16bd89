"""The request grammar (prompts/user_request.yaml, tasks/requests.py): a blueprint task's opening
message worded by a seeded draw. Every worded request must pass the request check (each fact the
agent needs, verbatim; nothing the user cannot know), on the domain packs and crawled worlds and
for every difficulty; the same seed gives the same request, and seeds give many surface forms."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from worldsmith.llm.prompts import Prompts
from worldsmith.records import Persona
from worldsmith.tasks.blueprint import BlueprintFailure, sample_blueprint
from worldsmith.tasks.requests import GrammarError, check_grammar, grammar_request
from worldsmith.tasks.stage import request_problems, shingles
from worldsmith.worldmodel.packs import load_packs

ROOT = Path(__file__).resolve().parents[1]
DIFFICULTIES = ["single_call", "multi_call", "dependent_calls", "refusal", "irrelevance", "clarification"]
STYLES = ["brief", "casual", "formal", "chatty"]


@pytest.fixture(scope="module")
def grammar():
    g = Prompts(ROOT / "prompts").data("user_request")
    check_grammar(g)
    return g


@pytest.fixture(scope="module")
def drafts():
    """Executed blueprints of every difficulty on the six packs and on crawled worlds."""
    from worldsmith.mcp.snapshot import load_snapshot_specs
    from worldsmith.worldmodel import catalog

    items = [(p.world, p.tools) for p in load_packs(ROOT / "worlds", None, today="2026-03-02")]
    specs = load_snapshot_specs(ROOT / "tool_specs/crawled", ROOT / "tool_specs/servers.yaml")
    by_id = {t.tool_id: t for t in specs}
    for iw in random.Random(1).sample(catalog.crawled(specs, "2026-03-02", 3), 12):
        items.append((iw.world, [by_id[t].model_copy(update={"binding": b}) for t, b in iw.bindings.items()]))
    out = []
    for i, (world, tools) in enumerate(items):
        for difficulty in DIFFICULTIES:
            for seed in (i * 7 + 1, i * 7 + 2):
                try:
                    out.append(sample_blueprint(world, tools, difficulty, seed))
                except BlueprintFailure:
                    continue
    assert len(out) >= 80 and {d.difficulty for d in out} == set(DIFFICULTIES)
    return out


def test_every_worded_request_passes_the_request_check(grammar, drafts):
    refused = []
    for i, d in enumerate(drafts):
        assert d.intents, (d.difficulty, d.goal)
        request = grammar_request(grammar, d, Persona(communication=STYLES[i % 4]), seed=i)
        assert request, (d.difficulty, d.intents)
        problems = request_problems(request, d)
        if problems:
            refused.append((request, problems))
    assert not refused, refused[:3]


def test_the_same_seed_gives_the_same_request_and_seeds_give_many_forms(grammar, drafts):
    d = next(x for x in drafts if x.intents[0]["kind"] == "get")
    persona = Persona(communication="casual")
    assert grammar_request(grammar, d, persona, 5) == grammar_request(grammar, d, persona, 5)
    forms = {grammar_request(grammar, d, persona, s) for s in range(40)}
    assert len(forms) >= 10, forms
    # across tasks: far fewer shared 4-word runs than one fixed template gives
    requests = [grammar_request(grammar, x, Persona(communication=STYLES[i % 4]), i) for i, x in enumerate(drafts)]
    plain = [f"Hello, I would like to {x.goal}." for x in drafts]

    def shared(texts):
        seen: dict[str, int] = {}
        for t in texts:
            for s in shingles(t):
                seen[s] = seen.get(s, 0) + 1
        return sum(1 for n in seen.values() if n > len(texts) // 4)

    assert shared(requests) < shared(plain), (shared(requests), shared(plain))


def test_a_form_that_drops_a_fact_is_refused_by_the_check(grammar, drafts):
    """Broken on purpose: a form without the record's name. The check refuses it (and the stage
    then falls back to the plain request)."""
    broken = {**grammar, "intents": {**grammar["intents"], "get": ["What is its {wants}?"]}}
    d = next(x for x in drafts if x.intents[0]["kind"] == "get" and x.difficulty == "single_call")
    request = grammar_request(broken, d, Persona(), 1)
    assert any(p.startswith("omits") for p in request_problems(request, d)), request


def test_an_intent_without_forms_gives_none_and_a_bad_grammar_is_refused(grammar, drafts):
    d = drafts[0]
    empty = {**grammar, "intents": {}}
    assert grammar_request(empty, d, Persona(), 1) is None
    with pytest.raises(GrammarError, match="missing section 'joiners'"):
        check_grammar({k: v for k, v in grammar.items() if k != "joiners"})
    with pytest.raises(GrammarError, match=r"intents\.get: expected a list of forms"):
        check_grammar({**grammar, "intents": {**grammar["intents"], "get": "What is it?"}})


def test_the_persona_sets_the_opener(grammar, drafts):
    d = drafts[0]
    formal = {grammar_request(grammar, d, Persona(communication="formal"), s).split(",")[0] for s in range(30)}
    assert formal <= {"Hello", "Good morning", "Good afternoon", "Dear support team"}, formal
