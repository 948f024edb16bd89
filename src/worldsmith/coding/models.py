"""What the coding package makes and returns: a verified bug task, the funnel of making them, the
judgement of a patch."""

from __future__ import annotations

from pydantic import BaseModel, Field

from worldsmith.records import CodingJudgement, CodingTask

BugTask = CodingTask  # the record (records.py); the name the coding package uses

__all__ = ["BugTask", "CodingJudgement", "CodingTask", "Funnel"]


class Funnel(BaseModel):
    """mutations tried -> tests broke -> gold verified (and why the others were dropped), by operator."""

    tried: int = 0
    broke: int = 0  # some baseline-passing test failed
    survived: int = 0  # every test still passed (the mutation was not caught)
    killed: int = 0  # the run hit the limits (an endless loop, a blown memory limit)
    verified: int = 0  # the gold patch made every FAIL_TO_PASS and PASS_TO_PASS test pass
    gold_failed: int = 0  # broke, but the gold run did not pass (flaky tests)
    too_broad: int = 0  # broke more than half the suite (an import error, not a behaviour)
    duplicate: int = 0
    by_operator: dict[str, dict[str, int]] = Field(default_factory=dict)

    def count(self, operator: str, what: str) -> None:
        setattr(self, what, getattr(self, what) + 1)
        row = self.by_operator.setdefault(operator, {})
        row[what] = row.get(what, 0) + 1

    def add(self, other: Funnel) -> None:
        for k in ("tried", "broke", "survived", "killed", "verified", "gold_failed", "too_broad", "duplicate"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        for op, row in other.by_operator.items():
            mine = self.by_operator.setdefault(op, {})
            for k, v in row.items():
                mine[k] = mine.get(k, 0) + v
