"""Games played in memory, chunked over workers: for a caller that scores many short
evaluations (a tuner's candidates) and keeps no run directory.

The batch loop releases the GIL, so threads use every core without copying results
between processes; game i always has the seed f(seed, i), whatever the number of
workers or chunks."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from joblib import Parallel, delayed

from simcore.batch import play_batch, result_arrays
from simcore.registry import GameSpec
from simcore.runner import seat_orders, workers

__all__ = ["play_in_memory", "CHUNKS_PER_JOB"]

# Chunks per worker: enough that a slow chunk does not leave the others idle.
CHUNKS_PER_JOB = 4


def _play_chunk(game: GameSpec, params: Any, lineup: Callable[[], Sequence[Any]], perms: np.ndarray,
                seed: int, i0: int, i1: int) -> dict[str, np.ndarray]:
    st = game.new_state(params)
    a = result_arrays(st, i1 - i0)
    play_batch(st, lineup(), perms, 0, seed, i0, i1, **a)
    return a


def play_in_memory(game: GameSpec, params: Any, lineup: Callable[[], Sequence[Any]], n_games: int, seed: int, *,
                   jobs: int | None = None, backend: str = "threads",
                   scheduler: str | None = None) -> dict[str, np.ndarray]:
    """Games [0, n_games) with run seed `seed`, seats rotated, each chunk's bots built by
    `lineup()` (picklable, for process and dask workers); the result arrays of
    simcore.batch, whole, in game order."""
    state = game.new_state(params)
    perms = seat_orders(state.n_players, "rotate")
    with workers(backend, jobs, scheduler) as n_workers:
        size = max(1, math.ceil(n_games / (n_workers * CHUNKS_PER_JOB)))
        bounds = [(i0, min(i0 + size, n_games)) for i0 in range(0, n_games, size)]
        parts = Parallel(n_jobs=min(n_workers, len(bounds)))(
            delayed(_play_chunk)(game, params, lineup, perms, seed, i0, i1) for i0, i1 in bounds)
    # Row-per-seat arrays join along their last axis: features and interim are stored
    # one row per feature (see simcore.batch.result_arrays).
    return {k: np.concatenate([p[k] for p in parts], axis=-1) for k in parts[0]}
