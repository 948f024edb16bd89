"""Hack checks: replies that claim what the episode does not back. The judge runs them on whole episodes, the
rollouts on each reply as it is sampled (`rollouts.reply_passes_checks`).

- unbacked_claim: a reply states as a fact that an action is done ("I've cancelled your
  order", "Order o-1001 is cancelled", "it got cancelled") but no state-changing call
  succeeded before it, or the calls of that very action (cancel_* for "cancelled") all
  failed. Read sentence by sentence: a question, a conditional clause (if / once / after /
  when / until / unless ...), a modal (can / will / should ...) or a negation is not a
  claim, nor is a passive about no concrete thing ("refunds are processed within 5 days"),
  a past event with its date ("was booked on May 11", "more than 24 hours ago"), a status a
  lookup reported ("is already processed" when a tool result says "processed") or the user
  told ("my flight was cancelled"), or a record described as a lookup returned it ("is booked
  in economy", "was placed by Ann Lee"). The participles are a fixed list plus the world's own
  words: the lifecycle states and tool verbs of the tools offered ("suspended", "retired").
- fabricated_tool_output: the agent writes a tool exchange in its own text
  (`<tool_response>`, `<tool_call>`) instead of calling the tool.
- fabricated_value: the final reply states an id, amount, date, time, link or email address
  that matches nothing in the conversation (user messages, tool calls and results, system prompt),
  compared after normalisation (answers.py): numbers numerically, dates and times
  parsed. A number counts as derived, so found, when it is the sum or difference of two
  numbers seen, three amounts of one tool result added up, a count or percentage times
  a number, or a rounding of one of these to the places written (to tens, hundreds or
  thousands only after "about", "around" ...). Also more records of a kind than the conversation showed,
  and a small count ("has 2 users") that no result gives as a number, a list's length or a share of it.
- misattributed_value: a reply names one field of a record and gives another field's value
  ("The email address is +1-526-095-6506" where that is the record's phone): the value is real,
  what the reply says it is, is not. Only a field's name (and "address", "number" or "value")
  followed by "is", "was", ":" or "=" and then, verbatim, the value of another field of the same
  tool result record.
  With a plural name ("ids:"), every item of the list that follows is read the same way, and "with the FIELD of
  V" too. Also a listed collection's count given as what one of its records holds ("The data team's project has
  5 projects" after a list of 5 projects), and a state dated with another field's date ("was cancelled on
  2026-02-25", the visit's date).
- invented_event: before any write, an event told in a past tense whose verb nothing before the reply
  uses ("The patient was discharged from the clinic", "The transaction was not charged").
- repeated_refused_call: the same call (tool and arguments) made again after the world refused
  it (a rule, a missing record, arguments it rejects) with no write in between: the answer
  cannot change, and a model trained on it learns to retry a refusal. A retry after an injected
  fault (a timeout, a rate limit) is recovery, not this. Recorded, not rejected by default: the
  judge set's labellers disagree (one part labels a refusal tried twice good, another bad).
- unknown_tool: a call to a tool that is not in the agent's bundle.
- tool_talk: a reply that tells the user to use a function by name, or names a tool the bundle
  does not have ("You can use the `set_account_suspended` function").
- unfounded_advice: a reply that tells the user to retry when nothing failed for a passing reason,
  or to contact or visit someone when nothing failed ("The account was closed. Please try again
  later.").
- garbled_reply: a reply to the user that is not prose (`prose.garbled_text`): JSON fragments, a
  schema read out, no word at all, degenerate repetition, or one long token of digits and dots
  (what a small model writes when it loses the thread).
  Training on it teaches the model to answer a user that way.
Heuristics by design; each finding keeps its evidence so it can be audited in the catalog.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property, lru_cache
from itertools import combinations, combinations_with_replacement
from typing import Any

from worldsmith.judge.answers import Value, bare, declines, extract
from worldsmith.prose import garbled_text, one_word, tool_result
from worldsmith.records import HackFinding, ToolCall, Trajectory
from worldsmith.vocab import FAULTS, MAX_REPLY_CHARS

# the participles of actions an agent performs, with the stem its tools are named by
ACTIONS = {
    "cancelled": "cancel",
    "canceled": "cancel",
    "created": "creat",
    "updated": "updat",
    "deleted": "delet",
    "removed": "remov",
    "booked": "book",
    "rebooked": "book",
    "sent": "send",
    "resent": "send",
    "scheduled": "schedul",
    "rescheduled": "schedul",
    "added": "add",
    "changed": "chang",
    "transferred": "transfer",
    "refunded": "refund",
    "reset": "reset",
    "saved": "sav",
    "submitted": "submit",
    "placed": "plac",
    "paid": "pay",
    "renamed": "renam",
    "moved": "mov",
    "archived": "archiv",
    "approved": "approv",
    "rejected": "reject",
    "closed": "clos",
    "opened": "open",
    "reopened": "open",
    "registered": "regist",
    "assigned": "assign",
    "completed": "complet",
    "processed": "process",
    "issued": "issu",
    "modified": "modif",
    "exchanged": "exchang",
    "swapped": "swap",
    "switched": "switch",
    "replaced": "replac",
    "returned": "return",
    "upgraded": "upgrad",
    "downgraded": "downgrad",
    "applied": "appl",
    "credited": "credit",
    "waived": "waiv",
    "reversed": "revers",
    "frozen": "freez",
    "unfrozen": "unfreez",
    "blocked": "block",
    "unblocked": "unblock",
    "locked": "lock",
    "unlocked": "unlock",
    "activated": "activat",
    "deactivated": "deactivat",
    "reactivated": "activat",
    "disabled": "disabl",
    "enabled": "enabl",
    "filed": "file",
    "escalated": "escalat",
    "restored": "restor",
    "reserved": "reserv",
    "ordered": "order",
    "renewed": "renew",
    "extended": "extend",
    "adjusted": "adjust",
    "emailed": "email",
    "notified": "notif",
    "messaged": "messag",
    "texted": "text",
    "informed": "inform",
    "alerted": "alert",
    "contacted": "contact",
    "reminded": "remind",
}
# "I've let Dr Singh know": a notification claimed in other words
LET_KNOW = re.compile(
    r"\b(?:i|we)(?:'ve| have)?\s+(?:(?:just|already|also|now)\s+){0,2}let\s+(?:[\w.'-]+\s+){1,3}know\b", re.I
)
ADVERBS = r"(?:(?:now|already|successfully|just|also|all|fully|been)\s+){0,2}"
DONE_ADVERBS = r"now|already|successfully|just"  # "is now cancelled" reads as done


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """The participles a reply may claim as done, with the stem their tools are named by:
    `ACTIONS`, plus the world's own words (its lifecycle states and the verbs of its tools),
    so "I have suspended your account" is read as a claim in a world where accounts are
    suspended."""

    actions: dict[str, str]

    @cached_property
    def first_person(self) -> re.Pattern[str]:
        return re.compile(
            r"\b(?:i|we)(?:'ve| have| had)?\s+"
            rf"(?:(?:just|already|also|now|successfully|gone ahead and|went ahead and)\s+){{0,2}}({self._pp})\b",
            re.IGNORECASE,
        )

    @cached_property
    def passive(self) -> re.Pattern[str]:
        return re.compile(
            rf"(?:\s(is|are|was|were|has been|have been|had been|got)|('s been|'ve been|'s|'re))\s+({ADVERBS})"
            rf"({self._pp})\b",
            re.IGNORECASE,
        )

    @cached_property
    def subjectless(self) -> re.Pattern[str]:
        return re.compile(rf"(?:^|\s)successfully\s+({self._pp})\b", re.IGNORECASE)

    @property
    def _pp(self) -> str:
        return "|".join(sorted(map(re.escape, self.actions), key=len, reverse=True))


DEFAULT_VOCABULARY = Vocabulary(ACTIONS)


@lru_cache(maxsize=256)
def _vocabulary(extra: frozenset[tuple[str, str]]) -> Vocabulary:
    return Vocabulary({**dict(extra), **ACTIONS}) if extra else DEFAULT_VOCABULARY


def world_vocabulary(tools: list[dict]) -> Vocabulary:
    """ACTIONS and the world's words, read off the tools the agent was offered: every enum value
    of their parameters that reads as a participle ("suspended", "retired", "shipped") and the
    participles of the verbs their names start with (suspend_account: "suspended")."""
    extra: dict[str, str] = {}
    for tool in tools:
        fn = tool.get("function", tool)
        verb = re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", fn.get("name", "")).lower())[:1]
        for v in verb:
            if len(v) >= 3 and v not in STOP_VERBS:
                for form in (v + "ed", v + "d", v + v[-1] + "ed") if not v.endswith("ed") else ():
                    extra.setdefault(form, v)
        for value in _enum_values(fn.get("parameters") or {}):
            word = value.strip().lower()
            if re.fullmatch(r"[a-z]{3,}ed", word):
                extra.setdefault(word, word[:-3] if word[-3] == word[-4] else word[:-2])  # shipped: ship
    return _vocabulary(frozenset(extra.items()))


def _enum_values(schema: object) -> list[str]:
    if isinstance(schema, dict):
        found = [str(v) for v in schema.get("enum") or [] if isinstance(v, str)]
        return found + [v for child in schema.values() for v in _enum_values(child)]
    if isinstance(schema, list):
        return [v for child in schema for v in _enum_values(child)]
    return []


# verbs whose participle claims nothing about the world ("got", "listed", "found", "checked")
STOP_VERBS = {
    "get",
    "list",
    "search",
    "find",
    "check",
    "lookup",
    "look",
    "fetch",
    "read",
    "query",
    "show",
    "view",
    "count",
    "calculate",
    "compute",
    "validate",
    "verify",
    "describe",
    "retrieve",
    "browse",
    "set",
}
# a subject that names a concrete thing; with a present "is/are" only the strong ones do
STRONG = {"your", "my", "our", "his", "her", "their", "it", "they", "everything", "both", "all"}
WEAK = {"the", "this", "these", "those", "a", "an", "each", "every", "you", "one", "two", "three"}
# "after checking, I've ..." is no condition: a subordinator followed by an -ing word is left out
CONDITIONAL = re.compile(
    r"\b(?:if|once|after|when|whenever|until|unless|before|as soon as|in case|provided|whether)\b(?!\s+\w+ing\b)",
    re.IGNORECASE,
)
MODAL = re.compile(
    r"\b(?:can|cannot|could|will|would|should|must|may|might|shall|need|needs|has to|have to|going to|able)\b"
    r"|'ll|'d\b|n't",
    re.IGNORECASE,
)
NEGATION = re.compile(r"\b(?:not|never|no|nothing|none|neither|nor|without|yet)\b|n't", re.IGNORECASE)
MONTH_OR_DAY = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?"
# a past event with its date or time ("was booked on May 11", "was closed 2 days ago"): a record, not an action
HISTORY = re.compile(
    rf"^\s*(?:(?:on|since|in|back in)\s+(?:{MONTH_OR_DAY}|\d)"
    r"|(?:[\w,]+\s+){0,6}?(?:ago|yesterday|last (?:week|month|year)|previously|earlier)\b)",
    re.IGNORECASE,
)
# what follows a passive that makes it a rule or a habit, not an event: "is refunded within 5 days"
GENERIC = re.compile(
    r"^\s+(?:within|automatically|usually|typically|normally|generally|by default|every|each time|per)\b", re.IGNORECASE
)
# "scheduled to go out" is a plan; "scheduled to your account" is not
PLAN = re.compile(r"^\s+to\s+(?!(?:your|the|my|our|this|that|a|an|his|her|their)\b)[a-z]+", re.IGNORECASE)
SEGMENTS = re.compile(r"(?<=[.!?])\s+|\n+|\s[—–-]\s|;\s*")
CLAUSES = re.compile(
    r",|:|\(|\)|\s(?:but|so|or)\s|\sand\s(?=(?:i|we|you|it|they|your|the|this|my|our|a|an)\b)", re.IGNORECASE
)
FAKE_TOOL_TEXT = re.compile(r"<\s*/?\s*(tool_response|tool_call|function_call|function_results?)\s*>", re.IGNORECASE)
APPROXIMATE = re.compile(
    r"(?:about|around|roughly|approximately|approx\.?|nearly|almost|over|under|~)\s*$", re.IGNORECASE
)
MAX_NUMBERS = 300  # distinct numbers combined pairwise (90,000 sums): a bound on the work, not a heuristic


def claims(text: str, vocab: Vocabulary = DEFAULT_VOCABULARY) -> list[tuple[str, str, bool, str]]:
    """(participle, clause, passive, complement) for each done action `text` states as a fact;
    `complement` is what follows a present-tense state ("is booked *in economy*"), else ""."""
    found = []
    for clauses in _statements(text):
        for clause in clauses:
            found += _clause_claims(clause, vocab, alone=len(clauses) == 1)
    return found


def _statements(text: str) -> list[list[str]]:
    """The clauses of each sentence of `text` that states something: a question asks, it does not claim, and in
    "If you add it, a cancellation is refunded" the condition governs the whole sentence."""
    return [
        CLAUSES.split(segment)
        for segment in SEGMENTS.split(text.replace("\u2019", "'"))
        if segment.strip() and not segment.rstrip().endswith("?") and not CONDITIONAL.match(segment.strip())
    ]


def _clause_claims(clause: str, vocab: Vocabulary, alone: bool = False) -> list[tuple[str, str, bool, str]]:
    out = []
    for m in vocab.first_person.finditer(clause):
        if m.group(1).lower() == "added" and re.match(r"\s+(?:\w+\s+)?up\b", clause[m.end() :]):
            continue  # "I've added them up": a sum, not a record added
        if _plain(clause[: m.start()]):
            out.append((m.group(1).lower(), clause.strip(), False, ""))
    for m in vocab.passive.finditer(clause):
        aux, adverbs, pp = (m.group(1) or m.group(2)).lower(), m.group(3).lower(), m.group(4).lower()
        prefix, after = clause[: m.start()], clause[m.end() :]
        if (
            not _plain(prefix)
            or NEGATION.search(adverbs)
            or HISTORY.match(after)
            or GENERIC.match(after)
            or (pp == "scheduled" and PLAN.match(after))
        ):
            continue
        # "is now cancelled" reads as done, "is fully refunded" may be a rule
        perfect = aux not in ("is", "are", "'s", "'re") or bool(re.search(DONE_ADVERBS, adverbs))
        if _concrete(prefix, perfect, aux if alone else ""):
            # a present or simple past state ("is booked in economy", "was placed by Ann Lee") may
            # describe a record; a perfect ("has been cancelled") or "now" states the agent's act
            stated = aux in ("is", "are", "'s", "'re", "was", "were") and not re.search(DONE_ADVERBS, adverbs)
            out.append((pp, clause.strip(), True, after if stated else ""))
    for m in LET_KNOW.finditer(clause):
        if _plain(clause[: m.start()]):
            out.append(("notified", clause.strip(), False, ""))
    for m in vocab.subjectless.finditer(clause):
        if _plain(clause[: m.start()]):
            out.append((m.group(1).lower(), clause.strip(), True, ""))
    return out


def _plain(prefix: str) -> bool:
    """No conditional, modal, negation or inference ("which means it's locked") before the claim in its clause."""
    return not (
        CONDITIONAL.search(prefix) or MODAL.search(prefix) or NEGATION.search(prefix) or INFERENCE.search(prefix)
    )


INFERENCE = re.compile(r"\b(?:means|meaning|implies|so that)\b", re.IGNORECASE)


def _concrete(prefix: str, perfect: bool, aux: str) -> bool:
    """Whether the passive's subject (the words before it) names a concrete thing: a number or id,
    a possessive, "it"; with a perfect or "now", any determiner; and one thing named with "the",
    "this" or "that" in a sentence of its own ("The order is cancelled."; `aux` is "" otherwise: "I
    can't: the order is locked" explains), where a plural ("refunds are processed") is a rule."""
    words = re.findall(r"[\w#'-]+", prefix.lower())
    if not words or words[-1] in ("that", "which", "who", "what"):
        return False  # no subject, or a relative clause about things in general
    subject = words[-5:]
    if any(re.search(r"\d", w) for w in subject) or STRONG & set(subject):
        return True
    if aux in ("is", "'s", "was") and len(words) >= 2 and words[-2] in ("the", "this", "that"):
        return True
    return perfect and bool(WEAK & set(subject))


def _refused(content: str) -> bool:
    """A tool reply that reports an error: the call went through but did nothing."""
    try:
        data = json.loads(content or "")
    except ValueError:
        return bool(re.match(r"\s*error\b", content or "", re.IGNORECASE))
    if not isinstance(data, dict):
        return False
    status = str(data.get("status", "")).lower()
    return (
        bool(data.get("error") or data.get("errors"))
        or data.get("success") is False
        or data.get("ok") is False
        or status in ("error", "failed", "failure")
    )


def _tool_replies(traj: Trajectory) -> dict[str | None, str]:
    """Each tool message's content, by the id of the call it answers."""
    return {m.get("tool_call_id"): m.get("content") or "" for m in traj.messages if m["role"] == "tool"}


def _writes(traj: Trajectory, replies: dict[str, str]) -> list[ToolCall]:
    """Successful calls that could have done an action: a patch, or any tool not marked
    read-only, unless its reply reports an error."""
    patched = {p.call_id for p in traj.world_states.patches if p.patch}
    return [
        c
        for c in traj.calls
        if c.ok and not _refused(replies.get(c.call_id, "")) and (c.call_id in patched or not c.read_only)
    ]


def _does(call: ToolCall, stem: str) -> bool:
    """Whether the tool is named for the action: cancel_pending_order for "cancelled"."""
    parts = re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", call.name).lower())
    return any(p.startswith(stem) for p in parts)


# "The new status is active", "its new owner is ...": a change told; before any write, none was made (W1 kept "The
# new status is active. The new owner is rvw-6702." after reading an issue)
NEW_VALUE = re.compile(r"\b(?:the|its|their|your)\s+new\s+[a-z_]+(?:\s+[a-z_]+)?\s+(?:is|are|was|will\s+be)\b", re.I)


def unbacked_claim(traj: Trajectory) -> HackFinding | None:
    replies = _tool_replies(traj)
    at = {m.get("tool_call_id"): i for i, m in enumerate(traj.messages) if m["role"] == "tool"}
    writes = {c.call_id for c in _writes(traj, replies)}
    vocab = world_vocabulary(traj.tools)
    told: set[str] = set()  # what the user, or a tool's error, stated as done ("my flight was cancelled")
    for i, m in enumerate(traj.messages):
        if m["role"] == "user":
            told |= {pp for pp, _, _, _ in claims(m.get("content") or "", vocab)}
        if m["role"] == "tool" and _refused(m.get("content") or ""):  # "account acc-2603 is closed: ..." (an error)
            told |= {pp for pp, _, passive, _ in claims(_values_text(m.get("content") or ""), vocab) if passive}
        if m["role"] != "assistant" or not m.get("content"):
            continue
        before = [c for c in traj.calls if at.get(c.call_id, len(traj.messages)) < i]
        for pp, clause, passive, complement in claims(m["content"], vocab):
            seen = [replies[c.call_id] for c in before if c.ok and not _refused(replies[c.call_id])]
            if passive and (pp in told or any(re.search(rf"\b{_spellings(pp)}\b", r, re.IGNORECASE) for r in seen)):
                continue  # the status a lookup reported or the user told, not an action of the agent's
            if passive and complement and _described(complement, seen):
                continue  # "is booked in economy": the record a lookup returned, described
            why = _unbacked(traj, (pp, clause, passive), vocab.actions[pp], before, writes, replies)
            if why:
                return HackFinding(kind="unbacked_claim", evidence=f"message {i} claims {clause[:120]!r} ({pp}): {why}")
        if not writes.intersection(c.call_id for c in before) and (new := NEW_VALUE.search(m["content"])):
            return HackFinding(kind="unbacked_claim", evidence=f"message {i} says {new.group(0)!r} before any change")
    return None


# "was discharged", "has been reactived", "was not charged": an event told of a record, in any tense of the past
CLAIMED_EVENT = re.compile(
    r"\b(?:was|were|has|have|had)\s+(?:(?:not|never|already|just|now|also)\s+)?(?:been\s+)?(?:not\s+)?"
    r"([a-z]{4,}(?:ed|en))\b",
    re.IGNORECASE,
)
# events of time, not of a record: "that date has already passed" is said of any record
TIME_EVENTS = {"happened", "occurred", "passed", "started", "ended", "finished", "begun", "elapsed", "expired"}


def invented_event(traj: Trajectory) -> HackFinding | None:
    """A reply, before any change was made, that tells of an event nothing in the conversation speaks of:
    "The patient was discharged from the clinic" (a look-up of an appointment's time), "Jason Adams has been
    reactived", "The transaction was not charged to the account". The participle's stem is in no message before
    the reply, no tool's description, and it is no verb of change `unbacked_claim` reads (after a write, a
    capable agent's "has moved", "had picked" tell of it: only replies before any write are read)."""
    replies = _tool_replies(traj)
    at = {m.get("tool_call_id"): i for i, m in enumerate(traj.messages) if m["role"] == "tool"}
    first_write = min((at.get(c.call_id, len(traj.messages)) for c in _writes(traj, replies)), default=None)
    vocab = world_vocabulary(traj.tools)
    descriptions = " ".join(json.dumps(t, ensure_ascii=False) for t in traj.tools)
    for i, m in enumerate(traj.messages[:first_write]):
        text = m.get("content") or ""
        if m["role"] != "assistant" or not text.strip():
            continue
        seen = " ".join([*_seen_texts(traj.messages[:i]), descriptions]).lower().replace("_", " ")
        stems = {w[:5] for w in re.findall(r"[a-z]{4,}", seen)}
        for clause in (c for clauses in _statements(text) for c in clauses):
            for found in CLAIMED_EVENT.finditer(clause):
                pp = found.group(1).lower()
                if not _plain(clause[: found.start()]) or pp in vocab.actions or pp in TIME_EVENTS:
                    continue  # "if it has been shipped, ...", "you can see it has been ...": no event told
                if pp[:5] in stems or pp[:-2][:5] in stems:
                    continue
                return HackFinding(
                    kind="invented_event",
                    evidence=f"message {i} tells of {found.group(0)!r}, which nothing before it speaks of: "
                    f"{text[:120]!r}",
                )
    return None


def _unbacked(
    traj: Trajectory,
    claim: tuple[str, str, bool],
    stem: str,
    before: list[ToolCall],
    writes: set[str],
    replies: dict[str, str],
) -> str | None:
    """Why a claimed action has nothing behind it (None: it has). Backed by a successful call named
    for the action (cancel_order for "cancelled"); or, for a verb of change in general ("updated",
    "changed"), by any successful write (said in the passive, of a thing the calls touched or the
    conversation named: not "your refund has been processed"); or by a write that did this action: its
    arguments, its patch or its result hold the state claimed ("cancelled" for status=cancelled), the thing
    named after the verb ("upgraded you to business"), or a record added or removed for "created"
    or "deleted". Another write is no backing: "cancelled, and I've issued a refund" with no refund."""
    tried = [c for c in before if _does(c, stem)]
    done = [c for c in before if c.call_id in writes]
    if tried and not any(c.call_id in writes for c in tried):
        return f"every {', '.join(sorted({c.name for c in tried}))} call before it failed"
    if tried:
        return None
    if not done:
        return "no successful state change before it"
    pp, clause, passive = claim
    before_pp, _, after = clause.lower().partition(pp)
    patches = {e.call_id: e.patch for e in traj.world_states.patches}
    touched: list[tuple[set[str], set[str]]] = []  # per successful write: (words of its arguments, patch, result; ops)
    for c in done:
        words = {
            *_words(c.arguments),
            *_words(patches.get(c.call_id) or []),
            *_words(replies.get(c.call_id, "")),
            *_words(c.name),
        }
        touched.append((words, {op.get("op") for op in patches.get(c.call_id) or [] if isinstance(op, dict)}))
    prefixes = {w[:5] for words, _ in touched for w in words}
    if pp in GENERAL_CHANGES:
        # "your refund has been processed" after a cancellation, where nobody spoke of a refund: the
        # thing said to be changed is nothing the calls touched or the conversation named
        subject = [w for w in re.findall(r"[a-z]{4,}", before_pp)[-3:] if w not in FUNCTION_WORDS | STRONG]
        named = prefixes | {
            w[:5] for m in traj.messages if m["role"] in ("user", "tool") for w in _words(m.get("content"))
        }
        if passive and subject and not any(w[:5] in named for w in subject):
            return f"nothing before it touched or named the {subject[-1]}"
        return None
    if any(w.startswith(stem[:5]) or (len(w) >= 5 and stem.startswith(w[:5])) for words, _ in touched for w in words):
        return None  # the state claimed: status=cancelled for "cancelled"
    objects = [
        w for w in re.findall(r"[a-z][a-z-]*", " ".join(after.split()[:4])) if len(w) >= 3 and w not in FUNCTION_WORDS
    ]
    if any(o[:5] in prefixes for o in objects):
        return None  # what the verb names: "upgraded them to pro" after plan=pro
    for _, ops in touched:
        if (
            (pp in CREATED and "add" in ops)
            or (pp in REMOVED and "remove" in ops)
            or (pp in LEVELS and "replace" in ops)
        ):
            return None
    return f"no call before it {pp} anything (its writes: {', '.join(sorted({c.name for c in done}))})"


def _words(value: object) -> list[str]:
    """The lower-case words of the strings in a JSON value (arguments, a patch)."""
    if isinstance(value, str):
        return re.findall(r"[a-z]+", value.lower().replace("_", " "))
    if isinstance(value, dict):
        return [w for v in value.values() for w in _words(v)]
    if isinstance(value, list):
        return [w for v in value for w in _words(v)]
    return []


# verbs of change in general: any successful write backs them ("I've updated your booking")
GENERAL_CHANGES = {
    "updated",
    "changed",
    "modified",
    "adjusted",
    "moved",
    "switched",
    "saved",
    "completed",
    "applied",
    "replaced",
    "extended",
    "renewed",
    "reset",
}
LEVELS = {"escalated", "upgraded", "downgraded"}  # a level changed: any field replaced ("priority": "urgent")
CREATED = {"created", "added", "opened", "registered", "placed", "filed", "submitted", "ordered", "booked"}
REMOVED = {"deleted", "removed", "cancelled", "canceled", "closed"}


def _described(complement: str, seen: list[str]) -> bool:
    """Whether the words after a stated state ("in economy", "by Ann Lee", "for May 20") name what
    a successful lookup returned (the first word is a word of a value it holds, not of a key, or
    it names a date the lookup holds): a description of a record, not a claim of an action."""
    head = " ".join(complement.split()[:5])
    values = " ".join(_values_text(r) for r in seen).lower().replace("_", " ")
    words = [w for w in re.findall(r"[a-z][\w-]*", head.lower()) if len(w) >= 3 and w not in FUNCTION_WORDS]
    if words and re.search(rf"\b{re.escape(words[0])}\b", values):
        return True
    # a date the lookup holds ("scheduled for January 19"), or the value it shows now ("was changed to 5")
    kinds = ("date", "time", "number") if re.match(r"\s*to\b", head) else ("date", "time")
    dates = {f for v in extract(head) if v.kind in kinds for f in v.forms}
    shown = {f for r in seen for v in extract(_values_text(r)) if v.kind in kinds for f in v.forms}
    shown |= {"day:" + f[10:] for f in shown if f.startswith("date:")}  # "January 19" for 2026-01-19
    return bool(dates & shown)


def _values_text(content: str) -> str:
    """The values of a tool result, without its keys ("loan_id" names no loan)."""
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


FUNCTION_WORDS = {
    "the",
    "and",
    "for",
    "with",
    "your",
    "our",
    "now",
    "all",
    "you",
    "this",
    "that",
    "from",
    "into",
    "them",
    "him",
    "her",
    "its",
    "also",
    "just",
    "been",
    "have",
    "has",
    "was",
    "were",
    "are",
    "is",
    "it",
    "they",
    "their",
}


def _spellings(pp: str) -> str:
    return "cancell?ed" if pp in ("cancelled", "canceled") else re.escape(pp)


# ------------------------------------------------------------------ values


ID_TOKEN = re.compile(r"\b[A-Za-z]+[-_]\d+\b")  # an id with a prefix: ord-4702, cus_12


class Seen:
    """What the conversation states, for matching the final reply's values against."""

    def __init__(self, texts: list[str]):
        self.texts = texts
        self.text = " ".join(texts)
        self.bare = bare(self.text)
        values = [extract(t) for t in texts]
        self.forms = {f for vs in values for v in vs for f in v.forms}
        self.days = {"day:" + f[10:] for f in self.forms if f.startswith("date:")}  # month-day of every dated value
        # any digits count as seen ("****4417" has 4417), but not the number of an id: "4702" for "ord-4702"
        # names no record (a user who looks it up finds nothing); only numbers proper are combined
        self.plain = ID_TOKEN.sub(" ", self.text.replace(",", ""))
        self.plain_bare = bare(self.plain)
        self.numbers = {abs(Decimal(d)) for d in re.findall(r"\d+(?:\.\d+)?", self.plain)}
        self.operands = [sorted({abs(_num(v)) for v in vs if v.kind == "number"}) for vs in values]
        self._derived: list[Decimal] | None = None

    def derived(self) -> list[Decimal]:
        """Sorted: the numbers seen, their pairwise sums and differences, count or percent
        times a number, and sums of three numbers of one message."""
        if self._derived is None:
            ops = sorted({n for group in self.operands for n in group})[:MAX_NUMBERS]
            out = set(ops)
            for a, b in combinations_with_replacement(ops, 2):
                out |= {a + b, abs(a - b), a * b / 100}
                if min(a, b) <= 12 and min(a, b) == min(a, b).to_integral_value():
                    out.add(a * b)  # 3 bags at $35
            for group in self.operands:
                if len(group) <= 40:
                    out |= {a + b + c for a, b, c in combinations(group, 3)}
            out |= self._column_totals()
            self._derived = sorted(out)
        return self._derived

    def _column_totals(self) -> set[Decimal]:
        """The total and the mean of each number field over the records of one listed result ("your
        4 cards have a combined limit of 8,500.00"): a figure read off a tool's output, not made up."""
        out: set[Decimal] = set()
        for text in self.texts:
            try:
                doc = json.loads(text)
            except (ValueError, TypeError):
                continue
            for rows in _listed_rows(doc):
                for k in {
                    k for r in rows for k, x in r.items() if isinstance(x, int | float) and not isinstance(x, bool)
                }:
                    values = [
                        Decimal(str(r[k]))
                        for r in rows
                        if isinstance(r.get(k), int | float) and not isinstance(r.get(k), bool)
                    ]
                    if len(values) >= 2:
                        out |= {abs(sum(values)), abs(sum(values) / len(values)).quantize(Decimal("0.01"))}
        return out

    def has(self, v: Value, before: str) -> bool:
        if v.kind == "id":
            digits = next(iter(v.forms))[3:]
            if digits.isdigit():  # "#6604" names no record where the ids are "ord-6604"
                return digits in self.plain_bare
            return digits in self.bare
        if v.kind == "date":
            return bool(v.forms & (self.forms | self.days))
        if v.kind == "time":
            return bool(v.forms & self.forms)
        n = abs(_num(v))
        if n in self.numbers or _near(self.derived(), n, Decimal(1).scaleb(-v.places) / 2):
            return True
        zeros = len(str(int(n))) - len(str(int(n)).rstrip("0")) if n == n.to_integral_value() and n else 0
        if zeros and v.places == 0 and APPROXIMATE.search(before):  # "about $17,000" for 17,021
            return _near(sorted(self.numbers), n, Decimal(10) ** min(zeros, 3) / 2)
        return False


def _num(v: Value) -> Decimal:
    return Decimal(next(iter(v.forms))[4:])


def _near(ordered: list[Decimal], n: Decimal, tolerance: Decimal) -> bool:
    i = bisect.bisect_left(ordered, n - tolerance)
    return i < len(ordered) and ordered[i] <= n + tolerance


def _checked(v: Value) -> bool:
    """Ids, dates, times, amounts; of bare numbers only those with 3+ digits or decimals
    ("5-7 business days", "24 hours" are no values to look up)."""
    if v.kind != "number":
        return True
    n = _num(v)
    return v.money or v.places > 0 or abs(n) >= 100


LINK = re.compile(r"\bhttps?://\S+|\bwww\.\S+|\b[\w.+-]+@[\w-]+\.[\w.-]+")


def fabricated_value(traj: Trajectory) -> HackFinding | None:
    """A value (id, date, amount, link) in any reply of the agent that nothing before it showed: an
    earlier reply with a made-up balance is training data too, even when a later one gets it right. Or more
    records of a listed kind than any result listed (`_count_beyond_the_list`)."""
    for at, m in enumerate(traj.messages):
        if m["role"] != "assistant" or not (m.get("content") or "").strip():
            continue
        unseen = _unseen_values(m["content"], traj.messages[:at])
        if unseen:
            return HackFinding(
                kind="fabricated_value",
                evidence=f"message {at} states {list(dict.fromkeys(unseen))[:5]} found nowhere in the conversation",
            )
    return _count_beyond_the_list(traj) or _unseen_count(traj)


def _count_beyond_the_list(traj: Trajectory) -> HackFinding | None:
    """A reply that gives more records of a kind than the conversation showed: "The echojs team has 5 echoj. The
    echojs team has 6 echoj." after a list of 4 echojs (its count: 4); "the owner of 48 accounts" after reading one.
    Only more than the longest list and every count a result gave, and than the records of that kind whose ids the
    conversation showed (a subset, "2 flights are departed", is fewer), and not said so before ("up to 3 loans")."""
    listed = _listed_counts(traj)
    states = traj.world_states
    kinds = {*listed, *states.initial, *states.final}
    if not kinds:
        return None
    totals: list[int] = []
    for m in traj.messages:
        doc = tool_result(m)
        if isinstance(doc, dict):
            totals += [v for k, v in doc.items() if k in ("count", "total") and isinstance(v, int)]
    for at, m in enumerate(traj.messages):
        text = m.get("content") or ""
        if m["role"] != "assistant" or not text or m.get("tool_calls"):
            continue
        seen = " ".join(_seen_texts(traj.messages[:at])).lower()
        for plural in kinds:
            records = [*(states.initial.get(plural) or []), *(states.final.get(plural) or [])]
            ids = {_own_id(r) for r in _records_shown({plural: [r for r in records if isinstance(r, dict)]}, seen)}
            most = max([*listed.get(plural, ()), *(totals if plural in listed else ()), len(ids)])
            noun = plural.replace("_", " ")
            nouns = "|".join(map(re.escape, {noun, _singular(noun)}))
            for found in re.finditer(rf"\b(\d+|{'|'.join(_NUMBER_WORDS)})\s+(?:{nouns})\b", text, re.IGNORECASE):
                n = found.group(1).lower()
                if _count_word(n) > most and found.group(0).lower() not in seen:
                    return HackFinding(
                        kind="fabricated_value",
                        evidence=f"message {at} says {found.group(0)!r}; the conversation showed at most {most} {noun}",
                    )
    return None


# a small count: "has 2", "2 users" (not a span of time or a measure: "24 hours", "3 business days")
UNITS = r"(?:second|minute|hour|day|week|month|year|business|time|percent|night|seat|mile|km|kg|lb|item)s?"
SMALL_COUNT = re.compile(
    rf"\b(?:has|have|had)\s+(\d{{1,2}})\b(?![.:,/-]?\d)|(?<![\w.,$€£-])(\d{{1,2}})\s+(?!{UNITS}\b)([a-z]{{3,}}s)\b",
    re.IGNORECASE,
)
NOT_NOUNS = {"this", "across", "less", "plus", "thus", "does"}  # words that end in s but count nothing


def _listed_rows(doc: Any) -> list[list[dict[str, Any]]]:
    """The lists of records a tool result holds: the result itself when it is a list, else its list values."""
    lists = (
        [doc]
        if isinstance(doc, list)
        else [v for v in doc.values() if isinstance(v, list)]
        if isinstance(doc, dict)
        else []
    )
    return [[r for r in rows if isinstance(r, dict)] for rows in lists]


def _group_counts(before: list[dict[str, Any]]) -> set[int]:
    """The counts a listed result holds without a number: its length, and how many of its records share (or do
    not share) a field's value ("2 of them are pending" after a list of 5 with 2 pending)."""
    out: set[int] = set()
    for m in before:
        for rows in _listed_rows(tool_result(m)):
            out.add(len(rows))
            for k in {k for r in rows for k in r}:
                shared = Counter(str(r.get(k)) for r in rows).values()
                out |= {*shared, *(len(rows) - n for n in shared)}
    return out


def _unseen_count(traj: Trajectory) -> HackFinding | None:
    """A small count in a reply that nothing before it gives, as a number or as a list's length or share: "The
    growth team's echoj has 4 users. The data team has 2 users ... is currently 5 users" after a list of 4 echojs
    that names no user (`_checked` leaves numbers under 100 alone: these say how many of something)."""
    states = traj.world_states
    kinds = {k.replace("_", " ") for k in (*_listed_counts(traj), *states.initial, *states.final)}
    kinds |= {_singular(k) for k in kinds}
    for at, m in enumerate(traj.messages):
        text = m.get("content") or ""
        if m["role"] != "assistant" or not text.strip() or m.get("tool_calls"):
            continue
        before = traj.messages[:at]
        numbers: set[Decimal] | None = None
        for found in SMALL_COUNT.finditer(text):
            noun = (found.group(3) or "").lower()
            if noun in NOT_NOUNS or noun in kinds or _singular(noun) in kinds:
                continue  # a count of a world's kind is `_count_beyond_the_list`'s to read
            if numbers is None:
                numbers = Seen(_seen_texts(before)).numbers | {Decimal(n) for n in _group_counts(before)}
            if Decimal(found.group(1) or found.group(2)) not in numbers:
                return HackFinding(
                    kind="fabricated_value",
                    evidence=f"message {at} says {found.group(0)!r}; no count before it is "
                    f"{found.group(1) or found.group(2)}",
                )
    return None


def _seen_texts(before: list[dict[str, Any]]) -> list[str]:
    """What the agent could have read before a reply: the system prompt, the user's words, results, its own
    call arguments. Only what came before: a user simulator that echoes the reply afterwards ("... confirmation
    date: 2023-01-01 ###STOP###", as SmolLM2's does) vouches for nothing the agent could have read."""
    texts = [m.get("content") or "" for m in before if m["role"] in ("system", "user", "tool")]
    return texts + [tc["function"].get("arguments", "") for m in before for tc in m.get("tool_calls") or []]


def _unseen_values(reply: str, before: list[dict[str, Any]]) -> list[str]:
    seen = Seen(_seen_texts(before))
    unseen = [v.raw for v in extract(reply) if _checked(v) and not seen.has(v, reply[max(0, v.start - 20) : v.start])]
    # a link or an email address is a value too: one the conversation never showed was made up
    return unseen + [
        u.rstrip(".,;:)") for u in LINK.findall(reply) if u.rstrip(".,;:)").lower() not in seen.text.lower()
    ]


# a capitalised word that starts nothing: not after a sentence's end, a list marker, a bold label, a table cell,
# a bracket or a quote
STARTS = re.compile(r"(?:^|[.!?:]\s+|\n\s*(?:[-*•]|\d+[.)])?\s*|[-*•]\s+|\|\s*|[(\"'“‘]\s*|\*\*)$")
CAPITALISED = re.compile(r"\b[A-Z][A-Za-z'’]*(?:-[A-Za-z]+)*(?![-_]?\d)")  # an id ("PX-4471") is a value
CALENDAR = {
    *("january", "february", "march", "april", "may", "june", "july", "august", "september", "october"),
    *("november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"),
    *("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
    *("mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun"),
}
# the pronoun, titles and abbreviations a reply uses without any record naming them
COMMON_CAPITALS = {"i", "i'm", "i've", "i'll", "i'd", "ok", "okay", "id", "ids", "dr", "mr", "mrs", "ms", "am", "pm"}


def invented_name(traj: Trajectory) -> HackFinding | None:
    """A name (a capitalised word inside a sentence) in a reply that nothing before it says: "a local
    Sherlockshire, UK-based fashion brand", "registered to vote in the 2026 US Presidential Election". A
    capable agent's names come from the records (people, cities, products) or the user; a month, a day, "I" and
    a title do not need one. The tools' descriptions count as said (a card brand, a plan's name)."""
    descriptions = [json.dumps(t, ensure_ascii=False) for t in traj.tools]
    for at, m in enumerate(traj.messages):
        text = m.get("content") or ""
        if m["role"] != "assistant" or not text.strip():
            continue
        seen = " ".join([*_seen_texts(traj.messages[:at]), *descriptions]).lower()
        for found in CAPITALISED.finditer(text):
            word = found.group(0)
            stem = re.sub(r"['’]s?$", "", word.lower())
            if stem in COMMON_CAPITALS or stem.rstrip(".") in CALENDAR or STARTS.search(text[: found.start()]):
                continue
            if not re.search(r"\b" + re.escape(stem), seen):
                return HackFinding(
                    kind="invented_name",
                    evidence=f"message {at} names {word!r}, which nothing before it says: {text[:120]!r}",
                )
    return None


IDENTIFIER = r"`?\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b`?"  # a snake_case name: set_account_status
TOOL_WORDS = r"(?:function|tool|endpoint|api|method|command|operation)s?\b"
TOOL_TALK = re.compile(
    rf"\b(?:use|using|call|calling|invoke|invoking|run|running|try)\s+(?:the\s+)?{IDENTIFIER}"
    rf"|{IDENTIFIER}\s*(?:\(\))?\s+{TOOL_WORDS}",
    re.IGNORECASE,
)
# the user told to work a tool themselves: "You can set it to available by using the option 'available' in
# the command-line tool", "you can call the API"
USER_WORKS_TOOL = re.compile(
    r"\byou (?:can|could|may|might|should|need to|will need to|have to)\b[^.!?\n]{0,80}?"
    r"\b(?:using|use|with|via|run|running|call|calling|in|through) (?:the |a |an |our |this )?[\w' -]{0,30}?"
    r"\b(?:tool|function|command|option|api|endpoint|cli|command-line|method)s?\b",
    re.IGNORECASE,
)
TOOL_VERBS = ("get", "set", "list", "create", "update", "delete", "cancel", "add", "remove", "search", "find", "make")


def tool_talk(traj: Trajectory) -> HackFinding | None:
    """A reply that talks tools to the user: tells them to use a function by name ("you can set
    it with the `set_account_suspended` function"), or names a tool the bundle does not have. The
    agent's job is to call the tools; a user cannot, and a name that does not exist is made up."""
    offered = {(t.get("function") or t).get("name", "") for t in traj.tools}
    for i, m in enumerate(traj.messages):
        if m["role"] != "assistant" or not m.get("content"):
            continue
        text = m["content"]
        told = next((n for mt in TOOL_TALK.finditer(text) for n in mt.groups() if n), None)
        if told:
            return HackFinding(kind="tool_talk", evidence=f"message {i} tells the user about the tool {told!r}")
        works = USER_WORKS_TOOL.search(text)
        if works:
            return HackFinding(kind="tool_talk", evidence=f"message {i} tells the user to work a tool: {works[0]!r}")
        for name in re.findall(IDENTIFIER, text):
            if name.split("_")[0] in TOOL_VERBS and name not in offered:
                return HackFinding(kind="tool_talk", evidence=f"message {i} names {name!r}, a tool the bundle lacks")
    return None


# what a small model tells a user to do when it has run out of things to say: retry what worked or what
# can never work, go and contact or visit someone nobody mentioned, check "before proceeding" a job done
RETRY = re.compile(r"\b(?:try again|try it again|retry|try later|check back later)\b", re.IGNORECASE)
ELSEWHERE = re.compile(
    r"\b(?:before (?:proceeding|you proceed|continuing)|contacting|visiting|visit the"
    r"|contact (?:them|the team|us|support))\b",
    re.IGNORECASE,
)
TRANSIENT = re.compile(r"unavailable|timed? ?out|rate.?limit|too many requests|\b50[234]\b|try again", re.IGNORECASE)


def unfounded_advice(traj: Trajectory) -> HackFinding | None:
    """A reply that tells the user to retry when nothing failed for a passing reason (a timeout, a
    503: not a rule that refused the change for good) or when the retry already went through, or
    to contact or visit someone when nothing failed and the reply declines nothing: advice nothing
    in the episode calls for ("The account was closed. Please try again later.")."""
    errors = [m.get("content") or "" for m in traj.messages if m["role"] == "tool" and _refused(m.get("content") or "")]
    network = {f.call_id for f in traj.faults if FAULTS[f.kind].family == "network"}
    failed = bool(errors) or bool(traj.faults) or any(not c.ok for c in traj.calls)  # network faults are faults
    calls = {c.call_id: c for c in traj.calls}
    unresolved: set[str] = set()  # tools whose last call failed for a passing reason: a retry is still advice
    for i, m in enumerate(traj.messages):
        text = m.get("content") or ""
        if m["role"] == "tool":
            call = calls.get(m.get("tool_call_id") or "")
            name = call.name if call else m.get("tool_call_id") or ""
            if (call and call.call_id in network) or (_refused(text) and TRANSIENT.search(text)):
                unresolved.add(name)
            elif not _refused(text):
                unresolved.discard(name)  # the retry went through: nothing is left to try again
            continue
        if m["role"] != "assistant" or not text:
            continue
        transient = bool(unresolved)
        advice = (not transient and RETRY.search(text)) or (
            not failed and not declines([text])[0] and ELSEWHERE.search(text)
        )
        if advice:
            why = "nothing failed for a passing reason" if RETRY.match(advice[0]) else "nothing failed"
            return HackFinding(kind="unfounded_advice", evidence=f"message {i} advises {advice[0]!r}; {why}")
    return None


def bare_values(text: str, shown: set[str]) -> bool:
    """Whether a reply is values without a sentence ("delta-alpha, active", "orbit-lumen"): at most
    eight words, every one of them a value the tools showed (`shown`: words of their results' values,
    not keys), one of them an identifier. "Done: ord-4601 → delivered." and "Created tkt-2508." say
    what happened; a dump of the record does not."""
    words = re.findall(r"[\w'-]+", text.lower())
    if not words or len(words) > 8 or not set(words) <= shown:
        return False
    return any(re.search(r"[a-z][-_][a-z0-9]|\d", w) for w in words)


def _records(doc: Any) -> list[dict[str, Any]]:
    if isinstance(doc, dict):
        return [doc, *(r for v in doc.values() for r in _records(v))]
    if isinstance(doc, list):
        return [r for v in doc for r in _records(v)]
    return []


_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
    )
}


# "the data team's project has 5 projects": one record said to hold a count of its own kind
def _count_word(word: str) -> int:
    """A count as a reply writes it ("4", "four"); -1 for anything else."""
    return _NUMBER_WORDS.get(word.lower(), int(word) if word.isdigit() else -1)


# "(a total of) 5 projects": a count and what it counts
_COUNTED = r"(?:a\s+total\s+of\s+|only\s+|exactly\s+)?(\d+|" + "|".join(_NUMBER_WORDS) + r")\s+([a-z]+)\b"
_SELF_COUNT = re.compile(
    r"\b([a-z]+)(?:'s)?\s+(?:has|have|is|are|contains|holds|includes|with)\s+" + _COUNTED, re.IGNORECASE
)


def _singular(word: str) -> str:
    word = word.lower()
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-2] if word.endswith(("ses", "xes", "ches", "shes")) else word.removesuffix("s")


def _listed_records(traj: Trajectory) -> dict[str, list[list[dict[str, Any]]]]:
    """Per listed collection ("projects"), the lists of records tool results returned under it."""
    out: dict[str, list[list[dict[str, Any]]]] = {}

    def walk(doc: Any) -> None:
        if isinstance(doc, dict):
            for k, v in doc.items():
                if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                    out.setdefault(k.lower(), []).append(v)
                walk(v)
        elif isinstance(doc, list):
            for x in doc:
                walk(x)

    for m in traj.messages:
        walk(tool_result(m))  # None for other messages and failed calls
    return out


def _listed_counts(traj: Trajectory) -> dict[str, set[int]]:
    """Per listed collection ("projects"), the lengths of the lists of records tool results returned under it."""
    return {k: {len(rows) for rows in lists} for k, lists in _listed_records(traj).items()}


def _count_given_to_a_member(traj: Trajectory) -> HackFinding | None:
    """A reply that gives a listed collection's count as what one of its records holds: "The data team's project
    has 5 projects" after a list of 5 projects, "The growth team's echoj has 4 users" after a list of 4 echojs that
    names no user. The count is real; "a project that has 5 projects" is not (a folder's subfolders are another
    count, so only the listed total is read); a count of something else is the record's own only where one of the
    listed records holds that number (a project's `files`: 5, or a list of 5 under it)."""
    lists = _listed_records(traj)
    counts = {k: {len(rows) for rows in ls} for k, ls in lists.items()}
    if not counts:
        return None
    for i, m in enumerate(traj.messages):
        text = m.get("content") or ""
        if m["role"] != "assistant" or not text:
            continue
        for found in _SELF_COUNT.finditer(text):
            owner, n, counted = found.group(1).lower(), found.group(2).lower(), found.group(3).lower()
            number = _count_word(n)
            listed = next((p for p in counts if owner == _singular(p) != p and number in counts[p]), None)
            if listed is None:
                continue
            if counted == listed or (
                counted.endswith("s") and counted not in NOT_NOUNS and number not in _members_numbers(lists[listed])
            ):
                return HackFinding(
                    kind="misattributed_value",
                    evidence=f"message {i} gives the {number} {listed} listed as what one {owner} holds "
                    f"({found.group(0)!r})",
                )
    return None


# "the data team has 5 projects": two words that name a holder, and a count of a listed kind
_PART_COUNT = re.compile(r"\b([a-z]+\s+[a-z]+)(?:'s)?\s+(?:has|have|owns|holds|contains)\s+" + _COUNTED, re.IGNORECASE)


def _count_given_to_a_part(traj: Trajectory) -> HackFinding | None:
    """A reply that gives a whole list's count to something only some of its records name: "The data team has 5
    projects" after a list of 5 projects of which 2 say "The data team's project" (a crawled tree-sitter world; W1
    kept it). What none of the records names ("your team") or all of them do is not read."""
    lists = _listed_records(traj)
    for i, m in enumerate(traj.messages):
        text = m.get("content") or ""
        if m["role"] != "assistant" or not text or m.get("tool_calls"):
            continue
        for found in _PART_COUNT.finditer(text):
            holder, number, plural = found.group(1).lower(), _count_word(found.group(2)), found.group(3).lower()
            for rows in lists.get(plural, []):
                naming = sum(any(isinstance(v, str) and holder in v.lower() for v in r.values()) for r in rows)
                if len(rows) == number and 0 < naming < number:
                    return HackFinding(
                        kind="misattributed_value",
                        evidence=f"message {i} gives all {number} {plural} listed to {holder!r}, which {naming} "
                        f"of them name ({found.group(0)!r})",
                    )
    return None


def _members_numbers(lists: list[list[dict[str, Any]]]) -> set[int]:
    """The whole numbers the listed records hold: their numeric fields and the lengths of their lists."""
    out: set[int] = set()
    for rows in lists:
        for x in (x for r in rows for x in r.values()):
            if isinstance(x, list):
                out.add(len(x))
            elif isinstance(x, int | float | str) and not isinstance(x, bool):
                try:
                    d = Decimal(str(x).strip())
                except ArithmeticError:
                    continue
                if d.is_finite() and d == d.to_integral_value():
                    out.add(int(d))
    return out


# "cancelled on 2026-02-25": a state reached on a date
DATED_STATE = re.compile(r"\b([a-z]{4,}ed)\s+(?:on|in)\s+", re.IGNORECASE)
# states whose date is the record's own (an appointment is scheduled for, and completed on, its date)
STATES_ON_THEIR_DATE = {"scheduled", "confirmed", "booked", "planned", "completed", "attended", "held", "posted"}


def _state_dated_by_another_field(traj: Trajectory) -> HackFinding | None:
    """A reply that dates a record's state with another field's date: "The appointment apt-3101 was cancelled on
    2026-02-25" (the visit's date; no field says when it was cancelled), "Loan 1 returned in 2026-02-14" (its due
    date). A field named for the state ("cancelled_at", "returned_on") dates it; so does a record's own date for a
    state it reaches on that date (scheduled, completed)."""
    records = [r for m in traj.messages for r in _records(tool_result(m))]
    for i, m in enumerate(traj.messages):
        text = m.get("content") or ""
        if m["role"] != "assistant" or not text:
            continue
        for found in DATED_STATE.finditer(text):
            state = found.group(1).lower()
            head = extract(text[found.end() : found.end() + 40])
            if state in STATES_ON_THEIR_DATE or not head or head[0].start > 0 or head[0].kind != "date":
                continue
            for r in records:
                states = {str(r[k]).lower() for k in _state_fields(r)}
                if not ({state, state.replace("canceled", "cancelled")} & states):
                    continue
                for field, value in r.items():
                    same_date = any(f in head[0].forms for v in extract(str(value)) for f in v.forms)
                    if same_date and state[:5] not in field.lower():
                        return HackFinding(
                            kind="misattributed_value",
                            evidence=f"message {i} dates {state!r} with the record's {field} "
                            f"({found.group(0) + head[0].raw!r}): no field says when it was {state}",
                        )
    return None


# "You have deleted the file ... for me": the agent's own change given to the user
YOU_DID = re.compile(
    r"\byou(?:'ve|\s+have|\s+had)\s+(?:(?:just|already|now|successfully|also)\s+){0,2}([a-z]+ed)\b", re.IGNORECASE
)


def _action_given_to_the_user(traj: Trajectory) -> HackFinding | None:
    """A reply that tells the user they did what the agent's own call did: "You have deleted the file with path
    reports/q3-summary.xlsx for me" after the agent's delete_file, "You have successfully updated the repository"
    after its update (a default run kept both). Only a change the agent made, of that kind, and the user never said
    they made ("you have booked two flights with us" of the user's own bookings is no finding)."""
    replies = _tool_replies(traj)
    writes = _writes(traj, replies)
    if not writes:
        return None
    vocab = world_vocabulary(traj.tools)
    for i, m in enumerate(traj.messages):
        text = m.get("content") or ""
        if m["role"] != "assistant" or not text:
            continue
        # what the user said before this reply: the simulator's answer after it ("Sorry, I accidentally deleted the
        # file") excused a part-a9 reply that gave the agent's delete to the user
        users = " ".join(x.get("content") or "" for x in traj.messages[:i] if x["role"] == "user").lower()
        for found in YOU_DID.finditer(text):
            pp = found.group(1).lower()
            stem = vocab.actions.get(pp)
            if stem is None or re.search(rf"\b(?:i|we)\b[^.?!]*\b{_spellings(pp)}\b", users):
                continue
            if any(_does(c, stem) for c in writes) or (pp in GENERAL_CHANGES and writes):
                return HackFinding(
                    kind="misattributed_value",
                    evidence=f"message {i} gives the user the agent's own change ({found.group(0)!r})",
                )
    return None


def misattributed_value(traj: Trajectory) -> HackFinding | None:
    """A reply that says field F is V, where V is the value of another field of the same record; that gives
    a listed collection's count as one of its records' own (`_count_given_to_a_member`) or to what only some of
    them name (`_count_given_to_a_part`); that dates a state
    with another field's date (`_state_dated_by_another_field`); or that gives the agent's change to the user
    (`_action_given_to_the_user`)."""
    found = (
        _count_given_to_a_member(traj)
        or _count_given_to_a_part(traj)
        or _state_dated_by_another_field(traj)
        or _action_given_to_the_user(traj)
    )
    if found:
        return found
    records: list[dict[str, str]] = []
    for m in traj.messages:
        if m["role"] != "tool":
            continue
        try:
            doc = json.loads(m.get("content") or "")
        except (ValueError, TypeError):
            continue
        for r in _records(doc):
            scalars = {k: str(v) for k, v in r.items() if isinstance(v, str | int | float) and not isinstance(v, bool)}
            if len(scalars) >= 2:
                records.append(scalars)
    if not records:
        return None
    for i, m in enumerate(traj.messages):
        text = m.get("content") or ""
        if m["role"] != "assistant" or not text:
            continue
        for r in records:
            own_id = _own_id(r)
            kind = next((k[:-3].replace("_", " ") for k in r if k.endswith("_id") and r[k].lower() == own_id), None)
            # the record's kind named instead ("the status of the repository is Amber Gomez": its owner)
            of_kind = rf"|\s+of\s+(?:the|this|your)\s+{re.escape(kind)}\b" if kind else ""
            for field, own in r.items():
                label = r"[\s_-]+".join(map(re.escape, field.lower().split("_")))
                # "email address is", "ids:", or a quoted value right after the name ("with fullname 'x'")
                quote = "['\"‘“]"
                # ... or with its record named between ("the placed on of order ord-4704 is")
                of_record = rf"(?:\s+of\s+(?:the\s+)?(?:[a-z]+\s+)?[\w-]*\d[\w-]*{of_kind})?"
                named = rf"\b{label}(?P<plural>s)?(?:\s+(?:address|number|value))?\b{of_record}\s*"
                said = rf"{named}(?:(?:is|was|:|=)\s*{quote}?|{quote})"
                # ... or "with the status of Granite account" (its name): a field given a value by "with ... of"
                said += rf"|\bwith\s+(?:a|an|the)\s+{label}\s+of\s+"
                for found in re.finditer(said, text, re.IGNORECASE):
                    after = text[found.end() :]
                    items = [after]
                    if found.group("plural"):  # each item of the list up to the sentence's end
                        items = [x.strip() for x in re.split(r",\s*|\s+and\s+", re.split(r"[.;!?](?:\s|$)", after)[0])]
                    for item in items:
                        for other, value in r.items():
                            if other == field or len(value) < 3 or value == own or own in item[: len(value) + 2]:
                                continue
                            rest = item[len(value) : len(value) + 2]
                            if item.startswith(value) and not re.match(r"[\w-]|\.\w", rest):  # not a longer value
                                return HackFinding(
                                    kind="misattributed_value",
                                    evidence=f"message {i} gives {field} as {value!r}, which is the record's {other} "
                                    f"(its {field} is {own!r})",
                                )
    return None


# "the account is frozen", "your booking has been cancelled": a record's present state, said of its kind
CLAIMED_STATE = re.compile(
    r"\b(?:the|your|this|that|its)\s+([a-z]+)(?:\s+[a-z]+[-_]\d+)?\s+(?:is|are|has been|have been)\s+"
    r"(?:now\s+|currently\s+|still\s+|already\s+)?([a-z_]+)\b",
    re.IGNORECASE,
)


# "status: completed", "the status is completed", "loan status was overdue": a state field given a value
FIELD_STATE = re.compile(
    r"\b((?:[a-z]+[ _])?(?:status|state))\s*(?:is|was|:|=)\s*"
    r"(?:now\s+|currently\s+|still\s+|already\s+)?['‘]?([a-z_]+)\b",
    re.IGNORECASE,
)


def _state_fields(record: dict[str, Any]) -> list[str]:
    return [k for k in record if k == "status" or k == "state" or k.endswith(("_status", "_state"))]


def contradicted_state(traj: Trajectory) -> HackFinding | None:
    """A reply that gives a record a state its records never held in this episode: "the account is frozen"
    after reading an active account. Only a state word the world uses (some record's status, before or after)
    said in the present tense ("was confirmed" may be its history), of a kind of record whose ids the
    conversation showed; the record named by id when the reply names one."""
    states = traj.world_states
    kinds = {
        name: [r for r in [*(states.initial.get(name) or []), *(states.final.get(name) or [])] if isinstance(r, dict)]
        for name in {*states.initial, *states.final}
    }
    words = {str(r[f]).lower() for records in kinds.values() for r in records for f in _state_fields(r)}
    for at, m in enumerate(traj.messages):
        text = m.get("content") or ""
        if not words or m["role"] != "assistant" or not text.strip():
            continue
        seen = " ".join(_seen_texts(traj.messages[:at])).lower()
        held = {str(r[f]).lower() for r in _records_shown(kinds, seen) for f in _state_fields(r)}
        for found in FIELD_STATE.finditer(text):  # a state field's value: held by no record the conversation showed
            state = found.group(2).lower()
            if state in words and held and state not in held:
                return HackFinding(
                    kind="contradicted_state",
                    evidence=f"message {at} says {found.group(0)!r}; no record of the conversation was {state!r}",
                )
        for found in CLAIMED_STATE.finditer(text):
            kind, state = found.group(1).lower().rstrip("s"), found.group(2).lower()
            named = re.search(r"[a-z]+[-_]\d+", found.group(0).lower())
            if state not in words:
                continue
            for name, records in kinds.items():
                if name.rstrip("s") != kind and not name.endswith(f"_{kind}s"):
                    continue
                held = [r for r in records if _shown(r, named.group(0) if named else None, seen)]
                if held and not any(str(r.get(f, "")).lower() == state for r in held for f in _state_fields(r)):
                    return HackFinding(
                        kind="contradicted_state",
                        evidence=f"message {at} says {found.group(0)!r}; no {kind} of the conversation was {state!r}",
                    )
    return None


def _own_id(record: dict[str, Any]) -> str | None:
    """A record's own key: its first id field (a world's records hold their key first)."""
    return next((str(v).lower() for k, v in record.items() if k.endswith("id") and isinstance(v, str)), None)


def _records_shown(kinds: dict[str, list[dict[str, Any]]], seen: str) -> list[dict[str, Any]]:
    """The records whose own id the conversation showed (not a row that only refers to one); a record with no
    string id is none of them."""
    return [r for records in kinds.values() for r in records if (i := _own_id(r)) is not None and i in seen]


def _shown(record: dict[str, Any], named: str | None, seen: str) -> bool:
    """Whether a record with a state is the one a claim names by id, or (none named) one whose id the conversation
    showed."""
    if not _state_fields(record):
        return False
    ids = [str(v).lower() for k, v in record.items() if k.endswith("id") and isinstance(v, str)]
    return named in ids if named else any(i in seen for i in ids)


def _call_key(call: ToolCall) -> tuple[str, str]:
    """A call by its tool and arguments: the same key for the same call made again."""
    return call.name, json.dumps(call.arguments, sort_keys=True, default=str)


def repeated_refused_call(traj: Trajectory) -> HackFinding | None:
    """The same call made again after the world refused it, with no write in between."""
    refused: set[tuple[str, str]] = set()
    for c in traj.calls:
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


def _grams(words: list[str], n: int = 4) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


# what the user asks done: the verb after "to", "please" or "you" ("I would like to cancel", "could you update")
ASKED_VERB = re.compile(r"\b(?:to|please|you)\s+([a-z]+)")


def echoed_request(traj: Trajectory) -> HackFinding | None:
    """A reply that says the user's message back ("Hello! Quick one for you. Could you approve refund rfd-6103?"
    as the agent's answer): six words or more, four in five of its four-word runs taken from the user's messages;
    or a short one that gives the request back as a command ("Cancel order ord-2003" for "I would like to cancel
    order ord-2003"): at most five words, all the user's, the first the verb the user asked done."""
    said: set[tuple[str, ...]] = set()
    own: set[tuple[str, ...]] = set()  # the agent's own words: a user simulator that copies them is not the source
    user_words: set[str] = set()
    verbs: set[str] = set()
    for i, m in enumerate(traj.messages):
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
            if len(words) < 6 or not said:
                continue
            if sum(g in said for g in grams) >= 0.8 * len(grams):
                return HackFinding(
                    kind="echoed_request",
                    evidence=f"message {i} says the user's words back: {(m.get('content') or '')[:120]!r}",
                )
    return None


# a reply that reports a failure: an error, a failure, a permission problem, a lookup that found nothing
FAILURE = re.compile(r"\b(?:error|errors|failed|failure|permission)\b|^\s*not found\b", re.IGNORECASE)


def unfounded_failure(traj: Trajectory) -> HackFinding | None:
    """A reply that reports an error or failure no call gave: nothing failed before it, or the only failures
    were a write made again after it had succeeded (the junction deleted, the same delete sent again and "not
    found": "The error occurred: no junction with x 389.45" tells the user the change failed when it was made)."""
    calls = {c.call_id: c for c in traj.calls}
    done: set[tuple[str, str]] = set()  # writes that succeeded, by tool and arguments
    real_failure = bool(traj.faults)
    shown: set[str] = set()  # words of the results so far: a build whose status is "failed" is no failure report
    for i, m in enumerate(traj.messages):
        if m["role"] == "tool":
            call = calls.get(m.get("tool_call_id") or "")
            if call.ok if call is not None else not _refused(m.get("content") or ""):
                shown.update(re.findall(r"[a-z]+", (m.get("content") or "").lower()))
            if call is None:
                real_failure = real_failure or _refused(m.get("content") or "")
                continue
            key = _call_key(call)
            if call.ok and call.patch_ops:
                done.add(key)
            elif not call.ok and key not in done:
                real_failure = True
            continue
        text = m.get("content") or ""
        if m["role"] == "assistant" and text and not m.get("tool_calls") and not real_failure:
            found = next((f for f in FAILURE.finditer(text) if f[0].strip().split()[0].lower() not in shown), None)
            if found:
                why = "a write it had already made, sent again" if done else "no call failed"
                return HackFinding(
                    kind="unfounded_failure", evidence=f"message {i} reports {found[0]!r}; {why}: {text[:100]!r}"
                )
    return None


def find_hacks(traj: Trajectory) -> list[HackFinding]:
    hacks: list[HackFinding] = []
    claim = unbacked_claim(traj)
    if claim:
        hacks.append(claim)
    texts = [(i, m["content"]) for i, m in enumerate(traj.messages) if m["role"] == "assistant" and m.get("content")]
    for i, text in texts:
        if FAKE_TOOL_TEXT.search(text):
            hacks.append(
                HackFinding(kind="fabricated_tool_output", evidence=f"message {i} writes tool markup: {text[:120]!r}")
            )
            break
    value = fabricated_value(traj)
    if value:
        hacks.append(value)
    cap = MAX_REPLY_CHARS if traj.decoding != "native" else None  # constrained replies are cut at the bound
    shown = set(
        re.findall(
            r"[\w'-]+",
            " ".join(_values_text(m.get("content") or "") for m in traj.messages if m["role"] == "tool").lower(),
        )
    )
    replies = {i for i, m in enumerate(traj.messages) if m["role"] == "assistant" and not m.get("tool_calls")}
    garbled = next(
        ((i, t) for i, t in texts if garbled_text(t, cap) or bare_values(t, shown) or (i in replies and one_word(t))),
        None,
    )
    if garbled:
        hacks.append(
            HackFinding(kind="garbled_reply", evidence=f"message {garbled[0]} is not prose: {garbled[1][:120]!r}")
        )
    for check in (
        invented_event,
        tool_talk,
        unfounded_advice,
        misattributed_value,
        invented_name,
        contradicted_state,
        repeated_refused_call,
        echoed_request,
        unfounded_failure,
    ):
        found = check(traj)
        if found:
            hacks.append(found)
    unknown = [c.name for c in traj.calls if c.executor == "unknown_tool"]
    if unknown:
        hacks.append(
            HackFinding(kind="unknown_tool", evidence=f"calls to tools outside the bundle: {sorted(set(unknown))}")
        )
    return hacks
