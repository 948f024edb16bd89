"""The judge stage: deterministic rubric checks and hack checks first, an LLM critic second,
and the keep/drop policy from pipeline.yaml. Its declaration: `worldsmith.judge.stage.STAGE`."""
