"""The library pack: each action changes exactly what it should on a seeded world and refuses what its
rules forbid with the right error, the state untouched; its seeders keep their invariants. Expected values are
written by hand. `pack` and `kit` come from worlds/conftest.py (pytest collects every pack folder's tests)."""

from __future__ import annotations

import datetime as dt

from worldsmith.worldmodel.state import apply_patch


def test_library_renew_loan(pack, kit):
    p = pack
    s = kit.seeded(p)
    m = kit.put(s, "members", 0, status="active", fines_due=0.0)
    loan = kit.put(s, "loans", 0, member_id=m["member_id"], status="active", due_date="2025-06-10", renewals=0)
    r = kit.call(p, "renew_loan", s, loan_id=loan["loan_id"], days=14)
    assert r.ok and r.result["due_date"] == "2025-06-24"
    assert r.patch == [
        {"op": "replace", "path": "/loans/0/due_date", "value": "2025-06-24"},
        {"op": "replace", "path": "/loans/0/renewals", "value": 1},
    ]
    assert apply_patch(s, r.patch)["loans"][0]["renewals"] == 1

    lid = loan["loan_id"]
    kit.put(s, "loans", 0, renewals=2)
    assert "already renewed 2 times" in kit.refused(p, "renew_loan", s, "limit_reached", loan_id=lid, days=7)
    kit.put(s, "loans", 0, renewals=0, status="overdue")
    kit.refused(p, "renew_loan", s, "policy_violation", loan_id=lid, days=7)
    kit.put(s, "loans", 0, status="active", due_date="2025-05-31")  # past due, not yet marked overdue
    kit.refused(p, "renew_loan", s, "policy_violation", loan_id=lid, days=7)
    kit.put(s, "loans", 0, due_date="2025-06-10")
    kit.put(s, "members", 0, status="suspended")  # the rule spans collections: the member must be active
    assert "suspended" in kit.refused(p, "renew_loan", s, "policy_violation", loan_id=lid, days=7)
    kit.put(s, "members", 0, status="active")
    kit.refused(p, "renew_loan", s, "invalid_value", loan_id=lid, days=30)
    assert kit.refused(p, "renew_loan", s, "not_found", loan_id="ln-1", days=7) == "no loan with loan_id 'ln-1'"
    kit.refused(p, "renew_loan", s, "not_found", days=7)


def test_library_return_book_charges_the_late_fee(pack, kit):
    p = pack
    s = kit.seeded(p)
    m = kit.put(s, "members", 0, fines_due=0.5)
    b = kit.put(s, "books", 0, copies_available=1)
    loan = kit.put(
        s, "loans", 0, member_id=m["member_id"], book_id=b["book_id"], status="active", due_date="2025-05-22"
    )
    r = kit.call(p, "return_book", s, loan_id=loan["loan_id"])
    assert r.ok and r.result == {
        "loan_id": loan["loan_id"],
        "status": "returned",
        "days_late": 10,
        "late_fee": 2.5,
        "fines_due": 3.0,
    }
    assert r.patch == [
        {"op": "replace", "path": "/members/0/fines_due", "value": 3.0},
        {"op": "replace", "path": "/books/0/copies_available", "value": 2},
        {"op": "replace", "path": "/loans/0/status", "value": "returned"},
    ]
    kit.put(s, "loans", 0, due_date="2025-06-05")  # on time: no fee, the member is not touched
    r = kit.call(p, "return_book", s, loan_id=loan["loan_id"])
    assert r.result["late_fee"] == 0 and [op["path"] for op in r.patch] == [
        "/books/0/copies_available",
        "/loans/0/status",
    ]
    kit.put(s, "loans", 0, status="returned")
    kit.refused(p, "return_book", s, "conflict", loan_id=loan["loan_id"])


def test_library_checkout_book(pack, kit):
    p = pack
    s = kit.seeded(p)
    m = kit.put(s, "members", 0, status="active", fines_due=0.0)
    other = s["members"][1]["member_id"]
    for loan in s["loans"]:
        loan["member_id"] = other
    b = kit.put(s, "books", 0, copies_available=2)
    new_id = kit.next_id(s, "loans", "ln")
    r = kit.call(p, "checkout_book", s, member_id=m["member_id"], book_id=b["book_id"])
    record = {
        "loan_id": new_id,
        "member_id": m["member_id"],
        "book_id": b["book_id"],
        "checkout_date": "2025-06-01",
        "due_date": "2025-06-22",
        "renewals": 0,
        "status": "active",
    }
    assert r.ok and r.result == record
    assert r.patch == [
        {"op": "replace", "path": "/books/0/copies_available", "value": 1},
        {"op": "add", "path": "/loans/-", "value": record},
    ]
    args = {"member_id": m["member_id"], "book_id": b["book_id"]}
    kit.put(s, "books", 0, copies_available=0)
    kit.refused(p, "checkout_book", s, "no_availability", **args)
    kit.put(s, "books", 0, copies_available=2)
    kit.put(s, "members", 0, fines_due=12.0)
    assert "owes 12.00" in kit.refused(p, "checkout_book", s, "policy_violation", **args)
    kit.put(s, "members", 0, fines_due=0.0, status="suspended")
    kit.refused(p, "checkout_book", s, "policy_violation", **args)
    kit.put(s, "members", 0, status="active")
    for i in range(3):
        kit.put(s, "loans", i, member_id=m["member_id"], status="active")
    kit.refused(p, "checkout_book", s, "limit_reached", **args)
    kit.refused(p, "checkout_book", s, "not_found", member_id=m["member_id"], book_id="bk-1")


def test_library_seeders_hold_their_invariants(pack, kit):
    today = kit.day(kit.TODAY)
    for seed in kit.SEEDS:
        lib = kit.seeded(pack, seed)
        members = {m["member_id"]: m for m in lib["members"]}
        assert all((m["fines_due"] > 10) == (m["status"] == "suspended") for m in members.values())
        for loan in lib["loans"]:
            assert 0 <= loan["renewals"] <= 2
            assert kit.day(loan["due_date"]) - kit.day(loan["checkout_date"]) == dt.timedelta(
                days=21 + 14 * loan["renewals"]
            )
            assert (kit.day(loan["due_date"]) >= today) == (loan["status"] == "active")
