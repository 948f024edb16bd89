"""Domain packs (worlds/<name>/): every pack loads and validates; each action changes exactly what
it should on a seeded world and refuses what its rules forbid with the right error, the state
untouched; the seeders keep their invariants; any world saves as a pack and loads again; bad
input names its file and key. Expected values are written by hand."""

from __future__ import annotations

import copy
import datetime as dt
import shutil
from pathlib import Path

import pytest

from worldsmith.records import Domain, ToolSpec
from worldsmith.tools.evolve import bound_spec
from worldsmith.worldmodel import packs as packs_mod
from worldsmith.worldmodel.bindings import plan_bindings
from worldsmith.worldmodel.execute import execute
from worldsmith.worldmodel.packs import PackError, load_pack, load_packs, run_operation, save_pack
from worldsmith.worldmodel.schema import derive_world, world_problem
from worldsmith.worldmodel.seed import seed_state
from worldsmith.worldmodel.state import apply_patch

ROOT = Path(__file__).resolve().parent.parent
WORLDS = ROOT / "worlds"
TODAY = "2025-06-01"
NAMES = ["airline", "bank", "clinic", "helpdesk", "library", "shop"]
SEEDS = range(8)


@pytest.fixture(scope="module")
def packs():
    return {p.name: p for p in load_packs(WORLDS, today=TODAY)}


def seeded(pack, seed: int = 3) -> dict:
    return seed_state(pack.world, seed, pack.records)


def call(pack, operation: str, state: dict, **arguments):
    """Run an operation tool through the executor; the state must come back untouched."""
    tool = next(t for t in pack.tools if t.binding.operation == operation)
    before = copy.deepcopy(state)
    result = execute(pack.world, tool.binding, state, arguments)
    assert state == before
    if not result.ok:
        assert result.patch == []
    return result


def refused(pack, operation: str, state: dict, code: str, **arguments) -> str:
    result = call(pack, operation, state, **arguments)
    assert not result.ok and result.error[0] == code, result.error
    return result.error[1]


def put(state: dict, collection: str, i: int, **fields) -> dict:
    state[collection][i].update(fields)
    return state[collection][i]


def next_id(state: dict, collection: str, prefix: str) -> str:
    return f"{prefix}-{max(int(next(iter(r.values())).rsplit('-', 1)[1]) for r in state[collection]) + 1}"


# --------------------------------------------------------------------------- every pack


def test_all_packs_load_and_validate(packs):
    assert sorted(packs) == NAMES
    for name, p in packs.items():
        w = p.world
        assert world_problem(w) is None
        assert (w.source, w.pack, w.today) == ("pack", name, TODAY)
        assert w.pack_dir == str((WORLDS / name).resolve())
        assert w.world_id == packs_mod.world_id_for_pack(name) and w.world_id.startswith("wld_")
        assert 2 <= len(w.collections) <= 4
        assert any(f.ref for c in w.collections for f in c.fields), name
        assert len(w.policy) > 100
        assert 4 <= len(p.tools) <= 8
        actions = {t.binding.action for t in p.tools}
        assert {"get", "list", "custom"} <= actions, name
        ops = [t for t in p.tools if t.binding.operation]
        assert len(ops) >= 2 and all(t.binding.executed and t.extra["goal"] for t in ops)
        for t in ops:  # tight schemas: every parameter typed, the goal names them all
            assert t.input_schema["additionalProperties"] is False
            assert all(prop.get("type") for prop in t.input_schema["properties"].values())
            assert all("{" + param + "}" in t.extra["goal"] for param in t.input_schema["properties"])
        checks = [r for r in w.rules if r.kind == "check"]
        assert checks and all(r.action == "custom" for r in checks)
        assert any(r.kind == "transition" for r in w.rules)
        assert all(t.source == "pack" and t.domain == w.domain for t in p.tools)


def test_loading_is_deterministic(packs):
    again = load_pack(WORLDS / "library", TODAY)
    assert [t.tool_id for t in again.tools] == [t.tool_id for t in packs["library"].tools]
    assert again.world.rules == packs["library"].world.rules


def test_load_packs_picks_and_refuses_unknown_names():
    assert [p.name for p in load_packs(WORLDS, names=["shop", "bank"], today=TODAY)] == ["bank", "shop"]
    with pytest.raises(PackError, match=r"no pack 'zoo' \(there are: airline, bank, clinic, helpdesk, library, shop\)"):
        load_packs(WORLDS, names=["zoo"], today=TODAY)


def test_seeding_is_deterministic_and_plain_worlds_skip_the_hook(packs, monkeypatch):
    w = packs["airline"].world
    assert seed_state(w, 7, (4, 6)) == seed_state(w, 7, (4, 6))
    monkeypatch.setattr(packs_mod, "finish_seed", lambda *a: pytest.fail("a world without a pack has no seeders"))
    plain = w.model_copy(update={"pack": None, "pack_dir": None, "source": "llm"})
    assert seed_state(plain, 7) == seed_state(plain, 7)


# --------------------------------------------------------------------------- library


def test_library_renew_loan(packs):
    p = packs["library"]
    s = seeded(p)
    m = put(s, "members", 0, status="active", fines_due=0.0)
    loan = put(s, "loans", 0, member_id=m["member_id"], status="active", due_date="2025-06-10", renewals=0)
    r = call(p, "renew_loan", s, loan_id=loan["loan_id"], days=14)
    assert r.ok and r.result["due_date"] == "2025-06-24"
    assert r.patch == [
        {"op": "replace", "path": "/loans/0/due_date", "value": "2025-06-24"},
        {"op": "replace", "path": "/loans/0/renewals", "value": 1},
    ]
    assert apply_patch(s, r.patch)["loans"][0]["renewals"] == 1

    lid = loan["loan_id"]
    put(s, "loans", 0, renewals=2)
    assert "already renewed 2 times" in refused(p, "renew_loan", s, "limit_reached", loan_id=lid, days=7)
    put(s, "loans", 0, renewals=0, status="overdue")
    refused(p, "renew_loan", s, "policy_violation", loan_id=lid, days=7)
    put(s, "loans", 0, status="active", due_date="2025-05-31")  # past due, not yet marked overdue
    refused(p, "renew_loan", s, "policy_violation", loan_id=lid, days=7)
    put(s, "loans", 0, due_date="2025-06-10")
    put(s, "members", 0, status="suspended")  # the rule spans collections: the member must be active
    assert "suspended" in refused(p, "renew_loan", s, "policy_violation", loan_id=lid, days=7)
    put(s, "members", 0, status="active")
    refused(p, "renew_loan", s, "invalid_value", loan_id=lid, days=30)
    assert refused(p, "renew_loan", s, "not_found", loan_id="ln-1", days=7) == "no loan with loan_id 'ln-1'"
    refused(p, "renew_loan", s, "not_found", days=7)


def test_library_return_book_charges_the_late_fee(packs):
    p = packs["library"]
    s = seeded(p)
    m = put(s, "members", 0, fines_due=0.5)
    b = put(s, "books", 0, copies_available=1)
    loan = put(s, "loans", 0, member_id=m["member_id"], book_id=b["book_id"], status="active", due_date="2025-05-22")
    r = call(p, "return_book", s, loan_id=loan["loan_id"])
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
    put(s, "loans", 0, due_date="2025-06-05")  # on time: no fee, the member is not touched
    r = call(p, "return_book", s, loan_id=loan["loan_id"])
    assert r.result["late_fee"] == 0 and [op["path"] for op in r.patch] == [
        "/books/0/copies_available",
        "/loans/0/status",
    ]
    put(s, "loans", 0, status="returned")
    refused(p, "return_book", s, "conflict", loan_id=loan["loan_id"])


def test_library_checkout_book(packs):
    p = packs["library"]
    s = seeded(p)
    m = put(s, "members", 0, status="active", fines_due=0.0)
    other = s["members"][1]["member_id"]
    for loan in s["loans"]:
        loan["member_id"] = other
    b = put(s, "books", 0, copies_available=2)
    new_id = next_id(s, "loans", "ln")
    r = call(p, "checkout_book", s, member_id=m["member_id"], book_id=b["book_id"])
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
    put(s, "books", 0, copies_available=0)
    refused(p, "checkout_book", s, "no_availability", **args)
    put(s, "books", 0, copies_available=2)
    put(s, "members", 0, fines_due=12.0)
    assert "owes 12.00" in refused(p, "checkout_book", s, "policy_violation", **args)
    put(s, "members", 0, fines_due=0.0, status="suspended")
    refused(p, "checkout_book", s, "policy_violation", **args)
    put(s, "members", 0, status="active")
    for i in range(3):
        put(s, "loans", i, member_id=m["member_id"], status="active")
    refused(p, "checkout_book", s, "limit_reached", **args)
    refused(p, "checkout_book", s, "not_found", member_id=m["member_id"], book_id="bk-1")


# --------------------------------------------------------------------------- shop


def _shop(packs):
    p = packs["shop"]
    s = seeded(p)
    o = put(s, "orders", 0, status="delivered", amount=100.0, placed_on="2025-05-20")
    for r in s["refunds"]:  # the other refunds are of another order
        r["order_id"] = s["orders"][1]["order_id"]
    put(s, "refunds", 0, order_id=o["order_id"], amount=30.0, status="issued")
    return p, s, o


def test_shop_refund_order_is_bounded_by_the_order_amount(packs):
    p, s, o = _shop(packs)
    new_id = next_id(s, "refunds", "rfd")
    r = call(p, "refund_order", s, order_id=o["order_id"], amount=70, reason="damaged")
    record = {
        "refund_id": new_id,
        "order_id": o["order_id"],
        "amount": 70.0,
        "reason": "damaged",
        "requested_on": "2025-06-01",
        "status": "issued",
    }
    assert r.ok and r.result == record
    assert r.patch == [{"op": "add", "path": "/refunds/-", "value": record}]
    # 30 issued + 71 > 100: the rule spans refunds and their order
    msg = refused(p, "refund_order", s, "policy_violation", order_id=o["order_id"], amount=71, reason="damaged")
    assert "at most 70.00 can still be refunded" in msg
    put(s, "refunds", 0, status="rejected")  # a rejected refund does not count
    assert call(p, "refund_order", s, order_id=o["order_id"], amount=100, reason="wrong_item").ok
    put(s, "orders", 0, placed_on="2025-04-20")  # 42 days ago: past the window
    assert "past the 30-day" in refused(
        p, "refund_order", s, "policy_violation", order_id=o["order_id"], amount=5, reason="damaged"
    )
    put(s, "orders", 0, placed_on="2025-05-20", status="shipped")
    refused(p, "refund_order", s, "policy_violation", order_id=o["order_id"], amount=5, reason="damaged")
    refused(p, "refund_order", s, "invalid_value", order_id=o["order_id"], amount=5, reason="changed_my_mind")


def test_shop_approve_refund(packs):
    p, s, o = _shop(packs)
    put(s, "refunds", 1, order_id=o["order_id"], amount=60.0, status="requested")
    rid = s["refunds"][1]["refund_id"]
    r = call(p, "approve_refund", s, refund_id=rid)
    assert r.ok and r.patch == [{"op": "replace", "path": "/refunds/1/status", "value": "issued"}]
    put(s, "refunds", 1, amount=70.01)  # 30 issued + 70.01 > 100
    assert "would exceed" in refused(p, "approve_refund", s, "policy_violation", refund_id=rid)
    put(s, "refunds", 1, amount=10.0, status="rejected")
    refused(p, "approve_refund", s, "policy_violation", refund_id=rid)


def test_shop_cancel_order(packs):
    p, s, o = _shop(packs)
    put(s, "orders", 2, status="pending")
    r = call(p, "cancel_order", s, order_id=s["orders"][2]["order_id"])
    assert r.ok and r.patch == [{"op": "replace", "path": "/orders/2/status", "value": "cancelled"}]
    put(s, "orders", 2, status="shipped")
    assert "only a pending order" in refused(
        p, "cancel_order", s, "policy_violation", order_id=s["orders"][2]["order_id"]
    )


# --------------------------------------------------------------------------- airline


def _airline(packs):
    p = packs["airline"]
    s = seeded(p)
    common = {"origin": "Boston", "destination": "Chicago", "status": "scheduled", "fare": 100.0}
    put(s, "flights", 0, departure="2025-06-10T08:00:00", seats_available=5, **common)
    put(s, "flights", 1, departure="2025-06-12T18:30:00", seats_available=1, **{**common, "fare": 140.0})
    put(s, "passengers", 0, loyalty_tier="basic")
    f0, pax = s["flights"][0]["flight_id"], s["passengers"][0]["passenger_id"]
    for b in s["bookings"]:  # no booking of the passenger, none on the two flights
        b["passenger_id"] = s["passengers"][1]["passenger_id"]
        b["flight_id"] = s["flights"][2]["flight_id"]
    put(s, "bookings", 0, passenger_id=pax, flight_id=f0, cabin="economy", seat="10A", amount_paid=100.0)
    put(s, "bookings", 0, status="confirmed")
    return p, s


def test_airline_book_flight_needs_an_available_seat(packs):
    p, s = _airline(packs)
    f1, pax = s["flights"][1]["flight_id"], s["passengers"][0]["passenger_id"]
    new_id = next_id(s, "bookings", "bkg")
    r = call(p, "book_flight", s, passenger_id=pax, flight_id=f1, cabin="business")
    record = {
        "booking_id": new_id,
        "passenger_id": pax,
        "flight_id": f1,
        "cabin": "business",
        "seat": "1A",
        "amount_paid": 350.0,
        "status": "confirmed",
    }
    assert r.ok and r.result == record
    assert r.patch == [
        {"op": "replace", "path": "/flights/1/seats_available", "value": 0},
        {"op": "add", "path": "/bookings/-", "value": record},
    ]
    after = apply_patch(s, r.patch)
    refused(p, "book_flight", after, "no_availability", passenger_id=pax, flight_id=f1, cabin="economy")
    f0 = s["flights"][0]["flight_id"]
    assert "already booked" in refused(p, "book_flight", s, "conflict", passenger_id=pax, flight_id=f0, cabin="economy")
    put(s, "flights", 1, status="cancelled")
    refused(p, "book_flight", s, "policy_violation", passenger_id=pax, flight_id=f1, cabin="economy")
    put(s, "flights", 1, status="scheduled", departure="2025-06-01T20:00:00")
    refused(p, "book_flight", s, "policy_violation", passenger_id=pax, flight_id=f1, cabin="economy")


def test_airline_change_flight_keeps_the_route(packs):
    p, s = _airline(packs)
    bid, f1 = s["bookings"][0]["booking_id"], s["flights"][1]["flight_id"]
    r = call(p, "change_flight", s, booking_id=bid, new_flight_id=f1)
    assert r.ok and r.result == {
        "booking_id": bid,
        "flight_id": f1,
        "seat": "10A",
        "amount_paid": 140.0,
        "fare_difference": 40.0,
    }
    assert r.patch == [
        {"op": "replace", "path": "/flights/0/seats_available", "value": 6},
        {"op": "replace", "path": "/flights/1/seats_available", "value": 0},
        {"op": "replace", "path": "/bookings/0/flight_id", "value": f1},
        {"op": "replace", "path": "/bookings/0/amount_paid", "value": 140.0},
    ]
    put(s, "flights", 1, destination="Denver")
    assert "not the booking's route" in refused(
        p, "change_flight", s, "policy_violation", booking_id=bid, new_flight_id=f1
    )
    put(s, "flights", 1, destination="Chicago", seats_available=0)
    refused(p, "change_flight", s, "no_availability", booking_id=bid, new_flight_id=f1)
    put(s, "bookings", 0, status="checked_in")
    refused(p, "change_flight", s, "policy_violation", booking_id=bid, new_flight_id=f1)


def test_airline_cancel_booking_refund_depends_on_the_tier(packs):
    p, s = _airline(packs)
    bid = s["bookings"][0]["booking_id"]
    r = call(p, "cancel_booking", s, booking_id=bid)
    assert r.ok and r.result == {"booking_id": bid, "status": "cancelled", "refund": 75.0}
    assert r.patch == [
        {"op": "replace", "path": "/flights/0/seats_available", "value": 6},
        {"op": "replace", "path": "/bookings/0/status", "value": "cancelled"},
    ]
    put(s, "passengers", 0, loyalty_tier="gold")
    assert call(p, "cancel_booking", s, booking_id=bid).result["refund"] == 100.0
    put(s, "flights", 0, departure="2025-06-01T23:00:00")
    assert "too late" in refused(p, "cancel_booking", s, "policy_violation", booking_id=bid)
    put(s, "flights", 0, departure="2025-06-10T08:00:00")
    put(s, "bookings", 0, status="checked_in")
    refused(p, "cancel_booking", s, "policy_violation", booking_id=bid)


# --------------------------------------------------------------------------- helpdesk


def _helpdesk(packs):
    p = packs["helpdesk"]
    s = seeded(p)
    for i, (team, tier) in enumerate([("network", "tier_1"), ("network", "tier_2"), ("network", "tier_2")]):
        put(s, "technicians", i, team=team, tier=tier, on_shift=True)
    for t in s["technicians"][3:]:
        t.update(team="identity", tier="tier_1")
    t0, t1 = s["technicians"][0]["technician_id"], s["technicians"][1]["technician_id"]
    for t in s["tickets"]:  # nothing in progress but what a test puts there
        t.update(status="resolved", technician_id=t0)
    put(s, "tickets", 1, status="in_progress", technician_id=t1)  # tech 1 is busier than tech 2
    put(s, "tickets", 0, status="open", priority="high", opened_on="2025-05-28", technician_id=t0, escalation_level=0)
    return p, s


def test_helpdesk_escalate_ticket_needs_an_open_ticket_past_its_sla(packs):
    p, s = _helpdesk(packs)
    tid, t2 = s["tickets"][0]["ticket_id"], s["technicians"][2]["technician_id"]
    r = call(p, "escalate_ticket", s, ticket_id=tid)
    assert r.ok and (r.result["priority"], r.result["technician_id"], r.result["escalation_level"]) == (
        "critical",
        t2,
        1,
    )
    assert r.patch == [
        {"op": "replace", "path": "/tickets/0/priority", "value": "critical"},
        {"op": "replace", "path": "/tickets/0/technician_id", "value": t2},
        {"op": "replace", "path": "/tickets/0/escalation_level", "value": 1},
    ]
    put(s, "tickets", 0, opened_on="2025-05-30")  # high: 2 days of SLA, opened 2 days ago
    assert "within its SLA of 2 days" in refused(p, "escalate_ticket", s, "policy_violation", ticket_id=tid)
    put(s, "tickets", 0, opened_on="2025-05-28", status="resolved")
    refused(p, "escalate_ticket", s, "policy_violation", ticket_id=tid)
    put(s, "tickets", 0, status="open", escalation_level=2)
    refused(p, "escalate_ticket", s, "limit_reached", ticket_id=tid)
    put(s, "tickets", 0, escalation_level=0)
    for i in (1, 2):
        put(s, "technicians", i, on_shift=False)
    refused(p, "escalate_ticket", s, "no_availability", ticket_id=tid)


def test_helpdesk_assign_and_resolve(packs):
    p, s = _helpdesk(packs)
    tid, t2 = s["tickets"][0]["ticket_id"], s["technicians"][2]["technician_id"]
    r = call(p, "assign_ticket", s, ticket_id=tid, technician_id=t2)
    assert r.ok and r.patch == [
        {"op": "replace", "path": "/tickets/0/technician_id", "value": t2},
        {"op": "replace", "path": "/tickets/0/status", "value": "in_progress"},
    ]
    put(s, "technicians", 2, on_shift=False)
    refused(p, "assign_ticket", s, "no_availability", ticket_id=tid, technician_id=t2)
    put(s, "technicians", 2, on_shift=True)
    for i in range(1, 6):  # five tickets in progress with tech 2
        s["tickets"].append({**s["tickets"][1], "ticket_id": f"tkt-{9000 + i}", "technician_id": t2})
    refused(p, "assign_ticket", s, "limit_reached", ticket_id=tid, technician_id=t2)
    put(s, "tickets", 0, status="closed")
    refused(p, "assign_ticket", s, "policy_violation", ticket_id=tid, technician_id=t2)

    busy = s["tickets"][1]["ticket_id"]
    r = call(p, "resolve_ticket", s, ticket_id=busy)
    assert r.ok and r.patch == [{"op": "replace", "path": "/tickets/1/status", "value": "resolved"}]
    put(s, "tickets", 1, status="open")
    refused(p, "resolve_ticket", s, "policy_violation", ticket_id=busy)


# --------------------------------------------------------------------------- clinic


def _clinic(packs):
    p = packs["clinic"]
    s = seeded(p)
    put(s, "patients", 0, no_shows=0)
    d = s["doctors"][0]["doctor_id"]
    for a in s["appointments"]:  # the doctor's only live appointment is the first
        a.update(doctor_id=s["doctors"][1]["doctor_id"])
    put(s, "appointments", 0, doctor_id=d, patient_id=s["patients"][0]["patient_id"], date="2025-06-05")
    put(s, "appointments", 0, time="10:00", status="scheduled")
    return p, s, d


def test_clinic_book_appointment_needs_a_free_slot(packs):
    p, s, d = _clinic(packs)
    pat = s["patients"][0]["patient_id"]
    new_id = next_id(s, "appointments", "apt")
    r = call(
        p, "book_appointment", s, patient_id=pat, doctor_id=d, date="2025-06-05", time="10:30", reason="vaccination"
    )
    record = {
        "appointment_id": new_id,
        "patient_id": pat,
        "doctor_id": d,
        "date": "2025-06-05",
        "time": "10:30",
        "reason": "vaccination",
        "status": "scheduled",
    }
    assert r.ok and r.result == record and r.patch == [{"op": "add", "path": "/appointments/-", "value": record}]
    args = {"patient_id": pat, "doctor_id": d, "reason": "vaccination"}
    assert "already booked on 2025-06-05 at 10:00" in refused(
        p, "book_appointment", s, "no_availability", date="2025-06-05", time="10:00", **args
    )
    refused(p, "book_appointment", s, "policy_violation", date="2025-06-01", time="11:00", **args)
    refused(p, "book_appointment", s, "invalid_value", date="2025-06-05", time="10:15", **args)
    refused(p, "book_appointment", s, "invalid_value", date="next friday", time="11:00", **args)
    put(s, "patients", 0, no_shows=3)
    refused(p, "book_appointment", s, "policy_violation", date="2025-06-05", time="11:00", **args)
    put(s, "patients", 0, no_shows=0)
    put(s, "appointments", 0, status="cancelled")  # a cancelled appointment frees its slot
    assert call(p, "book_appointment", s, date="2025-06-05", time="10:00", **args).ok


def test_clinic_reschedule_and_cancel(packs):
    p, s, d = _clinic(packs)
    aid = s["appointments"][0]["appointment_id"]
    r = call(p, "reschedule_appointment", s, appointment_id=aid, date="2025-06-06", time="09:30")
    assert r.ok and r.patch == [
        {"op": "replace", "path": "/appointments/0/date", "value": "2025-06-06"},
        {"op": "replace", "path": "/appointments/0/time", "value": "09:30"},
    ]
    put(s, "appointments", 1, doctor_id=d, date="2025-06-06", time="09:30", status="checked_in")
    refused(p, "reschedule_appointment", s, "no_availability", appointment_id=aid, date="2025-06-06", time="09:30")
    r = call(p, "cancel_appointment", s, appointment_id=aid)
    assert r.ok and r.patch == [{"op": "replace", "path": "/appointments/0/status", "value": "cancelled"}]
    put(s, "appointments", 0, date="2025-06-01")  # today: too late to move or cancel
    assert "the day before" in refused(p, "cancel_appointment", s, "policy_violation", appointment_id=aid)
    refused(p, "reschedule_appointment", s, "policy_violation", appointment_id=aid, date="2025-06-06", time="11:00")
    put(s, "appointments", 0, date="2025-06-05", status="completed")
    refused(p, "cancel_appointment", s, "policy_violation", appointment_id=aid)


# --------------------------------------------------------------------------- bank


def _bank(packs):
    p = packs["bank"]
    s = seeded(p)
    put(s, "accounts", 0, status="active", balance=1000.0)
    put(s, "accounts", 1, status="active", balance=50.0)
    for t in s["transactions"]:
        t.update(posted_on="2025-05-01")
    return p, s


def test_bank_transfer_funds(packs):
    p, s = _bank(packs)
    a0, a1 = s["accounts"][0]["account_id"], s["accounts"][1]["account_id"]
    new_id = next_id(s, "transactions", "txn")
    r = call(p, "transfer_funds", s, account_id=a0, to_account_id=a1, amount=250.5)
    record = {
        "transaction_id": new_id,
        "account_id": a0,
        "card_id": None,
        "kind": "transfer",
        "merchant": f"Transfer to {a1}",
        "amount": 250.5,
        "posted_on": "2025-06-01",
        "status": "posted",
    }
    assert r.ok and r.result == record
    assert r.patch == [
        {"op": "replace", "path": "/accounts/0/balance", "value": 749.5},
        {"op": "replace", "path": "/accounts/1/balance", "value": 300.5},
        {"op": "add", "path": "/transactions/-", "value": record},
    ]
    assert "holds 50.00" in refused(
        p, "transfer_funds", s, "insufficient_funds", account_id=a1, to_account_id=a0, amount=60
    )
    put(s, "accounts", 0, balance=5000.0)
    after = apply_patch(s, call(p, "transfer_funds", s, account_id=a0, to_account_id=a1, amount=2000).patch)
    refused(p, "transfer_funds", after, "limit_reached", account_id=a0, to_account_id=a1, amount=600)
    put(s, "accounts", 1, status="frozen")
    refused(p, "transfer_funds", s, "policy_violation", account_id=a0, to_account_id=a1, amount=10)
    refused(p, "transfer_funds", s, "invalid_value", account_id=a0, to_account_id=a0, amount=10)
    refused(p, "transfer_funds", s, "invalid_value", account_id=a0, to_account_id=a1, amount=0)


def test_bank_block_card_and_dispute(packs):
    p, s = _bank(packs)
    a0 = s["accounts"][0]["account_id"]
    card = put(s, "cards", 0, account_id=a0, status="active", last_four="4242")
    r = call(p, "block_card", s, card_id=card["card_id"], reason="stolen")
    assert r.ok and r.patch == [{"op": "replace", "path": "/cards/0/status", "value": "blocked"}]
    put(s, "accounts", 0, status="closed")
    refused(p, "block_card", s, "policy_violation", card_id=card["card_id"], reason="lost")
    put(s, "cards", 0, status="blocked")
    assert refused(p, "block_card", s, "conflict", card_id=card["card_id"], reason="lost") == (
        "card ending 4242 is already blocked"
    )

    put(s, "accounts", 0, status="active")
    for t in s["transactions"]:
        t.update(account_id=s["accounts"][1]["account_id"], status="reversed")
    tx = put(s, "transactions", 0, account_id=a0, card_id=card["card_id"], kind="card_payment", status="posted")
    put(s, "transactions", 0, posted_on="2025-04-10")  # 52 days ago
    r = call(p, "dispute_transaction", s, transaction_id=tx["transaction_id"], reason="not_recognized")
    assert r.ok and r.patch == [{"op": "replace", "path": "/transactions/0/status", "value": "disputed"}]
    put(s, "transactions", 0, posted_on="2025-03-31")  # 62 days ago
    refused(
        p, "dispute_transaction", s, "policy_violation", transaction_id=tx["transaction_id"], reason="duplicate_charge"
    )
    put(s, "transactions", 0, posted_on="2025-05-31")
    for i in (1, 2, 3):  # three open disputes on the account already
        put(s, "transactions", i, account_id=a0, status="disputed")
    refused(
        p, "dispute_transaction", s, "limit_reached", transaction_id=tx["transaction_id"], reason="duplicate_charge"
    )
    put(s, "transactions", 0, kind="transfer")
    refused(
        p, "dispute_transaction", s, "policy_violation", transaction_id=tx["transaction_id"], reason="duplicate_charge"
    )


# --------------------------------------------------------------------------- seeders


def _d(text: str) -> dt.date:
    return dt.date.fromisoformat(text[:10])


def test_seeders_hold_their_invariants(packs):
    today = _d(TODAY)
    for seed in SEEDS:
        lib = seeded(packs["library"], seed)
        members = {m["member_id"]: m for m in lib["members"]}
        assert all((m["fines_due"] > 10) == (m["status"] == "suspended") for m in members.values())
        for loan in lib["loans"]:
            assert 0 <= loan["renewals"] <= 2
            assert _d(loan["due_date"]) - _d(loan["checkout_date"]) == dt.timedelta(days=21 + 14 * loan["renewals"])
            assert (_d(loan["due_date"]) >= today) == (loan["status"] == "active")

        shop = seeded(packs["shop"], seed)
        orders = {o["order_id"]: o for o in shop["orders"]}
        for oid, o in orders.items():
            refunds = [r for r in shop["refunds"] if r["order_id"] == oid]
            assert sum(r["amount"] for r in refunds) <= o["amount"]
            assert all(o["status"] == "delivered" and _d(r["requested_on"]) >= _d(o["placed_on"]) for r in refunds)

        air = seeded(packs["airline"], seed)
        flights = {f["flight_id"]: f for f in air["flights"]}
        assert all(_d(f["departure"]) > today for f in flights.values() if f["status"] == "scheduled")
        assert all(_d(f["departure"]) < today for f in flights.values() if f["status"] == "departed")
        for b in air["bookings"]:
            f = flights[b["flight_id"]]
            assert b["amount_paid"] == f["fare"] * (2.5 if b["cabin"] == "business" else 1)
            assert b["status"] != "confirmed" or f["status"] == "scheduled"

        desk = seeded(packs["helpdesk"], seed)
        techs = {t["technician_id"]: t for t in desk["technicians"]}
        for team in {t["team"] for t in techs.values()}:
            assert any(t["team"] == team and t["tier"] == "tier_2" and t["on_shift"] for t in techs.values())
        for t in desk["tickets"]:
            assert 0 <= (today - _d(t["opened_on"])).days <= 14 and 0 <= t["escalation_level"] <= 2
            assert not t["escalation_level"] or techs[t["technician_id"]]["tier"] == "tier_2"

        clinic = seeded(packs["clinic"], seed)
        live = [a for a in clinic["appointments"] if a["status"] in ("scheduled", "checked_in")]
        slots = [(a["doctor_id"], a["date"], a["time"]) for a in live]
        assert len(slots) == len(set(slots))
        for a in clinic["appointments"]:
            assert a["time"][3:] in ("00", "30") and "09:00" <= a["time"] <= "16:30"
            if a["status"] in ("completed", "no_show"):
                assert _d(a["date"]) < today
            if a["status"] in ("scheduled", "checked_in"):
                assert _d(a["date"]) >= today

        bank = seeded(packs["bank"], seed)
        cards = {c["card_id"]: c for c in bank["cards"]}
        assert all(a["balance"] == 0 for a in bank["accounts"] if a["status"] == "closed")
        for t in bank["transactions"]:
            if t["kind"] == "card_payment":
                assert cards[t["card_id"]]["account_id"] == t["account_id"]
            else:
                assert t["card_id"] is None and t["status"] == "posted"
            assert t["status"] == "posted" or (today - _d(t["posted_on"])).days <= 60


# --------------------------------------------------------------------------- save and load


def _comparable(tool: ToolSpec) -> tuple:
    b = tool.binding.model_dump(exclude={"world_id"})
    return tool.name, tool.description, tool.input_schema, tool.output_schema, tool.annotations, b


@pytest.mark.parametrize("name", NAMES)
def test_save_pack_round_trips_a_pack(packs, name, tmp_path):
    p = packs[name]
    folder = save_pack(p.world, p.tools, tmp_path / name)
    assert (folder / "actions.py").read_text() == (WORLDS / name / "actions.py").read_text()
    again = load_pack(folder, TODAY)
    assert again.world.collections == p.world.collections
    assert again.world.world_id == p.world.world_id  # the same name: the same world
    assert [(r.kind, r.collection, r.text) for r in again.world.rules] == [
        (r.kind, r.collection, r.text) for r in p.world.rules
    ]
    assert (again.world.policy, again.world.domain, again.world.description) == (
        p.world.policy,
        p.world.domain,
        p.world.description,
    )
    assert [_comparable(t) for t in again.tools] == [_comparable(t) for t in p.tools]
    s = seeded(again)
    op = next(t for t in again.tools if t.binding.operation)
    key = op.binding.key_param
    if key:  # the copied actions run from the new folder
        assert run_operation(again.world, op.binding, s, {key: "nope-1"}).error[0] in ("not_found", "invalid_value")


def test_any_world_saves_as_an_editable_pack(tmp_path):
    domain = Domain(
        domain_id="dom_x",
        category="Retail",
        name="Bike rentals",
        description="A bike shop that rents bikes to customers.",
        entities=["customer", "bike", "rental"],
    )
    world = derive_world(domain, TODAY)
    tools = [
        bound_spec(world, b, f"tool_{i}", f"Tool {i}.", request_id="r", named_by="code")
        for i, b in enumerate(plan_bindings(world, 6))
    ]
    custom_binding = tools[0].binding.model_copy(update={"action": "custom"})
    custom = ToolSpec(
        tool_id="tool_custom",
        name="extend_rental",
        description="Extend a rental by some days.",
        input_schema={"type": "object", "properties": {"rental_id": {"type": "string"}, "days": {"type": "integer"}}},
        source="evolved",
        binding=custom_binding,
    )
    folder = save_pack(world, [*tools, custom], tmp_path / "bikes")
    text = (folder / "world.yaml").read_text()
    assert "an @action named 'extend_rental' is written in actions.py" in text
    p = load_pack(folder, TODAY)
    assert p.world.collections == world.collections and p.world.source == "pack" and p.world.pack == "bikes"
    assert [_comparable(t) for t in p.tools[:-1]] == [_comparable(t) for t in tools]
    sim = p.tools[-1]
    assert (sim.name, sim.binding.action, sim.binding.executed) == ("extend_rental", "custom", False)
    assert sim.input_schema == custom.input_schema

    # edited by hand: a new value of an enum, then loaded again
    status = "rentals"
    edited = text.replace(
        "enum: [pending, confirmed, completed, cancelled]", "enum: [pending, confirmed, completed, cancelled, disputed]"
    )
    assert edited != text
    (folder / "world.yaml").write_text(edited)
    again = load_pack(folder, TODAY)
    assert "disputed" in next(f for f in again.world.collection(status).fields if f.name == "status").enum


# --------------------------------------------------------------------------- bad input


@pytest.fixture
def library_copy(tmp_path):
    folder = tmp_path / "library"
    shutil.copytree(WORLDS / "library", folder)
    return folder


def _edit(folder: Path, old: str, new: str) -> None:
    path = folder / "world.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "book_id: {ref: books}",
            "book_id: {ref: novels}",
            r"collections\.loans\.fields\.book_id\.ref: 'novels' is not a",
        ),
        (
            "{operation: renew_loan}",
            "{operation: renew_lease}",
            r"tools\[5\]\.operation: 'renew_lease' is not an @action",
        ),
        (
            "active: [overdue, returned]",
            "active: [overdue, lost]",
            r"transitions\.status\.active: \['lost'\] are not values",
        ),
        ("renewals: {type: integer", "renewals: {type: int", r"fields\.renewals\.type: 'int' is not string, integer"),
        ("checkout_date: date", "checkout_date: day", r"fields\.checkout_date\.format: 'day' is not one of"),
        (
            "title: {format: label, description: the book's title}",
            "title: {format: label, examples: Dune}",
            r"fields\.title\.examples: expected a list of 1 or more text values",
        ),
        (
            "{action: get, collection: books}",
            "{action: get, collection: novels}",
            r"tools\[1\]\.collection: expected one",
        ),
        (
            "{action: get, collection: books}",
            "{action: fetch, collection: books}",
            r"tools\[1\]\.action: expected one of",
        ),
        ("  - id: lib_renew\n", "  - id: lib_renew\n    when: always\n", r"rules\[0\]: unknown keys \['when'\]"),
        ("domain: Public library loans", "domain:", r"domain: expected the domain's name"),
    ],
)
def test_bad_pack_input_names_file_and_key(library_copy, old, new, message):
    _edit(library_copy, old, new)
    with pytest.raises(PackError, match=message) as err:
        load_pack(library_copy, TODAY)
    assert str(library_copy / "world.yaml") in str(err.value)


def test_bad_actions_module(library_copy):
    path = library_copy / "actions.py"
    path.write_text(
        path.read_text().replace(
            "def renew_loan(db: Db, loan_id: str, days: int)", "def renew_loan(db: Db, loan_id: str)"
        )
    )
    with pytest.raises(PackError, match=r"actions\.py: action renew_loan: the function takes \['loan_id'\]"):
        load_pack(library_copy, TODAY)
    path.write_text("raise RuntimeError('half written')\n")
    with pytest.raises(PackError, match=r"actions\.py: importing it failed: RuntimeError: half written"):
        load_pack(library_copy, TODAY)


def test_a_bug_in_an_action_is_raised(library_copy):
    path = library_copy / "actions.py"
    path.write_text(
        path.read_text().replace(
            'loan = db.get("loans", loan_id)\n    if loan["status"] != "active" or',
            'loan = db.get("loans", loan_id)\n    if loan["state"] != "active" or',
        )
    )
    p = load_pack(library_copy, TODAY)
    s = seeded(p)
    op = next(t for t in p.tools if t.binding.operation == "renew_loan")
    with pytest.raises(KeyError, match="state"):
        run_operation(p.world, op.binding, s, {"loan_id": s["loans"][0]["loan_id"], "days": 7})


def test_bundles_drawn_for_dependent_calls_hold_a_chain_where_the_world_has_one(packs):
    """A run with dependent_calls tasks drew bundles of 2-3 tools that rarely held a list and a get of one
    collection: 5 of 8 such tasks were refused (no_chain). With `partners` the draw completes a chain."""
    from worldsmith.bundles.graph import build_graph, chain_partners, sample_bundles
    from worldsmith.config import BundleConfig
    from worldsmith.worldmodel.bindings import chain_pairs

    tools = [t for p in packs.values() for t in p.tools]
    pairs = [(a.tool_id, b.tool_id) for p in packs.values() for a, b in chain_pairs(p.world, p.tools)]
    names = {t.tool_id: t.name for t in tools}
    assert ("get_order", "get_customer") in {(names[a], names[b]) for a, b in pairs}  # an order names its customer
    partners = chain_partners(pairs)
    cfg = BundleConfig(count=24, size_min=2, size_max=3, crawled_share=0.0, distractors=0)
    g = build_graph(tools)

    def chained(bundle) -> bool:
        return any(partners.get(a, set()) & set(bundle.tool_ids) for a in bundle.tool_ids)

    plain = sample_bundles(g, cfg, seed=5)
    assert sum(map(chained, plain)) < len(plain)  # a walk alone often takes no chain
    drawn = sample_bundles(g, cfg, seed=5, partners=partners)
    assert len(drawn) == len(plain) and all(map(chained, drawn))
    assert all(cfg.size_min <= len(b.tool_ids) <= cfg.size_max for b in drawn)
    by_id = {t.tool_id: t for t in tools}
    assert all(len({by_id[t].binding.world_id for t in b.tool_ids}) == 1 for b in drawn)  # still one world each


def test_a_packs_folder_that_is_not_there_is_a_clear_error(tmp_path):
    """worlds.packs [all] with a packs_dir that does not exist (a relative path read from another folder) names
    the key, instead of a run that quietly goes without packs (test_synth's copied config once did)."""
    from worldsmith.worldmodel import catalog

    with pytest.raises(PackError, match=r"worlds.packs_dir: no folder .*nope"):
        catalog.packs(tmp_path / "nope", ["all"], "2026-03-02")
    assert catalog.packs(tmp_path / "nope", [], "2026-03-02") == []
    assert {p.name for p in catalog.packs(Path(__file__).parent.parent / "worlds", ["all"], "2026-03-02")} >= {"bank"}
