"""Progress for long work: records done, rate, ETA (rich), quiet when not a terminal."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

T = TypeVar("T")
console = Console(stderr=True)


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
    with make_progress() as progress:
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
    ):
        self.description = description
        self.total = total
        self.tokens = tokens
        self.extra = extra
        self.done = self.failed = self._in_flight = 0
        self._task = None
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
        return self

    def __exit__(self, *exc: Any) -> None:
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

    def status(self) -> str:
        elapsed = max(time.monotonic() - self._started, 1e-9)
        parts = [f"{self.in_flight} in flight", f"[red]{self.failed} failed[/red]"]
        if self.tokens:
            parts.append(f"{(self.tokens() - self._tokens0) / elapsed:.1f} tok/s")
        if self.extra:
            parts.append(self.extra())
        return " · ".join(parts)

    def _refresh(self) -> None:
        self._progress.update(self._task, status=self.status())
