"""The rollouts stage: an agent policy talks with a simulated user and calls tools that act
on a world state, with controlled faults; every episode is recorded.
Its declaration: `worldsmith.rollouts.stage.STAGE`."""
