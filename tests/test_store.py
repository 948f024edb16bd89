from __future__ import annotations

import os

import duckdb
import pyarrow.parquet as pq
import pytest

from worldsmith.records import Rejection, SmokeResult, Task, ToolSpec, content_id
from worldsmith.store import RunStore, query, refresh_catalog


def tool(i: int) -> ToolSpec:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}}
    name = f"tool_{i}"
    return ToolSpec(
        tool_id=ToolSpec.make_id(name, "d", schema, None, "srv"),
        name=name,
        description="d",
        input_schema=schema,
        source="seed",
        server="srv",
        category="c",
    )


def test_rewriting_the_same_records_adds_nothing(tmp_path):
    store = RunStore(tmp_path, "r1")
    assert store.append([tool(1), tool(2)]) == 2
    assert store.append([tool(2), tool(1)]) == 0
    assert store.append([tool(3), tool(3), tool(1)]) == 1  # duplicates inside one batch too
    assert store.count(ToolSpec) == 3
    assert len(store.shards("tools")) == 2
    # a new store object (a re-run) sees what is on disk
    again = RunStore(tmp_path, "r1")
    assert again.append([tool(1)]) == 0
    assert sorted(t.name for t in again.read(ToolSpec)) == ["tool_1", "tool_2", "tool_3"]


def test_json_fields_round_trip(tmp_path):
    store = RunStore(tmp_path, "r1")
    original = tool(1)
    store.append([original])
    (back,) = store.read(ToolSpec)
    assert back.input_schema == original.input_schema
    assert back.tool_id == original.tool_id


def test_shard_is_atomic_when_the_write_crashes(tmp_path, monkeypatch):
    store = RunStore(tmp_path, "r1")
    store.append([tool(1)])

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        store.append([tool(2)])
    monkeypatch.undo()
    # the half-finished file never got a shard name: readers and the catalog ignore it
    assert [p.name for p in store.shards("tools")] == [
        p.name for p in sorted((tmp_path / "runs/r1/tools").glob("part-*.parquet"))
    ]
    assert len(store.shards("tools")) == 1
    fresh = RunStore(tmp_path, "r1")
    assert fresh.count(ToolSpec) == 1
    assert fresh.append([tool(2)]) == 1  # and the record is written on the next try
    for shard in fresh.shards("tools"):
        pq.read_table(shard)  # every visible shard is a whole Parquet file


def test_catalog_views_see_all_runs(tmp_path):
    RunStore(tmp_path, "a").append([tool(1), tool(2)])
    RunStore(tmp_path, "b").append([tool(3)])
    RunStore(tmp_path, "b").write_info(status="finished", config_hash="h", stages={}, usage={}, config={})
    cols, rows = query(tmp_path, "SELECT run_id, count(*) FROM tools GROUP BY run_id ORDER BY run_id")
    assert rows == [("a", 2), ("b", 1)]
    assert query(tmp_path, "SELECT run_id, status FROM runs")[1] == [("b", "finished")]
    # views over stages that have no shard yet exist and are empty, with typed columns
    assert query(tmp_path, "SELECT count(*) FROM trajectories")[1] == [(0,)]
    assert "rubric" in query(tmp_path, "SELECT * FROM tasks")[0]


def test_a_data_folder_under_a_folder_named_runs_keeps_its_run_ids(tmp_path):
    """The views read a record's run from its shard's path: the run folder is the one right above the stage's, not
    the first "runs/" of the path (a data folder at /work/runs/X1 gave every record the run id "X1")."""
    data = tmp_path / "runs" / "X1"
    RunStore(data, "worldsmith-abc").append([tool(1)])
    assert query(data, "SELECT run_id FROM tools")[1] == [("worldsmith-abc",)]


def test_json_columns_are_queryable(tmp_path):
    store = RunStore(tmp_path, "a")
    store.append(
        [
            Rejection(
                rejection_id="x",
                kind="tool_spec",
                subject="t",
                reason="invalid_schema",
                detail="d",
                payload={"k": [1, 2]},
            )
        ]
    )
    assert query(tmp_path, "SELECT payload->>'$.k[1]' FROM rejections")[1] == [("2",)]


def test_catalog_file_and_views_sql(tmp_path):
    data = tmp_path / "data"
    RunStore(data, "a").append([tool(1)])
    catalog = refresh_catalog(data, tmp_path)
    with duckdb.connect(str(catalog), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM tools").fetchone() == (1,)
    # views.sql works from the project root with any DuckDB, on a fresh in-memory database
    sql = (data / "views.sql").read_text()
    assert "data/runs/*/tools/part-*.parquet" in sql
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        con = duckdb.connect()
        con.execute(sql)
        assert con.execute("SELECT count(*) FROM tools").fetchone() == (1,)
    finally:
        os.chdir(cwd)


def test_ids_are_stable():
    assert content_id("a", 1) == content_id("a", 1)
    assert content_id("a", 1) != content_id("a", 2)
    assert tool(1).tool_id == tool(1).tool_id


def test_run_info_merges(tmp_path):
    store = RunStore(tmp_path, "r")
    store.write_info(status="running", usage={})
    store.write_info(status="finished")
    assert store.read_info()["status"] == "finished"
    assert "usage" in store.read_info()


def test_one_type_per_append(tmp_path):
    store = RunStore(tmp_path, "r")
    s = SmokeResult(smoke_id="s", kind="structured", ok=True, request={}, model="m", endpoint="e")
    with pytest.raises(TypeError):
        store.append([s, tool(1)])
    assert Task.arrow_schema().field("rubric").type == "string"
