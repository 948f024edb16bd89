"""The one way worldsmith talks to a model: an async client over OpenAI-compatible servers.

- Roles (`agent`, `critic`, ...) name an endpoint and sampling settings in pipeline.yaml.
- An endpoint has one or more replica URLs; each URL has its own concurrency bound and
  requests go to the least busy one (or round robin). A replica that refuses a connection
  is skipped for `REPLICA_COOL_OFF_S` (its failed call is retried on another), so a run
  carries on while one of several replicas is down.
- Connection errors, timeouts, 429 and 5xx are retried with exponential backoff and jitter
  (tenacity); a call that still fails returns an `LLMResult` with `ok=False` and the
  reason, which the caller records. Nothing raises for a model's bad answer.
- A server that cannot be reached at all is an outage, not a bad answer: the call keeps
  retrying for `retry.outage_timeout_s`, then raises `ServerUnavailable`, so the run stops
  (finished records stay on disk) instead of recording every pending item as failed; the
  same command resumes once the server is back.
- A call that still fails in transport after its retries (a timeout, 429 or 5xx, a connection
  with the outage wait off) is the server's failure, not the model's answer: a client made
  with `raising_transient()` (the rollouts') raises `TransientServerFailure` for it, so the
  episode it was in is not stored as finished and is played again on resume. A 500 that says
  the context is exceeded is the request's own fault: neither retried nor transient.
- Structured output asks the server for JSON matching a JSON Schema (`response_format`
  json_schema, which vLLM and llama.cpp both enforce); the reply is validated with
  `jsonschema` and a parse or schema failure keeps the raw text.
- Tool calls come from the server (`native`) or from schema-constrained JSON turned into
  standard OpenAI `tool_calls` (`constrained`), the same on every engine.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import os
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import httpx2
import jsonschema
import openai
import referencing.exceptions
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, wait_random_exponential

from worldsmith.config import EMBEDDED, POLICY_ENDPOINT, EndpointConfig, LLMConfig, RoleConfig
from worldsmith.jsonschemas import embed_schema
from worldsmith.records import content_id
from worldsmith.vocab import (
    MAX_REPLY_CHARS,
    PROSE_REPLY_PATTERN,
    is_prose_pattern,
    opening_reply_pattern,
    quoting_reply_pattern,
)

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504}
POOL_CONNECTIONS = 64  # requests in flight per HTTP pool (benchmarks/README.md, "Pipeline ceiling")
REPLICA_COOL_OFF_S = 30.0  # a replica that refused a connection gets no request this long (then one to try it)


class ServerUnavailable(RuntimeError):
    """No server of an endpoint could be reached for `llm.retry.outage_timeout_s`: the run stops and resumes later."""


class TransientServerFailure(ServerUnavailable):
    """A call of a `raising_transient()` client that failed in transport after its retries (timeout, connection,
    429 / 5xx): the server's failure. The rollouts do not store the episode; it is played again on resume."""

    def __init__(self, kind: str, reason: str):
        super().__init__(reason)
        self.kind, self.reason = kind, reason


@dataclass
class LLMResult:
    ok: bool
    role: str
    model: str
    endpoint: str
    content: str | None = None  # reply text (or the raw JSON text of a structured reply)
    data: Any = None  # parsed JSON for structured calls
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # OpenAI format
    error: str | None = None  # why it failed, for the record
    error_kind: str | None = None  # timeout | connection | http | parse | schema | empty
    raw: str | None = None  # the model's text when it could not be used
    finish_reason: str | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens the server's prefix cache served (when it says)
    completion_tokens: int = 0
    latency_s: float = 0.0
    attempts: int = 0
    fallback: str | None = None  # set when a native turn had to be redone constrained
    logprobs: list[tuple[str, float]] | None = None  # (token, log-probability) sampled, when asked for

    def message(self) -> dict[str, Any]:
        """The assistant message in OpenAI chat format."""
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": self.content if not self.tool_calls else (self.content or None),
        }
        if self.tool_calls:
            msg["tool_calls"] = self.tool_calls
        return msg


@dataclass
class RoleUsage:
    calls: int = 0
    failures: int = 0
    retries: int = 0  # extra attempts after timeouts, connection errors, 429 and 5xx
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    failures_by_kind: dict[str, int] = field(default_factory=lambda: defaultdict(int))


COUNTED = ("calls", "failures", "retries", "prompt_tokens", "cached_tokens", "completion_tokens")  # RoleUsage's counts


class UsageMeter:
    """Token usage and latency per role, saved with each run."""

    def __init__(self, parent: UsageMeter | None = None) -> None:
        self.by_role: dict[str, RoleUsage] = defaultdict(RoleUsage)
        self.parent = parent  # a run's meter, when this one counts a part of it (one episode)

    def add(self, result: LLMResult) -> None:
        if self.parent is not None:
            self.parent.add(result)
        usage = self.by_role[result.role]
        usage.calls += 1
        usage.retries += max(result.attempts - 1, 0)
        usage.prompt_tokens += result.prompt_tokens
        usage.cached_tokens += result.cached_tokens
        usage.completion_tokens += result.completion_tokens
        usage.latency_s += result.latency_s
        if not result.ok:
            self.add_failure(result.role, result.error_kind or "unknown")

    def add_failure(self, role: str, kind: str) -> None:
        """Count a failure; also for a call the server answered but whose reply we refused."""
        if self.parent is not None:
            self.parent.add_failure(role, kind)
        usage = self.by_role[role]
        usage.failures += 1
        usage.failures_by_kind[kind] += 1

    def absorb(self, snapshot: dict[str, Any]) -> None:
        """Add the usage another process counted (a shard run on a Ray worker), given as its `snapshot()`."""
        for role, d in snapshot.items():
            usage = self.by_role[role]
            for k in COUNTED:
                setattr(usage, k, getattr(usage, k) + d.get(k, 0))
            usage.latency_s += d.get("latency_s", 0.0)
            for kind, n in d.get("failures_by_kind", {}).items():
                usage.failures_by_kind[kind] += n
        if self.parent is not None:
            self.parent.absorb(snapshot)

    def snapshot(self) -> dict[str, Any]:
        out = {}
        for role, u in sorted(self.by_role.items()):
            d = {k: getattr(u, k) for k in COUNTED}
            d["latency_s"] = round(u.latency_s, 3)
            d["failures_by_kind"] = dict(u.failures_by_kind)
            d["mean_latency_s"] = round(u.latency_s / u.calls, 4) if u.calls else 0.0
            out[role] = d
        return out

    @property
    def completion_tokens(self) -> int:
        return sum(u.completion_tokens for u in self.by_role.values())


class _Replica:
    """One server URL: a concurrency bound and HTTP pools of at most `POOL_CONNECTIONS` connections
    each, taken in turn (a pool's bookkeeping per request grows with its size)."""

    def __init__(self, url: str, cfg: EndpointConfig):
        api_key = os.environ.get(cfg.api_key_env, cfg.api_key) if cfg.api_key_env else cfg.api_key
        self.url = url
        self.in_flight = 0
        self.down_until = 0.0  # monotonic time; a replica that refused a connection is skipped until then
        self.semaphore = asyncio.Semaphore(cfg.max_concurrency)
        pools = -(-cfg.max_concurrency // POOL_CONNECTIONS)
        per_pool = -(-cfg.max_concurrency // pools)
        self.clients = [
            openai.AsyncOpenAI(
                base_url=url,
                api_key=api_key,
                timeout=cfg.timeout_s,
                max_retries=0,  # retries are ours: one policy, counted
                # httpx2, the HTTP library of openai 3: its pool does one pass per request, where legacy
                # httpx's does one per idle connection (encode/httpcore#1035), 5x the CPU at 1,024 in flight
                http_client=httpx2.AsyncClient(
                    timeout=cfg.timeout_s,
                    limits=httpx2.Limits(max_connections=per_pool * 2, max_keepalive_connections=per_pool),
                ),
            )
            for _ in range(pools)
        ]
        self._turn = itertools.cycle(self.clients)

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The pool for the next request."""
        return next(self._turn)

    async def aclose(self) -> None:
        for c in self.clients:
            await c.close()


class _Endpoint:
    def __init__(self, name: str, cfg: EndpointConfig, embedded_url: str | None):
        self.name = name
        self.cfg = cfg
        urls = [embedded_url if u == EMBEDDED else u for u in cfg.urls]
        if any(u is None for u in urls):
            raise ValueError(f"endpoint {name!r} uses the embedded server, but none is running")
        self.replicas = [_Replica(u.rstrip("/"), cfg) for u in urls]
        self._cycle = itertools.cycle(range(len(self.replicas)))

    def pick(self) -> _Replica:
        """The replica for the next attempt: among those up (all, if none is), the least busy or the next in turn."""
        now = time.monotonic()
        up = [r for r in self.replicas if r.down_until <= now] or self.replicas
        if self.cfg.balance == "round_robin" or len(up) == 1:
            for _ in range(len(self.replicas)):
                replica = self.replicas[next(self._cycle)]
                if replica in up:
                    return replica
        return min(up, key=lambda r: r.in_flight)


class _Retryable(Exception):
    def __init__(self, kind: str, reason: str):
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


# llama.cpp answers HTTP 500 when the model's native tool call is not valid JSON: the model's output was
# malformed, not the server broken (and a seeded retry would only make the same call again).
MALFORMED_TOOL_CALL_MARKERS = ("Failed to parse tool call",)
# an error body that says the request does not fit the context (llama.cpp answers it with a 500): the same
# request fails the same way again, so it is neither retried nor a transient failure
CONTEXT_EXCEEDED_MARKERS = ("Context size has been exceeded", "exceeds the available context size")


def malformed_tool_call(text: str) -> bool:
    """An error body (or a reason quoting one) that says the model's own tool call did not parse."""
    return any(m in text for m in MALFORMED_TOOL_CALL_MARKERS)


# the failure kinds of `_classify` that say the server did not answer (not what the model wrote)
TRANSPORT_FAILURES = ("timeout", "connection", "http")


def _classify(exc: Exception) -> tuple[str, str, bool]:
    """(kind, reason, retryable) for an exception from the openai client."""
    if isinstance(exc, openai.APITimeoutError):
        return "timeout", f"timeout: no answer within the per-call limit ({exc.__class__.__name__})", True
    if isinstance(exc, openai.APIConnectionError):
        return "connection", f"connection error: {exc.__cause__ or exc}", True
    if isinstance(exc, openai.APIStatusError):
        body = exc.response.text[:300] if exc.response is not None else ""
        if malformed_tool_call(body):
            return "parse", f"the server could not parse the model's tool call: HTTP {exc.status_code}: {body}", False
        retryable = exc.status_code in RETRYABLE_STATUS and not any(m in body for m in CONTEXT_EXCEEDED_MARKERS)
        return "http", f"HTTP {exc.status_code}: {body}", retryable
    return "error", f"{exc.__class__.__name__}: {exc}", False


class LLMClient:
    def __init__(
        self,
        cfg: LLMConfig,
        embedded_url: str | None = None,
        usage: UsageMeter | None = None,
        policy_url: str | None = None,
    ):
        self.cfg = cfg
        # only endpoints a role uses: an unused one may name the embedded server that was (rightly) not started
        used = cfg.used_endpoints()
        self.endpoints = {name: _Endpoint(name, ep, embedded_url) for name, ep in cfg.endpoints.items() if name in used}
        self.usage = usage if usage is not None else UsageMeter()
        self.raise_transient = False  # True: a call failed in transport after its retries raises (raising_transient)
        self._agent_role = cfg.roles.agent
        if cfg.policy.enabled:  # the agent role talks to the policy server; its sampling settings stay
            if policy_url is None:
                raise ValueError("llm.policy is enabled, but no policy server is running")
            agent_ep = cfg.endpoints[cfg.roles.agent.endpoint]
            policy = EndpointConfig(
                urls=[policy_url],
                model=cfg.policy.model,
                max_concurrency=cfg.policy_server().parallel,
                timeout_s=agent_ep.timeout_s,
            )
            self.endpoints[POLICY_ENDPOINT] = _Endpoint(POLICY_ENDPOINT, policy, None)
            self._agent_role = cfg.roles.agent.model_copy(update={"endpoint": POLICY_ENDPOINT, "model": None})

    async def aclose(self) -> None:
        for ep in self.endpoints.values():
            for r in ep.replicas:
                await r.aclose()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    def metered(self, usage: UsageMeter) -> LLMClient:
        """This client (same endpoints and limits) counting into `usage` as well as its own meter."""
        if usage.parent is None:
            usage.parent = self.usage
        child = copy.copy(self)  # shares the endpoints: close only the original
        child.usage = usage
        return child

    def raising_transient(self) -> LLMClient:
        """This client (same endpoints, limits and meter) raising `TransientServerFailure` for a call that failed
        in transport after its retries, instead of returning it failed; its `metered` copies raise too."""
        child = copy.copy(self)  # shares the endpoints: close only the original
        child.raise_transient = True
        return child

    def role(self, name: str) -> RoleConfig:
        return self._agent_role if name == "agent" else getattr(self.cfg.roles, name)

    def model_for(self, role: str) -> str:
        return self.cfg.model_for(role)

    # -------------------------------------------------------------- raw call
    async def chat(
        self,
        role: str,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
        response_format: dict[str, Any] | None = None,
        seed: int | None = None,
        **sampling: Any,
    ) -> LLMResult:
        """One chat completion with retries. Never raises for a failed call."""
        rc = self.role(role)
        endpoint = self.endpoints[rc.endpoint]
        model = self.model_for(role)
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "temperature": rc.temperature,
            "top_p": rc.top_p,
            "max_tokens": rc.max_tokens,
        }
        if rc.frequency_penalty:
            kwargs["frequency_penalty"] = rc.frequency_penalty
        if rc.seed is not None or seed is not None:
            kwargs["seed"] = seed if seed is not None else rc.seed
        if tools:
            kwargs["tools"] = tools
            if tool_choice:
                kwargs["tool_choice"] = tool_choice
        if response_format:
            kwargs["response_format"] = response_format
        if rc.logprobs:
            kwargs["logprobs"] = True
        if rc.extra_body:
            kwargs["extra_body"] = dict(rc.extra_body)
        kwargs.update(sampling)

        result = LLMResult(ok=False, role=role, model=model, endpoint=endpoint.name)
        started = time.perf_counter()
        retry = self.cfg.retry

        def give_up(state: RetryCallState) -> bool:
            exc = state.outcome.exception() if state.outcome else None
            if isinstance(exc, _Retryable) and exc.kind == "connection" and retry.outage_timeout_s:
                return state.seconds_since_start >= retry.outage_timeout_s  # unreachable: wait for it, within limits
            return state.attempt_number >= retry.max_attempts

        try:
            async for attempt in AsyncRetrying(
                stop=give_up,
                wait=wait_random_exponential(multiplier=retry.initial_backoff_s, max=retry.max_backoff_s),
                retry=retry_if_exception(lambda e: isinstance(e, _Retryable)),
                reraise=True,
            ):
                with attempt:
                    result.attempts += 1
                    await self._once(endpoint, kwargs, result)
        except _Retryable as exc:
            if exc.kind == "connection" and retry.outage_timeout_s:
                raise ServerUnavailable(
                    f"endpoint {endpoint.name!r} unreachable for {time.perf_counter() - started:.0f}s ({exc.reason}); "
                    "finished records "
                    "are on disk: start the server (or fix llm.endpoints) and run the same command again to resume"
                ) from None
            result.error_kind, result.error = exc.kind, f"{exc.reason} (after {result.attempts} attempts)"
            if self.raise_transient:
                result.latency_s = time.perf_counter() - started
                self.usage.add(result)  # the failed call is counted, as any
                raise TransientServerFailure(exc.kind, f"{role}: {result.error}") from None
        except _Final as exc:
            result.error_kind, result.error = exc.kind, exc.reason
        result.latency_s = time.perf_counter() - started
        self.usage.add(result)
        return result

    async def _once(self, endpoint: _Endpoint, kwargs: dict[str, Any], result: LLMResult) -> None:
        replica = endpoint.pick()
        replica.in_flight += 1
        try:
            async with replica.semaphore:
                response = await replica.client.chat.completions.create(**kwargs)
        except Exception as exc:  # classified, never lost
            kind, reason, retryable = _classify(exc)
            if kind == "connection":  # a dead replica: the retry (and the next calls) go to the others for a while
                replica.down_until = time.monotonic() + REPLICA_COOL_OFF_S
            if retryable:
                raise _Retryable(kind, f"{replica.url}: {reason}") from exc
            raise _Final(kind, f"{replica.url}: {reason}") from exc
        finally:
            replica.in_flight -= 1
        if response.usage:
            result.prompt_tokens += response.usage.prompt_tokens or 0
            result.completion_tokens += response.usage.completion_tokens or 0
            details = response.usage.prompt_tokens_details
            result.cached_tokens += (details.cached_tokens or 0) if details else 0
        if not response.choices:
            raise _Final("empty", "the server returned no choices")
        choice = response.choices[0]
        result.finish_reason = choice.finish_reason
        result.content = choice.message.content
        result.tool_calls = [tc.model_dump(mode="json") for tc in (choice.message.tool_calls or [])]
        if choice.logprobs is not None and choice.logprobs.content:
            result.logprobs = [(t.token, t.logprob) for t in choice.logprobs.content]
        result.ok = True

    # ------------------------------------------------------- structured output
    async def structured(
        self,
        role: str,
        messages: list[dict[str, Any]],
        schema: dict[str, Any],
        name: str = "record",
        *,
        seed: int | None = None,
        **sampling: Any,
    ) -> LLMResult:
        """Ask for JSON matching `schema`; `data` holds it when `ok`. A bad reply keeps `raw`."""
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": grammar_schema(schema), "strict": True},
        }
        result = await self.chat(role, messages, response_format=response_format, seed=seed, **sampling)
        if result.ok:
            parse_structured(result, schema)
            if not result.ok:  # the meter counted it as a success; correct that
                self.usage.add_failure(role, result.error_kind or "parse")
        return result

    # ------------------------------------------------------------ tool calls
    async def tool_step(
        self,
        role: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        mode: str | None = None,
        require_tool: bool = False,
        seed: int | None = None,
        grammar_tools: list[dict[str, Any]] | None = None,
        quote: list[str] | None = None,
        opening: list[str] | None = None,
        **sampling: Any,
    ) -> LLMResult:
        """One assistant turn that may call tools, in the role's tool-call mode.

        `require_tool` forces a call: `tool_choice="required"` natively, or a schema with
        only the tool-call branch in constrained mode (llama.cpp ignores "required").
        `grammar_tools` (constrained mode): what the decoder may call, when narrower than the
        `tools` the prompt shows (grounded decoding); none left: a text reply. `quote` (constrained mode, prose
        replies): a text reply must say one of these values (`vocab.quoting_reply_pattern`); `opening`: it must open
        with one of these words (`vocab.opening_reply_pattern`).
        """
        mode = mode or self.role(role).tool_call_mode
        if mode == "native":
            result = await self.chat(
                role, messages, tools=tools, tool_choice="required" if require_tool else "auto", seed=seed, **sampling
            )
            if not (require_tool and result.ok and not result.tool_calls):
                return result
            # the server ignored tool_choice="required" (llama.cpp does): redo it constrained
            redo = await self.tool_step(
                role, messages, tools, mode="constrained", require_tool=True, seed=seed, **sampling
            )
            redo.fallback = "constrained"
            redo.prompt_tokens += result.prompt_tokens
            redo.completion_tokens += result.completion_tokens
            return redo
        allowed = tools if grammar_tools is None else grammar_tools
        rc = self.role(role)
        schema = constrained_turn_schema(
            allowed,
            require_tool=require_tool and bool(allowed),
            max_calls=4 if rc.parallel_tool_calls else 1,
            prose=self.cfg.prose_replies(role),
            quote=quote,
            opening=opening,
        )
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": "assistant_turn", "schema": grammar_schema(schema)},
        }
        # tools are still passed (tool_choice none) so the chat template renders them
        result = await self.chat(
            role, messages, tools=tools, tool_choice="none", response_format=response_format, seed=seed, **sampling
        )
        if result.ok:
            parse_constrained_turn(result, schema, turn=len(messages))
            if not result.ok:
                self.usage.add_failure(role, result.error_kind or "parse")
        return result


class _Final(Exception):
    def __init__(self, kind: str, reason: str):
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


# ------------------------------------------------------------------ helpers

# Keywords the server-side grammar leaves out. llama.cpp compiles regex patterns into
# grammar rules that made sampling many times slower here (4 tool designs timed out at
# 120 s with patterns). Length bounds stay: they cost ~6% and stop runaway strings. The
# reply is still validated against the full schema here, so nothing violating them passes.
GRAMMAR_DROPPED_KEYS = frozenset({"pattern", "format"})
# ...except the prose reply patterns (vocab.is_prose_pattern): one character class, as cheap as a length bound, and
# `format: date`, a fixed-length rule in llama.cpp's grammar: without it SmolLM2 sent a clinic's reschedule
# "2023-01-18T14:30:00Z" and failed on the error in 8 of a run's 15 clinic episodes (probe: 4 samples, 4 days with it)
GRAMMAR_KEPT_FORMATS = frozenset({"date"})


def grammar_schema(schema: Any) -> Any:
    """The schema sent to the server for constrained decoding (see GRAMMAR_DROPPED_KEYS)."""
    if isinstance(schema, dict):
        return {
            k: (
                grammar_schema(v)
                if k not in ("properties", "$defs", "definitions")
                else {n: grammar_schema(s) for n, s in v.items()}
            )
            for k, v in schema.items()
            if (
                k not in GRAMMAR_DROPPED_KEYS
                or (k == "pattern" and isinstance(v, str) and is_prose_pattern(v))
                or (k == "format" and v in GRAMMAR_KEPT_FORMATS)
            )
            and not (k == "enum" and v == [])  # llama.cpp refuses an empty enum (seen in a crawled tool)
        }
    if isinstance(schema, list):
        return [grammar_schema(x) for x in schema]
    return schema


def parse_structured(result: LLMResult, schema: dict[str, Any]) -> None:
    """Parse and validate `result.content` in place; a failure keeps the raw text."""
    text = result.content or ""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, and deep nesting / 4300+ digit integers
        result.ok, result.error_kind, result.raw = False, "parse", text
        what = (
            f"{exc.msg} at char {exc.pos}"
            if isinstance(exc, json.JSONDecodeError)
            else f"{type(exc).__name__}: {str(exc)[:200]}"
        )
        result.error = f"reply is not JSON: {what}" + (
            f" (finish_reason={result.finish_reason})" if result.finish_reason == "length" else ""
        )
        return
    try:
        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(data))
    except (
        jsonschema.exceptions.SchemaError,
        referencing.exceptions.Unresolvable,
        RecursionError,
    ) as exc:  # a schema no validator can use
        result.ok, result.error_kind, result.raw = False, "schema", text
        result.error = f"the schema cannot be checked: {type(exc).__name__}: {str(exc)[:200]}"
        return
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        result.ok, result.error_kind, result.raw = False, "schema", text
        result.error = f"reply does not match the schema at {where}: {error.message[:300]}"
        return
    result.data = data


# a string argument the schema leaves unbounded: a small model otherwise runs on until max_tokens
MAX_ARGUMENT_CHARS = 200


def cap_strings(schema: Any) -> Any:
    """The schema with every unbounded string (no maxLength, enum or const) bounded by MAX_ARGUMENT_CHARS."""
    if isinstance(schema, dict):
        out = {
            k: cap_strings(v)
            if k in ("properties", "$defs", "items", "anyOf", "oneOf", "allOf", "additionalProperties")
            else v
            for k, v in schema.items()
        }
        if isinstance(out.get("properties"), dict):
            out["properties"] = {n: cap_strings(v) for n, v in schema["properties"].items()}
        if isinstance(out.get("$defs"), dict):
            out["$defs"] = {n: cap_strings(v) for n, v in schema["$defs"].items()}
        if out.get("type") == "string" and not {"maxLength", "enum", "const"} & set(out):
            out["maxLength"] = MAX_ARGUMENT_CHARS
        return out
    if isinstance(schema, list):
        return [cap_strings(x) for x in schema]
    return schema


# A text turn: a tool-use assistant's reply is a few sentences; a small model otherwise rambles to max_tokens.
# A bound of 800 halved llama.cpp's sampling speed on this machine (44 vs 90 tok/s); 400 costs nothing measurable.
REPLY_SCHEMA = {
    "type": "object",
    "properties": {"content": {"type": "string", "minLength": 1, "maxLength": MAX_REPLY_CHARS}},
    "required": ["content"],
    "additionalProperties": False,
}


# the same turn with `prose_replies`: the pattern bounds the length too (llama.cpp reads a pattern, not maxLength)
def prose_reply_schema(pattern: str) -> dict[str, Any]:
    """REPLY_SCHEMA with its text kept to `pattern` (a prose pattern of vocab; it bounds the length too)."""
    return {**REPLY_SCHEMA, "properties": {"content": {"type": "string", "pattern": pattern}}}


PROSE_REPLY_SCHEMA = prose_reply_schema(PROSE_REPLY_PATTERN)


def constrained_turn_schema(
    tools: list[dict[str, Any]],
    *,
    require_tool: bool,
    max_calls: int = 4,
    prose: bool = False,
    quote: list[str] | None = None,
    opening: list[str] | None = None,
) -> dict[str, Any]:
    """JSON Schema of one assistant turn: a text reply (with `prose`, one the grammar keeps to sentence characters;
    with `quote` too, one that says one of those values; with `opening`, one that opens with one of those words, then
    goes on with a `quote`), or calls to the given tools."""
    reply = PROSE_REPLY_SCHEMA if prose else REPLY_SCHEMA
    if prose and opening:
        reply = prose_reply_schema(opening_reply_pattern(opening, quote))
    elif prose and quote:
        reply = prose_reply_schema(quoting_reply_pattern(quote))
    if not tools:
        return reply
    calls = []
    defs: dict[str, Any] = {}
    for i, tool in enumerate(tools):
        fn = tool["function"]
        # nested under anyOf, a tool's own "#/$defs/..." refs must be re-rooted to resolve
        params = embed_schema(fn.get("parameters") or {"type": "object", "properties": {}}, f"tool{i}", defs)
        if (
            isinstance(params, dict)
            and "additionalProperties" not in params
            and isinstance(params.get("properties"), dict)
        ):
            # arguments a tool does not declare are not emitted: an open object lets a small model run on with invented
            # keys, and llama.cpp's grammar for it stalled whole batches (0 tokens in 360 s with three crawled tools)
            params = {**params, "additionalProperties": False}
        params = cap_strings(params)
        calls.append(
            {
                "type": "object",
                "properties": {"name": {"const": fn["name"]}, "arguments": params},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    tool_branch = {
        "type": "object",
        "properties": {
            "tool_calls": {"type": "array", "minItems": 1, "maxItems": max_calls, "items": {"anyOf": calls}}
        },
        "required": ["tool_calls"],
        "additionalProperties": False,
    }
    if require_tool:
        return {**tool_branch, "$defs": defs} if defs else tool_branch
    return {"anyOf": [reply, tool_branch], **({"$defs": defs} if defs else {})}


def parse_constrained_turn(result: LLMResult, schema: dict[str, Any], turn: int = 0) -> None:
    """Turn a constrained JSON reply into standard OpenAI content / tool_calls in place. A call's id
    hashes the reply, the call's place in it and `turn` (the conversation's length): the same call
    made again later (a retry after a fault) gets a new id, and a replayed turn the same one."""
    parse_structured(result, schema)
    if not result.ok:
        return
    data = result.data
    if "tool_calls" in data:
        result.tool_calls = [
            {
                "id": "call_" + content_id(result.content, i, turn)[:12],
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"], ensure_ascii=False)},
            }
            for i, call in enumerate(data["tool_calls"])
        ]
        result.content = None
    else:
        result.content = data["content"]
        result.tool_calls = []
