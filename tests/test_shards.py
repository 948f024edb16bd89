"""Shards: how the flows split a stage into Prefect tasks (a stable partition of input ids),
and how shard counts merge."""

from __future__ import annotations

import asyncio
from collections import Counter

from scripted_worlds import cancel_task, order_agent, order_tools, scripted_context
from test_rollouts import PROMPTS, ScriptedClient

from worldsmith import pipeline
from worldsmith.config import validate_config
from worldsmith.records import Trajectory
from worldsmith.rollouts.stage import make_rollouts
from worldsmith.stage import WHOLE, Shard
from worldsmith.store import RunStore


def test_in_shard_is_a_partition():
    ids = [f"tsk_{i}" for i in range(500)]
    owners = Counter(next(i for i in range(7) if Shard(i, 7).holds(x)) for x in ids)
    assert sum(owners.values()) == 500 and len(owners) == 7 and min(owners.values()) > 40
    assert all(sum(Shard(i, 7).holds(x) for i in range(7)) == 1 for x in ids)
    assert all(WHOLE.holds(x) and Shard(0, 1).holds(x) for x in ids)


def _ctx(tmp_path, n_tasks: int, **rollouts):
    cfg = validate_config(
        {
            "rollouts": {
                "samples_per_task": 1,
                "max_turns": 4,  # the scripted user stops on its third message
                "faults": {"enabled": False},
                "real_execution": {"enabled": False},
                **rollouts,
            }
        }
    )
    store = RunStore(tmp_path, "shards")
    tools = order_tools()
    store.append(tools)
    store.append([order_agent(tools)])
    store.append([cancel_task(task_id=f"tsk_{i:03d}") for i in range(n_tasks)])
    client = ScriptedClient(
        user_sim=lambda m: {
            "message": "bye" if len(m) > 3 else "cancel o-1001",
            "action": "stop" if len(m) > 3 else "continue",
        },
        agent=lambda m: "Done.",
        tool_sim=lambda m: {"result": {}, "patch": []},
    )

    return scripted_context(client, cfg=cfg, root=tmp_path, run_id="shards", store=store, prompts=PROMPTS)


def test_shard_plan_and_sharded_rollouts_cover_every_task_once(tmp_path):
    ctx = _ctx(tmp_path, 25)
    rollouts, export = pipeline.BY_NAME["rollouts"], pipeline.BY_NAME["export"]
    plan = rollouts.plan(ctx, shard_size=10)
    assert [s.count for s in plan] == [3, 3, 3] and len({s.inputs_hash for s in plan}) == 3
    assert rollouts.plan(ctx, 10) == plan  # stable: the cache key of a shard does not move
    assert export.plan(ctx, 10) == [WHOLE]
    parts = [asyncio.run(make_rollouts(ctx, s)) for s in plan]
    assert sum(p["new"] for p in parts) == 25
    ids = [t.task_id for t in ctx.store.read(Trajectory)]
    assert len(ids) == len(set(ids)) == 25
    merged = rollouts.merge(parts)
    assert (
        merged["new"] == 25 and merged["finished"] == 25 and merged["trajectories"] == 25
    )  # a total, not 3 totals added


def test_merge_counts_adds_amounts_and_keeps_totals():
    merged = pipeline.BY_NAME["tasks"].merge(
        [{"new": 2, "tasks": 5, "folder": "a"}, {"new": 3, "tasks": 9, "folder": "b"}]
    )
    assert merged == {"new": 5, "tasks": 9, "folder": "b"}
    judge = pipeline.BY_NAME["judge"].merge(
        [{"new": 2, "passed": 1, "drop:critic_score": 1}, {"new": 3, "passed": 4, "drop:critic_score": 4}]
    )
    assert judge == {
        "new": 5,
        "passed": 4,
        "drop:critic_score": 4,
    }  # "drop:" counts are run totals: every key so prefixed


def test_bundles_are_sampled_once_per_run_even_when_the_tools_grow(tmp_path, monkeypatch):
    """A resumed run whose evolution retried a call has one tool more: its bundles stay."""
    from worldsmith.bundles import stage
    from worldsmith.records import Bundle, ToolSpec

    ctx = _ctx(tmp_path, 1)
    ctx.cfg.bundles.count = 2
    ctx.cfg.bundles.size_min = 1
    assert stage.run(ctx)["bundles"] == 2
    before = {b.bundle_id for b in ctx.store.read(Bundle)}
    extra = order_tools()[0].model_copy(
        update={"tool_id": "tool_lookup_order", "name": "lookup_order", "description": "Find an order by id."}
    )
    ctx.store.append([extra])
    assert ctx.store.count(ToolSpec) == 4
    draws = []
    real = stage.sample_bundles
    monkeypatch.setattr(stage, "sample_bundles", lambda *a, **k: draws.append(1) or real(*a, **k))
    assert stage.run(ctx)["bundles"] == 2
    assert draws == [] and {b.bundle_id for b in ctx.store.read(Bundle)} == before


def test_bundles_are_not_drawn_again_when_the_draw_made_fewer_than_count(tmp_path, monkeypatch):
    """Three tools cannot make 50 distinct bundles: the draw stops short of `count`, and a resumed
    run once drew again, appending a second set of bundles (and so of agents and tasks)."""
    from worldsmith.bundles import stage
    from worldsmith.records import Bundle

    ctx = _ctx(tmp_path, 1)
    ctx.cfg.bundles.count = 50
    ctx.cfg.bundles.size_min = 1
    first = stage.run(ctx)["bundles"]
    assert 0 < first < 50
    before = {b.bundle_id for b in ctx.store.read(Bundle)}
    draws = []
    real = stage.sample_bundles
    monkeypatch.setattr(stage, "sample_bundles", lambda *a, **k: draws.append(1) or real(*a, **k))
    assert stage.run(ctx)["bundles"] == first
    assert draws == [] and {b.bundle_id for b in ctx.store.read(Bundle)} == before


def test_run_usage_adds_up_over_the_invocations_of_a_resumed_run(tmp_path):
    """run.json's `usage` is the run's, not the last invocation's: a run interrupted in its rollouts
    and resumed only for judge and export once reported 0 generated tokens (the report's
    kept-per-million-tokens became 152,000,000)."""
    import json
    from pathlib import Path

    from worldsmith.llm.client import LLMResult
    from worldsmith.report import stage as report_stage

    root = Path(__file__).resolve().parent.parent  # the repo's prompts
    cfg = validate_config({"run": {"data_dir": str(tmp_path / "data")}})
    for completion in (30, 12):  # one invocation that generated, then a resumed one
        ctx = pipeline.open_run(cfg, root, run_id="resumed")
        ctx.usage.add(LLMResult(ok=True, role="agent", model="m", endpoint="e", completion_tokens=completion))
        pipeline.finish_run(ctx, "interrupted")
    ctx = pipeline.open_run(cfg, root, run_id="resumed")  # judge, export and report only: no model call
    # the report stage rewrites run.json's usage before reading it back (it once wrote only this
    # invocation's: the loop benchmark's resumed run reported 0 generated tokens)
    assert report_stage.run(ctx)["generated_tokens"] == 42
    pipeline.finish_run(ctx, "finished")
    usage = json.loads((tmp_path / "data" / "runs" / "resumed" / "run.json").read_text())["usage"]
    assert usage["agent"]["calls"] == 2 and usage["agent"]["completion_tokens"] == 42
