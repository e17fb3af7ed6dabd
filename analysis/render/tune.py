"""The tuning report: analysis.experiments.tune's search and held-out confirmation in
words (the one-sentence verdict), its figures and the HTML page."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
from matplotlib.axes import Axes

from analysis.experiments.tune import BotTuning
from analysis.experiments.tune_rules import RuleTuning
from analysis.render import templates
from analysis.render.figure import axes, data_uri, plt, svg
from analysis.render.formats import p_is, pct, pvalue, rate
from analysis.render.page import write_html

__all__ = ["write_tune_report", "verdict", "draw_tuning"]


def draw_progress(values: list[float], maximize: bool, ylabel: str, ax: Axes | None = None) -> Axes:
    """Every trial's search objective and the best so far."""
    ax = axes(ax, (7.6, 3.0))
    x = np.arange(len(values))
    y = np.array(values, dtype=float)
    best = np.maximum.accumulate(y) if maximize else np.minimum.accumulate(y)
    ax.plot(x, y, "o", ms=3, color="#7b7b7b", label="trial")
    ax.step(x, best, where="post", color="#7b3f00", lw=1.6, label="best so far")
    ax.set_xlabel("trial")
    ax.set_ylabel(ylabel)
    ax.set_title("Search progress (search seeds: optimistic for the best)")
    ax.legend(fontsize=8)
    return ax


def draw_tuning(tuning: BotTuning | RuleTuning, ax: Axes | None = None) -> Axes:
    """A tuning's search progress: a bot's edge over its fair share (maximised), or a
    house rule's sum of goal misses (minimised)."""
    if isinstance(tuning, BotTuning):
        return draw_progress([100 * t["value"] for t in tuning.trials], True, "edge over fair share (percentage points)", ax)
    return draw_progress([sum(t["values"][:-1]) for t in tuning.trials], False, "sum of goal misses", ax)


def _importance_svg(importances: dict[str, float]) -> str | None:
    if not importances:
        return None
    names = list(importances)[:20]
    fig, ax = plt.subplots(figsize=(7.6, 1.2 + 0.3 * len(names)))
    ax.barh(np.arange(len(names)), [importances[n] for n in names], color="#0173b2")
    ax.set_yticks(np.arange(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("importance (optuna's default evaluator; shares sum to 1)")
    ax.set_title("Weight importances")
    return _svg_uri(fig)


def _svg_uri(fig) -> str:
    return data_uri(svg(fig))


def write_tune_report(tuning: BotTuning | RuleTuning, html: Path, pdf: Path | None = None) -> None:
    """A self-contained HTML page (and PDF) of a tuning."""
    env = templates(filters={"pvalue": pvalue, "p_is": p_is})
    figures = {"progress": _svg_uri(draw_tuning(tuning).figure),
               "importance": _importance_svg(tuning.importances) if isinstance(tuning, BotTuning) else None}
    text = env.get_template("tune.html.j2").render(t=tuning, bot=isinstance(tuning, BotTuning),
                                                   figures=figures, verdict=verdict(tuning))
    write_html(html, text, pdf)


def verdict(tuning: BotTuning | RuleTuning) -> str:
    """The one-sentence result, from the held-out seeds."""
    if isinstance(tuning, BotTuning):
        parts = [f"{rate(SimpleNamespace(value=h['win'], low=h['low'], high=h['high']))} at "
                 f"{h['players']} players against a fair {pct(h['fair'])}" for h in tuning.holdout]
        head = "; ".join(parts)
        held = [h["players"] for h in tuning.holdout if h["validated"]]
        where = (f"best.json is validated at {', '.join(map(str, held))} players" if held
                 else "best.json is validated at no table size")
        if tuning.better:
            return f"The tuned {tuning.bot} beats the default weights on held-out seeds: it wins {head}; {where}."
        if held:
            return (f"The tuned {tuning.bot} beats the default weights on held-out seeds at some table "
                    f"sizes only: it wins {head}; {where}, and only there.")
        return (f"The tuned {tuning.bot} is NOT shown better than the default weights on held-out "
                f"seeds: it wins {head}; {where}.")
    if not tuning.proposal:
        lead, verb = "The rulebook values (no change)", "meet"
    else:
        lead, verb = "The house rule " + ", ".join(f"{k} = {v}" for k, v in tuning.proposal.items()), "meets"
    if tuning.met:
        sure = all(c["sure"] for c in tuning.confirmed)
        return (f"{lead} {verb} every goal on held-out seeds"
                + (" with the whole 95% interval inside each band." if sure
                   else " (point estimates; some intervals reach outside a band)."))
    missed = [c["goal"] for c in tuning.confirmed if not c["met"]]
    return f"{lead} comes closest, but misses on held-out seeds: {'; '.join(missed)}."
