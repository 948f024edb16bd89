"""How many crawled MCP tools bind to code semantics (worldmodel/infer.py), by server, and why
the rest do not. Writes benchmarks/results/binding_coverage.json.

    .venv/bin/python benchmarks/binding_coverage.py
"""

from __future__ import annotations

import json
from pathlib import Path

from worldsmith.mcp.snapshot import load_snapshot_specs
from worldsmith.worldmodel.infer import binding_coverage, infer_worlds

ROOT = Path(__file__).resolve().parents[1]
TODAY = "2025-06-01"


def main() -> None:
    tools = load_snapshot_specs(ROOT / "tool_specs" / "crawled", ROOT / "tool_specs" / "servers.yaml")
    out = {}
    for name, kw in (
        ("default", {}),
        ("no_cluster", {"cluster": False}),
    ):
        inferred = infer_worlds(tools, TODAY, **kw)
        cov = binding_coverage(inferred, tools)
        if name != "default":
            cov = {k: v for k, v in cov.items() if k != "by_server"}
        out[name] = cov
        print(name, {k: v for k, v in cov.items() if k not in ("by_server", "unbound_reasons")})
    out["default"]["clusters"] = [w.servers for w in infer_worlds(tools, TODAY) if len(w.servers) > 1]
    path = ROOT / "benchmarks" / "results" / "binding_coverage.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=False) + "\n")
    print("wrote", path.relative_to(ROOT))


if __name__ == "__main__":
    main()
