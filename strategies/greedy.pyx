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
gives, so the choices stay the same (tests/strategies/test_heuristic_speedpath.py checks both); the
function may change the state while it works but leaves it as it found it.

A game may spare it the determinized copy too: its rules module then also exports
DETERMINIZE_DRAWS, a capsule (named "chocosim.determinize_draws") of

    int f(GameState state, int seat) noexcept nogil

giving how many draws state.determinize(seat, rng) takes from rng, or -1 where only
dealing tells. Exporting it says STANDINGS_AFTER reads only what `seat` sees: its values
are the same in the state and in every determinization of it for `seat`. Greedy then
takes those draws from its stream without dealing (the stream goes on as after
determinize, so ties fall as before) and asks STANDINGS_AFTER about the state itself;
should it leave an action to be played, greedy puts its stream back and determinizes a
copy as above."""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.limits cimport INT_MIN
import sys

from simcore.rng cimport Rng, rng_below, rng_next, rng_seed
from simcore.state cimport GameState, MAX_ACTIONS
from simcore.strategy cimport Strategy

ctypedef int (*StandingsAfter)(GameState state, int seat, const int* legal, int n, int* out) noexcept nogil
ctypedef int (*DeterminizeDraws)(GameState state, int seat) noexcept nogil

UNKNOWN = INT_MIN


cdef void* hook_of(GameState proto, str attr, str capsule) except? NULL:
    # The game's capsule `attr` (named `capsule`), or NULL if its rules module has none.
    module = type(proto).__module__
    cap = getattr(sys.modules[module], attr, None)
    if cap is None:
        return NULL
    if not PyCapsule_IsValid(cap, capsule.encode()):
        raise TypeError(f"{module}.{attr} is not a {capsule} capsule")
    return PyCapsule_GetPointer(cap, capsule.encode())


def standings_after(GameState state, int seat):
    """The game's STANDINGS_AFTER for `state`'s legal actions as a list (None where it
    leaves the action to be played), or None if the game has none."""
    cdef int legal[MAX_ACTIONS]
    cdef int out[MAX_ACTIONS]
    cdef StandingsAfter f = <StandingsAfter>hook_of(state, "STANDINGS_AFTER", "chocosim.standings_after")
    cdef int i, n = state.legal_actions(legal)
    if f == NULL:
        return None
    f(state, seat, legal, n, out)
    return [None if out[i] == INT_MIN else out[i] for i in range(n)]


def determinize_draws(GameState state, int seat):
    """(what the game's DETERMINIZE_DRAWS says state.determinize(seat, rng) takes from rng,
    None where it cannot tell or the game has none; how many draws it takes, counted on
    a copy)."""
    cdef DeterminizeDraws f = <DeterminizeDraws>hook_of(state, "DETERMINIZE_DRAWS", "chocosim.determinize_draws")
    cdef int claimed = f(state, seat) if f != NULL else -1
    cdef Rng dealt, counted
    cdef GameState copy = state.copy()
    cdef int taken = 0
    rng_seed(&dealt, 0)
    counted = dealt
    copy.determinize(seat, &dealt)
    while counted.s != dealt.s:
        rng_next(&counted)
        taken += 1
        if taken > 1_000_000:
            raise AssertionError("determinize moved the stream to no state a count of draws reaches")
    return (None if claimed < 0 else claimed), taken


cdef class GreedyStrategy(Strategy):
    NAME = "greedy"
    GAMES = ("*",)
    DESCRIPTION = "best immediate gain in its own standing (one-move look-ahead, ties at random)"

    cdef GameState seen     # the state as this seat may know it
    cdef GameState trial    # `seen` after one candidate action
    cdef StandingsAfter after   # the game's STANDINGS_AFTER, or NULL
    cdef DeterminizeDraws draws  # its DETERMINIZE_DRAWS (NULL without STANDINGS_AFTER)

    cpdef prepare(self, GameState proto):
        if self.seen is None or type(self.seen) is not type(proto) or self.seen.params is not proto.params:
            self.seen = proto.copy()
            self.trial = proto.copy()
            self.after = <StandingsAfter>hook_of(proto, "STANDINGS_AFTER", "chocosim.standings_after")
            self.draws = NULL
            if self.after != NULL:
                self.draws = <DeterminizeDraws>hook_of(proto, "DETERMINIZE_DRAWS", "chocosim.determinize_draws")

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        cdef int i, k, value, best = 0, pick = legal[0], ties = 0
        cdef int known[MAX_ACTIONS]
        cdef bint answered = False
        cdef Rng before
        if n == 1:
            return legal[0]
        if self.seen is None:
            with gil:
                raise RuntimeError("GreedyStrategy.prepare(state) was not called before choose")
        if self.draws != NULL:
            k = self.draws(state, seat)
            if k >= 0:
                before = rng[0]
                for i in range(k):
                    rng_next(rng)
                self.after(state, seat, legal, n, known)
                answered = True
                for i in range(n):
                    if known[i] == INT_MIN:
                        answered = False
                if not answered:
                    rng[0] = before
        if not answered:
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
