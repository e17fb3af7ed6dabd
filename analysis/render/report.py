"""Balance reports: one self-contained HTML page (jinja2, figures inlined as SVG data
URIs, no external request) for one or several analysed run directories, and its PDF
(analysis.render.page)."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jinja2
import polars as pl

from analysis import stats
from analysis.experiments.report import RunsReport
from analysis.metrics import LEAD_CHANGES, RunAnalysis
from analysis.render import plots, templates, version
from analysis.render.figure import Image, image
from analysis.render.findings import checks, findings, leader_checkpoint, position_findings, pp
from analysis.render.formats import count, ordinal, p_is, pct, points, pvalue, rate
from analysis.render.page import write_html
from simcore.params import flatten
from simcore.registry import games

__all__ = ["SECTIONS", "render_html", "write_report", "param_rows"]

# Section ids of each run, in order (a run's ids get the suffix -r<index>).
SECTIONS = ("findings", "seat-balance", "strategies", "outcomes", "components", "breakdowns",
            "game-quality", "params", "manifest")


MAX_VALUE_CHARS = 120


def param_rows(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """The params of a run, each with its source (rulebook / assumed) and default when
    the game is registered here, and whether the run changed it."""
    values = flatten(manifest.get("params") or {})
    spec = games().get(manifest.get("game", ""))
    infos = {i.name: i for i in spec.defaults()} if spec else {}
    rows = []
    for name, value in values.items():
        info = infos.get(name)
        text = str(value)
        if len(text) > MAX_VALUE_CHARS:  # component lists: pages of text otherwise
            size = f"{len(value)} entries; " if isinstance(value, (list, tuple, dict)) else ""
            text = f"{text[:MAX_VALUE_CHARS]}… ({size}in full in the run's manifest.json)"
        rows.append({"name": name, "value": value, "shown": text,
                     "source": info.source if info else "unknown",
                     "doc": info.doc if info else "",
                     "default": info.value if info else None,
                     "changed": info is not None and info.value != value,
                     "assumed": bool(info and info.source == "assumed")})
    return rows


def _figures(a: RunAnalysis) -> dict[str, Image | None]:
    n = a.run.players
    st, q, s = a.strategies, a.quality, a.seats
    several = len(st.names) > 1 and not a.solo
    return {
        "position_wins": image(plots.position_wins(s.positions), "win rate by turn position") if s else None,
        "seat_wins": (image(plots.seat_wins(s, n), "win rate by physical seat")
                      if s and not s.seat_is_position else None),
        "seat_scores": image(plots.seat_scores(s, n), "score distribution by seat") if s else None,
        "strategy_wins": image(plots.strategy_wins(st, n), "win rate by strategy"),
        "ratings": image(plots.strategy_ratings(st.ratings), "ratings") if st.ratings else None,
        "matchups": image(plots.matchup_matrix(st.matchups), "head-to-head matrix") if several else None,
        "margins": image(plots.margins(a.outcomes), "margin of victory") if a.outcomes.margin else None,
        "length": image(plots.game_length(a.outcomes), "game length"),
        "scores": image(plots.score_distribution(a.outcomes), "score distribution") if a.solo else None,
        "ends": image(plots.end_reasons(a.outcomes), "end reasons"),
        "components": image(plots.components(a.components), "feature effects") if len(a.components) else None,
        "leader_wins": image(plots.leader_wins(q), "sole leader winning by checkpoint") if q else None,
        "lead_changes": image(plots.lead_changes(q), "lead changes") if q else None,
    }


MAX_LEADER_ROWS = 12
# The evidence table lists every significant feature and the largest others up to this
# many rows; the rest (none significant) are counted, not listed.
MAX_COMPONENT_ROWS = 40


def _leader_rows(a: RunAnalysis) -> dict[str, Any]:
    """The checkpoints of the leader table: those where somebody led alone (the others
    named once), thinned to about MAX_LEADER_ROWS, the headline checkpoint kept."""
    q = a.quality
    if q is None:
        return {"rows": [], "nobody": []}
    led = [c for c, r in enumerate(q.leader_wins) if r is not None]
    step = max(1, -(-len(led) // MAX_LEADER_ROWS))
    keep = {c for k, c in enumerate(led) if k % step == 0} | {led[-1]} if led else set()
    if (at := leader_checkpoint(a)) is not None:
        keep.add(at)
    return {"rows": [{"checkpoint": q.checkpoints[c], "wins": q.leader_wins[c], "tied": q.tied[c]} for c in sorted(keep)],
            "nobody": [q.checkpoints[c] for c, r in enumerate(q.leader_wins) if r is None],
            "thinned": step > 1}


def _component_rows(a: RunAnalysis) -> dict[str, Any]:
    c = a.components
    shown = c.filter(pl.col("significant") | (pl.int_range(pl.len()) < MAX_COMPONENT_ROWS))
    return {"rows": list(shown.iter_rows(named=True)), "left_out": len(c) - len(shown)}


def _run_context(a: RunAnalysis, index: int) -> dict[str, Any]:
    m = a.run.manifest
    title = games()[m["game"]].title if m.get("game") in games() else m.get("game", "?")
    specs = a.run.strategies
    lineup = f"{specs[0]} mirror match" if len(specs) == 1 else " vs ".join(specs)
    return {"a": a, "index": index, "m": m, "title": title, "lineup": lineup, "findings": findings(a),
            "checks": checks(a), "figures": _figures(a), "params": param_rows(m),
            "parts": len(a.run.parts), "complete": a.games == m.get("n_games") and not a.run.unproven,
            "leader_rows": _leader_rows(a),
            "leader_at": leader_checkpoint(a),
            "component_rows": _component_rows(a),
            # Per-value tables for a dealt feature that matters, or the first (a solo target).
            "setup_tables": [e for k, e in enumerate(a.setup)
                             if len(e.values) <= 12 and (k == 0 or e.q_value < stats.ALPHA)],
            "fair": 1 / a.run.players}


def _environment() -> jinja2.Environment:
    return templates(filters={"pct": pct, "rate": rate, "pvalue": pvalue, "count": count, "p_is": p_is},
                     names={"points": points, "pp": pp, "ordinal": ordinal})


def _pooled_context(report: RunsReport) -> dict[str, Any] | None:
    """The headline of a report of several tables: ratings over every table of the
    game, and position balance per table size (runs with the same rules added up)."""
    if len(report.analyses) < 2:
        return None
    positions = []
    for table in report.positions:
        found, checked = position_findings(table.balance, "comparison")
        variant = sum(1 for other in positions if (other["pp"].game, other["pp"].players) == (table.game, table.players))
        positions.append({"pp": table, "texts": [f.text for f in found] + checked, "numbers": [k + 1 for k in table.runs],
                          "title": games()[table.game].title if table.game in games() else table.game,
                          "variant": variant,
                          "figure": image(plots.position_wins(table.balance, f"Win rate by turn position at {table.players} players, "
                                                              f"{len(table.runs)} table(s) pooled"), "pooled position balance")})
    out: dict[str, Any] = {"positions": positions, "m": None}
    pooled = report.strategies
    if pooled is not None and len(pooled[0].names) >= 2:
        m, ratings = pooled
        out.update(m=m, ratings=ratings,
                   matchups=image(plots.matchup_matrix(m), "head-to-head over all runs"),
                   ratings_figure=image(plots.strategy_ratings(ratings), "ratings over all runs") if ratings else None)
    return out


def render_html(report: RunsReport) -> str:
    runs = [_run_context(a, i) for i, a in enumerate(report.analyses)]
    # Titled by what it is (the runs' games and lineups), not as the `balance` verdict.
    title = "; ".join(f"{game}: {', '.join(dict.fromkeys(r['lineup'] for r in runs if r['title'] == game))}"
                      for game in dict.fromkeys(r["title"] for r in runs))
    return _environment().get_template("report.html.j2").render(
        runs=runs, title=title, sections=SECTIONS, version=version(), pooled=_pooled_context(report),
        lead_changes=LEAD_CHANGES,
        variants=report.variants, created=datetime.now(timezone.utc).isoformat(timespec="seconds"))


def write_report(report: RunsReport, html: Path | str, pdf: Path | str | None = None) -> None:
    """Write the HTML report of the analysed runs (and its PDF)."""
    write_html(html, render_html(report), pdf)
