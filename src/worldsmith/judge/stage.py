"""The judge stage: a verdict for every trajectory, kept or dropped by the policy.

Each trajectory is judged by `judge.episode.judge_episode` (the one function the gym and the eval use too): the
rubric, the declared checks (the claim layer among them), and the critic where the policy asks for it, on those whose
status the policy accepts (it costs a model call). A critic call that fails is recorded and the trajectory is not
kept (no verdict without its evidence).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from worldsmith.context import RunContext
from worldsmith.judge.calibration import read_calibration, trusted_difficulties
from worldsmith.judge.coding import coding_verdict, is_coding, judgement_of
from worldsmith.judge.episode import judge_episode
from worldsmith.judge.stats import SECTIONS
from worldsmith.progress import LiveProgress
from worldsmith.records import CodingEpisode, CodingTask, Task, Trajectory, Verdict
from worldsmith.stage import Shard, Stage, holds


def agreement(verdicts: list[Verdict]) -> dict[str, float | int | None]:
    """How far the critic can be trusted, on the machine-checkable criteria where both judged:
    raw agreement; Cohen's kappa (agreement beyond what the two pass rates give by chance: a
    critic that passes everything scores the pass rate in raw agreement, 0 in kappa); and
    agreement within each class (of the criteria the checks passed, and of those they failed)."""
    pairs = [
        (bool(r.passed), bool(r.critic_passed))
        for v in verdicts
        for r in v.criteria
        if r.source == "deterministic" and r.critic_passed is not None
    ]
    n = len(pairs)
    if not n:
        return {"pairs": 0, "agreement": None, "kappa": None, "on_passed": None, "on_failed": None}
    observed = sum(a == b for a, b in pairs) / n
    p_check, p_critic = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    chance = p_check * p_critic + (1 - p_check) * (1 - p_critic)
    kappa = (observed - chance) / (1 - chance) if chance < 1 else (1.0 if observed == 1 else 0.0)
    passed, failed = [b for a, b in pairs if a], [not b for a, b in pairs if not a]
    return {
        "pairs": n,
        "agreement": round(observed, 3),
        "kappa": round(kappa, 3),
        "on_passed": round(sum(passed) / len(passed), 3) if passed else None,
        "on_failed": round(sum(failed) / len(failed), 3) if failed else None,
    }


async def make_verdicts(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    cfg = ctx.cfg.judge
    tasks = {t.task_id: t for t in ctx.store.read(Task)}
    done = ctx.store.existing_ids(Verdict)
    todo = [
        t
        for t in ctx.store.read(Trajectory)
        if t.trajectory_id not in done and t.task_id in tasks and holds(shard, t.task_id)
    ]
    counts: Counter[str] = Counter()
    trusted = trusted_difficulties(
        read_calibration(ctx.store.root), cfg.reward.rubric_min_kappa, cfg.reward.rubric_min_pairs
    )
    writer = ctx.store.writer(Verdict, flush_every=16)
    sem = asyncio.Semaphore(cfg.concurrency)

    async def one(client, progress: LiveProgress, traj: Trajectory) -> None:
        async with sem:
            progress.in_flight += 1
            try:
                v = await judge_episode(
                    cfg, tasks[traj.task_id], traj, client, ctx.prompts, seed=ctx.seed, rubric_trusted=trusted
                )
            finally:
                progress.in_flight -= 1
        writer.add(v)
        counts["critic_failed"] += v.critic is not None and not v.critic.ok
        counts["passed" if v.passed else "dropped"] += 1
        progress.advance(failed=not v.passed)

    if todo:
        async with ctx.client() as client:
            with writer, LiveProgress("judge", total=len(todo), tokens=lambda: ctx.usage.completion_tokens) as progress:
                await asyncio.gather(*(one(client, progress, t) for t in todo))
    coding = await asyncio.to_thread(judge_coding, ctx, shard, done)
    verdicts = [v for v in ctx.store.read(Verdict) if not is_coding(v)]  # coding episodes: counted apart
    agree = agreement(verdicts)
    reasons = Counter(":".join(r.split(":")[:2]) for v in verdicts for r in v.reasons)
    by_task: dict[str, list[bool]] = {}
    for v in verdicts:
        by_task.setdefault(v.task_id, []).append(v.passed)
    return {
        "verdicts": len(verdicts),
        "passed": sum(v.passed for v in verdicts),
        "new": len(todo),
        "tasks_solved": sum(any(p) for p in by_task.values()),
        "tasks_judged": len(by_task),
        "critic_failed": counts["critic_failed"],  # of the new verdicts (shards add up)
        "critic_agreement": agree["agreement"] if agree["pairs"] else "n/a",
        "critic_kappa": agree["kappa"] if agree["pairs"] else "n/a",
        "agreement_pairs": agree["pairs"],
        **coding,
        **{f"drop:{k}": c for k, c in reasons.most_common(6)},
    }


def judge_coding(ctx: RunContext, shard: Shard | None, done: set[str]) -> dict[str, int]:
    """A verdict for each coding episode not judged yet: its patch by execution, its replies by the reply checks."""
    tasks = {t.task_id: t for t in ctx.store.read(CodingTask)}
    todo = [
        e
        for e in ctx.store.read(CodingEpisode)
        if e.trajectory_id not in done and e.task_id in tasks and holds(shard, e.task_id)
    ]
    if not todo:
        return {}
    passed = 0
    with ctx.store.writer(Verdict, flush_every=16) as writer, LiveProgress("judge coding", total=len(todo)) as progress:
        for e in todo:
            task = tasks[e.task_id]
            v = coding_verdict(task, e, judgement_of(task, e, ctx.cfg.coding, ctx.root))
            writer.add(v)
            passed += v.passed
            progress.advance(failed=not v.passed)
    return {"coding_verdicts": len(todo), "coding_passed": passed}


def run(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    return asyncio.run(make_verdicts(ctx, shard))


STAGE = Stage(
    "judge",
    "A verdict per trajectory: rubric checks, hack checks, the critic, and the keep policy.",
    run,
    section="judge",
    splits_by=(Trajectory, "task_id"),
    totals=frozenset(
        {
            "verdicts",
            "passed",
            "tasks_solved",
            "tasks_judged",
            "critic_agreement",
            "critic_kappa",
            "agreement_pairs",
            "coding_verdicts",
            "coding_passed",
            "drop:",
        }
    ),
    stats=SECTIONS,
)
