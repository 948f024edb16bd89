"""The export stage: kept trajectories -> SFT records in the store and the dataset folder."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from worldsmith.context import RunContext
from worldsmith.export.sft import build_examples, dataset_card, write_export
from worldsmith.records import Agent, SFTExample, Task, ToolSpec, Trajectory, Verdict


def export_dir(ctx: RunContext) -> Path:
    return ctx.path(ctx.cfg.export.out_dir) / ctx.run_id


def run_export(ctx: RunContext) -> dict[str, Any]:
    cfg = ctx.cfg.export
    trajectories = ctx.store.read(Trajectory)
    verdicts = ctx.store.read(Verdict)
    tasks = {t.task_id: t for t in ctx.store.read(Task)}
    agents = {a.agent_id: a for a in ctx.store.read(Agent)}
    tools = {t.tool_id: t for t in ctx.store.read(ToolSpec)}
    examples, dropped = build_examples(ctx.run_id, cfg, trajectories, verdicts, tasks, agents)
    if examples:
        ctx.store.append(examples)
    funnel = {"tools": len(tools), "agents": len(agents), "tasks": len(tasks), "trajectories": len(trajectories),
              "passed": sum(v.passed for v in verdicts), "exported": len(examples)}  # fmt: skip
    roles = ctx.cfg.llm.roles
    models = {r: getattr(roles, r).model or ctx.cfg.llm.endpoints[getattr(roles, r).endpoint].model for r in ("agent", "user_sim", "tool_sim", "critic")}
    card = dataset_card(ctx.run_id, examples, funnel, dropped, ctx.cfg.judge.model_dump(exclude={"enabled", "concurrency"}), tools, cfg.licence_note, models)
    paths = write_export(examples, export_dir(ctx), card)
    splits = Counter(e.split for e in examples)
    return {"examples": len(examples), "train": splits.get("train", 0), "validation": splits.get("validation", 0),
            **{f"dropped:{k}": v for k, v in sorted(dropped.items())}, "folder": str(paths["card"].parent)}  # fmt: skip
