"""`worldsmith judge stats`: why trajectories were dropped, which criteria fail most, and
how far the critic agrees with the deterministic checks."""

from __future__ import annotations

SECTIONS = {
    "verdicts": (
        "SELECT passed, count(*) AS n, round(avg(critic_score), 2) AS mean_critic_score "
        "FROM verdicts WHERE run_id = $run GROUP BY ALL"
    ),
    "pass@k by difficulty (k = samples per task; 0: the model's frontier, kept for later)": """
        WITH per_task AS (
            SELECT t.difficulty, v.task_id, count(*) AS k, count(*) FILTER (WHERE v.passed) AS passed
            FROM verdicts v JOIN tasks t USING (run_id, task_id) WHERE v.run_id = $run GROUP BY ALL)
        SELECT difficulty, count(*) AS tasks, max(k) AS k, round(avg(passed / k), 3) AS "pass@1",
               round(avg((passed > 0)::INT), 3) AS "pass@k", count(*) FILTER (WHERE passed = 0) AS unsolved
        FROM per_task GROUP BY ALL ORDER BY tasks DESC""",
    "reasons for dropping": """
        SELECT regexp_extract(r, '^[^:]+(:[^:]+)?') AS reason, count(*) AS n
        FROM (SELECT unnest(reasons) AS r FROM verdicts WHERE run_id = $run) GROUP BY ALL ORDER BY n DESC""",
    "criteria by kind": """
        SELECT c->>'kind' AS kind, c->>'source' AS source, count(*) AS n,
               count(*) FILTER (WHERE (c->>'passed')::BOOLEAN) AS passed
        FROM (SELECT unnest(from_json(criteria, '["JSON"]')) AS c FROM verdicts WHERE run_id = $run)
        GROUP BY ALL ORDER BY n DESC""",
    "critic vs deterministic": """
        SELECT c->>'kind' AS kind, count(*) AS pairs,
               round(avg(((c->>'passed')::BOOLEAN = (c->>'critic_passed')::BOOLEAN)::INT), 3) AS agreement
        FROM (SELECT unnest(from_json(criteria, '["JSON"]')) AS c FROM verdicts WHERE run_id = $run)
        WHERE c->>'source' = 'deterministic' AND c->>'critic_passed' IS NOT NULL GROUP BY ALL""",
    "hacks": """
        SELECT h->>'kind' AS kind, count(*) AS n, any_value(left(h->>'evidence', 100)) AS example
        FROM (SELECT unnest(from_json(hacks, '["JSON"]')) AS h FROM verdicts WHERE run_id = $run)
        GROUP BY ALL ORDER BY n DESC""",
}
