"""The agents stage: a system prompt and policies over each tool bundle.
Its declaration: `worldsmith.agents.stage.STAGE`."""
