"""A bot written in plain Python (simcore.strategy.PythonStrategy) plays inside the batch
loop like a compiled one: legal moves, reproducible, and shown only its own seat's view.
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import strategies
from helpers import run_batch
from simcore.play import play_game
from simcore.registry import get_game
from simcore.strategy import DecideError, PythonStrategy, RngView
from strategies.random import RandomStrategy

SPEC = get_game("fabryka")


class Collector(PythonStrategy):
    """Collects once the belt holds `threshold` cards, else plays a random card. Checks
    that what it is shown fits the rules and is its own seat's view only."""

    NAME = "test_collector"
    GAMES = ("fabryka",)
    WEIGHTS = {"threshold": 3.0}

    def decide(self, observation, legal, rng):
        seat = observation["seat"]
        hand, belt = observation["hand"], observation["belt"]
        collect = observation["collect_action"]
        assert "hands" not in observation, "a bot must not see the other hand"
        assert len(hand) == observation["hand_sizes"][seat]
        # The rulebook's choices: play any card in hand; collect once a round, from a
        # non-empty belt (or forced, with an empty hand).
        may_collect = not observation["has_collected"][seat] and (belt or not hand)
        assert legal == list(range(len(hand))) + ([collect] if may_collect else [])
        if collect in legal and len(belt) >= self.weights["threshold"]:
            return collect
        return rng.choice(legal)


class Spy(PythonStrategy):
    def decide(self, observation, legal, rng):
        self.seen = observation
        return legal[0]


class Cheater(PythonStrategy):
    def decide(self, observation, legal, rng):
        return 99


class Forgetful(PythonStrategy):
    def decide(self, observation, legal, rng):
        pass  # forgot to return an action


class NeedsPrepare(Collector):
    """A bot that sets itself up in prepare(), as search bots do."""

    def prepare(self, proto):
        self.ready = True

    def decide(self, observation, legal, rng):
        assert getattr(self, "ready", False), "prepare() was not called"
        return super().decide(observation, legal, rng)


def versus_random(bot, n_games=100, run_seed=3):
    """bot against RandomStrategy, swapping seats every game."""
    return run_batch(SPEC.new_state(), [bot, RandomStrategy()], n_games, run_seed=run_seed,
                     perms=[[0, 1], [1, 0]], seating=0)


def test_plays_legal_moves_reproducibly_in_the_batch_loop():
    first = versus_random(Collector())
    assert (first["turns"][first["end_reason"] == 0] == 48).all()
    assert np.allclose(first["win"].reshape(-1, 2).sum(axis=1), 1.0)
    again = versus_random(Collector())
    for key, value in first.items():
        assert np.array_equal(value, again[key]), key
    other = versus_random(Collector(), run_seed=4)
    assert not np.array_equal(first["score"], other["score"])


def decide_once(bot):
    """bot's decision for seat 0 of a laid-out position where seat 1 alone holds pink,
    yellow and dice cards."""
    state = SPEC.new_state()
    state.set_position(hands=[["almonds"] * 5, ["pink", "yellow", "yellow", "dice", "dice"]],
                       belt=["strawberries"], collected=[{}, {}], round=1, to_move=0)
    return bot.choose_action(state, RngView.seeded(1))


def test_an_illegal_choice_is_a_clear_error():
    with pytest.raises(ValueError, match=r"Cheater\.decide returned 99, not one of"):
        decide_once(Cheater())


def test_a_missing_return_is_a_clear_error():
    with pytest.raises(ValueError, match=r"Forgetful\.decide returned None, not one of"):
        decide_once(Forgetful())


class Returns(PythonStrategy):
    """Returns the first legal action converted by `how`."""

    def __init__(self, how):
        super().__init__()
        self.how = how

    def decide(self, observation, legal, rng):
        return self.how(legal[0])


@pytest.mark.parametrize("how, shown", [(float, r"\d+\.0"), (lambda a: np.array([a]), r"array\(\[\d+\]\)"),
                                        (str, r"'\d+'")])
def test_a_legal_action_in_another_type_is_refused(how, shown):
    with pytest.raises(DecideError, match=rf"^Returns\.decide returned {shown}, not one of the legal actions"):
        decide_once(Returns(how))


def test_a_numpy_integer_is_an_action():
    assert decide_once(Returns(np.int64)) == decide_once(Returns(int))


class Divides(PythonStrategy):
    def decide(self, observation, legal, rng):
        return legal[0] // 0


def test_a_raise_in_decide_names_the_bot_and_seat_and_keeps_the_cause():
    bot = Divides()
    with pytest.raises(DecideError, match=r"^Divides\.decide raised ZeroDivisionError: integer division") as e:
        decide_once(bot)
    assert (e.value.seat, e.value.bot) == (0, bot)
    assert isinstance(e.value.__cause__, ZeroDivisionError) and "legal[0] // 0" in e.value.details
    # A process worker sends it back pickled: the text survives, the bot stays behind.
    copy = pickle.loads(pickle.dumps(e.value))
    assert (str(copy), copy.seat, copy.details, copy.bot) == (str(e.value), 0, e.value.details, None)


def test_sees_its_own_hand_only():
    spy = Spy()
    decide_once(spy)
    seen = spy.seen
    assert seen["seat"] == 0 and seen["hand"] == ["almonds"] * 5
    assert seen["hand_sizes"] == [5, 5] and isinstance(seen["pile"], int)  # counts only
    shown = [card for key in ("hand", "belt") for card in seen[key]]
    assert not {"pink", "yellow", "dice"} & set(shown)  # seat 1's cards
    assert "hands" not in seen


def test_is_built_from_a_module_spec():
    bot = strategies.build("fabryka", f"{__name__}:Collector(threshold=5)")
    assert isinstance(bot, Collector) and bot.weights == {"threshold": 5.0}
    assert "test_collector" not in strategies.available("fabryka")  # not registered


def test_play_game_prepares_bots_like_the_batch_loop():
    trace = play_game(SPEC, SPEC.params(), [NeedsPrepare(), RandomStrategy()], seed=1)
    out = run_batch(SPEC.new_state(), [NeedsPrepare(), RandomStrategy()], 1, run_seed=1)
    assert trace.scores == out["score"].tolist()
