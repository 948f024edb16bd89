"""Crawl real MCP servers for their tool specs; the snapshot keeps them (see `snapshot`).

Each package server is installed into its own cached virtual environment (`venvs`),
started over stdio, asked for its tools (following ``nextCursor``) and stopped again; no
tool is ever called. A URL entry is reached over streamable HTTP. A server that fails to
install, start or answer within its timeout is recorded with the reason and skipped.
`run_crawl` does load -> crawl -> write the snapshot in one call.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from worldsmith.mcp.servers import DEFAULT_TIMEOUT_S, ServerEntry, ServerListError, load_server_list
from worldsmith.mcp.session import (
    _list_tools_raw,
    _quiet_mcp_logs,
    _StdoutWatch,
    _substitute,
    _unsubstitute,
    _watched,
    stdio_params,
)
from worldsmith.mcp.snapshot import write_snapshot
from worldsmith.mcp.venvs import DEFAULT_INSTALL_TIMEOUT_S, ensure_venv, now_iso, tail_lines

CLIENT_NAME = "worldsmith-crawler"

ErrorKind = Literal["install", "start", "timeout", "protocol", "disabled"]


class CrawlResult(BaseModel):
    """What one server answered (or why it did not)."""

    server: str
    ok: bool
    tools: list[dict[str, Any]] = Field(default_factory=list)
    """Raw MCP tool objects as the server sent them (camelCase keys: inputSchema, annotations...)."""
    server_name: str | None = None
    server_version: str | None = None
    protocol_version: str | None = None
    package: str | None = None
    package_version: str | None = None
    crawled_at: str = ""
    error: str | None = None
    error_kind: ErrorKind | None = None
    seconds: float = 0.0
    """Start + list time (install time excluded)."""
    install_seconds: float = 0.0
    pages: int = 0


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (inner or list(exc.exceptions))[0]
    return exc


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, ValidationError):
        text = f"invalid result: {exc.error_count()} error(s): " + "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3]
        )
    elif type(exc).__name__ not in text:
        text = f"{type(exc).__name__}: {text}"
    return text[:800]


def _stderrtail_lines(path: Path | None, n: int = 6) -> str:
    if path is None or not path.is_file():
        return ""
    try:
        data = path.read_bytes()[-4000:].decode(errors="replace")
    except OSError:
        return ""
    tail = tail_lines(data, n)
    return f"\nstderr: {tail}" if tail else ""


async def crawl_server(
    entry: ServerEntry,
    cache_dir: str | Path,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    log_dir: str | Path | None = None,
    *,
    install_timeout_s: float = DEFAULT_INSTALL_TIMEOUT_S,
) -> CrawlResult:
    """Install (if a package), start, list every tool, stop. Never raises for a bad server."""
    result = _new_result(entry)
    venv: Path | None = None
    if entry.kind == "package":
        venv = await _install(entry, cache_dir, log_dir, install_timeout_s, result)
        if venv is None:
            return result
    return await _crawl_started(entry, venv, timeout_s, log_dir, result)


def _new_result(entry: ServerEntry) -> CrawlResult:
    return CrawlResult(
        server=entry.name, ok=False, package=entry.package, package_version=entry.version, crawled_at=now_iso()
    )


async def _install(
    entry: ServerEntry, cache_dir: str | Path, log_dir: str | Path | None, install_timeout_s: float, result: CrawlResult
) -> Path | None:
    """ensure_venv in a thread; on failure the reason goes into ``result`` and None comes back."""
    t0 = time.monotonic()
    try:
        return await asyncio.to_thread(
            ensure_venv, entry, cache_dir, log_dir=log_dir, install_timeout_s=install_timeout_s
        )
    except Exception as e:  # InstallError, OSError
        result.error, result.error_kind = f"install failed: {_describe(e)}", "install"
        return None
    finally:
        result.install_seconds = round(time.monotonic() - t0, 2)


async def _crawl_started(
    entry: ServerEntry, venv: Path | None, timeout_s: float, log_dir: str | Path | None, result: CrawlResult
) -> CrawlResult:
    """One connection attempt; with mode "auto", a second one with the handshake alone when
    the first died during the handshake (old servers that crash on an unknown first request)."""
    t0 = time.monotonic()
    await _attempt(entry, venv, timeout_s, log_dir, result, entry.mode, append=False)
    if (
        entry.mode == "auto"
        and not result.ok
        and result.error_kind == "start"
        and (result.error or "").startswith("handshake failed")
    ):
        first = result.error
        result.error = result.error_kind = None
        await _attempt(entry, venv, timeout_s, log_dir, result, "legacy", append=True)
        if not result.ok and result.error and first:
            result.error += f"\n(first try, with the server/discover probe: {first.splitlines()[0]})"
    result.seconds = round(time.monotonic() - t0, 2)
    return result


async def _attempt(
    entry: ServerEntry,
    venv: Path | None,
    timeout_s: float,
    log_dir: str | Path | None,
    result: CrawlResult,
    mode: str,
    append: bool,
) -> None:
    import anyio
    from mcp import Client
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import Implementation

    timeout = entry.timeout_s or timeout_s
    result.crawled_at = now_iso()
    log_path = None
    if log_dir is not None:
        Path(log_dir).mkdir(parents=True, exist_ok=True)
        log_path = Path(log_dir) / f"{entry.name}.stderr.log"

    stage = "start"
    t0 = time.monotonic()
    tmpdir = tempfile.mkdtemp(prefix=f"worldsmith-crawl-{entry.name}-")
    subs = {"tmpdir": tmpdir, "venv": str(venv or "")}
    errlog = open(log_path, "a" if append else "w") if log_path else open(os.devnull, "w")  # noqa: SIM115
    if append:
        errlog.write(f"\n--- started again, mode={mode} ---\n")
        errlog.flush()
    watch: list[_StdoutWatch] = []
    tools: list[dict[str, Any]] | None = None
    pages = 0
    try:
        if entry.kind == "url":
            transport: Any = streamable_http_client(entry.url or "")
        else:
            for rel, text in entry.files.items():
                target = Path(tmpdir, rel)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(_substitute(text, subs))
            params = stdio_params(entry, venv, subs)
            transport = stdio_client(params, errlog=errlog)
        client = Client(
            _watched(transport, watch),
            mode=mode,
            client_info=Implementation(name=CLIENT_NAME, version="1"),
            cache=None,
        )
        with _quiet_mcp_logs():
            with anyio.fail_after(timeout):
                stage = "handshake"
                async with client:
                    info = client.server_info
                    result.server_name = info.name if info else None
                    result.server_version = info.version if info else None
                    result.protocol_version = client.protocol_version
                    stage = "tools/list"
                    caps = client.server_capabilities
                    try:
                        tools, pages = await _list_tools_raw(client)
                    except Exception as e:
                        if getattr(caps, "tools", None) is None and "not found" in str(e).lower():
                            tools, pages = [], 0  # a server without tools
                        else:
                            raise
                    stage = "shutdown"
    except BaseException as exc:  # noqa: BLE001 - every failure is a recorded result
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        leaf = _leaf(exc)
        if isinstance(exc, asyncio.CancelledError) and not isinstance(leaf, TimeoutError):
            raise
        if stage == "shutdown" and tools is not None:
            pass  # every tool was listed; how the server took its stop does not matter
        else:
            _record_failure(result, leaf, stage, timeout, watch, errlog, log_path)
    finally:
        errlog.close()
        result.seconds = round(time.monotonic() - t0, 2)
        shutil.rmtree(tmpdir, ignore_errors=True)
    if result.error is None and tools is not None:
        result.tools = [_unsubstitute(t, subs) for t in tools]
        result.pages = pages
        result.ok = True


def _record_failure(
    result: CrawlResult,
    leaf: BaseException,
    stage: str,
    timeout: float,
    watch: list[_StdoutWatch],
    errlog: Any,
    log_path: Path | None,
) -> None:
    """Put the reason into ``result``: what went wrong at which stage, plus the server's own
    last words on stderr and any non-JSON-RPC it printed on stdout."""
    if isinstance(leaf, (TimeoutError, asyncio.TimeoutError)):
        kind: ErrorKind = "timeout"
        text = f"no answer within {timeout:g}s (during {stage})"
    elif stage == "start" or isinstance(leaf, OSError) and stage == "handshake" and not watch:
        kind, text = "start", f"cannot start: {_describe(leaf)}"
    elif stage == "handshake":
        detail = _describe(leaf)
        if "Connection closed" in detail:
            detail += " (the server exited or closed its stdout before answering)"
        kind, text = "start", f"handshake failed: {detail}"
    else:
        kind, text = "protocol", f"{stage} failed: {_describe(leaf)}"
    errlog.flush()
    if watch:
        text += watch[0].describe()
    result.error, result.error_kind = text + _stderrtail_lines(log_path), kind
    result.tools = []


async def crawl_all(
    entries: Sequence[ServerEntry],
    cache_dir: str | Path,
    concurrency: int = 3,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    log_dir: str | Path | None = None,
    progress: Callable[[CrawlResult], Any] | None = None,
    *,
    install_concurrency: int = 2,
    install_timeout_s: float = DEFAULT_INSTALL_TIMEOUT_S,
) -> list[CrawlResult]:
    """Crawl ``entries``, ``concurrency`` servers at a time; results in the order given.

    Installs run at most ``install_concurrency`` at once (pip is CPU-heavy); starting and
    listing run ``concurrency`` at once, each bounded by its timeout.
    """
    run_lock = asyncio.Semaphore(max(1, concurrency))
    install_lock = asyncio.Semaphore(max(1, install_concurrency))

    async def one(entry: ServerEntry) -> CrawlResult:
        result = _new_result(entry)
        venv: Path | None = None
        if entry.kind == "package":
            # installs take their own slots, so slow pip runs do not hold up quick servers
            async with install_lock:
                venv = await _install(entry, cache_dir, log_dir, install_timeout_s, result)
        if entry.kind != "package" or venv is not None:
            async with run_lock:
                await _crawl_started(entry, venv, timeout_s, log_dir, result)
        if progress is not None:
            progress(result)
        return result

    return list(await asyncio.gather(*(one(e) for e in entries)))


def run_crawl(
    servers_yaml: Path,
    out_dir: Path,
    cache_dir: Path,
    log_dir: Path,
    concurrency: int = 3,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    only: list[str] | None = None,
    log: Callable[[str], Any] = print,
) -> dict[str, Any]:
    """Load the server list, crawl the enabled servers (or just ``only``, enabled or not),
    merge into the snapshot under ``out_dir`` and return a summary."""
    entries = load_server_list(servers_yaml)
    by_name = {e.name: e for e in entries}
    if only:
        unknown = [n for n in only if n not in by_name]
        if unknown:
            raise ServerListError(f"{servers_yaml}: no server named {', '.join(map(repr, unknown))}")
        todo = [by_name[n] for n in only]
        skipped: list[ServerEntry] = []
    else:
        todo = [e for e in entries if e.enabled]
        skipped = [e for e in entries if not e.enabled]

    t0 = time.monotonic()
    done = 0

    def progress(r: CrawlResult) -> None:
        nonlocal done
        done += 1
        state = f"{len(r.tools)} tools" if r.ok else f"FAILED ({r.error_kind}): {(r.error or '').splitlines()[0]}"
        inst = f", install {r.install_seconds:.0f}s" if r.install_seconds >= 1 else ""
        log(f"[{done}/{len(todo)}] {r.server}: {state} ({r.seconds:.1f}s{inst})")

    log(f"crawling {len(todo)} server(s), {concurrency} at a time, timeout {timeout_s:g}s")
    results = asyncio.run(
        crawl_all(todo, cache_dir, concurrency=concurrency, timeout_s=timeout_s, log_dir=log_dir, progress=progress)
    )
    results += [
        CrawlResult(
            server=e.name,
            ok=False,
            package=e.package,
            package_version=e.version,
            crawled_at=now_iso(),
            error=f"disabled: {e.note}" if e.note else "disabled",
            error_kind="disabled",
        )
        for e in skipped
    ]
    counts = write_snapshot(results, out_dir, known=by_name)
    failed = {r.server: f"{r.error_kind}: {r.error}" for r in results if not r.ok and r.error_kind != "disabled"}
    summary = {
        "servers_crawled": len(todo),
        "servers_ok": sum(1 for r in results if r.ok),
        "servers_failed": len(failed),
        "servers_disabled": len(skipped),
        "servers_stale": counts.get("stale", 0),
        "tools_crawled": sum(len(r.tools) for r in results if r.ok),
        "tools": counts["tools"],
        "servers_in_snapshot": counts["servers_with_tools"],
        "failed": failed,
        "seconds": round(time.monotonic() - t0, 1),
        "out_dir": str(out_dir),
    }
    log(
        f"done in {summary['seconds']}s: {summary['servers_ok']} ok, {summary['servers_failed']} failed "
        f"({summary['servers_stale']} kept stale); snapshot has {summary['tools']} tools from "
        f"{summary['servers_in_snapshot']} servers"
    )
    return summary
