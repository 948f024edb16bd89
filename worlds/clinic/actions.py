"""The clinic's verbs: book an appointment, move one, cancel one."""

from __future__ import annotations

import datetime as dt

from worldsmith.worldmodel.packs import ActionError, Db, action, seeder

SLOTS = [f"{h:02d}:{m:02d}" for h in range(9, 17) for m in (0, 30)]
MAX_NO_SHOWS = 3
REASONS = ("annual check-up", "persistent cough", "skin rash", "blood pressure review", "vaccination", "knee pain")
DATE = {"type": "string", "format": "date", "description": "the day, as YYYY-MM-DD"}
TIME = {"type": "string", "enum": SLOTS, "description": "the half-hour slot's start, like 10:30"}


def _free_slot(db: Db, doctor_id: str, date: str, time: str, *, skip: str | None = None) -> None:
    try:
        day = dt.date.fromisoformat(date)
    except ValueError:
        raise ActionError("invalid_value", f"date {date!r} is not a day like 2025-06-14") from None
    if day <= db.today:
        raise ActionError("policy_violation", f"appointments are booked from tomorrow on, not for {date}")
    busy = [
        a
        for a in db.find("appointments", doctor_id=doctor_id, date=date, time=time)
        if a["status"] in ("scheduled", "checked_in") and a["appointment_id"] != skip
    ]
    if busy:
        raise ActionError("no_availability", f"doctor {doctor_id} is already booked on {date} at {time}")


def _notice(db: Db, appointment: dict, verb: str) -> None:
    if appointment["status"] != "scheduled":
        raise ActionError(
            "policy_violation",
            f"appointment {appointment['appointment_id']} is {appointment['status']}: "
            f"only a scheduled one can be {verb}",
        )
    if db.date(appointment["date"]) <= db.today:
        raise ActionError(
            "policy_violation",
            f"appointment {appointment['appointment_id']} is on {appointment['date']}: it can be {verb} only up to "
            "the day before (the patient must call the clinic)",
        )


@action(
    collection="appointments",
    key=None,
    description=(
        "Book a patient into a free half-hour slot of a doctor, on a day after today. Refused when the slot "
        "is taken or the patient has missed 3 or more appointments."
    ),
    params={
        "patient_id": {"type": "string", "description": "the patient's id, like pat-1042"},
        "doctor_id": {"type": "string", "description": "the doctor's id, like doc-1042"},
        "date": DATE,
        "time": TIME,
        "reason": {"type": "string", "enum": list(REASONS), "description": "why the patient comes"},
    },
    goal="book an appointment for patient {patient_id} with doctor {doctor_id} on {date} at {time} for a {reason}",
)
def book_appointment(db: Db, patient_id: str, doctor_id: str, date: str, time: str, reason: str) -> dict:
    patient = db.get("patients", patient_id)
    doctor = db.get("doctors", doctor_id)
    if patient["no_shows"] >= MAX_NO_SHOWS:
        raise ActionError(
            "policy_violation",
            f"patient {patient_id} missed {patient['no_shows']} appointments: they must call the clinic",
        )
    _free_slot(db, doctor["doctor_id"], date, time)
    return db.insert(
        "appointments",
        {
            "patient_id": patient["patient_id"],
            "doctor_id": doctor["doctor_id"],
            "date": date,
            "time": time,
            "reason": reason,
            "status": "scheduled",
        },
    )


@action(
    collection="appointments",
    key="appointment_id",
    description=(
        "Move a scheduled appointment to another free slot of the same doctor, on a day after today. "
        "Only possible up to the day before the appointment."
    ),
    params={"date": DATE, "time": TIME},
    goal="move appointment {appointment_id} to {date} at {time}",
)
def reschedule_appointment(db: Db, appointment_id: str, date: str, time: str) -> dict:
    appointment = db.get("appointments", appointment_id)
    _notice(db, appointment, "moved")
    if (date, time) == (appointment["date"], appointment["time"]):
        raise ActionError("invalid_value", f"appointment {appointment_id} is already on {date} at {time}")
    _free_slot(db, appointment["doctor_id"], date, time, skip=appointment["appointment_id"])
    return db.update("appointments", appointment_id, date=date, time=time)


@action(
    collection="appointments",
    key="appointment_id",
    description="Cancel a scheduled appointment, up to the day before it.",
    goal="cancel appointment {appointment_id}",
)
def cancel_appointment(db: Db, appointment_id: str) -> dict:
    appointment = db.get("appointments", appointment_id)
    _notice(db, appointment, "cancelled")
    return db.update("appointments", appointment_id, status="cancelled")


# --------------------------------------------------------------------------- seeding


@seeder("patients")
def patient_history(record: dict, db: Db, rng) -> None:
    record["no_shows"] = rng.choice((0, 0, 0, 1, 2, 3))


@seeder("doctors")
def doctor_room(record: dict, db: Db, rng) -> None:
    record["full_name"] = "Dr. " + record["full_name"].split()[-1]
    record["room"] = f"R-{rng.randint(1, 24)}"


@seeder("appointments")
def appointment_slot(record: dict, db: Db, rng) -> None:
    """Scheduled appointments are from today to 3 weeks ahead, checked-in ones today, completed and
    missed ones in the past; every slot is a half hour, and no doctor has two live appointments in one."""
    days = {"scheduled": (0, 21), "checked_in": (0, 0), "completed": (-60, -1), "no_show": (-60, -1)}
    lo, hi = days.get(record["status"], (-30, 21))
    record["reason"] = rng.choice(REASONS)
    while True:
        record["date"] = (db.today + dt.timedelta(days=rng.randint(lo, hi))).isoformat()
        record["time"] = rng.choice(SLOTS)
        clash = [
            a
            for a in db.find("appointments", doctor_id=record["doctor_id"], date=record["date"], time=record["time"])
            if a["appointment_id"] != record["appointment_id"] and a["status"] in ("scheduled", "checked_in")
        ]
        if not clash or record["status"] not in ("scheduled", "checked_in"):
            return
