"""The bank's verbs: transfer money between accounts, block a card, dispute a card payment."""

from __future__ import annotations

import datetime as dt

from worldsmith.worldmodel.packs import ActionError, Db, action, seeder

DAILY_TRANSFERS = 2500.0
DISPUTE_DAYS = 60
MAX_DISPUTES = 3
MERCHANTS = ("Corner Grocery", "City Fuel", "Bookhaven", "Skyline Air", "Pixel Electronics", "Green Bowl Cafe")


@action(
    collection="transactions",
    key=None,
    description=(
        "Transfer money from one active account to another; records the transfer on the sending account. "
        "Refused when the amount is over the balance or the day's transfers out of the account would pass 2500.00."
    ),
    params={
        "account_id": {"type": "string", "description": "the account the money leaves, like acc-1042"},
        "to_account_id": {"type": "string", "description": "the account the money goes to, like acc-1042"},
        "amount": {"type": "number", "minimum": 1, "maximum": 2000, "description": "the amount to move"},
    },
    fields={"account_id": "account_id", "to_account_id": "account_id"},
    goal="transfer {amount} from account {account_id} to account {to_account_id}",
)
def transfer_funds(db: Db, account_id: str, to_account_id: str, amount: float) -> dict:
    source = db.get("accounts", account_id)
    target = db.get("accounts", to_account_id)
    if source["account_id"] == target["account_id"]:
        raise ActionError("invalid_value", "the two accounts of a transfer must differ")
    for acc in (source, target):
        if acc["status"] != "active":
            raise ActionError("policy_violation", f"account {acc['account_id']} is {acc['status']}: no transfers")
    amount = round(float(amount), 2)
    if amount > source["balance"]:
        raise ActionError(
            "insufficient_funds", f"account {account_id} holds {source['balance']:.2f}, less than {amount:.2f}"
        )
    today = db.today.isoformat()
    sent = sum(t["amount"] for t in db.find("transactions", account_id=account_id, kind="transfer", posted_on=today))
    if sent + amount > DAILY_TRANSFERS:
        raise ActionError(
            "limit_reached",
            f"account {account_id} already sent {sent:.2f} today: the daily limit is {DAILY_TRANSFERS:.2f}",
        )
    db.update("accounts", source["account_id"], balance=round(source["balance"] - amount, 2))
    db.update("accounts", target["account_id"], balance=round(target["balance"] + amount, 2))
    return db.insert(
        "transactions",
        {
            "account_id": source["account_id"],
            "card_id": None,
            "kind": "transfer",
            "merchant": f"Transfer to {target['account_id']}",
            "amount": amount,
            "posted_on": today,
            "status": "posted",
        },
    )


@action(
    collection="cards",
    key="card_id",
    description="Block an active card (lost, stolen or used without the holder's consent) so no payment goes through.",
    params={
        "reason": {
            "type": "string",
            "enum": ["lost", "stolen", "suspicious_activity"],
            "description": "why the card is blocked",
        }
    },
    goal="block card {card_id} because it was {reason}",
)
def block_card(db: Db, card_id: str, reason: str) -> dict:
    card = db.get("cards", card_id)
    if card["status"] == "blocked":
        raise ActionError("conflict", f"card ending {card['last_four']} is already blocked")
    if card["status"] != "active":
        raise ActionError(
            "policy_violation", f"card ending {card['last_four']} is {card['status']}: it cannot be blocked"
        )
    account = db.get("accounts", card["account_id"])
    if account["status"] == "closed":
        raise ActionError("policy_violation", f"account {account['account_id']} is closed")
    return db.update("cards", card_id, status="blocked")


@action(
    collection="transactions",
    key="transaction_id",
    description=(
        "Dispute a posted card payment at most 60 days old; the payment is held until the bank decides. "
        "An account has at most 3 open disputes, and a closed account none."
    ),
    params={
        "reason": {
            "type": "string",
            "enum": ["not_recognized", "duplicate_charge", "item_not_received"],
            "description": "why the customer disputes the payment",
        }
    },
    goal="dispute transaction {transaction_id} because of {reason}",
)
def dispute_transaction(db: Db, transaction_id: str, reason: str) -> dict:
    tx = db.get("transactions", transaction_id)
    if tx["kind"] != "card_payment":
        raise ActionError(
            "policy_violation", f"transaction {transaction_id} is a transfer: only card payments are disputed"
        )
    if tx["status"] != "posted":
        raise ActionError("policy_violation", f"transaction {transaction_id} is {tx['status']}: it cannot be disputed")
    age = (db.today - db.date(tx["posted_on"])).days
    if age > DISPUTE_DAYS:
        raise ActionError(
            "policy_violation",
            f"transaction {transaction_id} was posted {age} days ago, past the {DISPUTE_DAYS}-day limit",
        )
    account = db.get("accounts", tx["account_id"])
    if account["status"] == "closed":
        raise ActionError("policy_violation", f"account {account['account_id']} is closed")
    open_ = db.find("transactions", account_id=account["account_id"], status="disputed")
    if len(open_) >= MAX_DISPUTES:
        raise ActionError("limit_reached", f"account {account['account_id']} already has {len(open_)} open disputes")
    return db.update("transactions", transaction_id, status="disputed")


# --------------------------------------------------------------------------- seeding


@seeder("accounts")
def account_balance(record: dict, db: Db, rng) -> None:
    record["balance"] = 0.0 if record["status"] == "closed" else round(rng.uniform(40, 6000), 2)


@seeder("cards")
def card_number(record: dict, db: Db, rng) -> None:
    record["last_four"] = f"{rng.randint(0, 9999):04d}"
    record["spending_limit"] = float(rng.choice((500, 1000, 2500, 5000)))


@seeder("transactions")
def transaction_card(record: dict, db: Db, rng) -> None:
    """A card payment is on its card's account at a shop; a transfer has no card; dates in the last 90 days,
    disputed and reversed ones within the dispute window (only card payments are disputed)."""
    if record["status"] != "posted":
        record["kind"] = "card_payment"
    if record["kind"] == "transfer":
        record["card_id"] = None
        record["merchant"] = f"Transfer to {rng.choice(db.list('accounts'))['account_id']}"
    else:
        record["account_id"] = db.get("cards", record["card_id"])["account_id"]
        record["merchant"] = rng.choice(MERCHANTS)
    days = (0, 90) if record["status"] == "posted" else (0, DISPUTE_DAYS)
    record["posted_on"] = (db.today - dt.timedelta(days=rng.randint(*days))).isoformat()
    record["amount"] = round(rng.uniform(4, 400), 2)
