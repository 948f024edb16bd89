"""The airline pack: each action changes exactly what it should on a seeded world and refuses what its
rules forbid with the right error, the state untouched; its seeders keep their invariants. Expected values are
written by hand. `pack` and `kit` come from worlds/conftest.py (pytest collects every pack folder's tests)."""

from __future__ import annotations

from worldsmith.worldmodel.state import apply_patch


def _airline(pack, kit):
    p = pack
    s = kit.seeded(p)
    common = {"origin": "Boston", "destination": "Chicago", "status": "scheduled", "fare": 100.0}
    kit.put(s, "flights", 0, departure="2025-06-10T08:00:00", seats_available=5, **common)
    kit.put(s, "flights", 1, departure="2025-06-12T18:30:00", seats_available=1, **{**common, "fare": 140.0})
    kit.put(s, "passengers", 0, loyalty_tier="basic")
    f0, pax = s["flights"][0]["flight_id"], s["passengers"][0]["passenger_id"]
    for b in s["bookings"]:  # no booking of the passenger, none on the two flights
        b["passenger_id"] = s["passengers"][1]["passenger_id"]
        b["flight_id"] = s["flights"][2]["flight_id"]
    kit.put(s, "bookings", 0, passenger_id=pax, flight_id=f0, cabin="economy", seat="10A", amount_paid=100.0)
    kit.put(s, "bookings", 0, status="confirmed")
    return p, s


def test_airline_book_flight_needs_an_available_seat(pack, kit):
    p, s = _airline(pack, kit)
    f1, pax = s["flights"][1]["flight_id"], s["passengers"][0]["passenger_id"]
    new_id = kit.next_id(s, "bookings", "bkg")
    r = kit.call(p, "book_flight", s, passenger_id=pax, flight_id=f1, cabin="business")
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
    kit.refused(p, "book_flight", after, "no_availability", passenger_id=pax, flight_id=f1, cabin="economy")
    f0 = s["flights"][0]["flight_id"]
    assert "already booked" in kit.refused(
        p, "book_flight", s, "conflict", passenger_id=pax, flight_id=f0, cabin="economy"
    )
    kit.put(s, "flights", 1, status="cancelled")
    kit.refused(p, "book_flight", s, "policy_violation", passenger_id=pax, flight_id=f1, cabin="economy")
    kit.put(s, "flights", 1, status="scheduled", departure="2025-06-01T20:00:00")
    kit.refused(p, "book_flight", s, "policy_violation", passenger_id=pax, flight_id=f1, cabin="economy")


def test_airline_change_flight_keeps_the_route(pack, kit):
    p, s = _airline(pack, kit)
    bid, f1 = s["bookings"][0]["booking_id"], s["flights"][1]["flight_id"]
    r = kit.call(p, "change_flight", s, booking_id=bid, new_flight_id=f1)
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
    kit.put(s, "flights", 1, destination="Denver")
    assert "not the booking's route" in kit.refused(
        p, "change_flight", s, "policy_violation", booking_id=bid, new_flight_id=f1
    )
    kit.put(s, "flights", 1, destination="Chicago", seats_available=0)
    kit.refused(p, "change_flight", s, "no_availability", booking_id=bid, new_flight_id=f1)
    kit.put(s, "bookings", 0, status="checked_in")
    kit.refused(p, "change_flight", s, "policy_violation", booking_id=bid, new_flight_id=f1)


def test_airline_cancel_booking_refund_depends_on_the_tier(pack, kit):
    p, s = _airline(pack, kit)
    bid = s["bookings"][0]["booking_id"]
    r = kit.call(p, "cancel_booking", s, booking_id=bid)
    assert r.ok and r.result == {"booking_id": bid, "status": "cancelled", "refund": 75.0}
    assert r.patch == [
        {"op": "replace", "path": "/flights/0/seats_available", "value": 6},
        {"op": "replace", "path": "/bookings/0/status", "value": "cancelled"},
    ]
    kit.put(s, "passengers", 0, loyalty_tier="gold")
    assert kit.call(p, "cancel_booking", s, booking_id=bid).result["refund"] == 100.0
    kit.put(s, "flights", 0, departure="2025-06-01T23:00:00")
    assert "too late" in kit.refused(p, "cancel_booking", s, "policy_violation", booking_id=bid)
    kit.put(s, "flights", 0, departure="2025-06-10T08:00:00")
    kit.put(s, "bookings", 0, status="checked_in")
    kit.refused(p, "cancel_booking", s, "policy_violation", booking_id=bid)


def test_airline_seeders_hold_their_invariants(pack, kit):
    today = kit.day(kit.TODAY)
    for seed in kit.SEEDS:
        air = kit.seeded(pack, seed)
        flights = {f["flight_id"]: f for f in air["flights"]}
        assert all(kit.day(f["departure"]) > today for f in flights.values() if f["status"] == "scheduled")
        assert all(kit.day(f["departure"]) < today for f in flights.values() if f["status"] == "departed")
        for b in air["bookings"]:
            f = flights[b["flight_id"]]
            assert b["amount_paid"] == f["fare"] * (2.5 if b["cabin"] == "business" else 1)
            assert b["status"] != "confirmed" or f["status"] == "scheduled"
