"""Can this model be the agent policy? Plays the hand-made order world's two single-call
tasks (cancel o-1001; say o-1002 has shipped: solvable, valid, one call each) through the
product's rollouts and judge stages, with the configured models, and prints the pass rate
and why episodes were dropped. A model that passes nothing here will keep nothing from
`make synth`'s generated tasks either.

    python benchmarks/policy_probe.py [--samples 8] [--set KEY.PATH=VALUE ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def main() -> None:
    from scripted_worlds import cancel_task, order_agent, order_tools, status_task

    from worldsmith.records import Task
    from worldsmith.store import RunStore, query

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=8, help="episodes per task")
    p.add_argument("--set", action="append", default=[], help="config override, as for worldsmith synth")
    p.add_argument("--data", default=str(ROOT / "data"))
    a = p.parse_args()
    sets = [
        "smoke.enabled=false",
        f"rollouts.samples_per_task={a.samples}",
        "rollouts.first_user_message=goal_request",
        *a.set,
    ]
    run = "probe-orders-" + hashlib.sha256(json.dumps(sets).encode()).hexdigest()[:8]  # same settings: the run resumes
    store = RunStore(Path(a.data), run)
    if not store.count(Task):
        tools = order_tools()
        store.append(tools)
        store.append([order_agent(tools)])
        store.append([cancel_task(), status_task()])
    cmd = [sys.executable, "-m", "worldsmith.cli", "synth", "--run-id", run, "--stage", "rollouts", "--stage", "judge"]
    t0 = time.monotonic()
    subprocess.run([*cmd, *(x for s in sets for x in ("--set", s))], cwd=ROOT, check=True)
    seconds = time.monotonic() - t0
    _, rows = query(
        Path(a.data),
        "SELECT t.task_id, t.status, v.passed, v.reasons "
        "FROM trajectories t JOIN verdicts v USING (run_id, trajectory_id) "
        f"WHERE t.run_id = '{run}'",
    )
    by_task: dict[str, list[bool]] = {}
    reasons: dict[str, int] = {}
    for task_id, _status, passed, why in rows:
        by_task.setdefault(task_id, []).append(bool(passed))
        for r in why or []:
            key = r if r.startswith("status:") else ":".join(r.split(":")[:2])
            reasons[key] = reasons.get(key, 0) + 1
    passed = sum(sum(v) for v in by_task.values())
    result = {
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "run": run,
        "settings": sets,
        "episodes": len(rows),
        "passed": passed,
        "pass_rate": round(passed / max(len(rows), 1), 3),
        "by_task": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(by_task.items())},
        "drop_reasons": dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
        "seconds": round(seconds, 1),
    }
    print(
        f"policy probe ({run}): {passed} of {len(rows)} episodes passed the judge; by task {result['by_task']}; "
        f"drop reasons {result['drop_reasons']}"
    )
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "policy_probe.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
