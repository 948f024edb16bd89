"""The sandbox every coding command runs in (issue 52): a folder of its own, a time limit, CPU,
memory, file-size and process limits, no network, nothing outside its folder writable.

A sandbox folder (`Box`) holds `repo/` (the copy of the repository the command works on) and
`tmp/`; inside, they are `/repo` (the working directory) and `/tmp`. Everything else the command
sees is read-only: the system's `/usr` and `/etc`, and the Python that runs the tests (this
project's venv and its base interpreter, so a repository's tests import pytest from it; the
repository itself comes first on `PYTHONPATH`).

Backends, best first (`backend_name()`; `WORLDSMITH_SANDBOX` forces one):
- `bwrap`: bubblewrap (Debian's `bubblewrap`, `make setup-sandbox`): new mount, network, PID,
  IPC and UTS namespaces over a root made only of the read-only binds and the box. Run as root,
  the command itself is switched to `nobody` (setpriv), because the kernel does not hold root
  to RLIMIT_NPROC (a fork bomb would go unbounded); the process limit is set inside (prlimit), so
  it counts the sandbox's processes, not every process of a non-root user on the host.
- `unshare`: util-linux `unshare -rn` (user, network, PID and mount namespaces; `harness/ws_confine.py`
  keeps the box writable and remounts every other mount read-only) and the same rlimits: no network,
  no writes outside the folder, runaway processes killed; a fallback where bubblewrap is missing,
  weaker: the host's files stay readable, and run by root the process limit does not bind.
- `none`: no isolation and no limits at all (a safety wall clock of `NONE_GUARD_S` only). Only
  for showing the isolation tests fail with the sandbox off (`WORLDSMITH_SANDBOX=none`).
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

BACKENDS = ("bwrap", "unshare", "none")
NOBODY = 65534
HARNESS = Path(__file__).resolve().parent / "harness"  # the pytest plugin and the tools' script, read-only inside
NONE_GUARD_S = 20.0  # the `none` backend's only limit, so a test that shows it failing cannot hang
TRUNCATED = "\n[... {n} characters truncated ...]\n"


class SandboxError(RuntimeError):
    """No sandbox backend can run here (install bubblewrap: `make setup-sandbox`)."""


@dataclass(frozen=True)
class Limits:
    wall_s: float = 60.0  # wall clock; the whole process tree is killed after it
    cpu_s: int = 60  # RLIMIT_CPU per process
    memory_mb: int = 2048  # RLIMIT_AS per process
    file_mb: int = 64  # RLIMIT_FSIZE: the largest file a command may write
    nproc: int = 128  # RLIMIT_NPROC: processes and threads of the sandbox's user
    open_files: int = 512  # RLIMIT_NOFILE
    output_chars: int = 200_000  # of stdout and of stderr kept in the result


@dataclass
class Result:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False  # killed at the wall clock
    backend: str = ""

    @property
    def killed(self) -> bool:
        """Ended by a signal (the CPU limit's SIGXCPU/SIGKILL, the memory limit) or the wall clock."""
        return self.timed_out or self.returncode < 0 or self.returncode in (128 + 9, 128 + 24, 137, 152)

    @property
    def output(self) -> str:
        return self.stdout + (("\n" + self.stderr) if self.stderr.strip() else "")


@dataclass
class Box:
    """A sandbox folder on the host: `repo/` (mounted at /repo) and `tmp/` (mounted at /tmp)."""

    root: Path
    readonly: list[Path] = field(default_factory=list)  # extra host paths bound read-only at the same path

    @property
    def repo(self) -> Path:
        return self.root / "repo"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @classmethod
    def fresh(cls, source: Path, under: Path, prefix: str = "box-") -> Box:
        """A new box under `under` whose repo/ is a copy of `source` (the copy every command
        of a task or an episode starts from)."""
        under = Path(under).resolve()
        under.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix=prefix, dir=under))
        shutil.copytree(source, root / "repo", symlinks=True)
        (root / "tmp").mkdir()
        return cls(root)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Box:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _python_paths() -> list[Path]:
    """What the test interpreter needs, read-only: this venv and its base installation."""
    paths = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    exe = Path(sys.executable)
    paths.add(exe.parent.resolve())
    paths.add(exe.resolve().parent.parent)
    out: list[Path] = []
    for p in sorted(paths, key=lambda p: len(p.parts)):
        if not any(p == q or q in p.parents for q in out) and p != Path("/usr") and Path("/usr") not in p.parents:
            out.append(p)
    return out


def python_executable() -> str:
    """The interpreter the sandbox runs tests with (this venv's, read-only inside)."""
    return str(Path(sys.prefix) / "bin" / "python")


def _limits_preexec(limits: Limits):
    """The rlimits set before the sandbox starts. Not RLIMIT_NPROC: set there, it would be checked against every
    process of the (non-root) user on the host, since a user namespace made after it keeps it as its ceiling; the
    sandbox sets it inside (`_nproc_prefix`), where it counts only the sandbox's own processes."""

    def apply() -> None:
        os.setsid()
        for res, value in (
            (resource.RLIMIT_CPU, limits.cpu_s),
            (resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024),
            (resource.RLIMIT_FSIZE, limits.file_mb * 1024 * 1024),
            (resource.RLIMIT_NOFILE, limits.open_files),
            (resource.RLIMIT_CORE, 0),
        ):
            resource.setrlimit(res, (value, value))

    return apply


def _nproc_prefix(limits: Limits) -> list[str]:
    """The command's process limit, set inside the sandbox (util-linux prlimit) just before it runs."""
    return [shutil.which("prlimit") or "prlimit", f"--nproc={limits.nproc}:{limits.nproc}", "--"]


def _bwrap_argv(box: Box, env: dict[str, str]) -> list[str]:
    argv = [
        shutil.which("bwrap") or "bwrap",
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
        "--ro-bind",
        "/usr",
        "/usr",
        "--ro-bind-try",
        "/etc",
        "/etc",
    ]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        p = Path(top)
        if p.is_symlink():
            argv += ["--symlink", os.readlink(p), top]
        elif p.is_dir():
            argv += ["--ro-bind", top, top]
    # the box first: a read-only path below /tmp (a venv or a checkout there) is bound inside it afterwards
    argv += ["--bind", str(box.repo), "/repo", "--bind", str(box.tmp), "/tmp"]
    made: set[Path] = {Path("/"), Path("/usr"), Path("/etc"), Path("/tmp"), Path("/repo")}
    for path in [*_python_paths(), HARNESS, *box.readonly]:
        for parent in reversed(path.parents):
            if parent not in made:
                argv += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        argv += ["--ro-bind", str(path), str(path)]
        made.add(path)
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--chdir", "/repo", "--clearenv"]
    for k, v in env.items():
        argv += ["--setenv", k, v]
    if os.geteuid() == 0:
        # root is not held to RLIMIT_NPROC: the command runs as nobody (the box is handed to it)
        argv += [shutil.which("setpriv") or "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
    return argv


@lru_cache(maxsize=1)
def _probe(name: str) -> bool:
    """Whether backend `name` really runs here (user namespaces may be off)."""
    if name == "none":
        return True
    with tempfile.TemporaryDirectory(prefix="ws-probe-") as tmp:
        box = Box(Path(tmp))
        box.repo.mkdir()
        box.tmp.mkdir()
        try:
            r = run(["/bin/true"], box, Limits(wall_s=20), backend=name)
        except (OSError, SandboxError):
            return False
        return r.returncode == 0


def backend_name(preferred: str = "auto") -> str:
    """The backend commands run in: `WORLDSMITH_SANDBOX`, else `preferred`, else the best that runs."""
    forced = os.environ.get("WORLDSMITH_SANDBOX") or (preferred if preferred != "auto" else "")
    if forced:
        if forced not in BACKENDS:
            raise SandboxError(f"unknown sandbox backend {forced!r} (one of {', '.join(BACKENDS)})")
        return forced
    if shutil.which("bwrap") and _probe("bwrap"):
        return "bwrap"
    if shutil.which("unshare") and _probe("unshare"):
        return "unshare"
    raise SandboxError(
        "no sandbox: install bubblewrap (`make setup-sandbox`) or allow user namespaces for `unshare -rn`"
    )


def base_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        "PATH": f"{Path(sys.prefix) / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "{tmp}",
        "TMPDIR": "{tmp}",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "PYTHONUNBUFFERED": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "NO_COLOR": "1",
    }
    env.update(extra or {})
    return env


def _hand_to(box: Box, uid: int) -> None:
    for dirpath, dirnames, filenames in os.walk(box.root):
        os.lchown(dirpath, uid, uid)
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, uid)


def _read_capped(path: Path, cap: int) -> str:
    try:
        size = path.stat().st_size
    except OSError:
        return ""
    with open(path, "rb") as f:
        if size <= cap:
            data = f.read()
            return data.decode("utf-8", "replace")
        head = f.read(cap // 2).decode("utf-8", "replace")
        f.seek(size - cap // 2)
        tail = f.read().decode("utf-8", "replace")
    return head + TRUNCATED.format(n=size - cap) + tail


def run(
    argv: list[str],
    box: Box,
    limits: Limits | None = None,
    env: dict[str, str] | None = None,
    backend: str = "auto",
    stdin: str | None = None,
) -> Result:
    """Run `argv` in `box` (working directory /repo) under `limits`; never raises for what the
    command does (a non-zero status, a kill at the limits), only when no sandbox can run."""
    limits = limits or Limits()
    name = backend_name(backend)
    # "{repo}", "{tmp}" and "{harness}" in the command and its environment: where the box's folders are seen from inside
    repo_in, tmp_in = ("/repo", "/tmp") if name == "bwrap" else (str(box.repo), str(box.tmp))

    def place(text: str) -> str:
        return text.replace("{repo}", repo_in).replace("{tmp}", tmp_in).replace("{harness}", str(HARNESS))

    argv = [place(a) for a in argv]
    full_env = {k: place(v) for k, v in base_env(env).items()}
    as_root = os.geteuid() == 0
    if name == "bwrap":
        if as_root:
            _hand_to(box, NOBODY)
        cmd = _bwrap_argv(box, full_env) + _nproc_prefix(limits) + list(argv)
        popen_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        cwd = str(box.root)
        preexec = _limits_preexec(limits)
    elif name == "unshare":
        cmd = ["unshare", "--user", "--map-root-user", "--net", "--pid", "--fork", "--mount", "--kill-child", "--"]
        # inside: the box's folders stay writable, every other mount is remounted read-only (harness/ws_confine.py)
        cmd += [python_executable(), str(HARNESS / "ws_confine.py"), str(box.repo), str(box.tmp), "--"]
        cmd += _nproc_prefix(limits) + list(argv)
        popen_env = full_env
        cwd = str(box.repo)
        preexec = _limits_preexec(limits)
    else:
        cmd = list(argv)
        popen_env = {**os.environ, **full_env}
        cwd = str(box.repo)
        preexec = os.setsid
    wall = limits.wall_s if name != "none" else NONE_GUARD_S
    out_path = box.root / ".stdout"
    err_path = box.root / ".stderr"
    start = time.monotonic()
    timed_out = False
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=popen_env,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            preexec_fn=preexec,
        )
        try:
            proc.communicate(input=stdin.encode() if stdin is not None else None, timeout=wall)
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.kill()
            proc.wait()
    seconds = time.monotonic() - start
    stdout = _read_capped(out_path, limits.output_chars)
    stderr = _read_capped(err_path, limits.output_chars)
    out_path.unlink(missing_ok=True)
    err_path.unlink(missing_ok=True)
    return Result(list(argv), proc.returncode, stdout, stderr, seconds, timed_out, name)
