"""The airline's verbs: book a flight, move a booking to another flight, cancel a booking."""

from __future__ import annotations

import datetime as dt

from worldsmith.worldmodel.packs import ActionError, Db, action, seeder

BUSINESS = 2.5  # times the economy fare
CANCEL_REFUND = 0.75  # of the amount paid, for passengers below gold
ROUTES = (("Boston", "Chicago"), ("Chicago", "Denver"), ("Seattle", "San Francisco"))


def _price(flight: dict, cabin: str) -> float:
    return round(flight["fare"] * (BUSINESS if cabin == "business" else 1), 2)


def _open_flight(db: Db, flight: dict) -> None:
    if flight["status"] != "scheduled":
        raise ActionError(
            "policy_violation", f"flight {flight['flight_number']} is {flight['status']}: it cannot be booked"
        )
    if db.date(flight["departure"]) <= db.today:
        raise ActionError("policy_violation", f"flight {flight['flight_number']} departs today or earlier")
    if flight["seats_available"] < 1:
        raise ActionError("no_availability", f"flight {flight['flight_number']} has no seat left")


def _seat(db: Db, flight_id: str, cabin: str) -> str:
    """The next free seat of the cabin, in order (1A, 1B ... for business, 10A ... for economy)."""
    taken = {b["seat"] for b in db.find("bookings", flight_id=flight_id) if b["status"] != "cancelled"}
    first, letters = (1, "ABCD") if cabin == "business" else (10, "ABCDEF")
    n = 0
    while f"{first + n // len(letters)}{letters[n % len(letters)]}" in taken:
        n += 1
    return f"{first + n // len(letters)}{letters[n % len(letters)]}"


@action(
    collection="bookings",
    key=None,
    description=(
        "Book a seat for a passenger on a scheduled flight that departs after today; business costs 2.5 times "
        "the fare. Refused when the flight has no seat left or the passenger is already booked on it."
    ),
    params={
        "passenger_id": {"type": "string", "description": "the passenger's id, like pax-1042"},
        "flight_id": {"type": "string", "description": "the flight's id, like fl-1042"},
        "cabin": {"type": "string", "enum": ["economy", "business"], "description": "the cabin to fly in"},
    },
    goal="book a {cabin} seat on flight {flight_id} for passenger {passenger_id}",
)
def book_flight(db: Db, passenger_id: str, flight_id: str, cabin: str) -> dict:
    passenger = db.get("passengers", passenger_id)
    flight = db.get("flights", flight_id)
    _open_flight(db, flight)
    held = [
        b for b in db.find("bookings", passenger_id=passenger_id, flight_id=flight_id) if b["status"] != "cancelled"
    ]
    if held:
        raise ActionError(
            "conflict",
            f"passenger {passenger_id} is already booked on flight {flight['flight_number']} ({held[0]['booking_id']})",
        )
    db.update("flights", flight_id, seats_available=flight["seats_available"] - 1)
    return db.insert(
        "bookings",
        {
            "passenger_id": passenger["passenger_id"],
            "flight_id": flight["flight_id"],
            "cabin": cabin,
            "seat": _seat(db, flight["flight_id"], cabin),
            "amount_paid": _price(flight, cabin),
            "status": "confirmed",
        },
    )


@action(
    collection="bookings",
    key="booking_id",
    description=(
        "Move a confirmed booking to another scheduled flight on the same route (same origin and destination) "
        "with a seat left; the booking then pays the new flight's fare and gets a new seat."
    ),
    params={"new_flight_id": {"type": "string", "description": "the flight to move to, like fl-1042"}},
    fields={"new_flight_id": "flight_id"},
    output={
        "type": "object",
        "properties": {
            "booking_id": {"type": "string"},
            "flight_id": {"type": "string"},
            "seat": {"type": "string"},
            "amount_paid": {"type": "number"},
            "fare_difference": {"type": "number"},
        },
    },
    goal="move booking {booking_id} to flight {new_flight_id}",
)
def change_flight(db: Db, booking_id: str, new_flight_id: str) -> dict:
    booking = db.get("bookings", booking_id)
    if booking["status"] != "confirmed":
        raise ActionError(
            "policy_violation",
            f"booking {booking_id} is {booking['status']}: only a confirmed booking can change flights",
        )
    old = db.get("flights", booking["flight_id"])
    new = db.get("flights", new_flight_id)
    if new["flight_id"] == old["flight_id"]:
        raise ActionError("invalid_value", f"booking {booking_id} is already on flight {old['flight_number']}")
    if (new["origin"], new["destination"]) != (old["origin"], old["destination"]):
        raise ActionError(
            "policy_violation",
            f"flight {new['flight_number']} flies {new['origin']} to {new['destination']}, not the booking's route "
            f"{old['origin']} to {old['destination']}",
        )
    _open_flight(db, new)
    price = _price(new, booking["cabin"])
    db.update("flights", old["flight_id"], seats_available=old["seats_available"] + 1)
    db.update("flights", new["flight_id"], seats_available=new["seats_available"] - 1)
    seat = _seat(db, new["flight_id"], booking["cabin"])
    db.update("bookings", booking_id, flight_id=new["flight_id"], seat=seat, amount_paid=price)
    return {
        "booking_id": booking["booking_id"],
        "flight_id": new["flight_id"],
        "seat": seat,
        "amount_paid": price,
        "fare_difference": round(price - booking["amount_paid"], 2),
    }


@action(
    collection="bookings",
    key="booking_id",
    description=(
        "Cancel a confirmed booking before its departure day and refund it: the full amount for gold "
        "passengers, 75% for the others. The seat goes back on sale."
    ),
    output={
        "type": "object",
        "properties": {"booking_id": {"type": "string"}, "status": {"type": "string"}, "refund": {"type": "number"}},
    },
    goal="cancel booking {booking_id}",
)
def cancel_booking(db: Db, booking_id: str) -> dict:
    booking = db.get("bookings", booking_id)
    if booking["status"] != "confirmed":
        raise ActionError(
            "policy_violation",
            f"booking {booking_id} is {booking['status']}: only a confirmed booking can be cancelled",
        )
    flight = db.get("flights", booking["flight_id"])
    if db.date(flight["departure"]) <= db.today:
        raise ActionError(
            "policy_violation", f"flight {flight['flight_number']} departs today or has left: too late to cancel"
        )
    passenger = db.get("passengers", booking["passenger_id"])
    refund = round(booking["amount_paid"] * (1 if passenger["loyalty_tier"] == "gold" else CANCEL_REFUND), 2)
    db.update("bookings", booking_id, status="cancelled")
    db.update("flights", flight["flight_id"], seats_available=flight["seats_available"] + 1)
    return {"booking_id": booking["booking_id"], "status": "cancelled", "refund": refund}


# --------------------------------------------------------------------------- seeding


@seeder("flights")
def flight_schedule(record: dict, db: Db, rng) -> None:
    """Few routes (so a booking has another flight to move to); scheduled flights depart after today,
    boarding ones today, departed ones before."""
    record["origin"], record["destination"] = rng.choice(ROUTES)
    record["flight_number"] = f"WS{record['flight_id'][-3:]}"
    days = {"scheduled": (2, 30), "boarding": (0, 0), "departed": (-30, -1), "cancelled": (-5, 20)}[record["status"]]
    when = dt.datetime.combine(
        db.today + dt.timedelta(days=rng.randint(*days)), dt.time(rng.randint(6, 21), rng.choice((0, 30)))
    )
    record["departure"] = when.isoformat()
    record["seats_available"] = rng.choice((0, 3, 8, 15, 40))
    record["fare"] = float(rng.choice((79, 129, 189, 249, 320)))


@seeder("bookings")
def booking_flights(record: dict, db: Db, rng) -> None:
    """Confirmed bookings are on scheduled flights, checked-in ones on boarding or departed flights;
    each paid its flight's fare for its cabin."""
    wanted = {"confirmed": ("scheduled",), "checked_in": ("boarding", "departed")}.get(record["status"])
    if wanted:
        flights = [f for f in db.list("flights") if f["status"] in wanted]
        if flights:
            record["flight_id"] = rng.choice(flights)["flight_id"]
    flight = db.get("flights", record["flight_id"])
    record["amount_paid"] = _price(flight, record["cabin"])
    row = rng.randint(1, 4) if record["cabin"] == "business" else rng.randint(10, 32)
    record["seat"] = f"{row}{rng.choice('ABCD' if record['cabin'] == 'business' else 'ABCDEF')}"
