"""Balance metrics of a run directory, generic over games: everything is derived from the
columns every run has (seat, strategy, score, rank, win, first, turns, end_reason) and
from the per-seat feature and interim columns the game declares.

Memory stays bounded however many games a run holds: one pass reads the parts one at
a time (a part is at most a chunk of the run, written so that it fits in a worker's
memory) on a few threads and reduces each to small tables of counts and sums, merged
as they finish: row-level cells (per seat, position, strategy, feature value...) by
integer bincounts, and the per-game facts that need every seat of a game at once
(margins, head-to-head results, leads) as counts and histograms.
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
from simcore.meta import FeatureRoles
from simcore.registry import games as registered_games
from simcore.parts import AGAIN, check_part, check_parts, read_part, scan_parts, write_text
from simcore.runner import MANIFEST

__all__ = ["RunData", "open_run", "analyze", "RunAnalysis", "SeatBalance", "Strategies",
           "Outcomes", "Quality", "Histogram", "BASE_COLUMNS", "standings_columns",
           "component_table", "component_thresholds", "effect_columns", "feature_threshold",
           "pooled_strategies", "PositionBalance", "position_balance", "pooled_positions", "MIN_EFFECT",
           "Breakdown", "SetupEffect", "LEAD_CHANGES"]

# The columns every results table has; all others are the game's features and interims.
BASE_COLUMNS = ("run_id", "game", "seed", "seat", "strategy", "score", "rank", "win",
                "first", "position", "turns", "end_reason")
INTERIM_PREFIX = "interim_"
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
    roles: FeatureRoles  # how the game declares its features (default: all components)
    # One line per part read without proof (simcore.parts.part_proof), naming it.
    unproven: tuple[str, ...] = ()

    def role_features(self, *roles: str) -> list[str]:
        return [f for f in self.features if self.roles.role(f) in roles]

    def scan(self) -> pl.LazyFrame:
        return scan_parts(self.parts)


def _fail_unreadable(path: Path, error: Exception) -> UserError:
    return UserError(f"results in {path} are unreadable: {str(error).splitlines()[0]}")


def open_run(path: Path | str, roles: FeatureRoles | None = None) -> RunData:
    """A run directory checked enough that the analysis can trust it: UserError (one
    line) for a missing directory, a missing or broken manifest, no parts, or parts
    without the results columns."""
    from analysis.manifest import read_manifest

    path = Path(path)
    manifest = read_manifest(path)
    try:
        specs = [str(s["spec"]) for s in manifest["strategies"]]
        players = int(manifest["players"])
    except (TypeError, KeyError, ValueError):
        raise UserError(f"run directory {path}: {MANIFEST} lacks or garbles players or strategies") from None
    parts, unproven = check_parts(path)
    for part in parts:  # a truncated or corrupt part is named (its footer does not read)
        try:
            check_part(part)
        except (pl.exceptions.PolarsError, OSError) as e:
            raise UserError(f"results part {part} is unreadable ({str(e).splitlines()[0]}); "
                            "running the run's command again plays its games again") from None
    try:
        schema = scan_parts(parts).collect_schema()
    except (pl.exceptions.PolarsError, OSError) as e:
        raise _fail_unreadable(path, e) from None
    missing = [c for c in BASE_COLUMNS if c not in schema]
    if missing:
        raise UserError(f"results in {path} lack the column(s) {', '.join(missing)}")
    names = [c for c in schema.names() if c not in BASE_COLUMNS]
    if roles is None:
        spec = registered_games().get(str(manifest.get("game")))
        roles = spec.features if spec is not None else FeatureRoles()
    return RunData(path, manifest, parts, players, list(dict.fromkeys(specs)),
                   [c for c in names if not c.startswith(INTERIM_PREFIX)],
                   [c for c in names if c.startswith(INTERIM_PREFIX)], roles,
                   tuple(f"results part {part} {why}; {AGAIN}" for part, why in unproven.items()))


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
        counts = np.bincount(values.astype(np.int64) - low)  # widened first: int8 - low can wrap
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
    run: RunData
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


def _seat_balance(run: RunData, t: dict[str, pl.DataFrame], games: int) -> SeatBalance | None:
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


def _seat_sum(values: np.ndarray) -> np.ndarray:
    """Per game (row), the sum over its seats. Column by column: numpy's sum along rows
    of two to six seats is ten to twenty times slower on a part's 250,000 games."""
    total = np.zeros(len(values), dtype=np.uint8 if values.dtype == bool else np.float64)
    for seat in range(values.shape[1]):
        total += values[:, seat]
    return total


def effect_columns(strategy: np.ndarray, value: np.ndarray, win: np.ndarray, threshold: int, k: int,
                   missing_when_zero: bool = False) -> np.ndarray:
    """Per game (rows of games x seats arrays), for each strategy s < k: the wins and
    seats with the feature (value >= threshold) and without it, the columns
    stats.mantel_haenszel_games reads. Seats whose 0 means "missing" are left out."""
    counted = value != 0 if missing_when_zero else np.ones(value.shape, dtype=bool)
    has = value >= threshold
    out = np.zeros((len(value), 4 * k))
    for s in range(k):
        mine = (strategy == s) & counted
        with_, without = mine & has, mine & ~has
        out[:, 4 * s] = _seat_sum(win * with_)
        out[:, 4 * s + 1] = _seat_sum(with_)
        out[:, 4 * s + 2] = _seat_sum(win * without)
        out[:, 4 * s + 3] = _seat_sum(without)
    return out


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


# ---- one pass over the parts ----

Cells = dict[tuple[Any, ...], np.ndarray]  # key -> [rows, sum of each weight]


def _cells(keys: list[np.ndarray], weights: list[np.ndarray], sizes: list[int | None] | None = None) -> Cells:
    """Rows grouped by integer keys: per key tuple present, [rows, sum of each weight].
    A bincount over the combined index (sorting, as np.unique does, is ~10x slower).
    sizes: where known, key i lies in range(sizes[i]) (saves a min and a max)."""
    if len(keys[0]) == 0:
        return {}
    sizes = sizes or [None] * len(keys)
    los = [0 if size else int(k.min()) for k, size in zip(keys, sizes)]
    spans = [size or int(k.max()) - lo + 1 for k, lo, size in zip(keys, los, sizes)]
    # Built in place: one int64 array, not a temporary per step (this runs per feature
    # per part, and allocation and memory traffic were most of its cost).
    index = keys[0].astype(np.int64)
    for i, (k, lo, span) in enumerate(zip(keys, los, spans)):
        if i:
            index *= span
            index += k
        if lo:
            index -= lo
    size = int(np.prod(spans))
    counts = np.bincount(index, minlength=size)
    seen = np.flatnonzero(counts)
    table = np.column_stack([counts[seen].astype(float),
                             *[np.bincount(index, weights=w, minlength=size)[seen] for w in weights]])
    coords = [(c + lo).tolist() for c, lo in zip(np.unravel_index(seen, spans), los)]
    return dict(zip(zip(*coords), table))


def _add(into: Cells, cells: Cells) -> None:
    for key, value in cells.items():
        if key in into:
            into[key] += value
        else:
            into[key] = value.copy()


@dataclass
class _Tally:
    """What the pass over the parts accumulates: row-level cells (per seat, position,
    strategy, feature value...) and per-game facts (matchups, margins, leads)."""

    k: int  # strategies
    checkpoints: int
    cells: dict[Any, Cells] = field(default_factory=dict)
    moved: int = 0  # rows whose seat is not their turn position
    shared: float = 0.0  # win shares of shared victories
    pair_wins: np.ndarray = field(init=False)
    pair_games: np.ndarray = field(init=False)
    pair_moments: np.ndarray = field(init=False)  # game-level, see stats.Matchups.ahead_moments
    margin: dict[str, Histogram] = field(default_factory=dict)
    decided: int = 0  # games with a sole winner
    games: int = 0
    sole_leader: np.ndarray = field(init=False)  # per checkpoint: games with a sole leader
    leader_won: np.ndarray = field(init=False)  # ... and the win share that leader took
    trailed: int = 0
    lead_changes: Histogram = field(default_factory=Histogram)
    last_change: Histogram = field(default_factory=Histogram)

    def __post_init__(self) -> None:
        self.pair_wins = np.zeros((self.k, self.k))
        self.pair_games = np.zeros((self.k, self.k))
        self.pair_moments = np.zeros((self.k * self.k, self.k * self.k))
        self.sole_leader = np.zeros(self.checkpoints, dtype=np.int64)
        self.leader_won = np.zeros(self.checkpoints)

    def add(self, name: Any, cells: Cells) -> None:
        _add(self.cells.setdefault(name, {}), cells)

    def merge(self, other: _Tally) -> None:
        for name, cells in other.cells.items():
            self.add(name, cells)
        self.moved += other.moved
        self.shared += other.shared
        self.pair_wins += other.pair_wins
        self.pair_games += other.pair_games
        self.pair_moments += other.pair_moments
        for reason, h in other.margin.items():
            self.margin.setdefault(reason, Histogram()).counts.update(h.counts)
        self.decided += other.decided
        self.games += other.games
        self.sole_leader += other.sole_leader
        self.leader_won += other.leader_won
        self.trailed += other.trailed
        self.lead_changes.counts.update(other.lead_changes.counts)
        self.last_change.counts.update(other.last_change.counts)


def _codes(column: pl.Series) -> tuple[np.ndarray, list[str]]:
    """A string, categorical or enum column as int codes and the labels they index: read
    through the physical codes (casting every row to strings is slow)."""
    if not isinstance(column.dtype, pl.Categorical | pl.Enum):
        column = column.cast(pl.String).cast(pl.Categorical)
    physical = column.to_physical().to_numpy()
    present = column.unique()
    labels = present.cast(pl.String).to_list()
    lookup = np.zeros(int(present.to_physical().max()) + 1, dtype=np.int64)
    lookup[present.to_physical().to_numpy()] = np.arange(len(labels))
    return lookup[physical], labels


def _part_arrays(run: RunData, part: Path, columns: list[str]) -> dict[str, Any]:
    """The columns of one part as (games, seats) arrays; strategy as the index into
    run.strategies; end_reason per game as codes into "end_labels"."""
    try:
        df = read_part(part, columns)
    except (pl.exceptions.PolarsError, OSError) as e:
        raise _fail_unreadable(run.path, e) from None
    n = run.players
    if len(df) % n or not (df["seat"].to_numpy().reshape(-1, n) == np.arange(n)).all():
        # The runner writes game-major, seat-minor rows; anything else is re-sorted.
        df = df.sort("game", "seat")
    out: dict[str, Any] = {c: df[c].to_numpy().reshape(-1, n) for c in columns
                           if c not in ("strategy", "end_reason")}
    codes, labels = _codes(df["strategy"])
    if unknown := set(labels) - set(run.strategies):
        raise UserError(f"results in {run.path} name strategies the manifest does not: "
                        f"{', '.join(sorted(unknown))}")
    out["strategy"] = np.array([run.strategies.index(s) for s in labels], dtype=np.int64)[codes].reshape(-1, n)
    reasons, out["end_labels"] = _codes(df["end_reason"].gather_every(n))
    out["end_reason"] = reasons
    return out


def _tally_rows(run: RunData, t: _Tally, a: dict[str, Any]) -> None:
    win = a["win"].ravel().astype(np.float64)
    score = a["score"].ravel().astype(np.int64)
    seat, position, strategy = a["seat"].ravel(), a["position"].ravel(), a["strategy"].ravel()
    as_float = score.astype(np.float64)
    moments = [win, as_float, as_float * as_float]
    n, k = [run.players], [len(run.strategies)]
    t.add("seat", _cells([seat], moments, n))
    t.add("position", _cells([position], moments, n))
    t.add("strategy", _cells([strategy], moments, k))
    t.add("score", _cells([seat, score], []))
    t.moved += int((seat != position).sum())
    t.add("end", {(a["end_labels"][code],): v for (code,), v in _cells([a["end_reason"]], []).items()})
    t.add("turns", _cells([a["turns"][:, 0]], []))
    # The k seats sharing a victory hold 1/k each: their win shares sum to 1 a game.
    t.shared += float(win[(win > 0) & (win < 1)].sum())
    # Features by strategy, so effects can be estimated within the strategy that held them.
    for f in run.role_features("component", "behaviour", "setup"):
        t.add(("feature", f), _cells([strategy, a[f].ravel()], [win], [k[0], None]))
    if outcomes := run.role_features("outcome"):
        values = [a[f].ravel().astype(np.float64) for f in outcomes]
        t.add("outcomes", _cells([strategy, (win >= 1).astype(np.int64)], [w for x in values for w in (x, x * x)]))


def _tally_pairs(t: _Tally, strategy: np.ndarray, rank: np.ndarray) -> None:
    k = t.k
    ahead = stats.ahead_counts(strategy, rank, k)
    wins = ahead.sum(axis=0)
    t.pair_wins += wins
    t.pair_games += wins + wins.T
    flat = ahead.reshape(len(ahead), k * k)
    t.pair_moments += flat.T @ flat


def _sole_leader(standings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per game, the seat strictly ahead of all others (-1 on a tie for the lead) and
    the top value. Column by column: numpy reduces a handful of seats along axis 1
    several times slower than it combines whole columns."""
    columns = np.ascontiguousarray(standings.T)
    top = columns[0].copy()
    leader = np.zeros(len(top), dtype=np.int64)
    at_top = np.ones(len(top), dtype=np.int64)
    for seat in range(1, len(columns)):
        c = columns[seat]
        higher = c > top
        at_top = np.where(higher, 1, at_top + (c == top))
        leader[higher] = seat
        np.maximum(top, c, out=top)
    return np.where(at_top == 1, leader, -1), top


def _tally_leaders(t: _Tally, win: np.ndarray, leaders: list[np.ndarray]) -> None:
    """Over all games: at each checkpoint, the games with a sole leader and the win
    share that leader went on to take, i.e. P(win | sole leader); ties apart."""
    rows = np.arange(len(win))
    for c, leader in enumerate(leaders):
        has = leader >= 0
        t.sole_leader[c] += int(has.sum())
        t.leader_won[c] += float(win[rows[has], leader[has]].sum())


def _tally_quality(t: _Tally, winner: np.ndarray, final: np.ndarray, standings: list[np.ndarray],
                   leaders: list[np.ndarray], tops: list[np.ndarray]) -> None:
    """Leads over the checkpoints (`leaders`: the sole leader per checkpoint, -1 on a
    tie) of every game; the result is the final point of the sequence (`final`: the
    sole winner, -1 for a shared victory, which changes nothing), so a late comeback
    counts as a lead change. compare's "lead changes per game" is the same count over
    the same games. Whether the winner trailed is asked of the games with a sole winner
    (`winner`: theirs, in game order)."""
    sole = final >= 0
    rows = np.arange(len(winner))
    trailed = np.zeros(len(winner), dtype=bool)
    for s, top in zip(standings, tops):
        trailed |= s[sole][rows, winner] < top[sole]
    current = np.full(len(final), -1)  # the latest sole leader seen
    changes = np.zeros(len(final), dtype=np.int64)
    last = np.zeros(len(final), dtype=np.int64)
    for c, leader in enumerate([*leaders, final]):
        changed = (leader >= 0) & (current >= 0) & (leader != current)
        changes += changed
        last = np.where(changed, c, last)
        current = np.where(leader >= 0, leader, current)
    t.trailed += int(trailed.sum())
    t.lead_changes.add(changes)
    t.last_change.add(last)


def _tally_part(run: RunData, t: _Tally, part: Path, checkpoints: list[str]) -> None:
    features = run.role_features("component", "behaviour", "setup", "outcome")
    a = _part_arrays(run, part, ["game", "seat", "strategy", "score", "rank", "win", "position",
                                 "turns", "end_reason", *features, *checkpoints])
    t.games += len(a["win"])
    _tally_rows(run, t, a)
    if run.players < 2:
        return  # solo: no opponents, margins or leads
    _tally_pairs(t, a["strategy"], a["rank"])
    leader, top = _sole_leader(a["win"])
    sole = top == 1  # a sole winner holds a whole win
    winner = leader[sole]
    scores = np.ascontiguousarray(a["score"][sole].astype(np.int64).T)  # seat by seat
    best_other = np.full(len(winner), np.iinfo(np.int64).min)
    for seat, column in enumerate(scores):
        np.maximum(best_other, column, out=best_other, where=winner != seat)
    margin = scores[winner, np.arange(len(winner))] - best_other
    reasons = a["end_reason"][sole]
    for code, reason in enumerate(a["end_labels"]):
        if (chosen := reasons == code).any():
            t.margin.setdefault(str(reason), Histogram()).add(margin[chosen])
    t.decided += int(sole.sum())
    if checkpoints:
        leaders, tops = zip(*(_sole_leader(a[c]) for c in checkpoints))
        _tally_leaders(t, a["win"], list(leaders))
        _tally_quality(t, winner, np.where(sole, leader, -1), [a[c] for c in checkpoints], list(leaders),
                       list(tops))


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


def _tables(run: RunData, t: _Tally) -> dict[str, pl.DataFrame]:
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
    if effects := run.role_features("component", "behaviour", "setup"):
        tables["features"] = pl.concat([
            _frame(c.get(("feature", f), {}), ["strategy", "value"], ["wins"], names)
            .select(feature=pl.lit(f), strategy="strategy", value="value", n="n", wins="wins")
            for f in effects])
    if outcomes := run.role_features("outcome"):
        sums = [name for f in outcomes for name in (f"{f}:sum", f"{f}:sq")]
        tables["outcomes"] = (_frame(c.get("outcomes", {}), ["strategy", "won"], sums, names)
                              .with_columns(pl.col("won").cast(pl.Boolean)))
    return tables


def _strategies(run: RunData, t: dict[str, pl.DataFrame], tally: _Tally) -> Strategies:
    by_name = {r["strategy"]: r for r in t["strategy"].to_dicts()}
    rows = [by_name[s] for s in run.strategies if s in by_name]
    names = [r["strategy"] for r in rows]
    m = Matchups(run.strategies, tally.pair_wins, tally.pair_games, tally.pair_moments)
    ratings = stats.bradley_terry(m)
    edge = None
    if ratings is not None:
        best, worst = int(np.argmax(ratings.elo)), int(np.argmin(ratings.elo))
        if m.games[best, worst] > 0:
            edge = (m.names[best], m.names[worst], m.rate(best, worst))
    return Strategies(names, [stats.rate_vs(r["wins"], r["n"], 1 / run.players) for r in rows],
                      [_mean_ci(r) for r in rows], m, ratings, edge)


def _outcomes(t: dict[str, pl.DataFrame], tally: _Tally, games: int) -> Outcomes:
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
        close=stats.rate(close, all_margins.n), close_margin=close_margin, scores=scores)


def _quality(tally: _Tally, checkpoints: list[str]) -> Quality | None:
    if not checkpoints or tally.decided == 0:
        return None
    return Quality([c.removeprefix(INTERIM_PREFIX) for c in checkpoints],
                   [stats.rate(w, int(n)) if n else None for w, n in zip(tally.leader_won, tally.sole_leader)],
                   [stats.rate(tally.games - int(n), tally.games) for n in tally.sole_leader],
                   stats.rate(tally.trailed, tally.decided), tally.lead_changes, tally.last_change)


# Bumped whenever what a part's tally holds changes, so older cache files are ignored.
_CACHE_VERSION = 3


def _cache_path(part: Path) -> Path:
    # A hidden name that can never match a part's.
    return part.with_name(f".tally-{part.stem.removeprefix('part-')}.json")


def _cache_key(run: RunData, part: Path, checkpoints: list[str]) -> dict[str, Any]:
    st = part.stat()
    return {"version": _CACHE_VERSION, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "players": run.players, "strategies": run.strategies, "checkpoints": checkpoints,
            "roles": {r: run.role_features(r) for r in ("component", "behaviour", "setup", "outcome")}}


def _encode(key: Any) -> Any:
    return list(key) if isinstance(key, tuple) else key


def _tally_to_json(t: _Tally) -> dict[str, Any]:
    return {"cells": [[_encode(name), [[list(k), v.tolist()] for k, v in cells.items()]]
                      for name, cells in t.cells.items()],
            "moved": t.moved, "shared": t.shared, "pair_wins": t.pair_wins.tolist(),
            "pair_games": t.pair_games.tolist(), "pair_moments": t.pair_moments.tolist(),
            "margin": {r: list(h.counts.items()) for r, h in t.margin.items()},
            "decided": t.decided, "games": t.games, "sole_leader": t.sole_leader.tolist(),
            "leader_won": t.leader_won.tolist(), "trailed": t.trailed,
            "lead_changes": list(t.lead_changes.counts.items()),
            "last_change": list(t.last_change.counts.items())}


def _tally_from_json(d: dict[str, Any], k: int, checkpoints: int) -> _Tally:
    t = _Tally(k, checkpoints)
    for name, cells in d["cells"]:
        t.cells[tuple(name) if isinstance(name, list) else name] = {tuple(key): np.array(v) for key, v in cells}
    t.moved, t.shared, t.decided, t.games, t.trailed = d["moved"], d["shared"], d["decided"], d["games"], d["trailed"]
    t.pair_wins, t.pair_games = np.array(d["pair_wins"]).reshape(k, k), np.array(d["pair_games"]).reshape(k, k)
    t.pair_moments = np.array(d["pair_moments"]).reshape(k * k, k * k)
    t.margin = {r: Histogram(Counter(dict(map(tuple, c)))) for r, c in d["margin"].items()}
    t.sole_leader = np.array(d["sole_leader"], dtype=np.int64)
    t.leader_won = np.array(d["leader_won"], dtype=float)
    t.lead_changes = Histogram(Counter(dict(map(tuple, d["lead_changes"]))))
    t.last_change = Histogram(Counter(dict(map(tuple, d["last_change"]))))
    return t


def _part_tally(run: RunData, part: Path, checkpoints: list[str]) -> _Tally:
    """A part's tally, from its cache file when that was made from this very part
    (same size and time) by this analysis version for the same question; else
    computed and cached (best effort: a read-only run directory just is not cached).
    JSON, not pickle: a run directory from elsewhere must not run code."""
    key = _cache_key(run, part, checkpoints)
    cache = _cache_path(part)
    try:
        stored = json.loads(cache.read_text())
        if stored.get("key") == key:
            return _tally_from_json(stored["tally"], len(run.strategies), len(checkpoints))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    t = _Tally(len(run.strategies), len(checkpoints))
    _tally_part(run, t, part, checkpoints)
    text = json.dumps({"key": key, "tally": _tally_to_json(t)})
    try:
        write_text(cache, text)
    except OSError:
        pass
    return t


def _games_tally(run: RunData, checkpoints: list[str]) -> _Tally:
    """One pass: tally the parts on threads (part reads and numpy release the GIL), each into
    its own tally, merged as they finish: at most `workers` parts in memory at once. A
    part's tally is cached beside it, so a second report of the same run reads no rows."""
    def one(part: Path) -> _Tally:
        return _part_tally(run, part, checkpoints)

    total = _Tally(len(run.strategies), len(checkpoints))
    with ThreadPoolExecutor(max_workers=min(os.cpu_count() or 1, len(run.parts))) as pool:
        for t in pool.map(one, run.parts):
            total.merge(t)
    return total


# A second pass for the component effects' game-level moments: their columns depend on
# each feature's threshold, which only the first pass's histograms decide. Cached per
# part like the tally, keyed by the thresholds.
_EFFECTS_VERSION = 1


def _part_effects(run: RunData, part: Path, thresholds: dict[str, int]) -> dict[str, stats.Moments]:
    k = len(run.strategies)
    key = {"version": _EFFECTS_VERSION, **_cache_key(run, part, []), "thresholds": thresholds}
    cache = part.with_name(f".effects-{part.stem.removeprefix('part-')}.json")
    try:
        stored = json.loads(cache.read_text())
        if stored.get("key") == key:
            out = {}
            for name, (n, total, cross) in stored["moments"].items():
                m = stats.Moments(4 * k)
                m.n, m.total, m.cross = n, np.array(total), np.array(cross).reshape(4 * k, 4 * k)
                out[name] = m
            return out
    except (OSError, ValueError, KeyError, TypeError):
        pass
    a = _part_arrays(run, part, ["game", "seat", "strategy", "win", "end_reason", *thresholds])
    out = {}
    for name, threshold in thresholds.items():
        m = stats.Moments(4 * k)
        m.add(effect_columns(a["strategy"], a[name], a["win"], threshold, k, run.roles.missing_when_zero(name)))
        out[name] = m
    text = json.dumps({"key": key, "moments": {name: [m.n, m.total.tolist(), m.cross.ravel().tolist()]
                                               for name, m in out.items()}})
    try:
        write_text(cache, text)
    except OSError:
        pass
    return out


def _games_effects(run: RunData, thresholds: dict[str, int]) -> dict[str, stats.Moments]:
    """Per component feature, the moments of effect_columns over every game of the run."""
    total = {name: stats.Moments(4 * len(run.strategies)) for name in thresholds}
    if not thresholds:
        return total
    with ThreadPoolExecutor(max_workers=min(os.cpu_count() or 1, len(run.parts))) as pool:
        for part in pool.map(lambda p: _part_effects(run, p, thresholds), run.parts):
            for name, m in part.items():
                t = total[name]
                t.n += m.n
                t.total += m.total
                t.cross += m.cross
    return total


def analyze(path: Path | str, min_effect: float = MIN_EFFECT, roles: FeatureRoles | None = None) -> RunAnalysis:
    """Everything the report shows about one run directory; `min_effect` is the
    smallest within-strategy difference in win rate stated as a finding; `roles`
    overrides how the game declares its features (default: the registered game's)."""
    if not 0 <= min_effect < 1:
        raise UserError(f"min_effect = {min_effect}: allowed is a share of games from 0 to below 1")
    run = open_run(path, roles)
    checkpoints = standings_columns(run.interims) if run.players > 1 else []
    tally = _games_tally(run, checkpoints)
    tables = _tables(run, tally)
    games = tally.games
    thresholds = component_thresholds(tables.get("features"), run.features, run.roles)
    components = component_table(tables.get("features"), run.features, run.roles, min_effect,
                                 _games_effects(run, thresholds))
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
    pooled = stats.pool_matchups(names, [a.strategies.matchups for a in analyses])
    return pooled, stats.bradley_terry(pooled)


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
