"""The balance report: the verdict of analysis.experiments.balance in words, a figure per
table size and the evidence, as self-contained HTML (and PDF); the tidy table and the
verdict are written beside it (balance.parquet, balance.csv, verdict.json)."""
from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.ticker import PercentFormatter

from analysis.experiments.balance import NEEDS, BalanceResult, Convergence, SizeVerdict, Withheld
from analysis.experiments.widen import widen
from analysis.experiments.report import RunsReport
from analysis.render import plots, templates, version
from analysis.render.figure import axes, data_uri, svg
from analysis.render.findings import degenerate_text
from analysis.render.formats import bound, least, nth, ordinal, pvalue, rate, within
from analysis.render.page import print_pdf
from analysis.render.report import render_html as render_report
from simcore.errors import UserError, writing
from simcore.parts import write_atomic, write_text

__all__ = ["headline", "overall", "degenerate", "agreement", "too_few", "komi_text", "knob_text", "plan_text",
           "short_text", "render_html", "write_balance", "draw_size", "DATA_FILES"]

DATA_FILES = ("balance.parquet", "balance.csv", "verdict.json")


def change(c: tuple[float, float, float, float]) -> str:
    """A change of a rate with its interval: "+4.5 percentage points (95% CI +3.1 to +5.9)"."""
    return f"{c[0]:+.1f} percentage points (95% CI {c[1]:+.1f} to {c[2]:+.1f})"


def _balance_word(v: SizeVerdict, margin: float) -> str:
    """Whether the strongest rung's positions are fair: an advantage (significant and at
    least the margin), balanced (every interval within the margin of fair), or neither."""
    n = v.players
    rates = v.top.rates
    if all(abs(r.low - 1 / n) * 100 <= margin and abs(r.high - 1 / n) * 100 <= margin for r in rates):
        return f"balanced within {within(margin)}"
    # Rounded, so that a tie (always, at two players: the rates are complements) names
    # the earlier position, not whichever float came out larger.
    p = max(range(n), key=lambda k: (round(abs(rates[k].value - 1 / n), 9), -k))
    r = rates[p]
    if r.p_value < 0.05 / n and abs(r.value - 1 / n) * 100 >= margin:
        side = "advantage" if r.value > 1 / n else "disadvantage"
        return f"a {nth(p)}-player {side} of {100 * (r.value - 1 / n):+.1f} percentage points over the fair {100 / n:.1f}%"
    return f"turn order not shown to matter, nor balanced within {within(margin)}"


def too_few(w: Withheld) -> str:
    """"too few games (4; about 50 needed)": what a withheld statement says instead."""
    return f"too few games ({w.games:,}; about {w.needed:,} needed)"


def agreement(c: Convergence) -> str:
    """"the two strongest rungs agree within ±2.4 percentage points" (and the change the
    games show, where an interval excludes zero)."""
    text = f"the two strongest rungs agree within ±{bound(c.agreement)} percentage points at every position"
    if (shown := c.shown_change) is not None:
        text += (f", and the {ordinal(shown[0])}'s rate is shown to change by at least "
                 f"{least(shown[1])} percentage points")
    return text


def headline(v: SizeVerdict, margin: float) -> str:
    """One sentence: the strongest rung's position rates and whether they converged."""
    top = v.top
    rated = f", rated {top.rating[0]:+.0f} Elo" if top.rating else ""
    if (w := v.lacks("rate")) is not None:
        text = (f"At {v.players} players, with {top.spec} in every seat (the strongest rung{rated}): "
                f"{too_few(w)} to say whether turn order matters. ")
    else:
        rates = ", ".join(f"the {ordinal(p)} {rate(r)}" for p, r in enumerate(top.rates))
        text = (f"At {v.players} players, with {top.spec} in every seat (the strongest rung{rated}; "
                f"{top.games:,} games), {rates}: {_balance_word(v, margin)}. ")
    c = v.convergence
    if c is None:
        return text + "With one rung only, whether the verdict moves with skill is not measured."
    if (w := v.lacks("agreement")) is not None:
        return text + f"Whether it still moves with skill against {c.second}: {too_few(w)} of their paired mirrors."
    if c.state == "converged":
        return text + (f"Converged: {agreement(c)} against {c.second} (every 95% interval of the paired change "
                       f"inside the margin of {within(margin)}).")
    if c.state == "moves":
        p, _ = c.shown_change
        return text + (f"Still moves with skill: against {c.second}, the {ordinal(p)}'s rate changes by "
                       f"{change(c.changes[p])}, its whole interval beyond {within(margin)}.")
    return text + (f"Not yet decided at {within(margin)} against {c.second}: {agreement(c)}; more games at the "
                   "top two rungs would decide it.")


def overall(result: BalanceResult) -> str:
    """The one-line verdict over every table size: for each, whether turn order matters
    among the strongest bots and whether that verdict has converged."""
    parts = []
    for v in result.sizes:
        if v.lacks("rate") is not None:
            word = "too few games to say whether turn order matters"
        else:
            word = _balance_word(v, result.margin)
            word = word[2:] if word.startswith("a ") else word
        c = v.convergence
        if c is None:
            conv = "one rung only"
        elif not c.enough:
            conv = "too few games to say whether it moves with skill"
        elif c.state == "converged":
            conv = f"converged: agreeing within ±{bound(c.agreement)} percentage points"
        elif c.state == "moves":
            conv = "still moving with skill"
        else:
            conv = f"not yet decided: agreeing within ±{bound(c.agreement)} percentage points"
        parts.append(f"at {v.players} players {word} ({conv})")
    return f"{result.title}, among the strongest bots here: {'; '.join(parts)}."


def komi_text(v: SizeVerdict, margin: float) -> str | None:
    k = v.komi
    if k is None:
        return None
    n = v.players
    if not any(k.points):
        est = ", ".join(f"{e[0]:+.2f} score points to the {ordinal(p)} (95% CI {e[1]:+.2f} to {e[2]:+.2f})"
                        for p, e in enumerate(k.estimate) if p)
        return (f"No whole score-point bonus does better than none at {n} players: the fair bonus relative to "
                f"the 1st player, {est}, rounds to zero.")
    est = "; ".join(f"the {ordinal(p)} {e[0]:+.2f} score points (95% CI {e[1]:+.2f} to {e[2]:+.2f})"
                    for p, e in enumerate(k.estimate) if p)
    bonus = " and ".join(f"{b} score point{'s' if b != 1 else ''} to the {ordinal(p)}"
                         for p, b in enumerate(k.points) if b)
    text = (f"A score bonus by turn position (komi) would equalise the positions at {n} players. Relative to "
            f"the 1st player, the fair bonus is {est}, estimated from {k.games:,} games' final scores. In whole "
            f"score points, {bonus}: the same games would then give "
            + ", ".join(f"{100 * x:.1f}%" for x in k.predicted) + " by position. ")
    if k.held:
        text += (f"{k.held:,} of the {k.games:,} games stand whatever the bonus (won during play, or decided by "
                 "what the results do not record) and are counted as played. ")
    if k.confirmed is None:
        return text + "Not yet tried in a paired run (no time left in the budget)."
    if k.balanced is None:
        return text + (f"Tried as a house rule (compensation.points = {k.points}) in a paired run of "
                       f"{k.confirm_games:,} games: {too_few(v.lacks('bonus'))} to say whether it balances "
                       "the positions.")
    conf = ", ".join(f"the {ordinal(p)} {rate(r)}" for p, r in enumerate(k.confirmed))
    if k.balanced:
        return text + (f"Confirmed as a house rule (compensation.points = {k.points}) in a paired run of "
                       f"{k.confirm_games:,} games on the same seeds: {conf}, balanced within {within(margin)}.")
    return text + (f"Tried as a house rule (compensation.points = {k.points}) in a paired run of "
                   f"{k.confirm_games:,} games on the same seeds: {conf}, not shown balanced within "
                   f"{within(margin)}.")


def knob_text(v: SizeVerdict, knob: Any) -> str:
    n = v.players
    if not knob.points:
        return f"{knob.param}: not played."
    if len(knob.points) < 2:
        return f"{knob.param} (rulebook {knob.rulebook}): only {knob.points[0].value} was played."
    if not knob.enough:
        w = Withheld("fair_point", "", knob.games, NEEDS.fair_point)
        return (f"{knob.param} (rulebook {knob.rulebook}): its fair point: {too_few(w)} at every value "
                f"played ({', '.join(str(pt.value) for pt in knob.points)}).")
    if knob.fair is None:
        span = ", ".join(f"{pt.value}: {100 * pt.rates[0].value:.1f}%" for pt in knob.points)
        hint = widen(knob.param, [pt.value for pt in knob.points], [pt.rates[0].value - 1 / n for pt in knob.points])
        return (f"{knob.param} (rulebook {knob.rulebook}): no value tried makes the {ordinal(0)}'s win rate "
                f"cross the fair {100 / n:.1f}% ({span}).{' ' + hint if hint else ''}")
    others = ", ".join(f"{ordinal(p)} {100 * x:.1f}%" for p, x in enumerate(knob.fair_rates or []))
    if not (math.isfinite(knob.fair.low) and math.isfinite(knob.fair.high)):
        return (f"{knob.param} (rulebook {knob.rulebook}): on these games the {ordinal(0)}'s advantage changes "
                f"sign at {knob.fair.x:.2f}, but its 95% interval is unbounded: too few games to place the fair "
                "point.")
    return (f"{knob.param} (rulebook {knob.rulebook}): the {ordinal(0)}'s advantage changes sign at "
            f"{knob.fair.x:.2f} (95% CI {knob.fair.low:.2f}–{knob.fair.high:.2f}); there the positions "
            f"would win {others} (interpolated between the values played).")


def _projected(x: Any) -> str:
    """"about 21,000 games at each of the two strongest rungs, 0.9 core-hours"."""
    more = "more than" if x.capped else "about"
    hours = (" (core-hours unknown: their games were not timed in this call)" if x.core_hours is None
             else f", {x.core_hours:.2g} core-hours")
    return f"{more} {x.games:,} games at each of the two strongest rungs{hours}"


def plan_text(plan: Any, margin: float) -> str:
    """What deciding a table size at the margin costs, and what this run played."""
    n, x = plan.players, plan.final
    if x is None:
        return f"At {n} players the ladder has one rung: there is no convergence to decide."
    played = f"this run played {plan.played:,}"
    word = {"converged": "converged", "moves": "moving with skill"}
    if plan.state in word:
        text = f"{n} players is decided at {within(margin)} ({word[plan.state]}); {played} paired games."
    elif not x.route:
        text = f"Deciding {n} players at {within(margin)} cannot be projected yet ({x.reason}); {played}."
    else:
        text = (f"Deciding {n} players at {within(margin)} needs {_projected(x)}; {played} "
                f"(projected {word[x.route]}: the {ordinal(x.position)}'s change {x.change:+.1f} percentage points, "
                f"a game's paired difference spread {x.sd:.0f} percentage points).")
    if plan.pilot is not None and plan.pilot.route:
        reach = "" if plan.reach is None else f"; the budget was to reach about {plan.reach:,}"
        text += (f" Before the main phase, the pilot's {plan.pilot.pairs:,} paired games projected "
                 f"{_projected(plan.pilot)}{reach}.")
    elif plan.pilot is not None:
        text += f" Before the main phase, the pilot could not project it ({plan.pilot.reason})."
    return text


def short_text(r: dict[str, Any]) -> str:
    """A run holding fewer games than its manifest asks for."""
    return (f"{r['players']} players, {r['kind']} {r['label']}: {r['games']:,} of the {r['asked']:,} games its "
            f"manifest asks for ({r['missing']:,} missing; running the command again plays them).")


def apart(at: np.ndarray, gap: float) -> np.ndarray:
    """Positions (axes fractions) moved apart to be at least `gap` from each other, each
    as close to its own as that allows, kept within [0, 1] where they fit: the places
    of labels that must not overlap."""
    order = np.argsort(at, kind="stable")
    want = np.asarray(at, dtype=float)[order]
    # Each label's offset from an evenly spaced row; clusters pool their offsets
    # (isotonic regression by pool-adjacent-violators), so no two come closer than gap.
    base = gap * np.arange(len(want))
    blocks: list[list[float]] = []  # [mean offset, count]
    for d in want - base:
        blocks.append([d, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m, c = blocks.pop()
            blocks[-1] = [(blocks[-1][0] * blocks[-1][1] + m * c) / (blocks[-1][1] + c), blocks[-1][1] + c]
    offset = np.repeat([b[0] for b in blocks], [int(b[1]) for b in blocks])
    room = 1 - gap * (len(want) - 1)
    if room >= 0:  # inside the axes where the row fits: clipping keeps the offsets in order
        offset = np.clip(offset, 0, room)
    got = base + offset
    out = np.empty_like(got)
    out[order] = got
    return out


def draw_size(v: SizeVerdict, ax: Axes | None = None) -> Axes:
    """Each position's win rate against the rung's rating (its place in the ladder when
    the rungs cannot be rated), with 95% intervals; dashed: the fair share."""
    rated = all(r.rating is not None for r in v.rungs)
    x = np.array([r.rating[0] if rated else k for k, r in enumerate(v.rungs)], dtype=float)
    names = 12 + 4.2 * max(len(r.spec) for r in v.rungs)  # the height of the rung names, points
    ax = axes(ax, (plots.WIDTH, 3.6 + names / 72))
    fig = ax.figure
    colors = sns.color_palette("colorblind")
    spread = (np.ptp(x) or 1.0) * 0.006
    for p in range(v.players):
        y = np.array([r.rates[p].value for r in v.rungs])
        err = np.clip(np.vstack([y - [r.rates[p].low for r in v.rungs], [r.rates[p].high for r in v.rungs] - y]), 0, None)
        ax.errorbar(x + (p - (v.players - 1) / 2) * spread, y, yerr=err, fmt="o-", capsize=3,
                    color=colors[p % 10], label=ordinal(p))
    ax.axhline(1 / v.players, color="black", ls="--", lw=1)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("rung rating (Elo, Bradley–Terry)" if rated else "rung (weakest to strongest)")
    if not rated:
        ax.set_xticks(x, [""] * len(x))
    ax.set_ylabel("win rate in the mirror match")
    ax.legend(fontsize=8, frameon=False, ncol=min(v.players, 6), loc="upper center", bbox_to_anchor=(0.5, -0.25))
    # Rung names stand upright above the axes, clear of the data, moved apart where
    # ratings lie close (a line leads from each name to its rung): at least a line of
    # text between two. The title sits above the longest name.
    fig.tight_layout()
    lo, hi = ax.get_xlim()
    width = fig.get_figwidth() * 72 * ax.get_position().width  # the axes' width in points
    at = apart((x - lo) / (hi - lo), 10 / width)
    for k, r in enumerate(v.rungs):
        ax.annotate(r.spec, (x[k], 1), xycoords=("data", "axes fraction"), xytext=(at[k], 1.06),
                    textcoords="axes fraction", rotation=90, fontsize=7, color="#5d6675", ha="center",
                    va="bottom", arrowprops={"arrowstyle": "-", "lw": 0.5, "color": "#b0b6c0"})
    ax.set_title(f"{v.players} players: win rate by turn position at each rung (95% intervals)", pad=names)
    return ax


def _figure(v: SizeVerdict) -> str:
    return data_uri(svg(draw_size(v).figure))


def degenerate(v: SizeVerdict) -> list[str]:
    """The flags of the rungs whose mirror match is degenerate play."""
    return [t for r in v.rungs if (t := degenerate_text(r.spec, v.players, r.rates)) is not None]


def render_html(result: BalanceResult, evidence: str | None = None) -> str:
    sizes = [{"v": v, "headline": headline(v, result.margin), "degenerate": degenerate(v),
              "komi": komi_text(v, result.margin),
              "knobs": [knob_text(v, k) for k in v.knobs], "figure": _figure(v)} for v in result.sizes]
    env = templates(filters={"rate": rate, "change": change, "pvalue": pvalue},
                    names={"ordinal": ordinal, "too_few": too_few, "agreement": agreement, "within": within})
    return env.get_template("balance.html.j2").render(
        r=result, overall=overall(result), sizes=sizes, evidence=evidence, version=version(), needs=NEEDS,
        plans=[plan_text(x, result.margin) for x in result.plans], short=[short_text(x) for x in result.short],
        created=datetime.now(UTC).isoformat(timespec="seconds"))


def write_balance(result: BalanceResult, html: Path | str, pdf: Path | str | None = None, *,
                  evidence: RunsReport | None = None) -> list[Path]:
    """Write the report, the tidy table (parquet and CSV) and verdict.json beside it, and,
    with `evidence` (the analysis of each table size's strongest rung), its per-run
    report (<name>-evidence.html: components, outcomes, the game's own sections).
    Everything is rendered before anything is written. Returns the files written."""
    html = Path(html)
    if html.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"-o {html}: the report is HTML, allowed is a path ending in .html")
    side = html.parent
    evidence_path = html.with_name(f"{html.stem}-evidence.html") if evidence is not None else None
    text = render_html(result, evidence_path.name if evidence_path else None)
    evidence_text = render_report(evidence) if evidence is not None else None
    verdict = json.dumps(result.verdict(), indent=2, allow_nan=False, default=str) + "\n"
    written = []
    try:
        side.mkdir(parents=True, exist_ok=True)
        write_atomic(side / "balance.parquet", lambda tmp: result.table.write_parquet(tmp))
        write_atomic(side / "balance.csv", lambda tmp: result.table.write_csv(tmp))
        write_text(side / "verdict.json", verdict)
        written += [side / f for f in DATA_FILES]
        if evidence_path is not None:
            write_text(evidence_path, evidence_text)
            written.append(evidence_path)
        write_text(html, text)
        written.append(html)
    except OSError as e:
        raise UserError(f"cannot write the balance report to {side}: {e.strerror or e}") from None
    if pdf is not None:
        with writing(pdf):
            Path(pdf).parent.mkdir(parents=True, exist_ok=True)
            print_pdf(html, Path(pdf))
        written.append(Path(pdf))
    return written
