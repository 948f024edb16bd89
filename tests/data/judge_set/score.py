"""Score the judge on the labelled judge set: every *.jsonl in this folder.

For each part: n, good/bad counts, kept good, kept bad, precision (of the kept, the share
labelled good), recall (of the good, the share kept), and for each reason the judge gives, on
how many good and how many bad episodes it fires. `--json OUT` writes the figures.

    .venv/bin/python tests/data/judge_set/score.py [--json OUT] [--show-good-drops]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

from worldsmith.config import JudgeConfig
from worldsmith.judge.episode import decide
from worldsmith.records import Task, Trajectory

HERE = Path(__file__).resolve().parent


def load() -> list[dict]:
    rows = []
    for path in sorted(HERE.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                row["file"] = path.name
                rows.append(row)
    return rows


def score(rows: list[dict], policy: str = "strict") -> tuple[dict, list[dict]]:
    cfg = JudgeConfig(unverifiable=policy)
    per_part: dict[str, dict] = {}
    judged = []
    for row in rows:
        v = decide(cfg, Task.model_validate(row["task"]), Trajectory.model_validate(row["trajectory"]), None)
        judged.append(
            {
                "id": row["id"],
                "part": row["part"],
                "label": row["label"],
                "reason": row.get("reason"),
                "kept": v.passed,
                "reasons": v.reasons,
                "claims": [f"{c.status[:6]} {c.kind}: {c.text[:90]!r} | {c.why[:120]}" for c in v.claims],
            }
        )
    for part in sorted({j["part"] for j in judged} | {"all"}):
        js = [j for j in judged if part == "all" or j["part"] == part]
        good = [j for j in js if j["label"] == "good"]
        bad = [j for j in js if j["label"] == "bad"]
        kept_good = sum(j["kept"] for j in good)
        kept_bad = sum(j["kept"] for j in bad)
        fires: dict[str, Counter] = defaultdict(Counter)
        for j in js:
            for r in dict.fromkeys(j["reasons"]):
                fires[r][j["label"]] += 1
        by_label_reason: dict[str, dict[str, int]] = {}
        for j in bad:
            d = by_label_reason.setdefault(j["reason"] or "none", {"n": 0, "caught": 0})
            d["n"] += 1
            d["caught"] += not j["kept"]
        per_part[part] = {
            "n": len(js),
            "good": len(good),
            "bad": len(bad),
            "kept_good": kept_good,
            "kept_bad": kept_bad,
            "precision": round(kept_good / (kept_good + kept_bad), 3) if kept_good + kept_bad else None,
            "recall": round(kept_good / len(good), 3) if good else None,
            "bad_caught_by_label_reason": by_label_reason,
            "judge_reasons": {r: {"good": c["good"], "bad": c["bad"]} for r, c in sorted(fires.items())},
        }
    return per_part, judged


def show(per_part: dict) -> None:
    for part, s in per_part.items():
        print(
            f"== part {part}: n={s['n']} good={s['good']} bad={s['bad']} kept_good={s['kept_good']} "
            f"kept_bad={s['kept_bad']} precision={s['precision']} recall={s['recall']}"
        )
        if s["bad_caught_by_label_reason"]:
            print("   bad episodes caught (dropped), by labelled reason:")
            for r, d in sorted(s["bad_caught_by_label_reason"].items()):
                print(f"     {r:<26} {d['caught']:>3}/{d['n']}")
        if s["judge_reasons"]:
            print(f"   {'judge reason':<40} {'good':>5} {'bad':>5}")
            for r, c in s["judge_reasons"].items():
                print(f"   {r:<40} {c['good']:>5} {c['bad']:>5}")
        print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write the figures (and each episode's verdict) here")
    ap.add_argument("--show-good-drops", action="store_true", help="list each dropped good episode with its reasons")
    ap.add_argument("--policy", default="strict", choices=["strict", "critic", "lenient"], help="judge.unverifiable")
    ap.add_argument("--parts", help="comma-separated parts to score (default: all)")
    args = ap.parse_args()
    rows = load()
    if args.parts:
        rows = [r for r in rows if r["part"] in args.parts.split(",")]
    per_part, judged = score(rows, args.policy)
    show(per_part)
    if args.show_good_drops:
        for j in judged:
            if j["label"] == "good" and not j["kept"]:
                print(f"dropped good {j['id']}: {', '.join(j['reasons'])}")
                for c in j.get("claims", [])[:3]:
                    print(f"     {c}")
            if j["label"] == "bad" and j["kept"]:
                print(f"kept bad {j['id']} ({j['reason']})")
    if args.json:
        args.json.write_text(json.dumps({"parts": per_part, "episodes": judged}, indent=1))


if __name__ == "__main__":
    main()
