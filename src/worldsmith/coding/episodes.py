"""A coding task as an episode of the one episode loop (rollouts/episode.py's EpisodeRun): the six tools as
tool specs (a coding bundle), an agent over them per repository, the task as the episode sees it (the user's
bug report opens it), and `CodingRunner`, which the episode's tool runner is swapped for: every call runs
in the sandbox over the episode's `Workspace`, nothing is simulated."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema

from worldsmith.coding.tools import TOOL_SPECS, Workspace
from worldsmith.llm.prompts import Prompts
from worldsmith.records import Agent, Blueprint, CodingTask, Persona, Rubric, Task, ToolSpec, UserGoal, content_id
from worldsmith.worldmodel.runner import CallOutcome

SERVER = "worldsmith-coding"
READ_ONLY = {"list_files", "read_file", "search", "run_tests"}


def coding_toolspecs() -> list[ToolSpec]:
    """The coding bundle: the six tools as tool specs (executed in the sandbox, never simulated)."""
    out = []
    for t in TOOL_SPECS:
        read_only = t["name"] in READ_ONLY
        out.append(
            ToolSpec(
                tool_id=ToolSpec.make_id(t["name"], t["description"], t["input_schema"], None, SERVER),
                name=t["name"],
                description=t["description"],
                input_schema=t["input_schema"],
                annotations={"readOnlyHint": read_only, "destructiveHint": False, "openWorldHint": False},
                source="seed",
                server=SERVER,
                category="coding",
                domain="coding",
            )
        )
    return out


def coding_agent(package: str, version: str, prompts: Prompts, tools: list[ToolSpec], family: str = "bugfix") -> Agent:
    """One agent per repository and family (bugfix, testwriter): the coding system prompt over the coding bundle."""
    system = prompts.render_messages("coding_agent", package=package, version=version, family=family)[0]["content"]
    return Agent(
        agent_id=content_id(package, version, system, [t.tool_id for t in tools], prefix="agent_coding_"),
        bundle_id=f"coding-{package}-{family}",
        system_prompt=system,
        tool_ids=[t.tool_id for t in tools],
        domain="coding",
        style="precise",
        strictness="strict",
    )


def episode_task(task: CodingTask, agent: Agent) -> Task:
    """The task as the episode loop takes it: the user's bug report opens the episode (a blueprint task's
    request), the world is the repository (its state lives in the sandbox, not in JSON)."""
    return Task(
        task_id=task.task_id,
        agent_id=agent.agent_id,
        difficulty=task.family,
        world_id=f"repo:{task.repo}-{task.version}",
        blueprint=Blueprint(family=task.family, request_source="grammar"),
        user_persona=Persona(communication="formal", expertise="expert"),
        user_goal=UserGoal(request=task.statement),
        initial_state={"repo": f"{task.repo}-{task.version}", "coding_task": task.task_id},
        rubric=Rubric(criteria=[]),
    )


class CodingRunner:
    """The episode's tool runner for a coding task: arguments checked against the tool's schema (an invalid
    call gets the error a real server gives), then the tool runs in the sandbox over the workspace."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace

    async def execute(self, call: dict[str, Any], spec: ToolSpec | None, world, faults, seed: int) -> CallOutcome:
        fn = call.get("function") or {}
        name = fn.get("name", "")
        if spec is None:
            return CallOutcome(f"error: unknown tool {name!r}", False, "unknown_tool", error=f"unknown tool {name!r}")
        try:
            args = json.loads(fn.get("arguments") or "{}")
            if not isinstance(args, dict):
                raise ValueError("arguments must be a JSON object")
            jsonschema.validate(args, spec.input_schema)
        except (ValueError, jsonschema.ValidationError) as exc:
            msg = getattr(exc, "message", str(exc))
            return CallOutcome(
                f"error: invalid arguments: {msg}", False, "invalid_arguments", spec.tool_id, error=f"invalid: {msg}"
            )
        ok, text = await asyncio.to_thread(self.workspace.call, spec.name, args)
        return CallOutcome(text, ok, "real", spec.tool_id, args, error=None if ok else text[:300], attempts=1)

    async def aclose(self) -> None:
        return None
