"""The critic, calibrated on the verifiable reward (K2 keeps its self-critique reward honest on tasks that have a
checker). What is calibrated is the critic the reward uses: the pointwise `critique` (its 1-10 score, passed at
`judge.min_critic_score`), with the judge stage's seed. For tasks where one episode earned the verifiable reward and
another did not, the critic scores both; its pass/fail is compared with the checker's per difficulty (Cohen's kappa:
a critic that passes everything agrees on the winners and scores 0), and `judge.reward.rubric_min_kappa` refuses the
rubric reward for every difficulty whose kappa is below it, measured on fewer than `rubric_min_pairs` judged pairs, or
never measured, once a calibration exists.

    worldsmith judge calibrate       # -> data/runs/<run_id>/critic_calibration.json, a table per difficulty
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldsmith.config import JudgeConfig
from worldsmith.judge.critic import critique
from worldsmith.judge.reward import verifiable as is_verifiable
from worldsmith.llm import LLMClient, Prompts
from worldsmith.records import Task, Trajectory, Verdict

CALIBRATION_FILE = "critic_calibration.json"


@dataclass
class Pair:
    task: Task
    a: Trajectory
    b: Trajectory
    truth: str  # A | B: the episode that earned the verifiable reward


def calibration_pairs(
    tasks: dict[str, Task],
    trajs: list[Trajectory],
    verdicts: list[Verdict],
    per_task: int = 2,
    cfg: JudgeConfig | None = None,
) -> list[Pair]:
    """Pairs of episodes of one task, one with the verifiable reward and one without, the winner shown first and
    second in turn (so a critic that prefers a position scores no agreement beyond chance). A verdict judged before
    rewards were kept has its verifiable part worked out again from its checks (`cfg`'s policy)."""
    policy = cfg or JudgeConfig()
    by_id = {t.trajectory_id: t for t in trajs}
    verifiable = {
        v.trajectory_id: bool(v.reward.verifiable)
        if v.reward is not None
        else is_verifiable(policy, v, by_id[v.trajectory_id])
        for v in verdicts
        if v.trajectory_id in by_id
    }
    by_task: dict[str, tuple[list[Trajectory], list[Trajectory]]] = {}
    for t in sorted(trajs, key=lambda t: t.trajectory_id):
        if t.trajectory_id in verifiable and t.task_id in tasks:
            won, lost = by_task.setdefault(t.task_id, ([], []))
            (won if verifiable[t.trajectory_id] else lost).append(t)
    pairs = []
    for task_id, (won, lost) in sorted(by_task.items()):
        for w, loser in list(zip(won, lost, strict=False))[:per_task]:
            first = len(pairs) % 2 == 0
            pairs.append(Pair(tasks[task_id], w if first else loser, loser if first else w, "A" if first else "B"))
    return pairs


def cohen_kappa(truth: list, said: list) -> float | None:
    """Cohen's kappa between two labelings (any labels); None without items."""
    n = len(truth)
    if not n:
        return None
    observed = sum(t == s for t, s in zip(truth, said, strict=True)) / n
    pt, ps = Counter(truth), Counter(said)
    chance = sum(pt[k] * ps[k] for k in set(pt) | set(ps)) / (n * n)
    return round((observed - chance) / (1 - chance), 4) if chance < 1 else (1.0 if observed == 1 else 0.0)


async def calibrate(
    client: LLMClient, prompts: Prompts, pairs: list[Pair], seed: int, concurrency: int = 8, min_score: int = 6
) -> dict:
    """The pointwise critic's score of both episodes of each pair (the stage's critic, its seed), passed at
    `min_score`, against the verifiable reward: agreement and kappa per difficulty and over all. A pair counts as
    judged when the critic answered for both of its episodes."""
    sem = asyncio.Semaphore(concurrency)

    async def one(task: Task, traj: Trajectory):
        async with sem:
            return await critique(client, prompts, task, traj, seed=seed)

    episodes = [(p, traj, traj is (p.a if p.truth == "A" else p.b)) for p in pairs for traj in (p.a, p.b)]
    reports = await asyncio.gather(*(one(p.task, t) for p, t, _ in episodes))
    rows: dict[str, dict[str, list[bool]]] = {}
    failed: Counter[str] = Counter()
    for i in range(0, len(episodes), 2):
        (p, _, won_a), (_, _, won_b) = episodes[i], episodes[i + 1]
        ra, rb = reports[i], reports[i + 1]
        if not (ra.ok and rb.ok):
            failed[p.task.difficulty] += 1
            continue
        for key in (p.task.difficulty, "all"):
            r = rows.setdefault(key, {"truth": [], "said": []})
            r["truth"] += [won_a, won_b]
            r["said"] += [ra.score >= min_score, rb.score >= min_score]
    out = {}
    for key, r in sorted(rows.items()):
        n = len(r["truth"])
        out[key] = {
            "pairs": n // 2,
            "episodes": n,
            "agreement": round(sum(a == b for a, b in zip(r["truth"], r["said"], strict=True)) / n, 4),
            "kappa": cohen_kappa(r["truth"], r["said"]),
            "said": {"pass": sum(r["said"]), "fail": n - sum(r["said"])},
        }
    for difficulty, n in failed.items():
        out.setdefault(difficulty, {"pairs": 0, "agreement": None, "kappa": None, "said": {}})["unjudged"] = n
    return out


def write_calibration(run_root: Path, figures: dict[str, Any], model: str) -> Path:
    path = run_root / CALIBRATION_FILE
    path.write_text(json.dumps({"critic_model": model, "by_difficulty": figures}, indent=1))
    return path


def read_calibration(run_root: Path) -> dict[str, Any] | None:
    path = run_root / CALIBRATION_FILE
    return json.loads(path.read_text()) if path.exists() else None


def trusted_difficulties(
    calibration: dict[str, Any] | None, min_kappa: float | None, min_pairs: int = 1
) -> frozenset[str] | None:
    """The difficulties whose rubric reward is kept: measured on at least `min_pairs` judged pairs at `min_kappa` or
    above; the rest (below it, on fewer pairs, or never measured) are refused. A kappa of one pair is 1.0 or 0, not a
    measurement. None: no calibration or no threshold, so nothing is refused on its account."""
    if calibration is None or min_kappa is None:
        return None
    by = calibration.get("by_difficulty", {})
    return frozenset(d for d, f in by.items() if d != "all" and rubric_refusal(f, min_kappa, min_pairs) is None)


def rubric_refusal(figures: dict[str, Any], min_kappa: float, min_pairs: int) -> str | None:
    """Why one difficulty's calibration `figures` refuse the rubric reward, or None when they keep it."""
    if figures.get("pairs", 0) < min_pairs:
        return f"{figures.get('pairs', 0)} judged pairs < {min_pairs}"
    if figures.get("kappa") is None:
        return "no kappa"
    if figures["kappa"] < min_kappa:
        return f"kappa < {min_kappa}"
    return None
