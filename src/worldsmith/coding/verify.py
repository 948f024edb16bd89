"""Judged by execution (issue 52, Kimi-Dev's BugFixer reward): in a fresh sandbox, the buggy tree
gets the episode's patch; the patch must apply and edit no test file; then the suite runs and every
FAIL_TO_PASS and PASS_TO_PASS test must pass. The judge stage calls `judge_patch` and puts
`CodingJudgement.reward` (tests fixed, tests kept, resolved) on the verdict."""

from __future__ import annotations

import time
from pathlib import Path

from worldsmith.coding.harness.ws_tools import ToolError, apply_patch_text, parse_patch
from worldsmith.coding.models import BugTask, CodingJudgement
from worldsmith.coding.mutate import is_test_file
from worldsmith.coding.sandbox import Box, Limits
from worldsmith.coding.testrun import run_tests

JUDGE_LIMITS = Limits(wall_s=300, cpu_s=300, memory_mb=2048)


def touched_files(patch: str) -> list[str]:
    out = []
    for old, new, _ in parse_patch(patch):
        for p in (old, new):
            if p and p not in out:
                out.append(p)
    return out


def judge_patch(
    task: BugTask,
    patch: str,
    pristine: Path,
    work: Path,
    backend: str = "auto",
    limits: Limits | None = None,
) -> CodingJudgement:
    """The episode's `patch` (a unified diff against the buggy tree) judged in a fresh sandbox.
    `pristine` is the repository's cached tree (`repos.fetch(...).root`)."""
    t0 = time.monotonic()
    j = CodingJudgement(task_id=task.task_id, applied=False)
    if not patch.strip():
        j.problems.append("empty patch: nothing was changed")
        j.applied = True
    else:
        try:
            files = touched_files(patch)
        except ToolError as exc:
            j.problems.append(f"the patch does not parse: {exc}")
            j.seconds = time.monotonic() - t0
            return j
        j.tests_edited = [f for f in files if is_test_file(f)]
    with Box.fresh(pristine, work, prefix=f"judge-{task.task_id[:12]}-") as box:
        apply_patch_text(task.bug_patch, str(box.repo))
        if patch.strip():
            try:
                apply_patch_text(patch, str(box.repo))
                j.applied = True
            except (ToolError, OSError, UnicodeDecodeError) as exc:
                j.problems.append(f"the patch does not apply: {exc}")
                j.seconds = time.monotonic() - t0
                return j
        tr = run_tests(box, task.python_path, None, limits or JUDGE_LIMITS, backend)
    if not tr.complete:
        j.problems.append("the test run did not finish: " + "; ".join(tr.problems or ["killed at the limits"]))
    j.fail_to_pass = {t: tr.outcomes.get(t, "missing") for t in task.fail_to_pass}
    j.pass_to_pass_broken = {t: tr.outcomes.get(t, "missing") for t in task.pass_to_pass if t not in tr.passed}
    n_f, n_p = len(task.fail_to_pass), len(task.pass_to_pass)
    j.tests_fixed = sum(o in ("passed", "xfailed") for o in j.fail_to_pass.values()) / n_f if n_f else 1.0
    j.tests_kept = (n_p - len(j.pass_to_pass_broken)) / n_p if n_p else 1.0
    if j.tests_edited:
        j.problems.append("the patch edits test files: " + ", ".join(j.tests_edited))
    j.resolved = j.applied and not j.tests_edited and tr.complete and j.tests_fixed == 1.0 and j.tests_kept == 1.0
    j.seconds = round(time.monotonic() - t0, 2)
    return j
