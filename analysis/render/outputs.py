"""What a command prints on stdout: a result in words, a line each (`words`), or as plain
JSON values (`machine`, the `--json` form). The words are the reports' own (findings,
refused points, fair points); the JSON carries the numbers they state and the tables
behind them. analysis.api.words and analysis.api.as_json serve them to the CLI.
Progress and warnings are not results: they go to stderr (analysis.progress)."""
from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from analysis.experiments.balance import BalanceResult
from analysis.experiments.report import RunsReport
from analysis.experiments.skill_analysis import SkillAnalysis
from analysis.experiments.sweep import SweepResult
from analysis.positions import ordinal
from analysis.summary import Summary

__all__ = ["jsonable", "words", "machine", "SPOKEN"]

# The results `words` says (a comparison's verdicts, a balance's and a tuning's are the api's).
SPOKEN = (SweepResult, RunsReport, SkillAnalysis)


def jsonable(x: Any) -> Any:
    """Plain JSON values of a result: dataclasses and mappings as objects, frames as lists
    of rows, arrays and tuples as lists, paths as text, NaN and infinities as null (JSON
    has none)."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: jsonable(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, pl.DataFrame):
        return jsonable(x.to_dicts())
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return jsonable(x.item())
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, enum.Enum):
        return jsonable(x.value)
    if isinstance(x, Path):
        return str(x)
    if x is None or isinstance(x, (bool, int, str)):
        return x
    return str(x)


def words(result: SweepResult | RunsReport | SkillAnalysis) -> list[str]:
    """A sweep (refused points, how points played to a precision ended, the fair points),
    a report of runs (each run's findings) or a skill analysis (its findings), a line each."""
    if isinstance(result, SweepResult):
        return _sweep_words(result)
    if isinstance(result, RunsReport):
        return _report_words(result)
    from analysis.render.skill import findings

    return [f.text for f in findings(result)]


def machine(result: Any) -> Any:
    """A result of an experiment, or a run's summary, as plain JSON values."""
    if isinstance(result, Summary):
        return jsonable(result.to_dict())
    if isinstance(result, BalanceResult):
        return jsonable(result.verdict())
    if isinstance(result, SweepResult):
        points = [{"lineup": list(p.lineup), "values": p.values, "dir": p.path, "refused": p.refused,
                   "precision": p.precision} for p in result.points]
        return jsonable({"game": result.game, "dir": result.path, "params": result.params, "points": points,
                         "fair_points": result.fair_points, "metrics": result.table, "played": result.played,
                         "seconds": result.seconds})
    if isinstance(result, RunsReport):
        from analysis.render.findings import findings
        from analysis.summary import summarize

        return jsonable({"games": result.games, "runs": [
            {"dir": a.run.path, "games": a.games, "findings": [f.text for f in findings(a)],
             "unproven": a.run.unproven, "summary": summarize(a.run.path).to_dict()} for a in result.analyses]})
    if isinstance(result, SkillAnalysis):
        return jsonable({"game": result.game, "title": result.title, "players": result.players,
                         "games_per_run": result.n_games, "findings": words(result), "ladder": result.ladder,
                         "depth": result.depth, "restricted": result.restricted, "runs": result.runs})
    # A tuning (analysis.experiments.tune, tune_rules) says its own; anything else (how a
    # run to a precision ended) is plain data.
    return jsonable(result.to_json() if hasattr(result, "to_json") else result)


def _fair_point(f: dict[str, Any]) -> str:
    at = f" at {f['at']}" if f["at"] else ""
    open_end = "" if -math.inf < f["low"] and f["high"] < math.inf else \
        ": the interval reaches beyond the swept values, so the crossing may be noise"
    return (f"fair point ({f['lineup']}{at}): the {ordinal(f['position'])}'s advantage crosses zero at "
            f"{f['param']} = {f['x']:.2f} (95% CI {f['low']:.2f} to {f['high']:.2f}){open_end}")


def _sweep_words(result: SweepResult) -> list[str]:
    out = []
    for p in result.points:
        if p.refused:
            out.append(f"refused: {', '.join(p.lineup)} · {p.name}: {p.refused}")
        elif p.precision:
            out.append(f"{', '.join(p.lineup)} · {p.name}: {p.precision.line('win rates by position')}")
    return out + [_fair_point(f) for f in result.fair_points.iter_rows(named=True)] + list(result.widen)


def _report_words(report: RunsReport) -> list[str]:
    from analysis.render.findings import findings

    out = []
    for a in report.analyses:
        out.append(f"{a.run.path}: {a.games:,} games")
        out += [f"  {f.text}" for f in findings(a)]
        out += [f"  unproven: {line}" for line in a.run.unproven]
    return out
