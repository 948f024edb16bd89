"""The LLM critic: K2's rubrics (core: clarity and relevance, conversational fluency,
objective interaction; prescriptive: no initial praise, no self-justification) plus every
criterion of the task's rubric, each passed/failed with a short reason, and a 1-10 score.

It judges the machine-checkable criteria too: comparing those with the deterministic
checks gives the critic's agreement rate, i.e. how far it can be trusted on the `judge`
criteria that only it can assess.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from worldsmith.llm import LLMClient, Prompts
from worldsmith.llm.client import ServerUnavailable
from worldsmith.records import ClaimFinding, CriticReport, Task, Trajectory

CORE_RUBRICS = {
    "clarity_relevance": "The assistant's replies are clear and stay on the user's request, with nothing irrelevant.",
    "conversational_fluency": (
        "The exchange flows naturally: the assistant answers what the user actually said and asks only what it needs."
    ),
    "objective_interaction": "The assistant states only what tool results or the user support; it invents nothing.",
}
PRESCRIPTIVE_RUBRICS = {
    "no_initial_praise": (
        "The assistant does not open a reply by praising the user or the question (e.g. 'Great question!')."
    ),
    "no_self_justification": "The assistant does not justify or defend its own behaviour unprompted.",
}


def rubrics_for(task: Task) -> dict[str, str]:
    return {**CORE_RUBRICS, **PRESCRIPTIVE_RUBRICS, **{c.criterion_id: c.description for c in task.rubric.criteria}}


def critic_schema(ids: list[str]) -> dict[str, Any]:
    verdict = {
        "type": "object",
        "properties": {"passed": {"type": "boolean"}, "reason": {"type": "string", "minLength": 3, "maxLength": 200}},
        "required": ["passed", "reason"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "rubrics": {
                "type": "object",
                "properties": dict.fromkeys(ids, verdict),
                "required": ids,
                "additionalProperties": False,
            },
            "score": {"type": "integer", "minimum": 1, "maximum": 10},
        },
        "required": ["rubrics", "score"],
        "additionalProperties": False,
    }


async def critique(client: LLMClient, prompts: Prompts, task: Task, traj: Trajectory, seed: int) -> CriticReport:
    """The critic's report; `ok` False with the error (and raw text) when it gave no usable answer."""
    rubrics = rubrics_for(task)
    msgs = prompts.render_messages(
        "critic", goal=task.user_goal, messages=traj.messages, final_state=traj.world_states.final, rubrics=rubrics
    )
    try:
        r = await client.structured("critic", msgs, critic_schema(list(rubrics)), name="critique", seed=seed)
    except ServerUnavailable:  # the run stops; this trajectory is judged on resume
        raise
    except Exception as exc:  # a client that raised: this verdict records it, the stage goes on
        return CriticReport(
            ok=False, error=f"internal: {type(exc).__name__}: {str(exc)[:300]}", model=client.model_for("critic")
        )
    if not r.ok:
        return CriticReport(ok=False, error=f"{r.error_kind}: {r.error}", raw=r.raw, model=r.model)
    return CriticReport(ok=True, score=r.data["score"], rubrics=r.data["rubrics"], model=r.model)


def claims_schema(n: int) -> dict[str, Any]:
    ruling = {
        "type": "object",
        "properties": {
            "supported": {"type": "boolean"},
            "reason": {"type": "string", "minLength": 3, "maxLength": 160},
        },
        "required": ["supported", "reason"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"rulings": {"type": "array", "items": ruling, "minItems": n, "maxItems": n}},
        "required": ["rulings"],
        "additionalProperties": False,
    }


async def critique_claims(
    client: LLMClient, prompts: Prompts, task: Task, traj: Trajectory, claims: list[ClaimFinding], seed: int
) -> list[bool | None]:
    """The critic's ruling on each claim code could neither support nor contradict (policy `unverifiable: critic`):
    True where it finds the claim supported; None for every claim when it gave no usable answer (they stay
    unverifiable, and the episode is dropped)."""
    msgs = prompts.render_messages("critic_claims", goal=task.user_goal, messages=traj.messages, claims=claims)
    try:
        r = await client.structured("critic", msgs, claims_schema(len(claims)), name="critique_claims", seed=seed)
    except ServerUnavailable:
        raise
    except Exception:  # a client that raised: no ruling, the claims stay unverifiable
        return [None] * len(claims)
    if not r.ok:
        return [None] * len(claims)
    return [bool(x["supported"]) for x in r.data["rulings"]][: len(claims)]


PREFERENCES = ("A", "B", "tie")


@dataclass
class Pairwise:
    """The critic's comparison of two episodes of one task (K2's pairwise rubric judgment)."""

    ok: bool
    preferred: str | None = None  # A | B | tie
    rubrics: dict[str, str] = field(default_factory=dict)  # rubric id -> A | B | tie
    reason: str | None = None
    error: str | None = None


def pairwise_schema(ids: list[str]) -> dict[str, Any]:
    choice = {"enum": list(PREFERENCES)}
    return {
        "type": "object",
        "properties": {
            "rubrics": {
                "type": "object",
                "properties": dict.fromkeys(ids, choice),
                "required": ids,
                "additionalProperties": False,
            },
            "preferred": choice,
            "reason": {"type": "string", "minLength": 3, "maxLength": 200},
        },
        "required": ["rubrics", "preferred", "reason"],
        "additionalProperties": False,
    }


async def compare(client: LLMClient, prompts: Prompts, task: Task, a: Trajectory, b: Trajectory, seed: int) -> Pairwise:
    """Which of two episodes of `task` the critic prefers, rubric by rubric (core, prescriptive and the task's)."""
    rubrics = rubrics_for(task)
    msgs = prompts.render_messages("critic_pairwise", goal=task.user_goal, a=a, b=b, rubrics=rubrics)
    try:
        r = await client.structured("critic", msgs, pairwise_schema(list(rubrics)), name="compare", seed=seed)
    except ServerUnavailable:
        raise
    except Exception as exc:  # a client that raised: the pair is recorded as unjudged
        return Pairwise(ok=False, error=f"internal: {type(exc).__name__}: {str(exc)[:300]}")
    if not r.ok:
        return Pairwise(ok=False, error=f"{r.error_kind}: {r.error}")
    return Pairwise(ok=True, preferred=r.data["preferred"], rubrics=r.data["rubrics"], reason=r.data["reason"])
