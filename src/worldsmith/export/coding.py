"""Coding worlds in the export (issue 52): the coding episodes the judge kept (the patch resolved by execution, the
replies clean of the reply checks; the execution judgement alone where the judge stage did not run), as SFT
examples (the conversation in the export's message form, the tools, and the patch with its reward in the
metadata), and the verified coding tasks as a task set (statement, FAIL_TO_PASS, PASS_TO_PASS, gold patch) for
evaluation and RL. A held-out repository's episodes go to `held_out`, never to `train`."""

from __future__ import annotations

import json
from pathlib import Path

from worldsmith.export.sft import sft_messages
from worldsmith.judge.coding import is_coding
from worldsmith.records import CodingEpisode, CodingTask, Trajectory, Verdict
from worldsmith.store import RunStore

FOLDER = "coding"


def export_coding(store: RunStore, out: Path) -> dict[str, int]:
    """`<out>/coding/{train,held_out}.jsonl` (kept episodes) and `<out>/coding/tasks.jsonl`; the counts."""
    tasks = {t.task_id: t for t in store.read(CodingTask)}
    # the judge stage's verdict where it ran (execution and the reply checks); the execution judgement alone otherwise
    verdicts = {v.trajectory_id: v.passed for v in store.read(Verdict) if is_coding(v)}
    folder = out / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    counts = {"coding_examples": 0, "coding_held_out": 0, "coding_tasks": len(tasks)}
    files = {split: open(folder / f"{split}.jsonl", "w", encoding="utf-8") for split in ("train", "held_out")}
    try:
        for e in sorted(store.read(CodingEpisode), key=lambda e: e.trajectory_id):
            task = tasks.get(e.task_id)
            if task is None or not verdicts.get(e.trajectory_id, e.resolved):
                continue
            traj = Trajectory.model_validate(e.trajectory)
            messages = sft_messages(traj)
            if not messages:
                continue
            split = "held_out" if task.held_out else "train"
            row = {
                "messages": messages,
                "tools": traj.tools,
                "metadata": {
                    "trajectory_id": e.trajectory_id,
                    "task_id": e.task_id,
                    "repo": f"{task.repo}-{task.version}",
                    "family": task.family,
                    "model": e.model,
                    "patch": e.patch,
                    "reward": e.judgement.reward if e.judgement else {},
                },
            }
            files[split].write(json.dumps(row, ensure_ascii=False) + "\n")
            counts["coding_examples" if split == "train" else "coding_held_out"] += 1
    finally:
        for f in files.values():
            f.close()
    with open(folder / "tasks.jsonl", "w", encoding="utf-8") as f:
        for t in sorted(tasks.values(), key=lambda t: t.task_id):
            f.write(t.model_dump_json(exclude={"failure_output"}) + "\n")
    return counts
