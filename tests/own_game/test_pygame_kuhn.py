"""Kuhn poker from examples/: a Python game with hidden hands and chance. Random play
against its exact answer, the search bot playing it through `determinize` without
reading the hidden hand, and the conformance suite."""
from __future__ import annotations

import functools
import itertools
import sys
from fractions import Fraction

import polars as pl
import pytest

import strategies
from analysis.api import results
from helpers import ROOT
from simcore import registry
from simcore.conformance import check_game
from simcore.runner import run
from simcore.strategy import RngView

EXAMPLE = ROOT / "examples" / "kuhn"
sys.path.insert(0, str(EXAMPLE))

from kuhn_game.game import KuhnPoker  # noqa: E402

REF = "kuhn_game.game:KuhnPoker"


def _exact_random_play() -> tuple[Fraction, Fraction]:
    """Seat 0's expected score and win chance with both seats uniformly random: every
    deal (6, equally likely) and every action sequence, through the game's methods."""
    mean = win = Fraction(0)
    for hands in itertools.permutations(range(3), 2):
        def walk(game, p):
            nonlocal mean, win
            if game.current_player() < 0:
                s = game.scores()[0]
                mean += p * s
                win += p * (s > 0)
                return
            for a in game.legal_actions():
                nxt = game.copy()
                nxt.apply(a)
                walk(nxt, p / len(game.legal_actions()))
        game = KuhnPoker(KuhnPoker.PARAMS(), 0)
        game.hands = list(hands)
        walk(game, Fraction(1, 6))
    return mean, win


def test_random_play_matches_the_exact_answer(tmp_path):
    from analysis.stats import wilson
    mean, win = _exact_random_play()
    # By hand: pass-pass 1/4 (showdown, 1 chip), bet-pass 1/4 (seat 0 wins 1), bet-call
    # 1/4 (showdown, 2), pass-bet-fold 1/8 (seat 0 loses 1), pass-bet-call 1/8 (showdown,
    # 2); a showdown is even. Mean 1/4 - 1/8 = 1/8; wins 5/8 x 1/2 + 1/4 = 9/16.
    assert (mean, win) == (Fraction(1, 8), Fraction(9, 16))
    spec = registry.get_game(REF)
    seats = ["random", "random"]
    run(spec, spec.params(players=2), seats, functools.partial(strategies.build_lineup, spec.name, seats),
        tmp_path / "r", n_games=4000, seating="fixed", jobs=1, quiet=True)
    seat0 = results(tmp_path / "r").filter(pl.col("seat") == 0)
    low, high = wilson(seat0["win"].sum(), seat0.height)
    assert low <= float(win) <= high
    m, se = seat0["score"].mean(), seat0["score"].std() / seat0.height ** 0.5
    assert abs(m - float(mean)) < 1.96 * se


def test_the_search_bot_does_not_read_the_hidden_hand():
    """Seat 1 holds the queen and faces a bet. Knowing the other hand it would call the
    jack and fold to the king (a bot that skips determinize does: checked by hand);
    playing on determinized copies, with the same stream it chooses the same either way."""
    spec = registry.get_game(REF)
    params = spec.params(players=2)
    choices = []
    for other in (0, 2):
        state = spec.new_state(params)
        state.new_game(5)
        state.game.hands = [other, 1]
        state.apply(1)
        bot = strategies.build(spec.name, "mcts(iterations=300)")
        bot.bind(state)
        choices.append([bot.choose_action(state, RngView.seeded(seed)) for seed in range(8)])
    assert choices[0] == choices[1]


def test_the_search_bot_beats_random(tmp_path):
    from analysis.stats import wilson
    spec = registry.get_game(REF)
    seats = ["mcts", "random"]
    run(spec, spec.params(players=2), seats, functools.partial(strategies.build_lineup, spec.name, seats),
        tmp_path / "m", n_games=200, jobs=1, quiet=True)
    rows = results(tmp_path / "m").filter(pl.col("strategy") == "mcts")
    assert wilson(rows["win"].sum(), rows.height)[0] > 0.55


def test_kuhn_conforms_and_a_peeking_determinize_is_caught():
    check_game(KuhnPoker, games=30)

    class Leaky(KuhnPoker):
        def determinize(self, seat, rng):
            self.hands[seat] = rng.below(3)  # resamples the seat's own card: it saw it

    with pytest.raises(AssertionError, match=r"determinize\(0\) changed what seat 0 sees"):
        check_game(Leaky, games=30)
