# cython: language_level=3
"""`greedy`: the action with the best immediate standing, for any game.

It never reads hidden information: it first determinizes a copy of the state for its
seat (resampling what it cannot see), then tries every legal action on a copy of that
and keeps the one that leaves its own standing highest (ties at random)."""
from simcore.rng cimport Rng, rng_below
from simcore.state cimport GameState
from simcore.strategy cimport Strategy


cdef class GreedyStrategy(Strategy):
    NAME = "greedy"
    GAMES = ("*",)
    DESCRIPTION = "best immediate gain in its own standing (one-move look-ahead, ties at random)"

    cdef GameState seen     # the state as this seat may know it
    cdef GameState trial    # `seen` after one candidate action

    cpdef prepare(self, GameState proto):
        if self.seen is None or type(self.seen) is not type(proto) or self.seen.params is not proto.params:
            self.seen = proto.clone()
            self.trial = proto.clone()

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        cdef int i, value, best = 0, pick = legal[0], ties = 0
        if n == 1:
            return legal[0]
        if self.seen is None:
            with gil:
                raise RuntimeError("GreedyStrategy.prepare(state) was not called before choose")
        state.copy_into(self.seen)
        self.seen.determinize(seat, rng)
        for i in range(n):
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
