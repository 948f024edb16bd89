"""The agents stage: a system prompt and policies over each tool bundle."""

from worldsmith.agents.stage import STAGE

__all__ = ["STAGE"]
