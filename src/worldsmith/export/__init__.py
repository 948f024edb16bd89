"""Export: the SFT dataset from kept trajectories (Parquet, JSONL, OpenAI JSONL, dataset
card) and the run's HTML report."""
