"""The embedded llama.cpp server's KV cache: one cache shared by all slots (`--kv-unified`) or one stream per
slot (the default), on the same multi-turn load.

K conversations at once, each T turns (a ~600-word system prompt, then a reply of `--reply-tokens` generated
tokens with `ignore_eos` and ~120 new words from the user a turn: the shape of an agent episode), against a fresh
server with K slots per repeat; the two layouts alternate, so drift on a shared machine falls on both. Reported:
wall seconds per repeat, generated tok/s, and the prompt tokens evaluated vs. taken from the cache.

    python benchmarks/kv_cache.py [--conversations 8] [--turns 6] [--repeats 3]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
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


def serve(port: int, slots: int, ctx_per_slot: int, unified: bool, log: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "worldsmith.llm.llamacpp_server", "--model", str(packaged_gguf()), "--alias", "m"]
    cmd += ["--port", str(port), "--parallel", str(slots), "--ctx-size", str(slots * ctx_per_slot)]
    cmd += ["--chat-template", str(CHAT_TEMPLATE)] + (["--kv-unified"] if unified else [])
    proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT)
    for _ in range(240):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError(f"the server did not start; see {log}")


def conversation(url: str, k: int, turns: int, reply_tokens: int) -> dict:
    rng = random.Random(k)

    def words(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    messages = [{"role": "system", "content": words(600)}, {"role": "user", "content": words(40)}]
    got = {"prompt_n": 0, "cache_n": 0, "generated": 0}
    for turn in range(turns):
        body = {"model": "m", "messages": messages, "max_tokens": reply_tokens, "temperature": 0.3}
        body |= {"ignore_eos": True, "seed": k * 100 + turn}
        headers = {"Content-Type": "application/json"}
        req = urllib.request.Request(f"{url}/v1/chat/completions", json.dumps(body).encode(), headers)
        out = json.loads(urllib.request.urlopen(req, timeout=900).read())
        got["prompt_n"] += out["timings"]["prompt_n"]
        got["cache_n"] += out["timings"]["cache_n"]
        got["generated"] += out["usage"]["completion_tokens"]
        reply = out["choices"][0]["message"]["content"] or "ok"
        messages = messages + [{"role": "assistant", "content": reply}, {"role": "user", "content": words(120)}]
    return got


def one(port: int, args: argparse.Namespace, unified: bool, logs: Path) -> dict:
    proc = serve(port, args.conversations, args.ctx_per_slot, unified, logs / f"server-{int(unified)}.log")
    try:
        url = f"http://127.0.0.1:{port}"
        conversation(url, 10_000, 1, 8)  # warm-up: weights paged in, graphs built
        start = time.perf_counter()
        with cf.ThreadPoolExecutor(args.conversations) as pool:
            ks = range(args.conversations)
            each = list(pool.map(lambda k: conversation(url, k, args.turns, args.reply_tokens), ks))
        wall = time.perf_counter() - start
    finally:
        proc.terminate()
        proc.wait(30)
    total = {key: sum(e[key] for e in each) for key in each[0]}
    return {"kv_unified": unified, "wall_s": round(wall, 1), "gen_tok_s": round(total["generated"] / wall, 1), **total}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--conversations", type=int, default=8, help="at once, and the server's slots")
    p.add_argument("--turns", type=int, default=6)
    p.add_argument("--reply-tokens", type=int, default=50)
    p.add_argument("--ctx-per-slot", type=int, default=4096)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--port", type=int, default=8097)
    args = p.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            for unified in (True, False):
                runs.append({"repeat": repeat, **one(args.port, args, unified, Path(tmp))})
                print(json.dumps(runs[-1]), flush=True)
    summary = {}
    for unified in (True, False):
        walls = [r["wall_s"] for r in runs if r["kv_unified"] is unified]
        name = "unified" if unified else "per_slot"
        summary[name] = {"wall_s_median": statistics.median(walls), "wall_s_range": [min(walls), max(walls)]}
    ratio = [u["wall_s"] / s["wall_s"] for u, s in zip(runs[::2], runs[1::2], strict=True)]
    summary["unified_over_per_slot"] = {
        "median": round(statistics.median(ratio), 3),
        "range": [round(min(ratio), 3), round(max(ratio), 3)],
    }
    out = {"args": vars(args), "runs": runs, "summary": summary}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "kv_cache.json").write_text(json.dumps(out, indent=2) + "\n")
    plot(runs, RESULTS / "kv_cache.png")
    print(json.dumps(summary, indent=2))


def plot(runs: list[dict], path: Path) -> None:
    """Wall seconds of each repeat, by layout: the figure and its spread in one picture."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    for x, unified in enumerate((True, False)):
        walls = [r["wall_s"] for r in runs if r["kv_unified"] is unified]
        ax.scatter([x] * len(walls), walls, color="C0" if unified else "C2", zorder=3)
        ax.hlines(statistics.median(walls), x - 0.2, x + 0.2, color="black")
    ax.set_xticks([0, 1], ["one cache for all slots\n(--kv-unified)", "one stream per slot\n(the default)"])
    ax.set_xlim(-0.6, 1.6)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("wall seconds (lower is better)")
    ax.set_title("the same multi-turn load on a fresh llama.cpp server", fontsize=10)
    fig.savefig(path, bbox_inches="tight", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
