"""The judge stage: deterministic rubric checks and hack checks first, an LLM critic second,
and the keep/drop policy from pipeline.yaml."""

from worldsmith.judge.stage import STAGE

__all__ = ["STAGE"]
