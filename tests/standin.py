"""A stand-in model server for the hand-made order world of tests/scripted_worlds.py (a test and benchmark double,
never used by the product).

It speaks the OpenAI chat-completions API over real HTTP (uvicorn + starlette, one asyncio loop, so
thousands of requests can wait on it at once) and plays every role of an episode of `cancel_task`, as
tests/test_resilience.py's PIPELINE_SCRIPT does with ScriptedClient:

- user simulator (`response_format` named `user_turn`): the first turn asks to cancel o-1001 (with a
  reference taken from the request's seed, so episodes differ as with a real simulator); later turns
  say thanks and stop;
- agent (`assistant_turn` in constrained mode: JSON matching the schema the client sent; or `tools`
  without `response_format` in native mode: `tool_calls` in the message): calls
  `cancel_order {"order_id": "o-1001"}` while no tool has answered yet (or the last tool answer was an
  error, i.e. an injected fault: it retries), else replies "Order o-1001 is cancelled.";
- tool simulator (`tool_result`): cancel_order sets the status of the order its arguments name (found in the
  world data of the prompt) to cancelled; get_order returns that order and changes nothing;
- critic (`critique`): every rubric passed, score 8.

Answers are a function of the request body only (tool-call ids are hashes of it, `created` is 0), so two
runs of the pipeline against it store identical messages. `usage` is filled: prompt tokens ~ characters of
the messages and tools / 4, completion tokens ~ characters of the answer / 4.

Latency (optional): each answer waits a delay drawn from a lognormal distribution with the given median
and 99th percentile, seeded by a hash of the request body (deterministic too). Default: none.

    python tests/standin.py --port 8020 [--latency-median-ms 800 --latency-p99-ms 4000]

prints its base URL (ending in /v1) and serves until killed. From Python:

    with standin_server(latency=Latency(800, 4000)) as url:   # a background thread; process=True: a child
        ...                                                  # process (its CPU is not the caller's)

GET /stats returns what it served (requests by kind, tokens, in flight and its peak, its process's CPU
seconds and peak RSS); GET /health and GET /v1/models answer as a server does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import random
import resource
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

ORDER_ID = "o-1001"
REPLY = "Order o-1001 is cancelled."
Z99 = 2.3263478740408408  # the standard normal's 99th percentile


@dataclass(frozen=True)
class Latency:
    """A lognormal delay per request: `median_ms` and `p99_ms` fix its mu and sigma."""

    median_ms: float
    p99_ms: float

    def __post_init__(self) -> None:
        if not (0 < self.median_ms <= self.p99_ms):
            raise ValueError(f"latency needs 0 < median <= p99, got {self.median_ms} / {self.p99_ms}")

    @property
    def mean_ms(self) -> float:
        sigma = math.log(self.p99_ms / self.median_ms) / Z99
        return self.median_ms * math.exp(sigma * sigma / 2)

    def seconds(self, body: bytes) -> float:
        """The delay for this request body (the same body, the same delay)."""
        seed = int.from_bytes(hashlib.blake2b(body, digest_size=8).digest(), "big")
        sigma = math.log(self.p99_ms / self.median_ms) / Z99
        return random.Random(seed).lognormvariate(math.log(self.median_ms / 1000), sigma)


# ------------------------------------------------------------------ the answers


def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha1(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def _allows_tool_calls(schema: Any) -> bool:
    """Whether a constrained turn's schema has the tool-call branch (not the reply-only schema)."""
    if not isinstance(schema, dict):
        return False
    if "tool_calls" in (schema.get("properties") or {}):
        return True
    return any(_allows_tool_calls(s) for s in schema.get("anyOf") or [])


def _tool_failed(content: Any) -> bool:
    try:
        return isinstance(data := json.loads(content or ""), dict) and "error" in data
    except ValueError:
        return False


def _agent_calls(messages: list[dict[str, Any]]) -> bool:
    """Call cancel_order while no tool has answered, or the last answer was an (injected) error."""
    tool_replies = [m for m in messages if m.get("role") == "tool"]
    return not tool_replies or _tool_failed(tool_replies[-1].get("content"))


def _order(prompt: str) -> tuple[int | None, dict[str, Any] | None]:
    """(position, record) of the order a tool simulator's prompt asks about: the `order_id` of its call
    arguments, looked up in the world data it shows (tool_sim.jinja)."""
    try:
        arguments = json.loads(prompt.split("Call arguments: ", 1)[1].split("\n", 1)[0])
        state = json.loads(prompt.split("World data", 1)[1].split(":\n", 1)[1].split("\n\n", 1)[0])
        orders = state["orders"]
    except (IndexError, ValueError, KeyError, TypeError):
        return None, None
    wanted = arguments.get("order_id") if isinstance(arguments, dict) else None
    return next(((i, o) for i, o in enumerate(orders) if isinstance(o, dict) and o.get("id") == wanted), (None, None))


def answer(body: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    """(kind, assistant message, finish_reason) for a chat-completions request body."""
    messages = body.get("messages") or []
    rf = body.get("response_format") or {}
    spec = rf.get("json_schema") or {}
    name, schema = spec.get("name"), spec.get("schema") or {}
    props = schema.get("properties") or {}

    def text(data: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": json.dumps(data)}

    if name == "user_turn":
        first = (props.get("action") or {}).get("enum") == ["continue"]
        seed = body.get("seed") or 0
        if first:
            return (
                "user_sim",
                text({"message": f"Please cancel {ORDER_ID}, my reference is R{seed % 997}.", "action": "continue"}),
                "stop",
            )
        return "user_sim", text({"message": "Thanks.", "action": "stop"}), "stop"
    if name == "tool_result":
        prompt = "\n".join(str(m.get("content") or "") for m in messages)
        read_only = (props.get("patch") or {}).get("maxItems") == 0
        at, order = _order(prompt)
        if "Tool: cancel_order" in prompt and not read_only and at is not None:
            patch = [{"op": "replace", "path": f"/orders/{at}/status", "value": "cancelled"}]
            return "tool_sim", text({"result": {"id": order["id"], "status": "cancelled"}, "patch": patch}), "stop"
        result = order if order is not None else {"error": {"code": "not_found", "message": "no such order"}}
        return "tool_sim", text({"result": result, "patch": []}), "stop"
    if name == "critique":
        ids = list((props.get("rubrics") or {}).get("properties") or {})
        verdicts = {i: {"passed": True, "reason": "Done as asked."} for i in ids}
        return "critic", text({"rubrics": verdicts, "score": 8}), "stop"
    if name == "assistant_turn":
        if _agent_calls(messages) and _allows_tool_calls(schema):
            return (
                "agent_constrained",
                text({"tool_calls": [{"name": "cancel_order", "arguments": {"order_id": ORDER_ID}}]}),
                "stop",
            )
        return "agent_constrained", text({"content": REPLY}), "stop"
    if body.get("tools") and not rf:
        if _agent_calls(messages) and body.get("tool_choice") != "none":
            call = {
                "id": f"call_{_digest(body)[:12]}",
                "type": "function",
                "function": {"name": "cancel_order", "arguments": json.dumps({"order_id": ORDER_ID})},
            }
            return "agent_native", {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        return "agent_native", {"role": "assistant", "content": REPLY}, "stop"
    return "other", {"role": "assistant", "content": "OK."}, "stop"


def _tokens(chars: int) -> int:
    return max(1, -(-chars // 4))


def completion(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(kind, the chat.completion object) for a request body."""
    kind, message, finish = answer(body)
    prompt_chars = sum(
        len(str(m.get("content") or "")) + len(json.dumps(m.get("tool_calls") or ""))
        for m in body.get("messages") or []
    )
    prompt_chars += len(json.dumps(body["tools"])) if body.get("tools") else 0
    out_chars = len(message.get("content") or "") + len(json.dumps(message.get("tool_calls") or ""))
    prompt, done = _tokens(prompt_chars), _tokens(out_chars)
    return kind, {
        "id": f"chatcmpl-{_digest(body)}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model") or "standin",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done},
    }


# ------------------------------------------------------------------ the server


class Stats:
    def __init__(self) -> None:
        self.by_kind: Counter[str] = Counter()
        self.requests = self.in_flight = self.peak_in_flight = 0
        self.prompt_tokens = self.completion_tokens = 0
        self.delay_s = 0.0
        self.started = time.time()

    def snapshot(self) -> dict[str, Any]:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return {
            "requests": self.requests,
            "by_kind": dict(sorted(self.by_kind.items())),
            "in_flight": self.in_flight,
            "peak_in_flight": self.peak_in_flight,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "delay_s": round(self.delay_s, 3),
            "uptime_s": round(time.time() - self.started, 3),
            "process_cpu_s": round(ru.ru_utime + ru.ru_stime, 3),  # the serving process (in thread mode: the caller's)
            "process_max_rss_mb": round(ru.ru_maxrss / 1024, 1),
        }


def _json(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type="application/json")


def make_app(latency: Latency | None = None) -> Starlette:
    stats = Stats()

    async def chat(request: Request) -> Response:
        raw = await request.body()
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return _json({"error": {"message": "body is not JSON", "type": "invalid_request_error"}}, 400)
        stats.in_flight += 1
        stats.peak_in_flight = max(stats.peak_in_flight, stats.in_flight)
        try:
            if latency is not None:
                delay = latency.seconds(raw)
                stats.delay_s += delay
                await asyncio.sleep(delay)
            kind, out = completion(body)
        finally:
            stats.in_flight -= 1
        stats.requests += 1
        stats.by_kind[kind] += 1
        stats.prompt_tokens += out["usage"]["prompt_tokens"]
        stats.completion_tokens += out["usage"]["completion_tokens"]
        return _json(out)

    async def models(request: Request) -> Response:
        return _json({"object": "list", "data": [{"id": "standin", "object": "model", "owned_by": "worldsmith-tests"}]})

    async def health(request: Request) -> Response:
        return _json({"status": "ok"})

    async def stats_route(request: Request) -> Response:
        return _json(stats.snapshot())

    app = Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/stats", stats_route, methods=["GET"]),
        ]
    )
    app.state.stats = stats
    return app


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(4096)
    return sock


def _server(app: Starlette) -> uvicorn.Server:
    # no access log, a long keep-alive (the client holds its connections between an episode's calls), and no
    # concurrency limit: the client's own bounds decide how many requests wait here
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, timeout_keep_alive=120, backlog=4096, lifespan="off"
    )
    return uvicorn.Server(config)


def stats(url: str) -> dict[str, Any]:
    """What the stand-in at `url` (the base URL, with or without /v1) has served so far."""
    import httpx

    return httpx.get(url.removesuffix("/v1") + "/stats", timeout=10).json()


@contextlib.contextmanager
def standin_server(
    latency: Latency | None = None, host: str = "127.0.0.1", port: int = 0, process: bool = False
) -> Iterator[str]:
    """Serve the stand-in while the block runs; yields its base URL (…/v1). `process=True` runs it in a
    child process (its CPU stays out of the caller's rusage); else in a thread of this process."""
    if process:
        command = [sys.executable, str(Path(__file__).resolve()), "--host", host, "--port", str(port)]
        if latency is not None:
            command += ["--latency-median-ms", str(latency.median_ms), "--latency-p99-ms", str(latency.p99_ms)]
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline().strip()
            if not line.startswith("http"):
                raise RuntimeError(f"the stand-in did not start: {line!r}")
            yield line
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return
    sock = _bind(host, port)
    server = _server(make_app(latency))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="standin")
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the stand-in did not start")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{sock.getsockname()[1]}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8020, help="0: any free port (the URL printed says which)")
    p.add_argument("--latency-median-ms", type=float, default=0.0, help="0: answer at once")
    p.add_argument("--latency-p99-ms", type=float, default=0.0)
    a = p.parse_args()
    latency = Latency(a.latency_median_ms, max(a.latency_p99_ms, a.latency_median_ms)) if a.latency_median_ms else None
    sock = _bind(a.host, a.port)
    print(f"http://{a.host}:{sock.getsockname()[1]}/v1", flush=True)
    _server(make_app(latency)).run(sockets=[sock])


if __name__ == "__main__":
    main()
