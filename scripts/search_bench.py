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
# by table size: the specs name the former ones.
SEARCH_BASELINE = {"fabryka": "mcts(rollout=1, iterations=200)", "enemy_chocolatier": "mcts(iterations=200)",
                   "manfredini": "mcts(iterations=35)", "alleycat": "mcts(iterations=30)"}


def search_baseline(game: str) -> str:
    return SEARCH_BASELINE.get(game, "mcts")


def with_budget(spec: str, iterations: int) -> str:
    """`spec` with its `iterations` weight set to `iterations`."""
    name, _, args = spec.partition("(")
    kept = [a.strip() for a in args.rstrip(")").split(",") if a.strip() and a.split("=")[0].strip() != "iterations"]
    return f"{name}({', '.join(kept + [f'iterations={iterations}'])})"


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


def against_heuristic(name: str, players: int, bot: str, n: int, i0: int) -> tuple[float, float, int, int, object, str]:
    """`bot` in one seat against the game's heuristic in the others, seats rotated, games
    [i0, i0 + n): its wins, CPU seconds, searched decisions, iterations, the bot, and a
    digest of the games' scores (the same digest: the same games, move for move)."""
    spec = games()[name]
    state = spec.new_state(spec.params(players=players))
    lineup = strategies.build_lineup(name, [bot] + ["heuristic"] * (players - 1))
    out, dt = _play_timed(state, lineup, n, i0)
    bot_ = lineup[0]
    # The open-loop bot counts no iterations: its budget is fixed.
    walks = getattr(bot_, "walks", bot_.weights.get("iterations", 0) * bot_.searches)
    return (float(out["win"][out["seat_strategy"] == 0].sum()), dt, bot_.searches, walks, bot_,
            _digest(out))


def _play_timed(state, lineup, n: int, i0: int) -> tuple[dict, float]:
    perms = np.array([[(i + r) % state.n_players for i in range(state.n_players)]
                      for r in range(state.n_players)], np.int32)
    out = result_arrays(state, n)
    t = time.process_time()
    play_batch(state, lineup, perms, 0, 2026, i0, i0 + n, **out)
    return out, time.process_time() - t


def _digest(out: dict) -> str:
    return hashlib.sha256(out["score"].tobytes() + out["turns"].tobytes()).hexdigest()[:16]


# Run in a built checkout of another commit (--search-baseline-tree): the same games as
# against_heuristic, timed there. Only the engine's long-standing API is used, so that
# an older build can answer.
_BASELINE_SCRIPT = """
import hashlib, json, sys, time
import numpy as np
import strategies
from simcore.batch import play_batch, result_arrays
from simcore.registry import games
name, players, bot, n, i0 = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
spec = games()[name]
state = spec.new_state(spec.params(players=players))
lineup = strategies.build_lineup(name, [bot] + ["heuristic"] * (players - 1))
perms = np.array([[(i + r) % players for i in range(players)] for r in range(players)], np.int32)
out = result_arrays(state, n)
t = time.process_time()
play_batch(state, lineup, perms, 0, 2026, i0, i0 + n, **out)
dt = time.process_time() - t
digest = hashlib.sha256(out["score"].tobytes() + out["turns"].tobytes()).hexdigest()[:16]
print(json.dumps({"cpu": dt, "searches": lineup[0].searches, "digest": digest}))
"""


def baseline_elsewhere(tree: Path, name: str, players: int, bot: str, n: int, i0: int) -> tuple[float, int, str]:
    """CPU seconds, searched decisions and the games' digest of `bot` against the
    heuristic (as against_heuristic) in the build at `tree`, in a process of its own."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    with tempfile.TemporaryDirectory() as cwd:  # not a checkout's root: its source would shadow the build
        done = subprocess.run([sys.executable, "-c", _BASELINE_SCRIPT, name, str(players), bot, str(n), str(i0)],
                              env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"bench: the baseline build in {tree} failed: {done.stderr.strip().splitlines()[-1]}")
    r = json.loads(done.stdout)
    return r["cpu"], r["searches"], r["digest"]


def search(game_filter: str | None, bot: str, baseline: str | None, scale: float, rounds: int, deals: float,
           tree: Path | None = None) -> None:
    """The search bot `bot` at 2 players and at the largest table, `rounds` rounds: CPU
    ms a searched decision and iterations/s on one core (CPU time, the heuristics' few
    microseconds a decision included; median and range over rounds), its win share
    against the game's heuristic in the other seats (seats rotated, every round's games
    pooled; 95% Wilson interval, against the fair share 1/n), and against `baseline` (None:
    each game's search_baseline) at
    equal CPU time: the bot's budget scaled by the two bots' measured CPU a decision,
    each deal played with the bot in every other seat and then the seats swapped (fair
    share 50%; at an odd table in each seat in turn, 1/n), 95% interval over deals.

    With `tree` (a built checkout of the baseline's commit), the baseline's CPU is
    timed there, on the same games, and its games there must be the baseline spec's
    games here move for move (the digest of their scores and lengths): the deals are
    played here, by the spec that plays as the old build did."""
    from analysis.stats import wilson  # noqa: PLC0415  (the report stack, only here)
    where = f"timed in {tree}" if tree else "timed in this build"
    print(f"\nsearch bot {bot}, one core, {rounds} rounds: against each game's heuristic (seats rotated), "
          f"and against {baseline or 'the search bot of 1b60c88'} ({where}) at equal CPU time (each deal twice, the bot in every other seat, then the others: fair 50%)")
    print(f"{'game':<18}{'players':>7}{'games':>7}  {'vs heuristic (95% CI)':<22}{'fair':>6}{'iter/s':>10}"
          f"  {'ms/decision (range)':<22}{'baseline ms':>12}{'iters':>7}{'deals':>7}  vs baseline (95% CI)")
    for name, spec in games().items():
        if game_filter and name != game_filter:
            continue
        if "heuristic" not in strategies.available(name):
            continue
        lo, hi = spec.players
        base = baseline or search_baseline(name)
        for players in sorted({max(lo, 2), hi}):
            n = max(players, int(SEARCH_GAMES.get(name, 20) * scale) // players * players)
            wins = 0.0
            ms, base_ms, rate = [], [], []
            for r in range(rounds):
                w, dt, searched, walks, bot_, _ = against_heuristic(name, players, bot, n, r * n)
                wins += w
                ms.append(1000 * dt / max(searched, 1))
                rate.append(walks / dt)
                if tree is None:
                    _, dt, searched, _, _, _ = against_heuristic(name, players, base, n, r * n)
                else:
                    dt, searched, there = baseline_elsewhere(tree, name, players, base, n, r * n)
                    here = against_heuristic(name, players, base, n, r * n)[5]
                    if here != there:
                        sys.exit(f"bench: {base} plays other games here than in {tree} ({name}, "
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
                equal = max(1, round(budget * statistics.median(base_ms) / statistics.median(ms)))
                share, s_lo, s_hi = paired_share(name, players, with_budget(bot, equal), base, k, 7)
                line += f"{equal:>7}{k:>7}  {share:.1%} ({s_lo:.1%}-{s_hi:.1%})"
            print(line, flush=True)
