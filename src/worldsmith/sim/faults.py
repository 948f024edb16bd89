"""Controlled stochasticity: a seeded RNG decides, call by call, whether a fault is injected.

One uniform draw per tool call, whatever the tool, so the schedule is a function of the
seed and the call sequence alone (re-running an episode with its seed repeats it).
Network faults (transient error, timeout, rate limit) hit only open-world tools; data
faults (partial or empty result) only read-only tools; edge-case data any simulated tool.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from worldsmith.config import FaultsConfig

NETWORK_FAULTS = ("transient_error", "timeout", "rate_limit")
DATA_FAULTS = ("partial_result", "empty_result")
FAULT_KINDS = (*NETWORK_FAULTS, *DATA_FAULTS, "edge_case")

# what the agent sees for a network fault: the error a real service would give
NETWORK_ERRORS = {
    "transient_error": ("unavailable", "503 Service Unavailable: the upstream service failed to answer. Try again."),
    "timeout": ("timeout", "The request timed out after 30 seconds without a response."),
    "rate_limit": ("rate_limited", "429 Too Many Requests: rate limit exceeded, retry after 2 seconds."),
}


def error_content(code: str, message: str) -> str:
    """A tool reply that reports an error, as JSON text (what the agent reads)."""
    return json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False)


@dataclass(frozen=True)
class ToolTraits:
    open_world: bool
    read_only: bool
    simulated: bool  # False when executed for real (data faults are then left out)


def traits(annotations: dict[str, Any], simulated: bool = True) -> ToolTraits:
    return ToolTraits(bool(annotations.get("openWorldHint")), bool(annotations.get("readOnlyHint")), simulated)


class FaultInjector:
    def __init__(self, cfg: FaultsConfig, seed: int, force_first: bool = False):
        self.cfg = cfg
        self.rng = random.Random(seed)
        self.force_first = force_first and cfg.force_on_error_recovery  # part of the task, not of the random faults
        self.calls = 0

    def eligible(self, kind: str, t: ToolTraits) -> bool:
        if kind in NETWORK_FAULTS:
            return t.open_world
        if kind in DATA_FAULTS:
            return t.read_only and t.simulated
        return t.simulated  # edge_case

    def draw(self, t: ToolTraits) -> tuple[str | None, bool]:
        """(fault kind or None, forced) for the next call."""
        u = self.rng.random()  # always drawn: the schedule does not depend on which tools were called
        self.calls += 1
        if self.force_first and self.calls == 1:
            return "transient_error", True
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
