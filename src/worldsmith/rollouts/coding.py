"""Coding episodes (issue 52), played by the rollouts when `coding.enabled`: each of the run's first
`coding.episodes` verified coding tasks (the repos stage's `CodingTask` records, held-out repositories
left for eval), `samples_per_task` times, through the one episode loop (`EpisodeRun`) with its tool
runner swapped for `coding.episodes.CodingRunner`: every tool call runs in the sandbox over the episode's
own copy of the buggy repository. The episode opens with the user's bug report and ends at the agent's
first reply (`max_turns` 1); the patch it left is judged by execution (`coding.verify.judge`: for a bug fix
the FAIL_TO_PASS and PASS_TO_PASS tests in a fresh sandbox, no test file edited; for a TestWriter task a new
test failing on the buggy world and passing on the fixed one) and stored with the conversation as a
`CodingEpisode`."""

from __future__ import annotations

import asyncio
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

from worldsmith.coding.episodes import CodingRunner, coding_agent, coding_toolspecs, episode_task
from worldsmith.coding.repos import fetch, load_repos
from worldsmith.coding.tools import Workspace
from worldsmith.coding.verify import judge
from worldsmith.config import RolloutsConfig
from worldsmith.context import RunContext
from worldsmith.progress import LiveProgress
from worldsmith.records import CodingEpisode, CodingTask, content_id
from worldsmith.rollouts.episode import Episode, EpisodeRun
from worldsmith.stage import Shard, holds
from worldsmith.worldmodel.toolset import ToolSet


def coding_rollouts_config(cfg: RolloutsConfig, max_tool_calls: int) -> RolloutsConfig:
    """The rollouts' settings for a coding episode: one user turn (the bug report; the agent's reply ends it), room
    for many tool steps, no injected faults, and none of the reply checks made for JSON worlds."""
    return cfg.model_copy(
        update={
            "max_turns": 1,
            "max_tool_calls": max_tool_calls,
            "max_agent_steps_per_turn": max_tool_calls,
            "faults": cfg.faults.model_copy(update={"enabled": False}),
            "reply_uses_result": False,
            "reply_passes_checks": False,
            "read_before_reply": False,
            "reply_quotes_asked": False,
            "tools_the_user_named": False,
        }
    )


def chosen_tasks(tasks: list[CodingTask], n: int) -> list[CodingTask]:
    """The first `n` training tasks, taken round-robin over the repositories and families (ids in order within
    each)."""
    groups: dict[tuple[str, str], list[CodingTask]] = {}
    for t in sorted(tasks, key=lambda t: t.task_id):
        if not t.held_out:
            groups.setdefault((t.repo, t.family), []).append(t)
    out: list[CodingTask] = []
    while len(out) < n and any(groups.values()):
        for key in sorted(groups, key=lambda k: (k[1] != "bugfix", k)):
            if groups[key] and len(out) < n:
                out.append(groups[key].pop(0))
    return out


def trajectory_id_for(task_id: str, sample: int, run_seed: int) -> str:
    return content_id(task_id, sample, run_seed, prefix="cod_")


def episode_seed(task_id: str, sample: int, run_seed: int) -> int:
    return zlib.crc32(f"{run_seed}:{task_id}:{sample}".encode())


async def play_one(
    task: CodingTask,
    pristine: Path,
    work: Path,
    client,
    prompts,
    cfg: RolloutsConfig,
    sample: int,
    run_seed: int,
    backend: str = "auto",
) -> CodingEpisode:
    """One coding episode (sample `sample` of the run seeded `run_seed`), played and judged by execution."""
    tools = coding_toolspecs()
    agent = coding_agent(task.repo, task.version, prompts, tools, task.family)
    ep = Episode(
        trajectory_id_for(task.task_id, sample, run_seed),
        episode_task(task, agent),
        agent,
        ToolSet.build(tools),
        sample,
        episode_seed(task.task_id, sample, run_seed),
    )
    with Workspace(task, pristine, work, backend) as ws:
        run = EpisodeRun(ep, client, prompts, cfg)
        run.runner = CodingRunner(ws)  # every call in the sandbox; nothing simulated
        run.grounded = False  # grounded decoding reads JSON worlds' bindings: none here
        await run.play()
        traj = run.trajectory()
        patch = ws.patch()
    judgement = await asyncio.to_thread(judge, task, patch, pristine, work, backend)
    # ended at the agent's reply by the one user turn: the episode finished as a coding episode does
    replied = (
        bool(traj.messages) and traj.messages[-1].get("role") == "assistant" and not traj.messages[-1].get("tool_calls")
    )
    status = "finished" if traj.status == "max_turns" and replied else traj.status
    return CodingEpisode(
        trajectory_id=traj.trajectory_id,
        task_id=task.task_id,
        repo=task.repo,
        model=traj.model or "",
        status=status,
        reason=traj.reason,
        tool_calls=len(traj.calls),
        patch=patch,
        trajectory=traj.model_dump(mode="json"),
        judgement=judgement,
        resolved=judgement.resolved,
    )


async def play_coding(ctx: RunContext, client, shard: Shard | None = None) -> dict[str, Any]:
    """The run's coding episodes not played yet (this shard's tasks); each stored when it ends."""
    coding = ctx.cfg.coding
    cfg = coding_rollouts_config(ctx.cfg.rollouts, coding.max_tool_calls)
    tasks = [t for t in chosen_tasks(ctx.store.read(CodingTask), coding.episodes) if holds(shard, t.task_id)]
    done = ctx.store.existing_ids(CodingEpisode)
    n = ctx.cfg.rollouts.samples_per_task
    jobs = [(t, k) for t in tasks for k in range(n) if trajectory_id_for(t.task_id, k, ctx.seed) not in done]
    counts: Counter[str] = Counter()
    if not jobs:
        return {"coding_episodes": ctx.store.count(CodingEpisode)}
    cache = ctx.path(coding.cache_dir)
    repos_file = ctx.path(coding.repos_file)
    entries = {e.name: e for e in load_repos(repos_file)}
    pristine = {}
    for name in sorted({t.repo for t, _ in jobs}):
        pristine[name] = (await asyncio.to_thread(fetch, entries[name], cache, repos_file.parent)).root
    limit = asyncio.Semaphore(coding.parallel)

    async def one(task: CodingTask, k: int, progress: LiveProgress) -> None:
        async with limit:
            progress.in_flight += 1
            try:
                episode = await play_one(
                    task, pristine[task.repo], cache / "work", client, ctx.prompts, cfg, k, ctx.seed, coding.backend
                )
            finally:
                progress.in_flight -= 1
        await asyncio.to_thread(ctx.store.append, [episode])
        counts["coding_played"] += 1
        counts["coding_resolved"] += episode.resolved
        counts["coding_tool_calls"] += episode.tool_calls
        counts[f"coding_{episode.status}"] += 1
        progress.advance(failed=episode.status == "error")

    with LiveProgress("coding episodes", total=len(jobs), tokens=lambda: ctx.usage.completion_tokens) as progress:
        await asyncio.gather(*(one(t, k, progress) for t, k in jobs))
    return {"coding_episodes": ctx.store.count(CodingEpisode), **dict(sorted(counts.items()))}
