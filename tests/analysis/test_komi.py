"""The score bonus by turn position (analysis.experiments.komi): what a bonus would have
decided, worked out with each game's own rules for the winner (simcore.meta.Victory),
against hand-built games, against the same games replayed with the bonus as a house rule,
and the coverage of its bootstrap intervals on planted scores."""
from __future__ import annotations

import numpy as np
import pytest

from analysis import api
from analysis.experiments import komi
from simcore.errors import UserError
from simcore.registry import games, get_game


def test_a_tie_on_adjusted_points_goes_to_the_tie_break():
    """Position 0 scores 10, position 1 scores 8 with more almonds: a bonus of 2 ties the
    points and the almonds give position 1 the game (split, it would be 0.5)."""
    o = komi.Outcomes.of([[10, 8]], [[1, 0]], keys=[[0, 1]])
    assert komi.position_rates_with_bonus(o, [0, 2]).tolist() == [0, 1]
    assert komi.position_rates_with_bonus(o, [0, 1]).tolist() == [1, 0]
    # A tie on points and on every tie-break is a shared victory.
    same = komi.Outcomes.of([[10, 8]], [[1, 0]], keys=[[1, 1]])
    assert komi.position_rates_with_bonus(same, [0, 2]).tolist() == [0.5, 0.5]


def test_a_win_during_play_stands_whatever_the_bonus():
    """Game 0 was won by position 1 in play (white chocolate) while behind on points; game 1
    by points. Only game 1 moves with the bonus."""
    o = komi.Outcomes.of([[20, 5], [10, 8]], [[0, 1], [1, 0]], keys=np.zeros((2, 2)), in_play=[True, False])
    assert o.fixed.tolist() == [True, False]
    assert komi.position_shares(o, [30, 0]).tolist() == [[0, 1], [1, 0]]
    assert komi.position_shares(o, [0, 3]).tolist() == [[0, 1], [0, 1]]


def test_a_tie_break_the_results_do_not_record_is_read_from_the_recorded_ranks():
    """Tied on points and on the recorded tie-break, position 1 won: something unrecorded
    broke the tie. While the bonus keeps them tied, it still does; once the bonus parts
    them, the points decide."""
    o = komi.Outcomes.of([[10, 10]], [[0, 1]], keys=[[3, 3]], ranks=[[2, 1]])
    assert not o.fixed.any()
    assert komi.position_shares(o, [0, 0]).tolist() == [[0, 1]]
    assert komi.position_shares(o, [1, 0]).tolist() == [[1, 0]]
    # A result neither the rules nor the ranks explain is held as played.
    odd = komi.Outcomes.of([[10, 5]], [[0, 1]], keys=[[0, 0]], ranks=[[1, 2]])
    assert odd.fixed.tolist() == [True]


@pytest.mark.parametrize("game", sorted(games()))
def test_every_game_declares_how_its_winner_follows_from_the_scores(game):
    spec = get_game(game)
    state = spec.new_state(spec.params(players=max(spec.players[0], 2)))
    v = spec.victory
    assert set(v.in_play) <= set(state.END_REASONS)
    for key in v.tie_breaks:
        if isinstance(key, str):
            assert key in state.feature_names(), key
        else:
            params = spec.params(players=state.n_players).model_dump(mode="json")
            assert len(key(params)) == state.n_players
    # A game the bonus cannot decide says so both ways.
    assert spec.bonus_decides == (set(v.in_play) != set(state.END_REASONS))


@pytest.mark.parametrize("game, bot, players, n, bonus", [
    ("fabryka", "heuristic", 2, 20_000, [0, 2]),
    ("manfredini", "heuristic", 3, 300, [0, 1, 2]),
    ("alleycat", "heuristic", 2, 200, [0, 3]),
])
def test_the_prediction_is_the_game_replayed_with_the_bonus(tmp_path, game, bot, players, n, bonus):
    """The same seeds played again with the bonus as a house rule (the bots play the same
    games: the bonus comes on top at the end) give, game by game, the predicted result:
    Fabryka's white-chocolate wins stand, its ties on points go to more almonds;
    Manfredini's to coins, then the goods that do not score; Alley Cat's to the later
    seat of the final day."""
    spec = get_game(game)
    base = api.run(game, [bot] * players, games=n, out=tmp_path / "base", seating="fixed", jobs=1).path
    house = api.run(game, [bot] * players, games=n, out=tmp_path / "bonus", seating="fixed", jobs=1,
                    sets={"compensation.points": bonus}).path
    o = komi.position_table(base, players, spec)
    replayed = komi.position_table(house, players, spec)
    assert np.array_equal(o.scores + bonus, replayed.scores)  # the same games
    assert np.allclose(komi.position_shares(o, bonus), replayed.wins, rtol=0, atol=1e-6)
    if game == "fabryka":
        assert 0 < o.fixed.sum() < n  # white-chocolate wins, held as played


DICE = '''
from simcore.pygame import GameParams, PyGame, param


class DiceParams(GameParams):
    players: int = param(3, "rulebook", "Players", ge=2, le=3)


class Dice(PyGame):
    """Every seat rolls once: a die for points and one for gold. A 6 on the points die wins
    at once (the first seat to roll it); else the most points, then the most gold."""
    NAME, TITLE, PLAYERS, PARAMS = "dice_komi", "Dice", (2, 3), DiceParams
    END_REASONS = ("knockout", "points")
    FEATURES = ("gold",)
    TIE_BREAKS = ("gold",)
    WON_IN_PLAY = ("knockout",)

    def setup(self):
        self.rolls, self.gold, self.knockout = [], [], -1

    def current_player(self):
        return -1 if self.knockout >= 0 or len(self.rolls) == self.params.players else len(self.rolls)

    def legal_actions(self):
        return [0]

    def apply(self, action):
        self.rolls.append(1 + self.chance.below(6))
        self.gold.append(self.chance.below(3))
        if self.rolls[-1] == 6:
            self.knockout = len(self.rolls) - 1

    def scores(self):
        return [self.rolls[s] if s < len(self.rolls) else 0 for s in range(self.params.players)]

    def end_reason(self):
        return "knockout" if self.knockout >= 0 else "points"

    def rank(self, scores):
        n = len(scores)
        if self.knockout >= 0:
            return [1 if s == self.knockout else 2 for s in range(n)]
        key = [(scores[s], self.gold[s] if s < len(self.gold) else -1) for s in range(n)]
        return [1 + sum(k > key[s] for k in key) for s in range(n)]

    def features(self, seat):
        return [self.gold[seat] if seat < len(self.gold) else -1]

    def observation(self, seat):
        return {"rolls": list(self.rolls)}

    def describe(self, action):
        return "roll"
'''


def test_a_python_game_declares_its_tie_breaks_and_wins_in_play(tmp_path, fresh_registry):
    path = tmp_path / "dice_komi.py"
    path.write_text(DICE)
    spec = get_game(str(path))
    assert spec.victory.tie_breaks == ("gold",) and spec.victory.in_play == ("knockout",)
    bonus = [0, 1, 2]
    base = api.run(str(path), ["random"] * 3, games=600, out=tmp_path / "base", seating="fixed", jobs=1).path
    house = api.run(str(path), ["random"] * 3, games=600, out=tmp_path / "bonus", seating="fixed", jobs=1,
                    sets={"compensation.points": bonus}).path
    o = komi.position_table(base, 3, spec)
    assert 0 < o.fixed.sum() < 600  # the knockouts, and nothing else
    assert np.allclose(komi.position_shares(o, bonus), komi.position_table(house, 3, spec).wins, rtol=0, atol=1e-6)


def test_a_python_game_naming_an_unknown_tie_break_is_one_line(tmp_path, fresh_registry):
    path = tmp_path / "dice_bad.py"
    path.write_text(DICE.replace('TIE_BREAKS = ("gold",)', 'TIE_BREAKS = ("silver",)')
                    .replace('"dice_komi"', '"dice_bad"'))
    with pytest.raises(UserError, match=r"TIE_BREAKS names 'silver', not one of FEATURES \('gold',\)") as e:
        get_game(str(path))
    assert "\n" not in str(e.value)


# ---- the estimate and its intervals ----

def test_komi_of_a_hand_made_score_distribution():
    """Position 0 leads by 1 or by 3 points, equally often: a bonus of 2 to position 1
    splits the games (the lead of 3 still wins, the lead of 1 loses), so 2 is fair; 1
    would give ties in half the games (position 0 wins 75%), 3 ties the other half."""
    lead = np.array([1, 3] * 500)
    scores = np.stack([10 + lead, np.full(1000, 10)], axis=1)
    o = komi.Outcomes.of(scores, (scores == scores.max(axis=1, keepdims=True)).astype(float))
    k = komi.estimate_komi(o)
    assert k.estimate[1][0] == pytest.approx(2.0)
    assert k.estimate[1][1] < 2 < k.estimate[1][2] < 2.2
    assert k.points == [0, 2] and k.predicted == pytest.approx([0.5, 0.5])
    assert komi.position_rates_with_bonus(o, [0, 1]) == pytest.approx([0.75, 0.25])


def test_a_bonus_from_games_without_variation_has_no_zero_width_interval():
    """The 1st player wins every game by exactly 5: every resample gives a fair bonus of 5."""
    scores = np.tile([10, 5], (200, 1))
    k = komi.estimate_komi(komi.Outcomes.of(scores, [[1, 0]] * 200))
    assert k.estimate[1] == (5.0, 4.0, 6.0)


def planted(rng: np.random.Generator, games: int, players: int) -> komi.Outcomes:
    """Whole-point scores, normal with sd 3 around means 2, 1, 0 (, 0.5) by position;
    the best score wins, ties shared."""
    s = rng.normal(0, 3, size=(games, players)).round() + np.array([2, 1, 0, 0.5][:players])
    w = s == s.max(axis=1, keepdims=True)
    return komi.Outcomes.of(s, w / w.sum(axis=1, keepdims=True))


def test_komi_at_three_players():
    k = komi.estimate_komi(planted(np.random.default_rng(0), 30_000, 3))
    assert k.points == [0, 1, 2]
    assert [round(e[0]) for e in k.estimate] == [0, 1, 2]
    assert max(abs(x - 1 / 3) for x in k.predicted) < 0.01
    assert all(lo <= x <= hi for x, lo, hi in k.estimate)


@pytest.mark.statistical
@pytest.mark.parametrize("players", [3, 4])
def test_the_bonus_intervals_cover_at_three_and_four_players(players):
    """300 samples of 3,000 games: each position's 95% interval holds the estimate of 2
    million games (the value the estimate settles on) in at least 93.5% of them."""
    truth = komi._Curves(planted(np.random.default_rng(12345), 2_000_000, players), 1000).estimate(np.ones(1000))[0]
    rng = np.random.default_rng(7)
    hits = np.zeros(players)
    for _ in range(300):
        k = komi.estimate_komi(planted(rng, 3000, players), draws=400)
        hits += [lo <= t <= hi for t, (_, lo, hi) in zip(truth, k.estimate)]
    assert (hits[1:] >= 0.935 * 300).all(), hits


def test_the_estimate_is_deterministic_and_the_seed_moves_only_the_intervals():
    o = planted(np.random.default_rng(3), 2000, 3)
    a, b, c = komi.estimate_komi(o), komi.estimate_komi(o), komi.estimate_komi(o, seed=1)
    assert a == b
    assert [e[0] for e in a.estimate] == [e[0] for e in c.estimate] and a.points == c.points
