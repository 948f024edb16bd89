"""Grounded decoding for weak policies (constrained tool-call mode only): an argument bound to
an entity key may only be a key the conversation has shown so far (in the user's messages
and in tool results), an argument that names a record by a text field (a crawled tool's
`fullname`, a list's `destination`) only a value the conversation has shown (`seen_values`),
and an enum field only one of its values (the schema already says so). It narrows what the
decoder may emit, nothing else: the agent sees the ordinary tools in its prompt, and the
trajectory is ordinary OpenAI messages. A tool whose required key has
no candidate yet cannot be called at this step (any key it could name would be invented).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from worldsmith.prose import tool_result
from worldsmith.records import CollectionSpec, ToolBinding, ToolSpec, World
from worldsmith.vocab import PROSE_CHAR, READ_ACTIONS
from worldsmith.worldmodel.toolset import ToolSet


def key_pattern(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(prefix)}-\d+(?![\w-])", re.IGNORECASE)


def _text(content: Any) -> str:
    """A message's text: a string, or OpenAI content parts."""
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _shown_texts(messages: list[dict[str, Any]]) -> list[str]:
    """The texts of the user's messages and the tool results: what the conversation has shown the agent."""
    return [_text(m.get("content")) for m in messages if m["role"] in ("user", "tool")]


def _user_said(messages: list[dict[str, Any]]) -> str:
    """Everything the user's messages say, lower-cased, as one text."""
    return " ".join(_text(m.get("content")) for m in messages if m["role"] == "user").lower()


def seen_keys(messages: list[dict[str, Any]], world: World) -> dict[str, list[str]]:
    """Per collection, the keys the user's messages and the tool results have shown, in order."""
    texts = _shown_texts(messages)
    out: dict[str, list[str]] = {}
    for c in world.collections:
        pattern = key_pattern(c.id_prefix)
        found = [k.lower() for t in texts for k in pattern.findall(t)]
        out[c.name] = list(dict.fromkeys(found))
    return out


MAX_VALUE_WORDS = 4
MAX_VALUES = 400
EDGE_PUNCTUATION = ".,!?;:\"'()[]{}<>`"


# Words a run of the user's words that names a value does not start or end with ("team/nightly-tests and",
# "tell me", "Thanks in advance"): a weak policy offered every run of words picks such ones when the right value
# is taken. Joiners do not sit inside one ("config xml and folder").
_FUNCTION_WORDS = (
    "a an the and or but of to in on at by for with from about as into than "
    "i me my we our you your it its they them their he him his she her this that these those there "
    "is are was were be been am do does did have has had can could would will shall should may might "
    "please thanks thank hi hello hey dear regards cheers advance good great day one "
    "what which who whose whom when where why how whether if then also just so not no yes "
    "tell look find show give get let know check see want need like up"
)
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())
JOINERS = frozenset({"and", "or", "but", "with", "tell", "me", "please", "thanks"})


def _names_a_value(words: list[str]) -> bool:
    low = [w.lower() for w in words]
    return low[0] not in FUNCTION_WORDS and low[-1] not in FUNCTION_WORDS and not JOINERS & set(low[1:-1])


def _leaves(doc: Any) -> list[str]:
    if isinstance(doc, dict):
        return [x for v in doc.values() for x in _leaves(v)]
    if isinstance(doc, list):
        return [x for v in doc for x in _leaves(v)]
    return [doc] if isinstance(doc, str) else []


def seen_values(messages: list[dict[str, Any]]) -> list[str]:
    """Text values the conversation has shown, in order, once each: every run of 1 to 4 words of
    the user's messages (edge punctuation off: "team/nightly-tests", "Basel SBB") that does not
    start or end with a function word, and every string of the tool results (JSON leaves). What a
    field that names a record may be, under grounding."""
    out: list[str] = []
    for m in messages:
        text = _text(m.get("content"))
        if m["role"] == "tool":
            try:
                out += _leaves(json.loads(text))
            except ValueError:
                out.append(text.strip())
        elif m["role"] == "user":
            words = [w.strip(EDGE_PUNCTUATION) for w in text.split()]
            for n in range(1, MAX_VALUE_WORDS + 1):
                out += [
                    " ".join(words[i : i + n])
                    for i in range(len(words) - n + 1)
                    if all(words[i : i + n]) and _names_a_value(words[i : i + n])
                ]
    kept = list(dict.fromkeys(v for v in out if v and len(v) <= 80))
    return kept[-MAX_VALUES:]


def _world_words(world: World) -> set[str]:
    """The world's collection, entity and field names, as written and as said, and each of their words."""
    names = [n for c in world.collections for n in (c.name, c.entity, *(f.name for f in c.fields))]
    said = {n.lower() for name in names for n in (name, re.sub(r"[_-]+", " ", name))}
    return said | {w for n in said for w in n.split()}


def _value_params(spec: ToolSpec, world: World) -> list[str]:
    """The string parameters that name records by a field: a lookup's match fields, and a list's
    filters on plain text fields (not an enum, not a reference: those are narrowed already)."""
    b = spec.binding
    c = world.collection(b.collection) if b else None
    if b is None or c is None:
        return []
    fields = {f.name: f for f in c.fields}
    named = [p for p, f in b.match.items() if fields.get(f) is not None and fields[f].type == "string"]
    if b.action == "list":
        named += [
            p
            for p, f in b.params.items()
            if (x := fields.get(f)) is not None and x.type == "string" and not x.enum and x.ref is None
        ]
    return named


def _key_params(spec: ToolSpec, world: World) -> dict[str, str]:
    """Parameter -> the collection whose key it takes: the key parameter, references (as a filter, a value or one
    of the fields that name the record: a crawled section's `paper_id`), and a filter on the record's own key (a
    crawled `search_paper_text(paper_id)`: SmolLM2 wrote its description's example, "2401.12345")."""
    b = spec.binding
    c = world.collection(b.collection) if b else None
    if b is None or c is None:
        return {}
    out = {b.key_param: c.name} if b.key_param else {}
    fields = {f.name: f for f in c.fields}
    for param, fname in {**b.params, **b.match}.items():
        f = fields.get(fname)
        if f is not None and f.ref is not None:
            out[param] = f.ref
        elif fname == c.key:
            out[param] = c.name
    return out


def _acts_on(
    toolset: ToolSet, name: str, worlds: dict[str, World]
) -> tuple[ToolBinding | None, World | None, CollectionSpec | None]:
    """A bundle tool's binding, the world code runs it in and the collection it acts on (each None where code
    does not run it)."""
    b = toolset.by_name[name].binding
    world = worlds.get(b.world_id) if b is not None and b.executed else None
    return b, world, world.collection(b.collection) if world is not None else None


# keywords a narrowed parameter loses: llama.cpp's grammar (llguidance) does not hold an `enum` beside an `anyOf`
# (a crawled `parent_doc_uuid: anyOf [string, null]` came out "wg-2391" for "WG-2391", or stalled the server), and
# stalls on an `enum` with no `type` (measured: no token in 100 s; with "type": "string", the values)
_CHOICE_KEYS = frozenset({"anyOf", "oneOf", "allOf", "$ref", "type", "default"})


def _integer(prop: dict[str, Any]) -> bool:
    types = {prop.get("type"), *(b.get("type") for b in prop.get("anyOf", []) if isinstance(b, dict))}
    return "integer" in types and "string" not in types


def _fitting(prop: dict[str, Any], values: list[str]) -> list[str]:
    """The values (strings the conversation showed) a parameter can take: for an integer one, the integers."""
    return [v for v in values if re.fullmatch(r"-?\d{1,18}", v)] if _integer(prop) else values


def _limited_to(prop: dict[str, Any], values: list[str]) -> dict[str, Any]:
    """A parameter's schema narrowed to `values` (from `_fitting`), its description kept."""
    kept = {k: v for k, v in prop.items() if k not in _CHOICE_KEYS}
    if _integer(prop):
        return {**kept, "type": "integer", "enum": [int(v) for v in values]}
    return {**kept, "type": "string", "enum": values}


def ground_tools(
    toolset: ToolSet, messages: list[dict[str, Any]], worlds: dict[str, World], done: set[tuple[str, str]] = frozenset()
) -> list[dict[str, Any]]:
    """The toolset's OpenAI tools with key parameters narrowed to the keys seen so far (and a `format: date`
    parameter to the days seen, when there are any); the tools whose required key has none are left out.
    `done`: (tool, key) of calls that already succeeded: the tool is not offered that record again (a small model
    otherwise repeats a call it has just made, step after step)."""
    out: list[dict[str, Any]] = []
    seen_by_world: dict[str, dict[str, list[str]]] = {}
    dates: list[str] | None = None
    for tool in toolset.tools:
        spec = toolset.by_name[tool["function"]["name"]]
        b, world, _ = _acts_on(toolset, spec.name, worlds)
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
            keys = _fitting(props[param], keys)
            if not keys:
                if param in required:
                    usable = False
                    break
                props.pop(param)  # an optional reference with nothing to point at is left out
                continue
            props[param] = _limited_to(props[param], keys)
        values = None
        for param in _value_params(spec, world) if usable else []:
            if param not in props or "enum" in props[param]:
                continue
            if values is None:  # a field's or an entity's name ("config xml", "item") is not a value, nor a
                names = _world_words(world)  # name followed by the value ("fullname team/nightly-tests")
                values = [
                    v for v in seen_values(messages) if v.lower() not in names and v.split()[0].lower() not in names
                ]
            shown = values
            if not b.key_param and list(b.match) == [param]:  # the record this tool already read, not again
                shown = [v for v in values if (tool["function"]["name"], "match:" + v.lower()) not in done]
            if not shown:
                if param in required:
                    usable = False
                    break
                props.pop(param)
                continue
            props[param] = _limited_to(props[param], shown)
        for param in [p for p, prop in props.items() if prop.get("format") == "date" and "enum" not in prop]:
            if dates is None:
                dates = seen_dates(messages)
            if dates:  # none shown: any day (the grammar still holds it to a date)
                props[param] = _limited_to(props[param], dates)
        if usable:
            out.append(narrowed)
    return out


DAY = re.compile(r"(?<![\w-])\d{4}-\d{2}-\d{2}(?![\d-])")


def seen_dates(messages: list[dict[str, Any]]) -> list[str]:
    """The days (YYYY-MM-DD) the user's messages and the tool results have shown, in order, once each: what a
    `format: date` argument may be under grounding. SmolLM2, asked to move a visit to 2026-04-09, sent 2022-04-09
    (its training years) even with the grammar holding it to a date."""
    return list(dict.fromkeys(d for t in _shown_texts(messages) for d in DAY.findall(t)))


def named_tools(toolset: ToolSet, messages: list[dict[str, Any]], worlds: dict[str, World]) -> set[str] | None:
    """The names of the bundle's world tools whose record the user's messages name (its entity or collection, "the
    paperswithcodes whose ...", "booking bkg-1"), with every custom action (a pack's `checkout_book` is asked as
    "check out", its words are not its name's); None when no user message names a record a get/list/create/update/
    delete acts on (every tool stays on offer: an irrelevant request). From the conversation only, as the keys are,
    at every step: SmolLM2, asked for a crawled server's projects, called its get_symbols; asked for papers,
    get_remote_jobs; with the transaction it was asked about read, it read the transaction's account and answered
    about that."""
    said = _user_said(messages)
    if not said:
        return None
    named, actions = set(), set()
    for tool in toolset.tools:
        name = tool["function"]["name"]
        b, _, c = _acts_on(toolset, name, worlds)
        if c is None:
            continue
        if b.operation is not None:
            actions.add(name)
        elif any(_says(said, re.sub(r"[_-]+", " ", n).lower(), plural=True) for n in (c.entity, c.name)):
            named.add(name)
    return named | actions if named else None


def _field_names(doc: Any) -> set[str]:
    if isinstance(doc, dict):
        return set(doc) | {k for v in doc.values() for k in _field_names(v)}
    if isinstance(doc, list):
        return {k for v in doc for k in _field_names(v)}
    return set()


def _says(text: str, phrase: str, plural: bool = False) -> bool:
    """Whether `text` says `phrase` as words of their own (with `plural`, also with an "s" or "es")."""
    return re.search(rf"(?<![\w-]){re.escape(phrase)}{'(?:s|es)?' if plural else ''}(?![\w-])", text) is not None


def unread_reads(toolset: ToolSet, messages: list[dict[str, Any]], worlds: dict[str, World]) -> list[str]:
    """Right after a tool result that succeeded: the bundle's get tools that would read what the user asked
    and no result has shown yet. A field is asked when the user's messages say it and its record's entity
    ("the destination of the flight linked to booking bkg-1"), no result so far has that field, and a result
    has shown a key of its collection (the record to read is known). A reply at that point answers without
    the record that holds the answer: SmolLM2 read the booking and wrote about the flight instead of reading
    it. Empty when the last message is not a successful result, or nothing asked is missing."""
    if not messages or tool_result(messages[-1]) is None:  # not after a result, or after an error
        return []
    said = _user_said(messages)
    shown = _field_names([doc for m in messages if (doc := tool_result(m)) is not None])
    results = [m for m in messages if m["role"] == "tool"]
    seen_by_world: dict[str, dict[str, list[str]]] = {}
    out = []
    for tool in toolset.tools:
        name = tool["function"]["name"]
        b, world, c = _acts_on(toolset, name, worlds)
        if c is None or b.action != "get" or not b.key_param:
            continue
        if world.world_id not in seen_by_world:
            seen_by_world[world.world_id] = seen_keys(results, world)
        if not seen_by_world[world.world_id].get(c.name):
            continue
        if not any(_says(said, n.lower()) for n in {c.entity, re.sub(r"[_-]+", " ", c.entity)}):
            continue
        asked = [
            f.name
            for f in c.fields
            if f.name != c.key and f.ref is None and f.name not in shown and _says(said, re.sub(r"[_-]+", " ", f.name))
        ]
        if asked:
            out.append(name)
    return out


HOW_MANY = re.compile(r"\b(?:how many|number of)\b")

# a value the reply grammar may require: one the prose pattern's characters can write, and short
_QUOTABLE = re.compile(PROSE_CHAR + "{1,60}")


def _quotable(value: str) -> bool:
    """Whether the reply grammar may require `value`: prose characters, at most 60, and more than one unless a digit."""
    return _QUOTABLE.fullmatch(value) is not None and (len(value) >= 2 or value.isdigit())


def _field_values(doc: Any, out: dict[str, list[str]]) -> None:
    if isinstance(doc, dict):
        for k, v in doc.items():
            if isinstance(v, str | int | float) and not isinstance(v, bool):
                out.setdefault(k, []).append(str(v).strip())
            else:
                _field_values(v, out)
    elif isinstance(doc, list):
        for x in doc:
            _field_values(x, out)


def asked_fields(messages: list[dict[str, Any]], count: bool = False) -> list[tuple[str, list[str]]]:
    """Right after a tool result that succeeded: each field of that result the user's messages name ("the name for
    section sct-3203" -> the result's `name`; with `count`, "how many" -> a list's `count`, which
    benchmarks/reply_grammar.py tries), with its values there, less those the user wrote themselves (the key they
    gave), in the result's order. What a reply that answers must say; under
    grounding the reply's grammar requires them (`rollouts.reply_quotes_asked`): SmolLM2 answered crawled look-ups
    with links and numbers it made up. Empty when the last message is no successful result or the user names none
    of its fields."""
    if not messages or (doc := tool_result(messages[-1])) is None:
        return []
    said = _user_said(messages)
    by_field: dict[str, list[str]] = {}
    _field_values(doc, by_field)
    out = []
    for fname, values in by_field.items():
        phrase = re.sub(r"[_-]+", " ", fname).strip().lower()
        counted = count and fname == "count" and HOW_MANY.search(said) is not None  # "how many", "the number of"
        if not phrase or not (counted or _says(said, phrase, plural=True)):
            continue
        kept = [v for v in values if _quotable(v) and not _says(said, v.lower())]
        if kept := list(dict.fromkeys(kept)):
            out.append((fname, kept))
    return out


def asked_values(messages: list[dict[str, Any]], count: bool = False) -> list[str]:
    """The values of `asked_fields`, in order, each once: under grounding the reply's grammar requires one of them
    (`vocab.quoting_reply_pattern`); requiring all of them, or each after its field's name, made SmolLM2 write more
    replies the judge keeps and fewer a reader does (benchmarks/README.md, reply grammars)."""
    return list(dict.fromkeys(v for _, values in asked_fields(messages, count) for v in values))


def confirming_values(toolset: ToolSet, messages: list[dict[str, Any]]) -> list[str]:
    """Right after a successful result of a change code ran (an update, delete, create or a pack's action): the
    arguments of the call it answers (the record's key, what it set), each quotable, in the call's order. A reply
    that confirms the change names one of them (the task's confirmation criterion asks that); under grounding the
    reply's grammar requires one (`rollouts.reply_quotes_asked`): SmolLM2 confirmed a cancelled order ord-2003 as
    "Cancel order of order-2003", a changed repository as "Your response." Empty anywhere else."""
    if not messages or tool_result(messages[-1]) is None:
        return []
    call_id = messages[-1].get("tool_call_id")
    call = next((c for m in reversed(messages) for c in m.get("tool_calls") or [] if c.get("id") == call_id), None)
    fn = (call or {}).get("function") or {}
    spec = toolset.by_name.get(fn.get("name", ""))
    b = spec.binding if spec is not None else None
    if b is None or not b.executed or b.action in READ_ACTIONS:
        return []
    try:
        args = json.loads(fn.get("arguments") or "{}")
    except ValueError:
        return []
    values = [
        str(v).strip()
        for v in (args.values() if isinstance(args, dict) else [])
        if isinstance(v, str | int | float) and not isinstance(v, bool)
    ]
    return list(dict.fromkeys(v for v in values if _quotable(v)))
