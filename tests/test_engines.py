"""Integration: the same client against both real engines serving the packaged SmolLM2."""

from __future__ import annotations

import asyncio
import json
import re

import jsonschema
import pytest
from conftest import llm_config

from worldsmith.llm.client import LLMClient

pytestmark = pytest.mark.engine

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    },
    {
        "type": "function",
        "function": {
            "name": "book_table",
            "description": "Book a restaurant table.",
            "parameters": {
                "type": "object",
                "properties": {
                    "restaurant": {"type": "string"},
                    "people": {"type": "integer", "minimum": 1, "maximum": 20},
                },
                "required": ["restaurant", "people"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    },
]

RECORD = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "country": {"type": "string", "minLength": 1},
        "population": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    },
    "required": ["city", "country", "population", "tags"],
    "additionalProperties": False,
}


@pytest.fixture(params=["llamacpp", "vllm"])
def engine(request):
    return request.param, request.getfixturevalue(f"{request.param}_server")


def call(server, fn, **role_overrides):
    async def go():
        async with LLMClient(llm_config(server.url, **role_overrides)) as client:
            return await fn(client)

    return asyncio.run(go())


def test_serves_the_packaged_model(engine):
    _, server = engine
    assert "smollm2-135m" in server.served_models()


def test_chat_reply(engine):
    _, server = engine
    result = call(server, lambda c: c.chat("critic", [{"role": "user", "content": "Name one colour."}], max_tokens=20))
    assert result.ok, result.error
    assert result.content and result.content.strip()
    assert result.completion_tokens > 0 and result.prompt_tokens > 0


def test_structured_reply_validates(engine):
    _, server = engine
    messages = [
        {"role": "user", "content": "Describe a city as JSON with its country, population and up to three tags."}
    ]
    result = call(server, lambda c: c.structured("task_writer", messages, RECORD, name="city"))
    assert result.ok, f"{result.error}: {result.raw}"
    jsonschema.validate(result.data, RECORD)


@pytest.mark.parametrize("mode", ["constrained", "native"])
def test_tool_call_arguments_validate(engine, mode):
    name, server = engine
    messages = [
        {"role": "system", "content": "You are an assistant. Use the tools."},
        {"role": "user", "content": "Book a table for 4 people at Chez Marie, please."},
    ]
    result = call(server, lambda c: c.tool_step("agent", messages, TOOLS, mode=mode, require_tool=True, max_tokens=200))
    assert result.ok, f"{result.error}: {result.raw}"
    assert result.tool_calls, result.content
    by_name = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    for tc in result.tool_calls:
        assert tc["type"] == "function" and tc["id"]
        jsonschema.validate(json.loads(tc["function"]["arguments"]), by_name[tc["function"]["name"]])
    if mode == "native" and name == "vllm":
        # vLLM enforces tool_choice="required" itself; llama.cpp ignores it and the client redoes the turn constrained
        assert result.fallback is None


def test_each_llamacpp_slot_has_its_own_share_of_the_context(llamacpp_server):
    """Each slot holds ctx_size / parallel tokens of its own (one KV cache shared by all slots made every
    sequence attend over every slot's cells: 1.17x as long at 8, benchmarks/kv_cache.py)."""
    import httpx

    slots = httpx.get(llamacpp_server.base + "/slots", timeout=10).json()
    cfg = llamacpp_server.cfg
    assert len(slots) == cfg.parallel
    assert {s["n_ctx"] for s in slots} == {cfg.ctx_size // cfg.parallel}


def test_a_constrained_reply_keeps_to_the_prose_pattern(llamacpp_server):
    """The prose reply's pattern (`prose_replies`, on in the CPU default) reaches llama.cpp's grammar and is enforced
    there: every sampled reply to a tool result is a sentence's characters, and the client accepts it. (vLLM 0.32's
    xgrammar fails to compile its 400-character bound: the config refuses the two together.)"""
    import re

    from worldsmith.vocab import PROSE_REPLY_PATTERN

    server = llamacpp_server
    ask = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    messages = [
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": None, "tool_calls": [ask]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": -3, "sky": "snow"}'},
    ]

    for seed in range(4):
        r = call(
            server,
            lambda c, s=seed: c.tool_step("agent", messages, TOOLS, grammar_tools=[], seed=s, temperature=1.0),
            prose_replies=True,
        )
        assert r.ok, f"{r.error}: {r.raw}"
        assert not r.tool_calls and re.search(PROSE_REPLY_PATTERN, r.content), r.content


def test_a_grounded_reply_says_a_value_the_user_asked_for(llamacpp_server):
    """`reply_quotes_asked`: the quoting pattern reaches llama.cpp's grammar and holds there: every sampled reply
    says the station the user asked for, which the result holds, and is still a sentence."""
    import re

    from worldsmith.vocab import PROSE_REPLY_PATTERN
    from worldsmith.worldmodel.grounding import asked_values

    ask = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    messages = [
        {"role": "user", "content": "Which station measures the weather in Oslo?"},
        {"role": "assistant", "content": None, "tool_calls": [ask]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": -3, "station": "Blindern-7731"}'},
    ]
    quote = asked_values(messages)
    assert quote == ["Blindern-7731"]
    for seed in range(2):
        r = call(
            llamacpp_server,
            lambda c, s=seed: c.tool_step(
                "agent", messages, TOOLS, grammar_tools=[], seed=s, temperature=1.0, max_tokens=600, quote=quote
            ),  # at 1.0 SmolLM2 alone says the station in 1 of 6 replies (and the grammar's bound is ~400 tokens)
            prose_replies=True,
        )
        assert r.ok, f"{r.error}: {r.raw}"
        assert not r.tool_calls and "Blindern-7731" in r.content and re.search(PROSE_REPLY_PATTERN, r.content)


def test_a_restrained_reply_opens_as_told_and_ends_its_sentence(llamacpp_server):
    """`rollouts.restraint_decoding`: the opening patterns reach llama.cpp's grammar and hold there: a decline opens
    with one of the decline openings and is one sentence; a refusal's reply is its opening and the state, nothing
    after (SmolLM2, given room, went on to invent who archived the record)."""
    import re

    from worldsmith.vocab import DECLINE_OPENINGS

    messages = [{"role": "user", "content": "Please delete member mbr-2504."}]
    for seed in range(2):
        r = call(
            llamacpp_server,
            lambda c, s=seed: c.tool_step(
                "agent", messages, TOOLS, grammar_tools=[], seed=s, temperature=1.0, opening=list(DECLINE_OPENINGS)
            ),
            prose_replies=True,
        )
        assert r.ok and not r.tool_calls, f"{r.error}: {r.raw}"
        assert r.content.startswith(DECLINE_OPENINGS) and r.content.endswith(".") and len(r.content) < 140, r.content
        assert not re.search(r"[.!?].", r.content), r.content  # one sentence
    opening, quote = [f"{o} that:" for o in DECLINE_OPENINGS[:2]], ["bkg-7303 is checked_in"]
    r = call(
        llamacpp_server,
        lambda c: c.tool_step("agent", messages, TOOLS, grammar_tools=[], seed=0, opening=opening, quote=quote),
        prose_replies=True,
    )
    assert r.ok and r.content in {f"{o} bkg-7303 is checked_in." for o in opening}, r.content


def test_a_grounded_optional_parameter_holds_to_the_values_shown(llamacpp_server):
    """A crawled optional filter (`anyOf: [string, null]`) narrowed by grounding reaches llama.cpp's grammar as the
    values alone: with the `anyOf` left beside the `enum`, SmolLM2 wrote "acme-7" for "ACME-7" and the turn failed
    its schema (a default run lost 5 of 48 episodes so)."""
    from test_crawled_bindings import LIST_BY_OWNER, WORLD

    from worldsmith.worldmodel.grounding import ground_tools
    from worldsmith.worldmodel.toolset import ToolSet

    toolset = ToolSet.build([LIST_BY_OWNER])
    messages = [{"role": "user", "content": "Hi! which issues does owner ACME-7 have? list them please"}]
    grounded = ground_tools(toolset, messages, {WORLD.world_id: WORLD})
    allowed = grounded[0]["function"]["parameters"]["properties"]["owner"]["enum"]
    for seed in range(3):
        r = call(
            llamacpp_server,
            lambda c, s=seed: c.tool_step(
                "agent", messages, toolset.tools, require_tool=True, grammar_tools=grounded, seed=s, temperature=1.0
            ),
        )
        assert r.ok, f"{r.error}: {r.raw}"
        assert r.tool_calls
        for tc in r.tool_calls:
            args = json.loads(tc["function"]["arguments"])
            assert args.get("owner", allowed[0]) in allowed, args


def test_a_date_parameter_gets_a_date_from_the_grammar(llamacpp_server):
    """`format: date` reaches llama.cpp's grammar (other formats and patterns are dropped there): SmolLM2 sent a
    clinic's reschedule "2023-01-18T14:30:00Z" without it, and the world refused the call."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": "reschedule_appointment",
                "parameters": {
                    "type": "object",
                    "properties": {"day": {"type": "string", "format": "date", "description": "the day"}},
                    "required": ["day"],
                },
            },
        }
    ]
    messages = [{"role": "user", "content": "Move my visit to April 9th at half past two, please."}]
    for seed in range(3):
        r = call(
            llamacpp_server,
            lambda c, s=seed: c.tool_step("agent", messages, tools, require_tool=True, seed=s, temperature=1.0),
            parallel_tool_calls=False,
        )
        assert r.ok and r.tool_calls, f"{r.error}: {r.raw}"
        day = json.loads(r.tool_calls[0]["function"]["arguments"])["day"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", day), day


def test_tool_result_round_trip_renders(engine):
    """A full tool exchange in OpenAI format is accepted by the server's chat template, and the
    tool's result is in the prompt: the server counts exactly the tokens of the rendered text,
    and the result's own tokens more than with an empty result."""
    import transformers

    from worldsmith.finetune.loop import TEMPLATE
    from worldsmith.llm.server import packaged_gguf

    _, server = engine
    gguf = packaged_gguf()
    tok = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tok.chat_template = TEMPLATE.read_text()
    weather = '{"temp_c": -3, "sky": "snow", "station": "Blindern-7731"}'  # a value found nowhere else in the prompt

    def exchange(result):
        ask = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
        return [
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": None, "tool_calls": [ask]},
            {"role": "tool", "tool_call_id": "call_1", "content": result},
        ]

    counted = {}
    for content in (weather, ""):
        messages = exchange(content)
        result = call(server, lambda c, m=messages: c.tool_step("agent", m, TOOLS, mode="constrained", max_tokens=120))
        assert result.ok, f"{result.error}: {result.raw}"
        assert result.content or result.tool_calls
        text = tok.apply_chat_template(messages, tools=TOOLS, add_generation_prompt=True, tokenize=False)
        assert ("Blindern-7731" in text) == bool(content)
        counted[content] = len(tok(text, add_special_tokens=False)["input_ids"])
        assert result.prompt_tokens == counted[content]  # the server prompted with this rendering, token for token
    # 399 and 372 tokens with llama.cpp: the difference is the 27 tokens of the result itself
    assert counted[weather] - counted[""] == len(tok(weather, add_special_tokens=False)["input_ids"]) == 27


def test_the_server_renders_the_prompt_training_renders(engine):
    """What a model learns is what it is served with: the engine's rendering of a tool
    conversation gives the same tokens as the fine-tuning tokenizer with the same template."""
    import httpx
    import transformers

    from worldsmith.finetune.loop import TEMPLATE
    from worldsmith.llm.server import packaged_gguf

    name, server = engine
    messages = [
        {"role": "system", "content": "You are a concierge."},
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": -3, "sky": "snow"}'},
    ]
    gguf = packaged_gguf()
    tok = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tok.chat_template = TEMPLATE.read_text()
    expected = tok.apply_chat_template(messages, tools=TOOLS, add_generation_prompt=True, tokenize=False)
    if name == "llamacpp":
        served = httpx.post(
            server.base + "/apply-template", json={"messages": messages, "tools": TOOLS}, timeout=30
        ).json()["prompt"]
        assert served == expected
    else:
        r = httpx.post(
            server.base + "/tokenize",
            json={"model": "smollm2-135m", "messages": messages, "tools": TOOLS, "add_generation_prompt": True},
            timeout=30,
        )
        assert r.json()["tokens"] == tok(expected, add_special_tokens=False)["input_ids"]


def test_vllm_seeded_requests_survive_a_split_prefill(vllm_server):
    """The pipeline seeds every call. A prompt longer than one step's token budget (vLLM's CPU
    build: 2048), or several that together are, is what a rollout stage sends; with chunked
    prefill, vLLM 0.32's CPU engine died on it (`CPU Generator does not use offset`) and every
    request in flight failed. Eight at once of ~2,500 prompt tokens each: every one must come back.
    (llama.cpp splits its context between slots, 2,048 each here, so it is not asked.)"""
    server = vllm_server
    filler = " ".join(f"Shelf {i} holds item {i * 7} of colour number {i % 5}." for i in range(200))
    prompt = [{"role": "user", "content": filler + " Which shelf holds item 42? Answer in one sentence."}]

    async def go(client):
        calls = [client.chat("agent", prompt, max_tokens=24, temperature=0.9, seed=1000 + i) for i in range(8)]
        return await asyncio.gather(*calls)

    results = call(server, go)
    assert [r.error for r in results if not r.ok] == []
    assert all(r.prompt_tokens > 2100 and r.completion_tokens > 0 for r in results), [
        (r.prompt_tokens, r.completion_tokens) for r in results
    ]


@pytest.mark.slow
def test_vllm_loads_new_weights_in_place_without_a_restart(tmp_path):
    """`make rl` on vLLM keeps one server for every round and loads each round's weights into it
    (`ModelServer.reload_weights`): the engine answers with the new weights at once, from the same
    process, and with the old ones again once they are loaded back. llama.cpp, and a vLLM server not
    started reloadable, refuse with the reason."""
    import os
    import shutil
    from pathlib import Path

    import httpx
    from conftest import free_port
    from safetensors.torch import load_file, save_file

    from worldsmith.config import ServerConfig
    from worldsmith.finetune.loop import dense_base
    from worldsmith.llm.server import ModelServer, ServerError

    root = Path(__file__).resolve().parents[1]
    folder = tmp_path / "policy"
    shutil.copytree(dense_base(ServerConfig().model_cache_dir), folder)
    weights = folder / "model.safetensors"
    original = load_file(weights)
    cfg = ServerConfig(engine="vllm", port=free_port(), parallel=2, ctx_size=4096, model_path=str(folder))
    with pytest.raises(ServerError, match="started reloadable"):
        ModelServer(cfg, root, tmp_path / "data").reload_weights(folder)
    with pytest.raises(ServerError, match="llama.cpp is restarted"):
        ModelServer(cfg.model_copy(update={"engine": "llamacpp"}), root, tmp_path / "data").reload_weights(folder)
    server = ModelServer(cfg, root, tmp_path / "data", reloadable=True)
    server.start()
    try:

        def complete() -> str:
            body = {"model": cfg.model, "prompt": "The capital of France is", "max_tokens": 8, "temperature": 0}
            r = httpx.post(server.url + "/completions", json=body, timeout=120)
            r.raise_for_status()
            return r.json()["choices"][0]["text"]

        pid = server.state()["pid"]
        before = complete()
        # another policy: the final norm negated turns every logit around, so greedy decoding must change
        save_file({**original, "model.norm.weight": -original["model.norm.weight"]}, weights, metadata={"format": "pt"})
        server.reload_weights(folder)
        changed = complete()
        assert changed != before, (before, changed)
        save_file(original, weights, metadata={"format": "pt"})
        server.reload_weights(folder)
        assert complete() == before
        assert server.state()["pid"] == pid and os.path.exists(f"/proc/{pid}")  # the same engine throughout
    finally:
        server.stop()
