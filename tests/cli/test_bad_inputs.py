"""Bad input found by attacking every subcommand: each is one line on stderr and exit code
2 (or, from Python, one UserError), and nothing is written before it is refused."""
from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from analysis import api
from simcore.errors import ArgumentError, UserError
from simcore.registry import get_game
from helpers import cli


pytestmark = pytest.mark.usefixtures("release_build")


def one_line(code: int, err: str) -> None:
    assert code == 2 and err.startswith("chocosim: error: ") and err.count("\n") == 1, err


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "r"
    api.run("fabryka", ["random", "random"], 40, out, jobs=1, chunk_size=20)
    return out


# ---- files and numbers ----

def test_a_rules_file_that_is_not_utf8_is_one_line(tmp_path, capsys):
    rules = tmp_path / "latin1.toml"
    rules.write_bytes("# règle\nrounds = 3\n".encode("latin-1"))
    code, _, err = cli(capsys, "play", "fabryka", "--seats", "random,random", "--rules", str(rules))
    one_line(code, err)
    assert err == f"chocosim: error: rules file {rules}: not UTF-8 text (byte 0xe8 at offset 3); save it as UTF-8\n"


def test_a_game_index_beyond_64_bits_is_one_line(capsys):
    code, _, err = cli(capsys, "play", "fabryka", "--seats", "random,random", "--index", str(2**64))
    one_line(code, err)
    assert "--index" in err and str(2**64) in err


def test_a_weight_of_400_digits_in_a_file_is_one_line(tmp_path, capsys):
    weights = tmp_path / "w.json"
    weights.write_text('{"wait": 1' + "9" * 400 + "}")
    code, _, err = cli(capsys, "play", "fabryka", "--seats", f"heuristic(weights={weights}),random")
    one_line(code, err)
    assert f"weights file {weights}: weight wait = 19999999999999999999...(401 characters) is not a finite number" in err


# ---- params ----

def alleycat_rules_with_a_name_twice(path: Path) -> Path:
    """A house rule renaming deck B's first part to deck A's first: two parts, one name."""
    deck_b = [{"name": p.name, "coal": p.coal, "does": list(p.does)}
              for p in get_game("alleycat").params(players=2).parts.deck_b]
    deck_b[0]["name"] = "A1"
    rows = ",\n".join("{ name = %s, coal = %d, does = %s }" % (json.dumps(p["name"]), p["coal"], json.dumps(p["does"]))
                      for p in deck_b)
    path.write_text(f"[parts]\ndeck_b = [\n{rows}\n]\n")
    return path


def test_two_parts_of_one_name_are_refused_by_play_and_run_alike(tmp_path, capsys):
    rules = alleycat_rules_with_a_name_twice(tmp_path / "dup.toml")
    message = ("chocosim: error: invalid params: part name 'A1' is given twice (in parts.deck_b and in "
               "parts.deck_a); every part needs a name of its own\n")
    code, _, err = cli(capsys, "play", "alleycat", "--seats", "random,random", "--rules", str(rules))
    assert (code, err) == (2, message)
    code, _, err = cli(capsys, "run", "alleycat", "--seats", "random,random", "--rules", str(rules), "--games", "4",
                       "--out", str(tmp_path / "r"), "--jobs", "1", "--quiet")
    assert (code, err) == (2, message)
    assert not (tmp_path / "r").exists()


# ---- bots ----

BOTS = textwrap.dedent('''
    from simcore.strategy import PythonStrategy

    class Broken(PythonStrategy):
        def __init__(self, depth=1):
            super().__init__()
            raise RuntimeError("cannot load my model")

        def decide(self, observation, legal, rng):
            return legal[0]
''')


@pytest.mark.parametrize("command", ["play", "run"])
def test_a_bot_whose_init_raises_is_one_line(tmp_path, capsys, monkeypatch, command):
    (tmp_path / "my_broken_bots.py").write_text(BOTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = [command, "fabryka", "--seats", "random,my_broken_bots:Broken(depth=2)"]
    if command == "run":
        argv += ["--games", "4", "--out", str(tmp_path / "r"), "--jobs", "1", "--quiet"]
    code, _, err = cli(capsys, *argv)
    assert (code, err) == (2, "chocosim: error: strategy 'my_broken_bots:Broken(depth=2)': Broken(depth=2) raised "
                              "RuntimeError: cannot load my model\n")
    assert not (tmp_path / "r").exists()
    sys.modules.pop("my_broken_bots", None)


# ---- tampered manifests ----

TAMPERED = {
    "a list": ([], "manifest.json is not a JSON object but []"),
    "null": (None, "manifest.json is not a JSON object but null"),
    "games as text": ({"n_games": "40"}, 'manifest.json garbles n_games ("40": expected a whole number of games)'),
    "negative games": ({"n_games": -1}, "manifest.json garbles n_games (-1: expected a whole number of games)"),
    "segments as text": ({"segments": "all"}, 'manifest.json garbles segments ("all": expected a list'),
    "segments garbled": ({"segments": [[0, "40"]]}, "manifest.json garbles segments (segment [0, '40'] is not"),
    "game as a number": ({"game": 5}, "manifest.json garbles game (5: expected a game name)"),
    "strategies as names": ({"strategies": ["random"]}, 'manifest.json garbles strategies ("random": expected'),
    "empty": ("empty", "manifest.json lacks game, n_games"),
}


@pytest.mark.parametrize("reader", ["summary", "report", "compare"])
@pytest.mark.parametrize("tamper", TAMPERED, ids=list(TAMPERED))
def test_a_tampered_manifest_is_one_line_for_every_reader(run_dir, tmp_path, capsys, reader, tamper):
    change, message = TAMPERED[tamper]
    bad = tmp_path / "bad"
    shutil.copytree(run_dir, bad)
    manifest = json.loads((bad / "manifest.json").read_text())
    if isinstance(change, dict):
        manifest.update(change)
    else:
        manifest = {} if change == "empty" else change
    (bad / "manifest.json").write_text(json.dumps(manifest))
    argv = {"summary": ["summary", str(bad)],
            "report": ["report", str(bad), "-o", str(tmp_path / "r.html")],
            "compare": ["compare", str(bad), str(run_dir), "-o", str(tmp_path / "c.html")]}[reader]
    code, out, err = cli(capsys, *argv)
    one_line(code, err)
    assert err.startswith(f"chocosim: error: run directory {bad}: {message}"), err
    assert out == "" and not (tmp_path / "r.html").exists() and not (tmp_path / "c.html").exists()


# ---- the Python API ----

@pytest.mark.parametrize("call, message", [
    (lambda o: api.run("fabryka", 5, 10, o), "api.run: seats = 5 (int); seats takes Sequence[str] | str"),
    (lambda o: api.run("fabryka", ["random", "random"], "10", o), "api.run: games = '10' (str); games takes int"),
    (lambda o: api.run("fabryka", ["random", "random"], 10.5, o), "api.run: games = 10.5 (float); games takes int"),
    (lambda o: api.run("fabryka", ["random", "random"], 10, 5), "api.run: out = 5 (int); out takes Path | str"),
    (lambda o: api.run("fabryka", ["random", "random"], 10, o, sets=["rounds=3"]),
     "api.run: sets = ['rounds=3'] (list); sets takes dict[str, Any] | None"),
    (lambda o: api.run("fabryka", ["random", "random"], 10, o, jobs="2"), "api.run: jobs = '2' (str); jobs takes int | None"),
    (lambda o: api.run("fabryka", ["random", "random"], 10, o, job=2), "api.run: got an unexpected keyword argument 'job'"),
    (lambda o: api.results(5), "api.results: run_dir = 5 (int); run_dir takes Path | str"),
    (lambda o: api.compare(o, o), "api.compare: variants = "),
    (lambda o: api.report(o, "r.html"), "api.report: run_dirs = "),
    (lambda o: api.sweep("fabryka", [["random", "random"]], ["rounds"], 10, o),
     "api.sweep: vary = ['rounds'] (list); vary takes dict[str, Sequence[Any]]"),
    (lambda o: api.balance("fabryka", players=2), "api.balance: players = 2 (int); players takes Sequence[int] | None"),
])
def test_the_api_called_with_a_wrong_type_names_the_argument(tmp_path, call, message):
    with pytest.raises(ArgumentError) as e:
        call(str(tmp_path / "out"))
    assert str(e.value).startswith(message) and isinstance(e.value, TypeError) and isinstance(e.value, UserError)
    assert list(tmp_path.iterdir()) == []


def test_the_api_takes_numpy_integers_and_ranges(tmp_path):
    import numpy as np

    assert api.run("fabryka", ("random", "random"), np.int64(4), tmp_path / "r", jobs=1).played == 4


# ---- nothing written before a refusal ----

@pytest.mark.parametrize("extra, message", [
    (["--seats", "random,nobot"], "unknown strategy 'nobot' for fabryka"),
    (["--seats", "random,heuristic(nope=1)"], "unknown weight 'nope'"),
    (["--precision", "inf"], "precision = inf: must be a positive, finite number of points"),
])
def test_a_sweep_refused_writes_no_sweep_directory(tmp_path, capsys, extra, message):
    where = tmp_path / "sweep"
    code, _, err = cli(capsys, "sweep", "fabryka", "--seats", "random,random", *extra, "--vary", "rounds=3,4",
                       "--games", "4", "--jobs", "1", "--quiet", "--dir", str(where), "-o", str(tmp_path / "s.html"))
    one_line(code, err)
    assert message in err and not where.exists()


@pytest.mark.parametrize("argv, message", [
    (["--vary", "rounds=2..5", "--goal", "timeout ends 0..10%"], "--goal 'timeout ends 0..10%': the game ends by"),
    (["--weights", "nope"], "unknown weight 'nope' of heuristic"),
    (["--players", "x"], "--players 'x': expected table sizes"),
    (["--players", "3"], "fabryka is played by 2 players, not 3"),
])
def test_a_tune_refused_leaves_no_tuning_directory(tmp_path, capsys, argv, message):
    out = tmp_path / "tune"
    code, _, err = cli(capsys, "tune", "fabryka", *argv, "--trials", "1", "--games", "4", "--jobs", "1", "--quiet",
                       "--out", str(out))
    one_line(code, err)
    assert message in err and not out.exists()


# ---- paths and interruptions ----

def test_a_run_directory_with_brackets_in_its_path_reads(tmp_path, capsys):
    out = tmp_path / "runs[x]" / "r"
    api.run("fabryka", ["random", "random"], 20, out, jobs=1)
    assert cli(capsys, "summary", str(out))[0] == 0
    assert cli(capsys, "compare", str(out), str(out), "-o", str(tmp_path / "c.html"))[0] == 0


def test_a_report_of_a_run_directory_with_brackets_in_its_path(tmp_path, capsys):
    out = tmp_path / "runs[x]" / "r"
    api.run("fabryka", ["random", "random"], 20, out, jobs=1)
    assert cli(capsys, "report", str(out), "-o", str(tmp_path / "r.html"))[0] == 0


@pytest.mark.parametrize("command", ["compare", "sweep", "skill", "balance"])
def test_ctrl_c_says_how_to_resume(tmp_path, capsys, monkeypatch, command):
    import simcore.runner

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    for module in ("analysis.api", "analysis.experiments.sweep", "analysis.experiments.skill", "analysis.experiments.budget"):
        __import__(module)
        for name, value in list(vars(sys.modules[module]).items()):
            if value is simcore.runner.run:  # the runner as each experiment imported it
                monkeypatch.setattr(sys.modules[module], name, interrupted)
    small = ["--games", "4", "--jobs", "1", "--quiet", "-o", str(tmp_path / "r.html")]
    argv = {"compare": ["compare", "fabryka", "--seats", "random,random", "--variant", "rounds=3",
                        "--runs", str(tmp_path)],
            "sweep": ["sweep", "fabryka", "--seats", "random,random", "--vary", "rounds=3,4", "--dir", str(tmp_path / "s")],
            "skill": ["skill", "fabryka", "--ladder", "random,greedy", "--runs", str(tmp_path)],
            "balance": ["balance", "fabryka", "--ladder", "random,greedy", "--minutes", "0", "--runs", str(tmp_path)],
            }[command]
    code, _, err = cli(capsys, *argv, *small)
    assert (code, err) == (130, "chocosim: interrupted; the finished runs are kept: re-run the same command to resume\n")


# ---- the last bad inputs, and every list option ----

TUNE_RULES = ["tune", "fabryka", "--seats", "random,random", "--trials", "1", "--games", "4", "--jobs", "1", "--quiet"]
TUNE_BOT = ["tune", "fabryka", "--trials", "1", "--games", "4", "--jobs", "1", "--quiet"]


@pytest.mark.parametrize("argv, message", [
    # The cases.
    ([*TUNE_RULES, "--vary", "rounds=3..5", "--goal", "position balance within . points"],
     "--goal 'position balance within . points': '.' is not a number"),
    ([*TUNE_RULES, "--vary", "rounds=3..5", "--goal", "game length 1.2.3..4 turns"],
     "--goal 'game length 1.2.3..4 turns': '1.2.3' is not a number"),
    ([*TUNE_BOT, "--players", ""], "--players '': an entry is empty; expected table sizes, comma-separated, e.g. 2,4"),
    ([*TUNE_BOT, "--players", "2,2"], "--players '2,2': 2 is listed twice; expected table sizes, comma-separated, "
                                      "e.g. 2,4, each once"),
    ([*TUNE_RULES, "--vary", "rounds=3..5", "--vary", "rounds=4..6", "--goal", "game length 20..30 turns"],
     "--vary is given twice for the param 'rounds' ('rounds=3..5' and 'rounds=4..6'); give each param once"),
    ([*TUNE_RULES, "--vary", "rounds=3..5", "--goal", "scoring ends 50..150%"],
     "--goal 'scoring ends 50..150%': a share of games is 0..100%, not up to 150%"),
    (["skill", "fabryka", "--components", "pawns", "--games", "4"],
     "--components 'pawns': goes with --restricted BOT"),
    # Our own: every list option, empty, twice or repeated.
    ([*TUNE_BOT, "--players", "2,02"], "--players is given twice for the table size '2'"),
    ([*TUNE_BOT, "--weights", "wait,wait"], "--weights 'wait,wait': wait is listed twice"),
    ([*TUNE_BOT, "--weights", ""], "--weights '': an entry is empty"),
    ([*TUNE_BOT, "--against", "random,,greedy"], "--against 'random,,greedy': an entry is empty"),
    ([*TUNE_RULES, "--vary", "rounds=3..5", "--goal", "game length 20..30 turns", "--goal", "Game length  20..30 turns"],
     "--goal is given twice for the goal 'game length 20..30 turns'"),
    (["run", "fabryka", "--seats", "random,random", "--set", "rounds=3", "--set", "rounds = 4", "--games", "2"],
     "--set is given twice for the param 'rounds' ('rounds=3' and 'rounds = 4'); give each param once"),
    (["play", "fabryka", "--seats", "random,(greedy"], "--seats 'random,(greedy': unbalanced parentheses"),
    (["play", "fabryka", "--seats", "random)(,greedy"], "--seats 'random)(,greedy': unbalanced parentheses"),
    (["skill", "fabryka", "--ladder", "random,,greedy", "--games", "4"], "--ladder 'random,,greedy': an entry is empty"),
    (["skill", "fabryka", "--restricted", "greedy", "--components", "pawns,pawns", "--games", "4"],
     "--components 'pawns,pawns': pawns is listed twice"),
    (["balance", "fabryka", "--ladder", "", "--games", "4"], "--ladder '': an entry is empty"),
    (["balance", "fabryka", "--ladder", "random,random", "--games", "4"], "--ladder 'random,random': random is listed twice"),
    (["balance", "enemy_chocolatier", "--players", "3", "--players", "3", "--games", "4"],
     "--players is given twice for the table size '3'"),
    (["sweep", "fabryka", "--seats", "random,random", "--seats", "random, random", "--vary", "rounds=3,4", "--games", "4"],
     "--seats is given twice for the lineup 'random,random' ('random,random' and 'random, random')"),
    (["sweep", "fabryka", "--seats", "random,random", "--vary", "rounds=3,4", "--vary", "rounds=5,6", "--games", "4"],
     "--vary is given twice for the param 'rounds'"),
    (["sweep", "fabryka", "--seats", "random,random", "--vary", "rounds=3,,4", "--games", "4"],
     "--vary 'rounds=3,,4': an entry is empty"),
    (["sweep", "fabryka", "--seats", "random,random", "--vary", "rounds=3,4,3", "--games", "4"],
     "--vary rounds: a value is listed twice"),
    (["compare", "fabryka", "--seats", "random,random", "--variant", "rounds=3", "--variant", "rounds=3", "--games", "4"],
     "--variant is given twice for the house rule 'rounds=3' ('rounds=3'); give each house rule once"),
    (["compare", "fabryka", "--seats", "random,random", "--variant", "rounds=3;rounds=4", "--games", "4"],
     "--variant 'rounds=3;rounds=4' is given twice for the param 'rounds' ('rounds=3' and 'rounds=4')"),
    (["compare", "fabryka", "--seats", "random,random", "--variant", "rounds=3;;set_points=4", "--games", "4"],
     "--variant 'rounds=3;;set_points=4': an entry is empty"),
])
def test_a_bad_list_or_goal_is_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    outputs = ["--out", str(tmp_path / "out")] if argv[0] in ("tune", "run") else \
        [] if argv[0] == "play" else ["-o", str(tmp_path / "r.html"), *(["--dir", str(tmp_path / "s")]
                                                                      if argv[0] == "sweep" else ["--runs", str(tmp_path / "runs")])]
    code, _, err = cli(capsys, *argv, *outputs)
    one_line(code, err)
    assert message in err
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_weights_file_is_its_one_error_line_without_a_warning_before_it(tmp_path, capsys):
    flat = tmp_path / "flat.json"  # validated nowhere: a warning, but only for a lineup that plays
    flat.write_text(json.dumps({"wait": 1}))
    seats = f"heuristic(weights={flat}),heuristic(weights={tmp_path / 'nope.json'})"
    code, _, err = cli(capsys, "run", "fabryka", "--seats", seats, "--games", "2", "--out", str(tmp_path / "r"))
    one_line(code, err)
    assert err == f"chocosim: error: weights file {tmp_path / 'nope.json'}: No such file or directory\n"
    code, _, err = cli(capsys, "play", "fabryka", "--seats", f"heuristic(weights={flat}),random(weights={flat})")
    one_line(code, err)  # a file of weights its bot does not have
    assert "RandomStrategy: unknown weight 'wait'" in err
    code, _, err = cli(capsys, "play", "fabryka", "--seats", f"heuristic(weights={flat}),random")
    assert code == 0 and err.startswith(f"chocosim: warning: heuristic(weights={flat}): its weights are validated")
