"""The run report: one self-contained HTML file with plots (inline SVG, matplotlib), the
headline figures and the exported examples' diversity by task family, all from DuckDB
queries over the run's catalog views; and beside it
`trajectories.html`, the trajectories themselves (report/trajectories.py).

Plots: the yield funnel (log scale, with a table of counts and step-to-step shares), pass
rate by difficulty, by task family and by domain, tool coverage, turns and tool calls per trajectory, fault
recovery by kind, top failure reasons, tokens by role. Also beside it `worlds.html`, every
world of the run with its collections, rules, policy, tools and refusals (report/worlds.py).
"""

from __future__ import annotations

import html
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from worldsmith.diversity import NEAR_DUPLICATE_JACCARD, Diversity
from worldsmith.plots import bars, funnel_steps, hist, percent, svg
from worldsmith.plots import funnel as funnel_plot
from worldsmith.records import ToolSpec
from worldsmith.stage import Shard, Stage
from worldsmith.store import YIELD_FUNNEL, RunStore, refresh_catalog
from worldsmith.toolspec import crawled_binding

TRAJECTORIES_PAGE = "trajectories.html"
WORLDS_PAGE = "worlds.html"

QUERIES = {
    "funnel": YIELD_FUNNEL,
    "by_difficulty": """
        SELECT t.difficulty AS label, count(*) AS n, count(*) FILTER (WHERE v.passed) AS passed
        FROM trajectories r JOIN tasks t USING (run_id, task_id) LEFT JOIN verdicts v USING (run_id, trajectory_id)
        WHERE r.run_id = $run GROUP BY ALL ORDER BY n DESC""",
    "by_family": """
        SELECT coalesce(nullif(json_extract_string(t.blueprint, '$.family'), ''), t.difficulty) AS label, count(*) AS n,
               count(*) FILTER (WHERE v.passed) AS passed
        FROM trajectories r JOIN tasks t USING (run_id, task_id) LEFT JOIN verdicts v USING (run_id, trajectory_id)
        WHERE r.run_id = $run GROUP BY ALL ORDER BY n DESC""",
    # the exported examples, for the diversity table (worldsmith/diversity.py)
    "examples": "SELECT metadata, messages FROM sft WHERE run_id = $run ORDER BY example_id",
    "by_domain": """
        SELECT a.domain AS label, count(*) AS n, count(*) FILTER (WHERE v.passed) AS passed
        FROM trajectories r JOIN agents a USING (run_id, agent_id) LEFT JOIN verdicts v USING (run_id, trajectory_id)
        WHERE r.run_id = $run GROUP BY ALL ORDER BY n DESC LIMIT 15""",
    "coverage": """
        WITH offered AS (SELECT DISTINCT unnest(tool_ids) AS tool_id FROM agents WHERE run_id = $run),
             calls AS (SELECT unnest(from_json(calls, '["JSON"]')) AS c FROM trajectories WHERE run_id = $run)
        SELECT * FROM (VALUES
          ('in the repository', (SELECT count(*) FROM tools WHERE run_id = $run)),
          ('offered to agents', (SELECT count(*) FROM offered)),
          ('called', (SELECT count(DISTINCT c->>'tool_id') FROM calls WHERE c->>'tool_id' IS NOT NULL)),
          ('called successfully', (SELECT count(DISTINCT c->>'tool_id') FROM calls WHERE (c->>'ok')::BOOLEAN)))
        AS f(label, n)""",
    "top_tools": """
        SELECT c->>'name' AS label, count(*) AS n
        FROM (SELECT unnest(from_json(calls, '["JSON"]')) AS c FROM trajectories WHERE run_id = $run)
        GROUP BY ALL ORDER BY n DESC LIMIT 12""",
    "turns": "SELECT turns, tool_calls FROM trajectories WHERE run_id = $run",
    "faults": """
        WITH f AS (SELECT trajectory_id, unnest(from_json(faults, '["JSON"]')) AS f
                   FROM trajectories WHERE run_id = $run)
        SELECT f->>'kind' AS label, count(*) AS n, count(*) FILTER (WHERE v.faults_handled) AS handled
        FROM f LEFT JOIN verdicts v ON v.run_id = $run AND v.trajectory_id = f.trajectory_id
        GROUP BY ALL ORDER BY n DESC""",
    "reasons": """
        SELECT regexp_extract(r, '^[^:]+(:[^:]+)?') AS label, count(*) AS n
        FROM (SELECT unnest(reasons) AS r FROM verdicts WHERE run_id = $run)
        GROUP BY ALL ORDER BY n DESC LIMIT 12""",
    # the RL reward by component (judge.reward), mean over the run's verdicts; NULL components (no critic) left out
    "rewards": """
        SELECT label, round(avg(v), 3) AS mean FROM (
            SELECT unnest(['total', 'verifiable', 'verifiable_fraction', 'rubric', 'format', 'budget']) AS label,
                   unnest([json_extract(reward, '$.total'), json_extract(reward, '$.verifiable'),
                           json_extract(reward, '$.verifiable_fraction'), json_extract(reward, '$.rubric'),
                           json_extract(reward, '$.format'), json_extract(reward, '$.budget')])::DOUBLE AS v
            FROM verdicts WHERE run_id = $run AND reward IS NOT NULL AND agent_id NOT LIKE 'coding:%')
        WHERE v IS NOT NULL GROUP BY label ORDER BY label""",
    "statuses": (
        "SELECT status AS label, count(*) AS n FROM trajectories WHERE run_id = $run GROUP BY ALL ORDER BY n DESC"
    ),
    "usage": "SELECT usage FROM runs WHERE run_id = $run",
    # coding worlds (issue 52): the episodes played and those their patch resolved (judged by execution)
    "coding_episodes": """
        SELECT count(*) AS n, count(*) FILTER (WHERE e.resolved) AS resolved,
               count(*) FILTER (WHERE v.passed) AS kept
        FROM coding_episodes e LEFT JOIN verdicts v ON v.run_id = $run AND v.trajectory_id = e.trajectory_id
        WHERE e.run_id = $run""",
    # the crawled tools: bound to a world (by action) or why not (tools.extra.unbound)
    "binding": """
        SELECT CASE WHEN binding <> 'null' THEN 'bound: ' || json_extract_string(binding, '$.action')
                    ELSE 'unbound: ' || coalesce(split_part(json_extract_string(extra, '$.unbound'), ':', 1), '?') END
               AS label, count(*) AS n
        FROM tools WHERE run_id = $run AND source = 'mcp' GROUP BY ALL ORDER BY n DESC LIMIT 14""",
    "by_world_source": """
        SELECT CASE w.source WHEN 'llm' THEN 'designed' ELSE w.source END AS label, count(*) AS n,
               count(*) FILTER (WHERE v.passed) AS passed
        FROM trajectories r JOIN agents a USING (run_id, agent_id) JOIN worlds w ON w.run_id = a.run_id
             AND w.world_id = a.world_id LEFT JOIN verdicts v USING (run_id, trajectory_id)
        WHERE r.run_id = $run GROUP BY ALL ORDER BY n DESC""",
}


def _query(con: duckdb.DuckDBPyConnection, sql: str, run_id: str) -> list[dict[str, Any]]:
    try:
        cur = con.execute(sql.replace("$run", "'" + run_id.replace("'", "''") + "'"))
    except duckdb.BinderException:  # a column newer than every stored shard (verdicts judged before rewards)
        return []
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def _usage(usage: dict[str, Any]) -> str:
    import matplotlib.pyplot as plt

    roles = sorted(usage)
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * max(len(roles), 2) + 1.0))
    prompt = [usage[r].get("prompt_tokens", 0) for r in roles]
    completion = [usage[r].get("completion_tokens", 0) for r in roles]
    ax.barh(roles, prompt, color="#9ecae9", label="prompt")
    ax.barh(roles, completion, left=prompt, color="#4c78a8", label="generated")
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("tokens by role", loc="left", fontsize=11)
    ax.set_xlabel("tokens")
    return svg(fig)


def headline(data: dict[str, Any]) -> dict[str, Any]:
    funnel = {r["step"]: r["n"] for r in data["funnel"]}
    faults = data["faults"]
    n_faults = sum(r["n"] for r in faults)
    generated = sum(u.get("completion_tokens", 0) for u in data["usage"].values())
    return {
        **funnel,
        "pass_rate": round(funnel["passed"] / funnel["trajectories"], 3) if funnel.get("trajectories") else None,
        "fault_recovery_rate": round(sum(r["handled"] or 0 for r in faults) / n_faults, 3) if n_faults else None,
        "generated_tokens": generated,
        "kept_per_1m_tokens": round(funnel.get("exported", 0) / max(generated, 1) * 1e6, 1),
    }


def diversity_table(examples: list[dict[str, Any]]) -> str:
    """The exported examples' diversity by task family (worldsmith/diversity.py), as an HTML table."""
    d = Diversity()
    for row in examples:
        d.add_example(*(json.loads(row[k]) if isinstance(row[k], str) else row[k] for k in ("metadata", "messages")))
    table = d.rows()
    if not table:
        return '<p id="diversity">No examples were exported.</p>'
    head = "".join(f"<th>{html.escape(k.replace('_', ' '))}</th>" for k in table[0])
    body = "".join(
        "<tr>" + "".join(f'<td class="n">{html.escape(str(v))}</td>' for v in r.values()) + "</tr>" for r in table
    )
    return (
        f'<table id="diversity"><tr>{head}</tr>{body}</table><p>chain shapes: distinct read/write patterns of the '
        "calls that succeeded; distinct 2: unique word bigrams of the opening requests over all of them; near "
        f"duplicate rate: requests with an earlier one of their family at MinHash Jaccard >= "
        f"{NEAR_DUPLICATE_JACCARD}.</p>"
    )


def funnel_table(rows: list[dict[str, Any]]) -> str:
    """The funnel's numbers as a table: the plot's log scale shows the shape, this the values."""
    body = "".join(
        f"<tr><th>{html.escape(s['label'])}</th><td class=n>{s['n']:,}</td>"
        f"<td class=n>{'' if s['share'] is None else percent(s['share'])}</td></tr>"
        for s in funnel_steps(rows)
    )
    return f'<table id="funnel-table"><tr><th>step</th><th>count</th><th>of previous</th></tr>{body}</table>'


def coding_funnel(run_dir: Path, episodes: list[dict[str, Any]]) -> str:
    """The coding slice's funnel (docs/coding.md): mutations tried -> tests broke -> gold verified (the repos
    stage's counts over every invocation, `coding_funnel.json`) -> episodes -> resolved -> kept by the judge (the reply
    checks too); "" when the run has none."""
    path = run_dir / "coding_funnel.json"
    made = json.loads(path.read_text()) if path.is_file() else {}
    played = episodes[0] if episodes else {"n": 0, "resolved": 0}
    if not made and not played.get("n"):
        return ""
    steps = [
        {"label": "mutations tried", "n": made.get("tried", 0)},
        {"label": "tests broke", "n": made.get("broke", 0)},
        {"label": "gold verified", "n": made.get("verified", 0)},
        {"label": "coding episodes", "n": played.get("n") or 0},
        {"label": "resolved", "n": played.get("resolved") or 0},
        {"label": "judge kept", "n": played.get("kept") or 0},
    ]
    table = funnel_table(steps).replace('id="funnel-table"', 'id="coding-funnel-table"')
    return f'<div class="beside">{funnel_plot(steps, "coding funnel")}{table}</div>'


def build_report(
    data_dir: str | Path, run_id: str, out: Path, trajectories: bool = True, worlds: bool = True
) -> dict[str, Any]:
    """Write the report to `out` (and, with `trajectories`, the trajectory viewer beside it; with
    `worlds`, the worlds page); returns the headline figures."""
    import matplotlib

    matplotlib.use("Agg")
    catalog = refresh_catalog(data_dir)
    with duckdb.connect(str(catalog), read_only=True) as con:
        data = {name: _query(con, sql, run_id) for name, sql in QUERIES.items()}
    usage_rows = data["usage"]
    raw = usage_rows[0]["usage"] if usage_rows else None
    data["usage"] = (json.loads(raw) if isinstance(raw, str) else raw) or {}
    # the crawled tools code runs: the figure the tools stage's summary gives, from the same function
    head = {**headline(data), **crawled_binding(RunStore(data_dir, run_id).read(ToolSpec))}
    turns = [r["turns"] for r in data["turns"]]
    calls = [r["tool_calls"] for r in data["turns"]]
    steps = [{"label": r["step"], "n": r["n"]} for r in data["funnel"]]
    # the funnel on a log scale, its numbers beside it
    funnel_fig = f'<div class="beside">{funnel_plot(steps, "yield funnel")}{funnel_table(steps)}</div>'
    coding = coding_funnel(Path(data_dir) / "runs" / run_id, data["coding_episodes"])
    plots = [
        ("funnel", "Yield funnel", funnel_fig),
        *([("coding-funnel", "Coding funnel (repository worlds)", coding)] if coding else []),
        (
            "difficulty",
            "Pass rate by task difficulty",
            bars(
                data["by_difficulty"],
                "pass rate by difficulty",
                "share of trajectories kept",
                stacked="passed",
                rate=True,
            ),
        ),
        (
            "family",
            "Pass rate by task family",
            bars(
                data["by_family"], "pass rate by task family", "share of trajectories kept", stacked="passed", rate=True
            ),
        ),
        (
            "domain",
            "Pass rate by domain",
            bars(data["by_domain"], "pass rate by domain", "share of trajectories kept", stacked="passed", rate=True),
        ),
        (
            "world-source",
            "Pass rate by where the world came from",
            bars(
                data["by_world_source"],
                "pass rate by world source",
                "share of trajectories kept",
                stacked="passed",
                rate=True,
            ),
        ),
        ("coverage", "Tool coverage", bars(data["coverage"], "tool coverage", "tools")),
        ("binding", "Crawled tools: run by code, or why not", bars(data["binding"], "crawled tools", "tools")),
        ("top-tools", "Most called tools", bars(data["top_tools"], "most called tools", "calls")),
        ("turns", "User turns per trajectory", hist(turns, "user turns per trajectory", "turns")),
        ("tool-calls", "Tool calls per trajectory", hist(calls, "tool calls per trajectory", "tool calls")),
        (
            "faults",
            "Fault recovery by kind",
            bars(data["faults"], "fault recovery by kind", "share handled", stacked="handled", rate=True),
        ),
        (
            "rewards",
            "RL reward by component (mean over verdicts)",
            bars(data["rewards"], "reward by component (judge.reward)", "mean", value="mean"),
        ),
        ("reasons", "Top failure reasons", bars(data["reasons"], "top reasons for dropping", "trajectories")),
        ("statuses", "How episodes ended", bars(data["statuses"], "how episodes ended", "trajectories")),
        ("tokens", "Token usage by role", _usage(data["usage"])),
    ]
    viewer = ""
    if trajectories:
        from worldsmith.report.trajectories import write_trajectories

        shown = write_trajectories(data_dir, run_id, out.parent / TRAJECTORIES_PAGE)
        viewer = (
            f'<p>Read the trajectories themselves, kept and dropped side by side: <a href="{TRAJECTORIES_PAGE}">'
            f"{TRAJECTORIES_PAGE}</a> ({html.escape(shown)}).</p>"
        )
    if worlds:
        from worldsmith.report.worlds import write_worlds

        listed = write_worlds(data_dir, run_id, out.parent / WORLDS_PAGE)
        viewer += (
            f'<p>The worlds the tasks run in, their tools and why a design was refused: <a href="{WORLDS_PAGE}">'
            f"{WORLDS_PAGE}</a> ({html.escape(listed)}).</p>"
        )
    rows = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape('n/a' if v is None else str(v))}</td></tr>"
        for k, v in head.items()
    )
    diversity = diversity_table(data["examples"])
    figures = "".join(
        f'<figure class="plot" id="plot-{pid}"><figcaption>{html.escape(title)}</figcaption>{svg}</figure>'
        for pid, title, svg in plots
    )
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>worldsmith report: {html.escape(run_id)}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2rem;color:#222}} table{{border-collapse:collapse}}
th,td{{text-align:left;padding:.2rem .8rem;border-bottom:1px solid #eee}}
.plots{{display:flex;flex-wrap:wrap;gap:1.5rem}}
figure{{margin:0}} figcaption{{font-weight:600;margin-bottom:.3rem}} svg{{max-width:100%;height:auto}}
.beside{{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start}} td.n{{text-align:right}}</style></head>
<body><h1>worldsmith run <code>{html.escape(run_id)}</code></h1>
<p>Generated {datetime.now(UTC):%Y-%m-%d %H:%M UTC}. Query the same numbers with <code>worldsmith query</code>.</p>
{viewer}
<h2>Headline</h2><table id="headline">{rows}</table>
<h2>Diversity of the exported examples, by task family</h2>{diversity}
<h2>Plots</h2><div class="plots">{figures}</div></body></html>
"""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".html.tmp")
    tmp.write_text(page)
    tmp.replace(out)
    return head


def run(ctx, shard: Shard | None = None) -> dict[str, Any]:
    """The report stage: `<run>/report.html`, `<run>/trajectories.html` and `<run>/worlds.html`."""
    out = ctx.store.root / "report.html"
    ctx.store.write_info(usage=ctx.run_usage())  # the report reads the run's usage from run.json
    head = build_report(ctx.store.data_dir, ctx.run_id, out)
    return {
        **{k: v for k, v in head.items() if v is not None},
        "report": str(out),
        "trajectories_page": str(out.parent / TRAJECTORIES_PAGE),
        "worlds_page": str(out.parent / WORLDS_PAGE),
    }


STAGE = Stage(
    "report", "The run's HTML report: yield funnel, pass rates, coverage, faults and tokens.", run, section="report"
)
