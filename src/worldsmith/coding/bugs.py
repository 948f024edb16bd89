"""BugFixer tasks made by execution (SWE-smith's recipe): a mutation is kept only when some of the
project's tests fail after it and every FAIL_TO_PASS and PASS_TO_PASS test passes after the gold
revert, both run in the sandbox before the task exists.

`make_bug_tasks(repo, ...)` runs the repository's suite once as a baseline (twice: a test whose
outcome differs is flaky and left out), then tries mutations round-robin over the operators in a
seeded order, at most `parallel` sandboxes at once, until it has `per_repo` verified tasks or has
tried `max_tries` mutations."""

from __future__ import annotations

import hashlib
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from worldsmith.coding.harness.ws_tools import apply_patch_text
from worldsmith.coding.models import BugTask, Funnel
from worldsmith.coding.mutate import OPERATORS, Mutation, find_mutations, source_files, unified_diff
from worldsmith.coding.repos import Repo
from worldsmith.coding.sandbox import Box, Limits
from worldsmith.coding.statement import api_called, bug_report, public_api
from worldsmith.coding.testrun import TestRun, run_tests

MAX_F2P_SHARE = 0.5  # a mutation that fails more than this share of the suite breaks the import, not a behaviour
KEEP_FAILURE_TEXTS = 3


class BaselineError(RuntimeError):
    pass


@dataclass
class Baseline:
    passing: frozenset[str]
    seconds: float
    flaky: frozenset[str]


def baseline(repo: Repo, work: Path, backend: str = "auto", limits: Limits | None = None) -> Baseline:
    """The tests that pass on the pristine tree, twice (those that differ are flaky)."""
    runs: list[TestRun] = []
    for _ in range(2):
        with Box.fresh(repo.root, work, prefix=f"base-{repo.name}-") as box:
            tr = run_tests(box, repo.python_path, repo.tests, limits or Limits(wall_s=300, cpu_s=300), backend)
        if not tr.complete or not tr.passed:
            tail = (tr.result.stdout + tr.result.stderr)[-1500:]
            raise BaselineError(f"{repo.repo_id}: the pristine suite did not run ({tr.problems}):\n{tail}")
        runs.append(tr)
    a, b = runs
    flaky = frozenset(t for t in set(a.outcomes) | set(b.outcomes) if a.outcomes.get(t) != b.outcomes.get(t))
    return Baseline(frozenset(a.passed & b.passed) - flaky, min(a.result.seconds, b.result.seconds), flaky)


def ordered_mutations(repo: Repo, seed: int) -> list[tuple[Mutation, bytes]]:
    """Every mutation of the repository, in a seeded round-robin over the operators (so each is tried)."""
    by_op: dict[str, list[tuple[Mutation, bytes]]] = {op: [] for op in OPERATORS}
    for rel in source_files(repo.root, repo.python_path, repo.exclude):
        source = (repo.root / rel).read_bytes()
        for m in find_mutations(rel, source):
            by_op[m.operator].append((m, source))
    rng = random.Random(f"{seed}:{repo.repo_id}")
    for items in by_op.values():
        rng.shuffle(items)
    out = []
    while any(by_op.values()):
        for op in OPERATORS:
            if by_op[op]:
                out.append(by_op[op].pop())
    return out


def _attempt(
    repo: Repo,
    base: Baseline,
    mutation: Mutation,
    source: bytes,
    work: Path,
    grammar: dict,
    api: dict[str, str],
    seed: int,
    backend: str,
) -> tuple[str, BugTask | None]:
    """One mutation through the funnel: (survived | killed | too_broad | gold_failed | verified, the task)."""
    buggy = mutation.apply(source)
    bug_patch = unified_diff(mutation.file, source, buggy)
    gold_patch = unified_diff(mutation.file, buggy, source)
    wall = max(20.0, base.seconds * 6)  # an endless loop made by the mutation is killed here
    limits = Limits(wall_s=wall, cpu_s=int(wall), memory_mb=2048)
    t0 = time.monotonic()
    with Box.fresh(repo.root, work, prefix=f"mut-{repo.name}-") as box:
        apply_patch_text(bug_patch, str(box.repo))
        mutant = run_tests(box, repo.python_path, repo.tests, limits, backend)
    mutant_s = time.monotonic() - t0
    if not mutant.complete:
        return "killed", None
    f2p = sorted(t for t in base.passing if t not in mutant.passed)
    if not f2p:
        return "survived", None
    if len(f2p) > MAX_F2P_SHARE * len(base.passing):
        return "too_broad", None
    p2p = sorted(base.passing - set(f2p))
    # the gold revert, run on a fresh copy of the buggy tree
    t1 = time.monotonic()
    with Box.fresh(repo.root, work, prefix=f"gold-{repo.name}-") as box:
        apply_patch_text(bug_patch, str(box.repo))
        apply_patch_text(gold_patch, str(box.repo))
        gold = run_tests(box, repo.python_path, repo.tests, limits, backend)
    gold_s = time.monotonic() - t1
    if not gold.complete or any(t not in gold.passed for t in f2p + p2p):
        return "gold_failed", None
    task_id = BugTask.make_id(repo.name, repo.version, mutation.key)
    n = int(hashlib.sha256(f"{seed}:{task_id}".encode()).hexdigest()[:8], 16)
    statement = bug_report(
        grammar,
        repo.name,
        repo.version,
        f2p,
        mutant.failures,
        api_called(repo.root, f2p, api),
        seed=n,
    )
    failures = {t: mutant.failures[t] for t in f2p if t in mutant.failures}
    task = BugTask(
        task_id=task_id,
        repo=repo.name,
        version=repo.version,
        repo_sha256=repo.sha256,
        source=repo.source,
        python_path=repo.python_path,
        held_out=repo.held_out,
        operator=mutation.operator,
        file=mutation.file,
        line=mutation.line,
        description=mutation.description,
        bug_patch=bug_patch,
        gold_patch=gold_patch,
        fail_to_pass=f2p,
        pass_to_pass=p2p,
        statement=statement,
        failure_output=dict(list(failures.items())[:KEEP_FAILURE_TEXTS]),
        seconds={"mutant": round(mutant_s, 2), "gold": round(gold_s, 2)},
    )
    return "verified", task


def make_bug_tasks(
    repo: Repo,
    work: Path,
    grammar: dict,
    per_repo: int = 20,
    max_tries: int = 200,
    parallel: int = 2,
    seed: int = 0,
    backend: str = "auto",
    on_progress: Callable[[str, Funnel], None] | None = None,
    known: set[str] | None = None,
    base: Baseline | None = None,
) -> tuple[list[BugTask], Funnel]:
    """Verified bug tasks of one repository (tasks already in `known` by id are not made again)."""
    work.mkdir(parents=True, exist_ok=True)
    base = base or baseline(repo, work, backend)
    api = public_api(repo.root, repo.python_path, repo.exclude)
    funnel = Funnel()
    tasks: list[BugTask] = []
    seen_sources: set[str] = set()
    queue = iter(ordered_mutations(repo, seed))
    lock = threading.Lock()
    tried = 0

    def next_job():
        nonlocal tried
        for m, source in queue:
            digest = hashlib.sha256(m.file.encode() + m.apply(source)).hexdigest()
            if digest in seen_sources:
                funnel.count(m.operator, "duplicate")
                continue
            seen_sources.add(digest)
            if known and BugTask.make_id(repo.name, repo.version, m.key) in known:
                continue
            tried += 1
            return m, source
        return None

    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        running: dict[Future, Mutation] = {}
        while True:
            while len(running) < max(1, parallel) and tried < max_tries and len(tasks) < per_repo:
                job = next_job()
                if job is None:
                    break
                m, source = job
                running[pool.submit(_attempt, repo, base, m, source, work, grammar, api, seed, backend)] = m
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                m = running.pop(fut)
                outcome, task = fut.result()
                with lock:
                    funnel.count(m.operator, "tried")
                    if outcome in ("gold_failed", "verified", "too_broad"):
                        funnel.count(m.operator, "broke")
                    funnel.count(m.operator, outcome)
                    if task is not None:  # one in flight past per_repo is kept too
                        tasks.append(task)
                if on_progress:
                    on_progress(f"{repo.name}: {m.operator} at {m.file}:{m.line} -> {outcome}", funnel)
    return tasks, funnel
