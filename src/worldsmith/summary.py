"""The table a run ends with, for the terminal (rich) and as markdown (Prefect artifacts)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from worldsmith.pipeline import RunSummary


def _counts(counts: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in counts.items())


def summary_table(summary: RunSummary) -> Table:
    table = Table(title=f"worldsmith run {summary.run_id}: {summary.status} in {summary.seconds:.1f}s")
    table.add_column("stage")
    table.add_column("result")
    table.add_column("seconds", justify="right")
    for stage in summary.stages:
        table.add_row(stage.name, _counts(stage.counts), f"{stage.seconds:.1f}")
    usage = Table(title="LLM usage by role")
    for col in ("role", "calls", "failed", "prompt tok", "completion tok", "mean latency s"):
        usage.add_column(col, justify="right" if col != "role" else "left")
    for role, u in summary.usage.items():
        usage.add_row(
            role,
            str(u["calls"]),
            str(u["failures"]),
            str(u["prompt_tokens"]),
            str(u["completion_tokens"]),
            f"{u['mean_latency_s']:.2f}",
        )
    outer = Table.grid(padding=1)
    outer.add_row(table)
    if summary.usage:
        outer.add_row(usage)
    return outer


def print_summary(summary: RunSummary, console: Console | None = None) -> None:
    console = console or Console()
    console.print(summary_table(summary))
    if summary.catalog:
        console.print(f'catalog: {summary.catalog}   (worldsmith query "SELECT ..." or make query)')
    for stage in summary.stages:
        if stage.counts.get("replay_on_resume"):
            console.print(
                f"{stage.name}: {stage.counts['replay_on_resume']} episodes ended by a server failure (timeouts, "
                "5xx after retries) were not stored: run the same command again to play them",
                soft_wrap=True,
                highlight=False,
            )
        if stage.name == "report" and stage.counts.get("report"):
            console.print(f"report:  {stage.counts['report']}", soft_wrap=True, highlight=False)
        if stage.name == "export" and stage.counts.get("folder"):
            console.print(
                f"dataset: {stage.counts['folder']}   (datasets.load_dataset on that folder)",
                soft_wrap=True,
                highlight=False,
            )


def summary_markdown(summary: RunSummary) -> str:
    lines = [
        f"# worldsmith run `{summary.run_id}`: {summary.status} in {summary.seconds:.1f}s",
        "",
        "| stage | result | seconds |",
        "|---|---|---:|",
    ]
    lines += [f"| {s.name} | {_counts(s.counts)} | {s.seconds:.1f} |" for s in summary.stages]
    if summary.usage:
        lines += ["", "| role | calls | failed | prompt tokens | completion tokens |", "|---|---:|---:|---:|---:|"]
        lines += [
            f"| {r} | {u['calls']} | {u['failures']} | {u['prompt_tokens']} | {u['completion_tokens']} |"
            for r, u in summary.usage.items()
        ]
    report = next((s.counts for s in summary.stages if s.name == "report"), None)
    if report:  # the report's headline figures, and where it is
        lines += ["", "## Headline", "", "| figure | value |", "|---|---:|"]
        lines += [f"| {k} | {v} |" for k, v in report.items() if k != "report"]
        lines += ["", f"Report: [{report['report']}](file://{report['report']})"]
    return "\n".join(lines)
