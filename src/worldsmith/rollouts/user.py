"""The user simulator: plays a task's persona and hidden goal (tau2-style).

It answers with structured output `{message, action}` (small models keep to it; strong ones
lose nothing), and the recorded user message ends with the stop token of its action, as
tau2 records them: `###STOP###` when the goal is met or clearly cannot be, `###TRANSFER###`
when it asks for a human, `###GIVE_UP###` when it loses patience. It sees the conversation
with the roles flipped and without tool traffic: only what a user would see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from worldsmith.llm import LLMClient, Prompts
from worldsmith.records import Task
from worldsmith.vocab import END_TOKENS, strip_end_tokens


def user_schema(first: bool, goal_met: bool = False) -> dict[str, Any]:
    actions = ["continue"] if first else ["stop"] if goal_met else ["continue", "stop", "transfer", "give_up"]
    return {
        "type": "object",
        "properties": {"message": {"type": "string", "minLength": 1, "maxLength": 300}, "action": {"enum": actions}},
        "required": ["message", "action"],
        "additionalProperties": False,
    }


def user_view(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The conversation as the user simulator sees it: its own lines as `assistant`, the agent's
    text as `user`; tool calls and tool replies left out."""
    out = []
    for m in messages:
        if m["role"] == "user":
            out.append({"role": "assistant", "content": m["content"]})
        elif m["role"] == "assistant" and m.get("content"):
            out.append({"role": "user", "content": m["content"]})
    return out


@dataclass
class UserTurn:
    ok: bool
    message: str = ""  # as recorded (with the end token when the action ends the episode)
    action: str = "continue"
    error: str | None = None
    raw: str | None = None

    @property
    def ends(self) -> bool:
        return self.action != "continue"


def with_token(message: str, action: str) -> str:
    """The message as recorded: any stray tokens removed, the action's token appended."""
    text = strip_end_tokens(message)
    return f"{text} {END_TOKENS[action]}".strip() if action in END_TOKENS else text


class UserSimulator:
    def __init__(self, client: LLMClient, prompts: Prompts, task: Task, attempts: int = 1):
        self.client = client
        self.prompts = prompts
        self.task = task
        self.attempts = attempts

    async def reply(self, messages: list[dict[str, Any]], seed: int, goal_met: bool = False) -> UserTurn:
        """The user's next message; with `goal_met` (the world is as the user wanted and it was told
        what it asked), the user is told so and ends the episode, as a satisfied user does."""
        first = not any(m["role"] == "user" for m in messages)
        goal = self.task.user_goal
        msgs = self.prompts.render_messages(
            "user_sim",
            persona=self.task.user_persona,
            goal=goal,
            facts=goal.facts,
            first=first,
            difficulty=self.task.difficulty,
            goal_met=goal_met and not first,
        )
        msgs = msgs[:1] + user_view(messages) + msgs[1:]
        schema = user_schema(first, goal_met)
        for attempt in range(self.attempts):
            r = await self.client.structured("user_sim", msgs, schema, name="user_turn", seed=seed + 104_729 * attempt)
            if r.ok:
                break
        if not r.ok:
            tried = f" ({self.attempts} attempts)" if self.attempts > 1 else ""
            return UserTurn(False, error=f"{r.error_kind}{tried}: {r.error}", raw=r.raw)
        action = r.data["action"]
        # a message that carries a stop token although the action says continue: the token wins
        for name, token in END_TOKENS.items():
            if token in r.data["message"] and not first:
                action = name
        return UserTurn(True, with_token(r.data["message"], action), action)
