"""`chocosim compare`, `chocosim sweep` and `chocosim skill`: plain functions with typer annotations that
the CLI registers, like analysis/cli/report.py, so they can be tested without the CLI.
Each calls its job in analysis.api, imported when the command runs (see analysis.cli)."""
from __future__ import annotations

import math
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from analysis.options import each_once, param_name, seat_specs, set_overrides, split_list
from simcore.errors import UserError
from simcore.pygame import is_reference
from simcore.registry import games as registered_games
from simcore.parts import MANIFEST
from simcore.runner import BACKENDS, SEATINGS

__all__ = ["compare_command", "sweep_command", "skill_command", "Backend", "BackendOpt", "SchedulerOpt"]

_console = Console(stderr=True, markup=False, highlight=False)

HtmlOpt = Annotated[Path, typer.Option("-o", "--out", help="The HTML report to write.")]
PdfOpt = Annotated[Path | None, typer.Option("--pdf", help="Also print the report to this PDF (needs Chromium).")]
PrecisionOpt = Annotated[float | None, typer.Option(
    "--precision", min=0, help="Play in rounds until the 95% confidence sequence of every position's "
    "win rate (compare: of its change) is within ± this many points; --games is then the cap.")]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, max=2**64 - 1, help="Run seed (every run shares it).")]
JobsOpt = Annotated[int | None, typer.Option("--jobs", min=1, help="Parallel workers (default: every core).")]
QuietOpt = Annotated[bool, typer.Option("--quiet", help="No progress bar.")]
# The runner's backends, as the enum typer validates and lists in --help.
Backend = Enum("Backend", {name: name for name in BACKENDS}, type=str)
BackendOpt = Annotated[Backend, typer.Option(
    "--backend", help="Where every run plays: auto (threads, or processes when a bot is written in "
    "Python), processes, threads, or dask (the workers of a cluster: needs chocosim[dask], --scheduler "
    "and a run directory every worker shares).")]
SchedulerOpt = Annotated[str | None, typer.Option(
    "--scheduler", help="With --backend dask: the address of the dask scheduler, e.g. tcp://10.0.0.5:8786.")]


def _say(text: str) -> None:
    _console.print(text, soft_wrap=True)


def compare_command(
    targets: Annotated[list[str], typer.Argument(
        help="BASE VARIANT [VARIANT...] run directories, or a GAME name to play the rulebook "
        "against each --variant.", show_default=False)],
    out: HtmlOpt,
    pdf: PdfOpt = None,
    variant: Annotated[list[str] | None, typer.Option(
        "--variant", help="With GAME: a house rule, key=value[;key=value...] or a .toml file; repeatable.")] = None,
    seats: Annotated[str | None, typer.Option("--seats", help="With GAME: one strategy spec per seat.")] = None,
    games: Annotated[int, typer.Option("--games", min=1, help="With GAME: games per run (the cap with --precision).")] = 100_000,
    runs: Annotated[Path, typer.Option("--runs", help="With GAME: where the runs go (re-running resumes or extends them).")] = Path("runs"),
    seed: SeedOpt = 0,
    jobs: JobsOpt = None,
    precision: PrecisionOpt = None,
    margin: Annotated[float, typer.Option(
        "--margin", min=0, help="Equivalence margin in points: seat balance is called unchanged when every "
        "position's 95% interval of change lies within ± this.")] = 1.0,
    unpaired: Annotated[bool, typer.Option(
        "--unpaired", help="Compare runs that do not share game, table size, seating and seeds, as "
        "independent samples (wider intervals; the report says so).")] = False,
    backend: BackendOpt = Backend["auto"],
    scheduler: SchedulerOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Compare house rules against a baseline, paired on the same game seeds: every
    headline metric differenced with a 95% interval and an FDR-controlled verdict."""
    from analysis import api
    first = targets[0]
    # A game's name, unless a run directory goes by it here (a designer's package folder
    # named as its game is not one).
    playing = (first in registered_games() or is_reference(first)) and not (Path(first) / MANIFEST).is_file()
    if playing:
        if len(targets) > 1:
            raise UserError(f"compare {first}: with a game name the variants go in --variant, "
                            f"not as arguments ({', '.join(targets[1:])})")
        if not seats:
            raise UserError(f"compare {first}: --seats is needed to play the game")
        if unpaired:
            raise UserError("--unpaired is for run directories; the runs compare plays are always paired")
        result = api.compare_rules(first, seat_specs(seats), games, each_once("--variant", variant, what="house rule"),
                                   runs=runs, seed=seed, jobs=jobs, margin=margin,
                                   precision=precision, html=out, pdf=pdf, quiet=quiet,
                                   backend=backend.value, scheduler=scheduler)
        if result.precision:
            _say(result.precision.line("change of every position's win rate"))
    else:
        if variant or seats or precision is not None or backend.value != "auto" or scheduler is not None:
            raise UserError("--variant, --seats, --precision, --backend and --scheduler go with a GAME name, "
                            "not with run directories")
        if len(targets) < 2:
            raise UserError(f"compare: {first} is neither a game nor followed by a variant run directory")
        result = api.compare(targets[0], targets[1:], paired=not unpaired, margin=margin, html=out, pdf=pdf)
    for line in result.verdicts:
        _say(line)
    _say(f"comparison of {len(result.comparisons)} variant(s) against {result.base}: {out}"
         + (f" and {pdf}" if pdf else ""))


def sweep_command(
    game: Annotated[str, typer.Argument(help="A game name (`chocosim games` lists them).")],
    out: HtmlOpt,
    vary: Annotated[list[str], typer.Option(
        "--vary", help="A swept param: NAME=V1,V2,... (TOML values) or NAME=LOW..HIGH (every integer); "
        "repeatable, the grid is every combination.")],
    seats: Annotated[list[str], typer.Option("--seats", help="A lineup, one spec per seat; repeatable.")],
    games: Annotated[int, typer.Option("--games", min=1, help="Games per point (the cap with --precision).")] = 100_000,
    pdf: PdfOpt = None,
    sweep_dir: Annotated[Path | None, typer.Option(
        "--dir", help="The sweep directory (default: runs/sweep-GAME-NAMES); re-running finishes what is missing.")] = None,
    seating: Annotated[str, typer.Option("--seating", help=f"{', '.join(SEATINGS)}.")] = "rotate",
    seed: SeedOpt = 0,
    jobs: JobsOpt = None,
    precision: PrecisionOpt = None,
    rules: Annotated[Path | None, typer.Option("--rules", help="House rules TOML under the whole sweep.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="Fix one param for the whole sweep: key=value.")] = None,
    backend: BackendOpt = Backend["auto"],
    scheduler: SchedulerOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Sweep params over a grid (and lineups), every point on the same game seeds; writes
    the tidy metrics table, the plots and the fair points."""
    from analysis import api

    if seating not in SEATINGS:
        raise UserError(f"seating = {seating!r}: allowed are {', '.join(SEATINGS)}")
    grid = dict(api.sweep_values(v) for v in each_once("--vary", vary, what="param", key=param_name))
    sets = set_overrides(set_)
    where = sweep_dir or Path("runs") / f"sweep-{game}-{'-'.join(grid)}"
    lineups = [seat_specs(s) for s in each_once("--seats", seats, what="lineup", key=lambda s: ",".join(seat_specs(s)))]
    result = api.sweep(game, lineups, grid, games, where, seed=seed,
                       seating=seating, rules=rules, sets=sets, jobs=jobs, precision=precision,
                       html=out, pdf=pdf, quiet=quiet, backend=backend.value, scheduler=scheduler)
    for p in result.points:
        if p.refused:
            _say(f"refused: {', '.join(p.lineup)} · {p.name}: {p.refused}")
        elif p.precision:
            _say(f"{', '.join(p.lineup)} · {p.name}: {p.precision.line('win rates by position')}")
    for f in result.fair_points.iter_rows(named=True) if result.fair_points.height else []:
        at = f" at {f['at']}" if f["at"] else ""
        open_end = "" if -math.inf < f["low"] and f["high"] < math.inf else \
            ": the interval reaches beyond the swept values, so the crossing may be noise"
        _say(f"fair point ({f['lineup']}{at}): position {f['position']}'s advantage crosses zero at "
             f"{f['param']} = {f['x']:.2f} (95% CI {f['low']:.2f} to {f['high']:.2f}){open_end}")
    for line in result.widen:
        _say(line)
    ok = sum(1 for p in result.points if not p.refused)
    _say(f"sweep of {ok} point(s) ({len(result.points) - ok} refused), {result.played:,} games played "
         f"in {result.seconds:.1f} s: {where}, {out}" + (f" and {pdf}" if pdf else ""))


def _split_ladder(text: str) -> list[str]:
    return split_list("--ladder", text, what="two or more strategy specs, weakest first",
                      example="random,greedy,heuristic")


def skill_command(
    game: Annotated[str, typer.Argument(help="A game name (`chocosim games` lists them).")],
    out: Annotated[Path, typer.Option("-o", "--out", help="The HTML report to write.")],
    games: Annotated[int, typer.Option("--games", min=1, help="Games per run (each pairing, mirror match, "
                                       "doubling and component), rounded up to whole seat rotations.")] = 2_000,
    ladder: Annotated[str | None, typer.Option(
        "--ladder", help="The rungs, weakest first, comma-separated specs [default: random,greedy,heuristic "
        "and mcts where the game has them].", show_default=False)] = None,
    depth: Annotated[str | None, typer.Option(
        "--depth", help="Skill depth of this search bot: its iterations doubled --doublings times, e.g. "
        "'mcts(iterations=32)'.")] = None,
    doublings: Annotated[int, typer.Option("--doublings", min=1, help="Doublings of the budget for --depth.")] = 3,
    restricted: Annotated[str | None, typer.Option(
        "--restricted", help="Restricted play of this bot: it never takes one component, for each of "
        "the game's components, against its unrestricted self.")] = None,
    components: Annotated[str | None, typer.Option(
        "--components", help="Only these components for --restricted, comma-separated [default: all].",
        show_default=False)] = None,
    pdf: Annotated[Path | None, typer.Option("--pdf", help="Also print the report to this PDF (needs Chromium).")] = None,
    players: Annotated[int | None, typer.Option("--players", min=1, help="Table size [default: the params' or the game's smallest].",
                                                show_default=False)] = None,
    runs: Annotated[Path, typer.Option("--runs", help="Where the run directories go (re-running resumes them).")] = Path("runs"),
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**64 - 1, help="Run seed, the same for every run.")] = 0,
    jobs: Annotated[int | None, typer.Option("--jobs", min=1, help="Parallel workers (default: every core).")] = None,
    rules: Annotated[Path | None, typer.Option("--rules", help="House rules TOML.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="Override one param: key=value; repeatable.")] = None,
    backend: BackendOpt = Backend["auto"],
    scheduler: SchedulerOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    """Skill in a game: a ladder of bots with ratings, the balance at each rung, the skill
    depth of a search bot and the importance of each component (restricted play)."""
    sets = set_overrides(set_)
    rungs = _split_ladder(ladder) if ladder is not None else None
    if components is not None and restricted is None:
        raise UserError(f"--components {components!r}: goes with --restricted BOT (the bot whose restricted "
                        "play is measured); give both or neither")
    # None: every component; an empty value is refused by skill(), naming the components there are.
    only = split_list("--components", components, what="components of the game", example="pawns,dice") \
        if components else None if components is None else []
    from analysis import api

    a = api.skill(game, games, runs, out, pdf=pdf, jobs=jobs, backend=backend.value, scheduler=scheduler,
                  quiet=quiet, ladder=rungs, depth=depth,
                  doublings=doublings, restricted=restricted, players=players,
                  components=only, sets=sets, rules=rules, seed=seed)
    written = f"{out}" + (f" and {pdf}" if pdf else "")
    _console.print(f"skill report of {a.title}, {len(a.runs)} runs of {a.n_games:,} games: {written}", soft_wrap=True)
