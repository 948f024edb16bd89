"""The agent's file tools, run inside the sandbox with /repo as the working directory:
`python -c "import ws_tools; ws_tools.main()"` reads {"tool": ..., "args": {...}} on stdin and prints
the result (exit status 0) or the error (status 1). Standard library only.

Also imported on the host (worldsmith.coding.harness.ws_tools) for `apply_patch_text`, the one
unified-diff reader every patch goes through (the agent's tool, task making and the judge)."""

from __future__ import annotations

import json
import os
import re
import sys

MAX_LIST = 400
MAX_READ_LINES = 200
MAX_MATCHES = 100
MAX_LINE_CHARS = 300
SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".tox", "node_modules"}


class ToolError(Exception):
    pass


def _path(path: str, root: str = ".") -> str:
    """`path` under `root`, refused if it leaves it."""
    if not isinstance(path, str) or not path.strip():
        raise ToolError("a path is required")
    base = os.path.realpath(root)
    full = os.path.realpath(os.path.join(base, path))
    if full != base and not full.startswith(base + os.sep):
        raise ToolError(f"{path}: outside the repository")
    return full


def _rel(full: str, root: str = ".") -> str:
    return os.path.relpath(full, os.path.realpath(root))


def list_files(path: str = ".", root: str = ".") -> str:
    top = _path(path or ".", root)
    if os.path.isfile(top):
        return _rel(top, root)
    if not os.path.isdir(top):
        raise ToolError(f"{path}: no such file or folder")
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if not name.endswith((".pyc", ".pyo")):
                out.append(_rel(os.path.join(dirpath, name), root))
    if not out:
        return f"{path}: no files"
    more = len(out) - MAX_LIST
    text = "\n".join(out[:MAX_LIST])
    return text + (f"\n[... {more} more files; list a subfolder ...]" if more > 0 else "")


def read_file(path: str, start_line: int = 1, end_line: int | None = None, root: str = ".") -> str:
    full = _path(path, root)
    if not os.path.isfile(full):
        raise ToolError(f"{path}: no such file")
    with open(full, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    start = max(1, int(start_line or 1))
    end = len(lines) if end_line in (None, "", 0) else min(len(lines), int(end_line))
    if start > max(len(lines), 1):
        raise ToolError(f"{path} has {len(lines)} lines; start_line {start} is past its end")
    stop = min(end, start + MAX_READ_LINES - 1)
    body = "\n".join(f"{i:>6}\t{lines[i - 1][:2000]}" for i in range(start, stop + 1))
    note = f"\n[... lines {stop + 1}-{end} not shown; read them with start_line={stop + 1} ...]" if stop < end else ""
    return f"{_rel(full, root)} ({len(lines)} lines)\n{body}{note}"


def search(pattern: str, path: str = ".", root: str = ".") -> str:
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise ToolError(f"not a valid regular expression: {exc}") from None
    top = _path(path or ".", root)
    files = [top] if os.path.isfile(top) else []
    if not files:
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
            files += [os.path.join(dirpath, n) for n in sorted(filenames) if not n.endswith((".pyc", ".pyo"))]
    hits = []
    total = 0
    for full in files:
        try:
            with open(full, encoding="utf-8") as f:
                for i, line in enumerate(f, 1):
                    if rx.search(line):
                        total += 1
                        if len(hits) < MAX_MATCHES:
                            hits.append(f"{_rel(full, root)}:{i}: {line.rstrip()[:MAX_LINE_CHARS]}")
        except (UnicodeDecodeError, OSError):
            continue
    if not hits:
        return f"no matches for {pattern!r}"
    more = f"\n[... {total - len(hits)} more matches; narrow the pattern or the path ...]" if total > len(hits) else ""
    return "\n".join(hits) + more


def replace_in_file(path: str, old: str, new: str, root: str = ".") -> str:
    full = _path(path, root)
    if not os.path.isfile(full):
        raise ToolError(f"{path}: no such file")
    with open(full, encoding="utf-8") as f:
        text = f.read()
    if not old:
        raise ToolError("old must not be empty")
    n = text.count(old)
    if n != 1:
        raise ToolError(f"{path}: old text found {n} times; it must match exactly once (add surrounding lines)")
    at = text.index(old)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text[:at] + new + text[at + len(old) :])
    line = text.count("\n", 0, at) + 1
    return f"replaced 1 occurrence in {_rel(full, root)} at line {line}"


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _strip(name: str) -> str | None:
    name = name.split("\t")[0].strip()
    if name == "/dev/null":
        return None
    return name[2:] if name[:2] in ("a/", "b/") else name


def parse_patch(patch: str) -> list[tuple[str | None, str | None, list[list[str]]]]:
    """(old path, new path, hunks) per file; a hunk is its lines with their ' ', '-', '+' marks."""
    files = []
    lines = patch.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old, new = _strip(lines[i][4:]), _strip(lines[i + 1][4:])
            i += 2
            hunks: list[list[str]] = []
            while i < len(lines) and not lines[i].startswith("--- "):
                m = _HUNK.match(lines[i])
                if m:
                    n_old = int(m.group(2) if m.group(2) is not None else 1)
                    n_new = int(m.group(4) if m.group(4) is not None else 1)
                    body = []
                    i += 1
                    while i < len(lines) and (n_old > 0 or n_new > 0):
                        line = lines[i]
                        if line.startswith("\\"):
                            i += 1
                            continue
                        mark = line[:1] or " "
                        if mark not in " -+":
                            break
                        if mark in " -":
                            n_old -= 1
                        if mark in " +":
                            n_new -= 1
                        body.append(mark + line[1:])
                        i += 1
                    hunks.append([f"@{m.group(1)}", *body])
                    continue
                i += 1
            files.append((old, new, hunks))
            continue
        i += 1
    if not files:
        raise ToolError("no file changes found: give a unified diff with ---/+++ headers and @@ hunks")
    return files


def _apply_hunks(text: str, hunks: list[list[str]], name: str) -> str:
    lines = text.splitlines()
    trailing = text.endswith("\n") or not text
    delta = 0
    for hunk in hunks:
        body = hunk[1:]
        old = [b[1:] for b in body if b[0] in " -"]
        new = [b[1:] for b in body if b[0] in " +"]
        orig = int(hunk[0][1:]) - (1 if old else 0)  # "-l,0" inserts after line l
        start = orig + delta
        at = None
        for shift in sorted(range(-len(lines) - 1, len(lines) + 1), key=abs):
            k = start + shift
            if 0 <= k <= len(lines) - len(old) and lines[k : k + len(old)] == old:
                at = k
                break
        if at is None:
            raise ToolError(f"{name}: a hunk does not apply (its context and removed lines are not in the file)")
        lines[at : at + len(old)] = new
        delta = at - orig + len(new) - len(old)
    return "\n".join(lines) + ("\n" if trailing and lines else "")


def apply_patch_text(patch: str, root: str = ".") -> list[str]:
    """Apply a unified diff under `root`, all files or none; the paths changed."""
    planned = []
    for old, new, hunks in parse_patch(patch):
        target = new if new is not None else old
        if target is None:
            raise ToolError("a file change names no file")
        full = _path(target, root)
        if old is None:
            before = ""
            if os.path.exists(full):
                raise ToolError(f"{target}: already exists")
        else:
            src = _path(old, root)
            if not os.path.isfile(src):
                raise ToolError(f"{old}: no such file")
            with open(src, encoding="utf-8") as f:
                before = f.read()
        after = None if new is None else _apply_hunks(before, hunks, target)
        planned.append((full, after, _path(old, root) if old and new and old != new else None))
    changed = []
    for full, after, moved_from in planned:
        if after is None:
            os.remove(full)
        else:
            os.makedirs(os.path.dirname(full) or ".", exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(after)
            if moved_from:
                os.remove(moved_from)
        changed.append(_rel(full, root))
    return changed


def apply_patch(patch: str, root: str = ".") -> str:
    changed = apply_patch_text(patch, root)
    return "patch applied: " + ", ".join(changed)


TOOLS = {
    "list_files": list_files,
    "read_file": read_file,
    "search": search,
    "replace_in_file": replace_in_file,
    "apply_patch": apply_patch,
}


def main() -> None:
    try:
        request = json.loads(sys.stdin.read())
        fn = TOOLS[request["tool"]]
        args = {k: v for k, v in (request.get("args") or {}).items() if k != "root"}
        print(fn(**args), end="")
    except ToolError as exc:
        print(f"error: {exc}", end="")
        sys.exit(1)
    except (KeyError, TypeError, ValueError) as exc:
        print(f"error: bad request: {exc}", end="")
        sys.exit(1)
