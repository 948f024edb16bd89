"""Plots as inline SVG (matplotlib, Agg): the run report's and the eval report's figures."""

from __future__ import annotations

import io
from typing import Any


def svg(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]


def bars(
    rows: list[dict[str, Any]],
    title: str,
    xlabel: str,
    value: str = "n",
    stacked: str | None = None,
    rate: bool = False,
) -> str:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 0.45 * max(len(rows), 2) + 1.0))
    labels = [str(r["label"]) for r in rows][::-1]
    if rate:
        values = [(r[stacked] / r[value]) if r[value] else 0 for r in rows][::-1]
        ax.barh(labels, values, color="#4c78a8")
        ax.set_xlim(0, 1)
        for i, r in enumerate(rows[::-1]):
            ax.text(values[i] + 0.01, i, f"{r[stacked]}/{r[value]}", va="center", fontsize=8)
    else:
        values = [r[value] for r in rows][::-1]
        ax.barh(labels, values, color="#4c78a8")
        for i, v in enumerate(values):
            ax.text(v, i, f" {v}", va="center", fontsize=8)
    ax.set_title(title, loc="left", fontsize=11)
    ax.set_xlabel(xlabel)
    if not rows:
        ax.text(0.5, 0.5, "no data yet", ha="center", va="center", transform=ax.transAxes, color="#888")
    return svg(fig)


def hist(values: list[int], title: str, xlabel: str) -> str:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.6, 2.8))
    if values:
        top = max(values)
        ax.hist(values, bins=range(0, top + 2), color="#72b7b2", edgecolor="white", align="left")
    else:
        ax.text(0.5, 0.5, "no data yet", ha="center", va="center", transform=ax.transAxes, color="#888")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(title, loc="left", fontsize=11)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("trajectories")
    return svg(fig)


def funnel_steps(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each step's count and its share of the step before it (None for the first, or after a 0)."""
    out, prev = [], None
    for r in rows:
        n = int(r["n"] or 0)
        out.append({"label": str(r["label"]), "n": n, "share": (n / prev) if prev else None})
        prev = n
    return out


def funnel(rows: list[dict[str, Any]], title: str, xlabel: str = "records (log scale)") -> str:
    """A yield funnel on a log scale: on a linear one every step after ~1,500 tools is a sliver.
    Each bar is labelled with its count and its share of the step before."""
    import matplotlib.pyplot as plt

    steps = funnel_steps(rows)
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * max(len(steps), 2) + 1.0))
    labels = [s["label"] for s in steps][::-1]
    values = [s["n"] for s in steps][::-1]
    ax.set_xscale("log")
    # bars start at 0.8, not 0 (no log of 0): a step of 0 is an empty row with its label
    ax.barh(labels, [max(v, 0.8) - 0.8 for v in values], left=0.8, color="#4c78a8")
    top = max(values, default=1) or 1
    ax.set_xlim(0.8, top * 6)  # room for the labels right of the longest bar
    for i, s in enumerate(steps[::-1]):
        share = "" if s["share"] is None else f"  ({percent(s['share'])} of previous)"
        ax.text(max(s["n"], 0.8), i, f" {s['n']:,}{share}", va="center", fontsize=8)
    ax.set_title(title, loc="left", fontsize=11)
    ax.set_xlabel(xlabel)
    if not steps:
        ax.text(0.5, 0.5, "no data yet", ha="center", va="center", transform=ax.transAxes, color="#888")
    return svg(fig)


def percent(share: float) -> str:
    """A share as a percentage with the digits a small one needs (0.4%, not 0%)."""
    pct = 100 * share
    return f"{pct:.0f}%" if pct >= 10 or pct == 0 else f"{pct:.2g}%"
