"""The pipeline's own ceiling (issue 18, part 2): how many episodes a second worldsmith itself can drive when
the model is never the bottleneck.

The rollouts and judge stages (the library's own `pipeline.run_stage`, a real `LLMClient` over HTTP, faults on,
the critic on as a GPU run has it) play the hand-made order world of tests/scripted_worlds.py against the stand-in model
server of tests/standin.py, which answers every role correctly after a delay drawn per request from a
lognormal distribution. Default delay: median 800 ms, p99 4 s per call. Where that comes from: a published vLLM
figure for an 8B model (MLPerf Inference v5.1, Llama-3.1-8B on one H100, server scenario: 5,103 output tokens/s;
benchmarks/README.md, "Pipeline ceiling", has the source) shared by ~64 sequences gives each ~80 tokens/s, and an
episode's call here generates ~64 tokens on average (344 completion tokens over 5.4 calls in the default run),
so ~0.8 s; the tail (long answers, prefill queued behind a full batch) makes a p99 five times the median
(sigma 0.69, mean 1.02 s). A server shared by more sequences answers each more slowly: the pipeline then needs
more episodes in flight for the same rate (Little's law), which is why the sweep goes to 1,024.

The stand-in runs in its own process (started here), so its CPU is not counted as the pipeline's; it is
reported beside it. Each point runs in a child process of its own (fresh interpreter, so peak RSS is that
point's), in a fresh run store under a temporary folder, with `rollouts.concurrency`, the endpoint's
`max_concurrency` and `judge.concurrency` all set to the point's concurrency and `run.shard_size` large
enough for one shard (shards run one after another, so the default 100 tasks a shard would cap the episodes in
flight at ~100 x samples_per_task whatever the concurrency; `--as-configured` adds a point with the defaults).

Points: the sweep, then the big run at the sweep's best concurrency. The client's HTTP pools are httpx2's, at
most 64 connections each (`llm/client.py`, POOL_CONNECTIONS): the legacy httpx pool it had before (httpcore
1.0.9) walked all its connections, and for each idle one all of them again, on every request
(encode/httpcore#1035), so its CPU per request grew with the pool: see benchmarks/README.md.

Per point: episodes/s (rollouts stage wall), the ideal rate the delays allow (concurrency ÷ model seconds per
episode: what a pipeline costing nothing would do), CPU seconds per episode of the pipeline process (user +
system, every thread: resource.getrusage(RUSAGE_SELF) of the child, rollouts and judge apart) and of the
stand-in process, peak RSS of the pipeline process, the store's write rate (records/s and MB/s of Parquet into
the run store, and the seconds spent inside RunStore.append), judge verdicts/s, requests and tokens per
episode, and the machine's load average.

    python benchmarks/ceiling.py [--quick] [--concurrency 64 128 ...] [--episodes-per-slot 2] [--max-episodes N]
        [--big 10000] [--latency-median-ms 800 --latency-p99-ms 4000] [--profile-at 256] [--as-configured]
        [--out PATH]

writes benchmarks/results/ceiling.json (with --profile-at, its "profile": a py-spy sampling profile of that point)
and benchmarks/results/ceiling.png, and prints a table.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

RESULTS = ROOT / "benchmarks" / "results"
KINDS = ["single_call", "error_recovery", "multi_call", "clarification"]  # as benchmarks/rollouts.py seeds them


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("part-*.parquet")) if folder.exists() else 0


# ------------------------------------------------------------------ one point (a child process)


def run_point(
    url: str,
    concurrency: int,
    episodes: int,
    shard_size: int | None,
    samples: int,
    data: Path,
    replicas: int = 1,
) -> dict:
    """Seed a store, run rollouts then judge against the stand-in at `url`; the measurements. What-ifs (not the
    library as it is): `replicas` lists the URL that many times, each replica with its own connection pools for
    concurrency / replicas."""
    cpu_start = _cpu()
    import standin
    from scripted_worlds import cancel_task, order_agent, order_tools

    from worldsmith import pipeline
    from worldsmith.config import load_config
    from worldsmith.context import RunContext
    from worldsmith.llm import Prompts
    from worldsmith.records import Trajectory, Verdict
    from worldsmith.store import RunStore

    tasks = -(-episodes // samples)
    overrides = [
        f"run.data_dir={data}",
        f"run.shard_size={shard_size or max(tasks, 1)}",
        f"llm.endpoints.local.urls=[{','.join([url] * replicas)}]",
        f"llm.endpoints.local.max_concurrency={-(-concurrency // replicas)}",
        f"rollouts.concurrency={concurrency}",
        f"rollouts.samples_per_task={samples}",
        "rollouts.real_execution.enabled=false",
        "judge.critic=true",
        f"judge.concurrency={concurrency}",
    ]
    cfg, root = load_config(ROOT / "pipeline.yaml", overrides)
    store = RunStore(data, "ceiling")
    tools = order_tools()
    store.append(tools)
    store.append([order_agent(tools)])
    store.append([cancel_task(KINDS[i % len(KINDS)], task_id=f"tsk_{i:05d}") for i in range(tasks)])
    ctx = RunContext(cfg=cfg, root=root, run_id="ceiling", store=store, prompts=Prompts(root / "prompts"))

    # time spent writing shards (the store's lock is held throughout, so appends queue behind each other)
    append_s = collections.Counter()
    original = RunStore.append

    def timed_append(self, records):
        t = time.perf_counter()
        try:
            return original(self, records)
        finally:
            append_s[type(records[0]).stage if records else "none"] += time.perf_counter() - t

    RunStore.append = timed_append
    out: dict = {"concurrency": concurrency, "episodes": tasks * samples, "shard_size": shard_size or "one shard"}
    out["replicas"], out["client_pool"] = replicas, "httpx2, pools of <= 64 (as the library builds it)"
    out["samples_per_task"] = samples
    out["startup_cpu_s"] = round(_cpu() - cpu_start, 2)
    stages = {}
    for name, folder in (("rollouts", "trajectories"), ("judge", "verdicts")):
        served0 = standin.stats(url)
        cpu0, t0, load0, started = _cpu(), time.perf_counter(), os.getloadavg()[0], time.time()
        result = pipeline.run_stage(ctx, pipeline.BY_NAME[name])
        wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
        served1 = standin.stats(url)
        written = _bytes(store.stage_dir(folder))
        n = result.counts.get("new", 0)
        stages[name] = {
            "records": n,
            "wall_s": round(wall, 2),
            "stage_s": round(result.seconds, 2),  # without run.json and the catalog refresh after it
            "per_s": round(n / wall, 2),
            "cpu_s": round(cpu, 2),
            "cpu_ms_per_episode": round(1000 * cpu / max(out["episodes"], 1), 2),
            "cpu_share": round(cpu / wall, 3),  # of one core
            "store_records_per_s": round(n / wall, 2),
            "store_mb": round(written / 1e6, 2),
            "store_mb_per_s": round(written / 1e6 / wall, 3),
            "shards": len(store.shards(folder)),
            "append_s": round(append_s[folder], 2),
            "append_share_of_wall": round(append_s[folder] / wall, 3),
            "standin_requests": served1["requests"] - served0["requests"],
            "standin_cpu_s": round(served1["process_cpu_s"] - served0["process_cpu_s"], 2),
            "standin_peak_in_flight": served1["peak_in_flight"],
            "model_s": round(served1["delay_s"] - served0["delay_s"], 1),  # the delays the stand-in slept
            "load_avg_1m": [round(load0, 2), round(os.getloadavg()[0], 2)],
            "counts": {k: v for k, v in result.counts.items() if isinstance(v, int | float | str)},
        }
        if name == "rollouts":
            trajs = store.read(Trajectory)
            stages[name]["episode_latency_s_mean"] = round(sum(t.latency_s for t in trajs) / max(len(trajs), 1), 3)
            stages[name]["statuses"] = dict(collections.Counter(t.status for t in trajs))
            # steady state: until the last episode could start (the (N - concurrency)-th finished) every slot was
            # busy; after it the run drains, a tail (p99 delays) a short point over-weights and a long run does not
            ends = sorted(t.created_at.timestamp() for t in trajs)
            if len(ends) > concurrency:
                steady = len(ends) - concurrency
                stages[name]["steady_per_s"] = round(steady / (ends[steady - 1] - started), 2)
            usage = ctx.usage.snapshot()
            stages[name]["tokens_per_episode"] = {
                role: {
                    "calls": round(u["calls"] / max(len(trajs), 1), 2),
                    "prompt": round(u["prompt_tokens"] / max(len(trajs), 1)),
                    "completion": round(u["completion_tokens"] / max(len(trajs), 1)),
                }
                for role, u in usage.items()
            }
    RunStore.append = original
    verdicts = store.read(Verdict)
    out["stages"] = stages
    out["passed"] = sum(v.passed for v in verdicts)
    out["drop_reasons"] = dict(collections.Counter(r for v in verdicts for r in v.reasons).most_common(5))
    out["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


# ------------------------------------------------------------------ the sweep (the parent)


def child(
    url: str,
    concurrency: int,
    episodes: int,
    shard_size: int | None,
    samples: int,
    profile: Path | None = None,
    replicas: int = 1,
) -> dict:
    """Run one point in a fresh interpreter (optionally under py-spy); its result."""
    data = Path(tempfile.mkdtemp(prefix="ceiling-"))
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--point",
        "--url",
        url,
        "--concurrency",
        str(concurrency),
        "--episodes",
        str(episodes),
        "--samples",
        str(samples),
        "--data",
        str(data),
        "--replicas",
        str(replicas),
    ]
    command += ["--shard-size", str(shard_size)] if shard_size else []
    command_point = command
    if profile is not None:
        spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        # --gil: only the thread holding the GIL, i.e. where this GIL-bound process spends its Python time
        command = [spy, "record", "--gil", "--nonblocking", "--format", "raw", "-r", "100", "-o", str(profile)]
        command += ["--", *command_point]
    log = data.with_suffix(".log")
    try:
        with open(log, "w") as err:
            proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=err, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"point c={concurrency} n={episodes} failed:\n{log.read_text()[-3000:]}")
        return json.loads(next(line for line in reversed(proc.stdout.splitlines()) if line.startswith("{")))
    finally:
        shutil.rmtree(data, ignore_errors=True)
        log.unlink(missing_ok=True)


def summarise_profile(raw: Path, top: int = 15) -> dict:
    """py-spy's collapsed stacks → the functions with the most samples, on-CPU (self) and below them (total),
    and the share of samples by library."""
    self_, total, by_lib = collections.Counter(), collections.Counter(), collections.Counter()
    samples = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        n = int(count)
        samples += n
        frames = [f.rsplit(":", 1)[0] + ")" if "(" in f else f for f in stack.split(";")]  # drop line numbers
        self_[frames[-1]] += n
        for f in set(frames):
            total[f] += n
        leaf = stack.split(";")[-1]
        path = leaf[leaf.find("(") + 1 :]
        lib = next(
            (
                name
                for key, name in (
                    ("worldsmith/", "worldsmith"),
                    ("jsonschema", "jsonschema"),
                    ("referencing", "jsonschema"),
                    ("pydantic", "pydantic"),
                    ("openai/", "openai"),
                    ("httpx", "httpx/httpcore"),
                    ("httpcore", "httpx/httpcore"),
                    ("h11", "httpx/httpcore"),
                    ("anyio", "anyio"),
                    ("asyncio", "asyncio"),
                    ("pyarrow", "pyarrow"),
                    ("jinja2", "jinja2"),
                    ("tenacity", "tenacity"),
                    ("json/", "json"),
                    ("rich", "rich (progress)"),
                    ("ssl", "ssl"),
                    ("duckdb", "duckdb"),
                )
                if key in path
            ),
            "other",
        )
        by_lib[lib] += n

    def table(c: collections.Counter) -> list[dict]:
        return [{"function": f, "share": round(n / samples, 3)} for f, n in c.most_common(top)]

    return {
        "samples": samples,
        "self": table(self_),
        "total": table(total),
        "by_library": {k: round(v / samples, 3) for k, v in by_lib.most_common()},
    }


def row(p: dict) -> dict:
    r, j = p["stages"]["rollouts"], p["stages"]["judge"]
    model_s_per_episode = r["model_s"] / max(p["episodes"], 1)
    ideal = p["concurrency"] / model_s_per_episode if model_s_per_episode else None
    return {
        "concurrency": p["concurrency"],
        "episodes": p["episodes"],
        "episodes_per_s": r["per_s"],
        "steady_per_s": r.get("steady_per_s"),
        "ideal_per_s": round(ideal, 1) if ideal else None,
        "efficiency": round((r.get("steady_per_s") or r["per_s"]) / ideal, 3) if ideal else None,
        "cpu_ms_per_episode": round(r["cpu_ms_per_episode"] + j["cpu_ms_per_episode"], 1),
        "rollouts_cpu_ms": r["cpu_ms_per_episode"],
        "judge_cpu_ms": j["cpu_ms_per_episode"],
        "cpu_share": r["cpu_share"],
        "standin_cpu_ms_per_episode": round(1000 * (r["standin_cpu_s"] + j["standin_cpu_s"]) / p["episodes"], 1),
        "max_rss_mb": p["max_rss_mb"],
        "store_records_per_s": r["store_records_per_s"],
        "store_mb_per_s": r["store_mb_per_s"],
        "append_share": r["append_share_of_wall"],
        "verdicts_per_s": j["per_s"],
        "passed": p["passed"],
        "episode_latency_s": r["episode_latency_s_mean"],
        "load": r["load_avg_1m"],
    }


HEADER = (
    f"{'conc':>6} {'episodes':>8} {'ep/s':>7} {'steady':>7} {'ideal':>7} {'eff':>5} {'cpu ms/ep':>9} "
    f"{'(roll+judge)':>13} "
    f"{'core':>5} {'stand-in':>8} {'RSS MB':>6} {'rec/s':>6} {'MB/s':>6} {'append':>6} {'verd/s':>7} "
    f"{'passed':>7} {'ep lat s':>8}"
)


def show(label: str, r: dict) -> str:
    split = f"{r['rollouts_cpu_ms']:.1f}+{r['judge_cpu_ms']:.1f}"
    return (
        f"{r['concurrency']:>6} {r['episodes']:>8} {r['episodes_per_s']:>7.1f} {r['steady_per_s'] or 0:>7.1f} "
        f"{r['ideal_per_s'] or 0:>7.1f} "
        f"{r['efficiency'] or 0:>5.2f} {r['cpu_ms_per_episode']:>9.1f} "
        f"{split:>13} {r['cpu_share']:>5.2f} "
        f"{r['standin_cpu_ms_per_episode']:>8.1f} {r['max_rss_mb']:>6} {r['store_records_per_s']:>6.1f} "
        f"{r['store_mb_per_s']:>6.3f} {r['append_share']:>6.2f} {r['verdicts_per_s']:>7.1f} "
        f"{r['passed']:>7} {r['episode_latency_s']:>8.2f}  {label}"
    )


def plot(points: list[dict], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    sweep = [p for p in points if p["label"] == "sweep"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    xs = [p["row"]["concurrency"] for p in sweep]
    a.plot(xs, [p["row"]["episodes_per_s"] for p in sweep], "o-", label="measured (rollouts)")
    a.plot(xs, [p["row"]["ideal_per_s"] for p in sweep], "--", color="grey", label="ideal (model time only)")
    a.plot(xs, [p["row"]["verdicts_per_s"] for p in sweep], "s-", label="judge verdicts/s")
    for p in points:
        if p["label"] != "sweep":
            a.plot([p["row"]["concurrency"]], [p["row"]["episodes_per_s"]], "x", ms=10, label=p["label"])
    a.set(xscale="log", yscale="log", xlabel="episodes in flight", ylabel="per second", title="throughput")
    a.set_xticks(xs, [str(x) for x in xs])
    a.legend(fontsize=8)
    b.plot(xs, [p["row"]["rollouts_cpu_ms"] for p in sweep], "o-", label="pipeline, rollouts")
    b.plot(xs, [p["row"]["judge_cpu_ms"] for p in sweep], "s-", label="pipeline, judge")
    b.plot(xs, [p["row"]["standin_cpu_ms_per_episode"] for p in sweep], "^-", label="stand-in server")
    for p in points:
        if p["label"] != "sweep":
            b.plot(
                [p["row"]["concurrency"]], [p["row"]["rollouts_cpu_ms"]], "x", ms=10, label=f"rollouts, {p['label']}"
            )
    b.set(xscale="log", xlabel="episodes in flight", ylabel="CPU ms per episode", title="CPU per episode")
    b.set_xticks(xs, [str(x) for x in xs])
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="two small points and a small big run")
    p.add_argument("--concurrency", type=int, nargs="+", default=[64, 128, 256, 512, 1024])
    p.add_argument("--episodes-per-slot", type=float, default=2.0, help="episodes per point = this x concurrency")
    p.add_argument("--max-episodes", type=int, default=1152, help="at most this many (at least concurrency + 128)")
    p.add_argument("--big", type=int, default=10_000, help="episodes of the big run (0: none)")
    p.add_argument("--latency-median-ms", type=float, default=800.0)
    p.add_argument("--latency-p99-ms", type=float, default=4000.0)
    p.add_argument("--profile-at", type=int, default=None, help="profile the point at this concurrency (py-spy)")
    p.add_argument("--as-configured", action="store_true", help="add a point with the default shard size")
    p.add_argument("--out", default=str(RESULTS / "ceiling.json"))
    # a child's arguments
    p.add_argument("--point", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--url", help=argparse.SUPPRESS)
    p.add_argument("--episodes", type=int, help=argparse.SUPPRESS)
    p.add_argument("--samples", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--shard-size", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--data", help=argparse.SUPPRESS)
    p.add_argument("--replicas", type=int, default=1, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.point:
        result = run_point(a.url, a.concurrency[0], a.episodes, a.shard_size, a.samples, Path(a.data), a.replicas)
        print(json.dumps(result), flush=True)
        return
    if a.quick:
        a.concurrency, a.episodes_per_slot, a.big = [32, 128], 2.0, 384
    from standin import Latency, standin_server

    latency = Latency(a.latency_median_ms, a.latency_p99_ms)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": {"cpus": os.cpu_count(), "load_avg_at_start": [round(x, 2) for x in os.getloadavg()]},
        "latency": {"median_ms": latency.median_ms, "p99_ms": latency.p99_ms, "mean_ms": round(latency.mean_ms, 1)},
        "cpu_accounting": "pipeline: getrusage(RUSAGE_SELF) of the child process running the stages (all its threads);"
        " stand-in: its own process, from its /stats",
        "points": [],
    }
    print(HEADER, flush=True)
    t0 = time.perf_counter()
    top = max(a.concurrency)
    with standin_server(latency=latency, process=True) as url:

        def measure(c, n, label, shard=None, samples=1, replicas=1, profile=False):
            prof = out.with_suffix(".profile.raw") if profile else None
            result = child(url, c, n, shard, samples, prof, replicas)
            entry = {"label": label, "row": row(result), "detail": result}
            if prof is not None:
                report["profile"] = {"concurrency": c, "label": label, **summarise_profile(prof)}
                prof.unlink(missing_ok=True)
            report["points"].append(entry)
            print(show(label, entry["row"]), flush=True)
            out.write_text(json.dumps(report, indent=1) + "\n")
            return entry

        for c in a.concurrency:  # the library as it is
            n = min(max(int(a.episodes_per_slot * c), c + 64), max(a.max_episodes, c + 128))
            measure(c, n, "sweep", profile=a.profile_at == c)
        sweep = [e for e in report["points"] if e["label"] == "sweep"]
        report["best_concurrency"] = max(sweep, key=lambda e: e["row"]["episodes_per_s"])["row"]["concurrency"]
        if a.as_configured:  # the default shard size (100 tasks) and samples per task (3), at the top concurrency
            measure(top, 3 * top, "as configured: shard_size 100, samples 3", shard=100, samples=3)
        if a.big:
            best = report["best_concurrency"]
            measure(best, a.big, "big run")
    report["wall_s"] = round(time.perf_counter() - t0, 1)
    report["machine"]["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report["plot"] = plot(report["points"], out.with_suffix(".png"))
    out.write_text(json.dumps(report, indent=1) + "\n")
    if "profile" in report:
        pr = report["profile"]
        print(f"\nprofile at concurrency {pr['concurrency']} ({pr['samples']} samples), by library:", pr["by_library"])
        for f in pr["self"][:10]:
            print(f"  self {f['share']:6.1%}  {f['function']}")
    print(f"\n{out} ({report['wall_s']} s)" + ("" if report["plot"] else "; no matplotlib, no plot"))


if __name__ == "__main__":
    main()
