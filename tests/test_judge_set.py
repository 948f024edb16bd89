"""The judge, measured two-sided on the labelled judge set (tests/data/judge_set/, see its README):
the default policy keeps no bad episode of any part, and keeps at least 98% of the good work of the
kind a capable model writes. Labels were set before the judge ran; a failure here is the judge's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from judge_two_sided import figures, judge_all, load  # noqa: E402

GOOD_WORK = ("b", "b-heldout", "b-heldout2")  # a capable model's good episodes: recall >= 0.98


@pytest.fixture(scope="module")
def parts() -> dict[str, dict]:
    rows = load()
    assert len(rows) >= 200 and {r["label"] for r in rows} == {"good", "bad"}
    assert {"a", "b", "c"} <= {r["part"] for r in rows}, "the set has the default policy's and a capable model's parts"
    return figures(judge_all(rows))


def test_the_default_policy_keeps_no_bad_episode_of_any_part(parts):
    kept_bad = {p: s["kept_bad"] for p, s in parts.items() if s["kept_bad"]}
    assert kept_bad == {}, f"bad episodes kept (precision below 1.00): {kept_bad}"
    for part, s in parts.items():
        assert s["precision"] in (None, 1.0), (part, s["precision"])


def test_the_default_policy_keeps_a_capable_models_good_work(parts):
    for part in GOOD_WORK:
        if part in parts:
            s = parts[part]
            assert s["good"] >= 40 and s["recall"] >= 0.98, (part, s["kept_good"], s["good"])
