"""Plain-language findings from an analysis. A claim that something differs is stated as
a finding only when its test is significant (Benjamini-Hochberg corrected where many
are tested at once); what was tested and found consistent with balance is listed
separately as a check, so the reader sees both what was found and what was looked at.
Descriptive rates (how often games end a certain way) are findings with their interval.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from analysis import stats
from analysis.metrics import RunAnalysis
from analysis.stats import Rate

__all__ = ["Finding", "findings", "checks", "pct", "rate_text", "points", "pvalue"]

MAX_COMPONENT_FINDINGS = 5
MAX_MATCHUP_FINDINGS = 5


@dataclass(frozen=True)
class Finding:
    section: str  # the report section holding the evidence
    text: str  # one sentence, numbers included


def _decimals(half_width: float) -> int:
    """Enough decimals (of a percentage) to show the interval, no more."""
    if not math.isfinite(half_width) or half_width <= 0:
        return 1
    return int(min(2, max(0, 1 - math.floor(math.log10(half_width * 100)))))


def pct(x: float, decimals: int = 1) -> str:
    return f"{100 * x:.{decimals}f}%"


def rate_text(r: Rate) -> str:
    """"51.03% (95% CI 50.94–51.12%)"."""
    d = _decimals((r.high - r.low) / 2)
    return f"{pct(r.value, d)} (95% CI {100 * r.low:.{d}f}–{pct(r.high, d)})"


def points(diff: float, low: float, high: float) -> str:
    """A difference of rates in percentage points with its interval."""
    d = _decimals((high - low) / 2)
    return f"{100 * diff:+.{d}f} points, 95% CI {100 * low:+.{d}f} to {100 * high:+.{d}f}"


def pvalue(p: float) -> str:
    """A p or q value for a table: three digits, and no "0" where double precision
    underflowed (a 1M-game run makes p values far below 1e-300)."""
    if p < 1e-300:
        return "< 1e-300"
    return f"{p:.2e}" if p < 1e-3 else f"{p:.3g}"


def _p(p: float, name: str = "p") -> str:
    return f"{name} < 0.001" if p < 0.001 else f"{name} = {p:.3f}"


def _confounded(a: RunAnalysis) -> str:
    """A caveat when seats and strategies are tied together by the seating."""
    if a.run.manifest.get("seating") == "fixed" and len(a.strategies.names) > 1:
        return " (seating was fixed, so this mixes the seat with the strategy in it)"
    return ""


def _seat_findings(a: RunAnalysis) -> tuple[list[Finding], list[str]]:
    s, fair = a.seats, 1 / a.run.players
    found, checked = [], []
    d = s.first_vs_rest
    first = f"The first player wins {rate_text(s.first)} of games against a fair {pct(fair)}"
    if s.first.p_value is not None and s.first.p_value < stats.ALPHA:
        edge = "advantage" if s.first.value > fair else "disadvantage"
        found.append(Finding("seat-balance", f"{first}: a significant first-player {edge} "
                             f"(against the other seats: {points(d.value, d.low, d.high)}; {_p(d.p_value)}){_confounded(a)}."))
    else:
        checked.append(f"{first}; no significant first-player effect ({_p(s.first.p_value or 1.0)}).")
    # With two seats and seat 1 always moving first, "seats equal" is the first-player
    # test again: say it once.
    if a.run.players == 2 and (s.first.successes, s.first.n) == (s.win[0].successes, s.win[0].n):
        return found, checked
    if s.p_value < stats.ALPHA:
        uneven = [f"seat {i + 1} {rate_text(r)}" for i, r in enumerate(s.win)
                  if r.p_value is not None and r.p_value < stats.ALPHA]
        found.append(Finding("seat-balance", f"Seats do not win equally often (χ² = {s.chi2:.1f}, "
                             f"df = {a.run.players - 1}, {_p(s.p_value)}): {'; '.join(uneven)} "
                             f"against a fair {pct(fair)}{_confounded(a)}."))
    else:
        checked.append(f"All seats win equally often within chance (χ² = {s.chi2:.1f}, "
                       f"df = {a.run.players - 1}, {_p(s.p_value)}).")
    return found, checked


def _matchup_findings(a: RunAnalysis) -> list[Finding]:
    """The significant head-to-heads (BH-corrected over all pairs), strongest first;
    the skill-edge pair is already stated."""
    st, m = a.strategies, a.strategies.matchups
    k = len(m.names)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k) if m.games[i, j] > 0]
    rates = [m.rate(i, j) for i, j in pairs]
    q = stats.benjamini_hochberg(np.array([r.p_value if r.p_value is not None else 1.0 for r in rates]))
    said = {frozenset(st.skill_edge[:2])} if st.skill_edge else set()
    found = []
    for (i, j), r, qv in sorted(zip(pairs, rates, q), key=lambda x: -abs(x[1].value - 0.5)):
        if qv >= stats.ALPHA or frozenset((m.names[i], m.names[j])) in said:
            continue
        if r.value < 0.5:
            i, j, r = j, i, m.rate(j, i)
        found.append(Finding("strategies", f"{m.names[i]} finishes ahead of {m.names[j]} in "
                             f"{rate_text(r)} of their meetings ({_p(qv, 'q')})."))
    return found[:MAX_MATCHUP_FINDINGS]


def _strategy_findings(a: RunAnalysis) -> tuple[list[Finding], list[str]]:
    st = a.strategies
    found, checked = [], []
    if st.skill_edge is not None:
        best, worst, r = st.skill_edge
        text = f"Skill: the strongest bot, {best}, finishes ahead of the weakest, {worst}, in {rate_text(r)} of their meetings"
        if r.p_value is not None and r.p_value < stats.ALPHA:
            found.append(Finding("strategies", f"{text}."))
        else:
            checked.append(f"{text}; not significantly different from 50% ({_p(r.p_value or 1.0)}).")
    found.extend(_matchup_findings(a))
    return found, checked


def _component_findings(a: RunAnalysis) -> tuple[list[Finding], list[str]]:
    c = a.components
    significant = c.filter("significant")
    found = []
    for r in significant.head(MAX_COMPONENT_FINDINGS).iter_rows(named=True):
        what = r["feature"] if r["threshold"] == 1 else f"{r['feature']} ≥ {r['threshold']}"
        direction = "raises" if r["diff"] > 0 else "lowers"
        found.append(Finding("components",
                             f"Having {what} ({pct(r['share'])} of players) {direction} the win rate "
                             f"from {pct(r['win_without'])} to {pct(r['win_with'])}: "
                             f"{points(r['diff'], r['diff_low'], r['diff_high'])}; {_p(r['q_value'], 'q')}."))
    null = len(c) - len(significant)
    checked = [f"{null} of {len(c)} features show no significant link to winning after the "
               f"false-discovery correction."] if null else []
    return found, checked


def _outcome_findings(a: RunAnalysis) -> list[Finding]:
    o = a.outcomes
    found = []
    if len(o.end_reasons) > 1:
        for reason, r in o.end_reasons:
            found.append(Finding("outcomes", f"{rate_text(r)} of games end by {reason}."))
    if o.shared.successes > 0:
        found.append(Finding("outcomes", f"{rate_text(o.shared)} of games end in a shared victory."))
    if o.close.n:
        found.append(Finding("outcomes", f"{rate_text(o.close)} of games with a sole winner are decided "
                             f"by at most {o.close_margin} point{'s' if o.close_margin > 1 else ''}."))
    return found


def _quality_findings(a: RunAnalysis) -> list[Finding]:
    q = a.quality
    if q is None:
        return []
    found = [Finding("game-quality", f"The eventual winner was behind at some checkpoint in "
                     f"{rate_text(q.winner_trailed)} of games with a sole winner.")]
    if len(q.checkpoints) > 1:
        found.append(Finding("game-quality", f"The player leading after {q.checkpoints[0]} goes on to win "
                             f"{rate_text(q.winner_led[0])} of games."))
    mean, low, high = q.lead_changes.mean()
    found.append(Finding("game-quality", f"The lead changes hands {mean:.2f} times a game on average "
                         f"(95% CI {low:.2f}–{high:.2f}), counting the final result."))
    return found


def findings(a: RunAnalysis) -> list[Finding]:
    seats, _ = _seat_findings(a)
    strategies, _ = _strategy_findings(a)
    components, _ = _component_findings(a)
    return [*seats, *strategies, *components, *_outcome_findings(a), *_quality_findings(a)]


def checks(a: RunAnalysis) -> list[str]:
    """What was tested and found consistent with balance (not stated as findings)."""
    return [*_seat_findings(a)[1], *_strategy_findings(a)[1], *_component_findings(a)[1]]
