"""The summary of a run directory: win rates (with 95% Wilson intervals), shared
victories, mean scores and end reasons, computed lazily over its parquet parts."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from statsmodels.stats.proportion import proportion_confint

from simcore.errors import UserError
from simcore.runner import MANIFEST

__all__ = ["Summary", "summarize", "wilson", "scan_run"]

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Summary:
    manifest: dict[str, Any]
    games: int  # games found in the directory (n_games of the manifest once complete)
    by_seat: pl.DataFrame  # seat, games, wins, win_rate, ci_low, ci_high, mean_score
    by_strategy: pl.DataFrame  # strategy, plays (games x seats it held), wins, win_rate, ci..., mean_score
    draws: pl.DataFrame  # one row: games, shared (victories), rate, ci_low, ci_high
    end_reasons: pl.DataFrame  # end_reason, games, share

    @property
    def complete(self) -> bool:
        return self.games == self.manifest.get("n_games")


def wilson(successes: pl.Series | float, n: pl.Series | int) -> tuple[Any, Any]:
    """95% Wilson interval of successes/n. A shared victory counts 1/k of a win, so
    `successes` may be fractional (the mean win times n)."""
    return proportion_confint(successes, n, alpha=1 - CONFIDENCE, method="wilson")


def scan_run(out: Path | str) -> pl.LazyFrame:
    """The results table of a run directory, lazily."""
    out = Path(out)
    if not any(out.glob("part-*.parquet")):
        raise UserError(f"run directory {out} has no results (no part-*.parquet)")
    return pl.scan_parquet(out / "part-*.parquet")


def _with_wilson(df: pl.DataFrame, n: str) -> pl.DataFrame:
    low, high = wilson(df["wins"].to_numpy(), df[n].to_numpy())
    return df.with_columns(ci_low=pl.Series(low), ci_high=pl.Series(high))


def _win_table(lf: pl.LazyFrame, key: str, n: str) -> pl.LazyFrame:
    return (lf.group_by(key)
            .agg(pl.len().alias(n), wins=pl.col("win").cast(pl.Float64).sum(),
                 mean_score=pl.col("score").mean())
            .with_columns(win_rate=pl.col("wins") / pl.col(n))
            .sort(key))


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
    lf = scan_run(out).select("seat", "strategy", "score", "win", "end_reason")
    # Per-game facts from the rows alone (no group-by over millions of games): every
    # game has one seat-0 row, and the k seats sharing a victory each hold 1/k of it.
    first_seat = lf.filter(pl.col("seat") == 0)
    end_reasons = (first_seat.group_by(pl.col("end_reason").cast(pl.String)).agg(games=pl.len())
                   .sort("games", "end_reason", descending=[True, False]))
    shared = lf.filter(pl.col("win").is_between(0, 1, closed="none")).select(
        shared=pl.col("win").cast(pl.Float64).sum().round().cast(pl.Int64))
    try:
        by_seat, by_strategy, end_reasons, shared = pl.collect_all(
            [_win_table(lf, "seat", "games"),
             _win_table(lf.with_columns(pl.col("strategy").cast(pl.String)), "strategy", "plays"),
             end_reasons, shared],
            engine="streaming")
    except (pl.exceptions.PolarsError, OSError) as e:
        raise UserError(f"results in {out} are unreadable: {str(e).splitlines()[0]}") from None
    n = int(end_reasons["games"].sum())
    n_shared = int(shared.item() or 0)
    low, high = wilson(n_shared, n)
    draws = pl.DataFrame({"games": [n], "shared": [n_shared], "rate": [n_shared / n],
                          "ci_low": [low], "ci_high": [high]})
    end_reasons = end_reasons.with_columns(share=pl.col("games") / n)
    order = ["wins", "win_rate", "ci_low", "ci_high", "mean_score"]
    return Summary(
        manifest=manifest, games=n,
        by_seat=_with_wilson(by_seat, "games").select("seat", "games", *order),
        by_strategy=_with_wilson(by_strategy, "plays").select("strategy", "plays", *order),
        draws=draws, end_reasons=end_reasons,
    )
