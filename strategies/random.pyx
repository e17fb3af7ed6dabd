# cython: language_level=3
"""`random`: uniform over the legal actions of each decision."""
from simcore.rng cimport Rng, rng_below
from simcore.state cimport GameState
from simcore.strategy cimport Strategy


cdef class RandomStrategy(Strategy):
    NAME = "random"
    GAMES = ("*",)
    DESCRIPTION = "uniform over the legal actions of each decision"

    def __init__(self, **weights):
        super().__init__(**weights)
        self.uniform = True

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        return legal[rng_below(rng, n)]


STRATEGIES = (RandomStrategy,)
