"""The claim layer: each factual claim of a reply, checked against the conversation and the executed world.

A reply is cut into clauses (`text.py`); from each clause that states something (not a question, a supposition, a
plan or advice) the claims are read, and each is classified against the `Evidence` of that moment:

- **value**: an id, amount, date, time or email the reply states. Supported when the conversation showed it, or
  plain arithmetic on what it showed makes it (a total, a difference, a share); contradicted when it names a record
  the world does not have (an id shaped like the world's keys), when a weekday does not fall on the date beside it,
  or when the clause speaks of records whose same kind of field holds another value; else unverifiable.
- **attribution**: "<field> is <value>" (also "Field: value" in a list or a table row): contradicted when the value
  is another field's of the records spoken of ("the owner is rvw-6702", the reviewer) or when those records' field
  holds another value; supported when one of them holds it (now or before the reply).
- **count**: "3 orders", "a total of 4": supported by a list's length, how many of its records share a value, a
  number a result gave, the records of that kind shown; contradicted when lists of that kind were shown and none
  gives it.
- **action**: "I've cancelled", "the refund has been issued", "we sent", "I let Dr Singh know". Supported by a call
  before the reply that did it: a write that went through whose tool is named by a verb of the same group (cancel,
  void, revoke ...), or whose description or written values use one, or any write for a verb of change in general
  ("updated", "processed"); a verb of reading by any call that went through; a state the records hold ("has been
  shipped", when it has); what the user said happened. Contradicted when the agent claims it did it, or a perfect
  or "now" says it was just done, and no call did; a record's past event ("was cancelled") whose state word the
  record never held.
- **state**: "the order is pending", "status: cancelled", "your loan is now active": supported when a record spoken
  of holds that state (now; with a past tense, at any time before the reply); contradicted when none does. "The new
  X is Y" before any change is contradicted.
- **failure**: "there was an error", "the system is down", "please try again later": supported when a call before
  failed or a fault was injected (or the user said so); contradicted otherwise. "I couldn't find any ..." is supported
  by a lookup that found nothing, contradicted before any call.
- **promise** (read only under the `strict` policy): what the reply says the agent will do or can do, tells the user
  to try, or says the world will do next ("I'm going to create a new member", "I can add one", "please try to find it
  again", "it will be closed in 24 hours"): supported by a call after the reply that does it (a plan kept), by a tool
  offered that does what is offered, by a call before that did the act that will follow; "try again" by a failure
  still unresolved. The plain words of helping ("I'll be happy to help", "I can help with that") are style.
- **words** (read only under the `strict` policy): the clause's words that no message, result or tool said and that
  are not the plain words of helping (`words.ASSISTANT_WORDS`): "the book is a fantasy novel".

Style is not a claim: markdown, courtesy, empathy, "before proceeding, please confirm", advice to contact support, a
city named beside its airport code: none of these is read as a fact (a name no record holds is at most
unverifiable, never contradicted).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any, Literal

from worldsmith.judge.answers import Value, bare, extract
from worldsmith.judge.evidence import DAY_COUNT_WORDS, Evidence, Rec, is_number, singular, stem, words_of
from worldsmith.judge.text import Clause, clauses, marked_lines
from worldsmith.judge.words import (
    ACTION_GROUPS,
    ASSISTANT_STEMS,
    ASSISTANT_WORDS,
    BEYOND_A_FIELD,
    GENERAL_STEMS,
    IRREGULAR,
    NEUTRAL_STEMS,
    READ_STEMS,
    groups_of,
    lemma_stem,
)
from worldsmith.records import Trajectory

ClaimKind = Literal["value", "attribution", "count", "action", "state", "failure", "promise", "words"]
ClaimStatus = Literal["supported", "contradicted", "unverifiable"]


@dataclass(frozen=True)
class Claim:
    message: int  # the reply's index in the messages
    kind: str
    status: str
    text: str  # the clause it was read from
    why: str


NUMBER_WORDS = {
    **{"no": 0, "zero": 0, "one": 1, "a single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6},
    **{"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "both": 2},
}
WEEKDAYS = {d.lower(): i for i, d in enumerate(calendar.day_name)} | {
    d.lower(): i for i, d in enumerate(calendar.day_abbr)
}
# what becomes possible once a deadline has passed: "past its SLA from June 20", "the earliest would be April 16"
PAST_DEADLINE = re.compile(r"\b(?:past|from|after|eligible|earliest|onwards?|starting|once)\b")
TIME_UNITS = re.compile(
    r"^(?:second|minute|hour|day|week|month|year|business|working|calendar|time|percent|night|mile|km|kg|lb|"
    r"item|step|option|way|thing|question|attempt|point|star|character|digit|letter|page|line|word)s?$"
)
LINK = re.compile(r"\bhttps?://\S+|\bwww\.\S+")
EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")

# ------------------------------------------------------------------ entry point


def read_claims(traj: Trajectory, at: int, words: bool = True) -> list[Claim]:
    """Every claim of the agent's text reply at message `at`, classified; `words`: read the unsourced words too
    (the `strict` policy). Supported claims are returned too (the verdict keeps the others)."""
    reply = traj.messages[at].get("content") or ""
    if not reply.strip():
        return []
    ev = Evidence(traj, at)
    out: list[Claim] = []
    by_sentence: dict[tuple[str, str], list[_Reader]] = {}
    stated: list[Decimal] = []
    for clause in clauses(reply):
        read = _Reader(ev, at, clause, stated)
        read.values()
        if not (clause.question or clause.conditional):
            read.failures()
            read.ages()
        if clause.asserts or clause.reason:
            read.actions()
            read.states()
            read.attributions()
            read.counts()
            read.days()
            read.swaps()
            read.superlatives()
        if words and not (clause.question or clause.conditional):
            read.promises()
        if words:
            read.words()
        out += read.found
        by_sentence.setdefault((clause.line, clause.sentence), []).append(read)
    if words:  # strict: a statement must say something the conversation shows, or be the plain words of helping
        for (_, sentence), reads in by_sentence.items():
            if not any(r.anchored() for r in reads) and any(r.statement() for r in reads):
                out.append(Claim(at, "words", "unverifiable", sentence[:200], "states nothing the conversation shows"))
    return out


def reply_claims(traj: Trajectory, words: bool = True) -> list[Claim]:
    """The claims of every text reply of the agent's (an earlier reply is training data too)."""
    out: list[Claim] = []
    for i, m in enumerate(traj.messages):
        if m["role"] == "assistant" and (m.get("content") or "").strip():
            out += read_claims(traj, i, words)
    return out


# ------------------------------------------------------------------ the reader of one clause


class _Reader:
    def __init__(self, ev: Evidence, at: int, clause: Clause, stated: list[Decimal] | None = None):
        self.ev, self.at, self.clause = ev, at, clause
        self.stated = [] if stated is None else stated  # the amounts the reply stated so far, shown or computed
        self.text = clause.text
        self.low = clause.text.lower()
        self.found: list[Claim] = []

    def add(self, kind: str, status: str, why: str) -> None:
        self.found.append(Claim(self.at, kind, status, self.text[:200], why))

    def anchored(self) -> bool:
        """Whether the clause says something the conversation shows: a claim found supported, a value, key or
        state the results or the user's words hold."""
        if any(c.status == "supported" for c in self.found):
            return True
        ev, low = self.ev, self.low
        if any(ev.seen.has(v) for v in extract(self.text)) or _keys_in(self.text, ev):
            return True
        return any(
            len(x) >= 3 and re.search(rf"(?<![\w-]){re.escape(x)}(?![\w-])", low)
            for r in ev.in_play()
            for x in (
                re.sub(r"[_]+", " ", str(v).lower()) for c in r.current() for v in c.values() if isinstance(v, str)
            )
        )

    def statement(self) -> bool:
        """Whether the clause states something beyond the plain words of helping (a question, a plan, advice or
        courtesy made only of them is style)."""
        # what the user can or cannot do now is a claim about the world too ("You can't access it", "You're now ready
        # to transfer"); an offer or advice of the agent's ("I can ...", "you can contact support") is not
        told = bool(YOU_CAN.match(self.low)) and not self.clause.question and not self.clause.conditional
        if not (self.clause.asserts or told):
            return False
        words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]*", _without_values(self.text))]
        return any(w not in ASSISTANT_WORDS and stem(w) not in ASSISTANT_STEMS for w in words)

    # -------------------------------------------------------------- which records the clause speaks of

    def subjects(self, collections: set[str] | None = None) -> list[Rec]:
        """The records the clause speaks of: those its ids name, else those its line's ids name (a list item, a table
        row), else those of the kind it names that the conversation has shown, else the last ones a result showed.
        A kind named beside another record ("the WS308 booking": a flight's number) is the records of that kind that
        refer to it; a kind named with a word one of its fields holds ("your debit card") is those that hold it."""
        ev = self.ev
        nouns = {name for name, coll in ev.collections.items() if _names_any(self.low, coll.nouns)}
        # a table row or a list item speaks of its record; a prose line's other sentences speak of their own
        for text in (self.text, self.clause.line) if self.clause.structured else (self.text,):
            row = text is self.clause.line
            named = _cell_records(text, ev) if row else []
            keys = _row_keys(text, ev) if row else _keys_in(text, ev)
            named = named or [ev.records[k] for k in keys] or _named_by_value(text, ev)
            if named:
                named = self._of_kind(named, nouns)
                return [r for r in named if collections is None or r.collection in collections] or named
        if collections is not None and nouns:
            nouns &= collections
        if nouns:
            recs = self._qualified([r for r in ev.in_play() if r.collection in nouns])
            return recs or []  # a kind named, none of its shown records picked: no record to hold it against
        recs = ev.last_records or ev.in_play()
        return [r for r in recs if collections is None or r.collection in collections]

    def _of_kind(self, named: list[Rec], nouns: set[str]) -> list[Rec]:
        """The records of a kind the clause names that refer to the `named` ones (when those are of another kind)."""
        if not nouns or any(r.collection in nouns for r in named):
            return named
        referring = [r for r in _referring(named, self.ev) if r.collection in nouns]
        return referring or named

    def _qualified(self, recs: list[Rec]) -> list[Rec] | None:
        """Of the records of the kind named, those a word before the noun picks ("your debit card": card_type debit);
        None when the word picks another value of that field and no shown record holds it (it speaks of one unshown)."""
        if not recs:
            return None
        coll = self.ev.collections.get(recs[0].collection or "")
        words = set(re.findall(r"[a-z]+", self.low))
        for f, values in (coll.state_fields if coll else {}).items():
            said = {v for v in values if v.lower() in words}
            if said and len(values) > 1:
                held = [r for r in recs if str(r.now.get(f, "")).lower() in said]
                return held or None
        return recs

    # -------------------------------------------------------------- values

    def values(self) -> None:
        ev, text = self.ev, self.text
        for v in extract(text):
            if v.kind == "number" and not (v.money or v.places or abs(int(_num(v))) >= 100):
                continue  # a small bare number is a count (read by counts) or a measure ("5 business days")
            if v.kind == "date":
                self._weekday(v)
                if self.clause.asserts and (done := self._dated_by_verb(v)):
                    self.add("value", "contradicted", done)
                    continue
            # the user's words, or what a call looked up ("my first lookup of 8806 didn't match")
            tried = bool(re.search(rf"(?<![\w-]){re.escape(v.raw)}(?![\w-])", " ".join([*ev.user, *ev.arguments])))
            alone = not re.match(r"[-/.\w]", text[v.start + len(v.raw) : v.start + len(v.raw) + 1] or " ") and not (
                v.start and text[v.start - 1] in "-/._"
            )  # not a part of a longer code ("978-1-2669-4701")
            if v.kind == "number" and not v.money and alone and not tried and (key := ev.key_by_digits(v.raw)):
                self.add("value", "contradicted", f"{v.raw!r} is {key} without its prefix: it names no record")
                continue
            if v.kind in ("date", "time") and self.clause.asserts and not tried and (mine := self._written_field(v)):
                # the confirmation of a write gives the written record's date or time: said otherwise, it is wrong
                # even where the value shows elsewhere (9:00 in the clinic's hours, for the 9:30 just booked)
                rec, name, held = mine
                self.add("value", "contradicted", f"{v.raw!r}: {rec.key}'s {name}, just written, is {held!r}")
                continue
            # (the user's own figure too: "$80.00 refunded" where the refund written is $65.00)
            if v.money and not (self.clause.question or self.clause.conditional) and (wrong := self._written_amount(v)):
                self.add("value", "contradicted", wrong)
                continue
            if ev.seen.has(v, text[max(0, v.start - 20) : v.start]):
                if v.money:
                    self.stated.append(abs(_num(v)))
                continue
            computed = (v.money or v.kind in ("date", "time")) and ev.seen.computes(
                v, self.stated, past=bool(PAST_DEADLINE.search(self.low))
            )
            if v.kind == "id" and not tried and not re.search(r"[A-Za-z]", v.raw) and (key := ev.key_by_digits(v.raw)):
                self.add("value", "contradicted", f"{v.raw!r} is {key} without its prefix: it names no record")
                continue
            if v.kind == "id":
                prefix = re.match(r"[a-z]+(?=[-_]?\d)", v.raw.lower())
                shapes = {
                    re.match(r"[a-z]+", k.lower()).group(0) for k in ev.records if re.match(r"[a-z]+[-_]\d", k.lower())
                }
                if (
                    self.clause.asserts
                    and prefix
                    and prefix.group(0) in shapes
                    and v.raw.lower().rstrip(".") not in {k.lower() for k in ev.records}
                ):
                    self.add("value", "contradicted", f"{v.raw!r} names no record: the world has no such id")
                elif self._made_up(v, tried):
                    self.add("value", "contradicted", f"{v.raw!r}: no message shows it and no record holds it")
                else:
                    self.add("value", "unverifiable", f"{v.raw!r} appears nowhere before the reply")
                continue
            # an unseen amount said of records whose amount field holds another: wrong. Not a date or time (a deadline,
            # "today", a date computed from one shown) nor a total, average or share (arithmetic over what was shown)
            field = None
            if v.kind == "number" and not AGGREGATE.search(self.low):
                field = self._field_of_kind(v)
            elif v.kind == "time" and not RELATIVE_TIME.search(self.low):
                field = self._field_of_kind(v, by_noun=True)  # "your appointment is at 3:30 pm" (it is at 2:30)
            elif v.kind == "date":
                field = self._labelled_field(v)  # "the new due date is Monday, June 8" (due_date is June 7)
            if field is None and v.kind == "number" and v.money and not tried:
                field = self._written_field(v)  # "Done: $45.00 on Thursday, June 25" for the $54.00 just paid
            if self.clause.asserts and field is not None:
                rec, name, held = field
                self.add(
                    "value",
                    "contradicted",
                    f"{v.raw!r} appears nowhere before the reply; {rec.key}'s {name} is {held!r}",
                )
            elif computed:
                if v.money:
                    self.stated.append(abs(_num(v)))
            elif (v.money or v.kind == "time" or (v.kind == "date" and ev.today)) and not tried:
                # an amount, date or time is a fact of the world: one no result, user or policy gives and no sum,
                # difference, product or date arithmetic over what they give yields was made up. A date only where
                # the system prompt gives today's (without it, one counted from today cannot be checked)
                self.add("value", "contradicted", f"{v.raw!r}: no message shows it and nothing shown computes it")
            elif self._made_up(v, tried):
                self.add("value", "contradicted", f"{v.raw!r}: no message shows it and no record holds it")
            else:
                self.add("value", "unverifiable", f"{v.raw!r} appears nowhere before the reply")
        for link in LINK.findall(text):
            if link.rstrip(".,;:)").lower() not in ev.said_lower:
                self.add("value", "unverifiable", f"{link.rstrip('.,;:)')!r}: a link no message shows")
        for email in EMAIL.findall(text):
            if email.lower() not in ev.said_lower:
                held = [r for r in self.subjects() for k, x in r.now.items() if "email" in k and isinstance(x, str)]
                status = "contradicted" if held and self.clause.asserts else "unverifiable"
                self.add("value", status, f"{email!r} appears nowhere before the reply")

    def _written_amount(self, v: Value) -> str | None:
        """An amount given right beside the name of a field a write since the user's last message returned ("a full
        refund of $249.00", "$80.00 refunded", "a late fee of $1.75"), when that result holds another amount there and
        no record shown holds this one in a field of that name: the amount of another field (what was paid, for what
        was refunded) or a miscount. The name is the field's last word beside the amount, its other words anywhere
        in the clause ("fare difference"); an amount field named only "amount" is named by its record's kind ("the
        refund rfd-1 for $80.00")."""
        if AGGREGATE.search(self.low):
            return None  # "Total refund: $223.50", of two bookings
        before, after = self.low[: v.start], self.low[v.start + len(v.raw) :]
        amounts = [x for x in extract(self.text) if x.money and x.start != v.start]
        for rec, doc in self.ev.just_written.values():
            others = [r for r in self.ev.in_play() if r.collection == rec.collection and r is not rec]
            for f, held in doc.items():
                # an amount as the worlds keep one (a decimal: 6 days late is a count)
                if not isinstance(held, float) or _holds_value_in(held, v):
                    continue
                if any(_holds_value_in(r.now.get(f), x) for r in others for x in amounts):
                    continue  # "with the earlier $20.00, that's $80.00 refunded": the clause adds another's
                words = [w for w in f.lower().split("_") if len(w) >= 3]
                if not words or any(w not in self.low for w in words[:-1]):
                    continue
                heads = sorted(self._nouns(rec)) if words[-1] in GENERIC_AMOUNTS else [words[-1]]
                for head in heads:
                    label = rf"\b{re.escape(head)}(?:s|ed|d)?\b"
                    named = r"(?:\s+[\w-]+){0,2}?\s+(?:of|for|is|was|will be|comes to)"  # "refund rfd-1 for"
                    if not (re.search(label + rf"(?:{named})?[:\s]*$", before) or re.match(r"\s+" + label, after)):
                        continue
                    if any(_holds_value_in(r.now.get(f), v) for r in self.ev.in_play()):
                        break  # another record's (an earlier refund's amount)
                    return f"{v.raw!r}: {rec.key}'s {f.replace('_', ' ')}, just written, is {held!r}"
        return None

    def _dated_by_verb(self, v: Value) -> str | None:
        """A date said of an event by the verb its records' date field is named for ("requested on March 19":
        `requested_on`; "opened on", "placed on", "posted on"), where no record in play holds that date there: the
        date of another event or record (the order's placed date given as the refund's)."""
        m = re.search(r"\b([a-z]+ed)\s+(?:on|at)\s+(?:[a-z]+day,?\s+)?(?:the\s+)?$", self.low[: v.start])
        if m is None:
            return None
        verb = stem(m.group(1))
        holders = [
            (r, f) for r in self.ev.in_play() for f in r.now if f.lower() != "id" and stem(f.split("_")[0]) == verb
        ]
        dated = [(r, f) for r, f in holders if _same_kind(v, r.now[f])]
        if not holders and (today := self.ev.today):
            # no field dates it, but a call of this episode brought the record spoken of to that state: today
            reached = [
                r
                for r in self.subjects()
                for f, x in r.now.items()
                if _state_stem(x) == verb and _state_stem(r.versions[0].get(f)) != verb
            ]
            if reached and not v.forms & {f"date:{today.isoformat()}", f"day:{today.isoformat()[5:]}"}:
                return f"{v.raw!r}: {reached[0].key} was {m.group(1)} today ({today}), by this episode's call"
            return None
        if not dated or any(_holds_value_in(x, v) for r, f in dated for x in r.values(f, ever=True)):
            return None
        rec, f = dated[0]
        return f"{v.raw!r}: no record was {m.group(1)} then; {rec.key}'s {f.replace('_', ' ')} is {rec.now[f]!r}"

    def _made_up(self, v: Value, tried: bool) -> bool:
        """Whether a code or a number of three or more digits (a card's last four, a gate, a shelf, an extension),
        stated as a fact, is one no message shows and no record of the world holds: details are a record's fields,
        and one no record has was made up."""
        code = v.kind == "id" or (v.kind == "number" and not v.money and abs(_num(v)) >= 100 and not v.places)
        if not code or not self.clause.asserts or tried or bare(v.raw) in self.ev.world_text:
            return False
        # not a key misspelt ("order-6401" for ord-6401) or dressed ("customer-cus-2103")
        return not (
            v.kind == "id" and (self.ev.key_by_digits(v.raw) or any(bare(k) in bare(v.raw) for k in self.ev.records))
        )

    def _weekday(self, v: Value) -> None:
        m = re.search(r"\b([A-Za-z]{3,9})\.?,?\s*(?:the\s+)?$", self.text[: v.start])
        day = m and WEEKDAYS.get(m.group(1).lower())
        if day is None or not m:
            return
        for form in v.forms:
            if form.startswith("date:"):
                y, mo, d = map(int, form[5:].split("-"))
                if calendar.weekday(y, mo, d) != day:
                    self.add(
                        "value",
                        "contradicted",
                        f"{form[5:]} is a {calendar.day_name[calendar.weekday(y, mo, d)]}, not a {m.group(1)}",
                    )
            elif form.startswith("day:"):
                mo, d = map(int, form[4:].split("-"))
                years = {int(f[5:9]) for f in self.ev.seen.forms if f.startswith("date:")}
                if years and all(calendar.weekday(y, mo, d) != day for y in years):
                    self.add("value", "contradicted", f"{mo:02d}-{d:02d} falls on no {m.group(1)} of the years seen")

    def days(self) -> None:
        """A count of days from today said beside a date ("Saturday, May 16 | in 4 days", "due May 3, 9 days overdue",
        "tomorrow (May 13)"), checked against today's date as the system prompt gives it; nothing is read where it
        gives none, or where the clause (else its table row or list item) holds no date or more than one."""
        today = self.ev.today
        if today is None:
            return
        for m in DAYS_FROM_TODAY.finditer(self.low):
            word = m.group("word") or m.group("word2")
            if word:
                count, sign = {"today": 0, "tomorrow": 1, "yesterday": -1}[word], 1
                dates = _dates_in(m.group(0), today)  # right beside its date: "tomorrow, May 13", "May 13 (today)"
            else:
                n = m.group("n1") or m.group("n2") or m.group("n3") or m.group("n4")
                count = int(n) if n.isdigit() else DAY_COUNT_WORDS[n]
                sign = -1 if (m.group("n2") or m.group("n3")) else 1  # "N days ago", "N days overdue", "overdue by N"
                dates = _dates_in(self.text, today) or (
                    _dates_in(self.clause.line, today) if self.clause.structured else []
                )
            if len(set(dates)) != 1:
                continue
            gap = (dates[0] - today).days
            said = m.group(0).strip(" ,()")
            if gap == sign * count:
                self.add("value", "supported", f"{said!r}: {dates[0]} is {_days(gap)} from today ({today})")
            else:
                where = "before" if gap < 0 else "after"
                self.add("value", "contradicted", f"{said!r}: {dates[0]} is {_days(gap)} {where} today ({today})")

    def ages(self) -> None:
        """A record's age in days ("Age: 4 days", "8 days old"), checked against today's date and the date the record
        was made (opened, placed, created): read in any clause but a question or a supposition (a ticket's subject
        may hold a modal: "Cannot access the share (opened Sep 1, 8 days old)")."""
        today = self.ev.today
        if today is None:
            return
        for m in AGE.finditer(self.low):
            n = m.group("a") or m.group("b")
            count = int(n) if n.isdigit() else DAY_COUNT_WORDS[n]
            made = [
                (r, f, d)
                for r in self.subjects()
                for f, x in r.now.items()
                if any(lemma_stem(w) in MAKING_STEMS for w in f.split("_")) and (d := _dates_in(str(x), today))
            ]
            if len(made) != 1:
                continue  # which record, or which of its dates, the age counts from is not known
            rec, f, (born, *_) = made[0]
            if (today - born).days != count:
                said = m.group(0).strip()
                self.add(
                    "value",
                    "contradicted",
                    f"{said!r}: {rec.key}'s {f.replace('_', ' ')} {born} is {_days((today - born).days)} "
                    f"before today ({today})",
                )

    def superlatives(self) -> None:
        """A superlative ("the largest was Corner Grocery ($142.00)"): the record it names, with the amount it holds,
        checked against the other records of its kind the reply itself lists (what "largest" ranges over: the rows
        the user asked for, not every record a result showed)."""
        m = SUPERLATIVE.search(self.low)
        if m is None:
            return
        ev = self.ev
        named = {r.key: r for r in [*(ev.records[k] for k in _keys_in(self.text, ev)), *_named_by_value(self.text, ev)]}
        if len(named) != 1:
            return
        (rec,) = named.values()
        amounts = [v for v in extract(self.text) if v.kind == "number" and v.money]
        fields = [f for f, x in rec.now.items() for v in amounts if _holds_value_in(x, v)]
        if len(set(fields)) != 1:
            return  # which of its amounts the superlative ranks is not said
        field = fields[0]
        reply = ev.traj.messages[self.at].get("content") or ""
        listed = {  # the rows of its table or list: a record the prose sets aside ("WS830 is cheaper, but full") is not
            r.key: r
            for line, row in marked_lines(reply)
            if row
            for r in [*(ev.records[k] for k in _keys_in(line, ev)), *_named_by_value(line, ev)]
            if r.collection == rec.collection and is_number(r.now.get(field))
        }
        if len(listed) < 2 or rec.key not in listed:
            return
        rank = max if m.group("most") else min
        best = rank(listed.values(), key=lambda r: r.now[field])
        if best.now[field] != rec.now[field]:
            self.add(
                "count",
                "contradicted",
                f"{m.group(0)!r}: of the {len(listed)} listed, the {m.group(0)} {field.replace('_', ' ')} is "
                f"{best.key}'s {best.now[field]}, not {rec.key}'s {rec.now[field]}",
            )

    def _field_of_kind(self, v: Value, by_noun: bool = False) -> tuple[Rec, str, Any] | None:
        """A field of the records spoken of that holds a value of the same kind (a date for a date, an amount for an
        amount): the reply's unseen value is then that field's, and wrong."""
        named = (
            _keys_in(self.clause.line, self.ev)
            or (self.clause.structured and _named_by_value(self.clause.line, self.ev))  # "WS308, ... at 1:30 PM"
            or (by_noun and self._names_a_kind())
        )
        recs = self.subjects() if named else []
        for rec in recs:
            for name, held in rec.now.items():
                labelled = by_noun or _label_names(words_of(self.low), name, held, self._nouns(rec), loose=True)
                if _same_kind(v, held) and labelled:
                    return rec, name, held
        return None

    def _written_field(self, v: Value) -> tuple[Rec, str, Any] | None:
        """A field of a record the calls since the user's last message wrote (booked, moved, paid) that holds a value
        of the same kind, when the clause also states another value that record holds: a confirmation of that write,
        whose unseen value is that field's, and wrong. Not a deadline or a time relative to it ("cancel by June 25",
        "arrive 15 minutes early"); the caller leaves out a value the user gave or a call tried ("the 2:30 slot was
        taken, so I took 3:00")."""
        ev = self.ev
        if RELATIVE_TIME.search(self.low) or v.kind == "number" and AGGREGATE.search(self.low):
            return None
        if len(ev.just_written) != 1:
            return None  # one record written, or which one the clause confirms is not known
        ((rec, doc),) = ev.just_written.values()
        if set(_keys_in(self.text, ev)) - {rec.key} or any(_holds_value(r, v) for r in ev.in_play()):
            return None  # the clause speaks of another record too, or the value is another record's
        others = [x for x in extract(self.text) if x.start != v.start and x.kind in ("date", "time", "number")]
        if not any(_holds_value(rec, x) for x in others):
            return None  # nothing in the clause says it is that record
        for name, held in rec.now.items():
            if _same_kind(v, held) and name in doc:
                return rec, name, held
        return None

    def _labelled_field(self, v: Value) -> tuple[Rec, str, Any] | None:
        """The field a label right before a date names ("the new due date is", "Due:"), when the records spoken of
        hold another date there."""
        m = DATE_LABEL.search(self.low[: v.start])
        if m is None:
            return None
        label = [w for w in words_of(m.group("label")) if w not in LABEL_STOP]
        for rec in self.subjects():
            for name, held in rec.now.items():
                if label and _same_kind(v, held) and _label_names(label, name, held, self._nouns(rec)):
                    return rec, name, held
        return None

    def _names_a_kind(self) -> bool:
        return any(_names_any(self.low, c.nouns) for c in self.ev.collections.values())

    # -------------------------------------------------------------- failures

    def failures(self) -> None:
        ev, low = self.ev, self.low
        technical = TECHNICAL.search(low)
        retry = RETRY.search(low)
        if retry and not technical:
            # "try again later": only while a failure is unresolved (no later call of that tool went through)
            if any(_transient(r) for r in ev.unresolved_failures()) or USER_FAILURE.search(ev.user_lower):
                return
            self.add("failure", "contradicted", f"{retry.group(0)!r}: nothing failed that is still failing")
            return
        if technical and not re.search(r"\bno (?:errors?|issues?|problems?)\b", low):
            told = USER_FAILURE.search(ev.user_lower)
            if ev.failures or told:
                self.add("failure", "supported", f"{technical.group(0)!r}: a call before the reply failed")
                return
            said = (technical or retry).group(0)
            self.add("failure", "contradicted", f"{said!r}: no call before the reply failed")
            return
        absent = ABSENT.search(low)
        if absent and self.clause.asserts is False and not self.clause.modal:
            return
        if absent:
            if ev.failures or any(not rows for _, rows in ev.listed):
                self.add("failure", "supported", f"{absent.group(0)!r}: a lookup before the reply found nothing")
            elif not ev.results:
                self.add("failure", "contradicted", f"{absent.group(0)!r}: no lookup was made before the reply")
            elif not (ev.failures or any(not rows for _, rows in ev.listed) or ev.listed):
                named = [k for k in _keys_in(self.text, ev) if ev.records[k].shown]
                if named:
                    self.add("failure", "contradicted", f"{absent.group(0)!r}: a result showed {named[0]}")

    # -------------------------------------------------------------- actions

    def actions(self) -> None:
        self._actors()
        for m in OTHER_ACTOR.finditer(self.low):
            verb = m.group(1)
            lemma, groups = lemma_stem(verb), groups_of(verb)
            if (groups or lemma in GENERAL_STEMS) and self._done_by_a_call(verb, lemma, groups, lemma in GENERAL_STEMS):
                self.add("action", "supported", f"{m.group(0)!r}: a call did it (said of another actor)")
            elif not re.search(rf"\b{re.escape(verb)}\b", self.ev.user_lower):
                self.add("action", "unverifiable", f"{m.group(0)!r}: no message says so")
        for verb, voice, perfect, before, after in self._verbs():
            if lemma_stem(verb) == stem("check") and (split := SPLIT_PARTICLE.match(after)):
                verb = PHRASAL_CHECK[split.group(1)]  # "I've checked loan ln-7164 in": returned, not looked at
            lemma = lemma_stem(verb)
            groups = groups_of(verb)
            general = lemma in GENERAL_STEMS
            thing = OBJECT.match(after) if voice == "agent" and lemma in LIGHT_VERBS else None
            if voice == "record" and (lemma in LIGHT_VERBS or general):
                thing = SUBJECT.search(before)  # "your refund has been processed": the refund is the act
            if thing:  # "I've issued a refund": what was done is a refund, whatever the verb
                groups, general = set(OBJECTS[_object_stem(thing.group(1))]), False
            if lemma in READ_STEMS and not groups - {"approve"}:
                if voice == "agent" and not self.ev.results:
                    self.add("action", "contradicted", f"{verb!r}: no call before the reply read anything")
                continue
            if lemma in NEUTRAL_STEMS and not groups and not general:
                continue
            if not groups and not general and not (verb.endswith("ed") or verb in IRREGULAR):
                continue
            by = BY_ACTOR.match(after) if voice == "record" else None
            if (
                by
                and self._done_by_a_call(verb, lemma, groups, general)
                and not re.search(rf"\b(?:i|we)\b[^.]*\b{re.escape(lemma)}", self.ev.user_lower)
            ):
                self.add("action", "contradicted", f"{verb!r} {by.group(0).strip()!r}: the agent's own call did it")
                continue
            self._action(verb, lemma, groups, general, voice, perfect, before)

    def _actors(self) -> None:
        """Who a passive names as having done it ("archived by Adam Harrington"): supported when a field that says who
        did it ("archived_by", "approved_by") holds that name, or the user said so; contradicted when the agent's own
        call did it; else unverifiable (an owner is not who archived the record)."""
        ev = self.ev
        for m in BY_NAME.finditer(self.text):
            verb, actor = m.group("verb").lower(), m.group("actor").lower()
            if re.sub(r"^the\s+", "", actor) in ("user", "customer", "system", "team", "agent"):
                continue
            lemma = lemma_stem(verb)
            if actor in ev.user_lower and re.search(rf"\b{re.escape(verb)}\b", ev.user_lower):
                continue
            making = lemma in MAKING_STEMS  # who placed or opened a record: its customer, requester, owner
            held = [
                f
                for r in ev.in_play()
                for c in r.current()
                for f, v in c.items()
                if isinstance(v, str)
                and len(v) >= 3
                and v.lower() in actor
                and (making or f.endswith("by") or lemma in stem(f))
            ]
            if held:
                self.add("attribution", "supported", f"{m.group(0)!r}: {held[0]} holds it")
            elif not making and self._done_by_a_call(verb, lemma, groups_of(verb), lemma in GENERAL_STEMS):
                self.add("attribution", "contradicted", f"{m.group(0)!r}: the agent's own call did it")
            else:
                self.add("attribution", "unverifiable", f"{m.group(0)!r}: no field says who did it")

    def _verbs(self) -> list[tuple[str, str, bool, str, str]]:
        """(verb, voice, perfect, subject words) of each action the clause states as done: the agent's ("I've sent",
        "we cancelled") or a record's ("has been sent", "was cancelled", "is now closed")."""
        out = []
        low = self.low.replace("’", "'")
        if self.clause.negated:
            return out
        for m in FIRST_PERSON.finditer(low):
            verb = m.group("verb")
            if re.match(r"\s+(?:\w+\s+)?up\b", low[m.end() :]) and verb in ("added", "totaled", "totalled", "summed"):
                continue  # "I've added them up": a sum, not a record added
            if verb.endswith("ed") or verb in IRREGULAR:
                out.append((verb, "agent", True, low[: m.start()], low[m.end() :]))
        for _ in LET_KNOW.finditer(low):
            out.append(("notified", "agent", True, "", ""))
        passive_verbs = []  # where a passive's verb stands: "has been created successfully" is read once
        for m in PASSIVE.finditer(low):
            aux, adverbs, verb = m.group("aux") or m.group("aux2"), m.group("adv") or "", m.group("verb")
            passive_verbs.append(m.start("verb"))
            if not (verb.endswith("ed") or verb.endswith("en") or verb in IRREGULAR):
                continue
            after = low[m.end() :]
            if verb in ("called", "named", "titled", "labelled", "labeled") and re.match(r"\s+[\"'“‘]?[a-z0-9]", after):
                continue  # "is now called Engineering": what it is named, no act of calling
            if (HISTORY.match(after) and verb not in self.ev.state_words) or GENERIC.match(after):
                continue  # "was booked on May 11", "is refunded within 5 days": a record's past, a rule
            if re.match(PLAN_OR_LABEL, after):
                continue  # "is scheduled for May 3": a plan
            perfect = "been" in aux or bool(re.search(r"\b(?:now|just|successfully)\b", adverbs))
            out.append((verb, "record", perfect, low[: m.start()], after))
        for m in SUCCESSFULLY.finditer(low):  # "successfully created", "account created successfully"
            if not any(m.start() <= v_start < m.end() for v_start in passive_verbs):
                out.append((m.group(1) or m.group(2), "record", True, low[: m.start()], low[m.end() :]))
        return out

    def _action(
        self, verb: str, lemma: str, groups: set[str], general: bool, voice: str, perfect: bool, before: str = ""
    ) -> None:
        ev = self.ev
        already = bool(re.search(r"\balready\b", self.low))
        if self._done_by_a_call(verb, lemma, groups, general):
            self.add("action", "supported", f"{verb!r}: a call before the reply did it")
            return
        state = self._state_word(verb)
        recs = self.subjects()
        if state and any(_holds(r, state, ever=not perfect) for r in recs):
            if voice == "agent" and all(_holds(Rec(r.key, r.collection, r.versions[:1]), state) for r in recs):
                # "I've cancelled it" of a record that was cancelled before the episode: the agent did nothing
                self.add("action", "contradicted", f"{verb!r}: the record was already {state}; no call did it")
                return
            self.add("action", "supported", f"{verb!r}: the record is {state}")
            return  # "has been shipped" when it has: the record's state, described
        if voice == "record" and (re.search(rf"\b{re.escape(verb)}\b", ev.user_lower) or _in_values(ev, verb)):
            return  # what the user said happened, or a result's value ("refund_status": "refunded")
        named = bool(_keys_in(self.text, ev)) or any(_names_any(before, c.nouns) for c in ev.collections.values())
        if voice == "record" and not ev.results and groups and self._asked(groups):
            self.add("action", "contradicted", f"{verb!r}: the user asked for it and no call was made")
            return
        tool_verb = any(stem(words_of(n)[0]) == lemma for n in _tool_names(ev) if words_of(n))
        if voice == "record" and "notify" in groups and not self._offered(MESSAGING_VERBS):
            # "a receipt has been emailed to you", "your flatmate has been notified": a message sent, by no call, and
            # no tool offered sends one: the world cannot have done it
            self.add("action", "contradicted", f"{verb!r}: no call sent it, and no tool offered sends or notifies")
            return
        if voice == "record" and (already or not (named or tool_verb)):
            # "it has already been taken care of", "the seat has been released": said of no record the world has, or
            # of how things were before: nothing checks it (lenient keeps it; strict asks for words it can source)
            self.add("action", "unverifiable", f"{verb!r}: of no record a call changed")
            return
        if voice == "record" and not perfect:
            if state and recs and any(state in _states_of(r, ev) for r in recs):
                held = sorted(
                    {str(v) for r in recs for f in _state_fields(r, ev, state) for v in r.values(f, ever=True)}
                )
                self.add(
                    "action", "contradicted", f"{verb!r}: the records spoken of were {', '.join(held)}, never {state}"
                )
            else:
                self.add("action", "unverifiable", f"{verb!r}: no call or record before the reply shows it")
            return
        done = sorted({r.call.name for r in ev.writes})
        self.add(
            "action",
            "contradicted",
            f"{verb!r}: no call before the reply did it"
            + (f" (its writes: {', '.join(done)})" if done else " (no write)"),
        )

    def _offered(self, verbs: Iterable[str]) -> bool:
        """Whether an offered tool's verb (its name's first word) is one of these."""
        stems = {stem(v) for v in verbs}
        return any(stem(w) in stems for t in _tool_names(self.ev) for w in words_of(t)[:1])

    def _changed_records(self, keys: set[str]) -> set[str]:
        """The ids of the calls whose patches changed one of these records."""
        out = set()
        for cid, op in self.ev.changed:
            parts = str(op.get("path", "")).split("/")
            if len(parts) >= 3 and parts[2].isdigit():
                for s in (self.ev.initial, self.ev.state):
                    rows = s.get(parts[1]) or []
                    i = int(parts[2])
                    if i < len(rows) and isinstance(rows[i], dict) and keys & {str(v) for v in rows[i].values()}:
                        out.add(cid)
        return out

    def _asked(self, groups: set[str]) -> bool:
        """Whether the user's messages ask for an act of these groups ("please cancel ...")."""
        verbs = {stem(v) for g in groups for v in ACTION_GROUPS[g] if " " not in v}
        return bool({stem(w) for w in words_of(self.ev.user_lower)} & verbs)

    def _done_by_a_call(self, verb: str, lemma: str, groups: set[str], general: bool) -> bool:
        ev = self.ev
        named = set(_keys_in(self.text, ev))
        if (
            named
            and not groups & BEYOND_A_RECORD
            and any(r.call.call_id in self._changed_records(named) for r in ev.writes)
        ):
            return True  # "I've added 10 days to loan ln-5203" after renew_loan changed ln-5203
        state = self._state_word(verb)
        if state is not None and not general:
            # a state word ("cancelled", "suspended"): done when a write set some field to it, whatever the tool
            written = {re.sub(r"[\s_-]+", " ", str(op.get("value")).lower()) for _, op in ev.changed}
            if state in written:
                return True
            fields = {f for _, f in ev.state_words.get(state, set())}
            if any(str(op.get("path", "")).rsplit("/", 1)[-1] in fields for _, op in ev.changed):
                return False  # the writes set that field to another value ("suspended" for "cancelled")
        if general and ev.writes:
            return True
        # an act beyond a record ("emailed", "notified") is not backed by a verb it shares with making a record:
        # "issue_refund" issues (creates) a refund, it emails nothing
        verbs = {lemma} | {
            stem(v)
            for g in groups
            for v in ACTION_GROUPS[g]
            if " " not in v and not (g in BEYOND_A_RECORD and "create" in groups_of(v) - groups)
        }
        for r in ev.writes:
            name = {stem(w) for w in words_of(r.call.name)[:1]}  # the tool's verb ("cancel_booking": cancel)
            if name & verbs:
                return True
            if name & GENERAL_STEMS and groups - BEYOND_A_FIELD:
                return True  # update_customer_plan: "I've upgraded them to pro"
            # what the tool does, as its description's first clause says it ("Cancel an order and refund it"), not
            # what it returns ("...; returns the updated booking")
            description = re.split(r";|\.\s|\breturns?\b|\bby its\b", _description(ev, r.call.name))[0]
            # its verbs: the first word and each after "and" ("Issue a refund on a delivered order": issue, not deliver)
            said = [w for part in re.split(r"\band\b|,", description) for w in words_of(part)[:1]]
            if {stem(w) for w in said} & verbs:
                return True
            written = [op.get("value") for cid, op in ev.changed if cid == r.call.call_id]
            if {stem(w) for v in written if isinstance(v, str) for w in words_of(v)} & verbs:
                return True
        return False

    def _state_word(self, verb: str) -> str | None:
        for word in (verb, verb.replace("ed", "")):
            if word in self.ev.state_words:
                return word
        return None

    # -------------------------------------------------------------- states

    def states(self) -> None:
        ev, low = self.ev, self.low
        new = NEW_VALUE.search(low)
        if new and not ev.writes:
            self.add("state", "contradicted", f"{new.group(0)!r}: no change was made before the reply")
            return
        if not ev.state_words:
            return
        words = "|".join(
            sorted((re.escape(w).replace(r"\ ", r"[\s_-]+") for w in ev.state_words), key=len, reverse=True)
        )
        found = list(re.finditer(STATE_LEAD + rf"(?P<state>{words})\b", low))
        if self.clause.structured:  # a cell of a row or list item: "inc-7101 — latency on payments-db: major"
            cells = re.finditer(rf"(?:[:—–]|\s-)\s*(?P<state>{words})\s*(?=$|[;,(.])", low)
            found += [c for c in cells if not any(f.start("state") == c.start("state") for f in found)]
        for m in found:
            state = re.sub(r"[\s_-]+", " ", m.group("state"))
            qualified = re.match(rf"[\s,(]+(?P<state>{words})\b", low[m.end("state") :])
            if qualified:  # "stays open, in progress": the word qualifies the state that follows, which is read
                state = re.sub(r"[\s_-]+", " ", qualified.group("state"))
            if re.match(PLAN_OR_LABEL, low[m.end() :]):
                continue  # "scheduled date", "scheduled for May 3", "scheduled to take place": a label or a plan
            if re.search(
                r"\b(?:an?|any|every|each)\s+(?:\w+\s+)?$",
                low[max(0, m.start() - 40) : m.start()].split(" is")[0] + " ",
            ):
                continue  # "an order is pending": a rule about any record, not a record's state
            # not a parenthesis' words, whole or cut at the window's start
            window = re.sub(r"\([^)]*\)|^[^(]*\)", " ", low[max(0, m.start() - 30) : m.end()])
            negated = bool(re.search(r"\b(?:not|never|no longer)\b|n't\b", window))
            past = bool(re.search(r"\b(?:was|were|had|used to be)\b", window))
            pairs = ev.state_words[state]
            recs = self.subjects({c for c, _ in pairs})
            recs = [r for r in recs if r.collection in {c for c, _ in pairs}]
            if not recs:
                continue
            held = [r for r in recs if _holds(r, state, ever=past)]
            if negated:
                alone = len(recs) == 1 and len(ev.in_play(recs[0].collection)) == 1  # "the post": the only one shown
                if past or re.search(r"\byet\b", low) or not (_keys_in(self.text, ev) or alone):
                    continue  # "had not been marked as processing yet": then; "the other order isn't": which?
                if held and len(held) == len(recs):
                    self.add("state", "contradicted", f"{state!r} denied, but {held[0].key} is {state}")
                continue
            if held or re.search(rf"\b{re.escape(state)}\b", ev.user_lower):
                self.add("state", "supported", f"{state!r} held")
                continue
            now = ", ".join(sorted({str(r.now.get(f)) for r in recs for _, f in pairs if f in r.now})) or "otherwise"
            keys = ", ".join(r.key for r in recs[:3])
            self.add("state", "contradicted", f"{state!r}: the records spoken of ({keys}) are {now}")

    # -------------------------------------------------------------- attributions

    def attributions(self) -> None:
        found = [*LABEL_VALUE.finditer(self.text), *QUOTED_WITH.finditer(self.text)]
        recs = self.subjects() if found else []  # the clause's records: one answer for all its labels
        if recs and self.clause.structured and not _keys_in(self.clause.line, self.ev):
            # a row named by its flight's number (no id) speaks of the booking on that flight too ("WS540 | Confirmed")
            recs += [r for r in _referring(recs, self.ev) if r not in recs]
        for m in found:
            # "the full name Jeffrey Washington is active": the label is "full name", its value said beside it
            label = _label_words(self._without_held(m.group("label"), recs))
            if not label:
                continue
            fields = {f for r in recs for f in r.now if _label_names(label, f, r.now[f], self._nouns(r))}
            if not fields:
                continue
            value = m.group("value").strip()
            state = self._leading_state(value)
            if state and not any(_looks_like_state(str(r.now.get(f, "")), self.ev) for r in recs for f in fields):
                value = state  # "the reviewer is confirmed to ...": a state given to a field that holds no state
            if re.match(r"(?:on|at|in|for|to|from|by|with|under|of|about|into)\b", value, re.IGNORECASE):
                continue  # "the note is on CASE-18074": where it is, not its value
            items = [value]
            if re.search(r"s\s*$", m.group("label")) and label[-1] != "status":  # "ids: bld-7703, ops/...": each
                rest = self.text[m.start("value") :]
                items = [x.strip(" .") for x in re.split(r",|\band\b", re.split(r"[.;]\s", rest)[0]) if x.strip(" .")]
            for item in items:
                verdict = self._attributed(label, fields, item, recs)
                if verdict:
                    self.add("attribution", *verdict)
                    break

    def _without_held(self, label: str, recs: list[Rec]) -> str:
        """A label without the words of a value the records spoken of hold ("full name Jeffrey Washington")."""
        held = sorted(
            {str(v) for r in recs for v in r.now.values() if isinstance(v, str) and len(v) >= 3 and NAME.search(v)},
            key=len,
            reverse=True,
        )  # names and ids only: a state word ("disputed") in a label is the label's own
        for v in held:
            label = re.sub(rf"(?<![\w-]){re.escape(v)}(?![\w-])", " ", label, flags=re.IGNORECASE)
        return label

    def _leading_state(self, value: str) -> str | None:
        """The state word a value starts with, when words of no value follow it ("confirmed to upgrade the driver")."""
        low = re.sub(r"[\s_-]+", " ", value.lower()).strip(" .")
        for state in sorted(self.ev.state_words, key=len, reverse=True):
            if re.match(rf"{re.escape(state)}(?:\s+(?:to|as|for|and|with)\b|$)", low):
                return state
        return None

    def _nouns(self, rec: Rec) -> frozenset[str]:
        coll = self.ev.collections.get(rec.collection or "")
        return frozenset(w for n in (coll.nouns if coll else ()) for w in n.split())

    def _attributed(self, label: list[str], fields: set[str], value: str, recs: list[Rec]) -> tuple[str, str] | None:
        typed = [v for v in extract(value) if v.start < 4]
        said = " ".join(label)
        for rec in recs:
            for f in fields:
                for held in rec.values(f, ever=True):
                    if _matches(value, typed, held):
                        return None  # one of them holds it
                    ref = self.ev.records.get(str(held)) if isinstance(held, str) else None
                    if ref is not None and ref is not rec and any(_matches(value, typed, x) for x in ref.now.values()):
                        return None  # "Doctor: Kari Williams": the referenced record, by its name
        named = self.ev.collection_of_noun(" ".join(label))
        if named and any(_matches(value, typed, x) for r in self.ev.in_play(named) for x in r.now.values()):
            return None
        explicit = bool(_keys_in(self.text, self.ev) or _named_by_value(self.text, self.ev)) or (
            self.clause.structured
            and bool(_row_keys(self.clause.line, self.ev) or _cell_records(self.clause.line, self.ev))
        )
        specific = bool(typed) or bool(re.search(r"\d|@|[A-Z][a-z]+ [A-Z]", value)) or "/" in value
        # a state word given to a field that holds no state ("the full name ... is active"): another field's value
        stateless = all(
            not _looks_like_state(str(r.now.get(f, "")), self.ev) and r.now.get(f) is not None
            for r in recs
            for f in fields
            if f in r.now
        )
        state_to_stateless = _looks_like_state(value, self.ev) and stateless
        for rec in recs if (specific and not _looks_like_state(value, self.ev)) or state_to_stateless else ():
            for f, held in rec.now.items():
                if (
                    f not in fields
                    and not _label_names(label, f, held, self._nouns(rec))
                    and _matches(value, typed, held, whole=True)
                ):
                    return "contradicted", f"{value[:40]!r} is {rec.key}'s {f.replace('_', ' ')}, not its {said}"
        word = value.lower().strip(" .")
        for rec in recs if re.fullmatch(r"[a-z]+(?:_[a-z]+)*", word) else ():  # one word
            coll = self.ev.collections.get(rec.collection or "")
            for f in fields:
                kinds = {
                    re.sub(r"[\s_-]+", "_", str(v).lower()) for v in (coll.state_fields.get(f, ()) if coll else ())
                }
                initials = {"".join(part[0] for part in k.split("_") if part) for k in kinds if "_" in k}
                if len(kinds) > 1 and word not in kinds | initials and rec.now.get(f) is not None:
                    # (a kind's initials are its name too: "GP" for general_practice)
                    # a field of a few kinds given a word none of its records holds ("kind: transaction"): wrong
                    # whichever record it is said of
                    return "contradicted", f"{rec.key}'s {f.replace('_', ' ')} is {rec.now[f]!r}, not {value[:40]!r}"
        seen = bool(typed) and self.ev.seen.has(typed[0])
        if not explicit:
            return None  # which record the value is said of is not named: nothing to hold it against
        for other in self.ev.in_play():
            if other in recs:
                continue
            for f in fields:
                if f in other.now and _matches(value, typed, other.now[f], whole=True) and (typed or specific):
                    mine = ", ".join(f"{r.key}'s is {r.now.get(f)!r}" for r in recs if f in r.now)
                    return "contradicted", f"{value[:40]!r} is {other.key}'s {f.replace('_', ' ')}; {mine}"
        emails = any(isinstance(r.now.get(f), str) and EMAIL.fullmatch(r.now[f].strip()) for r in recs for f in fields)
        if (
            (typed and typed[0].kind in ("date", "time", "number") and not seen)
            or _looks_like_state(value, self.ev)
            or emails
        ):
            for rec in recs:
                for f in fields:
                    held = rec.now.get(f)
                    if held is not None and _comparable(typed, held, value, self.ev):
                        return "contradicted", f"{rec.key}'s {f.replace('_', ' ')} is {held!r}, not {value[:40]!r}"
        return None

    # -------------------------------------------------------------- counts

    def swaps(self) -> None:
        """A value said of a named record that another record of the same kind holds in the field the named one holds
        otherwise: two records' values swapped in one reply ("WS805 departs April 26", WS806's date). The records a
        clause names are those its ids, or a value only they hold, name in the clause or its line (a table row, a list
        item), with the records they refer to (a rental's car, an appointment's doctor)."""
        ev = self.ev
        texts = (self.text, self.clause.line) if self.clause.structured else (self.text,)
        # ids name the record; without one, a value only it holds does (with one, such a value may be the swapped one)
        named = [ev.records[k] for t in texts for k in _keys_in(t, ev)]
        # a name in words (a merchant, a title) before a number or a date only one record holds: in a row whose
        # amount is swapped, that amount names the other record
        named = (
            named
            or [r for t in texts for r in _named_by_value(t, ev, words=True)]
            or [r for t in texts for r in _named_by_value(t, ev)]
        )
        if not named or len({r.collection for r in named}) > 1 and not self.clause.structured:
            return
        scope = {id(r): r for r in named}
        for r in list(scope.values()):
            for v in r.now.values():
                if isinstance(v, str) and v in ev.records:
                    scope.setdefault(id(ev.records[v]), ev.records[v])
        if self.clause.structured:  # a row named by its book's title speaks of the loan of that book too
            for r in _referring(named, ev):
                scope.setdefault(id(r), r)
        stated = extract(self.text)
        values = [v for v in stated if v.kind in ("date", "time", "id") or (v.kind == "number" and v.money)]
        values = [v for v in values if not (v.kind == "id" and v.raw in ev.records)]
        # a code of digits is a value too: a card's last four ("ending 9215"), not a count
        values += [v for v in stated if v.kind == "number" and not v.money and len(v.raw) >= 4 and v.raw.isdigit()]
        # an email, or a table cell's whole text, is a value too ("Raised by: kenji.mori@corp.example")
        cell = re.match(r"^[A-Za-z][\w ]{0,30}:\s*(.+)$", self.text) if self.clause.structured else None
        cells = [cell.group(1).strip(), re.sub(r"\s*\([^)]*\)", "", cell.group(1)).strip()] if cell else []
        cells = [c for c in cells if len(c) >= 3 and re.search(r"[A-Za-z]", c)]  # "Feeds: 2" is a count, not a name
        for text in dict.fromkeys([*EMAIL.findall(self.text), *cells]):
            values.append(Value("text", text, frozenset({"text:" + text.lower()}), self.text.find(text)))
        for v in values:
            if any(_holds_value(r, v) for r in scope.values()):
                continue
            for other in ev.in_play():
                if id(other) in scope:
                    continue
                for f, held in other.now.items():
                    if not _holds_value_in(held, v) or (v.money and COUNT_FIELD.search(f)):
                        continue  # ("$1.00" is no count of copies)
                    mine = [r for r in scope.values() if r.collection == other.collection and f in r.now]
                    listing = any(  # "At Harbor Market: $84.20 + $61.35": the clause lists that field of several
                        x.raw != v.raw and x.kind == v.kind and any(_holds_value_in(r.now.get(f), x) for r in mine)
                        for x in values
                    )
                    if mine and not listing:
                        self.add(
                            "value",
                            "contradicted",
                            f"{v.raw!r} is {other.key}'s {f.replace('_', ' ')}; {mine[0].key}'s is {mine[0].now[f]!r}",
                        )
                        return

    def counts(self) -> None:
        ev, low = self.ev, self.low
        for m in COUNT.finditer(low):
            n = _count_value(m.group("n"))
            noun = m.group("noun")
            if n is None or TIME_UNITS.match(noun) or _is_item_number(low, m) or noun in NOT_PLURALS:
                continue
            collection = ev.collection_of_noun(noun) or ev.collection_of_noun(singular(noun))
            one = singular(noun)
            if collection and n > 1 and re.search(rf"\b{re.escape(one)}\s+(?:is|was)\s+$", low[: m.start()]):
                # "the data team's project is 5 projects": one record is no count of its kind
                self.add("count", "contradicted", f"one {one} said to be {m.group(0)!r}")
                continue
            in_state = None if collection else _state_counts(noun, ev)
            if in_state is not None and n not in in_state and not _said_count(n, noun, ev):
                # "4 open disputes" where 3 rows of the list are disputed: a count of a state's records
                self.add("count", "contradicted", f"{m.group(0)!r}: the results show {sorted(in_state)} {noun}")
                continue
            whole = bool(TOTAL.search(low[max(0, m.start() - 14) : m.end() + 14]))
            if n in (ev.totals_of(collection) if whole else ev.counts) or _said_count(n, noun, ev):
                continue
            listed = {k for k in _keys_in(self.clause.line, ev) if ev.records[k].collection == collection}
            if collection and len(listed) == n:
                continue  # "2 refunds (rfn-8505 ..., rfn-8507 ...)": the reply names them
            shown = [rows for c, rows in ev.listed if c == collection] if collection else []
            if collection and (shown or ev.in_play(collection)):
                held = sorted({len(r) for r in shown} | {len(ev.in_play(collection))})
                self.add("count", "contradicted", f"{m.group(0)!r}: the results show {held} {noun}")
            else:
                self.add("count", "unverifiable", f"{m.group(0)!r}: no result gives {n}")

    # -------------------------------------------------------------- words

    def promises(self) -> None:
        """What the agent says it will do or can do, tells the user to try, or says the world will do next (see the
        module's docstring); unverifiable unless something in the episode backs it."""
        ev, low = self.ev, self.low.replace("’", "'")
        later = len(ev.traj.calls) > len(ev.calls)  # a call after the reply (a plan it keeps)
        plan = PLAN.search(low)
        if plan and (plan.group("a") or plan.group("b")) not in COURTESY_VERBS and not NO_ACT.search(low):
            if not later:
                self.add("promise", "unverifiable", f"{plan.group(0)!r}: no call after the reply does it")
            return
        me = SELF.match(low)
        if me:
            known = ASSISTANT_WORDS | SELF_WORDS | set(re.findall(r"[a-z]+", ev.system.lower()))
            if any(w not in known for w in re.findall(r"[a-z]+", me.group("what"))):
                self.add("words", "unverifiable", f"{me.group(0)!r}: the agent describes itself as what it is not")
                return
        offer = OFFER.match(low)
        if offer and not self.clause.negated:
            verb, rest = offer.group("verb"), offer.group("rest")
            if verb in ("help", "assist", "do"):
                if not HELP_WITH_THAT.match(rest):
                    self.add(
                        "promise", "unverifiable", f"{offer.group(0).strip()!r}: offers help nothing shows it gives"
                    )
            elif not self._offered([verb, *(v for g in groups_of(verb) for v in ACTION_GROUPS[g] if " " not in v)]):
                self.add("promise", "unverifiable", f"{offer.group(0).strip()!r}: no tool offered does it")
            return
        advice = TRY_ADVICE.match(low)
        if advice:
            again = re.search(r"\bagain\b", low)
            if again and (ev.unresolved_failures() or USER_FAILURE.search(ev.user_lower)):
                return  # "try again": something failed and has not gone through since
            self.add("promise", "unverifiable", f"{advice.group(0).strip()!r}: advice nothing in the episode backs")
            return
        for m in FUTURE_EVENT.finditer(low):
            verb = m.group("a") or m.group("b")
            lemma, groups = lemma_stem(verb), groups_of(verb)
            if not self._done_by_a_call(verb, lemma, groups, lemma in GENERAL_STEMS) and not later:
                self.add("promise", "unverifiable", f"{m.group(0)!r}: no call before or after the reply does it")

    def words(self) -> None:
        ev = self.ev
        plain = _without_values(self.text)
        unsourced = []
        for w in dict.fromkeys(re.findall(r"[A-Za-z][A-Za-z'-]*[A-Za-z]", plain)):
            low = w.lower().strip("'-")
            if low.endswith("'s"):
                low = low[:-2]
            if len(low) < 3 or low in ASSISTANT_WORDS:
                continue
            s = stem(low)
            if s in ASSISTANT_STEMS or s in ev.stems or lemma_stem(low) in ev.stems:
                continue
            if len(low) >= 7 and low[:6] in ev.prefixes:
                continue  # one family of words: "specializes" where the records say "specialty"
            if any(stem(v) in ev.stems for g in groups_of(low) for v in ACTION_GROUPS[g] if " " not in v):
                continue  # a verb of the same act as one said: "delete" where the tool removes
            if "-" in low and all(stem(p) in ev.stems or stem(p) in ASSISTANT_STEMS for p in low.split("-") if p):
                continue
            unsourced.append(w)
        if unsourced:
            self.add("words", "unverifiable", f"words no message or tool says: {', '.join(unsourced[:6])}")


# ------------------------------------------------------------------ patterns

_N = r"(?:\d{1,3}|" + "|".join(DAY_COUNT_WORDS) + ")"
_DATE_NEAR = (
    r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?"
    r"(?:[a-z]{3,9}\.?\s+\d{1,2}(?:st|nd|rd|th)?|\d{1,2}(?:st|nd|rd|th)?\s+[a-z]{3,9}|\d{4}-\d{2}-\d{2})"
)
# a count of days from today: "in 4 days", "4 days from now", "41 days ago", "9 days overdue", "overdue by 9 days" (not
# "2 days late": late against a date other than today); "today", "tomorrow", "yesterday" only right beside a date
# ("tomorrow, Wednesday, May 13", "May 13 (tomorrow)")
DAYS_FROM_TODAY = re.compile(
    rf"\bin\s+(?P<n1>{_N})\s+days?\b(?!\s+(?:of|after|before|from\s+(?!now|today)))"
    rf"|\b(?P<n4>{_N})\s+days?\s+(?:from\s+(?:now|today)|away|to\s+go)\b"
    rf"|\b(?P<n2>{_N})\s+days?\s+(?:ago|overdue|past\s+due)\b"
    rf"|\boverdue\s+by\s+(?P<n3>{_N})\s+days?\b"
    rf"|\b(?P<word>today|tomorrow|yesterday)\b,?\s*\(?\s*(?:{_DATE_NEAR})(?:,?\s+\d{{4}})?"
    rf"|(?:{_DATE_NEAR})(?:,?\s+\d{{4}})?\s*[(,—–-]\s*(?P<word2>today|tomorrow|yesterday)\b"
)

# a comparison that picks one record: "the largest was Corner Grocery ($142.00)", "the cheapest is WS402"
SUPERLATIVE = re.compile(
    r"\b(?:(?P<most>largest|biggest|highest|most expensive|priciest|costliest)|"
    r"(?P<least>smallest|lowest|cheapest|least expensive))\b"
)
# a field's name that says only that it is an amount: its record's kind names it ("the refund")
GENERIC_AMOUNTS = {"amount", "total", "price", "value", "sum"}
# a field that counts things: an amount said is not its value
COUNT_FIELD = re.compile(
    r"(?:^|_)(?:copies|count|quantity|qty|seats|renewals|level|attempts|times|nights|days|available)(?:_|$)"
)
# a phrasal verb's particle after its object: "checked loan ln-7164 in for you now"
SPLIT_PARTICLE = re.compile(r"^\s+(?:[\w-]+\s+){1,3}?(in|out)(?=\s*(?:$|[.,;!)]|for you\b|now\b|today\b|again\b))")
PHRASAL_CHECK = {"in": "returned", "out": "borrowed"}
# a record's age in days: "Age: 4 days" (a table's column), "4 days old"
AGE = re.compile(rf"\bage:?\s+(?P<a>{_N})\s+days?\b|\b(?P<b>{_N})\s+days?\s+old\b")
# who a passive says did it, by name: "archived by Adam Harrington", "updated by the Falcon team"
BY_NAME = re.compile(r"\b(?P<verb>[a-z]+(?:ed|en))\s+by\s+(?P<actor>(?:the\s+)?[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*){0,3})")
MAKING_STEMS = {
    lemma_stem(v)
    for v in ("placed", "opened", "created", "submitted", "filed", "booked", "made", "requested", "written", "authored")
    + ("raised", "reported", "lodged", "ordered", "registered", "started", "initiated", "owned", "held", "borrowed")
}
# a label right before a date: "the new due date is Monday, June 8", "Due: June 8"
DATE_LABEL = re.compile(
    r"(?:^|\b(?:the|your|its|their)\s+)(?:new\s+)?(?P<label>[a-z]+(?:[ _][a-z]+)?)"
    r"\s*(?:\bis\b|\bwas\b|\bwill be\b|:)\s*(?:now\s+)?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?(?:the\s+)?$"
)
# the agent's own next act: "I'm going to create one", "I'll do that", "I will keep going to the next one"
PLAN = re.compile(
    r"(?:^|[,;]\s*)(?:(?:and|then|so|now)\s+)?(?:i|we)(?:'m| am|'re| are)\s+(?:(?:also|now|just|then)\s+)?"
    r"(?:going to|gonna|about to)\s+(?P<a>[a-z]+)"
    r"|(?:^|[,;]\s*)(?:(?:and|then|so|now)\s+)?(?:i|we)(?:'ll| will| shall)\s+"
    r"(?:(?:also|now|just|then|gladly|happily)\s+)?(?P<b>[a-z]+)"
)
# the plain words of helping a plan may use: "I'll be happy to help", "I will need your booking id", "I'll let you know"
COURTESY_VERBS = {"help", "assist", "be", "need", "let", "gladly", "happily", "wait", "await", "stay", "remain"}
# a plan to change nothing: "I will keep it that way"
NO_ACT = re.compile(
    r"\b(?:keep|leave)\s+(?:it|them|this|that|things)\s+(?:that way|as (?:it is|they are|is)|unchanged)\b"
)
# what the agent says it is: "I'm a Juniper account", "I'm a member of the library" (an assistant is all it is)
SELF = re.compile(r"^(?:hello|hi)?[,!\s]*(?:i|we)(?:'m| am|'re| are)\s+(?:a|an|the|your)\s+(?P<what>[a-z][a-z\s-]*)")
SELF_WORDS = {"agent", "language", "model", "customer", "service", "support", "representative", "helpful", "large"}
# what the agent says it can do: "I can add a new one", "but I can help with the rest of the order"
OFFER = re.compile(r"^(?:i|we)\s+(?:can|could)\s+(?:also\s+|still\s+|only\s+)?(?P<verb>[a-z]+)\b(?P<rest>.*)$")
HELP_WITH_THAT = re.compile(
    r"^\s*(?:you\s*)?(?:(?:with|further|out)\s*)?(?:that|this|it|you|anything(?: else)?|something else|"
    r"(?:any )?other (?:questions?|requests?|things?)|whatever you need)?\s*(?:today|now|instead)?\s*$"
)
# what the user is told to try: "please try to find it again", "you can try another one" ("please check your details"
# asks the user to look at what is theirs: no claim)
TRY_ADVICE = re.compile(
    r"^(?:please\s+|kindly\s+|you\s+(?:can|could|may|might|should|need to|have to|must)\s+(?:also\s+|always\s+)?)?"
    r"(?:(?:try|attempt)(?:\s+to)?|retry|find|look for|search for|download|visit)\b"
)
# what the world is said to do next: "it will be closed in 24 hours", "the order is being cancelled"
FUTURE_EVENT = re.compile(
    r"\b(?:will|'ll|is going to|are going to)\s+(?:(?:now|soon|also|automatically|then)\s+)?be\s+"
    r"(?P<a>[a-z]+(?:ed|en))\b"
    r"|\b(?:is|are)\s+(?:now\s+|currently\s+|still\s+)?being\s+(?P<b>[a-z]+(?:ed|en))\b"
)

# what a claimed action was done to, when that names the action itself: "issued a full refund", "sent you an email"
OBJECTS = {
    **dict.fromkeys(("refund", "credit", "compens", "voucher", "discount", "reimburs"), ("refund",)),
    **dict.fromkeys(("email", "notif", "remind", "messag", "text", "sms", "confirm", "letter"), ("notify", "send")),
    **dict.fromkeys(("ticket", "complaint", "case", "claim", "note", "report"), ("create",)),
    **dict.fromkeys(("disput",), ("dispute",)),
    **dict.fromkeys(("payment",), ("pay",)),
}
# verbs that say little of their own: what they were done to names the act ("issued a refund", "sent an email")
LIGHT_VERBS = {
    stem(v)
    for v in (
        *("issue", "send", "make", "process", "file", "submit", "give", "arrange", "initiate", "put", "raise"),
        *("apply", "provide", "grant", "create", "log", "place", "open", "lodge", "complete", "do", "set", "add"),
    )
}
OBJECT = re.compile(
    r"^\s+(?:(?:you|them|him|her|it|a|an|the|your|their|its|this|that|full|partial|new|quick|formal|written|"
    r"confirmation|\$?[\d.,]+)\s+){0,3}(" + "|".join(sorted(OBJECTS, key=len, reverse=True)) + r")[a-z]*\b"
)
SUBJECT = re.compile(r"\b(" + "|".join(sorted(OBJECTS, key=len, reverse=True)) + r")[a-z]*(?:\s+of\s+\S+)?\s*$")


def _object_stem(word: str) -> str:
    return next(k for k in sorted(OBJECTS, key=len, reverse=True) if word.startswith(k))


FIRST_PERSON = re.compile(
    r"\b(?:i|we)(?:'ve|'d| have| had)?\s+(?:(?:just|already|also|now|successfully|gone ahead and|went ahead and|"
    r"been able to|then|finally|quickly)\s+){0,3}(?P<verb>[a-z]+)\b"
)
LET_KNOW = re.compile(
    r"\b(?:i|we)(?:'ve| have)?\s+(?:(?:just|already|also|now)\s+){0,2}let\s+(?:[\w.'-]+\s+){1,3}know\b"
)
PASSIVE = re.compile(
    r"(?:\b(?P<aux>is|are|was|were|has been|have been|had been|got|'s been|'ve been|been)|(?P<aux2>'s|'re))\s+"
    r"(?P<adv>(?:(?:now|already|successfully|just|also|all|fully|officially|automatically|been)\s+){0,2})"
    r"(?P<verb>[a-z]+)\b"
)
SUCCESSFULLY = re.compile(r"(?:^|\s)successfully\s+([a-z]+ed)\b|\b([a-z]+ed)\s+successfully\b")
HISTORY = re.compile(
    r"^\s*(?:on|since|in|back in|at|as of|before|after|earlier|previously|ago|yesterday|last)\b"
    r"|^\s*(?:for|to depart|to leave|to arrive|to start|to begin)\s+(?:\w+\s+){0,2}?(?:\d|jan|feb|mar|apr|may|jun|jul"
    r"|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun|today|tomorrow|tonight|next|this)"
    r"|^\s*(?:[\w,]+\s+){0,6}?(?:ago|yesterday|last (?:week|month|year)|previously|earlier)\b"
)
GENERIC = re.compile(
    r"^\s*(?:within|automatically|usually|typically|normally|generally|by default|every|each time|per)\b"
)
YOU_CAN = re.compile(
    r"^(?:and\s+)?you(?:'re| are)?\s+(?:now\s+|still\s+|no longer\s+)?(?:can(?:not|'t)?|could(?:n't)?|won't be able|"
    r"are(?: not)? able|(?:now\s+)?ready to|will(?: not|n't)? be able)\b"
    r"(?!\s+(?:now\s+|also\s+|always\s+)?(?:contact|reach|call|ask|let|tell|view|see|check|review|find|look|track))"
)
# a third party said to have done an act: "the customer has cancelled their order"
OTHER_ACTOR = re.compile(
    r"\b(?:the|your|their)\s+(?:customer|user|patient|member|passenger|client|owner|holder|account holder|doctor|"
    r"reviewer|technician|team|bank|airline|library|clinic|shop|store)\s+(?:has|have|had)\s+"
    r"(?:(?:already|also|just|now)\s+)?([a-z]+ed)\b"
)
# who a passive says did it, when that is the user: "was cancelled by the customer" after the agent's cancel
BY_ACTOR = re.compile(
    r"\s+by\s+(?:the\s+|your\s+)?(?:customer|user|patient|member|passenger|client|holder|owner|you)\b"
)
PLAN_OR_LABEL = (
    r"\s*(?:date|time|day|list|count|orders?|items?|for|to\s+(?:take|be|happen|occur|start|begin|depart|arrive|leave|"
    r"go|run|ship|close|end|expire))\b"
)
NEW_VALUE = re.compile(r"\b(?:the|its|their|your)\s+new\s+[a-z_]+(?:\s+[a-z_]+)?\s+(?:is|are|was|will\s+be)\b")
STATE_LEAD = (
    r"(?:\b(?:is|are|was|were|remains?|been|stays?|status(?:\s+(?:is|was|of))?|state(?:\s+is)?|marked(?:\s+as)?|"
    r"set\s+to|shows?(?:\s+as)?|listed\s+as|now|currently|still|already)\s*:?\s+"
    r"(?:(?:now|currently|still|already|not|also|marked|set\s+to|as|been|shown\s+as)\s+){0,3}|'s\s+|'re\s+)"
)
TECHNICAL = re.compile(
    r"\b(?:an? (?:error|glitch|outage)|unresponsive|(?:failed|did ?n[o']t|could ?n[o']t) (?:to )?(?:answer|respond)|"
    r"errors? (?:occurred|came up)|(?:request|call|attempt|operation|system|lookup|search|update|transfer|payment|"
    r"action) (?:has |have )?failed|failed to|timed? ?out|outage|not responding|glitch|went wrong|"
    r"technical (?:issue|problem|difficult)\w*|system (?:issue|problem|error)s?|"
    r"(?:system|server|service|site|platform|database|api)s? (?:is |are |was |were |went )?down\b|"
    r"temporarily unavailable|service (?:is )?unavailable|experiencing (?:issues|problems|difficulties|an issue|"
    r"a problem)|having (?:trouble|issues|problems) (?:with|accessing|connecting|reaching)|"
    # a system that refuses the agent: "our scheduling system isn't letting me make changes"
    r"(?:system|tool|server|service|platform|database|api)s? (?:is ?n[o']t|are ?n[o']t|wo ?n[o']t|does ?n[o']t|"
    r"did ?n[o']t) (?:letting|let|allowing|allow) (?:me|us)\b)"
)
RETRY = re.compile(
    r"\b(?:try again later|try it again later|retry later|try again in a (?:few|little)|check back later)\b"
)
USER_FAILURE = re.compile(r"\b(?:error|fail|failed|failing|not working|doesn't work|broken|problem|issue|down)\b")
ABSENT = re.compile(
    r"\b(?:(?:could ?n[o']t|can ?n[o']t|was ?n[o']t able to|unable to) (?:find|locate|retrieve|see)|"
    r"found no(?:thing)?\b|"
    r"no (?:matching )?"
    r"(?:record|records|results?|matches|match|entries|entry)\b|not found|does ?n[o']t exist|do ?n[o']t exist)"
)
COUNT = re.compile(
    r"(?<![\d.,$€£])\b(?P<n>\d{1,3}|no|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|both)\s+"
    r"(?:(?:[a-z]+(?:ed|ing|ive|ful|al|ous|ent|ant|ary|able)|other|more|open|active|new|total|separate|different|"
    r"upcoming|current|previous|recent|of your|of the|of them|in)\s+){0,2}(?P<noun>[a-z]+s)\b"
)
# "failures with fullname 'bld-7703'", "with the status of 'closed'": a field named, its value quoted
QUOTED_WITH = re.compile(
    r"\bwith\s+(?:the\s+|a\s+|an\s+)?(?P<label>[A-Za-z][A-Za-z ]{1,20}?)\s+(?:of\s+)?"
    r"['\"“‘](?P<value>[^'\"”’]{1,60})['\"”’]"
)
LABEL_VALUE = re.compile(
    r"(?:^|[;,(]\s*|(?<!under )(?<!for )(?<!with )(?<!from )(?<!by )(?<!in )(?<!on )(?<!to )"
    r"\b(?:the|its|their|your|his|her|whose)\s+|'s\s+)(?P<label>[A-Za-z][A-Za-z ]{1,40}?)\s*"
    r"(?::|\bis\b|\bwas\b|\bare\b|\bwere\b|=|\bof\b(?=\s+[\d$€£]))\s*(?P<value>(?:[^;,()]|,(?=\d{3})){1,60})"
)


# ------------------------------------------------------------------ helpers


def _num(v: Value) -> Decimal:
    return Decimal(next(iter(v.forms))[4:])


NAME = re.compile(r"[A-Z0-9]")
# words ending in s that COUNT's noun would take for a plural ("Mazda 3 is ...")
NOT_PLURALS = {"is", "was", "has", "does", "its", "his", "this", "thus", "yes", "as", "us", "plus", "less", "unless"}
NOT_PLURALS |= {"across", "always", "perhaps", "whereas", "besides", "yours", "ours", "hers", "theirs", "goes"}
# a count said of a whole ("4 projects in total", "a total of 3 orders"): a list's length, not a share of one
TOTAL = re.compile(r"\b(?:in total|a total of|total of|in all|altogether|overall)\b")
# words that make a figure arithmetic over what was shown: a total, an average, a share
AGGREGATE = re.compile(
    r"\b(?:overall|combined|altogether|in all|in total|sum|together|across|average|on average|"
    r"per|each|apiece|share|percent|remaining|left|balance after|difference|more than|less than|saving|save)\b"
)
# a time worked out from another ("be there 15 minutes early, by 2:15 pm"), not a record's
RELATIVE_TIME = re.compile(r"\b(?:early|earlier|before|by|until|after|later|minutes?|hours?|ago|from now|arrive)\b")
# acts that reach beyond a record's fields: a record changed does not back them
BEYOND_A_RECORD = {"send", "notify", "handoff", "refund", "pay"}
# the verbs of a tool that sends a message (send_receipt, email_customer, notify_owner); "issue" or "ship" send things,
# not messages
MESSAGING_VERBS = (*(v for v in ACTION_GROUPS["notify"] if " " not in v), "send", "resend", "mail", "forward")
TRANSIENT = re.compile(r"unavailable|timed? ?out|timeout|rate.?limit|too many requests|\b50[234]\b|try again", re.I)


def _transient(r) -> bool:  # noqa: ANN001 - an evidence.Result
    """A failure that may pass (an injected fault, a 503, a timeout), not a rule's refusal: a retry may get past it."""
    return r.call.fault is not None or bool(TRANSIENT.search(r.content)) or bool(TRANSIENT.search(r.call.error or ""))


def _keys_in(text: str, ev: Evidence) -> list[str]:
    if not text:
        return []
    low = text.lower()
    return [k for k in ev.records if len(k) >= 3 and re.search(rf"(?<![\w-]){re.escape(k.lower())}(?![\w-]|\.\d)", low)]


def _holds_value_in(held: Any, v: Value) -> bool:
    """Whether a field's value is the typed value `v` (a date by its day too, an amount numerically, a text whole)."""
    if held is None or isinstance(held, bool | dict | list):
        return False
    if v.kind == "text":
        return re.sub(r"[\s_]+", " ", str(held).lower()).strip() == re.sub(r"[\s_]+", " ", v.raw.lower()).strip()
    if v.kind == "number":  # an amount, or a code of digits kept as text (a card's last four, "9215")
        if isinstance(held, str):
            return held.strip() == v.raw
        return isinstance(held, int | float) and abs(float(_num(v)) - float(held)) < 0.005
    forms = {f for x in extract(str(held)) for f in x.forms}
    if v.kind == "date":
        forms |= {"day:" + f[10:] for f in forms if f.startswith("date:")}
    return bool(v.forms & forms)


def _holds_value(rec: Rec, v: Value) -> bool:
    return any(_holds_value_in(x, v) for version in [*rec.versions, *rec.seen] for x in version.values())


def _referring(recs: list[Rec], ev: Evidence) -> list[Rec]:
    """The records in play that hold one of these records' keys as a value (a booking of a flight, a loan of a book)."""
    keys = {r.key for r in recs}
    return [r for r in ev.in_play() if keys & {str(v) for v in r.now.values()}]


def _dates_in(text: str, today: dt.date) -> list[dt.date]:
    """The dates a text states; a date without its year is the one of that day and month nearest today."""
    out = []
    for v in extract(text):
        for form in v.forms:
            if form.startswith("date:") and _real(*map(int, form[5:].split("-"))):
                out.append(dt.date.fromisoformat(form[5:]))
            elif form.startswith("day:"):
                mo, d = map(int, form[4:].split("-"))
                near = [dt.date(y, mo, d) for y in (today.year - 1, today.year, today.year + 1) if _real(y, mo, d)]
                if near:
                    out.append(min(near, key=lambda x: abs((x - today).days)))
    return out


def _days(gap: int) -> str:
    return "1 day" if abs(gap) == 1 else f"{abs(gap)} days"


def _real(y: int, mo: int, d: int) -> bool:
    try:
        dt.date(y, mo, d)
    except ValueError:
        return False
    return True


def _tool_names(ev: Evidence) -> list[str]:
    return [(t.get("function") or t).get("name", "") for t in ev.traj.tools]


def _row_keys(line: str, ev: Evidence) -> list[str]:
    """The ids a table row or list item is about: a cell that is an id, or starts with one ("ord-1 (pending)"); an id
    inside a cell's text ("Transfer to acc-6004") is something the record says, not the record."""
    cells = [re.sub(r"^[A-Za-z][\w ]{0,30}:\s*", "", c).strip() for c in re.split(r";|\s[—–-]\s|:\s", line)]
    return [k for k in ev.records if any(re.match(rf"{re.escape(k)}(?![\w-])", c, re.IGNORECASE) for c in cells)]


def _cell_records(line: str, ev: Evidence) -> list[Rec]:
    """The records a table row's or list item's whole cells name by a value only they hold ("Description: Transfer to
    acc-6004" is the transaction, not the account its text mentions)."""
    cells = [re.sub(r"^[A-Za-z][\w ]{0,30}:\s*", "", c).strip() for c in line.split(";")]
    names = {k.lower(): r for k, r in ev.names.items()}
    return list({id(r): r for c in cells if (r := names.get(c.lower())) is not None}.values())


@cache
def _name_in_words(value: str) -> bool:
    """A name said in words ("Corner Grocery"), not a number, a date or a code (read once per value: every table row
    asks)."""
    return bool(re.search(r"[A-Za-z]{3}", value)) and not extract(value)


def _named_by_value(text: str, ev: Evidence, words: bool = False) -> list[Rec]:
    """The records a text names by a value only they hold ("ending 1077", "`transform_sales`"); `words`: by a name in
    words only ("Corner Grocery", "The Salt Road"), not a number or a date. A code's underscore may be a space
    ("late_delivery": "late delivery")."""
    return list(
        {
            id(r): r
            for value, r in ev.names.items()
            if (not words or _name_in_words(value))
            and re.search(rf"(?<![\w-]){re.escape(value).replace('_', '[_ ]')}(?![\w-])", text, re.IGNORECASE)
        }.values()
    )


def _names_any(low: str, nouns: set[str]) -> bool:
    return any(re.search(rf"\b{re.escape(n)}s?\b", low) for n in nouns if n)


def _same_kind(v: Value, held: Any) -> bool:
    if isinstance(held, bool) or held is None:
        return False
    if v.kind in ("date", "time"):
        return isinstance(held, str) and any(x.kind == v.kind for x in extract(held))
    if v.kind == "number" and v.money:
        return isinstance(held, int | float)
    return False


def _holds(rec: Rec, state: str, ever: bool = False) -> bool:
    for version in rec.versions + rec.seen if ever else rec.current():
        for v in version.values():
            if isinstance(v, str) and re.sub(r"[\s_-]+", " ", v.lower()) == state:
                return True
    return False


def _states_of(rec: Rec, ev: Evidence) -> set[str]:
    coll = ev.collections.get(rec.collection or "")
    if coll is None:
        return set()
    return {re.sub(r"[\s_-]+", " ", v.lower()) for values in coll.state_fields.values() for v in values}


def _state_fields(rec: Rec, ev: Evidence, state: str) -> list[str]:
    coll = ev.collections.get(rec.collection or "")
    if coll is None:
        return []
    return [
        f for f, values in coll.state_fields.items() if state in {re.sub(r"[\s_-]+", " ", v.lower()) for v in values}
    ]


def _in_values(ev: Evidence, verb: str) -> bool:
    return (
        bool(re.search(rf"\b{re.escape(verb)}\b", ev.said_lower))
        and not re.search(rf"\b{re.escape(verb)}\b", ev.system.lower() + " " + ev.user_lower)
        or any(re.search(rf"\b{re.escape(verb)}\b", r.content.lower().replace("_", " ")) for r in ev.results if r.ok)
    )


def _description(ev: Evidence, name: str) -> str:
    for t in ev.traj.tools:
        fn = t.get("function", t)
        if fn.get("name") == name:
            return str(fn.get("description") or "")
    return ""


LABEL_STOP = {"the", "its", "their", "your", "his", "her", "this", "that", "a", "an", "current", "new", "old", "total"}
SYNONYMS = {
    "email": {"email", "mail", "e-mail", "address"},
    "phone": {"phone", "number", "telephone", "mobile", "cell", "tel"},
    "name": {"name", "title", "full"},
    "amount": {"amount", "price", "cost", "fee", "total", "balance", "sum", "charge", "fare", "value"},
}


def _label_words(label: str) -> list[str]:
    words = [singular(w) if w != "status" else w for w in re.findall(r"[a-z]+", label.lower()) if w not in LABEL_STOP]
    return words[-3:] if words else []


def _label_names(
    label: list[str], field: str, held: Any, nouns: frozenset[str] = frozenset(), loose: bool = False
) -> bool:
    """Whether a reply's label ("email address", "due date", "order date") names a field (`email`, `due_date`,
    `date`); `nouns`: the words of the record's own kind, which a label may add ("the order date" of an order);
    `loose`: whether any of the words (a clause's) names it."""
    fw = set(words_of(field)) - {"id"} or {"id"}
    if loose:
        names = fw | {w for base, syn in SYNONYMS.items() if fw & (syn | {base}) for w in syn | {base}}
        return bool({singular(w) for w in label} & names)
    lw = set(label) - (nouns - fw) or set(label)
    dated = isinstance(held, str) and bool(extract(held)) and extract(held)[0].kind in ("date", "time")
    extra = {"id", "number"} | ({"address"} if fw & {"email", "mail", "address"} else set())
    if lw <= fw | extra and lw & fw:
        return True
    for base, syn in SYNONYMS.items():
        if base in fw and lw <= syn | {base}:
            return True
    if lw & {"date", "day", "time", "when"} and dated:
        return lw <= {"date", "day", "time", "when", "and", "start", "appointment", "visit"} | fw
    return False


def _matches(value: str, typed: list[Value], held: Any, whole: bool = False) -> bool:
    if held is None or isinstance(held, bool | dict | list):
        return False
    text = str(held)
    if EMAIL.fullmatch(text.strip()) and not EMAIL.fullmatch(value.strip(" .")):
        return False  # an address is all of it: "Lori261" is not lori261@yahoo.com
    if typed:
        forms = {f for v in extract(text) for f in v.forms}
        days = {"day:" + f[10:] for f in forms if f.startswith("date:")}
        if typed[0].forms & (forms | days):
            return True
        if typed[0].kind == "number" and isinstance(held, int | float):
            return abs(float(_num(typed[0])) - float(held)) < 0.005
        return False
    a = re.sub(r"[\s_-]+", " ", value.lower()).strip(" .")
    b = re.sub(r"[\s_-]+", " ", text.lower()).strip(" .")
    if len(b) < 2:
        return False
    if EMAIL.fullmatch(text.strip()):
        return a == b  # two addresses: all of it, not a prefix ("ann@example.co")
    return a == b if whole else (a == b or a.startswith(b + " ") or b.startswith(a) and len(a) >= 3)


def _looks_like_state(value: str, ev: Evidence) -> bool:
    first = re.sub(r"[\s_-]+", " ", value.lower()).strip(" .")
    return first in ev.state_words


def _comparable(typed: list[Value], held: Any, value: str, ev: Evidence) -> bool:
    """Whether the held value and the stated one are of one kind, so that their difference is a contradiction."""
    if isinstance(held, str) and EMAIL.fullmatch(held.strip()):
        return True  # an email field given anything but its address
    if typed:
        return _same_kind(typed[0], held) or (typed[0].kind == "number" and isinstance(held, int | float))
    return isinstance(held, str) and re.sub(r"[\s_-]+", " ", held.lower()) in ev.state_words


def _count_value(n: str) -> int | None:
    if n.isdigit():
        return int(n)
    return NUMBER_WORDS.get(n)


def _is_item_number(low: str, m: re.Match) -> bool:
    return bool(re.match(r"\s*\d{1,2}[.)]\s*$", low[: m.end("n")])) or low[m.end("n") : m.end("n") + 1] in ".)"


def _state_counts(noun: str, ev: Evidence) -> set[int] | None:
    """How many records of each listed result hold the state a noun names ("disputes": the rows whose status is
    disputed), with the records in play that hold it; None when no shown value is that state."""
    want = stem(singular(noun))
    out: set[int] = set()
    for _, rows in ev.listed:
        for f in {f for r in rows for f, x in r.items() if isinstance(x, str)}:
            held = [r for r in rows if isinstance(r.get(f), str) and _state_stem(r[f]) == want]
            if held:
                out.add(len(held))
                out.add(sum(1 for r in ev.in_play() for c in r.current() if _state_stem(c.get(f)) == want))
    return out or None


def _state_stem(value: Any) -> str | None:
    """The stem of a one-word state value ("disputed": "disput"); None for any other value."""
    return stem(value) if isinstance(value, str) and re.fullmatch(r"[a-z]+", value) else None


def _said_count(n: int, noun: str, ev: Evidence) -> bool:
    """Whether the conversation said this count: the user gave the number, or a message said it of the noun ("4
    projects", "four of the projects")."""
    words = [re.escape(w) for w, v in NUMBER_WORDS.items() if v == n and len(w) > 1] + [str(n)]
    number = rf"(?<![\d.,-])\b(?:{'|'.join(words)})\b(?![.,]\d|-)"
    if re.search(number, ev.user_lower):
        return True
    head = re.escape(singular(noun)[:-1] if len(singular(noun)) > 3 else singular(noun))
    return bool(re.search(rf"{number}(?:\s+[\w'-]+){{0,3}}?\s+{head}", ev.said_lower))


def _without_values(text: str) -> str:
    for v in sorted(extract(text), key=lambda v: -v.start):
        text = text[: v.start] + " " + text[v.start + len(v.raw) :]
    return EMAIL.sub(" ", re.sub(r"\bhttps?://\S+", " ", text))
