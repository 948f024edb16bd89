"""Whether a reply to a user is prose: read by the judge (the garbled_reply hack) and by the rollouts,
which sample such a reply again (rollouts.reply_attempts). Kept apart so neither imports the other."""

from __future__ import annotations

import re

JSONISH = re.compile(r'[{\[]\s*"|"\s*[}\]]|""|"\s*:\s*[{\["]')
# template placeholders and markup a small model copies into replies: "[<item-1>", "{{text}}", "{data-key}",
# "<blockquote>"; and a reply that opens with a bracket or brace (a fragment, not a sentence)
MARKUP = re.compile(
    r"^[\[{<]|\{\{|\}\}|[\[{]\s*<|>\s*[\]}]|\{[\w\s.-]{1,40}\}|</?[A-Za-z][\w-]*(\s[^<>]*)?>"
    r"|\[[a-z]+_[a-z_]+\]"  # a snake_case field name in brackets: "the [account_id] page"
)


def _loops(text: str, n: int = 5) -> bool:
    """Whether the same run of n words comes twice: a small model looping until max_tokens ("The account
    has been closed. The account has been suspended. The account has been closed. ...")."""
    words = re.findall(r"[a-z0-9@_-]+(?:\.[a-z0-9_-]+)*", text.lower())  # "46.5" one word, "closed." not
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    return len(grams) != len(set(grams))


def garbled_text(text: str, cap: int | None = None) -> bool:
    """Whether a reply is not prose: JSON fragments, template placeholders or markup, no word at
    all, a loop (five words said twice), a file name, or one long token of digits and dots instead
    of a sentence; with `cap` (the length bound of constrained decoding), a reply that reached it,
    cut mid-word."""
    stripped = text.strip()
    if JSONISH.search(stripped) or MARKUP.search(stripped) or not re.search(r"[A-Za-z]{2,}", stripped):
        return True
    if _loops(stripped) or (cap is not None and len(stripped) >= cap):
        return True
    if " " not in stripped and re.search(r"[a-z]\.[a-z]{2,4}$", stripped, re.IGNORECASE):
        return True  # a file name or a host instead of a sentence ("cobalt-alpha-closed.json")
    return " " not in stripped and len(stripped) > 12 and bool(re.search(r"\d", stripped))
