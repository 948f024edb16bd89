"""The fine-tuning loop on a tiny randomly initialised Llama with SmolLM2's real tokenizer and
worldsmith's tool template: loss masking token by token, the loss falls, resume reproduces
the next steps, an exploding loss stops, and the saved folder reloads and generates."""

from __future__ import annotations

import copy
import json
import types

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from test_export import world  # noqa: E402

from worldsmith.config import ExportConfig, FinetuneConfig  # noqa: E402
from worldsmith.export.sft import build_examples, write_export  # noqa: E402
from worldsmith.finetune.data import (
    IGNORE,
    Batch,
    encode,
    lm_loss,
    load_split,
    make_batches,
    make_packed_batches,
    pack,
    padding_fraction,
)  # noqa: E402
from worldsmith.finetune.loop import TEMPLATE, TrainingStopped, train  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer():
    from worldsmith.llm.server import packaged_gguf

    gguf = packaged_gguf()
    tok = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tok.chat_template = TEMPLATE.read_text()
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    trajs, tasks, agents, verdicts = world(4, 2)
    examples, _ = build_examples("ft", ExportConfig(validation_fraction=0.3), trajs, verdicts, tasks, agents)
    out = tmp_path_factory.mktemp("export") / "ft"
    write_export(examples, out, "card")
    return out


def tiny(tokenizer, seed=0, initializer_range=0.02):
    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        tie_word_embeddings=True,
        initializer_range=initializer_range,
    )
    return transformers.LlamaForCausalLM(cfg)


def test_labels_are_exactly_the_assistant_turns(tokenizer, dataset):
    row = load_split(dataset, "train")[0]
    e = encode(tokenizer, row, max_length=4096)
    trained = [t for t, lab in zip(e["input_ids"], e["labels"], strict=True) if lab != IGNORE]
    assert all(lab in (IGNORE, t) for t, lab in zip(e["input_ids"], e["labels"], strict=True))
    expected = ""
    for m in row["messages"]:
        if m["role"] == "assistant":
            calls = "".join(
                ("\n" if (m.get("content") or i) else "")
                + '<tool_call>\n{"name": "'
                + c["function"]["name"]
                + '", "arguments": '
                + c["function"]["arguments"]
                + "}\n</tool_call>"
                for i, c in enumerate(m.get("tool_calls") or [])
            )
            expected += (m.get("content") or "") + calls + "<|im_end|>"
    assert tokenizer.decode(trained) == expected
    cut = encode(tokenizer, row, max_length=40)
    assert cut is None or len(cut["input_ids"]) == 40


def test_batches_bucket_by_length(tokenizer, dataset):
    base = load_split(dataset, "train")[0]

    def longer(k):  # the same conversation, its last reply k sentences longer (the exported rows are all one length)
        messages = copy.deepcopy(base["messages"])
        messages[-1]["content"] += " The refund goes back to your card." * k
        return {**base, "messages": messages}

    # three pairs of near-equal lengths, listed so that neighbours in this order are far apart
    enc = [encode(tokenizer, longer(k), 4096) for k in (0, 60, 30, 2, 62, 32)]
    lengths = [len(e["input_ids"]) for e in enc]
    assert max(lengths) - min(lengths) > 400
    batches = make_batches(enc, 2, tokenizer.pad_token_id)
    in_batches = sorted(sorted(b.attention_mask.sum(1).tolist()) for b in batches)
    assert in_batches == [sorted(lengths)[i : i + 2] for i in (0, 2, 4)]  # each batch: two length-neighbours
    # the same rows batched two by two in the order given, each pair padded to its longer row
    naive = 1 - sum(lengths) / sum(2 * max(lengths[i : i + 2]) for i in (0, 2, 4))
    assert padding_fraction(batches) < 0.02 and naive > 0.12, (padding_fraction(batches), naive)


def test_packing_puts_every_example_in_once_within_the_row_length(tokenizer, dataset):
    enc = [encode(tokenizer, r, 4096) for r in load_split(dataset, "train")]
    longest = max(len(e["input_ids"]) for e in enc)
    packed = make_packed_batches(enc, 2, 2 * longest, tokenizer.pad_token_id)
    assert sum(b.input_ids.shape[0] for b in packed) < len(enc)  # rows hold several examples
    assert padding_fraction(packed) <= padding_fraction(make_batches(enc, 2, tokenizer.pad_token_id))
    trained = sorted(tuple(b.labels[r][b.labels[r] != IGNORE].tolist()) for b in packed for r in range(len(b.labels)))
    assert sum(len(t) for t in trained) == sum(
        sum(x != IGNORE for x in e["labels"]) for e in enc
    )  # no label lost or doubled
    assert all(b.input_ids.shape[1] <= 2 * longest for b in packed)
    assert sum(int((b.position_ids == 0).sum()) for b in packed) == len(
        enc
    )  # positions restart once per example; padding continues
    assert sorted(i for g in pack([5, 3, 7, 2, 2, 9], 10) for i in g) == list(range(6))
    assert all(sum([5, 3, 7, 2, 2, 9][i] for i in g) <= 10 for g in pack([5, 3, 7, 2, 2, 9], 10))


def test_a_packed_row_learns_exactly_what_its_examples_learn_alone(tokenizer, dataset):
    enc = [encode(tokenizer, r, 4096) for r in load_split(dataset, "train")][:3]
    [batch] = make_packed_batches(
        enc, 1, sum(len(e["input_ids"]) for e in enc) + 7, tokenizer.pad_token_id
    )  # one row, a padding tail
    alone = [make_batches([e], 1, tokenizer.pad_token_id)[0] for e in enc]
    leaky = Batch(batch.input_ids, batch.labels, batch.attention_mask)  # the same row attending across its examples
    row, spans, order = batch.input_ids[0].tolist(), [], []
    while len(order) < 3:  # which example each stretch of the row holds, found from the tokens alone
        a = spans[-1][1] if spans else 0
        k = next(k for k, e in enumerate(enc) if k not in order and e["input_ids"] == row[a : a + len(e["input_ids"])])
        spans.append((a, a + len(enc[k]["input_ids"])))
        order.append(k)

    def only(b, a, z):  # the batch with labels on tokens a..z-1 only: lm_loss is then that example's own mean
        labels = torch.full_like(b.labels, IGNORE)
        labels[:, a:z] = b.labels[:, a:z]
        return Batch(b.input_ids, labels, b.attention_mask, b.position_ids)

    tol = 2e-6
    for seed in (0, 1, 2):
        # weights 25x the default scale: a default tiny model's logits barely depend on the context (leaky
        # attention moved the loss ~1e-5 only), these make the control differ clearly
        model = tiny(tokenizer, seed, initializer_range=0.5)
        with torch.no_grad():
            # the mean loss over labelled tokens: the token-weighted mean of each example's own loss
            own_losses, weights = [lm_loss(model, b).item() for b in alone], [b.trained_tokens for b in alone]
            expected = sum(x * w for x, w in zip(own_losses, weights, strict=True)) / sum(weights)
            assert lm_loss(model, batch).item() == pytest.approx(expected, rel=tol)
            # the examples after the first: only they could see another example
            for (a, z), k in list(zip(spans, order, strict=True))[1:]:
                own = own_losses[k]
                assert lm_loss(model, only(batch, a, z)).item() == pytest.approx(own, rel=tol), (seed, k)
                leaked = abs(lm_loss(model, only(leaky, a, z)).item() - own) / own
                assert leaked > 100 * tol, (seed, k, leaked)  # the control: attending across examples shows clearly


def _cfg(**over):
    return FinetuneConfig.model_validate(
        {
            "max_steps": 6,
            "batch_size": 2,
            "warmup_steps": 1,
            "lr": 3e-3,
            "muon_lr": 2e-2,
            "save_every": 2,
            "eval_every": 3,
            **over,
        }
    )


@pytest.mark.parametrize("optimizer", ["muon", "adamw"])
def test_training_lowers_the_loss_and_saves_a_servable_folder(tokenizer, dataset, tmp_path, optimizer):
    result = train(
        _cfg(optimizer=optimizer, max_steps=10, lr=1e-2, muon_lr=5e-2),
        dataset,
        tmp_path / "run",
        model=tiny(tokenizer),
        tokenizer=tokenizer,
        log=lambda m: None,
    )
    assert result.losses[-1] < result.losses[0] - 1.0, result.losses
    assert result.val_losses and result.val_losses[-1][0] == 10
    folder = result.model_dir
    assert (folder / "model.safetensors").exists() and (
        folder / "chat_template.jinja"
    ).read_text() == TEMPLATE.read_text()
    assert json.loads((folder / "config.json").read_text())["use_cache"] is True
    again = transformers.AutoModelForCausalLM.from_pretrained(folder)
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    ids = tok.apply_chat_template(
        [{"role": "user", "content": "Cancel o-1001"}],
        add_generation_prompt=True,
        return_tensors="pt",
        return_dict=True,
    )
    out = again.generate(**ids, max_new_tokens=5, do_sample=False)
    assert out.shape[1] == ids["input_ids"].shape[1] + 5


def interrupt_after(step, tokenizer, dataset, out):
    """Train into `out` and Ctrl-C right after `step`'s checkpoint."""

    def crash(done, total, loss, rate):
        if done == step:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(_cfg(), dataset, out, model=tiny(tokenizer), tokenizer=tokenizer, log=lambda m: None, progress=crash)


def test_resume_reproduces_the_next_steps(tokenizer, dataset, tmp_path):
    full = train(_cfg(), dataset, tmp_path / "full", model=tiny(tokenizer), tokenizer=tokenizer, log=lambda m: None)
    interrupt_after(4, tokenizer, dataset, tmp_path / "part")
    resumed = train(
        _cfg(), dataset, tmp_path / "part", model=tiny(tokenizer, seed=99), tokenizer=tokenizer, log=lambda m: None
    )
    assert resumed.resumed_from == 4
    assert resumed.losses[4:] == pytest.approx(full.losses[4:], rel=1e-5)
    # the validation curve from before the crash comes back with the checkpoint
    assert [s for s, _ in resumed.val_losses] == [s for s, _ in full.val_losses] and len(full.val_losses) >= 2
    assert [v for _, v in resumed.val_losses] == pytest.approx([v for _, v in full.val_losses], rel=1e-5)


def test_a_finished_training_rerun_returns_its_record_and_trains_nothing(tokenizer, dataset, tmp_path):
    """A re-run of a finished training (a resumed benchmark, `make finetune` twice) once loaded the
    checkpoint at its last step, re-saved the model and reported that no-op's timing as s/step."""
    first = train(_cfg(), dataset, tmp_path / "m", model=tiny(tokenizer), tokenizer=tokenizer, log=lambda m: None)
    steps = []

    def rerun(cfg):
        return train(
            cfg,
            dataset,
            tmp_path / "m",
            model=tiny(tokenizer, seed=99),
            tokenizer=tokenizer,
            log=lambda m: None,
            progress=lambda done, *_: steps.append(done),
        )

    again = rerun(_cfg())
    assert steps == [] and again.steps == 6
    assert again.losses == first.losses and len(again.losses) == 6
    assert again.val_losses == first.val_losses and again.seconds_per_step == first.seconds_per_step
    # a larger max_steps goes on from the checkpoint
    more = rerun(_cfg(max_steps=8))
    assert steps == [7, 8] and more.resumed_from == 6 and more.losses[:6] == first.losses


def test_a_checkpoint_of_other_data_stops_with_the_reason(tokenizer, dataset, tmp_path):
    """A run re-exported with more examples into the same folder once resumed the old checkpoint
    at its last step and never trained on the new rows."""
    import shutil

    data = tmp_path / "export"
    shutil.copytree(dataset, data)
    interrupt_after(2, tokenizer, data, tmp_path / "m")
    rows = (data / "jsonl" / "train.jsonl").read_text().splitlines()
    (data / "jsonl" / "train.jsonl").write_text("\n".join(rows[:-1]) + "\n")  # the export changed
    with pytest.raises(ValueError, match="trained on other data"):
        train(_cfg(), data, tmp_path / "m", model=tiny(tokenizer), tokenizer=tokenizer, log=lambda m: None)


def test_an_exploding_loss_stops_and_keeps_the_last_checkpoint(tokenizer, dataset, tmp_path):
    train(_cfg(max_steps=2), dataset, tmp_path / "x", model=tiny(tokenizer), tokenizer=tokenizer, log=lambda m: None)
    with pytest.raises(TrainingStopped, match="last good checkpoint"):
        train(
            _cfg(max_steps=4, explode_factor=0.5, lr=50.0, muon_lr=50.0),
            dataset,
            tmp_path / "x",
            model=tiny(tokenizer),
            tokenizer=tokenizer,
            log=lambda m: None,
        )
    assert (tmp_path / "x" / "checkpoints" / "last.pt").exists()


def test_finetune_paths_default_to_the_runs_export(tmp_path):
    from worldsmith.config import validate_config
    from worldsmith.finetune.loop import finetune_paths

    cfg = validate_config({"finetune": {"optimizer": "adamw"}})
    source, out = finetune_paths(cfg, tmp_path)
    run = cfg.default_run_id()
    assert source == tmp_path / "data" / "exports" / run and out == tmp_path / "data" / "models" / f"{run}-adamw"
    assert finetune_paths(cfg, tmp_path, dataset="/x/y")[0] == __import__("pathlib").Path("/x/y")


def test_qk_clip_in_the_loop_bounds_the_logits_and_saves_a_plain_folder(tokenizer, dataset, tmp_path):
    free = train(
        _cfg(max_steps=3), dataset, tmp_path / "free", model=tiny(tokenizer), tokenizer=tokenizer, log=lambda m: None
    )
    logs: list[str] = []
    clipped = train(
        _cfg(max_steps=3, qk_clip_tau=0.05),
        dataset,
        tmp_path / "clip",
        model=tiny(tokenizer),
        tokenizer=tokenizer,
        log=logs.append,
    )
    assert not free.max_logits and len(clipped.max_logits) == 3
    assert clipped.max_logits[0] > 0.05 and clipped.clipped_heads > 0  # the tiny model's logits start over this tau
    assert max(clipped.max_logits[1:]) < clipped.max_logits[0]  # and are held near it afterwards
    assert clipped.losses[0] == pytest.approx(free.losses[0], rel=1e-6)  # the first forward is SDPA's, unchanged
    assert (
        max(abs(a - b) for a, b in zip(clipped.losses[1:], free.losses[1:], strict=True)) > 1e-6
    )  # the clips change what follows
    assert any("QK-clip at tau 0.05" in line for line in logs)
    config = json.loads((clipped.model_dir / "config.json").read_text())
    assert "qk_clip" not in json.dumps(config)
    again = transformers.AutoModelForCausalLM.from_pretrained(clipped.model_dir)
    assert again.config._attn_implementation != "worldsmith_qk_clip"


def test_training_on_packed_rows_lowers_the_loss_and_resumes(tokenizer, dataset, tmp_path):
    logs: list[str] = []
    result = train(
        _cfg(packing=True, max_length=4096, max_steps=8, lr=1e-2, muon_lr=5e-2),
        dataset,
        tmp_path / "packed",
        model=tiny(tokenizer),
        tokenizer=tokenizer,
        log=logs.append,
    )
    assert result.losses[-1] < result.losses[0] - 1.0, result.losses
    assert any("packed batches" in line for line in logs)
    with_clip = train(
        _cfg(packing=True, max_length=4096, max_steps=2, qk_clip_tau=0.05),
        dataset,
        tmp_path / "clip",
        model=tiny(tokenizer),
        tokenizer=tokenizer,
        log=lambda m: None,
    )
    assert with_clip.clipped_heads > 0 and len(with_clip.max_logits) == 2


def test_an_empty_or_missing_export_stops_with_the_reason(tokenizer, tmp_path):
    empty = tmp_path / "empty"
    write_export([], empty, "card")
    with pytest.raises(ValueError, match="export is empty.*policy_probe"):
        train(_cfg(), empty, tmp_path / "out", model=tiny(tokenizer), tokenizer=tokenizer, log=lambda m: None)
    with pytest.raises(ValueError, match="there is no export: run the pipeline"):
        train(
            _cfg(),
            tmp_path / "missing",
            tmp_path / "out",
            model=tiny(tokenizer),
            tokenizer=tokenizer,
            log=lambda m: None,
        )
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_the_finetune_flow_trains_with_packing_and_qk_clip_from_the_config(tokenizer, dataset, tmp_path):
    from pathlib import Path

    import synth as synth_flows  # flows/synth.py

    base = tmp_path / "base"
    tiny(tokenizer).save_pretrained(base)
    tokenizer.save_pretrained(base)
    root = Path(__file__).resolve().parent.parent
    sets = [
        f"finetune.base_model={base}",
        f"finetune.dataset={dataset}",
        f"finetune.out_dir={tmp_path / 'models'}",
        "finetune.name=flow",
        "finetune.max_steps=2",
        "finetune.batch_size=2",
        "finetune.packing=true",
        "finetune.max_length=4096",
        "finetune.qk_clip_tau=0.05",
    ]
    counts = synth_flows.finetune.fn(config_path=str(root / "pipeline.yaml"), overrides=sets)
    assert counts["steps"] == 2 and counts["qk_clip_head_rescales"] > 0 and 0 <= counts["padding"] < 1
    saved = json.loads((tmp_path / "models" / "flow" / "train.json").read_text())
    assert (
        saved["config"]["packing"] is True and saved["config"]["qk_clip_tau"] == 0.05 and len(saved["max_logits"]) == 2
    )
    assert (tmp_path / "models" / "flow" / "model" / "model.safetensors").exists()


def _kept_by_layers(model, run):
    """(bytes of the tensors autograd keeps for backward from inside the decoder layers while `run()`
    trains, its result): the activations checkpointing is for. Checkpointed layers keep theirs
    through their own hooks, unseen here."""
    kept, inside = [0], [0]
    for layer in model.model.layers:
        layer.register_forward_pre_hook(lambda *a: inside.__setitem__(0, inside[0] + 1))
        layer.register_forward_hook(lambda *a: inside.__setitem__(0, inside[0] - 1))

    def pack(t):
        if inside[0]:
            kept[0] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = run()
    return kept[0], result


def test_gradient_checkpointing_keeps_the_layer_inputs_only_and_trains_the_same(tokenizer, dataset, tmp_path):
    def run(setting):
        model = tiny(tokenizer)
        return _kept_by_layers(
            model,
            lambda: train(
                _cfg(max_steps=3, gradient_checkpointing=setting),
                dataset,
                tmp_path / setting,
                model=model,
                tokenizer=tokenizer,
                log=lambda m: None,
            ),
        )

    kept_off, off = run("off")
    kept_on, on = run("on")
    assert on.gradient_checkpointing and not off.gradient_checkpointing
    # recomputed in backward, not kept: what stays is each layer's input (measured: 24x less)
    assert kept_off > 100_000 and kept_on < kept_off / 10, (kept_on, kept_off)
    assert on.losses == pytest.approx(off.losses, rel=1e-5)
    saved = json.loads((on.model_dir / "config.json").read_text())
    assert saved["use_cache"] is True  # the served folder is not left in a training setting


def test_auto_checkpointing_turns_on_when_activations_outweigh_the_optimizer_state():
    from worldsmith.finetune.loop import use_checkpointing

    # SmolLM2-135M's shape: 576 wide, 30 layers, 134.5M parameters (16 bytes each: 2.15 GB)
    smol = types.SimpleNamespace(
        config=types.SimpleNamespace(hidden_size=576, num_hidden_layers=30),
        parameters=lambda: [torch.empty(1).expand(134_515_008)],
    )
    auto = _cfg(gradient_checkpointing="auto")
    # 4 x 2,048 tokens in fp32 on CPU: 8192 * 576 * 30 * 68 B = 9.6 GB of activations -> on
    assert use_checkpointing(auto, smol, 4 * 2048, cuda=False)
    # 2 x 640 tokens: 1.5 GB -> off
    assert not use_checkpointing(auto, smol, 2 * 640, cuda=False)
    # on a GPU (bf16, 34 B) 4 x 1,024 tokens: 2.4 GB -> on; 2 x 1,024: 1.2 GB -> off
    assert use_checkpointing(auto, smol, 4 * 1024, cuda=True)
    assert not use_checkpointing(auto, smol, 2 * 1024, cuda=True)
    assert use_checkpointing(_cfg(gradient_checkpointing="on"), smol, 1, cuda=False)
    assert not use_checkpointing(_cfg(gradient_checkpointing="off"), smol, 10**6, cuda=False)


def test_each_step_is_a_log_line_when_stdout_is_not_a_terminal(tokenizer, dataset, tmp_path, caplog, monkeypatch):
    """`make finetune > log` printed nothing between "gradient checkpointing on" and the end: each step is a line
    (step / steps, rate, ETA, loss, tokens/s), and a resumed training counts from where it starts."""
    import logging
    import re
    import sys

    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    caplog.set_level(logging.INFO, logger="worldsmith.progress")
    train(_cfg(max_steps=3), dataset, tmp_path / "m", model=tiny(tokenizer), tokenizer=tokenizer, log=lambda m: None)
    steps = [r.getMessage() for r in caplog.records if r.getMessage().startswith("finetune: ")]
    assert [re.match(r"finetune: (\d)/3 steps", s).group(1) for s in steps] == ["0", "1", "2", "3"], steps
    assert re.search(r"finetune: 3/3 steps \(100%\) · .* · loss \d+\.\d{4} · \d+ tok/s$", steps[-1]), steps[-1]
    assert "kept" not in "".join(steps)
    caplog.clear()
    train(_cfg(max_steps=5), dataset, tmp_path / "m", model=tiny(tokenizer), tokenizer=tokenizer, log=lambda m: None)
    steps = [r.getMessage() for r in caplog.records if r.getMessage().startswith("finetune: ")]
    assert [re.match(r"finetune: (\d)/5", s).group(1) for s in steps] == ["3", "4", "5"], steps
