"""Balance metrics of a run directory, generic over games: everything is derived from the
columns every run has (seat, strategy, score, rank, win, first, turns, end_reason) and
from the per-seat feature and interim columns the game declares.

The counts and sums come from one pass over the parts (analysis.tally); this module
turns them into rates with intervals, tests and findings.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from analysis import stats
from analysis.ratings import Matchups, Ratings, bradley_terry, pool_matchups
from analysis.rundir import BASE_COLUMNS, INTERIM_PREFIX, RunDir, open_run, standings_columns
from analysis.stats import Difference, Rate
from analysis.tally import Cells, Histogram, Tally, games_tally
from simcore.errors import UserError
from simcore.meta import FeatureRoles

__all__ = ["analyze", "RunAnalysis", "SeatBalance", "Strategies",
           "Outcomes", "Quality", "BASE_COLUMNS", "standings_columns",
           "component_table", "component_thresholds", "feature_threshold",
           "pooled_strategies", "degenerate_positions", "PositionBalance", "position_balance", "pooled_positions", "MIN_EFFECT",
           "Breakdown", "SetupEffect", "LEAD_CHANGES"]

# A feature is compared as "present vs absent" (value >= 1) when between these shares
# of seats have it; a feature (almost) every seat has is split at its median instead.
PRESENCE_RANGE = (0.01, 0.99)
# The smallest difference in win rate (within strategy) worth stating as a finding: with
# a million games a 0.5-point association is significant but not news to a designer.
MIN_EFFECT = 0.02
# One definition of "lead changes per game" for the report and compare, said in both.
LEAD_CHANGES = ("averaged over all games: how often the sole leader of the interim standings "
                "changed from one checkpoint to the next, the result counting as the last "
                "checkpoint (a tie for the lead, or a shared victory, changes nothing)")


# ---- results ----


# A mirror match (the same bot in every seat) in which a position's whole 95% interval
# lies below this share of the fair 1/players, or its losses' below this share of the
# fair losses, is degenerate play: turn order rarely makes a position (almost) never win,
# a bot that fails in that seat does.
DEGENERATE = 0.1


def degenerate_positions(rates: Sequence[Any], players: int) -> list[int]:
    """The positions of a mirror match whose win rate (with .low and .high) is near 0 or 1
    beyond doubt: the whole 95% interval below DEGENERATE x fair, or above
    1 - DEGENERATE x (1 - fair)."""
    fair = 1 / players
    return [p for p, r in enumerate(rates)
            if r.high < DEGENERATE * fair or r.low > 1 - DEGENERATE * (1 - fair)]


@dataclass(frozen=True)
class PositionBalance:
    """Win rate by turn position (0 = acts first at the start) over the same games."""

    games: int
    win: list[Rate]  # per position, tested against the fair 1/players share
    chi2: float  # all positions equal: chi-square statistic (df = players - 1), p value
    p_value: float
    # Every pair of positions (i < j): win rate of i minus j (same-game interval and
    # McNemar test) and its Benjamini-Hochberg q value over the pairs.
    pairs: list[tuple[int, int, Difference, float]]

    @property
    def players(self) -> int:
        return len(self.win)


def position_balance(wins: np.ndarray, games: int) -> PositionBalance:
    """Position balance from each position's (possibly fractional) wins in `games`
    games, every position taking part in each."""
    wins = np.asarray(wins, dtype=float)
    k = len(wins)
    chi2, p = stats.equal_shares_test(wins)
    pairs = [(i, j, stats.same_game_difference(wins[i], wins[j], games))
             for i in range(k) for j in range(i + 1, k)]
    q = stats.benjamini_hochberg(np.array([d.p_value for _, _, d in pairs]))
    return PositionBalance(games, [stats.rate_vs(w, games, 1 / k) for w in wins], chi2, p,
                           [(i, j, d, float(qv)) for (i, j, d), qv in zip(pairs, q)])


@dataclass(frozen=True)
class SeatBalance:
    positions: PositionBalance  # by turn position: the balance a player feels
    position_score: list[tuple[float, float, float]]  # per position: mean score, 95% CI
    # By physical seat (seat 0 = the first spec of the lineup), the same test; it differs
    # from the position view only when positions move between seats (a random or
    # rotating start player).
    win: list[Rate]
    chi2: float
    p_value: float
    score: list[tuple[float, float, float]]  # per seat: mean score and its 95% interval
    score_hist: pl.DataFrame  # seat, score, count
    seat_is_position: bool  # every seat always held the same position: one view

    @property
    def first(self) -> Rate:
        return self.positions.win[0]


@dataclass(frozen=True)
class Strategies:
    names: list[str]
    win: list[Rate]  # per strategy over all its seats (tested against 1/players)
    score: list[tuple[float, float, float]]
    matchups: Matchups
    ratings: Ratings | None
    skill_edge: tuple[str, str, Rate] | None  # best- vs worst-rated head-to-head


@dataclass(frozen=True)
class Outcomes:
    end_reasons: list[tuple[str, Rate]]  # share of games ended each way
    shared: Rate  # games with a shared victory
    turns: Histogram
    margin: dict[str, Histogram]  # margin of victory by end reason (sole winners only)
    close: Rate  # sole-winner games decided by at most close_margin points
    close_margin: int
    scores: Histogram  # final scores of every seat


@dataclass(frozen=True)
class Quality:
    checkpoints: list[str]  # standings columns, without the interim_ prefix
    # Per checkpoint: P(win | sole leader there), over the games with a sole leader at
    # that checkpoint (a shared victory counts its share); None where nobody led alone.
    leader_wins: list[Rate | None]
    tied: list[Rate]  # per checkpoint: games without a sole leader there (of all games)
    winner_trailed: Rate  # the winner was strictly behind at some checkpoint
    lead_changes: Histogram  # per game (all games): changes of the sole leader over checkpoints + result
    last_change: Histogram  # checkpoint index of the last change (0: never, as the first
    # checkpoint has no earlier leader to change from; len(checkpoints): the result)


@dataclass(frozen=True)
class RunAnalysis:
    run: RunDir
    games: int
    seats: SeatBalance | None  # None for a solo game
    strategies: Strategies
    outcomes: Outcomes
    components: pl.DataFrame  # see component_table
    setup: list[SetupEffect]
    breakdowns: list[Breakdown]  # outcome features: score breakdowns, not effects
    quality: Quality | None  # None when the game records no interim standings (or solo)
    min_effect: float

    @property
    def solo(self) -> bool:
        return self.run.players == 1


def _mean_ci(row: dict[str, Any]) -> tuple[float, float, float]:
    return stats.mean_interval(int(row["n"]), float(row["score_sum"]), float(row["score_sq"]))


def _seat_balance(run: RunDir, t: dict[str, pl.DataFrame], games: int) -> SeatBalance | None:
    """None for a solo game: one seat has no balance to measure."""
    if run.players < 2:
        return None
    fair = 1 / run.players
    seats = t["seat"].to_dicts()
    positions = {r["position"]: r for r in t["position"].to_dicts()}
    if sorted(positions) != list(range(run.players)) or any(r["n"] != games for r in positions.values()):
        raise UserError(f"results in {run.path} do not give each game one seat at each turn "
                        f"position 0 to {run.players - 1}")
    chi2, p = stats.equal_shares_test(np.array([r["wins"] for r in seats]))
    by_position = [positions[i] for i in range(run.players)]
    return SeatBalance(
        positions=position_balance(np.array([r["wins"] for r in by_position]), games),
        position_score=[_mean_ci(r) for r in by_position],
        win=[stats.rate_vs(r["wins"], r["n"], fair) for r in seats],
        chi2=chi2, p_value=p,
        score=[_mean_ci(r) for r in seats],
        score_hist=t["score"].sort("seat", "score"),
        seat_is_position=int(t["moved"]["moved"].item() or 0) == 0,
    )


def feature_threshold(values: np.ndarray, counts: np.ndarray) -> int | None:
    """The split of a feature's values into "with" (value >= threshold) and "without":
    1 (present at all) when presence varies enough, else the value that splits the
    seats closest to half; None for a feature that never varies."""
    order = np.argsort(values)
    values, counts = values[order], counts[order]
    total = counts.sum()
    if len(values) < 2 or total == 0:
        return None
    present = counts[values >= 1].sum() / total
    if PRESENCE_RANGE[0] <= present <= PRESENCE_RANGE[1] and values.min() <= 0:
        return 1
    above = 1 - np.cumsum(counts)[:-1] / total  # share >= values[i + 1]
    return int(values[1 + int(np.argmin(np.abs(above - 0.5)))])


_COMPONENT_SCHEMA = {
    "feature": pl.String, "kind": pl.String, "group": pl.String, "threshold": pl.Int64,
    "share": pl.Float64, "share_low": pl.Float64, "share_high": pl.Float64,
    "win_with": pl.Float64, "win_without": pl.Float64, "diff": pl.Float64,
    "diff_low": pl.Float64, "diff_high": pl.Float64, "p_value": pl.Float64,
    "n_with": pl.Int64, "n_without": pl.Int64, "missing": pl.Int64, "strata": pl.Int64}


def _split(hist: pl.DataFrame, name: str, roles: FeatureRoles) -> tuple[pl.DataFrame, int, int] | None:
    """A component or behaviour feature's rows of `hist` (without the seats whose 0
    means missing), how many seats were missing, and its threshold (feature_threshold);
    None for other features and for one that never varies."""
    if roles.role(name) not in ("component", "behaviour"):
        return None
    h = hist.filter(pl.col("feature") == name)
    if "strategy" not in h.columns:
        h = h.with_columns(strategy=pl.lit(""))
    missing = 0
    if roles.missing_when_zero(name):
        missing = int(h.filter(pl.col("value") == 0)["n"].sum())
        h = h.filter(pl.col("value") != 0)
    pooled = h.group_by("value").agg(pl.col("n").sum())
    threshold = feature_threshold(pooled["value"].to_numpy(), pooled["n"].to_numpy())
    return None if threshold is None else (h, missing, threshold)


def component_thresholds(hist: pl.DataFrame | None, features: list[str],
                         roles: FeatureRoles | None = None) -> dict[str, int]:
    """The threshold component_table splits each of its features at."""
    roles = roles or FeatureRoles()
    found = {name: _split(hist, name, roles) for name in features} if hist is not None else {}
    return {name: split[2] for name, split in found.items() if split is not None}


def component_table(hist: pl.DataFrame | None, features: list[str], roles: FeatureRoles | None = None,
                    min_effect: float = MIN_EFFECT, games: dict[str, stats.Moments] | None = None) -> pl.DataFrame:
    """Per component or behaviour feature (outcomes and setup are not effects): how
    often a seat has it (at its threshold), and the win rate with against without
    within each strategy, combined over the strategies by Mantel-Haenszel (so a feature
    only the stronger bot takes does not look good for that reason), with its interval,
    p value and the Benjamini-Hochberg q value over all features; sorted by effect,
    largest first. A row is a finding when significant and at least `min_effect` in
    size. Rows where a "0 means missing" feature is 0 are dropped. `hist` holds
    feature, strategy, value, n, wins (strategy may be absent: one stratum).

    `games`: per feature, the per-game moments of effect_columns at its threshold
    (component_thresholds); with them the interval and test count the game as the unit
    (stats.mantel_haenszel_games), which they must: the seats of one game are not
    independent (their wins sum to one), and seat-level intervals covered 87% on a real
    run. Without them (seat-level counts only) the seats are taken as independent."""
    roles = roles or FeatureRoles()
    rows = []
    for name in features if hist is not None else []:
        found = _split(hist, name, roles)
        if found is None:
            continue
        h, missing, threshold = found
        split = (h.group_by("strategy", has=pl.col("value") >= threshold)
                 .agg(pl.col("n").sum(), pl.col("wins").sum()))
        cells = {(r["strategy"], r["has"]): r for r in split.to_dicts()}
        strata = sorted({k[0] for k in cells})

        def col(has: bool, key: str) -> np.ndarray:
            return np.array([cells[(st, has)][key] if (st, has) in cells else 0 for st in strata], dtype=float)  # noqa: B023 (called within its iteration)

        n1, n0 = col(True, "n"), col(False, "n")
        mh = (stats.mantel_haenszel_games(games[name]) if games is not None and name in games
              else stats.mantel_haenszel_difference(col(True, "wins"), n1, col(False, "wins"), n0))
        if mh is None:
            continue
        share = stats.rate(n1.sum(), n1.sum() + n0.sum())
        rows.append({"feature": name, "kind": roles.role(name), "group": roles.group(name),
                     "threshold": threshold, "share": share.value, "share_low": share.low,
                     "share_high": share.high, "win_with": mh.with_rate, "win_without": mh.without_rate,
                     "diff": mh.value, "diff_low": mh.low, "diff_high": mh.high, "p_value": mh.p_value,
                     "n_with": int(n1.sum()), "n_without": int(n0.sum()), "missing": missing,
                     "strata": mh.strata})
    table = pl.DataFrame(rows, schema=_COMPONENT_SCHEMA)
    q = stats.benjamini_hochberg(table["p_value"].to_numpy())
    return (table.with_columns(q_value=pl.Series(q, dtype=pl.Float64))
            .with_columns(significant=pl.col("q_value") < stats.ALPHA)
            .with_columns(finding=pl.col("significant") & (pl.col("diff").abs() >= min_effect))
            .sort(pl.col("diff").abs(), descending=True))



@dataclass(frozen=True)
class SetupEffect:
    """A feature dealt before play (a solo target): win rate per value, and the test
    that every value wins equally often (q: BH over the setup features)."""

    feature: str
    values: list[int]
    win: list[Rate]
    chi2: float
    p_value: float
    q_value: float


def setup_effects(hist: pl.DataFrame | None, features: list[str]) -> list[SetupEffect]:
    out = []
    for name in features if hist is not None else []:
        h = (hist.filter(pl.col("feature") == name).group_by("value")
             .agg(pl.col("n").sum(), pl.col("wins").sum()).sort("value"))
        if len(h) < 2:
            continue
        chi2, p = stats.homogeneity_test(h["wins"].to_numpy(), h["n"].to_numpy())
        out.append(SetupEffect(name, h["value"].to_list(),
                               [stats.rate(w, n) for w, n in zip(h["wins"], h["n"])], chi2, p, p))
    q = stats.benjamini_hochberg(np.array([e.p_value for e in out]))
    return [SetupEffect(e.feature, e.values, e.win, e.chi2, e.p_value, float(qv)) for e, qv in zip(out, q)]


@dataclass(frozen=True)
class Breakdown:
    """An outcome or score part: its mean (95% t interval) over all seats, over the
    seats that won outright and the rest, and per strategy."""

    feature: str
    mean: tuple[float, float, float]
    winners: tuple[float, float, float]
    others: tuple[float, float, float]
    by_strategy: list[tuple[str, tuple[float, float, float]]]


def breakdowns(frame: pl.DataFrame | None, features: list[str], strategies: list[str]) -> list[Breakdown]:
    if frame is None:
        return []
    out = []
    for f in features:
        def mean(rows: pl.DataFrame) -> tuple[float, float, float]:
            return stats.mean_interval(int(rows["n"].sum()), float(rows[f"{f}:sum"].sum()), float(rows[f"{f}:sq"].sum()))  # noqa: B023 (called within its iteration)

        by = [(st, mean(frame.filter(pl.col("strategy") == st))) for st in strategies
              if st in frame["strategy"].to_list()]
        out.append(Breakdown(f, mean(frame), mean(frame.filter("won")), mean(frame.filter(~pl.col("won"))), by))
    return out


# ---- assembling the analysis ----

def _frame(cells: Cells, keys: list[str], sums: list[str], key_labels: dict[int, list[str]] | None = None) -> pl.DataFrame:
    """Cells as a table: key columns, then n and the sums (key_labels: labels for
    the int codes of a key column, by its position)."""
    items = sorted(cells.items())
    columns: dict[str, list[Any]] = {name: [k[i] for k, _ in items] for i, name in enumerate(keys)}
    for i, labels in (key_labels or {}).items():
        if labels is not None:  # None: the keys are labels already
            columns[keys[i]] = [labels[c] for c in columns[keys[i]]]
    columns["n"] = [int(v[0]) for _, v in items]
    for j, name in enumerate(sums, start=1):
        columns[name] = [float(v[j]) for _, v in items]
    schema = {name: (pl.String if i in (key_labels or {}) else pl.Int64) for i, name in enumerate(keys)}
    return pl.DataFrame(columns, schema={**schema, "n": pl.Int64, **{name: pl.Float64 for name in sums}})


def _feature_table(run: RunDir, t: Tally) -> pl.DataFrame | None:
    """feature, strategy, value, n, wins of every component, behaviour and setup
    feature; None for a game without one."""
    effects = run.role_features("component", "behaviour", "setup")
    if not effects:
        return None
    return pl.concat([
        _frame(t.cells.get(("feature", f), {}), ["strategy", "value"], ["wins"], {0: run.strategies})
        .select(feature=pl.lit(f), strategy="strategy", value="value", n="n", wins="wins")
        for f in effects])


def _tables(run: RunDir, t: Tally) -> dict[str, pl.DataFrame]:
    """The tally's cells as the small tables the analysis reads."""
    moments = ["wins", "score_sum", "score_sq"]
    names = {0: run.strategies}
    c = t.cells
    tables = {
        "seat": _frame(c.get("seat", {}), ["seat"], moments),
        "position": _frame(c.get("position", {}), ["position"], moments),
        "moved": pl.DataFrame({"moved": [t.moved]}),
        "strategy": _frame(c.get("strategy", {}), ["strategy"], moments, names),
        "score": _frame(c.get("score", {}), ["seat", "score"], []).rename({"n": "count"}),
        "end": _frame(c.get("end", {}), ["end_reason"], [], {0: None}).rename({"n": "games"}),
        "turns": _frame(c.get("turns", {}), ["turns"], []).rename({"n": "count"}),
        "shared": pl.DataFrame({"shared": [t.shared]}),
    }
    if (features := _feature_table(run, t)) is not None:
        tables["features"] = features
    if outcomes := run.role_features("outcome"):
        sums = [name for f in outcomes for name in (f"{f}:sum", f"{f}:sq")]
        tables["outcomes"] = (_frame(c.get("outcomes", {}), ["strategy", "won"], sums, names)
                              .with_columns(pl.col("won").cast(pl.Boolean)))
    return tables


def _strategies(run: RunDir, t: dict[str, pl.DataFrame], tally: Tally) -> Strategies:
    by_name = {r["strategy"]: r for r in t["strategy"].to_dicts()}
    rows = [by_name[s] for s in run.strategies if s in by_name]
    names = [r["strategy"] for r in rows]
    m = Matchups(run.strategies, tally.pair_wins, tally.pair_games, tally.pair_moments)
    ratings = bradley_terry(m)
    edge = None
    if ratings is not None:
        best, worst = int(np.argmax(ratings.elo)), int(np.argmin(ratings.elo))
        if m.games[best, worst] > 0:
            edge = (m.names[best], m.names[worst], m.rate(best, worst))
    return Strategies(names, [stats.rate_vs(r["wins"], r["n"], 1 / run.players) for r in rows],
                      [_mean_ci(r) for r in rows], m, ratings, edge)


def _outcomes(t: dict[str, pl.DataFrame], tally: Tally, games: int) -> Outcomes:
    ends = t["end"].sort("games", "end_reason", descending=[True, False])
    turns = Histogram()
    turns.counts.update(dict(zip(t["turns"]["turns"].to_list(), t["turns"]["count"].to_list())))
    shared = round(float(t["shared"]["shared"].item() or 0))
    all_margins = Histogram()
    for h in tally.margin.values():
        all_margins.counts.update(h.counts)
    # "Close" scales with the game: a margin of at most 5% of the median score (at
    # least one point), so the same rule fits games scored in tens or in hundreds.
    scores = Histogram()
    # Summed over the seats first: a dict of (score, count) pairs kept one seat's count.
    scores.counts.update(dict(t["score"].group_by("score").agg(pl.col("count").sum()).sort("score").iter_rows()))
    close_margin = max(1, round(0.05 * abs(scores.quantile(0.5))))
    close = sum(c for v, c in all_margins.counts.items() if 0 <= v <= close_margin)
    return Outcomes(
        end_reasons=[(r["end_reason"], stats.rate(r["games"], games)) for r in ends.to_dicts()],
        shared=stats.rate(shared, games), turns=turns, margin=tally.margin,
        close=stats.rate(close, all_margins.n), close_margin=close_margin, scores=scores)


def _quality(tally: Tally, checkpoints: list[str]) -> Quality | None:
    if not checkpoints or tally.decided == 0:
        return None
    return Quality([c.removeprefix(INTERIM_PREFIX) for c in checkpoints],
                   [stats.rate(w, int(n)) if n else None for w, n in zip(tally.leader_won, tally.sole_leader)],
                   [stats.rate(tally.games - int(n), tally.games) for n in tally.sole_leader],
                   stats.rate(tally.trailed, tally.decided), tally.lead_changes, tally.last_change)



def analyze(path: Path | str, min_effect: float = MIN_EFFECT, roles: FeatureRoles | None = None) -> RunAnalysis:
    """Everything the report shows about one run directory; `min_effect` is the
    smallest within-strategy difference in win rate stated as a finding; `roles`
    overrides how the game declares its features (default: the registered game's)."""
    if not 0 <= min_effect < 1:
        raise UserError(f"min_effect = {min_effect}: allowed is a share of games from 0 to below 1")
    run = open_run(path, roles)
    checkpoints = standings_columns(run.interims) if run.players > 1 else []
    tally, effects = games_tally(run, checkpoints, lambda t: component_thresholds(
        _feature_table(run, t), run.features, run.roles))
    tables = _tables(run, tally)
    games = tally.games
    components = component_table(tables.get("features"), run.features, run.roles, min_effect, effects)
    return RunAnalysis(run, games, _seat_balance(run, tables, games), _strategies(run, tables, tally),
                       _outcomes(tables, tally, games), components,
                       setup_effects(tables.get("features"), run.role_features("setup")),
                       breakdowns(tables.get("outcomes"), run.role_features("outcome"), run.strategies),
                       _quality(tally, checkpoints), min_effect)


def pooled_strategies(analyses: Iterable[RunAnalysis]) -> tuple[Matchups, Ratings | None] | None:
    """The head-to-head results of several runs of one game added up (by strategy spec),
    with ratings fitted to all of them: how a balance sweep of several tables ranks every
    bot. None unless there are several runs, all of the same game."""
    analyses = list(analyses)
    if len(analyses) < 2 or len({a.run.manifest.get("game") for a in analyses}) != 1:
        return None
    names = list(dict.fromkeys(n for a in analyses for n in a.strategies.matchups.names))
    pooled = pool_matchups(names, [a.strategies.matchups for a in analyses])
    return pooled, bradley_terry(pooled)


def rules_key(a: RunAnalysis) -> tuple[str, int, str]:
    """What makes runs comparable: the game, the table size and every param."""
    m = a.run.manifest
    return str(m.get("game")), a.run.players, json.dumps(m.get("params") or {}, sort_keys=True)


@dataclass(frozen=True)
class PooledPositions:
    game: str
    players: int
    runs: list[int]  # indices of the runs pooled (same game, size and params)
    balance: PositionBalance


def pooled_positions(analyses: Iterable[RunAnalysis]) -> list[PooledPositions]:
    """Position balance per table size over every run with the same rules: each
    position's wins added up over the lineups (every lineup plays each position in
    every game, so the sums stay paired by game)."""
    groups: dict[tuple[str, int, str], list[int]] = {}
    analyses = list(analyses)
    for i, a in enumerate(analyses):
        if a.seats is not None:
            groups.setdefault(rules_key(a), []).append(i)
    out = []
    for (game, players, _), runs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[1][0])):
        wins = sum(np.array([r.successes for r in analyses[i].seats.positions.win]) for i in runs)
        games = sum(analyses[i].games for i in runs)
        out.append(PooledPositions(game, players, runs, position_balance(wins, games)))
    return out
