"""Muon vs AdamW: seconds per step, tokens/s, validation loss after N steps and peak memory,
same data and steps. Default: SmolLM2-135M (from the packaged GGUF) on a small export made
from the hand-made order world; `--tiny` uses a tiny random Llama (seconds, for a smoke run).
A third run, Muon with QK-clip (K2's MuonClip, `--qk-clip-tau`, 0 skips it), gives the
clip's cost per step and the largest attention logit it saw.

`--memory`: gradient checkpointing off and on, each in its own process (peak RSS is per
process), Muon at batch 4 x 2,048-token packed rows (the SFT default's shape): peak RSS (and
peak CUDA memory on a GPU), seconds per step, and the losses, which must match.

    python benchmarks/finetune.py [--tiny] [--steps 3] [--qk-clip-tau 100] [--dataset data/exports/<run>]
    python benchmarks/finetune.py --memory [--steps 2] [--tiny]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def demo_dataset(folder: Path) -> Path:
    from test_export import world

    from worldsmith.config import ExportConfig
    from worldsmith.export.sft import build_examples, write_export

    trajs, tasks, agents, verdicts = world(4, 2)
    examples, _ = build_examples("bench", ExportConfig(validation_fraction=0.3), trajs, verdicts, tasks, agents)
    write_export(examples, folder, "benchmark data")
    return folder


def packed_dataset(folder: Path) -> Path:
    """Enough distinct examples (~20k tokens) to fill 4 rows of 2,048 tokens several times over."""
    from test_export import world

    from worldsmith.config import ExportConfig
    from worldsmith.export.sft import build_examples, write_export

    trajs, tasks, agents, verdicts = world(16, 2)
    cfg = ExportConfig(validation_fraction=0.1, near_duplicate_threshold=1.0)
    examples, _ = build_examples("bench", cfg, trajs, verdicts, tasks, agents)
    write_export(examples, folder, "benchmark data")
    return folder


def _model(tiny: bool):
    import torch
    import transformers

    from worldsmith.finetune.loop import TEMPLATE, load_base

    if not tiny:
        return load_base(None, torch.float32)
    from test_finetune import tiny as tiny_model

    args, kwargs = _gguf()
    tok = transformers.AutoTokenizer.from_pretrained(*args, **kwargs)
    tok.chat_template = TEMPLATE.read_text()
    tok.pad_token = tok.pad_token or tok.eos_token
    return tiny_model(tok), tok


def memory_child(setting: str, dataset: Path, out: Path, steps: int, tiny: bool) -> None:
    """One training in this process; prints its figures as one JSON line."""
    from worldsmith.config import FinetuneConfig
    from worldsmith.finetune.loop import train

    model, tok = _model(tiny)
    cfg = FinetuneConfig(
        optimizer="muon",
        max_steps=steps,
        batch_size=4,
        max_length=2048,
        packing=True,
        warmup_steps=1,
        eval_every=steps,
        save_every=steps,
        gradient_checkpointing=setting,
    )
    r = train(cfg, dataset, out, model=model, tokenizer=tok, log=lambda m: None)
    print(
        json.dumps(
            {
                "gradient_checkpointing": r.gradient_checkpointing,
                "s_per_step": r.seconds_per_step,
                "tokens_per_s": r.tokens_per_s,
                "losses": [round(x, 5) for x in r.losses],
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "peak_cuda_mb": r.peak_cuda_mb,
            }
        ),
        flush=True,
    )


def memory(steps: int, tiny: bool) -> None:
    import subprocess

    tmp = Path(tempfile.mkdtemp(prefix="ws-bench-mem-"))
    dataset = packed_dataset(tmp / "export")
    results = {}
    for setting in ("off", "on"):
        cmd = [sys.executable, __file__, "--memory-child", setting, "--dataset", str(dataset), "--steps", str(steps)]
        done = subprocess.run(cmd + (["--tiny"] if tiny else []), capture_output=True, text=True, check=True)
        results[setting] = json.loads(done.stdout.strip().splitlines()[-1])
        print(json.dumps({setting: results[setting]}), flush=True)
    off, on = results["off"], results["on"]
    results["rss_on_over_off"] = round(on["peak_rss_mb"] / off["peak_rss_mb"], 3)
    results["step_on_over_off"] = round(on["s_per_step"] / off["s_per_step"], 3)
    if off["peak_cuda_mb"]:
        results["cuda_on_over_off"] = round(on["peak_cuda_mb"] / off["peak_cuda_mb"], 3)
    print(json.dumps({k: v for k, v in results.items() if "_over_" in k}))
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    name = "finetune-memory-tiny.json" if tiny else "finetune-memory.json"
    shape = {"optimizer": "muon", "batch": 4, "row_tokens": 2048, "packing": True}
    (out / name).write_text(
        json.dumps({"measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "steps": steps, **shape, **results}, indent=1)
        + "\n"
    )


def main() -> None:
    import torch
    import transformers

    from worldsmith.config import FinetuneConfig
    from worldsmith.finetune.loop import TEMPLATE, load_base, train

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tiny", action="store_true")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--dataset", default=None)
    p.add_argument("--qk-clip-tau", type=float, default=100.0)
    p.add_argument("--memory", action="store_true", help="gradient checkpointing off vs on")
    p.add_argument("--memory-child", choices=["off", "on"], help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.memory_child:
        return memory_child(a.memory_child, Path(a.dataset), Path(a.dataset).parent / a.memory_child, a.steps, a.tiny)
    if a.memory:
        return memory(a.steps, a.tiny)
    tmp = Path(tempfile.mkdtemp(prefix="ws-bench-ft-"))
    dataset = Path(a.dataset) if a.dataset else demo_dataset(tmp / "export")
    results = {}
    for variant in ("adamw", "muon", *(["muon_qk_clip"] if a.qk_clip_tau > 0 else [])):
        kind = variant.split("_")[0]
        if a.tiny:
            from test_finetune import tiny

            args, kwargs = _gguf()
            tok = transformers.AutoTokenizer.from_pretrained(*args, **kwargs)
            tok.chat_template = TEMPLATE.read_text()
            tok.pad_token = tok.pad_token or tok.eos_token
            model = tiny(tok)
        else:
            model, tok = load_base(None, torch.float32)
        cfg = FinetuneConfig(
            optimizer=kind,
            max_steps=a.steps,
            batch_size=2,
            warmup_steps=1,
            eval_every=a.steps,
            save_every=a.steps,
            lr=5e-5 if not a.tiny else 3e-3,
            muon_lr=2e-4 if not a.tiny else 2e-2,
            qk_clip_tau=a.qk_clip_tau if variant == "muon_qk_clip" else None,
        )
        t0 = time.monotonic()
        r = train(cfg, dataset, tmp / variant, model=model, tokenizer=tok, log=lambda m: None)
        results[variant] = {
            "s_per_step": r.seconds_per_step,
            "tokens_per_s": r.tokens_per_s,
            "first_loss": round(r.losses[0], 4),
            "last_loss": round(r.losses[-1], 4),
            "val_loss": r.val_losses[-1][1] if r.val_losses else None,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "wall_s": round(time.monotonic() - t0, 1),
            **(
                {"qk_clip_tau": a.qk_clip_tau, "max_logits": r.max_logits, "clipped_heads": r.clipped_heads}
                if r.max_logits
                else {}
            ),
        }
        print(json.dumps({variant: results[variant]}), flush=True)
    results["muon_step_over_adamw"] = round(results["muon"]["s_per_step"] / results["adamw"]["s_per_step"], 3)
    if "muon_qk_clip" in results:
        results["qk_clip_step_over_muon"] = round(
            results["muon_qk_clip"]["s_per_step"] / results["muon"]["s_per_step"], 3
        )
    print(json.dumps({k: v for k, v in results.items() if k.endswith("_over_adamw") or k.endswith("_over_muon")}))
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    name = "finetune-tiny.json" if a.tiny else "finetune.json"
    (out / name).write_text(
        json.dumps({"measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "steps": a.steps, **results}, indent=1) + "\n"
    )


def _gguf():
    from worldsmith.llm.server import packaged_gguf

    g = packaged_gguf()
    return (str(g.parent),), {"gguf_file": g.name}


if __name__ == "__main__":
    main()
