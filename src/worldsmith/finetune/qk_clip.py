"""QK-clip, the "Clip" of Kimi K2's MuonClip: after each optimizer step, every attention head
whose largest pre-softmax logit in that step's forward pass exceeded `tau` has its query and
key projections scaled down so that logit would have been exactly `tau`. K2 uses it to stop
attention logits from growing without bound under Muon; the model's function is otherwise
untouched (heads under `tau` are left alone).

How the logits are seen: the model runs through an attention function registered with
transformers (`attn_implementation="worldsmith_qk_clip"`). It records each head's largest
logit q·k·scale over the positions the mask lets it attend to (causal and padding, after
RoPE, as the softmax sees them; padding queries left out too), then hands the same tensors
to transformers' SDPA attention,
so outputs are SDPA's. The logits are computed one head at a time under `no_grad`: extra
work like one eager QKᵀ, extra memory one batch×T×T block.

Scaling, per layer, with γ_h = min(1, tau / S_h) for query head h:
- multi-head attention (a key head per query head): W_q[h] and W_k[h] by √γ_h each, as K2;
- grouped-query attention (a key head shared by several query heads): W_q[h] by γ_h, keys
  untouched, so the other heads of the group keep their logits exactly.
Biases of the projections are scaled with their weights. Llama-family attention modules
(q_proj, k_proj, head_dim, num_key_value_groups) are supported.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

ATTN_NAME = "worldsmith_qk_clip"


def _is_attention(m: nn.Module) -> bool:
    return all(hasattr(m, a) for a in ("q_proj", "k_proj", "head_dim", "num_key_value_groups"))


def _allowed(mask: torch.Tensor | None, q_len: int, k_len: int, device) -> torch.Tensor:
    """A boolean (batch|1, 1|heads, q, k) mask of the positions a query attends to."""
    if mask is None:  # SDPA's mask builder leaves it out when causal alone is enough
        return torch.ones(q_len, k_len, dtype=torch.bool, device=device).tril(k_len - q_len)[None, None]
    if mask.dtype == torch.bool:
        return mask
    return mask > torch.finfo(mask.dtype).min / 2  # an additive mask: 0 where allowed, the dtype's min where not


@torch.no_grad()
def _record(
    module: nn.Module, query: torch.Tensor, key: torch.Tensor, mask: torch.Tensor | None, scaling: float | None
) -> None:
    heads, rep = query.shape[1], module.num_key_value_groups
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    allowed = _allowed(mask, query.shape[2], key.shape[2], query.device)
    real = getattr(module, "_qk_real_queries", None)  # (batch, q) True for tokens that are not padding
    if real is not None and real.shape == query.shape[:1] + query.shape[2:3]:
        allowed = allowed & real[:, None, :, None].to(allowed.device)
    out = torch.empty(heads, dtype=torch.float32, device=query.device)
    for h in range(heads):
        logits = (query[:, h].float() @ key[:, h // rep].float().transpose(-1, -2)) * scale
        keep = allowed[:, 0 if allowed.shape[1] == 1 else h]
        out[h] = logits.masked_fill(~keep, float("-inf")).max()
    seen = getattr(module, "_qk_max", None)
    module._qk_max = out if seen is None else torch.maximum(seen, out)


def _attention(
    module: nn.Module,
    query,
    key,
    value,
    attention_mask,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
):
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    if module.training:
        _record(module, query, key, attention_mask, scaling)
    return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs)


def register() -> str:
    """Register the recording attention (and SDPA's mask builder for it) with transformers."""
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

    AttentionInterface.register(ATTN_NAME, _attention)
    ALL_MASK_ATTENTION_FUNCTIONS.register(ATTN_NAME, sdpa_mask)
    return ATTN_NAME


class QKClip:
    """`clip = QKClip(model, tau)`; train as usual; call `clip.apply()` after each `opt.step()`
    (with the HF Trainer / TRL: `callbacks=[clip.trainer_callback()]`)."""

    def __init__(self, model: nn.Module, tau: float = 100.0):
        if not tau > 0:
            raise ValueError(f"qk_clip_tau: got {tau}, expected a positive number")
        self.tau = float(tau)
        self.layers = [m for m in model.modules() if _is_attention(m)]
        if not self.layers:
            raise ValueError(f"QK-clip: {type(model).__name__} has no Llama-style attention (q_proj, k_proj) to clip")
        self._previous = model.config._attn_implementation
        model.set_attn_implementation(register())
        # the 2-D padding mask reaches the attention only as a key mask; padding *queries* are told apart here,
        # on the decoder itself, which the training loss calls directly (model.model)
        self._hook = getattr(model, "base_model", model).register_forward_pre_hook(self._note_padding, with_kwargs=True)
        self.model = model
        self._next_real: torch.Tensor | None = None
        self.clipped_heads = 0  # head clips over the run
        self.max_logit = 0.0  # the largest logit seen over the run

    def note_real_tokens(self, mask: torch.Tensor) -> None:
        """For the next forward: which tokens are real, when the model is not given a 2-D
        padding mask (packed rows, whose positions mark the examples)."""
        self._next_real = mask.bool()

    def _note_padding(self, _module, args, kwargs) -> None:
        mask = kwargs.get("attention_mask")
        real = mask.bool() if isinstance(mask, torch.Tensor) and mask.ndim == 2 else self._next_real
        self._next_real = None
        for m in self.layers:
            m._qk_real_queries = real

    def trainer_callback(self):
        """A transformers `TrainerCallback` that applies the clip after each optimizer step."""
        from transformers import TrainerCallback

        clip = self

        class QKClipCallback(TrainerCallback):
            def on_optimizer_step(self, args, state, control, **kwargs):
                clip.apply()

            def on_train_end(self, args, state, control, **kwargs):
                clip.close()

        return QKClipCallback()

    def close(self) -> None:
        """Back to the model's own attention (a saved folder must not name this one)."""
        self._hook.remove()
        self.model.set_attn_implementation(self._previous)
        for m in self.layers:
            m._qk_max = m._qk_real_queries = None

    @torch.no_grad()
    def apply(self) -> dict[str, float]:
        """Scale the heads over tau (from the logits recorded since the last call); forget them."""
        step_max, clipped = -math.inf, 0
        for m in self.layers:
            seen = getattr(m, "_qk_max", None)
            if seen is None:
                continue
            m._qk_max = None
            step_max = max(step_max, float(seen.max()))
            gamma = (self.tau / seen.clamp(min=1e-30)).clamp(max=1.0)
            over = seen > self.tau
            if not over.any():
                continue
            clipped += int(over.sum())
            d, rep = m.head_dim, m.num_key_value_groups
            q_scale = gamma if rep > 1 else gamma.sqrt()
            _scale_rows(m.q_proj, q_scale, d)
            if rep == 1:
                _scale_rows(m.k_proj, gamma.sqrt(), d)
        self.clipped_heads += clipped
        if step_max > -math.inf:
            self.max_logit = max(self.max_logit, step_max)
        return {"max_logit": step_max, "clipped_heads": clipped}


def _scale_rows(linear: nn.Linear, per_head: torch.Tensor, head_dim: int) -> None:
    factor = per_head.to(linear.weight.dtype).repeat_interleave(head_dim)
    linear.weight.mul_(factor[:, None])
    if linear.bias is not None:
        linear.bias.mul_(factor)
