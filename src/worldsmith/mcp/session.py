"""Connecting to an MCP server: how to start it (stdio parameters, placeholders), what it
prints that is not JSON-RPC, and listing its tools page by page. Used by the crawl and by
rollouts' real execution."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from worldsmith.mcp.servers import ServerEntry

MAX_PAGES = 1000


def _substitute(value: str, subs: dict[str, str]) -> str:
    for k, v in subs.items():
        value = value.replace("{" + k + "}", v)
    return value


def _unsubstitute(obj: Any, subs: dict[str, str]) -> Any:
    """Put placeholders back where a temporary path leaked into a tool spec (keeps it stable)."""
    if isinstance(obj, str):
        for k, v in sorted(subs.items(), key=lambda kv: -len(kv[1])):
            if v:
                obj = obj.replace(v, "{" + k + "}")
        return obj
    if isinstance(obj, list):
        return [_unsubstitute(x, subs) for x in obj]
    if isinstance(obj, dict):
        return {k: _unsubstitute(v, subs) for k, v in obj.items()}
    return obj


def _resolve_command(entry: ServerEntry, venv: Path | None, subs: dict[str, str]) -> tuple[str, list[str]]:
    """argv[0] (absolute where it can be found) and the rest, placeholders substituted."""
    if entry.kind == "package":
        assert venv is not None and entry.package
        argv = list(entry.command or [entry.package])
        exe = venv / "bin" / argv[0]
        if not exe.exists():
            scripts = sorted(
                p.name
                for p in (venv / "bin").iterdir()
                if p.is_file() and not p.name.startswith(("python", "pip", "activate", "Activate"))
            )
            raise FileNotFoundError(
                f"no console script {argv[0]!r} in the venv; it has: {', '.join(scripts) or 'none'}"
            )
        cmd = str(exe)
    else:
        argv = list(entry.command or [])
        if os.sep in argv[0]:
            found = argv[0] if os.access(argv[0], os.X_OK) and os.path.isfile(argv[0]) else None
        else:
            found = shutil.which(argv[0])
        if found is None:
            where = "is not an executable file" if os.sep in argv[0] else "not found on PATH"
            raise FileNotFoundError(f"command {argv[0]!r} {where}")
        cmd = found
    rest = [_substitute(a, subs) for a in [*argv[1:], *entry.args]]
    return cmd, rest


def stdio_params(entry: ServerEntry, venv: Path | None, subs: dict[str, str]) -> Any:
    """How to start a stdio server: its command, arguments, a clean environment and working
    folder (``subs["tmpdir"]``). Also used to execute safe tools for real during rollouts."""
    from mcp import StdioServerParameters
    from mcp.client.stdio import get_default_environment

    cmd, args = _resolve_command(entry, venv, subs)
    env = get_default_environment()
    if venv is not None:
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(venv)
    # a fixed hash seed: a server that builds a description from a set lists it in the
    # same order every time, so a refresh with nothing new gives the same snapshot
    env.update({"PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": "0", "NO_COLOR": "1", "TERM": "dumb"})
    env.update({k: _substitute(v, subs) for k, v in entry.env.items()})
    return StdioServerParameters(command=cmd, args=args, env=env, cwd=subs.get("tmpdir"))


class _StdoutWatch:
    """Wraps a transport's read stream to note what the server sent that was not JSON-RPC
    (the stdio transport hands such lines on as exception values), for the failure reason."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.bad_lines = 0
        self.first_bad: str | None = None

    def _note(self, item: Any) -> Any:
        if isinstance(item, Exception):
            self.bad_lines += 1
            if self.first_bad is None:
                text = str(item)
                m = re.search(r"input_value=(.*?)(, input_type=|$)", text, re.S)
                self.first_bad = (m.group(1) if m else text)[:120]
        return item

    async def receive(self) -> Any:
        return self._note(await self._inner.receive())

    def __aiter__(self) -> _StdoutWatch:
        return self

    async def __anext__(self) -> Any:
        return self._note(await self._inner.__anext__())

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _StdoutWatch:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def describe(self) -> str:
        if not self.bad_lines:
            return ""
        return f"; stdout had {self.bad_lines} non-JSON-RPC line(s), first: {self.first_bad}"


@contextlib.asynccontextmanager
async def _watched(transport: Any, watch: list[_StdoutWatch]):
    async with transport as (read, write):
        w = _StdoutWatch(read)
        watch.append(w)
        yield w, write


async def _list_tools_raw(client: Any) -> tuple[list[dict[str, Any]], int]:
    """Every page of tools/list as raw dicts, following nextCursor; never calls a tool."""
    import mcp_types as types

    adapter = TypeAdapter(dict[str, Any])
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    for page in range(1, MAX_PAGES + 1):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        raw = await client.session.send_request(types.ListToolsRequest(params=params), adapter)
        page_tools = raw.get("tools")
        if not isinstance(page_tools, list):
            raise ValueError(f"tools/list page {page} has no 'tools' list")
        tools.extend(t for t in page_tools if isinstance(t, dict))
        cursor = raw.get("nextCursor")
        if cursor is None or cursor == "":
            return tools, page
        if cursor in seen:
            raise ValueError(f"tools/list cursor {cursor!r} repeats (page {page}); the server loops")
        seen.add(cursor)
    raise ValueError(f"tools/list still paging after {MAX_PAGES} pages")


_quiet = {"depth": 0, "level": 0}


@contextlib.contextmanager
def _quiet_mcp_logs():
    """The SDK logs a traceback for every unparseable stdout line; a crawl of strangers'
    servers is expected to meet those, and the reason ends up in the result anyway.
    Counted, so overlapping crawls in one event loop restore the level only at the end."""
    import logging

    logger = logging.getLogger("mcp.client.stdio")
    if _quiet["depth"] == 0:
        _quiet["level"] = logger.level
        logger.setLevel(logging.CRITICAL)
    _quiet["depth"] += 1
    try:
        yield
    finally:
        _quiet["depth"] -= 1
        if _quiet["depth"] == 0:
            logger.setLevel(_quiet["level"])
