"""Export a run's episodes (each with its task) for labelling, as the judge set's rows without a
label: `{"id", "part", "label": null, "reason": null, "note": "", "task", "trajectory"}`. No
verdict is written, so whoever labels them does not see what the judge said.

Tasks made before refusal and irrelevance criteria carried their deterministic form (`declines`)
are brought up to what the task code writes now: their judge criteria, and the irrelevance answer
criterion that listed ten decline phrases, are marked `declines` (the labels do not depend on it).

    python tests/data/judge_set/export_run.py --data DATA_DIR --run RUN_ID --out FILE [--part a]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from worldsmith.records import Task, Trajectory
from worldsmith.store import RunStore


def current_form(task: Task) -> Task:
    if task.difficulty not in ("refusal", "irrelevance"):
        return task
    criteria = []
    for c in task.rubric.criteria:
        if c.kind == "judge" or (c.kind == "answer" and c.any_of and task.difficulty == "irrelevance"):
            c = c.model_copy(update={"declines": True, "contains": [] if c.kind == "answer" else c.contains})
        criteria.append(c)
    return task.model_copy(update={"rubric": task.rubric.model_copy(update={"criteria": criteria})})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--part", default="a")
    args = ap.parse_args()
    store = RunStore(args.data, args.run)
    tasks = {t.task_id: current_form(t) for t in store.read(Task)}
    rows = []
    for traj in sorted(store.read(Trajectory), key=lambda t: t.trajectory_id):
        rows.append(
            {
                "id": f"{args.part}-{traj.trajectory_id}",
                "part": args.part,
                "label": None,
                "reason": None,
                "note": "",
                "task": tasks[traj.task_id].model_dump(mode="json"),
                "trajectory": traj.model_dump(mode="json"),
            }
        )
    args.out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    print(f"{len(rows)} episodes of {args.run} -> {args.out}")


if __name__ == "__main__":
    main()
