"""The judge, measured two-sided on the labelled judge set (tests/data/judge_set/, see its README):
the default policy keeps no bad episode but three known ones (part a2), and keeps at least 98% of the good work of the
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


# bad episodes the judge is known to keep, each for a reason no check reads yet (part a2, labelled
# 2026-12-03): qualities no record holds, an enum word the record contradicts, a refusal tried twice
KNOWN_KEPT_BAD = {
    "a2-trj_e72402589610a57c": "invented",  # "refundable, high-quality"
    "a2-trj_23204b772fde0958": "invented",  # "it was a high priority charge" (the record: low)
    "a2-trj_1f3698bdfe934fd3": "repeated_failing_call",  # recorded as repeated_refused_call, not rejected
}


def test_the_default_policy_keeps_no_bad_episode_but_the_known_ones(verdicts):
    """Every part's precision is 1.00 but part a2's, whose three kept bad episodes are these."""
    kept_bad = {v["id"]: v["reason"] for v in verdicts if v["label"] == "bad" and v["kept"]}
    assert kept_bad == KNOWN_KEPT_BAD, f"bad episodes kept: {kept_bad}"


def test_the_default_policy_keeps_a_capable_models_good_work(parts):
    for part in GOOD_WORK:
        if part in parts:
            s = parts[part]
            assert s["good"] >= 40 and s["recall"] >= 0.98, (part, s["kept_good"], s["good"])
