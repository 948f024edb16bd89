"""Runs the stages in order over one run store. The CLI and the Prefect flows are its faces.

A run id defaults to `<run.name>-<config hash>`: running the same config again resumes
the same run (finished records are skipped), a changed config starts a new one.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from worldsmith import smoke
from worldsmith.specs import stage as specs_stage
from worldsmith.export.report import run_report
from worldsmith.export.stage import run_export
from worldsmith.judge.stage import run_judge
from worldsmith.sim.rollout import run_rollouts
from worldsmith.tasks.agents import run_agents
from worldsmith.tasks.generate import run_tasks
from worldsmith.config import EMBEDDED, PipelineConfig
from worldsmith.context import RunContext
from worldsmith.llm import Prompts
from worldsmith.llm.client import ServerUnavailable
from worldsmith.llm.server import embedded_server
from worldsmith.records import Agent, Bundle, Record, Task, Trajectory, content_id, in_shard
from worldsmith.store import RunStore, refresh_catalog

# name -> function(ctx) -> counts; in pipeline order
STAGES: dict[str, Callable[[RunContext], dict[str, Any]]] = {
    "smoke": smoke.run_sync,
    "tools": specs_stage.run_tools,
    "bundles": specs_stage.run_bundles,
    "agents": run_agents,
    "tasks": run_tasks,
    "rollouts": run_rollouts,
    "judge": run_judge,
    "export": run_export,
    "report": run_report,
}


def default_run_id(cfg: PipelineConfig) -> str:
    return f"{cfg.run.name}-{cfg.config_hash()}"


def data_dir(cfg: PipelineConfig, root: Path) -> Path:
    p = Path(cfg.run.data_dir).expanduser()
    return p if p.is_absolute() else root / p


# the config section whose `enabled` switches a stage
STAGE_SECTIONS = {"smoke": "smoke", "tools": "tools", "bundles": "tools", "agents": "agents", "tasks": "tasks", "rollouts": "rollouts", "judge": "judge", "export": "export", "report": "report"}


def enabled_stages(cfg: PipelineConfig) -> list[str]:
    return [name for name in STAGES if getattr(getattr(cfg, STAGE_SECTIONS.get(name, name), None), "enabled", True)]


@dataclass
class ServerURLs:
    """Where the servers worldsmith started (or found) answer: the embedded one and the policy's."""

    embedded: str | None = None
    policy: str | None = None


def open_run(cfg: PipelineConfig, root: Path, run_id: str | None = None, urls: ServerURLs | None = None) -> RunContext:
    run_id = run_id or default_run_id(cfg)
    store = RunStore(data_dir(cfg, root), run_id)
    info = store.read_info()
    store.write_info(
        config=cfg.resolved(),
        config_hash=cfg.config_hash(),
        started_at=info.get("started_at") or datetime.now(UTC).isoformat(),
        status="running",
        attempts=info.get("attempts", 0) + 1,
    )
    (store.root / "config.yaml").write_text(yaml.safe_dump(cfg.resolved(), sort_keys=False))
    prompts = Prompts(_resolve(root, cfg.run.prompts_dir))
    urls = urls or ServerURLs()
    return RunContext(cfg=cfg, root=root, run_id=run_id, store=store, prompts=prompts, embedded_url=urls.embedded, policy_url=urls.policy)


def uses_embedded(cfg: PipelineConfig) -> bool:
    return any(EMBEDDED in cfg.llm.endpoints[name].urls for name in cfg.llm.used_endpoints())


@contextlib.contextmanager
def model_server(cfg: PipelineConfig, root: Path, log: Callable[[str], Any] = print) -> Iterator[ServerURLs]:
    """The servers the config needs, started as needed (and stopped if we started them):
    the embedded one for roles whose endpoint says `embedded`, and llm.policy's."""
    urls = ServerURLs()
    with contextlib.ExitStack() as servers:
        if uses_embedded(cfg):
            urls.embedded = servers.enter_context(embedded_server(cfg.llm.server, root, data_dir(cfg, root), log=log))
        if cfg.llm.policy.enabled:
            urls.policy = servers.enter_context(embedded_server(cfg.llm.policy_server(), root, data_dir(cfg, root), log=log))
        yield urls


@dataclass
class StageResult:
    name: str
    counts: dict[str, Any]
    seconds: float


@dataclass
class RunSummary:
    run_id: str
    status: str
    stages: list[StageResult] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    catalog: Path | None = None
    error: str | None = None


# Stages whose work splits into shards of input records (the Prefect flows run a task per
# shard): stage -> (input record type, the field whose value places a record in a shard).
SHARDED: dict[str, tuple[type[Record], str]] = {
    "agents": (Bundle, "bundle_id"),
    "tasks": (Agent, "agent_id"),
    "rollouts": (Task, "task_id"),
    "judge": (Trajectory, "task_id"),
}
# counts that are run totals (read from the store), not per-shard amounts to add up
TOTAL_KEYS = frozenset({"agents", "tasks", "trajectories", "verdicts", "passed", "critic_agreement", "agreement_pairs", "lowest_concurrency"})


@dataclass(frozen=True)
class Shard:
    index: int
    count: int
    inputs_hash: str  # content hash of the input keys in this shard (part of the Prefect cache key)


def shard_plan(ctx: RunContext, name: str, shard_size: int) -> list[Shard]:
    """The shards of a stage's inputs (one shard for stages that do not split)."""
    if name not in SHARDED:
        return [Shard(0, 1, "")]
    record_type, key = SHARDED[name]
    keys = sorted({row[key] for row in ctx.store.read_rows(record_type)})
    count = max(1, -(-len(keys) // max(shard_size, 1)))
    return [Shard(i, count, content_id([k for k in keys if in_shard(k, (i, count))])) for i in range(count)]


def run_stage_part(ctx: RunContext, name: str, shard: Shard | None = None) -> dict[str, Any]:
    """Run a stage, or one shard of it; returns its counts (nothing recorded in run.json yet)."""
    if name in SHARDED and shard is not None and shard.count > 1:
        return STAGES[name](ctx, (shard.index, shard.count))
    return STAGES[name](ctx)


def merge_counts(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts of a stage's shards together: amounts added up, run totals and text from the last."""
    merged: dict[str, Any] = {}
    for part in parts:
        for k, v in part.items():
            if isinstance(v, int) and not isinstance(v, bool) and k not in TOTAL_KEYS and not k.startswith("drop:") and isinstance(merged.get(k, 0), int):
                merged[k] = merged.get(k, 0) + v
            else:
                merged[k] = v
    return merged


def run_stage(ctx: RunContext, name: str) -> StageResult:
    t0 = time.monotonic()
    return record_stage(ctx, name, run_stage_part(ctx, name), time.monotonic() - t0)


def record_stage(ctx: RunContext, name: str, counts: dict[str, Any], seconds: float) -> StageResult:
    """Note a finished stage in run.json (counts, time, usage so far) and refresh the catalog."""
    result = StageResult(name, counts, seconds)
    stages = ctx.store.read_info().get("stages", {})
    stages[name] = {"counts": counts, "seconds": round(result.seconds, 2), "finished_at": datetime.now(UTC).isoformat(),
                    "usage": stage_usage(ctx)}  # fmt: skip
    ctx.store.write_info(stages=stages, usage=ctx.usage.snapshot())
    refresh_catalog(ctx.store.data_dir, ctx.root)
    return result


USAGE_KEYS = ("calls", "failures", "prompt_tokens", "cached_tokens", "completion_tokens")


def stage_usage(ctx: RunContext) -> dict[str, dict[str, int]]:
    """Model usage per role since the previous stage was recorded (this stage's cost)."""
    now = ctx.usage.snapshot()
    delta = {role: {k: u.get(k, 0) - ctx.usage_mark.get(role, {}).get(k, 0) for k in USAGE_KEYS} for role, u in now.items()}
    ctx.usage_mark = now
    return {role: d for role, d in delta.items() if d["calls"]}


def finish_run(ctx: RunContext, status: str, error: str | None = None) -> Path:
    ctx.store.write_info(status=status, finished_at=datetime.now(UTC).isoformat(), usage=ctx.usage.snapshot(), error=error)
    return refresh_catalog(ctx.store.data_dir, ctx.root)


def synth(
    cfg: PipelineConfig,
    root: Path,
    run_id: str | None = None,
    stages: list[str] | None = None,
    log: Callable[[str], Any] = print,
) -> RunSummary:
    """Run the enabled stages end to end; Ctrl-C or a crash leaves every finished record on disk."""
    names = stages or enabled_stages(cfg)
    unknown = [n for n in names if n not in STAGES]
    if unknown:
        raise ValueError(f"unknown stage(s) {unknown}; known: {list(STAGES)}")
    t0 = time.monotonic()
    with model_server(cfg, root, log=log) as urls:
        ctx = open_run(cfg, root, run_id, urls=urls)
        summary = RunSummary(run_id=ctx.run_id, status="running")
        log(f"run {ctx.run_id}: stages {', '.join(names)} -> {ctx.store.root}")
        try:
            for name in names:
                summary.stages.append(run_stage(ctx, name))
        except KeyboardInterrupt:
            summary.status, summary.error = "interrupted", "interrupted by the user; re-run to resume"
            finish_run(ctx, summary.status, summary.error)
            raise
        except ServerUnavailable as exc:
            summary.status, summary.error = "stopped", str(exc)
            finish_run(ctx, summary.status, summary.error)
            raise
        except Exception as exc:
            summary.status, summary.error = "failed", f"{exc.__class__.__name__}: {exc}"
            finish_run(ctx, summary.status, summary.error)
            raise
        summary.status = "finished"
        summary.catalog = finish_run(ctx, "finished")
        summary.usage = ctx.usage.snapshot()
        summary.seconds = time.monotonic() - t0
        return summary


def _resolve(root: Path, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else root / p
