"""The clinic pack: each action changes exactly what it should on a seeded world and refuses what its
rules forbid with the right error, the state untouched; its seeders keep their invariants. Expected values are
written by hand. `pack` and `kit` come from worlds/conftest.py (pytest collects every pack folder's tests)."""

from __future__ import annotations


def _clinic(pack, kit):
    p = pack
    s = kit.seeded(p)
    kit.put(s, "patients", 0, no_shows=0)
    d = s["doctors"][0]["doctor_id"]
    for a in s["appointments"]:  # the doctor's only live appointment is the first
        a.update(doctor_id=s["doctors"][1]["doctor_id"])
    kit.put(s, "appointments", 0, doctor_id=d, patient_id=s["patients"][0]["patient_id"], date="2025-06-05")
    kit.put(s, "appointments", 0, time="10:00", status="scheduled")
    return p, s, d


def test_clinic_book_appointment_needs_a_free_slot(pack, kit):
    p, s, d = _clinic(pack, kit)
    pat = s["patients"][0]["patient_id"]
    new_id = kit.next_id(s, "appointments", "apt")
    r = kit.call(
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
    assert "already booked on 2025-06-05 at 10:00" in kit.refused(
        p, "book_appointment", s, "no_availability", date="2025-06-05", time="10:00", **args
    )
    kit.refused(p, "book_appointment", s, "policy_violation", date="2025-06-01", time="11:00", **args)
    kit.refused(p, "book_appointment", s, "invalid_value", date="2025-06-05", time="10:15", **args)
    kit.refused(p, "book_appointment", s, "invalid_value", date="next friday", time="11:00", **args)
    kit.put(s, "patients", 0, no_shows=3)
    kit.refused(p, "book_appointment", s, "policy_violation", date="2025-06-05", time="11:00", **args)
    kit.put(s, "patients", 0, no_shows=0)
    kit.put(s, "appointments", 0, status="cancelled")  # a cancelled appointment frees its slot
    assert kit.call(p, "book_appointment", s, date="2025-06-05", time="10:00", **args).ok


def test_clinic_reschedule_and_cancel(pack, kit):
    p, s, d = _clinic(pack, kit)
    aid = s["appointments"][0]["appointment_id"]
    r = kit.call(p, "reschedule_appointment", s, appointment_id=aid, date="2025-06-06", time="09:30")
    assert r.ok and r.patch == [
        {"op": "replace", "path": "/appointments/0/date", "value": "2025-06-06"},
        {"op": "replace", "path": "/appointments/0/time", "value": "09:30"},
    ]
    kit.put(s, "appointments", 1, doctor_id=d, date="2025-06-06", time="09:30", status="checked_in")
    kit.refused(p, "reschedule_appointment", s, "no_availability", appointment_id=aid, date="2025-06-06", time="09:30")
    r = kit.call(p, "cancel_appointment", s, appointment_id=aid)
    assert r.ok and r.patch == [{"op": "replace", "path": "/appointments/0/status", "value": "cancelled"}]
    kit.put(s, "appointments", 0, date="2025-06-01")  # today: too late to move or cancel
    assert "the day before" in kit.refused(p, "cancel_appointment", s, "policy_violation", appointment_id=aid)
    kit.refused(p, "reschedule_appointment", s, "policy_violation", appointment_id=aid, date="2025-06-06", time="11:00")
    kit.put(s, "appointments", 0, date="2025-06-05", status="completed")
    kit.refused(p, "cancel_appointment", s, "policy_violation", appointment_id=aid)


def test_clinic_seeders_hold_their_invariants(pack, kit):
    today = kit.day(kit.TODAY)
    for seed in kit.SEEDS:
        clinic = kit.seeded(pack, seed)
        live = [a for a in clinic["appointments"] if a["status"] in ("scheduled", "checked_in")]
        slots = [(a["doctor_id"], a["date"], a["time"]) for a in live]
        assert len(slots) == len(set(slots))
        for a in clinic["appointments"]:
            assert a["time"][3:] in ("00", "30") and "09:00" <= a["time"] <= "16:30"
            if a["status"] in ("completed", "no_show"):
                assert kit.day(a["date"]) < today
            if a["status"] in ("scheduled", "checked_in"):
                assert kit.day(a["date"]) >= today
