"""The `chocosim` command line: list games, rules and bots, play one game with a trace,
run millions of games into a run directory, summarise it, and write balance reports.
Every job is analysis.api's; a command parses its options, calls the job and prints.
The api is imported when a command runs (`from analysis import api` in each): loading
it and what it pulls in would slow `--help` and every listing.

Bad input of any kind ends with one line on stderr and exit code 2 (see `main`)."""
from __future__ import annotations

import functools
import gc
import json
import re
import sys
import textwrap
import traceback
from enum import Enum
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

import strategies
from analysis.cli.experiments import Backend, compare_command, skill_command, sweep_command
from analysis.cli.output import JsonOpt, QuietOpt, progress, result_json
from analysis.cli.report import balance_command, report_command
from analysis.cli.tune import tune_command
from analysis.options import seat_specs, set_overrides
from simcore.errors import UserError
from simcore.params import Params, flatten
from simcore.pygame import GameFailure
from simcore.registry import GameSpec, games, get_game
from simcore.runner import SEATINGS, BotFailure
from simcore.state import CHECKED_BUILD
from simcore.strategy import DecideError

if TYPE_CHECKING:
    from analysis.api import Summary

app = typer.Typer(
    name="chocosim",
    help="Monte Carlo balance analysis for board games.",
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_show_locals=False,  # a bug's traceback must not dump result arrays
)
# No markup: specs, paths and docs are user text, and "[...]" in them must print as is.
console = Console(markup=False)

EXIT_USAGE = 2
# Set by --debug: a user error then also prints its traceback (a failing bot's own).
_debug = False


def _print_version(value: bool) -> None:
    if value:
        from analysis import api

        print(f"chocosim {api.version()}")
        raise typer.Exit(0)


@app.callback()
def options(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option(
        "--debug", help="On an error, also print the traceback (e.g. of a bot that failed).")] = False,
    version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_print_version, help="Print chocosim's version and exit.")] = False,
) -> None:
    """Monte Carlo balance analysis for board games."""
    global _debug
    _debug = debug
    if CHECKED_BUILD and ctx.invoked_subcommand in ("run", "balance"):
        # The checked build (CHOCOSIM_CHECKED=1) asserts every move: several times slower.
        print("chocosim: warning: this is the checked build, several times slower; "
              "`pip install .` reinstalls the release build", file=sys.stderr)


# Choices of the runner, as the enum typer validates and lists in --help.
Seating = Enum("Seating", {name: name for name in SEATINGS}, type=str)


GameArg = Annotated[str, typer.Argument(
    help="A game name (`chocosim games` lists them), or a game of your own: package.module:Class or path/to/game.py.")]
RulesOpt = Annotated[Path | None, typer.Option(
    "--rules", help="House rules: a TOML file of param values overriding the defaults.")]
SetOpt = Annotated[list[str] | None, typer.Option(
    "--set", help="Override one param: key=value (dotted name, TOML value); repeatable.")]
SeatsOpt = Annotated[str, typer.Option(
    "--seats", help="One strategy spec per seat, comma-separated, e.g. random,greedy.")]
SeedOpt = Annotated[int, typer.Option(
    "--seed", min=0, max=2**64 - 1, help="Run seed; game i of a run has seed f(seed, i).")]


def _setup(game: str, seats: str, rules: Path | None,
           sets: list[str] | None) -> tuple[GameSpec, Params, list[str]]:
    """The game, its params for this table and the seat specs, all validated."""
    spec = get_game(game)
    specs = seat_specs(seats)
    params = spec.params(rules, set_overrides(sets), players=len(specs))
    for s in dict.fromkeys(specs):  # a bad spec or weights file fails before any warning is said
        strategies.build(spec.name, s)
    for s in dict.fromkeys(specs):  # once a spec, however many seats it takes
        if warning := strategies.unvalidated_warning(spec.name, s, len(specs)):
            print(f"chocosim: warning: {warning}", file=sys.stderr)
    return spec, params, specs


@app.command("games")
def list_games(as_json: JsonOpt = False) -> None:
    """The registered games."""
    if as_json:
        result_json([{"name": spec.name, "title": spec.title, "players": list(spec.players), "origin": spec.origin}
                     for spec in games().values()])
        return
    table = Table("name", "title", "players", "origin")
    for spec in games().values():
        lo, hi = spec.players
        table.add_row(spec.name, spec.title, str(lo) if lo == hi else f"{lo}-{hi}", spec.origin)
    console.print(table)


@app.command()
def rules(game: GameArg, rules: RulesOpt = None, set_: SetOpt = None, as_json: JsonOpt = False) -> None:
    """Every param of a game: dotted name, value, source and meaning. With --rules or
    --set, the values they change are marked with the default they replace."""
    spec = get_game(game)
    resolved = flatten(spec.params(rules, set_overrides(set_)).model_dump(mode="json"))
    if as_json:
        result_json([{"param": info.name, "value": resolved[info.name], "default": info.value,
                      "source": info.source if resolved[info.name] == info.value else "house rule",
                      "meaning": info.doc} for info in spec.defaults()])
        return
    table = Table("param", "value", "source", "meaning")
    for info in spec.defaults():
        value = resolved[info.name]
        if value == info.value:
            table.add_row(info.name, str(value), info.source, info.doc)
        else:
            changed = Text.assemble((str(value), "bold"), f" (was {info.value})")
            table.add_row(info.name, changed, "house rule", info.doc, style="yellow")
    console.print(table)


@app.command("strategies")
def list_strategies(
    game: GameArg,
    every: Annotated[bool, typer.Option(
        "--all", help="Also the settings for experts (e.g. the search bot's `peek`) and the bots "
        "another has replaced.")] = False,
) -> None:
    """The bots that can play a game (the game's own bots among them), with their weights
    and defaults. Settings for experts and superseded bots are listed with --all."""
    get_game(game)
    own = strategies.own_bots(game)
    table = Table("name", "description", "weights (defaults)")
    hidden = False
    for name, cls in strategies.available(game).items():
        replaced = strategies.superseded_by(cls)
        if replaced and not every:
            hidden = True
            continue
        expert = set(strategies.expert_weights(cls))
        # A bot whose defaults differ by game (the search bot's budget by table size) says so.
        defaults = {**cls.WEIGHTS, **(cls.game_defaults(game) if hasattr(cls, "game_defaults") else {})}
        shown = {k: v for k, v in defaults.items() if every or k not in expert}
        weights = ", ".join(f"{k}={v if isinstance(v, str) else format(v, 'g')}" for k, v in shown.items()) or "-"
        if len(shown) < len(defaults):
            hidden = True
            weights += f" (+{len(defaults) - len(shown)} for experts)"
        described = cls.DESCRIPTION + (" (the game's own bot)" if name in own else "") \
            + (f" (superseded by {replaced})" if replaced else "")
        table.add_row(name, described, weights)
    console.print(table)
    if hidden:
        print(f"Settings for experts and superseded bots: chocosim strategies {game} --all")


@app.command("help")
def help_command(
    term: Annotated[str | None, typer.Argument(
        help="A word of the reports, e.g. rung, komi, converged, 'q value' (default: list them).",
        show_default=False)] = None,
) -> None:
    """What a word of the reports means: `chocosim help rung`; without a word, every word
    the glossary defines."""
    from analysis import api

    if term is None:
        terms = api.glossary()
        width = max(len(t.key) for t in terms)
        for t in terms:
            print(f"{t.key:<{width}}  {t.name}")
        print("chocosim help TERM prints an entry.")
        return
    found = api.define(term)
    print(f"{found.name}\n{textwrap.fill(found.definition.replace('`', ''), 88)}")


@app.command()
def play(
    game: GameArg,
    seats: SeatsOpt,
    seed: SeedOpt = 0,
    index: Annotated[int, typer.Option(
        "--index", min=0, max=2**64 - 1, help="Game index within the run (with --seating fixed).")] = 0,
    rules: RulesOpt = None,
    set_: SetOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the trace as JSON.")] = False,
) -> None:
    """Play one game, seat i taken by the i-th spec, and print its trace. It is game
    --index of `chocosim run` with the same seed, seats and --seating fixed."""
    from analysis import api

    spec, params, specs = _setup(game, seats, rules, set_)
    trace = api.play_params(spec, params, specs, seed=seed, index=index)
    # Plain print: rich would wrap long lines and highlight the JSON.
    print(json.dumps(trace.to_dict(), indent=1) if as_json else trace.render())


@app.command("run")
def run_command(
    game: GameArg,
    seats: SeatsOpt,
    games: Annotated[int, typer.Option("--games", min=1, help="Games to play.")],
    out: Annotated[Path, typer.Option(
        "--out", help="Run directory; re-running the same command resumes it.")],
    seed: SeedOpt = 0,
    seating: Annotated[Seating, typer.Option(
        "--seating", help="rotate: every seat order equally often (when --games is a "
        "multiple of players!); fixed: seat i gets spec i; random: an order per game.")]
        = Seating["rotate"],
    jobs: Annotated[int | None, typer.Option(
        "--jobs", min=1, help="Chunks played at once [default: every core (with process "
        "workers, a run too short to repay starting them plays in this process), or every "
        "thread of the dask cluster].", show_default=False)] = None,
    backend: Annotated[Backend, typer.Option(
        "--backend", help="auto: threads, or processes when a bot is written in Python; "
        "processes (joblib loky); threads (the game loop releases the GIL); dask (a cluster; "
        "needs chocosim[dask], --scheduler and a shared filesystem).")] = Backend["auto"],
    scheduler: Annotated[str | None, typer.Option(
        "--scheduler", help="Address of the dask scheduler, e.g. tcp://10.0.0.5:8786.")] = None,
    chunk_size: Annotated[int | None, typer.Option(
        "--chunk-size", min=1, help="Games per part file (default: up to 250000, "
        "small enough to keep every worker busy); a resumed run keeps its own.")] = None,
    rules: RulesOpt = None,
    set_: SetOpt = None,
    quiet: QuietOpt = False,
    precision: Annotated[float | None, typer.Option(
        "--precision", min=0, help="Play in rounds until the 95% confidence sequence of every "
        "position's win rate is within ± this many percentage points; --games is then the cap.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Play many games in parallel into a run directory, then print the summary. A
    directory holding fewer games of the same run is extended (game i keeps its seed)."""
    from analysis import api

    spec, params, specs = _setup(game, seats, rules, set_)
    try:
        with progress("run", quiet, total=games):
            done = api.run_params(spec, params, specs, games, out, precision=precision, seed=seed,
                                  seating=seating.value, jobs=jobs, backend=backend.value, scheduler=scheduler,
                                  chunk_size=chunk_size, quiet=quiet)
    except KeyboardInterrupt:
        print(f"chocosim: interrupted; the finished parts are kept in {out}: "
              "run the same command again to resume", file=sys.stderr)
        raise typer.Exit(130) from None
    if as_json:
        result_json({"dir": str(out), "played": done.played, "resumed": done.resumed,
                     "precision": api.as_json(done.precision), "summary": api.as_json(api.summary(out))})
        return
    if done.precision is not None:
        console.print(done.precision.line(f"{spec.name} win rates by position"), soft_wrap=True)
    else:
        resumed = f" ({done.resumed:,} were already done)" if done.resumed else ""
        console.print(f"{spec.name}: played {done.played:,} games into {out}{resumed}", soft_wrap=True)
    _print_summary(api.summary(out))


@app.command()
def summary(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """The summary of a run directory: win rates by seat, by turn position and by
    strategy (95% intervals), shared victories, scores, end reasons."""
    from analysis import api

    s = api.summary(run_dir)
    if as_json:
        result_json(api.as_json(s))
    else:
        _print_summary(s)


def _rate(rate: float, low: float, high: float) -> str:
    """A win rate with its 95% interval, written as every report writes it."""
    from analysis import api

    return api.rate_text(SimpleNamespace(value=rate, low=low, high=high))


def _print_summary(s: Summary) -> None:
    from analysis import api

    m = s.manifest
    n_games = m.get("n_games")
    done = f" of {n_games:,} (incomplete: re-run to resume)" if isinstance(n_games, int) \
        and s.games != n_games else ""
    unproven = f" (unproven: {len(s.unproven)} part(s) without proof, below)" if s.unproven else ""
    console.print(f"{m.get('game')}  run {m.get('run_id')}  seed {m.get('seed')}  "
                  f"seating {m.get('seating')}  games {s.games:,}{done}{unproven}", soft_wrap=True)
    for line in s.unproven:
        console.print(f"unproven: {line}", soft_wrap=True, markup=False, highlight=False)
    tables = [("seat", s.by_seat, "games", str)]
    if s.by_position is not None:
        tables.append(("position", s.by_position, "games", api.ordinal))
    tables.append(("strategy", s.by_strategy, "plays", str))
    if s.by_group is not None:
        tables.append((s.by_group.columns[0], s.by_group, "plays", str))
    for key, df, n, label in tables:
        title = "by turn position" if key == "position" else f"by {key}"
        # A spec folds onto more lines rather than being cut: it is what names the bot.
        table = Table(Column(key, overflow="fold"), n, "wins", Column("win rate (95% CI)", no_wrap=True),
                      "mean score", title=title, title_justify="left")
        for r in df.iter_rows(named=True):
            table.add_row(label(r[key]), f"{r[n]:,}", api.count(r["wins"]),
                          _rate(r["win_rate"], r["ci_low"], r["ci_high"]), f"{r['mean_score']:.2f}")
        console.print(table)
    d = s.draws.row(0, named=True)
    console.print(f"shared victories: {d['shared']:,} of {d['games']:,} games, "
                  f"{_rate(d['rate'], d['ci_low'], d['ci_high'])}", soft_wrap=True)
    table = Table("end reason", "games", "share", title="end reasons", title_justify="left")
    for r in s.end_reasons.iter_rows(named=True):
        table.add_row(r["end_reason"], f"{r['games']:,}", f"{100 * r['share']:.2f}%")
    console.print(table)


def _fail(message: str) -> None:
    # One line, whatever the source: click messages may span lines.
    print(f"chocosim: error: {' '.join(message.split())}", file=sys.stderr)
    sys.exit(EXIT_USAGE)


def _usage_message(e: typer.TyperException) -> str:
    """Click's message, plus the offending value: typer validates option values with
    pydantic, whose error holds the input the message leaves out."""
    cause = e.__cause__
    if isinstance(cause, ValidationError) and cause.errors():
        return f"{e.format_message()} (got {cause.errors()[0]['input']!r})"
    return e.format_message()


def _resumable(command):
    """Ctrl-C in a command that plays runs: one line saying the finished runs are kept
    and how to resume, exit code 130 as `run` (caught here: click would print a blank
    line and nothing else)."""
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            command(*args, **kwargs)
        except KeyboardInterrupt:
            print("chocosim: interrupted; the finished runs are kept: re-run the same command to resume",
                  file=sys.stderr)
            raise typer.Exit(130) from None

    return wrapper


@app.command("new-game")
def new_game(
    name: Annotated[str, typer.Argument(help="The game's name (also its package's).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The new package's directory (new or empty).")],
    python: Annotated[bool, typer.Option("--python", help="Write a plain-Python game (nothing to build) "
                                         "instead of a compiled one.")] = False,
) -> None:
    """Write the package of a game of your own, starting as tic-tac-toe: with --python a
    plain-Python game (its rules, a bot, tests, README), else a compiled one (rules
    .pyx/.pxd against the installed contract, params, their defaults, tests, README)."""
    from simcore.newgame import write_python_starter, write_skeleton
    if python:
        written = write_python_starter(name, out)
        console.print(f"{len(written)} files written to {out}; register it and run its tests with: "
                      f"cd {out} && pip install -e . && python -m pytest tests", soft_wrap=True)
        return
    written = write_skeleton(name, out)
    console.print(f"{len(written)} files written to {out}; build and register it with: "
                  f"cd {out} && pip install 'Cython>=3.0.10' 'setuptools>=77' && pip install --no-build-isolation -e .",
                  soft_wrap=True)


app.command("report")(report_command)
app.command("balance")(_resumable(balance_command))
app.command("skill")(_resumable(skill_command))
app.command("compare")(_resumable(compare_command))
app.command("sweep")(_resumable(sweep_command))
app.command("tune")(tune_command)


@functools.cache
def _freeze_imports() -> None:
    """The objects of the imports (a few hundred thousand) live as long as the process:
    out of the collector's sight, its full passes during a run (a quarter of a second
    over 10 M fast games) scan only what the command makes. Once a process: a caller
    that runs several commands (the tests) would otherwise freeze each one's garbage."""
    gc.freeze()


# joblib's resource tracker (a process of its own, started with our warning options) can
# warn at a Ctrl-C of a "leaked" semaphore that the run's process had already freed (its
# second warning is the FileNotFoundError of freeing it again): noise no designer can act on.
_QUIET_TRACKER = "ignore::UserWarning:joblib.externals.loky.backend.resource_tracker"


def _quiet_tracker() -> None:
    if _QUIET_TRACKER not in sys.warnoptions:
        sys.warnoptions.append(_QUIET_TRACKER)


# Help names a value's kind in words, not as the Python type typer shows (<list[str]>).
_KINDS = {"int": "INTEGER", "float": "NUMBER", "str": "TEXT", "path": "PATH", "Path": "PATH"}


def _plain_type(shown: str | None) -> str | None:
    match = re.fullmatch(r"<(?:list\[)?(\w+)(?: range)?\]?>(\.\.\.)?", shown or "")
    if match is None:
        return shown.strip("<>") if shown else shown
    return _KINDS.get(match[1], match[1].upper()) + (match[2] or "")


def _plain_help(command: Any) -> Any:
    """The command tree with every parameter's kind shown in words (see _KINDS)."""
    for sub in getattr(command, "commands", {}).values():
        _plain_help(sub)
    for param in command.params:
        shown = param.display_type_rich
        param.display_type_rich = lambda ctx, shown=shown: _plain_type(shown(ctx))
    return command


def main(argv: list[str] | None = None) -> None:
    """Entry point: bad input (our UserError, a command-line usage error, or a user's bot
    that failed outside a run: `play`, `tune`) is one line on stderr and exit code 2,
    never a traceback (that with --debug)."""
    _freeze_imports()
    _quiet_tracker()
    try:
        command = _plain_help(typer.main.get_command(app))
        args = sys.argv[1:] if argv is None else argv
        # Bare `chocosim` prints the commands, not "Missing command."
        code = command.main(args=args or ["--help"], prog_name="chocosim", standalone_mode=False)
    except (UserError, DecideError) as e:
        if _debug:
            print(e.details if isinstance(e, (BotFailure, DecideError, GameFailure)) and e.details
                  else traceback.format_exc(),
                  file=sys.stderr, end="")
        _fail(f"bot {e.name} (seat {e.seat}) {e.what}" if isinstance(e, DecideError) else str(e))
    except typer.TyperException as e:  # click's usage errors (unknown option, bad value...)
        _fail(_usage_message(e))
    except typer.Abort:  # Ctrl-C in a command that writes nothing until it ends
        print("chocosim: interrupted", file=sys.stderr)
        sys.exit(130)
    except OSError as e:  # a file a command reads or writes outside the checked paths
        if _debug:
            traceback.print_exc()
        _fail(f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e))
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
