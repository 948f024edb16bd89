"""worldsmith's tasks for TRL's `GRPOTrainer` in its environment mode (`environment_factory`).

TRL exposes an environment's public methods as the tools of a prompt and calls them itself, one call at a
time; a rollout is one user turn, ending at the first reply without a tool call. So each agent (a bundle of
tools) becomes an environment class whose methods are its tools, each call running through `ToolEnv` on
the task's seeded world (the same executor, fault schedule and judge as the pipeline); the final reply is
handed over by the reward functions, which end the episode there and read the judge's reward by component.

    from trl import GRPOConfig, GRPOTrainer
    from worldsmith.gym.trl import TRLTasks

    tasks = TRLTasks.from_run("data", "worldsmith-<hash>", cfg)      # or TRLTasks(taskset, cfg)
    trainer = GRPOTrainer(
        model, args=GRPOConfig(..., reward_weights=tasks.reward_weights),
        train_dataset=tasks.dataset(), environment_factory=tasks.environment_factories(),
        reward_funcs=tasks.reward_funcs(), processing_class=tasks.tokenizer(tokenizer),
    )
"""

from __future__ import annotations

import copy
import inspect
import keyword
import re
from collections.abc import Callable
from typing import Any

from worldsmith.config import PipelineConfig
from worldsmith.gym.env import SyncToolEnv, TaskSet, ToolEnv
from worldsmith.llm import Prompts, UsageMeter
from worldsmith.records import Agent

# the reward components TRL logs as separate reward functions, weighted by judge.reward
COMPONENTS = ("verifiable", "verifiable_fraction", "rubric", "format", "budget")
JSON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}


class NoModelError(RuntimeError):
    """An episode needed a model (a simulator or the critic) and the environment was given none."""


class NoModel:
    """The client of environments whose episodes need no model: blueprint tasks open with their written
    request, tools bound to code run without a simulator, and TRL's one-turn rollouts never ask the user
    simulator. A call that would need one raises `NoModelError` naming the role (give `ToolEnv` a client)."""

    def __init__(self, cfg: PipelineConfig):
        self.cfg, self.usage = cfg, UsageMeter()

    def metered(self, usage: UsageMeter) -> NoModel:
        usage.parent = usage.parent or self.usage
        child = copy.copy(self)
        child.usage = usage
        return child

    def role(self, name: str):
        return getattr(self.cfg.llm.roles, name)

    def model_for(self, role: str) -> str:
        return "none"

    async def _refuse(self, role: str, *args: Any, **kwargs: Any):
        raise NoModelError(f"the episode needs a model for the {role} role; give ToolEnv an LLMClient")

    async def structured(self, role: str, *args: Any, **kwargs: Any):
        await self._refuse(role)

    async def tool_step(self, role: str, *args: Any, **kwargs: Any):
        await self._refuse(role)

    async def chat(self, role: str, *args: Any, **kwargs: Any):
        await self._refuse(role)


def python_name(name: str) -> str:
    """A parameter name Python accepts for a JSON property name (`from` -> `from_`, `owner/repo` -> `owner_repo_`)."""
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    return re.sub(r"\W", "_", name if not name[:1].isdigit() else "_" + name) + "_"


def tool_method(tool: dict[str, Any]) -> Callable[..., str]:
    """A method that TRL renders as `tool` (an OpenAI function tool) and calls with its arguments: its signature,
    type hints and Google-style docstring say what the schema says (top-level types; enums as choices)."""
    fn = tool["function"]
    props = (fn.get("parameters") or {}).get("properties") or {}
    required = set((fn.get("parameters") or {}).get("required") or [])
    names = {python_name(p): p for p in props}
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    hints: dict[str, Any] = {"return": str}
    lines = []
    for py, prop in names.items():
        schema = props[prop] or {}
        kind = schema.get("type")
        hint = JSON_TYPES.get(kind if isinstance(kind, str) else "string", str)
        default = inspect.Parameter.empty if prop in required else None
        params.append(inspect.Parameter(py, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint))
        hints[py] = hint if prop in required else hint | None
        desc = " ".join((schema.get("description") or prop).split())
        if isinstance(schema.get("enum"), list):
            desc += f" (choices: {_json(schema['enum'])})"
        lines.append(f"    {py}: {desc}")
    # required ones first: Python wants no defaultless parameter after a defaulted one
    params = params[:1] + sorted(params[1:], key=lambda p: p.default is not inspect.Parameter.empty)
    name = fn["name"]

    def method(self, **kwargs: Any) -> str:
        args = {names[k]: v for k, v in kwargs.items() if v is not None or names[k] in required}
        return self._call(name, args)

    method.__name__ = method.__qualname__ = name
    method.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = hints
    summary = " ".join((fn.get("description") or name).split())
    method.__doc__ = (
        summary + ("\n\nArgs:\n" + "\n".join(lines) if lines else "") + "\n\nReturns:\n    The tool's result."
    )
    return method


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


class WorldsmithEnvironment:
    """Base of the generated classes (one per agent): TRL calls `reset(**row)` at each rollout's start and a
    tool method per call; everything else is private, since TRL offers every public method as a tool."""

    _tasks: TRLTasks

    def __init__(self) -> None:
        self._env = SyncToolEnv(ToolEnv(self._tasks.taskset, self._tasks.client, self._tasks.prompts, self._tasks.cfg))
        self._task_id: str | None = None

    def reset(self, **row: Any) -> None:
        self._task_id = row["task_id"]
        self._env.reset(row["task_id"], sample=int(row.get("sample", 0)))
        return None  # the prompt (system prompt and request) is the dataset row's own

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self._env.env.done:
            return "The conversation is over."
        out = self._env.step({"tool_calls": [{"function": {"name": name, "arguments": arguments}}]})
        replies = [m["content"] for m in out.info["new_messages"] if m.get("role") == "tool"]
        return replies[-1] if replies else f"(not run: the episode ended: {out.info.get('status')})"

    def _reward(self, reply: str) -> dict[str, Any]:
        """Ends the episode at `reply` (once) and returns the reward components."""
        return self._env.finish(reply).info["reward"] or {}


class TRLTasks:
    """A `TaskSet` as TRL wants it: a dataset of prompts, an environment class per agent, reward functions."""

    def __init__(self, taskset: TaskSet, cfg: PipelineConfig, prompts: Prompts | None = None, client: Any = None):
        self.taskset, self.cfg = taskset, cfg
        self.prompts = prompts or Prompts(_prompts_dir(cfg))
        self.client = client if client is not None else NoModel(cfg)

    @classmethod
    def from_run(cls, data_dir: str, run_id: str, cfg: PipelineConfig) -> TRLTasks:
        from pathlib import Path

        from worldsmith.store import RunStore

        ts = TaskSet.from_run(RunStore(Path(data_dir), run_id), cfg.run.seed, Path(cfg.worlds.packs_dir))
        return cls(ts, cfg)

    def env_name(self, agent: Agent) -> str:
        return agent.agent_id

    def dataset(self, task_ids: list[str] | None = None, samples: int = 1):
        """A Hugging Face dataset: per task (and sample), `prompt` (the agent's system prompt, the request),
        `environment` (its agent's environment), `task_id`, `sample`, `difficulty`."""
        import datasets

        rows = []
        for tid in task_ids or sorted(self.taskset.tasks):
            task = self.taskset.tasks[tid]
            agent = self.taskset.agents[task.agent_id]
            for k in range(samples):
                rows.append(
                    {
                        "prompt": [
                            {"role": "system", "content": agent.system_prompt},
                            {"role": "user", "content": task.user_goal.request},
                        ],
                        "environment": self.env_name(agent),
                        "task_id": tid,
                        "sample": k,
                        "difficulty": task.difficulty,
                    }
                )
        return datasets.Dataset.from_list(rows)

    def environment_factories(self) -> dict[str, Callable[[], WorldsmithEnvironment]]:
        """One environment class per agent, its methods the agent's tools (OpenAI names, as rollouts offer them)."""
        out = {}
        for agent in self.taskset.agents.values():
            toolset = self.taskset.toolset(agent)
            members: dict[str, Any] = {"_tasks": self}
            for tool in toolset.tools:
                members[tool["function"]["name"]] = tool_method(tool)
            cls = type(f"Env_{python_name(agent.agent_id)}", (WorldsmithEnvironment,), members)
            out[self.env_name(agent)] = cls
        return out

    @property
    def reward_weights(self) -> list[float]:
        """GRPOConfig.reward_weights for `reward_funcs()`: judge.reward's weights."""
        return [getattr(self.cfg.judge.reward, c) for c in COMPONENTS]

    def reward_funcs(self) -> list[Callable[..., list[float | None]]]:
        """A reward function per component (TRL logs each, and weighs them by `reward_weights`): the first to run
        on a rollout ends its episode at the completion's last reply and has the judge decide."""

        def component(name: str):
            def reward(completions: list, environments: list, **kwargs: Any) -> list[float | None]:
                out = []
                for completion, env in zip(completions, environments, strict=True):
                    r = env._reward(_last_reply(completion))
                    out.append(r.get(name))
                return out

            reward.__name__ = f"worldsmith_{name}"
            return reward

        return [component(c) for c in COMPONENTS]

    def tokenizer(self, tok):
        """`tok` able to parse the Hermes-style tool calls worldsmith's template writes (`<tool_call>{...}</tool_call>`,
        Qwen's format), unless it already has a response template."""
        if getattr(tok, "response_template", None) is None and getattr(tok, "response_schema", None) is None:
            from trl.chat_template_utils import qwen3_template

            tok.response_template = qwen3_template
        return tok


def _last_reply(completion: Any) -> str:
    """The text of a completion's last assistant message (TRL's conversational completions are message lists)."""
    if isinstance(completion, str):
        return completion
    for m in reversed(completion or []):
        if m.get("role") == "assistant" and not m.get("tool_calls"):
            content = m.get("content")
            return content if isinstance(content, str) else ""
    return ""


def _prompts_dir(cfg: PipelineConfig):
    from pathlib import Path

    return Path(cfg.run.prompts_dir)
