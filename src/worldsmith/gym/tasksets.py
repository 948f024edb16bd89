"""A run's tasks as a Hugging Face dataset that an RL stack loads: one row per task, self-contained (the task with
its seeded world and rubric, its agent, the agent's tools with their bindings, the world's schema), so a trainer
outside worldsmith rebuilds the environment from the dataset alone (`taskset_from_dataset`) and steps it with
`worldsmith.gym.ToolEnv`.

    worldsmith tasks export            # -> data/tasksets/<run_id>/tasks.parquet + README.md
    ds = datasets.load_dataset("parquet", data_files="data/tasksets/<run_id>/tasks.parquet")["train"]
    env = ToolEnv(taskset_from_dataset(ds), client, prompts, cfg)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from worldsmith.gym.env import TaskSet
from worldsmith.records import Agent, Task, ToolSpec, World
from worldsmith.worldmodel import packs

TASKSET_FILE = "tasks.parquet"

# column -> what it holds (the dataset card lists them; tests check every row has them)
SCHEMA: dict[str, str] = {
    "task_id": "the task's id (stable across runs of the same config)",
    "agent_id": "the agent (a bundle of tools with a system prompt) the task is for",
    "world_id": "the world the task's gold chain ran in (null: a world-free task)",
    "difficulty": "single_call, multi_call, dependent_calls, error_recovery, refusal, irrelevance, ...",
    "family": "the blueprint's task family (lookup, update, find_then_act, conditional, ...); else the difficulty",
    "prompt": "the opening messages: the agent's system prompt, the user's request (OpenAI format)",
    "tools": "JSON: the agent's tools as OpenAI function tools, in the order offered",
    "gold_calls": "JSON: the blueprint's gold chain ([{name, arguments}], names as offered); null for freeform",
    "task": "JSON: the Task record (seeded initial state, user goal and facts, rubric, blueprint)",
    "agent": "JSON: the Agent record",
    "tool_specs": "JSON: the ToolSpec records of the agent's tools (bindings: how code runs each)",
    "world": "JSON: the World record (collections, fields, lifecycles, rules); null when none",
}


def taskset_rows(ts: TaskSet) -> list[dict[str, Any]]:
    rows = []
    for tid in sorted(ts.tasks):
        task = ts.tasks[tid]
        agent = ts.agents.get(task.agent_id)
        if agent is None:
            continue
        toolset = ts.toolset(agent)
        specs = [ts.tools[t] for t in agent.tool_ids if t in ts.tools]
        world = ts.worlds.get(task.world_id) if task.world_id else None
        bp = task.blueprint
        rows.append(
            {
                "task_id": tid,
                "agent_id": agent.agent_id,
                "world_id": task.world_id,
                "difficulty": task.difficulty,
                "family": task.family,
                "prompt": [
                    {"role": "system", "content": agent.system_prompt},
                    {"role": "user", "content": task.user_goal.request},
                ],
                "tools": json.dumps(toolset.tools),
                "gold_calls": json.dumps(
                    [{"name": toolset.name_of(c.tool) or c.tool, "arguments": c.arguments} for c in bp.calls]
                )
                if bp is not None
                else None,
                "task": task.model_dump_json(),
                "agent": agent.model_dump_json(),
                "tool_specs": json.dumps([s.model_dump(mode="json") for s in specs]),
                "world": world.model_dump_json() if world is not None else None,
            }
        )
    return rows


def write_taskset(ts: TaskSet, out: Path, run_id: str) -> dict[str, Any]:
    """`out/tasks.parquet` (one row per task) and `out/README.md` (the card: the schema and how to load it)."""
    import datasets

    rows = taskset_rows(ts)
    if not rows:
        raise ValueError(f"run {run_id} has no tasks with their agent: run the pipeline's tasks stage first")
    out.mkdir(parents=True, exist_ok=True)
    ds = datasets.Dataset.from_list(rows)
    tmp = out / (TASKSET_FILE + ".tmp")
    ds.to_parquet(str(tmp))
    tmp.replace(out / TASKSET_FILE)
    by_difficulty: dict[str, int] = {}
    for r in rows:
        by_difficulty[r["difficulty"]] = by_difficulty.get(r["difficulty"], 0) + 1
    columns = "\n".join(f"| `{k}` | {v} |" for k, v in SCHEMA.items())
    counts = ", ".join(f"{k} {v}" for k, v in sorted(by_difficulty.items()))
    (out / "README.md").write_text(
        f"""# worldsmith task set: {run_id}

{len(rows)} tasks ({counts}) over {len({r["agent_id"] for r in rows})} agents and \
{len({r["world_id"] for r in rows if r["world_id"]})} worlds. Each task's gold chain was executed on its seeded \
world before it became a task; the rubric checks the world's end state.

| column | holds |
| --- | --- |
{columns}

```python
import datasets
from worldsmith.gym import ToolEnv
from worldsmith.gym.tasksets import taskset_from_dataset

ds = datasets.load_dataset("parquet", data_files="{TASKSET_FILE}")["train"]
env = ToolEnv(taskset_from_dataset(ds), client, prompts, cfg)   # reset(task_id) / step(message)
```
"""
    )
    return {
        "tasks": len(rows),
        "path": str(out / TASKSET_FILE),
        **{f"difficulty:{k}": v for k, v in by_difficulty.items()},
    }


def taskset_from_dataset(rows: Any, packs_dir: str | Path = "worlds") -> TaskSet:
    """The `TaskSet` of an exported task set (a `datasets.Dataset` or any iterable of its rows). A pack
    world's folder is stored relative to the packs folder: it is read from `packs_dir` (worlds.packs_dir)."""
    tasks, agents, tools, worlds = {}, {}, {}, {}
    for row in rows:
        task = Task.model_validate_json(row["task"])
        agent = Agent.model_validate_json(row["agent"])
        tasks[task.task_id] = task
        agents[agent.agent_id] = agent
        for spec in json.loads(row["tool_specs"]):
            s = ToolSpec.model_validate(spec)
            tools[s.tool_id] = s
        if row.get("world"):
            w = packs.locate(World.model_validate_json(row["world"]), packs_dir)
            worlds[w.world_id] = w
    return TaskSet(tasks, agents, tools, worlds)
