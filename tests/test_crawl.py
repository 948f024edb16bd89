"""The MCP crawler: a real PyPI server end to end, misbehaving servers, pagination, the
server list, and the snapshot files."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
import time
from pathlib import Path

import pytest

from worldsmith.mcp import (
    CrawlResult,
    ServerEntry,
    ServerListError,
    crawl_all,
    crawl_server,
    ensure_venv,
    load_server_list,
    load_snapshot,
    load_snapshot_servers,
    run_crawl,
    write_snapshot,
)

ROOT = Path(__file__).resolve().parent.parent
SERVERS_YAML = ROOT / "tool_specs" / "servers.yaml"

PAGER = textwrap.dedent(
    '''
    """A tiny real MCP server (low-level API) that pages its tools three at a time."""
    import os
    import sys

    import anyio
    import mcp_types as types
    from mcp.server import Server
    from mcp.server.stdio import stdio_server

    CALLS, ROOT = sys.argv[1], sys.argv[2]
    TOOLS = [
        types.Tool(
            name=f"tool_{i:02d}",
            description=f"Tool number {i}, works on files under {ROOT}",
            input_schema={"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
            output_schema={"type": "object", "properties": {"y": {"type": "integer"}}},
            annotations=types.ToolAnnotations(read_only_hint=i % 2 == 0, destructive_hint=False,
                                              idempotent_hint=True, open_world_hint=False),
        )
        for i in range(7)
    ]
    PAGE = 3

    async def list_tools(ctx, params):
        if os.environ.get("PAGER_LOOP"):
            return types.ListToolsResult(tools=TOOLS[:PAGE], next_cursor="again")
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + PAGE
        return types.ListToolsResult(tools=TOOLS[start:end], next_cursor=str(end) if end < len(TOOLS) else None)

    async def call_tool(ctx, params):
        with open(CALLS, "a") as f:
            f.write(params.name + "\\n")
        return types.CallToolResult(content=[])

    server = Server("pager", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)

    async def main():
        print("pager starting", file=sys.stderr, flush=True)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
    '''
)


def run(coro):
    return asyncio.run(coro)


# --------------------------------------------------------------------------- fixtures


@pytest.fixture()
def pager(tmp_path) -> tuple[Path, Path]:
    script = tmp_path / "pager.py"
    script.write_text(PAGER)
    return script, tmp_path / "calls.txt"


def pager_entry(script: Path, calls: Path, **kw) -> ServerEntry:
    return ServerEntry(
        name=kw.pop("name", "pager"), command=[sys.executable, str(script), str(calls)], args=["{tmpdir}"], **kw
    )


# --------------------------------------------------------------------------- a real server


def test_time_server_end_to_end(time_entry, time_cache, tmp_path):
    logs = tmp_path / "logs"
    r = run(crawl_server(time_entry, time_cache, timeout_s=60, log_dir=logs))
    assert r.ok, r.error
    assert r.error is None and r.error_kind is None
    assert r.server == "time" and r.package == "mcp-server-time" and r.package_version == time_entry.version
    assert r.server_name and r.server_version and r.protocol_version
    assert r.crawled_at.endswith("Z") and r.seconds < 60
    tools = {t["name"]: t for t in r.tools}
    assert {"get_current_time", "convert_time"} <= set(tools)
    for tool in tools.values():
        # the raw protocol object, camelCase keys as on the wire
        assert isinstance(tool["description"], str) and tool["description"]
        assert tool["inputSchema"]["type"] == "object"
        assert "input_schema" not in tool
        assert tool["annotations"]["readOnlyHint"] is True
    convert = tools["convert_time"]["inputSchema"]
    assert {"source_timezone", "time", "target_timezone"} <= set(convert["properties"])
    # --local-timezone UTC from the server list: descriptions do not depend on this machine
    assert "UTC" in json.dumps(convert)
    assert (logs / "time.stderr.log").is_file()


def test_ensure_venv_is_cached(time_entry, time_cache):
    t0 = time.monotonic()
    venv = ensure_venv(time_entry, time_cache)
    assert time.monotonic() - t0 < 5
    assert venv.parent == time_cache and venv.name == f"mcp-server-time-{time_entry.version}"
    assert (venv / ".worldsmith-installed.json").is_file()
    assert (venv / "bin" / "mcp-server-time").exists()


def test_wrong_console_script_names_the_ones_there(time_entry, time_cache):
    entry = time_entry.model_copy(update={"name": "time-bad", "command": ["no-such-script"]})
    r = run(crawl_server(entry, time_cache, timeout_s=10))
    assert not r.ok and r.error_kind == "start"
    assert "no-such-script" in r.error and "mcp-server-time" in r.error


def test_install_failure_is_recorded(tmp_path):
    entry = ServerEntry(name="nope", package="worldsmith-no-such-package-zz", version="0.0.1")
    r = run(crawl_server(entry, tmp_path / "cache", timeout_s=10, log_dir=tmp_path / "logs"))
    assert not r.ok and r.error_kind == "install"
    assert "worldsmith-no-such-package-zz" in r.error  # pip's own last lines
    assert (tmp_path / "logs" / "nope.install.log").is_file()
    assert not (tmp_path / "cache" / "worldsmith-no-such-package-zz-0.0.1").exists()  # no half-built venv


# --------------------------------------------------------------------------- misbehaving servers


def py(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


BROKEN = {
    "hangs": (py("import time; time.sleep(999)"), "timeout", "no answer within"),
    "garbage": (
        py("""
        import time
        for _ in range(3):
            print("hello, this is not JSON-RPC", flush=True)
        time.sleep(999)
        """),
        "timeout",
        "non-JSON-RPC line",
    ),
    "garbage-then-exit": (py("print('<html>oops</html>')"), "start", "non-JSON-RPC line"),
    "exits-at-once": (
        py("import sys; print('boom: no config file', file=sys.stderr); sys.exit(3)"),
        "start",
        "boom: no config file",
    ),
    "missing-command": (["/nonexistent/mcp-server-xyz"], "start", "not an executable"),
    "not-on-path": (["worldsmith-no-such-command-xyz"], "start", "not found on PATH"),
}


def test_broken_servers_are_bounded_and_recorded(tmp_path, capfd):
    entries = [ServerEntry(name=name, command=cmd) for name, (cmd, _, _) in BROKEN.items()]
    seen: list[str] = []
    t0 = time.monotonic()
    results = run(
        crawl_all(
            entries,
            tmp_path / "cache",
            concurrency=len(entries),
            timeout_s=3,
            log_dir=tmp_path / "logs",
            progress=lambda r: seen.append(r.server),
        )
    )
    wall = time.monotonic() - t0
    assert sorted(seen) == sorted(BROKEN)
    assert [r.server for r in results] == list(BROKEN)  # in the order given
    for r in results:
        _, kind, text = BROKEN[r.server]
        assert not r.ok and r.tools == []
        assert r.error_kind == kind, (r.server, r.error)
        assert text in r.error, (r.server, r.error)
        assert r.seconds < 3 + 10  # the timeout plus the SDK's bounded shutdown
    assert wall < 30
    # the servers' stderr went to their log files, not to our terminal
    assert "boom: no config file" in (tmp_path / "logs" / "exits-at-once.stderr.log").read_text()
    assert "boom: no config file" not in capfd.readouterr().err


def test_entry_timeout_overrides_the_default(tmp_path):
    entry = ServerEntry(name="slow", command=py("import time; time.sleep(999)"), timeout_s=1)
    r = run(crawl_server(entry, tmp_path, timeout_s=600))
    assert r.error_kind == "timeout" and "within 1s" in r.error and r.seconds < 10


# --------------------------------------------------------------------------- pagination


def test_follows_next_cursor_and_never_calls_a_tool(pager, tmp_path):
    script, calls = pager
    r = run(crawl_server(pager_entry(script, calls), tmp_path / "cache", timeout_s=30, log_dir=tmp_path / "logs"))
    assert r.ok, r.error
    assert r.pages == 3
    assert [t["name"] for t in r.tools] == [f"tool_{i:02d}" for i in range(7)]
    t0 = r.tools[0]
    assert t0["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert t0["outputSchema"]["properties"]["y"]["type"] == "integer"
    assert t0["inputSchema"]["required"] == ["x"]
    # {tmpdir} was a real temporary folder for the server; the spec keeps the placeholder
    assert t0["description"].endswith("files under {tmpdir}")
    assert r.server_name == "pager" and r.server_version == "1.0"
    assert not calls.exists()
    assert "pager starting" in (tmp_path / "logs" / "pager.stderr.log").read_text()


def test_a_looping_cursor_is_a_protocol_error(pager, tmp_path):
    script, calls = pager
    entry = pager_entry(script, calls, env={"PAGER_LOOP": "1"})
    r = run(crawl_server(entry, tmp_path, timeout_s=30))
    assert not r.ok and r.error_kind == "protocol" and "repeats" in r.error


# --------------------------------------------------------------------------- server list


def write_yaml(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "servers.yaml"
    p.write_text(textwrap.dedent(text))
    return p


def test_server_list_loads_all_kinds(tmp_path):
    p = write_yaml(
        tmp_path,
        """
        servers:
          - name: t
            package: mcp-server-time
            version: "1.0"
            args: [--local-timezone, UTC]
            safe_to_execute: true
          - name: c
            command: python -m some_server --flag
            env: {DEBUG: 1}
          - name: u
            url: http://127.0.0.1:8000/mcp
            enabled: false
            note: needs a running server
        """,
    )
    t, c, u = load_server_list(p)
    assert (
        t.kind == "package" and t.command is None and t.safe_to_execute and t.requirements() == ["mcp-server-time==1.0"]
    )
    assert c.kind == "command" and c.command == ["python", "-m", "some_server", "--flag"] and c.env == {"DEBUG": "1"}
    assert u.kind == "url" and not u.enabled and not u.safe_to_execute


@pytest.mark.parametrize(
    "body, words",
    [
        ("- name: a\n  package: x\n  versoin: '1'\n", ["entry #1 ('a')", "versoin", "unknown key"]),
        ("- name: a\n  package: x\n", ["entry #1 ('a')", "pinned 'version'"]),
        ("- name: a\n", ["entry #1 ('a')", "one of 'package'"]),
        ("- name: a\n  command: [x]\n- name: a\n  command: [y]\n", ["entry #2 ('a')", "'name'", "duplicate"]),
        ("- name: a\n  url: http://h/mcp\n  package: p\n  version: '1'\n", ["entry #1 ('a')", "'url'"]),
        ("- name: a\n  url: ftp://h\n", ["http://"]),
        ("- name: a b\n  command: [x]\n", ["key 'name'"]),
        ("- name: 12306\n  command: [x]\n", ["entry #1", "key 'name'", "quote it"]),
        ("- name: a\n  command: [x]\n  args: [--flag, on]\n", ["key 'args.1'", "True", "quote it"]),
        ("- name: a\n  command: [x]\n  timeout_s: -1\n", ["key 'timeout_s'"]),
        ("- just a string\n", ["entry #1", "mapping"]),
        ("servers: {a: 1}\n", ["list"]),
        ("serverz: []\n", ["serverz"]),
    ],
)
def test_server_list_errors_name_the_entry_and_key(tmp_path, body, words):
    p = write_yaml(tmp_path, body)
    with pytest.raises(ServerListError) as e:
        load_server_list(p)
    for w in words:
        assert w in str(e.value), str(e.value)


def test_committed_server_list_is_valid():
    entries = load_server_list(SERVERS_YAML)
    assert len([e for e in entries if e.enabled]) >= 30
    assert {"time", "fetch", "git"} <= {e.name for e in entries}
    for e in entries:
        if e.enabled:
            assert e.kind == "package", e.name  # the committed list crawls PyPI packages
        else:
            assert e.note, f"{e.name}: a disabled entry says why"


# --------------------------------------------------------------------------- snapshot


def tool(name: str, desc: str = "d") -> dict:
    return {"name": name, "description": desc, "inputSchema": {"type": "object", "properties": {}}}


def ok(server: str, *tools: dict, at: str = "2026-01-01T00:00:00Z") -> CrawlResult:
    return CrawlResult(
        server=server,
        ok=True,
        tools=list(tools),
        package=f"pkg-{server}",
        package_version="1.0",
        protocol_version="2025-06-18",
        server_name=server,
        server_version="1",
        crawled_at=at,
    )


def failed(server: str, kind: str = "timeout") -> CrawlResult:
    return CrawlResult(
        server=server, ok=False, error="no answer within 60s", error_kind=kind, crawled_at="2026-02-02T00:00:00Z"
    )


def test_snapshot_is_sorted_and_stable(tmp_path):
    results = [ok("zeta", tool("b"), tool("a")), ok("alpha", tool("y"), tool("x"), tool("x", "dup"))]
    counts = write_snapshot(results, tmp_path)
    assert counts["tools"] == 4 and counts["ok"] == 2
    lines = (tmp_path / "tools.jsonl").read_text().splitlines()
    keys = [(json.loads(ln)["server"], json.loads(ln)["tool"]["name"]) for ln in lines]
    assert keys == [("alpha", "x"), ("alpha", "y"), ("zeta", "a"), ("zeta", "b")]
    assert json.loads(lines[0])["tool"]["description"] == "d"  # the first of a duplicated name is kept
    for ln in lines:
        assert ln == json.dumps(json.loads(ln), sort_keys=True, ensure_ascii=False)
        assert set(json.loads(ln)) == {"server", "package", "package_version", "protocol_version", "crawled_at", "tool"}
    before = {p.name: p.read_bytes() for p in tmp_path.glob("*.jsonl")}
    # the same content crawled later: byte-identical files (crawled_at is kept)
    write_snapshot(
        [
            ok("alpha", tool("x"), tool("y"), at="2026-03-03T00:00:00Z"),
            ok("zeta", tool("a"), tool("b"), at="2026-03-03T00:00:00Z"),
        ],
        tmp_path,
    )
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.jsonl")} == before
    # a changed tool takes the new stamp
    write_snapshot([ok("alpha", tool("x", "new"), tool("y"), at="2026-03-03T00:00:00Z")], tmp_path)
    alpha = [ln for ln in load_snapshot(tmp_path) if ln["server"] == "alpha"]
    assert {ln["crawled_at"] for ln in alpha} == {"2026-03-03T00:00:00Z"}
    assert not list(tmp_path.glob(".*.tmp"))


def test_failed_server_keeps_its_previous_tools_as_stale(tmp_path):
    write_snapshot([ok("a", tool("t1"), tool("t2")), ok("b", tool("u"))], tmp_path)
    counts = write_snapshot([failed("a"), failed("c", "install")], tmp_path)
    servers = {s["server"]: s for s in load_snapshot_servers(tmp_path)}
    assert servers["a"]["status"] == "stale" and servers["a"]["tools"] == 2
    assert servers["a"]["reason"] == "no answer within 60s" and servers["a"]["package_version"] == "1.0"
    assert servers["a"]["crawled_at"] == "2026-01-01T00:00:00Z"
    assert servers["b"]["status"] == "ok"  # not crawled this time: kept as it was
    assert servers["c"]["status"] == "failed" and servers["c"]["tools"] == 0
    assert counts["tools"] == 3 and counts["stale"] == 1
    assert sorted((ln["server"], ln["tool"]["name"]) for ln in load_snapshot(tmp_path)) == [
        ("a", "t1"),
        ("a", "t2"),
        ("b", "u"),
    ]
    # servers that left the list are dropped when the full list is known
    write_snapshot([failed("a")], tmp_path, known=["a"])
    assert {s["server"] for s in load_snapshot_servers(tmp_path)} == {"a"}
    assert {ln["server"] for ln in load_snapshot(tmp_path)} == {"a"}


def test_run_crawl_summary(pager, tmp_path):
    script, calls = pager
    p = write_yaml(
        tmp_path,
        f"""
        servers:
          - name: pager
            command: [{sys.executable}, {script}, {calls}, "{{tmpdir}}"]
          - name: quits
            command: [{sys.executable}, -c, "raise SystemExit(1)"]
          - name: "off"
            command: [{sys.executable}, -c, "raise SystemExit(1)"]
            enabled: false
            note: just a test
        """,
    )
    lines: list[str] = []
    out = tmp_path / "crawled"
    s = run_crawl(p, out, tmp_path / "cache", tmp_path / "logs", concurrency=2, timeout_s=20, log=lines.append)
    assert s["servers_ok"] == 1 and s["servers_failed"] == 1 and s["servers_disabled"] == 1
    assert s["tools"] == 7 and s["servers_in_snapshot"] == 1
    assert set(s["failed"]) == {"quits"} and s["failed"]["quits"].startswith("start:")
    assert any("pager: 7 tools" in ln for ln in lines)
    servers = {x["server"]: x for x in load_snapshot_servers(out)}
    assert servers["off"]["status"] == "disabled" and "just a test" in servers["off"]["reason"]
    # `only` crawls just that one and leaves the rest of the snapshot alone
    s2 = run_crawl(p, out, tmp_path / "cache", tmp_path / "logs", only=["quits"], log=lines.append)
    assert s2["servers_crawled"] == 1 and s2["tools"] == 7
    with pytest.raises(ServerListError, match="nosuch"):
        run_crawl(p, out, tmp_path / "cache", tmp_path / "logs", only=["nosuch"], log=lines.append)


def test_committed_snapshot_is_big_sorted_and_complete():
    out = ROOT / "tool_specs" / "crawled"
    lines = load_snapshot(out)
    servers = load_snapshot_servers(out)
    assert len(lines) >= 150
    assert len({ln["server"] for ln in lines}) >= 30
    keys = [(ln["server"], ln["tool"]["name"]) for ln in lines]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    for ln in lines:
        assert isinstance(ln["tool"]["inputSchema"], dict)
    assert [s["server"] for s in servers] == sorted(s["server"] for s in servers)
    listed = {e.name for e in load_server_list(SERVERS_YAML)}
    assert {s["server"] for s in servers} <= listed
