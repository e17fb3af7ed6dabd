"""Runs that stop when precise enough (`--precision X`).

Games are played in rounds (each round extends the run directories to more games, the
same games a single run of that size would hold) and after each round the quantities
that matter (every position's win rate, or its paired change between base and variant)
are looked at through an asymptotic confidence sequence
(analysis.stats.confidence_sequence_halfwidth): an interval valid at every look at
once, so stopping when it is narrow enough keeps its 95% coverage, which a fixed-size
interval looked at repeatedly would not. The looks share the 5% error by Bonferroni
over the free quantities: at 2 players the 2nd position's advantage is minus the 1st's
in every game (and so is its change), so covering one covers the other and the pair
counts once. tests/analysis/test_sequential.py checks the coverage by simulation.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from analysis import stats
from analysis.stats import Estimate
from simcore.errors import UserError

__all__ = ["Precision", "planned_games", "first_round", "until_precise", "halfwidth", "free_quantities"]

GROWTH = 1.5  # each round plays half as many games again: few looks, little overshoot
# The confidence sequence is about 1.5 times as wide as a fixed interval at the same
# games, so it reaches a target at about 2.5 times the games a fixed interval would.
TUNE = 2.5
MIN_FIRST_ROUND = 1000


@dataclass(frozen=True)
class Precision:
    """How a sequential run ended: the games it took, the widest half-width (points) of
    the confidence sequence over the quantities at the last look, the looks taken and
    whether the target was met (False: the cap was reached first)."""

    games: int
    halfwidth: float
    looks: int
    reached: bool
    target: float
    estimates: list[tuple[str, Estimate, float]]  # name, estimate, half-width (fraction)

    def line(self, what: str) -> str:
        got = f"±{self.halfwidth:.2f} points"
        if self.reached:
            return (f"{what}: precise to {got} (target ±{self.target:g}, 95% confidence "
                    f"sequence) after {self.games:,} games in {self.looks} round(s)")
        return (f"{what}: cap of {self.games:,} games reached at {got}, short of the target "
                f"±{self.target:g} ({self.looks} round(s)); raise --games to go on")


def planned_games(precision: float) -> float:
    """TUNE times the games at which a fixed 95% interval of a fair coin's rate is
    ±precision points: where a run is expected to stop, so the confidence sequence is
    tuned to be tightest there (chosen before any data, so the sequence stays valid)."""
    return TUNE * (stats.Z95 * 0.5 / (precision / 100)) ** 2


def _round_up(n: float, step: int) -> int:
    return max(step, math.ceil(n / step) * step)


def first_round(precision: float, cap: int, step: int) -> int:
    return min(_round_up(max(MIN_FIRST_ROUND, planned_games(precision) / 8), step), _round_up(cap, step))


def free_quantities(estimates: list[Estimate]) -> int:
    """How many of the estimates are free: one that mirrors an earlier one (the same
    games and standard error, the opposite value, as the 2nd position's advantage
    mirrors the 1st's at 2 players) is the same quantity with its sign flipped, and its
    interval covers exactly when the other's does."""
    kept: list[Estimate] = []
    for e in estimates:
        if not any(k.n == e.n and math.isclose(k.se, e.se, rel_tol=1e-9, abs_tol=1e-15)
                   and math.isclose(k.value, -e.value, rel_tol=1e-9, abs_tol=1e-12) for k in kept):
            kept.append(e)
    return len(kept)


def halfwidth(e: Estimate, planned: float, k: int) -> float:
    return stats.confidence_sequence_halfwidth(e.se, e.n, planned, stats.ALPHA / k)


def until_precise(play: Callable[[int], None], measure: Callable[[], list[tuple[str, Estimate]]],
                  precision: float, cap: int, step: int = 1) -> Precision:
    """Play (`play(n)`: make every run hold n games) in rounds of growing size until the
    confidence sequence of every measured quantity is within ±precision points, or the
    cap is reached. `step` keeps the round sizes whole seat rotations."""
    if not 0 < precision < math.inf:  # infinity plans no games: a division by zero
        raise UserError(f"precision = {precision}: must be a positive, finite number of points")
    planned = planned_games(precision)
    n = first_round(precision, cap, step)
    looks = 0
    while True:
        play(n)
        looks += 1
        found = measure()
        k = max(1, free_quantities([e for _, e in found]))
        widths = [(name, e, halfwidth(e, planned, k)) for name, e in found]
        widest = 100 * max((w for _, _, w in widths), default=math.inf)
        if widest <= precision or n >= cap:
            return Precision(n, widest, looks, widest <= precision, precision, widths)
        n = min(_round_up(n * GROWTH, step), _round_up(cap, step))
