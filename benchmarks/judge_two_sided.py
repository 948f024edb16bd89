"""The judge measured two-sided, on the labelled judge set (tests/data/judge_set/): the default
policy's precision (of the episodes it keeps, the share labelled good) and recall (of the good
episodes, the share it keeps) per part, and each hack check alone as a detector: on how many good
and bad episodes it fires, its precision (of the episodes it flags, the share labelled bad)
against the base rate (the share of bad episodes in the part).

Parts: `a` the default policy's (SmolLM2-135M) episodes of a `make synth` run, labelled by hand;
`b` / `c` good and bad episodes of the kinds a capable model writes, the judge's dev set;
`b-heldout` / `c-heldout` and `-heldout2` the same kinds written after the judge's fixes, by someone who
did not read the judge, each scored blind once (the first set then served as dev, see
benchmarks/README.md). Labels were set before the judge ran and are never edited to match it.

    python benchmarks/judge_two_sided.py [--json benchmarks/results/judge_two_sided.json] [--plot PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "tests" / "data" / "judge_set"
RESULTS = ROOT / "benchmarks" / "results"
for p in (str(ROOT / "src"), str(SET)):
    if p not in sys.path:
        sys.path.insert(0, p)

from score import load  # noqa: E402  (tests/data/judge_set/score.py)

from worldsmith.config import JudgeConfig  # noqa: E402
from worldsmith.judge.hacks import find_hacks  # noqa: E402
from worldsmith.judge.stage import decide  # noqa: E402
from worldsmith.records import Task, Trajectory  # noqa: E402
from worldsmith.vocab import HACK_KINDS  # noqa: E402


def judge_all(rows: list[dict]) -> list[dict]:
    """Each labelled episode with the default policy's verdict and every hack kind found."""
    cfg = JudgeConfig()
    out = []
    for row in rows:
        task, traj = Task.model_validate(row["task"]), Trajectory.model_validate(row["trajectory"])
        verdict = decide(cfg, task, traj, None)
        out.append(
            {
                "id": row["id"],
                "part": row["part"],
                "label": row["label"],
                "reason": row.get("reason"),
                "kept": verdict.passed,
                "reasons": verdict.reasons,
                "hacks": sorted({h.kind for h in find_hacks(traj)}),
            }
        )
    return out


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 3) if den else None


# where each part came from: a capable model's good and bad parts are read together, since a part of
# one label alone has no precision to speak of (nothing kept) or no recall (nothing good)
SOURCES = {
    "default policy (a)": ("a",),
    "capable, dev (b + c)": ("b", "c"),
    "capable, held-out": ("b-heldout", "c-heldout"),
    "capable, held-out 2": ("b-heldout2", "c-heldout2"),
}


def figures(judged: list[dict]) -> dict[str, dict]:
    """Per part, per source and over all: the policy's precision and recall, and each hack check alone."""
    present = sorted({j["part"] for j in judged})
    groups = {p: (p,) for p in present}
    groups |= {name: ps for name, ps in SOURCES.items() if set(ps) & set(present) and len(ps) > 1}
    groups["all"] = tuple(present)
    parts: dict[str, dict] = {}
    for part, members in groups.items():
        js = [j for j in judged if j["part"] in members]
        good = [j for j in js if j["label"] == "good"]
        bad = [j for j in js if j["label"] == "bad"]
        kept_good, kept_bad = sum(j["kept"] for j in good), sum(j["kept"] for j in bad)
        checks = {}
        for kind in HACK_KINDS:
            fires = defaultdict(int)
            for j in js:
                if kind in j["hacks"]:
                    fires[j["label"]] += 1
            checks[kind] = {
                "fires_good": fires["good"],
                "fires_bad": fires["bad"],
                "precision": _ratio(fires["bad"], fires["good"] + fires["bad"]),
                "recall": _ratio(fires["bad"], len(bad)),
            }
        parts[part] = {
            "n": len(js),
            "good": len(good),
            "bad": len(bad),
            "kept_good": kept_good,
            "kept_bad": kept_bad,
            "precision": _ratio(kept_good, kept_good + kept_bad),
            "recall": _ratio(kept_good, len(good)),
            "base_rate_bad": _ratio(len(bad), len(js)),
            "checks": checks,
        }
    return parts


def table(parts: dict[str, dict]) -> str:
    lines = [
        "| part | episodes | good | bad | kept good | kept bad | precision | recall |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for part, s in parts.items():
        lines.append(
            f"| {part} | {s['n']} | {s['good']} | {s['bad']} | {s['kept_good']} | {s['kept_bad']} "
            f"| {_show(s['precision'])} | {_show(s['recall'])} |"
        )
    lines += [
        "",
        "each hack check alone, as a detector (fires on good = a good episode it would drop):",
        "",
        "| part | check | fires on good | fires on bad | precision | recall on bad | base rate |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for part, s in parts.items():
        for kind, c in s["checks"].items():
            if c["fires_good"] or c["fires_bad"]:
                lines.append(
                    f"| {part} | {kind} | {c['fires_good']} | {c['fires_bad']} | {_show(c['precision'])} "
                    f"| {_show(c['recall'])} | {_show(s['base_rate_bad'])} |"
                )
    return "\n".join(lines)


def _show(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def plot(parts: dict[str, dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [p for p in parts if p in SOURCES or p == "all"]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    width = 0.38
    xs = range(len(names))
    for offset, key, color in ((-width / 2, "precision", "#4c78a8"), (width / 2, "recall", "#f58518")):
        values = [parts[p][key] if parts[p][key] is not None else 0 for p in names]
        ax.bar([x + offset for x in xs], values, width, label=key, color=color)
        for x, p, v in zip(xs, names, values, strict=True):
            if parts[p][key] is None:
                ax.text(x + offset, 0.02, "n/a", ha="center", fontsize=7)
            else:
                ax.text(x + offset, v + 0.01, f"{v:.2f}", ha="center", fontsize=7)
    ax.set_xticks(list(xs), [f"{p}\n({parts[p]['good']} good, {parts[p]['bad']} bad)" for p in names], fontsize=8)
    ax.set_ylim(0, 1.12)
    ax.set_title("the default judge policy on labelled episodes, by source")
    ax.legend(loc="lower right", fontsize=8)
    fig.savefig(path, bbox_inches="tight", dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, default=RESULTS / "judge_two_sided.json")
    ap.add_argument("--plot", type=Path, default=RESULTS / "judge_two_sided.png")
    ap.add_argument("-v", "--verbose", action="store_true", help="list dropped good and kept bad episodes")
    args = ap.parse_args()
    judged = judge_all(load())
    parts = figures(judged)
    print(table(parts))
    if args.verbose:
        for j in judged:
            if j["kept"] != (j["label"] == "good"):
                print(f"{'dropped good' if j['label'] == 'good' else 'kept bad'} {j['part']} {j['id']}: {j['reasons']}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"parts": parts, "episodes": judged}, indent=1) + "\n")
    plot(parts, args.plot)
    print(f"\nwrote {args.json} and {args.plot}")


if __name__ == "__main__":
    main()
