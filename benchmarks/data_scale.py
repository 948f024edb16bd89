"""Data scale benchmark: the report's DuckDB queries over a big run, and the streamed export.

1. Queries: `--rows` synthetic trajectories (default 1,000,000) with their verdicts, tasks,
   agents, tools and SFT rows, written straight as Parquet shards in the run store's layout
   and schemas (Arrow tables built per shard, two worker processes); then the catalog is
   refreshed and every query of the report (`worldsmith.report.stage.QUERIES`) is timed,
   and `build_report` as a whole (queries + plots).
2. Export: the real export stage (`run_export`) on a run with `--export-rows` kept
   trajectories (default 100,000, plus one failed per ten, and ~1 % exact copies), and on
   one with a tenth of that, each in a fresh process: peak RSS (ru_maxrss) before and after
   the export; flat memory = the two peaks about equal.

Rows are realistic in shape (every field the pipeline writes, calls with faults, OpenAI
tool definitions) but compact: short messages of random words, 1-3 tool calls.

    python benchmarks/data_scale.py [--rows 1000000] [--export-rows 100000] [--shard-rows 10000] [--keep DIR]
    python benchmarks/data_scale.py --rows 100000 --export-rows 10000   # a quick run
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from worldsmith.records import Agent, SFTExample, Task, ToolSpec, Trajectory, Verdict

ROOT = Path(__file__).resolve().parent.parent

RUN_ID = "scale"
SAMPLES_PER_TASK = 4
N_AGENTS = 2_000
N_TOOLS = 3_000
CREATED = datetime(2026, 11, 29, tzinfo=UTC)
FAULT_KINDS = ["timeout", "rate_limit", "server_error", "malformed_response", "not_found"]
STATUSES = np.array(["finished", "max_turns", "max_tool_calls", "error"])
DIFFICULTIES = ["single_call", "multi_call", "error_recovery", "clarification", "policy"]
DOMAINS = [f"domain_{i:02d}" for i in range(40)]


def words() -> list[str]:
    """4,000 pronounceable pseudo-words: text for MinHash that is random, not repeated."""
    cons, vows = "bcdfghklmnprstvz", "aeiou"
    syl = [c + v for c in cons for v in vows]
    rng = np.random.default_rng(7)
    return sorted({"".join(syl[i] for i in rng.integers(0, len(syl), rng.integers(2, 4))) for _ in range(6000)})[:4000]


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 of integers: ids that look like content hashes, so the sort order is not the write order."""
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def ids(prefix: str, idx: np.ndarray, salt: int) -> list[str]:
    return [f"{prefix}{h:016x}" for h in mix(idx.astype(np.uint64) * np.uint64(1_000_003) + np.uint64(salt)).tolist()]


def tool_name(t: int) -> str:
    return f"tool_{t:04d}_{['get', 'list', 'create', 'update', 'cancel'][t % 5]}"


def agent_tools(a: int) -> list[int]:
    rng = np.random.default_rng(10_000 + a)
    return sorted(rng.choice(N_TOOLS, int(rng.integers(3, 7)), replace=False).tolist())


def openai_tool(t: int) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool_name(t),
            "description": f"Does {tool_name(t)} on a record of the world: returns it as JSON.",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "string", "description": "the record id"}, "note": {"type": "string"}},
                "required": ["id"],
                "additionalProperties": False,
            },
        },
    }


def write_shard(folder: Path, table: pa.Table) -> int:
    """One shard as RunStore.append writes it (zstd, temporary name, rename)."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"part-{datetime.now(UTC):%Y%m%dT%H%M%S%f}-{uuid.uuid4().hex[:8]}.parquet"
    pq.write_table(table, folder / (name + ".tmp"), compression="zstd")
    os.replace(folder / (name + ".tmp"), folder / name)
    return table.num_rows


def table(record_type, columns: dict[str, Any], n: int) -> pa.Table:
    """A table in the record's schema; columns not given are nulls (optional fields) or the fixed creation time."""
    schema = record_type.arrow_schema()
    arrays = []
    for f in schema:
        if f.name in columns:
            arrays.append(pa.array(columns[f.name], type=f.type))
        elif f.name == "created_at":
            arrays.append(pa.array([CREATED] * n, type=f.type))
        else:
            arrays.append(pa.nulls(n, type=f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def agent_index(task_index: np.ndarray) -> np.ndarray:
    return (mix(task_index) % np.uint64(N_AGENTS)).astype(np.int64)


def write_catalog_records(run: Path) -> None:
    """Tools and agents (small, written by the main process)."""
    t = np.arange(N_TOOLS)
    tool_ids = ids("tool_", t, 1)
    sources = np.where(t % 3 == 0, "mcp", np.where(t % 3 == 1, "evolved", "seed")).tolist()
    write_shard(
        run / "tools",
        table(
            ToolSpec,
            {
                "tool_id": tool_ids,
                "name": [tool_name(i) for i in t],
                "description": [openai_tool(i)["function"]["description"] for i in t],
                "input_schema": [json.dumps(openai_tool(i)["function"]["parameters"]) for i in t],
                "annotations": ["{}"] * N_TOOLS,
                "extra": ["{}"] * N_TOOLS,
                "source": sources,
                "server": [f"server_{i % 97}" if s == "mcp" else None for i, s in zip(t, sources, strict=True)],
                "domain": [DOMAINS[i % len(DOMAINS)] for i in t],
            },
            N_TOOLS,
        ),
    )
    a = np.arange(N_AGENTS)
    write_shard(
        run / "agents",
        table(
            Agent,
            {
                "agent_id": ids("agt_", a, 2),
                "bundle_id": ids("bnd_", a, 3),
                "tool_ids": [[tool_ids[x] for x in agent_tools(i)] for i in a],
                "system_prompt": [
                    f"You are the assistant of desk {i}. Use the tools; never claim an action you did not perform."
                    for i in a
                ],
                "domain": [DOMAINS[i % len(DOMAINS)] for i in a],
                "style": ["concise"] * N_AGENTS,
                "strictness": ["standard"] * N_AGENTS,
                "policies": ['{"role": "desk"}'] * N_AGENTS,
            },
            N_AGENTS,
        ),
    )


def write_chunk(run: Path, start: int, n: int, export_mode: bool) -> dict[str, int]:
    """Trajectories [start, start+n) with their verdicts, tasks and (query mode) SFT rows, one shard each.
    Export mode: every row finished, one in eleven failed by the judge, one in a hundred an exact copy of its
    neighbour."""
    rng = np.random.default_rng(start + (1 << 40) * export_mode)
    vocab = words()
    i = np.arange(start, start + n)
    task_i = i // SAMPLES_PER_TASK
    agent_i = agent_index(task_i)
    traj_ids, task_ids, agent_ids = ids("trj_", i, 4), ids("tsk_", task_i, 5), ids("agt_", agent_i, 2)
    tool_ids = ids("tool_", np.arange(N_TOOLS), 1)
    n_calls = rng.integers(1, 4, n)
    status = np.full(n, "finished") if export_mode else rng.choice(STATUSES, n, p=[0.8, 0.08, 0.05, 0.07])
    messages, tools_col, calls_col, faults_col, states, n_faults = [], [], [], [], [], []
    tools_by_agent: dict[int, tuple[list[int], str]] = {}
    for r in range(n):
        a = int(agent_i[r])
        if a not in tools_by_agent:
            offered = agent_tools(a)
            tools_by_agent[a] = (offered, json.dumps([openai_tool(t) for t in offered], ensure_ascii=False))
        offered, tools_json = tools_by_agent[a]
        text = rng.integers(0, len(vocab), 40)
        msgs: list[dict[str, Any]] = [
            {
                "role": "system",
                "content": (
                    f"You are the assistant of desk {a}. Use the tools; never claim an action you did not perform."
                ),
            },
            {"role": "user", "content": " ".join(vocab[w] for w in text[:14])},
        ]
        calls, faults = [], []
        for c in range(int(n_calls[r])):
            t = offered[int(rng.integers(0, len(offered)))]
            call_id = f"call_{r}_{c}"
            fault = FAULT_KINDS[int(rng.integers(0, len(FAULT_KINDS)))] if rng.random() < 0.1 else None
            ok = fault is None and rng.random() < 0.95
            args = json.dumps({"id": f"r-{int(rng.integers(1000, 9999))}"})
            msgs.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": call_id, "type": "function", "function": {"name": tool_name(t), "arguments": args}}
                    ],
                }
            )
            msgs.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "content": json.dumps({"id": args[8:14], "status": "ok" if ok else "error"}),
                }
            )
            calls.append(
                {
                    "turn": 1,
                    "call_id": call_id,
                    "name": tool_name(t),
                    "tool": tool_name(t),
                    "tool_id": tool_ids[t],
                    "arguments": json.loads(args),
                    "read_only": t % 5 < 2,
                    "executor": "simulated",
                    "ok": ok,
                    "error": None if ok else "failed",
                    "fault": fault,
                    "patch_ops": int(t % 5 >= 2),
                    "attempts": 1,
                }
            )
            if fault:
                faults.append({"turn": 1, "call_id": call_id, "tool": tool_name(t), "kind": fault, "forced": False})
        msgs.append({"role": "assistant", "content": " ".join(vocab[w] for w in text[14:])})
        msgs.append({"role": "user", "content": "Thanks. ###STOP###"})
        if export_mode and r and i[r] % 100 == 7:  # an exact copy of the previous conversation
            messages.append(messages[-1])
            tools_col.append(tools_col[-1])
        else:
            messages.append(json.dumps(msgs, ensure_ascii=False))
            tools_col.append(tools_json)
        calls_col.append(json.dumps(calls))
        faults_col.append(json.dumps(faults))
        n_faults.append(len(faults))
        states.append(
            json.dumps(
                {
                    "initial": {"records": [{"id": "r-1001", "status": "open"}]},
                    "final": {"records": [{"id": "r-1001", "status": "closed"}]},
                    "patches": [
                        {
                            "call_id": "call_0",
                            "tool": "update",
                            "patch": [{"op": "replace", "path": "/records/0/status", "value": "closed"}],
                        }
                    ],
                }
            )
        )
    turns = np.where(status == "max_turns", 8, rng.integers(1, 4, n))
    gen_tokens = rng.integers(80, 600, n)
    usage = [
        json.dumps({"agent": {"calls": int(c) + 1, "prompt_tokens": int(g) * 6, "completion_tokens": int(g)}})
        for c, g in zip(n_calls, gen_tokens, strict=True)
    ]
    written = {
        "trajectories": write_shard(
            run / "trajectories",
            table(
                Trajectory,
                {
                    "trajectory_id": traj_ids,
                    "task_id": task_ids,
                    "agent_id": agent_ids,
                    "sample": (i % SAMPLES_PER_TASK).tolist(),
                    "seed": (i * 7919).tolist(),
                    "messages": messages,
                    "tools": tools_col,
                    "world_states": states,
                    "calls": calls_col,
                    "faults": faults_col,
                    "usage": usage,
                    "models": ['{"agent": "smollm2-135m", "user_sim": "smollm2-135m", "tool_sim": "smollm2-135m"}'] * n,
                    "model": ["smollm2-135m"] * n,
                    "status": status.tolist(),
                    "reason": np.where(status == "finished", "user_stop", "limit").tolist(),
                    "turns": turns.tolist(),
                    "tool_calls": n_calls.tolist(),
                    "generated_tokens": gen_tokens.tolist(),
                    "latency_s": rng.uniform(5, 90, n).round(3).tolist(),
                },
                n,
            ),
        )
    }
    if export_mode:
        passed = i % 11 != 10
    else:
        passed = (status == "finished") & (rng.random(n) < 0.7)
    reasons = [
        []
        if p
        else [["criterion:state:c2", "criterion:call:c1", "hack:unbacked_claim", "critic_score"][int(h % np.uint64(4))]]
        + ([] if s == "finished" else [f"status:{s}"])
        for p, s, h in zip(passed, status, mix(i), strict=True)
    ]
    criteria = [
        json.dumps(
            [
                {
                    "criterion_id": "c1",
                    "kind": "call",
                    "description": "calls the right tool",
                    "passed": True,
                    "evidence": "matched call_0",
                    "source": "deterministic",
                },
                {
                    "criterion_id": "c2",
                    "kind": "state",
                    "description": "the record is closed",
                    "passed": bool(p),
                    "evidence": "/records/0/status",
                    "source": "deterministic",
                },
            ]
        )
        for p in passed
    ]
    nf = np.array(n_faults)
    written["verdicts"] = write_shard(
        run / "verdicts",
        table(
            Verdict,
            {
                "trajectory_id": traj_ids,
                "task_id": task_ids,
                "agent_id": agent_ids,
                "criteria": criteria,
                "hacks": ["[]"] * n,
                "critic": ["{}"] * n,
                "critic_score": rng.uniform(0.5, 1.0, n).round(3).tolist(),
                "faults": nf.tolist(),
                "passed": passed.tolist(),
                "reasons": reasons,
                "faults_handled": [None if f == 0 else bool(p) for f, p in zip(nf, passed, strict=True)],
            },
            n,
        ),
    )
    first_task = np.unique(task_i[i % SAMPLES_PER_TASK == 0])
    if len(first_task):
        k = len(first_task)
        written["tasks"] = write_shard(
            run / "tasks",
            table(
                Task,
                {
                    "task_id": ids("tsk_", first_task, 5),
                    "agent_id": ids("agt_", agent_index(first_task), 2),
                    "difficulty": [DIFFICULTIES[int(x % np.uint64(len(DIFFICULTIES)))] for x in mix(first_task)],
                    "user_persona": ['{"communication": "brief", "patience": "medium"}'] * k,
                    "user_goal": ['{"request": "Close record r-1001.", "facts": {}}'] * k,
                    "initial_state": ['{"records": [{"id": "r-1001", "status": "open"}]}'] * k,
                    "rubric": [
                        (
                            '{"criteria": [{"criterion_id": "c2", "kind": "state", "description": "closed", '
                            '"pointer": "/records/0/status", "op": "equals", "value": "closed"}]}'
                        )
                    ]
                    * k,
                },
                k,
            ),
        )
    if not export_mode:
        keep = np.flatnonzero(passed)
        written["sft"] = write_shard(
            run / "sft",
            table(
                SFTExample,
                {
                    "example_id": ids("ex_", i[keep], 6),
                    "messages": [messages[r] for r in keep],
                    "tools": [tools_col[r] for r in keep],
                    "metadata": [json.dumps({"run_id": RUN_ID, "trajectory_id": traj_ids[r]}) for r in keep],
                    "split": ["train"] * len(keep),
                },
                len(keep),
            ),
        )
    return written


def generate(data: Path, rows: int, shard_rows: int, export_mode: bool) -> dict[str, Any]:
    run = data / "runs" / RUN_ID
    t0 = time.perf_counter()
    write_catalog_records(run)
    shard_rows -= shard_rows % SAMPLES_PER_TASK  # a task's samples stay in one chunk
    starts = list(range(0, rows, shard_rows))
    totals: dict[str, int] = {}
    with ProcessPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        for written in pool.map(
            write_chunk,
            [run] * len(starts),
            starts,
            [min(shard_rows, rows - s) for s in starts],
            [export_mode] * len(starts),
        ):
            for k, v in written.items():
                totals[k] = totals.get(k, 0) + v
    info = {
        "run_id": RUN_ID,
        "status": "finished",
        "started_at": CREATED.isoformat(),
        "usage": {
            "agent": {"calls": rows * 3, "prompt_tokens": rows * 1500, "completion_tokens": rows * 250},
            "user_sim": {"calls": rows * 2, "prompt_tokens": rows * 800, "completion_tokens": rows * 60},
            "tool_sim": {"calls": rows * 2, "prompt_tokens": rows * 900, "completion_tokens": rows * 80},
        },
    }
    (run / "run.json").write_text(json.dumps(info))
    size = {stage: sum(p.stat().st_size for p in (run / stage).glob("*.parquet")) for stage in totals}
    return {
        "seconds": round(time.perf_counter() - t0, 1),
        "rows": totals,
        "shards": len(starts),
        "mb_on_disk": {k: round(v / 2**20, 1) for k, v in size.items()},
    }


def time_queries(data: Path) -> dict[str, Any]:
    from worldsmith.report.stage import QUERIES, _query, build_report
    from worldsmith.store import refresh_catalog

    t0 = time.perf_counter()
    catalog = refresh_catalog(data)
    result: dict[str, Any] = {"refresh_catalog_s": round(time.perf_counter() - t0, 2), "queries": {}}
    with duckdb.connect(str(catalog), read_only=True) as con:
        for name, sql in QUERIES.items():
            t = time.perf_counter()
            rows = _query(con, sql, RUN_ID)
            result["queries"][name] = {"seconds": round(time.perf_counter() - t, 2), "rows": len(rows)}
            print(f"  {name:<14} {result['queries'][name]['seconds']:>7.2f} s  ({len(rows)} rows)", flush=True)
    result["queries_total_s"] = round(sum(q["seconds"] for q in result["queries"].values()), 2)
    t = time.perf_counter()
    head = build_report(data, RUN_ID, data / "report.html")
    result["build_report_s"] = round(time.perf_counter() - t, 2)
    result["headline"] = head
    return result


def peak_rss_mb() -> int:
    """This process's peak RSS (VmHWM): unlike ru_maxrss it starts afresh at exec, not at the parent's size at fork."""
    line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1]) // 1024


def export_child(data: str, out: str, near_duplicate_threshold: str) -> None:
    """In a fresh process: the export stage over `data`, with peak RSS before and after."""
    from worldsmith.config import validate_config
    from worldsmith.context import RunContext
    from worldsmith.export.stage import run as run_export
    from worldsmith.llm import Prompts
    from worldsmith.store import RunStore

    cfg = validate_config(
        {
            "export": {
                "out_dir": out,
                "validation_fraction": 0.1,
                "near_duplicate_threshold": float(near_duplicate_threshold),
            }
        }
    )
    ctx = RunContext(cfg=cfg, root=ROOT, run_id=RUN_ID, store=RunStore(data, RUN_ID), prompts=Prompts(ROOT / "prompts"))
    before = peak_rss_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    counts = run_export(ctx)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        json.dumps(
            {
                "seconds": round(seconds, 1),
                "cpu_s": round(cpu, 1),
                "rss_before_mb": before,
                "peak_rss_mb": peak_rss_mb(),
                "counts": {k: v for k, v in counts.items() if k != "folder"},
            }
        )
    )


# (name, export.near_duplicate_threshold): the default config, and without the MinHash index (its per-example state)
EXPORT_VARIANTS = [("default", 0.9), ("no_near_dup", 1.0)]


def export_runs(tmp: Path, kept: int, shard_rows: int) -> list[dict[str, Any]]:
    """Both variants over one generated run of `kept` kept trajectories (plus one failed per ten)."""
    data = tmp / f"export-{kept}"
    rows = kept + kept // 10  # write_chunk fails one row in eleven
    gen = generate(data, rows, shard_rows, export_mode=True)
    results = []
    for variant, threshold in EXPORT_VARIANTS:
        shutil.rmtree(
            data / "runs" / RUN_ID / "sft", ignore_errors=True
        )  # the export appends its records: start each from none
        shutil.rmtree(data / "exports", ignore_errors=True)
        proc = subprocess.run(
            [sys.executable, __file__, "--export-child", str(data), str(data / "exports"), str(threshold)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode:
            raise SystemExit(f"export of {kept} ({variant}) failed:\n{proc.stderr[-4000:]}")
        out = {
            "variant": variant,
            "near_duplicate_threshold": threshold,
            "kept": sum(1 for i in range(rows) if i % 11 != 10),
            "trajectories": rows,
            "generate_s": gen["seconds"],
            **json.loads(proc.stdout.strip().splitlines()[-1]),
        }
        out["growth_mb"] = out["peak_rss_mb"] - out["rss_before_mb"]
        out["export_mb"] = round(sum(p.stat().st_size for p in (data / "exports").rglob("*") if p.is_file()) / 2**20, 1)
        print(f"  {out}", flush=True)
        results.append(out)
    shutil.rmtree(data)
    return results


def machine() -> dict[str, Any]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    return {
        "cores": os.cpu_count(),
        "ram_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "cpu": cpu,
        "python": platform.python_version(),
        "duckdb": duckdb.__version__,
        "pyarrow": pa.__version__,
        "platform": platform.platform(),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000, help="trajectory rows for the query part")
    p.add_argument(
        "--export-rows",
        type=int,
        default=100_000,
        help="kept trajectories for the big export (the small one has a tenth)",
    )
    p.add_argument("--shard-rows", type=int, default=10_000, help="rows per Parquet shard")
    p.add_argument(
        "--keep", type=Path, default=None, help="build the query run here and keep it (default: a temporary folder)"
    )
    p.add_argument(
        "--export-child", nargs=3, metavar=("DATA", "OUT", "NEAR_DUPLICATE_THRESHOLD"), help=argparse.SUPPRESS
    )
    a = p.parse_args()
    if a.export_child:
        export_child(*a.export_child)
        return
    tmp = Path(a.keep or tempfile.mkdtemp(prefix="worldsmith-scale-"))
    results: dict[str, Any] = {
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": machine(),
        "args": {"rows": a.rows, "export_rows": a.export_rows, "shard_rows": a.shard_rows},
    }
    try:
        print(f"generating {a.rows:,} trajectories ...", flush=True)
        results["generate"] = generate(tmp / "query", a.rows, a.shard_rows, export_mode=False)
        print(f"  {results['generate']}", flush=True)
        print("report queries:", flush=True)
        results |= time_queries(tmp / "query")
        print(
            f"  total {results['queries_total_s']} s; build_report (queries + plots) {results['build_report_s']} s",
            flush=True,
        )
        if not a.keep:
            shutil.rmtree(tmp / "query")
        results["export"] = []
        for kept in (a.export_rows // 10, a.export_rows):
            print(f"export of {kept:,} kept trajectories ...", flush=True)
            results["export"] += export_runs(tmp, kept, a.shard_rows)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    results["export_flatness"] = {}
    for variant, _ in EXPORT_VARIANTS:
        small, big = (e for e in results["export"] if e["variant"] == variant)
        results["export_flatness"][variant] = {
            "peak_rss_ratio": round(big["peak_rss_mb"] / small["peak_rss_mb"], 2),
            "growth_ratio": round(big["growth_mb"] / max(small["growth_mb"], 1), 2),
            "kb_per_extra_example": round(
                1024 * (big["peak_rss_mb"] - small["peak_rss_mb"]) / (big["kept"] - small["kept"]), 2
            ),
        }
    print("\n| what | figure |\n| --- | --- |")
    print(
        f"| generate {a.rows:,} trajectories (+ verdicts, tasks, SFT) | {results['generate']['seconds']} s, "
        f"{results['generate']['shards']} shards |"
    )
    print(f"| refresh_catalog | {results['refresh_catalog_s']} s |")
    for name, q in results["queries"].items():
        print(f"| report query `{name}` | {q['seconds']} s |")
    print(f"| all report queries | {results['queries_total_s']} s |")
    print(f"| build_report (queries + 11 plots) | {results['build_report_s']} s |")
    for e in results["export"]:
        print(
            f"| export ({e['variant']}) {e['kept']:,} kept -> {e['counts']['examples']:,} examples | "
            f"{e['seconds']} s; peak RSS {e['peak_rss_mb']} MB "
            f"({e['rss_before_mb']} MB before, +{e['growth_mb']} MB) |"
        )
    for variant, f in results["export_flatness"].items():
        print(
            f"| export ({variant}) peak RSS {a.export_rows:,} / {a.export_rows // 10:,} | "
            f"{f['peak_rss_ratio']} (growth ratio {f['growth_ratio']}; "
            f"{f['kb_per_extra_example']} kB per extra example) |"
        )
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "data_scale.json").write_text(json.dumps(results, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
