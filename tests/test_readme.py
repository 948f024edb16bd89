"""The README stays a user's guide whose commands run: at most 400 lines, one current-default table, the judge's
one short section; every shell block parses, and the make targets, the command-line flags and the config keys
(`--set KEY=...`) its commands use exist; its links point at files that are there."""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import typer

from worldsmith.cli import app
from worldsmith.config import PipelineConfig

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# `make X ARGS=...` hands ARGS to what the target runs
MAKE_RUNS = {"synth": "flows/synth.py", "crawl": "flows/crawl.py", "ui": "flows/ui.py"}
MAKE_RUNS_CLI = {"finetune": "finetune", "eval": "eval", "rl": "rl", "serve": "serve"}


def text() -> str:
    return README.read_text()


def shell_blocks(md: str) -> list[str]:
    return re.findall(r"```(?:bash|sh|shell)\n(.*?)```", md, re.S)


def commands(md: str) -> list[str]:
    """Each command of the shell blocks and of inline code (`make query`), comments and continuations joined."""
    out = []
    for block in shell_blocks(md):
        joined = block.replace("\\\n", " ")
        out += [
            line.split(" #")[0].strip() for line in joined.splitlines() if line.strip() and not line.startswith("#")
        ]
    out += [c for c in re.findall(r"`([^`\n]+)`", md) if re.match(r"(make|\.venv/bin/worldsmith|worldsmith) ", c)]
    return out


def make_targets() -> set[str]:
    return set(re.findall(r"^([a-z][a-z0-9-]*):", (ROOT / "Makefile").read_text(), re.M))


def argparse_flags(script: str) -> set[str]:
    """The options a flows script's argparse parser declares (read from its source: importing it starts Prefect)."""
    tree = ast.parse((ROOT / script).read_text())
    return {
        arg.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"
        for arg in node.args
        if isinstance(arg, ast.Constant) and str(arg.value).startswith("-")
    }


def cli_command(words: list[str]):
    """The command `words` name (walking the groups: typer's own click) and the words after it."""
    cmd = typer.main.get_command(app)
    rest = list(words)
    while hasattr(cmd, "commands") and rest and rest[0] in cmd.commands:
        cmd = cmd.commands[rest.pop(0)]
    return cmd, rest


def cli_flags(cmd) -> set[str]:
    return {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}


def flags_of(words: list[str]) -> list[str]:
    return [w.split("=", 1)[0] for w in words if w.startswith("-") and not re.match(r"^-\d", w)]


def config_keys(words: list[str]) -> list[str]:
    return [words[i + 1].split("=", 1)[0] for i, w in enumerate(words[:-1]) if w in ("--set", "-s")]


def has_key(path: str) -> bool:
    node = PipelineConfig().resolved()
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def test_the_readme_is_a_guide_of_at_most_400_lines_with_one_current_default_table():
    md = text()
    assert len(md.splitlines()) <= 400
    sections = re.split(r"^## ", md, flags=re.M)
    yields = [s for s in sections if s.startswith("What a default run yields")]
    assert len(yields) == 1
    tables = re.findall(r"(?:^\|.*\|\n)+", yields[0], re.M)
    assert len(tables) == 1 and "a reader keeps" in tables[0] and re.search(r"\d{4}-\d\d-\d\d", yields[0])
    # the figures of other runs live in docs/results.md, dated
    assert not re.search(r"^\| (run|[A-Z]\d) \|", md, re.M), "a run-history table in the README"
    judge = [s for s in sections if s.startswith("The judge\n")]
    # one table of the judge's policies on each labelled part, blind figures apart from dev ones
    assert len(judge) == 1 and "<!-- judge table -->" in judge[0] and "<!-- /judge table -->" in judge[0]
    assert "**blind**" in judge[0] and "| dev |" in judge[0] and "strict" in judge[0] and "lenient" in judge[0]
    results = (ROOT / "docs" / "results.md").read_text()
    dates = re.findall(r"^## (\d{4}-\d\d-\d\d):", results, re.M)
    assert len(dates) >= 10 and dates == sorted(dates, reverse=True), "results.md: dated sections, newest first"
    assert results.count("*How measured*:") == len(dates)


@pytest.mark.parametrize("block", shell_blocks(text()), ids=lambda b: b.splitlines()[0][:40])
def test_every_shell_block_parses(block):
    done = subprocess.run(["bash", "-n"], input=block, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_make_targets_flags_and_config_keys_the_readme_uses_exist():
    targets, checked = make_targets(), 0
    for command in commands(text()):
        if "<" in command:  # a pattern (`worldsmith <stage> run`), not a command
            continue
        words = shlex.split(command)
        if words[0] == "make":
            target = words[1]
            assert target in targets, f"{command}: no make target {target!r}"
            args = [w for w in words[2:] if w.startswith("ARGS=")]
            if not args:
                continue
            inner = shlex.split(args[0].split("=", 1)[1])
            if target in MAKE_RUNS:
                known = argparse_flags(MAKE_RUNS[target])
            else:
                cmd, _ = cli_command([MAKE_RUNS_CLI[target]])
                known = cli_flags(cmd)
            unknown = [f for f in flags_of(inner) if f not in known]
            assert not unknown, f"{command}: {unknown} are not options of {target}"
            words = inner
        elif words[0].endswith("worldsmith"):
            cmd, rest = cli_command(words[1:])
            assert not hasattr(cmd, "commands"), f"{command}: no such command"
            unknown = [f for f in flags_of(rest) if f not in cli_flags(cmd)]
            assert not unknown, f"{command}: {unknown} are not options of {cmd.name}"
        elif words[0] == "python" and words[1].startswith("flows/"):
            unknown = [f for f in flags_of(words[2:]) if f not in argparse_flags(words[1])]
            assert not unknown, f"{command}: {unknown}"
        else:
            continue
        missing = [k for k in config_keys(words) if not has_key(k)]
        assert not missing, f"{command}: no config key {missing}"
        checked += 1
    assert checked >= 10  # the guide's commands were found and read


def test_the_readme_links_point_at_files_that_are_there():
    links = re.findall(r"\]\(([^)#]+)\)", text())
    missing = [link for link in links if not link.startswith("http") and not (ROOT / link).exists()]
    assert links and not missing, missing
