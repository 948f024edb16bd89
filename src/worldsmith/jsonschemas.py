"""JSON Schema helpers shared by the client (constrained tool calls) and the stages that
nest tool schemas inside structured-output schemas."""

from __future__ import annotations

import re
from typing import Any

_DEF_REF = re.compile(r"^#/(\$defs|definitions)/([^/]+)(/.*)?$")


def embed_schema(schema: Any, ns: str, defs: dict[str, Any]) -> Any:
    """`schema` (a tool's) rewritten to sit anywhere inside a bigger schema whose root
    `$defs` is `defs`, so that its local $refs still resolve.

    A tool's "#/$defs/money" means its own root; nested in a structured-output schema it
    would mean that schema's root, where jsonschema cannot resolve it and llama.cpp refuses
    the grammar. Its root $defs (and draft-07 definitions) move into `defs` as
    `{ns}__{name}`, and its refs follow; any other local ref ("#", "#/properties/a") points
    into a copy of the whole schema kept as `defs[ns]`. Only object keys appear in the new
    pointers (llama.cpp resolves no array index). Give each embedded schema its own `ns`.
    """
    if not isinstance(schema, dict):
        return schema
    whole = False

    def target(ref: str) -> str:
        nonlocal whole
        m = _DEF_REF.match(ref)
        if m:
            return f"#/$defs/{ns}__{m.group(2)}{m.group(3) or ''}"
        whole = True
        return f"#/$defs/{ns}{ref[1:]}"

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: target(v) if k == "$ref" and isinstance(v, str) and v.startswith("#") else walk(v)
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [walk(x) for x in node]
        return node

    body = walk({k: v for k, v in schema.items() if k not in ("$defs", "definitions")})
    for key in ("definitions", "$defs"):  # $defs wins a name both hold
        if isinstance(schema.get(key), dict):
            for name, sub in schema[key].items():
                defs[f"{ns}__{name}"] = walk(sub)
    if whole:
        defs[ns] = body
    return body
