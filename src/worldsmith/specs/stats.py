"""`worldsmith tools stats`: what the tool repository holds, and how well bundles cover it."""

from __future__ import annotations

SECTIONS = {
    "by source": "SELECT source, count(*) AS tools, count(DISTINCT server) AS servers FROM tools WHERE run_id = $run GROUP BY ALL ORDER BY tools DESC",
    "by category": "SELECT coalesce(category, '(none)') AS category, source, count(*) AS tools FROM tools WHERE run_id = $run GROUP BY ALL ORDER BY category, source",
    "by domain (top 20)": "SELECT coalesce(domain, server) AS domain, source, count(*) AS tools FROM tools WHERE run_id = $run GROUP BY ALL ORDER BY tools DESC, domain LIMIT 20",
    "by annotation": """
        SELECT hint, count(*) FILTER (WHERE v = 'true') AS "true", count(*) FILTER (WHERE v = 'false') AS "false",
               count(*) FILTER (WHERE v IS NULL) AS unset
        FROM (SELECT unnest(['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) AS hint, annotations
              FROM tools WHERE run_id = $run) t, LATERAL (SELECT json_extract_string(t.annotations, '$.' || t.hint) AS v)
        GROUP BY hint ORDER BY hint""",
    "evolution operators": "SELECT operator, count(*) AS tools FROM tools WHERE run_id = $run AND operator IS NOT NULL GROUP BY ALL ORDER BY tools DESC",
    "rejections": "SELECT kind, reason, count(*) AS n FROM rejections WHERE run_id = $run GROUP BY ALL ORDER BY n DESC",
    "bundle coverage": """
        WITH used AS (SELECT DISTINCT unnest(tool_ids) AS tool_id FROM bundles WHERE run_id = $run)
        SELECT t.source, count(*) AS tools, count(u.tool_id) AS in_a_bundle, round(count(u.tool_id) / count(*), 3) AS coverage
        FROM tools t LEFT JOIN used u USING (tool_id) WHERE t.run_id = $run GROUP BY ALL ORDER BY t.source""",
    "bundles": "SELECT count(*) AS bundles, round(avg(len(tool_ids)), 2) AS mean_size, sum(CASE WHEN len(list_distinct(sources)) > 1 THEN 1 ELSE 0 END) AS mixed_real_synthetic FROM bundles WHERE run_id = $run",
}
