"""Prompt templates: one Jinja2 file per kind of LLM call, in the project's `prompts/`.

A template defines a `system` block and a `user` block; `render_messages` turns them into
chat messages. StrictUndefined makes a missing variable an error, not an empty string.
Variables are data: their text is inserted, never parsed as a template (no injection).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import yaml


class PromptError(RuntimeError):
    pass


@lru_cache(maxsize=8)
def _environment(prompts_dir: str) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(prompts_dir),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["tojson"] = lambda v, indent=None: json.dumps(v, ensure_ascii=False, indent=indent, sort_keys=False)
    return env


class Prompts:
    def __init__(self, prompts_dir: str | Path):
        self.dir = Path(prompts_dir).resolve()
        if not self.dir.is_dir():
            raise PromptError(f"prompts folder not found: {self.dir}")

    def data(self, name: str) -> dict[str, Any]:
        """A YAML file of the prompts folder (`name`.yaml): wording kept as data, such as the request grammar."""
        path = self.dir / f"{name}.yaml"
        if not path.is_file():
            raise PromptError(f"no prompt data {name!r} in {self.dir}")
        try:
            doc = yaml.safe_load(path.read_text())
        except yaml.YAMLError as exc:
            raise PromptError(f"{path}: not valid YAML: {exc}") from None
        if not isinstance(doc, dict):
            raise PromptError(f"{path}: expected a mapping at the top")
        return doc

    def render_messages(self, name: str, **variables: Any) -> list[dict[str, str]]:
        env = _environment(str(self.dir))
        try:
            template = env.get_template(f"{name}.jinja")
        except jinja2.TemplateNotFound:
            raise PromptError(f"no prompt template {name!r} in {self.dir}") from None
        context = template.new_context(variables)
        messages = []
        for role in ("system", "user"):
            if role in template.blocks:
                try:
                    text = "".join(template.blocks[role](context)).strip()
                except jinja2.UndefinedError as exc:
                    raise PromptError(f"prompt {name!r}: {exc.message}") from None
                if text:
                    messages.append({"role": role, "content": text})
        if not messages:
            raise PromptError(f"prompt {name!r} defines neither a system nor a user block")
        return messages
