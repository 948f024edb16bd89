"""The judge stage: a verdict for every trajectory, kept or dropped by the policy.

Deterministic checks and hack checks run on every trajectory; the critic runs on those
whose status the policy accepts (it costs a model call). A critic call that fails is
recorded and the trajectory is not kept (no verdict without its evidence).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from worldsmith.judge.answers import agent_texts, declines
from worldsmith.config import JudgeConfig
from worldsmith.context import RunContext
from worldsmith.judge.hacks import find_hacks
from worldsmith.judge.calibration import read_calibration, trusted_difficulties
from worldsmith.judge.checks import fault_recovery
from worldsmith.judge.critic import CORE_RUBRICS, PRESCRIPTIVE_RUBRICS, critique
from worldsmith.judge.stats import SECTIONS
from worldsmith.progress import LiveProgress
from worldsmith.records import CriterionResult, CriticReport, Task, Trajectory, Verdict
from worldsmith.judge.reward import reward_of
from worldsmith.judge.rubric import check_criterion, check_no_writes, check_order, check_writes
from worldsmith.stage import Shard, Stage, holds

K2_RUBRICS = (*CORE_RUBRICS, *PRESCRIPTIVE_RUBRICS)


def deterministic(task: Task, traj: Trajectory) -> list[CriterionResult]:
    results = [r for c in task.rubric.criteria if (r := check_criterion(c, task, traj)) is not None]
    # whole-episode checks beside the per-criterion ones: (id, kind, description, (passed, evidence) or None)
    for cid, kind, description, outcome in (
        ("order", "call", "expected calls in order", check_order(task.rubric.criteria, traj)),
        (
            "writes",
            "state",
            "the writes' net effect is the goal's, and no collection the task leaves alone changed",
            check_writes(task, traj),
        ),
        (
            "no_writes",
            "state",
            "the task asks for no change, and no call wrote (not even a write that changed nothing)",
            check_no_writes(task, traj),
        ),
    ):
        if outcome is not None:
            results.append(
                CriterionResult(
                    criterion_id=cid, kind=kind, description=description, passed=outcome[0], evidence=outcome[1]
                )
            )
    return results


def decide(
    cfg: JudgeConfig,
    task: Task,
    traj: Trajectory,
    critic: CriticReport | None,
    rubric_trusted: frozenset[str] | None = None,
) -> Verdict:
    """Apply the policy; every reason for dropping is kept, not just the first. `rubric_trusted`: the difficulties
    whose rubric reward the critic's calibration allows (None: no calibration)."""
    results = deterministic(task, traj)
    hacks = find_hacks(traj)
    handled, _ = fault_recovery(traj)
    reasons: list[str] = []
    if traj.status not in cfg.statuses:
        reasons.append(
            f"status:{traj.status}"
            + (f":{traj.reason.split(':')[0]}" if traj.status == "error" and traj.reason else "")
        )
    if cfg.require_deterministic:
        reasons += [f"criterion:{r.kind}:{r.criterion_id}" for r in results if not r.passed]
    reasons += [f"hack:{h.kind}" for h in hacks if h.kind in cfg.reject_hacks]
    if cfg.require_fault_recovery and handled is False:
        reasons.append("fault_not_handled")
    score = None
    judged = [c for c in task.rubric.criteria if c.kind == "judge"]
    if critic is None and cfg.require_judge_criteria and judged and traj.status in cfg.statuses:
        # no critic: a criterion with a deterministic form is checked by code; one only the critic can
        # judge is not passed by default
        for c in judged:
            if not c.declines:
                reasons.append(f"criterion:judge:{c.criterion_id}:unchecked")
                continue
            said, evidence = declines(agent_texts(traj))
            results.append(
                CriterionResult(
                    criterion_id=c.criterion_id, kind="judge", description=c.description, passed=said, evidence=evidence
                )
            )
            if not said:
                reasons.append(f"criterion:judge:{c.criterion_id}")
    if critic is not None:
        by_id = critic.rubrics
        for r in results:  # the critic's view beside the deterministic one, for the agreement rate
            if r.criterion_id in by_id:
                r.critic_passed, r.critic_reason = by_id[r.criterion_id].passed, by_id[r.criterion_id].reason
        for c in task.rubric.criteria:
            if c.kind == "judge":
                got = by_id.get(c.criterion_id)
                results.append(
                    CriterionResult(
                        criterion_id=c.criterion_id,
                        kind="judge",
                        description=c.description,
                        passed=got.passed if got else None,
                        evidence=got.reason if got else None,
                        source="critic",
                    )
                )
                if cfg.require_judge_criteria and critic.ok and not (got and got.passed):
                    reasons.append(f"criterion:judge:{c.criterion_id}")
        if critic.ok and cfg.require_critic_rubrics:
            reasons += [f"critic:{k}" for k in K2_RUBRICS if k in by_id and not by_id[k].passed]
        if not critic.ok:
            reasons.append("critic_failed")
        else:
            score = float(critic.score)
            if score < cfg.min_critic_score:
                reasons.append("critic_score")
    verdict = Verdict(
        trajectory_id=traj.trajectory_id,
        task_id=traj.task_id,
        agent_id=traj.agent_id,
        criteria=results,
        hacks=hacks,
        critic=critic,
        critic_score=score,
        faults=len(traj.faults),
        faults_handled=handled,
        passed=not reasons,
        reasons=reasons,
    )
    verdict.reward = reward_of(cfg, task, traj, verdict, rubric_trusted)
    return verdict


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
        task = tasks[traj.task_id]
        critic = None
        if cfg.critic and traj.status in cfg.statuses:
            async with sem:
                progress.in_flight += 1
                try:
                    critic = await critique(client, ctx.prompts, task, traj, seed=ctx.seed)
                finally:
                    progress.in_flight -= 1
        v = decide(cfg, task, traj, critic, trusted)
        writer.add(v)
        counts["critic_failed"] += critic is not None and not critic.ok
        counts["passed" if v.passed else "dropped"] += 1
        progress.advance(failed=not v.passed)

    async with ctx.client() as client:
        with writer, LiveProgress("judge", total=len(todo), tokens=lambda: ctx.usage.completion_tokens) as progress:
            await asyncio.gather(*(one(client, progress, t) for t in todo))
    verdicts = ctx.store.read(Verdict)
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
        **{f"drop:{k}": c for k, c in reasons.most_common(6)},
    }


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
            "drop:",
        }
    ),
    stats=SECTIONS,
)
