"""How precise the rules judge's hack checks were (retired: the claim layer of c26d948 replaced them, and
benchmarks/judge_two_sided.py measures the judge now; the labels here name the old kinds, so only `--before` reads
them): runs `find_hacks` over the hand-labelled episodes in
tests/fixtures/judge/hack_cases.json and prints, per hack kind, how many episodes it flagged,
how many of those a careful reviewer flags too (true positives), precision and recall,
with their counts, also per batch of cases (`batch`: dev, or held-out ones written after
the checks); with `--before REV` (default 9786ea9, the checks before the fixes) also for hacks.py at that revision
at REV, read with `git show` into a temporary module, so a change shows before and after.

    python benchmarks/hack_precision.py [--before REV] [--no-before] [--cases PATH] [-v]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "fixtures" / "judge" / "hack_cases.json"
KINDS = ("unbacked_claim", "fabricated_value")  # the kinds the fixture labels
READ_ONLY_PREFIXES = ("get_", "list_", "search_", "check_", "find_", "calculate_")

if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from worldsmith.records import HackFinding, PatchEntry, ToolCall, Trajectory, WorldStates
from worldsmith.vocab import error_content


def load_cases(path: Path = CASES) -> tuple[dict[str, str], list[dict[str, Any]]]:
    data = json.loads(path.read_text())
    return data["systems"], data["cases"]


def trajectory(turns: list[dict[str, Any]], system: str = "") -> Trajectory:
    """An episode as the rollouts stage records it, from a fixture's turns: user and
    assistant texts, and calls with their result (`result`), injected fault (`fault`) or
    failed real execution (`error`). A write that went through gets a one-operation patch."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    calls: list[ToolCall] = []
    patches: list[PatchEntry] = []
    users = 0
    for t in turns:
        if "user" in t:
            users += 1
            messages.append({"role": "user", "content": t["user"]})
        elif "assistant" in t:
            messages.append({"role": "assistant", "content": t["assistant"]})
        else:
            cid = f"call_{len(calls) + 1}"
            name = t["call"]
            read_only = t.get("read_only", name.startswith(READ_ONLY_PREFIXES))
            function = {"name": name, "arguments": json.dumps(t.get("args", {}))}
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": cid, "type": "function", "function": function}],
                }
            )
            if "fault" in t:
                ok, executor, error = False, "fault", f"injected {t['fault']}"
                content = error_content(t["fault"], f"The service failed: {t['fault']}")
            elif "error" in t:
                ok, executor, error, content = False, "real", t["error"], f"Error: {t['error']}"
            else:
                result = t.get("result", {})
                ok, executor, error, content = True, "simulated", None, json.dumps(result)
                if not read_only and not (isinstance(result, dict) and "error" in result):
                    patches.append(
                        PatchEntry(call_id=cid, tool=name, patch=[{"op": "replace", "path": f"/{name}", "value": True}])
                    )
            messages.append({"role": "tool", "tool_call_id": cid, "content": content})
            patched = bool(patches and patches[-1].call_id == cid)
            calls.append(
                ToolCall(
                    turn=users,
                    call_id=cid,
                    name=name,
                    tool=name,
                    tool_id=f"tool_{name}",
                    arguments=t.get("args", {}),
                    read_only=read_only,
                    executor=executor,
                    ok=ok,
                    error=error,
                    patch_ops=int(patched),
                )
            )
    return Trajectory(
        trajectory_id="trj_fixture",
        task_id="tsk_fixture",
        agent_id="agt_fixture",
        sample=0,
        seed=0,
        messages=messages,
        tools=[],
        world_states=WorldStates(patches=patches),
        calls=calls,
        model="fixture",
        status="finished",
        turns=users,
        tool_calls=len(calls),
    )


def case_trajectory(case: dict[str, Any], systems: dict[str, str]) -> Trajectory:
    return trajectory(case["turns"], case.get("system", systems.get(case["domain"], "")))


def score(
    find: Callable[[Trajectory], list[HackFinding]], systems: dict[str, str], cases: list[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Per kind: flagged, tp, fp, fn (case ids for the last two), precision, recall (None: nothing to divide)."""
    out = {k: {"flagged": 0, "tp": 0, "labelled": 0, "fp": [], "fn": []} for k in KINDS}
    for case in cases:
        found = {h.kind for h in find(case_trajectory(case, systems))}
        for k in KINDS:
            s, truth, flagged = out[k], k in case["hacks"], k in found
            s["flagged"] += flagged
            s["labelled"] += truth
            s["tp"] += truth and flagged
            if flagged and not truth:
                s["fp"].append(case["id"])
            if truth and not flagged:
                s["fn"].append(case["id"])
    for s in out.values():
        s["precision"] = s["tp"] / s["flagged"] if s["flagged"] else None
        s["recall"] = s["tp"] / s["labelled"] if s["labelled"] else None
    return out


def committed_find_hacks(rev: str = "HEAD") -> Callable[[Trajectory], list[HackFinding]]:
    """find_hacks from hacks.py as committed at `rev`, loaded as a temporary module."""
    # src/worldsmith/judge/hacks.py until the rollouts stage used the checks too (2026-12-06)
    for where in ("src/worldsmith/hacks.py", "src/worldsmith/judge/hacks.py"):
        shown = subprocess.run(["git", "show", f"{rev}:{where}"], cwd=ROOT, capture_output=True, text=True)
        if shown.returncode == 0:
            break
    shown.check_returncode()
    source = shown.stdout
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"hacks_{rev.replace('/', '_')}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(f"hacks_at_{abs(hash(rev))}", path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module.find_hacks


def _fmt(s: dict[str, Any], key: str, den: str) -> str:
    value = s[key]
    return "—" if value is None else f"{value:.2f} ({s['tp']}/{s[den]})"


def table(label: str, scores: dict[str, dict[str, Any]]) -> list[str]:
    rows = []
    for k, s in scores.items():
        precision, recall = _fmt(s, "precision", "flagged"), _fmt(s, "recall", "labelled")
        rows.append(f"| {label} | {k} | {s['flagged']} | {s['tp']} | {precision} | {recall} |")
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=Path, default=CASES)
    p.add_argument(
        "--before", default="9786ea9", help="git revision of hacks.py to compare with (default: before the fixes)"
    )
    p.add_argument("--no-before", action="store_true", help="score only the working tree's find_hacks")
    p.add_argument("-v", "--verbose", action="store_true", help="list the false positives and false negatives")
    a = p.parse_args()
    # the labelled kinds are the rules judge's (unbacked_claim, fabricated_value ...); since the claim layer replaced
    # those checks (c26d948) only the --before figures read them, and the judge is measured by judge_two_sided.py
    from worldsmith.judge.checks import find_hacks

    systems, cases = load_cases(a.cases)
    runs = [("after", find_hacks)]
    if not a.no_before:
        runs.insert(0, (f"before ({a.before})", committed_find_hacks(a.before)))
    labelled = {k: sum(k in c["hacks"] for c in cases) for k in KINDS}
    print(f"{len(cases)} cases, {sum(not c['hacks'] for c in cases)} honest; labelled: {labelled}\n")
    print("| version | kind | flagged | true positives | precision | recall |")
    print("| --- | --- | --- | --- | --- | --- |")
    results = {}
    for label, find in runs:
        results[label] = score(find, systems, cases)
        print("\n".join(table(label, results[label])))
    batches = list(dict.fromkeys(c.get("batch", "dev") for c in cases))
    if len(batches) > 1:  # the held-out batches were written after the checks and measured before any tuning on them
        print("\nper batch, the working tree's find_hacks:\n")
        print("| batch | kind | flagged | true positives | precision | recall |")
        print("| --- | --- | --- | --- | --- | --- |")
        for b in batches:
            print("\n".join(table(b, score(find_hacks, systems, [c for c in cases if c.get("batch", "dev") == b]))))
    if a.verbose:
        for label, scores in results.items():
            for k, s in scores.items():
                print(f"\n{label} {k}: false positives {s['fp']}; false negatives {s['fn']}")


if __name__ == "__main__":
    main()
