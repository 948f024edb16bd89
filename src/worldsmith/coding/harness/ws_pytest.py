"""pytest plugin, loaded in the sandbox with `-p ws_pytest`: every test's outcome by node id and each
failure's text, written as JSON to the file named by $WS_PYTEST_REPORT when the session ends."""

import json
import os

_RANK = {"setup-ok": -1, "passed": 0, "xfailed": 0, "skipped": 1, "xpassed": 2, "failed": 3, "error": 3}
_outcomes: dict = {}
_failures: dict = {}


def _merge(nodeid, outcome, text=""):
    prev = _outcomes.get(nodeid)
    if prev is None or _RANK[outcome] > _RANK[prev]:
        _outcomes[nodeid] = outcome
    if text and nodeid not in _failures:
        _failures[nodeid] = text[-6000:]


def pytest_runtest_logreport(report):
    if report.when == "call":
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        else:
            outcome = report.outcome
    elif report.failed:
        outcome = "error"
    elif report.skipped:
        outcome = "skipped"
    else:
        outcome = "setup-ok"
    text = report.longreprtext if report.failed else ""
    _merge(report.nodeid, outcome, text)


def pytest_collectreport(report):
    if report.failed:
        _merge(report.nodeid or "<collection>", "error", report.longreprtext)


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("WS_PYTEST_REPORT")
    if not path:
        return
    tests = {k: ("passed" if v == "setup-ok" else v) for k, v in _outcomes.items()}
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"tests": tests, "failures": _failures, "exitstatus": int(exitstatus)}, f)
