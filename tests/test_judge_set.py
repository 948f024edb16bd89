"""The judge, measured two-sided on the labelled judge set (tests/data/judge_set/, see its README), each part under
the policy its side runs: the small default policy's episodes under `strict` (the packaged default), a capable
model's under `lenient` (a GPU user's policy with no critic). Labels were set before the judge ran; a failure here
is the judge's.

The figures are floors, set at what the judge scored when they were written: they may only rise. No episode is
listed by id (a list of known failures would pass whatever the judge does to them)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from judge_two_sided import figures, judge_all, load  # noqa: E402

# (part or group, policy): (precision floor, recall floor)
FLOORS: dict[tuple[str, str], tuple[float, float]] = {
    # the default policy (SmolLM2-135M) under strict: dev parts, each labelled by reading
    ("a", "strict"): (0.87, 0.87),
    ("a2", "strict"): (1.0, 1.0),
    ("a3", "strict"): (0.75, 0.66),
    ("a4", "strict"): (0.62, 0.83),
    ("a5", "strict"): (0.75, 0.6),
    ("a6", "strict"): (0.9, 0.95),
    ("a7", "strict"): (1.0, 1.0),
    ("a8", "strict"): (1.0, 1.0),
    ("a9", "strict"): (0.85, 0.9),
    ("a10", "strict"): (0.85, 0.97),
    # blind: every episode a fresh default run's judge kept and 50 it dropped, labelled by a reader who saw no verdict
    ("a11", "strict"): (0.53, 1.0),
    # blind, three fresh default runs (X4-X6): scored once at 0.804 / 0.953 by the judge that ran in them; dev since
    ("a12", "strict"): (0.83, 0.95),
    # blind, three fresh default runs with every family (Y1-Y3, e682599): scored once at 0.640 / 0.937
    ("a13", "strict"): (0.78, 0.93),
    # blind, three fresh default runs (Z1-Z3, ec9f8dc): scored once at 0.899 / 0.993 by the judge that ran in them; dev
    # since
    ("a14", "strict"): (0.91, 0.99),
    # blind, three fresh default runs with today's date in the prompt (Q1-Q3, 99240ad): scored once at 0.904 / 0.993 by
    # the judge that ran in them; dev since
    ("a15", "strict"): (0.91, 0.99),
    ("default policy, all parts", "strict"): (0.85, 0.91),
    # a capable model's good and bad work under lenient (dev: the judge was built looking at them)
    ("capable, dev (b + c)", "lenient"): (1.0, 1.0),
    ("capable, held-out", "lenient"): (1.0, 1.0),
    ("capable, held-out 2", "lenient"): (1.0, 1.0),
    # the blind parts, written by authors who had not read the judge; each scored once (its blind figure is in
    # tests/data/judge_set/README.md), a dev part after
    ("capable, blind 1 (cap-blind3 + 4)", "lenient"): (0.95, 1.0),
    ("capable, blind 2 (cap-blind5 + 6)", "lenient"): (0.95, 0.99),
    # 0.89 until 2026-12-07: one bad episode was dropped for a wrong reason ("$1.00" read as a count of renewals);
    # an amount is no count (issue 49) and the fault it has (a day count, with no today in its prompt) is unread
    ("capable, blind 3 (cap-blind7)", "lenient"): (0.87, 0.91),
    ("capable, blind 4 (cap-blind8)", "lenient"): (0.92, 0.96),
    # blind (today's date in the agent's prompt): scored once at 0.809 / 0.949 (bd02986); dev since
    ("capable, blind 5 (cap-blind9)", "lenient"): (0.91, 0.94),
    # blind: scored once at 0.790 / 0.868 (8174604); dev since
    ("capable, blind 6 (cap-blind10)", "lenient"): (0.82, 1.0),
}
DEFAULT_PARTS = ("a", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10")


@pytest.fixture(scope="module")
def parts() -> dict[tuple[str, str], dict]:
    rows = load()
    assert len(rows) >= 800 and {r["label"] for r in rows} == {"good", "bad"}
    assert {"a", "b", "c"} <= {r["part"] for r in rows}, "the set has the default policy's and a capable model's parts"
    out: dict[tuple[str, str], dict] = {}
    for policy in ("strict", "lenient"):
        judged = judge_all(rows, policy)
        groups = figures(judged)
        default = [j for j in judged if j["part"] in DEFAULT_PARTS]
        groups["default policy, all parts"] = figures(default)["all"]
        out |= {(name, policy): s for name, s in groups.items()}
    return out


@pytest.mark.parametrize(("part", "policy"), sorted(FLOORS))
def test_the_judge_keeps_its_floors(parts, part, policy):
    precision, recall = FLOORS[part, policy]
    s = parts[part, policy]
    assert s["good"] and s["bad"], f"{part}: a two-sided figure needs good and bad episodes ({s['good']}/{s['bad']})"
    assert s["precision"] >= precision and s["recall"] >= recall, (
        f"{part} under {policy}: precision {s['precision']} (floor {precision}), recall {s['recall']} "
        f"(floor {recall}); kept {s['kept_good']} of {s['good']} good and {s['kept_bad']} of {s['bad']} bad"
    )


def test_strict_drops_more_bad_work_than_lenient_on_the_small_policy(parts):
    """What the policies are for: on the 135M policy's episodes strict keeps fewer bad ones than lenient (which
    drops only what the world contradicts), and on a capable model's good work lenient keeps what strict cannot
    source word by word (its world knowledge, its courtesy in its own words)."""
    small_strict, small_lenient = (
        parts["default policy, all parts", "strict"],
        parts["default policy, all parts", "lenient"],
    )
    assert small_strict["kept_bad"] < small_lenient["kept_bad"] / 2
    capable_strict, capable_lenient = parts["capable, dev (b + c)", "strict"], parts["capable, dev (b + c)", "lenient"]
    assert capable_lenient["kept_good"] > capable_strict["kept_good"]
