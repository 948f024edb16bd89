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


def bars(rows: list[dict[str, Any]], title: str, xlabel: str, value: str = "n", stacked: str | None = None, rate: bool = False) -> str:
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
