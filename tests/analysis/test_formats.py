"""One way to write each kind of number (analysis.render.formats), with known answers, and
no second formatter of a p value, a rate or a turn position anywhere in the reports or
the CLI."""
from __future__ import annotations

import ast
import math
from types import SimpleNamespace

from analysis.render.formats import count, decimals, nth, ordinal, p_is, pct, points, pvalue, rate
from helpers import ROOT



def test_turn_positions_are_players_counted_from_one():
    assert [ordinal(p) for p in (0, 1, 2, 3)] == ["1st player", "2nd player", "3rd player", "4th player"]
    assert [nth(p) for p in (9, 10, 11, 12, 20, 21, 100, 110)] == \
        ["10th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]


def test_a_rate_shows_as_many_decimals_as_its_interval_needs():
    assert rate(SimpleNamespace(value=0.51, low=0.41, high=0.61)) == "51% (95% CI 41–61%)"
    assert rate(SimpleNamespace(value=0.5103, low=0.5094, high=0.5112)) == "51.03% (95% CI 50.94–51.12%)"
    assert rate(SimpleNamespace(value=0.5, low=0.49, high=0.51)) == "50.0% (95% CI 49.0–51.0%)"
    assert decimals(0.0) == 1 and decimals(math.nan) == 1 and pct(0.125) == "12.5%"


def test_a_difference_is_in_percentage_points_with_signs():
    assert points(0.012, 0.005, 0.019) == "+1.20 percentage points (95% CI +0.50 to +1.90)"
    assert points(-0.5, -0.7, -0.3) == "-50 percentage points (95% CI -70 to -30)"


def test_p_values_read_the_same_in_a_table_and_in_a_sentence():
    assert [pvalue(p) for p in (4.52e-161, 0.0, 0.00099, 0.001, 0.0348, 0.5, math.nan)] == \
        ["< 0.001", "< 0.001", "< 0.001", "0.001", "0.0348", "0.5", "n/a"]
    assert (p_is(0.0), p_is(0.0348, "q"), p_is(math.inf)) == ("p < 0.001", "q = 0.0348", "p n/a")
    assert count(45724.0) == "45,724" and count(45724.5) == "45,724.5"


def test_no_report_or_command_writes_these_numbers_its_own_way():
    # A second definition of one of these names is a second answer for the same number;
    # the experiments, which name their measures, may not name a turn position their way.
    positions = {"ordinal", "nth", "position_name", "_position_name", "_position_label"}
    names = positions | {"pvalue", "p_is", "ptext", "pct", "rate", "rate_text", "count", "_decimals", "_wins"}
    own = []
    for folder, banned in (("analysis/render", names), ("analysis/cli", names), ("analysis/experiments", positions)):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "formats.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef) and node.name in banned:
                    own.append(f"{path.relative_to(ROOT)}: def {node.name}")
    assert not own
