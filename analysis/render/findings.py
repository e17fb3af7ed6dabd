"""Plain-language findings from an analysis. A claim that something differs is stated as
a finding only when its test is significant (Benjamini-Hochberg corrected where many
are tested at once); what was tested and found consistent with balance is listed
separately as a check, so the reader sees both what was found and what was looked at.
Descriptive rates (how often games end a certain way) are findings with their interval.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from analysis import stats
from analysis.metrics import PositionBalance, RunAnalysis, degenerate_positions
from analysis.render.formats import decimals, nth, ordinal, p_is, pct, points, rate

__all__ = ["Finding", "findings", "checks", "pp", "position_findings", "degenerate_text", "leader_checkpoint"]

MAX_COMPONENT_FINDINGS = 5
MAX_MATCHUP_FINDINGS = 5


@dataclass(frozen=True)
class Finding:
    section: str  # the report section holding the evidence
    text: str  # one sentence, numbers included


def pp(diff: float, low: float, high: float) -> str:
    """A difference of rates for a table cell whose header names the unit (percentage
    points): "+1.23 (+0.50 to +1.96)"."""
    d = decimals((high - low) / 2)
    return f"{100 * diff:+.{d}f} ({100 * low:+.{d}f} to {100 * high:+.{d}f})"


def _confounded(a: RunAnalysis) -> str:
    """A caveat when seats and strategies are tied together by the seating."""
    if a.run.manifest.get("seating") == "fixed" and len(a.strategies.names) > 1:
        return " (seating was fixed, so this mixes the seat with the strategy in it)"
    return ""


def position_findings(pb: PositionBalance, section: str, where: str = "") -> tuple[list[Finding], list[str]]:
    """Win rate by turn position: each position whose rate differs from the fair share
    (BH over the positions) named, with the test across all positions. At two players
    the 2nd player's rate is the 1st's complement: the 1st is named alone."""
    n, fair = pb.players, 1 / pb.players
    at = f" at {n} players{where}"
    test = f"χ² = {pb.chi2:.1f}, df = {n - 1}, {p_is(pb.p_value)}"
    q = stats.benjamini_hochberg(np.array([r.p_value if r.p_value is not None else 1.0 for r in pb.win]))
    named = [i for i in range(n) if q[i] < stats.ALPHA][: 1 if n == 2 else n]
    if pb.p_value >= stats.ALPHA or not named:
        first = pb.win[0]
        return [], [f"Every turn position wins equally often within chance{at} ({test}; "
                    f"the {ordinal(0)} wins {rate(first)} against a fair {pct(fair)})."]
    named.sort(key=lambda i: -abs(pb.win[i].value - fair))
    top, rest = named[0], named[1:]
    others = "".join(f"; the {ordinal(i)} {rate(pb.win[i])} ({p_is(q[i], 'q')})" for i in rest)
    edge = "advantage" if pb.win[top].value > fair else "disadvantage"
    return [Finding(section, f"The {ordinal(top)} wins {rate(pb.win[top])}{at} against a fair "
                             f"{pct(fair)}: a turn-order {edge} ({p_is(q[top], 'q')}){others}"
                             f"{_separated(pb, test)}.")], []


def degenerate_text(spec: str, players: int, rates: list) -> str | None:
    """The flag of a mirror match where a position (almost) never or (almost) always
    wins (metrics.degenerate_positions), or None."""
    odd = degenerate_positions(rates, players)
    if not odd:
        return None
    named = "; ".join(f"the {ordinal(p)} wins {rate(rates[p])}" for p in odd)
    return (f"Degenerate play in the {spec} mirror match at {players} players: {named}, against a fair "
            f"{pct(1 / players)}. Turn order rarely does this; a bot that fails in that seat does (watch "
            "it play a game: chocosim play), so read the balance of this mirror as the bot's, not the game's.")


def _separated(pb: PositionBalance, test: str) -> str:
    """What the tests across positions show. The χ² only says the positions do not all
    win equally often; which of them differ is for the pairwise same-game tests (BH over
    the pairs) to say, and they may separate some pairs and not others."""
    if pb.players == 2:
        return f" ({test})"
    pairs = [(i, j) for i, j, _, qv in pb.pairs if qv < stats.ALPHA]
    short = [nth(i) for i in range(pb.players)]
    if not pairs:
        which = "no pair of positions differs significantly on its own"
    elif len(pairs) == len(pb.pairs):
        which = "every pair of positions differs"
    else:
        def said(ps: list[tuple[int, int]], joint: str) -> str:
            return f" {joint} ".join(f"{short[i]} from {short[j]}" for i, j in ps)

        rest = [(i, j) for i, j, _, _ in pb.pairs if (i, j) not in pairs]
        which = f"the pairwise tests separate {said(pairs, 'and')}, not {said(rest, 'or')}"
    return (f"; the positions do not all win equally often ({test}), and {which} "
            f"(same-game differences, Benjamini-Hochberg over the {len(pb.pairs)} pairs)")


def _seat_findings(a: RunAnalysis) -> tuple[list[Finding], list[str]]:
    s = a.seats
    if s is None:
        return [], []
    found, checked = position_findings(s.positions, "seat-balance")
    if len(a.run.strategies) == 1 and (odd := degenerate_text(a.run.strategies[0], a.run.players, s.positions.win)):
        found.insert(0, Finding("seat-balance", odd))
    if s.seat_is_position:
        return found, checked  # each seat always held its own position: one view
    test = f"χ² = {s.chi2:.1f}, df = {a.run.players - 1}, {p_is(s.p_value)}"
    if s.p_value < stats.ALPHA:
        uneven = [f"seat {i} {rate(r)}" for i, r in enumerate(s.win)
                  if r.p_value is not None and r.p_value < stats.ALPHA]
        found.append(Finding("seat-balance", f"Physical seats do not win equally often ({test}): "
                             f"{'; '.join(uneven)} against a fair {pct(1 / a.run.players)}{_confounded(a)}."))
    else:
        checked.append(f"Every physical seat wins equally often within chance ({test}); the turn "
                       f"position is what moved between seats.")
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
                             f"{rate(r)} of their meetings ({p_is(qv, 'q')})."))
    return found[:MAX_MATCHUP_FINDINGS]


def _strategy_findings(a: RunAnalysis) -> tuple[list[Finding], list[str]]:
    st = a.strategies
    found, checked = [], []
    if st.skill_edge is not None:
        best, worst, r = st.skill_edge
        text = f"Skill: the strongest bot, {best}, finishes ahead of the weakest, {worst}, in {rate(r)} of their meetings"
        if r.p_value is not None and r.p_value < stats.ALPHA:
            found.append(Finding("strategies", f"{text}."))
        else:
            checked.append(f"{text}; not significantly different from 50% ({p_is(r.p_value or 1.0)}).")
    found.extend(_matchup_findings(a))
    return found, checked


def _component_findings(a: RunAnalysis) -> tuple[list[Finding], list[str]]:
    """The features that are significant and large enough, one per group of features
    carrying the same information, worded as associations."""
    c = a.components
    within = " of the same bot" if len(a.strategies.names) > 1 else ""
    found, said = [], set()
    for r in c.filter("finding").iter_rows(named=True):
        if r["group"] in said:
            continue
        said.add(r["group"])
        what = r["feature"] if r["threshold"] == 1 else f"{r['feature']} ≥ {r['threshold']}"
        if r["group"] != r["feature"]:
            members = c.filter(pl.col("group") == r["group"])["feature"].to_list()
            what += f" (also standing for {', '.join(m for m in members if m != r['feature'])}: the same information)"
        found.append(Finding("components",
                             f"Players{within} who had {what} ({pct(r['share'])} of players) won "
                             f"{pct(r['win_with'])} of games against {pct(r['win_without'])} for those without: "
                             f"{points(r['diff'], r['diff_low'], r['diff_high'])}; {p_is(r['q_value'], 'q')}. "
                             f"An association, not necessarily a cause."))
        if len(found) == MAX_COMPONENT_FINDINGS:
            break
    checked = []
    null = int((~c["significant"]).sum()) if len(c) else 0
    small = int((c["significant"] & ~c["finding"]).sum()) if len(c) else 0
    if null:
        checked.append(f"{null} of {len(c)} features show no significant link to winning after the "
                       f"false-discovery correction.")
    if small:
        checked.append(f"{small} of {len(c)} features are significantly linked to winning but by less than "
                       f"{100 * a.min_effect:g} points (the evidence table lists them).")
    if positional := a.run.role_features("positional"):
        checked.append(f"{', '.join(positional)} follow from the turn position: see the seat balance.")
    if a.breakdowns:
        checked.append(f"{len(a.breakdowns)} features are outcomes or parts of the final score: they are shown "
                       f"as score breakdowns, not as effects on winning.")
    return found, checked


def _setup_findings(a: RunAnalysis) -> tuple[list[Finding], list[str]]:
    found, checked = [], []
    for e in a.setup:
        test = f"χ² = {e.chi2:.1f}, df = {len(e.values) - 1}, {p_is(e.q_value, 'q')}"
        if e.q_value < stats.ALPHA:
            lo, hi = int(np.argmin([r.value for r in e.win])), int(np.argmax([r.value for r in e.win]))
            found.append(Finding("setup", f"The win rate depends on the dealt {e.feature} ({test}): from "
                                 f"{rate(e.win[lo])} with {e.feature} = {e.values[lo]} to "
                                 f"{rate(e.win[hi])} with {e.feature} = {e.values[hi]}."))
        else:
            checked.append(f"Every dealt {e.feature} wins equally often within chance ({test}).")
    return found, checked


def _solo_findings(a: RunAnalysis) -> list[Finding]:
    if not a.solo:
        return []
    st = a.strategies
    found = [Finding("strategies", f"{name} wins the solo game in {rate(r)} of games.")
             for name, r in zip(st.names, st.win)]
    for b in a.breakdowns:
        if b.feature in ("objectives_met", "target_met"):
            found.append(Finding("breakdowns", f"Mean {b.feature}: {b.mean[0]:.2f} (95% CI {b.mean[1]:.2f}–{b.mean[2]:.2f})."))
    return found


def _outcome_findings(a: RunAnalysis) -> list[Finding]:
    o = a.outcomes
    found = []
    if len(o.end_reasons) > 1:
        for reason, r in o.end_reasons:
            found.append(Finding("outcomes", f"{rate(r)} of games end by {reason}."))
    if o.shared.successes > 0:
        found.append(Finding("outcomes", f"{rate(o.shared)} of games end in a shared victory."))
    if o.close.n:
        found.append(Finding("outcomes", f"{rate(o.close)} of games with a sole winner are decided "
                             f"by at most {o.close_margin} score point{'s' if o.close_margin > 1 else ''}."))
    return found


def leader_checkpoint(a: RunAnalysis) -> int | None:
    """The first checkpoint where most games have a sole leader (earlier ones, where
    nearly everyone is still level, say little); None if there is none."""
    q = a.quality
    if q is None:
        return None
    return next((c for c, (r, t) in enumerate(zip(q.leader_wins, q.tied))
                 if r is not None and t.value < 0.5), None)


def _quality_findings(a: RunAnalysis) -> list[Finding]:
    q = a.quality
    if q is None:
        return []
    found = [Finding("game-quality", f"The eventual winner was behind at some checkpoint in "
                     f"{rate(q.winner_trailed)} of games with a sole winner.")]
    c = leader_checkpoint(a)
    if c is not None and len(q.checkpoints) > 1:
        tied = q.tied[c]
        ties = (f"; in the other {rate(tied)} of games two or more players were tied for the lead"
                if tied.successes else "")
        found.append(Finding("game-quality", f"The sole leader after {q.checkpoints[c]} goes on to win "
                             f"{rate(q.leader_wins[c])} of the games it leads{ties}."))
    mean, low, high = q.lead_changes.mean()
    found.append(Finding("game-quality", f"The lead changes hands {mean:.2f} times a game on average "
                         f"(95% CI {low:.2f}–{high:.2f}), counting the final result over all games."))
    return found


def findings(a: RunAnalysis) -> list[Finding]:
    seats, _ = _seat_findings(a)
    strategies, _ = _strategy_findings(a)
    components, _ = _component_findings(a)
    setup, _ = _setup_findings(a)
    return [*_solo_findings(a), *seats, *strategies, *setup, *components, *_outcome_findings(a),
            *_quality_findings(a)]


def checks(a: RunAnalysis) -> list[str]:
    """What was tested and found consistent with balance (not stated as findings)."""
    return [*_seat_findings(a)[1], *_strategy_findings(a)[1], *_setup_findings(a)[1],
            *_component_findings(a)[1]]
