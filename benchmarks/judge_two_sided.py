"""The judge measured two-sided, on the labelled judge set (tests/data/judge_set/): the default
policy's precision (of the episodes it keeps, the share labelled good) and recall (of the good
episodes, the share it keeps) per part, and each hack check alone as a detector: on how many good
and bad episodes it fires, its precision (of the episodes it flags, the share labelled bad)
against the base rate (the share of bad episodes in the part).

Parts: `a` the default policy's (SmolLM2-135M) episodes of a `make synth` run, labelled by hand;
`a2` its episodes of a test_synth run at 19aca93 (prose replies), labelled by hand before this judge ran;
`a3` its 105 episodes of a default `make synth` run at 5da28f3 (seed 1234), labelled by hand;
`a4` the 17 episodes the judge of b6dc17f kept in a default run at that commit (M4), labelled by reading;
`b` / `c` good and bad episodes of the kinds a capable model writes, the judge's dev set;
`b-heldout` / `c-heldout` and `-heldout2` the same kinds written after the judge's fixes, by someone who
did not read the judge, each scored blind once (the first set then served as dev, see
benchmarks/README.md). Labels were set before the judge ran and are never edited to match it.

With `--before REV` (default 7f1c641, the last judge of rules before the claim layer) the same
episodes are judged by the code at REV too (a git worktree, its default policy), so the table and
the plot show both in one run; `--no-before` skips it.

    python benchmarks/judge_two_sided.py [--before REV | --no-before] [--json PATH] [--plot PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
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
from worldsmith.judge.episode import decide  # noqa: E402
from worldsmith.records import Task, Trajectory  # noqa: E402
from worldsmith.vocab import HACK_KINDS  # noqa: E402

# the policy each side runs: the small default policy's episodes under `strict` (the packaged default), a capable
# model's under `lenient` (what a GPU user runs with no critic); `both` scores every part under each
POLICY_OF = {"default": "strict", "capable": "lenient"}


def side(part: str) -> str:
    """Whose episodes a part holds: the default policy's (a, a2, ...) or a capable model's (b, c, cap-blind, ...)."""
    return "default" if part == "a" or (part.startswith("a") and part[1:].isdigit()) else "capable"


def judge_all(rows: list[dict], policy: str | None = None) -> list[dict]:
    """Each labelled episode with the verdict of `policy` (None: the policy its side runs) and every finding."""
    cfgs = {p: JudgeConfig(unverifiable=p) for p in ("strict", "critic", "lenient")}
    out = []
    for row in rows:
        task, traj = Task.model_validate(row["task"]), Trajectory.model_validate(row["trajectory"])
        chosen = policy or POLICY_OF[side(row["part"])]
        verdict = decide(cfgs[chosen], task, traj, None)
        out.append(
            {
                "id": row["id"],
                "part": row["part"],
                "label": row["label"],
                "reason": row.get("reason"),
                "policy": chosen,
                "kept": verdict.passed,
                "reasons": verdict.reasons,
                "hacks": sorted({h.kind for h in verdict.hacks}),
            }
        )
    return out


# run by the code at another revision: the labelled episodes judged by its default policy (fields
# its records do not know, such as a criterion's `declines`, are left out)
BEFORE_SCRIPT = """
import json, sys
from worldsmith.config import JudgeConfig
try:
    from worldsmith.judge.episode import decide
except ImportError:  # before the judge was one package
    from worldsmith.judge.stage import decide
from worldsmith.records import Criterion, Task, Trajectory
known = set(Criterion.model_fields)
out = []
for line in sys.stdin:
    row = json.loads(line)
    task = row["task"]
    for c in task["rubric"]["criteria"]:
        for k in [k for k in c if k not in known]:
            del c[k]
    try:
        task, traj = Task.model_validate(task), Trajectory.model_validate(row["trajectory"])
    except ValueError:  # a record newer than that code: left out of its figures, and counted
        print(row["id"], file=sys.stderr)
        continue
    v = decide(JudgeConfig(), task, traj, None)
    out.append({"id": row["id"], "part": row["part"], "label": row["label"], "kept": v.passed, "reasons": v.reasons,
                "hacks": sorted({h.kind for h in v.hacks})})
print(json.dumps(out))
"""


def judge_before(rows: list[dict], rev: str) -> list[dict]:
    """The episodes judged by the code at `rev` (a temporary git worktree, the same interpreter)."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), rev], check=True)
        try:
            lines = "".join(
                json.dumps({k: r[k] for k in ("id", "part", "label", "task", "trajectory")}) + "\n" for r in rows
            )
            done = subprocess.run(
                [sys.executable, "-c", BEFORE_SCRIPT],
                input=lines,
                capture_output=True,
                text=True,
                check=True,
                env={"PYTHONPATH": str(tree / "src"), "PATH": "/usr/bin:/bin"},
            )
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)
    unread = done.stderr.split()
    if unread:
        print(f"the code at {rev} cannot read {len(unread)} newer episodes (left out of its figures)")
    return json.loads(done.stdout)


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 3) if den else None


# where each part came from: a capable model's good and bad parts are read together, since a part of
# one label alone has no precision to speak of (nothing kept) or no recall (nothing good)
SOURCES = {
    "default policy (a)": ("a",),
    "default policy, prose replies (a2)": ("a2",),
    "default policy, a default run (a3)": ("a3",),
    "default policy, kept by a run's judge (a4)": ("a4",),
    "capable, dev (b + c)": ("b", "c"),
    "capable, held-out": ("b-heldout", "c-heldout"),
    "capable, held-out 2": ("b-heldout2", "c-heldout2"),
    "capable, blind 1 (cap-blind3 + 4)": ("cap-blind3", "cap-blind4"),
    "capable, blind 2 (cap-blind5 + 6)": ("cap-blind5", "cap-blind6"),
    "capable, blind 3 (cap-blind7)": ("cap-blind7",),
    "capable, blind 4 (cap-blind8)": ("cap-blind8",),
    "capable, blind 5 (cap-blind9)": ("cap-blind9",),
    "capable, blind 6 (cap-blind10)": ("cap-blind10",),
}

SHORT = {
    "default policy (a)": "default (a)",
    "default policy, prose replies (a2)": "default,\nprose (a2)",
    "default policy, a default run (a3)": "default,\nrun (a3)",
    "default policy, kept by a run's judge (a4)": "default,\nkept (a4)",
    "capable, dev (b + c)": "dev",
    "capable, held-out": "held-out",
    "capable, held-out 2": "held-out 2",
    "capable, blind 1 (cap-blind3 + 4)": "blind 1",
    "capable, blind 2 (cap-blind5 + 6)": "blind 2",
    "capable, blind 3 (cap-blind7)": "blind 3",
    "capable, blind 4 (cap-blind8)": "blind 4",
    "capable, blind 5 (cap-blind9)": "blind 5",
    "capable, blind 6 (cap-blind10)": "blind 6",
}


def figures(judged: list[dict]) -> dict[str, dict]:
    """Per part, per source and over all: the policy's precision and recall, and each hack check alone."""
    present = sorted({j["part"] for j in judged})
    groups = {p: (p,) for p in present}
    groups |= {name: ps for name, ps in SOURCES.items() if set(ps) & set(present)}
    groups["all"] = tuple(present)
    parts: dict[str, dict] = {}
    for part, members in groups.items():
        js = [j for j in judged if j["part"] in members]
        good = [j for j in js if j["label"] == "good"]
        bad = [j for j in js if j["label"] == "bad"]
        kept_good, kept_bad = sum(j["kept"] for j in good), sum(j["kept"] for j in bad)
        checks = {}
        for kind in HACK_KINDS:
            fires: defaultdict[str, int] = defaultdict(int)
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


def plot(parts: dict[str, dict], before: dict[str, dict] | None, path: Path) -> None:
    """Recall and precision by source, now and (hatched) before."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [p for p in parts if p in SOURCES or p == "all"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.4), sharey=True)
    for ax, key in zip(axes, ("recall", "precision"), strict=True):
        versions = [("now", parts, "#4c78a8", "")] + ([("before", before, "#bab0ac", "//")] if before else [])
        width = 0.8 / len(versions)
        for k, (label, figs, color, hatch) in enumerate(versions):
            xs = [x - 0.4 + width * (k + 0.5) for x in range(len(names))]
            values = [figs.get(p, {}).get(key) for p in names]  # None: not measured (records newer than that code)
            ax.bar(xs, [v or 0 for v in values], width, label=label, color=color, hatch=hatch, edgecolor="white")
            for x, v in zip(xs, values, strict=True):
                ax.text(x, (v or 0) + 0.01, "n/a" if v is None else f"{v:.2f}", ha="center", fontsize=7)
        short = [SHORT.get(p, p) for p in names]
        ticks = [f"{n}\n{parts[p]['good']} good\n{parts[p]['bad']} bad" for n, p in zip(short, names, strict=True)]
        ax.set_xticks(range(len(names)), ticks, fontsize=7)
        ax.set_ylim(0, 1.3)
        ax.set_title(
            f"{key} of the default judge policy" + (" (good work kept)" if key == "recall" else " (kept that is good)"),
            fontsize=9,
        )
        ax.legend(loc="upper right", fontsize=8, ncol=2)
    fig.savefig(path, bbox_inches="tight", dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, default=RESULTS / "judge_two_sided.json")
    ap.add_argument("--plot", type=Path, default=RESULTS / "judge_two_sided.png")
    ap.add_argument("--before", default="7f1c641", help="also judge with the code at this git revision")
    ap.add_argument("--no-before", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true", help="list dropped good and kept bad episodes")
    args = ap.parse_args()
    rows = load()
    judged = judge_all(rows)
    parts = figures(judged)
    print(table(parts))
    before = None
    if not args.no_before:
        before = figures(judge_before(rows, args.before))
        print(f"\nthe same episodes, judged by the code at {args.before}:\n")
        print(table(before).split("\n\n")[0])
    if args.verbose:
        for j in judged:
            if j["kept"] != (j["label"] == "good"):
                print(f"{'dropped good' if j['label'] == 'good' else 'kept bad'} {j['part']} {j['id']}: {j['reasons']}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    out = {"parts": parts, "before": {"revision": args.before, "parts": before} if before else None, "episodes": judged}
    args.json.write_text(json.dumps(out, indent=1) + "\n")
    plot(parts, before, args.plot)
    print(f"\nwrote {args.json} and {args.plot}")


if __name__ == "__main__":
    main()
