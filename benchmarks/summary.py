"""The headline figure of every benchmark in benchmarks/results/, with its goal: what
`make bench` ends with.

    python benchmarks/summary.py
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

RESULTS = Path(__file__).resolve().parent / "results"


def load(name: str) -> dict | None:
    p = RESULTS / name
    return json.loads(p.read_text()) if p.exists() else None


def rows() -> list[tuple[str, str, str, str]]:
    out: list[tuple[str, str, str, str]] = []
    for name in ("rollouts-vllm.json", "rollouts.json"):
        r = load(name)
        if not r:
            continue
        u, o = r.get("utilisation") or {}, r["overhead"]
        engine = u.get("engine", "llamacpp")
        if u:
            out.append((f"engine utilisation ({engine})", f"{u['utilisation']} ({u['stage_tok_s']} ÷ {u['saturation_tok_s']} tok/s)", "≥ 0.9", name))
            out.append((f"prefix-cache hit rate ({engine})", str(u.get("prefix_cache_hit_rate")), "high (shared system prompt + tools)", name))
        out.append(("pipeline CPU per episode", f"{o['cpu_ms_per_episode']} ms", "", name))
        if "share_of_episode_wall" in o:
            out.append((f"overhead share of an episode's wall time ({engine})", f"{o['share_of_episode_wall']:.3%}", "< 2 %", name))
    y = load("yield_cost.json")
    if y:
        out.append(("kept examples per 1M generated tokens", f"{y['kept_per_1m_generated_tokens']} ({y['kept_examples']} kept, run {y['run']})", "higher is better", "yield_cost.json"))
        for role, r in y["by_role"].items():
            out.append((f"tokens per kept example: {role}", "n/a (nothing kept)" if r["tokens_per_kept_example"] is None else f"{r['tokens_per_kept_example']:,}", "", "yield_cost.json"))
    d = load("data_scale.json")
    if d:
        q = d.get("queries", {})
        rows_n = d.get("args", {}).get("rows")
        out.append((f"report queries over {rows_n:,} trajectory rows", f"{sum(v['seconds'] for v in q.values()):.1f} s in all ({len(q)} queries)", "seconds", "data_scale.json"))
        for key, value in (d.get("export") or {}).items():
            if isinstance(value, (int, float)) and ("rss" in key or "ratio" in key or key.endswith("_s")):
                out.append((f"export: {key}", str(value), "flat memory: ratio ≈ 1" if "ratio" in key else "", "data_scale.json"))
    f = load("finetune.json")
    if f:
        out.append(("Muon step ÷ AdamW step (SmolLM2-135M)", str(f["muon_step_over_adamw"]), "GPU ≤ 1.15 (CPU: fp32 Newton–Schulz)", "finetune.json"))
        out.append(("val loss after the steps: AdamW / Muon", f"{f['adamw']['val_loss']} / {f['muon']['val_loss']}", "", "finetune.json"))
    return out


def main() -> None:
    t = Table(title="worldsmith benchmarks (benchmarks/results/)", title_justify="left")
    for c in ("figure", "value", "goal", "file"):
        t.add_column(c, overflow="fold")
    for r in rows():
        t.add_row(*r)
    Console().print(t)


if __name__ == "__main__":
    main()
