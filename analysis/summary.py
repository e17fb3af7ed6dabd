"""The summary of a run directory: win rates (with 95% Wilson intervals) by seat, by turn
position and by strategy, shared victories, mean scores and end reasons. When the
results have a feature column named like GROUPING (a game's way of saying which scenario
a game was dealt, e.g. a solo game's goal card), win rates per value of it too.

Read off the tallies the runner writes beside each part (a few cells per part); a part
without a proven tally (none, or one without a checksum: by hand or by an older chocosim)
is tallied from its rows, and the summary names it as unproven, never complete. The parts are
first checked against the manifest (simcore.parts.list_parts): hashing them is most of
a summary's time, about 1.3 s per gigabyte of parts (0.31 s of 0.40 s for 2 million
two-player Fabryka games)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import ArrayLike

from simcore.errors import UserError
from simcore.parts import AGAIN, check_parts, list_parts, read_tally, scan_parts
from simcore.runner import GROUPING, TALLY_CELLS

__all__ = ["Summary", "summarize", "wilson", "scan_run", "GROUPING"]

CONFIDENCE = 0.95
_CELL_SCHEMA = {"seat": pl.Int64, "position": pl.Int64, "strategy": pl.String,
                "end_reason": pl.String, "rows": pl.Int64, "wins": pl.Float64,
                "score_sum": pl.Int64, "shared": pl.Float64}
_GROUP_SCHEMA = {"value": pl.Int64, "rows": pl.Int64, "wins": pl.Float64, "score_sum": pl.Int64}


@dataclass(frozen=True)
class Summary:
    manifest: dict[str, Any]
    games: int  # games found in the directory (n_games of the manifest once complete)
    by_seat: pl.DataFrame  # seat, games, wins, win_rate, ci_low, ci_high, mean_score
    by_strategy: pl.DataFrame  # strategy, plays (games x seats it held), wins, win_rate, ci..., mean_score
    draws: pl.DataFrame  # one row: games, shared (victories), rate, ci_low, ci_high
    end_reasons: pl.DataFrame  # end_reason, games, share
    # <grouping column>, plays (games x seats), wins, win_rate, ci..., mean_score; None
    # when the results have no GROUPING column.
    by_group: pl.DataFrame | None = None
    # position (0 acts first), games, wins, win_rate, ci..., mean_score; None for results
    # without a position column (written before chocosim recorded it).
    by_position: pl.DataFrame | None = None
    # One line per part read without proof (simcore.parts.part_proof): its figures are
    # counted, but the run is not complete until the run's command plays it again.
    unproven: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return self.games == self.manifest.get("n_games") and not self.unproven

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain JSON values (`chocosim summary --json`)."""
        tables = {"by_seat": self.by_seat, "by_position": self.by_position,
                  "by_strategy": self.by_strategy, "by_group": self.by_group,
                  "end_reasons": self.end_reasons}
        return {"manifest": self.manifest, "games": self.games, "complete": self.complete,
                "unproven": list(self.unproven),
                "shared_victories": self.draws.row(0, named=True),
                **{k: None if v is None else v.to_dicts() for k, v in tables.items()},
                "confidence": CONFIDENCE}


def wilson(successes: ArrayLike, n: ArrayLike) -> tuple[Any, Any]:
    """95% Wilson interval of successes/n. A shared victory counts 1/k of a win, so
    `successes` may be fractional (the mean win times n)."""
    # The formula written out rather than statsmodels' proportion_confint (the same
    # interval): importing statsmodels takes a second, longer than a whole summary.
    s, n = np.asarray(successes, dtype=np.float64), np.asarray(n, dtype=np.float64)
    z = NormalDist().inv_cdf(1 - (1 - CONFIDENCE) / 2)
    p = s / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low, high = center - half, center + half
    return (low[()], high[()]) if low.ndim == 0 else (low, high)


def scan_run(out: Path | str) -> pl.LazyFrame:
    """The results table of a run directory, lazily."""
    return scan_parts(list_parts(Path(out)))


def _unreadable(part: Path, e: Exception) -> UserError:
    return UserError(f"results part {part} is unreadable ({str(e).splitlines()[0]}); "
                     "running the run's command again plays its games again")


def _tally_rows(part: Path) -> tuple[pl.DataFrame, pl.DataFrame | None, str | None]:
    """The tally of a part written without one (by hand, or by an older chocosim), from
    its rows."""
    lazy = scan_parts([part])
    names = lazy.collect_schema().names()
    win = pl.col("win").cast(pl.Float64)
    position = pl.col("position").cast(pl.Int64) if "position" in names else pl.lit(None, pl.Int64)
    cells = (lazy.group_by(pl.col("seat").cast(pl.Int64), position.alias("position"),
                           pl.col("strategy").cast(pl.String), pl.col("end_reason").cast(pl.String))
             .agg(rows=pl.len().cast(pl.Int64), wins=win.sum(),
                  score_sum=pl.col("score").cast(pl.Int64).sum(),
                  shared=win.filter(win.is_between(0, 1, closed="none")).sum())
             .collect())
    key = next((k for k in GROUPING if k in names), None)
    if key is None:
        return cells, None, None
    group = (lazy.group_by(pl.col(key).cast(pl.Int64).alias("value"))
             .agg(rows=pl.len().cast(pl.Int64), wins=win.sum(),
                  score_sum=pl.col("score").cast(pl.Int64).sum())
             .collect())
    return cells, group, key


def _tallies(out: Path) -> tuple[pl.DataFrame, pl.DataFrame | None, str | None, tuple[str, ...]]:
    """Every part's tally: the cells (TALLY_CELLS with their sums) and the per-value
    counts of the grouping feature, each summed over parts; and a line per unproven part."""
    cells, groups, key = [], [], None
    parts, unproven = check_parts(out)
    for part in parts:
        try:
            tally = read_tally(part)
            if tally is None or part in unproven:  # its tally's counts are not proven either
                c, g, k = _tally_rows(part)
            else:
                c = pl.DataFrame(tally["cells"], schema=_CELL_SCHEMA, orient="row")
                g = k = None
                if tally.get("group"):
                    k = tally["group"]["key"]
                    g = pl.DataFrame(tally["group"]["cells"], schema=_GROUP_SCHEMA, orient="row")
        except (OSError, ValueError, KeyError, TypeError, pl.exceptions.PolarsError) as e:
            raise _unreadable(part, e) from None
        cells.append(c.select(*_CELL_SCHEMA).cast(_CELL_SCHEMA))
        if g is not None:
            groups.append(g.cast(_GROUP_SCHEMA))
            key = k
    cells_df = (pl.concat(cells).group_by(*TALLY_CELLS)
                .agg(pl.col("rows", "wins", "score_sum", "shared").sum()))
    group_df = pl.concat(groups).group_by("value").agg(pl.col("rows", "wins", "score_sum").sum()) \
        if groups else None
    lines = tuple(f"results part {part} {why}; {AGAIN}" for part, why in unproven.items())
    return cells_df, group_df, key, lines


def _win_table(cells: pl.DataFrame, key: str, n: str) -> pl.DataFrame:
    df = (cells.group_by(key)
          .agg(pl.col("rows").sum().alias(n), wins=pl.col("wins").sum(),
               mean_score=pl.col("score_sum").sum() / pl.col("rows").sum())
          .with_columns(win_rate=pl.col("wins") / pl.col(n))
          .sort(key))
    low, high = wilson(df["wins"].to_numpy(), df[n].to_numpy())
    return df.with_columns(ci_low=pl.Series(low), ci_high=pl.Series(high)).select(
        key, n, "wins", "win_rate", "ci_low", "ci_high", "mean_score")


def _read_manifest(out: Path) -> dict[str, Any]:
    from analysis.manifest import read_manifest

    return read_manifest(out)


def summarize(out: Path | str) -> Summary:
    out = Path(out)
    manifest = _read_manifest(out)
    # Every table is read off the cells (seat x position x strategy x end reason), so
    # memory does not grow with the run. Per-game facts come from seat 0's cells (one
    # row per game), and the k seats sharing a victory hold 1/k of it each.
    cells, group, key, unproven = _tallies(out)
    end_reasons = (cells.filter(pl.col("seat") == 0).group_by("end_reason").agg(games=pl.col("rows").sum())
                   .sort("games", "end_reason", descending=[True, False]))
    n = int(end_reasons["games"].sum())
    n_shared = round(cells["shared"].sum())
    low, high = wilson(n_shared, n)
    draws = pl.DataFrame({"games": [n], "shared": [n_shared], "rate": [n_shared / n],
                          "ci_low": [low], "ci_high": [high]})
    positioned = cells.filter(pl.col("position").is_not_null())
    return Summary(
        manifest=manifest, games=n,
        by_group=None if group is None else _win_table(group.rename({"value": key}), key, "plays"),
        by_seat=_win_table(cells, "seat", "games"),
        by_position=_win_table(positioned, "position", "games") if positioned.height == cells.height else None,
        by_strategy=_win_table(cells, "strategy", "plays"),
        draws=draws, end_reasons=end_reasons.with_columns(share=pl.col("games") / n), unproven=unproven,
    )
