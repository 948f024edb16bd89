"""How varied the task generator's tasks are, by family, with no model in the loop: blueprints of
every family sampled on the six domain packs and on crawled-server worlds (seeded), their requests
worded by the request grammar (prompts/user_request.yaml) and, for comparison, by the one plain
template every request used before it. Figures by family: tasks, distinct call-chain shapes,
tools, worlds, request distinct-2 and near-duplicate rate (worldsmith/diversity.py). Three seeds
of the whole draw; the headline is the median and range. Writes benchmarks/results/task_diversity.json
and a plot.

    .venv/bin/python benchmarks/task_diversity.py
"""

from __future__ import annotations

import json
import random
import statistics
from pathlib import Path

from worldsmith.diversity import Diversity
from worldsmith.llm.prompts import Prompts
from worldsmith.mcp.snapshot import load_snapshot_specs
from worldsmith.records import Persona
from worldsmith.tasks.blueprint import BlueprintFailure, family_of, sample_blueprint
from worldsmith.tasks.requests import grammar_request
from worldsmith.tasks.stage import request_problems
from worldsmith.vocab import DIFFICULTIES
from worldsmith.worldmodel import catalog
from worldsmith.worldmodel.packs import load_packs

ROOT = Path(__file__).resolve().parents[1]
TODAY = "2026-03-02"
CRAWLED_WORLDS = 30
STYLES = ("brief", "casual", "formal", "chatty")


def worlds(seed: int):
    items = [(p.world, p.tools, "pack") for p in load_packs(ROOT / "worlds", None, today=TODAY)]
    specs = load_snapshot_specs(ROOT / "tool_specs/crawled", ROOT / "tool_specs/servers.yaml")
    by_id = {t.tool_id: t for t in specs}
    crawled = catalog.crawled(specs, TODAY, 3)
    for iw in random.Random(seed).sample(crawled, min(CRAWLED_WORLDS, len(crawled))):
        tools = [by_id[t].model_copy(update={"binding": b}) for t, b in iw.bindings.items()]
        items.append((iw.world, tools, "crawled"))
    return items


def one_draw(seed: int, grammar: dict) -> dict:
    worded, plain = Diversity(), Diversity()
    made, refused, failed = 0, 0, {}
    for i, (world, tools, _source) in enumerate(worlds(seed)):
        for difficulty in DIFFICULTIES:
            try:
                d = sample_blueprint(world, tools, difficulty, seed * 1000 + i)
            except BlueprintFailure as e:
                failed[e.reason] = failed.get(e.reason, 0) + 1
                continue
            made += 1
            chain = ">".join(
                "read" if s.tool.binding.action in ("get", "list") or s.tool.hints.readOnlyHint else "write"
                for s in d.steps
            )
            tool_ids = [s.tool.tool_id for s in d.steps]
            persona = Persona(communication=STYLES[(seed + i + len(difficulty)) % 4])
            request = grammar_request(grammar, d, persona, seed * 1000 + i) or ""
            if not request or request_problems(request, d):
                refused += 1
            family = family_of(d)
            worded.add(family, request, chain, tool_ids, world.world_id)
            plain.add(family, f"Hello, I would like to {d.goal}.", chain, tool_ids, world.world_id)
    return {
        "tasks": made,
        "grammar_requests_refused_by_the_check": refused,
        "no_blueprint": failed,
        "grammar": worded.rows(),
        "plain_template": plain.rows(),
    }


def main() -> None:
    grammar = Prompts(ROOT / "prompts").data("user_request")
    draws = {seed: one_draw(seed, grammar) for seed in (1, 2, 3)}
    total = {seed: {r["family"]: r for r in d["grammar"]}["all"] for seed, d in draws.items()}
    plain = {seed: {r["family"]: r for r in d["plain_template"]}["all"] for seed, d in draws.items()}

    def summary(rows: dict, key: str) -> dict:
        values = [r[key] for r in rows.values()]
        return {"median": statistics.median(values), "min": min(values), "max": max(values)}

    headline = {
        "tasks": summary(total, "items"),
        "families": {"median": statistics.median(len(d["grammar"]) - 1 for d in draws.values())},
        "chain_shapes": summary(total, "chain_shapes"),
        "distinct_2_grammar": summary(total, "distinct_2"),
        "distinct_2_plain_template": summary(plain, "distinct_2"),
        "near_duplicate_rate_grammar": summary(total, "near_duplicate_rate"),
        "near_duplicate_rate_plain_template": summary(plain, "near_duplicate_rate"),
    }
    out = {"headline": headline, "draws": draws}
    path = ROOT / "benchmarks" / "results" / "task_diversity.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    for k, v in headline.items():
        print(f"{k}: {v}")
    print("\nby family (seed 1, grammar):")
    for r in draws[1]["grammar"]:
        print("  ", r)
    _plot(draws[1], ROOT / "benchmarks" / "results" / "task_diversity.png")
    print("wrote", path.relative_to(ROOT))


def _plot(draw: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in draw["grammar"] if r["family"] != "all"]
    plain = {r["family"]: r for r in draw["plain_template"]}
    names = [r["family"] for r in rows]
    x = range(len(rows))
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4))
    a.bar([i - 0.2 for i in x], [r["distinct_2"] for r in rows], 0.4, label="request grammar")
    a.bar([i + 0.2 for i in x], [plain[n]["distinct_2"] for n in names], 0.4, label="one plain template")
    a.set_title("request distinct-2 by family (higher: more varied)")
    b.bar([i - 0.2 for i in x], [r["near_duplicate_rate"] for r in rows], 0.4, label="request grammar")
    b.bar([i + 0.2 for i in x], [plain[n]["near_duplicate_rate"] for n in names], 0.4, label="one plain template")
    b.set_title("request near-duplicate rate by family (lower: fewer copies)")
    for ax in (a, b):
        ax.set_xticks(list(x), names, rotation=40, ha="right", fontsize=8)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
