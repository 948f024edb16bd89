"""The fine-tuning loop: fits on a screen (nanoGPT-style), plain torch, one optimizer.

Length-bucketed or packed batches, gradient accumulation, linear warmup + cosine decay,
gradient clipping, optional QK-clip (K2's MuonClip, `qk_clip_tau`), fp32 on CPU and bf16
autocast on CUDA, periodic validation loss, checkpoints (model, optimizer, scheduler, step,
RNG) written atomically and resumed from, and a stop on a non-finite or exploding loss that
keeps the last good checkpoint. The result is an HF folder (safetensors, tokenizer, the
tool-aware chat template) that vLLM serves as is.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import torch

from worldsmith.config import FinetuneConfig, resolve_path
from worldsmith.finetune.data import encode, lm_loss, load_split, make_batches, make_packed_batches, padding_fraction
from worldsmith.finetune.muon import make_optimizer
from worldsmith.finetune.qk_clip import QKClip
from worldsmith.progress import ProgressLines
from worldsmith.vocab import export_jsonl

TEMPLATE = Path(__file__).resolve().parent.parent / "llm" / "chat_templates" / "smollm2_tools.jinja"


class TrainingStopped(RuntimeError):
    """The loss went non-finite or exploded; the last good checkpoint is kept."""


@dataclass
class TrainResult:
    steps: int
    losses: list[float] = field(default_factory=list)
    val_losses: list[tuple[int, float]] = field(default_factory=list)
    seconds_per_step: float = 0.0
    tokens_per_s: float = 0.0
    padding: float = 0.0
    model_dir: Path | None = None
    resumed_from: int = 0
    peak_rss_mb: float = 0.0
    max_logits: list[float] = field(default_factory=list)  # per step, the largest attention logit (with qk_clip_tau)
    clipped_heads: int = 0  # QK-clip head rescales over the steps run
    gradient_checkpointing: bool = False  # what `gradient_checkpointing` (auto, on, off) came to
    peak_cuda_mb: float = 0.0  # on a GPU: the most memory torch allocated there during the steps


def load_base(base_model: str | None, dtype=torch.float32):
    """(model, tokenizer) with worldsmith's tool template: an HF folder, or the packaged GGUF."""
    import transformers

    if base_model:
        model = transformers.AutoModelForCausalLM.from_pretrained(base_model, dtype=dtype)
        tok = transformers.AutoTokenizer.from_pretrained(base_model)
    else:
        from worldsmith.llm.convert_gguf import load_dense
        from worldsmith.llm.server import packaged_gguf

        gguf = packaged_gguf()
        model = load_dense(gguf, dtype)  # dequantized: trainable, and save_pretrained accepts it
        tok = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tok.chat_template = TEMPLATE.read_text()  # the same template every engine serves with
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return model, tok


def dense_base(cache_dir: Path | str, log: Callable[[str], Any] = print) -> Path:
    """The packaged GGUF de-quantised into an HF folder, as `make finetune` starts from it (fp32, the
    same template), so the base model can be served through the same conversion as a tuned one:
    an eval then compares models at equal precision, not a 4-bit base with an f16 tuned model."""
    from worldsmith.llm.server import packaged_gguf

    gguf = packaged_gguf()
    folder = Path(cache_dir).expanduser() / f"{gguf.stem}-dense"
    marker = folder / "worldsmith-base.json"
    made_from = {"gguf": gguf.name, "size": gguf.stat().st_size, "template": TEMPLATE.read_text()}
    if marker.exists() and json.loads(marker.read_text()) == made_from:
        return folder
    log(f"de-quantising {gguf.name} into {folder} (the tuned models' starting point, served the same way)")
    folder.parent.mkdir(parents=True, exist_ok=True)
    save_model(*load_base(None), folder)
    marker.write_text(json.dumps(made_from))
    return folder


def activation_bytes(model, tokens: int, cuda: bool) -> int:
    """What the activations a backward pass keeps weigh for a micro-batch of `tokens`: about 34 bytes
    per token, layer and hidden unit at 16-bit (Korthikanti et al. 2022, with fused attention), twice
    that in fp32 (the CPU path)."""
    c = model.config
    per = 34 if cuda else 68
    return tokens * c.hidden_size * c.num_hidden_layers * per


def state_bytes(model) -> int:
    """Weights, gradients and optimizer state in fp32: 16 bytes a parameter (AdamW's two moments;
    Muon keeps one, so this errs toward checkpointing)."""
    return 16 * sum(p.numel() for p in model.parameters())


def use_checkpointing(cfg: FinetuneConfig, model, longest_batch_tokens: int, cuda: bool) -> bool:
    """`gradient_checkpointing` resolved: auto pays (recomputation costs about a forward pass a step)
    when the longest micro-batch's activations would outweigh the weights and optimizer state."""
    if cfg.gradient_checkpointing != "auto":
        return cfg.gradient_checkpointing == "on"
    return activation_bytes(model, longest_batch_tokens, cuda) > state_bytes(model)


def set_checkpointing(model, on: bool) -> None:
    """Turn activation checkpointing on or off; non-reentrant, which needs no input that requires grad
    and takes the packed rows' position ids. (transformers 5 renamed the methods; 4.x has the old ones.)"""
    if hasattr(model, "activation_checkpointing_enable"):
        if on:
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        else:
            model.activation_checkpointing_disable()
    elif on:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    else:
        model.gradient_checkpointing_disable()


def lr_factor(step: int, warmup: int, total: int) -> float:
    if step < warmup:
        return (step + 1) / (warmup + 1)
    progress = (step - warmup) / max(1, total - warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))


def finetune_paths(cfg, root: Path, run_id: str | None = None, dataset: str | Path | None = None) -> tuple[Path, Path]:
    """(export folder to train on, output folder) for a pipeline config: the CLI's and the flow's."""
    ft = cfg.finetune
    run = run_id or cfg.default_run_id()
    source = (
        resolve_path(root, dataset)
        if dataset
        else (resolve_path(root, ft.dataset) if ft.dataset else resolve_path(root, cfg.export.out_dir) / run)
    )
    return source, resolve_path(root, ft.out_dir) / (ft.name or f"{run}-{ft.optimizer}")


def _checkpoint_path(out: Path) -> Path:
    return out / "checkpoints" / "last.pt"


def save_checkpoint(
    out: Path,
    step: int,
    model,
    opt,
    sched,
    losses: list[float],
    val_losses: list[tuple[int, float]],
    dataset_sha256: str,
) -> None:
    path = _checkpoint_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".pt.tmp")
    torch.save(
        {
            "step": step,
            "model": model.state_dict(),
            "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict(),
            "losses": losses,
            "val_losses": val_losses,
            "dataset_sha256": dataset_sha256,
            "rng": torch.get_rng_state(),
        },
        tmp,
    )
    tmp.replace(path)


def dataset_fingerprint(dataset: Path) -> str:
    """sha256 of the export's train and validation rows: a path says nothing when a run is
    re-exported with more examples into the same folder."""
    h = hashlib.sha256()
    for split in ("train", "validation"):
        path = export_jsonl(dataset, split)
        h.update(split.encode() + b"\0" + (path.read_bytes() if path.exists() else b"") + b"\0")
    return h.hexdigest()


def finished_result(cfg: FinetuneConfig, dataset: Path, fingerprint: str, out: Path) -> TrainResult | None:
    """The recorded result when `out` already holds this training, finished (same dataset, by its
    `fingerprint`, and config): a re-run returns it instead of re-saving the model and reporting
    the one no-op step's timing as the run's."""
    record = out / "train.json"
    if not record.exists():
        return None
    saved = json.loads(record.read_text())
    memory_only = {"gradient_checkpointing"}  # changes what a step holds, not what it computes
    now = {k: v for k, v in json.loads(json.dumps(cfg.model_dump())).items() if k not in memory_only}
    if {k: v for k, v in (saved.get("config") or {}).items() if k not in memory_only} != now:
        return None
    if "dataset_sha256" in saved:
        if saved["dataset_sha256"] != fingerprint:
            return None
    elif saved.get("dataset") != str(Path(dataset).resolve()):  # a record from before fingerprints
        return None
    if saved.get("steps") != cfg.max_steps or not Path(saved.get("model_dir", "")).exists():
        return None
    kept = {f.name for f in fields(TrainResult)} - {"model_dir", "val_losses"}
    return TrainResult(
        **{k: v for k, v in saved.items() if k in kept},
        val_losses=[tuple(v) for v in saved.get("val_losses", [])],
        model_dir=Path(saved["model_dir"]),
    )


def train(
    cfg: FinetuneConfig,
    dataset: Path,
    out: Path,
    model=None,
    tokenizer=None,
    log: Callable[[str], Any] = print,
    progress: Callable[[int, int, float, float], Any] | None = None,
) -> TrainResult:
    """Train on `dataset` (an export folder) into `out`; resumes from `out/checkpoints/last.pt`."""
    fingerprint = dataset_fingerprint(dataset)
    if (done := finished_result(cfg, dataset, fingerprint, out)) is not None:
        log(f"finetune: {out} is already trained to step {done.steps} on this dataset and config; nothing to do")
        return done
    torch.manual_seed(cfg.seed)
    if model is None:
        model, tokenizer = load_base(cfg.base_model)
    cuda = torch.cuda.is_available()
    model.to("cuda" if cuda else "cpu")
    model.config.use_cache = False
    batches, val_batches, pad = load_batches(cfg, dataset, tokenizer, log)
    longest = max(b.input_ids.numel() for b in batches)
    checkpointing = use_checkpointing(cfg, model, longest, cuda)
    if checkpointing:
        set_checkpointing(model, True)
    log(
        f"finetune: gradient checkpointing {'on' if checkpointing else 'off'} ({cfg.gradient_checkpointing}; "
        f"activations ~{activation_bytes(model, longest, cuda) / 2**30:.1f} GiB for {longest} tokens, "
        f"weights + optimizer ~{state_bytes(model) / 2**30:.1f} GiB)"
    )
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    training = Training(cfg, model, out, fingerprint, cuda, pad)
    training.result.gradient_checkpointing = checkpointing
    training.resume(dataset, log)
    training.run(batches, val_batches, progress)
    result = training.finish(log)
    if checkpointing:
        set_checkpointing(model, False)  # a training setting, not the saved model's
    result.model_dir = save_model(model, tokenizer, out / "model")
    (out / "train.json").write_text(
        json.dumps(
            {
                **{k: v for k, v in result.__dict__.items() if k != "model_dir"},
                "model_dir": str(result.model_dir),
                "dataset": str(Path(dataset).resolve()),
                "dataset_sha256": fingerprint,
                "config": cfg.model_dump(),
            },
            indent=1,
        )
    )
    return result


def load_batches(cfg: FinetuneConfig, dataset: Path, tokenizer, log: Callable[[str], Any]) -> tuple[list, list, float]:
    """(training batches, validation batches, the training batches' padding fraction); an
    export without training examples stops with the reason."""
    train_rows, val_rows = load_split(dataset, "train"), load_split(dataset, "validation")
    if not train_rows:
        raise no_examples(dataset)
    enc = [e for r in train_rows if (e := encode(tokenizer, r, cfg.max_length))]
    val = [e for r in val_rows if (e := encode(tokenizer, r, cfg.max_length))]
    if cfg.packing:
        batches = make_packed_batches(enc, cfg.batch_size, cfg.max_length, tokenizer.pad_token_id, seed=cfg.seed)
        val_batches = make_packed_batches(val, cfg.batch_size, cfg.max_length, tokenizer.pad_token_id, shuffle=False)
    else:
        batches = make_batches(enc, cfg.batch_size, tokenizer.pad_token_id, seed=cfg.seed)
        val_batches = make_batches(val, cfg.batch_size, tokenizer.pad_token_id, shuffle=False)
    pad = padding_fraction(batches)
    log(
        f"finetune: {len(enc)} training / {len(val)} validation examples, "
        f"{len(batches)} {'packed ' if cfg.packing else ''}batches, "
        f"padding {pad:.1%}, optimizer {cfg.optimizer}"
    )
    return batches, val_batches, pad


def no_examples(dataset: Path) -> ValueError:
    """The error for an export with no training examples, saying why there are none."""
    why = (
        (
            "the export is empty: the judge kept no trajectory of the run (`worldsmith judge stats` says why). "
            "The packaged SmolLM2-135M passes 0 of 16 even on hand-made single-call tasks "
            "(`python benchmarks/policy_probe.py` measures a model); "
            "a stronger agent policy on vLLM is needed"
        )
        if dataset.exists()
        else "there is no export: run the pipeline (make synth)"
    )
    return ValueError(
        f"no training examples in {export_jsonl(dataset, 'train')}: {why}; "
        "or point --dataset / finetune.dataset at an export"
    )


class Training:
    """One training run: the model with its optimizer, schedule and QK-clip, the result so far,
    the step it starts from (0, or a checkpoint's) and the tokens trained on since."""

    def __init__(self, cfg: FinetuneConfig, model, out: Path, fingerprint: str, cuda: bool, pad: float):
        self.cfg, self.model, self.out, self.fingerprint = cfg, model, out, fingerprint
        self.cuda, self.device = cuda, "cuda" if cuda else "cpu"
        ns_dtype = {"auto": None, "float32": torch.float32, "bfloat16": torch.bfloat16}[cfg.ns_dtype]
        self.opt = make_optimizer(
            model, cfg.optimizer, lr=cfg.lr, muon_lr=cfg.muon_lr, weight_decay=cfg.weight_decay, ns_dtype=ns_dtype
        )
        self.sched = torch.optim.lr_scheduler.LambdaLR(
            self.opt, lambda s: lr_factor(s, cfg.warmup_steps, cfg.max_steps)
        )
        self.clip = QKClip(model, cfg.qk_clip_tau) if cfg.qk_clip_tau else None
        self.result = TrainResult(steps=0, padding=round(pad, 4))
        self.start = 0
        self.ckpt = _checkpoint_path(out)
        self.t0, self.tokens = 0.0, 0  # when `run` started, and the tokens it trained on

    def resume(self, dataset: Path, log: Callable[[str], Any]) -> None:
        """Continue from the checkpoint in `out`, if there is one, of this same data."""
        if not self.ckpt.exists():
            return
        state = torch.load(self.ckpt, weights_only=False)
        if state.get("dataset_sha256", self.fingerprint) != self.fingerprint:  # older checkpoints carry none
            raise ValueError(
                f"{self.ckpt} was trained on other data than {dataset} (its train/validation rows changed since); "
                f"delete {self.out} to train afresh on this export, or give another output folder"
            )
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["optimizer"])
        self.sched.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"])
        result = self.result
        self.start, result.losses, result.resumed_from = state["step"], list(state["losses"]), state["step"]
        result.val_losses = [tuple(v) for v in state.get("val_losses", [])]  # older checkpoints have none
        log(f"finetune: resumed from step {self.start}")

    def run(self, batches: list, val_batches: list, progress: Callable[[int, int, float, float], Any] | None) -> None:
        """The steps from `start` to `max_steps`; a non-finite or exploding loss stops before its update."""
        cfg, result = self.cfg, self.result
        self.t0, self.tokens = time.monotonic(), 0
        first = result.losses[0] if result.losses else None
        # a log line per step when stdout is not a terminal (make finetune > log, a Prefect worker)
        lines = ProgressLines(
            "finetune",
            cfg.max_steps,
            every_n=1,
            unit=" steps",
            start=self.start,
            kept=False,
            status=lambda: (
                f"loss {result.losses[-1]:.4f} · {self.tokens / max(time.monotonic() - self.t0, 1e-9):.0f} tok/s"
                if result.losses
                else "the first step"
            ),
        )
        with lines:
            self._steps(batches, val_batches, progress, lines, first)

    def _steps(self, batches: list, val_batches: list, progress, lines: ProgressLines, first: float | None) -> None:
        cfg, result = self.cfg, self.result
        for step in range(self.start, cfg.max_steps):
            total = self.accumulate(batches, step)
            first = total if first is None else first
            if not math.isfinite(total) or total > cfg.explode_factor * first:
                self.opt.zero_grad(set_to_none=True)
                raise TrainingStopped(
                    f"step {step}: loss {total:.4g} (first {first:.4g}); "
                    f"the last good checkpoint is {self.ckpt if self.ckpt.exists() else 'none'}"
                )
            self.update()
            result.losses.append(total)
            done = step + 1
            if val_batches and (done % cfg.eval_every == 0 or done == cfg.max_steps):
                result.val_losses.append((done, evaluate(self.model, val_batches, self.device, self.cuda)))
            if done % cfg.save_every == 0 or done == cfg.max_steps:
                save_checkpoint(
                    self.out, done, self.model, self.opt, self.sched, result.losses, result.val_losses, self.fingerprint
                )
            lines.update(done)
            if progress:
                progress(done, cfg.max_steps, total, self.tokens / max(time.monotonic() - self.t0, 1e-9))

    def accumulate(self, batches: list, step: int) -> float:
        """The step's gradients over `grad_accum` micro-batches; its loss."""
        self.model.train()
        total = 0.0
        for micro in range(self.cfg.grad_accum):
            b = batches[(step * self.cfg.grad_accum + micro) % len(batches)].to(self.device)
            if self.clip and b.position_ids is not None:
                # a packed batch reaches the model without its padding mask
                self.clip.note_real_tokens(b.attention_mask)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=self.cuda):
                loss = lm_loss(self.model, b) / self.cfg.grad_accum
            loss.backward()
            total += loss.item()
            self.tokens += b.tokens
        return total

    def update(self) -> None:
        """The optimizer step on the clipped gradients, then QK-clip and the schedule."""
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.clip_grad_norm)
        self.opt.step()
        if self.clip:  # after the update, from the logits of this step's forward passes, as K2 does
            self.result.max_logits.append(round(self.clip.apply()["max_logit"], 4))
        self.sched.step()
        self.opt.zero_grad(set_to_none=True)

    def finish(self, log: Callable[[str], Any]) -> TrainResult:
        """The result with its speed, memory and QK-clip figures (the model is not saved yet)."""
        import resource

        cfg, result = self.cfg, self.result
        steps_run = cfg.max_steps - self.start
        elapsed = time.monotonic() - self.t0
        result.steps = cfg.max_steps
        result.seconds_per_step = round(elapsed / max(steps_run, 1), 3)
        result.tokens_per_s = round(self.tokens / max(elapsed, 1e-9), 1)
        result.peak_rss_mb = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        if self.cuda:
            result.peak_cuda_mb = round(torch.cuda.max_memory_allocated() / 2**20)
        if self.clip:
            self.clip.close()
            result.clipped_heads = self.clip.clipped_heads
            log(
                f"finetune: QK-clip at tau {cfg.qk_clip_tau:g}: {result.clipped_heads} head rescales in {steps_run} "
                f"steps, largest attention logit {max(result.max_logits, default=0):.2f}"
            )
        return result


@torch.no_grad()
def evaluate(model, batches, device: str, cuda: bool) -> float:
    model.eval()
    losses = []
    for b in batches:
        b = b.to(device)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=cuda):
            losses.append(lm_loss(model, b).item())
    return round(sum(losses) / len(losses), 5)


def save_model(model, tokenizer, folder: Path) -> Path:
    """An HF folder (safetensors, tokenizer, chat template), written beside and renamed in."""
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.config.use_cache = True  # training turned it off; serving wants it
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    (tmp / "chat_template.jinja").write_text(TEMPLATE.read_text())
    tc_path = tmp / "tokenizer_config.json"  # as convert_gguf writes it: loadable by transformers 4 and 5 (vLLM's)
    tc = json.loads(tc_path.read_text())
    tc["chat_template"] = TEMPLATE.read_text()
    if tc.get("tokenizer_class") == "TokenizersBackend":
        tc["tokenizer_class"] = "PreTrainedTokenizerFast"
    tc_path.write_text(json.dumps(tc, indent=2, ensure_ascii=False) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder
