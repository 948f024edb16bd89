"""The export stage: the SFT dataset from kept trajectories (Parquet, JSONL, OpenAI JSONL,
dataset card). Its declaration: `worldsmith.export.stage.STAGE`."""
