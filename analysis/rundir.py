"""The one reader of a run directory: every command (summary, report, balance, compare,
sweep, skill, the API's results) opens a run through RunDir.

It is built on simcore's layers (simcore.rundir reads the manifest, simcore.parts lists
and proves the parts and reads their rows), which live in simcore because the runner
resumes through them. Here: what the analysis asks of a run, each checked once, when
first asked, with one line (UserError) naming what is wrong:

- `manifest`: read and checked field by field on opening;
- `parts`: the run's parts, each proven against the manifest (a stray, damaged or
  foreign part is refused), and `unproven`: a line per part read without proof;
- `players`, `strategies`: the lineup the manifest names;
- `schema`, `features`, `interims`, `standings`: the columns of the results;
- `scan()`, `read(part, columns)`: the rows; `part_cells()`: the runner's per-part
  tallies summed (the summary reads no rows).
"""
from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl

from simcore.chunks import GROUPING, TALLY_CELLS
from simcore.errors import UserError
from simcore.params import flatten
from simcore.parts import AGAIN, check_part, check_parts, read_part, read_tally, scan_parts
from simcore.meta import FeatureRoles
from simcore.registry import games as registered_games
from simcore.rundir import MANIFEST, read_manifest
from simcore.runner import BASE_COLUMNS

__all__ = ["RunDir", "open_run", "scan_run", "BASE_COLUMNS", "INTERIM_PREFIX", "standings_columns",
           "CELL_SCHEMA", "GROUP_SCHEMA"]

INTERIM_PREFIX = "interim_"
_SERIES_INDEX = re.compile(r"_?r?\d+$")
# The per-part tallies the runner writes (simcore.runner.TALLY_CELLS and their sums),
# and the per-value counts of the grouping feature.
CELL_SCHEMA = {"seat": pl.Int64, "position": pl.Int64, "strategy": pl.String,
               "end_reason": pl.String, "rows": pl.Int64, "wins": pl.Float64,
               "score_sum": pl.Int64, "shared": pl.Float64}
GROUP_SCHEMA = {"value": pl.Int64, "rows": pl.Int64, "wins": pl.Float64, "score_sum": pl.Int64}


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


class RunDir:
    """A run directory. Opening it reads the manifest; everything else is read and
    checked when first asked, once."""

    def __init__(self, path: Path | str, roles: FeatureRoles | None = None) -> None:
        self.path = Path(path)
        self.manifest: dict[str, Any] = read_manifest(self.path)
        self._roles = roles

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    # ---- the manifest ----

    @cached_property
    def players(self) -> int:
        players = self.manifest.get("players")
        if type(players) is not int:
            raise UserError(f"run directory {self.path}: {MANIFEST} lacks or garbles players or strategies")
        return players

    @cached_property
    def strategies(self) -> list[str]:
        """The distinct specs of the lineup, in seat order: the labels of the strategy column."""
        if "strategies" not in self.manifest:
            raise UserError(f"run directory {self.path}: {MANIFEST} lacks or garbles players or strategies")
        return list(dict.fromkeys(str(s["spec"]) for s in self.manifest["strategies"]))

    def check_lineup(self) -> tuple[int, list[str]]:
        """The players and strategies the manifest names; UserError if it lacks them."""
        return self.players, self.strategies

    @property
    def n_games(self) -> int:
        return int(self.manifest["n_games"])

    @property
    def params(self) -> dict[str, Any]:
        return flatten(self.manifest.get("params") or {})

    @cached_property
    def roles(self) -> FeatureRoles:
        """How the game declares its features (default: the registered game's)."""
        if self._roles is not None:
            return self._roles
        spec = registered_games().get(str(self.manifest.get("game")))
        return spec.features if spec is not None else FeatureRoles()

    # ---- the parts ----

    @cached_property
    def _checked(self) -> tuple[list[Path], dict[Path, str]]:
        return check_parts(self.path)

    @property
    def parts(self) -> list[Path]:
        return self._checked[0]

    @property
    def unproven(self) -> tuple[str, ...]:
        """One line per part read without proof (simcore.parts.part_proof), naming it."""
        return tuple(f"results part {part} {why}; {AGAIN}" for part, why in self._checked[1].items())

    def proven(self, part: Path) -> bool:
        return part not in self._checked[1]

    # ---- the columns ----

    @cached_property
    def schema(self) -> pl.Schema:
        """The results' columns; every part's footer is read first, so a truncated or
        corrupt part is named."""
        for part in self.parts:
            try:
                check_part(part)
            except (pl.exceptions.PolarsError, OSError) as e:
                raise self.unreadable(part, e) from None
        try:
            return scan_parts(self.parts).collect_schema()
        except (pl.exceptions.PolarsError, OSError) as e:
            raise UserError(f"results in {self.path} are unreadable: {str(e).splitlines()[0]}") from None

    def require(self, columns: tuple[str, ...] | list[str]) -> None:
        missing = [c for c in columns if c not in self.schema]
        if missing:
            raise UserError(f"results in {self.path} lack the column(s) {', '.join(missing)}")

    @property
    def features(self) -> list[str]:
        return [c for c in self.schema.names() if c not in BASE_COLUMNS and not c.startswith(INTERIM_PREFIX)]

    @property
    def interims(self) -> list[str]:
        """The interim_* columns, in declared order."""
        return [c for c in self.schema.names() if c not in BASE_COLUMNS and c.startswith(INTERIM_PREFIX)]

    @property
    def standings(self) -> list[str]:
        """The interim columns of the standings series (lead changes)."""
        return standings_columns(self.interims)

    def role_features(self, *roles: str) -> list[str]:
        return [f for f in self.features if self.roles.role(f) in roles]

    @cached_property
    def end_reasons(self) -> list[str]:
        """Every end reason the results hold, sorted."""
        try:
            found = self.scan().select(pl.col("end_reason").cast(pl.String).unique().sort()).collect()
        except (pl.exceptions.PolarsError, OSError) as e:
            raise UserError(f"results in {self.path} are unreadable: {str(e).splitlines()[0]}") from None
        return found["end_reason"].to_list()

    # ---- the rows ----

    def scan(self) -> pl.LazyFrame:
        """The results table, lazily."""
        return scan_parts(self.parts)

    def read(self, part: Path, columns: list[str] | None = None) -> pl.DataFrame:
        """The rows of one part (all columns, or `columns` in that order)."""
        try:
            return read_part(part, columns)
        except (pl.exceptions.PolarsError, OSError) as e:
            raise self.unreadable(part, e) from None

    def unreadable(self, part: Path, e: Exception) -> UserError:
        return UserError(f"results part {part} is unreadable ({str(e).splitlines()[0]}); {AGAIN}")

    # ---- the runner's tallies ----

    def part_cells(self) -> tuple[pl.DataFrame, pl.DataFrame | None, str | None]:
        """Every part's tally summed: the cells (TALLY_CELLS with rows, wins, score_sum,
        shared) and the per-value counts of the grouping feature (None without one),
        with its column's name. A part without a proven tally is tallied from its rows."""
        cells, groups, key = [], [], None
        for part in self.parts:
            try:
                tally = read_tally(part)
                if tally is None or not self.proven(part):  # its tally's counts are not proven either
                    c, g, k = self._cells_of_rows(part)
                else:
                    c = pl.DataFrame(tally["cells"], schema=CELL_SCHEMA, orient="row")
                    g = k = None
                    if tally.get("group"):
                        k = tally["group"]["key"]
                        g = pl.DataFrame(tally["group"]["cells"], schema=GROUP_SCHEMA, orient="row")
            except (OSError, ValueError, KeyError, TypeError, pl.exceptions.PolarsError) as e:
                raise self.unreadable(part, e) from None
            cells.append(c.select(*CELL_SCHEMA).cast(CELL_SCHEMA))
            if g is not None:
                groups.append(g.cast(GROUP_SCHEMA))
                key = k
        cells_df = (pl.concat(cells).group_by(*TALLY_CELLS)
                    .agg(pl.col("rows", "wins", "score_sum", "shared").sum()))
        group_df = pl.concat(groups).group_by("value").agg(pl.col("rows", "wins", "score_sum").sum()) \
            if groups else None
        return cells_df, group_df, key

    @staticmethod
    def _cells_of_rows(part: Path) -> tuple[pl.DataFrame, pl.DataFrame | None, str | None]:
        """The tally of a part written without one (by hand, or by an older chocosim),
        from its rows."""
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


def open_run(path: Path | str, roles: FeatureRoles | None = None,
             columns: tuple[str, ...] | list[str] = BASE_COLUMNS) -> RunDir:
    """A run directory checked enough that an analysis can trust it: UserError (one
    line) for a missing directory, a missing or broken manifest, a manifest without its
    players or strategies, no parts, a part that fails its proof or does not read, or
    results without `columns`."""
    run = RunDir(path, roles)
    run.check_lineup()  # before the parts, which take longer to check
    run.require(columns)
    return run


def scan_run(path: Path | str) -> pl.LazyFrame:
    """The results table of a run directory, lazily."""
    return RunDir(path).scan()
