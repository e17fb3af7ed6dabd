"""The report's figures, each an SVG document as text (the report inlines it, so no
request ever leaves the page). Every figure has a title, labelled axes with units and
its 95% intervals drawn; sizes grow with the number of seats, strategies or features
so labels never overlap."""
from __future__ import annotations

import textwrap

import numpy as np
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.ticker import MaxNLocator, PercentFormatter

from analysis.metrics import Histogram, Outcomes, PositionBalance, Quality, SeatBalance, Strategies
from analysis.ratings import Matchups, Ratings
from analysis.render.figure import axes, plt, svg
from analysis.render.formats import ordinal
from analysis.stats import Rate

__all__ = ["position_wins", "draw_position_wins", "draw_rates", "seat_wins", "seat_scores", "strategy_wins", "strategy_ratings",
           "matchup_matrix", "margins", "score_distribution", "game_length", "end_reasons", "components", "leader_wins",
           "lead_changes", "rate_range", "thin_labels"]

WIDTH = 7.6  # inches: the report's column at 96 dpi, so figures show at natural size
MAX_FEATURES = 40  # a forest plot taller than a page would be unreadable
_PALETTE = sns.color_palette("colorblind")
_LABEL_WIDTH = 28

sns.set_theme(style="whitegrid", palette="colorblind", font_scale=0.9)
plt.rcParams.update({"svg.fonttype": "none", "figure.dpi": 100, "axes.titleweight": "bold",
                     "axes.titlesize": 11})


def _short(text: str, width: int = 18) -> str:
    """Cut by characters: specs like heuristic(a=1, b=2) have few word breaks."""
    return text if len(text) <= width else text[:width - 1] + "…"


def _label(text: str) -> str:
    return "\n".join(textwrap.wrap(text, _LABEL_WIDTH, break_long_words=True)) or text


def _errors(rates: list[Rate]) -> np.ndarray:
    values = np.array([r.value for r in rates])
    # At a rate of exactly 0 or 1 the interval end can differ from it by a rounding error.
    return np.clip(np.vstack([values - [r.low for r in rates], [r.high for r in rates] - values]), 0, None)


def rate_range(rates: list[Rate], fair: float | None) -> tuple[float, float]:
    """The x range of a rate plot: zoomed to the intervals (and the fair share) with a
    margin, so a 2-point gap shows; the whole 0-100% when the rates span most of it."""
    ends = [x for r in rates for x in (r.low, r.high) if np.isfinite(x)] + ([fair] if fair is not None else [])
    if not ends:
        return 0.0, 1.0
    lo, hi = min(ends), max(ends)
    pad = max(0.15 * (hi - lo), 0.005)
    lo, hi = max(0.0, lo - pad), min(1.0, hi + pad)
    return (0.0, 1.0) if hi - lo > 0.6 else (lo, hi)


def thin_labels(labels: list[str], most: int = 12) -> list[str]:
    """Every k-th label counted back from the last (which is kept: a final checkpoint or
    "result"), blank between, so at most `most` show and none crowd each other."""
    step = max(1, -(-len(labels) // most))
    return [t if (len(labels) - 1 - i) % step == 0 else "" for i, t in enumerate(labels)]


def _rate_bars(ax, labels: list[str], rates: list[Rate], color, fair: float | None, xlabel: str) -> None:
    """Horizontal dots with Wilson intervals (horizontal so long labels fit) on an axis
    zoomed to the range that shows the differences; bars from 0 would hide them."""
    y = np.arange(len(rates))
    lo, hi = rate_range(rates, fair)
    if lo == 0.0:
        ax.barh(y, [r.value for r in rates], xerr=_errors(rates), color=color,
                error_kw={"ecolor": "black", "capsize": 4, "lw": 1.2})
    else:
        ax.errorbar([r.value for r in rates], y, xerr=_errors(rates), fmt="none", ecolor="black",
                    capsize=4, lw=1.2)
        ax.scatter([r.value for r in rates], y, color=color, s=40, zorder=3)
        xlabel += "; axis zoomed to the intervals"
        ax.set_ylim(len(rates) - 0.5, -0.5)  # room for the end rows' dots
    ax.set_xlim(lo, hi)
    ax.set_xlabel(xlabel)
    ax.set_yticks(y, [_label(s) for s in labels])
    if lo == 0.0:
        ax.invert_yaxis()
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    if fair is not None:
        # Labelled above the axes rather than in a legend, which would cover a bar.
        ax.axvline(fair, color="black", ls="--", lw=1)
        ax.text(fair, 1.0, f" fair share {fair:.0%}", transform=ax.get_xaxis_transform(),
                ha="left", va="bottom", fontsize=8)


def _height(n: int, per: float = 0.45, base: float = 1.4) -> float:
    return base + per * n


def draw_position_wins(pb: PositionBalance, title: str = "Win rate by turn position",
                       ax: Axes | None = None) -> Axes:
    n = pb.players
    ax = axes(ax, (WIDTH, _height(n)))
    labels = [ordinal(i) for i in range(n)]
    _rate_bars(ax, labels, pb.win, _PALETTE[1], 1 / n, "win rate (shared victories count 1/k)")
    ax.set_title(f"{title} (95% Wilson intervals)", pad=14)
    return ax


def position_wins(pb: PositionBalance, title: str = "Win rate by turn position") -> str:
    return svg(draw_position_wins(pb, title).figure)


def draw_rates(labels: list[str], rates: list[Rate], fair: float | None, title: str, xlabel: str,
               ax: Axes | None = None) -> Axes:
    """Rates with their 95% intervals, one row each (a summary's win rates by turn position)."""
    ax = axes(ax, (WIDTH, _height(len(rates))))
    _rate_bars(ax, labels, rates, _PALETTE[1], fair, xlabel)
    ax.set_title(f"{title} (95% Wilson intervals)", pad=14)
    return ax


def seat_wins(s: SeatBalance, players: int) -> str:
    fig, ax = plt.subplots(figsize=(WIDTH, _height(players)))
    _rate_bars(ax, [f"seat {i}" for i in range(players)], s.win, _PALETTE[0], 1 / players,
               "win rate (shared victories count 1/k)")
    ax.set_title("Win rate by physical seat (95% Wilson intervals)", pad=14)
    return svg(fig)


def seat_scores(s: SeatBalance, players: int) -> str:
    fig, ax = plt.subplots(figsize=(WIDTH, 3.2))
    hist = s.score_hist
    for seat in range(players):
        h = hist.filter(hist["seat"] == seat)
        share = h["count"].to_numpy() / h["count"].sum()
        mean = s.score[seat][0]
        ax.step(h["score"].to_numpy(), share, where="mid", lw=1.4, color=_PALETTE[seat % 10],
                label=f"seat {seat} (mean {mean:.1f})")
    ax.set_title("Final score distribution by seat")
    ax.set_xlabel("final score (score points)")
    ax.set_ylabel("share of games")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.legend(ncol=min(players, 3), fontsize=8)
    return svg(fig)


def strategy_wins(st: Strategies, players: int) -> str:
    fig, ax = plt.subplots(figsize=(WIDTH, _height(len(st.names))))
    _rate_bars(ax, st.names, st.win, _PALETTE[2], 1 / players if players > 1 else None, "win rate")
    ax.set_title("Win rate by strategy, over all its seats (95% Wilson intervals)", pad=14)
    return svg(fig)


def strategy_ratings(r: Ratings) -> str:
    order = np.argsort(-r.elo)
    fig, ax = plt.subplots(figsize=(WIDTH, _height(len(r.names))))
    y = np.arange(len(order))
    ax.errorbar(r.elo[order], y, xerr=r.high[order] - r.elo[order], fmt="o", color=_PALETTE[3],
                ecolor="black", capsize=4)
    ax.set_yticks(y, [_label(r.names[i]) for i in order])
    ax.invert_yaxis()
    ax.axvline(0, color="grey", lw=1)
    ax.set_title("Bradley–Terry rating (95% intervals; 0 = average strategy)")
    ax.set_xlabel("rating (Elo: +400 = 10× the odds of winning)")
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.margins(x=0.15)
    return svg(fig)


def matchup_matrix(m: Matchups) -> str:
    k = len(m.names)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(m.games > 0, m.wins / m.games, np.nan)
    # Always the report's width, so fonts keep their size however many strategies.
    fig, ax = plt.subplots(figsize=(WIDTH, max(3.2, min(WIDTH, 1.6 + 0.55 * k))))
    labels = [_short(n) for n in m.names]
    sns.heatmap(share, ax=ax, vmin=0, vmax=1, cmap="vlag_r", center=0.5, square=True,
                annot=k <= 10, fmt=".0%", annot_kws={"fontsize": 9 if k <= 6 else 7},
                xticklabels=labels, yticklabels=labels, linewidths=0.5, linecolor="white",
                cbar_kws={"format": PercentFormatter(1.0), "label": "row ahead", "shrink": 0.8})
    ax.set_title("Head-to-head: row strategy ahead of column strategy")
    ax.set_xlabel("opponent")
    ax.set_ylabel("strategy")
    ax.tick_params(axis="x", labelrotation=30)
    ax.tick_params(axis="y", labelrotation=0)
    for t in ax.get_xticklabels():
        t.set_horizontalalignment("right")
    return svg(fig)


def _hist_bars(ax, h: Histogram, color) -> None:
    f = h.frame("value")
    ax.bar(f["value"].to_numpy(), f["count"].to_numpy() / max(h.n, 1), width=0.9, color=color)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # counts: no 9.5 turns


def margins(o: Outcomes) -> str:
    fig, ax = plt.subplots(figsize=(WIDTH, 3.2))
    for i, (reason, h) in enumerate(sorted(o.margin.items(), key=lambda x: -x[1].n)):
        # Steps, not bars: the distributions of several end reasons overlap.
        f = h.frame("value")
        ax.step(f["value"].to_numpy(), f["count"].to_numpy() / h.n, where="mid", lw=1.4,
                color=_PALETTE[i % 10], label=f"{reason} ({h.n:,} games, mean {h.mean()[0]:.1f})")
    ax.set_title("Margin of victory (winner's score minus the best other score)")
    ax.set_xlabel("margin (score points; below 0: won without the highest score)")
    ax.set_ylabel("share of games ended this way")
    ax.set_ylim(bottom=0)  # shares from zero: a narrow band would exaggerate (or pass 100%)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.legend(fontsize=8)
    return svg(fig)


def _histogram_with_mean(h: Histogram, color, title: str, xlabel: str) -> str:
    fig, ax = plt.subplots(figsize=(WIDTH, 3.0))
    _hist_bars(ax, h, color)
    mean, low, high = h.mean()
    ax.axvline(mean, color="black", ls="--", lw=1, label=f"mean {mean:.1f} (95% CI {low:.2f}–{high:.2f})")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of games")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.legend(fontsize=8)
    return svg(fig)


def score_distribution(o: Outcomes) -> str:
    return _histogram_with_mean(o.scores, _PALETTE[2], "Final score distribution", "final score (score points)")


def game_length(o: Outcomes) -> str:
    return _histogram_with_mean(o.turns, _PALETTE[0], "Game length", "turns (decisions taken, all players)")


def end_reasons(o: Outcomes) -> str:
    rates = [r for _, r in o.end_reasons] + [o.shared]
    labels = [name for name, _ in o.end_reasons] + ["shared victory"]
    fig, ax = plt.subplots(figsize=(WIDTH, _height(len(rates))))
    _rate_bars(ax, labels, rates, [_PALETTE[4]] * (len(rates) - 1) + [_PALETTE[5]], None, "share of games")
    ax.set_title("How games end (95% Wilson intervals)")
    return svg(fig)


def components(table) -> str:
    """Forest plot: win rate with minus without each feature (within strategy),
    largest effects first."""
    t = table.head(MAX_FEATURES)
    names = [f if th == 1 else f"{f} ≥ {th}" for f, th in zip(t["feature"], t["threshold"])]
    fig, ax = plt.subplots(figsize=(WIDTH, _height(len(names), per=0.3)))
    y = np.arange(len(names))
    diff = t["diff"].to_numpy()
    err = np.clip(np.vstack([diff - t["diff_low"].to_numpy(), t["diff_high"].to_numpy() - diff]), 0, None)
    sig, big = t["significant"].to_numpy(), t["finding"].to_numpy()
    for mask, color, label in ((big, _PALETTE[3], "finding (significant and large enough)"),
                               (sig & ~big, _PALETTE[0], "significant but small"),
                               (~sig, "grey", "not significant")):
        if mask.any():
            ax.errorbar(diff[mask], y[mask], xerr=err[:, mask], fmt="o", color=color,
                        ecolor=color, capsize=3, label=label)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.axvline(0, color="black", lw=1)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_title("Win rate with minus without each feature, within strategy (95% CI)", pad=22)
    ax.set_xlabel("difference in win rate (percentage points)")
    # Between title and axes: inside, it would hide points whichever corner it took.
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False)
    return svg(fig)


def leader_wins(q: Quality) -> str:
    """P(win | sole leader) per checkpoint, and the share of games tied for the lead."""
    fig, ax = plt.subplots(figsize=(WIDTH, 3.2))
    x = np.arange(len(q.checkpoints))
    has = np.array([r is not None for r in q.leader_wins])
    rates = [r for r in q.leader_wins if r is not None]
    ax.plot(x[has], [r.value for r in rates], marker="o", ms=3, color=_PALETTE[0],
            label="sole leader goes on to win")
    ax.fill_between(x[has], [r.low for r in rates], [r.high for r in rates], color=_PALETTE[0],
                    alpha=0.25, label="95% Wilson interval")
    ax.plot(x, [t.value for t in q.tied], ls="--", color=_PALETTE[1], label="games tied for the lead")
    ax.set_xticks(x, thin_labels(q.checkpoints), rotation=30 if len(x) > 6 else 0)
    ax.set_ylim(0, 1)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_title("Does the leader win? (share of the games it leads alone)")
    ax.set_xlabel("checkpoint (interim standings)")
    ax.set_ylabel("share of games")
    ax.legend(fontsize=8, loc="lower right")
    return svg(fig)


def lead_changes(q: Quality) -> str:
    fig, (left, right) = plt.subplots(1, 2, figsize=(WIDTH, 3.0))
    _hist_bars(left, q.lead_changes, _PALETTE[1])
    left.set_title("Lead changes per game")
    left.set_xlabel("changes of the sole leader (incl. the result)")
    left.set_ylabel("share of games")
    _hist_bars(right, q.last_change, _PALETTE[2])
    labels = ["never", *q.checkpoints[1:], "result"]
    right.set_xticks(range(len(labels)), thin_labels(labels, 8), rotation=45, ha="right")
    right.set_title("When the lead last changed")
    right.set_xlabel("checkpoint")
    for ax in (left, right):
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    return svg(fig)
