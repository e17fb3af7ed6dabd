# cython: language_level=3
"""The batch loop: plays games [i0, i1) of a run without the GIL and writes one row per
game x seat into preallocated arrays (struct of arrays)."""
from libc.stdint cimport uint64_t, int64_t, int8_t, int16_t, int32_t

from simcore.batchjob cimport BatchJob
from simcore.rng cimport Rng, rng_seed, rng_below, game_seed, bot_seed, seating_seed
from simcore.state cimport GameState, MAX_PLAYERS
from simcore.strategy cimport Strategy, Lineup

import numpy as np

from simcore.errors import CounterOverflow

# The generic loop: virtual calls into any GameState.
ctypedef fused Game:
    GameState
include "simcore/loop.pxi"

__all__ = ["play_batch", "result_arrays", "tally_size", "SEATING_MODES", "seed_of_game", "seeds_of_games",
           "seed_of_bot", "seating_row"]

SEATING_MODES = ("rotate", "fixed", "random")


def seed_of_game(uint64_t run_seed, uint64_t index):
    """The seed of game `index` of a run."""
    return game_seed(run_seed, index)


def seeds_of_games(uint64_t run_seed, const int64_t[::1] games):
    """The seeds of games `games` of a run (uint64): what a result part no longer stores
    is derived on read (simcore.parts), by the very hash the batch loop uses."""
    out = np.empty(games.shape[0], np.uint64)
    cdef uint64_t[::1] seeds = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(games.shape[0]):
            seeds[i] = game_seed(run_seed, <uint64_t>games[i])
    return out


def seed_of_bot(uint64_t seed, int seat):
    """The seed of the bot stream of `seat` in the game of `seed`."""
    return bot_seed(seed, seat)


def seating_row(int seating, uint64_t seed, int64_t index, int64_t n_perms):
    """The row of the seat-order table used by game `index` (see play_batch)."""
    cdef Rng r
    if seating == 0:
        return index % n_perms
    if seating == 1:
        return 0
    rng_seed(&r, seating_seed(seed))
    return rng_below(&r, <unsigned int>n_perms)


def result_arrays(GameState state, int64_t n_games):
    """Zeroed result arrays for `n_games` of `state`'s game, keyed by play_batch's
    argument names: play_batch(state, bots, perms, seating, seed, i0, i0 + n_games,
    **result_arrays(state, n_games))."""
    rows = n_games * state.n_players
    return {
        "game_index": np.zeros(n_games, np.int64),
        "seeds": np.zeros(n_games, np.uint64),
        "turns": np.zeros(n_games, np.int32),
        "end_reason": np.zeros(n_games, np.int8),
        "seat_strategy": np.zeros(rows, np.int8),
        "score": np.zeros(rows, np.int32),
        "rank": np.zeros(rows, np.int8),
        "win": np.zeros(rows, np.float32),
        "first": np.zeros(rows, np.int8),
        "position": np.zeros(rows, np.int8),
        # Column by column (feature f of every row is features[f]), int16 (int8 for a
        # game with narrow_features).
        "features": np.zeros((state.n_features, rows), feature_dtype(state)),
        "interim": np.zeros((state.n_interim, rows), np.int16),
    }


def feature_dtype(GameState state):
    """The type results store `state`'s features in."""
    return np.int8 if state.narrow_features else np.int16


def tally_size(GameState state):
    """The length of the tally array play_batch adds a batch's counts to."""
    n = state.n_players
    return n * n * n * len(type(state).END_REASONS) * 4


def play_batch(GameState state, strategies, const int32_t[:, ::1] perms, int seating,
               uint64_t run_seed, int64_t i0, int64_t i1,
               int64_t[::1] game_index, uint64_t[::1] seeds, int32_t[::1] turns,
               int8_t[::1] end_reason, int8_t[::1] seat_strategy,
               int32_t[::1] score, int8_t[::1] rank, float[::1] win, int8_t[::1] first,
               int8_t[::1] position,
               features, int16_t[:, ::1] interim, bint generic=False,
               double[::1] tally=None):
    """Play games [i0, i1). Row (g - i0) * n_players + seat of the seat arrays, row g - i0
    of the game arrays; `features` (of feature_dtype(state)) and `interim` (int16) hold one
    row per feature, one column per seat row. `tally`, if given (tally_size(state) zeros), gains the batch's counts per cell:
    see BatchJob.tally. `perms` lists seat orders (row r: strategy index of each seat);
    seating 0 = rotate through the rows by game index, 1 = fixed (row 0), 2 = random row.
    Holds the GIL only if a strategy is written in Python. `generic` plays with the loop
    every game shares (virtual calls) instead of the game's own compiled loop; both give
    the same results (conformance-tested)."""
    cdef int n = state.n_players
    cdef int nf = state.n_features
    cdef int ni = state.n_interim
    if len(strategies) != n:
        raise ValueError(f"{n} seats but {len(strategies)} strategies")
    # The loop reads perms by raw pointer: every row must name a strategy for each seat.
    if perms.shape[0] < 1 or perms.shape[1] != n:
        raise ValueError(f"perms must have at least one row of {n} seats; it is {perms.shape[0]} x {perms.shape[1]}")
    if min(min(r) for r in perms) < 0 or max(max(r) for r in perms) >= n:
        raise ValueError(f"perms must hold strategy indices in [0, {n})")
    cdef int64_t games = i1 - i0
    for name, arr, rows in (("game_index", game_index, games), ("seeds", seeds, games),
                            ("turns", turns, games), ("end_reason", end_reason, games),
                            ("seat_strategy", seat_strategy, games * n), ("score", score, games * n),
                            ("rank", rank, games * n), ("win", win, games * n),
                            ("first", first, games * n), ("position", position, games * n)):
        if arr.shape[0] < rows:
            raise ValueError(f"{name} has {arr.shape[0]} rows; the batch needs {rows}")
    cdef int16_t[:, ::1] wide
    cdef int8_t[:, ::1] narrow
    expected, given = np.dtype(feature_dtype(state)), np.asarray(features).dtype
    if given != expected:
        raise ValueError(f"features must be {expected.name} for this game; they are {given}")
    if state.narrow_features:
        narrow = features
    else:
        wide = features
    if features.shape[1] < games * n or interim.shape[1] < games * n:
        raise ValueError(f"features/interim have {features.shape[1]}/{interim.shape[1]} seat rows; "
                         f"the batch needs {games * n}")
    if features.shape[0] < nf or interim.shape[0] < ni:
        raise ValueError(f"features/interim have {features.shape[0]}/{interim.shape[0]} columns; "
                         f"this game writes {nf}/{ni}")
    for s in strategies:
        (<Strategy?>s).bind(state)
    if games <= 0:
        return
    cdef Lineup lineup = Lineup(strategies)
    cdef char uniform[MAX_PLAYERS]        # per strategy index
    for i, s in enumerate(strategies):
        uniform[i] = (<Strategy>s).plays_uniform
    cdef BatchJob job
    job.perms = &perms[0, 0]
    job.n_perms = perms.shape[0]
    job.seating = seating
    job.run_seed = run_seed
    job.i0 = i0
    job.i1 = i1
    job.uniform = uniform
    job.game_index = &game_index[0]
    job.seeds = &seeds[0]
    job.turns = &turns[0]
    job.end_reason = &end_reason[0]
    job.seat_strategy = &seat_strategy[0]
    job.score = &score[0]
    job.rank = &rank[0]
    job.win = &win[0]
    job.first = &first[0]
    job.position = &position[0]
    job.features = &wide[0, 0] if nf > 0 and not state.narrow_features else NULL
    job.features8 = &narrow[0, 0] if nf > 0 and state.narrow_features else NULL
    job.features_stride = features.shape[1]
    job.interim = &interim[0, 0] if ni > 0 else NULL
    job.interim_stride = interim.shape[1]
    job.overflow_row = -1
    job.n_reasons = len(type(state).END_REASONS)
    job.tally = NULL
    if tally is not None:
        if tally.shape[0] != tally_size(state):
            raise ValueError(f"tally has {tally.shape[0]} values; this game's needs {tally_size(state)}")
        job.tally = &tally[0]
    with nogil:
        # A game that compiles the loop for its own class plays faster (see loop.pxi).
        if generic or not state.play_batch(lineup, &job):
            play_games(state, lineup, &job)
    if job.overflow_row >= 0:
        names = [*state.feature_names(), *(f"interim_{x}" for x in state.interim_names())]
        kind = "int8 that results store this game's features in (-128 to 127)" \
            if job.overflow_column < nf and state.narrow_features else \
            "int16 that results store features and interim scores in (-32768 to 32767)"
        raise CounterOverflow(f"{type(state).__name__}: {names[job.overflow_column]} = {job.overflow_value} "
                              f"in game {i0 + job.overflow_row // n} does not fit the {kind}: these "
                              "params take the game beyond it")
