"""The Python API: the README's notebook-style example runs as written, and the API
returns the same answers as the command line."""
from __future__ import annotations

import re

import polars as pl
import pytest

from analysis import api
from helpers import ROOT
from simcore.errors import UserError

README = ROOT / "README.md"


def readme_example() -> str:
    text = README.read_text()
    section = text[text.index("### From Python"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow  # every job of the api as the README writes it: a balance of 10,000 games a rung
def test_the_readme_example_works(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(readme_example(), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "rounds = 3 shortens the game by" in out
    for name in ("api-compare.html", "api-sweep.html", "api-report.html", "api-balance/fabryka.html"):
        assert (tmp_path / name).stat().st_size > 1000
    assert (tmp_path / "runs" / "api-sweep" / "metrics.parquet").exists()


def test_results_are_the_run_directory_as_a_frame(tmp_path):
    done = api.run("fabryka", "random,random", 10, tmp_path / "r", seed=2)
    assert done.manifest["n_games"] == 10 and done.played == 10 and done.precision is None
    frame = api.results(done.path)
    assert isinstance(frame, pl.DataFrame) and frame.height == 20
    assert isinstance(api.results(done.path, lazy=True), pl.LazyFrame)


def test_the_comparison_table_holds_every_metric_with_its_interval(tmp_path):
    a = api.run("fabryka", "random,random", 400, tmp_path / "a").path
    b = api.run("fabryka", "random,random", 400, tmp_path / "b", sets={"rounds": 2}).path
    out = api.compare(a, [b])
    t = out.table
    assert set(t["variant"]) == {"rounds = 2"}
    turns = t.filter(pl.col("metric") == "turns").row(0, named=True)
    assert turns["low"] <= turns["change"] <= turns["high"] < 0 and turns["significant"]
    assert turns["se"] < turns["se_unpaired"] and turns["paired"] and turns["games"] == 400


@pytest.mark.parametrize("variant, needle", [
    ("", "expected key=value or a .toml file"),
    ("nosuch.toml", "no such house-rule file"),
    ("rounds", "expected key=value"),
])
def test_a_bad_variant_is_a_user_error(tmp_path, variant, needle):
    with pytest.raises(UserError, match=needle):
        api.compare_rules("fabryka", "random,random", 10, [variant], runs=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()
