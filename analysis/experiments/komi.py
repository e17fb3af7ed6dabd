"""The score bonus by turn position (komi) that would equalise turn positions, estimated
from the final scores of a mirror match: for the balance experiment's compensation.

What a bonus would have decided is worked out game by game with the game's own rules
for the winner (simcore.meta.Victory: the best adjusted score, then its tie-breaks,
and the end reasons the scores do not decide), checked on the games themselves: a
recorded result those rules do not give back is held as played."""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from analysis.rundir import RunDir
from simcore.meta import Victory
from simcore.registry import GameSpec

__all__ = ["Komi", "Outcomes", "estimate_komi", "position_rates_with_bonus", "position_shares", "position_table"]

DRAWS = 1000  # bootstrap replicates of the bonus's intervals
SWEEPS = 100  # at most, of the positions in turn, until the fair bonuses settle
BLOCKS = 1000  # games are resampled in this many blocks (fewer with fewer games)


@dataclass(frozen=True)
class Outcomes:
    """Recorded games by turn position (games x positions, sorted by game index)."""

    scores: np.ndarray  # final scores, the run's own bonus included
    wins: np.ndarray  # win shares as recorded
    keys: np.ndarray  # games x positions x tie-breaks: more wins a tie on points
    fixed: np.ndarray  # per game: its result stands whatever the bonus

    @property
    def games(self) -> int:
        return len(self.scores)

    @classmethod
    def of(cls, scores: Any, wins: Any, keys: Any = None, in_play: Any = None, ranks: Any = None) -> Outcomes:
        """Outcomes from arrays: `keys` the tie-breaks (none: a tie on points is shared),
        `in_play` the games won whatever the scores, `ranks` the recorded ranks.

        A game whose recorded result the rules (the best score, then the keys) do not
        give back was decided by a tie-break the results do not record (a tie on every
        key, won outright): the recorded ranks then order the seats that tie, as that
        tie-break did, and a game they do not explain either is held as played."""
        scores = np.asarray(scores, dtype=float)
        wins = np.asarray(wins, dtype=float)
        keys = np.zeros((*scores.shape, 0)) if keys is None else np.asarray(keys, dtype=float)
        if keys.ndim == 2:
            keys = keys[:, :, None]
        fixed = np.zeros(len(scores), dtype=bool) if in_play is None else np.asarray(in_play, dtype=bool)
        missed = ~fixed & _differ(_shares(scores, keys), wins)
        if ranks is not None and missed.any():
            last = np.where(missed[:, None], -np.asarray(ranks, dtype=float), 0.0)
            keys = np.concatenate([keys, last[:, :, None]], axis=2)
            missed = ~fixed & _differ(_shares(scores, keys), wins)
        return cls(scores, wins, keys, fixed | missed)


def _differ(shares: np.ndarray, wins: np.ndarray) -> np.ndarray:
    return np.abs(shares - wins).max(axis=1) > 1e-6


def position_table(path: Path, players: int, game: GameSpec | None = None) -> Outcomes:
    """The run's games by turn position, with the tie-breaks and the end reasons the
    game declares (`game`: its Victory; None reads scores and wins only)."""
    victory = game.victory if game is not None else Victory()
    features = [t for t in victory.tie_breaks if isinstance(t, str)]
    columns = ["game", "position", "score", "win", "rank", "end_reason", *features]
    scores, wins, ranks, keys, in_play, games = [], [], [], [], [], []
    run = RunDir(path)
    for part in run.parts:
        df = run.read(part, columns).sort("game", "position")
        g = df.height // players
        games.append(df["game"].to_numpy()[::players])
        scores.append(df["score"].to_numpy().astype(np.float64).reshape(g, players))
        wins.append(df["win"].to_numpy().astype(np.float64).reshape(g, players))
        ranks.append(df["rank"].to_numpy().astype(np.float64).reshape(g, players))
        keys.append(np.stack([df[f].to_numpy().astype(np.float64).reshape(g, players) for f in features], axis=2)
                    if features else np.zeros((g, players, 0)))
        in_play.append(df["end_reason"].cast(str).is_in(list(victory.in_play)).to_numpy()[::players])
    order = np.argsort(np.concatenate(games))
    keys_all = np.concatenate(keys)[order]
    if any(not isinstance(t, str) for t in victory.tie_breaks):
        params = run.manifest["params"]
        columns_of = iter(range(keys_all.shape[2]))
        by_rule = []
        for t in victory.tie_breaks:
            if isinstance(t, str):
                by_rule.append(keys_all[:, :, next(columns_of)])
            else:
                by_rule.append(np.broadcast_to(np.asarray(t(params), dtype=float), keys_all.shape[:2]))
        keys_all = np.stack(by_rule, axis=2)
    return Outcomes.of(np.concatenate(scores)[order], np.concatenate(wins)[order], keys_all,
                       np.concatenate(in_play)[order], np.concatenate(ranks)[order])


def _shares(adjusted: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Win shares by the best adjusted score, then each tie-break in turn, ties shared."""
    top = adjusted == adjusted.max(axis=1, keepdims=True)
    for j in range(keys.shape[2]):
        k = np.where(top, keys[:, :, j], -np.inf)
        top &= k == k.max(axis=1, keepdims=True)
    return top / top.sum(axis=1, keepdims=True)


def position_shares(o: Outcomes, bonus: Sequence[float]) -> np.ndarray:
    """Each game's win shares by position if `bonus[p]` points were added to position
    p's final score (games x positions); a result held as played stays."""
    adjusted = o.scores + np.asarray(bonus, dtype=float)[None, :]
    return np.where(o.fixed[:, None], o.wins, _shares(adjusted, o.keys))


def position_rates_with_bonus(o: Outcomes, bonus: Sequence[float]) -> np.ndarray:
    """Each position's win rate with `bonus` (see position_shares)."""
    return position_shares(o, bonus).mean(axis=0)


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
    balanced: bool | None = None  # every position's confirmed rate within the margin of fair (None: too few games)
    held: int = 0  # games whose result no bonus changes (won in play, or not given back by the rules)


def _crossing(k: np.ndarray, rate: np.ndarray, target: float) -> np.ndarray:
    """Where each row of rates increasing in k (a step function at whole points) crosses
    target, interpolated between the whole points around it (±inf: beyond the grid)."""
    rate = np.atleast_2d(rate)
    above = rate >= target
    j = np.where(above.any(axis=1), above.argmax(axis=1), -1)
    prev = np.maximum(j - 1, 0)
    r0, r1 = rate[np.arange(len(rate)), prev], rate[np.arange(len(rate)), np.maximum(j, 0)]
    with np.errstate(divide="ignore", invalid="ignore"):
        between = np.where(r1 > r0, k[prev] + (target - r0) / (r1 - r0) * (k[np.maximum(j, 0)] - k[prev]),
                           k[np.maximum(j, 0)])
    first = np.where(rate[:, 0] > target, -np.inf, float(k[0]))
    return np.where(j < 0, np.inf, np.where(j == 0, first, between)).astype(float)


class _Curves:
    """Position p's win share as a function of its own whole-point bonus, the others'
    fixed, summed by block of games so that a bootstrap replicate (blocks drawn with
    replacement) is a weighted sum. In a game, p wins outright once its bonus exceeds
    d, the others' best adjusted score less its own, shares or loses the tie at d by
    the tie-breaks, and loses below it; a held game keeps its recorded share."""

    def __init__(self, o: Outcomes, blocks: int) -> None:
        self.o = o
        edges = np.linspace(0, o.games, blocks + 1).astype(int)
        self.counts = np.diff(edges).astype(float)
        self.block = np.repeat(np.arange(blocks), np.diff(edges))
        self.cache: dict[tuple[int, tuple[int, ...]], tuple[np.ndarray, np.ndarray]] = {}
        # Beyond this a bonus decides every game it can: the others' are held within it.
        self.bound = float(np.ptp(o.scores)) + 2 if o.games else 2.0

    def table(self, p: int, others: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(grid of p's bonus, blocks x grid: p's wins in each block at that bonus)."""
        key = (p, tuple(int(b) for b in others))
        if key in self.cache:
            return self.cache[key]
        o = self.o
        adjusted = o.scores + others[None, :]
        adjusted[:, p] = -np.inf
        best = adjusted.max(axis=1)
        d = np.rint(best - o.scores[:, p]).astype(np.int64)
        tied = adjusted == best[:, None]
        # How p's tie-breaks compare with each other seat's: the first that differs.
        cmp = np.zeros(adjusted.shape)
        for j in reversed(range(o.keys.shape[2])):
            diff = o.keys[:, p, j][:, None] - o.keys[:, :, j]
            cmp = np.where(diff != 0, np.sign(diff), cmp)
        beaten = (tied & (cmp < 0)).any(axis=1)
        tie_share = np.where(beaten, 0.0, 1.0 / (1 + (tied & (cmp == 0)).sum(axis=1)))
        live = ~o.fixed
        lo, hi = int(d[live].min(initial=0)) - 1, int(d[live].max(initial=0)) + 2
        grid = np.arange(lo, hi + 1)
        cells = len(self.counts) * len(grid)
        index = (self.block * len(grid) + d - lo)[live]
        at = np.bincount(index, tie_share[live], minlength=cells).reshape(len(self.counts), len(grid))
        outright = np.bincount(index, minlength=cells).reshape(len(self.counts), len(grid)).astype(float)
        # p wins outright at bonus b in the games with d < b, shares the ties at d == b.
        wins = np.cumsum(outright, axis=1) - outright + at
        wins += np.bincount(self.block, np.where(o.fixed, o.wins[:, p], 0.0), minlength=len(self.counts))[:, None]
        self.cache[key] = (grid, wins)
        return grid, wins

    def estimate(self, weights: np.ndarray, sweeps: int = SWEEPS) -> np.ndarray:
        """The fair bonus of each position (real, relative to position 0) for each row
        of block weights (draws x blocks). A share is known at whole points; between
        them it is interpolated linearly in every position's bonus (multilinearly), so
        the fair bonuses, where every later position's share is fair at once, move
        continuously with the games. Solved position by position (each share rises
        with its own bonus and falls with the others') until no bonus moves by 1e-6."""
        weights = np.atleast_2d(weights)
        draws, n = len(weights), self.o.scores.shape[1]
        fair = 1 / n
        total = weights @ self.counts
        rates: dict[tuple[int, tuple[int, ...]], tuple[np.ndarray, np.ndarray]] = {}

        def rate(p: int, corner: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
            if (p, corner) not in rates:
                grid, wins = self.table(p, np.array(corner, dtype=float))
                rates[p, corner] = grid, (weights @ wins) / total[:, None]
            return rates[p, corner]

        real = np.zeros((draws, n))
        for _ in range(sweeps):
            before = real.copy()
            for p in range(1, n):
                others = [q for q in range(1, n) if q != p]
                held = np.clip(real[:, others], -self.bound, self.bound)
                floor = np.floor(held).astype(int)
                frac = held - floor
                groups: dict[tuple[int, ...], list[int]] = {}
                for r in range(draws):
                    groups.setdefault(tuple(floor[r]), []).append(r)
                for key, members in groups.items():
                    idx = np.array(members)
                    parts = []
                    for bits in itertools.product((0, 1), repeat=len(others)):
                        corner = [0] * n
                        w = np.ones(len(idx))
                        for q, k, bit, f in zip(others, key, bits, frac[idx].T):
                            corner[q] = k + bit
                            w = w * (f if bit else 1 - f)
                        grid, r = rate(p, tuple(corner))
                        parts.append((grid, w[:, None] * r[idx]))
                    lo = min(g[0] for g, _ in parts)
                    hi = max(g[-1] for g, _ in parts)
                    # Below its grid a share is its first value, above it its last.
                    curve = sum(np.pad(x, ((0, 0), (g[0] - lo, hi - g[-1])), mode="edge") for g, x in parts)
                    real[idx, p] = _crossing(np.arange(lo, hi + 1), curve, fair)
            moved = np.abs(np.nan_to_num(real - before, posinf=1.0, neginf=1.0))
            if moved.max() < 1e-6:
                break
        return real


def estimate_komi(o: Outcomes, sweeps: int = SWEEPS, draws: int = DRAWS, seed: int = 0) -> Komi:
    """The points to add to each later turn position's final score so that every
    position wins its fair share, from recorded games by position.

    For position p, with the other bonuses fixed at whole points, its win share is a
    step function of its own bonus b (see _Curves); between whole points of every bonus
    the shares are interpolated linearly, and the fair bonuses are where every later
    position's share is 1/n at once (_Curves.estimate). The 95% intervals are
    percentiles of a bootstrap over games (blocks of them drawn with replacement, the
    whole estimate repeated on each draw), which holds the uncertainty of every position
    at once. The proposal is the whole-point bonus vector, among the floors and ceilings
    of the estimates, whose widest departure from fair is smallest."""
    g, n = o.scores.shape
    fair = 1 / n
    curves = _Curves(o, min(BLOCKS, g))
    blocks = len(curves.counts)
    real = curves.estimate(np.ones(blocks), sweeps)[0]
    picks = np.random.default_rng(seed).integers(blocks, size=(draws, blocks))
    picks += np.arange(draws)[:, None] * blocks
    weights = np.bincount(picks.ravel(), minlength=draws * blocks).reshape(draws, blocks).astype(float)
    reps = curves.estimate(weights, sweeps)
    lows = np.quantile(reps, 0.025, axis=0, method="lower")
    highs = np.quantile(reps, 0.975, axis=0, method="higher")
    # Every resample alike (games without variation) shows only the whole points around
    # the estimate, between which the share steps: never a zero-width interval.
    flat = (highs - lows < 1e-12) & np.isfinite(real)
    lows = np.where(flat, np.ceil(real) - 1, lows)
    highs = np.where(flat, np.floor(real) + 1, highs)
    candidates = [np.array(c, dtype=float) for c in _floor_ceil(real)]
    best = min(candidates, key=lambda b: float(np.abs(position_rates_with_bonus(o, b) - fair).max()))
    best -= best.min()  # the same bonus as points given, never taken: no entry below zero
    predicted = position_rates_with_bonus(o, best)
    return Komi([(float(real[p]), float(lows[p]) if p else 0.0, float(highs[p]) if p else 0.0) for p in range(n)],
                [int(x) for x in best], predicted.tolist(), g, held=int(o.fixed.sum()))


def _floor_ceil(real: np.ndarray) -> list[list[int]]:
    out: list[list[int]] = [[0]]
    for x in real[1:]:
        options = {math.floor(x), math.ceil(x)} if math.isfinite(x) else {0}
        out = [c + [o] for c in out for o in sorted(options)]
    return out
