"""The helpdesk's verbs: assign a ticket, escalate one past its SLA, resolve one."""

from __future__ import annotations

import datetime as dt

from worldsmith.worldmodel.packs import ActionError, Db, action, seeder

SLA_DAYS = {"critical": 1, "high": 2, "medium": 5, "low": 10}
PRIORITIES = ["low", "medium", "high", "critical"]
MAX_ESCALATIONS = 2
MAX_IN_PROGRESS = 5


def _load(db: Db, technician_id: str) -> int:
    return len(db.find("tickets", technician_id=technician_id, status="in_progress"))


@action(
    collection="tickets",
    key="ticket_id",
    description=(
        "Assign a ticket to a technician and start work on it (an open ticket becomes in progress). The technician "
        "must be on shift with fewer than 5 tickets in progress; resolved or closed tickets cannot be assigned."
    ),
    params={"technician_id": {"type": "string", "description": "the technician's id, like tech-1042"}},
    goal="assign ticket {ticket_id} to technician {technician_id}",
)
def assign_ticket(db: Db, ticket_id: str, technician_id: str) -> dict:
    ticket = db.get("tickets", ticket_id)
    tech = db.get("technicians", technician_id)
    if ticket["status"] not in ("open", "in_progress"):
        raise ActionError("policy_violation", f"ticket {ticket_id} is {ticket['status']}: it cannot be assigned")
    if ticket["technician_id"] == tech["technician_id"] and ticket["status"] == "in_progress":
        raise ActionError("conflict", f"ticket {ticket_id} is already with {tech['full_name']}")
    if not tech["on_shift"]:
        raise ActionError("no_availability", f"{tech['full_name']} ({technician_id}) is not on shift")
    if _load(db, tech["technician_id"]) >= MAX_IN_PROGRESS:
        raise ActionError("limit_reached", f"{tech['full_name']} already has {MAX_IN_PROGRESS} tickets in progress")
    return db.update("tickets", ticket_id, technician_id=tech["technician_id"], status="in_progress")


@action(
    collection="tickets",
    key="ticket_id",
    description=(
        "Escalate an open or in-progress ticket that is past its SLA (critical 1 day, high 2, medium 5, low 10, "
        "counted from the day it was opened): its priority rises one step and it goes to the least busy tier 2 "
        "technician on shift in the same team. At most 2 escalations per ticket."
    ),
    goal="escalate ticket {ticket_id}, which is past its SLA",
)
def escalate_ticket(db: Db, ticket_id: str) -> dict:
    ticket = db.get("tickets", ticket_id)
    if ticket["status"] not in ("open", "in_progress"):
        raise ActionError(
            "policy_violation", f"ticket {ticket_id} is {ticket['status']}: only an open ticket can be escalated"
        )
    age = (db.today - db.date(ticket["opened_on"])).days
    sla = SLA_DAYS[ticket["priority"]]
    if age <= sla:
        raise ActionError(
            "policy_violation",
            f"ticket {ticket_id} ({ticket['priority']}) was opened {age} days ago, within its SLA of {sla} days",
        )
    if ticket["escalation_level"] >= MAX_ESCALATIONS:
        raise ActionError(
            "limit_reached", f"ticket {ticket_id} was already escalated {ticket['escalation_level']} times"
        )
    team = db.get("technicians", ticket["technician_id"])["team"]
    seniors = db.find("technicians", team=team, tier="tier_2", on_shift=True)
    if not seniors:
        raise ActionError("no_availability", f"no tier 2 technician of the {team} team is on shift")
    to = min(seniors, key=lambda t: (_load(db, t["technician_id"]), t["technician_id"]))
    priority = PRIORITIES[min(PRIORITIES.index(ticket["priority"]) + 1, len(PRIORITIES) - 1)]
    return db.update(
        "tickets",
        ticket_id,
        priority=priority,
        technician_id=to["technician_id"],
        escalation_level=ticket["escalation_level"] + 1,
    )


@action(
    collection="tickets",
    key="ticket_id",
    description="Mark a ticket in progress as resolved. An open ticket must be assigned and worked on first.",
    goal="resolve ticket {ticket_id}",
)
def resolve_ticket(db: Db, ticket_id: str) -> dict:
    ticket = db.get("tickets", ticket_id)
    if ticket["status"] != "in_progress":
        raise ActionError(
            "policy_violation", f"ticket {ticket_id} is {ticket['status']}: only a ticket in progress can be resolved"
        )
    return db.update("tickets", ticket_id, status="resolved")


# --------------------------------------------------------------------------- seeding


@seeder("technicians")
def technician_shift(record: dict, db: Db, rng) -> None:
    """Most technicians are on shift; the first of each team is a tier 2 on shift, so escalations can land."""
    record["on_shift"] = rng.random() < 0.75
    if record["technician_id"] == db.find("technicians", team=record["team"])[0]["technician_id"]:
        record.update(tier="tier_2", on_shift=True)


@seeder("tickets")
def ticket_age(record: dict, db: Db, rng) -> None:
    """Opened 0 to 14 days ago; escalated 0 to 2 times; an escalated ticket sits with a tier 2 technician."""
    record["opened_on"] = (db.today - dt.timedelta(days=rng.randint(0, 14))).isoformat()
    record["escalation_level"] = rng.choice((0, 0, 1, 2))
    if record["escalation_level"]:
        seniors = [t for t in db.list("technicians") if t["tier"] == "tier_2"]
        record["technician_id"] = rng.choice(seniors)["technician_id"]
