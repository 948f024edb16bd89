"""The world of one episode: a JSON document changed only by JSON Patches (RFC 6902).

Every accepted patch is recorded, so the state after any call is `replay(initial, patches[:k])`.
A patch is tried on a copy first; one that does not apply or leaves the state invalid is
refused with the reason and the state is untouched.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonpatch
import jsonpointer

from worldsmith.records import PatchEntry, WorldStates


class PatchRejected(ValueError):
    """A patch that cannot be applied, or whose result is not a valid world state."""


def state_problem(before: dict[str, Any], after: Any, max_bytes: int) -> str | None:
    """Why `after` is not a valid successor of `before`, or None.

    Valid: still a JSON object; every top-level collection keeps its JSON type (a list of
    records stays a list); serialisable and under the size limit.
    """
    if not isinstance(after, dict):
        return f"the state must stay a JSON object, the patch made it a {type(after).__name__}"
    for key, value in before.items():
        if key in after and type(after[key]) is not type(value):
            return f"/{key} was a {_kind(value)} and became a {_kind(after[key])}"
    try:
        size = len(json.dumps(after))
    except (TypeError, ValueError) as exc:
        return f"the state is not JSON: {exc}"
    if size > max_bytes:
        return f"the state would grow to {size} bytes, over the limit of {max_bytes}"
    return None


def _kind(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", int: "number", float: "number"}.get(
        type(value), "null"
    )


def apply_patch(state: dict[str, Any], patch: list[dict[str, Any]], max_bytes: int = 1 << 20) -> dict[str, Any]:
    """The new state (a new object; `state` is not changed), or PatchRejected with the reason."""
    if not patch:
        return state
    for i, op in enumerate(patch):
        if op.get("path") == "" and op.get("op") in ("remove", "replace", "move"):
            raise PatchRejected(f"operation {i}: {op.get('op')} of the whole state is not allowed")
    try:
        new = jsonpatch.JsonPatch(patch).apply(copy.deepcopy(state))
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise PatchRejected(f"the patch does not apply: {exc}") from None
    except (TypeError, KeyError, IndexError, ValueError) as exc:  # malformed operations
        raise PatchRejected(f"malformed patch: {exc.__class__.__name__}: {exc}") from None
    problem = state_problem(state, new, max_bytes)
    if problem:
        raise PatchRejected(problem)
    return new


def replay(initial: dict[str, Any], patches: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """The state after applying `patches` in order to `initial`."""
    state = copy.deepcopy(initial)
    for patch in patches:
        state = jsonpatch.JsonPatch(patch).apply(state) if patch else state
    return state


class World:
    def __init__(self, initial: dict[str, Any], max_bytes: int = 65536):
        self.initial = copy.deepcopy(initial)
        self.state = copy.deepcopy(initial)
        self.max_bytes = max_bytes
        self.patches: list[PatchEntry] = []

    def check(self, patch: list[dict[str, Any]]) -> dict[str, Any]:
        """The state `patch` would give (raises PatchRejected); nothing is changed."""
        return apply_patch(self.state, patch, self.max_bytes)

    def commit(self, patch: list[dict[str, Any]], call_id: str, tool: str) -> None:
        self.state = self.check(patch)
        self.patches.append(PatchEntry(call_id=call_id, tool=tool, patch=patch))

    def record(self) -> WorldStates:
        return WorldStates(initial=self.initial, final=self.state, patches=self.patches)
