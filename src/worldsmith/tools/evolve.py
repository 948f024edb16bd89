"""Synthetic tools, designed against each world (Kimi K2's tools per domain, then WizardLM-style
evolution operators).

A tool is an action on one of the world's collections with its parameters bound to fields
(`worldmodel.bindings`): its schemas, annotations and executable semantics come from the
binding, so they are valid and runnable by construction; the LLM names and describes it
(structured output), and a name or description that does not fit the binding is replaced
by the plain one, recorded as `extra.named_by`. Operators change the binding deliberately
(specialize, generalize, add_parameter, compose -> custom) or keep it (add_constraint,
add_error_modes); lineage stays in `parent_id` and `operator`. Each request is resumable:
one whose tool is stored (or refused) is not asked again.
"""

from __future__ import annotations

import random
import re
import zlib
from collections.abc import Callable
from typing import Any

from worldsmith.context import RunContext
from worldsmith.progress import gather_with_progress
from worldsmith.records import Rejection, ToolBinding, ToolSpec, World, content_id
from worldsmith.tools.dedup import NearDuplicateIndex
from worldsmith.toolspec import ValidationLimits, check_spec, dedup_key
from worldsmith.worldmodel import bindings as bind
from worldsmith.worldmodel.schema import a_an

_NON_WORD = re.compile(r"[^a-z0-9]+")


def snake(text: str, max_len: int = 48) -> str:
    """A snake_case identifier from whatever the model wrote ("Cancel Order!" -> cancel_order)."""
    out = _NON_WORD.sub("_", text.lower()).strip("_")[:max_len].strip("_")
    return out if out and out[0].isalpha() else f"t_{out}" if out else "unnamed"


def answered_requests(ctx: RunContext) -> set[str]:
    """Requests whose answer is stored: kept as a tool, or refused by validation. A call
    that failed (timeout, unparseable reply) is not among them: a re-run asks again."""
    done = {t.extra.get("request_id") for t in ctx.store.read(ToolSpec) if t.source == "evolved"}
    done |= {
        r.payload.get("request_id")
        for r in ctx.store.read(Rejection)
        if r.kind == "tool_spec" and isinstance(r.payload, dict)
    }
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
        # bound tools are told apart by their binding (dedup_key); their plain descriptions are alike on purpose
        if problem is None and self.near.threshold < 1.0 and (spec.binding is None or spec.source == "mcp"):
            hit = self.near.find(spec)
            if hit:
                problem = ("near_duplicate", f"description ~{hit[1]:.2f} Jaccard-similar to {hit[0]}")
        if problem:
            self.reject(
                "tool_spec",
                f"{spec.server}/{spec.name}",
                *problem,
                {
                    "tool_id": spec.tool_id,
                    "source": spec.source,
                    "request_id": spec.extra.get("request_id"),
                    "spec": spec.to_row() | {"created_at": None},
                },
            )
            return False
        self.exact[dedup_key(spec)] = spec.tool_id
        self.near.add(spec)
        self.tools.add(spec)
        self.accepted.append(spec)
        return True

    def reject(self, kind: str, subject: str, reason: str, detail: str, payload: Any) -> None:
        rid = content_id(kind, subject, reason, detail, prefix="rej_")
        self.rejections.add(
            Rejection(rejection_id=rid, kind=kind, subject=subject, reason=reason, detail=detail, payload=payload)
        )

    def close(self) -> None:
        self.tools.flush()
        self.rejections.flush()


NAMING = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 4, "maxLength": 48},
        "description": {"type": "string", "minLength": 20, "maxLength": 300},
    },
    "required": ["name", "description"],
    "additionalProperties": False,
}
OPERATOR_CHANGES = {
    "add_constraint": "its input is limited as its description says (results are capped, values must be valid)",
    "add_parameter": "it takes one more parameter",
    "specialize": "it was narrowed to one common case",
    "generalize": "it was widened to cover more cases",
    "compose": "it combines its work with another tool's in one step",
    "add_error_modes": (
        "its description lists the errors it returns (not found, conflict, invalid value, transition not allowed)"
    ),
}
DESCRIPTION_TAILS = {
    "add_constraint": " Values must be among the allowed ones; lists return at most 20 records.",
    "add_error_modes": " Errors: not_found (no such id), invalid_value, conflict, transition_not_allowed.",
}


def _behaviour(world: World, b: ToolBinding) -> str:
    return bind.default_description(world, b)[0].lower() + bind.default_description(world, b)[1:]


# verbs a name may start with, per action: a name that says another action misleads the agent
VERBS = {
    "get": ("get", "fetch", "lookup", "look_up", "find", "retrieve", "show", "read", "view"),
    "list": ("list", "search", "find", "browse", "query", "filter"),
    "create": ("create", "add", "new", "register", "open", "book", "make", "submit", "place"),
    "update": (
        "update",
        "change",
        "set",
        "edit",
        "modify",
        "mark",
        "cancel",
        "close",
        "move",
        "assign",
        "approve",
        "reject",
    ),
    "delete": ("delete", "remove", "purge", "drop"),
    "custom": (),
}


def _named(world: World, b: ToolBinding, data: dict[str, Any] | None) -> tuple[str, str, str]:
    """(name, description, named_by): the model's when they fit the binding, else the plain ones.
    Fitting: a snake_case name that starts with a verb of its action and names the entity; a
    description that names the entity and every parameter, and no web address (an invented
    back end). What a tool does is its binding's whatever its text, so a misfit is replaced."""
    c = world.collection(b.collection)
    assert c is not None
    plain_name, plain = bind.default_name(world, b), bind.default_description(world, b)
    if data is None:
        return plain_name, plain, "code"
    name, text = snake(data["name"]), " ".join(data["description"].split())
    params = [*([b.key_param] if b.key_param else []), *b.params]
    lowered = text.lower()
    fits = (
        c.entity[:4] in name
        and c.entity[:4] in lowered
        and (b.action == "custom" or name.startswith(VERBS[b.action]))
        and all(p in lowered or p.replace("_", " ") in lowered for p in params)
        and not re.search(r"(.)\1{3}|https?:|www\.", name + " " + lowered)
    )
    return (name, text, "llm") if fits else (plain_name, plain, "code")


def bound_spec(
    world: World,
    b: ToolBinding,
    name: str,
    description: str,
    *,
    request_id: str,
    named_by: str,
    parent: ToolSpec | None = None,
    operator: str | None = None,
) -> ToolSpec:
    """The ToolSpec of a bound tool: schemas and annotations from the binding; a custom tool
    keeps its parent's input schema and gets a generic output."""
    if b.action == "custom":
        input_schema = parent.input_schema if parent else {"type": "object", "properties": {}}
        output_schema = None
    else:
        input_schema, output_schema = bind.input_schema(world, b), bind.output_schema(world, b)
    server = f"evolved/{world.domain}"
    return ToolSpec(
        tool_id=ToolSpec.make_id(name, description, input_schema, output_schema, server),
        name=name,
        description=description,
        input_schema=input_schema,
        output_schema=output_schema,
        annotations=bind.annotations(b)
        if b.action != "custom"
        else {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False},
        source="evolved",
        server=server,
        category=world.category,
        domain=world.domain,
        parent_id=parent.tool_id if parent else None,
        operator=operator,
        binding=b,
        extra={"request_id": request_id, "named_by": named_by, "entities": [c.name for c in world.collections]},
    )


async def evolve(ctx: RunContext, sink: ToolSink, log: Callable[[str], Any] = print) -> dict[str, int]:
    cfg = ctx.cfg.tools.evolve
    # designed and derived worlds get designed tools; a pack brings its own, a crawled world its server's
    worlds = sorted((w for w in ctx.store.read(World) if w.source in ("llm", "derived")), key=lambda w: w.world_id)
    by_id = {w.world_id: w for w in worlds}
    counts = {"worlds": len(worlds), "tools": 0, "evolved": 0, "named_by_llm": 0, "failed_calls": 0}

    async def name_tool(
        client,
        world: World,
        b: ToolBinding,
        request_id: str,
        operator: str | None = None,
        parent: ToolSpec | None = None,
    ) -> tuple[str, str, str]:
        c = world.collection(b.collection)
        assert c is not None
        if cfg.naming == "code":
            name, description, _ = _named(world, b, None)
            return name, description + DESCRIPTION_TAILS.get(operator or "", ""), "code"
        params = (
            list(bind.input_schema(world, b)["properties"])
            if b.action != "custom"
            else list((parent.input_schema if parent else {}).get("properties", {}))
        )
        msgs = ctx.prompts.render_messages(
            "tool_naming",
            domain=world.domain,
            behaviour=_behaviour(world, b),
            parameters=params,
            entity=a_an(c.entity),
            example=bind.default_name(world, b),
            operator=OPERATOR_CHANGES.get(operator or ""),
            parent=parent.name if parent else "",
        )
        r = await client.structured(
            "tool_evolver", msgs, NAMING, name="tool_name", seed=ctx.seed + zlib.crc32(request_id.encode()) % 1000
        )
        if not r.ok:
            counts["failed_calls"] += 1
            sink.reject(
                "llm_output",
                f"tools/{world.domain}/{b.collection}/{b.action}/{request_id}",
                r.error_kind or "error",
                r.error or "",
                {"raw": r.raw, "request_id": None},  # not the tool's request: the tool is still made, with plain text
            )
        name, description, named_by = _named(world, b, r.data if r.ok else None)
        return name, description + DESCRIPTION_TAILS.get(operator or "", ""), named_by

    async with ctx.client() as client:
        # -- tools per world: lookups and changes of the same collections first (tasks need both)
        done = answered_requests(ctx)

        async def tool_for(world: World, k: int, b: ToolBinding) -> int:
            request_id = content_id(ctx.seed, "tool", world.world_id, k)
            name, description, named_by = await name_tool(client, world, b, request_id)
            counts["named_by_llm"] += named_by == "llm"
            return int(sink.offer(bound_spec(world, b, name, description, request_id=request_id, named_by=named_by)))

        jobs = [
            tool_for(w, k, b)
            for w in worlds
            for k, b in enumerate(bind.plan_bindings(w, cfg.tools_per_domain))
            if content_id(ctx.seed, "tool", w.world_id, k) not in done
        ]
        results = await gather_with_progress("tools: designed", jobs, total=len(jobs))
        counts["tools"] = sum(results)

        # -- evolution operators on the designed tools
        base = {
            t.tool_id: t
            for t in [*ctx.store.read(ToolSpec), *sink.accepted]
            if t.source == "evolved" and t.parent_id is None and t.binding
        }
        done = answered_requests(ctx) | {t.extra.get("request_id") for t in sink.accepted}

        async def evolve_one(parent: ToolSpec, operator: str, b: ToolBinding, request_id: str) -> bool:
            world = by_id[parent.binding.world_id]
            name, description, named_by = await name_tool(client, world, b, request_id, operator, parent)
            counts["named_by_llm"] += named_by == "llm"
            spec = bound_spec(
                world, b, name, description, request_id=request_id, named_by=named_by, parent=parent, operator=operator
            )
            return sink.offer(spec)

        jobs = []
        for parent in sorted(base.values(), key=lambda t: t.tool_id):
            if parent.binding.world_id not in by_id:
                continue
            for j in range(cfg.evolutions_per_tool):
                request_id = content_id(ctx.seed, "evolve", parent.tool_id, j)
                if request_id in done:
                    continue
                rng = random.Random(request_id)
                operators = list(cfg.operators)
                rng.shuffle(operators)
                for operator in operators:
                    b = bind.evolve_binding(
                        by_id[parent.binding.world_id],
                        parent.binding,
                        operator,
                        random.Random(f"{request_id}:{operator}"),
                    )
                    # a bound tool is its binding: an operator that keeps it would make a duplicate; a custom tool's
                    # behaviour only a model can describe, so it needs model naming
                    if b != parent.binding and (b.action != "custom" or cfg.naming == "llm"):
                        jobs.append(evolve_one(parent, operator, b, request_id))
                        break
        results = await gather_with_progress("tools: evolved", jobs, total=len(jobs))
        counts["evolved"] = sum(results)
    return counts
