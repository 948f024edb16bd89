"""Coding worlds as an RL environment (issue 52), the shape of `ToolEnv` (gym/env.py) over a repository world:
`reset(task_id)` opens a coding episode (the system prompt, the coding tools, the user's bug report) on a fresh
copy of the buggy repository; `step(message)` takes the policy's assistant message and runs its tool calls in
the sandbox (the rollouts' own `EpisodeRun` with `CodingRunner`); the episode ends at the policy's text reply,
and the patch it left is judged by execution (`coding.verify.judge`). The reward is Kimi-Dev's: 1.0 when the
patch resolves the task, else 0.0; `info["reward"]` holds the components (tests fixed, tests kept, resolved).
No model is needed: the policy under training writes every assistant message, the episode has no user turn after
the report and no tool is simulated."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldsmith.coding.episodes import CodingRunner, coding_agent, coding_toolspecs, episode_task
from worldsmith.coding.repos import fetch, load_repos
from worldsmith.coding.tools import Workspace
from worldsmith.coding.verify import judge
from worldsmith.config import PipelineConfig, RoleConfig
from worldsmith.gym.env import LIMITS, Observation, StepResult, as_assistant_message
from worldsmith.llm import Prompts
from worldsmith.records import CodingJudgement, CodingTask, Trajectory
from worldsmith.rollouts.coding import coding_rollouts_config, episode_seed, trajectory_id_for
from worldsmith.rollouts.episode import Episode, EpisodeRun
from worldsmith.store import RunStore
from worldsmith.worldmodel.toolset import ToolSet


class _PolicyOnly:
    """The client of an episode whose every assistant message comes from outside: no model role may be called."""

    def __init__(self) -> None:
        self.usage = None

    def metered(self, usage):
        return self

    def role(self, name: str) -> RoleConfig:
        return RoleConfig()

    def model_for(self, role: str) -> str:
        return "policy"

    async def tool_step(self, *args, **kwargs):
        raise RuntimeError("a coding environment samples no model: the policy's messages come through step()")

    async def structured(self, *args, **kwargs):
        raise RuntimeError("a coding environment calls no simulator")


@dataclass
class CodingTaskSet:
    """Coding tasks with what an episode of each needs: the pristine tree of its repository."""

    tasks: dict[str, CodingTask]
    pristine: dict[str, Path]  # "<repo>-<version>" -> the cached pristine tree
    work: Path  # where the episodes' and the judge's sandbox folders go
    run_seed: int = 0
    backend: str = "auto"
    _roots: dict[str, Path] = field(default_factory=dict, repr=False)

    @classmethod
    def from_run(cls, store: RunStore, cfg: PipelineConfig, root: Path) -> CodingTaskSet:
        """The run's coding tasks (the repos stage's), their repositories fetched from the cache."""
        tasks = {t.task_id: t for t in store.read(CodingTask)}
        repos_file = root / cfg.coding.repos_file
        cache = root / cfg.coding.cache_dir
        entries = {e.name: e for e in load_repos(repos_file)}
        pristine = {}
        for name, version in sorted({(t.repo, t.version) for t in tasks.values()}):
            pristine[f"{name}-{version}"] = fetch(entries[name], cache, repos_file.parent).root
        return cls(tasks, pristine, cache / "work", cfg.run.seed, cfg.coding.backend)

    def root_of(self, task: CodingTask) -> Path:
        return self.pristine[f"{task.repo}-{task.version}"]


class CodingEnv:
    """One coding episode at a time over a `CodingTaskSet`."""

    def __init__(self, taskset: CodingTaskSet, prompts: Prompts, cfg: PipelineConfig):
        self.taskset, self.prompts, self.cfg = taskset, prompts, cfg
        self.rollouts = coding_rollouts_config(cfg.rollouts, cfg.coding.max_tool_calls)
        self.run: EpisodeRun | None = None
        self.workspace: Workspace | None = None
        self.task: CodingTask | None = None
        self.judgement: CodingJudgement | None = None
        self.patch = ""
        self.agent_tokens = 0

    async def reset(self, task_id: str, seed: int | None = None, sample: int = 0) -> tuple[Observation, dict]:
        if task_id not in self.taskset.tasks:
            raise KeyError(f"no coding task {task_id!r} in this task set ({len(self.taskset.tasks)} tasks)")
        self.close()
        task = self.taskset.tasks[task_id]
        tools = coding_toolspecs()
        agent = coding_agent(task.repo, task.version, self.prompts, tools, task.family)
        seed = episode_seed(task_id, sample, self.taskset.run_seed) if seed is None else seed
        ep = Episode(
            trajectory_id_for(task_id, sample, self.taskset.run_seed),
            episode_task(task, agent),
            agent,
            ToolSet.build(tools),
            sample,
            seed,
        )
        self.workspace = await asyncio.to_thread(
            Workspace, task, self.taskset.root_of(task), self.taskset.work, self.taskset.backend
        )
        self.run = EpisodeRun(ep, _PolicyOnly(), self.prompts, self.rollouts)
        self.run.runner = CodingRunner(self.workspace)
        self.run.grounded = False
        self.task, self.judgement, self.patch, self.agent_tokens = task, None, "", 0
        await self.run.ends(self.run.reset())
        info = {"task_id": task_id, "trajectory_id": ep.trajectory_id, "seed": seed, "family": task.family}
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
        return self.judgement is not None

    async def step(self, message: dict[str, Any] | str, tokens: int | None = None) -> StepResult:
        """The policy's assistant message: tool calls run in the sandbox (the episode goes on), a text reply ends
        it and the patch is judged by execution."""
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
        return await self._end(added)

    async def finish(self, reply: str, tokens: int | None = None) -> StepResult:
        """Ends the episode at the policy's text reply and judges its patch."""
        self._require()
        if self.done:
            return StepResult(self.observation(), float(self.judgement.resolved), True, False, self._info([]))
        return await self.step(reply or "", tokens)

    async def _end(self, added: list[dict[str, Any]]) -> StepResult:
        run = self._require()
        assert self.workspace is not None and self.task is not None
        self.patch = self.workspace.patch()
        self.judgement = await asyncio.to_thread(
            judge, self.task, self.patch, self.taskset.root_of(self.task), self.taskset.work, self.taskset.backend
        )
        last = run.messages[-1] if run.messages else {}
        replied = last.get("role") == "assistant" and not last.get("tool_calls")
        truncated = run.status in LIMITS and not (run.status == "max_turns" and replied)
        reward = float(self.judgement.resolved)
        return StepResult(self.observation(), reward, not truncated, truncated, self._info(added))

    def _info(self, added: list[dict[str, Any]]) -> dict[str, Any]:
        run = self._require()
        return {
            "new_messages": added,
            "status": run.status,
            "reason": run.reason,
            "patch": self.patch,
            "reward": self.judgement.reward if self.judgement else None,
            "judgement": self.judgement,
        }

    def trajectory(self) -> Trajectory:
        run = self._require()
        traj = run.trajectory()
        traj.usage = {**traj.usage, "agent": {"completion_tokens": self.agent_tokens, "calls": run.steps}}
        return traj

    def close(self) -> None:
        if self.workspace is not None:
            self.workspace.close()
            self.workspace = None


class SyncCodingEnv:
    """`CodingEnv` for synchronous callers: each call runs to completion on this object's own event loop."""

    def __init__(self, env: CodingEnv):
        self.env = env
        self.loop = asyncio.new_event_loop()

    def reset(self, task_id: str, seed: int | None = None, sample: int = 0) -> tuple[Observation, dict]:
        return self.loop.run_until_complete(self.env.reset(task_id, seed, sample))

    def step(self, message: dict[str, Any] | str, tokens: int | None = None) -> StepResult:
        return self.loop.run_until_complete(self.env.step(message, tokens))

    def finish(self, reply: str, tokens: int | None = None) -> StepResult:
        return self.loop.run_until_complete(self.env.finish(reply, tokens))

    def close(self) -> None:
        self.env.close()
        self.loop.close()


REWARD_COMPONENTS = ("resolved", "tests_fixed", "tests_kept")


class CodingEnvironment:
    """Base of the TRL environment class of coding worlds (`TRLCodingTasks.environment_factories`): TRL calls
    `reset(**row)` at each rollout's start and a tool method per call (the six coding tools, run in the sandbox);
    the reward functions end the episode at the final reply and read the execution's reward."""

    _tasks: TRLCodingTasks

    def __init__(self) -> None:
        t = self._tasks
        self._env = SyncCodingEnv(CodingEnv(t.taskset, t.prompts, t.cfg))

    def reset(self, **row: Any) -> None:
        self._env.reset(row["task_id"], sample=int(row.get("sample", 0)))
        return None  # the prompt (system prompt and bug report) is the dataset row's own

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self._env.env.done:
            return "The conversation is over."
        out = self._env.step({"tool_calls": [{"function": {"name": name, "arguments": arguments}}]})
        replies = [m["content"] for m in out.info["new_messages"] if m.get("role") == "tool"]
        return replies[-1] if replies else f"(not run: the episode ended: {out.info.get('status')})"

    def _reward(self, reply: str) -> dict[str, Any]:
        """Ends the episode at `reply` (once) and returns the reward components."""
        return self._env.finish(reply).info["reward"] or {}


class TRLCodingTasks:
    """Coding tasks as TRL's `GRPOTrainer` wants them (environment mode): a dataset of prompts, one environment
    class whose methods are the coding tools, and a reward function per component (resolved, tests fixed, tests
    kept), all from the execution's judgement.

        tasks = TRLCodingTasks(CodingTaskSet.from_run(store, cfg, root), cfg)
        GRPOTrainer(model, train_dataset=tasks.dataset(), environment_factory=tasks.environment_factories(),
                    reward_funcs=tasks.reward_funcs(), ...)
    """

    ENVIRONMENT = "coding"

    def __init__(self, taskset: CodingTaskSet, cfg: PipelineConfig, prompts: Prompts | None = None):
        self.taskset, self.cfg = taskset, cfg
        self.prompts = prompts or Prompts(Path(cfg.run.prompts_dir))

    def dataset(self, task_ids: list[str] | None = None, samples: int = 1):
        """A Hugging Face dataset: per task (and sample), `prompt` (the coding agent's system prompt, the bug
        report), `environment`, `task_id`, `sample`, `family`; held-out repositories' tasks left out unless named."""
        import datasets

        tools = coding_toolspecs()
        rows = []
        ids = task_ids or sorted(t for t, task in self.taskset.tasks.items() if not task.held_out)
        for tid in ids:
            task = self.taskset.tasks[tid]
            agent = coding_agent(task.repo, task.version, self.prompts, tools, task.family)
            for k in range(samples):
                rows.append(
                    {
                        "prompt": [
                            {"role": "system", "content": agent.system_prompt},
                            {"role": "user", "content": task.statement},
                        ],
                        "environment": self.ENVIRONMENT,
                        "task_id": tid,
                        "sample": k,
                        "family": task.family,
                    }
                )
        return datasets.Dataset.from_list(rows)

    def environment_factories(self) -> dict[str, type[CodingEnvironment]]:
        from worldsmith.coding.tools import openai_tools
        from worldsmith.gym.trl import tool_method

        members: dict[str, Any] = {"_tasks": self}
        for tool in openai_tools():
            members[tool["function"]["name"]] = tool_method(tool)
        return {self.ENVIRONMENT: type("CodingToolsEnvironment", (CodingEnvironment,), members)}

    def reward_funcs(self) -> list:
        """A reward function per component; the first to run on a rollout ends its episode at the completion's
        last reply and judges the patch by execution."""
        from worldsmith.gym.trl import _last_reply

        def component(name: str):
            def reward(completions: list, environments: list, **kwargs: Any) -> list[float | None]:
                return [env._reward(_last_reply(c)).get(name) for c, env in zip(completions, environments, strict=True)]

            reward.__name__ = f"worldsmith_coding_{name}"
            return reward

        return [component(c) for c in REWARD_COMPONENTS]
