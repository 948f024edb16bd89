"""Coding worlds (issue 52): how many verified BugFixer tasks this machine makes per minute from the
repositories of worlds/repos.yaml, and how mutations survive by operator (mutations tried -> tests
broke -> gold verified). Every task's mutant and gold revert ran in the sandbox (bubblewrap) with at
most `--parallel` sandboxes at once. A fresh output folder each run (nothing resumed), so the rate
is the rate of making them. Writes benchmarks/results/coding_tasks.json and coding_tasks.md.

    .venv/bin/python benchmarks/coding_tasks.py --per-repo 20 --parallel 2
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

from worldsmith.coding.make import make_tasks, read_tasks
from worldsmith.coding.sandbox import Box, Limits, backend_name, run
from worldsmith.llm.prompts import Prompts

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def sandbox_overhead(cache: Path, n: int = 10) -> dict:
    """Seconds of `/bin/true` in a fresh sandbox vs outside it (the fixed cost of every command)."""
    src = cache / "overhead-src"
    src.mkdir(parents=True, exist_ok=True)
    inside = []
    for _ in range(n):
        with Box.fresh(src, cache / "work") as box:
            t = time.monotonic()
            run(["/bin/true"], box, Limits(wall_s=20))
            inside.append(time.monotonic() - t)
    outside = []
    for _ in range(n):
        t = time.monotonic()
        subprocess.run(["/bin/true"], check=True)
        outside.append(time.monotonic() - t)
    return {"sandbox_s": round(sorted(inside)[n // 2], 4), "plain_s": round(sorted(outside)[n // 2], 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-repo", type=int, default=20)
    ap.add_argument("--max-tries", type=int, default=120)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repos", type=Path, default=ROOT / "worlds" / "repos.yaml")
    ap.add_argument("--cache", type=Path, default=ROOT / "data" / "coding")
    args = ap.parse_args()

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = args.cache / "bench" / stamp / "tasks.jsonl"
    grammar = Prompts(ROOT / "prompts").data("bug_report")
    started = datetime.now(UTC).isoformat(timespec="seconds")
    summary = make_tasks(
        args.repos,
        args.cache,
        out,
        grammar,
        per_repo=args.per_repo,
        max_tries=args.max_tries,
        parallel=args.parallel,
        seed=args.seed,
        log=lambda m: print(f"{datetime.now(UTC):%H:%M:%S} {m}", flush=True),
    )
    tasks = read_tasks(out)
    result = {
        "benchmark": "coding_tasks",
        "started": started,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "sandbox": {"backend": backend_name(), **sandbox_overhead(args.cache)},
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        **summary,
        "fail_to_pass_per_task": {
            "median": sorted(len(t.fail_to_pass) for t in tasks)[len(tasks) // 2] if tasks else 0,
            "max": max((len(t.fail_to_pass) for t in tasks), default=0),
        },
        "tasks_by_operator": {op: sum(t.operator == op for t in tasks) for op in sorted({t.operator for t in tasks})},
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "coding_tasks.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "coding_tasks.md").write_text(markdown(result))
    print(markdown(result))


def markdown(r: dict) -> str:
    f = r["funnel"]
    lines = [
        "# Coding tasks: verified BugFixer tasks made on this machine",
        "",
        f"{r['started']}, {r['machine']['cpus']} CPUs, sandbox `{r['sandbox']['backend']}`"
        f" (a command's fixed cost {r['sandbox']['sandbox_s']:.3f} s vs {r['sandbox']['plain_s']:.3f} s outside),"
        f" {r['parallel']} sandboxes at once.",
        "",
        f"**{r['tasks_made']} verified tasks from {len(r['repos'])} packages in {r['seconds'] / 60:.1f} min:"
        f" {r['tasks_per_minute']} tasks/min.** Funnel: {f['tried']} mutations tried -> {f['broke']} broke tests"
        f" -> {f['verified']} gold verified ({f['survived']} survived, {f['killed']} killed at the limits,"
        f" {f['too_broad']} too broad, {f['gold_failed']} gold failed, {f['duplicate']} duplicates skipped).",
        "",
        "| operator | tried | broke | verified | survived | killed | broke share | verified share |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for op, row in r["survival_by_operator"].items():
        lines.append(
            f"| {op} | {row.get('tried', 0)} | {row.get('broke', 0)} | {row.get('verified', 0)} |"
            f" {row.get('survived', 0)} | {row.get('killed', 0)} | {row['broke_share']:.2f} |"
            f" {row['verified_share']:.2f} |"
        )
    lines += [
        "",
        "| package | version | baseline tests | suite s | tasks | tried | seconds |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, row in r["by_repo"].items():
        if "error" in row:
            lines.append(f"| {name} | error: {row['error'][:80]} | | | | | |")
            continue
        lines.append(
            f"| {name} | {row['version']} | {row['baseline_tests']} | {row['baseline_s']} | {row['tasks']} |"
            f" {row['funnel']['tried']} | {row['seconds']} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
