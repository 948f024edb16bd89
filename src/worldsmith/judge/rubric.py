"""Evaluating rubric criteria that are machine-checkable: state, call and answer criteria.

Shared by task validation (is the goal already met by the initial state? do pointers
resolve?), by the judge (did the episode meet it?) and by the rollouts' user simulator (has
its goal been met yet?), so all three read a criterion the same way.

- `state`: the assertion on a world state: a record by its key compared with the gold end
  state, a guard that nothing else changed, or a value at a JSON Pointer.
- `call`: a tool call that must happen (a *successful* call of that tool whose arguments
  match the constraints; `order` asks for them in that order; `after_user_gives`: only after
  the user said the value) or must not (no successful call: an attempt the tool refused
  changed nothing).
- `answer`: each value is conveyed in some reply of the agent (`answers.mentions`: numbers
  and dates in any format, a negated mention does not count).
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
from typing import Any

import jsonpatch
from jsonpointer import EndOfList, JsonPointer, JsonPointerException

from worldsmith.judge.answers import agent_texts, declines, mentions
from worldsmith.records import Criterion, CriterionResult, Task, Trajectory

MISSING = object()  # what `resolve` returns where a pointer names nothing (None is a value)


def resolve(state: Any, pointer: str) -> Any:
    """The value at `pointer`, or MISSING."""
    try:
        value = JsonPointer(pointer).resolve(state)
    except (JsonPointerException, TypeError, KeyError, IndexError):
        return MISSING
    return MISSING if isinstance(value, EndOfList) else value  # "/list/-" names no element


def pointer_problem(pointer: str | None) -> str | None:
    if not pointer or not isinstance(pointer, str):
        return "no pointer"
    try:
        JsonPointer(pointer)
    except JsonPointerException as exc:
        return f"not a JSON Pointer: {exc}"
    if pointer == "":
        return "the pointer names the whole state"
    return None


def parent_pointer(pointer: str) -> str:
    return pointer.rsplit("/", 1)[0]


def _num(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _eq(a: Any, b: Any) -> bool:
    """Equal as a checker should see it: numbers by value, strings by case and spacing,
    objects and lists element by element."""
    if a == b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_eq(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b, strict=True))
    na, nb = _num(a), _num(b)
    if na is not None and nb is not None:
        return na == nb
    if isinstance(a, str) and isinstance(b, str):
        return " ".join(a.split()).lower() == " ".join(b.split()).lower()
    return False


def _by_key(records: Any, key_field: str) -> dict[str, dict[str, Any]]:
    if not isinstance(records, list):
        return {}
    return {str(r.get(key_field)).strip().lower(): r for r in records if isinstance(r, dict)}


def _show(value: Any, n: int = 160) -> str:
    return json.dumps(value, default=str)[:n]


def check_record(criterion: Criterion, state: Any, initial: Any = None) -> tuple[bool, str]:
    """A state criterion on a collection: one record by its key (equals / absent / exists, or
    one field of it), or a guard (`unchanged_except`): every record but the listed keys is as
    it was in `initial`, none was added and none deleted."""
    c, kf = criterion.collection or "", criterion.key_field or "id"
    now = _by_key(state.get(c) if isinstance(state, dict) else None, kf)
    if criterion.op == "unchanged_except":
        allowed = {str(k).strip().lower() for k in criterion.value or []}
        before = _by_key(initial.get(c) if isinstance(initial, dict) else None, kf)
        changed = [k for k, r in before.items() if k not in allowed and k in now and not _eq(now[k], r)]
        deleted = [k for k in before if k not in allowed and k not in now]
        added = [k for k in now if k not in before and k not in allowed]
        if changed or deleted or added:
            parts = [
                f"{what}: {', '.join(ks[:5])}"
                for what, ks in (("changed", changed), ("deleted", deleted), ("added", added))
                if ks
            ]
            return False, f"/{c}: " + "; ".join(parts)
        return True, f"/{c}: the other {len(before) - len(allowed & set(before))} record(s) are as they were"
    key = str(criterion.key).strip().lower()
    record = now.get(key)
    if criterion.op == "absent":
        return record is None, f"{c} {criterion.key}: " + (
            "gone" if record is None else f"still there: {_show(record)}"
        )
    if criterion.op == "exists":
        return record is not None, f"{c} {criterion.key}: " + ("present" if record is not None else "missing")
    if record is None:
        return False, f"{c} {criterion.key}: missing"
    found = record if criterion.field is None else record.get(criterion.field, MISSING)
    if criterion.field is not None and found is MISSING:
        return False, f"{c} {criterion.key}.{criterion.field}: missing"
    if criterion.op == "equals":
        if criterion.field is None and isinstance(found, dict) and isinstance(criterion.value, dict):
            diff = {
                k: found.get(k, "missing")
                for k in sorted(set(found) | set(criterion.value))
                if not _eq(found.get(k), criterion.value.get(k))
            }
            return not diff, f"{c} {criterion.key}: " + (
                "as expected" if not diff else f"differs in {_show(diff)}; expected {_show(criterion.value)}"
            )
        return _eq(
            found, criterion.value
        ), f"{c} {criterion.key}.{criterion.field}: found {_show(found)}, expected {_show(criterion.value)}"
    if criterion.op == "not_equals":
        return not _eq(found, criterion.value), f"{c} {criterion.key}.{criterion.field}: found {_show(found)}"
    return False, f"{c} {criterion.key}: operator {criterion.op} is not checked on records"


def check_state(criterion: Criterion, state: Any, initial: Any = None) -> tuple[bool, str]:
    """(passed, evidence) for a `state` criterion on a world state (`initial`: the state the
    episode began with, for guards)."""
    if criterion.collection:
        return check_record(criterion, state, initial)
    found = resolve(state, criterion.pointer or "")
    shown = "missing" if found is MISSING else json.dumps(found, default=str)[:200]
    op, want = criterion.op, criterion.value
    if op == "exists":
        ok = found is not MISSING
    elif op == "absent":
        ok = found is MISSING
    elif found is MISSING:
        ok = False
    elif op == "equals":
        ok = _eq(found, want)
    elif op == "not_equals":
        ok = not _eq(found, want)
    elif op == "contains":
        if isinstance(found, str):
            ok = str(want).lower() in found.lower()
        elif isinstance(found, list):
            ok = any(_eq(x, want) for x in found)
        elif isinstance(found, dict):
            ok = str(want) in found
        else:
            ok = False
    elif op in ("gte", "lte"):
        a, b = _num(found), _num(want)
        ok = a is not None and b is not None and (a >= b if op == "gte" else a <= b)
    else:
        ok = False
    return ok, f"{criterion.pointer} {op} {json.dumps(want, default=str)[:80]}: found {shown}"


_WORDS = re.compile(r"[a-z0-9]+")


def _same_text(got: Any, want: Any) -> bool:
    """Free text (four words or more: a summary, a reason) matches when most of the expected
    content words are there; an exact string would drop good runs that word it otherwise."""
    if not (isinstance(got, str) and isinstance(want, str)) or len(want.split()) < 4:
        return False
    expected = {w for w in _WORDS.findall(want.lower()) if len(w) > 3}
    return bool(expected) and len(expected & set(_WORDS.findall(got.lower()))) >= 0.6 * len(expected)


def arguments_match(constraints: dict[str, Any], arguments: dict[str, Any]) -> bool:
    """Every constrained argument is present with an equal value (numbers, case and spacing
    tolerant; free text by its content words); arguments the criterion does not name are free."""
    return all(k in arguments and (_eq(arguments[k], v) or _same_text(arguments[k], v)) for k, v in constraints.items())


def record_names(traj: Trajectory, key: Any, through: bool = True) -> list[str]:
    """What else names the record whose key is `key`, as people name it: each of its values that no other record of
    its collection holds (a card's last four digits, a flight's number, a technician's name), not its key; and
    (`through`) the names of a record it alone refers to (a booking named by its flight's number, "the WS417
    booking", when no other booking is on that flight)."""
    if not isinstance(key, str) or not key:
        return []
    for state in (traj.world_states.initial, traj.world_states.final):
        for name, rows in state.items():
            if not isinstance(rows, list):
                continue
            # the record whose own id it is (a booking that holds a flight's id is not the flight)
            own_key = {f"{name.rstrip('s')}_id", "id", f"{name[:-3]}y_id" if name.endswith("ies") else ""}
            own = [r for r in rows if isinstance(r, dict) and any(r.get(k) == key for k in own_key if k)]
            if not own:
                continue
            others = [r for r in rows if isinstance(r, dict) and r is not own[0]]
            names = [
                str(v)
                for k, v in own[0].items()
                if isinstance(v, str | int)
                and not isinstance(v, bool)
                and str(v) != key
                and len(str(v)) >= 3
                and not any(str(o.get(k)) == str(v) for o in others)
            ]
            if through:  # the unique references among those names: the records they are the keys of
                names += [n for v in names for n in record_names(traj, v, through=False)]
            return names
    return []


def _user_said(traj: Trajectory, value: str, before_call: str) -> bool:
    """Whether a user message before the call's reply holds `value` (a description of several
    words, "the one with Dr Webster on Friday 10 April": half its words or more, in any order,
    as a user picks a record: "the Friday 10 April one")."""
    words = set(re.findall(r"[a-z0-9]{2,}", str(value).lower())) - {"the", "one", "with", "on", "of", "my", "a"}
    offered: list[str] = []  # the lines of the agent's last reply, each an option the user may pick by its words
    for m in traj.messages:
        if m["role"] == "tool" and m.get("tool_call_id") == before_call:
            return False
        text = m.get("content") or ""
        if m["role"] == "assistant" and text.strip():
            offered = [line for line in text.splitlines() if line.strip()]
        if m["role"] == "user" and offered and _picked(value, offered, text):
            return True  # "The Los Angeles one" for the option "rnl-6206: LAX (Los Angeles), April 20"
        if m["role"] == "user" and mentions(value, [text])[0]:
            return True
        if m["role"] == "user" and offered and _picks_record(traj, before_call, text):
            return True  # "the skin one" for the appointment whose reason is "skin rash", of the two it was shown
        if m["role"] == "user" and any(_named(n, text) for n in record_names(traj, value) if not n.isdigit()):
            return True  # the user picked the record by its name ("Rachel" for Rachel Obrien, tech-2802)
        shared = words & set(re.findall(r"[a-z0-9]{2,}", text.lower()))
        if m["role"] == "user" and len(words) >= 3 and len(shared) >= max(2, len(words) / 2):
            return True
    return False


def _picks_record(traj: Trajectory, call_id: str, reply: str) -> bool:
    """Whether the user's reply picks the record the call acts on from the others of its kind the agent was shown
    before it: by a value only that record holds among them ("the credit one" for the card whose type is credit, "the
    one on May 9" for the charge posted then), in the user's own words."""
    call = next((c for c in traj.calls if c.call_id == call_id), None)
    if call is None or not isinstance(call.arguments, dict):
        return False
    keys = {v for v in call.arguments.values() if isinstance(v, str) and v}
    shown = " ".join(m.get("content") or "" for m in traj.messages[: _message_of(traj, call_id)] if m["role"] == "tool")
    said = set(re.findall(r"[a-z]{4,}", reply.lower()))
    for rows in traj.world_states.initial.values():
        if not isinstance(rows, list):
            continue
        dicts = [r for r in rows if isinstance(r, dict)]
        own = [r for r in dicts if keys & {v for v in r.values() if isinstance(v, str)}]
        if len(own) != 1:
            continue
        key = next(k for k, v in own[0].items() if v in keys)
        others = [r for r in dicts if r is not own[0] and str(r.get(key)) in shown]
        if not others:
            continue
        for field, value in own[0].items():
            if field == key or isinstance(value, bool) or not isinstance(value, str | int | float):
                continue
            theirs = [str(o.get(field)) for o in others]
            if str(value) in theirs:
                continue
            if re.search(r"\d", str(value)) and not re.search(r"[a-z]{4,}", str(value).lower()):
                if mentions(str(value), [reply])[0]:
                    return True  # a date, an amount, a last four
                continue
            own_words = set(re.findall(r"[a-z]{4,}", str(value).lower()))
            if said & (own_words - {w for t in theirs for w in re.findall(r"[a-z]{4,}", t.lower())}):
                return True
        # by what its own records hold and only it: "the October one" (its flight leaves in October), "the Thursday
        # afternoon one"
        index = _records_by_key(traj.world_states.initial)
        theirs = set().union(*(_traits(o, index) for o in others))
        if said & (_traits(own[0], index) - theirs):
            return True
    return False


def _records_by_key(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every record of a state by its key: its first value that looks like one ("fl-7445"; a record's own id comes
    before the ids it refers to)."""
    out: dict[str, dict[str, Any]] = {}
    for rows in state.values():
        for r in rows if isinstance(rows, list) else []:
            if isinstance(r, dict):
                key = next((v for v in r.values() if isinstance(v, str) and re.fullmatch(r"[A-Za-z]+[-_]\d+", v)), None)
                if key:
                    out.setdefault(key, r)
    return out


def _traits(record: dict[str, Any], index: dict[str, dict[str, Any]], depth: int = 1) -> set[str]:
    """The words a person may pick a record by: its values' words, a date's month and weekday, a time's part of the
    day, and the same of the records it refers to (a booking's flight)."""
    out: set[str] = set()
    for value in record.values():
        if not isinstance(value, str):
            continue
        out |= set(re.findall(r"[a-z]{4,}", value.lower()))
        m = re.match(r"(\d{4})-(\d\d)-(\d\d)(?:[T ](\d\d):\d\d)?", value)
        if m:
            try:
                day = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            except ValueError:
                continue
            out |= {day.strftime("%B").lower(), day.strftime("%A").lower()}
            if m.group(4):
                hour = int(m.group(4))
                out.add("morning" if hour < 12 else "afternoon" if hour < 17 else "evening")
        elif depth and value in index and index[value] is not record:
            out |= _traits(index[value], index, depth - 1)
    return out


def _message_of(traj: Trajectory, call_id: str) -> int:
    """The index of the tool message that answers the call (the end of the conversation when none does)."""
    return next(
        (i for i, m in enumerate(traj.messages) if m["role"] == "tool" and m.get("tool_call_id") == call_id),
        len(traj.messages),
    )


def _picked(value: str, options: list[str], reply: str) -> bool:
    """Whether the user's reply picks, by its own words, the one option line (of several the agent listed) that holds
    `value`: a word of four letters or more that is on that line and on no other option's."""
    mine = [o for o in options if mentions(value, [o])[0]]
    others = [o for o in options if not mentions(value, [o])[0] and re.search(r"\b[a-z]+[-_]\d", o.lower())]
    if len(mine) != 1 or not others:
        return False
    said = set(re.findall(r"[a-z]{4,}", reply.lower()))
    own = set(re.findall(r"[a-z]{4,}", mine[0].lower())) - {
        w for o in others for w in re.findall(r"[a-z]{4,}", o.lower())
    }
    return bool(said & own)


def _named(name: str, text: str) -> bool:
    """Whether `text` names a person or thing by `name`, or by its first word when that is a capitalised name."""
    if mentions(name, [text])[0]:
        return True
    first = name.split()[0] if " " in name else ""
    return bool(re.fullmatch(r"[A-Z][a-z]{2,}", first)) and bool(re.search(rf"\b{re.escape(first)}\b", text))


def check_call(c: Criterion, traj: Trajectory) -> tuple[bool, str]:
    calls = [x for x in traj.calls if x.tool == c.tool or x.tool in c.same_read]
    if not c.must:
        done = [x for x in calls if x.ok]
        if done:
            return False, f"{c.tool} succeeded {len(done)} time(s), first with {json.dumps(done[0].arguments)[:120]}"
        return (
            True,
            f"{c.tool} was not called"
            if not calls
            else f"{c.tool} was attempted {len(calls)} time(s), never successfully",
        )
    ok = [x for x in calls if x.ok]
    match = [x for x in ok if isinstance(x.arguments, dict) and arguments_match(c.arguments, x.arguments)]
    if c.after_user_gives is not None and match:
        asked = [x for x in match if _user_said(traj, c.after_user_gives, x.call_id)]
        if not asked:
            return False, f"{c.tool} was called with {c.after_user_gives!r} before the user gave it (a guess)"
        match = asked
    if match:
        return True, f"matched call {match[0].call_id} {json.dumps(match[0].arguments)[:120]}"
    if ok:
        return (
            False,
            f"{c.tool} succeeded {len(ok)} time(s) but never with {json.dumps(c.arguments)[:120]}; "
            f"got {json.dumps(ok[0].arguments)[:120]}",
        )
    if calls:
        return (
            False,
            f"{c.tool} was called {len(calls)} time(s), never successfully "
            f"({calls[-1].executor}: {(calls[-1].error or '')[:100]})",
        )
    return False, f"{c.tool} was never called"


def check_answer(c: Criterion, traj: Trajectory) -> tuple[bool, str]:
    texts = agent_texts(traj)
    if not texts:
        return False, "the agent wrote no reply"
    if c.declines:
        said, evidence = declines(texts)
        if not said:
            return False, evidence
    fields = _result_fields(traj)
    results = [_conveyed(p, texts, fields, traj, c.any_of) for p in c.contains]
    missing = [p for p, (ok, _) in zip(c.contains, results, strict=True) if not ok]
    if c.any_of and len(missing) < len(c.contains):
        return True, next(e for ok, e in results if ok)[:300]
    if missing:
        return False, "; ".join(e for ok, e in results if not ok)[:300]
    return True, "; ".join(e for _, e in results)[:300]


def _conveyed(value: Any, texts: list[str], fields: set[str], traj: Trajectory, naming: bool) -> tuple[bool, str]:
    """`mentions`, and what people say instead: a list's items each in its own words ("Request rate; Error rate" as a
    numbered list), and, where the criterion asks for a record to be named (`naming`), any value that names it alone
    ("your card ending 3416" for crd-3504, "flight WS602" for fl-8602)."""
    said = mentions(value, texts, fields)
    if said[0]:
        return said
    for sep in ("; ", ", ") if isinstance(value, str) else ():  # a list said item by item (a table's rows)
        if sep in value:
            parts = [mentions(p, texts, fields) for p in value.split(sep)]
            if all(ok for ok, _ in parts):
                return True, f"each item of {value[:60]!r} is mentioned"
    if naming:
        for name in record_names(traj, value):
            got = mentions(name, texts, fields)
            if got[0]:
                return True, f"{value!r} named by its {name!r}: {got[1][:120]}"
    return said


def _result_fields(traj: Trajectory) -> set[str]:
    """The field names of the records the tools returned: "posted on" in a reply names posted_on, not the status
    "posted"."""
    out: set[str] = set()
    stack: list[Any] = []
    for m in traj.messages:
        if m.get("role") == "tool":
            try:
                stack.append(json.loads(m.get("content") or ""))
            except ValueError:
                continue
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            out |= {k for k in node if isinstance(k, str)}
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return out


def check_order(criteria: list[Criterion], traj: Trajectory) -> tuple[bool, str] | None:
    """For ordered `call` criteria: their first matching successful calls come in order."""
    ordered = sorted(
        (c for c in criteria if c.kind == "call" and c.must and c.order is not None), key=lambda c: c.order
    )
    if len(ordered) < 2:
        return None
    positions = []
    for c in ordered:
        idx = next(
            (
                i
                for i, x in enumerate(traj.calls)
                if (x.tool == c.tool or x.tool in c.same_read)
                and x.ok
                and isinstance(x.arguments, dict)
                and arguments_match(c.arguments, x.arguments)
            ),
            None,
        )
        if idx is None:
            return False, f"{c.tool} (step {c.order}) never matched"
        positions.append(idx)
    if positions != sorted(positions):
        return False, f"calls came in the order {positions}, expected ascending for {[c.tool for c in ordered]}"
    return True, f"calls in order {[c.tool for c in ordered]}"


def check_criterion(c: Criterion, task: Task, traj: Trajectory) -> CriterionResult | None:
    """The deterministic result of one criterion, or None for `judge` criteria."""
    if c.kind == "state":
        passed, evidence = check_state(c, traj.world_states.final, traj.world_states.initial)
    elif c.kind == "call":
        passed, evidence = check_call(c, traj)
    elif c.kind == "answer":
        passed, evidence = check_answer(c, traj)
    else:
        return None
    return CriterionResult(
        criterion_id=c.criterion_id, kind=c.kind, description=c.description, passed=passed, evidence=evidence
    )


def check_writes(task: Task, traj: Trajectory) -> tuple[bool, str] | None:
    """Whether the episode's net effect on the world is the gold's: replaying its patches, every
    record that ends changed, added or deleted is one the gold changes that way, each changed
    field holds its gold value, and no other collection of the world changed at all (the
    rubric's guards cover only the collections the gold touched). By net effect, as τ²-bench
    compares end states: a field written several times on its way to the gold value (a balance
    debited in two payments) is right, and a call that changed nothing (a hand-off, a note) is
    no write. The world's rules are the executor's, enforced on each write as it was made.
    None for tasks whose rubric does not name the gold records (free-form tasks)."""
    records = [c for c in task.rubric.criteria if c.kind == "state" and c.collection]
    if task.blueprint is None or not records:
        return None
    gold: dict[tuple[str, str], dict[str, Any] | None] = {}
    keys: dict[str, str] = {}
    for c in records:
        keys[c.collection or ""] = c.key_field or "id"
        k = (c.collection or "", str(c.key).strip().lower())
        if c.op == "equals" and c.field is None and isinstance(c.value, dict):
            gold[k] = c.value
        elif c.op == "absent":
            gold[k] = None
    start = traj.world_states.initial
    end = copy.deepcopy(start)
    for i, entry in enumerate(traj.world_states.patches, 1):
        if entry.patch:
            try:
                end = jsonpatch.JsonPatch(entry.patch).apply(end)
            except (jsonpatch.JsonPatchException, JsonPointerException) as exc:
                return False, f"write {i} ({entry.tool}) does not replay: {exc}"
    writes = sum(bool(e.patch) for e in traj.world_states.patches)
    problem = _stray_collection(start, end, keys) or _net_problem(start, end, keys, gold)
    if problem:
        return False, problem
    return True, f"{writes} write(s); their net effect is the goal's"


def check_no_writes(task: Task, traj: Trajectory) -> tuple[bool, str] | None:
    """A task whose gold chain changes nothing (a look-up, an already-done request, a refusal, an
    irrelevance) is done with no write at all: an update that sets what the record already holds
    changes nothing by net effect, but it is an action the user never asked for, made without
    reading whether it was needed, and a model trained on it learns to write on a question. A call
    the world does not execute (a hand-off, a note) is no write. None for tasks whose gold writes,
    and for free-form tasks."""
    bp = task.blueprint
    if bp is None or any(c.patch for c in bp.calls):
        return None
    patched = {p.call_id for p in traj.world_states.patches if p.patch}
    gold_tools = {c.tool for c in bp.calls}  # they ran on this world and changed nothing
    writes = [
        c
        for c in traj.calls
        if c.ok and (c.call_id in patched or (c.executor == "code" and not c.read_only and c.tool not in gold_tools))
    ]
    if writes:
        shown = ", ".join(f"{c.name}({_show(c.arguments, 60)})" for c in writes[:3])
        family = bp.family or task.difficulty
        return False, f"{shown} wrote to the world; the task ({family}) asks for no change"
    return True, "no write; the task asks for no change"


def check_no_calls(task: Task, traj: Trajectory) -> tuple[bool, str] | None:
    """An irrelevance task (no tool of the bundle does what the user asks) is done with no call on the world: a model
    that only ever sees calls learns to call everything (Toucan's irrelevance examples), so the example to keep
    answers plainly that it cannot (a hand-off to a person beside that is fine). None for every other family."""
    if task.blueprint is None or task.family != "irrelevance":
        return None
    # a hand-off to a person (a call nothing runs on the world, which reads and changes nothing) is what a capable
    # assistant rightly adds to its decline; every other call counts
    patched = {p.call_id for p in traj.world_states.patches if p.patch}
    called = [c for c in traj.calls if c.executor == "code" or c.read_only or c.call_id in patched]
    if called:
        shown = ", ".join(f"{c.name}({_show(c.arguments, 60)})" for c in called[:3])
        return False, f"{shown} called; no tool applies to this request"
    return True, "no call; no tool applies to this request"


def _stray_collection(start: Any, end: Any, keyed: dict[str, str]) -> str | None:
    """A collection the gold never touched that the episode changed (any record, in any way)."""
    names = {*(start if isinstance(start, dict) else {}), *(end if isinstance(end, dict) else {})}
    for name in sorted(names - set(keyed)):
        before, after = (s.get(name) if isinstance(s, dict) else None for s in (start, end))
        if not _eq(before, after):
            return f"{name} changed, a collection the task leaves alone"
    return None


def _net_problem(
    start: Any, end: Any, keys: dict[str, str], gold: dict[tuple[str, str], dict[str, Any] | None]
) -> str | None:
    """A record of a touched collection whose net change is not the gold's."""
    for collection, kf in keys.items():
        before_recs, after_recs = (
            _by_key(s.get(collection) if isinstance(s, dict) else None, kf) for s in (start, end)
        )
        for key in sorted(set(before_recs) | set(after_recs)):
            old, new = before_recs.get(key), after_recs.get(key)
            if _eq(old, new):
                continue
            if (collection, key) not in gold:
                return f"{collection} {key} changed, which the task leaves alone"
            want = gold[(collection, key)]
            if want is None:
                if new is not None:
                    return f"{collection} {key} was edited, and the task deletes it"
                continue
            if new is None:
                return f"{collection} {key} was deleted, and the task keeps it"
            wrong = {
                f: v
                for f, v in new.items()
                if not _eq(v, (old or {}).get(f, MISSING)) and not _eq(v, want.get(f, MISSING))
            }
            if wrong:
                goal = {f: want.get(f) for f in wrong}
                return f"{collection} {key} ends with {_show(wrong, 80)}; the goal is {_show(goal, 80)}"
    return None


def goal_met(task: Task, traj: Trajectory) -> bool:
    """Whether every machine-checkable criterion of the task holds on the episode so far
    (what the user simulator is told, so a satisfied user ends the episode)."""
    results = [r for c in task.rubric.criteria if (r := check_criterion(c, task, traj)) is not None]
    order = check_order(task.rubric.criteria, traj)
    return bool(results) and all(r.passed for r in results) and (order is None or order[0])
