"""Known answers for the balance verdicts: turn position against physical
seat, component effects within strategy, outcomes kept out of the effects, missing
values, features carrying the same information, the practical-size threshold, the
leader conditional, pooled and solo reports; and the new statistics checked by
simulation against a planted truth (interval coverage, false findings under the null)."""
from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from analysis import stats
from analysis.render.findings import checks, findings
from analysis.metrics import analyze, component_table, pooled_positions
from analysis.render.plots import rate_range, thin_labels
from analysis.experiments.report import compare_variants, report_of
from analysis.render.report import render_html
from simcore.meta import FeatureRoles
from test_report import seat, write_run


def _winner(rng: np.random.Generator, p: np.ndarray) -> int:
    return int(rng.choice(len(p), p=p / p.sum()))


def positional_games(n_games: int, shares: tuple[float, ...], seed: int = 3) -> list[list[dict[str, Any]]]:
    """A random start player each game; the seat at turn position k wins with
    probability shares[k], whichever physical seat it is."""
    rng = np.random.default_rng(seed)
    n = len(shares)
    games = []
    for _ in range(n_games):
        start = int(rng.integers(n))
        position = [(s - start) % n for s in range(n)]
        won = _winner(rng, np.array([shares[position[s]] for s in range(n)]))
        games.append([seat("bot", 10 if s == won else 5, 1 if s == won else 2, float(s == won),
                           position=position[s], first=position[s] == 0) for s in range(n)])
    return games


def test_planted_position_effect_is_found_and_no_seat_effect(tmp_path: Path) -> None:
    a = analyze(write_run(tmp_path / "pos", ["bot"], positional_games(3000, (0.25, 0.5, 0.25))))
    assert not a.seats.seat_is_position
    pb = a.seats.positions
    assert [r.n for r in pb.win] == [3000] * 3
    assert pb.win[1].low < 0.5 < pb.win[1].high and pb.p_value < 1e-10
    text = " ".join(f.text for f in findings(a))
    assert "The 2nd player wins" in text and "at 3 players against a fair 33.3%" in text
    # The start player is random, so the physical seats even out: checked, not found.
    assert "Physical seats do not win equally often" not in text
    assert any(c.startswith("Every physical seat wins equally often") for c in checks(a))
    # Pairs: the 2nd player against the others significant, 1st against 3rd not.
    q = {(i, j): qv for i, j, _, qv in pb.pairs}
    assert q[(0, 1)] < 0.05 and q[(1, 2)] < 0.05 and q[(0, 2)] > 0.05


def test_no_position_effect_no_finding(tmp_path: Path) -> None:
    a = analyze(write_run(tmp_path / "fair", ["bot"], positional_games(3000, (1, 1, 1), seed=5)))
    assert not any("player wins" in f.text for f in findings(a))
    assert any(c.startswith("Every turn position wins equally often within chance at 3 players") for c in checks(a))


def two_bot_games(n_games: int, seed: int = 11) -> list[list[dict[str, Any]]]:
    """A strong bot s against a weak bot w (s wins 70% at baseline), seats alternating.
    feat_confounded: held by half of s's seats and never by w, no effect within s.
    feat_within: held by half the seats of either bot; holding it adds 10 points to that
    bot's chance and takes 10 from the other's, so within either bot it is worth +10."""
    rng = np.random.default_rng(seed)
    games = []
    for g in range(n_games):
        s_seat = g % 2
        conf = int(rng.random() < 0.5)
        within = rng.random(2) < 0.5  # [s holds, w holds]
        p_s = 0.7 + 0.1 * within[0] - 0.1 * within[1]
        s_won = rng.random() < p_s
        row = []
        for st in range(2):
            is_s = st == s_seat
            won = s_won == is_s
            row.append(seat("s" if is_s else "w", 10 if won else 5, 1 if won else 2, float(won),
                            feat_confounded=conf if is_s else 0,
                            feat_within=int(within[0] if is_s else within[1])))
        games.append(row)
    return games


def test_confounded_feature_is_not_a_finding_and_a_within_bot_effect_is(tmp_path: Path) -> None:
    path = write_run(tmp_path / "bots", ["s", "w"], two_bot_games(20000))
    a = analyze(path)
    c = {r["feature"]: r for r in a.components.iter_rows(named=True)}
    # Pooled over the bots (the old analysis) the confounded feature looks strong ...
    df = pl.read_ipc(path / "part-00000.arrow")
    has = df.filter(pl.col("feat_confounded") == 1)["win"]
    hasnt = df.filter(pl.col("feat_confounded") == 0)["win"]
    pooled = stats.difference(has.sum(), len(has), hasnt.sum(), len(hasnt))
    assert pooled.value > 0.25 and pooled.p_value < 1e-10
    # ... within the strong bot (the only one holding it) it is worth nothing.
    conf = c["feat_confounded"]
    assert conf["strata"] == 1 and conf["diff_low"] < 0 < conf["diff_high"] and not conf["finding"]
    within = c["feat_within"]
    assert within["strata"] == 2 and within["finding"]
    assert within["diff_low"] < 0.10 < within["diff_high"]
    assert within["diff"] == pytest.approx(0.10, abs=0.02)
    texts = [f.text for f in findings(a)]
    assert any("Players of the same bot who had feat_within" in t for t in texts)
    assert not any("feat_confounded" in t for t in texts)


def test_outcome_feature_is_a_breakdown_never_a_finding(tmp_path: Path) -> None:
    """won_flag equals the win: the strongest possible association, declared an outcome."""
    games = [[{**s, "won_flag": int(s["win"] == 1), "feat_plain": (g + i) % 2} for i, s in enumerate(gm)]
             for g, gm in enumerate(two_bot_games(2000))]
    path = write_run(tmp_path / "outcome", ["s", "w"], games)
    undeclared = analyze(path)
    assert "won_flag" in undeclared.components["feature"].to_list()  # otherwise a "finding"
    a = analyze(path, roles=FeatureRoles(outcomes=("won_*",)))
    assert "won_flag" not in a.components["feature"].to_list()
    assert not any("won_flag" in f.text for f in findings(a))
    (b,) = a.breakdowns
    assert b.feature == "won_flag" and b.winners[0] == 1.0 and b.others[0] == 0.0
    assert b.mean[0] == pytest.approx(0.5, abs=1e-9)  # one winner of two seats (no ties)
    assert 'id="breakdowns-r0"' in render_html(report_of([a]))


def test_zero_as_missing_is_dropped_not_read_as_a_value(tmp_path: Path) -> None:
    """feat_turn is 0 ("never happened") for the losers of half the games and 1 or 2 at
    random otherwise: read as a value, 0 looks like losing; as missing, nothing."""
    rng = np.random.default_rng(2)
    games = []
    for g in range(4000):
        won = g % 2
        games.append([seat("bot", 10 if s == won else 5, 1 if s == won else 2, float(s == won),
                           feat_turn=0 if (s != won and g % 4 < 2) else int(rng.integers(1, 3)))
                      for s in range(2)])
    path = write_run(tmp_path / "missing", ["bot"], games)
    as_value = analyze(path).components.row(0, named=True)
    assert as_value["finding"]
    a = analyze(path, roles=FeatureRoles(zero_missing=("feat_turn",)))
    row = a.components.row(0, named=True)
    assert row["missing"] == 2000 and row["n_with"] + row["n_without"] == 6000
    assert not row["finding"] and row["diff_low"] < 0 < row["diff_high"]


def test_features_carrying_the_same_information_make_one_finding(tmp_path: Path) -> None:
    games = [[{**s, "store_x_track": f, "store_x_place": f, "store_x_supplies": 2 * f}
              for s, f in ((s, int(s["win"] == 1 or i % 3 == 0)) for i, s in enumerate(gm))]
             for gm in two_bot_games(3000)]
    roles = FeatureRoles(same_information=(r"(store_.+)_(?:track|place|supplies)",))
    a = analyze(write_run(tmp_path / "same", ["s", "w"], games), roles=roles)
    store = a.components.filter(pl.col("group") == "store_x")
    assert len(store) == 3 and store["finding"].all()
    texts = [f.text for f in findings(a) if "store_x" in f.text]
    assert len(texts) == 1 and "the same information" in texts[0]


def _hist(rows: list[tuple[str, str, int, int, float]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"feature": pl.String, "strategy": pl.String, "value": pl.Int64,
                                      "n": pl.Int64, "wins": pl.Float64}, orient="row")


def test_practical_size_threshold_separates_findings_from_evidence() -> None:
    # A million seats: 50.5% with against 50.0% without is significant but half a point.
    hist = _hist([("tiny", "a", 1, 500_000, 252_500.0), ("tiny", "a", 0, 500_000, 250_000.0),
                  ("big", "a", 1, 500_000, 275_000.0), ("big", "a", 0, 500_000, 250_000.0)])
    t = {r["feature"]: r for r in component_table(hist, ["tiny", "big"]).iter_rows(named=True)}
    assert t["tiny"]["significant"] and not t["tiny"]["finding"]
    assert t["big"]["significant"] and t["big"]["finding"]
    t0 = {r["feature"]: r for r in component_table(hist, ["tiny", "big"], min_effect=0.0).iter_rows(named=True)}
    assert t0["tiny"]["finding"]


def test_mantel_haenszel_by_hand() -> None:
    """Two strata: differences 0.2 (weight 50*50/100 = 25) and 0.0 (weight 10*90/100 =
    9): the combined difference is 25*0.2/34."""
    mh = stats.mantel_haenszel_difference(np.array([30, 5]), np.array([50, 10]),
                                          np.array([20, 45]), np.array([50, 90]))
    assert mh.value == pytest.approx(25 * 0.2 / 34)
    assert mh.with_rate - mh.without_rate == pytest.approx(mh.value)
    assert mh.low < mh.value < mh.high and mh.strata == 2
    # One stratum: Sato's variance is the unpooled binomial variance of the difference.
    one = stats.mantel_haenszel_difference(np.array([30]), np.array([50]), np.array([20]), np.array([50]))
    se = np.sqrt(0.6 * 0.4 / 50 + 0.4 * 0.6 / 50)
    assert (one.high - one.low) / 2 == pytest.approx(1.959964 * se, rel=1e-4)
    assert stats.mantel_haenszel_difference(np.array([3]), np.array([5]), np.array([0]), np.array([0])) is None


def test_mantel_haenszel_interval_covers_the_planted_difference() -> None:
    """1000 simulated tables of three strata with different base rates and a common
    difference of 0.05: the 95% interval covers it in 93-97% of them."""
    rng = np.random.default_rng(7)
    base, n1, n0 = np.array([0.2, 0.5, 0.7]), np.array([300, 100, 50]), np.array([200, 400, 150])
    covered = 0
    for _ in range(1000):
        w1 = rng.binomial(n1, base + 0.05)
        w0 = rng.binomial(n0, base)
        mh = stats.mantel_haenszel_difference(w1, n1, w0, n0)
        covered += mh.low <= 0.05 <= mh.high
    assert 930 <= covered <= 970


def test_same_game_difference_covers_and_keeps_its_size() -> None:
    """Three positions winning 0.3/0.4/0.3 of 2000 games: the interval for 1st minus
    2nd covers -0.1 about 95% of the time; under equal rates McNemar rejects ~5%."""
    rng = np.random.default_rng(8)
    covered = rejected = 0
    for _ in range(1000):
        wins = rng.multinomial(2000, [0.3, 0.4, 0.3])
        d = stats.same_game_difference(wins[0], wins[1], 2000)
        covered += d.low <= -0.1 <= d.high
        rejected += stats.same_game_difference(wins[0], wins[2], 2000).p_value < 0.05
    assert 930 <= covered <= 970
    assert 30 <= rejected <= 70


@pytest.mark.statistical  # 200 simulated runs
def test_false_findings_under_the_null_stay_below_five_percent() -> None:
    """Ten features with no effect in two strategies, 200 simulated runs: the share of
    runs with any significant feature (= the FDR when every null is true) <= 5%."""
    rng = np.random.default_rng(9)
    runs_with_false = 0
    names = [f"f{k}" for k in range(10)]
    for _ in range(200):
        rows = []
        for f in names:
            for strategy, p in (("a", 0.6), ("b", 0.4)):
                n_with = int(rng.integers(100, 400))
                rows += [(f, strategy, 1, n_with, float(rng.binomial(n_with, p))),
                         (f, strategy, 0, 500 - n_with, float(rng.binomial(500 - n_with, p)))]
        table = component_table(_hist(rows), names, min_effect=0.0)
        runs_with_false += bool(table["significant"].any())
    assert runs_with_false <= 0.05 * 200 + 6  # 5% plus two binomial standard deviations


def test_position_chi_square_keeps_its_size() -> None:
    rng = np.random.default_rng(10)
    rejected = sum(stats.equal_shares_test(rng.multinomial(900, [1 / 3] * 3))[1] < 0.05 for _ in range(1000))
    assert 30 <= rejected <= 70


def test_dealt_feature_test_keeps_its_size_and_finds_a_planted_difference() -> None:
    """Eight solo targets dealt 200 times each, all won 30%: the homogeneity test rejects
    about 5% of 1000 simulated runs; with one target at 40% it rejects nearly always."""
    rng = np.random.default_rng(12)
    n = np.full(8, 200)
    null = sum(stats.homogeneity_test(rng.binomial(n, 0.3), n)[1] < 0.05 for _ in range(1000))
    planted = np.full(8, 0.3)
    planted[3] = 0.45
    power = sum(stats.homogeneity_test(rng.binomial(n, planted), n)[1] < 0.05 for _ in range(200))
    assert 30 <= null <= 70
    assert power >= 150


def test_leader_conditional_with_ties_and_a_checkpoint_nobody_leads(tmp_path: Path) -> None:
    """Three seats, checkpoints c_1 (everyone at 0: nobody leads) and c_2:
    g0: c_2 (5, 3, 1), seat 0 wins: the leader wins.
    g1: c_2 (4, 4, 1), seat 2 wins: tied for the lead.
    g2: c_2 (2, 6, 0), seat 0 wins: the leader loses.
    g3: c_2 (1, 0, 7), seats 1 and 2 share the victory: the leader takes 1/2.
    P(win | sole leader at c_2) = (1 + 0 + 1/2) / 3; tied at c_2 in 1 game of 4."""
    c2 = [(5, 3, 1), (4, 4, 1), (2, 6, 0), (1, 0, 7)]
    wins = [(1, 0, 0), (0, 0, 1), (1, 0, 0), (0, 0.5, 0.5)]
    games = [[seat("bot", 10 * w + c, 1 if w else 2, w, interim_c_1=0, interim_c_2=c)
              for c, w in zip(cc, ww)] for cc, ww in zip(c2, wins)]
    a = analyze(write_run(tmp_path / "lead", ["bot"], games))
    q = a.quality
    assert q.leader_wins[0] is None and q.tied[0].successes == 4
    assert (q.leader_wins[1].successes, q.leader_wins[1].n) == (1.5, 3)
    assert (q.tied[1].successes, q.tied[1].n) == (1, 4)
    text = " ".join(f.text for f in findings(a))
    assert "after c_1" not in text
    assert "The sole leader after c_2 goes on to win 50" in text and "tied for the lead" in text


def _solo_games(n: int) -> list[list[dict[str, Any]]]:
    """Target 1 is won in 3 of 4 games, target 2 in 1 of 4."""
    return [[seat("bot", 30 if won else 10, 1, float(won), target=t, objectives_met=int(won) + 1)]
            for g in range(n) for t in [1 + g % 2] for won in [(g // 2) % 4 < (3 if t == 1 else 1)]]


def test_solo_run_gets_a_report(tmp_path: Path) -> None:
    roles = FeatureRoles(outcomes=("objectives_met",), setup=("target",))
    a = analyze(write_run(tmp_path / "solo", ["bot"], _solo_games(400)), roles=roles)
    assert a.solo and a.seats is None and a.quality is None
    assert a.strategies.win[0].successes == 200
    (e,) = a.setup
    assert e.values == [1, 2] and [r.value for r in e.win] == [0.75, 0.25] and e.q_value < 1e-10
    (b,) = a.breakdowns
    assert b.mean[0] == 1.5
    texts = [f.text for f in findings(a)]
    assert texts[0].startswith("bot wins the solo game in 50")
    assert any("depends on the dealt target" in t for t in texts)
    html = render_html(report_of([a]))
    assert "A solo game" in html and "Final score distribution" not in html.split('id="outcomes-r0"')[0]


def _retag(path: Path, **manifest: Any) -> Path:
    m = json.loads((path / "manifest.json").read_text())
    m.update(manifest)
    (path / "manifest.json").write_text(json.dumps(m))
    return path


def test_runs_compared_only_as_variants_of_the_same_game_size_and_lineup(tmp_path: Path) -> None:
    games = positional_games(300, (1, 1, 1))
    lineup_a = write_run(tmp_path / "a", ["bot"], games)
    lineup_b = write_run(tmp_path / "b", ["other"], [[{**s, "strategy": "other"} for s in g] for g in games])
    other_game = _retag(write_run(tmp_path / "g", ["bot"], games), game="elsewhere", params={"players": 3, "x": 1})
    house = _retag(write_run(tmp_path / "h", ["bot"], games), params={"players": 3, "x": 1})
    runs = [analyze(p) for p in (lineup_a, lineup_b, other_game, house)]
    rows = compare_variants(runs)
    assert [(r["run"], r["base"]) for r in rows] == [(3, 0)]
    pooled = pooled_positions(runs)
    # Same game, size and rules: runs 0, 1 pooled; the house rule and the other game apart.
    assert sorted(p.runs for p in pooled) == [[0, 1], [2], [3]]
    both = next(p for p in pooled if p.runs == [0, 1])
    assert both.balance.games == 600
    assert both.balance.win[0].successes == 2 * runs[0].seats.positions.win[0].successes
    assert "turn positions over 2 table(s)" in render_html(report_of(runs[:2]))


def test_rate_axis_zooms_and_labels_thin() -> None:
    close = [stats.rate(510, 1000), stats.rate(490, 1000)]
    lo, hi = rate_range(close, 0.5)
    assert 0.4 < lo < 0.47 and 0.53 < hi < 0.6
    assert rate_range([stats.rate(50, 1000), stats.rate(900, 1000)], 0.5) == (0.0, 1.0)
    labels = thin_labels([f"r{i}" for i in range(32)])
    assert sum(bool(t) for t in labels) <= 12 and labels[-1] == "r31"
    shown = [i for i, t in enumerate(labels) if t]
    assert len(set(np.diff(shown))) == 1  # evenly spaced, the last not crowding the one before


def test_a_strategy_that_always_wins_gets_a_finite_rating_and_the_report_says_how(tmp_path: Path) -> None:
    games = [[seat("s", 10, 1, 1.0), seat("w", 5, 2, 0.0)] if g % 2 else
             [seat("w", 5, 2, 0.0), seat("s", 10, 1, 1.0)] for g in range(200)]
    run = analyze(write_run(tmp_path / "sweep", ["s", "w"], games))
    r = run.strategies.ratings
    # 200 of 200, plus half a win each way: 200.5 of 201, centred at ±ln(401)/2.
    assert r.smoothed and r.elo[0] / stats.ELO_PER_LOGIT == pytest.approx(np.log(401) / 2)
    assert "half a win each way" in render_html(report_of([run]))
    assert "half a win each way" not in render_html(report_of([analyze(write_run(tmp_path / "fair", ["s", "w"], two_bot_games(400)))]))


def test_a_cache_that_cannot_be_written_leaves_no_file_and_changes_no_figure(tmp_path: Path, monkeypatch) -> None:
    path = write_run(tmp_path / "full", ["s", "w"], two_bot_games(400))
    expected = analyze(path)
    for cache in (".tally-00000.json", ".effects-00000.json"):
        (path / cache).unlink()
    write_text = Path.write_text

    def disk_full(self, *args, **kwargs):
        if (".tally-" in self.name or ".effects-" in self.name) and self.name.endswith(".tmp"):  # a cache's temp file
            write_text(self, "{\"half")
            raise OSError(errno.ENOSPC, "No space left on device")
        return write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", disk_full)
    assert analyze(path).seats.positions.win == expected.seats.positions.win
    assert sorted(p.name for p in path.iterdir() if p.name.startswith(".")) == []


def test_part_tallies_are_cached_beside_the_parts_and_refreshed_when_a_part_changes(tmp_path: Path) -> None:
    path = write_run(tmp_path / "cached", ["s", "w"], two_bot_games(400))
    first = analyze(path)
    caches = sorted(p.name for p in path.iterdir() if p.name.startswith(".tally-"))
    assert caches == [".tally-00000.json"]
    assert sorted(path.glob("part-*.arrow")) == [path / "part-00000.arrow"]  # never mistaken for a part
    again = analyze(path)
    assert again.seats.positions.win == first.seats.positions.win
    assert again.components.equals(first.components)
    assert again.strategies.matchups.wins.tolist() == first.strategies.matchups.wins.tolist()
    # A rewritten part (here: every win flipped to the other seat) is tallied afresh.
    part = path / "part-00000.arrow"
    df = pl.read_ipc(part)
    flipped = df.with_columns(win=(1 - pl.col("win")).cast(pl.Float32),
                              rank=(3 - pl.col("rank")).cast(pl.Int8))
    flipped.write_ipc(part)
    redone = analyze(path)
    assert redone.seats.win[0].successes == first.seats.win[1].successes
