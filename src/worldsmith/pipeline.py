"""The one run loop over the declared stages. The CLI and the Prefect flows are its two faces:
both run `synth`, and differ only in how a stage's parts run (`run_parts`: plain calls here,
Prefect tasks in `flows/`) and what they publish when a stage ends (`on_stage`).

A run id defaults to `<run.name>-<config hash>`: running the same config again resumes the
same run (finished records are skipped), a changed config starts a new one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from worldsmith.agents.stage import STAGE as AGENTS
from worldsmith.bundles.stage import STAGE as BUNDLES
from worldsmith.config import PipelineConfig, data_dir, resolve_path
from worldsmith.context import RunContext
from worldsmith.export.stage import STAGE as EXPORT
from worldsmith.judge.stage import STAGE as JUDGE
from worldsmith.llm import Prompts, UsageMeter
from worldsmith.llm.client import ServerUnavailable
from worldsmith.llm.server import embedded_server, share_cores
from worldsmith.report.stage import STAGE as REPORT
from worldsmith.repos.stage import STAGE as REPOS
from worldsmith.rollouts.stage import STAGE as ROLLOUTS
from worldsmith.smoke.stage import STAGE as SMOKE
from worldsmith.stage import Counts, Shard, Stage
from worldsmith.store import RunStore, refresh_catalog
from worldsmith.tasks.stage import STAGE as TASKS
from worldsmith.tools.stage import STAGE as TOOLS
from worldsmith.worlds.stage import STAGE as WORLDS

# In pipeline order. Adding a stage: its package's STAGE goes here; the CLI and the flows follow.
STAGES: tuple[Stage, ...] = (SMOKE, WORLDS, TOOLS, BUNDLES, AGENTS, TASKS, REPOS, ROLLOUTS, JUDGE, EXPORT, REPORT)
BY_NAME: dict[str, Stage] = {s.name: s for s in STAGES}

# How a stage's parts run: (ctx, stage, shards) -> the counts of each part.
PartsRunner = Callable[[RunContext, Stage, list[Shard]], list[Counts]]


def run_parts_inline(ctx: RunContext, stage: Stage, shards: list[Shard]) -> list[Counts]:
    return [stage.run(ctx, shard) for shard in shards]


def run_part(ctx: RunContext, stage: Stage, shard: Shard) -> dict[str, Any]:
    """One part of a stage, here or in another process (a Ray worker, handed a pickled `ctx`):
    its counts, and the model usage it cost (`usage`, a snapshot), which a caller in another
    process adds to its run's meter with `UsageMeter.absorb`. Here, it is counted already."""
    meter = UsageMeter(parent=ctx.usage)
    counts = stage.run(dataclasses.replace(ctx, usage=meter), shard)
    return {"counts": counts, "usage": meter.snapshot()}


def with_run_totals(ctx: RunContext, stage: Stage, merged: Counts, shards: list[Shard]) -> Counts:
    """Parts that ran at once each read the run totals before the others were done: read them
    again now, by running the last shard once more (a resume: its records are all on disk, so
    it does no work and calls no model)."""
    if stage.splits_by is None or len(shards) < 2:
        return merged
    again = stage.run(ctx, shards[-1])
    return {**merged, **{k: v for k, v in again.items() if stage.is_total(k)}}


def select_stages(cfg: PipelineConfig, names: list[str] | None = None) -> list[Stage]:
    """The stages to run: those named (in pipeline order), or every enabled one (None)."""
    if names is None:
        return [s for s in STAGES if s.enabled(cfg)]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise ValueError(f"unknown stage(s) {unknown}; known: {list(BY_NAME)}")
    return [s for s in STAGES if s.name in names]


@dataclass
class ServerURLs:
    """Where the servers worldsmith started (or found) answer: the embedded one and the policy's."""

    embedded: str | None = None
    policy: str | None = None


def open_run(cfg: PipelineConfig, root: Path, run_id: str | None = None, urls: ServerURLs | None = None) -> RunContext:
    run_id = run_id or cfg.default_run_id()
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
    prompts = Prompts(resolve_path(root, cfg.run.prompts_dir))
    urls = urls or ServerURLs()
    return RunContext(
        cfg=cfg,
        root=root,
        run_id=run_id,
        store=store,
        prompts=prompts,
        embedded_url=urls.embedded,
        policy_url=urls.policy,
        usage_before=info.get("usage") or {},
    )


@contextlib.contextmanager
def model_server(cfg: PipelineConfig, root: Path, log: Callable[[str], Any] = print) -> Iterator[ServerURLs]:
    """The servers the config needs, started as needed (and stopped if we started them):
    the embedded one for roles whose endpoint says `embedded`, and llm.policy's."""
    urls = ServerURLs()
    main, policy = cfg.llm.server, cfg.llm.policy_server()
    if cfg.llm.uses_embedded() and cfg.llm.policy.enabled:
        main, policy = share_cores(main, policy)
    with contextlib.ExitStack() as servers:
        if cfg.llm.uses_embedded():
            urls.embedded = servers.enter_context(embedded_server(main, root, data_dir(cfg, root), log=log))
        if cfg.llm.policy.enabled:
            urls.policy = servers.enter_context(embedded_server(policy, root, data_dir(cfg, root), log=log))
        yield urls


@dataclass
class StageResult:
    name: str
    counts: Counts
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


class EpisodesToReplay(ServerUnavailable):
    """A stage's episodes the model server failed (timeouts, 429 / 5xx after retries) were not stored: the run stops
    after that stage (status `stopped`, its counts recorded), so no later stage, nor an eval's figures, reads a partial
    set; the same command plays them again."""

    def __init__(self, stage: str, n: int):
        super().__init__(
            f"{stage}: {n} episode(s) ended by a server failure (timeouts, 429/5xx after retries) were not stored "
            "(the others are): run the same command again to play them"
        )
        self.stage, self.n = stage, n


def run_stage(ctx: RunContext, stage: Stage, run_parts: PartsRunner = run_parts_inline) -> StageResult:
    """Run a stage (all its shards) and note it in run.json. It starts by sweeping the temporary shards a
    killed run left (no part of it runs yet), counted as `swept_tmp`."""
    t0 = time.monotonic()
    swept = ctx.store.sweep_tmp()
    counts = stage.merge(run_parts(ctx, stage, stage.plan(ctx, ctx.cfg.run.shard_size)))
    if swept:
        counts = {**counts, "swept_tmp": swept}
    return record_stage(ctx, stage.name, counts, time.monotonic() - t0)


def record_stage(ctx: RunContext, name: str, counts: Counts, seconds: float) -> StageResult:
    """Note a finished stage in run.json (counts, time, usage so far) and refresh the catalog."""
    result = StageResult(name, counts, seconds)
    stages = ctx.store.read_info().get("stages", {})
    stages[name] = {
        "counts": counts,
        "seconds": round(seconds, 2),
        "finished_at": datetime.now(UTC).isoformat(),
        "usage": stage_usage(ctx),
    }
    ctx.store.write_info(stages=stages, usage=ctx.run_usage())
    refresh_catalog(ctx.store.data_dir, ctx.root)
    return result


USAGE_KEYS = ("calls", "failures", "prompt_tokens", "cached_tokens", "completion_tokens")


def stage_usage(ctx: RunContext) -> dict[str, dict[str, int]]:
    """Model usage per role since the previous stage was recorded (this stage's cost)."""
    now = ctx.usage.snapshot()
    delta = {
        role: {k: u.get(k, 0) - ctx.usage_mark.get(role, {}).get(k, 0) for k in USAGE_KEYS} for role, u in now.items()
    }
    ctx.usage_mark = now
    return {role: d for role, d in delta.items() if d["calls"]}


def finish_run(ctx: RunContext, status: str, error: str | None = None) -> Path:
    ctx.store.write_info(status=status, finished_at=datetime.now(UTC).isoformat(), usage=ctx.run_usage(), error=error)
    return refresh_catalog(ctx.store.data_dir, ctx.root)


def synth(
    cfg: PipelineConfig,
    root: Path,
    run_id: str | None = None,
    stages: list[str] | None = None,
    log: Callable[[str], Any] = print,
    run_parts: PartsRunner = run_parts_inline,
    on_stage: Callable[[RunContext, StageResult], Any] | None = None,
) -> RunSummary:
    """Run the chosen (default: enabled) stages in order over one run store, starting the model
    servers the config needs. Ctrl-C, a server outage or a crash marks the run and leaves every
    finished record on disk; the same call resumes it."""
    chosen = select_stages(cfg, stages)
    t0 = time.monotonic()
    with model_server(cfg, root, log=log) as urls:
        ctx = open_run(cfg, root, run_id, urls=urls)
        summary = RunSummary(run_id=ctx.run_id, status="running")
        log(f"run {ctx.run_id}: stages {', '.join(s.name for s in chosen)} -> {ctx.store.root}")
        try:
            for stage in chosen:
                result = run_stage(ctx, stage, run_parts)
                summary.stages.append(result)
                if on_stage is not None:
                    on_stage(ctx, result)
                if result.counts.get("replay_on_resume"):  # recorded; the later stages wait for the whole set
                    raise EpisodesToReplay(stage.name, result.counts["replay_on_resume"])
        except BaseException as exc:
            interrupted = isinstance(exc, KeyboardInterrupt)
            summary.status = (
                "interrupted" if interrupted else "stopped" if isinstance(exc, ServerUnavailable) else "failed"
            )
            summary.error = (
                "interrupted by the user; re-run to resume"
                if interrupted
                else str(exc)
                if isinstance(exc, ServerUnavailable)
                else f"{exc.__class__.__name__}: {exc}"
            )
            finish_run(ctx, summary.status, summary.error)
            raise
        summary.status = "finished"
        summary.catalog = finish_run(ctx, "finished")
        summary.usage = ctx.usage.snapshot()
        summary.seconds = time.monotonic() - t0
        return summary


def stop_on_sigterm() -> None:
    """Treat SIGTERM (kill, a scheduler's timeout) like Ctrl-C: buffered records are written
    and the run is marked interrupted, so a re-run resumes."""

    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)
