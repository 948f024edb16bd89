"""One episode: the agent policy talks with the user simulator and calls tools.

Turn structure: the user speaks; the agent answers with tool calls (each executed and
replied to) until it writes text; the user speaks again or ends the episode with its stop
token. Limits end an episode with their own status: max_turns (user messages),
max_tool_calls, max_tokens (generated tokens of every role together). Failures of the agent
(`agent_output`) and of the simulators (`tool_sim_failed`, `user_sim_failed`) end it with
status `error` and the reason; so does anything that raises inside it (`internal`), so one
broken episode never ends the stage. The messages always form a valid OpenAI conversation:
every assistant `tool_calls` entry has its `tool` reply.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from worldsmith.config import RolloutsConfig
from worldsmith.llm import LLMClient, Prompts, UsageMeter
from worldsmith.llm.client import ServerUnavailable
from worldsmith.mcp.executor import RealExecutor
from worldsmith.prose import garbled_text
from worldsmith.records import Agent, FaultEvent, Task, ToolCall, Trajectory, content_id
from worldsmith.records import World as WorldSchema
from worldsmith.rollouts.user import UserSimulator
from worldsmith.rubric import goal_met
from worldsmith.vocab import END_REASONS, MAX_REPLY_CHARS
from worldsmith.worldmodel.faults import FaultInjector
from worldsmith.worldmodel.grounding import ground_tools
from worldsmith.worldmodel.runner import SimulatorFailure, ToolRunner
from worldsmith.worldmodel.state import World
from worldsmith.worldmodel.toolset import ToolSet

# tasks where the agent must not be forced to call a tool on its first step
NO_FORCED_CALL = ("irrelevance", "clarification")
ROLES = ("agent", "user_sim", "tool_sim")


@dataclass
class Episode:
    trajectory_id: str
    task: Task
    agent: Agent
    toolset: ToolSet
    sample: int
    seed: int


class _End(Exception):
    def __init__(self, status: str, reason: str, raw: str | None = None):
        self.status, self.reason, self.raw = status, reason, raw


def _drop_unanswered(messages: list[dict[str, Any]]) -> None:
    """Cut a half-answered agent step (tool calls without all their replies) off the end."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m["role"] == "assistant" and m.get("tool_calls"):
            if len(messages) - 1 - i < len(m["tool_calls"]):
                del messages[i:]
            return
        if m["role"] != "tool":
            return


def task_memo(task: Task) -> dict[str, tuple[Any, list[dict[str, Any]]]]:
    """What the simulator answered for a blueprint's gold calls: an agent's identical call in
    the identical state gets the same answer (the gold chain and the episode agree)."""
    if task.blueprint is None:
        return {}
    return {
        content_id(c.tool_id, c.arguments, c.state_hash): (c.result, c.patch)
        for c in task.blueprint.calls
        if c.executor == "simulated"
    }


async def run_episode(
    ep: Episode,
    client: LLMClient,
    prompts: Prompts,
    cfg: RolloutsConfig,
    real: RealExecutor | None = None,
    worlds: dict[str, WorldSchema] | None = None,
) -> Trajectory:
    """One episode; `real` executes the tools of safe crawled servers (None: all simulated);
    `worlds` the bound tools of these worlds, by code."""
    usage = UsageMeter()
    client = client.metered(usage)  # this episode's usage, also counted in the run's
    runner = ToolRunner(client, prompts, cfg, real, worlds, task_memo(ep.task))
    role = client.role("agent")
    grounded = role.grounded
    cap = MAX_REPLY_CHARS if role.tool_call_mode == "constrained" else None  # a reply that long was cut
    user = UserSimulator(client, prompts, ep.task, cfg.user_sim_attempts)
    world = World(ep.task.initial_state, cfg.tool_sim.max_state_bytes)
    faults = FaultInjector(cfg.faults, ep.seed, force_first=ep.task.difficulty == "error_recovery")
    messages: list[dict[str, Any]] = [{"role": "system", "content": ep.agent.system_prompt}]
    calls: list[ToolCall] = []
    fault_log: list[FaultEvent] = []
    turns = steps = resampled = 0
    started = time.perf_counter()
    status, reason, raw = "finished", None, None

    def so_far() -> Trajectory:
        """The episode as a trajectory, for the goal check (only what it reads is filled in)."""
        return Trajectory.model_construct(messages=messages, calls=calls, world_states=world.record())

    def budget() -> None:
        if usage.completion_tokens >= cfg.max_tokens:
            raise _End("max_tokens", f"{usage.completion_tokens} generated tokens, limit {cfg.max_tokens}")

    async def user_speaks() -> bool:
        """Appends the user's message; True when it ends the episode."""
        nonlocal turns
        budget()
        # a blueprint's request was written and checked at task time: it opens the episode as it is
        if turns == 0 and (cfg.first_user_message == "goal_request" or ep.task.blueprint is not None):
            messages.append({"role": "user", "content": ep.task.user_goal.request})
            turns += 1
            return False
        met = cfg.user_knows_goal and ep.task.blueprint is not None and goal_met(ep.task, so_far())
        u = await user.reply(messages, seed=ep.seed + 7919 * (turns + 1), goal_met=met)
        if not u.ok:
            raise _End("error", f"user_sim_failed: {u.error}", u.raw)
        messages.append({"role": "user", "content": u.message})
        turns += 1
        if u.ends:
            raise _End("finished", END_REASONS[u.action])
        return False

    async def agent_acts() -> None:
        """Agent steps until a text reply (tool calls executed in between)."""
        nonlocal steps, resampled
        for _ in range(cfg.max_agent_steps_per_turn):
            budget()
            left = cfg.max_tool_calls - len(calls)  # > 0: reaching the limit ends the episode below
            force = cfg.require_tool == "first_turn" and steps == 0 and ep.task.difficulty not in NO_FORCED_CALL
            done = {
                (c.name, str(c.arguments.get(key)).lower())
                for c in calls
                if c.ok
                and isinstance(c.arguments, dict)
                and (
                    key := ep.toolset.by_name[c.name].binding.key_param
                    if c.name in ep.toolset.by_name and ep.toolset.by_name[c.name].binding
                    else None
                )
            }
            grammar = ground_tools(ep.toolset, messages, worlds or {}, done) if grounded else None
            for attempt in range(cfg.reply_attempts):
                r = await client.tool_step(
                    "agent",
                    messages,
                    ep.toolset.tools,
                    require_tool=force,
                    seed=ep.seed + steps + 1_000_003 * attempt,
                    grammar_tools=grammar,
                )
                unusable = not r.ok and r.error_kind in ("parse", "schema")  # a runaway cut at max_tokens
                garbled = r.ok and not r.tool_calls and garbled_text(r.message().get("content") or "", cap)
                if not (unusable or garbled):
                    break
                if attempt + 1 < cfg.reply_attempts:
                    resampled += 1  # sampled again; the last sample stays (the judge reads it, or it ends the episode)
                budget()
            steps += 1
            if not r.ok:
                raise _End("error", f"agent_output: {r.error_kind}: {r.error}", r.raw)
            msg = r.message()
            if not r.tool_calls:
                if not (msg.get("content") or "").strip():
                    raise _End("error", "agent_output: empty: an empty reply", r.raw)
                messages.append(msg)
                return
            msg["tool_calls"] = r.tool_calls[:left]  # the rest would break the limit
            messages.append(msg)
            at = len(messages) - 1
            for call in msg["tool_calls"]:
                spec = ep.toolset.by_name.get(call["function"]["name"])
                try:
                    out = await runner.execute(call, spec, world, faults, seed=ep.seed + 104729 * (len(calls) + 1))
                except SimulatorFailure as exc:
                    del messages[at:]  # drop the half-answered step: the conversation stays valid
                    raise _End("error", f"tool_sim_failed: {exc.reason}", exc.raw) from None
                if out.patch:
                    world.commit(out.patch, call["id"], call["function"]["name"])
                calls.append(
                    ToolCall(
                        turn=turns,
                        call_id=call["id"],
                        name=call["function"]["name"],
                        tool=spec.name if spec else None,
                        tool_id=out.tool_id,
                        arguments=out.arguments,
                        read_only=bool(spec and spec.annotations.get("readOnlyHint")),
                        executor=out.executor,
                        ok=out.ok,
                        error=out.error,
                        fault=out.fault,
                        patch_ops=len(out.patch),
                        attempts=out.attempts,
                    )
                )
                if out.fault:
                    fault_log.append(
                        FaultEvent(
                            turn=turns,
                            call_id=call["id"],
                            tool=call["function"]["name"],
                            kind=out.fault,
                            forced=out.forced,
                        )
                    )
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": out.content})
            if len(calls) >= cfg.max_tool_calls:
                raise _End("max_tool_calls", f"{len(calls)} tool calls, limit {cfg.max_tool_calls}")
        raise _End("max_tool_calls", f"no reply after {cfg.max_agent_steps_per_turn} agent steps in one turn")

    try:
        await user_speaks()
        while True:
            await agent_acts()
            if turns >= cfg.max_turns:
                raise _End("max_turns", f"{turns} user turns, limit {cfg.max_turns}")
            await user_speaks()
    except _End as end:
        status, reason, raw = end.status, end.reason, end.raw
    except ServerUnavailable:  # not the episode's fault: the run stops and this episode is played again on resume
        raise
    except Exception as exc:  # a bug or a client that raised: this episode is an error, the stage goes on
        _drop_unanswered(messages)
        status, reason = "error", f"internal: {type(exc).__name__}: {str(exc)[:300]}"

    snapshot = usage.snapshot()
    return Trajectory(
        trajectory_id=ep.trajectory_id,
        task_id=ep.task.task_id,
        agent_id=ep.agent.agent_id,
        sample=ep.sample,
        seed=ep.seed,
        messages=messages,
        tools=ep.toolset.tools,
        world_states=world.record(),
        calls=calls,
        faults=fault_log,
        usage=snapshot,
        models={r: client.model_for(r) for r in ROLES},
        model=client.model_for("agent"),
        status=status,
        reason=reason,
        decoding="grounded" if grounded else role.tool_call_mode,
        reply_resamples=resampled,
        raw=raw,
        turns=turns,
        tool_calls=len(calls),
        generated_tokens=usage.completion_tokens,
        latency_s=round(time.perf_counter() - started, 3),
    )
