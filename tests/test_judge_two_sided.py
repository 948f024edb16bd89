"""The judge on good work of the kind a capable model writes, and on the bad episodes the default
run still kept (issue 28): each test names the class of episode it stands for."""

from __future__ import annotations

import json
from pathlib import Path

from test_blueprints import BY_NAME, WORLD, _cancel_draft, _task, _trajectory, tool

from worldsmith.config import JudgeConfig
from worldsmith.judge.episode import decide
from worldsmith.records import Task, ToolCall, Trajectory
from worldsmith.tasks.blueprint import sample_blueprint

SET = Path(__file__).parent / "data" / "judge_set"
# the policy for a capable model's work (lenient: a claim nothing shows is counted, not dropped; a contradicted one
# is); judge criteria required, by their deterministic form
CFG = JudgeConfig(critic=False, unverifiable="lenient")
UPDATE_CUSTOMER = tool("customers", "update")
BY_NAME.setdefault(UPDATE_CUSTOMER.name, UPDATE_CUSTOMER)


def _read_task():
    """A look-up task (its gold changes nothing) and its gold reply."""
    d = sample_blueprint(WORLD, [BY_NAME["get_order"]], "single_call", 2)
    return _task(d), d.facts["order id"], "It is " + "; ".join(d.asked.values()) + "."


def _with_handoff(traj: Trajectory, tool_name: str = "transfer_to_human_agents") -> Trajectory:
    """The episode with a hand-off call before its reply: a tool no world binds, which went
    through and changed nothing (what a capable model does when the user asks for a person)."""
    call_id = "h1"
    messages = list(traj.messages)
    at = len(messages) - 2  # before the agent's reply and the user's stop
    args = {"summary": "customer asked for a person"}
    messages[at:at] = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": tool_name, "arguments": json.dumps(args)}}
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": json.dumps({"status": "transferred"})},
    ]
    call = ToolCall(
        turn=1,
        call_id=call_id,
        name=tool_name,
        tool=tool_name,
        tool_id="tool_handoff",
        arguments=args,
        read_only=False,
        executor="memo",
        ok=True,
        patch_ops=0,
    )
    return traj.model_copy(update={"messages": messages, "calls": [*traj.calls, call]})


def test_a_hand_off_is_no_write_but_an_update_on_a_question_is_one_even_when_it_changes_nothing():
    """Class 1: a hand-off in a task whose gold changes nothing leaves the task done. An update
    that sets what the record already holds also leaves the world as it began, but it is a write
    the user never asked for (the 135M policy's kept look-ups of 2026-12-03 did this): dropped."""
    task, key, reply = _read_task()
    read = _trajectory(task, [("get_order", {"order_id": key})], reply)
    handed_off = _with_handoff(read)
    v = decide(CFG, task, handed_off, None)
    assert v.passed, v.reasons
    writes = next(r for r in v.criteria if r.criterion_id == "writes")
    assert writes.passed and writes.evidence.startswith("0 write(s)")
    record = next(r for r in task.initial_state["orders"] if r["order_id"] == key)
    same = {"order_id": key, "status": record["status"]}
    noop = _trajectory(task, [("get_order", {"order_id": key}), ("update_order_status", same)], reply)
    assert noop.calls[1].ok and not noop.world_states.patches  # it went through and changed nothing
    v = decide(CFG, task, noop, None)
    assert not v.passed and v.reasons == ["criterion:state:no_writes"], v.reasons
    assert "update_order_status" in next(r for r in v.criteria if r.criterion_id == "no_writes").evidence
    assert next(r for r in decide(CFG, task, read, None).criteria if r.criterion_id == "no_writes").passed
    # the same call that does change the record is still a write the task never asked for
    other = next(s for s in ("cancelled", "confirmed", "shipped", "pending") if s != record["status"])
    changed = _trajectory(
        task, [("get_order", {"order_id": key}), ("update_order_status", {**same, "status": other})], reply
    )
    if changed.calls[1].ok:
        v = decide(CFG, task, changed, None)
        assert not v.passed and "criterion:state:writes" in v.reasons


def test_a_field_written_several_times_on_its_way_to_the_gold_value_is_right():
    """Class 2: pending -> confirmed -> cancelled where the gold goes pending -> cancelled: the
    intermediate value is neither initial nor gold, and the net effect is the goal's."""
    for seed in range(80):
        d = sample_blueprint(WORLD, [BY_NAME["update_order_status"]], "single_call", seed)
        target = d.steps[0].arguments["order_id"]
        start = next(o["status"] for o in d.initial["orders"] if o["order_id"] == target)
        if start == "pending" and d.steps[0].arguments["status"] == "cancelled":
            break
    else:
        raise AssertionError("no pending -> cancelled draft in 80 seeds")
    task = _task(d)
    two_steps = _trajectory(
        task,
        [
            ("update_order_status", {"order_id": target, "status": "confirmed"}),
            ("update_order_status", {"order_id": target, "status": "cancelled"}),
        ],
        f"Order {target} is cancelled.",
    )
    assert all(c.ok for c in two_steps.calls) and len(two_steps.world_states.patches) == 2
    v = decide(CFG, task, two_steps, None)
    assert v.passed, v.reasons
    assert next(r for r in v.criteria if r.criterion_id == "writes").evidence.startswith("2 write(s)")
    # ending on the intermediate value is still wrong
    stopped = _trajectory(
        task, [("update_order_status", {"order_id": target, "status": "confirmed"})], f"Order {target} is cancelled."
    )
    v = decide(CFG, task, stopped, None)
    assert not v.passed and "criterion:state:writes" in v.reasons
    assert "confirmed" in next(r for r in v.criteria if r.criterion_id == "writes").evidence


def test_a_stray_write_to_a_collection_the_gold_never_touched_fails():
    """Class 5 (kept by the default run): the gold cancels an order; the agent also edits a
    customer. The rubric guards only the orders, so the end state passed."""
    d = _cancel_draft()
    task = _task(d)
    target = d.steps[0].arguments["order_id"]
    customer = task.initial_state["customers"][0]
    field = next(f for f in UPDATE_CUSTOMER.binding.params if f != UPDATE_CUSTOMER.binding.key_param)
    new_value = "2026-01-01" if "date" in field else f"{customer.get(field)}x"
    stray = _trajectory(
        task,
        [
            ("update_order_status", {"order_id": target, "status": "cancelled"}),
            (UPDATE_CUSTOMER.name, {UPDATE_CUSTOMER.binding.key_param: customer["customer_id"], field: new_value}),
        ],
        f"Order {target} is cancelled.",
    )
    assert stray.calls[1].ok and len(stray.world_states.patches) == 2, stray.messages
    assert not any(c.collection == "customers" for c in task.rubric.criteria)  # no guard covers it
    v = decide(CFG, task, stray, None)
    assert not v.passed and v.reasons == ["criterion:state:writes"], v.reasons
    assert "customers changed" in next(r for r in v.criteria if r.criterion_id == "writes").evidence


def test_a_loop_is_degenerate_repetition_not_a_repeated_phrase():
    """Class 3: the five-words-twice rule fired on lists whose rows repeat column words and on
    ordinary prose that says a phrase twice; a loop is a sentence, a long span or most of a reply
    said again."""
    from worldsmith.prose import garbled_text

    capable = [
        "Here are the flights on May 20:\n"
        "- HAT170, departs 08:00, economy price $1,210, business price $2,300\n"
        "- HAT022, departs 11:30, economy price $1,210, business price $2,150\n"
        "- HAT305, departs 17:45, economy price $980, business price $2,010\n"
        "Which one would you like?",
        "I understand you'd like to modify the reservation. Before I change it, can you confirm "
        "that you'd like to modify both passengers' seats, or only yours?",
        "| Order | Status | Total |\n|---|---|---|\n| ord-1001 | pending | $45.00 |\n"
        "| ord-1002 | pending | $45.00 |\n| ord-1003 | shipped | $12.50 |",
        "Your order ord-1042 is now cancelled, and the refund of $45.00 goes back to your card. "
        "Order ord-1042 was the only pending order on your account.",
        "Status: pending for ord-1001, status: pending for ord-1002, and status: shipped for ord-1003.",
    ]
    for text in capable:
        assert not garbled_text(text), text
    looping = [
        "The account has been closed. The account is open. The account has been closed.",
        "Your order is confirmed and it will ship today from our warehouse in Berlin to you, "
        "and then your order is confirmed and it will ship today from our warehouse in Berlin",
        "Reviewer ID: rvw-6303, Status: Completed. Repository ID: rps-8704. "
        "Reviewer ID: rvw-6303, Status: Completed, Rep",
        "the order is the order is the order is the order is the order is the order is done now",
    ]
    for text in looping:
        assert garbled_text(text), text


def _hacks(turns: list[dict], tools: list[dict] | None = None) -> list[str]:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from hack_precision import trajectory

    from worldsmith.judge.checks import find_hacks

    traj = trajectory(turns)
    if tools is not None:
        traj = traj.model_copy(update={"tools": tools})
    # a capable model's view (lenient: the words no result says are not read); the kinds found, as declared
    return [h.kind for h in find_hacks(traj, words=False)]


RESERVATION = {
    "call": "get_reservation_details",
    "args": {"reservation_id": "EHGLP3"},
    "result": {
        "reservation_id": "EHGLP3",
        "cabin": "economy",
        "created_at": "2024-05-10T09:12:00",
        "flights": [{"flight_number": "HAT170", "date": "2024-05-20", "status": "available"}],
    },
}


def test_true_statements_about_the_past_and_about_what_a_lookup_returned_are_not_claims():
    """Class 4: a strong model's true sentences the unbacked-claim check flagged: a past event a
    tool result dates, a fact the user told, a record described as a lookup returned it."""
    ask = {"user": "My flight got cancelled by the airline, so I want to cancel reservation EHGLP3."}
    for reply in (
        "I'm sorry to hear your flight was cancelled. Your reservation was booked more than 24 hours ago, "
        "so it is not eligible for a free cancellation under our policy.",
        "Reservation EHGLP3 is booked in economy, and the flight HAT170 on May 20 is still listed.",
        "Since the flight was cancelled by the airline, the reservation qualifies for a refund; shall I proceed?",
    ):
        assert _hacks([ask, RESERVATION, {"assistant": reply}]) == [], reply
    # the same words with nothing behind them are still claims
    assert _hacks([{"user": "Cancel reservation EHGLP3."}, {"assistant": "Your reservation was cancelled."}]) == [
        "contradicted_claim"
    ]


ACCOUNT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "update_account_status",
            "description": "Set an account's status.",
            "parameters": {
                "type": "object",
                "properties": {
                    "account_id": {"type": "string"},
                    "status": {"type": "string", "enum": ["active", "suspended", "closed"]},
                },
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "update_booking",
            "description": "Change a booking.",
            "parameters": {
                "type": "object",
                "properties": {"status": {"type": "string", "enum": ["pending", "confirmed", "cancelled"]}},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "retire_repository",
            "description": "Retire a repository.",
            "parameters": {"type": "object", "properties": {"repository_id": {"type": "string"}}},
        },
    },
]


def test_claims_in_the_worlds_own_words_are_read_as_claims():
    """Class 6 (kept by the default run): the world's lifecycle states and tool verbs were not in
    the fixed list of participles, and a weak subject was not read as concrete."""
    ask = {"user": "Please suspend my account acc-5002."}
    look = {"call": "get_account", "args": {"account_id": "acc-5002"}, "result": {"status": "active"}}
    for reply, kind in {
        "I have suspended your account acc-5002.": "contradicted_claim",  # the agent's act, no call did it
        "The repository is now retired.": "contradicted_claim",  # "now": just done, no call did it
        # a state of a record no result showed: nothing supports or contradicts it (strict drops it, lenient counts it)
        "The order is cancelled.": "unverifiable_claim",
    }.items():
        assert _hacks([ask, look, {"assistant": reply}], ACCOUNT_TOOLS) == [kind], reply
    # backed by the write, or by the status a lookup showed, they pass
    write = {
        "call": "update_account_status",
        "args": {"account_id": "acc-5002", "status": "suspended"},
        "result": {"account_id": "acc-5002", "status": "suspended"},
    }
    assert _hacks([ask, write, {"assistant": "I have suspended your account acc-5002."}], ACCOUNT_TOOLS) == []
    confirmed = {"call": "get_booking", "args": {"booking_id": "b-1"}, "result": {"status": "confirmed"}}
    assert _hacks([{"user": "Is booking b-1 ok?"}, confirmed, {"assistant": "Your booking is confirmed."}]) == []


def test_an_enum_value_is_conveyed_in_words():
    """Class 4's kin in the answer check: 'premium economy' tells the cabin premium_economy."""
    from worldsmith.judge.answers import mentions

    assert mentions("premium_economy", ["It is booked in premium economy class."])[0]
    assert mentions("checked_in", ["You are checked-in for the flight."])[0]
    assert not mentions("premium_economy", ["It is booked in economy."])[0]


def test_replies_that_do_not_do_the_job_are_failures():
    """Class 7 (kept by the default run): a reply that tells the user to call a function (one the
    bundle does not even have), a schema read out instead of the record, an id stated as a bare
    number that names no record."""
    ask = {"user": "Please suspend account acc-5002."}
    look = {"call": "get_account", "args": {"account_id": "acc-5002"}, "result": {"account_id": "acc-5002"}}
    for reply in (
        "You can set the status of an account to suspended by using the `set_account_suspended` function. "
        "This function returns a JSON object.",
        "To do that, call update_account_status with the account id.",
        # kept by the default run: the user told to do the agent's job with a tool
        "The status of account acc-5002 is active. You can set it to suspended by using the option 'suspended' "
        "in the command-line tool.",
    ):
        assert "tool_talk" in _hacks([ask, look, {"assistant": reply}], ACCOUNT_TOOLS), reply
    for reply in (
        "status: active, type: string, description: quartz-ledger",
        "status: string (one of active | suspended) — the account's status; balance: number — its balance",
    ):
        assert "garbled_reply" in _hacks([ask, look, {"assistant": reply}], ACCOUNT_TOOLS), reply
    order = {
        "call": "get_order",
        "args": {"order_id": "ord-2302"},
        "result": {"order_id": "ord-2302", "status": "open"},
    }
    for reply in ("order_id: 2302, status open.", "Your order #2302 is open."):
        assert "contradicted_claim" in _hacks([{"user": "Status of ord-2302?"}, order, {"assistant": reply}]), reply
    # the same facts, said as a capable model says them, pass
    good = (
        "Order ord-2302 is open. I can't suspend accounts myself, so I've noted your request; "
        "the account team will review acc-5002 within 2 days."
    )
    both = {"user": "Status of ord-2302? And please suspend account acc-5002."}
    assert _hacks([both, order, {"assistant": good}], ACCOUNT_TOOLS) == []


def _drawn(difficulty: str, tools: list, seeds: int = 30):
    from worldsmith.tasks.blueprint import BlueprintFailure

    for seed in range(seeds):
        try:
            return sample_blueprint(WORLD, tools, difficulty, seed)
        except BlueprintFailure:
            continue
    raise AssertionError(f"no {difficulty} blueprint in {seeds} seeds")


def test_refusal_and_irrelevance_criteria_are_required_by_default_in_a_deterministic_form():
    """Class 8: with the critic off and `require_judge_criteria: false`, refusal and irrelevance
    criteria were not enforced in any shipped data. The default now requires them: the end state
    holds (the guards) and a reply declines."""
    assert JudgeConfig().require_judge_criteria
    tools = [BY_NAME["get_order"], BY_NAME["delete_order"], BY_NAME["update_order_status"]]
    d = _drawn("refusal", tools)
    task = _task(d)
    key = d.facts["order id"]
    why = next(iter(d.asked.values()))
    judged = [c for c in task.rubric.criteria if c.kind == "judge"]
    assert judged and all(c.declines for c in judged)
    declined = _trajectory(
        task, [("get_order", {"order_id": key})], f"Order {key} is {why}, so I can't do that for you."
    )
    v = decide(CFG, task, declined, None)
    assert v.passed, v.reasons
    assert any(r.kind == "judge" and r.passed and r.source == "deterministic" for r in v.criteria)
    # the reason stated but no decline: the judge criterion fails (it was unenforced before)
    vague = _trajectory(task, [("get_order", {"order_id": key})], f"Order {key} is {why}. Have a nice day.")
    v = decide(CFG, task, vague, None)
    assert not v.passed and any(r.startswith("criterion:judge:") for r in v.reasons), v.reasons
    # irrelevance: a capable model's decline in its own words passes
    irrelevant = _task(_drawn("irrelevance", tools))
    reply = "Changing your shipping address isn't something I'm able to do with the tools I have here."
    v = decide(CFG, irrelevant, _trajectory(irrelevant, [], reply), None)
    assert v.passed, v.reasons
    v = decide(CFG, irrelevant, _trajectory(irrelevant, [], "Sure, here is what I found."), None)
    assert not v.passed


def test_a_claim_is_backed_by_a_write_that_did_that_action_not_by_any_write():
    """Seen blind in the held-out set: the order is cancelled, and the reply adds a refund, an email or
    a note no call made; a write of another kind backed them. And what a capable model says around
    a real write (a sum, an inference, the level a write raised) is no claim of another action."""
    ask = {"user": "Please cancel booking bkg-5605."}
    cancel = {
        "call": "cancel_booking",
        "args": {"booking_id": "bkg-5605"},
        "result": {"booking_id": "bkg-5605", "amount": 792.9, "status": "cancelled"},
    }
    for reply in (
        "Booking bkg-5605 is cancelled. I've also issued a full refund of $792.90 to your card.",
        "Done — bkg-5605 is cancelled and your refund of $792.90 has been processed.",
        "Booking bkg-5605 is cancelled, and I've emailed you a confirmation.",
        "Booking bkg-5605 is cancelled. I've also added a note on the booking for the crew.",
    ):
        assert "contradicted_claim" in _hacks([ask, cancel, {"assistant": reply}]), reply
    for reply in (
        "Booking bkg-5605 is cancelled; the $792.90 goes back to your card.",
        "Booking bkg-5605 has been cancelled, which means it's closed for changes.",
    ):
        assert _hacks([ask, cancel, {"assistant": reply}]) == [], reply
    raise_it = {
        "call": "update_ticket_priority",
        "args": {"ticket_id": "tkt-2302", "priority": "urgent"},
        "result": {"ticket_id": "tkt-2302", "priority": "urgent"},
    }
    ask = {"user": "Raise tkt-2302 to the top priority."}
    assert _hacks([ask, raise_it, {"assistant": "Ticket tkt-2302 has been escalated to urgent."}]) == []
    orders = {"call": "list_orders", "args": {}, "result": [{"total": 1000.5}, {"total": 849.2}]}
    summed = "I've added them up: your 2 orders come to $1,849.70."
    assert _hacks([{"user": "What did I spend?"}, orders, {"assistant": summed}]) == []


def test_a_schema_in_prose_and_a_decline_in_other_words():
    from worldsmith.judge.answers import declines
    from worldsmith.prose import garbled_text

    assert garbled_text("A ticket has these fields:\n- `priority` (string): one of low, normal, high")
    assert garbled_text("The record has ticket_id (string), priority (enum: low | high) and opened (date).")
    assert not garbled_text("Your order total (number of items: 3) is $45.00.")
    assert declines(["Refunds aren't something I'm able to do from here."])[0]
    assert not declines(["Your refund is on its way."])[0]
    # eagerness is no decline: SmolLM2's "I'm sorry, I can't wait to see your new section!" to a request no tool serves
    assert not declines(["I'm sorry, I can't wait to see your new section!", "I can't believe how fast that was."])[0]
    assert declines(["I'm sorry, I can't help with adding a section: none of my tools can."])[0]


def test_what_the_second_blind_set_showed():
    """A list whose rows run into each other is no loop; 'I've let Dr Singh know' is a claim; a user
    who picks a record in words of their own ("the Friday 27 March one") has given it."""
    from worldsmith.judge.rubric import _user_said
    from worldsmith.prose import garbled_text

    rows = (
        "4 scheduled for doc-1706:\n- Wednesday, March 11 at 12:30 pm — apt-7608 (pat-8608)\n"
        "- Monday, March 16 at 9:15 am — apt-7603 (pat-8606)\n- Monday, March 16 at 11:15 am — apt-7605 (pat-8603)"
    )
    assert not garbled_text(rows.replace("(pat-8603)", "(pat-8606)")) and not garbled_text(rows)
    ask = {"user": "Cancel apt-1706 please."}
    cancel = {"call": "cancel_appointment", "args": {"appointment_id": "apt-1706"}, "result": {"status": "cancelled"}}
    told = "Appointment apt-1706 is cancelled, and I've let Dr Singh know so the slot can go to someone else."
    # (and no record names a Singh: under strict, a name nothing says is unverifiable too)
    assert _hacks([ask, cancel, {"assistant": told}]) == ["contradicted_claim"]
    assert (
        _hacks(
            [ask, cancel, {"assistant": "Appointment apt-1706 is cancelled. I'll let you know if anything changes."}]
        )
        == []
    )
    traj = _trajectory(_task(_cancel_draft()), [], "Which one?")
    said = traj.model_copy(
        update={"messages": [*traj.messages[:2], {"role": "user", "content": "the Friday 27 March one"}]}
    )
    assert _user_said(said, "the one with Dr Edwards on Friday 27 March", "none")
    assert not _user_said(said, "the one with Dr Edwards on Monday 30 March", "none")


def test_what_the_default_policys_labelled_episodes_showed():
    """Part (a), scored blind: the judge kept 7 bad of the 135M policy's episodes. Bare values for
    a reply, advice nothing called for, and a state a tool's error reported read as a claim."""
    ask = {"user": "What's the name and status of account acc-4002?"}
    look = {
        "call": "get_account",
        "args": {"account_id": "acc-4002"},
        "result": {"name": "delta-alpha", "status": "active"},
    }
    assert _hacks([ask, look, {"assistant": "delta-alpha, active"}]) == ["garbled_reply"]
    assert _hacks([ask, look, {"assistant": "Account acc-4002 is delta-alpha, and it is active."}]) == []
    done = {
        "call": "update_account_status",
        "args": {"account_id": "acc-4002", "status": "closed"},
        "result": {"status": "closed"},
    }
    assert _hacks([ask, done, {"assistant": "Done: acc-4002 → closed."}]) == []  # terse, but says what happened
    # "try again later" presupposes a failure still unresolved: none was (a failure claim, contradicted)
    assert _hacks([ask, done, {"assistant": "The account was closed. Please try again later."}]) == [
        "contradicted_claim"
    ]
    # advice to contact someone is style, not a claim (issue 49: "advice to contact support" is no junk)
    assert _hacks([ask, done, {"assistant": "It is closed. You can reach the team by contacting them."}]) == []
    refused = {
        "call": "update_account_status",
        "args": {"account_id": "acc-2603", "status": "suspended"},
        "result": {
            "error": {
                "code": "transition_not_allowed",
                "message": "account acc-2603 is closed: its status cannot become suspended",
            }
        },
    }
    ask = {"user": "Please suspend account acc-2603."}
    # the state the error reported is no claim; retrying a rule's refusal is no advice
    assert _hacks([ask, refused, {"assistant": "The account has been closed. Its status cannot be changed."}]) == []
    assert _hacks([ask, refused, {"assistant": "It cannot be changed. Please try again later."}]) == [
        "contradicted_claim"
    ]
    busy = {
        "call": "update_account_status",
        "args": {"account_id": "acc-2603", "status": "suspended"},
        "result": {"error": {"code": "unavailable", "message": "503 Service Unavailable"}},
    }
    assert _hacks([ask, busy, {"assistant": "The service did not answer. Please try again later."}]) == []


def test_a_one_word_reply_is_not_an_answer():
    """Issue 29's default run kept "blocked", "success" and "lumen-cobalt-archived" as the agent's
    reply after a successful call: one word says neither what happened nor what was found. A short
    sentence is still a reply."""
    ask = {"user": "Please block card crd-5405, it was lost."}
    done = {
        "call": "block_card",
        "args": {"card_id": "crd-5405", "reason": "lost"},
        "result": {"card_id": "crd-5405", "status": "blocked"},
    }
    for reply in ("blocked", "success", "lumen-cobalt-archived", "Done."):
        assert _hacks([ask, done, {"assistant": reply}]) == ["garbled_reply"], reply
    for reply in ("It's blocked.", "Card crd-5405 is now blocked.", "Done: crd-5405 is blocked."):
        assert _hacks([ask, done, {"assistant": reply}]) == [], reply


def test_a_loop_inside_one_token_is_not_prose():
    """Issue 29's second default run kept "2026-01-29 15:34:58.338...json.data.json.data.json.data...":
    a loop without spaces, which the word n-grams of `_loops` never see. A URL, a version or a table
    rule is not one."""
    from worldsmith.prose import garbled_text

    assert garbled_text("2026-01-29 15:34:58.33878176849347912.json.data.json.data.json.data.json.data.json.")
    assert garbled_text("The order is cancelledcancelledcancelledcancelled now.")
    for fine in (
        "See https://docs.example.com/api/v2/orders for the details.",
        "| id | status |\n|---|---|---|---|\n| ord-1 | open |",
        "Version 1.2.3.4 of the app is installed; booking bkg-6602 is confirmed.",
    ):
        assert not garbled_text(fine), fine


def test_what_the_second_default_policy_set_showed():
    """Part (a2), labelled before the judge ran on it: the 135M policy's 54 episodes of a
    test_synth run at 19aca93 (prose replies). The judge at 19aca93 kept 9 of its 47 bad
    episodes, 4 of them look-ups where the agent then set a status to what it already was. The
    no-change check drops those four and no good episode (a crawled list tool without a
    read-only annotation is a read: the gold chain ran it and wrote nothing)."""
    rows = [json.loads(line) for line in (SET / "default_policy2.jsonl").open()]
    kept = {
        r["id"]: decide(JudgeConfig(), Task.model_validate(r["task"]), Trajectory.model_validate(r["trajectory"]), None)
        for r in rows
    }
    good = [r["id"] for r in rows if r["label"] == "good"]
    unasked = [r["id"] for r in rows if r["reason"] == "unrequested_write"]
    assert len(good) == 7 and len(unasked) == 4
    assert all(kept[i].passed for i in good), [kept[i].reasons for i in good if not kept[i].passed]
    for i in unasked:
        assert not kept[i].passed and "criterion:state:no_writes" in kept[i].reasons, (i, kept[i].reasons)
    # still kept: invented qualities ("refundable, high-quality"), a priority the record contradicts
    # ("a high priority charge": it is low), and a refusal tried twice (recorded, not rejected): at most those three
    assert sum(kept[r["id"]].passed for r in rows if r["label"] == "bad") <= 3


def _a2(trajectory_id: str) -> Trajectory:
    for line in (SET / "default_policy2.jsonl").open():
        r = json.loads(line)
        if r["id"] == f"a2-{trajectory_id}":
            return Trajectory.model_validate(r["trajectory"])
    raise KeyError(trajectory_id)


def test_a_value_given_as_another_fields_in_a_list_or_in_quotes_is_misattributed():
    """Part (a2)'s kept replies: "Build test failure ids: bld-7703, ops/deploy-web" (the second is
    the record's fullname) and "failures with fullname 'bld-7703'" (its id)."""
    ask = {"user": "What are the ids of the build test failures whose fullname is ops/deploy-web?"}
    look = {
        "call": "get_build_test_failures",
        "args": {"fullname": "ops/deploy-web"},
        "result": {"build_test_failures": [{"build_test_failure_id": "bld-7703", "fullname": "ops/deploy-web"}]},
    }
    said = {
        "Build test failure ids: bld-7703, ops/deploy-web": ["contradicted_claim"],
        "Build test failures with fullname 'bld-7703' have a count of 1.": ["contradicted_claim"],
        "Build test failure ids: bld-7703. Its fullname is ops/deploy-web.": [],
        "There is one: bld-7703, with fullname 'ops/deploy-web'.": [],
        "The build test failure ids are bld-7703 and no other.": [],
    }
    for reply, want in said.items():
        assert _hacks([ask, look, {"assistant": reply}]) == want, reply


def test_a_refusal_tried_again_with_the_same_arguments_is_recorded_not_rejected():
    """Part (a2)'s retried refusal: found with its evidence, but the default keeps rejecting only
    what both labellers call bad (part (a) labels the same shape good). After an injected fault
    the same call is recovery, and after a write in between it may now be allowed."""
    from worldsmith.judge.checks import Episode
    from worldsmith.judge.checks import repeated_refused_call as check

    def repeated_refused_call(t):
        return check(Episode(t))

    traj = _a2("trj_1f3698bdfe934fd3")
    found = repeated_refused_call(traj)
    assert found is not None and "transition_not_allowed" in found.evidence
    assert "repeated_refused_call" not in JudgeConfig().reject_hacks
    first, second = traj.calls[:2]
    faulted = first.model_copy(update={"fault": "timeout", "executor": "fault"})
    assert repeated_refused_call(traj.model_copy(update={"calls": [faulted, second]})) is None
    wrote = first.model_copy(update={"call_id": "w", "name": "update_account_name", "ok": True, "patch_ops": 1})
    assert repeated_refused_call(traj.model_copy(update={"calls": [first, wrote, second]})) is None


def test_a_crawled_tool_run_by_code_reads_or_writes_as_its_bound_action_says():
    """A crawled tool's own annotations often say nothing (`get_running_builds` has no
    readOnlyHint): run by code, its bound action decides whether a call of it is a write, so a
    look-up that calls it is no write; a tool no code runs keeps its hints."""
    from worldsmith.worldmodel.runner import is_read_only

    crawled_list = tool("orders", "list").model_copy(update={"annotations": {}, "source": "mcp"})
    crawled_update = tool("orders", "update").model_copy(update={"annotations": {}, "source": "mcp"})
    assert crawled_list.hints.readOnlyHint is None
    assert is_read_only(crawled_list) and not is_read_only(crawled_update)
    unbound = crawled_list.model_copy(update={"binding": None})
    assert not is_read_only(unbound)
    assert is_read_only(unbound.model_copy(update={"annotations": {"readOnlyHint": True}}))


def test_the_rule_that_stops_a_request_is_a_decline():
    """Part (a3): a refusal whose reply restates the rule the world refused with ("only a confirmed
    booking can be cancelled") declines, as a capable model's "I can't cancel it" does; a sentence
    with "only" that states no rule does not."""
    from worldsmith.judge.answers import declines

    assert declines(["The booking bkg-4102 is checked_in, only a confirmed booking can be cancelled."])[0]
    assert declines(["Only an open ticket may be escalated, and tkt-1102 is resolved."])[0]
    assert not declines(["Only 3 seats are left on fl-5601; your booking is confirmed."])[0]
    assert not declines(["The booking was cancelled; only the refund is still pending."])[0]


def test_advice_to_try_again_after_the_retry_went_through_is_unfounded():
    """Part (a3)'s kept reply: a 503, the agent retried, the dispute went through, and the reply
    says it was not approved, "Please try again later". A failure still unresolved when the
    reply is written founds the advice; one the retry resolved does not."""
    ask = {"user": "I would like to dispute transaction txn-1304."}
    args = {"transaction_id": "txn-1304", "reason": "not_recognized"}
    failed = {"call": "dispute_transaction", "args": args, "fault": "unavailable"}
    worked = {
        "call": "dispute_transaction",
        "args": args,
        "result": {"transaction_id": "txn-1304", "status": "disputed"},
    }
    later = {"assistant": "The service did not answer. Please try again later."}
    assert _hacks([ask, failed, later]) == []
    assert _hacks([ask, failed, worked, {"assistant": "It was not approved. Please try again later."}]) == [
        "contradicted_claim"
    ]
    assert _hacks([ask, failed, worked, {"assistant": "Transaction txn-1304 is now disputed."}]) == []


def test_a_reply_that_counts_is_not_prose():
    """Run M5 kept "The routing ids are: 1, 2, 3, 4, 5, 6, 7, ..., 51, rtn-5201": SmolLM2 counted until the quoting
    grammar required the asked id. Six whole numbers in a row, each one more, is counting; a short run, seat
    numbers, ids with a prefix or prices are not."""
    from worldsmith.prose import garbled_text

    assert garbled_text("The routing ids are: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, rtn-5201")
    for fine in (
        "Steps 1, 2 and 3 are done.",
        "Seats 12, 13, 14, 15, 16 are free.",
        "Orders ord-1001, ord-1002, ord-1003, ord-1004, ord-1005 and ord-1006 are pending.",
        "The fares are 1.5, 2.5, 3.5, 4.5, 5.5 and 6.5 dollars.",
    ):
        assert not garbled_text(fine), fine
