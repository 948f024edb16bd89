"""The critic calibrated on the verifiable reward: pairs of episodes of one task (one earned it, one did not), the
pairwise critic's preference against the checker's, Cohen's kappa per difficulty, and the rubric reward refused
where the critic does not agree enough."""

from __future__ import annotations

import asyncio

from test_rollouts import PROMPTS, ScriptedClient

from worldsmith.config import JudgeConfig
from worldsmith.judge.calibration import (
    calibrate,
    calibration_pairs,
    cohen_kappa,
    read_calibration,
    trusted_difficulties,
    write_calibration,
)
from worldsmith.judge.episode import decide
from worldsmith.records import CriticReport, Reward, Task, Trajectory, Verdict


def test_cohen_kappa_scores_a_position_bias_zero_and_agreement_one():
    truth = ["A", "B", "A", "B"]
    assert cohen_kappa(truth, ["A", "B", "A", "B"]) == 1.0
    assert cohen_kappa(truth, ["A", "A", "A", "A"]) == 0.0  # always the first: half right, nothing beyond chance
    assert cohen_kappa(truth, ["B", "A", "B", "A"]) == -1.0
    assert cohen_kappa(truth, ["tie"] * 4) == 0.0 and cohen_kappa([], []) is None


def episode(tid: str, task_id: str, won: bool, difficulty: str) -> tuple[Task, Trajectory, Verdict]:
    task = Task.model_construct(task_id=task_id, difficulty=difficulty, user_goal=None)
    traj = Trajectory.model_construct(trajectory_id=tid, task_id=task_id, messages=[], world_states=None)
    v = Verdict(trajectory_id=tid, task_id=task_id, agent_id="a", criteria=[], passed=won)
    v.reward = Reward(verifiable=float(won), verifiable_fraction=float(won), format=1, budget=0, total=float(won))
    return task, traj, v


def runs():
    rows = [
        episode(f"{d}-{k}-{w}", f"{d}-{k}", w, d)
        for d in ("single_call", "multi_call")
        for k in range(3)
        for w in (True, False)
    ]
    rows.append(episode("lonely", "single_call-x", True, "single_call"))  # no episode without the reward: no pair
    tasks = {t.task_id: t for t, _, _ in rows}
    return tasks, [t for _, t, _ in rows], [v for _, _, v in rows]


def test_pairs_hold_one_winner_and_one_loser_shown_first_and_second_in_turn():
    tasks, trajs, verdicts = runs()
    pairs = calibration_pairs(tasks, trajs, verdicts)
    assert len(pairs) == 6 and all(p.a.task_id == p.b.task_id for p in pairs)
    assert [p.truth for p in pairs] == ["A", "B"] * 3
    for p in pairs:
        winner = p.a if p.truth == "A" else p.b
        assert winner.trajectory_id.endswith("-True")


def test_a_critic_that_agrees_on_one_difficulty_keeps_its_rubric_reward_there_only(tmp_path, monkeypatch):
    import worldsmith.judge.calibration as calibration

    tasks, trajs, verdicts = runs()
    pairs = calibration_pairs(tasks, trajs, verdicts)

    async def critic(client, prompts, task, traj, seed):  # sees the truth on single calls, passes all on multi calls
        won = traj.trajectory_id.endswith("-True")
        return CriticReport(ok=True, score=(9 if won else 2) if task.difficulty == "single_call" else 9, rubrics={})

    monkeypatch.setattr(calibration, "critique", critic)
    figures = asyncio.run(calibrate(ScriptedClient(), PROMPTS, pairs, seed=0))
    assert figures["single_call"]["kappa"] == 1.0 and figures["multi_call"]["kappa"] == 0.0
    assert figures["all"]["pairs"] == 6
    write_calibration(tmp_path, figures, "scripted")
    trusted = trusted_difficulties(read_calibration(tmp_path), 0.4)
    assert trusted == {"single_call"}
    assert trusted_difficulties(None, 0.4) is None and trusted_difficulties(read_calibration(tmp_path), None) is None
    # the judge: the critic's score counts in the reward on single calls, is refused on multi calls
    from scripted_worlds import cancel_task
    from test_judge import traj

    cfg = JudgeConfig(critic=True, min_critic_score=0, require_critic_rubrics=False, require_judge_criteria=False)
    report = CriticReport(ok=True, score=8, rubrics={})
    good = traj()
    for difficulty, kept in (("single_call", 0.8), ("multi_call", None)):
        task = cancel_task().model_copy(update={"difficulty": difficulty})
        assert decide(cfg, task, good, report, trusted).reward.rubric == kept, difficulty
        assert decide(cfg, task, good, report, None).reward.rubric == 0.8  # no calibration: nothing refused


def test_a_kappa_on_too_few_judged_pairs_is_not_trusted():
    """One judged pair that agreed scores kappa 1.0: the default refuses a difficulty until it has enough pairs."""
    from worldsmith.config import RewardConfig

    calibration = {
        "by_difficulty": {
            "single_call": {"pairs": 1, "kappa": 1.0},  # one lucky pair
            "multi_call": {"pairs": 12, "kappa": 0.6},
            "refusal": {"pairs": 12, "kappa": 0.2},
            "all": {"pairs": 25, "kappa": 0.5},
        }
    }
    cfg = RewardConfig()
    assert cfg.rubric_min_pairs == 10
    assert trusted_difficulties(calibration, cfg.rubric_min_kappa, cfg.rubric_min_pairs) == {"multi_call"}
    assert trusted_difficulties(calibration, 0.4, 1) == {"single_call", "multi_call"}


def test_the_pairwise_critic_prompt_renders_both_episodes_and_the_rubrics():
    from scripted_worlds import cancel_task
    from test_judge import traj

    from worldsmith.judge.critic import compare

    seen = []

    def reply(messages):
        seen.append(messages[-1]["content"])
        return {"rubrics": {}, "preferred": "B", "reason": "B cancelled the order."}

    task = cancel_task()
    client = ScriptedClient(critic=reply)
    got = asyncio.run(compare(client, PROMPTS, task, traj(), traj(), seed=1))
    assert got.ok and got.preferred == "B"
    text = seen[0]
    assert "Conversation A:" in text and "Conversation B:" in text and "clarity_relevance" in text
    assert task.user_goal.request in text


def test_an_unusable_critic_answer_leaves_the_pair_unjudged():
    from scripted_worlds import cancel_task
    from test_judge import traj

    from worldsmith.judge.calibration import Pair
    from worldsmith.llm.client import LLMResult

    task, t = cancel_task(), traj()
    pairs = [Pair(task, t, t, "A"), Pair(task, t, t, "B")]
    bad = LLMResult(ok=False, role="critic", model="m", endpoint="e", error_kind="schema", error="no")
    figures = asyncio.run(calibrate(ScriptedClient(critic=lambda m: bad), PROMPTS, pairs, seed=0))
    assert figures[task.difficulty]["pairs"] == 0 and figures[task.difficulty]["unjudged"] == 2


def test_verdicts_judged_before_rewards_are_paired_by_their_checks():
    """A run judged before verdicts kept a reward: the verifiable part is worked out again from the checks."""
    from scripted_worlds import cancel_task
    from test_judge import GOOD_SIM, traj

    task = cancel_task()
    good = traj().model_copy(update={"trajectory_id": "t-good"})
    lazy = traj(  # looks the order up and says it is done: the state check fails
        agent=[[("get_order", {"order_id": "o-1001"})], "Order o-1001 is cancelled."], sim=GOOD_SIM[:1]
    ).model_copy(update={"trajectory_id": "t-lazy"})
    cfg = JudgeConfig(critic=False, require_judge_criteria=False)
    verdicts = [decide(cfg, task, t, None).model_copy(update={"reward": None}) for t in (good, lazy)]
    (pair,) = calibration_pairs({task.task_id: task}, [good, lazy], verdicts, cfg=cfg)
    assert pair.truth == "A" and pair.a.trajectory_id == "t-good" and pair.b.trajectory_id == "t-lazy"
