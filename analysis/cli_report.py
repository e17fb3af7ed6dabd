"""`chocosim report` and `chocosim balance`: plain functions with typer annotations that
the CLI registers (`app.command("report")(report_command)`), so they can be called and
tested without the CLI module."""
from __future__ import annotations

import functools
import itertools
import math
import re
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

import strategies
from simcore.params import parse_set
from simcore.registry import get_game
from simcore.runner import keep_freed_memory, run

__all__ = ["report_command", "balance_command", "default_lineups", "balance"]

_console = Console(stderr=True)

RunDirsArg = Annotated[list[Path], typer.Argument(help="Run directories; several go into one report.")]
HtmlOpt = Annotated[Path, typer.Option("-o", "--out", help="The HTML report to write.")]
PdfOpt = Annotated[Path | None, typer.Option("--pdf", help="Also print the report to this PDF (needs Chromium).")]


MinEffectOpt = Annotated[float, typer.Option(
    "--min-effect", min=0.0, max=0.99,
    help="Smallest difference in win rate (a share: 0.02 = 2 points) a component or behaviour "
         "needs, besides significance, to be stated as a finding.")]


# The default is analysis.metrics.MIN_EFFECT, written out: importing it would load the
# statistics stack into every CLI command.
def report_command(run_dirs: RunDirsArg, out: HtmlOpt, pdf: PdfOpt = None, min_effect: MinEffectOpt = 0.02) -> None:
    """Analyse run directories and write a self-contained HTML balance report (and PDF)."""
    # Imported here: the plotting stack takes a second or two to load, which every other
    # command (and every worker process) would pay.
    from analysis.report import write_report

    keep_freed_memory()
    analyses = write_report(run_dirs, out, pdf, min_effect)
    games = sum(a.games for a in analyses)
    written = f"{out}" + (f" and {pdf}" if pdf else "")
    _console.print(f"report of {len(analyses)} run(s), {games:,} games: {written}", soft_wrap=True)


def default_lineups(bots: list[str], players: int) -> list[list[str]]:
    """Every bot against every other: one table per set of `players` different bots;
    with fewer bots than seats, one table with the bots repeated in turn."""
    if len(bots) <= players:
        return [[bots[i % len(bots)] for i in range(players)]]
    return [list(c) for c in itertools.combinations(bots, players)]


def _slug(specs: list[str]) -> str:
    return re.sub(r"[^\w.=-]+", "_", "-vs-".join(specs)).strip("_")[:120]


def balance(game: str, n_games: int, runs_dir: Path, *, seats: list[list[str]] | None = None,
            players: int | None = None, sets: dict | None = None, rules: Path | None = None,
            seed: int = 0, jobs: int | None = None, quiet: bool = False) -> list[Path]:
    """Play `n_games` split over the lineups (default: every bot against every other),
    each a run directory under runs_dir/<game>/ (re-running resumes); return them."""
    spec = get_game(game)
    table = players or getattr(spec.params(rules, sets), "players", None) or spec.players[0]
    default_bots = [name for name, cls in strategies.available(game).items() if cls.DEFAULT_TABLES]
    lineups = seats or default_lineups(default_bots, table)
    # Every run a whole number of seat rotations, so each seat order is played equally.
    rotation = math.factorial(table)
    per_run = max(rotation, math.ceil(n_games / len(lineups) / rotation) * rotation)
    dirs = []
    # One seed for every table: each deals the same games (common random numbers), so
    # differences between tables are bot differences, and the report's tests across
    # runs, which assume independent samples, are conservative.
    for specs in lineups:
        params = spec.params(rules, sets, players=len(specs))
        # The size is part of the name: a bigger sweep is a new run, not a clash.
        out = runs_dir / game / f"{_slug(specs)}-{per_run}"
        run(spec, params, specs, functools.partial(strategies.build_lineup, spec.name, specs),
            out, n_games=per_run, seed=seed, jobs=jobs, quiet=quiet)
        dirs.append(out)
    return dirs


def balance_command(
    game: Annotated[str, typer.Argument(help="A game name (`chocosim games` lists them).")],
    out: HtmlOpt,
    n_games: Annotated[int, typer.Option("--games", min=1, help="Games to play in all, split over the tables.")] = 1_000_000,
    pdf: PdfOpt = None,
    seats: Annotated[list[str] | None, typer.Option(
        "--seats", help="A table: one strategy spec per seat, comma-separated; repeatable. "
        "Default: every bot of the game against every other.")] = None,
    players: Annotated[int | None, typer.Option("--players", min=1, help="Table size for the default tables.")] = None,
    runs_dir: Annotated[Path, typer.Option("--runs", help="Where the run directories go (re-running resumes them).")] = Path("runs"),
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**64 - 1, help="Run seed.")] = 0,
    jobs: Annotated[int | None, typer.Option("--jobs", min=1, help="Parallel workers (default: every core).")] = None,
    rules: Annotated[Path | None, typer.Option("--rules", help="House rules TOML.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="Override one param: key=value; repeatable.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
    min_effect: MinEffectOpt = 0.02,
) -> None:
    """Play a game's bots against each other, then write the balance report: the
    one-command balance check."""
    sets = dict(parse_set(s) for s in set_ or [])
    tables = [strategies.split_specs(s) for s in seats] if seats else None
    dirs = balance(game, n_games, runs_dir, seats=tables, players=players, sets=sets,
                   rules=rules, seed=seed, jobs=jobs, quiet=quiet)
    report_command(dirs, out, pdf, min_effect)
