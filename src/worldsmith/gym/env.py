"""worldsmith's tasks as an RL environment, Gymnasium-style.

`reset(task_id, seed)` opens an episode (the system prompt, the bundle's tools and the user's first
message); `step(message)` takes one assistant message from the policy under training, runs its tool
calls through the same executor and fault schedule as the rollouts stage (or lets the user simulator
answer a text reply) and says when the episode is over. The episode is the rollouts stage's own
(`EpisodeRun.take`): one turn logic, whoever samples the agent. At the end the judge decides and the
reward comes by component (`Verdict.reward`: verifiable, verifiable_fraction, rubric, format, budget).

The methods are coroutines (the simulators and the critic are model calls); `SyncToolEnv` wraps them
for a trainer that steps environments from plain code.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from worldsmith.config import JudgeConfig, PipelineConfig
from worldsmith.judge.calibration import read_calibration, trusted_difficulties
from worldsmith.judge.episode import judge_episode
from worldsmith.llm import LLMClient, Prompts
from worldsmith.mcp.executor import RealExecutor
from worldsmith.records import Agent, Reward, Task, ToolSpec, Trajectory, Verdict, World
from worldsmith.rollouts.episode import Episode, EpisodeRun
from worldsmith.rollouts.stage import episode_seed, trajectory_id_for
from worldsmith.store import RunStore
from worldsmith.worldmodel import packs
from worldsmith.worldmodel.toolset import ToolSet


@dataclass
class TaskSet:
    """The tasks of a run with what an episode of each needs: its agent, the agent's tools, the worlds."""

    tasks: dict[str, Task]
    agents: dict[str, Agent]
    tools: dict[str, ToolSpec]
    worlds: dict[str, World]
    run_seed: int = 0
    _toolsets: dict[str, ToolSet] = field(default_factory=dict, repr=False)

    calibration: dict[str, Any] | None = None  # the run's critic calibration (judge.calibration), when it has one

    @classmethod
    def from_run(cls, store: RunStore, run_seed: int = 0, packs_dir: str | Path | None = None) -> TaskSet:
        """The run's tasks; `packs_dir` (the config's worlds.packs_dir) locates the pack worlds' folders, which a
        run stores relative to it (without it, a pack world's actions cannot load)."""
        worlds = {w.world_id: w for w in store.read(World)}
        if packs_dir is not None:
            worlds = {k: packs.locate(w, packs_dir) for k, w in worlds.items()}
        return cls(
            {t.task_id: t for t in store.read(Task)},
            {a.agent_id: a for a in store.read(Agent)},
            {t.tool_id: t for t in store.read(ToolSpec)},
            worlds,
            run_seed,
            calibration=read_calibration(store.root),
        )

    def rubric_trusted(self, cfg: JudgeConfig) -> frozenset[str] | None:
        """The calibration gate of the judge stage: the difficulties whose rubric reward the critic has earned."""
        return trusted_difficulties(self.calibration, cfg.reward.rubric_min_kappa, cfg.reward.rubric_min_pairs)

    def toolset(self, agent: Agent) -> ToolSet:
        if agent.agent_id not in self._toolsets:
            self._toolsets[agent.agent_id] = ToolSet.build([self.tools[t] for t in agent.tool_ids if t in self.tools])
        return self._toolsets[agent.agent_id]

    def episode(self, task_id: str, sample: int = 0, seed: int | None = None) -> Episode:
        """The episode the rollouts stage would play for (task, sample): same id and, by default, same seed."""
        if task_id not in self.tasks:
            raise KeyError(f"no task {task_id!r} in this task set ({len(self.tasks)} tasks)")
        task = self.tasks[task_id]
        if task.agent_id not in self.agents:
            raise KeyError(f"task {task_id!r}: its agent {task.agent_id!r} is not in this task set")
        agent = self.agents[task.agent_id]
        return Episode(
            trajectory_id_for(task_id, sample, self.run_seed),
            task,
            agent,
            self.toolset(agent),
            sample,
            episode_seed(task_id, sample, self.run_seed) if seed is None else seed,
        )


class Observation(NamedTuple):
    messages: list[dict[str, Any]]  # the whole conversation so far, OpenAI format
    tools: list[dict[str, Any]]  # the bundle's tools, OpenAI function tools


class StepResult(NamedTuple):
    """Gymnasium's five: `terminated` when the episode ended on its own (the user stopped, or an error), `truncated`
    when a limit cut it (turns, tool calls, tokens). `reward` is 0 until the end; `info["reward"]` then holds the
    components, `info["verdict"]` the judge's verdict and `info["new_messages"]` what the environment added."""

    observation: Observation
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]


LIMITS = ("max_turns", "max_tool_calls", "max_tokens")


def as_assistant_message(message: dict[str, Any] | str, step: int) -> dict[str, Any]:
    """An OpenAI assistant message from a policy's output: text, or tool calls whose arguments may be a dict;
    a call without an id gets one."""
    if isinstance(message, str):
        return {"role": "assistant", "content": message}
    calls = []
    for i, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function", call)
        args = fn.get("arguments", {})
        calls.append(
            {
                "id": call.get("id") or f"call_{step}_{i}",
                "type": "function",
                "function": {
                    "name": fn.get("name", ""),
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
        )
    out: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if calls:
        out["tool_calls"] = calls
    return out


class ToolEnv:
    """One episode at a time over a `TaskSet`; the simulators (user, tools without code) and the critic are
    `client`'s roles, as in the pipeline."""

    def __init__(
        self,
        taskset: TaskSet,
        client: LLMClient,
        prompts: Prompts,
        cfg: PipelineConfig,
        real: RealExecutor | None = None,
    ):
        self.taskset, self.client, self.prompts, self.cfg, self.real = taskset, client, prompts, cfg, real
        self.run: EpisodeRun | None = None
        self.agent_tokens = 0
        self.verdict: Verdict | None = None

    async def reset(self, task_id: str, seed: int | None = None, sample: int = 0) -> tuple[Observation, dict]:
        """A new episode of `task_id` (seed: the rollouts stage's for this sample unless given)."""
        ep = self.taskset.episode(task_id, sample, seed)
        self.run = EpisodeRun(
            ep, self.client, self.prompts, self.cfg.rollouts, self.real, self.taskset.worlds, self.cfg.judge
        )
        self.agent_tokens, self.verdict = 0, None
        ended = await self.run.ends(self.run.reset())
        info = {
            "task_id": task_id,
            "trajectory_id": ep.trajectory_id,
            "seed": ep.seed,
            "difficulty": ep.task.difficulty,
        }
        if ended:  # the user simulator failed on the opening
            raise RuntimeError(f"task {task_id}: the episode could not open: {self.run.reason}")
        return self.observation(), info

    def observation(self) -> Observation:
        run = self._require()
        return Observation(list(run.messages), run.ep.toolset.tools)

    def _require(self) -> EpisodeRun:
        if self.run is None:
            raise RuntimeError("call reset(task_id) before step()")
        return self.run

    @property
    def done(self) -> bool:
        return self.verdict is not None

    async def step(self, message: dict[str, Any] | str, tokens: int | None = None) -> StepResult:
        """Takes the policy's assistant message (`tokens`: what it cost, for the budget; else ~4 characters a
        token) and makes the moves that follow it; at the episode's end, the judge's reward."""
        run = self._require()
        if self.done:
            raise RuntimeError("the episode is over: call reset() for another")
        msg = as_assistant_message(message, run.steps)
        self.agent_tokens += tokens if tokens is not None else max(1, len(json.dumps(msg)) // 4)
        before = len(run.messages)
        ended = await run.ends(run.take(msg))
        added = run.messages[before + 1 :] if len(run.messages) > before else []
        if not ended:
            return StepResult(self.observation(), 0.0, False, False, {"new_messages": added})
        reward = await self._judge()
        return StepResult(
            self.observation(), reward.total, run.status not in LIMITS, run.status in LIMITS, self._end_info(added)
        )

    async def finish(self, reply: str, tokens: int | None = None) -> StepResult:
        """Ends the episode at the policy's text reply, with no user turn after it, and judges it: for trainers
        whose rollout is one user turn (TRL's environments end at the first reply without a tool call). An
        episode already over returns its result again."""
        run = self._require()
        if self.done:
            reward = self.verdict.reward if self.verdict else None
            return StepResult(self.observation(), reward.total if reward else 0.0, True, False, self._end_info([]))
        msg = as_assistant_message(reply or "", run.steps)
        self.agent_tokens += tokens if tokens is not None else max(1, len(json.dumps(msg)) // 4)
        before = len(run.messages)
        run.steps += 1
        await run.ends(run.apply_agent(msg))  # an empty reply ends it as an error, like any other
        reward = await self._judge()
        return StepResult(
            self.observation(),
            reward.total,
            run.status not in LIMITS,
            run.status in LIMITS,
            self._end_info(run.messages[before + 1 :]),
        )

    def _end_info(self, added: list[dict[str, Any]]) -> dict[str, Any]:
        run = self._require()
        return {
            "new_messages": added,
            "status": run.status,
            "reason": run.reason,
            "reward": self.verdict.reward.model_dump() if self.verdict and self.verdict.reward else None,
            "verdict": self.verdict,
        }

    def trajectory(self) -> Trajectory:
        """The episode as the rollouts stage records it; the policy's tokens under the agent role."""
        run = self._require()
        traj = run.trajectory()
        agent = dict(traj.usage.get("agent") or {})
        agent["completion_tokens"] = agent.get("completion_tokens", 0) + self.agent_tokens
        agent["calls"] = agent.get("calls", 0) + run.steps
        traj.usage = {**traj.usage, "agent": agent}
        return traj

    async def _judge(self) -> Reward:
        """The judge's verdict, as the judge stage gives it: the same function, policy, critic seed (the run's) and
        calibration gate (the task set's run, where it has one)."""
        run = self._require()
        jcfg = self.cfg.judge
        self.verdict = await judge_episode(
            jcfg,
            run.ep.task,
            self.trajectory(),
            self.client,
            self.prompts,
            seed=self.cfg.run.seed,
            rubric_trusted=self.taskset.rubric_trusted(jcfg),
        )
        assert self.verdict.reward is not None
        return self.verdict.reward


class SyncToolEnv:
    """`ToolEnv` for synchronous callers: each call runs to completion on this object's own event loop."""

    def __init__(self, env: ToolEnv):
        self.env = env
        self.loop = asyncio.new_event_loop()

    def reset(self, task_id: str, seed: int | None = None, sample: int = 0) -> tuple[Observation, dict]:
        return self.loop.run_until_complete(self.env.reset(task_id, seed, sample))

    def step(self, message: dict[str, Any] | str, tokens: int | None = None) -> StepResult:
        return self.loop.run_until_complete(self.env.step(message, tokens))

    def finish(self, reply: str, tokens: int | None = None) -> StepResult:
        return self.loop.run_until_complete(self.env.finish(reply, tokens))

    def trajectory(self) -> Trajectory:
        return self.env.trajectory()

    def close(self) -> None:
        self.loop.close()
