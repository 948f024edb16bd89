"""The export stage: the SFT dataset from kept trajectories (Parquet, JSONL, OpenAI JSONL,
dataset card)."""

from worldsmith.export.stage import STAGE

__all__ = ["STAGE"]
