"""Controlled stochasticity: a seeded RNG decides, call by call, whether a fault is injected.

One uniform draw per tool call, whatever the tool, so the schedule is a function of the
seed and the call sequence alone (re-running an episode with its seed repeats it).
Network faults (transient error, timeout, rate limit) hit only open-world tools; data
faults (partial or empty result) only read-only tools; edge-case data any simulated tool.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from worldsmith.config import FaultsConfig
from worldsmith.records import ToolAnnotations
from worldsmith.vocab import FAULT_KINDS, FAULTS, FORCED_FAULT


@dataclass(frozen=True)
class ToolTraits:
    open_world: bool
    read_only: bool
    simulated: bool  # False when executed for real or by code: no edge-case data is asked for
    shapes_lists: bool = False  # executed by code and returns a list: partial and empty results cut it


def traits(hints: ToolAnnotations, simulated: bool = True, shapes_lists: bool = False) -> ToolTraits:
    return ToolTraits(bool(hints.openWorldHint), bool(hints.readOnlyHint), simulated, shapes_lists)


class FaultInjector:
    def __init__(self, cfg: FaultsConfig, seed: int, force_first: bool = False):
        self.cfg = cfg
        self.rng = random.Random(seed)
        self.force_first = force_first and cfg.force_on_error_recovery  # part of the task, not of the random faults
        self.calls = 0

    def eligible(self, kind: str, t: ToolTraits) -> bool:
        family = FAULTS[kind].family
        if family == "network":
            return t.open_world
        if family == "data":
            return t.read_only and (t.simulated or t.shapes_lists)
        return t.simulated  # edge

    def draw(self, t: ToolTraits) -> tuple[str | None, bool]:
        """(fault kind or None, forced) for the next call."""
        u = self.rng.random()  # always drawn: the schedule does not depend on which tools were called
        self.calls += 1
        if self.force_first and self.calls == 1:
            return FORCED_FAULT, True
        if not self.cfg.enabled:
            return None, False
        rates = self.cfg.rates.model_dump()
        edge = 0.0
        for kind in FAULT_KINDS:
            if not self.eligible(kind, t):
                continue
            edge += rates[kind]
            if u < edge:
                return kind, False
        return None, False
