"""The per-run balance report's result: every run directory analysed (analysis.metrics),
the tables of several runs pooled, and each house-rule variant paired with its base;
analysis.render.report turns it into the page."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis import progress, stats
from analysis.display import Shown
from analysis.metrics import (
    MIN_EFFECT,
    PooledPositions,
    RunAnalysis,
    analyze,
    pooled_positions,
    pooled_strategies,
    rules_key,
)
from analysis.ratings import Matchups, Ratings
from simcore.errors import UserError
from simcore.params import flatten

__all__ = ["RunsReport", "report_of", "analyze_runs", "compare_variants"]


@dataclass(frozen=True)
class RunsReport(Shown):
    analyses: list[RunAnalysis]
    # Position balance per table size over runs with the same rules (several runs only).
    positions: list[PooledPositions]
    # Head-to-head over every run of one game, with ratings (several runs of one game only).
    strategies: tuple[Matchups, Ratings | None] | None
    variants: list[dict[str, Any]]  # see compare_variants

    @property
    def games(self) -> int:
        return sum(a.games for a in self.analyses)


def compare_variants(analyses: Sequence[RunAnalysis]) -> list[dict[str, Any]]:
    """House-rule comparisons: a run against the first run of the same game, table
    size and lineup whose params differ from it, with the params that differ and the
    1st player's win rate difference (Newcombe interval, score test). Runs of another
    game or size, another lineup, or the same rules (different lineups of one sweep)
    are never compared: their differences are not a variant's effect."""
    rows = []
    for k, a in enumerate(analyses):
        game, players, params = rules_key(a)
        lineup = sorted(s.get("spec", "") for s in a.run.manifest.get("strategies") or [])
        base = next((b for b in analyses[:k] if rules_key(b)[:2] == (game, players) and rules_key(b)[2] != params
                     and sorted(s.get("spec", "") for s in b.run.manifest.get("strategies") or []) == lineup), None)
        if base is None or a.seats is None:
            continue
        mine, theirs = flatten(a.run.manifest.get("params") or {}), flatten(base.run.manifest.get("params") or {})
        changed = [f"{key} = {mine.get(key)} (was {theirs.get(key)})"
                   for key in sorted(mine.keys() | theirs.keys()) if mine.get(key) != theirs.get(key)]
        f, f0 = a.seats.first, base.seats.first
        rows.append({"run": k, "base": analyses.index(base), "changed": changed,
                     "first": stats.difference(f.successes, f.n, f0.successes, f0.n)})
    return rows


def report_of(analyses: Sequence[RunAnalysis]) -> RunsReport:
    """The report's result of runs already analysed."""
    analyses = list(analyses)
    several = len(analyses) >= 2
    return RunsReport(analyses, pooled_positions(analyses) if several else [],
                      pooled_strategies(analyses) if several else None, compare_variants(analyses))


def analyze_runs(run_dirs: Sequence[Path | str], min_effect: float = MIN_EFFECT) -> RunsReport:
    """Analyse every run directory (bad input fails here, before anything is written)."""
    if not run_dirs:
        raise UserError("no run directory given")
    progress.expect(len(run_dirs), progress.RUNS)
    analyses = []
    for d in run_dirs:
        analyses.append(analyze(d, min_effect))
        progress.advance(1, progress.RUNS)
    progress.phase("writing the report")
    return report_of(analyses)
