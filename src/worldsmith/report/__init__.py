"""The report stage: one HTML page per run with the yield funnel and plots."""

from worldsmith.report.stage import STAGE

__all__ = ["STAGE"]
