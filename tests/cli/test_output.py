"""Every command's result on stdout, its progress and warnings on stderr: `chocosim ... >
out.txt` holds the result, `2>/dev/null` loses none of it; `--json` is the same result
as JSON on stdout; progress settings never change a result."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analysis import api
from analysis.progress import INTERVAL_VARIABLE
from helpers import cli

pytestmark = pytest.mark.usefixtures("release_build")

SEATS = ("--seats", "random,random")


def result(capsys, *argv):
    """stdout's lines of a command that must succeed, checking that none is on stderr."""
    code, out, err = cli(capsys, *argv)
    assert code in (0, None), err
    lines = out.splitlines()
    assert lines, f"{argv[0]} printed no result on stdout"
    assert not set(lines) & set(err.splitlines()), "a result line on stderr"
    return lines, err


def as_json(capsys, *argv):
    code, out, err = cli(capsys, *argv, "--json")
    assert code in (0, None), err
    return json.loads(out)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    where = tmp_path_factory.mktemp("runs")
    api.run("fabryka", "random,random", 400, where / "base", jobs=1)
    api.run("fabryka", "random,random", 400, where / "variant", jobs=1, sets={"deck.biscuits": 6})
    return where


@pytest.fixture
def piped_lines(monkeypatch):
    """A progress line at every step (stderr is not a terminal under capsys)."""
    monkeypatch.setenv(INTERVAL_VARIABLE, "0")


@pytest.fixture(autouse=True)
def no_pages(monkeypatch):
    """The HTML pages are drawn by other tests: here each is a stub, what a command prints
    does not depend on it (and drawing them would take most of these tests' time)."""
    import analysis.render.balance
    import analysis.render.compare
    import analysis.render.report
    import analysis.render.skill
    import analysis.render.sweep

    def stub(result, html, *rest, **kw):
        Path(html).write_text("<html></html>")

    for module, name in [(analysis.render.balance, "write_balance"), (analysis.render.compare, "write_compare"),
                         (analysis.render.report, "write_report"), (analysis.render.skill, "write_skill_report"),
                         (analysis.render.sweep, "write_sweep")]:
        monkeypatch.setattr(module, name, stub)


def test_games_and_rules_as_json(capsys):
    games = as_json(capsys, "games")
    fab = next(g for g in games if g["name"] == "fabryka")
    assert fab["players"] == [2, 2] and fab["title"] in "\n".join(result(capsys, "games")[0])
    rules = {r["param"]: r for r in as_json(capsys, "rules", "fabryka", "--set", "deck.biscuits=6")}
    assert rules["deck.biscuits"] == {**rules["deck.biscuits"], "value": 6, "default": 5, "source": "house rule"}
    assert rules["players"]["source"] == "rulebook"


def test_run_prints_its_summary_on_stdout_and_progress_on_stderr(tmp_path, capsys, piped_lines):
    lines, err = result(capsys, "run", "fabryka", *SEATS, "--games", "300", "--chunk-size", "100",
                        "--jobs", "1", "--out", str(tmp_path / "r"))
    assert lines[0] == f"fabryka: played 300 games into {tmp_path / 'r'}"
    progress = err.splitlines()
    assert [x.split(",")[0] for x in progress[:3]] == ["run: 100 of 300 games", "run: 200 of 300 games",
                                                       "run: 300 of 300 games"]
    assert "ETA" in progress[0]
    done = as_json(capsys, "run", "fabryka", *SEATS, "--games", "600", "--jobs", "1", "--out", str(tmp_path / "r"))
    assert (done["played"], done["resumed"], done["summary"]["games"]) == (300, 300, 600)
    code, out, err = cli(capsys, "run", "fabryka", *SEATS, "--games", "900", "--jobs", "1", "--quiet",
                         "--out", str(tmp_path / "r"))
    assert code in (0, None) and err == "" and "played 300 games" in out


def test_compare_prints_its_verdicts_on_stdout_whatever_the_progress(tmp_path, capsys, monkeypatch):
    argv = ("compare", "fabryka", *SEATS, "--games", "200", "--variant", "deck.biscuits=6", "--jobs", "1",
            "--runs", str(tmp_path / "runs"), "-o", str(tmp_path / "c.html"))
    quiet, err = result(capsys, *argv, "--quiet")
    assert err == ""
    monkeypatch.setenv(INTERVAL_VARIABLE, "0")
    shown, err = result(capsys, *argv)
    assert shown == quiet  # the runs were played by the first call: the same verdicts
    assert all(x.startswith("compare: ") for x in err.splitlines())
    data = as_json(capsys, *argv)
    assert data["verdicts"] == quiet[:-1] and quiet[-1].startswith("comparison of 1 variant(s) against ")
    assert data["html"] == str(tmp_path / "c.html")


def test_compare_of_run_directories_to_a_file_holds_the_verdicts(runs, tmp_path):
    """The command as a user types it: `> out.txt` holds the verdicts, stderr nothing of them."""
    out = tmp_path / "out.txt"
    with out.open("w") as f:
        # From outside the checkout, as a user's shell is: the installed package, not the source tree.
        done = subprocess.run([sys.executable, "-c", "from analysis.cli import main; main()", "compare",
                               str(runs / "base"), str(runs / "variant"), "-o", str(tmp_path / "c.html")],
                              stdout=f, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, INTERVAL_VARIABLE: "0"}, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    lines = out.read_text().splitlines()
    verdicts = api.compare(runs / "base", [runs / "variant"]).verdicts
    assert lines[:-1] == verdicts and not set(verdicts) & set(done.stderr.splitlines())


def test_sweep_prints_its_points_on_stdout(tmp_path, capsys, piped_lines):
    argv = ("sweep", "fabryka", *SEATS, "--vary", "deck.biscuits=4,5,6", "--games", "200", "--jobs", "1",
            "--dir", str(tmp_path / "sweep"), "-o", str(tmp_path / "s.html"))
    lines, err = result(capsys, *argv)
    assert lines[0].startswith("refused: random, random · deck.biscuits = 4: ")
    assert lines[-1].startswith("sweep of 2 grid point(s) (1 refused), 400 games played")
    assert "sweep: 400 of 400 games" in err and "ETA" in err
    data = as_json(capsys, *argv)
    assert [p["refused"] is not None for p in data["points"]] == [True, False, False]
    assert data["played"] == 0  # the second call finds every point played
    assert len(data["fair_points"]) == sum(x.startswith("fair point") for x in lines)


def test_report_prints_each_runs_findings(runs, tmp_path, capsys, piped_lines):
    argv = ("report", str(runs / "base"), str(runs / "variant"), "-o", str(tmp_path / "r.html"))
    lines, err = result(capsys, *argv)
    assert lines[0] == f"{runs / 'base'}: 400 games"
    assert lines[-1] == f"report of 2 run(s), 800 games: {tmp_path / 'r.html'}"
    assert "report: 2 of 2 runs" in err
    data = as_json(capsys, *argv)
    assert data["games"] == 800
    for run in data["runs"]:
        start = lines.index(f"{run['dir']}: {run['games']:,} games")
        assert lines[start + 1:start + 1 + len(run["findings"])] == [f"  {f}" for f in run["findings"]]
        assert run["summary"]["games"] == run["games"] == 400


def test_skill_prints_its_findings(tmp_path, capsys, piped_lines):
    argv = ("skill", "fabryka", "--ladder", "random,greedy", "--games", "100", "--jobs", "1",
            "--runs", str(tmp_path / "runs"), "-o", str(tmp_path / "k.html"))
    lines, err = result(capsys, *argv)
    assert lines[-1].startswith("skill report of ") and lines[-1].endswith(str(tmp_path / "k.html"))
    assert "skill: 300 of 300 games" in err  # the two rungs' meeting and their two mirrors, 100 games each
    data = as_json(capsys, *argv)
    assert data["findings"] == lines[:-1] and data["games_per_run"] == 100


def test_balance_prints_its_verdict_on_stdout(tmp_path, capsys, piped_lines):
    argv = ("balance", "fabryka", "--ladder", "random,greedy", "--minutes", "0", "--games", "200",
            "--precision", "30", "--no-compensation", "--no-evidence", "--jobs", "1",
            "--runs", str(tmp_path / "runs"), "-o", str(tmp_path / "b.html"))
    lines, err = result(capsys, *argv)
    assert lines[-1].startswith(f"balance report: {tmp_path / 'b.html'}; ")
    assert "balance: " in err and "ladder: " in err  # the progress names its phase
    data = as_json(capsys, *argv)
    (size,) = data["sizes"]
    assert size["players"] == 2 and size["games"] == 200 and data["html"] == str(tmp_path / "b.html")
    assert lines[:-1] == api.words(api.balance("fabryka", ladder=["random", "greedy"], games=200, precision=30,
                                               compensation=False, runs=tmp_path / "runs", play=False))


def test_tune_prints_its_verdict(tmp_path, capsys, piped_lines):
    argv = ("tune", "fabryka", "--against", "random", "--trials", "2", "--games", "20", "--holdout-games", "20",
            "--jobs", "1", "--out", str(tmp_path / "t"))
    lines, err = result(capsys, *argv)
    assert lines[-1].startswith("2 trial(s) run now; ")
    assert "tune: 2 of 2 trials" in err
    data = as_json(capsys, *argv)
    assert data["ran"] == 0 and data["written"][0] == str(tmp_path / "t" / "best.json")


def test_a_run_to_a_precision_says_how_it_ended(tmp_path, capsys):
    argv = ("run", "fabryka", *SEATS, "--games", "4000", "--precision", "10", "--jobs", "1", "--quiet",
            "--out", str(tmp_path / "r"))
    lines, _ = result(capsys, *argv)
    data = as_json(capsys, *argv)
    precision = data["precision"]
    assert precision["target"] == 10 and precision["reached"] and precision["games"] == data["summary"]["games"]
    assert f"precise to ±{precision['halfwidth']:.2f} points" in lines[0]


def test_joblibs_resource_tracker_keeps_its_leak_warnings_off_stderr(capsys):
    """The tracker is a process started with the command's warning options; at a Ctrl-C it
    could warn of a semaphore the run had freed. Any other warning still shows."""
    from multiprocessing import util

    result(capsys, "games")
    warn_from_the_tracker = (
        "import warnings, joblib.externals.loky.backend.resource_tracker as tracker; "
        "exec('warnings.warn(\"resource_tracker: There appear to be 1 leaked semlock\")', vars(tracker)); "
        "warnings.warn('a warning of the run')")
    err = subprocess.run([sys.executable, *util._args_from_interpreter_flags(), "-c", warn_from_the_tracker],
                         capture_output=True, text=True, check=True).stderr
    assert "leaked" not in err and "a warning of the run" in err
