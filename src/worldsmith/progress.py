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
