"""The coding tools offered as an MCP server (the `mcp` SDK's MCPServer, FastMCP's successor): the
same six tools, each executed in the sandbox over one box (a sandbox folder holding repo/ and tmp/).

    python -m worldsmith.coding.mcp_server --box data/coding/work/ep-... [--python-path src]

serves them over stdio to any MCP client (an agent harness, `mcp` clients, worldsmith's own crawl)."""

from __future__ import annotations

import argparse
from pathlib import Path

from worldsmith.coding.sandbox import Box
from worldsmith.coding.tools import TOOL_SPECS, call_tool


def build_server(box: Box, python_path: str = ".", backend: str = "auto"):
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer(
        "worldsmith-coding",
        instructions="A Python repository in a sandbox: read and search its files, edit them, run its tests.",
    )
    described = {t["name"]: t["description"] for t in TOOL_SPECS}

    def call(name: str, args: dict) -> str:
        ok, text = call_tool(box, name, args, python_path, backend)
        if not ok:
            raise ToolError(text)
        return text

    @server.tool(description=described["list_files"])
    def list_files(path: str = ".") -> str:
        return call("list_files", {"path": path})

    @server.tool(description=described["read_file"])
    def read_file(path: str, start_line: int = 1, end_line: int | None = None) -> str:
        return call("read_file", {"path": path, "start_line": start_line, "end_line": end_line})

    @server.tool(description=described["search"])
    def search(pattern: str, path: str = ".") -> str:
        return call("search", {"pattern": pattern, "path": path})

    @server.tool(description=described["replace_in_file"])
    def replace_in_file(path: str, old: str, new: str) -> str:
        return call("replace_in_file", {"path": path, "old": old, "new": new})

    @server.tool(description=described["apply_patch"])
    def apply_patch(patch: str) -> str:
        return call("apply_patch", {"patch": patch})

    @server.tool(description=described["run_tests"])
    def run_tests(tests: list[str] | None = None) -> str:
        return call("run_tests", {"tests": tests or []})

    return server


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--box", type=Path, required=True, help="a sandbox folder with repo/ and tmp/")
    ap.add_argument("--python-path", default=".")
    args = ap.parse_args()
    box = Box(args.box.resolve())
    box.tmp.mkdir(exist_ok=True)
    build_server(box, args.python_path).run("stdio")


if __name__ == "__main__":
    main()
