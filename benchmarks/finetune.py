"""Muon vs AdamW: seconds per step, tokens/s, validation loss after N steps and peak memory,
same data and steps. Default: SmolLM2-135M (from the packaged GGUF) on a small export made
from the hand-made order world; `--tiny` uses a tiny random Llama (seconds, for a smoke run).
A third run, Muon with QK-clip (K2's MuonClip, `--qk-clip-tau`, 0 skips it), gives the
clip's cost per step and the largest attention logit it saw.

`--memory`: gradient checkpointing off and on, each in its own process (peak RSS is per
process), Muon at batch 4 x 2,048-token packed rows (the SFT default's shape): peak RSS (and
peak CUDA memory on a GPU), seconds per step, and the losses, which must match.
`--memory --rl`: the same for the RL stage's update (`rl.loop.update`, the `rl` defaults: 4
episodes a step, each its own forward and backward, of 2,048 tokens, its `max_length`).

    python benchmarks/finetune.py [--tiny] [--steps 3] [--qk-clip-tau 100] [--dataset data/exports/<run>]
    python benchmarks/finetune.py --memory [--rl] [--steps 2] [--tiny]
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


def rl_episodes(dataset: Path, tok, n: int, length: int) -> list[dict[str, list[int]]]:
    """`n` encoded episodes of `length` tokens: each the conversations of the export's examples joined (the
    system prompt once) until it is that long, cut there, as the RL stage cuts an episode at `max_length`."""
    from worldsmith.finetune.data import encode, load_split

    rows = load_split(dataset, "train")
    out, i = [], 0
    while len(out) < n:
        first = rows[i % len(rows)]
        example = {"tools": first["tools"], "messages": list(first["messages"])}
        while (enc := encode(tok, example, length + 1)) is None or len(enc["input_ids"]) <= length:
            i += 1
            example["messages"] += [m for m in rows[i % len(rows)]["messages"] if m["role"] != "system"]
        out.append({k: v[:length] for k, v in enc.items()})
        i += 1
    return out


def rl_memory_child(setting: str, dataset: Path, steps: int, tiny: bool) -> None:
    """`rl.loop.update` at the `rl` defaults in this process; prints its figures as one JSON line."""
    import torch

    from worldsmith.config import RLConfig
    from worldsmith.finetune.loop import set_checkpointing
    from worldsmith.finetune.muon import make_optimizer
    from worldsmith.rl.loop import update

    model, tok = _model(tiny)
    cfg = RLConfig(updates_per_iteration=steps, gradient_checkpointing=setting)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device)
    model.config.use_cache = False
    opt = make_optimizer(model, cfg.optimizer, lr=cfg.lr, muon_lr=cfg.muon_lr, weight_decay=0.0)
    set_checkpointing(model, setting == "on")
    episodes = rl_episodes(dataset, tok, cfg.batch_size, cfg.max_length)
    # advantages as k1.5 centres them: two tasks' samples above and below their mean
    items = [(e, a) for e, a in zip(episodes, (0.5, -0.5, 0.25, -0.25), strict=True)]
    t0 = time.monotonic()
    r = update(model, opt, items, cfg, device)
    seconds = time.monotonic() - t0
    print(
        json.dumps(
            {
                "gradient_checkpointing": setting,
                # the reference pass (no gradients) is part of a round's update, so of its time
                "s_per_step": round(seconds / steps, 1),
                "tokens_per_s": round(steps * cfg.batch_size * cfg.max_length / seconds, 1),
                "losses": [round(x, 5) for x in r["loss"]],
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "peak_cuda_mb": round(torch.cuda.max_memory_allocated() / 2**20) if device == "cuda" else None,
            }
        ),
        flush=True,
    )


def memory(steps: int, tiny: bool, rl: bool = False) -> None:
    import subprocess

    tmp = Path(tempfile.mkdtemp(prefix="ws-bench-mem-"))
    dataset = packed_dataset(tmp / "export")
    results = {}
    for setting in ("off", "on"):
        cmd = [sys.executable, __file__, "--memory-child", setting, "--dataset", str(dataset), "--steps", str(steps)]
        cmd += ["--tiny"] if tiny else []
        done = subprocess.run(cmd + (["--rl"] if rl else []), capture_output=True, text=True, check=True)
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
    name = f"{'rl' if rl else 'finetune'}-memory{'-tiny' if tiny else ''}.json"
    shape = (
        {"optimizer": "muon", "episodes_per_step": 4, "episode_tokens": 2048, "stage": "rl"}
        if rl
        else {"optimizer": "muon", "batch": 4, "row_tokens": 2048, "packing": True}
    )
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
    p.add_argument("--rl", action="store_true", help="with --memory: the RL stage's update instead of SFT's")
    p.add_argument("--memory-child", choices=["off", "on"], help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.memory_child and a.rl:
        return rl_memory_child(a.memory_child, Path(a.dataset), a.steps, a.tiny)
    if a.memory_child:
        return memory_child(a.memory_child, Path(a.dataset), Path(a.dataset).parent / a.memory_child, a.steps, a.tiny)
    if a.memory:
        return memory(a.steps, a.tiny, a.rl)
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
