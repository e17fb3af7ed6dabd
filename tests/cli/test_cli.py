"""The `chocosim` command line: listings, runs, and one line + exit code 2 for every
kind of bad input, with nothing on disk lost."""
from __future__ import annotations

import json
import re

import polars as pl
import pytest

import analysis.api
import analysis.cli
import strategies
import strategies.mcts as mcts
from analysis.summary import summarize
from simcore.errors import UserError
from simcore.registry import get_game
from simcore.parts import part_name, read_part
from helpers import cli, snapshot

pytestmark = pytest.mark.usefixtures("release_build")


# ---- listings ----

def test_help(capsys):
    code, out, _ = cli(capsys, "--help")
    assert code == 0
    for command in ("games", "rules", "strategies", "play", "run", "summary"):
        assert command in out
    code, out, _ = cli(capsys, "run", "--help")
    assert code == 0 and "--seating" in out and "--chunk-size" in out


def test_games(capsys):
    code, out, _ = cli(capsys, "games")
    assert code == 0
    assert "fabryka" in out and "Fabryka Czekolady" in out


def test_rules_lists_every_param_with_source(capsys):
    code, out, _ = cli(capsys, "rules", "fabryka")
    assert code == 0
    for info in get_game("fabryka").defaults():
        assert info.name in out
    assert "rulebook" in out and "was" not in out


def test_rules_marks_house_rule_changes(capsys, tmp_path):
    house = tmp_path / "house.toml"
    house.write_text("rounds = 3\n[deck]\nalmonds = 9\n")
    code, out, _ = cli(capsys, "rules", "fabryka", "--rules", str(house), "--set", "deck.almonds=10")
    assert code == 0
    assert "10 (was 8)" in out  # --set wins over the file
    assert "3 (was 4)" in out
    assert out.count("(was") == 2


def test_strategies_lists_every_available_bot_with_all(capsys):
    code, out, _ = cli(capsys, "strategies", "fabryka", "--all")
    assert code == 0
    for name, cls in strategies.available("fabryka").items():
        assert name in out
        for weight in cls.WEIGHTS:
            assert f"{weight}=" in out


def test_strategies_hides_expert_settings_and_superseded_bots_unless_all(capsys, monkeypatch):
    # The search bot declares every setting but its budget as one for experts; the
    # open-loop search declares itself superseded by mcts.
    monkeypatch.setattr(analysis.cli.console, "width", 250)  # a row a bot, unwrapped
    code, out, _ = cli(capsys, "strategies", "fabryka")
    assert code == 0
    # Fabryka's search budget, set by its doubling curve at 2 players; every other weight hidden.
    hidden = len(mcts.MctsStrategy.EXPERT)
    assert hidden == len(mcts.MctsStrategy.WEIGHTS) - 1
    assert "mcts_openloop" not in out and f"iterations=2752 (2 players) (+{hidden} for experts)" in out
    assert "peek=" not in out and "tuned=" not in out
    assert "collect_threshold=4" in out  # a heuristic's weights are the designer's
    assert "chocosim strategies fabryka --all" in out
    code, out, _ = cli(capsys, "strategies", "fabryka", "--all")
    assert "mcts_openloop" in out and "superseded by mcts" in out and "peek=0" in out


def test_strategies_shows_the_search_budget_of_each_table_size(capsys, monkeypatch):
    monkeypatch.setattr(analysis.cli.console, "width", 250)
    monkeypatch.setitem(mcts.GAME_DEFAULTS, "manfredini", {**mcts.GAME_DEFAULTS["manfredini"],
                                                           "iterations": {2: 40, 3: 20, 4: 10}})
    code, out, _ = cli(capsys, "strategies", "manfredini", "--all")
    assert code == 0
    assert "iterations=40 (2 players), 20 (3 players), 10 (4 players)" in out
    # The game's own defaults, not the bot's generic ones.
    assert f"scale={mcts.GAME_DEFAULTS['manfredini']['scale']:g}" in out


@pytest.mark.parametrize("game", ["fabryka", "enemy_chocolatier"])
def test_every_bots_expert_settings_are_its_weights_and_its_successor_a_bot(game):
    bots = strategies.available(game)
    for name, cls in bots.items():
        assert set(strategies.expert_weights(cls)) <= set(cls.WEIGHTS), name
        assert strategies.superseded_by(cls) in (None, *bots), name


def test_split_seats_keeps_commas_inside_a_spec():
    assert strategies.split_specs("heuristic(a=1, b=2), random") == ["heuristic(a=1, b=2)", "random"]
    assert strategies.split_specs("random") == ["random"]
    for bad in ("random,", "random,(", "random)"):
        with pytest.raises(UserError):
            strategies.split_specs(bad)


# ---- run ----

RUN = ("run", "fabryka", "--seats", "random,random", "--games", "40", "--quiet")


def test_run_writes_the_directory_prints_the_summary_and_resumes(capsys, tmp_path):
    out_dir = tmp_path / "fab"
    code, out, err = cli(capsys, *RUN, "--out", str(out_dir), "--seed", "3", "--jobs", "2",
                         "--chunk-size", "10")
    assert code == 0 and err == ""
    assert "played 40 games" in out
    for heading in ("by seat", "by strategy", "shared victories", "end reasons"):
        assert heading in out
    assert len(list(out_dir.glob("part-*.arrow"))) == 4
    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert (manifest["seed"], manifest["n_games"], manifest["seating"]) == (3, 40, "rotate")

    (out_dir / part_name(2)).unlink()
    code, out, _ = cli(capsys, *RUN, "--out", str(out_dir), "--seed", "3", "--backend", "threads")
    assert code == 0
    assert "played 10 games" in out and "30 were already done" in out

    code, out, _ = cli(capsys, "summary", str(out_dir))
    assert code == 0 and "games 40" in out and "incomplete" not in out


def test_help_texts_keep_their_brackets_and_wrap_whole_words(capsys):
    code, out, _ = cli(capsys, "run", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert "[default: every core" in text and "needs chocosim[dask], --scheduler" in text
    code, out, _ = cli(capsys, "rules", "--help")
    assert "With --rules or --set, the values" in " ".join(out.split())


def test_summary_by_turn_position_and_as_json(capsys, tmp_path):
    out_dir = tmp_path / "fab"
    assert cli(capsys, *RUN, "--out", str(out_dir))[0] == 0
    code, out, _ = cli(capsys, "summary", str(out_dir))
    assert code == 0 and "by turn position" in out and "acts first" not in out
    assert "1st player" in out and "2nd player" in out and "0 (1st player)" not in out
    code, out, err = cli(capsys, "summary", str(out_dir), "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    s = summarize(out_dir)
    assert data["games"] == 40 and data["complete"] is True
    assert data["by_seat"] == s.by_seat.to_dicts()
    assert [r["position"] for r in data["by_position"]] == [0, 1]
    assert sum(r["games"] for r in data["by_position"]) == 80
    assert data["shared_victories"]["games"] == 40
    assert data["manifest"]["run_id"] == s.manifest["run_id"]


def test_a_run_on_the_checked_build_says_so_once(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(analysis.cli, "CHECKED_BUILD", True)
    code, _, err = cli(capsys, *RUN, "--out", str(tmp_path / "r"), all_stderr=True)
    assert code == 0 and err == ("chocosim: warning: this is the checked build, several times slower; "
                                 "`pip install .` reinstalls the release build\n")
    code, _, err = cli(capsys, "summary", str(tmp_path / "r"), all_stderr=True)
    assert code == 0 and err == ""
    monkeypatch.setattr(analysis.cli, "CHECKED_BUILD", False)
    assert cli(capsys, *RUN, "--out", str(tmp_path / "r"), all_stderr=True)[2] == ""


def test_user_text_is_printed_as_is(capsys, tmp_path):
    out_dir = tmp_path / "[bold]x[/bold]"
    code, out, _ = cli(capsys, *RUN, "--out", str(out_dir))
    assert code == 0 and f"into {out_dir}" in out


def test_run_applies_house_rules(capsys, tmp_path):
    code, _, _ = cli(capsys, *RUN, "--out", str(tmp_path / "r"), "--set", "deck.almonds=9",
                     "--seating", "fixed")
    assert code == 0
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["params"]["deck"]["almonds"] == 9
    assert manifest["seating"] == "fixed"


def test_an_interrupted_run_says_how_to_resume(capsys, tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(analysis.api, "run_games", interrupted)
    code, out, err = cli(capsys, *RUN, "--out", str(tmp_path / "r"))
    assert code == 130 and out == ""
    assert err == (f"chocosim: interrupted; the finished parts are kept in {tmp_path / 'r'}: "
                   "run the same command again to resume\n")


# ---- bad input: one line on stderr, exit code 2, nothing lost ----

BAD_TOML = "[deck\nalmonds = 9\n"


@pytest.mark.parametrize("argv, needle", [
    (("nope",), "No such command 'nope'"),
    (("rules", "nosuch"), "unknown game 'nosuch'; known games: "),
    (("strategies", "nosuch"), "unknown game 'nosuch'"),
    (("run", "fabryka", "--seats", "random,nosuch", "--games", "5", "--out", "{tmp}/r"),
     "unknown strategy 'nosuch' for fabryka; available: "),
    (("play", "fabryka", "--seats", "random,no.such:Bot"), "strategy 'no.such:Bot': cannot import"),
    (("rules", "fabryka", "--set", "deck.almond=3"), "unknown param 'deck.almond' (did you mean deck.almonds?)"),
    (("rules", "fabryka", "--set", "almonds=3"),
     "unknown param 'almonds' (did you mean deck.almonds, majority.almonds?)"),
    (("run", "fabryka", "--seats", "random,heuristc", "--games", "5", "--out", "{tmp}/r"),
     "unknown strategy 'heuristc' for fabryka (did you mean heuristic?); available: "),
    (("rules", "fabryka", "--set", "deck.almonds=abc"), "invalid param deck.almonds = 'abc'"),
    (("rules", "fabryka", "--set", "rounds=0"),
     "invalid param rounds = 0: Input should be greater than or equal to 1"),
    (("rules", "fabryka", "--set", "rounds"), "--set 'rounds': expected key=value"),
    (("rules", "fabryka", "--rules", "{tmp}/bad.toml"), "malformed TOML"),
    (("rules", "fabryka", "--rules", "{tmp}/missing.toml"), "missing.toml: No such file"),
    (("play", "fabryka", "--seats", "random,random,random"), "fabryka is played by 2 players, not 3"),
    (("play", "fabryka", "--seats", "random,,random"), "--seats 'random,,random'"),
    (("run", "fabryka", "--seats", "random,random", "--games", "0", "--out", "{tmp}/r"),
     "'--games': Input should be greater than or equal to 1 (got '0')"),
    (("run", "fabryka", "--seats", "random,random", "--games", "many", "--out", "{tmp}/r"),
     "'--games': Input should be a valid integer"),
    (("run", "fabryka", "--seats", "random,random", "--games", "5", "--seating", "diagonal",
      "--out", "{tmp}/r"), "'diagonal' is not one of 'rotate', 'fixed', 'random'"),
    (("run", "fabryka", "--seats", "random,random", "--games", "5", "--backend", "gpu",
      "--out", "{tmp}/r"), "'gpu' is not one of 'auto', 'processes', 'threads', 'dask'"),
    (("run", "fabryka", "--seats", "random,random", "--games", "5", "--scheduler", "tcp://x:1",
      "--out", "{tmp}/r"), "scheduler address goes with backend 'dask' and only with it"),
    (("play", "fabryka", "--seats", "random,random", "--seed", "-1"), "'--seed'"),
    (("run", "fabryka", "--seats", "random,random", "--games", "5"), "Missing option '--out'"),
    (("games", "--nope"), "No such option: --nope"),
    (("summary", "{tmp}"), "is not a run directory (no manifest.json)"),
    (("run", "fabryka", "--seats", "random,random", "--games", "6", "--out", "{tmp}/bad.toml/r"),
     "cannot create the run directory"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, argv, needle):
    (tmp_path / "bad.toml").write_text(BAD_TOML)
    code, out, err = cli(capsys, *(a.format(tmp=tmp_path) for a in argv))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("chocosim: error: ")
    assert needle in err
    assert out == ""
    assert not (tmp_path / "r").exists()


def test_a_foreign_run_directory_is_refused_and_left_intact(capsys, tmp_path):
    out_dir = tmp_path / "fab"
    assert cli(capsys, *RUN, "--out", str(out_dir), "--seed", "1")[0] == 0
    before = snapshot(out_dir)
    code, out, err = cli(capsys, *RUN, "--out", str(out_dir), "--seed", "2")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "holds a different run (seed is 1 there, 2 here)" in err
    assert snapshot(out_dir) == before


def test_a_run_of_many_differences_is_refused_in_a_short_line(capsys, tmp_path):
    """Three differences are named and the rest counted; a long value is cut."""
    out_dir = tmp_path / "fab"
    assert cli(capsys, *RUN, "--out", str(out_dir))[0] == 0
    changes = [f"--set={k}" for k in ("deck.biscuits=6", "deck.blueberries=7", "deck.strawberries=8", "deck.almonds=9")]
    code, _, err = cli(capsys, *RUN, "--out", str(out_dir), "--seed", "5", *changes)
    assert code == 2 and err.count("\n") == 1
    assert "; and 2 more)" in err and err.count(" there, ") == 3 and len(err) < 400


def test_a_directory_that_is_not_a_run_is_refused(capsys, tmp_path):
    (tmp_path / "notes.txt").write_text("keep me")
    code, _, err = cli(capsys, *RUN, "--out", str(tmp_path))
    assert code == 2 and "not empty and has no manifest.json" in err
    assert snapshot(tmp_path) == {"notes.txt": b"keep me"}


def test_unreadable_results_are_one_line(capsys, tmp_path):
    out_dir = tmp_path / "fab"
    assert cli(capsys, *RUN, "--out", str(out_dir))[0] == 0
    (out_dir / part_name(0)).write_bytes(b"garbage")
    code, out, err = cli(capsys, "summary", str(out_dir))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"results part {out_dir / part_name(0)} is unreadable" in err


# ---- play ----

def test_play_json_is_game_0_of_a_fixed_run(capsys, tmp_path):
    seats = "random,random"
    code, out, _ = cli(capsys, "play", "fabryka", "--seats", seats, "--seed", "7", "--json")
    assert code == 0
    trace = json.loads(out)
    assert trace["seats"] == ["random", "random"] and trace["seed"] == 7

    code, _, _ = cli(capsys, "run", "fabryka", "--seats", seats, "--seed", "7", "--seating", "fixed",
                     "--games", "2", "--out", str(tmp_path / "r"), "--quiet")
    assert code == 0
    game0 = read_part(tmp_path / "r" / part_name(0)).filter(pl.col("game") == 0).sort("seat")
    assert game0["score"].to_list() == trace["scores"]
    assert game0["rank"].to_list() == trace["ranks"]
    assert game0["seed"][0] == trace["game_seed"]
    assert game0["turns"][0] == len(trace["steps"])


def test_play_prints_a_readable_trace(capsys):
    code, out, _ = cli(capsys, "play", "fabryka", "--seats", "random,random", "--seed", "7")
    assert code == 0
    trace = json.loads(cli(capsys, "play", "fabryka", "--seats", "random,random", "--seed", "7",
                           "--json")[1])
    assert out.splitlines()[1:3] == ["  seat 0: random", "  seat 1: random"]
    assert f"end: {trace['end_reason']}" in out
    for seat, (score, rank) in enumerate(zip(trace["scores"], trace["ranks"], strict=True)):
        assert f"seat {seat} (random): {score} points, rank {rank}" in out


def test_the_summary_at_80_columns_keeps_intervals_and_specs_whole(capsys, tmp_path, monkeypatch):
    spec = "heuristic(weights=tuned)"
    out_dir = tmp_path / "r"
    assert cli(capsys, "run", "fabryka", "--seats", f"{spec},random", "--games", "40", "--quiet",
               "--out", str(out_dir))[0] == 0
    monkeypatch.setattr(analysis.cli.console, "_width", 80)
    code, out, _ = cli(capsys, "summary", str(out_dir))
    assert code == 0 and max(map(len, out.splitlines())) <= 80
    # Every interval on one line; the spec folded, never cut.
    assert all(re.search(r"\d%  \[[\d.]+, [\d.]+\]", line) for line in out.splitlines() if "%  [" in line)
    assert "…" not in out
    cells = "".join(line.split("│")[1].strip() for line in out.splitlines()
                    if line.startswith("│") and ("heuristic" in line or line.split("│")[2].strip() == ""))
    assert spec in cells
