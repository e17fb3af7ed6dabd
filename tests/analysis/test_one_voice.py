"""One run's numbers through every report kind and the CLI: a turn position has one
name everywhere, and the 1st player's win rate with its interval reads the same in the
command's summary and in the report of the run."""
from __future__ import annotations

import html
import re

import pytest

from helpers import cli

pytestmark = [pytest.mark.usefixtures("release_build"), pytest.mark.slow]  # every report kind and command

SEATS = "heuristic,random"
# Other names a turn position has had: "first player (position 0)", "position 1 (last)",
# "acting first", "0 (1st player)".
OTHER_NAMES = re.compile(r"first player \(position|\(last\)|acting first|\b\d \(\d(st|nd|rd|th) player\)|"
                         r"\bposition \d\b")


def _text(page: str) -> str:
    """A page's words as a reader sees them, without the notes that define the names
    (a note says which position column value each player is) and without code."""
    page = re.sub(r'<p class="note">.*?</p>', " ", page, flags=re.S)
    page = re.sub(r"<(script|style|code|svg)\b.*?</\1>", " ", page, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_every_report_and_the_summary_name_positions_one_way(tmp_path, capsys):
    runs = str(tmp_path / "runs")
    out = {}
    code, stdout, _ = cli(capsys, "run", "fabryka", "--seats", SEATS, "--games", "600", "--out", str(tmp_path / "r"))
    assert code == 0
    code, out["summary"], _ = cli(capsys, "summary", str(tmp_path / "r"))
    assert code == 0
    steps = {
        "report": ["report", str(tmp_path / "r"), "-o", str(tmp_path / "report.html")],
        "compare": ["compare", "fabryka", "--seats", SEATS, "--games", "600", "--variant", "collect_count=4",
                    "--runs", runs, "-o", str(tmp_path / "compare.html")],
        "sweep": ["sweep", "fabryka", "--seats", SEATS, "--vary", "collect_count=4,5", "--games", "600",
                  "--dir", str(tmp_path / "sweep"), "-o", str(tmp_path / "sweep.html")],
        "balance": ["balance", "fabryka", "--ladder", "random,heuristic", "--minutes", "0", "--games", "600",
                    "--no-compensation", "--no-evidence", "--runs", runs, "-o", str(tmp_path / "balance.html")],
        "skill": ["skill", "fabryka", "--ladder", "random,heuristic", "--games", "200", "--runs", runs,
                  "--quiet", "-o", str(tmp_path / "skill.html")],
    }
    for kind, argv in steps.items():
        code, stdout, err = cli(capsys, *argv)
        assert code == 0, (kind, err)
        out[f"{kind} (command)"] = stdout
        out[kind] = _text((tmp_path / f"{kind}.html").read_text())
    for kind, text in out.items():
        assert "1st player" in text or (kind.endswith("(command)") and "player" not in text), kind
        assert not OTHER_NAMES.search(text), (kind, OTHER_NAMES.search(text).group(0))
    # The same number in the same words: the 1st player's win rate with its interval.
    row = next(line for line in out["summary"].splitlines() if "1st player" in line)
    first = re.search(r"\d+(\.\d+)?% \(95% CI \d+(\.\d+)?–\d+(\.\d+)?%\)", row)
    assert first, row
    assert first.group(0) in out["report"]
