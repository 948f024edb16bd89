"""Judged by execution (issue 52, Kimi-Dev's BugFixer and TestWriter rewards). BugFixer (`judge_patch`): in a
fresh sandbox, the buggy tree gets the episode's patch; the patch must apply and edit no test file; then the
suite runs and every FAIL_TO_PASS and PASS_TO_PASS test must pass. TestWriter (`judge_test_patch`): the patch
may touch only test files; in two fresh sandboxes it goes onto the buggy world and onto the fixed one, and at
least one test it adds must fail on the first and pass on the second, every other test passing on the fixed
one. `judge` picks by the task's family. The judge stage calls it and puts `CodingJudgement.reward`
(tests fixed, tests kept, resolved) on the verdict."""

from __future__ import annotations

import time
from pathlib import Path

from worldsmith.coding.harness.ws_tools import ToolError, apply_patch_text, parse_patch
from worldsmith.coding.models import BugTask, CodingJudgement
from worldsmith.coding.mutate import is_test_file
from worldsmith.coding.repos import fetch, load_repos
from worldsmith.coding.sandbox import Box, Limits
from worldsmith.coding.testrun import FAILING, PASSING, run_tests
from worldsmith.config import resolve_path

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


def judge(task: BugTask, patch: str, pristine: Path, work: Path, backend: str = "auto") -> CodingJudgement:
    """The episode's patch judged by its task's family."""
    if task.family == "testwriter":
        return judge_test_patch(task, patch, pristine, work, backend)
    return judge_patch(task, patch, pristine, work, backend)


def judge_test_patch(
    task: BugTask,
    patch: str,
    pristine: Path,
    work: Path,
    backend: str = "auto",
    limits: Limits | None = None,
) -> CodingJudgement:
    """A TestWriter patch: `tests_fixed` 1.0 when at least one test it adds fails on the buggy world and passes
    on the fixed one (`discriminating`), `tests_kept` the share of the world's tests still passing on the fixed
    one; resolved when both hold, it touched only test files, and every test it adds passes on the fixed world."""
    t0 = time.monotonic()
    j = CodingJudgement(task_id=task.task_id, applied=False)
    if not patch.strip():
        j.problems.append("empty patch: no test was written")
        j.seconds = round(time.monotonic() - t0, 2)
        return j
    try:
        files = touched_files(patch)
    except ToolError as exc:
        j.problems.append(f"the patch does not parse: {exc}")
        return j
    j.source_edited = [f for f in files if not is_test_file(f)]
    runs = {}
    for side, world in (("buggy", task.bug_patch), ("fixed", task.fixed_patch)):
        with Box.fresh(pristine, work, prefix=f"judge-{side}-{task.task_id[:10]}-") as box:
            apply_patch_text(world, str(box.repo))
            try:
                apply_patch_text(patch, str(box.repo))
            except (ToolError, OSError, UnicodeDecodeError) as exc:
                j.problems.append(f"the patch does not apply: {exc}")
                j.seconds = round(time.monotonic() - t0, 2)
                return j
            runs[side] = run_tests(box, task.python_path, None, limits or JUDGE_LIMITS, backend)
    j.applied = True
    buggy, fixed = runs["buggy"], runs["fixed"]
    known = set(task.pass_to_pass)
    new = sorted(t for t in fixed.outcomes if t not in known)
    j.discriminating = [t for t in new if buggy.outcomes.get(t) in FAILING and fixed.outcomes.get(t) in PASSING]
    j.fail_to_pass = {t: f"{buggy.outcomes.get(t, 'missing')} -> {fixed.outcomes.get(t)}" for t in new}
    j.pass_to_pass_broken = {t: fixed.outcomes.get(t, "missing") for t in task.pass_to_pass if t not in fixed.passed}
    n_p = len(task.pass_to_pass)
    j.tests_fixed = 1.0 if j.discriminating else 0.0
    j.tests_kept = (n_p - len(j.pass_to_pass_broken)) / n_p if n_p else 1.0
    failing_new = [t for t in new if fixed.outcomes.get(t) not in PASSING]
    if j.source_edited:
        j.problems.append("the patch edits library code: " + ", ".join(j.source_edited))
    if failing_new:
        j.problems.append("added tests that fail on the fixed code: " + ", ".join(failing_new[:5]))
    if not (buggy.complete and fixed.complete):
        j.problems.append("a test run did not finish")
    j.resolved = (
        not j.source_edited
        and bool(j.discriminating)
        and not failing_new
        and j.tests_kept == 1.0
        and buggy.complete
        and fixed.complete
    )
    j.seconds = round(time.monotonic() - t0, 2)
    return j


def judge_coding_episode(task: BugTask, patch: str, coding, root: Path) -> CodingJudgement:
    """The judge stage's hook: `task` a `CodingTask`, `patch` its `CodingEpisode.patch`, `coding` the run's
    `cfg.coding`, `root` the project root (config paths are taken from it). Fetches the repository from the cache
    (once) and judges the patch by its family in fresh sandboxes. For `Reward`: verifiable = `resolved`,
    verifiable_fraction = `tests_fixed * tests_kept`."""
    repos_file = resolve_path(root, coding.repos_file)
    cache = resolve_path(root, coding.cache_dir)
    entry = next((e for e in load_repos(repos_file) if e.name == task.repo), None)
    if entry is None:
        raise ValueError(f"{task.task_id}: repository {task.repo!r} is not in {repos_file}")
    pristine = fetch(entry, cache, repos_file.parent).root
    return judge(task, patch, pristine, cache / "work", coding.backend)
