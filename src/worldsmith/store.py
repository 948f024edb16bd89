"""The run store: Parquet shards per run and stage, and a DuckDB catalog over all runs.

Layout: `<data>/runs/<run_id>/<stage>/part-*.parquet`, plus `run.json` (resolved config,
its hash, status, LLM usage) per run. A shard is written under a temporary name and
renamed, so a crash never leaves a half file that a reader could see. Ids already stored
for a stage are skipped on write, so re-running a stage resumes instead of duplicating.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import threading
import time
import types
import typing
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import TypeAdapter

from worldsmith.records import RECORD_TYPES, Part, Record

R = TypeVar("R", bound=Record)

CATALOG_FILE = "worldsmith.duckdb"
VIEWS_FILE = "views.sql"
TMP_SUFFIX = ".tmp"


class RunStore:
    """One run's folder. Thread-safe for appends from one process."""

    def __init__(self, data_dir: str | os.PathLike, run_id: str):
        self.data_dir = Path(data_dir).resolve()
        self.run_id = run_id
        self.root = self.data_dir / "runs" / run_id
        self.root.mkdir(parents=True, exist_ok=True)
        self._ids: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def __reduce__(self):
        # a shard sent to another process (a Ray worker) opens the same folder there
        return (RunStore, (str(self.data_dir), self.run_id))

    # ------------------------------------------------------------------ writing
    def stage_dir(self, stage: str) -> Path:
        return self.root / stage

    def existing_ids(self, record_type: type[Record]) -> set[str]:
        stage = record_type.stage
        if stage not in self._ids:
            ids: set[str] = set()
            for shard in self.shards(stage):
                ids.update(pq.read_table(shard, columns=[record_type.id_field]).column(0).to_pylist())
            self._ids[stage] = ids
        return self._ids[stage]

    def append(self, records: Sequence[Record]) -> int:
        """Write the records not yet stored as one new shard; returns how many were new."""
        if not records:
            return 0
        record_type = type(records[0])
        if any(type(r) is not record_type for r in records):
            raise TypeError("append() takes records of one type per call")
        with self._lock:
            seen = self.existing_ids(record_type)
            fresh: dict[str, Record] = {}
            for record in records:
                if record.record_id not in seen:
                    fresh.setdefault(record.record_id, record)
            if not fresh:
                return 0
            table = pa.Table.from_pylist([r.to_row() for r in fresh.values()], schema=record_type.arrow_schema())
            folder = self.stage_dir(record_type.stage)
            folder.mkdir(parents=True, exist_ok=True)
            name = f"part-{datetime.now(UTC):%Y%m%dT%H%M%S%f}-{uuid.uuid4().hex[:8]}.parquet"
            tmp = folder / (name + TMP_SUFFIX)
            pq.write_table(table, tmp, compression="zstd")
            with open(tmp, "rb") as fh:  # the rename must not land before the bytes do
                os.fsync(fh.fileno())
            os.replace(tmp, folder / name)
            seen.update(fresh)
            return len(fresh)

    def sweep_tmp(self) -> int:
        """Delete the temporary shards a killed writer left (`*.parquet.tmp`: never read, never renamed); how many.
        Call it where no writer of this run is at work: the start of a stage (`pipeline.run_stage`)."""
        stray = list(self.root.glob(f"*/part-*.parquet{TMP_SUFFIX}"))
        for tmp in stray:
            tmp.unlink(missing_ok=True)
        return len(stray)

    @contextlib.contextmanager
    def rewrite(self, record_type: type[Record]) -> Iterator[None]:
        """For a record type a stage makes whole each time (the export's examples): what is
        appended inside is the whole new set, and the old shards go when it is written; if the
        block fails, what it appended goes instead and the old set stays as it was."""
        stage = record_type.stage
        with self._lock:
            old = set(self.shards(stage))
            self._ids[stage] = set()
        try:
            yield
        except BaseException:
            with self._lock:
                for shard in set(self.shards(stage)) - old:
                    shard.unlink(missing_ok=True)
                self._ids.pop(stage, None)
            raise
        with self._lock:
            for shard in old:
                shard.unlink(missing_ok=True)

    def writer(self, record_type: type[Record], flush_every: int = 64, flush_seconds: float = 2.0) -> BufferedWriter:
        return BufferedWriter(self, record_type, flush_every, flush_seconds)

    # ------------------------------------------------------------------ reading
    def shards(self, stage: str) -> list[Path]:
        folder = self.stage_dir(stage)
        return sorted(folder.glob("part-*.parquet")) if folder.exists() else []

    def read(self, record_type: type[R]) -> list[R]:
        return [record_type.from_row(row) for row in self.read_rows(record_type)]

    def read_rows(self, record_type: type[Record]) -> Iterable[dict[str, Any]]:
        for shard in self.shards(record_type.stage):
            yield from pq.read_table(shard).to_pylist()

    def count(self, record_type: type[Record]) -> int:
        return sum(pq.ParquetFile(s).metadata.num_rows for s in self.shards(record_type.stage))

    def views(self, con: duckdb.DuckDBPyConnection, record_types: Iterable[type[Record]]) -> None:
        """This run's records of each type as a view on `con` named after its stage: the catalog's view
        (`view_statements`) of this run alone. Queries read the shards; read their rows with `stored_record`."""
        for record_type in record_types:
            if self.shards(record_type.stage):
                pattern = _sql_text(str(self.stage_dir(record_type.stage) / "part-*.parquet"))
                select = (
                    f"SELECT {_sql_text(self.run_id)} AS run_id, * FROM read_parquet({pattern}, union_by_name=true)"
                )
            else:
                select = _empty_select(record_type)
            con.execute(f"CREATE VIEW {record_type.stage} AS {select}")

    # ------------------------------------------------------------------ run info
    @property
    def info_path(self) -> Path:
        return self.root / "run.json"

    def read_info(self) -> dict[str, Any]:
        return json.loads(self.info_path.read_text()) if self.info_path.exists() else {}

    def write_info(self, **fields: Any) -> dict[str, Any]:
        """Merge `fields` into run.json (atomically)."""
        with self._lock:
            info = self.read_info()
            info.update(fields)
            info["run_id"] = self.run_id
            tmp = self.info_path.with_suffix(".json" + TMP_SUFFIX)
            tmp.write_text(json.dumps(info, indent=2, default=str, sort_keys=True))
            os.replace(tmp, self.info_path)
            return info


def stored_record(record_type: type[R], row: Mapping[str, Any]) -> R:
    """A record from a row of some of its stored columns (the ones a query selected), without validating
    again what `append` validated when it wrote them: JSON columns are parsed and their typed parts (`Part`s)
    made models; a NULL where the field takes none (a column added after the row was written) is the
    field's default. Fields whose column the row lacks are left unset: read only what you selected."""
    data = {}
    for name, value in row.items():
        field = record_type.model_fields.get(name)
        if field is None:
            continue
        if name in record_type.json_fields and isinstance(value, str):
            value = json.loads(value)
        if value is None and not field.is_required() and not _takes_none(field.annotation):
            value = field.get_default(call_default_factory=True)
        elif value is not None and _holds_parts(field.annotation):
            value = _adapter(field.annotation).validate_python(value)
        data[name] = value
    return record_type.model_construct(**data)


def _takes_none(annotation: Any) -> bool:
    return annotation is None or type(None) in typing.get_args(annotation)


def _holds_parts(annotation: Any) -> bool:
    if isinstance(annotation, type) and not isinstance(annotation, types.GenericAlias):
        return issubclass(annotation, Part)
    return any(_holds_parts(a) for a in typing.get_args(annotation))


@functools.cache
def _adapter(annotation: Any) -> TypeAdapter:
    return TypeAdapter(annotation)


class BufferedWriter:
    """Collects records and writes a shard every `flush_every` records or `flush_seconds`,
    so 20,000 records make a few hundred shards, not 20,000. Use as a context manager: what
    is buffered is written on exit, also when the block fails or is interrupted."""

    def __init__(self, store: RunStore, record_type: type[Record], flush_every: int, flush_seconds: float):
        self.store, self.record_type = store, record_type
        self.flush_every, self.flush_seconds = flush_every, flush_seconds
        self.buffer: list[Record] = []
        self.written = 0
        self._last = time.monotonic()

    def add(self, record: Record) -> None:
        self.buffer.append(record)
        if len(self.buffer) >= self.flush_every or time.monotonic() - self._last >= self.flush_seconds:
            self.flush()

    def flush(self) -> None:
        if self.buffer:
            batch, self.buffer = self.buffer, []
            self.written += self.store.append(batch)
        self._last = time.monotonic()

    def __enter__(self) -> BufferedWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.flush()


# ------------------------------------------------------------------------ catalog


def _sql_text(text: str) -> str:
    """`text` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _glob(data_dir: Path, stage: str) -> str:
    return str(data_dir / "runs" / "*" / stage / "part-*.parquet")


def _empty_select(record_type: type[Record]) -> str:
    cols = ", ".join(f"NULL::{_duck_type(f.type)} AS {f.name}" for f in record_type.arrow_schema())
    return f"SELECT NULL::VARCHAR AS run_id, {cols} WHERE false"


def _duck_type(t: pa.DataType) -> str:
    if pa.types.is_string(t):
        return "VARCHAR"
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_int64(t):
        return "BIGINT"
    if pa.types.is_float64(t):
        return "DOUBLE"
    if pa.types.is_timestamp(t):
        return "TIMESTAMPTZ"
    if pa.types.is_list(t):
        return "VARCHAR[]"
    raise TypeError(t)


def view_statements(data_dir: Path, relative_to: Path | None = None) -> list[str]:
    """CREATE VIEW statements for every record type and for `runs`.

    Paths are absolute for the catalog file, or relative to `relative_to` for views.sql
    (which the DuckDB CLI runs with -init from the project root).
    """
    data_dir = data_dir.resolve()
    base = data_dir if relative_to is None else Path(os.path.relpath(data_dir, relative_to))
    statements = []
    for record_type in RECORD_TYPES:
        has_files = any((data_dir / "runs").glob(f"*/{record_type.stage}/part-*.parquet"))
        if has_files:
            pattern = _glob(base, record_type.stage)
            select = (
                f"SELECT regexp_extract(filename, 'runs/([^/]+)/[^/]+/[^/]+$', 1) AS run_id, * EXCLUDE (filename) "
                f"FROM read_parquet('{pattern}', union_by_name=true, filename=true)"
            )
        else:
            select = _empty_select(record_type)
        statements.append(f"CREATE OR REPLACE VIEW {record_type.stage} AS {select};")
    if any((data_dir / "runs").glob("*/run.json")):
        pattern = str(base / "runs" / "*" / "run.json")
        statements.append(
            "CREATE OR REPLACE VIEW runs AS SELECT run_id, status, config_hash, started_at, finished_at, "
            f"stages, usage, config FROM read_json('{pattern}', union_by_name=true, format='auto', "
            "columns={run_id:'VARCHAR', status:'VARCHAR', config_hash:'VARCHAR', started_at:'VARCHAR', "
            "finished_at:'VARCHAR', stages:'JSON', usage:'JSON', config:'JSON'});"
        )
    else:
        statements.append(
            "CREATE OR REPLACE VIEW runs AS SELECT NULL::VARCHAR AS run_id, NULL::VARCHAR AS status, "
            "NULL::VARCHAR AS config_hash, NULL::VARCHAR AS started_at, NULL::VARCHAR AS finished_at, "
            "NULL::JSON AS stages, NULL::JSON AS usage, NULL::JSON AS config WHERE false;"
        )
    return statements


def refresh_catalog(data_dir: str | os.PathLike, project_root: str | os.PathLike | None = None) -> Path:
    """(Re)create the catalog views in `<data>/worldsmith.duckdb` and write `<data>/views.sql`."""
    data_dir = Path(data_dir).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    catalog = data_dir / CATALOG_FILE
    with duckdb.connect(str(catalog)) as con:
        for statement in view_statements(data_dir):
            con.execute(statement)
    root = Path(project_root).resolve() if project_root else data_dir.parent
    header = (
        "-- worldsmith catalog views for any DuckDB (e.g. the pip `duckdb` CLI):\n"
        f"--   cd {root} && duckdb -init {os.path.relpath(data_dir / VIEWS_FILE, root)}\n"
    )
    tmp = data_dir / (VIEWS_FILE + TMP_SUFFIX)
    tmp.write_text(header + "\n".join(view_statements(data_dir, relative_to=root)) + "\n")
    os.replace(tmp, data_dir / VIEWS_FILE)
    return catalog


def query(data_dir: str | os.PathLike, sql: str) -> tuple[list[str], list[tuple]]:
    """Run SQL on the catalog (read-only); returns column names and rows."""
    catalog = refresh_catalog(data_dir)
    with duckdb.connect(str(catalog), read_only=True) as con:
        cursor = con.execute(sql)
        columns = [d[0] for d in cursor.description] if cursor.description else []
        return columns, cursor.fetchall()


def latest_run(data_dir: str | os.PathLike) -> str | None:
    """The most recently started run in the catalog."""
    _, rows = query(data_dir, "SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1")
    return rows[0][0] if rows else None


# A run's yield funnel, step by step (`$run`: the run id, quoted): one row (step, n) per step, in order
YIELD_FUNNEL = """
    SELECT * FROM (VALUES
      ('tools', (SELECT count(DISTINCT tool_id) FROM tools WHERE run_id = $run)),
      ('agents', (SELECT count(DISTINCT agent_id) FROM agents WHERE run_id = $run)),
      ('tasks', (SELECT count(DISTINCT task_id) FROM tasks WHERE run_id = $run)),
      ('trajectories', (SELECT count(*) FROM trajectories WHERE run_id = $run)),
      ('passed', (SELECT count(*) FROM verdicts WHERE run_id = $run AND passed)),
      ('exported', (SELECT count(*) FROM sft WHERE run_id = $run))) AS f(step, n)"""


def yield_funnel(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, int]:
    """A run's yield funnel (tools, agents, tasks, trajectories, passed, exported: YIELD_FUNNEL) over the
    catalog's views (`refresh_catalog`) or the run's own (`RunStore.views`)."""
    return dict(con.execute(YIELD_FUNNEL.replace("$run", _sql_text(run_id))).fetchall())


def query_sections(
    data_dir: str | os.PathLike, run_id: str, sections: dict[str, str]
) -> dict[str, tuple[list[str], list[tuple]]]:
    """Run titled SQL statements for one run (`$run` in the SQL stands for its quoted id)."""
    quoted = "'" + run_id.replace("'", "''") + "'"
    return {title: query(data_dir, sql.replace("$run", quoted)) for title, sql in sections.items()}
