"""`chocosim tune`: a plain function with typer annotations that the CLI registers; it
calls analysis.api's tune_bot or tune_rules, imported when the command runs."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from analysis.cli.output import JsonOpt, QuietOpt, progress, result_json, result_lines
from analysis.progress import TRIALS
from analysis.options import each_once, param_name, seat_specs, set_overrides, split_list
from simcore.errors import UserError

__all__ = ["tune_command"]


def _sizes(text: str) -> list[int]:
    entries = split_list("--players", text, what="table sizes", example="2,4")
    try:
        sizes = [int(p) for p in entries]
    except ValueError:
        raise UserError(f"--players {text!r}: expected table sizes, comma-separated, e.g. 2,4") from None
    # again as numbers: "2,02" is one size twice
    each_once("--players", [str(n) for n in sizes], what="table size")
    return sizes


def tune_command(
    game: Annotated[str, typer.Argument(help="A game name (`chocosim games` lists them).")],
    out: Annotated[Path, typer.Option("--out", help="Tuning directory: the optuna study (SQLite), "
                                      "best.json or proposal.toml, report.html. Re-running continues it.")],
    bot: Annotated[str, typer.Option("--bot", help="The bot whose weights are tuned.")] = "heuristic",
    against: Annotated[str, typer.Option(
        "--against", help="The field, comma-separated specs; 'self' is the best weights found "
        "so far (a league).")] = "heuristic,random",
    weights: Annotated[str | None, typer.Option(
        "--weights", help="Comma-separated weights to tune (default: every weight with a declared range).")] = None,
    players: Annotated[str | None, typer.Option(
        "--players", help="Table sizes, comma-separated, e.g. 2,4 (default: the smallest); the winner "
        "is replayed against the default at each, and best.json records where it holds.")] = None,
    vary: Annotated[list[str] | None, typer.Option(
        "--vary", help="Tune the game's params instead of a bot: a param and its range, "
        "NAME=LOW..HIGH; repeatable; goes with --goal.")] = None,
    goal: Annotated[list[str] | None, typer.Option(
        "--goal", help="A goal of rule tuning, repeatable: 'position balance within X percentage points', "
        "'game length A..B turns', 'REASON ends A..B%', 'margin within X score points'.")] = None,
    seats: Annotated[str, typer.Option(
        "--seats", help="Rule tuning: the lineup that plays every candidate.")] = "heuristic,heuristic",
    trials: Annotated[int, typer.Option("--trials", min=1, help="Candidates in the study, in all.")] = 40,
    games: Annotated[int, typer.Option("--games", min=1, help="Games per candidate and table.")] = 2000,
    holdout: Annotated[int | None, typer.Option(
        "--holdout-games", min=1, help="Games per table on fresh seeds for the winner (default: 2 x --games).")] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**64 - 1, help="Seed of the search games.")] = 0,
    jobs: Annotated[int | None, typer.Option("--jobs", min=1, help="Chunks played at once (default: every "
                                            "core, or every thread of the dask cluster).")] = None,
    backend: Annotated[str, typer.Option("--backend", help="threads (the game loop releases the GIL), "
                                         "processes, or dask (needs --scheduler).")] = "threads",
    scheduler: Annotated[str | None, typer.Option("--scheduler", help="Address of the dask scheduler.")] = None,
    rules_file: Annotated[Path | None, typer.Option("--rules", help="House rules TOML the games are played under.")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="Override one param: key=value; repeatable.")] = None,
    pdf: Annotated[Path | None, typer.Option("--pdf", help="Also print the report to this PDF.")] = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Tune a bot's weights against a field, or (with --vary and --goal) a game's params
    toward a designer's goals; confirm the winner on held-out seeds; write a report."""
    from analysis import api

    sets = set_overrides(set_)
    rules_mode = bool(vary or goal)
    varied = each_once("--vary", vary, what="param", key=param_name)
    goals = each_once("--goal", goal, what="goal", key=lambda g: " ".join(g.lower().split()))
    try:
        with progress("tune", quiet, unit=TRIALS):
            if rules_mode:
                result = api.tune_rules(
                    game, seat_specs(seats), api.tune_ranges(varied), goals, out, trials=trials, games=games,
                    holdout_games=holdout, seed=seed, jobs=jobs, rules=rules_file, sets=sets, quiet=quiet,
                    backend=backend, scheduler=scheduler, pdf=pdf)
            else:
                sizes = _sizes(players) if players is not None else None
                result = api.tune_bot(
                    game, bot, seat_specs(against, "--against"), out, trials=trials, games=games,
                    weights=split_list("--weights", weights, what="weight names", example="wait,deny")
                    if weights is not None else None,
                    players=sizes, holdout_games=holdout, seed=seed, jobs=jobs, rules=rules_file,
                    sets=sets, quiet=quiet, backend=backend, scheduler=scheduler, pdf=pdf)
    except KeyboardInterrupt:
        print(f"chocosim: interrupted; the finished trials are kept in {out}: run the same "
              "command again to continue", file=sys.stderr)
        raise typer.Exit(130) from None
    written = out / ("best.json" if not rules_mode else "proposal.toml")
    if as_json:
        result_json({**api.as_json(result), "written": [str(written), str(out / "report.html")]})
        return
    result_lines([*api.words(result), f"{result.ran} trial(s) run now; {written}, {out / 'report.html'}"])
