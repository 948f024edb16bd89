"""The helpdesk pack: each action changes exactly what it should on a seeded world and refuses what its
rules forbid with the right error, the state untouched; its seeders keep their invariants. Expected values are
written by hand. `pack` and `kit` come from worlds/conftest.py (pytest collects every pack folder's tests)."""

from __future__ import annotations


def _helpdesk(pack, kit):
    p = pack
    s = kit.seeded(p)
    for i, (team, tier) in enumerate([("network", "tier_1"), ("network", "tier_2"), ("network", "tier_2")]):
        kit.put(s, "technicians", i, team=team, tier=tier, on_shift=True)
    for t in s["technicians"][3:]:
        t.update(team="identity", tier="tier_1")
    t0, t1 = s["technicians"][0]["technician_id"], s["technicians"][1]["technician_id"]
    for t in s["tickets"]:  # nothing in progress but what a test puts there
        t.update(status="resolved", technician_id=t0)
    kit.put(s, "tickets", 1, status="in_progress", technician_id=t1)  # tech 1 is busier than tech 2
    kit.put(
        s, "tickets", 0, status="open", priority="high", opened_on="2025-05-28", technician_id=t0, escalation_level=0
    )
    return p, s


def test_helpdesk_escalate_ticket_needs_an_open_ticket_past_its_sla(pack, kit):
    p, s = _helpdesk(pack, kit)
    tid, t2 = s["tickets"][0]["ticket_id"], s["technicians"][2]["technician_id"]
    r = kit.call(p, "escalate_ticket", s, ticket_id=tid)
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
    kit.put(s, "tickets", 0, opened_on="2025-05-30")  # high: 2 days of SLA, opened 2 days ago
    assert "within its SLA of 2 days" in kit.refused(p, "escalate_ticket", s, "policy_violation", ticket_id=tid)
    kit.put(s, "tickets", 0, opened_on="2025-05-28", status="resolved")
    kit.refused(p, "escalate_ticket", s, "policy_violation", ticket_id=tid)
    kit.put(s, "tickets", 0, status="open", escalation_level=2)
    kit.refused(p, "escalate_ticket", s, "limit_reached", ticket_id=tid)
    kit.put(s, "tickets", 0, escalation_level=0)
    for i in (1, 2):
        kit.put(s, "technicians", i, on_shift=False)
    kit.refused(p, "escalate_ticket", s, "no_availability", ticket_id=tid)


def test_helpdesk_assign_and_resolve(pack, kit):
    p, s = _helpdesk(pack, kit)
    tid, t2 = s["tickets"][0]["ticket_id"], s["technicians"][2]["technician_id"]
    r = kit.call(p, "assign_ticket", s, ticket_id=tid, technician_id=t2)
    assert r.ok and r.patch == [
        {"op": "replace", "path": "/tickets/0/technician_id", "value": t2},
        {"op": "replace", "path": "/tickets/0/status", "value": "in_progress"},
    ]
    kit.put(s, "technicians", 2, on_shift=False)
    kit.refused(p, "assign_ticket", s, "no_availability", ticket_id=tid, technician_id=t2)
    kit.put(s, "technicians", 2, on_shift=True)
    for i in range(1, 6):  # five tickets in progress with tech 2
        s["tickets"].append({**s["tickets"][1], "ticket_id": f"tkt-{9000 + i}", "technician_id": t2})
    kit.refused(p, "assign_ticket", s, "limit_reached", ticket_id=tid, technician_id=t2)
    kit.put(s, "tickets", 0, status="closed")
    kit.refused(p, "assign_ticket", s, "policy_violation", ticket_id=tid, technician_id=t2)

    busy = s["tickets"][1]["ticket_id"]
    r = kit.call(p, "resolve_ticket", s, ticket_id=busy)
    assert r.ok and r.patch == [{"op": "replace", "path": "/tickets/1/status", "value": "resolved"}]
    kit.put(s, "tickets", 1, status="open")
    kit.refused(p, "resolve_ticket", s, "policy_violation", ticket_id=busy)


def test_helpdesk_seeders_hold_their_invariants(pack, kit):
    today = kit.day(kit.TODAY)
    for seed in kit.SEEDS:
        desk = kit.seeded(pack, seed)
        techs = {t["technician_id"]: t for t in desk["technicians"]}
        for team in {t["team"] for t in techs.values()}:
            assert any(t["team"] == team and t["tier"] == "tier_2" and t["on_shift"] for t in techs.values())
        for t in desk["tickets"]:
            assert 0 <= (today - kit.day(t["opened_on"])).days <= 14 and 0 <= t["escalation_level"] <= 2
            assert not t["escalation_level"] or techs[t["technician_id"]]["tier"] == "tier_2"
