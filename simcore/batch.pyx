# cython: language_level=3
"""The batch loop: plays games [i0, i1) of a run without the GIL and writes one row per
game x seat into preallocated arrays (struct of arrays)."""
cimport cython
from libc.stdint cimport uint64_t, int64_t, int8_t, int32_t

from simcore.rng cimport Rng, rng_seed, rng_below, game_seed, bot_seed, seating_seed
from simcore.state cimport GameState, CHECKED, MAX_PLAYERS, MAX_ACTIONS, MAX_FEATURES, MAX_INTERIM
from simcore.strategy cimport Strategy

import numpy as np

__all__ = ["play_batch", "result_arrays", "SEATING_MODES", "seed_of_game", "seed_of_bot", "seating_row"]

SEATING_MODES = ("rotate", "fixed", "random")


def seed_of_game(uint64_t run_seed, uint64_t index):
    """The seed of game `index` of a run."""
    return game_seed(run_seed, index)


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


@cython.final
cdef class Lineup:
    """Up to MAX_PLAYERS strategies addressable by index without the GIL."""
    cdef Strategy s0, s1, s2, s3, s4, s5

    def __init__(self, strategies):
        padded = list(strategies) + [None] * (MAX_PLAYERS - len(strategies))
        self.s0, self.s1, self.s2, self.s3, self.s4, self.s5 = padded[:MAX_PLAYERS]

    cdef inline int choose(self, int k, GameState st, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        if k == 0:
            return self.s0.choose(st, seat, legal, n, rng)
        if k == 1:
            return self.s1.choose(st, seat, legal, n, rng)
        if k == 2:
            return self.s2.choose(st, seat, legal, n, rng)
        if k == 3:
            return self.s3.choose(st, seat, legal, n, rng)
        if k == 4:
            return self.s4.choose(st, seat, legal, n, rng)
        return self.s5.choose(st, seat, legal, n, rng)


cdef int check_legal(int action, const int* legal, int n) except -1 nogil:
    cdef int i
    for i in range(n):
        if legal[i] == action:
            return 0
    with gil:
        raise AssertionError(f"strategy chose {action}, not in the legal list {[legal[j] for j in range(n)]}")


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
        "features": np.zeros((rows, state.n_features), np.int32),
        "interim": np.zeros((rows, state.n_interim), np.int32),
    }


def play_batch(GameState state, strategies, const int32_t[:, ::1] perms, int seating,
               uint64_t run_seed, int64_t i0, int64_t i1,
               int64_t[::1] game_index, uint64_t[::1] seeds, int32_t[::1] turns,
               int8_t[::1] end_reason, int8_t[::1] seat_strategy,
               int32_t[::1] score, int8_t[::1] rank, float[::1] win, int8_t[::1] first,
               int32_t[:, ::1] features, int32_t[:, ::1] interim):
    """Play games [i0, i1). Row (g - i0) * n_players + seat of the seat arrays, row g - i0
    of the game arrays. `perms` lists seat orders (row r: strategy index of each seat);
    seating 0 = rotate through the rows by game index, 1 = fixed (row 0), 2 = random row.
    Holds the GIL only if a strategy is written in Python."""
    cdef int n = state.n_players
    cdef int nf = state.n_features
    cdef int ni = state.n_interim
    cdef int64_t n_perms = perms.shape[0]
    if len(strategies) != n:
        raise ValueError(f"{n} seats but {len(strategies)} strategies")
    cdef int64_t games = i1 - i0
    for name, arr, rows in (("game_index", game_index, games), ("seeds", seeds, games),
                            ("turns", turns, games), ("end_reason", end_reason, games),
                            ("seat_strategy", seat_strategy, games * n), ("score", score, games * n),
                            ("rank", rank, games * n), ("win", win, games * n),
                            ("first", first, games * n), ("features", features, games * n),
                            ("interim", interim, games * n)):
        if arr.shape[0] < rows:
            raise ValueError(f"{name} has {arr.shape[0]} rows; the batch needs {rows}")
    if features.shape[1] < nf or interim.shape[1] < ni:
        raise ValueError(f"features/interim have {features.shape[1]}/{interim.shape[1]} columns; "
                         f"this game writes {nf}/{ni}")
    for s in strategies:
        (<Strategy?>s).prepare(state)
    cdef Lineup lineup = Lineup(strategies)
    cdef bint uniform[MAX_PLAYERS]        # per strategy index
    cdef bint seat_uniform[MAX_PLAYERS]   # per seat, this game
    for i, s in enumerate(strategies):
        uniform[i] = (<Strategy>s).uniform
    cdef int legal[MAX_ACTIONS]
    cdef int sc[MAX_PLAYERS]
    cdef int rk[MAX_PLAYERS]
    cdef int who[MAX_PLAYERS]           # strategy index of each seat this game
    cdef Rng bot_rng[MAX_PLAYERS]
    cdef Rng seat_rng
    cdef int64_t g, row, perm_row
    cdef uint64_t seed
    cdef int p, k, nl, a, n_winners, first_seat
    cdef int32_t n_turns

    with nogil:
        for g in range(i0, i1):
            seed = game_seed(run_seed, <uint64_t>g)
            if seating == 0:
                perm_row = g % n_perms
            elif seating == 1:
                perm_row = 0
            else:
                rng_seed(&seat_rng, seating_seed(seed))
                perm_row = rng_below(&seat_rng, <unsigned int>n_perms)
            for p in range(n):
                who[p] = perms[perm_row, p]
                seat_uniform[p] = uniform[who[p]]
                rng_seed(&bot_rng[p], bot_seed(seed, p))
            state.reset(seed)
            n_turns = 0
            p = state.current_player()
            while p >= 0:
                nl = state.legal_actions(legal)
                # The uniform bot's draw is made here, forced moves included (a draw over
                # one action is that action), which keeps the commonest path free of a
                # hard-to-predict branch. Other bots are not asked for a forced move.
                if seat_uniform[p]:
                    a = legal[rng_below(&bot_rng[p], nl)]
                elif nl == 1:
                    a = legal[0]
                else:
                    a = lineup.choose(who[p], state, p, legal, nl, &bot_rng[p])
                if CHECKED:
                    check_legal(a, legal, nl)
                p = state.apply(a)
                if CHECKED:
                    state.assert_valid()
                    if p != state.current_player():
                        with gil:
                            raise AssertionError("apply() returned another seat than current_player()")
                n_turns += 1

            row = g - i0
            state.outcome(sc, rk)
            n_winners = 0
            for p in range(n):
                if rk[p] == 1:
                    n_winners += 1
            first_seat = state.first_player()
            game_index[row] = g
            seeds[row] = seed
            turns[row] = n_turns
            end_reason[row] = <int8_t>state.end_reason()
            for p in range(n):
                row = (g - i0) * n + p
                seat_strategy[row] = <int8_t>who[p]
                score[row] = sc[p]
                rank[row] = <int8_t>rk[p]
                win[row] = (1.0 / n_winners) if rk[p] == 1 else 0.0
                first[row] = p == first_seat
                if nf > 0:
                    state.features(p, <int*>&features[row, 0])
                if ni > 0:
                    state.interim(p, <int*>&interim[row, 0])
