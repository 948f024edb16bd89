"""Deterministic checks of a trajectory against its task's rubric, each with its evidence.

- `state`: the assertion on the recorded final world state (shared with task validation): a
  record by its key compared with the gold end state, or a guard that nothing else changed.
- `call`: a tool call that must happen (a *successful* call of that tool whose arguments
  match the constraints; `order` asks for them in that order; `after_user_gives`: only after
  the user said the value) or must not (no successful call: an attempt the tool refused
  changed nothing).
- `answer`: each value is conveyed in some reply of the agent (`judge/answers.py`: numbers
  and dates in any format, a negated mention does not count).
- fault recovery: after each injected fault the agent called the tool again or told the
  user about the problem.
Calls are matched by the spec's original name (what rubrics use), kept with each call.
"""

from __future__ import annotations

import json
import re

from worldsmith.judge.answers import agent_texts, mentions
from worldsmith.records import Criterion, CriterionResult, Task, Trajectory
from worldsmith.rubric import arguments_match, check_state
from worldsmith.vocab import FAULTS

# words an agent uses when it tells the user a tool failed
PROBLEM_WORDS = re.compile(
    r"\b(error|fail(ed|ure)?|unavailable|could ?n[o']t|can ?n[o']t|unable|not able|problem|issue|try again|retry|timed? ?out|"
    r"rate limit|sorry|apolog|went wrong|temporar)", re.IGNORECASE,
)  # fmt: skip


def final_reply(traj: Trajectory) -> str:
    """The agent's last text reply ('' when it never wrote one)."""
    for m in reversed(traj.messages):
        if m["role"] == "assistant" and (m.get("content") or "").strip():
            return m["content"]
    return ""


def _user_said(traj: Trajectory, value: str, before_call: str) -> bool:
    """Whether a user message before the call's reply holds `value`."""
    for m in traj.messages:
        if m["role"] == "tool" and m.get("tool_call_id") == before_call:
            return False
        if m["role"] == "user" and mentions(value, [m.get("content") or ""])[0]:
            return True
    return False


def check_call(c: Criterion, traj: Trajectory) -> tuple[bool, str]:
    calls = [x for x in traj.calls if x.tool == c.tool]
    if not c.must:
        done = [x for x in calls if x.ok]
        if done:
            return False, f"{c.tool} succeeded {len(done)} time(s), first with {json.dumps(done[0].arguments)[:120]}"
        return True, f"{c.tool} was not called" if not calls else f"{c.tool} was attempted {len(calls)} time(s), never successfully"
    ok = [x for x in calls if x.ok]
    match = [x for x in ok if isinstance(x.arguments, dict) and arguments_match(c.arguments, x.arguments)]
    if c.after_user_gives is not None and match:
        asked = [x for x in match if _user_said(traj, c.after_user_gives, x.call_id)]
        if not asked:
            return False, f"{c.tool} was called with {c.after_user_gives!r} before the user gave it (a guess)"
        match = asked
    if match:
        return True, f"matched call {match[0].call_id} {json.dumps(match[0].arguments)[:120]}"
    if ok:
        return False, f"{c.tool} succeeded {len(ok)} time(s) but never with {json.dumps(c.arguments)[:120]}; got {json.dumps(ok[0].arguments)[:120]}"
    if calls:
        return False, f"{c.tool} was called {len(calls)} time(s), never successfully ({calls[-1].executor}: {(calls[-1].error or '')[:100]})"
    return False, f"{c.tool} was never called"


def check_answer(c: Criterion, traj: Trajectory) -> tuple[bool, str]:
    texts = agent_texts(traj)
    if not texts:
        return False, "the agent wrote no reply"
    results = [mentions(p, texts) for p in c.contains]
    missing = [p for p, (ok, _) in zip(c.contains, results, strict=True) if not ok]
    if missing:
        return False, "; ".join(e for ok, e in results if not ok)[:300]
    return True, "; ".join(e for _, e in results)[:300]


def check_order(criteria: list[Criterion], traj: Trajectory) -> tuple[bool, str] | None:
    """For ordered `call` criteria: their first matching successful calls come in order."""
    ordered = sorted((c for c in criteria if c.kind == "call" and c.must and c.order is not None), key=lambda c: c.order)
    if len(ordered) < 2:
        return None
    positions = []
    for c in ordered:
        idx = next((i for i, x in enumerate(traj.calls) if x.tool == c.tool and x.ok
                    and isinstance(x.arguments, dict) and arguments_match(c.arguments, x.arguments)), None)  # fmt: skip
        if idx is None:
            return False, f"{c.tool} (step {c.order}) never matched"
        positions.append(idx)
    if positions != sorted(positions):
        return False, f"calls came in the order {positions}, expected ascending for {[c.tool for c in ordered]}"
    return True, f"calls in order {[c.tool for c in ordered]}"


def check_criterion(c: Criterion, task: Task, traj: Trajectory) -> CriterionResult | None:
    """The deterministic result of one criterion, or None for `judge` criteria."""
    if c.kind == "state":
        passed, evidence = check_state(c, traj.world_states.final, traj.world_states.initial)
    elif c.kind == "call":
        passed, evidence = check_call(c, traj)
    elif c.kind == "answer":
        passed, evidence = check_answer(c, traj)
    else:
        return None
    return CriterionResult(criterion_id=c.criterion_id, kind=c.kind, description=c.description, passed=passed, evidence=evidence)


def fault_recovery(traj: Trajectory) -> tuple[bool | None, str]:
    """(handled, evidence) over every injected fault; handled is None when there were none."""
    if not traj.faults:
        return None, "no fault injected"
    index = {m.get("tool_call_id"): i for i, m in enumerate(traj.messages) if m["role"] == "tool"}
    for f in traj.faults:
        at = index.get(f.call_id)
        later = traj.messages[at + 1 :] if at is not None else []
        retried = any(m["role"] == "assistant" and any(tc["function"]["name"] == f.tool for tc in m.get("tool_calls") or []) for m in later)
        told = any(m["role"] == "assistant" and PROBLEM_WORDS.search(m.get("content") or "") for m in later)
        if FAULTS[f.kind].family != "network":  # data faults: an answer that goes on with what came back is a recovery
            told = told or any(m["role"] == "assistant" and (m.get("content") or "").strip() for m in later)
        if not (retried or told):
            return False, f"{f.kind} on {f.tool} (turn {f.turn}): neither retried nor reported to the user"
    return True, f"{len(traj.faults)} fault(s), each retried or reported"
