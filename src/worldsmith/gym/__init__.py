"""worldsmith's worlds as an RL environment: `ToolEnv` (reset a task, step assistant messages, the judge's
reward by component at the end) over a run's `TaskSet`."""

from worldsmith.gym.env import LIMITS, Observation, StepResult, SyncToolEnv, TaskSet, ToolEnv, as_assistant_message

__all__ = ["LIMITS", "Observation", "StepResult", "SyncToolEnv", "TaskSet", "ToolEnv", "as_assistant_message"]
