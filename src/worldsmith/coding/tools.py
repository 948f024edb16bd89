"""The tools a coding agent sees, each executed in the sandbox over the episode's copy of the
repository: list files, read a file (line ranges), search (a regular expression), replace text in a
file, apply a unified diff, run selected tests. Outputs are cut as a real agent harness cuts them
(the head and the tail kept, the middle counted). `Workspace` is one episode's repository: the
pristine tree with the task's bug applied; `patch()` is what the agent changed, as a unified diff."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from worldsmith.coding.harness.ws_tools import ToolError, apply_patch_text
from worldsmith.coding.models import BugTask
from worldsmith.coding.mutate import unified_diff
from worldsmith.coding.sandbox import TRUNCATED, Box, Limits, python_executable, run
from worldsmith.coding.testrun import pytest_argv, run_tests

OUTPUT_LIMIT = 6_000  # characters of a tool's output the agent sees (a small model's 4k-token slot holds a few)
TOOL_LIMITS = Limits(wall_s=20, cpu_s=20, memory_mb=1024, file_mb=16)
SKIP = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".tox"}

TOOL_SPECS: list[dict[str, Any]] = [
    {
        "name": "list_files",
        "description": "List the files of the repository under a folder (recursively).",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "folder, relative to the repository root"}},
            "required": [],
        },
    },
    {
        "name": "read_file",
        "description": "Read a file of the repository with line numbers, optionally a range of lines.",
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "start_line": {"type": "integer", "minimum": 1},
                "end_line": {"type": "integer", "minimum": 1},
            },
            "required": ["path"],
        },
    },
    {
        "name": "search",
        "description": "Search the repository's files for a regular expression; gives file:line: text.",
        "input_schema": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "a Python regular expression"},
                "path": {"type": "string", "description": "folder or file to search (default: everything)"},
            },
            "required": ["pattern"],
        },
    },
    {
        "name": "replace_in_file",
        "description": "Replace text in a file: `old` must occur exactly once and is replaced by `new`.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}},
            "required": ["path", "old", "new"],
        },
    },
    {
        "name": "apply_patch",
        "description": "Apply a unified diff (--- a/file, +++ b/file, @@ hunks) to the repository.",
        "input_schema": {
            "type": "object",
            "properties": {"patch": {"type": "string"}},
            "required": ["patch"],
        },
    },
    {
        "name": "run_tests",
        "description": "Run the repository's tests with pytest: the given test ids or paths, or the whole suite.",
        "input_schema": {
            "type": "object",
            "properties": {
                "tests": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "pytest node ids or paths (tests/test_x.py::test_y); empty for all",
                }
            },
            "required": [],
        },
    },
]
TOOL_NAMES = tuple(t["name"] for t in TOOL_SPECS)


def openai_tools() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]},
        }
        for t in TOOL_SPECS
    ]


def truncate(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """The head and the tail of a long output, the middle counted (as agent harnesses show it)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + TRUNCATED.format(n=len(text) - 2 * half) + text[-half:]


def call_tool(
    box: Box, name: str, args: dict[str, Any], python_path: str = ".", backend: str = "auto"
) -> tuple[bool, str]:
    """(ok, the text the agent sees) of one tool call in the sandbox over `box`."""
    args = dict(args or {})
    if name == "run_tests":
        tests = args.get("tests") or []
        if isinstance(tests, str):
            tests = [tests]
        if not all(isinstance(t, str) and t.strip() and not t.startswith("-") for t in tests):
            return False, "error: tests must be pytest node ids or paths"
        tr = run_tests(box, python_path, tests, Limits(wall_s=120, cpu_s=120), backend=backend)
        shown = "\n".join(x for x in (tr.result.stdout.strip(), tr.result.stderr.strip()) if x)
        if tr.result.timed_out:
            shown += "\n[the test run was stopped at its time limit]"
        return tr.exitstatus in (0, 1, 5), truncate(f"$ pytest {' '.join(tests)}".rstrip() + "\n" + shown)
    if name not in TOOL_NAMES:
        return False, f"error: unknown tool {name!r} (one of {', '.join(TOOL_NAMES)})"
    request = json.dumps({"tool": name, "args": args})
    argv = [
        python_executable(),
        "-I",
        "-c",
        "import sys; sys.path.insert(0, sys.argv[1]); import ws_tools; ws_tools.main()",
        "{harness}",
    ]
    r = run(argv, box, TOOL_LIMITS, backend=backend, stdin=request)
    text = r.stdout if r.stdout else r.stderr.strip() or f"error: the tool ended with status {r.returncode}"
    if r.timed_out:
        text = "error: the tool was stopped at its time limit"
    return r.returncode == 0, truncate(text)


def tree_files(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP]
        for name in filenames:
            if name.endswith((".pyc", ".pyo")):
                continue
            full = Path(dirpath) / name
            if full.is_file() and not full.is_symlink():
                out[full.relative_to(root).as_posix()] = full.read_bytes()
    return out


def tree_diff(before: dict[str, bytes], after: dict[str, bytes]) -> str:
    """A unified diff from one tree's files to another's (text files; new and deleted files included)."""
    parts = []
    for rel in sorted(set(before) | set(after)):
        a, b = before.get(rel), after.get(rel)
        if a == b:
            continue
        try:
            a_text = (a or b"").decode()
            b_text = (b or b"").decode()
        except UnicodeDecodeError:
            continue
        diff = unified_diff(rel, a_text.encode(), b_text.encode())
        if a is None:
            diff = diff.replace(f"--- a/{rel}\n", "--- /dev/null\n", 1)
        if b is None:
            diff = diff.replace(f"+++ b/{rel}\n", "+++ /dev/null\n", 1)
        parts.append(diff)
    return "".join(parts)


class Workspace:
    """One episode's repository: a fresh box of the pristine tree with the task's bug applied."""

    def __init__(self, task: BugTask, pristine: Path, under: Path, backend: str = "auto"):
        self.task = task
        self.backend = backend
        self.box = Box.fresh(pristine, under, prefix=f"ep-{task.task_id[:12]}-")
        apply_patch_text(task.bug_patch, str(self.box.repo))
        self.start = tree_files(self.box.repo)
        self.calls = 0

    def call(self, name: str, args: dict[str, Any]) -> tuple[bool, str]:
        self.calls += 1
        try:
            return call_tool(self.box, name, args, self.task.python_path, self.backend)
        except ToolError as exc:
            return False, f"error: {exc}"

    def patch(self) -> str:
        """What the agent changed, as a unified diff against the buggy tree."""
        return tree_diff(self.start, tree_files(self.box.repo))

    def close(self) -> None:
        self.box.remove()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["TOOL_NAMES", "TOOL_SPECS", "Workspace", "call_tool", "openai_tools", "pytest_argv", "truncate", "tree_diff"]
