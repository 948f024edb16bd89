"""Prefect flows over the pipeline: `synth` end to end, one flow per declared stage (built
from `worldsmith.pipeline.STAGES`), `finetune` and `eval`. Thin: the run loop is the
library's (`pipeline.synth`); Prefect only decides how a stage's parts run and what each
stage publishes (worldsmith never imports Prefect).

    python flows/synth.py [--flow synth|<stage>|finetune|eval] [--set KEY=VALUE ...] [--run-id ID]

Tasks: a stage that splits (agents, tasks, rollouts, judge) runs one task per shard of
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _prefect_env import use_local_server_if_up  # noqa: E402

use_local_server_if_up()

from prefect import flow, get_run_logger, task  # noqa: E402
from prefect.artifacts import create_markdown_artifact, create_table_artifact  # noqa: E402
from prefect.cache_policies import INPUTS, NO_CACHE, TASK_SOURCE  # noqa: E402
from prefect.context import FlowRunContext  # noqa: E402
from prefect.exceptions import MissingContextError  # noqa: E402

from worldsmith import pipeline  # noqa: E402
from worldsmith.config import load_config  # noqa: E402
from worldsmith.llm.client import ServerUnavailable  # noqa: E402
from worldsmith.stage import Shard  # noqa: E402
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


@task(
    name="shard",
    cache_policy=(INPUTS - "ctx") + TASK_SOURCE,
    persist_result=True,
    retries=2,
    retry_delay_seconds=[10, 60],
    retry_condition_fn=_not_an_outage,
    task_run_name="{name} {index}/{count}",
)
def stage_shard(
    ctx, name: str, index: int, count: int, config_hash: str, run_started_at: str, inputs_hash: str
) -> dict:
    """One shard of a stage that splits; cached on its explicit inputs (ctx is excluded)."""
    return pipeline.BY_NAME[name].run(ctx, Shard(index, count, inputs_hash))


@task(
    name="stage",
    cache_policy=NO_CACHE,
    retries=1,
    retry_delay_seconds=10,
    retry_condition_fn=_not_an_outage,
    task_run_name="{name}",
)
def whole_stage(ctx, name: str) -> dict:
    """A stage that does not split (it resumes by itself)."""
    return pipeline.BY_NAME[name].run(ctx)


def artifact_key(*parts: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", "-".join(parts).lower()).strip("-")[:100]


def _shard_counts(stage, state) -> dict:
    """A shard task's counts; a shard done by an earlier run ("Cached") keeps its totals, not its amounts."""
    part = state.result()
    if state.name == "Cached":
        return {**{k: v for k, v in part.items() if stage.is_total(k)}, "cached_shards": 1}
    return part


def prefect_parts(ctx, stage, shards: list[Shard]) -> list[dict]:
    """The pipeline's `run_parts` hook: a task per shard inside a flow run; plain calls when a
    flow's `.fn` runs without Prefect."""
    if not _in_flow_run():
        return pipeline.run_parts_inline(ctx, stage, shards)
    if stage.splits_by is None:
        return [whole_stage(ctx, stage.name)]
    started_at = ctx.store.read_info().get("started_at", "")
    return [
        _shard_counts(
            stage,
            stage_shard(
                ctx, stage.name, s.index, s.count, ctx.cfg.config_hash(), started_at, s.inputs_hash, return_state=True
            ),
        )
        for s in shards
    ]


def publish_stage(ctx, result: pipeline.StageResult) -> None:
    """The pipeline's `on_stage` hook: a table artifact per finished stage."""
    if _in_flow_run():
        create_table_artifact(
            key=artifact_key(ctx.run_id, result.name),
            table=[{"figure": k, "value": str(v)} for k, v in result.counts.items()],
            description=f"worldsmith {result.name}: run {ctx.run_id}",
        )


def run_stages(config_path: str, overrides: list[str] | None, run_id: str | None, stages: list[str] | None) -> dict:
    """The body every pipeline flow shares: the library's run loop with Prefect tasks and artifacts."""
    cfg, root = load_config(config_path, overrides or [])
    names = [s.name for s in pipeline.select_stages(cfg) if s.name in stages] if stages else None
    summary = pipeline.synth(
        cfg, root, run_id=run_id, stages=names, log=_logger().info, run_parts=prefect_parts, on_stage=publish_stage
    )
    if _in_flow_run():
        create_markdown_artifact(
            key=artifact_key(summary.run_id, "summary"),
            markdown=summary_markdown(summary),
            description="worldsmith run",
        )
    print_summary(summary)
    return {"run_id": summary.run_id, "status": summary.status, "stages": {s.name: s.counts for s in summary.stages}}


@flow(name="synth", log_prints=True)
def synth(config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None) -> dict:
    """Every enabled stage in order, end to end, resuming a run with the same id."""
    return run_stages(config_path, overrides, run_id, None)


def _stage_flow(stage):
    def run_stage(
        config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None
    ) -> dict:
        return run_stages(config_path, overrides, run_id, [stage.name])

    # a module attribute of this name: Prefect's deployments load a flow by "flows/synth.py:<name>"
    run_stage.__name__ = run_stage.__qualname__ = stage.name
    run_stage.__doc__ = stage.summary
    return flow(name=stage.name, log_prints=True)(run_stage)


STAGE_FLOWS = {stage.name: _stage_flow(stage) for stage in pipeline.STAGES}
globals().update(STAGE_FLOWS)


@task(name="train", cache_policy=NO_CACHE, task_run_name="finetune")
def train_task(cfg, source: str, out: str) -> dict:
    from worldsmith.finetune.loop import train

    r = train(cfg.finetune, Path(source), Path(out), log=_logger().info)
    return {
        "model": str(r.model_dir),
        "steps": r.steps,
        "first_loss": round(r.losses[0], 4),
        "last_loss": round(r.losses[-1], 4),
        "val_loss": r.val_losses[-1][1] if r.val_losses else None,
        "s_per_step": r.seconds_per_step,
        "tokens_per_s": r.tokens_per_s,
        "padding": r.padding,
        **(
            {"max_attention_logit": max(r.max_logits), "qk_clip_head_rescales": r.clipped_heads} if r.max_logits else {}
        ),
    }


@flow(name="finetune", log_prints=True)
def finetune(
    config_path: str = "pipeline.yaml",
    overrides: list[str] | None = None,
    run_id: str | None = None,
    dataset: str | None = None,
) -> dict:
    """Fine-tune the base model on the run's exported SFT data (Muon + AdamW), resuming from the last checkpoint."""
    from worldsmith.finetune.loop import finetune_paths

    cfg, root = load_config(config_path, overrides or [])
    source, out = finetune_paths(cfg, root, run_id, dataset)
    counts = (train_task if _in_flow_run() else train_task.fn)(cfg, str(source), str(out))
    if _in_flow_run():
        create_table_artifact(
            key=artifact_key(out.name, "finetune"),
            table=[{"figure": k, "value": str(v)} for k, v in counts.items()],
            description="worldsmith finetune",
        )
    return counts


@flow(name="eval", log_prints=True)
def evaluate(
    config_path: str = "pipeline.yaml",
    overrides: list[str] | None = None,
    run_id: str | None = None,
    model_path: str | None = None,
    dataset: str | None = None,
) -> dict:
    """The run's held-out tasks with the fine-tuned model (default: this config's `make finetune` output) and the
    base model as the agent policy."""
    from worldsmith.evaluate import evaluate_models
    from worldsmith.evaluate.stage import eval_plan

    cfg, root = load_config(config_path, overrides or [])
    models, source = eval_plan(cfg, root, run_id, model_path, dataset)
    results, report = evaluate_models(cfg, root, models, run_id=run_id, dataset=source, log=_logger().info)
    table = [
        {
            "model": r.label,
            "mode": r.mode,
            "pass_rate": r.pass_rate,
            **{f"pass^{k}": v for k, v in r.pass_hat.items()},
            "tool_call_validity": r.tool_call_validity,
            "episodes": r.trajectories,
            "eval_run": r.eval_run_id,
        }
        for r in results
    ]
    if _in_flow_run():
        create_table_artifact(
            key=artifact_key(Path(models[-1].path).parent.name, "eval"),
            table=table,
            description=f"worldsmith eval; report {report}",
        )
    return {"models": table, "report": str(report)}


FLOWS = {"synth": synth, **STAGE_FLOWS, "finetune": finetune, "eval": evaluate}


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
    pipeline.stop_on_sigterm()
    try:
        FLOWS[args.flow](config_path=args.config, overrides=args.overrides, run_id=args.run_id)  # type: ignore[operator]
    except ServerUnavailable as exc:
        print(f"stopped: {exc}", file=sys.stderr)
        raise SystemExit(3) from None


if __name__ == "__main__":
    main(sys.argv[1:])
