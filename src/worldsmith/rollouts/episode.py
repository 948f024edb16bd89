"""One episode: the agent policy talks with the user simulator and calls tools.

Turn structure: the user speaks; the agent answers with tool calls (each executed and
replied to) until it writes text; the user speaks again or ends the episode with its stop
token. Limits end an episode with their own status: max_turns (user messages that ask for
more; a user whose goal the last reply met still closes with its stop), max_tool_calls,
max_tokens (generated tokens of every role together). Failures of the agent
(`agent_output`) and of the simulators (`tool_sim_failed`, `user_sim_failed`) end it with
status `error` and the reason; so does anything that raises inside it (`internal`), so one
broken episode never ends the stage. The messages always form a valid OpenAI conversation:
every assistant `tool_calls` entry has its `tool` reply.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from worldsmith.config import JudgeConfig, RolloutsConfig
from worldsmith.judge.checks import find_hacks
from worldsmith.judge.rubric import goal_met
from worldsmith.llm import LLMClient, LLMResult, Prompts, UsageMeter
from worldsmith.llm.client import ServerUnavailable
from worldsmith.mcp.executor import RealExecutor
from worldsmith.prose import garbled_text, ignores_result, one_word, tool_result
from worldsmith.records import Agent, FaultEvent, Task, ToolCall, ToolSpec, Trajectory, content_id
from worldsmith.records import World as WorldSchema
from worldsmith.rollouts.user import UserSimulator
from worldsmith.vocab import ALREADY_OPENINGS, DECLINE_OPENINGS, END_REASONS, EPISODE_ROLES, MAX_REPLY_CHARS
from worldsmith.worldmodel.faults import FaultInjector
from worldsmith.worldmodel.grounding import (
    asked_values,
    confirming_values,
    ground_tools,
    named_tools,
    unread_reads,
)
from worldsmith.worldmodel.runner import CallOutcome, SimulatorFailure, ToolRunner, is_read_only
from worldsmith.worldmodel.state import World
from worldsmith.worldmodel.toolset import ToolSet

# tasks where the agent must not be forced to call a tool on its first step
NO_FORCED_CALL = ("irrelevance", "clarification")


@dataclass
class Episode:
    trajectory_id: str
    task: Task
    agent: Agent
    toolset: ToolSet
    sample: int
    seed: int


class _End(Exception):
    """Ends the episode with its status and reason (and the raw output behind it, if any)."""

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


class EpisodeRun:
    """One episode's state (messages, world, calls, faults, usage, counters) and its moves:
    `reset` (the user's opening message), `agent_step` (the policy samples a step and `take`s it)
    and `user_speaks` (one user message). A move appends to `messages` and raises `_End` when the
    episode ends; `play` makes the moves in turn order and `trajectory` records the episode.
    `take` applies an agent message, however it was sampled, and says whose move is next: the RL
    environment (`worldsmith.gym`) drives the same episode with messages from a trainer's policy."""

    def __init__(
        self,
        ep: Episode,
        client: LLMClient,
        prompts: Prompts,
        cfg: RolloutsConfig,
        real: RealExecutor | None = None,
        worlds: dict[str, WorldSchema] | None = None,
        judge: JudgeConfig | None = None,
    ):
        self.ep, self.cfg, self.worlds = ep, cfg, worlds or {}
        self.judge = judge or JudgeConfig()  # whose checks a reply must pass (reply_passes_checks)
        self.usage = UsageMeter()
        self.client = client.metered(self.usage)  # this episode's usage, also counted in the run's
        self.runner = ToolRunner(self.client, prompts, cfg, real, worlds, task_memo(ep.task))
        self.role = self.client.role("agent")
        self.grounded = self.role.grounded
        self.cap = MAX_REPLY_CHARS if self.role.tool_call_mode == "constrained" else None  # a reply that long was cut
        self.user = UserSimulator(self.client, prompts, ep.task, cfg.user_sim_attempts)
        self.world = World(ep.task.initial_state, cfg.tool_sim.max_state_bytes)
        self.faults = FaultInjector(cfg.faults, ep.seed, force_first=ep.task.difficulty == "error_recovery")
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": ep.agent.system_prompt}]
        self.calls: list[ToolCall] = []
        self.logprobs: dict[str, list[tuple[str, float]]] = {}  # message index -> the engine's sampled tokens
        self.fault_log: list[FaultEvent] = []
        self.turns = self.steps = self.resampled = 0  # user messages, agent steps, agent samples drawn again
        self.turn_steps = 0  # agent steps of tool calls since the last text reply
        self.status, self.reason, self.raw = "finished", None, None
        self.started = time.perf_counter()

    @property
    def decoding(self) -> str:
        return "grounded" if self.grounded else self.role.tool_call_mode

    def so_far(self) -> Trajectory:
        """The episode as a trajectory, for the goal check (only what it reads is filled in)."""
        return Trajectory.model_construct(messages=self.messages, calls=self.calls, world_states=self.world.record())

    def check_budget(self) -> None:
        if self.usage.completion_tokens >= self.cfg.max_tokens:
            raise _End("max_tokens", f"{self.usage.completion_tokens} generated tokens, limit {self.cfg.max_tokens}")

    async def play(self) -> None:
        """The moves in turn order until the episode ends; keeps its status, reason and raw output."""
        if await self.ends(self.reset()):
            return
        while not await self.ends(self.agent_step()):
            pass

    async def ends(self, move: Awaitable[None]) -> bool:
        """Makes `move`; True when the episode ended in it, its status, reason and raw output kept."""
        try:
            await move
            return False
        except _End as end:
            self.status, self.reason, self.raw = end.status, end.reason, end.raw
        except ServerUnavailable:  # not the episode's fault: the run stops and this episode is played again on resume
            raise
        except Exception as exc:  # a bug or a client that raised: this episode is an error, the stage goes on
            _drop_unanswered(self.messages)
            self.status, self.reason = "error", f"internal: {type(exc).__name__}: {str(exc)[:300]}"
        return True

    async def reset(self) -> None:
        """The episode's opening: the user's first message."""
        await self.user_speaks()

    async def user_speaks(self) -> None:
        """Appends the user's message; raises `_End` when it ends the episode."""
        self.check_budget()
        task = self.ep.task
        # a blueprint's request was written and checked at task time: it opens the episode as it is
        if self.turns == 0 and (self.cfg.first_user_message == "goal_request" or task.blueprint is not None):
            self.messages.append({"role": "user", "content": task.user_goal.request})
            self.turns += 1
            return
        u = await self.user.reply(self.messages, seed=self.ep.seed + 7919 * (self.turns + 1), goal_met=self.goal_met())
        if not u.ok:
            raise _End("error", f"user_sim_failed: {u.error}", u.raw)
        self.messages.append({"role": "user", "content": u.message})
        self.turns += 1
        if u.ends:
            raise _End("finished", END_REASONS[u.action])

    def goal_met(self) -> bool:
        """Whether the user of a blueprint task has what it wanted (`user_knows_goal`): it is told so, and stops."""
        task = self.ep.task
        return self.cfg.user_knows_goal and task.blueprint is not None and goal_met(task, self.so_far())

    async def agent_step(self) -> None:
        """One agent step, sampled by the episode's policy and taken."""
        self.check_budget()
        r = await self.sample_agent()
        if not r.ok:
            self.steps += 1
            raise _End("error", f"agent_output: {r.error_kind}: {r.error}", r.raw)
        if r.logprobs and r.fallback is None:  # the message lands at this index (sampled as the template's text)
            self.logprobs[str(len(self.messages))] = r.logprobs
        await self.take(r.message(), r.raw)

    async def take(self, msg: dict[str, Any], raw: str | None = None) -> None:
        """Applies one agent message (tool calls executed and replied to, or a text reply) and makes the moves
        that follow it: after a reply the user speaks (or the turn limit ends the episode); a turn of tool-call
        steps without a reply ends at `max_agent_steps_per_turn`. Raises `_End` when the episode ends."""
        self.steps += 1
        if not await self.apply_agent(msg, raw):
            self.turn_steps += 1
            if self.turn_steps >= self.cfg.max_agent_steps_per_turn:
                raise _End("max_tool_calls", f"no reply after {self.turn_steps} agent steps in one turn")
            return
        self.turn_steps = 0
        # the limit counts the user's messages that ask for more: a user whose goal this reply met still closes the
        # episode with its stop (at max_turns 2, a second reply that answers could otherwise never finish)
        if self.turns >= self.cfg.max_turns and not self.goal_met():
            raise _End("max_turns", f"{self.turns} user turns, limit {self.cfg.max_turns}")
        await self.user_speaks()

    async def sample_agent(self) -> LLMResult:
        """The policy's next step; an output that cannot be parsed, a reply that is not prose, one
        that ignores the tool result it answers (`reply_uses_result`), or one written before reading
        the record that holds what the user asked (`read_before_reply`: sampled again as a call to
        that record's get), or one the judge's checks would reject for what it says (`reply_passes_checks`), is
        sampled again (`reply_attempts`), and the last sample stays."""
        cfg, ep = self.cfg, self.ep
        force = cfg.require_tool == "first_turn" and self.steps == 0 and ep.task.difficulty not in NO_FORCED_CALL
        acted_on = self.keys_acted_on()
        grammar = ground_tools(ep.toolset, self.messages, self.worlds, acted_on) if self.grounded else None
        if grammar and cfg.tools_the_user_named and (named := named_tools(ep.toolset, self.messages, self.worlds)):
            # none of the named records' tools usable: at the user's turn every tool stays (the record may be found
            # through another); after a result, a reply (what the named tools could do is done)
            at_users_turn = self.messages[-1]["role"] == "user"
            grammar = [t for t in grammar if t["function"]["name"] in named] or (grammar if at_users_turn else [])
        prose: LLMResult | None = None  # a prose reply that ignored the result: kept if no later sample is prose
        quote = None
        if self.grounded and cfg.reply_quotes_asked:  # what the user asked of this result, or the change it confirms
            quote = asked_values(self.messages) or confirming_values(ep.toolset, self.messages)
        opening = None
        if grammar is not None and cfg.restraint_decoding:
            grammar, opening, gold_quote = self.restrained(grammar)
            quote = gold_quote or quote
            force = force and bool(grammar)
        for attempt in range(cfg.reply_attempts):
            r = await self.client.tool_step(
                "agent",
                self.messages,
                ep.toolset.tools,
                require_tool=force,
                seed=ep.seed + self.steps + 1_000_003 * attempt,
                grammar_tools=grammar,
                quote=quote,
                opening=opening,
            )
            unusable = not r.ok and r.error_kind in ("parse", "schema")  # a runaway cut at max_tokens
            # a call made again with the same arguments after it succeeded or the world refused it: a read learns
            # nothing (SmolLM2, sampled again for a reply that ignored the result, called the same list four times),
            # a write does it twice, a refusal comes again
            repeated = r.ok and bool(r.tool_calls) and all(map(self.repeats_a_call, r.tool_calls))
            unusable = unusable or repeated
            text = (r.message().get("content") or "") if r.ok else ""
            garbled = r.ok and not r.tool_calls and (garbled_text(text, self.cap) or one_word(text))
            ignored = (
                r.ok
                and not r.tool_calls
                and not garbled
                and cfg.reply_uses_result
                and ignores_result(text, self.messages)
            )
            unread = (
                [t for t in grammar if t["function"]["name"] in unread_reads(ep.toolset, self.messages, self.worlds)]
                if cfg.read_before_reply and grammar and r.ok and not r.tool_calls and not garbled and not ignored
                else []
            )
            rejected = (
                cfg.reply_passes_checks
                and r.ok
                and not r.tool_calls
                and not (garbled or ignored or unread)
                and bool(self.reply_findings(r.message()))
            )
            garbled = garbled or rejected
            if ignored or unread:
                prose = prose or r
            if unread:  # the next sample reads the record that holds what was asked (its key is grounded)
                force, grammar = True, unread
            elif repeated:  # what it would read again is in the conversation: the next sample is offered no tool (a
                force, grammar = False, []  # reply); sampled with tools again, SmolLM2 sent the same list 4 times
            if not (unusable or garbled or ignored or unread):
                break
            if attempt + 1 < cfg.reply_attempts:
                self.resampled += 1  # sampled again; the last sample stays (the judge reads it, or it ends the episode)
            self.check_budget()
        else:  # every sample failed: a prose reply that ignored the result beats a last one that failed worse
            if prose is not None and not (ignored or unread):  # (a repeated read, not prose, or unparsable)
                return prose
        return r

    def restrained(
        self, grammar: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[str] | None, list[str] | None]:
        """`rollouts.restraint_decoding`: (the tools this step may call, the words its reply must open with, the
        values it must then say). The task's executed gold leads, as it does for a forced first call: an irrelevance
        task is offered no tool and its reply opens by declining; a task whose gold changes nothing is offered the
        read tools only, and right after a result, an already-done or refusal task's reply opens by saying the state
        the gold read of the record the user named ("No change is needed: ord-4802 is already cancelled"; "I'm sorry,
        but I can't help with that: bkg-7303 is checked_in"), the decoder writing the rest."""
        bp = self.ep.task.blueprint
        if bp is None:
            return grammar, None, None
        family = self.ep.task.family
        if family == "irrelevance":
            return [], list(DECLINE_OPENINGS), None
        if any(c.patch for c in bp.calls):
            return grammar, None, None
        by_name = self.ep.toolset.by_name
        reads = [t for t in grammar if (s := by_name.get(t["function"]["name"])) is not None and is_read_only(s)]
        if family not in ("already_done", "refusal") or not self.messages or tool_result(self.messages[-1]) is None:
            return reads, None, None
        shown = " ".join(m.get("content") or "" for m in self.messages if m["role"] == "tool")
        facts = [str(v) for v in self.ep.task.user_goal.facts.values() if v]
        said = []  # "bkg-7303 is checked_in": the record the user named, in the state the gold read
        for label, value in bp.asked.items():
            key = next((k for k in facts if k in label.split()), None)
            if key and value and value in shown:
                said.append(f"{key} is {'already ' if family == 'already_done' else ''}{value}")
        if not said:
            return reads, None, None
        if family == "refusal":  # the rule forbids it, not the tools: "I'm sorry, but I can't help with that: ..."
            return reads, [f"{o} that:" for o in DECLINE_OPENINGS if o.endswith(" with")], said
        return reads, list(ALREADY_OPENINGS), said

    def reply_findings(self, reply: dict[str, Any]) -> list[str]:
        """The judge's findings (`judge.checks`) this reply would add to the episode so far that its policy rejects
        it for: a claim contradicted, under `strict` one nothing supports, and the other rejected checks."""
        before = self.so_far().model_copy(update={"tools": self.ep.toolset.tools, "decoding": self.decoding})
        after = before.model_copy(update={"messages": [*self.messages, reply]})
        strict = self.judge.unverifiable == "strict"
        rejected = {*self.judge.reject_hacks, *(("unverifiable_claim",) if strict else ())}
        had = {h.kind for h in find_hacks(before, self.ep.task, words=strict)}
        return [
            h.kind for h in find_hacks(after, self.ep.task, words=strict) if h.kind not in had and h.kind in rejected
        ]

    def repeats_a_call(self, call: dict[str, Any]) -> bool:
        """Whether `call` (an OpenAI tool call) is one this episode already made with the same arguments, and it
        succeeded or the world refused it (not an injected fault, which a retry may get past): a read learns nothing
        new, a write does it twice (SmolLM2 sent one transfer four times), a refusal comes again."""
        fn = call.get("function") or {}
        if fn.get("name", "") not in self.ep.toolset.by_name:
            return False
        try:
            args = json.loads(fn.get("arguments") or "{}")
        except ValueError:
            return False
        return any((c.ok or c.fault is None) and c.name == fn.get("name") and c.arguments == args for c in self.calls)

    def keys_acted_on(self) -> set[tuple[str, str]]:
        """(tool, record key) of every call that succeeded so far: grounding offers no tool that record again.
        A tool that names its record by one field instead (`fullname`) gives (tool, "match:<value>"), also when
        the world found no record by that value (SmolLM2 asked to remove "Harbor project" sent "Harbor" four
        times; a key's not_found is not counted: a composite key fails on its other part)."""
        by_name = self.ep.toolset.by_name
        out = set()
        for c in self.calls:
            b = by_name[c.name].binding if c.name in by_name else None
            if b is None or not isinstance(c.arguments, dict):
                continue
            found_nothing = c.fault is None and not b.key_param and _code(c.error) == "not_found"
            if not (c.ok or found_nothing):
                continue
            if b.key_param:
                out.add((c.name, str(c.arguments.get(b.key_param)).lower()))
            elif len(b.match) == 1:
                (param,) = b.match
                out.add((c.name, "match:" + str(c.arguments.get(param)).lower()))
        return out

    async def apply_agent(self, msg: dict[str, Any], raw: str | None = None) -> bool:
        """Appends the agent's message: a text reply (True: the user speaks next), or tool calls,
        cut to the calls the limit leaves, each executed and replied to (False: the agent steps again)."""
        if not msg.get("tool_calls"):
            if not (msg.get("content") or "").strip():
                raise _End("error", "agent_output: empty: an empty reply", raw)
            self.messages.append(msg)
            return True
        left = self.cfg.max_tool_calls - len(self.calls)  # > 0: reaching the limit ends the episode below
        msg["tool_calls"] = msg["tool_calls"][:left]  # the rest would break the limit
        self.messages.append(msg)
        await self.execute_calls(msg["tool_calls"])
        if len(self.calls) >= self.cfg.max_tool_calls:
            raise _End("max_tool_calls", f"{len(self.calls)} tool calls, limit {self.cfg.max_tool_calls}")
        return False

    async def execute_calls(self, tool_calls: list[dict[str, Any]]) -> None:
        """Executes the calls of the agent's message (the last one), each replied to in order."""
        at = len(self.messages) - 1
        for call in tool_calls:
            name = call["function"]["name"]
            spec = self.ep.toolset.by_name.get(name)
            try:
                seed = self.ep.seed + 104729 * (len(self.calls) + 1)
                out = await self.runner.execute(call, spec, self.world, self.faults, seed=seed)
            except SimulatorFailure as exc:
                del self.messages[at:]  # drop the half-answered step: the conversation stays valid
                raise _End("error", f"tool_sim_failed: {exc.reason}", exc.raw) from None
            if out.patch:
                self.world.commit(out.patch, call["id"], name)
            self.record_call(call, spec, out)
            self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": out.content})

    def record_call(self, call: dict[str, Any], spec: ToolSpec | None, out: CallOutcome) -> None:
        """The executed call in `calls`, and its fault, if one was injected, in `fault_log`."""
        name = call["function"]["name"]
        self.calls.append(
            ToolCall(
                turn=self.turns,
                call_id=call["id"],
                name=name,
                tool=spec.name if spec else None,
                tool_id=out.tool_id,
                arguments=out.arguments,
                read_only=spec is not None and is_read_only(spec),
                executor=out.executor,
                ok=out.ok,
                error=out.error,
                fault=out.fault,
                patch_ops=len(out.patch),
                attempts=out.attempts,
            )
        )
        if out.fault:
            self.fault_log.append(
                FaultEvent(turn=self.turns, call_id=call["id"], tool=name, kind=out.fault, forced=out.forced)
            )

    def trajectory(self) -> Trajectory:
        """The episode as played, with its status and reason."""
        snapshot = self.usage.snapshot()
        return Trajectory(
            trajectory_id=self.ep.trajectory_id,
            task_id=self.ep.task.task_id,
            agent_id=self.ep.agent.agent_id,
            sample=self.ep.sample,
            seed=self.ep.seed,
            messages=self.messages,
            tools=self.ep.toolset.tools,
            world_states=self.world.record(),
            calls=self.calls,
            faults=self.fault_log,
            usage=snapshot,
            models={r: self.client.model_for(r) for r in EPISODE_ROLES},
            model=self.client.model_for("agent"),
            status=self.status,
            reason=self.reason,
            decoding=self.decoding,
            reply_resamples=self.resampled,
            agent_logprobs=self.logprobs,
            raw=self.raw,
            turns=self.turns,
            tool_calls=len(self.calls),
            generated_tokens=self.usage.completion_tokens,
            latency_s=round(time.perf_counter() - self.started, 3),
        )


async def run_episode(
    ep: Episode,
    client: LLMClient,
    prompts: Prompts,
    cfg: RolloutsConfig,
    real: RealExecutor | None = None,
    worlds: dict[str, WorldSchema] | None = None,
    judge: JudgeConfig | None = None,
) -> Trajectory:
    """One episode; `real` executes the tools of safe crawled servers (None: all simulated);
    `worlds` the bound tools of these worlds, by code; `judge` the policy whose checks a reply must pass."""
    run = EpisodeRun(ep, client, prompts, cfg, real, worlds, judge)
    await run.play()
    return run.trajectory()


def _code(error: str | None) -> str:
    """The code of a recorded call error ("not_found: no project with name 'Harbor'" -> "not_found")."""
    return (error or "").split(":", 1)[0].strip()
