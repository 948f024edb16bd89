"""Export a blind labelling sample of fresh runs: every episode the judge kept and N it dropped (a seeded draw),
shuffled, with no verdict, as the judge set's rows without a label, and a reading sheet (markdown) a person labels from.

    python tests/data/judge_set/export_sample.py --run DATA_DIR RUN_ID [--run ...] --dropped 50 --part a11 \\
        --out tests/data/judge_set/default_policy11.jsonl --sheet /tmp/sheet.md

Labels are then written into the rows (`label`, `reason`, `note`) by whoever read the sheet, before the judge's
figures on them are looked at; `score.py` scores them once.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from export_run import current_form

from worldsmith.judge.rubric import check_writes
from worldsmith.records import Task, Trajectory, Verdict
from worldsmith.store import RunStore


def sheet_entry(n: int, row_id: str, task: Task, traj: Trajectory) -> str:
    """One episode as a reader needs it: the request and the user's facts, the gold calls, what the user asked to
    learn, whether the writes' net effect is the gold's, then the conversation."""
    bp = task.blueprint
    net = check_writes(task, traj)
    lines = [
        f"## {n}. `{row_id}`",
        "",
        f"- family: {task.family}; status: {traj.status} ({traj.reason})",
        f"- request: {task.user_goal.request}",
        f"- the user's facts: {json.dumps(task.user_goal.facts)}",
        f"- gold calls: {', '.join(f'{c.tool}({json.dumps(c.arguments)})' for c in bp.calls) if bp else '(free-form)'}",
        f"- the user asks to learn: {json.dumps(bp.asked) if bp else '{}'}",
        f"- writes' net effect equals the gold's: {net[0] if net else 'n/a'} ({(net[1] if net else '')[:160]})",
        "",
    ]
    for m in traj.messages:
        if m["role"] == "system":
            lines.append(f"> **system**: {(m.get('content') or '')[:600]}")
        elif m["role"] == "tool":
            lines.append(f"> **tool result**: `{(m.get('content') or '')[:700]}`")
        else:
            calls = "; ".join(
                f"{tc['function']['name']}({tc['function']['arguments']})" for tc in m.get("tool_calls") or []
            )
            text = (m.get("content") or "").replace("\n", " / ")
            lines.append(f"> **{m['role']}**: {text}" + (f" [calls: {calls}]" if calls else ""))
        lines.append(">")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", nargs=2, action="append", metavar=("DATA_DIR", "RUN_ID"), required=True)
    ap.add_argument("--dropped", type=int, default=50, help="dropped episodes drawn (over all the runs)")
    ap.add_argument("--seed", type=int, default=49)
    ap.add_argument("--part", default="a11")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sheet", type=Path, required=True)
    args = ap.parse_args()
    kept, dropped = [], []
    for data, run_id in args.run:
        store = RunStore(Path(data), run_id)
        tasks = {t.task_id: current_form(t) for t in store.read(Task)}
        passed = {v.trajectory_id: v.passed for v in store.read(Verdict)}
        for traj in store.read(Trajectory):
            if traj.trajectory_id in passed and traj.task_id in tasks:
                (kept if passed[traj.trajectory_id] else dropped).append((tasks[traj.task_id], traj))
    rng = random.Random(args.seed)
    dropped.sort(key=lambda p: p[1].trajectory_id)
    sample = kept + rng.sample(dropped, min(args.dropped, len(dropped)))
    rng.shuffle(sample)
    rows, entries = [], []
    for n, (task, traj) in enumerate(sample, 1):
        row_id = f"{args.part}-{traj.trajectory_id}"
        rows.append(
            {
                "id": row_id,
                "part": args.part,
                "label": None,
                "reason": None,
                "note": "",
                "task": task.model_dump(mode="json"),
                "trajectory": traj.model_dump(mode="json"),
            }
        )
        entries.append(sheet_entry(n, row_id, task, traj))
    args.out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    args.sheet.write_text(f"# {len(rows)} episodes to label\n\n" + "\n".join(entries))
    print(f"{len(kept)} kept + {len(sample) - len(kept)} dropped, shuffled -> {args.out}, {args.sheet}")


if __name__ == "__main__":
    main()
