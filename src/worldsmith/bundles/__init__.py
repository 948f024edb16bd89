"""The bundles stage: a tool graph and the tool bundles sampled from it."""

from worldsmith.bundles.stage import STAGE

__all__ = ["STAGE"]
