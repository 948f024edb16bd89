"""Evaluation: models under test play a run's held-out tasks in the same simulated worlds.

Held-out tasks are those of agents with no example in the training split of the dataset
the model learned from (the export's validation agents, plus agents whose episodes were
never kept). Each model is served as the agent policy (`llm.policy`) while the simulators
and the critic stay what the run used; every model gets the same tasks and seeds. Its
episodes and verdicts form their own run (`<run>-eval-<label>-<hash>`), resumable like any
other, and its figures (pass rate, pass^k, tool-call validity) are one `ModelEval` record
in the source run, so `worldsmith query "SELECT * FROM evals"` compares models.
"""

from worldsmith.evaluate.play import EvalModel, evaluate_models, held_out_tasks, model_scores, pass_hat_k

__all__ = ["EvalModel", "evaluate_models", "held_out_tasks", "model_scores", "pass_hat_k"]
