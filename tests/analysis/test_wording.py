"""What the report's sentences claim: no more than their tests show, and
numbers written the way a reader takes them."""
from __future__ import annotations

import math
import re

import numpy as np
from test_game_level import one_bot_run

from analysis.experiments.report import report_of
from analysis.render.findings import position_findings
from analysis.render.formats import count, pvalue
from analysis.metrics import analyze, position_balance
from analysis.render.report import render_html


def test_the_position_finding_names_only_the_pairs_the_tests_separate() -> None:
    # Positions winning 30%, 30%, 40% of 10,000 games. The chi-square says the positions are not
    # all equal; the 1st and 2nd are identical (McNemar z = 0, q = 1), so "all positions
    # differ" was false. The 3rd against either: z = -1000 / sqrt(7000) = -11.95.
    found, _ = position_findings(position_balance(np.array([3000.0, 3000.0, 4000.0]), 10000), "x")
    text = found[0].text
    assert "all positions differ" not in text
    assert "the positions do not all win equally often (χ² = 200.0, df = 2, p < 0.001)" in text
    assert "the pairwise tests separate 1st from 3rd and 2nd from 3rd, not 1st from 2nd" in text
    found, _ = position_findings(position_balance(np.array([2000.0, 3000.0, 5000.0]), 10000), "x")
    assert "every pair of positions differs" in found[0].text


def test_tiny_p_values_read_as_below_a_thousandth_and_win_counts_as_counts() -> None:
    assert pvalue(4.52e-161) == "< 0.001" and pvalue(0.0) == "< 0.001"
    assert pvalue(0.0012) == "0.0012" and pvalue(0.5) == "0.5"
    assert count(45724.0) == "45,724" and count(45724.5) == "45,724.5"


def test_the_report_says_what_a_seat_is_and_writes_counts_and_p_values_plainly(tmp_path) -> None:
    # 2,000 games, seat 0 wins 1,500: p vs fair far below 0.001; no git revision recorded.
    games = [[(0 if s == int(g >= 1500) else 1, float(s == int(g >= 1500)), s) for s in range(2)]
             for g in range(2000)]
    rotated = render_html(report_of([analyze(one_bot_run(tmp_path / "rot", games, seating="rotate"))]))
    assert "seat 0 takes the first spec" not in rotated
    assert "Seating was rotate: the specs of <code>--seats</code> moved between seats" in rotated
    assert '<td class="num">1,500</td>' in rotated and "1,500.0" not in rotated
    assert "&lt; 0.001" in rotated and not re.search(r"\d\.\d+e-\d", rotated)
    assert "<th>git_revision</th><td><code>unknown</code>" in rotated
    fixed = render_html(report_of([analyze(one_bot_run(tmp_path / "fix", games))]))
    assert "Seating was fixed: seat <i>i</i> held the <i>i</i>-th spec" in fixed


def test_an_elo_gap_of_a_clean_sweep_is_stated_by_its_finite_bound():
    from analysis.render.skill import elo_text

    assert elo_text((math.inf, 757.4, 6261.0)) == ("an Elo difference beyond +757 (the 95% CI's finite end: "
                                                  "it won every game)")
    assert elo_text((-math.inf, -6261.0, -757.4)).startswith("an Elo difference beyond -757 ")
    assert elo_text((100.2, 50.0, 150.0)) == "+100 Elo (95% CI +50 to +150)"


def test_a_mirror_run_one_position_always_wins_is_flagged_first_and_a_skewed_one_is_not(tmp_path) -> None:
    from analysis.render.findings import findings

    # One bot in both seats; the 1st player wins all 300 games (seat 0 is always the 1st).
    always = [[(1, 1.0, 0), (2, 0.0, 0)] for _ in range(300)]
    found = findings(analyze(one_bot_run(tmp_path / "always", always)))
    assert found[0].text.startswith("Degenerate play in the bot mirror match at 2 players: the 1st player wins "
                                    "100.00% (95% CI 98.74–100.00%); the 2nd player wins 0.00%")
    # 75% against 25% is a large turn-order edge, not a failing bot.
    skewed = [[(1, 1.0, 0), (2, 0.0, 0)] if g % 4 else [(2, 0.0, 0), (1, 1.0, 0)] for g in range(300)]
    assert not any("Degenerate" in f.text for f in findings(analyze(one_bot_run(tmp_path / "skewed", skewed))))
