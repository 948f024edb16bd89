"""SFT examples from the trajectories the judge kept, written where the usual tools read them.

Layout of `<export.out_dir>/<run_id>/`:
- `data/train.parquet`, `data/validation.parquet`: columns `messages` (OpenAI chat format:
  assistant `tool_calls` with JSON-string arguments, `tool` replies with `tool_call_id`),
  `tools` (the agent's OpenAI function tools as a JSON *string*: TRL `json.loads` a
  string column, while a struct column would make Arrow merge every agent's schemas and
  add null keys), `metadata` (lineage ids), `example_id`.
- `jsonl/{train,validation}.jsonl`: the same rows; `openai/{train,validation}.jsonl`: the
  OpenAI fine-tuning format (`messages`, `tools` as a list, `parallel_tool_calls`).
- `README.md`: the dataset card, with a `configs` header so `load_dataset(folder)` works.

Examples are deduplicated (exact, then MinHash near copies), split by agent (no agent in
both splits) and optionally capped per tool and per domain. The folder is built beside
its final name and renamed into place, so it is either the old export or the new one.

Both steps work one example at a time (`ExampleBuilder`, `ExportWriter`), so the export
stage can stream trajectories in batches: what is kept across examples is a digest and a
MinHash per example, counters, and at most one Parquet row group per split.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import zlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple, Self

import pyarrow as pa
import pyarrow.parquet as pq

from worldsmith.config import ExportConfig
from worldsmith.dedup import MinHashIndex, word_shingles
from worldsmith.records import Agent, SFTExample, Task, ToolSpec, Trajectory, Verdict, content_id
from worldsmith.vocab import SPLITS, strip_end_tokens

TOOL_CALL = pa.struct([("id", pa.string()), ("type", pa.string()), ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())]))])
MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string()), ("tool_calls", pa.list_(TOOL_CALL)), ("tool_call_id", pa.string())])
METADATA_FIELDS = [("run_id", pa.string()), ("trajectory_id", pa.string()), ("task_id", pa.string()), ("agent_id", pa.string()),
                   ("domain", pa.string()), ("difficulty", pa.string()), ("tool_ids", pa.list_(pa.string())),
                   ("called_tool_ids", pa.list_(pa.string())), ("seed", pa.int64()), ("sample", pa.int64()), ("model", pa.string()),
                   ("critic_score", pa.float64()), ("faults", pa.int64())]  # fmt: skip
SCHEMA = pa.schema([("example_id", pa.string()), ("messages", pa.list_(MESSAGE)), ("tools", pa.string()), ("metadata", pa.struct(METADATA_FIELDS))])


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
                msg["tool_calls"] = [{"id": c["id"], "type": "function", "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}}
                                     for c in m["tool_calls"]]  # fmt: skip
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


def validation_agents(agent_ids: list[str], fraction: float) -> set[str]:
    """Agents held out: a stable hash per agent decides; with two or more agents and a
    fraction above zero, at least one is held out and at least one kept for training."""
    ids = sorted(set(agent_ids), key=lambda a: zlib.crc32(a.encode()))
    if fraction <= 0 or len(ids) < 2:
        return set()
    held = {a for a in ids if zlib.crc32(a.encode()) / 2**32 < fraction}
    if not held:
        held = {ids[0]}
    if len(held) == len(ids):
        held.discard(ids[-1])
    return held


class TaskInfo(NamedTuple):
    """What the export reads of a task (a `Task` does as well)."""

    difficulty: str


class AgentInfo(NamedTuple):
    """What the export reads of an agent (an `Agent` does as well)."""

    domain: str
    tool_ids: list[str]


class ToolInfo(NamedTuple):
    """What the dataset card reads of a tool (a `ToolSpec` does as well)."""

    server: str | None
    source: str


class ExampleBuilder:
    """The export's decisions, one kept trajectory at a time: fed in trajectory_id order, it
    gives the same examples as sorting them all first. Its state per example is a digest and
    a MinHash (plus per-tool and per-domain counters), so it does not hold trajectories."""

    def __init__(self, run_id: str, cfg: ExportConfig, held: set[str]):
        self.run_id, self.cfg, self.held = run_id, cfg, held
        self.dropped: Counter[str] = Counter()
        self.exact: set[str] = set()
        self.near = MinHashIndex(threshold=cfg.near_duplicate_threshold) if cfg.near_duplicate_threshold < 1 else None
        self.per_tool: Counter[str] = Counter()
        self.per_domain: Counter[str] = Counter()

    def add(self, traj: Trajectory, critic_score: float | None, task: TaskInfo | Task | None, agent: AgentInfo | Agent | None) -> SFTExample | None:
        """The example made of `traj`, or None (counted in `dropped`)."""
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
            example_id=content_id(self.run_id, traj.trajectory_id, prefix="ex_"), messages=messages, tools=tools_text,
            split="validation" if traj.agent_id in self.held else "train",
            metadata={"run_id": self.run_id, "trajectory_id": traj.trajectory_id, "task_id": traj.task_id, "agent_id": traj.agent_id,
                      "domain": domain, "difficulty": task.difficulty if task else None, "tool_ids": agent.tool_ids if agent else [],
                      "called_tool_ids": called, "seed": traj.seed, "sample": traj.sample, "model": traj.model,
                      "critic_score": critic_score, "faults": len(traj.faults)},
        )  # fmt: skip


def build_examples(run_id: str, cfg: ExportConfig, trajectories: list[Trajectory], verdicts: list[Verdict], tasks: dict[str, Task],
                   agents: dict[str, Agent]) -> tuple[list[SFTExample], Counter]:  # fmt: skip
    """Kept trajectories -> deduplicated, capped, split examples; the counter says what was dropped and why.
    All in memory: the export stage streams the same steps (see stage.py)."""
    kept = {v.trajectory_id: v for v in verdicts if v.passed}
    held = validation_agents([t.agent_id for t in trajectories if t.trajectory_id in kept], cfg.validation_fraction)
    builder = ExampleBuilder(run_id, cfg, held)
    examples = []
    for traj in sorted((t for t in trajectories if t.trajectory_id in kept), key=lambda t: t.trajectory_id):
        example = builder.add(traj, kept[traj.trajectory_id].critic_score, tasks.get(traj.task_id), agents.get(traj.agent_id))
        if example is not None:
            examples.append(example)
    return examples, builder.dropped


def _row(e: SFTExample) -> dict[str, Any]:
    msgs = [{"role": m["role"], "content": m.get("content"), "tool_calls": m.get("tool_calls"), "tool_call_id": m.get("tool_call_id")} for m in e.messages]
    return {"example_id": e.example_id, "messages": msgs, "tools": e.tools, "metadata": e.metadata}


# Examples per Parquet row group, as `datasets` writes them: the most the writer buffers per
# split, and fixed, so the files do not depend on how the examples were batched upstream.
ROW_GROUP_ROWS = 1000


@dataclass
class ExportCounts:
    """What the dataset card counts, gathered example by example."""

    splits: Counter[str] = field(default_factory=Counter)
    called: Counter[str] = field(default_factory=Counter)
    agents: dict[str, set[str]] = field(default_factory=lambda: {s: set() for s in SPLITS})

    def add(self, e: SFTExample) -> None:
        self.splits[e.split] += 1
        self.called.update(e.metadata["called_tool_ids"])
        self.agents[e.split].add(e.metadata["agent_id"])

    @classmethod
    def of(cls, examples: Iterable[SFTExample]) -> ExportCounts:
        counts = cls()
        for e in examples:
            counts.add(e)
        return counts


class ExportWriter:
    """The export folder written example by example, beside its final name: `finish` renames
    it into place; closing without `finish` (an error) removes it. Use as a context manager."""

    def __init__(self, out: Path):
        self.out = out
        self.tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(self.tmp, ignore_errors=True)
        for sub in ("data", "jsonl", "openai"):
            (self.tmp / sub).mkdir(parents=True)
        self.counts = ExportCounts()
        self._files = contextlib.ExitStack()
        self._parquet = {s: self._files.enter_context(pq.ParquetWriter(self.tmp / "data" / f"{s}.parquet", SCHEMA, compression="zstd")) for s in SPLITS}
        self._jsonl: dict[str, IO[str]] = {s: self._files.enter_context(open(self.tmp / "jsonl" / f"{s}.jsonl", "w")) for s in SPLITS}
        self._openai: dict[str, IO[str]] = {s: self._files.enter_context(open(self.tmp / "openai" / f"{s}.jsonl", "w")) for s in SPLITS}
        self._pending: dict[str, list[dict[str, Any]]] = {s: [] for s in SPLITS}

    def write(self, e: SFTExample) -> None:
        self.counts.add(e)
        self._jsonl[e.split].write(json.dumps({"example_id": e.example_id, "messages": e.messages, "tools": e.tools, "metadata": e.metadata},
                                              ensure_ascii=False) + "\n")  # fmt: skip
        self._openai[e.split].write(json.dumps({"messages": e.messages, "tools": json.loads(e.tools), "parallel_tool_calls": True}, ensure_ascii=False) + "\n")
        self._pending[e.split].append(_row(e))
        if len(self._pending[e.split]) >= ROW_GROUP_ROWS:
            self._flush(e.split)

    def _flush(self, split: str) -> None:
        rows, self._pending[split] = self._pending[split], []
        self._parquet[split].write_table(pa.Table.from_pylist(rows, schema=SCHEMA))

    def finish(self, card: str) -> dict[str, Path]:
        for split in SPLITS:
            if self._pending[split] or not self.counts.splits[split]:  # an empty split still gets a file, as pq.write_table makes one
                self._flush(split)
        self.close()
        (self.tmp / "README.md").write_text(card)
        out = self.out
        old = out.with_name(out.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if out.exists():
            out.rename(old)
        self.tmp.rename(out)
        shutil.rmtree(old, ignore_errors=True)
        return {"parquet": out / "data", "jsonl": out / "jsonl", "openai": out / "openai", "card": out / "README.md"}

    def close(self) -> None:
        self._files.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close()
        if exc_type is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


def write_export(examples: Iterable[SFTExample], out: Path, card: str) -> dict[str, Path]:
    """Write every format into `out` (atomically, as a whole folder)."""
    with ExportWriter(out) as writer:
        for e in examples:
            writer.write(e)
        return writer.finish(card)


def dataset_card(run_id: str, examples: Iterable[SFTExample] | ExportCounts, funnel: dict[str, int], dropped: Counter, policy: dict[str, Any],
                 tools: dict[str, ToolSpec | ToolInfo], licence: str, models: dict[str, str]) -> str:  # fmt: skip
    counts = examples if isinstance(examples, ExportCounts) else ExportCounts.of(examples)
    splits, called = counts.splits, counts.called
    servers = sorted({tools[t].server for t in called if t in tools and tools[t].server})
    sources = Counter(tools[t].source for t in called if t in tools)
    lines = [
        "---",
        "configs:",
        "- config_name: default",
        "  data_files:",
        "  - split: train",
        "    path: data/train.parquet",
        "  - split: validation",
        "    path: data/validation.parquet",
        "tags: [tool-use, agents, synthetic, sft, worldsmith]",
        "---",
        "",
        f"# worldsmith SFT dataset — run `{run_id}`",
        "",
        "Multi-turn tool-use conversations made by worldsmith: agents with tool bundles talked with a simulated user in simulated",
        "worlds (JSON state changed by JSON Patches, seeded faults); only the trajectories the judge kept are here.",
        "",
        "## Counts",
        "",
        "| split | examples | agents |",
        "| --- | --- | --- |",
        *(f"| {s} | {splits.get(s, 0)} | {len(counts.agents[s])} |" for s in SPLITS),
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
        f"- Tools called: {len(called)} ({', '.join(f'{k} {v}' for k, v in sorted(sources.items())) or 'none'}); MCP servers: {', '.join(servers) or 'none'}.",
        f"- Models: {', '.join(f'{r} = {m}' for r, m in sorted(models.items()))}.",
        "",
        "## Filters (judge policy)",
        "",
        *(f"- `{k}`: {json.dumps(v)}" for k, v in policy.items()),
        "",
        "## Format",
        "",
        "`messages` is OpenAI chat format (assistant `tool_calls` with JSON-string `arguments`, `tool` messages with `tool_call_id`);",
        "`tools` is a JSON string of OpenAI function tools (`json.loads` it, as TRL does); `metadata` holds lineage ids. The split is",
        "by agent: no agent appears in both. Load with `datasets.load_dataset(\"parquet\", data_files=...)` or",
        "`load_dataset(\"<this folder>\")`; `openai/*.jsonl` is the OpenAI fine-tuning format.",
        "",
        "## Licence",
        "",
        licence,
        "",
    ]
    return "\n".join(lines)
