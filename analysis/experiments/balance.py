"""The balance experiment: turn-position balance among players of a stated skill.

A balance verdict is a claim about players of some skill, so it is measured where play is
equal and at every skill the game's bots reach:

- At each table size, a ladder of rungs from the weakest bot to the strongest (the game's
  bots, its tuned weights where validated at that size, the search bot at growing
  budgets). Each rung plays a mirror match (every seat the same bot): the win rate by turn
  position there is about turn order and nothing else. Lineups of two different rungs
  (adjacent on the ladder, seats alternating) only place the rungs on one Elo scale
  (Bradley-Terry); they never enter the position verdict.
- The headline is the strongest rung's, and it says whether the verdict has converged:
  the two strongest rungs' position rates agree within a margin at every position (the
  paired equivalence test of `compare`, the mirrors sharing their seeds), or still move
  with skill.
- What would balance it, at the strongest rung: a score bonus by turn position (komi),
  estimated from the final scores and confirmed by a paired run with the bonus as a
  house rule (`compensation.points`), and the fair point of each knob the game declares
  (GameSpec.position_knobs) from a sweep of its values on the same seeds.

Games go where they narrow the verdict most within a time budget (`experiments.budget`:
a pilot prices every cell, then the cells whose games shrink the widest interval the most
per second play more). Re-running resumes and extends every run directory.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import polars as pl

from analysis.display import Shown
from analysis.experiments import budget
from analysis.experiments.balance_plan import (COMPENSATION, DEFAULT_MARGIN, NEEDS, SEARCH, TUNED, Cell, Needs, Plan,
                                               Withheld, default_ladder, plan, same_value)
from analysis.experiments.budget import Played, play
from analysis.experiments.komi import Komi, estimate_komi, position_table
from analysis.experiments.skill import BUDGET
from simcore.errors import UserError
from simcore.params import flatten
from simcore.rundir import MANIFEST, finished_games

__all__ = ["SEARCH", "BUDGET", "TUNED", "DEFAULT_MARGIN", "COMPENSATION", "NEEDS", "Needs", "Withheld", "Cell", "Plan",
           "plan", "default_ladder", "play", "Played", "RungResult", "Convergence", "KnobPoint", "Knob",
           "SizeVerdict", "BalanceResult", "analyze", "convergence"]


# ---- the analysis ----

@dataclass(frozen=True)
class RungResult:
    spec: str
    path: Path
    games: int
    rates: list[Any]  # Rate per turn position (tested against the fair share)
    rating: tuple[float, float, float] | None  # Elo, 95% interval (None: not rated)
    stopped: str = ""


@dataclass(frozen=True)
class Convergence:
    """The strongest rung against the one below it, paired on the mirrors' shared seeds."""

    top: str
    second: str
    state: Literal["converged", "moves", "undecided", "too few games"]
    changes: list[tuple[float, float, float, float]]  # per position: top minus second, low, high (points), q
    margin: float
    games: int

    @property
    def enough(self) -> bool:
        return self.games >= NEEDS.agreement

    @property
    def agreement(self) -> float | None:
        """Points: the smallest margin within which the two rungs are shown to agree at
        every position (the largest bound of any interval of the change, by absolute
        value); None with too few games."""
        if not self.enough or not self.changes:
            return None
        return max(max(abs(lo), abs(hi)) for _, lo, hi, _ in self.changes)

    @property
    def shown_change(self) -> tuple[int, float] | None:
        """The position and the least change (points, by absolute value) the games show
        there: the interval's bound nearest zero, at the position whose interval lies
        farthest from zero; None when every interval holds zero or with too few games."""
        if not self.enough:
            return None
        shown = [(p, lo if lo > 0 else -hi) for p, (_, lo, hi, _) in enumerate(self.changes) if lo > 0 or hi < 0]
        # The earliest position among equals (at two players the two mirror each other).
        return max(shown, key=lambda x: (round(x[1], 9), -x[0])) if shown else None


@dataclass(frozen=True)
class KnobPoint:
    value: Any
    games: int
    rates: list[Any]  # Rate per position


@dataclass(frozen=True)
class Knob:
    param: str
    rulebook: Any
    points: list[KnobPoint]  # in the order of the game's grid
    fair: Any  # analysis.stats.Crossing of the first player's advantage, or None
    fair_rates: list[float] | None  # every position's rate interpolated at the fair point
    games: int = 0  # paired games every value played (the first games of each run)

    @property
    def enough(self) -> bool:
        return self.games >= NEEDS.fair_point


@dataclass(frozen=True)
class SizeVerdict:
    players: int
    rungs: list[RungResult]  # ladder order, weakest first
    strongest: str  # the highest-rated rung (the last one when the rungs cannot be rated)
    ratings: Any  # analysis.ratings.Ratings or None
    matchups: Any  # analysis.ratings.Matchups of the meetings
    convergence: Convergence | None  # None with a single rung
    komi: Komi | None
    knobs: list[Knob]
    reversals: list[str]  # findings that hold at one rung and reverse at another
    notes: list[str]
    komi_note: str = ""  # why there is no komi (compensation off, or a bonus cannot decide the game)
    withheld: list[Withheld] = field(default_factory=list)  # statements too few games support

    def lacks(self, kind: str) -> Withheld | None:
        return next((w for w in self.withheld if w.kind == kind), None)

    def rung(self, spec: str) -> RungResult:
        return next(r for r in self.rungs if r.spec == spec)

    @property
    def top(self) -> RungResult:
        return self.rung(self.strongest)


@dataclass(frozen=True)
class BalanceResult(Shown):
    game: str
    title: str
    sizes: list[SizeVerdict]
    table: pl.DataFrame  # tidy: players, rung, rating..., position, win_rate, low, high, games
    margin: float
    precision: float
    seed: int
    changed: list[str]  # house-rule params that differ from the rulebook
    runs: list[dict[str, Any]]  # every run directory: players, kind, label, path, games
    wall_seconds: float
    plans: list[budget.SizePlan] = field(default_factory=list)  # what deciding each table size costs
    short: list[dict[str, Any]] = field(default_factory=list)  # runs holding fewer games than their manifest asks
    budget_seconds: float | None = None  # the time budget (None: none)

    def verdict(self) -> dict[str, Any]:
        """The verdict as plain JSON values (verdict.json)."""
        out = {"game": self.game, "margin_points": self.margin, "precision_points": self.precision,
               "seed": self.seed, "house_rules": self.changed, "needs_games": asdict(NEEDS), "sizes": []}
        for v in self.sizes:
            top = v.top
            c = v.convergence
            item: dict[str, Any] = {
                "players": v.players, "rung": v.strongest, "games": top.games,
                "rating": None if top.rating is None else list(top.rating),
                "rates": [{"position": p, "win_rate": r.value, "low": r.low, "high": r.high}
                          for p, r in enumerate(top.rates)],
                # None: not measured (one rung) or too few games to say.
                "converged": None if c is None or not c.enough else c.state == "converged",
                "convergence": None if c is None else _convergence_json(c),
                "compensation": _compensation_json(v),
                "reversals": v.reversals, "notes": v.notes,
                "withheld": [{"statement": w.kind, "what": w.what, "games": w.games, "needed": w.needed}
                             for w in v.withheld]}
            out["sizes"].append(item)
        out["plans"] = [x.json() for x in self.plans]
        out["short_runs"] = [{k: r[k] for k in ("players", "kind", "label", "path", "games", "asked", "missing")}
                             for r in self.short]
        out["runs"] = self.runs  # every run directory, its games and the CPU seconds this call spent on it
        out["wall_seconds"], out["budget_seconds"] = self.wall_seconds, self.budget_seconds
        return _finite(out)


def _finite(x: Any) -> Any:
    """JSON has no infinity or NaN: a bound that does not exist is null."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    return x


def _convergence_json(c: Convergence) -> dict[str, Any]:
    """The paired changes only where the games suffice: below that, no effect size."""
    shown = c.shown_change
    return {"state": c.state, "against": c.second, "games": c.games, "agreement_points": c.agreement,
            "shown_change": None if shown is None else {"position": shown[0], "points": shown[1]},
            "changes_points": [{"position": p, "change": x[0], "low": x[1], "high": x[2], "q": x[3]}
                               for p, x in enumerate(c.changes)] if c.enough else []}


def _compensation_json(v: SizeVerdict) -> dict[str, Any]:
    out: dict[str, Any] = {"komi": None, "komi_note": v.komi_note or None, "knobs": []}
    if k := v.komi:
        out["komi"] = {"points": k.points, "estimate": [list(e) for e in k.estimate],
                       "predicted_rates": k.predicted,
                       "confirmed_rates": None if k.confirmed is None else
                       [{"win_rate": r.value, "low": r.low, "high": r.high} for r in k.confirmed],
                       "confirm_games": k.confirm_games, "balanced": k.balanced, "held_games": k.held}
    for knob in v.knobs:
        out["knobs"].append({"param": knob.param, "rulebook": knob.rulebook, "games": knob.games,
                             "fair_point": None if knob.fair is None else
                             {"value": knob.fair.x, "low": knob.fair.low, "high": knob.fair.high},
                             "fair_rates": knob.fair_rates})
    return out


def _rates(path: Path, players: int) -> tuple[list[Any], int]:
    from analysis import stats
    from analysis.summary import summarize

    s = summarize(path)
    table = s.by_position.sort("position")
    return [stats.rate_vs(w, s.games, 1 / players) for w in table["wins"].to_list()], s.games


def convergence(top: Path, second: Path, top_spec: str, second_spec: str, margin: float) -> Convergence:
    """Converged when every position's paired change (top minus second) has its 95%
    interval within ±margin points; still moving when a change is significant (BH over
    the positions) and its whole interval lies beyond the margin; else undecided. Fewer
    paired games than NEEDS.agreement decide nothing ("too few games")."""
    from analysis.experiments import compare as cmp

    paired = min(finished_games(top), finished_games(second))
    if paired < NEEDS.agreement:
        return Convergence(top_spec, second_spec, "too few games", [], margin, paired)
    c = cmp.compare_runs(second, [top], margin=margin, keys=lambda k: k.startswith("pos"))[0]
    changes = [_widened(100 * r.change.value, 100 * r.change.low, 100 * r.change.high, r.q_value, c.games)
               for r in c.rows]
    if c.games < NEEDS.agreement or not changes:
        state = "too few games"
    elif all(-margin <= lo and hi <= margin for _, lo, hi, _ in changes):
        state = "converged"
    elif any(q < 0.05 and (lo > margin or hi < -margin) for _, lo, hi, q in changes):
        state = "moves"
    else:
        state = "undecided"
    return Convergence(top_spec, second_spec, state, changes, margin, c.games)


def _widened(change: float, low: float, high: float, q: float, games: int) -> tuple[float, float, float, float]:
    """A paired change whose normal interval has no width (every game changed by the
    same amount, most often by nothing) has only shown that no other change was seen:
    by the rule of three, games changing otherwise are below 3/games at 95%, and each
    moves the mean by at most 2 (a win share goes from -1 to 1), so the interval is
    widened to ±600/games points around the change, within ±100."""
    if high - low > 1e-9:
        return change, low, high, q
    w = 600 / games
    return change, max(change - w, -100.0), min(change + w, 100.0), q


def _ratings(rungs: list[str], meetings: list[Path]):
    """Bradley-Terry ratings of the rungs from their meetings, the game the unit of the
    intervals (at 3+ players one game's comparisons are correlated)."""
    from analysis.experiments.skill import matchups_of, tally
    from analysis.ratings import bradley_terry

    m = matchups_of([tally(d) for d in meetings if d.is_dir()], rungs)
    return m, (bradley_terry(m) if len(rungs) > 1 and m.games.sum() > 0 else None)


def _reversals(rungs: list[RungResult], min_change: float = 0.05) -> list[str]:
    """Findings that hold at one rung and reverse at another, within each rung's mirror:
    a component or behaviour whose association with winning is a finding of opposite
    signs at two rungs; and how decided the game is by its last interim standings (the
    sole leader's win rate there) when the strongest and the weakest rung differ by at
    least `min_change` (Newcombe interval, significant)."""
    from analysis import metrics, stats

    signs: dict[str, dict[str, float]] = {}
    leaders = {}
    for r in rungs:
        a = metrics.analyze(r.path)
        for row in a.components.filter(pl.col("finding")).iter_rows(named=True):
            signs.setdefault(row["feature"], {})[r.spec] = row["diff"]
        if a.quality is not None and a.quality.leader_wins and a.quality.leader_wins[-1] is not None:
            leaders[r.spec] = (a.quality.checkpoints[-1], a.quality.leader_wins[-1])
    out = []
    for feature, by in signs.items():
        up = [s for s, d in by.items() if d > 0]
        down = [s for s, d in by.items() if d < 0]
        if up and down:
            out.append(f"Having {feature} goes with winning more under {', '.join(up)} "
                       f"({', '.join(f'{100 * by[s]:+.1f}' for s in up)} points) but with winning less "
                       f"under {', '.join(down)} ({', '.join(f'{100 * by[s]:+.1f}' for s in down)} points).")
    ends = [r.spec for r in rungs if r.spec in leaders]
    if len(ends) >= 2:
        (cw, weak), (cs, strong) = leaders[ends[0]], leaders[ends[-1]]
        d = stats.difference(strong.successes, strong.n, weak.successes, weak.n)
        if cw == cs and d.p_value < stats.ALPHA and abs(d.value) >= min_change:
            out.append(f"The sole leader at {cs} goes on to win {100 * strong.value:.1f}% of games with "
                       f"{ends[-1]} but {100 * weak.value:.1f}% with {ends[0]} ({100 * d.value:+.1f} points, "
                       f"95% CI {100 * d.low:+.1f} to {100 * d.high:+.1f}): skill changes how open the game "
                       "still is by then.")
    return out


def _knob(p: Plan, players: int, rung: RungResult) -> list[Knob]:
    from analysis import stats

    out = []
    base_params = p.params(players)
    for name, values in p.game.position_knobs.items():
        rulebook = flatten(base_params.model_dump(mode="json")).get(name)
        cells = {c.label: c for c in p.knob_cells(players, rung.spec)}
        points, wins_by_value = [], []
        for v in values:
            path = rung.path if same_value(base_params, name, v) else cells[f"{name}={v}"].path
            if not (path / MANIFEST).is_file() or finished_games(path) == 0:
                continue
            rates, games = _rates(path, players)
            points.append(KnobPoint(v, games, rates))
            wins_by_value.append(position_table(path, players).wins)
        fair, fair_rates = None, None
        numeric = all(isinstance(pt.value, int | float) and not isinstance(pt.value, bool) for pt in points)
        size = min((len(w) for w in wins_by_value), default=0)
        if len(points) >= 2 and numeric and size >= NEEDS.fair_point:
            x = np.array([float(pt.value) for pt in points])
            order = np.argsort(x)
            first = np.stack([w[:size, 0] for w in wins_by_value], axis=1)[:, order] - 1 / players
            blocks = min(1000, size)
            edges = np.linspace(0, size, blocks + 1).astype(int)
            sums = np.add.reduceat(first, edges[:-1], axis=0)
            counts = np.diff(edges).astype(float)
            reps = stats.block_bootstrap(sums, np.repeat(counts[:, None], len(x), axis=1))
            fair = stats.zero_crossing(x[order], first.mean(axis=0), first.std(axis=0) / math.sqrt(size),
                                       replicates=reps)
            if fair is not None and fair.high - fair.low < 1e-12:
                # Every resample crossed at one place (games without variation): the
                # sign change is shown between the values around it, not the point.
                xs = x[order]
                k = int(np.clip(np.searchsorted(xs, fair.x), 1, len(xs) - 1))
                fair = replace(fair, low=float(xs[k - 1]), high=float(xs[k]))
            if fair is not None and math.isfinite(fair.x):
                xs = x[order]
                fair_rates = [float(np.interp(fair.x, xs, [points[i].rates[q].value for i in order]))
                              for q in range(players)]
        out.append(Knob(name, rulebook, points, fair, fair_rates, size))
    return out


def analyze(p: Plan, played: Sequence[Played] = (), wall_seconds: float = 0.0, *, full: bool = True) -> BalanceResult:
    """The verdict of every table size from the plan's run directories (without `full`,
    only what the compensation runs need: the strongest rung and its komi)."""
    state = {s.cell.path: s for s in played}
    sizes, rows, runs = [], [], []
    for n in p.sizes:
        rungs_specs = p.ladders[n]
        mirror_cells = [p.mirror(n, r) for r in rungs_specs]
        # A rung the budget did not reach is named.
        present = [c for c in mirror_cells if finished_games(c.path) >= 1]
        if not present:
            raise UserError(f"no mirror match at {n} players has a game yet: give more --minutes")
        meetings = p.meetings(n)
        matchups, ratings = _ratings(rungs_specs, [c.path for c in meetings])
        results = []
        for c in present:
            rates, games = _rates(c.path, n)
            rating = None
            if ratings is not None:
                i = ratings.names.index(c.label)
                rating = (float(ratings.elo[i]), float(ratings.low[i]), float(ratings.high[i]))
            results.append(RungResult(c.label, c.path, games, rates, rating,
                                      state[c.path].stopped if c.path in state else ""))
        rated = [r for r in results if r.rating is not None]
        order = sorted(rated, key=lambda r: r.rating[0]) if len(rated) == len(results) else results
        strongest = order[-1].spec
        notes = list(p.notes[n])
        if order[-1].spec != results[-1].spec:
            notes.append(f"The ratings put {order[-1].spec} above {results[-1].spec}, the ladder's last rung: "
                         "the verdict is the highest-rated rung's.")
        if missing := [c.label for c in mirror_cells if c not in present]:
            notes.append(f"Not played within the budget: the mirror of {', '.join(missing)}.")
        conv = None
        if len(order) >= 2:
            conv = convergence(order[-1].path, order[-2].path, order[-1].spec, order[-2].spec, p.margin)
        top = next(r for r in results if r.spec == strongest)
        komi = None
        if p.compensation and p.game.bonus_decides:
            komi = _komi(p, n, top)
        komi_note = ""
        withheld = []
        if top.games < NEEDS.rate:
            withheld.append(Withheld("rate", "whether turn order matters", top.games, NEEDS.rate))
        if conv is not None and not conv.enough:
            withheld.append(Withheld("agreement", "whether the verdict moves with skill", conv.games,
                                     NEEDS.agreement))
        if not p.compensation:
            komi_note = "Compensation was not estimated (--no-compensation)."
        elif komi is None and p.game.bonus_decides:
            withheld.append(Withheld("bonus", "a score bonus that would balance the positions", top.games,
                                     NEEDS.bonus))
            komi_note = f"A score bonus: too few games ({top.games:,}; about {NEEDS.bonus:,} needed)."
        elif not p.game.bonus_decides:
            komi_note = (f"A score bonus by turn position cannot balance {p.game.title}: its winner is decided "
                         f"during play, not by the final scores, so {COMPENSATION} changes no result.")
        if komi is not None and komi.confirmed is not None and komi.balanced is None:
            withheld.append(Withheld("bonus", "whether the bonus balances the positions", komi.confirm_games,
                                     NEEDS.bonus))
        knobs = _knob(p, n, top) if p.compensation and full else []
        withheld += [Withheld("fair_point", f"the fair point of {k.param}", k.games, NEEDS.fair_point)
                     for k in knobs if not k.enough]
        reversals = []
        if full:
            withheld += [Withheld("reversal", f"findings that change with skill at {r.spec}", r.games,
                                  NEEDS.reversal) for r in results if r.games < NEEDS.reversal]
            reversals = _reversals([r for r in results if r.games >= NEEDS.reversal])
        sizes.append(SizeVerdict(n, results, strongest, ratings, matchups, conv, komi, knobs,
                                 reversals, notes, komi_note, withheld))
        for r in results:
            for pos, rate in enumerate(r.rates):
                rows.append({"players": n, "rung": r.spec, "strongest": r.spec == strongest,
                             "rating": None if r.rating is None else r.rating[0],
                             "rating_low": None if r.rating is None else r.rating[1],
                             "rating_high": None if r.rating is None else r.rating[2],
                             "position": pos, "win_rate": rate.value, "low": rate.low, "high": rate.high,
                             "fair": 1 / n, "games": r.games})
        cells = [*mirror_cells, *meetings]
        if p.compensation:
            cells += p.knob_cells(n, strongest)
            if komi is not None and any(komi.points):
                cells.append(p.komi_cell(n, strongest, komi.points))
        for c in cells:
            if (c.path / MANIFEST).is_file():
                runs.append({"players": n, "kind": c.kind, "label": c.label, "path": str(c.path),
                             "games": finished_games(c.path)})
    table = pl.DataFrame(rows, schema={"players": pl.Int64, "rung": pl.String, "strongest": pl.Boolean,
                                       "rating": pl.Float64, "rating_low": pl.Float64, "rating_high": pl.Float64,
                                       "position": pl.Int64, "win_rate": pl.Float64, "low": pl.Float64,
                                       "high": pl.Float64, "fair": pl.Float64, "games": pl.Int64})
    base = flatten(p.game.params(players=p.sizes[0]).model_dump(mode="json"))
    mine = flatten(p.params(p.sizes[0]).model_dump(mode="json"))
    changed = [f"{k} = {mine[k]} (rulebook {base.get(k)})" for k in sorted(mine)
               if k != "players" and mine[k] != base.get(k)]
    return BalanceResult(p.game.name, p.game.title, sizes, table, p.margin, p.precision, p.seed,
                         changed, runs, wall_seconds)


def _komi(p: Plan, n: int, top: RungResult) -> Komi | None:
    """The komi estimated from the strongest rung's mirror, and its paired confirmation
    run where one was played."""
    from analysis.experiments import compare as cmp

    table = position_table(top.path, n, p.game)
    if table.games < NEEDS.bonus:
        return None
    k = estimate_komi(table)
    if not any(k.points):
        return k
    cell = p.komi_cell(n, top.spec, k.points)
    if finished_games(cell.path) == 0:
        return k
    rates, games = _rates(cell.path, n)
    if games < NEEDS.bonus:  # neither the change nor "balanced" from a handful of games
        return replace(k, confirmed=rates, confirm_games=games)
    c = cmp.compare_runs(top.path, [cell.path], margin=p.margin, keys=lambda key: key.startswith("pos"))[0]
    changes = [(100 * r.change.value, 100 * r.change.low, 100 * r.change.high, r.q_value) for r in c.rows]
    balanced = all(abs(r.low - 1 / n) * 100 <= p.margin and abs(r.high - 1 / n) * 100 <= p.margin for r in rates)
    return replace(k, confirmed=rates, changes=changes, confirm_games=games, balanced=balanced)
