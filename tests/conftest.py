from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "flows"))


_handed_out: set[int] = set()


def communicate_or_fail(proc: subprocess.Popen, timeout: float) -> tuple[str, str | None]:
    """`proc.communicate()`, for a process started in its own group (`start_new_session`): past `timeout` the whole
    group is killed and the test fails with the tail of its output (killing only the child left a flow's model and
    Prefect servers holding its pipes, and a slow run then held CI to its limit instead of failing)."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
        pytest.fail(
            f"{' '.join(map(str, proc.args))[:200]} ran past {timeout:.0f} s:\n{out[-3000:]}\n{(err or '')[-3000:]}"
        )


def run_to_end(cmd: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
    """Run a command in its own process group and return it (`communicate_or_fail`: past `timeout` it fails)."""
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, **kwargs
    )
    out, err = communicate_or_fail(proc, timeout)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def free_port() -> int:
    """A free port below the kernel's ephemeral range, not handed out before in this session. A port from the
    ephemeral range (what binding port 0 gives) can be taken between the test's choice and the server's bind, or
    between two servers on it, by any outgoing connection's local end (vLLM's own, an HTTP pool's): a CI run lost a
    llama.cpp restart to "couldn't bind" that way."""
    low = (
        int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0]) if sys.platform == "linux" else 32768
    )
    rng = random.Random()
    for _ in range(1000):
        port = rng.randrange(max(1024, low - 12000), low)
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free port below {low}")


@pytest.fixture(scope="session")
def project_root() -> Path:
    return ROOT


def _start(engine: str, tmp_path_factory, timeout: float):
    from worldsmith.config import ServerConfig
    from worldsmith.llm.server import ModelServer

    data = tmp_path_factory.mktemp(f"{engine}-server")
    cfg = ServerConfig(
        engine=engine,
        port=free_port(),
        parallel=4,
        ctx_size=16384,  # 4,096 tokens a slot: room for an episode
        startup_timeout_s=timeout,  # vllm_args: the product's default, so the tests run what users run
    )
    server = ModelServer(cfg, ROOT, data)
    # a llama.cpp server exits with the test session, even one killed outright (timeouts left servers spinning)
    server.start(owner_pid=os.getpid())
    return server


@pytest.fixture(scope="session")
def llamacpp_server(tmp_path_factory):
    """The embedded llama.cpp engine with the packaged SmolLM2, once per test session."""
    server = _start("llamacpp", tmp_path_factory, timeout=120)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def vllm_server(tmp_path_factory):
    """vLLM's CPU build serving the same model (installed by `make setup-vllm`)."""
    server = _start("vllm", tmp_path_factory, timeout=600)
    yield server
    server.stop()


def llm_config(url: str, **role_overrides):
    """An LLMConfig whose `local` endpoint is `url` (and fast retries for tests)."""
    from worldsmith.config import LLMConfig
    from worldsmith.vocab import ROLES

    roles = {r: {"endpoint": "local", "temperature": 0.0, "max_tokens": 256, **role_overrides} for r in ROLES}
    return LLMConfig.model_validate(
        {
            "endpoints": {"local": {"urls": [url], "model": "smollm2-135m", "timeout_s": 120}},
            "retry": {"max_attempts": 3, "initial_backoff_s": 0.05, "max_backoff_s": 0.2, "outage_timeout_s": 0},
            "roles": roles,
        }
    )


@pytest.fixture(scope="session")
def time_entry():
    """The time server exactly as the committed server list has it (so the list is checked too)."""
    from worldsmith.mcp import load_server_list

    entries = {e.name: e for e in load_server_list(ROOT / "tool_specs" / "servers.yaml")}
    entry = entries["time"]
    assert entry.package == "mcp-server-time" and entry.version
    return entry


@pytest.fixture(scope="session")
def time_cache(tmp_path_factory, time_entry) -> Path:
    """A venv cache holding the real mcp-server-time from PyPI, installed once per session."""
    from worldsmith.mcp import ensure_venv

    cache = tmp_path_factory.mktemp("mcp-venvs")
    ensure_venv(time_entry, cache, log_dir=cache / "logs")
    return cache
