"""The tasks stage: persona, goal, initial world state and rubric per agent and difficulty, validated."""

from worldsmith.tasks.stage import STAGE

__all__ = ["STAGE"]
