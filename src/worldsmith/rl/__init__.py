"""`worldsmith rl`: policy optimisation on the run's tasks (Kimi k1.5's objective, K2.5's log-ratio mask, the
pass@k = 0 curriculum), the policy served between rounds; see `worldsmith.rl.loop`."""

from worldsmith.rl.loop import RLResult, run_rl

__all__ = ["RLResult", "run_rl"]
