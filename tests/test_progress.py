"""Progress that shows in a log: when stdout is not a terminal (CI, nohup, `make synth > log`, a Prefect worker)
each long stage logs done / total, rate, ETA and what it kept, at least every LINE_EVERY_S seconds (also while no
item ends) and each tenth of the items; a training logs each step; a model server that falls far below the
generated tokens/s it did at the start is named in a warning."""

from __future__ import annotations

import asyncio
import logging
import re
import sys
import time

import pytest

from worldsmith import progress
from worldsmith.progress import LiveProgress, ProgressLines, ThroughputWatch, gather_with_progress


@pytest.fixture
def lines(caplog):
    caplog.set_level(logging.INFO, logger="worldsmith.progress")
    return lambda: [r.getMessage() for r in caplog.records if r.name == "worldsmith.progress"]


@pytest.fixture
def quick(monkeypatch):
    """A line every 0.2 s, looked at every 0.05 s (30 s and 5 s in a run)."""
    monkeypatch.setattr(progress, "LINE_EVERY_S", 0.2)
    monkeypatch.setattr(progress, "TICK_S", 0.05)


def test_lines_are_wanted_when_stdout_is_not_a_terminal(monkeypatch):
    monkeypatch.delenv(progress.LINES_ENV, raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert not progress.lines_wanted()  # a terminal has the bars
    monkeypatch.setenv(progress.LINES_ENV, "1")  # the flows: Prefect's log shows them
    assert progress.lines_wanted()
    monkeypatch.delenv(progress.LINES_ENV)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    assert progress.lines_wanted()


def test_a_line_comes_every_interval_while_no_item_ends(quick, lines):
    """An episode may take minutes: the log shows life between them (rollouts printed nothing for 44 minutes)."""
    with ProgressLines("rollouts", 40, enabled=True, status=lambda: "2 in flight"):
        time.sleep(0.75)
    got = lines()
    assert len(got) >= 4, got  # the opening line, then one each 0.2 s
    assert got[0].startswith("rollouts: 0/40 (0%)") and "kept 0" in got[0] and got[0].endswith("2 in flight")


def test_a_line_each_tenth_with_rate_eta_and_what_was_kept(lines):
    with ProgressLines("tasks", 20, every_s=3600, enabled=True) as p:
        for done in range(1, 21):
            p.update(done, kept=done - done // 5)
    got = lines()
    assert len(got) == 1 + 10, got  # the opening line, then every 2 items (a tenth of 20)
    assert re.match(r"tasks: 2/20 \(10%\) · [\d.]+/s · ETA \d+s · kept 2$", got[1]), got[1]
    assert re.match(r"tasks: 20/20 \(100%\) · [\d.]+/s · 0s elapsed · kept 16$", got[-1]), got[-1]


def test_no_lines_for_a_stage_with_nothing_to_do(lines):
    with ProgressLines("tasks", 0, enabled=True):
        pass
    assert lines() == []


def test_no_lines_on_a_terminal(lines):
    with ProgressLines("tasks", 20, every_s=0.01, tick_s=0.01, enabled=False) as p:
        p.update(20)
        time.sleep(0.05)
    assert lines() == []


def test_the_stages_gather_logs_its_lines(monkeypatch, lines):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)

    async def job(i):
        await asyncio.sleep(0.001 * i)
        return i

    out = asyncio.run(
        gather_with_progress("agents", [job(i) for i in range(10)], total=10, failed=lambda i: i % 4 == 0)
    )
    assert sorted(out) == list(range(10))
    assert lines()[-1].startswith("agents: 10/10 (100%)") and "kept 7" in lines()[-1]


def test_the_rollouts_progress_logs_episodes_in_flight_and_tokens(quick, monkeypatch, lines):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    tokens = [0]
    with LiveProgress("rollouts", 3, tokens=lambda: tokens[0], extra=lambda: "limit 2") as p:
        p.in_flight = 2
        time.sleep(0.3)
        tokens[0] = 300
        p.in_flight = 1
        p.advance()
        p.advance(failed=True)
    got = lines()
    assert any(
        re.search(r"rollouts: 0/3 \(0%\) · .* · kept 0 · 2 in flight · 0 failed · 0.0 tok/s · limit 2$", g) for g in got
    )
    assert re.search(r"rollouts: 2/3 \(67%\) · .* · kept 1 · 1 in flight · 1 failed · [\d.]+ tok/s · limit 2$", got[-1])
    assert "[red]" not in "".join(got)  # the bar's markup stays out of a log


def test_the_library_log_goes_to_stdout_with_the_time(capsys):
    before = list(logging.getLogger("worldsmith").handlers)  # a flow imported earlier may have attached it
    handler = progress.log_to_stdout()
    try:
        assert progress.log_to_stdout() is handler  # once
        logging.getLogger("worldsmith.progress").info("rollouts: 1/2 (50%)")
        out = capsys.readouterr().out
        assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d rollouts: 1/2 \(50%\)$", out.strip()), out
    finally:
        if handler not in before:
            logging.getLogger("worldsmith").removeHandler(handler)


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_a_server_far_below_its_start_rate_is_warned_once_and_its_recovery_noted(caplog):
    """The issue's run: llama.cpp slowed 5-40x per call while light work ran beside it, and nothing said so."""
    caplog.set_level(logging.INFO, logger="worldsmith.progress")
    clock, tokens, busy = Clock(), [0], [True]
    watch = ThroughputWatch("rollouts", lambda: tokens[0], lambda: busy[0], window_s=60, hint="llm.server.threads: 2")
    watch.clock = clock

    def run(seconds, rate):
        for _ in range(int(seconds / 5)):
            clock.t += 5
            tokens[0] += int(rate * 5)
            watch.tick()

    watch.tick()
    run(60, 150)  # the first full window: the server's rate at the start
    assert watch.baseline == pytest.approx(150, rel=0.05) and not caplog.records
    run(60, 60)  # 2.5x below: not "far"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    run(120, 10)  # 15x below: warned once, however long it lasts
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and watch.warnings == 1, warnings
    assert re.search(
        r"generated [\d.]+ tok/s over the last 1m00s, \d+x below the 15\d\.\d tok/s it did at the start: llm",
        warnings[0],
    )
    run(120, 150)
    assert "back to" in caplog.records[-1].getMessage() and not watch.slow
    busy[0] = False  # nothing in flight: an idle server is no slow one
    run(120, 0)
    assert watch.warnings == 1 and not watch.samples


def test_the_flows_hand_the_library_log_to_prefects_and_to_stdout():
    """The library never imports Prefect: the flows attach its log (logger `worldsmith`) to the flow run's log in
    Prefect and to stdout, and keep Prefect's console from printing each line a second time."""
    import synth  # flows/synth.py
    from prefect.logging.handlers import APILogHandler, PrefectConsoleHandler

    handlers = logging.getLogger("worldsmith").handlers
    assert any(isinstance(h, APILogHandler) for h in handlers)
    assert any(getattr(h, "worldsmith_stdout", False) for h in handlers)
    consoles = [h for h in logging.getLogger().handlers if isinstance(h, PrefectConsoleHandler)]
    line = logging.LogRecord("worldsmith.progress", logging.INFO, __file__, 1, "rollouts: 1/2", None, None)
    assert consoles and all(not h.filter(line) for h in consoles)
    assert synth.os.environ[progress.LINES_ENV] == "1"  # lines on a terminal too: the run's log in Prefect


def test_worldsmith_synth_piped_to_a_file_logs_its_progress_lines(tmp_path):
    """`worldsmith synth > log`: the stage's lines reach stdout, with the time (against a local server that answers
    every call with an empty reply: the smoke stage records each as failed, and its lines say so)."""
    import json
    import subprocess
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from pathlib import Path

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            body = json.dumps(
                {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "m",
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ""}}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    root = Path(__file__).resolve().parent.parent
    sets = [
        f"llm.endpoints.local.urls=[http://127.0.0.1:{server.server_address[1]}/v1]",
        f"run.data_dir={tmp_path}",
        "smoke.requests=2",
        "llm.retry.max_attempts=1",
    ]
    command = [sys.executable, "-m", "worldsmith.cli", "synth", "--stage", "smoke", "-c", str(root / "pipeline.yaml")]
    try:
        done = subprocess.run(
            command + [a for s in sets for a in ("--set", s)], capture_output=True, text=True, timeout=120, cwd=root
        )
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr[-2000:]
    lines = re.findall(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d smoke: .*$", done.stdout, re.M)
    assert re.match(r".* smoke: 0/4 \(0%\) · .* · kept 0$", lines[0]), done.stdout
    assert re.match(r".* smoke: 4/4 \(100%\) · .* · kept 0$", lines[-1]), done.stdout
