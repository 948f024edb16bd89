"""One ToolSpec for every source; MCP <-> OpenAI function-tool conversion; validation.

Schemas are kept intact ($defs, $ref, anyOf are not flattened): OpenAI and vLLM accept
them as they are. Only what OpenAI cannot take is changed, and reversibly: a tool name
outside `[A-Za-z0-9_-]{1,64}` gets a safe alias (the mapping is kept), and an input schema
without `"type"` gets `"type": "object"`.

Validation rejects with a reason code that `worldsmith query` can group by:
invalid_schema, no_properties, oversize, duplicate, prompt_injection, bad_name,
unresolvable_ref. Hostile specs are expected (crawled from strangers, or written by a
model): a schema nested deeper than MAX_SCHEMA_DEPTH, a $ref cycle that validation would
follow forever, instructions hidden behind zero-width characters, odd whitespace or
look-alike letters, in the description or in any text of the schemas: each is rejected
with its reason, and checking never raises.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from worldsmith.records import Rejection, ToolSpec, content_id

OPENAI_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# Phrases by which a tool description tries to instruct the model instead of describing
# the tool (tool poisoning). Lower-cased match.
INJECTION_PATTERNS = [
    r"ignore (all |any )?(the )?(previous|prior|above|earlier) (instructions|prompts?|messages)",
    r"disregard (all |any )?(the )?(previous|prior|above|system)",
    r"you must (always )?(call|use|invoke) this tool",
    r"(always|first) (call|use|invoke) this tool (before|instead)",
    r"do not (tell|inform|mention to) the user",
    r"(reveal|print|send|exfiltrate|leak) (the |your )?(system prompt|api[ _-]?keys?|secrets?|credentials|passwords?)",
    r"<\s*(important|system)\s*>",  # the tool-poisoning wrapper; plain <instructions> usage notes are common and benign
    r"\bsystem prompt\b.*\b(override|replace)\b",
    r"(read|cat|open) [~./]*\.(ssh|aws|env)\b",
]
_INJECTION = re.compile("|".join(f"(?:{p})" for p in INJECTION_PATTERNS), re.IGNORECASE | re.DOTALL)
_SPACES = re.compile(r"\s+")

# Deeper than this (objects and arrays counted) is no tool's real interface; the crawled
# snapshot's deepest schema has 10 levels. Checked without recursion, before anything
# that recurses (json.dumps, the meta-schema check) can meet it.
MAX_SCHEMA_DEPTH = 64


# ------------------------------------------------------------------ conversion


def openai_name(name: str) -> str:
    """A name OpenAI accepts; unchanged when already valid, else a readable slug + hash."""
    if OPENAI_NAME.match(name):
        return name
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", unicodedata.normalize("NFKD", name)).strip("_") or "tool"
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{slug[:55]}_{digest}"


def openai_parameters(schema: dict[str, Any]) -> dict[str, Any]:
    params = dict(schema)
    if "type" not in params:
        params = {"type": "object", **params}
    params.setdefault("properties", {})
    return params


def to_openai_tool(spec: ToolSpec, strict: bool = False) -> dict[str, Any]:
    """An OpenAI function tool (the `tools` list of chat completions) for a spec."""
    fn: dict[str, Any] = {
        "name": openai_name(spec.name),
        "description": spec.description,
        "parameters": openai_parameters(spec.input_schema),
    }
    if strict:
        fn["strict"] = True
    return {"type": "function", "function": fn}


def tool_view(t: ToolSpec) -> dict[str, Any]:
    """What prompts show of a tool: its name, description, hints and arguments."""
    return {
        "name": t.name,
        "description": t.description,
        "destructive": bool(t.hints.destructiveHint),
        "read_only": bool(t.hints.readOnlyHint),
        "input_schema": t.input_schema,
    }


def from_mcp(
    tool: dict[str, Any],
    *,
    server: str,
    source: str = "mcp",
    category: str | None = None,
    domain: str | None = None,
    extra: dict[str, Any] | None = None,
) -> ToolSpec:
    """A ToolSpec from an MCP tool object (camelCase keys, as on the wire)."""
    name = tool.get("name", "")
    description = (tool.get("description") or "").strip()
    input_schema = tool.get("inputSchema") if tool.get("inputSchema") is not None else tool.get("input_schema", {})
    output_schema = tool.get("outputSchema", tool.get("output_schema"))
    annotations = {k: v for k, v in (tool.get("annotations") or {}).items() if v is not None}
    # too deep to keep (its id alone would recurse away): a marker that check_spec rejects
    if _depth(input_schema) > MAX_SCHEMA_DEPTH:
        input_schema = {"_not_kept": f"nested deeper than {MAX_SCHEMA_DEPTH} levels"}
    if _depth(output_schema) > MAX_SCHEMA_DEPTH:
        output_schema = {"_not_kept": f"nested deeper than {MAX_SCHEMA_DEPTH} levels"}
    extra = dict(extra or {})
    if tool.get("title"):
        extra.setdefault("title", tool["title"])
    return ToolSpec(
        tool_id=ToolSpec.make_id(name, description, input_schema, output_schema, server),
        name=name,
        description=description,
        input_schema=input_schema if isinstance(input_schema, dict) else {"_invalid": input_schema},
        output_schema=output_schema
        if isinstance(output_schema, dict) or output_schema is None
        else {"_invalid": output_schema},
        annotations=annotations,
        source=source,  # type: ignore[arg-type]
        server=server,
        category=category,
        domain=domain,
        extra=extra,
    )


# ------------------------------------------------------------------ validation


@dataclass
class ValidationLimits:
    max_spec_bytes: int = 16_384
    max_description_chars: int = 4_000


def _depth(node: Any) -> int:
    """How deeply objects and arrays nest in `node` (0 for a scalar), without recursion."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        cur, d = stack.pop()
        if isinstance(cur, dict | list):
            deepest = max(deepest, d)
            if d <= MAX_SCHEMA_DEPTH:  # no need to walk further than the limit
                stack.extend((v, d + 1) for v in (cur.values() if isinstance(cur, dict) else cur))
    return deepest


def _json_nodes(node: Any):
    """Every value in a JSON document (objects, arrays, scalars), depth first, without recursion."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        if isinstance(cur, dict):
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)


def _strings(node: Any):
    """Every string in a JSON document (keys and values)."""
    for cur in _json_nodes(node):
        if isinstance(cur, str):
            yield cur
        elif isinstance(cur, dict):
            yield from (k for k in cur if isinstance(k, str))


def _plain(text: str) -> str:
    """Text as a reader sees it: look-alike letters folded (NFKC), invisible format
    characters (zero-width spaces, bidi controls) removed, any whitespace run one space."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return _SPACES.sub(" ", text)


def injection(spec: ToolSpec) -> str | None:
    """The first phrase by which the spec instructs the model, or None. The description and
    every text of the input and output schemas (parameter descriptions, titles, enums) count."""
    for text in (spec.description, *_strings(spec.input_schema), *_strings(spec.output_schema)):
        found = _INJECTION.search(_plain(text))
        if found:
            return found.group(0)
    return None


def _schema_problem(schema: Any, label: str) -> tuple[str, str] | None:
    if not isinstance(schema, dict):
        return "invalid_schema", f"{label} is a {type(schema).__name__}, not a JSON object"
    if "_invalid" in schema and len(schema) == 1:
        return "invalid_schema", f"{label} is {json.dumps(schema['_invalid'])[:80]}, not a JSON object"
    if set(schema) == {"_not_kept"}:
        return "invalid_schema", f"{label} is {schema['_not_kept']}"
    try:
        jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator).check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "(root)"
        return "invalid_schema", f"{label} fails the JSON Schema meta-schema at {where}: {exc.message[:200]}"
    except RecursionError:
        return "invalid_schema", f"{label} is nested too deeply"
    problem = _ref_problem(schema, label)
    return problem


def _ref_problem(schema: dict[str, Any], label: str) -> tuple[str, str] | None:
    """Every $ref must resolve inside the schema, and no $ref may only point at itself."""
    refs = list(_iter_refs(schema))
    if not refs:
        return None
    resource = Resource.from_contents(schema, default_specification=DRAFT202012)
    resolver = Registry().with_resource("urn:tool", resource).resolver(base_uri="urn:tool")
    for ref in refs:
        if not ref.startswith("#"):
            return "unresolvable_ref", f"{label} has an external $ref {ref!r}; only local references are allowed"
        try:
            target = resolver.lookup(ref).contents
        except Unresolvable:
            return "unresolvable_ref", f"{label} has a $ref {ref!r} that does not resolve"
        seen = {ref}
        while isinstance(target, dict) and set(target) == {"$ref"}:
            nxt = target["$ref"]
            if nxt in seen:
                return "unresolvable_ref", f"{label} has a $ref cycle through {ref!r} with no schema in it"
            seen.add(nxt)
            try:
                target = resolver.lookup(nxt).contents
            except Unresolvable:
                return "unresolvable_ref", f"{label} has a $ref {nxt!r} that does not resolve"
    cycle = _in_place_cycle(schema, resolver)
    if cycle:
        return (
            "unresolvable_ref",
            f"{label} has a $ref cycle through {cycle!r} that never reaches a value: validation would not end",
        )
    return None


# keywords whose subschemas apply to the same value as the schema holding them: a loop of
# these (through $ref) never moves into the value, so a validator following it never ends
_IN_PLACE_ONE = ("not", "if", "then", "else", "$ref")
_IN_PLACE_MANY = ("allOf", "anyOf", "oneOf")


def _in_place_cycle(schema: dict[str, Any], resolver: Any) -> str | None:
    """A $ref that leads back to where it started without entering a property or an item
    (e.g. a: {allOf: [$ref b]}, b: {allOf: [$ref a]}); None when there is none. Recursion
    through properties or items (trees, linked lists) is fine: it ends with the value."""

    def children(node: Any) -> list[tuple[str | None, Any]]:
        if not isinstance(node, dict):
            return []
        out: list[tuple[str | None, Any]] = []
        for key in _IN_PLACE_ONE:
            if key == "$ref":
                ref = node.get("$ref")
                if isinstance(ref, str) and ref.startswith("#"):
                    try:
                        out.append((ref, resolver.lookup(ref).contents))
                    except Unresolvable:
                        pass
            elif isinstance(node.get(key), dict):
                out.append((None, node[key]))
        for key in _IN_PLACE_MANY:
            if isinstance(node.get(key), list):
                out.extend((None, sub) for sub in node[key] if isinstance(sub, dict))
        if isinstance(node.get("dependentSchemas"), dict):
            out.extend((None, sub) for sub in node["dependentSchemas"].values() if isinstance(sub, dict))
        return out

    # every subschema is a possible start: walk the document for them (objects only)
    starts = list(_schema_nodes(schema))
    state: dict[int, int] = {}  # id -> 1 on the current path, 2 done
    for start in starts:
        if state.get(id(start)):
            continue
        stack = [(start, iter(children(start)))]
        state[id(start)] = 1
        while stack:
            node, it = stack[-1]
            step = next(it, None)
            if step is None:
                state[id(node)] = 2
                stack.pop()
                continue
            ref, child = step
            seen = state.get(id(child))
            if seen == 1:
                return ref or "(allOf/anyOf/oneOf)"
            if seen is None:
                state[id(child)] = 1
                stack.append((child, iter(children(child))))
    return None


def _schema_nodes(node: Any):
    return (cur for cur in _json_nodes(node) if isinstance(cur, dict))


def _iter_refs(node: Any):
    return (cur["$ref"] for cur in _schema_nodes(node) if isinstance(cur.get("$ref"), str))


def check_spec(spec: ToolSpec, limits: ValidationLimits | None = None) -> tuple[str, str] | None:
    """(reason, detail) when the spec must be rejected, else None. Duplicates are checked by the caller."""
    limits = limits or ValidationLimits()
    for label, schema in (("input_schema", spec.input_schema), ("output_schema", spec.output_schema)):
        if _depth(schema) > MAX_SCHEMA_DEPTH:
            return "invalid_schema", f"{label} is nested deeper than {MAX_SCHEMA_DEPTH} levels"
    size = len(json.dumps(spec.to_row(), default=str))
    if size > limits.max_spec_bytes:
        return "oversize", f"spec is {size} bytes, over the {limits.max_spec_bytes}-byte limit"
    if not spec.name or any(unicodedata.category(c)[0] == "C" for c in spec.name) or len(spec.name) > 128:
        return "bad_name", f"tool name {spec.name[:40]!r} is empty, too long or has control characters"
    if len(spec.description) > limits.max_description_chars:
        return "oversize", f"description is {len(spec.description)} characters, over {limits.max_description_chars}"
    found = injection(spec)
    if found:
        return "prompt_injection", f"description or schema instructs the model: {found[:80]!r}"
    problem = _schema_problem(spec.input_schema, "input_schema")
    if problem:
        return problem
    schema = spec.input_schema
    if schema.get("type", "object") != "object":
        return "no_properties", f"input_schema has type {schema.get('type')!r}; a tool's arguments must be an object"
    if "properties" in schema and not isinstance(schema["properties"], dict):
        return "no_properties", "input_schema.properties is not an object"
    # an argument-less tool states it with "properties": {}; a bare {} says nothing
    if (
        "properties" not in schema
        and not any(k in schema for k in ("anyOf", "oneOf", "allOf", "$ref", "additionalProperties"))
        and schema.get("type") != "object"
    ):
        return "no_properties", "input_schema has neither a properties object nor type object"
    if spec.output_schema is not None:
        problem = _schema_problem(spec.output_schema, "output_schema")
        if problem:
            return problem
    return None


def dedup_key(spec: ToolSpec) -> str:
    """Exact duplicate: same name and same input schema, whatever the server or wording. A tool
    bound to a world is its binding: the same action on the same fields of the same world is a
    duplicate whatever its name, and the same name in another world is another tool. A crawled
    tool stays its real name and schema, bound or not."""
    if spec.binding is not None and spec.source != "mcp":  # a crawled tool is its real name and schema
        return content_id("bound", spec.binding.model_dump())
    return content_id(spec.name.lower(), spec.input_schema)


def normalize(
    specs: Iterable[ToolSpec], limits: ValidationLimits | None = None, seen_keys: dict[str, str] | None = None
) -> tuple[list[ToolSpec], list[Rejection]]:
    """Split specs into accepted ones and rejections with reasons (exact duplicates included)."""
    accepted: list[ToolSpec] = []
    rejected: list[Rejection] = []
    seen = seen_keys if seen_keys is not None else {}
    for spec in specs:
        problem = check_spec(spec, limits)
        if problem is None:
            key = dedup_key(spec)
            if key in seen and seen[key] != spec.tool_id:
                problem = ("duplicate", f"same name and input schema as {seen[key]}")
            else:
                seen[key] = spec.tool_id
        if problem is None:
            accepted.append(spec)
        else:
            reason, detail = problem
            rejected.append(
                Rejection(
                    rejection_id=content_id("tool_spec", spec.tool_id, reason, prefix="rej_"),
                    kind="tool_spec",
                    subject=f"{spec.server or spec.source}/{spec.name[:80]}",
                    reason=reason,
                    detail=detail,
                    payload={"tool_id": spec.tool_id, "source": spec.source, "server": spec.server},
                )
            )
    return accepted, rejected


def crawled_binding(tools: Iterable[ToolSpec]) -> dict[str, Any]:
    """The run's crawled tools (`source` mcp, as stored) and how many of them code runs (bound to their
    server's inferred world): `crawled_bound_share` is the one binding figure, the tools stage's summary
    and the report both read it from here."""
    crawled = [t for t in tools if t.source == "mcp"]
    bound = sum(t.binding is not None and t.binding.executed for t in crawled)
    return {
        "crawled_tools": len(crawled),
        "crawled_bound": bound,
        "crawled_bound_share": round(bound / len(crawled), 4) if crawled else None,
    }
