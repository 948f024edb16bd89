"""Rollouts: world patches, argument checks, faults, the tool and user simulators, episode
limits and resume — deterministic parts with a scripted client; then real episodes against
the embedded server (with the real time server executing its tool)."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conversations import conversation_problems
from scripted_worlds import STATE, cancel_task, order_agent, order_tools

from worldsmith.config import FaultsConfig, RolloutsConfig, validate_config
from worldsmith.llm import Prompts, UsageMeter
from worldsmith.llm.client import LLMResult
from worldsmith.prose import ignores_result
from worldsmith.records import FaultEvent, Trajectory, UserGoal
from worldsmith.rollouts.episode import Episode, run_episode
from worldsmith.rollouts.user import user_view, with_token
from worldsmith.vocab import FAULT_KINDS, FAULTS, STOP
from worldsmith.worldmodel.faults import FaultInjector, ToolTraits
from worldsmith.worldmodel.runner import SimulatorFailure, ToolRunner, sim_schema, state_paths
from worldsmith.worldmodel.state import PatchRejected, World, apply_patch, replay
from worldsmith.worldmodel.toolset import ToolSet

ROOT = Path(__file__).resolve().parent.parent
PROMPTS = Prompts(ROOT / "prompts")


class ScriptedClient:
    """Stands in for LLMClient: answers each role from a script (a list of replies, or a
    function of the messages); counts usage like the real one."""

    def __init__(self, **scripts):
        self.scripts = {role: list(s) if isinstance(s, list) else s for role, s in scripts.items()}
        self.usage = UsageMeter()
        self.calls: Counter[str] = Counter()
        self.grammars: list = []  # the tools each agent step was allowed to call (grounded decoding)
        self.quotes: list = []  # the values each agent step's reply had to say (rollouts.reply_quotes_asked)
        self.openings: list = []  # the words each agent step's reply had to open with (rollouts.restraint_decoding)

    def metered(self, usage):
        usage.parent = self.usage
        child = copy.copy(self)
        child.usage = usage
        return child

    def raising_transient(self):
        """As the rollouts' client: a TransientServerFailure a script raises reaches the stage."""
        return self

    def model_for(self, role):
        return "scripted"

    def _next(self, role, messages):
        self.calls[role] += 1
        script = self.scripts.get(role)
        if script is None:
            raise AssertionError(f"no model call expected for {role}")
        reply = script(messages) if callable(script) else script.pop(0)
        return reply

    async def structured(self, role, messages, schema, name="record", seed=None):
        reply = self._next(role, messages)
        if isinstance(reply, LLMResult):
            r = reply
        else:
            r = LLMResult(
                ok=True, role=role, model="scripted", endpoint="fake", content=json.dumps(reply), completion_tokens=10
            )
            r.data = reply
        self.usage.add(r)
        return r

    def role(self, name):
        from worldsmith.config import RoleConfig

        return RoleConfig()

    async def tool_step(
        self, role, messages, tools, require_tool=False, seed=None, grammar_tools=None, quote=None, opening=None
    ):
        self.grammars.append(grammar_tools)
        self.quotes.append(quote)
        self.openings.append(opening)
        reply = self._next(role, messages)
        r = LLMResult(ok=True, role=role, model="scripted", endpoint="fake", completion_tokens=10)
        if isinstance(reply, LLMResult):
            r = reply
        elif isinstance(reply, str):
            r.content = reply
        else:
            r.tool_calls = [
                {
                    "id": f"call_{i}_{len(messages)}",
                    "type": "function",
                    "function": {"name": n, "arguments": json.dumps(a)},
                }
                for i, (n, a) in enumerate(reply)
            ]
        self.usage.add(r)
        return r


def cfg(**over) -> RolloutsConfig:
    base = {"faults": {"enabled": False}, "real_execution": {"enabled": False}}
    return RolloutsConfig.model_validate({**base, **over})


def episode(task=None, sample=0, seed=7) -> Episode:
    tools = order_tools()
    return Episode("trj_x", task or cancel_task(), order_agent(tools), ToolSet.build(tools), sample, seed)


def run(ep, client, c=None, judge=None):
    c = c or cfg()
    return asyncio.run(run_episode(ep, client, PROMPTS, c, judge=judge))


CANCEL_PATCH = [{"op": "replace", "path": "/orders/0/status", "value": "cancelled"}]


# ------------------------------------------------------------------ world


def test_patches_apply_and_replay_to_the_final_state():
    w = World(STATE)
    w.commit(CANCEL_PATCH, "call_1", "cancel_order")
    w.commit([{"op": "add", "path": "/orders/-", "value": {"id": "o-1003", "status": "open"}}], "call_2", "create")
    assert w.state["orders"][0]["status"] == "cancelled" and len(w.state["orders"]) == 3
    assert STATE["orders"][0]["status"] == "open"  # the initial state is never changed
    assert replay(w.initial, [p.patch for p in w.patches]) == w.state
    assert replay(w.initial, [p.patch for p in w.patches[:1]])["orders"][0]["status"] == "cancelled"


@pytest.mark.parametrize(
    "patch, why",
    [
        ([{"op": "replace", "path": "/orders/9/status", "value": "x"}], "does not apply"),
        ([{"op": "remove", "path": "/customers"}], "does not apply"),
        ([{"op": "replace", "path": "/orders", "value": {"a": 1}}], "was a list and became a object"),
        ([{"op": "replace", "path": "", "value": []}], "whole state"),
        ([{"op": "add", "path": "/blob", "value": "x" * 5000}], "over the limit"),
        ([{"op": "frobnicate", "path": "/orders"}], "patch"),
        ([{"op": "add", "path": "orders/-", "value": 1}], "does not apply"),
    ],
)
def test_bad_patches_are_refused_and_change_nothing(patch, why):
    w = World(STATE, max_bytes=2000)
    with pytest.raises(PatchRejected, match=why):
        w.commit(patch, "call_1", "t")
    assert w.state == STATE and w.patches == []


def test_patch_paths_are_the_pointers_of_the_state():
    paths = state_paths(STATE)
    assert {"/orders", "/orders/-", "/orders/0", "/orders/1/status"} <= set(paths)
    for p in paths:
        if not p.endswith("/-"):
            apply_patch(STATE, [{"op": "replace", "path": p, "value": STATE if p == "" else 0}], 1 << 20) if p.count(
                "/"
            ) >= 3 else None
    ops = sim_schema(order_tools()[1], {"type": "object"}, paths)["properties"]["patch"]["items"]["anyOf"]
    replace = next(o for o in ops if o["properties"]["op"] == {"const": "replace"})
    assert "/orders/-" not in replace["properties"]["path"]["enum"]  # only "add" may append


# ------------------------------------------------------------- tool calls


def test_unknown_tools_and_invalid_arguments_get_server_errors_without_a_model_call():
    client = ScriptedClient()  # any model call fails the test
    runner = ToolRunner(client, PROMPTS, cfg())
    ts = ToolSet.build(order_tools())
    w = World(STATE)
    faults = FaultInjector(FaultsConfig(enabled=False), 1)

    def call(name, args):
        c = {"id": "c1", "type": "function", "function": {"name": name, "arguments": args}}
        return asyncio.run(runner.execute(c, ts.by_name.get(name), w, faults, seed=1))

    out = call("drop_database", "{}")
    assert (out.executor, out.ok) == ("unknown_tool", False) and "Unknown tool: drop_database" in out.content
    out = call("get_order", '{"order_id": ')
    assert out.executor == "invalid_arguments" and "not valid JSON" in out.content
    out = call("get_order", "{}")
    assert out.executor == "invalid_arguments" and "'order_id' is a required property" in out.content
    out = call("get_order", '{"order_id": 5}')
    assert "5 is not of type 'string'" in json.loads(out.content)["error"]["message"]
    out = call("cancel_order", '{"order_id": "o-1", "force": true}')
    assert "Additional properties are not allowed" in out.content
    assert sum(client.calls.values()) == 0 and w.state == STATE


def test_the_simulator_is_asked_again_until_its_patch_applies():
    bad = {"result": {"ok": True}, "patch": [{"op": "replace", "path": "/orders/7/status", "value": "cancelled"}]}
    good = {"result": {"ok": True, "status": "cancelled"}, "patch": CANCEL_PATCH}
    client = ScriptedClient(tool_sim=[bad, good])
    runner = ToolRunner(client, PROMPTS, cfg())
    ts = ToolSet.build(order_tools())
    w = World(STATE)
    c = {"id": "c1", "type": "function", "function": {"name": "cancel_order", "arguments": '{"order_id": "o-1001"}'}}
    out = asyncio.run(
        runner.execute(c, ts.by_name["cancel_order"], w, FaultInjector(FaultsConfig(enabled=False), 1), seed=1)
    )
    assert out.ok and out.executor == "simulated" and out.attempts == 2 and out.patch == CANCEL_PATCH
    assert json.loads(out.content) == {"ok": True, "status": "cancelled"}


def test_read_only_tools_cannot_change_the_state():
    schema = sim_schema(order_tools()[0], {"type": "object"}, state_paths(STATE))
    assert schema["properties"]["patch"] == {"type": "array", "maxItems": 0}
    sneaky = {"result": {"id": "o-1001"}, "patch": CANCEL_PATCH}  # a server without grammar could send this
    client = ScriptedClient(tool_sim=[sneaky] * 3)
    runner = ToolRunner(client, PROMPTS, cfg())
    ts = ToolSet.build(order_tools())
    w = World(STATE)
    c = {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "o-1001"}'}}
    with pytest.raises(SimulatorFailure, match="read-only"):
        asyncio.run(
            runner.execute(c, ts.by_name["get_order"], w, FaultInjector(FaultsConfig(enabled=False), 1), seed=1)
        )
    assert client.calls["tool_sim"] == 3 and w.state == STATE


def test_a_result_must_match_the_output_schema():
    time_spec = order_tools()[2]
    client = ScriptedClient(
        tool_sim=[
            {"result": {"timezone": "UTC"}, "patch": []},
            {
                "result": {
                    "timezone": "UTC",
                    "datetime": "2026-01-01T00:00:00Z",
                    "day_of_week": "Thursday",
                    "is_dst": False,
                },
                "patch": [],
            },
        ]
    )
    runner = ToolRunner(client, PROMPTS, cfg())
    c = {"id": "c1", "type": "function", "function": {"name": "get_current_time", "arguments": '{"timezone": "UTC"}'}}
    out = asyncio.run(runner.execute(c, time_spec, World(STATE), FaultInjector(FaultsConfig(enabled=False), 1), seed=1))
    assert out.attempts == 2 and json.loads(out.content)["day_of_week"] == "Thursday"


# ------------------------------------------------------------------ faults


def test_the_fault_schedule_is_a_function_of_the_seed():
    fc = FaultsConfig.model_validate({"rates": dict.fromkeys(FAULT_KINDS, 0.1)})
    t = ToolTraits(open_world=True, read_only=True, simulated=True)
    a = [FaultInjector(fc, 42).draw(t) for _ in range(1)]
    inj1, inj2, inj3 = FaultInjector(fc, 42), FaultInjector(fc, 42), FaultInjector(fc, 43)
    s1 = [inj1.draw(t)[0] for _ in range(200)]
    assert s1 == [inj2.draw(t)[0] for _ in range(200)] and a[0][0] == s1[0]
    assert s1 != [inj3.draw(t)[0] for _ in range(200)]
    seen = Counter(s1)
    assert set(seen) == set(FAULT_KINDS) | {None} and 0.2 < seen[None] / 200 < 0.6  # 60% faults configured


def test_faults_only_hit_the_tools_they_fit():
    fc = FaultsConfig.model_validate({"rates": dict.fromkeys(FAULT_KINDS, 1 / 6)})
    closed_write = ToolTraits(open_world=False, read_only=False, simulated=True)
    real_open = ToolTraits(open_world=True, read_only=True, simulated=False)
    inj = FaultInjector(fc, 5)
    kinds = {inj.draw(closed_write)[0] for _ in range(300)}
    assert kinds == {"edge_case", None}  # no network fault on a closed-world tool, no partial/empty on a write
    kinds = {inj.draw(real_open)[0] for _ in range(300)}
    assert kinds == {*(k for k, f in FAULTS.items() if f.family == "network"), None}  # real execution: network only
    forced = FaultInjector(FaultsConfig(enabled=False), 5, force_first=True)
    assert forced.draw(closed_write) == ("transient_error", True) and forced.draw(closed_write) == (None, False)


def test_fault_rates_are_checked():
    with pytest.raises(Exception, match="summing to 1.5"):
        validate_config(
            {"rollouts": {"faults": {"rates": {**dict.fromkeys(FAULT_KINDS, 0), "timeout": 0.9, "edge_case": 0.6}}}}
        )


# ----------------------------------------------------------------- episodes


def user_says(*turns):
    return [{"message": m, "action": a} for m, a in turns]


def test_an_episode_records_a_valid_conversation_and_its_world():
    client = ScriptedClient(
        user_sim=user_says(("Please cancel order o-1001.", "continue"), ("Thanks, that is all.", "stop")),
        agent=[
            [("get_order", {"order_id": "o-1001"})],
            [("cancel_order", {"order_id": "o-1001"})],
            "Order o-1001 is cancelled.",
        ],
        tool_sim=[
            {"result": {"id": "o-1001", "status": "open"}, "patch": []},
            {"result": {"status": "cancelled"}, "patch": CANCEL_PATCH},
        ],
    )
    t = run(episode(), client)
    assert (t.status, t.reason, t.turns, t.tool_calls) == ("finished", "user_stop", 2, 2)
    assert conversation_problems(t.messages) == []
    assert [m["role"] for m in t.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert t.messages[-1]["content"].endswith(STOP)
    assert t.world_states.final["orders"][0]["status"] == "cancelled"
    assert replay(t.world_states.initial, [p.patch for p in t.world_states.patches]) == t.world_states.final
    assert [c.executor for c in t.calls] == ["simulated", "simulated"]
    assert t.usage["agent"]["calls"] == 3 and t.generated_tokens == 70
    assert [x["function"]["name"] for x in t.tools] == ["get_order", "cancel_order", "get_current_time"]
    row = Trajectory.from_row(t.to_row())  # survives the store's JSON columns
    assert row.messages == t.messages and row.world_states == t.world_states


def test_an_episode_keeps_the_engines_logprobs_of_each_agent_message_it_sampled_as_text():
    """The engine's (token, log-probability) of an agent message are kept under that message's index (RL's mask
    reads them); a native turn redone constrained sampled JSON, not the template's text, and keeps none."""
    tokens = [("Order", -0.1), (" o", -0.2), ("-1001", -0.3), (" is", -0.1), (" cancelled", -0.4), (".", -0.1)]
    redone = LLMResult(ok=True, role="agent", model="scripted", endpoint="fake", completion_tokens=10)
    redone.tool_calls = [
        {"id": "c1", "type": "function", "function": {"name": "cancel_order", "arguments": '{"order_id": "o-1001"}'}}
    ]
    redone.logprobs, redone.fallback = [("{", -0.5)], "constrained"
    reply = LLMResult(ok=True, role="agent", model="scripted", endpoint="fake", completion_tokens=6)
    reply.content, reply.logprobs = "Order o-1001 is cancelled.", tokens
    client = ScriptedClient(
        user_sim=user_says(("Please cancel order o-1001.", "continue"), ("Thanks, that is all.", "stop")),
        agent=[redone, reply],
        tool_sim=[{"result": {"status": "cancelled"}, "patch": CANCEL_PATCH}],
    )
    t = run(episode(), client)
    assert t.status == "finished" and list(t.agent_logprobs) == ["4"]
    assert t.messages[4]["content"] == "Order o-1001 is cancelled." and t.agent_logprobs["4"] == tokens
    stored = Trajectory.from_row(t.to_row()).agent_logprobs  # through the store's JSON column
    assert [tuple(x) for x in stored["4"]] == tokens


def test_the_user_sees_no_tool_traffic_and_ends_with_its_token():
    msgs = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]},
        {"role": "tool", "tool_call_id": "c", "content": "{}"},
        {"role": "assistant", "content": "done"},
    ]
    assert user_view(msgs) == [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "done"}]
    assert with_token("ok ###STOP### bye", "stop") == "ok  bye ###STOP###" and with_token("fine", "continue") == "fine"


@pytest.mark.parametrize(
    "over, agent, status",
    [
        ({"max_tool_calls": 2}, lambda m: [("get_order", {"order_id": "o-1001"})], "max_tool_calls"),
        ({"max_turns": 2}, lambda m: "Could you tell me more?", "max_turns"),
        ({"max_tokens": 25}, lambda m: "Could you tell me more?", "max_tokens"),
        (
            {"max_agent_steps_per_turn": 2, "max_tool_calls": 50},
            lambda m: [("get_order", {"order_id": "o-1001"})],
            "max_tool_calls",
        ),
    ],
)
def test_limits_end_an_episode_with_their_status(over, agent, status):
    client = ScriptedClient(
        user_sim=lambda m: {"message": "Cancel o-1001.", "action": "continue"},
        agent=agent,
        tool_sim=lambda m: {"result": {"status": "open"}, "patch": []},
    )
    t = run(episode(), client, cfg(**over))
    assert t.status == status and conversation_problems(t.messages) == []


def test_a_simulator_failure_is_an_error_and_the_conversation_stays_valid():
    client = ScriptedClient(
        user_sim=user_says(("Cancel o-1001.", "continue")),
        agent=[[("cancel_order", {"order_id": "o-1001"})]],
        tool_sim=lambda m: LLMResult(
            ok=False,
            role="tool_sim",
            model="x",
            endpoint="x",
            error="reply is not JSON",
            error_kind="parse",
            raw="{oops",
        ),
    )
    t = run(episode(), client)
    assert t.status == "error" and t.reason.startswith("tool_sim_failed") and t.raw == "{oops"
    assert conversation_problems(t.messages) == [] and t.messages[-1]["role"] == "user"


def test_an_invalid_user_reply_is_asked_again_and_never_enters_the_episode():
    runaway = LLMResult(
        ok=False,
        role="user_sim",
        model="x",
        endpoint="x",
        error="reply is not JSON (finish_reason=length)",
        error_kind="parse",
        raw='{"message": "2023-04-28 2023-04-28 2023-04-28',
    )

    def client():
        return ScriptedClient(
            user_sim=[runaway, *user_says(("Cancel o-1001.", "continue"), ("Thanks.", "stop"))],
            agent=[[("cancel_order", {"order_id": "o-1001"})], "Order o-1001 is cancelled."],
            tool_sim=[{"result": {"status": "cancelled"}, "patch": CANCEL_PATCH}],
        )

    c = client()
    t = run(episode(), c, cfg(user_sim_attempts=2))
    assert (t.status, t.reason) == ("finished", "user_stop") and c.calls["user_sim"] == 3
    assert not any("2023-04-28" in (m.get("content") or "") for m in t.messages)
    # one attempt: the same runaway reply ends the episode as a simulator failure, with its raw text
    t = run(episode(), client(), cfg(user_sim_attempts=1))
    assert t.status == "error" and t.reason.startswith("user_sim_failed: parse") and "2023-04-28" in t.raw


def test_a_reply_that_is_not_prose_is_sampled_again_and_counted():
    """SmolLM2 answered a tool result with '[{id: 1, ...}]' or a looping date about a third of the time; such a
    reply is sampled again (rollouts.reply_attempts), and the trajectory counts it."""
    garbled = ['[{"order_id": "o-1001"}]', "2023-08-17 14:39:59.72, 2023-08-17 14:39:59.72, 2023-08-17 14:39:59.72"]

    def client(*replies):
        return ScriptedClient(
            user_sim=user_says(("Cancel o-1001.", "continue"), ("Thanks.", "stop")),
            agent=[[("cancel_order", {"order_id": "o-1001"})], *replies],
            tool_sim=[{"result": {"status": "cancelled"}, "patch": CANCEL_PATCH}],
        )

    c = client(*garbled, "Order o-1001 is cancelled.")
    t = run(episode(), c, cfg(reply_attempts=3))
    assert t.status == "finished" and t.reply_resamples == 2 and c.calls["agent"] == 4
    assert [m["content"] for m in t.messages if m["role"] == "assistant" and m.get("content")] == [
        "Order o-1001 is cancelled."
    ]
    # one sample: the garbled reply is the agent's, for the judge to drop
    t = run(episode(), client(*garbled, "Order o-1001 is cancelled."), cfg(reply_attempts=1))
    assert t.reply_resamples == 0 and garbled[0] in [m.get("content") for m in t.messages]
    # attempts used up: the last sample stays
    t = run(episode(), client(*garbled, "Order o-1001 is cancelled."), cfg(reply_attempts=2))
    assert t.reply_resamples == 1 and garbled[1] in [m.get("content") for m in t.messages]
    # a one-word reply ("cancelled", "success") says nothing a user can use: sampled again too
    c = client("cancelled", "Order o-1001 is cancelled.")
    t = run(episode(), c, cfg(reply_attempts=3))
    assert t.reply_resamples == 1 and "cancelled" not in [m.get("content") for m in t.messages]


def lookup_client(*replies) -> ScriptedClient:
    """A user who asks o-1001's status, the agent's read of it, then the agent's `replies` in turn."""
    return ScriptedClient(
        user_sim=user_says(("What is the status of o-1001?", "continue"), ("Thanks.", "stop")),
        agent=[[("get_order", {"order_id": "o-1001"})], *replies],
        tool_sim=[{"result": {"order_id": "o-1001", "status": "shipped", "total": 500.0}, "patch": []}],
    )


def replies(t) -> list[str]:
    """The agent's text replies, in order."""
    return [m["content"] for m in t.messages if m["role"] == "assistant" and m.get("content")]


def test_a_reply_that_ignores_the_result_it_answers_is_sampled_again():
    """SmolLM2 read order o-1001, then answered "Done." or with a date the record never had: a reply to a tool
    result that succeeded and quotes none of its values is sampled again (rollouts.reply_uses_result)."""

    c = lookup_client("All done, have a nice day.", "Order o-1001 is shipped; its total was 500.")
    t = run(episode(), c, cfg(reply_attempts=3))
    assert t.reply_resamples == 1 and replies(t) == ["Order o-1001 is shipped; its total was 500."]
    # off: the first reply stays
    t = run(episode(), lookup_client("All done, have a nice day.", "x"), cfg(reply_attempts=3, reply_uses_result=False))
    assert t.reply_resamples == 0 and replies(t) == ["All done, have a nice day."]
    # when every later sample is not prose, the prose reply stays rather than the last garbled one
    t = run(episode(), lookup_client("All done, have a nice day.", '[{"order_id": "o-1001"}]'), cfg(reply_attempts=2))
    assert replies(t) == ["All done, have a nice day."]


def test_a_reply_the_judges_checks_reject_is_sampled_again():
    """P3 kept "The patient was discharged from the clinic" and P2 "The growth team's echoj has 4 users": a reply the
    judge's own checks would reject for what it says (an invented event, a value nothing showed) is sampled again
    (rollouts.reply_passes_checks), as one that is not prose is; the judge still reads the whole episode."""

    invented = "Order o-1001 is shipped; it was insured for 750.25 and was refrigerated."
    good = "Order o-1001 is shipped; its total was 500."
    t = run(episode(), lookup_client(invented, good), cfg(reply_attempts=3))
    assert t.reply_resamples == 1 and replies(t) == [good]
    # off, or one sample: the first reply stays, for the judge to drop
    t = run(episode(), lookup_client(invented, good), cfg(reply_attempts=3, reply_passes_checks=False))
    assert t.reply_resamples == 0 and replies(t) == [invented]
    t = run(episode(), lookup_client(invented, good), cfg(reply_attempts=1))
    assert replies(t) == [invented]


def test_a_read_made_again_with_the_same_arguments_is_sampled_again():
    """Sampled again for a reply that ignored the result, SmolLM2 called the same list four times instead: a read
    that already succeeded with the same arguments is sampled again too, and the reply after it stays."""
    from pathlib import Path

    from worldsmith.worldmodel.packs import load_pack, seed_world

    shop = load_pack(Path(__file__).resolve().parent.parent / "worlds" / "shop", today="2026-03-02")
    state = seed_world(shop.world, 3, shop.records)
    order = state["orders"][0]
    task = cancel_task().model_copy(update={"initial_state": state})
    agent = order_agent(shop.tools).model_copy(update={"world_id": shop.world.world_id})
    ep = Episode("trj_repeat", task, agent, ToolSet.build(shop.tools), 0, 7)
    again = [("get_order", {"order_id": order["order_id"]})]
    reply = f"Order {order['order_id']} is {order['status']}."

    client = None

    def play(c):
        nonlocal client
        client = ScriptedClient(
            user_sim=user_says((f"What is the status of {order['order_id']}?", "continue"), ("Thanks.", "stop")),
            agent=[again, again, reply],
        )
        return asyncio.run(run_episode(ep, client, PROMPTS, c, worlds={shop.world.world_id: shop.world}))

    t = play(cfg(reply_attempts=3))
    assert len(t.calls) == 1 and t.reply_resamples == 1
    assert [m["content"] for m in t.messages if m["role"] == "assistant" and m.get("content")] == [reply]
    # the sample after the repeat is offered no tool: what it would read again is in the conversation (offered
    # the tools again, SmolLM2 sent the same list four times, and a default run lost half its episodes at the limit)
    assert client.grammars[1] != [] and client.grammars[2] == []
    t = play(cfg(reply_attempts=1))  # one sample: the repeat is the agent's
    assert len(t.calls) == 2


def test_a_reply_before_reading_the_record_that_holds_the_answer_is_sampled_again_as_that_read():
    """follow_reference: asked the destination of the flight of a booking, SmolLM2 read the booking and wrote
    about the flight without reading it. A reply right after a result, while the user named a field (and its
    entity) that no result has shown and a result named the record's key, is sampled again as a call, the
    grammar narrowed to the get of that record (rollouts.read_before_reply)."""
    from worldsmith.worldmodel.packs import load_pack, seed_world

    air = load_pack(ROOT / "worlds" / "airline", today="2026-03-02")
    state = seed_world(air.world, 3, air.records)
    booking = state["bookings"][0]
    flight = next(f for f in state["flights"] if f["flight_id"] == booking["flight_id"])
    task = cancel_task().model_copy(update={"initial_state": state})
    agent = order_agent(air.tools).model_copy(update={"world_id": air.world.world_id})
    ep = Episode("trj_ref", task, agent, ToolSet.build(air.tools), 0, 7)
    ask = f"What is the destination of the flight of booking {booking['booking_id']}?"
    early = f"Booking {booking['booking_id']} is {booking['status']}; the flight is on time."
    answer = f"That flight goes to {flight['destination']}."

    def play(c, *replies):
        client = ScriptedClient(
            user_sim=user_says((ask, "continue"), ("Thanks.", "stop")),
            agent=[[("get_booking", {"booking_id": booking["booking_id"]})], *replies],
        )
        t = asyncio.run(run_episode(ep, client, PROMPTS, c, worlds={air.world.world_id: air.world}))
        return t, client

    read = [("get_flight", {"flight_id": flight["flight_id"]})]
    t, client = play(cfg(reply_attempts=3), early, read, answer)
    assert [c.name for c in t.calls] == ["get_booking", "get_flight"] and t.reply_resamples == 1
    forced = client.grammars[2]  # the step after the early reply: only the flight's get, on the key the booking named
    assert [g["function"]["name"] for g in forced] == ["get_flight"]
    assert forced[0]["function"]["parameters"]["properties"]["flight_id"]["enum"] == [flight["flight_id"].lower()]
    replies = [m["content"] for m in t.messages if m["role"] == "assistant" and m.get("content")]
    assert replies == [answer]
    # the reply after the flight's result had to say its destination (rollouts.reply_quotes_asked); before it, no
    # result held a field the user named
    assert client.quotes[3] == [flight["destination"]] and not any(client.quotes[:3])
    t, client = play(cfg(reply_attempts=3, reply_quotes_asked=False), early, read, answer)
    assert client.quotes[3] is None
    # off: the early reply stays
    t, _ = play(cfg(reply_attempts=3, read_before_reply=False), early, read, answer)
    assert [c.name for c in t.calls] == ["get_booking"] and early in [m.get("content") for m in t.messages]
    # a field the booking's result has already shown ("the seat of booking ...") asks for no other read
    seat = f"Your seat is {booking['seat']}."
    client = ScriptedClient(
        user_sim=user_says((f"What is the seat of booking {booking['booking_id']}?", "continue"), ("Thanks.", "stop")),
        agent=[[("get_booking", {"booking_id": booking["booking_id"]})], seat],
    )
    t = asyncio.run(run_episode(ep, client, PROMPTS, cfg(reply_attempts=3), worlds={air.world.world_id: air.world}))
    assert t.reply_resamples == 0 and [c.name for c in t.calls] == ["get_booking"]


def test_every_step_is_offered_the_tools_of_the_records_the_user_named():
    """rollouts.tools_the_user_named: asked about a member, the agent's steps may call the members' tools, not the
    loans' list (the pack's actions, asked in their own words, stay when their keys are known): not first, and not
    once the member is read either; off, every tool the grounding allows. SmolLM2 picked a crawled bundle's other
    tool often (get_symbols for the projects), and with a transaction read, read its account and answered about it."""
    from worldsmith.worldmodel.packs import load_pack, seed_world

    lib = load_pack(ROOT / "worlds" / "library", today="2026-03-02")
    state = seed_world(lib.world, 3, lib.records)
    member = state["members"][0]
    task = cancel_task().model_copy(update={"initial_state": state})
    agent = order_agent(lib.tools).model_copy(update={"world_id": lib.world.world_id})
    ep = Episode("trj_named", task, agent, ToolSet.build(lib.tools), 0, 7)

    def offers(c) -> list[set[str]]:
        client = ScriptedClient(
            user_sim=user_says(
                (f"What are the fines due of member {member['member_id']}?", "continue"), ("Thanks.", "stop")
            ),
            agent=[[("get_member", {"member_id": member["member_id"]})], f"They owe {member['fines_due']}."],
        )
        asyncio.run(run_episode(ep, client, PROMPTS, c, worlds={lib.world.world_id: lib.world}))
        return [{g["function"]["name"] for g in grammar} for grammar in client.grammars[:2]]

    # after the member's result: the member is read (not offered again), the loans were not asked about
    assert offers(cfg()) == [{"get_member"}, set()]
    assert offers(cfg(tools_the_user_named=False)) == [{"get_member", "list_member_loans"}, {"list_member_loans"}]


def test_restraint_decoding_offers_no_tool_where_none_applies_and_reads_only_where_the_gold_changes_nothing():
    """rollouts.restraint_decoding, led by the executed gold: an irrelevance task's steps are offered no tool and the
    reply must say it cannot (SmolLM2 read the record on 22 of 24 such episodes and declined in none); an
    already-done task ("return the book of loan ln-1", already returned) is offered the reads only, not the action
    the world would refuse. Off: every tool the grounding allows, and no decline asked."""
    from worldsmith.tasks.blueprint import BlueprintFailure, blueprint_record, rubric_from, sample_blueprint
    from worldsmith.vocab import ALREADY_OPENINGS, DECLINE_OPENINGS
    from worldsmith.worldmodel.packs import load_pack
    from worldsmith.worldmodel.runner import is_read_only

    lib = load_pack(ROOT / "worlds" / "library", today="2026-03-02")
    agent = order_agent(lib.tools).model_copy(update={"world_id": lib.world.world_id})
    toolset = ToolSet.build(lib.tools)

    def task_for(difficulty: str):
        for seed in range(40):
            try:
                d = sample_blueprint(lib.world, lib.tools, difficulty, seed)
            except BlueprintFailure:
                continue
            return d, cancel_task(difficulty).model_copy(
                update={
                    "initial_state": d.initial,
                    "user_goal": UserGoal(request=f"Please {d.goal}.", facts=d.facts),
                    "rubric": rubric_from(lib.world, d),
                    "blueprint": blueprint_record(d, "grammar", []),
                }
            )
        raise AssertionError(f"no {difficulty} task on the library pack")

    def play(task, agent_script, c):
        client = ScriptedClient(
            user_sim=user_says((task.user_goal.request, "continue"), ("Thanks.", "stop")), agent=agent_script
        )
        ep = Episode("trj_restraint", task, agent, toolset, 0, 7)
        asyncio.run(run_episode(ep, client, PROMPTS, c, worlds={lib.world.world_id: lib.world}))
        return client

    _, irrelevant = task_for("irrelevance")
    client = play(irrelevant, ["I'm sorry, but I can't do that: none of my tools can."], cfg())
    assert client.grammars[0] == [] and client.openings[0] == list(DECLINE_OPENINGS)
    client = play(irrelevant, ["I'm sorry, but I can't do that: none of my tools can."], cfg(restraint_decoding=False))
    assert client.grammars[0] and client.openings[0] is None

    d, done = task_for("already_done")
    (read,) = d.steps
    script = [[(read.tool.name, read.arguments)], "It is already done."]
    client = play(done, script, cfg())
    offered = {g["function"]["name"] for g in client.grammars[0]}
    assert offered and all(is_read_only(toolset.by_name[n]) for n in offered), offered
    # right after the read, the reply opens by saying the record is already in the state the gold read
    ((_, value),) = d.asked.items()
    key = read.arguments[read.tool.binding.key_param]
    assert client.quotes[1] == [f"{key} is already {value}"] and client.openings[1] == list(ALREADY_OPENINGS)

    # a refusal: the record read, the reply declines and says the state that forbids it ("ln-1 is returned")
    d, refused = task_for("refusal")
    ((label, value),) = d.asked.items()
    key = next(str(v) for v in d.facts.values() if str(v) in label.split())
    get = next(t for t in lib.tools if t.binding.action == "get" and key in str(d.initial[t.binding.collection]))
    client = play(refused, [[(get.name, {get.binding.key_param: key})], "Sorry."], cfg())
    assert client.openings[1] and all(o.endswith("help with that:") for o in client.openings[1]), client.openings[1]
    assert client.quotes[1] == [f"{key} is {value}"]
    offered_off = {g["function"]["name"] for g in play(done, script, cfg(restraint_decoding=False)).grammars[0]}
    assert any(not is_read_only(toolset.by_name[n]) for n in offered_off), offered_off


def test_a_write_made_again_with_the_same_arguments_is_sampled_again():
    """SmolLM2 sent one transfer four times, each a new transaction: a call that already succeeded with the same
    arguments is sampled again (offered no tool), so the user's money moves once; the reply confirms it by name."""
    from worldsmith.worldmodel.packs import load_pack, seed_world

    bank = load_pack(ROOT / "worlds" / "bank", today="2026-03-02")
    state = seed_world(bank.world, 3, bank.records)
    source, target = state["accounts"][:2]
    for a in (source, target):
        a["status"], a["balance"] = "active", 500.0
    task = cancel_task().model_copy(update={"initial_state": state})
    agent = order_agent(bank.tools).model_copy(update={"world_id": bank.world.world_id})
    ep = Episode("trj_twice", task, agent, ToolSet.build(bank.tools), 0, 7)
    transfer = [
        ("transfer_funds", {"account_id": source["account_id"], "to_account_id": target["account_id"], "amount": 20.0})
    ]
    ask = f"Please transfer 20.0 from account {source['account_id']} to account {target['account_id']}."
    done = f"I moved 20.0 from {source['account_id']} to {target['account_id']}."

    def play(c):
        client = ScriptedClient(
            user_sim=user_says((ask, "continue"), ("Thanks.", "stop")), agent=[transfer, transfer, done]
        )
        return asyncio.run(run_episode(ep, client, PROMPTS, c, worlds={bank.world.world_id: bank.world})), client

    t, client = play(cfg(reply_attempts=3))
    assert [c.name for c in t.calls] == ["transfer_funds"] and t.reply_resamples == 1
    assert client.grammars[2] == [] and done in [m.get("content") for m in t.messages]
    # the reply after the change had to name it: one of the transfer's own arguments (rollouts.reply_quotes_asked;
    # SmolLM2 confirmed a cancelled ord-2003 as "Cancel order of order-2003")
    assert client.quotes[0] == [] and client.quotes[1] == [source["account_id"], target["account_id"], "20.0"]
    _, client = play(cfg(reply_attempts=3, reply_quotes_asked=False))
    assert client.quotes[1] is None
    t, _ = play(cfg(reply_attempts=1))  # one sample: the repeat is the agent's, and moves the money twice
    assert [c.name for c in t.calls] == ["transfer_funds", "transfer_funds"]


def test_a_value_the_world_found_no_record_by_is_not_offered_again():
    """A tool that names its record by one field (a crawled `remove_project_tool(name)`): asked to remove "Harbor
    project", SmolLM2 sent "Harbor" four times, each not_found. The value the world found nothing by is left out of
    the next step's grammar; a call the world refused, sent again as it was, is sampled again like a repeated
    success. An injected fault is no refusal: the same call may be retried."""
    from worldsmith.records import ToolBinding
    from worldsmith.tools.evolve import bound_spec
    from worldsmith.worldmodel.packs import load_pack, seed_world

    lib = load_pack(ROOT / "worlds" / "library", today="2026-03-02")
    state = seed_world(lib.world, 3, lib.records)
    member = state["members"][0]
    first = member["full_name"].split()[0]
    by_name = bound_spec(
        lib.world,
        ToolBinding(world_id=lib.world.world_id, collection="members", action="get", match={"full_name": "full_name"}),
        "get_member_by_name",
        "A member, by full name.",
        request_id="req-by-name",
        named_by="code",
    )
    by_name = by_name.model_copy(
        update={
            "input_schema": {
                "type": "object",
                "properties": {"full_name": {"type": "string"}},
                "required": ["full_name"],
                "additionalProperties": False,
            }
        }
    )
    task = cancel_task().model_copy(update={"initial_state": state})
    agent = order_agent([by_name]).model_copy(update={"world_id": lib.world.world_id})
    ep = Episode("trj_refused", task, agent, ToolSet.build([by_name]), 0, 7)
    ask = f"What is the email of member {member['full_name']}?"

    def play(*steps):
        client = ScriptedClient(user_sim=user_says((ask, "continue"), ("Thanks.", "stop")), agent=list(steps))
        t = asyncio.run(run_episode(ep, client, PROMPTS, cfg(reply_attempts=3), worlds={lib.world.world_id: lib.world}))
        return t, client

    wrong = [("get_member_by_name", {"full_name": first})]
    right = [("get_member_by_name", {"full_name": member["full_name"]})]
    t, client = play(wrong, right, f"Their email is {member['email']}.")
    assert [c.ok for c in t.calls] == [False, True] and t.calls[0].error.startswith("not_found"), t.calls
    offered = client.grammars[1][0]["function"]["parameters"]["properties"]["full_name"]["enum"]
    assert first not in offered and member["full_name"] in offered
    # sent again as it was (an ungrounded policy may): sampled again, offered no tool
    t, client = play(wrong, wrong, "I found no member by that name.")
    assert len(t.calls) == 1 and t.reply_resamples == 1 and client.grammars[2] == []


def test_a_reply_that_meets_the_goal_at_the_turn_limit_is_closed_by_the_user():
    """max_turns counts the user's messages that ask for more. At the limit, a reply that meets a blueprint task's
    goal is still closed by the user's stop (finished: the judge can keep it); one that does not ends at max_turns.
    Before, at max_turns 2 a second reply could never finish, whatever it said."""
    from worldsmith.records import Persona, Task, UserGoal
    from worldsmith.tasks.blueprint import blueprint_record, rubric_from, sample_blueprint
    from worldsmith.worldmodel.packs import load_pack

    air = load_pack(ROOT / "worlds" / "airline", today="2026-03-02")
    d = next(
        d
        for seed in range(40)
        if (d := sample_blueprint(air.world, air.tools, "single_call", seed)).asked and len(d.calls) == 1
    )
    (call,) = d.calls
    task = Task(
        task_id="tsk_lookup",
        agent_id="a",
        difficulty="single_call",
        world_id=air.world.world_id,
        user_persona=Persona(),
        initial_state=d.initial,
        user_goal=UserGoal(request="What I want: " + d.goal, facts=d.facts),
        rubric=rubric_from(air.world, d),
        blueprint=blueprint_record(d, "grammar", []),
    )
    agent = order_agent(air.tools).model_copy(update={"world_id": air.world.world_id})
    ep = Episode("trj_limit", task, agent, ToolSet.build(air.tools), 0, 7)
    answer = " and ".join(f"the {field} is {value}" for field, value in d.asked.items())

    def play(second_reply: str) -> tuple[Trajectory, ScriptedClient]:
        client = ScriptedClient(
            user_sim=user_says(("Go on, please.", "continue"), ("Thanks, that is all.", "stop")),
            agent=[[(call.tool, call.arguments)], "Let me see what I can do.", second_reply],
        )
        c = cfg(max_turns=2, reply_attempts=1, read_before_reply=False)
        return asyncio.run(run_episode(ep, client, PROMPTS, c, worlds={air.world.world_id: air.world})), client

    t, client = play(f"Here it is: {answer}.")
    assert t.status == "finished" and t.turns == 3 and t.messages[-1]["content"].endswith(STOP)
    assert client.calls["user_sim"] == 2
    t, client = play("I could not find that, sorry.")
    assert t.status == "max_turns" and t.turns == 2 and client.calls["user_sim"] == 1


def test_ignores_result_reads_values_as_a_reply_writes_them():
    tool = {
        "role": "tool",
        "tool_call_id": "c",
        "content": '{"cards": [{"id": "crd-1", "limit": 500.0}, {"id": "crd-2"}]}',
    }
    assert not ignores_result("You have 2 cards.", [tool])  # a list's length is an answer
    assert not ignores_result("Its limit is 500.", [tool]) and not ignores_result("crd-2 is yours.", [tool])
    assert ignores_result("Done.", [tool]) and ignores_result("It is 2026-05-01.", [tool])
    assert not ignores_result("Done.", [{**tool, "content": '{"error": {"code": "not_found"}}'}])  # an error
    assert not ignores_result("Done.", [{"role": "user", "content": "hi"}])  # not after a tool result


def test_malformed_agent_output_is_recorded_with_its_reason():
    bad = LLMResult(
        ok=False,
        role="agent",
        model="x",
        endpoint="x",
        error="reply does not match the schema",
        error_kind="schema",
        raw='{"tool_calls": []}',
    )
    client = ScriptedClient(user_sim=user_says(("Cancel o-1001.", "continue")), agent=[bad])
    t = run(episode(), client, cfg(reply_attempts=1))
    assert (
        t.status == "error"
        and t.reason == "agent_output: schema: reply does not match the schema"
        and t.raw == '{"tool_calls": []}'
    )
    # sampled again up to reply_attempts; when every sample fails, the last one ends the episode, recorded
    client = ScriptedClient(user_sim=user_says(("Cancel o-1001.", "continue")), agent=[bad, bad, bad])
    t = run(episode(), client, cfg(reply_attempts=3))
    assert t.status == "error" and t.reply_resamples == 2 and client.calls["agent"] == 3 and t.raw == bad.raw


def test_error_recovery_tasks_fail_the_first_call_and_record_it():
    client = ScriptedClient(
        user_sim=user_says(("Cancel o-1001.", "continue"), ("Thanks.", "stop")),
        agent=[
            [("cancel_order", {"order_id": "o-1001"})],
            [("cancel_order", {"order_id": "o-1001"})],
            "Done: o-1001 is cancelled.",
        ],
        tool_sim=[{"result": {"status": "cancelled"}, "patch": CANCEL_PATCH}],
    )
    t = run(
        episode(cancel_task("error_recovery")),
        client,
        cfg(faults={"enabled": True, "rates": dict.fromkeys(FAULT_KINDS, 0)}),
    )
    assert t.faults == [
        FaultEvent(turn=1, call_id=t.calls[0].call_id, tool="cancel_order", kind="transient_error", forced=True)
    ]
    assert [c.executor for c in t.calls] == ["fault", "simulated"] and "503" in t.messages[3]["content"]
    assert t.status == "finished" and t.world_states.final["orders"][0]["status"] == "cancelled"


def test_first_step_of_a_tool_task_must_call_a_tool():
    seen = []

    class Spy(ScriptedClient):
        async def tool_step(self, role, messages, tools, require_tool=False, seed=None, **kw):
            seen.append(require_tool)
            return await super().tool_step(role, messages, tools, require_tool, seed, **kw)

    script = {
        "user_sim": user_says(("Cancel o-1001.", "continue"), ("ok", "stop")),
        "agent": [[("get_order", {"order_id": "o-1001"})], "It is open."],
        "tool_sim": [{"result": {"status": "open"}, "patch": []}],
    }
    run(episode(), Spy(**script))
    assert seen == [True, False]
    seen.clear()
    run(
        episode(cancel_task("clarification")),
        Spy(
            **{
                **script,
                "agent": ["Which order?"],
                "user_sim": user_says(("Cancel my order.", "continue"), ("o-1001", "stop")),
            }
        ),
    )
    assert seen == [False]


# ------------------------------------------------------------------ resume

RESUME_SCRIPT = r"""
import asyncio, json, random, sys, time
sys.path.insert(0, sys.argv[2])
from test_rollouts import ScriptedClient
from scripted_worlds import cancel_task, order_agent, order_tools, scripted_context
from worldsmith.config import validate_config
from worldsmith.llm import Prompts
from worldsmith.rollouts.stage import make_rollouts
from worldsmith.store import RunStore

class Slow(ScriptedClient):
    async def structured(self, *a, **k):
        await asyncio.sleep(random.uniform(0.05, 0.3))
        return await super().structured(*a, **k)

cfg = validate_config({"rollouts": {"samples_per_task": 4, "concurrency": 3, "faults": {"enabled": False},
                                     "real_execution": {"enabled": False}}})
store = RunStore(sys.argv[1], "resume")
if not store.count(__import__("worldsmith.records", fromlist=["Task"]).Task):
    tools = order_tools()
    store.append(tools); store.append([order_agent(tools)])
    store.append([cancel_task(task_id=f"tsk_{i}") for i in range(5)])
client = Slow(user_sim=lambda m: {"message": "thanks" if len(m) > 3 else "cancel o-1001",
                                  "action": "stop" if len(m) > 3 else "continue"},
              agent=lambda m: "It is done.", tool_sim=lambda m: {"result": {}, "patch": []})
ctx = scripted_context(client, cfg=cfg, root=__import__("pathlib").Path(sys.argv[3]), run_id="resume", store=store,
                       prompts=Prompts(sys.argv[3] + "/prompts"))
print(json.dumps(asyncio.run(make_rollouts(ctx))), flush=True)
"""


def test_a_killed_rollout_resumes_without_duplicates_or_losses(tmp_path):
    from worldsmith.store import RunStore

    script = tmp_path / "resume.py"
    script.write_text(RESUME_SCRIPT)
    data = tmp_path / "data"
    args = [sys.executable, str(script), str(data), str(ROOT / "tests"), str(ROOT)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests")}
    store_dir = data / "runs" / "resume" / "trajectories"
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(store_dir.glob("part-*.parquet"))) < 6:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = {t.trajectory_id: t.created_at for t in RunStore(data, "resume").read(Trajectory)}
    assert 6 <= len(before) < 20, "the kill should land mid-run"
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts["new"] == 20 - len(before) and counts["trajectories"] == 20
    after = RunStore(data, "resume").read(Trajectory)
    ids = [t.trajectory_id for t in after]
    assert len(ids) == len(set(ids)) == 20  # nothing twice
    assert all(
        any(t.trajectory_id == i and t.created_at == c for t in after) for i, c in before.items()
    )  # nothing finished redone
    # a kill during a write leaves at most a temporary file, which no reader ever sees
    assert all(p.name.endswith(".parquet") for p in RunStore(data, "resume").shards("trajectories"))
    assert len(list(store_dir.glob("*.tmp"))) <= 1


# ------------------------------------------------------- real execution (MCP)


def test_safe_tools_run_for_real_through_mcp(time_cache, tmp_path):
    from worldsmith.mcp.executor import RealExecutor

    real = RealExecutor.from_config(
        ["time"], ROOT / "tool_specs" / "servers.yaml", str(time_cache), 30, tmp_path / "logs"
    )
    client = ScriptedClient()  # no model call: the server answers
    runner = ToolRunner(client, PROMPTS, cfg(), real)
    spec = order_tools()[2]
    no_faults = FaultInjector(FaultsConfig(enabled=False), 1)

    async def go():
        try:
            calls = [
                {
                    "id": f"c{i}",
                    "type": "function",
                    "function": {"name": "get_current_time", "arguments": json.dumps({"timezone": tz})},
                }
                for i, tz in enumerate(["Europe/Paris", "Asia/Tokyo", "Mars/Olympus"])
            ]
            return await asyncio.gather(*(runner.execute(c, spec, World(STATE), no_faults, seed=1) for c in calls))
        finally:
            await real.aclose()

    paris, tokyo, mars = asyncio.run(go())
    assert (paris.executor, paris.ok) == ("real", True) and json.loads(paris.content)["timezone"] == "Europe/Paris"
    assert json.loads(tokyo.content)["timezone"] == "Asia/Tokyo" and paris.patch == []
    assert (mars.executor, mars.ok) == ("real", False) and "Mars/Olympus" in mars.content
    assert sum(client.calls.values()) == 0


def test_only_servers_marked_safe_may_run_for_real(tmp_path):
    from worldsmith.mcp.executor import RealExecutor

    with pytest.raises(ValueError, match="not marked safe_to_execute"):
        RealExecutor.from_config(["fetch"], ROOT / "tool_specs" / "servers.yaml", str(tmp_path), 30, tmp_path)
    with pytest.raises(ValueError, match="not in"):
        RealExecutor.from_config(["nope"], ROOT / "tool_specs" / "servers.yaml", str(tmp_path), 30, tmp_path)


def test_a_server_that_cannot_start_is_simulated_instead(tmp_path):
    from worldsmith.mcp import ServerEntry
    from worldsmith.mcp.executor import RealExecutor

    broken = ServerEntry(name="time", command=[sys.executable, "-c", "import sys; sys.exit(3)"], safe_to_execute=True)
    real = RealExecutor([broken], tmp_path, 10, tmp_path / "logs")
    answer = {"timezone": "UTC", "datetime": "2026-01-01T00:00:00Z", "day_of_week": "Thursday", "is_dst": False}
    client = ScriptedClient(tool_sim=[{"result": answer, "patch": []}])
    runner = ToolRunner(client, PROMPTS, cfg(), real)
    c = {"id": "c1", "type": "function", "function": {"name": "get_current_time", "arguments": '{"timezone": "UTC"}'}}
    out = asyncio.run(
        runner.execute(c, order_tools()[2], World(STATE), FaultInjector(FaultsConfig(enabled=False), 1), seed=1)
    )
    assert out.executor == "simulated" and json.loads(out.content) == answer
    assert "time" in real.unavailable


# -------------------------------------------------- against the real engine


@pytest.mark.engine
def test_rollouts_against_the_embedded_server(tmp_path, project_root, llamacpp_server, time_cache):
    """Real episodes with SmolLM2 playing agent, user and tool simulator, the time server
    executing its tool: each ends by a stop, a limit or a recorded error, in valid OpenAI format."""
    from conftest import llm_config

    from worldsmith.config import PipelineConfig
    from worldsmith.context import RunContext
    from worldsmith.rollouts.stage import make_rollouts
    from worldsmith.store import RunStore

    llm = llm_config(llamacpp_server.url, temperature=0.7, max_tokens=256, frequency_penalty=0.3)
    cfg_ = PipelineConfig.model_validate(
        {
            "llm": llm.model_dump(),
            "crawl": {"cache_dir": str(time_cache)},
            "tools": {"servers_file": str(project_root / "tool_specs" / "servers.yaml")},
            "rollouts": {
                "samples_per_task": 2,
                "max_turns": 2,
                "max_tool_calls": 3,
                "max_tokens": 1500,
                "concurrency": 4,
            },
        }
    )
    store = RunStore(tmp_path / "data", "engine")
    tools = order_tools()
    store.append(tools)
    store.append([order_agent(tools)])
    store.append([cancel_task(), cancel_task("error_recovery", task_id="tsk_recover")])
    ctx = RunContext(cfg=cfg_, root=project_root, run_id="engine", store=store, prompts=PROMPTS)
    counts = asyncio.run(make_rollouts(ctx))
    trajs = store.read(Trajectory)
    assert counts["trajectories"] == len(trajs) == 4 and counts["new"] == 4
    for t in trajs:
        assert t.status in ("finished", "max_turns", "max_tool_calls", "max_tokens", "error"), t.status
        assert conversation_problems(t.messages) == [], (t.trajectory_id, conversation_problems(t.messages))
        assert t.messages[0]["role"] == "system" and (t.turns == 0 or t.messages[1]["role"] == "user")
        assert t.usage["user_sim"]["calls"] >= 1 and t.models["agent"] == "smollm2-135m"
        assert replay(t.world_states.initial, [p.patch for p in t.world_states.patches]) == t.world_states.final
        if t.status == "error":
            print(t.reason)
            assert t.reason and t.reason.split(":")[0] in ("agent_output", "tool_sim_failed", "user_sim_failed")
    assert any(t.status != "error" for t in trajs), [t.reason for t in trajs]
    assert any(t.tool_calls for t in trajs)  # the first step of a tool task is made to call a tool
    recover = [t for t in trajs if t.task_id == "tsk_recover" and t.tool_calls]
    assert all(t.faults and t.faults[0].forced and t.faults[0].kind == "transient_error" for t in recover)
    assert len({t.seed for t in trajs}) == 4
    # the same run again: everything is done already
    again = asyncio.run(make_rollouts(ctx))
    assert again["new"] == 0 and store.count(Trajectory) == 4
