"""Every report kind and the output of every command for one small game: a turn position
has one name everywhere ("1st player", "2nd player", ...), a difference of rates is never
bare "points" (percentage points; a game's own scores are score points), every report
ends with the glossary of the words it uses, and the 1st player's win rate with its
interval reads the same in the command's summary and in the report of the run."""
from __future__ import annotations

import html
import re

import pytest

from helpers import cli

pytestmark = [pytest.mark.usefixtures("release_build"), pytest.mark.slow]  # every report kind and command

SEATS = "heuristic,random"
# Other names a turn position has had: "first player (position 0)", "position 1 (last)",
# "acting first", "0 (1st player)", "the first player's advantage", "seat 0 (1st" (Fabryka's
# first-player token is a component of the game).
OTHER_NAMES = re.compile(r"first player|second player|\(last\)|acting first|\b\d \(\d(st|nd|rd|th) player\)|"
                         r"\bposition \d\b|first-player(?! token)|\bseat \d+ \(\d", re.I)
# "points" alone, where a reader cannot tell percentage points from score points (a
# sweep's grid points, a fair point and the param compensation.points are other words).
BARE_POINTS = re.compile(r"(?<!percentage )(?<!score )(?<!grid )(?<!fair )(?<!compensation\.)\bpoints?\b", re.I)


def _text(page: str) -> str:
    """A page's words as a reader sees them, without code and the game's own param table
    (the rulebook's words for its score points, "Points per card ...")."""
    page = re.sub(r'<section id="params-r\d+".*?</section>', " ", page, flags=re.S)
    page = re.sub(r"<(script|style|code|svg)\b.*?</\1>", " ", page, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def _check(out: dict[str, str], points: set[str]) -> None:
    for kind, text in out.items():
        assert not OTHER_NAMES.search(text), (kind, OTHER_NAMES.search(text).group(0))
        if kind in points:
            bare = BARE_POINTS.search(text)
            assert not bare, (kind, text[max(0, bare.start() - 80):bare.end() + 20])


def _commands(capsys, steps: dict[str, list[str]], out: dict[str, str], errs: dict[str, str]) -> None:
    for kind, argv in steps.items():
        code, stdout, err = cli(capsys, *argv)
        assert code == 0, (kind, err)
        out[f"{kind} (command)"], errs[f"{kind} (stderr)"] = stdout, err


def test_every_report_and_the_summary_name_positions_one_way(tmp_path, capsys):
    runs = str(tmp_path / "runs")
    out, errs = {}, {}
    steps = {
        "games": ["games"], "rules": ["rules", "fabryka"], "strategies": ["strategies", "fabryka"],
        "help": ["help"], "help rung": ["help", "rung"], "play": ["play", "fabryka", "--seats", SEATS],
        "run": ["run", "fabryka", "--seats", SEATS, "--games", "600", "--out", str(tmp_path / "r"), "--quiet"],
        "summary": ["summary", str(tmp_path / "r")],
        "new-game": ["new-game", "mygame", "--out", str(tmp_path / "mygame")],
        "report": ["report", str(tmp_path / "r"), "-o", str(tmp_path / "report.html")],
        "compare": ["compare", "fabryka", "--seats", SEATS, "--games", "600", "--variant", "collect_count=4",
                    "--runs", runs, "-o", str(tmp_path / "compare.html")],
        "sweep": ["sweep", "fabryka", "--seats", SEATS, "--vary", "collect_count=3,4,5", "--games", "300",
                  "--dir", str(tmp_path / "sweep"), "-o", str(tmp_path / "sweep.html")],
        "tune": ["tune", "fabryka", "--bot", "heuristic", "--against", "random", "--weights", "deny",
                 "--trials", "2", "--games", "100", "--out", str(tmp_path / "tune"), "--quiet"],
        "tune --vary": ["tune", "fabryka", "--vary", "collect_count=4..5", "--goal", "position balance within 5 points",
                        "--trials", "2", "--games", "100", "--out", str(tmp_path / "rules"), "--quiet"],
    }
    _commands(capsys, steps, out, errs)
    reports = {"report": tmp_path / "report.html", "compare": tmp_path / "compare.html",
               "sweep": tmp_path / "sweep.html", "tune": tmp_path / "tune" / "report.html",
               "tune --vary": tmp_path / "rules" / "report.html"}
    pages = {kind: path.read_text() for kind, path in reports.items()}
    out.update({kind: _text(page) for kind, page in pages.items()})
    # The play trace and the rules table speak of the game's own score points.
    _check({**out, **errs}, points=set(out) - {"play (command)", "rules (command)"})
    for kind in ("report", "compare", "sweep", "summary (command)"):
        assert "1st player" in out[kind], kind
    for kind, page in pages.items():
        assert '<footer id="glossary">' in page and ">95% interval (CI)</dt>" in page, kind
    assert "<title>Run report: Fabryka Czekolady: heuristic vs random</title>" in pages["report"]
    proposal = (tmp_path / "rules" / "proposal.toml").read_text()
    assert proposal.startswith("# A house rule for fabryka proposed by\n#   chocosim tune fabryka --vary "
                               "collect_count=4..5 --goal 'position balance within 5 percentage points' "
                               "--seats heuristic,heuristic --trials 2 --games 100 --holdout-games 200 --seed 0\n")
    # The same number in the same words: the 1st player's win rate with its interval.
    row = next(line for line in out["summary (command)"].splitlines() if "1st player" in line)
    first = re.search(r"\d+(\.\d+)?% \(95% CI \d+(\.\d+)?–\d+(\.\d+)?%\)", row)
    assert first, row
    assert first.group(0) in out["report"]


def test_every_commands_help_names_positions_and_points_one_way(capsys):
    import typer

    from analysis.cli import app

    names = [n for n, c in typer.main.get_command(app).commands.items() if not c.hidden]
    assert {"balance", "compare", "help", "strategies", "tune"} <= set(names)
    out = {}
    for name in ["", *names]:
        code, text, _ = cli(capsys, *filter(None, [name, "--help"]))
        assert code == 0, name
        out[f"{name or 'chocosim'} --help"] = " ".join(text.split())  # help wraps a unit across lines
    _check(out, points=set(out))


def test_the_ladder_reports_name_positions_one_way(tmp_path, capsys):
    runs = str(tmp_path / "runs")
    out, errs = {}, {}
    steps = {
        "balance": ["balance", "fabryka", "--ladder", "random,heuristic", "--minutes", "0", "--games", "600",
                    "--no-compensation", "--no-evidence", "--runs", runs, "-o", str(tmp_path / "balance.html")],
        "skill": ["skill", "fabryka", "--ladder", "random,heuristic", "--games", "200", "--runs", runs,
                  "--quiet", "-o", str(tmp_path / "skill.html")],
    }
    _commands(capsys, steps, out, errs)
    pages = {kind: (tmp_path / f"{kind}.html").read_text() for kind in steps}
    out.update({kind: _text(page) for kind, page in pages.items()})
    # The progress lines on stderr are checked for the names only.
    _check({**out, **errs}, points=set(out))
    for kind in ("balance", "skill", "balance (command)"):
        assert "1st player" in out[kind], kind
    for kind, page in pages.items():
        footer = page[page.index('<footer id="glossary">'):]
        assert ">rung, ladder</dt>" in footer and ">mirror match</dt>" in footer, kind
    assert "percentage point" in out["balance (command)"]
