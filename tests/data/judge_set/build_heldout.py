"""Build the HELD-OUT part of the labelled judge set (README.md beside this file, "Held-out set").

Written after the judge was tuned on `capable.jsonl`, by someone who did not read the judge's code,
to measure it on episodes it has never seen. The machinery is build.py's (imported, not copied):
its shop and airline worlds, the bound and hand-off tools, the seeded states, blueprint tasks with a
gold chain executed by `run_gold`, and episodes whose every tool call is executed on the world. A
third world is added here, a support help desk (customers, agents, tickets with an
open -> in_progress -> waiting_on_customer -> resolved -> closed lifecycle; a closed ticket is frozen).

Scenarios and wordings are new. Each episode's label is set where it is written, from what it
does, before any judge runs; good episodes are checked with build.py's `check_good` (all calls ok,
end state == the blueprint's gold end state).

Run: .venv/bin/python tests/data/judge_set/build_heldout.py  (writes heldout.jsonl here).
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from worldsmith.records import CollectionSpec, ToolBinding, World
from worldsmith.tools.evolve import bound_spec
from worldsmith.worldmodel.bindings import default_description
from worldsmith.worldmodel.schema import derive_rules
from worldsmith.worldmodel.seed import PHRASES, next_key, seed_state
from worldsmith.worldmodel.toolset import ToolSet

HERE = Path(__file__).resolve().parent
OUT = HERE / "heldout.jsonl"

_spec = importlib.util.spec_from_file_location("judge_set_build", HERE / "build.py")
B = importlib.util.module_from_spec(_spec)
sys.modules["judge_set_build"] = B
_spec.loader.exec_module(B)

Env, Ep, Skip, V, f = B.Env, B.Ep, B.Skip, B.V, B.f
make_task, forbid_rule, check_good, money, human, nice_date = (
    B.make_task, B.forbid_rule, B.check_good, B.money, B.human, B.nice_date)
STAMP, TODAY = B.STAMP, B.TODAY


# --------------------------------------------------------------------------- a third world: a help desk


def desk_world() -> World:
    cols = [
        CollectionSpec(
            name="customers", entity="customer", key="customer_id", id_prefix="cst",
            fields=[f("full_name", format="person_name"), f("email", format="email", unique=True),
                    f("company", format="company"), f("plan", enum=("free", "pro", "enterprise"))],
        ),
        CollectionSpec(
            name="agents", entity="agent", key="agent_id", id_prefix="agt",
            fields=[f("full_name", format="person_name"), f("email", format="email", unique=True),
                    f("team", enum=("billing", "technical", "accounts"))],
        ),
        CollectionSpec(
            name="tickets", entity="ticket", key="ticket_id", id_prefix="tkt",
            fields=[
                f("customer_id", format="code", ref="customers"),
                f("agent_id", format="code", ref="agents"),
                f("subject", format="sentence"),
                f("priority", enum=("low", "normal", "high", "urgent")),
                f("opened", format="date"),
                f("status", enum=("open", "in_progress", "waiting_on_customer", "resolved", "closed")),
            ],
            transitions={
                "status": {
                    "open": ["in_progress", "closed"],
                    "in_progress": ["waiting_on_customer", "resolved"],
                    "waiting_on_customer": ["in_progress", "resolved"],
                    "resolved": ["closed", "in_progress"],
                    "closed": [],
                }
            },
        ),
    ]
    w = World(
        world_id="wld_judgeset_desk", domain_id="dom_judgeset_desk", domain="customer support help desk",
        category="customer_support",
        description="A software company's support desk: customers, support agents and tickets.",
        collections=cols, today=TODAY, source="llm", created_at=STAMP,
    )
    return w.model_copy(update={"rules": derive_rules(w)})


DESK_TOOLS = [
    ("get_ticket", "tickets", "get", {}, {}),
    ("get_customer", "customers", "get", {}, {}),
    ("get_agent", "agents", "get", {}, {}),
    ("list_tickets", "tickets", "list", {"customer_id": "customer_id", "status": "status", "agent_id": "agent_id"}, {}),
    ("list_agents", "agents", "list", {"team": "team"}, {}),
    ("create_ticket", "tickets", "create",
     {"customer_id": "customer_id", "agent_id": "agent_id", "subject": "subject", "priority": "priority"}, {}),
    ("update_ticket_status", "tickets", "update", {"status": "status"}, {}),
    ("update_ticket_priority", "tickets", "update", {"priority": "priority"}, {}),
    ("assign_ticket", "tickets", "update", {"agent_id": "agent_id"}, {}),
    ("close_ticket", "tickets", "update", {}, {"status": "closed"}),
    ("delete_ticket", "tickets", "delete", {}, {}),
    ("update_customer_plan", "customers", "update", {"plan": "plan"}, {}),
]


class DeskEnv(Env):
    """build.Env for the help desk world (same attributes, so build.Ep runs on it)."""

    def __init__(self, kind: str, seed: int):  # noqa: super().__init__ knows only the shop and the airline
        self.kind, self.seed = kind, seed
        self.world = desk_world()
        self.specs = {}
        for name, coll, action, params, fixed in DESK_TOOLS:
            b = ToolBinding(world_id=self.world.world_id, collection=coll, action=action, params=params, fixed=fixed)
            if action in ("get", "update", "delete"):
                b = b.model_copy(update={"key_param": self.world.collection(coll).key})
            spec = bound_spec(self.world, b, name, default_description(self.world, b), request_id=f"{coll}/{name}",
                              named_by="code")
            self.specs[name] = spec.model_copy(update={"created_at": STAMP})
        self.specs["transfer_to_human_agents"] = B.unbound_spec("transfer_to_human_agents")
        self.toolset = ToolSet.build(list(self.specs.values()))
        self.agent_id = "agt_judgeset_desk"
        rules = "\n".join(f"- {r.text}" for r in self.world.rules)
        self.system = (
            "You are the assistant of a software company's support desk. Support staff and customers ask you about "
            "tickets, customers and agents, and you make changes through your tools.\n\n"
            f"Style: be friendly, clear and complete.\nRules:\n{rules}\n"
            "Use the tools to look things up and to make changes; never claim an action you did not perform with a "
            "tool. If no tool fits the request, say so plainly, and transfer the user to a human agent when they need "
            "something only a person can do."
        )
        self.rng = random.Random(seed * 7 + 3)
        self.state = seed_state(self.world, seed, (7, 9))


def make_env(kind: str, seed: int) -> Env:
    return DeskEnv(kind, seed) if kind == "desk" else Env(kind, seed)


# --------------------------------------------------------------------------- wording helpers


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def prose_date(iso: str) -> str:
    """'the 3rd of March'"""
    d = datetime.fromisoformat(iso)
    return f"the {ordinal(d.day)} of {d:%B}"


def first(name: str) -> str:
    return name.split()[0]


def spread(env: Env, coll: str, fk: str, owner: str, n: int, **set_) -> list[dict]:
    """Make exactly n records of coll point at `owner` through `fk` (the rest point elsewhere); set fields on them."""
    others = [r for r in env.state[{"customer_id": "customers", "passenger_id": "passengers"}[fk]] if r[fk] != owner]
    for r in env.state[coll]:
        if r[fk] == owner:
            r[fk] = others[0][fk]
    chosen = sorted(env.rng.sample(env.state[coll], n), key=lambda r: r[env.world.collection(coll).key])
    for r in chosen:
        r[fk] = owner
        r.update(set_)
    return chosen


STOPS = (
    "Brilliant, that's everything. ###STOP###",
    "ok great, thanks for sorting it ###STOP###",
    "Understood. Thank you for your help. ###STOP###",
    "cool, bye ###STOP###",
    "Thanks a lot, have a good one. ###STOP###",
    "That answers it, thanks! ###STOP###",
)


# =========================================================================== good episodes (part b-heldout)
# Each returns (episode, note). Labelled good where written: every call succeeds, the end state is the
# gold end state, the reply tells what the task asks and claims nothing untrue.


def g_desk_who(env: Env, v: int, eid: str):
    t0 = env.pick("tickets", status=V(v, "in_progress", "waiting_on_customer", "open"))
    t0["opened"] = f"2026-02-{env.rng.randint(2, 27):02d}"
    k, aid = t0["ticket_id"], t0["agent_id"]
    a = env.recs("agents", agent_id=aid)[0]
    t = make_task(env, eid, "dependent_calls", [("get_ticket", {"ticket_id": k}), ("get_agent", {"agent_id": aid})],
                  V(v, f"Who's working ticket {k} at the moment, and where does it stand?",
                    f"need the owner of {k} + its current status",
                    f"The customer on {k} is asking for an update. Which agent has it, and what state is it in?"),
                  asked={f"status of {k}": t0["status"], "full name of the agent": a["full_name"]},
                  facts={"ticket id": k}, persona=("brief", "medium", "expert"))
    e = Ep(env, t)
    r = e.act(("get_ticket", {"ticket_id": k}))
    q = e.act(("get_agent", {"agent_id": r["agent_id"]}))
    st = human(r["status"])
    e.say(V(v,
            f"Ticket **{k}** (\"{r['subject']}\") is assigned to **{q['full_name']}** on the {q['team']} team, and its "
            f"status is **{st}**.\n\nIt was opened on {prose_date(r['opened'])} with {r['priority']} priority. If you "
            f"need to reach {first(q['full_name'])} directly, their email is {q['email']}.",
            f"{k} → {q['full_name']} ({q['team']}), status: {st}, priority {r['priority']}.",
            f"Here's where {k} stands:\n\n- **Assigned agent:** {q['full_name']} ({q['agent_id']}, {q['team']} team)\n"
            f"- **Status:** {st}\n- **Priority:** {r['priority']}\n- **Opened:** {nice_date(r['opened'])}\n\n"
            f"You can tell the customer that {first(q['full_name'])} is the person looking after it."))
    return e, "follow ticket -> agent; status and agent name, date in prose"


def g_desk_escalate(env: Env, v: int, eid: str):
    t0 = env.pick("tickets", status="open")
    t0["priority"] = V(v, "normal", "low", "high")
    k = t0["ticket_id"]
    steps = [("get_ticket", {"ticket_id": k}), ("update_ticket_priority", {"ticket_id": k, "priority": "urgent"}),
             ("update_ticket_status", {"ticket_id": k, "status": "in_progress"})]
    t = make_task(env, eid, "multi_call", steps,
                  V(v, f"The customer behind {k} just told us they're about to cancel their contract over this. Make it "
                       "urgent and get it moving — it should show as in progress.",
                    f"escalate {k} to urgent pls and set it in progress",
                    f"Could you raise ticket {k} to the highest priority and mark that we've started working on it?"),
                  facts={"ticket id": k, "new priority": "urgent", "new status": "in_progress"},
                  persona=("chatty", "low", "intermediate"))
    e = Ep(env, t)
    r = e.act(("get_ticket", {"ticket_id": k}))
    e.act(("update_ticket_priority", {"ticket_id": k, "priority": "urgent"}))
    r3 = e.act(("update_ticket_status", {"ticket_id": k, "status": "in_progress"}))
    e.say(V(v,
            f"Understood — that's a customer we don't want to lose. I've made two changes to **{k}** "
            f"(\"{r['subject']}\"):\n\n1. Priority raised from {r['priority']} to **urgent**.\n"
            f"2. Status moved from open to **{human(r3['status'])}**.\n\nIt's still assigned to agent {r3['agent_id']}; "
            "you may want to give them a heads-up about the contract risk.",
            f"Done: {k} is now urgent and in progress (it was {r['priority']} / open).",
            f"Ticket {k} has been escalated. It now has priority **urgent** and status **{human(r3['status'])}**, and "
            f"it's still assigned to {r3['agent_id']}."))
    return e, "three calls: read, then two writes on different fields; numbered list of changes"


def g_desk_assign_by_name(env: Env, v: int, eid: str):
    team = V(v, "billing", "technical", "accounts")
    mates = env.recs("agents", team=team)
    names = [first(a["full_name"]) for a in mates]
    pool = [a for a in mates if names.count(first(a["full_name"])) == 1]
    if not pool:
        raise Skip("no unique first name")
    a = env.rng.choice(pool)
    cands = [x for x in env.state["tickets"] if x["status"] in ("open", "in_progress", "waiting_on_customer")
             and x["agent_id"] != a["agent_id"]]
    if not cands:
        raise Skip("no ticket")
    t0 = env.rng.choice(cands)
    k = t0["ticket_id"]
    steps = [("list_agents", {"team": team}), ("assign_ticket", {"ticket_id": k, "agent_id": a["agent_id"]})]
    t = make_task(env, eid, "dependent_calls", steps,
                  V(v, f"Please hand ticket {k} over to {first(a['full_name'])} on the {team} team.",
                    f"reassign {k} to {first(a['full_name'])} ({team})",
                    f"Could {first(a['full_name'])} from {team} take over {k}? Please put it in their name."),
                  asked={"agent id": a["agent_id"]}, facts={"ticket id": k, "agent": f"{first(a['full_name'])}, {team} team"},
                  persona=("brief", "medium", "expert"))
    e = Ep(env, t)
    r = e.act(("list_agents", {"team": team}))
    hit = next(x for x in r["agents"] if first(x["full_name"]) == first(a["full_name"]))
    r2 = e.act(("assign_ticket", {"ticket_id": k, "agent_id": hit["agent_id"]}))
    e.say(V(v,
            f"There's one {first(hit['full_name'])} on the {team} team — **{hit['full_name']}** ({hit['agent_id']}). "
            f"I've reassigned ticket {k} to them; the ticket's status ({human(r2['status'])}) is unchanged.",
            f"{k} now belongs to {hit['full_name']} ({hit['agent_id']}).",
            f"Done. I looked up the {team} team ({r['count']} agents), found {hit['full_name']} ({hit['agent_id']}), "
            f"and assigned {k} to them."))
    return e, "find the agent by team list and first name, then assign (argument from the list result)"


def g_desk_new_ticket(env: Env, v: int, eid: str):
    c = env.pick("customers")
    a = env.pick("agents", team=V(v, "billing", "technical", "accounts"))
    subj = PHRASES[(env.seed + v) % len(PHRASES)]
    pr = V(v, "high", "normal", "urgent")
    new = next_key(env.world.collection("tickets"), env.state["tickets"])
    args = {"customer_id": c["customer_id"], "agent_id": a["agent_id"], "subject": subj, "priority": pr}
    t = make_task(env, eid, "single_call", [("create_ticket", args)],
                  V(v, f"Log a new ticket for customer {c['customer_id']}: \"{subj}\", {pr} priority, assigned to agent "
                       f"{a['agent_id']}. Tell me the number when it's in.",
                    f"new ticket pls — customer {c['customer_id']}, subject '{subj}', prio {pr}, owner {a['agent_id']}",
                    f"{c['full_name']} ({c['customer_id']}) just phoned in. Could you open a ticket \"{subj}\" with "
                    f"{pr} priority and give it to {a['agent_id']}? I need the ticket id for my notes."),
                  asked={"id of the new ticket": new},
                  facts={"customer id": c["customer_id"], "agent id": a["agent_id"], "subject": subj, "priority": pr},
                  persona=("brief", "medium", "expert"))
    e = Ep(env, t)
    r = e.act(("create_ticket", args))
    e.say(V(v,
            f"The ticket is in: **{r['ticket_id']}** — \"{r['subject']}\" for customer {r['customer_id']}, "
            f"{r['priority']} priority, assigned to {r['agent_id']}. It's open as of today ({nice_date(r['opened'])}).",
            f"Created {r['ticket_id']} ({r['priority']}, owner {r['agent_id']}, status {r['status']}).",
            f"All logged. The new ticket number is **{r['ticket_id']}**.\n\n| Field | Value |\n|---|---|\n"
            f"| Customer | {c['full_name']} ({r['customer_id']}) |\n| Subject | {r['subject']} |\n"
            f"| Priority | {r['priority']} |\n| Assigned to | {r['agent_id']} |\n| Status | {r['status']} |"))
    return e, "create; reply gives the new ticket id"


UNRESOLVED = ("open", "in_progress", "waiting_on_customer")


def g_desk_overview(env: Env, v: int, eid: str):
    c = env.pick("customers")
    cid = c["customer_id"]
    mine = spread(env, "tickets", "customer_id", cid, 4 + v % 2)
    sts = V(v, ["open", "resolved", "in_progress", "closed"], ["waiting_on_customer", "closed", "closed", "open", "resolved"],
            ["in_progress", "in_progress", "resolved", "open"])
    for r, s in zip(mine, sts):
        r["status"] = s
    n_open = sum(s in UNRESOLVED for s in sts)
    t = make_task(env, eid, "single_call", [("list_tickets", {"customer_id": cid})],
                  V(v, f"I'm about to call {c['full_name']} ({cid}). Give me a rundown of their tickets — how many are "
                       "still unresolved?",
                    f"tickets for {cid}? how many still open",
                    f"Customer {cid} says we 'never fix anything'. Can you list all of their tickets and tell me how "
                    "many are actually still unresolved?"),
                  asked={f"number of tickets whose customer id is {cid}": str(len(mine)),
                         "number of unresolved tickets": str(n_open)},
                  facts={"customer id": cid}, persona=("formal", "high", "expert"))
    e = Ep(env, t)
    r = e.act(("list_tickets", {"customer_id": cid}))
    rows = "\n".join(f"| {x['ticket_id']} | {x['subject']} | {x['priority']} | {human(x['status'])} |" for x in r["tickets"])
    done = r["count"] - n_open
    e.say(V(v,
            f"{c['full_name']} has **{r['count']} tickets** on file, and **{n_open} of them are still unresolved** "
            f"(open, in progress or waiting on the customer); the other {done} are resolved or closed.\n\n"
            f"| Ticket | Subject | Priority | Status |\n|---|---|---|---|\n{rows}\n\nGood luck with the call!",
            f"{cid}: {r['count']} tickets, {n_open} unresolved.\n\n| Ticket | Subject | Priority | Status |\n"
            f"|---|---|---|---|\n{rows}",
            f"Here's the full picture for {cid}. They have {r['count']} tickets in total; {done} "
            f"{'has' if done == 1 else 'have'} been resolved or closed, and {n_open} are still unresolved:\n\n| Ticket | Subject | Priority | Status |\n|---|---|---|---|\n"
            f"{rows}\n\nSo it isn't quite 'never' — but {n_open} unresolved tickets are worth acknowledging on the call."))
    return e, "list; aggregate computed and stated (n of m unresolved), table"


def g_desk_close_resolved(env: Env, v: int, eid: str):
    c = env.pick("customers")
    cid = c["customer_id"]
    mine = spread(env, "tickets", "customer_id", cid, 3)
    res = [mine[0], mine[2]] if v % 2 else mine[:2]
    for r in mine:
        r["status"] = "resolved" if r in res else V(v, "in_progress", "open", "waiting_on_customer")
    steps = [("list_tickets", {"customer_id": cid, "status": "resolved"})] + [
        ("close_ticket", {"ticket_id": r["ticket_id"]}) for r in res]
    t = make_task(env, eid, "dependent_calls", steps,
                  V(v, f"Housekeeping: close every resolved ticket for customer {cid}. Leave the others alone.",
                    f"pls close out all resolved tickets of {cid}",
                    f"{c['full_name']} ({cid}) confirmed everything we fixed is fine. Close whatever of theirs is resolved."),
                  asked={f"ticket id {i + 1}": r["ticket_id"] for i, r in enumerate(res)}, facts={"customer id": cid},
                  persona=("brief", "medium", "expert"))
    e = Ep(env, t)
    r = e.act(("list_tickets", {"customer_id": cid, "status": "resolved"}))
    done = [e.act(("close_ticket", {"ticket_id": x["ticket_id"]})) for x in r["tickets"]]
    lines = "\n".join(f"- **{d['ticket_id']}** — {d['subject']} — now {d['status']}" for d in done)
    e.say(V(v, f"{cid} had {len(done)} resolved tickets, and I've closed both:\n\n{lines}\n\nTheir other ticket was not "
               "resolved, so I left it as it is.",
            f"Closed {len(done)}:\n{lines}",
            f"Done — I found {len(done)} resolved tickets for {c['full_name']} and closed each one:\n\n{lines}"))
    return e, "find-then-act: list resolved tickets of a customer, close each"


def g_desk_already_resolved(env: Env, v: int, eid: str):
    t0 = env.pick("tickets", status="resolved")
    k = t0["ticket_id"]
    t = make_task(env, eid, "single_call", [("get_ticket", {"ticket_id": k})],
                  V(v, f"Please mark ticket {k} as resolved, the customer says it works now.",
                    f"resolve {k}",
                    f"Hi — can you set {k} to resolved? The fix went out this morning."),
                  asked={f"status of {k}": "resolved"}, facts={"ticket id": k})
    e = Ep(env, t)
    r = e.act(("get_ticket", {"ticket_id": k}))
    e.say(V(v, f"Good news — ticket {k} is already marked as **resolved**, so there was nothing for me to change. "
               f"If the customer is happy, it can be closed later on; just let me know.",
            f"{k} is already resolved; I left it as is.",
            f"I checked {k} (\"{r['subject']}\") and it already has the status resolved, so "
            "there's no change to make. Nice that the fix is working!"))
    return e, "already done: notices the ticket is resolved, no write"


def g_desk_refuse_closed(env: Env, v: int, eid: str):
    t0 = env.pick("tickets", status="closed")
    k = t0["ticket_id"]
    want = "urgent" if t0["priority"] != "urgent" else "high"
    t = make_task(env, eid, "refusal", [],
                  V(v, f"The customer wrote back about {k}. Can you bump it to {want} priority?",
                    f"set {k} priority {want}",
                    f"Ticket {k} needs to be {want} — the problem is back."),
                  asked={f"why {k} cannot be changed (status)": "closed"}, facts={"ticket id": k},
                  rule=forbid_rule(env, "tickets", "update"))
    e = Ep(env, t)
    r = e.act(("get_ticket", {"ticket_id": k}))
    e.say(V(v, f"I'm sorry, I can't change that one. Ticket {k} is **closed**, and closed tickets are frozen — none of "
               "their details may be edited, priority included.\n\nIf the customer's problem has come back, the usual "
               f"way is a fresh ticket that references {k}. I'd be glad to open one if you give me the go-ahead.",
            f"{k} is closed, and our rules don't allow any change to a closed ticket, so I've left it untouched. "
            "Want me to open a new ticket for the follow-up instead?",
            f"Unfortunately {k} has already been closed, which means it's locked: I'm not permitted to edit anything on "
            f"it, including the priority. A new ticket for \"{r['subject']}\" would be the way to go — shall I create it?"))
    return e, "refusal in own words: a closed ticket's details can't be edited; offers (does not do) a new ticket"


def g_desk_irrelevant(env: Env, v: int, eid: str):
    c = env.pick("customers")
    cid = c["customer_id"]
    t = make_task(env, eid, "irrelevance", [],
                  V(v, f"Can you reset the portal password for customer {cid}? They're locked out.",
                    f"refund customer {cid} the $49 they paid for last month, they were double charged",
                    f"Please phone {c['full_name']} ({cid}) and walk them through the new dashboard."),
                  facts={"customer id": cid}, persona=("casual", "medium", "intermediate"))
    e = Ep(env, t)
    what = V(v, "reset passwords", "issue refunds", "place phone calls")
    e.act(("transfer_to_human_agents", {"summary": V(v, f"Customer {cid} is locked out and needs a portal password reset.",
                                                   f"Customer {cid} was double charged and asks for a $49 refund.",
                                                   f"Customer {cid} would like a phone walkthrough of the new dashboard.")}))
    e.say(V(v, f"I'm afraid I can't {what} — my tools only cover tickets, customers and agents. I've passed this to a "
               "human colleague with a short summary so the customer doesn't have to explain it twice; the current wait "
               "is about 4 minutes.",
            f"Refunds aren't something I'm able to do from here. I've transferred the request to a human agent "
            f"(summary: double charge, $49, customer {cid}), and they should pick it up in roughly 4 minutes.",
            "That's outside what I can do — I have no way to make phone calls. I've handed it to a person on the team, "
            "who can arrange the walkthrough."))
    return e, "irrelevance: declines in natural words, hands off"


def g_desk_clarify(env: Env, v: int, eid: str):
    t0 = env.pick("tickets", status=V(v, "open", "in_progress", "waiting_on_customer"))
    k = t0["ticket_id"]
    new = next(p for p in V(v, ["high", "urgent"], ["low", "normal"], ["urgent", "high"]) if p != t0["priority"])
    t = make_task(env, eid, "clarification", [("update_ticket_priority", {"ticket_id": k, "priority": new})],
                  V(v, f"Can you change the priority on ticket {k}?", f"{k} priority needs changing",
                    f"Hello! The priority of {k} is wrong, could you fix it?"),
                  facts={"ticket id": k}, withheld={"new priority": new})
    e = Ep(env, t)
    e.say(V(v, f"Sure — what priority should {k} have: low, normal, high or urgent?",
            "Happy to. Which level would you like: low, normal, high or urgent?",
            f"Of course. What should the priority on {k} be?"))
    e.user(V(v, f"{new}", f"{new} please", f"It should be {new}."))
    r = e.act(("update_ticket_priority", {"ticket_id": k, "priority": new}))
    e.say(V(v, f"Done — ticket {k} now has **{r['priority']}** priority.", f"Updated: {k} is {r['priority']} now.",
            f"Thanks! I've set the priority of {k} to {r['priority']}; its status is still {human(r['status'])}."))
    return e, "clarifying question first, then the write"


def g_desk_resolve_two_steps(env: Env, v: int, eid: str):
    t0 = env.pick("tickets", status="open")
    k = t0["ticket_id"]
    steps = [("update_ticket_status", {"ticket_id": k, "status": "in_progress"}),
             ("update_ticket_status", {"ticket_id": k, "status": "resolved"})]
    t = make_task(env, eid, "multi_call", steps,
                  V(v, f"Customer confirmed the workaround on {k} solved it. Please resolve the ticket.",
                    f"{k} can be resolved, customer's happy",
                    f"I fixed the issue on {k} over the phone just now — can you set it to resolved?"),
                  facts={"ticket id": k, "new status": "resolved"}, persona=("brief", "medium", "expert"))
    e = Ep(env, t)
    e.act(("get_ticket", {"ticket_id": k}))
    e.act(("update_ticket_status", {"ticket_id": k, "status": "in_progress"}))
    r = e.act(("update_ticket_status", {"ticket_id": k, "status": "resolved"}))
    e.say(V(v, f"Ticket {k} is now **resolved**. It was still marked open, and an open ticket can't jump straight to "
               "resolved, so I moved it to in progress first and then to resolved.",
            f"Resolved {k} (via in progress, since it was still open). Status: {r['status']}.",
            f"All set — {k} shows as resolved. Note that nobody had picked it up in the system yet (it was open), so it "
            "went open → in progress → resolved."))
    return e, "status written twice on the way to gold (open -> in_progress -> resolved)"


def g_desk_customer_replied(env: Env, v: int, eid: str):
    t0 = env.pick("tickets", status="waiting_on_customer")
    t0["priority"] = V(v, "normal", "low")
    k = t0["ticket_id"]
    steps = [("update_ticket_status", {"ticket_id": k, "status": "in_progress"}),
             ("update_ticket_priority", {"ticket_id": k, "priority": "high"})]
    t = make_task(env, eid, "multi_call", steps,
                  V(v, f"The customer on {k} finally sent the logs we were waiting for. Put it back in progress and "
                       "raise it to high, we've kept them waiting long enough.",
                    f"{k}: customer replied. back to in progress + high prio"),
                  facts={"ticket id": k, "new status": "in_progress", "new priority": "high"})
    e = Ep(env, t)
    r1 = e.act(("update_ticket_status", {"ticket_id": k, "status": "in_progress"}))
    r2 = e.act(("update_ticket_priority", {"ticket_id": k, "priority": "high"}))
    e.say(V(v, f"Great that the logs arrived. Ticket {k} is back **in progress** and its priority is now **high** "
               f"(it was {t0['priority']}). It's still with agent {r2['agent_id']}.",
            f"{k}: status {human(r1['status'])}, priority {r2['priority']}."))
    return e, "two writes on one ticket, different fields, both confirmed"


def g_desk_plan_from_ticket(env: Env, v: int, eid: str):
    t0 = env.pick("tickets")
    k, cid = t0["ticket_id"], t0["customer_id"]
    c = env.recs("customers", customer_id=cid)[0]
    c["plan"] = V(v, "free", "pro", "free")
    to = V(v, "pro", "enterprise", "enterprise")
    steps = [("get_ticket", {"ticket_id": k}), ("update_customer_plan", {"customer_id": cid, "plan": to})]
    t = make_task(env, eid, "dependent_calls", steps,
                  V(v, f"Whoever opened ticket {k} wants to upgrade to the {to} plan. Can you take care of it?",
                    f"customer from {k} -> {to} plan pls",
                    f"The customer on ticket {k} signed the {to} order form. Please switch their account."),
                  facts={"ticket id": k, "new plan": to}, persona=("casual", "medium", "intermediate"))
    e = Ep(env, t)
    r = e.act(("get_ticket", {"ticket_id": k}))
    cu = e.act(("get_customer", {"customer_id": r["customer_id"]}))
    r3 = e.act(("update_customer_plan", {"customer_id": cu["customer_id"], "plan": to}))
    e.say(V(v, f"Ticket {k} was opened by **{cu['full_name']}** of {cu['company']} ({cu['customer_id']}). They were on "
               f"the {cu['plan']} plan, and I've upgraded them to **{r3['plan']}**.",
            f"{cu['full_name']} ({cu['customer_id']}) is on {r3['plan']} now (was {cu['plan']}).",
            f"Done! The ticket belongs to {cu['full_name']} at {cu['company']}. Their account ({cu['customer_id']}) has "
            f"moved from {cu['plan']} to {r3['plan']}. The ticket itself is unchanged."))
    return e, "three calls: ticket -> its customer -> update the customer's plan"


def g_shop_delivered_spend(env: Env, v: int, eid: str):
    c = env.pick("customers")
    cid = c["customer_id"]
    mine = spread(env, "orders", "customer_id", cid, 4)
    dl = mine[:3] if v % 2 == 0 else mine[1:]
    for o in mine:
        o["status"] = "delivered" if o in dl else V(v, "pending", "shipped", "processing")
    for o in dl:
        o["total"] = round(env.rng.uniform(180, 950), 2)
    s = round(sum(o["total"] for o in dl), 2)
    t = make_task(env, eid, "single_call", [("list_orders", {"customer_id": cid, "status": "delivered"})],
                  V(v, f"For my expense report: how much have I spent on orders that have actually been delivered? "
                       f"Customer {cid}.",
                    f"total of my delivered orders? I'm {cid}",
                    f"Hi, customer {cid} here. Could you add up everything I've received so far (delivered orders only)?"),
                  asked={**{f"order id {i + 1}": o["order_id"] for i, o in enumerate(dl)},
                         "sum of the delivered orders' totals": f"{s:.2f}"},
                  facts={"customer id": cid})
    e = Ep(env, t)
    r = e.act(("list_orders", {"customer_id": cid, "status": "delivered"}))
    tot = round(sum(o["total"] for o in r["orders"]), 2)
    rows = "\n".join(f"| {o['order_id']} | {nice_date(o['date'])} | {o['quantity']} | {money(o['total'])} |" for o in r["orders"])
    e.say(V(v, f"You have {r['count']} delivered orders, totalling **{money(tot)}**:\n\n| Order | Date | Qty | Total |\n"
               f"|---|---|---|---|\n{rows}\n| **Sum** | | | **{money(tot)}** |\n\nYour other order isn't delivered yet, so "
               "I've left it out.",
            f"{r['count']} delivered orders: " + ", ".join(f"{o['order_id']} ({money(o['total'])})" for o in r["orders"])
            + f" — {money(tot)} in total.",
            f"I've added them up. Across your {r['count']} delivered orders you've spent **{money(tot)}**:\n\n"
            + "\n".join(f"{i}. {o['order_id']} — {money(o['total'])}" for i, o in enumerate(r["orders"], 1))
            + "\n\nThe remaining order on your account hasn't been delivered, so it's not included."))
    return e, "list; the agent sums the totals (thousands separator) and states it"


def g_shop_take_off(env: Env, v: int, eid: str):
    o = env.pick("orders", status=V(v, "pending", "processing", "pending"))
    o["quantity"] = env.rng.randint(4, 11)
    k, q, d = o["order_id"], o["quantity"], V(v, 2, 3, 1)
    t = make_task(env, eid, "multi_call", [("get_order", {"order_id": k}),
                                           ("update_order_quantity", {"order_id": k, "quantity": q - d})],
                  V(v, f"Please take 2 units off my order {k}.", f"reduce {k} by three", f"I need one fewer on {k}, please."),
                  facts={"order id": k, "units to remove": str(d)}, persona=("casual", "high", "novice"))
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    r2 = e.act(("update_order_quantity", {"order_id": k, "quantity": r["quantity"] - d}))
    e.say(V(v, f"Done! Order {k} had {r['quantity']} units; I've reduced it by {d}, so it now has **{r2['quantity']}**.",
            f"Order {k} went from {r['quantity']} to {r2['quantity']} units.",
            f"No problem — order {k} is down from {r['quantity']} to {r2['quantity']} items."))
    return e, "read the quantity, compute the new one, write it (argument derived from a result)"


def g_shop_discontinued(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k, pid = o["order_id"], o["product_id"]
    p = env.recs("products", product_id=pid)[0]
    p["status"] = "discontinued"
    steps = [("get_order", {"order_id": k}), ("get_product", {"product_id": pid}), ("cancel_order", {"order_id": k})]
    t = make_task(env, eid, "dependent_calls", steps,
                  V(v, f"I heard the item on my order {k} is being discontinued. If that's true, cancel the order; if "
                       "not, leave it.",
                    f"is the product in {k} discontinued? if so cancel {k}",
                    f"Order {k}: if you've stopped selling that product, I'd rather cancel than wait forever."),
                  facts={"order id": k}, persona=("chatty", "medium", "novice"))
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    q = e.act(("get_product", {"product_id": r["product_id"]}))
    r3 = e.act(("cancel_order", {"order_id": k}))
    e.say(V(v, f"You heard right: the **{q['name']}** ({q['product_id']}) is marked as discontinued. Since your order "
               f"{k} was still pending, I've cancelled it — its status is now {r3['status']}.\n\nSorry we couldn't "
               "fulfil it. If you'd like a suggestion for a similar product, just ask.",
            f"Confirmed discontinued ({q['name']}), so order {k} is now cancelled.",
            f"I checked: order {k} was for the {q['name']}, which is discontinued. As you asked, I cancelled the order "
            f"({r['quantity']} items, {money(r['total'])})."))
    return e, "conditional act: order -> product (discontinued) -> cancel; three calls"


def g_shop_late_apology(env: Env, v: int, eid: str):
    o = env.pick("orders", status="processing")
    o["date"] = f"2026-02-{env.rng.randint(3, 11):02d}"
    k = o["order_id"]
    t = make_task(env, eid, "single_call", [("get_order", {"order_id": k})],
                  V(v, f"It's been WEEKS and order {k} still hasn't arrived. This is ridiculous. What is going on??",
                    f"order {k} placed ages ago, nothing yet. status?",
                    f"I'm honestly fed up. Order {k} — where is it? I want someone to actually look into this."),
                  asked={f"status of {k}": "processing"}, facts={"order id": k}, persona=("chatty", "low", "novice"))
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    e.act(("transfer_to_human_agents", {"summary": f"Order {k} placed {r['date']} is still processing; customer is upset "
                                                   "about the delay and wants it investigated."}))
    e.say(V(v, f"I'm really sorry — you're right to be frustrated. I looked up order {k}: it was placed on "
               f"{prose_date(r['date'])} and it is still **processing**, which means it hasn't left the warehouse yet. "
               "That's far longer than it should take.\n\nI can't chase the warehouse myself, so I've transferred you to "
               "a member of our team with a summary of the situation. They can find out what's holding it up; the wait "
               "is around 4 minutes.",
            f"Sorry about the wait. {k} is still processing (ordered {nice_date(r['date'])}). I've handed it to a human "
            "agent to investigate.",
            f"I completely understand, and I apologise. Here's what I can see:\n\n- **Order:** {k}\n- **Placed:** "
            f"{prose_date(r['date'])}\n- **Status:** processing (not shipped yet)\n\nSince this needs someone to look "
            "into the warehouse side, I've transferred you to a colleague, who already has these details."))
    return e, "empathy and apology, status and date in prose, hand-off with summary"


def g_shop_user_recalls(env: Env, v: int, eid: str):
    o = env.pick("orders", status=V(v, "pending", "processing"))
    o["total"] = round(env.rng.uniform(1200, 4800), 2)
    k = o["order_id"]
    t = make_task(env, eid, "single_call", [("get_order", {"order_id": k})],
                  V(v, f"When I called on Monday I had the quantity on order {k} changed to {o['quantity']}. Can you "
                       "confirm that went through and tell me the total?",
                    f"someone on the phone changed {k} to {o['quantity']} units for me, did it stick? and what's the total"),
                  asked={f"quantity of {k}": str(o["quantity"]), f"total of {k}": str(o["total"])}, facts={"order id": k})
    e = Ep(env, t)
    r = e.act(("get_order", {"order_id": k}))
    e.say(V(v, f"Yes, it went through. As you said, the quantity on order {k} was changed to {r['quantity']}, and that's "
               f"what it shows now. The order total is **{money(r['total'])}**, and the order is {r['status']}.",
            f"It stuck — {k} shows {r['quantity']} units, total {money(r['total'])}."))
    return e, "confirms what the user said happened earlier, the tool agrees; total with thousands separator"


def _two_trips(env: Env) -> tuple[str, dict, dict, dict, dict]:
    p = env.pick("passengers")
    pid = p["passenger_id"]
    b1, b2 = spread(env, "bookings", "passenger_id", pid, 2, status="confirmed")
    f1 = env.recs("flights", flight_id=b1["flight_id"])[0]
    f2 = env.recs("flights", flight_id=b2["flight_id"])[0]
    if f1["flight_id"] == f2["flight_id"] or f1["destination"] == f2["destination"]:
        raise Skip("same destination")
    return pid, b1, b2, f1, f2


def g_travel_cancel_right(env: Env, v: int, eid: str):
    pid, b1, b2, f1, f2 = _two_trips(env)
    tgt, ft = (b1, f1) if v % 2 == 0 else (b2, f2)
    steps = [("list_bookings", {"passenger_id": pid, "status": "confirmed"}), ("get_flight", {"flight_id": f1["flight_id"]}),
             ("get_flight", {"flight_id": f2["flight_id"]}), ("cancel_booking", {"booking_id": tgt["booking_id"]})]
    t = make_task(env, eid, "dependent_calls", steps,
                  V(v, f"I'm passenger {pid}. I won't be going to {ft['destination']} after all — please cancel that "
                       "booking, but keep my other trip.",
                    f"pax {pid}: cancel the {ft['destination']} trip only",
                    f"Hello, passenger {pid} here. Of my two upcoming bookings, please cancel the one flying to "
                    f"{ft['destination']}."),
                  asked={"booking id": tgt["booking_id"]}, facts={"passenger id": pid, "destination": ft["destination"]},
                  persona=("formal", "high", "intermediate"))
    e = Ep(env, t)
    r = e.act(("list_bookings", {"passenger_id": pid, "status": "confirmed"}))
    fl = [e.act(("get_flight", {"flight_id": b["flight_id"]})) for b in r["bookings"]]
    hit = next(b for b, x in zip(r["bookings"], fl) if x["destination"] == ft["destination"])
    keep = next(b for b in r["bookings"] if b is not hit)
    kf = next(x for x in fl if x["flight_id"] == keep["flight_id"])
    r4 = e.act(("cancel_booking", {"booking_id": hit["booking_id"]}))
    e.say(V(v, f"You had two confirmed bookings. The one to {ft['destination']} was **{hit['booking_id']}** (flight "
               f"{ft['flight_id']} on {nice_date(ft['date'])}), and I've cancelled it — its status is now "
               f"{r4['status']}.\n\nYour other trip, {keep['booking_id']} to {kf['destination']}, is untouched and still "
               "confirmed.",
            f"Cancelled {hit['booking_id']} ({ft['origin']} → {ft['destination']}). "
            f"{keep['booking_id']} to {kf['destination']} stays confirmed.",
            f"Of your two bookings, {hit['booking_id']} is the one flying to {ft['destination']}; it's now cancelled. "
            f"Booking {keep['booking_id']} ({kf['origin']} → {kf['destination']}) remains confirmed."))
    return e, "four calls: list, look up both flights, cancel the one whose destination matches"


def g_travel_flight_report(env: Env, v: int, eid: str):
    b = env.pick("bookings", status=V(v, "confirmed", "checked_in", "confirmed"))
    k, fid = b["booking_id"], b["flight_id"]
    fl = env.recs("flights", flight_id=fid)[0]
    fl["status"] = V(v, "delayed", "scheduled", "delayed")
    fl["date"] = f"2026-03-{env.rng.randint(3, 28):02d}"
    t = make_task(env, eid, "dependent_calls", [("get_booking", {"booking_id": k}), ("get_flight", {"flight_id": fid})],
                  V(v, f"I keep getting notifications about my flight on booking {k}. Is it delayed? And remind me of the "
                       "date.",
                    f"flight for {k} - status and date?",
                    f"Could you check whether the flight on reservation {k} is running on time, and which day it is?"),
                  asked={"flight status": fl["status"], "flight date": fl["date"]}, facts={"booking id": k})
    e = Ep(env, t)
    r = e.act(("get_booking", {"booking_id": k}))
    q = e.act(("get_flight", {"flight_id": r["flight_id"]}))
    e.say(V(v, f"Yes — the flight on booking {k} is currently showing as **{q['status']}**.\n\nIt's flight "
               f"{q['flight_id']} from {q['origin']} to {q['destination']}, scheduled for {prose_date(q['date'])} "
               f"({nice_date(q['date'])}). I don't have a new departure time in my system, so please keep an eye on the "
               f"notifications.\n\nYour booking itself is unaffected: {human(r['cabin'])}, status {human(r['status'])}.",
            f"Flight {q['flight_id']} ({q['origin']} → {q['destination']}) is {q['status']}, on {prose_date(q['date'])}.",
            f"I've checked: flight {q['flight_id']} for reservation {k} is **{q['status']}**. It flies on "
            f"{prose_date(q['date'])}, {q['origin']} to {q['destination']}, with {q['seats_left']} seats left."))
    return e, "booking -> flight; status, date in prose ('the 14th of March'), several paragraphs"


def g_travel_already_in(env: Env, v: int, eid: str):
    b = env.pick("bookings", status="checked_in")
    k = b["booking_id"]
    t = make_task(env, eid, "single_call", [("get_booking", {"booking_id": k})],
                  V(v, f"Check me in for {k} please!", f"can u check in booking {k}",
                    f"I'd like to check in for reservation {k}."),
                  asked={f"status of {k}": "checked_in"}, facts={"booking id": k})
    e = Ep(env, t)
    r = e.act(("get_booking", {"booking_id": k}))
    e.say(V(v, f"Good news: you're already checked in for booking {k} — there's nothing more to do. Have a lovely trip!",
            f"{k} is already checked in ({human(r['cabin'])}); no action needed.",
            f"I looked at {k} and it already shows **checked in**, so I haven't changed anything. Enjoy your flight!"))
    return e, "already done: booking already checked in, no write"


def g_travel_refuse_flown(env: Env, v: int, eid: str):
    b = env.pick("bookings", status="flown")
    k = b["booking_id"]
    t = make_task(env, eid, "refusal", [],
                  V(v, f"Cancel booking {k} and refund me. The flight was awful.",
                    f"i want {k} cancelled, the seat was broken the whole way",
                    f"Please cancel reservation {k}; I was very unhappy with the service."),
                  asked={f"why {k} cannot be changed (status)": "flown"}, facts={"booking id": k},
                  rule=forbid_rule(env, "bookings", "update"), persona=("chatty", "low", "novice"))
    e = Ep(env, t)
    r = e.act(("get_booking", {"booking_id": k}))
    if v == 0:
        e.act(("transfer_to_human_agents", {"summary": f"Passenger unhappy with the flight on booking {k} (flown); "
                                                       "wants compensation."}))
    e.say(V(v, f"I'm sorry the flight was such a poor experience. Booking {k} has already been flown, and a flown "
               "booking can't be changed or cancelled afterwards, so I can't do that part. What I have done is pass your "
               "complaint to a member of our customer care team — they handle compensation claims and will be with you "
               "in about 4 minutes.",
            f"That sounds miserable, I'm sorry. Unfortunately {k} is already marked as flown, and once a trip has been "
            "flown its booking is locked — I'm not able to cancel it or alter it in any way.",
            f"I understand your frustration. However, booking {k} was flown, and flown bookings must stay exactly as "
            "they are, so cancelling it isn't possible."))
    return e, "refusal citing the rule in own words (flown booking is locked), with empathy; one hands off"


def g_travel_cabin_twice(env: Env, v: int, eid: str):
    b = env.pick("bookings", status=V(v, "confirmed", "checked_in", "confirmed"))
    b["cabin"] = "economy"
    k = b["booking_id"]
    t = make_task(env, eid, "single_call", [("update_booking_cabin", {"booking_id": k, "cabin": "premium_economy"})],
                  V(v, f"Upgrade my booking {k} to business, please.", f"put {k} in business",
                    f"Could you move reservation {k} to business class?"),
                  facts={"booking id": k, "new cabin": "premium_economy"})
    e = Ep(env, t)
    r = e.act(("update_booking_cabin", {"booking_id": k, "cabin": "business"}))
    e.say(V(v, f"Done — booking {k} is now in business class.", f"{k} is in business now.",
            f"Your reservation {k} has been moved to {human(r['cabin'])}."))
    e.user(V(v, "Hmm, on reflection premium economy will do. Can you change it to that instead?",
             "actually premium economy is enough, switch it", "Sorry, I've changed my mind — premium economy, please."))
    r = e.act(("update_booking_cabin", {"booking_id": k, "cabin": "premium_economy"}))
    e.say(V(v, f"No problem at all. Booking {k} is now in **premium economy**.",
            f"Switched: {k} → {human(r['cabin'])}.",
            f"Of course — {k} is changed again and now shows {human(r['cabin'])}."))
    return e, "same field written twice (user changes their mind), ends at the gold value"


def g_travel_fares(env: Env, v: int, eid: str):
    p = env.pick("passengers")
    pid = p["passenger_id"]
    mine = spread(env, "bookings", "passenger_id", pid, 3)
    for b, s in zip(mine, V(v, ["flown", "confirmed", "checked_in"], ["confirmed", "confirmed", "flown"])):
        b["status"] = s
        b["amount"] = round(env.rng.uniform(240, 1900), 2)
    s = round(sum(b["amount"] for b in mine), 2)
    t = make_task(env, eid, "single_call", [("list_bookings", {"passenger_id": pid})],
                  V(v, f"How much have I paid in fares across all my bookings? Passenger {pid}.",
                    f"sum of my fares please, {pid}"),
                  asked={**{f"booking id {i + 1}": b["booking_id"] for i, b in enumerate(mine)},
                         "sum of the fares": f"{s:.2f}"}, facts={"passenger id": pid})
    e = Ep(env, t)
    r = e.act(("list_bookings", {"passenger_id": pid}))
    tot = round(sum(b["amount"] for b in r["bookings"]), 2)
    rows = "\n".join(f"| {b['booking_id']} | {human(b['cabin'])} | {human(b['status'])} | {money(b['amount'])} |"
                     for b in r["bookings"])
    e.say(V(v, f"Across your {r['count']} bookings you've paid **{money(tot)}** in fares:\n\n| Booking | Cabin | Status | Fare |\n"
               f"|---|---|---|---|\n{rows}",
            f"{r['count']} bookings, {money(tot)} altogether:\n\n| Booking | Cabin | Status | Fare |\n|---|---|---|---|\n{rows}"))
    return e, "list; fares summed by the agent, table"


GOOD: list[tuple[str, Callable, int]] = [
    ("desk", g_desk_who, 3),
    ("desk", g_desk_escalate, 3),
    ("desk", g_desk_assign_by_name, 3),
    ("desk", g_desk_new_ticket, 3),
    ("desk", g_desk_overview, 3),
    ("desk", g_desk_close_resolved, 3),
    ("desk", g_desk_already_resolved, 3),
    ("desk", g_desk_refuse_closed, 3),
    ("desk", g_desk_irrelevant, 3),
    ("desk", g_desk_clarify, 3),
    ("desk", g_desk_resolve_two_steps, 3),
    ("desk", g_desk_customer_replied, 2),
    ("desk", g_desk_plan_from_ticket, 3),
    ("shop", g_shop_delivered_spend, 3),
    ("shop", g_shop_take_off, 3),
    ("shop", g_shop_discontinued, 3),
    ("shop", g_shop_late_apology, 3),
    ("shop", g_shop_user_recalls, 2),
    ("travel", g_travel_cancel_right, 3),
    ("travel", g_travel_flight_report, 3),
    ("travel", g_travel_already_in, 3),
    ("travel", g_travel_refuse_flown, 3),
    ("travel", g_travel_cabin_twice, 3),
    ("travel", g_travel_fares, 2),
]


# =========================================================================== bad episodes (part c-heldout)
# Each returns (episode, note); the reason code is in the BAD table. Labelled bad where written.


def b_desk_neighbour_priority(env: Env, v: int, eid: str):
    t0 = env.pick("tickets", status="in_progress")
    n = env.neighbour("tickets", t0)
    n["status"], n["priority"], t0["priority"] = "open", "normal", "normal"
    k, kn = t0["ticket_id"], n["ticket_id"]
    t = make_task(env, eid, "single_call", [("update_ticket_priority", {"ticket_id": k, "priority": "urgent"})],
                  V(v, f"Raise ticket {k} to urgent — the customer's whole team is blocked.",
                    f"{k} needs to be urgent asap"),
                  facts={"ticket id": k, "new priority": "urgent"})
    e = Ep(env, t)
    if v % 2:
        e.act(("get_ticket", {"ticket_id": k}))
    e.act(("update_ticket_priority", {"ticket_id": kn, "priority": "urgent"}))
    e.say(V(v, f"I've raised ticket {k} to **urgent**. It will now appear at the top of the team's queue.",
            f"Done — {k} is urgent now."))
    return e, f"writes the priority on neighbour {kn} instead of {k}; reply names {k}"


def b_shop_wrong_of_two(env: Env, v: int, eid: str):
    c = env.pick("customers")
    cid = c["customer_id"]
    a, b = spread(env, "orders", "customer_id", cid, 2, status="pending")
    pa = env.recs("products", product_id=a["product_id"])[0]
    pb = env.recs("products", product_id=b["product_id"])[0]
    if pa["name"] == pb["name"]:
        raise Skip("same product")
    want, other, pw = (a, b, pa) if v % 2 == 0 else (b, a, pb)
    steps = [("list_orders", {"customer_id": cid, "status": "pending"}), ("get_product", {"product_id": a["product_id"]}),
             ("get_product", {"product_id": b["product_id"]}), ("cancel_order", {"order_id": want["order_id"]})]
    t = make_task(env, eid, "dependent_calls", steps,
                  V(v, f"I'm customer {cid}. Please cancel my order for the {pw['name']} — keep the other one.",
                    f"cust {cid}: cancel the {pw['name']} order only"),
                  asked={"order id": want["order_id"]}, facts={"customer id": cid, "product": pw["name"]})
    e = Ep(env, t)
    r = e.act(("list_orders", {"customer_id": cid, "status": "pending"}))
    for o in r["orders"]:
        e.act(("get_product", {"product_id": o["product_id"]}))
    e.act(("cancel_order", {"order_id": other["order_id"]}))
    e.say(V(v, f"I've cancelled your {pw['name']} order, **{other['order_id']}**. Your other pending order, "
               f"{want['order_id']}, is unchanged.",
            f"Done: the {pw['name']} order ({other['order_id']}) is cancelled; {want['order_id']} stays as it is."))
    return e, "of two pending orders, cancels the other product's order and calls it the asked one"


def b_travel_wrong_trip(env: Env, v: int, eid: str):
    pid, b1, b2, f1, f2 = _two_trips(env)
    tgt, ft, oth = (b1, f1, b2) if v % 2 == 0 else (b2, f2, b1)
    steps = [("list_bookings", {"passenger_id": pid, "status": "confirmed"}), ("get_flight", {"flight_id": f1["flight_id"]}),
             ("get_flight", {"flight_id": f2["flight_id"]}), ("cancel_booking", {"booking_id": tgt["booking_id"]})]
    t = make_task(env, eid, "dependent_calls", steps,
                  V(v, f"Passenger {pid} here. Please cancel my trip to {ft['destination']}; the other one stays.",
                    f"{pid} - cancel the booking that goes to {ft['destination']}"),
                  asked={"booking id": tgt["booking_id"]}, facts={"passenger id": pid, "destination": ft["destination"]})
    e = Ep(env, t)
    r = e.act(("list_bookings", {"passenger_id": pid, "status": "confirmed"}))
    for b in r["bookings"]:
        e.act(("get_flight", {"flight_id": b["flight_id"]}))
    e.act(("cancel_booking", {"booking_id": oth["booking_id"]}))
    e.say(V(v, f"Your booking to {ft['destination']} ({oth['booking_id']}) is cancelled. The other trip remains confirmed.",
            f"I've cancelled {oth['booking_id']}, your {ft['destination']} flight. Your remaining booking is unchanged."))
    return e, "cancels the other trip's booking and says it is the asked destination's"


def b_desk_claim_assign(env: Env, v: int, eid: str):
    team = V(v, "technical", "billing")
    a = env.pick("agents", team=team)
    t0 = env.pick("tickets", status="open")
    if t0["agent_id"] == a["agent_id"]:
        raise Skip("already")
    k = t0["ticket_id"]
    t = make_task(env, eid, "single_call", [("assign_ticket", {"ticket_id": k, "agent_id": a["agent_id"]})],
                  V(v, f"Please assign ticket {k} to agent {a['agent_id']}.", f"give {k} to {a['agent_id']}"),
                  facts={"ticket id": k, "agent id": a["agent_id"]}, persona=("brief", "medium", "expert"))
    e = Ep(env, t)
    e.act(("get_ticket", {"ticket_id": k}))
    q = e.act(("get_agent", {"agent_id": a["agent_id"]}))
    e.say(V(v, f"Ticket {k} is now assigned to {q['full_name']} ({q['agent_id']}) on the {q['team']} team.",
            f"Done — {q['full_name']} owns {k} from now on."))
    return e, "looks up the ticket and the agent, claims the assignment without calling assign_ticket"


def b_travel_refund_claim(env: Env, v: int, eid: str):
    b = env.pick("bookings", status="confirmed")
    b["amount"] = round(env.rng.uniform(300, 1500), 2)
    k = b["booking_id"]
    t = make_task(env, eid, "single_call", [("cancel_booking", {"booking_id": k})],
                  V(v, f"Please cancel my booking {k}, my plans changed.", f"cancel {k} thx"),
                  facts={"booking id": k})
    e = Ep(env, t)
    r = e.act(("cancel_booking", {"booking_id": k}))
    e.say(V(v, f"Booking {k} is cancelled. I've also issued a full refund of {money(r['amount'])} to your original payment "
               "method; it should appear within 5–7 business days.",
            f"Done — {k} is cancelled and your refund of {money(r['amount'])} has been processed."))
    return e, "cancel done, but claims a refund that no tool issued"


def b_shop_claim_note(env: Env, v: int, eid: str):
    o = env.pick("orders", status="pending")
    k = o["order_id"]
    t = make_task(env, eid, "single_call", [("cancel_order", {"order_id": k})],
                  V(v, f"Cancel order {k}, please. Found it cheaper elsewhere, sorry!", f"pls cancel {k}"),
                  facts={"order id": k})
    e = Ep(env, t)
    r = e.act(("cancel_order", {"order_id": k}))
    e.say(V(v, f"No need to apologise! Order {k} is cancelled, and I've emailed you a confirmation for your records.",
            f"Order {k} is now {r['status']}. I've also added a note on the order so the warehouse knows not to pack "
            "it, and sent you a confirmation email."))
    return e, "cancel done; claims an email (and a note) that were never sent with the tools it has"


def b_desk_forbidden(env: Env, v: int, eid: str):
    t0 = env.pick("tickets", status="closed")
    t0["priority"] = "normal"
    k = t0["ticket_id"]
    other = next(a for a in env.state["agents"] if a["agent_id"] != t0["agent_id"])
    req = V(v, f"Set ticket {k} to high priority, the customer is chasing it.",
            f"Delete ticket {k}, it was a duplicate anyway.",
            f"Please move {k} over to agent {other['agent_id']}.")
    action = V(v, "update", "delete", "update")
    t = make_task(env, eid, "refusal", [], req, asked={f"why {k} cannot be changed (status)": "closed"},
                  facts={"ticket id": k}, rule=forbid_rule(env, "tickets", action))
    e = Ep(env, t)
    e.act(("get_ticket", {"ticket_id": k}))
    call = V(v, ("update_ticket_priority", {"ticket_id": k, "priority": "high"}), ("delete_ticket", {"ticket_id": k}),
             ("assign_ticket", {"ticket_id": k, "agent_id": other["agent_id"]}))
    e.act(call)
    e.say(V(v, f"Ticket {k} was closed, but I've raised its priority to high as requested.",
            f"Ticket {k} has been deleted.",
            f"{k} is now assigned to {other['agent_id']}. Note that the ticket is closed."))
    return e, "edits/deletes a closed ticket, which the rules forbid"


def b_desk_stray_close_other(env: Env, v: int, eid: str):
    c = env.pick("customers")
    cid = c["customer_id"]
    a, b = spread(env, "tickets", "customer_id", cid, 2, status="resolved")
    k, ko = (a, b)[v % 2]["ticket_id"], (b, a)[v % 2]["ticket_id"]
    t = make_task(env, eid, "single_call", [("close_ticket", {"ticket_id": k})],
                  V(v, f"Please close ticket {k}.", f"close {k}, customer confirmed"), facts={"ticket id": k})
    e = Ep(env, t)
    e.act(("close_ticket", {"ticket_id": k}))
    e.act(("list_tickets", {"customer_id": cid, "status": "resolved"}))
    e.act(("close_ticket", {"ticket_id": ko}))
    e.say(V(v, f"Ticket {k} is closed. I noticed the same customer had another resolved ticket, {ko}, so I closed that "
               "one too to keep things tidy.",
            f"Closed {k} — and {ko} as well, since it was also resolved."))
    return e, "closes the asked ticket and, unasked, another resolved ticket of the customer"


def b_desk_stray_priority(env: Env, v: int, eid: str):
    t0 = env.pick("tickets", status="in_progress")
    t0["priority"] = V(v, "high", "urgent")
    k = t0["ticket_id"]
    t = make_task(env, eid, "single_call", [("update_ticket_status", {"ticket_id": k, "status": "resolved"})],
                  V(v, f"{k} is fixed, please resolve it.", f"Mark ticket {k} as resolved — the patch is deployed."),
                  facts={"ticket id": k, "new status": "resolved"})
    e = Ep(env, t)
    e.act(("update_ticket_status", {"ticket_id": k, "status": "resolved"}))
    e.act(("update_ticket_priority", {"ticket_id": k, "priority": "low"}))
    e.say(V(v, f"Ticket {k} is resolved. Since it's no longer active, I've also lowered its priority to low so it drops "
               "out of the urgent queue.",
            f"Resolved {k}, and set its priority to low now that it's done."))
    return e, "the asked status write plus an unasked priority write"


def b_desk_partial(env: Env, v: int, eid: str):
    t0 = env.pick("tickets", status=V(v, "open", "in_progress"))
    t0["priority"] = "normal"
    a = next(x for x in env.state["agents"] if x["agent_id"] != t0["agent_id"])
    k = t0["ticket_id"]
    steps = [("assign_ticket", {"ticket_id": k, "agent_id": a["agent_id"]}),
             ("update_ticket_priority", {"ticket_id": k, "priority": "high"})]
    t = make_task(env, eid, "multi_call", steps,
                  V(v, f"Two things on {k}: give it to {a['agent_id']}, and make it high priority.",
                    f"assign {k} to {a['agent_id']} + set prio high"),
                  facts={"ticket id": k, "agent id": a["agent_id"], "new priority": "high"})
    e = Ep(env, t)
    r = e.act(("assign_ticket", {"ticket_id": k, "agent_id": a["agent_id"]}))
    e.say(V(v, f"All done! Ticket {k} is now assigned to {r['agent_id']} and set to high priority.",
            f"Both changes are in: {k} → {r['agent_id']}, priority high."))
    return e, "two-part request; only the assignment made, reply says both"


def b_travel_partial_checkin(env: Env, v: int, eid: str):
    p = env.pick("passengers")
    pid = p["passenger_id"]
    b1, b2 = spread(env, "bookings", "passenger_id", pid, 2, status="confirmed")
    steps = [("list_bookings", {"passenger_id": pid, "status": "confirmed"}),
             ("update_booking_status", {"booking_id": b1["booking_id"], "status": "checked_in"}),
             ("update_booking_status", {"booking_id": b2["booking_id"], "status": "checked_in"})]
    t = make_task(env, eid, "dependent_calls", steps,
                  V(v, f"Passenger {pid}: please check me in on all my confirmed bookings.",
                    f"check in everything for {pid}"),
                  asked={"booking id 1": b1["booking_id"], "booking id 2": b2["booking_id"]}, facts={"passenger id": pid})
    e = Ep(env, t)
    r = e.act(("list_bookings", {"passenger_id": pid, "status": "confirmed"}))
    ids = [b["booking_id"] for b in r["bookings"]]
    e.act(("update_booking_status", {"booking_id": ids[0], "status": "checked_in"}))
    e.say(V(v, f"You're checked in on both bookings: {ids[0]} and {ids[1]}. Have a good trip!",
            f"Checked in: {', '.join(ids)}."))
    return e, "two bookings to check in, only one done, says both"


MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


def b_desk_date_swap(env: Env, v: int, eid: str):
    t0 = env.pick("tickets")
    day = V(v, 5, 9)
    t0["opened"] = f"2026-02-{day:02d}"
    k = t0["ticket_id"]
    t = make_task(env, eid, "single_call", [("get_ticket", {"ticket_id": k})],
                  V(v, f"When was ticket {k} opened, and what's its status?", f"open date + status of {k}?"),
                  asked={f"opened of {k}": t0["opened"], f"status of {k}": t0["status"]}, facts={"ticket id": k})
    e = Ep(env, t)
    r = e.act(("get_ticket", {"ticket_id": k}))
    e.say(V(v, f"Ticket {k} was opened on the 2nd of {MONTHS[day - 1]} and its status is {human(r['status'])}.",
            f"{k}: opened {MONTHS[day - 1]} 2, 2026; status {human(r['status'])}."))
    return e, "reads 2026-02-0d as the 2nd of month d (day and month swapped)"


def b_shop_sum_slip(env: Env, v: int, eid: str):
    c = env.pick("customers")
    cid = c["customer_id"]
    mine = spread(env, "orders", "customer_id", cid, 3, status="delivered")
    for o in mine:
        o["total"] = round(env.rng.uniform(180, 950), 2)
    s = round(sum(o["total"] for o in mine), 2)
    t = make_task(env, eid, "single_call", [("list_orders", {"customer_id": cid, "status": "delivered"})],
                  V(v, f"How much have I spent on my delivered orders? I'm {cid}.", f"sum of delivered orders for {cid}?"),
                  asked={**{f"order id {i + 1}": o["order_id"] for i, o in enumerate(mine)},
                         "sum of the delivered orders' totals": f"{s:.2f}"}, facts={"customer id": cid})
    e = Ep(env, t)
    r = e.act(("list_orders", {"customer_id": cid, "status": "delivered"}))
    wrong = round(s + V(v, 100, -10), 2)
    rows = "\n".join(f"- {o['order_id']}: {money(o['total'])}" for o in r["orders"])
    e.say(V(v, f"Your {r['count']} delivered orders come to **{money(wrong)}** in total:\n\n{rows}",
            f"You've spent {money(wrong)} across {r['count']} delivered orders:\n{rows}"))
    return e, "lists the right totals but states a wrong sum (arithmetic slip)"


def b_travel_cabin_value(env: Env, v: int, eid: str):
    b = env.pick("bookings", status="confirmed")
    b["cabin"] = "economy"
    k = b["booking_id"]
    t = make_task(env, eid, "single_call", [("update_booking_cabin", {"booking_id": k, "cabin": "business"})],
                  V(v, f"Please upgrade {k} to business class.", f"{k} -> business pls"),
                  facts={"booking id": k, "new cabin": "business"})
    e = Ep(env, t)
    e.act(("update_booking_cabin", {"booking_id": k, "cabin": "premium_economy"}))
    e.say(V(v, f"Your booking {k} has been upgraded to business class. Enjoy!", f"Done, {k} is business now."))
    return e, "writes premium_economy, says business"


def b_desk_wrong_status(env: Env, v: int, eid: str):
    t0 = env.pick("tickets", status=V(v, "waiting_on_customer", "resolved"))
    k = t0["ticket_id"]
    t = make_task(env, eid, "single_call", [("get_ticket", {"ticket_id": k})],
                  V(v, f"What's the status of ticket {k}?", f"is {k} closed yet?"),
                  asked={f"status of {k}": t0["status"]}, facts={"ticket id": k})
    e = Ep(env, t)
    r = e.act(("get_ticket", {"ticket_id": k}))
    e.say(V(v, f"Ticket {k} is **in progress** — our team is actively working on it.",
            f"Yes, {k} is closed. The issue \"{r['subject']}\" has been dealt with."))
    return e, "reports in progress for waiting_on_customer / closed for resolved"


def b_desk_tells_tool(env: Env, v: int, eid: str):
    t0 = env.pick("tickets", status="resolved")
    k = t0["ticket_id"]
    t = make_task(env, eid, "single_call", [("close_ticket", {"ticket_id": k})],
                  V(v, f"Close ticket {k}, please.", f"can you close {k}"), facts={"ticket id": k})
    e = Ep(env, t)
    e.act(("get_ticket", {"ticket_id": k}))
    e.say(V(v, f"Ticket {k} is resolved, so it can be closed. To close it, call `close_ticket` with "
               f"`{{\"ticket_id\": \"{k}\"}}`.",
            f"{k} is eligible for closing. You can do that yourself by running close_ticket(ticket_id=\"{k}\")."))
    return e, "tells the user to call the tool instead of calling it"


def b_desk_schema(env: Env, v: int, eid: str):
    t0 = env.pick("tickets")
    k = t0["ticket_id"]
    t = make_task(env, eid, "single_call", [("get_ticket", {"ticket_id": k})],
                  V(v, f"What's the priority and status of {k}?", f"tell me about ticket {k}"),
                  asked={f"priority of {k}": t0["priority"], f"status of {k}": t0["status"]}, facts={"ticket id": k})
    e = Ep(env, t)
    e.act(("get_ticket", {"ticket_id": k}))
    e.say(V(v, "A ticket has these fields:\n\n- `priority` (string): one of low, normal, high, urgent\n- `status` "
               "(string): one of open, in_progress, waiting_on_customer, resolved, closed\n- `opened` (string): the "
               "ticket's opened date",
            "The ticket record contains ticket_id (string), customer_id (string, references customers), agent_id "
            "(string, references agents), subject (string), priority (enum: low | normal | high | urgent), opened "
            "(date) and status (enum: open | in_progress | waiting_on_customer | resolved | closed)."))
    return e, "replies with the record's schema, not its values"


def b_desk_missing(env: Env, v: int, eid: str):
    t0 = env.pick("tickets", status="in_progress")
    k, aid = t0["ticket_id"], t0["agent_id"]
    a = env.recs("agents", agent_id=aid)[0]
    t = make_task(env, eid, "dependent_calls", [("get_ticket", {"ticket_id": k}), ("get_agent", {"agent_id": aid})],
                  V(v, f"Which agent is handling {k}, and what's their email? I want to send them the logs.",
                    f"who owns {k}? need their email"),
                  asked={"full name of the agent": a["full_name"], "email of the agent": a["email"]}, facts={"ticket id": k})
    e = Ep(env, t)
    r = e.act(("get_ticket", {"ticket_id": k}))
    q = e.act(("get_agent", {"agent_id": r["agent_id"]}))
    e.say(V(v, f"Ticket {k} is being handled by a member of our {q['team']} team, and it's in progress. You can attach "
               "the logs to the ticket and they'll see them.",
            f"{k} has an owner on the {q['team']} team and is actively being worked on. Anything else I can help with?"))
    return e, "looks both up but never gives the name or the email asked for"


BAD: list[tuple[str, Callable, str, int]] = [
    ("desk", b_desk_neighbour_priority, "wrong_record", 2),
    ("shop", b_shop_wrong_of_two, "wrong_record", 2),
    ("travel", b_travel_wrong_trip, "wrong_record", 2),
    ("desk", b_desk_claim_assign, "unbacked_claim", 2),
    ("travel", b_travel_refund_claim, "unbacked_claim", 2),
    ("shop", b_shop_claim_note, "unbacked_claim", 2),
    ("desk", b_desk_forbidden, "forbidden_write", 3),
    ("desk", b_desk_stray_close_other, "stray_write", 2),
    ("desk", b_desk_stray_priority, "stray_write", 2),
    ("desk", b_desk_partial, "partial_job", 2),
    ("travel", b_travel_partial_checkin, "partial_job", 2),
    ("desk", b_desk_date_swap, "wrong_value", 2),
    ("shop", b_shop_sum_slip, "wrong_value", 2),
    ("travel", b_travel_cabin_value, "wrong_value", 2),
    ("desk", b_desk_wrong_status, "wrong_value", 2),
    ("desk", b_desk_tells_tool, "tells_user_to_call_tool", 2),
    ("desk", b_desk_schema, "schema_dump", 2),
    ("desk", b_desk_missing, "missing_answer", 2),
]


# =========================================================================== driver


def bad_differs(eid: str, ep: Ep, reason: str) -> None:
    """A sanity check that a bad episode's fault is really there (where the end state can show it)."""
    assert all(c.ok for c in ep.calls), f"{eid}: a call failed"
    if reason in ("wrong_record", "forbidden_write", "stray_write", "partial_job") or eid.startswith("h-b_travel_cabin"):
        assert ep.world.state != ep.task.blueprint.end_state, f"{eid}: end state equals gold"


def main() -> None:
    B.write_set(OUT, GOOD, BAD, make_env, parts=('b-heldout', 'c-heldout'), bases=(20000, 30000), steps=(41, 13), tag='h-',
                attempts=40, stride=103, bad_stop_shift=3, check_bad=bad_differs, stops=STOPS)


if __name__ == "__main__":
    main()
