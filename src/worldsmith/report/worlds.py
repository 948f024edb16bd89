"""The worlds page: every world of a run in `<run>/worlds.html`, beside the report (linked from it).

For each world: where it comes from (llm, derived, pack, crawled), its domain, category,
servers and pack; its collections with their fields (type, format, enum, reference), keys and
transitions; its rules and policy text; the tools that act on it (name, action, collection,
operation, bound or simulated); and, when the LLM's design was refused, why (the rejections of
kind `world_design` and `world_coherence`, and the world's own `problem`). Tools bound to no
world and refusals of no stored world are listed at the end, so nothing of the run is hidden.

Read from the run's DuckDB catalog views (`worlds`, `tools`, `rejections`). World designs,
policies and tool names were written by a model: every string goes through `html.escape`.
"""

from __future__ import annotations

import html
import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from worldsmith.records import Rejection, ToolSpec, World
from worldsmith.report.trajectories import _record, _rows
from worldsmith.store import refresh_catalog

REFUSAL_KINDS = ("world_design", "world_coherence")
SOURCES = ("llm", "derived", "pack", "crawled")


@dataclass
class WorldView:
    """A world with its tools and the refusals of its domain's design."""

    world: World
    tools: list[ToolSpec] = field(default_factory=list)
    refusals: list[Rejection] = field(default_factory=list)


def load_worlds(data_dir: str | os.PathLike, run_id: str) -> tuple[list[WorldView], list[ToolSpec], list[Rejection]]:
    """The run's worlds with their tools and refusals; then the tools of no world, the refusals of no world."""
    catalog = refresh_catalog(data_dir)
    with duckdb.connect(str(catalog), read_only=True) as con:
        worlds = [
            _record(World, r)
            for r in _rows(con, "SELECT * FROM worlds WHERE run_id = ? ORDER BY category, domain, world_id", [run_id])
        ]
        tools = [
            _record(ToolSpec, r) for r in _rows(con, "SELECT * FROM tools WHERE run_id = ? ORDER BY name", [run_id])
        ]
        refusals = [
            _record(Rejection, r)
            for r in _rows(
                con,
                "SELECT * FROM rejections WHERE run_id = ? AND list_contains(?, kind) "
                "ORDER BY created_at, rejection_id",
                [run_id, list(REFUSAL_KINDS)],
            )
        ]
    views = {w.world_id: WorldView(w) for w in worlds}
    by_domain = {v.world.domain: v for v in views.values()}
    by_server = {s: v for v in views.values() for s in v.world.servers}
    loose: list[ToolSpec] = []
    for t in tools:
        # bound to a world; else a tool of its domain or of one of its crawled servers (simulated there)
        v = (
            views.get(t.binding.world_id)
            if t.binding is not None
            else by_server.get(t.server or "") or by_domain.get(t.domain or "")
        )
        (v.tools if v is not None else loose).append(t)
    by_domain_id = {v.world.domain_id: v for v in views.values()}
    orphans: list[Rejection] = []
    for r in refusals:
        payload = r.payload if isinstance(r.payload, dict) else {}
        v = by_domain_id.get(payload.get("domain_id", "")) or views.get(payload.get("world_id", ""))
        v = v or next((x for x in views.values() if r.subject == f"world/{x.world.domain}"), None)
        (v.refusals if v is not None else orphans).append(r)
    return list(views.values()), loose, orphans


# ------------------------------------------------------------------------ rendering


def e(value: object) -> str:
    return html.escape("" if value is None else str(value))


def _fields_table(world: World) -> str:
    out = []
    for c in world.collections:
        rows = [f"<tr><td><b>{e(c.key)}</b></td><td>string</td><td>key</td><td></td><td></td><td></td></tr>"]
        for f in c.fields:
            rows.append(
                f"<tr><td>{e(f.name)}</td><td>{e(f.type)}</td><td>{e(f.format)}</td>"
                f"<td>{e(' / '.join(f.enum))}</td><td>{e(f.ref or '')}</td>"
                f"<td>{'unique' if f.unique else ''}{'' if f.required else ' optional'}</td></tr>"
            )
        flows = "".join(
            f"<li><code>{e(name)}</code>: "
            + "; ".join(f"{e(a)} → {e(', '.join(b)) if b else '(final)'}" for a, b in flow.items())
            + "</li>"
            for name, flow in c.transitions.items()
        )
        out.append(
            f'<div class="collection" id="{e(world.world_id)}-{e(c.name)}"><h4>{e(c.name)} '
            f"<small>({e(c.entity)}, keys like {e(c.id_prefix)}-1001)</small></h4>"
            "<table><tr><th>field</th><th>type</th><th>format</th><th>enum</th><th>ref</th><th></th></tr>"
            + "".join(rows)
            + "</table>"
            + (f'<ul class="flow">{flows}</ul>' if flows else '<p class="dim">no transitions</p>')
            + "</div>"
        )
    return "".join(out)


def _tools_table(tools: list[ToolSpec]) -> str:
    if not tools:
        return '<p class="dim">no tools</p>'
    rows = []
    for t in tools:
        b = t.binding
        rows.append(
            f'<tr class="tool"><td><code>{e(t.name)}</code></td><td>{e(b.action if b else "")}</td>'
            f"<td>{e(b.collection if b else '')}</td><td>{e(b.operation if b and b.operation else '')}</td>"
            f"<td>{'bound' if b else 'simulated'}</td><td>{e(t.source)}</td><td>{e(t.server or '')}</td></tr>"
        )
    return (
        "<table><tr><th>tool</th><th>action</th><th>collection</th><th>operation</th><th>bound</th>"
        "<th>source</th><th>server</th></tr>" + "".join(rows) + "</table>"
    )


def _refusals(refusals: list[Rejection]) -> str:
    return "".join(
        f'<div class="refusal"><b>refused ({e(r.kind)}: {e(r.reason)})</b> {e(r.detail)}</div>' for r in refusals
    )


def _world_section(v: WorldView) -> str:
    w = v.world
    meta = [
        ("source", w.source),
        ("domain", w.domain),
        ("category", w.category),
        ("world id", w.world_id),
        ("servers", ", ".join(w.servers)),
        ("pack", w.pack or ""),
        ("today", w.today),
        ("description", w.description),
    ]
    rows = "".join(f"<tr><th>{e(k)}</th><td>{e(val)}</td></tr>" for k, val in meta if val)
    problem = (
        f'<div class="refusal"><b>why the design was not used</b> {e(w.problem)}</div>'
        if w.problem and not any(r.detail == w.problem for r in v.refusals)
        else ""
    )
    rules = (
        "<ul>"
        + "".join(
            f"<li><span class=tag>{e(r.kind)}</span> <code>{e(r.collection)}.{e(r.action)}</code> {e(r.text)}</li>"
            for r in w.rules
        )
        + "</ul>"
        if w.rules
        else '<p class="dim">no rules</p>'
    )
    policy = f"<h3>Policy</h3><pre>{e(w.policy)}</pre>" if w.policy else ""
    bound = sum(t.binding is not None for t in v.tools)
    return (
        f'<section class="world" id="{e(w.world_id)}" data-source="{e(w.source)}">'
        f'<h2>{e(w.domain)} <span class="src src-{e(w.source)}">{e(w.source)}</span></h2>'
        f"<table class=meta>{rows}</table>{_refusals(v.refusals)}{problem}"
        f"<h3>Collections ({len(w.collections)})</h3>{_fields_table(w)}"
        f"<h3>Rules ({len(w.rules)})</h3>{rules}{policy}"
        f"<h3>Tools ({len(v.tools)}, {bound} bound)</h3>{_tools_table(v.tools)}</section>"
    )


def render_page(run_id: str, views: list[WorldView], loose: list[ToolSpec], orphans: list[Rejection]) -> str:
    sources = Counter(v.world.source for v in views)
    refused = sum(bool(v.refusals) for v in views)
    summary = (
        f"{len(views)} worlds: "
        + ", ".join(f"{sources[s]} {s}" for s in SOURCES)
        + f"; {refused} with a refused design"
    )
    toc = "".join(
        f'<li><a href="#{e(v.world.world_id)}">{e(v.world.domain)}</a> '
        f"<small>{e(v.world.category)} · {e(v.world.source)} · {len(v.world.collections)} collections · "
        f"{len(v.tools)} tools{' · refused design' if v.refusals else ''}</small></li>"
        for v in views
    )
    sections = "".join(_world_section(v) for v in views) or "<p>No worlds in this run.</p>"
    rest = ""
    if loose:
        rest += f"<h2>Tools on no world ({len(loose)})</h2>{_tools_table(loose)}"
    if orphans:
        rest += f"<h2>Refusals of no stored world ({len(orphans)})</h2>{_refusals(orphans)}"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>worlds of {e(run_id)}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2rem;color:#222;max-width:70rem}}
table{{border-collapse:collapse;margin:.3rem 0}}
th,td{{text-align:left;padding:.15rem .7rem;border-bottom:1px solid #eee}}
section.world{{border-top:2px solid #ccc;margin-top:2rem}} .dim{{color:#888}} .tag{{font-size:.8em;color:#555}}
.src{{font-size:.6em;padding:.1rem .4rem;border-radius:.3rem;background:#eee}} .src-llm{{background:#d8ecd8}}
.src-derived{{background:#f3e2c7}} .src-pack{{background:#d7e3f4}} .src-crawled{{background:#eadcf0}}
.refusal{{background:#fdecea;padding:.3rem .6rem;margin:.3rem 0}}
pre{{white-space:pre-wrap;background:#f6f6f6;padding:.5rem}}
</style></head>
<body><h1>Worlds of run <code>{e(run_id)}</code></h1>
<p>Generated {datetime.now(UTC):%Y-%m-%d %H:%M UTC}. {e(summary)}. Back to the <a href="report.html">report</a>.</p>
<ul id="worlds">{toc}</ul>
{sections}{rest}</body></html>
"""


def write_worlds(data_dir: str | os.PathLike, run_id: str, out: Path) -> str:
    """Write the worlds page; returns a line saying what it shows."""
    views, loose, orphans = load_worlds(data_dir, run_id)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".html.tmp")
    tmp.write_text(render_page(run_id, views, loose, orphans))
    tmp.replace(out)
    sources = Counter(v.world.source for v in views)
    if not views:
        return "no worlds yet"
    return f"{len(views)} worlds: " + ", ".join(f"{sources[s]} {s}" for s in SOURCES if sources[s])
