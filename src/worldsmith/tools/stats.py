"""`worldsmith tools stats`: what the tool repository holds."""

from __future__ import annotations

SECTIONS = {
    "by source": (
        "SELECT source, count(*) AS tools, count(DISTINCT server) AS servers "
        "FROM tools WHERE run_id = $run GROUP BY ALL ORDER BY tools DESC"
    ),
    "by category": (
        "SELECT coalesce(category, '(none)') AS category, source, count(*) AS tools "
        "FROM tools WHERE run_id = $run GROUP BY ALL ORDER BY category, source"
    ),
    "by domain (top 20)": (
        "SELECT coalesce(domain, server) AS domain, source, count(*) AS tools "
        "FROM tools WHERE run_id = $run GROUP BY ALL ORDER BY tools DESC, domain LIMIT 20"
    ),
    "by annotation": """
        SELECT hint, count(*) FILTER (WHERE v = 'true') AS "true", count(*) FILTER (WHERE v = 'false') AS "false",
               count(*) FILTER (WHERE v IS NULL) AS unset
        FROM (SELECT unnest(['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) AS hint, annotations
              FROM tools WHERE run_id = $run) t,
             LATERAL (SELECT json_extract_string(t.annotations, '$.' || t.hint) AS v)
        GROUP BY hint ORDER BY hint""",
    "evolution operators": (
        "SELECT operator, count(*) AS tools FROM tools WHERE run_id = $run AND operator IS NOT NULL "
        "GROUP BY ALL ORDER BY tools DESC"
    ),
    "crawled tools run by code (by server, top 25)": """
        SELECT server, count(*) AS tools, count(*) FILTER (WHERE binding <> 'null') AS bound,
               round(100.0 * count(*) FILTER (WHERE binding <> 'null') / count(*), 1) AS "bound %"
        FROM tools WHERE run_id = $run AND source = 'mcp' GROUP BY ALL ORDER BY bound DESC, tools DESC LIMIT 25""",
    "crawled tools code cannot run (why)": """
        SELECT split_part(json_extract_string(extra, '$.unbound'), ':', 1) AS reason, count(*) AS tools
        FROM tools WHERE run_id = $run AND source = 'mcp' AND binding = 'null' GROUP BY ALL ORDER BY tools DESC""",
    "rejections": "SELECT kind, reason, count(*) AS n FROM rejections WHERE run_id = $run GROUP BY ALL ORDER BY n DESC",
}
