"""Agents, tasks and rubrics: system prompts over tool bundles, and rubric-checked tasks."""
