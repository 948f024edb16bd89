"""A night's run survives: SIGKILL at random points during rollouts (several times) and a
re-run give exactly the dataset of a run never interrupted; a model server that goes away
mid-run stops the run cleanly (nothing recorded as failed because of it) and the same
command resumes once it is back."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from conftest import free_port

from worldsmith.records import Trajectory, Verdict
from worldsmith.store import RunStore

ROOT = Path(__file__).resolve().parent.parent

# rollouts -> judge -> export over the order world, with a scripted model whose every answer
# is a function of the request (and the episode's seed), so two runs can be compared.
PIPELINE_SCRIPT = r"""
import asyncio, random, sys
from pathlib import Path

from test_rollouts import ScriptedClient
from scripted_worlds import cancel_task, order_agent, order_tools, scripted_context
from worldsmith import pipeline
from worldsmith.config import validate_config
from worldsmith.llm import Prompts
from worldsmith.records import Task
from worldsmith.store import RunStore

data, root = Path(sys.argv[1]), Path(sys.argv[2])
CANCEL = [{"op": "replace", "path": "/orders/0/status", "value": "cancelled"}]


class Scripted(ScriptedClient):
    async def structured(self, role, messages, schema, name="record", seed=None):
        await asyncio.sleep(random.uniform(0.02, 0.15))  # episodes finish out of order, as with a real server
        if role == "user_sim":
            first = sum(m["role"] == "assistant" for m in messages) == 0
            self.scripts["user_sim"] = [{"message": f"Please cancel o-1001, my reference is R{seed % 997}."
                                                    if first else "Thanks.",
                                         "action": "continue" if first else "stop"}]
        return await super().structured(role, messages, schema, name, seed)

    async def tool_step(self, role, messages, tools, require_tool=False, seed=None, **kw):
        await asyncio.sleep(random.uniform(0.02, 0.15))
        return await super().tool_step(role, messages, tools, require_tool, seed, **kw)


def agent(messages):
    if not any(m["role"] == "tool" for m in messages):
        return [("cancel_order", {"order_id": "o-1001"})]
    return "Order o-1001 is cancelled."


cfg = validate_config({"run": {"data_dir": str(data)}, "judge": {"critic": False},
                       "rollouts": {"samples_per_task": 3, "concurrency": 3, "faults": {"enabled": False},
                                    "real_execution": {"enabled": False}},
                       "export": {"out_dir": str(data / "exports"), "validation_fraction": 0.3,
                                  "near_duplicate_threshold": 1.0}})
store = RunStore(data, "night")
if not store.count(Task):
    tools = order_tools()
    store.append(tools)
    store.append([order_agent(tools).model_copy(update={"agent_id": f"agt_{a}"}) for a in range(3)])
    store.append([cancel_task(task_id=f"tsk_{a}_{i}").model_copy(update={"agent_id": f"agt_{a}"})
                  for a in range(3) for i in range(2)])
client = Scripted(agent=agent, tool_sim=lambda m: {"result": {"status": "cancelled"}, "patch": CANCEL})
ctx = scripted_context(client, cfg=cfg, root=root, run_id="night", store=store, prompts=Prompts(root / "prompts"))
for name in ("rollouts", "judge", "export"):
    pipeline.run_stage(ctx, pipeline.BY_NAME[name])
print("done", flush=True)
"""


def _run_pipeline(script: Path, data: Path, kill_after: int | None = None) -> int:
    """Run the script; with `kill_after`, SIGKILL it once that many trajectories are on disk."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests")}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(data), str(ROOT)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    if kill_after is None:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()[-3000:]
        return proc.returncode
    shards = data / "runs" / "night" / "trajectories"
    target = max(
        kill_after, len(list(shards.glob("part-*.parquet"))) + 1
    )  # at least one new trajectory: a kill during rollouts
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(shards.glob("part-*.parquet"))) < target and proc.poll() is None:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return proc.returncode


def _dataset(data: Path) -> dict[str, list[dict]]:
    """The exported dataset, minus the time each file was written."""
    folder = data / "exports" / "night"
    out = {p.name: sorted(p.read_text().splitlines()) for p in sorted((folder / "jsonl").glob("*.jsonl"))}
    for p in sorted(folder.rglob("*.parquet")):
        rows = pq.read_table(p).to_pylist()
        out[p.name] = sorted(
            json.dumps({k: v for k, v in r.items() if k != "created_at"}, sort_keys=True, default=str) for r in rows
        )
    return out


def test_repeated_sigkills_during_rollouts_give_the_uninterrupted_dataset(tmp_path):
    script = tmp_path / "night.py"
    script.write_text(PIPELINE_SCRIPT)
    calm, killed = tmp_path / "calm", tmp_path / "killed"
    _run_pipeline(script, calm)

    rng = random.Random(int(time.time()))  # random points; printed so a failure can be replayed
    kills = int(os.environ.get("WORLDSMITH_SOAK_KILLS", "3"))  # `make bench` soaks with more
    points = sorted(rng.sample(range(1, 18), k=min(kills, 17)))
    print("kill points (trajectories on disk):", points)
    for k in points:
        if len(RunStore(killed, "night").read(Trajectory)) >= 17:
            break  # one episode left: a kill now would race the run's end
        assert _run_pipeline(script, killed, kill_after=k) == -signal.SIGKILL
        on_disk = RunStore(killed, "night").read(Trajectory)
        assert len(on_disk) >= k and len({t.trajectory_id for t in on_disk}) == len(on_disk), "nothing is written twice"
    _run_pipeline(script, killed)

    a, b = RunStore(calm, "night"), RunStore(killed, "night")
    trajs_a = {t.trajectory_id: t for t in a.read(Trajectory)}
    trajs_b = b.read(Trajectory)
    assert (
        len(trajs_a) == 18 and len(trajs_b) == 18 and {t.trajectory_id for t in trajs_b} == set(trajs_a)
    )  # each exactly once
    assert all(
        t.messages == trajs_a[t.trajectory_id].messages and t.world_states == trajs_a[t.trajectory_id].world_states
        for t in trajs_b
    )
    assert sorted((v.trajectory_id, v.passed, tuple(v.reasons)) for v in a.read(Verdict)) == sorted(
        (v.trajectory_id, v.passed, tuple(v.reasons)) for v in b.read(Verdict)
    )
    dataset = _dataset(calm)
    assert dataset["train.jsonl"] and dataset == _dataset(killed)
    # a kill during a write leaves at most a temporary file, never a half shard that is read
    assert all(p.name.startswith("part-") and p.suffix == ".parquet" for p in b.shards("trajectories"))
    for p in b.shards("trajectories"):
        pq.read_metadata(p)  # every shard a reader sees is complete


@pytest.mark.engine
@pytest.mark.slow
def test_a_server_stopped_mid_run_stops_the_run_cleanly_and_it_resumes(tmp_path, project_root):
    from scripted_worlds import cancel_task, order_agent, order_tools

    from worldsmith.config import ServerConfig
    from worldsmith.llm.server import ModelServer

    data = tmp_path / "data"
    store = RunStore(data, "outage")
    tools = order_tools()
    store.append(tools)
    store.append([order_agent(tools)])
    store.append([cancel_task(task_id=f"tsk_{i}") for i in range(3)])
    server = ModelServer(ServerConfig(port=free_port(), parallel=2, ctx_size=4096), project_root, tmp_path / "server")
    cfg = yaml.safe_load((project_root / "pipeline.yaml").read_text())
    cfg["run"].update(data_dir=str(data), prompts_dir=str(project_root / "prompts"))
    cfg["llm"]["endpoints"]["local"]["urls"] = [server.url]  # a server the run did not start (as on a GPU box)
    cfg["llm"]["retry"].update(outage_timeout_s=6, initial_backoff_s=0.2, max_backoff_s=1)
    cfg["rollouts"].update(
        samples_per_task=1,
        concurrency=1,
        max_turns=1,
        max_tool_calls=1,
        max_tokens=700,
        faults={"enabled": False},
        real_execution={"enabled": False},
    )
    config = tmp_path / "pipeline.yaml"
    config.write_text(yaml.safe_dump(cfg))
    command = [
        sys.executable,
        "-m",
        "worldsmith.cli",
        "synth",
        "--stage",
        "rollouts",
        "--run-id",
        "outage",
        "-c",
        str(config),
    ]
    shards = data / "runs" / "outage" / "trajectories"

    server.start()
    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not list(shards.glob("part-*.parquet")) and proc.poll() is None:
            time.sleep(0.1)
        assert proc.poll() is None, "the run should still be going when the server goes away"
        server.stop()
        stopped_at = time.monotonic()
        out, err = proc.communicate(timeout=120)
        waited = time.monotonic() - stopped_at
    finally:
        server.stop()
    assert proc.returncode == 3, err[-3000:]
    assert "stopped:" in err and "unreachable for" in err and "run the same command again to resume" in err
    assert 5 <= waited < 60  # it backed off for the outage time, then stopped
    info = RunStore(data, "outage").read_info()
    assert info["status"] == "stopped" and "unreachable" in info["error"]
    before = RunStore(data, "outage").read(Trajectory)
    assert 1 <= len(before) < 3
    assert not [t for t in before if "connection" in (t.reason or "") or "unreachable" in (t.reason or "")], (
        "an outage is not the episode's failure"
    )

    server.start()
    try:
        again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    finally:
        server.stop()
    assert again.returncode == 0, again.stderr[-3000:]
    after = RunStore(data, "outage").read(Trajectory)
    assert sorted(t.task_id for t in after) == [f"tsk_{i}" for i in range(3)]  # the rest played, nothing twice
    assert {t.trajectory_id: t.created_at for t in after if t.trajectory_id in {b.trajectory_id for b in before}} == {
        b.trajectory_id: b.created_at for b in before
    }
    assert RunStore(data, "outage").read_info()["status"] == "finished"


@pytest.mark.engine
@pytest.mark.slow
def test_a_model_server_sigkilled_mid_rollouts_loses_no_episode(tmp_path, project_root):
    """Lose nothing: the llama.cpp server is SIGKILLed while the rollouts run (no outage wait: every call after it
    fails in transport), so the episodes it fails are not stored: the stage goes on, counts them, and the run stops
    after it saying so. The server is restarted, the same command resumes, and every task has its episode, each
    played by the agent to its end (none stored as a server failure)."""
    from scripted_worlds import cancel_task, order_agent, order_tools

    from worldsmith.config import ServerConfig
    from worldsmith.llm.server import ModelServer

    data = tmp_path / "data"
    store = RunStore(data, "killed")
    tools = order_tools()
    store.append(tools)
    store.append([order_agent(tools)])
    store.append([cancel_task(task_id=f"tsk_{i}") for i in range(3)])
    server = ModelServer(ServerConfig(port=free_port(), parallel=2, ctx_size=4096), project_root, tmp_path / "server")
    cfg = yaml.safe_load((project_root / "pipeline.yaml").read_text())
    cfg["run"].update(data_dir=str(data), prompts_dir=str(project_root / "prompts"))
    cfg["llm"]["endpoints"]["local"]["urls"] = [server.url]
    cfg["llm"]["retry"].update(max_attempts=2, outage_timeout_s=0, initial_backoff_s=0.2, max_backoff_s=1)
    cfg["rollouts"].update(
        samples_per_task=1,
        concurrency=1,
        max_turns=1,
        max_tool_calls=1,
        max_tokens=700,
        faults={"enabled": False},
        real_execution={"enabled": False},
    )
    config = tmp_path / "pipeline.yaml"
    config.write_text(yaml.safe_dump(cfg))
    command = [sys.executable, "-m", "worldsmith.cli", "synth", "--stage", "rollouts", "--run-id", "killed"]
    command += ["-c", str(config)]
    shards = data / "runs" / "killed" / "trajectories"
    lost_markers = ("timeout", "connection", "HTTP 5", "unreachable")

    server.start()
    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not list(shards.glob("part-*.parquet")) and proc.poll() is None:
            time.sleep(0.1)
        assert proc.poll() is None, "the run should still be going when the server is killed"
        pid = server.state()["pid"]
        os.killpg(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=300)
    finally:
        server.stop()
    assert proc.returncode == 3, err[-3000:]  # stopped after the stage, as an outage stops a run
    said = "were not stored (the others are): run the same command again to play them"
    assert "stopped:" in err and said in " ".join(err.split())  # the terminal may wrap the line
    info = RunStore(data, "killed").read_info()
    assert info["status"] == "stopped" and said in info["error"]
    counts = info["stages"]["rollouts"]["counts"]
    before = RunStore(data, "killed").read(Trajectory)
    assert 1 <= len(before) < 3 and counts["replay_on_resume"] == 3 - len(before), counts
    assert not [t.reason for t in before if any(m in (t.reason or "") for m in lost_markers)]

    server.start()
    try:
        again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    finally:
        server.stop()
    assert again.returncode == 0, again.stderr[-3000:]
    after = RunStore(data, "killed").read(Trajectory)
    assert sorted(t.task_id for t in after) == [f"tsk_{i}" for i in range(3)]  # each once: the lost ones replayed
    assert not [t.reason for t in after if any(m in (t.reason or "") for m in lost_markers)], "none stored as lost"
    info = RunStore(data, "killed").read_info()
    assert info["status"] == "finished" and "replay_on_resume" not in info["stages"]["rollouts"]["counts"]
