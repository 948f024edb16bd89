"""`make synth`'s flow on a fresh data folder: the embedded server is started and stopped
by the run itself, records land in the store, `worldsmith query` counts them, and the run keeps
verified examples (an empty export fails): the default config at half its size, BUNDLES agents
of its eight.

How that size was chosen (README, "What the CPU default yields"): two full default runs here
kept 20 of 90 and 19 of 93 episodes, and every one of their 16 agents had at least one kept
episode. Agents are the unit that fails together (one world, one prompt), so take the chance
that an agent keeps nothing as at most 3/16 (the rule of three's 95% bound on 0 of 16): four
agents all keep nothing with probability at most (3/16) ** 4 < 0.002, well inside "keeps
something in at least 19 of 20 runs". By episodes alone (37 of 183 passed) the 48 played here
miss with probability 0.8 ** 48 < 1e-4."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml
from conftest import free_port, run_to_end

from worldsmith.store import query as catalog_query

pytestmark = [pytest.mark.engine, pytest.mark.slow]

BUNDLES = 4  # agents, each with tasks.per_agent tasks played rollouts.samples_per_task (3) times


def test_synth_flow_end_to_end(tmp_path, project_root):
    cfg = yaml.safe_load((project_root / "pipeline.yaml").read_text())
    cfg["run"]["data_dir"] = str(tmp_path / "data")
    cfg["run"]["prompts_dir"] = str(project_root / "prompts")
    cfg["llm"]["server"]["port"] = free_port()
    cfg["smoke"]["requests"] = 2
    for key in ("snapshot_dir", "servers_file"):  # relative paths are taken from the config's folder
        cfg["tools"][key] = str(project_root / cfg["tools"][key])
    cfg["worlds"]["taxonomy_file"] = str(project_root / cfg["worlds"]["taxonomy_file"])
    cfg["worlds"]["packs_dir"] = str(project_root / cfg["worlds"]["packs_dir"])
    cfg["bundles"].update(count=BUNDLES)  # the rest is the default config, as `make synth` runs it
    cfg["export"]["out_dir"] = str(tmp_path / "data" / "exports")
    config = tmp_path / "pipeline.yaml"
    config.write_text(yaml.safe_dump(cfg))
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
    }
    env.pop("PREFECT_API_URL", None)

    proc = run_to_end(
        [sys.executable, str(project_root / "flows" / "synth.py"), "--config", str(config)],
        env=env,
        timeout=1500,  # 4 agents x 5 tasks x 3 episodes on 2 cores: 6.8 and 9.2 min here (2026-12-05)
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "records=4" in proc.stdout

    def cli_query(sql: str) -> str:
        out = subprocess.run(
            [sys.executable, "-m", "worldsmith.cli", "query", sql, "-c", str(config), "-f", "csv"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.strip().splitlines()[-1]

    def query(sql: str) -> str:
        """The same catalog as `worldsmith query`, read in this process (a CLI start each costs ~4 s)."""
        _, rows = catalog_query(tmp_path / "data", sql)
        value = rows[-1][0]
        return str(value).lower() if isinstance(value, bool) else str(value)

    assert cli_query("SELECT count(*) FROM smoke") == "4"
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
    assert query("SELECT count(*) FROM bundles") == str(BUNDLES)
    # agents over the bundles, and tasks: each executed and kept, or rejected with its reason
    assert query("SELECT count(*) FROM agents") == str(BUNDLES)
    kept, rejected = (
        int(query("SELECT count(*) FROM tasks")),
        int(query("SELECT count(*) FROM rejections WHERE kind = 'task'")),
    )
    per_agent = cfg["tasks"]["per_agent"]
    assert kept + rejected == BUNDLES * per_agent and kept >= BUNDLES * 2
    if kept:  # a task listed with its rubric and the tools its agent needs
        row = query(
            "SELECT len(from_json(t.rubric->'criteria', '[\"JSON\"]')) > 0 AND count(tl.tool_id) > 0 FROM tasks t "
            "JOIN agents a USING (run_id, agent_id) "
            "JOIN tools tl ON tl.run_id = t.run_id AND list_contains(a.tool_ids, tl.tool_id) "
            "GROUP BY t.task_id, t.rubric LIMIT 1"
        )
        assert row.lower() == "true"
    # three episodes per kept task, each ended by a stop, a limit or a recorded error
    assert query("SELECT count(*) FROM trajectories") == str(kept * 3)
    assert (
        query("SELECT count(*) FROM trajectories WHERE status IS NULL OR (status = 'error' AND reason IS NULL)") == "0"
    )
    if kept:
        assert int(query("SELECT (usage->'$.user_sim.calls')::INT FROM runs")) >= 1
    # a verdict for every trajectory; the run keeps verified examples (an empty export fails), each an episode
    # the judge passed, whose world ended where the gold calls left it
    assert query("SELECT count(*) FROM verdicts") == str(kept * 3)
    assert query("SELECT count(*) FROM verdicts WHERE NOT passed AND len(reasons) = 0") == "0"
    exported = int(query("SELECT count(*) FROM sft"))
    passed = int(query("SELECT count(*) FROM verdicts WHERE passed"))
    assert 1 <= exported <= passed, proc.stdout[-3000:]
    assert query(
        "SELECT count(*) FROM sft s JOIN verdicts v ON v.trajectory_id = s.metadata->>'$.trajectory_id' "
        "WHERE v.passed AND len(v.reasons) = 0"
    ) == str(exported)
    export_dir = tmp_path / "data" / "exports"
    run_export = next(export_dir.iterdir())
    assert (run_export / "README.md").read_text().startswith("---\nconfigs:")
    assert {p.name for p in (run_export / "data").iterdir()} == {"train.parquet", "validation.parquet"}
    report = next((tmp_path / "data" / "runs").iterdir()) / "report.html"
    page = report.read_text() if report.exists() else ""
    assert page.count('<figure class="plot"') == 15 and 'id="plot-rewards"' in page  # the RL reward by component
    assert f"report:  {report}" in proc.stdout
    # the run keeps its resolved config and hash, and the per-role usage
    run_dir = next((tmp_path / "data" / "runs").iterdir())
    assert (run_dir / "config.yaml").exists()
    assert int(query("SELECT (usage->'$.agent.calls')::INT FROM runs")) >= 2
    # the server the run started was stopped
    assert not list((tmp_path / "data" / "server").glob("*.json"))

    # a second run of the same config resumes: nothing is asked of the model again
    again = run_to_end(
        [sys.executable, str(project_root / "flows" / "synth.py"), "--config", str(config)], env=env, timeout=300
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert "skipped (already done)=4" in again.stdout
    assert cli_query("SELECT count(*) FROM smoke") == "4"
    assert (
        query("SELECT count(*) FROM bundles") == "4" and query("SELECT count(*) FROM agents") == "4"
    )  # sampled once per run
