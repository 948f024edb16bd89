"""The shop pack: each action changes exactly what it should on a seeded world and refuses what its
rules forbid with the right error, the state untouched; its seeders keep their invariants. Expected values are
written by hand. `pack` and `kit` come from worlds/conftest.py (pytest collects every pack folder's tests)."""

from __future__ import annotations


def _shop(pack, kit):
    p = pack
    s = kit.seeded(p)
    o = kit.put(s, "orders", 0, status="delivered", amount=100.0, placed_on="2025-05-20")
    for r in s["refunds"]:  # the other refunds are of another order
        r["order_id"] = s["orders"][1]["order_id"]
    kit.put(s, "refunds", 0, order_id=o["order_id"], amount=30.0, status="issued")
    return p, s, o


def test_shop_refund_order_is_bounded_by_the_order_amount(pack, kit):
    p, s, o = _shop(pack, kit)
    new_id = kit.next_id(s, "refunds", "rfd")
    r = kit.call(p, "refund_order", s, order_id=o["order_id"], amount=70, reason="damaged")
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
    msg = kit.refused(p, "refund_order", s, "policy_violation", order_id=o["order_id"], amount=71, reason="damaged")
    assert "at most 70.00 can still be refunded" in msg
    kit.put(s, "refunds", 0, status="rejected")  # a rejected refund does not count
    assert kit.call(p, "refund_order", s, order_id=o["order_id"], amount=100, reason="wrong_item").ok
    kit.put(s, "orders", 0, placed_on="2025-04-20")  # 42 days ago: past the window
    assert "past the 30-day" in kit.refused(
        p, "refund_order", s, "policy_violation", order_id=o["order_id"], amount=5, reason="damaged"
    )
    kit.put(s, "orders", 0, placed_on="2025-05-20", status="shipped")
    kit.refused(p, "refund_order", s, "policy_violation", order_id=o["order_id"], amount=5, reason="damaged")
    kit.refused(p, "refund_order", s, "invalid_value", order_id=o["order_id"], amount=5, reason="changed_my_mind")


def test_shop_approve_refund(pack, kit):
    p, s, o = _shop(pack, kit)
    kit.put(s, "refunds", 1, order_id=o["order_id"], amount=60.0, status="requested")
    rid = s["refunds"][1]["refund_id"]
    r = kit.call(p, "approve_refund", s, refund_id=rid)
    assert r.ok and r.patch == [{"op": "replace", "path": "/refunds/1/status", "value": "issued"}]
    kit.put(s, "refunds", 1, amount=70.01)  # 30 issued + 70.01 > 100
    assert "would exceed" in kit.refused(p, "approve_refund", s, "policy_violation", refund_id=rid)
    kit.put(s, "refunds", 1, amount=10.0, status="rejected")
    kit.refused(p, "approve_refund", s, "policy_violation", refund_id=rid)


def test_shop_cancel_order(pack, kit):
    p, s, o = _shop(pack, kit)
    kit.put(s, "orders", 2, status="pending")
    r = kit.call(p, "cancel_order", s, order_id=s["orders"][2]["order_id"])
    assert r.ok and r.patch == [{"op": "replace", "path": "/orders/2/status", "value": "cancelled"}]
    kit.put(s, "orders", 2, status="shipped")
    assert "only a pending order" in kit.refused(
        p, "cancel_order", s, "policy_violation", order_id=s["orders"][2]["order_id"]
    )


def test_shop_seeders_hold_their_invariants(pack, kit):
    for seed in kit.SEEDS:
        shop = kit.seeded(pack, seed)
        orders = {o["order_id"]: o for o in shop["orders"]}
        for oid, o in orders.items():
            refunds = [r for r in shop["refunds"] if r["order_id"] == oid]
            assert sum(r["amount"] for r in refunds) <= o["amount"]
            assert all(
                o["status"] == "delivered" and kit.day(r["requested_on"]) >= kit.day(o["placed_on"]) for r in refunds
            )
