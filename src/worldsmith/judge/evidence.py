"""What a reply may rest on: the conversation before it and the executed world.

`Evidence(traj, at)` holds, for the agent's reply at message `at`: the texts said before it (system prompt and
policy, the user's words, the tools' descriptions, every result, the agent's own call arguments), the calls made
before it (which succeeded, which wrote, which failed), the world's state at that moment (the initial state plus the
patches of the calls before it, replayed) and every version of every record the world or a result has shown. The
claim layer (`claims.py`) classifies a reply's claims against it; nothing here reads the reply.
"""

from __future__ import annotations

import bisect
import calendar
import datetime as dt
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cached_property
from itertools import combinations, combinations_with_replacement
from typing import Any

import snowballstemmer

from worldsmith.judge.answers import Value, bare, extract
from worldsmith.records import ToolCall, Trajectory
from worldsmith.worldmodel.state import PatchRejected, apply_patch

STEMMER = snowballstemmer.stemmer("english")
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")
ID_TOKEN = re.compile(r"\b[A-Za-z]+[-_]\d+\b")  # an id with a prefix: ord-4702, cus_12
MAX_NUMBERS = 300  # distinct numbers combined pairwise (90,000 sums): a bound on the work, not a heuristic
STATE_VALUE = re.compile(r"[a-z][a-z_ -]{1,30}")
DAY_COUNT = re.compile(
    r"\b(?:(?P<a>\d{1,3})\s*(?:to|or|and|-|–)\s*)?(?P<b>\d{1,3})[\s-]*(?:business\s+|calendar\s+|working\s+)?"
    r"(?P<unit>days?|nights?|weeks?)\b",
    re.IGNORECASE,
)
DURATION = re.compile(
    r"[\s-]*(?:business\s+|calendar\s+|working\s+)?(?:days?|nights?|weeks?|months?|years?|hours?|minutes?)\b", re.I
)
# a count in words: "three of the five bowls", "nine days overdue"
DAY_COUNT_WORDS = {
    w: i
    for i, w in enumerate(
        (
            *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven"),
            *("twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"),
        )
    )
}
QUANTITY = re.compile(r'"(?:quantity|qty|units|items|count|nights|seats)"\s*:\s*(\d{1,3})\b')
MULTIPLIER = re.compile(r"\b(\d+(?:\.\d+)?)\s*(?:×|x\b|times\b)", re.IGNORECASE)
TODAY_IS = re.compile(r"\btoday(?:'s date)?\s+is\s+([^\n]{6,40}?\d{4})", re.IGNORECASE)


def stem(word: str) -> str:
    return STEMMER.stemWord(word.lower().strip("'’-"))


def words_of(text: str) -> list[str]:
    """The words of a text, with snake_case and camelCase names read as their words ("checked_in": checked, in)."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text.replace("_", " "))
    return [w.lower() for w in WORD.findall(text)]


def error_result(content: str) -> bool:
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


def _parsed(content: str) -> Any:
    try:
        return json.loads(content or "")
    except ValueError:
        return None


def json_objects(doc: Any) -> list[dict[str, Any]]:
    """Every JSON object inside a value, outermost first."""
    out: list[dict[str, Any]] = []
    stack = [doc]
    while stack:
        node = stack.pop(0)
        if isinstance(node, dict):
            out.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return out


def listed_rows(doc: Any) -> list[list[dict[str, Any]]]:
    """The lists of records a tool result holds: the result itself when it is a list, else its list values."""
    lists = (
        [doc]
        if isinstance(doc, list)
        else [v for v in doc.values() if isinstance(v, list)]
        if isinstance(doc, dict)
        else []
    )
    return [[r for r in rows if isinstance(r, dict)] for rows in lists]


def scalar_text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float | str):
        return str(value)
    return None


@dataclass
class Collection:
    """A kind of record in the world: its key field, its nouns ("appointment", "appointments"), the fields whose
    values are states ("status": scheduled, cancelled, ...), and every state word they use."""

    name: str
    key: str | None
    nouns: set[str]
    state_fields: dict[str, set[str]] = field(default_factory=dict)


@dataclass
class Rec:
    """A record as the episode knows it: every version the world held before the reply (oldest first) and whether
    a result showed it."""

    key: str
    collection: str | None
    versions: list[dict[str, Any]]
    shown: bool = False
    # what results showed of it, where that differs from the world (a simulated tool's answer): the conversation is
    # what the agent read, so a reply that repeats it is faithful
    seen: list[dict[str, Any]] = field(default_factory=list)

    @property
    def now(self) -> dict[str, Any]:
        return self.versions[-1]

    def current(self) -> list[dict[str, Any]]:
        """The versions that may be called the record's present: the world's latest and what results showed."""
        return [self.versions[-1], *self.seen]

    def values(self, name: str, ever: bool = False) -> list[Any]:
        return [v.get(name) for v in (self.versions + self.seen if ever else self.current()) if name in v]


def singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if re.search(r"(?:ss|sh|ch|x|z)es$", word):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) >= 3:
        return word[:-1]
    return word


def _key_field(name: str, records: list[dict[str, Any]]) -> str | None:
    fields = [k for k in (records[0] if records else {}) if k == "id" or k.endswith("_id") or k.endswith("Id")]
    unique = [k for k in fields if len({str(r.get(k)) for r in records}) == len(records)]
    own = f"{singular(name)}_id"
    if own in unique:
        return own
    return unique[0] if unique else (fields[0] if fields else None)


def _state_fields(records: list[dict[str, Any]], enums: dict[str, set[str]]) -> dict[str, set[str]]:
    """Fields whose values are states: named status/state, or few short lower-case words shared by records, or
    values a tool's parameter of the same name lists as its enum."""
    out: dict[str, set[str]] = {}
    for k in {k for r in records for k in r}:
        values = [r.get(k) for r in records if isinstance(r.get(k), str)]
        if not values or not all(STATE_VALUE.fullmatch(v) for v in values):
            continue
        distinct = set(values)
        listed = enums.get(k, set())
        named = k in ("status", "state") or k.endswith("_status") or k.endswith("_state")
        if named or (distinct & listed and len(distinct) <= 8) or (len(values) >= 3 and len(distinct) <= 4):
            out[k] = distinct | listed
    return out


class Seen:
    """The values the conversation states before a reply, for matching a reply's values against: numbers (and what
    plain arithmetic makes of them), dates, times, ids."""

    def __init__(self, texts: list[str], rules: str = "", asked: str = ""):
        self.texts = texts
        self.rules = rules  # the system prompt and the tools' descriptions: where the policy's counts are said
        self.asked = asked  # the user's words: the weekdays they name ("rent is due friday")
        self.text = " ".join(texts)
        self.bare = bare(self.text)
        values = [extract(t) for t in texts]
        self.forms = {f for vs in values for v in vs for f in v.forms}
        self.days = {"day:" + f[10:] for f in self.forms if f.startswith("date:")}  # month-day of every dated value
        # any digits count as seen ("****4417" has 4417), but not the number of an id: "4702" for "ord-4702"
        self.plain = ID_TOKEN.sub(" ", self.text.replace(",", ""))
        self.plain_bare = bare(self.plain)
        self.numbers = {abs(Decimal(d)) for d in re.findall(r"\d+(?:\.\d+)?", self.plain)}
        # what arithmetic combines: not a length of time ("within 30 days" is no amount to add to a refund)
        self.operands = [
            sorted({abs(num(v)) for v in vs if v.kind == "number" and not DURATION.match(t[v.start + len(v.raw) :])})
            for t, vs in zip(texts, values, strict=True)
        ]

    @cached_property
    def derived(self) -> list[Decimal]:
        """Sorted: the numbers seen, their pairwise sums and differences, count or percent times a number, sums of
        three numbers of one message, and each number column's total and mean over a listed result."""
        return sorted(self._derived[0])

    @cached_property
    def derived_amounts(self) -> list[Decimal]:
        """`derived` without the products of two small counts (5 × 5 is no fee of $25)."""
        out, counts = self._derived
        return sorted(out - counts)

    @cached_property
    def _derived(self) -> tuple[set[Decimal], set[Decimal]]:
        ops = self.flat_operands[:MAX_NUMBERS]
        out = set(ops)
        counts: set[Decimal] = set()  # products of two small whole numbers, and nothing else
        for a, b in combinations_with_replacement(ops, 2):
            out |= {a + b, abs(a - b), a * b / 100}
            if min(a, b) <= 12 and min(a, b) == min(a, b).to_integral_value():
                out.add(a * b)  # 3 bags at $35
                if max(a, b) <= 12 and max(a, b) == max(a, b).to_integral_value():
                    counts.add(a * b)
            if b and a:
                out |= {p for p in (_share(a, b), _share(b, a)) if p is not None}
        for group in self.operands:
            if len(group) <= 40:
                out |= {a + b + c for a, b, c in combinations(group, 3)}
        for text in self.texts:
            for rows in listed_rows(_parsed(text)):
                for k in {k for r in rows for k, x in r.items() if is_number(x)}:
                    column = [Decimal(str(r[k])) for r in rows if is_number(r.get(k))]
                    if len(column) >= 2:
                        out |= {abs(sum(column)), abs(sum(column) / len(column)).quantize(Decimal("0.01"))}
                        out |= {max(column) - min(column)}
        counts -= set(self.flat_operands)
        return out, counts

    @cached_property
    def dates(self) -> list[dt.date]:
        return sorted({dt.date.fromisoformat(f[5:]) for f in self.forms if f.startswith("date:")})

    @cached_property
    def day_counts(self) -> set[int]:
        """The counts of days a date may be moved by: one (the day before, the next day), a week, every count of
        days, nights or weeks said ("a 30-day window", "within 60 days", "7 to 21 days"), and the policy's small
        counts (the SLA's "critical 1, high 2, medium 5, low 10" days)."""
        counts = {1, 7, *_days_said(self.rules, ranges=True, fields=False)}
        for text in self.texts:
            counts |= _days_said(text, ranges=True)
        rules = self.rules
        for v in extract(rules):  # not the day of a date ("Today is Thursday, March 5")
            if v.kind in ("date", "time"):
                rules = rules.replace(v.raw, " ")
        counts |= {int(n) for n in re.findall(r"(?<![\d.:$])\b(\d{1,2})\b(?![.:]\d)", rules)}
        return {n for n in counts if 0 < n <= 400}

    @cached_property
    def said_day_counts(self) -> set[int]:
        """The counts of days the conversation itself gives (not the policy): "the last 30 days", {"days_late": 6}."""
        counts = set().union(*(_days_said(t, ranges=False) for t in (self.texts[1:] if self.rules else self.texts)))
        return {n for n in counts if 0 < n <= 400}

    @cached_property
    def date_derived(self) -> set[str]:
        """The date forms a reply may state from the dates shown (today's among them, from the system prompt): each
        moved by a count of days the conversation or the policy gives ("a 30-day window from March 18": April 17;
        "the day before June 26"; "past its SLA from June 20", the day after its 5 days from June 14 end)."""
        return self._moved(self.day_counts)

    @cached_property
    def date_past(self) -> set[str]:
        """The dates a clause about what becomes possible past a deadline may state: the day after each of
        `date_derived`'s moves ("past its SLA from June 20": 5 days from June 14 end on June 19)."""
        return self._moved({n + 1 for n in self.day_counts})

    @cached_property
    def date_weekday(self) -> set[str]:
        """The dates of the weekdays the user names, in the week after each date shown ("rent is due friday")."""
        named = {i for i, day in enumerate(calendar.day_name) if re.search(rf"\b{day}\b", self.asked, re.I)}
        out: set[str] = set()
        for d in self.dates:
            for n in range(1, 8):
                if (moved := d + dt.timedelta(days=n)).weekday() in named:
                    out |= {f"date:{moved.isoformat()}", f"day:{moved.isoformat()[5:]}"}
        return out

    def _moved(self, counts: set[int]) -> set[str]:
        out: set[str] = set()
        for d in self.dates:
            for n in counts:
                for moved in (d + dt.timedelta(days=n), d - dt.timedelta(days=n)):
                    out |= {f"date:{moved.isoformat()}", f"day:{moved.isoformat()[5:]}"}
        return out

    @cached_property
    def time_derived(self) -> set[str]:
        """The clock times a reply may state from the times shown, each moved by a length of time the conversation
        or the policy gives ("half-hour slots": the slot after 09:00 is 09:30)."""
        minutes = set()
        for text in (*self.texts, self.rules):
            minutes |= {int(n) for n in re.findall(r"\b(\d{1,3})[\s-]*min(?:ute)?s?\b", text, re.I)}
            minutes |= {60 * int(n) for n in re.findall(r"\b(\d{1,2})[\s-]*(?:hours?|hrs?)\b", text, re.I)}
            low = text.lower()
            minutes |= {
                m for word, m in (("half-hour", 30), ("half an hour", 30), ("quarter", 15), ("hour", 60)) if word in low
            }
        out = set()
        for f in self.forms:
            if f.startswith("time:"):
                h, m = map(int, f[5:].split(":"))
                for step in minutes:
                    for t in (h * 60 + m + step, h * 60 + m - step):
                        if 0 <= t < 24 * 60:
                            out.add(f"time:{t // 60:02d}:{t % 60:02d}")
        return out

    @cached_property
    def day_steps(self) -> set[Decimal]:
        """The counts of days an amount per day may be multiplied by: the days between two dates shown, and the
        counts of days the conversation gives (not the policy's: "$0.25 per day" times its "7 to 21 days" is no fee)."""
        spans = {abs((a - b).days) for a, b in combinations(self.dates, 2)} | self.said_day_counts
        return {Decimal(n) for n in spans if 0 < n <= 400}

    @cached_property
    def amount_derived(self) -> list[Decimal]:
        """Sorted: the amounts a reply may compute beyond `derived`: the total of any of a listed result's rows
        (the orders that were not cancelled, the payments of the last 30 days; a list of at most 16 rows), an amount
        times a count of days between two dates shown (a late fee per day), an amount times a multiplier the
        conversation or the policy states ("business costs 2.5 times as much"), and an amount shared exactly by a
        result's quantity (a unit price)."""
        out: set[Decimal] = set()
        for text in self.texts:
            for rows in listed_rows(_parsed(text)):
                if len(rows) > 16:
                    continue
                for k in {k for r in rows for k, x in r.items() if is_number(x)}:
                    sums = {Decimal(0)}
                    for r in rows:
                        if is_number(r.get(k)):
                            x = Decimal(str(r[k]))
                            sums |= {s + x for s in sums}
                    out |= {abs(s) for s in sums}
        amounts = [n for n in self.flat_operands if n][:MAX_NUMBERS]
        factors = set(self.day_steps)
        for text in (*self.texts, self.rules):
            factors |= {Decimal(m) for m in MULTIPLIER.findall(text)}
            factors |= {Decimal(2) for _ in re.finditer(r"\b(?:twice|double)\b", text, re.I)}
        out |= {a * f for a in amounts for f in factors}
        # a unit price: an amount over a count shown (an order of 4 bowls for $149.00: $37.25 a bowl), when exact
        counts = {Decimal(n) for text in self.texts for n in re.findall(QUANTITY, text) if 1 < int(n) <= 100}
        out |= {a / k for a in amounts for k in counts if (a * 100) % k == 0}
        return sorted(out)

    @cached_property
    def amount_triples(self) -> list[Decimal]:
        """Sorted: a ± b ± c over three different numbers (an order's amount less two refunds), where the numbers
        shown are few enough (at most 40) to combine."""
        ops = [n for n in self.flat_operands if n > 1]
        if len(ops) > 40:
            return []
        out = set()
        for a, b, c in combinations(ops, 3):
            out |= {abs(x) for x in (a + b - c, a - b + c, -a + b + c, a - b - c, b - a - c, c - a - b)}
        return sorted(out)

    @cached_property
    def flat_operands(self) -> list[Decimal]:
        """Sorted: every number arithmetic may combine, from all the texts."""
        return sorted({n for group in self.operands for n in group})

    @cached_property
    def steps(self) -> set[Decimal]:
        """What an amount the reply computed may be multiplied by: a count of days (`day_steps`), a small whole number
        shown, a count the user gives in words ("three of the five bowls")."""
        small = {x for x in self.flat_operands if x == x.to_integral_value() and x <= 12}
        said = {Decimal(DAY_COUNT_WORDS[w]) for w in re.findall(r"[a-z]+", self.asked.lower()) if w in DAY_COUNT_WORDS}
        return self.day_steps | small | {x for x in said if 2 <= x <= 12}

    def computes(self, v: Value, stated: list[Decimal] = (), past: bool = False) -> bool:
        """Whether the date, time or amount `v`, not itself shown, is what a plain computation over the shown values
        gives (`date_derived`, `time_derived`, `amount_derived`, `amount_triples`), or one more step from an amount
        the reply has stated before it and that was shown or computed (`stated`: "$28.00 more per day: $112.00 over
        your 4 days"). `past`: the clause speaks of what becomes possible past a deadline (`date_past`)."""
        if v.kind == "date":
            return bool(v.forms & (self.date_derived | self.date_weekday | (self.date_past if past else set())))
        if v.kind == "time":
            return bool(v.forms & self.time_derived)
        if v.kind != "number":
            return False
        n, tolerance = abs(num(v)), Decimal(1).scaleb(-v.places) / 2
        if _near(self.amount_derived, n, tolerance) or _near(self.amount_triples, n, tolerance):
            return True
        others = set(self.flat_operands) | set(stated)
        steps = self.steps | {x for x in stated if x == x.to_integral_value() and x <= 12}

        for a in stated:
            if any(abs(a + b - n) <= tolerance or abs(abs(a - b) - n) <= tolerance for b in others):
                return True
            if any(abs(a * k - n) <= tolerance for k in steps):
                return True
        return False

    def has(self, v: Value, before: str = "") -> bool:
        if v.kind == "id":
            digits = next(iter(v.forms))[3:]
            if digits.isdigit():  # "#6604" names no record where the ids are "ord-6604"
                return digits in self.plain_bare
            return digits in self.bare
        if v.kind == "date":
            return bool(v.forms & (self.forms | self.days))
        if v.kind == "time":
            return bool(v.forms & self.forms)
        n = abs(num(v))
        if n in self.numbers or _near(
            self.derived_amounts if v.money else self.derived, n, Decimal(1).scaleb(-v.places) / 2
        ):
            return True
        zeros = len(str(int(n))) - len(str(int(n)).rstrip("0")) if n == n.to_integral_value() and n else 0
        if zeros and v.places == 0 and APPROXIMATE.search(before):  # "about $17,000" for 17,021
            return _near(sorted(self.numbers), n, Decimal(10) ** min(zeros, 3) / 2)
        return False


APPROXIMATE = re.compile(
    r"(?:about|around|roughly|approximately|approx\.?|nearly|almost|over|under|~)\s*$", re.IGNORECASE
)


def _days_said(text: str, ranges: bool, fields: bool = True) -> set[int]:
    """The counts of days, nights or weeks a text says ("within 60 days", "a 2-week stay"; `ranges`: both ends of
    "7 to 21 days"), and (`fields`) a result's count of days ({"days_late": 6})."""
    out = set()
    for m in DAY_COUNT.finditer(text):
        unit = 7 if m.group("unit").lower().startswith("week") else 1
        out |= {int(g) * unit for g in ((m.group("a"), m.group("b")) if ranges else (m.group("b"),)) if g}
    if fields:
        out |= {int(n) for n in re.findall(r'"\w*days?\w*"\s*:\s*(\d{1,3})\b', text)}
    return out


def is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def num(v: Value) -> Decimal:
    return Decimal(next(iter(v.forms))[4:])


def _near(ordered: list[Decimal], n: Decimal, tolerance: Decimal) -> bool:
    i = bisect.bisect_left(ordered, n - tolerance)
    return i < len(ordered) and ordered[i] <= n + tolerance


@dataclass
class Result:
    """A tool call before the reply, with what came back."""

    call: ToolCall
    content: str
    doc: Any  # the parsed result (None: not JSON)
    ok: bool  # the call went through and did not report an error
    at: int  # the message index of the result


class Evidence:
    """What the agent's reply at message `at` may rest on (see the module's docstring)."""

    def __init__(self, traj: Trajectory, at: int):
        self.traj, self.at = traj, at
        before = traj.messages[:at]
        self.system = " ".join(m.get("content") or "" for m in before if m["role"] == "system")
        self.user = [m.get("content") or "" for m in before if m["role"] == "user"]
        index = {m.get("tool_call_id"): i for i, m in enumerate(traj.messages) if m["role"] == "tool"}
        calls = {c.call_id: c for c in traj.calls}
        self.results: list[Result] = []
        for i, m in enumerate(before):
            if m["role"] != "tool" or (call := calls.get(m.get("tool_call_id") or "")) is None:
                continue
            content = m.get("content") or ""
            self.results.append(Result(call, content, _parsed(content), call.ok and not error_result(content), i))
        self.calls = [r.call for r in self.results]
        faulted = {f.call_id for f in traj.faults if index.get(f.call_id, at) < at}
        patched = {p.call_id for p in traj.world_states.patches if p.patch}
        self.writes = [r for r in self.results if r.ok and (r.call.call_id in patched or not r.call.read_only)]
        self.reads = [r for r in self.results if r.ok and r not in self.writes]
        self.failures = [r for r in self.results if not r.ok or r.call.call_id in faulted]
        self.arguments = [json.dumps(r.call.arguments, ensure_ascii=False) for r in self.results]
        self.tool_text = " ".join(json.dumps(t, ensure_ascii=False) for t in traj.tools)
        self._world(traj, index)

    # ------------------------------------------------------------------ the world

    def _world(self, traj: Trajectory, index: dict[str | None, int]) -> None:
        states = [traj.world_states.initial]
        self.changed: list[tuple[str, dict[str, Any]]] = []  # (call_id, op) of every patch before the reply
        for entry in traj.world_states.patches:
            if index.get(entry.call_id, self.at) >= self.at or not entry.patch:
                continue
            try:
                states.append(apply_patch(states[-1], entry.patch))
            except PatchRejected:
                continue
            self.changed += [(entry.call_id, op) for op in entry.patch]
        self.initial, self.state = states[0], states[-1]
        enums = _enums_by_parameter(traj.tools)
        self.collections: dict[str, Collection] = {}
        self.fields: dict[str, set[str]] = {}
        for name in {*traj.world_states.initial, *traj.world_states.final}:
            records = [r for r in traj.world_states.initial.get(name) or [] if isinstance(r, dict)]
            records = records or [r for r in traj.world_states.final.get(name) or [] if isinstance(r, dict)]
            if not records:
                continue
            words = words_of(name)
            nouns = {" ".join(words), " ".join([*words[:-1], singular(words[-1])])} if words else set()
            self.collections[name] = Collection(name, _key_field(name, records), nouns, _state_fields(records, enums))
            self.fields[name] = {k for r in records for k in r}
        self.records: dict[str, Rec] = {}
        for s in states:
            for name, coll in self.collections.items():
                for r in s.get(name) or []:
                    if isinstance(r, dict) and coll.key and r.get(coll.key) is not None:
                        self._version(str(r[coll.key]), name, r)
        for res in self.results:
            for d in json_objects(res.doc):
                key, name = self._key_of(d)
                if key is not None:
                    rec = self._version(key, name, d, extend=False)
                    rec.shown = True

    def _key_of(self, d: dict[str, Any]) -> tuple[str | None, str | None]:
        """The record a result's object is: of the collections whose key it holds (an order holds its customer's id
        too), the one whose fields it shares most."""
        best: tuple[int, str, str] | None = None
        for name, coll in self.collections.items():
            if coll.key and d.get(coll.key) is not None:
                shared = len(set(d) & self.fields.get(name, set())) + (coll.key == f"{singular(name)}_id")
                if best is None or shared > best[0]:
                    best = (shared, str(d[coll.key]), name)
        if best is not None:
            return best[1], best[2]
        for k, v in d.items():
            if (k == "id" or k.endswith("_id")) and isinstance(v, str | int) and not isinstance(v, bool):
                return str(v), None
        return None, None

    def _version(self, key: str, name: str | None, record: dict[str, Any], extend: bool = True) -> Rec:
        """Add a version of a record: a world state's (`extend`), or a result's, whose fields the world lacks (a crawled
        tool's extras) join the latest version."""
        rec = self.records.get(key)
        if rec is None:
            rec = self.records[key] = Rec(key, name, [dict(record)])
        elif extend:
            if rec.versions[-1] != record:
                rec.versions.append(record)
        else:
            if extra := {k: v for k, v in record.items() if k not in rec.now}:
                rec.versions[-1] = {**rec.now, **extra}
            if any(rec.now.get(k) != v for k, v in record.items() if k in rec.now) and record not in rec.seen:
                rec.seen.append(dict(record))
        return rec

    @cached_property
    def just_written(self) -> dict[str, tuple[Rec, dict[str, Any]]]:
        """The records the writes since the user's last message returned (key -> the record and the result's object):
        what a confirmation reply speaks of."""
        last_user = max((i for i, m in enumerate(self.traj.messages[: self.at]) if m["role"] == "user"), default=-1)
        out: dict[str, tuple[Rec, dict[str, Any]]] = {}
        for r in self.writes:
            for doc in json_objects(r.doc)[:1] if r.at > last_user else []:
                key, _ = self._key_of(doc)
                if key in self.records:
                    out[key] = (self.records[key], doc)
        return out

    # ------------------------------------------------------------------ what was said

    @cached_property
    def today(self) -> dt.date | None:
        """Today's date as the system prompt gives it ("Today is Tuesday, May 12, 2026."); None where it gives none (a
        count of days from today is then not read)."""
        m = TODAY_IS.search(self.system)
        for v in extract(m.group(1)) if m else []:
            for form in sorted(v.forms):
                if form.startswith("date:"):
                    return dt.date.fromisoformat(form[5:])
        return None

    @cached_property
    def said(self) -> list[str]:
        """Every text before the reply: system prompt, user messages, tool results, the agent's call arguments."""
        return [self.system, *self.user, *(r.content for r in self.results), *self.arguments]

    @cached_property
    def world_text(self) -> str:
        """Every value of every record the world held before the reply, as `bare` text: what a reply may know of
        the world beyond what the conversation showed (the other card of an account, ··5991)."""
        return " ".join(
            bare(str(x))
            for r in self.records.values()
            for v in r.versions + r.seen
            for x in v.values()
            if x is not None
        )

    @cached_property
    def seen(self) -> Seen:
        return Seen(self.said, rules=f"{self.system} {self.tool_text}", asked=" ".join(self.user))

    @cached_property
    def said_lower(self) -> str:
        return " ".join(self.said).lower().replace("_", " ")

    @cached_property
    def user_lower(self) -> str:
        return " ".join(self.user).lower().replace("_", " ")

    @cached_property
    def stems(self) -> set[str]:
        """The stems of every word said before the reply and of the tools' names, descriptions and enums."""
        text = " ".join([*self.said, self.tool_text])
        return {stem(w) for w in words_of(text)}

    @cached_property
    def prefixes(self) -> set[str]:
        """The first six letters of every word of seven or more said before the reply (one family of words)."""
        text = " ".join([*self.said, self.tool_text])
        return {w[:6] for w in words_of(text) if len(w) >= 7}

    @cached_property
    def shown_keys(self) -> set[str]:
        """Keys of the records a result showed, the user named or a call's arguments named."""
        text = " ".join([*self.user, *self.arguments])
        named = {k for k in self.records if len(k) >= 3 and re.search(rf"(?<![\w-]){re.escape(k)}(?![\w-])", text)}
        return {k for k, r in self.records.items() if r.shown} | named

    @cached_property
    def names(self) -> dict[str, Rec]:
        """Values that name one shown record alone, as people name it (a card's last four digits "1077", a task's
        name "transform_sales", a person's name): held by that record and by no other of its collection."""
        seen: dict[tuple[str | None, str], list[Rec]] = {}
        for rec in self.in_play():
            for v in rec.now.values():
                text = scalar_text(v)
                if text and len(text) >= 3 and text not in self.records and re.search(r"[\dA-Z_]", text):
                    seen.setdefault((rec.collection, text), []).append(rec)
        return {
            text: recs[0]
            for (_, text), recs in seen.items()
            if len(recs) == 1 and not text.isdigit() or (len(recs) == 1 and text.isdigit() and len(text) == 4)
        }

    def in_play(self, collection: str | None = None) -> list[Rec]:
        """The records the conversation has shown or named, of one collection or all."""
        shown = self.shown_keys  # a set: read in the records' own order, so a reason names the same record every run
        return [r for k, r in self.records.items() if k in shown and (collection is None or r.collection == collection)]

    @cached_property
    def last_records(self) -> list[Rec]:
        """The records of the most recent result that showed any (what "it" most likely refers to)."""
        for res in reversed(self.results):
            keys = [self._key_of(d)[0] for d in json_objects(res.doc)]
            found = [self.records[k] for k in keys if k in self.records]
            if found:
                return found
            if res.call.arguments and isinstance(res.call.arguments, dict):
                named = [self.records[str(v)] for v in res.call.arguments.values() if str(v) in self.records]
                if named:
                    return named
        return []

    @cached_property
    def listed(self) -> list[tuple[str | None, list[dict[str, Any]]]]:
        """Each list of records a successful result held, with the collection of its records (None: unknown)."""
        out = []
        for res in self.results:
            if not res.ok:
                continue
            for rows in listed_rows(res.doc):
                names = Counter(self._key_of(r)[1] for r in rows)
                out.append((names.most_common(1)[0][0] if names else None, rows))
        return out

    @cached_property
    def counts(self) -> set[int]:
        """The counts the results hold without a number: each list's length and how many of its records share (or do
        not share) a field's value ("2 of them are pending"); the count/total fields; each collection's records
        shown."""
        out: set[int] = set()
        for _, rows in self.listed:
            out.add(len(rows))
            for k in {k for r in rows for k in r}:
                shared = Counter(json.dumps(r.get(k), sort_keys=True) for r in rows).values()
                out |= {*shared, *(len(rows) - n for n in shared)}
        for res in self.results:
            for d in json_objects(res.doc):
                out |= {v for k, v in d.items() if isinstance(v, int) and not isinstance(v, bool)}
        for name in self.collections:
            out.add(len(self.in_play(name)))
        return out

    def totals_of(self, collection: str | None) -> set[int]:
        """The counts of a whole of a kind (all kinds when None): its lists' lengths, its records shown, the
        count/total fields (what "4 projects in total" must be; a share of a list, "2 of them", is in `counts`)."""
        out = {len(rows) for c, rows in self.listed if collection is None or c == collection}
        for res in self.results:
            for d in json_objects(res.doc):
                out |= {
                    v
                    for k, v in d.items()
                    if isinstance(v, int) and not isinstance(v, bool) and re.search(r"count|total|number|^n_|size", k)
                }
        names = self.collections if collection is None else [collection]
        return out | {len(self.in_play(name)) for name in names}

    def key_by_digits(self, number: str) -> str | None:
        """The record key whose digits alone a number is ("7602" for "ord-7602"): written so, it names no record."""
        digits = re.sub(r"[^0-9]", "", number)
        if len(digits) < 3:
            return None
        for key in self.shown_keys:
            if re.fullmatch(r"[A-Za-z]+[-_]?" + digits, key):
                return key
        return None

    def record(self, key: str) -> Rec | None:
        return self.records.get(key)

    def collection_of_noun(self, noun: str) -> str | None:
        noun = noun.lower().replace("-", " ")
        for name, coll in self.collections.items():
            if noun in coll.nouns or singular(noun) in coll.nouns:
                return name
        return None

    @cached_property
    def state_words(self) -> dict[str, set[tuple[str, str]]]:
        """Each state word as a reply writes it ("checked in"), with the (collection, field) pairs that use it."""
        out: dict[str, set[tuple[str, str]]] = {}
        for name, coll in self.collections.items():
            for f, values in coll.state_fields.items():
                for v in values:
                    out.setdefault(v.replace("_", " ").replace("-", " ").lower(), set()).add((name, f))
        return out

    def unresolved_failures(self) -> list[Result]:
        """The failed calls no later call of the same tool got past before the reply."""
        out = []
        for i, r in enumerate(self.results):
            if r in self.failures and not any(x.ok and x.call.name == r.call.name for x in self.results[i + 1 :]):
                out.append(r)
        return out

    def failed_before(self) -> bool:
        return bool(self.failures)

    def wrote(self) -> bool:
        return bool(self.writes)


def _enums_by_parameter(tools: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Each tool parameter's enum values, by the parameter's name (`status`: pending, shipped, ...)."""
    out: dict[str, set[str]] = {}
    stack: list[Any] = [(t.get("function") or t).get("parameters") or {} for t in tools]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for name, spec in (node.get("properties") or {}).items():
                if isinstance(spec, dict):
                    values = [v for v in spec.get("enum") or [] if isinstance(v, str)]
                    values += [
                        v for alt in spec.get("anyOf") or [] if isinstance(alt, dict) for v in alt.get("enum") or []
                    ]
                    if values:
                        out.setdefault(name, set()).update(map(str, values))
            stack.extend(v for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend(node)
    return out


def _share(a: Decimal, b: Decimal) -> Decimal | None:
    """a as a percentage of b, to one decimal; None when that has more digits than Decimal holds (a run's judge
    stopped on a ratio of a phone-number-sized value to a fraction: quantize raised InvalidOperation)."""
    try:
        return (a / b * 100).quantize(Decimal("0.1"))
    except InvalidOperation:
        return None
