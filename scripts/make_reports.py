"""Regenerate reports/: a balance report (HTML and PDF, with balance.parquet, balance.csv and
verdict.json beside it, under reports/<game>/) for every registered game: mirror matches on
the skill ladder at every table size the game allows, within a time budget per game; and a
skill report at two players (ladder up to the search bot, balance by skill, the search
bot's skill trace over three doublings of its budget, restricted play) for the
games in SKILL.

    python scripts/make_reports.py                 # all games, default budgets
    python scripts/make_reports.py --only fabryka --minutes 4 --jobs 2

Runs go to runs/<game>/... and are resumed (and extended) when the script is re-run.
Afterwards reports/README.md tables, per game and table size, what each verdict decided,
the games it stands on and what deciding it at the margin would cost (the README's table).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import strategies
from analysis import api
from analysis.api import skill
from analysis.render.formats import bound, least
from simcore.errors import UserError
from simcore.registry import games

ROOT = Path(__file__).resolve().parent.parent
# Minutes of the balance budget per game: Fabryka's, where a decision at ±1 percentage
# point is within reach (under an hour of one core), and otherwise the games with more
# table sizes and slower search get more. Every rung plays the game's default search bot.
MINUTES = {"fabryka": 25.0, "enemy_chocolatier": 20.0, "manfredini": 12.0, "alleycat": 15.0}
DEFAULT_MINUTES = 6.0
# Skill reports: games per run, and the skill trace of the search bot at two players
# (its default budget doubled three times, each against the budget below).
# The search bot's decision costs about 0.3 ms in Fabryka, 2 ms in Enemy Chocolatier,
# 1 ms in Manfredini and 4 ms in Alley Cat at its default budget, eight times that at
# the last doubling: hence fewer games where it is slow (wide intervals, but the
# ladder's order and the trace's direction show). Enemy Chocolatier's start player wins
# about 70% of these games, so its doublings (54-60%) need 1,000 unpaired games.
SKILL = {"fabryka": {"n_games": 1000}, "enemy_chocolatier": {"n_games": 1000},
         "manfredini": {"n_games": 100}, "alleycat": {"n_games": 30}}


def tuned(name: str, players: int) -> bool:
    """Whether the game ships tuned heuristic weights validated at this table size."""
    try:
        return players in (strategies.validated_players(name, "heuristic(weights=tuned)") or ())
    except UserError:  # no tuned weights shipped for this game
        return False


def _hours(h: float) -> str:
    return f"{h:,.0f}" if h >= 10 else f"{h:.2g}"


def decisions_table(out: Path) -> str:
    """A Markdown table of every bundled balance verdict under `out`: per game and table
    size, its state, the agreement reached or the change shown, the games of the
    strongest rung, and the core-hours a decision at the margin is projected to need."""
    rows = ["| Game | Players | Verdict | Agreement reached | Games at the strongest rung | "
            "Core-hours to decide |", "|---|---|---|---|---|---|"]
    for path in sorted(out.glob("*/verdict.json")):
        verdict = json.loads(path.read_text())
        plans = {p["players"]: p for p in verdict.get("plans") or []}
        for size in verdict["sizes"]:
            c = size["convergence"] or {}
            if c.get("shown_change"):
                shown = c["shown_change"]
                # Rounded as the report rounds them.
                reached = f"a change of at least {least(shown['points'])} shown ({api.ordinal(shown['position'])})"
            elif c.get("agreement_points") is not None:
                reached = f"agree within ±{bound(c['agreement_points'])}"
            else:
                reached = "–"
            final = (plans.get(size["players"]) or {}).get("final") or {}
            if final.get("core_hours") is not None:
                hours = f"{'more than ' if final['more_than'] else ''}{_hours(final['core_hours'])} " \
                        f"({final['games_needed']:,} paired games)"
            else:
                hours = f"not projected: {final.get('cannot_project') or 'a single rung'}"
            rows.append(f"| {verdict['game']} | {size['players']} | {c.get('state') or 'one rung'} | {reached} | "
                        f"{size['games']:,} ({size['rung']}) | {hours} |")
    margin = json.loads(next(out.glob("*/verdict.json")).read_text())["margin_points"]
    return (f"Deciding at ±{margin:g} percentage points (the margin), as the bundled reports stand "
            "(agreement and changes in percentage points):\n\n" + "\n".join(rows) + "\n")


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
    parser.add_argument("--no-balance", action="store_true", help="skill reports only")
    parser.add_argument("--no-play", action="store_true",
                        help="render the balance reports from the runs there are, playing nothing")
    args = parser.parse_args(argv)
    try:
        for name in args.only or list(games()):
            if name not in games():
                raise UserError(f"unknown game {name!r}; known games: {', '.join(games())}")
            minutes = args.minutes or MINUTES.get(name, DEFAULT_MINUTES)
            t0 = time.perf_counter()
            if not args.no_balance:
                html = args.out / name / f"{name}.html"
                result = api.balance(name, html=html, pdf=None if args.no_pdf else html.with_suffix(".pdf"),
                                     minutes=minutes, runs=args.runs, jobs=args.jobs,
                                     play=not args.no_play)
                games_played = sum(r["games"] for r in result.runs)
                print(f"{name}: {games_played:,} games in {len(result.runs)} runs, "
                      f"{time.perf_counter() - t0:.0f} s -> {html}", flush=True)
            t2 = time.perf_counter()
            if name in SKILL and not args.no_skill:
                html = args.out / f"{name}-skill.html"
                size = 2  # the skill trace's table: two players, each doubling head to head
                best = "heuristic(weights=tuned)" if tuned(name, size) else "heuristic"
                rungs = ["random", "greedy", "heuristic", *([best] if best != "heuristic" else []), "mcts"]
                skill(name, SKILL[name]["n_games"], args.runs, html,
                      pdf=None if args.no_pdf else html.with_suffix(".pdf"), jobs=args.jobs, quiet=True,
                      restricted=best, ladder=rungs, players=size,
                      depth="mcts", doublings=3)
                print(f"{name}: skill report in {time.perf_counter() - t2:.1f} s -> {html}", flush=True)
        (args.out / "README.md").write_text("# Bundled balance reports\n\n" + decisions_table(args.out))
    except UserError as e:
        print(f"make_reports: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
