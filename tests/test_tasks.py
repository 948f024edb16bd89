"""Agents, tasks and rubrics: validation of each kind of bad task, rubric assembly, and
generation against the real embedded server."""

from __future__ import annotations

import copy

import pytest

from worldsmith.judge.rubric import arguments_match, check_state
from worldsmith.records import Agent, Criterion, Rubric, Task, ToolSpec
from worldsmith.tasks.freeform import build_rubric, build_state, task_schema
from worldsmith.tasks.validate import validate_task


def tool(name, props, destructive=False, required=()):
    schema = {"type": "object", "properties": props, "required": list(required)}
    return ToolSpec(
        tool_id=ToolSpec.make_id(name, "d", schema, None, "s"),
        name=name,
        description=f"{name} tool",
        input_schema=schema,
        annotations={"destructiveHint": destructive},
        source="evolved",
        server="s",
        extra={"entities": ["orders"]},
    )


TOOLS = {
    t.name: t
    for t in [
        tool("get_order", {"order_id": {"type": "string"}}, required=["order_id"]),
        tool("cancel_order", {"order_id": {"type": "string"}, "reason": {"type": "string"}}, destructive=True),
        tool("delete_account", {"user": {"type": "string"}}, destructive=True),
    ]
}
STATE = {"orders": [{"id": "o1", "status": "paid", "total": 40}, {"id": "o2", "status": "shipped", "total": 15}]}


def task(criteria, difficulty="single_call", state=None):
    return Task(
        task_id="t",
        agent_id="a",
        difficulty=difficulty,
        user_persona={},
        user_goal={"request": "cancel o1"},
        initial_state=copy.deepcopy(STATE if state is None else state),
        rubric=Rubric(criteria=criteria),
    )


def crit(**kw):
    return Criterion(criterion_id=kw.pop("criterion_id", "c1"), description="x", **kw)


def test_a_good_task_passes():
    good = task(
        [
            crit(kind="call", tool="cancel_order", arguments={"order_id": "o1"}),
            crit(criterion_id="c2", kind="state", pointer="/orders/0/status", op="equals", value="cancelled"),
        ]
    )
    assert validate_task(good, TOOLS) is None


@pytest.mark.parametrize(
    ("criteria", "difficulty", "reason"),
    [
        ([crit(kind="call", tool="refund_order")], "single_call", "unknown_tool"),
        ([crit(kind="call", tool="get_order", arguments={"order_no": "o1"})], "single_call", "invalid_arguments"),
        ([crit(kind="call", tool="get_order", arguments={"order_id": 12})], "single_call", "invalid_arguments"),
        ([crit(kind="state", pointer="orders/0/status", op="equals", value="x")], "single_call", "bad_pointer"),
        ([crit(kind="state", pointer="/customers/0/name", op="equals", value="x")], "single_call", "bad_pointer"),
        ([crit(kind="state", pointer="/orders/9/status", op="equals", value="x")], "single_call", "bad_pointer"),
        ([crit(kind="state", pointer="/orders/0/refund", op="gte", value=10)], "single_call", "bad_pointer"),
        (
            [crit(kind="state", pointer="/orders/0/status", op="equals", value="paid")],
            "single_call",
            "already_satisfied",
        ),
        (
            [
                crit(kind="state", pointer="/orders/1/total", op="lte", value=20),
                crit(criterion_id="c2", kind="state", pointer="/orders/0/status", op="not_equals", value="cancelled"),
            ],
            "single_call",
            "already_satisfied",
        ),
        ([crit(kind="state", pointer="/orders/0/note", op="absent")], "single_call", "bad_pointer"),
        ([crit(kind="judge")], "single_call", "no_criteria"),
        ([], "single_call", "no_criteria"),
        ([crit(kind="call", tool="get_order", must=True)], "irrelevance", "irrelevance_calls"),
        # met by an agent that calls nothing: only a must-not call, or only a phrase to say
        # (judge hole: accepted before)
        ([crit(kind="call", tool="delete_account", must=False)], "single_call", "passes_by_doing_nothing"),
        ([crit(kind="answer", contains=["shipped"])], "single_call", "passes_by_doing_nothing"),
        # a refusal is met by leaving the world as it is: a state criterion that needs a change cannot be its rubric
        (
            [crit(kind="state", pointer="/orders/0/status", op="equals", value="cancelled")],
            "refusal",
            "nothing_changes_unmet",
        ),
    ],
)
def test_each_kind_of_bad_task_is_caught(criteria, difficulty, reason):
    problem = validate_task(task(criteria, difficulty), TOOLS)
    assert problem is not None and problem[0] == reason, problem


def test_a_task_whose_right_outcome_is_that_nothing_changes_is_valid():
    """Refusal and irrelevance tasks (judge hole: refused before as already_satisfied or no_criteria): nothing-changed
    guards are their state criteria, and an answer may say why."""
    guards = [
        crit(kind="state", collection="orders", key_field="id", op="unchanged_except", value=[]),
        crit(criterion_id="c2", kind="answer", contains=["shipped"]),
    ]
    assert validate_task(task(guards, "refusal"), TOOLS) is None
    assert validate_task(task(guards[:1], "irrelevance"), TOOLS) is None
    assert validate_task(task(guards, "single_call"), TOOLS)[0] == "passes_by_doing_nothing"


def test_oversize_state():
    big = {"orders": [{"id": str(i), "note": "x" * 100} for i in range(200)]}
    assert (
        validate_task(task([crit(kind="answer", contains=["ok"])], state=big), TOOLS, max_state_bytes=8192)[0]
        == "oversize_state"
    )


def test_state_checks_operators():
    def ok(pointer, op, value=None):
        return check_state(crit(kind="state", pointer=pointer, op=op, value=value), STATE)[0]

    assert ok("/orders/0/status", "equals", "PAID") and ok("/orders/0/total", "equals", "40")
    assert ok("/orders/0/status", "not_equals", "cancelled") and not ok("/orders/9/status", "not_equals", "x")
    assert ok("/orders/0", "exists") and ok("/orders/0/refund", "absent")
    assert (
        ok("/orders/0/status", "contains", "pai")
        and ok("/orders/0/total", "gte", 40)
        and not ok("/orders/1/total", "gte", 40)
    )
    assert ok("/orders/1/total", "lte", "15") and not ok("/orders/0/status", "lte", 3)
    assert arguments_match({"order_id": "O1"}, {"order_id": "o1", "reason": "late"})
    assert not arguments_match({"order_id": "o1"}, {"reason": "late"})


def test_rubric_assembly_adds_derived_checkable_criteria():
    agent = Agent(
        agent_id="a", bundle_id="b", system_prompt="s", tool_ids=[], domain="shop", style="x", strictness="strict"
    )
    data = {
        "expected_calls": [
            {"name": "get_order", "arguments": {"order_id": "o1"}},
            {"name": "cancel_order", "arguments": {"order_id": "o1"}},
        ],
        "state_checks": [{"pointer": "orders/0/status", "op": "equals", "value": "cancelled"}],
        "answer_must_mention": ["o1"],
        "judge_criteria": ["polite"],
    }
    rubric = build_rubric(data, agent, list(TOOLS.values()), "dependent_calls")
    kinds = [(c.kind, c.tool, c.must, c.order) for c in rubric.criteria]
    assert ("call", "get_order", True, 0) in kinds and ("call", "cancel_order", True, 1) in kinds
    assert ("call", "delete_account", False, None) in kinds  # destructive and never asked for
    assert ("call", "cancel_order", False, None) not in kinds  # asked for: not forbidden
    state = [c for c in rubric.criteria if c.kind == "state"][0]
    assert state.pointer == "/orders/0/status"
    assert rubric.expected_tool_pattern == ["get_order", "cancel_order"]
    irr = build_rubric({**data, "expected_calls": []}, agent, list(TOOLS.values()), "irrelevance")
    assert {c.tool for c in irr.criteria if c.kind == "call" and not c.must} == set(TOOLS)


def test_task_schema_limits_calls_to_the_bundle_and_difficulty():
    tools = list(TOOLS.values())
    single = task_schema(tools, ["orders"], "single_call")["properties"]["expected_calls"]
    assert (single["minItems"], single["maxItems"]) == (1, 1)
    names = {branch["properties"]["name"]["const"] for branch in single["items"]["anyOf"]}
    assert names == set(TOOLS)
    assert task_schema(tools, ["orders"], "irrelevance")["properties"]["expected_calls"]["maxItems"] == 0
    assert build_state(
        [
            {
                "collection": "orders",
                "records": [{"id": "o1", "fields": [{"key": "status", "value": "paid"}, {"key": "id", "value": "zz"}]}],
            }
        ]
    ) == {"orders": [{"id": "o1", "status": "paid"}]}


def _ctx(tmp_path, project_root, url, run_id, extra_body=None, **tasks_cfg):
    from conftest import llm_config

    from worldsmith.config import PipelineConfig
    from worldsmith.context import RunContext
    from worldsmith.llm import Prompts
    from worldsmith.store import RunStore

    llm = llm_config(url, max_tokens=900, temperature=0.0, frequency_penalty=0.5, extra_body=extra_body or {})
    llm.endpoints["local"].max_concurrency = 1  # one sequence at a time: batching cannot change the numbers
    cfg = PipelineConfig.model_validate({"run": {"seed": 11}, "llm": llm.model_dump(), "tasks": tasks_cfg})
    store = RunStore(tmp_path / "data", run_id)
    return RunContext(cfg=cfg, root=project_root, run_id=run_id, store=store, prompts=Prompts(project_root / "prompts"))


def _seed_agent(ctx):
    from worldsmith.records import Bundle

    ctx.store.append(list(TOOLS.values()))
    ids = [t.tool_id for t in TOOLS.values()]
    ctx.store.append(
        [
            Bundle(
                bundle_id="b1",
                tool_ids=ids[:2],
                distractor_ids=ids[2:],
                domain="online shop",
                sources=["evolved"] * 2,
                seed=1,
            )
        ]
    )


@pytest.mark.engine
def test_agents_and_tasks_against_the_embedded_server(tmp_path, project_root, llamacpp_server):
    import asyncio

    from worldsmith.agents.stage import make_agents
    from worldsmith.records import Rejection
    from worldsmith.tasks.stage import make_tasks

    ctx = _ctx(
        tmp_path,
        project_root,
        llamacpp_server.url,
        "gen",
        mode="freeform",  # the order tools are bound to no world: the model writes the tasks (blueprints: test_synth)
        per_agent=3,
        difficulties=["single_call", "multi_call", "irrelevance"],
    )
    _seed_agent(ctx)
    assert asyncio.run(make_agents(ctx))["agents"] == 1
    (agent,) = ctx.store.read(Agent)
    assert agent.system_prompt and agent.tool_ids == [t.tool_id for t in TOOLS.values()]
    counts = asyncio.run(make_tasks(ctx))
    tasks = ctx.store.read(Task)
    rejected = [r for r in ctx.store.read(Rejection) if r.kind == "task"]
    failed = [r for r in ctx.store.read(Rejection) if r.kind == "llm_output"]
    # every task is accounted for: kept and valid, rejected with a reason, or a failed call with its reason
    assert len(tasks) + len(rejected) + len(failed) == 3 == counts["new"] + counts["rejected"] + counts["failed_calls"]
    for t in tasks:
        assert validate_task(t, TOOLS) is None
        assert all(c.tool in TOOLS for c in t.rubric.criteria if c.kind == "call")
    for r in rejected:
        assert r.reason in {
            "unknown_tool",
            "invalid_arguments",
            "bad_pointer",
            "already_satisfied",
            "no_criteria",
            "irrelevance_calls",
            "oversize_state",
            "passes_by_doing_nothing",
        }
        assert r.detail and r.payload["task"]


@pytest.mark.engine
def test_task_generation_is_deterministic_at_temperature_zero(tmp_path, project_root, llamacpp_server):
    import asyncio

    from worldsmith.records import Rejection
    from worldsmith.tasks.stage import make_tasks

    outputs = []
    for run in ("a", "b"):
        # llama.cpp's prompt cache makes a repeated prompt's prefill differ numerically from a
        # cold one, enough to flip a greedy token: turn it off for bitwise-repeatable runs
        ctx = _ctx(
            tmp_path / run,
            project_root,
            llamacpp_server.url,
            run,
            extra_body={"cache_prompt": False},
            mode="freeform",
            per_agent=1,
            difficulties=["single_call"],
        )
        _seed_agent(ctx)
        ctx.store.append(
            [
                Agent(
                    agent_id="agt_fixed",
                    bundle_id="b1",
                    system_prompt="You help customers with orders.",
                    tool_ids=[t.tool_id for t in TOOLS.values()],
                    domain="online shop",
                    style="terse",
                    strictness="standard",
                    policies={"role": "You help customers with their orders."},
                )
            ]
        )
        asyncio.run(make_tasks(ctx))
        rows = [t.model_dump(exclude={"created_at"}) for t in ctx.store.read(Task)]
        rows += [r.model_dump(exclude={"created_at"}) for r in ctx.store.read(Rejection)]
        outputs.append(rows)
    assert outputs[0] and outputs[0] == outputs[1]
