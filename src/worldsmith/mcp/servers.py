"""The MCP servers worldsmith knows: `tool_specs/servers.yaml` read into `ServerEntry`s.

An entry is a pinned PyPI package (installed into its own venv, see `venvs`), a command
line, or a streamable-HTTP URL; `safe_to_execute` marks servers whose tools rollouts may
call for real (offline, no side effects outside a temporary folder).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

DEFAULT_TIMEOUT_S = 60.0

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


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
