# The batch loop, compiled once per game class: a game's rules.pyx declares
#
#     ctypedef fused Game:
#         ThisGameState            # a @cython.final class
#     include "simcore/loop.pxi"
#
# and overrides GameState.play_batch with `return play_games(self, <Lineup>lineup, job)`
# and GameState.play_out with `return play_out_uniform(self, rng, depth)` (playout.pxi).
# The calls to reset, legal_actions and apply are then direct and the C compiler inlines
# them into the loop; simcore/batch.pyx compiles the same loop for the GameState base
# (virtual calls), which plays any game that does not include it.
from libc.stdint cimport uint64_t, int64_t, int8_t, int16_t, int32_t

from simcore.batchjob cimport BatchJob
from simcore.rng cimport Rng, rng_seed, rng_next, rng_scale, rng_below, game_seed, bot_seed, seating_seed
from simcore.state cimport CHECKED, MAX_PLAYERS, MAX_ACTIONS, MAX_FEATURES, MAX_INTERIM
from simcore.strategy cimport Lineup, drop_component

include "simcore/playout.pxi"


cdef int check_legal(int action, const int* legal, int n) except -1 nogil:
    cdef int i
    for i in range(n):
        if legal[i] == action:
            return 0
    with gil:
        raise AssertionError(f"strategy chose {action}, not in the legal list {[legal[j] for j in range(n)]}")


# Where the loop gets each legal list: copied out through legal_actions, or read in place
# from the state (GameState.kept_legal). Two tag types, so that the choice, made once per
# batch, gives two compiled loops rather than a test per decision.
cdef struct CopiedList:
    char tag
cdef struct KeptList:
    char tag
ctypedef fused ListSource:
    CopiedList
    KeptList


cdef int play_games(Game state, Lineup lineup, BatchJob* job) except -1 nogil:
    """Play games [job.i0, job.i1) and write their rows; returns 1 (played)."""
    if state.kept_legal != NULL:
        return play_range(state, lineup, job, <KeptList*>NULL)
    return play_range(state, lineup, job, <CopiedList*>NULL)


cdef int play_range(Game state, Lineup lineup, BatchJob* job, ListSource* source) except -1 nogil:
    # A private copy of the job: the int8 result stores may alias anything reachable by
    # pointer, which would make the compiler reload every field after each of them.
    cdef BatchJob j = job[0]
    cdef int n = state.n_players
    cdef int nf = state.n_features
    cdef int ni = state.n_interim
    cdef int buf[MAX_ACTIONS]
    cdef int values[MAX_FEATURES + MAX_INTERIM]  # one seat's features, then its interim scores
    cdef const int* legal = buf
    cdef const int* kept = state.kept_legal
    cdef const int* kept_n = state.kept_n_legal
    cdef int sc[MAX_PLAYERS]
    cdef int rk[MAX_PLAYERS]
    cdef int who[MAX_PLAYERS]             # strategy index of each seat this game
    cdef bint seat_uniform[MAX_PLAYERS]   # per seat, this game
    cdef int seat_forbid[MAX_PLAYERS]     # per seat, this game: component it never takes, or -1
    cdef int forbid_of[MAX_PLAYERS]       # per strategy index: component it never takes, or -1
    cdef int allowed[MAX_ACTIONS]         # a restricted seat's legal list, filtered
    cdef Rng bot_rng[MAX_PLAYERS]
    cdef uint64_t draw[MAX_PLAYERS]       # a uniform seat's next raw draw, made ahead
    cdef Rng seat_rng
    cdef int64_t g, row, perm_row
    cdef uint64_t seed
    cdef int p, nl, na, a, n_winners, first_seat, f
    cdef unsigned int wide8, wide16
    cdef bint all_uniform, clipped
    cdef float share
    cdef double* cell
    cdef int32_t n_turns
    for p in range(n):
        forbid_of[p] = lineup.forbidden(p)
    for g in range(j.i0, j.i1):
        seed = game_seed(j.run_seed, <uint64_t>g)
        if j.seating == 0:
            perm_row = g % j.n_perms
        elif j.seating == 1:
            perm_row = 0
        else:
            rng_seed(&seat_rng, seating_seed(seed))
            perm_row = rng_below(&seat_rng, <unsigned int>j.n_perms)
        all_uniform = True
        for p in range(n):
            who[p] = j.perms[perm_row * n + p]
            seat_uniform[p] = j.uniform[who[p]]
            seat_forbid[p] = forbid_of[who[p]]
            all_uniform &= seat_uniform[p]
            rng_seed(&bot_rng[p], bot_seed(seed, p))
            if seat_uniform[p]:
                draw[p] = rng_next(&bot_rng[p])
        state.reset(seed)
        n_turns = 0
        p = state.current_player()
        while p >= 0:
            if ListSource is KeptList:
                legal = kept
                nl = kept_n[0]
            else:
                nl = state.legal_actions(buf)
            # The uniform bot's draw is made here, forced moves included (a draw over
            # one action is that action), which keeps the commonest path free of a
            # hard-to-predict branch. Other bots are not asked for a forced move. The
            # all-uniform test first lets the compiler give random-only games a loop
            # of their own, free of the per-seat tests.
            # Its raw draw is made one decision ahead (the same numbers, the same games):
            # the choice then waits only on the scaling by nl, not on the generator.
            if all_uniform or seat_uniform[p]:
                a = legal[rng_scale(draw[p], nl)]
                draw[p] = rng_next(&bot_rng[p])
            elif seat_forbid[p] >= 0:
                # Restricted play: the seat chooses among the actions that do not take
                # its forbidden component (never a uniform seat, so the path above is
                # the same whether or not a run restricts anybody).
                na = drop_component(state, seat_forbid[p], legal, nl, allowed)
                if na == 1:
                    a = allowed[0]
                else:
                    a = lineup.choose(who[p], state, p, allowed, na, &bot_rng[p])
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

        state.outcome(sc, rk)
        n_winners = 0
        for p in range(n):
            n_winners += rk[p] == 1
        share = 1.0 / n_winners if n_winners else 0.0
        first_seat = state.first_player()
        row = g - j.i0
        j.game_index[row] = g
        j.seeds[row] = seed
        j.turns[row] = n_turns
        j.end_reason[row] = <int8_t>state.end_reason()
        row *= n
        for p in range(n):
            j.seat_strategy[row] = <int8_t>who[p]
            j.score[row] = sc[p]
            j.rank[row] = <int8_t>rk[p]
            j.win[row] = share if rk[p] == 1 else 0.0
            j.first[row] = p == first_seat
            j.position[row] = <int8_t>state.turn_position(p)
            if CHECKED and not (0 <= j.position[row] < n and 0 <= j.end_reason[g - j.i0] < j.n_reasons):
                with gil:
                    raise AssertionError(f"turn position {j.position[row]} or end reason "
                                         f"{j.end_reason[g - j.i0]} out of range (the tally's cells)")
            if j.tally != NULL:
                cell = &j.tally[4 * (((p * n + j.position[row]) * n + who[p]) * j.n_reasons
                                     + j.end_reason[g - j.i0])]
                cell[0] += 1
                cell[1] += j.win[row]
                cell[2] += sc[p]
                if 0 < j.win[row] < 1:
                    cell[3] += j.win[row]
            if nf > 0:
                state.features(p, values)
            if ni > 0:
                state.interim(p, &values[nf])
            # Stored narrowed; a value its column cannot hold is looked for only when one
            # of the seat's values is out of its column's range. Offset to start at 0, a
            # value fits when no bit above its type's is set, so one OR over the values
            # tells: branch-free, an add and an or a value. (A running minimum and maximum
            # did the same in two operations, but gcc made SSE min/max of them that read
            # each value back from the stack and stalled on it: a third of the random
            # Fabryka loop's time.)
            wide8 = wide16 = 0
            if j.features8 != NULL:
                for f in range(nf):
                    j.features8[f * j.features_stride + row] = <int8_t>values[f]
                    wide8 |= <unsigned int>values[f] + 128u
            else:
                for f in range(nf):
                    j.features[f * j.features_stride + row] = <int16_t>values[f]
                    wide16 |= <unsigned int>values[f] + 32768u
            for f in range(ni):
                j.interim[f * j.interim_stride + row] = <int16_t>values[nf + f]
                wide16 |= <unsigned int>values[nf + f] + 32768u
            clipped = (wide8 > 255u) | (wide16 > 65535u)
            if clipped and j.overflow_row < 0:
                for f in range(nf + ni):
                    if values[f] != (<int8_t>values[f] if f < nf and j.features8 != NULL
                                     else <int16_t>values[f]):
                        j.overflow_row, j.overflow_column, j.overflow_value = row, f, values[f]
                        break
            row += 1
    job.overflow_row, job.overflow_column, job.overflow_value = j.overflow_row, j.overflow_column, j.overflow_value
    return 1
