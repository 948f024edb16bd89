"""The stand-in model server (tests/standin.py) under the real pipeline: rollouts → judge → export with a
real LLMClient over HTTP; every episode reaches the cancel task's gold end state and passes the judge, and
two runs store the same messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scripted_worlds import cancel_task, order_agent, order_tools
from standin import Latency, answer, standin_server, stats

from worldsmith import pipeline
from worldsmith.config import validate_config
from worldsmith.context import RunContext
from worldsmith.llm import Prompts
from worldsmith.records import Trajectory, Verdict
from worldsmith.store import RunStore

ROOT = Path(__file__).resolve().parent.parent
# as benchmarks/rollouts.py seeds them; error_recovery: the first call meets an injected fault and the agent retries
KINDS = ["single_call", "error_recovery", "multi_call", "clarification"]
NO_RECOVERY = ["single_call", "multi_call", "clarification"]
AGENTS, TASKS_PER_AGENT, SAMPLES = 2, 2, 2
EPISODES = AGENTS * TASKS_PER_AGENT * SAMPLES


def run_pipeline(url: str, data: Path, mode: str = "constrained", kinds: list[str] = KINDS) -> RunStore:
    cfg = validate_config(
        {
            "run": {"data_dir": str(data)},
            "llm": {
                "endpoints": {"local": {"urls": [url], "max_concurrency": 16, "timeout_s": 30}},
                "retry": {"max_attempts": 2, "initial_backoff_s": 0.05, "max_backoff_s": 0.2, "outage_timeout_s": 0},
                "roles": {"agent": {"endpoint": "local", "tool_call_mode": mode}},
            },
            "judge": {"critic": True},
            "rollouts": {"samples_per_task": SAMPLES, "concurrency": 8, "real_execution": {"enabled": False}},
            "export": {"out_dir": str(data / "exports"), "validation_fraction": 0.3, "near_duplicate_threshold": 1.0},
        }
    )
    store = RunStore(data, "standin")
    tools = order_tools()
    store.append(tools)
    store.append([order_agent(tools).model_copy(update={"agent_id": f"agt_{a}"}) for a in range(AGENTS)])
    store.append(
        [
            cancel_task(kinds[(a * TASKS_PER_AGENT + i) % len(kinds)], task_id=f"tsk_{a}_{i}").model_copy(
                update={"agent_id": f"agt_{a}"}
            )
            for a in range(AGENTS)
            for i in range(TASKS_PER_AGENT)
        ]
    )
    ctx = RunContext(cfg=cfg, root=ROOT, run_id="standin", store=store, prompts=Prompts(ROOT / "prompts"))
    for name in ("rollouts", "judge", "export"):
        pipeline.run_stage(ctx, pipeline.BY_NAME[name])
    return store


def assert_all_passed(store: RunStore) -> list[Trajectory]:
    trajs = store.read(Trajectory)
    assert len(trajs) == EPISODES
    assert all(t.status == "finished" for t in trajs), [(t.status, t.reason) for t in trajs]
    assert all(t.world_states.final["orders"][0]["status"] == "cancelled" for t in trajs)  # the gold end state
    verdicts = store.read(Verdict)
    assert len(verdicts) == EPISODES
    assert all(v.passed for v in verdicts), sorted({r for v in verdicts for r in v.reasons})
    return trajs


def test_the_pipeline_against_the_standin_passes_every_episode_and_is_deterministic(tmp_path):
    with standin_server() as url:
        a = assert_all_passed(run_pipeline(url, tmp_path / "a", kinds=NO_RECOVERY))
        served = stats(url)
        b = assert_all_passed(run_pipeline(url, tmp_path / "b", kinds=NO_RECOVERY))
    # user, agent (call), tool simulator, agent (reply), user (stop), critic: six requests an episode, each one
    # the client counted is one the server served
    assert served["requests"] == sum(u["calls"] for t in a for u in t.usage.values()) + EPISODES >= 6 * EPISODES
    assert served["by_kind"]["critic"] == EPISODES and served["by_kind"]["user_sim"] == 2 * EPISODES
    assert {t.trajectory_id: t.messages for t in a} == {t.trajectory_id: t.messages for t in b}
    assert any((tmp_path / "a" / "exports").rglob("train.jsonl"))


def test_native_tool_calls_pass_too_with_a_retry_after_a_fault(tmp_path):
    with standin_server() as url:
        trajs = assert_all_passed(run_pipeline(url, tmp_path / "n", mode="native"))
        assert stats(url)["by_kind"]["agent_native"] >= 2 * EPISODES
    assert all(t.decoding == "native" for t in trajs)
    assert sum(len(t.faults) for t in trajs) >= EPISODES // len(KINDS)  # the error_recovery episodes met theirs


def test_constrained_retries_after_a_fault_pass(tmp_path):
    """A retry after a fault is the same call again: it gets its own tool-call id, so the judge finds it."""
    with standin_server() as url:
        assert_all_passed(run_pipeline(url, tmp_path / "c", kinds=["error_recovery"]))


def test_answers_and_latency_depend_on_the_request_only():
    body = {
        "messages": [{"role": "user", "content": "cancel o-1001"}],
        "tools": [{"type": "function", "function": {"name": "cancel_order"}}],
        "tool_choice": "required",
        "seed": 3,
    }
    kind, msg, finish = answer(body)
    assert kind == "agent_native" and finish == "tool_calls" and answer(body) == (kind, msg, finish)
    assert json.loads(msg["tool_calls"][0]["function"]["arguments"]) == {"order_id": "o-1001"}
    replied = {**body, "messages": [*body["messages"], msg, {"role": "tool", "content": '{"status": "cancelled"}'}]}
    assert answer(replied)[1]["content"] == "Order o-1001 is cancelled."
    lat = Latency(800, 4000)
    draws = sorted(lat.seconds(str(i).encode()) for i in range(4000))
    assert lat.seconds(b"x") == lat.seconds(b"x")
    assert draws[2000] == pytest.approx(0.8, rel=0.1) and draws[3960] == pytest.approx(4.0, rel=0.25)
