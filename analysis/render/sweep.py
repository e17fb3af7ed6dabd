"""The sweep report: every metric of analysis.experiments.sweep against each swept param
with 95% bands, the 1st player's advantage over two params, the tables and the page."""
from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from analysis import stats
from analysis.experiments.sweep import SweepResult, numeric
from analysis.render import templates
from analysis.render.figure import inline, plt, svg
from analysis.render.formats import ordinal
from analysis.render.page import write_html

__all__ = ["figures", "sweep_figures", "render_sweep", "write_sweep"]


PLOTTED = (("pos", "win rate by turn position (%)"), ("turns", "game length (turns)"),
           ("score", "mean score"), ("margin", "score margin between the winner and the runner-up"),
           ("lead_changes", "lead changes per game"), ("shared", "shared victories (%)"))


def _svg(fig) -> str:
    return inline(svg(fig, tight=False))


def figures(result: SweepResult) -> list[tuple[str, str]]:
    """(caption, inline SVG) of every figure of sweep_figures."""
    plt.rcParams["svg.fonttype"] = "none"
    return [(caption, _svg(fig)) for caption, fig in sweep_figures(result)]


def sweep_figures(result: SweepResult) -> list[tuple[str, Figure]]:
    """(caption, figure): each metric against each param with 95% bands, and a heatmap
    of the 1st player's advantage over two params."""
    t = result.table
    out = []
    if t.height == 0:
        return out
    for lineup in t["lineup"].unique(maintain_order=True):
        lt = t.filter(pl.col("lineup") == lineup)
        for name in result.params:
            others = [k for k in result.params if k != name]
            xs_all = lt[name].unique(maintain_order=True).to_list()
            is_numeric = numeric(xs_all)
            shown = [(key, title) for key, title in PLOTTED
                     if lt.filter(pl.col("metric").str.starts_with(key)).height]
            fig, axes = plt.subplots(len(shown), 1, figsize=(7.6, 2.1 * len(shown)), squeeze=False)
            for ax, (key, title) in zip(axes[:, 0], shown):
                sel = lt.filter(pl.col("metric").str.starts_with(key) if key == "pos" else pl.col("metric") == key)
                group_cols = ["metric", *others]
                for (_, *rest), g in sel.group_by(group_cols, maintain_order=True):
                    g = g.sort(name)
                    x = g[name].to_list() if is_numeric else list(range(g.height))
                    label = g["label"][0] if key == "pos" else None
                    if rest:
                        label = ", ".join(filter(None, [label, ", ".join(f"{k}={v}" for k, v in zip(others, rest))]))
                    ax.plot(x, g["value"].to_list(), marker="o", ms=3, label=label)
                    ax.fill_between(x, g["low"].to_list(), g["high"].to_list(), alpha=0.2)
                if key == "pos":
                    ax.axhline(sel["fair"][0], color="#888", lw=0.8, ls="--")
                ax.set_ylabel(title, fontsize=8)
                if not is_numeric:
                    ax.set_xticks(range(len(xs_all)), [str(v) for v in xs_all])
                elif all(isinstance(v, int) for v in xs_all):  # a whole-number param never ticks at 3.5
                    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
                if ax.get_legend_handles_labels()[0]:
                    ax.legend(fontsize=7)
            axes[-1, 0].set_xlabel(name)
            fig.suptitle(f"{lineup}: metrics against {name} (95% bands)", fontsize=10)
            out.append((f"{lineup}: every metric against {name}, with 95% interval bands", fig))
        if len(result.params) == 2:
            a, b = result.params
            sel = lt.filter(pl.col("metric") == "pos0")
            xa = sel[a].unique(maintain_order=True).to_list()
            xb = sel[b].unique(maintain_order=True).to_list()
            grid_ = np.full((len(xb), len(xa)), np.nan)
            for r in sel.iter_rows(named=True):
                grid_[xb.index(r[b]), xa.index(r[a])] = r["value"] - r["fair"]
            fig, ax = plt.subplots(figsize=(7.6, 1.2 + 0.5 * len(xb)))
            lim = np.nanmax(np.abs(grid_)) or 1.0
            im = ax.imshow(grid_, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto", origin="lower")
            ax.set_xticks(range(len(xa)), [str(v) for v in xa])
            ax.set_yticks(range(len(xb)), [str(v) for v in xb])
            ax.set_xlabel(a)
            ax.set_ylabel(b)
            for (i, j), v in np.ndenumerate(grid_):
                if math.isfinite(v):
                    ax.text(j, i, f"{v:+.1f}", ha="center", va="center", fontsize=7)
            fig.colorbar(im, ax=ax, label=f"{ordinal(0)}'s advantage (percentage points)")
            ax.set_title(f"{lineup}: {ordinal(0)}'s win rate minus the fair share", fontsize=10)
            out.append((f"{lineup}: the {ordinal(0)}'s advantage over {a} and {b}", fig))
    return out


def render_sweep(result: SweepResult) -> str:
    env = templates(trim=False)
    key = result.table.filter(pl.col("group").is_in(["seat balance", "length", "scores", "quality", "outcomes"])) \
        if result.table.height else result.table
    return env.get_template("sweep.html.j2").render(
        r=result, figures=figures(result),
        refused=[p for p in result.points if p.refused],
        precision=[p for p in result.points if p.precision],
        columns=key.columns, rows=[[_fmt(v) for v in row] for row in key.rows()],
        fair=result.fair_points.to_dicts() if result.fair_points.height else [],
        neighbours=[r for r in result.neighbours.to_dicts() if r["q"] < stats.ALPHA] if result.neighbours.height else [],
        created=datetime.now(UTC).isoformat(timespec="seconds"))


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.2f}" if math.isfinite(v) else ("∞" if v > 0 else "−∞" if v < 0 else "–")
    return "–" if v is None else str(v)


def write_sweep(result: SweepResult, html: Path | str, pdf: Path | str | None = None) -> None:
    write_html(html, render_sweep(result), pdf)
