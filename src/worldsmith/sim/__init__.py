"""Rollouts: an agent policy talks with a simulated user and calls tools that a simulator
executes against a JSON world state, with controlled faults; every episode is recorded."""
