"""The Muon + AdamW optimizer: the parameter split, equality with torch.optim.Muon +
torch.optim.AdamW in float64, the bf16 path, schedulers, and that it trains."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import torch.optim._muon as torch_muon  # noqa: E402

from worldsmith.finetune.muon import MuonAdamW, is_muon_param, make_optimizer, param_groups  # noqa: E402


def tiny_llama(tied: bool = True, dtype=torch.float32, seed: int = 0):
    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(
        vocab_size=97,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        tie_word_embeddings=tied,
    )
    return transformers.LlamaForCausalLM(cfg).to(dtype)


@pytest.mark.parametrize("tied", [True, False])
def test_every_parameter_is_in_exactly_one_group_and_embeddings_stay_with_adamw(tied):
    model = tiny_llama(tied)
    groups = param_groups(model, lr=1e-3, muon_lr=2e-2, weight_decay=0.1)
    ids = [id(p) for g in groups for p in g["params"]]
    assert len(ids) == len(set(ids)) == len(list(model.parameters()))
    names = {id(p): n for n, p in model.named_parameters()}
    muon = [names[id(p)] for g in groups if g["use_muon"] for p in g["params"]]
    adamw = [names[id(p)] for g in groups if not g["use_muon"] for p in g["params"]]
    assert muon and all(".layers." in n and ("proj" in n) for n in muon)
    assert "model.embed_tokens.weight" in adamw and all("norm" in n or "embed" in n or "lm_head" in n for n in adamw)
    assert ("lm_head.weight" in adamw) == (not tied)
    assert next(g for g in groups if g["use_muon"])["lr"] == 2e-2
    assert all(g["weight_decay"] == 0.0 for g in groups if g["name"] == "adamw_no_decay")
    assert not is_muon_param("model.embed_tokens.weight", model.model.embed_tokens.weight)


def _reference_newton_schulz(grad, ns_coefficients, ns_steps, eps):
    """The quintic Newton–Schulz iteration written here from the algorithm (Keller Jordan's Muon),
    not taken from worldsmith, in the gradient's own dtype (torch's casts to bfloat16, too coarse
    to compare in float64). Coefficients and step count are fixed here, not taken from the caller,
    so a change to worldsmith's defaults shows as a difference."""
    a, b, c = 3.4445, -4.7750, 2.0315
    tall = grad.shape[0] > grad.shape[1]
    x = grad.T if tall else grad  # iterate on the wide side: the Gram matrix is the smaller one
    x = x / x.norm().clamp(min=eps)  # Frobenius norm >= spectral norm: singular values start <= 1
    for _ in range(5):
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if tall else x


def _steps(model, opt, n=5, seed=1):
    gen = torch.Generator().manual_seed(seed)
    for _ in range(n):
        for p in model.parameters():
            p.grad = torch.randn(p.shape, generator=gen, dtype=p.dtype)
        opt.step()


def test_equal_to_torch_muon_plus_adamw_in_float64(monkeypatch):
    monkeypatch.setattr(torch_muon, "_zeropower_via_newtonschulz", _reference_newton_schulz)
    ours_model = tiny_llama(dtype=torch.float64)
    ref_model = copy.deepcopy(ours_model)
    ours = make_optimizer(ours_model, "muon", lr=1e-3, muon_lr=2e-2, weight_decay=0.1, ns_dtype=torch.float64)
    groups = param_groups(ref_model, lr=1e-3, muon_lr=2e-2, weight_decay=0.1)
    ref_muon = torch.optim.Muon(
        [p for g in groups if g["use_muon"] for p in g["params"]],
        lr=2e-2,
        weight_decay=0.1,
        adjust_lr_fn="match_rms_adamw",
    )
    ref_adamw = torch.optim.AdamW(
        [{"params": g["params"], "weight_decay": g["weight_decay"]} for g in groups if not g["use_muon"]],
        lr=1e-3,
        betas=(0.9, 0.95),
        eps=1e-8,
        foreach=False,
    )

    class Both:
        def step(self):
            ref_muon.step()
            ref_adamw.step()

    _steps(ours_model, ours)
    _steps(ref_model, Both())
    worst = max(
        (a - b).abs().max().item() for a, b in zip(ours_model.parameters(), ref_model.parameters(), strict=True)
    )
    moved = max(
        (a - b).abs().max().item()
        for a, b in zip(ours_model.parameters(), tiny_llama(dtype=torch.float64).parameters(), strict=True)
    )
    assert worst < 1e-12 and moved > 1e-3, worst  # ~1e-16 seen: float64 rounding of a differently ordered sum


def test_the_bfloat16_path_is_torchs_own():
    ours_model = tiny_llama()
    ref_model = copy.deepcopy(ours_model)
    muon_params = lambda m: [p for n, p in m.named_parameters() if is_muon_param(n, p)]  # noqa: E731
    ours = MuonAdamW(
        [{"params": muon_params(ours_model), "use_muon": True}], lr=2e-2, weight_decay=0.1, ns_dtype=torch.bfloat16
    )
    ref = torch.optim.Muon(muon_params(ref_model), lr=2e-2, weight_decay=0.1, adjust_lr_fn="match_rms_adamw")
    _steps(ours_model, ours, n=2)
    _steps(ref_model, ref, n=2)
    assert all(torch.equal(a, b) for a, b in zip(muon_params(ours_model), muon_params(ref_model), strict=True))


def test_a_scheduler_scales_every_group_and_adamw_is_the_baseline():
    model = tiny_llama()
    opt = make_optimizer(model, "muon", lr=1e-3, muon_lr=2e-2)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 0.5)
    assert [g["lr"] for g in opt.param_groups] == [1e-2, 5e-4, 5e-4]
    opt.step()  # no gradients: nothing moves
    sched.step()
    baseline = make_optimizer(model, "adamw", lr=1e-3)
    assert not any(g["use_muon"] for g in baseline.param_groups)
    with pytest.raises(ValueError, match="expected muon or adamw"):
        make_optimizer(model, "sgd")
    with pytest.raises(ValueError, match="2-D"):
        MuonAdamW([{"params": [model.model.norm.weight], "use_muon": True}])


@pytest.mark.parametrize("kind", ["muon", "adamw"])
def test_a_few_steps_lower_the_loss(kind):
    model = tiny_llama(seed=3)
    opt = make_optimizer(model, kind, lr=3e-3, muon_lr=2e-2, weight_decay=0.0)
    batch = torch.randint(0, 97, (4, 24), generator=torch.Generator().manual_seed(5))
    losses = []
    for _ in range(12):
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    assert losses[-1] < losses[0] * 0.8, losses
