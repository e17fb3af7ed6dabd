"""A designer's game is held to its protocol while a run plays it, not only by the
conformance suite: a failing method or a wrong return type anywhere (a bot's look-ahead
copies too) ends the run in one line naming the game, the method and the game; a bad
class is refused before anything plays; a game that is not deterministic is caught by
a replay; a game edited since never resumes an old run; Ctrl-C stops a method that loops
forever on every backend."""
from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time

import pytest

from helpers import CHECKED_WARNING, ROOT, cli
from simcore import registry
from simcore.conformance import check_game, check_observation, check_same_seed

EXAMPLE = ROOT / "examples" / "tictactoe"
sys.path.insert(0, str(EXAMPLE))

HOSTILE = '''
import os
import random
from simcore.pygame import PyGame
from tictactoe_game.game import TicTacToe

def marks(game):
    return sum(c >= 0 for c in game.board)

class RaisingStanding(TicTacToe):
    NAME = "raising"
    def standing(self, seat):
        raise ValueError("nope")

class NanStanding(TicTacToe):
    NAME = "nan"
    def standing(self, seat):
        return float("nan")

class HugeStanding(TicTacToe):
    NAME = "huge"
    def standing(self, seat):
        return 2**40

class Interrupting(TicTacToe):
    NAME = "interrupting"
    def standing(self, seat):
        raise KeyboardInterrupt

class LateStanding(TicTacToe):
    """standing() fails only once the 4th mark is down: the first games of the run are
    played before greedy's look-ahead reaches it in game LATE."""
    NAME = "late"
    def setup(self):
        super().setup()
        self.doomed = self.chance.next() == DOOMED
    def copy(self):
        other = super().copy()
        other.doomed = self.doomed
        return other
    def standing(self, seat):
        if self.doomed and marks(self) >= 4:
            raise ZeroDivisionError("late")
        return super().standing(seat)

class SelfCopy(TicTacToe):
    NAME = "selfcopy"
    def copy(self):
        return self

class DictScores(TicTacToe):
    NAME = "dictscores"
    def scores(self):
        return dict(enumerate(super().scores()))

class SetLegal(TicTacToe):
    NAME = "setlegal"
    def legal_actions(self):
        return set(super().legal_actions())

class FloatFeatures(TicTacToe):
    NAME = "floatfeatures"
    def features(self, seat):
        return [0.5, 1]

class TooManyMoves(TicTacToe):
    NAME = "toomanymoves"
    MAX_MOVES = 10**30

class TwoPlayers(TicTacToe):
    NAME = "twoplayers"
    PLAYERS = 2

class Numbered(TicTacToe):
    NAME = 42

class Spelled(TicTacToe):
    NAME = "spelled"
    FEATURES = "centre"

class Repeated(TicTacToe):
    NAME = "repeated"
    END_REASONS = ("line", "line")

class Lengthy(TicTacToe):
    NAME = "lengthy"
    FEATURES = ("centre", "turns")

class NamedBot(TicTacToe):
    NAME = "namedbot"
    BOTS = ("tictactoe_game.bots:LineBot",)

class Wordless(TicTacToe):
    NAME = "wordless"
    def describe_outcome(self):
        return 3

class NoDeal(PyGame):
    NAME = "nodeal"
    END_REASONS = ("over",)
    def setup(self): raise RuntimeError("no deal")
    def current_player(self): return -1
    def legal_actions(self): return []
    def apply(self, action): pass
    def scores(self): return [0, 0]
    def end_reason(self): return "over"
    def observation(self, seat): return {}
    def describe(self, action): return str(action)

class Blind(TicTacToe):
    NAME = "blind"
    render = PyGame.render  # the default: it shows the observation
    def observation(self, seat):
        raise RuntimeError("no look")

class Flips(TicTacToe):
    NAME = "flips"
    def observation(self, seat):
        self.to_move = 1 - self.to_move
        return super().observation(seat)

class Draws(TicTacToe):
    """observation() draws from the game's chance stream: its answer stays the same,
    the games after it do not."""
    NAME = "draws"
    def setup(self):
        super().setup()
        self.to_move = self.chance.below(2)
    def apply(self, action):
        super().apply(action)
        if self.chance.below(2):
            self.to_move = 1 - self.to_move
    def observation(self, seat):
        self.chance.next()
        return super().observation(seat)

class Gambler(TicTacToe):
    NAME = "gambler"
    def setup(self):
        super().setup()
        self.board[random.randrange(9)] = 0
        self.to_move = 1

class Remembers(TicTacToe):
    """Game state kept on the class: every game after a process's first starts with
    the other seat."""
    NAME = "remembers"
    dealt = [0]
    def setup(self):
        super().setup()
        self.to_move = min(Remembers.dealt[0], 1)
        Remembers.dealt[0] += 1

class Hashes(TicTacToe):
    """Reads its features off the order of a set of strings: Python hashes strings
    with a seed of each process, so another process plays another game."""
    NAME = "hashes"
    def setup(self):
        super().setup()
        order = list({"a", "b", "c", "d", "e", "f", "g", "h"})
        self.key = [order.index("a"), order.index("b")]
    def features(self, seat):
        return self.key

class Forever(TicTacToe):
    """Loops forever in apply (or in standing: LOOP_IN) once 3 marks are down, after
    leaving a file saying which process and thread loops."""
    NAME = "forever"
    def _loop(self):
        import threading
        open(os.path.join(os.environ["FOREVER_MARKS"], f"{os.getpid()}-{threading.get_ident()}"), "a").close()
        while True:
            pass
    def apply(self, action):
        if os.environ.get("LOOP_IN") == "apply" and marks(self) == 3:
            self._loop()
        super().apply(action)
    def standing(self, seat):
        if os.environ.get("LOOP_IN") == "standing" and marks(self) == 3:
            self._loop()
        return super().standing(seat)
'''

# The game of the run (seed 0) in which LateStanding fails.
LATE = 123


@pytest.fixture
def hostile(tmp_path):
    from simcore.batch import seed_of_game
    from simcore.pygame import Chance
    path = tmp_path / "hostile.py"
    path.write_text(HOSTILE.replace("DOOMED", str(Chance(seed_of_game(0, LATE)).next())))
    return path


def _run(capsys, ref, out, *more, seats="greedy,random", games="200"):
    return cli(capsys, "run", ref, "--seats", seats, "--games", games, "--out", str(out), "--quiet", *more)


def _one_line(err):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ---- a failing method or a wrong return type ends the run ----

@pytest.mark.parametrize("cls, what", [
    # The example: standing() raised on every call of greedy's look-ahead, and
    # 200 games ended with exit 0.
    ("RaisingStanding", "standing raised ValueError: nope"),
    ("NanStanding", "standing returned nan, not an int"),
    ("HugeStanding", "standing returned 1099511627776, outside -1073741824..1073741824"),
    ("SelfCopy", "copy returned the game itself, not a copy"),
    # No Ctrl-C behind it: the game's own failure, not the user's interrupt.
    ("Interrupting", "standing raised KeyboardInterrupt (not a Ctrl-C)"),
])
def test_a_failure_in_a_bots_lookahead_ends_the_run(hostile, tmp_path, capsys, cls, what):
    code, _, err = _run(capsys, f"{hostile}:{cls}", tmp_path / "run", "--backend", "threads")
    assert code == 2
    name = {"RaisingStanding": "raising", "NanStanding": "nan", "HugeStanding": "huge",
            "SelfCopy": "selfcopy", "Interrupting": "interrupting"}[cls]
    # Every game fails at greedy's first decision: the first game of whichever chunk
    # (of 25 games, on two threads) fails first.
    found = re.fullmatch(rf"chocosim: error: game {name}: {re.escape(what)} in game (\d+) of the run", _one_line(err))
    assert found and int(found[1]) % 25 == 0, err


def test_a_lookahead_failure_late_in_a_run_names_its_game_and_keeps_the_finished_parts(hostile, tmp_path, capsys):
    out = tmp_path / "run"
    code, _, err = _run(capsys, f"{hostile}:LateStanding", out, "--jobs", "1", "--chunk-size", "50",
                        games="400")
    assert code == 2
    assert _one_line(err) == (f"chocosim: error: game late: standing raised ZeroDivisionError: late in game "
                              f"{LATE} of the run")
    assert sorted(p.name for p in out.glob("part-*.arrow")) == ["part-00000.arrow", "part-00001.arrow"]


@pytest.mark.parametrize("cls, line", [
    # The example: a dict of scores was read as its keys and flipped the winner.
    ("DictScores", "game dictscores: scores returned {0: 1, 1: 0}, a dict, not a list of 2 ints in game 0"),
    ("SetLegal", "game setlegal: legal_actions returned {0, 1, 2, 3, 4, 5, 6, 7, 8}, a set, not a list of actions "
                 "in game 0"),
    ("FloatFeatures", "game floatfeatures: features returned 0.5, not an int in game 0"),
])
def test_return_values_are_checked_by_type(hostile, tmp_path, capsys, cls, line):
    code, _, err = _run(capsys, f"{hostile}:{cls}", tmp_path / "run", seats="random,random", games="10")
    assert code == 2
    assert _one_line(err).startswith(f"chocosim: error: {line}")


@pytest.mark.parametrize("cls, line", [
    # The three examples, each a traceback before.
    ("TooManyMoves", "game toomanymoves: MAX_MOVES = 1000000000000000000000000000000: expected an int from 1 "
                     "to 2,147,483,647"),
    ("TwoPlayers", "game twoplayers: PLAYERS = 2: expected (fewest, most) players, two ints with 1 <= fewest "
                   "<= most <= 6, e.g. (2, 4)"),
    ("Numbered", "game Numbered: NAME = 42: expected a string"),
    ("Spelled", "game spelled: FEATURES = 'centre': expected a tuple of distinct, non-empty strings"),
    ("Repeated", "game repeated: END_REASONS = ('line', 'line'): expected a tuple of distinct, non-empty strings"),
    # Conformance passed it, and the run refused it as "columns that clash: turns".
    ("Lengthy", "game lengthy: FEATURES names 'turns', a column every result already has; choose another name "
                "(taken: run_id, game, seed, seat, strategy, score, rank, win, first, position, turns, end_reason)"),
    ("NamedBot", "game namedbot: BOTS = ('tictactoe_game.bots:LineBot',): expected a tuple of "
                 "simcore.strategy.PythonStrategy subclasses, each with a NAME"),
])
def test_a_bad_class_is_one_line_before_anything_plays(hostile, tmp_path, capsys, cls, line):
    out = tmp_path / "run"
    code, _, err = _run(capsys, f"{hostile}:{cls}", out, seats="random,random", games="10")
    assert code == 2
    assert _one_line(err) == f"chocosim: error: {line}"
    assert not out.exists()


@pytest.mark.parametrize("cls, line", [
    ("NoDeal", "game nodeal: setup raised RuntimeError: no deal in game 0 of the run"),
    ("Blind", "game blind: observation (called by render) raised RuntimeError: no look in game 0 of the run"),
    ("Wordless", "game wordless: describe_outcome returned 3, not a str in game 0 of the run"),
])
def test_play_names_the_method_that_failed(hostile, capsys, cls, line):
    code, _, err = cli(capsys, "play", f"{hostile}:{cls}", "--seats", "random,random")
    assert code == 2
    assert _one_line(err) == f"chocosim: error: {line}"


# ---- determinism: replayed, fingerprinted, observation checked ----

@pytest.mark.parametrize("cls", ["Gambler", "Remembers"])
def test_a_game_that_does_not_replay_is_refused(hostile, tmp_path, capsys, cls):
    """Gambler draws from Python's random module (the issue's example: its rows differed
    between --jobs 1 and --jobs 2); Remembers keeps state on its class, so a game
    depends on the games played before it in the process."""
    random.seed(3)  # the replay of the first chunk draws another cell
    out = tmp_path / "run"
    code, _, err = _run(capsys, f"{hostile}:{cls}", out, "--jobs", "1", "--backend", "threads",
                        seats="random,random", games="100")
    assert code == 2
    line = _one_line(err)
    assert line.startswith(f"chocosim: error: game {cls.lower()}: game 0 of the run played differently when "
                           "replayed (")
    assert "draw chance only from self.chance" in line
    assert not list(out.glob("part-*"))


@pytest.mark.filterwarnings("error")  # nothing but the one line: joblib's note of cancelled chunks neither
def test_a_game_that_plays_otherwise_in_another_process_is_refused(hostile, tmp_path, capsys, monkeypatch):
    """Own example: a set of strings iterates in another order in each worker process.
    Each replays its own chunks alike; the run's process replays the first game of each
    chunk a worker played, and refuses."""
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    code, _, err = _run(capsys, f"{hostile}:Hashes", tmp_path / "run", "--backend", "processes", "--jobs", "2",
                        "--chunk-size", "10", seats="random,random", games="400")
    assert code == 2
    assert re.fullmatch(r"chocosim: error: game hashes: game \d+ of the run played differently when replayed in "
                        r"another process \(features \[.*\] then \[.*\]\): the same seed must give the same "
                        r"game, .*", _one_line(err))


def test_deterministic_games_replay_on_every_backend(tmp_path, capsys):
    """The example game passes the replay of each chunk whoever plays it."""
    game = str(EXAMPLE / "tictactoe_game" / "game.py")
    for backend in ("threads", "processes"):
        out = tmp_path / backend
        code, _, err = cli(capsys, "run", game, "--seats", "greedy,random", "--games", "200", "--out", str(out),
                           "--jobs", "2", "--chunk-size", "50", "--backend", backend, "--quiet")
        assert code == 0, err
        assert len(list(out.glob("part-*.arrow"))) == 4


def test_a_changed_game_never_resumes_its_old_run(tmp_path, capsys):
    """The issue's example: a game file edited between runs resumed into the old parts.
    The manifest holds each file's hash; an edited file is named, the restored one
    resumes. Own example: a helper module of the game's package counts too."""
    package = tmp_path / "edited_game"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "rules.py").write_text("WIN = 1\n")
    (package / "game.py").write_text(
        "from tictactoe_game.game import TicTacToe\nfrom edited_game.rules import WIN\n\n"
        "class Mine(TicTacToe):\n    NAME = 'mine'\n")
    sys.path.insert(0, str(tmp_path))
    try:
        out = tmp_path / "run"
        args = ("run", "edited_game.game:Mine", "--seats", "random,random", "--out", str(out), "--jobs", "1",
                "--chunk-size", "10", "--quiet")
        assert cli(capsys, *args, "--games", "20")[0] == 0
        code = json.loads((out / "manifest.json").read_text())["game_code"]
        # The game's package, and the package of the class it derives from.
        assert sorted(code) == ["edited_game/__init__.py", "edited_game/game.py", "edited_game/rules.py",
                                "tictactoe_game/__init__.py", "tictactoe_game/bots.py", "tictactoe_game/game.py"]
        original = (package / "rules.py").read_text()
        (package / "rules.py").write_text("WIN = 2\n")
        parts = sorted(p.stat().st_mtime_ns for p in out.glob("part-*"))
        rc, _, err = cli(capsys, *args, "--games", "40")
        assert rc == 2
        assert _one_line(err) == (f"chocosim: error: run directory {out} holds a run of mine played by other code "
                                  "of the game (edited_game/rules.py changed since): resuming would mix two versions of "
                                  "its rules; choose another output directory, or restore that code to resume")
        assert sorted(p.stat().st_mtime_ns for p in out.glob("part-*")) == parts
        assert json.loads((out / "manifest.json").read_text())["n_games"] == 20
        (package / "rules.py").write_text(original)
        assert cli(capsys, *args, "--games", "40")[0] == 0
        assert json.loads((out / "manifest.json").read_text())["n_games"] == 40
    finally:
        # Imported modules outlive the path entry: left behind, they shadow a later test's names.
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.split(".")[0] == "edited_game"]:
            del sys.modules[name]


def test_a_file_game_is_fingerprinted_and_a_bundled_game_is_named_by_its_build(hostile, tmp_path, capsys):
    out = tmp_path / "run"
    assert cli(capsys, "run", f"{hostile}:Forever", "--seats", "random,random", "--games", "10",
               "--out", str(out), "--quiet")[0] == 0
    code = json.loads((out / "manifest.json").read_text())["game_code"]
    assert "hostile.py" in code and "tictactoe_game/game.py" in code
    hostile.write_text(hostile.read_text() + "\n# a comment is an edit too\n")
    rc, _, err = cli(capsys, "run", f"{hostile}:Forever", "--seats", "random,random", "--games", "20",
                     "--out", str(out), "--quiet")
    assert rc == 2 and "(hostile.py changed since)" in _one_line(err)
    bundled = tmp_path / "bundled"
    assert cli(capsys, "run", "fabryka", "--seats", "random,random", "--games", "10", "--out", str(bundled),
               "--quiet")[0] == 0
    manifest = json.loads((bundled / "manifest.json").read_text())
    assert "game_code" not in manifest and {"version", "git_revision", "checked_build"} <= manifest.keys()


def test_check_game_finds_an_observation_that_changes_the_game(hostile):
    """The issue's example (observation flips the seat to move) and one whose answer is
    stable but which draws from the game's chance stream: both pass check_same_seed,
    and check_observation finds them; the example game passes."""
    for cls in ("Flips", "Draws"):
        spec = registry.get_game(f"{hostile}:{cls}")
        params = spec.params(players=2)
        check_same_seed(spec, params, range(5))
        found = r"observation(\(\d\) gave two answers in a row|\(\) changed the game)"
        with pytest.raises(AssertionError, match=found):
            check_observation(spec, params, range(5))
        with pytest.raises(AssertionError):
            check_game(spec, games=5)
    from tictactoe_game.game import TicTacToe
    check_observation(registry.get_game(str(EXAMPLE / "tictactoe_game" / "game.py")), TicTacToe.PARAMS(), range(5))


# ---- Ctrl-C reaches a game method that loops forever ----

@pytest.mark.parametrize("backend, jobs, loop_in, seats, loops", [
    # The example: still running 30 s after SIGINT. Both workers and the thread
    # of the command's process that plays while they start loop.
    ("processes", "2", "apply", "random,random", 3),
    pytest.param("processes", "2", "standing", "greedy,random", 3, marks=pytest.mark.slow),  # worker processes: seconds
    ("threads", "2", "standing", "greedy,random", 2),
    ("threads", "1", "standing", "greedy,random", 1),  # serial: the loop in the command's own thread
])
def test_ctrl_c_stops_a_game_method_that_loops_forever(hostile, tmp_path, backend, jobs, loop_in, seats, loops):
    marks = tmp_path / "looping"
    marks.mkdir()
    env = {**os.environ, "FOREVER_MARKS": str(marks), "LOOP_IN": loop_in,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(EXAMPLE), os.environ.get("PYTHONPATH")]))}
    out = tmp_path / "run"
    # Started outside the checkout, as a user's command: `python -c` puts its directory first
    # on the path, and the checkout's own sources are unbuilt where the package is installed.
    # SIGINT as a terminal delivers it: a test run started in the background inherits it ignored.
    start = ("import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
             "from analysis.cli import main; main()")
    proc = subprocess.Popen([sys.executable, "-c", start, "run",
                             f"{hostile}:Forever", "--seats", seats, "--games", "100", "--out", str(out),
                             "--backend", backend, "--jobs", jobs, "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while len(list(marks.iterdir())) < loops:
            if proc.poll() is not None or time.monotonic() >= deadline:
                proc.kill()  # (still looping when the marks are late: its output only once it is gone)
                pytest.fail(f"{len(list(marks.iterdir()))} of {loops} loops started: {proc.communicate()}")
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    lines = [line for line in err.strip().splitlines() if not line.startswith(CHECKED_WARNING)]
    assert lines == [f"chocosim: interrupted; the finished parts are kept in {out}: run the same command again "
                     "to resume"]
