"""Deterministic checks of a trajectory beyond its rubric's criteria (those are in
`worldsmith.judge.rubric`, shared with task validation and the user simulator's goal signal):
fault recovery (after each injected fault the agent called the tool again or told the user
about the problem), and the agent's final reply."""

from __future__ import annotations

import re

from worldsmith.records import Trajectory
from worldsmith.vocab import FAULTS

# words an agent uses when it tells the user a tool failed
PROBLEM_WORDS = re.compile(
    r"\b(error|fail(ed|ure)?|unavailable|could ?n[o']t|can ?n[o']t|unable|not able|problem|issue|try again|"
    r"retry|timed? ?out|"
    r"rate limit|sorry|apolog|went wrong|temporar)",
    re.IGNORECASE,
)


def final_reply_at(traj: Trajectory) -> int | None:
    """The index of the agent's last text reply in the messages (None when it never wrote one)."""
    for i in range(len(traj.messages) - 1, -1, -1):
        m = traj.messages[i]
        if m["role"] == "assistant" and (m.get("content") or "").strip():
            return i
    return None


def final_reply(traj: Trajectory) -> str:
    """The agent's last text reply ('' when it never wrote one)."""
    at = final_reply_at(traj)
    return "" if at is None else traj.messages[at]["content"]


def fault_recovery(traj: Trajectory) -> tuple[bool | None, str]:
    """(handled, evidence) over every injected fault; handled is None when there were none."""
    if not traj.faults:
        return None, "no fault injected"
    index = {m.get("tool_call_id"): i for i, m in enumerate(traj.messages) if m["role"] == "tool"}
    for f in traj.faults:
        at = index.get(f.call_id)
        later = traj.messages[at + 1 :] if at is not None else []
        retried = any(
            m["role"] == "assistant" and any(tc["function"]["name"] == f.tool for tc in m.get("tool_calls") or [])
            for m in later
        )
        told = any(m["role"] == "assistant" and PROBLEM_WORDS.search(m.get("content") or "") for m in later)
        if FAULTS[f.kind].family != "network":  # data faults: an answer that goes on with what came back is a recovery
            told = told or any(m["role"] == "assistant" and (m.get("content") or "").strip() for m in later)
        if not (retried or told):
            return False, f"{f.kind} on {f.tool} (turn {f.turn}): neither retried nor reported to the user"
    return True, f"{len(traj.faults)} fault(s), each retried or reported"
