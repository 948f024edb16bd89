"""Evolve synthetic tools: categories -> domains -> tools -> evolved variants (Kimi K2 / WizardLM).

Every LLM call is structured output. The model describes parameters and outputs as typed
lists, and the JSON Schemas are built from them here, so an evolved tool's schemas are
valid by construction. Each level is resumable: a request whose output is stored is not
asked again, and a request that failed is recorded as a rejection with the raw output.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from worldsmith.context import RunContext
from worldsmith.progress import gather_with_progress
from worldsmith.records import Domain, Rejection, ToolSpec, content_id
from worldsmith.tools.dedup import NearDuplicateIndex
from worldsmith.toolspec import ValidationLimits, check_spec, dedup_key

_NON_WORD = re.compile(r"[^a-z0-9]+")


def snake(text: str, max_len: int = 48) -> str:
    """A snake_case identifier from whatever the model wrote ("Cancel Order!" -> cancel_order)."""
    out = _NON_WORD.sub("_", text.lower()).strip("_")[:max_len].strip("_")
    return out if out and out[0].isalpha() else f"t_{out}" if out else "unnamed"

FIELD_TYPES = ["string", "integer", "number", "boolean", "array"]

DOMAINS_SCHEMA = {
    "type": "object",
    "properties": {
        "domains": {
            "type": "array",
            "minItems": 1,
            "maxItems": 8,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 3, "maxLength": 60},
                    "description": {"type": "string", "minLength": 10, "maxLength": 300},
                    "entities": {"type": "array", "minItems": 1, "maxItems": 5, "items": {"type": "string", "minLength": 2, "maxLength": 40}},
                },
                "required": ["name", "description", "entities"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["domains"],
    "additionalProperties": False,
}

_PARAM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 60},
        "type": {"enum": FIELD_TYPES},
        "description": {"type": "string", "minLength": 3, "maxLength": 200},
        "required": {"type": "boolean"},
    },
    "required": ["name", "type", "description", "required"],
    "additionalProperties": False,
}
_OUTPUT = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 60},
        "type": {"enum": FIELD_TYPES + ["object"]},
        "description": {"type": "string", "maxLength": 200},
    },
    "required": ["name", "type", "description"],
    "additionalProperties": False,
}
TOOL_DESIGN = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 3, "maxLength": 80},
        "description": {"type": "string", "minLength": 20, "maxLength": 600},
        "parameters": {"type": "array", "minItems": 0, "maxItems": 6, "items": _PARAM},
        "outputs": {"type": "array", "minItems": 1, "maxItems": 6, "items": _OUTPUT},
        "read_only": {"type": "boolean"},
        "destructive": {"type": "boolean"},
        "reads": {"type": "array", "maxItems": 4, "items": {"type": "string"}},
        "writes": {"type": "array", "maxItems": 4, "items": {"type": "string"}},
    },
    "required": ["name", "description", "parameters", "outputs", "read_only", "destructive", "reads", "writes"],
    "additionalProperties": False,
}
ACTIONS = ("search or list", "get the details of one", "create", "update", "cancel or delete")


def load_taxonomy(path: Path) -> list[dict[str, Any]]:
    data = yaml.safe_load(path.read_text()) or {}
    cats = data.get("categories")
    if not isinstance(cats, list) or not cats:
        raise ValueError(f"{path}: expected a non-empty `categories:` list")
    out = []
    for i, c in enumerate(cats):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise ValueError(f"{path}: categories[{i}] needs a `name`")
        out.append({"name": c["name"], "hint": c.get("hint", ""), "example_domains": list(c.get("example_domains", []))})
    return out


def _field_schema(item: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": item["type"], "description": item.get("description", "").strip()[:200]}
    if item["type"] == "array":
        schema["items"] = {"type": "string"}
    return schema


def design_to_spec(design: dict[str, Any], *, category: str, domain: Domain, request_id: str,
                   parent_id: str | None = None, operator: str | None = None) -> ToolSpec:  # fmt: skip
    """A ToolSpec from the model's typed design; schemas are built, so they are valid."""
    params: dict[str, Any] = {}
    required = []
    for p in design["parameters"]:
        pname = snake(p["name"], 40)
        if pname in params:
            continue
        params[pname] = _field_schema(p)
        if p["required"]:
            required.append(pname)
    input_schema = {"type": "object", "properties": params, "required": required, "additionalProperties": False}
    outputs = {snake(o["name"], 40): _field_schema(o) for o in design["outputs"]}
    output_schema = {"type": "object", "properties": outputs}
    read_only = bool(design["read_only"]) and not design["writes"]
    annotations = {
        "readOnlyHint": read_only,
        "destructiveHint": bool(design["destructive"]) and not read_only,
        "idempotentHint": read_only,
        "openWorldHint": False,  # a simulated, closed world
    }
    description = design["description"].strip()
    name = snake(design["name"])
    return ToolSpec(
        tool_id=ToolSpec.make_id(name, description, input_schema, output_schema, f"evolved/{domain.name}"),
        name=name,
        description=description,
        input_schema=input_schema,
        output_schema=output_schema,
        annotations=annotations,
        source="evolved",
        server=f"evolved/{domain.name}",
        category=category,
        domain=domain.name,
        parent_id=parent_id,
        operator=operator,
        extra={"reads": [r[:60] for r in design["reads"]], "writes": [w[:60] for w in design["writes"]],
               "entities": domain.entities, "request_id": request_id},  # fmt: skip
    )


def answered_requests(ctx: RunContext) -> set[str]:
    """Requests whose answer is stored: kept as a tool, or refused by validation. A call
    that failed (timeout, unparseable reply) is not among them: a re-run asks again."""
    done = {t.extra.get("request_id") for t in ctx.store.read(ToolSpec) if t.source == "evolved"}
    done |= {r.payload.get("request_id") for r in ctx.store.read(Rejection) if r.kind == "tool_spec" and isinstance(r.payload, dict)}
    return {d for d in done if d}


class ToolSink:
    """Validates, de-duplicates and stores tools as they arrive; every refusal gets a reason."""

    def __init__(self, ctx: RunContext, limits: ValidationLimits, near: NearDuplicateIndex, exact: dict[str, str]):
        self.ctx, self.limits, self.near, self.exact = ctx, limits, near, exact
        self.tools = ctx.store.writer(ToolSpec)
        self.rejections = ctx.store.writer(Rejection)
        self.accepted: list[ToolSpec] = []

    def offer(self, spec: ToolSpec) -> bool:
        problem = check_spec(spec, self.limits)
        if problem is None:
            key = dedup_key(spec)
            if key in self.exact and self.exact[key] != spec.tool_id:
                problem = ("duplicate", f"same name and input schema as {self.exact[key]}")
        if problem is None and self.near.threshold < 1.0:
            hit = self.near.find(spec)
            if hit:
                problem = ("near_duplicate", f"description ~{hit[1]:.2f} Jaccard-similar to {hit[0]}")
        if problem:
            self.reject("tool_spec", f"{spec.server}/{spec.name}", *problem, {"tool_id": spec.tool_id, "source": spec.source,
                        "request_id": spec.extra.get("request_id"), "spec": spec.to_row() | {"created_at": None}})  # fmt: skip
            return False
        self.exact[dedup_key(spec)] = spec.tool_id
        self.near.add(spec)
        self.tools.add(spec)
        self.accepted.append(spec)
        return True

    def reject(self, kind: str, subject: str, reason: str, detail: str, payload: Any) -> None:
        rid = content_id(kind, subject, reason, detail, prefix="rej_")
        self.rejections.add(Rejection(rejection_id=rid, kind=kind, subject=subject, reason=reason, detail=detail, payload=payload))

    def close(self) -> None:
        self.tools.flush()
        self.rejections.flush()


async def evolve(ctx: RunContext, sink: ToolSink, log: Callable[[str], Any] = print) -> dict[str, int]:
    cfg = ctx.cfg.tools.evolve
    taxonomy = load_taxonomy(ctx.path(ctx.cfg.tools.taxonomy_file))
    categories = taxonomy[: cfg.categories] if cfg.categories else taxonomy
    counts = {"domains": 0, "tools": 0, "evolved": 0, "failed_calls": 0}
    async with ctx.client() as client:
        # -- level 1: domains per category
        stored = ctx.store.read(Domain)
        by_cat: dict[str, list[Domain]] = {}
        for d in stored:
            by_cat.setdefault(d.category, []).append(d)
        domain_writer = ctx.store.writer(Domain, flush_every=1)

        async def domains_for(cat: dict[str, Any]) -> list[Domain]:
            msgs = ctx.prompts.render_messages("evolve_domains", category=cat, count=cfg.domains_per_category, existing=[])
            r = await client.structured("tool_evolver", msgs, DOMAINS_SCHEMA, name="domains", seed=ctx.seed)
            if not r.ok:
                counts["failed_calls"] += 1
                sink.reject("llm_output", f"domains/{cat['name']}", r.error_kind or "error", r.error or "", {"raw": r.raw})
                return []
            out, names = [], set()
            for i, d in enumerate(r.data["domains"][: cfg.domains_per_category]):
                if d["name"].lower() in names:
                    continue
                names.add(d["name"].lower())
                out.append(Domain(domain_id=content_id(ctx.seed, cat["name"], i, prefix="dom_"), category=cat["name"],
                                  name=d["name"].strip(), description=d["description"].strip(),
                                  entities=[e.strip() for e in d["entities"]]))  # fmt: skip
            for d in out:
                domain_writer.add(d)
            return out

        todo = [c for c in categories if c["name"] not in by_cat]
        for found in await gather_with_progress("evolve: domains", [domains_for(c) for c in todo], total=len(todo),
                                                failed=lambda ds: not ds):  # fmt: skip
            for d in found:
                by_cat.setdefault(d.category, []).append(d)
        domain_writer.flush()
        domains = [d for c in categories for d in by_cat.get(c["name"], [])]
        counts["domains"] = len(domains)

        # -- level 2: tools per domain, one call per tool so calls are short and run in parallel;
        #    each call gets its own entity and kind of action, so the tools of a domain differ
        done_requests = answered_requests(ctx)

        async def tool_for(domain: Domain, k: int) -> int:
            request_id = content_id(ctx.seed, "tool", domain.domain_id, k)
            entity = domain.entities[k % len(domain.entities)]
            action = ACTIONS[(k // max(1, len(domain.entities)) + k) % len(ACTIONS)]
            msgs = ctx.prompts.render_messages("evolve_tools", domain=domain, entity=entity, action=action)
            r = await client.structured("tool_evolver", msgs, TOOL_DESIGN, name="tool", seed=ctx.seed + k)
            if not r.ok:
                sink.reject("llm_output", f"tools/{domain.name}/{k}", r.error_kind or "error", r.error or "", {"raw": r.raw, "request_id": request_id})
                return -1
            return int(sink.offer(design_to_spec(r.data, category=domain.category, domain=domain, request_id=request_id)))

        jobs = [tool_for(d, k) for d in domains for k in range(cfg.tools_per_domain)
                if content_id(ctx.seed, "tool", d.domain_id, k) not in done_requests]  # fmt: skip
        results = await gather_with_progress("evolve: tools", jobs, total=len(jobs), failed=lambda n: n < 0)
        counts["tools"] = sum(max(n, 0) for n in results)
        counts["failed_calls"] += sum(n < 0 for n in results)

        # -- level 3: evolution operators on the domain tools
        base = [t for t in ctx.store.read(ToolSpec) if t.source == "evolved" and t.parent_id is None] + [
            t for t in sink.accepted if t.parent_id is None
        ]
        base = list({t.tool_id: t for t in base}.values())
        base.sort(key=lambda t: t.tool_id)
        done_requests = answered_requests(ctx) | {t.extra.get("request_id") for t in sink.accepted}
        dom_by_name = {d.name: d for d in domains}
        jobs = []
        for parent in base:
            for j in range(cfg.evolutions_per_tool):
                request_id = content_id(ctx.seed, "evolve", parent.tool_id, j)
                if request_id in done_requests or parent.domain not in dom_by_name:
                    continue
                rng = random.Random(request_id)
                operator = rng.choice(cfg.operators)
                siblings = [t for t in base if t.domain == parent.domain and t.tool_id != parent.tool_id]
                other = rng.choice(siblings) if operator == "compose" and siblings else None
                if operator == "compose" and other is None:
                    operator = "add_parameter"
                jobs.append(_evolve_one(ctx, client, sink, parent, dom_by_name[parent.domain], operator, other, request_id))
        results = await gather_with_progress("evolve: operators", jobs, total=len(jobs), failed=lambda ok: ok is None)
        counts["evolved"] = sum(1 for ok in results if ok)
        counts["failed_calls"] += sum(ok is None for ok in results)
    return counts


async def _evolve_one(ctx, client, sink: ToolSink, parent: ToolSpec, domain: Domain, operator: str, other, request_id: str):
    msgs = ctx.prompts.render_messages("evolve_operator", domain=domain.name, tool=parent, other=other, operator=operator)
    r = await client.structured("tool_evolver", msgs, TOOL_DESIGN, name="tool", seed=ctx.seed)
    if not r.ok:
        sink.reject("llm_output", f"evolve/{parent.name}/{operator}", r.error_kind or "error", r.error or "", {"raw": r.raw, "request_id": request_id})
        return None
    spec = design_to_spec(r.data, category=domain.category, domain=domain, request_id=request_id, parent_id=parent.tool_id, operator=operator)
    return sink.offer(spec)


def run_evolve(ctx: RunContext, sink: ToolSink) -> dict[str, int]:
    return asyncio.run(evolve(ctx, sink))
