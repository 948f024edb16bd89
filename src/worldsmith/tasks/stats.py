"""`worldsmith tasks stats`: tasks by difficulty, criteria by kind, how much is machine-checkable."""

from __future__ import annotations

SECTIONS = {
    "tasks by difficulty": (
        "SELECT difficulty, count(*) AS tasks FROM tasks WHERE run_id = $run GROUP BY ALL ORDER BY tasks DESC"
    ),
    "criteria by kind": """
        SELECT c->>'kind' AS kind, count(*) AS criteria,
               count(*) FILTER (WHERE (c->>'must')::BOOLEAN IS FALSE) AS must_not
        FROM (SELECT unnest(from_json(rubric->'criteria', '["JSON"]')) AS c FROM tasks WHERE run_id = $run)
        GROUP BY ALL ORDER BY criteria DESC""",
    "machine-checkable share": """
        SELECT count(*) AS criteria,
               count(*) FILTER (WHERE c->>'kind' IN ('state', 'call', 'answer')) AS machine_checkable,
               round(count(*) FILTER (WHERE c->>'kind' IN ('state', 'call', 'answer')) / count(*), 3) AS share
        FROM (SELECT unnest(from_json(rubric->'criteria', '["JSON"]')) AS c FROM tasks WHERE run_id = $run)""",
    "rejected tasks and failed calls": """
        SELECT kind, reason, count(*) AS n, any_value(left(detail, 100)) AS example FROM rejections
        WHERE run_id = $run AND (kind = 'task' OR subject LIKE 'task/%' OR subject LIKE 'agent/%')
        GROUP BY ALL ORDER BY n DESC""",
    "agents": (
        "SELECT strictness, style, count(*) AS agents, round(avg(len(tool_ids)), 1) AS mean_tools "
        "FROM agents WHERE run_id = $run GROUP BY ALL ORDER BY agents DESC"
    ),
}
