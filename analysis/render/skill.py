"""The skill report: the findings of analysis.experiments.skill in words, its figures and the
template (skill.html.j2), apart from the computation, as the balance report is."""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.ticker import PercentFormatter

from analysis.experiments.skill import BUDGET, Ladder, PositionBalance
from analysis.experiments.skill_analysis import Depth, Restricted, SkillAnalysis
from analysis.render import plots, templates
from analysis.render.figure import Image, axes, image, plt
from analysis.render.findings import degenerate_text
from analysis.render.formats import ordinal, p_is, pct, points, pvalue, rate
from analysis.render.page import write_html
from analysis.stats import ALPHA

__all__ = ["Finding", "findings", "ladder_findings", "depth_findings", "restricted_findings", "ladder_section",
           "render_html", "write_skill_report", "elo_text", "balance_figure", "draw_balance", "depth_figure", "restricted_figure", "ladder_figures"]


# ---- findings ----

@dataclass(frozen=True)
class Finding:
    section: str  # the report section holding the evidence
    text: str


def elo_text(e: tuple[float, float, float]) -> str:
    # A share of 0 or 1 has no finite Elo: its interval's finite end is what the data say.
    if math.isinf(e[0]):
        won = e[0] > 0
        return (f"an Elo difference beyond {e[1] if won else e[2]:+.0f} (the 95% CI's finite end: "
                f"it {'won' if won else 'lost'} every game)")
    return f"{e[0]:+.0f} Elo (95% CI {e[1]:+.0f} to {e[2]:+.0f})"


def ladder_findings(ladder: Ladder) -> list[Finding]:
    g, share = ladder.gap, ladder.gap.share
    out = []
    if share.p_value < ALPHA and share.value > 0.5:
        text = (f"Skill matters: {g.a} is ahead of {g.b} in {rate(share)} of their games, "
                f"{elo_text(g.elo)}.")
    elif share.p_value < ALPHA:
        text = (f"The ladder is upside down at its ends: {g.a} is ahead of {g.b} in only "
                f"{rate(share)} of their games.")
    else:
        text = (f"Skill does not show: {g.a} is ahead of {g.b} in {rate(share)} of their games, "
                "not significantly different from 50%: luck decides between these bots.")
    out.append(Finding("skill-ladder", text))
    for h, q in zip(ladder.pairs, ladder.pair_q, strict=True):
        # h.a is the rung listed higher: a significant share below 50% breaks the order.
        if q < ALPHA and h.share.value < 0.5:
            out.append(Finding("skill-ladder", f"Out of order: {h.a}, listed as stronger, is ahead of {h.b} "
                                               f"in only {rate(h.share)} of their games ({p_is(q, 'q')})."))
    if ladder.balance is None:
        return out
    b = ladder.balance
    out += [Finding("skill-balance", text) for rung, rates in zip(b.rungs, b.win, strict=True)
            if (text := degenerate_text(rung, b.players, rates)) is not None]
    moved = [s for s in b.shifts if s.significant]
    for s in moved:
        r0, r1 = b.win[0][s.position], b.win[b.rungs.index(s.rung)][s.position]
        out.append(Finding("skill-balance", (
            f"The balance depends on skill: the {ordinal(s.position)} wins {pct(r1.value)} of {s.rung} "
            f"mirror matches against {pct(r0.value)} of {b.rungs[0]} ones, "
            f"{points(s.diff.value, s.diff.low, s.diff.high)}, {p_is(s.q_value, 'q')}.")))
    if not moved:
        n = len(b.shifts)
        out.append(Finding("skill-balance", (
            "The position balance does not depend significantly on skill: no rung's win rates by position "
            f"differ from {b.rungs[0]}'s (Benjamini–Hochberg over {n} comparison{'s' if n > 1 else ''}).")))
    return out


def depth_findings(d: Depth) -> list[Finding]:
    if d.depth == 0:
        # Not significant is not "no skill": say how far the interval reaches instead.
        first = d.steps[0].h2h
        games = int(np.sum(~np.isnan(first.per_game)))
        verdict = (f"the first doubling is not shown to win more than half its games ({rate(first.share)} "
                   f"of {games:,}); more games would say whether more thinking pays or luck decides there")
    else:
        verdict = f"each of the first {d.depth} doublings wins significantly more than half its games"
    return [Finding("skill-depth", f"Skill depth {d.depth} of {len(d.steps)} doublings from {d.base}: "
                                   f"{verdict}; summed excess over 50% {points(*d.excess)}.")]


def restricted_findings(r: Restricted) -> list[Finding]:
    out = []
    for c in (c for c in r.components if c.significant):
        if c.drop[0] > 0:
            cost = points(*c.drop).lstrip("+")  # a cost needs no sign
            text = (f"{c.component} matters to {r.bot}: never taking it costs {cost} of win share "
                    f"({p_is(c.q_value, 'q')}).")
        else:
            text = (f"{r.bot} does better never taking {c.component}: "
                    f"{points(-c.drop[0], -c.drop[2], -c.drop[1])} of win share ({p_is(c.q_value, 'q')}); "
                    "it overvalues it.")
        out.append(Finding("skill-restricted", text))
    if not out:
        out.append(Finding("skill-restricted", f"No component's removal changes {r.bot}'s win share "
                                               f"significantly ({len(r.components)} tested, Benjamini–Hochberg)."))
    return out


def findings(a: SkillAnalysis) -> list[Finding]:
    out = ladder_findings(a.ladder)
    if a.depth is not None:
        out += depth_findings(a.depth)
    if a.restricted is not None:
        out += restricted_findings(a.restricted)
    return out


# ---- figures ----

def _palette():
    return sns.color_palette("colorblind")


def _errors(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    return np.clip(np.vstack([values - low, high - values]), 0, None)


def draw_balance(b: PositionBalance, ax: Axes | None = None) -> Axes:
    """Win rate by position, one group per position, one bar per rung."""


    ax = axes(ax, (plots.WIDTH, 1.6 + 0.35 * b.players * len(b.rungs)))
    width = 0.8 / len(b.rungs)
    for r, rung in enumerate(b.rungs):
        rates = b.win[r]
        y = np.arange(b.players) + r * width
        v = np.array([x.value for x in rates])
        ax.barh(y, v, height=width, label=rung, color=_palette()[r % 10],
                xerr=_errors(v, np.array([x.low for x in rates]), np.array([x.high for x in rates])),
                error_kw={"ecolor": "black", "capsize": 3, "lw": 1})
    ax.set_yticks(np.arange(b.players) + 0.4 - width / 2, [ordinal(p) for p in range(b.players)])
    ax.invert_yaxis()
    ax.axvline(1 / b.players, color="black", ls="--", lw=1)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("win rate in mirror matches (dashed: fair share)")
    # The legend sits between the title and the axes: the title clears its rows.
    ncol = min(len(b.rungs), 4)
    ax.set_title("Win rate by turn position at each rung (95% Wilson intervals)",
                 pad=8 + 14 * math.ceil(len(b.rungs) / ncol))
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=ncol, frameon=False)
    return ax


def balance_figure(b: PositionBalance) -> Image:
    return image(draw_balance(b).figure, "win rate by turn position at each rung of the ladder")


def depth_figure(d: Depth) -> Image:


    fig, ax = plt.subplots(figsize=(plots.WIDTH, 3.2))
    x = np.arange(len(d.steps))
    v = np.array([s.h2h.share.value for s in d.steps])
    low = np.array([s.h2h.share.low for s in d.steps])
    high = np.array([s.h2h.share.high for s in d.steps])
    ax.errorbar(x, v, yerr=_errors(v, low, high), fmt="o-", color=_palette()[0], ecolor="black", capsize=4)
    ax.axhline(0.5, color="black", ls="--", lw=1)
    ax.set_xticks(x, [f"{s.budget} vs {s.budget // 2}" for s in d.steps], rotation=30 if len(x) > 5 else 0)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel(f"{BUDGET}: budget against half of it")
    ax.set_ylabel("ahead share of the doubled budget")
    ax.set_title("Skill trace: each doubling against the budget below (95% Wilson intervals)")
    return image(fig, "skill trace over doubling budgets")


def restricted_figure(r: Restricted) -> Image:


    fig, ax = plt.subplots(figsize=(plots.WIDTH, 1.4 + 0.3 * len(r.components)))
    y = np.arange(len(r.components))
    v = np.array([c.drop[0] for c in r.components])
    err = _errors(v, np.array([c.drop[1] for c in r.components]), np.array([c.drop[2] for c in r.components]))
    sig = np.array([c.significant for c in r.components])
    for mask, color, label in ((sig, _palette()[3], "significant (BH q < 0.05)"), (~sig, "grey", "not significant")):
        if mask.any():
            ax.errorbar(v[mask], y[mask], xerr=err[:, mask], fmt="o", color=color, ecolor=color, capsize=3, label=label)
    ax.set_yticks(y, [c.component for c in r.components])
    ax.invert_yaxis()
    ax.axvline(0, color="black", lw=1)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("drop in win share when never taking the component (percentage points)")
    ax.set_title(f"Restricted play: importance of each component to {r.bot} (95% paired intervals)", pad=22)
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    return image(fig, "importance of each component by restricted play")


def ladder_figures(ladder: Ladder) -> dict[str, Image | None]:
    ratings = ladder.ratings
    return {
        "ratings": image(plots.strategy_ratings(ratings), "ratings of the ladder's rungs") if ratings else None,
        "matchups": image(plots.matchup_matrix(ladder.matchups), "head-to-head matrix of the ladder"),
        "balance": balance_figure(ladder.balance) if ladder.balance else None,
    }


# ---- the report ----

def _environment():
    return templates(filters={"pct": pct, "rate": rate, "pvalue": pvalue, "elo": elo_text},
                     names={"points": points, "ordinal": ordinal})


def ladder_section(ladder: Ladder) -> str:
    """The skill-ladder section alone (findings, ratings, head-to-head, balance by
    skill) as an HTML fragment for another report, e.g. the balance report over
    analyze_ladder(its run directories); it uses that report's styles."""
    return _environment().get_template("skill.html.j2").render(
        standalone=False, a=None, ladder=ladder, findings=ladder_findings(ladder),
        figures=ladder_figures(ladder), depth_figure=None, restricted_figure=None)


def render_html(a: SkillAnalysis) -> str:
    return _environment().get_template("skill.html.j2").render(
        standalone=True, a=a, ladder=a.ladder, findings=findings(a), figures=ladder_figures(a.ladder),
        depth_figure=depth_figure(a.depth) if a.depth else None,
        restricted_figure=restricted_figure(a.restricted) if a.restricted else None,
        created=datetime.now(UTC).isoformat(timespec="seconds"))


def write_skill_report(a: SkillAnalysis, html: Path | str, pdf: Path | str | None = None) -> None:
    write_html(html, render_html(a), pdf)  # rendered before anything is written
