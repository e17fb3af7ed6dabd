"""A balance experiment played (analysis.experiments.balance): every run of the plan to its
precision, or within a time budget where games narrow the verdict most
(analysis.experiments.budget), then analysed; its phases go to the command's progress."""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from analysis import progress
from analysis.experiments import budget
from analysis.experiments.balance import BalanceResult, SizeVerdict, analyze
from analysis.experiments.balance_plan import Cell, Plan
from analysis.experiments.budget import Played, play

__all__ = ["balance", "with_plans", "REPORT_SECONDS"]


# ---- the whole experiment ----

def balance(p: Plan, *, jobs: int | None = None, log: Callable[[str], None] | None = None) -> BalanceResult:
    """Play the ladder (and, with compensation, the komi confirmation and knob sweeps of
    the strongest rung at each size) within the plan's budget, then analyse. With a
    budget (`p.minutes`, the wall time of the whole call, the analysis included), the
    phases of `experiments.budget` spend it where the verdict is decided, and the plan
    (what deciding each size costs, and what the budget will reach) is said before the
    main phase; without one, every cell plays to precision or its cap."""
    start = time.monotonic()
    say = _Progress(log)
    if p.minutes is None:
        say.phase("ladder", f"{len(p.ladder_cells())} runs, each to ±{p.precision:g} points or {p.cap:,} games")
        played = play(p, p.ladder_cells(), jobs=jobs)
        if p.compensation:
            first = analyze(p, played, full=False)
            say.phase("compensation", "the strongest rung's score bonus and knobs, paired with it")
            for v in first.sizes:
                # As many games as the strongest rung's mirror, so they pair game for game.
                played += play(p, _compensation_cells(p, v), cap=v.top.games, jobs=jobs)
        say.phase("report", "analysis and report")
        return with_plans(p, analyze(p, played, time.monotonic() - start), {}, played)
    return _within_budget(p, start, say, jobs)


# Seconds kept for the analysis and the report, at least. On a busy machine they take
# longer: about four times as long as loading the plotting stack they need (loaded first,
# and timed), and six times a partial analysis of the same runs (timed before the
# compensation phase).
REPORT_SECONDS = 10.0


def _within_budget(p: Plan, start: float, say: _Progress, jobs: int | None) -> BalanceResult:
    total = 60 * p.minutes
    end = start + total
    loading = time.monotonic()
    # The report's plotting and template stack, loaded here and timed: its loading time
    # says how busy the machine is (an experiment imports no rendering of its own).
    import jinja2  # noqa: F401
    import matplotlib.pyplot  # noqa: F401
    import seaborn  # noqa: F401
    # At most a third of a budget of seconds: some of it must play.
    reserve = min(max(REPORT_SECONDS, 4 * (time.monotonic() - loading)), total / 3)
    spender = budget.Spender(p, jobs=jobs, deadline=end - reserve)
    ladder = p.ladder_cells()
    pairs = {n: budget.top_pair(p, n) for n in p.sizes}
    tops = {c.path for pair in pairs.values() for c in pair}

    say.phase("pilot", f"price {len(ladder)} runs, the two strongest rungs {budget.PILOT_PAIRS} paired games further")
    budget.pilot(spender, ladder, list(pairs.values()), budget.PILOT_SHARE * total)

    weaker = [c for c in ladder if c.path not in tops]
    floor_seconds = min(budget.FLOOR_SHARE * total, _floor_cost(spender, weaker))
    compensation_seconds = budget.COMPENSATION_SHARE * total if p.compensation else 0.0
    headline_seconds = end - reserve - time.monotonic() - floor_seconds - compensation_seconds
    before = {}
    for n, pair in pairs.items():
        if len(pair) < 2:
            continue  # one rung: no convergence to decide
        pilot = budget.pair_projection(spender, n, pair)
        reach = budget.reach(spender, pair, max(0.0, headline_seconds) / len(pairs))
        before[n] = (pilot, reach)
        say.line(_plan_line(n, p.margin, pilot, reach))

    say.phase("floor", f"{len(weaker)} weaker rungs and meetings to {budget.FLOOR_GAMES} games each")
    budget.floor(spender, weaker, time.monotonic() + floor_seconds)

    say.phase("headline", f"the two strongest rungs at {', '.join(map(str, pairs))} players, game for game")
    budget.headline(spender, pairs, end - reserve - compensation_seconds)

    ready: list[SizeVerdict] = []
    if p.compensation:
        measured = time.monotonic()
        first = analyze(p, list(spender.states.values()), full=False)
        reserve = max(reserve, 6 * (time.monotonic() - measured))
        spender.deadline = end - reserve
        ready = [v for v in first.sizes if budget.headline_halfwidth(spender, v.players, pairs[v.players])
                 <= max(budget.MEANINGFUL_HALFWIDTH, p.margin)]
        wide = f"the headline's interval still wider than ±{max(budget.MEANINGFUL_HALFWIDTH, p.margin):g} points"
        say.phase("compensation", f"score bonus and knobs at {', '.join(str(v.players) for v in ready)} players"
                  if ready else f"none ({wide}): the time goes to the headline")
        # Its share of the budget, not what is left: in a resumed run the knob values
        # grow towards a strongest rung that already holds many games, and would take it all.
        _compensate_all(p, spender, ready, time.monotonic() + compensation_seconds)
    # What is left goes to the headline; once that is decided or at its cap, to the compensation.
    budget.headline(spender, pairs, end - reserve)
    if ready and spender.left() > 0:
        _compensate_all(p, spender, ready, end - reserve)
    for s in spender.states.values():
        s.stopped = s.stopped or "time"
    say.phase("report", "analysis and report")
    result = analyze(p, list(spender.states.values()), time.monotonic() - start)
    return with_plans(p, result, before, list(spender.states.values()))


def _floor_cost(spender: budget.Spender, cells: Sequence[Cell]) -> float:
    """Seconds the floor would take at the prices the pilot measured."""
    cost = 0.0
    for c in cells:
        s = spender.state(c)
        missing = max(0, budget.FLOOR_GAMES - s.games)
        if missing and not s.stopped:
            per = spender.price(s)
            cost += spender.overhead() + missing * (per if math.isfinite(per) else 0.0)
    return cost


def _compensation_cells(p: Plan, v: SizeVerdict) -> list[Cell]:
    cells = p.knob_cells(v.players, v.strongest)
    if v.komi is not None and any(v.komi.points):
        cells.insert(0, p.komi_cell(v.players, v.strongest, v.komi.points))
    return cells


def _compensate_all(p: Plan, spender: budget.Spender, ready: Sequence[SizeVerdict], until: float) -> None:
    """Each table size's compensation in an equal share of the time before `until`."""
    for k, v in enumerate(ready):
        _compensate(p, spender, v, time.monotonic() + spender.left(until) / (len(ready) - k))


def _compensate(p: Plan, spender: budget.Spender, v: SizeVerdict, until: float) -> None:
    """The score bonus's confirmation first (to the strongest rung's games, within half
    the time), then the knobs' values, each at most the strongest rung's games (they
    pair with it game for game)."""
    top = spender.state(p.mirror(v.players, v.strongest))
    cells = [spender.state(c) for c in _compensation_cells(p, v)]
    komi = [s for s in cells if s.cell.kind == "komi"]
    knobs = [s for s in cells if s.cell.kind == "knob"]
    target = lambda s: top.games  # noqa: E731
    if komi:
        spender.fill(komi, target, time.monotonic() + spender.left(until) / (2 if knobs else 1), lambda s: top)
    spender.fill(knobs, target, until, lambda s: top)


def with_plans(p: Plan, result: BalanceResult, before: dict[int, tuple[budget.Projection, int | None]],
               played: Sequence[Played] = ()) -> BalanceResult:
    """The result with what deciding each table size costs (projected from the pilot,
    said before, and from every paired game, priced at the CPU the games `played` in
    this call took), and the runs that hold fewer games than their manifest asks (a run
    killed or cut short)."""
    state = {s.cell.path: s for s in played}
    timed = [s.quickest for s in played if s.played]
    overhead = min(timed) if timed else 0.0
    plans = []
    for v in result.sizes:
        c = v.convergence
        final = None
        if c is not None:
            pair = (v.rung(c.top).path, v.rung(c.second).path)
            cpu = sum(state[path].cpu_per_game(overhead) if path in state and state[path].played else math.nan
                      for path in pair)
            final = budget.project(budget.paired_differences(*pair, v.players), p.margin, cpu)
        pilot, reach = before.get(v.players, (None, None))
        plans.append(budget.SizePlan(v.players, pilot, reach, final, 0 if c is None else c.games,
                                     "" if c is None else c.state))
    short = []
    for r in result.runs:
        held, asked = budget.shortfall(Path(r["path"]))
        if held < asked:
            short.append({**r, "games": held, "asked": asked, "missing": asked - held})
    runs = [{**r, "cpu_seconds": state[Path(r["path"])].cpu if Path(r["path"]) in state else None}
            for r in result.runs]
    return replace(result, plans=plans, short=short, runs=runs,
                   budget_seconds=None if p.minutes is None else 60 * p.minutes)


class _Progress:
    """Each phase to the command's progress (analysis.progress), which shows the time left
    of the budget; the plan's lines to `log`."""

    def __init__(self, log: Callable[[str], None] | None):
        self.log = log

    def line(self, text: str) -> None:
        if self.log:
            self.log(text)

    def phase(self, name: str, what: str) -> None:
        progress.phase(f"{name}: {what}")


def _plan_line(n: int, margin: float, pilot: budget.Projection, reach: int | None) -> str:
    points = f"±{margin:g} point" + ("" if margin == 1 else "s")
    head = f"plan, {n} players: "
    if not pilot.route:
        return head + f"cannot project the games deciding {points} yet ({pilot.reason})"
    verdict = {"converged": "converged", "moves": "moving with skill"}[pilot.route]
    more = "more than " if pilot.capped else "about "
    hours = "" if pilot.core_hours is None else f", {pilot.core_hours:.2g} core-hours"
    text = head + (f"deciding at {points} ({verdict}, the pilot's change {pilot.change:+.1f} points) needs "
            f"{more}{pilot.games:,} games at each of the two strongest rungs{hours}")
    if reach is None:
        return text
    return text + (f"; this budget reaches about {reach:,}" + (" (enough)" if reach >= pilot.games else
                                                                " (not enough)"))
