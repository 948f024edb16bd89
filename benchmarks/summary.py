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
            out.append(
                (
                    f"engine utilisation ({engine})",
                    f"{u['utilisation']} ({u['stage_tok_s']} ÷ {u['saturation_tok_s']} tok/s)",
                    "≥ 0.9",
                    name,
                )
            )
            if u.get("steady_utilisation") is not None:
                out.append(
                    (
                        f"engine utilisation, steady state ({engine})",
                        f"{u['steady_utilisation']} ({u['steady_tok_s']} tok/s while every slot had an episode)",
                        "≥ 0.9",
                        name,
                    )
                )
            out.append(
                (
                    f"prefix-cache hit rate ({engine})",
                    str(u.get("prefix_cache_hit_rate")),
                    "high (shared system prompt + tools)",
                    name,
                )
            )
        out.append(("pipeline CPU per episode", f"{o['cpu_ms_per_episode']} ms", "", name))
        if "share_of_episode_wall" in o:
            out.append(
                (
                    f"overhead share of an episode's wall time ({engine})",
                    f"{o['share_of_episode_wall']:.3%}",
                    "< 2 %",
                    name,
                )
            )
    y = load("yield_cost.json")
    if y:
        out.append(
            (
                "kept examples per 1M generated tokens",
                f"{y['kept_per_1m_generated_tokens']} ({y['kept_examples']} kept, run {y['run']})",
                "higher is better",
                "yield_cost.json",
            )
        )
        for role, r in y["by_role"].items():
            out.append(
                (
                    f"tokens per kept example: {role}",
                    "n/a (nothing kept)"
                    if r["tokens_per_kept_example"] is None
                    else f"{r['tokens_per_kept_example']:,}",
                    "",
                    "yield_cost.json",
                )
            )
    d = load("data_scale.json")
    if d:
        n = d["args"]["rows"]
        out.append(
            (
                f"report queries over {n:,} trajectory rows",
                f"{d['queries_total_s']} s in all ({len(d['queries'])} queries); report {d['build_report_s']} s",
                "seconds",
                "data_scale.json",
            )
        )
        for e in d["export"]:
            out.append(
                (
                    f"export {e['kept']:,} kept ({e['variant']})",
                    f"{e['seconds']} s, peak RSS {e['peak_rss_mb']} MB",
                    "",
                    "data_scale.json",
                )
            )
        for variant, f in d["export_flatness"].items():
            out.append(
                (
                    f"export peak RSS 100k ÷ 10k ({variant})",
                    f"{f['peak_rss_ratio']} ({f['kb_per_extra_example']} kB per extra example)",
                    "flat ≈ 1",
                    "data_scale.json",
                )
            )
    f = load("finetune.json")
    if f:
        out.append(
            (
                "Muon step ÷ AdamW step (SmolLM2-135M)",
                str(f["muon_step_over_adamw"]),
                "GPU ≤ 1.15 (CPU: fp32 Newton–Schulz)",
                "finetune.json",
            )
        )
        out.append(
            (
                "val loss after the steps: AdamW / Muon",
                f"{f['adamw']['val_loss']} / {f['muon']['val_loss']}",
                "",
                "finetune.json",
            )
        )
        if "qk_clip_step_over_muon" in f:
            q = f["muon_qk_clip"]
            out.append(
                (
                    "QK-clip step ÷ Muon step (SmolLM2-135M)",
                    f"{f['qk_clip_step_over_muon']} (largest logit {max(q['max_logits'])}, "
                    f"{q['clipped_heads']} head rescales at tau {q['qk_clip_tau']:g})",
                    "small",
                    "finetune.json",
                )
            )
    pp = load("policy_probe.json")
    if pp:
        out.append(
            (
                "policy probe: order-world episodes passing the judge",
                f"{pp['passed']} of {pp['episodes']} ({pp['by_task']})",
                "> 0 for a model that can be the agent",
                "policy_probe.json",
            )
        )
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
