"""The judge: deterministic rubric checks and hack checks first, an LLM critic second, and
the keep/drop policy from pipeline.yaml."""
