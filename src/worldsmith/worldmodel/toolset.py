"""The tools an agent is offered: OpenAI function tools with unique names, mapped back to specs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from worldsmith.records import ToolSpec
from worldsmith.toolspec import openai_name, to_openai_tool


@dataclass
class ToolSet:
    tools: list[dict[str, Any]] = field(default_factory=list)  # OpenAI function tools, in the agent's order
    by_name: dict[str, ToolSpec] = field(default_factory=dict)  # OpenAI name -> spec

    @classmethod
    def build(cls, specs: list[ToolSpec]) -> ToolSet:
        ts = cls()
        for spec in specs:
            tool = to_openai_tool(spec)
            name, n = openai_name(spec.name), 1
            while name in ts.by_name:  # two bundle tools with one name (from different servers)
                n += 1
                name = f"{openai_name(spec.name)[:60]}_{n}"
            tool["function"]["name"] = name
            ts.tools.append(tool)
            ts.by_name[name] = spec
        return ts

    def name_of(self, spec_name: str) -> str | None:
        """The OpenAI name offered for a spec's original name (rubrics use the original)."""
        return next((n for n, s in self.by_name.items() if s.name == spec_name), None)
