"""Executing one tool call: checks first, then a fault, then real execution or simulation.

Order, as a real server would meet a call: an unknown tool or arguments that break the
input schema get the server's error with no model call; then the seeded fault schedule may
fail the call (network faults) or shape its data (partial, empty, edge case); then the call
is executed for real (safe crawled servers) or simulated by the LLM, which answers
`{result, patch}`. The patch must apply and keep the state valid, a read-only tool must not
change anything, the result must match the tool's `output_schema`: a reply that breaks any
of these is asked again with the reason, and after `max_attempts` the episode ends as a
simulator failure (not the agent's fault, never training data).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from referencing.exceptions import Unresolvable

from worldsmith.config import RolloutsConfig
from worldsmith.jsonschemas import embed_schema
from worldsmith.llm import LLMClient, Prompts
from worldsmith.mcp.executor import RealExecutionError, RealExecutor
from worldsmith.records import ToolSpec, content_id
from worldsmith.records import World as WorldSchema
from worldsmith.vocab import EXECUTED_ACTIONS, FAULTS, READ_ACTIONS, error_content
from worldsmith.worldmodel.faults import FaultInjector, traits
from worldsmith.worldmodel.packs import execute_call
from worldsmith.worldmodel.state import PatchRejected, World

# bounded sizes: a small model otherwise repeats itself until it runs out of tokens
SCALAR = {"anyOf": [{"type": "string", "maxLength": 300}, {"type": ["number", "boolean", "null"]}]}
FLAT_OBJECT = {
    "type": "object",
    "additionalProperties": {"anyOf": [SCALAR, {"type": "array", "maxItems": 20, "items": SCALAR}]},
}
# A tool result without an output_schema: an object at most three levels deep. Unbounded
# nesting let a small model recurse until it ran out of tokens; real results fit this.
GENERIC_RESULT: dict[str, Any] = {
    "type": "object",
    "additionalProperties": {
        "anyOf": [SCALAR, FLAT_OBJECT, {"type": "array", "maxItems": 20, "items": {"anyOf": [SCALAR, FLAT_OBJECT]}}]
    },
}
MAX_PATH_ENUM = 400  # more pointers than this: the path is a free string


def state_paths(state: dict[str, Any]) -> list[str]:
    """Every pointer a patch may name in `state` (collections, records, fields) and each
    list's append position "/name/-"."""
    paths: list[str] = []

    def walk(node: Any, at: str, depth: int) -> None:
        if depth > 3:
            return
        if isinstance(node, dict):
            for k, v in node.items():
                p = f"{at}/{str(k).replace('~', '~0').replace('/', '~1')}"
                paths.append(p)
                walk(v, p, depth + 1)
        elif isinstance(node, list):
            paths.append(f"{at}/-")
            for i, v in enumerate(node):
                paths.append(f"{at}/{i}")
                walk(v, f"{at}/{i}", depth + 1)

    walk(state, "", 0)
    return paths


def example_names(state: dict[str, Any]) -> dict[str, str]:
    """A real collection and field name of the state, for the prompt's path examples."""
    for key, value in state.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            return {"example_collection": key, "example_field": next((f for f in value[0] if f != "id"), "id")}
    return {"example_collection": next(iter(state), "items"), "example_field": "status"}


def patch_op_schema(paths: list[str] | None) -> dict[str, Any]:
    """One operation; with `paths`, "add" may name any of them and remove/replace only
    pointers that exist (not a list's "-")."""
    if not paths or len(paths) > MAX_PATH_ENUM:
        return {
            "type": "object",
            "properties": {
                "op": {"enum": ["add", "remove", "replace"]},
                "path": {"type": "string", "minLength": 1, "maxLength": 200},
                "value": {},
            },
            "required": ["op", "path"],
            "additionalProperties": False,
        }
    existing = [p for p in paths if not p.endswith("/-")]
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {"op": {"const": "add"}, "path": {"enum": paths}, "value": {}},
                "required": ["op", "path", "value"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"op": {"const": "replace"}, "path": {"enum": existing}, "value": {}},
                "required": ["op", "path", "value"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"op": {"const": "remove"}, "path": {"enum": existing}},
                "required": ["op", "path"],
                "additionalProperties": False,
            },
        ]
    }


class SimulatorFailure(Exception):
    def __init__(self, reason: str, raw: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.raw = raw


@dataclass
class CallOutcome:
    content: str  # the tool message the agent reads
    ok: bool  # False: the agent got an error
    executor: str  # simulated | real | unknown_tool | invalid_arguments | fault
    tool_id: str | None = None
    arguments: Any = None
    error: str | None = None
    fault: str | None = None
    forced: bool = False
    patch: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 0


def cut_list(result: Any, fault: str) -> Any:
    """A list result as a data fault shapes it: half of it (`truncated`), or nothing."""
    if not isinstance(result, dict):
        return result
    out = dict(result)
    for k, v in result.items():
        if isinstance(v, list):
            out[k] = v[: len(v) // 2] if fault == "partial_result" else []
            out["truncated" if fault == "partial_result" else "count"] = True if fault == "partial_result" else 0
    return out


def is_read_only(spec: ToolSpec) -> bool:
    """Whether a call of the tool cannot change the world: a tool run by code reads iff its bound
    action does (a crawled tool's own annotations often say nothing); any other, as its hints say."""
    b = spec.binding
    if b is not None and b.executed and b.action in EXECUTED_ACTIONS:
        return b.action in READ_ACTIONS
    return bool(spec.hints.readOnlyHint)


def result_schema(spec: ToolSpec) -> dict[str, Any]:
    out = spec.output_schema
    return out if isinstance(out, dict) and out.get("type") == "object" else GENERIC_RESULT


def sim_schema(spec: ToolSpec, result: dict[str, Any], paths: list[str] | None = None) -> dict[str, Any]:
    """`{result, patch}`; with `paths`, patch operations may only name those pointers. The
    result schema's own $defs are hoisted to the root, where its $refs can reach them."""
    patch = (
        {"type": "array", "maxItems": 0}
        if is_read_only(spec)
        else {"type": "array", "maxItems": 4, "items": patch_op_schema(paths)}
    )
    defs: dict[str, Any] = {}
    result = embed_schema(result, "result", defs)
    return {
        "type": "object",
        "properties": {"result": result, "patch": patch},
        "required": ["result", "patch"],
        "additionalProperties": False,
        **({"$defs": defs} if defs else {}),
    }


def state_view(
    state: dict[str, Any], spec: ToolSpec, arguments: Any, max_chars: int
) -> tuple[dict[str, Any], list[str]]:
    """The state, or for a large one the collections the call concerns: those named by the
    tool (name, description, entities) or holding a record whose id is an argument value."""
    if len(json.dumps(state, ensure_ascii=False)) <= max_chars:
        return state, []
    text = f"{spec.name} {spec.description} {' '.join(spec.extra.get('entities', []))}".lower()
    values = {str(v) for v in (arguments or {}).values()} if isinstance(arguments, dict) else set()

    def concerns(key: str, value: Any) -> bool:
        if key.lower() in text or key.lower().rstrip("s") in text:
            return True
        return isinstance(value, list) and any(isinstance(r, dict) and str(r.get("id")) in values for r in value)

    keys = [k for k, v in state.items() if concerns(k, v)] or list(state)[:1]
    view, size = {}, 0
    for k in keys:
        size += len(json.dumps(state[k], ensure_ascii=False))
        if view and size > max_chars:
            break
        view[k] = state[k]
    return view, [k for k in state if k not in view]


def memo_key(tool_id: str, arguments: Any, state: dict[str, Any]) -> str:
    """The simulator's memo key: the same tool, canonical arguments and state."""
    return content_id(tool_id, arguments, content_id(state))


class ToolRunner:
    """Runs an episode's tool calls. `worlds` lets bound tools execute by code; `memo` holds
    what the simulator answered for a tool, arguments and state (seeded with a task's gold
    calls), so the same call in the same state has the same effect."""

    def __init__(
        self,
        client: LLMClient,
        prompts: Prompts,
        cfg: RolloutsConfig,
        real: RealExecutor | None = None,
        worlds: dict[str, WorldSchema] | None = None,
        memo: dict[str, tuple[Any, list[dict[str, Any]]]] | None = None,
    ):
        self.client = client
        self.prompts = prompts
        self.cfg = cfg
        self.real = real
        self.worlds = worlds or {}
        self.memo = memo if memo is not None else {}

    async def execute(
        self, call: dict[str, Any], spec: ToolSpec | None, world: World, faults: FaultInjector, seed: int
    ) -> CallOutcome:
        fn = call.get("function", {})
        name = fn.get("name", "")
        if spec is None:
            return CallOutcome(
                error_content("unknown_tool", f"Unknown tool: {name}"),
                False,
                "unknown_tool",
                error=f"unknown tool {name!r}",
            )
        try:
            arguments = json.loads(fn.get("arguments") or "{}")
        except (ValueError, RecursionError) as exc:  # not JSON; or nested too deeply, or an integer too long, to read
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc).split(":")[0][:80]
            return CallOutcome(
                error_content("invalid_arguments", f"Arguments are not valid JSON: {why}"),
                False,
                "invalid_arguments",
                spec.tool_id,
                fn.get("arguments"),
                error=f"arguments not JSON: {why}",
            )
        problem = argument_problem(spec, arguments)
        if problem:
            return CallOutcome(
                error_content("invalid_arguments", f"Input validation error: {problem}"),
                False,
                "invalid_arguments",
                spec.tool_id,
                arguments,
                error=problem,
            )
        real = self.real is not None and spec.source == "mcp" and self.real.handles(spec.server)
        b = spec.binding
        schema = self.worlds.get(b.world_id) if b is not None and b.executed else None
        kind, forced = faults.draw(
            traits(
                spec.hints,
                simulated=not real and schema is None,
                shapes_lists=schema is not None and b.action == "list",
            )
        )
        if kind and FAULTS[kind].error:
            code, message = FAULTS[kind].error
            return CallOutcome(
                error_content(code, message),
                False,
                "fault",
                spec.tool_id,
                arguments,
                error=message,
                fault=kind,
                forced=forced,
            )
        if schema is not None:
            out = execute_call(schema, b, world.state, arguments)
            result = cut_list(out.result, kind) if out.ok and kind else out.result
            content = json.dumps(result, ensure_ascii=False) if out.ok else out.content
            return CallOutcome(
                content,
                out.ok,
                "code",
                spec.tool_id,
                arguments,
                error=None if out.ok else f"{out.error[0]}: {out.error[1]}",
                fault=kind,
                forced=forced,
                patch=out.patch,
            )
        key = memo_key(spec.tool_id, arguments, world.state)
        if kind is None and key in self.memo:
            result, patch = self.memo[key]
            return CallOutcome(
                json.dumps(result, ensure_ascii=False), True, "memo", spec.tool_id, arguments, patch=patch
            )
        if real:
            try:
                ok, text, _ = await self.real.call(spec.server, spec.name, arguments)
                return CallOutcome(
                    text,
                    ok,
                    "real",
                    spec.tool_id,
                    arguments,
                    error=None if ok else text[:300],
                    fault=kind,
                    forced=forced,
                )
            except RealExecutionError:
                pass  # the server cannot start: simulate (the stage reports it once)
        out = await self._simulate(spec, arguments, world, kind, forced, seed)
        if kind is None:  # a fault-shaped answer is not the tool's answer to remember
            self.memo[key] = (json.loads(out.content), out.patch)
        return out

    async def _simulate(
        self, spec: ToolSpec, arguments: dict[str, Any], world: World, fault: str | None, forced: bool, seed: int
    ) -> CallOutcome:
        view, trimmed = state_view(world.state, spec, arguments, self.cfg.tool_sim.max_state_chars)
        result = result_schema(spec)
        paths = state_paths(view) if self.cfg.tool_sim.constrain_paths else None
        problem, raw = None, None
        for attempt in range(1, self.cfg.tool_sim.max_attempts + 1):
            msgs = self.prompts.render_messages(
                "tool_sim",
                tool=spec.model_dump(include={"name", "description", "input_schema", "output_schema"}),
                read_only=is_read_only(spec),
                arguments=arguments,
                state=view,
                trimmed=trimmed,
                fault_instruction=FAULTS[fault].instruction if fault else None,
                problem=problem,
                **example_names(view),
            )
            r = await self.client.structured(
                "tool_sim", msgs, sim_schema(spec, result, paths), name="tool_result", seed=seed + attempt
            )
            if not r.ok:
                problem, raw = r.error, r.raw
                if r.error_kind == "http" and result is not GENERIC_RESULT:
                    result = GENERIC_RESULT  # the server could not compile the output schema: validate it here instead
                    continue
                if r.error_kind not in ("parse", "schema"):  # the client already retried transport errors
                    raise SimulatorFailure(f"{spec.name}: {r.error}", raw)
                continue
            patch = r.data["patch"]
            if is_read_only(spec) and patch:  # the grammar forbids it, a server without grammar may not
                problem, raw = "the tool is read-only, so the patch must be []", r.content
                continue
            out_problem = output_problem(spec, r.data["result"])
            if out_problem:
                problem, raw = out_problem, r.content
                continue
            try:
                world.check(patch)
            except PatchRejected as exc:
                problem, raw = str(exc), r.content
                continue
            return CallOutcome(
                json.dumps(r.data["result"], ensure_ascii=False),
                True,
                "simulated",
                spec.tool_id,
                arguments,
                fault=fault,
                forced=forced,
                patch=patch,
                attempts=attempt,
            )
        raise SimulatorFailure(
            f"{spec.name}: no usable answer in {self.cfg.tool_sim.max_attempts} attempts; last: {problem}", raw
        )


def argument_problem(spec: ToolSpec, arguments: Any) -> str | None:
    """The validation error a server would report for these arguments, or None."""
    schema = spec.input_schema if isinstance(spec.input_schema, dict) else {}
    try:
        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(arguments))
    except (jsonschema.SchemaError, Unresolvable, RecursionError):
        # a schema the validator cannot use (bad, dangling or endless $ref): let through, as lenient servers do
        return None
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{where + ': ' if where else ''}{error.message[:300]}"


def output_problem(spec: ToolSpec, result: Any) -> str | None:
    if not isinstance(spec.output_schema, dict):
        return None
    try:
        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(spec.output_schema).iter_errors(result)
        )
    except (jsonschema.SchemaError, Unresolvable, RecursionError):
        return None
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"the result does not match the output schema at {where}: {error.message[:200]}"
