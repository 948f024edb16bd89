"""One cached virtual environment per MCP server package (uv when it is there, pip otherwise)."""

from __future__ import annotations

import datetime as _dt
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from worldsmith.mcp.servers import ServerEntry

DEFAULT_INSTALL_TIMEOUT_S = 900.0
STAMP_NAME = ".worldsmith-installed.json"


def now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class InstallError(RuntimeError):
    """pip (or venv creation) failed; the message ends with pip's last lines."""


def _venv_key(entry: ServerEntry) -> str:
    assert entry.package and entry.version
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{entry.package}-{entry.version}")
    if entry.extra_requirements or entry.python:
        h = hashlib.sha256(json.dumps([entry.extra_requirements, entry.python]).encode()).hexdigest()[:8]
        base += f"-{h}"
    return base


def _find_uv() -> str | None:
    """uv installs when it is there (``$WORLDSMITH_UV``, our venv's ``uv`` (a dependency), or
    ``uv`` on PATH; WORLDSMITH_UV=0 turns it off); pip otherwise."""
    exe = os.environ.get("WORLDSMITH_UV")
    if exe in ("0", "false", "no"):
        return None
    beside = Path(sys.executable).parent / "uv"
    exe = exe or (str(beside) if beside.is_file() else None) or shutil.which("uv")
    return exe if exe and os.path.isfile(exe) else None


def _python_for(entry: ServerEntry) -> str:
    """Our interpreter, or a ``pythonX.Y`` that really runs (a pyenv shim for a version that
    is installed but not selected does not, so pyenv's own folders are tried as well)."""
    if not entry.python:
        return sys.executable
    want = entry.python
    candidates = [shutil.which(f"python{want}")]
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates += sorted(str(p) for p in pyenv_root.glob(f"versions/{want}*/bin/python{want}"))
    candidates += [f"/usr/bin/python{want}", f"/usr/local/bin/python{want}"]
    for exe in candidates:
        if not exe or not os.path.isfile(exe):
            continue
        try:
            ok = subprocess.run([exe, "-c", "import venv"], capture_output=True, timeout=30).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if ok:
            return exe
    raise InstallError(f"no working python{want} found (PATH, pyenv)")


def tail_lines(text: str, n: int = 15) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip() and not ln.startswith("WARNING: Location")]
    return "\n".join(lines[-n:])


def ensure_venv(
    entry: ServerEntry,
    cache_dir: str | Path,
    *,
    log_dir: str | Path | None = None,
    install_timeout_s: float = DEFAULT_INSTALL_TIMEOUT_S,
) -> Path:
    """Install ``entry``'s package into its own cached venv and return the venv folder.

    Idempotent: a venv whose stamp file names the same requirements is reused as is. A
    half-built venv (no stamp) is thrown away and built again. A file lock keeps two
    processes from building the same venv at once. Failures raise `InstallError` with the
    last lines of pip's output (the whole output goes to ``<log_dir>/<name>.install.log``).
    """
    if entry.kind != "package":
        raise ValueError(f"{entry.name}: not a package entry")
    cache_dir = Path(cache_dir).expanduser()
    cache_dir.mkdir(parents=True, exist_ok=True)
    key = _venv_key(entry)
    venv = cache_dir / key
    stamp = venv / STAMP_NAME
    want = {"requirements": entry.requirements(), "python": entry.python or "default"}
    locks = cache_dir / ".locks"
    locks.mkdir(exist_ok=True)
    with open(locks / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.is_file():
            try:
                have = json.loads(stamp.read_text())
            except (OSError, ValueError):
                have = {}
            if {k: have.get(k) for k in want} == want and (venv / "bin" / "python").exists():
                return venv
        if venv.exists():
            shutil.rmtree(venv)
        log_path = Path(log_dir) / f"{entry.name}.install.log" if log_dir else None
        if log_path:
            log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_NO_INPUT": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env.pop("PYTHONPATH", None)
        env.pop("VIRTUAL_ENV", None)
        uv = _find_uv()
        if uv:  # ten times quicker than pip, and lighter on a small machine
            env["UV_NO_PROGRESS"] = "1"
            steps = [
                [uv, "venv", "--quiet", "--seed", "--python", _python_for(entry), str(venv)],
                [uv, "pip", "install", "--python", str(venv / "bin" / "python"), *entry.requirements()],
            ]
        else:
            steps = [
                [_python_for(entry), "-m", "venv", str(venv)],
                [str(venv / "bin" / "python"), "-m", "pip", "install", "--prefer-binary", *entry.requirements()],
            ]
        output = ""
        t0 = time.monotonic()
        for cmd in steps:
            left = install_timeout_s - (time.monotonic() - t0)
            try:
                proc = subprocess.run(
                    cmd,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    text=True,
                    env=env,
                    timeout=max(left, 1),
                    cwd=cache_dir,
                )
            except subprocess.TimeoutExpired as e:
                out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
                output += out
                _write_log(log_path, output)
                shutil.rmtree(venv, ignore_errors=True)
                raise InstallError(f"install took over {install_timeout_s:.0f}s\n{tail_lines(out)}") from None
            output += f"$ {shlex.join(cmd)}\n{proc.stdout}\n"
            if proc.returncode != 0:
                _write_log(log_path, output)
                shutil.rmtree(venv, ignore_errors=True)
                what = "pip install" if "pip" in cmd else "creating the venv"
                raise InstallError(f"{what} exited {proc.returncode}:\n{tail_lines(proc.stdout)}")
        _write_log(log_path, output)
        stamp.write_text(json.dumps({**want, "installed_at": now_iso()}, indent=1) + "\n")
        return venv


def _write_log(path: Path | None, text: str) -> None:
    if path is not None:
        path.write_text(text)
