"""Metrics of small run directories built by hand, the report they render (opened in
headless Chromium, printed to PDF), the report commands and their errors."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import typer
from typer.testing import CliRunner

from analysis.cli.report import report_command
from analysis.experiments.compare import describe_run
from analysis.rundir import open_run
from analysis.metrics import analyze, pooled_strategies
from analysis import stats
from analysis.api import report as write_report
from analysis.experiments.report import compare_variants, report_of
from analysis.render.report import SECTIONS, render_html
from simcore.batch import seed_of_game
from simcore.errors import UserError

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def write_run(path: Path, specs: list[str], games: list[list[dict[str, Any]]],
              end_reasons: tuple[str, ...] = ("scoring", "white_chocolate")) -> Path:
    """A run directory as the runner writes it: games[g][seat] gives that seat's
    strategy, score, rank, win, plus any feature / interim_* columns; seat 0 is first."""
    n = len(games[0])
    path.mkdir(parents=True)
    manifest = {"run_id": "test", "game": "handmade", "players": n, "seed": 7, "seating": "fixed",
                "n_games": len(games), "chunk_size": len(games), "params": {"players": n},
                "strategies": [{"spec": s, "class": "x.Bot", "weights": {}} for s in specs]}
    (path / "manifest.json").write_text(json.dumps(manifest))
    rows = []
    for g, seats in enumerate(games):
        for seat, row in enumerate(seats):
            rows.append({"run_id": "test", "game": g, "seed": seed_of_game(7, g), "seat": seat,
                         "first": seat == 0, "position": seat, "turns": 10 + g % 3,
                         "end_reason": "scoring", **row})
    df = pl.DataFrame(rows).with_columns(
        pl.col("run_id", "strategy", "end_reason").cast(pl.Categorical),
        pl.col("seat", "rank", "position").cast(pl.Int8), pl.col("win").cast(pl.Float32),
        pl.col("seed").cast(pl.UInt64),
        pl.col("score", "turns").cast(pl.Int32),
        pl.col(r"^(interim_.*|feat_.*)$").cast(pl.Int32))
    df.write_ipc(path / "part-00000.arrow")
    return path


def seat(strategy: str, score: int, rank: int, win: float, **extra: int | str) -> dict[str, Any]:
    return {"strategy": strategy, "score": score, "rank": rank, "win": win, **extra}


@pytest.fixture
def duel(tmp_path: Path) -> Path:
    return _duel_run(tmp_path)


def _duel_run(tmp_path: Path) -> Path:
    """Four two-player games with interim standings (round_1, round_2), worked by hand:
    g0: standings (5,3) (6,8), seat 1 wins 9-6: leader 0 then 1; one change, at round_2.
    g1: standings (2,2) (4,1), seat 0 wins 7-2: a tie, then 0; no change.
    g2: standings (1,4) (5,4), seat 1 wins by white chocolate, 5-6: leaders 1, 0, then the
        result 1: two changes, the last one the result itself; margin -1.
    g3: a shared victory, 5-5."""
    def r(s: str, score: int, rank: int, win: float, r1: int, r2: int, **kw: Any) -> dict[str, Any]:
        return seat(s, score, rank, win, interim_round_1=r1, interim_round_2=r2, **kw)
    games = [
        [r("a", 6, 2, 0.0, 5, 6), r("b", 9, 1, 1.0, 3, 8)],
        [r("b", 7, 1, 1.0, 2, 4), r("a", 2, 2, 0.0, 2, 1)],
        [r("a", 6, 2, 0.0, 1, 5), r("b", 5, 1, 1.0, 4, 4)],
        [r("b", 5, 1, 0.5, 0, 0), r("a", 5, 1, 0.5, 0, 0)],
    ]
    path = write_run(tmp_path / "duel", ["a", "b"], games)
    # g2 ended by white chocolate: rewrite its end reason.
    part = path / "part-00000.arrow"
    df = pl.read_ipc(part).with_columns(
        end_reason=pl.when(pl.col("game") == 2).then(pl.lit("white_chocolate"))
        .otherwise(pl.col("end_reason").cast(pl.String)).cast(pl.Categorical))
    df.write_ipc(part)
    return path


def test_duel_by_hand(duel: Path) -> None:
    a = analyze(duel)
    assert a.games == 4
    # Seat 0 won g1 and half of g3; seat 1 won g0, g2 and half of g3.
    assert [w.successes for w in a.seats.win] == [1.5, 2.5]
    assert a.seats.first.successes == 1.5
    assert a.outcomes.shared.successes == 1
    assert dict((name, r.successes) for name, r in a.outcomes.end_reasons) == {"scoring": 3, "white_chocolate": 1}
    assert a.outcomes.margin["scoring"].counts == {3: 1, 5: 1}
    assert a.outcomes.margin["white_chocolate"].counts == {-1: 1}
    q = a.quality
    assert q is not None and q.checkpoints == ["round_1", "round_2"]
    # P(win | sole leader): after round_1 g0 (seat 0, lost) and g2 (seat 1, won) have a
    # sole leader, g1 and g3 are tied; after round_2 g0 (1, won), g1 (0, won), g2 (0,
    # lost) have one and g3 is tied.
    assert [(r.successes, r.n) for r in q.leader_wins] == [(1, 2), (2, 3)]
    assert [(t.successes, t.n) for t in q.tied] == [(2, 4), (1, 4)]
    assert q.winner_trailed.successes == 2 and q.winner_trailed.n == 3  # g0 and g2
    # Lead changes over all four games (g3, shared and level throughout, has none): the
    # same count, over the same games, as compare's "lead changes per game".
    assert q.lead_changes.counts == {1: 1, 0: 2, 2: 1}
    assert q.last_change.counts == {1: 1, 0: 2, 2: 1}  # round_2, never (g1, g3), the result
    (_, lead), = describe_run(open_run(duel), lambda key: key == "lead_changes")
    assert lead.value == q.lead_changes.mean()[0] == 0.75
    # b (seat 1 in g0 and g2, seat 0 in g1 and g3) won g0, g1, g2 and half of g3.
    m = a.strategies.matchups
    assert m.names == ["a", "b"]
    assert m.wins[1, 0] == 3.5 and m.games[1, 0] == 4


def test_three_player_matchups_and_ratings(tmp_path: Path) -> None:
    """Ranks per game (a, b, c at seats 0-2): 1 2 3, 1 2 3, 3 2 1, and a tie 1 1 3.
    a ahead of b: 1 + 1 + 0 + 1/2 = 2.5 of 4; a ahead of c: 3 of 4; b ahead of c: 3 of 4."""
    ranks = [(1, 2, 3), (1, 2, 3), (3, 2, 1), (1, 1, 3)]
    wins = [(1, 0, 0), (1, 0, 0), (0, 0, 1), (0.5, 0.5, 0)]
    games = [[seat(s, 10 - rk, rk, w) for s, rk, w in zip("abc", rr, ww)] for rr, ww in zip(ranks, wins)]
    a = analyze(write_run(tmp_path / "three", ["a", "b", "c"], games))
    m = a.strategies.matchups
    assert m.wins.tolist() == [[0, 2.5, 3], [1.5, 0, 3], [1, 1, 0]]
    assert m.games.tolist() == [[0, 4, 4], [4, 0, 4], [4, 4, 0]]
    assert a.strategies.ratings is not None
    assert list(np.argsort(-a.strategies.ratings.elo)) == [0, 1, 2]
    assert a.quality is None  # no interim columns


def planted_games(n_games: int) -> list[list[dict[str, Any]]]:
    """Per 10 games: 7 won by the seat holding feat_planted, 3 by the other (70% vs 30%);
    feat_null is held by both seats of every other game, so it cannot matter (50% vs 50%)."""
    games = []
    for g in range(n_games):
        holder = g % 2  # alternate the seat holding the planted feature
        winner = holder if g % 10 < 7 else 1 - holder
        null = int(g % 4 < 2)
        # The strategies swap seats every two games: either may hold the feature.
        games.append([seat("a" if s == (g // 2) % 2 else "b", 10 if s == winner else 5, 1 if s == winner else 2,
                           1.0 if s == winner else 0.0, feat_planted=int(s == holder), feat_null=null)
                      for s in range(2)])
    return games


def test_components_on_a_run(tmp_path: Path) -> None:
    a = analyze(write_run(tmp_path / "planted", ["a", "b"], planted_games(1000)))
    c = {r["feature"]: r for r in a.components.iter_rows(named=True)}
    assert c["feat_planted"]["diff"] == pytest.approx(0.4) and c["feat_planted"]["significant"]
    assert c["feat_null"]["diff"] == pytest.approx(0.0) and not c["feat_null"]["significant"]


def _six_seat_run(tmp_path: Path, name: str = "six") -> Path:
    """Six seats, six strategies, 60 games with every seat order rotating."""
    rng = np.random.default_rng(1)
    names = [f"bot{i}(weight={i})" for i in range(6)]
    games = []
    for g in range(60):
        scores = rng.integers(0, 40, 6) + np.arange(6)
        order = np.roll(np.arange(6), g % 6)
        ranks = 1 + np.argsort(np.argsort(-scores, kind="stable"), kind="stable")
        games.append([seat(names[order[s]], int(scores[s]), int(ranks[s]), float(ranks[s] == 1),
                           interim_round_1=int(scores[s] // 2), feat_x=int(scores[s] > 20))
                      for s in range(6)])
    return write_run(tmp_path / name, names, games)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HTML report of the duel and the six-seat run, written once (its figures take a
    few seconds) for the tests that only read it."""
    tmp = tmp_path_factory.mktemp("written")
    html = tmp / "r" / "report.html"
    write_report([_duel_run(tmp), _six_seat_run(tmp)], html)
    return html


def test_report_html_has_every_section_and_no_external_reference(written: Path) -> None:
    html = written.read_text()
    for i in range(2):
        for sid in SECTIONS:
            assert f'id="{sid}-r{i}"' in html
    assert 'id="comparison"' in html
    assert "http://" not in html and "https://" not in html.replace("http://www.w3.org", "")


def test_pooled_strategies_add_up_runs_of_one_game(tmp_path: Path, duel: Path) -> None:
    a = analyze(duel)
    pooled = pooled_strategies([a, a])
    assert pooled is not None
    m, _ = pooled
    assert m.wins[1, 0] == 7.0 and m.games[1, 0] == 8
    assert pooled_strategies([a]) is None


@pytest.mark.slow  # the report written again with its PDF, then opened: two Chromiums
@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian chromium (installed by .ci/run)")
def test_report_in_headless_chromium_and_pdf(tmp_path: Path) -> None:
    from playwright import sync_api as playwright  # the test extra installs it
    html, pdf = tmp_path / "r" / "report.html", tmp_path / "r" / "report.pdf"
    write_report([_duel_run(tmp_path), _six_seat_run(tmp_path)], html, pdf)
    page_url = html.resolve().as_uri()
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        errors: list[str] = []
        requests: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(page_url, wait_until="load")
        sizes = page.evaluate("Array.from(document.images).map(i => [i.naturalWidth, i.naturalHeight,"
                              " i.getBoundingClientRect().width, i.getBoundingClientRect().height])")
        ids = set(page.evaluate("Array.from(document.querySelectorAll('section[id]')).map(s => s.id)"))
        browser.close()
    assert errors == []
    assert [u for u in requests if u != page_url and not u.startswith("data:")] == []
    assert len(sizes) >= 10 and all(min(s) > 0 for s in sizes)
    assert {f"{sid}-r{i}" for sid in SECTIONS for i in range(2)} <= ids
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    pages = int(next(line.split()[-1] for line in info.splitlines() if line.startswith("Pages:")))
    # Two runs, each starting a page, sections flowing on (no page per section).
    assert 3 <= pages < 2 * len(SECTIONS)  # fewer pages than sections: they cannot each start one
    subprocess.run(["pdftoppm", "-r", "30", "-png", "-f", "1", "-l", "2", str(pdf), str(tmp_path / "pg")], check=True)
    assert all(f.stat().st_size > 0 for f in tmp_path.glob("pg*.png"))


def test_bad_input_is_one_clear_line(tmp_path: Path, duel: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        analyze(tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match="not a run directory"):
        analyze(empty)
    shutil.copy(duel / "manifest.json", empty / "manifest.json")
    with pytest.raises(UserError, match="no results"):
        analyze(empty)
    (empty / "manifest.json").write_text(json.dumps({"players": 2, "strategies": ["random"]}))
    with pytest.raises(UserError, match="garbles"):
        analyze(empty)
    shutil.copy(duel / "manifest.json", empty / "manifest.json")
    (empty / "part-00000.arrow").write_bytes(b"not a part at all")
    with pytest.raises(UserError, match="unreadable") as e:
        analyze(empty)
    assert "\n" not in str(e.value)


def test_bad_input_leaves_an_existing_report_alone(tmp_path: Path, duel: Path) -> None:
    out = tmp_path / "report.html"
    out.write_text("previous report")
    with pytest.raises(UserError):
        write_report([duel, tmp_path / "missing"], out)
    assert out.read_text() == "previous report"


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _by_name() -> None:
        """Subcommands by name, as in the chocosim app."""
    app.command("report")(report_command)
    return app


def test_report_command(tmp_path: Path, duel: Path) -> None:
    out = tmp_path / "out.html"
    result = CliRunner().invoke(_app(), ["report", str(duel), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.stat().st_size > 10_000


def test_one_strategy_report_has_no_matchups(tmp_path: Path) -> None:
    games = [[{**s, "strategy": "random"} for s in g] for g in planted_games(40)]
    a = analyze(write_run(tmp_path / "solo", ["random"], games))
    assert a.strategies.names == ["random"] and a.strategies.ratings is None
    assert a.strategies.skill_edge is None
    html = render_html(report_of([a]))
    assert "One strategy played every seat" in html
    assert all(f'id="{sid}-r0"' in html for sid in SECTIONS)


def test_runs_compared_to_the_first(tmp_path: Path, duel: Path) -> None:
    """A house-rule run: the params that differ are named and the first player's win
    rates compared by Newcombe's interval: here 24 of 40 against 1.5 of 4 (seat 0 wins
    games 0, 2, 4, 6, 7 and 9 of every ten)."""
    house = write_run(tmp_path / "house", ["a", "b"], planted_games(40))
    manifest = json.loads((house / "manifest.json").read_text())
    manifest["params"] = {"players": 2, "white_to_win": 4}
    (house / "manifest.json").write_text(json.dumps(manifest))
    (row,) = compare_variants([analyze(duel), analyze(house)])
    assert (row["run"], row["base"]) == (1, 0)
    assert row["changed"] == ["white_to_win = 4 (was None)"]
    first = analyze(house).seats.first
    assert (first.successes, first.n) == (24, 40)
    d = stats.difference(24, 40, 1.5, 4)
    assert (row["first"].low, row["first"].high) == pytest.approx((d.low, d.high))
