"""`worldsmith rollouts stats`: how episodes ended, their length, faults and tool executors."""

from __future__ import annotations

SECTIONS = {
    "trajectories by status": """
        SELECT status, split_part(coalesce(reason, ''), ':', 1) AS reason, count(*) AS n,
               round(avg(turns), 1) AS mean_turns, round(avg(tool_calls), 1) AS mean_tool_calls,
               round(avg(generated_tokens)) AS mean_tokens, round(avg(latency_s), 1) AS mean_s
        FROM trajectories WHERE run_id = $run GROUP BY ALL ORDER BY n DESC""",
    "by task difficulty": """
        SELECT t.difficulty, count(*) AS trajectories, count(*) FILTER (WHERE r.status = 'finished') AS finished,
               count(*) FILTER (WHERE r.status = 'error') AS errors, round(avg(r.tool_calls), 1) AS mean_tool_calls
        FROM trajectories r JOIN tasks t USING (run_id, task_id) WHERE r.run_id = $run
        GROUP BY ALL ORDER BY trajectories DESC""",
    "tool calls by executor": """
        SELECT c->>'executor' AS executor, (c->>'ok')::BOOLEAN AS ok, count(*) AS calls
        FROM (SELECT unnest(from_json(calls, '["JSON"]')) AS c FROM trajectories WHERE run_id = $run)
        GROUP BY ALL ORDER BY calls DESC""",
    "injected faults": """
        SELECT f->>'kind' AS kind, (f->>'forced')::BOOLEAN AS forced, count(*) AS n
        FROM (SELECT unnest(from_json(faults, '["JSON"]')) AS f FROM trajectories WHERE run_id = $run)
        GROUP BY ALL ORDER BY n DESC""",
    "errors (examples)": """
        SELECT split_part(reason, ':', 1) AS kind, count(*) AS n, any_value(left(reason, 140)) AS example
        FROM trajectories WHERE run_id = $run AND status = 'error' GROUP BY ALL ORDER BY n DESC""",
}
