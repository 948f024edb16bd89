"""The client against a real local HTTP server that misbehaves on purpose."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import llm_config

from worldsmith.llm.client import LLMClient, LLMResult, constrained_turn_schema, parse_constrained_turn
from worldsmith.vocab import MAX_REPLY_CHARS


def completion(content: str) -> dict:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "smollm2-135m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


class Script:
    """What the server answers, request by request: (status, body, delay)."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.requests: list[dict] = []


@pytest.fixture
def fake_server():
    servers = []

    def start(answers):
        script = Script(answers)

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                script.requests.append(body)
                status, payload, delay = script.answers.pop(0) if len(script.answers) > 1 else script.answers[0]
                time.sleep(delay)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1", script

    yield start
    for s in servers:
        s.shutdown()


def run(coro):
    return asyncio.run(coro)


async def _chat(cfg, **kw):
    async with LLMClient(cfg) as client:
        result = await client.chat("critic", [{"role": "user", "content": "hi"}], **kw)
        return result, client.usage.snapshot()


def test_retries_500s_then_succeeds(fake_server):
    url, script = fake_server([(500, {"error": "boom"}, 0), (500, {"error": "boom"}, 0), (200, completion("hello"), 0)])
    result, usage = run(_chat(llm_config(url)))
    assert result.ok, result.error
    assert result.content == "hello"
    assert result.attempts == 3
    assert len(script.requests) == 3
    assert usage["critic"]["calls"] == 1 and usage["critic"]["completion_tokens"] == 7


def test_gives_up_after_max_attempts_with_reason(fake_server):
    url, script = fake_server([(503, {"error": "overloaded"}, 0)])
    result, usage = run(_chat(llm_config(url)))
    assert not result.ok
    assert result.error_kind == "http"
    assert "HTTP 503" in result.error and "after 3 attempts" in result.error
    assert len(script.requests) == 3
    assert usage["critic"]["failures_by_kind"] == {"http": 1}


def test_client_errors_are_not_retried(fake_server):
    url, script = fake_server([(400, {"error": "bad request"}, 0)])
    result, _ = run(_chat(llm_config(url)))
    assert not result.ok and "HTTP 400" in result.error
    assert len(script.requests) == 1


LLAMACPP_BAD_TOOL_CALL = {  # what llama.cpp answered the loop's eval when SmolLM2's native tool call was not JSON
    "error": {
        "code": 500,
        "message": "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at "
        "line 1, column 1659: syntax error while parsing value - invalid string: missing closing quote",
        "type": "server_error",
    }
}


def test_a_tool_call_the_server_could_not_parse_is_the_models_malformed_output_not_retried(fake_server):
    url, script = fake_server([(500, LLAMACPP_BAD_TOOL_CALL, 0), (200, completion("hello"), 0)])
    result, usage = run(_chat(llm_config(url)))
    assert not result.ok and result.error_kind == "parse"
    assert "could not parse the model's tool call" in result.error and "missing closing quote" in result.error
    assert len(script.requests) == 1  # a seeded retry would make the same call again
    assert usage["critic"]["failures_by_kind"] == {"parse": 1}


def test_timeout_is_reported_with_its_reason(fake_server):
    url, _ = fake_server([(200, completion("late"), 2.0)])
    cfg = llm_config(url)
    cfg.endpoints["local"].timeout_s = 0.3
    t0 = time.monotonic()
    result, _ = run(_chat(cfg))
    assert not result.ok
    assert result.error_kind == "timeout"
    assert "timeout" in result.error
    assert time.monotonic() - t0 < 10


def test_connection_refused_is_reported():
    from conftest import free_port

    result, _ = run(_chat(llm_config(f"http://127.0.0.1:{free_port()}/v1")))
    assert not result.ok and result.error_kind == "connection"


def test_an_unreachable_server_stops_the_call_after_the_outage_time():
    from conftest import free_port

    from worldsmith.llm.client import ServerUnavailable

    cfg = llm_config(f"http://127.0.0.1:{free_port()}/v1")
    cfg.retry.outage_timeout_s = 1.0
    t0 = time.monotonic()
    with pytest.raises(ServerUnavailable, match="unreachable for .*run the same command again to resume"):
        run(_chat(cfg))
    assert 1.0 <= time.monotonic() - t0 < 5


def test_a_server_that_comes_back_within_the_outage_time_answers_the_call(fake_server):
    from conftest import free_port

    port = free_port()
    cfg = llm_config(f"http://127.0.0.1:{port}/v1")
    cfg.retry.outage_timeout_s = 20.0

    def come_back():  # the server is down for the first second of the call
        time.sleep(1.0)

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                data = json.dumps(completion("back")).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()

    threading.Thread(target=come_back, daemon=True).start()
    result, _ = run(_chat(cfg))
    assert (
        result.ok and result.content == "back" and result.attempts > cfg.retry.max_attempts
    )  # retried past the usual budget


def test_non_json_structured_reply_is_kept_as_parse_failure(fake_server):
    url, script = fake_server([(200, completion("Sure! Here is your city: Paris"), 0)])
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

    async def go():
        async with LLMClient(llm_config(url)) as client:
            return await client.structured(
                "critic", [{"role": "user", "content": "city?"}], schema, name="city"
            ), client.usage.snapshot()

    result, usage = run(go())
    assert not result.ok
    assert result.error_kind == "parse"
    assert result.raw == "Sure! Here is your city: Paris"
    assert usage["critic"]["failures"] == 1
    sent = script.requests[0]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == schema


def test_schema_mismatch_is_kept_with_where(fake_server):
    url, _ = fake_server([(200, completion('{"city": 42}'), 0)])
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

    async def go():
        async with LLMClient(llm_config(url)) as client:
            return await client.structured("critic", [{"role": "user", "content": "city?"}], schema)

    result = run(go())
    assert not result.ok and result.error_kind == "schema"
    assert "city" in result.error and result.raw == '{"city": 42}'


def test_requests_spread_over_replicas(fake_server):
    url_a, a = fake_server([(200, completion("a"), 0.2)])
    url_b, b = fake_server([(200, completion("b"), 0.2)])
    cfg = llm_config(url_a)
    cfg.endpoints["local"].urls = [url_a, url_b]

    async def go():
        async with LLMClient(cfg) as client:
            return await asyncio.gather(
                *[client.chat("critic", [{"role": "user", "content": str(i)}]) for i in range(8)]
            )

    results = run(go())
    assert all(r.ok for r in results)
    assert len(a.requests) >= 3 and len(b.requests) >= 3


@pytest.mark.parametrize("balance", ["least_busy", "round_robin"])
def test_a_dead_replica_is_skipped_and_its_calls_go_to_the_live_one(fake_server, balance):
    from conftest import free_port

    url_live, live = fake_server([(200, completion("ok"), 0.05)])
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens: connection refused
    cfg = llm_config(url_live)
    cfg.endpoints["local"].urls = [dead, url_live]
    cfg.endpoints["local"].balance = balance
    cfg.retry.outage_timeout_s = 30  # a refused connection is an outage, unless another replica answers

    async def go():
        async with LLMClient(cfg) as client:
            results = await asyncio.gather(
                *[client.chat("critic", [{"role": "user", "content": str(i)}]) for i in range(12)]
            )
            return results, client.usage.snapshot()["critic"]

    t0 = time.monotonic()
    results, usage = run(go())
    assert all(r.ok and r.content == "ok" for r in results)
    assert len(live.requests) == 12
    # the dead replica costs the calls that went there before its first refusal, then none
    assert usage["retries"] <= 6 and time.monotonic() - t0 < 10  # half of the first 12 picks, no more


def test_concurrency_is_bounded_per_replica(fake_server):
    url, script = fake_server([(200, completion("x"), 0.3)])
    cfg = llm_config(url)
    cfg.endpoints["local"].max_concurrency = 2
    t0 = time.monotonic()

    async def go():
        async with LLMClient(cfg) as client:
            return await asyncio.gather(
                *[client.chat("critic", [{"role": "user", "content": str(i)}]) for i in range(6)]
            )

    assert all(r.ok for r in run(go()))
    assert time.monotonic() - t0 >= 0.85  # 6 requests, 2 at a time, 0.3 s each


def test_the_same_constrained_call_later_in_a_conversation_gets_a_new_id():
    schema = constrained_turn_schema(
        [{"type": "function", "function": {"name": "get", "parameters": {"type": "object", "properties": {}}}}],
        require_tool=True,
    )
    content = '{"tool_calls": [{"name": "get", "arguments": {}}]}'
    ids = []
    for turn in (2, 4, 4):
        r = LLMResult(ok=True, role="agent", model="m", endpoint="local", content=content)
        parse_constrained_turn(r, schema, turn=turn)
        ids.append(r.tool_calls[0]["id"])
    assert ids[0] != ids[1] and ids[1] == ids[2]  # a retry differs, a replay of the same turn does not


def test_constrained_turn_becomes_openai_tool_calls():
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
        }
    ]
    schema = constrained_turn_schema(tools, require_tool=False)
    r = LLMResult(
        ok=True,
        role="agent",
        model="m",
        endpoint="e",
        content='{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]}',
    )
    parse_constrained_turn(r, schema)
    assert r.ok and r.content is None
    (call,) = r.tool_calls
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Oslo"}'}
    text = LLMResult(ok=True, role="agent", model="m", endpoint="e", content='{"content": "It is sunny."}')
    parse_constrained_turn(text, schema)
    assert text.ok and text.content == "It is sunny." and text.tool_calls == []
    bad = LLMResult(
        ok=True,
        role="agent",
        model="m",
        endpoint="e",
        content='{"tool_calls": [{"name": "launch_rocket", "arguments": {}}]}',
    )
    parse_constrained_turn(bad, schema)
    assert not bad.ok and bad.error_kind == "schema"
    required = constrained_turn_schema(tools, require_tool=True)
    assert "anyOf" not in required and required["required"] == ["tool_calls"]


def test_grammar_schema_drops_what_slows_or_breaks_the_engine_and_keeps_the_rest():
    from worldsmith.llm.client import grammar_schema

    schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "pattern": "^a+$", "maxLength": 5},
            "sites": {"type": "array", "items": {"enum": []}},
            "at": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "format": "date"},
        },
        "required": ["pattern"],
    }
    assert grammar_schema(schema) == {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "maxLength": 5},
            "sites": {"type": "array", "items": {}},
            "at": {"type": "string"},
            "day": {"type": "string", "format": "date"},  # a fixed-length rule, kept: SmolLM2 wrote timestamps
        },
        "required": ["pattern"],
    }


@pytest.mark.parametrize("prose", [True, False])
def test_prose_replies_put_the_sentence_pattern_in_the_grammar_and_check_it(fake_server, prose):
    """`prose_replies` (the default): the reply branch of a constrained turn carries PROSE_REPLY_PATTERN, and it
    reaches the server's grammar (other patterns are dropped there); a reply that breaks it is a schema error,
    sampled again like any unusable output. Off: any string up to MAX_REPLY_CHARS, as before."""
    from worldsmith.llm.client import grammar_schema
    from worldsmith.vocab import PROSE_REPLY_PATTERN

    tools = [{"type": "function", "function": {"name": "get", "parameters": {"type": "object", "properties": {}}}}]
    sent_pattern = grammar_schema(constrained_turn_schema(tools, require_tool=False, prose=True))["anyOf"][0]
    assert sent_pattern["properties"]["content"]["pattern"] == PROSE_REPLY_PATTERN
    url, script = fake_server(
        [(200, completion('{"content": "[<tool_response>]"}'), 0), (200, completion('{"content": "It is 4."}'), 0)]
    )

    async def go():
        async with LLMClient(llm_config(url, prose_replies=prose)) as client:
            msgs = [{"role": "user", "content": "how many?"}]
            return [await client.tool_step("agent", msgs, tools, mode="constrained", seed=s) for s in (1, 2)]

    markup, sentence = run(go())
    reply = script.requests[0]["response_format"]["json_schema"]["schema"]["anyOf"][0]["properties"]["content"]
    assert sentence.ok and sentence.content == "It is 4."
    if prose:
        assert reply == {"type": "string", "pattern": PROSE_REPLY_PATTERN}
        assert not markup.ok and markup.error_kind == "schema" and "content" in markup.error
    else:
        assert "pattern" not in reply and reply["maxLength"] == MAX_REPLY_CHARS
        assert markup.ok and markup.content == "[<tool_response>]"
    for text, ok in [
        ("The order ships on 2026-03-04.", True),
        ("[{id}]", False),
        ("{{text}}", False),
        ("the <b>order</b>", False),
        ("Line one\nline two", False),
        ("A" * MAX_REPLY_CHARS, True),
        ("A" * (MAX_REPLY_CHARS + 1), False),
    ]:
        r = LLMResult(ok=True, role="agent", model="m", endpoint="e", content=json.dumps({"content": text}))
        parse_constrained_turn(r, constrained_turn_schema([], require_tool=False, prose=True))
        assert r.ok is ok, text


def test_a_quoting_reply_pattern_reaches_the_grammar_and_is_checked():
    """`quote` (rollouts.reply_quotes_asked): the reply branch's pattern requires one of the values, the server's
    grammar keeps it (other patterns are dropped there), and a reply without any of them is a schema error."""
    from worldsmith.llm.client import grammar_schema

    tools = [{"type": "function", "function": {"name": "get", "parameters": {"type": "object", "properties": {}}}}]
    schema = constrained_turn_schema(tools, require_tool=False, prose=True, quote=["Related work", "v1.2 (beta)"])
    pattern = grammar_schema(schema)["anyOf"][0]["properties"]["content"]["pattern"]
    assert "(Related work|v1\\.2 \\(beta\\))" in pattern and pattern.endswith("{0,130}$")
    for text, ok in [
        ("The section is called Related work.", True),
        ("It runs v1.2 (beta) now.", True),
        ("The paper is available for download at https://arxiv.org/abs/2401.12345", False),
        ("Related work is the section.", True),  # a value with a capital letter may open the reply
        ("atlas-falcon is the name, not Related work.", False),  # otherwise a capital letter opens it
        ("The section is Related work" + "." * MAX_REPLY_CHARS, False),
    ]:
        r = LLMResult(ok=True, role="agent", model="m", endpoint="e", content=json.dumps({"content": text}))
        parse_constrained_turn(r, schema)
        assert r.ok is ok, text
    # without prose replies the value is not required (the pattern lives in the prose grammar)
    plain = constrained_turn_schema(tools, require_tool=False, prose=False, quote=["Related work"])
    assert "pattern" not in plain["anyOf"][0]["properties"]["content"]


def test_prefix_cache_hits_reported_by_the_server_are_counted(fake_server):
    body = completion("hi")
    body["usage"]["prompt_tokens_details"] = {"cached_tokens": 8}
    url, _ = fake_server([(200, body, 0)])
    result, usage = run(_chat(llm_config(url)))
    assert (
        result.cached_tokens == 8 and usage["critic"]["cached_tokens"] == 8 and usage["critic"]["prompt_tokens"] == 11
    )


# ----------------------------------------------------------- transient failures: the server's, not the model's

LLAMACPP_CONTEXT_EXCEEDED = {
    "error": {"code": 500, "message": "Context size has been exceeded.", "type": "server_error"}
}


async def _chat_raising(cfg):
    from worldsmith.llm.client import TransientServerFailure

    async with LLMClient(cfg) as client:
        try:
            result = await client.raising_transient().chat("critic", [{"role": "user", "content": "hi"}])
        except TransientServerFailure as exc:
            return exc, client.usage.snapshot()
        return result, client.usage.snapshot()


def test_a_call_the_server_failed_after_its_retries_raises_on_a_raising_client(fake_server):
    """The rollouts' client raises for a timeout, a 5xx after retries or a refused connection (outage wait off), so
    an episode the server failed is not stored as finished; a plain client returns the failed call as before."""
    from conftest import free_port

    from worldsmith.llm.client import TransientServerFailure

    url, script = fake_server([(503, {"error": "overloaded"}, 0)])
    failure, usage = run(_chat_raising(llm_config(url)))
    assert isinstance(failure, TransientServerFailure) and failure.kind == "http", failure
    assert "HTTP 503" in failure.reason and "after 3 attempts" in failure.reason and failure.reason.startswith("critic")
    assert len(script.requests) == 3 and usage["critic"]["failures_by_kind"] == {"http": 1}  # retried, then counted
    assert run(_chat(llm_config(url)))[0].error_kind == "http"  # the plain client: a failed result, no raise

    slow, _ = fake_server([(200, completion("late"), 1.0)])
    cfg = llm_config(slow)
    cfg.endpoints["local"].timeout_s = 0.2
    assert run(_chat_raising(cfg))[0].kind == "timeout"

    cfg = llm_config(f"http://127.0.0.1:{free_port()}/v1")
    cfg.retry.outage_timeout_s = 0  # no outage wait: a refused connection is a failed call
    assert run(_chat_raising(cfg))[0].kind == "connection"


def test_the_requests_own_failures_are_not_transient(fake_server):
    """A 400 and llama.cpp's 500 for a context exceeded fail the same way again: returned (not raised) and, for the
    500, not retried; a replayed episode would only meet them again."""
    url, script = fake_server([(400, {"error": "bad request"}, 0)])
    result, _ = run(_chat_raising(llm_config(url)))
    assert isinstance(result, LLMResult) and not result.ok and "HTTP 400" in result.error
    url, script = fake_server([(500, LLAMACPP_CONTEXT_EXCEEDED, 0), (200, completion("hello"), 0)])
    result, _ = run(_chat_raising(llm_config(url)))
    assert isinstance(result, LLMResult) and result.error_kind == "http" and "Context size" in result.error
    assert len(script.requests) == 1
