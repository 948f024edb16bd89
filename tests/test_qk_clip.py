"""QK-clip (K2's MuonClip): the recorded logits are the largest q·k the softmax sees (causal,
padding left out, after RoPE), outputs stay SDPA's, and a clip brings exactly the heads over
tau down to tau, for multi-head and grouped-query attention."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from transformers.models.llama.modeling_llama import apply_rotary_pos_emb  # noqa: E402

from worldsmith.finetune.qk_clip import QKClip  # noqa: E402

PAD = 0


def model(kv_heads: int, layers: int = 2, seed: int = 0):
    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=kv_heads,
        max_position_embeddings=64,
        attention_bias=True,
    )
    m = transformers.LlamaForCausalLM(cfg)
    with torch.no_grad():
        m.model.embed_tokens.weight[PAD] *= (
            200  # a padding token whose query would carry the largest logit if it were counted
        )
        for layer in m.model.layers:  # logits large enough to be worth clipping
            layer.self_attn.q_proj.weight.mul_(8)
            layer.self_attn.k_proj.weight.mul_(8)
    return m


def batch():
    torch.manual_seed(1)
    ids = torch.randint(1, 64, (2, 10))
    mask = torch.ones(2, 10, dtype=torch.long)
    ids[1, 6:], mask[1, 6:] = PAD, 0  # right padding, as the training batches have it
    return ids, mask


def brute_force_max(m, ids, mask) -> list[torch.Tensor]:
    """Per layer, per query head: the largest scaled q·k over real query tokens and the keys they attend to."""
    seen = {}

    def grab(module, args, kwargs):
        seen[module] = (kwargs.get("hidden_states", args[0] if args else None), kwargs["position_embeddings"])

    hooks = [layer.self_attn.register_forward_pre_hook(grab, with_kwargs=True) for layer in m.model.layers]
    with torch.no_grad():
        m.eval()
        m(input_ids=ids, attention_mask=mask)
    for h in hooks:
        h.remove()
    out = []
    for layer in m.model.layers:
        a = layer.self_attn
        hidden, (cos, sin) = seen[a]
        b, t, _ = hidden.shape
        q = a.q_proj(hidden).view(b, t, -1, a.head_dim).transpose(1, 2)
        k = a.k_proj(hidden).view(b, t, -1, a.head_dim).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        k = k.repeat_interleave(a.num_key_value_groups, dim=1)
        logits = (q @ k.transpose(-1, -2)) * a.head_dim**-0.5
        real = mask.bool()
        allowed = (
            torch.ones(t, t, dtype=torch.bool).tril()[None, None] & real[:, None, :, None] & real[:, None, None, :]
        )
        out.append(logits.masked_fill(~allowed, float("-inf")).amax(dim=(0, 2, 3)))
    return out


def recorded(clip: QKClip, m, ids, mask) -> list[torch.Tensor]:
    m.train()  # dropout is 0: train mode only switches recording on
    m.model(input_ids=ids, attention_mask=mask)  # the decoder, as the training loss calls it
    out = [layer._qk_max.clone() for layer in clip.layers]
    for layer in clip.layers:
        layer._qk_max = None
    return out


@pytest.mark.parametrize("kv_heads", [4, 2], ids=["mha", "gqa"])
def test_recorded_logits_are_the_largest_the_softmax_sees_and_outputs_are_unchanged(kv_heads):
    m = model(kv_heads)
    ids, mask = batch()
    m.eval()
    before = m(input_ids=ids, attention_mask=mask).logits
    expected = brute_force_max(m, ids, mask)
    clip = QKClip(m, tau=1e9)
    got = recorded(clip, m, ids, mask)
    for e, g in zip(expected, got, strict=True):
        assert torch.allclose(e, g, rtol=1e-5), (e, g)
    m.eval()
    assert torch.allclose(m(input_ids=ids, attention_mask=mask).logits, before, atol=1e-5)
    # counting the padding queries would have given a larger maximum: the test can tell
    everything = brute_force_max(m, ids, torch.ones_like(mask))
    assert any((a > b + 1e-3).any() for a, b in zip(everything, got, strict=True))


@pytest.mark.parametrize("kv_heads", [4, 2], ids=["mha", "gqa"])
def test_a_clip_brings_the_heads_over_tau_to_tau_and_leaves_the_others(kv_heads):
    m = model(kv_heads, layers=1)
    ids, mask = batch()
    clip = QKClip(m, tau=1e9)
    first = recorded(clip, m, ids, mask)[0]
    clip.tau = float(first.median())
    over = first > clip.tau
    assert 0 < over.sum() < len(first)
    a = m.model.layers[0].self_attn
    wq, wk = a.q_proj.weight.detach().clone(), a.k_proj.weight.detach().clone()
    recorded_again = recorded(clip, m, ids, mask)[0]  # apply() reads what the last forward recorded
    m(input_ids=ids, attention_mask=mask)
    stats = clip.apply()
    assert stats["clipped_heads"] == int(over.sum()) and stats["max_logit"] == pytest.approx(
        float(recorded_again.max())
    )
    after = recorded(clip, m, ids, mask)[0]
    assert torch.allclose(after[over], torch.full_like(after[over], clip.tau), rtol=1e-4)
    assert torch.allclose(after[~over], first[~over], rtol=1e-5)
    gamma = (clip.tau / first).clamp(max=1).repeat_interleave(a.head_dim)
    if kv_heads == 4:  # one key head per query head: √γ on each side, as K2
        assert torch.allclose(a.q_proj.weight, wq * gamma.sqrt()[:, None]) and torch.allclose(
            a.k_proj.weight, wk * gamma.sqrt()[:, None]
        )
    else:  # shared key heads: the query takes all of γ and the keys stay
        assert torch.allclose(a.q_proj.weight, wq * gamma[:, None]) and torch.equal(a.k_proj.weight, wk)


def test_nothing_under_tau_is_touched_and_close_restores_the_attention():
    m = model(2)
    ids, mask = batch()
    clip = QKClip(m, tau=1e9)
    state = {k: v.clone() for k, v in m.state_dict().items()}
    m.train()
    m(input_ids=ids, attention_mask=mask)
    assert clip.apply()["clipped_heads"] == 0
    assert all(torch.equal(v, m.state_dict()[k]) for k, v in state.items())
    clip.close()
    assert m.config._attn_implementation == "sdpa"
    m(input_ids=ids, attention_mask=mask)
    assert all(layer._qk_max is None for layer in clip.layers)  # no longer recording


def test_a_bad_tau_or_a_model_without_attention_is_refused():
    with pytest.raises(ValueError, match="qk_clip_tau"):
        QKClip(model(2), tau=0)
    with pytest.raises(ValueError, match="no Llama-style attention"):
        QKClip(torch.nn.Linear(2, 2), tau=10)


def test_the_hf_trainer_applies_the_clip_through_a_callback(tmp_path):
    from worldsmith.finetune.muon import make_optimizer

    m = model(2)
    ids, mask = batch()
    rows = [
        {"input_ids": i, "attention_mask": a, "labels": i.masked_fill(a == 0, -100)}
        for i, a in zip(ids, mask, strict=True)
    ] * 2
    clip = QKClip(m, tau=1e9)
    start = recorded(clip, m, ids, mask)
    clip.tau = float(min(s.min() for s in start)) / 2  # every head is over: each step must rescale all of them
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=2,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        logging_strategy="no",
        learning_rate=1e-3,
    )
    trainer = transformers.Trainer(
        model=m,
        args=args,
        train_dataset=rows,
        optimizers=(make_optimizer(m, "muon", lr=1e-3), None),
        callbacks=[clip.trainer_callback()],
    )
    applied = []
    real_apply = clip.apply
    clip.apply = lambda: applied.append(real_apply()) or applied[-1]
    trainer.train()
    assert len(applied) == 2  # once per optimizer step
    assert applied[0]["clipped_heads"] == sum(len(s) for s in start)  # the first rescaled every head of both layers
    assert clip.clipped_heads == sum(a["clipped_heads"] for a in applied) and clip.max_logit == max(
        a["max_logit"] for a in applied
    )  # the run's totals
    assert m.config._attn_implementation == "sdpa"  # closed at the end of training


def test_a_packed_row_records_what_its_examples_record_alone():
    m = model(2)
    ids, _ = batch()
    a, b = ids[0], ids[1, :6]
    clip = QKClip(m, tau=1e9)
    alone = [recorded(clip, m, x[None], torch.ones(1, len(x), dtype=torch.long)) for x in (a, b)]
    row = torch.cat([a, b, torch.full((3,), PAD)])[None]
    positions = torch.cat([torch.arange(10), torch.arange(6), torch.arange(6, 9)])[None]  # the padding tail continues b
    real = torch.tensor([[1] * 16 + [0] * 3])
    m.train()
    clip.note_real_tokens(real)
    m.model(input_ids=row, position_ids=positions, use_cache=False)
    packed = [layer._qk_max.clone() for layer in clip.layers]
    for got, x, y in zip(packed, *alone, strict=True):
        assert torch.allclose(got, torch.maximum(x, y), rtol=1e-5)
