"""`make synth`'s flow on a fresh data folder: the embedded server is started and stopped
by the run itself, records land in the store and `worldsmith query` counts them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml
from conftest import free_port

pytestmark = [pytest.mark.engine, pytest.mark.slow]


def test_synth_flow_end_to_end(tmp_path, project_root):
    cfg = yaml.safe_load((project_root / "pipeline.yaml").read_text())
    cfg["run"]["data_dir"] = str(tmp_path / "data")
    cfg["run"]["prompts_dir"] = str(project_root / "prompts")
    cfg["llm"]["server"]["port"] = free_port()
    cfg["smoke"]["requests"] = 2
    for key in ("snapshot_dir", "servers_file", "taxonomy_file"):  # relative paths are taken from the config's folder
        cfg["tools"][key] = str(project_root / cfg["tools"][key])
    cfg["tasks"] = {"per_agent": 1}
    cfg["tools"]["evolve"].update(categories=1, domains_per_category=1, tools_per_domain=3, evolutions_per_tool=1)
    cfg["tools"]["bundles"].update(count=4)
    cfg["rollouts"].update(samples_per_task=1, max_turns=2, max_tool_calls=3, max_tokens=1500)
    cfg["export"]["out_dir"] = str(tmp_path / "data" / "exports")
    config = tmp_path / "pipeline.yaml"
    config.write_text(yaml.safe_dump(cfg))
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
    }
    env.pop("PREFECT_API_URL", None)

    proc = subprocess.run(
        [sys.executable, str(project_root / "flows" / "synth.py"), "--config", str(config)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "records=4" in proc.stdout

    def query(sql: str) -> str:
        out = subprocess.run(
            [sys.executable, "-m", "worldsmith.cli", "query", sql, "-c", str(config), "-f", "csv"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.strip().splitlines()[-1]

    assert query("SELECT count(*) FROM smoke") == "4"
    assert query("SELECT count(*) FROM smoke WHERE kind = 'tool_call'") == "2"
    assert query("SELECT status FROM runs") == "finished"
    # the tool repository: the committed real snapshot plus freshly evolved tools, with lineage
    assert int(query("SELECT count(*) FROM tools WHERE source = 'mcp'")) >= 150
    assert int(query("SELECT count(DISTINCT server) FROM tools WHERE source = 'mcp'")) >= 30
    assert int(query("SELECT count(*) FROM tools WHERE source = 'evolved'")) >= 1
    assert int(
        query(
            "SELECT count(*) FROM tools t JOIN tools p ON t.parent_id = p.tool_id AND t.run_id = p.run_id "
            "WHERE t.operator IS NOT NULL"
        )
    ) == int(query("SELECT count(*) FROM tools WHERE parent_id IS NOT NULL"))
    assert int(query("SELECT count(*) FROM rejections WHERE reason IS NOT NULL AND detail <> ''")) >= 1
    assert query("SELECT count(*) FROM bundles") == "4"
    # agents over the bundles, and tasks: each kept (valid) or rejected with its reason, or a failed call recorded
    assert query("SELECT count(*) FROM agents") == "4"
    kept, rejected = (
        int(query("SELECT count(*) FROM tasks")),
        int(query("SELECT count(*) FROM rejections WHERE kind = 'task'")),
    )
    failed = int(query("SELECT count(*) FROM rejections WHERE subject LIKE 'task/%' AND kind = 'llm_output'"))
    assert kept + rejected + failed == 4
    if kept:  # a task listed with its rubric and the tools its agent needs
        row = query(
            "SELECT len(from_json(t.rubric->'criteria', '[\"JSON\"]')) > 0 AND count(tl.tool_id) > 0 FROM tasks t "
            "JOIN agents a USING (run_id, agent_id) "
            "JOIN tools tl ON tl.run_id = t.run_id AND list_contains(a.tool_ids, tl.tool_id) "
            "GROUP BY t.task_id, t.rubric LIMIT 1"
        )
        assert row.lower() == "true"
    # one episode per kept task, each ended by a stop, a limit or a recorded error
    assert query("SELECT count(*) FROM trajectories") == str(kept)
    assert (
        query("SELECT count(*) FROM trajectories WHERE status IS NULL OR (status = 'error' AND reason IS NULL)") == "0"
    )
    if kept:
        assert int(query("SELECT (usage->'$.user_sim.calls')::INT FROM runs")) >= 1
    # a verdict for every trajectory, the export (possibly empty with SmolLM2) and the report
    assert query("SELECT count(*) FROM verdicts") == str(kept)
    assert query("SELECT count(*) FROM verdicts WHERE NOT passed AND len(reasons) = 0") == "0"
    exported = int(query("SELECT count(*) FROM sft"))
    assert exported <= int(query("SELECT count(*) FROM verdicts WHERE passed"))
    export_dir = tmp_path / "data" / "exports"
    run_export = next(export_dir.iterdir())
    assert (run_export / "README.md").read_text().startswith("---\nconfigs:")
    assert {p.name for p in (run_export / "data").iterdir()} == {"train.parquet", "validation.parquet"}
    report = next((tmp_path / "data" / "runs").iterdir()) / "report.html"
    assert report.exists() and report.read_text().count('<figure class="plot"') == 11
    assert f"report:  {report}" in proc.stdout
    # the run keeps its resolved config and hash, and the per-role usage
    run_dir = next((tmp_path / "data" / "runs").iterdir())
    assert (run_dir / "config.yaml").exists()
    assert int(query("SELECT (usage->'$.agent.calls')::INT FROM runs")) >= 2
    # the server the run started was stopped
    assert not list((tmp_path / "data" / "server").glob("*.json"))

    # a second run of the same config resumes: nothing is asked of the model again
    again = subprocess.run(
        [sys.executable, str(project_root / "flows" / "synth.py"), "--config", str(config)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert "skipped (already done)=4" in again.stdout
    assert query("SELECT count(*) FROM smoke") == "4"
    assert (
        query("SELECT count(*) FROM bundles") == "4" and query("SELECT count(*) FROM agents") == "4"
    )  # sampled once per run
