"""Game params: TOML defaults with provenance, house rules, and one-line errors
(DESIGN.md, "Game params" and "Errors"). The generic tests run for every registered
game; the Fabryka ones check its limits against the rulebook's card arithmetic."""
from __future__ import annotations

import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from simcore.errors import UserError
from simcore.params import SOURCES, flatten, parse_set
from simcore.registry import games, get_game

GAMES = sorted(games())
FABRYKA = get_game("fabryka")


def toml_leaves(spec):
    """dotted name -> the leaf table (value, source, doc), read straight from the file."""
    with open(spec.defaults_path, "rb") as f:
        tree = tomllib.load(f)
    leaves = {}

    def walk(node, prefix):
        for key, sub in node.items():
            if "value" in sub:
                leaves[prefix + key] = sub
            else:
                walk(sub, f"{prefix}{key}.")

    walk(tree, "")
    return leaves


def model_leaves(model, prefix=""):
    """Dotted names of every leaf field of a params model (nested models are groups)."""
    names = set()
    for name, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            names |= model_leaves(field.annotation, f"{prefix}{name}.")
        else:
            names.add(prefix + name)
    return names


def user_error(spec, **kwargs):
    """The message of the UserError spec.params(**kwargs) raises; it must be one line."""
    with pytest.raises(UserError) as info:
        spec.params(**kwargs)
    message = str(info.value)
    assert message and "\n" not in message
    return message


# ---- every game ----

@pytest.mark.parametrize("game", GAMES)
def test_every_default_says_where_it_comes_from(game):
    for name, leaf in toml_leaves(games()[game]).items():
        assert leaf.get("source") in SOURCES, name
        assert isinstance(leaf.get("doc"), str) and leaf["doc"].strip(), name


@pytest.mark.parametrize("game", GAMES)
def test_model_fields_and_toml_defaults_match(game):
    spec = games()[game]
    assert model_leaves(spec.params_cls) == set(toml_leaves(spec))


@pytest.mark.parametrize("game", GAMES)
def test_defaults_build_to_the_toml_values(game):
    spec = games()[game]
    values = {name: leaf["value"] for name, leaf in toml_leaves(spec).items()}
    assert flatten(spec.params().model_dump()) == values


@pytest.mark.parametrize("game", GAMES)
def test_unknown_param_is_named(game):
    assert "no_such_param" in user_error(games()[game], sets={"no_such_param": 1})


@pytest.mark.parametrize("game", GAMES)
def test_wrong_type_is_named(game):
    spec = games()[game]
    ints = [n for n, leaf in toml_leaves(spec).items()
            if isinstance(leaf["value"], int) and not isinstance(leaf["value"], bool)]
    for name in ints:
        assert name in user_error(spec, sets={name: "lots"})


@pytest.mark.parametrize("game", GAMES)
def test_wrong_player_count_is_refused(game):
    spec = games()[game]
    lo, hi = spec.players
    assert str(hi + 1) in user_error(spec, players=hi + 1)
    if lo > 1:
        assert str(lo - 1) in user_error(spec, players=lo - 1)
    for n in range(lo, hi + 1):
        assert spec.params(players=n).players == n


@pytest.mark.parametrize("game", GAMES)
def test_malformed_house_rule_file_is_refused(game, tmp_path):
    path = tmp_path / "house.toml"
    path.write_text("[deck\nalmonds = 9\n")
    assert "house.toml" in user_error(games()[game], rules_file=path)
    assert "missing.toml" in user_error(games()[game], rules_file=tmp_path / "missing.toml")


# ---- Fabryka ----

def test_set_overrides_change_only_what_they_name():
    p = FABRYKA.params(sets=dict(parse_set(s) for s in ("deck.almonds=9", "majority.almonds = 10")))
    assert (p.deck.almonds, p.majority.almonds) == (9, 10)
    assert flatten(p.model_dump()) == flatten(FABRYKA.params().model_dump()) | {
        "deck.almonds": 9, "majority.almonds": 10}


def test_house_rule_file_then_set_values(tmp_path):
    path = tmp_path / "house.toml"
    path.write_text("rounds = 3\n[card_points]\ndice = -5\nmeeples = -4\n")
    p = FABRYKA.params(rules_file=path, sets={"card_points.meeples": -1})
    assert (p.rounds, p.card_points.dice, p.card_points.meeples) == (3, -5, -1)


@pytest.mark.parametrize("name, value", [
    ("hand_size", 16),  # a hand slot per action and one collect action: at most 15
    ("hand_size", 0), ("rounds", 0), ("white_to_win", 0), ("collect_count", 0),
    ("deck.almonds", -1), ("removed_unseen", -1),
])
def test_out_of_range_is_named(name, value):
    message = user_error(FABRYKA, sets={name: value})
    assert name in message and str(value) in message


@pytest.mark.parametrize("sets", [
    {"rounds": 5},  # 3 + 2 + 5 x 2 x 5 = 55 > 45
    {"removed_unseen": 4},  # 4 + 2 + 40 = 46 > 45
    {"hand_size": 6},  # 3 + 2 + 48 = 53 > 45
])
def test_too_few_cards_for_the_rounds(sets):
    assert "45" in user_error(FABRYKA, sets=sets)


def test_a_bigger_deck_makes_room_for_more_rounds():
    p = FABRYKA.params(sets={"rounds": 5, "deck.biscuits": 15})  # 55 cards, 55 needed
    assert p.rounds == 5


def test_wrong_player_count_in_the_params():
    assert "players" in user_error(FABRYKA, sets={"players": 3})
    assert "3" in user_error(FABRYKA, sets={"players": 3}, players=2)


@settings(max_examples=60, deadline=None)
@given(hand=st.integers(1, 15), rounds=st.integers(1, 16), belt=st.integers(0, 10),
       removed=st.integers(0, 10), extra=st.integers(0, 80))
def test_card_budget_decides_validity(hand, rounds, belt, removed, extra):
    # The rulebook's arithmetic: set-aside + opening belt + rounds x 2 x hand <= deck.
    sets = {"hand_size": hand, "rounds": rounds, "opening_belt": belt,
            "removed_unseen": removed, "deck.white": 3 + extra}
    if removed + belt + rounds * 2 * hand <= 45 + extra:
        FABRYKA.new_state(FABRYKA.params(sets=sets)).check_invariants()
    else:
        user_error(FABRYKA, sets=sets)


def test_card_budget_error_names_only_the_relevant_params():
    message = user_error(FABRYKA, sets={"rounds": 5})
    assert message.startswith("invalid params: ")
    assert "rounds" in message and "card_points" not in message


@pytest.mark.parametrize("value", [True, "4"])
def test_mistyped_values_are_refused(value):
    assert "rounds" in user_error(FABRYKA, sets={"rounds": value})


@pytest.mark.parametrize("text, name", [
    ("rounds.value = 5\n", "rounds"),
    ('[deck.almonds]\nvalue = 9\nsource = "house"\ndoc = "more almonds"\n', "deck.almonds"),
])
def test_house_rule_file_in_the_defaults_format_gets_a_hint(tmp_path, text, name):
    # A copy of the defaults' value/source/doc tables is not a house rule: the error says
    # to give plain values instead of calling `rounds.value` an unknown param.
    path = tmp_path / "house.toml"
    path.write_text(text)
    message = user_error(FABRYKA, rules_file=path)
    assert f"{name}.value" in message and "plain values" in message
    assert f"{name} = " in message and "unknown param" not in message
