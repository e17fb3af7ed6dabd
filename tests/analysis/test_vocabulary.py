"""The words of the reports defined once (analysis.glossary): the manual's page is
written from the entries, `chocosim help TERM` prints one, every report ends with those of
the words it uses; and the smaller rules of the one vocabulary: a degenerate mirror is
flagged, rung names on the ladder chart keep apart, goals say their units."""
from __future__ import annotations

import numpy as np
import pytest

from analysis import glossary, stats
from analysis.experiments import tune_rules
from analysis.metrics import DEGENERATE, degenerate_positions
from analysis.render.balance import apart
from analysis.render.findings import degenerate_text
from helpers import ROOT, cli


def test_the_manual_glossary_is_written_from_the_entries():
    page = (ROOT / "docs" / "reference" / "glossary.md").read_text()
    assert page.rstrip("\n") == glossary.markdown().rstrip("\n"), \
        "regenerate it: python -m analysis.glossary > docs/reference/glossary.md"
    required = ["rung", "ladder", "mirror match", "meeting", "komi", "score bonus", "converged", "agreement",
                "q value", "percentage points", "score points"]
    for word in required:
        assert glossary.find(word) is not None, word


def test_help_prints_an_entry_lists_them_all_and_refuses_an_unknown_word(capsys):
    code, out, _ = cli(capsys, "help", "komi")
    assert code == 0 and out.startswith("score bonus (komi)\n") and "compensation.points" in out
    code, out, _ = cli(capsys, "help", "Rungs")  # any case, a plural
    assert code == 0 and out.startswith("rung, ladder\n")
    code, out, _ = cli(capsys, "help")
    assert code == 0 and len(out.splitlines()) == len(glossary.TERMS) + 1
    assert all(t.key in out for t in glossary.TERMS)
    code, out, err = cli(capsys, "help", "rnug")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "'rnug': not a word of the glossary (did you mean rung" in err


def test_a_page_ends_with_the_entries_of_the_words_it_uses_and_no_others():
    page = ("<html><body><h1>Ladder</h1><p>The strongest rung converged; the 1st player wins.</p>"
            "<style>.komi {}</style></body></html>")
    out = glossary.with_footer(page)
    footer = out[out.index('<footer id="glossary">'):]
    assert out.endswith("</footer>\n</body></html>")
    names = {t.name for t in glossary.used_in(page)}
    assert names == {"rung, ladder", "converged, still moves with skill", "1st player, 2nd player, …"}
    assert ">rung, ladder</dt>" in footer and "komi" not in footer  # a style is not text
    assert glossary.with_footer("<p>a fragment</p>") == "<p>a fragment</p>"


def test_a_mirror_whose_position_almost_never_wins_is_flagged_and_a_fair_one_is_not():
    # 4 players, fair 25%: the 4th player wins 3 of 10,000 games (0.03%); the others share
    # the rest. Threshold: the whole interval below DEGENERATE x 25% = 2.5%.
    wins = [3400, 3300, 3297, 3]
    rates = [stats.rate(w, 10_000) for w in wins]
    assert degenerate_positions(rates, 4) == [3]
    text = degenerate_text("heuristic", 4, rates)
    assert text.startswith("Degenerate play in the heuristic mirror match at 4 players: the 4th player wins 0.03%")
    # A real turn-order edge, even a large one, is not degenerate: 15% against a fair 25%.
    assert degenerate_positions([stats.rate(w, 10_000) for w in (3500, 3000, 2000, 1500)], 4) == []
    # Near 1 at 2 players: the 1st player wins 99.6% of 1,000 games (its losses, 0.4%,
    # below a tenth of the fair 50%).
    assert degenerate_positions([stats.rate(996, 1000), stats.rate(4, 1000)], 2) == [0, 1]
    # Too few games to be sure: 0 wins of 20 has an interval reaching 16%.
    assert degenerate_positions([stats.rate(0, 20)] + [stats.rate(10, 20)] * 3, 4) == []
    assert DEGENERATE == 0.1


@pytest.mark.parametrize("at, gap", [([0.5, 0.5, 0.51, 0.9], 0.05), ([0.0, 0.01, 1.0], 0.05),
                                     ([0.3, 0.1, 0.2, 0.2, 0.21], 0.08), ([0.7], 0.1)])
def test_rung_names_are_laid_apart_inside_the_axes_and_moved_no_more_than_needed(at, gap):
    at = np.array(at)
    got = apart(at, gap)
    order = np.argsort(got)
    assert np.all(np.diff(got[order]) >= gap - 1e-12)  # never closer than a line of text
    assert np.all(got >= -1e-12) and np.all(got <= 1 + 1e-12)
    assert np.array_equal(np.argsort(at, kind="stable"), np.argsort(got, kind="stable"))  # order kept
    # A name that ends up with room on both sides was never pushed: it is at its rung.
    free = np.all(np.abs(got[:, None] - got[None, :]) + np.eye(len(at)) * 2 > gap + 1e-9, axis=1)
    assert np.allclose(got[free], at[free])
    assert free.sum() == {4: 1, 3: 1, 5: 0, 1: 1}[len(at)]


def test_goals_say_their_units_back():
    assert tune_rules.parse_goal("position balance within 2 points").text == \
        "position balance within 2 percentage points"
    assert tune_rules.parse_goal("Position balance within 1 percentage point").text == \
        "position balance within 1 percentage point"
    assert tune_rules.parse_goal("margin within 5 points").text == "margin within 5 score points"
