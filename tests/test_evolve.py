"""Evolution against the real embedded server: valid specs with lineage; resumable."""

from __future__ import annotations

import pytest

from conftest import llm_config
from worldsmith.config import PipelineConfig
from worldsmith.context import RunContext
from worldsmith.llm import Prompts
from worldsmith.records import Domain, Rejection, ToolSpec
from worldsmith.tools.evolve import design_to_spec, load_taxonomy, snake
from worldsmith.toolspec import check_spec, to_openai_tool
from worldsmith.tools.stage import run as run_tools
from worldsmith.store import RunStore


def test_snake_names():
    assert snake("Cancel Order!") == "cancel_order"
    assert snake("2fa reset") == "t_2fa_reset"
    assert snake("***") == "unnamed"


def test_design_to_spec_builds_valid_schemas_and_annotations():
    domain = Domain(domain_id="d", category="travel", name="hotel booking", description="Hotels.", entities=["bookings", "rooms"])
    design = {
        "name": "Cancel Booking", "description": "Cancel a hotel booking that has not started yet.",
        "parameters": [{"name": "booking id", "type": "string", "description": "the booking", "required": True},
                       {"name": "reason", "type": "array", "description": "why", "required": False},
                       {"name": "booking_id", "type": "integer", "description": "dup", "required": False}],
        "outputs": [{"name": "status", "type": "string", "description": "new status"}],
        "read_only": True, "destructive": True, "reads": ["bookings"], "writes": ["bookings"],
    }  # fmt: skip
    spec = design_to_spec(design, category="travel", domain=domain, request_id="r", parent_id="p", operator="specialize")
    assert check_spec(spec) is None
    assert spec.name == "cancel_booking"
    assert spec.input_schema["required"] == ["booking_id"] and spec.input_schema["properties"]["reason"]["items"] == {"type": "string"}
    # it writes bookings, so it is not read-only, whatever the model said
    assert spec.annotations["readOnlyHint"] is False and spec.annotations["destructiveHint"] is True
    assert (spec.parent_id, spec.operator, spec.source) == ("p", "specialize", "evolved")
    assert to_openai_tool(spec)["function"]["name"] == "cancel_booking"


def test_taxonomy_loads(project_root):
    cats = load_taxonomy(project_root / "tool_specs" / "taxonomy.yaml")
    assert len(cats) >= 8 and {"travel", "e_commerce", "healthcare", "robot_control"} <= {c["name"] for c in cats}


@pytest.mark.engine
def test_evolution_against_the_embedded_server(tmp_path, project_root, llamacpp_server):
    cfg = PipelineConfig.model_validate({
        "run": {"seed": 7},
        "llm": llm_config(llamacpp_server.url, max_tokens=700, temperature=0.8, frequency_penalty=0.5).model_dump(),
        "tools": {"snapshot_dir": str(tmp_path / "no-snapshot"), "taxonomy_file": str(project_root / "tool_specs/taxonomy.yaml"),
                  "evolve": {"categories": 1, "domains_per_category": 2, "tools_per_domain": 2, "evolutions_per_tool": 1}},
    })  # fmt: skip
    store = RunStore(tmp_path / "data", "evo")
    ctx = RunContext(cfg=cfg, root=project_root, run_id="evo", store=store, prompts=Prompts(project_root / "prompts"))
    counts = run_tools(ctx)
    tools = store.read(ToolSpec)
    domains = store.read(Domain)
    assert domains and all(d.category == "financial_trading" for d in domains)
    assert counts["tools"] + counts["evolved"] == len(tools) >= 1
    for t in tools:
        assert check_spec(t) is None
        assert t.source == "evolved" and t.domain in {d.name for d in domains} and t.category == "financial_trading"
    by_id = {t.tool_id: t for t in tools}
    for t in tools:
        if t.parent_id:
            assert t.parent_id in by_id and t.operator in cfg.tools.evolve.operators
    # every failed call is recorded with its reason, not dropped
    failed_calls = store.read(Rejection)
    assert counts["failed_calls"] == sum(1 for r in failed_calls if r.kind == "llm_output")
    # a re-run asks the model again only for the calls that failed (and for the evolutions
    # of tools those calls now yield): nothing answered is asked twice
    calls_before = ctx.usage.by_role["tool_evolver"].calls
    base_before = sum(1 for t in tools if t.parent_id is None)
    again = run_tools(ctx)
    retried = ctx.usage.by_role["tool_evolver"].calls - calls_before
    base_after = sum(1 for t in store.read(ToolSpec) if t.parent_id is None)
    new_domains = len(store.read(Domain)) - len(domains)
    evo = cfg.tools.evolve
    assert retried <= counts["failed_calls"] + new_domains * evo.tools_per_domain + (base_after - base_before) * evo.evolutions_per_tool
    if counts["failed_calls"] == 0:
        assert retried == 0
    assert again["tools_total"] >= len(tools)
