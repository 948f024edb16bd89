"""The worlds stage: application domains and a world schema per domain.
Its declaration: `worldsmith.worlds.stage.STAGE`."""
