"""Convert a Hugging Face Llama-architecture folder (LlamaForCausalLM: SmolLM2 and what
`worldsmith finetune` makes of it) into a GGUF that llama.cpp serves.

llama.cpp's own convert_hf_to_gguf.py is not installed (the xllamacpp wheel has none), and
llama.cpp serves SmolLM2 5-8x faster than vLLM's CPU build, so `worldsmith serve --model
FOLDER` converts here, with the `gguf` package:

- tensors: HF names mapped to GGUF names (gguf's own name map), in f16 (2-D weights; norms
  stay f32, as llama.cpp's converter does) or f32; Q and K rows permuted from HF's rotate-half
  layout back to the interleaved one llama.cpp's rope expects (transformers undid it on load);
- hyperparameters from config.json (the `llama.*` keys);
- tokenizer: built from tokenizer.json (byte-level BPE: tokens by id, their types, merges).
  When the vocabulary is the packaged SmolLM2's, token for token (any SmolLM2 fine-tune), the
  tokenizer keys are copied from the packaged GGUF instead, so llama.cpp tokenizes exactly as
  it does the base model (its pre-tokenizer name, `smollm`, is not in tokenizer.json);
- the chat template: the folder's (worldsmith's tool template), so a harness that runs the
  GGUF elsewhere gets the template the model was trained with.

The GGUF goes to the model cache (`llm.server.model_cache_dir`), never into the model folder
(a user's folder is not ours to fill with a second copy of the weights):
`<cache>/<folder name>-<key>.gguf`, the key a hash of what it is built from (the names, sizes
and times of the weights, config, tokenizer and template files, the dtype, the converter's
version). An unchanged folder, even moved, reuses it; a changed one is converted again and the
older conversion of the same folder removed. It is written as a temporary file and renamed;
`<gguf>.json` records what it was built from and the folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from worldsmith.llm.packaged import ServerError, packaged_gguf

# gguf, numpy, torch and safetensors are imported inside the functions that use them, on
# purpose: they are the train extra, and llm/server.py imports this module for every serve
# (a GGUF needs none of them; serve_config turns their ImportError into advice).

VERSION = 1  # of the conversion: a new one rebuilds every cached GGUF
ARCHITECTURES = ("LlamaForCausalLM",)
SOURCE_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja")
DTYPES = ("f16", "f32")


class UnsupportedModel(ValueError):
    """The folder is not a model this converter writes (serve it with vLLM instead)."""


# ------------------------------------------------------------------------ reading the folder


def read_config(folder: Path) -> dict[str, Any]:
    try:
        cfg = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise UnsupportedModel(f"{folder}: no readable config.json ({exc})") from None
    arch = cfg.get("architectures") or []
    if not any(a in ARCHITECTURES for a in arch):
        raise UnsupportedModel(
            f"{folder}: architecture {arch or '?'}; the GGUF converter writes {', '.join(ARCHITECTURES)} only"
        )
    problems = []
    if cfg.get("attention_bias") or cfg.get("mlp_bias"):
        problems.append("biases in attention or MLP")
    if cfg.get("hidden_act", "silu") != "silu":
        problems.append(f"activation {cfg.get('hidden_act')}")
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters") or {}
    if rope.get("rope_type", rope.get("type", "default")) not in ("default", None):
        problems.append(f"rope scaling {rope.get('rope_type') or rope.get('type')}")
    if problems:
        raise UnsupportedModel(f"{folder}: {', '.join(problems)}: not written by this converter")
    return cfg


def rope_theta(cfg: dict[str, Any]) -> float:
    # transformers 5 keeps it under rope_parameters; 4.x at the top level
    return float((cfg.get("rope_parameters") or {}).get("rope_theta") or cfg.get("rope_theta") or 10000.0)


def weight_files(folder: Path) -> list[Path]:
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise UnsupportedModel(f"{folder}: no *.safetensors weights")
    return files


def fingerprint(folder: Path, dtype: str) -> dict[str, Any]:
    """What a GGUF is built from: a change to any of these files rebuilds it."""
    files = {}
    for p in [*weight_files(folder), *(folder / n for n in SOURCE_FILES)]:
        if p.exists():
            st = p.stat()
            files[p.name] = [st.st_size, st.st_mtime_ns]
    return {"version": VERSION, "dtype": dtype, "files": files}


# ------------------------------------------------------------------------ tokenizer


def _token_content(value: Any) -> str | None:
    return value.get("content") if isinstance(value, dict) else value


def hf_tokenizer(folder: Path, vocab_size: int) -> dict[str, Any]:
    """The GGUF tokenizer keys from tokenizer.json (byte-level BPE): tokens in id order,
    their types (control for special added tokens), merges, the special token ids."""
    import gguf

    try:
        tj = json.loads((folder / "tokenizer.json").read_text())
    except (OSError, ValueError) as exc:
        raise UnsupportedModel(f"{folder}: no readable tokenizer.json ({exc})") from None
    model = tj.get("model") or {}
    if model.get("type") != "BPE":
        raise UnsupportedModel(f"{folder}: tokenizer model {model.get('type')!r}; only byte-level BPE is written")
    vocab: dict[str, int] = model["vocab"]
    added = {t["id"]: t for t in tj.get("added_tokens", [])}
    size = max(vocab_size, max(vocab.values(), default=-1) + 1, max(added, default=-1) + 1)
    tokens: list[str | None] = [None] * size
    types = [int(gguf.TokenType.NORMAL)] * size
    for text, i in vocab.items():
        tokens[i] = text
    for i, t in added.items():
        tokens[i] = t["content"]
        types[i] = int(gguf.TokenType.CONTROL if t.get("special") else gguf.TokenType.USER_DEFINED)
    for i, t in enumerate(tokens):
        if t is None:  # ids the config counts but the tokenizer never makes
            tokens[i] = f"[PAD{i}]"
            types[i] = int(gguf.TokenType.UNUSED)
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    try:
        tc = json.loads((folder / "tokenizer_config.json").read_text())
    except (OSError, ValueError):
        tc = {}
    index = {t: i for i, t in enumerate(tokens)}
    ids = {}
    for key in ("bos", "eos", "unk", "pad"):
        content = _token_content(tc.get(f"{key}_token"))
        if content in index:
            ids[key] = index[content]
    pre = tj.get("pre_tokenizer") or {}
    # a lone byte-level pre-tokenizer with GPT-2's regex is llama.cpp's "gpt-2"; others are not known here
    known = pre.get("type") == "ByteLevel" and pre.get("use_regex", True) and not pre.get("add_prefix_space")
    return {
        "model": "gpt2",
        "pre": "gpt-2" if known else "default",
        "tokens": tokens,
        "token_type": types,
        "merges": merges,
        "ids": ids,
        "add_bos": bool(tc.get("add_bos_token", False)),
    }


def packaged_tokenizer() -> dict[str, Any] | None:
    """The packaged SmolLM2 GGUF's tokenizer keys (None when the model package is missing)."""
    import gguf

    try:
        reader = gguf.GGUFReader(str(packaged_gguf()))
    except ServerError:
        return None
    f = reader.fields

    def value(key: str, default: Any = None) -> Any:
        return f[key].contents() if key in f else default

    ids = {
        k: value(f"tokenizer.ggml.{name}_token_id")
        for k, name in (("bos", "bos"), ("eos", "eos"), ("unk", "unknown"), ("pad", "padding"))
    }
    return {
        "model": value("tokenizer.ggml.model"),
        "pre": value("tokenizer.ggml.pre"),
        "tokens": value("tokenizer.ggml.tokens"),
        "token_type": value("tokenizer.ggml.token_type"),
        "merges": value("tokenizer.ggml.merges"),
        "ids": {k: v for k, v in ids.items() if v is not None},
        "add_bos": bool(value("tokenizer.ggml.add_bos_token", False)),
        "add_space_prefix": value("tokenizer.ggml.add_space_prefix"),
    }


def choose_tokenizer(folder: Path, vocab_size: int) -> tuple[dict[str, Any], str]:
    """(tokenizer keys, where they came from): the packaged SmolLM2's when the vocabulary is its own."""
    derived = hf_tokenizer(folder, vocab_size)
    packaged = packaged_tokenizer()
    if packaged and packaged["tokens"] == derived["tokens"]:
        same = packaged["merges"] == derived["merges"] and packaged["token_type"] == derived["token_type"]
        note = "identical; merges and token types too" if same else "identical tokens; its merges and token types used"
        return packaged, f"the packaged SmolLM2 GGUF's (vocabulary {note})"
    warn = "" if derived["pre"] != "default" else "; pre-tokenizer unknown to this converter: llama.cpp's default regex"
    return derived, f"tokenizer.json ({len(derived['tokens']):,} tokens, {len(derived['merges']):,} merges{warn})"


# ------------------------------------------------------------------------ tensors


def permute_qk(w, n_head: int):
    """HF's rotate-half Q/K rows -> the interleaved pairs llama.cpp's rope expects (as
    convert_hf_to_gguf.py's LlamaModel.permute)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _plan(folder: Path, cfg: dict[str, Any], dtype: str) -> list[tuple[str, Path, str, tuple[int, ...], Any]]:
    """(GGUF name, file, HF name, shape, numpy dtype) of every tensor to write, read from the
    safetensors headers: the GGUF header lists them all before any data."""
    import gguf
    import numpy as np
    from safetensors import safe_open

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, cfg["num_hidden_layers"])
    tied = cfg.get("tie_word_embeddings", False)
    plan = []
    for path in weight_files(folder):
        with safe_open(str(path), framework="pt") as f:
            for hf_name in f.keys():  # noqa: SIM118 (safe_open is not a mapping)
                if hf_name.endswith("rotary_emb.inv_freq") or (tied and hf_name == "lm_head.weight"):
                    continue
                name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
                if name is None:
                    raise UnsupportedModel(f"{folder}: tensor {hf_name} has no GGUF name")
                shape = tuple(f.get_slice(hf_name).get_shape())
                plan.append(
                    (
                        name,
                        path,
                        hf_name,
                        shape,
                        np.dtype(np.float16 if dtype == "f16" and len(shape) > 1 else np.float32),
                    )
                )
    return plan


def _tensor(path: Path, hf_name: str, cfg: dict[str, Any], np_dtype):
    """One tensor as the GGUF holds it."""
    import numpy as np
    import torch
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        w = f.get_tensor(hf_name).to(torch.float32).numpy()  # via torch: numpy has no bf16
    n_head = cfg["num_attention_heads"]
    if hf_name.endswith("q_proj.weight"):
        w = permute_qk(w, n_head)
    elif hf_name.endswith("k_proj.weight"):
        w = permute_qk(w, cfg.get("num_key_value_heads") or n_head)
    return np.ascontiguousarray(w.astype(np_dtype))


def _chat_template(folder: Path) -> str | None:
    if (folder / "chat_template.jinja").exists():
        return (folder / "chat_template.jinja").read_text()
    try:
        return json.loads((folder / "tokenizer_config.json").read_text()).get("chat_template")
    except (OSError, ValueError):
        return None


def convert(folder: Path, out: Path, dtype: str = "f16", log: Callable[[str], None] = print) -> dict[str, Any]:
    """Write `out` from the HF folder; returns what was written (tensors, tokenizer source, seconds)."""
    import gguf
    import numpy as np

    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r}: expected one of {DTYPES}")
    folder, t0 = Path(folder), time.monotonic()
    cfg = read_config(folder)
    n_head = cfg["num_attention_heads"]
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // n_head
    tok, tok_source = choose_tokenizer(folder, cfg["vocab_size"])
    plan = _plan(folder, cfg, dtype)
    tmp = out.with_name(out.name + ".tmp")
    out.parent.mkdir(parents=True, exist_ok=True)
    w = gguf.GGUFWriter(str(tmp), "llama")
    w.add_name(folder.name)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_head_count(n_head)
    w.add_head_count_kv(cfg.get("num_key_value_heads") or n_head)
    w.add_rope_freq_base(rope_theta(cfg))
    w.add_layer_norm_rms_eps(cfg.get("rms_norm_eps", 1e-6))
    w.add_vocab_size(cfg["vocab_size"])
    w.add_rope_dimension_count(head_dim)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16 if dtype == "f16" else gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model(tok["model"])
    w.add_tokenizer_pre(tok["pre"])
    w.add_token_list(tok["tokens"])
    w.add_token_types(tok["token_type"])
    w.add_token_merges(tok["merges"])
    for key, add in (
        ("bos", w.add_bos_token_id),
        ("eos", w.add_eos_token_id),
        ("unk", w.add_unk_token_id),
        ("pad", w.add_pad_token_id),
    ):
        if key in tok["ids"]:
            add(int(tok["ids"][key]))
    w.add_add_bos_token(tok["add_bos"])
    if tok.get("add_space_prefix") is not None:
        w.add_add_space_prefix(bool(tok["add_space_prefix"]))
    template = _chat_template(folder)
    if template:
        w.add_chat_template(template)
    for name, _, _, shape, np_dtype in plan:
        w.add_tensor_info(name, shape, np_dtype, int(np.prod(shape)) * np_dtype.itemsize)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for _, path, hf_name, _, np_dtype in plan:  # one tensor in memory at a time
        w.write_tensor_data(_tensor(path, hf_name, cfg, np_dtype))
    w.close()
    os.replace(tmp, out)
    done = {
        "gguf": str(out),
        "tensors": len(plan),
        "dtype": dtype,
        "tokenizer": tok_source,
        "seconds": round(time.monotonic() - t0, 1),
    }
    log(
        f"converted {folder} to {out} ({len(plan)} tensors, {dtype}, {out.stat().st_size / 2**20:.0f} MiB) in "
        f"{done['seconds']} s; tokenizer: {tok_source}"
    )
    return done


def cached_out(folder: Path, cache_dir: Path, built_from: dict[str, Any]) -> Path:
    """`<cache_dir>/<folder name>-<key>.gguf`, the key a hash of what the GGUF is built from."""
    key = hashlib.sha256(json.dumps(built_from, sort_keys=True).encode()).hexdigest()[:16]
    return Path(cache_dir).expanduser() / f"{Path(folder).name}-{key}.gguf"


def _drop_older(folder: Path, out: Path, log: Callable[[str], None]) -> None:
    """Remove the cached conversions of `folder` other than `out` (built from older files)."""
    for marker in out.parent.glob("*.gguf.json"):
        gguf_file = marker.with_name(marker.name.removesuffix(".json"))
        if gguf_file == out:
            continue
        try:
            same = json.loads(marker.read_text()).get("folder") == str(folder)
        except (OSError, ValueError):
            continue
        if same:
            gguf_file.unlink(missing_ok=True)
            marker.unlink(missing_ok=True)
            log(f"removed {gguf_file} (an older conversion of {folder})")


def ensure_gguf(
    folder: Path,
    out: Path | None = None,
    dtype: str = "f16",
    cache_dir: Path | str = "~/.cache/worldsmith/models",
    log: Callable[[str], None] = print,
) -> Path:
    """The folder's GGUF (`out`, or in `cache_dir`): the one already built from the same files,
    else converted now. Nothing is written into the folder."""
    folder = Path(folder).resolve()
    read_config(folder)  # refuse an unsupported model before anything is written
    expected = fingerprint(folder, dtype)
    cached = out is None
    out = cached_out(folder, Path(cache_dir), expected) if cached else Path(out)
    marker = out.with_name(out.name + ".json")
    try:
        built = json.loads(marker.read_text()).get("built_from")
    except (OSError, ValueError):
        built = None
    if out.exists() and built == expected:
        log(f"using {out} (built from the same files)")
        return out
    done = convert(folder, out, dtype, log=log)
    marker.write_text(json.dumps({"built_from": expected, "folder": str(folder), **done}, indent=2) + "\n")
    if cached:
        _drop_older(folder, out, log)
    return out
