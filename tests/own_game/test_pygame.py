"""A designer's game in plain Python (simcore.pygame): tic-tac-toe from examples/ against
its exact answer, registration from outside the package, runs that are deterministic
and resumable on worker processes, bad games in one line, and the conformance suite
finding planted faults."""
from __future__ import annotations

import json
import sys
from fractions import Fraction
from functools import cache
from pathlib import Path

import polars as pl
import pytest

from analysis.api import results
from helpers import ROOT, cli
from simcore import registry
from simcore.batch import seed_of_game
from simcore.conformance import (check_copies, check_determinize, check_game, check_observation_tells_moves,
                                 check_same_seed, check_serialisable)
from simcore.errors import UserError
from simcore.pygame import Chance, GameFailure
from simcore.runner import run
from simcore.strategy import RngView

EXAMPLE = ROOT / "examples" / "tictactoe"
GAME_PY = EXAMPLE / "tictactoe_game" / "game.py"
sys.path.insert(0, str(EXAMPLE))

from tictactoe_game.game import LINES, TicTacToe  # noqa: E402

# Random play, exactly (every random game enumerated): first player, second, draw.
FIRST, SECOND, DRAW = Fraction(737, 1260), Fraction(121, 420), Fraction(8, 63)


def _play(spec, params, n_games, out, seats=("random", "random"), **kw):
    import functools

    import strategies
    return run(spec, params, list(seats), functools.partial(strategies.build_lineup, spec.name, list(seats)),
               out, n_games=n_games, quiet=True, **kw)


def _rows(out):
    return results(Path(out)).drop("run_id").sort("game", "seat")


def test_exact_random_play_through_the_protocol():
    """Every random game of the example enumerated through its own methods (copy,
    legal_actions, apply, scores) gives the known exact answer."""
    game = TicTacToe(TicTacToe.PARAMS(), 0)

    @cache
    def outcome(board, to_move):  # P(first wins), P(second wins), P(draw) from here
        g = game.copy()
        g.board, g.to_move = list(board), to_move
        g.winner = next((s for s in (0, 1) for line in LINES if all(board[c] == s for c in line)), -1)
        if g.current_player() < 0:
            sc = g.scores()
            return (Fraction(int(sc[0] > sc[1])), Fraction(int(sc[1] > sc[0])), Fraction(int(sc[0] == sc[1])))
        legal = g.legal_actions()
        total = [Fraction(0)] * 3
        for a in legal:
            nxt = g.copy()
            nxt.apply(a)
            for k, v in enumerate(outcome(tuple(nxt.board), nxt.to_move)):
                total[k] += v / len(legal)
        return tuple(total)

    assert outcome((-1,) * 9, 0) == (FIRST, SECOND, DRAW)


def test_random_run_matches_the_exact_answer(tmp_path):
    """2,520 random games (seed 0): every 95% interval holds the exact value."""
    from analysis.stats import wilson
    spec = registry.get_game(str(GAME_PY))
    _play(spec, spec.params(players=2), 2520, tmp_path / "r")
    rows = _rows(tmp_path / "r")
    games = rows.filter(pl.col("position") == 0)
    n = games.height
    draws = games.filter(pl.col("win") == 0.5).height
    first = games.filter(pl.col("win") == 1).height
    second = rows.filter((pl.col("position") == 1) & (pl.col("win") == 1)).height
    for k, exact in ((first, FIRST), (second, SECOND), (draws, DRAW)):
        low, high = wilson(k, n)
        assert low <= float(exact) <= high, (k, n, float(exact))


@pytest.mark.statistical
def test_random_mirror_balance_states_the_exact_answer(tmp_path):
    """The balance experiment's random mirror: each position's win rate (a draw counts
    half) holds the exact value, 737/1260 + 4/63 and 121/420 + 4/63, in its interval."""
    from analysis import api
    result = api.balance(str(GAME_PY), ladder=["random"], compensation=False, evidence=False,
                         runs=tmp_path / "runs", games=50_400, precision=0.0001, jobs=2)
    table = result.table.sort("position")
    assert table["games"].to_list() == [50_400, 50_400]
    for row, exact in zip(table.iter_rows(named=True), (FIRST + DRAW / 2, SECOND + DRAW / 2), strict=True):
        assert row["low"] <= float(exact) <= row["high"]
        assert row["high"] - row["low"] < 0.01


def test_compare_and_sweep_play_a_python_game(tmp_path, monkeypatch, capsys):
    """Points for a line do not change random play: compare's variant replays the
    base's games exactly (paired seeds), every score doubled; sweep plays each point."""
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "compare", str(GAME_PY), "--seats", "random,random", "--variant",
                         "win_points=2", "--games", "240", "--out", "cmp.html", "--jobs", "1", "--quiet")
    assert code == 0, err
    base, variant = _rows("runs/tictactoe/random_random/rulebook"), _rows("runs/tictactoe/random_random/win_points=2")
    assert base.height == variant.height == 480
    assert (variant["score"] == 2 * base["score"]).all() and (variant["win"] == base["win"]).all()
    assert (tmp_path / "cmp.html").stat().st_size > 0
    code, out, err = cli(capsys, "sweep", str(GAME_PY), "--out", "sw.html", "--vary",
                         "win_points=1,3", "--seats", "random,random", "--games", "120", "--jobs", "1", "--quiet")
    assert code == 0, err
    assert "sweep of 2 grid point(s) (0 refused), 240 games played" in out + err


def test_chance_is_the_compiled_games_generator():
    """A Python game's stream draws what a compiled game's Rng would from the same seed."""
    for seed in (0, 1, 2**64 - 1, 12345678901234567):
        ours, theirs = Chance(seed), RngView.seeded(seed)
        assert [ours.below(n) for n in range(1, 200)] == [theirs.below(n) for n in range(1, 200)]


def test_runs_are_the_same_on_one_or_two_worker_processes_and_resumed(tmp_path):
    spec = registry.get_game(str(GAME_PY))
    params = spec.params(players=2)
    _play(spec, params, 600, tmp_path / "one", seats=("greedy", "random"), jobs=1, chunk_size=100)
    _play(spec, params, 600, tmp_path / "two", seats=("greedy", "random"), jobs=2, chunk_size=100,
          backend="processes")
    one = _rows(tmp_path / "one")
    assert one.equals(_rows(tmp_path / "two"))
    # A lost part is played again, the same.
    (tmp_path / "one" / "part-00003.arrow").unlink()
    again = _play(spec, params, 600, tmp_path / "one", seats=("greedy", "random"), jobs=1)
    assert (again.played, again.resumed) == (100, 500)
    assert _rows(tmp_path / "one").equals(one)
    # greedy takes a winning cell: it wins far more than random's share against random.
    greedy = one.filter(pl.col("strategy") == "greedy")["win"].mean()
    assert greedy > 0.65


def test_features_and_compensation(tmp_path):
    """Features are what the seat took; a bonus of 1 to the second position turns
    every draw into its win (the engine adds compensation before ranking)."""
    spec = registry.get_game(str(GAME_PY))
    _play(spec, spec.params(players=2), 240, tmp_path / "plain")
    _play(spec, spec.params(sets={"compensation.points": [0, 1]}, players=2), 240, tmp_path / "komi")
    plain, komi = _rows(tmp_path / "plain"), _rows(tmp_path / "komi")
    drawn = plain.filter(pl.col("win") == 0.5)["game"].unique()
    assert len(drawn) > 0
    second = komi.filter(pl.col("game").is_in(drawn.implode()) & (pl.col("position") == 1))
    assert second["win"].to_list() == [1.0] * len(drawn)
    # Marks on the board: 5 for the first player of a full board, its corners among them.
    full = plain.filter((pl.col("end_reason") == "full board") & (pl.col("position") == 0))
    assert (full["corners"] + full["centre"] <= 5).all() and full["centre"].is_in([0, 1]).all()


def test_a_designer_heuristic_is_one_python_class(tmp_path, monkeypatch):
    monkeypatch.chdir(EXAMPLE)
    spec = registry.get_game("tictactoe_game.game:TicTacToe")
    _play(spec, spec.params(players=2), 200, tmp_path / "h", seats=("tictactoe_game.bots:LineBot", "random"),
          jobs=1)
    rows = _rows(tmp_path / "h")
    from analysis.stats import wilson
    bot = rows.filter(pl.col("strategy") == "tictactoe_game.bots:LineBot")
    assert wilson(bot["win"].sum(), bot.height)[0] > 0.75


def test_entry_point_registration_is_listed_with_its_origin(tmp_path, monkeypatch, capsys):
    """An installed package's entry point (a dist-info on the path, as pip leaves it)."""
    dist = tmp_path / "chocosim_tictactoe-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: chocosim-tictactoe\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[chocosim.games]\nttt = tictactoe_game.game:TicTacToe\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry._entry_points.cache_clear()
    try:
        spec = registry.get_game("ttt")
        assert spec.title == "Tic-tac-toe" and "chocosim-tictactoe" in spec.origin
        code, out, err = cli(capsys, "games")
        assert code == 0 and "ttt" in out and "entry point" in out and "bundled" in out
        code, out, err = cli(capsys, "rules", "ttt")
        assert code == 0 and "win_points" in out and "assumed" in out
    finally:
        registry._entry_points.cache_clear()


BAD = '''
from simcore.pygame import Chance, PyGame
from tictactoe_game.game import LINES, TicTacToe

class Crashes(TicTacToe):
    NAME = "crashes"
    def setup(self):
        super().setup()
        self.doomed = self.chance.next() == DOOMED

    def apply(self, action):
        if self.doomed:
            raise KeyError("boom")
        super().apply(action)

class Offside(TicTacToe):
    NAME = "offside"
    def legal_actions(self):
        return super().legal_actions() + [9999]

class Endless(TicTacToe):
    NAME = "endless"
    MAX_MOVES = 50
    def current_player(self):
        return self.to_move
    def legal_actions(self):
        return [0, 1]
    def apply(self, action):
        self.to_move = 1 - self.to_move

class NoDescribe(PyGame):
    NAME = "nodescribe"
    END_REASONS = ("over",)
    def setup(self): pass
    def current_player(self): return -1
    def legal_actions(self): return []
    def apply(self, action): pass
    def scores(self): return [0, 0]
    def end_reason(self): return "over"
    def observation(self, seat): return {}

class Unseen(TicTacToe):
    NAME = "unseen"
    def observation(self, seat):
        return {"board": set(self.board)}

class Shallow(TicTacToe):
    NAME = "shallow"
    def copy(self):
        other = super().copy()
        other.board = self.board
        return other

class Global(TicTacToe):
    NAME = "global"
    def setup(self):
        import random
        super().setup()
        self.board[random.randrange(9)] = 0
        self.to_move = 1

class Rows(TicTacToe):
    NAME = "rows"
    def action_key(self, action, observer):
        return action // 3 if observer != self.to_move else (-1 if action == 8 else action)

class Weather(TicTacToe):
    """After every move a die everyone sees (the weather): a chance outcome to key by."""
    NAME = "weather"
    HIDDEN_INFORMATION = True  # the weather to come
    def setup(self):
        super().setup()
        self.weather = 0
    def apply(self, action):
        super().apply(action)
        self.weather = 1 + self.chance.below(3)
    def outcome_key(self, observer):
        return self.weather
    def determinize(self, seat, rng):
        self.chance = Chance(rng.below(1 << 30))
    def copy(self):
        other = super().copy()
        other.weather, other.chance = self.weather, Chance(0)
        other.chance.s = self.chance.s
        return other

class Pending(TicTacToe):
    """A move is two decisions, a mark (9: the seat's own, 10: a blocker nobody owns)
    then a cell; the observation forgets the mark chosen."""
    NAME = "pending"
    def setup(self):
        super().setup()
        self.mark = -1
    def legal_actions(self):
        if self.current_player() >= 0 and self.mark < 0:
            return [9, 10]
        return super().legal_actions()
    def apply(self, action):
        if action >= 9:
            self.mark = self.to_move if action == 9 else 2
            return
        self.board[action] = self.mark
        self.mark = -1
        if any(all(self.board[c] == self.to_move for c in line) for line in LINES if action in line):
            self.winner = self.to_move
        self.to_move = 1 - self.to_move
    def describe(self, action):
        if action >= 9:
            return "mark" if action == 9 else "block"
        return f"{'mark' if self.mark < 2 else 'block'} row {action // 3 + 1}, column {action % 3 + 1}"
    def copy(self):
        other = super().copy()
        other.mark = self.mark
        return other

class Peeks(TicTacToe):
    NAME = "peeks"
    HIDDEN_INFORMATION = True
    def determinize(self, seat, rng):
        self.board = [-1 if c < 0 else 1 - c for c in self.board]
'''


@pytest.fixture
def bad(tmp_path):
    from simcore.pygame import Chance
    # Game 123 of a run with seed 0 is the one that crashes.
    doomed = Chance(seed_of_game(0, 123)).next()
    path = tmp_path / "bad.py"
    path.write_text(BAD.replace("DOOMED", str(doomed)))
    return path


def test_a_failing_game_method_is_one_line_with_the_game_index_and_parts_kept(bad, tmp_path, capsys):
    out = tmp_path / "run"
    code, _, err = cli(capsys, "run", f"{bad}:Crashes", "--seats", "random,random", "--games", "400",
                       "--out", str(out), "--jobs", "1", "--chunk-size", "50", "--quiet")
    assert code == 2
    assert err.strip().splitlines() == ["chocosim: error: game crashes: apply raised KeyError: 'boom' "
                                        "in game 123 of the run"]
    assert sorted(p.name for p in out.glob("part-*.arrow")) == ["part-00000.arrow", "part-00001.arrow"]


@pytest.mark.parametrize("cls, seats, message", [
    ("Offside", "random,random", "game offside: legal_actions returned 9999, outside 0..4095 in game 0 of the run"),
    ("NoDescribe", "random,random", "game nodescribe: missing method describe"),
    ("Unseen", "tictactoe_game.bots:LineBot,random",
     "game unseen: observation returned what is not JSON-serialisable (Object of type set is not JSON "
     "serializable) in game 0 of the run"),
])
def test_bad_games_are_one_line(bad, tmp_path, capsys, cls, seats, message):
    code, _, err = cli(capsys, "run", f"{bad}:{cls}", "--seats", seats, "--games", "10",
                       "--out", str(tmp_path / "run"), "--jobs", "1", "--quiet")
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and message in err


def test_a_game_that_never_ends_is_stopped_with_a_named_reason(bad, tmp_path):
    spec = registry.get_game(f"{bad}:Endless")
    _play(spec, spec.params(players=2), 20, tmp_path / "run")
    rows = _rows(tmp_path / "run")
    assert rows["end_reason"].unique().to_list() == ["move_limit"]
    assert rows["turns"].unique().to_list() == [50]
    with pytest.raises(AssertionError, match="did not end within MAX_MOVES"):
        check_game(spec, games=2)


def test_conformance_passes_the_example_and_finds_planted_faults(bad):
    check_game(TicTacToe)
    check_game("tictactoe_game.game:TicTacToe", games=3, sets={"win_points": 3})
    planted = {"Unseen": (check_serialisable, "not JSON-serialisable"),
               "Shallow": (check_copies, "changed the original"),
               "Global": (check_same_seed, "two different games"),
               "Peeks": (check_determinize, r"determinize\(\d\) changed what seat"),
               "Pending": (check_observation_tells_moves, r"after action 9 and after action 10 .*, yet "
                                                          r"action 0 means 'mark row 1, column 1' in one and "
                                                          r"'block row 1, column 1' in the other")}
    for cls, (check, message) in planted.items():
        spec = registry.get_game(f"{bad}:{cls}")
        with pytest.raises(AssertionError, match=message):
            check(spec, spec.params(players=2), range(5))
    # Each fault is caught only by its own check: the example's other checks pass.
    spec = registry.get_game(f"{bad}:Shallow")
    check_same_seed(spec, spec.params(players=2), range(5))
    spec = registry.get_game(f"{bad}:Pending")
    for check in (check_same_seed, check_copies, check_determinize):
        check(spec, spec.params(players=2), range(5))


def test_action_keys_reach_the_search_bot_and_a_bad_one_is_refused(bad):
    """Seat 1 sees only the row of seat 0's move (a hidden choice); seat 0 sees its own
    cell; a key outside 0..4095 is refused at the next move."""
    spec = registry.get_game(f"{bad}:Rows")
    state = spec.new_state(spec.params(players=2))
    state.new_game(0)
    assert [state.action_key(a, 1) for a in (0, 4, 7)] == [0, 1, 2]
    assert [state.action_key(a, 0) for a in (0, 4, 7)] == [0, 4, 7]
    state.action_key(8, 0)
    with pytest.raises(GameFailure, match="action_key returned -1, outside 0..4095"):
        state.apply(0)
    plain = registry.get_game(str(GAME_PY)).new_state(spec.params(players=2))
    plain.new_game(0)
    assert [plain.action_key(a, 1) for a in (0, 4, 7)] == [0, 4, 7]


def test_outcome_keys_reach_the_search_trees(bad):
    """A die rolled after every move, seen by both seats: the searching seat's tree
    hangs its next decisions below each roll it saw; without outcome_key, below none."""
    import strategies
    for ref, rolls in ((f"{bad}:Weather", {-2, -3, -4}), (str(GAME_PY), set())):
        spec = registry.get_game(ref)
        state = spec.new_state(spec.params(players=2))
        state.new_game(0)
        state.apply(4)
        if rolls:
            assert state.outcome_key(0) == state.outcome_key(1) in (1, 2, 3)
        bot = strategies.build(spec.name, "mcts(iterations=300, widen=0, chance=1000000)")
        bot.bind(state)
        bot.choose_action(state, RngView.seeded(1))
        rows = bot.tree(1)
        assert {r[1] for r in rows if r[1] < -1} == rolls  # a chance node: -1 - the roll; the root: -1
        if rolls:  # below a move of the root: one chance child per roll
            first = [i for i, r in enumerate(rows) if r[4] == 0]
            assert any({rows[j][1] for j, r in enumerate(rows) if r[4] == i} == rolls for i in first)


def test_unknown_or_malformed_references_are_one_line(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        registry.get_game(str(tmp_path / "missing.py"))
    with pytest.raises(UserError, match="cannot import"):
        registry.get_game("no_such_pkg.game:Game")
    (tmp_path / "two.py").write_text("from tictactoe_game.game import TicTacToe\n"
                                     "class A(TicTacToe): pass\nclass B(TicTacToe): pass\n")
    with pytest.raises(UserError, match="expected one PyGame subclass in the file, found A, B"):
        registry.get_game(str(tmp_path / "two.py"))
    with pytest.raises(UserError, match="unknown game 'nope'"):
        registry.get_game("nope")


def test_failure_pickles_for_worker_processes():
    import pickle
    e = GameFailure("g", "apply", "raised X", "tb").in_game(7)
    assert str(pickle.loads(pickle.dumps(e))) == "game g: apply raised X in game 7 of the run"
    assert json.dumps(TicTacToe(TicTacToe.PARAMS(), 3).observation(0))
