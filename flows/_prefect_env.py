"""Prefect settings shared by the flow scripts (set before Prefect is imported)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UI_HOST, UI_PORT = "127.0.0.1", 4200


def _answers(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def use_local_server_if_up() -> None:
    """Offline-friendly defaults, and report to the local Prefect server when it runs."""
    os.environ.setdefault("PREFECT_HOME", str(ROOT / ".prefect"))
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    if "PREFECT_API_URL" not in os.environ and _answers(UI_HOST, UI_PORT):
        os.environ["PREFECT_API_URL"] = f"http://{UI_HOST}:{UI_PORT}/api"
