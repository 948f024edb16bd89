"""Answer checks: whether the agent's replies convey a value, after normalising numbers,
dates, times, case and spacing, with negated mentions not counting."""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from hack_precision import trajectory

from worldsmith.judge.answers import agent_texts, mentions, values_in


def passed(value, *texts: str) -> bool:
    return mentions(value, list(texts))[0]


@pytest.mark.parametrize(
    "text", ["Your balance is $23,553.", "It is 23553 in total", "That's 23,553.00 today", "USD 23,553 is due"]
)
@pytest.mark.parametrize("value", [23553, 23553.0, "23553.0", "23553", "$23,553"])
def test_numbers_match_in_any_common_format(value, text):
    assert passed(value, text)


def test_numbers_match_whole_and_by_value():
    assert not passed(12, "We shipped 120 items.")
    assert not passed(120, "We shipped 12 items.")
    assert not passed(23553, "That's $23,553.50.")
    assert passed("19.75", "The total is $19.750")
    assert not passed(1001, "Order o-1001 is open.")  # a number inside an id is part of the id
    # nor is one inside a phone number with its country code (P3 kept "no shows: 1" for "+1-489-541-6959")
    assert not passed(1, "Her phone number is +1-489-541-6959.")
    assert passed("+1-489-541-6959", "Her phone number is +1-489-541-6959.")
    assert passed(1, "She missed 1 appointment; her phone is +1-489-541-6959.")


DUE = [
    "Due 2026-03-14.",
    "Due on March 14, 2026.",
    "Due 14 March 2026",
    "Due Mar 14",
    "Due 03/14/2026",
    "Due 14/03/2026",
    "Due Saturday, March 14th",
]


@pytest.mark.parametrize("text", DUE)
@pytest.mark.parametrize("value", ["2026-03-14", date(2026, 3, 14), "March 14, 2026", "2026-03-14T09:30:00"])
def test_dates_match_in_any_common_format(value, text):
    assert passed(value, text)


def test_other_dates_do_not_match():
    assert not passed("2026-03-14", "Due March 15, 2026.")
    assert not passed("2026-03-14", "Due 2025-03-14.")  # a year that disagrees
    assert not passed("2026-03-14", "Due 03/15/2026.")


def test_times_match_in_12_and_24_hour_form():
    for text in ("Pickup at 10:00 PM.", "Pickup at 10 pm", "Pickup at 22:00."):
        assert passed("22:00:00", text), text
    assert not passed("22:00:00", "Pickup at 11 PM.")


NEGATED = [
    "It has not shipped.",
    "It isn't shipped yet.",
    "Not yet shipped, sorry.",
    "It was never shipped.",
    "Your order hasn\u2019t shipped.",
]


@pytest.mark.parametrize("text", NEGATED)
def test_a_negated_mention_does_not_count(text):
    ok, evidence = mentions("shipped", [text])
    assert not ok and "negated" in evidence


@pytest.mark.parametrize(
    "text", ["Shipped!", "Good news: it shipped on Monday.", "It did not arrive yet. It shipped Monday, though."]
)
def test_a_plain_mention_counts(text):
    assert passed("shipped", text)


def test_phrases_match_whole_words_ignoring_case_and_spacing():
    assert not passed("ship", "Your order shipped.")
    assert passed("Blue  Kettle", "The blue\nkettle is cancelled.")
    assert passed("o-1001", "Order #o-1001 is open.")
    ok, evidence = mentions("refund", ["Order o-1001 is cancelled."])
    assert not ok and evidence == "no reply mentions 'refund'"


def test_any_reply_counts_not_only_the_last():
    t = trajectory(
        [
            {"user": "What do I owe?"},
            {"call": "get_balance", "args": {}, "result": {"balance": 23553}},
            {"assistant": "You owe $23,553, due March 14, 2026."},
            {"user": "Thanks!"},
            {"assistant": "You're welcome!"},
        ]
    )
    assert agent_texts(t) == ["You owe $23,553, due March 14, 2026.", "You're welcome!"]
    ok, evidence = mentions(23553, agent_texts(t))
    assert ok and evidence == "reply 0 mentions 23553 as '$23,553'"
    assert passed("2026-03-14", *agent_texts(t))
    assert not passed(23553, "You're welcome!")


def test_values_in_gives_canonical_forms():
    assert values_in("Order o-1001 costs $54.20, due 14/03/2026 at 10 PM.") == {
        "id:o1001",
        "num:54.2",
        "date:2026-03-14",
        "time:22:00",
    }
    assert values_in("Ref #W2378156: USD 1,005.38 on Mar 3") == {"id:w2378156", "num:1005.38", "day:03-03"}
    assert values_in("IBAN DE89 3704 0044 0532 0130 00, 5-7 days, the 2nd") == {
        "id:de89370400440532013000",
        "num:5",
        "num:7",
    }
    assert values_in("between 1:00 and 3:00 PM") == {"time:01:00", "time:13:00", "time:15:00"}  # 1:00 may be either
    assert values_in("03/04/2026") == {"date:2026-03-04", "date:2026-04-03"}  # month or day first


def test_a_numbered_lists_item_numbers_are_no_values():
    """P2 kept an answer to "how many flights go to Denver" (4) that said no count: its list's fourth item,
    "4. Flights with departure time in Chicago", passed for one. A lone "Total: 4." is a value."""
    listed = "The flights are: 1. Flights to Denver; 2. Flights from Chicago; 3. Flights; 4. Flights; 5. Flights"
    assert not passed(4, listed)
    assert not passed(2, "Here they are:\n1. fl-6801\n2. fl-6802")
    assert passed(4, "Total: 4. That is all of them.")
    assert passed(2, "There are 2 flights:\n1. fl-6801\n2. fl-6802")


def test_a_state_said_only_as_the_start_of_a_field_name_is_not_said():
    """S1 kept "the transaction is 30.24, ..., and the posted on is 2026-01-24, ..., the status is frozen" as telling
    the transaction's status "posted": the word was the field posted_on's name, the status it gave the account's."""
    from worldsmith.judge.rubric import check_answer
    from worldsmith.records import Criterion

    fields = {"transaction_id", "posted_on", "status"}
    assert not mentions("posted", ["The posted on is 2026-01-24, the status is frozen."], fields)[0]
    assert not mentions("posted", ["posted_on: 2026-01-24"], fields)[0]
    assert mentions("posted", ["It was posted on 2026-01-24."], fields)[0]  # the state, with its date
    assert mentions("posted", ["The posted on is 2026-01-24 and the status is posted."], fields)[0]
    result = {"transaction_id": "txn-7703", "posted_on": "2026-01-24", "status": "posted"}
    c = Criterion(
        criterion_id="c1", kind="answer", contains=["posted"], description="tells the user the status: posted"
    )

    def passes(reply: str) -> bool:
        turns = [
            {"user": "The status of txn-7703?"},
            {"call": "get_transaction", "result": result},
            {"assistant": reply},
        ]
        return check_answer(c, trajectory(turns))[0]

    assert not passes("The posted on is 2026-01-24, the status is frozen.")
    assert passes("Transaction txn-7703 was posted on 2026-01-24.")
