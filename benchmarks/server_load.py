"""The embedded llama.cpp server under load: its generated tokens/s alone on the machine and with one core kept
busy beside it, at three thread settings, to choose the default that holds up best (issue 51: `make synth` took
48 min with light work beside it, 24.8 min alone; per call the server slowed 5-40x).

Loads (each runs for the whole measurement, started before it):
- `idle`: nothing else;
- `cpu_loop`: one niced process spinning in a Python loop (`nice -n 10`: a background job, as `make` recipes,
  a pip install or a test run often are);
- `python_work`: one process doing ordinary Python work at normal priority (JSON, regular expressions, sorting:
  a unit test, a scoring script).

Thread settings (`llm.server.threads`, `llm.server.threads_batch`):
- `all`: threads = every core (what threads: 0 gives);
- `minus1`: threads = cores - 1 for generation and prompts;
- `split`: llama.cpp's batch-thread split, threads = cores - 1 for generation, threads_batch = every core for
  prompts.

A measurement: K requests at once (a ~300-word prompt each, drawn per request so the prompt cache does not carry
it; `--tokens` generated with `ignore_eos`), against the server of one setting (started once per setting, warmed
up). Reported per cell: generated tok/s (all generated tokens / wall), the median and p90 seconds per generated
token of a request, and the slowdown against the same setting idle; the median of `--repeats` (the loads rotate
within a repeat, so drift falls on all of them). The settings run one after another: run it on an otherwise idle
machine (the load average is recorded at the start and the end).

    python benchmarks/server_load.py [--repeats 3] [--requests 8] [--tokens 96]
    python benchmarks/server_load.py --smoke        # a minute or two: proves it runs, measures nothing
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"

from worldsmith.llm.packaged import packaged_gguf  # noqa: E402
from worldsmith.llm.server import CHAT_TEMPLATE  # noqa: E402

WORDS = ("order", "customer", "refund", "ticket", "booking", "seat", "flight", "account", "loan", "invoice", "status")

LOADS = {
    "idle": None,
    "cpu_loop": ["nice", "-n", "10", sys.executable, "-c", "while True: pass"],
    "python_work": [
        sys.executable,
        "-c",
        "import json, re, random\n"
        "rng = random.Random(0)\n"
        "while True:\n"
        "    rows = [{'id': i, 'name': ''.join(rng.choice('abcdefgh ') for _ in range(40))} for i in range(2000)]\n"
        "    text = json.dumps(rows)\n"
        "    rows = json.loads(text)\n"
        "    words = re.findall(r'[a-h]+', text)\n"
        "    words.sort()\n",
    ],
}


def settings(cores: int) -> dict[str, tuple[int, int]]:
    """(threads, threads_batch) per setting name."""
    less = max(1, cores - 1)
    return {"all": (cores, cores), "minus1": (less, less), "split": (less, cores)}


def serve(port: int, slots: int, threads: int, threads_batch: int, log: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "worldsmith.llm.llamacpp_server", "--model", str(packaged_gguf()), "--alias", "m"]
    cmd += ["--port", str(port), "--parallel", str(slots), "--ctx-size", str(slots * 2048)]
    cmd += ["--threads", str(threads), "--threads-batch", str(threads_batch), "--chat-template", str(CHAT_TEMPLATE)]
    proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT)
    for _ in range(240):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            return proc
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError(f"the server did not start; see {log}")


def request(url: str, seed: int, tokens: int, prompt_words: int) -> dict:
    rng = random.Random(seed)
    words = " ".join(rng.choice(WORDS) for _ in range(prompt_words))
    body = {
        "model": "m",
        "messages": [{"role": "system", "content": words}, {"role": "user", "content": f"Case {seed}: go on."}],
        "max_tokens": tokens,
        "temperature": 0.3,
        "seed": seed,
        "ignore_eos": True,
    }
    req = urllib.request.Request(
        f"{url}/v1/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    t0 = time.perf_counter()
    out = json.loads(urllib.request.urlopen(req, timeout=1800).read())
    seconds = time.perf_counter() - t0
    generated = out["usage"]["completion_tokens"]
    return {"seconds": seconds, "generated": generated, "prompt_n": out.get("timings", {}).get("prompt_n", 0)}


def measure(url: str, requests: int, tokens: int, prompt_words: int, seed0: int) -> dict:
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(requests) as pool:
        each = list(pool.map(lambda i: request(url, seed0 + i, tokens, prompt_words), range(requests)))
    wall = time.perf_counter() - t0
    generated = sum(e["generated"] for e in each)
    per_token = sorted(e["seconds"] / max(e["generated"], 1) for e in each)
    return {
        "wall_s": round(wall, 2),
        "generated": generated,
        "prompt_tokens": sum(e["prompt_n"] for e in each),
        "gen_tok_s": round(generated / wall, 2),
        "s_per_token_median": round(statistics.median(per_token), 4),
        "s_per_token_p90": round(per_token[min(len(per_token) - 1, int(0.9 * len(per_token)))], 4),
    }


def with_load(name: str, run):
    """`run()` while the load `name` runs beside it (started a second before, so it is on a core)."""
    cmd = LOADS[name]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) if cmd else None
    try:
        if proc:
            time.sleep(1.0)
        return run()
    finally:
        if proc:
            proc.kill()
            proc.wait(10)


def table(summary: dict[str, dict[str, dict]], cores: int) -> str:
    """Markdown: a row per setting, generated tok/s per load and the slowdown against its idle."""
    loads = list(LOADS)
    head = "| setting (threads / batch) | " + " | ".join(loads) + " | worst slowdown |"
    rows = [head, "|---|" + "---:|" * (len(loads) + 1)]
    for name, (threads, batch) in settings(cores).items():
        cells = summary.get(name)
        if not cells:
            continue
        parts = []
        for load in loads:
            c = cells[load]
            slow = f" ({c['slowdown']:.2f}x)" if load != "idle" else ""
            parts.append(f"{c['gen_tok_s']:.1f} tok/s{slow}")
        worst = max(cells[load]["slowdown"] for load in loads if load != "idle")
        rows.append(f"| {name} ({threads} / {batch}) | " + " | ".join(parts) + f" | {worst:.2f}x |")
    return "\n".join(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--requests", type=int, default=8, help="at once, and the server's slots (the pipeline's 8)")
    p.add_argument("--tokens", type=int, default=96, help="generated per request")
    p.add_argument("--prompt-words", type=int, default=300)
    p.add_argument("--port", type=int, default=8098)
    p.add_argument("--settings", default="all,minus1,split")
    p.add_argument("--loads", default=",".join(LOADS))
    p.add_argument("--out", type=Path, default=RESULTS / "server_load.json")
    p.add_argument("--smoke", action="store_true", help="1 repeat, 2 requests of 8 tokens: proves it runs")
    args = p.parse_args()
    if args.smoke:
        args.repeats, args.requests, args.tokens, args.prompt_words = 1, 2, 8, 60
        if args.out == RESULTS / "server_load.json":
            args.out = Path(tempfile.gettempdir()) / "server_load-smoke.json"
    cores = os.cpu_count() or 1
    chosen = {k: v for k, v in settings(cores).items() if k in args.settings.split(",")}
    loads = [load for load in LOADS if load in args.loads.split(",")]
    machine = {"cores": cores, "loadavg_start": [round(x, 2) for x in os.getloadavg()]}
    print(json.dumps({"machine": machine, "settings": chosen, "loads": loads}), flush=True)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (threads, batch) in chosen.items():
            proc = serve(args.port, args.requests, threads, batch, Path(tmp) / f"server-{name}.log")
            url = f"http://127.0.0.1:{args.port}"
            try:
                measure(url, args.requests, 8, args.prompt_words, 10**6)  # warm-up: weights paged in
                for repeat in range(args.repeats):
                    order = loads[repeat % len(loads) :] + loads[: repeat % len(loads)]  # rotate: drift falls on all
                    for load in order:
                        seed0 = 1000 * repeat + 100 * loads.index(load)
                        cell = with_load(
                            load, lambda s=seed0, u=url: measure(u, args.requests, args.tokens, args.prompt_words, s)
                        )
                        where = {"setting": name, "threads": threads, "threads_batch": batch, "load": load}
                        runs.append({**where, "repeat": repeat, **cell})
                        print(json.dumps(runs[-1]), flush=True)
            finally:
                proc.terminate()
                proc.wait(30)
    machine["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    summary: dict[str, dict[str, dict]] = {}
    for name in chosen:
        summary[name] = {}
        for load in loads:
            mine = [r for r in runs if r["setting"] == name and r["load"] == load]
            summary[name][load] = {
                "gen_tok_s": statistics.median(r["gen_tok_s"] for r in mine),
                "gen_tok_s_range": [min(r["gen_tok_s"] for r in mine), max(r["gen_tok_s"] for r in mine)],
                "s_per_token_median": statistics.median(r["s_per_token_median"] for r in mine),
                "s_per_token_p90": statistics.median(r["s_per_token_p90"] for r in mine),
            }
        idle = summary[name].get("idle", {}).get("gen_tok_s")
        for load in loads:
            cell = summary[name][load]
            cell["slowdown"] = round(idle / cell["gen_tok_s"], 2) if idle and cell["gen_tok_s"] else None
    md = table(summary, cores) if "idle" in loads and len(loads) > 1 else ""
    out = {"args": {k: str(v) for k, v in vars(args).items()}, "machine": machine, "runs": runs, "summary": summary}
    out["table"] = md
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(md or json.dumps(summary, indent=2))
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
