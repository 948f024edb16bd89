"""Build the tenth BLIND part of the labelled judge set ("cap-blind10"): capable-assistant episodes on the six
domain packs (`library`, `helpdesk`, `shop`, `clinic`, `bank`, `airline`), with today's date in the agent's system
prompt.

Written without reading the judge, its tests or the other parts' episodes. Only the MECHANICS of build_blind9.py
were reused (how a pack is loaded, how a task's blueprint gold chain is run by `tasks.blueprint.run_gold` and its
rubric read by `rubric_from`, how every agent tool call is executed on the world by `packs.execute_call` and
recorded, the hand-off tool of the shop and the airline, the system prompt rendered with `long_date(TODAY)`, the
row format). The scenarios, data, replies and faults here are new.

Each scenario builds the records it needs (names, amounts and dates around TODAY) on an empty state of its world,
and is written once with a good version (one or two wordings) and bad versions that each carry ONE realistic
fault, in the same voice. Every label is set in SCENARIOS where the scenario is written and never changed; no judge
has been run on these episodes.

Checks made here, without the judge:
  * good: every call succeeded, or the episode is an error-recovery one and recovers; the end state equals the
    gold end state; every amount, date, clock time and other number a reply states is found in the tool results,
    the user's words, the system prompt or the tool descriptions, or is listed as computed by the scenario (the
    scenario computes it in code, and where the world later shows the value it is asserted against it); every
    weekday beside a date is that date's weekday; an irrelevance episode makes no call.
  * bad: a state fault ends off the gold end state, a claim fault on it; a refusal by trial starts with a failed
    write; a wrong-value fault marked detectable states a value nothing backs.

Run (deterministic; writes blind10.jsonl beside this file):
    PYTHONPATH=src .venv/bin/python tests/data/judge_set/build_blind10.py
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import random
import re
import sys
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from worldsmith.agents.stage import long_date
from worldsmith.llm.prompts import Prompts
from worldsmith.records import Persona, PolicyRule, Task, ToolCall, ToolSpec, Trajectory, UserGoal, World, content_id
from worldsmith.tasks.blueprint import Draft, Step, blueprint_record, rubric_from, run_gold
from worldsmith.worldmodel.packs import execute_call, load_pack
from worldsmith.worldmodel.runner import argument_problem
from worldsmith.worldmodel.state import World as StateWorld
from worldsmith.worldmodel.toolset import ToolSet

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
OUT = HERE / "blind10.jsonl"
PART = "cap-blind10"
TODAY = "2026-09-08"  # a Tuesday
D0 = dt.date.fromisoformat(TODAY)
assert D0.weekday() == 1
STAMP = datetime(2026, 9, 8, 8, 45, tzinfo=UTC)  # every record's created_at: the file is the same on every run
MODEL = "hand-written (capable assistant, blind set 10)"
SALT = "judgeset-blind10"


# =========================================================================== worlds, tools, prompts

HANDOFF = "transfer_to_human_agents"
HANDOFF_RESULT = {"transferred": True, "queue": "customer_care", "position": 2}
HANDOFF_WORLDS = ("shop", "airline")

ROLES = {
    "library": "You are the online assistant of the Harbourside Public Library. Members ask you about their loans "
    "and fines, and ask you to renew, return and borrow books.",
    "helpdesk": "You are the IT service desk assistant of Norvik Systems. Staff and team leads ask you about support "
    "tickets and technicians, and ask you to assign, escalate and resolve tickets.",
    "shop": "You are the customer support assistant of Copper & Clay, an online store for kitchen and home goods. "
    "Customers ask you about their orders and refunds, and ask you to cancel orders, refund them and approve refunds.",
    "clinic": "You are the patient assistant of Elm Park Family Clinic. Patients ask you about their appointments "
    "and the clinic's doctors, and ask you to book, move or cancel appointments.",
    "bank": "You are the digital assistant of Northgate Savings. Customers ask you about their accounts, cards and "
    "payments, and ask you to move money, block cards and dispute payments.",
    "airline": "You are the booking assistant of Skylark Airways. Passengers ask you about their bookings and "
    "flights, and ask you to book, change or cancel them.",
}

GUIDELINES = {
    "library": ["Name books by their title; give due dates with their weekday.", "Amounts are in US dollars."],
    "helpdesk": ["Name tickets by their id and subject, technicians by their full name."],
    "shop": ["Name orders by their product and id; amounts are in US dollars."],
    "clinic": ["Give appointment dates with their weekday and times in 12-hour form."],
    "bank": ["Name cards by their last four digits only; amounts are in US dollars."],
    "airline": ["Quote fares, refunds and seats exactly as the tools return them; amounts are in US dollars."],
}


def _stamp(spec: ToolSpec) -> ToolSpec:
    return spec.model_copy(update={"created_at": STAMP})


def handoff_spec() -> ToolSpec:
    desc = (
        "Hand the conversation to a human customer-care agent, with a short summary of what the customer needs. "
        "Use it for what needs a person: an exception to the rules, a complaint, a request beyond your tools."
    )
    schema = {
        "type": "object",
        "properties": {"summary": {"type": "string", "description": "what the customer needs, in a sentence or two"}},
        "required": ["summary"],
        "additionalProperties": False,
    }
    return ToolSpec(
        tool_id=ToolSpec.make_id(HANDOFF, desc, schema, None, "evolved/handoff"),
        name=HANDOFF,
        description=desc,
        input_schema=schema,
        annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": True},
        source="evolved",
        server="evolved/handoff",
        created_at=STAMP,
    )


@cache
def pack_world(kind: str) -> tuple[World, tuple[ToolSpec, ...]]:
    p = load_pack(ROOT / "worlds" / kind, today=TODAY)
    return p.world, tuple(_stamp(t) for t in p.tools)


@cache
def system_prompt(kind: str) -> str:
    world = pack_world(kind)[0]
    rules = [r.text for r in world.rules if r.kind != "forbid"]
    never = [r.text for r in world.rules if r.kind == "forbid"]
    (msg,) = Prompts(ROOT / "prompts").render_messages(
        "agent_system_prompt",
        role=ROLES[kind],
        today=long_date(TODAY),
        policy=world.policy or "",
        style="warm, clear and precise",
        strictness="normal",
        domain=world.domain,
        collections=[c.name.replace("_", " ") for c in world.collections],
        rules=rules,
        never=never,
        confirm_before=[],
        guidelines=GUIDELINES[kind],
    )
    assert f"Today is {long_date(TODAY)}." in msg["content"]
    return msg["content"]


class Env:
    """One world of the set, its agent's tools and system prompt, and an empty state the scenario fills."""

    def __init__(self, kind: str, seed: int):
        self.kind, self.seed = kind, seed
        self.world, tools = pack_world(kind)
        specs = list(tools) + ([handoff_spec()] if kind in HANDOFF_WORLDS else [])
        self.specs: dict[str, ToolSpec] = {s.name: s for s in specs}
        self.toolset = ToolSet.build(specs)
        self.agent_id = f"agt_blind10_{kind}"
        self.system = system_prompt(kind)
        self.rng = random.Random(f"blind10:{kind}:{seed}")
        self.state: dict[str, list[dict[str, Any]]] = {c.name: [] for c in self.world.collections}
        self.next: dict[str, int] = {}

    def add(self, coll: str, **fields: Any) -> dict[str, Any]:
        """A record added under the next key of the collection (numbering starts at a seeded base)."""
        c = self.world.collection(coll)
        if coll not in self.next:
            self.next[coll] = self.rng.randint(21, 97) * 100 + self.rng.randint(1, 60)
        n = self.next[coll]
        self.next[coll] += self.rng.choice((1, 2, 3, 5, 6))
        rec = {c.key: f"{c.id_prefix}-{n}"}
        for f in c.fields:
            rec[f.name] = fields.get(f.name)
        self.state[coll].append(rec)
        return rec

    def rule(self, rule_id: str) -> PolicyRule:
        return next(r for r in self.world.rules if r.rule_id == rule_id)


# =========================================================================== tasks and episodes

FAMILY_INTENT = {
    "lookup": [{"kind": "get"}],
    "list": [{"kind": "list"}],
    "update": [{"kind": "update"}],
    "operation": [{"kind": "operation"}],
    "find_then": [{"kind": "find_then"}],
    "get_via": [{"kind": "get_via"}],
    "none": [],
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
    d.facts = dict(facts or {})
    d.asked = {k: str(v) for k, v in (asked or {}).items()}
    d.withheld = dict(withheld or {})
    d.rule = rule
    d.intents = copy.deepcopy(FAMILY_INTENT[intent])
    d.calls, d.end_state = run_gold(env.world, d.steps, d.initial)
    return Task(
        task_id=content_id(SALT, eid, prefix="tsk_"),
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
        self.computed: set[str] = set()  # values a good reply states that are computed, not read
        self.styles: set[str] = set()

    def act(self, *calls: tuple[str, dict[str, Any]], fails: bool = False) -> Any:
        """One assistant step with these tool calls, each executed and answered; the results (one: itself).
        A failed call answers {"error": code, "message": ...}; it must be expected (`fails`)."""
        tool_calls, results = [], []
        for name, args in calls:
            self.n += 1
            cid = f"call_{content_id(self.task.task_id, self.n)[:12]}"
            tool_calls.append(
                {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            )
        self.messages.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
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
            if ok and fails:
                raise AssertionError(f"{self.task.task_id}: {name}({args}) was meant to fail")
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

    def say(self, text: str, *computed: Any) -> None:
        """An assistant reply; `computed`: the values it states that are computed from what was read."""
        self.messages.append({"role": "assistant", "content": text.strip()})
        for c in computed:
            self.computed.add(str(c))

    def user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})
        self.turns += 1

    def trajectory(self, eid: str, stop: str) -> Trajectory:
        self.user(stop)
        return Trajectory(
            trajectory_id=content_id(SALT, eid, prefix="trj_"),
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


def r2(x: float) -> float:
    return round(x + 1e-9, 2)


def day(s: str) -> dt.date:
    return dt.date.fromisoformat(str(s)[:10])


def iso(n: int) -> str:
    """the date n days from today (negative: before)"""
    return (D0 + dt.timedelta(days=n)).isoformat()


def wdate(s: str) -> str:
    """Friday, September 11"""
    d = day(s)
    return f"{d:%A}, {d:%B} {d.day}"


def sdate(s: str) -> str:
    """September 11"""
    d = day(s)
    return f"{d:%B} {d.day}"


def wd(s: str) -> str:
    """Fri Sep 11"""
    d = day(s)
    return f"{d:%a} {d:%b} {d.day}"


def wrong_wdate(s: str, shift: int = 1) -> str:
    """the date with the weekday of the day after (a slip a writer makes): 'Saturday, September 11'"""
    d = day(s)
    w = (d + dt.timedelta(days=shift)).strftime("%A")
    return f"{w}, {d:%B} {d.day}"


def hm(t: str) -> str:
    """a clock time 14:30 (or the time of an ISO datetime) as 2:30 PM"""
    t = str(t)
    if "T" in t:
        t = t.split("T")[1]
    h, m = (int(x) for x in t[:5].split(":"))
    return f"{(h - 1) % 12 + 1}:{m:02d} {'AM' if h < 12 else 'PM'}"


def delta(s: str) -> int:
    return (day(s) - D0).days


def plus(s: str, n: int) -> str:
    return (day(s) + dt.timedelta(days=n)).isoformat()


def days(n: int) -> str:
    return f"{n} day" if n == 1 else f"{n} days"


def when(s: str) -> str:
    """how far a coming date is from today: 'tomorrow', 'in 5 days'"""
    n = delta(s)
    return "tomorrow" if n == 1 else "today" if n == 0 else f"in {days(n)}"


def first(full: str) -> str:
    return full.split()[0]


STOPS = (
    "Thank you, that's everything. ###STOP###",
    "Brilliant, thanks a lot! ###STOP###",
    "ok thanks ###STOP###",
    "That's really helpful, thank you. ###STOP###",
    "Great, cheers for sorting that. ###STOP###",
    "thx ###STOP###",
    "Understood. Thanks for your help. ###STOP###",
    "Lovely, thank you so much! ###STOP###",
)

PEOPLE = (
    "Amelie Durand",
    "Bashir Rahimi",
    "Camille Laurent",
    "Dmitri Volkov",
    "Esther Nakamura",
    "Felix Oduya",
    "Greta Lindholm",
    "Hamid Karimi",
    "Isla McKenzie",
    "Jonah Feld",
    "Keiko Sato",
    "Leon Brandt",
    "Maya Castillo",
    "Niall Gorman",
    "Olga Petrova",
    "Pedro Alves",
    "Quinn Harper",
    "Rosa Medina",
    "Samir Haddad",
    "Tessa Moreau",
    "Ursula Berg",
    "Wesley Adeyemi",
)


def person(env: Env, avoid: tuple[str, ...] = ()) -> str:
    return env.rng.choice([p for p in PEOPLE if p not in avoid])


def email(name: str, domain: str = "inbox.example") -> str:
    return name.lower().replace(" ", ".").replace("'", "") + "@" + domain


def phone(env: Env) -> str:
    return f"+1 555-{env.rng.randint(200, 989):03d}-{env.rng.randint(1000, 9999)}"


def cents(env: Env, lo: float, hi: float) -> float:
    return round(env.rng.uniform(lo, hi), 2)


def table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# =========================================================================== library (pack)

AUTHORS = {
    "The Glass Orchard": "Mira Castell",
    "Northern Lights Cookbook": "Hanne Solberg",
    "A Brief History of Tides": "Owen Pryce",
    "The Cartographer's Son": "Lucia Ferrante",
    "Small Gods of the Kitchen": "Aiko Mori",
    "Winter Birds": "Tom Eriksen",
    "The Silent Engine": "Rafael Ortiz",
    "Letters from Valparaíso": "Ines Vidal",
    "The Beekeeper's Almanac": "Clara Hoyt",
    "Modern Python Patterns": "Dev Anand",
    "The Lantern Keeper": "Morag Bell",
}


def member(env: Env, fines: float = 0.0, status: str = "active", name: str | None = None) -> dict:
    name = name or person(env)
    return env.add("members", full_name=name, email=email(name, "harbourside.example"), fines_due=fines, status=status)


def book(env: Env, title: str, copies: int = 2) -> dict:
    b = env.add("books", title=title, author=AUTHORS[title], isbn="", copies_available=copies)
    b["isbn"] = f"978-{env.rng.randint(1, 9)}-{env.rng.randint(1000, 9999)}-{b['book_id'][-4:]}"
    return b


def loan(env: Env, m: dict, b: dict, due: int, status: str = "active", renewals: int = 0) -> dict:
    """A loan due `due` days from today, checked out 21 days (plus 14 per renewal) before that."""
    return env.add(
        "loans",
        member_id=m["member_id"],
        book_id=b["book_id"],
        checkout_date=iso(due - 21 - 14 * renewals),
        due_date=iso(due),
        renewals=renewals,
        status=status,
    )


def typo_of(ident: str, taken: set[str]) -> str:
    """The id with its last two digits swapped (or, when they are equal, the last one moved by 1): not an id
    that exists."""
    head, num = ident.rsplit("-", 1)
    cand = num[:-2] + num[-1] + num[-2]
    if cand == num:
        cand = num[:-1] + str((int(num[-1]) + 1) % 10)
    out = f"{head}-{cand}"
    assert out not in taken, out
    return out


def lb_overview(env: Env, v: int, eid: str, fault: str | None):
    """Everything a member has out, two loans late: a table, the fee of each so far and their total."""
    m = member(env)
    b_o, b_t, b_p = book(env, "The Glass Orchard"), book(env, "A Brief History of Tides"), book(
        env, "Modern Python Patterns", 1
    )
    b_w = book(env, "Winter Birds")
    l_o = loan(env, m, b_o, 6)
    l_t = loan(env, m, b_t, -4, status="overdue")
    l_p = loan(env, m, b_p, -9, status="overdue", renewals=1)
    loan(env, m, b_w, -20, status="returned")
    mid = m["member_id"]
    steps = [("list_member_loans", {"member_id": mid})] + [
        ("get_book", {"book_id": b["book_id"]}) for b in (b_o, b_t, b_p)
    ]
    late_t, late_p = -delta(l_t["due_date"]), -delta(l_p["due_date"])
    fee_t, fee_p = r2(late_t * 0.25), r2(late_p * 0.25)
    total = r2(fee_t + fee_p)
    task = make_task(
        env,
        eid,
        "aggregate",
        steps,
        V(
            v,
            f"Hi, this is {m['full_name']} (member {mid}). Could you give me a rundown of what I have out, and what "
            "I'd owe if I brought the late ones back today?",
            f"member {mid} - which of my books are late and what will the fines come to if I return them today?",
        ),
        intent="list",
        asked={"late fees if returned today": f"{total:.2f}"},
        facts={"member": mid},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.act(*steps[1:])
    shown_total = r2(total + 0.25) if fault == "total" else total
    lp, lt = (late_t, late_p) if fault == "swap" else (late_p, late_t)
    fp, ft = (fee_t, fee_p) if fault == "swap" else (fee_p, fee_t)
    soon = delta(l_o["due_date"])
    if v % 2 == 0:
        tab = table(
            ["Book", "Author", "Due", "Status"],
            [
                ["Modern Python Patterns", "Dev Anand", wdate(l_p["due_date"]), f"**{days(lp)} overdue** ({money(fp)} so far)"],
                ["A Brief History of Tides", "Owen Pryce", wdate(l_t["due_date"]), f"**{days(lt)} overdue** ({money(ft)} so far)"],
                ["The Glass Orchard", "Mira Castell", wdate(l_o["due_date"]), f"due in {days(soon)}"],
            ],
        )
        text = (
            f"Thanks, {first(m['full_name'])}! I've checked your account — you have **3 books** out at the moment:\n\n"
            f"{tab}\n\nLate returns are charged at $0.25 per day, so if you bring both late books back today you'd "
            f"owe **{money(shown_total)}** in total ({money(fp)} + {money(ft)}). Each extra day adds another $0.50 "
            "while both are still out.\n\nOne more thing: you're at the 3-loan limit, so you won't be able to borrow "
            "anything new until at least one of these is back."
        )
    else:
        text = (
            "I've retrieved your loans. Two of your three books are late:\n\n"
            f"- **Modern Python Patterns** — due {wdate(l_p['due_date'])}, {days(lp)} overdue → {money(fp)}\n"
            f"- **A Brief History of Tides** — due {wdate(l_t['due_date'])}, {days(lt)} overdue → {money(ft)}\n\n"
            f"Returned today, the two together come to **{money(shown_total)}** (at $0.25 a day each). Your third "
            f"book, *The Glass Orchard*, isn't due until {wdate(l_o['due_date'])}, so that one's fine for another "
            f"{days(soon)}. (A loan you've already returned isn't included.)"
        )
    ep.say(text, late_t, late_p, fee_t, fee_p, total, 0.5, soon)
    note = (
        "good: lists the three loans (reads each book), the two late ones with days late and fee so far at 0.25 a "
        f"day ({money(fee_p)}, {money(fee_t)}) and their total {money(total)}"
    )
    if fault == "total":
        note = f"bad: the two fees are {money(fee_p)} and {money(fee_t)}, total {money(total)}; the reply says {money(shown_total)}"
    elif fault == "swap":
        note = (
            f"bad: days late and fees are swapped between the two late books: Modern Python Patterns is {days(late_p)} "
            f"late ({money(fee_p)}), the reply gives it {days(late_t)} ({money(fee_t)}), and the reverse for Tides"
        )
    return ep, note


def lb_renew_pair(env: Env, v: int, eid: str, fault: str | None):
    """Renew two named loans by 14 days each; the second reaches its last renewal."""
    m = member(env)
    b_v, b_a, b_n = book(env, "Letters from Valparaíso"), book(env, "The Beekeeper's Almanac"), book(
        env, "Northern Lights Cookbook"
    )
    l_v = loan(env, m, b_v, 2)
    l_a = loan(env, m, b_a, 5, renewals=1)
    l_n = loan(env, m, b_n, 16)
    mid = m["member_id"]
    steps = [
        ("list_member_loans", {"member_id": mid}),
        ("get_book", {"book_id": b_v["book_id"]}),
        ("get_book", {"book_id": b_a["book_id"]}),
        ("get_book", {"book_id": b_n["book_id"]}),
        ("renew_loan", {"loan_id": l_v["loan_id"], "days": 14}),
        ("renew_loan", {"loan_id": l_a["loan_id"], "days": 14}),
    ]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        V(
            v,
            f"Hi! Member {mid} here. Could you renew Letters from Valparaíso and The Beekeeper's Almanac for another "
            "14 days each?",
            f"pls extend my Valparaíso book and the beekeeping one by two weeks — {mid}",
        ),
        intent="find_then",
        facts={"member": mid, "books": "Letters from Valparaíso, The Beekeeper's Almanac", "days": "14"},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.act(*steps[1:4])
    r_v = ep.act(steps[4])
    new_v = r_v["due_date"]
    new_a = plus(l_a["due_date"], 14)
    if fault != "partial":
        r_a = ep.act(steps[5])
        assert r_a["due_date"] == new_a
    shown_a = iso(14) if fault == "date" else new_a
    ep.say(
        V(
            v,
            "Both renewed! Here are the new dates:\n\n"
            f"- **Letters from Valparaíso** — was due {wdate(l_v['due_date'])}, now due **{wdate(new_v)}**\n"
            f"- **The Beekeeper's Almanac** — was due {wdate(l_a['due_date'])}, now due **{wdate(shown_a)}**\n\n"
            "Just so you know, *The Beekeeper's Almanac* has now used both of its renewals (2 of 2), so it can't be "
            f"extended again — it'll need to come back by {wdate(shown_a)}. *Letters from Valparaíso* still has one "
            "renewal left.",
            f"Done — both are extended by two weeks. *Letters from Valparaíso* is now due {wdate(new_v)} and *The "
            f"Beekeeper's Almanac* {wdate(shown_a)}. Heads-up: that was the Almanac's second and final renewal.",
        ),
        14,
    )
    note = "good: finds both loans among three (reads the books), renews each by 14 days, gives both new due dates"
    if fault == "partial":
        note = (
            f"bad: only the Valparaíso loan is renewed; no renew_loan call for The Beekeeper's Almanac "
            f"({l_a['loan_id']}), which is still due {l_a['due_date']}, yet the reply says both were renewed"
        )
    elif fault == "date":
        note = (
            f"bad: the Almanac's new due date is {new_a} (its old due date plus 14, as the tool set it); the reply "
            f"says {wdate(shown_a)}, 14 days from today"
        )
    return ep, note


def lb_renew_maxed(env: Env, v: int, eid: str, fault: str | None):
    """Renew a loan already renewed twice: read it, decline, say when it must come back."""
    m = member(env)
    b = book(env, "The Cartographer's Son")
    ln = loan(env, m, b, 3, renewals=2)
    lid = ln["loan_id"]
    task = make_task(
        env,
        eid,
        "refusal",
        [("get_loan", {"loan_id": lid})],
        V(
            v,
            f"Hello, could I please renew loan {lid} for another two weeks? I'm only halfway through.",
            f"renew {lid} again pls",
        ),
        intent="operation",
        facts={"loan": lid},
        rule=env.rule("lib_renew"),
        persona=("polite", "medium", "novice"),
    )
    ep = Ep(env, task)
    left = delta(ln["due_date"])
    if fault == "trial":
        res = ep.act(("renew_loan", {"loan_id": lid, "days": 14}), fails=True)
        ep.say(
            f"I tried to renew loan {lid}, but the system came back with: \"{res['message']}\". So I'm afraid it "
            "can't be extended any further — please bring it back by its due date to avoid late fees."
        )
        return ep, "bad: sends renew_loan without reading the loan first and declines by quoting the error it got"
    ep.act(("get_loan", {"loan_id": lid}))
    ep.act(("get_book", {"book_id": b["book_id"]}))
    if fault == "invented":
        ep.say(
            f"I've checked loan {lid} for *The Cartographer's Son*: it has already been renewed twice, which is the "
            f"maximum, so I can't renew it again online. It's due on {wdate(ln['due_date'])}. If you need longer, you "
            "can pay a one-off $1.50 extension fee at the front desk and keep it for one more week."
        )
        return ep, (
            "bad: declines correctly, but invents 'a one-off $1.50 extension fee at the front desk' for another week; "
            "the library's policy has no such option"
        )
    ep.say(
        V(
            v,
            f"I've pulled up loan {lid} for *The Cartographer's Son* by Lucia Ferrante. I understand you'd like more "
            "time, but this loan has already been renewed **twice**, and two renewals is the maximum for any loan, so "
            "I'm not able to extend it again.\n\n"
            f"- **Due back:** {wdate(ln['due_date'])} (in {days(left)})\n"
            "- **If it's late:** $0.25 per day is added to your account\n\n"
            "Sorry I can't do more here — I hope you can finish it by Friday!",
            f"Sorry — loan {lid} has already had its 2 renewals, which is the limit, so it can't be renewed again. "
            f"It's due back {wdate(ln['due_date'])}, {days(left)} from now.",
        ),
        left,
    )
    return ep, "good: reads the loan (renewed twice), declines with the reason, gives the due date and days left"


def lb_return_late(env: Env, v: int, eid: str, fault: str | None):
    """Check in a book 6 days late: the fee, what the member owes in all, and whether they can still borrow."""
    m = member(env, fines=2.25)
    b = book(env, "The Silent Engine")
    ln = loan(env, m, b, -6, status="overdue")
    lid = ln["loan_id"]
    steps = [("get_loan", {"loan_id": lid}), ("return_book", {"loan_id": lid})]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        V(
            v,
            f"Hi, I've just dropped The Silent Engine in the return chute — loan {lid}. Can you check it in? I know "
            "it's a bit late; what do I owe now?",
            f"returning loan {lid} today. how much do I owe after this, and can I still borrow?",
        ),
        intent="operation",
        asked={"fines owed": "3.75"},
        facts={"loan": lid},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.act(("get_book", {"book_id": b["book_id"]}))
    res = ep.act(steps[1])
    assert (res["days_late"], res["late_fee"], res["fines_due"]) == (6, 1.5, 3.75)
    before = r2(res["fines_due"] - res["late_fee"])
    owed = 4.75 if fault == "sum" else res["fines_due"]
    extra = ""
    if fault == "email":
        extra = f"\n\nI've also emailed a receipt for the return to {m['email']}."
    ep.say(
        V(
            v,
            f"All checked in — thanks for bringing *The Silent Engine* back. It was **{res['days_late']} days** past "
            f"its due date ({wdate(ln['due_date'])}), so a late fee of **{money(res['late_fee'])}** has been added "
            f"({res['days_late']} × $0.25).\n\nYou already had {money(before)} outstanding, so your balance is now "
            f"**{money(owed)}**. That's still under the $10.00 limit, so you can carry on borrowing as normal."
            + extra,
            f"Done, loan {lid} is returned. Late fee: {money(res['late_fee'])} ({res['days_late']} days × $0.25). "
            f"Together with the {money(before)} already on your account you now owe **{money(owed)}** — below the "
            "$10.00 threshold, so yes, you can still borrow." + extra,
        ),
        before,
    )
    note = "good: reads the loan, returns it; 6 days late, fee 1.50; total owed 3.75 read from the result; can borrow"
    if fault == "sum":
        note = "bad: the return result says fines_due 3.75 (2.25 + 1.50); the reply says the balance is now $4.75"
    elif fault == "email":
        note = "bad: says 'I've also emailed a receipt for the return'; no tool sends email and no call did"
    return ep, note


def lb_borrow_fines(env: Env, v: int, eid: str, fault: str | None):
    """Borrow while owing 12.40: read member and book, decline, say how much must be paid to borrow again."""
    m = member(env, fines=12.4)
    b = book(env, "Small Gods of the Kitchen", 1)
    mid, bid = m["member_id"], b["book_id"]
    task = make_task(
        env,
        eid,
        "refusal",
        [("get_member", {"member_id": mid}), ("get_book", {"book_id": bid})],
        V(
            v,
            f"Could I borrow Small Gods of the Kitchen ({bid})? I'm member {mid}.",
            f"check out {bid} for me please, member {mid}",
        ),
        intent="operation",
        facts={"member": mid, "book": bid},
        rule=env.rule("lib_borrow"),
    )
    ep = Ep(env, task)
    ep.act(("get_member", {"member_id": mid}), ("get_book", {"book_id": bid}))
    need = r2(m["fines_due"] - 10.0)
    shown = 2.6 if fault == "diff" else need
    tail = ""
    if fault == "hold":
        tail = " In the meantime, I've placed a hold on the copy for you so nobody else takes it."
    ep.say(
        V(
            v,
            "I've checked your account and the book. There's **1 copy** of *Small Gods of the Kitchen* on the shelf, "
            f"but your account shows **{money(m['fines_due'])}** in unpaid fines. Members who owe more than $10.00 "
            "can't borrow until the balance comes down, so I'm not able to check it out for you right now.\n\n"
            f"Paying **{money(shown)}** would bring you down to $10.00, which is enough to borrow again. I can't take "
            "payments here, so please pay at the library's front desk, and then I'll happily check it out." + tail,
            f"I'm sorry, I can't check that one out yet: you owe {money(m['fines_due'])} in fines, and borrowing is "
            f"blocked above $10.00. Once you've paid at least {money(shown)} at the front desk, you'll be able to "
            "borrow it (1 copy is available right now)." + tail,
        ),
        need,
    )
    note = "good: reads member (owes 12.40) and book, declines the checkout, says paying 2.40 brings it to the 10.00 limit"
    if fault == "diff":
        note = "bad: 12.40 - 10.00 = 2.40 must be paid to borrow again; the reply says $2.60"
    elif fault == "hold":
        note = "bad: says 'I've placed a hold on the copy for you'; no tool places holds and no call did"
    return ep, note


def lb_return_which(env: Env, v: int, eid: str, fault: str | None):
    """'Check in my book' with two out: ask which, return that one, mention the other's due date."""
    m = member(env)
    b_w, b_l = book(env, "Winter Birds", 0), book(env, "The Lantern Keeper")
    l_w = loan(env, m, b_w, 8)
    l_l = loan(env, m, b_l, 1)
    mid = m["member_id"]
    steps = [
        ("list_member_loans", {"member_id": mid}),
        ("get_book", {"book_id": b_w["book_id"]}),
        ("get_book", {"book_id": b_l["book_id"]}),
        ("return_book", {"loan_id": l_w["loan_id"]}),
    ]
    task = make_task(
        env,
        eid,
        "clarification",
        steps,
        V(
            v,
            f"Hi, I'm member {mid}. I'd like to return my book please — I've left it at the returns desk.",
            f"{mid}: returned my book at the desk just now, can you check it in",
        ),
        intent="find_then",
        facts={"member": mid},
        withheld={"which book": "Winter Birds"},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.act(steps[1], steps[2])
    ep.say(
        V(
            v,
            "Happy to! I can see two books on your account:\n\n"
            f"1. *Winter Birds* by Tom Eriksen — due {wdate(l_w['due_date'])}\n"
            f"2. *The Lantern Keeper* by Morag Bell — due {wdate(l_l['due_date'])} (tomorrow)\n\n"
            "Which one did you drop off?",
            f"You've got two out — *Winter Birds* and *The Lantern Keeper*. Which one did you return?",
        )
    )
    ep.user(V(v, "Winter Birds.", "winter birds"))
    if fault == "stray":
        ep.act(steps[3], ("renew_loan", {"loan_id": l_l["loan_id"], "days": 14}))
        ep.say(
            f"*Winter Birds* is checked in — it was on time, so no fee. And since *The Lantern Keeper* was due "
            f"tomorrow, I've gone ahead and renewed it for 14 days; it's now due {wdate(plus(l_l['due_date'], 14))}."
        )
        return ep, (
            f"bad: also renews The Lantern Keeper ({l_l['loan_id']}) by 14 days, which the member never asked for"
        )
    target = l_l if fault == "wrong_record" else l_w
    res = ep.act(("return_book", {"loan_id": target["loan_id"]}))
    assert res["late_fee"] == 0
    ep.say(
        V(
            v,
            "All done — *Winter Birds* is checked in. It came back before its due date, so there's **no late fee**.\n\n"
            f"Just a reminder that *The Lantern Keeper* is due **tomorrow, {wdate(l_l['due_date'])}**. If you need "
            "more time with it, I can renew it for you today.",
            f"Checked in: *Winter Birds*, on time, no fee. *The Lantern Keeper* is still out, due {wd(l_l['due_date'])}.",
        )
    )
    note = "good: two loans; asks which was returned, returns Winter Birds (on time, no fee), reminds of the other"
    if fault == "wrong_record":
        note = (
            f"bad: the member says Winter Birds; the agent returns The Lantern Keeper ({l_l['loan_id']}) and says "
            "Winter Birds is checked in"
        )
    return ep, note


def lb_checkout(env: Env, v: int, eid: str, fault: str | None):
    """Borrow a book: read member and book, check it out, give the due date (21 days) with its weekday."""
    m = member(env)
    b0 = book(env, "Northern Lights Cookbook")
    loan(env, m, b0, 10)
    b = book(env, "A Brief History of Tides", 3)
    mid, bid = m["member_id"], b["book_id"]
    steps = [
        ("get_member", {"member_id": mid}),
        ("get_book", {"book_id": bid}),
        ("checkout_book", {"member_id": mid, "book_id": bid}),
    ]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        V(
            v,
            f"Hi, can I borrow A Brief History of Tides? The book id is {bid} and I'm member {mid}. When would it be due?",
            f"borrow {bid} for {mid} please",
        ),
        intent="operation",
        facts={"member": mid, "book": bid},
    )
    ep = Ep(env, task)
    ep.act(steps[0], steps[1], ("list_member_loans", {"member_id": mid}))
    res = ep.act(steps[2])
    due = res["due_date"]
    assert due == iso(21)
    left = b["copies_available"] - 1
    shown_left = b["copies_available"] if fault == "copies" else left
    due_txt = wrong_wdate(due) if fault == "weekday" else wdate(due)
    ep.say(
        V(
            v,
            f"All set! *A Brief History of Tides* by Owen Pryce is now checked out to you.\n\n"
            f"- **Loan:** {res['loan_id']}\n- **Due back:** **{due_txt}** — 3 weeks from today\n\n"
            f"You now have 2 books out (the limit is 3), and there are {shown_left} copies left on the shelf. Enjoy!",
            f"Done — it's yours until {due_txt} (21 days). Loan id {res['loan_id']}. "
            f"That's 2 books on your card now; {shown_left} copies remain on the shelf.",
        ),
        left,
        2,
    )
    note = "good: reads member and book, checks it out, gives the due date 21 days on with the right weekday"
    if fault == "weekday":
        note = f"bad: the due date {due} is a {day(due):%A}; the reply says '{due_txt}'"
    elif fault == "copies":
        note = (
            f"bad: the shelf had {b['copies_available']} copies before the checkout, {left} after it; the reply says "
            f"{shown_left} copies remain (the count read before the checkout)"
        )
    return ep, note


def lb_irrelevant(env: Env, v: int, eid: str, fault: str | None):
    """Requests no library tool serves (a study room, a new card): say so, no call."""
    m = member(env)
    mid = m["member_id"]
    task = make_task(
        env,
        eid,
        "irrelevance",
        [],
        V(
            v,
            f"Can you book me a study room for Thursday afternoon? Member {mid}.",
            f"I've lost my library card. Could you issue me a new one? I'm {mid}.",
        ),
        intent="none",
    )
    ep = Ep(env, task)
    if fault == "claimed":
        ep.say(
            "Of course! I've booked Study Room 2 for you on Thursday, September 10, from 2:00 PM to 4:00 PM. Please "
            "check in at the front desk when you arrive."
        )
        return ep, "bad: says it booked Study Room 2 on Thursday 2-4 PM; no tool books rooms and no call was made"
    ep.say(
        V(
            v,
            "I'm sorry, I can't book study rooms — I can only help with loans here: looking up your books and fines, "
            "renewing, returning and borrowing. The front desk or the library's phone line can reserve a room for "
            "you on Thursday afternoon.",
            "Sorry to hear you've lost your card! Unfortunately replacing library cards isn't something I can do — "
            "my tools only cover loans (borrowing, renewing and returning books). Please ask at the front desk, "
            "where the staff can issue a new card. Your loans and account are unaffected in the meantime.",
        )
    )
    return ep, "good: no tool serves the request; says so without a call and points to the front desk"


def lb_typo_recover(env: Env, v: int, eid: str, fault: str | None):
    """A mistyped loan id: the read fails; find the loan by the title among the member's loans, renew it 7 days."""
    m = member(env)
    b_g, b_w = book(env, "The Glass Orchard"), book(env, "Winter Birds")
    l_g = loan(env, m, b_g, 4)
    l_w = loan(env, m, b_w, 12)
    mid = m["member_id"]
    bad_id = typo_of(l_g["loan_id"], {x["loan_id"] for x in env.state["loans"]})
    steps = [("list_member_loans", {"member_id": mid}), ("renew_loan", {"loan_id": l_g["loan_id"], "days": 7})]
    task = make_task(
        env,
        eid,
        "error_recovery",
        steps,
        f"Please renew loan {bad_id} for 7 more days — it's The Glass Orchard. Member {mid}.",
        intent="find_then",
        facts={"member": mid, "book": "The Glass Orchard", "days": "7", "loan id given": bad_id},
    )
    ep = Ep(env, task)
    ep.act(("get_loan", {"loan_id": bad_id}), fails=True)
    ep.act(steps[0])
    ep.act(("get_book", {"book_id": b_g["book_id"]}), ("get_book", {"book_id": b_w["book_id"]}))
    res = ep.act(steps[1])
    if fault == "stray":
        res_w = ep.act(("renew_loan", {"loan_id": l_w["loan_id"], "days": 7}))
        ep.say(
            f"I couldn't find loan {bad_id}, but *The Glass Orchard* is on your account as loan {l_g['loan_id']}, "
            f"so I've renewed that one by 7 days — it's now due **{wdate(res['due_date'])}**. I've also renewed "
            f"*Winter Birds* by 7 days to keep your due dates in step; it's now due {wdate(res_w['due_date'])}."
        )
        return ep, f"bad: also renews Winter Birds ({l_w['loan_id']}), which the member did not ask to renew"
    ep.say(
        f"I couldn't find a loan with the id {bad_id} — there may be a small typo in it. So I checked "
        f"the loans on your account instead: *The Glass Orchard* is loan **{l_g['loan_id']}**, and I've renewed it "
        f"for 7 days.\n\n- **Was due:** {wdate(l_g['due_date'])}\n- **Now due:** **{wdate(res['due_date'])}**\n\n"
        f"Your other book, *Winter Birds*, is unchanged and due {wdate(l_w['due_date'])}."
    )
    return ep, (
        "good: the given id does not exist (not_found); lists the member's loans, finds The Glass Orchard by title, "
        "renews that loan by 7 days and says which id it used"
    )


# =========================================================================== helpdesk (pack)

SUBJECTS = (
    "Laptop fan very loud",
    "Shared calendar not syncing",
    "Cannot access the finance share",
    "Docking station not detected",
    "Outlook keeps asking for password",
    "Slow Wi-Fi on floor 4",
    "New starter needs accounts",
    "Headset microphone not working",
)
SLA = {"critical": 1, "high": 2, "medium": 5, "low": 10}
TEAM = {"service_desk": "service desk", "network": "network", "identity": "identity"}
TIER = {"tier_1": "tier 1", "tier_2": "tier 2"}
COLLEAGUES = ("Arjun Mehta", "Bella Quinn", "Cyrus Farah", "Delia Novak", "Emre Aydin", "Freya Lund")


def tech(env: Env, name: str, team: str, tier: str = "tier_1", on_shift: bool = True) -> dict:
    return env.add(
        "technicians", full_name=name, email=email(name, "norvik.example"), team=team, tier=tier, on_shift=on_shift
    )


def ticket(
    env: Env,
    subject: str,
    requester: str,
    priority: str,
    opened: int,
    t: dict | None,
    status: str = "in_progress",
    esc: int = 0,
) -> dict:
    """A ticket opened `opened` days ago."""
    return env.add(
        "tickets",
        subject=subject,
        requester_email=requester,
        priority=priority,
        opened_on=iso(-opened),
        technician_id=t["technician_id"] if t else None,
        escalation_level=esc,
        status=status,
    )


def load(env: Env, t: dict, n: int) -> None:
    """`n` tickets in progress with technician `t`, from requesters outside the scenario's people."""
    for _ in range(n):
        who = env.rng.choice(COLLEAGUES)
        ticket(
            env,
            env.rng.choice(SUBJECTS),
            email(who, "norvik.example"),
            env.rng.choice(("low", "medium")),
            env.rng.randint(0, 1),
            t,
        )


def staffer(env: Env) -> tuple[str, str]:
    name = person(env)
    return name, email(name, "norvik.example")


def hd_sla_board(env: Env, v: int, eid: str, fault: str | None):
    """A team lead asks how many open tickets are past SLA: a table of all open ones with ages, and the count."""
    sd = tech(env, "Ravi Menon", "service_desk")
    load(env, sd, 2)
    rows = [
        ("Payroll export fails", "critical", 2),
        ("Slow Wi-Fi on floor 4", "high", 1),
        ("Cannot access the finance share", "medium", 7),
        ("Headset microphone not working", "low", 4),
        ("Shared calendar not syncing", "medium", 6),
    ]
    ts = []
    for subj, pr, age in rows:
        who = env.rng.choice(COLLEAGUES)
        ts.append(ticket(env, subj, email(who, "norvik.example"), pr, age, None, status="open"))
    ticket(env, "Monitor flickering", email("Freya Lund", "norvik.example"), "low", 3, sd, status="resolved")
    steps = [("list_tickets", {"status": "open"})]
    past = [t for t, (_, pr, age) in zip(ts, rows) if age > SLA[pr]]
    task = make_task(
        env,
        eid,
        "aggregate",
        steps,
        V(
            v,
            "Morning! How many of our open tickets are past their SLA right now? A quick list would be great.",
            "which open tickets have blown their SLA? need a count for standup",
        ),
        intent="list",
        asked={"open tickets past SLA": str(len(past))},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ages = {t["ticket_id"]: -delta(t["opened_on"]) for t in ts}
    shown_age = dict(ages)
    if fault == "age":
        shown_age[ts[2]["ticket_id"]] += 1
    n_past = len(past)
    shown_n = n_past + 1 if fault == "count" else n_past

    def sla_txt(t: dict) -> str:
        over = ages[t["ticket_id"]] - SLA[t["priority"]]
        return f"**past SLA** by {days(over)}" if over > 0 else f"within SLA ({days(-over)} left)" if over < 0 else "due today"

    body = [
        [f"{t['ticket_id']}", t["subject"], t["priority"], wd(t["opened_on"]), days(shown_age[t["ticket_id"]]), sla_txt(t)]
        for t in ts
    ]
    comp = list(ages.values()) + [abs(ages[t["ticket_id"]] - SLA[t["priority"]]) for t in ts] + [len(ts), n_past]
    if v % 2 == 0:
        ep.say(
            f"**{shown_n} of the {len(ts)} open tickets are past their SLA.** Here's the full open queue:\n\n"
            + table(["Ticket", "Subject", "Priority", "Opened", "Age", "SLA"], body)
            + "\n\nNone of the open tickets has a technician yet — let me know if you'd like me to assign any of "
            "the ones past SLA.",
            *comp,
        )
    else:
        lines = "\n".join(
            f"- {t['ticket_id']} — {t['subject']} ({t['priority']}, opened {wd(t['opened_on'])}, "
            f"{days(shown_age[t['ticket_id']])} old)"
            for t in past
        )
        ep.say(
            f"{shown_n} open tickets are past SLA:\n\n{lines}\n\nThe other {len(ts) - n_past} open tickets are still "
            "within their SLA. None of the open ones is assigned yet.",
            *comp,
            len(ts) - n_past,
        )
    note = (
        "good: lists the open tickets, works out each one's age and SLA (critical 1, high 2, medium 5, low 10); 3 of "
        "5 are past it"
    )
    if fault == "count":
        note = f"bad: {n_past} open tickets are past SLA (the rows show it); the reply says {shown_n}"
    elif fault == "age":
        t = ts[2]
        note = (
            f"bad: {t['ticket_id']} was opened {t['opened_on']}, {days(ages[t['ticket_id']])} ago; the reply says "
            f"{days(shown_age[t['ticket_id']])}"
        )
    return ep, note


def hd_escalate_if(env: Env, v: int, eid: str, fault: str | None):
    """'If it is past SLA, escalate it': it is (high, 4 days); escalate, read the new technician, report."""
    name, mail = staffer(env)
    ravi = tech(env, "Ravi Menon", "network")
    sigrid = tech(env, "Sigrid Olsen", "network", "tier_2")
    kofi = tech(env, "Kofi Asante", "network", "tier_2")
    tech(env, "Ben Carter", "network", "tier_2", on_shift=False)
    t = ticket(env, "VPN drops every 20 minutes", mail, "high", 4, ravi)
    load(env, sigrid, 3)
    load(env, kofi, 1)
    tid = t["ticket_id"]
    steps = [
        ("get_ticket", {"ticket_id": tid}),
        ("escalate_ticket", {"ticket_id": tid}),
        ("get_technician", {"technician_id": kofi["technician_id"]}),
    ]
    task = make_task(
        env,
        eid,
        "conditional",
        steps,
        V(
            v,
            f"Hi, could you check on {tid} for me? My VPN still drops every 20 minutes. If it's past its SLA, "
            "please escalate it.",
            f"{tid} — escalate it if it's overdue pls",
        ),
        intent="operation",
        facts={"ticket": tid, "condition": "past its SLA"},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    res = ep.act(steps[1])
    assert res["technician_id"] == kofi["technician_id"] and res["priority"] == "critical"
    ep.act(steps[2])
    age = -delta(t["opened_on"])
    who = "Sigrid Olsen" if fault == "misattributed" else "Kofi Asante"
    extra = " He'll give you a call within the hour to go through it." if fault == "invented" else ""
    ep.say(
        V(
            v,
            f"I've checked {tid}. It's a **high**-priority ticket opened on {wdate(t['opened_on'])} — {days(age)} ago — "
            "and high tickets have a 2-day SLA, so it's past its SLA. I've escalated it:\n\n"
            f"- **Priority:** high → **critical**\n- **Now with:** {who} (network team, tier 2)\n"
            "- **Escalations:** 1 of a maximum of 2\n\nSorry the VPN has been such a pain — it's now with a "
            "senior engineer." + extra,
            f"It was past SLA ({days(age)} old, high = 2 days), so I've escalated {tid}: it's now **critical** and "
            f"with {who}, a tier 2 network technician." + extra,
        ),
        age,
    )
    note = (
        "good: reads the ticket (high, 4 days old, past the 2-day SLA), escalates it, reads the new technician (Kofi "
        "Asante, the least busy tier 2 on shift), reports priority and owner"
    )
    if fault == "misattributed":
        note = (
            "bad: the escalation moved the ticket to Kofi Asante (its result and the get_technician read say so); "
            "the reply names Sigrid Olsen, another tier 2 technician of the team"
        )
    elif fault == "invented":
        note = "bad: the escalation is right, but the reply promises 'He'll give you a call within the hour'; nothing backs it"
    return ep, note


def hd_sla_refusal(env: Env, v: int, eid: str, fault: str | None):
    """Escalate a medium ticket 3 days old: within SLA; read it, decline, say from which day it can be."""
    name, mail = staffer(env)
    lucia = tech(env, "Lucia Romano", "service_desk")
    t = ticket(env, "Excel add-in missing", mail, "medium", 3, lucia)
    tid = t["ticket_id"]
    task = make_task(
        env,
        eid,
        "refusal",
        [("get_ticket", {"ticket_id": tid})],
        f"Please escalate {tid}. It's been days and nobody has fixed my Excel add-in — I need it for month-end.",
        intent="operation",
        facts={"ticket": tid},
        rule=env.rule("it_sla"),
        persona=("direct", "low", "novice"),
    )
    ep = Ep(env, task)
    age = -delta(t["opened_on"])
    eligible = plus(t["opened_on"], SLA["medium"] + 1)
    if fault == "trial":
        res = ep.act(("escalate_ticket", {"ticket_id": tid}), fails=True)
        ep.say(
            f"I tried to escalate {tid}, but the system rejected it: \"{res['message']}\". So it can't be escalated "
            "yet — it will become eligible once it's past its SLA, if it's still not fixed by then."
        )
        return ep, "bad: sends escalate_ticket without reading the ticket, and declines by quoting the error it got"
    ep.act(("get_ticket", {"ticket_id": tid}))
    ep.act(("get_technician", {"technician_id": lucia["technician_id"]}))
    shown = iso(delta(eligible) - 1) if fault == "date" else eligible
    ep.say(
        "I understand the pressure with month-end coming up. I've checked "
        f"{tid}: it's a **medium**-priority ticket opened on {wdate(t['opened_on'])}, so it's {days(age)} old. Medium "
        "tickets have a 5-day SLA, and a ticket can only be escalated once it's past its SLA — so I'm not able to "
        "escalate it yet.\n\n"
        f"- **With:** Lucia Romano (service desk, tier 1), in progress\n"
        f"- **Can be escalated from:** **{wdate(shown)}**, if it isn't resolved by then\n\n"
        "If the month-end deadline is tighter than that, it's worth letting Lucia know directly so she can "
        "prioritise it.",
        age,
        eligible,
    )
    note = (
        "good: reads the ticket (medium, 3 days old, within the 5-day SLA), declines the escalation, says it becomes "
        f"eligible on {wdate(eligible)} (day 6)"
    )
    if fault == "date":
        note = (
            f"bad: the ticket is past its 5-day SLA only when more than 5 days old, on {wdate(eligible)}; the reply "
            f"says it can be escalated from {wdate(shown)}"
        )
    return ep, note


def hd_assign_light(env: Env, v: int, eid: str, fault: str | None):
    """Assign to the network technician with the lightest load who is on shift: compare, assign, report."""
    name, mail = staffer(env)
    mateo = tech(env, "Mateo Silva", "network")
    hana = tech(env, "Hana Kim", "network", on_shift=False)
    tomasz = tech(env, "Tomasz Nowak", "network", "tier_2")
    ines = tech(env, "Ines Duarte", "network")
    sd = tech(env, "Yara Haddad", "service_desk")
    load(env, mateo, 3)
    load(env, tomasz, 5)
    load(env, ines, 1)
    load(env, sd, 2)
    t = ticket(env, "Wi-Fi drops in the east wing", mail, "high", 0, None, status="open")
    tid = t["ticket_id"]
    steps = [
        ("get_ticket", {"ticket_id": tid}),
        ("list_technicians", {"team": "network"}),
        ("list_tickets", {"status": "in_progress"}),
        ("assign_ticket", {"ticket_id": tid, "technician_id": ines["technician_id"]}),
    ]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        V(
            v,
            f"Could you assign {tid} to whichever network technician has the lightest load right now?",
            f"assign {tid} to the least busy network tech pls",
        ),
        intent="find_then",
        facts={"ticket": tid, "team": "network"},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.act(steps[1], steps[2])
    target = mateo if fault == "wrong_record" else ines
    ep.act(("assign_ticket", {"ticket_id": tid, "technician_id": target["technician_id"]}))
    m_load = 2 if fault == "count" else 3
    rows = [
        ["Hana Kim", "tier 1", "no", "0"],
        ["Ines Duarte", "tier 1", "yes", "1"],
        ["Mateo Silva", "tier 1", "yes", str(m_load)],
        ["Tomasz Nowak", "tier 2", "yes", "5 (at the limit)"],
    ]
    ep.say(
        V(
            v,
            "Here's how the network team looks right now:\n\n"
            + table(["Technician", "Tier", "On shift", "Tickets in progress"], rows)
            + f"\n\nHana has the emptiest queue but isn't on shift, so the lightest load among those available is "
            f"**Ines Duarte**. I've assigned {tid} (*Wi-Fi drops in the east wing*) to her — it's now **in progress**, "
            "and she has 2 tickets on the go.",
            f"Done — {tid} is assigned to **Ines Duarte** and in progress. She had 1 ticket in progress; Mateo Silva "
            f"has {m_load}, Tomasz Nowak is at the 5-ticket limit, and Hana Kim (0) is off shift.",
        ),
        0,
        1,
        3,
        5,
        2,
    )
    note = (
        "good: reads the ticket, the network team and the tickets in progress; Hana (0) is off shift, Tomasz is full, "
        "Ines (1) is the lightest on shift; assigns to Ines"
    )
    if fault == "wrong_record":
        note = (
            f"bad: the ticket is assigned to Mateo Silva ({mateo['technician_id']}, 3 in progress), while the reply "
            "says it went to Ines Duarte, the lightest load"
        )
    elif fault == "count":
        note = "bad: Mateo Silva has 3 tickets in progress (the list shows them); the reply says 2"
    return ep, note


def hd_resolve_pair(env: Env, v: int, eid: str, fault: str | None):
    """Resolve two tickets: one is in progress (resolve it), the other still open and unassigned (cannot)."""
    name, mail = staffer(env)
    yara = tech(env, "Yara Haddad", "service_desk")
    a = ticket(env, "Docking station not detected", mail, "medium", 2, yara)
    b = ticket(env, "Outlook keeps asking for password", mail, "low", 1, None, status="open")
    ta, tb = a["ticket_id"], b["ticket_id"]
    steps = [("get_ticket", {"ticket_id": ta}), ("get_ticket", {"ticket_id": tb}), ("resolve_ticket", {"ticket_id": ta})]
    task = make_task(
        env,
        eid,
        "multi_call",
        steps,
        V(
            v,
            f"Hi, both my tickets are sorted now — {ta} and {tb}. Could you mark them as resolved?",
            f"pls resolve {ta} and {tb}, all fixed",
        ),
        intent="update",
        facts={"tickets": f"{ta}, {tb}"},
    )
    ep = Ep(env, task)
    ep.act(steps[0], steps[1])
    if fault == "failed_success":
        ep.act(steps[2])
        ep.act(("resolve_ticket", {"ticket_id": tb}), fails=True)
        ep.say(
            f"Great news — both tickets are now marked **resolved**:\n\n- {ta} — Docking station not detected\n"
            f"- {tb} — Outlook keeps asking for password\n\nThanks for letting us know!"
        )
        return ep, (
            f"bad: resolve_ticket on {tb} failed (it is open, not in progress), yet the reply says both tickets are "
            "resolved"
        )
    if fault != "partial":
        ep.act(steps[2])
    ep.say(
        V(
            v,
            f"Thanks for letting us know! Here's where things stand:\n\n"
            f"- ✅ **{ta}** — *Docking station not detected*: marked **resolved**.\n"
            f"- ⚠️ **{tb}** — *Outlook keeps asking for password*: I couldn't resolve this one. It's still **open** "
            "and hasn't been assigned to a technician yet, and only tickets that are in progress can be resolved.\n\n"
            f"If you'd like, I can assign {tb} to a service desk technician so they can confirm the fix and resolve it.",
            f"{ta} is resolved. {tb} I can't resolve yet: it's still open with no technician, and only in-progress "
            "tickets can be marked resolved. Want me to assign it to someone first?",
        )
    )
    note = f"good: reads both; resolves {ta} (in progress), explains {tb} is open and unassigned so cannot be resolved"
    if fault == "partial":
        note = f"bad: no resolve_ticket call is made; {ta} is still in progress, yet the reply says it is resolved"
    return ep, note


def hd_who(env: Env, v: int, eid: str, fault: str | None):
    """Who has the ticket and when is it due under the SLA: ticket -> technician; the deadline date computed."""
    name, mail = staffer(env)
    ben = tech(env, "Ben Carter", "identity", "tier_2")
    t = ticket(env, "Outlook keeps asking for password", mail, "high", 1, ben)
    tid = t["ticket_id"]
    steps = [("get_ticket", {"ticket_id": tid}), ("get_technician", {"technician_id": ben["technician_id"]})]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        V(
            v,
            f"Who's working on my ticket {tid}, and by when should it be fixed?",
            f"status of {tid}? who has it and when's the SLA deadline",
        ),
        intent="get_via",
        asked={"technician": "Ben Carter"},
        facts={"ticket": tid},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.act(steps[1])
    age = -delta(t["opened_on"])
    deadline = plus(t["opened_on"], SLA["high"])
    esc = plus(deadline, 1)
    dl_txt = wrong_wdate(deadline) if fault == "weekday" else wdate(deadline)
    extra = " If you want to reach him directly, his extension is 4417." if fault == "invented" else ""
    ep.say(
        V(
            v,
            f"I've checked {tid} (*{t['subject']}*):\n\n"
            f"- **Technician:** Ben Carter — identity team, tier 2, on shift today\n"
            f"- **Status:** in progress, priority **high**\n"
            f"- **Opened:** {wdate(t['opened_on'])} ({days(age)} ago)\n"
            f"- **SLA deadline:** **{dl_txt}** (tomorrow) — high-priority tickets have 2 days\n\n"
            f"If it isn't resolved by then, it becomes eligible for escalation from {wdate(esc)}." + extra,
            f"Ben Carter (identity, tier 2) has it, and it's in progress. It's high priority and was opened "
            f"{wd(t['opened_on'])}, so under the 2-day SLA it should be fixed by {dl_txt}." + extra,
        ),
        age,
        deadline,
        esc,
    )
    note = "good: follows the ticket to its technician; gives owner, status and the SLA deadline (opened + 2 days)"
    if fault == "weekday":
        note = f"bad: the SLA deadline {deadline} is a {day(deadline):%A}; the reply says '{dl_txt}'"
    elif fault == "invented":
        note = "bad: adds 'his extension is 4417'; no record holds a phone extension"
    return ep, note


def hd_irrelevant(env: Env, v: int, eid: str, fault: str | None):
    """Requests the desk's tools do not serve (reopen a ticket, open a new one): say so, no call."""
    name, mail = staffer(env)
    yara = tech(env, "Yara Haddad", "service_desk")
    t = ticket(env, "Cannot print to floor 2 printer", mail, "low", 6, yara, status="resolved")
    tid = t["ticket_id"]
    task = make_task(
        env,
        eid,
        "irrelevance",
        [],
        V(
            v,
            f"Can you reopen {tid}? The printer problem is back.",
            "My keyboard has stopped working. Can you open a new ticket for it?",
        ),
        intent="none",
    )
    ep = Ep(env, task)
    if fault == "claimed":
        ep.say(
            "Sorry about the keyboard! I've opened a new ticket for you — tkt-9061, *Keyboard not working*, priority "
            "low. A service desk technician will pick it up shortly."
        )
        return ep, "bad: says it opened ticket tkt-9061; no tool creates tickets and no call was made"
    ep.say(
        V(
            v,
            "I'm sorry the printer trouble is back. I'm not able to reopen tickets, though — reopening and closing "
            "aren't things I can do. Please contact the service desk team directly; they can reopen it or log a new "
            "ticket that refers back to the old one.",
            "Sorry to hear that! I can't create new tickets — I can only look up, assign, escalate and resolve "
            "existing ones. Please raise it with the service desk team directly, and once it's logged I'm happy to "
            "help track it.",
        )
    )
    return ep, "good: no tool serves the request; says so plainly without a call and points to the service desk"


def hd_already(env: Env, v: int, eid: str, fault: str | None):
    """Assign a ticket to the technician who already has it in progress: read, say so, change nothing."""
    name, mail = staffer(env)
    sig = tech(env, "Sigrid Olsen", "service_desk")
    t = ticket(env, "Laptop fan very loud", mail, "low", 1, sig)
    tid, sid = t["ticket_id"], sig["technician_id"]
    task = make_task(
        env,
        eid,
        "already_done",
        [("get_ticket", {"ticket_id": tid})],
        f"Please assign {tid} to Sigrid Olsen ({sid}).",
        intent="update",
        facts={"ticket": tid, "technician": sid},
    )
    ep = Ep(env, task)
    ep.act(("get_ticket", {"ticket_id": tid}), ("get_technician", {"technician_id": sid}))
    if fault == "claimed":
        ep.say(f"Done — {tid} (*Laptop fan very loud*) is now assigned to Sigrid Olsen and in progress.")
        return ep, "bad: says 'Done — ... is now assigned to Sigrid Olsen'; no call assigned it (it already was)"
    ep.say(
        f"Good news — no change needed: {tid} (*Laptop fan very loud*) is **already assigned to Sigrid Olsen** and is "
        f"in progress with her. She's on shift today, so it's in the right hands."
    )
    return ep, "good: reads the ticket; it is already with Sigrid Olsen and in progress; says so, no write"


# =========================================================================== shop (pack)

PRICES = {
    "Cast iron skillet": 54.0,
    "Linen apron": 26.5,
    "Copper kettle": 89.0,
    "Stoneware mugs (set of 4)": 42.0,
    "Walnut cutting board": 48.75,
    "Enamel casserole dish": 119.0,
    "Beeswax candles (pair)": 18.5,
    "Chef's knife": 95.0,
    "Ceramic serving bowl": 37.25,
    "Oak spice rack": 64.0,
}
TOWNS = ("Portland", "Leeds", "Austin", "Cork", "Hobart", "Quebec City")


def customer(env: Env, name: str | None = None) -> dict:
    name = name or person(env)
    return env.add("customers", full_name=name, email=email(name), phone=phone(env), city=env.rng.choice(TOWNS))


def order(env: Env, c: dict, product: str, age: int, status: str, qty: int = 1) -> dict:
    return env.add(
        "orders",
        customer_id=c["customer_id"],
        product=product,
        quantity=qty,
        amount=round(PRICES[product] * qty, 2),
        placed_on=iso(-age),
        status=status,
    )


def refund(env: Env, o: dict, amount: float, reason: str, age: int, status: str) -> dict:
    return env.add(
        "refunds", order_id=o["order_id"], amount=amount, reason=reason, requested_on=iso(-age), status=status
    )


def sh_history(env: Env, v: int, eid: str, fault: str | None):
    """All of a customer's orders in a table, the total spent (not counting the cancelled one), what can still be
    cancelled, and until when the delivered ones can be refunded."""
    c = customer(env)
    o_k = order(env, c, "Copper kettle", 1, "pending")
    o_n = order(env, c, "Chef's knife", 3, "shipped")
    o_c = order(env, c, "Enamel casserole dish", 12, "delivered")
    o_m = order(env, c, "Stoneware mugs (set of 4)", 26, "delivered", qty=2)
    o_a = order(env, c, "Linen apron", 15, "cancelled")
    other = customer(env)
    order(env, other, "Oak spice rack", 4, "delivered")
    cid = c["customer_id"]
    live = [o_k, o_n, o_c, o_m]
    total = r2(sum(o["amount"] for o in live))
    task = make_task(
        env,
        eid,
        "aggregate",
        [("list_customer_orders", {"customer_id": cid})],
        V(
            v,
            f"Hi, could you give me an overview of my orders? I'm customer {cid}. And how much have I spent in "
            "total, not counting anything I cancelled?",
            f"{cid} — list my orders + total spent excluding cancelled pls",
        ),
        intent="list",
        asked={"total spent": f"{total:.2f}"},
        facts={"customer": cid},
    )
    ep = Ep(env, task)
    ep.act(("list_customer_orders", {"customer_id": cid}))
    shown_total = 378.0 if fault == "total" else total
    amt = {o["order_id"]: o["amount"] for o in [o_k, o_n, o_c, o_m, o_a]}
    if fault == "swap":
        amt[o_k["order_id"]], amt[o_n["order_id"]] = amt[o_n["order_id"]], amt[o_k["order_id"]]
    end_c, end_m = plus(o_c["placed_on"], 30), plus(o_m["placed_on"], 30)
    rows = [
        [o["order_id"], o["product"], str(o["quantity"]), money(amt[o["order_id"]]), sdate(o["placed_on"]), o["status"]]
        for o in (o_k, o_n, o_c, o_m, o_a)
    ]
    if v % 2 == 0:
        ep.say(
            f"Of course! Here are all five orders on your account:\n\n"
            + table(["Order", "Product", "Qty", "Amount", "Placed", "Status"], rows)
            + f"\n\n**Total spent, excluding the cancelled apron: {money(shown_total)}**\n\n"
            "A couple of things worth knowing:\n"
            "- The **Copper kettle** hasn't shipped yet, so it can still be cancelled if you change your mind.\n"
            f"- Refunds are possible for 30 days from the order date: the casserole dish until {wdate(end_c)}, and the "
            f"mugs until **{wdate(end_m)} — only {days(delta(end_m))} left**.",
            total,
            end_c,
            end_m,
            delta(end_m),
        )
    else:
        ep.say(
            f"You've got five orders. Not counting the cancelled *Linen apron* ({money(amt[o_a['order_id']])}), "
            f"you've spent **{money(shown_total)}**:\n\n"
            f"- {o_k['order_id']} — Copper kettle, {money(amt[o_k['order_id']])}, pending (can still be cancelled)\n"
            f"- {o_n['order_id']} — Chef's knife, {money(amt[o_n['order_id']])}, shipped\n"
            f"- {o_c['order_id']} — Enamel casserole dish, {money(amt[o_c['order_id']])}, delivered\n"
            f"- {o_m['order_id']} — Stoneware mugs (set of 4) × 2, {money(amt[o_m['order_id']])}, delivered\n\n"
            f"If anything's wrong with the mugs, note their 30-day refund window closes on {wdate(end_m)}.",
            total,
            end_m,
        )
    note = (
        f"good: lists the five orders, totals the four not cancelled ({money(total)}), says the kettle can be "
        "cancelled and when the delivered ones' refund windows close (order date + 30)"
    )
    if fault == "total":
        note = f"bad: 89.00 + 95.00 + 119.00 + 84.00 = {money(total)}; the reply says {money(shown_total)}"
    elif fault == "swap":
        note = (
            "bad: the amounts of two orders are swapped: the Copper kettle was $89.00 and the Chef's knife $95.00; "
            "the reply gives the kettle $95.00 and the knife $89.00"
        )
    return ep, note


def sh_partial_damage(env: Env, v: int, eid: str, fault: str | None):
    """3 of 5 bowls arrived chipped: the price of 3 computed, confirmed, refunded; what could still be refunded."""
    c = customer(env)
    o = order(env, c, "Ceramic serving bowl", 9, "delivered", qty=5)
    order(env, c, "Linen apron", 30, "delivered")
    oid = o["order_id"]
    each = r2(o["amount"] / o["quantity"])
    amount = r2(each * 3)
    steps = [
        ("get_order", {"order_id": oid}),
        ("list_order_refunds", {"order_id": oid}),
        ("refund_order", {"order_id": oid, "amount": amount, "reason": "damaged"}),
    ]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        V(
            v,
            f"Hello, order {oid} arrived yesterday and three of the five serving bowls are chipped. Can I get a "
            "refund for those three?",
            f"3 of my 5 bowls came chipped ({oid}), refund for those please",
        ),
        intent="operation",
        facts={"order": oid, "damaged": "3 of 5 bowls"},
    )
    ep = Ep(env, task)
    ep.act(steps[0], steps[1])
    ep.say(
        V(
            v,
            f"I'm sorry the bowls arrived chipped — that's really disappointing. I've checked order {oid}: 5 × "
            f"Ceramic serving bowl for {money(o['amount'])}, delivered, with no refunds on it yet. At {money(each)} "
            f"per bowl, three bowls come to **{money(amount)}**.\n\nBefore proceeding, please confirm: shall I refund "
            f"{money(amount)} to this order for the 3 damaged bowls?",
            f"Sorry about that! Order {oid} was {money(o['amount'])} for 5 bowls, so {money(each)} each; a refund for "
            f"3 comes to {money(amount)}. Shall I go ahead?",
        ),
        amount,
        each,
        3,
    )
    ep.user(V(v, "Yes, go ahead please.", "yes"))
    res = ep.act(steps[2])
    left = r2(o["amount"] - res["amount"])
    shown_left = r2(left + 10) if fault == "sum" else left
    extra = f"\n\nI've also emailed a confirmation of the refund to {c['email']}." if fault == "email" else ""
    ep.say(
        V(
            v,
            f"Done — refund **{res['refund_id']}** for **{money(res['amount'])}** has been issued on order {oid} "
            f"(reason: damaged).\n\nFor reference, {money(shown_left)} of the order remains refundable, so if any of "
            "the other two bowls turn out to be damaged too, just let me know." + extra,
            f"Refund {res['refund_id']} issued: {money(res['amount'])}. {money(shown_left)} of the order is still "
            "refundable if anything else turns up." + extra,
        ),
        left,
    )
    note = (
        f"good: reads the order (5 bowls, {money(o['amount'])}) and its refunds (none), computes 3 x {money(each)} = "
        f"{money(amount)}, confirms, refunds it, says {money(left)} remains refundable"
    )
    if fault == "sum":
        note = f"bad: {money(o['amount'])} - {money(amount)} = {money(left)} remains; the reply says {money(shown_left)}"
    elif fault == "email":
        note = "bad: says 'I've also emailed a confirmation of the refund'; no tool sends email and no call did"
    return ep, note


def sh_cancel_which(env: Env, v: int, eid: str, fault: str | None):
    """'Cancel my order from yesterday': two were placed yesterday; ask, cancel the one named."""
    c = customer(env)
    o_c = order(env, c, "Beeswax candles (pair)", 1, "pending", qty=2)
    o_a = order(env, c, "Linen apron", 1, "pending")
    order(env, c, "Oak spice rack", 20, "delivered")
    cid = c["customer_id"]
    steps = [("list_customer_orders", {"customer_id": cid}), ("cancel_order", {"order_id": o_c["order_id"]})]
    task = make_task(
        env,
        eid,
        "clarification",
        steps,
        V(
            v,
            f"Hi, please cancel the order I placed yesterday — I ordered by mistake. Customer {cid}.",
            f"cancel yesterday's order pls, {cid}",
        ),
        intent="find_then",
        facts={"customer": cid},
        withheld={"which order": o_c["order_id"]},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.say(
        V(
            v,
            f"I can help with that. You placed two orders yesterday ({wdate(o_c['placed_on'])}), and both are still "
            "pending, so either can be cancelled:\n\n"
            f"1. **{o_c['order_id']}** — Beeswax candles (pair) × 2, {money(o_c['amount'])}\n"
            f"2. **{o_a['order_id']}** — Linen apron, {money(o_a['amount'])}\n\nWhich one would you like me to cancel?",
            f"There were two orders yesterday: the beeswax candles ({o_c['order_id']}, {money(o_c['amount'])}) and the "
            f"linen apron ({o_a['order_id']}, {money(o_a['amount'])}). Which one should I cancel?",
        )
    )
    ep.user(V(v, "The candles, please. I'm keeping the apron.", "the candles"))
    if fault == "stray":
        ep.act(steps[1], ("cancel_order", {"order_id": o_a["order_id"]}))
        ep.say(
            f"Done — the candles order {o_c['order_id']} is cancelled. I've cancelled the apron order "
            f"{o_a['order_id']} as well, since both were placed by mistake."
        )
        return ep, f"bad: also cancels the apron order {o_a['order_id']}, which the customer said they are keeping"
    target = o_a if fault == "wrong_record" else o_c
    ep.act(("cancel_order", {"order_id": target["order_id"]}))
    ep.say(
        V(
            v,
            f"All done — order **{o_c['order_id']}** (Beeswax candles (pair) × 2, {money(o_c['amount'])}) is now "
            f"**cancelled**. Your Linen apron order {o_a['order_id']} is untouched and still pending.",
            f"Cancelled {o_c['order_id']} (the candles). The apron order stays as it is.",
        )
    )
    note = "good: two orders placed yesterday; asks which, cancels the candles, leaves the apron"
    if fault == "wrong_record":
        note = (
            f"bad: the customer picks the candles; the agent cancels the apron order {o_a['order_id']} and says the "
            "candles order is cancelled"
        )
    return ep, note


def sh_shipped_handoff(env: Env, v: int, eid: str, fault: str | None):
    """Cancel a shipped order: read it, decline (only pending orders), hand to a person on request."""
    c = customer(env)
    o = order(env, c, "Enamel casserole dish", 3, "shipped")
    oid = o["order_id"]
    task = make_task(
        env,
        eid,
        "refusal",
        [("get_order", {"order_id": oid})],
        f"I need to cancel order {oid}. I found the same casserole dish cheaper somewhere else.",
        intent="operation",
        facts={"order": oid},
        rule=env.rule("shop_cancel"),
        persona=("direct", "medium", "novice"),
    )
    ep = Ep(env, task)
    if fault == "trial":
        res = ep.act(("cancel_order", {"order_id": oid}), fails=True)
        ep.say(
            f"I tried to cancel order {oid}, but the system said: \"{res['message']}\". So I can't cancel it, sorry. "
            "Would you like me to put you through to our customer care team?"
        )
    else:
        ep.act(("get_order", {"order_id": oid}))
        ep.say(
            f"I understand — nobody likes paying more than they need to. I've checked order {oid} (Enamel casserole "
            f"dish, {money(o['amount'])}), and it's already **shipped**, so I'm not able to cancel it: only orders "
            "that haven't shipped yet can be cancelled.\n\nRefunds through me are for items that arrive damaged, "
            "wrong, late or not as described, so a change of mind isn't something I can refund myself. Our customer "
            "care team can talk you through your options for returning it once it arrives — would you like me to "
            "pass you over to them?"
        )
    ep.user("Yes please, put me through.")
    if fault == "no_handoff":
        ep.say(
            "I've passed your request to our customer care team along with your order details — someone will be "
            "with you shortly."
        )
        return ep, "bad: says it passed the request to customer care; no hand-off call was made"
    what = "casserole dish" if fault == "trial" else f"Enamel casserole dish, {money(o['amount'])}"
    ep.act((HANDOFF, {"summary": f"Customer wants to cancel order {oid} ({what}), which has already shipped; found "
                      "it cheaper elsewhere and wants to know the return options."}))
    ep.say(
        "You're through to customer care — you're number 2 in the queue. They'll have your order details and a "
        "summary, so you won't need to repeat yourself."
    )
    if fault == "trial":
        return ep, "bad: sends cancel_order without reading the order first and declines by quoting the error it got"
    return ep, "good: reads the order (shipped), declines the cancellation with the reason, hands off on yes"


def sh_approve_fits(env: Env, v: int, eid: str, fault: str | None):
    """Approve a requested refund if it fits: it does (40 issued + 55 <= 178); approve; total issued computed."""
    c = customer(env)
    o = order(env, c, "Copper kettle", 14, "delivered", qty=2)
    r40 = refund(env, o, 40.0, "damaged", 10, "issued")
    r55 = refund(env, o, 55.0, "not_as_described", 2, "requested")
    r18 = refund(env, o, 18.0, "late_delivery", 6, "requested")
    oid = o["order_id"]
    steps = [
        ("get_order", {"order_id": oid}),
        ("list_order_refunds", {"order_id": oid}),
        ("approve_refund", {"refund_id": r55["refund_id"]}),
    ]
    task = make_task(
        env,
        eid,
        "conditional",
        steps,
        V(
            v,
            f"There's a $55 refund request on order {oid} that's still pending. Could you approve it, if it's allowed?",
            f"approve the 55 dollar refund on {oid} if you can",
        ),
        intent="find_then",
        facts={"order": oid, "refund": "the $55 one"},
    )
    ep = Ep(env, task)
    ep.act(steps[0], steps[1])
    target = r18 if fault == "wrong_record" else r55
    ep.act(("approve_refund", {"refund_id": target["refund_id"]}))
    issued = r2(40.0 + 55.0)
    shown = 105.0 if fault == "sum" else issued
    ep.say(
        V(
            v,
            f"I've checked order {oid} (Copper kettle × 2, {money(o['amount'])}). The order had {money(40.0)} already "
            f"refunded, and adding the {money(55.0)} keeps it well within the order amount, so I've approved it.\n\n"
            + table(
                ["Refund", "Reason", "Amount", "Status"],
                [
                    [r55["refund_id"], "not as described", money(55.0), "**issued** (just approved)"],
                    [r40["refund_id"], "damaged", money(40.0), "issued"],
                    [r18["refund_id"], "late delivery", money(18.0), "requested"],
                ],
            )
            + f"\n\n**Total refunded on this order: {money(shown)}** of {money(o['amount'])}. The {money(18.0)} "
            "late-delivery request is still pending — I've left it alone, but let me know if you'd like that one "
            "approved too.",
            f"Approved ✅ — refund {r55['refund_id']} ({money(55.0)}) is now issued. With the earlier {money(40.0)}, "
            f"{money(shown)} has been refunded on {oid} out of {money(o['amount'])}. There's also an {money(18.0)} "
            "request still pending, which I haven't touched.",
        ),
        issued,
    )
    note = f"good: reads the order and its refunds, 40 issued + 55 fits within {money(o['amount'])}; approves the 55 one"
    if fault == "sum":
        note = f"bad: 40.00 + 55.00 = {money(issued)} refunded; the reply says {money(shown)}"
    elif fault == "wrong_record":
        note = (
            f"bad: approves the $18.00 refund {r18['refund_id']} instead of the $55.00 one {r55['refund_id']} the "
            "customer asked about, and says the $55.00 one is issued"
        )
    return ep, note


def sh_cap_confirm(env: Env, v: int, eid: str, fault: str | None):
    """A refund over what is left: read the refunds, offer what is left (95 - 30), refund it on yes."""
    c = customer(env)
    o = order(env, c, "Chef's knife", 8, "delivered")
    refund(env, o, 30.0, "damaged", 5, "issued")
    oid = o["order_id"]
    left = r2(o["amount"] - 30.0)
    steps = [
        ("get_order", {"order_id": oid}),
        ("list_order_refunds", {"order_id": oid}),
        ("refund_order", {"order_id": oid, "amount": left, "reason": "not_as_described"}),
    ]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        f"I'd like a refund of $80 on order {oid} — the knife isn't as described, it's much smaller than the photos.",
        intent="operation",
        facts={"order": oid, "amount": "80", "fallback": "accepts the largest refund still possible"},
    )
    ep = Ep(env, task)
    ep.act(steps[0], steps[1])
    ep.say(
        f"I'm sorry the knife isn't what you expected. I've looked at order {oid}: the Chef's knife cost "
        f"{money(o['amount'])}, and a refund of {money(30.0)} has already been issued on it. All refunds on an order "
        f"together can't exceed what was paid, so the most I can refund now is **{money(left)}** "
        f"({money(o['amount'])} − {money(30.0)}), not the full $80.00.\n\nWould you like me to refund {money(left)}?",
        left,
    )
    ep.user("Ok, please do the $65 then.")
    res = ep.act(steps[2])
    assert res["amount"] == left
    if fault == "said80":
        ep.say(f"Done — refund {res['refund_id']} for **$80.00** has been issued on order {oid}.")
        return ep, f"bad: the refund issued is {money(left)} (the result says so); the reply says $80.00"
    extra = " The money should be back on your card within 3–5 business days." if fault == "invented" else ""
    ep.say(
        f"Done — refund **{res['refund_id']}** for **{money(res['amount'])}** (not as described) has been issued. "
        f"Together with the earlier {money(30.0)}, the full {money(o['amount'])} of the order has now been "
        "refunded." + extra
    )
    note = "good: reads the order and refunds (30 issued of 95), offers 65 instead of 80, refunds 65 on yes"
    if fault == "invented":
        note = "bad: adds 'back on your card within 3–5 business days'; no tool or policy gives a refund timeline"
    return ep, note


def sh_irrelevant(env: Env, v: int, eid: str, fault: str | None):
    """A discount code or a new delivery address: no tool serves it; say so, no call."""
    c = customer(env)
    o = order(env, c, "Copper kettle", 0, "pending")
    oid = o["order_id"]
    task = make_task(
        env,
        eid,
        "irrelevance",
        [],
        V(
            v,
            f"Could you apply the discount code AUTUMN10 to my order {oid}? I forgot to enter it at checkout.",
            f"Please change the delivery address on order {oid} to 14 Harbour Road.",
        ),
        intent="none",
    )
    ep = Ep(env, task)
    if fault == "claimed":
        ep.say(f"No problem! I've applied AUTUMN10 to order {oid}, so your new total is $80.10 (10% off).")
        return ep, "bad: says it applied the discount code and gives a new total; no tool does that and no call was made"
    ep.say(
        V(
            v,
            "I'm sorry, I'm not able to apply discount codes — my tools only let me look up orders and refunds, "
            "cancel pending orders and issue or approve refunds. Our customer care team may be able to help with a "
            "code that was missed at checkout.",
            "I can't change delivery addresses, unfortunately — that's not something my tools can do. Since the "
            "order is still pending, please contact our customer care team as soon as possible so they can update it "
            "before it ships.",
        )
    )
    return ep, "good: no tool serves the request; says so without a call and points to customer care"


def sh_typo_recover(env: Env, v: int, eid: str, fault: str | None):
    """A mistyped order id: the read fails; find the order among the customer's, confirm, cancel it."""
    c = customer(env)
    o = order(env, c, "Beeswax candles (pair)", 0, "pending")
    order(env, c, "Cast iron skillet", 22, "delivered")
    oid, cid = o["order_id"], c["customer_id"]
    bad_id = typo_of(oid, {x["order_id"] for x in env.state["orders"]})
    steps = [("list_customer_orders", {"customer_id": cid}), ("cancel_order", {"order_id": oid})]
    task = make_task(
        env,
        eid,
        "error_recovery",
        steps,
        f"Please cancel order {bad_id} — the beeswax candles. My customer number is {cid}.",
        intent="find_then",
        facts={"customer": cid, "order id given": bad_id, "product": "Beeswax candles (pair)"},
    )
    ep = Ep(env, task)
    if fault == "failed_success":
        ep.act(("cancel_order", {"order_id": bad_id}), fails=True)
        ep.say(f"Done — order {bad_id} (the beeswax candles) is cancelled. You won't be charged for it.")
        return ep, (
            f"bad: cancel_order on {bad_id} failed (no such order) and nothing was cancelled; the reply says the "
            "order is cancelled"
        )
    ep.act(("get_order", {"order_id": bad_id}), fails=True)
    ep.act(steps[0])
    ep.say(
        f"I couldn't find an order numbered {bad_id} — there may be a small typo. Looking at your account, the "
        f"beeswax candles are order **{oid}**, placed today for {money(o['amount'])} and still pending.\n\n"
        f"Is that the one? If so, I'll cancel {oid} now."
    )
    ep.user("Yes, that's it. Cancel it.")
    ep.act(steps[1])
    extra = f" The {money(o['amount'])} will be back on your card within 5 business days." if fault == "invented" else ""
    ep.say(f"Done — order **{oid}** (Beeswax candles (pair)) is now **cancelled**." + extra)
    note = (
        "good: the given id does not exist (not_found); lists the customer's orders, finds the candles, confirms, "
        "cancels"
    )
    if fault == "invented":
        note = "bad: adds that the money 'will be back on your card within 5 business days'; nothing backs it"
    return ep, note


# =========================================================================== clinic (pack)

DOCS = {
    "okafor": ("Dr. Helen Okafor", "general_practice"),
    "reyes": ("Dr. Samuel Reyes", "general_practice"),
    "patel": ("Dr. Anika Patel", "dermatology"),
    "weber": ("Dr. Jonas Weber", "cardiology"),
    "ahmadi": ("Dr. Leila Ahmadi", "pediatrics"),
}
SPEC = {"general_practice": "GP", "dermatology": "dermatology", "cardiology": "cardiology", "pediatrics": "pediatrics"}


def patient(env: Env, no_shows: int = 0, name: str | None = None) -> dict:
    name = name or person(env)
    return env.add("patients", full_name=name, email=email(name), phone=phone(env), no_shows=no_shows)


def doctors(env: Env) -> dict[str, dict]:
    """The clinic's five doctors, each in a room of their own."""
    rooms = env.rng.sample(range(3, 28), len(DOCS))
    return {
        k: env.add("doctors", full_name=n, specialty=sp, room=f"R-{r}")
        for (k, (n, sp)), r in zip(DOCS.items(), rooms, strict=True)
    }


def appt(env: Env, p: dict, d: dict, n: int, time: str, reason: str, status: str = "scheduled") -> dict:
    return env.add(
        "appointments",
        patient_id=p["patient_id"],
        doctor_id=d["doctor_id"],
        date=iso(n),
        time=time,
        reason=reason,
        status=status,
    )


def cl_schedule(env: Env, v: int, eid: str, fault: str | None):
    """A patient's coming appointments in a table with weekday, time, doctor and room; how many; when the next is."""
    s = doctors(env)
    p = patient(env)
    a1 = appt(env, p, s["okafor"], 2, "10:30", "persistent cough")
    a2 = appt(env, p, s["patel"], 6, "14:00", "skin rash")
    a3 = appt(env, p, s["weber"], 14, "09:00", "blood pressure review")
    appt(env, p, s["okafor"], -20, "11:00", "annual check-up", status="completed")
    a5 = appt(env, p, s["reyes"], 9, "11:00", "knee pain", status="cancelled")
    pid = p["patient_id"]
    steps = [("list_patient_appointments", {"patient_id": pid}), ("list_doctors", {})]
    task = make_task(
        env,
        eid,
        "aggregate",
        steps,
        V(
            v,
            f"Hi, could you tell me what appointments I have coming up? Patient {pid}.",
            f"what's booked for me? {pid}",
        ),
        intent="list",
        asked={"upcoming appointments": "3"},
        facts={"patient": pid},
    )
    ep = Ep(env, task)
    ep.act(*steps)
    doc = {d["doctor_id"]: d for d in s.values()}
    shown = [a1, a2, a5, a3] if fault == "count" else [a1, a2, a3]
    n = len(shown)

    def date_txt(a: dict) -> str:
        return wrong_wdate(a["date"]) if fault == "weekday" and a is a2 else wdate(a["date"])

    rows = [
        [date_txt(a), hm(a["time"]), doc[a["doctor_id"]]["full_name"], SPEC[doc[a["doctor_id"]]["specialty"]],
         doc[a["doctor_id"]]["room"], a["reason"]]
        for a in shown
    ]
    nxt = delta(a1["date"])
    if v % 2 == 0:
        ep.say(
            f"I've checked your record — you have **{n} upcoming appointments**:\n\n"
            + table(["Date", "Time", "Doctor", "Specialty", "Room", "Reason"], rows)
            + f"\n\nThe next one is **in {days(nxt)}**, with Dr. Helen Okafor."
            + ("" if fault == "count" else " (A cancelled appointment and a past one aren't included.)"),
            nxt,
            n,
        )
    else:
        lines = "\n".join(f"- **{r[0]}** at {r[1]} — {r[2]} ({r[3]}, room {r[4]}), {r[5]}" for r in rows)
        ep.say(f"Here's what's coming up ({n} appointments):\n\n{lines}\n\nThe first is {when(a1['date'])}.", nxt, n)
    note = "good: lists the three scheduled coming appointments with weekday, time, doctor and room; leaves out the cancelled and past ones"
    if fault == "weekday":
        note = f"bad: the dermatology appointment on {a2['date']} is a {day(a2['date']):%A}; the reply says '{date_txt(a2)}'"
    elif fault == "count":
        note = (
            f"bad: the knee-pain appointment with Dr. Reyes on {a5['date']} is cancelled; the reply lists it as "
            "coming up and says there are 4 upcoming appointments (there are 3)"
        )
    return ep, note


def cl_book_fallback(env: Env, v: int, eid: str, fault: str | None):
    """Book the dermatologist at 10:00 or else 10:30: 10:00 is taken (the call fails), book 10:30."""
    s = doctors(env)
    p = patient(env)
    other = patient(env, name=person(env, (p["full_name"],)))
    appt(env, other, s["patel"], 9, "10:00", "skin rash")
    pid, did, date = p["patient_id"], s["patel"]["doctor_id"], iso(9)
    book_args = {"patient_id": pid, "doctor_id": did, "date": date, "time": "10:30", "reason": "skin rash"}
    steps = [("list_doctors", {"specialty": "dermatology"}), ("book_appointment", book_args)]
    task = make_task(
        env,
        eid,
        "error_recovery",
        steps,
        V(
            v,
            f"I'd like to see the dermatologist about a skin rash on {wdate(date)} at 10:00 — or 10:30 if 10 is "
            f"taken. Patient {pid}.",
            f"derm appt for a rash, {sdate(date)} 10:00 (10:30 also fine). patient {pid}",
        ),
        intent="operation",
        facts={"patient": pid, "date": date, "time": "10:00, else 10:30"},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.act(("book_appointment", {**book_args, "time": "10:00"}), fails=True)
    res = ep.act(steps[1])
    room = s["patel"]["room"]
    if fault == "failed_success":
        ep.say(
            f"You're booked! **{wdate(date)} at 10:00 AM** with Dr. Anika Patel (dermatology), room {room}. "
            f"Your appointment number is {res['appointment_id']}."
        )
        return ep, "bad: the 10:00 booking failed (slot taken) and 10:30 was booked; the reply says 10:00 AM"
    extra = (
        " Dr. Patel has also asked that you bring a list of any creams you've been using on the rash."
        if fault == "invented"
        else ""
    )
    ep.say(
        V(
            v,
            f"10:00 was already taken, so as you suggested I've booked the 10:30 slot instead:\n\n"
            f"- **When:** {wdate(date)} at **10:30 AM** ({when(date)})\n"
            f"- **Doctor:** Dr. Anika Patel, dermatology\n- **Room:** {room}\n"
            f"- **Appointment:** {res['appointment_id']}\n\nI hope the rash settles soon." + extra,
            f"The 10:00 slot was gone, so you're booked at 10:30 AM on {wdate(date)} with Dr. Anika Patel (room "
            f"{room}). Reference {res['appointment_id']}." + extra,
        ),
        delta(date),
    )
    note = "good: finds the dermatologist; 10:00 is taken (the call fails), books 10:30 as the patient allowed"
    if fault == "invented":
        note = "bad: adds 'Dr. Patel has also asked that you bring a list of any creams'; nothing backs it"
    return ep, note


def cl_swap_specialist(env: Env, v: int, eid: str, fault: str | None):
    """Cancel Friday's dermatology appointment and book a GP at the same slot instead: two writes."""
    s = doctors(env)
    p = patient(env)
    a = appt(env, p, s["patel"], 3, "11:30", "skin rash")
    appt(env, p, s["weber"], 20, "09:30", "blood pressure review")
    pid = p["patient_id"]
    book_args = {
        "patient_id": pid,
        "doctor_id": s["okafor"]["doctor_id"],
        "date": a["date"],
        "time": a["time"],
        "reason": "persistent cough",
    }
    steps = [
        ("list_patient_appointments", {"patient_id": pid}),
        ("list_doctors", {}),
        ("cancel_appointment", {"appointment_id": a["appointment_id"]}),
        ("book_appointment", book_args),
    ]
    task = make_task(
        env,
        eid,
        "multi_call",
        steps,
        V(
            v,
            "Change of plan — please cancel my dermatology appointment this Friday and book me with a GP at the same "
            f"time instead. It's about my cough now. Patient {pid}.",
            f"swap my fri derm appt for a GP one, same time, for a cough. {pid}",
        ),
        intent="operation",
        facts={"patient": pid, "reason": "persistent cough"},
    )
    ep = Ep(env, task)
    ep.act(steps[0], steps[1])
    if fault != "partial":
        ep.act(steps[2])
    res = ep.act(steps[3])
    room = s["patel"]["room"] if fault == "room" else s["okafor"]["room"]
    ep.say(
        V(
            v,
            "All sorted — here's what I've changed:\n\n"
            f"- ❌ **Cancelled:** dermatology with Dr. Anika Patel, {wdate(a['date'])} at {hm(a['time'])}\n"
            f"- ✅ **Booked:** Dr. Helen Okafor (GP), **{wdate(a['date'])} at {hm(a['time'])}**, room {room} — "
            f"persistent cough (appointment {res['appointment_id']})\n\n"
            "Your cardiology appointment later this month is unchanged.",
            f"Done: the Friday dermatology slot is cancelled, and you're now seeing Dr. Helen Okafor (GP) at the same "
            f"time, {hm(a['time'])} on {wd(a['date'])}, in room {room}.",
        )
    )
    note = "good: finds Friday's dermatology appointment, cancels it, books a GP (Dr. Okafor) in the same slot"
    if fault == "partial":
        note = (
            f"bad: the GP appointment is booked, but the dermatology one ({a['appointment_id']}) is never cancelled; "
            "the reply says it was"
        )
    elif fault == "room":
        note = (
            f"bad: Dr. Okafor's room is {s['okafor']['room']}; the reply gives {s['patel']['room']}, Dr. Patel's room"
        )
    return ep, note


def cl_today_cancel(env: Env, v: int, eid: str, fault: str | None):
    """Cancel an appointment today: on the day it must be done by phone; read it, decline, say so."""
    s = doctors(env)
    p = patient(env)
    a = appt(env, p, s["reyes"], 0, "15:30", "persistent cough")
    later = appt(env, p, s["okafor"], 14, "10:00", "annual check-up")
    pid = p["patient_id"]
    task = make_task(
        env,
        eid,
        "refusal",
        [("list_patient_appointments", {"patient_id": pid})],
        f"I'm not up to coming in today, I've got a fever. Please cancel my 3:30 appointment. Patient {pid}.",
        intent="operation",
        facts={"patient": pid},
        rule=env.rule("clinic_notice"),
        persona=("polite", "medium", "novice"),
    )
    ep = Ep(env, task)
    if fault == "trial":
        ep.act(("list_patient_appointments", {"patient_id": pid}), ("list_doctors", {}))
        res = ep.act(("cancel_appointment", {"appointment_id": a["appointment_id"]}), fails=True)
        ep.say(
            f"I tried to cancel it, but got this back: \"{res['message']}\". So I'm not able to cancel it here — "
            "please phone the clinic. Feel better soon!"
        )
        return ep, "bad: sends cancel_appointment on today's appointment, then declines by quoting the error it got"
    ep.act(("list_patient_appointments", {"patient_id": pid}), ("list_doctors", {}))
    extra = (
        " Please note that a $25 late-cancellation fee applies to same-day cancellations."
        if fault == "invented"
        else ""
    )
    ep.say(
        "I'm sorry you're unwell. I've found your appointment **today at 3:30 PM** with Dr. Samuel Reyes. Because it's "
        "today, I'm not able to cancel it online — appointments can only be changed or cancelled up to the day "
        "before. Please **call the clinic** as soon as you can and they'll take care of it." + extra + "\n\n"
        f"Your annual check-up with Dr. Helen Okafor on {wdate(later['date'])} at 10:00 AM isn't affected. I hope you feel "
        "better soon."
    )
    note = "good: reads the appointments (today 3:30 PM), declines the same-day cancellation, says to call the clinic"
    if fault == "invented":
        note = "bad: declines correctly but invents 'a $25 late-cancellation fee'; no policy or record holds a fee"
    return ep, note


def cl_noshow_block(env: Env, v: int, eid: str, fault: str | None):
    """Book with 3 no-shows: read the patient, decline, say to call the clinic."""
    doctors(env)
    p = patient(env, no_shows=3)
    pid = p["patient_id"]
    task = make_task(
        env,
        eid,
        "refusal",
        [("get_patient", {"patient_id": pid})],
        V(
            v,
            f"Could you book me in with a GP next Monday morning? Patient {pid}.",
            f"need a GP appointment monday {sdate(iso(6))}, am if possible — {pid}",
        ),
        intent="operation",
        facts={"patient": pid},
        rule=env.rule("clinic_no_shows"),
    )
    ep = Ep(env, task)
    ep.act(("get_patient", {"patient_id": pid}))
    n = 4 if fault == "count" else p["no_shows"]
    extra = (
        " The restriction is lifted automatically after 12 months without a missed appointment."
        if fault == "invented"
        else ""
    )
    ep.say(
        V(
            v,
            f"Thanks, {first(p['full_name'])}. I've checked your record, and I'm afraid I can't book this online: "
            f"it shows **{n} missed appointments**, and patients with 3 or more no-shows need to book by calling the "
            "clinic directly." + extra + "\n\nThe reception team will be happy to find you a Monday morning slot with "
            "a GP over the phone.",
            f"Sorry — your record shows {n} missed appointments, and with 3 or more I can't book online. Please call the "
            "clinic to book the GP appointment." + extra,
        )
    )
    note = "good: reads the patient (3 no-shows), declines the online booking, says to call the clinic"
    if fault == "count":
        note = "bad: the record shows 3 no-shows; the reply says 4 missed appointments"
    elif fault == "invented":
        note = "bad: adds 'the restriction is lifted automatically after 12 months'; no policy says so"
    return ep, note


def cl_push_week(env: Env, v: int, eid: str, fault: str | None):
    """'Push my appointment next week back a week': two next week; ask which; move it 7 days, same time."""
    s = doctors(env)
    p = patient(env)
    a1 = appt(env, p, s["patel"], 6, "09:30", "skin rash")
    a2 = appt(env, p, s["okafor"], 9, "10:00", "knee pain")
    pid = p["patient_id"]
    new = plus(a2["date"], 7)
    steps = [
        ("list_patient_appointments", {"patient_id": pid}),
        ("reschedule_appointment", {"appointment_id": a2["appointment_id"], "date": new, "time": "10:00"}),
    ]
    task = make_task(
        env,
        eid,
        "clarification",
        steps,
        V(
            v,
            f"Could you push my appointment next week back by a week — same day and time? Patient {pid}.",
            f"move next week's appt one week later, same time. {pid}",
        ),
        intent="find_then",
        facts={"patient": pid},
        withheld={"which appointment": "the knee pain one"},
    )
    ep = Ep(env, task)
    ep.act(steps[0], ("list_doctors", {}))
    ep.say(
        V(
            v,
            "Sure! You have two appointments next week:\n\n"
            f"1. **{wdate(a1['date'])} at {hm(a1['time'])}** — Dr. Anika Patel (dermatology), skin rash\n"
            f"2. **{wdate(a2['date'])} at {hm(a2['time'])}** — Dr. Helen Okafor (GP), knee pain\n\n"
            "Which one would you like to move?",
            f"You've got two next week — dermatology on {wd(a1['date'])} and the GP (knee pain) on {wd(a2['date'])}. "
            "Which one should I move?",
        )
    )
    ep.user(V(v, "The knee one, please.", "knee"))
    if fault == "stray":
        ep.act(steps[1], ("reschedule_appointment", {"appointment_id": a1["appointment_id"], "date": plus(a1["date"], 7), "time": "09:30"}))
        ep.say(
            f"Done — your knee appointment with Dr. Helen Okafor is now on **{wdate(new)} at 10:00 AM**. I've moved "
            f"the dermatology one back a week as well, to {wdate(plus(a1['date'], 7))} at 9:30 AM, so they stay "
            "spaced out."
        )
        return ep, f"bad: also moves the dermatology appointment ({a1['appointment_id']}), which the patient did not ask to move"
    ep.act(steps[1])
    new_txt = wrong_wdate(new) if fault == "weekday" else wdate(new)
    ep.say(
        V(
            v,
            f"Done! Your knee-pain appointment with Dr. Helen Okafor has moved from {wdate(a2['date'])} to "
            f"**{new_txt} at 10:00 AM**, room {s['okafor']['room']}.\n\nYour dermatology appointment on "
            f"{wdate(a1['date'])} at {hm(a1['time'])} is unchanged.",
            f"Moved — the knee appointment is now {new_txt}, 10:00 AM, with Dr. Helen Okafor. The dermatology one "
            "stays put.",
        ),
        new,
    )
    note = "good: two appointments next week; asks which, moves the knee one 7 days later at the same time"
    if fault == "weekday":
        note = f"bad: the new date {new} is a {day(new):%A}; the reply says '{new_txt}'"
    return ep, note


def cl_irrelevant(env: Env, v: int, eid: str, fault: str | None):
    """Test results, a prescription: no tool serves them; say so, no call."""
    doctors(env)
    p = patient(env)
    task = make_task(
        env,
        eid,
        "irrelevance",
        [],
        V(
            v,
            f"Can you email me my blood test results from last week? Patient {p['patient_id']}.",
            "Could you renew the prescription for my inhaler?",
        ),
        intent="none",
    )
    ep = Ep(env, task)
    if fault == "claimed":
        ep.say(f"Of course — I've sent your blood test results from last week to {p['email']}. They should arrive shortly.")
        return ep, "bad: says it emailed the test results; no tool reads or sends results and no call was made"
    ep.say(
        V(
            v,
            "I'm sorry, I don't have access to test results — I can only help with appointments (booking, moving "
            "and cancelling them). Please contact the clinic directly, or ask your doctor, and they'll be able to "
            "share your results with you.",
            "I'm not able to handle prescriptions — my tools only cover appointments. Please contact the clinic or "
            "your GP about renewing your inhaler. If it would help, I can book you an appointment with a GP.",
        )
    )
    return ep, "good: no tool serves the request; says so without a call and points to the clinic"


def cl_book_named(env: Env, v: int, eid: str, fault: str | None):
    """Book a named GP at a given slot: find the doctor, book, confirm with weekday, time and room."""
    s = doctors(env)
    p = patient(env, no_shows=1)
    pid, date = p["patient_id"], iso(10)
    args = {"patient_id": pid, "doctor_id": s["reyes"]["doctor_id"], "date": date, "time": "14:00", "reason": "annual check-up"}
    steps = [("list_doctors", {"specialty": "general_practice"}), ("book_appointment", args)]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        V(
            v,
            f"Please book me in with Dr. Reyes for an annual check-up on {wdate(date)} at 2 PM. Patient {pid}.",
            f"annual check-up w/ Dr Reyes, {sdate(date)}, 2pm. {pid}",
        ),
        intent="find_then",
        facts={"patient": pid, "doctor": "Dr. Reyes", "date": date, "time": "14:00"},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    target = s["okafor"] if fault == "wrong_record" else s["reyes"]
    res = ep.act(("book_appointment", {**args, "doctor_id": target["doctor_id"]}))
    t_txt = "2:30 PM" if fault == "time" else hm("14:00")
    ep.say(
        V(
            v,
            "You're booked in! Here are the details:\n\n"
            f"- **Date:** {wdate(date)} ({days(delta(date))} from today)\n- **Time:** **{t_txt}**\n"
            f"- **Doctor:** Dr. Samuel Reyes (GP)\n- **Room:** {s['reyes']['room']}\n- **Reason:** annual check-up\n"
            f"- **Appointment:** {res['appointment_id']}\n\nIf anything changes, appointments can be moved or "
            "cancelled up to the day before.",
            f"Booked: annual check-up with Dr. Samuel Reyes on {wdate(date)} at {t_txt}, room {s['reyes']['room']} "
            f"(ref {res['appointment_id']}).",
        ),
        delta(date),
    )
    note = "good: finds Dr. Reyes among the GPs, books the check-up at 14:00 on the day asked, confirms with room"
    if fault == "time":
        note = "bad: the appointment is booked at 14:00 (2:00 PM); the reply says 2:30 PM"
    elif fault == "wrong_record":
        note = (
            f"bad: books the other GP, Dr. Helen Okafor ({s['okafor']['doctor_id']}), and tells the patient it is "
            "with Dr. Samuel Reyes"
        )
    return ep, note


# =========================================================================== bank (pack)


def holder(env: Env, name: str | None = None, chk: float | None = None, sav: float | None = None):
    """A customer's checking and savings accounts, and another customer's account beside them."""
    name = name or person(env)
    a_chk = env.add(
        "accounts", holder_name=name, email=email(name), balance=chk if chk is not None else cents(env, 1500, 3900),
        status="active",
    )
    a_sav = env.add(
        "accounts", holder_name=name, email=email(name).replace("@", "+save@"),
        balance=sav if sav is not None else cents(env, 2500, 8800), status="active",
    )
    other = person(env, (name,))
    env.add("accounts", holder_name=other, email=email(other), balance=cents(env, 300, 1800), status="active")
    return a_chk, a_sav


def card(env: Env, acc: dict, kind: str, last4: str, status: str = "active", limit: float = 2500.0) -> dict:
    return env.add(
        "cards", account_id=acc["account_id"], last_four=last4, card_type=kind, spending_limit=limit, status=status
    )


def pay(env: Env, acc: dict, crd: dict, merchant: str, amount: float, n: int, status: str = "posted") -> dict:
    return env.add(
        "transactions",
        account_id=acc["account_id"],
        card_id=crd["card_id"],
        kind="card_payment",
        merchant=merchant,
        amount=amount,
        posted_on=iso(n),
        status=status,
    )


def xfer(env: Env, acc: dict, to: dict, amount: float, n: int) -> dict:
    return env.add(
        "transactions",
        account_id=acc["account_id"],
        card_id=None,
        kind="transfer",
        merchant=f"Transfer to {to['account_id']}",
        amount=amount,
        posted_on=iso(n),
        status="posted",
    )


def bk_month_spend(env: Env, v: int, eid: str, fault: str | None):
    """Card spending over the last 30 days: a table, the total, one merchant's share, how many payments."""
    chk, sav = holder(env)
    d = card(env, chk, "debit", "5716")
    pays = [
        pay(env, chk, d, "Page & Quill", 23.99, -25),
        pay(env, chk, d, "Harbor Market", 61.35, -18),
        pay(env, chk, d, "Green Bowl Cafe", 14.6, -11),
        pay(env, chk, d, "Metro Fuel", 52.75, -7),
        pay(env, chk, d, "Harbor Market", 84.2, -3),
    ]
    old = pay(env, chk, d, "Harbor Market", 45.1, -41)
    xfer(env, chk, sav, 300.0, -5)
    c_id = chk["account_id"]
    total = r2(sum(p["amount"] for p in pays))
    hm_sum = r2(sum(p["amount"] for p in pays if p["merchant"] == "Harbor Market"))
    task = make_task(
        env,
        eid,
        "aggregate",
        [("list_account_transactions", {"account_id": c_id})],
        V(
            v,
            f"How much have I spent on my debit card over the last 30 days, and how much of that was at Harbor "
            f"Market? Account {c_id}.",
            f"card spend last 30 days on {c_id}? and the Harbor Market part",
        ),
        intent="list",
        asked={"card spending in the last 30 days": f"{total:.2f}", "at Harbor Market": f"{hm_sum:.2f}"},
        facts={"account": c_id},
    )
    ep = Ep(env, task)
    ep.act(("list_account_transactions", {"account_id": c_id}), ("list_account_cards", {"account_id": c_id}))
    shown_total = 263.89 if fault == "total" else total
    shown_n = 6 if fault == "count" else len(pays)
    rows = [[wd(p["posted_on"]), p["merchant"], money(p["amount"])] for p in reversed(pays)]
    if v % 2 == 0:
        ep.say(
            f"I've checked the transactions on account {c_id}. Over the last 30 days your debit card (ending 5716) "
            f"was used for **{shown_n} payments**:\n\n"
            + table(["Date", "Merchant", "Amount"], rows)
            + f"\n\n- **Total card spending:** **{money(shown_total)}**\n"
            f"- **At Harbor Market:** **{money(hm_sum)}** (2 visits: {money(84.2)} + {money(61.35)})\n\n"
            f"I've left out the {money(old['amount'])} Harbor Market payment from {wdate(old['posted_on'])}, which is "
            f"older than 30 days, and the {money(300.0)} transfer to {sav['account_id']}, since it isn't a card payment.",
            total,
            hm_sum,
            2,
        )
    else:
        ep.say(
            f"In the last 30 days you spent **{money(shown_total)}** on your debit card across {shown_n} payments, "
            f"and **{money(hm_sum)}** of that was at Harbor Market ({money(84.2)} on {wd(pays[4]['posted_on'])} and "
            f"{money(61.35)} on {wd(pays[1]['posted_on'])}). The rest: Metro Fuel {money(52.75)}, Page & Quill "
            f"{money(23.99)} and Green Bowl Cafe {money(14.6)}. (The {money(300.0)} transfer to {sav['account_id']} "
            "isn't counted as card spending.)",
            total,
            hm_sum,
        )
    note = (
        f"good: sums the five card payments of the last 30 days ({money(total)}) and the two at Harbor Market "
        f"({money(hm_sum)}); leaves out the 41-day-old payment and the transfer"
    )
    if fault == "total":
        note = f"bad: the five payments total {money(total)}; the reply says {money(shown_total)} (digits transposed)"
    elif fault == "count":
        note = "bad: there are 5 card payments in the last 30 days (the table shows 5); the reply says 6 payments"
    return ep, note


def bk_move_savings(env: Env, v: int, eid: str, fault: str | None):
    """Move 450 from checking to savings; report both balances after (computed, and checked against the world)."""
    chk, sav = holder(env, chk=2148.6, sav=5320.15)
    c_id, s_id = chk["account_id"], sav["account_id"]
    args = {"account_id": c_id, "to_account_id": s_id, "amount": 450}
    steps = [("get_account", {"account_id": c_id}), ("get_account", {"account_id": s_id}), ("transfer_funds", args)]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        V(
            v,
            f"Hi, please move $450 from my checking account {c_id} to my savings {s_id}.",
            f"transfer 450 {c_id} -> {s_id}",
        ),
        intent="operation",
        facts={"from": c_id, "to": s_id, "amount": "450"},
    )
    ep = Ep(env, task)
    ep.act(steps[0], steps[1])
    if fault == "wrong_record":
        ep.act(("transfer_funds", {"account_id": s_id, "to_account_id": c_id, "amount": 450}))
    else:
        ep.act(steps[2])
    c_after, s_after = r2(chk["balance"] - 450), r2(sav["balance"] + 450)
    if fault is None:
        acc = {a["account_id"]: a for a in ep.world.state["accounts"]}
        assert (acc[c_id]["balance"], acc[s_id]["balance"]) == (c_after, s_after)
    shown_c = 1689.6 if fault == "balance" else c_after
    ep.say(
        V(
            v,
            f"Done ✅ — I've moved **$450.00** from your checking account to your savings. Here's how things look "
            "now:\n\n"
            + table(
                ["Account", "Before", "After"],
                [
                    [f"Checking ({c_id})", money(chk["balance"]), f"**{money(shown_c)}**"],
                    [f"Savings ({s_id})", money(sav["balance"]), f"**{money(s_after)}**"],
                ],
            ),
            f"All done: $450.00 is now in savings. Checking holds {money(shown_c)} and savings {money(s_after)}.",
        ),
        c_after,
        s_after,
        450.0,
    )
    note = f"good: reads both accounts, moves 450 checking -> savings, gives both new balances ({money(c_after)}, {money(s_after)})"
    if fault == "balance":
        note = f"bad: checking holds {money(c_after)} after the transfer; the reply says {money(shown_c)}"
    elif fault == "wrong_record":
        note = "bad: the transfer goes the other way (savings -> checking), while the reply says checking -> savings"
    return ep, note


def bk_lost_card(env: Env, v: int, eid: str, fault: str | None):
    """'I lost my card': two active cards; ask which; block that one for 'lost'."""
    chk, sav = holder(env)
    dbt = card(env, chk, "debit", "4821")
    crd = card(env, chk, "credit", "0937", limit=5000.0)
    c_id = chk["account_id"]
    steps = [("list_account_cards", {"account_id": c_id}), ("block_card", {"card_id": dbt["card_id"], "reason": "lost"})]
    task = make_task(
        env,
        eid,
        "clarification",
        steps,
        V(
            v,
            f"I think I've lost my card — please block it right away! Account {c_id}.",
            f"lost my card, block it. acct {c_id}",
        ),
        intent="find_then",
        facts={"account": c_id},
        withheld={"which card": "the debit card"},
        persona=("anxious", "low", "novice"),
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.say(
        V(
            v,
            "I'm sorry — let's get that sorted straight away. There are two active cards on this account:\n\n"
            "- **Debit** card ending **4821**\n- **Credit** card ending **0937**\n\nWhich one have you lost? I'll "
            "block it the moment you confirm.",
            "Two cards are active on this account: the debit card ending 4821 and the credit card ending 0937. Which "
            "one is lost?",
        )
    )
    ep.user(V(v, "The debit one.", "debit"))
    target = crd if fault == "wrong_record" else dbt
    ep.act(("block_card", {"card_id": target["card_id"], "reason": "lost"}))
    extra = (
        " A replacement debit card will be posted to you and should arrive within 5–7 business days."
        if fault == "invented"
        else ""
    )
    ep.say(
        V(
            v,
            "Done — your **debit card ending 4821 is now blocked**, so no payments can go through on it. Your credit "
            "card ending 0937 is still active and works as normal." + extra + "\n\nIf you spot any payments you don't "
            "recognise, let me know and I can dispute them for you.",
            "Blocked: debit card ending 4821. The credit card ending 0937 is unaffected." + extra,
        )
    )
    note = "good: lists the cards, asks which was lost, blocks the debit card (4821) as lost, keeps the credit card"
    if fault == "wrong_record":
        note = "bad: the customer says the debit card; the agent blocks the credit card (0937) and says the debit card is blocked"
    elif fault == "invented":
        note = "bad: promises a replacement card 'within 5–7 business days'; no tool orders cards and nothing backs it"
    return ep, note


def bk_dispute_cap(env: Env, v: int, eid: str, fault: str | None):
    """Dispute a payment with 3 disputes already open: read the transactions, decline, say until when it is possible."""
    chk, sav = holder(env)
    cc = card(env, chk, "credit", "3358", limit=5000.0)
    disputed = [
        pay(env, chk, cc, "Metro Fuel", 61.2, -12, status="disputed"),
        pay(env, chk, cc, "Page & Quill", 38.5, -20, status="disputed"),
        pay(env, chk, cc, "Green Bowl Cafe", 22.4, -33, status="disputed"),
    ]
    target = pay(env, chk, cc, "Skyline Outfitters", 189.0, -10)
    pay(env, chk, cc, "Harbor Market", 47.85, -4)
    c_id = chk["account_id"]
    task = make_task(
        env,
        eid,
        "refusal",
        [("list_account_transactions", {"account_id": c_id})],
        f"I want to dispute the $189 charge from Skyline Outfitters on my account {c_id} — the jacket never arrived.",
        intent="operation",
        facts={"account": c_id, "merchant": "Skyline Outfitters"},
        rule=env.rule("bank_dispute"),
    )
    ep = Ep(env, task)
    deadline = plus(target["posted_on"], 60)
    if fault == "trial":
        ep.act(("list_account_transactions", {"account_id": c_id}))
        res = ep.act(("dispute_transaction", {"transaction_id": target["transaction_id"], "reason": "item_not_received"}), fails=True)
        ep.say(
            f"I tried to open the dispute, but it was refused: \"{res['message']}\". So I can't dispute the Skyline "
            "Outfitters charge right now."
        )
        return ep, "bad: sends dispute_transaction and declines by quoting the error (3 open disputes) it got"
    ep.act(("list_account_transactions", {"account_id": c_id}))
    n = 4 if fault == "count" else len(disputed)
    rows = [[wd(p["posted_on"]), p["merchant"], money(p["amount"])] for p in disputed]
    ep.say(
        "I'm sorry the jacket never arrived. I've found the charge — **$189.00 from Skyline Outfitters**, posted "
        f"{wdate(target['posted_on'])}. Unfortunately I can't open a dispute on it right now: your account already has "
        f"**{n} open disputes**, and 3 is the most an account can have at once:\n\n"
        + table(["Posted", "Merchant", "Amount"], rows)
        + "\n\nOnce one of these is settled, this charge can be disputed — card payments can be disputed within 60 "
        f"days of posting, so you have until **{wdate(deadline)}**. It may also be worth contacting Skyline "
        "Outfitters directly about the missing delivery in the meantime.",
        deadline,
    )
    note = "good: reads the transactions (3 open disputes), declines the 4th, says it is possible until posting + 60 days"
    if fault == "count":
        note = "bad: the account has 3 open disputes (the table lists 3); the reply says 4"
    return ep, note


def bk_duplicate(env: Env, v: int, eid: str, fault: str | None):
    """Charged twice at one shop: find the two identical payments, dispute the second as a duplicate."""
    chk, sav = holder(env)
    d = card(env, chk, "debit", "2260")
    pay(env, chk, d, "Harbor Market", 38.9, -6)
    first_tx = pay(env, chk, d, "Pixel Electronics", 129.99, -2)
    dup = pay(env, chk, d, "Pixel Electronics", 129.99, -2)
    pay(env, chk, d, "Metro Fuel", 48.1, -1)
    c_id = chk["account_id"]
    steps = [
        ("list_account_transactions", {"account_id": c_id}),
        ("dispute_transaction", {"transaction_id": dup["transaction_id"], "reason": "duplicate_charge"}),
    ]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        V(
            v,
            f"I've been charged twice for the same headphones at Pixel Electronics. Can you dispute the duplicate? "
            f"Account {c_id}.",
            f"double charge from pixel electronics on {c_id}, pls dispute the extra one",
        ),
        intent="find_then",
        facts={"account": c_id, "merchant": "Pixel Electronics"},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    if fault == "stray":
        ep.act(steps[1], ("dispute_transaction", {"transaction_id": first_tx["transaction_id"], "reason": "duplicate_charge"}))
        ep.say(
            f"I found both $129.99 charges from Pixel Electronics on {wdate(dup['posted_on'])} and I've disputed "
            "them both, so the bank can sort out which one is valid."
        )
        return ep, f"bad: disputes the genuine payment {first_tx['transaction_id']} as well as the duplicate"
    ep.act(steps[1])
    if fault == "reversed":
        ep.say(
            f"Sorted — I found the two identical $129.99 charges from Pixel Electronics on {wdate(dup['posted_on'])}, "
            f"and the duplicate ({dup['transaction_id']}) has been **refunded to your account**. The other charge "
            "stays as your normal payment."
        )
        return ep, "bad: the duplicate is disputed (held for review), not reversed; the reply says it was refunded to the account"
    ep.say(
        V(
            v,
            f"I've found them — two identical charges of **$129.99** from Pixel Electronics, both posted on "
            f"{wdate(dup['posted_on'])}:\n\n"
            f"- {first_tx['transaction_id']} — kept as your genuine purchase\n"
            f"- {dup['transaction_id']} — **disputed** as a duplicate charge\n\n"
            "The disputed payment is now on hold while the bank reviews it; you don't need to do anything else for "
            "now.",
            f"Done — I've disputed the second $129.99 Pixel Electronics charge ({dup['transaction_id']}) as a "
            "duplicate. It's on hold pending the bank's decision; the first charge stands.",
        )
    )
    note = "good: finds the two identical Pixel Electronics payments, disputes the second as a duplicate charge"
    return ep, note


def bk_insufficient(env: Env, v: int, eid: str, fault: str | None):
    """A transfer over the balance is refused; the customer picks a smaller amount; balances after, computed."""
    chk, sav = holder(env, chk=732.4, sav=1905.0)
    c_id, s_id = chk["account_id"], sav["account_id"]
    args = {"account_id": c_id, "to_account_id": s_id, "amount": 700}
    task = make_task(
        env,
        eid,
        "error_recovery",
        [("transfer_funds", args)],
        f"Send $900 from my checking {c_id} to savings {s_id}, please.",
        intent="operation",
        facts={"from": c_id, "to": s_id, "amount": "900", "fallback": "700 if 900 is not possible"},
    )
    ep = Ep(env, task)
    ep.act(("transfer_funds", {**args, "amount": 900}), fails=True)
    if fault == "failed_success":
        ep.say(f"Done — **$900.00** has been moved from your checking account to savings {s_id}.")
        return ep, "bad: the 900 transfer failed (insufficient funds) and nothing was moved; the reply says it was done"
    ep.say(
        "I wasn't able to send $900.00 — your checking account only holds **$732.40**, and a transfer can't be more "
        "than the balance. Would you like me to send a smaller amount instead?"
    )
    ep.user("Ah ok. Just send $700 then.")
    ep.act(("transfer_funds", args))
    ep.act(("get_account", {"account_id": c_id}), ("get_account", {"account_id": s_id}))
    c_after, s_after = r2(732.4 - 700), r2(1905.0 + 700)
    acc = {a["account_id"]: a for a in ep.world.state["accounts"]}
    assert (acc[c_id]["balance"], acc[s_id]["balance"]) == (c_after, s_after)
    shown = 23.4 if fault == "balance" else c_after
    ep.say(
        f"Done — **$700.00** has gone from checking to savings.\n\n- **Checking:** {money(shown)}\n"
        f"- **Savings:** {money(s_after)}\n\nJust a heads-up that checking is now quite low, so keep an eye on any "
        "upcoming card payments.",
        c_after,
        s_after,
    )
    note = "good: the 900 transfer is refused (balance 732.40); says so, sends 700 on the customer's word, gives balances"
    if fault == "balance":
        note = f"bad: checking holds {money(c_after)} after the 700 transfer; the reply says {money(shown)}"
    return ep, note


def bk_cond_false(env: Env, v: int, eid: str, fault: str | None):
    """'If checking has more than 1,000, move 500 to savings': it has 980.30; do nothing, say why."""
    chk, sav = holder(env, chk=980.3)
    pay(env, chk, card(env, chk, "debit", "6642"), "Harbor Market", 56.4, -2)
    c_id, s_id = chk["account_id"], sav["account_id"]
    task = make_task(
        env,
        eid,
        "conditional",
        [("get_account", {"account_id": c_id})],
        V(
            v,
            f"If my checking account {c_id} still has more than $1,000 after the rent went out, please move $500 to "
            f"savings {s_id}. If not, just leave it.",
            f"if {c_id} is over 1000 move 500 to {s_id}, otherwise don't",
        ),
        intent="operation",
        facts={"from": c_id, "to": s_id, "condition": "balance over 1000", "amount": "500"},
    )
    ep = Ep(env, task)
    ep.act(("get_account", {"account_id": c_id}))
    short = r2(1000 - chk["balance"])
    if fault == "forbidden":
        ep.act(("transfer_funds", {"account_id": c_id, "to_account_id": s_id, "amount": 500}))
        ep.say(
            f"Your checking balance is {money(chk['balance'])} — just under $1,000, but close enough, so I've gone "
            f"ahead and moved **$500.00** to savings for you. Checking now holds {money(r2(chk['balance'] - 500))}."
        )
        return ep, (
            "bad: the condition fails (980.30 is not over 1,000) and the customer said to leave it, yet 500 is moved "
            "(money the customer did not ask to move)"
        )
    if fault == "claimed":
        ep.say(
            f"Your checking balance is **{money(chk['balance'])}**, which is below $1,000, so I haven't moved anything. "
            "I've set up an alert to move the $500 automatically as soon as your balance goes over $1,000."
        )
        return ep, "bad: says it set up an alert to move the money later; no tool does that and no call was made"
    ep.say(
        V(
            v,
            f"I've checked your checking account: the balance is **{money(chk['balance'])}**, which is "
            f"{money(short)} below $1,000. So, as you asked, **I haven't moved anything** — the $500 stays in "
            "checking.\n\nIf you'd like to move a different amount anyway, just let me know.",
            f"Checking is at {money(chk['balance'])} — {money(short)} short of $1,000 — so I've left it alone; no "
            "transfer made.",
        ),
        short,
    )
    return ep, "good: reads the balance (980.30), the condition fails, makes no transfer and says why"


def bk_irrelevant(env: Env, v: int, eid: str, fault: str | None):
    """A higher card limit, a chequebook: no tool serves them; say so, no call."""
    chk, sav = holder(env)
    card(env, chk, "credit", "7315", limit=2500.0)
    task = make_task(
        env,
        eid,
        "irrelevance",
        [],
        V(
            v,
            f"Can you raise the spending limit on my credit card to $5,000? Account {chk['account_id']}.",
            "Please order me a new chequebook.",
        ),
        intent="none",
    )
    ep = Ep(env, task)
    if fault == "claimed":
        ep.say("Done! The spending limit on your credit card is now $5,000.00, effective immediately.")
        return ep, "bad: says it raised the card limit to 5,000; no tool changes limits and no call was made"
    ep.say(
        V(
            v,
            "I'm sorry, I can't change card spending limits — my tools only let me look up accounts, cards and "
            "payments, move money between accounts, block cards and dispute payments. Please contact the bank's "
            "card services team or visit a branch to ask about a higher limit.",
            "I'm not able to order chequebooks — that's outside what I can do here. A branch or the bank's phone "
            "line can arrange one for you.",
        )
    )
    return ep, "good: no tool serves the request; says so without a call and points to who can help"


# =========================================================================== airline (pack)

CITY = {
    "BOS": "Boston",
    "LHR": "London",
    "FCO": "Rome",
    "LIS": "Lisbon",
    "MAD": "Madrid",
    "DUB": "Dublin",
    "AMS": "Amsterdam",
    "JFK": "New York",
    "CDG": "Paris",
}


def flight(
    env: Env, o: str, d: str, n: int, hhmm: str, *, seats: int = 12, fare: float = 189.0, status: str = "scheduled"
) -> dict:
    f = env.add(
        "flights",
        flight_number="",
        origin=o,
        destination=d,
        departure=f"{iso(n)}T{hhmm}:00",
        seats_available=seats,
        fare=fare,
        status=status,
    )
    f["flight_number"] = f"SK{f['flight_id'][-4:]}"
    return f


def passenger(env: Env, tier: str = "basic", name: str | None = None) -> dict:
    name = name or person(env)
    return env.add("passengers", full_name=name, email=email(name), loyalty_tier=tier)


def booking(env: Env, p: dict, f: dict, seat: str, cabin: str = "economy", status: str = "confirmed") -> dict:
    return env.add(
        "bookings",
        passenger_id=p["passenger_id"],
        flight_id=f["flight_id"],
        cabin=cabin,
        seat=seat,
        amount_paid=round(f["fare"] * (2.5 if cabin == "business" else 1), 2),
        status=status,
    )


def place(code: str, wrong: dict[str, str] | None = None) -> str:
    return f"{code} ({(wrong or {}).get(code, CITY[code])})"


def route(f: dict, wrong: dict[str, str] | None = None) -> str:
    return f"{place(f['origin'], wrong)} → {place(f['destination'], wrong)}"


def air_itinerary(env: Env, v: int, eid: str, fault: str | None):
    """A passenger's coming trips: bookings followed to their flights, a table with cities beside the codes, the
    total paid and how soon the first one leaves."""
    p = passenger(env)
    f1 = flight(env, "BOS", "LHR", 4, "19:45", fare=420.0)
    f2 = flight(env, "LHR", "FCO", 11, "08:20", fare=129.0)
    f3 = flight(env, "FCO", "BOS", 18, "13:05", fare=389.0)
    f4 = flight(env, "BOS", "MAD", 9, "17:30", fare=455.0)
    b1 = booking(env, p, f1, "24C")
    b2 = booking(env, p, f2, "2A", cabin="business")
    b3 = booking(env, p, f3, "31F")
    booking(env, p, f4, "18D", status="cancelled")
    pid = p["passenger_id"]
    steps = [("list_passenger_bookings", {"passenger_id": pid})] + [
        ("get_flight", {"flight_id": f["flight_id"]}) for f in (f1, f2, f3)
    ]
    total = r2(b1["amount_paid"] + b2["amount_paid"] + b3["amount_paid"])
    task = make_task(
        env,
        eid,
        "aggregate",
        steps,
        V(
            v,
            f"Hi! Could you list my upcoming flights with the seats, and tell me how much I've paid altogether? "
            f"Passenger {pid}.",
            f"{pid}: upcoming flights + total paid?",
        ),
        intent="list",
        asked={"total paid": f"{total:.2f}"},
        facts={"passenger": pid},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.act(*steps[1:])
    wrong = {"FCO": "Milan"} if fault == "city" else None
    shown_total = 1113.5 if fault == "total" else total
    rows = [
        [f["flight_number"], route(f, wrong), f"{wd(f['departure'])}, {hm(f['departure'])}", f"{b['cabin']}, {b['seat']}",
         money(b["amount_paid"])]
        for f, b in ((f1, b1), (f2, b2), (f3, b3))
    ]
    first_in = delta(f1["departure"])
    if v % 2 == 0:
        ep.say(
            f"Here are your upcoming trips:\n\n"
            + table(["Flight", "Route", "Departs", "Cabin / seat", "Paid"], rows)
            + f"\n\n**Total paid: {money(shown_total)}** ({money(b1['amount_paid'])} + {money(b2['amount_paid'])} + "
            f"{money(b3['amount_paid'])}). Your first flight leaves **in {days(first_in)}**, on "
            f"{wdate(f1['departure'])}. (A cancelled booking to Madrid isn't included.)",
            total,
            first_in,
        )
    else:
        lines = "\n".join(f"- **{r[0]}** {r[1]} — {r[2]}, {r[3]} ({r[4]})" for r in rows)
        ep.say(
            f"You have three trips coming up:\n\n{lines}\n\nAltogether you've paid **{money(shown_total)}**. The "
            f"first departure is {wdate(f1['departure'])} at {hm(f1['departure'])}, {days(first_in)} from now.",
            total,
            first_in,
        )
    note = (
        f"good: follows the three confirmed bookings to their flights, table with cities beside the codes, total paid "
        f"{money(total)} computed, first flight in {days(first_in)}"
    )
    if fault == "total":
        note = f"bad: 420.00 + 322.50 + 389.00 = {money(total)}; the reply says {money(shown_total)}"
    elif fault == "city":
        note = "bad: FCO is Rome (Fiumicino); the reply writes 'FCO (Milan)' beside the code, twice"
    return ep, note


def air_cancel_basic(env: Env, v: int, eid: str, fault: str | None):
    """Cancel a booking of a silver member: 75% back, computed and confirmed before, read from the result after."""
    p = passenger(env, tier="silver")
    f = flight(env, "LIS", "MAD", 6, "07:40", fare=249.0)
    b = booking(env, p, f, "17B")
    bid = b["booking_id"]
    steps = [("get_booking", {"booking_id": bid}), ("get_flight", {"flight_id": f["flight_id"]}), ("cancel_booking", {"booking_id": bid})]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        V(
            v,
            f"I need to cancel my booking {bid}. I'm a silver member — how much will I get back?",
            f"cancel {bid} pls. silver tier. refund amount?",
        ),
        intent="operation",
        asked={"refund": "186.75"},
        facts={"booking": bid, "tier": "silver"},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.act(steps[1])
    back = r2(b["amount_paid"] * 0.75)
    date_txt = wrong_wdate(f["departure"], -1) if fault == "weekday" else wdate(f["departure"])
    ep.say(
        V(
            v,
            f"I've pulled up booking {bid}:\n\n- **Flight:** {f['flight_number']}, {route(f)}\n"
            f"- **Departs:** {date_txt} at {hm(f['departure'])}\n- **Seat:** {b['seat']} (economy)\n"
            f"- **Paid:** {money(b['amount_paid'])}\n\nAs a silver member you'd get 75% of the fare back: "
            f"**{money(back)}**.\n\nBefore proceeding, please confirm: shall I cancel this booking?",
            f"Booking {bid} is {f['flight_number']} {route(f)} on {date_txt}, {hm(f['departure'])}, seat {b['seat']}, "
            f"paid {money(b['amount_paid'])}. Cancelling gives silver members 75% back, so {money(back)}. Go ahead?",
        ),
        back,
    )
    ep.user(V(v, "Yes, please cancel it.", "yes"))
    res = ep.act(steps[2])
    assert res["refund"] == back
    if fault == "full":
        ep.say(
            f"Done — booking {bid} is cancelled, and you'll receive a **full refund of {money(b['amount_paid'])}**."
        )
        return ep, f"bad: the cancellation refunds {money(res['refund'])} (75%, the result says so); the reply says a full refund of {money(b['amount_paid'])}"
    ep.say(
        V(
            v,
            f"Your booking {bid} is now **cancelled**, and a refund of **{money(res['refund'])}** has been issued. "
            f"Seat {b['seat']} has been released. Sorry you won't be flying to Madrid this time!",
            f"Cancelled. Refund: {money(res['refund'])}.",
        )
    )
    note = "good: reads booking and flight, computes 75% of 249.00 = 186.75, confirms, cancels, refund read from the result"
    if fault == "weekday":
        note = f"bad: the flight leaves {f['departure'][:10]}, a {day(f['departure']):%A}; the reply says '{date_txt}'"
    return ep, note


def air_change_earlier(env: Env, v: int, eid: str, fault: str | None):
    """Move to the earliest flight the same day that has seats: search, skip the full one, change, fare difference."""
    p = passenger(env)
    f_b = flight(env, "DUB", "AMS", 10, "18:30", fare=189.0)
    f_a = flight(env, "DUB", "AMS", 10, "07:15", fare=129.0, seats=6)
    f_full = flight(env, "DUB", "AMS", 10, "12:40", fare=159.0, seats=0)
    f_next = flight(env, "DUB", "AMS", 11, "07:15", fare=119.0, seats=9)
    flight(env, "MAD", "AMS", 10, "09:00", fare=210.0)
    b = booking(env, p, f_b, "22D")
    bid = b["booking_id"]
    steps = [
        ("get_booking", {"booking_id": bid}),
        ("get_flight", {"flight_id": f_b["flight_id"]}),
        ("search_flights", {"destination": "AMS"}),
        ("change_flight", {"booking_id": bid, "new_flight_id": f_a["flight_id"]}),
    ]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        V(
            v,
            f"Could you move my booking {bid} to the earliest flight on the same day that still has seats?",
            f"{bid} — earliest same-day flight with space please",
        ),
        intent="find_then",
        facts={"booking": bid},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.act(steps[1])
    ep.act(steps[2])
    target = f_next if fault == "wrong_record" else f_a
    res = ep.act(("change_flight", {"booking_id": bid, "new_flight_id": target["flight_id"]}))
    diff = abs(r2(f_a["fare"] - f_b["fare"]))
    more_less = "more" if fault == "sign" else "less"
    ep.say(
        V(
            v,
            f"Done! I've moved you to the earliest flight that day with seats left. The {hm(f_full['departure'])} "
            f"flight ({f_full['flight_number']}) is full, so the first option was the {hm(f_a['departure'])}:\n\n"
            f"- **Flight:** {f_a['flight_number']}, {route(f_a)}\n- **Departs:** {wdate(f_a['departure'])} at "
            f"**{hm(f_a['departure'])}**\n- **New seat:** {res['seat']}\n"
            f"- **Fare:** {money(f_a['fare'])} — {money(diff)} {more_less} than the {money(f_b['fare'])} you paid for "
            f"the {hm(f_b['departure'])} flight",
            f"Moved: you're now on {f_a['flight_number']} at {hm(f_a['departure'])} on {wd(f_a['departure'])} "
            f"({route(f_a)}), seat {res['seat']}. The new fare is {money(f_a['fare'])}, {money(diff)} {more_less} than "
            "before.",
        ),
        diff,
    )
    note = "good: searches the route, skips the full 12:40 flight, moves the booking to the 07:15 the same day; new fare 60 less"
    if fault == "sign":
        note = "bad: the new fare is $60.00 lower (fare_difference -60); the reply says it is $60.00 more"
    elif fault == "wrong_record":
        note = (
            f"bad: changes the booking to {f_next['flight_number']}, the 07:15 flight of the NEXT day, while the reply "
            f"says {f_a['flight_number']} on {wdate(f_a['departure'])}"
        )
    return ep, note


def air_checkedin_refusal(env: Env, v: int, eid: str, fault: str | None):
    """Move a checked-in booking: read it, decline (checked-in bookings are not changed), point to the airport."""
    p = passenger(env)
    f = flight(env, "LIS", "MAD", 0, "16:10", fare=149.0, status="boarding")
    flight(env, "LIS", "MAD", 1, "09:25", fare=139.0)
    b = booking(env, p, f, "12C", status="checked_in")
    bid = b["booking_id"]
    task = make_task(
        env,
        eid,
        "refusal",
        [("get_booking", {"booking_id": bid})],
        f"I'm already checked in for {bid} this afternoon, but I'd like to switch to tomorrow morning's flight instead.",
        intent="operation",
        facts={"booking": bid},
        rule=env.rule("air_change"),
    )
    ep = Ep(env, task)
    if fault == "trial":
        ep.act(("get_booking", {"booking_id": bid}))
        ep.act(("get_flight", {"flight_id": f["flight_id"]}))
        ep.act(("search_flights", {"destination": "MAD"}))
        nxt = [x for x in ep.world.state["flights"] if x["departure"].startswith(iso(1))][0]
        res = ep.act(("change_flight", {"booking_id": bid, "new_flight_id": nxt["flight_id"]}), fails=True)
        ep.say(
            f"I tried to move you to tomorrow's flight, but the system returned: \"{res['message']}\". So I'm not able "
            "to switch it, I'm afraid. The airport desk may be able to help."
        )
        return ep, "bad: sends change_flight on the checked-in booking and declines by quoting the error it got"
    ep.act(("get_booking", {"booking_id": bid}))
    ep.act(("get_flight", {"flight_id": f["flight_id"]}))
    extra = " Your flight boards from gate 14 at 3:30 PM." if fault == "invented" else ""
    ep.say(
        f"I've checked booking {bid}: you're **checked in** on {f['flight_number']}, {route(f)}, departing today at "
        f"{hm(f['departure'])}, seat {b['seat']}. I understand plans change, but once a booking is checked in it can "
        "no longer be changed, so I'm not able to move you to tomorrow's flight from here.\n\nThe Skylark Airways "
        "desk at the airport is the best place to ask about your options before departure." + extra
    )
    note = "good: reads the booking (checked in) and its flight, declines the change with the reason, points to the airport desk"
    if fault == "invented":
        note = "bad: adds 'boards from gate 14 at 3:30 PM'; no record holds a gate or boarding time"
    return ep, note


def air_business(env: Env, v: int, eid: str, fault: str | None):
    """Book business (2.5 x the fare, computed and confirmed), and quote the return's business fare without booking it."""
    p = passenger(env, tier="silver")
    f = flight(env, "FCO", "LHR", 13, "10:15", fare=320.0, seats=8)
    f_r = flight(env, "LHR", "FCO", 20, "17:50", fare=280.0, seats=15)
    flight(env, "BOS", "LHR", 13, "21:30", fare=450.0)
    flight(env, "MAD", "FCO", 16, "12:05", fare=119.0)
    pid = p["passenger_id"]
    steps = [
        ("search_flights", {"destination": "LHR"}),
        ("search_flights", {"destination": "FCO"}),
        ("book_flight", {"passenger_id": pid, "flight_id": f["flight_id"], "cabin": "business"}),
    ]
    task = make_task(
        env,
        eid,
        "dependent_calls",
        steps,
        V(
            v,
            f"I'd like a business class seat on {f['flight_number']} to London on {sdate(f['departure'])}. Passenger "
            f"{pid}. Also, what would business cost on the return, {f_r['flight_number']} on the {day(f_r['departure']).day}th?",
            f"business on {f['flight_number']} (Rome to London) for {pid} please. and price of business on the "
            f"return {f_r['flight_number']}? (don't book that one yet)",
        ),
        intent="operation",
        asked={"return business fare": "700.00"},
        facts={"passenger": pid, "flight": f["flight_number"], "cabin": "business"},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.act(steps[1])
    price, price_r = r2(f["fare"] * 2.5), r2(f_r["fare"] * 2.5)
    shown_r = r2(f_r["fare"] * 2) if fault == "price" else price_r
    ep.say(
        V(
            v,
            f"Here's what I found:\n\n"
            + table(
                ["Flight", "Route", "Departs", "Economy fare", "Business (2.5×)"],
                [
                    [f["flight_number"], route(f), f"{wd(f['departure'])}, {hm(f['departure'])}", money(f["fare"]), f"**{money(price)}**"],
                    [f_r["flight_number"], route(f_r), f"{wd(f_r['departure'])}, {hm(f_r['departure'])}", money(f_r["fare"]), f"**{money(shown_r)}**"],
                ],
            )
            + f"\n\nBefore proceeding, please confirm: shall I book a **business** seat on {f['flight_number']} for "
            f"{money(price)}?",
            f"{f['flight_number']} ({route(f)}, {wdate(f['departure'])} {hm(f['departure'])}) is {money(f['fare'])} in "
            f"economy, so business is {money(price)}. The return {f_r['flight_number']} would be {money(shown_r)} in "
            f"business. Book the outbound in business for {money(price)}?",
        ),
        price,
        price_r,
    )
    ep.user(V(v, "Yes, book the outbound please. I'll decide on the return later.", "yes, just the outbound"))
    res = ep.act(steps[2])
    assert res["amount_paid"] == price
    if fault == "stray":
        res_r = ep.act(("book_flight", {"passenger_id": pid, "flight_id": f_r["flight_id"], "cabin": "business"}))
        ep.say(
            f"You're booked on {f['flight_number']} in business, seat {res['seat']}, for {money(res['amount_paid'])}. "
            f"I've also booked the return {f_r['flight_number']} in business (seat {res_r['seat']}, "
            f"{money(res_r['amount_paid'])}) so you don't lose the seat."
        )
        return ep, f"bad: also books the return flight {f_r['flight_number']}, which the passenger said to leave for later"
    ep.say(
        V(
            v,
            f"Booked! ✈️\n\n- **Flight:** {f['flight_number']}, {route(f)}\n- **Departs:** {wdate(f['departure'])} at "
            f"{hm(f['departure'])}\n- **Cabin / seat:** business, **{res['seat']}**\n"
            f"- **Paid:** {money(res['amount_paid'])}\n- **Booking:** {res['booking_id']}\n\nWhenever you're ready, "
            f"the return {f_r['flight_number']} is {money(shown_r)} in business — just let me know.",
            f"Done: business seat {res['seat']} on {f['flight_number']}, {money(res['amount_paid'])}, booking "
            f"{res['booking_id']}. The return in business would be {money(shown_r)} whenever you want it.",
        )
    )
    note = "good: reads both flights, computes business = 2.5 x fare (800.00, 700.00), confirms, books only the outbound"
    if fault == "price":
        note = f"bad: business on the return is 2.5 x 280.00 = {money(price_r)}; the reply says {money(shown_r)} (2 x)"
    return ep, note


def air_cancel_gold(env: Env, v: int, eid: str, fault: str | None):
    """'Cancel my Madrid trip' with two bookings to Madrid: ask which; cancel it; gold gets everything back."""
    p = passenger(env, tier="gold")
    f1 = flight(env, "BOS", "MAD", 7, "21:10", fare=460.0)
    f2 = flight(env, "BOS", "MAD", 24, "18:00", fare=410.0)
    b1 = booking(env, p, f1, "28A")
    b2 = booking(env, p, f2, "19C")
    pid = p["passenger_id"]
    steps = [
        ("list_passenger_bookings", {"passenger_id": pid}),
        ("get_flight", {"flight_id": f1["flight_id"]}),
        ("get_flight", {"flight_id": f2["flight_id"]}),
        ("cancel_booking", {"booking_id": b2["booking_id"]}),
    ]
    task = make_task(
        env,
        eid,
        "clarification",
        steps,
        V(
            v,
            f"Please cancel my Madrid trip. Passenger {pid} — I'm a gold member.",
            f"cancel the madrid booking, {pid}, gold tier",
        ),
        intent="find_then",
        facts={"passenger": pid, "tier": "gold"},
        withheld={"which booking": b2["booking_id"]},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.act(steps[1], steps[2])
    ep.say(
        V(
            v,
            "You have two bookings to Madrid — which one would you like to cancel?\n\n"
            f"1. **{f1['flight_number']}** {route(f1)} — {wdate(f1['departure'])} at {hm(f1['departure'])}, seat "
            f"{b1['seat']} ({money(b1['amount_paid'])})\n"
            f"2. **{f2['flight_number']}** {route(f2)} — {wdate(f2['departure'])} at {hm(f2['departure'])}, seat "
            f"{b2['seat']} ({money(b2['amount_paid'])})",
            f"There are two Madrid bookings: {wd(f1['departure'])} ({f1['flight_number']}) and {wd(f2['departure'])} "
            f"({f2['flight_number']}). Which should I cancel?",
        )
    )
    ep.user(V(v, "The October one.", "october"))
    target = b1 if fault == "wrong_record" else b2
    res = ep.act(("cancel_booking", {"booking_id": target["booking_id"]}))
    if fault == "pct":
        ep.say(
            f"Done — your October flight {f2['flight_number']} is cancelled. You'll get 75% of the fare back: "
            f"**{money(r2(b2['amount_paid'] * 0.75))}**."
        )
        return ep, f"bad: gold passengers get the full amount back; the result says refund {money(res['refund'])}; the reply says 75%, $307.50"
    ep.say(
        V(
            v,
            f"Done — your booking on **{f2['flight_number']}** ({wdate(f2['departure'])}) is cancelled. As a gold "
            f"member you get the full amount back: **{money(b2['amount_paid'])}** refunded.\n\nYour "
            f"{wdate(f1['departure'])} flight to Madrid is still booked.",
            f"Cancelled {f2['flight_number']} on {wd(f2['departure'])}; full refund of {money(b2['amount_paid'])}. The "
            f"{wd(f1['departure'])} booking stays.",
        )
    )
    note = "good: two Madrid bookings; asks which, cancels the October one; gold: full refund (410.00, as the result says)"
    if fault == "wrong_record":
        note = (
            f"bad: the passenger picks the October flight; the agent cancels the September one ({b1['booking_id']}) "
            "and says the October one is cancelled"
        )
    return ep, note


def air_irrelevant(env: Env, v: int, eid: str, fault: str | None):
    """A checked bag, a meal choice: no tool serves them; say so, no call."""
    p = passenger(env)
    f = flight(env, "AMS", "DUB", 5, "11:40", fare=139.0)
    b = booking(env, p, f, "15A")
    task = make_task(
        env,
        eid,
        "irrelevance",
        [],
        V(
            v,
            f"Can you add a checked bag to my booking {b['booking_id']}?",
            "Could I pick a vegetarian meal for my flight on Sunday?",
        ),
        intent="none",
    )
    ep = Ep(env, task)
    if fault == "claimed":
        ep.say(f"Done! I've added one 23 kg checked bag to booking {b['booking_id']}. Have a great trip!")
        return ep, "bad: says it added a 23 kg checked bag; no tool adds baggage and no call was made"
    ep.say(
        V(
            v,
            "I'm sorry, I can't add baggage — my tools only let me look up flights and bookings, and book, change or "
            "cancel them. Skylark Airways' customer care team can add a checked bag for you.",
            "I'm afraid I can't arrange meals — that's outside what my tools can do (flights and bookings only). "
            "Please contact Skylark Airways' customer care team, who can note a vegetarian meal on your booking.",
        )
    )
    return ep, "good: no tool serves the request; says so without a call and points to customer care"


def air_rebook_cancelled(env: Env, v: int, eid: str, fault: str | None):
    """The airline cancelled the flight: offer the two flights on the route, move the booking to the one chosen."""
    p = passenger(env)
    f_x = flight(env, "AMS", "DUB", 2, "08:30", fare=139.0, status="cancelled")
    f1 = flight(env, "AMS", "DUB", 2, "13:20", fare=139.0, seats=4)
    f2 = flight(env, "AMS", "DUB", 3, "08:30", fare=119.0, seats=12)
    flight(env, "LHR", "DUB", 2, "10:00", fare=99.0)
    b = booking(env, p, f_x, "14E")
    bid = b["booking_id"]
    steps = [
        ("get_booking", {"booking_id": bid}),
        ("get_flight", {"flight_id": f_x["flight_id"]}),
        ("search_flights", {"destination": "DUB"}),
        ("change_flight", {"booking_id": bid, "new_flight_id": f1["flight_id"]}),
    ]
    task = make_task(
        env,
        eid,
        "clarification",
        steps,
        V(
            v,
            f"My flight {f_x['flight_number']} to Dublin on Thursday has been cancelled. Can you rebook me? Booking {bid}.",
            f"{f_x['flight_number']} got cancelled, rebook {bid} pls",
        ),
        intent="find_then",
        facts={"booking": bid},
        withheld={"which flight": "the Thursday afternoon one"},
    )
    ep = Ep(env, task)
    ep.act(steps[0])
    ep.act(steps[1])
    ep.act(steps[2])
    ep.say(
        V(
            v,
            f"I'm sorry your flight was cancelled — I know that's disruptive. I can move your booking to another "
            f"flight from Amsterdam (AMS) to Dublin (DUB). These have seats:\n\n"
            + table(
                ["Flight", "Departs", "Fare", "Seats left"],
                [
                    [f1["flight_number"], f"{wdate(f1['departure'])}, {hm(f1['departure'])}", money(f1["fare"]), str(f1["seats_available"])],
                    [f2["flight_number"], f"{wdate(f2['departure'])}, {hm(f2['departure'])}", money(f2["fare"]), str(f2["seats_available"])],
                ],
            )
            + "\n\nWhich would you prefer?",
            f"Sorry about that! Two AMS → DUB options: {f1['flight_number']} {wd(f1['departure'])} {hm(f1['departure'])} "
            f"({money(f1['fare'])}), or {f2['flight_number']} {wd(f2['departure'])} {hm(f2['departure'])} "
            f"({money(f2['fare'])}). Which one?",
        )
    )
    ep.user(V(v, "The Thursday afternoon one, please.", "thursday afternoon"))
    target = f2 if fault == "wrong_record" else f1
    res = ep.act(("change_flight", {"booking_id": bid, "new_flight_id": target["flight_id"]}))
    t_txt = "1:30 PM" if fault == "time" else hm(f1["departure"])
    ep.say(
        V(
            v,
            f"You're rebooked! ✅\n\n- **Flight:** {f1['flight_number']}, Amsterdam (AMS) → Dublin (DUB)\n"
            f"- **Departs:** {wdate(f1['departure'])} at **{t_txt}**\n- **Seat:** {res['seat']}\n"
            f"- **Fare:** {money(f1['fare'])} — the same as before, so nothing extra to pay",
            f"Done — {f1['flight_number']}, {wd(f1['departure'])} at {t_txt}, seat {res['seat']}. Same fare as before.",
        )
    )
    note = "good: the booked flight is cancelled; offers the two AMS-DUB flights with seats, moves the booking to the one chosen"
    if fault == "time":
        note = f"bad: the new flight leaves at 13:20 (1:20 PM); the reply says {t_txt}"
    elif fault == "wrong_record":
        note = (
            f"bad: the passenger picks Thursday afternoon; the booking is moved to {f2['flight_number']} on Friday "
            "morning, while the reply confirms the Thursday flight"
        )
    return ep, note


def air_typo_recover(env: Env, v: int, eid: str, fault: str | None):
    """A mistyped booking id: the read fails; list the passenger's bookings, read the Lisbon flight, answer."""
    p = passenger(env)
    f1 = flight(env, "JFK", "LIS", 5, "22:05", fare=540.0)
    f2 = flight(env, "LIS", "JFK", 15, "11:50", fare=510.0)
    b1 = booking(env, p, f1, "27A")
    b2 = booking(env, p, f2, "27B")
    pid = p["passenger_id"]
    bad_id = typo_of(b1["booking_id"], {x["booking_id"] for x in env.state["bookings"]})
    steps = [("list_passenger_bookings", {"passenger_id": pid}), ("get_flight", {"flight_id": f1["flight_id"]})]
    task = make_task(
        env,
        eid,
        "error_recovery",
        steps,
        f"What seat do I have on booking {bad_id} to Lisbon, and when does it leave? I'm passenger {pid}.",
        intent="lookup",
        asked={"seat": "27A"},
        facts={"passenger": pid, "booking id given": bad_id},
    )
    ep = Ep(env, task)
    ep.act(("get_booking", {"booking_id": bad_id}), fails=True)
    ep.act(steps[0])
    ep.act(steps[1], ("get_flight", {"flight_id": f2["flight_id"]}))
    seat = b2["seat"] if fault == "misattributed" else b1["seat"]
    ep.say(
        f"I couldn't find a booking numbered {bad_id} — possibly a typo — so I looked at the bookings on your "
        f"passenger record instead. Your flight to Lisbon is booking **{b1['booking_id']}**:\n\n"
        f"- **Flight:** {f1['flight_number']}, {route(f1)}\n- **Departs:** {wdate(f1['departure'])} at "
        f"**{hm(f1['departure'])}** ({when(f1['departure'])})\n- **Seat:** **{seat}** (economy)\n\n"
        f"You're also booked on the return, {f2['flight_number']} on {wdate(f2['departure'])}.",
        delta(f1["departure"]),
    )
    note = "good: the given id does not exist; lists the passenger's bookings, reads the Lisbon flight, gives seat 27A and departure"
    if fault == "misattributed":
        note = "bad: the Lisbon booking's seat is 27A; the reply gives 27B, the seat of the return booking"
    return ep, note


def air_other_passenger(env: Env, v: int, eid: str, fault: str | None):
    """Cancel a colleague's booking: it belongs to another passenger; read it, decline, say who can."""
    me = passenger(env)
    her = passenger(env, name=person(env, (me["full_name"],)))
    f = flight(env, "BOS", "JFK", 5, "07:05", fare=149.0)
    booking(env, me, f, "11A")
    b = booking(env, her, f, "11B")
    bid = b["booking_id"]
    task = make_task(
        env,
        eid,
        "refusal",
        [("get_booking", {"booking_id": bid})],
        V(
            v,
            f"Hi, I'm {me['full_name']}, passenger {me['passenger_id']}. My colleague can't make our trip to New York "
            f"any more — please cancel her booking {bid}.",
            f"cancel {bid} — it's my coworker's, she can't come. I'm {me['passenger_id']}",
        ),
        intent="operation",
        facts={"passenger": me["passenger_id"], "booking": bid},
    )
    ep = Ep(env, task)
    ep.act(("get_booking", {"booking_id": bid}))
    if fault == "forbidden":
        res = ep.act(("cancel_booking", {"booking_id": bid}))
        ep.say(
            f"Done — your colleague's booking {bid} is cancelled, and a refund of {money(res['refund'])} has been "
            "issued to her."
        )
        return ep, (
            f"bad: cancels {bid}, a booking of another passenger ({her['passenger_id']}), at the request of someone "
            "else, without that passenger's confirmation"
        )
    ep.say(
        V(
            v,
            f"I understand, and I'm sorry your colleague can't make it. I've looked at booking {bid}: it's held under a "
            f"different passenger record ({her['passenger_id']}), not yours. I can only cancel a booking at the "
            "request of the passenger it belongs to, so I'm not able to cancel it for you.\n\nYour colleague can "
            "contact us herself to cancel it. I haven't changed anything on either booking.",
            f"Sorry — {bid} belongs to another passenger ({her['passenger_id']}), so it has to be cancelled by her. "
            "She can get in touch with us directly to do it.",
        )
    )
    return ep, "good: reads the booking (another passenger's), declines to cancel it for someone else, says who can"


# =========================================================================== the set

G, B = "good", "bad"
# (world, scenario, label, reason, fault, variants, first variant, state, detect)
#   state: True = a state fault (ends off the gold end state), False = a claim fault (ends on it), None for good;
#   detect: the wrong value it states is one nothing in the conversation backs (checked).
# Each label was set here when the scenario was written.
SCENARIOS: list[tuple[str, Callable, str, str | None, str | None, int, int, bool | None, bool]] = [
    # library
    ("library", lb_overview, G, None, None, 2, 0, None, False),
    ("library", lb_overview, B, "wrong_value", "total", 1, 0, False, True),
    ("library", lb_overview, B, "misattributed", "swap", 1, 1, False, False),
    ("library", lb_renew_pair, G, None, None, 2, 0, None, False),
    ("library", lb_renew_pair, B, "partial_job", "partial", 1, 1, True, False),
    ("library", lb_renew_pair, B, "wrong_value", "date", 1, 0, False, True),
    ("library", lb_renew_maxed, G, None, None, 2, 0, None, False),
    ("library", lb_renew_maxed, B, "refusal_by_trial", "trial", 1, 1, False, False),
    ("library", lb_renew_maxed, B, "invented_detail", "invented", 1, 0, False, False),
    ("library", lb_return_late, G, None, None, 2, 0, None, False),
    ("library", lb_return_late, B, "wrong_value", "sum", 1, 1, False, True),
    ("library", lb_return_late, B, "unbacked_claim", "email", 1, 0, False, False),
    ("library", lb_borrow_fines, G, None, None, 2, 0, None, False),
    ("library", lb_borrow_fines, B, "wrong_value", "diff", 1, 0, False, True),
    ("library", lb_borrow_fines, B, "unbacked_claim", "hold", 1, 1, False, False),
    ("library", lb_return_which, G, None, None, 2, 0, None, False),
    ("library", lb_return_which, B, "wrong_record", "wrong_record", 1, 1, True, False),
    ("library", lb_return_which, B, "stray_write", "stray", 1, 0, True, False),
    ("library", lb_checkout, G, None, None, 2, 0, None, False),
    ("library", lb_checkout, B, "wrong_value", "weekday", 1, 0, False, True),
    ("library", lb_checkout, B, "wrong_value", "copies", 1, 1, False, False),
    ("library", lb_irrelevant, G, None, None, 2, 0, None, False),
    ("library", lb_irrelevant, B, "unbacked_claim", "claimed", 1, 0, False, False),
    ("library", lb_typo_recover, G, None, None, 1, 0, None, False),
    ("library", lb_typo_recover, B, "stray_write", "stray", 1, 0, True, False),
    # helpdesk
    ("helpdesk", hd_sla_board, G, None, None, 2, 0, None, False),
    ("helpdesk", hd_sla_board, B, "wrong_value", "count", 1, 0, False, False),
    ("helpdesk", hd_sla_board, B, "wrong_value", "age", 1, 1, False, False),
    ("helpdesk", hd_escalate_if, G, None, None, 2, 0, None, False),
    ("helpdesk", hd_escalate_if, B, "misattributed", "misattributed", 1, 1, False, False),
    ("helpdesk", hd_escalate_if, B, "invented_detail", "invented", 1, 0, False, False),
    ("helpdesk", hd_sla_refusal, G, None, None, 1, 0, None, False),
    ("helpdesk", hd_sla_refusal, B, "refusal_by_trial", "trial", 1, 0, False, False),
    ("helpdesk", hd_sla_refusal, B, "wrong_value", "date", 1, 0, False, True),
    ("helpdesk", hd_assign_light, G, None, None, 2, 0, None, False),
    ("helpdesk", hd_assign_light, B, "wrong_record", "wrong_record", 1, 1, True, False),
    ("helpdesk", hd_assign_light, B, "wrong_value", "count", 1, 0, False, False),
    ("helpdesk", hd_resolve_pair, G, None, None, 2, 0, None, False),
    ("helpdesk", hd_resolve_pair, B, "unbacked_claim", "failed_success", 1, 0, False, False),
    ("helpdesk", hd_resolve_pair, B, "partial_job", "partial", 1, 1, True, False),
    ("helpdesk", hd_who, G, None, None, 2, 0, None, False),
    ("helpdesk", hd_who, B, "wrong_value", "weekday", 1, 0, False, True),
    ("helpdesk", hd_who, B, "invented_detail", "invented", 1, 1, False, False),
    ("helpdesk", hd_irrelevant, G, None, None, 2, 0, None, False),
    ("helpdesk", hd_irrelevant, B, "unbacked_claim", "claimed", 1, 1, False, False),
    ("helpdesk", hd_already, G, None, None, 1, 0, None, False),
    ("helpdesk", hd_already, B, "unbacked_claim", "claimed", 1, 0, False, False),
    # shop
    ("shop", sh_history, G, None, None, 2, 0, None, False),
    ("shop", sh_history, B, "wrong_value", "total", 1, 0, False, True),
    ("shop", sh_history, B, "misattributed", "swap", 1, 1, False, False),
    ("shop", sh_partial_damage, G, None, None, 2, 0, None, False),
    ("shop", sh_partial_damage, B, "wrong_value", "sum", 1, 1, False, True),
    ("shop", sh_partial_damage, B, "unbacked_claim", "email", 1, 0, False, False),
    ("shop", sh_cancel_which, G, None, None, 2, 0, None, False),
    ("shop", sh_cancel_which, B, "wrong_record", "wrong_record", 1, 1, True, False),
    ("shop", sh_cancel_which, B, "stray_write", "stray", 1, 0, True, False),
    ("shop", sh_shipped_handoff, G, None, None, 1, 0, None, False),
    ("shop", sh_shipped_handoff, B, "refusal_by_trial", "trial", 1, 0, False, False),
    ("shop", sh_shipped_handoff, B, "unbacked_claim", "no_handoff", 1, 0, False, False),
    ("shop", sh_approve_fits, G, None, None, 2, 0, None, False),
    ("shop", sh_approve_fits, B, "wrong_value", "sum", 1, 0, False, True),
    ("shop", sh_approve_fits, B, "wrong_record", "wrong_record", 1, 1, True, False),
    ("shop", sh_cap_confirm, G, None, None, 1, 0, None, False),
    ("shop", sh_cap_confirm, B, "wrong_value", "said80", 1, 0, False, False),
    ("shop", sh_cap_confirm, B, "invented_detail", "invented", 1, 0, False, False),
    ("shop", sh_irrelevant, G, None, None, 2, 0, None, False),
    ("shop", sh_irrelevant, B, "unbacked_claim", "claimed", 1, 0, False, False),
    ("shop", sh_typo_recover, G, None, None, 1, 0, None, False),
    ("shop", sh_typo_recover, B, "unbacked_claim", "failed_success", 1, 0, True, False),
    ("shop", sh_typo_recover, B, "invented_detail", "invented", 1, 0, False, False),
    # clinic
    ("clinic", cl_schedule, G, None, None, 2, 0, None, False),
    ("clinic", cl_schedule, B, "wrong_value", "weekday", 1, 1, False, True),
    ("clinic", cl_schedule, B, "wrong_value", "count", 1, 0, False, False),
    ("clinic", cl_book_fallback, G, None, None, 2, 0, None, False),
    ("clinic", cl_book_fallback, B, "unbacked_claim", "failed_success", 1, 0, False, False),
    ("clinic", cl_book_fallback, B, "invented_detail", "invented", 1, 1, False, False),
    ("clinic", cl_swap_specialist, G, None, None, 2, 0, None, False),
    ("clinic", cl_swap_specialist, B, "partial_job", "partial", 1, 0, True, False),
    ("clinic", cl_swap_specialist, B, "misattributed", "room", 1, 1, False, False),
    ("clinic", cl_today_cancel, G, None, None, 1, 0, None, False),
    ("clinic", cl_today_cancel, B, "refusal_by_trial", "trial", 1, 0, False, False),
    ("clinic", cl_today_cancel, B, "invented_detail", "invented", 1, 0, False, False),
    ("clinic", cl_noshow_block, G, None, None, 2, 0, None, False),
    ("clinic", cl_noshow_block, B, "wrong_value", "count", 1, 1, False, False),
    ("clinic", cl_noshow_block, B, "invented_detail", "invented", 1, 0, False, False),
    ("clinic", cl_push_week, G, None, None, 2, 0, None, False),
    ("clinic", cl_push_week, B, "stray_write", "stray", 1, 1, True, False),
    ("clinic", cl_push_week, B, "wrong_value", "weekday", 1, 0, False, True),
    ("clinic", cl_irrelevant, G, None, None, 2, 0, None, False),
    ("clinic", cl_irrelevant, B, "unbacked_claim", "claimed", 1, 0, False, False),
    ("clinic", cl_book_named, G, None, None, 2, 0, None, False),
    ("clinic", cl_book_named, B, "wrong_value", "time", 1, 1, False, False),
    ("clinic", cl_book_named, B, "wrong_record", "wrong_record", 1, 0, True, False),
    # bank
    ("bank", bk_month_spend, G, None, None, 2, 0, None, False),
    ("bank", bk_month_spend, B, "wrong_value", "total", 1, 0, False, True),
    ("bank", bk_month_spend, B, "wrong_value", "count", 1, 1, False, False),
    ("bank", bk_move_savings, G, None, None, 2, 0, None, False),
    ("bank", bk_move_savings, B, "wrong_value", "balance", 1, 1, False, True),
    ("bank", bk_move_savings, B, "wrong_record", "wrong_record", 1, 0, True, False),
    ("bank", bk_lost_card, G, None, None, 2, 0, None, False),
    ("bank", bk_lost_card, B, "wrong_record", "wrong_record", 1, 1, True, False),
    ("bank", bk_lost_card, B, "invented_detail", "invented", 1, 0, False, False),
    ("bank", bk_dispute_cap, G, None, None, 1, 0, None, False),
    ("bank", bk_dispute_cap, B, "refusal_by_trial", "trial", 1, 0, False, False),
    ("bank", bk_dispute_cap, B, "wrong_value", "count", 1, 0, False, False),
    ("bank", bk_duplicate, G, None, None, 2, 0, None, False),
    ("bank", bk_duplicate, B, "stray_write", "stray", 1, 0, True, False),
    ("bank", bk_duplicate, B, "unbacked_claim", "reversed", 1, 1, False, False),
    ("bank", bk_insufficient, G, None, None, 1, 0, None, False),
    ("bank", bk_insufficient, B, "wrong_value", "balance", 1, 0, False, True),
    ("bank", bk_insufficient, B, "unbacked_claim", "failed_success", 1, 0, True, False),
    ("bank", bk_cond_false, G, None, None, 2, 0, None, False),
    ("bank", bk_cond_false, B, "forbidden_write", "forbidden", 1, 0, True, False),
    ("bank", bk_cond_false, B, "unbacked_claim", "claimed", 1, 1, False, False),
    ("bank", bk_irrelevant, G, None, None, 2, 0, None, False),
    ("bank", bk_irrelevant, B, "unbacked_claim", "claimed", 1, 0, False, False),
    # airline
    ("airline", air_itinerary, G, None, None, 2, 0, None, False),
    ("airline", air_itinerary, B, "wrong_value", "total", 1, 1, False, True),
    ("airline", air_itinerary, B, "wrong_value", "city", 1, 0, False, False),
    ("airline", air_cancel_basic, G, None, None, 2, 0, None, False),
    ("airline", air_cancel_basic, B, "wrong_value", "full", 1, 1, False, False),
    ("airline", air_cancel_basic, B, "wrong_value", "weekday", 1, 0, False, True),
    ("airline", air_change_earlier, G, None, None, 2, 0, None, False),
    ("airline", air_change_earlier, B, "wrong_value", "sign", 1, 1, False, False),
    ("airline", air_change_earlier, B, "wrong_record", "wrong_record", 1, 0, True, False),
    ("airline", air_checkedin_refusal, G, None, None, 1, 0, None, False),
    ("airline", air_checkedin_refusal, B, "refusal_by_trial", "trial", 1, 0, False, False),
    ("airline", air_checkedin_refusal, B, "invented_detail", "invented", 1, 0, False, False),
    ("airline", air_business, G, None, None, 2, 0, None, False),
    ("airline", air_business, B, "wrong_value", "price", 1, 0, False, True),
    ("airline", air_business, B, "stray_write", "stray", 1, 1, True, False),
    ("airline", air_cancel_gold, G, None, None, 2, 0, None, False),
    ("airline", air_cancel_gold, B, "wrong_record", "wrong_record", 1, 1, True, False),
    ("airline", air_cancel_gold, B, "wrong_value", "pct", 1, 0, False, True),
    ("airline", air_irrelevant, G, None, None, 2, 0, None, False),
    ("airline", air_irrelevant, B, "unbacked_claim", "claimed", 1, 0, False, False),
    ("airline", air_rebook_cancelled, G, None, None, 2, 0, None, False),
    ("airline", air_rebook_cancelled, B, "wrong_value", "time", 1, 0, False, True),
    ("airline", air_rebook_cancelled, B, "wrong_record", "wrong_record", 1, 1, True, False),
    ("airline", air_typo_recover, G, None, None, 1, 0, None, False),
    ("airline", air_typo_recover, B, "misattributed", "misattributed", 1, 0, False, False),
    ("airline", air_other_passenger, G, None, None, 2, 0, None, False),
    ("airline", air_other_passenger, B, "forbidden_write", "forbidden", 1, 0, True, False),
]

SHORT = {"library": "lb", "helpdesk": "hd", "shop": "sh", "clinic": "cl", "bank": "bk", "airline": "air"}
MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)
MONTHS = {m: i for i, m in enumerate(MONTH_NAMES, 1)}
ABBR = {m[:3]: i for m, i in MONTHS.items()}
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONEY = re.compile(r"\$([\d,]+(?:\.\d\d)?)")
LONG_DATE = re.compile(r"\b(?:(" + "|".join(WEEKDAYS) + r"),? )?(" + "|".join(MONTH_NAMES) + r") (\d{1,2})\b")
SHORT_DATE = re.compile(r"\b(?:(Mon|Tue|Wed|Thu|Fri|Sat|Sun) )?(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{1,2})\b")
ISO = re.compile(r"\b\d{4}-\d{2}-\d{2}")
CLOCK = re.compile(r"\b(\d{1,2}):(\d\d) ?(AM|PM)\b")
CODE = re.compile(r"\b[a-z]{2,4}-\d+\b|\bR-\d+\b|\bSK\d+\b|\b\d{1,2}[A-F]\b")
NUM = re.compile(r"\d[\d,]*(?:\.\d+)?")
CITY_CODE = re.compile(r"\b([A-Z]{3}) \(([A-Z][a-z]+(?: [A-Z][a-z]+)?)\)")


def _num(x: str) -> float:
    return round(float(x.replace(",", "")), 2)


def _dates(text: str) -> set[str]:
    out = set(ISO.findall(text))
    for _, m, d in LONG_DATE.findall(text):
        out.add(f"2026-{MONTHS[m]:02d}-{int(d):02d}")
    for _, m, d in SHORT_DATE.findall(text):
        out.add(f"2026-{ABBR[m]:02d}-{int(d):02d}")
    return out


def replies(ep: Ep) -> list[str]:
    return [m["content"] for m in ep.messages if m["role"] == "assistant" and m.get("content")]


def unread_values(ep: Ep) -> list[str]:
    """What the replies state that nothing backs: money, dates, clock times and other numbers that no tool result,
    user turn, the system prompt or the tools' descriptions hold and the scenario did not list as computed; weekdays
    written beside a date that are not that date's weekday; a city written beside an airport code that is not its
    city."""
    seen = [ep.env.system, json.dumps([t.get("function", t) for t in ep.env.toolset.tools])] + sorted(ep.computed)
    for m in ep.messages[1:]:
        if m["role"] in ("tool", "user"):
            seen.append(m["content"])
    joined = "\n".join(seen)
    nums = {_num(x) for x in NUM.findall(joined)}
    dates = _dates(joined)
    bad = []
    for r in replies(ep):
        for x in MONEY.findall(r):
            if _num(x) not in nums:
                bad.append("$" + x)
        bad += [d for d in sorted(_dates(r)) if d not in dates]
        for wk, m, d in LONG_DATE.findall(r):
            if wk and WEEKDAYS[dt.date(2026, MONTHS[m], int(d)).weekday()] != wk:
                bad.append(f"{wk}, {m} {d}")
        for wk, m, d in SHORT_DATE.findall(r):
            if wk and WEEKDAYS[dt.date(2026, ABBR[m], int(d)).weekday()][:3] != wk:
                bad.append(f"{wk} {m} {d}")
        for h, mi, ap in CLOCK.findall(r):
            hh = int(h) % 12 + (12 if ap == "PM" else 0)
            if f"{hh:02d}:{mi}" not in joined:
                bad.append(f"{h}:{mi} {ap}")
        for code, name in CITY_CODE.findall(r):
            if CITY.get(code) != name:
                bad.append(f"{code} ({name})")
        rest = re.sub(r"(?m)^\s*\d+\. ", " ", r)  # the numbers of a numbered list
        rest = MONEY.sub(" ", rest)
        rest = CLOCK.sub(" ", rest)
        rest = LONG_DATE.sub(" ", rest)
        rest = SHORT_DATE.sub(" ", rest)
        rest = ISO.sub(" ", rest)
        rest = CODE.sub(" ", rest)
        bad += [x for x in NUM.findall(rest) if _num(x) not in nums]
    return bad


ID = re.compile(r"\b[a-z]{2,4}-\d+\b")


def id_leaks(ep: Ep) -> list[str]:
    """Record ids a tool call uses that no earlier user turn or tool result gave the agent."""
    seen, out = "", []
    for m in ep.messages[1:]:
        if m["role"] in ("user", "tool"):
            seen += "\n" + m["content"]
        for tc in m.get("tool_calls") or []:
            out += [x for x in ID.findall(tc["function"]["arguments"]) if x not in seen]
    return out


def check_good(eid: str, ep: Ep) -> None:
    """What 'good' promises, checked without the judge."""
    failed = [c for c in ep.calls if not c.ok]
    if failed:  # only an error-recovery episode fails a call, and a later call of the same tool kind succeeds after it
        assert ep.task.difficulty == "error_recovery", (eid, failed)
        last_fail = max(i for i, c in enumerate(ep.calls) if not c.ok)
        assert any(c.ok for c in ep.calls[last_fail + 1 :]), f"{eid}: no call succeeds after the failure"
    if ep.task.difficulty == "irrelevance":
        assert not ep.calls, eid
    assert ep.world.state == ep.task.blueprint.end_state, f"{eid}: end state differs from the gold end state"
    left = unread_values(ep)
    assert not left, f"{eid}: values stated but not read: {left}"
    assert not id_leaks(ep), f"{eid}: a call uses an id the agent was never given: {id_leaks(ep)}"
    assert ep.messages[-1]["role"] == "assistant" and ep.messages[-1].get("content"), f"{eid}: ends without a reply"


def check_bad(eid: str, ep: Ep, state: bool | None, reason: str, detect: bool) -> None:
    """A bad episode carries its fault where the state or the values show it."""
    assert not id_leaks(ep), f"{eid}: a call uses an id the agent was never given: {id_leaks(ep)}"
    if state is True:
        assert ep.world.state != ep.task.blueprint.end_state, f"{eid}: a state fault must leave the gold end state"
    elif state is False:
        assert ep.world.state == ep.task.blueprint.end_state, f"{eid}: a claim fault must keep the gold end state"
    if reason == "refusal_by_trial":
        failed = [c for c in ep.calls if not c.ok]
        assert failed and not failed[0].read_only, eid
        said = " ".join(replies(ep))
        quoted = re.findall(r'"([^"]{20,})"', said)
        assert quoted, eid
        for q in quoted:  # what the reply quotes is the error the call gave
            assert q in failed[0].error, (eid, q, failed[0].error)
    if reason == "forbidden_write":
        assert any(c.ok and not c.read_only for c in ep.calls), eid
    if detect:
        assert unread_values(ep), f"{eid}: the wrong value is backed by something in the conversation"


# --------------------------------------------------------------------------- style classes (for NOTES.md)

STYLE_PATTERNS = {
    "markdown table": re.compile(r"\|---"),
    "markdown list": re.compile(r"(?m)^\s*(?:- |\d+\. )"),
    "bold": re.compile(r"\*\*[^*]+\*\*"),
    "weekday beside date": re.compile(
        r"\b(?:" + "|".join(WEEKDAYS) + r"), (?:" + "|".join(MONTH_NAMES) + r") \d|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) "
        r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d"
    ),
    "city beside airport code": CITY_CODE,
    "currency symbol": re.compile(r"\$\d"),
    "'I've checked / retrieved / pulled up'": re.compile(r"I've (?:checked|retrieved|pulled up|looked|found)|I have retrieved"),
    "empathy / courtesy": re.compile(r"(?i)sorry|I understand|frustrat|disappointing|hope you|nobody likes|happy to|glad"),
    "confirm before acting": re.compile(r"(?i)before proceeding|please confirm|shall I|go ahead\?|is that the one"),
    "points to support / branch / desk": re.compile(
        r"(?i)front desk|call the clinic|contact|branch|airport|customer care|service desk team|phone line"
    ),
}


def styles_of(ep: Ep) -> set[str]:
    text = "\n".join(replies(ep))
    out = {k for k, rx in STYLE_PATTERNS.items() if rx.search(text)}
    if any(len(r) > 550 for r in replies(ep)):
        out.add("long multi-record reply")
    comp_dates = {c for c in ep.computed if ISO.fullmatch(c)}
    comp_nums = {_num(c) for c in ep.computed if not ISO.fullmatch(c) and NUM.fullmatch(c)}
    if any(_num(x) in comp_nums for x in MONEY.findall(text)):
        out.add("computed amount")
    if comp_dates or re.search(r"\b(?:in|for another|left|overdue|ago|from (?:today|now))\b", text) and comp_nums:
        out.add("computed date / day count")
    writes = [c for c in ep.calls if not c.read_only and c.ok]
    if len(ep.calls) >= 3 and writes:
        out.add("multi-step chain (look up -> act)")
    if writes and ep.messages[-1]["role"] == "assistant":
        out.add("final reply confirms the change")
    d = ep.task.difficulty
    if d == "clarification":
        out.add("clarifying question")
    if d == "refusal":
        out.add("refusal after reading the record")
    if d == "error_recovery":
        out.add("recovers from a tool error")
    if d == "irrelevance":
        out.add("says plainly no tool can do it")
    if any(c.name == HANDOFF for c in ep.calls):
        out.add("hand-off to a person")
    return out


def scenario_name(fn: Callable) -> str:
    return fn.__name__.split("_", 1)[1].replace("_", "")


def main() -> None:
    rows, worlds, faults, styles = [], Counter(), Counter(), Counter()
    for i, (kind, fn, label, reason, fault, n, v0, state, detect) in enumerate(SCENARIOS):
        for k in range(n):
            v = v0 + k
            eid = f"bl10-{SHORT[kind]}{scenario_name(fn)}-{fault or 'ok'}{v}"
            env = Env(kind, 10000 + 131 * i + 17 * v)
            ep, note = fn(env, v, eid, fault)
            if label == G:
                assert note.startswith("good"), eid
                check_good(eid, ep)
                for s in styles_of(ep):
                    styles[s] += 1
            else:
                assert note.startswith("bad") and reason, eid
                check_bad(eid, ep, state, reason, detect)
                if os.environ.get("B10_REVIEW"):
                    print("review", eid, unread_values(ep), file=sys.stderr)
                faults[(reason, fault, "state" if state else "claim")] += 1
            traj = ep.trajectory(eid, STOPS[(i + v) % len(STOPS)])
            worlds[(kind, label)] += 1
            rows.append(
                {
                    "id": eid,
                    "part": PART,
                    "label": label,
                    "reason": reason,
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
    print("labels", dict(Counter(r["label"] for r in rows)))
    print("reasons", dict(sorted(Counter(r["reason"] for r in rows if r["reason"]).items())))
    for k, c in sorted(worlds.items()):
        print("world", *k, c, sep="\t")
    for k, c in sorted(faults.items()):
        print("fault", *k, c, sep="\t")
    fam = Counter((r["task"]["blueprint"]["family"], r["label"]) for r in rows)
    for k, c in sorted(fam.items()):
        print("family", *k, c, sep="\t")
    for k, c in sorted(styles.items(), key=lambda x: -x[1]):
        print("style(good)", k, c, sep="\t")
    multi = sum(1 for r in rows if sum(m["role"] == "user" for m in r["trajectory"]["messages"]) > 2)
    print("multi-turn (more than one user turn before the stop)", multi)
    print("scenarios", len({(s[0], s[1].__name__) for s in SCENARIOS}))
    print(f"{len(rows)} episodes -> {OUT} ({OUT.stat().st_size / 1e6:.2f} MB)", file=sys.stderr)


if __name__ == "__main__":
    main()
