"""The request grammar: a blueprint task's opening message worded from its intents
(`Draft.intents`) by a seeded draw among the surface forms of `prompts/user_request.yaml`, with an
opener and a closer by the persona's way of talking. Deterministic for a seed; every value the
agent needs sits in a slot, so a form carries the blueprint's facts verbatim (the request check
in tasks/stage.py still reads each one)."""

from __future__ import annotations

import random
import re
from typing import Any

from worldsmith.records import Persona
from worldsmith.tasks.blueprint import Draft

SLOT = re.compile(r"\{(\w+)\}")


class GrammarError(ValueError):
    pass


def check_grammar(grammar: dict[str, Any]) -> None:
    """Refuse a grammar a request cannot be worded from: the sections, and forms whose slots are names."""
    for section in ("openers", "closers", "intents", "joiners"):
        if section not in grammar:
            raise GrammarError(f"user_request.yaml: missing section {section!r}")
    for section in ("openers", "closers"):
        if not isinstance(grammar[section], dict) or not all(
            isinstance(v, list) and v for v in grammar[section].values()
        ):
            raise GrammarError(f"user_request.yaml: {section} maps a way of talking to a list of forms")
    for section in ("intents", "clauses"):
        for kind, forms in (grammar.get(section) or {}).items():
            if not isinstance(forms, list) or not forms or not all(isinstance(f, str) for f in forms):
                raise GrammarError(f"user_request.yaml: {section}.{kind}: expected a list of forms")


def _fill(form: str, slots: dict[str, str]) -> str | None:
    """The form with its slots filled, or None when it names a slot the intent lacks."""
    missing = [s for s in SLOT.findall(form) if s not in slots]
    return None if missing else SLOT.sub(lambda m: slots[m.group(1)], form)


def _sentence(grammar: dict[str, Any], intent: dict[str, str], rng: random.Random) -> str | None:
    kind = intent.get("kind", "")
    slots = dict(intent)
    if kind == "find_then":
        then = {k.removeprefix("then_"): v for k, v in intent.items() if k.startswith("then_")}
        clauses = [f for f in (grammar.get("clauses") or {}).get(then.get("kind", ""), []) if _fill(f, then)]
        if not clauses:
            return None
        slots["then"] = _fill(rng.choice(clauses), then) or ""
    forms = [f for f in grammar["intents"].get(kind, []) if _fill(f, slots) is not None]
    if not forms:
        return None
    text = _fill(rng.choice(forms), slots) or ""
    return text[0].upper() + text[1:] if text else text


def _lower_first(text: str) -> str:
    """ "Please delete it" after a joiner: "please delete it" (not an id or a name: "ORD-1" stays)."""
    return text[0].lower() + text[1:] if len(text) > 1 and text[0].isupper() and text[1].islower() else text


def grammar_request(grammar: dict[str, Any], d: Draft, persona: Persona, seed: int) -> str | None:
    """The opening request for `d`, or None when an intent has no form in the grammar."""
    rng = random.Random(seed)
    sentences = []
    for i, intent in enumerate(d.intents):
        s = _sentence(grammar, intent, rng)
        if s is None:
            return None
        if i:
            s = f"{rng.choice(grammar['joiners'])} {_lower_first(s)}"
        sentences.append(s)
    if not sentences:
        return None
    style = persona.communication if persona.communication in grammar["openers"] else "casual"
    opener = rng.choice(grammar["openers"][style])
    closer = rng.choice(grammar["closers"].get(style, [""]))
    if opener.endswith(","):  # "Hello, could you ..."
        sentences[0] = _lower_first(sentences[0])
    if d.difficulty == "clarification" and not any(s.rstrip().endswith("?") for s in sentences):
        closer = f"Can you help me with that? {closer}"
    return " ".join(p for p in (opener, *sentences, closer) if p).strip()
