"""Coding worlds through the pipeline (issue 52): the repos stage makes verified tasks into the run store,
and the rollouts play coding episodes through the one episode loop (EpisodeRun) with every tool call in the
sandbox, each patch judged by execution. The agent is scripted here (no model): it runs the failing test,
then applies a patch, then replies."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path

import pytest
from test_coding import MINI_TESTS, make_mini_repo

from worldsmith.coding.mutate import unified_diff
from worldsmith.config import validate_config
from worldsmith.context import RunContext
from worldsmith.llm import Prompts, UsageMeter
from worldsmith.llm.client import LLMResult
from worldsmith.records import CodingEpisode, CodingTask, RepoWorld, Verdict
from worldsmith.repos.stage import STAGE as REPOS
from worldsmith.rollouts.coding import chosen_tasks, play_coding
from worldsmith.store import RunStore

ROOT = Path(__file__).resolve().parent.parent


class AgentScript:
    """Stands in for LLMClient's agent role: a function of the messages gives each step (a list of
    (tool, arguments) calls, or the reply's text)."""

    def __init__(self, step):
        self.step = step
        self.usage = UsageMeter()
        self.calls = 0

    def metered(self, usage):
        child = copy.copy(self)
        child.usage = usage
        return child

    def role(self, name):
        from worldsmith.config import RoleConfig

        return RoleConfig()

    def model_for(self, role):
        return "scripted"

    async def tool_step(
        self, role, messages, tools, require_tool=False, seed=None, grammar_tools=None, quote=None, opening=None
    ):
        assert role == "agent", role
        reply = self.step(messages)
        r = LLMResult(ok=True, role=role, model="scripted", endpoint="fake", completion_tokens=10)
        if isinstance(reply, str):
            r.content = reply
        else:
            r.tool_calls = [
                {"id": f"call_{i}_{len(messages)}", "type": "function", "function": {"name": n, "arguments": a}}
                for i, (n, a) in enumerate((n, json.dumps(a)) for n, a in reply)
            ]
        self.usage.add(r)
        return r


@pytest.fixture(scope="module")
def run_ctx(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("codrun")
    repo = make_mini_repo(tmp / "minilib")
    (tmp / "repos.yaml").write_text(f"repos:\n  - {{name: minilib, path: {repo.root}}}\n")
    cfg = validate_config(
        {
            "coding": {
                "enabled": True,
                "repos_file": str(tmp / "repos.yaml"),
                "cache_dir": str(tmp / "cache"),
                "tasks_per_repo": 3,
                "max_tries": 12,
                "episodes": 2,
            },
            "rollouts": {"samples_per_task": 1},
        }
    )
    store = RunStore(tmp / "data", "cod")
    return RunContext(cfg=cfg, root=ROOT, run_id="cod", store=store, prompts=Prompts(ROOT / "prompts"))


def test_the_repos_stage_makes_verified_tasks_once(run_ctx):
    counts = REPOS.run(run_ctx)
    assert counts["repo_worlds"] == 1 and counts["coding_tasks"] >= 3, counts
    assert counts["mutations_tried"] >= counts["tests_broke"] >= counts["gold_verified"] >= 3
    world = run_ctx.store.read(RepoWorld)[0]
    assert world.baseline_tests == 8 and world.source.startswith("path:")
    tasks = run_ctx.store.read(CodingTask)
    assert all(t.fail_to_pass and t.statement for t in tasks)
    again = REPOS.run(run_ctx)  # resumed: nothing made twice
    assert again["mutations_tried"] == 0 and again["coding_tasks"] == counts["coding_tasks"]
    assert not REPOS.enabled(validate_config({}))  # off by default


def gold_fixer(tasks):
    """Runs the failing test, applies the task's gold patch, reruns it, then replies."""

    def step(messages):
        task = next(t for t in tasks if t.statement == messages[1]["content"])
        tool_msgs = [m for m in messages if m["role"] == "tool"]
        if not tool_msgs:
            return [("run_tests", {"tests": task.fail_to_pass[:1]})]
        if len(tool_msgs) == 1:
            return [("apply_patch", {"patch": task.gold_patch})]
        if len(tool_msgs) == 2:
            return [("run_tests", {"tests": task.fail_to_pass[:1]})]
        return "Fixed: the condition in the library was wrong; the failing test passes now."

    return step


def test_coding_episodes_run_in_the_sandbox_and_are_judged_by_execution(run_ctx, monkeypatch):
    if not run_ctx.store.read(CodingTask):
        REPOS.run(run_ctx)
    tasks = run_ctx.store.read(CodingTask)
    counts = asyncio.run(play_coding(run_ctx, AgentScript(gold_fixer(tasks))))
    assert counts["coding_played"] == 2 and counts["coding_resolved"] == 2, counts
    episodes = {t.family: e for e in run_ctx.store.read(CodingEpisode) for t in tasks if t.task_id == e.task_id}
    assert set(episodes) == {"bugfix", "testwriter"}  # one of each family, taken in turn
    for e in episodes.values():
        assert e.status == "finished" and e.tool_calls == 3 and e.resolved
        assert e.judgement.tests_fixed == 1.0 and e.judgement.tests_kept == 1.0
        msgs = e.trajectory["messages"]
        assert [m["role"] for m in msgs] == ["system", "user"] + ["assistant", "tool"] * 3 + ["assistant"]
        assert "patch applied" in msgs[5]["content"]
        assert [c["executor"] for c in e.trajectory["calls"]] == ["real", "real", "real"]
    bugfix, testwriter = episodes["bugfix"], episodes["testwriter"]
    # the fix: the failing test fails, then passes; the test writer: its test is not there, then fails on the bug
    assert "1 failed" in bugfix.trajectory["messages"][3]["content"]
    assert "1 passed" in bugfix.trajectory["messages"][7]["content"]
    assert "no tests ran" in testwriter.trajectory["messages"][3]["content"]
    assert "1 failed" in testwriter.trajectory["messages"][7]["content"]
    assert bugfix.patch.startswith("--- a/minilib/__init__.py")
    assert testwriter.patch.startswith("--- a/tests/test_minilib.py") and testwriter.judgement.discriminating
    again = asyncio.run(play_coding(run_ctx, AgentScript(gold_fixer(tasks))))  # resumed: nothing played twice
    assert "coding_played" not in again
    # a second sample of each: played once, under the id the resume looks for
    two = run_ctx.cfg.model_copy(update={"rollouts": run_ctx.cfg.rollouts.model_copy(update={"samples_per_task": 2})})
    monkeypatch.setattr(run_ctx, "cfg", two)
    assert asyncio.run(play_coding(run_ctx, AgentScript(gold_fixer(tasks))))["coding_played"] == 2
    assert "coding_played" not in asyncio.run(play_coding(run_ctx, AgentScript(gold_fixer(tasks))))


def test_a_patch_that_edits_the_tests_is_not_a_fix(run_ctx):
    from worldsmith.rollouts.coding import coding_rollouts_config, play_one

    if not run_ctx.store.read(CodingTask):
        REPOS.run(run_ctx)
    task = chosen_tasks(run_ctx.store.read(CodingTask), 1)[0]
    cheat = unified_diff("tests/test_minilib.py", MINI_TESTS.encode(), b"")

    def step(messages):
        if not any(m["role"] == "tool" for m in messages):
            return [("apply_patch", {"patch": cheat}), ("read_file", {"path": "nope.py"})]
        return "Done."

    cache = run_ctx.path(run_ctx.cfg.coding.cache_dir)
    pristine = next((cache / "repos").glob("minilib-*/"))
    cfg = coding_rollouts_config(run_ctx.cfg.rollouts, 4)
    e = asyncio.run(play_one(task, pristine, cache / "work", AgentScript(step), run_ctx.prompts, cfg, 0, 1))
    assert e.tool_calls == 2 and [c["ok"] for c in e.trajectory["calls"]] == [True, False]
    assert e.judgement.tests_edited == ["tests/test_minilib.py"] and not e.resolved


def test_the_report_shows_the_coding_funnel(run_ctx, tmp_path):
    """mutations tried -> tests broke -> gold verified (over every invocation of the repos stage) -> episodes ->
    resolved, in the run's report."""
    from worldsmith.report.stage import build_report

    if not run_ctx.store.read(CodingTask):
        REPOS.run(run_ctx)
    if not run_ctx.store.read(CodingEpisode):
        asyncio.run(play_coding(run_ctx, AgentScript(gold_fixer(run_ctx.store.read(CodingTask)))))
    funnel = json.loads((run_ctx.store.root / "coding_funnel.json").read_text())
    assert funnel["tried"] >= funnel["broke"] >= funnel["verified"] >= 3
    build_report(run_ctx.store.data_dir, run_ctx.run_id, tmp_path / "report.html", trajectories=False, worlds=False)
    page = (tmp_path / "report.html").read_text()
    table = page[page.index('id="coding-funnel-table"') :].split("</table>")[0]
    cells = [c.split("</td>")[0] for c in table.split("<td class=n>")[1::2]]
    episodes = run_ctx.store.read(CodingEpisode)
    played, resolved = len(episodes), sum(e.resolved for e in episodes)
    ids = {e.trajectory_id for e in episodes}
    kept = sum(v.passed for v in run_ctx.store.read(Verdict) if v.trajectory_id in ids)  # the judge stage's, if run
    assert played >= 2 and resolved >= 2
    assert cells == [
        *(str(funnel[k]) for k in ("tried", "broke", "verified")),
        *(str(n) for n in (played, resolved, kept)),
    ]


def test_the_export_takes_the_resolved_coding_episodes_and_the_tasks(run_ctx, tmp_path):
    from worldsmith.export.coding import export_coding

    if not run_ctx.store.read(CodingTask):
        REPOS.run(run_ctx)
    if not run_ctx.store.read(CodingEpisode):
        asyncio.run(play_coding(run_ctx, AgentScript(gold_fixer(run_ctx.store.read(CodingTask)))))
    resolved = sum(e.resolved for e in run_ctx.store.read(CodingEpisode))
    unresolved = run_ctx.store.read(CodingEpisode)[0].model_copy(
        update={"trajectory_id": "cod_unresolved", "resolved": False}
    )
    run_ctx.store.append([unresolved])
    counts = export_coding(run_ctx.store, tmp_path)
    rows = [json.loads(line) for line in (tmp_path / "coding" / "train.jsonl").read_text().splitlines()]
    assert counts["coding_examples"] == len(rows) == resolved >= 2  # the unresolved one is not kept
    for row in rows:
        assert row["messages"][0]["role"] == "system" and row["messages"][-1]["role"] == "assistant"
        assert {t["function"]["name"] for t in row["tools"]} >= {"read_file", "run_tests", "apply_patch"}
        assert row["metadata"]["patch"].startswith("--- a/") and row["metadata"]["reward"]["resolved"] == 1.0
    tasks = (tmp_path / "coding" / "tasks.jsonl").read_text().splitlines()
    assert len(tasks) == counts["coding_tasks"] == len(run_ctx.store.read(CodingTask))
    assert "fail_to_pass" in json.loads(tasks[0]) and "gold_patch" in json.loads(tasks[0])


def test_the_judge_stage_judges_coding_episodes_by_execution_and_their_replies(run_ctx, tmp_path):
    """Each coding episode gets a verdict: kept when its patch resolved the task in the sandbox and its reply passes
    the reply checks; its reward's components from the execution. The export keeps what the judge kept."""
    from worldsmith.export.coding import export_coding
    from worldsmith.judge.stage import STAGE as JUDGE

    if not run_ctx.store.read(CodingTask):
        REPOS.run(run_ctx)
    if not run_ctx.store.read(CodingEpisode):
        asyncio.run(play_coding(run_ctx, AgentScript(gold_fixer(run_ctx.store.read(CodingTask)))))
    good = next(e for e in run_ctx.store.read(CodingEpisode) if e.resolved)
    traj = copy.deepcopy(good.trajectory)
    traj["trajectory_id"] = "cod_garbled"
    traj["messages"][-1]["content"] = '{"status": "fixed", "tests": "passed"}'  # resolved, but its reply is no prose
    run_ctx.store.append([good.model_copy(update={"trajectory_id": "cod_garbled", "trajectory": traj})])
    unjudged = good.model_copy(update={"trajectory_id": "cod_unjudged", "judgement": None})  # judged by the stage
    run_ctx.store.append([unjudged])
    counts = JUDGE.run(run_ctx)
    verdicts = {v.trajectory_id: v for v in run_ctx.store.read(Verdict)}
    episodes = run_ctx.store.read(CodingEpisode)
    assert counts["coding_verdicts"] == len(episodes) and set(verdicts) >= {e.trajectory_id for e in episodes}
    assert counts["verdicts"] == 0  # no tool-world trajectory: the coding verdicts are counted apart
    for e in episodes:
        v = verdicts[e.trajectory_id]
        if e.trajectory_id == "cod_garbled":
            assert not v.passed and "hack:garbled_reply" in v.reasons, v.reasons
        elif e.judgement is None or e.judgement.resolved:  # the stored judgement is what the verdict reads
            assert v.passed and v.reward.verifiable == 1.0 and v.reward.verifiable_fraction == 1.0, v
        else:
            assert not v.passed and {"criterion:fail_to_pass", "criterion:patch_applies"} & set(v.reasons), v
    assert verdicts["cod_unjudged"].passed  # judged now, in a fresh sandbox
    rows = export_coding(run_ctx.store, tmp_path)
    kept = [json.loads(x)["metadata"]["trajectory_id"] for x in (tmp_path / "coding" / "train.jsonl").open()]
    assert rows["coding_examples"] == len(kept) and "cod_garbled" not in kept and "cod_unjudged" in kept
    assert JUDGE.run(run_ctx).get("coding_verdicts") is None  # resumed: nothing judged twice


def test_the_gym_plays_a_repo_world(run_ctx):
    """CodingEnv: the policy's messages step a coding episode whose tools run in the sandbox; the reward is the
    patch judged by execution (1.0 resolved, else 0.0)."""
    from worldsmith.gym.coding import CodingEnv, CodingTaskSet

    if not run_ctx.store.read(CodingTask):
        REPOS.run(run_ctx)
    taskset = CodingTaskSet.from_run(run_ctx.store, run_ctx.cfg, run_ctx.root)
    task = next(t for t in taskset.tasks.values() if t.family == "bugfix")
    env = CodingEnv(taskset, run_ctx.prompts, run_ctx.cfg)

    async def play(fix: bool):
        obs, info = await env.reset(task.task_id)
        assert obs.messages[-1] == {"role": "user", "content": task.statement} and info["family"] == "bugfix"
        call = {"function": {"name": "run_tests", "arguments": {"tests": task.fail_to_pass[:1]}}}
        r = await env.step({"content": None, "tool_calls": [call]})
        assert not (r.terminated or r.truncated) and "1 failed" in r.info["new_messages"][-1]["content"]
        if fix:
            patch = {"function": {"name": "apply_patch", "arguments": {"patch": task.gold_patch}}}
            await env.step({"content": None, "tool_calls": [patch]})
        return await env.finish("I fixed it.")

    fixed = asyncio.run(play(True))
    assert fixed.terminated and fixed.reward == 1.0 and fixed.info["reward"]["tests_fixed"] == 1.0
    assert fixed.info["patch"] == env.patch and env.trajectory().calls[0].executor == "real"
    unfixed = asyncio.run(play(False))
    assert unfixed.terminated and unfixed.reward == 0.0 and unfixed.info["judgement"].tests_fixed == 0.0
    env.close()


def test_trl_environments_over_coding_worlds(run_ctx):
    """TRL's environment mode: the six tools as the class's methods (run in the sandbox), a reward function per
    component of the execution's judgement."""
    from worldsmith.coding.tools import TOOL_NAMES
    from worldsmith.gym.coding import REWARD_COMPONENTS, CodingTaskSet, TRLCodingTasks

    if not run_ctx.store.read(CodingTask):
        REPOS.run(run_ctx)
    tasks = TRLCodingTasks(CodingTaskSet.from_run(run_ctx.store, run_ctx.cfg, run_ctx.root), run_ctx.cfg)
    rows = tasks.dataset()
    assert len(rows) == len(run_ctx.store.read(CodingTask)) and rows[0]["environment"] == "coding"
    (cls,) = tasks.environment_factories().values()
    assert all(callable(getattr(cls, name)) for name in TOOL_NAMES)
    task = next(t for t in tasks.taskset.tasks.values() if t.family == "bugfix")
    env = cls()
    env.reset(task_id=task.task_id, sample=0)
    assert "1 failed" in env.run_tests(tests=task.fail_to_pass[:1])
    assert "patch applied" in env.apply_patch(patch=task.gold_patch)
    completion = [{"role": "assistant", "content": "Fixed the comparison."}]
    rewards = {f.__name__: f([completion], [env]) for f in tasks.reward_funcs()}
    assert rewards == {f"worldsmith_coding_{c}": [1.0] for c in REWARD_COMPONENTS}
    env._env.close()


class ReportWriter:
    """Stands in for the task_writer model: a report that quotes the changed code first, then a good one."""

    def __init__(self):
        self.calls = 0

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return None

    async def structured(self, role, messages, schema, name="record", seed=None):
        assert role == "task_writer" and name == "bug_report"
        self.calls += 1
        prompt = messages[-1]["content"]
        test = prompt.split("Failing tests")[1].split("- ")[1].split("\n")[0].split("::")[-1]
        leak = self.leak if self.calls % 2 else ""
        text = f"Since upgrading, {test} fails for me with the error below. {leak} Please fix the library."
        return LLMResult(ok=True, role=role, model="scripted", endpoint="fake", data={"report": text})


def test_model_written_reports_are_checked_and_fall_back_to_the_grammar(run_ctx, monkeypatch):
    """coding.statement llm: the model's report is kept only when it names a failing test and leaks nothing of
    the change; a report quoting the changed code is refused (and sampled again)."""
    from worldsmith.coding.repos import fetch, load_repos
    from worldsmith.coding.statement import report_problems
    from worldsmith.repos.stage import model_statements

    if not run_ctx.store.read(CodingTask):
        REPOS.run(run_ctx)
    task = next(t for t in run_ctx.store.read(CodingTask) if t.family == "bugfix")
    changed = next(ln[1:].strip() for ln in task.bug_patch.splitlines() if ln.startswith("+") and "+++" not in ln)
    writer = ReportWriter()
    writer.leak = f"I think `{changed}` is wrong."
    monkeypatch.setattr(run_ctx, "client", lambda: writer)
    entry = load_repos(run_ctx.path(run_ctx.cfg.coding.repos_file))[0]
    repo = fetch(entry, run_ctx.path(run_ctx.cfg.coding.cache_dir), run_ctx.path(run_ctx.cfg.coding.repos_file).parent)
    counts: dict = {}
    (out,) = asyncio.run(model_statements(run_ctx, repo, [task], counts))
    assert out.statement_source == "llm" and changed not in out.statement and writer.calls == 2
    assert counts["statement_refused:quotes the changed code"] == 1 and counts["statement_llm"] == 1
    assert report_problems("It is broken, please fix it soon, thanks a lot.", task.fail_to_pass, [], "", task.file)
    writer.leak, writer.calls = f"Look at {task.file} line {task.line}: `{changed}`.", 0

    async def always_leaks(role, messages, schema, name="record", seed=None):
        r = await ReportWriter.structured(writer, role, messages, schema, name, seed)
        r.data["report"] += f" {task.file}"
        return r

    monkeypatch.setattr(writer, "structured", always_leaks)
    (kept,) = asyncio.run(model_statements(run_ctx, repo, [task], counts))
    assert kept.statement_source == "grammar" and kept.statement == task.statement


def test_the_judge_hook_judges_an_episode_from_the_config(run_ctx):
    from worldsmith.coding.verify import judge_coding_episode

    if not run_ctx.store.read(CodingTask):
        REPOS.run(run_ctx)
    task = next(t for t in run_ctx.store.read(CodingTask) if t.family == "bugfix")
    good = judge_coding_episode(task, task.gold_patch, run_ctx.cfg.coding, run_ctx.root)
    bad = judge_coding_episode(task, "", run_ctx.cfg.coding, run_ctx.root)
    assert good.resolved and good.reward == {"tests_fixed": 1.0, "tests_kept": 1.0, "resolved": 1.0}
    assert not bad.resolved and bad.reward["tests_fixed"] == 0.0
