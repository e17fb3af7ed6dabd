"""Balance reports: one self-contained HTML page (jinja2, figures inlined as SVG data
URIs, no external request) for one or several run directories, and a PDF of the same
page printed by headless Chromium (the browser the report tests open it in anyway; a
pip-only PDF engine would need system libraries that `pip install .` cannot bring)."""
from __future__ import annotations

import base64
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import jinja2

from analysis import plots, stats
from analysis.findings import checks, findings, pct, points, pvalue, rate_text
from analysis.metrics import RunAnalysis, analyze, pooled_strategies
from simcore.errors import UserError
from simcore.params import flatten
from simcore.registry import games

__all__ = ["SECTIONS", "render_html", "write_report", "print_pdf", "find_chromium",
           "param_rows", "compare_to_first", "Figure"]

# Section ids of each run, in order (a run's ids get the suffix -r<index>).
SECTIONS = ("findings", "seat-balance", "strategies", "outcomes", "components",
            "game-quality", "params", "manifest")
CHROMIUM_ENV = "CHOCOSIM_CHROMIUM"
_CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_PDF_TIMEOUT = 300


@dataclass(frozen=True)
class Figure:
    src: str  # data: URI of the SVG
    alt: str


def _figure(svg: str, alt: str) -> Figure:
    data = base64.b64encode(svg.encode()).decode()
    return Figure(f"data:image/svg+xml;base64,{data}", alt)


def param_rows(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """The params of a run, each with its source (rulebook / assumed) and default when
    the game is registered here, and whether the run changed it."""
    values = flatten(manifest.get("params") or {})
    spec = games().get(manifest.get("game", ""))
    infos = {i.name: i for i in spec.defaults()} if spec else {}
    rows = []
    for name, value in values.items():
        info = infos.get(name)
        rows.append({"name": name, "value": value,
                     "source": info.source if info else "unknown",
                     "doc": info.doc if info else "",
                     "default": info.value if info else None,
                     "changed": info is not None and info.value != value,
                     "assumed": bool(info and info.source == "assumed")})
    return rows


def _figures(a: RunAnalysis) -> dict[str, Figure | None]:
    n = a.run.players
    st, q = a.strategies, a.quality
    several = len(st.names) > 1
    return {
        "seat_wins": _figure(plots.seat_wins(a.seats, n), "win rate by seat with intervals"),
        "seat_scores": _figure(plots.seat_scores(a.seats, n), "score distribution by seat"),
        "strategy_wins": _figure(plots.strategy_wins(st, n), "win rate by strategy"),
        "ratings": _figure(plots.strategy_ratings(st.ratings), "ratings") if st.ratings else None,
        "matchups": _figure(plots.matchup_matrix(st.matchups), "head-to-head matrix") if several else None,
        "margins": _figure(plots.margins(a.outcomes), "margin of victory") if a.outcomes.margin else None,
        "length": _figure(plots.game_length(a.outcomes), "game length"),
        "ends": _figure(plots.end_reasons(a.outcomes), "end reasons"),
        "components": _figure(plots.components(a.components), "feature effects") if len(a.components) else None,
        "winner_led": _figure(plots.winner_led(q), "winner leading by checkpoint") if q else None,
        "lead_changes": _figure(plots.lead_changes(q), "lead changes") if q else None,
    }


def _run_context(a: RunAnalysis, index: int) -> dict[str, Any]:
    m = a.run.manifest
    title = games()[m["game"]].title if m.get("game") in games() else m.get("game", "?")
    return {"a": a, "index": index, "m": m, "title": title, "findings": findings(a),
            "checks": checks(a), "figures": _figures(a), "params": param_rows(m),
            "parts": len(a.run.parts), "complete": a.games == m.get("n_games")}


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("analysis", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(pct=pct, rate=rate_text, pvalue=pvalue,
                       p_is=lambda p: pvalue(p) if pvalue(p).startswith("<") else f"= {pvalue(p)}")
    env.globals["points"] = points
    return env


def _version() -> str:
    try:
        return version("chocosim")
    except PackageNotFoundError:
        return "source checkout"


def _pooled_context(analyses: Sequence[RunAnalysis]) -> dict[str, Any] | None:
    pooled = pooled_strategies(analyses)
    if pooled is None or len(pooled[0].names) < 2:
        return None
    m, ratings = pooled
    return {"m": m, "ratings": ratings,
            "matchups": _figure(plots.matchup_matrix(m), "head-to-head over all runs"),
            "ratings_figure": _figure(plots.strategy_ratings(ratings), "ratings over all runs") if ratings else None}


def compare_to_first(analyses: Sequence[RunAnalysis]) -> list[dict[str, Any]]:
    """Each run against the first: which params differ (a house rule against the
    rulebook, say) and the first player's win rate difference with its Newcombe
    interval and score test. Empty for a single run."""
    if len(analyses) < 2:
        return []
    base = analyses[0]
    base_params = flatten(base.run.manifest.get("params") or {})
    rows = []
    for a in analyses[1:]:
        params = flatten(a.run.manifest.get("params") or {})
        changed = [f"{k} = {params.get(k)} (was {base_params.get(k)})"
                   for k in sorted(params.keys() | base_params.keys()) if params.get(k) != base_params.get(k)]
        f, f0 = a.seats.first, base.seats.first
        rows.append({"changed": changed, "first": stats.difference(f.successes, f.n, f0.successes, f0.n)})
    return rows


def render_html(analyses: Sequence[RunAnalysis]) -> str:
    runs = [_run_context(a, i) for i, a in enumerate(analyses)]
    for run, vs_first in zip(runs[1:], compare_to_first(analyses)):
        run["vs_first"] = vs_first
    title = ", ".join(dict.fromkeys(r["title"] for r in runs))
    return _environment().get_template("report.html.j2").render(
        runs=runs, title=title, sections=SECTIONS, version=_version(), pooled=_pooled_context(analyses),
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"))


def find_chromium() -> str:
    """The Chromium to print PDFs with: $CHOCOSIM_CHROMIUM, else the first on PATH."""
    chosen = os.environ.get(CHROMIUM_ENV)
    found = shutil.which(chosen) if chosen else next(filter(None, map(shutil.which, _CHROMIUM_NAMES)), None)
    if not found:
        raise UserError("--pdf needs Chromium: install it (Debian: apt-get install chromium) "
                        f"or set {CHROMIUM_ENV} to its path")
    return found


def print_pdf(html: Path, pdf: Path) -> None:
    """Print an HTML file to PDF with headless Chromium: a fresh profile, no network
    services, so it reads only the (self-contained) page."""
    browser = find_chromium()
    with tempfile.TemporaryDirectory(prefix="chocosim-chromium-") as profile:
        tmp = pdf.with_name(f".{pdf.name}.tmp")
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--no-first-run", f"--user-data-dir={profile}", "--no-pdf-header-footer",
               f"--print-to-pdf={tmp}", html.resolve().as_uri()]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=_PDF_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise UserError(f"Chromium did not print {pdf} within {_PDF_TIMEOUT} s") from None
        if done.returncode != 0 or not tmp.exists() or tmp.stat().st_size == 0:
            tmp.unlink(missing_ok=True)
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise UserError(f"Chromium could not print {pdf}: {last}")
        os.replace(tmp, pdf)


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_report(run_dirs: Sequence[Path | str], html: Path | str, pdf: Path | str | None = None) -> list[RunAnalysis]:
    """Analyse the runs and write the HTML report (and its PDF). Every run is analysed
    before anything is written, so bad input leaves existing reports untouched."""
    if not run_dirs:
        raise UserError("no run directory given")
    analyses = [analyze(d) for d in run_dirs]
    html = Path(html)
    _write_text(html, render_html(analyses))
    if pdf is not None:
        Path(pdf).parent.mkdir(parents=True, exist_ok=True)
        print_pdf(html, Path(pdf))
    return analyses

