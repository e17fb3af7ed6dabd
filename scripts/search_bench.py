"""The search bot's part of `scripts/bench.py --search`: CPU a decision, iterations/s,
strength against each game's heuristic, and against the search bot of 1b60c88 at equal
CPU time (timed in this build, or in a built checkout of that commit).

Only bench.py runs it (`python scripts/bench.py --search ...`)."""
from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import strategies
from simcore.batch import play_batch, result_arrays
from simcore.registry import games

# Games per table size and round for search(): enough for a useful interval on the fast
# games, a few minutes in all on one core.
SEARCH_GAMES = {"fabryka": 400, "enemy_chocolatier": 100, "manfredini": 30, "alleycat": 12}
# The search bot as the default `mcts` played at commit 1b60c88 (every weight added since
# then at the value that plays as it did), by game: the "today's bot" of the equal-CPU
# line. Fabryka's default has rolled out at random since, and every game's budget is set
# by table size: the specs name the former ones. They are played here with the weights of
# BASELINE_HERE added (1b60c88's build knows none of them).
SEARCH_BASELINE = {"fabryka": "mcts(rollout=1, iterations=200)", "enemy_chocolatier": "mcts(iterations=200)",
                   "manfredini": "mcts(iterations=35)", "alleycat": "mcts(iterations=30)"}
# Weights added since 1b60c88, or whose game default changed since, at the values that
# play as it did: it spent every budget, rolled out to the end in every game (Alley
# Cat's rollouts stop after 80 moves now), and searched every seat's moves in its tree
# (Enemy Chocolatier's at 6 players play the heuristic's now).
BASELINE_HERE = {"stop": 0, "depth": 0, "opponents": 0}


def search_baseline(game: str) -> str:
    return SEARCH_BASELINE.get(game, "mcts")


def with_weights(spec: str, **weights: float) -> str:
    """`spec` with these weights set."""
    name, kwargs = strategies.parse_spec(spec)
    kwargs.update({k: str(v) for k, v in weights.items()})
    return f"{name}({', '.join(f'{k}={v}' for k, v in kwargs.items())})"


def paired_share(name: str, players: int, bot: str, baseline: str, deals: int, seed: int) -> tuple[float, float, float]:
    """`bot` against `baseline` on the same deals (the same seed: the same cards and
    chance): the bot's mean win share per deal and its 95% interval (normal, over deals).
    At an even table the bot holds every other seat and each deal is played twice, the
    seats swapped, so its fair share is 50% at every table size; at an odd one it holds
    one seat, each deal played with it in every seat (fair share 1/n)."""
    spec = games()[name]
    state = spec.new_state(spec.params(players=players))
    share = np.zeros(deals)
    if players % 2 == 0:
        lineup = strategies.build_lineup(name, [bot, baseline] * (players // 2))
        plays = [[(s + shift) % players for s in range(players)] for shift in (0, 1)]
        bots = list(range(0, players, 2))  # the bot's strategy indices
    else:
        lineup = strategies.build_lineup(name, [bot] + [baseline] * (players - 1))
        plays = [[(s - seat) % players for s in range(players)] for seat in range(players)]
        bots = [0]
    for perm in plays:
        out = result_arrays(state, deals)
        play_batch(state, lineup, np.array([perm], np.int32), 1, seed, 0, deals, **out)
        share += (out["win"] * np.isin(out["seat_strategy"], bots)).reshape(deals, players).sum(1) / len(plays)
    half = 1.96 * share.std(ddof=1) / np.sqrt(deals) if deals > 1 else float("nan")
    return float(share.mean()), max(0.0, float(share.mean() - half)), min(1.0, float(share.mean() + half))


_KEPT: dict[tuple, tuple] = {}


def against_heuristic(name: str, players: int, bot: str, n: int, i0: int) -> tuple[float, float, int, int, object, str]:
    """`bot` in one seat against the game's heuristic in the others, seats rotated, games
    [i0, i0 + n): its wins, CPU seconds, searched decisions, iterations, the bot, and a
    digest of the games' scores (the same digest: the same games, move for move). The
    lineup is kept from call to call (as the baseline's process keeps its own): a bot's
    set-up, paid once, is not charged to a few games at a time."""
    if (name, players, bot) not in _KEPT:
        spec = games()[name]
        _KEPT[name, players, bot] = (spec.new_state(spec.params(players=players)),
                                     strategies.build_lineup(name, [bot] + ["heuristic"] * (players - 1)))
    state, lineup = _KEPT[name, players, bot]
    bot_ = lineup[0]

    def walks() -> int:  # (the open-loop bot counts no iterations: its budget is fixed)
        return getattr(bot_, "walks", bot_.weights.get("iterations", 0) * bot_.searches)

    searches, walked = bot_.searches, walks()
    out, dt = _play_timed(state, lineup, n, i0)
    return (float(out["win"][out["seat_strategy"] == 0].sum()), dt, bot_.searches - searches, walks() - walked,
            bot_, _digest(out))


def _play_timed(state, lineup, n: int, i0: int) -> tuple[dict, float]:
    perms = np.array([[(i + r) % state.n_players for i in range(state.n_players)]
                      for r in range(state.n_players)], np.int32)
    out = result_arrays(state, n)
    t = time.process_time()
    play_batch(state, lineup, perms, 0, 2026, i0, i0 + n, **out)
    return out, time.process_time() - t


def _digest(out: dict) -> str:
    return hashlib.sha256(out["score"].tobytes() + out["turns"].tobytes()).hexdigest()[:16]


# Answers in a built checkout of another commit (--search-baseline-tree), one request a
# line: the same games as against_heuristic, timed there. Only the engine's long-standing
# API is used, so that an older build can answer.
_BASELINE_SERVER = """
import hashlib, json, sys, time
import numpy as np
import strategies
from simcore.batch import play_batch, result_arrays
from simcore.registry import games
kept = {}
for line in sys.stdin:
    name, players, bot, n, i0 = json.loads(line)
    if (name, players, bot) not in kept:
        spec = games()[name]
        kept[name, players, bot] = (spec.new_state(spec.params(players=players)),
                                    strategies.build_lineup(name, [bot] + ["heuristic"] * (players - 1)))
    state, lineup = kept[name, players, bot]
    perms = np.array([[(i + r) % players for i in range(players)] for r in range(players)], np.int32)
    out = result_arrays(state, n)
    before = lineup[0].searches
    t = time.process_time()
    play_batch(state, lineup, perms, 0, 2026, i0, i0 + n, **out)
    dt = time.process_time() - t
    digest = hashlib.sha256(out["score"].tobytes() + out["turns"].tobytes()).hexdigest()[:16]
    print(json.dumps([dt, lineup[0].searches - before, digest]), flush=True)
"""


class BaselineTimer:
    """CPU seconds, searched decisions and the games' digest of a bot against the
    heuristic (as against_heuristic): in this build, or with `tree` in a process of
    that build's own which plays one request at a time. Requests alternate with the
    bot's own timing on the same core, so that the machine's drift falls on both alike:
    timed a minute apart on this 2-core VM, the same games' CPU moved by up to a fifth.
    In this build an `mcts` spec is played with the weights of BASELINE_HERE it does not
    name (the old build knows none of them)."""

    def __init__(self, tree: Path | None):
        self.proc = None
        if tree is not None:
            self._cwd = tempfile.TemporaryDirectory()  # not a checkout's root: its source would shadow the build
            self._err = Path(self._cwd.name, "stderr")
            with self._err.open("w") as err:
                self.proc = subprocess.Popen([sys.executable, "-c", _BASELINE_SERVER],
                                             env=dict(os.environ, PYTHONPATH=str(tree)), cwd=self._cwd.name,
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
        self.tree = tree

    def __enter__(self) -> BaselineTimer:
        return self

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:  # (it has died: its failure is already told)
                pass
            self.proc.wait()
            self._cwd.cleanup()

    @staticmethod
    def spec_here(spec: str) -> str:
        if spec.partition("(")[0].strip() != "mcts":
            return spec
        named = strategies.parse_spec(spec)[1]
        return with_weights(spec, **{k: v for k, v in BASELINE_HERE.items() if k not in named})

    def time(self, name: str, players: int, bot: str, n: int, i0: int) -> tuple[float, int, str]:
        if self.proc is None:
            _, dt, searched, _, _, digest = against_heuristic(name, players, self.spec_here(bot), n, i0)
            return dt, searched, digest
        try:
            self.proc.stdin.write(json.dumps([name, players, bot, n, i0]) + "\n")
            self.proc.stdin.flush()
            dt, searched, digest = json.loads(self.proc.stdout.readline())
        except (OSError, ValueError):  # it died, or answered with something else
            self.proc.kill()
            self.proc.wait()
            last = self._err.read_text().strip().splitlines() or ["no output"]
            sys.exit(f"bench: the baseline build in {self.tree} failed: {last[-1]}")
        return dt, searched, digest


def cpu_ratio(name: str, players: int, bot: str, base: str, timer: BaselineTimer, n: int, i0: int) -> float:
    """CPU a searched decision of `bot` over that of `base` (timed by `timer`), on games
    [i0, i0 + n) against the heuristic, the two in turn (each first in every other chunk)
    on chunks of those games, at most 20, each a whole number of seat rotations."""
    k = max(players, n // 20 // players * players)
    ours = theirs = 0.0
    ours_n = theirs_n = 0
    for j, c0 in enumerate(range(i0, i0 + n, k)):
        size = min(k, i0 + n - c0)
        for baseline_now in ((True, False) if j % 2 == 0 else (False, True)):
            if baseline_now:
                dt, searched, _ = timer.time(name, players, base, size, c0)
                theirs, theirs_n = theirs + dt, theirs_n + searched
            else:
                _, dt, searched, *_ = against_heuristic(name, players, bot, size, c0)
                ours, ours_n = ours + dt, ours_n + searched
    return (ours / max(ours_n, 1)) / (theirs / max(theirs_n, 1))


def equal_budget(name: str, players: int, bot: str, base: str, timer: BaselineTimer, start: int, n: int
                 ) -> tuple[int, float]:
    """The budget of `bot` whose CPU a decision is that of `base`, and the ratio measured
    there (within 2%, or the last of four steps). An iteration costs more in a larger
    tree (in Fabryka 1.4 µs at 2,752 iterations, 1.0 µs at 329), so the budget is found
    by timing it, from `start` (the default budget scaled by the two bots' CPU), each
    step rescaling the budget by the ratio measured at it, on games of its own."""
    budget = start
    for step in range(4):
        ratio = cpu_ratio(name, players, with_weights(bot, iterations=budget), base, timer, n, (100 + step) * n)
        if abs(ratio - 1) <= 0.02 or step == 3:
            break
        budget = max(1, round(budget / ratio))
    return budget, ratio


def search(game_filter: str | None, bot: str, baseline: str | None, scale: float, rounds: int, deals: float,
           tree: Path | None = None) -> None:
    """The search bot `bot` at 2 players and at the largest table, `rounds` rounds: CPU
    ms a searched decision and iterations/s on one core (CPU time, the heuristics' few
    microseconds a decision included; median and range over rounds), its win share
    against the game's heuristic in the other seats (seats rotated, every round's games
    pooled; 95% Wilson interval, against the fair share 1/n), and against `baseline` (None:
    each game's search_baseline) at equal CPU time: at the budget whose CPU a decision,
    timed in turn with the baseline's on the same games, is the baseline's (equal_budget;
    the ratio measured there is printed), each deal played with the bot in every other
    seat and then the seats swapped (fair share 50%; at an odd table in each seat in
    turn, 1/n), 95% interval over deals.

    With `tree` (a built checkout of the baseline's commit), the baseline's CPU is
    timed there, on the same games, and its games there must be the baseline spec's
    games here move for move (the digest of their scores and lengths): the deals are
    played here, by the spec that plays as the old build did. The bench and the
    baseline's process share one core (Linux): the lowest-numbered of those this
    process may run on (under `taskset -c N`, N)."""
    from analysis.stats import wilson  # noqa: PLC0415  (the report stack, only here)
    where = f"timed in {tree}" if tree else "timed in this build"
    print(f"\nsearch bot {bot}, one core, {rounds} rounds: against each game's heuristic (seats rotated), "
          f"and against {baseline or 'the search bot of 1b60c88'} ({where}) at equal CPU time (each deal twice, "
          "the bot in every other seat, then the others: fair 50%); 'CPU ratio': the bot's CPU a decision at "
          "those iterations over the baseline's, timed in turn")
    print(f"{'game':<18}{'players':>7}{'games':>7}  {'vs heuristic (95% CI)':<22}{'fair':>6}{'iter/s':>10}"
          f"  {'ms/decision (range)':<22}{'baseline ms':>12}{'iters':>7}{'CPU ratio':>10}{'deals':>7}"
          "  vs baseline (95% CI)")
    pinned = hasattr(os, "sched_setaffinity")
    if pinned:
        cpus = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(cpus)})
    try:
        with BaselineTimer(tree) as timer:
            for name, spec in games().items():
                if game_filter and name != game_filter:
                    continue
                if "heuristic" not in strategies.available(name):
                    continue
                lo, hi = spec.players
                base = baseline or search_baseline(name)
                for players in sorted({max(lo, 2), hi}):
                    print(_search_line(name, players, bot, base, timer, scale, rounds, deals, wilson), flush=True)
    finally:
        if pinned:
            os.sched_setaffinity(0, cpus)


def _search_line(name: str, players: int, bot: str, base: str, timer: BaselineTimer, scale: float, rounds: int,
                 deals: float, wilson) -> str:
    n = max(players, int(SEARCH_GAMES.get(name, 20) * scale) // players * players)
    wins = 0.0
    ms, base_ms, rate = [], [], []
    for r in range(rounds):
        w, dt, searched, walks, bot_, _ = against_heuristic(name, players, bot, n, r * n)
        wins += w
        ms.append(1000 * dt / max(searched, 1))
        rate.append(walks / dt)
        dt, searched, there = timer.time(name, players, base, n, r * n)
        if timer.tree is not None and against_heuristic(name, players, timer.spec_here(base), n, r * n)[5] != there:
            sys.exit(f"bench: {base} plays other games here than in {timer.tree} ({name}, "
                     f"{players} players, games {r * n}-{r * n + n}): no equal-CPU comparison")
        base_ms.append(1000 * dt / max(searched, 1))
    low, high = wilson(wins, n * rounds)
    budget = int(bot_.weights.get("iterations", 0))
    line = (f"{name:<18}{players:>7}{n * rounds:>7}  {wins / (n * rounds):>6.1%} ({low:.1%}-{high:.1%})"
            f"{1 / players:>6.1%}{statistics.median(rate):>10,.0f}  "
            f"{f'{statistics.median(ms):.2f} ({min(ms):.2f}-{max(ms):.2f})':<22}"
            f"{statistics.median(base_ms):>12.2f}")
    k = max(1, int(deals * n / players))
    if budget and deals > 0:
        start = max(1, round(budget * statistics.median(base_ms) / statistics.median(ms)))
        equal, ratio = equal_budget(name, players, bot, base, timer, start, n)
        share, s_lo, s_hi = paired_share(name, players, with_weights(bot, iterations=equal), timer.spec_here(base), k, 7)
        line += f"{equal:>7}{ratio:>10.2f}{k:>7}  {share:.1%} ({s_lo:.1%}-{s_hi:.1%})"
    return line
