# The strategy (bot) contract; see DESIGN.md, "Strategy".
#
# A compiled bot overrides `choose`, which runs inside the nogil batch loop. It may read
# the state only through its game's observation accessors for `seat` (never another
# seat's hand or a deck order). It must return one of the n actions in `legal`.
# Named float weights (class attribute WEIGHTS, name -> default) are copied into `w` in
# declaration order, so a tuned bot needs no recompilation.
from simcore.rng cimport Rng
from simcore.state cimport GameState

cdef enum:
    MAX_WEIGHTS = 64


cdef class Strategy:
    cdef double w[MAX_WEIGHTS]     # weights, in the order of WEIGHTS
    cdef readonly dict weights     # the same weights by name (for manifests and display)
    cdef readonly str spec         # the spec string this bot was built from
    # True when choose() is exactly legal[rng_below(rng, n)]: the batch loop then makes
    # that draw itself, sparing a virtual call per decision for the yardstick bot (and
    # the usual rollout policy of search bots).
    cdef readonly bint uniform

    # Pick one of legal[0..n) for `seat`; `rng` is the bot's own stream.
    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil
    # Allocate what the bot needs (scratch states...) before a batch; Python level.
    cpdef prepare(self, GameState proto)


cdef class PythonStrategy(Strategy):
    pass


cdef class RngView:
    cdef Rng own         # the stream, when the view owns it (Python-level play)
    cdef Rng* rng        # the stream in use: &own, or a batch loop's bot stream
