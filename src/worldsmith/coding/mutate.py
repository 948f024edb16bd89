"""Procedural bug injection on the AST (SWE-smith's procedural modifications): each operator finds
the places in a source file where it applies and edits only that node's text, so the diff is one
small hunk and the rest of the file (comments, formatting) is kept.

Operators (`OPERATORS`):
- `flip_comparison`: `<` -> `>=`, `==` -> `!=`, `is` -> `is not`, `in` -> `not in` (and back);
- `off_by_one`: `<` <-> `<=`, `>` <-> `>=`, an integer in arithmetic, an index or a slice +-1;
- `swap_arguments`: the first two positional arguments of a call that differ;
- `drop_statement`: an assignment, augmented assignment or call statement left out;
- `wrong_constant`: a default value or a returned/assigned literal changed (True <-> False, n -> n+1, "x" -> "");
- `wrong_branch`: an `if`'s condition negated, a conditional expression's arms swapped, `and` <-> `or`.

Only code inside functions is touched, never a test file, a docstring or an excluded file.
"""

from __future__ import annotations

import ast
import difflib
import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

OPERATORS = (
    "flip_comparison",
    "off_by_one",
    "swap_arguments",
    "drop_statement",
    "wrong_constant",
    "wrong_branch",
)

_FLIP = {
    ast.Lt: ">=",
    ast.GtE: "<",
    ast.Gt: "<=",
    ast.LtE: ">",
    ast.Eq: "!=",
    ast.NotEq: "==",
    ast.Is: "is not",
    ast.IsNot: "is",
    ast.In: "not in",
    ast.NotIn: "in",
}
_BOUNDARY = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">"}
_OP_TOKEN = re.compile(rb"(not\s+in|is\s+not|<=|>=|==|!=|<|>|\bin\b|\bis\b)")
_BOOL_TOKEN = re.compile(rb"\b(and|or)\b")
NEVER_MUTATED = ("setup.py", "conftest.py", "versioneer.py", "*/_version.py", "_version.py", "docs/*", "doc/*")


def is_test_file(rel: str) -> bool:
    """A test file by pytest's conventions: under a tests/test folder, test_*.py, *_test.py or conftest.py."""
    parts = Path(rel).parts
    name = parts[-1] if parts else rel
    return (
        any(p in ("tests", "test", "testing") for p in parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


@dataclass(frozen=True)
class Mutation:
    file: str  # repo-relative path
    operator: str
    line: int
    description: str
    edits: tuple[tuple[int, int, bytes], ...]  # byte spans of the file replaced, in any order

    def apply(self, source: bytes) -> bytes:
        out = source
        for start, end, text in sorted(self.edits, key=lambda e: e[0], reverse=True):
            out = out[:start] + text + out[end:]
        return out

    @property
    def key(self) -> str:
        return f"{self.file}:{self.line}:{self.operator}:{self.description}"


def source_files(root: Path, python_path: str = ".", exclude: list[str] | None = None) -> list[str]:
    """The repository's package source files that may be mutated (repo-relative, sorted): the modules
    and packages (folders with an `__init__.py`, all the way down) at each import root."""
    out = []
    for base in [p.strip() for p in python_path.split(":") if p.strip()] or ["."]:
        top = (root / base).resolve()
        if not top.is_dir():
            continue
        candidates = [p for p in top.glob("*.py") if p.name not in _NOT_MODULES]
        for pkg in sorted(d for d in top.iterdir() if d.is_dir() and (d / "__init__.py").is_file()):
            candidates += [p for p in pkg.rglob("*.py") if _in_package(p, top)]
        for p in sorted(candidates):
            rel = p.relative_to(root.resolve()).as_posix()
            if any(part.startswith(".") for part in Path(rel).parts):
                continue
            if is_test_file(rel) or any(fnmatch.fnmatch(rel, g) for g in (*NEVER_MUTATED, *(exclude or []))):
                continue
            out.append(rel)
    return sorted(set(out))


_NOT_MODULES = frozenset(
    {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py", "versioneer.py", "conf.py"}
)


def _in_package(path: Path, top: Path) -> bool:
    """Every folder from the import root down to the file is a package."""
    return all((d / "__init__.py").is_file() for d in path.parents if top in d.parents)


class _Offsets:
    def __init__(self, source: bytes):
        self.source = source
        self.starts = [0]
        for i, b in enumerate(source):
            if b == 0x0A:
                self.starts.append(i + 1)

    def at(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        return self.at(node.lineno, node.col_offset), self.at(node.end_lineno, node.end_col_offset)

    def text(self, node: ast.AST) -> bytes:
        a, b = self.span(node)
        return self.source[a:b]


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            first = body[0] if body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                ids.add(id(first.value))
    return ids


def _in_functions(tree: ast.AST):
    """Every node inside a function body (functions nested in classes included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for stmt in node.body:
                yield from ast.walk(stmt)


def _defaults(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from (d for d in node.args.defaults if d is not None)
            yield from (d for d in node.args.kw_defaults if d is not None)


def _changed_constant(value) -> bytes | None:
    if isinstance(value, bool):
        return b"False" if value else b"True"
    if isinstance(value, int):
        return str(value + 1 if value <= 1 else value - 1).encode()
    if isinstance(value, float):
        return repr(value * 2 if value else 1.0).encode()
    if isinstance(value, str) and value:
        return b'""'
    return None


def find_mutations(rel: str, source: bytes) -> list[Mutation]:
    """Every mutation of `OPERATORS` that applies in this file and still parses."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    off = _Offsets(source)
    docstrings = _docstring_nodes(tree)
    found: list[Mutation] = []

    def add(op: str, node: ast.AST, desc: str, *edits: tuple[int, int, bytes]) -> None:
        found.append(Mutation(rel, op, node.lineno, desc, tuple(edits)))

    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node

    for node in _in_functions(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            a = off.span(node.left)[1]
            b = off.span(node.comparators[0])[0]
            m = _OP_TOKEN.search(source, a, b)
            if m:
                op = type(node.ops[0])
                add(
                    "flip_comparison",
                    node,
                    f"{m.group().decode()} -> {_FLIP[op]}",
                    (m.start(), m.end(), _FLIP[op].encode()),
                )
                if op in _BOUNDARY:
                    add(
                        "off_by_one",
                        node,
                        f"{m.group().decode()} -> {_BOUNDARY[op]}",
                        (m.start(), m.end(), _BOUNDARY[op].encode()),
                    )
        elif isinstance(node, ast.Constant) and type(node.value) is int and id(node) not in docstrings:
            parent = parents.get(id(node))
            if isinstance(parent, ast.BinOp | ast.Subscript | ast.Slice | ast.UnaryOp):
                new = node.value + 1 if node.value in (0, 1) else node.value - 1
                a, b = off.span(node)
                add("off_by_one", node, f"{node.value} -> {new}", (a, b, str(new).encode()))
        elif isinstance(node, ast.Call):
            args = node.args
            if len(args) >= 2 and not any(isinstance(x, ast.Starred) for x in args[:2]):
                t0, t1 = off.text(args[0]), off.text(args[1])
                if t0 != t1 and b"\n" not in t0 + t1:
                    s0, s1 = off.span(args[0]), off.span(args[1])
                    add(
                        "swap_arguments",
                        node,
                        f"({t0.decode(errors='replace')}, {t1.decode(errors='replace')}) swapped",
                        (s0[0], s0[1], t1),
                        (s1[0], s1[1], t0),
                    )
        elif isinstance(node, ast.If) and not _is_elif(node, parents, source, off):
            a, b = off.span(node.test)
            add("wrong_branch", node, "condition negated", (a, b, b"not (" + source[a:b] + b")"))
        elif isinstance(node, ast.IfExp):
            s_body, s_else = off.span(node.body), off.span(node.orelse)
            add(
                "wrong_branch",
                node,
                "conditional arms swapped",
                (s_body[0], s_body[1], off.text(node.orelse)),
                (s_else[0], s_else[1], off.text(node.body)),
            )
        elif isinstance(node, ast.BoolOp) and len(node.values) == 2:
            a = off.span(node.values[0])[1]
            b = off.span(node.values[1])[0]
            m = _BOOL_TOKEN.search(source, a, b)
            if m:
                new = b"or" if m.group() == b"and" else b"and"
                add("wrong_branch", node, f"{m.group().decode()} -> {new.decode()}", (m.start(), m.end(), new))
        elif isinstance(node, ast.Return | ast.Assign) and isinstance(node.value, ast.Constant):
            new = _changed_constant(node.value.value)
            if new is not None and id(node.value) not in docstrings:
                a, b = off.span(node.value)
                add("wrong_constant", node, f"{off.text(node.value).decode()} -> {new.decode()}", (a, b, new))
        if isinstance(node, ast.stmt):
            _drop(node, parents, off, source, add)

    for d in _defaults(tree):
        if isinstance(d, ast.Constant):
            new = _changed_constant(d.value)
            if new is not None:
                a, b = off.span(d)
                add("wrong_constant", d, f"default {off.text(d).decode()} -> {new.decode()}", (a, b, new))

    return [m for m in found if _still_parses(m, source, tree)]


def _is_elif(node: ast.If, parents: dict, source: bytes, off: _Offsets) -> bool:
    line = source[off.starts[node.lineno - 1] :].lstrip()
    return line.startswith(b"elif")


def _drop(node: ast.stmt, parents: dict, off: _Offsets, source: bytes, add) -> None:
    droppable = isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) or (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
    )
    if not droppable or (isinstance(node, ast.AnnAssign) and node.value is None):
        return
    parent = parents.get(id(node))
    block = next(
        (getattr(parent, f) for f in ("body", "orelse", "finalbody") if node in (getattr(parent, f, None) or [])), None
    )
    if block is None:
        return
    start_line = off.starts[node.lineno - 1]
    end_line = off.starts[node.end_lineno] if node.end_lineno < len(off.starts) else len(source)
    prefix = source[start_line : off.at(node.lineno, node.col_offset)]
    suffix = source[off.at(node.end_lineno, node.end_col_offset) : end_line]
    if prefix.strip() or (suffix.strip() and not suffix.strip().startswith(b"#")):
        return  # shares its line with another statement
    text = b"pass\n" if len(block) == 1 else b""
    first = off.text(node).decode(errors="replace").splitlines()[0]
    add(
        "drop_statement",
        node,
        f"dropped `{first[:60]}`",
        (start_line + len(prefix) if text else start_line, end_line, text),
    )


def _still_parses(m: Mutation, source: bytes, tree: ast.AST) -> bool:
    try:
        new = ast.parse(m.apply(source))
    except (SyntaxError, ValueError):
        return False
    return ast.dump(new) != ast.dump(tree)


def unified_diff(rel: str, before: bytes, after: bytes) -> str:
    """A `git apply`/`patch -p1` diff of one file."""
    lines = difflib.unified_diff(
        before.decode().splitlines(keepends=True),
        after.decode().splitlines(keepends=True),
        fromfile=f"a/{rel}",
        tofile=f"b/{rel}",
        n=3,
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
