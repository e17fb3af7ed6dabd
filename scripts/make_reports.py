"""Regenerate reports/: a balance report (HTML and PDF) for every registered game, each
from a sweep of every bot of the game against every other at each of its bundled table
sizes (a game not listed in TABLES: its smallest and largest table), the tuned heuristic
included where one ships; and a skill report (ladder up to the search bot, balance by
skill, restricted play) for the games in SKILL.

    python scripts/make_reports.py                 # all games, default sizes
    python scripts/make_reports.py --only fabryka --games 2000000 --jobs 2

Runs go to runs/<game>/<lineup>/ and are resumed when the script is re-run, so an
interrupted regeneration only plays what is missing.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import strategies
from analysis.cli_report import balance, default_lineups
from analysis.report import write_report
from analysis.skill import skill
from simcore.errors import UserError
from simcore.registry import games

ROOT = Path(__file__).resolve().parent.parent
# Fabryka is the yardstick game: a million games per table (three bots, three tables)
# gives intervals of about ±0.1 point.
# The other games are slower per game; a million split over their three tables still
# gives intervals of about ±0.2 point on each table's win rates, in a few minutes.
# The games are split evenly over the table sizes.
GAMES = {"fabryka": 3_000_000}
DEFAULT_GAMES = 1_000_000
# Turn order matters differently at every size, so the multi-player games are reported
# at 3+ players too; Alley Cat has a solo mode of its own.
TABLES = {"fabryka": (2,), "enemy_chocolatier": (2, 4, 6), "manfredini": (2, 3, 4),
          "alleycat": (1, 2, 3, 4)}
# Skill reports: games per run and the bot whose components restricted play measures.
# The search bot costs seconds a game in the slower games, hence only these two.
# The search bot plays about a game a second in Manfredini and takes about 10 s a game
# in Alley Cat, hence few games there: wide intervals, but the ladder's order shows.
SKILL = {"fabryka": {"n_games": 2000}, "enemy_chocolatier": {"n_games": 400},
         "manfredini": {"n_games": 40}, "alleycat": {"n_games": 12, "players": 2}}


def bots(name: str) -> list[str]:
    """The bots of the default tables, and the shipped tuned heuristic."""
    found = [n for n, cls in strategies.available(name).items() if cls.DEFAULT_TABLES]
    if "tuned" in strategies.bundled_weights(name, "heuristic"):
        found.append("heuristic(weights=tuned)")
    return found


def table_sizes(name: str) -> tuple[int, ...]:
    lo, hi = games()[name].players
    return TABLES.get(name, tuple(sorted({lo, hi})))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="a game to regenerate (repeatable; default all)")
    parser.add_argument("--games", type=int, help="games per report (default: per-game sizes above)")
    parser.add_argument("--jobs", type=int, default=1, help="parallel workers")
    parser.add_argument("--runs", type=Path, default=ROOT / "runs", help="where the runs go")
    parser.add_argument("--out", type=Path, default=ROOT / "reports", help="where the reports go")
    parser.add_argument("--no-pdf", action="store_true", help="HTML only")
    parser.add_argument("--no-skill", action="store_true", help="balance reports only")
    args = parser.parse_args(argv)
    try:
        for name in args.only or list(games()):
            if name not in games():
                raise UserError(f"unknown game {name!r}; known games: {', '.join(games())}")
            n = args.games or GAMES.get(name, DEFAULT_GAMES)
            sizes = table_sizes(name)
            t0 = time.perf_counter()
            dirs = [d for size in sizes
                    for d in balance(name, max(1, n // len(sizes)), args.runs, players=size, jobs=args.jobs,
                                     seats=default_lineups(bots(name), size))]
            t1 = time.perf_counter()
            pdf = None if args.no_pdf else args.out / f"{name}.pdf"
            write_report(dirs, args.out / f"{name}.html", pdf)
            t2 = time.perf_counter()
            print(f"{name}: {n:,} games at {', '.join(map(str, sizes))} players in {len(dirs)} run(s): simulation {t1 - t0:.1f} s, "
                  f"report {t2 - t1:.1f} s -> {args.out / f'{name}.html'}", flush=True)
            if name in SKILL and not args.no_skill:
                html = args.out / f"{name}-skill.html"
                best = bots(name)[-1] if "tuned" in bots(name)[-1] else "heuristic"
                rungs = ["random", "greedy", "heuristic", *(["heuristic(weights=tuned)"] if best != "heuristic" else []), "mcts"]
                skill(name, SKILL[name]["n_games"], args.runs, html,
                      pdf=None if args.no_pdf else html.with_suffix(".pdf"), jobs=args.jobs, quiet=True,
                      restricted=best, ladder=rungs, players=SKILL[name].get("players"))
                print(f"{name}: skill report in {time.perf_counter() - t2:.1f} s -> {html}", flush=True)
    except UserError as e:
        print(f"make_reports: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
