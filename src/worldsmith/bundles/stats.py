"""`worldsmith bundles stats`: how well the bundles cover the tool repository."""

from __future__ import annotations

SECTIONS = {
    "bundle coverage": """
        WITH used AS (SELECT DISTINCT unnest(tool_ids) AS tool_id FROM bundles WHERE run_id = $run)
        SELECT t.source, count(*) AS tools, count(u.tool_id) AS in_a_bundle,
               round(count(u.tool_id) / count(*), 3) AS coverage
        FROM tools t LEFT JOIN used u USING (tool_id) WHERE t.run_id = $run GROUP BY ALL ORDER BY t.source""",
    "bundles": (
        "SELECT count(*) AS bundles, round(avg(len(tool_ids)), 2) AS mean_size, "
        "sum(CASE WHEN len(list_distinct(sources)) > 1 THEN 1 ELSE 0 END) AS mixed_real_synthetic "
        "FROM bundles WHERE run_id = $run"
    ),
}
