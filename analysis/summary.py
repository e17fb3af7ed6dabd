"""The summary of a run directory: win rates (with 95% Wilson intervals), shared
victories, mean scores and end reasons, computed lazily over its parquet parts. When the
results have a feature column named like GROUPING (a game's way of saying which scenario
a game was dealt, e.g. a solo game's goal card), win rates per value of it too."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from numpy.typing import ArrayLike

from simcore.errors import UserError
from simcore.runner import MANIFEST

__all__ = ["Summary", "summarize", "wilson", "scan_run"]

CONFIDENCE = 0.95
# Feature columns that name the scenario a game was dealt; the summary breaks win rates
# down by the first one a run has.
GROUPING = ("target",)


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

    @property
    def complete(self) -> bool:
        return self.games == self.manifest.get("n_games")


def wilson(successes: ArrayLike, n: ArrayLike) -> tuple[Any, Any]:
    """95% Wilson interval of successes/n. A shared victory counts 1/k of a win, so
    `successes` may be fractional (the mean win times n)."""
    # Imported here: statsmodels takes seconds to import, which every CLI command
    # (and every worker unpickling a test module) would otherwise pay.
    from statsmodels.stats.proportion import proportion_confint

    return proportion_confint(successes, n, alpha=1 - CONFIDENCE, method="wilson")


def scan_run(out: Path | str) -> pl.LazyFrame:
    """The results table of a run directory, lazily."""
    # The parts listed by pathlib rather than a polars glob: a directory name may hold
    # glob characters ("runs/[test]") that polars would expand.
    parts = sorted(Path(out).glob("part-*.parquet"))
    if not parts:
        raise UserError(f"run directory {out} has no results (no part-*.parquet)")
    return pl.scan_parquet(parts, glob=False)


def _win_table(cells: pl.DataFrame, key: str, n: str) -> pl.DataFrame:
    df = (cells.group_by(key)
          .agg(pl.col("rows").sum().alias(n), wins=pl.col("wins").sum(),
               mean_score=pl.col("score_sum").sum() / pl.col("rows").sum())
          .with_columns(win_rate=pl.col("wins") / pl.col(n))
          .sort(key))
    low, high = wilson(df["wins"].to_numpy(), df[n].to_numpy())
    return df.with_columns(ci_low=pl.Series(low), ci_high=pl.Series(high)).select(
        key, n, "wins", "win_rate", "ci_low", "ci_high", "mean_score")


def _by_group(out: Path) -> pl.DataFrame | None:
    lazy = scan_run(out)
    key = next((k for k in GROUPING if k in lazy.collect_schema().names()), None)
    if key is None:
        return None
    cells = (lazy.group_by(key)
             .agg(rows=pl.len().cast(pl.Int64), wins=pl.col("win").cast(pl.Float64).sum(),
                  score_sum=pl.col("score").cast(pl.Int64).sum())
             .collect(engine="streaming"))
    return _win_table(cells, key, "plays")


def _read_manifest(out: Path) -> dict[str, Any]:
    try:
        return json.loads((out / MANIFEST).read_text())
    except FileNotFoundError:
        raise UserError(f"{out} is not a run directory (no {MANIFEST})") from None
    except (OSError, json.JSONDecodeError) as e:
        raise UserError(f"run directory {out}: {MANIFEST} is unreadable ({e})") from None


def summarize(out: Path | str) -> Summary:
    out = Path(out)
    manifest = _read_manifest(out)
    # One streaming pass into a handful of cells (seat x strategy x end reason); every
    # table is then read off the cells, so memory does not grow with the run. Per-game
    # facts come from rows: each game has one seat-0 row, and the k seats sharing a
    # victory hold 1/k of it each.
    win = pl.col("win").cast(pl.Float64)
    cells_query = (
        scan_run(out)
        .group_by("seat", pl.col("strategy").cast(pl.String), pl.col("end_reason").cast(pl.String))
        .agg(rows=pl.len().cast(pl.Int64), wins=win.sum(),
             score_sum=pl.col("score").cast(pl.Int64).sum(),
             shared=win.filter(win.is_between(0, 1, closed="none")).sum()))
    try:
        cells = cells_query.collect(engine="streaming")
    except (pl.exceptions.PolarsError, OSError) as e:
        raise UserError(f"results in {out} are unreadable: {str(e).splitlines()[0]}") from None
    end_reasons = (cells.filter(pl.col("seat") == 0).group_by("end_reason").agg(games=pl.col("rows").sum())
                   .sort("games", "end_reason", descending=[True, False]))
    n = int(end_reasons["games"].sum())
    n_shared = round(cells["shared"].sum())
    low, high = wilson(n_shared, n)
    draws = pl.DataFrame({"games": [n], "shared": [n_shared], "rate": [n_shared / n],
                          "ci_low": [low], "ci_high": [high]})
    return Summary(
        manifest=manifest, games=n, by_group=_by_group(out),
        by_seat=_win_table(cells, "seat", "games"),
        by_strategy=_win_table(cells, "strategy", "plays"),
        draws=draws, end_reasons=end_reasons.with_columns(share=pl.col("games") / n),
    )
