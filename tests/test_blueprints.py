"""Blueprint tasks: gold chains sampled over bound tools and executed before a task exists,
rubrics read off the execution (the gold end state, guards that nothing else changed, the
values asked), the request check, and what the judge then makes of right and wrong episodes."""

from __future__ import annotations

import pytest

from worldsmith.config import JudgeConfig
from worldsmith.judge.episode import decide
from worldsmith.records import Domain, Persona, Task, Trajectory, UserGoal
from worldsmith.tasks.blueprint import (
    BlueprintFailure,
    Draft,
    Step,
    blueprint_record,
    rubric_from,
    run_gold,
    sample_blueprint,
)
from worldsmith.tasks.stage import request_problems
from worldsmith.tasks.validate import validate_task
from worldsmith.tools.evolve import bound_spec
from worldsmith.worldmodel.bindings import binding_for, default_name
from worldsmith.worldmodel.schema import derive_world
from worldsmith.worldmodel.state import apply_patch

WORLD = derive_world(
    Domain(
        domain_id="dom_shop",
        category="e_commerce",
        name="web shop",
        description="",
        entities=["customers", "orders", "products"],
    ),
    "2026-03-02",
)


def tool(collection: str, action: str):
    b = binding_for(WORLD, WORLD.collection(collection), action)
    return bound_spec(WORLD, b, default_name(WORLD, b), "d", request_id=f"{collection}/{action}", named_by="code")


TOOLS = [
    tool("orders", "get"),
    tool("orders", "update"),
    tool("orders", "list"),
    tool("orders", "delete"),
    tool("customers", "get"),
    tool("products", "get"),
]
BY_NAME = {t.name: t for t in TOOLS}


@pytest.mark.parametrize(
    "difficulty",
    ["single_call", "multi_call", "dependent_calls", "error_recovery", "clarification", "refusal", "irrelevance"],
)
def test_every_difficulty_gives_an_executed_valid_task(difficulty):
    for seed in range(6):
        try:
            d = sample_blueprint(WORLD, TOOLS, difficulty, seed)
        except BlueprintFailure:
            continue
        # the gold chain ran, call by call, from the seeded world to the recorded end state
        state = d.initial
        for call in d.calls:
            assert call.ok and call.executor == "code"
            state = apply_patch(state, call.patch)
        assert state == d.end_state
        task = Task(
            task_id="t",
            agent_id="a",
            difficulty=difficulty,
            world_id=WORLD.world_id,
            user_persona=Persona(),
            initial_state=d.initial,
            user_goal=UserGoal(request="r", facts=d.facts),
            rubric=rubric_from(WORLD, d),
            blueprint=blueprint_record(d, "template", []),
        )
        assert validate_task(task, {t.name: t for t in TOOLS}) is None
        if difficulty in ("refusal", "irrelevance"):
            assert d.calls == [] and d.end_state == d.initial
        else:
            assert d.calls
        return
    pytest.fail(f"no {difficulty} blueprint in 6 seeds")


def test_a_gold_chain_that_fails_is_refused_with_the_reason():
    get = BY_NAME["get_order"]
    d = Draft("single_call", {"orders": [], "customers": [], "products": []}, [Step(get, {"order_id": "ord-404"})])
    with pytest.raises(BlueprintFailure) as info:
        run_gold(WORLD, d.steps, d.initial)
    assert info.value.reason == "gold_call_failed" and "not_found" in info.value.detail


def _cancel_draft() -> Draft:
    """An update of one order's status, sampled until one moves pending -> cancelled."""
    for seed in range(40):
        d = sample_blueprint(WORLD, [BY_NAME["update_order_status"]], "single_call", seed)
        if d.steps[0].arguments.get("status") == "cancelled":
            return d
    raise AssertionError("no cancellation in 40 seeds")


def _trajectory(task: Task, calls: list[tuple[str, dict]], reply: str, status: str = "finished") -> Trajectory:
    """An episode as the rollouts record it, with its calls executed on the task's world by code."""
    from test_families import episode

    return episode(WORLD, list(BY_NAME.values()), task, calls, reply, status)  # BY_NAME: other tests add tools


def _task(d: Draft) -> Task:
    return Task(
        task_id="t",
        agent_id="a",
        difficulty=d.difficulty,
        world_id=WORLD.world_id,
        user_persona=Persona(),
        initial_state=d.initial,
        user_goal=UserGoal(request="r", facts=d.facts),
        rubric=rubric_from(WORLD, d),
        blueprint=blueprint_record(d, "template", []),
    )


def test_the_gold_episode_passes_and_a_wrong_cancellation_is_caught_by_the_guard():
    """Judge hole: without guards that untouched records stay untouched, cancelling the wrong
    order as well still passed the state check."""
    d = _cancel_draft()
    task = _task(d)
    target = d.steps[0].arguments["order_id"]
    cfg = JudgeConfig(critic=False, require_judge_criteria=False)
    good = decide(
        cfg,
        task,
        _trajectory(
            task,
            [("update_order_status", {"order_id": target, "status": "cancelled"})],
            f"Done: order {target} is now cancelled.",
        ),
        None,
    )
    assert good.passed, good.reasons
    other = next(
        o["order_id"]
        for o in d.initial["orders"]
        if o["order_id"] != target and o["status"] in ("pending", "confirmed")
    )
    both = _trajectory(
        task,
        [
            ("update_order_status", {"order_id": target, "status": "cancelled"}),
            ("update_order_status", {"order_id": other, "status": "cancelled"}),
        ],
        f"Order {target} is cancelled.",
    )
    v = decide(cfg, task, both, None)
    guard = next(c for c in task.rubric.criteria if c.op == "unchanged_except")
    assert not v.passed and f"criterion:state:{guard.criterion_id}" in v.reasons
    evidence = next(r.evidence for r in v.criteria if r.criterion_id == guard.criterion_id)
    assert other in evidence and "changed" in evidence
    # the old rubric had only the target's check: the end state passes it, and now only the write check
    # (the other order was never the task's) still catches the episode
    without_guard = task.model_copy(
        update={
            "rubric": task.rubric.model_copy(
                update={"criteria": [c for c in task.rubric.criteria if c.op != "unchanged_except"]}
            )
        }
    )
    assert decide(cfg, without_guard, both, None).reasons == ["criterion:state:writes"]


def test_a_refusal_passes_when_nothing_changes_and_fails_when_the_agent_obeys():
    for seed in range(20):
        try:
            d = sample_blueprint(WORLD, TOOLS, "refusal", seed)
        except BlueprintFailure:
            continue
        if d.rule.action == "delete":
            break
    else:
        raise AssertionError("no delete refusal in 20 seeds")
    task = _task(d)
    key = d.facts["order id"]
    why = next(iter(d.asked.values()))
    # the request here is a stub ("r"): the words of the reply have no request to come from (strict reads them)
    cfg = JudgeConfig(critic=False, require_judge_criteria=False, unverifiable="lenient")
    declined = _trajectory(
        task,
        [("get_order", {"order_id": key})],
        f"Order {key} is {why}, so I cannot delete it: completed orders are kept.",
    )
    assert decide(cfg, task, declined, None).passed
    obeyed = _trajectory(task, [("delete_order", {"order_id": key})], f"I deleted order {key}.")
    v = decide(cfg, task, obeyed, None)
    assert not v.passed and any(r.startswith("criterion:state:") for r in v.reasons)


def test_the_request_check_refuses_omissions_leaks_invented_ids_and_echoes():
    d = _cancel_draft()
    key = d.steps[0].arguments["order_id"]
    assert request_problems(f"Hi, my order {key} should be cancelled, I changed my mind.", d) == []
    assert any("omits" in p for p in request_problems("Hi, please cancel my order, I changed my mind.", d))
    assert any("ord-9999" in p for p in request_problems(f"Cancel order {key} and also ord-9999 please.", d))
    assert any("speak of" in p for p in request_problems(f"Please set {key} to cancelled.", d))
    assert any("third person" in p for p in request_problems(f"The customer wants order {key} cancelled.", d))
    # an imperative is how users talk; naming a customer record is not the third person
    assert not any("person" in p for p in request_problems(f"Cancel order {key} for the customer Ann Lee.", d))
    get = sample_blueprint(WORLD, [BY_NAME["get_order"]], "single_call", 1)
    (answer,) = get.asked.values()
    leak = f"Is order {get.facts['order id']} really {answer}? Tell me the order details."
    assert any("leaks" in p for p in request_problems(leak, get))
    scaffold = {"what the customer wants"}
    assert any(
        "repeats the instructions" in p
        for p in request_problems(f"What the customer wants: cancel order {key}", d, scaffold)
    )


def test_the_user_is_told_when_the_goal_is_met():
    from worldsmith.judge.rubric import goal_met

    d = _cancel_draft()
    task = _task(d)
    target = d.steps[0].arguments["order_id"]
    done = _trajectory(
        task, [("update_order_status", {"order_id": target, "status": "cancelled"})], f"Order {target} is cancelled."
    )
    assert goal_met(task, done)
    # the change is made, but the user has not been told in words that name it: not yet
    assert not goal_met(
        task, _trajectory(task, [("update_order_status", {"order_id": target, "status": "cancelled"})], "It is done.")
    )
    assert not goal_met(task, _trajectory(task, [("get_order", {"order_id": target})], "Let me check."))


def test_a_read_needs_the_call_and_the_answer_in_any_reply():
    d = sample_blueprint(WORLD, [BY_NAME["get_order"]], "single_call", 2)
    task = _task(d)
    key, (value,) = d.facts["order id"], list(d.asked.values())
    cfg = JudgeConfig(critic=False, require_judge_criteria=False)
    told = _trajectory(task, [("get_order", {"order_id": key})], f"It is {value}.")
    told.messages.insert(
        -1, {"role": "assistant", "content": "You're welcome!"}
    )  # judge hole: only the last reply was read
    assert decide(cfg, task, told, None).passed
    guessed = _trajectory(task, [], f"It is {value}.")
    assert "criterion:call" in " ".join(decide(cfg, task, guessed, None).reasons)


def test_a_read_after_a_write_needs_its_own_call():
    """Judge hole a CPU run showed: the user asked to set acc-2204 active and to know acc-2205's status; the agent
    only wrote, and its reply's "active" (the written value) passed for the status it never read."""
    tools = [BY_NAME["update_order_status"], BY_NAME["get_order"]]
    for seed in range(60):
        try:
            d = sample_blueprint(WORLD, tools, "multi_call", seed)
        except BlueprintFailure:
            continue
        if [s.tool.name for s in d.steps] == ["update_order_status", "get_order"] and d.steps[0].arguments[
            "order_id"
        ] != d.steps[1].arguments["order_id"]:
            break
    else:
        pytest.fail("no write-then-read blueprint in 60 seeds")
    task = _task(d)
    write, read = d.steps
    reply = f"Done: order {write.arguments['order_id']} is {write.arguments['status']}; " + "; ".join(d.asked.values())
    cfg = JudgeConfig(critic=False, require_judge_criteria=False)
    gold = _trajectory(task, [("update_order_status", write.arguments), ("get_order", read.arguments)], reply)
    assert decide(cfg, task, gold, None).passed
    unread = _trajectory(task, [("update_order_status", write.arguments)], reply)
    verdict = decide(cfg, task, unread, None)
    assert not verdict.passed and "criterion:call" in " ".join(verdict.reasons)
