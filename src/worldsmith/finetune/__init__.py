"""Fine-tuning: Muon (with AdamW for the parameters Muon is not for) on the exported SFT data."""
