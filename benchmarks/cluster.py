"""Ray figures: the stages that split (rollouts -> judge -> export) through the Prefect flow,
with the local executor and on a Ray cluster of 1 and 2 one-CPU workers (`ray.cluster_utils.Cluster`,
a head that runs no shards), against the stand-in model server (tests/standin.py, a child process)
with a lognormal latency per request. The stand-in is a benchmark-only double: what is measured is
the fan-out (shards at once, Ray's start and scheduling), not a model. Every run must make the
same records as the local one (the stand-in is deterministic), or the figure is refused.

    python benchmarks/cluster.py [--agents 8] [--tasks-per-agent 4] [--samples 2] [--workers 1,2]
        [--latency-median-ms 400] [--latency-p99-ms 2000]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT / "tests"))

from standin import Latency, standin_server  # noqa: E402
from test_cluster import config, finish, records, run_info, seed, start_flow  # noqa: E402

STAGES = ("rollouts", "judge", "export")


def one_run(tmp: Path, url: str, args, **run) -> tuple[dict, dict]:
    """One flow run on a fresh data folder: its wall time, each stage's seconds, and its records."""
    seed(tmp / "data", agents=args.agents, tasks_per_agent=args.tasks_per_agent)
    cfg = config(tmp, [url], samples=args.samples, **run)
    t0 = time.perf_counter()
    out = finish(start_flow(cfg), timeout=3600)
    wall = time.perf_counter() - t0
    info = run_info(tmp / "data")
    made = records(tmp / "data")
    episodes = len(made["trajectories"])
    stages = {s: info["stages"][s]["seconds"] for s in STAGES}
    shards = next((line for line in out.splitlines() if "shard task(s) on Ray" in line), "")
    return {
        "episodes": episodes,
        "kept": len(made["dataset"].get("train.jsonl", [])) + len(made["dataset"].get("validation.jsonl", [])),
        "flow_wall_s": round(wall, 1),
        "stage_s": stages,
        "rollouts_episodes_per_s": round(episodes / stages["rollouts"], 2),
        "ray_shards_line": shards.strip()[-80:],
    }, made


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agents", type=int, default=8)
    p.add_argument("--tasks-per-agent", type=int, default=4)
    p.add_argument("--samples", type=int, default=2)
    p.add_argument("--workers", default="1,2", help="Ray clusters to try: this many one-CPU worker nodes")
    p.add_argument("--latency-median-ms", type=float, default=400)
    p.add_argument("--latency-p99-ms", type=float, default=2000)
    a = p.parse_args()
    from ray.cluster_utils import Cluster

    latency = Latency(a.latency_median_ms, a.latency_p99_ms)
    rows = []
    with standin_server(latency=latency, process=True) as url:
        with tempfile.TemporaryDirectory() as tmp:
            local, reference = one_run(Path(tmp), url, a)
        rows.append({"executor": "local", "workers": 1, **local, "records_equal_local": True})
        print(json.dumps(rows[-1]), flush=True)
        for n in [int(w) for w in a.workers.split(",") if w.strip()]:
            cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
            try:
                for _ in range(n):
                    cluster.add_node(num_cpus=1)
                cluster.wait_for_nodes()
                with tempfile.TemporaryDirectory() as tmp:
                    row, made = one_run(Path(tmp), url, a, executor="ray", ray_address=cluster.address)
            finally:
                cluster.shutdown()
            rows.append({"executor": "ray", "workers": n, **row, "records_equal_local": made == reference})
            print(json.dumps(rows[-1]), flush=True)
    base = rows[0]["stage_s"]["rollouts"]
    for r in rows:
        r["rollouts_speedup_vs_local"] = round(base / r["stage_s"]["rollouts"], 2)
    result = {
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "args": vars(a),
        "model": f"tests/standin.py, lognormal latency median {a.latency_median_ms:g} ms, p99 {a.latency_p99_ms:g} ms",
        "runs": rows,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cluster.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"\n{'executor':<9} {'workers':>7} {'episodes':>8} {'rollouts s':>10} {'judge s':>7} {'export s':>8} "
          f"{'flow s':>7} {'speedup':>7} {'same records':>12}")  # fmt: skip
    for r in rows:
        s = r["stage_s"]
        print(
            f"{r['executor']:<9} {r['workers']:>7} {r['episodes']:>8} {s['rollouts']:>10.1f} {s['judge']:>7.1f} "
            f"{s['export']:>8.1f} {r['flow_wall_s']:>7.1f} {r['rollouts_speedup_vs_local']:>7} "
            f"{str(r['records_equal_local']):>12}"
        )
    if not all(r["records_equal_local"] for r in rows):
        raise SystemExit("a Ray run made records that differ from the local run's: its figures are not comparable")


if __name__ == "__main__":
    main()
