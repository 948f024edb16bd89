"""`make ui` / `make ui-stop`: a local Prefect server with every worldsmith deployment.

    python flows/ui.py start [--port 4200]   server in the background, then the serve() process
    python flows/ui.py stop                  stop both (by their recorded process ids)
    python flows/ui.py status

The server keeps its database under the repo's Prefect home (`.prefect/`); its log and the
serve process's log go to `.prefect/logs/`. Task runs are recorded with a short flush
interval so they show in the UI within seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _prefect_env import ROOT, UI_HOST, UI_PORT  # noqa: E402

# task and flow runs visible within seconds: the recorder and persister flush every second
RECORDER = {
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_FLUSH_INTERVAL": "1",
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE": "1",
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_FLUSH_INTERVAL": "1",
}


def _home() -> Path:
    return Path(os.environ.get("PREFECT_HOME", ROOT / ".prefect"))


def _state_file() -> Path:
    return _home() / "ui.json"


def _env(port: int) -> dict[str, str]:
    return {
        **os.environ,
        "PREFECT_HOME": str(_home()),
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_API_URL": f"http://{UI_HOST}:{port}/api",
        "PREFECT_UI_API_URL": f"http://{UI_HOST}:{port}/api",
        **RECORDER,
    }


def _get(url: str, data: dict | None = None, timeout: float = 5) -> object:
    req = urllib.request.Request(
        url,
        data=json.dumps(data).encode() if data is not None else None,
        headers={"Content-Type": "application/json"},
        method="POST" if data is not None else "GET",
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read() or b"null")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def _wait(what: str, check, timeout: float, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(
                f"{what} exited with {proc.returncode}; see {log}:\n" + "".join(log.read_text().splitlines(True)[-15:])
            )
        try:
            if check():
                return
        except (urllib.error.URLError, OSError, ValueError):
            pass
        time.sleep(1)
    raise SystemExit(f"{what} not ready after {timeout:.0f} s; see {log}")


def start(port: int) -> None:
    state = _read_state()
    if state and _alive(state["server_pid"]) and _alive(state["serve_pid"]):
        print(f"already running: http://{UI_HOST}:{state['port']} (stop with `make ui-stop`)")
        return
    stop(quiet=True)
    logs = _home() / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    env = _env(port)
    api = f"http://{UI_HOST}:{port}/api"
    t0 = time.monotonic()
    server_log = logs / "prefect-server.log"
    server = subprocess.Popen(
        [sys.executable, "-m", "prefect", "server", "start", "--host", UI_HOST, "--port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=open(server_log, "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    _write_state({"server_pid": server.pid, "serve_pid": -1, "port": port})
    _wait("the Prefect server", lambda: _get(f"{api}/health") is True, 180, server, server_log)
    print(f"Prefect server healthy in {time.monotonic() - t0:.0f} s: http://{UI_HOST}:{port}")
    serve_log = logs / "prefect-serve.log"
    serving = subprocess.Popen(
        [sys.executable, str(ROOT / "flows" / "serve.py")],
        env=env,
        cwd=ROOT,
        stdout=open(serve_log, "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    _write_state({"server_pid": server.pid, "serve_pid": serving.pid, "port": port})
    from serve import DEPLOYMENTS

    want = len(DEPLOYMENTS)
    _wait("the serve process", lambda: len(_get(f"{api}/deployments/filter", {})) >= want, 180, serving, serve_log)
    print(f"{want} deployments registered and served (log: {serve_log})")
    print(f"open http://{UI_HOST}:{port}/deployments   ·   stop with `make ui-stop`")


def stop(quiet: bool = False) -> None:
    state = _read_state()
    if not state:
        if not quiet:
            print("nothing to stop")
        return
    for key in ("serve_pid", "server_pid"):
        pid = state.get(key, -1)
        if pid > 0 and _alive(pid):
            try:
                os.killpg(pid, signal.SIGTERM)
            except OSError:
                continue
            deadline = time.monotonic() + 20
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if _alive(pid):
                os.killpg(pid, signal.SIGKILL)
            if not quiet:
                print(f"stopped {key.removesuffix('_pid')} (pid {pid})")
    _state_file().unlink(missing_ok=True)


def status() -> None:
    state = _read_state()
    if not state:
        print("not running")
        return
    print(json.dumps({**state, "server_alive": _alive(state["server_pid"]), "serve_alive": _alive(state["serve_pid"])}))


def _read_state() -> dict | None:
    try:
        return json.loads(_state_file().read_text())
    except (OSError, ValueError):
        return None


def _write_state(state: dict) -> None:
    _state_file().parent.mkdir(parents=True, exist_ok=True)
    _state_file().write_text(json.dumps(state))


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("command", choices=["start", "stop", "status"])
    p.add_argument("--port", type=int, default=UI_PORT)
    a = p.parse_args()
    {"start": lambda: start(a.port), "stop": stop, "status": status}[a.command]()
