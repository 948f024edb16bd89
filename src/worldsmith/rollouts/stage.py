"""The rollouts stage: every task × `samples_per_task` seeds, many episodes in flight.

Each finished trajectory is appended to the store at once (its own small atomic shard), so
a crash or Ctrl-C loses only the episodes in flight; a re-run skips the finished ones (ids
are stable: task, sample index and run seed). An episode ended by the server's failure (a call
that timed out or got a 5xx after its retries: `TransientServerFailure`) is not stored: the
stage counts it (`replay_on_resume`) and goes on; the run stops after the stage (`pipeline.EpisodesToReplay`) and
the same command plays it again.
Concurrency is bounded by the config and by each endpoint's own limit, and adapts (AIMD):
halved when an episode met timeouts or server errors, grown by 1/limit per clean episode.
"""

from __future__ import annotations

import asyncio
import logging
import os
import zlib
from collections import Counter
from typing import Any

from worldsmith.context import RunContext
from worldsmith.llm.client import TRANSPORT_FAILURES, TransientServerFailure
from worldsmith.mcp.executor import RealExecutor
from worldsmith.progress import LiveProgress
from worldsmith.records import Agent, Task, ToolSpec, Trajectory, World, content_id
from worldsmith.rollouts.episode import Episode, run_episode
from worldsmith.rollouts.stats import SECTIONS
from worldsmith.stage import Shard, Stage, holds
from worldsmith.vocab import TRAJECTORY_STATUSES
from worldsmith.worldmodel import packs
from worldsmith.worldmodel.toolset import ToolSet

log = logging.getLogger(__name__)


def trajectory_id_for(task_id: str, sample: int, run_seed: int) -> str:
    return content_id(task_id, sample, run_seed, prefix="trj_")


def episode_seed(task_id: str, sample: int, run_seed: int) -> int:
    return zlib.crc32(f"{run_seed}:{task_id}:{sample}".encode())


class AdaptiveLimit:
    """Episodes in flight under a limit that adapts: AIMD, between 1 and `maximum`."""

    def __init__(self, maximum: int, adaptive: bool = True):
        self.maximum = maximum
        self.limit = float(maximum)
        self.adaptive = adaptive
        self.in_flight = 0
        self.lowest = maximum
        self._cond = asyncio.Condition()

    async def __aenter__(self) -> AdaptiveLimit:
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < int(self.limit))
            self.in_flight += 1
        return self

    async def __aexit__(self, *exc: Any) -> None:
        async with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    async def feedback(self, congested: bool) -> None:
        if not self.adaptive:
            return
        async with self._cond:
            if congested:
                self.limit = max(1.0, self.limit / 2)
                self.lowest = min(self.lowest, int(self.limit))
            else:
                self.limit = min(float(self.maximum), self.limit + 1 / self.limit)
            self._cond.notify_all()


def _congested(traj: Trajectory) -> bool:
    """The episode's calls needed retries (timeouts, 429, 5xx) or failed in transport."""
    return any(
        u.get("retries") or set(u.get("failures_by_kind", {})) & set(TRANSPORT_FAILURES) for u in traj.usage.values()
    )


def slow_server_hint(ctx: RunContext) -> str:
    """What the slow-server warning says to look at: the embedded server computes on llm.server.threads cores."""
    threads = ctx.cfg.llm.server.threads or os.cpu_count() or 1
    return (
        f"another process may be taking the cores the model server computes on (llm.server.threads: {threads} of "
        f"{os.cpu_count()} cores); benchmarks/README.md, 'The server under load', measures it"
    )


def plan(ctx: RunContext, tasks: list[Task]) -> list[tuple[Task, int]]:
    done = ctx.store.existing_ids(Trajectory)
    n = ctx.cfg.rollouts.samples_per_task
    return [(t, k) for t in tasks for k in range(n) if trajectory_id_for(t.task_id, k, ctx.seed) not in done]


async def make_rollouts(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    cfg = ctx.cfg.rollouts
    tools = {t.tool_id: t for t in ctx.store.read(ToolSpec)}
    agents = {a.agent_id: a for a in ctx.store.read(Agent)}
    packs_dir = ctx.path(ctx.cfg.worlds.packs_dir)  # a pack world is stored with its folder relative to it
    worlds = {w.world_id: packs.locate(w, packs_dir) for w in ctx.store.read(World)}
    tasks = sorted((t for t in ctx.store.read(Task) if holds(shard, t.task_id)), key=lambda t: t.task_id)
    jobs = plan(ctx, tasks)
    counts: Counter[str] = Counter()
    real = None
    if cfg.real_execution.enabled and cfg.real_execution.servers:
        real = RealExecutor.from_config(
            cfg.real_execution.servers,
            ctx.path(ctx.cfg.tools.servers_file),
            ctx.cfg.crawl.cache_dir,
            cfg.real_execution.timeout_s,
            ctx.store.data_dir / "logs",
        )
    limit = AdaptiveLimit(cfg.concurrency, cfg.adaptive_concurrency)
    toolsets: dict[str, ToolSet] = {}
    server_failures: list[str] = []

    async def one(client, progress: LiveProgress, task: Task, k: int) -> None:
        agent = agents.get(task.agent_id)
        if agent is None:
            counts["skipped_no_agent"] += 1
            progress.advance(failed=True)
            return
        if agent.agent_id not in toolsets:
            toolsets[agent.agent_id] = ToolSet.build([tools[t] for t in agent.tool_ids if t in tools])
        ep = Episode(
            trajectory_id_for(task.task_id, k, ctx.seed),
            task,
            agent,
            toolsets[agent.agent_id],
            k,
            episode_seed(task.task_id, k, ctx.seed),
        )
        async with limit:
            progress.in_flight += 1
            try:
                traj = await run_episode(ep, client, ctx.prompts, cfg, real, worlds, ctx.cfg.judge)
            except TransientServerFailure as exc:  # the server's failure, not the episode's: played again on resume
                counts["replay_on_resume"] += 1
                counts["replay:" + exc.kind] += 1
                server_failures.append(exc.reason)
                await limit.feedback(True)
                progress.advance(failed=True)
                return
            finally:
                progress.in_flight -= 1
        await limit.feedback(_congested(traj))
        await asyncio.to_thread(ctx.store.append, [traj])  # at once: a crash loses only episodes in flight
        counts[traj.status] += 1
        if traj.status == "error":
            counts["error:" + (traj.reason or "").split(":", 1)[0]] += 1
        counts["faults"] += len(traj.faults)
        for c in traj.calls:
            counts[f"calls_{c.executor}"] += 1
        progress.advance(failed=traj.status == "error")

    async with ctx.client() as run_client:
        client = run_client.raising_transient()  # an episode the server failed is not a finished record
        try:
            with LiveProgress(
                "rollouts",
                total=len(jobs),
                tokens=lambda: ctx.usage.completion_tokens,
                extra=lambda: f"limit {int(limit.limit)}",
                watch_hint=slow_server_hint(ctx),
            ) as progress:
                await asyncio.gather(*(one(client, progress, t, k) for t, k in jobs))
            if ctx.cfg.coding.enabled and ctx.cfg.coding.episodes:  # coding episodes: tools in the sandbox
                from worldsmith.rollouts.coding import play_coding

                counts.update(await play_coding(ctx, client, shard))
        finally:
            if real is not None:
                await real.aclose()
    out = {
        "trajectories": ctx.store.count(Trajectory),
        "new": sum(counts[s] for s in TRAJECTORY_STATUSES),
    }
    out.update(sorted(counts.items()))
    if real is not None and real.unavailable:
        out["real_execution_unavailable"] = real.unavailable
    if cfg.adaptive_concurrency and limit.lowest < cfg.concurrency:
        out["lowest_concurrency"] = limit.lowest
    if server_failures:
        log.warning(
            "rollouts: %d episodes ended by a server failure (timeouts, 5xx after retries; the first: %s) were not "
            "stored: run the same command again to play them",
            len(server_failures),
            server_failures[0][:300],
        )
    return out


def run(ctx: RunContext, shard: Shard | None = None) -> dict[str, Any]:
    return asyncio.run(make_rollouts(ctx, shard))


STAGE = Stage(
    "rollouts",
    "Simulated episodes per task: the agent policy with a user simulator and tools acting on a world state.",
    run,
    section="rollouts",
    splits_by=(Task, "task_id"),
    totals=frozenset({"trajectories", "lowest_concurrency", "coding_episodes"}),
    stats=SECTIONS,
)
