"""Crawl real MCP servers for their tool specs and keep them as a committed snapshot.

`tool_specs/servers.yaml` lists the servers (see `ServerEntry`). Each package server is
installed into its own cached virtual environment (``<cache>/<package>-<version>/``; with uv
when it is there, pip otherwise), started over stdio, asked for its tools (following
``nextCursor``) and stopped again; no tool is ever called. A URL entry is reached over streamable HTTP. A server that fails to install, start or
answer within its timeout is recorded with the reason and skipped.

`write_snapshot` writes ``tools.jsonl`` (one full MCP tool object a line) and
``servers.jsonl`` (one line a server) under ``tool_specs/crawled/`` so the rest of the
pipeline never needs the servers; `run_crawl` does load -> crawl -> write in one call.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

__all__ = [
    "CrawlResult",
    "InstallError",
    "ServerEntry",
    "ServerListError",
    "crawl_all",
    "crawl_server",
    "ensure_venv",
    "load_server_list",
    "load_snapshot",
    "load_snapshot_servers",
    "run_crawl",
    "write_snapshot",
]

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_INSTALL_TIMEOUT_S = 900.0
MAX_PAGES = 1000
STAMP_NAME = ".worldsmith-installed.json"
TOOLS_FILE = "tools.jsonl"
SERVERS_FILE = "servers.jsonl"
CLIENT_NAME = "worldsmith-crawler"

ErrorKind = Literal["install", "start", "timeout", "protocol", "disabled"]

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


# --------------------------------------------------------------------------- server list


class ServerEntry(BaseModel):
    """One server to crawl: a pinned PyPI package, a command line, or a streamable-HTTP URL."""

    model_config = ConfigDict(extra="forbid")

    name: str
    package: str | None = None
    version: str | None = None
    command: list[str] | None = None
    """For a package: the console script inside its venv (default: the package name), optionally
    followed by fixed arguments. Otherwise: a command line whose first word is on PATH."""
    url: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    extra_requirements: list[str] = Field(default_factory=list)
    """More pip requirements installed next to the package (e.g. a pin that fixes a broken release)."""
    files: dict[str, str] = Field(default_factory=dict)
    """Files written into the server's temporary working folder ({tmpdir}) before it starts,
    relative path -> text (for a server that insists on finding a config file or a Makefile)."""
    python: str | None = None
    """Interpreter for the package venv, e.g. "3.12" (found as python3.12 on PATH); default: ours."""
    mode: Literal["auto", "legacy"] = "auto"
    """How to connect: "auto" probes the 2026 ``server/discover`` first and falls back to the
    ``initialize`` handshake (and, if the probe made the server die, starts it again with the
    handshake alone); "legacy" goes straight to ``initialize``."""
    timeout_s: float | None = Field(default=None, gt=0)
    enabled: bool = True
    category: str | None = None
    """A tool_specs/taxonomy.yaml category where one fits (else a short snake_case name)."""
    note: str | None = None
    safe_to_execute: bool = False

    @field_validator("name")
    @classmethod
    def _name_ok(cls, v: str) -> str:
        if not _NAME_RE.match(v):
            raise ValueError(f"name {v!r} must be letters, digits, '.', '_' or '-'")
        return v

    @field_validator("command", mode="before")
    @classmethod
    def _split_command(cls, v: Any) -> Any:
        if isinstance(v, str):
            return shlex.split(v)
        return v

    @field_validator("args", mode="before")
    @classmethod
    def _args_str(cls, v: Any) -> Any:
        if isinstance(v, list):
            # numbers are fine as text (a port); YAML's on/off/yes/no booleans are not: quote them
            return [str(a) if isinstance(a, (int, float)) and not isinstance(a, bool) else a for a in v]
        return v

    @field_validator("env", mode="before")
    @classmethod
    def _env_str(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return {k: (str(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else x) for k, x in v.items()}
        return v

    @field_validator("files")
    @classmethod
    def _files_inside(cls, v: dict[str, str]) -> dict[str, str]:
        for rel in v:
            parts = Path(rel).parts
            if not parts or Path(rel).is_absolute() or ".." in parts:
                raise ValueError(f"file {rel!r} must be a relative path inside {{tmpdir}}")
        return v

    @model_validator(mode="after")
    def _one_kind(self) -> ServerEntry:
        kinds = [k for k, present in (("package", self.package), ("url", self.url)) if present]
        if not kinds and not self.command:
            raise ValueError("give one of 'package' (+ 'version'), 'command' or 'url'")
        if self.url is not None:
            if any([self.package, self.command, self.args, self.env, self.files, self.extra_requirements, self.python]):
                raise ValueError("'url' takes none of package/command/args/env/files/extra_requirements/python")
            if not self.url.startswith(("http://", "https://")):
                raise ValueError(f"'url' must start with http:// or https://, got {self.url!r}")
        if self.package is not None:
            if not self.version:
                raise ValueError(f"package {self.package!r} needs a pinned 'version'")
        elif self.version or self.extra_requirements or self.python:
            raise ValueError("'version', 'extra_requirements' and 'python' only go with 'package'")
        if self.command is not None and not self.command:
            raise ValueError("'command' is empty")
        return self

    @property
    def kind(self) -> Literal["package", "command", "url"]:
        if self.package:
            return "package"
        return "url" if self.url else "command"

    def requirements(self) -> list[str]:
        assert self.package and self.version
        return [f"{self.package}=={self.version}", *self.extra_requirements]


class ServerListError(ValueError):
    """servers.yaml is malformed; the message names the entry and the key."""


def load_server_list(path: str | Path) -> list[ServerEntry]:
    """Read a servers.yaml: a mapping with a ``servers:`` list (or a bare list) of entries."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise ServerListError(f"{path}: not valid YAML: {e}") from e
    if isinstance(data, dict):
        extra = set(data) - {"servers"}
        if extra:
            raise ServerListError(f"{path}: unknown top-level key(s) {sorted(extra)}; expected 'servers'")
        data = data.get("servers")
    if data is None:
        return []
    if not isinstance(data, list):
        raise ServerListError(f"{path}: 'servers' must be a list of entries")
    entries: list[ServerEntry] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(data):
        label = f"entry #{i + 1}"
        if isinstance(raw, dict) and isinstance(raw.get("name"), str):
            label += f" ({raw['name']!r})"
        if not isinstance(raw, dict):
            raise ServerListError(f"{path}: {label}: must be a mapping, got {type(raw).__name__}")
        try:
            entry = ServerEntry.model_validate(raw)
        except ValidationError as e:
            problems = []
            for err in e.errors():
                loc = ".".join(str(p) for p in err["loc"])
                msg = err["msg"]
                if err["type"] == "extra_forbidden":
                    msg = "unknown key"
                elif err["type"] == "string_type" and not isinstance(err.get("input"), (dict, list)):
                    msg += f" (YAML read {err.get('input')!r}; quote it)"
                problems.append(f"key '{loc}': {msg}" if loc else msg)
            raise ServerListError(f"{path}: {label}: " + "; ".join(problems)) from None
        if entry.name in seen:
            raise ServerListError(f"{path}: {label}: key 'name': duplicate of entry #{seen[entry.name] + 1}")
        seen[entry.name] = i
        entries.append(entry)
    return entries


# --------------------------------------------------------------------------- venvs


class InstallError(RuntimeError):
    """pip (or venv creation) failed; the message ends with pip's last lines."""


def _venv_key(entry: ServerEntry) -> str:
    assert entry.package and entry.version
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{entry.package}-{entry.version}")
    if entry.extra_requirements or entry.python:
        h = hashlib.sha256(json.dumps([entry.extra_requirements, entry.python]).encode()).hexdigest()[:8]
        base += f"-{h}"
    return base


def _find_uv() -> str | None:
    """uv installs when it is there (``$WORLDSMITH_UV``, our venv's ``uv`` (a dependency), or
    ``uv`` on PATH; WORLDSMITH_UV=0 turns it off); pip otherwise."""
    exe = os.environ.get("WORLDSMITH_UV")
    if exe in ("0", "false", "no"):
        return None
    beside = Path(sys.executable).parent / "uv"
    exe = exe or (str(beside) if beside.is_file() else None) or shutil.which("uv")
    return exe if exe and os.path.isfile(exe) else None


def _python_for(entry: ServerEntry) -> str:
    """Our interpreter, or a ``pythonX.Y`` that really runs (a pyenv shim for a version that
    is installed but not selected does not, so pyenv's own folders are tried as well)."""
    if not entry.python:
        return sys.executable
    want = entry.python
    candidates = [shutil.which(f"python{want}")]
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates += sorted(str(p) for p in pyenv_root.glob(f"versions/{want}*/bin/python{want}"))
    candidates += [f"/usr/bin/python{want}", f"/usr/local/bin/python{want}"]
    for exe in candidates:
        if not exe or not os.path.isfile(exe):
            continue
        try:
            ok = subprocess.run([exe, "-c", "import venv"], capture_output=True, timeout=30).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if ok:
            return exe
    raise InstallError(f"no working python{want} found (PATH, pyenv)")


def _tail(text: str, n: int = 15) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip() and not ln.startswith("WARNING: Location")]
    return "\n".join(lines[-n:])


def ensure_venv(
    entry: ServerEntry,
    cache_dir: str | Path,
    *,
    log_dir: str | Path | None = None,
    install_timeout_s: float = DEFAULT_INSTALL_TIMEOUT_S,
) -> Path:
    """Install ``entry``'s package into its own cached venv and return the venv folder.

    Idempotent: a venv whose stamp file names the same requirements is reused as is. A
    half-built venv (no stamp) is thrown away and built again. A file lock keeps two
    processes from building the same venv at once. Failures raise `InstallError` with the
    last lines of pip's output (the whole output goes to ``<log_dir>/<name>.install.log``).
    """
    if entry.kind != "package":
        raise ValueError(f"{entry.name}: not a package entry")
    cache_dir = Path(cache_dir).expanduser()
    cache_dir.mkdir(parents=True, exist_ok=True)
    key = _venv_key(entry)
    venv = cache_dir / key
    stamp = venv / STAMP_NAME
    want = {"requirements": entry.requirements(), "python": entry.python or "default"}
    locks = cache_dir / ".locks"
    locks.mkdir(exist_ok=True)
    with open(locks / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.is_file():
            try:
                have = json.loads(stamp.read_text())
            except (OSError, ValueError):
                have = {}
            if {k: have.get(k) for k in want} == want and (venv / "bin" / "python").exists():
                return venv
        if venv.exists():
            shutil.rmtree(venv)
        log_path = Path(log_dir) / f"{entry.name}.install.log" if log_dir else None
        if log_path:
            log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_NO_INPUT": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env.pop("PYTHONPATH", None)
        env.pop("VIRTUAL_ENV", None)
        uv = _find_uv()
        if uv:  # ten times quicker than pip, and lighter on a small machine
            env["UV_NO_PROGRESS"] = "1"
            steps = [
                [uv, "venv", "--quiet", "--seed", "--python", _python_for(entry), str(venv)],
                [uv, "pip", "install", "--python", str(venv / "bin" / "python"), *entry.requirements()],
            ]
        else:
            steps = [
                [_python_for(entry), "-m", "venv", str(venv)],
                [str(venv / "bin" / "python"), "-m", "pip", "install", "--prefer-binary", *entry.requirements()],
            ]
        output = ""
        t0 = time.monotonic()
        for cmd in steps:
            left = install_timeout_s - (time.monotonic() - t0)
            try:
                proc = subprocess.run(
                    cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    text=True, env=env, timeout=max(left, 1), cwd=cache_dir,
                )  # fmt: skip
            except subprocess.TimeoutExpired as e:
                out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
                output += out
                _write_log(log_path, output)
                shutil.rmtree(venv, ignore_errors=True)
                raise InstallError(f"install took over {install_timeout_s:.0f}s\n{_tail(out)}") from None
            output += f"$ {shlex.join(cmd)}\n{proc.stdout}\n"
            if proc.returncode != 0:
                _write_log(log_path, output)
                shutil.rmtree(venv, ignore_errors=True)
                what = "pip install" if "pip" in cmd else "creating the venv"
                raise InstallError(f"{what} exited {proc.returncode}:\n{_tail(proc.stdout)}")
        _write_log(log_path, output)
        stamp.write_text(json.dumps({**want, "installed_at": _now()}, indent=1) + "\n")
        return venv


def _write_log(path: Path | None, text: str) -> None:
    if path is not None:
        path.write_text(text)


# --------------------------------------------------------------------------- crawling


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


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


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


def _stderr_tail(path: Path | None, n: int = 6) -> str:
    if path is None or not path.is_file():
        return ""
    try:
        data = path.read_bytes()[-4000:].decode(errors="replace")
    except OSError:
        return ""
    tail = _tail(data, n)
    return f"\nstderr: {tail}" if tail else ""


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
                p.name for p in (venv / "bin").iterdir()
                if p.is_file() and not p.name.startswith(("python", "pip", "activate", "Activate"))
            )  # fmt: skip
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
        server=entry.name, ok=False, package=entry.package, package_version=entry.version, crawled_at=_now()
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
    if entry.mode == "auto" and not result.ok and result.error_kind == "start" and (
        result.error or ""
    ).startswith("handshake failed"):
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
    result.crawled_at = _now()
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
    result: CrawlResult, leaf: BaseException, stage: str, timeout: float, watch: list[_StdoutWatch],
    errlog: Any, log_path: Path | None,
) -> None:  # fmt: skip
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
    result.error, result.error_kind = text + _stderr_tail(log_path), kind
    result.tools = []


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


# --------------------------------------------------------------------------- snapshot


def _dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _atomic_write(path: Path, lines: Iterable[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            for line in lines:
                f.write(line + "\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def load_snapshot(out_dir: str | Path) -> list[dict[str, Any]]:
    """The tool lines of a snapshot: {"server", "package", "package_version",
    "protocol_version", "crawled_at", "tool": {...full MCP tool object...}}."""
    return _read_jsonl(Path(out_dir) / TOOLS_FILE)


def load_snapshot_servers(out_dir: str | Path) -> list[dict[str, Any]]:
    """The server lines of a snapshot (status ok / stale / failed / disabled, reason, counts)."""
    return _read_jsonl(Path(out_dir) / SERVERS_FILE)


def write_snapshot(
    results: Sequence[CrawlResult],
    out_dir: str | Path,
    known: Iterable[str] | None = None,
) -> dict[str, Any]:
    """Merge ``results`` into the snapshot under ``out_dir`` and write it atomically.

    - a server that answered replaces its previous tools; when its tools and versions did not
      change, the previous ``crawled_at`` is kept so a refresh with no change is diff-free;
    - a server that failed this time but has tools in the previous snapshot keeps them,
      marked ``stale`` with this time's reason, so a flaky crawl does not shrink the snapshot;
    - a previous server not crawled this time is kept as it was, unless ``known`` (all names
      in the server list) is given and does not name it, in which case it is dropped.

    Both files are sorted ((server, tool name) / server) and written with sorted keys.
    Returns counts: servers by status and tools.
    """
    out = Path(out_dir)
    prev_tools: dict[str, list[dict[str, Any]]] = {}
    for line in load_snapshot(out):
        prev_tools.setdefault(line["server"], []).append(line)
    prev_servers = {s["server"]: s for s in load_snapshot_servers(out)}
    known_set = set(known) if known is not None else None
    crawled = {r.server: r for r in results}

    tool_lines: list[dict[str, Any]] = []
    server_lines: list[dict[str, Any]] = []

    for name, r in crawled.items():
        if r.ok:
            new_lines = []
            names: set[str] = set()
            for tool in r.tools:
                tname = tool.get("name")
                if not isinstance(tname, str) or tname in names:
                    continue  # nameless or duplicate tool: keep the first
                names.add(tname)
                new_lines.append({
                    "server": name, "package": r.package, "package_version": r.package_version,
                    "protocol_version": r.protocol_version, "crawled_at": r.crawled_at, "tool": tool,
                })  # fmt: skip
            old = prev_tools.get(name, [])
            crawled_at = r.crawled_at
            if old and _same_content(old, new_lines):
                crawled_at = old[0]["crawled_at"]
                for ln in new_lines:
                    ln["crawled_at"] = crawled_at
            tool_lines.extend(new_lines)
            server_lines.append({
                "server": name, "status": "ok", "reason": None, "error_kind": None,
                "tools": len(new_lines), "package": r.package, "package_version": r.package_version,
                "server_name": r.server_name, "server_version": r.server_version,
                "protocol_version": r.protocol_version, "crawled_at": crawled_at,
            })  # fmt: skip
        else:
            old = prev_tools.get(name, []) if r.error_kind != "disabled" else []
            prev = prev_servers.get(name, {})
            tool_lines.extend(old)
            status = "disabled" if r.error_kind == "disabled" else ("stale" if old else "failed")
            server_lines.append({
                "server": name, "status": status, "reason": r.error, "error_kind": r.error_kind,
                "tools": len(old), "package": r.package,
                "package_version": prev.get("package_version", r.package_version) if old else r.package_version,
                "server_name": prev.get("server_name") if old else None,
                "server_version": prev.get("server_version") if old else None,
                "protocol_version": prev.get("protocol_version") if old else None,
                "crawled_at": prev.get("crawled_at") if old else None,
            })  # fmt: skip

    for name in sorted(set(prev_servers) | set(prev_tools)):
        if name in crawled or (known_set is not None and name not in known_set):
            continue
        tool_lines.extend(prev_tools.get(name, []))
        if name in prev_servers:
            server_lines.append(prev_servers[name])

    tool_lines.sort(key=lambda ln: (ln["server"], ln["tool"].get("name", "")))
    server_lines.sort(key=lambda ln: ln["server"])
    _atomic_write(out / TOOLS_FILE, (_dumps(ln) for ln in tool_lines))
    _atomic_write(out / SERVERS_FILE, (_dumps(ln) for ln in server_lines))
    counts: dict[str, Any] = {"tools": len(tool_lines), "servers": len(server_lines)}
    for s in server_lines:
        counts[s["status"]] = counts.get(s["status"], 0) + 1
    counts["servers_with_tools"] = len({ln["server"] for ln in tool_lines})
    return counts


def _same_content(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> bool:
    def key(lines: list[dict[str, Any]]) -> list[str]:
        return sorted(_dumps({k: v for k, v in ln.items() if k != "crawled_at"}) for ln in lines)

    return key(old) == key(new)


# --------------------------------------------------------------------------- entry point


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
            server=e.name, ok=False, package=e.package, package_version=e.version, crawled_at=_now(),
            error=f"disabled: {e.note}" if e.note else "disabled", error_kind="disabled",
        )  # fmt: skip
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
