"""Progress for long work: records done, rate, ETA. On a terminal, rich bars (stderr); when stdout is not a
terminal (CI, `nohup`, `make synth > log`, a Prefect worker), a log line every `LINE_EVERY_S` seconds (also while
no item ends) and each time another tenth of the items is done: done / total, rate, ETA, kept so far. The lines go
to the `worldsmith.progress` logger: the library never configures logging; the CLI and the flows call
`log_to_stdout`, and the flows hand the same logger to Prefect's log.

`ThroughputWatch` warns when the model server's generated tokens/s falls far below what it did at the start (another
process taking the cores it computes on), on the logger `worldsmith.progress` too.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

T = TypeVar("T")
console = Console(stderr=True)
log = logging.getLogger("worldsmith.progress")

LINE_EVERY_S = 30.0  # a progress line at least this often when stdout is not a terminal
LINE_EVERY_SHARE = 0.1  # and each time another tenth of the items is done
TICK_S = 5.0  # how often the line thread looks (and a ThroughputWatch samples)
LINES_ENV = "WORLDSMITH_PROGRESS_LINES"  # "1": lines on a terminal too (the flows set it: Prefect's log shows them)


def lines_wanted() -> bool:
    """Progress lines, not only bars: stdout is not a terminal, or the flows asked for them."""
    return os.environ.get(LINES_ENV) == "1" or not sys.stdout.isatty()


class _CurrentStdout(logging.StreamHandler):
    """A stream handler on whatever `sys.stdout` is when a line is written: a face that swaps stdout (a console, a
    captured run) still gets the lines, and a handler made earlier never writes to a stream that is gone."""

    @property
    def stream(self):
        return sys.stdout

    @stream.setter
    def stream(self, _value):
        pass


def log_to_stdout() -> logging.Handler:
    """Send the library's log (logger `worldsmith`: progress lines, warnings) to stdout with the time; once. For the
    faces (CLI, flows), not the library."""
    root = logging.getLogger("worldsmith")
    for h in root.handlers:
        if getattr(h, "worldsmith_stdout", False):
            return h
    handler = _CurrentStdout()
    handler.worldsmith_stdout = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%Y-%m-%d %H:%M:%S"))
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return handler


def duration(seconds: float) -> str:
    """4s, 3m05s, 1h02m."""
    s = int(round(max(seconds, 0)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class ProgressLines:
    """The log lines of one piece of long work: `update(done, kept)` as items end; a line each `every_n` items
    (a tenth of the total by default; 1 for a training's steps) and, from a thread of its own, at least every
    `every_s` seconds while it runs, so a log shows life when an item takes minutes. `status` adds the owner's
    words; `on_tick` runs on every tick of the thread (a ThroughputWatch), lines wanted or not."""

    def __init__(
        self,
        description: str,
        total: int,
        every_s: float | None = None,
        every_n: int | None = None,
        status: Callable[[], str] | None = None,
        on_tick: Callable[[], Any] | None = None,
        tick_s: float | None = None,
        enabled: bool | None = None,
        unit: str = "",
        start: int = 0,
        kept: bool = True,
    ):
        self.description, self.total, self.status, self.on_tick, self.unit = description, total, status, on_tick, unit
        self.start, self.show_kept = start, kept  # start: items done before this run (a resumed training)
        self.every_s = every_s or LINE_EVERY_S  # read when made: a test may shorten the module's figures
        self.tick_s = min(tick_s or TICK_S, self.every_s)
        self.every_n = every_n or max(1, round(total * LINE_EVERY_SHARE))
        self.enabled = (lines_wanted() if enabled is None else enabled) and total > 0  # a resumed stage with no work
        self.done = self.kept = start
        self._logged_done, self._logged_at = -1, 0.0
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> ProgressLines:
        self._started = self._logged_at = time.monotonic()
        if self.enabled:
            self.emit()
        if self.enabled or self.on_tick:
            # the caller's context goes along: Prefect's log handler finds its flow run there
            ctx = contextvars.copy_context()
            self._thread = threading.Thread(target=ctx.run, args=(self._ticks,), name="progress-lines", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.tick_s + 1)
        if self.enabled and self._logged_done != self.done:
            self.emit()

    def update(self, done: int, kept: int | None = None) -> None:
        self.done, self.kept = done, done if kept is None else kept
        if self.enabled and self.done - max(self._logged_done, self.start) >= self.every_n:
            self.emit()

    def line(self) -> str:
        elapsed = max(time.monotonic() - self._started, 1e-9)
        rate = (self.done - self.start) / elapsed
        parts = [f"{self.description}: {self.done}/{self.total}{self.unit}"]
        if self.total:
            parts[0] += f" ({100 * self.done / self.total:.0f}%)"
        parts.append(f"{rate * 60:.1f}/min" if rate < 1 else f"{rate:.2f}/s")
        left = self.total - self.done
        parts.append(f"ETA {duration(left / rate)}" if rate > 0 and left > 0 else f"{duration(elapsed)} elapsed")
        if self.show_kept:
            parts.append(f"kept {self.kept}")
        if self.status:
            parts.append(self.status())
        return " · ".join(p for p in parts if p)

    def emit(self) -> None:
        with self._lock:
            log.info(self.line())
            self._logged_done, self._logged_at = self.done, time.monotonic()

    def _ticks(self) -> None:
        while not self._stop.wait(self.tick_s):
            if self.on_tick is not None:
                try:
                    self.on_tick()
                except Exception:  # a watch's bug must not end the work it watches
                    log.exception("progress: a tick failed")
            if self.enabled and time.monotonic() - self._logged_at >= self.every_s:
                self.emit()


class ThroughputWatch:
    """Warns once, on the log, when generated tokens/s over the last `window_s` falls below 1/`factor` of the rate
    of the first full window with work in flight (what the model server did at the start), and once more when it
    recovers. A window with nothing in flight starts the measure again (an idle server generates nothing)."""

    def __init__(
        self,
        what: str,
        tokens: Callable[[], int],
        busy: Callable[[], bool],
        window_s: float = 120.0,
        factor: float = 3.0,
        hint: str = "",
        clock: Callable[[], float] = time.monotonic,
    ):
        self.what, self.tokens, self.busy, self.hint, self.clock = what, tokens, busy, hint, clock
        self.window_s, self.factor = window_s, factor
        self.samples: deque[tuple[float, int]] = deque()
        self.baseline: float | None = None
        self.slow = False
        self.warnings = 0

    def rate(self) -> float | None:
        """Generated tokens/s over the last full window, None before one is full."""
        if len(self.samples) < 2 or self.samples[-1][0] - self.samples[0][0] < 0.9 * self.window_s:
            return None
        (t0, n0), (t1, n1) = self.samples[0], self.samples[-1]
        return (n1 - n0) / (t1 - t0)

    def tick(self) -> None:
        now = self.clock()
        if not self.busy():
            self.samples.clear()
            return
        self.samples.append((now, self.tokens()))
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.window_s:
            self.samples.popleft()
        rate = self.rate()
        if rate is None:
            return
        if self.baseline is None:
            if rate > 0:
                self.baseline = rate
            return
        if not self.slow and rate < self.baseline / self.factor:
            self.slow, self.warnings = True, self.warnings + 1
            log.warning(
                "%s: the model server generated %.1f tok/s over the last %s, %.0fx below the %.1f tok/s it did at the "
                "start%s",
                self.what,
                rate,
                duration(self.window_s),
                self.baseline / max(rate, 1e-9),
                self.baseline,
                f": {self.hint}" if self.hint else "",
            )
        elif self.slow and rate >= self.baseline / self.factor * 1.5:
            self.slow = False
            log.info("%s: the model server is back to %.1f tok/s (%.1f at the start)", self.what, rate, self.baseline)


def make_progress() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TextColumn("[red]{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


async def gather_with_progress(
    description: str,
    jobs: Iterable[Awaitable[T]],
    total: int,
    on_done: Callable[[T], Any] | None = None,
    failed: Callable[[T], bool] | None = None,
) -> list[T]:
    """Run awaitables concurrently (their own limits bound them), reporting as each ends.

    `on_done` runs for each result as soon as it is ready (e.g. to store it at once).
    """
    results: list[T] = []
    n_failed = 0
    started = time.monotonic()
    with make_progress() as progress, ProgressLines(description, total) as lines:
        task = progress.add_task(description, total=total, rate="", failed=0)
        for future in asyncio.as_completed(list(jobs)):
            result = await future
            results.append(result)
            if failed and failed(result):
                n_failed += 1
            if on_done:
                on_done(result)
            elapsed = max(time.monotonic() - started, 1e-9)
            progress.update(task, advance=1, rate=f"{len(results) / elapsed:.2f}/s", failed=n_failed)
            lines.update(len(results), len(results) - n_failed)
    return results


class LiveProgress:
    """Progress of a stage whose items run concurrently: done / total, in flight, failed,
    generated tokens/s and ETA. `tokens` reads the run's generated-token count."""

    def __init__(
        self,
        description: str,
        total: int,
        tokens: Callable[[], int] | None = None,
        extra: Callable[[], str] | None = None,
        watch_hint: str = "",
    ):
        self.description = description
        self.total = total
        self.tokens = tokens
        self.extra = extra
        self.done = self.failed = self._in_flight = 0
        self._task = None
        # the server's generated tokens/s against its start, while episodes are in flight
        self.watch = (
            ThroughputWatch(description, tokens, lambda: self._in_flight > 0, hint=watch_hint) if tokens else None
        )
        self.lines = ProgressLines(
            description,
            total,
            status=lambda: self.status(markup=False),
            on_tick=self.watch.tick if self.watch else None,
        )
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
            refresh_per_second=2,
        )

    def __enter__(self) -> LiveProgress:
        self._started = time.monotonic()
        self._tokens0 = self.tokens() if self.tokens else 0
        self._progress.__enter__()
        self._task = self._progress.add_task(self.description, total=self.total, status="")
        self._refresh()
        self.lines.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.lines.__exit__(*exc)
        self._refresh()
        self._progress.__exit__(*exc)

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @in_flight.setter
    def in_flight(self, value: int) -> None:
        self._in_flight = value
        if self._task is not None:
            self._refresh()

    def advance(self, failed: bool = False) -> None:
        self.done += 1
        self.failed += bool(failed)
        self._progress.update(self._task, advance=1)
        self._refresh()
        self.lines.update(self.done, self.done - self.failed)

    def status(self, markup: bool = True) -> str:
        elapsed = max(time.monotonic() - self._started, 1e-9)
        failed = f"[red]{self.failed} failed[/red]" if markup else f"{self.failed} failed"
        parts = [f"{self.in_flight} in flight", failed]
        if self.tokens:
            parts.append(f"{(self.tokens() - self._tokens0) / elapsed:.1f} tok/s")
        if self.extra:
            parts.append(self.extra())
        return " · ".join(parts)

    def _refresh(self) -> None:
        self._progress.update(self._task, status=self.status())
