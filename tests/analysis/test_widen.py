"""Which way to widen a knob's range when no value tried reaches fair: planted advantages
with a known direction, a crossing (nothing to widen) and no trend."""
from __future__ import annotations

import pytest

from analysis.experiments.widen import widen


def test_a_falling_advantage_is_widened_upwards_with_the_lines_crossing():
    # Pig's start bonus: the 1st player ahead at every value 0-5, less so as it grows.
    text = widen("start_bonus", [0, 1, 2, 3, 4, 5], [0.036 - 0.006 * k for k in range(6)])
    assert "falls as start_bonus grows" in text and "try values above 5" in text
    assert "reaches fair near 6.00" in text  # the planted line's zero


@pytest.mark.parametrize("advantage, side", [
    ([0.05, 0.06, 0.07], "try values below 0"),       # ahead, and more so as x grows
    ([-0.05, -0.03, -0.01], "try values above 2"),    # behind, less so as x grows
    ([-0.01, -0.03, -0.05], "try values below 0"),    # behind, more so as x grows
])
def test_the_direction_is_towards_fair(advantage, side):
    assert side in widen("x", [0, 1, 2], advantage)


def test_nothing_to_widen_when_the_advantage_changes_sign_or_values_are_not_numbers():
    assert widen("x", [0, 1, 2], [0.05, 0.01, -0.02]) is None
    assert widen("x", [0, 1], [0.05, 0.0]) is None  # fair reached at a value tried
    assert widen("x", ["low", "high"], [0.05, 0.04]) is None
    assert widen("x", [3], [0.05]) is None


def test_no_trend_says_so_and_a_far_crossing_is_not_guessed():
    assert widen("x", [0, 1, 2], [0.05, 0.05, 0.05]).endswith("with no trend to follow.")
    text = widen("x", [0, 1, 2], [0.05, 0.05, 0.0501])
    assert "try values below 0." in text and "near" not in text


def _knob(rates: dict[int, float], fair=None):
    from analysis.experiments.balance import Knob, KnobPoint
    from analysis.stats import Rate
    points = [KnobPoint(v, 4000, [Rate(4000 * r, 4000, r - 0.015, r + 0.015), Rate(4000 * (1 - r), 4000, 0, 1)])
              for v, r in rates.items()]
    return Knob("start_bonus", 0, points, fair, None, 4000)


def test_the_balance_report_says_which_way_to_widen_a_knob_that_never_reaches_fair():
    from types import SimpleNamespace

    from analysis.render.balance import knob_text
    text = knob_text(SimpleNamespace(players=2), _knob({v: 0.536 - 0.006 * v for v in range(6)}))
    assert "no value tried makes the 1st player's win rate cross the fair 50.0%" in text
    assert text.endswith("try values above 5 (a straight line through them reaches fair near 6.00).")
