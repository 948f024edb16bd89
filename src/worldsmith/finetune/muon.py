"""One optimizer for Muon + AdamW, as Moonlight trains: Muon for the 2-D weight matrices
inside the transformer blocks, AdamW for embeddings, the output head, norms and biases.

Why one class: the HF Trainer and TRL take exactly one `torch.optim.Optimizer`
(`optimizers=(opt, None)`), and a plain loop stays one `opt.step()`. Parameter groups carry
`use_muon`; a learning-rate scheduler scales every group's `lr` as usual.

The math follows `torch.optim.Muon` (Nesterov momentum 0.95, 5 Newton–Schulz steps with
the quintic coefficients, decoupled weight decay, Moonlight's `match_rms_adamw` scaling
0.2·√max(A, B)) and `torch.optim.AdamW`, and is tested equal to them in float64. One
difference: torch runs Newton–Schulz in bfloat16 always, ~25× slower than float32 on a CPU
without bf16 hardware; here `ns_dtype` is bfloat16 on CUDA and float32 elsewhere by default.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch
from torch import nn

NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
# names of parameters that stay with AdamW although they are 2-D: embeddings and output heads
ADAMW_NAMES = ("embed", "lm_head", "wte", "wpe", "output", "head")


def newton_schulz(
    update: torch.Tensor,
    coefficients=NS_COEFFICIENTS,
    steps: int = 5,
    eps: float = 1e-7,
    dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """The quintic Newton–Schulz orthogonalisation of a 2-D update (as torch.optim.Muon does it)."""
    a, b, c = coefficients
    x = update.to(dtype or update.dtype)
    tall = update.size(0) > update.size(1)
    if tall:
        x = x.T
    x = x / x.norm().clamp(min=eps)
    for _ in range(steps):
        gram = x @ x.T
        x = torch.addmm(x, torch.addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x.T if tall else x


def adjusted_lr(lr: float, shape: torch.Size, fn: str | None) -> float:
    A, B = shape[:2]
    if fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(A, B))
    if fn in (None, "original"):
        return lr * math.sqrt(max(1, A / B))
    return lr


def is_muon_param(name: str, p: torch.Tensor) -> bool:
    """Muon takes the 2-D matrices inside the blocks; selected by name, not by `ndim` alone
    (the embedding and a tied or untied head are 2-D too)."""
    return p.ndim == 2 and not any(k in name.lower() for k in ADAMW_NAMES)


def param_groups(
    model: nn.Module, lr: float, muon_lr: float | None, weight_decay: float, use_muon: bool = True
) -> list[dict[str, Any]]:
    """Two groups (Muon, AdamW); with `use_muon=False` one AdamW group (the baseline).
    No weight decay on norms and biases (1-D)."""
    muon, decay, no_decay = [], [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if use_muon and is_muon_param(name, p):
            muon.append(p)
        elif p.ndim >= 2:
            decay.append(p)
        else:
            no_decay.append(p)
    groups = [
        {"params": decay, "use_muon": False, "lr": lr, "weight_decay": weight_decay, "name": "adamw"},
        {"params": no_decay, "use_muon": False, "lr": lr, "weight_decay": 0.0, "name": "adamw_no_decay"},
    ]
    if muon:
        groups.insert(
            0,
            {
                "params": muon,
                "use_muon": True,
                "lr": muon_lr if muon_lr is not None else lr,
                "weight_decay": weight_decay,
                "name": "muon",
            },
        )
    return [g for g in groups if g["params"]]


class MuonAdamW(torch.optim.Optimizer):
    def __init__(
        self,
        params: Iterable[dict[str, Any]],
        lr: float = 2e-4,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_steps: int = 5,
        ns_coefficients: tuple[float, float, float] = NS_COEFFICIENTS,
        eps: float = 1e-7,
        adjust_lr_fn: str | None = "match_rms_adamw",
        betas: tuple[float, float] = (0.9, 0.95),
        adam_eps: float = 1e-8,
        ns_dtype: torch.dtype | None = None,
    ):
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_steps": ns_steps,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "adjust_lr_fn": adjust_lr_fn,
            "betas": betas,
            "adam_eps": adam_eps,
            "use_muon": False,
            "ns_dtype": ns_dtype,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            if group["use_muon"] and any(p.ndim != 2 for p in group["params"]):
                raise ValueError("a use_muon group may only hold 2-D parameters")

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, wd = group["lr"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad, state = p.grad, self.state[p]
                if group["use_muon"]:
                    buf = state.setdefault("momentum_buffer", torch.zeros_like(grad))
                    buf.lerp_(grad, 1 - group["momentum"])
                    update = grad.lerp(buf, group["momentum"]) if group["nesterov"] else buf
                    dtype = group["ns_dtype"] or (torch.bfloat16 if p.is_cuda else torch.float32)
                    ortho = newton_schulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"], dtype)
                    p.mul_(1 - lr * wd)
                    p.add_(ortho.to(p.dtype), alpha=-adjusted_lr(lr, p.shape, group["adjust_lr_fn"]))
                else:  # AdamW, as torch.optim.AdamW computes it
                    beta1, beta2 = group["betas"]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = torch.zeros_like(p)
                        state["exp_avg_sq"] = torch.zeros_like(p)
                    state["step"] += 1
                    step = state["step"]
                    p.mul_(1 - lr * wd)
                    state["exp_avg"].lerp_(grad, 1 - beta1)
                    state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    denom = (state["exp_avg_sq"].sqrt() / math.sqrt(1 - beta2**step)).add_(group["adam_eps"])
                    p.addcdiv_(state["exp_avg"], denom, value=-lr / (1 - beta1**step))
        return loss


def make_optimizer(
    model: nn.Module,
    kind: str = "muon",
    lr: float = 2e-4,
    muon_lr: float | None = None,
    weight_decay: float = 0.1,
    ns_dtype: torch.dtype | None = None,
    betas: tuple[float, float] = (0.9, 0.95),
) -> MuonAdamW:
    """`kind="muon"`: Muon for the block matrices + AdamW; `"adamw"`: AdamW for everything."""
    if kind not in ("muon", "adamw"):
        raise ValueError(f"optimizer: got {kind!r}, expected muon or adamw")
    return MuonAdamW(
        param_groups(model, lr, muon_lr, weight_decay, use_muon=kind == "muon"),
        lr=lr,
        weight_decay=weight_decay,
        ns_dtype=ns_dtype,
        betas=betas,
    )
