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


def pack_from_server(cfg: PipelineConfig, root: Path, server: str, out: Path | None = None) -> dict[str, Any]:
    """Save the world code infers from a crawled server's tools (`tools.snapshot_dir`) as a domain pack
    (`worlds.packs_dir/<server>` unless `out`) to edit by hand: its collections, fields and rules, and each
    tool with its real schema and what each parameter is bound to. Returns what was written and why tools
    were left unbound; a server the snapshot does not hold is a ValueError naming those it does."""
    from worldsmith.mcp.snapshot import load_snapshot_specs
    from worldsmith.worldmodel.infer import infer_worlds
    from worldsmith.worldmodel.packs import save_pack
    from worldsmith.worldmodel.schema import snake

    snapshot = load_snapshot_specs(
        resolve_path(root, cfg.tools.snapshot_dir), resolve_path(root, cfg.tools.servers_file)
    )
    known = sorted({t.server for t in snapshot if t.server})
    if server not in known:
        raise ValueError(f"server {server!r} is not in the crawl snapshot; it holds: {', '.join(known)}")
    mine = [t for t in snapshot if t.server == server]
    inferred = [i for i in infer_worlds(mine, cfg.worlds.today.isoformat(), cluster=False) if i.world is not None]
    folder = out or resolve_path(root, cfg.worlds.packs_dir) / snake(server)
    written, unbound = [], {}
    for n, i in enumerate(inferred):
        tools = [t.model_copy(update={"binding": i.bindings[t.tool_id]}) for t in mine if t.tool_id in i.bindings]
        path = folder if len(inferred) == 1 else folder.with_name(f"{folder.name}_{n + 1}")
        save_pack(i.world, tools, path, name=path.name)
        written.append({"pack": str(path), "collections": len(i.world.collections), "tools": len(tools)})
        unbound.update(i.unbound)
    bound = {tid for i in inferred for tid in i.bindings}
    unbound = {t.name: unbound.get(t.tool_id, "no world") for t in mine if t.tool_id not in bound}
    return {"server": server, "tools": len(mine), "bound": len(bound), "packs": written, "unbound": unbound}


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
