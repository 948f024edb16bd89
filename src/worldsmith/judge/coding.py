"""A coding episode's verdict (issue 52): the patch judged by execution, and the judge's reply checks on what the agent
said.

The patch passes when, in a fresh sandbox, it applies to the buggy tree, edits no test file (a TestWriter's patch no
library file), and every FAIL_TO_PASS and PASS_TO_PASS test passes (Kimi-Dev's reward 1; `coding.verify.judge`).
Rollouts judge each patch so when the episode ends; the judge stage reuses that judgement and runs it only for an
episode that has none. What the agent said is held to the reply checks that need no JSON world (`REPLY_CHECKS`): a
reply that is not prose, a tool output it wrote itself, a tool that does not exist. Its claims about the code are
checked by the tests, not by the claim layer (whose world is records).
"""

from __future__ import annotations

from pathlib import Path

from worldsmith.coding.verify import judge_coding_episode
from worldsmith.judge.checks import CHECKS, Episode
from worldsmith.records import CodingEpisode, CodingJudgement, CodingTask, CriterionResult, Reward, Trajectory, Verdict

CODING_AGENT = "coding:"  # a coding verdict's agent_id prefix: the repository's coding agent, no Agent record
MALFORMED = {"unknown_tool", "invalid_arguments"}  # a call that did not parse into a known tool with valid arguments
REPLY_CHECKS = ("garbled_reply", "fabricated_tool_output", "unknown_tool", "echoed_request")


def is_coding(verdict: Verdict) -> bool:
    """Whether a verdict is a coding episode's (its agent is the repository's coding agent)."""
    return verdict.agent_id.startswith(CODING_AGENT)


def judgement_of(task: CodingTask, episode: CodingEpisode, coding, root: Path) -> CodingJudgement:
    """The episode's execution judgement: the one rollouts stored, else judged now in a fresh sandbox."""
    if episode.judgement is not None:
        return episode.judgement
    return judge_coding_episode(task, episode.patch, coding, root)


def coding_verdict(task: CodingTask, episode: CodingEpisode, judgement: CodingJudgement) -> Verdict:
    """The verdict of one coding episode: its tests' criteria, the reply checks, its status; the reward's components
    (tests fixed, tests kept, resolved) as `verdicts.reward` holds them."""
    traj = Trajectory.model_validate(episode.trajectory)
    criteria = [
        CriterionResult(
            criterion_id="patch_applies",
            kind="state",
            description="the patch applies to the buggy tree and edits no file its family may not touch",
            passed=judgement.applied and not judgement.tests_edited and not judgement.source_edited,
            evidence="; ".join(judgement.problems)[:300] or None,
        ),
        CriterionResult(
            criterion_id="fail_to_pass",
            kind="state",
            description="every FAIL_TO_PASS test passes after the patch",
            passed=judgement.tests_fixed == 1.0,
            evidence=f"tests fixed: {judgement.tests_fixed:.2f}",
        ),
        CriterionResult(
            criterion_id="pass_to_pass",
            kind="state",
            description="every PASS_TO_PASS test still passes",
            passed=judgement.tests_kept == 1.0,
            evidence=", ".join(sorted(judgement.pass_to_pass_broken)[:5]) or f"tests kept: {judgement.tests_kept:.2f}",
        ),
    ]
    ep = Episode(traj, None, words=False)
    hacks = [f for check in CHECKS if check.name in REPLY_CHECKS and (f := check.find(ep)) is not None]
    reasons = [f"criterion:{c.criterion_id}" for c in criteria if not c.passed]
    reasons += [f"hack:{h.kind}" for h in hacks]
    if episode.status != "finished":
        reasons.insert(0, f"status:{episode.status}")
    passed = judgement.resolved and not reasons
    fraction = judgement.tests_fixed * judgement.tests_kept
    calls = traj.calls
    return Verdict(
        trajectory_id=episode.trajectory_id,
        task_id=episode.task_id,
        agent_id=f"{CODING_AGENT}{task.repo}",
        criteria=criteria,
        hacks=hacks,
        passed=passed,
        reasons=reasons,
        reward=Reward(
            verifiable=float(passed),
            verifiable_fraction=round(fraction, 4),
            format=round(sum(c.executor not in MALFORMED for c in calls) / len(calls), 4) if calls else 1.0,
            budget=0.0,
            total=float(passed),
        ),
    )
