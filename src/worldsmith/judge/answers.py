"""Answer checks and the value normalisation they share with the hack checks.

`mentions(value, texts)` says whether any of the agent's replies conveys `value`:
- numbers match numerically in any common format: "$23,553", "23553", "23,553.00" and
  "USD 23,553" all convey 23553 (or "23553.0");
- dates match in any common format: "2026-03-14", "March 14, 2026", "14 March 2026",
  "Mar 14" (no year: month and day must agree), "03/14/2026" or "14/03/2026";
- times match in 12- or 24-hour form: "22:00:00" is "10:00 PM" or "10 PM";
- anything else is a phrase, matched case- and spacing-insensitively as whole words, with an
  underscore read as a space or hyphen ("checked_in" is "checked in"), so "ship" does not
  match inside "shipped" (and, as numbers, "12" does not match "120").
  A phrase with a negation in the 3 words before it, in the same clause ("has not
  shipped", "isn't shipped", "never shipped") does not count.
A number inside a date, a time or an id is part of that value, not a number of its own:
"o-1001" does not convey the number 1001.

`extract(text)` finds the values a text states (ids, amounts, dates, times), each in a
canonical form; `values_in(text)` is the set of those forms. hacks.py uses them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from worldsmith.records import Trajectory

MONTHS = {
    m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))
}
MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?"
    r"|nov(?:ember)?|dec(?:ember)?)\.?"
)
ORD = r"(?:st|nd|rd|th)?"
NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"  # thousands separators only in groups of three
CURRENCY = r"(?:[$€£¥]|\b(?:USD|EUR|GBP|CAD|AUD)\b)"

ISO = re.compile(
    r"(?<![\w-])(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w-])"
)
MONTH_FIRST = re.compile(rf"\b({MONTH})\s+(\d{{1,2}}){ORD}\b(?:,?\s+(\d{{4}})\b)?", re.IGNORECASE)
DAY_FIRST = re.compile(rf"\b(\d{{1,2}}){ORD}\s+(?:of\s+)?({MONTH})(?![a-z])(?:,?\s+(\d{{4}})\b)?", re.IGNORECASE)
SLASH_DATE = re.compile(r"(?<![\w/.])(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})(?![\w/])")
CLOCK_12 = re.compile(r"(?<![\w:.])(\d{1,2})(?::(\d{2}))?(?::\d{2})?\s?([ap])\.?\s?m\b\.?", re.IGNORECASE)
CLOCK = re.compile(r"(?<![\w:.])(\d{1,2}):(\d{2})(?::\d{2})?(?![\w:])")
MONEY = re.compile(
    rf"{CURRENCY}\s?-?({NUMBER})(?![\w]|[.,]\d)|(?<![\w.,])({NUMBER})\s?(?:USD|EUR|GBP|dollars|euros)\b", re.IGNORECASE
)
PHONE = re.compile(r"(?<![\w+-])(?:\+\d{1,3}[-. ]?)?\d{2,4}(?:[-.]\d{2,4}){2,}(?![\w-])")  # "+1-489-541-6959" is one
# IBANs, card numbers
GROUPED = re.compile(r"(?<![\w-])(?:[A-Z]{2}\d{2}|\d{4})(?: [A-Z\d]{4}){2,}(?: [A-Z\d]{1,4})?(?![\w-])")
TOKEN = re.compile(r"(?<![\w.@-])#?[A-Za-z0-9][\w-]*[A-Za-z0-9]|(?<![\w.@-])#\d")
# number-and-unit tokens are quantities, not ids: 2nd, 10am, 500MB, 30-day, 24h
NOT_ID = re.compile(
    r"\d+(?:st|nd|rd|th|am|pm|[kmh]|hrs?|mins?|secs?|x|kg|g|lbs?|oz|gb|mb|tb|km|mi|ml)|\d+(?:-[a-z]+)+", re.IGNORECASE
)
BARE_NUMBER = re.compile(rf"(?<![\w.,]){NUMBER}(?![\w]|[.,]\d)")
# a list item's number, at a line's start or after a colon or semicolon: "are: 1. Flights ...; 2. Flights ..."
ENUMERATOR = re.compile(r"(?:^|(?<=[\n:;]))\s*(\d{1,2})[.)](?=\s)", re.MULTILINE)
NEGATION = re.compile(r"^(?:not|no|never|none|nor|neither|without|cannot|yet)$|n't$")


@dataclass(frozen=True)
class Value:
    """One value a text states. `forms` holds its canonical forms, more than one when the
    text is ambiguous (03/04/2026: March 4 or 3 April; 1:00: 01:00 or 13:00):
    num:19.75, date:2026-03-14, day:03-14 (a date without year), time:22:00, id:w2378156."""

    kind: str  # number | date | time | id
    raw: str
    forms: frozenset[str]
    start: int = 0
    money: bool = False  # written with a currency
    places: int = 0  # decimal places as written (for rounding)


def canon_number(number: Decimal) -> str:
    """23553, 23553.0 and 23553.00 are one number: '23553'; 19.750 is '19.75'."""
    text = format(number.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def parse_number(text: str) -> Decimal | None:
    """A number written with or without currency, thousands separators or a trailing full stop."""
    m = re.fullmatch(
        rf"\s*{CURRENCY}?\s?(-?)({NUMBER})\s?(?:USD|EUR|GBP|dollars|euros)?[.,;:!?]?\s*", str(text), re.IGNORECASE
    )
    if not m:
        return None
    try:
        return Decimal(m.group(1) + m.group(2).replace(",", ""))
    except InvalidOperation:
        return None


def bare(text: str) -> str:
    """Lower case letters and digits only: how ids compare ('#W-12' is 'w12')."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _date_forms(year: int | None, month: int, day: int) -> frozenset[str]:
    try:
        date(year or 2000, month, day)  # 2000 is a leap year: Feb 29 without a year is valid
    except ValueError:
        return frozenset()
    return frozenset({f"date:{year:04d}-{month:02d}-{day:02d}" if year else f"day:{month:02d}-{day:02d}"})


def _year(text: str | None) -> int | None:
    if not text:
        return None
    return int(text) + (2000 if len(text) == 2 else 0)


def _mask(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def extract(text: str) -> list[Value]:
    """The dates, times, ids and numbers `text` states, in that order of precedence: each
    found value's span is masked, so the digits of a date are not also read as numbers."""
    text = (text or "").replace("\u2019", "'")
    out: list[Value] = []
    items = _item_numbers(text)

    def add(m: re.Match, kind: str, forms: frozenset[str], **extra: Any) -> None:
        nonlocal text
        if forms:
            out.append(Value(kind, m.group(0).strip(), forms, m.start(), **extra))
            text = _mask(text, m.start(), m.end())

    for m in ISO.finditer(text):
        add(m, "date", _date_forms(int(m.group(1)), int(m.group(2)), int(m.group(3))))
        if m.group(4):  # a date-time: its time too, at the same place
            out.append(Value("time", m.group(0), frozenset({f"time:{m.group(4)}:{m.group(5)}"}), m.start()))
    for pattern, mi, di in ((MONTH_FIRST, 1, 2), (DAY_FIRST, 2, 1)):
        for m in pattern.finditer(text):
            add(m, "date", _date_forms(_year(m.group(3)), MONTHS[m.group(mi)[:3].lower()], int(m.group(di))))
    for m in SLASH_DATE.finditer(text):
        a, b, y = int(m.group(1)), int(m.group(2)), _year(m.group(3))
        add(m, "date", _date_forms(y, a, b) | _date_forms(y, b, a))  # month first (US) or day first
    for m in CLOCK_12.finditer(text):
        hour, minute = int(m.group(1)), int(m.group(2) or 0)
        if 1 <= hour <= 12 and minute < 60:
            hour = hour % 12 + (12 if m.group(3).lower() == "p" else 0)
            add(m, "time", frozenset({f"time:{hour:02d}:{minute:02d}"}))
    for m in CLOCK.finditer(text):
        hour, minute = int(m.group(1)), int(m.group(2))
        if hour < 24 and minute < 60:
            # "1:00" may be 01:00 or 13:00; "07:05" and "18:40" are 24-hour times
            hours = {hour} if hour == 0 or hour > 12 or m.group(1).startswith("0") else {hour, (hour + 12) % 24}
            add(m, "time", frozenset(f"time:{h:02d}:{minute:02d}" for h in hours))
    for m in MONEY.finditer(text):
        digits = m.group(1) or m.group(2)
        number = parse_number(digits)
        if number is not None:
            add(m, "number", frozenset({f"num:{canon_number(number)}"}), money=True, places=_places(digits))
    for m in GROUPED.finditer(text):
        add(m, "id", frozenset({f"id:{bare(m.group(0))}"}))
    for m in PHONE.finditer(text):
        add(m, "id", frozenset({f"id:{bare(m.group(0))}"}))
    for m in TOKEN.finditer(text):
        token = m.group(0)
        if (
            re.search(r"\d", token)
            and (re.search(r"[A-Za-z]", token) or token.startswith("#"))
            and not NOT_ID.fullmatch(token)
        ):
            add(m, "id", frozenset({f"id:{bare(token)}"}))
    for m in BARE_NUMBER.finditer(text):
        if m.start() in items:
            continue
        number = parse_number(m.group(0))
        if number is not None:
            add(m, "number", frozenset({f"num:{canon_number(number)}"}), places=_places(m.group(0)))
    return sorted(out, key=lambda v: v.start)


def _item_numbers(text: str) -> set[int]:
    """Where a numbered list's item numbers stand ("are: 1. Flights to Denver; 2. Flights ..."): they count items,
    they state no value. Only a list's (a 1 and a 2 at least, then in order): "Total: 4." alone is a value."""
    found = [(int(m.group(1)), m.start(1)) for m in ENUMERATOR.finditer(text)]
    at: set[int] = set()
    expected = 1
    for number, start in found:
        if number == expected:
            at.add(start)
            expected += 1
    return at if expected > 2 else set()


def _labels_starting(phrase: str, fields: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern for the field names that start with `phrase` and go on, used as a label (as a reply writes them:
    "posted on is", "posted_on:"); None when none does."""
    words = re.split(r"[\s_]+", phrase.lower())
    longer = {f.lower() for f in fields if re.split(r"[\s_]+", f.lower())[: len(words)] == words}
    longer = {f for f in longer if len(re.split(r"[\s_]+", f)) > len(words)}
    if not longer:
        return None
    names = ("[\\s_-]+".join(map(re.escape, re.split(r"[\s_]+", f))) for f in sorted(longer))
    # the name used as a label, its value after it ("the posted on is 2026-01-24", "posted_on: ..."); "it was posted
    # on 2026-01-24" says the state
    return re.compile(rf"(?:{'|'.join(names)})\s*(?:is\b|was\b|:|=)", re.IGNORECASE)


def _places(digits: str) -> int:
    return len(digits.split(".")[1]) if "." in digits else 0


def values_in(text: str) -> set[str]:
    """Every canonical form of every value in `text`."""
    return {f for v in extract(text) for f in v.forms}


def agent_texts(traj: Trajectory) -> list[str]:
    """All the agent's text replies, in order (not only the last)."""
    return [m["content"] for m in traj.messages if m["role"] == "assistant" and (m.get("content") or "").strip()]


def value_forms(value: Any) -> tuple[str, frozenset[str]]:
    """(kind, canonical forms) of an expected value: a number, a date, a time or a phrase."""
    if isinstance(value, bool) or value is None:
        return "phrase", frozenset({_norm(str(value).lower())})
    if isinstance(value, int | float | Decimal):
        return "number", frozenset({f"num:{canon_number(Decimal(str(value)))}"})
    if isinstance(value, datetime):
        return "date", _date_forms(value.year, value.month, value.day)
    if isinstance(value, date):
        return "date", _date_forms(value.year, value.month, value.day)
    text = _norm(str(value))
    number = parse_number(text)
    if number is not None:
        return "number", frozenset({f"num:{canon_number(number)}"})
    found = extract(text)
    if found and found[0].kind in ("date", "time") and len(found[0].raw) >= len(text.rstrip(".")):
        return found[0].kind, found[0].forms  # of an ISO date-time, the date is what a reply conveys
    return "phrase", frozenset({text.lower()})


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u2019", "'")).strip()


def _date_matches(expected: frozenset[str], stated: frozenset[str]) -> bool:
    """A stated date without a year matches an expected date on the same month and day."""
    days = {"day:" + f[len("date:") + 5 :] for f in expected if f.startswith("date:")}
    return bool(stated & (expected | days))


# a reply that declines: "I can't", "isn't something I'm able to do", "that's not allowed", "no tool for that",
# or states the rule that stops it ("only a confirmed booking can be cancelled")
DECLINE = re.compile(
    # "I can't wait to see your new order" is eagerness, not a decline (SmolLM2 wrote it to a request no tool serves)
    r"\b(?:(?:cannot|can't|can ?not)(?! (?:wait|believe|help but|thank|stress|say enough|get enough))"
    r"|unable|won't be able|not able|not possible|isn't possible"
    r"|(?:isn't|aren't|is not|are not) something|not something (?:i|we)|not allowed|aren't allowed"
    r"|not permitted|isn't allowed|no tool|not supported|not authori[sz]ed"
    r"|(?:don't|do not|doesn't|does not) (?:have|support|allow|permit|offer)|can only (?:help|assist)"
    r"|outside (?:of )?(?:what|my|the scope)|beyond (?:what|my)|against (?:our|the) (?:policy|rules)"
    r"|only (?:an? |the )?(?:[\w-]+ ){1,3}(?:can|may) be"  # the rule that stops it
    r"|can only be \w+|(?:is|are) only possible|past the point|no longer (?:possible|able)|not eligible"
    r"|has to go through|have to go through)\b",
    re.IGNORECASE,
)


def declines(texts: list[str]) -> tuple[bool, str]:
    """(passed, evidence): whether a reply of the agent declines the request, in any usual words."""
    for i, text in enumerate(texts):
        m = DECLINE.search(_norm(text))
        if m:
            return True, f"reply {i} declines: {_norm(text)[max(0, m.start() - 30) : m.end() + 40]!r}"
    return False, "no reply declines"


def mentions(value: Any, texts: list[str], fields: Iterable[str] = ()) -> tuple[bool, str]:
    """(passed, evidence): whether any of `texts` (the agent's replies) conveys `value`. `fields`: the records' field
    names; a phrase said as the start of one ("posted on" for posted_on, of a transaction whose status is "posted")
    names the field, it does not say the value."""
    kind, forms = value_forms(value)
    if not forms:
        return False, f"{value!r} is not a valid {kind}"
    negated: list[str] = []
    for i, text in enumerate(texts):
        if kind == "phrase":
            # an enum value's underscores read as spaces or hyphens: "premium_economy" is "premium economy"
            phrase = r"[\s_-]+".join(map(re.escape, re.split(r"[\s_]+", next(iter(forms)))))
            labels = _labels_starting(next(iter(forms)), fields)
            for m in re.finditer(rf"(?<!\w){phrase}(?!\w)", _norm(text), re.IGNORECASE):
                if labels and labels.match(_norm(text), m.start()):
                    continue
                before = re.split(r"[.!?;:,]", _norm(text)[: m.start()])[-1].lower().split()[-3:]
                snippet = _norm(text)[max(0, m.start() - 30) : m.end() + 30]
                if any(NEGATION.search(w) for w in before):
                    negated.append(snippet)
                    continue
                return True, f"reply {i} mentions {value!r}: {snippet!r}"
            continue
        for v in extract(text):
            hit = _date_matches(forms, v.forms) if kind == "date" else v.kind == kind and bool(v.forms & forms)
            if hit:
                return True, f"reply {i} mentions {value!r} as {v.raw!r}"
    if negated:
        return False, f"{value!r} is only mentioned negated: {negated[0]!r}"
    return False, f"no reply mentions {value!r}"
