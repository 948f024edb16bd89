"""The tests' check on OpenAI chat-format conversations (what trajectories and SFT examples hold)."""

from __future__ import annotations

import json
from typing import Any

ROLES = ("system", "user", "assistant", "tool")


def conversation_problems(messages: list[dict[str, Any]]) -> list[str]:
    """What makes `messages` an invalid OpenAI conversation (empty when valid): known roles,
    string contents, tool calls with an id, a name and JSON-object arguments, every call
    answered by a `tool` message with its id before the next assistant or user message,
    and no tool message that answers nothing."""
    problems: list[str] = []
    pending: dict[str, int] = {}
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in ROLES:
            problems.append(f"message {i}: unknown role {role!r}")
            continue
        if role == "system" and i != 0:
            problems.append(f"message {i}: a system message after the start")
        if role in ("user", "assistant") and pending:
            problems.append(f"message {i}: tool call(s) {sorted(pending)} have no tool reply")
            pending.clear()
        content = m.get("content")
        if content is not None and not isinstance(content, str):
            problems.append(f"message {i}: content is a {type(content).__name__}, not a string")
        if role == "assistant":
            calls = m.get("tool_calls") or []
            if not calls and not (content or "").strip():
                problems.append(f"message {i}: an assistant message with neither content nor tool calls")
            for call in calls:
                fn = call.get("function") or {}
                if not call.get("id") or call.get("type") != "function" or not fn.get("name"):
                    problems.append(f"message {i}: a tool call without id, type 'function' or a name")
                    continue
                try:
                    args = json.loads(fn.get("arguments") or "")
                    if not isinstance(args, dict):
                        problems.append(f"message {i}: {fn['name']} arguments are not a JSON object")
                except (TypeError, ValueError, RecursionError):  # JSONDecodeError, deep nesting, huge integers
                    problems.append(f"message {i}: {fn['name']} arguments are not JSON")
                pending[call["id"]] = i
        elif role == "tool":
            call_id = m.get("tool_call_id")
            if call_id not in pending:
                problems.append(f"message {i}: a tool reply to {call_id!r}, which no pending call has")
            pending.pop(call_id, None)
        elif role in ("user", "system") and not isinstance(content, str):
            problems.append(f"message {i}: a {role} message without text")
    if pending:
        problems.append(f"end: tool call(s) {sorted(pending)} have no tool reply")
    return problems
