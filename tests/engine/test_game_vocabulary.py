"""One vocabulary for both kinds of game: a compiled state answers in Python with the
methods a PyGame author writes (same names, same parameters), a game of either kind
declares its metadata with the same class attributes, read by one function
(simcore.registry.spec_of), and a game played through that common face gives what the
batch loop records for the same seed."""
from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

import simcore
from helpers import ROOT
from simcore.batch import play_batch, result_arrays, seed_of_bot, seed_of_game
from simcore.errors import UserError
from simcore.games.fabryka.rules import FabrykaState
from simcore.meta import DECLARED, FeatureRoles
from simcore.pygame import Chance, PyGame
from simcore.registry import get_game, spec_of
from simcore.state import GameState
from simcore.strategy import PythonStrategy, RngView

EXAMPLE = ROOT / "examples" / "tictactoe"
sys.path.insert(0, str(EXAMPLE))
from tictactoe_game.game import TicTacToe  # noqa: E402

# What the engine calls on a PyGame and no caller asks of a state: the deal from the
# constructor's seed, and the ranking of given final scores (the face answers ranks()).
HOOKS = {"setup", "rank"}
# The compiled face's former names, each now said the PyGame way.
OLD_NAMES = ("player", "terminal", "legal", "apply_action", "result", "clone", "first", "end_reason_name",
             "interim_scores", "feature_values", "component_of", "takes", "key_of", "outcome_of",
             "describe_action")


def _face(cls: type) -> dict[str, list[str]]:
    """Every public method of `cls` with its parameter names (self left out)."""
    out = {}
    for name in dir(cls):
        value = getattr(cls, name)
        if name.startswith("_") or not callable(value) or isinstance(value, type):
            continue
        out[name] = [p for p in inspect.signature(value).parameters if p != "self"]
    return out


def _states() -> list[type]:
    return [get_game(name).state_cls for name in ("fabryka", "alleycat", "manfredini", "enemy_chocolatier")] \
        + [spec_of(TicTacToe, "test").state_cls]


@pytest.mark.parametrize("state_cls", _states(), ids=lambda c: c.__name__)
def test_a_state_answers_every_method_a_pygame_writes_with_its_parameters(state_cls):
    pygame_face = {k: v for k, v in _face(PyGame).items() if k not in HOOKS}
    state_face = _face(state_cls)
    missing = sorted(set(pygame_face) - set(state_face))
    assert not missing, f"{state_cls.__name__} lacks {missing}"
    assert {k: state_face[k] for k in pygame_face} == pygame_face
    assert [n for n in OLD_NAMES if hasattr(state_cls, n)] == []


def test_both_kinds_declare_the_same_metadata_attributes():
    for attr in DECLARED:
        assert hasattr(GameState, attr) and hasattr(PyGame, attr), attr
    fabryka = spec_of(FabrykaState)
    assert (fabryka.name, fabryka.title, fabryka.players) == ("fabryka", "Fabryka Czekolady", (2, 2))
    assert fabryka.state_cls is FabrykaState and fabryka.params_cls is FabrykaState.PARAMS
    assert fabryka.position_knobs == {"collect_count": (3, 4, 5, 6, 7), "opening_belt": (0, 1, 2)}
    assert (fabryka.victory.tie_breaks, fabryka.victory.in_play) == (("cards_almonds",), ("white_chocolate",))
    assert fabryka.features.role("majority_almonds") == "outcome"
    assert get_game("enemy_chocolatier").bonus_decides is False
    ttt = spec_of(TicTacToe, "test")
    assert (ttt.name, ttt.title, ttt.players, ttt.params_cls) == ("tictactoe", "Tic-tac-toe", (2, 2),
                                                                  TicTacToe.PARAMS)
    assert ttt.features == FeatureRoles() and ttt.bonus_decides is True
    # A Python game's state carries the same declarations as the class it plays.
    assert all(getattr(ttt.state_cls, a) == getattr(TicTacToe, a) for a in DECLARED)


def test_a_class_that_is_no_game_is_refused_in_one_line():
    with pytest.raises(UserError, match="neither a simcore.state.GameState nor a"):
        spec_of(dict, "test")


class OldRanks(TicTacToe):
    NAME = "oldranks"

    def ranks(self, scores):
        return [1, 1]


def test_a_pygame_that_defines_what_the_base_class_gives_is_refused_in_one_line():
    # Its ranks(scores) would be ignored: the engine ranks final scores with rank(scores).
    with pytest.raises(UserError, match=r"^game oldranks: defines ranks\(\), which the base class gives from "
                       r"rank\(scores\), where a game ranks final scores$"):
        spec_of(OldRanks, "test")


def _imports(module_file: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(module_file.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_the_registry_imports_the_python_game_protocol_not_the_reverse():
    root = Path(simcore.__file__).parent
    assert "simcore.pygame" in _imports(root / "registry.py")
    assert not {"simcore.registry", "simcore.pygame_state"} & _imports(root / "pygame.py")
    assert "simcore.registry" not in _imports(root / "meta.py")


class Pick(PythonStrategy):
    """A uniform pick from the bot's own stream: the batch loop and the face loop below
    lend it the same stream."""

    def decide(self, observation, legal, rng):
        return legal[rng.below(len(legal))]


def _play_through_face(game, gseed: int) -> tuple[list[int], list[int], str, int]:
    """Play a dealt game (a compiled state or a PyGame) with Pick in every seat through
    the common face, as the batch loop does: a forced move is not put to the bot."""
    bot = Pick()
    rngs = [RngView.seeded(seed_of_bot(gseed, p)) for p in range(game.params.players)]
    turns = 0
    while not game.is_terminal():
        legal, seat = game.legal_actions(), game.current_player()
        action = legal[0] if len(legal) == 1 else bot.decide(game.observation(seat), legal, rngs[seat])
        game.apply(action)
        turns += 1
    return game.scores(), game.ranks(), game.end_reason(), turns


@pytest.mark.parametrize("game", ["fabryka", "tictactoe"])
def test_a_game_played_through_the_face_is_the_batch_loops_game(game):
    spec = get_game(game) if game == "fabryka" else spec_of(TicTacToe, "test")
    params = spec.params(players=2)
    state = spec.new_state(params)
    run_seed, n = 11, 12
    out = result_arrays(state, n)
    play_batch(state, [Pick(), Pick()], np.array([[0, 1]], dtype=np.int32), 1, run_seed, 0, n, **out)
    assert len({tuple(out["score"][2 * i:2 * i + 2]) for i in range(n)}) > 1  # the games differ
    for i in range(n):
        gseed = seed_of_game(run_seed, i)
        if game == "fabryka":
            face = spec.new_state(params)
            face.new_game(gseed)
        else:
            face = TicTacToe(params, gseed)  # the designer's class itself, no engine around it
        scores, ranks, reason, turns = _play_through_face(face, gseed)
        assert scores == out["score"][2 * i:2 * i + 2].tolist(), f"game {i}"
        assert ranks == out["rank"][2 * i:2 * i + 2].tolist(), f"game {i}"
        assert reason == spec.state_cls.END_REASONS[out["end_reason"][i]] and turns == out["turns"][i], f"game {i}"


def test_a_compiled_state_determinizes_in_place_from_a_stream_as_a_pygame_does():
    spec = get_game("manfredini")
    state = spec.new_state(spec.params(players=3))
    state.new_game(5)
    for _ in range(6):
        state.apply(state.legal_actions()[0])
    seen = state.observation(0)
    worlds = []
    for k in range(6):
        world = state.copy()
        world.determinize(0, Chance(k))
        assert world.observation(0) == seen  # what seat 0 sees stays
        worlds.append(repr(world.to_dict()))
    again = state.copy()
    again.determinize(0, Chance(0))
    assert repr(again.to_dict()) == worlds[0]  # the same stream, the same world
    assert len(set(worlds)) > 1  # what it cannot see is resampled
