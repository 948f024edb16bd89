"""Blueprint tasks (APIGen-MT): a gold chain of calls sampled over an agent's bound tools with
arguments drawn from a seeded world, executed on a copy of that world before the task is
accepted; a chain whose calls do not all succeed is refused with the reason. The rubric is
read off the execution (tau2-bench): the gold end state of every record the chain changed,
guards that nothing else in those collections changed (nothing at all for refusal and
irrelevance tasks), the values the user asked to learn, and exact calls only where the end
state cannot tell (reads).

Everything here is code and seeded: the same agent, world, difficulty and seed give the
same task. The user's request is written afterwards (tasks/stage.py), around `facts`.
"""

from __future__ import annotations

import copy
import datetime as dt
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from faker import Faker

from worldsmith.records import (
    Blueprint,
    CollectionSpec,
    Criterion,
    FieldSpec,
    GoldCall,
    PolicyRule,
    Rubric,
    ToolBinding,
    ToolSpec,
    World,
    content_id,
)
from worldsmith.vocab import READ_ACTIONS, WRITE_ACTIONS
from worldsmith.worldmodel.bindings import chain_pairs
from worldsmith.worldmodel.infer import words
from worldsmith.worldmodel.packs import execute_call as execute
from worldsmith.worldmodel.packs import seed_world
from worldsmith.worldmodel.runner import argument_problem
from worldsmith.worldmodel.seed import _value, variant
from worldsmith.worldmodel.state import apply_patch


class BlueprintFailure(Exception):
    """A blueprint that cannot be made or whose gold chain fails; `reason` is groupable."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


@dataclass
class Step:
    tool: ToolSpec
    arguments: dict[str, Any]


@dataclass
class Draft:
    """A sampled, executed blueprint before the request is written."""

    difficulty: str
    initial: dict[str, Any]
    steps: list[Step]
    calls: list[GoldCall] = field(default_factory=list)
    end_state: dict[str, Any] = field(default_factory=dict)
    facts: dict[str, str] = field(default_factory=dict)  # what the user knows and says (the request must carry them)
    asked: dict[str, str] = field(default_factory=dict)  # what the user wants to learn -> value
    withheld: dict[str, str] = field(default_factory=dict)  # clarification: known, left out of the request
    goal: str = ""  # the goal in plain words ("set the status of order ord-1042 to cancelled"), for the request
    wants: list[str] = field(default_factory=list)  # get: the fields the user asks about
    filter_text: str = ""  # list: "status is pending"
    entity: str = ""  # what the request is about: a request that never names it is not this task's
    rule: PolicyRule | None = None
    # what the user asks for, in parts the request grammar words (prompts/user_request.yaml):
    # {"kind": "update", "who": "order ord-1042", "field": "status", "value": "cancelled"}, one per intent
    intents: list[dict[str, str]] = field(default_factory=list)


def bound_tools(world: World, tools: list[ToolSpec]) -> list[ToolSpec]:
    return [t for t in tools if t.binding is not None and t.binding.world_id == world.world_id and t.binding.executed]


def _fresh(world: World, c: CollectionSpec, f: FieldSpec, state: dict[str, Any], rng: random.Random, seed: int) -> Any:
    """A value for a create or an update: an existing key for a reference, a new value otherwise."""
    keys = {x.name: [r[x.key] for r in state.get(x.name, [])] for x in world.collections}
    fake = Faker("en_US")
    fake.seed_instance(seed)
    used = {r.get(f.name) for r in state.get(c.name, [])}
    for _ in range(8):
        value = _value(f, fake, rng, dt.date.fromisoformat(world.today), keys, rng.randint(100, 999), c.entity)
        if value not in used:
            return value
    if f.ref is not None or f.enum or f.type == "boolean":
        return value
    n = 2
    while (fresh := variant(value, n)) in used:  # a field with few documented values: one like them
        n += 1
    return fresh


def _spoken(value: Any) -> str:
    return str(value)


def _candidates(c: CollectionSpec, state: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """The collection's records in a seeded order."""
    records = list(state.get(c.name, []))
    rng.shuffle(records)
    return records


def _forbidden(rules: list[PolicyRule], c: CollectionSpec, action: str, record: dict[str, Any]) -> PolicyRule | None:
    for r in rules:
        if (
            r.kind == "forbid"
            and r.collection == c.name
            and r.action == action
            and r.field
            and str(record.get(r.field)) in r.values
        ):
            return r
    return None


def _referenced(world: World, c: CollectionSpec, state: dict[str, Any], key: Any) -> bool:
    return any(
        r.get(f.name) == key
        for other in world.collections
        for f in other.fields
        if f.ref == c.name
        for r in state.get(other.name, [])
    )


def _naming_args(b: ToolBinding, c: CollectionSpec, record: dict[str, Any]) -> dict[str, Any]:
    """The arguments that name `record` for a get, update or delete: its key, and the fields a
    crawled tool names it by too (owner + repo + number)."""
    out = {b.key_param: record[c.key]} if b.key_param else {}
    out.update({p: record[f] for p, f in b.match.items()})
    return out


def _who(b: ToolBinding, c: CollectionSpec, named: dict[str, Any]) -> str:
    """The record as the user names it: "order ord-1042", or "the issue with owner acme, repo api and
    issue number 7" when the tool names it by fields."""
    extra = [f"{said(p)} {v}" for p, v in named.items() if p != b.key_param]
    if b.key_param:
        return f"{c.entity} {named[b.key_param]}" + (f" ({', '.join(extra)})" if extra else "")
    return f"the {c.entity} with " + (", ".join(extra[:-1]) + " and " + extra[-1] if len(extra) > 1 else extra[0])


def _listed(parts: Any) -> str:
    """ "a, b and c"."""
    items = list(parts)
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def _update_intent(who: str, changes: dict[str, Any]) -> dict[str, str]:
    if len(changes) == 1:
        ((k, v),) = changes.items()
        return {"kind": "update", "who": who, "field": k.replace("_", " "), "value": str(v)}
    return {
        "kind": "update_many",
        "who": who,
        "changes": _listed(f"{k.replace('_', ' ')} to {v}" for k, v in changes.items()),
    }


def _prefixed(prefix: str, slots: dict[str, str]) -> dict[str, str]:
    return {f"{prefix}{k}": v for k, v in slots.items()}


def said(param: str) -> str:
    """A parameter as a person says it: `entityName` and `entity_name` both "entity name"."""
    return " ".join(words(param))


def _fact_name(b: ToolBinding, c: CollectionSpec, param: str) -> str:
    return c.key.replace("_", " ") if param == b.key_param else said(param)


def _search_word(c: CollectionSpec, record: dict[str, Any], rng: random.Random) -> str | None:
    """A word of one of the record's text fields, for a search parameter to find it by."""
    words = sorted(
        {
            w
            for f in c.fields
            if f.type == "string"
            and not f.enum
            and f.ref is None
            and f.format not in ("email", "url", "date", "datetime")
            for w in str(record.get(f.name, "")).split()
            if len(w) >= 4 and w.isalpha()
        }
    )
    return rng.choice(words).lower() if words else None


def _list_filters(t: ToolSpec, c: CollectionSpec, rng: random.Random) -> dict[str, str]:
    """The filters a list call uses (parameter -> field): every required one, and at most one
    optional one, not a yes/no flag, as a person narrows a list (a crawled search tool has many
    optional filters; naming all of them makes a request no one writes)."""
    b = t.binding
    required = set((t.input_schema or {}).get("required", [])) if t.source == "mcp" else set(b.params)
    fields = {f.name: f for f in c.fields}
    out = {p: f for p, f in b.params.items() if p in required}
    optional = sorted(
        p
        for p, f in b.params.items()
        if p not in required and fields.get(f) is not None and fields[f].type != "boolean"
    )
    if optional and rng.random() < 0.7:
        p = rng.choice(optional)
        out[p] = b.params[p]
    return out


def _required_ignored(t: ToolSpec) -> dict[str, Any]:
    """Values for required parameters the binding ignores (an output format): the schema's default
    or first allowed value, as a user who does not care would leave them."""
    props = (t.input_schema or {}).get("properties", {})
    out: dict[str, Any] = {}
    for p in (t.input_schema or {}).get("required", []):
        if p in (t.binding.ignored if t.binding else {}):
            spec = props.get(p, {})
            if "default" in spec:
                out[p] = spec["default"]
            elif spec.get("enum"):
                out[p] = spec["enum"][0]
            elif spec.get("type") in ("integer", "number"):
                out[p] = spec.get("minimum", 1)
            elif spec.get("type") == "boolean":
                out[p] = False
    return out  # a required value it cannot fill: the gold call fails its schema check (run_gold)


def _schema_value(spec: dict[str, Any], rng: random.Random) -> Any:
    """A value a user could ask for, from a parameter's JSON schema (an operation's own parameter)."""
    if spec.get("enum"):
        return rng.choice(spec["enum"])
    typ = spec.get("type")
    if typ == "integer":
        lo = int(spec.get("minimum", 1))
        return rng.randint(lo, int(spec.get("maximum", lo + 13)))
    if typ == "number":
        lo = float(spec.get("minimum", 1))
        return round(rng.uniform(lo, float(spec.get("maximum", lo + 200))), 2)
    if typ == "boolean":
        return rng.random() < 0.5
    return None


def _action_goal(t: ToolSpec, args: dict[str, Any]) -> str:
    """A pack action's call in its author's words (the `goal` template: "renew loan {loan_id} for
    {days} more days"), or the tool's name and the values when it has none that fits."""
    template = str(t.extra.get("goal") or "")
    try:
        goal = template.format(**args) if template else ""
    except (KeyError, IndexError, ValueError):
        goal = ""
    return goal or f"{t.name.replace('_', ' ')} " + " ".join(f"{v}" for v in args.values())


def _plan_operation(
    world: World, t: ToolSpec, state: dict[str, Any], rules: list[PolicyRule], rng: random.Random, seed: int, only: Any
) -> Draft | None:
    """A call of a domain pack's action that succeeds on `state`: the record from the collection's
    records (seeded order), the other arguments from the fields they set or their schemas; each
    candidate is executed, as the action's own rules decide what is allowed."""
    b = t.binding
    c = world.collection(b.collection)
    fields = {f.name: f for f in c.fields}
    props = (t.input_schema or {}).get("properties", {})
    required = set((t.input_schema or {}).get("required", []))
    records = [r for r in _candidates(c, state, rng) if only is None or r[c.key] == only] if b.key_param else [{}]
    for record in records[:12]:
        for _ in range(3 if b.key_param else 24):  # an action that makes a record (book_flight): only values to try
            args: dict[str, Any] = {b.key_param: record[c.key]} if b.key_param else {}
            for p, spec in props.items():
                if p in args:
                    continue
                if p in b.params:
                    f = fields.get(b.params[p])
                    value = _fresh(world, c, f, state, rng, seed) if f is not None else _schema_value(spec, rng)
                else:
                    value = _schema_value(spec, rng)
                if value is None and p in required:
                    break
                if value is not None and (p in required or rng.random() < 0.5):
                    args[p] = value
            else:
                out = execute(world, b, state, args)
                if not out.ok:
                    continue
                d = Draft("", state, [Step(t, args)])
                d.facts.update({_fact_name(b, c, p): _spoken(v) for p, v in args.items()})
                d.goal = _action_goal(t, args)
                d.intents = [{"kind": "operation", "text": d.goal}]
                if not out.patch and isinstance(out.result, dict):  # a read: what it says is the answer
                    scalars = [
                        (k, v) for k, v in out.result.items() if isinstance(v, str | int | float) and k not in args
                    ]
                    d.asked.update({f"{k.replace('_', ' ')}": _spoken(v) for k, v in scalars[:2]})
                return d
    return None


def plan_call(
    world: World,
    t: ToolSpec,
    state: dict[str, Any],
    rules: list[PolicyRule],
    rng: random.Random,
    seed: int,
    only: Any = None,
) -> Draft | None:
    """One allowed call of tool `t` on `state` (on the record keyed `only`, when given) with its
    facts and what the user asks, or None when the world offers no record it could act on."""
    b = t.binding
    assert b is not None
    c = world.collection(b.collection)
    assert c is not None
    fields = {f.name: f for f in c.fields}
    d = Draft("", state, [])
    if b.operation is not None:
        return _plan_operation(world, t, state, rules, rng, seed, only)
    if b.action == "create":
        args = {p: _fresh(world, c, fields[f], state, rng, seed) for p, f in b.params.items()}
        d.facts.update({said(p): _spoken(v) for p, v in args.items()})
        d.steps.append(Step(t, {**args, **_required_ignored(t)}))
        d.goal = f"create a new {c.entity} with " + ", ".join(f"{said(p)} {v}" for p, v in args.items())
        d.intents = [
            {"kind": "create", "entity": c.entity, "values": _listed(f"{said(p)} {v}" for p, v in args.items())}
        ]
        return d
    if b.action == "list":
        pool = [r for r in state.get(c.name, []) if all(r.get(k) == v for k, v in b.fixed.items())]
        if not pool:
            return None
        record = rng.choice(pool)
        args = {p: record[f] for p, f in _list_filters(t, c, rng).items()}
        searched = {p: w for p in b.search if (w := _search_word(c, record, rng))}
        if b.search and not searched:
            return None
        args.update(searched)
        args.update(_required_ignored(t))
        d.steps.append(Step(t, args))
        d.facts.update({said(p): _spoken(args[p]) for p in (*b.params, *searched) if p in args})
        on = " and ".join(
            [
                *(
                    f"{k.replace('_', ' ')} is {v}"
                    for k, v in {**{f: args[p] for p, f in b.params.items() if p in args}, **b.fixed}.items()
                ),
                *(f"{said(p)} matches {w!r}" for p, w in searched.items()),
            ]
        )
        d.goal = (
            f"find the {c.name.replace('_', ' ')}"
            + (f" whose {on}" if on else "")
            + f" and know their {c.key.replace('_', ' ')}s"
        )
        d.filter_text = on
        out = execute(world, b, state, args)
        if not out.ok:
            return None
        hits = out.result.get(c.name, [])
        plural = c.name.replace("_", " ")
        d.intents = [{"kind": "list" if on else "list_all", "plural": plural, "on": on, "key": c.key.replace("_", " ")}]
        if len(hits) > 3:
            d.asked[f"number of {plural}" + (f" whose {on}" if on else "")] = str(len(hits))
            d.goal = f"know how many {plural} there are" + (f" whose {on}" if on else "")
            d.intents = [{"kind": "count" if on else "count_all", "plural": plural, "on": on}]
        else:
            d.asked.update(
                {
                    f"{c.key.replace('_', ' ')} of a matching {c.entity}" + (f" ({i + 1})" if i else ""): r[c.key]
                    for i, r in enumerate(hits)
                }
            )
        return d
    for record in _candidates(c, state, rng):
        if only is not None and record[c.key] != only:
            continue
        key = record[c.key]
        named = _naming_args(b, c, record)
        who = _who(b, c, named)
        if b.action == "get":
            # what the user does not know yet: not the fields they name the record by. A record with nothing
            # else (a crawled settlement keyed by its order and payment) gives no look-up: asking for a value the
            # request states teaches nothing
            shown = [
                f
                for f in c.fields
                if f.ref is None and f.format not in ("email", "phone") and f.name not in b.match.values()
            ] or [f for f in c.fields if f.name not in b.match.values()]
            if not shown:
                return None
            want = rng.sample(shown, min(len(shown), 1 + (rng.random() < 0.4)))
            d.steps.append(Step(t, {**named, **_required_ignored(t)}))
            d.facts.update({_fact_name(b, c, p): _spoken(v) for p, v in named.items()})
            d.asked.update({f"{f.name.replace('_', ' ')} of {key}": _spoken(record[f.name]) for f in want})
            d.goal = f"know the {' and '.join(f.name.replace('_', ' ') for f in want)} of {who}"
            d.intents = [{"kind": "get", "who": who, "wants": " and ".join(f.name.replace("_", " ") for f in want)}]
            d.wants = [f.name.replace("_", " ") for f in want]
            return d
        if b.action == "delete":
            if _forbidden(rules, c, "delete", record) or _referenced(world, c, state, key):
                continue
            d.steps.append(Step(t, {**named, **_required_ignored(t)}))
            d.facts.update({_fact_name(b, c, p): _spoken(v) for p, v in named.items()})
            d.goal = f"delete {who}"
            d.intents = [{"kind": "delete", "who": who}]
            return d
        if b.action == "update":
            if _forbidden(rules, c, "update", record):
                continue
            args: dict[str, Any] = {**named, **_required_ignored(t)}
            ok = True
            for p, fname in b.params.items():
                f = fields[fname]
                flow = c.transitions.get(fname)
                if flow is not None:
                    nxt = flow.get(str(record.get(fname)), [])
                    if not nxt:
                        ok = False
                        break
                    args[p] = rng.choice(nxt)
                elif f.enum:
                    others = [v for v in f.enum if v != record.get(fname)]
                    args[p] = rng.choice(others)
                else:
                    args[p] = _fresh(world, c, f, state, rng, seed)
            for fname, value in b.fixed.items():
                flow = c.transitions.get(fname)
                if record.get(fname) == value or (
                    flow is not None and value not in flow.get(str(record.get(fname)), [])
                ):
                    ok = False
            if not ok:
                continue
            d.steps.append(Step(t, args))
            d.facts.update({_fact_name(b, c, p): _spoken(v) for p, v in named.items()})
            changes = {**{fields[f].name: args[p] for p, f in b.params.items()}, **b.fixed}
            d.facts.update(
                {f"new {k.replace('_', ' ')}": _spoken(v) for k, v in changes.items() if k in b.params.values()}
            )
            d.goal = " and ".join(f"set the {k.replace('_', ' ')} of {who} to {v}" for k, v in changes.items())
            d.intents = [_update_intent(who, changes)]
            return d
    return None


def run_gold(world: World, steps: list[Step], initial: dict[str, Any]) -> tuple[list[GoldCall], dict[str, Any]]:
    """Execute the chain on a copy of `initial`; every call must succeed."""
    state = copy.deepcopy(initial)
    calls: list[GoldCall] = []
    for step in steps:
        b = step.tool.binding
        assert b is not None
        problem = argument_problem(step.tool, step.arguments)
        if problem:  # the agent's identical call would be refused before it ran
            raise BlueprintFailure("gold_call_invalid", f"{step.tool.name}({step.arguments}): {problem}")
        out = execute(world, b, state, step.arguments)
        if not out.ok:
            raise BlueprintFailure(
                "gold_call_failed", f"{step.tool.name}({step.arguments}): {out.error[0]}: {out.error[1]}"
            )
        calls.append(
            GoldCall(
                tool=step.tool.name,
                tool_id=step.tool.tool_id,
                arguments=step.arguments,
                ok=True,
                result=out.result,
                patch=out.patch,
                executor="code",
                state_hash=content_id(state),
            )
        )
        state = apply_patch(state, out.patch)
    return calls, state


def sample_blueprint(
    world: World, tools: list[ToolSpec], difficulty: str, seed: int, records: tuple[int, int] = (3, 5)
) -> Draft:
    """A drafted, executed blueprint for one agent's bound tools, or BlueprintFailure."""
    rng = random.Random(seed)
    usable = bound_tools(world, tools)
    if not usable and difficulty != "irrelevance":
        raise BlueprintFailure("no_bound_tools", f"no tool of the bundle acts on world {world.domain!r}")
    state = seed_world(world, seed, records)
    rules = world.rules
    # a pack's action is a write unless it says it only reads
    writes = [
        t
        for t in usable
        if t.binding.action in WRITE_ACTIONS or (t.binding.operation is not None and not t.hints.readOnlyHint)
    ]

    def one(pool: list[ToolSpec], s: dict[str, Any]) -> Draft:
        for t in rng.sample(pool, len(pool)):
            d = plan_call(world, t, s, rules, rng, seed)
            if d is not None:
                return d
        raise BlueprintFailure("no_valid_call", f"no record of the world fits any of {[t.name for t in pool]}")

    if difficulty in ("single_call", "error_recovery", "clarification"):
        pool = writes if difficulty == "clarification" and writes else usable
        d = one(pool, state)
        if difficulty == "clarification":
            b0 = d.steps[0].tool.binding
            if b0.operation is not None:  # an action's values are one request (borrow this book for that member)
                raise BlueprintFailure(
                    "nothing_to_withhold", f"{d.steps[0].tool.name} is an action, not a field change"
                )
            c0 = world.collection(b0.collection)
            naming = {_fact_name(b0, c0, p) for p in (b0.key_param, *b0.match) if p}  # what names the record
            movable = [
                k for k in d.facts if not k.endswith(" id") and k != c0.key.replace("_", " ") and k not in naming
            ]
            if not movable:
                raise BlueprintFailure(
                    "nothing_to_withhold", f"{d.steps[0].tool.name} has no value the user could leave out"
                )
            hold = rng.choice(movable)
            d.withheld[hold] = d.facts.pop(hold)
            b, c = d.steps[0].tool.binding, world.collection(d.steps[0].tool.binding.collection)
            if b.action == "create":
                d.goal = f"create a new {c.entity} with " + ", ".join(f"{k} {v}" for k, v in d.facts.items())
                d.intents = [
                    {"kind": "create", "entity": c.entity, "values": _listed(f"{k} {v}" for k, v in d.facts.items())}
                    if d.facts
                    else {"kind": "create_bare", "entity": c.entity}
                ]
            else:  # an update: the user says what to change, not yet to what
                a = d.steps[0].arguments
                named = {p: a[p] for p in (b.key_param, *b.match) if p in a}
                if not named:  # an action that makes a record (book_flight): nothing names what to change
                    raise BlueprintFailure("nothing_to_withhold", f"{d.steps[0].tool.name} names no record to change")
                who = _who(b, c, named)
                d.goal = f"change the {hold.removeprefix('new ')} of {who}"
                d.intents = [{"kind": "change_unsaid", "who": who, "field": hold.removeprefix("new ")}]
    elif difficulty == "multi_call":
        d = one(usable, state)
        first = d.steps[0].tool
        # another tool, and not one bound to the very same read (a server's get_echojs_top and get_echojs_latest: a
        # request asked "how many echojs are there? Also, how many echojs are there?")
        second = [t for t in usable if t is not first and not _same_read(t.binding, first.binding)] or usable
        after = apply_patch(state, execute(world, first.binding, state, d.steps[0].arguments).patch)
        e = one(second, after)
        same = e.steps[0].tool is first or _same_read(e.steps[0].tool.binding, first.binding)
        if (same and e.steps[0].arguments == d.steps[0].arguments) or e.intents == d.intents:
            raise BlueprintFailure("no_second_call", "the second call repeats the first")
        d.steps += e.steps
        d.facts.update({f"other {k}" if k in d.facts and d.facts[k] != v else k: v for k, v in e.facts.items()})
        d.asked.update(e.asked)
        d.goal = f"{d.goal}; and {e.goal}"
        d.intents += e.intents
    elif difficulty == "dependent_calls":
        d = _dependent(world, usable, state, rng, seed)
    elif difficulty == "refusal":
        d = _refusal(world, usable, state, rules, rng)
    elif difficulty == "irrelevance":
        d = _irrelevance(world, usable, state, rng)
    elif difficulty == "aggregate":
        d = _aggregate(world, usable, state, rng, seed)
    elif difficulty == "already_done":
        d = _already_done(world, usable, state, rng)
    elif difficulty == "conditional":
        d = _conditional(world, usable, state, rng)
    else:
        raise BlueprintFailure("unknown_difficulty", difficulty)
    d.difficulty, d.initial = difficulty, state
    worded_by_pack = len(d.steps) == 1 and bool(d.steps[0].tool.extra.get("goal"))
    if not worded_by_pack:  # a pack's action is asked for in its author's words ("borrow book bk-1 for ..."), as is
        d.entity = d.entity or (world.collection(d.steps[0].tool.binding.collection).entity if d.steps else "")
    d.calls, d.end_state = run_gold(world, d.steps, state)
    for step, call in zip(d.steps, d.calls, strict=True):
        if step.tool.binding.action == "create":  # the user wants to know the id the new record got
            c = world.collection(step.tool.binding.collection)
            d.asked[f"id of the new {c.entity}"] = call.result[c.key]
        elif step.tool.binding.operation is not None:  # an action that made a record (a booking): its id too
            for op in call.patch:
                made = world.collection(op["path"].split("/")[1]) if op["op"] == "add" else None
                if made is not None and op["path"].endswith("/-") and isinstance(op.get("value"), dict):
                    d.asked[f"id of the new {made.entity}"] = op["value"].get(made.key)
    return d


def _dependent(world: World, usable: list[ToolSpec], state: dict[str, Any], rng: random.Random, seed: int) -> Draft:
    """A chain where the first call's output feeds the second: a list whose result names the
    record an update or delete then acts on (not a get: the list showed it), or a get whose
    reference field names the record of another collection the next get reads."""
    options = chain_pairs(world, usable)
    rng.shuffle(options)
    for first, second in options:
        d = plan_call(world, first, state, world.rules, rng, seed)
        if d is None:
            continue
        out = execute(world, first.binding, state, d.steps[0].arguments)
        c1 = world.collection(first.binding.collection)
        if first.binding.action == "list":
            hits = out.result.get(c1.name, [])
            if len(hits) != 1:
                continue  # the user means the one record the filter finds; several would make the task ambiguous
            key = hits[0][c1.key]
        else:
            ref = next(f for f in c1.fields if f.ref == second.binding.collection)
            key = out.result[ref.name]
        c2 = world.collection(second.binding.collection)
        e = plan_call(world, second, state, world.rules, rng, seed, only=key)
        if e is None:
            continue
        d.steps += e.steps
        sb = second.binding
        # the chain finds what names the second record (its key, or the fields a crawled tool names it by), not the user
        hidden = {c2.key.replace("_", " "), *(_fact_name(sb, c2, p) for p in (sb.key_param, *sb.match) if p)}
        d.asked = dict(e.asked)  # the first call's result is a means, what the second finds is the goal
        d.facts.update({k: v for k, v in e.facts.items() if k not in hidden})
        if first.binding.action == "get" and e.wants:
            who = f"{c1.entity} {d.steps[0].arguments[first.binding.key_param]}"
            d.goal = f"know the {' and '.join(e.wants)} of the {c2.entity} of {who}"
            d.intents = [{"kind": "get_via", "wants": " and ".join(e.wants), "entity": c2.entity, "who": who}]
        else:
            d.goal = (
                f"find the {c1.entity} whose {d.filter_text}, "
                f"then {e.goal.replace(f'{c2.entity} {key}', f'that {c2.entity}')}"
            )
            then = {
                k: v.replace(f"{c2.entity} {key}", "it" if k == "who" else f"that {c2.entity}")
                for k, v in e.intents[0].items()
            }
            d.intents = [{"kind": "find_then", "entity": c1.entity, "on": d.filter_text, **_prefixed("then_", then)}]
        return d
    raise BlueprintFailure(
        "no_chain", "no pair of the bundle's tools where one call's output feeds the next on this world"
    )


def _refusal(
    world: World, usable: list[ToolSpec], state: dict[str, Any], rules: list[PolicyRule], rng: random.Random
) -> Draft:
    """The user asks for a change the rules forbid on a record that is in the forbidden state:
    the gold chain changes nothing (a lookup is allowed)."""
    for rule in rng.sample(rules, len(rules)):
        if rule.kind != "forbid":
            continue
        tool = next(
            (t for t in usable if t.binding.collection == rule.collection and t.binding.action == rule.action), None
        )
        c = world.collection(rule.collection)
        if tool is None or c is None:
            continue
        hit = [r for r in state.get(c.name, []) if str(r.get(rule.field)) in rule.values]
        if not hit:
            continue
        record = rng.choice(hit)
        key = record[c.key]
        d = Draft("refusal", state, [], rule=rule, entity=c.entity)
        d.facts[c.key.replace("_", " ")] = key
        # the agent has to find out why: saying the state that forbids it is the answer a user can check
        d.asked[f"why {key} cannot be changed ({rule.field})"] = str(record.get(rule.field))
        if rule.action == "delete":
            d.goal = f"delete {c.entity} {key}"
            d.intents = [{"kind": "delete", "who": f"{c.entity} {key}"}]
        else:
            editable = [p for p, f in tool.binding.params.items() if f != rule.field] or list(tool.binding.params)
            if not editable:
                continue
            f = next(x for x in c.fields if x.name == tool.binding.params[editable[0]])
            value = rng.choice([v for v in f.enum if v != record.get(f.name)]) if f.enum else "a new value"
            d.facts[f"new {f.name.replace('_', ' ')}"] = _spoken(value)
            d.goal = f"set the {f.name.replace('_', ' ')} of {c.entity} {key} to {value}"
            d.intents = [_update_intent(f"{c.entity} {key}", {f.name: value})]
        return d
    d = _refused_action(world, usable, state, rules, rng)
    if d is not None:
        return d
    raise BlueprintFailure(
        "no_forbidden_case", "no rule of the world forbids an action the bundle has, on a record of the world"
    )


REFUSING_CODES = ("policy_violation", "limit_reached", "no_availability", "insufficient_funds", "not_allowed")


def _refused_action(
    world: World, usable: list[ToolSpec], state: dict[str, Any], rules: list[PolicyRule], rng: random.Random
) -> Draft | None:
    """A domain pack's action its own rules refuse on this state (a loan renewed too often, a refund
    above the order's amount): the user asks for it, the right outcome is no change and a reply
    that declines with the reason. The rule cited is the pack's rule on that collection whose
    words the refusal's message shares most."""
    checks = [r for r in rules if r.kind == "check"]
    for t in rng.sample(usable, len(usable)):
        b = t.binding
        if b.operation is None or t.hints.readOnlyHint or not b.key_param:
            continue
        c = world.collection(b.collection)
        for record in _candidates(c, state, rng)[:12]:
            planned = _operation_call(world, t, record, state, rng)
            if planned is None:
                continue
            args, out = planned
            if out.ok or out.error is None or out.error[0] not in REFUSING_CODES:
                continue
            # the reason to cite is what the action said ("loan ln-1 was renewed 2 times already"); the
            # rule id is the pack's rule on that collection sharing most of its words
            said_words = set(re.findall(r"[a-z]{4,}", out.error[1].lower()))
            on = [r for r in checks if r.collection == c.name] or checks
            best = max(on, key=lambda r: len(said_words & set(re.findall(r"[a-z]{4,}", r.text.lower()))), default=None)
            rule = PolicyRule(
                rule_id=best.rule_id if best is not None else f"{t.name}_refused",
                kind="check",
                collection=c.name,
                action="custom",
                text=out.error[1],
            )
            d = Draft("refusal", state, [], rule=rule, entity=c.entity)
            d.facts.update({_fact_name(b, c, p): _spoken(v) for p, v in args.items()})
            # the state that forbids it, when the message names it ("is overdue"): the answer a user can check
            for f in c.fields:
                value = str(record.get(f.name))
                if f.enum and re.search(rf"\b{re.escape(value)}\b", out.error[1]):
                    d.asked[f"why {record[c.key]} cannot be changed ({f.name})"] = value
                    break
            d.goal = _action_goal(t, args)
            d.intents = [{"kind": "operation", "text": d.goal}]
            return d
    return None


def _aggregate(world: World, usable: list[ToolSpec], state: dict[str, Any], rng: random.Random, seed: int) -> Draft:
    """A figure over a list the agent computes from one list call's result: how many records
    match, the total of a number field, or which record is the latest by a date field."""
    lists = [
        t
        for t in usable
        if t.binding.action == "list" and t.binding.operation is None and not t.binding.search and not t.binding.fixed
    ]
    for t in rng.sample(lists, len(lists)):
        c = world.collection(t.binding.collection)
        for _ in range(4):
            d = plan_call(world, t, state, world.rules, rng, seed)
            if d is None:
                break
            hits = execute(world, t.binding, state, d.steps[0].arguments).result.get(c.name, [])
            if len(hits) < 2:
                continue
            on, plural = d.filter_text, c.name.replace("_", " ")
            whose = f" whose {on}" if on else ""
            numbers = [f for f in c.fields if f.type in ("integer", "number") and f.ref is None and not f.enum]
            dates = [f for f in c.fields if f.format in ("date", "datetime")]
            kinds = ["count"] + ["sum"] * bool(numbers) + ["latest"] * bool(dates)
            kind = rng.choice(kinds)
            d.asked, d.difficulty = {}, "aggregate"
            if kind == "sum":
                f = rng.choice(numbers)
                total = sum(r.get(f.name) or 0 for r in hits)
                total_s = f"{total:.2f}" if f.type == "number" else str(total)
                d.asked[f"total {f.name.replace('_', ' ')} of the {plural}{whose}"] = total_s
                d.goal = f"know the total {f.name.replace('_', ' ')} of the {plural}{whose}"
                d.intents = [{"kind": "sum", "field": f.name.replace("_", " "), "plural": plural, "whose": whose}]
            elif kind == "latest":
                f = rng.choice(dates)
                ordered = sorted(hits, key=lambda r: str(r.get(f.name) or ""))
                if str(ordered[-1].get(f.name)) == str(ordered[-2].get(f.name)):
                    continue  # a tie: "the latest" would not name one record
                d.asked[f"{c.key.replace('_', ' ')} of the latest {c.entity}{whose}"] = ordered[-1][c.key]
                d.goal = f"know which of the {plural}{whose} has the latest {f.name.replace('_', ' ')}"
                d.intents = [{"kind": "latest", "field": f.name.replace("_", " "), "plural": plural, "whose": whose}]
            else:
                d.asked[f"number of {plural}{whose}"] = str(len(hits))
                d.goal = f"know how many {plural} there are{whose}"
                d.intents = [{"kind": "count" if on else "count_all", "plural": plural, "on": on}]
            return d
    raise BlueprintFailure("no_aggregate", "no list tool of the bundle finds two or more records to sum up")


def _status_updates(world: World, usable: list[ToolSpec]) -> list[tuple[ToolSpec, str, str]]:
    """(tool, parameter, field): updates that set one enum field to a value the user names."""
    out = []
    for t in usable:
        b = t.binding
        if b.action != "update" or b.operation is not None or not b.key_param or b.fixed:
            continue
        c = world.collection(b.collection)
        enums = {f.name for f in c.fields if f.enum}
        for p, fname in b.params.items():
            if fname in enums and len(b.params) == 1:
                out.append((t, p, fname))
    return out


def _lookup(world: World, usable: list[ToolSpec], collection: str) -> ToolSpec | None:
    return next(
        (
            t
            for t in usable
            if t.binding.collection == collection
            and t.binding.action == "get"
            and t.binding.key_param
            and not t.binding.match
            and t.binding.operation is None
        ),
        None,
    )


def _acting_with_lookup(
    world: World, usable: list[ToolSpec], rng: random.Random
) -> Iterator[tuple[ToolSpec, CollectionSpec, ToolSpec]]:
    """(action, its collection, that collection's get), in a seeded order: the domain pack actions that change one
    record named by its key, where the bundle can also look that record up."""
    for t in rng.sample(usable, len(usable)):
        b = t.binding
        if b.operation is None or t.hints.readOnlyHint or not b.key_param:
            continue
        c = world.collection(b.collection)
        get = _lookup(world, usable, c.name)
        if get is not None:
            yield t, c, get


def _already_done(world: World, usable: list[ToolSpec], state: dict[str, Any], rng: random.Random) -> Draft:
    """The user asks to set a field to the value it already holds: the right outcome is no change,
    and a reply that says so (the agent looks the record up to notice)."""
    updates = _status_updates(world, usable)
    for t, _param, fname in rng.sample(updates, len(updates)):
        c = world.collection(t.binding.collection)
        get = _lookup(world, usable, c.name)
        if get is None:
            continue
        for record in _candidates(c, state, rng):
            key, value = record[c.key], str(record.get(fname))
            who = f"{c.entity} {key}"
            d = Draft("already_done", state, [Step(get, {get.binding.key_param: key, **_required_ignored(get)})])
            d.entity = c.entity
            d.facts[c.key.replace("_", " ")] = key
            d.facts[f"new {fname.replace('_', ' ')}"] = value
            d.asked[f"{fname.replace('_', ' ')} of {key}"] = value
            d.goal = f"set the {fname.replace('_', ' ')} of {who} to {value}"
            d.intents = [_update_intent(who, {fname: value})]
            return d
    d = _already_done_action(world, usable, state, rng)
    if d is not None:
        return d
    raise BlueprintFailure(
        "no_status_update", "no update of an enum field, nor an action that sets one, with a lookup of the same records"
    )


def _already_done_action(
    world: World, usable: list[ToolSpec], state: dict[str, Any], rng: random.Random
) -> Draft | None:
    """Already-done on a domain pack's action: "cancel order ord-1" when ord-1 is already cancelled. The state an
    action leaves is read off its execution on records where it succeeds (the lifecycle field its patch sets); the
    task names a record already in that state, and the gold is the look-up alone."""
    for t, c, get in _acting_with_lookup(world, usable, rng):
        b = t.binding
        lifecycle = {f.name for f in c.fields if f.enum and f.name in c.transitions}
        if not lifecycle:
            continue
        records = _candidates(c, state, rng)
        index = {r[c.key]: i for i, r in enumerate(state.get(c.name, []))}
        left: set[tuple[str, str]] = set()  # (field, value) a successful call leaves its record in
        for record in records[:12]:
            planned = _operation_call(world, t, record, state, rng)
            if planned is None or not planned[1].ok:
                continue
            at = f"/{c.name}/{index[record[c.key]]}/"
            for op in planned[1].patch:
                fname = op["path"].removeprefix(at)
                if op["op"] == "replace" and op["path"].startswith(at) and fname in lifecycle:
                    left.add((fname, str(op["value"])))
        done = [(r, f, v) for r in records for f, v in sorted(left) if str(r.get(f)) == v]
        if not done:
            continue
        record, fname, value = rng.choice(done)
        planned = _operation_call(world, t, record, state, rng)  # the request in the action's words, all its values
        args = planned[0] if planned is not None else {b.key_param: record[c.key]}
        key, field_said = record[c.key], fname.replace("_", " ")
        d = Draft("already_done", state, [Step(get, {get.binding.key_param: key, **_required_ignored(get)})])
        d.entity = c.entity
        d.facts[c.key.replace("_", " ")] = key
        d.asked[f"{field_said} of {key}"] = value
        d.goal = _action_goal(t, args)
        d.intents = [{"kind": "operation", "text": d.goal}]
        return d
    return None


def _conditional(world: World, usable: list[ToolSpec], state: dict[str, Any], rng: random.Random) -> Draft:
    """ "If order ord-1 is still pending, cancel it; otherwise tell me its status": the agent looks
    the record up and acts only if the condition holds (half the tasks: it does not, and the
    right outcome is no change and the actual value)."""
    updates = _status_updates(world, usable)
    holds = rng.random() < 0.5
    for t, p, fname in rng.sample(updates, len(updates)):
        b = t.binding
        c = world.collection(b.collection)
        get = _lookup(world, usable, c.name)
        flow = c.transitions.get(fname) or {}
        if get is None or not flow:
            continue
        for record in _candidates(c, state, rng):
            key, current = record[c.key], str(record.get(fname))
            if _forbidden(world.rules, c, "update", record):
                continue
            if holds:
                targets = flow.get(current, [])
                if not targets:
                    continue
                condition, target = current, rng.choice(targets)
            else:  # a condition that does not hold, from which the target could be reached
                options = [(v, x) for v, nxt in flow.items() if v != current for x in nxt if x != current and v != x]
                if not options:
                    continue
                condition, target = rng.choice(options)
            who = f"{c.entity} {key}"
            field_said = fname.replace("_", " ")
            read = Step(get, {get.binding.key_param: key, **_required_ignored(get)})
            steps = [read, Step(t, {b.key_param: key, p: target, **_required_ignored(t)})] if holds else [read]
            d = Draft("conditional", state, steps, entity=c.entity)
            d.facts.update({c.key.replace("_", " "): key, f"{field_said} it should have": condition})
            d.facts[f"new {field_said}"] = target
            if not holds:
                d.asked[f"{field_said} of {key}"] = current
            d.goal = (
                f"set the {field_said} of {who} to {target} if it is {condition}, and otherwise know its {field_said}"
            )
            d.intents = [{"kind": "conditional", "who": who, "field": field_said, "cond": condition, "value": target}]
            return d
    d = _conditional_action(world, usable, state, rng, holds)
    if d is not None:
        return d
    raise BlueprintFailure("no_conditional", "no update of an enum field with a lifecycle and a lookup")


def _operation_call(world: World, t: ToolSpec, record: dict[str, Any], state: dict[str, Any], rng: random.Random):
    """(arguments, execution) of a pack action on `record`, other required arguments from their schemas."""
    b, c = t.binding, world.collection(t.binding.collection)
    props = (t.input_schema or {}).get("properties", {})
    required = set((t.input_schema or {}).get("required", []))
    args: dict[str, Any] = {b.key_param: record[c.key]}
    for p, spec in props.items():
        if p != b.key_param and p in required:
            f = next((x for x in c.fields if x.name == b.params.get(p)), None)
            value = _fresh(world, c, f, state, rng, 0) if f is not None else _schema_value(spec, rng)
            if value is None:
                return None
            args[p] = value
    return args, execute(world, b, state, args)


def _conditional_action(
    world: World, usable: list[ToolSpec], state: dict[str, Any], rng: random.Random, holds: bool
) -> Draft | None:
    """The conditional family on a domain pack's action: "if booking bkg-1 is confirmed, cancel it;
    otherwise tell me its status", the condition a value of the record's lifecycle field under
    which the action succeeds (when it does not hold, the action would be refused or wrong)."""
    for t, c, get in _acting_with_lookup(world, usable, rng):
        b = t.binding
        status = next((f for f in c.fields if f.enum and f.name in c.transitions), None)
        if status is None:
            continue
        tried = []
        for record in _candidates(c, state, rng)[:12]:
            planned = _operation_call(world, t, record, state, rng)
            if planned is not None:
                tried.append((record, *planned))
        allowed = {str(r.get(status.name)) for r, _, out in tried if out.ok}
        pick = [
            (r, a, out) for r, a, out in tried if out.ok == holds and (holds or str(r.get(status.name)) not in allowed)
        ]
        if not allowed or not pick:
            continue
        record, args, _out = rng.choice(pick)
        current = str(record.get(status.name))
        condition = current if holds else rng.choice(sorted(allowed))
        key, field_said = record[c.key], status.name.replace("_", " ")
        read = Step(get, {get.binding.key_param: key, **_required_ignored(get)})
        d = Draft("conditional", state, [read, Step(t, args)] if holds else [read], entity=c.entity)
        d.facts.update({_fact_name(b, c, p): _spoken(v) for p, v in args.items()})
        d.facts[f"{field_said} it should have"] = condition
        if not holds:
            d.asked[f"{field_said} of {key}"] = current
        text = _action_goal(t, args)
        who = f"{c.entity} {key}"
        d.goal = f"{text} if {who} is {condition}, and otherwise know its {field_said}"
        d.intents = [{"kind": "conditional_action", "who": who, "field": field_said, "cond": condition, "text": text}]
        return d
    return None


def _irrelevance(world: World, usable: list[ToolSpec], state: dict[str, Any], rng: random.Random) -> Draft:
    """The user asks for an action on a collection that no tool of the bundle serves."""
    served = {(t.binding.collection, t.binding.action) for t in usable}
    wishes = [
        (c, a)
        for c in world.collections
        for a in ("delete", "create")
        if (c.name, a) not in served and state.get(c.name)
    ]
    if not wishes:
        raise BlueprintFailure("no_unserved_action", "every action the user could ask for has a tool")
    c, action = rng.choice(wishes)
    record = rng.choice(state[c.name])
    d = Draft("irrelevance", state, [], entity=c.entity)
    if action == "delete":
        d.facts[c.key.replace("_", " ")] = record[c.key]
        d.goal = f"delete {c.entity} {record[c.key]}"
        d.intents = [{"kind": "delete", "who": f"{c.entity} {record[c.key]}"}]
    else:
        d.goal = f"create a new {c.entity}"
        d.intents = [{"kind": "create_bare", "entity": c.entity}]
    return d


# --------------------------------------------------------------------------- the rubric, from execution


def rubric_from(world: World, d: Draft, tools: list[ToolSpec] = ()) -> Rubric:
    """The rubric read off the execution, in this order: the end state, the answers, the calls
    only a call shows, and the refusal. `tools`: the agent's, for the reads two of them make alike."""
    criteria = _Criteria()
    _state_criteria(world, d, criteria)
    _answer_criteria(d, criteria)
    _read_call_criteria(d, criteria, tools)
    _withheld_criteria(d, criteria)
    _decline_criteria(d, criteria)
    checkpoints = [f"{s.tool.name}({s.arguments})" for s in d.steps]
    return Rubric(criteria=criteria, expected_tool_pattern=[s.tool.name for s in d.steps], checkpoints=checkpoints)


class _Criteria(list[Criterion]):
    """A rubric's criteria, numbered c1, c2, ... as they are added."""

    def add(self, **fields: Any) -> None:
        self.append(Criterion(criterion_id=f"c{len(self) + 1}", **fields))


def _state_criteria(world: World, d: Draft, criteria: _Criteria) -> None:
    """Each changed record's gold end state, then a guard per touched collection that nothing
    else in it changed; when nothing changed, a guard per collection."""
    touched: list[str] = []
    for c in world.collections:
        before = {r[c.key]: r for r in d.initial.get(c.name, [])}
        after = {r[c.key]: r for r in d.end_state.get(c.name, [])}
        changed = [k for k in after if before.get(k) != after[k]] + [k for k in before if k not in after]
        if not changed:
            continue
        touched.append(c.name)
        for k in changed:
            _record_criterion(c, k, before, after, criteria)
        criteria.add(
            kind="state",
            collection=c.name,
            key_field=c.key,
            op="unchanged_except",
            value=changed,
            description=f"no other {c.entity} changed, and none was added",
        )
    if not touched:  # reads, refusals, irrelevance: the world must end as it began
        for c in world.collections:
            criteria.add(
                kind="state",
                collection=c.name,
                key_field=c.key,
                op="unchanged_except",
                value=[],
                description=f"no {c.entity} changed, and none was added or deleted",
            )


def _record_criterion(
    c: CollectionSpec, k: Any, before: dict[Any, Any], after: dict[Any, Any], criteria: _Criteria
) -> None:
    """Record `k` of `c` is deleted, or ends as (is created as) its gold end state."""
    record = {"kind": "state", "collection": c.name, "key": k, "key_field": c.key}
    if k not in after:
        criteria.add(**record, op="absent", description=f"{c.entity} {k} is deleted")
        return
    what = "is created as" if k not in before else "ends as"
    diff = {f: v for f, v in after[k].items() if before.get(k, {}).get(f) != v}
    description = f"{c.entity} {k} {what} " + ", ".join(f"{f}={v}" for f, v in diff.items())
    criteria.add(**record, op="equals", value=after[k], description=description)


def _answer_criteria(d: Draft, criteria: _Criteria) -> None:
    """The values the user asked to learn, and each change confirmed to the user."""
    for what, value in d.asked.items():
        criteria.add(kind="answer", contains=[value], description=f"tells the user the {what}: {value}")
    for s in d.steps:  # a change is confirmed to the user in words that name it (a record's key, or what it became)
        b = s.tool.binding
        # the record named by its key, or (a crawled tool) by the parameters that name it together: a file's path
        naming = [b.key_param] if b.key_param in s.arguments else [p for p in b.match if p in s.arguments]
        # a pack's action that names its record (reschedule appointment apt-8506) is a change too: S1 kept "You can
        # schedule a appointment at any time" after a move, which confirmed nothing
        if (b.action in ("update", "delete") or b.operation is not None) and naming:
            named = [
                *(str(s.arguments[p]) for p in naming),
                *(str(v) for p, v in s.arguments.items() if p not in naming),
                *map(str, b.fixed.values()),
            ]
            criteria.add(
                kind="answer",
                contains=list(dict.fromkeys(named)),
                any_of=True,
                description=f"tells the user what {s.tool.name} did, naming {' or '.join(dict.fromkeys(named))}",
            )


def _read_call_criteria(d: Draft, criteria: _Criteria, tools: list[ToolSpec] = ()) -> None:
    """The exact call of each gold read, unless an earlier gold step already showed its record."""
    for i, s in enumerate(d.steps):
        # a read changes nothing, so only the call shows it was made: the exact record asked for (a value
        # "active" in the reply proves nothing when a write's result said "active" too); unless an earlier
        # gold step acted on that very record, whose result showed it whole
        b = s.tool.binding
        if b.action not in READ_ACTIONS or (
            b.action == "get"
            and any(
                e.tool.binding.collection == b.collection
                and e.arguments.get(e.tool.binding.key_param) == s.arguments.get(b.key_param)
                for e in d.steps[:i]
            )
        ):
            continue
        key_args = {k: v for k, v in s.arguments.items() if k == b.key_param or k in b.match or b.action == "list"}
        same = [t.name for t in tools if t.name != s.tool.name and _same_read(t.binding, b)]
        criteria.add(
            kind="call",
            tool=s.tool.name,
            arguments=key_args,
            same_read=same,
            description=f"calls {' or '.join([s.tool.name, *same])} with {key_args}",
        )


def _same_read(a: ToolBinding | None, b: ToolBinding) -> bool:
    """Whether two tools read the same records the same way: equal bindings, but for parameters with no effect
    and the result cap (which shortens the list, not what it holds)."""
    drop = {"ignored", "limit_param"}
    return a is not None and a.model_dump(exclude=drop) == b.model_dump(exclude=drop)


def _withheld_criteria(d: Draft, criteria: _Criteria) -> None:
    """Clarification: the call that uses a withheld value comes after the user gave it; a value no
    call takes as it is (it picks the record: "the 3 pm one") comes before the act it picks for,
    the chain's last call, not its first (the agent may list first, then ask)."""
    for k, v in d.withheld.items():
        s = next((s for s in d.steps if v in map(str, s.arguments.values())), d.steps[-1])
        param = next((p for p, a in s.arguments.items() if str(a) == v), None)
        criteria.add(
            kind="call",
            tool=s.tool.name,
            arguments={param: s.arguments[param]} if param else {},
            after_user_gives=v,
            description=f"asks for the {k} before calling {s.tool.name} with it",
        )


def _decline_criteria(d: Draft, criteria: _Criteria) -> None:
    """Refusal: the agent declines, citing the rule; irrelevance: it says it cannot, and why. The
    judge criteria decline deterministically where no critic runs (the guards hold the end state)."""
    if d.rule is not None:
        if not d.asked:  # no state word to check the reason by: that it declines at all is checked by code
            criteria.add(kind="answer", declines=True, description="says it cannot do this")
        criteria.add(kind="judge", declines=True, description=f"declines, citing the rule: {d.rule.text}")
    if d.difficulty == "irrelevance":  # nothing changes; and the agent says it cannot, in some usual words
        criteria.add(kind="answer", declines=True, description="says it cannot do this")
        criteria.add(
            kind="judge", declines=True, description="explains that none of its tools can do what the user asks"
        )


READ_INTENTS = ("get", "get_via", "list", "list_all", "count", "count_all")
FAMILY_OF_DIFFICULTY = {
    "multi_call": "multi_intent",
    "clarification": "ask_for_info",
    "error_recovery": "error_recovery",
    "irrelevance": "irrelevance",
    "refusal": "refusal",
    "aggregate": "aggregate",
    "already_done": "already_done",
    "conditional": "conditional",
}


def family_of(d: Draft) -> str:
    """The task family a draft belongs to: its difficulty, and for single calls and chains what
    the user asks for (a look-up or a change; find-then-act or following a reference)."""
    if d.difficulty in FAMILY_OF_DIFFICULTY:
        return FAMILY_OF_DIFFICULTY[d.difficulty]
    kind = d.intents[0]["kind"] if d.intents else ""
    if d.difficulty == "dependent_calls":
        return "find_then_act" if kind == "find_then" else "follow_reference"
    return "lookup" if kind in READ_INTENTS else "update"


def blueprint_record(d: Draft, request_source: str, problems: list[str]) -> Blueprint:
    touched = sorted({c for c in d.initial if d.initial.get(c) != d.end_state.get(c)})
    return Blueprint(
        calls=d.calls,
        end_state=d.end_state,
        touched=touched,
        asked=d.asked,
        withheld=d.withheld,
        rule_id=d.rule.rule_id if d.rule else None,
        request_source=request_source,
        request_problems=problems,
        family=family_of(d),
    )
