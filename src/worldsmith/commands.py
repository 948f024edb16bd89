"""The commands that are not stages (`crawl`, `finetune`, `eval`), wired once from a config. The CLI
(`worldsmith crawl|finetune|eval`) and the Prefect flows (`flows/crawl.py`, `flows/synth.py --flow
finetune|eval`) both call these, and differ only in how they show the result (what `pipeline.synth`
is to the stages). The heavy parts (torch, the MCP client) are imported when a command runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldsmith.config import PipelineConfig, data_dir, resolve_path

if TYPE_CHECKING:
    from worldsmith.evaluate.play import EvalModel
    from worldsmith.finetune.loop import TrainResult
    from worldsmith.records import ModelEval

Log = Callable[[str], Any]


def crawl(cfg: PipelineConfig, root: Path, servers: list[str] | None = None, log: Log = print) -> dict[str, Any]:
    """Install each MCP server of `tools.servers_file` in its own cached venv, list its tools (never call
    one) and write the snapshot under `tools.snapshot_dir`; `servers` crawls only those (a disabled one
    too). Returns the crawl's summary (its `failed`: server -> reason)."""
    from worldsmith.mcp import run_crawl

    return run_crawl(
        resolve_path(root, cfg.tools.servers_file),
        resolve_path(root, cfg.tools.snapshot_dir),
        resolve_path(root, cfg.crawl.cache_dir),
        data_dir(cfg, root) / "logs" / "crawl",
        concurrency=cfg.crawl.concurrency,
        timeout_s=cfg.crawl.timeout_s,
        only=servers,
        log=log,
    )


def finetune(
    cfg: PipelineConfig,
    root: Path,
    run_id: str | None = None,
    dataset: str | Path | None = None,
    log: Log = print,
    progress: Callable[[int, int, float, float], Any] | None = None,
) -> TrainResult:
    """Fine-tune `finetune.base_model` on an export (default: the run's) into `finetune.out_dir`, resuming
    from the last checkpoint (`finetune.loop.finetune_paths` says where)."""
    from worldsmith.finetune.loop import finetune_paths, train

    source, out = finetune_paths(cfg, root, run_id, dataset)
    return train(cfg.finetune, source, out, log=log, progress=progress)


@dataclass(frozen=True)
class Evaluation:
    models: list[EvalModel]  # as planned: base (with eval.compare_base), then the model under test
    results: list[ModelEval]  # one per model and tool-call mode
    report: Path  # eval.html in the source run's folder


def evaluate(
    cfg: PipelineConfig,
    root: Path,
    run_id: str | None = None,
    model: str | Path | None = None,
    dataset: str | Path | None = None,
    label: str = "finetuned",
    compare_base: bool | None = None,
    log: Log = print,
) -> Evaluation:
    """Play the run's held-out tasks with `model` (default: this config's `make finetune` output) as the
    agent policy, and the base model too (default: eval.compare_base), judge them and write the report."""
    from worldsmith.evaluate.play import eval_plan, evaluate_models

    models, source = eval_plan(cfg, root, run_id, model, dataset, label, compare_base)
    results, report = evaluate_models(cfg, root, models, run_id=run_id, dataset=source, log=log)
    return Evaluation(models, results, report)
