"""The tasks stage: persona, goal, initial world state and rubric per agent and difficulty, validated.
Its declaration: `worldsmith.tasks.stage.STAGE`."""
