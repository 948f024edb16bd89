"""Fixtures for a pack's own tests (`worlds/<name>/test_<name>.py`, collected by pytest from each pack
folder: a new pack brings its tests with it). `pack` is the pack of the test's folder, loaded as a run
loads it; `kit` seeds its world and calls its actions through the executor, checking that the state
passed in comes back untouched."""

from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from worldsmith.worldmodel.execute import Execution
from worldsmith.worldmodel.packs import Pack, execute_call, load_pack, seed_world

TODAY = "2025-06-01"  # the day the tests' hand-written dates are relative to


class Kit:
    TODAY = TODAY
    SEEDS = range(8)  # the seeds a seeder's invariants are checked on

    @staticmethod
    def seeded(pack: Pack, seed: int = 3) -> dict[str, Any]:
        return seed_world(pack.world, seed, pack.records)

    @staticmethod
    def call(pack: Pack, operation: str, state: dict[str, Any], **arguments: Any) -> Execution:
        """Run an operation tool through the executor; the state must come back untouched."""
        tool = next(t for t in pack.tools if t.binding is not None and t.binding.operation == operation)
        before = copy.deepcopy(state)
        result = execute_call(pack.world, tool.binding, state, arguments)
        assert state == before
        if not result.ok:
            assert result.patch == []
        return result

    @classmethod
    def refused(cls, pack: Pack, operation: str, state: dict[str, Any], code: str, **arguments: Any) -> str:
        """The message of a call that must be refused with `code`."""
        result = cls.call(pack, operation, state, **arguments)
        assert not result.ok and result.error is not None and result.error[0] == code, result.error
        return result.error[1]

    @staticmethod
    def put(state: dict[str, Any], collection: str, i: int, **fields: Any) -> dict[str, Any]:
        state[collection][i].update(fields)
        return state[collection][i]

    @staticmethod
    def next_id(state: dict[str, Any], collection: str, prefix: str) -> str:
        return f"{prefix}-{max(int(next(iter(r.values())).rsplit('-', 1)[1]) for r in state[collection]) + 1}"

    @staticmethod
    def day(text: str) -> dt.date:
        return dt.date.fromisoformat(text[:10])


@pytest.fixture(scope="module")
def pack(request: pytest.FixtureRequest) -> Pack:
    return load_pack(Path(request.path).parent, TODAY)


@pytest.fixture(scope="session")
def kit() -> Kit:
    return Kit()
