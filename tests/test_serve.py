"""`worldsmith serve --model`: a fine-tuned HF folder served as an OpenAI endpoint for outside
harnesses. The folder is the packaged SmolLM2 dequantized the way `worldsmith finetune` writes
its output (load_base + save_model); worldsmith's converter turns it into a GGUF and llama.cpp
serves it. The converter is proven on the logits, not only on loading: the served model's
log-probabilities match the HF model's at every generated position, and the greedy tokens are
the same. Then a chat reply and constrained tool calls through the same client the pipeline uses,
the reply length of a request without max_tokens (outside harnesses send none), the GGUF kept in
the model cache (never in the user's folder), and the printed stop command run as printed."""

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
CAP = 24  # --max-tokens of the served model: the reply length of a request that sends none
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
    cfg = {"run": {"data_dir": "data"}, "llm": {"server": {"model_cache_dir": str(root / "cache")}}}
    (root / "pipeline.yaml").write_text(json.dumps(cfg))  # JSON is YAML
    return root / "pipeline.yaml"


@pytest.fixture(scope="module")
def cache(project) -> Path:
    return project.parent / "cache"


def cli(*args: str):
    from typer.testing import CliRunner

    from worldsmith.cli import app

    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def served(hf_folder, project):
    """`worldsmith serve --model FOLDER` on a free port; stopped with the `stop:` command it printed,
    run as printed in a shell whose PATH has no worldsmith (a venv's bin is often not on it)."""
    port = free_port()
    args = ("--model", str(hf_folder), "--port", str(port), "--name", NAME, "--max-tokens", str(CAP))
    r = cli("serve", "--config", str(project), *args)
    assert r.exit_code == 0, r.output
    yield port, r.output
    stop = next(line for line in r.output.splitlines() if line.startswith("stop: "))[len("stop: ") :]
    env = {**os.environ, "PATH": os.defpath}
    done = subprocess.run(shlex.split(stop), capture_output=True, text=True, timeout=120, env=env)
    assert "stopped" in done.stdout, (stop, done.stdout, done.stderr)


@pytest.mark.engine
def test_serve_prints_the_url_the_name_and_an_example_that_works(served, hf_folder, cache):
    port, out = served
    url = f"http://127.0.0.1:{port}/v1"
    assert f"url: {url}\n" in out and f"model: {NAME}\n" in out
    assert f"converted {hf_folder} to {cache / hf_folder.name}-" in out  # the GGUF is in the model cache,
    assert not list(hf_folder.glob("*.gguf*"))  # not in the user's folder
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
def test_a_request_without_max_tokens_stops_at_the_servers_cap(served):
    """BFCL sends no max_tokens, and a base model ran on for 3,200 tokens: the server's cap ends
    such a reply; a request's own max_tokens is kept, above the cap too."""
    import httpx

    port, out = served
    assert f"reply length when a request sends no max_tokens: {CAP} tokens (--max-tokens)" in out
    messages = [{"role": "user", "content": "Write a long story about a dragon, at least 500 words."}]

    def reply(**extra) -> tuple[int, str]:
        r = httpx.post(
            f"http://127.0.0.1:{port}/v1/chat/completions",
            json={"model": NAME, "messages": messages, "temperature": 0, **extra},
            timeout=120,
        )
        r.raise_for_status()
        return r.json()["usage"]["completion_tokens"], r.json()["choices"][0]["finish_reason"]

    assert reply() == (CAP, "length")
    assert reply(max_tokens=2 * CAP) == (2 * CAP, "length")


@pytest.mark.engine
def test_the_gguf_is_cached_by_content_and_rebuilt_when_the_weights_change(served, hf_folder, cache, tmp_path):
    from worldsmith.llm.hf_to_gguf import ensure_gguf

    (out,) = cache.glob("*.gguf")  # what `serve` converted
    built = out.stat().st_mtime_ns
    logs: list[str] = []
    assert ensure_gguf(hf_folder, cache_dir=cache, log=logs.append) == out and out.stat().st_mtime_ns == built
    assert logs == [f"using {out} (built from the same files)"]
    # the same files in another folder (hard links: same sizes and times) reuse it: keyed by content, not path
    moved = tmp_path / hf_folder.name
    shutil.copytree(hf_folder, moved, copy_function=os.link)
    assert ensure_gguf(moved, cache_dir=cache, log=logs.append) == out and len(logs) == 2
    shutil.rmtree(moved)
    files = sorted(p.name for p in hf_folder.iterdir())
    weights = hf_folder / "model.safetensors"
    st = weights.stat()
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # "retrained": the weights are newer
    new = ensure_gguf(hf_folder, cache_dir=cache, log=logs.append)
    assert new != out and new.parent == cache and new.exists() and not out.exists()
    assert logs[-2].startswith(f"converted {hf_folder} to {new}")
    assert logs[-1] == f"removed {out} (an older conversion of {hf_folder})"
    built_from = json.loads(new.with_name(new.name + ".json").read_text())["built_from"]
    assert built_from["files"]["model.safetensors"][1] == st.st_mtime_ns + 10**9
    assert sorted(p.name for p in hf_folder.iterdir()) == files  # nothing written into the user's folder


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
