"""SFT examples from the trajectories the judge kept, written where the usual tools read them.

Layout of `<export.out_dir>/<run_id>/`: a folder per format `export.formats` names (formats.py;
by default all but ShareGPT), and `README.md`, the dataset card.
- `data/train.parquet`, `data/validation.parquet`: columns `messages` (OpenAI chat format:
  assistant `tool_calls` with JSON-string arguments, `tool` replies with `tool_call_id`),
  `tools` (the agent's OpenAI function tools as a JSON *string*: TRL `json.loads` a
  string column, while a struct column would make Arrow merge every agent's schemas and
  add null keys), `metadata` (lineage ids), `example_id`.
- `jsonl/{train,validation}.jsonl`: the same rows (always written: finetune and eval read
  them); `openai/{train,validation}.jsonl`: the OpenAI fine-tuning format (`messages`,
  `tools` as a list, `parallel_tool_calls`); `sharegpt/`: LLaMA-Factory's sharegpt format.
- `README.md`: the dataset card, with a `configs` header so `load_dataset(folder)` works.

Examples are deduplicated (exact, then MinHash near copies), split by world (`held_out.json`
names the worlds and agents of the validation split, which `worldsmith eval` plays) or by
agent, and optionally capped per tool and per domain. The folder is built beside
its final name and renamed into place, so it is either the old export or the new one.

Both steps work one example at a time (`ExampleBuilder`, `ExportWriter`), so the export
stage can stream trajectories in batches: what is kept across examples is a digest and a
MinHash per example, counters, and at most one Parquet row group per split.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Self

from worldsmith.config import ExportConfig
from worldsmith.dedup import MinHashIndex, word_shingles
from worldsmith.diversity import NEAR_DUPLICATE_JACCARD, Diversity, chain_of, markdown_table
from worldsmith.export.formats import FORMATS, Jsonl, Parquet
from worldsmith.records import (
    HELD_OUT_FILE,
    Agent,
    HeldOut,
    SFTExample,
    Task,
    ToolSpec,
    Trajectory,
    Verdict,
    content_id,
)
from worldsmith.vocab import EXPORT_CARD, SPLITS, strip_end_tokens

DEFAULT_FORMATS: tuple[str, ...] = tuple(ExportConfig().formats)  # the config's default, for callers without one


def sft_messages(traj: Trajectory) -> list[dict[str, Any]]:
    """The conversation for training: stop tokens removed, ending on the agent's last reply
    (the user's closing message teaches nothing)."""
    out = []
    for m in traj.messages:
        if m["role"] == "user":
            out.append({"role": "user", "content": strip_end_tokens(m["content"])})
        elif m["role"] == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.get("content") or None}
            if m.get("tool_calls"):
                msg["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]},
                    }
                    for c in m["tool_calls"]
                ]
            out.append(msg)
        elif m["role"] == "tool":
            out.append({"role": "tool", "tool_call_id": m["tool_call_id"], "content": m["content"]})
        else:
            out.append({"role": m["role"], "content": m["content"]})
    while out and not (out[-1]["role"] == "assistant" and out[-1].get("content") and not out[-1].get("tool_calls")):
        out.pop()
    return out


def _text(messages: list[dict[str, Any]]) -> str:
    return " ".join(m.get("content") or "" for m in messages if m["role"] in ("user", "assistant"))


def held_out_keys(keys: Iterable[str], fraction: float) -> set[str]:
    """Keys (worlds or agents) held out: a stable hash per key decides; with two or more keys and
    a fraction above zero, at least one is held out and at least one kept for training."""
    ids = sorted(set(keys), key=lambda a: zlib.crc32(a.encode()))
    if fraction <= 0 or len(ids) < 2:
        return set()
    held = {a for a in ids if zlib.crc32(a.encode()) / 2**32 < fraction}
    if not held:
        held = {ids[0]}
    if len(held) == len(ids):
        held.discard(ids[-1])
    return held


def held_out(
    cfg: ExportConfig,
    agents: Iterable[tuple[str, str | None]],
    kept_agents: Iterable[str],
    sources: dict[str, str] | None = None,
) -> HeldOut:
    """The split of `agents` ((agent_id, world_id) pairs, every agent of the run); by agent, among
    the agents with a kept episode (as before worlds existed). By world, `sources` (world_id -> the world's source)
    stratifies the draw under `cfg.held_out_sources`: each listed source the run has two or more worlds of gives
    at least one held-out world and keeps at least one for training."""
    if cfg.split_by == "agent":
        return HeldOut(split_by="agent", agents=sorted(held_out_keys(kept_agents, cfg.validation_fraction)))
    pairs = sorted(set(agents))
    keys = {f"world:{w}" if w else f"agent:{a}" for a, w in pairs}
    held = held_out_keys(keys, cfg.validation_fraction)
    if cfg.held_out_sources and cfg.validation_fraction > 0:
        of_source = sources or {}
        for source in cfg.held_out_sources:
            group = {k for k in keys if k.startswith("world:") and of_source.get(k[6:]) == source}
            if len(group) >= 2 and not group & held:
                held |= held_out_keys(group, cfg.validation_fraction)
        if held >= keys:  # a training split is kept whatever the strata asked
            held.discard(max(keys, key=lambda k: zlib.crc32(k.encode())))
    return HeldOut(
        split_by="world",
        worlds=sorted({w for _, w in pairs if f"world:{w}" in held}),
        agents=sorted(a for a, w in pairs if (f"world:{w}" if w else f"agent:{a}") in held),
    )


class TaskInfo(NamedTuple):
    """What the export reads of a task (a `Task` does as well)."""

    difficulty: str
    family: str | None = None  # the blueprint's task family (null: a free-form task)


def family_of_task(task: TaskInfo | Task | None) -> str | None:
    if task is None:
        return None
    if isinstance(task, TaskInfo):
        return task.family or task.difficulty
    return task.family


class AgentInfo(NamedTuple):
    """What the export reads of an agent (an `Agent` does as well)."""

    domain: str
    tool_ids: list[str]
    world_id: str | None = None


class WorldInfo(NamedTuple):
    """What the dataset card reads of a world (a `World` does as well)."""

    source: str  # llm (designed) | derived | pack | crawled


WORLD_SOURCES = {"llm": "designed"}  # a World's source as the card names it


class ToolInfo(NamedTuple):
    """What the dataset card reads of a tool (a `ToolSpec` does as well)."""

    server: str | None
    source: str


class ExampleBuilder:
    """The export's decisions, one kept trajectory at a time: fed in trajectory_id order, it
    gives the same examples as sorting them all first. Its state per example is a digest and
    a MinHash (plus per-tool and per-domain counters), so it does not hold trajectories."""

    def __init__(self, run_id: str, cfg: ExportConfig, held: HeldOut):
        self.run_id, self.cfg, self.held_agents = run_id, cfg, set(held.agents)
        self.dropped: Counter[str] = Counter()
        self.exact: set[str] = set()
        self.near = MinHashIndex(threshold=cfg.near_duplicate_threshold) if cfg.near_duplicate_threshold < 1 else None
        self.per_tool: Counter[str] = Counter()
        self.per_domain: Counter[str] = Counter()

    def add(
        self,
        traj: Trajectory,
        critic_score: float | None,
        task: TaskInfo | Task | None,
        agent: AgentInfo | Agent | None,
        unverifiable: int = 0,
    ) -> SFTExample | None:
        """The example made of `traj`, or None (counted in `dropped`); `unverifiable`: the claims of its replies the
        judge found neither supported nor contradicted (kept by its policy)."""
        cfg = self.cfg
        messages = sft_messages(traj)
        if not any(m["role"] == "assistant" for m in messages):
            self.dropped["no_assistant_reply"] += 1
            return None
        tools_text = json.dumps(traj.tools, ensure_ascii=False, sort_keys=True)
        digest = content_id(messages, tools_text)
        if digest in self.exact:
            self.dropped["exact_duplicate"] += 1
            return None
        shingles = word_shingles(_text(messages))
        if self.near is not None and self.near.find(digest, shingles):
            self.dropped["near_duplicate"] += 1
            return None
        domain = agent.domain if agent else ""
        called = sorted({c.tool_id for c in traj.calls if c.tool_id and c.ok})
        if cfg.max_per_tool and any(self.per_tool[t] >= cfg.max_per_tool for t in called):
            self.dropped["cap_per_tool"] += 1
            return None
        if cfg.max_per_domain and self.per_domain[domain] >= cfg.max_per_domain:
            self.dropped["cap_per_domain"] += 1
            return None
        self.exact.add(digest)
        if self.near is not None:
            self.near.add(digest, shingles)
        self.per_tool.update(called)
        self.per_domain[domain] += 1
        return SFTExample(
            example_id=content_id(self.run_id, traj.trajectory_id, prefix="ex_"),
            messages=messages,
            tools=tools_text,
            split="validation" if traj.agent_id in self.held_agents else "train",
            metadata={
                "run_id": self.run_id,
                "trajectory_id": traj.trajectory_id,
                "task_id": traj.task_id,
                "agent_id": traj.agent_id,
                "domain": domain,
                "difficulty": task.difficulty if task else None,
                "family": family_of_task(task),
                "chain": chain_of(traj.calls),  # the read/write shape of the calls that succeeded
                "tool_ids": agent.tool_ids if agent else [],
                "world_id": agent.world_id if agent else None,
                "called_tool_ids": called,
                "seed": traj.seed,
                "sample": traj.sample,
                "model": traj.model,
                "critic_score": critic_score,
                "faults": len(traj.faults),
                "decoding": traj.decoding,
                "reply_resamples": traj.reply_resamples,
                "unverifiable_claims": unverifiable,
            },
        )


def split_text(held: HeldOut | None) -> str:
    """The dataset card's sentence on how the splits were made."""
    if held is None or held.split_by == "agent":
        return "The split is by agent: no agent appears in both."
    return (
        f"The split is by world: validation holds {len(held.worlds)} whole world(s) no training example comes from "
        f"({', '.join(f'`{w}`' for w in held.worlds) or 'none'}), drawn among every world of the run whether its "
        f"episodes passed or not; `{HELD_OUT_FILE}` lists them, and `worldsmith eval` plays their tasks."
    )


def build_examples(
    run_id: str,
    cfg: ExportConfig,
    trajectories: list[Trajectory],
    verdicts: list[Verdict],
    tasks: dict[str, Task],
    agents: dict[str, Agent],
    world_sources: dict[str, str] | None = None,
) -> tuple[list[SFTExample], Counter]:
    """Kept trajectories -> deduplicated, capped, split examples; the counter says what was dropped and why.
    All in memory: the export stage streams the same steps (see stage.py)."""
    kept = {v.trajectory_id: v for v in verdicts if v.passed}
    held = held_out(
        cfg,
        [(a.agent_id, a.world_id) for a in agents.values()],
        [t.agent_id for t in trajectories if t.trajectory_id in kept],
        world_sources,
    )
    builder = ExampleBuilder(run_id, cfg, held)
    examples = []
    for traj in sorted((t for t in trajectories if t.trajectory_id in kept), key=lambda t: t.trajectory_id):
        verdict = kept[traj.trajectory_id]
        unverifiable = sum(c.status == "unverifiable" for c in verdict.claims)
        example = builder.add(
            traj, verdict.critic_score, tasks.get(traj.task_id), agents.get(traj.agent_id), unverifiable
        )
        if example is not None:
            examples.append(example)
    return examples, builder.dropped


@dataclass
class ExportCounts:
    """What the dataset card counts, gathered example by example."""

    splits: Counter[str] = field(default_factory=Counter)
    called: Counter[str] = field(default_factory=Counter)
    agents: dict[str, set[str]] = field(default_factory=lambda: {s: set() for s in SPLITS})
    decoding: Counter[str] = field(default_factory=Counter)
    difficulty: Counter[str] = field(default_factory=Counter)
    resampled: int = 0  # examples with a reply sampled again (rollouts.reply_attempts)
    unverified: int = 0  # examples with a claim the judge found neither supported nor contradicted
    worlds: Counter[str] = field(default_factory=Counter)  # examples per world
    diversity: Diversity = field(default_factory=Diversity)  # by task family
    tasks: set[str] = field(default_factory=set)  # distinct tasks
    families: Counter[str] = field(default_factory=Counter)

    def add(self, e: SFTExample) -> None:
        self.splits[e.split] += 1
        self.tasks.add(e.metadata.get("task_id") or e.example_id)
        self.families[e.metadata.get("family") or "unknown"] += 1
        self.called.update(e.metadata["called_tool_ids"])
        self.agents[e.split].add(e.metadata["agent_id"])
        self.decoding[e.metadata.get("decoding") or "unknown"] += 1
        self.difficulty[e.metadata.get("difficulty") or "unknown"] += 1
        self.resampled += bool(e.metadata.get("reply_resamples"))
        self.unverified += bool(e.metadata.get("unverifiable_claims"))
        if e.metadata.get("world_id"):
            self.worlds[e.metadata["world_id"]] += 1
        self.diversity.add_example(e.metadata, e.messages)

    @property
    def no_call(self) -> int:
        """Examples where the agent called no tool (restraint: irrelevance), as the diversity table counts them."""
        return sum(f.no_call for f in self.diversity.families.values())

    @classmethod
    def of(cls, examples: Iterable[SFTExample]) -> ExportCounts:
        counts = cls()
        for e in examples:
            counts.add(e)
        return counts


class ExportWriter:
    """The export folder written example by example, beside its final name, in each of `formats` (names in
    formats.FORMATS): `finish` renames it into place; closing without `finish` (an error) removes it. Use as a
    context manager."""

    def __init__(self, out: Path, formats: Iterable[str] = DEFAULT_FORMATS):
        self.out = out
        self.tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp.mkdir(parents=True)
        self.counts = ExportCounts()
        self.formats = [FORMATS[name]() for name in dict.fromkeys(formats)]  # a name given twice is written once
        self._files = contextlib.ExitStack()
        try:
            for fmt in self.formats:
                self._files.callback(fmt.close)  # before open: a format that fails half way closes what it opened
                fmt.open(self.tmp)
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise

    def write(self, e: SFTExample) -> None:
        self.counts.add(e)
        for fmt in self.formats:
            fmt.write(e)

    def finish(self, card: str, held: HeldOut | None = None) -> dict[str, Path]:
        for fmt in self.formats:
            fmt.finish()
        self.close()
        (self.tmp / EXPORT_CARD).write_text(card)
        if held is not None:
            (self.tmp / HELD_OUT_FILE).write_text(held.model_dump_json(indent=2) + "\n")
        out = self.out
        old = out.with_name(out.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if out.exists():
            out.rename(old)
        self.tmp.rename(out)
        shutil.rmtree(old, ignore_errors=True)
        return {**{fmt.name: out / fmt.folder for fmt in self.formats}, "card": out / EXPORT_CARD}

    def close(self) -> None:
        self._files.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close()
        if exc_type is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


def write_export(
    examples: Iterable[SFTExample],
    out: Path,
    card: str,
    formats: Iterable[str] = DEFAULT_FORMATS,
    held: HeldOut | None = None,
) -> dict[str, Path]:
    """Write `formats` into `out` (atomically, as a whole folder)."""
    with ExportWriter(out, formats) as writer:
        for e in examples:
            writer.write(e)
        return writer.finish(card, held)


UNVERIFIABLE_POLICY = {
    "strict": "(dropped: every claim of a kept reply is supported by what the conversation showed).",
    "critic": "(the critic ruled on each such sentence; those it found unsupported dropped their episode).",
    "lenient": "(kept, and counted here).",
}


def dataset_card(
    run_id: str,
    examples: Iterable[SFTExample] | ExportCounts,
    funnel: dict[str, int],
    dropped: Counter,
    policy: dict[str, Any],
    tools: dict[str, ToolSpec | ToolInfo],
    licence: str,
    models: dict[str, str],
    formats: Sequence[str] = DEFAULT_FORMATS,
    worlds: dict[str, WorldInfo] | None = None,
    held: HeldOut | None = None,
    per_task: str = "all",
) -> str:
    """The README.md of the export: counts, yield, sources, filters, and the `formats` written with their folders.
    Its `configs` header points `load_dataset(folder)` at the Parquet files, or at the JSONL ones without Parquet."""
    counts = examples if isinstance(examples, ExportCounts) else ExportCounts.of(examples)
    chosen = [FORMATS[name] for name in dict.fromkeys(formats)]
    loaded = Parquet if Parquet in chosen else Jsonl
    splits, called = counts.splits, counts.called
    n_examples = sum(splits.values())
    servers = sorted({tools[t].server for t in called if t in tools and tools[t].server and tools[t].source == "mcp"})
    sources = Counter(tools[t].source for t in called if t in tools)
    worlds = worlds or {}
    world_examples: Counter[str] = Counter()
    world_count: Counter[str] = Counter()
    for world_id, n in counts.worlds.items():
        source = (
            WORLD_SOURCES.get(worlds[world_id].source, worlds[world_id].source) if world_id in worlds else "unknown"
        )
        world_examples[source] += n
        world_count[source] += 1
    lines = [
        "---",
        "configs:",
        "- config_name: default",
        "  data_files:",
        *(line for s in SPLITS for line in (f"  - split: {s}", f"    path: {loaded.path(Path(), s).as_posix()}")),
        "tags: [tool-use, agents, synthetic, sft, worldsmith]",
        "---",
        "",
        f"# worldsmith SFT dataset — run `{run_id}`",
        "",
        (
            "Multi-turn tool-use conversations made by worldsmith: agents with tool bundles talked with a "
            "simulated user; their tool calls"
        ),
        (
            "were executed by code on seeded worlds (an LLM simulator stood in only for tools code cannot run), "
            "with seeded faults;"
        ),
        "only the trajectories the judge kept, checked against each task's executed gold end state, are here.",
        "",
        "## Counts",
        "",
        "| split | examples | agents |",
        "| --- | --- | --- |",
        *(f"| {s} | {splits.get(s, 0)} | {len(counts.agents[s])} |" for s in SPLITS),
        "",
        (
            f"- Distinct tasks: {len(counts.tasks)} (`export.per_task: {per_task}`: "
            + ("the best kept sample of each task" if per_task == "best" else "every kept sample of a task")
            + "). By family: "
            + (", ".join(f"{k} {v}" for k, v in sorted(counts.families.items())) or "none")
            + "."
        ),
        (
            f"- No tool call: {counts.no_call} of {n_examples} examples "
            f"({counts.no_call / n_examples:.0%}): the agent answered without calling a tool."
            if n_examples
            else "- No tool call: no examples."
        ),
        "",
        "## Yield",
        "",
        "| step | count |",
        "| --- | --- |",
        *(f"| {k} | {v} |" for k, v in funnel.items()),
        "",
        "Dropped at export: " + (", ".join(f"{k} {v}" for k, v in sorted(dropped.items())) or "none") + ".",
        "",
        "## Sources",
        "",
        (
            f"- Tools called: {len(called)} ({', '.join(f'{k} {v}' for k, v in sorted(sources.items())) or 'none'}); "
            f"MCP servers: {', '.join(servers) or 'none'}."
        ),
        (
            f"- Worlds: {sum(world_count.values())} "
            f"({', '.join(f'{k} {v}' for k, v in sorted(world_count.items())) or 'none'}); examples by world source: "
            f"{', '.join(f'{k} {v}' for k, v in sorted(world_examples.items())) or 'none'}. `pack`: a domain pack "
            "written by hand (worlds/); `crawled`: inferred by code from a crawled MCP server's tools, which keep "
            "their real schemas; `designed`: designed by the model and validated; `derived`: derived by code from "
            "the domain's entities."
        ),
        f"- Models: {', '.join(f'{r} = {m}' for r, m in sorted(models.items()))}.",
        "- Difficulties: " + (", ".join(f"{k} {v}" for k, v in sorted(counts.difficulty.items())) or "none") + ".",
        "",
        "## Diversity by task family",
        "",
        *markdown_table(counts.diversity.rows()),
        "",
        (
            "`chain shapes`: distinct read/write patterns of the calls that succeeded (`read>write`); `distinct 2`: "
            "unique word bigrams of the opening requests over all of them; `near duplicate rate`: the share of "
            f"requests with an earlier one of the family at MinHash Jaccard >= {NEAR_DUPLICATE_JACCARD}."
        ),
        (
            "- Agent decoding: "
            + (", ".join(f"{k} {v}" for k, v in sorted(counts.decoding.items())) or "none")
            + ". `grounded`: constrained tool calls whose key arguments could only be keys the conversation had "
            "shown, and whose record-naming text arguments only values it had shown (a decoding aid for small "
            "policies; the messages themselves are ordinary); `constrained`: "
            "JSON-schema tool calls; `native`: the server's own tool calling."
        ),
        (
            f"- Replies sampled again: {counts.resampled} of {sum(counts.splits.values())} examples have a reply to "
            "the user that was sampled again because the first sample was not prose (JSON fragments, markup, a loop), "
            "ignored the result it answered, or said what the judge's checks reject (a value, name or event nothing "
            "showed: `rollouts.reply_attempts`, `reply_passes_checks`); the judge read the reply that was kept."
        ),
        "",
        "## Filters (judge policy)",
        "",
        (
            f"Each reply's claims (a value or name given for a record's field, a count, an action, a state, a failure) "
            f"were checked against the conversation and the executed world; a contradicted claim drops its episode. "
            f"Claims nothing supports or contradicts: `unverifiable: {policy.get('unverifiable', 'strict')}` "
            + UNVERIFIABLE_POLICY.get(str(policy.get("unverifiable", "strict")), "")
            + f" {counts.unverified} of {sum(counts.splits.values())} examples hold at least one "
            "(`metadata.unverifiable_claims`)."
        ),
        "",
        *(f"- `{k}`: {json.dumps(v)}" for k, v in policy.items()),
        "",
        "## Format",
        "",
        "| format | files | content |",
        "| --- | --- | --- |",
        *(
            f"| {f.name} | {', '.join(f'`{f.path(Path(), s).as_posix()}`' for s in SPLITS)} | {f.about} |"
            for f in chosen
        ),
        "",
        (
            "`messages` is OpenAI chat format (assistant `tool_calls` with JSON-string `arguments`, "
            "`tool` messages with `tool_call_id`);"
        ),
        (
            "`tools` is a JSON string of OpenAI function tools (`json.loads` it, as TRL does); "
            "`metadata` holds lineage ids."
        ),
        split_text(held),
        f'`load_dataset("<this folder>")` reads the {loaded.name} files.',
        "",
        "## Licence",
        "",
        licence,
        "",
    ]
    return "\n".join(lines)
