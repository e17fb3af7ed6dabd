"""The statistics of the balance reports: intervals, tests, false-discovery correction
(who beats whom, the matchups and ratings, is analysis.ratings). Plain numbers in,
plain numbers out, so every function can be checked against a hand-worked answer
(tests/analysis/test_stats.py).

Shared victories: a seat that shares a victory with k-1 others scores 1/k of a win. A
rate is then the mean of outcomes in [0, 1] rather than of 0/1 outcomes; its variance is
at most that of a Bernoulli outcome with the same mean, so the Wilson interval of
(sum of win shares) / (games) is valid and slightly conservative.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import (confint_proportions_2indep, proportion_confint,
                                          proportions_ztest, test_proportions_2indep)

__all__ = ["CONFIDENCE", "ALPHA", "Rate", "Difference", "wilson", "rate", "rate_vs",
           "difference", "equal_shares_test", "benjamini_hochberg", "mean_interval", "ELO_PER_LOGIT",
           "same_game_difference", "Stratified", "mantel_haenszel_difference", "mantel_haenszel_games", "homogeneity_test",
           "Z95", "Moments", "gradient", "Estimate", "delta_estimate", "paired_delta",
           "unpaired_delta", "confidence_sequence_halfwidth", "Crossing", "zero_crossing",
           "block_bootstrap"]

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


# ---- experiments: paired differences, sequential intervals, crossings ----
# (compare, sweep and --precision; see analysis/compare.py, sweep.py, sequential.py)

Z95 = float(sps.norm.ppf(1 - ALPHA / 2))


class Moments:
    """Streaming count, sum and cross-products of per-game vectors (rows of a matrix),
    so a mean and covariance can be accumulated part by part in bounded memory."""

    def __init__(self, k: int) -> None:
        self.n = 0
        self.total = np.zeros(k)
        self.cross = np.zeros((k, k))

    def add(self, rows: np.ndarray) -> None:
        rows = np.asarray(rows, dtype=float)
        self.n += len(rows)
        # A product with ones, not rows.sum(axis=0): numpy sums a tall, thin matrix along
        # its rows several times slower (6 ms against 0.7 for a part's 250,000 games).
        self.total += np.ones(len(rows)) @ rows
        # einsum for one or two columns: BLAS takes a slow threaded path for such thin
        # products (15 ms for one column of 30,000 rows on a busy machine, 0.02 ms here).
        self.cross += np.einsum("ij,ik->jk", rows, rows) if rows.shape[1] <= 2 else rows.T @ rows

    @property
    def mean(self) -> np.ndarray:
        return self.total / self.n if self.n else np.full(len(self.total), math.nan)

    @property
    def cov(self) -> np.ndarray:
        """The sample covariance (n - 1 in the denominator)."""
        if self.n < 2:
            return np.full(self.cross.shape, math.nan)
        m = self.mean
        return (self.cross - self.n * np.outer(m, m)) / (self.n - 1)


def gradient(h, x: np.ndarray) -> np.ndarray:
    """Central-difference gradient of a smooth scalar function of a mean vector."""
    x = np.asarray(x, dtype=float)
    g = np.zeros(len(x))
    for j in range(len(x)):
        step = 1e-6 * max(1.0, abs(x[j]))
        up, down = x.copy(), x.copy()
        up[j] += step
        down[j] -= step
        g[j] = (h(up) - h(down)) / (2 * step)
    return g


@dataclass(frozen=True)
class Estimate:
    """A value with its standard error, 95% normal interval and the two-sided p value of
    "the true value is 0" (a difference, or an advantage over a fair share)."""

    value: float
    se: float
    n: int
    se_unpaired: float = math.nan  # the same difference's SE had the samples been independent

    @property
    def low(self) -> float:
        return self.value - Z95 * self.se

    @property
    def high(self) -> float:
        return self.value + Z95 * self.se

    @property
    def p_value(self) -> float:
        if not self.se > 0:
            return 1.0 if self.value == 0 else 0.0
        return float(2 * sps.norm.sf(abs(self.value) / self.se))

    @property
    def games_saved(self) -> float:
        """Pairing's worth as a factor of games: an unpaired comparison needs this many
        times the games for the same standard error ((SE unpaired / SE paired)^2)."""
        if not (self.se > 0 and self.se_unpaired > 0):
            return math.nan
        return (self.se_unpaired / self.se) ** 2


def delta_estimate(h, m: Moments, offset: float = 0.0) -> Estimate:
    """h(mean) - offset with its delta-method standard error, from one sample's moments."""
    mean = m.mean
    g = gradient(h, mean)
    var = float(g @ m.cov @ g) / m.n if m.n > 1 else math.nan
    return Estimate(float(h(mean)) - offset, math.sqrt(max(var, 0.0)), m.n)


def paired_delta(h, joint: Moments) -> Estimate:
    """h(variant mean) - h(base mean) over paired games: `joint` holds per game the k
    base columns followed by the same k variant columns. The delta method over the
    joint covariance carries the pairing (common random numbers); se_unpaired drops
    the cross-covariance, i.e. what the same games would give if they were independent."""
    k = len(joint.total) // 2
    mean, cov = joint.mean, joint.cov
    gb, gv = gradient(h, mean[:k]), gradient(h, mean[k:])
    g = np.concatenate([-gb, gv])
    n = joint.n
    var = float(g @ cov @ g) / n
    var_unpaired = float(gb @ cov[:k, :k] @ gb + gv @ cov[k:, k:] @ gv) / n
    return Estimate(float(h(mean[k:]) - h(mean[:k])), math.sqrt(max(var, 0.0)), n,
                    math.sqrt(max(var_unpaired, 0.0)))


def unpaired_delta(h, base: Moments, variant: Moments) -> Estimate:
    """h(variant mean) - h(base mean) of independent samples (of any sizes)."""
    b, v = delta_estimate(h, base), delta_estimate(h, variant)
    se = math.hypot(b.se, v.se)
    return Estimate(v.value - b.value, se, min(base.n, variant.n), se)


def confidence_sequence_halfwidth(se: float, n: int, planned: float, alpha: float = ALPHA) -> float:
    """Half-width of an asymptotic confidence sequence for a mean (Waudby-Smith, Arnold,
    Wu and Ramdas, "Time-uniform central limit theory and asymptotic confidence
    sequences", Ann. Statist. 2024, Thm 2.2, the Gaussian-mixture boundary): with the
    sample standard deviation s = se * sqrt(n), the interval mean ± s * sqrt(2 (n r^2 + 1)
    / (n^2 r^2) * log(sqrt(n r^2 + 1) / alpha)) covers the true mean at every n at once
    with probability 1 - alpha (asymptotically), so it may be looked at after every round
    of games and a run stopped when it is narrow enough. r is tuned to be tightest at
    `planned` games (chosen before any data, e.g. from the target precision)."""
    if n < 2 or not math.isfinite(se):
        return math.inf
    r2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / planned
    sd = se * math.sqrt(n)
    return sd * math.sqrt(2 * (n * r2 + 1) / (n * n * r2) * math.log(math.sqrt(n * r2 + 1) / alpha))


def mantel_haenszel_games(m: Moments) -> Stratified | None:
    """mantel_haenszel_difference with the game as the unit: `m` holds per game, for
    each stratum s, the columns [wins with, seats with, wins without, seats without]
    (4 per stratum). The estimate is the same smooth function of their means; its
    standard error comes from the delta method over the games' covariance, as compare's
    effects do, because the seats of one game are not independent (their wins sum to
    one). Strata lacking either group drop out; None when none is left."""
    if m.n < 2:
        return None
    mean = m.mean.reshape(-1, 4)
    keep = (mean[:, 1] > 0) & (mean[:, 3] > 0)
    if not keep.any():
        return None
    cols = np.flatnonzero(np.repeat(keep, 4))
    x, cov = m.mean[cols], m.cov[np.ix_(cols, cols)]

    def parts(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a, n1, c, n0 = v.reshape(-1, 4).T
        return n1 * n0 / (n1 + n0), a / n1, c / n0

    def rd(v: np.ndarray) -> float:
        w, p1, p0 = parts(v)
        return float((w * (p1 - p0)).sum() / w.sum())

    value = rd(x)
    g = gradient(rd, x)
    se = math.sqrt(max(float(g @ cov @ g) / m.n, 0.0))
    p = float(2 * sps.norm.sf(abs(value) / se)) if se > 0 else (1.0 if value == 0 else 0.0)
    w, p1, p0 = parts(x)
    return Stratified(value, value - Z95 * se, value + Z95 * se, p, float((w * p1).sum() / w.sum()),
                      float((w * p0).sum() / w.sum()), int(keep.sum()))


@dataclass(frozen=True)
class Crossing:
    """Where a curve sampled at increasing x crosses zero: linear interpolation between
    the two points around the sign change, with a 95% parametric-bootstrap interval
    (each point's value redrawn from its normal estimate, the crossing found again).
    An end at ±inf means the crossing could lie outside the sampled range."""

    x: float
    low: float
    high: float
    crossings: int  # sign changes along the estimated curve (more than one: not monotone)
    method: str


def _first_crossing(x: np.ndarray, y: np.ndarray) -> float:
    """Per row of y, the x of the first sign change by interpolation; ±inf when there is
    none (+inf if the row keeps the sign y ends with on the right, i.e. it would cross
    beyond the right end, judged by the overall trend)."""
    sign = np.sign(y)
    change = (sign[:, :-1] * sign[:, 1:]) <= 0
    any_change = change.any(axis=1)
    j = np.argmax(change, axis=1)
    rows = np.arange(len(y))
    y0, y1 = y[rows, j], y[rows, j + 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(y0 == y1, 0.0, y0 / (y0 - y1))
    found = x[j] + t * (x[j + 1] - x[j])
    falling = y[:, 0] > y[:, -1]
    beyond = np.where((y[:, -1] > 0) == falling, np.inf, -np.inf)
    return np.where(any_change, found, beyond)


def block_bootstrap(sums: np.ndarray, counts: np.ndarray, draws: int = 4000, seed: int = 0) -> np.ndarray:
    """Bootstrap replicates of several means measured on the same games: games are cut
    into blocks (rows), sums[b, j] is the total of quantity j over block b and
    counts[b, j] its games. Each replicate resamples the blocks, the same blocks for
    every j, so the correlation between the quantities (points run on the same seeds)
    is kept. Returns (draws x quantities)."""
    sums, counts = np.asarray(sums, dtype=float), np.asarray(counts, dtype=float)
    blocks = len(sums)
    # Each replicate draws `blocks` blocks with replacement: the counts of each block
    # (a multinomial; drawing indices and counting them is ten times faster).
    picks = np.random.default_rng(seed).integers(blocks, size=(draws, blocks))
    picks += np.arange(draws)[:, None] * blocks
    weights = np.bincount(picks.ravel(), minlength=draws * blocks).reshape(draws, blocks).astype(float)
    return (weights @ sums) / (weights @ counts)


def zero_crossing(x, value, se, draws: int = 4000, seed: int = 0,
                  replicates: np.ndarray | None = None) -> Crossing | None:
    """The zero crossing of a curve known at points x (increasing) by estimates with
    standard errors, or None when the estimated curve does not change sign. The
    interval comes from `replicates` of the values (draws x points, e.g. from
    block_bootstrap over the points' common games) or, without them, from independent
    normal redraws of every point (right for points measured on independent games)."""
    x, value, se = (np.asarray(a, dtype=float) for a in (x, value, se))
    if len(x) < 2 or not np.all(np.diff(x) > 0):
        return None
    sign = np.sign(value)
    changes = int(((sign[:-1] * sign[1:]) <= 0).sum())
    if changes == 0:
        return None
    estimate = float(_first_crossing(x, value[None, :])[0])
    if replicates is None:
        redrawn = value + se * np.random.default_rng(seed).standard_normal((draws, len(x)))
        how = (f"{draws:,} redraws of every point, independently, from its estimate and "
               "standard error")
    else:
        redrawn = np.asarray(replicates, dtype=float)
        how = (f"{len(redrawn):,} bootstrap replicates resampling blocks of games, the same "
               "blocks at every point, which keeps the correlation of points played on the "
               "same seeds")
    found = _first_crossing(x, redrawn)
    # "lower"/"higher": no interpolation, which an infinite end would turn into nan.
    low = np.quantile(found, ALPHA / 2, method="lower")
    high = np.quantile(found, 1 - ALPHA / 2, method="higher")
    method = ("linear interpolation between the points around the sign change; 95% "
              f"percentile interval from {how}")
    return Crossing(estimate, float(low), float(high), changes, method)
