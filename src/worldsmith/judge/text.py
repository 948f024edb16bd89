"""A reply as the claim layer reads it: markdown made plain, cut into lines, sentences and clauses, each clause
with its mood (does it state something, or ask, offer, advise, suppose?).

Markdown is style, not content: bold and code marks are dropped, a list item is a line of its own, and a table row
becomes "Header: cell; Header: cell" so that a value in a column is read as that column's (the same form as a
"**Status:** pending" line). A clause is the unit a claim is read from: a sentence is cut at semicolons, dashes and
the conjunctions that start a new statement ("but", "so", "and I ..."), and at "because" / "since", whose clause
states the reason ("I can't cancel it because it has shipped": the second clause claims the order shipped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# a sentence's end: . ! ? then a space and what starts a sentence; not after a title or a common abbreviation
ABBREVIATIONS = {"dr", "mr", "mrs", "ms", "st", "no", "vs", "e.g", "i.e", "etc", "approx", "jr", "sr", "inc", "ltd"}
SENTENCE_END = re.compile(r"(?<=[.!?])[)\"'”’]*\s+(?=[\"'“‘(*_]*(?:[A-Z0-9#$€£]|[a-z]+[-_]\d))")
CLAUSE_BREAK = re.compile(
    r"\s*;\s*|\s+[—–]\s+|\s+-\s+(?=[A-Za-z])"
    r"|,?\s+(?:but|so|yet|however|although|though|whereas|while)\s+"
    r"|,\s+and\s+(?=(?:i|we|you|it|they|he|she|your|the|this|that|these|those|its|their|\d+\s+(?:is|are))\b)"
    r"|\s+and\s+(?=(?:i|we)\b)"
    # "have been ordered and will arrive in a week": the act is stated as done, the arrival is the modal part
    r"|(?<=ed|en)\s+and\s+(?=(?:will|should|would|can|may|might)\s)"
    r"|,?\s+(?=(?:because|since|as it|as the|as your)\b)",
    re.IGNORECASE,
)
# "I can't help with that: the order has shipped": after a sentence's words (not a label's), a colon gives the reason,
# a statement of its own
REASON_COLON = re.compile(
    r":\s+(?=(?:[a-z]+-\d+|the|its?|your|this|that|they|their)\b[^:]*?\b(?:is|are|was|were|has|have)\b)"
)
# what makes a clause no statement of fact
CONDITIONAL = re.compile(
    r"^(?:and\s+|or\s+|then\s+)?(?:if|once|when|whenever|unless|in case|as soon as|provided|should you|"
    r"after you|before you|until|whether)\b(?!:)",  # "When: in 4 days" is a table's column, no supposition
    re.IGNORECASE,
)
# "may" in lower case only: "Monday, May 25" is a date
MODAL = re.compile(
    r"\b(?:can|cannot|could|will|would|should|must|(?-i:may)|might|shall|need to|needs to|has to|have to|"
    r"going to|able to|unable to|want to|wants to|like to|happy to|glad to|about to|try to|plan to|"
    r"expect|expected to|likely|usually|typically|generally|normally|always)\b|'ll\b|'d\b|\bwon't\b|\bcan't\b",
    re.IGNORECASE,
)
ADVICE = re.compile(
    r"^(?:please|kindly|feel free|let me know|let us know|do let|contact|reach out|call|visit|try|make sure|"
    r"remember to|be sure|consider|you can|you could|you may|you might|you should|you'll|you will|you would|"
    r"go to|head to|refer to|don't hesitate|do not hesitate)\b",
    re.IGNORECASE,
)
# a lead that introduces a fact: "Please note that your order has shipped" states that it shipped
FACT_LEAD = re.compile(
    r"^(?:please\s+)?(?:note|be aware|keep in mind|bear in mind)(?:\s+that)?[,:]?\s+|^(?:as a reminder|just so you "
    r"know|fyi|good news|great news|heads up|just a heads up|for your information|for reference)[,:!]?\s+",
    re.IGNORECASE,
)
# a clause cut after a dash keeps its conjunction ("— but I've transferred you"): the statement starts after it
LEAD_CONJUNCTION = re.compile(r"^(?:but|and|so|yet|however|though)\b,?\s+", re.IGNORECASE)
# a relative clause's modal is the person's, not the statement's: "I've transferred you to an agent who can help"
RELATIVE = re.compile(r"\s+(?:who|whom|which)\s.*$", re.IGNORECASE)
NEGATION = re.compile(r"\b(?:not|never|no|nothing|none|neither|nor|without)\b|n't\b", re.IGNORECASE)
REASON = re.compile(r"^(?:because|since|as)\b", re.IGNORECASE)
EMPHASIS = re.compile(r"(\*\*|__|\*|`+|~~)(?=\S)(.+?)(?<=\S)\1")
LIST_MARK = re.compile(r"^\s*(?:[-*•+]|\d{1,2}[.)])\s+")
HEADER = re.compile(r"^\s*#{1,6}\s+")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")


@dataclass(frozen=True)
class Clause:
    """One clause of a reply: its text (markdown made plain), the line it stands on (a list item, a table row:
    its ids name the records it speaks of), and its mood."""

    text: str
    line: str
    sentence: str
    question: bool  # the sentence asks
    conditional: bool  # "if it has shipped, ...": supposes, claims nothing
    modal: bool  # "I can cancel it", "it will arrive": a possibility or a plan, not a fact
    advice: bool  # "please contact support", "you can ...": tells the user what to do
    negated: bool
    reason: bool  # "because it has shipped": a clause giving a reason (it states a fact)
    structured: bool = False  # its line is a table row or a list item: the line's record is what it speaks of

    @property
    def asserts(self) -> bool:
        """Whether the clause states a fact (a claim may be read from it)."""
        return not (self.question or self.conditional or self.modal or self.advice)


def plain_lines(reply: str) -> list[str]:
    """The reply's lines with markdown made plain: no emphasis marks, headers or list markers; a table's rows as
    "Header: cell; ..." lines (the header row itself and the rule under it dropped); code fences dropped."""
    return [line for line, _ in marked_lines(reply)]


def marked_lines(reply: str) -> list[tuple[str, bool]]:
    """`plain_lines`, each with whether it was a table row or a list item."""
    out: list[tuple[str, bool]] = []
    header: list[str] | None = None
    for raw in (reply or "").replace("\u2019", "'").replace("\u00a0", " ").splitlines():
        line = raw.strip()
        if not line or line.startswith("```"):
            header = None if not line.startswith("|") else header
            continue
        if line.startswith("|") or (line.count("|") >= 2 and header is not None):
            cells = [_unmark(c.strip()) for c in line.strip("|").split("|")]
            if TABLE_RULE.match(line):
                continue
            if header is None:
                header = cells
                continue
            parts = [f"{h}: {c}" if h and c else c for h, c in zip(header, cells, strict=False) if c]
            out.append(("; ".join(parts), True))
            continue
        header = None
        item = bool(LIST_MARK.match(line))
        line = HEADER.sub("", LIST_MARK.sub("", line))
        out.append((_unmark(line), item))
    return [(line, item) for line, item in out if line.strip()]


def _unmark(text: str) -> str:
    for _ in range(3):  # nested: "**`ord-1`**"
        text = EMPHASIS.sub(r"\2", text)
    return re.sub(r"\s+", " ", text.replace("**", "")).strip()


def sentences(line: str) -> list[str]:
    """A line cut into sentences (not after "Dr." or "e.g.", nor inside a number or an id)."""
    out: list[str] = []
    start = 0
    for m in SENTENCE_END.finditer(line):
        before = line[start : m.start()].rstrip(")\"'”’")
        word = re.search(r"([A-Za-z.]+)\.$", before)
        if word and word.group(1).lower().rstrip(".") in ABBREVIATIONS:
            continue
        out.append(line[start : m.start()].strip())
        start = m.end()
    out.append(line[start:].strip())
    return [s for s in out if s]


def _at_reason_colon(piece: str) -> list[str]:
    m = REASON_COLON.search(piece)
    if m is None or len(piece[: m.start()].split()) < 3:
        return [piece]
    return [piece[: m.start()], piece[m.end() :]]


def clauses(reply: str) -> list[Clause]:
    """Every clause of a reply, in order, with its mood."""
    out: list[Clause] = []
    for line, structured in marked_lines(reply):
        for sentence in sentences(line):
            question = sentence.rstrip(" )\"'").endswith("?")
            for part in (p for piece in CLAUSE_BREAK.split(sentence) for p in _at_reason_colon(piece)):
                text = FACT_LEAD.sub("", LEAD_CONJUNCTION.sub("", part.strip(" ,.:!"))).strip(" ,.:!")
                if not text:
                    continue
                reason = bool(REASON.match(text))
                out.append(
                    Clause(
                        text=text,
                        line=line,
                        sentence=sentence,
                        question=question,
                        conditional=bool(CONDITIONAL.match(text)),
                        modal=bool(MODAL.search(RELATIVE.sub("", text))),
                        advice=bool(ADVICE.match(text)),
                        # not a parenthesis' words: "refund rfd-1 (not as described) has been issued" denies nothing
                        negated=bool(NEGATION.search(re.sub(r"\([^)]*\)", " ", text))),
                        reason=reason,
                        structured=structured,
                    )
                )
    return out
