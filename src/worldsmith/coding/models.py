"""What the coding package makes and returns: a verified bug task, the funnel of making them, the
judgement of a patch."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from worldsmith.records import content_id


class BugTask(BaseModel):
    """A BugFixer task proven by execution: the bug made the FAIL_TO_PASS tests fail in the sandbox,
    and the gold patch on the buggy tree made every FAIL_TO_PASS and PASS_TO_PASS test pass."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    family: Literal["bugfix"] = "bugfix"
    repo: str  # repos.yaml name
    version: str
    repo_sha256: str
    source: str  # pypi:name==version | path:... | git:url@commit
    python_path: str = "."
    held_out: bool = False
    operator: str  # the mutation operator (never shown to the agent)
    file: str
    line: int
    description: str
    bug_patch: str  # pristine -> buggy: applied to the pristine tree, it makes the task's world
    gold_patch: str  # buggy -> pristine: the fix
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    statement: str
    statement_source: Literal["grammar", "llm"] = "grammar"
    failure_output: dict[str, str] = Field(default_factory=dict)  # a few failing tests' pytest text
    seconds: dict[str, float] = Field(default_factory=dict)  # mutant run, gold run

    @staticmethod
    def make_id(repo: str, version: str, key: str) -> str:
        return content_id(repo, version, key, prefix="bug-")


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


class CodingJudgement(BaseModel):
    """A patch judged by execution in a fresh sandbox (`coding.verify.judge_patch`)."""

    task_id: str
    applied: bool  # the patch applied to the buggy tree
    tests_edited: list[str] = Field(default_factory=list)  # test files the patch touched (not allowed)
    fail_to_pass: dict[str, str] = Field(default_factory=dict)  # test -> outcome after the patch
    pass_to_pass_broken: dict[str, str] = Field(default_factory=dict)  # the kept tests that no longer pass
    tests_fixed: float = 0.0  # share of FAIL_TO_PASS that pass
    tests_kept: float = 0.0  # share of PASS_TO_PASS that still pass
    resolved: bool = False  # applied, no test edited, every listed test passes (Kimi-Dev's reward 1)
    problems: list[str] = Field(default_factory=list)
    seconds: float = 0.0

    @property
    def reward(self) -> dict[str, float]:
        """The reward's components as `verdicts.reward` takes them."""
        return {"tests_fixed": self.tests_fixed, "tests_kept": self.tests_kept, "resolved": float(self.resolved)}
