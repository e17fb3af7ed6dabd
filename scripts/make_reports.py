"""Regenerate reports/: a balance report (HTML and PDF, with balance.parquet, balance.csv and
verdict.json beside it, under reports/<game>/) for every registered game: mirror matches on
the skill ladder at every table size the game allows, within a time budget per game; and a
skill report (ladder up to the search bot, balance by skill, restricted play) for the
games in SKILL.

    python scripts/make_reports.py                 # all games, default budgets
    python scripts/make_reports.py --only fabryka --minutes 4 --jobs 2

Runs go to runs/<game>/... and are resumed (and extended) when the script is re-run.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import strategies
from analysis import api
from analysis.skill import skill
from simcore.errors import UserError
from simcore.registry import games

ROOT = Path(__file__).resolve().parent.parent
# Minutes of the balance budget per game: the games with more table sizes and slower
# search get more.
MINUTES = {"fabryka": 6.0, "enemy_chocolatier": 15.0, "manfredini": 8.0, "alleycat": 8.0}
DEFAULT_MINUTES = 6.0
# The search bot's lowest rung on the ladder: its default where a decision costs about a
# millisecond; where full rollouts cost tens (Alley Cat, Manfredini), a smaller budget with
# rollouts cut short and scored by the heuristic's evaluation (the bot's documented fast
# setting), so the top rungs get games at all within the budget.
SEARCH = {"alleycat": "mcts(iterations=25, depth=16)", "manfredini": "mcts(iterations=100, depth=24)"}
# Skill reports: games per run and the bot whose components restricted play measures.
# The search bot plays about a game a second in Manfredini and takes about 10 s a game
# in Alley Cat, hence few games there: wide intervals, but the ladder's order shows.
SKILL = {"fabryka": {"n_games": 2000}, "enemy_chocolatier": {"n_games": 400},
         "manfredini": {"n_games": 40}, "alleycat": {"n_games": 12, "players": 2}}


def tuned(name: str, players: int) -> bool:
    """Whether the shipped tuned heuristic is validated at this table size."""
    return players in (strategies.validated_players(name, "heuristic(weights=tuned)") or ())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "),
                                     epilog="Runs go to runs/<game>/... and are resumed (and extended) "
                                            "when the script is re-run.")
    parser.add_argument("--only", action="append", help="a game to regenerate (repeatable; default all)")
    parser.add_argument("--minutes", type=float, help="balance budget per game (default: per game above)")
    parser.add_argument("--jobs", type=int, help="parallel workers (default: every core)")
    parser.add_argument("--runs", type=Path, default=ROOT / "runs", help="where the runs go")
    parser.add_argument("--out", type=Path, default=ROOT / "reports", help="where the reports go")
    parser.add_argument("--no-pdf", action="store_true", help="HTML only")
    parser.add_argument("--no-skill", action="store_true", help="balance reports only")
    parser.add_argument("--no-play", action="store_true",
                        help="render the balance reports from the runs there are, playing nothing")
    args = parser.parse_args(argv)
    try:
        for name in args.only or list(games()):
            if name not in games():
                raise UserError(f"unknown game {name!r}; known games: {', '.join(games())}")
            minutes = args.minutes or MINUTES.get(name, DEFAULT_MINUTES)
            t0 = time.perf_counter()
            html = args.out / name / f"{name}.html"
            result = api.balance(name, html=html, pdf=None if args.no_pdf else html.with_suffix(".pdf"),
                                 minutes=minutes, runs=args.runs, jobs=args.jobs, search=SEARCH.get(name, "mcts"),
                                 play=not args.no_play)
            t2 = time.perf_counter()
            games_played = sum(r["games"] for r in result.runs)
            print(f"{name}: {games_played:,} games in {len(result.runs)} runs, {t2 - t0:.0f} s -> {html}",
                  flush=True)
            if name in SKILL and not args.no_skill:
                html = args.out / f"{name}-skill.html"
                size = SKILL[name].get("players", games()[name].players[0])
                best = "heuristic(weights=tuned)" if tuned(name, max(size, 2)) else "heuristic"
                rungs = ["random", "greedy", "heuristic", *([best] if best != "heuristic" else []), "mcts"]
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
