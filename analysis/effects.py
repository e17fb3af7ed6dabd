"""Component effects with the game as the unit: per game, for each strategy, the wins
and seats with a feature and without it (effect_columns), and their moments over a
part's games (effect_moments), which stats.mantel_haenszel_games turns into an
interval and a test. The seats of one game are not independent (their wins sum to
one): seat-level intervals covered 87% on a real run.
"""
from __future__ import annotations

import numpy as np
import polars as pl

from analysis import stats

__all__ = ["effect_columns", "SeatStates", "effect_moments"]


def _seat_sum(values: np.ndarray) -> np.ndarray:
    """Per game (row), the sum over its seats. Column by column: numpy's sum along rows
    of two to six seats is ten to twenty times slower on a part's 250,000 games."""
    total = np.zeros(len(values), dtype=np.uint8 if values.dtype == bool else np.float64)
    for seat in range(values.shape[1]):
        total += values[:, seat]
    return total


def effect_columns(strategy: np.ndarray, value: np.ndarray, win: np.ndarray, threshold: int, k: int,
                   missing_when_zero: bool = False) -> np.ndarray:
    """Per game (rows of games x seats arrays), for each strategy s < k: the wins and
    seats with the feature (value >= threshold) and without it, the columns
    stats.mantel_haenszel_games reads. Seats whose 0 means "missing" are left out."""
    counted = value != 0 if missing_when_zero else np.ones(value.shape, dtype=bool)
    has = value >= threshold
    out = np.zeros((len(value), 4 * k))
    for s in range(k):
        mine = (strategy == s) & counted
        with_, without = mine & has, mine & ~has
        out[:, 4 * s] = _seat_sum(win * with_)
        out[:, 4 * s + 1] = _seat_sum(with_)
        out[:, 4 * s + 2] = _seat_sum(win * without)
        out[:, 4 * s + 3] = _seat_sum(without)
    return out


# A game's seats, coded as one integer, are counted densely up to this many codes
# (np.unique's sort beyond).
_DENSE_CODES = 1 << 22


class SeatStates:
    """A part's seats as codes for effect_moments: each seat's strategy and win share
    (the few distinct shares a part holds, coded once for every feature)."""

    def __init__(self, strategy: np.ndarray, win: np.ndarray, k: int) -> None:
        self.k, self.players, self.strategy, self.win = k, strategy.shape[1], strategy, win
        # polars' hashed unique and a search: np.unique sorts every seat.
        self.shares = np.sort(pl.Series(win.ravel()).unique().to_numpy())
        self.states = 3 * k * len(self.shares)  # per seat: strategy x (not counted, without, with) x share
        codes = self.states ** self.players
        # The narrowest integer a game's code fits in; None when none does.
        self.dtype = np.int32 if codes < 1 << 31 else np.int64 if codes < 1 << 62 else None
        if self.dtype is not None:
            base = strategy.astype(self.dtype) * (3 * len(self.shares)) + np.searchsorted(self.shares, win)
            self.base = [np.ascontiguousarray(base[:, seat]) for seat in range(self.players)]


def effect_moments(seats: SeatStates, value: np.ndarray, threshold: int,
                   missing_when_zero: bool = False) -> stats.Moments:
    """stats.Moments of effect_columns over a part's games, read off the count of each
    distinct game: a game's columns depend only on each seat's strategy, win share and
    state (not counted, without the feature, with it), so the games are counted by one
    integer code and effect_columns is evaluated once per code present. A fraction of
    the work of building every game's columns."""
    k, n, w, states = seats.k, seats.players, len(seats.shares), seats.states
    m = stats.Moments(4 * k)
    if seats.dtype is None:  # a game's code would not fit in an int64
        m.add(effect_columns(seats.strategy, value, seats.win, threshold, k, missing_when_zero))
        return m
    code = np.zeros(len(value), dtype=seats.dtype)
    for seat in range(n):
        v = value[:, seat]
        state = (v >= threshold).astype(seats.dtype)
        state += 1  # 1 without, 2 with the feature
        if missing_when_zero:
            state *= v != 0  # 0: not counted
        state *= w
        state += seats.base[seat]
        if seat:
            state *= states ** seat
        code += state
    if states ** n <= _DENSE_CODES:
        counts = np.bincount(code, minlength=1)
        present = np.flatnonzero(counts)
        counts = counts[present]
    else:
        present, counts = np.unique(code, return_counts=True)
    per_seat = (present[:, None] // states ** np.arange(n)) % states  # codes x seats
    columns = effect_columns(per_seat // (3 * w), (per_seat // w) % 3, seats.shares[per_seat % w], 2, k,
                             missing_when_zero=True)
    m.n = int(counts.sum())
    weighted = columns * counts[:, None]
    m.total = weighted.sum(axis=0)
    m.cross = columns.T @ weighted
    return m
