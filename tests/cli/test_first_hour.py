"""The first hour of a new user, README in hand: what tripped the walk through a fresh
clone, each checked as the user meets it."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from analysis import api
from helpers import ROOT, cli

# The README and the manual's pages: the commands and recipes a user copies from them.
README = "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))])


pytestmark = pytest.mark.usefixtures("release_build")


def test_python_in_an_unbuilt_source_tree_says_what_to_do(tmp_path):
    # A fresh clone: the sources without the compiled engine; Python started in its root
    # imports them instead of the installed package.
    for package in ("simcore", "strategies", "analysis"):
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("*.so", "*.pyd", "*.c", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", "from analysis import api"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        f"ImportError: chocosim's compiled engine is not built in {tmp_path / 'simcore'}: Python imported the "
        "source tree (it is started in the repository's root?), not the installed package. Build it in place "
        "with `pip install -e .` (or `python setup.py build_ext --inplace`), or run from another directory")


def test_a_precision_compare_on_larger_runs_uses_what_is_there(tmp_path):
    # README order: a 100,000-game compare, then the same with --precision 0.5 (whose first
    # round is fewer games) was refused as dropping games.
    seats = ["random", "random"]
    api.compare_rules("fabryka", seats, 3000, ["rounds=3"], runs=tmp_path, jobs=1)
    done = api.compare_rules("fabryka", seats, 100_000, ["rounds=3"], runs=tmp_path, jobs=1, precision=4)
    assert done.precision.games == 3000 and done.precision.looks == 1  # no game played: what was there sufficed
    assert all(c.games == 3000 for c in done.comparisons)


def test_version_and_bare_chocosim(capsys):
    from analysis.render import version

    assert cli(capsys, "--version")[:2] == (0, f"chocosim {version()}\n")
    code, out, err = cli(capsys)
    assert code == 0 and out.startswith("Usage: chocosim [OPTIONS] COMMAND") and "balance" in out and err == ""


def test_help_names_kinds_not_python_types(capsys):
    for command in ["", "run", "play", "compare", "sweep", "skill", "balance", "tune", "report", "rules"]:
        code, out, _ = cli(capsys, *([command] if command else []), "--help")
        assert code == 0
        assert not re.search(r"<(list\[|int|float|str|path)", out), (command, re.findall(r"<[^>]*>", out))
    out = cli(capsys, "compare", "--help")[1]
    assert "--games INTEGER" in out and "--precision NUMBER" in out and "-o, --out PATH" in out


@pytest.mark.parametrize("argv, hint", [
    (["play", "fabrika", "--seats", "random,random"], "unknown game 'fabrika' (did you mean fabryka?)"),
    (["play", "fabryka", "--seats", "heuristic(wiat=1),random"], "(did you mean wait?)"),
])
def test_a_misspelt_name_gets_a_did_you_mean(capsys, argv, hint):
    code, _, err = cli(capsys, *argv)
    assert code == 2 and hint in err and err.count("\n") == 1


def test_summary_wins_are_whole_where_no_victory_was_shared(tmp_path, capsys):
    out = tmp_path / "r"
    api.run("fabryka", ["heuristic", "random"], 40, out, jobs=1)
    text = cli(capsys, "summary", str(out))[1]
    assert not re.search(r"│ [\d,]+\.0 ", text), text


def test_rules_marks_a_changed_value_as_a_house_rule(capsys):
    out = cli(capsys, "rules", "fabryka", "--set", "rounds=3")[1]
    row = next(line for line in out.splitlines() if line.startswith("│ rounds "))
    assert "3 (was 4)" in row and "house rule" in row and "rulebook" not in row


def test_plays_final_position_is_labelled(capsys):
    out = cli(capsys, "play", "fabryka", "--seats", "heuristic,random", "--seed", "7")[1]
    lines = out.splitlines()
    end = lines.index("end: scoring") if "end: scoring" in lines else next(
        i for i, x in enumerate(lines) if x.startswith("end: "))
    label = next(i for i in range(end, 0, -1) if lines[i].startswith("final position, after turn "))
    assert lines[label + 1].startswith("round ")


def test_make_reports_help_is_whole_sentences():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_reports.py"), "--help"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0
    description = done.stdout.split("\n\n")[1]
    assert description.startswith("Regenerate reports/") and description.rstrip().endswith("SKILL.")
    assert "re-run" in done.stdout


def readme_commands() -> list[str]:
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", README, re.S | re.M)
    return [line.strip() for lang, block in blocks if not lang for line in block.splitlines()
            if line.strip().startswith(("chocosim", "pip install"))]


def test_readme_commands_write_reports_into_a_folder_of_the_users():
    # Reports beside the shipped ones, in the checkout's root, mixed with it; the examples
    # write into out/ (runs into runs/, tunings into tuning/).
    written = [(c, path) for c in readme_commands() for path in re.findall(r"(?:-o|--pdf) (\S+)", c)]
    assert len(written) > 15
    for command, path in written:
        assert path.startswith("out/"), command


def test_the_readme_stacking_recipe_takes_runs_of_different_house_rules(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    api.run("fabryka", ["random", "random"], 10, "runs/fab1", jobs=1)
    api.run("fabryka", ["random", "random"], 10, "runs/fab2", sets={"rounds": 3}, jobs=1)
    recipe = next(b for b in re.findall(r"```python\n(.*?)```", README, re.S) if "runs = [results(" in b)
    scope: dict = {}
    exec("import polars as pl\nfrom analysis.api import results\n" + recipe, scope)
    both = scope["both"]
    assert both.height == 40 and both["interim_round_4"].null_count() == 20
