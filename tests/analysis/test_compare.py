"""House-rule comparisons: known answers (an identical variant finds nothing, Fabryka
with three rounds is shorter), the pairing's gain and its coverage by simulation on
synthetic data, hand-built games, and bad input (one line, exit 2, nothing lost)."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from analysis import api, stats
from analysis.experiments.compare import _lead_changes, compare_runs, game_columns
from analysis.render.compare import verdicts
from analysis.rundir import open_run
from analysis.stats import Moments
from simcore.errors import UserError
from simcore.parts import read_part
from helpers import cli

SEATS = ["heuristic", "random"]
GAMES = 4000


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    api.run("fabryka", SEATS, GAMES, root / "base", seed=5)
    api.run("fabryka", SEATS, GAMES, root / "short", seed=5, sets={"rounds": 3})
    api.run("fabryka", SEATS, GAMES, root / "other_seed", seed=6)
    shutil.copytree(root / "base", root / "same")
    return root




def test_an_identical_variant_flags_nothing_and_every_interval_covers_zero(runs):
    c, = compare_runs(runs / "base", [runs / "same"])
    assert c.paired and c.games == GAMES and c.label == "the same rules"
    assert c.rows and not any(r.significant for r in c.rows)
    assert all(r.change.low <= 0 <= r.change.high for r in c.rows)
    assert verdicts(c)[0].startswith("the same rules: no significant change in any of")
    assert any("leaves seat balance unchanged within ±1.0 percentage points" in v for v in verdicts(c))


def test_a_null_variant_on_other_seeds_flags_nothing_unpaired(runs):
    c, = compare_runs(runs / "base", [runs / "other_seed"], paired=False)
    assert not c.paired and not any(r.significant for r in c.rows)


def test_three_rounds_shorten_the_game_with_the_right_sign(runs):
    c, = compare_runs(runs / "base", [runs / "short"])
    assert c.label == "rounds = 3"
    turns = next(r for r in c.rows if r.metric.key == "turns")
    assert turns.significant and turns.change.high < 0
    # A round is hand_size + 1 = 6 turns per player, 12 in all, fewer when a game
    # ends early on white chocolate.
    assert -12 < turns.change.value < -9
    assert verdicts(c)[0].startswith("rounds = 3 shortens the game by")


def test_the_paired_interval_is_narrower_than_the_unpaired_one_on_correlated_runs(runs):
    c, = compare_runs(runs / "base", [runs / "short"])
    for key in ("turns", "score", "pos0"):
        r = next(r for r in c.rows if r.metric.key == key)
        assert r.change.se < r.change.se_unpaired and r.change.games_saved > 1.2
    unpaired, = compare_runs(runs / "base", [runs / "short"], paired=False)
    t_p = next(r for r in c.rows if r.metric.key == "turns")
    t_u = next(r for r in unpaired.rows if r.metric.key == "turns")
    assert t_u.change.value == pytest.approx(t_p.change.value)
    assert t_u.change.se == pytest.approx(t_p.change.se_unpaired, rel=1e-6)


def _mean(x):
    return x[0]


def _sd(x):
    return np.sqrt(x[1] - x[0] ** 2)


@pytest.mark.parametrize("h, make, truth", [
    # a mean: the variant shifts every game by 0.5, with noise of its own
    (_mean, lambda b, e: b + 0.5 + 0.5 * e, 0.5),
    # a spread: the variant stretches the scores, SD 1 -> sqrt(1.5^2 + 0.3^2)
    (_sd, lambda b, e: 1.5 * b + 0.3 * e, np.sqrt(1.5 ** 2 + 0.3 ** 2) - 1),
], ids=["mean", "spread"])
def test_paired_delta_covers_a_planted_difference_at_the_stated_rate(h, make, truth):
    rng = np.random.default_rng(7)
    reps, n, covered, narrower = 1000, 1000, 0, 0
    for _ in range(reps):
        base = rng.standard_normal(n)
        variant = make(base, rng.standard_normal(n))
        m = Moments(4)
        m.add(np.column_stack([base, base ** 2, variant, variant ** 2]))
        e = stats.paired_delta(h, m)
        covered += e.low <= truth <= e.high
        narrower += e.se < e.se_unpaired
    # 95% stated: within 3 standard errors of a binomial proportion over 1000 runs.
    assert abs(covered / reps - 0.95) < 3 * np.sqrt(0.95 * 0.05 / reps)
    assert narrower == reps


def test_lead_changes_of_hand_built_games():
    # Three games of two seats, standings after two rounds, then the result:
    # game 0: seat 0 leads, seat 1 leads, seat 1 wins      -> 1 change
    # game 1: tie, seat 0 leads, seat 1 wins               -> 1 change
    # game 2: seat 1 leads, seat 0 leads, shared victory   -> 1 change (a tie changes nothing)
    r1 = np.array([[5, 3], [4, 4], [1, 2]])
    r2 = np.array([[5, 9], [7, 4], [6, 2]])
    win = np.array([[0, 1], [0, 1], [0.5, 0.5]])
    assert _lead_changes(win, [r1, r2]).tolist() == [1, 1, 1]
    assert _lead_changes(np.array([[1.0, 0.0]]), [np.array([[0, 3]]), np.array([[4, 3]])]).tolist() == [1]


def test_game_columns_of_hand_built_games(runs):
    info = open_run(runs / "base")
    rows = read_part(sorted((runs / "base").glob("part-*.arrow"))[0]).head(4)
    cols = game_columns(info, rows)
    score = rows["score"].to_numpy().reshape(2, 2)
    assert cols["margin"].tolist() == np.abs(score[:, 0] - score[:, 1]).tolist()
    assert cols["score"].tolist() == score.mean(axis=1).tolist()
    win = rows["win"].to_numpy().reshape(2, 2)
    pos = rows["position"].to_numpy().reshape(2, 2)
    assert cols["pos0"].tolist() == [win[g][pos[g] == 0][0] for g in range(2)]


def test_a_variant_with_other_seeds_is_refused_for_pairing(runs, capsys, tmp_path):
    with pytest.raises(UserError, match="cannot pair .* seed is 5 in .*, 6 in"):
        compare_runs(runs / "base", [runs / "other_seed"])
    out = tmp_path / "c.html"
    code, _, err = cli(capsys, "compare", str(runs / "base"), str(runs / "other_seed"), "-o", str(out))
    assert code == 2 and err.count("\n") == 1 and "--unpaired" in err
    assert not out.exists()
    code, stdout, err = cli(capsys, "compare", str(runs / "base"), str(runs / "other_seed"), "-o", str(out), "--unpaired")
    assert code == 0 and "Unpaired comparison" in out.read_text()


def test_the_report_is_self_contained_and_opens_with_verdicts(runs, capsys, tmp_path):
    out = tmp_path / "c.html"
    code, stdout, err = cli(capsys, "compare", str(runs / "base"), str(runs / "short"), str(runs / "same"),
                            "-o", str(out), "--margin", "2")
    assert code == 0 and "rounds = 3 shortens the game by" in stdout
    html = out.read_text()
    assert html.index("Verdicts") < html.index("What the pairing saved")
    assert "within ±2.0 percentage points" in html
    assert "src=\"http" not in html and "href=\"http" not in html and "<metadata>" not in html


def test_compare_plays_the_rulebook_against_variants_and_resumes(capsys, tmp_path):
    rule = tmp_path / "three.toml"
    rule.write_text("rounds = 3\n")
    argv = ["compare", "fabryka", "--seats", "random,random", "--games", "600", "--variant", "rounds=2",
            "--variant", str(rule), "--runs", str(tmp_path / "runs"), "-o", str(tmp_path / "c.html"), "--quiet"]
    code, stdout, err = cli(capsys, *argv)
    assert code == 0, err
    assert "rounds = 2 shortens the game" in stdout and "rounds = 3 shortens the game" in stdout
    where = tmp_path / "runs" / "fabryka" / "random_random"
    assert sorted(p.name for p in where.iterdir()) == ["rounds=2", "rulebook", "three"]
    before = {p: p.stat().st_mtime_ns for p in where.rglob("part-*.arrow")}
    assert cli(capsys, *argv)[0] == 0
    assert {p: p.stat().st_mtime_ns for p in where.rglob("part-*.arrow")} == before


@pytest.mark.parametrize("argv, needle", [
    (("compare", "fabryka", "--seats", "random,random", "--variant", "roundz=3"), "unknown param 'roundz'"),
    (("compare", "fabryka", "--seats", "random,random", "--variant", "rounds=three"), "invalid param rounds = 'three'"),
    (("compare", "fabryka", "--seats", "random,random"), "at least one --variant"),
    (("compare", "fabryka", "--variant", "rounds=3"), "--seats is needed"),
    (("compare", "{tmp}/nothing", "{tmp}/nada"), "does not exist"),
    (("compare", "{tmp}/nothing"), "neither a game nor followed by a variant"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(capsys, tmp_path, argv, needle):
    out = tmp_path / "c.html"
    code, _, err = cli(capsys, *(a.replace("{tmp}", str(tmp_path)) for a in argv), "-o", str(out),
                       "--runs", str(tmp_path / "runs")) if argv[1] == "fabryka" else \
        cli(capsys, *(a.replace("{tmp}", str(tmp_path)) for a in argv), "-o", str(out))
    assert code == 2 and err.count("\n") == 1 and needle in err, err
    assert not out.exists() and not (tmp_path / "runs").exists()


def test_a_folder_named_as_the_game_does_not_hide_it(tmp_path, capsys, monkeypatch):
    """`compare GAME` plays the game even when the working directory holds a folder of
    that name (a designer's package, say); a run directory of that name is compared."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fabryka").mkdir()
    code, stdout, _ = cli(capsys, "compare", "fabryka", "--seats", "random,random", "--variant", "rounds=3",
                          "--games", "20", "--jobs", "1", "--quiet", "--runs", "runs", "-o", "c.html")
    assert code == 0 and "against runs/fabryka/random_random/rulebook" in stdout and (tmp_path / "c.html").is_file()
    shutil.rmtree(tmp_path / "fabryka")
    api.run("fabryka", ["random", "random"], 20, "fabryka", jobs=1)
    api.run("fabryka", ["random", "random"], 20, "other", sets={"rounds": 3}, jobs=1)
    code, stdout, _ = cli(capsys, "compare", "fabryka", "other", "-o", "d.html")
    assert code == 0 and "comparison of 1 variant(s) against fabryka:" in stdout and (tmp_path / "d.html").is_file()
