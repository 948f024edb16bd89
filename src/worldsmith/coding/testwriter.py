"""TestWriter tasks (Kimi-Dev's second family): from a verified bug task, a world where the tests that caught
the bug are taken out (the buggy library, its other tests), and the agent is asked to write a test that fails
on the buggy code and passes on the fixed one. Made by execution as the bug tasks are: in the sandbox, the
world's remaining suite passes, the taken-out tests put back (the gold) fail on the buggy world and pass on the
fixed one (the same tests taken out, no bug). Judged by `verify.judge_test_patch`."""

from __future__ import annotations

import ast
import hashlib
import random
import re
from pathlib import Path

from worldsmith.coding.harness.ws_tools import apply_patch_text
from worldsmith.coding.mutate import unified_diff
from worldsmith.coding.repos import Repo
from worldsmith.coding.sandbox import Box, Limits
from worldsmith.coding.statement import api_called, error_lines, public_api
from worldsmith.coding.testrun import run_tests
from worldsmith.records import CodingTask, content_id


def testwriter_id(bug_id: str) -> str:
    return content_id(bug_id, "testwriter", prefix="tw-")


def split_nodeid(nodeid: str) -> tuple[str, tuple[str, ...]]:
    """`tests/test_x.py::TestA::test_b[1-2]` -> ("tests/test_x.py", ("TestA", "test_b"))."""
    path, _, rest = nodeid.partition("::")
    return path, tuple(re.sub(r"\[.*$", "", p) for p in rest.split("::") if p)


def take_out(source: bytes, chains: set[tuple[str, ...]]) -> bytes | None:
    """The test file without the test functions named by `chains` (decorators included; a class left empty
    gets `pass`); None when one of them is not found."""
    tree = ast.parse(source)
    lines = source.decode().splitlines(keepends=True)
    spans: list[tuple[int, int, str]] = []  # (first line, last line, replacement) 1-based, inclusive

    def visit(body: list[ast.stmt], prefix: tuple[str, ...]) -> None:
        kept = 0
        removed: list[ast.stmt] = []
        for node in body:
            chain = (*prefix, getattr(node, "name", ""))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and chain in chains:
                removed.append(node)
                continue
            if isinstance(node, ast.ClassDef):
                visit(node.body, chain)
            kept += 1
        for i, node in enumerate(removed):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            filler = " " * node.col_offset + "pass\n" if (kept == 0 and i == 0 and prefix) else ""
            spans.append((first, node.end_lineno or node.lineno, filler))

    visit(tree.body, ())
    if len(spans) < len(chains):
        return None
    for first, last, filler in sorted(spans, reverse=True):
        lines[first - 1 : last] = [filler] if filler else []
    out = "".join(lines).encode()
    ast.parse(out)
    return out


def make_testwriter_task(
    bug: CodingTask,
    repo: Repo,
    work: Path,
    grammar: dict,
    backend: str = "auto",
    seed: int = 0,
) -> tuple[str, CodingTask | None]:
    """(outcome, the task): verified | no_tests (the failing tests could not be taken out) | world_fails |
    gold_not_failing | gold_not_passing."""
    by_file: dict[str, set[tuple[str, ...]]] = {}
    for t in bug.fail_to_pass:
        path, chain = split_nodeid(t)
        by_file.setdefault(path, set()).add(chain)
    removal = ""
    for path, chains in sorted(by_file.items()):
        src = (repo.root / path).read_bytes()
        try:
            out = take_out(src, chains)
        except (SyntaxError, ValueError):
            out = None
        if out is None:
            return "no_tests", None
        removal += unified_diff(path, src, out)

    def taken_out(nodeid: str) -> bool:
        path, chain = split_nodeid(nodeid)
        return chain in by_file.get(path, set())

    removed_ids = {t for t in [*bug.fail_to_pass, *bug.pass_to_pass] if taken_out(t)}
    p2p = sorted(t for t in bug.pass_to_pass if t not in removed_ids)
    gold = _reverse(removal)
    world_patch = bug.bug_patch + removal
    wall = 120.0
    limits = Limits(wall_s=wall, cpu_s=int(wall))
    with Box.fresh(repo.root, work, prefix=f"tw-{repo.name}-") as box:
        apply_patch_text(world_patch, str(box.repo))
        world = run_tests(box, repo.python_path, repo.tests, limits, backend)
    if not world.complete or any(t not in world.passed for t in p2p) or removed_ids & set(world.outcomes):
        return "world_fails", None
    with Box.fresh(repo.root, work, prefix=f"twg-{repo.name}-") as box:
        apply_patch_text(world_patch, str(box.repo))
        apply_patch_text(gold, str(box.repo))
        on_bug = run_tests(box, repo.python_path, repo.tests, limits, backend)
    if not any(on_bug.outcomes.get(t) in ("failed", "error") for t in bug.fail_to_pass):
        return "gold_not_failing", None
    with Box.fresh(repo.root, work, prefix=f"twf-{repo.name}-") as box:
        apply_patch_text(removal, str(box.repo))
        apply_patch_text(gold, str(box.repo))
        on_fix = run_tests(box, repo.python_path, repo.tests, limits, backend)
    if not on_fix.complete or any(t not in on_fix.passed for t in [*bug.fail_to_pass, *p2p]):
        return "gold_not_passing", None
    n = int(hashlib.sha256(f"{seed}:tw:{bug.task_id}".encode()).hexdigest()[:8], 16)
    api = api_called(repo.root, bug.fail_to_pass, public_api(repo.root, repo.python_path, repo.exclude))
    statement = testwriter_report(grammar, bug, n, api)
    return "verified", bug.model_copy(
        update={
            "task_id": testwriter_id(bug.task_id),
            "family": "testwriter",
            "bug_patch": world_patch,
            "gold_patch": gold,
            "fixed_patch": removal,
            "pass_to_pass": p2p,
            "statement": statement,
        }
    )


def _reverse(patch: str) -> str:
    """A unified diff of whole files, undone: the --- and +++ sides and the - and + lines swapped."""
    out = []
    for line in patch.splitlines(keepends=True):
        if line.startswith("--- a/"):
            out.append("--- a/" + line[6:])
        elif line.startswith("+++ b/"):
            out.append("+++ b/" + line[6:])
        elif line.startswith("@@"):
            m = re.match(r"@@ -(\d+(?:,\d+)?) \+(\d+(?:,\d+)?) @@(.*)", line, re.S)
            out.append(f"@@ -{m.group(2)} +{m.group(1)} @@{m.group(3)}" if m else line)
        elif line.startswith("-"):
            out.append("+" + line[1:])
        elif line.startswith("+"):
            out.append("-" + line[1:])
        else:
            out.append(line)
    return "".join(out)


def testwriter_report(grammar: dict, bug: CodingTask, seed: int, api: list[str]) -> str:
    """The user's report without the tests that caught the bug (they are not in this world): what they see
    (the first failure's error lines) and the ask for a test that reproduces it."""
    rng = random.Random(seed)
    g = grammar["testwriter"]
    failure = next((bug.failure_output[t] for t in bug.fail_to_pass if t in bug.failure_output), "")
    opener = rng.choice(grammar["openers"])
    parts = [opener] if opener else []
    slots = {"package": bug.repo, "version": bug.version, "api": f"`{api[0]}()`" if api else ""}
    parts.append(rng.choice(g["intros"]["with_api" if api else "without_api"]).format(**slots))
    parts.append(rng.choice(g["evidence"]) + "\n\n```\n" + error_lines(failure) + "\n```")
    parts.append(rng.choice(g["asks"]))
    return "\n\n".join(parts)
