"""Grounded decoding for weak policies (constrained tool-call mode only): an argument bound to
an entity key may only be a key the conversation has shown so far (in the user's messages
and in tool results), and an enum field only one of its values (the schema already says
so). It narrows what the decoder may emit, nothing else: the agent sees the ordinary tools
in its prompt, and the trajectory is ordinary OpenAI messages. A tool whose required key has
no candidate yet cannot be called at this step (any key it could name would be invented).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from worldsmith.records import ToolSpec, World
from worldsmith.worldmodel.toolset import ToolSet


def key_pattern(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(prefix)}-\d+(?![\w-])", re.IGNORECASE)


def _text(content: Any) -> str:
    """A message's text: a string, or OpenAI content parts."""
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def seen_keys(messages: list[dict[str, Any]], world: World) -> dict[str, list[str]]:
    """Per collection, the keys the user's messages and the tool results have shown, in order."""
    texts = [_text(m.get("content")) for m in messages if m["role"] in ("user", "tool")]
    out: dict[str, list[str]] = {}
    for c in world.collections:
        pattern = key_pattern(c.id_prefix)
        found = [k.lower() for t in texts for k in pattern.findall(t)]
        out[c.name] = list(dict.fromkeys(found))
    return out


def _key_params(spec: ToolSpec, world: World) -> dict[str, str]:
    """Parameter -> the collection whose key it takes: the key parameter, and references."""
    b = spec.binding
    c = world.collection(b.collection) if b else None
    if b is None or c is None:
        return {}
    out = {b.key_param: c.name} if b.key_param else {}
    fields = {f.name: f for f in c.fields}
    for param, fname in b.params.items():
        f = fields.get(fname)
        if f is not None and f.ref is not None:
            out[param] = f.ref
    return out


def ground_tools(
    toolset: ToolSet, messages: list[dict[str, Any]], worlds: dict[str, World], done: set[tuple[str, str]] = frozenset()
) -> list[dict[str, Any]]:
    """The toolset's OpenAI tools with key parameters narrowed to the keys seen so far; the
    tools whose required key has none are left out. `done`: (tool, key) of calls that already
    succeeded: the tool is not offered that record again (a small model otherwise repeats a
    call it has just made, step after step)."""
    out: list[dict[str, Any]] = []
    seen_by_world: dict[str, dict[str, list[str]]] = {}
    for tool in toolset.tools:
        spec = toolset.by_name[tool["function"]["name"]]
        b = spec.binding
        world = worlds.get(b.world_id) if b is not None and b.executed else None
        if world is None:
            out.append(tool)
            continue
        if world.world_id not in seen_by_world:
            seen_by_world[world.world_id] = seen_keys(messages, world)
        seen = seen_by_world[world.world_id]
        narrowed = copy.deepcopy(tool)
        params = narrowed["function"].get("parameters", {})
        props, required = params.get("properties", {}), set(params.get("required", []))
        usable = True
        for param, collection in _key_params(spec, world).items():
            if param not in props:
                continue
            keys = seen.get(collection, [])
            if param == b.key_param:  # a record this tool has already acted on, with success, is not offered again
                keys = [k for k in keys if (tool["function"]["name"], k) not in done]
            if not keys:
                if param in required:
                    usable = False
                    break
                props.pop(param)  # an optional reference with nothing to point at is left out
                continue
            props[param] = {**props[param], "enum": keys}
        if usable:
            out.append(narrowed)
    return out
