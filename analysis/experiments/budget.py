"""Playing the balance experiment's cells within a time budget.

Every cell (a run directory) first plays a short pilot that prices its games; then the
cells whose extra games shrink the widest interval the most per second play more, the
top rungs' mirrors weighted highest, until every cell's confidence sequence (the one
`run --precision` uses) is within the precision, its cap is reached or the time is spent.
Without a time limit each cell plays to precision or its cap, which is deterministic.
"""
from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import strategies
from simcore.runner import MANIFEST, run

if TYPE_CHECKING:
    from pathlib import Path

    from analysis.experiments.balance import Cell, Plan

__all__ = ["Played", "play", "existing_games"]

# Weights of a cell's extra games in the allocation: the verdict rests on the top two
# rungs' mirrors, their ratings on the meetings near the top.
_TIER_WEIGHT = {0: 8.0, 1: 2.0, 2: 1.0, 3: 0.5}


@dataclass
class Played:
    """What a cell holds and what its games cost."""

    cell: Cell
    games: int = 0  # games in its run directory
    played: int = 0  # games this call played
    seconds: float = 0.0  # wall time this call spent on them
    halfwidth: float = math.inf  # points: widest confidence-sequence half-width
    stopped: str = ""  # why it plays no more: "precise", "cap", "time"
    largest: tuple[int, float] = (0, 0.0)  # games and seconds of its largest step
    quickest: float = math.inf  # seconds of its quickest step

    def record(self, games: int, seconds: float) -> None:
        self.played += games
        self.seconds += seconds
        self.quickest = min(self.quickest, seconds)
        if games >= self.largest[0]:
            self.largest = (games, seconds)

    def per_game(self, overhead: float) -> float:
        """Seconds a game once a step's fixed cost (starting a run, writing its manifest,
        reading its tallies) is taken off: a pilot of one game costs mostly that."""
        games, seconds = self.largest
        return max((seconds - overhead) / games, 1e-7) if games else math.nan


def existing_games(path: Path) -> int:
    try:
        return int(json.loads((path / MANIFEST).read_text())["n_games"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


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


class _Budget:
    def __init__(self, minutes: float | None):
        self.deadline = None if minutes is None else time.monotonic() + 60 * minutes

    def left(self) -> float:
        return math.inf if self.deadline is None else self.deadline - time.monotonic()


def _round_up(n: float, unit: int) -> int:
    return max(unit, math.ceil(n / unit) * unit)


def play(p: Plan, cells: Sequence[Cell], *, seconds: float | None = None, cap: int | None = None,
         jobs: int | None = None, log: Callable[[str], None] | None = None) -> list[Played]:
    """Play the cells, resuming their run directories: without a time limit each to
    precision or `cap` (default the plan's) in rounds of 1.5 times the games; with
    `seconds`, a pilot first that prices each cell's games, then, one step at a time,
    the cell whose next games shrink its interval the most per second (weighted by its
    tier) until every cell is precise or capped or the time is spent."""
    from analysis.sequential import planned_games

    cap = p.cap if cap is None else cap
    budget = _Budget(None if seconds is None else seconds / 60)
    planned = planned_games(p.precision)
    states = [Played(c, games=existing_games(c.path)) for c in cells]

    def extend(s: Played, n: int) -> None:
        c = s.cell
        n = min(max(n, s.games), _round_up(cap, c.unit))
        if n <= s.games:
            return
        lineup = functools.partial(strategies.build_lineup, p.game.name, list(c.specs))
        start = time.monotonic()
        r = run(p.game, p.params(c.players, c.sets), list(c.specs), lineup, c.path, n_games=n,
                seed=p.seed, seating=c.seating, jobs=jobs, quiet=True)
        s.record(r.played, time.monotonic() - start)
        s.games = int(r.manifest["n_games"])
        if log:
            log(f"{c.players} players, {c.kind} {c.label}: {s.games:,} games (+{r.played:,} in "
                f"{time.monotonic() - start:.1f} s)")

    def done(s: Played) -> bool:
        s.halfwidth = _halfwidth(s, planned)
        if s.halfwidth <= p.precision:
            s.stopped = "precise"
        elif s.games >= _round_up(cap, s.cell.unit):
            s.stopped = "cap"
        return bool(s.stopped)

    if seconds is None:
        for s in states:
            n = max(s.games, min(_round_up(1000, s.cell.unit), _round_up(cap, s.cell.unit)))
            while True:
                extend(s, n)
                if done(s):
                    break
                n = _round_up(s.games * 1.5, s.cell.unit)
        return states

    # Pilot: the cheapest whole step of every cell, most important first, to price it.
    for s in sorted(states, key=lambda s: s.cell.tier):
        if budget.left() <= 0:
            break
        if not done(s):
            extend(s, s.games + s.cell.unit)
            done(s)
    # Then the best value for time, one step at a time. A step costs a fixed part (the
    # quickest step of any cell) and a part per game (each cell's own, from its largest
    # step). A cell that reaches the precision (the games it needs, from its half-width
    # shrinking as 1/sqrt(games), with a fifth to spare) for under 2% of the time left,
    # or a second, plays there, in steps of at most sixteenfold. Otherwise the cell whose
    # next games shrink its squared half-width the most per second plays: a step takes
    # at most a quarter of the time left, so no cell eats the budget on a wrong price,
    # and grows a cell eightfold while its games are cheap, else at most doubles it.
    while (left := budget.left()) > 0:
        ready = [s for s in states if not s.stopped and s.played]
        if not ready:
            break
        overhead = min(s.quickest for s in states if s.played)
        cheap = []
        for s in ready:
            if math.isfinite(s.halfwidth):
                need = _round_up(1.2 * s.games * (s.halfwidth / p.precision) ** 2, s.cell.unit)
                if overhead + (need - s.games) * s.per_game(overhead) < max(0.02 * left, 1.0):
                    cheap.append((s, need))
        if cheap:
            # At most sixteen times the games a step: a price measured on few games can
            # be far off, and the next step prices the run again.
            for s, need in cheap:
                extend(s, min(need, 16 * s.games))
                done(s)
            continue

        def gain(s: Played) -> float:
            # A rate's half-width is at most 50 points: a run of one game, whose interval
            # is not defined yet, is not worth infinitely more than every other.
            width = min(s.halfwidth, 50.0)
            return _TIER_WEIGHT[s.cell.tier] * width ** 2 / (overhead + s.games * s.per_game(overhead))

        best = max(ready, key=gain)
        per_game = best.per_game(overhead)
        grow = 8 if best.games * per_game < 2.0 else 1
        step = min(grow * best.games, (left / 4 - overhead) / per_game)
        step = math.floor(step / best.cell.unit) * best.cell.unit
        if step < max(best.cell.unit, best.games / 20):  # too little time left to matter
            best.stopped = "time"
            continue
        extend(best, best.games + step)
        done(best)
    for s in states:
        if not s.stopped:
            s.stopped = "time"
    return states
