"""Past one machine: the stages that split run on a real Ray cluster through Prefect
(`run.executor: ray`), and an endpoint's replicas share the load and cover for each other.

- Two Ray workers (a head with no CPUs and two one-CPU nodes, `ray.cluster_utils.Cluster`,
  Ray's own multi-node test cluster) run rollouts -> judge -> export through the Prefect
  flow; the records and the dataset equal a local run's. The model is the order world's
  stand-in server (`standin.py`), deterministic, so two runs can be compared record for record.
- A Ray worker killed in the middle of rollouts costs only the episodes it had in flight:
  Ray runs its shard again, the library resumes from the store, every episode written
  before the kill stays as it was, and the records still equal the local run's.
- Two real llama.cpp servers as the replicas of one endpoint: requests go to both, and the
  run carries on when one is killed mid-stage.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import psutil
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import communicate_or_fail, free_port
from scripted_worlds import cancel_task, order_agent, order_tools

from worldsmith.records import Trajectory, Verdict
from worldsmith.store import RunStore

ROOT = Path(__file__).resolve().parent.parent
RUN = "cluster"
AGENTS, TASKS_PER_AGENT = 3, 4


def seed(data: Path, agents: int = AGENTS, tasks_per_agent: int = TASKS_PER_AGENT) -> None:
    """The order world: 3 agents with 4 cancel tasks each (12 tasks, so several shards)."""
    store = RunStore(data, RUN)
    tools = order_tools()
    store.append(tools)
    store.append([order_agent(tools).model_copy(update={"agent_id": f"agt_{a}"}) for a in range(agents)])
    store.append(
        [
            cancel_task(task_id=f"tsk_{a}_{i}").model_copy(update={"agent_id": f"agt_{a}"})
            for a in range(agents)
            for i in range(tasks_per_agent)
        ]
    )


def config(tmp: Path, urls: list[str], samples: int = 2, max_turns: int = 4, **run) -> Path:
    """A pipeline.yaml for the rollouts -> judge -> export stages over `urls`."""
    cfg = {
        "run": {
            "data_dir": str(tmp / "data"),
            "prompts_dir": str(ROOT / "prompts"),
            "tool_specs_dir": str(ROOT / "tool_specs"),
            "shard_size": 3,
            **run,
        },
        "llm": {
            "endpoints": {"local": {"urls": urls, "max_concurrency": 8, "timeout_s": 120}},
            "retry": {"max_attempts": 3, "initial_backoff_s": 0.1, "max_backoff_s": 1, "outage_timeout_s": 60},
        },
        "judge": {"critic": False},
        "rollouts": {
            "samples_per_task": samples,
            "concurrency": 4,
            "max_turns": max_turns,
            "faults": {"enabled": False},
            "real_execution": {"enabled": False},
        },
        "export": {"out_dir": str(tmp / "exports"), "validation_fraction": 0.3, "near_duplicate_threshold": 1.0},
    }
    path = tmp / "pipeline.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def start_flow(cfg: Path, stages: str = "rollouts,judge,export") -> subprocess.Popen:
    env = {**os.environ, "PREFECT_HOME": str(cfg.parent / ".prefect"), "RAY_DEDUP_LOGS": "0"}
    return subprocess.Popen(
        [sys.executable, str(ROOT / "flows" / "synth.py"), "--config", str(cfg), "--run-id", RUN, "--stages", stages],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own group, so a run past its time is killed with its Ray and model servers
    )


def finish(proc: subprocess.Popen, timeout: float = 600) -> str:
    out, _ = communicate_or_fail(proc, timeout)
    assert proc.returncode == 0, out[-4000:]
    return out


def trajectories_on_disk(data: Path) -> int:
    folder = data / "runs" / RUN / "trajectories"
    return sum(pq.read_metadata(p).num_rows for p in folder.glob("part-*.parquet")) if folder.exists() else 0


def records(data: Path) -> dict:
    """What a run made, comparable across runs: trajectories, verdicts, the exported dataset."""
    store = RunStore(data, RUN)
    out = {
        "trajectories": sorted(
            (t.trajectory_id, json.dumps(t.messages), t.world_states.model_dump_json(), t.status)
            for t in store.read(Trajectory)
        ),
        "verdicts": sorted((v.trajectory_id, v.passed, tuple(v.reasons)) for v in store.read(Verdict)),
    }
    folder = data.parent / "exports" / RUN / "jsonl"
    out["dataset"] = {p.name: sorted(p.read_text().splitlines()) for p in sorted(folder.glob("*.jsonl"))}
    return out


def run_info(data: Path) -> dict:
    return json.loads((data / "runs" / RUN / "run.json").read_text())


# --------------------------------------------------------------------------- Ray


@pytest.fixture(scope="module")
def standin():
    from standin import standin_server

    with standin_server() as url:
        yield url


@pytest.fixture(scope="module")
def ray_cluster():
    """A head that runs no tasks and two worker nodes of one CPU each."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    for _ in range(2):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    yield cluster
    cluster.shutdown()


@pytest.fixture(scope="module")
def local_run(tmp_path_factory, standin) -> dict:
    tmp = tmp_path_factory.mktemp("local")
    seed(tmp / "data")
    finish(start_flow(config(tmp, [standin])))
    made = records(tmp / "data")
    assert len(made["trajectories"]) == AGENTS * TASKS_PER_AGENT * 2 and made["dataset"]["train.jsonl"]
    return made


def shard_workers() -> list[psutil.Process]:
    """The Ray worker processes running a shard task now (Ray titles them `ray::shard`)."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if cmd.startswith("ray::shard"):
            found.append(p)
    return found


@pytest.mark.slow
def test_ray_workers_make_the_records_of_a_local_run(tmp_path, standin, ray_cluster, local_run):
    cfg = config(tmp_path, [standin], executor="ray", ray_address=ray_cluster.address)
    seed(tmp_path / "data")
    out = finish(start_flow(cfg))
    assert "rollouts: 4 shard task(s) on Ray" in out and "Using Ray cluster with 3 nodes" in out, out[-3000:]
    assert records(tmp_path / "data") == local_run
    info = run_info(tmp_path / "data")
    assert info["status"] == "finished"
    # the shards' model usage, counted on the workers, is the run's
    agent = info["stages"]["rollouts"]["usage"]["agent"]
    assert agent["calls"] >= AGENTS * TASKS_PER_AGENT * 2 * 2 and agent["completion_tokens"] > 0


@pytest.mark.slow
def test_a_killed_ray_worker_costs_only_its_episodes_in_flight(tmp_path, ray_cluster, local_run):
    from standin import Latency, standin_server

    # answers take ~0.2 s, so rollouts last long enough to kill a worker in the middle
    with standin_server(latency=Latency(200, 600)) as slow:
        cfg = config(tmp_path, [slow], executor="ray", ray_address=ray_cluster.address)
        seed(tmp_path / "data")
        proc = start_flow(cfg)
        data = tmp_path / "data"
        deadline = time.monotonic() + 300
        while trajectories_on_disk(data) < 4 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        before = {t.trajectory_id: t.created_at for t in RunStore(data, RUN).read(Trajectory)}
        victims = shard_workers()
        assert victims and 4 <= len(before) < AGENTS * TASKS_PER_AGENT * 2, "the kill must land mid-stage"
        victims[0].kill()
        out = finish(proc)
    after = RunStore(data, RUN).read(Trajectory)
    assert len(after) == len({t.trajectory_id for t in after}) == AGENTS * TASKS_PER_AGENT * 2  # each exactly once
    kept = {t.trajectory_id: t.created_at for t in after if t.trajectory_id in before}
    assert kept == before  # nothing finished before the kill was played again
    assert records(data) == local_run, out[-3000:]


# --------------------------------------------------------------------- replicas


def predicted_tokens(url: str) -> float:
    """Tokens a llama.cpp server has generated so far (its Prometheus /metrics)."""
    text = httpx.get(url.removesuffix("/v1") + "/metrics", timeout=10).text
    lines = [line for line in text.splitlines() if line.startswith("llamacpp:tokens_predicted_total")]
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines)


@pytest.fixture
def two_llamacpp(tmp_path):
    from worldsmith.config import ServerConfig
    from worldsmith.llm.server import ModelServer

    servers = [
        ModelServer(
            ServerConfig(port=free_port(), parallel=4, ctx_size=16384, threads=1, startup_timeout_s=120),
            ROOT,
            tmp_path / f"server-{i}",
        )
        for i in range(2)
    ]
    threads = [threading.Thread(target=s.start) for s in servers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(s.healthy() for s in servers)
    yield servers
    for s in servers:
        s.stop()


@pytest.mark.engine
@pytest.mark.slow
def test_two_llamacpp_replicas_share_a_run_that_carries_on_when_one_dies(tmp_path, two_llamacpp):
    a, b = two_llamacpp
    # SmolLM2 plays every role on 2 shared cores: 6 short episodes in 2 shards (~3 min)
    cfg = config(tmp_path, [a.url, b.url], samples=1, max_turns=2, executor="ray")  # `ray`'s default instance
    data = tmp_path / "data"
    seed(data, agents=2, tasks_per_agent=3)
    proc = start_flow(cfg, stages="rollouts")
    deadline = time.monotonic() + 400
    while (trajectories_on_disk(data) < 1 or predicted_tokens(b.url) == 0) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[0][-4000:]
        time.sleep(0.2)
    served_by_b = predicted_tokens(b.url)
    on_disk_at_kill = trajectories_on_disk(data)
    assert served_by_b > 0 and on_disk_at_kill < 6, "the kill must land mid-stage"
    os.killpg(b.state()["pid"], signal.SIGKILL)
    out = finish(proc, timeout=900)
    assert predicted_tokens(a.url) > 0  # both replicas served the run
    trajs = RunStore(data, RUN).read(Trajectory)
    assert len(trajs) == len({t.trajectory_id for t in trajs}) == 6, out[-3000:]
    # the run carried on: no episode was lost to the dead replica, and no call failed for it
    assert not [t.reason for t in trajs if t.status == "error" and "connection" in (t.reason or "")]
    info = run_info(data)
    assert info["status"] == "finished"
    usage = info["usage"]  # counted on the Ray workers, absorbed by the run
    assert usage["agent"]["calls"] > 0
    assert all("connection" not in u["failures_by_kind"] for u in usage.values()), usage
