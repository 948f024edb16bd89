"""Build the fifth BLIND part of the labelled judge set: capable-assistant episodes on the `shop`, `clinic`
and `bank` domain packs and on a car rental desk designed here (README.md beside this file, "Blind set 5").

Written without reading the judge, its tests, its vocabulary of faults or the agent texts of the other
parts. The packs are loaded with `packs.load_pack` (their actions run by code); the rental desk is a world
designed here the way build.py designs its worlds (typed collections, enums with lifecycles, the derived
rules plus two of its own), with CRUD tools bound to it and an unbound hand-off tool. States are seeded by
the product's seeding (`packs.seed_world`, `seed.seed_state`) and each scenario adds the records it needs.
Tasks are blueprints: a gold chain executed by `tasks.blueprint.run_gold`, the rubric read off it by
`rubric_from`. Every agent tool call is executed on the world (`packs.execute_call`, which hands
`worldmodel.execute.execute` the packs' actions); the hand-off tool answers a fixed result and changes
nothing. Results and patches are real.

Most scenarios are written once with an optional fault: the good episode, and bad ones that carry one
fault each, written in the same voice. The label of each episode is set where it is written and never
changed; no judge has been run on these episodes. Good ones are checked without the judge (every call
succeeded, or a failed one is recovered from, and the end state is the gold one); bad ones are checked to
carry their fault (a state fault ends off the gold state, a claim fault on it).

Run: .venv/bin/python tests/data/judge_set/build_blind5.py  (writes blind5.jsonl here; deterministic).
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from worldsmith.llm.prompts import Prompts
from worldsmith.records import (
    CollectionSpec,
    FieldSpec,
    Persona,
    PolicyRule,
    Task,
    ToolBinding,
    ToolCall,
    ToolSpec,
    Trajectory,
    UserGoal,
    World,
    content_id,
)
from worldsmith.tasks.blueprint import Draft, Step, blueprint_record, rubric_from, run_gold
from worldsmith.tools.evolve import bound_spec
from worldsmith.worldmodel.packs import execute_call, load_pack, seed_world
from worldsmith.worldmodel.runner import argument_problem
from worldsmith.worldmodel.schema import derive_rules
from worldsmith.worldmodel.seed import seed_state
from worldsmith.worldmodel.state import World as StateWorld
from worldsmith.worldmodel.toolset import ToolSet

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
OUT = HERE / "blind5.jsonl"
PART = "cap-blind5"
TODAY = "2026-04-08"  # a Wednesday
D0 = dt.date.fromisoformat(TODAY)
STAMP = datetime(2026, 4, 8, 8, 30, tzinfo=UTC)  # every record's created_at: the file is the same on every run
MODEL = "hand-written (capable assistant, blind set 5)"


class Skip(Exception):
    """The seeded world lacks what the scenario needs: the next seed is tried."""


# =========================================================================== the rental desk (designed here)


def fld(name: str, type: str = "string", format: str = "text", enum=(), ref=None, unique=False, description=""):
    return FieldSpec(
        name=name, type=type, format=format, enum=list(enum), ref=ref, unique=unique, description=description
    )


AIRPORTS = {
    "SEA": "Seattle-Tacoma",
    "PDX": "Portland",
    "SFO": "San Francisco",
    "LAX": "Los Angeles",
    "DEN": "Denver",
}
CITY = {"SEA": "Seattle", "PDX": "Portland", "SFO": "San Francisco", "LAX": "Los Angeles", "DEN": "Denver"}
MODELS = {
    "economy": ("Kia Rio", "Toyota Yaris", "Nissan Versa"),
    "compact": ("Toyota Corolla", "Honda Civic", "Mazda 3"),
    "midsize": ("Toyota Camry", "Hyundai Sonata", "Honda Accord"),
    "suv": ("Toyota RAV4", "Ford Explorer", "Jeep Grand Cherokee"),
    "minivan": ("Chrysler Pacifica", "Honda Odyssey"),
}
RATES = {"economy": 39.0, "compact": 46.0, "midsize": 55.0, "suv": 74.0, "minivan": 89.0}
INSURANCE_RULE_TEXT = (
    "Coverage is chosen before pickup: never change the insurance of a rental that is active or returned."
)


def rental_world() -> World:
    cols = [
        CollectionSpec(
            name="renters",
            entity="renter",
            key="renter_id",
            id_prefix="rnt",
            fields=[
                fld("full_name", format="person_name"),
                fld("email", format="email", unique=True),
                fld("phone", format="phone"),
                fld("loyalty", enum=("basic", "silver", "gold"), description="the renter's loyalty tier"),
            ],
        ),
        CollectionSpec(
            name="vehicles",
            entity="vehicle",
            key="vehicle_id",
            id_prefix="veh",
            fields=[
                fld("model", format="label", description="make and model, like Toyota Corolla"),
                fld("plate", format="code", unique=True, description="the licence plate"),
                fld("category", enum=tuple(MODELS)),
                fld("location", enum=tuple(AIRPORTS), description="the airport branch the car belongs to"),
                fld("daily_rate", type="number", format="money", description="price per rental day"),
                fld("status", enum=("available", "rented", "maintenance")),
            ],
            transitions={
                "status": {
                    "available": ["rented", "maintenance"],
                    "rented": ["available"],
                    "maintenance": ["available"],
                }
            },
        ),
        CollectionSpec(
            name="rentals",
            entity="rental",
            key="rental_id",
            id_prefix="rnl",
            fields=[
                fld("renter_id", format="code", ref="renters"),
                fld("vehicle_id", format="code", ref="vehicles"),
                fld("pickup_location", enum=tuple(AIRPORTS), description="airport branch of pickup and return"),
                fld("pickup_date", format="date"),
                fld("return_date", format="date"),
                fld("insurance", enum=("none", "basic", "full")),
                fld("status", enum=("reserved", "active", "returned", "cancelled")),
            ],
            transitions={
                "status": {
                    "reserved": ["active", "cancelled"],
                    "active": ["returned"],
                    "returned": [],
                    "cancelled": [],
                }
            },
        ),
    ]
    w = World(
        world_id="wld_blind5_rental",
        domain_id="dom_blind5_rental",
        domain="car rental desk",
        category="travel",
        description="A car rental company's airport desks: renters, the fleet of vehicles and the rentals.",
        collections=cols,
        today=TODAY,
        source="llm",
        policy=(
            "You are the reservations assistant of Harbor Car Rental, with desks at five airports. Look up the "
            "rental before you change it and say what will change. Rentals are priced by the day at the car's "
            "daily rate. A reservation can be cancelled free of charge until its pickup date; once the car is "
            "picked up the rental is active and ends when the car is returned (it can be extended, not "
            "cancelled). Coverage is chosen before pickup. Damage, accidents and billing disputes go to a human "
            "agent."
        ),
        created_at=STAMP,
    )
    extra = [
        PolicyRule(
            rule_id="rental_cover",
            kind="check",
            collection="rentals",
            action="update",
            field="insurance",
            text=INSURANCE_RULE_TEXT,
        ),
    ]
    return w.model_copy(update={"rules": derive_rules(w) + extra})


RENTAL_TOOLS = [
    # name, collection, action, params, fixed, description
    (
        "get_renter",
        "renters",
        "get",
        {},
        {},
        "Get a renter's profile (name, contact details, loyalty tier) by renter_id.",
    ),
    (
        "find_renter",
        "renters",
        "list",
        {"email": "email"},
        {},
        "Find renters by their email address.",
    ),
    (
        "list_renter_rentals",
        "rentals",
        "list",
        {"renter_id": "renter_id"},
        {},
        "List a renter's rentals, past and upcoming.",
    ),
    (
        "get_rental",
        "rentals",
        "get",
        {},
        {},
        "Get one rental by rental_id: its car, branch, dates, insurance and status.",
    ),
    (
        "get_vehicle",
        "vehicles",
        "get",
        {},
        {},
        "Get a vehicle by vehicle_id: model, plate, category, branch, daily rate, status.",
    ),
    (
        "search_vehicles",
        "vehicles",
        "list",
        {"location": "location", "category": "category", "status": "status"},
        {},
        "Search the fleet by airport branch, category and status.",
    ),
    (
        "cancel_rental",
        "rentals",
        "update",
        {},
        {"status": "cancelled"},
        "Cancel a reservation (sets its status to cancelled).",
    ),
    (
        "change_return_date",
        "rentals",
        "update",
        {"return_date": "return_date"},
        {},
        "Change the return date of a rental (YYYY-MM-DD), to extend or shorten it.",
    ),
    (
        "change_insurance",
        "rentals",
        "update",
        {"insurance": "insurance"},
        {},
        "Change the insurance coverage of a rental.",
    ),
    ("change_vehicle", "rentals", "update", {"vehicle_id": "vehicle_id"}, {}, "Put a different vehicle on a rental."),
]


def rental_curate(env: Env) -> None:
    """Seeded values made coherent: real models and rates by category, plates, rental dates by status."""
    rng = random.Random(f"blind5:rental-curate:{env.seed}")
    for v in env.state["vehicles"]:
        v["model"] = rng.choice(MODELS[v["category"]])
        v["daily_rate"] = RATES[v["category"]]
        letters = "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(3))
        v["plate"] = f"{rng.randint(1, 9)}{letters}{rng.randint(100, 999)}"
    for r in env.state["rentals"]:
        veh = next(v for v in env.state["vehicles"] if v["vehicle_id"] == r["vehicle_id"])
        r["pickup_location"] = veh["location"]
        lo, hi = {"reserved": (3, 30), "active": (-5, -1), "returned": (-80, -10), "cancelled": (-30, 20)}[r["status"]]
        pick = D0 + dt.timedelta(days=rng.randint(lo, hi))
        ret = pick + dt.timedelta(days=rng.randint(2, 7))
        if r["status"] == "active" and ret <= D0:
            ret = D0 + dt.timedelta(days=2)
        r["pickup_date"], r["return_date"] = pick.isoformat(), ret.isoformat()
        if r["status"] == "active":
            veh["status"] = "rented"


# =========================================================================== packs and tools

HANDOFF = "transfer_to_human_agents"
HANDOFF_DESC = (
    "Hand the conversation over to a human agent, with a short summary of what the customer needs. Use it when "
    "the request is beyond what your tools can do."
)
HANDOFF_RESULT = {"transferred": True, "queue": "customer_support", "estimated_wait_minutes": 5}

ROLES = {
    "shop": "You are the customer service assistant of Larkspur Goods, an online shop. Customers write to you "
    "about their orders and refunds.",
    "clinic": "You are the online front desk of Maple Street Family Clinic. Patients message you to see, book, "
    "move and cancel their appointments.",
    "bank": "You are the support assistant of Northgate Bank. Customers ask you about their accounts, cards and "
    "transactions, and to move money, block cards and dispute payments.",
    "rental": "You are the reservations assistant of Harbor Car Rental. Renters ask you about their rentals and "
    "to extend, change or cancel them.",
}
GUIDES = {
    "shop": ["Quote amounts exactly as the tools return them."],
    "clinic": ["Give dates with their weekday and times as the clinic's half-hour slots."],
    "bank": ["Only ever show the last four digits of a card."],
    "rental": ["Name airport branches by code and city, like SEA (Seattle)."],
}


def _stamp(spec: ToolSpec) -> ToolSpec:
    return spec.model_copy(update={"created_at": STAMP})


def handoff_spec() -> ToolSpec:
    schema = {
        "type": "object",
        "properties": {
            "summary": {"type": "string", "description": "what the customer needs, in one or two sentences"}
        },
        "required": ["summary"],
        "additionalProperties": False,
    }
    return ToolSpec(
        tool_id=ToolSpec.make_id(HANDOFF, HANDOFF_DESC, schema, None, "evolved/handoff"),
        name=HANDOFF,
        description=HANDOFF_DESC,
        input_schema=schema,
        annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": True},
        source="evolved",
        server="evolved/handoff",
        created_at=STAMP,
    )


@cache
def world_of(kind: str) -> tuple[World, tuple[ToolSpec, ...], tuple[int, int]]:
    if kind != "rental":
        p = load_pack(ROOT / "worlds" / kind, today=TODAY)
        return p.world, tuple(_stamp(t) for t in p.tools) + (handoff_spec(),), p.records
    w = rental_world()
    specs = []
    for name, coll, action, params, fixed, desc in RENTAL_TOOLS:
        b = ToolBinding(world_id=w.world_id, collection=coll, action=action, params=params, fixed=fixed)
        if action in ("get", "update", "delete"):
            b = b.model_copy(update={"key_param": w.collection(coll).key})
        specs.append(_stamp(bound_spec(w, b, name, desc, request_id=f"{coll}/{name}", named_by="code")))
    return w, tuple(specs) + (handoff_spec(),), (5, 7)


def system_prompt(kind: str, world: World) -> str:
    rules = [r.text for r in world.rules if r.kind != "forbid"]
    never = [r.text for r in world.rules if r.kind == "forbid"]
    (msg,) = Prompts(ROOT / "prompts").render_messages(
        "agent_system_prompt",
        role=ROLES[kind],
        policy=world.policy or "",
        style="friendly, clear and complete",
        strictness="normal",
        domain=world.domain,
        collections=[c.name.replace("_", " ") for c in world.collections],
        rules=rules,
        never=never,
        confirm_before=[],
        guidelines=GUIDES[kind],
    )
    return msg["content"]


class Env:
    """One world, its agent's tools and system prompt, and one seeded state (scenarios add what they need)."""

    def __init__(self, kind: str, seed: int):
        self.kind, self.seed = kind, seed
        self.world, tools, records = world_of(kind)
        self.specs: dict[str, ToolSpec] = {t.name: t for t in tools}
        self.toolset = ToolSet.build(list(tools))
        self.agent_id = f"agt_blind5_{kind}"
        self.system = system_prompt(kind, self.world)
        self.rng = random.Random(f"blind5:{kind}:{seed}")
        if kind == "rental":
            self.state = seed_state(self.world, seed, records)
            rental_curate(self)
        else:
            self.state = seed_world(self.world, seed, records)

    def recs(self, coll: str, **where: Any) -> list[dict[str, Any]]:
        return [r for r in self.state[coll] if all(r.get(k) == v for k, v in where.items())]

    def pick(self, coll: str, cond: Callable[[dict], bool] | None = None, **where: Any) -> dict[str, Any]:
        hits = [r for r in self.recs(coll, **where) if cond is None or cond(r)]
        if not hits:
            raise Skip(f"no {coll} with {where}")
        return self.rng.choice(hits)

    def get(self, coll: str, key: str) -> dict[str, Any]:
        k = self.world.collection(coll).key
        return next(r for r in self.state[coll] if r[k] == key)

    def add(self, coll: str, **fields: Any) -> dict[str, Any]:
        """A record added under the next key (a tweak of the seeded state before the task is made)."""
        c = self.world.collection(coll)
        n = max(int(r[c.key].rsplit("-", 1)[1]) for r in self.state[coll]) + 1
        rec = {c.key: f"{c.id_prefix}-{n}", **{f.name: None for f in c.fields}, **fields}
        self.state[coll].append(rec)
        return rec

    def rule(self, rule_id: str) -> PolicyRule:
        return next(r for r in self.world.rules if r.rule_id == rule_id)


# =========================================================================== tasks and episodes

INTENT = {
    "lookup": [{"kind": "get"}],
    "list": [{"kind": "list"}],
    "update": [{"kind": "update"}],
    "operation": [{"kind": "operation"}],
    "find_then": [{"kind": "find_then"}],
    "get_via": [{"kind": "get_via"}],
}


def make_task(
    env: Env,
    eid: str,
    difficulty: str,
    steps: list[tuple[str, dict[str, Any]]],
    request: str,
    *,
    intent: str = "lookup",
    asked: dict[str, Any] | None = None,
    facts: dict[str, str] | None = None,
    withheld: dict[str, str] | None = None,
    rule: PolicyRule | None = None,
    persona: tuple[str, str, str] = ("casual", "medium", "intermediate"),
) -> Task:
    """A blueprint task: the gold chain run by `run_gold` on the env's state, the rubric by `rubric_from`."""
    d = Draft(difficulty, copy.deepcopy(env.state), [Step(env.specs[n], a) for n, a in steps])
    d.facts = {k: str(v) for k, v in (facts or {}).items()}
    d.asked = {k: str(v) for k, v in (asked or {}).items()}
    d.withheld = {k: str(v) for k, v in (withheld or {}).items()}
    d.rule = rule
    d.intents = copy.deepcopy(INTENT.get(intent, []))
    d.calls, d.end_state = run_gold(env.world, d.steps, d.initial)
    return Task(
        task_id=content_id("judgeset-blind5", eid, prefix="tsk_"),
        agent_id=env.agent_id,
        difficulty=difficulty,
        world_id=env.world.world_id,
        blueprint=blueprint_record(d, "llm", []),
        user_persona=Persona(communication=persona[0], patience=persona[1], expertise=persona[2]),
        user_goal=UserGoal(request=request, facts=d.facts),
        initial_state=d.initial,
        rubric=rubric_from(env.world, d, list(env.specs.values())),
        created_at=STAMP,
    )


class Ep:
    """One episode as the rollouts record it: OpenAI messages, each tool call executed on the world."""

    def __init__(self, env: Env, task: Task):
        self.env, self.task = env, task
        self.world = StateWorld(task.initial_state)
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": env.system},
            {"role": "user", "content": task.user_goal.request},
        ]
        self.calls: list[ToolCall] = []
        self.turns = 1
        self.n = 0

    @property
    def state(self) -> dict[str, Any]:
        return self.world.state

    def act(self, *calls: tuple[str, dict[str, Any]], fails: bool = False, text: str | None = None) -> Any:
        """One assistant step with these tool calls (and `text` said with them), each executed and answered;
        the results (one: itself). A failed call returns {"error": code, "message": ...}; it must be expected
        (`fails`)."""
        tool_calls, results = [], []
        for name, args in calls:
            self.n += 1
            cid = f"call_{content_id(self.task.task_id, self.n)[:12]}"
            tool_calls.append(
                {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            )
        self.messages.append({"role": "assistant", "content": text, "tool_calls": tool_calls})
        for tc, (name, args) in zip(tool_calls, calls, strict=True):
            spec = self.env.toolset.by_name[name]
            problem = argument_problem(spec, args)
            assert problem is None, (name, args, problem)
            if spec.binding is not None:
                out = execute_call(self.env.world, spec.binding, self.world.state, args)
                ok, content, patch, executor = out.ok, out.content, out.patch, "code"
                error = None if out.ok else f"{out.error[0]}: {out.error[1]}"
                result = out.result if out.ok else {"error": out.error[0], "message": out.error[1]}
            else:
                result = HANDOFF_RESULT
                ok, content, patch, executor, error = True, json.dumps(result), [], "simulated", None
            if not ok and not fails:
                raise AssertionError(f"{self.task.task_id}: {name}({args}) failed: {content}")
            if patch:
                self.world.commit(patch, tc["id"], name)
            self.calls.append(
                ToolCall(
                    turn=self.turns,
                    call_id=tc["id"],
                    name=name,
                    tool=spec.name,
                    tool_id=spec.tool_id,
                    arguments=args,
                    read_only=bool(spec.annotations.get("readOnlyHint")),
                    executor=executor,
                    ok=ok,
                    error=error,
                    patch_ops=len(patch),
                    attempts=1,
                )
            )
            self.messages.append({"role": "tool", "tool_call_id": tc["id"], "content": content})
            results.append(result)
        return results[0] if len(results) == 1 else results

    def say(self, text: str) -> None:
        self.messages.append({"role": "assistant", "content": text.strip()})

    def user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})
        self.turns += 1

    def trajectory(self, eid: str, stop: str) -> Trajectory:
        self.user(stop)
        return Trajectory(
            trajectory_id=content_id("judgeset-blind5", eid, prefix="trj_"),
            task_id=self.task.task_id,
            agent_id=self.env.agent_id,
            sample=0,
            seed=self.env.seed,
            messages=self.messages,
            tools=self.env.toolset.tools,
            world_states=self.world.record(),
            calls=self.calls,
            models={"agent": MODEL, "user_sim": MODEL, "tool_sim": "code"},
            model=MODEL,
            decoding="native",
            status="finished",
            reason="user_stop",
            turns=self.turns,
            tool_calls=len(self.calls),
            created_at=STAMP,
        )


# =========================================================================== wording helpers


def V(v: int, *options: str) -> str:
    return options[v % len(options)]


def money(x: float) -> str:
    return f"${x:,.2f}"


def day(iso: str) -> dt.date:
    return dt.date.fromisoformat(str(iso)[:10])


def iso(d: dt.date) -> str:
    return d.isoformat()


def plus(n: int) -> str:
    """today + n days, ISO"""
    return iso(D0 + dt.timedelta(days=n))


def wdate(s: str) -> str:
    """Tuesday, April 14"""
    d = day(s)
    return f"{d:%A}, {d:%B} {d.day}"


def sdate(s: str) -> str:
    """April 14"""
    d = day(s)
    return f"{d:%B} {d.day}"


def tdate(s: str) -> str:
    """Tue Apr 14 (tables)"""
    d = day(s)
    return f"{d:%a} {d:%b} {d.day}"


def wd(s: str) -> str:
    return f"{day(s):%A}"


def ampm(hhmm: str) -> str:
    h, m = (int(x) for x in hhmm[:5].split(":"))
    return f"{(h - 1) % 12 + 1}:{m:02d} {'AM' if h < 12 else 'PM'}"


def away(s: str) -> int:
    return (day(s) - D0).days


def ago(s: str) -> int:
    return (D0 - day(s)).days


def nights(a: str, b: str) -> int:
    return (day(b) - day(a)).days


def human(s: str) -> str:
    return str(s).replace("_", " ")


def first(full: str) -> str:
    return full.split()[0]


def in_days(n: int) -> str:
    if n == 0:
        return "today"
    if n == 1:
        return "tomorrow"
    if n < 0:
        return f"{-n} days ago"
    if n % 7 == 0:
        return f"in {n // 7} week{'s' if n > 7 else ''}"
    return f"in {n} days"


def next_weekday(name: str, after: int = 1) -> str:
    """The first date at least `after` days from today that falls on weekday `name` (ISO)."""
    d = D0 + dt.timedelta(days=after)
    while f"{d:%A}" != name:
        d += dt.timedelta(days=1)
    return iso(d)


STOPS = (
    "Thanks, that's all I needed. ###STOP###",
    "Perfect, thank you! ###STOP###",
    "Great, appreciate the help. ###STOP###",
    "ok thanks ###STOP###",
    "That's everything for now, thanks. ###STOP###",
    "Got it. Thank you! ###STOP###",
    "Super helpful, thanks a lot. ###STOP###",
)


# =========================================================================== people and goods

FIRSTS = ("Maya", "Daniel", "Priya", "Tomas", "Grace", "Andre", "Leila", "Owen", "Hannah", "Marcus", "Sofia", "Ravi")
LASTS = ("Okafor", "Lindgren", "Castellano", "Whitfield", "Nakashima", "Brennan", "Delacroix", "Haddad", "Kowalski")


def person(env: Env) -> tuple[str, str, str]:
    fn, ln = env.rng.choice(FIRSTS), env.rng.choice(LASTS)
    email = f"{fn.lower()}.{ln.lower()}{env.rng.randint(2, 98)}@example.com"
    phone = f"+1-{env.rng.randint(201, 989)}-555-{env.rng.randint(1000, 9999)}"
    return f"{fn} {ln}", email, phone


GOODS = (
    ("espresso grinder", 89.0),
    ("linen duvet cover", 64.5),
    ("trail running shoes", 119.0),
    ("cast iron skillet", 42.0),
    ("noise-cancelling headphones", 149.0),
    ("ceramic planter set", 36.9),
    ("wool throw blanket", 58.0),
    ("desk lamp", 27.5),
    ("yoga mat", 31.0),
    ("chef's knife", 74.0),
)


# =========================================================================== shop (pack)


def shop_customer(env: Env) -> dict[str, Any]:
    name, email, phone = person(env)
    return env.add(
        "customers",
        full_name=name,
        email=email,
        phone=phone,
        city=env.rng.choice(("Tacoma", "Boise", "Reno", "Madison")),
    )


def shop_order(env: Env, cust: dict, status: str, days_ago: int, good: int | None = None, qty: int = 1) -> dict:
    used = {o["product"] for o in env.recs("orders", customer_id=cust["customer_id"])}
    choices = [g for g in GOODS if g[0] not in used]
    product, price = GOODS[good] if good is not None else env.rng.choice(choices)
    return env.add(
        "orders",
        customer_id=cust["customer_id"],
        product=product,
        quantity=qty,
        amount=round(price * qty, 2),
        placed_on=plus(-days_ago),
        status=status,
    )


def s_overview(env: Env, v: int, eid: str, fault: str | None):
    """Aggregate: every order of a customer in a table, and the total spent without the cancelled one."""
    c = shop_customer(env)
    plan = [
        ("delivered", env.rng.randint(25, 40), 1),
        ("delivered", env.rng.randint(9, 20), 2),
        ("cancelled", env.rng.randint(5, 15), 1),
        ("shipped", 3, 1),
        ("pending", 1, 1),
    ]
    if v % 2:
        plan = plan[:2] + plan[3:]
    orders = [shop_order(env, c, st, d, qty=q) for st, d, q in plan]
    counted = [o for o in orders if o["status"] != "cancelled"]
    total = round(sum(o["amount"] for o in counted), 2)
    cancelled = [o for o in orders if o["status"] == "cancelled"]
    request = V(
        v,
        f"Hi, this is {c['full_name']}, customer id {c['customer_id']}. Could you list all my orders for me and tell "
        "me how much I've spent in total? Don't count anything that got cancelled.",
        f"hey can u pull up every order on my account ({c['customer_id']}) and add up what I've actually paid? "
        "need it for my budget",
    )
    task = make_task(
        env,
        eid,
        "aggregate",
        [("list_customer_orders", {"customer_id": c["customer_id"]})],
        request,
        intent="list",
        asked={"total spent": f"{total:.2f}"},
        facts={"customer id": c["customer_id"]},
    )
    ep = Ep(env, task)
    res = ep.act(("list_customer_orders", {"customer_id": c["customer_id"]}))
    rows = sorted(res["orders"], key=lambda o: o["placed_on"])
    said_total, note = total, "good: lists every order of the customer and totals the non-cancelled ones correctly"
    if fault == "wrong_value":
        said_total = round(total + cancelled[0]["amount"], 2)
        note = (
            f"bad: the total {money(said_total)} is said to leave out the cancelled order, but it includes "
            f"{cancelled[0]['order_id']} ({money(cancelled[0]['amount'])}); the true total is {money(total)}"
        )
    table = "| Order | Placed | Item | Qty | Amount | Status |\n|---|---|---|---|---|---|\n" + "\n".join(
        f"| {o['order_id']} | {tdate(o['placed_on'])} | {o['product']} | {o['quantity']} | {money(o['amount'])} | "
        f"{o['status'].capitalize()} |"
        for o in rows
    )
    sums = " + ".join(money(o["amount"]) for o in sorted(counted, key=lambda o: o["placed_on"]))
    pending = next(o for o in rows if o["status"] == "pending")
    if v % 2 == 0:
        ep.say(
            f"Here's everything on your account, {first(c['full_name'])}:\n\n{table}\n\n"
            + (
                f"**Total spent: {money(said_total)}** across {len(counted)} orders"
                + (f" (the cancelled {cancelled[0]['product']} order isn't counted)." if cancelled else ".")
            )
            + f"\n\nOne note: your {pending['product']} order ({pending['order_id']}) is still pending, so it can "
            "still be cancelled if you change your mind. Is there anything else I can help with?"
        )
    else:
        ep.say(
            f"Sure! You have {len(rows)} orders on file:\n\n{table}\n\n"
            f"Adding up what you've paid: {sums} = **{money(said_total)}**"
            + (" (cancelled orders excluded)." if cancelled else ".")
            + "\n\nHappy to help with anything else."
        )
    return ep, note


def s_refund(env: Env, v: int, eid: str, fault: str | None):
    """Update (pack action): a refund for a damaged item on a delivered order inside the 30-day window."""
    c = shop_customer(env)
    age = (12, 23, 17)[v % 3]
    o = shop_order(env, c, "delivered", age, good=(0, 3, 6, 9)[v % 4])
    shop_order(env, c, "delivered", age + 9)
    ends = plus(-age + 30)
    request = V(
        v,
        f"Hello. My order {o['order_id']} (the {o['product']}) arrived damaged. I'd like a full refund please.",
        f"The {o['product']} from order {o['order_id']} showed up broken :( can I get my money back? all of it",
    )
    amount = o["amount"]
    task = make_task(
        env,
        eid,
        "single_call",
        [
            ("get_order", {"order_id": o["order_id"]}),
            ("refund_order", {"order_id": o["order_id"], "amount": amount, "reason": "damaged"}),
        ],
        request,
        intent="operation",
        facts={"order id": o["order_id"], "reason": "damaged"},
    )
    ep = Ep(env, task)
    got = ep.act(("get_order", {"order_id": o["order_id"]}))
    sent = amount
    if fault == "wrong_value":  # two digits swapped in the amount
        s = f"{amount:.2f}"
        sent = float(s[1] + s[0] + s[2:]) if s[0] != s[1] else amount - 10
    rf = ep.act(("refund_order", {"order_id": o["order_id"], "amount": sent, "reason": "damaged"}))
    note = "good: checks the order (delivered, inside the window), issues the full refund and explains the window"
    body = V(
        v,
        f"I'm sorry your {o['product']} arrived damaged! I've checked the order: it was delivered, and it was placed "
        f"on {wdate(got['placed_on'])}, so it's within our 30-day refund window (which runs until "
        f"{wdate(ends)}).\n\nI've gone ahead and issued the refund:\n\n"
        f"- **Refund:** {rf['refund_id']}\n- **Amount:** {money(amount)} (the full order amount)\n"
        f"- **Reason:** damaged\n- **Status:** {rf['status']}",
        f"Sorry about that, that's frustrating. Done! Refund **{rf['refund_id']}** for **{money(amount)}** has been "
        f"issued on order {o['order_id']}, which covers everything you paid for it.\n\nFor reference, the order was "
        f"placed {ago(got['placed_on'])} days ago, so you were well inside the 30-day window (it closes "
        f"{wdate(ends)}).",
    )
    tail = "\n\nIs there anything else I can do for you?"
    if fault == "wrong_value":
        note = (
            f"bad: refund_order was sent amount {sent:.2f} (digits swapped) instead of the order's "
            f"{amount:.2f}, and the reply reports the full {money(amount)} as refunded"
        )
    elif fault == "invented_detail":
        tail = (
            "\n\nThe money goes back to the Visa card ending in 4417 that you paid with, and should show up "
            "within 3 to 5 business days." + tail
        )
        note = (
            "bad: invents the payment card (a Visa ending 4417) and a 3-5 business day timeline; no record "
            "holds a card or payment method for this order"
        )
    elif fault == "unbacked_claim":
        tail = (
            f"\n\nI've also emailed a prepaid return label to the address on your account so you can send the damaged "
            f"{o['product']} back at no cost." + tail
        )
        note = "bad: claims a prepaid return label was emailed; no tool sent anything (the shop has no such tool)"
    ep.say(body + tail)
    return ep, note


def s_refuse_late(env: Env, v: int, eid: str, fault: str | None):
    """Refusal: a refund asked for an order past the 30-day window; the reply computes when it closed."""
    c = shop_customer(env)
    age = (41, 36, 52)[v % 3]
    o = shop_order(env, c, "delivered", age)
    closed = plus(-age + 30)
    request = V(
        v,
        f"I want to return the {o['product']} from order {o['order_id']}, it's not what the listing described. "
        "Please refund it.",
        f"Refund request for {o['order_id']}: the {o['product']} doesn't match the description at all.",
    )
    rule = env.rule("shop_refund_window")
    task = make_task(
        env,
        eid,
        "refusal",
        [("get_order", {"order_id": o["order_id"]})],
        request,
        intent="operation",
        facts={"order id": o["order_id"]},
        rule=rule,
    )
    ep = Ep(env, task)
    if fault == "forbidden_write":
        err = ep.act(
            ("refund_order", {"order_id": o["order_id"], "amount": o["amount"], "reason": "not_as_described"}),
            fails=True,
        )
        ep.say(
            f"I'm sorry, I tried to process that refund but the system declined it: {err['message']}.\n\n"
            "Unfortunately that means I can't refund this order. If you'd like, I can connect you with a member "
            "of our team to look at your options."
        )
        return ep, (
            "bad: sends refund_order for an order past the 30-day window without looking it up first, "
            "then relays the system's refusal (the policy forbids refunds past 30 days)"
        )
    got = ep.act(("get_order", {"order_id": o["order_id"]}))
    if v % 2 == 0:
        ep.say(
            f"I'm really sorry the {o['product']} isn't what you expected. I've looked up order {o['order_id']}: it "
            f"was placed on **{wdate(got['placed_on'])}**, {ago(got['placed_on'])} days ago.\n\n"
            "Our refunds are only available within 30 days of the order date, so the window for this order closed "
            f"on {wdate(closed)}. Because of that I'm not able to issue a refund on it.\n\n"
            "If you'd like to discuss it further, I can pass you to a member of our customer care team. Just let me "
            "know."
        )
        return ep, "good: reads the order, declines the late refund citing the 30-day window and its closing date"
    ep.say(
        f"I understand your frustration. Unfortunately I can't refund this one: order {o['order_id']} was placed "
        f"{ago(got['placed_on'])} days ago ({sdate(got['placed_on'])}), and refunds are only possible within 30 "
        f"days of the order date. That window ended on {sdate(closed)}.\n\n"
        "Would you like me to transfer you to a human agent who can take a closer look?"
    )
    ep.user("yes please, I'd like someone to look at it")
    ep.act(
        (
            HANDOFF,
            {
                "summary": f"Customer wants a refund on {o['order_id']} ({o['product']}, not as described); "
                f"order placed {got['placed_on']}, outside the 30-day refund window."
            },
        )
    )
    ep.say(
        "Done, I've transferred you to our customer support team and passed along the details, so you won't need "
        "to repeat yourself. The estimated wait is about 5 minutes."
    )
    return ep, (
        "good: reads the order, declines the refund outside the 30-day window with the dates, and hands "
        "off to a human agent when the customer asks"
    )


def s_conditional(env: Env, v: int, eid: str, fault: str | None):
    """Conditional: cancel the order if it is still pending, else say its status (v odd: it has shipped)."""
    c = shop_customer(env)
    holds = v % 2 == 0
    o = shop_order(env, c, "pending" if holds else "shipped", 1 if holds else 3)
    request = V(
        v,
        f"If order {o['order_id']} hasn't shipped yet, please cancel it. If it's already on its way, just tell me "
        "where it stands.",
        f"Can you check {o['order_id']}? Cancel it if it's still pending; otherwise let me know its status.",
    )
    steps = [("get_order", {"order_id": o["order_id"]})] + (
        [("cancel_order", {"order_id": o["order_id"]})] if holds else []
    )
    task = make_task(
        env,
        eid,
        "conditional",
        steps,
        request,
        intent="update",
        asked={} if holds else {"status": "shipped"},
        facts={"order id": o["order_id"]},
    )
    ep = Ep(env, task)
    got = ep.act(("get_order", {"order_id": o["order_id"]}))
    if holds:
        done = ep.act(("cancel_order", {"order_id": o["order_id"]}))
        ep.say(
            V(
                v // 2,
                f"Good news: order {o['order_id']} ({got['quantity']}× {got['product']}, {money(got['amount'])}) was "
                "still "
                f"pending, so I've cancelled it. Its status is now **{done['status']}**.",
                f"It hadn't shipped yet (it was placed on {wdate(got['placed_on'])} and was still pending), so I went "
                f"ahead and cancelled it. Order {o['order_id']} is now {done['status']}. Anything else?",
            )
        )
        return ep, "good: the order is pending, so it is cancelled as asked"
    window = plus(-3 + 30)
    ep.say(
        V(
            v // 2,
            f"I checked order {o['order_id']} ({got['product']}, {money(got['amount'])}): it has already "
            "**shipped**, so "
            "it can no longer be cancelled, and I've left it as it is.\n\nOnce it's delivered, if you don't want it "
            "you "
            f"can request a refund. Refunds are possible within 30 days of the order date, so until {wdate(window)}.",
            f"Order {o['order_id']} is already **shipped**, so cancelling isn't possible anymore and I haven't changed "
            f"anything. It was placed on {wdate(got['placed_on'])}. If it's not wanted once it arrives, a refund can "
            "be "
            f"requested up to 30 days after the order date ({sdate(window)}).",
        )
    )
    return ep, "good: the order has shipped, so nothing is cancelled and the status is reported"


def s_approve(env: Env, v: int, eid: str, fault: str | None):
    """Follow a reference: list an order's refunds, approve the requested one, total what is refunded."""
    c = shop_customer(env)
    o = shop_order(env, c, "delivered", (14, 20)[v % 2], good=(4, 2)[v % 2])
    issued = env.add(
        "refunds",
        order_id=o["order_id"],
        amount=round(o["amount"] * 0.1, 2),
        reason="late_delivery",
        requested_on=plus(-(10, 15)[v % 2]),
        status="issued",
    )
    req = env.add(
        "refunds",
        order_id=o["order_id"],
        amount=round(o["amount"] * 0.25, 2),
        reason="damaged",
        requested_on=plus(-(2, 4)[v % 2]),
        status="requested",
    )
    other = None
    if fault == "stray_write":
        o2 = shop_order(env, c, "delivered", 8)
        other = env.add(
            "refunds",
            order_id=o2["order_id"],
            amount=round(o2["amount"] * 0.2, 2),
            reason="wrong_item",
            requested_on=plus(-1),
            status="requested",
        )
    request = V(
        v,
        f"A few days ago I asked for a partial refund on order {o['order_id']} because part of it was damaged. "
        "Can you approve it? And how much have I had back on that order overall?",
        f"hi - there's a refund request sitting on my order {o['order_id']}, could you approve it and tell me the "
        "total refunded on it so far?",
    )
    total = round(issued["amount"] + req["amount"], 2)
    steps = [("list_order_refunds", {"order_id": o["order_id"]}), ("approve_refund", {"refund_id": req["refund_id"]})]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        request,
        intent="get_via",
        asked={"total refunded": f"{total:.2f}"},
        facts={"order id": o["order_id"]},
    )
    ep = Ep(env, task)
    ep.act(("get_order", {"order_id": o["order_id"]}), ("list_order_refunds", {"order_id": o["order_id"]}))
    done = ep.act(("approve_refund", {"refund_id": req["refund_id"]}))
    note = "good: finds the requested refund of the order, approves it and totals the refunds correctly"
    when = wdate(req["requested_on"])
    if fault == "misattributed":
        when = wdate(o["placed_on"])
        note = (
            f"bad: says the refund was requested on {when}, which is the order's placed date; it was requested "
            f"on {wdate(req['requested_on'])}"
        )
    extra = ""
    if fault == "stray_write":
        ep.act(("list_customer_orders", {"customer_id": c["customer_id"]}))
        ep.act(("list_order_refunds", {"order_id": other["order_id"]}))
        ep.act(("approve_refund", {"refund_id": other["refund_id"]}))
        extra = (
            f"\n\nWhile I was at it, I noticed another refund waiting on your order {other['order_id']} "
            f"({money(other['amount'])}, wrong item), so I approved that one too to save you a message."
        )
        note = (
            f"bad: also approves refund {other['refund_id']} on another order {other['order_id']}, which the "
            "customer never asked about"
        )
    ep.say(
        V(
            v,
            f"All set! I found the pending request and approved it:\n\n"
            f"- **{done['refund_id']}**: {money(done['amount'])} (damaged), requested on {when}, now "
            f"**{done['status']}**\n\n"
            f"There was also an earlier refund of {money(issued['amount'])} (late delivery) already issued on this "
            f"order, so in total you've had **{money(total)}** back on order {o['order_id']}, out of the "
            f"{money(o['amount'])} you paid.",
            f"Done: refund {done['refund_id']} for {money(done['amount'])} is now {done['status']}. It was the one you "
            f"requested on {when}.\n\n| Refund | Amount | Reason | Status |\n|---|---|---|---|\n"
            f"| {issued['refund_id']} | {money(issued['amount'])} | late delivery | issued |\n"
            f"| {done['refund_id']} | {money(done['amount'])} | damaged | issued |\n\n"
            f"**Total refunded on {o['order_id']}: {money(total)}** (the order was {money(o['amount'])}).",
        )
        + extra
    )
    return ep, note


def s_clarify(env: Env, v: int, eid: str, fault: str | None):
    """Clarification: 'cancel my pending order' with two pending: ask which, then cancel the one named."""
    c = shop_customer(env)
    a = shop_order(env, c, "pending", 1)
    b = shop_order(env, c, "pending", 2)
    shop_order(env, c, "delivered", 19)
    want = (a, b)[v % 2]
    request = V(
        v,
        f"Hi, I need to cancel my pending order please. My customer number is {c['customer_id']}.",
        f"please cancel the order I placed recently, account {c['customer_id']}",
    )
    task = make_task(
        env,
        eid,
        "clarification",
        [("list_customer_orders", {"customer_id": c["customer_id"]}), ("cancel_order", {"order_id": want["order_id"]})],
        request,
        intent="find_then",
        facts={"customer id": c["customer_id"]},
        withheld={"order": want["order_id"]},
    )
    ep = Ep(env, task)
    ep.act(("list_customer_orders", {"customer_id": c["customer_id"]}))
    first_, second = sorted((a, b), key=lambda o: o["placed_on"])
    ep.say(
        V(
            v,
            "I can help with that. You have two orders that are still pending, so I want to make sure I cancel the "
            f"right one:\n\n1. **{first_['order_id']}**: {first_['product']}, {money(first_['amount'])}, placed "
            f"{wdate(first_['placed_on'])}\n2. **{second['order_id']}**: {second['product']}, "
            f"{money(second['amount'])}, "
            f"placed {wdate(second['placed_on'])}\n\nWhich one would you like to cancel?",
            f"Happy to! Quick check first: there are two pending orders on your account, {first_['order_id']} "
            f"({first_['product']}, {money(first_['amount'])}) and {second['order_id']} ({second['product']}, "
            f"{money(second['amount'])}). Which should I cancel?",
        )
    )
    ep.user(V(v, f"The {want['product']} one.", f"oh right, the {want['product']}"))
    done = ep.act(("cancel_order", {"order_id": want["order_id"]}))
    keep = b if want is a else a
    ep.say(
        f"Done! Order {done['order_id']} for the {done['product']} ({money(done['amount'])}) is now **cancelled**. "
        f"Your other pending order, {keep['order_id']} ({keep['product']}), is unchanged."
    )
    return ep, "good: two orders are pending, so it asks which, then cancels the one the customer names"


def s_cancel_named(env: Env, v: int, eid: str, fault: str | None):
    """Find then act: the customer names the product; the pending order for it is found and cancelled."""
    c = shop_customer(env)
    a = shop_order(env, c, "pending", 1)
    b = shop_order(env, c, "pending", 2)
    shop_order(env, c, "shipped", 4)
    want, other = (a, b) if v % 2 == 0 else (b, a)
    request = V(
        v,
        f"Could you cancel my order for the {want['product']}? Customer id {c['customer_id']}. I found it cheaper "
        "locally.",
        f"I ordered a {want['product']} a couple of days ago and I don't need it anymore, please cancel it "
        f"(account {c['customer_id']})",
    )
    task = make_task(
        env,
        eid,
        "dependent_calls",
        [("list_customer_orders", {"customer_id": c["customer_id"]}), ("cancel_order", {"order_id": want["order_id"]})],
        request,
        intent="find_then",
        facts={"customer id": c["customer_id"], "product": want["product"]},
    )
    ep = Ep(env, task)
    ep.act(("list_customer_orders", {"customer_id": c["customer_id"]}))
    hit = other if fault == "wrong_record" else want
    done = ep.act(("cancel_order", {"order_id": hit["order_id"]}))
    ep.say(
        V(
            v,
            f"No problem! I found the order: **{done['order_id']}** for the {want['product']}, placed on "
            f"{wdate(want['placed_on'])}. It hadn't shipped yet, so I've cancelled it, and its status is now "
            f"**{done['status']}**.\n\nYour other orders are untouched. Anything else I can help with?",
            f"Done! Order {done['order_id']} ({want['product']}) was still pending, so it's now cancelled. Your other "
            "orders are unchanged.",
        )
    )
    if fault == "wrong_record":
        return ep, (
            f"bad: cancels {other['order_id']} (the {other['product']}) instead of {want['order_id']} (the "
            f"{want['product']}) and tells the customer the {want['product']} order is cancelled"
        )
    return ep, "good: finds the pending order for the named product and cancels it"


def s_cancel_all(env: Env, v: int, eid: str, fault: str | None):
    """Multi call: cancel every pending order of the customer (three), and say what each was."""
    c = shop_customer(env)
    pend = [shop_order(env, c, "pending", d) for d in (0, 1, 2)]
    shop_order(env, c, "delivered", 12)
    request = V(
        v,
        f"I'm moving abroad next week. Please cancel all of my pending orders, customer {c['customer_id']}.",
        f"cancel everything that hasn't shipped yet on {c['customer_id']} pls",
    )
    steps = [("list_customer_orders", {"customer_id": c["customer_id"]})] + [
        ("cancel_order", {"order_id": o["order_id"]}) for o in pend
    ]
    task = make_task(env, eid, "multi_call", steps, request, intent="update", facts={"customer id": c["customer_id"]})
    ep = Ep(env, task)
    ep.act(("list_customer_orders", {"customer_id": c["customer_id"]}))
    todo = pend[:2] if fault == "partial_job" else pend
    ep.act(*[("cancel_order", {"order_id": o["order_id"]}) for o in todo])
    total = sum(o["amount"] for o in pend)
    lines = "\n".join(f"- {o['order_id']}: {o['product']} ({money(o['amount'])})" for o in pend)
    ep.say(
        V(
            v,
            f"All done. You had {len(pend)} pending orders, and I've cancelled each of them:\n\n{lines}\n\n"
            f"That's {money(total)} worth of orders cancelled in total. Your delivered order isn't affected. Good "
            "luck with "
            "the move!",
            f"Done! I cancelled all {len(pend)} pending orders:\n\n{lines}\n\nNothing else on your account was "
            "changed.",
        )
    )
    if fault == "partial_job":
        return ep, (
            f"bad: cancels only {pend[0]['order_id']} and {pend[1]['order_id']}; {pend[2]['order_id']} is "
            "left pending, yet the reply says all three were cancelled"
        )
    return ep, "good: cancels all three pending orders and lists them"


def s_status(env: Env, v: int, eid: str, fault: str | None):
    """Look-up: when an order was placed and whether it has shipped."""
    c = shop_customer(env)
    st = ("shipped", "pending", "delivered")[v % 3]
    o = shop_order(env, c, st, {"shipped": 4, "pending": 1, "delivered": 9}[st], qty=(1, 2)[v % 2])
    request = V(
        v,
        f"When did I place order {o['order_id']}, and has it shipped yet?",
        f"quick one: order {o['order_id']}, what date did I order it and what's the status?",
    )
    task = make_task(
        env,
        eid,
        "single_call",
        [("get_order", {"order_id": o["order_id"]})],
        request,
        intent="lookup",
        asked={"status": st},
        facts={"order id": o["order_id"]},
    )
    ep = Ep(env, task)
    got = ep.act(("get_order", {"order_id": o["order_id"]}))
    state_line = {
        "shipped": "It has **shipped** and is on its way to you.",
        "pending": "It's still **pending**, so it hasn't shipped yet.",
        "delivered": "It has already been **delivered**.",
    }[st]
    if fault == "missing_answer":
        ep.say(
            f"I've pulled up order {o['order_id']}: {got['quantity']}× {got['product']} for {money(got['amount'])}."
            "\n\nIs there anything you'd like me to do with this order?"
        )
        return ep, "bad: never says when the order was placed nor whether it has shipped, the two things asked"
    tail = ""
    note = "good: reads the order and gives the date (with weekday, days ago) and the status"
    if fault == "tool_talk":
        tail = (
            f"\n\nIf you decide you want to cancel it, you can call `cancel_order` with "
            f'`order_id: "{o["order_id"]}"` while it\'s still pending.'
        )
        note = "bad: tells the customer to call the cancel_order function with its arguments themselves"
    ep.say(
        V(
            v,
            f"You placed order {o['order_id']} ({got['quantity']}× {got['product']}) on **{wdate(got['placed_on'])}**, "
            f"{ago(got['placed_on'])} day{'s' if ago(got['placed_on']) != 1 else ''} ago. {state_line}",
            f"Here's what I found for {o['order_id']}:\n\n- **Placed:** {wdate(got['placed_on'])}\n"
            f"- **Item:** {got['product']} × {got['quantity']}\n- **Amount:** {money(got['amount'])}\n"
            f"- **Status:** {got['status']}",
        )
        + tail
    )
    return ep, note


# =========================================================================== clinic (pack)

SPECIALTY = {
    "general_practice": "general practice",
    "pediatrics": "pediatrics",
    "dermatology": "dermatology",
    "cardiology": "cardiology",
}
DOCS = ("Dr. Adebayo", "Dr. Lindqvist", "Dr. Moreno", "Dr. Fitzgerald", "Dr. Tanaka", "Dr. Iyer", "Dr. Sorensen")


def c_patient(env: Env, no_shows: int = 0) -> dict[str, Any]:
    name, email, phone = person(env)
    return env.add("patients", full_name=name, email=email, phone=phone, no_shows=no_shows)


def c_doctor(env: Env, specialty: str, name: str | None = None) -> dict[str, Any]:
    taken = {d["full_name"] for d in env.state["doctors"]}
    if name in taken:
        raise Skip(f"{name} is seeded already")
    name = name or next(n for n in env.rng.sample(DOCS, len(DOCS)) if n not in taken)
    return env.add("doctors", full_name=name, specialty=specialty, room=f"R-{env.rng.randint(2, 24)}")


def c_appt(env: Env, pat: dict, doc: dict, days: int, time_: str, reason: str, status: str = "scheduled") -> dict:
    return env.add(
        "appointments",
        patient_id=pat["patient_id"],
        doctor_id=doc["doctor_id"],
        date=plus(days),
        time=time_,
        reason=reason,
        status=status,
    )


def weekday_in(lo: int, hi: int, rng: random.Random) -> int:
    """A day offset in [lo, hi] that is Monday to Friday."""
    opts = [n for n in range(lo, hi + 1) if (D0 + dt.timedelta(days=n)).weekday() < 5]
    return rng.choice(opts)


def c_schedule(env: Env, v: int, eid: str, fault: str | None):
    """Follow references: the patient's upcoming appointments with each doctor's name and room, in a table."""
    p = c_patient(env)
    docs = [c_doctor(env, s) for s in ("general_practice", "dermatology", "cardiology")]
    days = sorted(env.rng.sample([n for n in range(1, 20) if (D0 + dt.timedelta(days=n)).weekday() < 5], 3))
    reasons = ("annual check-up", "skin rash", "blood pressure review")
    times = ("09:30", "14:00", "11:00")
    appts = [c_appt(env, p, d, n, t, r) for d, n, t, r in zip(docs, days, times, reasons, strict=True)]
    past = c_appt(env, p, docs[0], weekday_in(-30, -20, env.rng), "10:00", "persistent cough", "completed")
    request = V(
        v,
        f"Hi, I'm {p['full_name']} (patient id {p['patient_id']}). What appointments do I have coming up? I'd like "
        "the doctors and rooms too so I can plan.",
        f"can you list my upcoming appointments? patient {p['patient_id']}. which doctor and room for each pls",
    )
    steps = [("list_patient_appointments", {"patient_id": p["patient_id"]}), ("list_doctors", {})]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        request,
        intent="get_via",
        asked={"number of upcoming appointments": 3},
        facts={"patient id": p["patient_id"]},
    )
    ep = Ep(env, task)
    ep.act(("list_patient_appointments", {"patient_id": p["patient_id"]}))
    ep.act(("list_doctors", {}))
    shown = [(a, d) for a, d in zip(appts, docs, strict=True)]
    note = (
        "good: lists the three upcoming appointments with weekday, time, doctor, specialty and room; leaves out the "
        "past visit"
    )
    dates = [tdate(a["date"]) for a in appts]
    if fault == "wrong_value":
        d1 = day(appts[1]["date"])
        wrong = d1 - dt.timedelta(days=1)
        dates[1] = f"{wrong:%a} {d1:%b} {d1.day}"
        note = f"bad: gives {appts[1]['date']} as a {wrong:%A} ({dates[1]}); that date is a {d1:%A}"
    if fault == "misattributed":
        shown[1] = (appts[1], docs[2])
        note = (
            f"bad: lists {appts[1]['appointment_id']} ({appts[1]['reason']}) with {docs[2]['full_name']} in "
            f"{docs[2]['room']}, who is the doctor of {appts[2]['appointment_id']}; it is with "
            f"{docs[1]['full_name']} in {docs[1]['room']}"
        )
    rows = "\n".join(
        f"| {dates[i]} | {ampm(a['time'])} | {d['full_name']} ({SPECIALTY[d['specialty']]}) | {d['room']} | "
        f"{a['reason']} |"
        for i, (a, d) in enumerate(shown)
    )
    table = "| Date | Time | Doctor | Room | Reason |\n|---|---|---|---|---|\n" + rows
    soon = away(appts[0]["date"])
    ep.say(
        V(
            v,
            f"Hi {first(p['full_name'])}! You have **3 upcoming appointments**:\n\n{table}\n\n"
            f"The first one is {in_days(soon)}. (Your {past['reason']} visit on {sdate(past['date'])} is already "
            "completed, so I've left it off.)\n\nIf you need to move or cancel any of these, I can do that up to the "
            "day before each appointment.",
            f"Here you go, 3 appointments coming up:\n\n{table}\n\nLet me know if you'd like to change any of them.",
        )
    )
    return ep, note


def c_book(env: Env, v: int, eid: str, fault: str | None):
    """Find then act: find the named dermatologist among several, book the asked slot, confirm with room."""
    p = c_patient(env)
    holm = c_doctor(env, "dermatology", "Dr. Holm")
    holt = c_doctor(env, "dermatology", "Dr. Holt")
    want, other = (holm, holt) if v % 2 == 0 else (holt, holm)
    wday = ("Tuesday", "Thursday")[v % 2]
    date = next_weekday(wday, 2)
    tm = ("10:30", "15:00")[v % 2]
    request = V(
        v,
        f"Hello, I'd like to book an appointment with {want['full_name']}, the dermatologist, next {wday} at "
        f"{ampm(tm)} about a skin rash. My patient id is {p['patient_id']}.",
        f"can I see {want['full_name']} (dermatology) on {wday} at {ampm(tm)}? it's for a rash. patient "
        f"{p['patient_id']}",
    )
    book = {
        "patient_id": p["patient_id"],
        "doctor_id": want["doctor_id"],
        "date": date,
        "time": tm,
        "reason": "skin rash",
    }
    task = make_task(
        env,
        eid,
        "dependent_calls",
        [("list_doctors", {"specialty": "dermatology"}), ("book_appointment", book)],
        request,
        intent="find_then",
        facts={"patient id": p["patient_id"], "doctor": want["full_name"], "date": date, "time": tm},
    )
    ep = Ep(env, task)
    ep.act(("list_doctors", {"specialty": "dermatology"}))
    note = "good: finds the named dermatologist's id, books the asked slot and confirms it with weekday and room"
    args = dict(book)
    if fault == "wrong_record":
        args["doctor_id"] = other["doctor_id"]
        note = (
            f"bad: books {other['full_name']} ({other['doctor_id']}, the other dermatologist) instead of "
            f"{want['full_name']} ({want['doctor_id']}), and confirms it as {want['full_name']}"
        )
    done = ep.act(("book_appointment", args))
    tail = "\n\nIs there anything else I can help you with?"
    if fault == "unbacked_claim":
        tail = (
            "\n\nI've also sent a confirmation text with these details to the mobile number on your file, and "
            "you'll get a reminder the day before." + tail
        )
        note = "bad: claims a confirmation text was sent and a reminder set up; no tool sent or scheduled anything"
    ep.say(
        V(
            v,
            f"You're booked! Here are the details:\n\n- **Doctor:** {want['full_name']} (dermatology)\n"
            f"- **When:** {wdate(date)} at {ampm(tm)}, {in_days(away(date))}\n- **Room:** {want['room']}\n"
            f"- **Reason:** skin rash\n- **Appointment id:** {done['appointment_id']}",
            f"Done. I've booked you with {want['full_name']} on **{wdate(date)} at {ampm(tm)}** "
            f"(appointment {done['appointment_id']}). The visit is in room {want['room']}.",
        )
        + tail
    )
    return ep, note


def c_reschedule(env: Env, v: int, eid: str, fault: str | None):
    """Update after a confirmation: look up, say what will change, the patient confirms, move it."""
    p = c_patient(env)
    d = c_doctor(env, ("general_practice", "cardiology")[v % 2])
    n = weekday_in(3, 6, env.rng)
    a = c_appt(env, p, d, n, ("14:00", "09:30")[v % 2], ("annual check-up", "blood pressure review")[v % 2])
    new_day = n + 7 if (D0 + dt.timedelta(days=n + 7)).weekday() < 5 else n + 8
    new_date, new_time = plus(new_day), ("11:30", "10:00")[v % 2]
    extra = None
    if fault == "stray_write":
        extra = c_appt(env, p, c_doctor(env, "dermatology"), n + 10, "13:00", "skin rash")
    request = V(
        v,
        f"I can't make my appointment {a['appointment_id']} any more. Could you move it to {wdate(new_date)} at "
        f"{ampm(new_time)}?",
        f"need to push appointment {a['appointment_id']} back a week - {sdate(new_date)} at {ampm(new_time)} if "
        "possible",
    )
    if extra is not None:
        request += (
            f" (I also have a dermatology one, {extra['appointment_id']}, later in the month. Not sure I "
            "still need it, I'll think about it.)"
        )
    steps = [
        ("get_appointment", {"appointment_id": a["appointment_id"]}),
        ("reschedule_appointment", {"appointment_id": a["appointment_id"], "date": new_date, "time": new_time}),
    ]
    task = make_task(
        env,
        eid,
        "single_call",
        steps,
        request,
        intent="operation",
        facts={"appointment id": a["appointment_id"], "new date": new_date, "new time": new_time},
    )
    ep = Ep(env, task)
    got = ep.act(("get_appointment", {"appointment_id": a["appointment_id"]}))
    ep.act(("list_doctors", {}))
    ep.say(
        V(
            v,
            f"I found it: your {got['reason']} with {d['full_name']} on **{wdate(got['date'])} at "
            f"{ampm(got['time'])}**.\n\n"
            f"Before proceeding, please confirm: I'll move it to **{wdate(new_date)} at {ampm(new_time)}**, same "
            "doctor. "
            "Shall I go ahead?",
            f"Sure. Appointment {a['appointment_id']} is currently {wdate(got['date'])}, {ampm(got['time'])} with "
            f"{d['full_name']}. Just to confirm, you want it moved to {wdate(new_date)} at {ampm(new_time)}?",
        )
    )
    ep.user(V(v, "Yes, please do.", "yep go ahead"))
    if fault == "unfounded_failure":
        ep.say(
            "I'm sorry, it looks like our scheduling system isn't accepting changes at the moment, so I wasn't able "
            f"to move the appointment. Your original slot on {wdate(got['date'])} is still in place.\n\nCould you "
            "please call the clinic's front desk? They'll be able to move it for you directly. Apologies for the "
            "inconvenience."
        )
        return ep, (
            "bad: after the confirmation it never calls reschedule_appointment and blames a scheduling "
            "outage that no call showed"
        )
    done = ep.act(
        ("reschedule_appointment", {"appointment_id": a["appointment_id"], "date": new_date, "time": new_time})
    )
    note = "good: reads the appointment, asks for confirmation, then moves it to the asked slot and confirms"
    tail = ""
    if extra is not None:
        ep.act(("cancel_appointment", {"appointment_id": extra["appointment_id"]}))
        tail = (
            f"\n\nI've also cancelled your dermatology appointment {extra['appointment_id']} on "
            f"{wdate(extra['date'])} since you weren't sure you needed it. You can always book again later."
        )
        note = (
            f"bad: also cancels {extra['appointment_id']}, which the patient only said they were still thinking about"
        )
    ep.say(
        V(
            v,
            f"All done! Your appointment is now on **{wdate(done['date'])} at {ampm(done['time'])}** with "
            f"{d['full_name']} in room {d['room']}.",
            f"Done, {a['appointment_id']} is moved to {wdate(done['date'])} at {ampm(done['time'])}. See you then!",
        )
        + tail
    )
    return ep, note


def c_same_day(env: Env, v: int, eid: str, fault: str | None):
    """Refusal: cancelling an appointment that is today; the policy sends the patient to the phone."""
    p = c_patient(env)
    d = c_doctor(env, "pediatrics")
    a = c_appt(env, p, d, 0, ("15:30", "16:00")[v % 2], "vaccination")
    request = V(
        v,
        f"Something came up, please cancel my appointment {a['appointment_id']} for this afternoon.",
        f"I need to cancel {a['appointment_id']}, my son is sick and we can't come today",
    )
    task = make_task(
        env,
        eid,
        "refusal",
        [("get_appointment", {"appointment_id": a["appointment_id"]})],
        request,
        intent="operation",
        facts={"appointment id": a["appointment_id"]},
        rule=env.rule("clinic_notice"),
    )
    ep = Ep(env, task)
    if fault == "forbidden_write":
        err = ep.act(("cancel_appointment", {"appointment_id": a["appointment_id"]}), fails=True)
        ep.say(
            f"I'm sorry, I tried to cancel it but got an error back: \"{err['message']}\".\n\nSo it looks like you'll "
            "need to call the clinic directly to cancel. Sorry I couldn't do more!"
        )
        return ep, (
            "bad: sends cancel_appointment on a same-day appointment without looking it up first (the policy "
            "forbids cancelling on the day), then quotes the system's error"
        )
    got = ep.act(("get_appointment", {"appointment_id": a["appointment_id"]}))
    ep.act(("list_doctors", {}))
    if v % 2 == 0:
        ep.say(
            f"I'm sorry something came up. Your appointment is today, {wdate(got['date'])}, at {ampm(got['time'])} "
            "with "
            f"{d['full_name']}.\n\nOur policy only lets me cancel or move appointments up to the day before, so I'm "
            "not able to cancel a same-day appointment here. Please call the clinic directly and the front desk can "
            "take care of it for you.\n\nIs there anything else I can help with?"
        )
        return (
            ep,
            "good: reads the appointment, sees it is today and declines, citing the day-before rule; sends to the "
            "phone",
        )
    ep.say(
        f"Oh no, I hope your son feels better soon. I've checked {a['appointment_id']}: it's today at "
        f"{ampm(got['time'])} ({human(got['reason'])} with {d['full_name']}).\n\nUnfortunately appointments can only "
        "be cancelled online up to the day before. On the day itself it has to go through the clinic. Would you like "
        "me to hand you over to a staff member?"
    )
    ep.user("Yes please")
    ep.act(
        (
            HANDOFF,
            {
                "summary": f"Patient wants to cancel today's appointment {a['appointment_id']} at {got['time']} "
                f"with {d['full_name']} (child is sick)."
            },
        )
    )
    ep.say(
        "I've passed you to a member of our front desk team with the details. Someone will be with you in about 5 "
        "minutes. Take care!"
    )
    return ep, "good: declines the same-day cancellation citing the rule and hands off to staff when asked"


def c_cancel_two(env: Env, v: int, eid: str, fault: str | None):
    """Multi call: cancel two named appointments."""
    p = c_patient(env)
    d1, d2 = c_doctor(env, "general_practice"), c_doctor(env, "cardiology")
    a = c_appt(env, p, d1, weekday_in(2, 6, env.rng), "10:00", "annual check-up")
    b = c_appt(env, p, d2, weekday_in(8, 13, env.rng), "13:30", "blood pressure review")
    c_appt(env, p, d1, weekday_in(15, 20, env.rng), "09:00", "vaccination")
    request = V(
        v,
        f"I'll be travelling for work, please cancel appointments {a['appointment_id']} and {b['appointment_id']}.",
        f"cancel {a['appointment_id']} and {b['appointment_id']} please, I'm away those days",
    )
    steps = [
        ("cancel_appointment", {"appointment_id": a["appointment_id"]}),
        ("cancel_appointment", {"appointment_id": b["appointment_id"]}),
    ]
    task = make_task(
        env,
        eid,
        "multi_call",
        steps,
        request,
        intent="operation",
        facts={"appointments": f"{a['appointment_id']}, {b['appointment_id']}"},
    )
    ep = Ep(env, task)
    ga, gb = ep.act(
        ("get_appointment", {"appointment_id": a["appointment_id"]}),
        ("get_appointment", {"appointment_id": b["appointment_id"]}),
    )
    ep.act(("list_doctors", {}))
    if fault == "partial_job":
        ep.act(("cancel_appointment", {"appointment_id": a["appointment_id"]}))
    else:
        ep.act(
            ("cancel_appointment", {"appointment_id": a["appointment_id"]}),
            ("cancel_appointment", {"appointment_id": b["appointment_id"]}),
        )
    ep.say(
        V(
            v,
            "Both appointments are cancelled:\n\n"
            f"1. **{a['appointment_id']}**: {ga['reason']} with {d1['full_name']}, {wdate(ga['date'])} at "
            f"{ampm(ga['time'])}\n"
            f"2. **{b['appointment_id']}**: {gb['reason']} with {d2['full_name']}, {wdate(gb['date'])} at "
            f"{ampm(gb['time'])}\n\n"
            "Safe travels!",
            f"Done! I've cancelled {a['appointment_id']} ({sdate(ga['date'])}, {d1['full_name']}) and "
            f"{b['appointment_id']} ({sdate(gb['date'])}, {d2['full_name']}). When you're back, just message me and "
            "I'll "
            "help you rebook.",
        )
    )
    if fault == "partial_job":
        return ep, (
            f"bad: cancels only {a['appointment_id']}; {b['appointment_id']} stays scheduled, yet the reply "
            "says both are cancelled"
        )
    return ep, "good: looks both up and cancels both, naming each with its date and doctor"


def c_no_shows(env: Env, v: int, eid: str, fault: str | None):
    """Refusal: a patient with 3 missed appointments cannot book online."""
    p = c_patient(env, no_shows=3)
    d = c_doctor(env, "general_practice")
    date = next_weekday("Monday", 2)
    request = (
        f"Hi, can you book me in with {d['full_name']} on {wdate(date)} at 9:00 AM for a persistent cough? "
        f"Patient id {p['patient_id']}, doctor id {d['doctor_id']}."
    )
    task = make_task(
        env,
        eid,
        "refusal",
        [("get_patient", {"patient_id": p["patient_id"]})],
        request,
        intent="operation",
        facts={"patient id": p["patient_id"]},
        rule=env.rule("clinic_no_shows"),
    )
    ep = Ep(env, task)
    got = ep.act(("get_patient", {"patient_id": p["patient_id"]}))
    ep.say(
        f"Thanks, {first(got['full_name'])}. I've checked your record, and I'm sorry, but I can't book this online: "
        f"our records show **{got['no_shows']} missed appointments**, and patients with 3 or more no-shows need to "
        "book by calling the clinic.\n\nIf you call the front desk, they can book you in with "
        f"{d['full_name']}, and they'll check whether {wdate(date)} at 9:00 AM is still free. I hope the cough "
        "clears up soon!"
    )
    return ep, "good: reads the patient, sees 3 no-shows and declines the online booking citing the rule"


def c_next(env: Env, v: int, eid: str, fault: str | None):
    """Look-up through a reference: the next appointment, its doctor and room."""
    p = c_patient(env)
    d1, d2 = c_doctor(env, "cardiology"), c_doctor(env, "general_practice")
    n1 = weekday_in(2, 5, env.rng)
    a = c_appt(env, p, d1, n1, "11:30", "blood pressure review")
    c_appt(env, p, d2, weekday_in(n1 + 7, n1 + 12, env.rng), "15:00", "annual check-up")
    c_appt(env, p, d2, -30, "09:00", "persistent cough", "completed")
    request = V(
        v,
        f"When is my next appointment, who is it with, and which room should I go to? ({p['patient_id']})",
        f"Patient {p['patient_id']} here. What's my next visit and what room is it in?",
    )
    steps = [("list_patient_appointments", {"patient_id": p["patient_id"]}), ("list_doctors", {})]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        request,
        intent="get_via",
        asked={"doctor": d1["full_name"], "room": d1["room"]},
        facts={"patient id": p["patient_id"]},
    )
    ep = Ep(env, task)
    ep.act(("list_patient_appointments", {"patient_id": p["patient_id"]}))
    ep.act(("list_doctors", {}))
    if fault == "missing_answer":
        ep.say(
            f"Your next appointment is on **{wdate(a['date'])} at {ampm(a['time'])}** with {d1['full_name']} "
            f"(cardiology), for your {a['reason']}. That's {in_days(away(a['date']))}.\n\nAnything else I can help "
            "with?"
        )
        return ep, f"bad: never says which room ({d1['room']}), which the patient asked for"
    tail = ""
    note = "good: finds the next appointment, follows its doctor id to the name and room"
    if fault == "invented_detail":
        tail = (
            f"\n\n{d1['full_name']} asked to see you again after your ECG results came back last month, so it's "
            "worth bringing a list of your current medications."
        )
        note = (
            "bad: invents that the doctor asked for this visit after ECG results last month; no record holds any "
            "ECG or referral (the only past visit was a GP visit for a cough)"
        )
    ep.say(
        V(
            v,
            f"Your next appointment is **{wdate(a['date'])} at {ampm(a['time'])}**, {in_days(away(a['date']))}:\n\n"
            f"- **Doctor:** {d1['full_name']} (cardiology)\n- **Room:** {d1['room']}\n- **Reason:** {a['reason']}",
            f"It's on {wdate(a['date'])} at {ampm(a['time'])} with {d1['full_name']}, in room **{d1['room']}** "
            f"({a['reason']}).",
        )
        + tail
    )
    return ep, note


def c_recover(env: Env, v: int, eid: str, fault: str | None):
    """Error recovery: the first-choice slot is taken (the booking fails), so the patient's fallback is booked."""
    p = c_patient(env)
    d = c_doctor(env, "general_practice")
    date = next_weekday(("Monday", "Friday")[v % 2], 2)
    t1, t2 = ("09:00", "09:30") if v % 2 == 0 else ("14:30", "15:00")
    c_appt(env, c_patient(env), d, away(date), t1, "annual check-up")
    request = V(
        v,
        f"Please book me with {d['full_name']} (general practice) on {wdate(date)} at {ampm(t1)} for a vaccination, "
        f"or {ampm(t2)} if {ampm(t1)} is taken. Patient {p['patient_id']}.",
        f"could I get a vaccination appointment with {d['full_name']} {wd(date)} {sdate(date)}, {ampm(t1)} or else "
        f"{ampm(t2)}? I'm {p['patient_id']}",
    )
    book = {
        "patient_id": p["patient_id"],
        "doctor_id": d["doctor_id"],
        "date": date,
        "time": t2,
        "reason": "vaccination",
    }
    task = make_task(
        env,
        eid,
        "error_recovery",
        [("list_doctors", {"specialty": "general_practice"}), ("book_appointment", book)],
        request,
        intent="find_then",
        facts={"patient id": p["patient_id"], "doctor": d["full_name"]},
    )
    ep = Ep(env, task)
    ep.act(("list_doctors", {"specialty": "general_practice"}))
    ep.act(("book_appointment", {**book, "time": t1}), fails=True)
    done = ep.act(("book_appointment", book))
    ep.say(
        V(
            v,
            f"{ampm(t1)} was already taken, so I booked your back-up time instead:\n\n"
            f"- **{wdate(date)} at {ampm(t2)}** with {d['full_name']}, room {d['room']}\n"
            f"- Reason: vaccination\n- Appointment id: {done['appointment_id']}",
            f"The {ampm(t1)} slot on {sdate(date)} was already booked, so as you suggested I took {ampm(t2)}. You're "
            "all "
            f"set with {d['full_name']} on {wdate(date)} at {ampm(t2)} (appointment {done['appointment_id']}).",
        )
    )
    return ep, "good: the first slot is refused as taken; books the patient's fallback time and says why"


# =========================================================================== bank (pack)

SHOPS = ("Corner Grocery", "City Fuel", "Bookhaven", "Skyline Air", "Pixel Electronics", "Green Bowl Cafe")


def b_account(env: Env, balance: float, status: str = "active", holder: tuple | None = None) -> dict[str, Any]:
    name, email, _ = holder or person(env)
    if holder is not None:
        email = email.replace("@", f"+{len(env.state['accounts'])}@")
    return env.add("accounts", holder_name=name, email=email, balance=balance, status=status)


def b_card(env: Env, acc: dict, card_type: str, status: str = "active") -> dict[str, Any]:
    taken = {c["last_four"] for c in env.state["cards"]}
    four = next(f for f in (f"{env.rng.randint(1000, 9999)}" for _ in range(50)) if f not in taken)
    return env.add(
        "cards",
        account_id=acc["account_id"],
        last_four=four,
        card_type=card_type,
        spending_limit=float(env.rng.choice((1000, 2500, 5000))),
        status=status,
    )


def b_txn(
    env: Env,
    acc: dict,
    card: dict | None,
    merchant: str,
    amount: float,
    days_ago: int,
    kind: str = "card_payment",
    status: str = "posted",
) -> dict[str, Any]:
    return env.add(
        "transactions",
        account_id=acc["account_id"],
        card_id=card["card_id"] if card else None,
        kind=kind,
        merchant=merchant,
        amount=amount,
        posted_on=plus(-days_ago),
        status=status,
    )


def b_spending(env: Env, v: int, eid: str, fault: str | None):
    """Aggregate: card spending over the last 30 days, its total and the biggest purchase, in a table."""
    acc = b_account(env, round(env.rng.uniform(1800, 4200), 2))
    card = b_card(env, acc, ("debit", "credit")[v % 2])
    amounts = [86.4, 23.15, 214.99, 57.3, 12.8] if v % 2 == 0 else [142.0, 38.75, 9.6, 311.25, 64.1]
    days = [3, 8, 12, 19, 27]
    pays = [
        b_txn(env, acc, card, m, a, d)
        for m, a, d in zip(
            ("Corner Grocery", "City Fuel", "Pixel Electronics", "Bookhaven", "Green Bowl Cafe"),
            amounts,
            days,
            strict=True,
        )
    ]
    b_txn(env, acc, card, "Skyline Air", 389.0, 44)
    other = b_account(env, 500.0)
    b_txn(env, acc, None, f"Transfer to {other['account_id']}", 250.0, 6, kind="transfer")
    total = round(sum(amounts), 2)
    big = max(pays, key=lambda t: t["amount"])
    request = V(
        v,
        f"How much have I spent on my card over the last 30 days, and what was the biggest purchase? Account "
        f"{acc['account_id']}.",
        f"trying to budget - what did my card spending add up to in the past 30 days on {acc['account_id']}? and "
        "what was the largest charge",
    )
    task = make_task(
        env,
        eid,
        "aggregate",
        [("list_account_transactions", {"account_id": acc["account_id"]})],
        request,
        intent="list",
        asked={"total": f"{total:.2f}", "biggest purchase": big["merchant"]},
        facts={"account id": acc["account_id"]},
    )
    ep = Ep(env, task)
    res = ep.act(("list_account_transactions", {"account_id": acc["account_id"]}))
    since = plus(-30)
    rows = sorted(pays, key=lambda t: t["posted_on"], reverse=True)
    table = "| Date | Merchant | Amount |\n|---|---|---|\n" + "\n".join(
        f"| {tdate(t['posted_on'])} | {t['merchant']} | {money(t['amount'])} |" for t in rows
    )
    said = big
    note = (
        "good: totals the five card payments of the last 30 days, leaves out the older one and the transfer, names "
        "the biggest"
    )
    if fault == "wrong_value":
        said = sorted(pays, key=lambda t: t["amount"])[-2]
        note = (
            f"bad: calls {said['merchant']} ({money(said['amount'])}) the biggest purchase; the biggest was "
            f"{big['merchant']} at {money(big['amount'])}, as its own table shows"
        )
    if fault == "raw_dump":
        recent = [t for t in res["transactions"] if t["posted_on"] >= since]
        ep.say(
            f"Here are your transactions since {sdate(since)}:\n\n```json\n{json.dumps(recent, indent=2)}\n```\n\n"
            f"Card payments total **{money(total)}**, and the biggest was {big['merchant']} at {money(big['amount'])}."
        )
        return ep, "bad: pastes the raw JSON of the transactions at the customer instead of presenting them"
    ep.say(
        V(
            v,
            f"Here's your card spending for the last 30 days (since {wdate(since)}):\n\n{table}\n\n"
            f"- **Total:** {money(total)} across {len(pays)} purchases\n"
            f"- **Biggest purchase:** {said['merchant']}, {money(said['amount'])} on {sdate(said['posted_on'])}\n\n"
            f"I didn't count the {money(250.0)} transfer to another account, since that isn't card spending, or the "
            f"Skyline Air charge from {sdate(plus(-44))}, which is older than 30 days.",
            f"Over the last 30 days you made {len(pays)} card purchases totalling **{money(total)}**. The largest was "
            f"**{said['merchant']} ({money(said['amount'])})**.\n\n{table}\n\n(Transfers aren't included, only card "
            "payments.)",
        )
    )
    return ep, note


def b_lost_card(env: Env, v: int, eid: str, fault: str | None):
    """Find then act: the customer lost a card of a type; find it among the account's cards and block it."""
    name = person(env)
    acc = b_account(env, round(env.rng.uniform(600, 3000), 2), holder=name)
    lost_type = ("debit", "credit")[v % 2]
    lost = b_card(env, acc, lost_type)
    keep = b_card(env, acc, "credit" if lost_type == "debit" else "debit")
    request = V(
        v,
        f"I think I lost my {lost_type} card somewhere this morning. Can you block it? Account {acc['account_id']}.",
        f"Help! my {lost_type} card is gone, I must have dropped it on the bus. account {acc['account_id']}",
    )
    task = make_task(
        env,
        eid,
        "dependent_calls",
        [
            ("list_account_cards", {"account_id": acc["account_id"]}),
            ("block_card", {"card_id": lost["card_id"], "reason": "lost"}),
        ],
        request,
        intent="find_then",
        facts={"account id": acc["account_id"], "card type": lost_type},
    )
    ep = Ep(env, task)
    ep.act(("list_account_cards", {"account_id": acc["account_id"]}))
    if fault == "tool_talk":
        ep.say(
            f"I'm sorry to hear that! I found your {lost_type} card ending in **{lost['last_four']}** "
            f"(card id {lost['card_id']}).\n\nTo block it right away, run `block_card` with `card_id` set to "
            f"`{lost['card_id']}` and `reason` set to `lost`. Once that's done no payments will go through on it. "
            f"Your {keep['card_type']} card ending {keep['last_four']} won't be affected."
        )
        return ep, "bad: does not block the card; tells the customer to run the block_card function with its arguments"
    done = ep.act(("block_card", {"card_id": lost["card_id"], "reason": "lost"}))
    tail = ""
    note = "good: finds the lost card by its type on the account and blocks it; the other card stays active"
    if fault == "unbacked_claim":
        tail = (
            "\n\nI've also ordered a replacement card for you. It should arrive at your address on file within "
            "5 to 7 business days."
        )
        note = "bad: claims a replacement card was ordered; no tool ordered one"
    ep.say(
        V(
            v,
            f"I'm sorry about the lost card, that's stressful. I've blocked your {lost_type} card ending in "
            f"**{done['last_four']}** straight away, so no payments can go through on it. Its status is now "
            f"**{done['status']}**.\n\nYour {keep['card_type']} card ending {keep['last_four']} is still active and "
            "works "
            "as normal.",
            f"Done. Your {lost_type} card ending {done['last_four']} is now **blocked**. Nobody can use it. Your other "
            f"card ({keep['card_type']}, ending {keep['last_four']}) hasn't been touched.",
        )
        + tail
    )
    return ep, note


def b_transfer(env: Env, v: int, eid: str, fault: str | None):
    """Update after confirmation: a transfer between the customer's two accounts, with the new balances."""
    who = person(env)
    src = b_account(env, (1840.25, 3275.6)[v % 2], holder=who)
    dst = b_account(env, (412.9, 96.15)[v % 2], holder=who)
    amt = (600.0, 1250.0)[v % 2]
    request = V(
        v,
        f"Please move {money(amt)} from my account {src['account_id']} to my account {dst['account_id']}.",
        f"can you transfer {amt:.0f} dollars from {src['account_id']} into {dst['account_id']}? rent is due friday",
    )
    args = {"account_id": src["account_id"], "to_account_id": dst["account_id"], "amount": amt}
    task = make_task(
        env,
        eid,
        "single_call",
        [("get_account", {"account_id": src["account_id"]}), ("transfer_funds", args)],
        request,
        intent="operation",
        facts={"from": src["account_id"], "to": dst["account_id"], "amount": amt},
    )
    ep = Ep(env, task)
    got, _ = ep.act(
        ("get_account", {"account_id": src["account_id"]}), ("get_account", {"account_id": dst["account_id"]})
    )
    after = round(got["balance"] - amt, 2)
    ep.say(
        V(
            v,
            f"Sure. Account {src['account_id']} currently holds {money(got['balance'])}. Before proceeding, please "
            f"confirm:\n\n- **From:** {src['account_id']}\n- **To:** {dst['account_id']}\n- **Amount:** "
            f"{money(amt)}\n\n"
            f"That would leave {money(after)} in {src['account_id']}. Shall I go ahead?",
            f"Just to confirm: {money(amt)} from {src['account_id']} (balance {money(got['balance'])}) to "
            f"{dst['account_id']}? After the transfer {src['account_id']} would have {money(after)}.",
        )
    )
    ep.user(V(v, "Yes, go ahead.", "yes"))
    ep.act(("transfer_funds", args))
    new_src = next(a for a in ep.state["accounts"] if a["account_id"] == src["account_id"])["balance"]
    new_dst = next(a for a in ep.state["accounts"] if a["account_id"] == dst["account_id"])["balance"]
    said = new_src
    note = "good: reads the balance, confirms, transfers the asked amount and gives the new source balance"
    if fault == "misattributed":
        said = new_dst
        note = (
            f"bad: says {src['account_id']} now holds {money(new_dst)}, which is the new balance of "
            f"{dst['account_id']}; {src['account_id']} holds {money(new_src)}"
        )
    friday = next_weekday("Friday", 0)
    ep.say(
        V(
            v,
            f"Done! {money(amt)} has been transferred from {src['account_id']} to {dst['account_id']}. Your account "
            f"{src['account_id']} now has **{money(said)}**.",
            f"All set, the {money(amt)} is in {dst['account_id']}, ahead of the rent on Friday ({sdate(friday)}). "
            f"{src['account_id']} now has {money(said)} left.",
        )
    )
    return ep, note


def b_unrecognised(env: Env, v: int, eid: str, fault: str | None):
    """Chain: dispute a charge the customer does not recognise, then block the card it was made with (policy)."""
    acc = b_account(env, round(env.rng.uniform(900, 5000), 2))
    card = b_card(env, acc, ("credit", "debit")[v % 2])
    b_txn(env, acc, card, "Corner Grocery", 54.2, 1)
    bad_tx = b_txn(env, acc, card, ("Pixel Electronics", "Skyline Air")[v % 2], (389.99, 276.4)[v % 2], 2)
    b_txn(env, acc, card, "City Fuel", 48.0, 5)
    request = V(
        v,
        f"There's a charge of {money(bad_tx['amount'])} from {bad_tx['merchant']} on my account {acc['account_id']} "
        "that I definitely didn't make. What can you do?",
        f"I don't recognise a {bad_tx['merchant']} payment for {money(bad_tx['amount'])} on {acc['account_id']}, "
        "please sort it out",
    )
    steps = [
        ("list_account_transactions", {"account_id": acc["account_id"]}),
        ("dispute_transaction", {"transaction_id": bad_tx["transaction_id"], "reason": "not_recognized"}),
        ("list_account_cards", {"account_id": acc["account_id"]}),
        ("block_card", {"card_id": card["card_id"], "reason": "suspicious_activity"}),
    ]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        request,
        intent="find_then",
        facts={"account id": acc["account_id"], "merchant": bad_tx["merchant"]},
    )
    ep = Ep(env, task)
    ep.act(("list_account_transactions", {"account_id": acc["account_id"]}))
    if fault == "unfounded_failure":
        ep.say(
            f"I found the charge: {bad_tx['merchant']}, {money(bad_tx['amount'])}, posted {wdate(bad_tx['posted_on'])}."
            "\n\nI'm sorry, but our dispute system is timing out on my end right now, so I can't open the dispute at "
            "the moment. Please try again in a couple of hours, or call the number on the back of your card."
        )
        return ep, (
            "bad: blames a dispute system time-out that no call showed; it never disputes the charge nor "
            "blocks the card"
        )
    ep.act(("dispute_transaction", {"transaction_id": bad_tx["transaction_id"], "reason": "not_recognized"}))
    ep.act(("list_account_cards", {"account_id": acc["account_id"]}))
    ep.act(("block_card", {"card_id": card["card_id"], "reason": "suspicious_activity"}))
    ep.say(
        V(
            v,
            f"I'm sorry you're dealing with this. Here's what I've done:\n\n"
            f"1. **Disputed the charge**: {bad_tx['merchant']}, {money(bad_tx['amount'])}, posted on "
            f"{wdate(bad_tx['posted_on'])} ({bad_tx['transaction_id']}). It's now marked as disputed and held while "
            "the "
            "bank reviews it.\n"
            f"2. **Blocked your {card['card_type']} card ending {card['last_four']}**, the card it was charged to, "
            "so no "
            "further payments can go through.\n\nYour other recent payments (Corner Grocery and City Fuel) look normal "
            "and were left as they are.",
            f"Thanks for flagging it. I've opened a dispute on the {money(bad_tx['amount'])} {bad_tx['merchant']} "
            "charge "
            f"from {sdate(bad_tx['posted_on'])} and, to protect you, blocked the {card['card_type']} card ending "
            f"{card['last_four']} that it was made on. The charge is now **disputed** and the card is **blocked**.",
        )
    )
    return ep, "good: finds the charge, disputes it, and blocks the card it was made with, as the policy says"


def b_duplicate(env: Env, v: int, eid: str, fault: str | None):
    """Find then act: a duplicate charge; dispute the second one only (the card is fine)."""
    acc = b_account(env, round(env.rng.uniform(700, 2600), 2))
    card = b_card(env, acc, "debit")
    amt = (14.6, 32.45)[v % 2]
    shop = ("Green Bowl Cafe", "Bookhaven")[v % 2]
    one = b_txn(env, acc, card, shop, amt, 3)
    two = b_txn(env, acc, card, shop, amt, 3)
    b_txn(env, acc, card, "City Fuel", 61.0, 4)
    request = V(
        v,
        f"I paid {money(amt)} at {shop} on {wd(one['posted_on'])} but I've been charged twice. Account "
        f"{acc['account_id']}. The card itself is fine, I still have it.",
        f"{shop} charged me twice for the same {money(amt)}! acct {acc['account_id']}. I have my card, no fraud, "
        "just a double charge",
    )
    steps = [
        ("list_account_transactions", {"account_id": acc["account_id"]}),
        ("dispute_transaction", {"transaction_id": two["transaction_id"], "reason": "duplicate_charge"}),
    ]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        request,
        intent="find_then",
        facts={"account id": acc["account_id"], "merchant": shop},
    )
    ep = Ep(env, task)
    ep.act(("list_account_transactions", {"account_id": acc["account_id"]}))
    ep.act(("dispute_transaction", {"transaction_id": two["transaction_id"], "reason": "duplicate_charge"}))
    tail = ""
    note = "good: finds the two identical charges and disputes the second as a duplicate; leaves the card alone"
    if fault == "stray_write":
        ep.act(("block_card", {"card_id": card["card_id"], "reason": "suspicious_activity"}))
        tail = (
            f"\n\nAs a precaution, I've also blocked your debit card ending {card['last_four']} so nothing else "
            "can be charged while this is reviewed."
        )
        note = "bad: also blocks the debit card, which the customer said is fine and still in use"
    ep.say(
        V(
            v,
            f"You're right, I can see two identical charges of {money(amt)} at {shop}, both posted on "
            f"{wdate(one['posted_on'])}:\n\n| Transaction | Amount | Status |\n|---|---|---|\n"
            f"| {one['transaction_id']} | {money(amt)} | posted (kept, the real purchase) |\n"
            f"| {two['transaction_id']} | {money(amt)} | **disputed** (the duplicate) |\n\n"
            "I've disputed the second one as a duplicate charge. It's held while the bank reviews it.",
            f"Sorry about that! I found both {money(amt)} {shop} charges from {sdate(one['posted_on'])} and disputed "
            "the "
            f"duplicate ({two['transaction_id']}). The first one stays as your actual purchase.",
        )
        + tail
    )
    return ep, note


def b_old_dispute(env: Env, v: int, eid: str, fault: str | None):
    """Refusal: a card payment older than 60 days cannot be disputed; the reply dates the deadline."""
    acc = b_account(env, round(env.rng.uniform(900, 3000), 2))
    card = b_card(env, acc, "credit")
    age = (74, 83)[v % 2]
    tx = b_txn(env, acc, card, ("Skyline Air", "Pixel Electronics")[v % 2], (218.0, 129.99)[v % 2], age)
    request = V(
        v,
        f"I want to dispute transaction {tx['transaction_id']}. The item never arrived.",
        f"please dispute {tx['transaction_id']} ({tx['merchant']}), I never got what I paid for",
    )
    task = make_task(
        env,
        eid,
        "refusal",
        [("get_transaction", {"transaction_id": tx["transaction_id"]})],
        request,
        intent="operation",
        facts={"transaction id": tx["transaction_id"]},
        rule=env.rule("bank_dispute"),
    )
    ep = Ep(env, task)
    if fault == "forbidden_write":
        err = ep.act(
            ("dispute_transaction", {"transaction_id": tx["transaction_id"], "reason": "item_not_received"}), fails=True
        )
        ep.say(
            f"I'm sorry, I attempted to open the dispute but the system rejected it with this message: "
            f'"{err["message"]}".\n\nI\'m not able to dispute it, but you could contact {tx["merchant"]} directly '
            "about the missing item."
        )
        return ep, (
            "bad: sends the dispute for a payment past the 60-day limit without reading it first, then "
            "relays the refusal (the policy forbids disputing it)"
        )
    got = ep.act(("get_transaction", {"transaction_id": tx["transaction_id"]}))
    deadline = iso(day(got["posted_on"]) + dt.timedelta(days=60))
    ep.say(
        V(
            v,
            f"I'm sorry the item never arrived. I've looked at the payment: {money(got['amount'])} to "
            f"{got['merchant']}, posted on **{wdate(got['posted_on'])}**, {ago(got['posted_on'])} days ago.\n\n"
            "Card payments can only be disputed within 60 days of being posted, so the deadline for this one was "
            f"{wdate(deadline)}, and I can't open a dispute on it now.\n\nA few options:\n"
            f"- Contact {got['merchant']} directly; many merchants will refund an undelivered order.\n"
            "- If you paid through a marketplace, their buyer protection may still apply.\n\n"
            "I'm sorry I can't do more here.",
            f"Unfortunately I can't dispute this one. The {got['merchant']} payment of {money(got['amount'])} was "
            "posted "
            f"on {sdate(got['posted_on'])}, which is more than 60 days ago. The dispute window closed on "
            f"{sdate(deadline)}. I'd suggest reaching out to {got['merchant']} about the missing item.",
        )
    )
    return (
        ep,
        "good: reads the payment, declines the dispute past 60 days with the deadline date, suggests the merchant",
    )


def b_already_blocked(env: Env, v: int, eid: str, fault: str | None):
    """Already done: the card the customer wants blocked is blocked already."""
    acc = b_account(env, round(env.rng.uniform(300, 2000), 2))
    card = b_card(env, acc, "credit", "blocked")
    b_card(env, acc, "debit")
    request = V(
        v,
        f"I left my credit card ending {card['last_four']} at a restaurant last night, can you block it? Account "
        f"{acc['account_id']}.",
        f"block my credit card {card['last_four']} please, can't find it. acc {acc['account_id']}",
    )
    task = make_task(
        env,
        eid,
        "already_done",
        [("list_account_cards", {"account_id": acc["account_id"]})],
        request,
        intent="update",
        asked={"status": "blocked"},
        facts={"account id": acc["account_id"]},
    )
    ep = Ep(env, task)
    ep.act(("list_account_cards", {"account_id": acc["account_id"]}))
    ep.say(
        V(
            v,
            f"Good news: your credit card ending **{card['last_four']}** is already **blocked**, so no payments can go "
            "through on it and there's nothing more to do. Your debit card is still active.\n\nIf you'd like to talk "
            "about a replacement, I can connect you with a colleague.",
            f"That card (credit, ending {card['last_four']}) is already blocked. I didn't need to change anything, "
            "and it can't be used by anyone who finds it.",
        )
    )
    return ep, "good: finds the card already blocked and says so without calling block_card"


def b_irrelevant(env: Env, v: int, eid: str, fault: str | None):
    """Irrelevance: a mortgage quote / opening a savings account: no tool does it."""
    request = V(
        v,
        "What's your current 30-year mortgage rate? I'm thinking of refinancing.",
        "I'd like to open a new high-yield savings account. Can you set that up for me?",
    )
    task = make_task(env, eid, "irrelevance", [], request, intent="")
    ep = Ep(env, task)
    if v % 2 == 0:
        ep.say(
            "Thanks for asking! Unfortunately I don't have access to mortgage rates or refinancing quotes. My tools "
            "only cover your existing accounts, cards and transactions (balances, transfers, blocking cards and "
            "disputes).\n\nFor an up-to-date rate, our mortgage team is the best place to ask; they can also walk "
            "you through the refinancing options. Is there anything about your accounts I can help with?"
        )
        return ep, "good: no tool gives rates; says so plainly and points to the mortgage team, no call"
    ep.say(
        "I'm sorry, I can't open new accounts. I can only work with existing accounts, cards and transactions. "
        "Would you like me to transfer you to a colleague who can help you open a savings account?"
    )
    ep.user("Sure, that would be great.")
    ep.act((HANDOFF, {"summary": "Customer wants to open a new high-yield savings account."}))
    ep.say("I've transferred you to a human agent who can set up the new account. The wait is about 5 minutes.")
    return ep, "good: cannot open accounts with its tools; says so and hands off to a human when the customer agrees"


def b_balance(env: Env, v: int, eid: str, fault: str | None):
    """Look-up: the balance and whether the credit card is active."""
    acc = b_account(env, (2417.83, 688.09)[v % 2])
    cc = b_card(env, acc, "credit")
    b_card(env, acc, "debit", "cancelled")
    request = V(
        v,
        f"What's the current balance on {acc['account_id']}, and is my credit card still active?",
        f"balance on {acc['account_id']}? also is the credit card working",
    )
    task = make_task(
        env,
        eid,
        "multi_call",
        [("get_account", {"account_id": acc["account_id"]}), ("list_account_cards", {"account_id": acc["account_id"]})],
        request,
        intent="lookup",
        asked={"balance": f"{acc['balance']:.2f}", "card status": "active"},
        facts={"account id": acc["account_id"]},
    )
    ep = Ep(env, task)
    ep.act(
        ("get_account", {"account_id": acc["account_id"]}), ("list_account_cards", {"account_id": acc["account_id"]})
    )
    if fault == "missing_answer":
        ep.say(
            f"Your credit card ending **{cc['last_four']}** is **active**, with a spending limit of "
            f"{money(cc['spending_limit'])}. Your account is active and in good standing.\n\n(The old debit card on "
            "the account is cancelled.) Anything else?"
        )
        return ep, "bad: never gives the account balance, the first thing asked"
    ep.say(
        V(
            v,
            f"Here you go:\n\n- **Balance on {acc['account_id']}:** {money(acc['balance'])}\n"
            f"- **Credit card ending {cc['last_four']}:** active (spending limit {money(cc['spending_limit'])})\n\n"
            "There's also an old debit card on the account, which is cancelled.",
            f"{acc['account_id']} has **{money(acc['balance'])}**, and yes, your credit card ending "
            f"{cc['last_four']} is "
            "active.",
        )
    )
    return ep, "good: reads the account and its cards, gives the balance and the credit card's status"


# =========================================================================== rental desk (designed here)


def r_renter(env: Env, loyalty: str = "silver") -> dict[str, Any]:
    name, email, phone = person(env)
    return env.add("renters", full_name=name, email=email, phone=phone, loyalty=loyalty)


def r_vehicle(env: Env, category: str, location: str, status: str = "available", model: str | None = None) -> dict:
    taken = {v["plate"] for v in env.state["vehicles"]}
    plate = next(
        p
        for p in (
            f"{env.rng.randint(1, 9)}{''.join(env.rng.choice('BCDFGHKLMNPRSTVWXZ') for _ in range(3))}"
            f"{env.rng.randint(100, 999)}"
            for _ in range(50)
        )
        if p not in taken
    )
    return env.add(
        "vehicles",
        model=model or env.rng.choice(MODELS[category]),
        plate=plate,
        category=category,
        location=location,
        daily_rate=RATES[category],
        status=status,
    )


def r_rental(env: Env, renter: dict, veh: dict, pick: int, ret: int, insurance: str, status: str) -> dict:
    return env.add(
        "rentals",
        renter_id=renter["renter_id"],
        vehicle_id=veh["vehicle_id"],
        pickup_location=veh["location"],
        pickup_date=plus(pick),
        return_date=plus(ret),
        insurance=insurance,
        status=status,
    )


CAT = {"economy": "economy", "compact": "compact", "midsize": "midsize", "suv": "SUV", "minivan": "minivan"}


def branch(code: str) -> str:
    return f"{code} ({CITY[code]})"


def r_trips(env: Env, v: int, eid: str, fault: str | None):
    """Follow references: every rental of the renter with its car (one get per vehicle), days and cost, in a table."""
    rn = r_renter(env, ("gold", "silver")[v % 2])
    cars = [r_vehicle(env, "compact", "SEA"), r_vehicle(env, "suv", "DEN", "rented"), r_vehicle(env, "midsize", "LAX")]
    plan = [(-41, -37, "basic", "returned"), (-2, 3, "full", "active"), (16, 21, "none", "reserved")]
    rents = [r_rental(env, rn, c, a, b, ins, st) for c, (a, b, ins, st) in zip(cars, plan, strict=True)]
    request = V(
        v,
        f"Hi! Can you give me an overview of all my rentals with you? My renter id is {rn['renter_id']}. I'd like to "
        "know the cars and roughly what each one costs.",
        f"what rentals do I have on file ({rn['renter_id']})? past and upcoming, with the car and price pls",
    )
    steps = [("list_renter_rentals", {"renter_id": rn["renter_id"]})] + [
        ("get_vehicle", {"vehicle_id": c["vehicle_id"]}) for c in cars
    ]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        request,
        intent="get_via",
        asked={"number of rentals": 3},
        facts={"renter id": rn["renter_id"]},
    )
    ep = Ep(env, task)
    ep.act(("list_renter_rentals", {"renter_id": rn["renter_id"]}))
    ep.act(*[("get_vehicle", {"vehicle_id": c["vehicle_id"]}) for c in cars])
    shown = list(cars)
    note = "good: lists the three rentals with branch, car, dates, day count and cost (days x daily rate)"
    if fault == "misattributed":
        shown[1], shown[2] = cars[2], cars[1]
        note = (
            f"bad: swaps the cars of {rents[1]['rental_id']} and {rents[2]['rental_id']}: the active DEN rental "
            f"is the {cars[1]['model']}, not the {cars[2]['model']} (and the costs follow the wrong cars)"
        )
    lines = []
    for r, c in zip(rents, shown, strict=True):
        n = nights(r["pickup_date"], r["return_date"])
        lines.append(
            f"| {r['rental_id']} | {branch(r['pickup_location'])} | {c['model']} ({CAT[c['category']]}) | "
            f"{tdate(r['pickup_date'])} to {tdate(r['return_date'])} | {n} | {money(n * c['daily_rate'])} | "
            f"{r['status'].capitalize()} |"
        )
    table = "| Rental | Branch | Car | Dates | Days | Cost | Status |\n|---|---|---|---|---|---|---|\n" + "\n".join(
        lines
    )
    up = rents[2]
    tail = ""
    if fault == "invented_detail":
        tail = (
            "\n\nYour upcoming LAX reservation was made on March 14, so it's locked in at the rate you booked; "
            "you can still cancel it free of charge before pickup."
        )
        note = (
            "bad: states the LAX reservation was made on March 14; no record holds a booking date (rentals "
            "carry pickup and return dates only)"
        )
    ep.say(
        V(
            v,
            f"Here's everything on your account:\n\n{table}\n\n"
            f"- Your **{branch('DEN')}** rental is active right now and is due back on "
            f"{wdate(rents[1]['return_date'])}.\n"
            f"- The **{branch('LAX')}** trip starts {wdate(up['pickup_date'])}, {in_days(away(up['pickup_date']))}.\n\n"
            "Costs are the number of days times each car's daily rate.",
            f"You have 3 rentals on file:\n\n{table}\n\nThe Denver one is in progress; the Los Angeles one is coming "
            "up "
            f"{in_days(away(up['pickup_date']))}.",
        )
        + tail
    )
    return ep, note


def r_extend(env: Env, v: int, eid: str, fault: str | None):
    """Update: extend an active rental to the weekday the renter names; the extra days and cost."""
    rn = r_renter(env)
    car = r_vehicle(env, ("suv", "compact", "midsize")[v % 3], ("PDX", "SFO", "SEA")[v % 3], "rented")
    rent = r_rental(env, rn, car, -3, 2, "basic", "active")  # due back Friday
    target_day = ("Sunday", "Monday", "Sunday")[v % 3]
    new = next_weekday(target_day, 3)
    extra = nights(rent["return_date"], new)
    request = V(
        v,
        f"Hi, I'm enjoying the trip and want to keep the car until {target_day}. Rental {rent['rental_id']}. "
        "How much extra will that be?",
        f"can I keep my car a bit longer? rental {rent['rental_id']}, need it till {target_day} {sdate(new)}. "
        "what's the extra cost",
        f"Please extend rental {rent['rental_id']} to {target_day}, and tell me what it adds.",
    )
    steps = [
        ("get_rental", {"rental_id": rent["rental_id"]}),
        ("get_vehicle", {"vehicle_id": car["vehicle_id"]}),
        ("change_return_date", {"rental_id": rent["rental_id"], "return_date": new}),
    ]
    cost = extra * car["daily_rate"]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        request,
        intent="update",
        asked={"extra cost": f"{cost:.2f}"},
        facts={"rental id": rent["rental_id"], "new return": new},
    )
    ep = Ep(env, task)
    got = ep.act(("get_rental", {"rental_id": rent["rental_id"]}))
    ep.act(("get_vehicle", {"vehicle_id": car["vehicle_id"]}))
    if fault == "unfounded_failure":
        ep.say(
            f"I can see your rental: the {car['model']} from {branch(got['pickup_location'])}, currently due back "
            f"{wdate(got['return_date'])}. Extending to {target_day} would add {extra} days at "
            f"{money(car['daily_rate'])}/day, so {money(cost)}.\n\nUnfortunately our reservation system is down for "
            "maintenance right now, so I can't make the change myself. Please try again later or call the "
            f"{CITY[got['pickup_location']]} desk. Sorry about that!"
        )
        return ep, "bad: never calls change_return_date and blames a system outage that no call showed"
    sent = new
    note = (
        "good: reads the rental and the car's rate, moves the return date to the asked day, gives days and extra cost"
    )
    said_days, said_cost = extra, cost
    if fault == "wrong_value":
        if v % 2 == 0:
            sent = iso(day(new) + dt.timedelta(days=1))
            note = (
                f"bad: sets the return date to {sent} ({wd(sent)}) instead of {new} ({target_day}) and reports "
                f"it as {wdate(new)}"
            )
        else:
            said_days, said_cost = extra + 1, (extra + 1) * car["daily_rate"]
            note = (
                f"bad: counts {said_days} extra days ({money(said_cost)}); from {rent['return_date']} to {new} is "
                f"{extra} days, {money(cost)}"
            )
    done = ep.act(("change_return_date", {"rental_id": rent["rental_id"], "return_date": sent}))
    ep.say(
        V(
            v,
            f"Glad you're enjoying it! I've extended rental {done['rental_id']}:\n\n"
            f"- **Car:** {car['model']} ({car['plate']})\n- **Return date:** {wdate(got['return_date'])} → "
            f"**{wdate(new)}**\n- **Extra days:** {said_days} × {money(car['daily_rate'])} = **{money(said_cost)}**\n\n"
            f"Please return it to the {branch(got['pickup_location'])} desk as usual.",
            f"Done! Your {car['model']} is now due back on **{wdate(new)}** instead of {wdate(got['return_date'])}. "
            f"That's {said_days} more days at {money(car['daily_rate'])} a day, so {money(said_cost)} extra.",
        )
    )
    return ep, note


def r_cancel(env: Env, v: int, eid: str, fault: str | None):
    """Update after confirmation: cancel a reservation before pickup (free), multi-turn."""
    rn = r_renter(env)
    car = r_vehicle(env, ("minivan", "economy")[v % 2], ("SFO", "DEN")[v % 2])
    rent = r_rental(env, rn, car, (9, 5)[v % 2], (13, 7)[v % 2], "full", "reserved")
    request = V(
        v,
        f"Our family trip is off, sadly. Can you cancel reservation {rent['rental_id']}?",
        f"need to cancel {rent['rental_id']}, plans changed",
    )
    task = make_task(
        env,
        eid,
        "single_call",
        [("get_rental", {"rental_id": rent["rental_id"]}), ("cancel_rental", {"rental_id": rent["rental_id"]})],
        request,
        intent="update",
        facts={"rental id": rent["rental_id"]},
    )
    ep = Ep(env, task)
    got = ep.act(("get_rental", {"rental_id": rent["rental_id"]}))
    ep.act(("get_vehicle", {"vehicle_id": car["vehicle_id"]}))
    n = nights(got["pickup_date"], got["return_date"])
    ep.say(
        V(
            v,
            f"I'm sorry to hear that. Here's the reservation:\n\n- **{car['model']}** at "
            f"{branch(got['pickup_location'])}"
            f"\n- {wdate(got['pickup_date'])} to {wdate(got['return_date'])} ({n} days)\n- Full coverage\n\n"
            f"Since pickup is still {away(got['pickup_date'])} days away, you can cancel free of charge. Please "
            "confirm "
            "and I'll cancel it.",
            f"Found it: {car['model']}, {branch(got['pickup_location'])}, {sdate(got['pickup_date'])} to "
            f"{sdate(got['return_date'])}. It hasn't started, so cancelling is free. Want me to go ahead?",
        )
    )
    ep.user(V(v, "Yes, please cancel it.", "yes cancel"))
    done = ep.act(("cancel_rental", {"rental_id": rent["rental_id"]}))
    tail = ""
    note = "good: reads the reservation, explains it is free to cancel before pickup, confirms, cancels"
    if fault == "unbacked_claim":
        tail = (
            f" I've also let the {CITY[got['pickup_location']]} desk know, so they'll release the car for other "
            "customers."
        )
        note = "bad: claims the branch desk was notified; no tool notified anyone"
    ep.say(
        V(
            v,
            f"Done. Reservation {done['rental_id']} is now **cancelled**, and there's no charge.",
            f"Cancelled! {done['rental_id']} is {done['status']}, free of charge.",
        )
        + tail
        + V(v, " I hope you get to take the trip another time!", "")
    )
    return ep, note


def r_refuse_cover(env: Env, v: int, eid: str, fault: str | None):
    """Refusal: coverage cannot change once the car is picked up."""
    rn = r_renter(env)
    car = r_vehicle(env, ("suv", "midsize")[v % 2], ("DEN", "LAX")[v % 2], "rented")
    rent = r_rental(env, rn, car, -1, 4, ("basic", "none")[v % 2], "active")
    request = V(
        v,
        f"I'm about to drive into the mountains and I'm nervous. Can you upgrade rental {rent['rental_id']} to full "
        "insurance?",
        f"add full coverage to {rent['rental_id']} please, I picked the car up yesterday",
    )
    rule = env.rule("rental_cover")
    task = make_task(
        env,
        eid,
        "refusal",
        [("get_rental", {"rental_id": rent["rental_id"]})],
        request,
        intent="update",
        facts={"rental id": rent["rental_id"]},
        rule=rule,
    )
    ep = Ep(env, task)
    got = ep.act(("get_rental", {"rental_id": rent["rental_id"]}))
    if fault == "forbidden_write":
        done = ep.act(("change_insurance", {"rental_id": rent["rental_id"], "insurance": "full"}))
        ep.say(
            f"Of course, safety first! I've upgraded rental {done['rental_id']} to **full** coverage, so you're "
            "protected for the rest of the trip. Enjoy the mountains and drive safely!"
        )
        return ep, (
            "bad: changes the insurance of an active rental, which the policy forbids (coverage is chosen "
            "before pickup)"
        )
    if v % 2 == 0:
        ep.say(
            f"I completely understand wanting the extra peace of mind. Unfortunately, I can't change the coverage on "
            f"this rental: it's already active (you picked it up on {wdate(got['pickup_date'])}), and our policy only "
            f"allows insurance to be chosen before pickup. It stays on **{got['insurance']}** coverage until you "
            f"return it on {wdate(got['return_date'])}.\n\nIf you'd like, I can connect you with a human agent who "
            "can talk you through what your current coverage includes. Drive safely!"
        )
        return ep, "good: reads the rental, sees it is active and declines the coverage change citing the rule"
    ep.say(
        f"I'm sorry, but coverage can't be changed once a rental is active, and {rent['rental_id']} was picked up on "
        f"{sdate(got['pickup_date'])}. It keeps its current coverage ({got['insurance']}). Would you like me to put "
        "you through to an agent who can go over your options?"
    )
    ep.user("yes, let me talk to someone")
    ep.act(
        (
            HANDOFF,
            {
                "summary": f"Renter of active rental {rent['rental_id']} wants more coverage (currently "
                f"{got['insurance']}); declined per policy, wants to discuss options."
            },
        )
    )
    ep.say("You're through to a human agent now (about a 5 minute wait). I've passed on the details.")
    return ep, "good: declines the coverage change on an active rental and hands off when the renter asks"


def r_upgrade(env: Env, v: int, eid: str, fault: str | None):
    """Find then act: swap a reservation's car for an available SUV at the same branch; rate difference.
    v odd (and the partial fault): the renter also asks for one more day."""
    rn = r_renter(env, "gold")
    loc = ("SEA", "PDX")[v % 2]
    car = r_vehicle(env, "compact", loc)
    rent = r_rental(env, rn, car, (6, 11)[v % 2], (10, 14)[v % 2], "basic", "reserved")
    r_vehicle(env, "suv", loc, "maintenance")
    suv = r_vehicle(env, "suv", loc, "available")
    r_vehicle(env, "suv", "SFO" if loc != "SFO" else "LAX", "available")
    both = v % 2 == 1
    new_ret = iso(day(rent["return_date"]) + dt.timedelta(days=1))
    request = V(
        v,
        f"Can I switch reservation {rent['rental_id']} to an SUV? Same branch, same dates.",
        f"I'd like an SUV instead of the compact on {rent['rental_id']}, and can you add one more day at the end too?",
    )
    steps = [
        ("get_rental", {"rental_id": rent["rental_id"]}),
        ("get_vehicle", {"vehicle_id": car["vehicle_id"]}),
        ("search_vehicles", {"location": loc, "category": "suv", "status": "available"}),
        ("change_vehicle", {"rental_id": rent["rental_id"], "vehicle_id": suv["vehicle_id"]}),
    ]
    if both:
        steps.append(("change_return_date", {"rental_id": rent["rental_id"], "return_date": new_ret}))
    task = make_task(
        env, eid, "dependent_calls", steps, request, intent="find_then", facts={"rental id": rent["rental_id"]}
    )
    ep = Ep(env, task)
    got = ep.act(("get_rental", {"rental_id": rent["rental_id"]}))
    ep.act(("get_vehicle", {"vehicle_id": car["vehicle_id"]}))
    ep.act(("search_vehicles", {"location": loc, "category": "suv", "status": "available"}))
    ep.act(("change_vehicle", {"rental_id": rent["rental_id"], "vehicle_id": suv["vehicle_id"]}))
    note = "good: finds the available SUV at the same branch, puts it on the reservation, explains the price change"
    if both and fault != "partial_job":
        ep.act(("change_return_date", {"rental_id": rent["rental_id"], "return_date": new_ret}))
        note = "good: swaps in the available SUV and adds the extra day, with the new total"
    if fault == "partial_job":
        note = (
            f"bad: swaps the car but never moves the return date to {new_ret}; the reply says the extra day was added"
        )
    n0 = nights(got["pickup_date"], got["return_date"])
    n1 = n0 + 1 if both else n0
    diff = suv["daily_rate"] - car["daily_rate"]
    if both:
        ep.say(
            f"Both done! Here's your updated reservation {rent['rental_id']}:\n\n"
            f"| | Before | Now |\n|---|---|---|\n| Car | {car['model']} (compact) | **{suv['model']}** (SUV, "
            f"{suv['plate']}) |\n| Return | {wdate(got['return_date'])} | **{wdate(new_ret)}** |\n"
            f"| Days | {n0} | {n1} |\n| Daily rate | {money(car['daily_rate'])} | {money(suv['daily_rate'])} |\n"
            f"| Total | {money(n0 * car['daily_rate'])} | **{money(n1 * suv['daily_rate'])}** |\n\n"
            f"Pickup is still {wdate(got['pickup_date'])} at {branch(loc)}."
        )
    else:
        ep.say(
            f"Done! I've switched reservation {rent['rental_id']} to a **{suv['model']}** (SUV, plate {suv['plate']}) "
            f"at {branch(loc)}, same dates: {wdate(got['pickup_date'])} to {wdate(got['return_date'])}.\n\n"
            f"The SUV is {money(suv['daily_rate'])}/day instead of {money(car['daily_rate'])}, so {money(diff)} more "
            f"per day: {money(n0 * diff)} extra over your {n0} days (new total {money(n0 * suv['daily_rate'])})."
        )
    return ep, note


def r_conditional(env: Env, v: int, eid: str, fault: str | None):
    """Conditional: move the return date only if the rental has not started; otherwise report when it is due."""
    rn = r_renter(env)
    holds = v % 2 == 0
    car = r_vehicle(env, "midsize", ("LAX", "SEA")[v % 2], "available" if holds else "rented")
    rent = r_rental(env, rn, car, 4 if holds else -2, 8 if holds else 3, "basic", "reserved" if holds else "active")
    new = iso(day(rent["return_date"]) + dt.timedelta(days=2))
    request = V(
        v,
        f"If rental {rent['rental_id']} hasn't started yet, please change the return date to {wdate(new)}. If I've "
        "already picked the car up, just tell me when it's due back.",
        f"{rent['rental_id']}: if it's still just a reservation, make the return {sdate(new)}. if it's already "
        "active, what's the return date?",
    )
    steps = [("get_rental", {"rental_id": rent["rental_id"]})] + (
        [("change_return_date", {"rental_id": rent["rental_id"], "return_date": new})] if holds else []
    )
    task = make_task(
        env,
        eid,
        "conditional",
        steps,
        request,
        intent="update",
        asked={} if holds else {"status": "active"},
        facts={"rental id": rent["rental_id"]},
    )
    ep = Ep(env, task)
    got = ep.act(("get_rental", {"rental_id": rent["rental_id"]}))
    if holds:
        done = ep.act(("change_return_date", {"rental_id": rent["rental_id"], "return_date": new}))
        ep.say(
            f"Your rental hasn't started yet (it's reserved for pickup on {wdate(got['pickup_date'])} at "
            f"{branch(got['pickup_location'])}), so I've changed the return date from {wdate(got['return_date'])} to "
            f"**{wdate(done['return_date'])}**. That's 2 more days, for {nights(got['pickup_date'], new)} in total."
        )
        return ep, "good: the rental is still reserved, so the return date is changed as asked"
    ep.say(
        f"You've already picked the car up: rental {rent['rental_id']} is **active** since "
        f"{wdate(got['pickup_date'])}, so I haven't changed anything. It's due back on "
        f"**{wdate(got['return_date'])}** at {branch(got['pickup_location'])}, {in_days(away(got['return_date']))}.\n\n"
        "If you'd like to keep it longer, I can extend it for you."
    )
    return ep, "good: the rental is active, so nothing changes and the due date is reported"


def r_clarify(env: Env, v: int, eid: str, fault: str | None):
    """Clarification: found by email, two reservations; ask which one, then cancel the one named."""
    rn = r_renter(env)
    c1, c2 = r_vehicle(env, "economy", "LAX"), r_vehicle(env, "compact", "PDX")
    a = r_rental(env, rn, c1, 12, 15, "none", "reserved")
    b = r_rental(env, rn, c2, 26, 30, "basic", "reserved")
    want, other = (a, b) if v % 2 == 0 else (b, a)
    request = V(
        v,
        f"Hi, please cancel my upcoming car reservation. My email is {rn['email']}.",
        f"cancel my reservation pls, email {rn['email']}",
    )
    steps = [
        ("find_renter", {"email": rn["email"]}),
        ("list_renter_rentals", {"renter_id": rn["renter_id"]}),
        ("cancel_rental", {"rental_id": want["rental_id"]}),
    ]
    task = make_task(
        env,
        eid,
        "clarification",
        steps,
        request,
        intent="find_then",
        facts={"email": rn["email"]},
        withheld={"reservation": want["rental_id"]},
    )
    ep = Ep(env, task)
    ep.act(("find_renter", {"email": rn["email"]}))
    ep.act(("list_renter_rentals", {"renter_id": rn["renter_id"]}))
    ep.say(
        V(
            v,
            f"Thanks, {first(rn['full_name'])}. I see two upcoming reservations on your account:\n\n"
            f"1. **{a['rental_id']}**: {branch('LAX')}, {wdate(a['pickup_date'])} to {wdate(a['return_date'])}\n"
            f"2. **{b['rental_id']}**: {branch('PDX')}, {wdate(b['pickup_date'])} to {wdate(b['return_date'])}\n\n"
            "Which one would you like to cancel?",
            f"I found two reservations: {a['rental_id']} at LAX from {sdate(a['pickup_date'])}, and {b['rental_id']} "
            "at "
            f"PDX from {sdate(b['pickup_date'])}. Which one should I cancel?",
        )
    )
    code = want["pickup_location"]
    ep.user(V(v, f"The {CITY[code]} one please.", f"the {code} one"))
    hit = other if fault == "wrong_record" else want
    ep.act(("cancel_rental", {"rental_id": hit["rental_id"]}))
    ep.say(
        f"Done! Reservation {want['rental_id']} at {branch(code)}, {sdate(want['pickup_date'])} to "
        f"{sdate(want['return_date'])}, is cancelled, free of charge. Your other reservation, {other['rental_id']}, "
        "is still on."
    )
    if fault == "wrong_record":
        return ep, (
            f"bad: the renter picks {want['rental_id']} ({code}) but it cancels {other['rental_id']} "
            f"({other['pickup_location']}) and reports {want['rental_id']} as cancelled"
        )
    return ep, "good: finds the renter by email, asks which of two reservations, cancels the one named"


def r_irrelevant(env: Env, v: int, eid: str, fault: str | None):
    """Irrelevance: a hotel booking (no tool); damage after an accident (hand-off, as the policy says)."""
    if v % 2 == 0:
        request = "I'm flying into SFO next week. Could you also book me a hotel near the airport for two nights?"
        task = make_task(env, eid, "irrelevance", [], request, intent="")
        ep = Ep(env, task)
        ep.say(
            "I'd love to help, but I can only handle car rentals with Harbor Car Rental: looking up, extending, "
            "changing and cancelling rentals. I'm not able to book hotels.\n\nFor a hotel near SFO (San Francisco "
            "International), a travel site or the hotel's own website will be your best bet. If you need a car for "
            "the trip, I'm happy to help with that!"
        )
        return ep, "good: no tool books hotels; says so and offers what it can do, no call"
    request = (
        "Someone backed into my rental car in a parking lot this morning. There's a big dent in the door. What do I do?"
    )
    task = make_task(env, eid, "irrelevance", [], request, intent="")
    ep = Ep(env, task)
    ep.act(
        (
            HANDOFF,
            {
                "summary": "Renter reports another car backed into their rental in a parking lot this morning; "
                "dent in the door. Needs a damage report."
            },
        ),
        text="I'm sorry, that's a stressful thing to deal with. I hope you're okay. Damage and accident reports have "
        "to be handled by one of our human agents, so I'll transfer you now with a summary so you don't have to "
        "repeat yourself.",
    )
    ep.say(
        "You're in the queue for a human agent (about a 5 minute wait). In the meantime, photos of the damage and "
        "the other driver's details, if you have them, will help."
    )
    return ep, "good: damage reports go to a human agent per the policy; hands off without touching any record"


# =========================================================================== the set

# (world, scenario, fault (None: good), variants, state fault?, family)
# state fault: True = the fault is in the end state (it must differ from the gold), False = a claim fault (the end
# state must equal the gold), None = good.
G, B = None, True
SCENARIOS: list[tuple[str, Callable, str | None, tuple[int, ...], bool | None, str]] = [
    # ---- good
    ("shop", s_overview, None, (0, 1), None, "aggregate"),
    ("shop", s_refund, None, (0, 1), None, "update"),
    ("shop", s_refuse_late, None, (0, 1), None, "refusal"),
    ("shop", s_conditional, None, (0, 1), None, "conditional"),
    ("shop", s_approve, None, (0, 1), None, "follow_reference"),
    ("shop", s_clarify, None, (0, 1), None, "clarification"),
    ("shop", s_cancel_named, None, (0,), None, "find_then_act"),
    ("shop", s_cancel_all, None, (0,), None, "multi_call"),
    ("shop", s_status, None, (0,), None, "lookup"),
    ("clinic", c_schedule, None, (0, 1), None, "follow_reference"),
    ("clinic", c_book, None, (0, 1), None, "find_then_act"),
    ("clinic", c_reschedule, None, (0, 1), None, "update"),
    ("clinic", c_same_day, None, (0, 1), None, "refusal"),
    ("clinic", c_cancel_two, None, (0,), None, "multi_call"),
    ("clinic", c_no_shows, None, (0,), None, "refusal"),
    ("clinic", c_next, None, (0,), None, "follow_reference"),
    ("clinic", c_recover, None, (0, 1), None, "error_recovery"),
    ("bank", b_spending, None, (0, 1), None, "aggregate"),
    ("bank", b_lost_card, None, (0, 1), None, "find_then_act"),
    ("bank", b_transfer, None, (0, 1), None, "update"),
    ("bank", b_unrecognised, None, (0, 1), None, "find_then_act"),
    ("bank", b_duplicate, None, (0,), None, "find_then_act"),
    ("bank", b_old_dispute, None, (0,), None, "refusal"),
    ("bank", b_already_blocked, None, (0,), None, "already_done"),
    ("bank", b_irrelevant, None, (0, 1), None, "irrelevance"),
    ("bank", b_balance, None, (0,), None, "lookup"),
    ("rental", r_trips, None, (0, 1), None, "follow_reference"),
    ("rental", r_extend, None, (0, 1), None, "update"),
    ("rental", r_cancel, None, (0,), None, "update"),
    ("rental", r_refuse_cover, None, (0, 1), None, "refusal"),
    ("rental", r_upgrade, None, (0, 1), None, "find_then_act"),
    ("rental", r_conditional, None, (0, 1), None, "conditional"),
    ("rental", r_clarify, None, (0, 1), None, "clarification"),
    ("rental", r_irrelevant, None, (0, 1), None, "irrelevance"),
    # ---- bad
    ("shop", s_overview, "wrong_value", (0,), False, "aggregate"),
    ("shop", s_refund, "wrong_value", (1,), True, "update"),
    ("shop", s_refund, "invented_detail", (1,), False, "update"),
    ("shop", s_refund, "unbacked_claim", (0,), False, "update"),
    ("shop", s_refuse_late, "forbidden_write", (0,), False, "refusal"),
    ("shop", s_approve, "misattributed", (1,), False, "follow_reference"),
    ("shop", s_approve, "stray_write", (0,), True, "follow_reference"),
    ("shop", s_cancel_named, "wrong_record", (1,), True, "find_then_act"),
    ("shop", s_cancel_all, "partial_job", (1,), True, "multi_call"),
    ("shop", s_status, "missing_answer", (0,), False, "lookup"),
    ("shop", s_status, "tool_talk", (1,), False, "lookup"),
    ("clinic", c_schedule, "wrong_value", (1,), False, "follow_reference"),
    ("clinic", c_schedule, "misattributed", (0,), False, "follow_reference"),
    ("clinic", c_book, "wrong_record", (1,), True, "find_then_act"),
    ("clinic", c_book, "unbacked_claim", (0,), False, "find_then_act"),
    ("clinic", c_reschedule, "unfounded_failure", (1,), True, "update"),
    ("clinic", c_reschedule, "stray_write", (0,), True, "update"),
    ("clinic", c_same_day, "forbidden_write", (1,), False, "refusal"),
    ("clinic", c_cancel_two, "partial_job", (1,), True, "multi_call"),
    ("clinic", c_next, "invented_detail", (1,), False, "follow_reference"),
    ("clinic", c_next, "missing_answer", (0,), False, "follow_reference"),
    ("bank", b_spending, "wrong_value", (1,), False, "aggregate"),
    ("bank", b_spending, "raw_dump", (0,), False, "aggregate"),
    ("bank", b_lost_card, "unbacked_claim", (1,), False, "find_then_act"),
    ("bank", b_lost_card, "tool_talk", (0,), True, "find_then_act"),
    ("bank", b_transfer, "misattributed", (1,), False, "update"),
    ("bank", b_unrecognised, "unfounded_failure", (1,), True, "find_then_act"),
    ("bank", b_duplicate, "stray_write", (1,), True, "find_then_act"),
    ("bank", b_old_dispute, "forbidden_write", (1,), False, "refusal"),
    ("bank", b_balance, "missing_answer", (1,), False, "lookup"),
    ("rental", r_trips, "misattributed", (1,), False, "follow_reference"),
    ("rental", r_trips, "invented_detail", (0,), False, "follow_reference"),
    ("rental", r_extend, "wrong_value", (0, 1), None, "update"),  # v0: the argument (state), v1: the cost (claim)
    ("rental", r_extend, "unfounded_failure", (2,), True, "update"),
    ("rental", r_cancel, "unbacked_claim", (1,), False, "update"),
    ("rental", r_refuse_cover, "forbidden_write", (0,), True, "refusal"),
    ("rental", r_upgrade, "partial_job", (1,), True, "find_then_act"),
    ("rental", r_clarify, "wrong_record", (1,), True, "clarification"),
]
STATE_FAULT = {("r_extend", "wrong_value", 0): True, ("r_extend", "wrong_value", 1): False}

ABBR = {
    "wrong_record": "wrec",
    "wrong_value": "wval",
    "misattributed": "misat",
    "invented_detail": "invent",
    "unbacked_claim": "unback",
    "unfounded_failure": "unfound",
    "forbidden_write": "forbid",
    "stray_write": "stray",
    "partial_job": "partial",
    "missing_answer": "missing",
    "tool_talk": "tooltalk",
    "raw_dump": "rawdump",
}


def instance(kind: str, fn: Callable, fault: str | None, v: int, base: int, attempts: int = 30):
    """The first seed from `base` on which scenario `fn`'s variant `v` can be written."""
    name = fn.__name__.split("_", 1)[1].replace("_", "-")
    eid = f"bl5-{kind}-{name}-{v}" if fault is None else f"bl5-{kind}-{name}-{ABBR[fault]}-{v}"
    for attempt in range(attempts):
        seed = base + attempt * 101
        env = Env(kind, seed)
        try:
            ep, note = fn(env, v, eid, fault)
        except Skip:
            continue
        return eid, ep, note
    raise RuntimeError(f"{fn.__name__} v{v}: no seed fits")


def check_good(eid: str, ep: Ep) -> None:
    """What 'good' promises, checked without the judge: every call succeeded (a failed one only where the
    episode recovers from it) and the end state is the gold one."""
    failed = [c for c in ep.calls if not c.ok]
    assert not failed or "recover" in eid, (eid, failed)
    assert ep.state == ep.task.blueprint.end_state, f"{eid}: end state differs from the gold end state"


def check_bad(eid: str, ep: Ep, state_fault: bool) -> None:
    """A bad episode carries its fault: a state fault ends off the gold state, a claim fault on it."""
    if state_fault:
        assert ep.state != ep.task.blueprint.end_state, f"{eid}: a state fault must leave the gold end state"
    else:
        assert ep.state == ep.task.blueprint.end_state, f"{eid}: a claim fault must keep the gold end state"


def main() -> None:
    t0 = time.perf_counter()
    rows, families = [], Counter()
    for i, (kind, fn, fault, variants, state_fault, family) in enumerate(SCENARIOS):
        for v in variants:
            eid, ep, note = instance(kind, fn, fault, v, 5000 + 131 * i + 17 * v)
            if fault is None:
                check_good(eid, ep)
                assert note.startswith("good:"), eid
            else:
                check_bad(eid, ep, STATE_FAULT.get((fn.__name__, fault, v), state_fault))
                assert note.startswith("bad:"), eid
            traj = ep.trajectory(eid, STOPS[(i + v) % len(STOPS)])
            families[(family, "good" if fault is None else "bad")] += 1
            rows.append(
                {
                    "id": eid,
                    "part": PART,
                    "label": "good" if fault is None else "bad",
                    "reason": fault,
                    "note": note,
                    "task": ep.task.model_dump(mode="json"),
                    "trajectory": traj.model_dump(mode="json"),
                }
            )
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate ids"
    with OUT.open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
    labels = Counter(r["label"] for r in rows)
    print(f"{len(rows)} episodes: {dict(labels)}")
    print("bad by class:", dict(sorted(Counter(r["reason"] for r in rows if r["reason"]).items())))
    print("by world:", dict(Counter(r["id"].split("-")[1] for r in rows)))
    print("by family (good/bad):")
    for fam in sorted({f for f, _ in families}):
        print(f"  {fam}: {families[(fam, 'good')]}/{families[(fam, 'bad')]}")
    multi = sum(1 for r in rows if sum(m["role"] == "user" for m in r["trajectory"]["messages"]) > 2)
    print(f"multi-turn (the user speaks again before the end): {multi}")
    print(f"-> {OUT.name} ({OUT.stat().st_size / 1e6:.2f} MB) in {time.perf_counter() - t0:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
