"""The Prefect UI path, for real: `flows/ui.py start` (what `make ui` runs) starts a Prefect
server and the serve() process; every flow is a deployment with its schedule; `synth` is
triggered at tiny scale through the API and completes with its artifacts; headless
Chromium shows the deployments page. Plus the flows' and tasks' `.fn` without a server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import tenacity
from conftest import free_port

ROOT = Path(__file__).resolve().parent.parent
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _transient(exc: BaseException) -> bool:
    # the Prefect server answers 503 while its SQLite database is locked by another writer
    # (the serve() process, the flow run); Prefect's own client retries these, and so do we
    return isinstance(exc, urllib.error.HTTPError) and exc.code in (429, 502, 503)


@tenacity.retry(
    retry=tenacity.retry_if_exception(_transient),
    wait=tenacity.wait_exponential(multiplier=0.5, max=8),
    stop=tenacity.stop_after_attempt(8),
    reraise=True,
)
def _api(url: str, data: dict | None = None):
    req = urllib.request.Request(
        url,
        data=json.dumps(data).encode() if data is not None else None,
        headers={"Content-Type": "application/json"},
        method="POST" if data is not None else "GET",
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read() or b"null")


@pytest.fixture()
def ui(tmp_path):
    port = free_port()
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect")}
    env.pop("PREFECT_API_URL", None)
    ui_py = [sys.executable, str(ROOT / "flows" / "ui.py")]
    started = subprocess.run(
        [*ui_py, "start", "--port", str(port)], env=env, capture_output=True, text=True, timeout=420
    )
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        assert "deployments registered" in started.stdout
        yield f"http://127.0.0.1:{port}", env
    finally:
        stopped = subprocess.run([*ui_py, "stop"], env=env, capture_output=True, text=True, timeout=120)
        assert stopped.returncode == 0, stopped.stderr
    state = (
        json.loads((tmp_path / "prefect" / "ui.json").read_text())
        if (tmp_path / "prefect" / "ui.json").exists()
        else None
    )
    assert state is None  # the recorded process ids were stopped and forgotten


@pytest.mark.engine
@pytest.mark.browser
@pytest.mark.slow
def test_make_ui_deployments_trigger_and_browser(ui, tmp_path):
    base, env = ui
    api = f"{base}/api"
    deployments = {d["name"]: d for d in _api(f"{api}/deployments/filter", {})}
    assert set(deployments) == {
        "synth-nightly",
        "crawl-weekly",
        "finetune-daily",
        "eval-daily",
        "rl-daily",
        *(
            f"{s}-daily"
            for s in (
                "smoke",
                "worlds",
                "tools",
                "bundles",
                "agents",
                "tasks",
                "repos",
                "rollouts",
                "judge",
                "export",
                "report",
            )
        ),
    }
    synth = deployments["synth-nightly"]
    assert [(s["schedule"]["cron"], s["active"]) for s in synth["schedules"]] == [("0 2 * * *", True)]
    assert (
        deployments["crawl-weekly"]["schedules"][0]["active"]
        and not deployments["judge-daily"]["schedules"][0]["active"]
    )
    assert set(synth["parameter_openapi_schema"]["properties"]) == {
        "config_path",
        "overrides",
        "run_id",
        "stages",
    }  # a typed form in the UI

    # trigger synth at tiny scale, as the UI's "Run" button does
    overrides = [
        f"run.data_dir={tmp_path / 'data'}",
        f"export.out_dir={tmp_path / 'data' / 'exports'}",
        f"llm.server.port={free_port()}",
        "smoke.requests=1",
        "tools.evolve.enabled=false",
        "bundles.count=1",
        "bundles.real_ratio=1.0",  # no evolved tool: bundles of crawled ones
        "tasks.enabled=false",
        "rollouts.enabled=false",
        "judge.enabled=false",
    ]
    run = _api(
        f"{api}/deployments/{synth['id']}/create_flow_run",
        {"parameters": {"config_path": str(ROOT / "pipeline.yaml"), "overrides": overrides}},
    )
    deadline = time.monotonic() + 600
    state = None
    while time.monotonic() < deadline:
        state = _api(f"{api}/flow_runs/{run['id']}")["state"]["type"]
        if state in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED"):
            break
        time.sleep(2)
    assert state == "COMPLETED", (state, (Path(env["PREFECT_HOME"]) / "logs" / "prefect-serve.log").read_text()[-3000:])
    artifacts = _api(f"{api}/artifacts/filter", {"artifacts": {"flow_run_id": {"any_": [run["id"]]}}})
    keys = {a["key"] for a in artifacts}
    assert any(k.endswith("-summary") for k in keys) and any(k.endswith("-agents") for k in keys), keys
    summary = next(a for a in artifacts if a["key"].endswith("-summary"))
    assert "| agents |" in summary["data"] and "report.html" in summary["data"]
    tasks = _api(f"{api}/task_runs/filter", {"flow_runs": {"id": {"any_": [run["id"]]}}})
    assert {"agents 0/1", "smoke", "report"} <= {t["name"] for t in tasks}

    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{base}/deployments")
        page.get_by_text(f"{len(deployments)} Deployments").first.wait_for(timeout=60_000)
        for name in ("crawl-weekly", "judge-daily"):  # page 1 of the A-to-Z list, 10 a page (agents ... rl)
            page.get_by_text(name).first.wait_for(timeout=60_000)
        page.screenshot(path=str(tmp_path / "deployments.png"), full_page=True)
        page.get_by_placeholder("Search deployments").fill("synth")  # page 2: found by the UI's search
        page.get_by_text("synth-nightly").first.wait_for(timeout=60_000)
        browser.close()
    assert (tmp_path / "deployments.png").stat().st_size > 20_000


def test_flows_and_tasks_run_without_a_server(tmp_path, project_root):
    """`.fn` of a flow and of a task: the library runs, no Prefect server or artifacts."""
    sys.path.insert(0, str(project_root / "flows"))
    import synth as flows

    overrides = [
        f"run.data_dir={tmp_path / 'data'}",
        "tools.evolve.enabled=false",
        "bundles.count=2",
        "bundles.real_ratio=1.0",  # no evolved tool: bundles of crawled ones
        "run.name=fn",
    ]
    out = flows.tools.fn(config_path=str(project_root / "pipeline.yaml"), overrides=overrides)
    assert (
        out["status"] == "finished"
        and list(out["stages"]) == ["tools"]
        and out["stages"]["tools"]["tools_total"] > 1000
    )
    out = flows.bundles.fn(
        config_path=str(project_root / "pipeline.yaml"), overrides=overrides
    )  # the same run, resumed
    assert out["status"] == "finished" and out["stages"]["bundles"]["bundles"] == 2
    assert set(flows.FLOWS) == {"synth", "finetune", "eval", "rl", *(s.name for s in flows.pipeline.STAGES)}
    assert (
        flows.FLOWS["judge"].name == "judge" and flows.judge is flows.FLOWS["judge"]
    )  # a module attribute: deployments load it by name
    assert flows.artifact_key("Worldsmith-ABC_1", "agents") == "worldsmith-abc-1-agents"
