"""Domain packs: a world a person writes (docs/packs.md). One folder per domain, `worlds/<name>/`:

- `world.yaml`: the schema (collections, typed fields, references, enums and their lifecycles),
  the rules the pack's actions check, the policy text the agent is given, the seed counts and
  the tools (CRUD tools by binding, operation tools by the name of an action);
- `actions.py`: the verbs beyond CRUD, one `@action` function each (`renew_loan`), with the rule
  checks and the errors a real back end gives (`ActionError`), and `@seeder` functions that make
  the seeded records consistent (a due date after its checkout date).

An action runs on a deep copy of the state through `Db`, and the copy is diffed against the
original into the JSON Patch the executor returns: the state itself is never changed. Nothing
reads the wall clock or draws at random (`db.today` is the world's), so the same call on the
same state always has the same effect. `save_pack` writes any world and its bound tools as a
pack, to be edited by hand and loaded again.

A run stores a pack world's folder relative to `worlds.packs_dir` (`World.pack_dir`, "library": `portable`),
so a run store or an exported task set reads the same on another machine or checkout; `locate` makes it
absolute again against the packs folder the reader is configured with (a folder outside it stays absolute).
`execute.py` and `seed.py` sit below this module: they are handed `run_operation` and `finish_seed`
(`execute_call`, `seed_world` hand them over), never import it.
"""

from __future__ import annotations

import copy
import datetime as dt
import importlib.util
import inspect
import json
import random
import shutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import yaml

from worldsmith.records import CollectionSpec, FieldSpec, PolicyRule, ToolBinding, ToolSpec, World, content_id
from worldsmith.vocab import FIELD_FORMATS
from worldsmith.worldmodel import bindings as bind
from worldsmith.worldmodel.execute import (
    Execution,
    execute,
    find,
    referenced_problem,
    same,
    transition_problem,
    unique_problem,
    value_problem,
)
from worldsmith.worldmodel.schema import SNAKE, derive_rules, id_prefix, singular, world_problem
from worldsmith.worldmodel.seed import next_key, seed_state

WORLD_FILE = "world.yaml"
ACTIONS_FILE = "actions.py"
DEFAULT_RECORDS = (3, 5)
CRUD = ("get", "list", "create", "update", "delete")
FIELD_KEYS = {"type", "format", "enum", "ref", "unique", "required", "description", "examples"}
TOP_KEYS = {"name", "domain", "category", "description", "policy", "seed", "collections", "rules", "tools"}


class PackError(ValueError):
    """A pack that cannot be loaded: the message names the file, the key and what was expected."""


class ActionError(Exception):
    """What an action refuses, as a back end would: `code` (not_found, invalid_value,
    policy_violation, insufficient_funds, no_availability, limit_reached ...) and a message
    the agent reads."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


# --------------------------------------------------------------------------- the author API


@dataclass
class ActionDef:
    """One `@action`: a verb on one collection, run by code."""

    name: str
    fn: Callable[..., Any]
    collection: str
    key: str | None  # the parameter naming the record it acts on (None: it creates one)
    description: str
    params: dict[str, Any]  # JSON Schema properties of the other parameters
    required: list[str]
    goal: str  # what a user asks, with the parameter names in braces
    read_only: bool = False
    fields: dict[str, str] = field(default_factory=dict)  # parameter -> field whose values it takes
    output: dict[str, Any] | None = None  # its result's JSON Schema (None: the collection's record)


def action(
    *,
    collection: str,
    key: str | None = None,
    description: str,
    params: dict[str, Any] | None = None,
    goal: str,
    read_only: bool = False,
    required: Iterable[str] | None = None,
    fields: dict[str, str] | None = None,
    output: dict[str, Any] | None = None,
    name: str | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare `fn(db, **arguments) -> result` an action of the pack. `key` is the parameter that
    names the record it acts on (usually its collection's key field, "loan_id"; None for an action
    that creates one, whose tasks draw its parameters from `fields` and the schema). `params` are
    the other parameters' JSON Schema properties, all required unless `required` says which;
    `fields` binds parameters to fields of the collection whose seeded values a task may draw
    (by default, the parameters named like a field, without enum or bounds)."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__pack_action__ = {  # type: ignore[attr-defined]
            "name": name or fn.__name__,
            "collection": collection,
            "key": key,
            "description": description,
            "params": dict(params or {}),
            "required": list(required) if required is not None else list(params or {}),
            "goal": goal,
            "read_only": read_only,
            "fields": dict(fields or {}),
            "output": output,
        }
        return fn

    return register


def seeder(collection: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare `fn(record, db, rng)` a seed fix for each record of `collection`: it changes
    `record` in place (db reads the other collections; rng is seeded)."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__pack_seeder__ = collection  # type: ignore[attr-defined]
        return fn

    return register


class Db:
    """An action's view of the world state (a deep copy it may change). Reads return copies of
    the records: changes go through insert, update and delete, which check them as the
    executor does."""

    def __init__(self, world: World, state: dict[str, Any]):
        self.world = world
        self.state = state
        self.today: dt.date = dt.date.fromisoformat(world.today)

    # ------------------------------------------------------------ reading
    def spec(self, collection: str) -> CollectionSpec:
        c = self.world.collection(collection)
        if c is None:
            raise KeyError(f"no collection {collection!r} in world {self.world.domain!r}")
        return c

    def _records(self, collection: str) -> list[dict[str, Any]]:
        self.spec(collection)
        return self.state.setdefault(collection, [])

    def _at(self, collection: str, key: Any) -> int:
        c = self.spec(collection)
        at = find(c, self._records(collection), key)
        if at is None:
            raise ActionError("not_found", f"no {c.entity} with {c.key} {key!r}")
        return at

    def get(self, collection: str, key: Any) -> dict[str, Any]:
        """The record whose key is `key` (ActionError not_found when there is none)."""
        return copy.deepcopy(self._records(collection)[self._at(collection, key)])

    def find(self, collection: str, **equal: Any) -> list[dict[str, Any]]:
        """The records whose fields equal these values (case and spacing of text ignored)."""
        return [copy.deepcopy(r) for r in self._records(collection) if all(same(r.get(k), v) for k, v in equal.items())]

    def list(self, collection: str) -> list[dict[str, Any]]:
        return copy.deepcopy(self._records(collection))

    @staticmethod
    def date(value: str) -> dt.date:
        """The date of an ISO date or datetime text."""
        return dt.date.fromisoformat(str(value)[:10])

    # ------------------------------------------------------------ changing
    def _check(self, c: CollectionSpec, f: FieldSpec, value: Any, skip: int | None) -> None:
        if value is None and not f.required:  # an optional field left empty
            return
        problem = value_problem(self.world, c, f, value, self.state) or unique_problem(
            c, f, value, self._records(c.name), skip
        )
        if problem:
            raise ActionError(*problem.error)

    def insert(self, collection: str, record: dict[str, Any]) -> dict[str, Any]:
        """Add a record under the next key (one past the highest); returns it with its key."""
        c = self.spec(collection)
        fields = {f.name: f for f in c.fields}
        unknown = set(record) - set(fields) - {c.key}
        missing = [f.name for f in c.fields if f.required and f.name not in record]
        if unknown or missing:  # the pack's bug, not the agent's
            raise ValueError(f"insert into {collection}: unknown fields {sorted(unknown)}, missing {missing}")
        for name, value in record.items():
            if name in fields:
                self._check(c, fields[name], value, None)
        records = self._records(collection)
        new = {c.key: next_key(c, records), **{f.name: record.get(f.name) for f in c.fields}}
        records.append(new)
        return copy.deepcopy(new)

    def update(self, collection: str, key: Any, **changes: Any) -> dict[str, Any]:
        """Change fields of one record, checking enums, references, unique values and the
        collection's transitions; returns the updated record."""
        c = self.spec(collection)
        fields = {f.name: f for f in c.fields}
        unknown = set(changes) - set(fields)
        if unknown:
            raise ValueError(f"update of {collection}: unknown fields {sorted(unknown)}")
        at = self._at(collection, key)
        record = self._records(collection)[at]
        for name, value in changes.items():
            self._check(c, fields[name], value, at)
            problem = transition_problem(c, record, name, value)
            if problem:
                raise ActionError(*problem.error)
        record.update(changes)
        return copy.deepcopy(record)

    def delete(self, collection: str, key: Any) -> None:
        """Remove one record (a conflict while other records reference it)."""
        c = self.spec(collection)
        at = self._at(collection, key)
        record = self._records(collection)[at]
        problem = referenced_problem(self.world, c, self.state, record)
        if problem:
            raise ActionError(*problem.error)
        del self._records(collection)[at]


# --------------------------------------------------------------------------- the actions module


@dataclass
class Actions:
    """What a pack's actions.py defines."""

    actions: dict[str, ActionDef] = field(default_factory=dict)
    seeders: list[tuple[str, Callable[..., Any]]] = field(default_factory=list)  # (collection, fn), in file order


_MODULES: dict[tuple[str, float], Actions] = {}


def load_actions(folder: Path) -> Actions:
    """The actions and seeders of a pack folder (none when it has no actions.py); imported by
    file path under a module name of its own, and cached until the file changes."""
    path = Path(folder).resolve() / ACTIONS_FILE
    if not path.is_file():
        return Actions()
    stamp = (str(path), path.stat().st_mtime)
    if stamp in _MODULES:
        return _MODULES[stamp]
    name = f"worldsmith_pack_{content_id(str(path), stamp[1])[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look a module up by name
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise PackError(f"{path}: importing it failed: {exc.__class__.__name__}: {exc}") from exc
    out = _collect(module, path)
    _MODULES[stamp] = out
    return out


def _collect(module: ModuleType, path: Path) -> Actions:
    out = Actions()
    for attr, fn in vars(module).items():
        meta = getattr(fn, "__pack_action__", None)
        if meta is not None and callable(fn):
            if meta["name"] in out.actions:
                raise PackError(f"{path}: action {meta['name']!r} is defined twice")
            params = inspect.signature(fn).parameters
            wanted = [p for p in params if p != next(iter(params))]
            declared = ([meta["key"]] if meta["key"] else []) + list(meta["params"])
            if set(wanted) != set(declared) and not any(p.kind == p.VAR_KEYWORD for p in params.values()):
                raise PackError(
                    f"{path}: action {attr}: the function takes {wanted} but the decorator declares {declared}"
                )
            out.actions[meta["name"]] = ActionDef(fn=fn, **meta)
        if getattr(fn, "__pack_seeder__", None) is not None and callable(fn):
            out.seeders.append((fn.__pack_seeder__, fn))
    return out


# --------------------------------------------------------------------------- loading a pack


@dataclass
class Pack:
    name: str
    path: Path
    world: World
    tools: list[ToolSpec]
    actions: dict[str, ActionDef]
    records: tuple[int, int] = DEFAULT_RECORDS  # records per collection when seeding (seed_state's `records`)


def _fail(path: Path, where: str, expected: str) -> PackError:
    return PackError(f"{path}: {where}: {expected}")


def _mapping(path: Path, where: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, where, f"expected a mapping, got {type(value).__name__}")
    return value


def _field(path: Path, where: str, name: str, spec: Any) -> FieldSpec:
    if isinstance(spec, str):  # `title: sentence`: the format alone
        spec = {"format": spec}
    spec = _mapping(path, where, spec)
    if not SNAKE.match(str(name)):
        raise _fail(path, where, "a field name must be snake_case")
    unknown = set(spec) - FIELD_KEYS
    if unknown:
        raise _fail(path, where, f"unknown keys {sorted(unknown)} (expected some of {sorted(FIELD_KEYS)})")
    data = dict(spec)
    if data.get("ref") is not None:
        data.setdefault("format", "code")
    if data.get("format", "text") not in FIELD_FORMATS:
        raise _fail(path, f"{where}.format", f"{data['format']!r} is not one of {', '.join(FIELD_FORMATS)}")
    if data.get("type", "string") not in ("string", "integer", "number", "boolean"):
        raise _fail(path, f"{where}.type", f"{data['type']!r} is not string, integer, number or boolean")
    if "enum" in data and (
        not isinstance(data["enum"], list) or len(data["enum"]) < 2 or not all(isinstance(v, str) for v in data["enum"])
    ):
        raise _fail(path, f"{where}.enum", "expected a list of 2 or more text values")
    examples = data.get("examples", ["x"])
    if not isinstance(examples, list) or not examples or not all(isinstance(v, str) for v in examples):
        raise _fail(path, f"{where}.examples", "expected a list of 1 or more text values")
    if data.get("ref") is not None and data.get("type", "string") != "string":
        raise _fail(path, f"{where}.type", "a reference holds a key, so its type must be string")
    try:
        return FieldSpec(name=name, **data)
    except ValueError as exc:
        raise _fail(path, where, f"not a valid field: {exc}") from None


def _collection(path: Path, name: str, spec: Any, taken: set[str]) -> CollectionSpec:
    where = f"collections.{name}"
    spec = _mapping(path, where, spec)
    if not SNAKE.match(str(name)):
        raise _fail(path, where, "a collection name must be plural snake_case")
    unknown = set(spec) - {"entity", "key", "id_prefix", "fields", "transitions", "description"}
    if unknown:
        raise _fail(
            path, where, f"unknown keys {sorted(unknown)} (expected entity, key, id_prefix, fields, transitions)"
        )
    entity = spec.get("entity") or singular(name)
    prefix = spec.get("id_prefix") or id_prefix(entity, taken)
    if prefix in taken:
        raise _fail(path, f"{where}.id_prefix", f"{prefix!r} is already another collection's")
    taken.add(prefix)
    fields_in = _mapping(path, f"{where}.fields", spec.get("fields"))
    fields = [_field(path, f"{where}.fields.{f}", f, s) for f, s in fields_in.items()]
    names = {f.name: f for f in fields}
    transitions: dict[str, dict[str, list[str]]] = {}
    for fname, flow in _mapping(path, f"{where}.transitions", spec.get("transitions") or {}).items():
        at = f"{where}.transitions.{fname}"
        f = names.get(fname)
        if f is None or not f.enum:
            raise _fail(path, at, f"expected an enum field of {name} ({', '.join(x.name for x in fields if x.enum)})")
        flow = _mapping(path, at, flow)
        out: dict[str, list[str]] = {}
        for value, nxt in flow.items():
            nxt = [] if nxt is None else nxt if isinstance(nxt, list) else [nxt]
            bad = [v for v in [value, *nxt] if v not in f.enum]
            if bad:
                raise _fail(path, f"{at}.{value}", f"{bad} are not values of {fname} {f.enum}")
            out[value] = list(nxt)
        for value in f.enum:
            out.setdefault(value, [])
        transitions[fname] = out
    return CollectionSpec(
        name=name,
        entity=entity,
        key=spec.get("key") or f"{entity}_id",
        id_prefix=prefix,
        fields=fields,
        transitions=transitions,
    )


def world_id_for_pack(name: str) -> str:
    return content_id("pack", name, prefix="wld_")


def portable(world: World, packs_dir: str | Path) -> World:
    """`world` as a run stores it: its pack folder relative to `packs_dir` (worlds.packs_dir) where it
    lies inside it ("library"), else absolute."""
    if not world.pack_dir:
        return world
    folder, root = Path(world.pack_dir).resolve(), Path(packs_dir).resolve()
    if not folder.is_relative_to(root):
        return world
    return world.model_copy(update={"pack_dir": folder.relative_to(root).as_posix()})


def locate(world: World, packs_dir: str | Path) -> World:
    """`world` as read from a run: its pack folder made absolute against `packs_dir` (the reader's
    worlds.packs_dir); a world of no pack, or with an absolute folder (a run made before folders were
    stored relative), as is."""
    if not world.pack_dir or Path(world.pack_dir).is_absolute():
        return world
    return world.model_copy(update={"pack_dir": str((Path(packs_dir) / world.pack_dir).resolve())})


def pack_folder(world: World) -> Path:
    """The folder a pack world's actions load from (absolute: `load_pack`'s, or `locate`d)."""
    if not world.pack_dir:
        raise PackError(f"world {world.world_id} ({world.domain}) has no pack folder to load its actions from")
    if not Path(world.pack_dir).is_absolute():
        raise PackError(
            f"world {world.world_id} ({world.domain}): its pack folder {world.pack_dir!r} is relative to "
            "worlds.packs_dir; locate it first (packs.locate(world, packs_dir))"
        )
    return Path(world.pack_dir)


def load_pack(folder: str | Path, today: str | dt.date) -> Pack:
    """A pack folder's world and tools (PackError, naming the file and key, for bad input); the
    world's `pack_dir` is the folder's absolute path (`portable` is what a run stores)."""
    folder = Path(folder)
    path = folder / WORLD_FILE
    if not path.is_file():
        raise PackError(f"{path}: no such file (a pack folder holds world.yaml and, for its actions, actions.py)")
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise PackError(f"{path}: not valid YAML: {exc}") from None
    doc = _mapping(path, "top level", doc)
    unknown = set(doc) - TOP_KEYS
    if unknown:
        raise _fail(path, "top level", f"unknown keys {sorted(unknown)} (expected some of {sorted(TOP_KEYS)})")
    name = str(doc.get("name") or folder.resolve().name)
    if not doc.get("domain"):
        raise _fail(path, "domain", "expected the domain's name, like 'Public library loans'")
    taken: set[str] = set()
    collections = [
        _collection(path, cname, cspec, taken)
        for cname, cspec in _mapping(path, "collections", doc.get("collections")).items()
    ]
    known = [c.name for c in collections]
    for c in collections:
        for f in c.fields:
            if f.ref is not None and f.ref not in known:
                raise _fail(
                    path,
                    f"collections.{c.name}.fields.{f.name}.ref",
                    f"{f.ref!r} is not a collection ({', '.join(known)})",
                )
    world_id = world_id_for_pack(name)
    world = World(
        world_id=world_id,
        domain_id=content_id("pack", name, prefix="dom_"),
        domain=str(doc["domain"]),
        category=str(doc.get("category") or "Domain packs"),
        description=str(doc.get("description") or "").strip(),
        collections=collections,
        today=today.isoformat() if isinstance(today, dt.date) else str(today),
        source="pack",
        pack=name,
        pack_dir=str(folder.resolve()),
        policy=str(doc.get("policy") or "").strip(),
    )
    problem = world_problem(world)
    if problem:
        raise _fail(path, "collections", problem)
    records = _records(path, doc.get("seed"))
    world = world.model_copy(
        update={
            "rules": derive_rules(world) + _rules(path, world, doc.get("rules") or []),
            "seed_records": list(records),
        }
    )
    acts = load_actions(folder)
    tools = [_tool(path, world, acts, i, t) for i, t in enumerate(doc.get("tools") or [])]
    names = [t.name for t in tools]
    if len(set(names)) != len(names):
        raise _fail(path, "tools", f"tool names used twice: {sorted({n for n in names if names.count(n) > 1})}")
    for a in acts.actions.values():
        if world.collection(a.collection) is None:
            raise PackError(f"{folder / ACTIONS_FILE}: action {a.name}: no collection {a.collection!r} in {path}")
    for coll, fn in acts.seeders:
        if world.collection(coll) is None:
            raise PackError(f"{folder / ACTIONS_FILE}: seeder {fn.__name__}: no collection {coll!r} in {path}")
    return Pack(
        name=name,
        path=folder.resolve(),
        world=world,
        tools=tools,
        actions=acts.actions,
        records=records,
    )


def _records(path: Path, seed: Any) -> tuple[int, int]:
    if seed is None:
        return DEFAULT_RECORDS
    n = _mapping(path, "seed", seed).get("records", list(DEFAULT_RECORDS))
    if isinstance(n, int):
        n = [n, n]
    if not (isinstance(n, list) and len(n) == 2 and all(isinstance(x, int) for x in n) and 1 <= n[0] <= n[1] <= 50):
        raise _fail(path, "seed.records", "expected [least, most] records per collection, like [3, 5] (1 to 50)")
    return (n[0], n[1])


def _rules(path: Path, world: World, rules: Any) -> list[PolicyRule]:
    if not isinstance(rules, list):
        raise _fail(path, "rules", "expected a list of rules, each with collection and text")
    out = []
    for i, r in enumerate(rules):
        where = f"rules[{i}]"
        r = _mapping(path, where, r)
        if world.collection(str(r.get("collection"))) is None:
            raise _fail(path, f"{where}.collection", f"expected one of {', '.join(c.name for c in world.collections)}")
        if not str(r.get("text") or "").strip():
            raise _fail(path, f"{where}.text", "expected the rule in words, as the agent is told it")
        unknown = set(r) - {"id", "kind", "collection", "action", "field", "values", "text"}
        if unknown:
            raise _fail(path, where, f"unknown keys {sorted(unknown)}")
        try:
            out.append(
                PolicyRule(
                    rule_id=str(r.get("id") or content_id(world.world_id, r["collection"], r["text"])[:12]),
                    kind=r.get("kind", "check"),
                    collection=r["collection"],
                    action=r.get("action", "custom"),
                    field=r.get("field"),
                    values=list(r.get("values") or []),
                    text=" ".join(str(r["text"]).split()),
                )
            )
        except ValueError as exc:
            raise _fail(path, where, f"not a valid rule: {exc}") from None
    return out


def _spec(
    world: World,
    b: ToolBinding,
    name: str,
    description: str,
    schemas: tuple[dict, dict | None],
    annotations: dict,
    extra: dict[str, Any],
) -> ToolSpec:
    server = f"pack/{world.pack}"
    return ToolSpec(
        tool_id=ToolSpec.make_id(name, description, schemas[0], schemas[1], server),
        name=name,
        description=description,
        input_schema=schemas[0],
        output_schema=schemas[1],
        annotations=annotations,
        source="pack",
        server=server,
        category=world.category,
        domain=world.domain,
        binding=b,
        extra={"pack": world.pack, **extra},
    )


CRUD_KEYS = (
    "action",
    "collection",
    "name",
    "description",
    "params",
    "fixed",
    "key_param",
    "match",
    "search",
    "limit_param",
    "ignored",
    "input_schema",
    "output_schema",
    "annotations",
)


def _tool(path: Path, world: World, acts: Actions, i: int, t: Any) -> ToolSpec:
    where = f"tools[{i}]"
    t = _mapping(path, where, t)
    if "operation" in t:
        op = t["operation"]
        a = acts.actions.get(op)
        if a is None:
            known = ", ".join(sorted(acts.actions)) or "none"
            raise _fail(path, f"{where}.operation", f"{op!r} is not an @action of {ACTIONS_FILE} (it defines: {known})")
        unknown = set(t) - {"operation", "name", "description"}
        if unknown:
            raise _fail(path, where, f"unknown keys {sorted(unknown)} (an operation tool takes name, description)")
        return operation_spec(world, a, t.get("name"), t.get("description"))
    if "custom" in t:  # a tool whose action is not written: the LLM simulator plays it
        unknown = set(t) - {"custom", "collection", "description", "input_schema", "output_schema", "key_param"}
        if unknown:
            raise _fail(path, where, f"unknown keys {sorted(unknown)}")
        if world.collection(str(t.get("collection"))) is None:
            raise _fail(path, f"{where}.collection", f"expected one of {', '.join(c.name for c in world.collections)}")
        schema = t.get("input_schema") or {"type": "object", "properties": {}}
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise _fail(path, f"{where}.input_schema", f"not a JSON Schema: {exc.message}") from None
        b = ToolBinding(
            world_id=world.world_id, collection=t["collection"], action="custom", key_param=t.get("key_param")
        )
        return _spec(
            world,
            b,
            str(t["custom"]),
            str(t.get("description") or bind.default_description(world, b)),
            (schema, t.get("output_schema")),
            {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False},
            {},
        )
    unknown = set(t) - set(CRUD_KEYS)
    if unknown:
        raise _fail(
            path,
            where,
            f"unknown keys {sorted(unknown)} (a CRUD tool takes {', '.join(CRUD_KEYS)}; an operation tool "
            "takes operation)",
        )
    if t.get("action") not in CRUD:
        raise _fail(
            path,
            f"{where}.action",
            f"expected one of {', '.join(CRUD)} (or an `operation:` key), got {t.get('action')!r}",
        )
    c = world.collection(str(t.get("collection")))
    if c is None:
        raise _fail(
            path,
            f"{where}.collection",
            f"expected one of {', '.join(x.name for x in world.collections)}, got {t.get('collection')!r}",
        )
    # the key is a field a crawled tool may filter or name by too
    fields = {c.key: FieldSpec(name=c.key), **{f.name: f for f in c.fields}}
    params = _mapping(path, f"{where}.params", t.get("params") or {})
    fixed = _mapping(path, f"{where}.fixed", t.get("fixed") or {})
    for p, fname in params.items():
        if fname not in fields:
            raise _fail(path, f"{where}.params.{p}", f"{fname!r} is not a field of {c.name} ({', '.join(fields)})")
    for fname, value in fixed.items():
        if fname not in fields:
            raise _fail(path, f"{where}.fixed.{fname}", f"not a field of {c.name} ({', '.join(fields)})")
        if fields[fname].enum and value not in fields[fname].enum:
            raise _fail(path, f"{where}.fixed.{fname}", f"{value!r} is not one of {fields[fname].enum}")
    action_ = t["action"]
    # `key_param: null`: a tool that names its record by `match` alone (a crawled one: owner + repo + number)
    key_param = t.get("key_param", c.key if action_ in ("get", "update", "delete") else None)
    match = _mapping(path, f"{where}.match", t.get("match") or {})
    for p, fname in match.items():
        if fname not in fields:
            raise _fail(path, f"{where}.match.{p}", f"{fname!r} is not a field of {c.name} ({', '.join(fields)})")
    search = t.get("search") or []
    if not isinstance(search, list) or not all(isinstance(x, str) for x in search):
        raise _fail(path, f"{where}.search", f"expected a list of parameter names, got {search!r}")
    ignored = {str(k): str(v) for k, v in _mapping(path, f"{where}.ignored", t.get("ignored") or {}).items()}
    b = ToolBinding(
        world_id=world.world_id,
        collection=c.name,
        action=action_,
        key_param=key_param,
        params=params,
        fixed=fixed,
        match=match,
        search=search,
        limit_param=t.get("limit_param"),
        ignored=ignored,
    )
    # a tool with its own schema (a crawled one keeps its server's) says what each parameter is bound to
    schema = t.get("input_schema") or bind.input_schema(world, b)
    if "input_schema" in t:
        props = set((schema or {}).get("properties") or {})
        accounted = {*([key_param] if key_param else []), *params, *match, *search, *ignored}
        accounted |= {t["limit_param"]} if t.get("limit_param") else set()
        if props - accounted:
            raise _fail(
                path,
                f"{where}.input_schema",
                f"parameters {sorted(props - accounted)} are bound to nothing: name each in key_param, params, match, "
                "search, limit_param or ignored (with why)",
            )
    return _spec(
        world,
        b,
        str(t.get("name") or bind.default_name(world, b)),
        " ".join(str(t.get("description") or bind.default_description(world, b)).split()),
        (schema, t["output_schema"] if "output_schema" in t else bind.output_schema(world, b)),
        t.get("annotations") or bind.annotations(b),
        {},
    )


def operation_input_schema(world: World, a: ActionDef) -> dict[str, Any]:
    c = world.collection(a.collection)
    assert c is not None
    props: dict[str, Any] = {}
    required: list[str] = []
    if a.key:
        props[a.key] = {"type": "string", "description": f"the {c.entity}'s id, like {c.id_prefix}-1042"}
        required.append(a.key)
    props.update(copy.deepcopy(a.params))
    required += [p for p in a.required if p in a.params]
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def operation_binding(world: World, a: ActionDef) -> ToolBinding:
    c = world.collection(a.collection)
    assert c is not None
    names = {f.name for f in c.fields}
    fields = {p: p for p in a.params if p in names and not {"enum", "minimum", "maximum"} & set(a.params[p])}
    fields.update(a.fields)
    return ToolBinding(
        world_id=world.world_id,
        collection=a.collection,
        action="custom",
        key_param=a.key or None,
        params=fields,
        operation=a.name,
    )


def operation_spec(world: World, a: ActionDef, name: str | None = None, description: str | None = None) -> ToolSpec:
    c = world.collection(a.collection)
    assert c is not None
    output = a.output if a.output is not None else bind.record_schema(c)
    return _spec(
        world,
        operation_binding(world, a),
        name or a.name,
        " ".join((description or a.description).split()),
        (operation_input_schema(world, a), output),
        {"readOnlyHint": a.read_only, "destructiveHint": False, "idempotentHint": a.read_only, "openWorldHint": False},
        {"goal": a.goal, "operation": a.name},
    )


def load_packs(
    folder: str | Path, names: Iterable[str] | None = None, today: str | dt.date | None = None
) -> list[Pack]:
    """The packs under `folder` (each subfolder with a world.yaml), sorted by name; `names`
    picks some (an unknown one is a PackError listing those there are)."""
    folder = Path(folder)
    today = today or dt.date.today()  # the caller's run date; a world keeps the one it was loaded with
    found = sorted(p.name for p in folder.iterdir() if (p / WORLD_FILE).is_file()) if folder.is_dir() else []
    wanted = found if names is None else list(names)
    unknown = [n for n in wanted if n not in found]
    if unknown:
        raise PackError(f"{folder}: no pack {', '.join(map(repr, unknown))} (there are: {', '.join(found) or 'none'})")
    return sorted((load_pack(folder / n, today) for n in dict.fromkeys(wanted)), key=lambda p: p.name)


# --------------------------------------------------------------------------- running an action


def _pack_actions(world: World) -> Actions:
    return load_actions(pack_folder(world))


def execute_call(world: World, binding: ToolBinding, state: dict[str, Any], arguments: dict[str, Any]) -> Execution:
    """`execute.execute` with the pack actions run by code (`run_operation`): any bound call, any world."""
    return execute(world, binding, state, arguments, operation=run_operation)


def seed_world(world: World, seed: int, records: tuple[int, int] = DEFAULT_RECORDS) -> dict[str, Any]:
    """`seed.seed_state` with a pack world's seeders run (`finish_seed`): any world."""
    return seed_state(world, seed, records, finish=finish_seed)


def run_operation(world: World, binding: ToolBinding, state: dict[str, Any], arguments: dict[str, Any]) -> Execution:
    """Run a pack action on a copy of `state`: its result and the patch that makes the change
    (`state` is not changed), or the error an ActionError names. Any other exception is the
    pack's bug and is raised."""
    acts = _pack_actions(world)
    a = acts.actions.get(str(binding.operation))
    if a is None:
        raise PackError(f"{world.pack_dir}/{ACTIONS_FILE}: no action {binding.operation!r} (tool of {world.domain})")
    c = world.collection(a.collection)
    assert c is not None
    arguments = dict(arguments or {})
    key = binding.key_param or a.key
    if key and (arguments.get(key) is None or str(arguments.get(key)).strip() == ""):
        return Execution(False, error=("not_found", f"no {c.entity} was named: {key} is required"))
    if a.key and key != a.key:  # a binding that renamed the key parameter
        arguments[a.key] = arguments.pop(key)
    schema = operation_input_schema(world, a)
    args = {k: v for k, v in arguments.items() if k in schema["properties"]}
    error = next(iter(jsonschema.Draft202012Validator(schema).iter_errors(args)), None)
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path)
        return Execution(False, error=("invalid_value", f"{where + ': ' if where else ''}{error.message}"))
    work = copy.deepcopy(state)
    db = Db(world, work)
    try:
        result = a.fn(db, **args)
    except ActionError as exc:
        return Execution(False, error=(exc.code, exc.message))
    json.dumps(result)  # a result that is not JSON is the pack's bug
    return Execution(True, result, diff(world, state, db.state))


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def diff(world: World, before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSON Patch from `before` to `after`, records matched by their key: replaced fields
    first, then removed records (highest index first), then added ones."""
    replaces: list[dict[str, Any]] = []
    removes: list[dict[str, Any]] = []
    adds: list[dict[str, Any]] = []
    for c in world.collections:
        if c.name not in after:
            continue
        base = f"/{_escape(c.name)}"
        if c.name not in before:
            adds.append({"op": "add", "path": base, "value": copy.deepcopy(after[c.name])})
            continue
        old = before[c.name]
        new_by_key = {r.get(c.key): r for r in after[c.name]}
        old_keys = {r.get(c.key) for r in old}
        gone = []
        for i, r in enumerate(old):
            n = new_by_key.get(r.get(c.key))
            if n is None:
                gone.append(i)
                continue
            for fname in [*r, *(k for k in n if k not in r)]:
                path = f"{base}/{i}/{_escape(fname)}"
                if fname not in n:
                    replaces.append({"op": "remove", "path": path})
                elif fname not in r:
                    replaces.append({"op": "add", "path": path, "value": copy.deepcopy(n[fname])})
                elif r[fname] != n[fname] or type(r[fname]) is not type(n[fname]):
                    replaces.append({"op": "replace", "path": path, "value": copy.deepcopy(n[fname])})
        removes += [{"op": "remove", "path": f"{base}/{i}"} for i in sorted(gone, reverse=True)]
        adds += [
            {"op": "add", "path": f"{base}/-", "value": copy.deepcopy(r)}
            for r in after[c.name]
            if r.get(c.key) not in old_keys
        ]
    return replaces + removes + adds


# --------------------------------------------------------------------------- seeding


def finish_seed(world: World, state: dict[str, Any], seed: int) -> dict[str, Any]:
    """The seeded state made consistent by the pack's seeders (a new state), deterministically:
    each seeder runs on every record of its collection with a random generator of its own."""
    acts = _pack_actions(world)
    out = copy.deepcopy(state)
    db = Db(world, out)
    for collection, fn in acts.seeders:
        rng = random.Random(f"{seed}:{world.pack}:{collection}:{fn.__name__}")
        for record in out.get(collection, []):
            fn(record, db, rng)
    return out


# --------------------------------------------------------------------------- saving any world as a pack


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def _dump(data: Any, flow: bool | None = None) -> str:
    """YAML text; flow=None writes collections of plain values on one line ({format: money})."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=flow, allow_unicode=True, width=110)


def _field_doc(f: FieldSpec) -> Any:
    d: dict[str, Any] = {}
    if f.type != "string":
        d["type"] = f.type
    if f.format != ("code" if f.ref else "text"):
        d["format"] = f.format
    for k in ("enum", "ref", "unique", "description", "examples"):
        if getattr(f, k):
            d[k] = getattr(f, k)
    if not f.required:
        d["required"] = False
    return d if set(d) != {"format"} else d["format"]


def save_pack(world: World, tools: Iterable[ToolSpec], folder: str | Path, name: str | None = None) -> Path:
    """Write `world` and its bound tools as a pack in `folder` (world.yaml, and the actions.py of
    the world's own pack when it has one): an LLM-designed or crawled world becomes one a person
    can edit and load again. Returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    name = name or world.pack or folder.resolve().name
    derived = {r.rule_id for r in derive_rules(world)}
    collections: dict[str, Any] = {}
    for c in world.collections:
        d: dict[str, Any] = {}
        if c.entity != singular(c.name):
            d["entity"] = c.entity
        if c.key != f"{c.entity}_id":
            d["key"] = c.key
        d["id_prefix"] = c.id_prefix
        d["fields"] = {f.name: _field_doc(f) for f in c.fields}
        flows = {k: dict(flow) for k, flow in c.transitions.items()}
        if flows:
            d["transitions"] = flows
        collections[c.name] = d
    # the lifecycle rules are derived again on load from `transitions`; kept: the rules a person wrote
    rules = [
        {
            k: v
            for k, v in {
                "id": r.rule_id,
                "kind": r.kind,
                "collection": r.collection,
                "action": r.action,
                "field": r.field,
                "values": r.values or None,
                "text": r.text,
            }.items()
            if v is not None
        }
        for r in world.rules
        if r.rule_id not in derived and r.kind not in ("transition",) and not _derived_text(world, r)
    ]
    head = {
        "name": name,
        "domain": world.domain,
        "category": world.category,
        "description": world.description,
        "policy": world.policy or "",
    }
    lines = [
        f"# The {name} domain pack: edit it by hand, then load it with worldsmith.worldmodel.packs.load_pack.",
        "# docs/packs.md says what each key means.",
        _dump(head, flow=False).rstrip(),
        "",
        "collections:",
        _indent(_dump(collections)),
    ]
    if rules:
        lines += [
            "",
            "# rules beyond the lifecycles (those are derived from `transitions`)",
            "rules:",
            _indent(_dump(rules)),
        ]
    src = pack_folder(world) / ACTIONS_FILE if world.pack_dir else None
    written = load_actions(src.parent).actions if src is not None and src.is_file() else {}
    lines += ["", "tools:"]
    for t in tools:
        b = t.binding
        if b is None or b.world_id != world.world_id:
            continue
        if b.operation is not None and b.operation in written:
            d = {"operation": b.operation}
            if t.name != b.operation:
                d["name"] = t.name
            written_desc = " ".join(written[b.operation].description.split())
            if t.description != written_desc:
                d["description"] = t.description
            lines.append(_indent(_dump([d])))
        elif b.action == "custom":
            what = b.operation or t.name
            lines.append(
                f"  # {t.name}: simulated by the LLM until an @action named {what!r} is written in actions.py;\n"
                f"  # then replace this entry with `- operation: {what}`"
            )
            d = {"custom": t.name, "collection": b.collection}
            if b.key_param:
                d["key_param"] = b.key_param
            d["description"] = t.description
            d["input_schema"] = t.input_schema
            if t.output_schema is not None:
                d["output_schema"] = t.output_schema
            lines.append(_indent(_dump([d])))
        else:
            c = world.collection(b.collection)
            assert c is not None
            d = {"action": b.action, "collection": b.collection}
            default_key = c.key if b.action in ("get", "update", "delete") else None
            if b.key_param != default_key:
                d["key_param"] = b.key_param
            if b.params:
                d["params"] = dict(b.params)
            if b.fixed:
                d["fixed"] = dict(b.fixed)
            for part in ("match", "search", "limit_param", "ignored"):
                if getattr(b, part):
                    d[part] = getattr(b, part)
            d["name"] = t.name
            d["description"] = t.description
            if t.input_schema != _made_schema(world, b):  # a crawled tool keeps its server's schemas
                d["input_schema"] = t.input_schema
                d["output_schema"] = t.output_schema
                d["annotations"] = t.annotations
            lines.append(_indent(_dump([d])))
    (folder / WORLD_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    if src is not None and src.is_file() and src.resolve() != (folder / ACTIONS_FILE).resolve():
        shutil.copyfile(src, folder / ACTIONS_FILE)
    return folder


def _made_schema(world: World, b: ToolBinding) -> dict[str, Any] | None:
    """The input schema a binding makes, or None where it cannot (a parameter bound to the key)."""
    try:
        return bind.input_schema(world, b)
    except KeyError:
        return None


def _derived_text(world: World, r: PolicyRule) -> bool:
    """Whether a rule is one `derive_rules` writes (its ids depend on the world id, so a world
    saved under a new name is matched by its text)."""
    return r.kind in ("transition", "forbid") and any(
        d.text == r.text and d.kind == r.kind for d in derive_rules(world)
    )


def _indent(text: str) -> str:
    return "\n".join(("  " + line) if line else line for line in text.rstrip().splitlines())
