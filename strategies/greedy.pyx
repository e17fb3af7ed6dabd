# cython: language_level=3
"""`greedy`: the action with the best immediate standing, for any game.

It never reads hidden information: it first determinizes a copy of the state for its
seat (resampling what it cannot see), then tries every legal action on a copy of that
and keeps the one that leaves its own standing highest (ties at random).

A game may spare it most of those copies: its rules module exports STANDINGS_AFTER, a
capsule (named "chocosim.standings_after") of a C function

    int f(GameState state, int seat, const int* legal, int n, int* out) noexcept nogil

that writes to out[i] the standing of `seat` after legal[i] would be played in `state`
(the determinized copy), or UNKNOWN (INT_MIN) where only playing it tells; it returns 0.
Those are played on a copy as before. The values must be exactly what copy-apply-standing
gives, so the choices stay the same (tests/test_heuristic_speedpath.py checks both)."""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.limits cimport INT_MIN
import sys

from simcore.rng cimport Rng, rng_below
from simcore.state cimport GameState, MAX_ACTIONS
from simcore.strategy cimport Strategy

ctypedef int (*StandingsAfter)(GameState state, int seat, const int* legal, int n, int* out) noexcept nogil

UNKNOWN = INT_MIN
cdef const char* CAPSULE = b"chocosim.standings_after"


cdef StandingsAfter hook_of(GameState proto) except? NULL:
    # The game's STANDINGS_AFTER, or NULL if its rules module has none.
    cap = getattr(sys.modules[type(proto).__module__], "STANDINGS_AFTER", None)
    if cap is None:
        return NULL
    if not PyCapsule_IsValid(cap, CAPSULE):
        raise TypeError(f"{type(proto).__module__}.STANDINGS_AFTER is not a chocosim.standings_after capsule")
    return <StandingsAfter>PyCapsule_GetPointer(cap, CAPSULE)


def standings_after(GameState state, int seat):
    """The game's STANDINGS_AFTER for `state`'s legal actions as a list (None where it
    leaves the action to be played), or None if the game has none."""
    cdef int legal[MAX_ACTIONS]
    cdef int out[MAX_ACTIONS]
    cdef StandingsAfter f = hook_of(state)
    cdef int i, n = state.legal_actions(legal)
    if f == NULL:
        return None
    f(state, seat, legal, n, out)
    return [None if out[i] == INT_MIN else out[i] for i in range(n)]


cdef class GreedyStrategy(Strategy):
    NAME = "greedy"
    GAMES = ("*",)
    DESCRIPTION = "best immediate gain in its own standing (one-move look-ahead, ties at random)"

    cdef GameState seen     # the state as this seat may know it
    cdef GameState trial    # `seen` after one candidate action
    cdef StandingsAfter after   # the game's STANDINGS_AFTER, or NULL

    cpdef prepare(self, GameState proto):
        if self.seen is None or type(self.seen) is not type(proto) or self.seen.params is not proto.params:
            self.seen = proto.clone()
            self.trial = proto.clone()
            self.after = hook_of(proto)

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        cdef int i, value, best = 0, pick = legal[0], ties = 0
        cdef int known[MAX_ACTIONS]
        if n == 1:
            return legal[0]
        if self.seen is None:
            with gil:
                raise RuntimeError("GreedyStrategy.prepare(state) was not called before choose")
        state.copy_into(self.seen)
        self.seen.determinize(seat, rng)
        if self.after != NULL:
            self.after(self.seen, seat, legal, n, known)
        for i in range(n):
            if self.after != NULL and known[i] != INT_MIN:
                value = known[i]
            else:
                self.seen.copy_into(self.trial)
                self.trial.apply(legal[i])
                value = self.trial.standing(seat)
            if ties == 0 or value > best:
                best = value
                pick = legal[i]
                ties = 1
            elif value == best:
                # Reservoir sampling: each of the tied actions is kept with equal chance.
                ties += 1
                if rng_below(rng, ties) == 0:
                    pick = legal[i]
        return pick


STRATEGIES = (GreedyStrategy,)
