"""The loop, run for real: synthesise -> filter -> fine-tune (Muon and AdamW, same data and
steps) -> evaluate base vs both on the tasks of the worlds the training split never touched
(export.split_by: world), same seeds, grounding off, in constrained and native tool-call modes,
base and tuned at the same precision (the packaged 4-bit base de-quantised and converted like
the tuned models). Every size is an argument.

    python benchmarks/loop.py [--agents 24] [--tasks-per-agent 4] [--samples 4] [--steps 40] [--eval-samples 4]
                              [--eval-tasks 24] [--optimizers muon,adamw] [--set KEY=VALUE ...]
                              [--stages judge,export,report]
                              [--out benchmarks/results/loop.json]

Each figure is a rate over episodes with its Wilson 95% interval, so a difference between
models reads against the noise of the sample; pass rates by task family, and the share of
episodes whose calls all parse, so a format gain and a skill gain read as different rows.
Resumable: the run, the trainings and the eval runs all resume (same sizes, same ids).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from worldsmith import pipeline  # noqa: E402
from worldsmith.config import load_config  # noqa: E402
from worldsmith.evaluate import evaluate_models  # noqa: E402
from worldsmith.evaluate.play import EvalModel, VoidEval, rate_with_interval, wilson  # noqa: E402
from worldsmith.finetune.loop import finetune_paths, train  # noqa: E402
from worldsmith.summary import print_summary  # noqa: E402


def newcombe(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float, float]:
    """p1 - p2 with Newcombe's hybrid score 95% interval (his method 10), built from the two
    Wilson intervals. It treats the samples as independent; the eval's models play the same
    tasks and seeds, so the interval is conservative for them."""
    if not n1 or not n2:
        return 0.0, 0.0, 0.0
    p1, p2 = k1 / n1, k2 / n2
    (l1, u1), (l2, u2) = wilson(k1, n1), wilson(k2, n2)
    d = p1 - p2
    return d, d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", type=int, default=24, help="bundles, hence agents")
    ap.add_argument("--tasks-per-agent", type=int, default=4)
    ap.add_argument("--samples", type=int, default=4, help="episodes per task while synthesising")
    ap.add_argument("--steps", type=int, default=40, help="fine-tuning steps, the same for Muon and AdamW")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--eval-samples", type=int, default=4, help="episodes per held-out task and model (k of pass^k)")
    ap.add_argument("--eval-tasks", type=int, default=24, help="held-out tasks played (0: all)")
    ap.add_argument("--optimizers", default="muon,adamw", help="comma-separated: muon, adamw (each trains a model)")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--name", default="loop")
    ap.add_argument(
        "--stages",
        default=None,
        help="comma-separated synth stages to run (default: all enabled); e.g. judge,export,report "
        "trains and evaluates on the episodes a stopped run already has, without finishing its rollouts",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "loop.json")
    a = ap.parse_args(argv)
    t0 = time.monotonic()
    sizes = [
        f"run.name={a.name}",
        f"bundles.count={a.agents}",
        f"tasks.per_agent={a.tasks_per_agent}",
        f"rollouts.samples_per_task={a.samples}",
        "export.split_by=world",
        "export.validation_fraction=0.25",
        "export.held_out_sources=[pack, crawled, derived]",
        f"finetune.max_steps={a.steps}",
        f"finetune.batch_size={a.batch}",
        f"eval.samples_per_task={a.eval_samples}",
        f"eval.max_tasks={a.eval_tasks}",
        "eval.grounding=off",
        "eval.modes=[constrained, native]",
        "eval.compare_base=false",
    ]
    cfg, root = load_config(ROOT / "pipeline.yaml", [*sizes, *a.overrides])

    phases: dict[str, float] = {}  # seconds this invocation spent per phase (a resumed phase: only what it redid)
    mark = time.monotonic()
    summary = pipeline.synth(cfg, root, stages=a.stages.split(",") if a.stages else None)
    phases["synth"] = round(time.monotonic() - mark, 1)
    print_summary(summary)
    export, _ = finetune_paths(cfg, root)
    kept = (
        sum(1 for _ in (export / "jsonl" / "train.jsonl").open()) if (export / "jsonl" / "train.jsonl").exists() else 0
    )
    held = (
        sum(1 for _ in (export / "jsonl" / "validation.jsonl").open())
        if (export / "jsonl" / "validation.jsonl").exists()
        else 0
    )
    print(f"loop: {kept} training and {held} validation examples in {export}")
    if not kept:
        raise SystemExit("loop: the run kept nothing to train on; see `worldsmith judge stats`")

    models = [EvalModel("base", cfg.finetune.base_model)]
    trained: dict[str, dict] = {}
    for optimizer in a.optimizers.split(","):
        ocfg, _ = load_config(ROOT / "pipeline.yaml", [*sizes, *a.overrides, f"finetune.optimizer={optimizer}"])
        source, out = finetune_paths(ocfg, root)
        mark = time.monotonic()
        r = train(
            ocfg.finetune,
            source,
            out,
            progress=lambda done, total, loss, rate, o=optimizer: print(
                f"finetune {o}: step {done}/{total}, loss {loss:.4f}, {rate:.0f} tok/s", flush=True
            ),
        )
        phases[f"train_{optimizer}"] = round(time.monotonic() - mark, 1)
        trained[optimizer] = {
            "steps": r.steps,
            "first_loss": r.losses[0],
            "last_loss": r.losses[-1],
            "val_loss": r.val_losses[-1][1] if r.val_losses else None,
            "s_per_step": r.seconds_per_step,
        }
        models.append(EvalModel(optimizer, str(out / "model")))

    mark = time.monotonic()
    try:
        results, report = evaluate_models(cfg, root, models, dataset=export)
    except VoidEval as exc:  # no table is better than one of zeros from a server that never answered
        raise SystemExit(f"loop: {exc}") from None
    phases["eval"] = round(time.monotonic() - mark, 1)
    rows = []
    for r in results:
        lo, hi = wilson(r.passed, r.trajectories)
        rows.append(
            {
                "model": r.label,
                "mode": r.mode,
                "tasks": r.tasks,
                "episodes": r.trajectories,
                "passed": r.passed,
                "server_errors": r.server_errors,  # counted as not passed; an eval where all were stops instead
                "pass_rate": r.pass_rate,
                "pass_rate_ci95": [round(lo, 3), round(hi, 3)],
                "pass^1": r.pass_hat.get("1"),
                f"pass^{a.eval_samples}": r.pass_hat.get(str(a.eval_samples)),
                "tool_call_validity": r.tool_call_validity,
                "exact_argument_rate": r.exact_argument_rate,
                "call_rate": r.call_rate,
                "format_rate": r.format_rate,
                "needless_call_rate": r.needless_call_rate,
                "by_family": r.by_family,
            }
        )
    base = {r.mode: r for r in results if r.label == "base"}
    for row, r in zip(rows, results, strict=True):
        b = base.get(r.mode)
        if r.label != "base" and b is not None:
            d, lo, hi = newcombe(r.passed, r.trajectories, b.passed, b.trajectories)
            row["pass_rate_minus_base"] = round(d, 3)
            row["pass_rate_minus_base_ci95"] = [round(lo, 3), round(hi, 3)]
    out = {
        "sizes": vars(a) | {"out": str(a.out)},
        "run": summary.run_id,
        "kept_train": kept,
        "kept_validation": held,
        "trained": trained,
        "eval": rows,
        "report": str(report),
        "seconds": round(time.monotonic() - t0, 1),
        "phase_seconds": phases,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=2))
    print(
        "\n| model | mode | episodes | server errors | pass rate (95% CI) | minus base (95% CI) | pass^1 | exact args "
        "| any tool call | calls parse | calls when no tool applies |"
    )
    print("| --- | --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        lo, hi = row["pass_rate_ci95"]
        diff = "–"
        if "pass_rate_minus_base" in row:
            dlo, dhi = row["pass_rate_minus_base_ci95"]
            diff = f"{row['pass_rate_minus_base']:+.3f} ({dlo:+.3f} to {dhi:+.3f})"
        print(
            f"| {row['model']} | {row['mode']} | {row['episodes']} | {row['server_errors']} | "
            f"{row['pass_rate']} ({lo:.3f}–{hi:.3f}) | "
            f"{diff} | {row['pass^1']} | "
            f"{row['exact_argument_rate']} | {row['call_rate']} | {row['format_rate']} | {row['needless_call_rate']} |"
        )
    families = sorted({f for row in rows for f in row["by_family"]})
    print("\n| family | " + " | ".join(f"{row['model']} ({row['mode']})" for row in rows) + " |")
    print("| --- |" + " --- |" * len(rows))
    for f in families:
        cells = [rate_with_interval(*row["by_family"].get(f, [0, 0])) for row in rows]
        print(f"| {f} | " + " | ".join(cells) + " |")
    print(f"\nloop: {out['seconds']} s; figures in {a.out}; report {report}")


if __name__ == "__main__":
    main(sys.argv[1:])
