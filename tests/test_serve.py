"""`worldsmith serve --model`: a fine-tuned HF folder served as an OpenAI endpoint for outside
harnesses. The folder is the packaged SmolLM2 dequantized the way `worldsmith finetune` writes
its output (load_base + save_model); worldsmith's converter turns it into a GGUF and llama.cpp
serves it. The converter is proven on the logits, not only on loading: the served model's
log-probabilities match the HF model's at every generated position, and the greedy tokens are
the same. Then a chat reply and constrained tool calls through the same client the pipeline uses."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
gguf = pytest.importorskip("gguf")

from conftest import free_port, llm_config  # noqa: E402
from test_engines import TOOLS  # noqa: E402

from worldsmith.config import ServerConfig  # noqa: E402
from worldsmith.llm.server import ServerError, serve_config  # noqa: E402

NAME = "smollm2-ft"
# f16 weights (and llama.cpp's f16 KV cache) against the float32 HF model: 0.014 measured; f32 weights: 0.010
LOGPROB_TOL = 0.05


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory) -> Path:
    from worldsmith.finetune.loop import load_base, save_model

    model, tok = load_base(None)
    return save_model(model, tok, tmp_path_factory.mktemp("finetuned") / "smollm2-ft")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / "pipeline.yaml").write_text("run:\n  data_dir: data\n")
    return root / "pipeline.yaml"


def cli(*args: str):
    from typer.testing import CliRunner

    from worldsmith.cli import app

    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def served(hf_folder, project):
    """`worldsmith serve --model FOLDER` on a free port; stopped with `worldsmith serve --stop`."""
    port = free_port()
    r = cli("serve", "--config", str(project), "--model", str(hf_folder), "--port", str(port), "--name", NAME)
    assert r.exit_code == 0, r.output
    yield port, r.output
    r = cli("serve", "--config", str(project), "--stop", "--port", str(port))
    assert "stopped" in r.output, r.output


@pytest.mark.engine
def test_serve_prints_the_url_the_name_and_an_example_that_works(served, hf_folder):
    port, out = served
    url = f"http://127.0.0.1:{port}/v1"
    assert f"url: {url}\n" in out and f"model: {NAME}\n" in out and str(hf_folder / "model.gguf") in out
    assert "tokenizer: the packaged SmolLM2 GGUF's (vocabulary identical; merges and token types too)" in out
    example = next(line for line in out.splitlines() if line.startswith("try: "))[len("try: ") :]
    assert example.startswith(f"curl {url}/chat/completions ")
    if shutil.which("curl"):  # the line the user pastes, run as printed
        reply = json.loads(
            subprocess.run(shlex.split(example), capture_output=True, text=True, timeout=120, check=True).stdout
        )
        assert reply["model"] == NAME and reply["choices"][0]["message"]["content"].strip()


@pytest.mark.engine
def test_the_converted_model_computes_what_the_hf_model_computes(served, hf_folder):
    import httpx

    port, _ = served
    tok = transformers.AutoTokenizer.from_pretrained(hf_folder)
    model = transformers.AutoModelForCausalLM.from_pretrained(hf_folder, dtype=torch.float32).eval()
    messages = [
        {"role": "system", "content": "You are a concierge. Use the tools."},
        {"role": "user", "content": "What is the capital of France? Answer in one word."},
    ]
    text = tok.apply_chat_template(messages, tools=TOOLS, add_generation_prompt=True, tokenize=False)
    ids = tok(text, add_special_tokens=False)["input_ids"]
    base = f"http://127.0.0.1:{port}"
    # the GGUF's tokenizer keys tokenize the tool prompt as the HF tokenizer does, token for token
    served_ids = httpx.post(
        base + "/tokenize", json={"content": text, "add_special": False, "parse_special": True}, timeout=30
    ).json()
    assert served_ids["tokens"] == ids
    n = 8
    r = httpx.post(
        base + "/completion",
        json={"prompt": ids, "n_predict": n, "n_probs": 10, "temperature": 0, "cache_prompt": False},
        timeout=120,
    ).json()
    steps = r["completion_probabilities"]
    generated = [s["id"] for s in steps]
    assert len(generated) >= 4, r
    with torch.no_grad():
        logprobs = torch.log_softmax(model(torch.tensor([ids + generated])).logits[0].float(), -1)
    rows = [logprobs[len(ids) - 1 + i] for i in range(len(steps))]
    assert generated == [int(row.argmax()) for row in rows]  # the same greedy continuation
    diffs = [
        abs(row[t["id"]].item() - t["logprob"]) for row, s in zip(rows, steps, strict=True) for t in s["top_logprobs"]
    ]
    print(
        f"\nlogits: {len(diffs)} top-10 log-probabilities over {len(steps)} positions; "
        f"max |HF - GGUF| = {max(diffs):.4f}, "
        f"mean {sum(diffs) / len(diffs):.4f}; continuation {r['content']!r}"
    )
    assert max(diffs) < LOGPROB_TOL


@pytest.mark.engine
def test_a_chat_reply_and_constrained_tool_calls(served):
    import jsonschema

    from worldsmith.llm.client import LLMClient

    port, _ = served
    cfg = llm_config(f"http://127.0.0.1:{port}/v1")
    cfg.endpoints["local"] = cfg.endpoints["local"].model_copy(update={"model": NAME})
    messages = [
        {"role": "system", "content": "You are an assistant. Use the tools."},
        {"role": "user", "content": "Book a table for 4 people at Chez Marie, please."},
    ]

    async def go():
        async with LLMClient(cfg) as client:
            chat = await client.chat("critic", [{"role": "user", "content": "Name one colour."}], max_tokens=20)
            step = await client.tool_step(
                "agent", messages, TOOLS, mode="constrained", require_tool=True, max_tokens=200
            )
            return chat, step

    chat, step = asyncio.run(go())
    assert chat.ok and chat.content.strip(), chat.error
    assert step.ok and step.tool_calls, f"{step.error}: {step.raw}"
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    for tc in step.tool_calls:
        jsonschema.validate(json.loads(tc["function"]["arguments"]), schemas[tc["function"]["name"]])


@pytest.mark.engine
def test_the_gguf_is_cached_and_rebuilt_when_the_weights_change(served, hf_folder):
    from worldsmith.llm.hf_to_gguf import ensure_gguf

    out = hf_folder / "model.gguf"
    built = out.stat().st_mtime_ns
    logs: list[str] = []
    assert ensure_gguf(hf_folder, log=logs.append) == out and out.stat().st_mtime_ns == built
    assert logs == [f"using {out} (built from the same files)"]
    weights = hf_folder / "model.safetensors"
    st = weights.stat()
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # "retrained": the weights are newer
    ensure_gguf(hf_folder, log=logs.append)
    assert out.stat().st_mtime_ns != built and logs[-1].startswith(f"converted {hf_folder} to {out}")
    assert (
        json.loads((hf_folder / "model.gguf.json").read_text())["built_from"]["files"]["model.safetensors"][1]
        == st.st_mtime_ns + 10**9
    )


def test_the_tokenizer_derived_from_tokenizer_json_is_the_packaged_one(hf_folder):
    """The arrays built from the HF tokenizer.json equal the packaged GGUF's: the derivation a
    vocabulary other than SmolLM2's would rely on is right for this one."""
    from worldsmith.llm.hf_to_gguf import hf_tokenizer, packaged_tokenizer

    derived, packaged = hf_tokenizer(hf_folder, 49152), packaged_tokenizer()
    assert derived["tokens"] == packaged["tokens"] and derived["merges"] == packaged["merges"]
    assert derived["token_type"] == packaged["token_type"] and derived["ids"] == packaged["ids"]
    assert packaged["pre"] == "smollm" and derived["pre"] == "gpt-2"  # why the packaged keys are used when they can be


def test_serve_config_picks_the_engine_and_the_name(tmp_path):
    cfg = ServerConfig(model_cache_dir=str(tmp_path / "cache"))
    gguf_file = tmp_path / "tiny-q4.gguf"
    gguf_file.write_bytes(b"GGUF")
    c = serve_config(cfg, gguf_file)
    assert (c.engine, c.model_path, c.model, c.port) == ("llamacpp", str(gguf_file), "tiny-q4", cfg.port)
    qwen = tmp_path / "qwen"
    qwen.mkdir()
    (qwen / "config.json").write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"]}))
    logs: list[str] = []
    c = serve_config(cfg, qwen, port=9001, name="q", log=logs.append)  # not a Llama: vLLM serves it as it is
    assert (c.engine, c.model_path, c.model, c.port) == ("vllm", str(qwen), "q", 9001) and "Qwen2ForCausalLM" in logs[0]
    with pytest.raises(ServerError, match="--engine vllm"):
        serve_config(cfg, qwen, engine="llamacpp")
    assert serve_config(cfg, qwen, engine="vllm").model_path == str(qwen)
    with pytest.raises(ServerError, match="neither a .gguf file nor"):
        serve_config(cfg, tmp_path / "nothing")
