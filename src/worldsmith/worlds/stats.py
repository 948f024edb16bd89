"""`worldsmith worlds stats`: the worlds of a run, how each was made, and what they hold."""

from __future__ import annotations

SECTIONS = {
    "worlds": """
        SELECT domain, category, source, json_array_length(collections) AS collections,
               json_array_length(rules) AS rules,
               left(coalesce(problem, ''), 80) AS why_derived
        FROM worlds WHERE run_id = $run ORDER BY category, domain""",
    "collections": """
        SELECT w.domain, c->>'name' AS collection, c->>'key' AS key, json_array_length(c->'fields') AS fields,
               (SELECT string_agg(f->>'name', ', ')
                FROM (SELECT unnest(from_json(c->'fields', '["JSON"]')) AS f)) AS field_names
        FROM (SELECT domain, unnest(from_json(collections, '["JSON"]')) AS c FROM worlds WHERE run_id = $run) w
        ORDER BY 1, 2""",
    "design refusals and failed calls": (
        "SELECT kind, reason, left(detail, 100) AS detail, count(*) AS n FROM rejections WHERE run_id = $run "
        "AND (kind = 'world_design' OR subject LIKE 'world/%' OR subject LIKE 'domains/%') GROUP BY ALL ORDER BY n DESC"
    ),
}
