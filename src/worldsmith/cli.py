"""The `worldsmith` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
import yaml
from rich.console import Console
from rich.table import Table

from worldsmith.config import ConfigError, load_config

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="worldsmith: agentic tool-use data in simulated worlds."
)
console = Console()
err = Console(stderr=True)

ConfigOpt = Annotated[
    Optional[Path],
    typer.Option("--config", "-c", help="pipeline.yaml (default: ./pipeline.yaml or $WORLDSMITH_CONFIG)"),
]
SetOpt = Annotated[
    Optional[list[str]], typer.Option("--set", "-s", help="override a config value: KEY.PATH=VALUE (repeatable)")
]
RunOpt = Annotated[
    Optional[str], typer.Option("--run-id", help="run to create or resume (default: <run.name>-<config hash>)")
]


@app.callback()
def _library_log() -> None:
    """The library's log (progress lines when stdout is not a terminal, warnings) goes to stdout."""
    from worldsmith.progress import log_to_stdout

    log_to_stdout()


def _load(config: Path | None, overrides: list[str] | None):
    try:
        return load_config(config, overrides or [])
    except ConfigError as exc:
        err.print(f"[red]error:[/red] {exc}", markup=True, highlight=False)
        raise typer.Exit(2) from None


@app.command()
def synth(
    config: ConfigOpt = None,
    set_: SetOpt = None,
    run_id: RunOpt = None,
    stage: Annotated[Optional[list[str]], typer.Option("--stage", help="run only these stages (repeatable)")] = None,
) -> None:
    """Run the pipeline end to end (or chosen stages), resuming a run with the same id."""
    from worldsmith import pipeline
    from worldsmith.llm.client import ServerUnavailable
    from worldsmith.summary import print_summary

    cfg, root = _load(config, set_)
    pipeline.stop_on_sigterm()
    try:
        pipeline.select_stages(cfg, stage)
    except ValueError as exc:
        err.print(f"[red]error:[/red] --stage: {exc}", highlight=False)
        raise typer.Exit(2) from None
    try:
        summary = pipeline.synth(cfg, root, run_id=run_id, stages=stage, log=lambda m: err.print(m, highlight=False))
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow]: finished records are on disk; run the same command again to resume")
        raise typer.Exit(130) from None
    except ServerUnavailable as exc:
        err.print(f"[red]stopped:[/red] {exc}", highlight=False)
        raise typer.Exit(3) from None
    print_summary(summary, console)


@app.command()
def serve(
    config: ConfigOpt = None,
    set_: SetOpt = None,
    model: Annotated[
        Optional[Path],
        typer.Option("--model", help="serve this model: a fine-tuned HF folder or a .gguf (default: llm.server's)"),
    ] = None,
    engine: Annotated[
        Optional[str],
        typer.Option(
            help="llamacpp | vllm (default: llm.server.engine; with --model: llamacpp, an HF folder converted to GGUF "
            "once)"
        ),
    ] = None,
    port: Annotated[Optional[int], typer.Option(help="port (default: llm.server.port)", min=1, max=65535)] = None,
    name: Annotated[
        Optional[str], typer.Option(help="the served model name (default with --model: the folder or file name)")
    ] = None,
    max_tokens: Annotated[
        Optional[int],
        typer.Option(
            help="reply length for a request that sends no max_tokens, as outside harnesses do (default: "
            "llm.server.max_tokens; 0: none); a request's own max_tokens is kept",
            min=0,
        ),
    ] = None,
    stop: Annotated[
        bool, typer.Option("--stop", help="stop the server started by `worldsmith serve` (on --port)")
    ] = False,
    status: Annotated[bool, typer.Option("--status", help="say whether a server answers")] = False,
) -> None:
    """Start a model server in the background and wait until it is healthy: the embedded one of
    the config, or with --model any fine-tuned model, as an OpenAI-compatible endpoint with
    worldsmith's tool chat template (for outside harnesses)."""
    import shlex
    import time

    from worldsmith.config import data_dir
    from worldsmith.llm.server import ModelServer, ServerError, example_request, serve_config, worldsmith_command

    cfg, root = _load(config, set_)
    if engine and engine not in ("llamacpp", "vllm"):
        err.print(f"[red]error:[/red] --engine: got {engine!r}, expected llamacpp or vllm")
        raise typer.Exit(2)
    server_cfg = cfg.llm.server.model_copy(update={"port": port}) if port else cfg.llm.server
    if max_tokens is not None:
        server_cfg = server_cfg.model_copy(update={"max_tokens": max_tokens})
    if stop or status:
        server = ModelServer(server_cfg, root, data_dir(cfg, root), engine=engine)
        if stop:
            stopped = server.stop()
            none = f"no server started by worldsmith is running on port {server_cfg.port}"
            console.print("stopped" if stopped else none)
        elif server.healthy():
            console.print(f"{server.url} answers; models: {', '.join(server.served_models())}; state: {server.state()}")
        else:
            console.print(f"nothing answers on {server.url}")
            raise typer.Exit(1)
        return
    try:
        if model:
            say = lambda m: err.print(m, highlight=False, markup=False, soft_wrap=True)  # noqa: E731
            server_cfg = serve_config(server_cfg, model, engine, port, name, log=say)
            engine = server_cfg.engine
        elif name:
            server_cfg = server_cfg.model_copy(update={"model": name})
        server = ModelServer(server_cfg, root, data_dir(cfg, root), engine=engine)
        t0 = time.monotonic()
        server.start()
    except ServerError as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(1) from None
    what = server_cfg.model_path or "the packaged SmolLM2"
    # the binary that runs now (a venv's is often not on PATH), with the config that finds the state file
    stop_cmd = f"{worldsmith_command()} serve --stop" + (f" --config {shlex.quote(str(config))}" if config else "")
    stop_cmd += f" --port {server_cfg.port}" if port else ""
    cap = f"{server_cfg.max_tokens} tokens" if server_cfg.max_tokens else "none"
    console.print(
        f"{server.engine} serving {what} (ready in {time.monotonic() - t0:.1f}s; log {server.log_file})\n"
        f"url: {server.url}\nmodel: {server_cfg.model}\n"
        f"reply length when a request sends no max_tokens: {cap} (--max-tokens)\n"
        f"try: {example_request(server.url, server_cfg.model)}\nstop: {stop_cmd}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


@app.command()
def query(
    sql: Annotated[
        str,
        typer.Argument(
            help=(
                "SQL over the catalog views: tools, agents, tasks, trajectories, verdicts, sft, rejections, smoke, runs"
            )
        ),
    ],
    config: ConfigOpt = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table | csv | json")] = "table",
    max_width: Annotated[int, typer.Option(help="truncate cells wider than this in table format")] = 80,
) -> None:
    """Run SQL on the DuckDB catalog of all runs and print the result."""
    import duckdb

    from worldsmith.config import data_dir
    from worldsmith.store import query as run_query

    cfg, root = _load(config, None)
    try:
        columns, rows = run_query(data_dir(cfg, root), sql)
    except duckdb.Error as exc:
        err.print(f"[red]SQL error:[/red] {exc}", highlight=False)
        raise typer.Exit(1) from None
    if fmt == "json":
        console.print_json(json.dumps([dict(zip(columns, r, strict=False)) for r in rows], default=str))
    elif fmt == "csv":
        import csv

        w = csv.writer(sys.stdout)
        w.writerow(columns)
        w.writerows(rows)
    else:
        table = Table(show_lines=False)
        for c in columns:
            table.add_column(c, overflow="fold")
        for r in rows:
            table.add_row(*[_cell(v, max_width) for v in r])
        console.print(table)
        console.print(f"{len(rows)} row(s)")


def _cell(value, width: int) -> str:
    text = "NULL" if value is None else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


@app.command()
def catalog(config: ConfigOpt = None) -> None:
    """Refresh the DuckDB catalog and data/views.sql; print their paths."""
    from worldsmith.config import data_dir
    from worldsmith.store import VIEWS_FILE, refresh_catalog

    cfg, root = _load(config, None)
    path = refresh_catalog(data_dir(cfg, root), root)
    console.print(f"catalog: {path}\nviews for any DuckDB CLI: {path.parent / VIEWS_FILE}")


@app.command()
def crawl(
    config: ConfigOpt = None,
    set_: SetOpt = None,
    server: Annotated[
        Optional[list[str]],
        typer.Option("--server", help="crawl only these servers (repeatable; may name a disabled one)"),
    ] = None,
) -> None:
    """Install and start the MCP servers of tool_specs/servers.yaml, list their tools, refresh the snapshot."""
    from worldsmith import commands
    from worldsmith.mcp import ServerListError

    cfg, root = _load(config, set_)
    try:
        summary = commands.crawl(cfg, root, server, log=lambda m: err.print(m, highlight=False, markup=False))
    except ServerListError as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(2) from None
    failed = summary.pop("failed")
    _print_table("crawl", ["key", "value"], [(k, str(v)) for k, v in summary.items()])
    if failed:
        _print_table("failed servers", ["server", "reason"], sorted(failed.items()), max_width=120)


@app.command("eval")
def eval_(
    model: Annotated[
        Optional[Path],
        typer.Option(
            "--model",
            help="the model under test: an HF folder or a GGUF (default: this config's `make finetune` output)",
        ),
    ] = None,
    config: ConfigOpt = None,
    set_: SetOpt = None,
    run_id: RunOpt = None,
    dataset: Annotated[
        Optional[Path],
        typer.Option(
            "--dataset", help="the export the model trained on (default: from its train.json, else the run's export)"
        ),
    ] = None,
    label: Annotated[str, typer.Option(help="the model's name in the tables")] = "finetuned",
    base: Annotated[
        Optional[bool],
        typer.Option("--base/--no-base", help="also evaluate the base model (default: eval.compare_base)"),
    ] = None,
) -> None:
    """Play the run's held-out tasks with the model as the agent policy (and the base model), judge them, compare."""
    from worldsmith import commands
    from worldsmith.evaluate.play import comparison_rows
    from worldsmith.llm.client import ServerUnavailable
    from worldsmith.llm.server import ServerError
    from worldsmith.pipeline import stop_on_sigterm

    cfg, root = _load(config, set_)
    stop_on_sigterm()
    try:
        evaluation = commands.evaluate(
            cfg, root, run_id, model, dataset, label, base, log=lambda m: err.print(m, highlight=False, markup=False)
        )
    except (ValueError, ServerError, ServerUnavailable) as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow]: finished episodes are on disk; run the same command again to resume")
        raise typer.Exit(130) from None
    _print_table(
        "eval: held-out tasks",
        ["", *[f"{r.label} ({r.mode})" for r in evaluation.results]],
        [(t, *cells) for t, cells in comparison_rows(evaluation.results)],
        max_width=70,
    )
    console.print(f"report: {evaluation.report}")


def _print_table(title: str, columns: list[str], rows: list[tuple], max_width: int = 60) -> None:
    table = Table(title=title, title_justify="left")
    for c in columns:
        table.add_column(c, overflow="fold")
    for r in rows:
        table.add_row(*[_cell(v, max_width) for v in r])
    console.print(table)


def _print_sections(config: Path | None, run_id: str | None, sections: dict[str, str]) -> None:
    from worldsmith.config import data_dir
    from worldsmith.store import latest_run, query_sections

    cfg, root = _load(config, None)
    data = data_dir(cfg, root)
    run = run_id or latest_run(data)
    if not run:
        err.print("no run yet: run `make synth` first")
        raise typer.Exit(1)
    console.print(f"run [bold]{run}[/bold]")
    for title, (columns, rows) in query_sections(data, run, sections).items():
        _print_table(title, columns, rows)


# ------------------------------------------------------------ one command group per stage, from its declaration


def _stage_commands(stage) -> typer.Typer:
    group = typer.Typer(help=stage.summary, no_args_is_help=True)

    def run(config: ConfigOpt = None, set_: SetOpt = None, run_id: RunOpt = None) -> None:
        synth(config=config, set_=set_, run_id=run_id, stage=[stage.name])

    run.__doc__ = f"Run the {stage.name} stage for one run (what is finished is skipped). {stage.summary}"
    group.command("run")(run)
    if stage.stats:

        def stats(config: ConfigOpt = None, run_id: RunOpt = None) -> None:
            _print_sections(config, run_id, dict(stage.stats))

        stats.__doc__ = (
            f"The {stage.name} stage's figures for a run (default: the latest): " + ", ".join(stage.stats) + "."
        )
        group.command("stats")(stats)
    app.add_typer(group, name=stage.name)
    return group


def _add_stage_commands() -> dict[str, typer.Typer]:
    from worldsmith.pipeline import STAGES

    return {stage.name: _stage_commands(stage) for stage in STAGES}


STAGE_APPS = _add_stage_commands()


@STAGE_APPS["worlds"].command("pack")
def worlds_pack(
    server: Annotated[str, typer.Argument(help="a crawled server's name (tool_specs/crawled/servers.jsonl)")],
    out: Annotated[Optional[Path], typer.Option("--out", help="the pack folder (default: worlds/<server>)")] = None,
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Save the world inferred from a crawled server's tools as a domain pack to edit by hand (docs/packs.md);
    `worlds.packs: [<name>]` then makes the run use it."""
    from worldsmith import commands

    cfg, root = _load(config, set_)
    try:
        summary = commands.pack_from_server(cfg, root, server, out)
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(2) from None
    _print_table("packs written", ["pack", "collections", "tools"], [tuple(p.values()) for p in summary["packs"]])
    if summary["unbound"]:
        _print_table(
            f"{len(summary['unbound'])} of {summary['tools']} tools left to the LLM simulator",
            ["tool", "why"],
            sorted(summary["unbound"].items()),
            max_width=100,
        )


@STAGE_APPS["judge"].command("checks")
def judge_checks(
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """The judge's declared checks (judge/checks.py), as the judge reads them: each check's name, what it reads,
    whether the policy drops an episode for it, what it is, and how many examples it catches and passes (they run as
    tests)."""
    from worldsmith.judge.checks import CHECKS

    cfg, _ = _load(config, set_)
    jcfg = cfg.judge

    def drops(name: str) -> str:
        if name == "unverifiable_claim":
            return f"policy {jcfg.unverifiable}"
        return "drops" if name in jcfg.reject_hacks else "recorded"

    _print_table(
        f"the judge's checks (judge.unverifiable: {jcfg.unverifiable})",
        ["check", "reads", "policy", "what it is", "catches", "passes"],
        [(c.name, c.reads, drops(c.name), " ".join(c.doc.split()), len(c.catches), len(c.passes)) for c in CHECKS],
        max_width=100,
    )


@STAGE_APPS["judge"].command("calibrate")
def judge_calibrate(
    config: ConfigOpt = None,
    set_: SetOpt = None,
    run_id: RunOpt = None,
    per_task: Annotated[int, typer.Option("--per-task", help="pairs per task at most")] = 2,
) -> None:
    """Calibrate the critic on the verifiable reward: for tasks with an episode that earned it and one that did not,
    the critic the reward uses (pointwise, its score passed at judge.min_critic_score) scores both; agreement and
    Cohen's kappa per difficulty go to critic_calibration.json, and judge.reward.rubric_min_kappa refuses the rubric
    reward below it (re-judge the run to apply it)."""
    import asyncio

    from worldsmith import pipeline
    from worldsmith.judge.calibration import calibrate, calibration_pairs, rubric_refusal, write_calibration
    from worldsmith.records import Task, Trajectory, Verdict

    cfg, root = _load(config, set_)
    with pipeline.model_server(cfg, root, log=lambda m: err.print(m, highlight=False)) as urls:
        ctx = pipeline.open_run(cfg, root, run_id, urls=urls)
        tasks = {t.task_id: t for t in ctx.store.read(Task)}
        pairs = calibration_pairs(tasks, ctx.store.read(Trajectory), ctx.store.read(Verdict), per_task, cfg.judge)
        if not pairs:
            err.print(
                f"run {ctx.run_id} has no task with both an episode that earned the verifiable reward and one that "
                "did not: nothing to calibrate on",
                highlight=False,
            )
            raise typer.Exit(1)

        async def go():
            async with ctx.client() as client:
                return await calibrate(client, ctx.prompts, pairs, cfg.run.seed, min_score=cfg.judge.min_critic_score)

        figures = asyncio.run(go())
    path = write_calibration(ctx.store.root, figures, cfg.llm.model_for("critic"))
    reward = cfg.judge.reward

    def rubric_reward(d: str, f: dict) -> str:
        if d == "all" or reward.rubric_min_kappa is None:
            return ""
        why = rubric_refusal(f, reward.rubric_min_kappa, reward.rubric_min_pairs)
        return "kept" if why is None else f"refused: {why}"

    _print_table(
        f"critic vs the verifiable reward ({len(pairs)} pairs) -> {path}",
        ["difficulty", "pairs", "unjudged", "agreement", "kappa", "critic said", "rubric reward"],
        [
            (
                d,
                f["pairs"],
                f.get("unjudged", 0),
                f["agreement"],
                f["kappa"],
                json.dumps(f["said"]),
                rubric_reward(d, f),
            )
            for d, f in figures.items()
        ],
    )


@STAGE_APPS["tasks"].command("export")
def tasks_export(
    config: ConfigOpt = None,
    set_: SetOpt = None,
    run_id: RunOpt = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="default: <data_dir>/tasksets/<run_id>")] = None,
) -> None:
    """Write the run's tasks as a Hugging Face dataset for RL stacks (tasks.parquet + README.md): each row holds
    its task, seeded world, rubric, agent and tools, so `worldsmith.gym` rebuilds the environment from it."""
    from worldsmith.config import data_dir
    from worldsmith.gym import TaskSet
    from worldsmith.gym.tasksets import write_taskset
    from worldsmith.store import RunStore

    cfg, root = _load(config, set_)
    data = data_dir(cfg, root)
    run = run_id or cfg.default_run_id()
    try:
        summary = write_taskset(
            TaskSet.from_run(RunStore(data, run), cfg.run.seed), out or data / "tasksets" / run, run
        )
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(2) from None
    _print_table("task set", ["what", "value"], sorted(summary.items()))


@STAGE_APPS["rollouts"].command("show")
def rollouts_show(
    trajectory_id: Annotated[Optional[str], typer.Argument(help="a trajectory id (default: the latest one)")] = None,
    config: ConfigOpt = None,
    run_id: RunOpt = None,
    kept: Annotated[Optional[bool], typer.Option("--kept/--dropped", help="the latest kept (or dropped) one")] = None,
    full: Annotated[bool, typer.Option("--full", help="print long texts whole (system prompt, tool results)")] = False,
) -> None:
    """Print one trajectory as a chat: messages, tool calls with arguments, faults, the world's
    patches and changed records, and the judge's verdict (criteria with evidence, reasons)."""
    from worldsmith.config import data_dir
    from worldsmith.report.trajectories import load_one, print_trajectory
    from worldsmith.store import latest_run

    cfg, root = _load(config, None)
    data = data_dir(cfg, root)
    run = run_id or latest_run(data)
    which = None if kept is None else "kept" if kept else "dropped"
    shown = load_one(data, run, trajectory_id, which) if run else None
    if shown is None:
        what = " ".join(x for x in (which, "trajectory", trajectory_id) if x)
        err.print(f"no {what} in run {run}", highlight=False, markup=False)
        raise typer.Exit(1)
    print_trajectory(shown, console, full=full)


@app.command()
def finetune(
    config: ConfigOpt = None,
    set_: SetOpt = None,
    run_id: RunOpt = None,
    dataset: Annotated[
        Optional[Path], typer.Option("--dataset", help="an export folder (default: the run's export)")
    ] = None,
) -> None:
    """Fine-tune the base model on an exported SFT dataset (Muon + AdamW, or AdamW), resuming from the
    last checkpoint."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from worldsmith import commands
    from worldsmith.finetune.loop import TrainingStopped
    from worldsmith.pipeline import stop_on_sigterm

    cfg, root = _load(config, set_)
    ft = cfg.finetune
    stop_on_sigterm()
    with Progress(
        TextColumn("[bold]finetune"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err,
    ) as bar:
        task = bar.add_task("finetune", total=ft.max_steps, status="loading the model")

        def progress(done: int, total: int, loss: float, rate: float) -> None:
            bar.update(task, completed=done, status=f"loss {loss:.4f} · {rate:.0f} tok/s")

        try:
            result = commands.finetune(
                cfg, root, run_id, dataset, log=lambda m: err.print(m, highlight=False), progress=progress
            )
        except (ValueError, TrainingStopped) as exc:
            err.print(f"[red]error:[/red] {exc}", highlight=False)
            raise typer.Exit(1) from None
    _print_table(
        "finetune",
        ["key", "value"],
        [
            ("model", str(result.model_dir)),
            ("optimizer", ft.optimizer),
            ("steps", str(result.steps)),
            ("first / last loss", f"{result.losses[0]:.4f} / {result.losses[-1]:.4f}"),
            ("validation loss", str(result.val_losses[-1:] or "n/a")),
            ("s / step", str(result.seconds_per_step)),
            ("tokens / s", str(result.tokens_per_s)),
            ("padding", f"{result.padding:.1%}"),
            ("peak RSS MB", str(result.peak_rss_mb)),
            ("resumed from step", str(result.resumed_from)),
            *(
                [("QK-clip: max logit / head rescales", f"{max(result.max_logits):.2f} / {result.clipped_heads}")]
                if result.max_logits
                else []
            ),
        ],
        max_width=120,
    )


@app.command()
def rl(config: ConfigOpt = None, set_: SetOpt = None, run_id: RunOpt = None) -> None:
    """Policy optimisation on the run's training tasks (Kimi k1.5's objective, MuonAdamW), the policy served between
    rounds; the held-out tasks played before and after. Resumes from the last finished round."""
    from worldsmith.pipeline import stop_on_sigterm
    from worldsmith.rl import run_rl

    cfg, root = _load(config, set_)
    stop_on_sigterm()
    try:
        r = run_rl(cfg, root, run_id, log=lambda m: err.print(m, highlight=False))
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(1) from None
    columns = [
        "round",
        "temperature",
        "episodes",
        "reward",
        "verifiable",
        "passed",
        "trained",
        "masked_share",
        "set_aside",
    ]
    _print_table("rl rounds (training tasks)", columns, [tuple(str(x.get(c)) for c in columns) for x in r.rounds])
    _print_table(
        "held-out tasks",
        ["", "episodes", "reward", "verifiable", "passed"],
        [
            (w, *(str(d.get(k)) for k in ("episodes", "reward", "verifiable", "passed")))
            for w, d in (("before", r.before), ("after", r.after))
        ],
    )
    console.print(f"model: {r.out / 'model'}   report: {r.out / 'rl.html'}   ({r.seconds:.0f} s)")


@app.command("config")
def show_config(config: ConfigOpt = None, set_: SetOpt = None) -> None:
    """Validate the config and print it resolved, with its hash."""
    cfg, _ = _load(config, set_)
    console.print(f"# config hash: {cfg.config_hash()}")
    console.print(yaml.safe_dump(cfg.resolved(), sort_keys=False), highlight=False, markup=False)


coding_app = typer.Typer(help="Coding worlds: real repositories, bugs made by execution, tests in a sandbox.")
app.add_typer(coding_app, name="coding")


@coding_app.command("tasks")
def coding_tasks(
    repos: Annotated[Path, typer.Option(help="the repositories (docs/coding.md)")] = Path("worlds/repos.yaml"),
    out: Annotated[Path, typer.Option(help="JSONL of verified tasks (appended; a re-run resumes)")] = Path(
        "data/coding/tasks.jsonl"
    ),
    cache: Annotated[Path, typer.Option(help="sdists, pristine trees and sandbox folders")] = Path("data/coding"),
    per_repo: Annotated[int, typer.Option(help="verified tasks wanted per repository")] = 20,
    max_tries: Annotated[int, typer.Option(help="mutations tried per repository at most")] = 200,
    parallel: Annotated[int, typer.Option(help="sandboxes at once")] = 2,
    seed: Annotated[int, typer.Option()] = 0,
    only: Annotated[Optional[list[str]], typer.Option(help="repository names (repeatable)")] = None,
    summary: Annotated[Optional[Path], typer.Option(help="write the funnel as JSON here")] = None,
    testwriter: Annotated[int, typer.Option(help="TestWriter tasks made from the bug tasks, per repository")] = 0,
) -> None:
    """Verified BugFixer tasks: mutations kept only when tests break and the gold revert passes, both in the sandbox."""
    from worldsmith.coding.make import make_tasks, write_summary
    from worldsmith.llm.prompts import Prompts

    grammar = Prompts(Path("prompts")).data("bug_report")
    line = lambda m: console.print(m, soft_wrap=True, highlight=False, markup=False)
    s = make_tasks(
        repos, cache, out, grammar, per_repo, max_tries, parallel, seed, only, log=line, testwriter=testwriter
    )
    if summary:
        write_summary(s, summary)
    f = s["funnel"]
    console.print(
        f"{s['tasks_made']} tasks made ({s['tasks_total']} in {out}) from {len(s['repos'])} repositories in"
        f" {s['seconds']:.0f} s: {s['tasks_per_minute']} tasks/min; tried {f['tried']} -> broke {f['broke']}"
        f" -> verified {f['verified']}"
    )


if __name__ == "__main__":
    app()
