"""Prefect flow: the whole pipeline, end to end. Thin: every step is a library call.

    python flows/synth.py [--set KEY=VALUE ...] [--run-id ID]     (what `make synth` runs)

If a Prefect server answers on 127.0.0.1:4200 the run is reported to it (and shows in the
UI); otherwise Prefect runs a temporary local server for the duration of the run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _prefect_env import use_local_server_if_up  # noqa: E402

use_local_server_if_up()

from prefect import flow, get_run_logger, task  # noqa: E402
from prefect.artifacts import create_markdown_artifact  # noqa: E402
from prefect.cache_policies import NO_CACHE  # noqa: E402

from worldsmith import pipeline  # noqa: E402
from worldsmith.config import load_config  # noqa: E402
from worldsmith.summary import print_summary, summary_markdown  # noqa: E402


@task(name="stage", cache_policy=NO_CACHE, task_run_name="{name}")
def run_stage(ctx, name: str) -> pipeline.StageResult:
    return pipeline.run_stage(ctx, name)


def run_stages(config_path: str, overrides: list[str] | None, run_id: str | None, stages: list[str] | None) -> dict:
    """The body every stage flow shares: model server, run, one task per stage, summary artifact."""
    logger = get_run_logger()
    cfg, root = load_config(config_path, overrides or [])
    names = stages or pipeline.enabled_stages(cfg)
    summary = pipeline.RunSummary(run_id="", status="running")
    with pipeline.model_server(cfg, root, log=logger.info) as url:
        ctx = pipeline.open_run(cfg, root, run_id, embedded_url=url)
        summary.run_id = ctx.run_id
        try:
            for name in names:
                summary.stages.append(run_stage(ctx, name))
        except BaseException as exc:
            pipeline.finish_run(ctx, "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed", f"{exc.__class__.__name__}: {exc}")
            raise
        summary.catalog = pipeline.finish_run(ctx, "finished")
        summary.status, summary.usage = "finished", ctx.usage.snapshot()
        summary.seconds = sum(s.seconds for s in summary.stages)
    create_markdown_artifact(key=f"{'-'.join(names)}-summary"[:60], markdown=summary_markdown(summary), description="worldsmith run")
    print_summary(summary)
    return {"run_id": summary.run_id, "status": summary.status, "stages": {s.name: s.counts for s in summary.stages}}


@flow(name="synth", log_prints=True)
def synth(config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None) -> dict:
    """Tools -> bundles -> agents -> tasks -> rollouts (and the stages to come), resuming a run with the same id."""
    return run_stages(config_path, overrides, run_id, None)


@flow(name="evolve", log_prints=True)
def evolve(config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None) -> dict:
    """The tool repository for a run: crawled snapshot + evolved tools, then tool bundles."""
    return run_stages(config_path, overrides, run_id, ["tools", "bundles"])


@flow(name="rollouts", log_prints=True)
def rollouts(config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None) -> dict:
    """Simulated episodes for the run's tasks (finished episodes are skipped)."""
    return run_stages(config_path, overrides, run_id, ["rollouts"])


FLOWS = {"synth": synth, "evolve": evolve, "rollouts": rollouts}


def main(argv: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Run the worldsmith synth flow")
    parser.add_argument("--config", default=os.environ.get("WORLDSMITH_CONFIG", "pipeline.yaml"))
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--run-id", default=None)
    parser.add_argument("--flow", choices=list(FLOWS), default="synth")
    args = parser.parse_args(argv)
    from worldsmith.config import ConfigError

    try:
        load_config(args.config, args.overrides)  # fail before Prefect starts anything
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    from worldsmith.cli import stop_on_sigterm

    stop_on_sigterm()
    FLOWS[args.flow](config_path=args.config, overrides=args.overrides, run_id=args.run_id)


if __name__ == "__main__":
    main(sys.argv[1:])
