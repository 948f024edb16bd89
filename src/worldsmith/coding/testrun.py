"""Running a repository's tests in the sandbox and reading every test's outcome (the harness's
pytest plugin writes them by node id), as the SWE-bench harness reads FAIL_TO_PASS and PASS_TO_PASS."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field

from worldsmith.coding.sandbox import Box, Limits, Result, python_executable, run

PASSING = frozenset({"passed", "xfailed"})
FAILING = frozenset({"failed", "error"})


@dataclass
class TestRun:
    __test__ = False  # not a pytest class

    outcomes: dict[str, str]  # node id -> passed | failed | error | skipped | xfailed | xpassed
    failures: dict[str, str]  # node id -> pytest's failure text (--tb=short)
    result: Result
    exitstatus: int | None = None  # pytest's, as its plugin saw it (None: no report: the run was killed)
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> set[str]:
        return {t for t, o in self.outcomes.items() if o in PASSING}

    @property
    def failed(self) -> set[str]:
        return {t for t, o in self.outcomes.items() if o in FAILING}

    @property
    def complete(self) -> bool:
        """The run ended by itself and reported (not killed at a limit)."""
        return self.exitstatus is not None and not self.result.killed


def pytest_argv(tests: list[str] | None = None, verbose: bool = False) -> list[str]:
    argv = [python_executable(), "-m", "pytest", "-p", "ws_pytest", "-p", "no:cacheprovider", "-o", "addopts="]
    argv += ["--tb=short", "-q", "--disable-warnings", "-o", "console_output_style=classic", "--color=no"]
    if verbose:
        argv.append("-rfE")
    return argv + list(tests or [])


def run_tests(
    box: Box,
    python_path: str = ".",
    tests: list[str] | None = None,
    limits: Limits | None = None,
    backend: str = "auto",
) -> TestRun:
    """pytest over `tests` (node ids or paths; the whole suite when none) in `box`."""
    token = secrets.token_hex(8)
    report_name = f"ws-pytest-{token}.json"
    roots = [p.strip() for p in python_path.split(":") if p.strip()] or ["."]
    pythonpath = ":".join(["{harness}"] + ["{repo}" if r == "." else "{repo}/" + r.strip("/") for r in roots])
    env = {"PYTHONPATH": pythonpath, "WS_PYTEST_REPORT": "{tmp}/" + report_name}
    result = run(pytest_argv(tests, verbose=True), box, limits, env=env, backend=backend)
    path = box.tmp / report_name
    problems: list[str] = []
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError):
        report = None
        problems.append("no report from pytest" + (" (killed at the limits)" if result.killed else ""))
    finally:
        path.unlink(missing_ok=True)
    if report is None:
        return TestRun({}, {}, result, None, problems)
    return TestRun(report.get("tests", {}), report.get("failures", {}), result, report.get("exitstatus"), problems)
