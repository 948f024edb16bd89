"""The shop's verbs: cancel an order, refund one, approve a requested refund."""

from __future__ import annotations

import datetime as dt

from worldsmith.worldmodel.packs import ActionError, Db, action, seeder

REFUND_DAYS = 30
REASONS = ["damaged", "wrong_item", "late_delivery", "not_as_described"]


def _refunded(db: Db, order_id: str, *, statuses: tuple[str, ...]) -> float:
    return round(sum(r["amount"] for r in db.find("refunds", order_id=order_id) if r["status"] in statuses), 2)


@action(
    collection="orders",
    key="order_id",
    description="Cancel a pending order. An order that has shipped, been delivered or cancelled cannot be.",
    goal="cancel order {order_id}",
)
def cancel_order(db: Db, order_id: str) -> dict:
    order = db.get("orders", order_id)
    if order["status"] != "pending":
        raise ActionError(
            "policy_violation", f"order {order_id} is {order['status']}: only a pending order can be cancelled"
        )
    return db.update("orders", order_id, status="cancelled")


@action(
    collection="orders",
    key="order_id",
    description=(
        "Issue a refund on a delivered order, within 30 days of the order date. All refunds of an order "
        "(issued or requested) together cannot exceed the order's amount. Returns the new refund."
    ),
    params={
        "amount": {"type": "number", "minimum": 1, "maximum": 200, "description": "the amount to refund"},
        "reason": {"type": "string", "enum": REASONS, "description": "why the customer wants the money back"},
    },
    output={
        "type": "object",
        "properties": {
            "refund_id": {"type": "string"},
            "order_id": {"type": "string"},
            "amount": {"type": "number"},
            "reason": {"type": "string"},
            "requested_on": {"type": "string"},
            "status": {"type": "string"},
        },
    },
    goal="get a refund of {amount} on order {order_id} because the item was {reason}",
)
def refund_order(db: Db, order_id: str, amount: float, reason: str) -> dict:
    order = db.get("orders", order_id)
    if order["status"] != "delivered":
        raise ActionError(
            "policy_violation", f"order {order_id} is {order['status']}: only a delivered order can be refunded"
        )
    age = (db.today - db.date(order["placed_on"])).days
    if age > REFUND_DAYS:
        raise ActionError(
            "policy_violation", f"order {order_id} was placed {age} days ago, past the {REFUND_DAYS}-day refund window"
        )
    taken = _refunded(db, order_id, statuses=("issued", "requested"))
    if taken + amount > order["amount"] + 1e-9:
        left = max(0.0, round(order["amount"] - taken, 2))
        raise ActionError(
            "policy_violation",
            f"order {order_id} was {order['amount']:.2f} and {taken:.2f} is already refunded or requested: "
            f"at most {left:.2f} can still be refunded",
        )
    return db.insert(
        "refunds",
        {
            "order_id": order["order_id"],
            "amount": round(float(amount), 2),
            "reason": reason,
            "requested_on": db.today.isoformat(),
            "status": "issued",
        },
    )


@action(
    collection="refunds",
    key="refund_id",
    description=(
        "Approve a requested refund, which issues it. Refused when the order's issued refunds plus this one "
        "would exceed the order's amount, or when the refund is not in the requested state."
    ),
    goal="approve refund {refund_id}",
)
def approve_refund(db: Db, refund_id: str) -> dict:
    refund = db.get("refunds", refund_id)
    if refund["status"] != "requested":
        raise ActionError(
            "policy_violation", f"refund {refund_id} is {refund['status']}: only a requested one can be approved"
        )
    order = db.get("orders", refund["order_id"])
    issued = _refunded(db, order["order_id"], statuses=("issued",))
    if issued + refund["amount"] > order["amount"] + 1e-9:
        raise ActionError(
            "policy_violation",
            f"order {order['order_id']} was {order['amount']:.2f} and {issued:.2f} is already refunded: "
            f"a refund of {refund['amount']:.2f} would exceed it",
        )
    return db.update("refunds", refund_id, status="issued")


# --------------------------------------------------------------------------- seeding


@seeder("orders")
def order_dates(record: dict, db: Db, rng) -> None:
    """Pending orders are recent, delivered ones 5 to 45 days old (some in the refund window, some past it)."""
    record["amount"] = round(record["quantity"] * rng.choice((12.5, 19.99, 24.0, 39.9, 59.0, 89.0)), 2)
    days = {"pending": (0, 3), "shipped": (2, 6), "delivered": (5, 45), "cancelled": (1, 40)}[record["status"]]
    record["placed_on"] = (db.today - dt.timedelta(days=rng.randint(*days))).isoformat()


@seeder("refunds")
def refund_amounts(record: dict, db: Db, rng) -> None:
    """A refund is of a delivered order, requested after it was placed, at most 15% of its amount each
    (so the refunds of an order, 6 at most, stay within its amount)."""
    delivered = [o for o in db.list("orders") if o["status"] == "delivered"]
    if delivered:
        record["order_id"] = rng.choice(delivered)["order_id"]
    order = db.get("orders", record["order_id"])
    record["amount"] = round(order["amount"] * rng.choice((0.05, 0.1, 0.12, 0.15)), 2)
    placed = db.date(order["placed_on"])
    record["requested_on"] = (placed + dt.timedelta(days=rng.randint(0, (db.today - placed).days))).isoformat()
