"""Coding worlds (issue 52): mutations on the AST, patches, the agent's tools in the sandbox, bug tasks
made by execution and judged by execution. A tiny repository written here is the world of most tests;
one real package from the index (inflection 0.5.1) runs end to end."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from worldsmith.coding.bugs import baseline, make_bug_tasks, ordered_mutations
from worldsmith.coding.harness.ws_tools import ToolError, apply_patch_text
from worldsmith.coding.mutate import OPERATORS, find_mutations, is_test_file, source_files, unified_diff
from worldsmith.coding.repos import Repo, RepoEntry, fetch, load_repos
from worldsmith.coding.statement import error_lines
from worldsmith.coding.tools import Workspace, tree_diff, tree_files, truncate
from worldsmith.coding.verify import judge_patch

ROOT = Path(__file__).resolve().parent.parent
GRAMMAR = yaml.safe_load((ROOT / "prompts" / "bug_report.yaml").read_text())

MINI_SOURCE = '''\
"""A tiny library (a coding world in the tests)."""


def clamp(value, low=0, high=10):
    """value held between low and high."""
    if value < low:
        return low
    if value > high:
        return high
    return value


def mean(values):
    total = 0
    for v in values:
        total += v
    return total / len(values)


def chunks(items, size=2):
    out = []
    for i in range(0, len(items), size):
        out.append(items[i : i + size])
    return out


def initials(name, upper=True):
    letters = [part[0] for part in name.split() if part]
    text = "".join(letters)
    return text.upper() if upper else text


def between(x, a, b):
    return a <= x and x <= b


def subtract(a, b):
    return a - b
'''

MINI_TESTS = """\
import minilib


def test_clamp_low():
    assert minilib.clamp(-5) == 0


def test_clamp_high():
    assert minilib.clamp(50) == 10


def test_clamp_inside():
    assert minilib.clamp(5) == 5


def test_mean():
    assert minilib.mean([1, 2, 3, 6]) == 3


def test_chunks():
    assert minilib.chunks([1, 2, 3, 4, 5]) == [[1, 2], [3, 4], [5]]


def test_initials():
    assert minilib.initials("ada lovelace") == "AL"
    assert minilib.initials("ada lovelace", upper=False) == "al"


def test_between():
    assert minilib.between(3, 1, 5)
    assert not minilib.between(7, 1, 5)


def test_subtract():
    assert minilib.subtract(7, 2) == 5
"""


def make_mini_repo(root: Path) -> Repo:
    (root / "minilib").mkdir(parents=True)
    (root / "minilib" / "__init__.py").write_text(MINI_SOURCE)
    (root / "tests").mkdir()
    (root / "tests" / "test_minilib.py").write_text(MINI_TESTS)
    (root / "setup.py").write_text("from setuptools import setup\nsetup(name='minilib')\n")
    return Repo(name="minilib", version="0.1", source=f"path:{root}", sha256="0" * 64, root=root)


@pytest.fixture(scope="module")
def mini(tmp_path_factory) -> Repo:
    return make_mini_repo(tmp_path_factory.mktemp("mini") / "minilib")


@pytest.fixture(scope="module")
def mini_tasks(mini, tmp_path_factory):
    work = tmp_path_factory.mktemp("work")
    tasks, funnel = make_bug_tasks(mini, work, GRAMMAR, per_repo=6, max_tries=14, parallel=2, seed=3)
    return tasks, funnel, work


# ----------------------------------------------------------------------------- mutations


def test_every_operator_finds_places_and_each_edit_is_one_small_hunk():
    src = MINI_SOURCE.encode()
    found = find_mutations("minilib/__init__.py", src)
    by_op = {op: [m for m in found if m.operator == op] for op in OPERATORS}
    assert all(by_op[op] for op in OPERATORS), {op: len(v) for op, v in by_op.items()}
    for m in found:
        new = m.apply(src)
        ast.parse(new)  # still valid Python
        assert new != src
        diff = unified_diff(m.file, src, new)
        assert diff.count("@@ -") == 1, diff
        assert sum(1 for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")) <= 2


def test_the_operators_make_the_bugs_they_name():
    src = MINI_SOURCE.encode()
    found = find_mutations("minilib/__init__.py", src)
    texts = {(m.operator, m.description): m.apply(src).decode() for m in found}
    assert "if value >= low:" in texts[("flip_comparison", "< -> >=")]
    assert "if value <= low:" in texts[("off_by_one", "< -> <=")]
    assert "return b - a" not in MINI_SOURCE
    swapped = [t for (op, _), t in texts.items() if op == "swap_arguments" and "range(len(items), 0, size)" in t]
    assert swapped
    dropped = [t for (op, d), t in texts.items() if op == "drop_statement" and "total += v" in d]
    assert dropped and "total += v" not in dropped[0]
    assert "def initials(name, upper=False)" in texts[("wrong_constant", "default True -> False")]
    assert "if not (value > high):" in texts[("wrong_branch", "condition negated")]
    assert "a <= x or x <= b" in texts[("wrong_branch", "and -> or")]
    assert "text if upper else text.upper()" in texts[("wrong_branch", "conditional arms swapped")]


def test_docstrings_and_module_level_code_are_never_mutated():
    src = b'"""doc 1 < 2."""\nLIMIT = 3 + 1\n\n\ndef f(x):\n    """x < 1."""\n    return x\n'
    assert find_mutations("m.py", src) == []


def test_source_files_leave_out_tests_and_scripts(mini):
    assert source_files(mini.root) == ["minilib/__init__.py"]
    assert is_test_file("tests/test_x.py") and is_test_file("pkg/tests/helpers.py") and is_test_file("conftest.py")
    assert not is_test_file("pkg/testing_utils.py") or is_test_file("pkg/testing_utils.py") is False


def test_mutations_are_tried_round_robin_over_the_operators(mini):
    order = [m.operator for m, _ in ordered_mutations(mini, seed=1)]
    assert set(order[: len(OPERATORS)]) == set(OPERATORS)
    assert order == [m.operator for m, _ in ordered_mutations(mini, seed=1)]  # seeded


# ----------------------------------------------------------------------------- patches


def test_patch_round_trip_with_offset_and_refusal(tmp_path):
    before = "".join(f"line {i}\n" for i in range(1, 40))
    after = before.replace("line 20\n", "line twenty\n")
    diff = unified_diff("f.txt", before.encode(), after.encode())
    (tmp_path / "f.txt").write_text("extra\nextra\n" + before)  # the hunk moved down two lines
    assert apply_patch_text(diff, str(tmp_path)) == ["f.txt"]
    assert (tmp_path / "f.txt").read_text() == "extra\nextra\n" + after
    with pytest.raises(ToolError):  # its context is gone now
        apply_patch_text(diff, str(tmp_path))
    with pytest.raises(ToolError):
        apply_patch_text("--- a/../x\n+++ b/../x\n@@ -0,0 +1 @@\n+x\n", str(tmp_path))


def test_tree_diff_new_and_deleted_files_apply_back(tmp_path):
    a = {"keep.py": b"x = 1\n", "gone.py": b"y = 2\n"}
    b = {"keep.py": b"x = 3\n", "new.py": b"z = 4\n"}
    for rel, data in a.items():
        (tmp_path / rel).write_bytes(data)
    apply_patch_text(tree_diff(a, b), str(tmp_path))
    assert tree_files(tmp_path) == b


# ----------------------------------------------------------------------------- tasks by execution


def test_bug_tasks_are_kept_only_when_tests_break_and_gold_passes(mini_tasks, mini):
    tasks, funnel, _ = mini_tasks
    assert len(tasks) >= 4, funnel
    assert funnel.tried == funnel.broke + funnel.survived + funnel.killed
    assert funnel.verified == len(tasks)
    all_tests = {f"tests/test_minilib.py::{n}" for n in ("test_clamp_low", "test_mean", "test_subtract")}
    for t in tasks:
        assert t.fail_to_pass and not set(t.fail_to_pass) & set(t.pass_to_pass)
        assert len(t.fail_to_pass) + len(t.pass_to_pass) == 8
        assert all_tests <= set(t.fail_to_pass) | set(t.pass_to_pass)
        # the statement comes from the failing output, never from the diff
        changed = [ln[1:].strip() for ln in t.bug_patch.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
        assert all(c not in t.statement for c in changed if c), (t.statement, changed)
        assert "minilib/__init__.py" not in t.statement and t.operator not in t.statement
        assert t.fail_to_pass[0].split("::")[-1] in t.statement


def test_a_bug_that_no_test_catches_survives(mini, tmp_path):
    repo = make_mini_repo(tmp_path / "m2")
    (repo.root / "minilib" / "__init__.py").write_text(MINI_SOURCE + "\n\ndef unused(a, b):\n    return a < b\n")
    (repo.root / "tests" / "test_minilib.py").write_text(
        "import minilib\n\n\ndef test_nothing():\n    assert minilib\n"
    )
    tasks, funnel = make_bug_tasks(repo, tmp_path / "w", GRAMMAR, per_repo=2, max_tries=3, parallel=2)
    assert tasks == [] and funnel.survived == funnel.tried == 3


def test_baseline_leaves_out_failing_tests(tmp_path):
    repo = make_mini_repo(tmp_path / "m3")
    with open(repo.root / "tests" / "test_minilib.py", "a") as f:
        f.write("\n\ndef test_broken_upstream():\n    assert minilib.mean([2]) == 3\n")
    base = baseline(repo, tmp_path / "w")
    assert "tests/test_minilib.py::test_broken_upstream" not in base.passing
    assert len(base.passing) == 8


def test_judge_by_execution(mini_tasks, mini):
    tasks, _, work = mini_tasks
    task = tasks[0]
    gold = judge_patch(task, task.gold_patch, mini.root, work)
    assert gold.resolved and gold.tests_fixed == 1.0 and gold.tests_kept == 1.0, gold
    nothing = judge_patch(task, "", mini.root, work)
    assert not nothing.resolved and nothing.tests_fixed == 0.0 and nothing.tests_kept == 1.0
    # deleting the failing tests is not a fix
    test_file = "tests/test_minilib.py"
    cheat = unified_diff(test_file, MINI_TESTS.encode(), b"import minilib\n")
    cheated = judge_patch(task, cheat, mini.root, work)
    assert cheated.tests_edited == [test_file] and not cheated.resolved
    broken = judge_patch(
        task, "--- a/minilib/__init__.py\n+++ b/minilib/__init__.py\n@@ -1,1 +1,1 @@\n-nope\n+x\n", mini.root, work
    )
    assert not broken.applied and not broken.resolved


# ----------------------------------------------------------------------------- the agent's tools


def test_tools_in_the_sandbox(mini_tasks, mini, tmp_path):
    tasks, _, _ = mini_tasks
    task = tasks[0]
    with Workspace(task, mini.root, tmp_path) as ws:
        ok, listing = ws.call("list_files", {})
        assert ok and "minilib/__init__.py" in listing and "tests/test_minilib.py" in listing
        ok, text = ws.call("read_file", {"path": "minilib/__init__.py", "start_line": 4, "end_line": 6})
        assert ok and "def clamp" in text and "     4\t" in text and "     7\t" not in text
        ok, hits = ws.call("search", {"pattern": r"def \w+\(", "path": "minilib"})
        assert ok and "minilib/__init__.py:4: def clamp(value, low=0, high=10):" in hits
        ok, text = ws.call("read_file", {"path": "../../etc/passwd"})
        assert not ok and "outside the repository" in text
        ok, text = ws.call("run_tests", {"tests": task.fail_to_pass[:1]})
        assert ok and "1 failed" in text
        ok, text = ws.call("apply_patch", {"patch": task.gold_patch})
        assert ok and "patch applied" in text, text
        ok, text = ws.call("run_tests", {"tests": []})
        assert ok and "8 passed" in text, text
        assert ws.patch().strip() and judge_patch(task, ws.patch(), mini.root, tmp_path).resolved
        ok, text = ws.call("replace_in_file", {"path": "minilib/__init__.py", "old": "nothing like this", "new": "x"})
        assert not ok and "found 0 times" in text


def test_outputs_are_cut_like_a_harness():
    text = "".join(f"line {i}\n" for i in range(5000))
    cut = truncate(text, 1000)
    assert len(cut) < 1100 and cut.startswith("line 0") and cut.rstrip().endswith("line 4999")
    assert "characters truncated" in cut
    assert error_lines("x\nE   assert 1 == 2\nE    +  where\n") == "assert 1 == 2\n+  where"


# ----------------------------------------------------------------------------- repos


def test_repos_yaml_lists_pinned_packages_with_hashes():
    entries = load_repos(ROOT / "worlds" / "repos.yaml")
    assert len([e for e in entries if not e.held_out]) >= 5
    for e in entries:
        assert e.kind == "pypi" and "==" in (e.pypi or "") and len(e.sha256 or "") == 64
    with pytest.raises(ValueError):
        RepoEntry(name="x", pypi="x")  # not pinned
    with pytest.raises(ValueError):
        RepoEntry(name="x", path="a", git="b")


def test_a_local_repo_in_one_entry(tmp_path, mini):
    (tmp_path / "repos.yaml").write_text(f"repos:\n  - {{name: mine, path: {mini.root}}}\n")
    repo = fetch(load_repos(tmp_path / "repos.yaml")[0], tmp_path / "cache", base_dir=tmp_path)
    assert (repo.root / "minilib" / "__init__.py").read_text() == MINI_SOURCE
    assert repo.source.startswith("path:") and len(repo.sha256) == 64


def test_a_real_package_end_to_end(tmp_path):
    """inflection 0.5.1 from the package index: fetched by pip, its hash checked, bug tasks verified."""
    entry = {e.name: e for e in load_repos(ROOT / "worlds" / "repos.yaml")}["inflection"]
    cache = ROOT / "data" / "coding"
    repo = fetch(entry, cache)
    assert repo.sha256 == entry.sha256
    tasks, funnel = make_bug_tasks(repo, tmp_path, GRAMMAR, per_repo=2, max_tries=6, parallel=2, seed=0)
    assert len(tasks) >= 2, funnel
    assert all(len(t.pass_to_pass) > 400 for t in tasks)
    assert judge_patch(tasks[0], tasks[0].gold_patch, repo.root, tmp_path).resolved
    other = tmp_path / "other-cache" / "sdists"  # the same sdist, a wrong hash recorded: refused
    other.mkdir(parents=True)
    for sdist in (cache / "sdists").glob("inflection-0.5.1.*"):
        (other / sdist.name).write_bytes(sdist.read_bytes())
    with pytest.raises(Exception, match="sha256"):
        fetch(entry.model_copy(update={"sha256": "0" * 64}), tmp_path / "other-cache")


def test_a_task_whose_gold_run_fails_is_not_kept(mini, tmp_path, monkeypatch):
    """The gold revert runs in its own sandbox; when a listed test does not pass there (a flaky test), no task."""
    import worldsmith.coding.bugs as bugs

    real = bugs.run_tests

    def gold_flakes(box, *args, **kwargs):
        tr = real(box, *args, **kwargs)
        if box.root.name.startswith("gold-"):
            tr.outcomes = dict.fromkeys(tr.outcomes, "failed")
        return tr

    monkeypatch.setattr(bugs, "run_tests", gold_flakes)
    tasks, funnel = make_bug_tasks(mini, tmp_path, GRAMMAR, per_repo=2, max_tries=3, parallel=2, seed=3)
    assert tasks == [] and funnel.gold_failed == funnel.broke > 0


def test_the_tools_as_an_mcp_server(mini_tasks, mini, tmp_path):
    import asyncio

    from mcp import Client

    from worldsmith.coding.mcp_server import build_server
    from worldsmith.coding.tools import TOOL_NAMES

    task = mini_tasks[0][0]
    with Workspace(task, mini.root, tmp_path) as ws:

        async def session():
            async with Client(build_server(ws.box, task.python_path)) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                read = await client.call_tool("read_file", {"path": "minilib/__init__.py", "end_line": 5})
                bad = await client.call_tool("read_file", {"path": "/etc/passwd"})
                tests = await client.call_tool("run_tests", {"tests": task.fail_to_pass[:1]})
                return names, read, bad, tests

        names, read, bad, tests = asyncio.run(session())
    assert names == set(TOOL_NAMES)
    assert not read.is_error and "def clamp" in read.content[0].text
    assert bad.is_error and "outside the repository" in bad.content[0].text
    assert "1 failed" in tests.content[0].text


# ----------------------------------------------------------------------------- TestWriter


def test_take_out_removes_test_functions_and_keeps_classes_valid():
    from worldsmith.coding.testwriter import split_nodeid, take_out

    src = (
        b"import pytest\n\n\n@pytest.mark.parametrize('x', [1, 2])\ndef test_a(x):\n    assert x\n\n\n"
        b"def test_b():\n    pass\n\n\nclass TestC:\n    def test_c(self):\n        assert 1\n"
    )
    out = take_out(src, {("test_a",), ("TestC", "test_c")}).decode()
    assert "test_a" not in out and "parametrize" not in out and "def test_b" in out
    assert "class TestC:\n    pass\n" in out
    assert take_out(src, {("test_missing",)}) is None
    assert split_nodeid("t/test_x.py::TestC::test_c[1-2]") == ("t/test_x.py", ("TestC", "test_c"))


def test_testwriter_tasks_are_made_and_judged_by_execution(mini_tasks, mini, tmp_path):
    from worldsmith.coding.testwriter import make_testwriter_task
    from worldsmith.coding.verify import judge

    tasks, _, work = mini_tasks
    bug = next(t for t in tasks if len(t.fail_to_pass) == 1)
    outcome, tw = make_testwriter_task(bug, mini, work, GRAMMAR)
    assert outcome == "verified" and tw.family == "testwriter"
    name = bug.fail_to_pass[0].split("::")[-1]
    assert name not in tw.statement and "minilib/__init__.py" not in tw.statement
    assert f"def {name}" not in tw.bug_patch.split("+++ b/tests/test_minilib.py")[1].replace(f"-def {name}", "")
    gold = judge(tw, tw.gold_patch, mini.root, tmp_path)
    assert gold.resolved and gold.discriminating == bug.fail_to_pass, gold
    assert not judge(tw, "", mini.root, tmp_path).resolved
    # a test that passes on the bug too proves nothing; one that fails on the fixed code is wrong
    test_file = "tests/test_minilib.py"
    for body, ok in (("assert True", False), ("assert False", False)):
        patch = (
            f"--- a/{test_file}\n+++ b/{test_file}\n@@ -1,1 +1,5 @@\n import minilib\n+\n+\n"
            f"+def test_written_by_the_agent():\n+    {body}\n"
        )
        j = judge(tw, patch, mini.root, tmp_path)
        assert j.applied and j.resolved is ok and not j.discriminating, j
    # editing the library is not writing a test
    lib = judge(tw, bug.gold_patch, mini.root, tmp_path)
    assert not lib.resolved and lib.source_edited == ["minilib/__init__.py"]


def test_make_tasks_writes_resumes_and_counts_the_funnel(tmp_path, mini):
    """`worldsmith coding tasks`' loop: tasks appended to a JSONL with progress lines, a re-run makes none again."""
    from worldsmith.coding.make import make_tasks, read_tasks

    (tmp_path / "repos.yaml").write_text(f"repos:\n  - {{name: minilib, path: {mini.root}}}\n")
    out, lines = tmp_path / "tasks.jsonl", []
    s = make_tasks(
        tmp_path / "repos.yaml",
        tmp_path / "cache",
        out,
        GRAMMAR,
        per_repo=2,
        max_tries=8,
        log=lines.append,
        testwriter=1,
    )
    tasks = read_tasks(out)
    assert s["tasks_made"] >= 2 and s["testwriter_made"] == 1 and len(tasks) == s["tasks_made"] + 1
    assert s["funnel"]["tried"] >= s["funnel"]["broke"] >= s["funnel"]["verified"] == s["tasks_made"]
    assert any("baseline 8 passing tests" in ln for ln in lines) and any("TestWriter" in ln for ln in lines)
    again = make_tasks(
        tmp_path / "repos.yaml", tmp_path / "cache", out, GRAMMAR, per_repo=2, log=lines.append, testwriter=1
    )
    assert again["tasks_made"] == again["testwriter_made"] == 0 and len(read_tasks(out)) == len(tasks)
