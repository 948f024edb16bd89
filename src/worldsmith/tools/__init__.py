"""The tools stage: crawled snapshot + evolved tools, validated and de-duplicated."""

from worldsmith.tools.stage import STAGE

__all__ = ["STAGE"]
