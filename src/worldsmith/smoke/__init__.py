"""The smoke stage: one structured record and one tool call per request, to prove the wiring.
Its declaration: `worldsmith.smoke.stage.STAGE`."""
