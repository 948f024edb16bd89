"""Convert a GGUF checkpoint into a Hugging Face model folder that vLLM can serve.

Standalone on purpose: it runs under the vLLM engine environment
(``.venv-vllm/bin/python``), which has transformers/torch/gguf/accelerate but not
worldsmith. Imports only the standard library, torch and transformers.

    .venv-vllm/bin/python src/worldsmith/llm/convert_gguf.py \
        --gguf .../SmolLM2-135M-Instruct.Q4_1.gguf --out data/models/smollm2-135m-hf \
        --chat-template src/worldsmith/llm/chat_templates/smollm2_tools.jinja

The GGUF weights are dequantized (to float32 by default) and written as safetensors with
config.json, generation_config.json, the tokenizer files and the chat template (set as the
tokenizer's ``chat_template`` and also written as ``chat_template.jinja``). The folder is
built in ``OUT.tmp`` and renamed into place, so OUT is either absent or complete. When OUT
already holds a complete conversion of the same GGUF file with the same chat template
(recorded in ``worldsmith-convert.json``), nothing is done.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

MARKER = "worldsmith-convert.json"
MARKER_VERSION = 1


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _fingerprint(gguf: Path, template_text: str, dtype: str) -> dict:
    st = gguf.stat()
    return {
        "version": MARKER_VERSION,
        "gguf_name": gguf.name,
        "gguf_size": st.st_size,
        "gguf_sha256": _sha256(gguf),
        "chat_template_sha256": hashlib.sha256(template_text.encode()).hexdigest(),
        "dtype": dtype,
    }


def load_dense(gguf: Path, torch_dtype):
    """The GGUF as a plain dense transformers model (dequantized), which save_pretrained
    accepts and training can update."""
    from transformers import AutoModelForCausalLM

    try:  # transformers >= 5 keeps GGUF blocks packed unless told to dequantize
        from transformers import GgufConfig
    except ImportError:  # older transformers always dequantize GGUF at load
        GgufConfig = None  # type: ignore[assignment]
    kwargs: dict = {"gguf_file": gguf.name, "dtype": torch_dtype}
    if GgufConfig is not None:
        kwargs["quantization_config"] = GgufConfig(dequantize=True)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), **kwargs)
    # The result is a plain dense model: don't advertise GGUF quantization to loaders.
    for obj in (model, model.config):
        for attr in ("quantization_config", "hf_quantizer"):
            if hasattr(obj, attr):
                try:
                    delattr(obj, attr)
                except AttributeError:
                    setattr(obj, attr, None)
    if hasattr(model, "is_quantized"):
        try:
            model.is_quantized = False
        except AttributeError:
            pass
    model.config.dtype = torch_dtype
    return model


def is_complete(out: Path, expected: dict | None = None) -> bool:
    """True when ``out`` holds a finished conversion (matching ``expected`` if given)."""
    marker = out / MARKER
    if not marker.is_file():
        return False
    try:
        got = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    needed = ["config.json", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja"]
    if not all((out / n).is_file() for n in needed):
        return False
    if not any(out.glob("*.safetensors")):
        return False
    if expected is not None:
        keys = ("version", "gguf_name", "gguf_size", "gguf_sha256", "chat_template_sha256", "dtype")
        return all(got.get(k) == expected.get(k) for k in keys)
    return True


def convert(gguf: Path, out: Path, chat_template: Path, dtype: str = "float32") -> bool:
    """Write the HF folder; return True if it was (re)built, False if already complete."""
    gguf = gguf.resolve()
    out = out.resolve()
    template_text = chat_template.read_text(encoding="utf-8")
    expected = _fingerprint(gguf, template_text, dtype)
    if is_complete(out, expected):
        print(f"convert_gguf: {out} is complete; nothing to do")
        return False

    import torch
    from transformers import AutoTokenizer

    t0 = time.monotonic()
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)

    src_dir, fname = str(gguf.parent), gguf.name
    torch_dtype = getattr(torch, dtype)
    model = load_dense(gguf, torch_dtype)
    model.save_pretrained(tmp, safe_serialization=True)

    tok = AutoTokenizer.from_pretrained(src_dir, gguf_file=fname)
    tok.chat_template = template_text
    tok.save_pretrained(tmp)
    (tmp / "chat_template.jinja").write_text(template_text, encoding="utf-8")

    # Belt and braces: the template also inside tokenizer_config.json, and no
    # quantization_config left in config.json.
    tc_path = tmp / "tokenizer_config.json"
    tc = json.loads(tc_path.read_text())
    tc["chat_template"] = template_text
    # transformers 5 writes "TokenizersBackend"; PreTrainedTokenizerFast is its alias
    # there and also loads with transformers 4.x (e.g. a training environment).
    if tc.get("tokenizer_class") == "TokenizersBackend":
        tc["tokenizer_class"] = "PreTrainedTokenizerFast"
    tc_path.write_text(json.dumps(tc, indent=2, ensure_ascii=False) + "\n")
    cfg_path = tmp / "config.json"
    cfg = json.loads(cfg_path.read_text())
    if cfg.pop("quantization_config", None) is not None:
        cfg_path.write_text(json.dumps(cfg, indent=2) + "\n")

    info = dict(expected, converted_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    (tmp / MARKER).write_text(json.dumps(info, indent=2) + "\n")

    if out.exists():
        old = out.with_name(out.name + ".old")
        if old.exists():
            shutil.rmtree(old)
        os.replace(out, old)
        os.replace(tmp, out)
        shutil.rmtree(old)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, out)
    print(f"convert_gguf: wrote {out} in {time.monotonic() - t0:.1f} s")
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gguf", required=True, type=Path, help="path to the .gguf file")
    p.add_argument("--out", required=True, type=Path, help="HF model folder to write")
    p.add_argument("--chat-template", required=True, type=Path, help="Jinja chat template file")
    p.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "bfloat16", "float16"],
        help="dtype of the saved weights (default float32: exact dequantization)",
    )
    a = p.parse_args(argv)
    if not a.gguf.is_file():
        p.error(f"no such GGUF file: {a.gguf}")
    if not a.chat_template.is_file():
        p.error(f"no such chat template: {a.chat_template}")
    convert(a.gguf, a.out, a.chat_template, a.dtype)
    return 0


if __name__ == "__main__":
    sys.exit(main())
