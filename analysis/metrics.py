"""Balance metrics of a run directory, generic over games: everything is derived from the
columns every run has (seat, strategy, score, rank, win, first, turns, end_reason) and
from the per-seat feature and interim columns the game declares.

Memory stays bounded however many games a run holds, in two passes:
- row-level aggregates (per seat, strategy, feature value...) are one lazy scan of all
  parts collected with the streaming engine into small group-by tables;
- per-game facts that need every seat of a game at once (margins, head-to-head results,
  lead changes) are computed one part at a time (a part is at most a chunk of the run,
  written so that it fits in a worker's memory) and reduced to counts and histograms.
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from analysis import stats
from analysis.stats import Difference, Matchups, Rate, Ratings
from simcore.errors import UserError
from simcore.runner import MANIFEST

__all__ = ["RunData", "open_run", "analyze", "RunAnalysis", "SeatBalance", "Strategies",
           "Outcomes", "Quality", "Histogram", "BASE_COLUMNS", "standings_columns",
           "component_table", "feature_threshold", "pooled_strategies"]

# The columns every results table has; all others are the game's features and interims.
BASE_COLUMNS = ("run_id", "game", "seed", "seat", "strategy", "score", "rank", "win",
                "first", "position", "turns", "end_reason")
INTERIM_PREFIX = "interim_"
# A feature is compared as "present vs absent" (value >= 1) when between these shares
# of seats have it; a feature (almost) every seat has is split at its median instead.
PRESENCE_RANGE = (0.01, 0.99)
_SERIES_INDEX = re.compile(r"_?r?\d+$")


@dataclass(frozen=True)
class RunData:
    path: Path
    manifest: dict[str, Any]
    parts: list[Path]
    players: int
    strategies: list[str]  # labels of the strategy column, in manifest order
    features: list[str]
    interims: list[str]  # the interim_* columns, in declared order

    def scan(self) -> pl.LazyFrame:
        return pl.scan_parquet(self.parts)


def _fail_unreadable(path: Path, error: Exception) -> UserError:
    return UserError(f"results in {path} are unreadable: {str(error).splitlines()[0]}")


def open_run(path: Path | str) -> RunData:
    """A run directory checked enough that the analysis can trust it: UserError (one
    line) for a missing directory, a missing or broken manifest, no parts, or parts
    without the results columns."""
    path = Path(path)
    if not path.is_dir():
        raise UserError(f"run directory {path} does not exist")
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except FileNotFoundError:
        raise UserError(f"{path} is not a run directory (no {MANIFEST})") from None
    except (OSError, json.JSONDecodeError) as e:
        raise UserError(f"run directory {path}: {MANIFEST} is unreadable ({e})") from None
    if not isinstance(manifest, dict):
        raise UserError(f"run directory {path}: {MANIFEST} is not a JSON object")
    try:
        specs = [str(s["spec"]) for s in manifest["strategies"]]
        players = int(manifest["players"])
    except (TypeError, KeyError, ValueError):
        raise UserError(f"run directory {path}: {MANIFEST} lacks or garbles players or strategies") from None
    parts = sorted(path.glob("part-*.parquet"))
    if not parts:
        raise UserError(f"run directory {path} has no results (no part-*.parquet)")
    for part in parts:  # a truncated or corrupt part is named (its footer does not read)
        try:
            pl.read_parquet_metadata(part)
        except (pl.exceptions.PolarsError, OSError) as e:
            raise UserError(f"results part {part} is unreadable ({str(e).splitlines()[0]}); "
                            "running the run's command again plays its games again") from None
    try:
        schema = pl.scan_parquet(parts).collect_schema()
    except (pl.exceptions.PolarsError, OSError) as e:
        raise _fail_unreadable(path, e) from None
    missing = [c for c in BASE_COLUMNS if c not in schema]
    if missing:
        raise UserError(f"results in {path} lack the column(s) {', '.join(missing)}")
    names = [c for c in schema.names() if c not in BASE_COLUMNS]
    return RunData(path, manifest, parts, players, list(dict.fromkeys(specs)),
                   [c for c in names if not c.startswith(INTERIM_PREFIX)],
                   [c for c in names if c.startswith(INTERIM_PREFIX)])


def standings_columns(interims: list[str]) -> list[str]:
    """The interim columns that record the standings over time: the first declared
    series, i.e. the leading columns whose names differ only by a trailing round number
    (interim_round_1..4, interim_points_r1..r8); a game whose interims are not numbered
    (interim_transition, interim_end) has them all as one series."""
    if not interims:
        return []
    stem = _SERIES_INDEX.sub("", interims[0])
    if stem == interims[0]:
        return [c for c in interims if _SERIES_INDEX.sub("", c) == c]
    series = []
    for c in interims:
        if _SERIES_INDEX.sub("", c) != stem:
            break
        series.append(c)
    return series


# ---- results ----

@dataclass
class Histogram:
    """Counts of integer values, built part by part."""

    counts: Counter = field(default_factory=Counter)

    def add(self, values: np.ndarray) -> None:
        if values.size == 0:
            return
        # bincount, not np.unique: counting small ints needs no sort (10x faster).
        low = int(values.min())
        counts = np.bincount((values - low).astype(np.int64))
        seen = np.flatnonzero(counts)
        self.counts.update(dict(zip((seen + low).tolist(), counts[seen].tolist())))

    def frame(self, name: str) -> pl.DataFrame:
        items = sorted(self.counts.items())
        return pl.DataFrame({name: [k for k, _ in items], "count": [v for _, v in items]},
                            schema={name: pl.Int64, "count": pl.Int64})

    @property
    def n(self) -> int:
        return sum(self.counts.values())

    def mean(self) -> tuple[float, float, float]:
        k = np.array(list(self.counts.keys()), dtype=float)
        v = np.array(list(self.counts.values()), dtype=float)
        return stats.mean_interval(int(v.sum()), float((k * v).sum()), float((k * k * v).sum()))

    def quantile(self, q: float) -> float:
        items = sorted(self.counts.items())
        target, seen = q * self.n, 0
        for value, count in items:
            seen += count
            if seen >= target:
                return float(value)
        return float("nan")


@dataclass(frozen=True)
class SeatBalance:
    win: list[Rate]  # per seat, tested against the fair 1/players share
    chi2: float  # all seats equal: chi-square statistic (df = players - 1) and p value
    p_value: float
    first: Rate  # the first player's win rate, against 1/players
    first_vs_rest: Difference  # first player minus the others
    score: list[tuple[float, float, float]]  # per seat: mean score and its 95% interval
    score_hist: pl.DataFrame  # seat, score, count


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


@dataclass(frozen=True)
class Quality:
    checkpoints: list[str]  # standings columns, without the interim_ prefix
    winner_led: list[Rate]  # per checkpoint: the eventual winner was the sole leader
    winner_trailed: Rate  # the winner was strictly behind at some checkpoint
    lead_changes: Histogram  # changes of the sole leader over checkpoints + result
    last_change: Histogram  # checkpoint index of the last change (0: never, as the first
    # checkpoint has no earlier leader to change from; len(checkpoints): the result)


@dataclass(frozen=True)
class RunAnalysis:
    run: RunData
    games: int
    seats: SeatBalance
    strategies: Strategies
    outcomes: Outcomes
    components: pl.DataFrame
    quality: Quality | None  # None when the game records no interim standings


# ---- pass 1: row-level aggregates, one streaming scan ----

def _row_queries(run: RunData) -> dict[str, pl.LazyFrame]:
    lf = run.scan()
    win = pl.col("win").cast(pl.Float64)
    score = pl.col("score").cast(pl.Float64)
    moments = (pl.len().alias("n"), win.sum().alias("wins"), score.sum().alias("score_sum"),
               (score * score).sum().alias("score_sq"))
    one_row_per_game = lf.filter(pl.col("seat") == 0)
    queries = {
        "seat": lf.group_by("seat").agg(*moments).sort("seat"),
        "first": lf.group_by("first").agg(*moments),
        "strategy": lf.group_by(pl.col("strategy").cast(pl.String)).agg(*moments),
        "score": lf.group_by("seat", "score").agg(count=pl.len()),
        "end": one_row_per_game.group_by(pl.col("end_reason").cast(pl.String)).agg(games=pl.len()),
        "turns": one_row_per_game.group_by("turns").agg(count=pl.len()),
        # The k seats sharing a victory hold 1/k each: their win shares sum to 1 a game.
        "shared": lf.filter(win.is_between(0, 1, closed="none")).select(shared=win.sum()),
    }
    if run.features:
        # One small group-by per feature, concatenated: about twice as fast as unpivoting
        # the features into (rows x features) long rows first.
        queries["features"] = pl.concat([
            lf.group_by(pl.col(f).cast(pl.Int64).alias("value"))
            .agg(n=pl.len(), wins=win.sum()).select(feature=pl.lit(f), value="value", n="n", wins="wins")
            for f in run.features])
    return queries


def _collect(run: RunData, queries: dict[str, pl.LazyFrame]) -> dict[str, pl.DataFrame]:
    try:
        frames = pl.collect_all(list(queries.values()), engine="streaming")
    except (pl.exceptions.PolarsError, OSError) as e:
        raise _fail_unreadable(run.path, e) from None
    return dict(zip(queries, frames))


def _mean_ci(row: dict[str, Any]) -> tuple[float, float, float]:
    return stats.mean_interval(int(row["n"]), float(row["score_sum"]), float(row["score_sq"]))


def _seat_balance(run: RunData, t: dict[str, pl.DataFrame]) -> SeatBalance:
    fair = 1 / run.players
    seats = t["seat"].to_dicts()
    chi2, p = stats.equal_shares_test(np.array([r["wins"] for r in seats]))
    by_first = {r["first"]: r for r in t["first"].to_dicts()}
    first, rest = by_first.get(True), by_first.get(False)
    if first is None or rest is None:
        raise UserError(f"results in {run.path} have no first-player flags")
    return SeatBalance(
        win=[stats.rate_vs(r["wins"], r["n"], fair) for r in seats],
        chi2=chi2, p_value=p,
        first=stats.rate_vs(first["wins"], first["n"], fair),
        first_vs_rest=stats.difference(first["wins"], first["n"], rest["wins"], rest["n"]),
        score=[_mean_ci(r) for r in seats],
        score_hist=t["score"].sort("seat", "score"),
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


def component_table(hist: pl.DataFrame | None, features: list[str]) -> pl.DataFrame:
    """Per feature: how often a seat has it (at its threshold), the win rate with and
    without, the difference with its Newcombe interval and score-test p value, and the
    Benjamini-Hochberg q value over all features; sorted by effect, largest first.
    Seats of one game are compared as independent samples (they are not quite: one
    seat's majority is the other's loss), so the p values are approximate."""
    rows = []
    for name in features if hist is not None else []:
        h = hist.filter(pl.col("feature") == name)
        values = h["value"].to_numpy()
        counts = h["n"].to_numpy()
        threshold = feature_threshold(values, counts)
        if threshold is None:
            continue
        has = values >= threshold
        n1, w1 = int(counts[has].sum()), float(h["wins"].to_numpy()[has].sum())
        n0, w0 = int(counts[~has].sum()), float(h["wins"].to_numpy()[~has].sum())
        if n1 == 0 or n0 == 0:
            continue
        d = stats.difference(w1, n1, w0, n0)
        share = stats.rate(n1, n1 + n0)
        rows.append({"feature": name, "threshold": threshold, "share": share.value,
                     "share_low": share.low, "share_high": share.high,
                     "win_with": d.a.value, "win_without": d.b.value, "diff": d.value,
                     "diff_low": d.low, "diff_high": d.high, "p_value": d.p_value,
                     "n_with": n1, "n_without": n0})
    schema = {"feature": pl.String, "threshold": pl.Int64, "share": pl.Float64,
              "share_low": pl.Float64, "share_high": pl.Float64, "win_with": pl.Float64,
              "win_without": pl.Float64, "diff": pl.Float64, "diff_low": pl.Float64,
              "diff_high": pl.Float64, "p_value": pl.Float64, "n_with": pl.Int64,
              "n_without": pl.Int64}
    table = pl.DataFrame(rows, schema=schema)
    q = stats.benjamini_hochberg(table["p_value"].to_numpy())
    return (table.with_columns(q_value=pl.Series(q, dtype=pl.Float64))
            .with_columns(significant=pl.col("q_value") < stats.ALPHA)
            .sort(pl.col("diff").abs(), descending=True))


# ---- pass 2: per-game facts, part by part ----

@dataclass
class _GameTally:
    """What the per-game pass accumulates over the parts."""

    k: int  # strategies
    checkpoints: int
    pair_wins: np.ndarray = field(init=False)
    pair_games: np.ndarray = field(init=False)
    margin: dict[str, Histogram] = field(default_factory=dict)
    decided: int = 0  # games with a sole winner
    led: np.ndarray = field(init=False)
    trailed: int = 0
    lead_changes: Histogram = field(default_factory=Histogram)
    last_change: Histogram = field(default_factory=Histogram)

    def __post_init__(self) -> None:
        self.pair_wins = np.zeros((self.k, self.k))
        self.pair_games = np.zeros((self.k, self.k))
        self.led = np.zeros(self.checkpoints, dtype=np.int64)

    def merge(self, other: _GameTally) -> None:
        self.pair_wins += other.pair_wins
        self.pair_games += other.pair_games
        for reason, h in other.margin.items():
            self.margin.setdefault(reason, Histogram()).counts.update(h.counts)
        self.decided += other.decided
        self.led += other.led
        self.trailed += other.trailed
        self.lead_changes.counts.update(other.lead_changes.counts)
        self.last_change.counts.update(other.last_change.counts)


def _part_arrays(run: RunData, part: Path, columns: list[str]) -> dict[str, np.ndarray]:
    """The columns of one part as (games, seats) arrays; end_reason per game."""
    try:
        df = pl.read_parquet(part, columns=columns)
    except (pl.exceptions.PolarsError, OSError) as e:
        raise _fail_unreadable(run.path, e) from None
    n = run.players
    if len(df) % n or not (df["seat"].to_numpy().reshape(-1, n) == np.arange(n)).all():
        # The runner writes game-major, seat-minor rows; anything else is re-sorted.
        df = df.sort("game", "seat")
    codes = {s: i for i, s in enumerate(run.strategies)}
    out = {c: df[c].to_numpy().reshape(-1, n) for c in columns
           if c not in ("strategy", "end_reason")}
    strategy = df["strategy"].cast(pl.String)
    if unknown := set(strategy.unique().to_list()) - codes.keys():
        raise UserError(f"results in {run.path} name strategies the manifest does not: "
                        f"{', '.join(sorted(unknown))}")
    strategy = strategy.replace_strict(codes, return_dtype=pl.Int64)
    out["strategy"] = strategy.to_numpy().reshape(-1, n)
    # End reasons as small int codes (numpy sorts strings slowly); labels in "end_labels".
    reasons = df["end_reason"].cast(pl.String).gather_every(n)
    labels = sorted(reasons.unique().to_list())
    out["end_reason"] = reasons.replace_strict({r: i for i, r in enumerate(labels)},
                                               return_dtype=pl.Int64).to_numpy()
    out["end_labels"] = np.array(labels, dtype=object)
    return out


def _tally_pairs(t: _GameTally, strategy: np.ndarray, rank: np.ndarray) -> None:
    n = strategy.shape[1]
    for a in range(n):
        for b in range(a + 1, n):
            sa, sb = strategy[:, a], strategy[:, b]
            score = np.where(rank[:, a] < rank[:, b], 1.0, np.where(rank[:, a] == rank[:, b], 0.5, 0.0))
            keep = sa != sb
            np.add.at(t.pair_wins, (sa[keep], sb[keep]), score[keep])
            np.add.at(t.pair_wins, (sb[keep], sa[keep]), 1.0 - score[keep])
            np.add.at(t.pair_games, (sa[keep], sb[keep]), 1.0)
            np.add.at(t.pair_games, (sb[keep], sa[keep]), 1.0)


def _sole_leader(standings: np.ndarray) -> np.ndarray:
    """Per game, the seat strictly ahead of all others, or -1 on a tie for the lead."""
    top = standings.max(axis=1, keepdims=True)
    sole = (standings == top).sum(axis=1) == 1
    return np.where(sole, standings.argmax(axis=1), -1)


def _tally_quality(t: _GameTally, winner: np.ndarray, standings: list[np.ndarray]) -> None:
    """Leads over the checkpoints of the games with a sole winner; the result itself is
    the final point of the sequence, so a late comeback counts as a lead change."""
    rows = np.arange(len(winner))
    trailed = np.zeros(len(winner), dtype=bool)
    current = np.full(len(winner), -1)  # the latest sole leader seen
    changes = np.zeros(len(winner), dtype=np.int64)
    last = np.zeros(len(winner), dtype=np.int64)
    for c, s in enumerate([*standings, None]):
        leader = winner if s is None else _sole_leader(s)
        if s is not None:
            t.led[c] += int((leader == winner).sum())
            trailed |= s[rows, winner] < s.max(axis=1)
        changed = (leader >= 0) & (current >= 0) & (leader != current)
        changes += changed
        last = np.where(changed, c, last)
        current = np.where(leader >= 0, leader, current)
    t.trailed += int(trailed.sum())
    t.lead_changes.add(changes)
    t.last_change.add(last)


def _tally_part(run: RunData, t: _GameTally, part: Path, checkpoints: list[str]) -> None:
    a = _part_arrays(run, part, ["game", "seat", "strategy", "score", "rank", "win",
                                 "end_reason", *checkpoints])
    _tally_pairs(t, a["strategy"], a["rank"])
    sole = (a["win"] == 1).any(axis=1)
    winner = a["win"][sole].argmax(axis=1)
    score = a["score"][sole].astype(np.int64)
    rows = np.arange(len(winner))
    others = score.copy()
    others[rows, winner] = np.iinfo(np.int64).min
    margin = score[rows, winner] - others.max(axis=1)
    reasons = a["end_reason"][sole]
    for code, reason in enumerate(a["end_labels"]):
        if (chosen := reasons == code).any():
            t.margin.setdefault(str(reason), Histogram()).add(margin[chosen])
    t.decided += int(sole.sum())
    if checkpoints:
        _tally_quality(t, winner, [a[c][sole] for c in checkpoints])


# ---- assembling the analysis ----

def _strategies(run: RunData, t: dict[str, pl.DataFrame], tally: _GameTally) -> Strategies:
    by_name = {r["strategy"]: r for r in t["strategy"].to_dicts()}
    rows = [by_name[s] for s in run.strategies if s in by_name]
    names = [r["strategy"] for r in rows]
    m = Matchups(run.strategies, tally.pair_wins, tally.pair_games)
    ratings = stats.bradley_terry(m)
    edge = None
    if ratings is not None:
        best, worst = int(np.argmax(ratings.elo)), int(np.argmin(ratings.elo))
        if m.games[best, worst] > 0:
            edge = (m.names[best], m.names[worst], m.rate(best, worst))
    return Strategies(names, [stats.rate_vs(r["wins"], r["n"], 1 / run.players) for r in rows],
                      [_mean_ci(r) for r in rows], m, ratings, edge)


def _outcomes(t: dict[str, pl.DataFrame], tally: _GameTally, games: int) -> Outcomes:
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
    scores.counts.update(dict(zip(t["score"]["score"].to_list(), t["score"]["count"].to_list())))
    close_margin = max(1, round(0.05 * abs(scores.quantile(0.5))))
    close = sum(c for v, c in all_margins.counts.items() if 0 <= v <= close_margin)
    return Outcomes(
        end_reasons=[(r["end_reason"], stats.rate(r["games"], games)) for r in ends.to_dicts()],
        shared=stats.rate(shared, games), turns=turns, margin=tally.margin,
        close=stats.rate(close, all_margins.n), close_margin=close_margin)


def _quality(tally: _GameTally, checkpoints: list[str]) -> Quality | None:
    if not checkpoints or tally.decided == 0:
        return None
    return Quality([c.removeprefix(INTERIM_PREFIX) for c in checkpoints],
                   [stats.rate(int(x), tally.decided) for x in tally.led],
                   stats.rate(tally.trailed, tally.decided), tally.lead_changes, tally.last_change)


def _games_tally(run: RunData, checkpoints: list[str]) -> _GameTally:
    """Tally the parts on threads (parquet reads and numpy release the GIL), each into
    its own tally, merged as they finish: at most `workers` parts in memory at once."""
    def one(part: Path) -> _GameTally:
        t = _GameTally(len(run.strategies), len(checkpoints))
        _tally_part(run, t, part, checkpoints)
        return t

    total = _GameTally(len(run.strategies), len(checkpoints))
    with ThreadPoolExecutor(max_workers=min(os.cpu_count() or 1, len(run.parts))) as pool:
        for t in pool.map(one, run.parts):
            total.merge(t)
    return total


def analyze(path: Path | str) -> RunAnalysis:
    run = open_run(path)
    tables = _collect(run, _row_queries(run))
    games = int(tables["end"]["games"].sum())
    checkpoints = standings_columns(run.interims)
    tally = _games_tally(run, checkpoints)
    components = component_table(tables.get("features"), run.features)
    return RunAnalysis(run, games, _seat_balance(run, tables), _strategies(run, tables, tally),
                       _outcomes(tables, tally, games), components, _quality(tally, checkpoints))


def pooled_strategies(analyses: Iterable[RunAnalysis]) -> tuple[Matchups, Ratings | None] | None:
    """The head-to-head results of several runs of one game added up (by strategy spec),
    with ratings fitted to all of them: how a balance sweep of several tables ranks every
    bot. None unless there are several runs, all of the same game."""
    analyses = list(analyses)
    if len(analyses) < 2 or len({a.run.manifest.get("game") for a in analyses}) != 1:
        return None
    names = list(dict.fromkeys(n for a in analyses for n in a.strategies.matchups.names))
    k = len(names)
    wins, games = np.zeros((k, k)), np.zeros((k, k))
    for a in analyses:
        m = a.strategies.matchups
        at = [names.index(n) for n in m.names]
        wins[np.ix_(at, at)] += m.wins
        games[np.ix_(at, at)] += m.games
    pooled = Matchups(names, wins, games)
    return pooled, stats.bradley_terry(pooled)
