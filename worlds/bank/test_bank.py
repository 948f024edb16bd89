"""The bank pack: each action changes exactly what it should on a seeded world and refuses what its
rules forbid with the right error, the state untouched; its seeders keep their invariants. Expected values are
written by hand. `pack` and `kit` come from worlds/conftest.py (pytest collects every pack folder's tests)."""

from __future__ import annotations

from worldsmith.worldmodel.state import apply_patch


def _bank(pack, kit):
    p = pack
    s = kit.seeded(p)
    kit.put(s, "accounts", 0, status="active", balance=1000.0)
    kit.put(s, "accounts", 1, status="active", balance=50.0)
    for t in s["transactions"]:
        t.update(posted_on="2025-05-01")
    return p, s


def test_bank_transfer_funds(pack, kit):
    p, s = _bank(pack, kit)
    a0, a1 = s["accounts"][0]["account_id"], s["accounts"][1]["account_id"]
    new_id = kit.next_id(s, "transactions", "txn")
    r = kit.call(p, "transfer_funds", s, account_id=a0, to_account_id=a1, amount=250.5)
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
    assert "holds 50.00" in kit.refused(
        p, "transfer_funds", s, "insufficient_funds", account_id=a1, to_account_id=a0, amount=60
    )
    kit.put(s, "accounts", 0, balance=5000.0)
    after = apply_patch(s, kit.call(p, "transfer_funds", s, account_id=a0, to_account_id=a1, amount=2000).patch)
    kit.refused(p, "transfer_funds", after, "limit_reached", account_id=a0, to_account_id=a1, amount=600)
    kit.put(s, "accounts", 1, status="frozen")
    kit.refused(p, "transfer_funds", s, "policy_violation", account_id=a0, to_account_id=a1, amount=10)
    kit.refused(p, "transfer_funds", s, "invalid_value", account_id=a0, to_account_id=a0, amount=10)
    kit.refused(p, "transfer_funds", s, "invalid_value", account_id=a0, to_account_id=a1, amount=0)


def test_bank_block_card_and_dispute(pack, kit):
    p, s = _bank(pack, kit)
    a0 = s["accounts"][0]["account_id"]
    card = kit.put(s, "cards", 0, account_id=a0, status="active", last_four="4242")
    r = kit.call(p, "block_card", s, card_id=card["card_id"], reason="stolen")
    assert r.ok and r.patch == [{"op": "replace", "path": "/cards/0/status", "value": "blocked"}]
    kit.put(s, "accounts", 0, status="closed")
    kit.refused(p, "block_card", s, "policy_violation", card_id=card["card_id"], reason="lost")
    kit.put(s, "cards", 0, status="blocked")
    assert kit.refused(p, "block_card", s, "conflict", card_id=card["card_id"], reason="lost") == (
        "card ending 4242 is already blocked"
    )

    kit.put(s, "accounts", 0, status="active")
    for t in s["transactions"]:
        t.update(account_id=s["accounts"][1]["account_id"], status="reversed")
    tx = kit.put(s, "transactions", 0, account_id=a0, card_id=card["card_id"], kind="card_payment", status="posted")
    kit.put(s, "transactions", 0, posted_on="2025-04-10")  # 52 days ago
    r = kit.call(p, "dispute_transaction", s, transaction_id=tx["transaction_id"], reason="not_recognized")
    assert r.ok and r.patch == [{"op": "replace", "path": "/transactions/0/status", "value": "disputed"}]
    kit.put(s, "transactions", 0, posted_on="2025-03-31")  # 62 days ago
    kit.refused(
        p, "dispute_transaction", s, "policy_violation", transaction_id=tx["transaction_id"], reason="duplicate_charge"
    )
    kit.put(s, "transactions", 0, posted_on="2025-05-31")
    for i in (1, 2, 3):  # three open disputes on the account already
        kit.put(s, "transactions", i, account_id=a0, status="disputed")
    kit.refused(
        p, "dispute_transaction", s, "limit_reached", transaction_id=tx["transaction_id"], reason="duplicate_charge"
    )
    kit.put(s, "transactions", 0, kind="transfer")
    kit.refused(
        p, "dispute_transaction", s, "policy_violation", transaction_id=tx["transaction_id"], reason="duplicate_charge"
    )


def test_bank_seeders_hold_their_invariants(pack, kit):
    today = kit.day(kit.TODAY)
    for seed in kit.SEEDS:
        bank = kit.seeded(pack, seed)
        cards = {c["card_id"]: c for c in bank["cards"]}
        assert all(a["balance"] == 0 for a in bank["accounts"] if a["status"] == "closed")
        for t in bank["transactions"]:
            if t["kind"] == "card_payment":
                assert cards[t["card_id"]]["account_id"] == t["account_id"]
            else:
                assert t["card_id"] is None and t["status"] == "posted"
            assert t["status"] == "posted" or (today - kit.day(t["posted_on"])).days <= 60
