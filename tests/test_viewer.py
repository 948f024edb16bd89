"""The trajectory viewer and the funnel: a run store of hand-made trajectories (kept, dropped,
never judged) with verdicts, written as the report's two pages and printed by
`worldsmith rollouts show`. Model text is untrusted: a `<script>` in a message must come out
escaped, and rich markup in one must print as written."""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from scripted_worlds import STATE, cancel_task, order_agent, order_tools

from worldsmith.records import (
    CriterionResult,
    CriticReport,
    FaultEvent,
    HackFinding,
    PatchEntry,
    RubricVerdict,
    SFTExample,
    ToolCall,
    Trajectory,
    Verdict,
    WorldStates,
)

CANCEL = [{"op": "replace", "path": "/orders/0/status", "value": "cancelled"}]
SCRIPT = '<script>alert("pwned")</script>'
MARKUP = "[bold red]not markup[/]"
EVIDENCE = 'found "open" at /orders/0/status, expected "cancelled"'
T0 = datetime(2026, 11, 29, tzinfo=UTC)


def call_msg(call_id: str, name: str, args: dict) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
    }


def trajectory(
    tid: str,
    task_id: str,
    minutes: int,
    *,
    cancelled: bool,
    fault: bool = False,
    last: str = "Done.",
    status: str = "finished",
) -> Trajectory:
    final = json.loads(json.dumps(STATE))
    if cancelled:
        final["orders"][0]["status"] = "cancelled"
    get_result = json.dumps(
        {"id": "o-1001", "status": "open", "item": "blue kettle", "total": 39.5, "notes": "x" * 600}
    )
    messages = [
        {"role": "system", "content": "You are the order desk assistant."},
        {"role": "user", "content": "Please cancel order o-1001."},
        call_msg("call_1", "get_order", {"order_id": "o-1001"}),
        {"role": "tool", "tool_call_id": "call_1", "content": get_result},
        call_msg("call_2", "cancel_order", {"order_id": "o-1001", "reason": "wrong kettle"}),
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "content": json.dumps({"error": "temporarily unavailable"} if fault else {"status": "cancelled"}),
        },
        {"role": "assistant", "content": last},
        {"role": "user", "content": "Thanks. ###STOP###"},
    ]
    calls = [
        ToolCall(
            turn=1,
            call_id="call_1",
            name="get_order",
            tool="get_order",
            tool_id="tool_get_order",
            arguments={"order_id": "o-1001"},
            read_only=True,
            executor="simulated",
            ok=True,
        ),
        ToolCall(
            turn=1,
            call_id="call_2",
            name="cancel_order",
            tool="cancel_order",
            tool_id="tool_cancel_order",
            arguments={"order_id": "o-1001", "reason": "wrong kettle"},
            executor="fault" if fault else "simulated",
            ok=not fault,
            error="transient_error" if fault else None,
            fault="transient_error" if fault else None,
            patch_ops=1 if cancelled else 0,
        ),
    ]
    return Trajectory(
        trajectory_id=tid,
        task_id=task_id,
        agent_id="agt_orders",
        sample=0,
        seed=1,
        messages=messages,
        tools=[],
        world_states=WorldStates(
            initial=STATE,
            final=final,
            patches=[PatchEntry(call_id="call_2", tool="cancel_order", patch=CANCEL)] if cancelled else [],
        ),
        calls=calls,
        faults=[FaultEvent(turn=1, call_id="call_2", tool="cancel_order", kind="transient_error", forced=True)]
        if fault
        else [],
        model="scripted",
        status=status,
        turns=2,
        tool_calls=2,
        created_at=T0 + timedelta(minutes=minutes),
    )


def verdict(t: Trajectory, passed: bool) -> Verdict:
    criteria = [
        CriterionResult(
            criterion_id="c1", kind="call", description="cancels o-1001", passed=True, evidence="matched call call_2"
        ),
        CriterionResult(
            criterion_id="c2",
            kind="state",
            description="o-1001 is cancelled",
            passed=passed,
            evidence='found "cancelled" at /orders/0/status' if passed else EVIDENCE,
        ),
    ]
    critic = CriticReport(
        ok=True,
        score=9 if passed else 3,
        model="critic-m",
        rubrics={"honest": RubricVerdict(passed=passed, reason="says what happened" if passed else "claims a cancel")},
    )
    return Verdict(
        trajectory_id=t.trajectory_id,
        task_id=t.task_id,
        agent_id=t.agent_id,
        criteria=criteria,
        critic=critic,
        critic_score=critic.score,
        passed=passed,
        faults=len(t.faults),
        faults_handled=(passed if t.faults else None),
        hacks=[]
        if passed
        else [HackFinding(kind="unbacked_claim", evidence="says cancelled; no successful cancel_order")],
        reasons=[] if passed else ["criterion:state:c2", "hack:unbacked_claim", "fault_not_handled"],
    )


@pytest.fixture
def store(tmp_path):
    """A run `view` in tmp_path/data: one kept, two dropped (one with a `<script>`), one never judged."""
    from worldsmith.store import RunStore

    tools = order_tools()
    s = RunStore(tmp_path / "data", "view")
    s.append(tools)
    s.append([order_agent(tools)])
    s.append([cancel_task("single_call", "tsk_single"), cancel_task("error_recovery", "tsk_recover")])
    kept = trajectory("trj_kept", "tsk_single", 1, cancelled=True, last="Order o-1001 is cancelled.")
    bad = trajectory("trj_script", "tsk_recover", 2, cancelled=False, fault=True, last=f"Cancelled! {SCRIPT} {MARKUP}")
    bad2 = trajectory("trj_dropped2", "tsk_recover", 3, cancelled=False, fault=True)
    unjudged = trajectory("trj_unjudged", "tsk_single", 4, cancelled=False, status="max_turns")
    s.append([kept, bad, bad2, unjudged])
    s.append([verdict(kept, True), verdict(bad, False), verdict(bad2, False)])
    s.append(
        [SFTExample(example_id="ex_1", messages=kept.messages[1:7], tools="[]", metadata={"trajectory_id": "trj_kept"})]
    )
    s.write_info(status="finished", started_at="2026-11-29T00:00:00", usage={})
    (tmp_path / "pipeline.yaml").write_text("run:\n  data_dir: data\n")
    return s


def columns(page: str) -> dict[str, str]:
    """Each class's column of the page."""
    starts = {c: page.index(f'id="col-{c}"') for c in ("kept", "dropped", "unjudged")}
    ends = sorted(starts.values()) + [page.index("<h2>System prompts")]
    return {c: page[i : ends[ends.index(i) + 1]] for c, i in starts.items()}


def test_the_report_and_the_trajectory_page(store):
    from worldsmith.report.stage import build_report

    head = build_report(store.data_dir, "view", store.root / "report.html")
    assert head["trajectories"] == 4 and head["passed"] == 1 and head["exported"] == 1
    report = (store.root / "report.html").read_text()
    assert '<a href="trajectories.html">' in report and "<script" not in report
    funnel = re.search(r'<table id="funnel-table">.*?</table>', report).group(0)
    cells = re.findall(r"<tr><th>([^<]+)</th><td class=n>([^<]*)</td><td class=n>([^<]*)</td></tr>", funnel)
    # each step's count, and its share of the step before
    assert cells == [
        ("tools", "3", ""),
        ("agents", "1", "33%"),
        ("tasks", "2", "200%"),
        ("trajectories", "4", "200%"),
        ("passed", "1", "25%"),
        ("exported", "1", "100%"),
    ]
    assert "(log scale)" in report

    page = (store.root / "trajectories.html").read_text()
    col = columns(page)
    assert "trj_kept" in col["kept"] and "trj_script" in col["dropped"] and "trj_dropped2" in col["dropped"]
    assert "trj_unjudged" in col["unjudged"] and "trj_kept" not in col["dropped"] and "trj_script" not in col["kept"]
    assert "kept: 1; dropped: 2; unjudged: 1" in page
    # a tool call with its name and arguments, the result folded (long), the fault marked
    assert "→ <b>cancel_order</b>" in page and html.escape('"reason": "wrong kettle"') in page
    assert (
        "<details><summary>" in col["kept"]
        and "⚡ injected fault: transient_error</b> (forced by the task)" in col["dropped"]
    )
    # the world's diff: the patch, and the changed record initial -> final
    assert html.escape('"path": "/orders/0/status"') in col["kept"]
    assert re.search(r"<td>status</td><td><pre>open</pre></td><td><pre>cancelled</pre></td>", col["kept"])
    # the verdict: criteria with evidence, the hack, the critic's score, the reasons
    assert html.escape(EVIDENCE) in col["dropped"] and "unbacked_claim" in col["dropped"]
    assert (
        "critic score 3" in col["dropped"] and "critic score 9" in col["kept"] and "fault_not_handled" in col["dropped"]
    )
    assert "not judged" in col["unjudged"]
    # filters: the options come from the data; model text is escaped, only the page's own script runs
    assert '<option value="error_recovery">' in page and '<option value="criterion:state">' in page
    assert '<option value="max_turns">' in page
    assert SCRIPT not in page and html.escape(SCRIPT) in page and page.count("<script") == 1


def test_the_page_is_capped_per_class(store, tmp_path):
    from worldsmith.report.trajectories import write_trajectories

    out = tmp_path / "t.html"
    note = write_trajectories(store.data_dir, "view", out, cap=1)
    page = out.read_text()
    assert note == "1 of 1 kept, 1 of 2 dropped, 1 of 1 unjudged"
    assert "dropped: 2 (the first 1 shown)" in page and "trj_script" in page and "trj_dropped2" not in page


def test_changed_records_by_key():
    from worldsmith.report.trajectories import changed_records

    final = {
        "orders": [
            {"id": "o-1002", "status": "shipped"},
            {"id": "o-1001", "status": "cancelled"},
            {"id": "o-9", "status": "open"},
        ],
        "note": "x",
    }
    initial = {"orders": [{"id": "o-1001", "status": "open"}, {"id": "o-1002", "status": "shipped"}, {"id": "o-7"}]}
    got = [(c.collection, c.key, c.kind, c.fields()) for c in changed_records(initial, final)]
    assert got == [
        ("orders", "o-1001", "changed", [("status", "open", "cancelled")]),
        ("orders", "o-7", "deleted", []),
        ("orders", "o-9", "created", []),
        ("note", "", "created", []),
    ]


@pytest.fixture
def cli(store, monkeypatch):
    from rich.console import Console
    from typer.testing import CliRunner

    from worldsmith import cli as cli_module

    monkeypatch.setattr(cli_module, "console", Console(width=240))  # wide: table cells on one line each
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(
            cli_module.app,
            ["rollouts", "show", "--config", str(store.root.parent.parent.parent / "pipeline.yaml"), *args],
        )

    return invoke


def test_rollouts_show_prints_the_chat_the_world_and_the_verdict(cli):
    r = cli("--dropped")
    assert r.exit_code == 0, r.output
    out = r.output
    assert out.startswith("trj_dropped2  dropped")  # the latest dropped one
    r = cli("trj_script")
    assert r.exit_code == 0, r.output
    out = r.output
    assert "trj_script  dropped · task tsk_recover (error_recovery)" in out
    assert '→ cancel_order({"order_id": "o-1001", "reason": "wrong kettle"})' in out
    assert (
        "⚡ injected fault: transient_error (forced)" in out
        and "fault    turn 1 cancel_order (call_2): transient_error" in out
    )
    assert EVIDENCE in out and "hack unbacked_claim: says cancelled" in out and "critic score 3" in out
    assert "reasons: criterion:state:c2, hack:unbacked_claim, fault_not_handled" in out
    assert SCRIPT in out and MARKUP in out  # printed as written: neither escaped nor read as markup
    r = cli("--kept")
    assert r.exit_code == 0 and r.output.startswith("trj_kept  kept")
    assert "patch    cancel_order (call_2):" in r.output and "/orders/0/status" in r.output
    assert re.search(r"orders o-1001 \(changed\)\s*│\s*status\s*│\s*\"open\"\s*│\s*\"cancelled\"", r.output)
    r = cli()
    assert r.exit_code == 0 and r.output.startswith("trj_unjudged  unjudged") and "not judged" in r.output
    r = cli("trj_nope")
    assert r.exit_code == 1
