"""Repositories as worlds (issue 52): the list in `worlds/repos.yaml`, fetched once into the cache.

An entry is one of
- `pypi: name==version` with its sdist's `sha256`: fetched by `pip download` (an sdist carries the
  project's tests for many small pure-Python packages) and checked against the hash;
- `path: some/folder`: a local checkout (relative to the list's folder), copied without `.git`;
- `git: URL` with an optional `rev`: cloned (depth 1), the commit it resolved to recorded.

`python_path` is where the package's import roots are inside the repository (`.` or `src`), `tests`
optional pytest arguments (paths) when the default collection is not the suite.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

DEFAULT_REPOS_FILE = "worlds/repos.yaml"
SKIP_COPY = shutil.ignore_patterns(".git", ".hg", ".venv", "venv", "__pycache__", "*.pyc", ".pytest_cache", ".tox")


class RepoError(RuntimeError):
    pass


class RepoEntry(BaseModel):
    """One line of repos.yaml."""

    model_config = ConfigDict(extra="forbid")

    name: str
    pypi: str | None = None  # "name==version"
    sha256: str | None = None  # of the sdist (pypi entries)
    path: str | None = None
    git: str | None = None
    rev: str | None = None
    python_path: str = "."
    tests: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)  # globs (repo-relative) of source files never mutated
    held_out: bool = False  # kept for evaluation: no training tasks are exported from it

    @model_validator(mode="after")
    def _one_source(self) -> RepoEntry:
        given = [k for k in ("pypi", "path", "git") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(f"repo {self.name!r}: give exactly one of pypi, path, git (got {given or 'none'})")
        if self.pypi and not re.fullmatch(r"[A-Za-z0-9_.\-]+==[A-Za-z0-9_.+\-!]+", self.pypi):
            raise ValueError(f"repo {self.name!r}: pypi must pin a version as name==version, not {self.pypi!r}")
        return self

    @property
    def kind(self) -> Literal["pypi", "path", "git"]:
        return "pypi" if self.pypi else "path" if self.path else "git"

    @property
    def version(self) -> str:
        if self.pypi:
            return self.pypi.split("==", 1)[1]
        return self.rev or "local"


class Repo(BaseModel):
    """A fetched repository: its pristine tree in the cache, what it came from and its hash."""

    name: str
    version: str
    source: str  # pypi:name==version | path:/abs | git:url@commit
    sha256: str  # of the sdist, or of the tree's files (path, git)
    root: Path
    python_path: str = "."
    tests: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    held_out: bool = False

    @property
    def repo_id(self) -> str:
        return f"{self.name}-{self.version}"


def load_repos(path: str | Path) -> list[RepoEntry]:
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise RepoError(f"{path}: {exc}") from None
    items = (doc or {}).get("repos") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise RepoError(f"{path}: expected a top-level 'repos:' list")
    entries = [RepoEntry.model_validate(item) for item in items]
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        raise RepoError(f"{path}: repository names repeat")
    return entries


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def tree_hash(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(q for q in root.rglob("*") if q.is_file()):
        h.update(str(p.relative_to(root)).encode() + b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()


def _extract(archive: Path, dest: Path) -> None:
    tmp = dest.with_name(dest.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            for member in z.namelist():
                target = (tmp / member).resolve()
                if tmp.resolve() not in target.parents and target != tmp.resolve():
                    raise RepoError(f"{archive}: member {member!r} leaves the folder")
            z.extractall(tmp)
    else:
        with tarfile.open(archive) as t:
            t.extractall(tmp, filter="data")
    tops = list(tmp.iterdir())
    inner = tops[0] if len(tops) == 1 and tops[0].is_dir() else tmp
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(inner, dest, ignore=SKIP_COPY, symlinks=True)
    shutil.rmtree(tmp, ignore_errors=True)


def _pip_download(spec: str, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    name = spec.split("==")[0]
    version = spec.split("==")[1]
    stem = re.sub(r"[-_.]+", "[-_.]", re.escape(name).replace("\\", ""))
    pattern = re.compile(rf"^{stem}-{re.escape(version)}\.(tar\.gz|zip|tar\.bz2)$", re.IGNORECASE)

    def found() -> Path | None:
        return next((p for p in sorted(into.iterdir()) if pattern.match(p.name)), None)

    hit = found()
    if hit is not None:
        return hit
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q", spec, "-d", str(into)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    hit = found()
    if proc.returncode != 0 or hit is None:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
        raise RepoError(f"pip download {spec} failed:\n{tail}")
    return hit


def fetch(entry: RepoEntry, cache_dir: str | Path, base_dir: str | Path = ".") -> Repo:
    """The repository's pristine tree under `cache_dir/repos/`, fetched once (checked against its
    recorded hash). A second call finds it there."""
    cache = Path(cache_dir).resolve()
    dest = cache / "repos" / f"{entry.name}-{entry.version}"
    stamp = dest.with_name(dest.name + ".json")
    if stamp.is_file():
        meta = json.loads(stamp.read_text())
        if entry.kind != "path" and (entry.sha256 is None or meta["sha256"] == entry.sha256):
            return _repo(entry, meta, dest)
    if entry.kind == "pypi":
        archive = _pip_download(entry.pypi or "", cache / "sdists")
        digest = sha256_file(archive)
        if entry.sha256 and digest != entry.sha256:
            raise RepoError(f"{entry.name}: {archive.name} has sha256 {digest}, repos.yaml records {entry.sha256}")
        _extract(archive, dest)
        meta = {"source": f"pypi:{entry.pypi}", "sha256": digest, "version": entry.version}
    elif entry.kind == "path":
        src = (Path(base_dir) / (entry.path or "")).resolve()
        if not src.is_dir():
            raise RepoError(f"{entry.name}: {src} is not a folder")
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(src, dest, ignore=SKIP_COPY, symlinks=True)
        meta = {"source": f"path:{src}", "sha256": tree_hash(dest), "version": entry.version}
    else:
        tmp = dest.with_name(dest.name + ".clone")
        shutil.rmtree(tmp, ignore_errors=True)
        cmd = ["git", "clone", "--quiet", "--depth", "1"] + (["--branch", entry.rev] if entry.rev else [])
        proc = subprocess.run([*cmd, entry.git or "", str(tmp)], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RepoError(f"git clone {entry.git} failed: {proc.stderr.strip()[-500:]}")
        commit = subprocess.run(
            ["git", "-C", str(tmp), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(tmp, dest, ignore=SKIP_COPY, symlinks=True)
        shutil.rmtree(tmp, ignore_errors=True)
        digest = tree_hash(dest)
        if entry.sha256 and digest != entry.sha256:
            raise RepoError(
                f"{entry.name}: the tree at {commit} has sha256 {digest}, repos.yaml records {entry.sha256}"
            )
        meta = {"source": f"git:{entry.git}@{commit}", "sha256": digest, "version": entry.version}
    stamp.write_text(json.dumps(meta))
    return _repo(entry, meta, dest)


def _repo(entry: RepoEntry, meta: dict, dest: Path) -> Repo:
    return Repo(
        name=entry.name,
        version=meta.get("version", entry.version),
        source=meta["source"],
        sha256=meta["sha256"],
        root=dest,
        python_path=entry.python_path,
        tests=entry.tests,
        exclude=entry.exclude,
        held_out=entry.held_out,
    )
