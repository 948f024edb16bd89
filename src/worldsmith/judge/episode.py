"""One function judges one episode: `judge_episode`. The judge stage, the RL environment (gym) and the eval (which
plays through the judge stage) call it, with the same policy, the same calibration gate and the same critic seed.

    verdict = await judge_episode(cfg.judge, task, traj, client=client, prompts=prompts, seed=cfg.run.seed,
                                  rubric_trusted=trusted)

It runs the deterministic checks (the task's rubric, the writes' net effect, the order of calls), the declared reply
and episode checks (`checks.CHECKS`, the claim layer among them), fault recovery, and where the policy asks for it
the critic: K2's rubrics and score (`judge.critic`), and a ruling on the unverifiable claims only (`judge.unverifiable:
critic`). `decide` is the same judgment without any model call, for callers that already hold the critic's reports.
"""

from __future__ import annotations

from worldsmith.config import JudgeConfig
from worldsmith.judge.answers import agent_texts, declines
from worldsmith.judge.checks import CHECKS, Episode, fault_recovery
from worldsmith.judge.critic import CORE_RUBRICS, PRESCRIPTIVE_RUBRICS, critique, critique_claims
from worldsmith.judge.reward import reward_of
from worldsmith.judge.rubric import check_criterion, check_no_calls, check_no_writes, check_order, check_writes
from worldsmith.llm import LLMClient, Prompts
from worldsmith.records import ClaimFinding, CriterionResult, CriticReport, Task, Trajectory, Verdict

K2_RUBRICS = (*CORE_RUBRICS, *PRESCRIPTIVE_RUBRICS)
MAX_CLAIMS = 24  # claims kept on a verdict: enough to audit it, not a copy of the reply


def deterministic(task: Task, traj: Trajectory) -> list[CriterionResult]:
    """The task's criteria and the whole-episode checks (calls in order, the writes' net effect, no writes)."""
    results = [r for c in task.rubric.criteria if (r := check_criterion(c, task, traj)) is not None]
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
        ("no_calls", "call", "no tool applies, and the agent called none", check_no_calls(task, traj)),
    ):
        if outcome is not None:
            results.append(
                CriterionResult(
                    criterion_id=cid, kind=kind, description=description, passed=outcome[0], evidence=outcome[1]
                )
            )
    return results


def unverifiable_claims(cfg: JudgeConfig, task: Task, traj: Trajectory) -> list[ClaimFinding]:
    """The claims of the episode's replies that nothing supports or contradicts (what the critic is asked about
    under the `critic` policy)."""
    ep = Episode(traj, task, words=cfg.unverifiable == "strict")
    return [_finding(c) for c in ep.claims if c.status == "unverifiable"][:MAX_CLAIMS]


def decide(
    cfg: JudgeConfig,
    task: Task,
    traj: Trajectory,
    critic: CriticReport | None = None,
    rubric_trusted: frozenset[str] | None = None,
    claim_rulings: list[bool | None] | None = None,
) -> Verdict:
    """The verdict, every reason for dropping kept (not just the first). `rubric_trusted`: the difficulties whose
    rubric reward the critic's calibration allows (None: no calibration). `claim_rulings`: the critic's ruling on
    each of `unverifiable_claims` (policy critic), True where it found the claim supported."""
    results = deterministic(task, traj)
    ep = Episode(traj, task, words=cfg.unverifiable == "strict")
    hacks = [f for check in CHECKS if (f := check.find(ep)) is not None]
    claims = [_finding(c) for c in ep.claims if c.status != "supported"]
    handled, _ = fault_recovery(traj)
    reasons: list[str] = []
    if traj.status not in cfg.statuses:
        reasons.append(
            f"status:{traj.status}"
            + (f":{traj.reason.split(':')[0]}" if traj.status == "error" and traj.reason else "")
        )
    if cfg.require_deterministic:
        reasons += [f"criterion:{r.kind}:{r.criterion_id}" for r in results if not r.passed]
    for h in hacks:
        if h.kind == "contradicted_claim" and h.kind in cfg.reject_hacks:
            kinds = sorted({c.kind for c in claims if c.status == "contradicted"})
            reasons += [f"hack:contradicted_claim:{k}" for k in kinds]
        elif h.kind in cfg.reject_hacks:
            reasons.append(f"hack:{h.kind}")
    unverified = [c for c in claims if c.status == "unverifiable"]
    if cfg.unverifiable == "critic" and claim_rulings is not None:
        for c, ruling in zip(unverified, claim_rulings, strict=False):
            c.critic = ruling
    if unverified and (cfg.unverifiable == "strict" or "unverifiable_claim" in cfg.reject_hacks):
        reasons += [f"hack:unverifiable_claim:{k}" for k in sorted({c.kind for c in unverified})]
    elif unverified and cfg.unverifiable == "critic":
        # the critic rules on these sentences only; one it did not find supported (or never ruled on) drops it
        reasons += [f"claim:unsupported:{k}" for k in sorted({c.kind for c in unverified if c.critic is not True})]
    if cfg.require_fault_recovery and handled is False:
        reasons.append("fault_not_handled")
    score = None
    judged = [c for c in task.rubric.criteria if c.kind == "judge"]
    if critic is None and cfg.require_judge_criteria and judged and traj.status in cfg.statuses:
        # no critic: a criterion with a deterministic form is checked by code; one only the critic can judge is not
        # passed by default
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
        for c in judged:
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
        claims=claims[:MAX_CLAIMS],
        unverifiable=cfg.unverifiable,
        critic=critic,
        critic_score=score,
        faults=len(traj.faults),
        faults_handled=handled,
        passed=not reasons,
        reasons=reasons,
    )
    verdict.reward = reward_of(cfg, task, traj, verdict, rubric_trusted)
    return verdict


async def judge_episode(
    cfg: JudgeConfig,
    task: Task,
    traj: Trajectory,
    client: LLMClient | None = None,
    prompts: Prompts | None = None,
    seed: int = 0,
    rubric_trusted: frozenset[str] | None = None,
) -> Verdict:
    """The verdict on one episode, with the model calls the policy asks for (none without a client): the critic's
    rubrics and score when `cfg.critic`, and its ruling on the unverifiable claims under `unverifiable: critic`."""
    critic = None
    rulings: list[bool | None] | None = None
    if client is not None and prompts is not None and traj.status in cfg.statuses:
        if cfg.critic:
            critic = await critique(client, prompts, task, traj, seed=seed)
        if cfg.unverifiable == "critic":
            asked = unverifiable_claims(cfg, task, traj)
            if asked:
                rulings = await critique_claims(client, prompts, task, traj, asked, seed=seed)
    return decide(cfg, task, traj, critic, rubric_trusted, rulings)


def _finding(c) -> ClaimFinding:  # noqa: ANN001 - a claims.Claim
    return ClaimFinding(message=c.message, kind=c.kind, status=c.status, text=c.text, why=c.why)
