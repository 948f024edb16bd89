"""The export stage: kept trajectories -> SFT records in the store and the dataset folder.

Streamed, so memory does not grow with the run. DuckDB joins the kept trajectories (only the
columns the export uses) with their verdict, task and agent, and hands them over in batches;
examples are decided in trajectory_id order, so they are sorted first, a bucket at a time:
one pass splits them by id range into spill files, then each bucket is sorted in memory.
(DuckDB's own ORDER BY holds long text in memory: 110k trajectories of ~3 kB ran out of a
256 MB limit.) Each batch becomes examples, appended to the store and written to the
folder; what stays in memory across batches is per example a digest and a MinHash.
"""

from __future__ import annotations

import bisect
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from worldsmith.context import RunContext
from worldsmith.export.coding import export_coding
from worldsmith.export.sft import (
    AgentInfo,
    ExampleBuilder,
    ExportWriter,
    TaskInfo,
    ToolInfo,
    WorldInfo,
    dataset_card,
    held_out,
)
from worldsmith.records import Agent, SFTExample, Task, ToolSpec, Trajectory, Verdict, World
from worldsmith.stage import Shard, Stage
from worldsmith.store import stored_record, yield_funnel
from worldsmith.vocab import EPISODE_ROLES

BATCH_ROWS = 1000  # kept trajectories turned into examples at a time
BUCKET_ROWS = 10_000  # kept trajectories sorted in memory at once (about: bucket bounds come from a sample) ...
MAX_BUCKETS = 500  # ... unless that needs more spill files open at once than this
DUCKDB_MEMORY_LIMIT = "128MB"  # its hash joins spill to disk beyond this

# The Trajectory fields the export reads: world states, usage and raw output stay on disk.
TRAJECTORY_COLUMNS = (
    "trajectory_id",
    "task_id",
    "agent_id",
    "sample",
    "seed",
    "model",
    "messages",
    "tools",
    "calls",
    "faults",
    "decoding",
    "reply_resamples",
)
KEPT_FROM = "FROM trajectories t JOIN kept_verdicts v ON v.trajectory_id = t.trajectory_id"
# the verdicts the export takes (a temp view): every kept one, or the best kept sample of each task
KEPT_VERDICTS = {
    "all": "CREATE OR REPLACE TEMP VIEW kept_verdicts AS SELECT * FROM verdicts WHERE passed",
    "best": """
        CREATE OR REPLACE TEMP VIEW kept_verdicts AS
        SELECT v.* FROM verdicts v JOIN trajectories t ON t.trajectory_id = v.trajectory_id WHERE v.passed
        QUALIFY row_number() OVER (
            PARTITION BY t.task_id
            ORDER BY v.critic_score DESC NULLS LAST, json_array_length(coalesce(v.claims, '[]')),
                     json_array_length(coalesce(t.calls, '[]')), length(t.messages), v.trajectory_id) = 1""",
}
PASSED_COUNT = "SELECT count(*) FROM verdicts v JOIN trajectories t ON t.trajectory_id = v.trajectory_id WHERE passed"
KEPT = f"""
    SELECT {", ".join("t." + c for c in TRAJECTORY_COLUMNS)}, v.critic_score, v.claims AS claims,
           k.task_id IS NOT NULL AS has_task, k.difficulty, json_extract_string(k.blueprint, '$.family') AS family,
           a.agent_id IS NOT NULL AS has_agent, a.domain, a.tool_ids,
           a.world_id
    {KEPT_FROM} LEFT JOIN tasks k ON k.task_id = t.task_id LEFT JOIN agents a ON a.agent_id = t.agent_id"""
KEPT_AGENTS = f"SELECT DISTINCT t.agent_id {KEPT_FROM}"
KEPT_COUNT = f"SELECT count(*) {KEPT_FROM}"
# bucket bounds from a sample of the kept ids (a sort of every id would grow with the run);
# exact when the sample holds them all
BUCKET_SAMPLE = f"SELECT t.trajectory_id {KEPT_FROM} USING SAMPLE reservoir({{rows}} ROWS) REPEATABLE (1)"
SAMPLE_PER_BUCKET = 100


def unverified(claims: str | None) -> int:
    """How many claims of a kept episode nothing supported or contradicted (kept under `judge.unverifiable: lenient`,
    or ruled supported by the critic)."""
    return sum(c.get("status") == "unverifiable" for c in json.loads(claims or "[]"))


def export_dir(ctx: RunContext) -> Path:
    return ctx.path(ctx.cfg.export.out_dir) / ctx.run_id


def spill_kept(con: duckdb.DuckDBPyConnection, spill: Path, batch_rows: int, bucket_rows: int) -> list[Path]:
    """Pass one: the rows of KEPT split by trajectory_id range into bucket files (Arrow IPC streams),
    listed in id order."""
    n_buckets = min(MAX_BUCKETS, -(-con.execute(KEPT_COUNT).fetchall()[0][0] // bucket_rows))
    starts: list[str] = []  # the first id of every bucket but the first
    if n_buckets > 1:
        sample = sorted(i for (i,) in con.execute(BUCKET_SAMPLE.format(rows=SAMPLE_PER_BUCKET * n_buckets)).fetchall())
        starts = sorted({sample[len(sample) * k // n_buckets] for k in range(1, n_buckets)})
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    writers: dict[int, pa.ipc.RecordBatchStreamWriter] = {}
    try:
        for batch in con.sql(KEPT).to_arrow_reader(batch_rows):
            bucket = pa.array([bisect.bisect_right(starts, i) for i in batch.column("trajectory_id").to_pylist()])
            for b in pc.unique(bucket).to_pylist():
                if b not in writers:
                    writers[b] = pa.ipc.new_stream(str(spill / f"bucket-{b:06d}.arrows"), batch.schema, options=options)
                writers[b].write_batch(batch.filter(pc.equal(bucket, b)))
    finally:
        for writer in writers.values():
            writer.close()
    return [spill / f"bucket-{b:06d}.arrows" for b in sorted(writers)]


def read_sorted(buckets: list[Path], batch_rows: int) -> Iterator[pa.RecordBatch]:
    """Pass two: the buckets' rows in trajectory_id order, in batches; one bucket in memory at a time."""
    for path in buckets:
        with pa.ipc.open_stream(str(path)) as reader:
            bucket = reader.read_all()
        path.unlink()
        order = pc.sort_indices(bucket, sort_keys=[("trajectory_id", "ascending")])
        for i in range(0, len(order), batch_rows):  # taken a batch at a time: no sorted copy of the whole bucket
            yield from bucket.take(order[i : i + batch_rows]).to_batches()


def run(
    ctx: RunContext, shard: Shard | None = None, batch_rows: int = BATCH_ROWS, bucket_rows: int = BUCKET_ROWS
) -> dict[str, Any]:
    cfg = ctx.cfg.export
    out = export_dir(ctx)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{out.name}.spill-", dir=out.parent) as spill:
        # closed before the examples are made, so its memory is given back
        with duckdb.connect(config={"memory_limit": DUCKDB_MEMORY_LIMIT, "temp_directory": spill}) as con:
            ctx.store.views(con, (ToolSpec, Agent, Task, Trajectory, Verdict, SFTExample, World))
            con.execute(KEPT_VERDICTS[cfg.per_task])
            # kept by the judge, not taken: another sample of the same task was the best (none under per_task: all)
            other_samples = (
                con.execute(PASSED_COUNT).fetchall()[0][0] - con.execute(KEPT_COUNT).fetchall()[0][0]
                if cfg.per_task == "best"
                else 0
            )
            tools = {
                tool_id: ToolInfo(server, source)
                for tool_id, server, source in con.execute("SELECT tool_id, server, source FROM tools").fetchall()
            }
            worlds = {
                world_id: WorldInfo(source)
                for world_id, source in con.execute("SELECT world_id, source FROM worlds").fetchall()
            }
            funnel = yield_funnel(con, ctx.run_id)  # its `exported` is this export's, counted below
            held = held_out(
                cfg,
                con.execute("SELECT agent_id, world_id FROM agents").fetchall(),
                [a for (a,) in con.execute(KEPT_AGENTS).fetchall()],
                {world_id: info.source for world_id, info in worlds.items()},
            )
            buckets = spill_kept(con, Path(spill), batch_rows, bucket_rows)
        builder = ExampleBuilder(ctx.run_id, cfg, held)
        if other_samples:
            builder.dropped["other_sample_of_task"] = other_samples
        # the run's examples are this export's: after a re-judge, one the judge no longer keeps must go
        with ctx.store.rewrite(SFTExample), ExportWriter(out, cfg.formats) as writer:
            for batch in read_sorted(buckets, batch_rows):
                examples = []
                for row in batch.to_pylist():
                    task = TaskInfo(row["difficulty"], row["family"]) if row["has_task"] else None
                    agent = AgentInfo(row["domain"], row["tool_ids"], row["world_id"]) if row["has_agent"] else None
                    trajectory = stored_record(Trajectory, {c: row[c] for c in TRAJECTORY_COLUMNS})
                    example = builder.add(trajectory, row["critic_score"], task, agent, unverified(row["claims"]))
                    if example is not None:
                        writer.write(example)
                        examples.append(example)
                ctx.store.append(examples)
            n_examples = funnel["exported"] = sum(writer.counts.splits.values())
            # the models that made a kept episode (the policy's name when llm.policy is on)
            models = {r: ctx.cfg.llm.model_for(r) for r in (*EPISODE_ROLES, "critic")}
            policy = ctx.cfg.judge.model_dump(exclude={"enabled", "concurrency"})
            card = dataset_card(
                ctx.run_id,
                writer.counts,
                funnel,
                builder.dropped,
                policy,
                tools,
                cfg.licence_note,
                models,
                cfg.formats,
                worlds,
                held,
                cfg.per_task,
            )
            paths = writer.finish(card, held)
    coding = export_coding(ctx.store, out) if ctx.cfg.coding.enabled else {}  # kept coding episodes, coding tasks
    splits = writer.counts.splits
    return {
        **coding,
        "examples": n_examples,
        "train": splits.get("train", 0),
        "validation": splits.get("validation", 0),
        **{f"dropped:{k}": v for k, v in sorted(builder.dropped.items())},
        "folder": str(paths["card"].parent),
    }


STAGE = Stage(
    "export",
    "The SFT dataset from the kept trajectories, in the formats export.formats names "
    "(Parquet, JSONL, OpenAI JSONL, ShareGPT), and a dataset card.",
    run,
    section="export",
    totals=frozenset({"examples", "train", "validation", "dropped:"}),
)
