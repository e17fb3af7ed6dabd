"""Fabryka Czekolady against its rulebook (Shimamura and Dogen, Nasza Księgarnia 2018).

Every expected number here is worked out by hand from the printed rules: majorities
biscuits 5, blueberries 6, strawberries 7, almonds 8 (strictly most; a tie pays nobody);
5 per set of the four fillings; green 2, yellow 3, pink 4, pawns -1, meeples -2, dice -3,
white 0; 3 white chocolates win at once; ties on points go to more almonds, then a
shared victory. Positions are laid out with FabrykaState.set_position.
"""
from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from helpers import random_playout, run_batch
from simcore.batch import result_arrays
from simcore.games.fabryka.params import FILLINGS, KINDS
from simcore.registry import get_game
from simcore.state import IllegalAction
from strategies.random import RandomStrategy

SPEC = get_game("fabryka")
COLLECT = 16  # the collect action; 0..hand_len-1 play that hand slot

# The rulebook's scoring, written out independently of the engine.
MAJORITY = {"biscuits": 5, "blueberries": 6, "strawberries": 7, "almonds": 8}
SET_POINTS = 5
PER_CARD = {"green": 2, "yellow": 3, "pink": 4, "pawns": -1, "meeples": -2, "dice": -3, "white": 0}
DECK = {"biscuits": 5, "blueberries": 6, "strawberries": 7, "almonds": 8, "green": 4, "yellow": 2,
        "pink": 1, "pawns": 3, "meeples": 4, "dice": 2, "white": 3}


def rulebook_score(mine, theirs):
    """Points of collection `mine` against `theirs` (kind name -> count, or -> numpy
    array of counts to score many collections at once), by the book."""
    majorities = sum(p * (mine.get(k, 0) > theirs.get(k, 0)) for k, p in MAJORITY.items())
    sets = np.min([mine.get(k, 0) for k in MAJORITY], axis=0)
    return majorities + SET_POINTS * sets + sum(p * mine.get(k, 0) for k, p in PER_CARD.items())


def laid_out(params=None, **position):
    state = SPEC.new_state(params)
    state.set_position(**position)
    return state


def before_last_turn(collected, belt=(), hands=((), ()), has_collected=(False, False)):
    """Round 1 with both players' sixth turn to come (seat 0, the token holder, first):
    each hand holds one card if its owner has collected, else none."""
    return laid_out(hands=[list(h) for h in hands], belt=list(belt), collected=list(collected),
                    round=1, to_move=0, turns_taken=(5, 5), has_collected=has_collected)


def finished(a, b):
    """A game over after four rounds with collections a (seat 0) and b (seat 1)."""
    return laid_out(hands=[[], []], belt=[], collected=[a, b], round=4, to_move=-1,
                    turns_taken=(6, 6), has_collected=(True, True))


def collected_counts(state, seat):
    """Cards of each kind `seat` has collected, from its feature counters."""
    values = dict(zip(state.feature_names(), state.features(seat)))
    return {k: values[f"cards_{k}"] for k in KINDS}


def test_defaults_are_the_rulebook():
    p = SPEC.params()
    assert p.deck.model_dump() == DECK and sum(DECK.values()) == 45
    assert p.majority.model_dump() == MAJORITY
    assert p.card_points.model_dump() == PER_CARD
    assert (p.players, p.removed_unseen, p.hand_size, p.opening_belt, p.rounds) == (2, 3, 5, 2, 4)
    assert (p.collect_count, p.white_to_win, p.set_points) == (5, 3, SET_POINTS)


def test_rulebook_end_example_is_played_out():
    """The rulebook's closing example: A 22, B 25, B wins. Collections reconstructed from
    its text (B has most biscuits and blueberries, strawberries tie, A most almonds; A 2
    sets, B 3; A 3 green, 1 pink, 3 meeples; B 1 green, 1 yellow, 3 pawns, 1 dice; one
    white each). They use 39 of the 45 cards; the other 6 are the 3 set aside and 3 left
    on the belt. Round 4: B (seat 1) holds the token and collects first, then A."""
    final_a = Counter(biscuits=2, blueberries=2, strawberries=3, almonds=4, green=3, pink=1,
                      meeples=3, white=1)
    final_b = Counter(biscuits=3, blueberries=4, strawberries=3, almonds=3, green=1, yellow=1,
                      pawns=3, dice=1, white=1)
    left_on_belt = ["yellow", "dice", "white"]
    a_takes = ["almonds", "green", "pink", "meeples", "almonds"]
    b_takes = ["biscuits", "blueberries", "pawns", "blueberries", "dice"]
    assert sum((final_a + final_b).values()) == 39
    state = laid_out(hands=[[], []], belt=left_on_belt + a_takes + b_takes,
                     collected=[dict(final_a - Counter(a_takes)), dict(final_b - Counter(b_takes))],
                     round=4, to_move=1, turns_taken=(5, 5))

    for seat in (1, 0):  # empty hands, not collected: the sixth turn is a forced collect
        assert state.current_player() == seat and state.legal_actions() == [COLLECT]
        state.apply(COLLECT)
        state.check_invariants()

    assert state.is_terminal() and state.end_reason() == "scoring"
    assert collected_counts(state, 0) == {k: final_a[k] for k in KINDS}
    assert collected_counts(state, 1) == {k: final_b[k] for k in KINDS}
    assert rulebook_score(final_a, final_b) == 22 and rulebook_score(final_b, final_a) == 25
    assert (state.scores(), state.ranks()) == ([22, 25], [2, 1])
    assert [state.interim(p)[-1] for p in (0, 1)] == [22, 25]
    names = state.feature_names()
    a, b = (dict(zip(names, state.features(p))) for p in (0, 1))
    assert [a[f"majority_{f}"] for f in FILLINGS] == [0, 0, 0, 1]
    assert [b[f"majority_{f}"] for f in FILLINGS] == [1, 1, 0, 0]
    assert (a["sets"], b["sets"]) == (2, 3)
    assert (a["collect_turn_r4"], b["collect_turn_r4"]) == (6, 6)


def test_collect_takes_the_five_most_recent_cards():
    """The rulebook's collect example: the 5 most recent cards are almonds, biscuits,
    green, biscuits, meeples; the two older ones stay on the belt. Laid out as reached in
    play: round 2, seat 1 (the token holder) has played 3 cards and seat 0 2 cards onto
    the 2 opening cards."""
    state = laid_out(hands=[["strawberries"] * 3, ["blueberries"] * 2],
                     belt=["pawns", "dice", "almonds", "biscuits", "green", "biscuits", "meeples"],
                     collected=[{}, {}], round=2, to_move=0, turns_taken=(2, 3))
    state.check_invariants()
    state.apply(COLLECT)
    assert collected_counts(state, 0) == dict.fromkeys(KINDS, 0) | {
        "almonds": 1, "biscuits": 2, "green": 1, "meeples": 1}
    state.apply(COLLECT)  # seat 1 gets what is left: the two oldest cards
    assert collected_counts(state, 1) == dict.fromkeys(KINDS, 0) | {"pawns": 1, "dice": 1}
    assert state.standings() == [8 + 5 + 2 - 2, -1 - 3]


def test_collect_from_a_short_belt_takes_all_most_recent_first():
    # Round 2: seat 1 (the token holder) has played one card onto the 2 opening cards.
    state = laid_out(hands=[["strawberries"] * 5, ["blueberries"] * 4],
                     belt=["biscuits", "green", "dice"], collected=[{}, {}], round=2, to_move=0,
                     turns_taken=(0, 1))
    state.check_invariants()
    text = state.describe(COLLECT)
    assert "3" in text and text.index("dice") < text.index("green") < text.index("biscuits")
    state.apply(COLLECT)
    assert collected_counts(state, 0) == dict.fromkeys(KINDS, 0) | {
        "biscuits": 1, "green": 1, "dice": 1}
    assert state.standings() == [5 + 2 - 3, 0]
    # The belt is now empty: seat 1, holding cards, may only play.
    assert state.current_player() == 1 and state.legal_actions() == [0, 1, 2, 3]


def test_no_collect_from_an_empty_belt_while_holding_cards():
    state = laid_out(hands=[["strawberries"] * 5, ["blueberries"] * 5], belt=[],
                     collected=[{}, {}], round=1, to_move=0)
    assert state.legal_actions() == [0, 1, 2, 3, 4]
    with pytest.raises(IllegalAction):
        state.apply(COLLECT)


def test_sixth_turn_without_a_collect_is_a_forced_collect():
    state = before_last_turn([{}, {}], belt=["almonds"])
    assert state.current_player() == 0 and state.legal_actions() == [COLLECT]
    with pytest.raises(IllegalAction):
        state.apply(0)


def test_sixth_turn_after_a_collect_is_a_forced_play():
    state = before_last_turn([{}, {}], belt=["almonds"], hands=(["pink"], []),
                             has_collected=(True, False))
    assert state.legal_actions() == [0]  # a card on the belt, but the round's collect is spent
    with pytest.raises(IllegalAction):
        state.apply(COLLECT)
    state.apply(0)
    assert state.current_player() == 1 and state.legal_actions() == [COLLECT]


@pytest.mark.parametrize("round_", [2, 4])
def test_third_white_chocolate_ends_the_game_at_once(round_):
    # Seat 1 holds the token in rounds 2 and 4 and collects on its first turn, reaching
    # 3 whites; it wins although its points are far below seat 0's.
    state = laid_out(hands=[["strawberries"] * 5, ["blueberries"] * 5],
                     belt=["biscuits", "white"],
                     collected=[{"almonds": 5, "pink": 1}, {"white": 2, "dice": 2}],
                     round=round_, to_move=1)
    state.apply(COLLECT)
    assert state.is_terminal() and state.current_player() == -1 and state.legal_actions() == []
    assert state.end_reason() == "white_chocolate"
    scores = [8 + 4, 5 - 6]  # seat 1 took the biscuit: most biscuits, 2 dice
    assert (state.scores(), state.ranks()) == (scores, [2, 1])
    for seat in (0, 1):  # rounds never reached repeat the final standing
        assert state.interim(seat)[round_ - 1:] == [scores[seat]] * (5 - round_)
    with pytest.raises(IllegalAction):
        state.apply(0)


def test_two_white_chocolates_do_not_end_the_game():
    state = laid_out(hands=[["strawberries"] * 5, ["blueberries"] * 5], belt=["white"],
                     collected=[{}, {"white": 1}], round=2, to_move=1)
    state.apply(COLLECT)
    assert not state.is_terminal() and state.current_player() == 0


@pytest.mark.parametrize("kind", FILLINGS)
@pytest.mark.parametrize("counts, paid", [((0, 0), None), ((1, 1), None), ((1, 0), 0),
                                          ((0, 1), 1), ((3, 2), 0)])
def test_majority_needs_strictly_more_cards(kind, counts, paid):
    # Only the one filling is collected: no sets, so the majority is all that scores.
    state = before_last_turn([{kind: counts[0]}, {kind: counts[1]}])
    expected = [0, 0]
    if paid is not None:
        expected[paid] = MAJORITY[kind]
    assert state.standings() == expected


@pytest.mark.parametrize("kind", sorted(PER_CARD))
def test_points_per_card(kind):
    state = before_last_turn([{kind: 1}, {}])
    assert state.standings() == [PER_CARD[kind], 0]


def test_sets_of_the_four_fillings():
    # Seat 0: 2 of each filling = 2 sets + all four majorities; seat 1: 1 set.
    state = before_last_turn([dict.fromkeys(FILLINGS, 2), dict.fromkeys(FILLINGS, 1)])
    assert state.standings() == [2 * SET_POINTS + sum(MAJORITY.values()), SET_POINTS]
    # Three fillings only: no set.
    state = before_last_turn([dict.fromkeys(FILLINGS[:3], 1), {}])
    assert state.standings() == [5 + 6 + 7, 0]


@pytest.mark.parametrize("a, b, scores, ranks", [
    # 8 points each; seat 0 has more almonds and wins the tie-break.
    ({"almonds": 1}, {"biscuits": 1, "yellow": 1}, [8, 8], [1, 2]),
    ({"biscuits": 1, "yellow": 1}, {"almonds": 1}, [8, 8], [2, 1]),
    # Equal points and equal almonds: a shared victory.
    ({"almonds": 1, "green": 1}, {"almonds": 1, "green": 1}, [2, 2], [1, 1]),
    ({}, {}, [0, 0], [1, 1]),
    # Points come before almonds.
    ({"almonds": 1}, {"almonds": 2, "green": 1}, [0, 10], [2, 1]),
])
def test_ranking_points_then_almonds_then_shared(a, b, scores, ranks):
    state = finished(a, b)
    assert state.end_reason() == "scoring"
    assert (state.scores(), state.ranks()) == (scores, ranks)


def test_shared_victories_split_the_win_in_the_batch_loop():
    # A house rule where nothing scores and there are no almonds (the 8 almond cards
    # become biscuits) and 3 whites cannot win: every game is a shared victory.
    zero = {f"majority.{k}": 0 for k in MAJORITY} | {f"card_points.{k}": 0 for k in PER_CARD}
    params = SPEC.params(sets=zero | {"set_points": 0, "deck.almonds": 0, "deck.biscuits": 13,
                                      "white_to_win": 4})
    out = run_batch(SPEC.new_state(params), [RandomStrategy(), RandomStrategy()], 200)
    assert (out["end_reason"] == 0).all()
    assert (out["rank"] == 1).all() and (out["score"] == 0).all()
    assert (out["win"] == 0.5).all()


def test_turns_alternate_and_the_token_passes_each_round():
    state = SPEC.new_state()
    for seed in range(20):
        state.new_game(seed)
        rng = random.Random(seed)
        movers: dict[str, list[int]] = {}
        while not state.is_terminal():
            movers.setdefault(state.phase_label(), []).append(state.current_player())
            state.apply(rng.choice(state.legal_actions()))
        rounds = list(movers.values())
        if state.end_reason() == "scoring":
            assert len(rounds) == 4 and all(len(r) == 12 for r in rounds)
        for r, seats in enumerate(rounds):
            token = r % 2  # seat 0 starts the game; the token passes every round
            assert seats == ([token, 1 - token] * 6)[:len(seats)]


def test_rounds_end_on_a_forced_turn_and_record_interim_scores():
    state = SPEC.new_state()
    for seed in range(30):
        state.new_game(seed)
        rng = random.Random(seed)
        at_round_end = []
        while not state.is_terminal():
            phase, legal = state.phase_label(), state.legal_actions()
            state.apply(rng.choice(legal))
            if state.is_terminal() or state.phase_label() != phase:
                at_round_end.append(state.standings())
                # A round ends on a forced sixth turn (the last card, or the collect)
                # that leaves both hands empty, unless white chocolate cut it short.
                assert len(legal) == 1 or state.end_reason() == "white_chocolate"
        # A game won by white chocolate repeats its final standing for unplayed rounds.
        at_round_end += [state.standings()] * (4 - len(at_round_end))
        for seat in (0, 1):
            assert state.interim(seat) == [s[seat] for s in at_round_end]


def test_random_games_keep_every_invariant_through_the_python_api():
    state = SPEC.new_state()
    for seed in range(300):
        state.new_game(seed)
        actions = random_playout(state, random.Random(seed))
        if state.end_reason() == "scoring":
            assert len(actions) == 48
            assert all(1 <= t <= 6 for p in (0, 1) for t in _collect_turns(state, p))
        else:
            assert max(collected_counts(state, p)["white"] for p in (0, 1)) >= 3


def _collect_turns(state, seat):
    values = dict(zip(state.feature_names(), state.features(seat)))
    return [values[f"collect_turn_r{r}"] for r in range(1, 5)]


def test_random_batch_results_obey_the_rules():
    check_random_batch(20_000, run_seed=7)


@pytest.mark.statistical
def test_a_million_random_games_obey_the_rules():
    check_random_batch(1_000_000, run_seed=8)


def check_random_batch(n, run_seed):
    """Play n random-vs-random games in the batch loop and check every result row
    against the rules."""
    state = SPEC.new_state()
    out = run_batch(state, [RandomStrategy(), RandomStrategy()], n, run_seed=run_seed)
    names = state.feature_names()
    f = {name: out["features"].T[:, i].reshape(n, 2) for i, name in enumerate(names)}
    score, rank, win = (out[k].reshape(n, 2) for k in ("score", "rank", "win"))
    scoring = out["end_reason"] == 0
    white = out["end_reason"] == 1

    assert scoring.sum() + white.sum() == n and scoring.any() and white.any()
    assert (out["turns"][scoring] == 48).all()
    assert (out["turns"][white] <= 48).all()
    for r in range(1, 5):
        turns = f[f"collect_turn_r{r}"][scoring]
        assert ((turns >= 1) & (turns <= 6)).all()
    # Cards: never more of a kind than the deck holds, and the 42 dealt cards minus
    # those still on the belt (at most the 2 opening cards + 10 played per round).
    for kind, count in DECK.items():
        assert (f[f"cards_{kind}"].sum(axis=1) <= count).all()
    collected = sum(f[f"cards_{k}"] for k in KINDS).sum(axis=1)
    assert (collected[scoring] <= 42).all()
    # Scores are the rulebook's, recomputed from the collected cards.
    mine = {k: f[f"cards_{k}"] for k in KINDS}
    assert (rulebook_score(mine, {k: v[:, ::-1] for k, v in mine.items()}) == score).all()
    # Ranks: points, then almonds, then shared; a white win ranks its collector first.
    almonds = f["cards_almonds"]
    key = score * 100 + almonds
    expected = np.where(key == key.max(axis=1, keepdims=True), 1, 2)
    assert (rank[scoring] == expected[scoring]).all()
    assert (f["cards_white"][white][rank[white] == 1] >= 3).all()
    assert ((rank[white] == 1).sum(axis=1) == 1).all()
    winners = (rank == 1).sum(axis=1, keepdims=True)
    assert np.allclose(win, np.where(rank == 1, 1 / winners, 0))
    assert np.allclose(win.sum(axis=1), 1.0)
    assert (out["first"].reshape(n, 2)[:, 0] == 1).all()  # seat 0 holds the token first


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64 - 1), hand=st.integers(1, 8), rounds=st.integers(1, 6),
       belt=st.integers(0, 4), collect=st.integers(1, 8), removed=st.integers(0, 4),
       white=st.integers(1, 4))
def test_house_rules_keep_every_invariant(seed, hand, rounds, belt, collect, removed, white):
    assume(removed + belt + rounds * 2 * hand <= 45)
    params = SPEC.params(sets={"hand_size": hand, "rounds": rounds, "opening_belt": belt,
                               "collect_count": collect, "removed_unseen": removed,
                               "white_to_win": white})
    state = SPEC.new_state(params)
    state.new_game(seed)
    actions = random_playout(state, random.Random(seed))
    if state.end_reason() == "scoring":
        assert len(actions) == rounds * 2 * (hand + 1)
    else:
        assert max(collected_counts(state, p)["white"] for p in (0, 1)) >= white


def test_determinized_resamples_only_the_unseen_cards():
    state = SPEC.new_state()
    state.new_game(3)
    rng = random.Random(3)
    for _ in range(7):
        state.apply(rng.choice(state.legal_actions()))
    for observer in (0, 1):
        seen = [state.standings(), state.legal_actions(), state.current_player(), state.interim(0)]
        for seed in range(10):
            other = state.determinized(observer, seed)
            other.check_invariants()
            assert [other.standings(), other.legal_actions(), other.current_player(),
                    other.interim(0)] == seen
            assert [collected_counts(other, p) for p in (0, 1)] == [
                collected_counts(state, p) for p in (0, 1)]
            if observer == state.current_player():  # its own hand is untouched
                assert [other.describe(a) for a in other.legal_actions()] == [
                    state.describe(a) for a in state.legal_actions()]


# ---- views, laid-out positions and reuse ----

def test_observation_and_to_dict_show_the_real_cards():
    # A biscuits card is kind 0: the views must show it and every card after it.
    hand = ["almonds", "biscuits", "green", "pink", "dice"]
    belt = ["green", "biscuits"]
    state = laid_out(hands=[hand, ["blueberries"] * 5], belt=belt, collected=[{}, {}],
                     round=1, to_move=0)
    assert state.observation(0)["hand"] == hand
    assert state.observation(0)["belt"] == belt
    d = state.to_dict()
    assert d["hands"] == [hand, ["blueberries"] * 5] and d["belt"] == belt
    # 45 cards: 3 set aside, 12 laid out, and the 30 that deal rounds 2 to 4.
    assert len(d["pile"]) == 45 - 3 - 12 == 3 * 2 * 5 and len(d["set_aside"]) == 3
    assert "biscuits" in state.render()


def test_a_laid_out_collect_counts_at_the_round_end():
    state = before_last_turn([{}, {}], belt=["almonds"], hands=(["pink"], []),
                             has_collected=(True, False))
    state.apply(0)
    state.apply(COLLECT)  # the round ends; round 2 is dealt
    assert state.phase_label() == "round 2"
    assert 1 <= _collect_turns(state, 0)[0] <= 6
    # A laid-out collect counts on the seat's last turn taken (its fifth); seat 1's
    # forced collect was its sixth turn.
    assert [_collect_turns(state, p)[0] for p in (0, 1)] == [5, 6]
    state.check_invariants()


def test_determinized_shuffles_exactly_the_unseen_cards():
    state = SPEC.new_state()
    state.new_game(8)
    rng = random.Random(8)
    for _ in range(5):
        state.apply(rng.choice(state.legal_actions()))

    def unseen(d, observer):
        return Counter(d["set_aside"] + d["pile"] + d["hands"][1 - observer])

    def unseen_sizes(d, observer):
        return len(d["set_aside"]), len(d["pile"]), len(d["hands"][1 - observer])

    for observer in (0, 1):
        d = state.to_dict()
        others = [state.determinized(observer, seed).to_dict() for seed in range(8)]
        for o in others:
            assert o["hands"][observer] == d["hands"][observer]
            assert (o["belt"], o["collected"]) == (d["belt"], d["collected"])
            assert unseen_sizes(o, observer) == unseen_sizes(d, observer)
            assert unseen(o, observer) == unseen(d, observer)
        assert any(o["hands"][1 - observer] != d["hands"][1 - observer] for o in others)


def test_new_game_forgets_the_previous_game():
    used = SPEC.new_state()
    used.new_game(1)
    random_playout(used, random.Random(1))
    used.new_game(2)
    fresh = SPEC.new_state()
    fresh.new_game(2)
    assert [used.interim(p) for p in (0, 1)] == [fresh.interim(p) for p in (0, 1)]


def test_set_position_refuses_a_pile_too_short_for_the_rounds_left():
    # 5 + 5 in hand, 2 on the belt, 20 collected: 45 - 32 - 3 set aside = 10 in the pile,
    # enough for round 2 only.
    with pytest.raises(ValueError, match="too few"):
        laid_out(hands=[["strawberries"] * 5, ["blueberries"] * 5], belt=["almonds", "almonds"],
                 collected=[{"biscuits": 5, "almonds": 6, "green": 4, "pawns": 3,
                             "meeples": 2}, {}], round=1, to_move=0)


def test_batch_refuses_feature_arrays_sized_for_other_params():
    # 6 rounds of 3 cards fit the deck (3 + 2 + 6 x 2 x 3 = 41) and add 2 feature
    # columns (collect_turn_r5, _r6): a runner sizing arrays from the default params
    # passes arrays 2 columns short.
    state = SPEC.new_state(SPEC.params(sets={"rounds": 6, "hand_size": 3}))
    out = result_arrays(SPEC.new_state(), 10)
    with pytest.raises(ValueError, match="features"):
        run_batch(state, [RandomStrategy(), RandomStrategy()], 10, out=out)
