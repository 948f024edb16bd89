"""The tool graph (networkx) and the bundle sampler.

Nodes are tools. Edges join tools of one domain or server (`domain`), and tools where an
output field of one can feed an input of the other by name and type (`io`, weighted by how
rare the field is, so `id` or `status` do not join everything). Bundles are drawn by
random walks with restart, favouring tools that earlier bundles used less so coverage
grows, mixing real and synthetic tools at the configured ratio where the graph allows.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterable

import networkx as nx

from worldsmith.config import BundleConfig
from worldsmith.records import Bundle, ToolSpec, content_id

MAX_FIELD_FANOUT = 200  # a field shared by more tools than this is too generic to link them


def _fields(schema: dict | None) -> set[tuple[str, str]]:
    props = (schema or {}).get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return set()
    out = set()
    for name, sub in props.items():
        typ = sub.get("type") if isinstance(sub, dict) else None
        out.add((name.lower(), typ if isinstance(typ, str) else "any"))
    return out


def tool_group(t: ToolSpec) -> str:
    """A tool's world when code runs it (an evolved, pack or bound crawled tool), else its domain or server."""
    if t.binding is not None and t.binding.executed:
        return t.binding.world_id
    return t.domain or t.server or t.source


def _kind(t: ToolSpec) -> str:
    """world: code runs it in a world (evolved, pack, bound crawled); simulated: a crawled tool without one."""
    return "world" if t.binding is not None and t.binding.executed else "simulated" if t.source == "mcp" else "world"


def build_graph(tools: Iterable[ToolSpec]) -> nx.Graph:
    tools = sorted(tools, key=lambda t: t.tool_id)
    g = nx.Graph()
    for t in tools:
        g.add_node(
            t.tool_id,
            name=t.name,
            source=t.source,
            group=tool_group(t),
            category=t.category or "uncategorised",
            kind=_kind(t),
        )
    groups: dict[str, list[str]] = defaultdict(list)
    for t in tools:
        groups[tool_group(t)].append(t.tool_id)
    for members in groups.values():
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                g.add_edge(a, b, weight=1.0, kind="domain")
    consumers: dict[tuple[str, str], list[str]] = defaultdict(list)
    # fields in sorted order: a set's order changes with PYTHONHASHSEED, and the order edges are
    # added is the neighbour order the walks follow, so a resumed run would draw other bundles
    for t in tools:
        for f in sorted(_fields(t.input_schema)):
            consumers[f].append(t.tool_id)
    for t in tools:
        for f in sorted(_fields(t.output_schema)):
            users = consumers.get(f, [])
            if not users or len(users) > MAX_FIELD_FANOUT:
                continue
            w = 2.0 / math.log(2 + len(users))
            for u in users:
                if u == t.tool_id:
                    continue
                if g.has_edge(t.tool_id, u):
                    g[t.tool_id][u]["weight"] += w
                    g[t.tool_id][u]["kind"] = "domain+io" if g[t.tool_id][u]["kind"].startswith("domain") else "io"
                else:
                    g.add_edge(t.tool_id, u, weight=w, kind="io")
    return g


def _weighted_choice(rng: random.Random, items: list[str], weights: list[float]) -> str:
    return rng.choices(items, weights=weights, k=1)[0]


def sample_bundles(
    g: nx.Graph,
    cfg: BundleConfig,
    seed: int,
    usage: Counter | None = None,
    partners: dict[str, set[str]] | None = None,
) -> list[Bundle]:
    """Draw `cfg.count` bundles; deterministic for a seed and a graph. With `partners` (tool -> the tools it makes
    a chain with, `chain_partners`), a bundle whose world has a chain but whose walk took none gets a partner of
    one of its tools, so dependent_calls tasks have a chain to be drawn on."""
    rng = random.Random(seed)
    usage = usage if usage is not None else Counter()
    nodes = sorted(g.nodes)
    if not nodes:
        return []
    bundles: list[Bundle] = []
    seen: set[tuple[str, ...]] = set()
    crawled = [n for n in nodes if g.nodes[n]["kind"] == "world" and g.nodes[n]["source"] == "mcp"]
    worlds_used: Counter = Counter()  # bundles per world so far: the next starts in a world used least
    for b in range(cfg.count):
        # every bundle is drawn on one world; crawled_share of them on worlds inferred from crawled servers
        on_crawled = bool(crawled) and _crawled_turn(b, cfg.crawled_share)
        for _attempt in range(8):
            size = rng.randint(cfg.size_min, cfg.size_max)
            want_real = 0 if on_crawled else round(size * cfg.real_ratio)
            members = _walk(g, rng, nodes, usage, size, want_real, cfg.walk_restart, on_crawled, worlds_used)
            if partners is not None:
                members = _with_chain(g, rng, members, partners, cfg.size_max)
            key = tuple(sorted(members))
            if len(members) >= cfg.size_min and key not in seen:
                break
        else:
            continue
        seen.add(key)
        groups = Counter(g.nodes[m]["group"] for m in members)
        domain = groups.most_common(1)[0][0]
        distractors = _distractors(g, rng, members, usage, cfg.distractors, cfg.distractor_sources)
        for m in members:
            usage[m] += 1
        worlds_used[g.nodes[members[0]]["group"]] += 1
        bundles.append(
            Bundle(
                bundle_id=content_id(seed, b, key, prefix="bun_"),
                tool_ids=members,
                distractor_ids=distractors,
                domain=domain,
                sources=[g.nodes[m]["source"] for m in members],
                seed=seed,
            )
        )
    return bundles


def chain_partners(pairs: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    """Tool id -> the tool ids it makes a chain with, either way round (pairs from `chain_pairs`)."""
    out: dict[str, set[str]] = defaultdict(set)
    for a, b in pairs:
        out[a].add(b)
        out[b].add(a)
    return dict(out)


def _with_chain(
    g: nx.Graph, rng: random.Random, members: list[str], partners: dict[str, set[str]], size_max: int
) -> list[str]:
    """`members`, made to hold a chain when no two of them make one: a partner of one of them added (below
    size_max) or in place of another member; when none has a partner (a pack's custom actions), a chain of
    their world after the walk's first tool. As they were when they hold one, or their world has none."""
    if any(partners.get(m, set()) & set(members) for m in members):
        return members
    options = sorted((m, p) for m in members for p in partners.get(m, ()) if p not in members)
    if options:
        anchor, partner = rng.choice(options)
        if len(members) < size_max:
            return [*members, partner]
        out = list(members)
        out[max(i for i, m in enumerate(out) if m != anchor)] = partner  # the last member that is not the anchor
        return out
    world = g.nodes[members[0]]["group"]
    chains = sorted((a, b) for a in partners for b in partners[a] if a < b and g.nodes[a]["group"] == world)
    if not chains:
        return members
    a, b = rng.choice(chains)
    return [members[0], a, b] if size_max >= 3 and members[0] not in (a, b) else [a, b]


def _crawled_turn(index: int, share: float) -> bool:
    """Whether bundle `index` is drawn on a crawled server's world: evenly spread, share of them."""
    return int((index + 1) * share + 1e-9) > int(index * share + 1e-9)


def _walk(g, rng, nodes, usage, size, want_real, restart, on_crawled=False, worlds_used=None) -> list[str]:
    """Random walk with restart; when the walk needs a simulated crawled tool (or a world's tool)
    and none is adjacent, it jumps to one of the same category, so bundles mix as configured.
    A walk starts at a world's tool (a crawled server's when `on_crawled`, else an evolved or a
    pack's) in one of the worlds `worlds_used` counts least (bundles spread over the worlds before
    any world gets a second: a world with many tools would otherwise draw most walks), and the
    world's tools it takes stay in that world: the agent's tasks are drawn there."""
    real = [n for n in nodes if g.nodes[n]["kind"] == "simulated"]
    synthetic = [n for n in nodes if g.nodes[n]["kind"] == "world" and (g.nodes[n]["source"] == "mcp") == on_crawled]
    pool = synthetic or real
    if worlds_used is not None and synthetic:
        fewest = min(worlds_used[g.nodes[n]["group"]] for n in pool)
        pool = [n for n in pool if worlds_used[g.nodes[n]["group"]] == fewest]
    start = _weighted_choice(rng, pool, [1.0 / (1 + usage[n]) for n in pool])
    category, world = g.nodes[start]["category"], g.nodes[start]["group"]
    synthetic = [n for n in synthetic if g.nodes[n]["group"] == world] or synthetic
    synthetic_set = set(synthetic) if g.nodes[start]["kind"] == "world" else set(nodes)
    members = [start]
    current = start
    for _ in range(size * 30):
        if len(members) >= size:
            break
        n_real = sum(g.nodes[m]["kind"] == "simulated" for m in members)
        need_real = n_real < want_real
        need_synthetic = len(members) - n_real < size - want_real
        # the quota is strict: a real tool only while real ones are wanted (real_ratio 0: none at all)
        neighbours = [
            n
            for n in g.neighbors(current)
            if n not in members
            and (need_real if g.nodes[n]["kind"] == "simulated" else need_synthetic and n in synthetic_set)
        ]
        if not neighbours:
            jump = [n for n in (real if need_real and not need_synthetic else synthetic) if n not in members]
            if need_real and need_synthetic:
                jump += [n for n in real if n not in members]
            same = [n for n in jump if g.nodes[n]["category"] == category]
            jump = same or jump
            if not jump:
                break
            current = _weighted_choice(rng, jump, [1.0 / (1 + usage[n]) for n in jump])
            members.append(current)
            continue
        if rng.random() < restart:
            current = rng.choice(members)
            continue
        weights = []
        for n in neighbours:
            w = g[current][n]["weight"] / (1 + usage[n])
            w *= 3.0 if (g.nodes[n]["kind"] == "simulated") == need_real else 1.0
            weights.append(w)
        current = _weighted_choice(rng, neighbours, weights)
        members.append(current)
    return members


def _distractors(g, rng, members, usage, k, sources=("mcp", "evolved", "seed")) -> list[str]:
    if k <= 0:
        return []
    groups = {g.nodes[m]["group"] for m in members}
    near = set(members).union(*(set(g.neighbors(m)) for m in members))
    pool = sorted(
        n for n in g.nodes if g.nodes[n]["group"] not in groups and n not in near and g.nodes[n]["source"] in sources
    )
    out: list[str] = []
    while pool and len(out) < k:
        pick = _weighted_choice(rng, pool, [1.0 / (1 + usage[n]) for n in pool])
        out.append(pick)
        pool.remove(pick)
    return out


def coverage(tools: Iterable[ToolSpec], bundles: Iterable[Bundle]) -> dict[str, float]:
    """Share of tools that appear in at least one bundle, overall and per source."""
    used = {t for b in bundles for t in b.tool_ids}
    by_source: dict[str, list[bool]] = defaultdict(list)
    for t in tools:
        by_source[t.source].append(t.tool_id in used)
        by_source["all"].append(t.tool_id in used)
    return {s: round(sum(v) / len(v), 4) for s, v in sorted(by_source.items()) if v}
