#!/usr/bin/env python3
"""Speed of the engine: games/s and ns/decision on one core for every game, bot and
table size, then the speed-up of the runner with 2 workers and its peak memory.

    python scripts/bench.py                      # everything, ~1 s per configuration
    python scripts/bench.py --game fabryka --seconds 3
    python scripts/bench.py --parallel-games 10000000 --memory-games 20000000

Run it on an idle machine; quote medians of several runs. Figures are for the build
installed (the checked build is several times slower: see `simcore.state.CHECKED_BUILD`).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import strategies
from simcore.batch import play_batch
from simcore.registry import games
from simcore.state import CHECKED_BUILD


def table_sizes(lo: int, hi: int) -> list[int]:
    """The smallest, a middle (4) and the largest table a game allows."""
    return sorted({lo, hi} | ({4} if lo < 4 < hi else set()))


def arrays(state, n_games: int) -> list[np.ndarray]:
    rows = n_games * state.n_players
    return [
        np.zeros(n_games, np.int64), np.zeros(n_games, np.uint64), np.zeros(n_games, np.int32),
        np.zeros(n_games, np.int8), np.zeros(rows, np.int8), np.zeros(rows, np.int32),
        np.zeros(rows, np.int8), np.zeros(rows, np.float32), np.zeros(rows, np.int8),
        np.zeros((rows, max(state.n_features, 1)), np.int32),
        np.zeros((rows, max(state.n_interim, 1)), np.int32),
    ]


def bench_one(spec, players: int, bot: str, seconds: float) -> dict:
    """Play batches of growing size until one lasts `seconds`; the last batch's figures."""
    params = spec.params(players=players)
    state = spec.new_state(params)
    lineup = strategies.build_lineup(spec.name, [bot] * players)
    perms = np.array([list(range(players))], np.int32)
    n, i0 = 1000, 0
    while True:
        out = arrays(state, n)
        t = time.perf_counter()
        play_batch(state, lineup, perms, 1, 12345, i0, i0 + n, *out)
        dt = time.perf_counter() - t
        i0 += n
        if dt >= seconds or n >= 50_000_000:
            break
        n = int(n * min(10.0, max(2.0, 1.1 * seconds / max(dt, 1e-6))))
    turns = out[2]
    reasons = np.bincount(out[3], minlength=len(state.END_REASONS)) / n
    return {
        "games/s": n / dt,
        "ns/decision": dt / turns.sum() * 1e9,
        "decisions/game": turns.mean(),
        "end reasons": ", ".join(f"{r} {s:.1%}" for r, s in zip(state.END_REASONS, reasons) if s),
    }


def single_core(game_filter: str | None, seconds: float) -> None:
    print(f"one core ({'CHECKED' if CHECKED_BUILD else 'release'} build), each bot against itself")
    print(f"{'game':<18}{'players':>7}  {'bot':<12}{'games/s':>12}{'ns/decision':>13}{'decisions':>11}  end reasons")
    for name, spec in games().items():
        if game_filter and name != game_filter:
            continue
        for players in table_sizes(*spec.players):
            for bot in strategies.available(name):
                r = bench_one(spec, players, bot, seconds)
                print(f"{name:<18}{players:>7}  {bot:<12}{r['games/s']:>12,.0f}{r['ns/decision']:>13.1f}"
                      f"{r['decisions/game']:>11.1f}  {r['end reasons']}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", help="only this game")
    ap.add_argument("--seconds", type=float, default=1.0, help="length of each single-core measurement")
    args = ap.parse_args()
    single_core(args.game, args.seconds)


if __name__ == "__main__":
    main()
