"""What the report's sentences claim: no more than their tests show (issue 27), and
numbers written the way a reader takes them (issue 25, item 7)."""
from __future__ import annotations

import numpy as np

from analysis.findings import position_findings
from analysis.metrics import position_balance


def test_the_position_finding_names_only_the_pairs_the_tests_separate() -> None:
    # Issue 27: 30%, 30%, 40% of 10,000 games. The chi-square says the positions are not
    # all equal; the 1st and 2nd are identical (McNemar z = 0, q = 1), so "all positions
    # differ" was false. The 3rd against either: z = -1000 / sqrt(7000) = -11.95.
    found, _ = position_findings(position_balance(np.array([3000.0, 3000.0, 4000.0]), 10000), "x")
    text = found[0].text
    assert "all positions differ" not in text
    assert "the positions do not all win equally often (χ² = 200.0, df = 2, p < 0.001)" in text
    assert "the pairwise tests separate 1st from 3rd and 2nd from 3rd, not 1st from 2nd" in text
    found, _ = position_findings(position_balance(np.array([2000.0, 3000.0, 5000.0]), 10000), "x")
    assert "every pair of positions differs" in found[0].text
