"""The smoke stage: one structured record and one tool call per request, to prove the wiring."""

from worldsmith.smoke.stage import STAGE

__all__ = ["STAGE"]
