"""Who beats whom: head-to-head matchups between strategies, counted from the games
they played together, and Bradley-Terry ratings (Elo, with sandwich intervals) fitted
to them. Plain numbers in, plain numbers out (tests/analysis/test_stats.py and
test_game_level.py check them against hand-worked answers)."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps
from statsmodels.stats.proportion import proportions_ztest

from analysis.stats import ALPHA, ELO_PER_LOGIT, Rate, rate_vs, wilson

__all__ = ["Matchups", "matchups", "ahead_counts", "matchups_from_games", "pool_matchups", "Ratings",
           "bradley_terry"]

@dataclass(frozen=True)
class Matchups:
    """Head-to-head results: wins[i, j] is how often strategy i finished ahead of
    strategy j in the games where both played (a tie counts 1/2 to each), games[i, j]
    how many such comparisons there were (symmetric; zero on the diagonal).

    At 3+ players one game holds several comparisons, and they are not independent (a
    bot that finishes first is ahead of everyone at once). `ahead_moments` carries the
    game as the unit: the sum over games of outer(a, a), where a = ahead.ravel() and
    ahead[i, j] counts the comparisons of that one game in which i finished ahead of j
    (k*k by k*k; see matchups_from_games). With it the ratings and head-to-head rates
    get game-level (cluster-robust) intervals; without it every comparison counts as
    an independent trial, which is right only at 2 players."""

    names: list[str]
    wins: np.ndarray
    games: np.ndarray
    ahead_moments: np.ndarray | None = None

    def rate(self, i: int, j: int) -> Rate:
        """i's share of its comparisons with j, tested against 1/2. With game-level
        moments the Wilson interval and test use the effective number of comparisons
        (comparisons / design effect), the design effect being the game-level variance
        of the share over its binomial variance."""
        r = rate_vs(self.wins[i, j], int(self.games[i, j]), 0.5)
        n = self.games[i, j]
        if self.ahead_moments is None or n <= 0:
            return r
        k = len(self.names)
        share = self.wins[i, j] / n
        # Per game: a_ij - share * (a_ij + a_ji), whose sum of squares over games is
        # the game-level (ratio-estimator) variance of the share times n^2.
        v = np.zeros(k * k)
        v[i * k + j] += 1 - share
        v[j * k + i] -= share
        resid = float(v @ self.ahead_moments @ v)
        binomial = n * share * (1 - share)
        if not (resid > 0 and binomial > 0):
            return r
        n_eff = n * binomial / resid
        low, high = wilson(share * n_eff, n_eff)
        _, p = proportions_ztest(share * n_eff, n_eff, value=0.5, prop_var=0.5)
        return Rate(r.successes, r.n, low, high, 0.5, float(p))


def matchups(names: list[str], first: np.ndarray, second: np.ndarray,
             first_score: np.ndarray, n: np.ndarray) -> Matchups:
    """Aggregate pairwise results: in n[r] comparisons strategy first[r] met strategy
    second[r] and earned first_score[r] points (1 a win, 1/2 a tie). Each comparison
    counts as its own game (right at 2 players; see matchups_from_games for more)."""
    k = len(names)
    wins = np.zeros((k, k))
    games = np.zeros((k, k))
    keep = first != second  # a strategy against itself says nothing about strength
    f, s, w, c = first[keep], second[keep], first_score[keep], n[keep]
    np.add.at(wins, (f, s), w)
    np.add.at(wins, (s, f), c - w)
    np.add.at(games, (f, s), c)
    np.add.at(games, (s, f), c)
    return Matchups(list(names), wins, games)


def ahead_counts(strategy: np.ndarray, rank: np.ndarray, k: int) -> np.ndarray:
    """Per game (rows of strategy and rank: games x seats; rank 0 finishes first, equal
    ranks tie), the k x k comparisons of that game in which strategy i finished ahead of
    strategy j (a tie 1/2 each way); seats of the same strategy are not compared (a
    strategy against itself says nothing about strength). Returns (games, k, k)."""
    strategy, rank = np.asarray(strategy), np.asarray(rank)
    games, seats = strategy.shape
    ahead = np.zeros(games * k * k)
    base = np.arange(games) * (k * k)
    for s in range(seats):
        for u in range(seats):
            if s == u:
                continue
            score = np.where(rank[:, s] < rank[:, u], 1.0, np.where(rank[:, s] == rank[:, u], 0.5, 0.0))
            score[strategy[:, s] == strategy[:, u]] = 0.0
            # bincount, not np.add.at (much slower): one cell per game and pair
            ahead += np.bincount(base + strategy[:, s] * k + strategy[:, u], weights=score,
                                 minlength=games * k * k)
    return ahead.reshape(games, k, k)


def matchups_from_games(names: list[str], strategy: np.ndarray, rank: np.ndarray) -> Matchups:
    """Matchups of games given seat by seat: strategy[g, s] is the index (into names) of
    the strategy at seat s of game g, rank[g, s] its finish (lower finishes ahead, equal
    ties). Carries the game-level moments, so intervals treat the game as the unit."""
    k = len(names)
    a = ahead_counts(strategy, rank, k).reshape(len(strategy), k * k)
    wins = a.sum(axis=0).reshape(k, k)
    return Matchups(list(names), wins, wins + wins.T, a.T @ a)


def pool_matchups(names: list[str], parts: list[Matchups]) -> Matchups:
    """Matchups of independent sets of games (e.g. several runs) added up by name, onto
    `names`; the game-level moments are kept only if every part has them."""
    k = len(names)
    wins, games = np.zeros((k, k)), np.zeros((k, k))
    moments = np.zeros((k * k, k * k)) if all(m.ahead_moments is not None for m in parts) else None
    for m in parts:
        at = np.array([names.index(n) for n in m.names])
        wins[np.ix_(at, at)] += m.wins
        games[np.ix_(at, at)] += m.games
        if moments is not None:
            flat = (at[:, None] * k + at[None, :]).ravel()
            moments[np.ix_(flat, flat)] += m.ahead_moments
    return Matchups(list(names), wins, games, moments)


@dataclass(frozen=True)
class Ratings:
    """Bradley-Terry strengths on the Elo scale, centred on the mean strategy, with
    standard errors and 95% Wald intervals; None when the matchups cannot identify
    them (fewer than two strategies, or strategies that never met). `smoothed`: some
    strategies won every meeting with the rest, so the fit added half a win each way to
    every pair that met (see bradley_terry)."""

    names: list[str]
    elo: np.ndarray
    se: np.ndarray
    smoothed: bool = False
    game_level: bool = False  # intervals count the game as the unit (Matchups.ahead_moments)

    @property
    def low(self) -> np.ndarray:
        return self.elo - sps.norm.ppf(1 - ALPHA / 2) * self.se

    @property
    def high(self) -> np.ndarray:
        return self.elo + sps.norm.ppf(1 - ALPHA / 2) * self.se


def _strongly_connected(edges: np.ndarray) -> bool:
    """Every node reaches every other along edges[i, j] (i -> j)."""
    def reach(adjacency: np.ndarray) -> np.ndarray:
        seen = np.zeros(len(adjacency), dtype=bool)
        seen[0], todo = True, [0]
        while todo:
            for j in np.flatnonzero(adjacency[todo.pop()] & ~seen):
                seen[j] = True
                todo.append(int(j))
        return seen

    return bool(reach(edges).all() and reach(edges.T).all())


def bradley_terry(m: Matchups) -> Ratings | None:
    """Fit P(i beats j) = logistic(b_i - b_j) to all pairwise results by maximum
    likelihood (a binomial GLM in statsmodels, strategy 0 as the reference), then
    centre the strengths on their mean, carrying the covariance along so the standard
    errors are those of the centred ratings.

    The maximum-likelihood ratings exist only if every strategy reaches every other by a
    chain of "won at least once against" (Ford's condition). A strategy that won every
    meeting with the rest (a search bot against random play) breaks it, and the fit
    would drift to huge ratings with huger errors; then every pair that met gets half a
    win each way (Jeffreys' prior on each pair's odds), which keeps the ratings finite
    and moves well-measured ones little.

    Standard errors: from the binomial likelihood when every comparison is its own
    game (2 players); with game-level moments (Matchups.ahead_moments) the
    cluster-robust sandwich with the game as the unit, which 3+ player tables need."""
    k = len(m.names)
    met = m.games > 0
    if k < 2 or not _strongly_connected(met):
        return None
    if _strongly_connected(m.wins > 0):
        return _fit_bradley_terry(m, smoothed=False)
    half = 0.5 * met
    return _fit_bradley_terry(Matchups(m.names, m.wins + half, m.games + 2 * half, m.ahead_moments),
                              smoothed=True)


def _fit_bradley_terry(m: Matchups, smoothed: bool) -> Ratings:
    import statsmodels.api as sm  # a second to import, and only needed here

    k = len(m.names)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k) if m.games[i, j] > 0]
    design = np.zeros((len(pairs), k))
    endog = np.zeros((len(pairs), 2))
    for row, (i, j) in enumerate(pairs):
        design[row, i], design[row, j] = 1.0, -1.0
        endog[row] = m.wins[i, j], m.games[i, j] - m.wins[i, j]
    with warnings.catch_warnings():
        # An exactly fitting table (e.g. two strategies: one free parameter per pair)
        # makes statsmodels warn about its dispersion estimate, which a binomial model
        # does not use.
        warnings.simplefilter("ignore")
        fit = sm.GLM(endog, design[:, 1:], family=sm.families.Binomial()).fit()
    full = np.concatenate([[0.0], fit.params])
    cov = np.zeros((k, k))
    cov[1:, 1:] = fit.cov_params() if m.ahead_moments is None else _sandwich(m, full)
    centre = np.eye(k) - 1.0 / k
    elo = ELO_PER_LOGIT * (centre @ full)
    se = ELO_PER_LOGIT * np.sqrt(np.clip(np.diag(centre @ cov @ centre.T), 0, None))
    return Ratings(list(m.names), elo, se, smoothed, m.ahead_moments is not None)


def _sandwich(m: Matchups, strength: np.ndarray) -> np.ndarray:
    """Cluster-robust covariance of the strengths (strategy 0 fixed at 0) with the game
    as the cluster: bread^-1 meat bread^-1, where the bread is the Fisher information of
    the pairwise likelihood and the meat the sum over games of the outer product of each
    game's score. A game's score is linear in its ahead counts a (row (i, j) of `lever`
    is d log P(i ahead of j) / d strength), so the meat is lever' (sum of a a') lever.
    The pairwise fit stays the estimator (consistent, and at 3+ players with Plackett-
    Luce rankings its pairwise probabilities are exactly Bradley-Terry's); only its
    variance counts the dependence of one game's comparisons."""
    k = len(m.names)
    p = 1 / (1 + np.exp(-(strength[:, None] - strength[None, :])))  # P(i ahead of j)
    diff = np.eye(k)[:, None, :] - np.eye(k)[None, :, :]  # [i, j] -> e_i - e_j
    lever = ((1 - p)[:, :, None] * diff).reshape(k * k, k)
    meat = lever.T @ m.ahead_moments @ lever
    upper = np.triu(m.games, 1)
    bread = np.einsum("ij,ijk,ijl->kl", upper * p * (1 - p), diff, diff)
    inv = np.linalg.inv(bread[1:, 1:])
    return inv @ meat[1:, 1:] @ inv
