"""Yield and cost of a finished run: kept SFT examples per 1M generated tokens, and tokens per
kept example by role and by stage (from the usage each stage records in run.json).

    python benchmarks/yield_cost.py [--run RUN_ID] [--data data]     # default: the latest finished synth run
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from worldsmith.store import query  # noqa: E402


def latest_synth_run(data: Path) -> str | None:
    _, rows = query(
        data,
        "SELECT run_id FROM runs WHERE status = 'finished' AND run_id NOT LIKE '%-eval-%' "
        "AND stages->'export' IS NOT NULL "
        "ORDER BY finished_at DESC LIMIT 1",
    )
    return rows[0][0] if rows else None


def figures(data: Path, run: str) -> dict:
    _, rows = query(data, f"SELECT stages, usage FROM runs WHERE run_id = '{run}'")
    if not rows:
        raise SystemExit(f"no run {run!r} in {data}")
    stages, usage = (json.loads(v) if isinstance(v, str) else v for v in rows[0])
    kept = query(data, f"SELECT count(*) FROM sft WHERE run_id = '{run}'")[1][0][0]
    trajectories = query(data, f"SELECT count(*) FROM trajectories WHERE run_id = '{run}'")[1][0][0]
    per_example = lambda n: round(n / kept) if kept else None  # noqa: E731
    generated = sum(u.get("completion_tokens", 0) for u in usage.values())
    roles = {
        role: {
            "calls": u["calls"],
            "prompt_tokens": u["prompt_tokens"],
            "cached_share": round(u.get("cached_tokens", 0) / max(u["prompt_tokens"], 1), 3),
            "completion_tokens": u["completion_tokens"],
            "tokens_per_kept_example": per_example(u["prompt_tokens"] + u["completion_tokens"]),
        }
        for role, u in sorted(usage.items())
    }
    by_stage = {}
    for name, st in stages.items():
        u = st.get("usage") or {}
        p, c = sum(x["prompt_tokens"] for x in u.values()), sum(x["completion_tokens"] for x in u.values())
        by_stage[name] = {
            "seconds": st.get("seconds"),
            "prompt_tokens": p,
            "completion_tokens": c,
            "tokens_per_kept_example": per_example(p + c),
            "roles": sorted(u),
        }
    return {
        "run": run,
        "trajectories": trajectories,
        "kept_examples": kept,
        "generated_tokens": generated,
        "kept_per_1m_generated_tokens": round(kept / max(generated, 1) * 1e6, 2),
        "by_role": roles,
        "by_stage": by_stage,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", default=None)
    p.add_argument("--data", default=str(ROOT / "data"))
    a = p.parse_args()
    data = Path(a.data)
    run = a.run or latest_synth_run(data)
    if not run:
        raise SystemExit("no finished synth run with an export yet: run `make synth` first")
    f = figures(data, run)
    console = Console()
    console.print(
        f"run {run}: {f['kept_examples']} kept of {f['trajectories']} trajectories; "
        f"{f['generated_tokens']:,} generated tokens; "
        f"[bold]{f['kept_per_1m_generated_tokens']}[/bold] kept examples per 1M generated tokens"
    )
    for title, rows, cols in (
        (
            "by role",
            f["by_role"],
            ["calls", "prompt_tokens", "cached_share", "completion_tokens", "tokens_per_kept_example"],
        ),
        (
            "by stage",
            f["by_stage"],
            ["seconds", "prompt_tokens", "completion_tokens", "tokens_per_kept_example", "roles"],
        ),
    ):
        t = Table(title=title, title_justify="left")
        for c in ["", *cols]:
            t.add_column(c)
        for name, r in rows.items():
            t.add_row(
                name,
                *[
                    ", ".join(r[c])
                    if isinstance(r[c], list)
                    else ("n/a" if r[c] is None else f"{r[c]:,}" if isinstance(r[c], int) else str(r[c]))
                    for c in cols
                ],
            )
        console.print(t)
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "yield_cost.json").write_text(
        json.dumps({"measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"), **f}, indent=1) + "\n"
    )


if __name__ == "__main__":
    main()
