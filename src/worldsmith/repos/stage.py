"""The repos stage (issue 52; docs/coding.md), on when `coding.enabled`: every repository of
`coding.repos_file` (or those `coding.repos` names) fetched at its pinned version and checked against
its hash, its suite run twice in the sandbox (the baseline: a `RepoWorld`), then mutations tried until
`coding.tasks_per_repo` BugFixer tasks are verified (a `CodingTask` each: the mutant broke some tests and
the gold revert passed them all, both in the sandbox), and `coding.testwriter_per_repo` TestWriter tasks from
them (coding/testwriter.py). A re-run makes only what is missing. The counts are the funnel: mutations tried
-> tests broke -> gold verified (and TestWriter outcomes); the rollouts play the tasks after."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

from worldsmith.coding.bugs import BaselineError, baseline, make_bug_tasks
from worldsmith.coding.models import Funnel
from worldsmith.coding.repos import RepoError, fetch, load_repos
from worldsmith.coding.statement import api_called, public_api, write_report
from worldsmith.coding.testwriter import make_testwriter_task, testwriter_id
from worldsmith.context import RunContext
from worldsmith.records import CodingTask, RepoWorld
from worldsmith.stage import Shard, Stage

log = logging.getLogger(__name__)
FUNNEL_FILE = "coding_funnel.json"  # in the run's folder: the funnel over every invocation (the report reads it)


def add_to_funnel(run_dir: Path, funnel: Funnel) -> Funnel:
    """The run's coding funnel with this invocation's added (a resumed run tries only what was missing)."""
    path = run_dir / FUNNEL_FILE
    total = Funnel.model_validate_json(path.read_text()) if path.is_file() else Funnel()
    total.add(funnel)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(total.model_dump(), indent=1))
    tmp.replace(path)
    return total


SECTIONS = {
    "repository worlds": """
        SELECT repo_id, source, baseline_tests, baseline_s, held_out, left(sha256, 12) AS sha256
        FROM repo_worlds WHERE run_id = $run ORDER BY repo_id""",
    "verified tasks by repository, family and operator": """
        SELECT repo, family, operator, count(*) AS tasks, round(avg(len(fail_to_pass)), 1) AS mean_fail_to_pass,
               round(avg(len(pass_to_pass))) AS mean_pass_to_pass
        FROM coding_tasks WHERE run_id = $run GROUP BY ALL ORDER BY repo, tasks DESC""",
    "coding episodes": """
        SELECT repo, status, count(*) AS episodes, count(*) FILTER (WHERE resolved) AS resolved,
               round(avg(tool_calls), 1) AS mean_tool_calls,
               round(avg((judgement->>'tests_fixed')::DOUBLE), 2) AS mean_tests_fixed,
               round(avg((judgement->>'tests_kept')::DOUBLE), 2) AS mean_tests_kept
        FROM coding_episodes WHERE run_id = $run GROUP BY ALL ORDER BY repo""",
}


async def model_statements(ctx: RunContext, repo, made: list[CodingTask], counts: dict[str, Any]) -> list[CodingTask]:
    """The tasks with the model's bug report where it passes its check (`coding.statement: llm`); the grammar's
    report stays on the others."""
    api = public_api(repo.root, repo.python_path, repo.exclude)
    out = []
    async with ctx.client() as client:
        for t in made:
            text, why = await write_report(
                client,
                ctx.prompts,
                t.repo,
                t.version,
                t.fail_to_pass,
                t.failure_output,
                api_called(repo.root, t.fail_to_pass, api),
                t.bug_patch,
                t.file,
                seed=ctx.seed + t.line,
            )
            for problem in why:
                counts[f"statement_refused:{problem}"] = counts.get(f"statement_refused:{problem}", 0) + 1
            source = "llm" if text else "grammar"
            counts[f"statement_{source}"] = counts.get(f"statement_{source}", 0) + 1
            out.append(t.model_copy(update={"statement": text, "statement_source": "llm"}) if text else t)
    return out


def testwriter_tasks(ctx: RunContext, repo, tasks: list[CodingTask], grammar: dict, cache: Path) -> list[str]:
    """TestWriter tasks from this repository's verified bug tasks until it has `coding.testwriter_per_repo`
    (each appended when verified); the outcome of each try."""
    mine = [t for t in tasks if t.repo == repo.name and t.version == repo.version]
    have = {t.task_id for t in mine if t.family == "testwriter"}
    want = ctx.cfg.coding.testwriter_per_repo - len(have)
    outcomes = []
    for bug in sorted((t for t in mine if t.family == "bugfix"), key=lambda t: t.task_id):
        if want <= 0 or len(outcomes) >= 3 * ctx.cfg.coding.testwriter_per_repo:
            break
        if testwriter_id(bug.task_id) in have:
            continue
        outcome, tw = make_testwriter_task(bug, repo, cache / "work", grammar, ctx.cfg.coding.backend, ctx.seed)
        outcomes.append(outcome)
        if tw is not None:
            ctx.store.append([tw])
            tasks.append(tw)
            want -= 1
    return outcomes


def run(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    coding = ctx.cfg.coding
    repos_file = ctx.path(coding.repos_file)
    cache = ctx.path(coding.cache_dir)
    grammar = ctx.prompts.data("bug_report")
    entries = [e for e in load_repos(repos_file) if not coding.repos or e.name in coding.repos]
    worlds = {w.repo_id: w for w in ctx.store.read(RepoWorld)}
    tasks = ctx.store.read(CodingTask)
    known = {t.task_id for t in tasks}
    funnel = Funnel()
    counts: dict[str, Any] = {}
    for entry in entries:
        try:
            repo = fetch(entry, cache, repos_file.parent)
            base = baseline(repo, cache / "work", coding.backend)
        except (RepoError, BaselineError) as exc:
            log.warning("repos: %s left out: %s", entry.name, str(exc)[:300])
            counts[f"drop:{entry.name}"] = 1
            continue
        if repo.repo_id not in worlds:
            world = RepoWorld(
                repo_id=repo.repo_id,
                name=repo.name,
                version=repo.version,
                source=repo.source,
                sha256=repo.sha256,
                python_path=repo.python_path,
                held_out=repo.held_out,
                baseline_tests=len(base.passing),
                baseline_s=round(base.seconds, 2),
            )
            ctx.store.append([world])
            worlds[repo.repo_id] = world
        have = sum(t.repo == repo.name and t.version == repo.version and t.family == "bugfix" for t in tasks)
        want = coding.tasks_per_repo - have
        made, f = [], Funnel()
        if want > 0:
            made, f = make_bug_tasks(
                repo,
                cache / "work",
                grammar,
                per_repo=want,
                max_tries=coding.max_tries,
                parallel=coding.parallel,
                seed=ctx.seed,
                backend=coding.backend,
                known=known,
                base=base,
            )
        if made and coding.statement == "llm":
            made = asyncio.run(model_statements(ctx, repo, made, counts))
        if made:
            ctx.store.append(made)
            tasks += made
        funnel.add(f)
        log.info("repos: %s: %d verified tasks (tried %d, broke %d)", repo.repo_id, len(made), f.tried, f.broke)
        for outcome in testwriter_tasks(ctx, repo, tasks, grammar, cache):
            counts[f"testwriter_{outcome}"] = counts.get(f"testwriter_{outcome}", 0) + 1
    add_to_funnel(ctx.store.root, funnel)
    counts.update(
        {
            "repo_worlds": ctx.store.count(RepoWorld),
            "coding_tasks": ctx.store.count(CodingTask),
            "mutations_tried": funnel.tried,
            "tests_broke": funnel.broke,
            "gold_verified": funnel.verified,
            "survived": funnel.survived,
            "killed": funnel.killed,
            "too_broad": funnel.too_broad,
            "gold_failed": funnel.gold_failed,
        }
    )
    return counts


STAGE = Stage(
    "repos",
    "Repositories as worlds and their bug tasks, each verified by execution in the sandbox (coding.enabled).",
    run,
    section="coding",
    totals=frozenset({"repo_worlds", "coding_tasks", "drop:"}),
    stats=SECTIONS,
)
