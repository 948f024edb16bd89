"""Real execution, as K2 does for code: tools of crawled servers that are safe to run
offline (read-only, no network, `safe_to_execute` in servers.yaml) are called through MCP
instead of simulated. Each server runs in its own task that owns the MCP session (anyio
scopes must be left by the task that entered them); episodes send it requests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from worldsmith.mcp.servers import ServerEntry, load_server_list
from worldsmith.mcp.session import stdio_params
from worldsmith.mcp.venvs import ensure_venv
from worldsmith.vocab import error_content


class RealExecutionError(RuntimeError):
    pass


class _Server:
    def __init__(self, entry: ServerEntry):
        self.entry = entry
        self.queue: asyncio.Queue = asyncio.Queue()
        self.ready: asyncio.Future | None = None
        self.task: asyncio.Task | None = None
        self.error: str | None = None


class RealExecutor:
    """Lazily starts each allowed server on its first call; a server that cannot start is
    reported once (`unavailable`) and its tools are simulated instead."""

    def __init__(self, entries: list[ServerEntry], cache_dir: str | Path, timeout_s: float, log_dir: str | Path):
        self.servers = {e.name: _Server(e) for e in entries}
        self.cache_dir = Path(cache_dir).expanduser()
        self.timeout_s = timeout_s
        self.log_dir = Path(log_dir)
        self._lock = asyncio.Lock()

    @classmethod
    def from_config(
        cls, names: list[str], servers_file: Path, cache_dir: str, timeout_s: float, log_dir: Path
    ) -> RealExecutor:
        entries = {e.name: e for e in load_server_list(servers_file)}
        chosen = []
        for name in names:
            entry = entries.get(name)
            if entry is None:
                raise ValueError(f"rollouts.real_execution.servers: {name!r} is not in {servers_file}")
            if not entry.safe_to_execute:
                raise ValueError(
                    f"rollouts.real_execution.servers: {name!r} is not marked safe_to_execute in {servers_file}"
                )
            chosen.append(entry)
        return cls(chosen, cache_dir, timeout_s, log_dir)

    def handles(self, server: str | None) -> bool:
        s = self.servers.get(server or "")
        return s is not None and s.error is None

    @property
    def unavailable(self) -> dict[str, str]:
        return {n: s.error for n, s in self.servers.items() if s.error}

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> tuple[bool, str, Any]:
        """(ok, text for the agent, structured result or None). Raises RealExecutionError when
        the server cannot be started (the caller then simulates)."""
        s = self.servers[server]
        async with self._lock:
            if s.task is None:
                s.ready = asyncio.get_running_loop().create_future()
                s.task = asyncio.create_task(self._serve(s))
        try:
            await asyncio.shield(s.ready)
        except Exception as exc:
            s.error = s.error or f"{exc.__class__.__name__}: {exc}"
            raise RealExecutionError(s.error) from None
        done: asyncio.Future = asyncio.get_running_loop().create_future()
        await s.queue.put((tool, arguments, done))
        try:
            result = await done
        except RealExecutionError as exc:  # the server is up but this call failed: the agent sees the error
            return False, error_content("execution_error", str(exc)), None
        texts = [c.text for c in (result.content or []) if getattr(c, "type", None) == "text"]
        structured = getattr(result, "structured_content", None)
        text = "\n".join(texts) if texts else json.dumps(structured, ensure_ascii=False)
        return not bool(result.is_error), text, structured

    async def _serve(self, s: _Server) -> None:
        from mcp import Client

        tmpdir = tempfile.mkdtemp(prefix=f"worldsmith-exec-{s.entry.name}-")
        self.log_dir.mkdir(parents=True, exist_ok=True)
        try:
            venv = None
            if s.entry.kind == "package":
                venv = await asyncio.to_thread(ensure_venv, s.entry, self.cache_dir, log_dir=self.log_dir)
            params = stdio_params(s.entry, venv, {"tmpdir": tmpdir, "venv": str(venv or "")})
            with open(self.log_dir / f"{s.entry.name}.exec.stderr.log", "w") as errlog:
                from mcp.client.stdio import stdio_client

                async with asyncio.timeout(self.timeout_s):
                    client_cm = Client(stdio_client(params, errlog=errlog), read_timeout_seconds=self.timeout_s)
                    client = await client_cm.__aenter__()
                try:
                    s.ready.set_result(None)
                    while (item := await s.queue.get()) is not None:
                        tool, arguments, done = item
                        try:
                            done.set_result(
                                await client.call_tool(tool, arguments, read_timeout_seconds=self.timeout_s)
                            )
                        except Exception as exc:  # a failed call is the caller's to record
                            done.set_exception(RealExecutionError(f"{exc.__class__.__name__}: {exc}"))
                finally:
                    with contextlib.suppress(Exception):
                        await client_cm.__aexit__(None, None, None)
        except Exception as exc:
            if not s.ready.done():
                s.ready.set_exception(exc)
        finally:
            shutil.rmtree(tmpdir, ignore_errors=True)

    async def aclose(self) -> None:
        for s in self.servers.values():
            if s.task is not None and not s.task.done():
                await s.queue.put(None)
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(s.task, timeout=10)
