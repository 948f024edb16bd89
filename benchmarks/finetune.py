"""Muon vs AdamW: seconds per step, tokens/s, validation loss after N steps and peak memory,
same data and steps. Default: SmolLM2-135M (from the packaged GGUF) on a small export made
from the hand-made order world; `--tiny` uses a tiny random Llama (seconds, for a smoke run).
A third run, Muon with QK-clip (K2's MuonClip, `--qk-clip-tau`, 0 skips it), gives the
clip's cost per step and the largest attention logit it saw.

    python benchmarks/finetune.py [--tiny] [--steps 3] [--qk-clip-tau 100] [--dataset data/exports/<run>]
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
    a = p.parse_args()
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
