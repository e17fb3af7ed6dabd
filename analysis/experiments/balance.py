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

import hashlib
import json
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import numpy as np
import polars as pl

import strategies
from analysis.experiments import budget
from analysis.experiments.budget import Played, play
from analysis.experiments.komi import Komi, estimate_komi, position_table
from analysis.skill import BUDGET, search_budget, with_arg
from simcore.errors import UserError
from simcore.params import Params, flatten
from simcore.registry import GameSpec, get_game
from simcore.rundir import MANIFEST, finished_games

__all__ = ["SEARCH", "BUDGET", "TUNED", "DEFAULT_MARGIN", "NEEDS", "Needs", "Withheld", "Cell", "Plan", "plan",
           "default_ladder",
           "play", "Played", "RungResult", "Convergence", "KnobPoint", "Knob", "SizeVerdict",
           "BalanceResult", "analyze", "convergence", "COMPENSATION"]

SEARCH = "mcts"  # the search bot: the top rungs, at its default budget and doublings of it
TUNED = "heuristic(weights=tuned)"
BASE_RUNGS = ("random", "greedy", "heuristic")
COMPENSATION = "compensation.points"  # every game's score bonus by turn position
DEFAULT_MARGIN = 1.0  # points: "converged" when the top two rungs agree within it


@dataclass(frozen=True)
class Needs:
    """The smallest sample behind each kind of statement the balance verdict makes. Below
    it the verdict withholds the statement and says "too few games (N; about M needed)":
    no advantage, no "balanced", no "converged" or "moves", no fair point, no bonus and
    no effect size. The intervals behind the statements are asymptotic (Wilson, normal
    paired differences) or bootstraps over games, which a handful of games cannot
    support: a bootstrap of 20 games has few distinct resamples, and a paired change
    whose games all agree has a zero-width normal interval whatever its sample."""

    rate: int = 30  # games of a mirror: its position rates called an advantage, or balanced
    agreement: int = 50  # paired games of the top two rungs: converged, moves, the agreement reached
    fair_point: int = 100  # paired games at every value of a knob: its fair point, or that no value crosses
    bonus: int = 100  # games of the strongest mirror (a bonus estimated) and of the paired run confirming it
    reversal: int = 100  # games of a rung's mirror for its findings to count as changing with skill


NEEDS = Needs()


@dataclass(frozen=True)
class Withheld:
    """A statement the verdict does not make: too few games for it."""

    kind: str  # a field of Needs
    what: str  # what it would have said, e.g. "whether turn order matters"
    games: int
    needed: int

Kind = Literal["mirror", "meeting", "komi", "knob"]


# ---- the plan ----

def default_ladder(game: str, players: int, *, search: str | None = SEARCH, doublings: int = 1,
                   lowest: str | None = None) -> tuple[list[str], list[str]]:
    """The rungs at one table size, weakest first, and notes on the rungs left out: the
    game's random, greedy and heuristic bots, the shipped tuned heuristic where its
    weights were validated at this size, and the search bot at its budget and
    `doublings` doublings of it. `lowest` drops the rungs below it."""
    bots = strategies.available(game)
    rungs = [r for r in BASE_RUNGS if r in bots]
    notes = []
    if "heuristic" in bots and "tuned" in strategies.bundled_weights(game, "heuristic"):
        if players in (strategies.validated_players(game, TUNED) or ()):
            rungs.append(TUNED)
        else:
            notes.append(f"{TUNED} is left out at {players} players: its weights were not "
                         "validated at this table size")
    if search is not None:
        if strategies.parse_spec(search)[0] not in bots and ":" not in search:
            raise UserError(f"--search {search!r}: {game} has no such bot; available: {', '.join(bots)}")
        b = search_budget(game, search, "--search")
        rungs += [with_arg(search, BUDGET, b * 2**k) for k in range(doublings + 1)]
    if lowest is not None:
        if lowest not in rungs:
            raise UserError(f"--lowest {lowest!r} is not a rung of the ladder ({', '.join(rungs)})")
        rungs = rungs[rungs.index(lowest):]
    return rungs, notes


def _check_rung(game: str, spec: str, players: int) -> None:
    try:
        strategies.build(game, spec)
    except UserError as e:
        raise UserError(f"ladder rung {spec!r}: {e}") from None
    valid = strategies.validated_players(game, spec)
    if valid is not None and players not in valid:
        where = ", ".join(map(str, valid)) or "no table size"
        raise UserError(f"ladder rung {spec!r}: its weights were validated at {where} players, "
                        f"not {players}; a balance verdict needs bots known to play well there")


@dataclass(frozen=True)
class Cell:
    """One run directory of the experiment."""

    players: int
    kind: Kind
    specs: tuple[str, ...]
    label: str  # the rung (mirror), "a vs b" (meeting), the bonus or knob value
    path: Path
    seating: str
    sets: tuple[tuple[str, Any], ...] = ()  # param overrides on top of the plan's
    tier: int = 2

    @property
    def unit(self) -> int:
        """Games come in multiples of this (whole seat rotations where seats rotate)."""
        return math.factorial(self.players) if self.seating == "rotate" else 1


@dataclass(frozen=True)
class Plan:
    game: GameSpec
    sizes: list[int]
    ladders: dict[int, list[str]]  # per table size, weakest first
    notes: dict[int, list[str]]
    sets: dict[str, Any]
    rules: Path | None
    seed: int
    runs_dir: Path
    cap: int  # games per cell at most
    precision: float  # points: a cell is done when its widest interval is within it
    margin: float  # points: the convergence margin
    minutes: float | None  # time budget (None: every cell plays to precision or cap)
    compensation: bool  # estimate and confirm the komi, sweep the game's knobs

    def params(self, players: int, extra: Sequence[tuple[str, Any]] = ()) -> Params:
        return self.game.params(self.rules, {**self.sets, **dict(extra)}, players=players)

    def _dir(self, players: int, name: str, extra: Sequence[tuple[str, Any]] = ()) -> Path:
        """runs/<game>/balance/<n>p/<name>; a hash of the params and seed joins the name
        when they are not the defaults, so a house rule or another seed is a new run. The
        name's slug stands alone only when it says the name unambiguously (specs written
        name(key=value, key=value)); any other spelling ("heuristic()", spaces, a path
        as a value) adds a hash of the name, so two spec strings never share a run
        directory: the runner, which tells runs apart by their spec strings, would
        refuse the second."""
        slug = re.sub(r"[^\w.=-]+", "_", name).strip("_")
        params = self.params(players, extra)
        readable = _READABLE.fullmatch(name) is not None
        if params != self.game.params(players=players) or self.seed != 0 or len(slug) > 100 or not readable:
            key = [params.model_dump(mode="json"), self.seed]
            text = json.dumps(key if readable else [name, *key])
            slug = f"{slug[:100]}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
        return self.runs_dir / self.game.name / "balance" / f"{players}p" / slug

    def mirror(self, players: int, rung: str) -> Cell:
        rungs = self.ladders[players]
        tier = 0 if rung in rungs[-2:] else 2
        return Cell(players, "mirror", (rung,) * players, rung, self._dir(players, rung),
                    "fixed", (), tier)

    def meetings(self, players: int) -> list[Cell]:
        """Adjacent rungs head to head, seats alternating (both ways round at odd sizes);
        seats rotate up to three players and are drawn at random beyond (players! games
        a rotation would be too many for a slow bot)."""
        rungs = self.ladders[players]
        seating = "rotate" if players <= 3 else "random"
        out = []
        for k, (a, b) in enumerate(zip(rungs, rungs[1:])):
            tables = [[a if s % 2 == 0 else b for s in range(players)]]
            if players % 2:
                tables.append([b if s % 2 == 0 else a for s in range(players)])
            tier = 1 if k >= len(rungs) - 3 else 3
            for t in tables:
                out.append(Cell(players, "meeting", tuple(t), f"{b} vs {a}",
                                self._dir(players, "-vs-".join(t)), seating, (), tier))
        return out

    def ladder_cells(self) -> list[Cell]:
        return [c for n in self.sizes
                for c in [*(self.mirror(n, r) for r in self.ladders[n]), *self.meetings(n)]]

    def komi_cell(self, players: int, rung: str, points: Sequence[int]) -> Cell:
        sets = ((COMPENSATION, list(points)),)
        label = f"{COMPENSATION}={list(points)}"
        return Cell(players, "komi", (rung,) * players, label,
                    self._dir(players, f"{rung}-komi-{'_'.join(map(str, points))}", sets), "fixed", sets, 0)

    def knob_cells(self, players: int, rung: str) -> list[Cell]:
        out = []
        for name, values in self.game.position_knobs.items():
            for v in values:
                if _same_value(self.params(players), name, v):
                    continue  # the rulebook value: the rung's own mirror
                sets = ((name, v),)
                out.append(Cell(players, "knob", (rung,) * players, f"{name}={v}",
                                self._dir(players, f"{rung}-{name}={v}", sets), "fixed", sets, 1))
        return out


# Names whose slug is unambiguous: word characters, ".", "=", "-", and specs' arguments
# in their canonical form (key=value, comma and one space between them).
_READABLE = re.compile(r"(?:[\w.=-]+|\([\w.-]+=[\w.-]+(?:, [\w.-]+=[\w.-]+)*\))+")


def _same_value(params: Params, name: str, value: Any) -> bool:
    return flatten(params.model_dump(mode="json")).get(name) == value


def plan(game: str, runs_dir: Path | str = "runs", *, players: Sequence[int] | None = None,
         ladder: Sequence[str] | None = None, search: str | None = SEARCH, doublings: int = 1,
         lowest: str | None = None, games: int = 1_000_000, precision: float = 0.5,
         minutes: float | None = None, margin: float = DEFAULT_MARGIN, compensation: bool = True,
         sets: dict[str, Any] | None = None, rules: Path | str | None = None, seed: int = 0) -> Plan:
    """Check every input and lay out the cells; nothing is played or written."""
    spec = get_game(game)
    rules = Path(rules) if rules is not None else None
    sets = dict(sets or {})
    if games < 1:
        raise UserError(f"games = {games}: must be at least 1")
    for name, value, ok in (("precision", precision, precision > 0), ("margin", margin, margin > 0),
                            ("minutes", minutes, minutes is None or minutes > 0)):
        if not (ok and (value is None or math.isfinite(value))):
            raise UserError(f"{name} = {value}: must be a positive, finite number")
    if doublings < 0:
        raise UserError(f"doublings = {doublings}: must be 0 or more")
    lo, hi = spec.players
    sizes = sorted(set(players)) if players else list(range(max(lo, 2), hi + 1))
    if bad := [n for n in sizes if not (lo <= n <= hi) or n < 2]:
        allowed = f"{max(lo, 2)}" if max(lo, 2) == hi else f"{max(lo, 2)} to {hi}"
        raise UserError(f"players = {bad[0]}: turn-position balance needs two seats or more; "
                        f"{game} allows {allowed}")
    if "players" in sets:
        raise UserError("--set players=...: choose table sizes with --players")
    ladders, notes = {}, {}
    for n in sizes:
        spec.params(rules, sets, players=n)  # the house rule is valid at every size
        if ladder is not None:
            rungs, notes[n] = list(ladder), []
            if lowest is not None:
                raise UserError("--lowest drops rungs of the default ladder; with --ladder, list only the rungs to play")
        else:
            rungs, notes[n] = default_ladder(game, n, search=search, doublings=doublings, lowest=lowest)
        if len(set(rungs)) != len(rungs):
            raise UserError(f"ladder = {','.join(rungs)!r}: a rung is listed twice")
        if not rungs:
            raise UserError("ladder: allowed is one or more strategy specs, weakest first")
        for r in rungs:
            _check_rung(game, r, n)
        ladders[n] = rungs
    if compensation:
        for n in sizes:
            spec.params(rules, {**sets, COMPENSATION: [0] * n}, players=n)
    return Plan(spec, sizes, ladders, notes, sets, rules, seed, Path(runs_dir), games, precision,
                margin, minutes, compensation)


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
    ratings: Any  # analysis.stats.Ratings or None
    matchups: Any  # analysis.stats.Matchups of the meetings
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
class BalanceResult:
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
    from analysis import compare as cmp

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
    from analysis import stats
    from analysis.skill import matchups_of, tally

    m = matchups_of([tally(d) for d in meetings if d.is_dir()], rungs)
    return m, (stats.bradley_terry(m) if len(rungs) > 1 and m.games.sum() > 0 else None)


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
            path = rung.path if _same_value(base_params, name, v) else cells[f"{name}={v}"].path
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
    from analysis import compare as cmp

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


# ---- the whole experiment ----

def balance(p: Plan, *, jobs: int | None = None, log: Callable[[str], None] | None = None) -> BalanceResult:
    """Play the ladder (and, with compensation, the komi confirmation and knob sweeps of
    the strongest rung at each size) within the plan's budget, then analyse. With a
    budget (`p.minutes`, the wall time of the whole call, the analysis included), the
    phases of `experiments.budget` spend it where the verdict is decided, and the plan
    (what deciding each size costs, and what the budget will reach) is said before the
    main phase; without one, every cell plays to precision or its cap."""
    start = time.monotonic()
    say = _Progress(log, start, None if p.minutes is None else 60 * p.minutes)
    if p.minutes is None:
        say.phase("ladder", f"{len(p.ladder_cells())} runs, each to ±{p.precision:g} points or {p.cap:,} games")
        played = play(p, p.ladder_cells(), jobs=jobs)
        if p.compensation:
            first = analyze(p, played, full=False)
            say.phase("compensation", "the strongest rung's score bonus and knobs, paired with it")
            for v in first.sizes:
                # As many games as the strongest rung's mirror, so they pair game for game.
                played += play(p, _compensation_cells(p, v), cap=v.top.games, jobs=jobs)
        say.phase("report", "analysis and report")
        return with_plans(p, analyze(p, played, time.monotonic() - start), {}, played)
    return _within_budget(p, start, say, jobs)


# Seconds kept for the analysis and the report, at least. On a busy machine they take
# longer: about four times as long as loading the plotting stack they need (loaded first,
# and timed), and six times a partial analysis of the same runs (timed before the
# compensation phase).
REPORT_SECONDS = 10.0


def _within_budget(p: Plan, start: float, say: _Progress, jobs: int | None) -> BalanceResult:
    total = 60 * p.minutes
    end = start + total
    loading = time.monotonic()
    import matplotlib.pyplot  # noqa: F401  (the report's; its loading time says how busy the machine is)

    import analysis.report  # noqa: F401
    # At most a third of a budget of seconds: some of it must play.
    reserve = min(max(REPORT_SECONDS, 4 * (time.monotonic() - loading)), total / 3)
    spender = budget.Spender(p, jobs=jobs, deadline=end - reserve)
    ladder = p.ladder_cells()
    pairs = {n: budget.top_pair(p, n) for n in p.sizes}
    tops = {c.path for pair in pairs.values() for c in pair}

    say.phase("pilot", f"price {len(ladder)} runs, the two strongest rungs to {budget.PILOT_PAIRS} paired games")
    budget.pilot(spender, ladder, list(pairs.values()), budget.PILOT_SHARE * total)

    weaker = [c for c in ladder if c.path not in tops]
    floor_seconds = min(budget.FLOOR_SHARE * total, _floor_cost(spender, weaker))
    compensation_seconds = budget.COMPENSATION_SHARE * total if p.compensation else 0.0
    headline_seconds = end - reserve - time.monotonic() - floor_seconds - compensation_seconds
    before = {}
    for n, pair in pairs.items():
        if len(pair) < 2:
            continue  # one rung: no convergence to decide
        pilot = budget.pair_projection(spender, n, pair)
        reach = budget.reach(spender, pair, max(0.0, headline_seconds) / len(pairs))
        before[n] = (pilot, reach)
        say.line(_plan_line(n, p.margin, pilot, reach))

    say.phase("floor", f"{len(weaker)} weaker rungs and meetings to {budget.FLOOR_GAMES} games each")
    budget.floor(spender, weaker, time.monotonic() + floor_seconds)

    say.phase("headline", f"the two strongest rungs at {', '.join(map(str, pairs))} players, game for game")
    budget.headline(spender, pairs, end - reserve - compensation_seconds)

    ready: list[SizeVerdict] = []
    if p.compensation:
        measured = time.monotonic()
        first = analyze(p, list(spender.states.values()), full=False)
        reserve = max(reserve, 6 * (time.monotonic() - measured))
        spender.deadline = end - reserve
        ready = [v for v in first.sizes if budget.headline_halfwidth(spender, v.players, pairs[v.players])
                 <= max(budget.MEANINGFUL_HALFWIDTH, p.margin)]
        wide = f"the headline's interval still wider than ±{max(budget.MEANINGFUL_HALFWIDTH, p.margin):g} points"
        say.phase("compensation", f"score bonus and knobs at {', '.join(str(v.players) for v in ready)} players"
                  if ready else f"none ({wide}): the time goes to the headline")
        for k, v in enumerate(ready):
            until = time.monotonic() + spender.left() / (len(ready) - k)
            _compensate(p, spender, v, until)
    if not p.compensation or not ready:  # the compensation's time goes to the headline
        budget.headline(spender, pairs, end - reserve)
    for s in spender.states.values():
        s.stopped = s.stopped or "time"
    say.phase("report", "analysis and report")
    result = analyze(p, list(spender.states.values()), time.monotonic() - start)
    return with_plans(p, result, before, list(spender.states.values()))


def _floor_cost(spender: budget.Spender, cells: Sequence[Cell]) -> float:
    """Seconds the floor would take at the prices the pilot measured."""
    cost = 0.0
    for c in cells:
        s = spender.state(c)
        missing = max(0, budget.FLOOR_GAMES - s.games)
        if missing and not s.stopped:
            per = spender.price(s)
            cost += spender.overhead() + missing * (per if math.isfinite(per) else 0.0)
    return cost


def _compensation_cells(p: Plan, v: SizeVerdict) -> list[Cell]:
    cells = p.knob_cells(v.players, v.strongest)
    if v.komi is not None and any(v.komi.points):
        cells.insert(0, p.komi_cell(v.players, v.strongest, v.komi.points))
    return cells


def _compensate(p: Plan, spender: budget.Spender, v: SizeVerdict, until: float) -> None:
    """The score bonus's confirmation first (to the strongest rung's games, within half
    the time), then the knobs' values, each at most the strongest rung's games (they
    pair with it game for game)."""
    top = spender.state(p.mirror(v.players, v.strongest))
    cells = [spender.state(c) for c in _compensation_cells(p, v)]
    komi = [s for s in cells if s.cell.kind == "komi"]
    knobs = [s for s in cells if s.cell.kind == "knob"]
    target = lambda s: top.games  # noqa: E731
    if komi:
        spender.fill(komi, target, time.monotonic() + spender.left(until) / (2 if knobs else 1), lambda s: top)
    spender.fill(knobs, target, until, lambda s: top)


def with_plans(p: Plan, result: BalanceResult, before: dict[int, tuple[budget.Projection, int | None]],
               played: Sequence[Played] = ()) -> BalanceResult:
    """The result with what deciding each table size costs (projected from the pilot,
    said before, and from every paired game, priced at the CPU the games `played` in
    this call took), and the runs that hold fewer games than their manifest asks (a run
    killed or cut short)."""
    state = {s.cell.path: s for s in played}
    timed = [s.quickest for s in played if s.played]
    overhead = min(timed) if timed else 0.0
    plans = []
    for v in result.sizes:
        c = v.convergence
        final = None
        if c is not None:
            pair = (v.rung(c.top).path, v.rung(c.second).path)
            cpu = sum(state[path].cpu_per_game(overhead) if path in state and state[path].played else math.nan
                      for path in pair)
            final = budget.project(budget.paired_differences(*pair, v.players), p.margin, cpu)
        pilot, reach = before.get(v.players, (None, None))
        plans.append(budget.SizePlan(v.players, pilot, reach, final, 0 if c is None else c.games,
                                     "" if c is None else c.state))
    short = []
    for r in result.runs:
        held, asked = budget.shortfall(Path(r["path"]))
        if held < asked:
            short.append({**r, "games": held, "asked": asked, "missing": asked - held})
    runs = [{**r, "cpu_seconds": state[Path(r["path"])].cpu if Path(r["path"]) in state else None}
            for r in result.runs]
    return replace(result, plans=plans, short=short, runs=runs,
                   budget_seconds=None if p.minutes is None else 60 * p.minutes)


class _Progress:
    """One line on stderr per phase, with the overall time left and when it ends."""

    def __init__(self, log: Callable[[str], None] | None, start: float, total: float | None):
        self.log, self.start, self.total = log, start, total

    def line(self, text: str) -> None:
        if self.log:
            self.log(text)

    def phase(self, name: str, what: str) -> None:
        elapsed = time.monotonic() - self.start
        if self.total is None:
            self.line(f"balance, {name}: {what} ({elapsed:.0f} s so far; no time limit)")
            return
        eta = datetime.now(UTC) + timedelta(seconds=max(0.0, self.total - elapsed))
        self.line(f"balance, {name}: {what} ({elapsed:.0f} of {self.total:.0f} s; ends about "
                  f"{eta:%H:%M:%S} UTC)")


def _plan_line(n: int, margin: float, pilot: budget.Projection, reach: int | None) -> str:
    points = f"±{margin:g} point" + ("" if margin == 1 else "s")
    head = f"plan, {n} players: "
    if not pilot.route:
        return head + f"cannot project the games deciding {points} yet ({pilot.reason})"
    verdict = {"converged": "converged", "moves": "moving with skill"}[pilot.route]
    more = "more than " if pilot.capped else "about "
    hours = "" if pilot.core_hours is None else f", {pilot.core_hours:.2g} core-hours"
    text = head + (f"deciding at {points} ({verdict}, the pilot's change {pilot.change:+.1f} points) needs "
            f"{more}{pilot.games:,} games at each of the two strongest rungs{hours}")
    if reach is None:
        return text
    return text + (f"; this budget reaches about {reach:,}" + (" (enough)" if reach >= pilot.games else
                                                                " (not enough)"))
