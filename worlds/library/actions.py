"""The library's verbs: check a book out, renew a loan, bring a book back."""

from __future__ import annotations

import datetime as dt

from worldsmith.worldmodel.packs import ActionError, Db, action, seeder

LOAN_DAYS = 21
MAX_LOANS = 3
MAX_RENEWALS = 2
FINE_PER_DAY = 0.25
MAX_FINE = 10.0
TITLES = (
    "The Quiet Harbor",
    "A Short History of Maps",
    "Winter in Lisbon",
    "The Clockmaker's Daughter",
    "Gardens of the North",
    "Learning Python",
    "The Salt Road",
    "Bridges and Rivers",
    "An Atlas of Birds",
    "The Last Lighthouse",
)


@action(
    collection="loans",
    key=None,
    description=(
        "Check a book out to a member: opens a 21-day loan and takes one copy off the shelf. "
        "Refused when no copy is available, the member is suspended, holds 3 active loans or owes more than 10.00."
    ),
    params={
        "member_id": {"type": "string", "description": "the borrowing member's id, like mbr-1042"},
        "book_id": {"type": "string", "description": "the book's id, like bk-1042"},
    },
    goal="borrow book {book_id} for member {member_id}",
)
def checkout_book(db: Db, member_id: str, book_id: str) -> dict:
    member = db.get("members", member_id)
    book = db.get("books", book_id)
    if member["status"] != "active":
        raise ActionError("policy_violation", f"member {member_id} is suspended and cannot borrow books")
    if member["fines_due"] > MAX_FINE:
        raise ActionError(
            "policy_violation", f"member {member_id} owes {member['fines_due']:.2f} in fines (more than {MAX_FINE:.2f})"
        )
    active = [x for x in db.find("loans", member_id=member_id) if x["status"] in ("active", "overdue")]
    if len(active) >= MAX_LOANS:
        raise ActionError(
            "limit_reached", f"member {member_id} already holds {len(active)} loans (at most {MAX_LOANS})"
        )
    if book["copies_available"] < 1:
        raise ActionError("no_availability", f"no copy of {book['title']!r} ({book_id}) is available")
    db.update("books", book_id, copies_available=book["copies_available"] - 1)
    return db.insert(
        "loans",
        {
            "member_id": member["member_id"],
            "book_id": book["book_id"],
            "checkout_date": db.today.isoformat(),
            "due_date": (db.today + dt.timedelta(days=LOAN_DAYS)).isoformat(),
            "renewals": 0,
            "status": "active",
        },
    )


@action(
    collection="loans",
    key="loan_id",
    description=(
        "Renew an active loan: moves its due date later by 7 to 21 days. Refused for an overdue or returned "
        "loan, a loan renewed twice already, or a suspended member."
    ),
    params={"days": {"type": "integer", "minimum": 7, "maximum": 21, "description": "days to add to the due date"}},
    goal="renew loan {loan_id} for {days} more days",
)
def renew_loan(db: Db, loan_id: str, days: int) -> dict:
    loan = db.get("loans", loan_id)
    if loan["status"] != "active" or db.date(loan["due_date"]) < db.today:
        raise ActionError(
            "policy_violation",
            f"loan {loan_id} is {loan['status'] if loan['status'] != 'active' else 'past due'}"
            ": only an active loan within its due date can be renewed",
        )
    if loan["renewals"] >= MAX_RENEWALS:
        raise ActionError("limit_reached", f"loan {loan_id} was already renewed {loan['renewals']} times")
    member = db.get("members", loan["member_id"])
    if member["status"] != "active":
        raise ActionError("policy_violation", f"member {member['member_id']} is suspended: loans cannot be renewed")
    due = db.date(loan["due_date"]) + dt.timedelta(days=days)
    return db.update("loans", loan_id, due_date=due.isoformat(), renewals=loan["renewals"] + 1)


@action(
    collection="loans",
    key="loan_id",
    description=(
        "Return a borrowed book: closes the loan, puts the copy back on the shelf and, when it comes back "
        "after its due date, adds the late fee (0.25 a day, at most 10.00) to the member's fines."
    ),
    output={
        "type": "object",
        "properties": {
            "loan_id": {"type": "string"},
            "status": {"type": "string"},
            "days_late": {"type": "integer"},
            "late_fee": {"type": "number"},
            "fines_due": {"type": "number"},
        },
    },
    goal="return the book of loan {loan_id}",
)
def return_book(db: Db, loan_id: str) -> dict:
    loan = db.get("loans", loan_id)
    if loan["status"] == "returned":
        raise ActionError("conflict", f"loan {loan_id} was already returned")
    book = db.get("books", loan["book_id"])
    member = db.get("members", loan["member_id"])
    late = max(0, (db.today - db.date(loan["due_date"])).days)
    fee = round(min(MAX_FINE, late * FINE_PER_DAY), 2)
    db.update("loans", loan_id, status="returned")
    db.update("books", book["book_id"], copies_available=book["copies_available"] + 1)
    fines = round(member["fines_due"] + fee, 2)
    if fee:
        db.update("members", member["member_id"], fines_due=fines)
    return {"loan_id": loan["loan_id"], "status": "returned", "days_late": late, "late_fee": fee, "fines_due": fines}


# --------------------------------------------------------------------------- seeding


@seeder("members")
def member_fines(record: dict, db: Db, rng) -> None:
    """Suspended members owe more than the limit; most active ones owe nothing."""
    if record["status"] == "suspended":
        record["fines_due"] = round(rng.uniform(10.5, 30), 2)
    else:
        record["fines_due"] = rng.choice((0.0, 0.0, round(rng.uniform(0.25, 6), 2)))


@seeder("books")
def book_shelf(record: dict, db: Db, rng) -> None:
    record["title"] = rng.choice(TITLES)
    record["isbn"] = f"978-{rng.randint(0, 9)}-{rng.randint(1000, 9999)}-{record['book_id'][-4:]}"
    record["copies_available"] = rng.choice((0, 1, 2, 3, 4))


@seeder("loans")
def loan_dates(record: dict, db: Db, rng) -> None:
    """Active loans are due today or later, overdue ones before today; due = checkout + 21 + 14 per renewal."""
    renewals = rng.randint(0, MAX_RENEWALS)
    term = LOAN_DAYS + 14 * renewals
    if record["status"] == "active":
        checkout = db.today - dt.timedelta(days=rng.randint(0, term - 1))
    else:  # overdue or returned: due before today
        checkout = db.today - dt.timedelta(days=term + rng.randint(1, 30))
    record["renewals"] = renewals
    record["checkout_date"] = checkout.isoformat()
    record["due_date"] = (checkout + dt.timedelta(days=term)).isoformat()
