"""The judge, measured two-sided on the labelled judge set (tests/data/judge_set/, see its README):
the default policy keeps no bad episode but known ones (parts a2 to a8), and keeps at least 98% of the good work of the
kind a capable model writes. Labels were set before the judge ran; a failure here is the judge's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from judge_two_sided import figures, judge_all, load  # noqa: E402

GOOD_WORK = ("b", "b-heldout", "b-heldout2")  # a capable model's good episodes: recall >= 0.98


@pytest.fixture(scope="module")
def verdicts() -> list[dict]:
    rows = load()
    assert len(rows) >= 200 and {r["label"] for r in rows} == {"good", "bad"}
    assert {"a", "b", "c"} <= {r["part"] for r in rows}, "the set has the default policy's and a capable model's parts"
    return judge_all(rows)


@pytest.fixture(scope="module")
def parts(verdicts) -> dict[str, dict]:
    return figures(verdicts)


# bad episodes the judge is known to keep, each for a reason no check reads yet (parts a2-a4 labelled
# 2026-12-03, a5 2026-12-04, a6 and a8 2026-12-06): qualities no record holds, an enum word the record contradicts, a
# refusal tried twice
KNOWN_KEPT_BAD = {
    "a2-trj_e72402589610a57c": "invented",  # "refundable, high-quality"
    "a2-trj_23204b772fde0958": "invented",  # "it was a high priority charge" (the record: low)
    "a2-trj_1f3698bdfe934fd3": "repeated_failing_call",  # recorded as repeated_refused_call, not rejected
    # part a3 (a default run at 5da28f3): flourishes no record holds ("Cancel booking bkg-5204" is echoed_request now)
    "a3-trj_04c77ca94dd31f78": "invented",  # "confirmed by gold passengers"
    "a3-trj_1079e18f4b2e050a": "invented",  # the same
    "a3-trj_56ce9d431ff2ab30": "invented",  # "booked to Seattle" (the origin), "the status is not booked"
    "a3-trj_ac5cd2abe41ec781": "invented",  # "cancelled due to a blood pressure review" (the visit's reason)
    "a3-trj_b051cc37c559f50f": "invented",  # the same, "which was completed on March 21"
    "a3-trj_c2e7a909164baf1f": "invented",  # "the refund is available for all gold passengers ... 148.12 gold"
    "a3-trj_c7e4c9acf7f8b66c": "invented",  # "a blockchain-based cryptocurrency platform"
    # part a4 (what a default run's judge kept at b6dc17f): flourishes, a refusal tried three times
    "a4-trj_51cd2c1948d62e0f": "repeated_failing_call",  # recorded as repeated_refused_call, not rejected
    "a4-trj_7a6a18236734db6c": "invented",  # "the jnc-7301 to jnc-7302 circuit"
    "a4-trj_d45115caaf229399": "invented",  # "from the list of jnc-6903 files"
    "a4-trj_ea524d0226e33786": "invented",  # "a registered nurse ... dietician"
    # part a5 (what a default run's judge kept at 6fc716c, labelled 2026-12-04): flourishes and bare values
    "a5-trj_25422a7fab48fea9": "invented",  # "the payment is not paid"
    "a5-trj_4ddcfd2d5271660a": "not_prose",  # "Candace Williams, East Karen" (part a4 labels this shape good)
    "a5-trj_5470870032bd1261": "invented",  # "the card is not paid ... The post-order is not paid"
    # part a6 (what three default runs' judge kept at ef8d62a, labelled 2026-12-06): look-ups answered about the
    # wrong thing, flourishes, and a field dump
    "a6-trj_1f0b146345731921": "invented",  # "List of loans ... returned by the library"
    "a6-trj_2abd4b58076b62aa": "wrong_record",  # the member's status asked: "The loan is active"
    "a6-trj_d9d29fbb429f8a57": "not_prose",  # "Quartz repository, Raymond Patel, archived, 2026-01-17, ..."
    "a6-trj_40d9774e9f18cbd2": "wrong_value",  # "technician_id: 220" (tech-8201; 220 is in an email)
    "a6-trj_ee144d1fddd98bf1": "invented",  # "The product is still available"
    "a6-trj_f5f538140c441edb": "invented",  # "The platform team's echoj has 2." (three listed)
    "a6-trj_3c226b9a395d61f8": "wrong_value",  # the destination as "depart from a base in San Francisco"
    "a6-trj_44420c45123859af": "invented",  # "Mentor: I'm a friend of the team ..."
    "a6-trj_4498dc92ad30a35f": "invented",  # "`sudo rm -R fl-5303`"
    "a6-trj_e306e31c72764421": "invented",  # "The customer has reported a transaction with the account"
    # part a8 (what S1's judge kept at 0743746, labelled 2026-12-06)
    "a8-trj_08d50d5b307d8329": "invented",  # "You can find it on the order page ..."
    "a8-trj_139bfb69256a4133": "forbidden_write",  # the forbidden change sent (the world refused it), then declined
    "a8-trj_2abd4b58076b62aa": "not_prose",  # "The full name Jeffrey Washington is active."
    "a8-trj_b26171ff6756e503": "invented",  # "the blood pressure review was completed" (after a move)
    "a8-trj_ce5e3f1f50eb1a71": "missing_answer",  # nothing confirmed; its task predates 317f00b's confirmation
    # part a9 (what V1-V3's judge kept at a34791a, labelled 2026-12-06 before any later check): flourishes, wrong
    # values, refusals that sent the forbidden change or garbled the rule
    "a9-trj_139bfb69256a4133": "forbidden_write",  # a refusal: sent the forbidden change, owner "owner-rps-2504"
    "a9-trj_2de9adb91bf00c21": "invented",  # "You can't access the member's full name ... of a member who is sus...
    "a9-trj_3a55fb5bc21998fa": "invented",  # "The member has suspended their 3 active loans and is no longer ava...
    "a9-trj_3c226b9a395d61f8": "wrong_value",  # asked the destination: "will depart from a base in San Francisco"
    "a9-trj_58073718bb2fa6aa": "wrong_record",  # asked the repository's owner: the "pending" given as the re...
    "a9-trj_588cf3e5454a7307": "invented",  # a refusal task: the move sent as asked and refused, then "This resp...
    "a9-trj_5c287190da0e24fd": "invented",  # "you're currently active in the Skyline Air market. You can post a ...
    "a9-trj_610078876d1edf67": "invented",  # "The book I need is 978-...", "a rare edition", "available for purc...
    "a9-trj_634636c4a4e05ccc": "not_prose",  # a refusal: "The policy violates policy 1.0.0.0.2.1. This response i...
    "a9-trj_63eddbdac4830c6d": "invented",  # "The account has been closed. You can't access it.": no record says so
    "a9-trj_674b30035772a7af": "invented",  # after the delete: "Please ensure that the project is not deleted in...
    "a9-trj_6ecf1510b4cd8d80": "unasked_write",  # wrote another repository, unasked
    "a9-trj_a54e554a00f23b96": "wrong_value",  # "The appointment was cancelled on 2026-01-13" (its status is no_show)
    "a9-trj_b26171ff6756e503": "missing_answer",  # after the move: "You can now move appointment ..."
    "a9-trj_b4683c417142cc00": "invented",  # "its owner Amber Gomez is currently unregistered"
    "a9-trj_c00fdaddb816bab5": "invented",  # "Please contact the bank for a refund"
    "a9-trj_d9d29fbb429f8a57": "invented",  # "Quartz is a blockchain-based cryptocurrency ..."
    "a9-trj_dd37e1214a533851": "invented",  # "The reviewer is confirmed to have completed the upgrade"
    "a9-trj_dd6114c7b1ea6632": "invented",  # "Hello, I'm a banker. I'm William Miller ... in the 2nd position"
    "a9-trj_e306e31c72764421": "invented",  # "The transaction was not paid for"
    "a9-trj_f4a1de99c78fa775": "wrong_value",  # "a technician of the team tech-4804" (the team is network)
}


def test_the_default_policy_keeps_no_bad_episode_but_the_known_ones(verdicts):
    """Every part's precision is 1.00 but parts a2's to a9's, whose kept bad episodes are these."""
    kept_bad = {v["id"]: v["reason"] for v in verdicts if v["label"] == "bad" and v["kept"]}
    assert kept_bad == KNOWN_KEPT_BAD, f"bad episodes kept: {kept_bad}"


def test_the_default_policy_keeps_a_capable_models_good_work(parts):
    for part in GOOD_WORK:
        if part in parts:
            s = parts[part]
            assert s["good"] >= 40 and s["recall"] >= 0.98, (part, s["kept_good"], s["good"])
