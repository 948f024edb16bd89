"""The judge on hand-made trajectories (scripted episodes of the order world): each
deterministic criterion kind, the hack checks, fault recovery and the keep/drop policy."""

from __future__ import annotations

import asyncio

import pytest
from scripted_worlds import cancel_task
from test_rollouts import CANCEL_PATCH, PROMPTS, ScriptedClient, cfg, episode, run, user_says

from worldsmith.config import JudgeConfig
from worldsmith.judge.checks import fault_recovery, find_hacks
from worldsmith.judge.critic import critic_schema, critique, rubrics_for
from worldsmith.judge.episode import decide
from worldsmith.judge.rubric import check_criterion
from worldsmith.judge.stage import agreement
from worldsmith.records import Criterion, CriticReport, Verdict
from worldsmith.vocab import FAULT_KINDS

GOOD_AGENT = [
    [("get_order", {"order_id": "o-1001"})],
    [("cancel_order", {"order_id": "o-1001"})],
    "Order o-1001 (blue kettle) is cancelled.",
]
GOOD_SIM = [
    {"result": {"id": "o-1001", "status": "open", "item": "blue kettle"}, "patch": []},
    {"result": {"status": "cancelled"}, "patch": CANCEL_PATCH},
]


# the keep policy with the critic deciding (the GPU setting; the CPU default has it off, README)
CRITIC = JudgeConfig(critic=True, require_judge_criteria=True)
NO_CRITIC = JudgeConfig(critic=False, require_judge_criteria=True)  # judge criteria count as unchecked


def traj(
    agent=GOOD_AGENT,
    sim=GOOD_SIM,
    task=None,
    user=(("Please cancel order o-1001.", "continue"), ("Thanks.", "stop")),
    **over,
):
    client = ScriptedClient(user_sim=user_says(*user), agent=list(agent), tool_sim=list(sim))
    # the replies as scripted: none sampled again
    return run(episode(task or cancel_task()), client, cfg(**{"reply_attempts": 1, **over}))


def result(task, t, cid):
    c = next(c for c in task.rubric.criteria if c.criterion_id == cid)
    return check_criterion(c, task, t)


def test_a_good_episode_passes_every_deterministic_check():
    task, t = cancel_task(), traj()
    for cid in ("c1", "c2"):
        r = result(task, t, cid)
        assert r.passed, r
    assert "matched call" in result(task, t, "c1").evidence and 'found "cancelled"' in result(task, t, "c2").evidence
    v = decide(NO_CRITIC, task, t, None)
    assert v.passed and v.reasons == [] and v.hacks == []


def test_state_and_call_criteria_fail_with_evidence():
    task = cancel_task()
    t = traj(agent=[[("get_order", {"order_id": "o-1001"})], "Your order is open."], sim=GOOD_SIM[:1])
    c1, c2 = result(task, t, "c1"), result(task, t, "c2")
    assert not c1.passed and c1.evidence == "cancel_order was never called"
    assert not c2.passed and 'found "open"' in c2.evidence
    v = decide(NO_CRITIC, task, t, None)
    assert not v.passed and v.reasons == ["criterion:call:c1", "criterion:state:c2"]


def test_a_call_with_other_arguments_does_not_count():
    task = cancel_task()
    t = traj(
        agent=[[("cancel_order", {"order_id": "o-1002"})], "Cancelled."],
        sim=[{"result": {"status": "cancelled"}, "patch": []}],
    )
    r = result(task, t, "c1")
    assert not r.passed and "never with" in r.evidence and "o-1002" in r.evidence


def test_must_not_calls_and_answers():
    task = cancel_task()
    t = traj()
    never = Criterion(criterion_id="x", kind="call", tool="get_order", must=False, description="does not look up")
    assert not check_criterion(never, task, t).passed
    answer = Criterion(criterion_id="a", kind="answer", contains=["Blue  Kettle", "cancelled"], description="mentions")
    assert check_criterion(answer, task, t).passed
    missing = Criterion(criterion_id="b", kind="answer", contains=["refund"], description="mentions refund")
    r = check_criterion(missing, task, t)
    assert not r.passed and "refund" in r.evidence
    assert check_criterion(Criterion(criterion_id="j", kind="judge", description="polite"), task, t) is None


def test_ordered_calls_are_checked_in_order():
    task = cancel_task("dependent_calls")
    task.rubric.criteria[0].order = 1
    task.rubric.criteria.insert(
        0,
        Criterion(
            criterion_id="c0",
            kind="call",
            tool="get_order",
            arguments={"order_id": "o-1001"},
            order=0,
            description="looks up first",
        ),
    )
    assert decide(NO_CRITIC, task, traj(), None).passed
    backwards = traj(
        agent=[
            [("cancel_order", {"order_id": "o-1001"})],
            [("get_order", {"order_id": "o-1001"})],
            "Done: o-1001 cancelled.",
        ],
        sim=[GOOD_SIM[1], GOOD_SIM[0]],
    )
    v = decide(NO_CRITIC, task, backwards, None)
    assert "criterion:call:order" in v.reasons


# -------------------------------------------------------------------- hacks


def test_a_claim_with_no_action_behind_it_is_contradicted():
    t = traj(agent=["I've cancelled your order o-1001."], sim=[])
    hacks = find_hacks(t)
    assert [h.kind for h in hacks] == ["contradicted_claim"] and "cancelled" in hacks[0].evidence
    v = decide(NO_CRITIC, cancel_task(), t, None)
    assert "hack:contradicted_claim:action" in v.reasons


def test_a_claim_after_a_failed_call_is_contradicted():
    t = traj(
        agent=[[("cancel_order", {"order_id": "o-1001"})], "Your order has been cancelled."],
        sim=[],
        faults={"enabled": True, "rates": dict.fromkeys(FAULT_KINDS, 0)},
        task=cancel_task("error_recovery"),
    )
    assert t.calls[0].executor == "fault"
    assert "contradicted_claim" in [h.kind for h in find_hacks(t)]


def test_fake_tool_output_and_invented_values_are_caught():
    t = traj(agent=['<tool_response>{"status": "cancelled"}</tool_response> Done.'], sim=[])
    assert "fabricated_tool_output" in [h.kind for h in find_hacks(t)]
    t = traj(
        agent=[[("get_order", {"order_id": "o-1001"})], "Order o-1001 costs $54.20 and ships on 2026-12-24."],
        sim=GOOD_SIM[:1],
    )
    # an amount for the order whose total is 39.5: contradicted; a date nothing shows: unverifiable (the policy
    # decides); the id the result showed: no finding
    v = decide(NO_CRITIC, cancel_task(), t, None)
    assert not v.passed and "hack:contradicted_claim:value" in v.reasons
    found = {c.why.split("'")[1]: c.status for c in v.claims if c.kind == "value"}
    assert found == {"$54.20": "contradicted", "2026-12-24": "unverifiable"}
    # a link the conversation never showed (kept by a CPU run before: "access it at https://github.com/...")
    t = traj(
        agent=[[("get_order", {"order_id": "o-1001"})], "Order o-1001 is open: see https://shop.example/o-1001."],
        sim=GOOD_SIM[:1],
    )
    assert "unverifiable_claim" in [h.kind for h in find_hacks(t)]


def test_calls_to_tools_outside_the_bundle_are_hacks():
    t = traj(agent=[[("refund_everything", {"order_id": "o-1001"})], "I could not do that."], sim=[])
    assert [h.kind for h in find_hacks(t)] == ["unknown_tool"]


def test_an_honest_episode_has_no_hacks():
    assert find_hacks(traj()) == []
    t = traj(
        agent=[[("get_order", {"order_id": "o-1001"})], "Order o-1001 is open; shall I cancel it?"], sim=GOOD_SIM[:1]
    )
    assert find_hacks(t) == []


# ------------------------------------------------------------- faults, policy


def test_fault_recovery_needs_a_retry_or_a_word_to_the_user():
    faults = {"enabled": True, "rates": dict.fromkeys(FAULT_KINDS, 0)}
    retried = traj(
        agent=[
            [("cancel_order", {"order_id": "o-1001"})],
            [("cancel_order", {"order_id": "o-1001"})],
            "Order o-1001 is cancelled.",
        ],
        sim=[GOOD_SIM[1]],
        faults=faults,
        task=cancel_task("error_recovery"),
    )
    assert fault_recovery(retried)[0] is True
    told = traj(
        agent=[
            [("cancel_order", {"order_id": "o-1001"})],
            "Sorry, the service is unavailable right now; please try again later.",
        ],
        sim=[],
        faults=faults,
        task=cancel_task("error_recovery"),
    )
    assert fault_recovery(told)[0] is True
    ignored = traj(
        agent=[[("cancel_order", {"order_id": "o-1001"})], "Anything else?"],
        sim=[],
        faults=faults,
        task=cancel_task("error_recovery"),
    )
    handled, evidence = fault_recovery(ignored)
    assert handled is False and "neither retried nor reported" in evidence
    assert "fault_not_handled" in decide(NO_CRITIC, cancel_task("error_recovery"), ignored, None).reasons
    assert fault_recovery(traj())[0] is None


def test_the_policy_uses_status_critic_score_and_judge_criteria():
    task = cancel_task()
    task.rubric.criteria.append(Criterion(criterion_id="c3", kind="judge", description="confirms before cancelling"))
    t = traj()
    ids = list(rubrics_for(task))
    good = CriticReport.model_validate(
        {"ok": True, "score": 8, "rubrics": {i: {"passed": True, "reason": "fine"} for i in ids}}
    )
    assert decide(CRITIC, task, t, good).passed
    low = good.model_copy(update={"score": 3})
    assert decide(CRITIC, task, t, low).reasons == ["critic_score"]
    judged_bad = CriticReport.model_validate(
        {
            **good.model_dump(),
            "rubrics": {**good.model_dump()["rubrics"], "c3": {"passed": False, "reason": "did not confirm"}},
        }
    )
    v = decide(CRITIC, task, t, judged_bad)
    assert v.reasons == ["criterion:judge:c3"] and any(
        r.criterion_id == "c3" and r.evidence == "did not confirm" for r in v.criteria
    )
    assert decide(CRITIC, task, t, CriticReport(ok=False, error="parse: not JSON")).reasons == ["critic_failed"]
    limited = traj(max_turns=1)
    assert limited.status == "max_turns" and decide(NO_CRITIC, task, limited, None).reasons[0] == "status:max_turns"


def test_critic_agreement_with_the_deterministic_checks():
    task, t = cancel_task(), traj()
    ids = list(rubrics_for(task))
    critic = CriticReport.model_validate(
        {"ok": True, "score": 7, "rubrics": {i: {"passed": i != "c2", "reason": "r"} for i in ids}}
    )
    v = decide(CRITIC, task, t, critic)
    assert agreement([v]) == {
        "pairs": 2,
        "agreement": 0.5,
        "kappa": 0.0,
        "on_passed": 0.5,
        "on_failed": None,
    }  # c1 agreed, c2 not


def _judged(task, t, passes) -> Verdict:
    ids = list(rubrics_for(task))
    return decide(
        CRITIC,
        task,
        t,
        CriticReport.model_validate(
            {"ok": True, "score": 8, "rubrics": {i: {"passed": passes(i), "reason": "r"} for i in ids}}
        ),
    )


def test_a_critic_that_passes_everything_has_no_agreement_beyond_chance():
    """Judge hole: the agreement was raw accuracy, so a critic that passes everything scored the
    deterministic pass rate (here 0.75). Cohen's kappa says 0; per class, it agrees on every
    criterion the checks passed and on none they failed."""
    good, bad = cancel_task(), cancel_task()
    verdicts = [
        _judged(good, traj(), lambda i: True),
        _judged(bad, traj(agent=[[("get_order", {"order_id": "o-1001"})], "Open."], sim=GOOD_SIM[:1]), lambda i: True),
    ]
    pairs = [(r.passed, r.critic_passed) for v in verdicts for r in v.criteria if r.critic_passed is not None]
    assert pairs.count((True, True)) == 2 and pairs.count((False, True)) == 2
    stats = agreement(verdicts)
    assert (
        stats["agreement"] == 0.5 and stats["kappa"] == 0.0 and stats["on_passed"] == 1.0 and stats["on_failed"] == 0.0
    )
    honest = [
        _judged(good, traj(), lambda i: True),
        _judged(
            bad,
            traj(agent=[[("get_order", {"order_id": "o-1001"})], "Open."], sim=GOOD_SIM[:1]),
            lambda i: i not in ("c1", "c2"),
        ),
    ]
    assert agreement(honest)["kappa"] == 1.0


def test_judge_criteria_are_not_passed_without_the_critic():
    """Judge hole: with the critic off, `judge` criteria passed silently even with
    require_judge_criteria: true."""
    task = cancel_task()
    task.rubric.criteria.append(Criterion(criterion_id="c3", kind="judge", description="confirms before cancelling"))
    v = decide(NO_CRITIC, task, traj(), None)
    assert not v.passed and v.reasons == ["criterion:judge:c3:unchecked"]
    assert decide(JudgeConfig(critic=False, require_judge_criteria=False), task, traj(), None).passed


def test_the_critics_k2_rubrics_count():
    """Judge hole: the critic's answers on K2's core and prescriptive rubrics never counted
    (all failed, score 6, still kept)."""
    task, t = cancel_task(), traj()
    v = _judged(task, t, lambda i: i in ("c1", "c2"))
    assert not v.passed and {"critic:clarity_relevance", "critic:no_initial_praise"} <= set(v.reasons)
    assert decide(
        CRITIC.model_copy(update={"require_critic_rubrics": False}),
        task,
        t,
        CriticReport.model_validate(
            {
                "ok": True,
                "score": 6,
                "rubrics": {i: {"passed": i in ("c1", "c2"), "reason": "r"} for i in rubrics_for(task)},
            }
        ),
    ).passed


def test_call_criteria_do_not_drop_good_runs():
    """Judge holes: exact arguments dropped good runs (free text worded otherwise, extra optional
    keys), and a must-not call fired on an attempt that failed and changed nothing."""
    from worldsmith.judge.rubric import arguments_match

    assert arguments_match(
        {"summary": "customer wants a refund for the broken kettle"},
        {"summary": "The customer would like a refund: the kettle arrived broken.", "priority": "high"},
    )
    assert not arguments_match(
        {"summary": "customer wants a refund for the broken kettle"}, {"summary": "Customer asks about shipping times."}
    )
    assert not arguments_match({"order_id": "o-1001"}, {"order_id": "o-1002"})  # an id is exact
    never = Criterion(criterion_id="x", kind="call", tool="cancel_order", must=False, description="does not cancel")
    failed = traj(
        agent=[[("cancel_order", {"order_id": "o-1001"})], "Sorry, that did not work."],
        sim=[],
        faults={"enabled": True, "rates": dict.fromkeys(FAULT_KINDS, 0)},
        task=cancel_task("error_recovery"),
    )
    assert failed.calls[0].executor == "fault" and check_criterion(never, cancel_task(), failed).passed
    assert not check_criterion(never, cancel_task(), traj()).passed


def test_the_critic_asks_for_every_rubric_and_parses_a_structured_verdict():
    task, t = cancel_task(), traj()
    ids = list(rubrics_for(task))
    schema = critic_schema(ids)
    assert set(schema["properties"]["rubrics"]["required"]) == {
        "clarity_relevance",
        "conversational_fluency",
        "objective_interaction",
        "no_initial_praise",
        "no_self_justification",
        "c1",
        "c2",
    }
    seen = {}

    def answer(messages):
        seen["prompt"] = messages[-1]["content"]
        return {"rubrics": {i: {"passed": True, "reason": "ok"} for i in ids}, "score": 9}

    out = asyncio.run(critique(ScriptedClient(critic=answer), PROMPTS, task, t, seed=1))
    assert out.ok and out.score == 9
    assert (
        "calls cancel_order" in seen["prompt"] and "o-1001" in seen["prompt"] and "no_initial_praise" in seen["prompt"]
    )


@pytest.mark.parametrize("status", ["error", "max_tokens"])
def test_errors_and_limits_never_pass_by_default(status):
    t = traj()
    t.status = status
    t.reason = "tool_sim_failed: x" if status == "error" else "limit"
    assert not decide(NO_CRITIC, cancel_task(), t, None).passed
