"""The shared vocabulary, defined once: kinds of faults, criteria and hacks, the user
simulator's end tokens, how an episode ends, and where an export keeps its files. Stages
and config import these; nothing else lists them.

Adding a fault kind is one `FaultKind` in `FAULTS`: the config grows its rate key, the
injector draws it, the tool runner applies it and the judge's recovery check knows it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

# --------------------------------------------------------------------------- model roles

# each names its endpoint and sampling in `llm.roles` (config.RolesConfig has one field per role)
Role = Literal["tool_evolver", "task_writer", "user_sim", "tool_sim", "agent", "critic"]
ROLES: tuple[str, ...] = get_args(Role)
EPISODE_ROLES: tuple[str, ...] = ("agent", "user_sim", "tool_sim")  # the models that play an episode

# --------------------------------------------------------------------------- faults


@dataclass(frozen=True)
class FaultKind:
    """A controlled failure injected into a tool call.

    family: `network` faults fail the call with `error` before it runs (open-world tools only);
    `data` faults shape what a read returns (read-only, simulated tools only); `edge` faults
    ask for unusual but valid data (any simulated tool)."""

    name: str
    family: Literal["network", "data", "edge"]
    default_rate: float
    error: tuple[str, str] | None = None  # network: (code, message) the agent reads
    instruction: str | None = None  # data and edge: what the tool simulator is told to return


FAULTS: dict[str, FaultKind] = {
    f.name: f
    for f in (
        FaultKind(
            "transient_error",
            "network",
            0.04,
            error=("unavailable", "503 Service Unavailable: the upstream service failed to answer. Try again."),
        ),
        FaultKind(
            "timeout", "network", 0.03, error=("timeout", "The request timed out after 30 seconds without a response.")
        ),
        FaultKind(
            "rate_limit",
            "network",
            0.03,
            error=("rate_limited", "429 Too Many Requests: rate limit exceeded, retry after 2 seconds."),
        ),
        FaultKind(
            "partial_result",
            "data",
            0.04,
            instruction=(
                "return only part of the matching data (fewer items than exist) and say so in the result, "
                'e.g. "truncated": true.'
            ),
        ),
        FaultKind(
            "empty_result",
            "data",
            0.03,
            instruction="return an empty result: nothing matches (an empty list or no record), as the real tool would.",
        ),
        FaultKind(
            "edge_case",
            "edge",
            0.05,
            instruction=(
                "return valid but unusual data: boundary values, optional fields missing, zero amounts, "
                "long or non-ASCII text."
            ),
        ),
    )
}
FAULT_KINDS: tuple[str, ...] = tuple(FAULTS)
FORCED_FAULT = "transient_error"  # what an error_recovery task's first call meets


def error_content(code: str, message: str) -> str:
    """A tool reply that reports an error, as JSON text (what the agent reads)."""
    return json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False)


# --------------------------------------------------------------------------- worlds

FieldType = Literal["string", "integer", "number", "boolean"]
# how seeding fills a field (world/seed.py); anything else is free text
FIELD_FORMATS: tuple[str, ...] = (
    "text",
    "person_name",
    "email",
    "phone",
    "address",
    "city",
    "country",
    "company",
    "product",
    "date",
    "datetime",
    "time",
    "money",
    "quantity",
    "percent",
    "url",
    "code",
    "sentence",
    "label",
)
ReadAction = Literal["get", "list"]
WriteAction = Literal["create", "update", "delete"]
# `custom`: a verb beyond CRUD, which code does not run (the LLM tool simulator plays it)
ToolAction = Literal[ReadAction, WriteAction, "custom"]
READ_ACTIONS: tuple[str, ...] = get_args(ReadAction)
WRITE_ACTIONS: tuple[str, ...] = get_args(WriteAction)
EXECUTED_ACTIONS: tuple[str, ...] = READ_ACTIONS + WRITE_ACTIONS  # run by code on the world state

# --------------------------------------------------------------------------- rubrics and the judge

MachineKind = Literal["state", "call", "answer"]  # checked by code
CriterionKind = Literal[MachineKind, "judge"]  # `judge`: only the critic can check it
MACHINE_KINDS: tuple[str, ...] = get_args(MachineKind)
# `unchanged_except`: every record of a collection but the listed keys is as it was, and none was added (a guard)
StateOp = Literal["equals", "not_equals", "exists", "absent", "contains", "gte", "lte", "unchanged_except"]

# the judge's declared checks (worldsmith.judge.checks.CHECKS; a test keeps the two lists equal)
HACK_KINDS: tuple[str, ...] = (
    "contradicted_claim",
    "unverifiable_claim",
    "garbled_reply",
    "fabricated_tool_output",
    "tool_talk",
    "echoed_request",
    "unknown_tool",
    "repeated_refused_call",
    "refusal_by_trial",
)
# kinds of findings before the claim layer replaced them (verdicts stored by earlier versions still read)
RETIRED_HACK_KINDS: tuple[str, ...] = (
    "unbacked_claim",
    "fabricated_value",
    "unfounded_advice",
    "misattributed_value",
    "unfounded_failure",
    "invented_name",
    "contradicted_state",
    "invented_event",
)
HackKind = Literal[
    "contradicted_claim",
    "unverifiable_claim",
    "garbled_reply",
    "fabricated_tool_output",
    "tool_talk",
    "echoed_request",
    "unknown_tool",
    "repeated_refused_call",
    "refusal_by_trial",
    "unbacked_claim",
    "fabricated_value",
    "unfounded_advice",
    "misattributed_value",
    "unfounded_failure",
    "invented_name",
    "contradicted_state",
    "invented_event",
]
# what the judge does with a claim nothing supports or contradicts: strict drops it (small policies), critic asks the
# critic about those sentences only, lenient keeps and counts it (capable policies)
UnverifiablePolicy = Literal["strict", "critic", "lenient"]
CLAIM_KINDS: tuple[str, ...] = ("value", "attribution", "count", "action", "state", "failure", "promise", "words")

# refusal: the user asks for what the world's rules forbid; the right outcome is that nothing changes
DIFFICULTIES: tuple[str, ...] = (
    "single_call",
    "multi_call",
    "dependent_calls",
    "error_recovery",
    "clarification",
    "irrelevance",
    "refusal",
    "aggregate",  # a count, total or latest over a list call's result
    "already_done",  # the user asks for what already holds: no change, and the reply says so
    "conditional",  # act only if the record is in the state the user names; otherwise say what it is
)

# --------------------------------------------------------------------------- episodes

EndedByLimit = Literal["max_turns", "max_tool_calls", "max_tokens"]
TrajectoryStatus = Literal["finished", EndedByLimit, "error"]
TRAJECTORY_STATUSES: tuple[str, ...] = get_args(TrajectoryStatus)
# the longest text turn the agent may write in constrained mode (a reply that long was cut, mid-word)
MAX_REPLY_CHARS = 400
# constrained mode, `prose_replies`: a text turn is a sentence's characters, in the grammar itself. It opens with a
# capital letter and holds no brace, bracket, angle bracket, quote, backslash or line break: at SmolLM2's reply points
# after a two-call chain, 14 of 84 samples were prose without it ("[<tool_response>]", "{{code}}", "[{ ") and 41 of
# 84 with it (README). No escape can occur, so the server's grammar (raw JSON text) and the validator (the decoded
# string) read the same characters.
PROSE_CHAR = r'[^{}<>\[\]"\\\n\r\t]'
PROSE_REPLY_PATTERN = "^[A-Z]" + PROSE_CHAR + "{0," + str(MAX_REPLY_CHARS - 1) + "}$"
QUOTING_TAIL = PROSE_CHAR + "{0,130}$"  # how every quoting pattern ends: how `is_prose_pattern` knows one
# how a reply that opens with set words ends (`opening_reply_pattern`): one more sentence, or right after what it says.
# Given 130 characters after "I'm sorry, but I can't help with that: rps-2201 is archived", SmolLM2 went on "by
# Adam Harrington. Please try to find it again." (part a13: 7 of the 15 kept episodes a reader rejected)
SENTENCE_TAIL = r'[^.!?{}<>\[\]"\\\n\r\t]{0,80}\.$'
CLOSING_TAIL = r"\.$"
REPLY_TAILS = (QUOTING_TAIL, SENTENCE_TAIL, CLOSING_TAIL)


# what a reply that declines opens with (each matched by the judge's `answers.DECLINE`): an irrelevance or refusal
# task's reply opens with one of them under `rollouts.restraint_decoding` (`opening_reply_pattern`). Each ends where
# only a decline can follow: after "I'm sorry, I can't" SmolLM2 wrote "... wait to see your new section!"
DECLINE_OPENINGS: tuple[str, ...] = (
    "I'm sorry, but I can't help with",
    "I'm sorry, but I'm not able to help with",
    "I'm sorry, but none of my tools can",
    "I can't help with",
)


def _alternatives(values: list[str]) -> str:
    """A regex alternation of literal values (the characters a pattern would read as syntax escaped)."""
    return "|".join(re.sub(r"([.^$*+?()|/])", r"\\\1", v) for v in values)


def quoting_reply_pattern(values: list[str]) -> str:
    """The prose pattern with one of `values` (each of PROSE_CHARs, at most 60) somewhere in the reply, within
    the same length bound: what a grounded reply that answers the user's question must say (`asked_values`). A
    value with a capital letter may open the reply ("Related work is ...")."""

    opening = [v for v in values if v[:1].isupper()]
    anywhere = rf"[A-Z]{PROSE_CHAR}{{0,199}}({_alternatives(values)})"
    head = rf"({anywhere}|{_alternatives(opening)})" if opening else anywhere
    return f"^{head}{QUOTING_TAIL}"


# what an already-done reply opens with, before it says the record is already so ("ord-4802 is already cancelled")
ALREADY_OPENINGS: tuple[str, ...] = ("No change is needed:", "Nothing to change:", "There is nothing to do:")


def opening_reply_pattern(openings: list[str], quote: list[str] | None = None) -> str:
    """The prose pattern of a reply that opens with one of `openings` (each of PROSE_CHARs): with `quote`, it goes on
    with one of those phrases and ends there ("I'm sorry, but I can't help with that: bkg-7303 is checked_in."); else
    the decoder ends the sentence, in at most 80 characters ("I'm sorry, but I can't help with adding a doctor.").
    Allowed anywhere instead (`quoting_reply_pattern`), SmolLM2 wrote its usual reply and the grammar ended it with
    the words cut mid-word ("The device dvc-8703 has been deleted. ... I'm sorry, I can't f")."""
    head = f"^({_alternatives(openings)}) "
    if quote:
        return f"{head}({_alternatives(quote)}){CLOSING_TAIL}"
    return head + SENTENCE_TAIL


def is_prose_pattern(pattern: str) -> bool:
    """Whether a JSON Schema pattern is one of the reply patterns above (kept in the server's grammar)."""
    return pattern == PROSE_REPLY_PATTERN or (pattern.startswith("^") and pattern.endswith(REPLY_TAILS))


# tau2's end tokens: the user simulator's last message carries the one of its action
STOP, TRANSFER, GIVE_UP = "###STOP###", "###TRANSFER###", "###GIVE_UP###"
END_TOKENS: dict[str, str] = {"stop": STOP, "transfer": TRANSFER, "give_up": GIVE_UP}
END_REASONS: dict[str, str] = {"stop": "user_stop", "transfer": "user_transfer", "give_up": "user_give_up"}


def strip_end_tokens(text: str) -> str:
    for token in END_TOKENS.values():
        text = text.replace(token, "")
    return text.strip()


# --------------------------------------------------------------------------- the export folder

SPLITS: tuple[str, ...] = ("train", "validation")
EXPORT_CARD = "README.md"


def export_jsonl(folder: str | Path, split: str) -> Path:
    """The JSONL rows of one split of an export folder (what finetune and eval read)."""
    return Path(folder) / "jsonl" / f"{split}.jsonl"
