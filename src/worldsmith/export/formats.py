"""The export's file formats: one class each, listed in FORMATS (the only list of them).

A format writes one file per split (`vocab.SPLITS`) under its own folder of the export.
`ExportWriter` (sft.py) makes one of each format `export.formats` names, then calls
`open(root)` once, `write(example)` per example, and `finish()` when every example is in
(or only `close()`, on an error: the folder is thrown away). A new format is a subclass
added to FORMATS; a JSON-lines one only needs `name`, `folder`, `about` and `row`.

This module imports nothing from the config: the config imports it to check the names.
"""

from __future__ import annotations

import itertools
import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import IO, Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq

from worldsmith.records import SFTExample
from worldsmith.vocab import SPLITS, export_jsonl

TOOL_CALL = pa.struct(
    [
        ("id", pa.string()),
        ("type", pa.string()),
        ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())])),
    ]
)
MESSAGE = pa.struct(
    [
        ("role", pa.string()),
        ("content", pa.string()),
        ("tool_calls", pa.list_(TOOL_CALL)),
        ("tool_call_id", pa.string()),
    ]
)
METADATA_FIELDS = [
    ("run_id", pa.string()),
    ("trajectory_id", pa.string()),
    ("task_id", pa.string()),
    ("agent_id", pa.string()),
    ("domain", pa.string()),
    ("difficulty", pa.string()),
    ("family", pa.string()),
    ("chain", pa.string()),
    ("tool_ids", pa.list_(pa.string())),
    ("called_tool_ids", pa.list_(pa.string())),
    ("seed", pa.int64()),
    ("sample", pa.int64()),
    ("model", pa.string()),
    ("critic_score", pa.float64()),
    ("faults", pa.int64()),
]
SCHEMA = pa.schema(
    [
        ("example_id", pa.string()),
        ("messages", pa.list_(MESSAGE)),
        ("tools", pa.string()),
        ("metadata", pa.struct(METADATA_FIELDS)),
    ]
)

# Examples per Parquet row group, as `datasets` writes them: the most the writer buffers per
# split, and fixed, so the files do not depend on how the examples were batched upstream.
ROW_GROUP_ROWS = 1000


class ExportFormat(ABC):
    """One layout of the export: a file per split under `folder`."""

    name: ClassVar[str]  # its key in FORMATS and in export.formats
    folder: ClassVar[str]  # its sub-folder of the export
    suffix: ClassVar[str]
    about: ClassVar[str]  # what the dataset card says of it

    @classmethod
    def path(cls, root: Path, split: str) -> Path:
        """The file of `split` in the export folder `root`."""
        return root / cls.folder / f"{split}{cls.suffix}"

    @abstractmethod
    def open(self, root: Path) -> None:
        """Create this format's files (one per split) in the export folder `root`."""

    @abstractmethod
    def write(self, example: SFTExample) -> None: ...

    def finish(self) -> None:
        """Every example is written: complete the files."""
        self.close()

    @abstractmethod
    def close(self) -> None:
        """Release the files; safe to call twice, or after an `open` that failed half way."""


class JsonLinesFormat(ExportFormat):
    """A JSON object per example and line."""

    suffix = ".jsonl"

    def __init__(self) -> None:
        self._files: dict[str, IO[str]] = {}

    def open(self, root: Path) -> None:
        for split in SPLITS:
            path = self.path(root, split)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._files[split] = open(path, "w", encoding="utf-8")

    def write(self, example: SFTExample) -> None:
        self._files[example.split].write(json.dumps(self.row(example), ensure_ascii=False) + "\n")

    @abstractmethod
    def row(self, e: SFTExample) -> dict[str, Any]: ...

    def close(self) -> None:
        for f in self._files.values():
            f.close()


def parquet_row(e: SFTExample) -> dict[str, Any]:
    msgs = [
        {
            "role": m["role"],
            "content": m.get("content"),
            "tool_calls": m.get("tool_calls"),
            "tool_call_id": m.get("tool_call_id"),
        }
        for m in e.messages
    ]
    return {"example_id": e.example_id, "messages": msgs, "tools": e.tools, "metadata": e.metadata}


class Parquet(ExportFormat):
    """`data/<split>.parquet` (zstd, SCHEMA), written a row group of ROW_GROUP_ROWS examples at a time."""

    name, folder, suffix = "parquet", "data", ".parquet"
    about = (
        'columns `example_id`, `messages`, `tools`, `metadata`; what `load_dataset("<this folder>")` '
        'and `load_dataset("parquet", data_files=...)` read'
    )

    def __init__(self) -> None:
        self._writers: dict[str, pq.ParquetWriter] = {}
        self._pending: dict[str, list[dict[str, Any]]] = {s: [] for s in SPLITS}
        self._flushed = dict.fromkeys(SPLITS, False)

    def open(self, root: Path) -> None:
        (root / self.folder).mkdir(parents=True, exist_ok=True)
        for split in SPLITS:
            self._writers[split] = pq.ParquetWriter(self.path(root, split), SCHEMA, compression="zstd")

    def write(self, example: SFTExample) -> None:
        pending = self._pending[example.split]
        pending.append(parquet_row(example))
        if len(pending) >= ROW_GROUP_ROWS:
            self._flush(example.split)

    def _flush(self, split: str) -> None:
        rows, self._pending[split] = self._pending[split], []
        self._writers[split].write_table(pa.Table.from_pylist(rows, schema=SCHEMA))
        self._flushed[split] = True

    def finish(self) -> None:
        for split in SPLITS:
            if self._pending[split] or not self._flushed[split]:  # an empty split still gets its file (a row group)
                self._flush(split)
        self.close()

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()


class Jsonl(JsonLinesFormat):
    """`jsonl/<split>.jsonl`: the Parquet rows as JSON lines; the path is `vocab.export_jsonl`'s, as finetune and
    eval read it there (so this format is always written: see ExportConfig)."""

    name = "jsonl"
    folder = export_jsonl("", SPLITS[0]).parent.as_posix()
    about = "rows `example_id`, `messages`, `tools`, `metadata` as JSON lines (what finetune and eval read)"

    @classmethod
    def path(cls, root: Path, split: str) -> Path:
        return export_jsonl(root, split)

    def row(self, e: SFTExample) -> dict[str, Any]:
        return {"example_id": e.example_id, "messages": e.messages, "tools": e.tools, "metadata": e.metadata}


class OpenAIChat(JsonLinesFormat):
    """`openai/<split>.jsonl`: the OpenAI fine-tuning format."""

    name, folder = "openai", "openai"
    about = "the OpenAI fine-tuning format: `messages`, `tools` as a list, `parallel_tool_calls`"

    def row(self, e: SFTExample) -> dict[str, Any]:
        return {"messages": e.messages, "tools": json.loads(e.tools), "parallel_tool_calls": True}


class ShareGPT(JsonLinesFormat):
    """`sharegpt/<split>.jsonl`: LLaMA-Factory's sharegpt layout with tools (Axolotl reads it as well), rows
    `{"conversations": [{"from": ..., "value": ...}], "tools": "<JSON string>"}`. The mapping:

    - `system` -> "system" (the first turn: LLaMA-Factory takes a leading system turn as the system prompt);
      `user` -> "human"; `assistant` without tool calls -> "gpt" (value: its content).
    - `assistant` with tool calls -> one "function_call" turn, value the JSON of `{"name", "arguments"}` with the
      arguments as an object (kept as text if they are not JSON); a list of them for parallel calls. Text beside
      the calls is dropped: the format has no place for it.
    - `tool` -> "observation", value its content; the replies to parallel calls become one turn, value the JSON
      list of their contents in call order, since LLaMA-Factory wants human/observation and gpt/function_call
      to alternate.
    - `tools`: the JSON string of the bare function objects (`{"name", "description", "parameters"}`), the form
      LLaMA-Factory's tool datasets use (newer versions also unwrap `{"type": "function"}` themselves).
    """

    name, folder = "sharegpt", "sharegpt"
    about = (
        "`conversations` (`from`: system, human, gpt, function_call, observation; `value`) and `tools` "
        "(a JSON string), LLaMA-Factory's sharegpt format with tools"
    )
    ROLES: ClassVar[dict[str, str]] = {"system": "system", "user": "human", "assistant": "gpt", "tool": "observation"}

    def row(self, e: SFTExample) -> dict[str, Any]:
        turns = []
        for role, group in itertools.groupby(e.messages, key=lambda m: m["role"]):
            messages = list(group)
            if role == "tool":
                replies = [m["content"] for m in messages]
                value = replies[0] if len(replies) == 1 else json.dumps(replies, ensure_ascii=False)
                turns.append({"from": self.ROLES[role], "value": value})
                continue
            for m in messages:
                if m.get("tool_calls"):
                    calls = [
                        {"name": c["function"]["name"], "arguments": _arguments(c["function"]["arguments"])}
                        for c in m["tool_calls"]
                    ]
                    value = json.dumps(calls[0] if len(calls) == 1 else calls, ensure_ascii=False)
                    turns.append({"from": "function_call", "value": value})
                else:
                    turns.append({"from": self.ROLES[role], "value": m.get("content") or ""})
        tools = [t["function"] if t.get("type") == "function" else t for t in json.loads(e.tools)]
        return {"conversations": turns, "tools": json.dumps(tools, ensure_ascii=False)}


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):  # not JSON: the judge's checks normally drop such calls; keep what was said
        return text


# The formats by name; config errors list them in this order.
FORMATS: dict[str, type[ExportFormat]] = {f.name: f for f in (Parquet, Jsonl, OpenAIChat, ShareGPT)}
