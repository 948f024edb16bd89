"""Rollout benchmarks: pipeline overhead per episode, and engine utilisation.

1. Overhead: episodes of the hand-made order world with a client that answers at once
   (no model), stored like the real stage does (one atomic shard each): the CPU time per
   episode is what the pipeline itself costs (prompts, validation, patches, store).
2. Utilisation: the rollouts stage against a running OpenAI-compatible server (the
   embedded one by default) records every request it makes; the same requests are then
   replayed with no dependencies between them at the same concurrency (a saturation load
   of the same prompts). Ratio = the stage's generated tokens/s ÷ the replay's. The
   server's prefix-cache hit rate during the stage comes from its Prometheus metrics
   (vLLM: vllm:prefix_cache_hits/queries; llama.cpp: prompt_tokens_cached/processed).
3. Overhead share: the pipeline's CPU per episode ÷ an episode's wall time on the engine.

    python benchmarks/rollouts.py [--engine llamacpp|vllm] [--url http://127.0.0.1:8010/v1]
        [--episodes 16] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from worlds import cancel_task, order_agent, order_tools, scripted_context  # noqa: E402

from worldsmith.config import PipelineConfig, load_config  # noqa: E402
from worldsmith.context import RunContext  # noqa: E402
from worldsmith.llm import LLMClient, Prompts  # noqa: E402
from worldsmith.records import Trajectory  # noqa: E402
from worldsmith.rollouts.stage import make_rollouts  # noqa: E402
from worldsmith.store import RunStore  # noqa: E402


def seed_store(store: RunStore, n_tasks: int) -> None:
    tools = order_tools()
    store.append(tools)
    store.append([order_agent(tools)])
    kinds = ["single_call", "error_recovery", "multi_call", "clarification"]
    store.append([cancel_task(kinds[i % len(kinds)], task_id=f"tsk_{i:04d}") for i in range(n_tasks)])


def overhead(n: int) -> dict:
    from test_rollouts import ScriptedClient

    cfg = PipelineConfig.model_validate(
        {"rollouts": {"samples_per_task": 1, "concurrency": 8, "real_execution": {"enabled": False}}}
    )
    patch = [{"op": "replace", "path": "/orders/0/status", "value": "cancelled"}]
    client = ScriptedClient(
        user_sim=lambda m: {
            "message": "Thanks, bye." if len(m) > 4 else "Cancel o-1001 please.",
            "action": "stop" if len(m) > 4 else "continue",
        },
        agent=lambda m: (
            "Order o-1001 is cancelled." if m[-1]["role"] == "tool" else [("cancel_order", {"order_id": "o-1001"})]
        ),
        tool_sim=lambda m: {"result": {"id": "o-1001", "status": "cancelled"}, "patch": patch},
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(tmp, "overhead")
        seed_store(store, n)

        ctx = scripted_context(
            client, cfg=cfg, root=ROOT, run_id="overhead", store=store, prompts=Prompts(ROOT / "prompts")
        )
        cpu0, wall0 = time.process_time(), time.perf_counter()
        counts = asyncio.run(make_rollouts(ctx))
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        trajs = store.read(Trajectory)
    return {
        "episodes": counts["new"],
        "tool_calls": sum(t.tool_calls for t in trajs),
        "cpu_ms_per_episode": round(1000 * cpu / n, 2),
        "wall_ms_per_episode": round(1000 * wall / n, 2),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def prefix_cache_counters(url: str) -> dict[str, float]:
    """Prompt tokens looked up / served from the prefix cache so far, from the server's /metrics."""
    import httpx

    text = httpx.get(url.removesuffix("/v1") + "/metrics", timeout=10).text
    totals: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        name, value = line.split("{")[0].split(" ")[0], line.rsplit(" ", 1)[1]
        for key, metric in (
            ("vllm_queries", "vllm:prefix_cache_queries_total"),
            ("vllm_hits", "vllm:prefix_cache_hits_total"),
            ("llamacpp_processed", "llamacpp:prompt_tokens_total"),
            ("llamacpp_cached", "llamacpp:prompt_tokens_cached_total"),
        ):
            if name == metric:
                totals[key] = totals.get(key, 0.0) + float(value)
    return totals


def hit_rate(before: dict[str, float], after: dict[str, float]) -> float | None:
    d = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}
    if d.get("vllm_queries"):
        return round(d["vllm_hits"] / d["vllm_queries"], 3)
    looked_up = d.get("llamacpp_processed", 0) + d.get("llamacpp_cached", 0)
    return round(d.get("llamacpp_cached", 0) / looked_up, 3) if looked_up else None


def utilisation(url: str, episodes: int, concurrency: int) -> dict:
    cfg, root = load_config(
        ROOT / "pipeline.yaml",
        [
            f"llm.endpoints.local.urls=[{url}]",
            f"llm.endpoints.local.max_concurrency={concurrency}",
            f"rollouts.concurrency={concurrency}",
            "rollouts.samples_per_task=1",
            "rollouts.adaptive_concurrency=false",
        ],
    )
    recorded: list[dict] = []
    original = LLMClient.chat

    async def recording_chat(self, role, messages, **kw):
        result = await original(self, role, messages, **kw)
        recorded.append(
            {
                "role": role,
                "messages": messages,
                "kw": kw,
                "completion_tokens": result.completion_tokens,
                "ended": time.time(),
            }
        )
        return result

    LLMClient.chat = recording_chat
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(tmp, "util")
        seed_store(store, episodes)
        ctx = RunContext(cfg=cfg, root=root, run_id="util", store=store, prompts=Prompts(root / "prompts"))
        cache0 = prefix_cache_counters(url)
        t0 = time.perf_counter()
        counts = asyncio.run(make_rollouts(ctx))
        stage_s = time.perf_counter() - t0
        cache_hit_rate = hit_rate(cache0, prefix_cache_counters(url))
        stage_tokens = ctx.usage.completion_tokens
        usage = ctx.usage.snapshot()
        # Steady state: until the last episode could start (the (N - concurrency)-th finished), every slot had an
        # episode; after it the run drains, a tail that a short benchmark over-weights and a real run (thousands)
        # does not.
        finished = sorted(t.created_at.timestamp() for t in store.read(Trajectory))
        wall0 = time.time() - stage_s
        steady_end = finished[len(finished) - concurrency - 1] if len(finished) > concurrency else None
        steady_rate = (
            (sum(r["completion_tokens"] for r in recorded if r["ended"] <= steady_end) / (steady_end - wall0))
            if steady_end
            else None
        )
    LLMClient.chat = original

    async def replay() -> tuple[int, float]:
        client = LLMClient(cfg.llm)
        sem = asyncio.Semaphore(concurrency)

        async def one(req):
            async with sem:
                return await client.chat(req["role"], req["messages"], **req["kw"])

        t = time.perf_counter()
        results = await asyncio.gather(*(one(r) for r in recorded))
        await client.aclose()
        return sum(r.completion_tokens for r in results), time.perf_counter() - t

    # The replay runs on the prefix cache the stage warmed (a bias in its favour): vLLM CPU 0.32's /reset_prefix_cache
    # killed its engine at the next seeded request ("CPU Generator does not use offset"), so it is not emptied.
    cache_reset = False
    replay_tokens, replay_s = asyncio.run(replay())
    stage_rate, replay_rate = stage_tokens / stage_s, replay_tokens / replay_s
    return {
        "episodes": counts["new"],
        "requests": len(recorded),
        "stage_tokens": stage_tokens,
        "stage_s": round(stage_s, 1),
        "stage_tok_s": round(stage_rate, 1),
        "saturation_tok_s": round(replay_rate, 1),
        "replay_s": round(replay_s, 1),
        "utilisation": round(stage_rate / replay_rate, 3),
        "prefix_cache_hit_rate": cache_hit_rate,
        "steady_tok_s": round(steady_rate, 1) if steady_rate else None,
        "replay_cache_reset": cache_reset,
        "steady_utilisation": round(steady_rate / replay_rate, 3) if steady_rate else None,
        "client_cached_share": round(
            sum(u["cached_tokens"] for u in usage.values()) / max(sum(u["prompt_tokens"] for u in usage.values()), 1), 3
        ),
        "episode_wall_s": round(stage_s * min(concurrency, episodes) / max(counts["new"], 1), 2),
        "statuses": {
            k: v for k, v in counts.items() if k in ("finished", "max_turns", "max_tool_calls", "max_tokens", "error")
        },
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", default=None, help="a running server (default: start the embedded one)")
    p.add_argument("--episodes", type=int, default=16)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--overhead-episodes", type=int, default=200)
    p.add_argument("--skip-engine", action="store_true")
    p.add_argument(
        "--engine",
        choices=["llamacpp", "vllm"],
        default="llamacpp",
        help="the embedded engine to start when --url is not given",
    )
    a = p.parse_args()
    results = {"overhead": overhead(a.overhead_episodes)}
    print(json.dumps({"overhead": results["overhead"]}), flush=True)
    if not a.skip_engine:
        if a.url:
            results["utilisation"] = utilisation(a.url, a.episodes, a.concurrency)
        else:
            from worldsmith.llm.server import embedded_server

            cfg, root = load_config(ROOT / "pipeline.yaml", [f"llm.server.engine={a.engine}"])
            with embedded_server(cfg.llm.server, root, root / "data") as url:
                results["utilisation"] = utilisation(url, a.episodes, a.concurrency)
        u = results["utilisation"]
        u["engine"] = a.url or a.engine
        # pipeline CPU per episode ÷ an episode's wall time with this engine
        # (an episode holds one slot of `concurrency`)
        results["overhead"]["share_of_episode_wall"] = round(
            results["overhead"]["cpu_ms_per_episode"] / 1000 / max(u["episode_wall_s"], 1e-9), 5
        )
        print(
            json.dumps({"utilisation": u, "overhead_share": results["overhead"]["share_of_episode_wall"]}), flush=True
        )
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    name = "rollouts.json" if a.skip_engine or a.url or a.engine == "llamacpp" else f"rollouts-{a.engine}.json"
    (out / name).write_text(json.dumps({"measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"), **results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
