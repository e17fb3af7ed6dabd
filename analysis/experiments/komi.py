"""The score bonus by turn position (komi) that would equalise turn positions, estimated
from the final scores of a mirror match: for the balance experiment's compensation."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simcore.parts import list_parts, read_part

__all__ = ["Komi", "estimate_komi", "position_rates_with_bonus", "position_table"]


def position_table(path: Path, players: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Per game (sorted by game index), scores and win shares by turn position."""
    scores, wins, games = [], [], []
    for part in list_parts(path):
        df = read_part(part, ["game", "position", "score", "win"]).sort("game", "position")
        g = df.height // players
        games.append(df["game"].to_numpy()[::players])
        scores.append(df["score"].to_numpy().astype(np.float64).reshape(g, players))
        wins.append(df["win"].to_numpy().astype(np.float64).reshape(g, players))
    order = np.argsort(np.concatenate(games))
    return np.concatenate(scores)[order], np.concatenate(wins)[order], len(order)


def position_rates_with_bonus(scores: np.ndarray, wins: np.ndarray, bonus: Sequence[float]) -> np.ndarray:
    """Each position's win share if `bonus[p]` points were added to position p's final
    score: the top adjusted score wins, ties shared. A game whose winner did not have the
    top score was decided by something other than points (an instant win): the bonus
    leaves it as it was."""
    by_points = _decided_by_points(scores, wins)
    adjusted = scores + np.asarray(bonus, dtype=float)[None, :]
    top = adjusted == adjusted.max(axis=1, keepdims=True)
    share = top / top.sum(axis=1, keepdims=True)
    return np.where(by_points[:, None], share, wins).mean(axis=0)


def _decided_by_points(scores: np.ndarray, wins: np.ndarray) -> np.ndarray:
    best = scores == scores.max(axis=1, keepdims=True)
    return ((wins > 0) <= best).all(axis=1)


@dataclass(frozen=True)
class Komi:
    """The score bonus by turn position that would equalise the win rates."""

    estimate: list[tuple[float, float, float]]  # per position: points relative to position 0, 95% interval
    points: list[int]  # the whole-point bonus proposed (the param takes integers), none below zero
    predicted: list[float]  # win share per position with `points`, from the same games
    games: int
    confirmed: list[Any] | None = None  # Rate per position in the paired run with the bonus
    changes: list[tuple[float, float, float, float]] | None = None  # per position: change, low, high, q (points)
    confirm_games: int = 0
    balanced: bool | None = None  # every position's confirmed rate within the margin of fair


def _crossing(k: np.ndarray, rate: np.ndarray, target: float) -> float:
    """Where a rate increasing in k (a step function at whole points) crosses target,
    interpolated between the whole points around it."""
    above = np.flatnonzero(rate >= target)
    if not above.size:
        return math.inf
    j = above[0]
    if j == 0:
        return -math.inf if rate[0] > target else float(k[0])
    r0, r1 = rate[j - 1], rate[j]
    return float(k[j - 1] + (target - r0) / (r1 - r0) * (k[j] - k[j - 1])) if r1 > r0 else float(k[j])


def estimate_komi(scores: np.ndarray, wins: np.ndarray, sweeps: int = 8) -> Komi:
    """The points to add to each later turn position's final score so that every
    position wins its fair share, from final scores by position (games x positions).

    For position p, with the other bonuses fixed, its win share is a step function of
    its own bonus b (the games it wins outright when b exceeds the others' best adjusted
    score minus its own, plus a share of the ties); the fair bonus is where it crosses
    1/n, interpolated between whole points, found for each position in turn until the
    whole-point bonuses settle. The 95% interval of each position's bonus inverts the
    Wilson interval of its share (others at their bonuses): the bonuses whose share the
    data cannot tell from fair. The proposal is the whole-point bonus vector, among the
    floors and ceilings of the estimates, whose widest departure from fair is smallest."""
    from analysis import stats

    g, n = scores.shape
    fair = 1 / n
    span = int(np.ceil(scores.max() - scores.min())) + 2
    grid = np.arange(-span, span + 1)
    bonus = np.zeros(n)
    real = np.zeros(n)
    lows, highs = np.zeros(n), np.zeros(n)

    def curve(p: int, others: np.ndarray) -> np.ndarray:
        return np.array([position_rates_with_bonus(scores, wins, np.where(np.arange(n) == p, b, others))[p]
                         for b in grid])

    for _ in range(sweeps):
        before = bonus.copy()
        for p in range(1, n):
            rate = curve(p, bonus)
            real[p] = _crossing(grid, rate, fair)
            if math.isfinite(real[p]):
                bonus[p] = round(real[p])
        if np.array_equal(before, bonus):
            break
    for p in range(1, n):
        rate = curve(p, bonus)
        low_ci, high_ci = (np.array(b) for b in zip(*(stats.wilson(r * g, g) for r in rate)))
        # The bonus is too small while even the upper bound is below fair, too big once
        # even the lower bound is above it.
        lows[p] = _crossing(grid, high_ci, fair)
        highs[p] = _crossing(grid, low_ci, fair)
    candidates = [np.array(c, dtype=float) for c in _floor_ceil(real)]
    best = min(candidates, key=lambda b: float(np.abs(position_rates_with_bonus(scores, wins, b) - fair).max()))
    best -= best.min()  # the same bonus as points given, never taken: no entry below zero
    predicted = position_rates_with_bonus(scores, wins, best)
    return Komi([(float(real[p]), float(lows[p]), float(highs[p])) for p in range(n)],
                [int(x) for x in best], predicted.tolist(), g)


def _floor_ceil(real: np.ndarray) -> list[list[int]]:
    out: list[list[int]] = [[0]]
    for x in real[1:]:
        options = {math.floor(x), math.ceil(x)} if math.isfinite(x) else {0}
        out = [c + [o] for c in out for o in sorted(options)]
    return out
