"""The report statistics against answers worked out by hand (formulas in the comments)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest

from analysis import stats
from analysis.metrics import component_table, feature_threshold, standings_columns
from analysis.ratings import bradley_terry, matchups

Z = 1.959963984540054  # the 97.5% normal quantile


def wilson_by_hand(x: float, n: int) -> tuple[float, float]:
    """(x + z²/2) / (n + z²)  ±  z / (n + z²) * sqrt(x (n - x) / n + z²/4)"""
    centre = (x + Z * Z / 2) / (n + Z * Z)
    half = Z / (n + Z * Z) * math.sqrt(x * (n - x) / n + Z * Z / 4)
    return centre - half, centre + half


def test_wilson_known_values() -> None:
    # 5 of 10: centre 0.5, half-width 1.96/13.8415 * sqrt(2.5 + 0.9604) = 0.2634.
    assert stats.wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    # 0 of 10: the lower end is exactly 0, the upper z²/(n + z²) = 3.8415/13.8415.
    assert stats.wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert stats.wilson(81, 263) == pytest.approx(wilson_by_hand(81, 263), abs=1e-12)


def test_wilson_with_shared_victories_uses_the_fractional_win_count() -> None:
    # Five games: two won, one shared by two players (1/2 each), two lost: 2.5 wins of 5.
    # centre 0.5, half = 1.96/8.8415 * sqrt(1.25 + 0.9604) = 0.3296.
    r = stats.rate(2 + 0.5, 5)
    assert r.value == 0.5
    assert (r.low, r.high) == pytest.approx((0.1704, 0.8296), abs=1e-4)


def test_rate_against_fair_share_is_the_score_test() -> None:
    # 60 of 100 against 1/2: z = (0.6 - 0.5) / sqrt(0.25 / 100) = 2, two-sided p = 0.0455.
    r = stats.rate_vs(60, 100, 0.5)
    assert r.p_value == pytest.approx(0.04550, abs=1e-5)
    assert r.low > 0.5  # the interval and the test agree


def test_newcombe_difference_matches_the_published_example() -> None:
    # Newcombe (1998), Stat. Med. 17:873, example (a): 56/70 - 48/80 = 0.2000,
    # method 10 interval 0.0524 to 0.3339.
    d = stats.difference(56, 70, 48, 80)
    assert d.value == pytest.approx(0.2)
    assert (d.low, d.high) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    assert d.p_value < 0.05


def test_difference_from_a_zero_rate_is_quiet_and_right() -> None:
    # 10/100 against 0/100: Miettinen-Nurminen score z = 0.1 / sqrt(0.05 * 0.95 * 2/100
    # * 200/199) = 3.236, p = 0.00121. The ratio a zero rate makes impossible must not
    # reach the user as a warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = stats.difference(10, 100, 0, 100)
    assert d.p_value == pytest.approx(0.001211, abs=2e-6)


def test_equal_seats_chi_square() -> None:
    # 60 and 40 wins of 100 games: expected 50 each, chi² = 100/50 + 100/50 = 4 (df 1),
    # p = P(chi²_1 > 4) = P(|Z| > 2) = 0.0455.
    chi2, p = stats.equal_shares_test(np.array([60.0, 40.0]))
    assert chi2 == pytest.approx(4.0)
    assert p == pytest.approx(0.04550, abs=1e-5)
    # Three seats of 30 wins each: nothing to explain.
    assert stats.equal_shares_test(np.array([30.0, 30.0, 30.0])) == pytest.approx((0.0, 1.0))


def test_benjamini_hochberg() -> None:
    # Sorted p: 0.01, 0.03, 0.04, 0.2 (m = 4) -> p * m / rank: 0.04, 0.06, 0.0533, 0.2,
    # then the running minimum from the top: 0.04, 0.0533, 0.0533, 0.2.
    q = stats.benjamini_hochberg(np.array([0.01, 0.04, 0.03, 0.2]))
    assert q == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.2])


def test_mean_interval() -> None:
    # 1, 2, 3: mean 2, sd 1, t(0.975, 2) = 4.3027, half-width 4.3027 / sqrt(3) = 2.4841.
    mean, low, high = stats.mean_interval(3, 6.0, 14.0)
    assert mean == 2.0
    assert (low, high) == pytest.approx((2 - 2.4841, 2 + 2.4841), abs=1e-4)


def test_matchups_aggregate_both_directions() -> None:
    # a beat b 7 times of 10, b beat c 3 of 4; a met itself (ignored).
    m = matchups(["a", "b", "c"], np.array([0, 1, 0]), np.array([1, 2, 0]),
                       np.array([7.0, 3.0, 5.0]), np.array([10.0, 4.0, 9.0]))
    assert m.wins.tolist() == [[0, 7, 0], [3, 0, 3], [0, 1, 0]]
    assert m.games.tolist() == [[0, 10, 0], [10, 0, 4], [0, 4, 0]]
    assert m.rate(0, 1).value == 0.7


def test_bradley_terry_two_strategies() -> None:
    # 75 wins of 100: the MLE of b_a - b_b is logit(0.75) = ln 3 with standard error
    # 1 / sqrt(n p (1 - p)) = 1 / sqrt(18.75); centred, each is ±ln(3)/2, SE halved.
    m = matchups(["a", "b"], np.array([0]), np.array([1]), np.array([75.0]), np.array([100.0]))
    r = bradley_terry(m)
    assert r is not None
    per_logit = stats.ELO_PER_LOGIT
    assert r.elo / per_logit == pytest.approx([math.log(3) / 2, -math.log(3) / 2])
    assert r.se / per_logit == pytest.approx([0.5 / math.sqrt(18.75)] * 2)
    assert r.low[0] < r.elo[0] < r.high[0]


def test_bradley_terry_recovers_exact_strengths() -> None:
    # Strengths 4 : 2 : 1 give P(a>b) = 4/6, P(b>c) = 2/3, P(a>c) = 4/5; a table with
    # exactly these shares is fitted exactly: log-strengths ln 4, ln 2, 0, centred ln 2, 0, -ln 2.
    m = matchups(["a", "b", "c"], np.array([0, 1, 0]), np.array([1, 2, 2]),
                       np.array([200.0, 200.0, 240.0]), np.array([300.0, 300.0, 300.0]))
    r = bradley_terry(m)
    assert r is not None
    assert r.elo / stats.ELO_PER_LOGIT == pytest.approx([math.log(2), 0, -math.log(2)], abs=1e-9)


def test_bradley_terry_smooths_a_strategy_that_won_every_meeting() -> None:
    # a won all 10 meetings with b: no finite maximum-likelihood rating. Half a win each
    # way makes it 10.5 of 11, a log-odds of ln 21, centred ±ln(21)/2.
    m = matchups(["a", "b"], np.array([0]), np.array([1]), np.array([10.0]), np.array([10.0]))
    r = bradley_terry(m)
    assert r is not None and r.smoothed
    assert r.elo / stats.ELO_PER_LOGIT == pytest.approx([math.log(21) / 2, -math.log(21) / 2])
    assert r.se / stats.ELO_PER_LOGIT == pytest.approx([0.5 / math.sqrt(11 * 21 / 22 * 1 / 22)] * 2)
    # c beat a at times, a beat b and b beat c: every rating exists as it is.
    cycle = matchups(["a", "b", "c"], np.array([0, 1, 0]), np.array([1, 2, 2]),
                           np.array([100.0, 100.0, 1.0]), np.array([100.0, 100.0, 100.0]))
    assert not bradley_terry(cycle).smoothed


def test_bradley_terry_needs_connected_strategies() -> None:
    # a-b and c-d never met across: no common scale.
    m = matchups(["a", "b", "c", "d"], np.array([0, 2]), np.array([1, 3]),
                       np.array([5.0, 5.0]), np.array([10.0, 10.0]))
    assert bradley_terry(m) is None
    assert bradley_terry(matchups(["a"], np.array([0]), np.array([0]),
                                              np.array([1.0]), np.array([2.0]))) is None


def test_feature_threshold() -> None:
    # Present for 95% of seats: compare present (>= 1) with absent.
    assert feature_threshold(np.array([0, 1, 2]), np.array([5, 90, 5])) == 1
    # Always present (a turn number 1..6, uniform): split at the median, >= 4 holds for 3/6.
    assert feature_threshold(np.arange(1, 7), np.ones(6, dtype=int)) == 4
    # Never varies.
    assert feature_threshold(np.array([3]), np.array([10])) is None


def _hist(rows: list[tuple[str, int, int, float]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"feature": pl.String, "value": pl.Int64, "n": pl.Int64,
                                      "wins": pl.Float64}, orient="row")


def test_components_find_a_planted_effect_and_not_a_null_one() -> None:
    # planted: 500 seats have it and win 350 (70%); 500 do not and win 150 (30%).
    # null: 400 seats have it and win 200 (50%); 600 do not and win 300 (50%).
    hist = _hist([("planted", 1, 500, 350.0), ("planted", 0, 500, 150.0),
                  ("null", 1, 400, 200.0), ("null", 0, 600, 300.0)])
    table = component_table(hist, ["planted", "null"])
    planted = table.row(by_predicate=pl.col("feature") == "planted", named=True)
    null = table.row(by_predicate=pl.col("feature") == "null", named=True)
    assert planted["share"] == 0.5 and planted["threshold"] == 1
    assert planted["diff"] == pytest.approx(0.4)
    # One stratum (no strategy column): the Wald interval of the difference.
    half = 1.959964 * np.sqrt(0.7 * 0.3 / 500 + 0.3 * 0.7 / 500)
    assert (planted["diff_low"], planted["diff_high"]) == pytest.approx((0.4 - half, 0.4 + half), rel=1e-5)
    assert planted["significant"] and planted["q_value"] < 1e-10
    assert null["diff"] == 0.0 and not null["significant"]
    assert null["q_value"] == pytest.approx(1.0)
    assert table["feature"].to_list() == ["planted", "null"]  # largest effect first


def test_standings_columns_pick_the_first_series() -> None:
    assert standings_columns(["interim_round_1", "interim_round_2"]) == ["interim_round_1", "interim_round_2"]
    assert standings_columns(["interim_points_r1", "interim_points_r2", "interim_recipe_progress_r1",
                              "interim_recipe_progress_r2"]) == ["interim_points_r1", "interim_points_r2"]
    assert standings_columns(["interim_transition", "interim_end"]) == ["interim_transition", "interim_end"]
    assert standings_columns([]) == []
