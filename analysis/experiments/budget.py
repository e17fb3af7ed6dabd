"""Playing the balance experiment's cells, and what a decision would cost.

Without a time limit each cell plays to the precision or its cap in rounds of 1.5 times
the games, which is deterministic. With one, the games go where the verdict is decided
(`Spender`, driven phase by phase by `experiments.balance.balance`):

1. a pilot prices every cell's games (one seat rotation each) and plays the two
   strongest rungs' mirrors to `PILOT_PAIRS` paired games, from which `project` says
   what deciding the headline would take;
2. the weaker rungs and the meetings get a floor, what the ladder figure and the
   ratings need (`FLOOR_GAMES`, within `FLOOR_SHARE` of the budget), not more;
3. the two strongest rungs of every table size grow together (they pair game for game),
   the size whose next games narrow its headline interval the most per second first;
4. once the headline has enough games to mean something, the strongest rung's score
   bonus is confirmed and its knobs swept (paired with it, so at most its games).

`project` turns paired differences (the strongest rung minus the one below, per game and
turn position) into the games at which the headline is decided with 80% probability if
the change and spread measured are the truth: converged (every position's 95% interval
within the margin) or moving (a position's interval wholly beyond it).
"""
from __future__ import annotations

import functools
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import strategies
from analysis.experiments.balance_plan import NEEDS
from simcore.rundir import finished_games, held_games
from simcore.runner import run

if TYPE_CHECKING:
    from pathlib import Path

    from analysis.experiments.balance import Cell, Plan

__all__ = ["Played", "Projection", "Spender", "play", "shortfall",
           "paired_differences", "project", "PILOT_PAIRS", "FLOOR_GAMES", "PROJECTION_CAP"]

PILOT_PAIRS = 100  # paired games of the top two rungs the plan is projected from
MIN_PAIRS = 10  # fewer paired games than this project nothing
FLOOR_GAMES = 400  # a weaker rung's rates within about ±5 points; a meeting's Elo within about ±35
PILOT_SHARE = 0.1  # of the budget, at most, for the pilot's paired games
FLOOR_SHARE = 0.15  # of the budget, at most, for the weaker rungs and the meetings
COMPENSATION_SHARE = 0.25  # of the budget, for the score bonus and the knobs, once the headline means something
# The headline means something once its change's 95% half-width is within this many
# points (or the margin, if wider): before, a bonus or a knob sweep would be paired
# with a rung whose own rates are still open by more than that.
MEANINGFUL_HALFWIDTH = 5.0
POWER = 0.8  # a projection is the games at which the decision comes with this probability
PROJECTION_CAP = 10_000_000  # games: beyond this, "more than"
Z = 1.959963984540054  # two-sided 95%


@dataclass
class Played:
    """What a cell holds and what its games cost."""

    cell: Cell
    games: int = 0  # games in its run directory's finished parts
    asked: int = 0  # games its manifest asks for (more than `games` when a run was cut short)
    played: int = 0  # games this call played
    seconds: float = 0.0  # wall time this call spent on them
    cpu: float = 0.0  # CPU seconds this call spent on them (every core)
    halfwidth: float = math.inf  # points: widest confidence-sequence half-width
    stopped: str = ""  # why it plays no more: "precise", "cap", "time"
    largest: tuple[int, float, float] = (0, 0.0, 0.0)  # games, seconds and CPU seconds of its largest step
    quickest: float = math.inf  # seconds of its quickest step
    quickest_games: int = 0  # games of its quickest step

    def record(self, games: int, seconds: float, cpu: float) -> None:
        self.played += games
        self.seconds += seconds
        self.cpu += cpu
        if seconds < self.quickest:
            self.quickest, self.quickest_games = seconds, games
        if games >= self.largest[0]:
            self.largest = (games, seconds, cpu)

    def per_game(self, overhead: float) -> float:
        """Seconds a game once a step's fixed cost (starting a run, writing its manifest,
        reading and checking its parts) is taken off: a pilot of one game costs mostly
        that. `overhead` is the fixed cost of the cheapest step of any cell; a resumed run
        of many parts pays more, so where the cell's own steps differ enough in size, the
        cost of its extra games (largest step minus quickest) prices them."""
        games, seconds, _ = self.largest
        if not games:
            return math.nan
        per = (seconds - overhead) / games
        if games >= 2 * self.quickest_games and seconds > self.quickest:
            per = min(per, (seconds - self.quickest) / (games - self.quickest_games))
        return max(per, 1e-7)

    def cpu_per_game(self, overhead: float) -> float:
        """CPU seconds a game (every core), the fixed cost of a step taken off in proportion."""
        games, seconds, cpu = self.largest
        return cpu / seconds * self.per_game(overhead) if games and seconds > 0 else math.nan


def shortfall(path: Path) -> tuple[int, int]:
    """(games held, games the manifest asks for) of a run directory."""
    return finished_games(path), held_games(path)


def _halfwidth(p: Played, planned: float) -> float:
    """Points: the widest half-width of the cell's confidence sequence over its free
    quantities (a mirror's position rates but one, which the others determine; a
    meeting's win share of its first bot)."""
    from analysis import stats
    from analysis.summary import summarize

    if p.games < 2:
        return math.inf
    s = summarize(p.cell.path)
    if p.cell.kind == "meeting":
        row = s.by_strategy.row(0, named=True)
        rates, n, k = [row["win_rate"]], s.games, 1
    else:
        table = s.by_position if s.by_position is not None else s.by_seat
        rates, n = table["win_rate"].to_list(), s.games
        k = max(1, p.cell.players - 1)
        rates = rates[:k]
    worst = 0.0
    for r in rates:
        # Shrunk towards 1/2 (two wins and two losses added): a cell whose few games went
        # all one way has not shown a rate of 0 or 1 with no error.
        shrunk = (r * n + 2) / (n + 4)
        se = math.sqrt(shrunk * (1 - shrunk) / n)
        worst = max(worst, stats.confidence_sequence_halfwidth(se, n, planned, stats.ALPHA / k))
    return 100 * worst


def _round_up(n: float, unit: int) -> int:
    return max(unit, math.ceil(n / unit) * unit)


def _round_down(n: float, unit: int) -> int:
    return math.floor(n / unit) * unit


def _workers(jobs: int | None) -> int:
    return jobs or os.cpu_count() or 1


class Spender:
    """Plays cells of a plan, one step at a time, and keeps what each holds and costs."""

    def __init__(self, p: Plan, *, jobs: int | None = None, deadline: float | None = None,
                 cap: int | None = None):
        from analysis.sequential import planned_games

        self.p, self.jobs, self.deadline = p, jobs, deadline
        self.cap = p.cap if cap is None else cap
        self.planned = planned_games(p.precision)
        self.states: dict[Path, Played] = {}

    def state(self, c: Cell) -> Played:
        if c.path not in self.states:
            self.states[c.path] = Played(c, games=finished_games(c.path), asked=held_games(c.path))
        return self.states[c.path]

    def left(self, until: float | None = None) -> float:
        ends = [t for t in (self.deadline, until) if t is not None]
        return min(ends) - time.monotonic() if ends else math.inf

    def overhead(self) -> float:
        """Seconds of a step whatever its games: the quickest step of any cell."""
        q = [s.quickest for s in self.states.values() if s.played]
        return min(q) if q else 0.0

    def price(self, s: Played, like: Played | None = None) -> float:
        """Seconds a game of the cell: its own price, else that of `like` (the same bot's
        mirror), else unknown (nan)."""
        if s.played:
            return s.per_game(self.overhead())
        return like.per_game(self.overhead()) if like is not None and like.played else math.nan

    def cpu_price(self, s: Played) -> float:
        return s.cpu_per_game(self.overhead()) if s.played else math.nan

    def limit(self, c: Cell) -> int:
        return _round_up(self.cap, c.unit)

    def extend(self, s: Played, n: int) -> None:
        """Play the cell to n games (at least what its manifest asks: a run cut short is
        topped up first), at most its cap."""
        c = s.cell
        n = min(max(n, s.asked), self.limit(c))
        if n <= s.games and s.games >= s.asked:
            return
        lineup = functools.partial(strategies.build_lineup, self.p.game.name, list(c.specs))
        start, cpu = time.monotonic(), time.process_time()
        r = run(self.p.game, self.p.params(c.players, c.sets), list(c.specs), lineup, c.path, n_games=n,
                seed=self.p.seed, seating=c.seating, jobs=self.jobs)
        wall, cpu = time.monotonic() - start, time.process_time() - cpu
        # Games played in worker processes (Python bots or games) do not count in this
        # process's CPU time: there every worker is taken as busy for the step.
        if cpu < 0.01 * wall:
            cpu = wall * _workers(self.jobs)
        s.record(r.played, wall, cpu)
        s.games = s.asked = int(r.manifest["n_games"])

    def done(self, s: Played) -> bool:
        """Whether the cell plays no more: within the precision, or at its cap."""
        s.halfwidth = _halfwidth(s, self.planned)
        if s.halfwidth <= self.p.precision:
            s.stopped = "precise"
        elif s.games >= self.limit(s.cell):
            s.stopped = "cap"
        return bool(s.stopped)

    def affordable(self, s: Played, seconds: float, like: Played | None = None) -> int:
        """Games the cell can add in `seconds` (whole seat rotations)."""
        per = self.price(s, like)
        if not math.isfinite(per):
            return s.cell.unit
        return _round_down((seconds - self.overhead()) / per, s.cell.unit)

    def fill(self, group: Sequence[Played], target: Callable[[Played], int], until: float | None,
             like: Callable[[Played], Played | None] = lambda s: None) -> None:
        """Grow the cells towards their targets in steps of at most eightfold, the one
        furthest behind first, each step within its share of the time left before
        `until`; a cell whose next step does not fit stays where it is."""
        stuck: set[Path] = set()
        while True:
            open_ = [s for s in group if s.games < min(target(s), self.limit(s.cell))
                     and not s.stopped and s.cell.path not in stuck]
            left = self.left(until)
            if not open_ or left <= 0:
                return
            s = min(open_, key=lambda s: s.games / max(target(s), 1))
            # At most eightfold a step: a price measured on few games can be far off.
            add = min(self.affordable(s, left / len(open_), like(s)),
                      max(7 * s.games, s.cell.unit), target(s) - s.games)
            if s.games + add < s.asked:  # topping up a cut run does not fit
                add = 0
            if add < s.cell.unit:
                stuck.add(s.cell.path)
                continue
            self.extend(s, s.games + add)
            self.done(s)


def play(p: Plan, cells: Sequence[Cell], *, cap: int | None = None, jobs: int | None = None) -> list[Played]:
    """Play the cells without a time limit, resuming their run directories: each to
    precision or `cap` (default the plan's) in rounds of 1.5 times the games."""
    spender = Spender(p, jobs=jobs, cap=cap)
    states = [spender.state(c) for c in cells]
    for s in states:
        limit = spender.limit(s.cell)
        n = max(s.games, s.asked, min(_round_up(1000, s.cell.unit), limit))
        while True:
            spender.extend(s, n)
            if spender.done(s):
                break
            n = _round_up(s.games * 1.5, s.cell.unit)
    return states


# ---- what a decision costs ----

def paired_differences(top: Path, second: Path, players: int) -> np.ndarray:
    """Per game both mirrors played (same index, so the same seed), the top rung's win
    share minus the second's at each turn position: games x positions."""
    import polars as pl

    from analysis.rundir import RunDir

    def wins(path: Path) -> pl.DataFrame:
        if finished_games(path) == 0:
            return pl.DataFrame({"game": [], "position": [], "win": []},
                                schema={"game": pl.Int64, "position": pl.Int64, "win": pl.Float64})
        run = RunDir(path)
        frames = [run.read(part, ["game", "position", "win"]) for part in run.parts]
        return pl.concat(frames).with_columns(pl.col("game", "position").cast(pl.Int64),
                                              pl.col("win").cast(pl.Float64))

    joined = wins(top).join(wins(second), on=["game", "position"], suffix="_second")
    if joined.height == 0:
        return np.zeros((0, players))
    wide = (joined.with_columns(d=pl.col("win") - pl.col("win_second"))
            .pivot(on="position", index="game", values="d").sort("game"))
    return wide.select([str(p) for p in range(players)]).fill_null(0.0).to_numpy()


@dataclass(frozen=True)
class Projection:
    """The paired games of the two strongest rungs that would decide the headline."""

    players: int
    margin: float
    pairs: int  # paired games it is projected from
    route: str  # "converged" or "moves"; "" when it cannot be projected
    games: int | None  # paired games needed (at each of the two rungs); PROJECTION_CAP when more
    change: float = math.nan  # points: the deciding position's change, top minus second
    sd: float = math.nan  # points: the spread of one game's paired difference there
    position: int = 0  # the deciding position (0 acts first)
    reason: str = ""  # why it cannot be projected
    cpu_per_game: float = math.nan  # CPU seconds of a game at each of the two rungs together

    @property
    def capped(self) -> bool:
        return self.games is not None and self.games >= PROJECTION_CAP

    @property
    def core_hours(self) -> float | None:
        if self.games is None or not math.isfinite(self.cpu_per_game):
            return None
        return self.games * self.cpu_per_game / 3600

    def json(self) -> dict[str, object]:
        return {"route": self.route or None, "games_needed": self.games, "more_than": self.capped,
                "core_hours": self.core_hours, "from_paired_games": self.pairs,
                "change_points": self.change, "sd_points": self.sd, "position": self.position,
                "cannot_project": self.reason or None}


def _power(n: float, change: float, sd: float, margin: float, route: str) -> float:
    """Probability that n paired games decide by `route`, the normal approximation with
    the true change and spread given."""
    from scipy.stats import norm

    se = sd / math.sqrt(n)
    if route == "converged":
        return max(0.0, norm.cdf((margin - change) / se - Z) - norm.cdf((-margin - change) / se + Z))
    return norm.sf((margin - change) / se + Z) + norm.cdf((-margin - change) / se - Z)


def _games_for(change: float, sd: float, margin: float, route: str) -> int:
    """The fewest paired games deciding by `route` with probability POWER (at most the cap)."""
    from scipy.optimize import brentq

    if _power(PROJECTION_CAP, change, sd, margin, route) < POWER:
        return PROJECTION_CAP
    if _power(2, change, sd, margin, route) >= POWER:
        return 2
    log_n = brentq(lambda x: _power(math.exp(x), change, sd, margin, route) - POWER,
                   math.log(2), math.log(PROJECTION_CAP), xtol=1e-6)
    return min(PROJECTION_CAP, math.ceil(math.exp(log_n)))


def project(diffs: np.ndarray, margin: float, cpu_per_game: float = math.nan) -> Projection:
    """The paired games that decide the headline, from paired differences (games x
    positions, win shares): moving where a position's change is beyond the margin (the
    position deciding soonest), else converged (every position inside: the slowest);
    never fewer games than the verdict needs to state either (NEEDS.agreement)."""
    pairs, players = diffs.shape if diffs.ndim == 2 else (0, 0)
    base = {"players": players, "margin": margin, "pairs": pairs, "cpu_per_game": cpu_per_game}
    if pairs < MIN_PAIRS:
        return Projection(**base, route="", games=None,
                          reason=f"{pairs} paired game{'' if pairs == 1 else 's'} of the two strongest rungs, fewer than {MIN_PAIRS}")
    change = 100 * diffs.mean(axis=0)
    sd = 100 * diffs.std(axis=0, ddof=1)
    if not np.any(sd > 0):
        return Projection(**base, route="", games=None,
                          reason=f"the two strongest rungs' {pairs} paired games never differ: no spread to project from")
    beyond = [q for q in range(players) if abs(change[q]) > margin and sd[q] > 0]
    inside = [q for q in range(players) if abs(change[q]) < margin]
    if beyond:
        need = {q: max(NEEDS.agreement, _games_for(abs(change[q]), sd[q], margin, "moves")) for q in beyond}
        q = min(need, key=need.get)
        return Projection(**base, route="moves", games=need[q], change=float(change[q]), sd=float(sd[q]), position=q)
    if len(inside) == players:
        need = {q: max(NEEDS.agreement, _games_for(abs(change[q]), sd[q], margin, "converged") if sd[q] > 0 else 2)
                for q in inside}
        q = max(need, key=need.get)
        return Projection(**base, route="converged", games=need[q], change=float(change[q]), sd=float(sd[q]),
                          position=q)
    q = next(q for q in range(players) if abs(change[q]) == margin)
    return Projection(**base, route="", games=None, change=float(change[q]), sd=float(sd[q]), position=q,
                      reason=f"the change measured is exactly the margin ({change[q]:+.2f} points): "
                             "neither decision comes nearer with more games")


# ---- the phases of a time budget ----

def top_pair(p: Plan, players: int) -> tuple[Cell, ...]:
    """The mirrors the headline of a table size rests on: the ladder's two strongest rungs
    (its last two), or its only rung."""
    return tuple(p.mirror(players, r) for r in reversed(p.ladders[players][-2:]))


def pair_projection(spender: Spender, players: int, pair: tuple[Cell, Cell]) -> Projection:
    """The projection from every paired game the two mirrors hold, priced at the CPU
    their games cost in this call."""
    top, second = (spender.state(c) for c in pair)
    cpu = spender.cpu_price(top) + spender.cpu_price(second)
    return project(paired_differences(pair[0].path, pair[1].path, players), spender.p.margin, cpu)


def headline_halfwidth(spender: Spender, players: int, pair: tuple[Cell, ...]) -> float:
    """Points: the widest 95% half-width of the headline's paired change, or of a single
    rung's position rates (at most 1/2 a game's spread); inf with fewer than MIN_PAIRS
    games."""
    if len(pair) == 1:
        games = spender.state(pair[0]).games
        return 100 * Z * 0.5 / math.sqrt(games) if games >= MIN_PAIRS else math.inf
    d = paired_differences(pair[0].path, pair[1].path, players)
    if len(d) < MIN_PAIRS:
        return math.inf
    return float(100 * Z * d.std(axis=0, ddof=1).max() / math.sqrt(len(d)))


def pilot(spender: Spender, cells: Sequence[Cell], pairs: Sequence[tuple[Cell, ...]], seconds: float) -> None:
    """Price every cell (one seat rotation, or what a cut run needs topping up), the most
    important first, then play each size's two strongest rungs PILOT_PAIRS games further
    within `seconds` more: the projection's paired games in a new run, and in a resumed
    one a step large enough to price their games apart from the cost of reopening a run
    of many parts (they are headline games either way)."""
    held = {c.path: spender.state(c).games for pair in pairs for c in pair}
    for c in sorted(cells, key=lambda c: c.tier):
        s = spender.state(c)
        if spender.left() <= 0:
            break
        if s.games < s.asked or (not s.played and s.games < spender.limit(c) and not spender.done(s)):
            spender.extend(s, s.games + c.unit)
            spender.done(s)
    tops = [spender.state(c) for pair in pairs for c in pair]
    spender.fill(tops, lambda s: _round_up(held[s.cell.path] + PILOT_PAIRS, s.cell.unit),
                 time.monotonic() + seconds)


def floor(spender: Spender, cells: Sequence[Cell], until: float) -> None:
    """The weaker rungs' mirrors and the meetings, to FLOOR_GAMES each."""
    spender.fill([spender.state(c) for c in cells], lambda s: _round_up(FLOOR_GAMES, s.cell.unit), until)


def headline(spender: Spender, pairs: dict[int, tuple[Cell, ...]], until: float) -> None:
    """Grow the two strongest rungs of every size together (game for game: they pair on
    the seeds; a ladder of one rung grows that one), one step at a time to the size whose
    next games narrow the headline's squared half-width the most per second (its spread
    squared over games squared times the seconds a pair costs). A step at most doubles
    the games and takes at most a third of the time left, so no step eats the budget on a
    wrong price."""
    spread: dict[int, float] = {}
    finished: set[int] = set()
    while (left := spender.left(until)) > 0:
        best, value = None, 0.0
        for n, pair in pairs.items():
            states = [spender.state(c) for c in pair]
            if n in finished or all(s.stopped for s in states) or \
                    min(s.games for s in states) >= spender.limit(pair[0]):
                continue
            m = max(1, min(s.games for s in states))
            if n not in spread:  # a rate's spread is at most 1/2 a game
                d = paired_differences(pair[0].path, pair[1].path, n) if len(pair) == 2 else []
                spread[n] = float(d.var(axis=0, ddof=1).max()) if len(d) >= MIN_PAIRS else 0.25
            cost = sum(spender.price(s) for s in states)
            v = max(spread[n], 1e-4) / (m * m * cost) if math.isfinite(cost) else math.inf
            if best is None or v > value:
                best, value = n, v
        if best is None:
            return
        pair = pairs[best]
        states = [spender.state(c) for c in pair]
        m = min(s.games for s in states)
        per = sum(spender.price(s) for s in states)
        afford = (left / 3 - len(pair) * spender.overhead()) / per if math.isfinite(per) else 1
        add = _round_down(min(max(m, 1), afford), pair[0].unit)
        # Too little time left to matter, unless the price is from fewer games than this
        # step would play: then the step is worth it for the price it measures.
        if add < pair[0].unit or (add < m / 20 and all(s.largest[0] >= add for s in states)):
            finished.add(best)
            continue
        for s in states:  # one precise already still grows with the other: they pair
            spender.extend(s, m + add)
            spender.done(s)
        spread.pop(best)


@dataclass
class SizePlan:
    """What deciding one table size costs: projected from the pilot before the main
    phase, and from every paired game after."""

    players: int
    pilot: Projection | None  # before the main phase (None: no time budget)
    reach: int | None  # paired games the budget was expected to reach, said before the main phase
    final: Projection | None  # from every paired game (None: a single rung)
    played: int  # paired games of the two strongest rungs
    state: str  # the verdict's convergence state at the end ("" with a single rung)

    def json(self) -> dict[str, object]:
        return {"players": self.players, "paired_games": self.played, "state": self.state or None,
                "projected_reach": self.reach,
                "pilot": None if self.pilot is None else self.pilot.json(),
                "final": None if self.final is None else self.final.json()}


def reach(spender: Spender, pair: tuple[Cell, ...], seconds: float) -> int | None:
    """Paired games the two mirrors will hold after `seconds` more of their games."""
    states = [spender.state(c) for c in pair]
    per = sum(spender.price(s) for s in states)
    if not math.isfinite(per):
        return None
    return min(s.games for s in states) + max(0, int(seconds / per))
