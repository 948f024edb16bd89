"""The rollouts stage: an agent policy talks with a simulated user and calls tools that act
on a world state, with controlled faults; every episode is recorded."""

from worldsmith.rollouts.stage import STAGE

__all__ = ["STAGE"]
