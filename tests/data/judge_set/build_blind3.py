"""Build blind3.jsonl: a blind, labelled judge set on the repo's domain packs `bank`, `library` and `shop`.

Part "cap-blind3". The episodes are a capable assistant's work, written by hand per scenario, on
the packs' worlds (worlds/<name>/world.yaml + actions.py, loaded with `load_pack`, seeded with the
pack's seeders). Tasks are blueprints: the gold chain is executed by `tasks.blueprint.run_gold`,
the rubric read off it by `rubric_from`. Every tool call of an episode is executed for real on the
world (the pack's actions run by code), so results and patches are real; the one tool no world
binds (`transfer_to_human_agents`) answers a fixed result and changes nothing.

Labels are set here, where each scenario is written, before any judge has seen the set; nothing in
this file reads or runs the judge. Good episodes are checked without it (every unexpected failure
raises, the end state equals the gold end state); each bad one is checked for the fault it carries
(a state fault differs from the gold end state, a claim fault keeps it).

Run: .venv/bin/python tests/data/judge_set/build_blind3.py   (writes blind3.jsonl here; seeded, the
same bytes on every run).
"""

from __future__ import annotations

import copy
import inspect
import json
import random
import sys
from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import worldsmith.tasks.blueprint as blueprint
from worldsmith.records import (
    Persona,
    PolicyRule,
    Task,
    ToolCall,
    ToolSpec,
    Trajectory,
    UserGoal,
    content_id,
)
from worldsmith.tasks.blueprint import BlueprintFailure, Draft, Step, blueprint_record, rubric_from, run_gold
from worldsmith.worldmodel import packs
from worldsmith.worldmodel.execute import execute
from worldsmith.worldmodel.runner import argument_problem
from worldsmith.worldmodel.seed import seed_state
from worldsmith.worldmodel.state import World as StateWorld
from worldsmith.worldmodel.toolset import ToolSet

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
OUT = HERE / "blind3.jsonl"
PART = "cap-blind3"
TODAY = "2026-03-20"  # a Friday
T0 = date.fromisoformat(TODAY)
STAMP = datetime(2026, 3, 20, 9, 0, tzinfo=UTC)
MODEL = "hand-written (capable-assistant behaviour, blind set 3)"


class Skip(Exception):
    """The seeded world offers no record the scenario needs: try the next seed."""


# --------------------------------------------------------------------------- executing a pack's calls
# A pack action's call runs through the pack's code (packs.run_operation). `execute` takes it as
# `operation=` where it has that parameter; the blueprint module's own `execute` is given it the same
# way, so `run_gold` runs the gold chain with the pack's actions.

_EXECUTE_TAKES_OPERATION = "operation" in inspect.signature(execute).parameters


def run_call(world, binding, state, args):
    if _EXECUTE_TAKES_OPERATION:
        return execute(world, binding, state, args, operation=packs.run_operation)
    return execute(world, binding, state, args)


_bp_execute = blueprint.execute
if "operation" in inspect.signature(_bp_execute).parameters:

    def _with_operation(world, binding, state, arguments, operation=None):
        return _bp_execute(world, binding, state, arguments, operation=operation or packs.run_operation)

    blueprint.execute = _with_operation


def seeded(world, seed: int, records: tuple[int, int]) -> dict[str, Any]:
    if "finish" in inspect.signature(seed_state).parameters:
        return seed_state(world, seed, records, finish=packs.finish_seed)
    return seed_state(world, seed, records)


# --------------------------------------------------------------------------- packs, tools, prompts

HANDOFF = "transfer_to_human_agents"
HANDOFF_DESC = (
    "Transfer the customer to a human agent, with a summary of the issue. Use it when the request needs a person "
    "or is beyond what your tools can do."
)
HANDOFF_SCHEMA = {
    "type": "object",
    "properties": {"summary": {"type": "string", "description": "what the customer needs, in one or two sentences"}},
    "required": ["summary"],
    "additionalProperties": False,
}
HANDOFF_RESULT = {"transferred": True, "queue": "customer_care", "estimated_wait_minutes": 6}

ROLES = {
    "bank": "You are the support assistant of a retail bank. You help customers with their accounts, cards and "
    "transactions through your tools.",
    "library": "You are the circulation assistant of the city library. You help members with their loans, the "
    "books on the shelves and their fines through your tools.",
    "shop": "You are the customer service assistant of an online shop. You help customers with their orders and "
    "refunds through your tools.",
}


@cache
def pack(kind: str) -> packs.Pack:
    return packs.load_pack(ROOT / "worlds" / kind, today=TODAY)


def handoff_spec() -> ToolSpec:
    return ToolSpec(
        tool_id=ToolSpec.make_id(HANDOFF, HANDOFF_DESC, HANDOFF_SCHEMA, None, "evolved/handoff"),
        name=HANDOFF,
        description=HANDOFF_DESC,
        input_schema=HANDOFF_SCHEMA,
        annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": True},
        source="evolved",
        server="evolved/handoff",
        created_at=STAMP,
    )


def system_prompt(kind: str) -> str:
    p = pack(kind)
    rules = "\n".join(f"- {r.text}" for r in p.world.rules if r.kind != "forbid")
    never = "\n".join(f"- {r.text}" for r in p.world.rules if r.kind == "forbid")
    return (
        f"{ROLES[kind]}\nToday is Friday, March 20, 2026 ({TODAY}).\n\nPolicy:\n{p.world.policy.strip()}\n\n"
        f"Style: be friendly, clear and complete.\nRules:\n{rules}\nNever:\n{never}\n"
        "Use the tools to look things up and to make changes; never claim an action you did not perform with a "
        "tool. If no tool fits the request, say so plainly, and transfer the customer to a human agent when they "
        "need something only a person can do."
    )


def rule_of(kind: str, rule_id: str) -> PolicyRule:
    return next(r for r in pack(kind).world.rules if r.rule_id == rule_id)


class Env:
    """A pack's world, its agent's tools and system prompt, and one seeded state (tweakable before a task is made)."""

    def __init__(self, kind: str, seed: int):
        p = pack(kind)
        self.kind, self.seed = kind, seed
        self.world = p.world
        self.specs: dict[str, ToolSpec] = {t.name: t.model_copy(update={"created_at": STAMP}) for t in p.tools}
        self.specs[HANDOFF] = handoff_spec()
        self.toolset = ToolSet.build(list(self.specs.values()))
        self.agent_id = f"agt_blind3_{kind}"
        self.system = system_prompt(kind)
        self.rng = random.Random(f"blind3:{kind}:{seed}")
        self.state = seeded(self.world, seed, p.records)

    def recs(self, coll: str, **where) -> list[dict[str, Any]]:
        return [r for r in self.state[coll] if all(r.get(k) == v for k, v in where.items())]

    def pick(self, coll: str, cond: Callable[[dict], bool] | None = None, **where) -> dict[str, Any]:
        hits = [r for r in self.recs(coll, **where) if cond is None or cond(r)]
        if not hits:
            raise Skip(f"no {coll} with {where}")
        return self.rng.choice(hits)

    def get(self, coll: str, key: str) -> dict[str, Any]:
        k = self.world.collection(coll).key
        return next(r for r in self.state[coll] if r[k] == key)

    def add(self, coll: str, **fields) -> dict[str, Any]:
        """A record added to the seeded state under the next key (a tweak before the task is made)."""
        c = self.world.collection(coll)
        n = max(int(r[c.key].rsplit("-", 1)[1]) for r in self.state[coll]) + 1
        rec = {c.key: f"{c.id_prefix}-{n}", **fields}
        self.state[coll].append(rec)
        return rec


# --------------------------------------------------------------------------- tasks


def make_task(
    env: Env,
    eid: str,
    difficulty: str,
    steps: list[tuple[str, dict[str, Any]]],
    request: str,
    intent: str,
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
    d.intents = [{"kind": intent}]
    try:
        d.calls, d.end_state = run_gold(env.world, d.steps, d.initial)
    except BlueprintFailure as exc:
        raise Skip(str(exc)) from None
    bound = [t for t in env.specs.values() if t.binding is not None]
    return Task(
        task_id=content_id("blind3", eid, prefix="tsk_"),
        agent_id=env.agent_id,
        difficulty=difficulty,
        world_id=env.world.world_id,
        blueprint=blueprint_record(d, "llm", []),
        user_persona=Persona(communication=persona[0], patience=persona[1], expertise=persona[2]),
        user_goal=UserGoal(request=request, facts=d.facts),
        initial_state=d.initial,
        rubric=rubric_from(env.world, d, bound),
        created_at=STAMP,
    )


# --------------------------------------------------------------------------- episodes


class Ep:
    """One episode as the rollouts record it: OpenAI messages, each call executed on the world."""

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

    def act(self, *calls: tuple[str, dict[str, Any]], fails: bool = False) -> Any:
        """One assistant step with these tool calls, each executed and replied to; the results (one: itself).
        A call that fails raises unless `fails` says the scenario expects it (its error reply is the result)."""
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
            patch: list = []
            if problem is not None:  # refused before it runs, as the runner answers it
                error = ("invalid_arguments", f"Input validation error: {problem}")
                ok, result, executor = False, {"error": {"code": error[0], "message": error[1]}}, "code"
                content = json.dumps(result, ensure_ascii=False)
            elif spec.binding is not None:
                out = run_call(self.env.world, spec.binding, self.world.state, args)
                ok, content, patch, executor = out.ok, out.content, out.patch, "code"
                error = None if out.ok else out.error
                result = out.result if out.ok else json.loads(content)
            else:
                result = HANDOFF_RESULT
                ok, content, executor, error = True, json.dumps(result), "simulated", None
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
                    error=None if ok else f"{error[0]}: {error[1]}",
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
            trajectory_id=content_id("blind3", eid, prefix="trj_"),
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


def day(iso: str) -> date:
    return date.fromisoformat(iso[:10])


def nice(iso: str) -> str:
    d = day(iso)
    return f"{d:%B} {d.day}, {d.year}"


def wnice(iso: str) -> str:
    """Friday, March 20, 2026"""
    d = day(iso)
    return f"{d:%A}, {d:%B} {d.day}, {d.year}"


def short(iso: str) -> str:
    """Mar 20"""
    d = day(iso)
    return f"{d:%b} {d.day}"


def ago(iso: str) -> int:
    return (T0 - day(iso)).days


def ahead(iso: str) -> int:
    return (day(iso) - T0).days


def human(s: str) -> str:
    return s.replace("_", " ")


def first(name: str) -> str:
    parts = [p for p in name.split() if not p.endswith(".")]
    return parts[0] if parts else name


def plus(iso: str, n: int) -> str:
    return (day(iso) + timedelta(days=n)).isoformat()


STOPS = (
    "Thanks, that's all I needed. ###STOP###",
    "great, thank you! ###STOP###",
    "Perfect. Appreciate the help. ###STOP###",
    "ok thanks ###STOP###",
    "That's everything for now, thanks. ###STOP###",
    "Got it, thank you so much! ###STOP###",
)


# =========================================================================== bank: good
# Each scenario returns (episode, note). Labels are fixed where they are written.


def _open_card(env: Env, **where) -> tuple[dict, dict]:
    """A card of `where` on an account that is not closed, and that account."""
    cards = [c for c in env.recs("cards", **where) if env.get("accounts", c["account_id"])["status"] != "closed"]
    if not cards:
        raise Skip("no card on an open account")
    card = env.rng.choice(cards)
    return card, env.get("accounts", card["account_id"])


def _two_active(env: Env, least: float = 0.0) -> tuple[dict, dict]:
    src = [a for a in env.recs("accounts", status="active") if a["balance"] >= least]
    if not src:
        raise Skip("no active account with the balance")
    a = env.rng.choice(src)
    others = [b for b in env.recs("accounts", status="active") if b["account_id"] != a["account_id"]]
    if not others:
        raise Skip("no second active account")
    return a, env.rng.choice(others)


def _sent_today(env: Env, acc: str) -> float:
    return sum(t["amount"] for t in env.recs("transactions", account_id=acc, kind="transfer", posted_on=TODAY))


def g_bank_balance(env: Env, v: int, eid: str):
    a = env.pick("accounts", status=("active", "frozen")[v % 2])
    k, bal = a["account_id"], a["balance"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_account", {"account_id": k})],
        V(
            v,
            f"Hi, could you tell me the current balance on my account {k}? Want to check before the weekend.",
            f"whats the balance on {k}? also is everything ok with the account, I couldn't send money yesterday",
        ),
        "get",
        asked={f"balance of {k}": money(bal)},
        facts={"account id": k},
    )
    e = Ep(env, t)
    r = e.act(("get_account", {"account_id": k}))
    if v % 2 == 0:
        e.say(
            f"Here's what I found for account **{k}** ({r['holder_name']}):\n\n- **Balance:** {money(r['balance'])}\n"
            f"- **Status:** {r['status']}\n\nEverything looks in order. Is there anything else you'd like me to check "
            "before the weekend?"
        )
        return e, "balance of an active account, read and reported with its status"
    e.say(
        f"The balance on account {k} is **{money(r['balance'])}**.\n\nAs for sending money, that's most likely down "
        "to the "
        "account's status: it is currently **frozen**. Transfers can only go between two active accounts, so "
        "nothing can be sent "
        "from it (or into it) while it stays frozen. Your balance itself is unaffected.\n\nIf you'd like to find out "
        "why it was frozen and get it reactivated, I can connect you with a colleague who handles account reviews."
    )
    return e, "balance of a frozen account; explains (per the transfer rule) why the user's transfer could not go"


def g_bank_block(env: Env, v: int, eid: str):
    card, acc = _open_card(env, status="active")
    reason = ("lost", "stolen", "suspicious_activity")[v % 3]
    k, l4, a = card["card_id"], card["last_four"], acc["account_id"]
    t = make_task(
        env,
        eid,
        "dependent_calls",
        [("list_account_cards", {"account_id": a}), ("block_card", {"card_id": k, "reason": reason})],
        V(
            v,
            f"I think I lost my {card['card_type']} card somewhere downtown, it ends in {l4}. My account is {a}. "
            "Can you block it please?",
            f"My wallet was stolen this morning and my card ending {l4} was in it!! Account {a}. Please block it "
            "right now.",
            f"there are charges on my card ending {l4} i don't recognise. account {a}. can you stop the card "
            "from working? i'll sort the charges out later",
        ),
        "find_then",
        facts={"account id": a, "card's last four digits": l4, "reason": human(reason)},
    )
    e = Ep(env, t)
    cards = e.act(("list_account_cards", {"account_id": a}))["cards"]
    e.act(("block_card", {"card_id": k, "reason": reason}))
    others = [c for c in cards if c["card_id"] != k and c["status"] == "active"]
    other = (
        f"\n\nYour other {others[0]['card_type']} card ending {others[0]['last_four']} is still active and "
        "wasn't touched."
        if others
        else ""
    )
    e.say(
        V(
            v,
            f"I've blocked your {card['card_type']} card ending **{l4}** on account {a}, so no payments can go "
            "through on "
            f"it any more. I'm sorry you lost it — hopefully it turns up.{other}\n\nIs there anything else I can do "
            "for you?",
            f"I'm so sorry to hear that. Your card ending **{l4}** is now **blocked** — nobody can pay with it from "
            "this "
            f"point on.{other}\n\nIf you notice any payments on it that you didn't make, tell me which ones and I "
            "can open "
            "a dispute; card payments can be disputed within 60 days of being posted.",
            f"Done — the {card['card_type']} card ending {l4} is blocked as of now, so it can't be used for any new "
            f"payments.{other}\n\nWhen you're ready to deal with the charges, let me know which ones you don't "
            "recognise "
            "and I'll look at disputing them (that's possible for card payments up to 60 days old).",
        )
    )
    return e, f"finds the card by its last four on the account's list and blocks it ({reason})"


def g_bank_transfer(env: Env, v: int, eid: str):
    amount = (250.0, 120.5)[v % 2]
    a, b = _two_active(env, least=amount + 50)
    if _sent_today(env, a["account_id"]) + amount > 2500:
        raise Skip("daily limit")
    ka, kb = a["account_id"], b["account_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [
            ("get_account", {"account_id": ka}),
            ("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": amount}),
        ],
        V(
            v,
            f"Please move $250 from my account {ka} to {kb}.",
            f"Hi! I'd like to transfer 120.50 from account {ka} to {kb} (my daughter's account). Thanks!",
        ),
        "operation",
        facts={"from account": ka, "to account": kb, "amount": f"{amount:.2f}"},
    )
    e = Ep(env, t)
    r = e.act(("get_account", {"account_id": ka}))
    tx = e.act(("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": amount}))
    if v % 2 == 0:
        e.say(
            f"Done! I've transferred **{money(amount)}** from {ka} to {kb}.\n\n- **Reference:** "
            f"{tx['transaction_id']}\n"
            f"- **Posted:** today, {wnice(tx['posted_on'])}\n- **Balance of {ka}:** {money(r['balance'])} before, "
            f"**{money(round(r['balance'] - amount, 2))}** now\n\nAnything else I can help with?"
        )
    else:
        after = e.act(("get_account", {"account_id": ka}))
        e.say(
            f"All set! {money(amount)} has gone from account {ka} to your daughter's account {kb} (transfer "
            f"{tx['transaction_id']}, posted today). The remaining balance on {ka} is {money(after['balance'])}."
        )
    return e, "checks the sending account, transfers the asked amount, reports the new balance correctly"


def g_bank_transfer_split(env: Env, v: int, eid: str):
    a, b = _two_active(env)
    ka, kb = a["account_id"], b["account_id"]
    if _sent_today(env, ka):
        raise Skip("sent today")
    env.get("accounts", ka)["balance"] = round(env.rng.uniform(2700, 5800), 2)
    bal = env.get("accounts", ka)["balance"]
    t = make_task(
        env,
        eid,
        "multi_call",
        [
            ("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": 2000}),
            ("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": 300}),
        ],
        f"I need to send $2,300 from {ka} to {kb} today for my rent deposit. Can you do that?",
        "operation",
        facts={"from account": ka, "to account": kb, "amount": "2300.00"},
    )
    e = Ep(env, t)
    r = e.act(("get_account", {"account_id": ka}))
    t1 = e.act(("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": 2000}))
    t2 = e.act(("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": 300}))
    e.say(
        f"Your rent deposit is on its way — **$2,300.00** has moved from {ka} to {kb}.\n\nA single transfer can be "
        "at most "
        f"$2,000, so I sent it in two parts:\n\n| Transfer | Amount |\n|---|---|\n| {t1['transaction_id']} | "
        "$2,000.00 |\n"
        f"| {t2['transaction_id']} | $300.00 |\n\nTogether that's within the $2,500 daily limit for transfers out of "
        f"an account. The balance of {ka} went from {money(r['balance'])} to {money(round(bal - 2300, 2))}."
    )
    return e, "2,300 asked, over the tool's 2,000 per call: two transfers (2,000 + 300), within the daily limit"


def _gather_txns(env: Env, acc: dict, n: int) -> list[dict]:
    """n transactions moved onto `acc` (card payments onto one of its cards), as the seeders would make them."""
    cards = env.recs("cards", account_id=acc["account_id"])
    if not cards or len(env.state["transactions"]) < n:
        raise Skip("no card or too few transactions")
    txs = env.rng.sample(env.state["transactions"], n)
    others = [x["account_id"] for x in env.state["accounts"] if x["account_id"] != acc["account_id"]]
    for tx in txs:
        tx["account_id"] = acc["account_id"]
        if tx["kind"] == "card_payment":
            tx["card_id"] = env.rng.choice(cards)["card_id"]
        else:
            tx["merchant"] = f"Transfer to {env.rng.choice(others)}"
    return txs


def g_bank_txn_table(env: Env, v: int, eid: str):
    acc = env.pick("accounts", cond=lambda x: x["status"] != "closed")
    txs = _gather_txns(env, acc, 4)
    pays = [x for x in txs if x["kind"] == "card_payment"]
    if len(pays) < 2:
        raise Skip("too few card payments")
    k = acc["account_id"]
    total = round(sum(x["amount"] for x in pays), 2)
    t = make_task(
        env,
        eid,
        "aggregate",
        [("list_account_transactions", {"account_id": k})],
        V(
            v,
            f"Can you go through the transactions on account {k} and tell me how much went out on card "
            "payments in total?",
            f"hey, I'm doing my budget. list what's on {k} and give me the total of my card spending please",
        ),
        "sum",
        asked={"card payments total": money(total)},
        facts={"account id": k},
    )
    e = Ep(env, t)
    rows = e.act(("list_account_transactions", {"account_id": k}))["transactions"]
    rows = sorted(rows, key=lambda x: x["posted_on"], reverse=True)
    table = "\n".join(
        f"| {short(x['posted_on'])} ({day(x['posted_on']):%a}) | {x['merchant']} | {human(x['kind'])} | "
        f"{money(x['amount'])} | {x['status']} |"
        for x in rows
    )
    reversed_ = [x for x in rows if x["kind"] == "card_payment" and x["status"] == "reversed"]
    transfers = [x for x in rows if x["kind"] == "transfer"]
    notes = []
    if reversed_:
        back = round(sum(x["amount"] for x in reversed_), 2)
        notes.append(
            f"That total includes {money(back)} that was later reversed; leaving the reversed payment out, "
            f"it comes to {money(round(total - back, 2))}."
        )
    if transfers:
        n_t = len(transfers)
        notes.append(
            f"Transfers aren't counted in it: {'one transfer' if n_t == 1 else f'{n_t} transfers'} for "
            f"{money(round(sum(x['amount'] for x in transfers), 2))} in all."
        )
    e.say(
        V(
            v,
            "## Transactions on "
            + k
            + "\n\n| Date | Description | Type | Amount | Status |\n|---|---|---|---|---|\n"
            + table
            + f"\n\n**Card payments in total: {money(total)}** ({len(pays)} payments).\n\n"
            + " ".join(notes),
            f"Here's everything on {k}, newest first:\n\n| Date | Description | Type | Amount | Status |\n"
            "|---|---|---|---|---|\n" + table + f"\n\nYour card spending adds up to **{money(total)}** across "
            f"{len(pays)} card payments. " + " ".join(notes) + "\n\nGood luck with the budget!",
        )
    )
    return e, "lists an account's transactions in a table and totals the card payments correctly"


def g_bank_dispute_block(env: Env, v: int, eid: str):
    cands = [
        x
        for x in env.recs("transactions", kind="card_payment", status="posted")
        if env.get("accounts", x["account_id"])["status"] != "closed"
        and env.get("cards", x["card_id"])["status"] == "active"
    ]
    if not cands:
        raise Skip("no posted payment on an active card")
    tx = env.rng.choice(cands)
    if ago(tx["posted_on"]) > 60:
        tx["posted_on"] = (T0 - timedelta(days=env.rng.randint(3, 40))).isoformat()
    if len(env.recs("transactions", account_id=tx["account_id"], status="disputed")) >= 3:
        raise Skip("dispute cap")
    k, a, c = tx["transaction_id"], tx["account_id"], tx["card_id"]
    card = env.get("cards", c)
    t = make_task(
        env,
        eid,
        "multi_call",
        [
            ("list_account_transactions", {"account_id": a}),
            ("dispute_transaction", {"transaction_id": k, "reason": "not_recognized"}),
            ("block_card", {"card_id": c, "reason": "suspicious_activity"}),
        ],
        V(
            v,
            f"I just spotted a {tx['merchant']} charge of ${tx['amount']:.2f} on account {a} from "
            f"{nice(tx['posted_on'])}. That wasn't me! Please dispute it and make sure the card can't be used "
            "again.",
            f"Someone used my card at {tx['merchant']} — {money(tx['amount'])}, account {a}. I never shop there. "
            "Can you dispute the charge and block the card?",
        ),
        "operation",
        facts={"account id": a, "merchant": tx["merchant"], "amount": f"{tx['amount']:.2f}"},
    )
    e = Ep(env, t)
    e.act(("list_account_transactions", {"account_id": a}))
    d = e.act(("dispute_transaction", {"transaction_id": k, "reason": "not_recognized"}))
    e.act(("block_card", {"card_id": c, "reason": "suspicious_activity"}))
    e.say(
        V(
            v,
            f"I'm sorry you had to deal with this. I've taken care of both:\n\n1. **Dispute opened** on the "
            f"{tx['merchant']} payment of {money(tx['amount'])} ({k}, posted {nice(tx['posted_on'])}). Its status is "
            "now "
            f"*{d['status']}*, and the payment is held while the bank reviews it.\n2. **Card blocked:** your "
            f"{card['card_type']} card ending {card['last_four']}, which that payment was made with, can no longer "
            "be used."
            "\n\nIf you spot any other payments you don't recognise, let me know and I'll look at them too.",
            f"Both done:\n\n- The {money(tx['amount'])} charge from {tx['merchant']} ({k}) is now **disputed** — "
            "it's on "
            f"hold until the bank decides.\n- The card it was charged to (ending {card['last_four']}) is "
            "**blocked**, so "
            "no new payments can go through on it.\n\nIs there anything else you'd like me to check on the account?",
        )
    )
    return e, "finds the unrecognised payment, disputes it and blocks the card it was paid with (policy: block at once)"


def g_bank_old_dispute(env: Env, v: int, eid: str):
    cands = [
        x
        for x in env.recs("transactions", kind="card_payment", status="posted")
        if env.get("accounts", x["account_id"])["status"] != "closed"
    ]
    if not cands:
        raise Skip("no posted payment")
    tx = env.rng.choice(cands)
    if ago(tx["posted_on"]) <= 60:
        tx["posted_on"] = (T0 - timedelta(days=env.rng.randint(64, 88))).isoformat()
    k = tx["transaction_id"]
    n = ago(tx["posted_on"])
    t = make_task(
        env,
        eid,
        "refusal",
        [("get_transaction", {"transaction_id": k})],
        V(
            v,
            f"I'd like to dispute transaction {k}. The {tx['merchant']} order never showed up.",
            f"Please dispute {k} for me, I was charged by {tx['merchant']} for something I never received.",
        ),
        "operation",
        facts={"transaction id": k, "reason": "item not received"},
        rule=rule_of("bank", "bank_dispute"),
    )
    e = Ep(env, t)
    r = e.act(("get_transaction", {"transaction_id": k}))
    e.say(
        V(
            v,
            f"I understand how frustrating it is to pay for something that never arrived. Unfortunately I can't open a "
            f"dispute on this one: the {tx['merchant']} payment of {money(r['amount'])} was posted on "
            f"{wnice(r['posted_on'])}, which is {n} days ago, and card payments can only be disputed within 60 days of "
            "being posted.\n\nWhat I'd suggest:\n- Contact the merchant directly and ask for a refund for the "
            "undelivered "
            "order — they may still be able to refund it on their side.\n- If they won't help, I can transfer you "
            "to a colleague to "
            "talk through your options.",
            f"I've looked at {k}: it's a {money(r['amount'])} card payment to {tx['merchant']}, posted on "
            f"{nice(r['posted_on'])} — {n} days ago. Our dispute window for card payments is 60 days from posting, so "
            "I'm not able to dispute it any more, I'm sorry.\n\nYour best route now is to ask the merchant for a "
            "refund "
            "directly. Is there anything else I can help you with?",
        )
    )
    return e, f"refusal: card payment posted {n} days ago, past the 60-day dispute window; reads it, declines, no write"


def g_bank_limit_check(env: Env, v: int, eid: str):
    a, b = _two_active(env)
    ka, kb = a["account_id"], b["account_id"]
    if _sent_today(env, ka):
        raise Skip("sent today")
    sent = float(env.rng.choice((1650, 1800, 1925, 2100)))
    env.get("accounts", ka)["balance"] = round(env.rng.uniform(2600, 5000), 2)
    env.add(
        "transactions",
        account_id=ka,
        card_id=None,
        kind="transfer",
        merchant=f"Transfer to {kb}",
        amount=sent,
        posted_on=TODAY,
        status="posted",
    )
    left = round(2500 - sent, 2)
    t = make_task(
        env,
        eid,
        "single_call",
        [
            ("list_account_transactions", {"account_id": ka}),
            ("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": left}),
        ],
        f"Can you send another $1,000 from {ka} to {kb}? I already moved some earlier today but need a bit more "
        "over there.",
        "operation",
        facts={"from account": ka, "to account": kb, "amount": "1000.00"},
    )
    e = Ep(env, t)
    e.act(("list_account_transactions", {"account_id": ka}))
    e.say(
        f"Before I send anything: I can see a transfer of {money(sent)} from {ka} to {kb} posted earlier today. "
        "Transfers "
        f"out of one account are capped at $2,500.00 a day, so the most that can still go out of {ka} today is "
        f"**{money(left)}** — $1,000 would go over the limit.\n\nWould you like me to send {money(left)} now? The rest "
        "could go tomorrow, when the daily limit resets."
    )
    e.user(f"ugh ok. yes send the {money(left)} now please")
    tx = e.act(("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": left}))
    e.say(
        f"Done — {money(left)} has been transferred from {ka} to {kb} (reference {tx['transaction_id']}). That brings "
        f"today's transfers out of {ka} to the full $2,500.00, so the remaining {money(round(1000 - left, 2))} can be "
        "sent from tomorrow, Saturday, March 21. Just reach out and I'll take care of it."
    )
    return e, "reads today's transfers first, sees the daily cap, asks, and sends the amount still allowed"


def g_bank_already_blocked(env: Env, v: int, eid: str):
    card, acc = _open_card(env, status="blocked")
    l4, a = card["last_four"], acc["account_id"]
    t = make_task(
        env,
        eid,
        "already_done",
        [("list_account_cards", {"account_id": a})],
        f"Please block my card ending {l4} on account {a}. I can't find it anywhere.",
        "update",
        asked={f"status of card ending {l4}": "blocked"},
        facts={"account id": a, "card's last four digits": l4},
    )
    e = Ep(env, t)
    e.act(("list_account_cards", {"account_id": a}))
    e.say(
        f"I checked your cards on {a}: the {card['card_type']} card ending **{l4}** is **already blocked**, so nobody "
        "can make payments with it — there's nothing more I need to do there.\n\nIf it turns up and you want it "
        "working again, or if you'd like a replacement, let me know and I can connect you with a colleague who "
        "handles that."
    )
    return e, "already done: the card is blocked already; reads and says so, no write"


def g_bank_clarify(env: Env, v: int, eid: str):
    a, b = _two_active(env, least=400)
    ka, kb = a["account_id"], b["account_id"]
    if _sent_today(env, ka) + 300 > 2500:
        raise Skip("limit")
    t = make_task(
        env,
        eid,
        "clarification",
        [("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": 300})],
        f"I need to send $300 to my sister's account, {kb}. Can you do that for me?",
        "operation",
        facts={"to account": kb, "amount": "300.00"},
        withheld={"account to send from": ka},
    )
    e = Ep(env, t)
    e.say(
        "Happy to help with that! Which of your accounts should the $300 come from? Please give me the account "
        "number (it looks like acc-1234)."
    )
    e.user(f"Oh right, from {ka}")
    r = e.act(("get_account", {"account_id": ka}))
    tx = e.act(("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": 300}))
    e.say(
        f"Thanks! I've sent **$300.00** from {ka} to your sister's account {kb}. The transfer is recorded as "
        f"{tx['transaction_id']}, and {ka} now has {money(round(r['balance'] - 300, 2))} left."
    )
    return e, "clarification: the sending account is missing; asks, then transfers"


def g_bank_irrelevant(env: Env, v: int, eid: str):
    card, acc = _open_card(env, card_type="credit", status="active")
    l4 = card["last_four"]
    t = make_task(
        env,
        eid,
        "irrelevance",
        [],
        V(
            v,
            f"Can you raise the spending limit on my credit card ending {l4} to $10,000? Account {acc['account_id']}.",
            "I'd like to open a new savings account with you. Can you set one up for me today?",
        ),
        "update",
        facts={"account id": acc["account_id"]},
    )
    e = Ep(env, t)
    if v % 2 == 0:
        e.say(
            "I'm sorry, but changing a card's spending limit isn't something I can do here — my tools cover "
            "balances, transfers, blocking cards and disputing payments, but not credit limits.\n\nIf you'd like, I "
            "can transfer you to a colleague who can "
            "look at the request with you."
        )
        e.user("yes please, put me through")
        e.act(
            (
                HANDOFF,
                {
                    "summary": f"Customer wants the spending limit on credit card ending {l4} (account "
                    f"{acc['account_id']}) raised to $10,000."
                },
            )
        )
        e.say(
            "I've passed you to our customer care team with a note about the limit increase you're after. The "
            "current estimated wait is about 6 minutes. Thanks for your patience!"
        )
    else:
        e.say(
            "Thanks for thinking of us for your savings! Unfortunately I can't open new accounts — I can only help "
            "with "
            "existing accounts (balances, transfers), cards and transactions. To open one, you'd need to contact "
            "the bank directly, for example at a branch."
            "\n\nIs there anything about your current accounts I can help with?"
        )
    return e, "irrelevance: no tool raises a limit / opens an account; says so (and hands off on request)"


# =========================================================================== driver (scenario lists at the end)


def instance(kind: str, fn: Callable, v: int, base: int, attempts: int = 60, stride: int = 7):
    """The first seed from `base` (every `stride`) on which scenario `fn`'s variant `v` can be written."""
    for attempt in range(attempts):
        seed = base + attempt * stride
        env = Env(kind, seed)
        eid = f"bl3-{fn.__name__.split('_', 1)[1].replace('_', '-')}-{v}"
        try:
            out = fn(env, v, eid)
        except Skip:
            continue
        return eid, out, seed
    raise RuntimeError(f"{fn.__name__} v{v}: no seed fits")


def check_good(eid: str, ep: Ep) -> None:
    """What 'good' promises, checked without the judge: the end state is the gold one, and a call that failed
    was a read (a mistyped id the assistant then asked about)."""
    for c in ep.calls:
        assert c.ok or c.read_only, f"{eid}: a write failed: {c.name} {c.error}"
    assert ep.world.state == ep.task.blueprint.end_state, f"{eid}: end state differs from the gold end state"


def check_bad(eid: str, ep: Ep, reason: str, differs: bool) -> None:
    """The fault is real: a state fault leaves an end state other than the gold one; a claim fault keeps it."""
    same = ep.world.state == ep.task.blueprint.end_state
    assert same != differs, f"{eid} ({reason}): end state {'equals' if same else 'differs from'} the gold's"
    if reason == "forbidden_write":
        assert any(not c.read_only for c in ep.calls), f"{eid}: no write attempted"


def build(good: list, bad: list) -> list[dict]:
    rows = []
    for label, scenarios, base in (("good", good, 1000), ("bad", bad, 5000)):
        for i, entry in enumerate(scenarios):
            kind, fn, n = entry[:3]
            reason = entry[3] if label == "bad" else None
            for v in range(n):
                eid, out, seed = instance(kind, fn, v, base + 41 * i + 13 * v)
                if label == "good":
                    ep, note = out
                    check_good(eid, ep)
                else:
                    ep, note, differs = out
                    check_bad(eid, ep, reason, differs)
                traj = ep.trajectory(eid, STOPS[(i * 3 + v + (label == "bad")) % len(STOPS)])
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
    return rows


def main() -> None:
    rows = build(GOOD, BAD)
    rows.sort(key=lambda r: r["id"])  # good and bad interleaved by scenario name, not grouped by label
    with OUT.open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
    by = Counter((r["label"], r["reason"]) for r in rows)
    fam = Counter((r["task"]["blueprint"]["family"], r["label"]) for r in rows)
    for k, c in sorted(by.items(), key=lambda kv: str(kv[0])):
        print(*k, c, sep="\t")
    for k, c in sorted(fam.items()):
        print("family", *k, c, sep="\t")
    print(f"{len(rows)} episodes -> {OUT} ({OUT.stat().st_size / 1e6:.2f} MB)", file=sys.stderr)


# =========================================================================== library: good


def _fee(due: str) -> float:
    return round(min(10.0, max(0, ago(due)) * 0.25), 2)


def _renewable(env: Env, loan: dict) -> bool:
    return (
        loan["status"] == "active"
        and day(loan["due_date"]) >= T0
        and loan["renewals"] < 2
        and env.get("members", loan["member_id"])["status"] == "active"
    )


def _borrower(env: Env) -> dict:
    """An active member who may borrow (fines at most 10.00, fewer than 3 loans out)."""

    def ok(m):
        out = [x for x in env.recs("loans", member_id=m["member_id"]) if x["status"] in ("active", "overdue")]
        return m["status"] == "active" and m["fines_due"] <= 10 and len(out) < 3

    return env.pick("members", cond=ok)


def g_lib_overview(env: Env, v: int, eid: str):
    m = env.pick("members")
    loans = env.rng.sample(env.state["loans"], 3)
    if len({x["book_id"] for x in loans}) < 3:
        raise Skip("want three different books")
    for x in loans:
        x["member_id"] = m["member_id"]
    if not any(x["status"] == "active" for x in loans) or not any(x["status"] == "overdue" for x in loans):
        raise Skip("want an active and an overdue loan")
    k = m["member_id"]
    mine = sorted(env.recs("loans", member_id=k), key=lambda x: x["due_date"])
    books = list(dict.fromkeys(x["book_id"] for x in mine))
    active = next(x for x in mine if x["status"] == "active")
    t = make_task(
        env,
        eid,
        "dependent_calls",
        [("list_member_loans", {"member_id": k}), *[("get_book", {"book_id": b}) for b in books]],
        V(
            v,
            f"Hi, I'm member {k}. Could you give me an overview of my loans — which books, and when each one is due?",
            f"what books do I have out right now and when do they need to go back? member id {k}",
        ),
        "get_via",
        asked={f"due date of {active['loan_id']}": nice(active["due_date"])},
        facts={"member id": k},
    )
    e = Ep(env, t)
    rows = e.act(("list_member_loans", {"member_id": k}))["loans"]
    got = e.act(*[("get_book", {"book_id": b}) for b in books])
    got = got if isinstance(got, list) else [got]
    title = {b["book_id"]: b for b in got}
    lines, notes = [], []
    for x in sorted(rows, key=lambda x: x["due_date"]):
        b = title[x["book_id"]]
        if x["status"] == "overdue":
            when = f"was due {wnice(x['due_date'])} — **{ago(x['due_date'])} days overdue**"
            notes.append(
                f"*{b['title']}* is overdue: if it comes back today, the late fee would be "
                f"{money(_fee(x['due_date']))} ($0.25 a day, capped at $10.00)."
            )
        elif x["status"] == "active":
            n = ahead(x["due_date"])
            when = f"due {wnice(x['due_date'])} ({'today' if n == 0 else f'in {n} days'})"
        else:
            when = f"returned (it was due {nice(x['due_date'])})"
        lines.append((b, x, when))
    if v % 2 == 0:
        body = "\n".join(
            f"| *{b['title']}* | {b['author']} | {x['loan_id']} | {x['status']} | {when} |" for b, x, when in lines
        )
        e.say(
            f"Here's an overview of the loans on your card ({k}):\n\n| Book | Author | Loan | Status | Due |\n"
            f"|---|---|---|---|---|\n{body}\n\n"
            + " ".join(notes)
            + "\n\nLet me know if you'd like help with any of them."
        )
    else:
        body = "\n".join(f"- **{b['title']}** by {b['author']} ({x['loan_id']}): {when}" for b, x, when in lines)
        e.say("Here's what's on your account:\n\n" + body + "\n\n" + " ".join(notes))
    return e, "lists a member's loans and follows each to its book; due dates, overdue days and the fee so far correct"


def g_lib_renew(env: Env, v: int, eid: str):
    loan = env.pick("loans", cond=lambda x: _renewable(env, x))
    days = (14, 10)[v % 2]
    k = loan["loan_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_loan", {"loan_id": k}), ("renew_loan", {"loan_id": k, "days": days})],
        V(
            v,
            f"Could you renew my loan {k} for another two weeks?",
            f"hi, need 10 more days on loan {k} please, I'm not done with the book yet",
        ),
        "operation",
        facts={"loan id": k, "days": str(days)},
    )
    e = Ep(env, t)
    r = e.act(("get_loan", {"loan_id": k}))
    r2 = e.act(("renew_loan", {"loan_id": k, "days": days}))
    left = 2 - r2["renewals"]
    more = {
        0: "That was its last renewal — a loan can be renewed at most twice.",
        1: "You can renew it one more time if you need to.",
    }.get(left, "")
    e.say(
        V(
            v,
            f"Done! Loan {k} is renewed for 14 more days.\n\n- **Old due date:** {wnice(r['due_date'])}\n"
            f"- **New due date:** {wnice(r2['due_date'])}\n- **Renewals used:** {r2['renewals']} of 2\n\n{more}",
            f"No problem — I've added 10 days to loan {k}. It's now due back on **{wnice(r2['due_date'])}**, "
            f"{ahead(r2['due_date'])} days from today (it was due {nice(r['due_date'])}). {more} Enjoy the rest of the "
            "book!",
        )
    )
    return e, f"reads the loan, renews it {days} days, reports the new due date and renewals left correctly"


def g_lib_return_late(env: Env, v: int, eid: str):
    loan = env.pick("loans", status="overdue")
    k = loan["loan_id"]
    fee = _fee(loan["due_date"])
    steps = [("get_loan", {"loan_id": k}), ("return_book", {"loan_id": k})]
    t = make_task(
        env,
        eid,
        "single_call",
        steps,
        V(
            v,
            f"I'm dropping off the book from loan {k} — please check it back in. I know it's a bit late; "
            "what do I owe now?",
            f"Please return loan {k} for me. How much is the late fee?",
        ),
        "operation",
        asked={"late fee": money(fee)},
        facts={"loan id": k},
    )
    e = Ep(env, t)
    r = e.act(("get_loan", {"loan_id": k}))
    b = e.act(("get_book", {"book_id": r["book_id"]})) if v % 2 else None
    out = e.act(("return_book", {"loan_id": k}))
    if v % 2 == 0:
        e.say(
            f"Thanks for bringing it back! Loan {k} is now checked in.\n\nIt was due on {wnice(r['due_date'])}, so it "
            f"came back **{out['days_late']} days late**. At $0.25 a day"
            + (" (capped at $10.00)" if out["late_fee"] >= 10 else "")
            + f", the late fee is **{money(out['late_fee'])}**, which brings the total fines on your account to "
            f"**{money(out['fines_due'])}**."
            + (
                " Since that's over $10.00, you won't be able to borrow again until the fines are paid."
                if out["fines_due"] > 10
                else ""
            )
        )
    else:
        e.say(
            f"*{b['title']}* (loan {k}) is returned and back on the shelf.\n\n| | |\n|---|---|\n"
            f"| Due date | {nice(r['due_date'])} |\n| Days late | {out['days_late']} |\n"
            f"| Late fee | {money(out['late_fee'])} |\n| Fines now due on your account | {money(out['fines_due'])} |"
            + (
                "\n\nYour fines are now above $10.00, so new checkouts are on hold until they're paid."
                if out["fines_due"] > 10
                else "\n\nLet me know if there's anything else!"
            )
        )
    return e, "returns an overdue loan; days late, late fee and new fines total as the tool reported"


def g_lib_checkout(env: Env, v: int, eid: str):
    m = _borrower(env)
    bk = env.pick("books", cond=lambda b: b["copies_available"] >= 1)
    km, kb = m["member_id"], bk["book_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [
            ("get_member", {"member_id": km}),
            ("get_book", {"book_id": kb}),
            ("checkout_book", {"member_id": km, "book_id": kb}),
        ],
        V(
            v,
            f"I'd like to borrow book {kb}. My member number is {km}.",
            f"Hello! Is {kb} available? If so please check it out to me, member {km}.",
        ),
        "operation",
        facts={"member id": km, "book id": kb},
    )
    e = Ep(env, t)
    mem = e.act(("get_member", {"member_id": km}))
    book = e.act(("get_book", {"book_id": kb}))
    loan = e.act(("checkout_book", {"member_id": km, "book_id": kb}))
    due = loan["due_date"]
    e.say(
        V(
            v,
            f"You're all set, {first(mem['full_name'])}! *{book['title']}* by {book['author']} is checked out to "
            "you.\n\n"
            f"- **Loan:** {loan['loan_id']}\n- **Borrowed:** today, {wnice(loan['checkout_date'])}\n"
            f"- **Due back:** {wnice(due)} — three weeks from today\n\nEnjoy the read!",
            f"Good news — it was on the shelf ({book['copies_available']} "
            f"{'copy' if book['copies_available'] == 1 else 'copies'} available), so I've checked out "
            f"*{book['title']}* to you. Your loan number is {loan['loan_id']} and it's due back on **{nice(due)}** (a "
            "Friday, 21 days from now). You can renew it up to twice before then if you need more time.",
        )
    )
    return e, "checks the member and the book, checks it out; due date today + 21 days"


def g_lib_refuse_renew(env: Env, v: int, eid: str):
    loan = env.pick("loans", status="overdue")
    k = loan["loan_id"]
    n = ago(loan["due_date"])
    t = make_task(
        env,
        eid,
        "refusal",
        [("get_loan", {"loan_id": k})],
        V(
            v,
            f"Can you renew {k} for 2 more weeks? I haven't finished it.",
            f"Please extend my loan {k}, another 14 days would be great.",
        ),
        "operation",
        facts={"loan id": k, "days": "14"},
        rule=rule_of("library", "lib_renew"),
        asked={f"why {k} cannot be renewed (status)": "overdue"},
    )
    e = Ep(env, t)
    r = e.act(("get_loan", {"loan_id": k}))
    e.say(
        V(
            v,
            f"I'm sorry, I can't renew that one. Loan {k} was due on {wnice(r['due_date'])} and is now **overdue** "
            f"({n} days past its due date). Only active loans that aren't past their due date can be renewed.\n\n"
            f"What you can do: bring the book back as soon as you can. Late returns cost $0.25 a day, so returning "
            f"it today would mean a fee of {money(_fee(r['due_date']))}"
            + (" (the fee is capped at $10.00)." if _fee(r["due_date"]) >= 10 else "."),
            f"I've checked loan {k}: it's **overdue** — the due date was {nice(r['due_date'])}, {n} days ago — and our "
            "rules only allow renewing an active loan that is still within its due date, so I'm not able to extend it."
            "\n\nThe late fee grows by $0.25 a day (up to $10.00), so the sooner it comes back the better. If you'd "
            "still like to read it after returning it, you're welcome to borrow it again if a copy is available and "
            "your account is in good standing.",
        )
    )
    return e, "refusal: the loan is overdue; reads it and declines to renew, citing the rule, no write"


def g_lib_conditional(env: Env, v: int, eid: str):
    holds = v % 2 == 0
    if holds:
        loan = env.pick("loans", cond=lambda x: _renewable(env, x))
    else:
        loan = env.pick("loans", cond=lambda x: x["status"] != "active")
    k = loan["loan_id"]
    steps = [("get_loan", {"loan_id": k})] + ([("renew_loan", {"loan_id": k, "days": 7})] if holds else [])
    t = make_task(
        env,
        eid,
        "conditional",
        steps,
        f"If my loan {k} is still active, please renew it for a week. If it isn't, just tell me where it stands.",
        "conditional_action",
        asked=None if holds else {f"status of {k}": loan["status"]},
        facts={"loan id": k, "status it should have": "active", "days": "7"},
    )
    e = Ep(env, t)
    r = e.act(("get_loan", {"loan_id": k}))
    if holds:
        r2 = e.act(("renew_loan", {"loan_id": k, "days": 7}))
        e.say(
            f"Loan {k} was still active, so I've renewed it for a week: the due date moved from "
            f"{short(r['due_date'])} to **{wnice(r2['due_date'])}**. That's renewal {r2['renewals']} of 2."
        )
    elif r["status"] == "overdue":
        e.say(
            f"Loan {k} isn't active any more — it's **overdue**. It was due on {wnice(r['due_date'])}, "
            f"{ago(r['due_date'])} days ago, so I haven't renewed it (an overdue loan can't be renewed). Returning it "
            f"today would add a late fee of {money(_fee(r['due_date']))} to your account."
        )
    else:
        e.say(
            f"Loan {k} has already been **returned**, so there's nothing to renew — it's closed. (It was checked out "
            f"on {nice(r['checkout_date'])}.) If you'd like to borrow the book again, I can check whether a copy is "
            "available."
        )
    return e, "conditional: renews only if the loan is active; " + ("it is, renewed" if holds else "it is not, reports")


def g_lib_follow_book(env: Env, v: int, eid: str):
    loan = env.pick("loans", status="active")
    k = loan["loan_id"]
    bk = env.get("books", loan["book_id"])
    t = make_task(
        env,
        eid,
        "dependent_calls",
        [("get_loan", {"loan_id": k}), ("get_book", {"book_id": loan["book_id"]})],
        V(
            v,
            f"Quick question about loan {k}: who wrote that book, and when does it need to be back?",
            f"I forgot the title of the book I borrowed (loan {k}). What is it, who's the author, and when's it due?",
        ),
        "get_via",
        asked={"author": bk["author"], "due date": nice(loan["due_date"])},
        facts={"loan id": k},
    )
    e = Ep(env, t)
    r = e.act(("get_loan", {"loan_id": k}))
    b = e.act(("get_book", {"book_id": r["book_id"]}))
    n = ahead(r["due_date"])
    rel = "today" if n == 0 else "tomorrow" if n == 1 else f"in {n} days"
    e.say(
        V(
            v,
            f"The book on loan {k} is *{b['title']}* by **{b['author']}**. It's due back on **{nice(r['due_date'])}** "
            f"({day(r['due_date']):%A}), {rel}.",
            f"Here you go:\n\n- **Title:** {b['title']}\n- **Author:** {b['author']}\n- **Due:** "
            f"{wnice(r['due_date'])} ({rel})\n\n"
            + (
                f"It has been renewed {r['renewals']} time{'s' if r['renewals'] != 1 else ''} so far"
                + (
                    ", so it can't be renewed again."
                    if r["renewals"] >= 2
                    else "; you can renew it if you need longer."
                )
                if r["renewals"]
                else "If you need more time, I can renew it for you."
            ),
        )
    )
    return e, "follows the loan to its book: author and due date correct"


def g_lib_clarify_fines(env: Env, v: int, eid: str):
    m = env.pick("members", cond=lambda x: x["fines_due"] > 0)
    k = m["member_id"]
    t = make_task(
        env,
        eid,
        "clarification",
        [("get_member", {"member_id": k})],
        "Hi there, how much do I owe in late fees at the moment?",
        "get",
        asked={"fines due": money(m["fines_due"])},
        withheld={"member id": k},
    )
    e = Ep(env, t)
    e.say('I can check that for you! Could you tell me your member number? It starts with "mbr-".')
    e.user(f"sure, it's {k}")
    r = e.act(("get_member", {"member_id": k}))
    extra = (
        " That's above the $10.00 limit, so you won't be able to borrow new books until it's paid off"
        + (", and your membership is currently suspended." if r["status"] == "suspended" else ".")
        if r["fines_due"] > 10
        else " You're under the $10.00 limit, so you can still borrow books."
    )
    e.say(f"Thanks, {first(r['full_name'])}. You currently owe **{money(r['fines_due'])}** in late fees.{extra}")
    return e, "clarification: asks for the member number, then reports the fines"


def g_lib_refuse_checkout(env: Env, v: int, eid: str):
    m = env.pick("members", status="suspended")
    bk = env.pick("books", cond=lambda b: b["copies_available"] >= 1)
    km, kb = m["member_id"], bk["book_id"]
    t = make_task(
        env,
        eid,
        "refusal",
        [("get_member", {"member_id": km})],
        f"Can I borrow {kb}, please? I'm member {km}.",
        "operation",
        facts={"member id": km, "book id": kb},
        rule=rule_of("library", "lib_borrow"),
    )
    e = Ep(env, t)
    r = e.act(("get_member", {"member_id": km}))
    e.say(
        f"I'm sorry, {first(r['full_name'])}, but I can't check out a book to you right now. Your account shows "
        f"**{money(r['fines_due'])}** in unpaid fines and your membership is **suspended**; members who owe more than "
        "$10.00 can't borrow until the fines are paid.\n\nOnce the fines are settled, I'd be glad to help you "
        "borrow it."
    )
    return e, "refusal: the member is suspended and owes over 10.00; reads the member and declines, no write"


def g_lib_recover_id(env: Env, v: int, eid: str):
    loan = env.pick("loans", cond=lambda x: _renewable(env, x))
    k = loan["loan_id"]
    n = int(k.rsplit("-", 1)[1])
    typo = f"ln-{n + 50}"
    if any(x["loan_id"] == typo for x in env.state["loans"]):
        raise Skip("typo exists")
    t = make_task(
        env,
        eid,
        "error_recovery",
        [("get_loan", {"loan_id": k}), ("renew_loan", {"loan_id": k, "days": 21})],
        f"Please renew my loan {typo} for three weeks.",
        "operation",
        facts={"loan id": typo, "days": "21"},
    )
    e = Ep(env, t)
    e.act(("get_loan", {"loan_id": typo}), fails=True)
    e.say(
        f'I couldn\'t find a loan with the number {typo} — could you double-check it? Loan numbers look like "ln-" '
        "followed by four digits."
    )
    e.user(f"oops, sorry. it's {k}")
    r = e.act(("get_loan", {"loan_id": k}))
    r2 = e.act(("renew_loan", {"loan_id": k, "days": 21}))
    e.say(
        f"Found it, thanks! Loan {k} is renewed for three weeks: it was due {nice(r['due_date'])} and is now due "
        f"**{wnice(r2['due_date'])}**."
    )
    return e, "error recovery: the first id is unknown (not_found); asks, gets the right one, renews"


# =========================================================================== shop: good


def _refund_room(env: Env, order: dict) -> float:
    taken = sum(
        r["amount"] for r in env.recs("refunds", order_id=order["order_id"]) if r["status"] in ("issued", "requested")
    )
    return round(order["amount"] - taken, 2)


def _gather_orders(env: Env, cust: dict, n: int) -> list[dict]:
    if len(env.state["orders"]) < n:
        raise Skip("too few orders")
    orders = env.rng.sample(env.state["orders"], n)
    for o in orders:
        o["customer_id"] = cust["customer_id"]
    return orders


def g_shop_orders(env: Env, v: int, eid: str):
    c = env.pick("customers")
    _gather_orders(env, c, 4)
    k = c["customer_id"]
    mine = env.recs("orders", customer_id=k)
    live = [o for o in mine if o["status"] != "cancelled"]
    total = round(sum(o["amount"] for o in live), 2)
    t = make_task(
        env,
        eid,
        "aggregate",
        [("list_customer_orders", {"customer_id": k})],
        V(
            v,
            f"Hi, my customer number is {k}. Can you list all my orders and tell me how much I've spent in total?",
            f"could you pull up every order on my account ({k})? I want to see what's still on its way and "
            "what I've spent overall",
        ),
        "sum",
        asked={"total spent": money(total)},
        facts={"customer id": k},
    )
    e = Ep(env, t)
    rows = e.act(("list_customer_orders", {"customer_id": k}))["orders"]
    rows = sorted(rows, key=lambda o: o["placed_on"], reverse=True)
    table = "\n".join(
        f"| {o['order_id']} | {o['product']} | {o['quantity']} | {short(o['placed_on'])} | "
        f"{money(o['amount'])} | {o['status']} |"
        for o in rows
    )
    cancelled = [o for o in rows if o["status"] == "cancelled"]
    on_way = [o for o in rows if o["status"] in ("pending", "shipped")]
    cnote = (
        f" The cancelled order{'s' if len(cancelled) > 1 else ''} "
        f"({', '.join(o['order_id'] for o in cancelled)}) {'aren' if len(cancelled) > 1 else 'isn'}'t counted."
        if cancelled
        else ""
    )
    if v % 2 == 0:
        e.say(
            f"Here are all {len(rows)} orders on your account, newest first:\n\n| Order | Product | Qty | Placed | "
            f"Amount | Status |\n|---|---|---|---|---|---|\n{table}\n\n**Total spent: {money(total)}** across "
            f"{len(live)} order{'s' if len(live) != 1 else ''}.{cnote}"
        )
    else:
        way = (
            "Still on the way: " + ", ".join(f"{o['order_id']} ({o['product']}, {o['status']})" for o in on_way) + "."
            if on_way
            else "Nothing is on its way right now — everything has either been delivered or cancelled."
        )
        e.say(
            f"### Your orders ({k})\n\n| Order | Product | Qty | Placed | Amount | Status "
            "|\n|---|---|---|---|---|---|\n"
            f"{table}\n\n{way}\n\nOverall you've spent **{money(total)}**.{cnote}"
        )
    return e, "lists a customer's orders in a table; the total of the orders not cancelled is correct"


def g_shop_cancel(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k = o["order_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_order", {"order_id": k}), ("cancel_order", {"order_id": k})],
        V(
            v,
            f"Please cancel order {k}, I ordered the wrong thing.",
            f"Hi, I'd like to cancel my order {k} if it hasn't gone out yet.",
        ),
        "operation",
        facts={"order id": k},
    )
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    if v % 2 == 0:
        e.act(("cancel_order", {"order_id": k}))
        e.say(
            f"Done — order **{k}** ({r['quantity']} × {r['product']}, {money(r['amount'])}) is now cancelled. It "
            f"was still pending, placed on {wnice(r['placed_on'])}, so nothing had shipped yet.\n\nIs there anything "
            "else I can help you with?"
        )
        return e, "reads the order (pending), cancels it, confirms"
    e.say(
        f"Good news: order {k} hasn't shipped yet — it's still **pending** (placed {nice(r['placed_on'])}).\n\n"
        f"Before proceeding, please confirm: I'll cancel the whole order — {r['quantity']} × {r['product']} for "
        f"{money(r['amount'])}. Once cancelled it can't be reopened. Shall I go ahead?"
    )
    e.user("yes, go ahead")
    e.act(("cancel_order", {"order_id": k}))
    e.say(
        f"Order {k} has been cancelled. Sorry it didn't work out this time — happy to help if you'd like to place a "
        "new one."
    )
    return e, "reads the pending order, asks confirmation, cancels after the user's yes"


def g_shop_refund(env: Env, v: int, eid: str):
    o = env.pick(
        "orders", cond=lambda x: x["status"] == "delivered" and ago(x["placed_on"]) <= 30 and _refund_room(env, x) >= 20
    )
    k = o["order_id"]
    reason = ("damaged", "wrong_item")[v % 2]
    amount = min(200.0, round(_refund_room(env, o) * 0.5, 0))
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_order", {"order_id": k}), ("refund_order", {"order_id": k, "amount": amount, "reason": reason})],
        V(
            v,
            f"Order {k} arrived damaged — part of it is broken. Could I get ${amount:.2f} back?",
            f"You sent me the wrong item on order {k}. Please refund {amount:.0f} dollars.",
        ),
        "operation",
        facts={"order id": k, "amount": f"{amount:.2f}", "reason": human(reason)},
    )
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    rf = e.act(("refund_order", {"order_id": k, "amount": amount, "reason": reason}))
    e.say(
        V(
            v,
            f"I'm sorry your order arrived damaged! I've issued a refund of **{money(rf['amount'])}** on order {k} "
            f"({r['product']}).\n\n- **Refund:** {rf['refund_id']}\n- **Reason:** damaged\n- **Status:** "
            f"{rf['status']}\n"
            f"\nThe order was placed on {nice(r['placed_on'])}, so it was still inside the 30-day refund window.",
            f"Apologies for the mix-up! Your refund of {money(rf['amount'])} for the wrong item on order {k} has been "
            f"issued (refund {rf['refund_id']}).",
        )
    )
    return e, f"delivered order inside the window: refund of {amount:.2f} ({reason}) issued and confirmed"


def g_shop_approve(env: Env, v: int, eid: str):
    o = env.pick(
        "orders", cond=lambda x: any(r["status"] == "requested" for r in env.recs("refunds", order_id=x["order_id"]))
    )
    k = o["order_id"]
    for r in [r for r in env.recs("refunds", order_id=k) if r["status"] == "requested"][1:]:
        r["status"] = "rejected"  # one request waits on the order
    rq = next(r for r in env.recs("refunds", order_id=k) if r["status"] == "requested")
    t = make_task(
        env,
        eid,
        "dependent_calls",
        [("list_order_refunds", {"order_id": k}), ("approve_refund", {"refund_id": rq["refund_id"]})],
        V(
            v,
            f"I was told my refund request on order {k} is waiting for approval. Can you approve it?",
            f"There's a refund request sitting on my order {k}. Could you push it through please?",
        ),
        "find_then",
        facts={"order id": k},
    )
    e = Ep(env, t)
    rows = e.act(("list_order_refunds", {"order_id": k}))["refunds"]
    r = e.act(("approve_refund", {"refund_id": rq["refund_id"]}))
    others = [x for x in rows if x["refund_id"] != rq["refund_id"]]
    extra = (
        f"\n\nFor reference, the order has {len(others)} other refund record{'s' if len(others) > 1 else ''} "
        f"({'; '.join(x['refund_id'] + ': ' + money(x['amount']) + ', ' + x['status'] for x in others)}); I left "
        f"{'those' if len(others) > 1 else 'that'} as they were."
        if others
        else ""
    )
    e.say(
        V(
            v,
            f"I found the pending request: refund **{rq['refund_id']}** for {money(rq['amount'])} "
            f"({human(rq['reason'])}), requested on {nice(rq['requested_on'])}. It fits within what you paid for the "
            f"order, so I've approved it — its status is now **{r['status']}**.{extra}",
            f"Done! Refund {rq['refund_id']} ({money(rq['amount'])}, reason: {human(rq['reason'])}) on order {k} is "
            f"approved and now {r['status']}.{extra}",
        )
    )
    return e, "finds the order's one requested refund and approves it"


def g_shop_refuse_cancel(env: Env, v: int, eid: str):
    o = env.pick("orders", status="shipped")
    k = o["order_id"]
    t = make_task(
        env,
        eid,
        "refusal",
        [("get_order", {"order_id": k})],
        V(v, f"Cancel order {k} please, I found it cheaper elsewhere.", f"I need to cancel {k}. Can you do that?"),
        "operation",
        facts={"order id": k},
        rule=rule_of("shop", "shop_cancel"),
        asked={f"why {k} cannot be cancelled (status)": "shipped"},
    )
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    end = plus(r["placed_on"], 30)
    e.say(
        V(
            v,
            f"I understand, but I'm afraid order {k} can't be cancelled any more: it has already **shipped**, and only "
            "pending orders can be cancelled.\n\nHere's what you can do instead: once it's delivered, you can ask "
            "for a "
            f"refund. Refunds are possible within 30 days of the order date — it was placed on {nice(r['placed_on'])}, "
            f"so that's until {wnice(end)}.",
            f"I checked order {k} ({r['quantity']} × {r['product']}): its status is **shipped**, so it's past the "
            "point "
            "where I can cancel it — cancellation is only possible while an order is pending.\n\nOnce it arrives, "
            "get in touch and we can look at a refund; the window is 30 days from the order date "
            f"({nice(r['placed_on'])}),"
            f" i.e. until {nice(end)}.",
        )
    )
    return e, "refusal: the order has shipped; reads it, declines to cancel, explains the refund route"


def g_shop_refuse_window(env: Env, v: int, eid: str):
    o = env.pick("orders", cond=lambda x: x["status"] == "delivered" and ago(x["placed_on"]) > 30)
    k = o["order_id"]
    n = ago(o["placed_on"])
    t = make_task(
        env,
        eid,
        "refusal",
        [("get_order", {"order_id": k})],
        f"The {o['product']} from order {k} stopped working. I want a refund of $20 please.",
        "operation",
        facts={"order id": k, "amount": "20.00", "reason": "damaged"},
        rule=rule_of("shop", "shop_refund_window"),
    )
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    e.say(
        f"I'm sorry to hear the {r['product']} stopped working. Unfortunately I can't issue a refund on order {k}: it "
        f"was placed on {wnice(r['placed_on'])}, {n} days ago, and refunds are only possible within 30 days of the "
        f"order date — that window closed on {nice(plus(r['placed_on'], 30))}.\n\nIf you'd like someone to look at "
        "whether anything else can be done (for example a warranty question), I can transfer you to a colleague."
    )
    return e, f"refusal: delivered {n} days ago, past the 30-day window; reads the order and declines, no write"


def g_shop_conditional(env: Env, v: int, eid: str):
    holds = v % 2 == 0
    o = (
        env.pick("orders", status="pending")
        if holds
        else env.pick("orders", status=("shipped", "delivered")[v // 2 % 2])
    )
    k = o["order_id"]
    steps = [("get_order", {"order_id": k})] + ([("cancel_order", {"order_id": k})] if holds else [])
    t = make_task(
        env,
        eid,
        "conditional",
        steps,
        f"If order {k} is still pending, cancel it please. Otherwise just let me know its status.",
        "conditional_action",
        asked=None if holds else {f"status of {k}": o["status"]},
        facts={"order id": k, "status it should have": "pending"},
    )
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    if holds:
        e.act(("cancel_order", {"order_id": k}))
        e.say(
            f"Order {k} was still pending, so I've cancelled it. ✅\n\n**Cancelled:** {r['quantity']} × "
            f"{r['product']} — {money(r['amount'])}"
        )
    else:
        e.say(
            f"Order {k} isn't pending any more — its status is **{r['status']}** (placed {wnice(r['placed_on'])}), so "
            "I haven't cancelled anything. "
            + ("It's on its way to you." if r["status"] == "shipped" else "It has already been delivered.")
        )
    return e, "conditional: cancels only if pending; " + ("it is, cancelled" if holds else "it is not, reports")


def g_shop_refund_total(env: Env, v: int, eid: str):
    o = env.pick("orders", cond=lambda x: len(env.recs("refunds", order_id=x["order_id"])) >= 2)
    k = o["order_id"]
    rs = env.recs("refunds", order_id=k)
    issued = round(sum(r["amount"] for r in rs if r["status"] == "issued"), 2)
    t = make_task(
        env,
        eid,
        "aggregate",
        [("list_order_refunds", {"order_id": k})],
        V(
            v,
            f"How much have I been refunded so far on order {k}?",
            f"can you break down the refunds on {k}? what's actually been paid back to me?",
        ),
        "sum",
        asked={"issued refunds total": money(issued)},
        facts={"order id": k},
    )
    e = Ep(env, t)
    rows = e.act(("list_order_refunds", {"order_id": k}))["refunds"]
    by = {s: [r for r in rows if r["status"] == s] for s in ("issued", "requested", "rejected")}
    lines = "\n".join(
        f"| {r['refund_id']} | {money(r['amount'])} | {human(r['reason'])} | {nice(r['requested_on'])} | "
        f"{r['status']} |"
        for r in sorted(rows, key=lambda r: r["requested_on"])
    )
    parts = []
    if by["requested"]:
        parts.append(f"{money(round(sum(r['amount'] for r in by['requested']), 2))} is still awaiting approval")
    if by["rejected"]:
        parts.append(f"{money(round(sum(r['amount'] for r in by['rejected']), 2))} was rejected")
    tail = (" Besides that, " + " and ".join(parts) + ".") if parts else ""
    e.say(
        V(
            v,
            f"So far **{money(issued)}** has been refunded to you on order {k}"
            + (f" ({len(by['issued'])} issued refund{'s' if len(by['issued']) != 1 else ''})." if by["issued"] else ".")
            + tail,
            f"Here's the breakdown for order {k}:\n\n| Refund | Amount | Reason | Requested | Status "
            "|\n|---|---|---|---|---|\n"
            f"{lines}\n\n**Actually paid back (issued): {money(issued)}**.{tail}",
        )
    )
    return e, "sums the issued refunds of an order correctly (requested and rejected ones apart)"


def g_shop_irrelevant(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k = o["order_id"]
    t = make_task(
        env,
        eid,
        "irrelevance",
        [],
        f"Can you change the delivery address on order {k}? I'm moving next week.",
        "update",
        facts={"order id": k},
    )
    e = Ep(env, t)
    e.say(
        "Congratulations on the move! Unfortunately I can't change a delivery address — my tools let me look up "
        "orders and refunds, cancel pending orders and handle refunds, but not edit shipping details.\n\nI can "
        "transfer you to a colleague who may be able to update it for you, if you'd like."
    )
    return e, "irrelevance: no tool edits an address; says so without calling a tool, offers a hand-off"


def g_shop_recover_id(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k = o["order_id"]
    n = int(k.rsplit("-", 1)[1])
    typo = f"ord-{n + 90}"
    if any(x["order_id"] == typo for x in env.state["orders"]):
        raise Skip("typo exists")
    t = make_task(
        env,
        eid,
        "error_recovery",
        [("get_order", {"order_id": k}), ("cancel_order", {"order_id": k})],
        f"Please cancel order {typo}.",
        "operation",
        facts={"order id": typo},
    )
    e = Ep(env, t)
    e.act(("get_order", {"order_id": typo}), fails=True)
    e.say(
        f"Hmm, I can't find an order with the number {typo}. Could you double-check it against your order confirmation?"
    )
    e.user(f"Sorry, typo — it's {k}.")
    r = e.act(("get_order", {"order_id": k}))
    e.act(("cancel_order", {"order_id": k}))
    e.say(f"Thanks! Order {k} ({r['product']}, {money(r['amount'])}) was still pending, and it's now cancelled.")
    return e, "error recovery: an unknown order number (not_found); asks, gets the right one, cancels"


# =========================================================================== bad episodes
# Each returns (episode, note, differs): `differs` says whether the fault leaves an end state other than the
# gold one (checked). One main fault each; the rest is written like the good episodes.

# --------------------------------------------------------------------------- bank


def _two_cards(env: Env) -> tuple[dict, dict, dict]:
    """An open account with two active cards (a second card of it made active if needed) of different limits."""
    accs = [
        a
        for a in env.state["accounts"]
        if a["status"] != "closed" and len(env.recs("cards", account_id=a["account_id"])) >= 2
    ]
    if not accs:
        raise Skip("no account with two cards")
    acc = env.rng.choice(accs)
    c1, c2 = env.recs("cards", account_id=acc["account_id"])[:2]
    c1["status"] = c2["status"] = "active"
    if c1["spending_limit"] == c2["spending_limit"]:
        c2["spending_limit"] = 5000.0 if c1["spending_limit"] != 5000.0 else 1000.0
    return acc, c1, c2


def b_bank_block_pick(env: Env, v: int, eid: str):
    acc, asked, other = _two_cards(env)
    a = acc["account_id"]
    t = make_task(
        env,
        eid,
        "dependent_calls",
        [("list_account_cards", {"account_id": a}), ("block_card", {"card_id": asked["card_id"], "reason": "lost"})],
        f"I lost my card, the one ending in {asked['last_four']}. Account {a}. Please block it.",
        "find_then",
        facts={"account id": a, "card's last four digits": asked["last_four"]},
    )
    e = Ep(env, t)
    e.act(("list_account_cards", {"account_id": a}))
    e.act(("block_card", {"card_id": other["card_id"], "reason": "lost"}))
    e.say(
        f"I've blocked your card ending **{asked['last_four']}** on account {a}, so no new payments can be made with "
        "it. "
        "Sorry about the lost card — if it turns up, let us know.\n\nIs there anything else I can help with?"
    )
    return (
        e,
        (
            f"blocks {other['card_id']} (ending {other['last_four']}) instead of the card ending "
            f"{asked['last_four']} the user named, and reports the named one blocked"
        ),
        True,
    )


def b_bank_balance_math(env: Env, v: int, eid: str):
    amount = 250.0
    a, b = _two_active(env, least=600)
    ka, kb = a["account_id"], b["account_id"]
    if _sent_today(env, ka) + amount > 2500:
        raise Skip("limit")
    t = make_task(
        env,
        eid,
        "single_call",
        [
            ("get_account", {"account_id": ka}),
            ("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": amount}),
        ],
        f"Please transfer $250 from {ka} to {kb}, and tell me what's left in {ka} afterwards.",
        "operation",
        facts={"from account": ka, "to account": kb, "amount": "250.00"},
    )
    e = Ep(env, t)
    r = e.act(("get_account", {"account_id": ka}))
    tx = e.act(("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": amount}))
    wrong = round(r["balance"] - amount - 100, 2)
    e.say(
        f"Done! **$250.00** is on its way from {ka} to {kb} (transfer {tx['transaction_id']}, posted today).\n\n"
        f"Your balance on {ka} was {money(r['balance'])}, so you now have **{money(wrong)}** left."
    )
    return (
        e,
        (
            f"transfer right; the balance left is misreported as {money(wrong)} (it is "
            f"{money(round(r['balance'] - amount, 2))})"
        ),
        False,
    )


def b_bank_limits_swap(env: Env, v: int, eid: str):
    acc, c1, c2 = _two_cards(env)
    a = acc["account_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("list_account_cards", {"account_id": a})],
        f"What are the spending limits on my two cards? Account {a}.",
        "list",
        asked={
            f"limit of card ending {c1['last_four']}": money(c1["spending_limit"]),
            f"limit of card ending {c2['last_four']}": money(c2["spending_limit"]),
        },
        facts={"account id": a},
    )
    e = Ep(env, t)
    e.act(("list_account_cards", {"account_id": a}))
    e.say(
        f"Here are the cards on account {a}:\n\n| Card | Type | Spending limit | Status |\n|---|---|---|---|\n"
        f"| ending {c1['last_four']} | {c1['card_type']} | {money(c2['spending_limit'])} | {c1['status']} |\n"
        f"| ending {c2['last_four']} | {c2['card_type']} | {money(c1['spending_limit'])} | {c2['status']} |\n\n"
        "Both cards are active. Let me know if you'd like anything changed."
    )
    return e, "the two cards' spending limits are swapped between them (each limit given for the other card)", False


def _dispute_case(env: Env) -> dict:
    cands = [
        x
        for x in env.recs("transactions", kind="card_payment", status="posted")
        if env.get("accounts", x["account_id"])["status"] != "closed"
        and env.get("cards", x["card_id"])["status"] == "active"
    ]
    if not cands:
        raise Skip("no posted payment on an active card")
    tx = env.rng.choice(cands)
    if ago(tx["posted_on"]) > 60:
        tx["posted_on"] = (T0 - timedelta(days=env.rng.randint(3, 40))).isoformat()
    if len(env.recs("transactions", account_id=tx["account_id"], status="disputed")) >= 3:
        raise Skip("dispute cap")
    return tx


def b_bank_dispute_story(env: Env, v: int, eid: str):
    tx = _dispute_case(env)
    k, a, c = tx["transaction_id"], tx["account_id"], tx["card_id"]
    card = env.get("cards", c)
    t = make_task(
        env,
        eid,
        "multi_call",
        [
            ("list_account_transactions", {"account_id": a}),
            ("dispute_transaction", {"transaction_id": k, "reason": "not_recognized"}),
            ("block_card", {"card_id": c, "reason": "suspicious_activity"}),
        ],
        f"There's a {money(tx['amount'])} payment to {tx['merchant']} on my account {a} that I didn't make. "
        "Please dispute it and block my card.",
        "operation",
        facts={"account id": a, "merchant": tx["merchant"], "amount": f"{tx['amount']:.2f}"},
    )
    e = Ep(env, t)
    e.act(("list_account_transactions", {"account_id": a}))
    e.act(("dispute_transaction", {"transaction_id": k, "reason": "not_recognized"}))
    e.act(("block_card", {"card_id": c, "reason": "suspicious_activity"}))
    e.say(
        f"I'm sorry about this — I've dealt with both:\n\n- **Disputed:** the {money(tx['amount'])} payment to "
        f"{tx['merchant']} on {nice(tx['posted_on'])} ({k}). It was an online, card-not-present purchase made at "
        "11:42 PM from an overseas terminal, which fits the pattern of card fraud, so it's now on hold while the "
        f"bank reviews it.\n- **Blocked:** your {card['card_type']} card ending {card['last_four']}.\n\nLet me know "
        "if you see anything else unusual."
    )
    return (
        e,
        (
            "dispute and block right; invents the payment's circumstances (online, 11:42 PM, overseas terminal), "
            "which the transaction record does not hold"
        ),
        False,
    )


def b_bank_block_replacement(env: Env, v: int, eid: str):
    card, acc = _open_card(env, status="active")
    k, l4, a = card["card_id"], card["last_four"], acc["account_id"]
    t = make_task(
        env,
        eid,
        "dependent_calls",
        [("list_account_cards", {"account_id": a}), ("block_card", {"card_id": k, "reason": "stolen"})],
        f"My bag got stolen at the train station with my card ending {l4} in it. Account {a}. Block it please!",
        "find_then",
        facts={"account id": a, "card's last four digits": l4},
    )
    e = Ep(env, t)
    e.act(("list_account_cards", {"account_id": a}))
    e.act(("block_card", {"card_id": k, "reason": "stolen"}))
    e.say(
        f"I'm really sorry that happened. Your {card['card_type']} card ending **{l4}** is now blocked, so nobody can "
        "use it.\n\nI've also ordered a replacement card for you — it will be sent to the address on file and should "
        "arrive within 5–7 business days. Is there anything else I can do?"
    )
    return e, "block right; claims a replacement card was ordered, which no tool did (none can)", False


def b_bank_transfer_overcap(env: Env, v: int, eid: str):
    a, b = _two_active(env)
    ka, kb = a["account_id"], b["account_id"]
    if _sent_today(env, ka):
        raise Skip("sent today")
    env.get("accounts", ka)["balance"] = round(env.rng.uniform(2700, 5800), 2)
    t = make_task(
        env,
        eid,
        "multi_call",
        [
            ("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": 2000}),
            ("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": 400}),
        ],
        f"Please send $2,400 from {ka} to {kb}. It's for my car payment, needs to be there today.",
        "operation",
        facts={"from account": ka, "to account": kb, "amount": "2400.00"},
    )
    e = Ep(env, t)
    e.act(("get_account", {"account_id": ka}))
    e.act(("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": 2400}), fails=True)
    e.say(
        f"All done! **$2,400.00** has been transferred from {ka} to {kb}, so your car payment is covered for today. "
        "That's within your $2,500 daily transfer limit.\n\nAnything else I can help with?"
    )
    return e, "the one transfer call failed (2,400 is over the tool's 2,000 maximum); claims the money was moved", True


def b_bank_dispute_outage(env: Env, v: int, eid: str):
    tx = _dispute_case(env)
    dup = env.add(
        "transactions",
        account_id=tx["account_id"],
        card_id=tx["card_id"],
        kind="card_payment",
        merchant=tx["merchant"],
        amount=tx["amount"],
        posted_on=tx["posted_on"],
        status="posted",
    )
    a = tx["account_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [
            ("list_account_transactions", {"account_id": a}),
            ("dispute_transaction", {"transaction_id": dup["transaction_id"], "reason": "duplicate_charge"}),
        ],
        f"{tx['merchant']} charged me twice on {nice(tx['posted_on'])}, {money(tx['amount'])} each time. "
        f"Account {a}. Can you dispute the second charge?",
        "operation",
        facts={"account id": a, "merchant": tx["merchant"], "amount": f"{tx['amount']:.2f}"},
    )
    e = Ep(env, t)
    e.act(("list_account_transactions", {"account_id": a}))
    e.say(
        f"I can see both {money(tx['amount'])} payments to {tx['merchant']} on {nice(tx['posted_on'])} "
        f"({tx['transaction_id']} and {dup['transaction_id']}), so it does look like a duplicate.\n\nUnfortunately, "
        "when I tried to open the dispute, our disputes system timed out and didn't accept the request. I'm sorry "
        "about that — could you try again a little later, or call the number on the back of your card so a "
        "colleague can file it for you?"
    )
    return e, "no dispute call was made; reports a disputes-system timeout that never happened", True


def b_bank_frozen_attempt(env: Env, v: int, eid: str):
    a = env.pick("accounts", status="frozen")
    b = env.pick("accounts", status="active")
    ka, kb = a["account_id"], b["account_id"]
    amount = 150.0
    t = make_task(
        env,
        eid,
        "refusal",
        [("get_account", {"account_id": ka})],
        f"Send $150 from {ka} to {kb} please.",
        "operation",
        facts={"from account": ka, "to account": kb, "amount": "150.00"},
        rule=rule_of("bank", "bank_transfer"),
    )
    e = Ep(env, t)
    r = e.act(("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": amount}), fails=True)
    e.say(
        f"I tried to send the $150.00, but the system refused it: {r['error']['message']}. Transfers can only go "
        f"between two active accounts, so nothing was moved.\n\nIf you'd like to get {ka} reactivated, I can connect "
        "you with a colleague who can look into it."
    )
    return (
        e,
        (
            "sends the transfer from a frozen account without reading it first (policy: transfers only between "
            "active accounts) and then quotes the system's refusal"
        ),
        False,
    )


def b_bank_block_both(env: Env, v: int, eid: str):
    acc, c1, c2 = _two_cards(env)
    a = acc["account_id"]
    t = make_task(
        env,
        eid,
        "dependent_calls",
        [("list_account_cards", {"account_id": a}), ("block_card", {"card_id": c1["card_id"], "reason": "lost"})],
        f"I can't find my {c1['card_type']} card ending {c1['last_four']} — I think I dropped it at the gym. "
        f"Account {a}. Can you block it?",
        "find_then",
        facts={"account id": a, "card's last four digits": c1["last_four"]},
    )
    e = Ep(env, t)
    e.act(("list_account_cards", {"account_id": a}))
    e.act(
        ("block_card", {"card_id": c1["card_id"], "reason": "lost"}),
        ("block_card", {"card_id": c2["card_id"], "reason": "lost"}),
    )
    e.say(
        f"I've blocked your {c1['card_type']} card ending **{c1['last_four']}**.\n\nTo be on the safe side, I've also "
        f"blocked the other card on the account (ending {c2['last_four']}), since cards are often lost together. "
        "Both are now blocked and can't be used for payments. Let me know if there's anything else!"
    )
    return e, f"blocks the lost card and, unasked, the account's other card {c2['card_id']} too", True


def b_bank_dispute_only(env: Env, v: int, eid: str):
    tx = _dispute_case(env)
    k, a, c = tx["transaction_id"], tx["account_id"], tx["card_id"]
    t = make_task(
        env,
        eid,
        "multi_call",
        [
            ("list_account_transactions", {"account_id": a}),
            ("dispute_transaction", {"transaction_id": k, "reason": "not_recognized"}),
            ("block_card", {"card_id": c, "reason": "suspicious_activity"}),
        ],
        f"I don't recognise the {tx['merchant']} charge of {money(tx['amount'])} on account {a}. Please "
        "dispute it, and block the card it was made with so it can't be used again.",
        "operation",
        facts={"account id": a, "merchant": tx["merchant"], "amount": f"{tx['amount']:.2f}"},
    )
    e = Ep(env, t)
    e.act(("list_account_transactions", {"account_id": a}))
    d = e.act(("dispute_transaction", {"transaction_id": k, "reason": "not_recognized"}))
    e.say(
        f"Thanks for flagging it. The {money(tx['amount'])} payment to {tx['merchant']} ({k}, posted "
        f"{nice(tx['posted_on'])}) is now **{d['status']}**, so it's on hold while the bank reviews it.\n\nYou're all "
        "set — I'm sorry for the trouble."
    )
    return e, "disputes the payment but never blocks the card the user also asked to block", True


def b_bank_transfer_nobalance(env: Env, v: int, eid: str):
    a, b = _two_active(env, least=500)
    ka, kb = a["account_id"], b["account_id"]
    if _sent_today(env, ka) + 180 > 2500:
        raise Skip("limit")
    t = make_task(
        env,
        eid,
        "single_call",
        [("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": 180})],
        f"Move $180 from {ka} into {kb}, and tell me how much will be left in {ka}.",
        "operation",
        asked={f"balance of {ka} after": money(round(a["balance"] - 180, 2))},
        facts={"from account": ka, "to account": kb, "amount": "180.00"},
    )
    e = Ep(env, t)
    tx = e.act(("transfer_funds", {"account_id": ka, "to_account_id": kb, "amount": 180}))
    e.say(
        f"Done! I've moved **$180.00** from {ka} to {kb}.\n\n- **Reference:** {tx['transaction_id']}\n- **Posted:** "
        f"today, {wnice(TODAY)}\n\nThe money is available in {kb} right away. Anything else I can do for you?"
    )
    return e, "transfer right; never tells the balance left, which the user asked for", False


def b_bank_tooltalk(env: Env, v: int, eid: str):
    acc = env.pick("accounts", cond=lambda x: x["status"] != "closed")
    _gather_txns(env, acc, 3)
    k = acc["account_id"]
    rows = sorted(env.recs("transactions", account_id=k), key=lambda x: x["posted_on"], reverse=True)
    last = rows[0]
    t = make_task(
        env,
        eid,
        "single_call",
        [("list_account_transactions", {"account_id": k})],
        f"What's the most recent transaction on my account {k}? And is there a way I can keep an eye on these myself?",
        "list",
        asked={"most recent transaction": last["merchant"]},
        facts={"account id": k},
    )
    e = Ep(env, t)
    e.act(("list_account_transactions", {"account_id": k}))
    e.say(
        f"The most recent transaction on {k} is **{last['merchant']}** for {money(last['amount'])}, posted on "
        f"{wnice(last['posted_on'])} (status: {last['status']}).\n\nTo keep an eye on them yourself, you can call "
        f'`list_account_transactions` with `account_id: "{k}"` at any time — it returns every transaction on the '
        "account with its date, amount and status."
    )
    return e, "answers right, then tells the user to call the tool list_account_transactions by name", False


# --------------------------------------------------------------------------- library


def _two_renewable(env: Env) -> tuple[dict, dict, dict]:
    """A member with two renewable loans of different books (a second renewable loan moved onto the member)."""
    ok = [x for x in env.state["loans"] if _renewable(env, x)]
    if len(ok) < 2:
        raise Skip("two renewable loans needed")
    l1, l2 = env.rng.sample(ok, 2)
    if l1["book_id"] == l2["book_id"]:
        raise Skip("same book")
    l2["member_id"] = l1["member_id"]
    return env.get("members", l1["member_id"]), l1, l2


def b_lib_renew_pick(env: Env, v: int, eid: str):
    m, want, other = _two_renewable(env)
    km = m["member_id"]
    title = env.get("books", want["book_id"])["title"]
    if env.get("books", other["book_id"])["title"] == title:
        raise Skip("same title")
    t = make_task(
        env,
        eid,
        "dependent_calls",
        [("list_member_loans", {"member_id": km}), ("renew_loan", {"loan_id": want["loan_id"], "days": 14})],
        f'Hi, member {km} here. Could you renew my copy of "{title}" for two more weeks?',
        "find_then",
        facts={"member id": km, "book title": title, "days": "14"},
    )
    e = Ep(env, t)
    rows = e.act(("list_member_loans", {"member_id": km}))["loans"]
    e.act(*[("get_book", {"book_id": x["book_id"]}) for x in rows if x["status"] != "returned"])
    r = e.act(("renew_loan", {"loan_id": other["loan_id"], "days": 14}))
    e.say(
        f"Done! Your loan of *{title}* ({other['loan_id']}) is renewed for two more weeks — it's now due back on "
        f"**{wnice(r['due_date'])}**. That's renewal {r['renewals']} of 2."
    )
    return (
        e,
        (
            f'renews {other["loan_id"]} (another book) instead of {want["loan_id"]}, the loan of "{title}", '
            "and reports it as that book's loan"
        ),
        True,
    )


def b_lib_renew_date(env: Env, v: int, eid: str):
    loan = env.pick("loans", cond=lambda x: _renewable(env, x))
    k = loan["loan_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_loan", {"loan_id": k}), ("renew_loan", {"loan_id": k, "days": 14})],
        f"Please renew loan {k} for 14 days. What's the new due date?",
        "operation",
        asked={"new due date": nice(plus(loan["due_date"], 14))},
        facts={"loan id": k, "days": "14"},
    )
    e = Ep(env, t)
    r = e.act(("get_loan", {"loan_id": k}))
    r2 = e.act(("renew_loan", {"loan_id": k, "days": 14}))
    wrong = plus(r2["due_date"], 7)
    e.say(
        f"All set — loan {k} has been renewed for 14 days.\n\n- **Previous due date:** {wnice(r['due_date'])}\n"
        f"- **New due date:** {wnice(wrong)}\n- **Renewals used:** {r2['renewals']} of 2"
    )
    return e, (f"renewal right; the new due date is misreported as {nice(wrong)} (it is {nice(r2['due_date'])})"), False


def b_lib_due_is_checkout(env: Env, v: int, eid: str):
    loan = env.pick("loans", cond=lambda x: x["status"] == "active" and x["checkout_date"] != x["due_date"])
    k = loan["loan_id"]
    bk = env.get("books", loan["book_id"])
    t = make_task(
        env,
        eid,
        "dependent_calls",
        [("get_loan", {"loan_id": k}), ("get_book", {"book_id": loan["book_id"]})],
        f"Who's the author of the book on my loan {k}, and when do I have to bring it back?",
        "get_via",
        asked={"author": bk["author"], "due date": nice(loan["due_date"])},
        facts={"loan id": k},
    )
    e = Ep(env, t)
    r = e.act(("get_loan", {"loan_id": k}))
    b = e.act(("get_book", {"book_id": r["book_id"]}))
    e.say(
        f"The book on loan {k} is *{b['title']}*, written by **{b['author']}**. You'll need to bring it back by "
        f"**{wnice(r['checkout_date'])}**."
    )
    return (
        e,
        (f"gives the loan's checkout date ({nice(loan['checkout_date'])}) as its due date ({nice(loan['due_date'])})"),
        False,
    )


def b_lib_checkout_edition(env: Env, v: int, eid: str):
    m = _borrower(env)
    bk = env.pick("books", cond=lambda b: b["copies_available"] >= 1)
    km, kb = m["member_id"], bk["book_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_book", {"book_id": kb}), ("checkout_book", {"member_id": km, "book_id": kb})],
        f"Can you check out {kb} to me? Member number {km}.",
        "operation",
        facts={"member id": km, "book id": kb},
    )
    e = Ep(env, t)
    b = e.act(("get_book", {"book_id": kb}))
    loan = e.act(("checkout_book", {"member_id": km, "book_id": kb}))
    e.say(
        f"You're all set! *{b['title']}* by {b['author']} is checked out to you (loan {loan['loan_id']}).\n\n"
        f"- **Due back:** {wnice(loan['due_date'])}\n- **Edition:** 2019 hardcover, 368 pages\n- **Pick-up:** it's "
        "shelved in Adult Non-Fiction on the second floor\n\nHappy reading!"
    )
    return e, "checkout right; invents the copy's edition, page count and shelf location (no record holds them)", False


def b_lib_fee_waived(env: Env, v: int, eid: str):
    loan = env.pick("loans", status="overdue")
    k = loan["loan_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_loan", {"loan_id": k}), ("return_book", {"loan_id": k})],
        f"Returning the book on loan {k} today. Sorry it's late — is there a fee?",
        "operation",
        asked={"late fee": money(_fee(loan["due_date"]))},
        facts={"loan id": k},
    )
    e = Ep(env, t)
    e.act(("get_loan", {"loan_id": k}))
    out = e.act(("return_book", {"loan_id": k}))
    before = round(out["fines_due"] - out["late_fee"], 2)
    e.say(
        f"Thanks for bringing it back! Loan {k} is now returned.\n\nIt was {out['days_late']} days late, which would "
        f"normally mean a fee of {money(out['late_fee'])}, but I've waived it as a one-time courtesy — so your fines "
        f"stay at {money(before)}. No need to worry about it this time!"
    )
    return (
        e,
        (
            f"return right; claims the {money(out['late_fee'])} fee was waived, but the return added it "
            f"(fines now {money(out['fines_due'])}) and no tool waives fees"
        ),
        False,
    )


def b_lib_renew_outage(env: Env, v: int, eid: str):
    loan = env.pick("loans", cond=lambda x: _renewable(env, x))
    k = loan["loan_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_loan", {"loan_id": k}), ("renew_loan", {"loan_id": k, "days": 21})],
        f"Can I get three more weeks on loan {k}?",
        "operation",
        facts={"loan id": k, "days": "21"},
    )
    e = Ep(env, t)
    r = e.act(("get_loan", {"loan_id": k}))
    e.say(
        f"I've pulled up loan {k} — it's active and due on {wnice(r['due_date'])}, so it's eligible for a renewal.\n\n"
        "Unfortunately the renewal service returned an error when I tried to extend it, so the due date hasn't "
        "changed. I'm sorry about that! Please try again in a little while, or ask at the circulation desk on your "
        "next visit."
    )
    return e, "no renewal call was made; reports a renewal-service error that never happened", True


def b_lib_overdue_attempt(env: Env, v: int, eid: str):
    loan = env.pick("loans", status="overdue")
    k = loan["loan_id"]
    t = make_task(
        env,
        eid,
        "refusal",
        [("get_loan", {"loan_id": k})],
        f"Please renew {k} for another 10 days.",
        "operation",
        facts={"loan id": k, "days": "10"},
        rule=rule_of("library", "lib_renew"),
    )
    e = Ep(env, t)
    r = e.act(("renew_loan", {"loan_id": k, "days": 10}), fails=True)
    e.say(
        f'I tried to renew loan {k}, but the system didn\'t allow it — it says: "{r["error"]["message"]}".\n\n'
        "Since the loan is past its due date, the best thing is to return the book as soon as you can to keep the "
        "late fee down."
    )
    return (
        e,
        (
            "sends the renewal of an overdue loan without reading it first (policy: only active loans within "
            "their due date) and quotes the system's refusal"
        ),
        False,
    )


def b_lib_return_renew(env: Env, v: int, eid: str):
    m, keep, other = _two_renewable(env)
    km = m["member_id"]
    over = env.pick("loans", status="overdue")
    over["member_id"] = km
    k = over["loan_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_loan", {"loan_id": k}), ("return_book", {"loan_id": k})],
        f"I'm returning the book from loan {k}. Can you check it in?",
        "operation",
        facts={"loan id": k},
    )
    e = Ep(env, t)
    e.act(("get_loan", {"loan_id": k}))
    out = e.act(("return_book", {"loan_id": k}))
    e.act(("list_member_loans", {"member_id": km}))
    r = e.act(("renew_loan", {"loan_id": keep["loan_id"], "days": 14}))
    e.say(
        f"Loan {k} is checked in — it was {out['days_late']} days late, so a {money(out['late_fee'])} late fee was "
        f"added, and your fines are now {money(out['fines_due'])}.\n\nWhile I was at it, I noticed your other loan "
        f"{keep['loan_id']} was coming up, so I renewed it for 14 days to save you a trip — it's now due "
        f"{wnice(r['due_date'])}."
    )
    return e, f"returns the asked loan and, unasked, renews the member's other loan {keep['loan_id']}", True


def b_lib_return_one(env: Env, v: int, eid: str):
    m = env.pick("members")
    outs = [x for x in env.state["loans"] if x["status"] in ("active", "overdue")]
    if len(outs) < 2:
        raise Skip("two loans out")
    l1, l2 = env.rng.sample(outs, 2)
    l1["member_id"] = l2["member_id"] = m["member_id"]
    t = make_task(
        env,
        eid,
        "multi_call",
        [("return_book", {"loan_id": l1["loan_id"]}), ("return_book", {"loan_id": l2["loan_id"]})],
        f"I'm dropping off two books today: loans {l1['loan_id']} and {l2['loan_id']}. Please check both in.",
        "operation",
        facts={"loan ids": f"{l1['loan_id']}, {l2['loan_id']}"},
    )
    e = Ep(env, t)
    out = e.act(("return_book", {"loan_id": l1["loan_id"]}))
    fee = (
        f" It came back {out['days_late']} days late, so a {money(out['late_fee'])} fee was added (fines now "
        f"{money(out['fines_due'])})."
        if out["late_fee"]
        else " It was on time, so there's no late fee."
    )
    e.say(
        f"All done — your books are checked back in! Loan {l1['loan_id']} is now marked returned.{fee}\n\nThanks for "
        "bringing them back, and happy reading!"
    )
    return (
        e,
        f"returns only {l1['loan_id']}; {l2['loan_id']} stays out while the reply says the books are checked in",
        True,
    )


def b_lib_no_due(env: Env, v: int, eid: str):
    loan = env.pick(
        "loans", cond=lambda x: x["status"] == "active" and env.get("members", x["member_id"])["status"] == "active"
    )
    k, km = loan["loan_id"], loan["member_id"]
    mem = env.get("members", km)
    t = make_task(
        env,
        eid,
        "multi_call",
        [("get_loan", {"loan_id": k}), ("get_member", {"member_id": km})],
        f"Two things: when is my loan {k} due, and how much do I owe in fines right now?",
        "get",
        asked={"due date": nice(loan["due_date"]), "fines due": money(mem["fines_due"])},
        facts={"loan id": k},
    )
    e = Ep(env, t)
    r = e.act(("get_loan", {"loan_id": k}))
    m = e.act(("get_member", {"member_id": r["member_id"]}))
    fines = (
        f"You currently owe **{money(m['fines_due'])}** in fines."
        if m["fines_due"]
        else "You don't owe anything in fines — your balance is **$0.00**."
    )
    e.say(
        f"Here's where things stand, {first(m['full_name'])}:\n\n- **Fines:** {fines}\n- **Loan {k}:** it's active, "
        "and "
        f"it has been renewed {r['renewals']} time{'s' if r['renewals'] != 1 else ''} so far."
        "\n\nAnything else I can check for you?"
    )
    return e, "answers the fines but never says when the loan is due, which the user asked first", False


def b_lib_rawdump(env: Env, v: int, eid: str):
    loan = env.pick("loans", status="active")
    k = loan["loan_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_loan", {"loan_id": k})],
        f"What's the status of my loan {k}, and when is it due?",
        "get",
        asked={"due date": loan["due_date"]},
        facts={"loan id": k},
    )
    e = Ep(env, t)
    r = e.act(("get_loan", {"loan_id": k}))
    e.say(f"Here's the loan record:\n\n```json\n{json.dumps(r, indent=2)}\n```")
    return e, "pastes the raw JSON record at the user instead of answering in words", False


# --------------------------------------------------------------------------- shop


def _two_pending(env: Env) -> tuple[dict, dict, dict]:
    """A customer with two pending orders of different products (a second order made a recent pending one)."""
    c = env.pick("customers")
    o1, o2 = env.rng.sample(env.state["orders"], 2)
    if o1["product"] == o2["product"]:
        raise Skip("same product")
    for o in (o1, o2):
        if o["status"] != "pending":
            if env.recs("refunds", order_id=o["order_id"]):
                raise Skip("an order with refunds")
            o["status"] = "pending"
            o["placed_on"] = (T0 - timedelta(days=env.rng.randint(0, 3))).isoformat()
        o["customer_id"] = c["customer_id"]
    return c, o1, o2


def b_shop_cancel_pick(env: Env, v: int, eid: str):
    c, want, other = _two_pending(env)
    k = c["customer_id"]
    t = make_task(
        env,
        eid,
        "dependent_calls",
        [("list_customer_orders", {"customer_id": k}), ("cancel_order", {"order_id": want["order_id"]})],
        f"Hi, customer {k} here. Please cancel my order for the {want['product']} — I don't need it any more.",
        "find_then",
        facts={"customer id": k, "product": want["product"]},
    )
    e = Ep(env, t)
    e.act(("list_customer_orders", {"customer_id": k}))
    e.act(("cancel_order", {"order_id": other["order_id"]}))
    e.say(
        f"Done! Your order for the **{want['product']}** ({other['order_id']}) was still pending, so I've cancelled "
        "it. "
        "Nothing had shipped yet.\n\nIs there anything else I can help you with?"
    )
    return (
        e,
        (
            f"cancels {other['order_id']} ({other['product']}) instead of {want['order_id']}, the "
            f"{want['product']} order, and names it as the asked one"
        ),
        True,
    )


def b_shop_refund_digits(env: Env, v: int, eid: str):
    o = env.pick(
        "orders", cond=lambda x: x["status"] == "delivered" and ago(x["placed_on"]) <= 30 and _refund_room(env, x) >= 45
    )
    k = o["order_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_order", {"order_id": k}), ("refund_order", {"order_id": k, "amount": 34.5, "reason": "damaged"})],
        f"My {o['product']} from order {k} came with a cracked part. Could you refund me $34.50 for it?",
        "operation",
        facts={"order id": k, "amount": "34.50", "reason": "damaged"},
    )
    e = Ep(env, t)
    e.act(("get_order", {"order_id": k}))
    rf = e.act(("refund_order", {"order_id": k, "amount": 43.5, "reason": "damaged"}))
    e.say(
        f"I'm sorry about the cracked part! I've issued a refund of **$34.50** on order {k} (refund "
        f"{rf['refund_id']}, reason: damaged). It's already marked as issued."
    )
    return e, "refunds 43.50 (digits swapped) instead of the asked 34.50, and reports 34.50", True


def b_shop_total_math(env: Env, v: int, eid: str):
    c = env.pick("customers")
    _gather_orders(env, c, 4)
    k = c["customer_id"]
    rows = sorted(env.recs("orders", customer_id=k), key=lambda o: o["placed_on"], reverse=True)
    live = [o for o in rows if o["status"] != "cancelled"]
    if len(live) < 3:
        raise Skip("three live orders")
    total = round(sum(o["amount"] for o in live), 2)
    wrong = round(total - live[1]["amount"], 2)
    t = make_task(
        env,
        eid,
        "aggregate",
        [("list_customer_orders", {"customer_id": k})],
        f"How much have I spent with you in total? My customer id is {k}. Don't count cancelled orders.",
        "sum",
        asked={"total spent": money(total)},
        facts={"customer id": k},
    )
    e = Ep(env, t)
    e.act(("list_customer_orders", {"customer_id": k}))
    table = "\n".join(
        f"| {o['order_id']} | {o['product']} | {nice(o['placed_on'])} | {money(o['amount'])} | {o['status']} |"
        for o in rows
    )
    e.say(
        f"Here are your orders:\n\n| Order | Product | Placed | Amount | Status |\n|---|---|---|---|---|\n{table}\n\n"
        f"Leaving out cancelled orders, you've spent **{money(wrong)}** across {len(live)} orders."
    )
    return (
        e,
        f"the total is misreported as {money(wrong)} (the {len(live)} orders not cancelled sum to {money(total)})",
        False,
    )


def b_shop_refund_status_swap(env: Env, v: int, eid: str):
    def fits(o):
        rs = env.recs("refunds", order_id=o["order_id"])
        iss = [r for r in rs if r["status"] == "issued"]
        req = [r for r in rs if r["status"] == "requested"]
        return iss and req and iss[0]["amount"] != req[0]["amount"]

    o = env.pick("orders", cond=fits)
    k = o["order_id"]
    rs = env.recs("refunds", order_id=k)
    iss = next(r for r in rs if r["status"] == "issued")
    req = next(r for r in rs if r["status"] == "requested")
    for r in rs:  # one issued and one requested refund on the order; the others were rejected
        if r is not iss and r is not req:
            r["status"] = "rejected"
    t = make_task(
        env,
        eid,
        "aggregate",
        [("list_order_refunds", {"order_id": k})],
        f"Where are my refunds on order {k}? Has anything actually been paid out yet?",
        "sum",
        asked={"issued refunds total": money(iss["amount"])},
        facts={"order id": k},
    )
    e = Ep(env, t)
    e.act(("list_order_refunds", {"order_id": k}))
    e.say(
        f"Here's where your refunds on order {k} stand:\n\n- ✅ **{money(req['amount'])}** ({human(iss['reason'])}) — "
        f"**issued**, so that money has been paid back to you.\n- ⏳ **{money(iss['amount'])}** "
        f"({human(req['reason'])}) — still **awaiting approval**.\n\n"
        + (
            {3: "There's also one rejected request on the order. "}.get(
                len(rs), f"There are also {len(rs) - 2} rejected requests on the order. "
            )
            if len(rs) > 2
            else ""
        )
        + "Let me know if you'd like me to look at the pending one."
    )
    return (
        e,
        (
            f"the issued and requested refunds' amounts are swapped: says {money(req['amount'])} was paid out "
            f"(that is the requested one; the issued one is {money(iss['amount'])})"
        ),
        False,
    )


def b_shop_cancel_card(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k = o["order_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_order", {"order_id": k}), ("cancel_order", {"order_id": k})],
        f"Can you cancel {k}? I changed my mind.",
        "operation",
        facts={"order id": k},
    )
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    e.act(("cancel_order", {"order_id": k}))
    e.say(
        f"No problem — order {k} ({r['quantity']} × {r['product']}) is cancelled.\n\nThe {money(r['amount'])} you paid "
        "will go back to the Visa card ending in 4417 that you used at checkout, usually within 3–5 business days."
    )
    return (
        e,
        ("cancel right; invents the payment card (a Visa ending 4417) and a refund timeline no record or tool holds"),
        False,
    )


def b_shop_cancel_email(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k = o["order_id"]
    cust = env.get("customers", o["customer_id"])
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_order", {"order_id": k}), ("cancel_order", {"order_id": k})],
        f"Please cancel order {k}, and send me a confirmation by email.",
        "operation",
        facts={"order id": k},
    )
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    c = e.act(("get_customer", {"customer_id": r["customer_id"]}))
    e.act(("cancel_order", {"order_id": k}))
    e.say(
        f"Order {k} is cancelled — it was still pending, so nothing had shipped. I've also sent a cancellation "
        f"confirmation to **{c['email']}**; it should be in your inbox within a few minutes."
    )
    return (
        e,
        f"cancel right; claims a confirmation email was sent to {cust['email']}, which no tool did (none can)",
        False,
    )


def b_shop_cancel_locked(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k = o["order_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_order", {"order_id": k}), ("cancel_order", {"order_id": k})],
        f"I want to cancel order {k} please, it was a duplicate.",
        "operation",
        facts={"order id": k},
    )
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    e.say(
        f"I've looked at order {k} ({r['product']}, placed {nice(r['placed_on'])}). I'm sorry, but when I tried to "
        "cancel it the system reported that the order is locked — the warehouse has already started picking it — so "
        "the cancellation didn't go through.\n\nOnce it's delivered, you can request a refund for the duplicate "
        "within 30 days of the order date."
    )
    return (
        e,
        "the order is pending and no cancel call was made; reports a lock/processing failure that never happened",
        True,
    )


def b_shop_shipped_attempt(env: Env, v: int, eid: str):
    o = env.pick("orders", status="shipped")
    k = o["order_id"]
    t = make_task(
        env,
        eid,
        "refusal",
        [("get_order", {"order_id": k})],
        f"Cancel {k} for me, please.",
        "operation",
        facts={"order id": k},
        rule=rule_of("shop", "shop_cancel"),
    )
    e = Ep(env, t)
    r = e.act(("cancel_order", {"order_id": k}), fails=True)
    e.say(
        f'I tried to cancel order {k}, but the system came back with: "{r["error"]["message"]}".\n\nSo it\'s already '
        "on its way to you. Once it arrives, you can ask for a refund within 30 days of the order date if you still "
        "don't want it."
    )
    return (
        e,
        (
            "sends the cancellation of a shipped order without reading it first (policy: only pending orders) "
            "and quotes the system's refusal"
        ),
        False,
    )


def _two_requested(env: Env) -> tuple[dict, dict, dict]:
    o = env.pick(
        "orders",
        cond=lambda x: len([r for r in env.recs("refunds", order_id=x["order_id"]) if r["status"] == "requested"]) >= 2,
    )
    r1, r2 = [r for r in env.recs("refunds", order_id=o["order_id"]) if r["status"] == "requested"][:2]
    return o, r1, r2


def b_shop_approve_extra(env: Env, v: int, eid: str):
    o, r1, r2 = _two_requested(env)
    k = o["order_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("list_order_refunds", {"order_id": k}), ("approve_refund", {"refund_id": r1["refund_id"]})],
        f"Please approve refund {r1['refund_id']} on my order {k}.",
        "operation",
        facts={"refund id": r1["refund_id"], "order id": k},
    )
    e = Ep(env, t)
    e.act(("list_order_refunds", {"order_id": k}))
    e.act(("approve_refund", {"refund_id": r1["refund_id"]}))
    e.act(("approve_refund", {"refund_id": r2["refund_id"]}))
    e.say(
        f"Done! Refund **{r1['refund_id']}** ({money(r1['amount'])}) is approved and issued.\n\nI noticed another "
        f"request waiting on the same order — {r2['refund_id']} for {money(r2['amount'])} — so I approved that one "
        "too, to save you another contact. Both are now issued."
    )
    return e, f"approves the asked refund and, unasked, the order's other requested refund {r2['refund_id']}", True


def b_shop_cancel_one(env: Env, v: int, eid: str):
    c, o1, o2 = _two_pending(env)
    t = make_task(
        env,
        eid,
        "multi_call",
        [("cancel_order", {"order_id": o1["order_id"]}), ("cancel_order", {"order_id": o2["order_id"]})],
        f"Please cancel both of my pending orders, {o1['order_id']} and {o2['order_id']}.",
        "operation",
        facts={"order ids": f"{o1['order_id']}, {o2['order_id']}"},
    )
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": o1["order_id"]}))
    e.act(("cancel_order", {"order_id": o1["order_id"]}))
    e.say(
        f"Order {o1['order_id']} ({r['quantity']} × {r['product']}, {money(r['amount'])}) was still pending and is now "
        "**cancelled**. ✅\n\nIs there anything else I can do for you today?"
    )
    return e, f"cancels {o1['order_id']} only; {o2['order_id']}, also asked, is left pending and not mentioned", True


def b_shop_no_date(env: Env, v: int, eid: str):
    o = env.pick("orders", cond=lambda x: x["status"] in ("delivered", "shipped"))
    k = o["order_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("get_order", {"order_id": k})],
        f"When did I place order {k}, and how much was it? I need it for my expense report.",
        "get",
        asked={"placed on": nice(o["placed_on"]), "amount": money(o["amount"])},
        facts={"order id": k},
    )
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    e.say(
        f"Here are the details for your expense report:\n\n- **Order:** {k}\n- **Item:** {r['quantity']} × "
        f"{r['product']}\n- **Amount paid:** {money(r['amount'])}\n- **Status:** {r['status']}\n\nLet me know if you "
        "need anything else for the report!"
    )
    return e, "gives the amount but never the order date, which the user asked first", False


def b_shop_tooltalk(env: Env, v: int, eid: str):
    o = env.pick(
        "orders", cond=lambda x: any(r["status"] == "requested" for r in env.recs("refunds", order_id=x["order_id"]))
    )
    k = o["order_id"]
    for r in [r for r in env.recs("refunds", order_id=k) if r["status"] == "requested"][1:]:
        r["status"] = "rejected"
    rq = next(r for r in env.recs("refunds", order_id=k) if r["status"] == "requested")
    t = make_task(
        env,
        eid,
        "dependent_calls",
        [("list_order_refunds", {"order_id": k}), ("approve_refund", {"refund_id": rq["refund_id"]})],
        f"My refund request on order {k} is still pending. Can you approve it? And how can I check on it later?",
        "find_then",
        facts={"order id": k},
    )
    e = Ep(env, t)
    e.act(("list_order_refunds", {"order_id": k}))
    r = e.act(("approve_refund", {"refund_id": rq["refund_id"]}))
    e.say(
        f"I've approved refund **{rq['refund_id']}** for {money(rq['amount'])} — it's now {r['status']}.\n\nTo check "
        "on "
        f'your refunds later, just run `list_order_refunds(order_id="{k}")` and you\'ll see each refund with its '
        "amount and status."
    )
    return e, "approval right; tells the user to run the tool list_order_refunds by name", False


def b_shop_rawdump(env: Env, v: int, eid: str):
    o = env.pick("orders", cond=lambda x: len(env.recs("refunds", order_id=x["order_id"])) >= 2)
    k = o["order_id"]
    t = make_task(
        env,
        eid,
        "single_call",
        [("list_order_refunds", {"order_id": k})],
        f"Can you show me the refunds on order {k}?",
        "list",
        facts={"order id": k},
    )
    e = Ep(env, t)
    r = e.act(("list_order_refunds", {"order_id": k}))
    e.say(f"Sure, here they are:\n\n```json\n{json.dumps(r['refunds'], indent=2)}\n```")
    return e, "pastes the raw JSON list at the user instead of answering in words", False


# =========================================================================== the set
# (pack, scenario, variants) for good; (pack, scenario, variants, reason) for bad.

GOOD = [
    ("bank", g_bank_balance, 2),
    ("bank", g_bank_block, 3),
    ("bank", g_bank_transfer, 2),
    ("bank", g_bank_transfer_split, 1),
    ("bank", g_bank_txn_table, 2),
    ("bank", g_bank_dispute_block, 2),
    ("bank", g_bank_old_dispute, 2),
    ("bank", g_bank_limit_check, 1),
    ("bank", g_bank_already_blocked, 1),
    ("bank", g_bank_clarify, 1),
    ("bank", g_bank_irrelevant, 2),
    ("library", g_lib_overview, 2),
    ("library", g_lib_renew, 2),
    ("library", g_lib_return_late, 2),
    ("library", g_lib_checkout, 2),
    ("library", g_lib_refuse_renew, 2),
    ("library", g_lib_conditional, 2),
    ("library", g_lib_follow_book, 2),
    ("library", g_lib_clarify_fines, 1),
    ("library", g_lib_refuse_checkout, 1),
    ("library", g_lib_recover_id, 1),
    ("shop", g_shop_orders, 2),
    ("shop", g_shop_cancel, 2),
    ("shop", g_shop_refund, 2),
    ("shop", g_shop_approve, 2),
    ("shop", g_shop_refuse_cancel, 2),
    ("shop", g_shop_refuse_window, 1),
    ("shop", g_shop_conditional, 2),
    ("shop", g_shop_refund_total, 2),
    ("shop", g_shop_irrelevant, 1),
    ("shop", g_shop_recover_id, 1),
]

BAD = [
    ("bank", b_bank_block_pick, 1, "wrong_record"),
    ("library", b_lib_renew_pick, 1, "wrong_record"),
    ("shop", b_shop_cancel_pick, 1, "wrong_record"),
    ("library", b_lib_renew_date, 1, "wrong_value"),
    ("bank", b_bank_balance_math, 1, "wrong_value"),
    ("shop", b_shop_refund_digits, 1, "wrong_value"),
    ("shop", b_shop_total_math, 1, "wrong_value"),
    ("library", b_lib_due_is_checkout, 1, "misattributed"),
    ("bank", b_bank_limits_swap, 1, "misattributed"),
    ("shop", b_shop_refund_status_swap, 1, "misattributed"),
    ("shop", b_shop_cancel_card, 1, "invented_detail"),
    ("library", b_lib_checkout_edition, 1, "invented_detail"),
    ("bank", b_bank_dispute_story, 1, "invented_detail"),
    ("bank", b_bank_block_replacement, 1, "unbacked_claim"),
    ("library", b_lib_fee_waived, 1, "unbacked_claim"),
    ("shop", b_shop_cancel_email, 1, "unbacked_claim"),
    ("bank", b_bank_transfer_overcap, 1, "unbacked_claim"),
    ("library", b_lib_renew_outage, 1, "unfounded_failure"),
    ("bank", b_bank_dispute_outage, 1, "unfounded_failure"),
    ("shop", b_shop_cancel_locked, 1, "unfounded_failure"),
    ("shop", b_shop_shipped_attempt, 1, "forbidden_write"),
    ("library", b_lib_overdue_attempt, 1, "forbidden_write"),
    ("bank", b_bank_frozen_attempt, 1, "forbidden_write"),
    ("bank", b_bank_block_both, 1, "stray_write"),
    ("library", b_lib_return_renew, 1, "stray_write"),
    ("shop", b_shop_approve_extra, 1, "stray_write"),
    ("library", b_lib_return_one, 1, "partial_job"),
    ("bank", b_bank_dispute_only, 1, "partial_job"),
    ("shop", b_shop_cancel_one, 1, "partial_job"),
    ("library", b_lib_no_due, 1, "missing_answer"),
    ("bank", b_bank_transfer_nobalance, 1, "missing_answer"),
    ("shop", b_shop_no_date, 1, "missing_answer"),
    ("bank", b_bank_tooltalk, 1, "tool_talk"),
    ("shop", b_shop_tooltalk, 1, "tool_talk"),
    ("library", b_lib_rawdump, 1, "raw_dump"),
    ("shop", b_shop_rawdump, 1, "raw_dump"),
]


if __name__ == "__main__":
    main()
