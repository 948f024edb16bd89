"""Smoke stage: ask the model for structured records and tool calls, and store them.

It proves the whole path (server, client, structured output, tool-call mode, store,
catalog) on whatever model is configured, in seconds.
"""

from __future__ import annotations

import asyncio
import json

import jsonschema

from worldsmith.context import RunContext
from worldsmith.progress import gather_with_progress
from worldsmith.records import SmokeResult, content_id
from worldsmith.stage import Shard, Stage

DOMAINS = ("travel booking", "e-commerce", "home automation", "personal finance", "healthcare scheduling")

TOOL_RECORD_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 3, "maxLength": 80},
        "description": {"type": "string", "minLength": 10, "maxLength": 300},
        "parameters": {
            "type": "array",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 60},
                    "type": {"enum": ["string", "integer", "number", "boolean"]},
                    "description": {"type": "string", "maxLength": 200},
                },
                "required": ["name", "type", "description"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["name", "description", "parameters"],
    "additionalProperties": False,
}

SMOKE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name, e.g. Paris"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "convert_currency",
            "description": "Convert an amount of money from one currency to another.",
            "parameters": {
                "type": "object",
                "properties": {
                    "amount": {"type": "number"},
                    "from_currency": {"type": "string", "description": "ISO code, e.g. USD"},
                    "to_currency": {"type": "string", "description": "ISO code, e.g. EUR"},
                },
                "required": ["amount", "from_currency", "to_currency"],
                "additionalProperties": False,
            },
        },
    },
]


async def _structured(ctx: RunContext, client, index: int) -> SmokeResult:
    domain = DOMAINS[index % len(DOMAINS)]
    messages = ctx.prompts.render_messages("smoke_record", domain=domain)
    result = await client.structured(
        "tool_evolver", messages, TOOL_RECORD_SCHEMA, name="tool_record", seed=ctx.seed + index
    )
    return SmokeResult(
        smoke_id=content_id(ctx.run_id, "structured", index, prefix="smoke_"),
        kind="structured",
        ok=result.ok,
        request={"domain": domain, "index": index},
        output=result.data,
        error=result.error,
        raw=result.raw,
        model=result.model,
        endpoint=result.endpoint,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        latency_s=result.latency_s,
    )


async def _tool_call(ctx: RunContext, client, index: int) -> SmokeResult:
    messages = ctx.prompts.render_messages("smoke_tool_call", index=index)
    result = await client.tool_step("agent", messages, SMOKE_TOOLS, require_tool=True, seed=ctx.seed + index)
    ok, error = result.ok, result.error
    calls = result.tool_calls
    if ok and not calls:
        ok, error = False, "no tool call in the reply"
    for call in calls if ok else []:
        fn = call["function"]
        tool = next((t for t in SMOKE_TOOLS if t["function"]["name"] == fn["name"]), None)
        if tool is None:
            ok, error = False, f"call to unknown tool {fn['name']!r}"
            break
        try:
            jsonschema.validate(json.loads(fn["arguments"]), tool["function"]["parameters"])
        except (
            ValueError,
            RecursionError,
            jsonschema.ValidationError,
        ) as exc:  # not JSON (or unreadably deep or long), or invalid
            ok, error = False, f"arguments of {fn['name']} invalid: {str(exc).splitlines()[0]}"
            break
    return SmokeResult(
        smoke_id=content_id(ctx.run_id, "tool_call", index, prefix="smoke_"),
        kind="tool_call",
        ok=ok,
        request={"index": index, "messages": messages},
        output=result.content,
        tool_calls=calls,
        error=error,
        raw=result.raw or (result.content if not ok else None),
        model=result.model,
        endpoint=result.endpoint,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        latency_s=result.latency_s,
    )


async def make_smoke(ctx: RunContext) -> dict[str, int]:
    """Run the smoke requests not yet stored; returns counts for the summary."""
    n = ctx.cfg.smoke.requests
    done = ctx.store.existing_ids(SmokeResult)
    jobs = []
    async with ctx.client() as client:
        for i in range(n):
            if content_id(ctx.run_id, "structured", i, prefix="smoke_") not in done:
                jobs.append(_structured(ctx, client, i))
            if content_id(ctx.run_id, "tool_call", i, prefix="smoke_") not in done:
                jobs.append(_tool_call(ctx, client, i))
        await gather_with_progress(
            "smoke", jobs, total=len(jobs), on_done=lambda r: ctx.store.append([r]), failed=lambda r: not r.ok
        )
    rows = ctx.store.read(SmokeResult)
    return {
        "records": len(rows),
        "ok": sum(r.ok for r in rows),
        "failed": sum(not r.ok for r in rows),
        "skipped (already done)": 2 * n - len(jobs),
    }


def run(ctx: RunContext, shard: Shard | None = None) -> dict[str, int]:
    return asyncio.run(make_smoke(ctx))


STAGE = Stage(
    "smoke",
    "Structured records and tool calls asked of the model: proves the wiring in seconds.",
    run,
    section="smoke",
    totals=frozenset({"records", "ok", "failed"}),
)
