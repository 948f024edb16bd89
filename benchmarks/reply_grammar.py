"""Which reply grammar lets the default policy answer a look-up? Replays recorded answer points (the first agent
step after a successful tool result whose fields the user named, kind `answer`, or after a change code ran, kind
`confirm`: its grammar quotes the call's arguments, `grounding.confirming_values`; in finished `make synth` runs)
against the real model server, once per reply grammar, and judges each reply as the judge would: it conveys every
value the task's answer criteria ask of that result, is prose, and no rejected hack fires on the episode cut there.

    python benchmarks/reply_grammar.py DATA_DIR [DATA_DIR ...] [--samples 2] [--json PATH]

Variants (`VARIANTS`): `any` (one asked value anywhere in the first 200 characters, then 130 free: the product's
`vocab.quoting_reply_pattern`), `all` (every value, in the result's order, each after a space or a mark), `list` /
`list_end` (the values as one list, then free words / the end), `all_end` (every value, then at most 24 characters
with no digit), `fields` (each asked field by name, "the order item ids are ...", then its values), `any_end`
(`any`, and the reply ends with the sentence that says the value), `sentence` (one sentence), `first_sentence` (one
sentence; a mark only inside a word before the value, none after it), `count_end` (`any_end`, a count said with what
it counts: "4 echojs"), `plain` (`any` as a GBNF grammar over plain text, not a JSON string: the model's own end
token is legal once a value is said; the tools are rendered into the system message). "How many" asks
a list's count here (`asked_fields(count=True)`). The prompts are the recorded conversations, copied by value; the
tools the prompt shows are the episode's; the grammar offers no call (a reply is what is measured). A point's
samples have their own seeds, the same across variants. The judge's verdict is not a reader's: results/README and
benchmarks/README.md give what a reading of the kept replies found.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import jinja2
import jinja2.ext
import jinja2.nodes

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from worldsmith.config import load_config  # noqa: E402
from worldsmith.judge.answers import agent_texts, mentions  # noqa: E402
from worldsmith.judge.checks import find_hacks  # noqa: E402
from worldsmith.llm import LLMClient  # noqa: E402
from worldsmith.llm.client import LLMResult, grammar_schema, parse_constrained_turn, prose_reply_schema  # noqa: E402
from worldsmith.llm.server import CHAT_TEMPLATE, ModelServer  # noqa: E402
from worldsmith.prose import garbled_text, one_word, tool_result  # noqa: E402
from worldsmith.records import Agent, Task, ToolSpec, Trajectory, World  # noqa: E402
from worldsmith.store import RunStore  # noqa: E402
from worldsmith.vocab import MAX_REPLY_CHARS, PROSE_CHAR, QUOTING_TAIL, quoting_reply_pattern  # noqa: E402
from worldsmith.worldmodel.grounding import asked_fields, asked_values, confirming_values  # noqa: E402
from worldsmith.worldmodel.toolset import ToolSet  # noqa: E402


def _escaped(value: str) -> str:
    return re.sub(r"([.^$*+?()|/])", r"\\\1", value)


def _one_list(values: list[str]) -> str:
    """The values as one list, in order: "a", "a and b", "a, b, and c"."""
    return _escaped(values[0]) + "".join(f"(, | and |, and ){_escaped(v)}" for v in values[1:])


def quoting_reply_pattern_all(values: list[str]) -> str:
    """Every value, in order, each after a space or a mark (not glued to a word: "individualsech-6101"), the first
    within 80 characters and each next within 40; too long for the length bound: `quoting_reply_pattern`."""
    if not values or 1 + 80 + 41 * (len(values) - 1) + sum(len(v) + 1 for v in values) + 130 > MAX_REPLY_CHARS:
        return quoting_reply_pattern(values)
    before = "[ (:,']"
    first = rf"[A-Z]{PROSE_CHAR}{{0,79}}{before}{_escaped(values[0])}"
    if values[0][:1].isupper():
        first = rf"({first}|{_escaped(values[0])})"
    rest = "".join(rf"{PROSE_CHAR}{{0,40}}{before}{_escaped(v)}" for v in values[1:])
    return f"^{first}{rest}{QUOTING_TAIL}"


# after an answer's values: a few words with no digit (" pages.", " (Orbit item).") and the reply ends
ANSWER_END = PROSE_CHAR[:-1] + "0-9]{0,30}$"


def answering_reply_pattern(fields: list[tuple[str, list[str]]]) -> str:
    """For each asked field, in order, its name and then its values as one list ("... the order item ids are
    ord-5402 and ord-5403"; a count: the number alone), a few words of the model's own before each, `ANSWER_END`
    after the last; too long: `quoting_reply_pattern_all`."""
    verb = "( is| are| was| were|:) "
    parts, longest = [], 1
    for name, values in fields:
        items = _one_list(values)
        size = sum(len(v) + 6 for v in values)
        if name == "count":
            parts.append(rf"{PROSE_CHAR}{{0,40}}[ (]{items}")
            longest += 41 + size
            continue
        phrase = re.sub(r"[_-]+", " ", name).strip().lower()
        parts.append(rf"{PROSE_CHAR}{{0,40}} {_escaped(phrase)}s?( (of|for) {PROSE_CHAR}{{1,30}})?{verb}{items}")
        longest += 41 + len(phrase) + 2 + 35 + 6 + size
    if not fields or longest + 30 > MAX_REPLY_CHARS:
        return quoting_reply_pattern_all([v for _, values in fields for v in values])
    return f"^[A-Z]{''.join(parts)}{ANSWER_END}"


def _listed(values: list[str], end: str) -> str:
    """Every value, one list ("a, b and c"), after a lead of at most 80 characters; then `end`."""
    if len(values) > 6 or any(len(v) > 60 for v in values):
        return quoting_reply_pattern(values)
    return f"^[A-Z]{PROSE_CHAR}{{0,79}}[ (:,']{_one_list(values)}{end}"


def _all_then(values: list[str], end: str) -> str:
    """Every value in order (`quoting_reply_pattern_all`'s gaps), then `end` instead of its 130-character tail."""
    pattern = quoting_reply_pattern_all(values)
    return pattern[: -len(QUOTING_TAIL)] + end if pattern.endswith(QUOTING_TAIL) else pattern


# a few words with no digit after the last value ("pages.", "(Orbit item)."), and the reply ends
SHORT_END = PROSE_CHAR[:-1] + "0-9]{0,24}$"

# prose characters that do not end a sentence; a mark followed by a digit or a lower-case letter does not either
# ("12.50", "notes/meeting.md", "v1.2")
IN_SENTENCE = rf"({PROSE_CHAR[:-1]}.!?]|[.!?][0-9a-z])"
# after the quoted value: the rest of its sentence, and the reply ends there (the junk came after it: "The test id
# is tst-5403. The test id is not found in the file.")
SENTENCE_TAIL = rf"{IN_SENTENCE}{{0,130}}[.!?]?$"


NOT_AN_END = PROSE_CHAR[:-1] + ".!?]"


def _quoting(values: list[str], lead: str, tail: str) -> str:
    """`vocab.quoting_reply_pattern`'s head (a capital letter, up to 199 `lead` characters, one of `values`; or a
    capitalised value opening the reply), then `tail`."""
    alts = "|".join(_escaped(v) for v in values)
    opening = [_escaped(v) for v in values if v[:1].isupper()]
    anywhere = rf"[A-Z]{lead}{{0,199}}({alts})"
    head = rf"({anywhere}|{'|'.join(opening)})" if opening else anywhere
    return f"^{head}{tail}"


def quoting_reply_pattern_first_sentence(values: list[str]) -> str:
    """One sentence that says one of `values`: before the value a mark may only join characters ("12.50",
    "notes/meeting.md"), after it none may, and the first mark ends the reply (SmolLM2 under `sentence` glued
    its next sentence on: "The account is active.maple account is active.")."""
    return _quoting(values, IN_SENTENCE, f"{NOT_AN_END}{{0,130}}[.!?]?$")


def quoting_reply_pattern_sentence_end(values: list[str], one_sentence: bool = False) -> str:
    """`quoting_reply_pattern`, but the reply ends with the sentence that says the value; with `one_sentence`, the
    words before the value are of the same sentence too."""
    return _quoting(values, IN_SENTENCE if one_sentence else PROSE_CHAR, SENTENCE_TAIL)


COUNTED = re.compile(r"\b(?:how many|number of)\s+([a-z][\w-]*)")


def counted_quote(p: dict) -> list[str]:
    """The quote with a count said with what it counts ("4 echojs", not "has 4 users"): the word after "how many"
    or "number of" in the user's messages."""
    said = " ".join(str(m.get("content") or "") for m in p["traj"].messages if m["role"] == "user").lower()
    nouns = COUNTED.findall(said)
    counts = {v for name, vs in p["fields"] if name == "count" for v in vs}
    out = []
    for v in p["quote"]:
        out += [f"{v} {n}" for n in nouns] if v in counts and nouns else [v]
    return list(dict.fromkeys(out))


VARIANTS = {  # each: the pattern for an answer point's asked values (`quote`) or fields (`fields`)
    "any": lambda p: quoting_reply_pattern(p["quote"]),
    "all": lambda p: quoting_reply_pattern_all(p["quote"]),
    "list": lambda p: _listed(p["quote"], QUOTING_TAIL),  # the values as one list, then the model's own words
    "list_end": lambda p: _listed(p["quote"], r"[.]?$"),  # the values as one list, and the reply ends there
    "all_end": lambda p: _all_then(p["quote"], SHORT_END),  # every value in order, then a few words at most
    "fields": lambda p: answering_reply_pattern(p["fields"]),  # each asked field by name, then its values
    "any_end": lambda p: quoting_reply_pattern_sentence_end(p["quote"]),  # `any`, ending with the value's sentence
    "sentence": lambda p: quoting_reply_pattern_sentence_end(p["quote"], one_sentence=True),  # one sentence
    "first_sentence": lambda p: quoting_reply_pattern_first_sentence(p["quote"]),  # one sentence, no glue after
    "count_end": lambda p: quoting_reply_pattern_sentence_end(counted_quote(p)),  # `any_end`, "4 echojs"
}


def answer_points(data_dirs: list[Path]) -> list[dict]:
    """One per trajectory: its conversation up to the first successful result whose asked values the task's
    answer criteria hold, with those values and the episode, cut there, to judge a reply in."""
    points = []
    for data in data_dirs:
        for run_dir in sorted((data / "runs").iterdir()):
            store = RunStore(data, run_dir.name)
            tasks = {t.task_id: t for t in store.read(Task)}
            source = {w.world_id: w.source for w in store.read(World)}
            specs = {t.tool_id: t for t in store.read(ToolSpec)}
            toolsets = {
                a.agent_id: ToolSet.build([specs[t] for t in a.tool_ids if t in specs]) for a in store.read(Agent)
            }
            for traj in store.read(Trajectory):
                task = tasks[traj.task_id]
                points += _point(traj, task, source.get(task.world_id, "?"), toolsets.get(traj.agent_id, ToolSet()))
    return points


def _point(traj: Trajectory, task: Task, source: str, toolset: ToolSet) -> list[dict]:
    """The trajectory's first answer point: after a result whose fields the user named (a look-up, `kind` "answer")
    or after a change code ran (its confirmation, `kind` "confirm", quoting the call's arguments)."""
    asked = [v for c in task.rubric.criteria if c.kind == "answer" and not c.declines for v in c.contains]
    for i in range(2, len(traj.messages)):
        prefix = traj.messages[:i]
        if prefix[-1]["role"] != "tool" or traj.messages[i]["role"] != "assistant":
            continue
        fields, quote = asked_fields(prefix, count=True), asked_values(prefix, count=True)
        kind = "answer"
        if not quote and (quote := confirming_values(toolset, prefix)):
            kind = "confirm"
        shown = json.dumps(tool_result(prefix[-1])) + (json.dumps(quote) if kind == "confirm" else "")
        values = [v for v in asked if str(v) in shown]
        if quote and values:
            ids = {m.get("tool_call_id") for m in prefix if m["role"] == "tool"}
            cut = traj.model_copy(
                update={
                    "messages": copy.deepcopy(prefix),
                    "calls": [c for c in traj.calls if c.call_id in ids],
                    "status": "finished",
                }
            )
            recorded = traj.messages[i].get("content") if not traj.messages[i].get("tool_calls") else None
            point = {
                "id": f"{traj.trajectory_id}@{i}",
                "source": source,
                "kind": kind,
                "quote": quote,
                "fields": fields,
                "values": values,
            }
            return [{**point, "traj": cut, "recorded": recorded}]
    return []


def judge_reply(point: dict, text: str, cap: int, rejected: set[str]) -> dict:
    traj = point["traj"].model_copy(
        update={"messages": [*point["traj"].messages, {"role": "assistant", "content": text}]}
    )
    said = all(mentions(v, agent_texts(traj))[0] for v in point["values"])
    garbled = garbled_text(text, cap) or one_word(text)
    hacks = sorted({h.kind for h in find_hacks(traj)} & rejected)
    return {"said_all": said, "garbled": garbled, "hacks": hacks, "ok": said and not garbled and not hacks}


class _Generation(jinja2.ext.Extension):
    """The chat template's `{% generation %}` block (Hugging Face's training marker), rendered as its body."""

    tags = {"generation"}

    def parse(self, parser):  # noqa: ANN001, ANN201
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.Scope(body, lineno=lineno)


def system_with_tools(system: str, tools: list[dict]) -> str:
    """The system message as the chat template renders it with `tools`: the server takes no grammar of its own
    with tools, so `plain` sends this text as the system message and no tools (the same prompt)."""
    env = jinja2.Environment(extensions=[_Generation])
    env.filters["tojson"] = json.dumps
    template = env.from_string(CHAT_TEMPLATE.read_text())
    text = template.render(messages=[{"role": "system", "content": system}], tools=tools)
    return text.removeprefix("<|im_start|>system\n").removesuffix("<|im_end|>\n")


def plain_grammar(values: list[str]) -> str:
    """`any` as a GBNF grammar over plain text: no JSON string around the reply, so the model's own end token is
    legal wherever the grammar may end (once a value is said)."""

    def lit(v: str) -> str:
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'

    opening = [lit(v) for v in values if v[:1].isupper()]
    head = "[A-Z] pc{0,199} val" + "".join(" | " + o for o in opening)
    pc = r'[^{}<>\[\]"\\\n\r\t]'
    return f"root ::= head pc{{0,130}}\nhead ::= {head}\nval ::= {' | '.join(map(lit, values))}\npc ::= {pc}\n"


async def reply(client: LLMClient, variant: str, p: dict, seed: int) -> LLMResult:
    """The agent's reply under `variant`'s pattern: tool_step's constrained branch with no call offered; `plain`:
    the same prompt and `any`'s requirement, as plain text."""
    if variant == "plain":
        messages = copy.deepcopy(p["traj"].messages)
        messages[0]["content"] = system_with_tools(messages[0]["content"], p["traj"].tools)
        return await client.chat("agent", messages, seed=seed, extra_body={"grammar": plain_grammar(p["quote"])})
    pattern = VARIANTS[variant](p)
    schema = prose_reply_schema(pattern)
    grammar = grammar_schema(schema)
    grammar["properties"]["content"]["pattern"] = pattern  # the client keeps only its own patterns in the grammar
    fmt = {"type": "json_schema", "json_schema": {"name": "assistant_turn", "schema": grammar}}
    messages = copy.deepcopy(p["traj"].messages)
    r = await client.chat("agent", messages, tools=p["traj"].tools, tool_choice="none", response_format=fmt, seed=seed)
    if r.ok:
        parse_constrained_turn(r, schema, turn=len(messages))
    return r


async def sample(cfg, url: str, points: list[dict], samples: int, variants: list[str]) -> list[dict]:
    client = LLMClient(cfg.llm, embedded_url=url)
    sem = asyncio.Semaphore(cfg.llm.endpoints["local"].max_concurrency)
    rejected = set(cfg.judge.reject_hacks)
    out: list[dict] = []
    done = 0

    async def one(p: dict) -> None:
        nonlocal done
        async with sem:  # a point's requests one after another: its prompt stays in the slot's cache
            for k in range(samples):
                for variant in variants:
                    r = await reply(client, variant, p, seed=7919 * k + 17)
                    text = (r.message().get("content") or "") if r.ok else ""
                    verdict = judge_reply(p, text, MAX_REPLY_CHARS, rejected) if r.ok else {"ok": False}
                    out.append(
                        {
                            "variant": variant,
                            "point": p["id"],
                            "source": p["source"],
                            "kind": p["kind"],
                            "sample": k,
                            "reply": text,
                            "error": r.error_kind,
                            "tokens": r.completion_tokens,
                            **verdict,
                        }
                    )
        done += 1
        if done % 10 == 0:
            print(f"  {done}/{len(points)} answer points", flush=True)

    await asyncio.gather(*map(one, points))
    for p in points:  # what the episode itself replied there (a call instead of a reply: not counted)
        if p["recorded"]:
            verdict = judge_reply(p, p["recorded"], MAX_REPLY_CHARS, rejected)
            out.append(
                {
                    "variant": "recorded",
                    "point": p["id"],
                    "source": p["source"],
                    "kind": p["kind"],
                    "reply": p["recorded"],
                    **verdict,
                }
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="+", type=Path)
    ap.add_argument("--samples", type=int, default=2)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=[*VARIANTS, "plain"])
    ap.add_argument("--per-source", type=int, default=30, help="answer points per world source and kind, drawn seeded")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "reply_grammar.json")
    ap.add_argument("--server-data", type=Path, default=Path("/tmp/reply-grammar"))
    a = ap.parse_args()
    cfg, _ = load_config(ROOT / "pipeline.yaml", [])
    points = answer_points(a.data)
    by_group: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for p in points:
        by_group[p["source"], p["kind"]].append(p)
    points = [p for ps in by_group.values() for p in random.Random(0).sample(ps, min(a.per_source, len(ps)))]
    print(f"{len(points)} answer points ({dict(Counter((p['source'], p['kind']) for p in points))})", flush=True)
    server = ModelServer(cfg.llm.server, ROOT, a.server_data)
    server.start()
    t0 = time.monotonic()
    try:
        rows = asyncio.run(sample(cfg, server.url, points, a.samples, a.variants))
    finally:
        server.stop()
    table: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for r in rows:
        for key in ((r["variant"], r["source"]), (r["variant"], r["kind"]), (r["variant"], "all")):
            t = table[key]
            t["n"] += 1
            t["ok"] += r["ok"]
            t["said_all"] += bool(r.get("said_all"))
            t["garbled"] += bool(r.get("garbled"))
            t["hacked"] += bool(r.get("hacks"))
            t["tokens"] += r.get("tokens") or 0
    head = ("variant", "source", "n", "ok", "said all", "garbled", "hack", "tok/reply")
    print("\n{:8} {:9} {:>4} {:>4} {:>8} {:>7} {:>5} {:>9}".format(*head))
    for (v, s), t in sorted(table.items()):
        print(
            f"{v:8} {s:9} {t['n']:4} {t['ok']:4} {t['said_all']:8} {t['garbled']:7} {t['hacked']:5} "
            f"{t['tokens'] / max(1, t['n']):9.0f}"
        )
    a.json.parent.mkdir(parents=True, exist_ok=True)
    a.json.write_text(
        json.dumps(
            {
                "data": [str(d) for d in a.data],
                "samples": a.samples,
                "variants": a.variants,
                "points": len(points),
                "seconds": round(time.monotonic() - t0, 1),
                "table": {f"{v}/{s}": dict(t) for (v, s), t in table.items()},
                "replies": rows,
            },
            indent=1,
        )
    )
    print(f"wrote {a.json}")


if __name__ == "__main__":
    main()
