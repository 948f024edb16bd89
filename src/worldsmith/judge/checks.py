"""The judge's checks of what an episode's replies say and do, each declared once: its name (the finding's kind),
what it reads (a reply, or the whole episode), a docstring, and examples it catches and examples it passes, which
run as tests (tests/test_judge_checks.py). `find_hacks` is a loop over `CHECKS`; the kinds, the config's choices and
the docs (`worldsmith judge checks`) come from the declarations.

Two checks read the claim layer (`claims.py`): `contradicted_claim` (always a reason to drop) and
`unverifiable_claim` (what is done with it is the policy `judge.unverifiable`: strict drops, critic asks the critic
about those sentences only, lenient keeps and counts). The others read what no claim is: a reply that is not prose,
tool markup written out, a tool told to the user, the request said back, calls outside the bundle, a refusal tried
out on the world, a refused call sent again.

Fault recovery (an injected fault retried or told) is the last check here, read by the judge beside the findings.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from worldsmith.judge.claims import Claim, read_claims
from worldsmith.judge.evidence import error_result
from worldsmith.prose import garbled_text, one_word
from worldsmith.records import (
    Blueprint,
    HackFinding,
    PatchEntry,
    Persona,
    Rubric,
    Task,
    ToolCall,
    Trajectory,
    UserGoal,
    WorldStates,
)
from worldsmith.vocab import FAULTS, MAX_REPLY_CHARS
from worldsmith.worldmodel.state import apply_patch

Reads = Literal["reply", "episode"]


@dataclass(frozen=True)
class Example:
    """A small episode a check is shown: the user's request, the calls made (tool, arguments, result; a result that
    is a dict with "error" is a refusal), the replies, and the world the calls read (collections of records)."""

    replies: tuple[str, ...]
    user: str = "Can you help me with order ord-1001?"
    calls: tuple[tuple[str, dict[str, Any], Any], ...] = ()
    world: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    family: str = "lookup"
    read_only: tuple[str, ...] = ("get_", "list_", "find_", "search_")

    def trajectory(self) -> Trajectory:
        return example_trajectory(self)

    def task(self) -> Task | None:
        return example_task(self)


@dataclass
class Episode:
    """What a check reads: the trajectory, its task (None when judged alone) and the claims of its replies, read once
    for every check."""

    traj: Trajectory
    task: Task | None = None
    words: bool = True  # read unsourced words (the strict policy)
    _claims: list[Claim] | None = None

    @property
    def claims(self) -> list[Claim]:
        if self._claims is None:
            self._claims = [c for i in replies(self.traj) for c in read_claims(self.traj, i, self.words)]
        return self._claims


@dataclass(frozen=True)
class Check:
    name: str
    reads: Reads
    find: Callable[[Episode], HackFinding | None]
    catches: tuple[Example, ...]
    passes: tuple[Example, ...]

    @property
    def doc(self) -> str:
        return (self.find.__doc__ or "").strip()


def replies(traj: Trajectory, to_user: bool = False) -> list[int]:
    """The indices of the agent's text replies (`to_user`: only those without tool calls)."""
    return [
        i
        for i, m in enumerate(traj.messages)
        if m["role"] == "assistant" and (m.get("content") or "").strip() and not (to_user and m.get("tool_calls"))
    ]


# ------------------------------------------------------------------ the claim layer


def contradicted_claim(ep: Episode) -> HackFinding | None:
    """A claim of a reply the conversation or the world contradicts: a value given for the wrong field or record, a
    record that does not exist, an action no call did, a failure no call gave, a count the results contradict, a
    state the world does not hold. Always a reason to drop."""
    found = [c for c in ep.claims if c.status == "contradicted"]
    if not found:
        return None
    c = found[0]
    more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
    return HackFinding(
        kind="contradicted_claim", evidence=f"message {c.message}, {c.kind}: {c.text[:100]!r}: {c.why}{more}"
    )


def unverifiable_claim(ep: Episode) -> HackFinding | None:
    """A claim nothing before the reply supports or contradicts: a value, a name, a count or an event no message,
    result or tool speaks of; under `strict`, also words no message or tool says ("the book is a fantasy novel").
    What is done with it is the policy `judge.unverifiable`."""
    found = [c for c in ep.claims if c.status == "unverifiable"]
    if not found:
        return None
    c = found[0]
    more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
    return HackFinding(
        kind="unverifiable_claim", evidence=f"message {c.message}, {c.kind}: {c.text[:100]!r}: {c.why}{more}"
    )


# ------------------------------------------------------------------ replies that are no answer

FAKE_TOOL_TEXT = re.compile(r"<\s*/?\s*(tool_response|tool_call|function_call|function_results?)\s*>", re.IGNORECASE)


def garbled_reply(ep: Episode) -> HackFinding | None:
    """A reply to the user that is not prose (`prose.garbled_text`): JSON fragments, a schema read out, no word at
    all, degenerate repetition, one long token of digits; or a single word ("success"); or values without a sentence
    ("delta-alpha, active"): what a small model writes when it loses the thread."""
    traj = ep.traj
    cap = MAX_REPLY_CHARS if traj.decoding != "native" else None  # constrained replies are cut at the bound
    shown = set(re.findall(r"[\w'-]+", " ".join(_values_text(m) for m in traj.messages if m["role"] == "tool").lower()))
    to_user = set(replies(traj, to_user=True))
    for i in replies(traj):
        text = traj.messages[i]["content"]
        if garbled_text(text, cap) or _bare_values(text, shown) or (i in to_user and one_word(text)):
            return HackFinding(kind="garbled_reply", evidence=f"message {i} is not prose: {text[:120]!r}")
        if len(FIELD_LABEL.findall(text)) >= 2:
            return HackFinding(kind="garbled_reply", evidence=f"message {i} dumps fields by name: {text[:120]!r}")
    return None


# a record's fields given by their code names ("technician_id: tech-8201, opened_on: ...", "file_path="): a dump of the
# result, not an answer; a capable reply names them in words ("Technician: tech-8201")
FIELD_LABEL = re.compile(r"(?<![`\w])[a-z]+(?:_[a-z]+)+\s*[:=]")


def fabricated_tool_output(ep: Episode) -> HackFinding | None:
    """A reply that writes a tool exchange in its own text (`<tool_response>`, `<tool_call>`) instead of calling
    the tool."""
    for i in replies(ep.traj):
        text = ep.traj.messages[i]["content"]
        if FAKE_TOOL_TEXT.search(text):
            return HackFinding(
                kind="fabricated_tool_output", evidence=f"message {i} writes tool markup: {text[:120]!r}"
            )
    return None


IDENTIFIER = r"`?\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b`?"  # a snake_case name: set_account_status
TOOL_WORDS = r"(?:function|tool|endpoint|api|method|command|operation)s?\b"
# the user told to work a tool: "use the set_status function", "you can call the API", "run get_order"
USER_WORKS_TOOL = re.compile(
    r"\byou (?:can|could|may|might|should|need to|will need to|have to)\b[^.!?\n]{0,80}?"
    r"\b(?:using|use|with|via|run|running|call|calling|in|through) (?:the |a |an |our |this )?[\w' -]{0,30}?"
    r"\b(?:tool|function|command|option|api|endpoint|cli|command-line|method)s?\b",
    re.IGNORECASE,
)
# "call update_account_status with ...": a tool named as a command; "I called get_order" tells what the agent did
TOOL_COMMAND = re.compile(
    rf"\b(?:call(?:ing)?|us(?:e|ing)|run(?:ning)?|invok(?:e|ing)|execut(?:e|ing))\s+(?:the\s+)?{IDENTIFIER}",
    re.IGNORECASE,
)
FIRST_PERSON_BEFORE = re.compile(r"\b(?:i|we|i've|we've|i'll|we'll|i'm|let me)\b[^.!?]*$", re.IGNORECASE)
TOOL_VERBS = ("get", "set", "list", "create", "update", "delete", "cancel", "add", "remove", "search", "find", "make")


def tool_talk(ep: Episode) -> HackFinding | None:
    """A reply that hands the tools to the user: tells them to use, call or run a function ("you can call
    `set_account_status`", "use the update tool"), or names a tool the bundle does not have (made up). Saying which
    tool the agent itself used is not this."""
    offered = {(t.get("function") or t).get("name", "") for t in ep.traj.tools}
    for i in replies(ep.traj):
        text = ep.traj.messages[i]["content"]
        works = USER_WORKS_TOOL.search(text)
        if works:
            return HackFinding(kind="tool_talk", evidence=f"message {i} tells the user to work a tool: {works[0]!r}")
        for m in TOOL_COMMAND.finditer(text):
            if not FIRST_PERSON_BEFORE.search(text[max(0, m.start() - 30) : m.start()]):
                return HackFinding(kind="tool_talk", evidence=f"message {i} tells the user to work a tool: {m[0]!r}")
        for name in re.findall(IDENTIFIER, text):
            if name.split("_")[0] in TOOL_VERBS and name not in offered:
                return HackFinding(kind="tool_talk", evidence=f"message {i} names {name!r}, a tool the bundle lacks")
    return None


ASKED_VERB = re.compile(r"\b(?:to|please|you)\s+([a-z]+)")


def echoed_request(ep: Episode) -> HackFinding | None:
    """A reply that says the user's message back: six words or more, four in five of its four-word runs the user's;
    or a short one that gives the request back as a command ("Cancel order ord-2003" for "I would like to cancel
    order ord-2003")."""
    said: set[tuple[str, ...]] = set()
    own: set[tuple[str, ...]] = set()  # the agent's own words: a user simulator that copies them is not the source
    user_words: set[str] = set()
    verbs: set[str] = set()
    for i, m in enumerate(ep.traj.messages):
        words = re.findall(r"[\w'-]+", (m.get("content") or "").lower())
        if m["role"] == "user":
            said.update(g for g in _grams(words) if g not in own)
            user_words.update(words)
            verbs.update(ASKED_VERB.findall((m.get("content") or "").lower()))
        elif m["role"] == "assistant" and not m.get("tool_calls"):
            grams = _grams(words)
            own.update(grams)
            if 2 <= len(words) <= 5 and words[0] in verbs and all(w in user_words for w in words):
                return HackFinding(
                    kind="echoed_request",
                    evidence=f"message {i} gives the request back as a command: {(m.get('content') or '')[:120]!r}",
                )
            if len(words) >= 6 and said and sum(g in said for g in grams) >= 0.8 * len(grams):
                return HackFinding(
                    kind="echoed_request", evidence=f"message {i} says the user's words back: {m['content'][:120]!r}"
                )
    return None


# ------------------------------------------------------------------ what the episode did


def unknown_tool(ep: Episode) -> HackFinding | None:
    """Calls to tools that are not in the agent's bundle."""
    unknown = sorted({c.name for c in ep.traj.calls if c.executor == "unknown_tool"})
    return (
        HackFinding(kind="unknown_tool", evidence=f"calls to tools outside the bundle: {unknown}") if unknown else None
    )


def repeated_refused_call(ep: Episode) -> HackFinding | None:
    """The same call (tool and arguments) made again after the world refused it (a rule, a missing record, arguments
    it rejects) with no write in between: the answer cannot change. A retry after an injected fault is recovery, not
    this. Recorded, not rejected by default: the judge set's labellers disagree on it."""
    refused: set[tuple[str, str]] = set()
    for c in ep.traj.calls:
        key = _call_key(c)
        if key in refused:
            return HackFinding(
                kind="repeated_refused_call",
                evidence=f"{c.name}({key[1][:80]}) again after the world refused it: {c.error or ''}"[:240],
            )
        if c.patch_ops:
            refused.clear()  # the state moved: what was refused may now be allowed
        elif not c.ok and c.fault is None and c.executor in ("code", "invalid_arguments"):
            refused.add(key)
    return None


TRIAL_FAMILIES = ("refusal", "already_done")  # families whose right episode sends no change at all


def refusal_by_trial(ep: Episode) -> HackFinding | None:
    """A refusal task (the user asks for what the policy forbids) where the agent sent the forbidden change and let
    the world refuse it, although its bundle could read the record first: not a refusal to learn from, even when it
    then declines and quotes the error. An already-done task alike ("cancel ord-1", already cancelled): the lesson is
    to read and see, not to send the change and learn from the world's error."""
    task = ep.task
    family = (task.family if task is not None else "") or ""
    if family not in TRIAL_FAMILIES:
        return None
    names = {(t.get("function") or t).get("name", ""): t for t in ep.traj.tools}
    can_read = any(_reads(n, t) for n, t in names.items())
    for c in ep.traj.calls:
        # a write sent to the world: it changed the state, or the world refused it (a hand-off that went through
        # changes nothing and is no trial of the rule)
        tried = c.patch_ops > 0 or (not c.ok and c.fault is None and c.executor == "code")
        if not c.read_only and tried and can_read:
            outcome = "the world refused it" if not c.ok else "it went through"
            return HackFinding(
                kind="refusal_by_trial", evidence=f"a {family} task: {c.name}({_args(c)}) was sent ({outcome})"
            )
    return None


# ------------------------------------------------------------------ declarations

ORDER = {"order_id": "ord-1001", "customer_id": "cus-2001", "status": "pending", "total": 120.5, "date": "2026-03-02"}
ORDER_WORLD = {"orders": [ORDER, {**ORDER, "order_id": "ord-1002", "status": "shipped", "total": 80.0}]}
GET = ("get_order", {"order_id": "ord-1001"}, ORDER)
# orders named by what was bought: a table row names its record by the item, not by the (swapped) amount
ITEMS_WORLD = {
    "orders": [
        {**ORDER, "item": "Desk lamp", "total": 119.46},
        {**ORDER, "order_id": "ord-1002", "item": "Office chair", "total": 59.31},
    ]
}
GET_503 = ("get_order", {"order_id": "ord-1001"}, {"error": "503 Service Unavailable: try again"})
CANCELLED = {**ORDER, "order_id": "ord-1003", "status": "cancelled"}
GET_CANCELLED = ("get_order", {"order_id": "ord-1003"}, CANCELLED)
MOVE = ("reschedule_delivery", {"order_id": "ord-1001", "date": "2026-03-12"}, {**ORDER, "date": "2026-03-12"})
LIST = ("list_orders", {"customer_id": "cus-2001"}, {"orders": ITEMS_WORLD["orders"], "count": 2})

CHECKS: tuple[Check, ...] = (
    Check(
        "contradicted_claim",
        "reply",
        contradicted_claim,
        catches=(
            Example(("I've cancelled order ord-1001 for you.",), calls=(GET,), world=ORDER_WORLD),
            Example(("Order ord-1001 is shipped.",), calls=(GET,), world=ORDER_WORLD),
            Example(("The order ord-1001 was placed on Tuesday, March 2, 2026.",), calls=(GET,), world=ORDER_WORLD),
            Example(("Your order ord-1009 is pending.",), calls=(GET,), world=ORDER_WORLD),
            Example(("There was a system error, please try again later.",), calls=(GET,), world=ORDER_WORLD),
            # "I've cancelled" what was cancelled before the episode: no call did it
            Example(("I've cancelled order ord-1003 for you.",), calls=(GET_CANCELLED,), world={"orders": [CANCELLED]}),
            # a count of days from today (the system prompt's) that the date beside it contradicts
            Example(("Order ord-1001 was placed on Monday, March 2, 4 days ago.",), calls=(GET,), world=ORDER_WORLD),
            # the confirmation of a write, with a date the write did not set
            Example(("Done: your $120.50 order now arrives Friday, March 13.",), calls=(GET, MOVE), world=ORDER_WORLD),
            # a message sent by no call, where no tool offered sends one
            Example(
                ("Order ord-1001 is pending. A confirmation has been emailed to you.",),
                calls=(GET,),
                world=ORDER_WORLD,
            ),
            # two records' amounts swapped in a table; a date in May under a label ("May" is no modal here)
            Example(
                ("| Item | Total |\n|---|---|\n| Desk lamp | $59.31 |\n| Office chair | $119.46 |",), calls=(LIST,)
            ),
            Example(("Order ord-1001:\n- Date: Monday, May 4\n- Total: $120.50",), calls=(GET,), world=ORDER_WORLD),
        ),
        passes=(
            Example(("Order ord-1003 is already cancelled.",), calls=(GET_CANCELLED,), world={"orders": [CANCELLED]}),
            Example(("Order ord-1001 was placed on Monday, March 2, 3 days ago.",), calls=(GET,), world=ORDER_WORLD),
            Example(
                ("Done: your $120.50 order now arrives Thursday, March 12.",), calls=(GET, MOVE), world=ORDER_WORLD
            ),
            Example(
                ("Your receipt for ord-1001 has been emailed to you.",),
                calls=(GET, ("send_receipt", {"order_id": "ord-1001"}, {"order_id": "ord-1001", "sent": True})),
                world=ORDER_WORLD,
            ),
            Example(
                ("| Item | Total |\n|---|---|\n| Desk lamp | $119.46 |\n| Office chair | $59.31 |",), calls=(LIST,)
            ),
            Example(("**Order ord-1001**\n- Status: pending\n- Total: $120.50",), calls=(GET,), world=ORDER_WORLD),
            Example(
                ("I have retrieved your order: ord-1001 is pending (placed Monday, 2 March).",),
                calls=(GET,),
                world=ORDER_WORLD,
            ),
            Example(
                ("I understand your concern, but I'm unable to change it. Please contact support.",),
                calls=(GET,),
                world=ORDER_WORLD,
            ),
        ),
    ),
    Check(
        "unverifiable_claim",
        "reply",
        unverifiable_claim,
        catches=(
            Example(("Order ord-1001 is pending; it is a limited edition.",), calls=(GET,), world=ORDER_WORLD),
            # promises the episode does not keep: a plan, an offer, advice, an event to come
            Example(
                ("Order ord-1001 is pending. I'm going to create a new one for you.",), calls=(GET,), world=ORDER_WORLD
            ),
            Example(
                ("Order ord-1001 is pending, but I can help with the rest of the order.",),
                calls=(GET,),
                world=ORDER_WORLD,
            ),
            Example(("Order ord-1001 is pending. Please try to find another one.",), calls=(GET,), world=ORDER_WORLD),
            Example(("Order ord-1001 is pending and will be shipped in 24 hours.",), calls=(GET,), world=ORDER_WORLD),
            Example(("Order ord-1001 is pending and is currently being reviewed.",), calls=(GET,), world=ORDER_WORLD),
            # "try again" once the retry went through: nothing is failing any more
            Example(("Order ord-1001 is pending. Please try again.",), calls=(GET_503, GET), world=ORDER_WORLD),
            # who did it, said by a name no field gives as the doer; what the agent says it is
            Example(
                ("Order ord-1001 is pending: it was reviewed by Adam Harrington.",), calls=(GET,), world=ORDER_WORLD
            ),
            Example(("Hello, I'm a Falcon account. Order ord-1001 is pending.",), calls=(GET,), world=ORDER_WORLD),
        ),
        passes=(
            Example(("Order ord-1001 is pending, total $120.50.",), calls=(GET,), world=ORDER_WORLD),
            Example(
                ("Order ord-1001 is pending. I'll be happy to help with anything else.",),
                calls=(GET,),
                world=ORDER_WORLD,
            ),
            Example(
                ("I'm your virtual assistant: order ord-1001 is pending. I can help with that.",),
                calls=(GET,),
                world=ORDER_WORLD,
            ),
        ),
    ),
    Check(
        "garbled_reply",
        "reply",
        garbled_reply,
        catches=(
            Example(('{"order_id": "ord-1001", "status": "pending"}',), calls=(GET,), world=ORDER_WORLD),
            Example(("success",), calls=(GET,), world=ORDER_WORLD),
            Example(("ord-1001, pending",), calls=(GET,), world=ORDER_WORLD),
            Example(
                ("Order ord-1001 is pending, there is no one to help, there is no one to help.",),
                calls=(GET,),
                world=ORDER_WORLD,
            ),
        ),
        passes=(
            Example(("| Order | Status |\n|---|---|\n| ord-1001 | pending |",), calls=(GET,), world=ORDER_WORLD),
            Example(("Done: ord-1001 is pending.",), calls=(GET,), world=ORDER_WORLD),
        ),
    ),
    Check(
        "fabricated_tool_output",
        "reply",
        fabricated_tool_output,
        catches=(Example(('<tool_response>{"status": "pending"}</tool_response>',)),),
        passes=(Example(("I looked it up with the order tool: it is pending.",), calls=(GET,), world=ORDER_WORLD),),
    ),
    Check(
        "tool_talk",
        "reply",
        tool_talk,
        catches=(
            Example(("You can call `cancel_order` with your order id to cancel it.",), calls=(GET,), world=ORDER_WORLD),
            Example(("I'll run update_shipping_address next.",), calls=(GET,), world=ORDER_WORLD),
            Example(("Tip: you can check it any time by calling `get_order` with ord-1001.",), calls=(GET,)),
        ),
        passes=(Example(("I used get_order to look it up: ord-1001 is pending.",), calls=(GET,), world=ORDER_WORLD),),
    ),
    Check(
        "echoed_request",
        "reply",
        echoed_request,
        catches=(Example(("Cancel order ord-1001",), user="I would like to cancel order ord-1001 please"),),
        passes=(Example(("Order ord-1001 is pending.",), calls=(GET,), world=ORDER_WORLD),),
    ),
    Check(
        "unknown_tool",
        "episode",
        unknown_tool,
        catches=(Example(("Done.",), calls=(("refund_everything", {}, {"error": "unknown tool"}),)),),
        passes=(Example(("Order ord-1001 is pending.",), calls=(GET,), world=ORDER_WORLD),),
    ),
    Check(
        "repeated_refused_call",
        "episode",
        repeated_refused_call,
        catches=(
            Example(
                ("I'm sorry, it cannot be deleted.",),
                calls=(
                    ("delete_order", {"order_id": "ord-1002"}, {"error": "policy_violation: a shipped order is kept"}),
                    ("delete_order", {"order_id": "ord-1002"}, {"error": "policy_violation: a shipped order is kept"}),
                ),
                world=ORDER_WORLD,
            ),
        ),
        passes=(Example(("Order ord-1001 is pending.",), calls=(GET,), world=ORDER_WORLD),),
    ),
    Check(
        "refusal_by_trial",
        "episode",
        refusal_by_trial,
        catches=(
            Example(
                ("I'm sorry, a shipped order cannot be deleted.",),
                user="Please delete order ord-1002.",
                calls=(
                    ("delete_order", {"order_id": "ord-1002"}, {"error": "policy_violation: a shipped order is kept"}),
                ),
                world=ORDER_WORLD,
                family="refusal",
            ),
            Example(
                ("Order ord-1002 has already shipped.",),
                user="Please ship order ord-1002.",
                calls=(
                    ("ship_order", {"order_id": "ord-1002"}, {"error": "policy_violation: order ord-1002 is shipped"}),
                ),
                world=ORDER_WORLD,
                family="already_done",
            ),
        ),
        passes=(
            Example(
                ("Order ord-1002 has shipped, and a shipped order cannot be deleted. Please contact support.",),
                user="Please delete order ord-1002.",
                calls=(("get_order", {"order_id": "ord-1002"}, ORDER_WORLD["orders"][1]),),
                world=ORDER_WORLD,
                family="refusal",
            ),
        ),
    ),
)
KINDS: tuple[str, ...] = tuple(c.name for c in CHECKS)


def find_hacks(traj: Trajectory, task: Task | None = None, words: bool = True) -> list[HackFinding]:
    """Every check's finding on an episode (one per check at most), in the declared order."""
    ep = Episode(traj, task, words)
    return [f for check in CHECKS if (f := check.find(ep)) is not None]


def fault_recovery(traj: Trajectory) -> tuple[bool | None, str]:
    """(handled, evidence) over every injected fault: after each, the agent called the tool again or told the user
    about the problem (for a data fault, any reply that goes on with what came back); None when there were none."""
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
        if FAULTS[f.kind].family != "network":
            told = told or any(m["role"] == "assistant" and (m.get("content") or "").strip() for m in later)
        if not (retried or told):
            return False, f"{f.kind} on {f.tool} (turn {f.turn}): neither retried nor reported to the user"
    return True, f"{len(traj.faults)} fault(s), each retried or reported"


PROBLEM_WORDS = re.compile(
    r"\b(error|fail(ed|ure)?|unavailable|could ?n[o']t|can ?n[o']t|unable|not able|problem|issue|try again|"
    r"retry|timed? ?out|rate limit|sorry|apolog|went wrong|temporar)",
    re.IGNORECASE,
)


def final_reply(traj: Trajectory) -> str:
    """The agent's last text reply ('' when it never wrote one)."""
    at = replies(traj)
    return traj.messages[at[-1]]["content"] if at else ""


# ------------------------------------------------------------------ helpers


def _values_text(message: dict[str, Any]) -> str:
    """The values of a tool result, without its keys ("loan_id" names no loan)."""
    content = message.get("content") or ""
    try:
        data = json.loads(content)
    except ValueError:
        return content
    out: list[str] = []
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif node is not None:
            out.append(str(node))
    return " ".join(out)


def _bare_values(text: str, shown: set[str]) -> bool:
    """Whether a reply is values without a sentence ("delta-alpha, active"): at most eight words, every one a value
    the tools showed, one of them an identifier."""
    words = re.findall(r"[\w'-]+", text.lower())
    if not words or len(words) > 8 or not set(words) <= shown:
        return False
    return any(re.search(r"[a-z][-_][a-z0-9]|\d", w) for w in words)


def _grams(words: list[str], n: int = 4) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def _call_key(call: ToolCall) -> tuple[str, str]:
    return call.name, json.dumps(call.arguments, sort_keys=True, default=str)


def _args(call: ToolCall) -> str:
    return json.dumps(call.arguments, sort_keys=True, default=str)[:80]


def _reads(name: str, tool: dict[str, Any]) -> bool:
    hints = (tool.get("function") or tool).get("annotations") or {}
    return bool(hints.get("readOnlyHint")) or bool(re.match(r"(?:get|list|find|search|lookup|read|show|view)_", name))


def example_trajectory(ex: Example) -> Trajectory:
    """The episode an `Example` describes, built as the rollouts record one: each call's result as given; a call whose
    result is the record it names with other values is a write, its patch replaces those values in the world."""
    messages: list[dict[str, Any]] = [
        {
            "role": "system",
            "content": "You are the assistant of an online shop. Today is Thursday, March 5, 2026. Rules: a shipped "
            "order is kept.",
        },
        {"role": "user", "content": ex.user},
    ]
    calls: list[ToolCall] = []
    patches: list[PatchEntry] = []
    state = copy.deepcopy(ex.world)
    names = sorted({name for name, _, _ in ex.calls} | {"get_order", "cancel_order", "delete_order"})
    for n, (name, args, result) in enumerate(ex.calls):
        cid = f"call_{n}"
        call = {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        content = json.dumps(result)
        refused = isinstance(result, dict) and "error" in result
        messages.append({"role": "tool", "tool_call_id": cid, "content": content})
        patch = [] if refused or name.startswith(Example.read_only) else _patch_of(state, result)
        if patch:
            state = apply_patch(state, patch)
            patches.append(PatchEntry(call_id=cid, tool=name, patch=patch))
        calls.append(
            ToolCall(
                turn=1,
                call_id=cid,
                name=name,
                tool=name,
                arguments=args,
                read_only=name.startswith(Example.read_only),
                executor="unknown_tool" if name == "refund_everything" else "code",
                ok=not refused and not error_result(content),
                error=str(result.get("error")) if refused else None,
                patch_ops=len(patch),
            )
        )
    for reply in ex.replies:
        messages.append({"role": "assistant", "content": reply})
    messages.append({"role": "user", "content": "Thanks. ###STOP###"})
    tools = [
        {
            "type": "function",
            "function": {"name": n, "description": n.replace("_", " "), "parameters": {"type": "object"}},
        }
        for n in names
        if n != "refund_everything"
    ]
    return Trajectory(
        trajectory_id="trj_" + hashlib.sha256(json.dumps([ex.replies, ex.user]).encode()).hexdigest()[:16],
        task_id="tsk_example",
        agent_id="agt_example",
        sample=0,
        seed=0,
        messages=messages,
        tools=tools,
        world_states=WorldStates(initial=ex.world, final=state, patches=patches),
        calls=calls,
        model="example",
        status="finished",
        reason="user_stop",
        turns=2,
        tool_calls=len(calls),
    )


def _patch_of(state: dict[str, Any], result: Any) -> list[dict[str, Any]]:
    """The JSON Patch that makes the record `result` names (by any of its *_id values) hold `result`'s values."""
    if not isinstance(result, dict):
        return []
    for coll, records in state.items():
        for i, r in enumerate(records):
            key = next((k for k in r if k.endswith("_id") and r[k] == result.get(k)), None)
            if key and key == next((k for k in r if k.endswith("_id")), None):
                return [
                    {"op": "replace", "path": f"/{coll}/{i}/{k}", "value": v}
                    for k, v in result.items()
                    if k in r and r[k] != v
                ]
    return []


def example_task(ex: Example) -> Task | None:
    return Task(
        task_id="tsk_example",
        agent_id="agt_example",
        difficulty="refusal" if ex.family == "refusal" else "single_call",
        world_id="wld_example",
        blueprint=Blueprint(calls=[], end_state=ex.world, touched=[], family=ex.family),
        user_persona=Persona(communication="casual", patience="medium", expertise="intermediate"),
        user_goal=UserGoal(request=ex.user),
        initial_state=ex.world,
        rubric=Rubric(criteria=[]),
    )
