"""The coding sandbox's isolation (issue 52): a network call fails, a write outside the folder fails,
a fork bomb and an endless loop are killed, the host is untouched. Each test fails with the sandbox
turned off: `WORLDSMITH_SANDBOX=none pytest tests/test_coding_sandbox.py` (docs/coding.md)."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from worldsmith.coding.sandbox import Box, Limits, python_executable, run


@pytest.fixture
def box(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "hello.py").write_text("print('hello')\n")
    b = Box.fresh(src, tmp_path / "boxes")
    yield b
    b.remove()


def py(code: str) -> list[str]:
    return [python_executable(), "-c", code]


def _alive(marker: str) -> list[int]:
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if marker.encode() in (d / "cmdline").read_bytes():
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


def test_runs_in_the_copy(box):
    r = run(py("import os; print(open('hello.py').read().strip(), os.getcwd() != '')"), box, Limits(wall_s=20))
    assert r.returncode == 0, r.output
    assert "print('hello')" in r.stdout


def test_network_call_fails(box):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    code = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=3); print('CONNECTED')\n"
        "except OSError as e:\n"
        "    print('REFUSED', e)\n"
    )
    r = run(py(code), box, Limits(wall_s=20))
    server.close()
    assert "REFUSED" in r.stdout, r.output
    assert not accepted


def test_write_outside_the_folder_fails_and_the_host_is_untouched(box, tmp_path):
    outside = tmp_path / f"outside-{uuid.uuid4().hex}.txt"
    project_file = Path(sys.prefix) / f"ws-sandbox-{uuid.uuid4().hex}"
    code = (
        "import sys\n"
        f"for p in [{str(outside)!r}, {str(project_file)!r}]:\n"
        "    try:\n"
        "        open(p, 'w').write('x'); print('WROTE', p)\n"
        "    except OSError as e:\n"
        "        print('DENIED', p, e.errno)\n"
        "open('inside.txt', 'w').write('ok')\n"
    )
    r = run(py(code), box, Limits(wall_s=20))
    try:
        assert "WROTE" not in r.stdout, r.output
        assert r.stdout.count("DENIED") == 2, r.output
        assert not outside.exists() and not project_file.exists()
        assert (box.repo / "inside.txt").read_text() == "ok"
    finally:
        outside.unlink(missing_ok=True)
        project_file.unlink(missing_ok=True)


def test_host_environment_and_files_are_not_seen(box, monkeypatch, tmp_path):
    monkeypatch.setenv("WS_HOST_SECRET", "s3cret")
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text("s3cret")
    code = (
        "import os\n"
        "print('ENV', os.environ.get('WS_HOST_SECRET'))\n"
        "try:\n"
        f"    print('READ', open({str(secret_file)!r}).read())\n"
        "except OSError:\n"
        "    print('NOFILE')\n"
    )
    r = run(py(code), box, Limits(wall_s=20))
    assert "ENV None" in r.stdout and "NOFILE" in r.stdout, r.output


def test_fork_bomb_is_bounded_and_killed(box):
    marker = f"wsbomb{uuid.uuid4().hex}"
    code = (
        "import os, sys, time\n"
        "made = 0\n"
        "for _ in range(300):\n"
        "    try:\n"
        "        pid = os.fork()\n"
        "    except OSError:\n"
        "        break\n"
        "    if pid == 0:\n"
        "        time.sleep(30); os._exit(0)\n"
        "    made += 1\n"
        "print('FORKED', made, flush=True)\n"
        "time.sleep(30)\n"
    )
    t0 = time.monotonic()
    r = run([python_executable(), "-c", code, marker], box, Limits(wall_s=4, nproc=64))
    took = time.monotonic() - t0
    time.sleep(0.5)
    left = _alive(marker)
    for pid in left:  # never leave the bomb behind, whatever the result
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    forked = int(r.stdout.split("FORKED")[1].split()[0]) if "FORKED" in r.stdout else 0
    assert forked < 100, f"{forked} processes were made"
    assert r.killed and took < 10
    assert not left, f"{len(left)} processes outlived the sandbox"


def test_endless_loop_is_killed_by_the_cpu_limit(box):
    t0 = time.monotonic()
    r = run(py("while True:\n    pass\n"), box, Limits(wall_s=30, cpu_s=2))
    took = time.monotonic() - t0
    assert r.killed and not r.timed_out, r
    assert took < 8


def test_sleeping_process_and_its_children_are_killed_at_the_wall_clock(box):
    marker = f"wssleep{uuid.uuid4().hex}"
    code = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {marker!r}])\n"
        "time.sleep(60)\n"
    )
    t0 = time.monotonic()
    r = run([python_executable(), "-c", code, marker], box, Limits(wall_s=2))
    took = time.monotonic() - t0
    time.sleep(0.5)
    left = _alive(marker)
    for pid in left:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    assert r.timed_out and took < 6
    assert not left, "a child outlived the sandbox"


def test_memory_and_file_size_limits(box):
    code = (
        "try:\n"
        "    b = bytearray(1024 * 1024 * 1024); print('ALLOCATED')\n"
        "except MemoryError:\n"
        "    print('NOMEM')\n"
        "try:\n"
        "    open('big.bin', 'wb').write(b'x' * (8 * 1024 * 1024)); print('WROTEBIG')\n"
        "except OSError:\n"
        "    print('TOOBIG')\n"
    )
    r = run(py(code), box, Limits(wall_s=20, memory_mb=256, file_mb=1))
    assert "NOMEM" in r.stdout and "TOOBIG" in r.stdout, r.output
