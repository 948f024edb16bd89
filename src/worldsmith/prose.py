"""Whether a reply to a user is prose: read by the judge (the garbled_reply hack) and by the rollouts,
which sample such a reply again (rollouts.reply_attempts). Kept apart so neither imports the other."""

from __future__ import annotations

import json
import re
from typing import Any

JSONISH = re.compile(r'[{\[]\s*"|"\s*[}\]]|""|"\s*:\s*[{\["]')
# template placeholders and markup a small model copies into replies: "[<item-1>", "{{text}}", "{data-key}",
# "<blockquote>"; and a reply that opens with a bracket or brace (a fragment, not a sentence)
MARKUP = re.compile(
    r"^[\[{<]|\{\{|\}\}|[\[{]\s*<|>\s*[\]}]|\{[\w\s.-]{1,40}\}|</?[A-Za-z][\w-]*(\s[^<>]*)?>"
    r"|\[[a-z]+_[a-z_]+\]"  # a snake_case field name in brackets: "the [account_id] page"
)


WORD = re.compile(r"[a-z0-9@_'-]+(?:\.[a-z0-9_-]+)*")  # "46.5" one word, "closed." not
SENTENCE_END = re.compile(r"[.!?]+(?:\s+|$)|\n+")
ID_LIKE = re.compile(r"(?=.*[a-z])(?=.*\d)")  # letters and digits in one token: "rvw-6303", "ord-1042"
# one item three times in a row in a list: "Theresa Moore, Theresa Moore, Theresa Moore", "fl-3205, fl-3205, fl-3205"
REPEATED_ITEM = re.compile(
    r"(?<![\w-])([A-Za-z0-9][\w' .-]{1,40}?)(?:\s*,\s*(?:and\s+)?\1(?![\w-])){2,}", re.IGNORECASE
)


def _loops(text: str) -> bool:
    """Whether a reply is degenerate repetition, what a small model writes when it goes round
    until max_tokens ("The account has been closed. The account has been suspended. The account
    has been closed. ..."): a sentence (or a clause inside one) of four words or more said twice,
    a span of ten words said twice, the same five words around the same id said twice (a record
    dump going round), or a reply of twenty words or more most of whose four-word runs came
    before. Not a repeated phrase: a list whose rows repeat column words ("economy price") or a
    reply that says "you'd like to modify" twice is prose."""
    split = SENTENCE_END.split(text)
    sentences = [tuple(WORD.findall(s.lower())) for s in split]
    long = [s for s in sentences if len(s) >= 4]
    if len(long) != len(set(long)):
        return True
    # a clause said twice inside a sentence: "theres noone to help you, theres noone to help you"
    for s in split:
        parts = [tuple(WORD.findall(p.lower())) for p in re.split(r"[,;]\s+", s)]
        parts = [p for p in parts if len(p) >= 4]
        if len(parts) != len(set(parts)):
            return True
    if REPEATED_ITEM.search(text):
        return True
    words = WORD.findall(text.lower())
    lines = [WORD.findall(line.lower()) for line in text.splitlines()]  # a list's rows: no run across two
    if _repeated(lines, 10):
        return True
    if any(ID_LIKE.match(w) for g in _repeated(lines, 5) for w in g):
        return True
    if len(words) < 20:
        return False
    seen: set[tuple[str, ...]] = set()
    covered: set[int] = set()
    for i in range(len(words) - 3):
        g = tuple(words[i : i + 4])
        if g in seen:
            covered.update(range(i, i + 4))
        seen.add(g)
    return len(covered) > len(words) / 2


def _repeated(lines: list[list[str]], n: int) -> set[tuple[str, ...]]:
    """The runs of n words said more than once, each run within one line."""
    grams = [tuple(words[i : i + n]) for words in lines for i in range(len(words) - n + 1)]
    return {g for g in grams if grams.count(g) > 1} if len(grams) != len(set(grams)) else set()


# a tool's JSON Schema read out as a reply: "status: type: string", "quantity: integer — the order's quantity"
SCHEMA_DUMP = re.compile(
    r"\b(?:type|[a-z]+_?[a-z]*)\s*:\s*(?:type\s*:\s*)?(?:string|integer|boolean|object|array|number)\b"
    r"(?=\s*(?:[,;(—–-]|\benum\b|\bdescription\b|$))"
    # a field with its type in brackets: "`priority` (string): one of ...", "status (enum: open | closed)"
    r"|\b\w+`?\s*\((?:string|integer|boolean|object|array|number|enum)\s*[),:]",
    re.IGNORECASE | re.MULTILINE,
)


# the same chunk of 3+ characters, starting with a letter, four times in a row with no space between
STUTTER = re.compile(r"([A-Za-z][^\s]{2,}?)\1{3,}")


def _counts(text: str) -> bool:
    """Whether a reply counts: six or more whole numbers in a row, only commas between them, each one more than
    the last ("The routing ids are: 1, 2, 3, 4, 5, 6, ..."): what SmolLM2 wrote before the value a quoting grammar
    required. Numbers with words between ("day 1, item-2 ... day 2") are a list, not counting."""
    for run in re.finditer(r"(?<![\w.-])\d{1,4}(?:\s*,\s*\d{1,4}(?![\w.-]|\.\d)){5,}", text):
        numbers = [int(n) for n in re.findall(r"\d+", run[0])]
        streak = 1
        for a, b in zip(numbers, numbers[1:], strict=False):
            streak = streak + 1 if b == a + 1 else 1
            if streak >= 6:
                return True
    return False


def _prose_lines(text: str) -> str:
    """The reply without its markdown table rows: a table shows the records a sentence may then name again ("tkt-1501
    | Missing part in the box" and "tkt-1501 ("Missing part in the box") waits longest") - a summary, not a loop."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("|"))


def _repeated_rows(text: str) -> bool:
    """A table whose same row comes twice (a dump going round)."""
    rows = [line.strip() for line in text.splitlines() if line.lstrip().startswith("|") and re.search(r"\w", line)]
    return len(rows) != len(set(rows))


def one_word(text: str) -> bool:
    """Whether a reply to the user is a single word ("blocked", "success", "lumen-cobalt-archived"): it
    says neither what happened nor what was found. No good reply of the judge's labelled sets is one
    word; "Done: ord-4601 → delivered." and "It's active." are not. Only for replies without tool calls."""
    return len(re.findall(r"[\w'-]+", text)) <= 1


def garbled_text(text: str, cap: int | None = None) -> bool:
    """Whether a reply is not prose: JSON fragments, a schema read out, template placeholders or markup, no word at
    all, degenerate repetition (`_loops`), a file name, or one long token of digits and dots instead
    of a sentence; with `cap` (the length bound of constrained decoding), a reply that reached it,
    cut mid-word."""
    stripped = text.strip()
    if JSONISH.search(stripped) or MARKUP.search(stripped) or SCHEMA_DUMP.search(stripped):
        return True
    if not re.search(r"[A-Za-z]{2,}", stripped):
        return True
    if _loops(_prose_lines(stripped)) or _repeated_rows(stripped) or (cap is not None and len(stripped) >= cap):
        return True
    if STUTTER.search(stripped) or _counts(stripped):  # a loop inside one token ("json.data.json.data..."), counting
        return True
    if " " not in stripped and re.search(r"[a-z]\.[a-z]{2,4}$", stripped, re.IGNORECASE):
        return True  # a file name or a host instead of a sentence ("cobalt-alpha-closed.json")
    return " " not in stripped and len(stripped) > 12 and bool(re.search(r"\d", stripped))


def _result_values(doc: Any) -> list[str]:
    """The values a tool result shows, as a reply would write them: strings of 2+ characters, numbers
    (500.0 also as 500), and each list's length (a count is an answer too)."""
    if isinstance(doc, dict):
        return [v for x in doc.values() for v in _result_values(x)]
    if isinstance(doc, list):
        return [str(len(doc)), *(v for x in doc for v in _result_values(x))]
    if isinstance(doc, bool) or doc is None:
        return []
    if isinstance(doc, int | float):
        return [str(doc), *([str(int(doc))] if isinstance(doc, float) and doc.is_integer() else [])]
    return [doc.strip()] if isinstance(doc, str) and len(doc.strip()) >= 2 else []


def tool_result(message: dict[str, Any]) -> Any | None:
    """The parsed result of a tool message whose call succeeded; None for any other message, an error
    result (`{"error": ...}`) or one that is not JSON."""
    if message.get("role") != "tool":
        return None
    try:
        doc = json.loads(message.get("content") or "")
    except ValueError:
        return None
    return None if isinstance(doc, dict) and "error" in doc else doc


def ignores_result(text: str, messages: list[dict[str, Any]]) -> bool:
    """Whether a reply written right after a tool result that succeeded quotes none of its values:
    SmolLM2 answered a record it had just read with "Done." or a date the record never had. False
    when the last message is not a tool result, or an error, or has no values to quote."""
    doc = tool_result(messages[-1]) if messages else None
    if doc is None:
        return False
    values = _result_values(doc)
    low = text.lower()
    return bool(values) and not any(re.search(rf"(?<![\w.]){re.escape(v.lower())}(?![\w]|\.\d)", low) for v in values)
