"""The statistics of the balance reports: intervals, tests, false-discovery correction,
pairwise matchups and Bradley-Terry ratings. Plain numbers in, plain numbers out, so
every function can be checked against a hand-worked answer (tests/test_stats.py).

Shared victories: a seat that shares a victory with k-1 others scores 1/k of a win. A
rate is then the mean of outcomes in [0, 1] rather than of 0/1 outcomes; its variance is
at most that of a Bernoulli outcome with the same mean, so the Wilson interval of
(sum of win shares) / (games) is valid and slightly conservative.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import (confint_proportions_2indep, proportion_confint,
                                          proportions_ztest, test_proportions_2indep)

__all__ = ["CONFIDENCE", "ALPHA", "Rate", "Difference", "wilson", "rate", "rate_vs",
           "difference", "equal_shares_test", "benjamini_hochberg", "mean_interval",
           "Matchups", "matchups", "Ratings", "bradley_terry", "ELO_PER_LOGIT",
           "same_game_difference", "Stratified", "mantel_haenszel_difference", "homogeneity_test"]

CONFIDENCE = 0.95
ALPHA = 1 - CONFIDENCE
# Ratings are fitted on the logit scale; 400 Elo points are a factor of 10 in odds.
ELO_PER_LOGIT = 400 / math.log(10)


@dataclass(frozen=True)
class Rate:
    """successes / n with its 95% Wilson interval; p_value tests it against `null`."""

    successes: float
    n: int
    low: float
    high: float
    null: float | None = None
    p_value: float | None = None

    @property
    def value(self) -> float:
        return self.successes / self.n if self.n else math.nan


@dataclass(frozen=True)
class Difference:
    """Rate a minus rate b, its 95% Newcombe interval and a two-sided score test."""

    a: Rate
    b: Rate
    low: float
    high: float
    p_value: float

    @property
    def value(self) -> float:
        return self.a.value - self.b.value


def wilson(successes: float, n: int) -> tuple[float, float]:
    """95% Wilson score interval of successes / n (successes may be fractional)."""
    if n <= 0:
        return math.nan, math.nan
    low, high = proportion_confint(successes, n, alpha=ALPHA, method="wilson")
    return float(low), float(high)


def rate(successes: float, n: int) -> Rate:
    return Rate(float(successes), int(n), *wilson(successes, n))


def rate_vs(successes: float, n: int, null: float) -> Rate:
    """A rate with the score test of "the true rate is `null`" (e.g. a fair 1/k share):
    the z statistic uses the variance under the null, as the Wilson interval does, so
    the test rejects exactly when the interval excludes `null`."""
    r = rate(successes, n)
    if n <= 0 or not 0 < null < 1:
        return r
    _, p = proportions_ztest(successes, n, value=null, prop_var=null)
    return Rate(r.successes, r.n, r.low, r.high, null, float(p))


def difference(s1: float, n1: int, s2: float, n2: int) -> Difference:
    """Rate 1 minus rate 2 of independent samples: Newcombe's hybrid score interval
    (his method 10) and the score test of equal rates."""
    low, high = confint_proportions_2indep(s1, n1, s2, n2, method="newcomb",
                                           compare="diff", alpha=ALPHA)
    # The test also computes the ratio and odds ratio of the rates, which divide by zero
    # when a rate is 0 (a feature value whose seats never won); the difference is fine.
    with np.errstate(divide="ignore", invalid="ignore"):
        p = test_proportions_2indep(s1, n1, s2, n2, method="score", compare="diff").pvalue
    return Difference(rate(s1, n1), rate(s2, n2), float(low), float(high),
                      float(p) if np.isfinite(p) else 1.0)


def equal_shares_test(wins: np.ndarray) -> tuple[float, float]:
    """Chi-square goodness of fit of "every seat wins equally often": `wins[s]` is the
    (possibly fractional) number of wins of seat s over the same games, so under the
    null each seat expects total / k. Returns (statistic, p value), df = k - 1."""
    wins = np.asarray(wins, dtype=float)
    result = sps.chisquare(wins, np.full(len(wins), wins.sum() / len(wins)))
    return float(result.statistic), float(result.pvalue)


def same_game_difference(w1: float, w2: float, n: int) -> Difference:
    """Win rate of position 1 minus position 2 when both sat in the same n games: their
    wins are negatively correlated (one's win is the other's loss), so the samples are
    not independent. Multinomial Wald interval, Var = (p1 + p2 - (p1 - p2)^2) / n, and
    McNemar's test of p1 = p2, z = (w1 - w2) / sqrt(w1 + w2)."""
    d = (w1 - w2) / n if n else math.nan
    if n <= 0 or w1 + w2 <= 0:
        return Difference(rate(w1, n), rate(w2, n), math.nan, math.nan, 1.0)
    half = sps.norm.ppf(1 - ALPHA / 2) * math.sqrt(max((w1 + w2) / n - d * d, 0.0) / n)
    p = 2 * sps.norm.sf(abs(w1 - w2) / math.sqrt(w1 + w2))
    return Difference(rate(w1, n), rate(w2, n), d - half, d + half, float(p))


@dataclass(frozen=True)
class Stratified:
    """A risk difference combined over strata (Mantel-Haenszel weights n1 n0 / N):
    `value` is the weighted mean of the within-stratum differences, `with_rate` and
    `without_rate` the same-weighted rates (so with_rate - without_rate = value), with
    Sato's variance, a Wald 95% interval and its z test."""

    value: float
    low: float
    high: float
    p_value: float
    with_rate: float
    without_rate: float
    strata: int  # strata with seats both with and without


def mantel_haenszel_difference(w1: np.ndarray, n1: np.ndarray, w0: np.ndarray, n0: np.ndarray) -> Stratified | None:
    """Risk difference of "with" (w1 wins in n1) against "without" (w0 in n0) within
    each stratum (e.g. the strategy that held the feature), combined by Mantel-Haenszel;
    strata lacking either group carry no information and drop out. None when none is
    left. Variance: Sato (1989), consistent both for many small and few large strata."""
    w1, n1, w0, n0 = (np.asarray(x, dtype=float) for x in (w1, n1, w0, n0))
    keep = (n1 > 0) & (n0 > 0)
    if not keep.any():
        return None
    a, n1, c, n0 = w1[keep], n1[keep], w0[keep], n0[keep]
    total = n1 + n0
    weight = n1 * n0 / total
    p1, p0 = a / n1, c / n0
    sw = weight.sum()
    rd = float((weight * (p1 - p0)).sum() / sw)
    big_p = (n1 * n1 * c - n0 * n0 * a + n1 * n0 * (n0 - n1) / 2) / (total * total)
    big_q = (a * (n0 - c) + c * (n1 - a)) / (2 * total)
    var = max(float((rd * big_p.sum() + big_q.sum()) / (sw * sw)), 0.0)
    se = math.sqrt(var)
    z = sps.norm.ppf(1 - ALPHA / 2)
    p = float(2 * sps.norm.sf(abs(rd) / se)) if se > 0 else (1.0 if rd == 0 else 0.0)
    return Stratified(rd, rd - z * se, rd + z * se, p, float((weight * p1).sum() / sw),
                      float((weight * p0).sum() / sw), int(keep.sum()))


def homogeneity_test(wins: np.ndarray, n: np.ndarray) -> tuple[float, float]:
    """Chi-square test that groups (e.g. the values of a dealt solo target) win equally
    often: the 2 x k table of wins and non-wins. Returns (statistic, p value)."""
    wins, n = np.asarray(wins, dtype=float), np.asarray(n, dtype=float)
    keep = n > 0
    if keep.sum() < 2:
        return math.nan, 1.0
    table = np.vstack([wins[keep], n[keep] - wins[keep]])
    if (table.sum(axis=1) == 0).any():
        return 0.0, 1.0
    chi2, p, _, _ = sps.chi2_contingency(table, correction=False)
    return float(chi2), float(p)


def benjamini_hochberg(p_values: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p values (q values): reject where q < ALPHA to keep
    the expected share of false findings among the findings below ALPHA."""
    p_values = np.asarray(p_values, dtype=float)
    if p_values.size == 0:
        return p_values
    return multipletests(p_values, alpha=ALPHA, method="fdr_bh")[1]


def mean_interval(n: int, total: float, total_sq: float) -> tuple[float, float, float]:
    """Mean and 95% t interval from the count, sum and sum of squares of a sample (what
    a streaming aggregation yields)."""
    if n <= 0:
        return math.nan, math.nan, math.nan
    mean = total / n
    if n == 1:
        return mean, math.nan, math.nan
    var = max(total_sq - n * mean * mean, 0.0) / (n - 1)
    half = sps.t.ppf(1 - ALPHA / 2, n - 1) * math.sqrt(var / n)
    return mean, float(mean - half), float(mean + half)


@dataclass(frozen=True)
class Matchups:
    """Head-to-head results: wins[i, j] is how often strategy i finished ahead of
    strategy j in the games where both played (a tie counts 1/2 to each), games[i, j]
    how many such comparisons there were (symmetric; zero on the diagonal)."""

    names: list[str]
    wins: np.ndarray
    games: np.ndarray

    def rate(self, i: int, j: int) -> Rate:
        return rate_vs(self.wins[i, j], int(self.games[i, j]), 0.5)


def matchups(names: list[str], first: np.ndarray, second: np.ndarray,
             first_score: np.ndarray, n: np.ndarray) -> Matchups:
    """Aggregate pairwise results: in n[r] comparisons strategy first[r] met strategy
    second[r] and earned first_score[r] points (1 a win, 1/2 a tie)."""
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


@dataclass(frozen=True)
class Ratings:
    """Bradley-Terry strengths on the Elo scale, centred on the mean strategy, with
    standard errors and 95% Wald intervals; None when the matchups cannot identify
    them (fewer than two strategies, or strategies that never met)."""

    names: list[str]
    elo: np.ndarray
    se: np.ndarray

    @property
    def low(self) -> np.ndarray:
        return self.elo - sps.norm.ppf(1 - ALPHA / 2) * self.se

    @property
    def high(self) -> np.ndarray:
        return self.elo + sps.norm.ppf(1 - ALPHA / 2) * self.se


def _connected(games: np.ndarray) -> bool:
    k = len(games)
    seen, todo = {0}, [0]
    while todo:
        i = todo.pop()
        for j in np.flatnonzero(games[i] > 0):
            if j not in seen:
                seen.add(int(j))
                todo.append(int(j))
    return len(seen) == k


def bradley_terry(m: Matchups) -> Ratings | None:
    """Fit P(i beats j) = logistic(b_i - b_j) to all pairwise results by maximum
    likelihood (a binomial GLM in statsmodels, strategy 0 as the reference), then
    centre the strengths on their mean, carrying the covariance along so the standard
    errors are those of the centred ratings."""
    import statsmodels.api as sm  # heavy import, only needed here

    k = len(m.names)
    if k < 2 or not _connected(m.games):
        return None
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
    if not (np.all(np.isfinite(fit.params)) and np.all(np.isfinite(fit.bse))):
        return None  # a strategy that always (or never) wins has no finite rating
    full = np.concatenate([[0.0], fit.params])
    cov = np.zeros((k, k))
    cov[1:, 1:] = fit.cov_params()
    centre = np.eye(k) - 1.0 / k
    elo = ELO_PER_LOGIT * (centre @ full)
    se = ELO_PER_LOGIT * np.sqrt(np.clip(np.diag(centre @ cov @ centre.T), 0, None))
    return Ratings(list(m.names), elo, se)
