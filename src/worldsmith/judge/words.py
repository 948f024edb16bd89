"""The words the claim layer knows without the episode: verbs of doing grouped by what they do (so a domain verb is
backed by the call that did it: "the certificate has been issued" after `send_certificate`), verbs that claim
nothing about the world ("I've noted", "I understand"), and the words any assistant uses that are no facts (function
words, courtesy, the vocabulary of helping). Under the `strict` policy a reply's other words must come from the
conversation: this list is what needs no source.
"""

from __future__ import annotations

import re
from pathlib import Path

from worldsmith.judge.evidence import stem

# verbs of a change in general: any write that went through backs them ("I've updated your booking")
GENERAL_CHANGES = (
    *("update", "change", "modify", "edit", "set", "adjust", "correct", "amend", "save", "apply", "process", "make"),
    *("do", "handle", "complete", "finalize", "take care", "sort out", "fix", "go ahead", "record", "mark", "put"),
)
# verbs of doing, by what they do: a call whose tool is named by a verb of the group (or whose description, or the
# value it wrote, uses one) backs a claim made with any verb of that group
ACTION_GROUPS: dict[str, tuple[str, ...]] = {
    "cancel": ("cancel", "void", "abort", "call off", "revoke", "terminate", "withdraw"),
    "delete": ("delete", "remove", "erase", "purge", "drop", "discard", "clear"),
    "create": (
        *("create", "add", "open", "register", "file", "submit", "log", "book", "schedule", "place", "make", "new"),
        *("set up", "enroll", "reserve", "issue", "generate", "raise", "start", "post", "insert", "write", "lodge"),
    ),
    "send": ("send", "issue", "dispatch", "deliver", "email", "mail", "forward", "share", "resend", "post", "ship"),
    "notify": (
        *("notify", "inform", "alert", "tell", "let know", "message", "text", "email", "remind", "contact", "ping"),
        *("call", "page", "warn"),
    ),
    "handoff": ("transfer", "hand off", "escalate", "connect", "forward", "route", "refer", "pass"),
    "refund": ("refund", "reimburse", "credit", "pay back"),
    "pay": ("pay", "charge", "bill", "debit", "transfer", "send", "deposit", "withdraw", "move"),
    "close": ("close", "resolve", "complete", "finish", "finalize", "end", "archive"),
    "reopen": ("reopen", "open", "restore", "reactivate", "resume", "unarchive"),
    "approve": ("approve", "accept", "authorize", "authorise", "confirm", "grant", "sign off", "verify", "validate"),
    "reject": ("reject", "deny", "decline", "refuse", "dismiss"),
    "block": ("block", "freeze", "lock", "suspend", "disable", "deactivate", "hold", "pause"),
    "unblock": ("unblock", "unfreeze", "unlock", "reactivate", "activate", "enable", "restore", "release", "resume"),
    "book": ("book", "reserve", "schedule", "rebook", "reschedule", "hold", "checkout", "check out", "borrow"),
    "move": ("move", "reschedule", "rebook", "shift", "change", "switch", "postpone", "bring forward", "swap"),
    "return": ("return", "check in", "give back", "bring back"),
    "assign": ("assign", "reassign", "allocate", "give", "hand", "route", "transfer"),
    "extend": ("extend", "renew", "prolong", "push back"),
    "raise": ("escalate", "raise", "upgrade", "increase", "bump", "elevate", "prioritize", "prioritise"),
    "lower": ("downgrade", "lower", "decrease", "reduce", "deprioritize"),
    "rename": ("rename", "retitle", "relabel"),
    "dispute": ("dispute", "contest", "challenge", "flag", "report"),
    "tag": ("tag", "label", "flag", "star", "pin", "bookmark", "link", "attach"),
    "merge": ("merge", "combine", "join", "sync", "publish", "release", "deploy", "install"),
}
# verbs of reading: a claim made with one is backed by any call that went through ("I've pulled up your order")
READ_VERBS = (
    *("retrieve", "find", "check", "look up", "look into", "pull up", "review", "verify", "locate", "search", "fetch"),
    *("get", "access", "query", "confirm", "look", "examine", "inspect", "read", "see", "double-check", "go through"),
    *("scan", "browse", "consult", "investigate", "research", "identify", "determine", "obtain", "list"),
)
# verbs that tell of the agent's own understanding or the reply itself: no claim about the world
NEUTRAL_VERBS = (
    *("note", "understand", "notice", "receive", "gather", "compile", "summarize", "summarise", "outline", "highlight"),
    *("include", "mention", "explain", "ask", "calculate", "count", "add up", "total", "organize", "organise"),
    *("prepare", "sort", "group", "format", "break down", "put together", "cover", "answer", "assist", "help"),
    *("hear", "learn", "see", "go over", "walk through", "provide", "show", "list", "spell out", "highlight"),
    *("leave", "keep", "double-check", "attach", "copy", "quote", "use", "try", "add up", "want", "need"),
)
# irregular past participles and simple pasts of the verbs above (the regular ones end in -ed)
IRREGULAR = {
    **{"sent": "send", "made": "make", "set": "set", "put": "put", "paid": "pay", "given": "give", "gave": "give"},
    **{"told": "tell", "taken": "take", "took": "take", "done": "do", "did": "do", "got": "get", "gotten": "get"},
    **{"found": "find", "kept": "keep", "held": "hold", "left": "leave", "brought": "bring", "bought": "buy"},
    **{"sold": "sell", "shut": "shut", "cut": "cut", "written": "write", "wrote": "write", "begun": "begin"},
    **{"frozen": "freeze", "froze": "freeze", "unfrozen": "unfreeze", "broken": "break", "chosen": "choose"},
    **{"spent": "spend", "lost": "lose", "shown": "show", "seen": "see", "saw": "see", "known": "know"},
    **{"withdrawn": "withdraw", "drawn": "draw", "reset": "reset", "rebooked": "rebook", "rerun": "rerun"},
    **{"let": "let", "read": "read", "run": "run", "ran": "run", "sent out": "send", "resent": "resend"},
}

ACTION_STEMS: dict[str, set[str]] = {}
for _group, _verbs in ACTION_GROUPS.items():
    for _verb in _verbs:
        if " " not in _verb:  # "check in" is not "check": a phrase's first word alone says something else
            ACTION_STEMS.setdefault(stem(_verb), set()).add(_group)
GENERAL_STEMS = {stem(v.split()[0]) for v in GENERAL_CHANGES}
READ_STEMS = {stem(v.split()[0]) for v in READ_VERBS}
NEUTRAL_STEMS = {stem(v.split()[0]) for v in NEUTRAL_VERBS}
# what a tool of change in general (update_*, set_*) can do: any change of a field, not an effect beyond the record
BEYOND_A_FIELD = {"send", "notify", "handoff", "refund", "pay", "create", "delete"}


def groups_of(verb: str) -> set[str]:
    """The action groups a verb (any form) belongs to; empty for a verb of no known group."""
    return set(ACTION_STEMS.get(stem(IRREGULAR.get(verb.lower(), verb)), ()))


def lemma_stem(word: str) -> str:
    return stem(IRREGULAR.get(word.lower(), word))


# the words any assistant uses that state no fact of the episode (strict: every other word must come from it)
ASSISTANT_WORDS = frozenset(
    w
    for line in (Path(__file__).parent / "assistant_words.txt").read_text().splitlines()
    if not line.startswith("#")
    for w in line.split()
)
ASSISTANT_STEMS = frozenset(stem(w) for w in ASSISTANT_WORDS)

# an assistant's words of courtesy: a clause made only of them and the words above claims nothing
COURTESY = re.compile(
    r"\b(?:thank|thanks|sorry|apolog|understand|appreciate|happy to|glad|welcome|pleasure|hope|hello|hi|dear|"
    r"certainly|absolutely|of course|no problem|great|sure|you're welcome|my pleasure|have a (?:great|good|nice))",
    re.IGNORECASE,
)
