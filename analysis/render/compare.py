"""The comparison report: analysis.experiments.compare's paired changes in words (one
sentence per verdict), a forest plot per variant and the HTML page."""
from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes

from analysis import stats
from analysis.experiments.compare import DEFAULT_MARGIN, Comparison, Row
from analysis.metrics import LEAD_CHANGES
from analysis.render import templates
from analysis.render.figure import axes, inline, plt, svg
from analysis.render.formats import pvalue
from analysis.render.page import write_html

__all__ = ["sentence", "verdicts", "render_compare", "write_compare", "forest_rows", "draw_forest"]


# ---- verdicts ----

def _num(x: float, digits: int = 1) -> str:
    return f"{x:,.{digits}f}".replace("-", "−")


def _ci(row: Row, digits: int = 1) -> str:
    s = row.metric.scale
    return f"95% CI {_num(row.change.low * s, digits)} to {_num(row.change.high * s, digits)}"


def _unit(row: Row) -> str:
    return {"turns": "turns", "score": "score points", "changes": "lead changes",
            "count": ""}.get(row.metric.unit, row.metric.unit)


def _digits(row: Row) -> int:
    """Decimals enough that the interval's two ends differ (1 to 3)."""
    half = stats.Z95 * row.change.se * row.metric.scale
    if not half > 0:
        return 2 if abs(row.change.value * row.metric.scale) < 1 else 1
    least = 2 if row.metric.unit == "percentage points" else 1  # a rate's change in tenths says little
    return min(3, max(least, -math.floor(math.log10(half))))


def sentence(row: Row, label: str) -> str:
    """One significant change as a sentence."""
    m, s = row.metric, row.metric.scale
    v = row.change.value * s
    d = _digits(row)
    size = f"{_num(abs(v), d)} {_unit(row)}".strip()
    if m.key == "turns":
        verb = "lengthens" if v > 0 else "shortens"
        return f"{label} {verb} the game by {size} ({_ci(row, d)})."
    verb = "raises" if v > 0 else "lowers"
    return (f"{label} {verb} the {m.label} by {size} ({_ci(row, d)}), "
            f"from {_num(row.base * s, d)} to {_num(row.variant * s, d)}.")


def verdicts(c: Comparison) -> list[str]:
    """One-sentence verdicts: the most certain change, then seat balance (changed, or
    unchanged within the comparison's margin, or not ruled out), then the other changes,
    then the components that moved."""
    margin = c.margin
    def certainty(r: Row) -> float:
        return -abs(r.change.value) / max(r.change.se, 1e-300)

    sig = sorted((r for r in c.rows if r.significant and r.metric.group != "components"), key=certainty)
    other = [r for r in sig if r.metric.group != "seat balance"]
    seat = [r for r in c.rows if r.metric.group == "seat balance"]
    out = [sentence(r, c.label) for r in other[:1]]
    if any(r.significant for r in seat):
        out += [sentence(r, c.label) for r in sig if r.metric.group == "seat balance"]
    elif seat:
        widest = max(max(abs(r.change.low), abs(r.change.high)) * 100 for r in seat)
        if widest <= margin:
            out.append(f"{c.label} leaves seat balance unchanged within ±{_num(margin, 1)} percentage points "
                       f"(every position's win-rate change has its 95% interval inside; "
                       f"largest bound {_num(widest, 2)}).")
        else:
            out.append(f"{c.label}: no significant change in seat balance, but changes of up to "
                       f"{_num(widest, 2)} percentage points are not ruled out (margin ±{_num(margin, 1)}: "
                       "play more games to claim it unchanged).")
    out += [sentence(r, c.label) for r in other[1:]]
    moved = [r for r in c.rows if r.significant and r.metric.group == "components"]
    if moved:
        out.append(f"{c.label} moves {len(moved)} component measure(s): "
                   + "; ".join(f"{r.metric.label} {'+' if r.change.value > 0 else '−'}"
                               f"{_num(abs(r.change.value * r.metric.scale), _digits(r))}" for r in moved[:4])
                   + ("…" if len(moved) > 4 else "") + ".")
    if not any(r.significant for r in c.rows):
        out.insert(0, f"{c.label}: no significant change in any of the {len(c.rows)} metrics "
                      "(false-discovery rate 5%).")
    return out


# ---- report ----

def forest_rows(c: Comparison) -> list[Row]:
    """The rows of the forest plot: every rate, and the significant effects."""
    rows = [r for r in c.rows if r.metric.unit == "percentage points" and r.metric.group != "components"]
    return rows + [r for r in c.rows if r.metric.key.startswith("effect:") and r.significant]


def draw_forest(c: Comparison, ax: Axes | None = None) -> Axes:
    """Changes of every rate (in percentage points) with 95% intervals."""
    rows = forest_rows(c)
    ax = axes(ax, (7.6, 0.8 + 0.3 * len(rows)))
    y = np.arange(len(rows))[::-1]
    v = np.array([r.change.value * 100 for r in rows])
    lo = np.array([r.change.low * 100 for r in rows])
    hi = np.array([r.change.high * 100 for r in rows])
    colors = ["#b2182b" if r.significant else "#4d4d4d" for r in rows]
    ax.hlines(y, lo, hi, colors=colors, lw=1.5)
    ax.scatter(v, y, c=colors, zorder=3, s=14)
    ax.axvline(0, color="#888", lw=0.8)
    ax.set_yticks(y, [r.metric.label[:48] for r in rows], fontsize=8)
    ax.set_xlabel("variant − base, percentage points (95% CI; red: significant, FDR 5%)", fontsize=8)
    ax.set_title(f"{c.label}: changes of the rates", fontsize=10)
    return ax


def _forest_svg(c: Comparison) -> str:
    """The forest plot as an inline SVG."""
    plt.rcParams["svg.fonttype"] = "none"
    return inline(svg(draw_forest(c).figure, tight=False))


def _context(comparisons: list[Comparison], margin: float) -> dict[str, Any]:
    items = []
    for c in comparisons:
        rows = []
        for r in c.rows:
            d = _digits(r)
            rows.append({"group": r.metric.group, "label": r.metric.label, "unit": _unit(r),
                         "base": _num(r.shown(r.base), 2), "variant": _num(r.shown(r.variant), 2),
                         "change": _num(r.shown(r.change.value), d),
                         "ci": f"{_num(r.shown(r.change.low), d)} to {_num(r.shown(r.change.high), d)}",
                         "q": pvalue(r.q_value), "significant": r.significant,
                         "saved": f"{r.change.games_saved:.2f}×" if math.isfinite(r.change.games_saved) else "–"})
        key = [r for r in c.rows if r.metric.key in ("pos0", "turns", "score")]
        saving = [{"label": r.metric.label, "paired": _num(r.shown(r.change.se), 4),
                   "unpaired": _num(r.shown(r.change.se_unpaired), 4),
                   "factor": f"{r.change.games_saved:.2f}",
                   "equivalent": f"{c.games * r.change.games_saved:,.0f}"}
                  for r in key if c.paired and math.isfinite(r.change.games_saved)]
        moved = [x for x in rows if x["group"] == "components" and x["significant"]]
        items.append({"label": c.label, "paired": c.paired, "games": f"{c.games:,}",
                      "base": str(c.base.path), "variant": str(c.variant.path),
                      "verdicts": verdicts(c), "svg": _forest_svg(c),
                      "rows": [x for x in rows if x["group"] != "components"],
                      "moved": moved,
                      "still": sum(1 for x in rows if x["group"] == "components") - len(moved),
                      "saving": saving})
    base = comparisons[0].base
    return {"title": f"{base.manifest.get('game')}: {len(comparisons)} variant(s) against {base.path.name}",
            "items": items, "margin": _num(margin, 1), "base": str(base.path),
            "base_seats": ", ".join(s.get("spec", "?") for s in base.manifest.get("strategies", [])),
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "unpaired": not comparisons[0].paired,
            "lead_changes": LEAD_CHANGES if any(r.metric.key == "lead_changes" for c in comparisons for r in c.rows)
            else None}


def render_compare(comparisons: list[Comparison], margin: float = DEFAULT_MARGIN) -> str:
    return templates(trim=False).get_template("compare.html.j2").render(**_context(comparisons, margin))


def write_compare(comparisons: list[Comparison], html: Path | str, pdf: Path | str | None = None,
                  margin: float = DEFAULT_MARGIN) -> None:
    write_html(html, render_compare(comparisons, margin), pdf)
