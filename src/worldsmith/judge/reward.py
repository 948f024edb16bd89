"""An episode's reward for RL, by component, from the judge's verdict (K2: verifiable rewards where a
checker exists, the critic's rubric reward where none does, a format term, and a token budget).

Every verdict carries one (`Verdict.reward`), so a synthesis run's rewards are queryable beside its
verdicts, and the RL environment (`worldsmith.gym`) hands the same figures to a trainer.
"""

from __future__ import annotations

from worldsmith.config import JudgeConfig, RewardConfig
from worldsmith.llm.client import TRANSPORT_FAILURES, malformed_tool_call
from worldsmith.records import Reward, Task, Trajectory, Verdict

# a call the executor refused before running it: the model named no tool of the bundle, or broke its schema
INVALID_CALLS = ("unknown_tool", "invalid_arguments")


def server_failed(t: Trajectory) -> bool:
    """The episode ended because the policy's server did not answer (`agent_output: http|timeout|connection: ...`),
    not because the model's tool call was malformed (which llama.cpp reports as an HTTP 500; episodes stored before
    the client told the two apart carry it as `http`)."""
    reason = t.reason or ""
    return (
        t.status == "error"
        and reason.startswith("agent_output: ")
        and reason.split(":")[1].strip() in TRANSPORT_FAILURES
        and not malformed_tool_call(reason)
    )


def unparsed(t: Trajectory) -> bool:
    """The episode ended on an agent output (a call or reply) that never parsed."""
    return t.status == "error" and (t.reason or "").startswith("agent_output") and not server_failed(t)


def format_score(t: Trajectory) -> float:
    """Share of the agent's calls that parsed into a known tool with valid arguments; an output that never
    parsed counts as one more bad call (an episode of text replies only scores 1)."""
    bad = sum(c.executor in INVALID_CALLS for c in t.calls) + unparsed(t)
    made = len(t.calls) + unparsed(t)
    return 1.0 if not made else round(1 - bad / made, 4)


def budget_tokens(task: Task, cfg: RewardConfig) -> int:
    """The task's agent-token budget: `tokens_per_step` for each gold call and one for the reply."""
    steps = len(task.blueprint.calls) if task.blueprint is not None else 1
    return cfg.tokens_per_step * (steps + 1)


def verifiable(cfg: JudgeConfig, verdict: Verdict, traj: Trajectory) -> bool:
    """Every check that needs no model holds: the episode ended as the policy asks, each deterministic
    criterion passed, no rejected hack, faults handled."""
    return (
        traj.status in cfg.statuses
        and all(r.passed for r in verdict.criteria if r.source == "deterministic")
        and not any(h.kind in cfg.reject_hacks for h in verdict.hacks)
        and verdict.faults_handled is not False
    )


def reward_of(
    cfg: JudgeConfig, task: Task, traj: Trajectory, verdict: Verdict, rubric_trusted: frozenset[str] | None = None
) -> Reward:
    """The reward components of a judged episode and their weighted total (`judge.reward`). `rubric_trusted`: the
    difficulties whose critic agreed with the checks well enough (`judge.calibration`); the rubric component of any
    other is refused (None). None: no calibration, the rubric counts as configured."""
    w = cfg.reward
    checked = [r for r in verdict.criteria if r.source == "deterministic"]
    fraction = sum(bool(r.passed) for r in checked) / len(checked) if checked else 0.0
    rubric = verdict.critic_score / 10 if verdict.critic_score is not None else None
    if rubric_trusted is not None and task.difficulty not in rubric_trusted:
        rubric = None
    used = int((traj.usage.get("agent") or {}).get("completion_tokens", 0))
    budget = budget_tokens(task, w)
    over = max(0.0, min(1.0, (used - budget) / budget))
    parts = {
        "verifiable": 1.0 if verifiable(cfg, verdict, traj) else 0.0,
        "verifiable_fraction": round(fraction, 4),
        "rubric": rubric,
        "format": format_score(traj),
        "budget": -round(over, 4),
    }
    total = sum(getattr(w, k) * v for k, v in parts.items() if v is not None)
    return Reward(**parts, agent_tokens=used, budget_tokens=budget, total=round(total, 4))
