"""A small hand-made world for rollout tests: an order desk with two simulated tools and the
real time server's `get_current_time` (as crawled), one agent and tasks over them."""

from __future__ import annotations

import json
from pathlib import Path

from worldsmith.records import Agent, Criterion, Rubric, Task, ToolSpec

ROOT = Path(__file__).resolve().parent.parent


def order_tools() -> list[ToolSpec]:
    get_order = ToolSpec(
        tool_id="tool_get_order",
        name="get_order",
        description="Look up an order by its id: status, item and total.",
        input_schema={
            "type": "object",
            "properties": {"order_id": {"type": "string", "description": "the order id, e.g. o-1001"}},
            "required": ["order_id"],
            "additionalProperties": False,
        },
        annotations={"readOnlyHint": True},
        source="evolved",
        domain="orders",
    )
    cancel_order = ToolSpec(
        tool_id="tool_cancel_order",
        name="cancel_order",
        description="Cancel an open order: sets its status to cancelled.",
        input_schema={
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "reason": {"type": "string"}},
            "required": ["order_id"],
            "additionalProperties": False,
        },
        annotations={"destructiveHint": True},
        source="evolved",
        domain="orders",
    )
    return [get_order, cancel_order, time_tool()]


def time_tool() -> ToolSpec:
    """get_current_time exactly as the crawl snapshot holds it (server `time`)."""
    for line in (ROOT / "tool_specs" / "crawled" / "tools.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["server"] == "time" and row["tool"]["name"] == "get_current_time":
            t = row["tool"]
            return ToolSpec(
                tool_id="tool_time_now",
                name=t["name"],
                description=t["description"],
                input_schema=t["inputSchema"],
                output_schema=t.get("outputSchema"),
                annotations=t.get("annotations", {}),
                source="mcp",
                server="time",
            )
    raise LookupError("get_current_time not in the crawl snapshot")


def order_agent(tools: list[ToolSpec]) -> Agent:
    return Agent(
        agent_id="agt_orders",
        bundle_id="bnd_orders",
        domain="orders",
        style="concise and formal",
        strictness="standard",
        system_prompt="You are the order desk assistant of a web shop. Look orders up with get_order and cancel "
        "them with "
        "cancel_order when the customer asks. Use the tools; never claim an action you did not perform.",
        tool_ids=[t.tool_id for t in tools],
        policies={"role": "order desk"},
    )


STATE = {
    "orders": [
        {"id": "o-1001", "status": "open", "item": "blue kettle", "total": 39.5},
        {"id": "o-1002", "status": "shipped", "item": "tea cups", "total": 12.0},
    ]
}


def cancel_task(difficulty: str = "single_call", task_id: str = "tsk_cancel") -> Task:
    return Task(
        task_id=task_id,
        agent_id="agt_orders",
        difficulty=difficulty,
        user_persona={"communication": "brief", "patience": "medium", "expertise": "novice"},
        user_goal={"request": "Cancel my order o-1001, I ordered the wrong kettle.", "facts": {"order id": "o-1001"}},
        initial_state=json.loads(json.dumps(STATE)),
        rubric=Rubric(
            criteria=[
                Criterion(
                    criterion_id="c1",
                    kind="call",
                    tool="cancel_order",
                    arguments={"order_id": "o-1001"},
                    description="cancels o-1001",
                ),
                Criterion(
                    criterion_id="c2",
                    kind="state",
                    pointer="/orders/0/status",
                    op="equals",
                    value="cancelled",
                    description="o-1001 is cancelled",
                ),
            ]
        ),
    )


def scripted_context(client, **fields):
    """A RunContext whose stages talk to `client` (a scripted stand-in for LLMClient),
    counting into the context's usage meter as the real client does."""
    import contextlib

    from worldsmith.context import RunContext

    class ScriptedRunContext(RunContext):
        def client(self):
            @contextlib.asynccontextmanager
            async def session():
                yield client.metered(self.usage)

            return session()

    return ScriptedRunContext(**fields)


def status_task(task_id: str = "tsk_status") -> Task:
    """A read-only single call: look o-1002 up and say it has shipped."""
    return Task(
        task_id=task_id,
        agent_id="agt_orders",
        difficulty="single_call",
        user_persona={"communication": "brief", "patience": "medium", "expertise": "novice"},
        user_goal={"request": "What is the status of my order o-1002?", "facts": {"order id": "o-1002"}},
        initial_state=json.loads(json.dumps(STATE)),
        rubric=Rubric(
            criteria=[
                Criterion(
                    criterion_id="c1",
                    kind="call",
                    tool="get_order",
                    arguments={"order_id": "o-1002"},
                    description="looks o-1002 up",
                ),
                Criterion(
                    criterion_id="c2", kind="answer", contains=["shipped"], description="says that o-1002 has shipped"
                ),
            ]
        ),
    )
