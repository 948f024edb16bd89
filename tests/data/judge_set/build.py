"""Build the labelled judge set of a capable model's episodes (README.md beside this file).

Worlds are designed here (typed collections, enums with transitions, the derived rules), seeded
with the project's seeding, tasks are blueprints made with `worldsmith.tasks.blueprint` (a gold
chain executed on the seeded world, the rubric read off it), and each episode's agent turns are
written by hand per scenario; every tool call is executed on the world by the project's executor
(`worldsmith.worldmodel.execute.execute`) so results and patches are real. Tools that no world
binds (hand-offs, notes, notifications) answer with a fixed JSON result and change nothing.

The label of each episode is set where it is written, from what the episode does, before any
judge runs. Run: .venv/bin/python tests/data/judge_set/build.py  (writes capable.jsonl here).
"""

from __future__ import annotations

import copy
import json
import random
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Callable

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
from worldsmith.worldmodel.bindings import default_description
from worldsmith.worldmodel.execute import execute
from worldsmith.worldmodel.runner import argument_problem
from worldsmith.worldmodel.schema import derive_rules
from worldsmith.worldmodel.seed import seed_state
from worldsmith.worldmodel.state import World as StateWorld
from worldsmith.worldmodel.toolset import ToolSet

HERE = Path(__file__).resolve().parent
OUT = HERE / "capable.jsonl"
STAMP = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # every record's created_at: the file is the same on every run
TODAY = "2026-03-02"
MODEL = "hand-written (GPT-4-class behaviour)"


class Skip(Exception):
    """The seeded world offers no record the scenario needs: try the next seed."""


# --------------------------------------------------------------------------- worlds


def f(name, type="string", format="text", enum=(), ref=None, unique=False):
    return FieldSpec(name=name, type=type, format=format, enum=list(enum), ref=ref, unique=unique)


def shop_world() -> World:
    cols = [
        CollectionSpec(
            name="customers",
            entity="customer",
            key="customer_id",
            id_prefix="cus",
            fields=[
                f("full_name", format="person_name"),
                f("email", format="email", unique=True),
                f("phone", format="phone"),
                f("city", format="city"),
                f("tier", enum=("standard", "gold", "platinum")),
            ],
        ),
        CollectionSpec(
            name="products",
            entity="product",
            key="product_id",
            id_prefix="prd",
            fields=[
                f("name", format="product"),
                f("price", type="number", format="money"),
                f("stock", type="integer"),
                f("status", enum=("available", "discontinued")),
            ],
        ),
        CollectionSpec(
            name="orders",
            entity="order",
            key="order_id",
            id_prefix="ord",
            fields=[
                f("customer_id", format="code", ref="customers"),
                f("product_id", format="code", ref="products"),
                f("quantity", type="integer", format="quantity"),
                f("total", type="number", format="money"),
                f("date", format="date"),
                f("status", enum=("pending", "processing", "shipped", "delivered", "cancelled")),
            ],
            transitions={
                "status": {
                    "pending": ["processing", "cancelled"],
                    "processing": ["shipped", "cancelled"],
                    "shipped": ["delivered"],
                    "delivered": [],
                    "cancelled": [],
                }
            },
        ),
    ]
    w = World(
        world_id="wld_judgeset_shop",
        domain_id="dom_judgeset_shop",
        domain="online shop",
        category="e_commerce",
        description="An online shop's order desk: customers, products and their orders.",
        collections=cols,
        today=TODAY,
        source="llm",
        created_at=STAMP,
    )
    return w.model_copy(update={"rules": derive_rules(w)})


def travel_world() -> World:
    cols = [
        CollectionSpec(
            name="passengers",
            entity="passenger",
            key="passenger_id",
            id_prefix="pax",
            fields=[
                f("full_name", format="person_name"),
                f("email", format="email", unique=True),
                f("phone", format="phone"),
                f("city", format="city"),
            ],
        ),
        CollectionSpec(
            name="flights",
            entity="flight",
            key="flight_id",
            id_prefix="flt",
            fields=[
                f("origin", format="city"),
                f("destination", format="city"),
                f("date", format="date"),
                f("seats_left", type="integer"),
                f("status", enum=("scheduled", "delayed", "departed")),
            ],
        ),
        CollectionSpec(
            name="bookings",
            entity="booking",
            key="booking_id",
            id_prefix="bkg",
            fields=[
                f("passenger_id", format="code", ref="passengers"),
                f("flight_id", format="code", ref="flights"),
                f("cabin", enum=("economy", "premium_economy", "business")),
                f("amount", type="number", format="money"),
                f("date", format="date"),
                f("status", enum=("confirmed", "checked_in", "flown", "cancelled")),
            ],
            transitions={
                "status": {
                    "confirmed": ["checked_in", "cancelled"],
                    "checked_in": ["flown", "cancelled"],
                    "flown": [],
                    "cancelled": [],
                }
            },
        ),
    ]
    w = World(
        world_id="wld_judgeset_travel",
        domain_id="dom_judgeset_travel",
        domain="airline reservations",
        category="travel",
        description="An airline's reservation desk: passengers, flights and bookings.",
        collections=cols,
        today=TODAY,
        source="llm",
        created_at=STAMP,
    )
    return w.model_copy(update={"rules": derive_rules(w)})


BOUND = {
    "shop": [
        ("get_order", "orders", "get", {}, {}),
        ("get_customer", "customers", "get", {}, {}),
        ("get_product", "products", "get", {}, {}),
        ("list_orders", "orders", "list", {"customer_id": "customer_id", "status": "status"}, {}),
        ("update_order_status", "orders", "update", {"status": "status"}, {}),
        ("update_order_quantity", "orders", "update", {"quantity": "quantity"}, {}),
        ("cancel_order", "orders", "update", {}, {"status": "cancelled"}),
        ("delete_order", "orders", "delete", {}, {}),
        ("update_product_stock", "products", "update", {"stock": "stock"}, {}),
        ("update_customer_tier", "customers", "update", {"tier": "tier"}, {}),
    ],
    "travel": [
        ("get_booking", "bookings", "get", {}, {}),
        ("get_passenger", "passengers", "get", {}, {}),
        ("get_flight", "flights", "get", {}, {}),
        ("list_bookings", "bookings", "list", {"passenger_id": "passenger_id", "status": "status"}, {}),
        ("update_booking_cabin", "bookings", "update", {"cabin": "cabin"}, {}),
        ("update_booking_status", "bookings", "update", {"status": "status"}, {}),
        ("cancel_booking", "bookings", "update", {}, {"status": "cancelled"}),
    ],
}

# tools no world binds: they answer with this result and change nothing
UNBOUND = {
    "transfer_to_human_agents": (
        "Transfer the customer to a human agent, with a summary of the issue. Use it when the request is beyond "
        "what your tools can do.",
        {"summary": {"type": "string", "description": "what the customer needs, in one or two sentences"}},
        ["summary"],
        {"transferred": True, "queue": "customer_care", "estimated_wait_minutes": 4},
    ),
    "notify_customer": (
        "Send the customer a message by email about their request.",
        {
            "customer_id": {"type": "string", "description": "the customer's id, like cus-1042"},
            "message": {"type": "string", "description": "the message text"},
        },
        ["customer_id", "message"],
        {"sent": True, "channel": "email"},
    ),
    "add_note": (
        "Attach an internal note to an order (visible to staff only).",
        {
            "order_id": {"type": "string", "description": "the order's id, like ord-1042"},
            "note": {"type": "string", "description": "the note"},
        },
        ["order_id", "note"],
        {"saved": True},
    ),
}


def unbound_spec(name: str) -> ToolSpec:
    desc, props, req, _ = UNBOUND[name]
    schema = {"type": "object", "properties": props, "required": req, "additionalProperties": False}
    return ToolSpec(
        tool_id=ToolSpec.make_id(name, desc, schema, None, "evolved/handoff"),
        name=name,
        description=desc,
        input_schema=schema,
        annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": True},
        source="evolved",
        server="evolved/handoff",
        created_at=STAMP,
    )


class Env:
    """A world, its agent's tools and system prompt, and one seeded state (tweakable before a task is made)."""

    def __init__(self, kind: str, seed: int):
        self.kind, self.seed = kind, seed
        self.world = shop_world() if kind == "shop" else travel_world()
        self.specs: dict[str, ToolSpec] = {}
        for name, coll, action, params, fixed in BOUND[kind]:
            b = ToolBinding(world_id=self.world.world_id, collection=coll, action=action, params=params, fixed=fixed)
            if action in ("get", "update", "delete"):
                b = b.model_copy(update={"key_param": self.world.collection(coll).key})
            spec = bound_spec(
                self.world, b, name, default_description(self.world, b), request_id=f"{coll}/{name}", named_by="code"
            )
            self.specs[name] = spec.model_copy(update={"created_at": STAMP})
        for name in UNBOUND:
            if kind == "shop" or name == "transfer_to_human_agents":
                self.specs[name] = unbound_spec(name)
        self.toolset = ToolSet.build(list(self.specs.values()))
        self.agent_id = f"agt_judgeset_{kind}"
        self.system = system_prompt(self.world)
        self.rng = random.Random(seed * 7 + (1 if kind == "shop" else 2))
        self.state = seed_state(self.world, seed, (7, 9))

    # records
    def recs(self, coll: str, **where) -> list[dict[str, Any]]:
        return [r for r in self.state[coll] if all(r.get(k) == v for k, v in where.items())]

    def pick(self, coll: str, **where) -> dict[str, Any]:
        hits = self.recs(coll, **where)
        if not hits:
            raise Skip(f"no {coll} with {where}")
        return self.rng.choice(hits)

    def neighbour(self, coll: str, rec: dict[str, Any], **where) -> dict[str, Any]:
        """Another record of the collection whose key is next to `rec`'s (a slip of one digit)."""
        key = self.world.collection(coll).key
        others = [r for r in self.recs(coll, **where) if r[key] != rec[key]]
        if not others:
            raise Skip("no neighbour")
        n = int(rec[key].rsplit("-", 1)[1])
        return min(others, key=lambda r: (abs(int(r[key].rsplit("-", 1)[1]) - n), r[key]))


def system_prompt(w: World) -> str:
    role = {
        "shop": "You are the order desk assistant of an online shop. You help customers with their orders, "
        "products and accounts through your tools.",
        "travel": "You are the reservation assistant of an airline. You help passengers with their bookings "
        "and flights through your tools.",
    }["shop" if "shop" in w.domain else "travel"]
    rules = "\n".join(f"- {r.text}" for r in w.rules)
    return (
        f"{role}\n\nStyle: be friendly, clear and complete.\nRules:\n{rules}\n"
        "Use the tools to look things up and to make changes; never claim an action you did not perform with a "
        "tool. If no tool fits the request, say so plainly, and transfer the customer to a human agent when they "
        "need something only a person can do."
    )


# --------------------------------------------------------------------------- tasks


def make_task(
    env: Env,
    eid: str,
    difficulty: str,
    steps: list[tuple[str, dict[str, Any]]],
    request: str,
    asked: dict[str, Any] | None = None,
    facts: dict[str, str] | None = None,
    withheld: dict[str, str] | None = None,
    rule: PolicyRule | None = None,
    persona: tuple[str, str, str] = ("casual", "medium", "intermediate"),
) -> Task:
    """A blueprint task: the gold chain executed on the env's state by `run_gold`, the rubric by `rubric_from`."""
    d = Draft(difficulty, copy.deepcopy(env.state), [Step(env.specs[n], a) for n, a in steps])
    d.facts = dict(facts or {})
    d.asked = {k: str(v) for k, v in (asked or {}).items()}
    d.withheld = dict(withheld or {})
    d.rule = rule
    d.calls, d.end_state = run_gold(env.world, d.steps, d.initial)
    return Task(
        task_id=content_id("judgeset", eid, prefix="tsk_"),
        agent_id=env.agent_id,
        difficulty=difficulty,
        world_id=env.world.world_id,
        blueprint=blueprint_record(d, "llm", []),
        user_persona=Persona(communication=persona[0], patience=persona[1], expertise=persona[2]),
        user_goal=UserGoal(request=request, facts=d.facts),
        initial_state=d.initial,
        rubric=rubric_from(env.world, d),
        created_at=STAMP,
    )


def forbid_rule(env: Env, coll: str, action: str) -> PolicyRule:
    return next(r for r in env.world.rules if r.kind == "forbid" and r.collection == coll and r.action == action)


# --------------------------------------------------------------------------- episodes


class Ep:
    """One episode as the rollouts record it: messages in OpenAI format, each call executed on the world."""

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

    def act(self, *calls: tuple[str, dict[str, Any]], fails: bool = False) -> Any:
        """One assistant step with these tool calls, each executed and replied to; the results (one: itself)."""
        tool_calls, results = [], []
        for name, args in calls:
            self.n += 1
            cid = f"call_{content_id(self.task.task_id, self.n)[:12]}"
            tool_calls.append({"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}})
        self.messages.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
        for tc, (name, args) in zip(tool_calls, calls, strict=True):
            spec = self.env.toolset.by_name[name]
            problem = argument_problem(spec, args)
            assert problem is None, (name, args, problem)
            if spec.binding is not None:
                out = execute(self.env.world, spec.binding, self.world.state, args)
                ok, content, patch, executor = out.ok, out.content, out.patch, "code"
                error = None if out.ok else f"{out.error[0]}: {out.error[1]}"
                result = out.result
            else:
                result = UNBOUND[name][3]
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
            trajectory_id=content_id("judgeset", eid, prefix="trj_"),
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


# --------------------------------------------------------------------------- wording helpers


def V(v: int, *options: str) -> str:
    """The variant's wording."""
    return options[v % len(options)]


def money(x: float) -> str:
    return f"${x:,.2f}"


def human(s: str) -> str:
    return s.replace("_", " ")


def nice_date(iso: str) -> str:
    d = datetime.fromisoformat(iso)
    return f"{d:%B} {d.day}, {d.year}"


STOPS = (
    "Thanks, that's all. ###STOP###",
    "Perfect, thank you! ###STOP###",
    "Great, appreciate it. ###STOP###",
    "ok thanks ###STOP###",
    "That's everything, thanks for the help. ###STOP###",
)


# =========================================================================== part b: good episodes
# Each returns (episode, note). Labels are fixed here: every one of these ends in the gold end
# state, tells the user what the answer criteria ask, and claims nothing untrue.


def g_lookup(env: Env, v: int, eid: str):
    o = env.pick("orders", status=V(v, "shipped", "processing", "pending", "delivered"))
    if v % 2 == 0:
        o["total"] = round(env.rng.uniform(1000, 9000), 2)
    o["date"] = "2026-02-1" + str(v % 10)
    k = o["order_id"]
    t = make_task(env, eid, "single_call", [("get_order", {"order_id": k})],
                  V(v, f"Hi, can you tell me the status and total of order {k}?",
                    f"what's going on with {k}? and how much did i pay for it",
                    f"Could you check order {k} for me? I'd like to know where it stands and what the total came to."),
                  asked={f"status of {k}": o["status"], f"total of {k}": o["total"]}, facts={"order id": k})
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    e.say(V(v,
            f"Here's what I found for order **{k}**:\n\n- **Status:** {r['status']}\n- **Quantity:** {r['quantity']} items\n"
            f"- **Total:** {money(r['total'])}\n- **Ordered on:** {nice_date(r['date'])}\n\nLet me know if you'd like me to do anything else with it.",
            f"Order {k} is currently **{r['status']}**. The total came to {money(r['total'])} for {r['quantity']} items, "
            f"ordered on {nice_date(r['date'])}.",
            f"I've looked it up: order {k} has the status \"{r['status']}\" and its total is {money(r['total'])} "
            f"({r['quantity']} items). Is there anything else I can help you with?"))
    return e, "single lookup; reply with status and total (thousands separator on even variants)"


def g_cancel_after_lookup(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k = o["order_id"]
    t = make_task(env, eid, "multi_call", [("get_order", {"order_id": k}), ("cancel_order", {"order_id": k})],
                  V(v, f"Please cancel order {k}, I don't need it anymore.",
                    f"I ordered by mistake — order {k}. Can you check it hasn't shipped and cancel it?",
                    f"cancel {k} pls"),
                  facts={"order id": k})
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    r2 = e.act(("cancel_order", {"order_id": k}))
    e.say(V(v,
            f"Done! I've cancelled order {k}. It was still pending, so nothing had shipped yet. The order was for "
            f"{r['quantity']} items with a total of {money(r['total'])}.",
            f"Good news: order {k} hadn't shipped — it was still pending — so I was able to cancel it. Its status is now "
            f"**{r2['status']}**.",
            f"Order {k} is now cancelled. For your records:\n\n| Order | Items | Total | Status |\n|---|---|---|---|\n"
            f"| {k} | {r['quantity']} | {money(r['total'])} | {r2['status']} |"))
    return e, "look up, then cancel; confirms with the tool's new status"


def g_two_step_ship(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k = o["order_id"]
    t = make_task(env, eid, "multi_call",
                  [("update_order_status", {"order_id": k, "status": "processing"}),
                   ("update_order_status", {"order_id": k, "status": "shipped"})],
                  V(v, f"Warehouse here. Order {k} went out with this afternoon's courier, please mark it as shipped.",
                    f"Can you set order {k} to shipped? It left our dock today.",
                    f"Please update {k}: it's been handed to the carrier, so it should show as shipped."),
                  facts={"order id": k, "new status": "shipped"}, persona=("brief", "medium", "expert"))
    e = Ep(env, t)
    e.act(("get_order", {"order_id": k}))
    e.act(("update_order_status", {"order_id": k, "status": "processing"}))
    r = e.act(("update_order_status", {"order_id": k, "status": "shipped"}))
    e.say(V(v,
            f"Order {k} was still pending, and an order can only move pending → processing → shipped, so I moved it "
            f"to processing first and then to shipped. It now shows as **{r['status']}**.",
            f"All set. {k} had not been marked as processing yet, so I took it through both steps (processing, then "
            f"shipped). Current status: {r['status']}.",
            f"Updated: order {k} is now shipped. Because it was still pending, I first set it to processing — that "
            "step is required before an order can be marked shipped."))
    return e, "status written twice on the way to gold (pending->processing->shipped, transitions require it)"


def g_quantity_twice(env: Env, v: int, eid: str):
    o = env.pick("orders", status=V(v, "pending", "processing"))
    k, q = o["order_id"], o["quantity"]
    a = q + 1 + v % 3
    b = a + 2
    t = make_task(env, eid, "single_call", [("update_order_quantity", {"order_id": k, "quantity": b})],
                  V(v, f"Please change the quantity on order {k} to {a}.",
                    f"hey, can you bump order {k} up to {a} units?",
                    f"I'd like {a} of these instead of {q} on order {k}."),
                  facts={"order id": k, "new quantity": str(b)})
    e = Ep(env, t)
    r = e.act(("update_order_quantity", {"order_id": k, "quantity": a}))
    e.say(V(v, f"I've updated order {k}: the quantity is now {r['quantity']}.",
            f"Done — order {k} now has a quantity of {r['quantity']}.",
            f"Sure thing. Order {k} has been updated to {r['quantity']} units."))
    e.user(V(v, f"Oh wait, sorry — make that {b}.", f"actually {b} would be better, can you change it again?",
             f"Hmm, on second thought I need {b}. Could you change it once more?"))
    r = e.act(("update_order_quantity", {"order_id": k, "quantity": b}))
    e.say(V(v, f"No problem — order {k} is now set to a quantity of {r['quantity']}.",
            f"Changed again: order {k} now has {r['quantity']} units.",
            f"Of course. I've updated order {k} once more, and the quantity is now {r['quantity']}."))
    return e, "same field set twice (user changed their mind), ending at the gold value"


def _two_pending(env: Env) -> tuple[dict, list[dict]]:
    c = env.pick("customers")
    cid = c["customer_id"]
    for o in env.recs("orders", customer_id=cid):
        o["customer_id"] = next(x["customer_id"] for x in env.state["customers"] if x["customer_id"] != cid)
    chosen = sorted(env.rng.sample(env.state["orders"], 2), key=lambda o: o["order_id"])
    for o in chosen:
        o["customer_id"], o["status"] = cid, "pending"
    return c, chosen


def g_cancel_all_pending(env: Env, v: int, eid: str):
    c, chosen = _two_pending(env)
    cid = c["customer_id"]
    steps = [("list_orders", {"customer_id": cid, "status": "pending"})] + [
        ("cancel_order", {"order_id": o["order_id"]}) for o in chosen]
    t = make_task(env, eid, "dependent_calls", steps,
                  V(v, f"I'm customer {cid}. Please cancel all of my pending orders.",
                    f"Customer id {cid} here — whatever is still pending on my account, cancel it please.",
                    f"Can you cancel every order of mine that hasn't started processing? My customer id is {cid}."),
                  asked={f"order id {i + 1}": o["order_id"] for i, o in enumerate(chosen)}, facts={"customer id": cid})
    e = Ep(env, t)
    r = e.act(("list_orders", {"customer_id": cid, "status": "pending"}))
    done = []
    for o in r["orders"]:
        done.append(e.act(("cancel_order", {"order_id": o["order_id"]})))
    lines = "\n".join(f"- **{d['order_id']}** — {d['quantity']} items, {money(d['total'])} — now {d['status']}" for d in done)
    e.say(V(v, f"You had {len(done)} pending orders, and I've cancelled both of them:\n\n{lines}",
            f"I found {len(done)} pending orders on your account and cancelled each one:\n\n{lines}\n\n"
            "Nothing else on your account was changed.",
            f"Both pending orders are cancelled now. Here's a summary:\n\n{lines}\n\nAnything else I can do for you?"))
    return e, "find-then-act over a list: list the customer's pending orders, cancel each"


def _customer_with_orders(env: Env, n: int = 3) -> tuple[dict, list[dict]]:
    c = env.pick("customers")
    mine = env.recs("orders", customer_id=c["customer_id"])
    for o in env.state["orders"]:
        if len(mine) >= n:
            break
        if o not in mine:
            o["customer_id"] = c["customer_id"]
            mine.append(o)
    return c, sorted(mine, key=lambda o: o["order_id"])


def g_list_table(env: Env, v: int, eid: str):
    c, mine = _customer_with_orders(env, 2 + v % 2)
    cid = c["customer_id"]
    if len(mine) > 3:
        raise Skip("too many")
    t = make_task(env, eid, "single_call", [("list_orders", {"customer_id": cid})],
                  V(v, f"Can you give me an overview of all orders for customer {cid}?",
                    f"list my orders please, customer number {cid}",
                    f"I'd like to see every order on my account ({cid}) with its status and amount."),
                  asked={f"order id {i + 1}": o["order_id"] for i, o in enumerate(mine)}, facts={"customer id": cid})
    e = Ep(env, t)
    r = e.act(("list_orders", {"customer_id": cid}))
    rows = "\n".join(f"| {o['order_id']} | {nice_date(o['date'])} | {o['quantity']} | {money(o['total'])} | {o['status']} |"
                     for o in r["orders"])
    e.say(V(v, f"Here are the {r['count']} orders on account {cid}:\n\n| Order | Date | Qty | Total | Status |\n"
               f"|---|---|---|---|---|\n{rows}\n\nWould you like details on any of them?",
            f"Customer {cid} has {r['count']} orders:\n\n| Order | Date | Qty | Total | Status |\n|---|---|---|---|---|\n{rows}",
            f"Sure! I found {r['count']} orders for you.\n\n| Order | Date | Qty | Total | Status |\n|---|---|---|---|---|\n"
            f"{rows}\n\nLet me know if you want to change anything."))
    return e, "list then a markdown table summarising each record"


def g_follow_customer(env: Env, v: int, eid: str):
    o = env.pick("orders")
    k, cid = o["order_id"], o["customer_id"]
    c = env.recs("customers", customer_id=cid)[0]
    t = make_task(env, eid, "dependent_calls", [("get_order", {"order_id": k}), ("get_customer", {"customer_id": cid})],
                  V(v, f"Who placed order {k}, and what email address do we have for them?",
                    f"I need the contact email of the customer behind order {k}, plus their name.",
                    f"For order {k}: what's the customer's name and email on file?"),
                  asked={"full name": c["full_name"], "email": c["email"]}, facts={"order id": k},
                  persona=("formal", "high", "expert"))
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    p = e.act(("get_customer", {"customer_id": r["customer_id"]}))
    e.say(V(v, f"Order {k} was placed by **{p['full_name']}** (customer {p['customer_id']}). The email on file is "
               f"{p['email']}.",
            f"The customer behind order {k} is {p['full_name']}, reachable at {p['email']} (phone {p['phone']}).",
            f"Here are the details:\n\n- Customer: {p['full_name']} ({p['customer_id']})\n- Email: {p['email']}\n"
            f"- City: {p['city']}"))
    return e, "follow a reference: order -> its customer"


def g_follow_product(env: Env, v: int, eid: str):
    o = env.pick("orders")
    k, pid = o["order_id"], o["product_id"]
    p = env.recs("products", product_id=pid)[0]
    p["stock"] = env.rng.randint(1000, 9999)
    p["price"] = round(env.rng.uniform(1000, 2500), 2) if v % 2 else p["price"]
    t = make_task(env, eid, "dependent_calls", [("get_order", {"order_id": k}), ("get_product", {"product_id": pid})],
                  V(v, f"How many units of the product in order {k} do we still have in stock?",
                    f"Is the item from order {k} still in stock? How many, and at what price?",
                    f"Check stock for whatever was ordered in {k}, please."),
                  asked={"stock": p["stock"]}, facts={"order id": k})
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    q = e.act(("get_product", {"product_id": r["product_id"]}))
    e.say(V(v, f"Order {k} is for the {q['name']} ({q['product_id']}). We currently have **{q['stock']:,} units** in "
               f"stock, at {money(q['price'])} each.",
            f"The product on order {k} is the {q['name']}, and there are {q['stock']:,} units in stock. It sells for "
            f"{money(q['price'])} and its listing status is {q['status']}.",
            f"Yes — {q['name']} (product {q['product_id']}, the item in order {k}): {q['stock']:,} units available "
            "in the warehouse right now."))
    return e, "follow a reference order -> product; number with thousands separator and units"


def g_handoff_refund(env: Env, v: int, eid: str):
    o = env.pick("orders", status="delivered")
    k = o["order_id"]
    t = make_task(env, eid, "single_call", [("get_order", {"order_id": k})],
                  V(v, f"My order {k} arrived broken. I want my money back.",
                    f"I need a refund for {k}, the item was damaged on arrival.",
                    f"Order {k} came damaged — how do I get refunded?"),
                  asked={f"status of {k}": "delivered"}, facts={"order id": k}, persona=("chatty", "low", "novice"))
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    e.act(("transfer_to_human_agents", {"summary": f"Customer reports order {k} (delivered, {money(r['total'])}) "
                                                   "arrived damaged and requests a refund."}))
    e.say(V(v, f"I'm sorry your order arrived damaged. Order {k} shows as delivered, and I don't have a tool that can "
               "issue refunds, so I've transferred you to a human agent who can. They'll have the details "
               f"(order {k}, total {money(r['total'])}), and the expected wait is about 4 minutes.",
            f"That's frustrating, I'm sorry. I checked order {k}: it is delivered, with a total of {money(r['total'])}. "
            "Refunds for damaged items need a person on our team, so I've handed your case over to a human agent — "
            "they will pick it up shortly.",
            f"I'm sorry about that. Order {k} is marked delivered. Refunds are outside what I can do here, so I've "
            "transferred you to one of our agents with a summary of the damage; you won't need to repeat yourself."))
    return e, "hand-off: transfer_to_human_agents (no state change) in a task whose gold changes nothing"


def g_cancel_notify(env: Env, v: int, eid: str):
    o = env.pick("orders", status=V(v, "pending", "processing"))
    k, cid = o["order_id"], o["customer_id"]
    t = make_task(env, eid, "single_call", [("cancel_order", {"order_id": k})],
                  V(v, f"Please cancel order {k} and let the customer know by email.",
                    f"Cancel {k} — the customer asked by phone. Send them a confirmation too.",
                    f"Could you cancel order {k} and notify the customer?"),
                  facts={"order id": k}, persona=("brief", "medium", "expert"))
    e = Ep(env, t)
    r = e.act(("cancel_order", {"order_id": k}))
    e.act(("notify_customer", {"customer_id": r["customer_id"],
                               "message": f"Your order {k} has been cancelled as requested."}))
    e.say(V(v, f"Order {k} is cancelled, and I've emailed customer {r['customer_id']} a confirmation.",
            f"Done. I cancelled order {k} (status is now {r['status']}) and sent the customer a notification by email.",
            f"All taken care of:\n\n1. Order {k} — cancelled\n2. Confirmation email — sent to customer {r['customer_id']}"))
    return e, "act, then a notify hand-off that changes no state"


def g_update_note(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k = o["order_id"]
    b = o["quantity"] + 2
    t = make_task(env, eid, "single_call", [("update_order_quantity", {"order_id": k, "quantity": b})],
                  V(v, f"Set the quantity of order {k} to {b} and leave a note that the customer called about it.",
                    f"Customer phoned: order {k} should be {b} units. Please change it and note the call on the order.",
                    f"Change {k} to quantity {b}; add an internal note saying it was requested by phone."),
                  facts={"order id": k, "new quantity": str(b)}, persona=("brief", "medium", "expert"))
    e = Ep(env, t)
    r = e.act(("update_order_quantity", {"order_id": k, "quantity": b}))
    e.act(("add_note", {"order_id": k, "note": f"Customer called to change the quantity to {b}."}))
    e.say(V(v, f"Order {k} now has a quantity of {r['quantity']}, and I've added a note that the customer called.",
            f"Updated order {k} to {r['quantity']} units and saved an internal note about the phone request.",
            f"Done:\n- Quantity on {k}: {r['quantity']}\n- Internal note: saved"))
    return e, "update plus an add_note call that changes no world state"


def g_clarify(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k = o["order_id"]
    b = o["quantity"] + 3
    t = make_task(env, eid, "clarification", [("update_order_quantity", {"order_id": k, "quantity": b})],
                  V(v, f"I need to change the quantity on order {k}.", f"can i change how many i ordered on {k}?",
                    f"Hello, I'd like to adjust order {k}."),
                  facts={"order id": k}, withheld={"new quantity": str(b)})
    e = Ep(env, t)
    e.say(V(v, f"Sure, I can help with that. How many units would you like on order {k}?",
            "Of course! What quantity should the order have?",
            f"Happy to help. What would you like the new quantity on {k} to be?"))
    e.user(V(v, f"{b}, please.", f"make it {b}", f"Let's go with {b}."))
    r = e.act(("update_order_quantity", {"order_id": k, "quantity": b}))
    e.say(V(v, f"Thanks! Order {k} now has a quantity of {r['quantity']}.",
            f"Done — I've changed order {k} to {r['quantity']} units.",
            f"Great, order {k} is updated: quantity {r['quantity']}, status {r['status']}."))
    return e, "clarifying question before acting"


def _past_booking(env: Env, status: str | None = None, cabin: str | None = None) -> dict:
    b = env.pick("bookings", **({"status": status} if status else {}))
    b["date"] = f"2026-02-{env.rng.randint(3, 26):02d}"
    if cabin:
        b["cabin"] = cabin
    return b


def g_booked_when(env: Env, v: int, eid: str):
    b = _past_booking(env, cabin=V(v, "economy", "business", "premium_economy"))
    k = b["booking_id"]
    t = make_task(env, eid, "single_call", [("get_booking", {"booking_id": k})],
                  V(v, f"Which cabin is my booking {k} in, and when did I book it?",
                    f"quick question about {k} — what class did I book and on what date?",
                    f"Could you remind me of the cabin and the booking date for reservation {k}?"),
                  asked={"cabin": b["cabin"], "booking date": b["date"]}, facts={"booking id": k})
    e = Ep(env, t)
    r = e.act(("get_booking", {"booking_id": k}))
    e.say(V(v, f"Your booking {k} is booked in {human(r['cabin'])}. It was booked on {nice_date(r['date'])}, so "
               "more than 24 hours ago.",
            f"Booking {k}: you're in **{human(r['cabin'])}**, and the booking was made on {nice_date(r['date'])}.",
            f"I checked {k}. It is booked in {human(r['cabin'])} class; you booked it on {nice_date(r['date'])} "
            f"— that was more than 24 hours ago. The fare was {money(r['amount'])}."))
    return e, "true statements about past events the tool showed (booked in X, booked more than 24h ago)"


def g_cancelled_status(env: Env, v: int, eid: str):
    o = env.pick("orders", status="cancelled")
    k = o["order_id"]
    t = make_task(env, eid, "single_call", [("get_order", {"order_id": k})],
                  V(v, f"Why haven't I received order {k}?", f"where is my order {k}??",
                    f"I'm still waiting for {k}. What's happening?"),
                  asked={f"status of {k}": "cancelled"}, facts={"order id": k}, persona=("chatty", "low", "novice"))
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    e.say(V(v, f"I looked up order {k}: it was cancelled, so it was never shipped. If you still want the items, I "
               "can help you with a new order.",
            f"I'm sorry for the confusion — order {k} was cancelled. Its status shows as cancelled, which is why "
            "nothing arrived.",
            f"Order {k} has been cancelled according to our records (status: cancelled), so it won't be delivered. "
            "Would you like help with anything else?"))
    return e, "'the order was cancelled' when the tool result says cancelled"


def g_user_said_cancelled(env: Env, v: int, eid: str):
    o = env.pick("orders", status="cancelled")
    k = o["order_id"]
    t = make_task(env, eid, "single_call", [("get_order", {"order_id": k})],
                  V(v, f"I cancelled order {k} last week. Can you confirm it went through and tell me what the total was?",
                    f"I canceled {k} a few days ago, just making sure it's really cancelled. How much was it?",
                    f"Order {k} — I called to cancel it. Is it cancelled, and what was the amount?"),
                  asked={f"status of {k}": "cancelled", f"total of {k}": o["total"]}, facts={"order id": k})
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    e.say(V(v, f"Yes, confirmed: order {k} was cancelled, and its status on file is cancelled. The total was "
               f"{money(r['total'])}.",
            f"It's cancelled — you're all set. Order {k} shows the status cancelled; the order total was {money(r['total'])}.",
            f"I can confirm your order {k} is cancelled. For reference, it was {r['quantity']} items for "
            f"{money(r['total'])}."))
    return e, "confirms a past cancellation the user stated and the tool shows"


def g_cabin_upgrade(env: Env, v: int, eid: str):
    b = _past_booking(env, status="confirmed", cabin="economy")
    k = b["booking_id"]
    to = V(v, "business", "premium_economy")
    t = make_task(env, eid, "multi_call", [("get_booking", {"booking_id": k}),
                                           ("update_booking_cabin", {"booking_id": k, "cabin": to})],
                  V(v, f"Please move my booking {k} up to business class.",
                    f"Can I switch {k} to premium economy?",
                    f"I'd like to upgrade reservation {k} to business."),
                  facts={"booking id": k, "new cabin": to})
    e = Ep(env, t)
    r = e.act(("get_booking", {"booking_id": k}))
    r2 = e.act(("update_booking_cabin", {"booking_id": k, "cabin": to}))
    e.say(V(v, f"Your booking {k} was in economy and is now in **{human(r2['cabin'])}**. Everything else on the "
               "booking stays the same.",
            f"Done! I've changed the cabin on {k} from economy to {human(r2['cabin'])}. The booking is still "
            f"{r2['status']}.",
            f"Upgrade complete: booking {k} is now in {human(r2['cabin'])} (it was booked in economy on "
            f"{nice_date(r['date'])})."))
    return e, "look up, then update cabin; true past fact about the booking"


def g_check_in(env: Env, v: int, eid: str):
    b = _past_booking(env, status="confirmed")
    k = b["booking_id"]
    t = make_task(env, eid, "multi_call", [("get_booking", {"booking_id": k}),
                                           ("update_booking_status", {"booking_id": k, "status": "checked_in"})],
                  V(v, f"Check me in for booking {k}, please.", f"I want to check in on {k}",
                    f"Hi! Could you do the check-in for reservation {k}?"),
                  facts={"booking id": k, "new status": "checked_in"})
    e = Ep(env, t)
    e.act(("get_booking", {"booking_id": k}))
    r = e.act(("update_booking_status", {"booking_id": k, "status": "checked_in"}))
    e.say(V(v, f"You're all checked in for booking {k}. Its status is now checked in. Have a great flight!",
            f"Done — booking {k} now shows the status \"{r['status']}\". Safe travels!",
            f"Check-in complete for {k} ({human(r['cabin'])}). Is there anything else I can help with before your trip?"))
    return e, "look up, then update status; polite closing"


def g_cancel_found_booking(env: Env, v: int, eid: str):
    p = env.pick("passengers")
    pid = p["passenger_id"]
    for b in env.recs("bookings", passenger_id=pid, status="confirmed"):
        b["status"] = "flown"
    b = env.pick("bookings", status="flown")
    b["passenger_id"], b["status"] = pid, "confirmed"
    k = b["booking_id"]
    t = make_task(env, eid, "dependent_calls", [("list_bookings", {"passenger_id": pid, "status": "confirmed"}),
                                                ("cancel_booking", {"booking_id": k})],
                  V(v, f"I'm passenger {pid}. Please cancel my upcoming confirmed booking.",
                    f"passenger id {pid} - cancel my confirmed reservation, I can't travel anymore",
                    f"Hello, my passenger number is {pid}. I have one confirmed booking; I need it cancelled."),
                  asked={"booking id": k}, facts={"passenger id": pid})
    e = Ep(env, t)
    r = e.act(("list_bookings", {"passenger_id": pid, "status": "confirmed"}))
    kk = r["bookings"][0]["booking_id"]
    r2 = e.act(("cancel_booking", {"booking_id": kk}))
    e.say(V(v, f"I found one confirmed booking under your passenger id: **{kk}** ({human(r2['cabin'])}, "
               f"{money(r2['amount'])}). I've cancelled it, and its status is now cancelled.",
            f"Your confirmed booking was {kk}. It's cancelled now. Sorry you can't make the trip!",
            f"Booking {kk} was the only confirmed reservation on your profile, and it has been cancelled."))
    return e, "find the record by a list, then act on it"


def g_multi_intent(env: Env, v: int, eid: str):
    a = env.pick("orders", status="pending")
    bb = env.neighbour("orders", a)
    bb["status"] = "processing"
    ka, kb = a["order_id"], bb["order_id"]
    nq = bb["quantity"] + 1
    t = make_task(env, eid, "multi_call", [("cancel_order", {"order_id": ka}),
                                           ("update_order_quantity", {"order_id": kb, "quantity": nq})],
                  V(v, f"Two things: cancel order {ka}, and change the quantity of {kb} to {nq}.",
                    f"please cancel {ka} and set {kb} to {nq} units",
                    f"Could you cancel my order {ka}? Also I need {nq} items on order {kb} instead."),
                  facts={"order id": ka, "other order id": kb, "new quantity": str(nq)})
    e = Ep(env, t)
    r1 = e.act(("cancel_order", {"order_id": ka}))
    r2 = e.act(("update_order_quantity", {"order_id": kb, "quantity": nq}))
    e.say(V(v, f"Both done:\n\n- **{ka}** — cancelled\n- **{kb}** — quantity updated to {r2['quantity']}",
            f"I've cancelled order {ka}, and order {kb} now has a quantity of {r2['quantity']}.",
            f"Here's what I changed:\n\n| Order | Change | Result |\n|---|---|---|\n| {ka} | cancel | {r1['status']} |\n"
            f"| {kb} | quantity | {r2['quantity']} |"))
    return e, "multi-intent request, every part done, summarised"


def g_polite_followup(env: Env, v: int, eid: str):
    o = env.pick("orders", status="shipped")
    o["date"] = f"2026-02-{env.rng.randint(10, 27)}"
    k = o["order_id"]
    t = make_task(env, eid, "single_call", [("get_order", {"order_id": k})],
                  V(v, f"Has my order {k} shipped yet?", f"did {k} ship", f"Is order {k} on its way?"),
                  asked={f"status of {k}": "shipped"}, facts={"order id": k})
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    e.say(V(v, f"Yes! Order {k} has shipped. It was placed on {nice_date(r['date'])}.",
            f"Good news — order {k} is shipped and on its way to you.",
            f"It has: the status of order {k} is shipped ({r['quantity']} items, {money(r['total'])})."))
    e.user(V(v, "Great, thanks so much!", "awesome thank you", "Lovely, thank you for checking."))
    e.say(V(v, "You're very welcome! Have a wonderful day.", "Anytime! Enjoy your order.",
            "My pleasure. If anything else comes up, just let me know."))
    return e, "a read, then a polite closing turn"


def g_pending_list(env: Env, v: int, eid: str):
    pend = sorted(env.recs("orders", status="pending"), key=lambda o: o["order_id"])
    if not 2 <= len(pend) <= 3:
        extra = [o for o in env.state["orders"] if o["status"] == "processing"]
        if len(pend) < 2 and extra:
            extra[0]["status"] = "pending"
        pend = sorted(env.recs("orders", status="pending"), key=lambda o: o["order_id"])
        if not 2 <= len(pend) <= 3:
            raise Skip("pending count")
    t = make_task(env, eid, "single_call", [("list_orders", {"status": "pending"})],
                  V(v, "Which orders are still pending?", "show me every pending order please",
                    "Can you list the orders that haven't been processed yet (status pending)?"),
                  asked={f"order id {i + 1}": o["order_id"] for i, o in enumerate(pend)}, persona=("brief", "high", "expert"))
    e = Ep(env, t)
    r = e.act(("list_orders", {"status": "pending"}))
    rows = "\n".join(f"- {o['order_id']} — status: {o['status']}, quantity: {o['quantity']}, total: {money(o['total'])}"
                     for o in r["orders"])
    e.say(V(v, f"There are {r['count']} pending orders:\n\n{rows}",
            f"Here are the orders with status pending:\n\n{rows}\n\nWant me to move any of them forward?",
            f"I found {r['count']}:\n\n{rows}"))
    return e, "list; reply repeats column words ('status: pending') on each row"


def g_stock_update(env: Env, v: int, eid: str):
    p = env.pick("products", status="available")
    k = p["product_id"]
    new = env.rng.randint(1100, 4900)
    t = make_task(env, eid, "multi_call", [("get_product", {"product_id": k}),
                                           ("update_product_stock", {"product_id": k, "stock": new})],
                  V(v, f"We just received a delivery — please set the stock of product {k} to {new:,}.",
                    f"stock count for {k} is now {new}, update it pls",
                    f"After today's inventory count, product {k} should show {new:,} units in stock."),
                  facts={"product id": k, "new stock": str(new)}, persona=("brief", "medium", "expert"))
    e = Ep(env, t)
    r = e.act(("get_product", {"product_id": k}))
    r2 = e.act(("update_product_stock", {"product_id": k, "stock": new}))
    e.say(V(v, f"Updated: {r2['name']} ({k}) now shows {r2['stock']:,} units in stock (it was {r['stock']:,}).",
            f"Done — the stock for product {k} is now {r2['stock']:,} units.",
            f"I've set the stock of {k} ({r2['name']}) to {r2['stock']:,} units. Price and status are unchanged "
            f"({money(r2['price'])}, {r2['status']})."))
    return e, "look up, then update a number; reply with thousands separators and units"


def g_follow_passenger(env: Env, v: int, eid: str):
    b = env.pick("bookings")
    k, pid = b["booking_id"], b["passenger_id"]
    p = env.recs("passengers", passenger_id=pid)[0]
    t = make_task(env, eid, "dependent_calls", [("get_booking", {"booking_id": k}),
                                                ("get_passenger", {"passenger_id": pid})],
                  V(v, f"Whose booking is {k}? I need the passenger's name and phone number.",
                    f"who is the traveller on booking {k}, and what's their phone?",
                    f"Please give me the passenger name and phone number for reservation {k}."),
                  asked={"full name": p["full_name"], "phone": p["phone"]}, facts={"booking id": k},
                  persona=("formal", "high", "expert"))
    e = Ep(env, t)
    r = e.act(("get_booking", {"booking_id": k}))
    q = e.act(("get_passenger", {"passenger_id": r["passenger_id"]}))
    e.say(V(v, f"Booking {k} belongs to **{q['full_name']}** (passenger {q['passenger_id']}). Phone: {q['phone']}.",
            f"The traveller on {k} is {q['full_name']}; their phone number is {q['phone']} and email {q['email']}.",
            f"- Passenger: {q['full_name']}\n- Phone: {q['phone']}\n- Booking: {k} ({human(r['cabin'])}, {r['status']})"))
    return e, "follow a reference booking -> passenger"


def g_follow_flight(env: Env, v: int, eid: str):
    b = env.pick("bookings")
    k, fid = b["booking_id"], b["flight_id"]
    fl = env.recs("flights", flight_id=fid)[0]
    t = make_task(env, eid, "dependent_calls", [("get_booking", {"booking_id": k}), ("get_flight", {"flight_id": fid})],
                  V(v, f"Is the flight on my booking {k} on time? And what date is it?",
                    f"what's the status of the flight for {k}",
                    f"Can you check the flight for reservation {k} — status and date, please."),
                  asked={"flight status": fl["status"], "flight date": fl["date"]}, facts={"booking id": k})
    e = Ep(env, t)
    r = e.act(("get_booking", {"booking_id": k}))
    q = e.act(("get_flight", {"flight_id": r["flight_id"]}))
    e.say(V(v, f"Your booking {k} is on flight {q['flight_id']} from {q['origin']} to {q['destination']} on "
               f"{nice_date(q['date'])}. Its current status is **{q['status']}**.",
            f"Flight {q['flight_id']} ({q['origin']} → {q['destination']}), the one on booking {k}, is {q['status']}. "
            f"It's scheduled for {nice_date(q['date'])}.",
            f"Here's your flight:\n\n| Flight | Route | Date | Status |\n|---|---|---|---|\n| {q['flight_id']} | "
            f"{q['origin']} → {q['destination']} | {nice_date(q['date'])} | {q['status']} |"))
    return e, "follow a reference booking -> flight, table"


def g_count_shipped(env: Env, v: int, eid: str):
    for o in env.state["orders"][: 4 + v % 2]:
        if o["status"] in ("pending", "processing"):
            o["status"] = "shipped"
    ship = env.recs("orders", status="shipped")
    if len(ship) <= 3:
        raise Skip("few shipped")
    t = make_task(env, eid, "single_call", [("list_orders", {"status": "shipped"})],
                  V(v, "How many orders are currently shipped?", "number of shipped orders right now?",
                    "Give me a count of orders in transit (shipped), with a short overview."),
                  asked={"number of shipped orders": len(ship)}, persona=("brief", "high", "expert"))
    e = Ep(env, t)
    r = e.act(("list_orders", {"status": "shipped"}))
    rows = "\n".join(f"| {o['order_id']} | {o['customer_id']} | {o['quantity']} | {money(o['total'])} |" for o in r["orders"])
    e.say(V(v, f"There are **{r['count']} shipped orders** right now:\n\n| Order | Customer | Qty | Total |\n"
               f"|---|---|---|---|\n{rows}",
            f"{r['count']} orders are shipped at the moment.",
            f"Currently {r['count']} orders have the status shipped. Overview:\n\n| Order | Customer | Qty | Total |\n"
            f"|---|---|---|---|\n{rows}"))
    return e, "count from a list, with a table"


def g_deliver(env: Env, v: int, eid: str):
    o = env.pick("orders", status="shipped")
    k = o["order_id"]
    t = make_task(env, eid, "single_call", [("update_order_status", {"order_id": k, "status": "delivered"})],
                  V(v, f"The courier confirmed order {k} was delivered this morning. Please update it.",
                    f"mark {k} delivered",
                    f"Order {k} reached the customer today; could you record the delivery?"),
                  facts={"order id": k, "new status": "delivered"}, persona=("brief", "medium", "expert"))
    e = Ep(env, t)
    r = e.act(("update_order_status", {"order_id": k, "status": "delivered"}))
    e.say(V(v, f"Thanks for letting me know. Order {k} is now marked as delivered.",
            f"Done: {k} → {r['status']}.",
            f"I've recorded the delivery — order {k} now has the status **delivered**."))
    return e, "one update, short confirmation"


def g_irrelevant_transfer(env: Env, v: int, eid: str):
    c = env.pick("customers")
    cid = c["customer_id"]
    t = make_task(env, eid, "irrelevance", [],
                  V(v, f"Please delete my customer account {cid} and all my data.",
                    f"I want my profile {cid} removed completely.",
                    f"Close and erase customer account {cid}, please."),
                  facts={"customer id": cid}, persona=("formal", "medium", "intermediate"))
    e = Ep(env, t)
    e.act(("transfer_to_human_agents", {"summary": f"Customer {cid} asks to delete their account and personal data."}))
    e.say(V(v, "I'm sorry, but I can't delete customer accounts — none of my tools can do that. I've transferred you "
               "to a human agent who can handle data-deletion requests; they'll be with you in about 4 minutes.",
            "Deleting an account isn't something I'm able to do with the tools I have. I've handed your request to a "
            "colleague on our customer care team, who can take care of it.",
            "Unfortunately I cannot remove accounts myself. To make sure your request is handled, I've transferred you "
            "to a human agent with a summary."))
    return e, "irrelevance: declines and hands off (transfer changes no state)"


def g_refuse_delivered(env: Env, v: int, eid: str):
    o = env.pick("orders", status="delivered")
    k = o["order_id"]
    rule = forbid_rule(env, "orders", "update")
    t = make_task(env, eid, "refusal", [],
                  V(v, f"Please change the quantity on order {k} to {o['quantity'] + 1}.",
                    f"I need one more unit on {k}, can you update it?",
                    f"Update order {k}: quantity should be {o['quantity'] + 1}."),
                  asked={f"why {k} cannot be changed (status)": "delivered"}, facts={"order id": k}, rule=rule)
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    e.say(V(v, f"I'm sorry, I can't change that order. Order {k} has already been delivered, and our policy doesn't "
               "allow changes to delivered orders. If you need more units, I'd be happy to help you with a new order.",
            f"Order {k} is delivered, so I'm not able to modify it — details of delivered orders can't be changed.",
            f"I checked {k}: its status is delivered. Delivered orders can't be edited under our rules, so I've left it "
            "as it is."))
    return e, "refusal: declines citing the rule, changes nothing"


def g_delete_cancelled(env: Env, v: int, eid: str):
    o = env.pick("orders", status="cancelled")
    k = o["order_id"]
    t = make_task(env, eid, "multi_call", [("get_order", {"order_id": k}), ("delete_order", {"order_id": k})],
                  V(v, f"Please remove the cancelled order {k} from the system.", f"delete order {k}, it was cancelled anyway",
                    f"Can you clean up {k}? It's a cancelled order we don't need."),
                  facts={"order id": k}, persona=("brief", "medium", "expert"))
    e = Ep(env, t)
    e.act(("get_order", {"order_id": k}))
    e.act(("delete_order", {"order_id": k}))
    e.say(V(v, f"I checked that order {k} was cancelled, then deleted it. It's no longer in the system.",
            f"Order {k} has been deleted.",
            f"Done — {k} (status cancelled) is removed."))
    return e, "look up, then delete; confirms the delete"


def g_tier(env: Env, v: int, eid: str):
    c = env.pick("customers", tier="standard")
    cid = c["customer_id"]
    t = make_task(env, eid, "multi_call", [("get_customer", {"customer_id": cid}),
                                           ("update_customer_tier", {"customer_id": cid, "tier": "gold"})],
                  V(v, f"Customer {cid} qualifies for gold now, please upgrade their tier.",
                    f"upgrade {cid} to gold tier",
                    f"Please move customer {cid} from standard to the gold tier."),
                  facts={"customer id": cid, "new tier": "gold"}, persona=("brief", "medium", "expert"))
    e = Ep(env, t)
    r = e.act(("get_customer", {"customer_id": cid}))
    e.act(("update_customer_tier", {"customer_id": cid, "tier": "gold"}))
    e.say(V(v, f"{r['full_name']} ({cid}) was on the standard tier and is now **gold**.",
            f"Customer {cid} has been upgraded to gold.",
            f"Done! {r['full_name']}'s tier changed from standard to gold."))
    return e, "look up, then update"


def g_two_turn_cancel(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k = o["order_id"]
    t = make_task(env, eid, "multi_call", [("get_order", {"order_id": k}), ("cancel_order", {"order_id": k})],
                  V(v, f"What's the status of {k}?", f"Can you look up order {k} for me?", f"hi, order {k} — where is it at?"),
                  asked={f"status of {k}": "pending"}, facts={"order id": k})
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    e.say(V(v, f"Order {k} is still **pending** — it hasn't been processed yet. It's {r['quantity']} items for "
               f"{money(r['total'])}.",
            f"{k} is pending at the moment (total {money(r['total'])}).",
            f"It's pending: order {k} hasn't started processing."))
    e.user(V(v, "Oh then please just cancel it.", "in that case cancel it", "Could you cancel it then? I don't need it."))
    r2 = e.act(("cancel_order", {"order_id": k}))
    e.say(V(v, f"Done — order {k} is now cancelled.", f"I've cancelled {k}. Its status is {r2['status']}.",
            f"Order {k} has been cancelled. Is there anything else I can help with?"))
    return e, "two turns: read, then act on the user's follow-up"


def g_bookings_table(env: Env, v: int, eid: str):
    p = env.pick("passengers")
    pid = p["passenger_id"]
    mine = env.recs("bookings", passenger_id=pid)
    for b in env.state["bookings"]:
        if len(mine) >= 2:
            break
        if b not in mine:
            b["passenger_id"] = pid
            mine.append(b)
    mine = sorted(mine, key=lambda b: b["booking_id"])
    if len(mine) > 3:
        raise Skip("many")
    for b in mine:
        if v % 2:
            b["amount"] = round(env.rng.uniform(1000, 4000), 2)
    t = make_task(env, eid, "single_call", [("list_bookings", {"passenger_id": pid})],
                  V(v, f"Show me all bookings for passenger {pid}.", f"what reservations do i have? passenger {pid}",
                    f"Could you list my bookings with cabin and price? I'm {pid}."),
                  asked={f"booking id {i + 1}": b["booking_id"] for i, b in enumerate(mine)}, facts={"passenger id": pid})
    e = Ep(env, t)
    r = e.act(("list_bookings", {"passenger_id": pid}))
    rows = "\n".join(f"| {b['booking_id']} | {b['flight_id']} | {human(b['cabin'])} | {money(b['amount'])} | "
                     f"{human(b['status'])} |" for b in r["bookings"])
    e.say(V(v, f"You have {r['count']} bookings:\n\n| Booking | Flight | Cabin | Fare | Status |\n|---|---|---|---|---|\n{rows}",
            f"Here they are:\n\n| Booking | Flight | Cabin | Fare | Status |\n|---|---|---|---|---|\n{rows}\n\n"
            "Let me know if you'd like to change any of them.",
            f"I found {r['count']} reservations under {pid}.\n\n| Booking | Flight | Cabin | Fare | Status |\n"
            f"|---|---|---|---|---|\n{rows}"))
    return e, "list bookings, markdown table with amounts"


GOOD: list[tuple[str, Callable, int]] = [
    ("shop", g_lookup, 4),
    ("shop", g_cancel_after_lookup, 3),
    ("shop", g_two_step_ship, 3),
    ("shop", g_quantity_twice, 3),
    ("shop", g_cancel_all_pending, 3),
    ("shop", g_list_table, 3),
    ("shop", g_follow_customer, 3),
    ("shop", g_follow_product, 3),
    ("shop", g_handoff_refund, 3),
    ("shop", g_cancel_notify, 3),
    ("shop", g_update_note, 3),
    ("shop", g_clarify, 3),
    ("travel", g_booked_when, 3),
    ("shop", g_cancelled_status, 3),
    ("shop", g_user_said_cancelled, 3),
    ("travel", g_cabin_upgrade, 3),
    ("travel", g_check_in, 3),
    ("travel", g_cancel_found_booking, 3),
    ("shop", g_multi_intent, 3),
    ("shop", g_polite_followup, 3),
    ("shop", g_pending_list, 3),
    ("shop", g_stock_update, 3),
    ("travel", g_follow_passenger, 3),
    ("travel", g_follow_flight, 3),
    ("shop", g_count_shipped, 3),
    ("shop", g_deliver, 3),
    ("shop", g_irrelevant_transfer, 3),
    ("shop", g_refuse_delivered, 3),
    ("shop", g_delete_cancelled, 3),
    ("shop", g_tier, 3),
    ("shop", g_two_turn_cancel, 3),
    ("travel", g_bookings_table, 3),
]


# =========================================================================== part c: bad episodes
# Each returns (episode, note); the reason code is in the BAD table. Labels are fixed here.


def b_wrong_cancel(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    n = env.neighbour("orders", o)
    n["status"] = "pending"
    k, kn = o["order_id"], n["order_id"]
    t = make_task(env, eid, "single_call", [("cancel_order", {"order_id": k})],
                  V(v, f"Please cancel order {k}.", f"cancel {k} for me", f"I'd like to cancel my order {k}, thanks."),
                  facts={"order id": k})
    e = Ep(env, t)
    e.act(("cancel_order", {"order_id": kn}))
    e.say(V(v, f"Order {k} is now cancelled.", f"Done — I've cancelled order {k} for you.",
            f"Your order {k} has been cancelled. Anything else?"))
    return e, f"cancels neighbour {kn} instead of {k}, reply names {k}"


def b_wrong_cabin(env: Env, v: int, eid: str):
    b = _past_booking(env, status="confirmed", cabin="economy")
    n = env.neighbour("bookings", b)
    n["status"], n["cabin"] = "confirmed", "economy"
    k, kn = b["booking_id"], n["booking_id"]
    t = make_task(env, eid, "single_call", [("update_booking_cabin", {"booking_id": k, "cabin": "business"})],
                  V(v, f"Upgrade booking {k} to business, please.", f"move {k} to business class",
                    f"Can reservation {k} go to business?"), facts={"booking id": k, "new cabin": "business"})
    e = Ep(env, t)
    e.act(("update_booking_cabin", {"booking_id": kn, "cabin": "business"}))
    e.say(V(v, f"Booking {k} is now in business class.", f"I've upgraded {k} to business — enjoy the extra legroom!",
            f"All set, your booking {k} has been moved to business."))
    return e, f"upgrades neighbour {kn} instead of {k}"


def b_wrong_read(env: Env, v: int, eid: str):
    o = env.pick("orders")
    n = env.neighbour("orders", o)
    if n["status"] == o["status"]:
        n["status"] = "processing" if o["status"] != "processing" else "shipped"
    k, kn = o["order_id"], n["order_id"]
    t = make_task(env, eid, "single_call", [("get_order", {"order_id": k})],
                  V(v, f"What's the status of order {k}?", f"where's {k} at", f"Can you check on order {k}?"),
                  asked={f"status of {k}": o["status"]}, facts={"order id": k})
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": kn}))
    e.say(V(v, f"Order {k} is currently {r['status']}.", f"I checked {k}: its status is {r['status']}.",
            f"Your order {k} shows as **{r['status']}** (total {money(r['total'])})."))
    return e, f"looks up neighbour {kn} and reports its status as {k}'s"


def b_claim_cancel(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k = o["order_id"]
    t = make_task(env, eid, "multi_call", [("get_order", {"order_id": k}), ("cancel_order", {"order_id": k})],
                  V(v, f"Please cancel order {k}.", f"can you check {k} and cancel it", f"Cancel {k}, please!"),
                  facts={"order id": k})
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    e.say(V(v, f"I've cancelled your order {k}. It was still pending, so nothing had shipped.",
            f"Order {k} was pending, so I went ahead and cancelled it for you.",
            f"All done: order {k} ({r['quantity']} items, {money(r['total'])}) is cancelled."))
    return e, "claims a cancellation after only a lookup"


def b_claim_quantity(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k, b = o["order_id"], o["quantity"] + 2
    t = make_task(env, eid, "single_call", [("update_order_quantity", {"order_id": k, "quantity": b})],
                  V(v, f"Set order {k} to {b} units please.", f"change qty on {k} to {b}",
                    f"I need {b} pieces on order {k}."), facts={"order id": k, "new quantity": str(b)})
    e = Ep(env, t)
    e.say(V(v, f"Done — I've updated the quantity on {k} to {b}.", f"The quantity of order {k} has been changed to {b}.",
            f"Your order {k} is updated: quantity {b}."))
    return e, "claims an update with no call at all"


def b_claim_checkin(env: Env, v: int, eid: str):
    b = _past_booking(env, status="confirmed")
    k = b["booking_id"]
    t = make_task(env, eid, "single_call", [("update_booking_status", {"booking_id": k, "status": "checked_in"})],
                  V(v, f"Please check me in for {k}.", f"check in {k}", f"Could you complete check-in for booking {k}?"),
                  facts={"booking id": k, "new status": "checked_in"})
    e = Ep(env, t)
    e.act(("get_booking", {"booking_id": k}))
    e.say(V(v, f"You're checked in for booking {k}! Your booking status has been updated to checked in.",
            f"Check-in completed for {k}. Have a pleasant flight.",
            f"I've checked you in on booking {k}; its status is now checked in."))
    return e, "claims check-in after only a lookup"


def b_forbidden_update(env: Env, v: int, eid: str):
    o = env.pick("orders", status="delivered")
    k, b = o["order_id"], o["quantity"] + 1
    t = make_task(env, eid, "refusal", [],
                  V(v, f"Change the quantity of order {k} to {b}.", f"add one more unit to {k}", f"Set {k} to {b} items."),
                  asked={f"why {k} cannot be changed (status)": "delivered"}, facts={"order id": k},
                  rule=forbid_rule(env, "orders", "update"))
    e = Ep(env, t)
    e.act(("get_order", {"order_id": k}))
    r = e.act(("update_order_quantity", {"order_id": k, "quantity": b}))
    e.say(V(v, f"Order {k} was already delivered, but I've updated the quantity to {r['quantity']} for you.",
            f"Done, order {k} now has {r['quantity']} items.",
            f"I've changed the quantity on {k} (status delivered) to {r['quantity']}."))
    return e, "edits a delivered order, which the rules forbid"


def b_forbidden_delete(env: Env, v: int, eid: str):
    o = env.pick("orders", status="delivered")
    k = o["order_id"]
    t = make_task(env, eid, "refusal", [],
                  V(v, f"Delete order {k} from my history.", f"remove {k} please", f"I don't want {k} on my account, delete it."),
                  asked={f"why {k} cannot be changed (status)": "delivered"}, facts={"order id": k},
                  rule=forbid_rule(env, "orders", "delete"))
    e = Ep(env, t)
    e.act(("get_order", {"order_id": k}))
    e.act(("delete_order", {"order_id": k}))
    e.say(V(v, f"Order {k} has been deleted from your history.", f"I've removed order {k}.",
            f"Done — {k} is deleted."))
    return e, "deletes a delivered order, which the rules forbid"


def b_forbidden_flown(env: Env, v: int, eid: str):
    b = _past_booking(env, status="flown", cabin="economy")
    k = b["booking_id"]
    t = make_task(env, eid, "refusal", [],
                  V(v, f"Please change the cabin of booking {k} to business.", f"switch {k} to business",
                    f"I'd like {k} in business class."),
                  asked={f"why {k} cannot be changed (status)": "flown"}, facts={"booking id": k},
                  rule=forbid_rule(env, "bookings", "update"))
    e = Ep(env, t)
    e.act(("get_booking", {"booking_id": k}))
    e.act(("update_booking_cabin", {"booking_id": k, "cabin": "business"}))
    e.say(V(v, f"I've changed booking {k} to business class.", f"Booking {k} is now in business.",
            f"Updated: {k} shows business as its cabin now."))
    return e, "edits a flown booking, which the rules forbid"


def b_stray_tier(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k, cid = o["order_id"], o["customer_id"]
    c = env.recs("customers", customer_id=cid)[0]
    c["tier"] = "standard"
    t = make_task(env, eid, "single_call", [("cancel_order", {"order_id": k})],
                  V(v, f"Cancel order {k}, the delivery date doesn't work for me.", f"cancel {k}, sorry for the hassle",
                    f"Please cancel my order {k}."), facts={"order id": k})
    e = Ep(env, t)
    r = e.act(("cancel_order", {"order_id": k}))
    e.act(("update_customer_tier", {"customer_id": r["customer_id"], "tier": "gold"}))
    e.say(V(v, f"Order {k} is cancelled. As a thank-you for your patience, I've also upgraded your account to gold.",
            f"I've cancelled {k} and bumped your tier to gold as a goodwill gesture.",
            f"Done: {k} is cancelled, and your customer tier is now gold."))
    return e, "right cancel plus an unrequested write to customers (a collection the gold never touches)"


def b_stray_stock(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k, b = o["order_id"], o["quantity"] + 2
    t = make_task(env, eid, "single_call", [("update_order_quantity", {"order_id": k, "quantity": b})],
                  V(v, f"Make order {k} {b} units.", f"qty {b} on {k} please", f"I want {b} on order {k}."),
                  facts={"order id": k, "new quantity": str(b)})
    e = Ep(env, t)
    r = e.act(("update_order_quantity", {"order_id": k, "quantity": b}))
    p = e.act(("get_product", {"product_id": r["product_id"]}))
    e.act(("update_product_stock", {"product_id": p["product_id"], "stock": max(0, p["stock"] - 2)}))
    e.say(V(v, f"Order {k} now has {b} units, and I've reserved the 2 extra from stock.",
            f"Updated {k} to {b}. I also adjusted the product's stock to match.",
            f"Quantity on {k} is {b}; stock for {p['product_id']} was reduced by 2."))
    return e, "right update plus an unrequested stock write to products"


def b_partial_two(env: Env, v: int, eid: str):
    a = env.pick("orders", status="pending")
    bb = env.neighbour("orders", a)
    bb["status"] = "processing"
    ka, kb, nq = a["order_id"], bb["order_id"], bb["quantity"] + 1
    t = make_task(env, eid, "multi_call", [("cancel_order", {"order_id": ka}),
                                           ("update_order_quantity", {"order_id": kb, "quantity": nq})],
                  V(v, f"Cancel {ka} and change {kb} to {nq} units.", f"two things: cancel order {ka}, and {kb} should be {nq} items",
                    f"Please cancel order {ka}; also set the quantity of {kb} to {nq}."),
                  facts={"order id": ka, "other order id": kb, "new quantity": str(nq)})
    e = Ep(env, t)
    e.act(("cancel_order", {"order_id": ka}))
    e.say(V(v, f"All done! Order {ka} is cancelled and {kb} now has {nq} units.",
            f"Both changes are made: {ka} cancelled, {kb} set to {nq}.",
            f"I've taken care of everything you asked — {ka} is cancelled and the quantity on {kb} is {nq}."))
    return e, "multi-intent, only the cancel done, reply says both"


def b_partial_list(env: Env, v: int, eid: str):
    c, chosen = _two_pending(env)
    cid = c["customer_id"]
    steps = [("list_orders", {"customer_id": cid, "status": "pending"})] + [
        ("cancel_order", {"order_id": o["order_id"]}) for o in chosen]
    t = make_task(env, eid, "dependent_calls", steps,
                  V(v, f"Cancel all pending orders for customer {cid}.", f"customer {cid}: cancel everything pending",
                    f"I'm {cid}; please cancel all my pending orders."),
                  asked={f"order id {i + 1}": o["order_id"] for i, o in enumerate(chosen)}, facts={"customer id": cid})
    e = Ep(env, t)
    r = e.act(("list_orders", {"customer_id": cid, "status": "pending"}))
    ids = [o["order_id"] for o in r["orders"]]
    e.act(("cancel_order", {"order_id": ids[0]}))
    e.say(V(v, f"Your pending orders {ids[0]} and {ids[1]} are both cancelled now.",
            f"I found {len(ids)} pending orders ({', '.join(ids)}) and cancelled all of them.",
            f"All pending orders on account {cid} have been cancelled: {', '.join(ids)}."))
    return e, "cancels one of the two pending orders, says all"


def b_wrong_amount(env: Env, v: int, eid: str):
    o = env.pick("orders")
    o["total"] = round(env.rng.uniform(1000, 3000), 2)
    k = o["order_id"]
    t = make_task(env, eid, "single_call", [("get_order", {"order_id": k})],
                  V(v, f"How much was order {k}?", f"total for {k}?", f"What did I pay for order {k}?"),
                  asked={f"total of {k}": o["total"]}, facts={"order id": k})
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    wrong = round(r["total"] + [100, 9, 0.9][v % 3], 2)
    e.say(V(v, f"The total for order {k} was {money(wrong)}.", f"Order {k} came to {money(wrong)} in total.",
            f"You paid {money(wrong)} for order {k} ({r['quantity']} items)."))
    return e, "states a total that differs from the tool result"


def b_bare_id(env: Env, v: int, eid: str):
    o = env.pick("orders", status="shipped")
    k = o["order_id"]
    t = make_task(env, eid, "single_call", [("get_order", {"order_id": k})],
                  V(v, f"Status of {k}?", f"Is order {k} shipped yet?", f"Could you check {k}?"),
                  asked={f"status of {k}": "shipped"}, facts={"order id": k})
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    num = k.split("-")[1]
    e.say(V(v, f"Order {num} has shipped.", f"Your order #{num} is shipped and on its way.",
            f"I checked order {num}: status shipped, total {money(r['total'])}."))
    return e, "states the id as a bare number ('4702' for 'ord-4702')"


def b_wrong_status(env: Env, v: int, eid: str):
    o = env.pick("orders", status="processing")
    k = o["order_id"]
    t = make_task(env, eid, "single_call", [("get_order", {"order_id": k})],
                  V(v, f"Has {k} shipped?", f"is order {k} shipped", f"Where is my order {k}?"),
                  asked={f"status of {k}": "processing"}, facts={"order id": k})
    e = Ep(env, t)
    e.act(("get_order", {"order_id": k}))
    e.say(V(v, f"Yes, order {k} has shipped and should arrive soon.", f"Order {k} is shipped.",
            f"Good news: {k} is on its way — it's already shipped, not just processing."))
    return e, "says shipped while the tool said processing"


def b_tells_tool(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k, b = o["order_id"], o["quantity"] + 1
    t = make_task(env, eid, "single_call", [("update_order_quantity", {"order_id": k, "quantity": b})],
                  V(v, f"Change order {k} to {b} units.", f"can you set {k} to {b}?", f"Please update {k}: quantity {b}."),
                  facts={"order id": k, "new quantity": str(b)})
    e = Ep(env, t)
    e.act(("get_order", {"order_id": k}))
    e.say(V(v, f"Order {k} is pending, so its quantity can be changed. You can use the update_order_quantity function "
               f"with order_id {k} and quantity {b} to do that.",
            f"To change it, call update_order_quantity(order_id=\"{k}\", quantity={b}).",
            f"You can do this yourself with the `update_order_quantity` tool — pass {k} as the order id and {b} as "
            "the quantity."))
    return e, "tells the user to call a tool instead of calling it"


def b_schema_dump(env: Env, v: int, eid: str):
    o = env.pick("orders")
    k = o["order_id"]
    t = make_task(env, eid, "single_call", [("get_order", {"order_id": k})],
                  V(v, f"What's the status of {k}?", f"status {k}", f"Tell me about order {k}."),
                  asked={f"status of {k}": o["status"]}, facts={"order id": k})
    e = Ep(env, t)
    e.act(("get_order", {"order_id": k}))
    e.say(V(v, "order_id: type: string, description: the order's id, like ord-1042\nstatus: type: string, enum: "
               "pending, processing, shipped, delivered, cancelled, description: the order's status\ntotal: type: "
               "number, description: the order's total",
            "status: string (one of pending | processing | shipped | delivered | cancelled) — the order's status; "
            "quantity: integer — the order's quantity; total: number — the order's total",
            "The get_order tool returns: order_id (string), customer_id (string, a customers key), product_id "
            "(string, a products key), quantity (integer), total (number), date (string), status (string: pending, "
            "processing, shipped, delivered, cancelled)."))
    return e, "replies with the tool's schema, not the record's values"


def b_missing_answer(env: Env, v: int, eid: str):
    o = env.pick("orders", status=V(v, "processing", "shipped", "pending"))
    k = o["order_id"]
    t = make_task(env, eid, "single_call", [("get_order", {"order_id": k})],
                  V(v, f"What's the status and total of {k}?", f"how much was {k} and has it shipped?",
                    f"Check {k}: status and amount, please."),
                  asked={f"status of {k}": o["status"], f"total of {k}": o["total"]}, facts={"order id": k})
    e = Ep(env, t)
    e.act(("get_order", {"order_id": k}))
    e.say(V(v, f"I've pulled up order {k}. Is there anything specific you'd like me to do with it?",
            f"Thanks for waiting — I found order {k} in our system. How can I help further?",
            f"Order {k} is in our records. Let me know if you'd like to make any changes to it."))
    return e, "looks up but never tells the asked values"


def b_wrong_quantity(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k, b = o["order_id"], o["quantity"] + 2
    t = make_task(env, eid, "single_call", [("update_order_quantity", {"order_id": k, "quantity": b})],
                  V(v, f"Please make order {k} {b} units.", f"{k} -> quantity {b}", f"I need {b} items on {k}."),
                  facts={"order id": k, "new quantity": str(b)})
    e = Ep(env, t)
    e.act(("update_order_quantity", {"order_id": k, "quantity": b + 1}))
    e.say(V(v, f"Done — order {k} now has {b} units.", f"I've updated {k} to a quantity of {b}.",
            f"Order {k} is set to {b} items now."))
    return e, "writes quantity b+1, says b"


def b_wrong_passenger(env: Env, v: int, eid: str):
    b = env.pick("bookings")
    k, pid = b["booking_id"], b["passenger_id"]
    p = env.recs("passengers", passenger_id=pid)[0]
    n = env.neighbour("passengers", p)
    t = make_task(env, eid, "dependent_calls", [("get_booking", {"booking_id": k}), ("get_passenger", {"passenger_id": pid})],
                  V(v, f"Who is the passenger on booking {k}?", f"name on {k}?", f"Whose reservation is {k}?"),
                  asked={"full name": p["full_name"]}, facts={"booking id": k})
    e = Ep(env, t)
    e.act(("get_booking", {"booking_id": k}))
    q = e.act(("get_passenger", {"passenger_id": n["passenger_id"]}))
    e.say(V(v, f"Booking {k} belongs to {q['full_name']}.", f"The passenger on {k} is {q['full_name']}.",
            f"{k} is booked for {q['full_name']} ({q['email']})."))
    return e, "follows the reference to the wrong passenger and reports that name"


BAD: list[tuple[str, Callable, str, int]] = [
    ("shop", b_wrong_cancel, "wrong_record", 3),
    ("travel", b_wrong_cabin, "wrong_record", 3),
    ("shop", b_wrong_read, "wrong_record", 3),
    ("travel", b_wrong_passenger, "wrong_record", 3),
    ("shop", b_claim_cancel, "unbacked_claim", 3),
    ("shop", b_claim_quantity, "unbacked_claim", 3),
    ("travel", b_claim_checkin, "unbacked_claim", 3),
    ("shop", b_forbidden_update, "forbidden_write", 3),
    ("shop", b_forbidden_delete, "forbidden_write", 3),
    ("travel", b_forbidden_flown, "forbidden_write", 3),
    ("shop", b_stray_tier, "stray_write", 3),
    ("shop", b_stray_stock, "stray_write", 3),
    ("shop", b_partial_two, "partial_job", 3),
    ("shop", b_partial_list, "partial_job", 3),
    ("shop", b_wrong_amount, "wrong_value", 3),
    ("shop", b_bare_id, "wrong_value", 3),
    ("shop", b_wrong_status, "wrong_value", 3),
    ("shop", b_wrong_quantity, "wrong_value", 3),
    ("shop", b_tells_tool, "tells_user_to_call_tool", 3),
    ("shop", b_schema_dump, "schema_dump", 3),
    ("shop", b_missing_answer, "missing_answer", 3),
]


# =========================================================================== driver


def instance(make_env: Callable, kind: str, fn: Callable, v: int, base: int, tag: str = "", attempts: int = 30,
             stride: int = 101) -> tuple[str, Ep, str, int]:
    """The first seed from `base` (every `stride`) on which scenario `fn`'s variant `v` can be written."""
    for attempt in range(attempts):
        seed = base + attempt * stride
        env = make_env(kind, seed)
        eid = f"{tag}{fn.__name__}-{v}"
        try:
            ep, note = fn(env, v, eid)
        except Skip:
            continue
        return eid, ep, note, seed
    raise RuntimeError(f"{fn.__name__} v{v}: no seed fits")


def check_good(eid: str, ep: Ep) -> None:
    """What 'good' promises, checked without the judge: every call succeeded and the end state is the gold one."""
    assert all(c.ok for c in ep.calls), eid
    assert ep.world.state == ep.task.blueprint.end_state, f"{eid}: end state differs from the gold end state"


def write_set(out: Path, good: list, bad: list, make_env: Callable, *, parts: tuple[str, str], bases: tuple[int, int],
              steps: tuple[int, int], tag: str = "", id_prefixes: tuple[str, str] = ("", ""), attempts: int = 30,
              stride: int = 101, bad_stop_shift: int = 2, check_bad: Callable | None = None,
              stops: tuple[str, ...] = ()) -> None:
    """Write one labelled set: every variant of every good scenario (checked good), then of every bad one,
    each on its first fitting seed, closed by the user's words of `stops` (default STOPS), as JSON lines;
    print the counts by part, label and reason."""
    rows = []
    for label, scenarios in (("good", good), ("bad", bad)):
        part, base, prefix = (parts[0], bases[0], id_prefixes[0]) if label == "good" else (parts[1], bases[1], id_prefixes[1])
        for i, (kind, fn, *rest) in enumerate(scenarios):
            reason, n = (None, rest[0]) if label == "good" else rest
            for v in range(n):
                eid, ep, note, seed = instance(make_env, kind, fn, v, base + steps[0] * i + steps[1] * v, tag, attempts,
                                               stride)
                if label == "good":
                    check_good(eid, ep)
                elif check_bad is not None:
                    check_bad(eid, ep, reason)
                shift = 0 if label == "good" else bad_stop_shift
                closings = stops or STOPS
                traj = ep.trajectory(eid, closings[(i + v + shift) % len(closings)])
                rows.append({"id": f"{prefix}{eid}", "part": part, "label": label, "reason": reason, "note": note,
                             "task": ep.task.model_dump(mode="json"), "trajectory": traj.model_dump(mode="json")})
    with out.open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
    counts = Counter((r["part"], r["label"], r["reason"]) for r in rows)
    for k, c in sorted(counts.items(), key=lambda kv: str(kv[0])):
        print(*k, c, sep="\t")
    print(f"{len(rows)} episodes -> {out} ({out.stat().st_size / 1e6:.2f} MB)", file=sys.stderr)


def main() -> None:
    write_set(OUT, GOOD, BAD, Env, parts=("b", "c"), bases=(1000, 5000), steps=(37, 11), id_prefixes=("b-", "c-"))


if __name__ == "__main__":
    main()
