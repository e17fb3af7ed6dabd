"""`chocosim report` and `chocosim balance`: plain functions with typer annotations that
the CLI registers (`app.command("report")(report_command)`), so they can be called and
tested without the CLI module."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from analysis.cli.experiments import Backend, BackendOpt, SchedulerOpt
from analysis.cli.output import JsonOpt, QuietOpt, progress, result_json, result_lines, written
from analysis.progress import RUNS
from analysis.options import each_once, set_overrides, split_list
from simcore.runner import keep_freed_memory

__all__ = ["report_command", "balance_command"]


def _process_age() -> float:
    """Seconds since this process began (Linux's /proc), when it is the `chocosim`
    command itself; else 0 (another platform, or a process that calls the CLI in-process,
    such as a test run, whose age is not the command's)."""
    if Path(sys.argv[0]).name != "chocosim":
        return 0.0
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        age = float(Path("/proc/uptime").read_text().split()[0]) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0
    # Loading takes seconds; an age beyond a minute is a clock that does not match (a
    # container's uptime), not a start.
    return age if 0 <= age < 60 else 0.0


RunDirsArg = Annotated[list[Path], typer.Argument(help="Run directories; several go into one report.")]
HtmlOpt = Annotated[Path, typer.Option("-o", "--out", help="The HTML report to write.")]
PdfOpt = Annotated[Path | None, typer.Option("--pdf", help="Also print the report to this PDF (needs Chromium).")]


MinEffectOpt = Annotated[float, typer.Option(
    "--min-effect", min=0.0, max=0.99,
    help="Smallest difference in win rate (a share: 0.02 = 2 percentage points) a component or behaviour "
         "needs, besides significance, to be stated as a finding.")]


# The default is analysis.api.MIN_EFFECT, written out: the api loads when a command runs.
def report_command(run_dirs: RunDirsArg, out: HtmlOpt, pdf: PdfOpt = None, min_effect: MinEffectOpt = 0.02,
                   quiet: QuietOpt = False, as_json: JsonOpt = False) -> None:
    """Analyse run directories and write a self-contained HTML balance report (and PDF);
    print each run's findings."""
    from analysis import api

    keep_freed_memory()
    with progress("report", quiet, unit=RUNS):
        report = api.report(run_dirs, out, pdf, min_effect)
    if as_json:
        result_json({**api.as_json(report), **written(out, pdf)})
        return
    files = f"{out}" + (f" and {pdf}" if pdf else "")
    result_lines([*api.words(report), f"report of {len(report.analyses)} run(s), {report.games:,} games: {files}"])


def balance_command(
    game: Annotated[str, typer.Argument(help="A game name (`chocosim games` lists them).")],
    out: HtmlOpt,
    pdf: PdfOpt = None,
    minutes: Annotated[float, typer.Option(
        "--minutes", min=0.0, help="Wall time of the whole command, the report included: games go first to "
        "the two strongest rungs and the strongest rung's score bonus, the weaker rungs get a floor; "
        "0: no limit, every run plays to --precision or --games.")] = 10.0,
    games: Annotated[int, typer.Option("--games", min=1, help="Games per run at most.")] = 1_000_000,
    precision: Annotated[float, typer.Option(
        "--precision", min=0.0001, help="A run stops once every win rate it measures is known within "
        "± this many percentage points (95% confidence sequence).")] = 0.5,
    players: Annotated[list[int] | None, typer.Option(
        "--players", min=2, help="A table size; repeatable (default: every size the game allows).")] = None,
    ladder: Annotated[str | None, typer.Option(
        "--ladder", help="The rungs, weakest first, comma-separated strategy specs (default: the game's "
        "bots, the tuned heuristic where validated, the search bot and twice its budget).")] = None,
    lowest: Annotated[str | None, typer.Option(
        "--lowest", help="Drop the default ladder's rungs below this one, e.g. heuristic.")] = None,
    search: Annotated[str, typer.Option(
        "--search", help="The search bot of the top rungs (at its budget and doublings of it).")] = "mcts",
    doublings: Annotated[int, typer.Option("--doublings", min=0, help="Doublings of the search budget.")] = 1,
    margin: Annotated[float, typer.Option(
        "--margin", min=0.0001, help="Percentage points within which the two strongest rungs must agree to call the "
        "verdict converged.")] = 1.0,
    compensation: Annotated[bool, typer.Option(
        "--compensation/--no-compensation", help="Estimate and confirm the score bonus by turn position and "
        "sweep the game's turn-order knobs at the strongest rung.")] = True,
    evidence: Annotated[bool, typer.Option(
        "--evidence/--no-evidence", help="Also write the per-run report of the strongest rungs "
        "(<report>-evidence.html).")] = True,
    runs: Annotated[Path, typer.Option("--runs", help="Where the run directories go (re-running resumes them).")] = Path("runs"),
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**64 - 1, help="Run seed.")] = 0,
    jobs: Annotated[int | None, typer.Option("--jobs", min=1, help="Parallel workers (default: every core).")] = None,
    rules: Annotated[Path | None, typer.Option("--rules", help="House rules TOML.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="Override one param: key=value; repeatable.")] = None,
    backend: BackendOpt = Backend["auto"],
    scheduler: SchedulerOpt = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Turn-position balance on a skill ladder, at every table size: mirror matches from the
    weakest bot to the strongest, the strongest rung's verdict and whether it has
    converged, and what would balance it."""
    from analysis import api

    sets = set_overrides(set_)
    rungs = split_list("--ladder", ladder, what="strategy specs, weakest first", example="random,greedy,heuristic") \
        if ladder is not None else None
    each_once("--players", [str(p) for p in players or []], what="table size")
    keep_freed_memory()
    # --minutes counts from the command's start: loading Python and the CLI takes seconds
    # on a busy machine.
    started = time.monotonic() - _process_age()
    if minutes:
        minutes = max(minutes - (time.monotonic() - started) / 60, 1e-3)
    with progress("balance", quiet, budget=60 * minutes or None) as shown:
        result = api.balance(game, html=out, pdf=pdf, minutes=minutes or None, games=games, precision=precision,
                             players=players, ladder=rungs, lowest=lowest, search=search, doublings=doublings,
                             margin=margin, compensation=compensation, evidence=evidence, runs=runs,
                             seed=seed, jobs=jobs, backend=backend.value, scheduler=scheduler, rules=rules,
                             sets=sets, log=shown.say)
    seconds = time.monotonic() - started
    if as_json:
        result_json({**api.as_json(result), **written(out, pdf), "seconds": seconds})
        return
    files = f"{out}" + (f" and {pdf}" if pdf else "")
    result_lines([*api.words(result),
                  f"balance report: {files}; tables and verdict beside it "
                  f"({', '.join(('balance.parquet', 'balance.csv', 'verdict.json'))}) in {seconds:.0f} s"])
