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
    # the library's progress lines, also on a terminal: a flow run's log in Prefect shows them (library_log)
    os.environ.setdefault("WORLDSMITH_PROGRESS_LINES", "1")
    # a library line logged outside a flow run (a flow's `.fn` called directly) is not the API's: no warning
    os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")
    if "PREFECT_API_URL" not in os.environ and _answers(UI_HOST, UI_PORT):
        os.environ["PREFECT_API_URL"] = f"http://{UI_HOST}:{UI_PORT}/api"


def library_log() -> None:
    """The library logs on `worldsmith` (progress lines every ~30 s, a training's steps, warnings; it never imports
    Prefect): to stdout, as the CLI does, and to the Prefect run's log (the UI), once. Call after Prefect's import."""
    import logging

    from prefect.logging.handlers import APILogHandler, PrefectConsoleHandler

    from worldsmith.progress import log_to_stdout

    log_to_stdout()
    logger = logging.getLogger("worldsmith")
    if not any(isinstance(h, APILogHandler) for h in logger.handlers):
        logger.addHandler(APILogHandler())
    for h in logging.getLogger().handlers:  # Prefect's console (stderr) would print each line again
        if isinstance(h, PrefectConsoleHandler) and not any(isinstance(f, _NotTheLibrarys) for f in h.filters):
            h.addFilter(_NotTheLibrarys())


class _NotTheLibrarys:
    def filter(self, record) -> bool:
        return not record.name.startswith("worldsmith")
