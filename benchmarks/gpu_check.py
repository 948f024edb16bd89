"""Muon vs AdamW on one GPU: step time, tokens/s and peak memory for a ~1B-parameter Llama-style
decoder in bf16 autocast with fp32 master weights (random weights and random token ids: no hub,
no network), at the README's GPU recipe batch (8 rows x 4096 packed tokens = 32k tokens per step),
plus the same with QK-clip (K2's MuonClip, tau 100) and torch's fused AdamW as a reference.
Goal: Muon step <= 1.15x AdamW.

Self-contained on purpose: the GPU box has PyTorch and nothing else of ours, so the model is
written here in plain torch, and the optimizer is the project's own `MuonAdamW`, loaded from
src/worldsmith/finetune/muon.py by file path (it imports only torch). The QK-clip logit
recording and head rescaling are the project's own functions from src/worldsmith/finetune/qk_clip.py,
loaded the same way (its transformers imports sit inside functions this script never calls);
a line-for-line mirror below is the fallback should that file stop loading without transformers.

    bash benchmarks/gpu_check.sh                      # on the GPU: the defaults (~1-2 minutes)
    python benchmarks/gpu_check.py --model tiny       # anywhere: a few-million-parameter smoke run
    python benchmarks/gpu_check.py [--steps 10] [--warmup 3] [--batch 8] [--length 4096] [--checkpointing]
        [--model {1b,tiny}] [--qk-clip-tau 100] [--no-torch-adamw] [--out benchmarks/results/gpu_check.json]
"""

from __future__ import annotations

import argparse
import ast
import gc
import importlib.util
import json
import math
import platform
import resource
import statistics
import sys
import time
import types
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
import torch.utils.checkpoint  # not imported by `import torch` in every version
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
MUON_PY = ROOT / "src" / "worldsmith" / "finetune" / "muon.py"
QK_CLIP_PY = ROOT / "src" / "worldsmith" / "finetune" / "qk_clip.py"
T0 = time.monotonic()  # after the imports: the shell's wall clock adds interpreter start and torch import


# ---------------------------------------------------------------- the project's code, loaded by path


def load_by_path(path: Path, name: str) -> types.ModuleType:
    """Import one file as a module without the `worldsmith` package (and its dependencies) around it.
    Refuses a file whose top-level imports need more than the stdlib and torch: that would fail
    on the GPU box, so it should fail here first, by name."""
    tree = ast.parse(path.read_text())
    top = set()
    for node in tree.body:  # module level only: imports inside functions run only if those functions do
        if isinstance(node, ast.Import):
            top |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            top.add("." if node.level else (node.module or "").split(".")[0])
    stdlib = getattr(sys, "stdlib_module_names", None)  # Python 3.10+; before that, whatever imports here

    def allowed(m: str) -> bool:
        return m in ("torch", "__future__") or (m in stdlib if stdlib else importlib.util.find_spec(m) is not None)

    foreign = sorted(m for m in top if not allowed(m))
    if foreign:
        raise ImportError(
            f"{path.relative_to(ROOT)} imports {', '.join(foreign)} at module level; the GPU box has only torch"
        )
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # registered before exec, as a normal import would be
    spec.loader.exec_module(module)
    module.top_level_imports = sorted(top)
    return module


muon = load_by_path(MUON_PY, "gpu_check_muon")


class MirrorQK:
    """Fallback only: a line-for-line mirror of qk_clip.py's `_record` (no mask given = causal, which is
    what packed rows of random tokens are here) and `QKClip.apply`/`_scale_rows`. Per head: the largest
    logit q.k*scale (after RoPE, fp32, one head at a time under no_grad, as the project computes it);
    after the step, gamma_h = min(1, tau/S_h); MHA scales W_q[h] and W_k[h] by sqrt(gamma_h), GQA scales
    W_q[h] by gamma_h and leaves keys alone."""

    @staticmethod
    @torch.no_grad()
    def _record(module, query, key, mask, scaling):
        heads, rep = query.shape[1], module.num_key_value_groups
        scale = scaling if scaling is not None else query.shape[-1] ** -0.5
        q_len, k_len = query.shape[2], key.shape[2]
        allowed = torch.ones(q_len, k_len, dtype=torch.bool, device=query.device).tril(k_len - q_len)
        out = torch.empty(heads, dtype=torch.float32, device=query.device)
        for h in range(heads):
            logits = (query[:, h].float() @ key[:, h // rep].float().transpose(-1, -2)) * scale
            out[h] = logits.masked_fill(~allowed, float("-inf")).max()
        seen = getattr(module, "_qk_max", None)
        module._qk_max = out if seen is None else torch.maximum(seen, out)

    @staticmethod
    def _scale_rows(linear, per_head, head_dim):
        factor = per_head.to(linear.weight.dtype).repeat_interleave(head_dim)
        linear.weight.mul_(factor[:, None])
        if linear.bias is not None:
            linear.bias.mul_(factor)

    @staticmethod
    @torch.no_grad()
    def apply(clip):  # QKClip.apply(self): `clip` holds layers, tau, clipped_heads, max_logit
        step_max, clipped = -math.inf, 0
        for m in clip.layers:
            seen = getattr(m, "_qk_max", None)
            if seen is None:
                continue
            m._qk_max = None
            step_max = max(step_max, float(seen.max()))
            gamma = (clip.tau / seen.clamp(min=1e-30)).clamp(max=1.0)
            over = seen > clip.tau
            if not over.any():
                continue
            clipped += int(over.sum())
            d, rep = m.head_dim, m.num_key_value_groups
            MirrorQK._scale_rows(m.q_proj, gamma if rep > 1 else gamma.sqrt(), d)
            if rep == 1:
                MirrorQK._scale_rows(m.k_proj, gamma.sqrt(), d)
        clip.clipped_heads += clipped
        if step_max > -math.inf:
            clip.max_logit = max(clip.max_logit, step_max)
        return {"max_logit": step_max, "clipped_heads": clipped}


def qk_clip_impl(which: str) -> tuple[str, object, object]:
    """(source, record(module, q, k, mask, scaling), apply(state)) from qk_clip.py, or the mirror."""
    if which == "project":
        try:
            qk = load_by_path(QK_CLIP_PY, "gpu_check_qk_clip")
            return "project (src/worldsmith/finetune/qk_clip.py)", qk._record, qk.QKClip.apply
        except (ImportError, AttributeError, SyntaxError) as e:
            print(f"note: QK-clip from qk_clip.py did not load ({e}); using the in-script mirror", flush=True)
    return "mirror (in this script)", MirrorQK._record, MirrorQK.apply


# ---------------------------------------------------------------- a Llama-style decoder in plain torch

CONFIGS = {
    # ~1B: TinyLlama/Llama-2 shapes (RoPE, GQA, SwiGLU, untied head) at 18 layers
    "1b": {"vocab": 32000, "hidden": 2048, "layers": 18, "heads": 16, "kv_heads": 8, "intermediate": 5632},
    # seconds on a CPU; GQA too, so the same QK-clip path runs
    "tiny": {"vocab": 8192, "hidden": 256, "layers": 4, "heads": 4, "kv_heads": 2, "intermediate": 704},
}


@dataclass
class Config:
    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):  # in fp32, back to the input dtype, as HF's LlamaRMSNorm
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


def _sdpa_has_gqa() -> bool:
    """torch >= 2.5 takes enable_gqa (what transformers' SDPA attention uses on CUDA without a mask)."""
    try:
        q, kv = torch.zeros(1, 2, 1, 8), torch.zeros(1, 1, 1, 8)
        F.scaled_dot_product_attention(q, kv, kv, enable_gqa=True)
        return True
    except (TypeError, RuntimeError):
        return False


_SDPA_GQA = _sdpa_has_gqa()


class Attention(nn.Module):
    """Named and shaped as transformers' LlamaAttention (q_proj, k_proj, head_dim,
    num_key_value_groups), which is what qk_clip.py's functions read."""

    def __init__(self, c: Config):
        super().__init__()
        self.head_dim = c.hidden // c.heads
        self.heads, self.kv_heads = c.heads, c.kv_heads
        self.num_key_value_groups = c.heads // c.kv_heads
        self.scaling = self.head_dim**-0.5
        self.q_proj = nn.Linear(c.hidden, c.heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(c.hidden, c.kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(c.hidden, c.kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(c.heads * self.head_dim, c.hidden, bias=False)
        self.qk_record = None  # set for the QK-clip run: record(module, q, k, mask, scaling)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        cos, sin = cos.to(q.dtype), sin.to(q.dtype)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        if self.training and self.qk_record is not None:
            # mask None = causal: the rows are packed random tokens, no padding (the project
            # passes the same None when SDPA's mask builder finds causal alone enough)
            self.qk_record(self, q, k, None, self.scaling)
        if _SDPA_GQA:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.scaling, enable_gqa=True)
        else:  # older torch: repeat the key/value heads, as transformers' repeat_kv does
            r = self.num_key_value_groups
            k, v = k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1)
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.scaling)
        return self.o_proj(o.transpose(1, 2).reshape(b, t, -1))


class MLP(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.gate_proj = nn.Linear(c.hidden, c.intermediate, bias=False)
        self.up_proj = nn.Linear(c.hidden, c.intermediate, bias=False)
        self.down_proj = nn.Linear(c.intermediate, c.hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.input_layernorm = RMSNorm(c.hidden, c.norm_eps)
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c.hidden, c.norm_eps)
        self.mlp = MLP(c)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    """Parameter names follow HF Llama (embed_tokens, lm_head, ...), so muon.py's name-based
    grouping puts embeddings and head with AdamW and the block matrices with Muon, as in training."""

    def __init__(self, c: Config, checkpointing: bool = False):
        super().__init__()
        self.config, self.checkpointing = c, checkpointing
        self.embed_tokens = nn.Embedding(c.vocab, c.hidden)
        self.layers = nn.ModuleList(Block(c) for _ in range(c.layers))
        self.norm = RMSNorm(c.hidden, c.norm_eps)
        self.lm_head = nn.Linear(c.hidden, c.vocab, bias=False)
        for m in self.modules():  # HF's initializer_range 0.02
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)

    def rope(self, t: int, device):
        d = self.config.hidden // self.config.heads
        inv = 1.0 / (self.config.rope_theta ** (torch.arange(0, d, 2, device=device, dtype=torch.float32) / d))
        freqs = torch.outer(torch.arange(t, device=device, dtype=torch.float32), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos()[None, None], emb.sin()[None, None]

    def loss(self, ids: torch.Tensor) -> torch.Tensor:
        """Mean next-token loss over every position (packed rows: all tokens are labels), the head
        over positions :-1 and fp32 logits for the cross-entropy, as the project's lm_loss."""
        cos, sin = self.rope(ids.shape[1], ids.device)
        x = self.embed_tokens(ids)
        for layer in self.layers:
            if self.checkpointing and self.training:
                x = torch.utils.checkpoint.checkpoint(layer, x, cos, sin, use_reentrant=False)
            else:
                x = layer(x, cos, sin)
        logits = self.lm_head(self.norm(x)[:, :-1]).float()
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


# ---------------------------------------------------------------- timing one variant


@dataclass
class Result:
    name: str
    batch: int
    length: int
    tokens_per_step: int
    steps: int
    step_s_mean: float
    step_s_p50: float
    step_s_min: float
    fwd_bwd_s: float  # forward + backward (QK-clip's recording happens in the forward)
    clip_grad_s: float
    optimizer_s: float  # opt.step() alone
    qk_apply_s: float  # QK-clip's rescale after the step (0 without QK-clip)
    tokens_per_s: float
    peak_mem_gib: float | None  # torch.cuda.max_memory_allocated, reset before each run; None on a CPU
    peak_reserved_gib: float | None
    loss_first: float
    loss_last: float
    qk_max_logit: float | None = None
    qk_clipped_heads: int | None = None


class Clock:
    """Per-phase times: CUDA events (no extra syncs inside a step) on a GPU, perf_counter on a CPU."""

    def __init__(self, cuda: bool):
        self.cuda, self.marks = cuda, []

    def mark(self):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            self.marks.append(e)
        else:
            self.marks.append(time.perf_counter())

    def spans(self) -> list[float]:
        if self.cuda:
            return [a.elapsed_time(b) / 1000 for a, b in zip(self.marks, self.marks[1:], strict=False)]
        return [b - a for a, b in zip(self.marks, self.marks[1:], strict=False)]


def run_variant(name: str, c: Config, a, batch: int, device: str, qk) -> Result:
    cuda = device == "cuda"
    torch.manual_seed(0)  # the same weights and tokens for every variant
    with torch.device(device):
        model = Llama(c, checkpointing=a.checkpointing)
    model.train()
    # project defaults (FinetuneConfig): lr 5e-5 for AdamW groups, muon_lr 2e-4, weight decay 0
    if name == "torch_adamw":  # reference: torch's own AdamW, fused on CUDA, the same two groups
        groups = muon.param_groups(model, a.lr, None, a.weight_decay, use_muon=False)
        opt = torch.optim.AdamW(
            groups, lr=a.lr, betas=(0.9, 0.95), weight_decay=a.weight_decay, **({"fused": True} if cuda else {})
        )
    else:  # the project's optimizer, as loop.py builds it (ns_dtype None = auto: bf16 on CUDA, fp32 on CPU)
        kind = "adamw" if name == "adamw" else "muon"
        opt = muon.make_optimizer(model, kind, lr=a.lr, muon_lr=a.muon_lr, weight_decay=a.weight_decay, ns_dtype=None)
    state = None
    if name == "muon_qk_clip":
        _, record, apply = qk
        attn = [b.self_attn for b in model.layers]
        for m in attn:
            m.qk_record = record
        # the QKClip object's state that apply() reads and updates (its __init__ needs a transformers model)
        state = types.SimpleNamespace(layers=attn, tau=float(a.qk_clip_tau), clipped_heads=0, max_logit=0.0)
    ids = torch.randint(0, c.vocab, (batch, a.length), device=device)
    params = [p for p in model.parameters() if p.requires_grad]
    times, phases, losses = [], [], []
    for step in range(a.warmup + a.steps):
        clock = Clock(cuda)
        if cuda:
            torch.cuda.synchronize()
        t = time.perf_counter()
        clock.mark()
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=cuda):
            loss = model.loss(ids)
        loss.backward()
        clock.mark()
        torch.nn.utils.clip_grad_norm_(params, 1.0)  # the loop clips every step (clip_grad_norm 1.0)
        clock.mark()
        opt.step()
        clock.mark()
        if state is not None:  # after the update, from this step's forward, as loop.py calls clip.apply()
            apply(state)
        clock.mark()
        opt.zero_grad(set_to_none=True)
        if cuda:
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - t
        losses.append(float(loss.detach()))
        if not math.isfinite(losses[-1]):
            raise RuntimeError(f"{name}: non-finite loss at step {step}")
        if step >= a.warmup:
            times.append(elapsed)
            phases.append(clock.spans())
        if step == 0:
            print(f"  {name}: first step {elapsed:.2f} s (compile/alloc warm-up), loss {losses[-1]:.3f}", flush=True)
    mean = lambda i: round(statistics.fmean(p[i] for p in phases), 4)
    gib = 1024**3
    step_mean = statistics.fmean(times)
    r = Result(
        name=name,
        batch=batch,
        length=a.length,
        tokens_per_step=batch * a.length,
        steps=a.steps,
        step_s_mean=round(step_mean, 4),
        step_s_p50=round(statistics.median(times), 4),
        step_s_min=round(min(times), 4),
        fwd_bwd_s=mean(0),
        clip_grad_s=mean(1),
        optimizer_s=mean(2),
        qk_apply_s=mean(3),
        tokens_per_s=round(batch * a.length / step_mean, 1),
        peak_mem_gib=round(torch.cuda.max_memory_allocated() / gib, 2) if cuda else None,
        peak_reserved_gib=round(torch.cuda.max_memory_reserved() / gib, 2) if cuda else None,
        loss_first=round(losses[0], 4),
        loss_last=round(losses[-1], 4),
    )
    if state is not None:
        r.qk_max_logit, r.qk_clipped_heads = round(state.max_logit, 4), state.clipped_heads
    return r


def free(device: str) -> None:
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


# ---------------------------------------------------------------- report


def table(results: list[Result], cuda: bool) -> str:
    mem = "peak mem GiB (alloc / reserved)" if cuda else "peak mem"
    head = (
        "run",
        "batch x len",
        "step s mean",
        "step s p50",
        "fwd+bwd s",
        "clip s",
        "opt.step s",
        "qk apply s",
        "tokens/s",
        mem,
        "loss first -> last",
    )
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        m = f"{r.peak_mem_gib:.2f} / {r.peak_reserved_gib:.2f}" if cuda else "n/a (CPU)"
        rows.append(
            f"| {r.name} | {r.batch} x {r.length} | {r.step_s_mean:.4f} | {r.step_s_p50:.4f} "
            f"| {r.fwd_bwd_s:.4f} | {r.clip_grad_s:.4f} | {r.optimizer_s:.4f} | {r.qk_apply_s:.4f} "
            f"| {r.tokens_per_s:,.0f} | {m} "
            f"| {r.loss_first:.3f} -> {r.loss_last:.3f} |"
        )
    return "\n".join(rows)


def ratios(results: list[Result]) -> dict[str, float]:
    by = {r.name: r for r in results}
    out = {}
    pairs = [
        ("muon_over_adamw", "muon", "adamw"),
        ("muon_qk_clip_over_muon", "muon_qk_clip", "muon"),
        ("muon_over_torch_adamw", "muon", "torch_adamw"),
        ("adamw_over_torch_adamw", "adamw", "torch_adamw"),
    ]
    for key, num, den in pairs:
        if num in by and den in by:
            out[key] = round(by[num].step_s_mean / by[den].step_s_mean, 3)
            out[key + "_p50"] = round(by[num].step_s_p50 / by[den].step_s_p50, 3)
    if "muon" in by and "adamw" in by:  # what Muon adds, in the optimizer step alone
        out["muon_minus_adamw_opt_step_s"] = round(by["muon"].optimizer_s - by["adamw"].optimizer_s, 4)
    return out


def write(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(payload, indent=1, allow_nan=False) + "\n")
    tmp.replace(path)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=sorted(CONFIGS), default=None, help="default: 1b on CUDA, tiny on a CPU")
    p.add_argument("--steps", type=int, default=None, help="timed steps per run (default 10 on CUDA, 3 on a CPU)")
    p.add_argument("--warmup", type=int, default=None, help="untimed steps first (default 3 on CUDA, 1 on a CPU)")
    p.add_argument("--batch", type=int, default=None, help="rows per step (default 8; 2 on a CPU); halved on OOM")
    p.add_argument("--length", type=int, default=None, help="tokens per row (default 4096; 256 on a CPU)")
    p.add_argument("--checkpointing", action="store_true", help="activation checkpointing per block (off by default)")
    p.add_argument("--qk-clip-tau", type=float, default=100.0, help="QK-clip threshold (K2: 100); 0 skips that run")
    p.add_argument(
        "--qk-clip-impl",
        choices=("project", "mirror"),
        default="project",
        help="project: qk_clip.py's own functions (falls back to the mirror if it won't load)",
    )
    p.add_argument("--no-torch-adamw", action="store_true", help="skip the torch.optim.AdamW (fused) reference run")
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--muon-lr", type=float, default=2e-4)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="JSON (default benchmarks/results/gpu_check.json; "
        "gpu_check-cpu.json for a CPU smoke run, so it never overwrites the GPU figure)",
    )
    a = p.parse_args()
    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    a.model = a.model or ("1b" if cuda else "tiny")
    if not cuda and a.model != "tiny":
        p.error("no CUDA here: --model 1b on a CPU would take hours; use --model tiny for a smoke run")
    a.steps = a.steps if a.steps is not None else (10 if cuda else 3)
    a.warmup = a.warmup if a.warmup is not None else (3 if cuda else 1)
    a.batch = a.batch or (8 if cuda else 2)
    a.length = a.length or (4096 if cuda else 256)
    a.out = a.out or ROOT / "benchmarks" / "results" / ("gpu_check.json" if cuda else "gpu_check-cpu.json")
    if a.steps < 1 or a.batch < 1 or a.length < 2:
        p.error("--steps and --batch must be >= 1, --length >= 2")

    c = Config(**CONFIGS[a.model])
    with torch.device("meta"):  # count without allocating
        n_params = sum(t.numel() for t in Llama(c).parameters())
        meta = Llama(c)
    n_muon = sum(t.numel() for n, t in meta.named_parameters() if muon.is_muon_param(n, t))
    del meta
    qk = qk_clip_impl(a.qk_clip_impl) if a.qk_clip_tau > 0 else None
    variants = ["adamw", "muon", *(["muon_qk_clip"] if qk else []), *([] if a.no_torch_adamw else ["torch_adamw"])]

    if not cuda:
        print(
            "=" * 100 + "\nCPU SMOKE RUN (no CUDA): tiny model in fp32 -- these numbers say the script works, "
            "they are NOT the GPU figure\n" + "=" * 100
        )
    dev_name = torch.cuda.get_device_name(0) if cuda else platform.processor() or platform.machine()
    print(
        f"torch {torch.__version__} (CUDA {torch.version.cuda}), device: {device} {dev_name}, "
        f"python {platform.python_version()}"
    )
    print(f"model {a.model}: {asdict(c)}")
    print(
        f"parameters: {n_params:,} ({n_params / 1e9:.3f} B); Muon takes {n_muon:,} (block matrices), "
        f"AdamW {n_params - n_muon:,} (embeddings, head, norms)"
    )
    print(
        f"muon.py loaded by path from {MUON_PY.relative_to(ROOT)} (top-level imports: "
        f"{', '.join(muon.top_level_imports)})"
    )
    if qk:
        print(f"QK-clip tau {a.qk_clip_tau:g}: {qk[0]}")
    precision = "bf16 autocast, fp32 master weights and optimizer state, Newton-Schulz in bf16" if cuda else "fp32"
    tf32 = "on" if torch.backends.cuda.matmul.allow_tf32 else "off"
    print(f"precision: {precision}; TF32 matmul {tf32} (torch's default, which loop.py leaves as is)")
    print(
        f"batch {a.batch} x {a.length} = {a.batch * a.length:,} tokens/step, "
        f"warmup {a.warmup} + {a.steps} timed steps, "
        f"checkpointing {'on' if a.checkpointing else 'off'}, runs: {', '.join(variants)}",
        flush=True,
    )

    payload = {
        "what": "Muon vs AdamW step time, random-weight Llama-style decoder (benchmarks/gpu_check.py)",
        "cpu_smoke": not cuda,
        "device": f"{device} {dev_name}",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "model": a.model,
        "config": asdict(c),
        "parameters": n_params,
        "muon_parameters": n_muon,
        "batch_requested": a.batch,
        "length": a.length,
        "warmup": a.warmup,
        "steps": a.steps,
        "checkpointing": a.checkpointing,
        "qk_clip_tau": a.qk_clip_tau,
        "qk_clip_impl": qk[0] if qk else None,
        "lr": a.lr,
        "muon_lr": a.muon_lr,
        "weight_decay": a.weight_decay,
        "results": [],
        "complete": False,
    }
    batch, results, oom = a.batch, [], []
    try:
        while True:
            results.clear()
            retry = False
            for name in variants:
                free(device)
                t = time.monotonic()
                try:
                    r = run_variant(name, c, a, batch, device, qk)
                except torch.cuda.OutOfMemoryError:
                    retry = True  # handled below, once the exception (and its frames' tensors) is gone
                if retry:
                    free(device)
                    oom.append({"run": name, "batch": batch})
                    print(f"  {name}: out of memory at batch {batch}; halving it, all runs again", flush=True)
                    batch //= 2
                    if batch < 1:
                        raise SystemExit("out of memory even at batch 1")
                    break
                results.append(r)
                print(
                    f"  {name}: {r.step_s_mean:.4f} s/step, {r.tokens_per_s:,.0f} tokens/s, "
                    f"peak {r.peak_mem_gib if cuda else 'n/a'} GiB ({time.monotonic() - t:.0f} s for the run, "
                    f"{time.monotonic() - T0:.0f} s so far)",
                    flush=True,
                )
                if len(results) == 1:  # the first run sizes the rest: say so, in case it is too long
                    est = (time.monotonic() - t) * len(variants)
                    print(f"  estimate for all {len(variants)} runs: ~{est:.0f} s", flush=True)
                payload.update(
                    results=[asdict(x) for x in results],
                    batch_used=batch,
                    oom_retries=oom,
                    ratios=ratios(results),
                    elapsed_s=round(time.monotonic() - T0, 1),
                )
                write(a.out, payload)  # after every run: a timeout still leaves what was measured
            if not retry:
                break
    except KeyboardInterrupt:  # gpu_check.sh's timeout sends SIGINT first: print what there is
        print("\ninterrupted: the table below holds the runs that finished", flush=True)
    finally:
        leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("transformers", "worldsmith"))
        payload["imports_only_torch"] = not leaked
        elapsed = time.monotonic() - T0
        payload["elapsed_s"] = round(elapsed, 1)
        payload["process_peak_rss_gib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2, 2)
        payload["complete"] = len(results) == len(variants)
        if results:
            write(a.out, payload)
    rs = ratios(results)
    print()
    if not cuda:
        print("CPU SMOKE NUMBERS (tiny model, fp32) -- not the GPU figure\n")
    print(table(results, cuda))
    print()
    if "muon_over_adamw" in rs:
        ok = rs["muon_over_adamw"] <= 1.15
        verdict = ("PASS" if ok else "FAIL") if cuda else "n/a on a CPU"
        print(
            f"Muon / AdamW step time: {rs['muon_over_adamw']:.3f} (p50 {rs['muon_over_adamw_p50']:.3f}); "
            f"goal <= 1.15: {verdict}"
        )
        print(f"Muon - AdamW in opt.step() alone: {rs['muon_minus_adamw_opt_step_s']:+.4f} s")
    if "muon_qk_clip_over_muon" in rs:
        r = next(x for x in results if x.name == "muon_qk_clip")
        print(
            f"(Muon + QK-clip) / Muon step time: {rs['muon_qk_clip_over_muon']:.3f} "
            f"(p50 {rs['muon_qk_clip_over_muon_p50']:.3f}); largest logit {r.qk_max_logit}, "
            f"{r.qk_clipped_heads} head rescales at tau {a.qk_clip_tau:g}"
        )
    if "muon_over_torch_adamw" in rs:
        print(
            f"Muon / torch AdamW{' (fused)' if cuda else ''}: {rs['muon_over_torch_adamw']:.3f}; "
            f"project AdamW / torch AdamW: {rs['adamw_over_torch_adamw']:.3f}"
        )
    if batch != a.batch:
        print(f"batch used: {batch} (asked {a.batch}; out of memory at {', '.join(str(o['batch']) for o in oom)})")
    print(f"imports: {'torch only, no transformers or worldsmith' if not leaked else 'LEAKED ' + ', '.join(leaked)}")
    print(f"elapsed {elapsed:.0f} s (in the script, after imports); JSON: {a.out}")
    if leaked:
        return 1
    return 0 if payload["complete"] else 2


if __name__ == "__main__":
    sys.exit(main())
