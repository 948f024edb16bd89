"""The committed snapshot of crawled tools: `tools.jsonl` (one full MCP tool object a line)
and `servers.jsonl` (one line a server) under `tool_specs/crawled/`, so the rest of the
pipeline never needs the servers."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from worldsmith.records import ToolSpec
from worldsmith.toolspec import from_mcp

if TYPE_CHECKING:
    from worldsmith.mcp.crawl import CrawlResult

TOOLS_FILE = "tools.jsonl"
SERVERS_FILE = "servers.jsonl"


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
                new_lines.append(
                    {
                        "server": name,
                        "package": r.package,
                        "package_version": r.package_version,
                        "protocol_version": r.protocol_version,
                        "crawled_at": r.crawled_at,
                        "tool": tool,
                    }
                )
            old = prev_tools.get(name, [])
            crawled_at = r.crawled_at
            if old and _same_content(old, new_lines):
                crawled_at = old[0]["crawled_at"]
                for ln in new_lines:
                    ln["crawled_at"] = crawled_at
            tool_lines.extend(new_lines)
            server_lines.append(
                {
                    "server": name,
                    "status": "ok",
                    "reason": None,
                    "error_kind": None,
                    "tools": len(new_lines),
                    "package": r.package,
                    "package_version": r.package_version,
                    "server_name": r.server_name,
                    "server_version": r.server_version,
                    "protocol_version": r.protocol_version,
                    "crawled_at": crawled_at,
                }
            )
        else:
            old = prev_tools.get(name, []) if r.error_kind != "disabled" else []
            prev = prev_servers.get(name, {})
            tool_lines.extend(old)
            status = "disabled" if r.error_kind == "disabled" else ("stale" if old else "failed")
            server_lines.append(
                {
                    "server": name,
                    "status": status,
                    "reason": r.error,
                    "error_kind": r.error_kind,
                    "tools": len(old),
                    "package": r.package,
                    "package_version": prev.get("package_version", r.package_version) if old else r.package_version,
                    "server_name": prev.get("server_name") if old else None,
                    "server_version": prev.get("server_version") if old else None,
                    "protocol_version": prev.get("protocol_version") if old else None,
                    "crawled_at": prev.get("crawled_at") if old else None,
                }
            )

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


def load_snapshot_specs(snapshot_dir: Path, servers_file: Path | None = None) -> list[ToolSpec]:
    """ToolSpecs from the committed crawl snapshot (no server is started)."""
    path = Path(snapshot_dir) / TOOLS_FILE
    if not path.exists():
        return []
    categories: dict[str, str] = {}
    if servers_file and servers_file.exists():
        for entry in (yaml.safe_load(servers_file.read_text()) or {}).get("servers", []) or []:
            if isinstance(entry, dict) and entry.get("category"):
                categories[entry["name"]] = entry["category"]
    specs = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        extra = {
            k: row.get(k)
            for k in ("package", "package_version", "protocol_version", "crawled_at")
            if row.get(k) is not None
        }
        specs.append(
            from_mcp(
                row["tool"], server=row["server"], source="mcp", category=categories.get(row["server"]), extra=extra
            )
        )
    return specs
