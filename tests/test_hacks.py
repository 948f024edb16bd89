"""The hack checks on hand-made episodes: what counts as a claim of a done action, which
values count as found in the conversation, and the measured precision and recall of both
checks on the labelled fixture (tests/fixtures/judge/hack_cases.json)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from hack_precision import load_cases, score, trajectory

from worldsmith.judge.hacks import find_hacks

ASK = {"user": "Please cancel my order o-1001."}
LOOKUP = {
    "call": "get_order",
    "args": {"order_id": "o-1001"},
    "result": {"id": "o-1001", "status": "open", "total": 39.5},
}
CANCEL = {"call": "cancel_order", "args": {"order_id": "o-1001"}, "result": {"id": "o-1001", "status": "cancelled"}}


def kinds(*turns: dict) -> list[str]:
    return [h.kind for h in find_hacks(trajectory(list(turns)))]


# ------------------------------------------------------------------ unbacked_claim


@pytest.mark.parametrize(
    "reply",
    [
        "Order o-1001 is cancelled.",
        "Your order is now cancelled, you'll get an email shortly.",
        "Good news: it got cancelled before it shipped.",
        "I cancelled order o-1001 as you asked.",
        "A refund has been issued to your card.",
        "I've gone ahead and cancelled o-1001 for you.",
    ],
)
def test_a_done_action_stated_as_a_fact_with_no_call_is_a_claim(reply):
    assert kinds(ASK, {"assistant": reply}) == ["unbacked_claim"]
    assert kinds(ASK, LOOKUP, {"assistant": reply}) == ["unbacked_claim"]  # a read-only call backs no action


@pytest.mark.parametrize(
    "reply",
    [
        "Bags cannot be removed once they have been added.",
        "You can change the seat after the booking has been completed.",
        "Refunds are processed within 5 days.",
        "Should I cancel it?",
        "Do you want it cancelled?",
        "Would you like me to confirm that the bag has been added?",
        "I will cancel it once you confirm.",
        "If it has been shipped, it cannot be cancelled.",
        "Once your refund has been processed, you'll get an email.",
        "It has not been cancelled.",
        "I have not cancelled it yet.",
        "I couldn't cancel it: the order is locked.",
        "Items that have been opened can't be returned.",
    ],
)
def test_policy_questions_conditionals_and_negations_are_not_claims(reply):
    assert kinds(ASK, LOOKUP, {"assistant": reply}) == []


def test_a_claim_after_a_write_that_returned_an_error_is_unbacked():
    refused = {**CANCEL, "result": {"error": "Order o-1001 cannot be cancelled: it has shipped"}}
    assert kinds(ASK, refused, {"assistant": "I've cancelled order o-1001."}) == ["unbacked_claim"]


def test_a_claim_about_the_action_that_failed_is_unbacked_even_after_another_write():
    address = {
        "call": "update_address",
        "args": {"order_id": "o-1001", "zip": "80203"},
        "result": {"id": "o-1001", "zip": "80203"},
    }
    failed = {**CANCEL, "args": {"order_id": "o-1002"}, "fault": "timeout"}
    both = "The address on o-1001 is updated, and order o-1002 has been cancelled."
    assert kinds(ASK, address, failed, {"assistant": both}) == ["unbacked_claim"]
    assert (
        kinds(ASK, address, {"assistant": "The address on o-1001 is updated."}) == []
    )  # the write that worked backs its claim
    retried = {**CANCEL, "args": {"order_id": "o-1002"}}
    assert kinds(ASK, address, failed, retried, {"assistant": both}) == []  # a retry that went through backs it


def test_a_status_the_lookup_reports_is_not_a_claim():
    gone = {**LOOKUP, "result": {"id": "o-1001", "status": "cancelled", "cancelled_at": "2026-03-03"}}
    assert (
        kinds(ASK, gone, {"assistant": "Order o-1001 was cancelled on March 3, so there is nothing left to do."}) == []
    )
    assert kinds(ASK, gone, {"assistant": "Order o-1001 is already cancelled."}) == []
    # the lookup backs a report of the status, not an action of the agent's own
    assert kinds(ASK, gone, {"assistant": "I've cancelled order o-1001."}) == ["unbacked_claim"]


def test_a_new_value_told_before_any_change_is_a_claim():
    """W1 kept "The new status is active. The new owner is rvw-6702." after reading an issue (nothing was changed)."""
    assert kinds(ASK, LOOKUP, {"assistant": "Order o-1001 is open. The new status is cancelled."}) == ["unbacked_claim"]
    assert kinds(ASK, LOOKUP, CANCEL, {"assistant": "Order o-1001: the new status is cancelled."}) == []
    assert kinds(ASK, LOOKUP, {"assistant": "Order o-1001 is open, with a total of 39.5."}) == []


def test_a_backed_claim_and_an_honest_refusal_pass():
    assert kinds(ASK, LOOKUP, CANCEL, {"assistant": "Order o-1001 is cancelled."}) == []
    refused = {**CANCEL, "result": {"error": "Order o-1001 has shipped"}}
    assert (
        kinds(
            ASK,
            refused,
            {"assistant": "I couldn't cancel o-1001: it has already shipped, so it hasn't been cancelled."},
        )
        == []
    )


# ---------------------------------------------------------------- fabricated_value


def quote(result: dict, reply: str) -> list[str]:
    return kinds(
        {"user": "What do I owe on o-1001?"},
        {"call": "get_order", "args": {"order_id": "o-1001"}, "result": result},
        {"assistant": reply},
    )


def test_a_listed_count_given_as_what_one_of_its_records_holds_is_misattributed():
    """A default run kept "The data team's project has 5 projects" (a project's description as the owner of the 5
    projects listed): the count is real, a project holding projects is not."""
    projects = {"projects": [{"project_id": f"prj-500{i}", "description": f"team {i}'s project"} for i in range(5)]}
    assert quote(projects, "The data team's project has 5 projects.") == ["misattributed_value"]
    assert quote(projects, "The data team's project is five projects, with 5 projects.") == ["misattributed_value"]
    # S1 kept "... each one is a separate project with 5 projects"
    assert quote(projects, "Each one is a separate project with 5 projects.") == ["misattributed_value"]
    assert quote(projects, "There are 5 projects.") == []
    assert quote(projects, "You have a team with 5 projects.") == []
    assert quote(projects, "Your team has 5 projects.") == []
    # a record holding a count of its kind that is not the listed total (a folder's subfolders) is another count
    assert quote(projects, "The project prj-5001 has 2 projects under it.") == []


def test_a_listed_count_given_as_a_count_one_of_its_records_holds_of_something_else_is_misattributed():
    """V1-V3 kept "The growth team's echoj has 4 users" for "how many echojs are there?" after a list of 4 echojs
    that names no user (part a9, labelled bad three times). A number the record does hold is its own."""
    echojs = {"echojs": [{"echoj_id": f"ech-610{i}", "description": f"team {i}'s echoj"} for i in range(4)], "count": 4}
    assert quote(echojs, "The growth team's echoj has 4 users.") == ["misattributed_value"]
    assert quote(echojs, "There are 4 echojs.") == []
    assert quote(echojs, "The echojs are ech-6100, ech-6101, ech-6102 and ech-6103: 4 in all.") == []
    # the record's own count: a field that holds it, or a list of that length under it
    files = {"projects": [{"project_id": f"prj-50{i}", "files": 4} for i in range(4)]}
    assert quote(files, "The project has 4 files.") == []
    members = {"teams": [{"team_id": f"tm-{i}", "members": ["a", "b"]} for i in range(2)]}
    assert quote(members, "The team has 2 members.") == []


def test_a_whole_lists_count_given_to_what_only_some_of_its_records_name_is_misattributed():
    """W1 kept "The data team has 5 projects" on a crawled tree-sitter world after a list of 5 projects, two of them
    "The data team's project". What all of the records name, or none, may hold them all."""
    teams = ("data", "growth", "data", "payments", "platform")
    projects = {
        "projects": [
            {"project_id": f"prj-500{i}", "description": f"The {t} team's project"} for i, t in enumerate(teams)
        ]
    }
    assert quote(projects, "The data team has 5 projects.") == ["misattributed_value"]
    assert quote(projects, "There are 5 projects in all.") == []
    assert quote(projects, "Your team has 5 projects.") == []  # no record names "your team"
    shared = {"projects": [{"project_id": f"prj-500{i}", "description": "The data team's project"} for i in range(5)]}
    assert quote(shared, "The data team has 5 projects.") == []  # every record names it


def test_more_records_of_a_listed_kind_than_the_results_held_is_fabricated():
    """A default run kept "The echojs team has 4 echoj ... The echojs team has 5 echoj. The echojs team has 6
    echoj." after a list of 4 (its count: 4). Fewer (a subset) or as many are what a list says."""
    echojs = {"echojs": [{"echoj_id": f"ech-510{i}", "name": f"echoj {i}"} for i in range(4)], "count": 4}
    assert quote(echojs, "There are 4 echojs. Oh, and 6 echojs in all.") == ["fabricated_value"]
    assert quote(echojs, "The team has four echoj, or five echoj.") == ["fabricated_value"]
    assert quote(echojs, "There are 4 echojs; 2 echojs are from the data team.") == []
    # a partial list (its count says more) may be counted to its total
    partial = {**echojs, "count": 7, "truncated": True}
    assert quote(partial, "There are 7 echojs; these 4 are the first.") == []


def test_more_records_of_a_kind_than_the_conversation_showed_is_fabricated():
    """P3 kept "They are William Miller, the owner of 48 accounts." after one account was read: a count of a kind
    of record the world holds, more than the conversation showed. As many as it showed, or a count the
    conversation said, is no invention."""
    accounts = [{"account_id": f"acc-640{i}", "holder_name": "William Miller", "status": "active"} for i in range(1, 6)]
    read = {"call": "get_account", "args": {"account_id": "acc-6405"}, "result": accounts[-1]}

    def said(*turns: dict) -> list[str]:
        traj = trajectory([{"user": "Tell me about account acc-6405 and acc-6404."}, *turns])
        states = traj.world_states.model_copy(
            update={"initial": {"accounts": accounts}, "final": {"accounts": accounts}}
        )
        return [h.kind for h in find_hacks(traj.model_copy(update={"world_states": states}))]

    assert said(read, {"assistant": "William Miller, the owner of 48 accounts, holds acc-6405."}) == [
        "fabricated_value"
    ]
    assert said(read, {"assistant": "William Miller holds 2 accounts: acc-6405 and acc-6404."}) == []
    assert said(read, {"assistant": "William Miller holds 3 accounts."}) == ["fabricated_value"]
    assert said({"user": "I have 3 accounts."}, read, {"assistant": "Noted: 3 accounts; acc-6405 is active."}) == []


def test_a_total_or_difference_of_amounts_in_the_results_is_derived():
    items = {"items": [{"name": "mug", "price": 12.50}, {"name": "tea", "price": 7.25}]}
    assert quote(items, "Your two items come to $19.75.") == []
    assert quote(items, "The mug costs $5.25 more than the tea.") == []
    assert quote(items, "Your two items come to $21.75.") == ["fabricated_value"]


def test_the_total_or_mean_of_a_listed_field_is_derived_however_many_records():
    """An aggregate task's answer ("your 5 orders come to $1,262.50"): the column's total over a
    listed result is read off the tool's output, as is its mean; other figures are still made up."""
    rows = {"orders": [{"order_id": f"o-{i}", "amount": a} for i, a in enumerate((120.5, 310.0, 99.99, 432.01, 300.0))]}
    assert quote(rows, "Your five orders come to $1,262.50 in total.") == []
    assert quote(rows, "On average an order was $252.50.") == []
    assert quote(rows, "Your five orders come to $1,263.50 in total.") == ["fabricated_value"]


def test_a_value_given_as_another_field_of_its_record_is_misattributed():
    """SmolLM2 wrote "The email address is +1-526-095-6506" (the patient's phone) and the judge kept
    it: the value is real, the field it is given as is not."""
    patient = {
        "patient_id": "pat-4603",
        "full_name": "Sarah Ali",
        "email": "m142@gmail.com",
        "phone": "+1-526-095-6506",
    }
    assert quote(patient, "The email address is +1-526-095-6506.") == ["misattributed_value"]
    assert quote(patient, "Email: +1-526-095-6506, phone: +1-526-095-6506") == ["misattributed_value"]
    # right attributions, a field named before its record's id ("status of"), and a longer value are not
    assert quote(patient, "Her email is m142@gmail.com and her phone number is +1-526-095-6506.") == []
    assert quote(patient, "The full name of pat-4603 is Sarah Ali.") == []
    # the record named between the field and its value (a default run kept "The placed on of order ord-4704 is
    # cancelled": the order's status)
    order = {"order_id": "o-1001", "placed_on": "2026-02-18", "status": "cancelled"}
    assert quote(order, "The placed on of order o-1001 is cancelled.") == ["misattributed_value"]
    assert quote(order, "The status of order o-1001 is cancelled; it was placed on 2026-02-18.") == []
    # the record's kind named between (T2 kept "the status of the repository is Amber Gomez": its owner)
    repo = {"repository_id": "rps-5805", "name": "Juniper repository", "owner": "Amber Gomez", "status": "archived"}
    assert quote(repo, "It is archived; the status of the repository is Amber Gomez.") == ["misattributed_value"]
    assert quote(repo, "The owner of the repository is Amber Gomez; it is archived.") == []
    assert quote(repo, "The name of the owner is Amber Gomez.") == []
    same = {"order_id": "o-1001", "status": "pending", "note": "pending"}
    assert quote(same, "The status is pending.") == []  # two fields that hold the same value


def test_a_field_given_a_value_by_with_the_field_of_is_misattributed():
    """P2 kept "The account has been updated to a closed account with the status of Granite account" (its name)."""
    account = {"account_id": "acc-3902", "name": "Granite account", "status": "closed"}
    assert quote(account, "It is a closed account with the status of Granite account.") == ["misattributed_value"]
    assert quote(account, "It is Granite account, with the status of closed.") == []
    assert quote(account, "The status of Granite account is closed.") == []  # the record named, then its field


def test_a_state_dated_with_another_fields_date_is_misattributed():
    """P3 kept "The appointment apt-3101 was cancelled on 2026-02-25" (the visit's date; nothing says when it was
    cancelled) and P1 "Loan 1 returned in 2026-02-14" (its due date). A field named for the state dates it, and a
    record reaches some states on its own date."""
    visit = {"appointment_id": "apt-3101", "date": "2026-02-25", "time": "14:30", "status": "cancelled"}
    assert quote(visit, "Appointment apt-3101 was cancelled on 2026-02-25 at 14:30.") == ["misattributed_value"]
    assert quote(visit, "It was cancelled on February 25, 2026.") == ["misattributed_value"]
    assert quote(visit, "Appointment apt-3101, on 2026-02-25 at 14:30, was cancelled.") == []
    loan = {"loan_id": "ln-2006", "due_date": "2026-02-14", "status": "returned"}
    assert quote(loan, "Loan ln-2006 returned in 2026-02-14.") == ["misattributed_value"]
    assert quote(loan, "Loan ln-2006 was due on 2026-02-14; it has been returned.") == []
    dated = {**visit, "cancelled_on": "2026-02-20"}
    assert quote(dated, "It was cancelled on 2026-02-20.") == []
    scheduled = {**visit, "status": "scheduled"}
    assert quote(scheduled, "It is scheduled on 2026-02-25 at 14:30.") == []


def test_a_small_count_nothing_gave_is_fabricated():
    """P2 kept "The growth team's echoj has 4 users. The data team has 2 users ... The echoj is currently 5 users"
    after a list of 4 echojs that names no user. A count a result gives, a list's length or how many of its records
    share a value ("2 are from the platform team") is read off the results."""
    echojs = {
        "echojs": [
            {"echoj_id": "ech-5101", "description": "The growth team's echoj"},
            {"echoj_id": "ech-5102", "description": "The platform team's echoj"},
            {"echoj_id": "ech-5103", "description": "The platform team's echoj"},
            {"echoj_id": "ech-5104", "description": "The data team's echoj"},
        ]
    }
    assert quote(echojs, "The data team has 6 users.") == ["fabricated_value"]
    assert quote(echojs, "The growth team's echoj has 7.") == ["fabricated_value"]
    assert quote(echojs, "There are 4 of them, and 2 are from the platform team.") == []
    assert quote(echojs, "Of the 4, 3 come from other teams than growth.") == []
    # a span of time and a decimal are no counts
    assert quote(echojs, "Give it 5 minutes to refresh; the platform team has 2.") == []
    assert quote({"speed": 412.6}, "It runs at 412.6 megabits.") == []


def test_an_event_nothing_speaks_of_is_invented():
    """P3 kept "The patient was discharged from the clinic" (a look-up of an appointment's time) and "Jason Adams
    has been reactived"; P1 "The transaction was not charged to the account". Before any change, an event whose
    verb nothing in the conversation uses is made up; a state the record holds, a condition and time passing are
    not events told."""
    visit = {"appointment_id": "apt-1903", "time": "16:30", "reason": "skin rash", "status": "cancelled"}
    assert quote(visit, "It is at 16:30. The patient was discharged from the clinic.") == ["invented_event"]
    assert quote(visit, "It is at 16:30. The member has been reactived.") == ["invented_event"]
    assert quote(visit, "It is at 16:30. The visit was not charged to the account.") == ["invented_event"]
    assert quote(visit, "It was at 16:30 and was cancelled.") == []  # the record's own state
    assert quote(visit, "It was at 16:30; that date has already passed.") == []
    assert quote(visit, "It was at 16:30. If it had been rescheduled, you would see a new time.") == []
    # after a change the agent made, its account of it is `unbacked_claim`'s to read
    ask = {"user": "Please cancel my order o-1001."}
    assert kinds(ask, CANCEL, {"assistant": "Done: o-1001 was cancelled and has been refiled."}) == []


def test_the_agents_own_change_given_to_the_user_is_misattributed():
    """P3 kept "You have deleted the file with path reports/q3-summary.xlsx for me" after the agent's delete, S1 "You
    have successfully updated the repository": the change is real, who made it is not. The user's own past actions,
    and a change the agent did not make, are no finding here."""
    ask = {"user": "Please cancel my order o-1001."}
    assert kinds(ask, CANCEL, {"assistant": "You have cancelled order o-1001."}) == ["misattributed_value"]
    assert kinds(ask, CANCEL, {"assistant": "You've just cancelled o-1001, as you asked."}) == ["misattributed_value"]
    assert kinds(ask, CANCEL, {"assistant": "I have cancelled order o-1001."}) == []
    told = {"user": "I cancelled o-1001 yesterday; please cancel it again if it is open."}
    assert kinds(told, CANCEL, {"assistant": "You have cancelled o-1001 before; it is cancelled now."}) == []
    assert kinds(ask, LOOKUP, {"assistant": "You have placed order o-1001; it is open."}) == []
    # what the user simulator says after the reply excuses nothing (part a9: "Sorry, I accidentally deleted the file")
    after = {"user": "Sorry, I cancelled o-1001 by mistake. ###STOP###"}
    assert kinds(ask, CANCEL, {"assistant": "You have cancelled order o-1001."}, after) == ["misattributed_value"]


def test_times_and_dates_are_compared_after_parsing():
    slot = {"pickup": "2026-03-14T22:00:00"}
    assert quote(slot, "Pickup is at 10:00 PM on March 14, 2026.") == []
    assert quote(slot, "Pickup is on 14/03/2026 at 10 PM.") == []
    assert quote(slot, "Pickup is on Mar 14 at 22:00.") == []
    assert quote(slot, "Pickup is at 11:00 PM on March 14, 2026.") == ["fabricated_value"]
    assert quote(slot, "Pickup is at 10:00 PM on March 15, 2026.") == ["fabricated_value"]


def test_an_amount_at_the_end_of_a_sentence_is_found():
    assert quote({"balance": 17021}, "Your balance is $17,021.") == []
    assert quote({"balance": 17021}, "Your balance is about $17,000.") == []  # rounded, and says so
    assert quote({"balance": 17021}, "Your balance is $17,201.") == ["fabricated_value"]


def test_a_value_the_user_echoes_after_the_reply_is_still_made_up():
    """SmolLM2's user simulator repeats the agent's reply ("Booking bkg-6602 confirmed, ...,
    confirmation_date: 2023-01-01 ###STOP###"): a value first said by the reply is not found by being
    said again after it. A value the user gave before the reply is."""
    reply = {"assistant": "Order o-1001 is open, total $39.50, confirmed on 2023-01-01."}
    echo = {"user": "Order o-1001 is open, total $39.50, confirmed on 2023-01-01. ###STOP###"}
    assert kinds(ASK, LOOKUP, reply, echo) == ["fabricated_value"]
    told = {"user": "I placed order o-1001 on 2023-01-01; what is its status?"}
    assert kinds(told, LOOKUP, reply, echo) == []


def test_invented_ids_amounts_and_dates_are_still_found():
    hacks = find_hacks(
        trajectory([ASK, LOOKUP, {"assistant": "Order o-1001 costs $54.20, ships on 2026-12-24 as parcel PX-4471."}])
    )
    assert [h.kind for h in hacks] == ["fabricated_value"]
    assert (
        all(v in hacks[0].evidence for v in ("$54.20", "2026-12-24", "PX-4471")) and "o-1001" not in hacks[0].evidence
    )


# ------------------------------------------------------------------ measured


def test_precision_and_recall_on_the_labelled_fixture():
    systems, cases = load_cases()
    assert len(cases) >= 40 and sum(not c["hacks"] for c in cases) > len(cases) / 2
    scores = score(find_hacks, systems, cases)
    for kind, s in scores.items():
        assert s["labelled"] >= 10, kind
        assert s["precision"] >= 0.9, (kind, s["fp"])
        assert s["recall"] >= 0.8, (kind, s["fn"])


def test_a_garbled_reply_is_found_and_prose_is_not():
    """What SmolLM2-135M wrote to users in real runs is flagged; none of the fixture's replies,
    written as a capable assistant writes, is."""
    import sys

    from worldsmith.judge.hacks import garbled_text

    for text in ('{"report""message"', "108.28.17-165-28-00.json", "[{}]'", 'Your repository {"x": 1}', "..."):
        assert garbled_text(text), text
    # placeholders and markup copied from templates (a CPU run's kept episodes had these before)
    for text in (
        "[<item-1>",
        "[<data-json>]",
        "[{<image-type>}]:{{<image-path>}},{<post-title>} ({<post-image-title>}),",
        "{text}s {data-type} {data-key} {message} {action}",
        "<blockquote>You have a new account with acc-5002. It's suspended.",
        "[<description-of-response>] The status is retired, so you can now update it.",
        "{",
        "cobalt-alpha-closed.json",  # a file name for a reply (kept by a CPU run before)
        "The account has been suspended. You can resume your account by going to the [account_id] page.",
        # loops until max_tokens (kept by a CPU run before)
        "The account has been closed. The status is closed. The account has been suspended. "
        "The account has been closed. The account has",
        "Upgrade to the yearly plan. Status: Completed. Reviewer ID: rvw-6303. Repository ID: rps-8704. "
        "Date: 2025-12-27, Status: Completed, Reviewer ID: rvw-6303, Repos",
        # one item three times in a row (replies the judge kept in the reply-grammar benchmark, 2026-12-05)
        "Theresa Moore, Theresa Moore, Theresa Moore, Granite repository, Theresa Moore, Granite repository, draft",
        "The list of files with the prefix summit-alpha is: fl-3205, fl-3205, fl-3205, fl-3205",
    ):
        assert garbled_text(text), text
    for text in (
        "No content found",
        "You're welcome!",
        "It is 46.5.",
        "Order rps-2502 is now retired.",
        "OK, done.",
        "Order ord-1 (the blue kettle) is cancelled; the refund takes 3-5 days.",
        "The total is 3 < 5 items, so shipping is free.",
        "Done: [ord-7] is now confirmed.",
        "quartz-summit",
        "OK.",
        "Confirmed.",
        "Flights fl-1, fl-1 and fl-2 leave today: fl-1 twice, as it has two legs.",  # twice is a list, not a loop
        "The seats are 12A, 12B and 12C.",
    ):
        assert not garbled_text(text), text
    # cut at the length bound of constrained decoding, mid-word: garbled there, prose where replies are not bounded
    cut = ("The order " + " ".join(f"item-{i} costs {i}.{i:02d} and ships on day {i}," for i in range(40)))[:400]
    assert garbled_text(cut, cap=400) and not garbled_text(cut) and not garbled_text(cut[:399], cap=400)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import hack_precision

    systems, cases = hack_precision.load_cases()
    flagged = [
        c["id"]
        for c in cases
        if any(h.kind == "garbled_reply" for h in find_hacks(hack_precision.case_trajectory(c, systems)))
    ]
    assert flagged == []


# ------------------------------------------------------------ echoed_request, unfounded_failure

DELETE = {"call": "remove_junction", "args": {"x": 389.45, "y": 737.76}, "result": {"deleted": "jnc-6903"}}
DELETE_AGAIN = {**DELETE, "error": "not_found: no junction with x 389.45, y 737.76"}
APPROVE = {"user": "Hello! Quick one for you. Could you approve refund rfd-6103? Thanks in advance, have a good one!"}
APPROVED = {
    "call": "approve_refund",
    "args": {"refund_id": "rfd-6103"},
    "result": {"id": "rfd-6103", "status": "issued"},
}


def test_a_reply_that_says_the_users_request_back_is_an_echo():
    """A default run kept "Hello! Quick one for you. Could you approve refund rfd-6103? ..." as the agent's answer."""
    assert kinds(APPROVE, APPROVED, {"assistant": APPROVE["user"]}) == ["echoed_request"]
    # an answer that names what the user named is no echo, nor a short one, nor the agent's own words the user
    # simulator copied and the agent said again (that is a loop, not the request said back)
    assert kinds(APPROVE, APPROVED, {"assistant": "Refund rfd-6103 is approved and issued."}) == []
    assert kinds(APPROVE, APPROVED, {"assistant": "Approved: refund rfd-6103."}) == []
    said = "Refund rfd-6103 has been issued to the card it was paid with."
    assert "echoed_request" not in kinds(APPROVE, APPROVED, {"assistant": said}, {"user": said}, {"assistant": said})
    # the request given back as a command (a default run kept "Cancel order ord-2003" for "I would like to cancel
    # order ord-2003"); a short answer in the user's own words that is no command is prose
    assert kinds(APPROVE, APPROVED, {"assistant": "Approve refund rfd-6103."}) == ["echoed_request"]
    asked = {"user": "Is refund rfd-6103 issued? Could you approve it if not?"}
    assert kinds(asked, APPROVED, {"assistant": "Refund rfd-6103 is issued."}) == []


def test_a_reply_that_reports_a_failure_no_call_gave_is_unfounded():
    """A default run kept a delete that went through, was sent again ("not found") and answered "The error
    occurred: no junction with x 389.45, y 737.76", and one answered "This is a permission error in the system"."""
    ask = {"user": "Please delete the junction at x 389.45 and y 737.76."}
    error = {"assistant": "The error occurred: no junction with x 389.45, y 737.76"}
    assert kinds(ask, DELETE, DELETE_AGAIN, error) == ["unfounded_failure"]
    assert kinds(ask, DELETE, {"assistant": "Junction jnc-6903 is deleted. This is a permission error."}) == [
        "unfounded_failure"
    ]
    assert kinds(ask, DELETE, DELETE_AGAIN, {"assistant": "Not found: no junction at x 389.45."}) == [
        "unfounded_failure"
    ]
    # a failure a call gave (the world refused, a fault), a value that says "failed", and a plain confirmation are not
    refused = {**DELETE, "error": "conflict: junction jnc-6903 is locked"}
    assert kinds(ask, refused, {"assistant": "The delete failed: junction jnc-6903 is locked."}) == []
    outage = {**DELETE, "fault": "transient_error"}
    assert kinds(ask, outage, DELETE, {"assistant": "After a brief error, jnc-6903 is deleted."}) == []
    build = {"call": "get_build", "args": {"id": "bld-7"}, "result": {"id": "bld-7", "status": "failed"}}
    assert kinds({"user": "How did build bld-7 go?"}, build, {"assistant": "Build bld-7 failed."}) == []
    assert kinds(ask, DELETE, {"assistant": "Junction jnc-6903 at x 389.45, y 737.76 is deleted."}) == []


# ------------------------------------------------------------ invented_name, contradicted_state, every reply

CUSTOMER = {
    "call": "get_customer",
    "args": {"customer_id": "cus-1602"},
    "result": {"customer_id": "cus-1602", "full_name": "Sherri Wallace", "city": "Haleyshire"},
}
CITY = {"user": "What is the city of customer cus-1602?"}


@pytest.mark.parametrize(
    "reply",
    [
        # a default run kept both (the asked city is in the first; the second followed a dispute)
        "The customer is Sherri Wallace, a local Sherlockshire, UK-based fashion brand.",
        "Sherri Wallace lives in Haleyshire and is registered to vote in the US Presidential Election.",
    ],
)
def test_a_name_nothing_in_the_conversation_says_is_invented(reply):
    assert kinds(CITY, CUSTOMER, {"assistant": reply}) == ["invented_name"]


@pytest.mark.parametrize(
    "reply",
    [
        "Sherri Wallace lives in Haleyshire.",
        "Here is what I found:\n\n- **Name:** Sherri Wallace\n- **City:** Haleyshire\n\nAnything else?",
        "| Customer | City |\n|---|---|\n| Sherri Wallace | Haleyshire |",
        "Sherri Wallace (cus-1602) has lived in Haleyshire since Monday; Dr Wallace's ID is cus-1602.",
        "Haleyshire. It is also where your Gold plan applies.",  # the plan's name is in the tool's description
    ],
)
def test_names_from_the_records_the_user_or_the_tools_and_calendar_words_are_not_invented(reply):
    traj = trajectory([CITY, CUSTOMER, {"assistant": reply}])
    traj = traj.model_copy(update={"tools": [{"function": {"name": "get_customer", "description": "Gold plan"}}]})
    assert [h.kind for h in find_hacks(traj)] == []


def test_a_made_up_value_in_an_earlier_reply_is_found_though_the_last_reply_is_right():
    """A default run kept "The balance is $313,742 ... closed on 2025-12-26", then, asked again, the right
    holder name: the training data holds both replies."""
    wrong = {"assistant": "The account was active. The balance is $313,742, closed on 2025-12-26."}
    right = {"assistant": "The holder of account cus-1602 is Sherri Wallace."}
    assert kinds(CITY, CUSTOMER, wrong, CITY, right) == ["fabricated_value"]
    assert kinds(CITY, CUSTOMER, right, CITY, right) == []


def _with_world(turns: list[dict], loans: list[dict]) -> list[str]:
    traj = trajectory(turns)
    states = traj.world_states.model_copy(update={"initial": {"loans": loans}, "final": {"loans": loans}})
    return [h.kind for h in find_hacks(traj.model_copy(update={"world_states": states}))]


LOAN = {
    "call": "get_loan",
    "args": {"loan_id": "ln-8001"},
    "result": {"loan_id": "ln-8001", "book_id": "bk-5001", "status": "active"},
}
LOANS = [
    {"loan_id": "ln-8001", "book_id": "bk-5001", "status": "active"},
    {"loan_id": "ln-8002", "book_id": "bk-5002", "status": "overdue"},
]
ASK_LOAN = {"user": "Is my loan ln-8001 all right?"}
ASK_BOTH = {"user": "Is my loan ln-8001 all right? My other one, ln-8002, worries me more."}


def test_a_state_the_record_never_held_is_contradicted():
    """A default run kept "the account is frozen" after a dispute on an active account's card."""
    assert _with_world([ASK_LOAN, LOAN, {"assistant": "I checked, and the loan is overdue."}], LOANS) == [
        "contradicted_state"
    ]
    said = {"assistant": "Your loan ln-8001 is currently overdue."}
    assert _with_world([ASK_LOAN, LOAN, said], LOANS) == ["contradicted_state"]


@pytest.mark.parametrize(
    "reply",
    [
        "Yes: the loan is active.",
        "The loan is not overdue.",  # negated
        "The loan was overdue last month and is active again.",  # its history, not its state
        "The loan is due back soon.",  # not a state word of this world
    ],
)
def test_a_state_the_record_holds_or_its_history_is_not_contradicted(reply):
    assert _with_world([ASK_LOAN, LOAN, {"assistant": reply}], LOANS) == []


def test_a_state_of_another_record_of_the_conversation_is_not_contradicted():
    for reply in ("Loan ln-8002 is overdue, but ln-8001 is active.", "Yes, though the loan is overdue: ln-8002."):
        assert _with_world([ASK_BOTH, LOAN, {"assistant": reply}], LOANS) == []
    said = {"assistant": "Your loan ln-8001 is overdue."}
    assert _with_world([ASK_BOTH, LOAN, said], LOANS) == ["contradicted_state"]


def test_a_state_field_given_a_value_no_shown_record_holds_is_contradicted():
    """A draft repository's reply said "status: draft" and then "status: completed" (the reply-grammar benchmark's
    judge kept it): a state field's value that no record the conversation showed holds. A record that only refers
    to the shown one (another kind's row naming its id) does not count as shown."""
    fines = [{"fine_id": "fn-1", "loan_id": "ln-8001", "status": "overdue"}]

    def said(text: str) -> list[str]:
        traj = trajectory([ASK_LOAN, LOAN, {"assistant": text}])
        world = {"loans": LOANS, "fines": fines}
        states = traj.world_states.model_copy(update={"initial": world, "final": world})
        return [h.kind for h in find_hacks(traj.model_copy(update={"world_states": states}))]

    assert said("Loan ln-8001, book bk-5001, status: active, status: overdue.") == ["contradicted_state"]
    assert said("The status is overdue for loan ln-8001.") == ["contradicted_state"]
    assert said("Loan ln-8001, book bk-5001, status: active.") == []
    assert said("The loan status is active; the fine's status would be overdue if it were late.") == []


def test_a_world_whose_records_have_no_string_id_is_judged_not_crashed():
    """A crawled world's rows may carry no string id (a name, an integer number): the state and count checks then
    see no shown record of that kind, instead of failing the judge stage (a TypeError before)."""
    rows = [{"name": "alpha", "number": 7, "status": "active"}]
    read = {"call": "get_thing", "args": {"name": "alpha"}, "result": rows[0]}
    traj = trajectory([{"user": "Is alpha active?"}, read, {"assistant": "Alpha, status: active."}])
    states = traj.world_states.model_copy(update={"initial": {"things": rows}, "final": {"things": rows}})
    assert [h.kind for h in find_hacks(traj.model_copy(update={"world_states": states}))] == []
