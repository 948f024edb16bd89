"""`worldsmith eval`: held-out tasks, each model as the agent policy, pass rate / pass^k / tool-call validity."""

from __future__ import annotations

import html
import json
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from math import comb
from pathlib import Path
from typing import Any

from worldsmith.config import PipelineConfig, PolicyConfig, data_dir
from worldsmith.judge.reward import INVALID_CALLS, server_failed, unparsed
from worldsmith.judge.rubric import arguments_match
from worldsmith.records import Agent, HeldOut, ModelEval, Task, ToolSpec, Trajectory, Verdict, World, content_id
from worldsmith.store import RunStore
from worldsmith.vocab import export_jsonl


@dataclass(frozen=True)
class EvalModel:
    label: str  # base | finetuned | any name
    path: str | None  # an HF folder or GGUF file; None: the packaged SmolLM2


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials (95% by default)."""
    if n == 0:
        return 0.0, 0.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate_with_interval(passed: int, episodes: int) -> str:
    """ "k/n  rate (low–high)": a pass rate as the eval shows it, with its Wilson 95% interval."""
    if not episodes:
        return "-"
    lo, hi = wilson(passed, episodes)
    return f"{passed}/{episodes}  {passed / episodes:.2f} ({lo:.2f}–{hi:.2f})"


def pass_hat_k(n: int, c: int, k: int) -> float:
    """tau-bench's pass^k for one task: the chance that k of its n samples, drawn without
    replacement, all pass, given c of them passed."""
    return comb(c, k) / comb(n, k) if n >= k else 0.0


def trained_agents(dataset: Path | None) -> set[str]:
    """Agents with an example in the dataset's training split (the model saw them)."""
    path = export_jsonl(dataset, "train") if dataset else None
    if path is None or not path.exists():
        return set()
    return {json.loads(line)["metadata"]["agent_id"] for line in path.read_text().splitlines() if line.strip()}


def held_out_tasks(store: RunStore, dataset: Path | None, max_tasks: int = 0) -> list[Task]:
    """The tasks a model trained on `dataset` never saw. An export split by world (its `held_out.json`)
    holds out whole worlds: every task of an agent in them, whether the run kept its episodes or not.
    Otherwise (an export split by agent, or none): the tasks of agents with no training example."""
    held = HeldOut.read(dataset)
    trained = trained_agents(dataset)
    if held is not None and held.split_by == "world":
        tasks = (t for t in store.read(Task) if t.agent_id in held.agents and t.agent_id not in trained)
    else:
        tasks = (t for t in store.read(Task) if t.agent_id not in trained)
    ordered = sorted(tasks, key=lambda t: t.task_id)
    return ordered[:max_tasks] if max_tasks else ordered


def exact_arguments(tasks: dict[str, Task], trajs: list[Trajectory]) -> tuple[int, int]:
    """(gold calls made with exactly their gold arguments, gold calls), over the episodes of blueprint tasks."""
    made = total = 0
    for t in trajs:
        task = tasks.get(t.task_id)
        if task is None or task.blueprint is None:
            continue
        for gold in task.blueprint.calls:
            total += 1
            made += any(
                c.ok
                and c.tool == gold.tool
                and isinstance(c.arguments, dict)
                and c.arguments.keys() == gold.arguments.keys()
                and arguments_match(gold.arguments, c.arguments)
                for c in t.calls
            )
    return made, total


def well_formed(t: Trajectory) -> bool:
    """The agent made at least one tool call and every one parsed into a known tool with schema-valid arguments."""
    return bool(t.calls) and not unparsed(t) and all(c.executor not in INVALID_CALLS for c in t.calls)


class VoidEval(ValueError):
    """Every episode of a model ended in a server failure: there is no pass rate to report."""


def refuse_void(scores: ModelEval, store: RunStore) -> None:
    """Raise VoidEval when every episode of `scores` (played in `store`) ended in a server failure."""
    if not scores.trajectories or scores.server_errors < scores.trajectories:
        return
    top = Counter(t.reason for t in store.read(Trajectory) if server_failed(t)).most_common(1)
    raise VoidEval(
        f"eval [{scores.label}, {scores.mode}]: all {scores.trajectories} episodes ended because the policy's server "
        f"failed, so there is no pass rate to report (most common: {top[0][0] if top else '?'}). Its log is under "
        f"data/logs/. Fix the cause and run again: a changed config plays them in a new eval run; with the same "
        f"config, delete {store.root} first."
    )


def model_scores(
    store: RunStore, model: EvalModel, engine: str, samples: int, mode: str = "constrained", grounding: bool = False
) -> ModelEval:
    """The figures of one finished eval run."""
    trajs = store.read(Trajectory)
    tasks = {t.task_id: t for t in store.read(Task)}
    verdicts = {v.trajectory_id: v for v in store.read(Verdict)}
    by_task: dict[str, list[bool]] = {}
    by_family: dict[str, list[int]] = {}
    for t in trajs:
        v = verdicts.get(t.trajectory_id)
        by_task.setdefault(t.task_id, []).append(bool(v and v.passed))
        task = tasks.get(t.task_id)
        counts = by_family.setdefault(task.family if task else "unknown", [0, 0])
        counts[0] += bool(v and v.passed)
        counts[1] += 1
    passed = sum(sum(p) for p in by_task.values())
    pass_hat = {}
    for k in range(1, samples + 1):
        per_task = [pass_hat_k(len(p), sum(p), k) for p in by_task.values() if len(p) >= k]
        if per_task:
            pass_hat[str(k)] = round(sum(per_task) / len(per_task), 4)
    calls = [c for t in trajs for c in t.calls]
    server_errors = sum(server_failed(t) for t in trajs)
    attempted = len(calls) + sum(map(unparsed, trajs))
    valid = sum(c.executor not in INVALID_CALLS for c in calls)
    reasons = Counter(r for v in verdicts.values() for r in v.reasons)
    made, gold = exact_arguments(tasks, trajs)
    # episodes whose task wants a call: a blueprint's with gold calls, and free-form tasks (no gold to say otherwise)
    should_call = [
        t
        for t in trajs
        if (task := tasks.get(t.task_id)) is not None and (task.blueprint is None or task.blueprint.calls)
    ]
    with_calls = [
        t
        for t in trajs
        if (task := tasks.get(t.task_id)) is not None and task.blueprint is not None and task.blueprint.calls
    ]
    no_call = [
        t
        for t in trajs
        if (task := tasks.get(t.task_id)) is not None and task.blueprint is not None and not task.blueprint.calls
    ]
    return ModelEval(
        eval_run_id=store.run_id,
        label=model.label,
        mode=mode,
        grounding=grounding,
        model_path=model.path or "",
        engine=engine,
        tasks=len(by_task),
        samples_per_task=samples,
        exact_argument_rate=round(made / gold, 4) if gold else None,
        call_rate=round(sum(bool(t.calls) for t in with_calls) / len(with_calls), 4) if with_calls else None,
        format_rate=round(sum(map(well_formed, should_call)) / len(should_call), 4) if should_call else None,
        needless_call_rate=round(sum(bool(t.calls) for t in no_call) / len(no_call), 4) if no_call else None,
        by_family=dict(sorted(by_family.items())),
        trajectories=len(trajs),
        passed=passed,
        pass_rate=round(passed / len(trajs), 4) if trajs else None,
        pass_hat=pass_hat,
        tool_calls=attempted,
        valid_tool_calls=valid,
        tool_call_validity=round(valid / attempted, 4) if attempted else None,
        statuses=dict(Counter(t.status for t in trajs)),
        reasons=dict(reasons.most_common(12)),
        server_errors=server_errors,
        simulator_failures=sum((t.reason or "").startswith(("tool_sim_failed", "user_sim_failed")) for t in trajs),
        generated_tokens=sum(t.usage.get("agent", {}).get("completion_tokens", 0) for t in trajs),
    )


def eval_config(cfg: PipelineConfig, model: EvalModel, mode: str = "constrained") -> PipelineConfig:
    """The run's config with `model` served as the agent policy in tool-call `mode`, eval's sample
    count and grounding (validated again). Native mode forces no call: a model that makes no
    native call is not rescued by constrained decoding, so `call_rate` says how often it calls."""
    policy = PolicyConfig(
        enabled=True,
        model_path=model.path,
        engine=cfg.eval.engine,
        model="policy",
        port=cfg.eval.port,
        parallel=cfg.eval.parallel,
    )
    agent = cfg.llm.roles.agent.model_copy(  # the model as it is: no prose grammar (and vLLM's xgrammar cannot)
        update={
            "tool_call_mode": mode,
            "grounding": "on" if cfg.eval.grounding == "on" else "off",
            "prose_replies": "off",
        }
    )
    rollouts = cfg.rollouts.model_copy(
        update={
            "samples_per_task": cfg.eval.samples_per_task,
            "reply_attempts": 1,  # the model under test as it is: no reply sampled again
            **({"require_tool": "never"} if mode == "native" else {}),
        }
    )
    new = cfg.model_copy(
        update={
            "llm": cfg.llm.model_copy(
                update={"policy": policy, "roles": cfg.llm.roles.model_copy(update={"agent": agent})}
            ),
            "rollouts": rollouts,
        }
    )
    return PipelineConfig.model_validate(new.model_dump())


def _weights_stamp(path: str | None) -> str:
    """Changes when the model is retrained into the same folder, so its eval run is new."""
    if not path:
        return ""
    p = Path(path)
    files = sorted(p.glob("*.safetensors")) if p.is_dir() else [p]
    return ",".join(f"{f.name}:{f.stat().st_mtime_ns}:{f.stat().st_size}" for f in files if f.exists())


def eval_run_id(source_run: str, model: EvalModel, ecfg: PipelineConfig) -> str:
    return (
        f"{source_run}-eval-{model.label}-"
        + content_id(
            str(Path(model.path).resolve()) if model.path else "", _weights_stamp(model.path), ecfg.config_hash()
        )[:8]
    )


def check_servable(model: EvalModel, engine: str) -> None:
    if model.path is None:
        return
    p = Path(model.path)
    if not p.exists():
        raise ValueError(
            f"--model {model.path}: no such folder or file (a `make finetune` output is data/models/<name>/model)"
        )
    if p.is_dir() and not (p / "config.json").exists():
        raise ValueError(f"{model.path} has no config.json: not an HF model folder")


def seed_store(store: RunStore, source: RunStore, tasks: list[Task]) -> None:
    """The eval run gets the held-out tasks with their agents, tools and worlds (once)."""
    agent_ids = {t.agent_id for t in tasks}
    agents = [a for a in source.read(Agent) if a.agent_id in agent_ids]
    tool_ids = {tid for a in agents for tid in a.tool_ids}
    world_ids = {t.world_id for t in tasks if t.world_id}
    for records in (
        [w for w in source.read(World) if w.world_id in world_ids],
        [t for t in source.read(ToolSpec) if t.tool_id in tool_ids],
        agents,
        tasks,
    ):
        if records:
            have = store.existing_ids(type(records[0]))
            new = [r for r in records if r.record_id not in have]
            if new:
                store.append(new)


def model_dataset(model_path: str | None) -> Path | None:
    """The dataset a `make finetune` model learned from (its train.json says), if known."""
    info = Path(model_path).parent / "train.json" if model_path else None
    if info and info.exists():
        dataset = json.loads(info.read_text()).get("dataset")
        return Path(dataset) if dataset else None
    return None


def eval_plan(
    cfg: PipelineConfig,
    root: Path,
    run_id: str | None = None,
    model: str | Path | None = None,
    dataset: str | Path | None = None,
    label: str = "finetuned",
    compare_base: bool | None = None,
) -> tuple[list[EvalModel], Path]:
    """The models to play and the dataset that decides the held-out tasks, with their defaults:
    this config's `make finetune` output, the dataset its train.json names (else the run's export)."""
    from worldsmith.finetune.loop import finetune_paths

    export, out = finetune_paths(cfg, root, run_id)
    model = str(model or out / "model")
    source = Path(dataset) if dataset else model_dataset(model) or export
    base = cfg.eval.compare_base if compare_base is None else compare_base
    return ([EvalModel("base", cfg.finetune.base_model)] if base else []) + [EvalModel(label, model)], source


def served_as(cfg: PipelineConfig, m: EvalModel, log: Callable[[str], Any] = print) -> EvalModel:
    """`m` as the eval's engine serves it. llama.cpp serves a GGUF: an HF folder is converted once (f16), and
    the packaged base (a 4-bit GGUF) with `eval.equal_precision` is first de-quantised into the folder training
    starts from, so base and tuned models are served at the same precision."""
    if cfg.eval.engine != "llamacpp":
        return m
    if m.path is None and cfg.eval.equal_precision:
        from worldsmith.finetune.loop import dense_base

        m = EvalModel(m.label, str(dense_base(cfg.llm.server.model_cache_dir, log=log)))
    if m.path and Path(m.path).is_dir():
        from worldsmith.llm.hf_to_gguf import ensure_gguf

        m = EvalModel(m.label, str(ensure_gguf(Path(m.path), cache_dir=Path(cfg.llm.server.model_cache_dir), log=log)))
    return m


def evaluate_models(
    cfg: PipelineConfig,
    root: Path,
    models: list[EvalModel],
    run_id: str | None = None,
    dataset: Path | None = None,
    log: Callable[[str], Any] = print,
) -> tuple[list[ModelEval], Path]:
    """Run every model on the run's held-out tasks; returns their figures and the eval report's path."""
    from worldsmith import pipeline
    from worldsmith.store import refresh_catalog

    source_run = run_id or cfg.default_run_id()
    data = data_dir(cfg, root)
    source = RunStore(data, source_run)
    for m in models:
        check_servable(m, cfg.eval.engine)
    tasks = held_out_tasks(source, dataset, cfg.eval.max_tasks)
    if not tasks:
        raise ValueError(
            f"run {source_run} has no held-out tasks (agents without training examples in {dataset}): "
            "run `make synth` with more agents"
        )
    log(
        f"eval: {len(tasks)} held-out task(s) of {len({t.agent_id for t in tasks})} agent(s) from run {source_run}, "
        f"{cfg.eval.samples_per_task} sample(s) each, models: {', '.join(m.label for m in models)}"
    )
    results = []
    for m in models:
        m = served_as(cfg, m, log)
        for mode in cfg.eval.modes:
            ecfg = eval_config(cfg, m, mode)
            eid = eval_run_id(source_run, m, ecfg)
            store = RunStore(data, eid)
            seed_store(store, source, tasks)
            log(f"eval [{m.label}, {mode}] {m.path or 'the packaged SmolLM2'} on {cfg.eval.engine} -> run {eid}")
            pipeline.synth(ecfg, root, run_id=eid, stages=["rollouts", "judge"], log=log)
            scores = model_scores(
                store, m, cfg.eval.engine, cfg.eval.samples_per_task, mode, ecfg.llm.roles.agent.grounded
            )
            refuse_void(scores, store)
            if scores.server_errors:
                log(
                    f"eval [{m.label}, {mode}]: {scores.server_errors} of {scores.trajectories} episodes ended in a "
                    "server failure; they count as not passed"
                )
            if eid not in source.existing_ids(ModelEval):  # a finished eval run re-scored gives the same figures
                source.append([scores])
            results.append(scores)
    refresh_catalog(data, root)
    out = source.root / "eval.html"
    write_eval_report(source_run, results, out)
    return results, out


ROWS = [
    ("mode", "tool-call mode"),
    ("tasks", "held-out tasks"),
    ("trajectories", "episodes"),
    ("passed", "kept by the judge"),
    ("pass_rate", "pass rate (95% CI)"),
    ("server_errors", "episodes lost to server failures"),
    ("tool_calls", "tool calls attempted"),
    ("tool_call_validity", "tool-call validity"),
    ("exact_argument_rate", "gold calls with exact arguments"),
    ("call_rate", "episodes with any tool call"),
    ("format_rate", "episodes whose calls all parse (format)"),
    ("needless_call_rate", "calls when no tool applies"),
    ("generated_tokens", "agent tokens"),
]


def comparison_rows(results: list[ModelEval]) -> list[tuple[str, list[str]]]:
    """Metric rows with one column per model (pass^k rows included), as text."""

    def show(v: Any) -> str:
        return "n/a" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))

    ks = sorted({int(k) for r in results for k in r.pass_hat})
    rows = [
        (
            title,
            [
                rate_with_interval(r.passed, r.trajectories) if key == "pass_rate" else show(getattr(r, key))
                for r in results
            ],
        )
        for key, title in ROWS
    ]
    rows[5:5] = [(f"pass^{k}", [show(r.pass_hat.get(str(k))) for r in results]) for k in ks]
    families = sorted({f for r in results for f in r.by_family})
    rows += [(f"pass: {f}", [rate_with_interval(*r.by_family.get(f, [0, 0])) for r in results]) for f in families]
    rows.append(("statuses", [", ".join(f"{s} {n}" for s, n in sorted(r.statuses.items())) for r in results]))
    rows.append(("simulator failures", [str(r.simulator_failures) for r in results]))
    rows.append(
        ("top drop reasons", [", ".join(f"{s} {n}" for s, n in list(r.reasons.items())[:4]) or "-" for r in results])
    )
    return rows


def write_eval_report(source_run: str, results: list[ModelEval], out: Path) -> Path:
    """Models side by side: a table and a grouped bar plot of the rates."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from worldsmith.plots import svg

    metrics = [
        "pass_rate",
        *[f"pass^{k}" for k in sorted({int(k) for r in results for k in r.pass_hat})],
        "tool_call_validity",
        "exact_argument_rate",
        "call_rate",
        "format_rate",
    ]

    def value(r: ModelEval, m: str) -> float:
        v = r.pass_hat.get(m.split("^")[1]) if m.startswith("pass^") else getattr(r, m)
        return v or 0.0

    fig, ax = plt.subplots(figsize=(7, 3.2))
    width = 0.8 / max(len(results), 1)
    for i, r in enumerate(results):
        xs = [j + i * width for j in range(len(metrics))]
        ax.bar(xs, [value(r, m) for m in metrics], width, label=f"{r.label} ({r.mode})")
    ax.set_xticks([j + width * (len(results) - 1) / 2 for j in range(len(metrics))], metrics)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share")
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title("held-out tasks: models side by side", loc="left", fontsize=11)
    families = sorted({f for r in results for f in r.by_family})
    fam_fig, fam_ax = plt.subplots(figsize=(max(6, 1.1 * len(families) + 2), 3.2))
    for i, r in enumerate(results):
        xs = [j + i * width for j in range(len(families))]
        rates, lows, highs = [], [], []
        for f in families:
            k, n = r.by_family.get(f, [0, 0])
            lo, hi = wilson(k, n)
            rates.append(k / n if n else 0.0)
            lows.append(rates[-1] - lo)
            highs.append(hi - rates[-1])
        fam_ax.bar(xs, rates, width, yerr=[lows, highs], capsize=2, label=f"{r.label} ({r.mode})")
    fam_ax.set_xticks([j + width * (len(results) - 1) / 2 for j in range(len(families))], families, fontsize=8)
    fam_ax.set_ylim(0, 1)
    fam_ax.set_ylabel("pass rate (95% CI)")
    fam_ax.legend(loc="upper right", fontsize=8)
    fam_ax.set_title("pass rate by task family", loc="left", fontsize=11)
    head = "".join(
        f"<th>{html.escape(r.label)} ({html.escape(r.mode)})<br>"
        f"<small>{html.escape(r.model_path or 'packaged SmolLM2')}</small></th>"
        for r in results
    )
    body = "".join(
        f"<tr><th>{html.escape(t)}</th>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"
        for t, cells in comparison_rows(results)
    )
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>worldsmith eval: {html.escape(source_run)}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2rem;color:#222}} table{{border-collapse:collapse}}
th,td{{text-align:left;padding:.2rem .8rem;border-bottom:1px solid #eee;vertical-align:top}}
svg{{max-width:100%;height:auto}}</style></head>
<body><h1>Evaluation on the held-out tasks of <code>{html.escape(source_run)}</code></h1>
<p>Generated {datetime.now(UTC):%Y-%m-%d %H:%M UTC}. Same tasks, seeds, simulators and judge for every model; pass^k is
tau-bench's (all k samples of a task pass). Intervals are Wilson 95%.
Episodes: <code>worldsmith query "SELECT * FROM trajectories WHERE run_id = '&lt;eval run&gt;'"</code>;
figures: <code>SELECT * FROM evals</code>.</p>
<table id="comparison"><tr><th></th>{head}</tr>{body}</table>
<figure class="plot" id="plot-comparison">{svg(fig)}</figure>
<p>Pass rate by task family: a format gain (the calls parse) shows in the format row above; a skill gain in these.</p>
<figure class="plot" id="plot-families">{svg(fam_fig)}</figure></body></html>
"""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".html.tmp")
    tmp.write_text(page)
    tmp.replace(out)
    return out
