"""The trajectory viewer: a run's episodes as chats, kept and dropped side by side, in
`<run>/trajectories.html` (written with the report), and one of them in the terminal
(`worldsmith rollouts show`).

Each trajectory shows its messages as bubbles, the assistant's tool calls with their
arguments, the tool results (folded when long), the injected faults, the world's diff (the
JSON Patch of each call, then the changed records: initial against final) and the judge's
verdict (each criterion with its evidence, the hacks, the critic's score, the drop reasons).

Everything shown was written by a model or a simulator: untrusted. Every string goes through
`html.escape` on the page and through rich `Text` (never markup) in the terminal. The rows are
picked in DuckDB, at most `CAP` per class, so a run of a million episodes still makes a page
of a few hundred that a browser opens at once.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from worldsmith.records import Record, Task, Trajectory, Verdict
from worldsmith.store import refresh_catalog

CAP = 200  # trajectories per class on the page
TEXT_CAP = 3000  # characters of one message, arguments or result shown; the rest is cut, with a note
FOLD = 400  # tool results longer than this are folded
CLASSES = ("kept", "dropped", "unjudged")
CLASS_SQL = "CASE WHEN v.trajectory_id IS NULL THEN 'unjudged' WHEN v.passed THEN 'kept' ELSE 'dropped' END"
FROM_SQL = "FROM trajectories r LEFT JOIN verdicts v USING (run_id, trajectory_id) WHERE r.run_id = ?"


@dataclass
class Shown:
    """One trajectory with what the viewer shows beside it: its verdict and task, when stored."""

    trajectory: Trajectory
    verdict: Verdict | None = None
    task: Task | None = None

    @property
    def cls(self) -> str:
        return "unjudged" if self.verdict is None else "kept" if self.verdict.passed else "dropped"


# ------------------------------------------------------------------------ reading


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, params)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def _record(cls: type[Record], row: dict[str, Any]):
    # a column that older shards lack reads as NULL through union_by_name: let the field's default stand
    return cls.from_row({k: v for k, v in row.items() if v is not None})


def _fetch(con: duckdb.DuckDBPyConnection, run_id: str, ids: list[str]) -> list[Shown]:
    """The trajectories `ids` (in that order) with their verdicts and tasks."""
    if not ids:
        return []
    where = "WHERE run_id = ? AND list_contains(?, trajectory_id)"
    trajs = {
        t.trajectory_id: t
        for t in (_record(Trajectory, r) for r in _rows(con, f"SELECT * FROM trajectories {where}", [run_id, ids]))
    }
    verdicts = {
        v.trajectory_id: v
        for v in (_record(Verdict, r) for r in _rows(con, f"SELECT * FROM verdicts {where}", [run_id, ids]))
    }
    task_ids = sorted({t.task_id for t in trajs.values()})
    rows = _rows(con, "SELECT * FROM tasks WHERE run_id = ? AND list_contains(?, task_id)", [run_id, task_ids])
    tasks = {t.task_id: t for t in (_record(Task, r) for r in rows)}
    return [Shown(trajs[i], verdicts.get(i), tasks.get(trajs[i].task_id)) for i in ids if i in trajs]


def _connect(data_dir: str | os.PathLike) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(refresh_catalog(data_dir)), read_only=True)


def load_sample(data_dir: str | os.PathLike, run_id: str, cap: int = CAP) -> tuple[list[Shown], dict[str, int]]:
    """The first `cap` trajectories of each class (kept, dropped, unjudged), and each class's total."""
    with _connect(data_dir) as con:
        totals = {
            r["cls"]: r["n"]
            for r in _rows(con, f"SELECT {CLASS_SQL} AS cls, count(*) AS n {FROM_SQL} GROUP BY ALL", [run_id])
        }
        # ids first, then whole rows: a window over every row's JSON columns would read them all
        picked = _rows(
            con,
            f"SELECT r.trajectory_id AS id {FROM_SQL} QUALIFY row_number() OVER "
            f"(PARTITION BY {CLASS_SQL} ORDER BY r.created_at, r.trajectory_id) <= ? "
            "ORDER BY r.created_at, r.trajectory_id",
            [run_id, cap],
        )
        return _fetch(con, run_id, [r["id"] for r in picked]), totals


def load_one(
    data_dir: str | os.PathLike, run_id: str, trajectory_id: str | None = None, cls: str | None = None
) -> Shown | None:
    """One trajectory: the one named, else the latest (of class `cls`: kept, dropped, unjudged)."""
    where, params = "", [run_id]
    if trajectory_id:
        where += " AND r.trajectory_id = ?"
        params.append(trajectory_id)
    if cls:
        where += f" AND {CLASS_SQL} = ?"
        params.append(cls)
    with _connect(data_dir) as con:
        rows = _rows(
            con,
            f"SELECT r.trajectory_id AS id {FROM_SQL}{where} ORDER BY r.created_at DESC, r.trajectory_id DESC LIMIT 1",
            params,
        )
        found = _fetch(con, run_id, [r["id"] for r in rows])
    return found[0] if found else None


# ------------------------------------------------------------------------ the world's diff


@dataclass
class Change:
    """A record of the world that differs between the initial and the final state."""

    collection: str
    key: str  # the record's key ("o-1001"), its position, or "" for a value that is not a collection
    before: Any  # None: created
    after: Any  # None: deleted

    @property
    def kind(self) -> str:
        return "created" if self.before is None else "deleted" if self.after is None else "changed"

    def fields(self) -> list[tuple[str, Any, Any]]:
        """(field, initial, final) of the fields that differ, when both sides are records."""
        if not (isinstance(self.before, dict) and isinstance(self.after, dict)):
            return []
        names = list(self.before) + [k for k in self.after if k not in self.before]
        return [(k, self.before.get(k), self.after.get(k)) for k in names if self.before.get(k) != self.after.get(k)]


def _key_field(*lists: list[Any]) -> str | None:
    """The field that keys a collection's records: `id` or `*_id`, present and unique in every list."""
    records = [r for rs in lists for r in rs]
    if not records or not all(isinstance(r, dict) for r in records):
        return None
    for name in records[0]:
        if name != "id" and not name.endswith("_id"):
            continue
        if all(
            all(isinstance(r.get(name), str | int) for r in rs) and len({r[name] for r in rs}) == len(rs)
            for rs in lists
        ):
            return name
    return None


def changed_records(initial: dict[str, Any], final: dict[str, Any]) -> list[Change]:
    """The records the episode changed, created or deleted: collections (lists of records) are
    matched by their key field (else by position); any other top-level value is compared whole."""
    out: list[Change] = []
    for name in list(initial) + [k for k in final if k not in initial]:
        a, b = initial.get(name), final.get(name)
        if a == b:
            continue
        if isinstance(a, list | None) and isinstance(b, list | None) and (a or b):
            a, b = a or [], b or []
            key = _key_field(a, b)
            if key:
                before, after = {str(r[key]): r for r in a}, {str(r[key]): r for r in b}
            else:
                before, after = {str(i): r for i, r in enumerate(a)}, {str(i): r for i, r in enumerate(b)}
            for k in list(before) + [k for k in after if k not in before]:
                if before.get(k) != after.get(k):
                    out.append(Change(name, k, before.get(k), after.get(k)))
        else:
            out.append(Change(name, "", a, b))
    return out


# ------------------------------------------------------------------------ shared words


def reason_group(reason: str) -> str:
    """`criterion:state:c2` -> `criterion:state` (as the report groups the drop reasons)."""
    return ":".join(reason.split(":")[:2])


def cut(text: str, limit: int = TEXT_CAP) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit:,} more characters)"


def pretty(value: Any) -> str:
    """Arguments and results as indented JSON (a JSON string is parsed first); other text as it is."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
        if isinstance(value, str):
            return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def score(s: Shown) -> float | int | None:
    v = s.verdict
    if v is None:
        return None
    return v.critic_score if v.critic_score is not None else (v.critic.score if v.critic else None)


# ------------------------------------------------------------------------ the page

E = html.escape

CSS = """
body{font-family:system-ui,sans-serif;margin:1.2rem;color:#222;background:#f7f7f8}
h1{font-size:1.4rem} h2{font-size:1.1rem;margin:.4rem 0} h3{font-size:.95rem;margin:.6rem 0 .2rem}
.bar{position:sticky;top:0;background:#f7f7f8;padding:.5rem 0;border-bottom:1px solid #ddd;z-index:1;
  display:flex;flex-wrap:wrap;gap:.8rem;align-items:center}
.cols{display:flex;gap:1rem;align-items:flex-start;margin-top:.6rem} .col{flex:1;min-width:0}
.traj{background:#fff;border:1px solid #ddd;border-radius:6px;margin:.4rem 0;padding:.3rem .6rem;overflow-x:auto}
.traj>summary{cursor:pointer;font-size:.9rem} .traj[open]>summary{margin-bottom:.4rem}
.chat{display:flex;flex-direction:column}
.msg{max-width:88%;margin:.3rem 0;padding:.4rem .6rem;border-radius:10px;white-space:pre-wrap;word-break:break-word}
.who{display:block;font-size:.72rem;color:#666}
.user{background:#e8f0fe;align-self:flex-start} .assistant{background:#e6f4ea;align-self:flex-end}
.tool{background:#f1f1f1;align-self:flex-end;font-family:ui-monospace,monospace;font-size:.8rem}
.call{font-family:ui-monospace,monospace;font-size:.8rem;background:#fff;border:1px solid #c9d7e8;border-radius:5px;
  padding:.2rem .4rem;margin-top:.3rem;white-space:normal}
.fault{border-left:4px solid #f59e0b;background:#fff7e6} .tag{font-size:.75rem;color:#555}
.ok{color:#137333;font-weight:600} .bad{color:#c5221f;font-weight:600} .na{color:#888}
pre{white-space:pre-wrap;word-break:break-word;margin:.15rem 0;font-size:.8rem}
table{border-collapse:collapse;font-size:.82rem;width:100%;table-layout:fixed}
th,td{text-align:left;padding:.15rem .4rem;border-bottom:1px solid #eee;vertical-align:top;overflow-wrap:break-word}
.chip{display:inline-block;background:#fde8e8;color:#8a1c1c;border-radius:8px;padding:0 .4rem;margin:0 .2rem .1rem 0;
  font-size:.75rem}
.kept-h{color:#137333} .dropped-h{color:#c5221f} .unjudged-h{color:#666} .note{color:#666;font-size:.85rem}
"""

JS = """
const $ = id => document.getElementById(id);
function apply() {
  const d = $('f-difficulty').value, s = $('f-status').value, r = $('f-reason').value;
  const q = $('f-q').value.trim().toLowerCase();
  for (const c of ['kept', 'dropped', 'unjudged']) {
    const col = $('col-' + c);
    if (!col) continue;
    col.hidden = !$('f-' + c).checked;
    let n = 0;
    for (const t of col.querySelectorAll('details.traj')) {
      const show = (!d || t.dataset.difficulty === d) && (!s || t.dataset.status === s)
        && (!r || t.dataset.reasons.includes('|' + r + '|')) && (!q || t.dataset.search.includes(q));
      t.hidden = !show;
      if (show) n++;
    }
    col.querySelector('.count').textContent = n;
  }
}
document.querySelectorAll('.bar select, .bar input').forEach(e => e.addEventListener('input', apply));
$('f-open').addEventListener('click',
  () => document.querySelectorAll('details.traj:not([hidden])').forEach(t => t.open = true));
$('f-close').addEventListener('click', () => document.querySelectorAll('details.traj').forEach(t => t.open = false));
apply();
"""


def _pre(value: Any) -> str:
    return f"<pre>{E(cut(pretty(value)))}</pre>"


def _mark(passed: bool | None) -> str:
    if passed is None:
        return '<span class="na">–</span>'
    return '<span class="ok">✓</span>' if passed else '<span class="bad">✗</span>'


def _text(m: dict[str, Any]) -> str:
    """A message's content as text (a list of content parts is shown as its JSON)."""
    content = m.get("content") or ""
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _cols(*widths: int) -> str:
    """Column widths (percent) of a fixed-layout table: long evidence wraps inside its column."""
    return "<colgroup>" + "".join(f'<col style="width:{w}%">' for w in widths) + "</colgroup>"


def _system_id(text: str) -> str:
    return "sys-" + hashlib.sha256(text.encode()).hexdigest()[:10]


def _chat_html(t: Trajectory) -> str:
    calls = {c.call_id: c for c in t.calls}
    faults = {f.call_id: f for f in t.faults}
    out = []
    for m in t.messages:
        role, content = m.get("role"), _text(m)
        if role == "system":  # the same prompt in every episode of an agent: once at the page's end
            out.append(
                f'<p class="tag">system prompt: <a href="#{_system_id(content)}">{len(content):,} characters</a></p>'
            )
        elif role == "tool":
            call = calls.get(m.get("tool_call_id", ""))
            fault = faults.get(m.get("tool_call_id", ""))
            head = f"{E(call.name) if call else 'tool'} → " + (
                '<span class="ok">ok</span>'
                if call and call.ok
                else f'<span class="bad">error</span> {E(call.error or "")}'
                if call
                else ""
            )
            if fault:
                forced = " (forced by the task)" if fault.forced else ""
                head += f" · <b>⚡ injected fault: {E(fault.kind)}</b>{forced}"
            body = E(cut(pretty(content)))
            if len(content) > FOLD:
                body = f"<details><summary>{len(content):,} characters</summary>{body}</details>"
            out.append(f'<div class="msg tool{" fault" if fault else ""}"><span class="who">{head}</span>{body}</div>')
        else:
            parts = [E(cut(content))] if content else []
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") or {}
                call = calls.get(tc.get("id", ""))
                tags = []
                if call:
                    tags.append(E(call.executor))
                    if call.patch_ops:
                        tags.append(f"{call.patch_ops} patch op{'s' if call.patch_ops != 1 else ''}")
                    if call.fault:
                        tags.append(f"<b>⚡ fault: {E(call.fault)}</b>")
                fault_cls = " fault" if call and call.fault else ""
                parts.append(
                    f'<div class="call{fault_cls}">→ <b>{E(str(fn.get("name", "?")))}</b> '
                    f'<span class="tag">{" · ".join(tags)}</span>'
                    f"{_pre(fn.get('arguments'))}</div>"
                )
            who = E(str(role))
            out.append(
                f'<div class="msg {who if role in ("user", "assistant") else "tool"}">'
                f'<span class="who">{who}</span>{"".join(parts)}</div>'
            )
    if t.raw:
        out.append(
            '<div class="msg assistant fault"><span class="who">unusable model output (ended the episode)</span>'
            f"{E(cut(t.raw))}</div>"
        )
    return '<div class="chat">' + "".join(out) + "</div>"


def _diff_html(t: Trajectory) -> str:
    ws = t.world_states
    if not ws.patches and ws.initial == ws.final:
        return "<h3>World</h3><p class=note>unchanged (no patch applied)</p>"
    rows = "".join(
        f"<tr><td>{E(p.tool)}<br><span class=tag>{E(p.call_id)}</span></td><td>{_pre(p.patch)}</td></tr>"
        for p in ws.patches
    )
    title = f"World: {len(ws.patches)} patch{'es' if len(ws.patches) != 1 else ''}"
    out = [f"<h3>{title}</h3><table>{_cols(25, 75)}<tr><th>call</th><th>JSON Patch</th></tr>{rows}</table>"]
    changes = changed_records(ws.initial, ws.final)
    if changes:
        items = []
        for c in changes:
            fields = c.fields()
            if fields:
                inner = "".join(f"<tr><td>{E(f)}</td><td>{_pre(a)}</td><td>{_pre(b)}</td></tr>" for f, a, b in fields)
                body = f"<table>{_cols(20, 40, 40)}<tr><th>field</th><th>initial</th><th>final</th></tr>{inner}</table>"
            else:
                body = (
                    "<table><tr><th>initial</th><th>final</th></tr>"
                    f"<tr><td>{_pre(c.before)}</td><td>{_pre(c.after)}</td></tr></table>"
                )
            items.append(f"<p><b>{E(c.collection)}</b> {E(c.key)} <span class=tag>{c.kind}</span></p>{body}")
        out.append("<h3>Changed records (initial → final)</h3>" + "".join(items))
    return "".join(out)


def _verdict_html(s: Shown) -> str:
    v = s.verdict
    if v is None:
        return "<h3>Verdict</h3><p class=note>not judged (the judge has not run on it)</p>"
    sc = score(s)
    head = (
        f'<h3>Verdict: <span class="{"ok" if v.passed else "bad"}">{"kept" if v.passed else "dropped"}</span>'
        f"{'' if sc is None else f' · critic score {E(str(sc))}'}"
        f"{'' if v.faults_handled is None else f' · faults handled: {_mark(v.faults_handled)}'}</h3>"
    )
    out = [head]
    if v.reasons:
        out.append("<p>drop reasons: " + "".join(f'<span class="chip">{E(r)}</span>' for r in v.reasons) + "</p>")
    rows = "".join(
        f"<tr><td>{_mark(c.passed)}</td><td>{E(c.criterion_id)}</td><td>{E(c.kind)}</td><td>{E(c.description)}</td>"
        f"<td>{E(cut(c.evidence or ''))} <span class=tag>({E(c.source)})</span>"
        + (
            f"<br>critic {_mark(c.critic_passed)} {E(c.critic_reason or '')}"
            if c.critic_passed is not None or c.critic_reason
            else ""
        )
        + "</td></tr>"
        for c in v.criteria
    )
    out.append(
        f"<table class=criteria>{_cols(4, 10, 11, 30, 45)}"
        f"<tr><th></th><th>id</th><th>kind</th><th>criterion</th><th>evidence</th></tr>{rows}</table>"
    )
    if v.hacks:
        out.append(
            "<p><b>hacks</b></p><ul>"
            + "".join(f"<li><b>{E(h.kind)}</b>: {E(cut(h.evidence))}</li>" for h in v.hacks)
            + "</ul>"
        )
    if v.critic:
        c = v.critic
        if c.ok:
            rub = "".join(f"<li>{_mark(r.passed)} {E(k)}: {E(cut(r.reason))}</li>" for k, r in c.rubrics.items())
            out.append(f"<p><b>critic</b> {E(c.model or '')}: score {E(str(c.score))}</p><ul>{rub}</ul>")
        else:
            out.append(f"<p><b>critic</b>: no answer ({E(c.error or '')})</p>")
    return "".join(out)


def _card(s: Shown) -> str:
    t, task, v = s.trajectory, s.task, s.verdict
    difficulty = task.difficulty if task else ""
    groups = sorted({reason_group(r) for r in v.reasons}) if v else []
    sc = score(s)
    called = sorted({c.name for c in t.calls})
    summary = (
        f"<b>{E(t.trajectory_id)}</b> · {E(difficulty or 'task ?')} · {E(t.status)}"
        f" · {t.turns} turn{'s' if t.turns != 1 else ''} · {t.tool_calls} call{'s' if t.tool_calls != 1 else ''}"
        + (f" · ⚡{len(t.faults)}" if t.faults else "")
        + ("" if sc is None else f" · score {E(str(sc))}")
        + "".join(f' <span class="chip">{E(g)}</span>' for g in groups)
    )
    meta = (
        f"<p class=tag>task {E(t.task_id)} · agent {E(t.agent_id)} · model {E(t.model)} · sample {t.sample} · "
        f"ended: {E(t.status)}{f' ({E(t.reason)})' if t.reason else ''} · "
        f"{t.generated_tokens:,} tokens · {t.latency_s:.1f} s</p>"
    )
    if task:
        meta += f"<p class=tag>user goal: {E(cut(task.user_goal.request, 500))}</p>"
    search = " ".join([t.trajectory_id, t.task_id, t.agent_id, *called]).lower()
    attrs = (
        f'data-difficulty="{E(difficulty)}" data-status="{E(t.status)}" '
        f'data-reasons="|{E("|".join(groups))}|" data-search="{E(search)}"'
    )
    return (
        f'<details class="traj" id="t-{E(t.trajectory_id)}" {attrs}><summary>{summary}</summary>{meta}'
        f"{_chat_html(t)}{_diff_html(t)}{_verdict_html(s)}</details>"
    )


def _options(fid: str, label: str, counts: Counter) -> str:
    opts = "".join(
        f'<option value="{E(k)}">{E(k)} ({n})</option>'
        for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    return f'<label>{label} <select id="{fid}"><option value="">any</option>{opts}</select></label>'


def render_page(run_id: str, shown: list[Shown], totals: dict[str, int], cap: int = CAP) -> str:
    by_cls = {c: [s for s in shown if s.cls == c] for c in CLASSES}
    classes = [c for c in CLASSES if c != "unjudged" or totals.get(c)]  # kept and dropped always, side by side
    difficulty = Counter(s.task.difficulty for s in shown if s.task)
    status = Counter(s.trajectory.status for s in shown)
    reasons = Counter(g for s in shown if s.verdict for g in {reason_group(r) for r in s.verdict.reasons})
    notes = []
    for c in classes:
        n, total = len(by_cls[c]), totals.get(c, 0)
        notes.append(f"{c}: {total:,}" + (f" (the first {n:,} shown)" if n < total else ""))
    boxes = "".join(f'<label><input type="checkbox" id="f-{c}" checked> {c}</label>' for c in classes)
    bar = (
        f'<div class="bar">{boxes}{_options("f-difficulty", "difficulty", difficulty)}'
        f"{_options('f-status', 'status', status)}"
        f'{_options("f-reason", "drop reason", reasons)}<label>id or tool <input id="f-q" size="14"></label>'
        '<button id="f-open">open all</button><button id="f-close">close all</button></div>'
    )
    cols = "".join(
        f'<div class="col" id="col-{c}"><h2 class="{c}-h">{c} · <span class="count">{len(by_cls[c])}</span> shown</h2>'
        + ("".join(_card(s) for s in by_cls[c]) or "<p class=note>none</p>")
        + "</div>"
        for c in classes
    )
    prompts: dict[str, str] = {}
    for s in shown:
        for m in s.trajectory.messages:
            if m.get("role") == "system":
                prompts.setdefault(_system_id(_text(m)), _text(m))
    system = "".join(
        f'<details id="{k}"><summary>{E(cut(p.splitlines()[0] if p else "", 100))}</summary><pre>{E(p)}</pre></details>'
        for k, p in prompts.items()
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>worldsmith trajectories: {E(run_id)}</title>
<style>{CSS}</style></head>
<body><h1>Trajectories of run <code>{E(run_id)}</code></h1>
<p>{E("; ".join(notes))}. At most {cap:,} per class, the first stored; query the rest with <code>worldsmith query</code>
or print one with <code>worldsmith rollouts show ID</code>. <a href="report.html">The run report</a>.</p>
{bar}<div class="cols">{cols}</div>
<h2>System prompts</h2>{system or "<p class=note>none</p>"}
<script>{JS}</script></body></html>
"""


def write_trajectories(data_dir: str | os.PathLike, run_id: str, out: Path, cap: int = CAP) -> str:
    """Write the viewer page; returns a line saying what it shows."""
    shown, totals = load_sample(data_dir, run_id, cap)
    page = render_page(run_id, shown, totals, cap)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".html.tmp")
    tmp.write_text(page)
    tmp.replace(out)
    counts = Counter(s.cls for s in shown)
    return (
        ", ".join(f"{counts[c]:,} of {totals.get(c, 0):,} {c}" for c in CLASSES if totals.get(c))
        or "no trajectories yet"
    )


# ------------------------------------------------------------------------ the terminal


def print_trajectory(s: Shown, console, full: bool = False) -> None:
    """One trajectory in the terminal with rich. Untrusted text goes in as `Text`, never as
    markup, so a model's "[red]" or "[/]" prints as written."""
    from rich.table import Table
    from rich.text import Text

    t, v, task = s.trajectory, s.verdict, s.task
    limit = None if full else 600

    def clip(text: str) -> str:
        return text if limit is None else cut(text, limit)

    head = Text()
    head.append(t.trajectory_id, "bold")
    head.append(f"  {s.cls}", {"kept": "bold green", "dropped": "bold red"}.get(s.cls, "dim"))
    head.append(
        f" · task {t.task_id}"
        + (f" ({task.difficulty})" if task else "")
        + f" · {t.status}"
        + (f" ({t.reason})" if t.reason else "")
        + f" · {t.turns} turns · {t.tool_calls} tool calls · "
        f"{t.generated_tokens} tokens · {t.latency_s:.1f} s"
    )
    console.print(head)
    if task:
        console.print(Text("goal: ", "dim") + Text(task.user_goal.request))
    calls = {c.call_id: c for c in t.calls}
    faults = {f.call_id: f for f in t.faults}
    styles = {"system": "dim", "user": "bold blue", "assistant": "bold green", "tool": "bold magenta"}
    for m in t.messages:
        role, content = m.get("role", "?"), _text(m)
        line = Text(f"{role:>9} ", styles.get(role, "bold"))
        if role == "system":
            line.append(clip(content) if full else f"({len(content):,} characters; --full shows it)", "dim")
        elif role == "tool":
            call = calls.get(m.get("tool_call_id", ""))
            fault = faults.get(m.get("tool_call_id", ""))
            if call:
                line.append(f"{call.name} ", "magenta")
                line.append("ok " if call.ok else f"error {call.error or ''} ", "green" if call.ok else "red")
            if fault:
                line.append(f"⚡ injected fault: {fault.kind}{' (forced)' if fault.forced else ''} ", "bold yellow")
            # a long result as indented JSON under its header; a short one on the line
            line.append("\n" + textwrap.indent(clip(pretty(content)), " " * 10) if len(content) > 80 else content)
        else:
            line.append(clip(content))
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") or {}
                call = calls.get(tc.get("id", ""))
                line.append(f"\n          → {fn.get('name', '?')}", "bold cyan")
                line.append(f"({clip(json.dumps(_parsed(fn.get('arguments')), ensure_ascii=False))})")
                if call:
                    line.append(
                        f"  [{call.executor}{_ops(call.patch_ops)}]",
                        "dim",
                    )
                    if call.fault:
                        line.append(f" ⚡ fault: {call.fault}", "bold yellow")
        console.print(line, highlight=False)
    if t.raw:
        console.print(Text("unusable model output: ", "bold red") + Text(clip(t.raw)))
    for f in t.faults:
        console.print(
            Text(f"fault    turn {f.turn} {f.tool} ({f.call_id}): {f.kind}{' (forced)' if f.forced else ''}", "yellow")
        )
    for p in t.world_states.patches:
        console.print(
            Text("patch    ", "cyan") + Text(f"{p.tool} ({p.call_id}): {clip(json.dumps(p.patch, ensure_ascii=False))}")
        )
    changes = changed_records(t.world_states.initial, t.world_states.final)
    if changes:
        table = Table(title="changed records (initial → final)", title_justify="left")
        for col in ("record", "field", "initial", "final"):
            table.add_column(col, overflow="fold")
        for c in changes:
            rows = c.fields() or [("", c.before, c.after)]
            for f, a, b in rows:
                table.add_row(
                    Text(f"{c.collection} {c.key} ({c.kind})"), Text(f), Text(clip(_json(a))), Text(clip(_json(b)))
                )
        console.print(table)
    if v is None:
        console.print(Text("not judged (the judge has not run on it)", "dim"))
        return
    sc = score(s)
    verdict = Text("verdict: ", "bold") + Text(
        "kept" if v.passed else "dropped", "bold green" if v.passed else "bold red"
    )
    if sc is not None:
        verdict.append(f" · critic score {sc}")
    if v.faults_handled is not None:
        verdict.append(f" · faults handled: {v.faults_handled}")
    console.print(verdict)
    if v.reasons:
        console.print(Text("reasons: ", "bold") + Text(", ".join(v.reasons), "red"))
    table = Table(title="criteria", title_justify="left")
    for col in ("", "criterion", "kind", "what", "evidence", "by"):
        table.add_column(col, overflow="fold")
    for c in v.criteria:
        mark = Text("✓", "green") if c.passed else Text("–", "dim") if c.passed is None else Text("✗", "red")
        by = c.source + (
            f"; critic {c.critic_passed}: {c.critic_reason or ''}"
            if c.critic_passed is not None or c.critic_reason
            else ""
        )
        table.add_row(
            mark, Text(c.criterion_id), Text(c.kind), Text(c.description), Text(clip(c.evidence or "")), Text(by)
        )
    console.print(table)
    for h in v.hacks:
        console.print(Text(f"hack {h.kind}: ", "bold red") + Text(clip(h.evidence)))
    if v.critic:
        c = v.critic
        if not c.ok:
            console.print(Text("critic: no answer ", "bold") + Text(c.error or ""))
        else:
            console.print(Text(f"critic {c.model or ''}: score {c.score}", "bold"))
            for k, r in c.rubrics.items():
                mark = Text(f"  {'✓' if r.passed else '✗'} {k}: ", "green" if r.passed else "red")
                console.print(mark + Text(clip(r.reason)))


def _ops(n: int) -> str:
    return f", {n} patch op{'s' if n != 1 else ''}" if n else ""


def _parsed(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def _json(value: Any) -> str:
    return "—" if value is None else json.dumps(value, ensure_ascii=False, default=str)
