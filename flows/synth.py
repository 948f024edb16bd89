"""Prefect flows over the pipeline: `synth` end to end, one flow per declared stage (built
from `worldsmith.pipeline.STAGES`), `finetune`, `eval` and `rl`. Thin: the run loop is the
library's (`pipeline.synth`); Prefect only decides how a stage's parts run and what each
stage publishes (worldsmith never imports Prefect).

    python flows/synth.py [--flow synth|<stage>|finetune|eval|rl] [--set KEY=VALUE ...] [--run-id ID] [--stages A,B]

Tasks: a stage that splits (agents, tasks, rollouts, judge) runs one task per shard of
`run.shard_size` input records (per-item concurrency stays inside, in asyncio). A shard
task's cache key is its explicit inputs (config hash, run start, stage, shard, hash of the
shard's input ids) plus the task's source, with results persisted under the repo's
Prefect home, so re-running a finished flow skips finished shards; model-calling tasks
retry (the library resumes, so a retry redoes only what is missing). Each stage publishes
a table artifact; `synth` a markdown summary that links the HTML report.

Executors (`run.executor`): `local` runs a stage's shard tasks one after another in the
flow's process; `ray` submits them all at once to a Ray cluster through prefect-ray's
`RayTaskRunner` (one per flow run, opened at the first stage that splits), and the shard
tasks report to the same Prefect API. A Ray worker that dies takes only its shard's
episodes in flight: Ray runs the task again and the library resumes from the store.

If a Prefect server answers on 127.0.0.1:4200 (`make ui`) runs are reported to it;
otherwise Prefect runs a temporary local server for the duration of the run.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _prefect_env import library_log, use_local_server_if_up  # noqa: E402

use_local_server_if_up()

from prefect import flow, get_run_logger, task  # noqa: E402
from prefect.artifacts import create_markdown_artifact, create_table_artifact  # noqa: E402
from prefect.cache_policies import INPUTS, NO_CACHE, TASK_SOURCE  # noqa: E402
from prefect.context import FlowRunContext  # noqa: E402
from prefect.exceptions import MissingContextError  # noqa: E402

from worldsmith import commands, pipeline  # noqa: E402
from worldsmith.config import load_config  # noqa: E402
from worldsmith.llm.client import ServerUnavailable  # noqa: E402
from worldsmith.stage import Shard  # noqa: E402
from worldsmith.summary import print_summary, summary_markdown  # noqa: E402

library_log()


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
    """One shard of a stage that splits, here or on a Ray worker; cached on its explicit inputs (ctx is excluded)."""
    return pipeline.run_part(ctx, pipeline.BY_NAME[name], Shard(index, count, inputs_hash))


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


def _shard_counts(ctx, stage, state, remote: bool) -> dict:
    """A shard task's counts; a shard done by an earlier run ("Cached") keeps its totals, not its
    amounts. The model usage of a shard that ran in another process is added to the run's meter."""
    part = state.result()
    if state.name == "Cached":
        return {**{k: v for k, v in part["counts"].items() if stage.is_total(k)}, "cached_shards": 1}
    if remote:
        ctx.usage.absorb(part["usage"])
    return part["counts"]


def _ray_runner(cfg):
    """prefect-ray's task runner for `run.executor: ray`. Its workers report to this flow's Prefect
    API (also a temporary one) and see the same Prefect and worldsmith settings."""
    from prefect_ray import RayTaskRunner
    from ray import cloudpickle

    # the shard task is defined here: a module loaded from a path (a deployment) is not importable on a worker
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    env = {k: v for k, v in os.environ.items() if k.startswith(("PREFECT_", "WORLDSMITH_")) or k in FORWARDED_ENV}
    env["PREFECT_API_URL"] = str(FlowRunContext.get().client.api_url)
    return RayTaskRunner(address=cfg.run.ray_address, init_kwargs={"runtime_env": {"env_vars": env}})


FORWARDED_ENV = ("DO_NOT_TRACK", "HF_HUB_OFFLINE", "OPENAI_API_KEY")
RAY_SHARD_RETRIES = 3


class ShardTasks:
    """The pipeline's `run_parts` hook: a Prefect task per shard inside a flow run (one after
    another, or all at once on Ray); plain calls when a flow's `.fn` runs without Prefect."""

    def __init__(self, resources: contextlib.ExitStack):
        self.resources = resources
        self.ray = None

    def __call__(self, ctx, stage, shards: list[Shard]) -> list[dict]:
        if not _in_flow_run():
            return pipeline.run_parts_inline(ctx, stage, shards)
        if stage.splits_by is None:
            return [whole_stage(ctx, stage.name)]
        started_at = ctx.store.read_info().get("started_at", "")
        params = [
            {
                "ctx": ctx,
                "name": stage.name,
                "index": s.index,
                "count": s.count,
                "config_hash": ctx.cfg.config_hash(),
                "run_started_at": started_at,
                "inputs_hash": s.inputs_hash,
            }
            for s in shards
        ]
        if ctx.cfg.run.executor == "local":
            return [_shard_counts(ctx, stage, stage_shard(**p, return_state=True), remote=False) for p in params]
        if self.ray is None:
            self.ray = self.resources.enter_context(_ray_runner(ctx.cfg))
        _logger().info(f"{stage.name}: {len(shards)} shard task(s) on Ray")
        from prefect_ray.context import remote_options

        # a shard whose worker died runs again (Ray's retries; the library resumes from the store)
        with remote_options(num_cpus=ctx.cfg.run.ray_cpus_per_shard, max_retries=RAY_SHARD_RETRIES):
            futures = [self.ray.submit(stage_shard, p) for p in params]
        for f in futures:
            f.wait()
        parts = [_shard_counts(ctx, stage, f.state, remote=True) for f in futures]
        # the parts ran at once: the run totals each read are stale; one merged answer with fresh totals
        return [pipeline.with_run_totals(ctx, stage, stage.merge(parts), shards)]


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
    with contextlib.ExitStack() as resources:  # the Ray runner, if a stage opened one
        summary = pipeline.synth(
            cfg,
            root,
            run_id=run_id,
            stages=names,
            log=_logger().info,
            run_parts=ShardTasks(resources),
            on_stage=publish_stage,
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
def synth(
    config_path: str = "pipeline.yaml",
    overrides: list[str] | None = None,
    run_id: str | None = None,
    stages: list[str] | None = None,
) -> dict:
    """Every enabled stage in order (or those of `stages`), end to end, resuming a run with the same id."""
    return run_stages(config_path, overrides, run_id, stages)


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
def train_task(cfg, root: str, run_id: str | None, dataset: str | None) -> dict:
    r = commands.finetune(cfg, Path(root), run_id, dataset, log=_logger().info)
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
    cfg, root = load_config(config_path, overrides or [])
    counts = (train_task if _in_flow_run() else train_task.fn)(cfg, str(root), run_id, dataset)
    if _in_flow_run():
        create_table_artifact(
            key=artifact_key(Path(counts["model"]).parent.name, "finetune"),
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
    cfg, root = load_config(config_path, overrides or [])
    evaluation = commands.evaluate(cfg, root, run_id, model_path, dataset, log=_logger().info)
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
        for r in evaluation.results
    ]
    if _in_flow_run():
        create_table_artifact(
            key=artifact_key(Path(evaluation.models[-1].path).parent.name, "eval"),
            table=table,
            description=f"worldsmith eval; report {evaluation.report}",
        )
    return {"models": table, "report": str(evaluation.report)}


@task(name="rl-rounds", cache_policy=NO_CACHE, task_run_name="rl")
def rl_task(cfg, root: str, run_id: str | None) -> dict:
    from worldsmith.rl import run_rl

    r = run_rl(cfg, Path(root), run_id, log=_logger().info)
    return {
        "model": str(r.out / "model"),
        "rounds": len(r.rounds),
        "held_out_reward_before": r.before.get("reward"),
        "held_out_reward_after": r.after.get("reward"),
        "report": str(r.out / "rl.html"),
    }


@flow(name="rl", log_prints=True)
def rl(config_path: str = "pipeline.yaml", overrides: list[str] | None = None, run_id: str | None = None) -> dict:
    """Policy optimisation on the run's training tasks (k1.5's objective), the held-out tasks before and after."""
    cfg, root = load_config(config_path, overrides or [])
    counts = (rl_task if _in_flow_run() else rl_task.fn)(cfg, str(root), run_id)
    if _in_flow_run():
        create_table_artifact(
            key=artifact_key(Path(counts["model"]).parent.name, "rl"),
            table=[{"figure": k, "value": str(v)} for k, v in counts.items()],
            description="worldsmith rl",
        )
    return counts


FLOWS = {"synth": synth, **STAGE_FLOWS, "finetune": finetune, "eval": evaluate, "rl": rl}


def main(argv: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Run a worldsmith flow (default: synth, end to end)")
    parser.add_argument("--config", default=os.environ.get("WORLDSMITH_CONFIG", "pipeline.yaml"))
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--run-id", default=None)
    parser.add_argument("--flow", choices=list(FLOWS), default="synth")
    parser.add_argument(
        "--stages", default=None, metavar="A,B", help="synth: only these enabled stages, in pipeline order"
    )
    args = parser.parse_args(argv)
    stages = [s.strip() for s in args.stages.split(",") if s.strip()] if args.stages else None
    unknown = [s for s in stages or [] if s not in pipeline.BY_NAME]
    if unknown or (stages and args.flow != "synth"):
        parser.error(f"--stages: {unknown or 'only with --flow synth'}; known stages: {', '.join(pipeline.BY_NAME)}")
    from worldsmith.config import ConfigError

    try:
        load_config(args.config, args.overrides)  # fail before Prefect starts anything
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    pipeline.stop_on_sigterm()
    try:
        extra = {"stages": stages} if stages else {}
        FLOWS[args.flow](config_path=args.config, overrides=args.overrides, run_id=args.run_id, **extra)  # type: ignore[operator]
    except ServerUnavailable as exc:
        print(f"stopped: {exc}", file=sys.stderr)
        raise SystemExit(3) from None


if __name__ == "__main__":
    main(sys.argv[1:])
