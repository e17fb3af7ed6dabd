"""What a command prints on stdout: its result in words, a line each (`lines`), or the
same result as plain JSON values (`machine`, the `--json` form). The words are the
reports' own (verdicts, findings, fair points); the JSON carries the numbers they state.
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

from analysis.positions import ordinal

__all__ = ["jsonable", "written", "sweep_lines", "sweep_json", "compare_json", "report_lines", "report_json",
           "skill_lines", "skill_json", "precision_json"]


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


def written(html: Path | str | None, pdf: Path | str | None = None) -> dict[str, str | None]:
    """The files a command wrote, for its JSON."""
    return {"html": None if html is None else str(html), "pdf": None if pdf is None else str(pdf)}


def precision_json(p: Any) -> dict[str, Any] | None:
    """How a run to a precision ended (analysis.sequential.Precision), points as points."""
    if p is None:
        return None
    return {"games": p.games, "halfwidth_points": p.halfwidth, "looks": p.looks, "reached": p.reached,
            "target_points": p.target}


# ---- compare ----

def compare_json(result: Any, html: Path | str | None, pdf: Path | str | None) -> dict[str, Any]:
    """A comparison (analysis.api.CompareOutcome): its verdicts and every metric's change."""
    return {"base": str(result.base), "variants": [str(v) for v in result.variants],
            "verdicts": list(result.verdicts), "precision": precision_json(result.precision),
            "table": jsonable(result.table), **written(html, pdf)}


# ---- sweep ----

def _fair_point(f: dict[str, Any]) -> str:
    at = f" at {f['at']}" if f["at"] else ""
    open_end = "" if -math.inf < f["low"] and f["high"] < math.inf else \
        ": the interval reaches beyond the swept values, so the crossing may be noise"
    return (f"fair point ({f['lineup']}{at}): the {ordinal(f['position'])}'s advantage crosses zero at "
            f"{f['param']} = {f['x']:.2f} (95% CI {f['low']:.2f} to {f['high']:.2f}){open_end}")


def sweep_lines(result: Any, html: Path | str | None, pdf: Path | str | None) -> list[str]:
    """A sweep (analysis.experiments.sweep.SweepResult) in words: refused points, how the
    points played to a precision ended, the fair points."""
    out = []
    for p in result.points:
        if p.refused:
            out.append(f"refused: {', '.join(p.lineup)} · {p.name}: {p.refused}")
        elif p.precision:
            out.append(f"{', '.join(p.lineup)} · {p.name}: {p.precision.line('win rates by position')}")
    out += [_fair_point(f) for f in result.fair_points.iter_rows(named=True)]
    ok = sum(1 for p in result.points if not p.refused)
    files = "".join(f", {f}" for f in (html, pdf) if f)
    out.append(f"sweep of {ok} point(s) ({len(result.points) - ok} refused), {result.played:,} games played "
               f"in {result.seconds:.1f} s: {result.path}{files}")
    return out


def sweep_json(result: Any, html: Path | str | None, pdf: Path | str | None) -> dict[str, Any]:
    points = [{"lineup": list(p.lineup), "values": jsonable(p.values), "dir": str(p.path), "refused": p.refused,
               "precision": precision_json(p.precision)} for p in result.points]
    return {"game": result.game, "dir": str(result.path), "params": list(result.params), "points": points,
            "fair_points": jsonable(result.fair_points), "metrics": jsonable(result.table),
            "played": result.played, "seconds": result.seconds, **written(html, pdf)}


# ---- report ----

def report_lines(report: Any, html: Path | str, pdf: Path | str | None) -> list[str]:
    """A report of runs (analysis.experiments.report.RunsReport): each run's findings."""
    from analysis.render.findings import findings

    out = []
    for a in report.analyses:
        out.append(f"{a.run.path}: {a.games:,} games")
        out += [f"  {f.text}" for f in findings(a)]
        out += [f"  unproven: {line}" for line in a.run.unproven]
    files = f"{html}" + (f" and {pdf}" if pdf else "")
    out.append(f"report of {len(report.analyses)} run(s), {report.games:,} games: {files}")
    return out


def report_json(report: Any, html: Path | str, pdf: Path | str | None) -> dict[str, Any]:
    from analysis.render.findings import findings
    from analysis.summary import summarize

    runs = [{"dir": str(a.run.path), "games": a.games, "findings": [f.text for f in findings(a)],
             "unproven": list(a.run.unproven), "summary": jsonable(summarize(a.run.path).to_dict())}
            for a in report.analyses]
    return {"runs": runs, "games": report.games, **written(html, pdf)}


# ---- skill ----

def skill_lines(a: Any, html: Path | str, pdf: Path | str | None) -> list[str]:
    """A skill analysis (analysis.experiments.skill_analysis.SkillAnalysis): its findings."""
    from analysis.render.skill import findings

    files = f"{html}" + (f" and {pdf}" if pdf else "")
    return [*(f.text for f in findings(a)),
            f"skill report of {a.title}, {len(a.runs)} runs of {a.n_games:,} games: {files}"]


def skill_json(a: Any, html: Path | str, pdf: Path | str | None) -> dict[str, Any]:
    from analysis.render.skill import findings

    return {"game": a.game, "title": a.title, "players": a.players, "games_per_run": a.n_games,
            "findings": [f.text for f in findings(a)], "ladder": jsonable(a.ladder), "depth": jsonable(a.depth),
            "restricted": jsonable(a.restricted), "runs": jsonable(a.runs), **written(html, pdf)}
