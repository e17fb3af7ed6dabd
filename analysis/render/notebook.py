"""What a result shows in a notebook: `html(result)` (Jupyter's `_repr_html_`: the verdict
sentence, the key table and the figure, in the reports' words and figures) and
`plot(result, ...)` (the key figure as a matplotlib Figure; with ax=, drawn on those axes,
which are returned). A result class delegates both here (analysis.display), as
scikit-learn's estimators leave plotting to its Display objects.

What each result's plot() takes:
- a run or a summary: ax (win rate by turn position);
- a balance: players (a table size; all of them, a row each, when not given), ax with one
  table size (each position's win rate at every rung of the ladder);
- a comparison: variant (its label or index, default the first), ax (the forest plot);
- a sweep: param, lineup (default the first of each): every metric against the param;
- a skill analysis: ax (win rate by turn position at each rung);
- a tuning: ax (search progress);
- a report: run (index, default 0), ax (win rate by turn position of that run).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import polars as pl
from markupsafe import Markup
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from analysis.render import templates
from analysis.render.figure import Image, image, plt
from analysis.render.formats import count, ordinal, pct, rate
from analysis.render.plots import draw_position_wins, draw_rates
from analysis.summary import Summary
from simcore.errors import UserError

__all__ = ["Card", "Table", "card", "html", "plot", "fair_text", "summary_text"]


@dataclass(frozen=True)
class Table:
    columns: list[str]
    rows: list[list[str]]
    caption: str = ""


@dataclass(frozen=True)
class Card:
    """What a result shows: a title, its verdict in sentences, its key tables, its figures."""

    title: str
    sentences: list[str]
    tables: list[Table] = field(default_factory=list)
    figures: list[Image | Markup] = field(default_factory=list)  # <img> data URIs, or inline <svg>


def html(result: Any) -> str:
    """The result (or the card of one) as an HTML fragment for Jupyter."""
    c = result if isinstance(result, Card) else card(result)
    figures = [f if isinstance(f, Markup) else Markup('<img src="{}" alt="{}">').format(f.src, f.alt)
               for f in c.figures]
    return templates().get_template("notebook.html.j2").render(c=c, figures=figures)


# By the result's class (module.name): each renderer imports what it draws when it runs, so
# showing a run loads neither the experiments it does not need nor a tuning's optuna.
_CARDS: dict[str, Callable[[Any], Card]] = {}
_PLOTS: dict[str, Callable[..., Figure | Axes]] = {}


def _key(result: Any) -> str:
    return f"{type(result).__module__}.{type(result).__qualname__}"


def _renders(kind: str, *classes: str) -> Callable[[Callable], Callable]:
    def register(function: Callable) -> Callable:
        for name in classes:
            (_CARDS if kind == "card" else _PLOTS)[name] = function
        return function
    return register


def card(result: Any) -> Card:
    """What the result shows (its class's renderer)."""
    if _key(result) not in _CARDS:
        raise TypeError(f"{type(result).__name__} has no notebook display")
    return _CARDS[_key(result)](result)


def plot(result: Any, *args: Any, **options: Any) -> Figure | Axes:
    """The result's key figure (its class's renderer, with its options)."""
    if _key(result) not in _PLOTS:
        raise TypeError(f"{type(result).__name__} has no figure")
    return _PLOTS[_key(result)](result, *args, **options)


def _shown(ax: Axes, given: Axes | None) -> Figure | Axes:
    """The axes when the caller gave them; else the figure, out of pyplot's care (a notebook
    shows it once, as the cell's value)."""
    if given is not None:
        return ax
    plt.close(ax.figure)
    return ax.figure


def _rate(value: float, low: float, high: float) -> SimpleNamespace:
    return SimpleNamespace(value=value, low=low, high=high)


# ---- a run's summary ----

def _position_rows(s: Summary) -> tuple[list[str], list[SimpleNamespace], pl.DataFrame]:
    """Labels, rates and table of the win rates by turn position (by seat for results
    without positions)."""
    if s.by_position is not None:
        t = s.by_position.sort("position")
        labels = [ordinal(p) for p in t["position"]]
    else:
        t = s.by_seat.sort("seat")
        labels = [f"seat {k}" for k in t["seat"]]
    return labels, [_rate(*r) for r in t.select("win_rate", "ci_low", "ci_high").rows()], t


def summary_text(s: Summary) -> str:
    """"Win rate by turn position: the 1st player 51.0% (95% CI 50.1–51.9%), ... (fair share 50.0%).\""""
    labels, rates, _ = _position_rows(s)
    players = len(s.manifest.get("strategies") or labels)
    kind = "turn position" if s.by_position is not None else "seat"
    shown = ", ".join(f"the {label} {rate(r)}" for label, r in zip(labels, rates))
    fair = f" (fair share {pct(1 / players)})" if players > 1 else ""
    text = f"Win rate by {kind} over {s.games:,} games: {shown}{fair}."
    if not s.complete:
        text += (f" Incomplete: {s.games:,} of the {s.manifest.get('n_games', 0):,} games its manifest asks for"
                 + (f", {len(s.unproven)} part(s) unproven" if s.unproven else "") + "; running it again finishes it.")
    return text


def _rate_table(labels: list[str], t: pl.DataFrame, n: str, head: str) -> Table:
    rows = [[label, f"{r[n]:,}", count(r["wins"]), rate(_rate(r["win_rate"], r["ci_low"], r["ci_high"])),
             f"{r['mean_score']:.2f}"] for label, r in zip(labels, t.iter_rows(named=True))]
    return Table([head, n, "wins", "win rate (95% CI)", "mean score"], rows)


@_renders("card", "analysis.summary.Summary")
def _summary_card(s: Summary) -> Card:
    m = s.manifest
    labels, rates, t = _position_rows(s)
    lineup = ", ".join(x.get("spec", "?") for x in m.get("strategies") or [])
    tables = [_rate_table(labels, t, "games", "turn position" if s.by_position is not None else "seat"),
              _rate_table(s.by_strategy["strategy"].to_list(), s.by_strategy, "plays", "strategy")]
    return Card(f"{m.get('game')}: {lineup} (run {m.get('run_id')}, seed {m.get('seed')}, seating "
                f"{m.get('seating')})", [summary_text(s)], tables, [image(_draw_summary(s, None).figure,
                                                                          "win rate by turn position")])


def _draw_summary(s: Summary, ax: Axes | None) -> Axes:
    labels, rates, _ = _position_rows(s)
    kind = "turn position" if s.by_position is not None else "seat"
    return draw_rates(labels, rates, 1 / len(labels) if len(labels) > 1 else None, f"Win rate by {kind}",
                      "win rate (shared victories count 1/k)", ax)


@_renders("plot", "analysis.summary.Summary")
def _summary_plot(s: Summary, *, ax: Axes | None = None) -> Figure | Axes:
    return _shown(_draw_summary(s, ax), ax)


@_renders("plot", "analysis.api.RunOutcome")
def _run_plot(run: Any, *, ax: Axes | None = None) -> Figure | Axes:
    return _summary_plot(run.summary(), ax=ax)


@_renders("card", "analysis.api.RunOutcome")
def _run_card(run: Any) -> Card:
    """A run of api.run: its summary, and what this call played."""
    c = card(run.summary())
    played = f"This call played {run.played:,} games into {run.path}" + (
        f" ({run.resumed:,} were there already)." if run.resumed else ".")
    return Card(c.title, [*c.sentences, played], c.tables, c.figures)


# ---- balance ----

@_renders("card", "analysis.experiments.balance.BalanceResult")
def _balance_card(result: Any) -> Card:
    from analysis.render.balance import draw_size, headline, overall

    tables = []
    for v in result.sizes:
        rows = [[r.spec, "–" if r.rating is None else f"{r.rating[0]:+.0f}", f"{r.games:,}",
                 *(rate(x) for x in r.rates)] for r in v.rungs]
        tables.append(Table(["rung", "rating (Elo)", "games", *(ordinal(p) for p in range(v.players))], rows,
                            f"{v.players} players: win rate by turn position in the mirror match of each rung"))
    figures = [image(draw_size(v).figure, f"{v.players} players: win rate by turn position at each rung")
               for v in result.sizes]
    return Card(f"Balance of {result.title}", [overall(result), *(headline(v, result.margin) for v in result.sizes)],
                tables, figures)


@_renders("plot", "analysis.experiments.balance.BalanceResult")
def _balance_plot(result: Any, *, players: int | None = None, ax: Axes | None = None) -> Figure | Axes:
    from analysis.render.balance import draw_size

    sizes = [v for v in result.sizes if players is None or v.players == players]
    if not sizes:
        raise UserError(f"players = {players}: this balance has {', '.join(str(v.players) for v in result.sizes)} "
                        "players")
    if len(sizes) == 1:
        return _shown(draw_size(sizes[0], ax), ax)
    if ax is not None:
        raise UserError("ax= takes one table size: give players= as well")
    fig, axs = plt.subplots(len(sizes), 1, figsize=(7.6, 3.6 * len(sizes)), squeeze=False)
    for v, a in zip(sizes, axs[:, 0]):
        draw_size(v, a)
    fig.tight_layout()
    plt.close(fig)
    return fig


# ---- comparison ----

@_renders("card", "analysis.api.CompareOutcome")
def _compare_card(outcome: Any) -> Card:
    """A comparison of api.compare: its verdicts, each variant's table and forest plot (the
    report's)."""
    from analysis.render.compare import _context as compare_context

    comparisons, sentences = outcome.comparisons, outcome.verdicts
    ctx = compare_context(comparisons, comparisons[0].margin)
    tables = [Table(["group", "metric", "base", "variant", "change", "95% CI", "q"],
                    [[r["group"], r["label"], r["base"], r["variant"], f"{r['change']} {r['unit']}".strip(), r["ci"],
                      r["q"]] for r in item["rows"]],
                    f"{item['label']} against the base ({item['games']} games"
                    f"{', paired' if item['paired'] else ''})") for item in ctx["items"]]
    return Card(ctx["title"], sentences, tables, [Markup(item["svg"]) for item in ctx["items"]])


@_renders("plot", "analysis.api.CompareOutcome")
def _compare_plot(outcome: Any, variant: int | str = 0, *, ax: Axes | None = None) -> Figure | Axes:
    """A variant's forest plot (its label or index)."""
    from analysis.render.compare import draw_forest

    comparisons = outcome.comparisons
    labels = [c.label for c in comparisons]
    if isinstance(variant, str):
        if variant not in labels:
            raise UserError(f"variant = {variant!r}: the variants are {', '.join(labels)}")
        variant = labels.index(variant)
    if not 0 <= variant < len(comparisons):
        raise UserError(f"variant = {variant}: there are {len(comparisons)} variant(s), numbered from 0")
    return _shown(draw_forest(comparisons[variant], ax), ax)


# ---- sweep ----

def fair_text(f: dict[str, Any]) -> str:
    """A fair point of a sweep as a sentence."""
    at = f" at {f['at']}" if f["at"] else ""
    text = (f"{f['lineup']}{at}: the {ordinal(f['position'])}'s advantage over the fair share changes sign at "
            f"{f['param']} = {f['x']:.2f}")
    if math.isfinite(f["low"]) and math.isfinite(f["high"]):
        return text + f" (95% CI {f['low']:.2f} to {f['high']:.2f})."
    return text + ", but its 95% interval reaches beyond the swept values: the crossing may be noise."


@_renders("card", "analysis.experiments.sweep.SweepResult")
def _sweep_card(result: Any) -> Card:
    from analysis.render.sweep import sweep_figures

    fair = [fair_text(f) for f in result.fair_points.iter_rows(named=True)] if result.fair_points.height else []
    if not fair:
        fair = [f"No turn position's advantage changes sign across the swept values of {', '.join(result.params)}."]
    t = result.table
    rows = []
    if t.height:
        seat = t.filter(pl.col("group") == "seat balance").sort("lineup", *result.params, "metric", maintain_order=True)
        rows = [[r["lineup"], *(str(r[p]) for p in result.params), r["label"],
                 rate(_rate(r["value"] / 100, r["low"] / 100, r["high"] / 100)), f"{r['games']:,}"]
                for r in seat.iter_rows(named=True)]
    refused = [f"Refused: {', '.join(p.lineup)} at {p.name}: {p.refused}." for p in result.points if p.refused]
    figures = [image(fig, caption) for caption, fig in sweep_figures(result)]
    return Card(f"Sweep of {result.game} over {', '.join(result.params)}", [*fair, *refused],
                [Table(["lineup", *result.params, "measure", "value (95% CI)", "games"], rows,
                       "win rate by turn position at each point")], figures)


@_renders("plot", "analysis.experiments.sweep.SweepResult")
def _sweep_plot(result: Any, *, param: str | None = None, lineup: str | None = None) -> Figure:
    from analysis.render.sweep import sweep_figures

    param = param or result.params[0]
    if param not in result.params:
        raise UserError(f"param = {param!r}: the sweep varies {', '.join(result.params)}")
    lineups = result.table["lineup"].unique(maintain_order=True).to_list() if result.table.height else []
    if not lineups:
        raise UserError("the sweep has no point played: nothing to plot")
    lineup = lineup or lineups[0]
    if lineup not in lineups:
        raise UserError(f"lineup = {lineup!r}: the sweep's lineups are {'; '.join(lineups)}")
    chosen = None
    for caption, fig in sweep_figures(result):
        plt.close(fig)
        if chosen is None and caption == f"{lineup}: every metric against {param}, with 95% interval bands":
            chosen = fig
    chosen.tight_layout()
    return chosen


# ---- skill ----

@_renders("card", "analysis.experiments.skill_analysis.SkillAnalysis")
def _skill_card(a: Any) -> Card:
    from analysis.render.skill import draw_balance
    from analysis.render.skill import findings as skill_findings

    b = a.ladder.balance
    tables, figures = [], []
    if b is not None:
        tables.append(Table(["rung", *(ordinal(p) for p in range(b.players))],
                            [[rung, *(rate(x) for x in b.win[k])] for k, rung in enumerate(b.rungs)],
                            "win rate by turn position in each rung's mirror match"))
        figures.append(image(draw_balance(b).figure, "win rate by turn position at each rung"))
    return Card(f"Skill in {a.title} at {a.players} players", [f.text for f in skill_findings(a)], tables, figures)


@_renders("plot", "analysis.experiments.skill_analysis.SkillAnalysis")
def _skill_plot(a: Any, *, ax: Axes | None = None) -> Figure | Axes:
    from analysis.render.skill import draw_balance

    if a.ladder.balance is None:
        raise UserError("this skill analysis has no mirror matches of two rungs: no balance by skill to plot")
    return _shown(draw_balance(a.ladder.balance, ax), ax)


# ---- tuning ----

@_renders("card", "analysis.experiments.tune.BotTuning")
def _bot_card(t: Any) -> Card:
    from analysis.render.tune import draw_tuning, verdict

    held = Table(["players", "games", "tuned wins (95% CI)", "fair share", "validated"],
                 [[str(h["players"]), f"{h['games']:,}", rate(_rate(h["win"], h["low"], h["high"])), pct(h["fair"]),
                   "yes" if h["validated"] else "no"] for h in t.holdout], "held-out seeds: 1 tuned against the default")
    weights = Table(["weight", "default", "tuned"],
                    [[k, f"{t.defaults.get(k, float('nan')):g}", f"{v:g}"] for k, v in t.best.items()])
    return Card(f"Tuning {t.bot} for {t.game}", [verdict(t)], [held, weights],
                [image(draw_tuning(t).figure, "search progress")])


@_renders("card", "analysis.experiments.tune_rules.RuleTuning")
def _rules_card(t: Any) -> Card:
    from analysis.render.tune import draw_tuning, verdict

    goals = Table(["goal", "value (95% CI)", "band", "met"],
                  [[c["goal"], f"{c['value']:.2f} ({c['low']:.2f}–{c['high']:.2f})", f"{c['band'][0]:g} .. {c['band'][1]:g}",
                    "yes, whole interval inside" if c["sure"] else ("yes (point estimate)" if c["met"] else "no")]
                   for c in t.confirmed], "held-out seeds")
    return Card(f"House-rule tuning of {t.game}", [verdict(t)], [goals], [image(draw_tuning(t).figure, "search progress")])


@_renders("plot", "analysis.experiments.tune.BotTuning", "analysis.experiments.tune_rules.RuleTuning")
def _tuning_plot(t: Any, *, ax: Axes | None = None) -> Figure | Axes:
    from analysis.render.tune import draw_tuning

    return _shown(draw_tuning(t, ax), ax)


# ---- report ----

@_renders("card", "analysis.experiments.report.RunsReport")
def _report_card(report: Any) -> Card:
    from analysis.render.findings import findings

    sentences, tables, figures = [], [], []
    for k, a in enumerate(report.analyses):
        m = a.run.manifest
        name = f"run {k}: {m.get('game')}, {', '.join(s.get('spec', '?') for s in m.get('strategies') or [])}"
        sentences += [f"{name}: {f.text}" for f in findings(a)]
        if a.seats is not None:
            pb = a.seats.positions
            tables.append(Table(["turn position", "win rate (95% CI)"],
                                [[ordinal(p), rate(r)] for p, r in enumerate(pb.win)], f"{name} ({a.games:,} games)"))
            figures.append(image(draw_position_wins(pb, f"Run {k}: win rate by turn position").figure,
                                 f"{name}: win rate by turn position"))
    return Card(f"Report of {len(report.analyses)} run(s), {report.games:,} games", sentences, tables, figures)


@_renders("plot", "analysis.experiments.report.RunsReport")
def _report_plot(report: Any, *, run: int = 0, ax: Axes | None = None) -> Figure | Axes:
    if not 0 <= run < len(report.analyses):
        raise UserError(f"run = {run}: the report has {len(report.analyses)} run(s), numbered from 0")
    a = report.analyses[run]
    if a.seats is None:
        raise UserError(f"run = {run}: a solo game has no turn positions to plot")
    return _shown(draw_position_wins(a.seats.positions, f"Run {run}: win rate by turn position", ax), ax)
