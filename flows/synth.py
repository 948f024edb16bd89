"""Prefect flows over the pipeline: `synth` end to end, and one flow per stage. Thin: every
step is a library call (worldsmith never imports Prefect).

    python flows/synth.py [--flow synth|evolve|agents|tasks|rollouts|judge|export|finetune] [--set KEY=VALUE ...] [--run-id ID]

Tasks: the stages that split (agents, tasks, rollouts, judge) run one task per shard of
`run.shard_size` input records (per-item concurrency stays inside, in asyncio). A shard
task's cache key is its explicit inputs (config hash, run start, stage, shard, hash of the
shard's input ids) plus the task's source, with results persisted under the repo's
Prefect home, so re-running a finished flow skips finished shards; model-calling tasks
retry (the library resumes, so a retry redoes only what is missing). Each stage publishes
a table artifact; `synth` a markdown summary that links the HTML report.

If a Prefect server answers on 127.0.0.1:4200 (`make ui`) runs are reported to it;
otherwise Prefect runs a temporary local server for the duration of the run.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _prefect_env import use_local_server_if_up  # noqa: E402

use_local_server_if_up()

from prefect import flow, get_run_logger, task  # noqa: E402
from prefect.context import FlowRunContext  # noqa: E402
from prefect.exceptions import MissingContextError  # noqa: E402
from prefect.artifacts import create_markdown_artifact, create_table_artifact  # noqa: E402
from prefect.cache_policies import INPUTS, NO_CACHE, TASK_SOURCE  # noqa: E402

from worldsmith import pipeline  # noqa: E402
from worldsmith.config import load_config  # noqa: E402
from worldsmith.llm.client import ServerUnavailable  # noqa: E402
from worldsmith.summary import print_summary, summary_markdown  # noqa: E402


def _logger():
    """The run logger inside a flow run; a plain logger when a flow's `.fn` is called directly."""
    try:
        return get_run_logger()
    except MissingContextError:
        return logging.getLogger("worldsmith.flows")


def _in_flow_run() -> bool:
    return FlowRunContext.get() is not None


def _not_an_outage(task, task_run, state) -> bool:
    """Retry a shard unless the model server is gone: the client already waited llm.retry.outage_timeout_s for it."""
    try:
        state.result()
    except ServerUnavailable:
        return False
    except Exception:
        return True
    return True


@task(name="shard", cache_policy=(INPUTS - "ctx") + TASK_SOURCE, persist_result=True, retries=2, retry_delay_seconds=[10, 60],
      retry_condition_fn=_not_an_outage, task_run_name="{name} {index}/{count}")  # fmt: skip
def stage_shard(ctx, name: str, index: int, count: int, config_hash: str, run_started_at: str, inputs_hash: str) -> dict:
    """One shard of a stage that splits; cached on its explicit inputs (ctx is excluded)."""
    return pipeline.run_stage_part(ctx, name, pipeline.Shard(index, count, inputs_hash))


@task(name="stage", cache_policy=NO_CACHE, retries=1, retry_delay_seconds=10, retry_condition_fn=_not_an_outage, task_run_name="{name}")
def whole_stage(ctx, name: str) -> dict:
    """A stage that does not split (it resumes by itself)."""
    return pipeline.run_stage_part(ctx, name)


def artifact_key(*parts: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", "-".join(parts).lower()).strip("-")[:100]


def _shard_counts(state) -> dict:
    """A shard task's counts; a shard done by an earlier run ("Cached") keeps its totals, not its amounts."""
    part = state.result()
    if state.name == "Cached":
        return {**{k: v for k, v in part.items() if k in pipeline.TOTAL_KEYS}, "cached_shards": 1}
    return part


def run_one_stage(ctx, name: str) -> pipeline.StageResult:
    t0 = time.monotonic()
    in_run = _in_flow_run()  # as tasks inside a flow run; plain calls when a flow's `.fn` runs without Prefect
    if name in pipeline.SHARDED:
        started_at, parts = ctx.store.read_info().get("started_at", ""), []
        for s in pipeline.shard_plan(ctx, name, ctx.cfg.run.shard_size):
            args = (ctx, name, s.index, s.count, ctx.cfg.config_hash(), started_at, s.inputs_hash)
            parts.append(_shard_counts(stage_shard(*args, return_state=True)) if in_run else stage_shard.fn(*args))
        counts = pipeline.merge_counts(parts)
    else:
        counts = whole_stage(ctx, name) if in_run else whole_stage.fn(ctx, name)
    result = pipeline.record_stage(ctx, name, counts, time.monotonic() - t0)
    if in_run:
        create_table_artifact(key=artifact_key(ctx.run_id, name), table=[{"figure": k, "value": str(v)} for k, v in counts.items()],
                              description=f"worldsmith {name}: run {ctx.run_id}")  # fmt: skip
    return result


def run_stages(config_path: str, overrides: list[str] | None, run_id: str | None, stages: list[str] | None) -> dict:
    """The body every flow shares: model server, run, tasks per stage, artifacts, summary."""
    logger = _logger()
    cfg, root = load_config(config_path, overrides or [])
    enabled = pipeline.enabled_stages(cfg)
    names = [s for s in stages if s in enabled] if stages else enabled
    summary = pipeline.RunSummary(run_id="", status="running")
    with pipeline.model_server(cfg, root, log=logger.info) as urls:
        ctx = pipeline.open_run(cfg, root, run_id, urls=urls)
        summary.run_id = ctx.run_id
        try:
            for name in names:
                summary.stages.append(run_one_stage(ctx, name))
        except BaseException as exc:
            status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "stopped" if isinstance(exc, ServerUnavailable) else "failed"
            pipeline.finish_run(ctx, status, f"{exc.__class__.__name__}: {exc}")
            raise
        summary.catalog = pipeline.finish_run(ctx, "finished")
        summary.status, summary.usage = "finished", ctx.usage.snapshot()
        summary.seconds = sum(s.seconds for s in summary.stages)
    if _in_flow_run():
        create_markdown_artifact(key=artifact_key(summary.run_id, "summary"), markdown=summary_markdown(summary), description="worldsmith run")
    print_summary(summary)
    return {"run_id": summary.run_id, "status": summary.status, "stages": {s.name: s.counts for s in summary.stages}}


@flow(name="synth", log_prints=True)
def synth(config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None) -> dict:
    """Tools -> bundles -> agents -> tasks -> rollouts -> judge -> export -> report, resuming a run with the same id."""
    return run_stages(config_path, overrides, run_id, None)


@flow(name="evolve", log_prints=True)
def evolve(config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None) -> dict:
    """The tool repository for a run: crawled snapshot + evolved tools, then tool bundles."""
    return run_stages(config_path, overrides, run_id, ["tools", "bundles"])


@flow(name="agents", log_prints=True)
def agents(config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None) -> dict:
    """An agent (system prompt over a tool bundle) for each bundle of the run."""
    return run_stages(config_path, overrides, run_id, ["agents"])


@flow(name="tasks", log_prints=True)
def tasks(config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None) -> dict:
    """Tasks (persona, goal, initial world state, rubric) for the run's agents, validated."""
    return run_stages(config_path, overrides, run_id, ["tasks"])


@flow(name="rollouts", log_prints=True)
def rollouts(config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None) -> dict:
    """Simulated episodes for the run's tasks (finished episodes are skipped)."""
    return run_stages(config_path, overrides, run_id, ["rollouts"])


@flow(name="judge", log_prints=True)
def judge(config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None) -> dict:
    """Verdicts for the run's trajectories: rubric checks, hack checks, critic, policy."""
    return run_stages(config_path, overrides, run_id, ["judge"])


@flow(name="export", log_prints=True)
def export(config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None) -> dict:
    """The SFT dataset from the kept trajectories, and the run's HTML report."""
    return run_stages(config_path, overrides, run_id, ["export", "report"])


@task(name="train", cache_policy=NO_CACHE, task_run_name="finetune")
def train_task(cfg, source: str, out: str) -> dict:
    from worldsmith.train.loop import train

    r = train(cfg.finetune, Path(source), Path(out), log=_logger().info)
    return {"model": str(r.model_dir), "steps": r.steps, "first_loss": round(r.losses[0], 4), "last_loss": round(r.losses[-1], 4),
            "val_loss": r.val_losses[-1][1] if r.val_losses else None, "s_per_step": r.seconds_per_step, "tokens_per_s": r.tokens_per_s,
            "padding": r.padding, **({"max_attention_logit": max(r.max_logits), "qk_clip_head_rescales": r.clipped_heads} if r.max_logits else {})}  # fmt: skip


@flow(name="finetune", log_prints=True)
def finetune(config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None, dataset: str | None = None) -> dict:
    """Fine-tune the base model on the run's exported SFT data (Muon + AdamW), resuming from the last checkpoint."""
    from worldsmith.train.loop import finetune_paths

    cfg, root = load_config(config_path, overrides or [])
    source, out = finetune_paths(cfg, root, run_id, dataset)
    counts = (train_task if _in_flow_run() else train_task.fn)(cfg, str(source), str(out))
    if _in_flow_run():
        create_table_artifact(key=artifact_key(out.name, "finetune"), table=[{"figure": k, "value": str(v)} for k, v in counts.items()],
                              description="worldsmith finetune")  # fmt: skip
    return counts


@flow(name="eval", log_prints=True)
def evaluate(config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None, model_path: str | None = None,
             dataset: str | None = None) -> dict:  # fmt: skip
    """The run's held-out tasks with the fine-tuned model (default: this config's `make finetune` output) and the base model as the agent policy."""
    from worldsmith.evaluate import evaluate_models
    from worldsmith.evaluate.stage import eval_plan

    cfg, root = load_config(config_path, overrides or [])
    models, source = eval_plan(cfg, root, run_id, model_path, dataset)
    results, report = evaluate_models(cfg, root, models, run_id=run_id, dataset=source, log=_logger().info)
    table = [{"model": r.label, "pass_rate": r.pass_rate, **{f"pass^{k}": v for k, v in r.pass_hat.items()}, "tool_call_validity": r.tool_call_validity,
              "episodes": r.trajectories, "eval_run": r.eval_run_id} for r in results]  # fmt: skip
    if _in_flow_run():
        create_table_artifact(key=artifact_key(Path(models[-1].path).parent.name, "eval"), table=table, description=f"worldsmith eval; report {report}")
    return {"models": table, "report": str(report)}


FLOWS = {"synth": synth, "evolve": evolve, "agents": agents, "tasks": tasks, "rollouts": rollouts, "judge": judge, "export": export, "finetune": finetune,
         "eval": evaluate}  # fmt: skip


def main(argv: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Run a worldsmith flow (default: synth, end to end)")
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
    try:
        FLOWS[args.flow](config_path=args.config, overrides=args.overrides, run_id=args.run_id)  # type: ignore[operator]
    except ServerUnavailable as exc:
        print(f"stopped: {exc}", file=sys.stderr)
        raise SystemExit(3) from None


if __name__ == "__main__":
    main(sys.argv[1:])
