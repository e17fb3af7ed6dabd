"""The summary of a run directory: win rates (with 95% Wilson intervals) by seat, by turn
position and by strategy, shared victories, mean scores and end reasons. When the
results have a feature column named like GROUPING (a game's way of saying which scenario
a game was dealt, e.g. a solo game's goal card), win rates per value of it too.

Read off the tallies the runner writes beside each part (a few cells per part, summed
by analysis.rundir.RunDir.part_cells); a part without a proven tally (none, or one
without a checksum: by hand or by an older chocosim) is tallied from its rows, and the
summary names it as unproven, never complete. The parts are first checked against the
manifest (simcore.parts.check_parts): hashing them is most of a summary's time, about
1.3 s per gigabyte of parts (0.31 s of 0.40 s for 2 million two-player Fabryka games)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import ArrayLike

from analysis.display import Shown
from analysis.rundir import RunDir
from simcore.runner import GROUPING

__all__ = ["Summary", "summarize", "wilson", "GROUPING"]

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Summary(Shown):
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


def _win_table(cells: pl.DataFrame, key: str, n: str) -> pl.DataFrame:
    df = (cells.group_by(key)
          .agg(pl.col("rows").sum().alias(n), wins=pl.col("wins").sum(),
               mean_score=pl.col("score_sum").sum() / pl.col("rows").sum())
          .with_columns(win_rate=pl.col("wins") / pl.col(n))
          .sort(key))
    low, high = wilson(df["wins"].to_numpy(), df[n].to_numpy())
    return df.with_columns(ci_low=pl.Series(low), ci_high=pl.Series(high)).select(
        key, n, "wins", "win_rate", "ci_low", "ci_high", "mean_score")


def summarize(out: Path | str) -> Summary:
    run = RunDir(out)
    manifest = run.manifest
    # Every table is read off the cells (seat x position x strategy x end reason), so
    # memory does not grow with the run. Per-game facts come from seat 0's cells (one
    # row per game), and the k seats sharing a victory hold 1/k of it each.
    cells, group, key = run.part_cells()
    unproven = run.unproven
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
