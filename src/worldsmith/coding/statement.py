"""A coding task's statement: a user's bug report written from what the failing tests print and the
package's public API (the names the failing tests call), by the grammar of prompts/bug_report.yaml.
It is never written from the diff: nothing here reads the mutation."""

from __future__ import annotations

import ast
import random
import re
from collections import Counter
from pathlib import Path

from worldsmith.coding.mutate import source_files

MAX_ERROR_LINES = 12
MAX_ERROR_CHARS = 1200
MAX_LISTED = 5


def error_lines(failure: str) -> str:
    """pytest's `E` lines of a failure (what a user pastes), else its last lines."""
    lines = [ln[1:].strip() if ln.startswith("E") else None for ln in failure.splitlines()]
    kept = [ln for ln in lines if ln and not ln.startswith(("Use -v", "Omitting ", "Full diff:"))]
    if not kept:
        kept = [ln for ln in failure.strip().splitlines()[-6:] if ln.strip()]
    text = "\n".join(kept[:MAX_ERROR_LINES])
    return text[:MAX_ERROR_CHARS]


def public_api(root: Path, python_path: str = ".", exclude: list[str] | None = None) -> dict[str, str]:
    """Public top-level names of the package -> their import path (`toolz.merge`)."""
    names: dict[str, str] = {}
    for base in [p.strip() for p in python_path.split(":") if p.strip()] or ["."]:
        for rel in source_files(root, base, exclude):
            inner = Path(rel).relative_to(base) if base != "." else Path(rel)
            module = inner.parts[0].removesuffix(".py")
            try:
                tree = ast.parse((root / rel).read_bytes())
            except (SyntaxError, ValueError):
                continue
            for node in tree.body:
                found = []
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    found = [node.name]
                elif isinstance(node, ast.Assign):
                    found = [t.id for t in node.targets if isinstance(t, ast.Name)]
                for name in found:
                    if not name.startswith("_"):
                        names.setdefault(name, f"{module}.{name}")
    return names


def _test_function(root: Path, nodeid: str) -> ast.AST | None:
    path, _, rest = nodeid.partition("::")
    parts = [re.sub(r"\[.*$", "", p) for p in rest.split("::") if p]
    try:
        tree = ast.parse((root / path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    scope: list[ast.stmt] = tree.body
    node = None
    for part in parts:
        node = next(
            (
                n
                for n in scope
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == part
            ),
            None,
        )
        if node is None:
            return None
        scope = node.body
    return node


def api_called(root: Path, nodeids: list[str], api: dict[str, str]) -> list[str]:
    """The public names the failing tests call, most called first."""
    counts: Counter[str] = Counter()
    for nodeid in nodeids:
        fn = _test_function(root, nodeid)
        if fn is None:
            continue
        seen = set()
        for n in ast.walk(fn):
            if isinstance(n, ast.Call):
                f = n.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                if name in api and name not in seen:
                    seen.add(name)
                    counts[name] += 1
    return [api[name] for name, _ in counts.most_common()]


def bug_report(
    grammar: dict,
    package: str,
    version: str,
    failing: list[str],
    failures: dict[str, str],
    api: list[str],
    seed: int,
) -> str:
    """The statement: opener, intro (by the API the failing tests use), one failure's error lines
    verbatim, the failing tests (up to five), the ask, a closer."""
    rng = random.Random(seed)
    first = failing[0]
    shown = [t for t in failing if t in failures][:1] or [first]
    short = lambda t: t.split("::", 1)[-1] if "::" in t else t
    slots = {
        "package": package,
        "version": version,
        "api": " and ".join(f"`{a}()`" for a in api[:2]),
        "test": short(shown[0]),
        "n": len(failing),
    }
    intro = rng.choice(grammar["intros"]["with_api" if api else "without_api"])
    evidence = rng.choice(grammar["evidence"]["one" if len(failing) == 1 else "many"])
    opener = rng.choice(grammar["openers"])
    parts = ([opener] if opener else []) + [intro.format(**slots)]
    parts.append(evidence.format(**slots) + "\n\n```\n" + error_lines(failures.get(shown[0], "")) + "\n```")
    if len(failing) > 1:
        listed = "\n".join(f"- {t}" for t in failing[:MAX_LISTED])
        more = f"\n- ... and {len(failing) - MAX_LISTED} more" if len(failing) > MAX_LISTED else ""
        parts.append(f"{grammar['failing_list']}\n{listed}{more}")
    parts.append(" ".join(p for p in (rng.choice(grammar["asks"]), rng.choice(grammar["closers"])) if p))
    return "\n\n".join(parts)


REPORT_SCHEMA = {
    "type": "object",
    "properties": {"report": {"type": "string", "minLength": 40, "maxLength": 1200}},  # a tracker issue, not an essay
    "required": ["report"],
    "additionalProperties": False,
}


def report_problems(text: str, failing: list[str], api: list[str], bug_patch: str, file: str) -> list[str]:
    """Why a model's report cannot be the statement: it leaks the change (a changed line of code, the changed
    file), or names neither a failing test nor a public function the tests use."""
    problems = []
    changed = [
        ln[1:].strip()
        for ln in bug_patch.splitlines()
        if ln[:1] in "+-" and not ln.startswith(("+++", "---")) and len(ln[1:].strip()) >= 8
    ]
    if any(c in text for c in changed):
        problems.append("quotes the changed code")
    if file in text or Path(file).name in text.split():
        problems.append("names the changed file")
    names = {t.split("::")[-1].split("[")[0] for t in failing} | {a.rsplit(".", 1)[-1] for a in api}
    if not any(n in text for n in names):
        problems.append("names neither a failing test nor a public function they use")
    if len(text.strip()) < 40:
        problems.append("too short")
    return problems


async def write_report(
    client,
    prompts,
    package: str,
    version: str,
    failing: list[str],
    failures: dict[str, str],
    api: list[str],
    bug_patch: str,
    file: str,
    seed: int,
    attempts: int = 2,
) -> tuple[str | None, list[str]]:
    """The model's bug report (`coding.statement: llm`), checked by `report_problems`; (None, why) when every
    attempt failed (the grammar's report stays)."""
    first = next((t for t in failing if t in failures), failing[0])
    messages = prompts.render_messages(
        "bug_report_writer",
        package=package,
        version=version,
        api=api[:3],
        failing=failing,
        error=error_lines(failures.get(first, "")),
    )
    why: list[str] = []
    for attempt in range(attempts):
        r = await client.structured("task_writer", messages, REPORT_SCHEMA, name="bug_report", seed=seed + attempt)
        if not r.ok:
            why.append(f"model: {r.error_kind or 'error'}")
            continue
        text = str((r.data or {}).get("report", "")).strip()
        problems = report_problems(text, failing, api, bug_patch, file)
        if not problems:
            return text, why
        why += problems
    return None, why
