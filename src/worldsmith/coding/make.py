"""Verified bug tasks from every repository of repos.yaml (`worldsmith coding tasks`, the benchmark
benchmarks/coding_tasks.py): fetch each, run its baseline, try mutations until `per_repo` tasks are
verified, append each repository's tasks to a JSONL file (a re-run skips the tasks it holds) and
report the funnel (mutations tried -> tests broke -> gold verified) by repository and by operator."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from worldsmith.coding.bugs import BaselineError, baseline, make_bug_tasks
from worldsmith.coding.models import BugTask, Funnel
from worldsmith.coding.repos import RepoError, fetch, load_repos
from worldsmith.coding.testwriter import make_testwriter_task, testwriter_id


def read_tasks(path: Path) -> list[BugTask]:
    if not path.is_file():
        return []
    return [BugTask.model_validate_json(line) for line in path.read_text().splitlines() if line.strip()]


def make_tasks(
    repos_file: Path,
    cache_dir: Path,
    out: Path,
    grammar: dict,
    per_repo: int = 20,
    max_tries: int = 200,
    parallel: int = 2,
    seed: int = 0,
    only: list[str] | None = None,
    backend: str = "auto",
    log: Callable[[str], None] = print,
    testwriter: int = 0,
) -> dict:
    """Make (or resume) the tasks; the summary: counts, seconds, rate, the funnel by repo and operator."""
    entries = [e for e in load_repos(repos_file) if not only or e.name in only]
    out.parent.mkdir(parents=True, exist_ok=True)
    have = read_tasks(out)
    known = {t.task_id for t in have}
    total = Funnel()
    by_repo: dict[str, dict] = {}
    t0 = time.monotonic()
    made = tw_total = 0
    for entry in entries:
        r0 = time.monotonic()
        try:
            repo = fetch(entry, cache_dir, base_dir=repos_file.parent)
            base = baseline(repo, cache_dir / "work", backend)
        except (RepoError, BaselineError) as exc:
            log(f"{entry.name}: skipped: {exc}")
            by_repo[entry.name] = {"error": str(exc)[:500]}
            continue
        already = sum(t.repo == repo.name and t.version == repo.version and t.family == "bugfix" for t in have)
        want = max(0, per_repo - already)
        log(
            f"{repo.repo_id}: baseline {len(base.passing)} passing tests in {base.seconds:.1f} s"
            f" ({len(base.flaky)} flaky left out); {already} tasks held, making {want}"
        )
        last = [time.monotonic()]

        def progress(line: str, funnel: Funnel, name: str = repo.name, last: list[float] = last) -> None:
            if time.monotonic() - last[0] >= 10 or funnel.tried % 10 == 0:
                last[0] = time.monotonic()
                log(f"{name}: tried {funnel.tried}, broke {funnel.broke}, verified {funnel.verified} | {line}")

        tasks, funnel = (
            make_bug_tasks(
                repo,
                cache_dir / "work",
                grammar,
                per_repo=want,
                max_tries=max_tries,
                parallel=parallel,
                seed=seed,
                backend=backend,
                on_progress=progress,
                known=known,
                base=base,
            )
            if want
            else ([], Funnel())
        )
        tw_made, tw_outcomes = [], []
        if testwriter:
            have_tw = {t.task_id for t in have if t.repo == repo.name and t.family == "testwriter"}
            bugs = sorted(
                [*tasks, *(t for t in have if t.repo == repo.name and t.family == "bugfix")], key=lambda t: t.task_id
            )
            for bug in bugs:
                if len(tw_made) + len(have_tw) >= testwriter or len(tw_outcomes) >= 3 * testwriter:
                    break
                if testwriter_id(bug.task_id) in have_tw:
                    continue
                outcome, tw = make_testwriter_task(bug, repo, cache_dir / "work", grammar, backend, seed)
                tw_outcomes.append(outcome)
                if tw is not None:
                    tw_made.append(tw)
            log(f"{repo.repo_id}: {len(tw_made)} TestWriter tasks ({', '.join(tw_outcomes) or 'none tried'})")
        with open(out, "a") as f:
            for t in [*tasks, *tw_made]:
                f.write(t.model_dump_json() + "\n")
        made += len(tasks)
        tw_total += len(tw_made)
        total.add(funnel)
        seconds = time.monotonic() - r0
        by_repo[repo.name] = {
            "version": repo.version,
            "sha256": repo.sha256,
            "baseline_tests": len(base.passing),
            "baseline_s": round(base.seconds, 2),
            "tasks": len(tasks) + already,
            "testwriter_tasks": len(tw_made),
            "seconds": round(seconds, 1),
            "funnel": funnel.model_dump(exclude={"by_operator"}),
        }
        log(
            f"{repo.repo_id}: {len(tasks)} verified tasks in {seconds:.0f} s"
            f" (tried {funnel.tried}, broke {funnel.broke}, survived {funnel.survived}, killed {funnel.killed},"
            f" gold failed {funnel.gold_failed}, too broad {funnel.too_broad})"
        )
    seconds = time.monotonic() - t0
    summary = {
        "tasks_made": made,
        "testwriter_made": tw_total,
        "tasks_total": len(read_tasks(out)),
        "repos": sorted(n for n, r in by_repo.items() if r.get("tasks")),
        "seconds": round(seconds, 1),
        "tasks_per_minute": round(made / (seconds / 60), 2) if seconds > 0 else 0.0,
        "parallel": parallel,
        "funnel": total.model_dump(),
        "survival_by_operator": {
            op: {
                **row,
                "broke_share": round(row.get("broke", 0) / row["tried"], 3) if row.get("tried") else 0.0,
                "verified_share": round(row.get("verified", 0) / row["tried"], 3) if row.get("tried") else 0.0,
            }
            for op, row in sorted(total.by_operator.items())
        },
        "by_repo": by_repo,
        "out": str(out),
    }
    return summary


def write_summary(summary: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2) + "\n")
