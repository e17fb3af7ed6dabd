# The strategy (bot) contract; see DESIGN.md, "Strategy".
#
# A compiled bot overrides `choose`, which runs inside the nogil batch loop. It may read
# the state only through its game's observation accessors for `seat` (never another
# seat's hand or a deck order). It must return one of the n actions in `legal`.
# Named float weights (class attribute WEIGHTS, name -> default) are copied into `w` in
# declaration order, so a tuned bot needs no recompilation.
cimport cython
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
    # Restricted play: the component this bot never takes (an index into the game's
    # COMPONENTS, resolved from `forbid_name` by bind()), -1 for none. The batch loop and
    # play drop the actions that take it from the bot's legal list, unless nothing is left.
    cdef readonly int forbid
    cdef readonly str forbid_name  # the spec's forbid=NAME, None for none

    # Pick one of legal[0..n) for `seat`; `rng` is the bot's own stream.
    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil
    # The bot's estimate of `seat`'s position in `state`, in its own units (higher is
    # better): search bots rank the seats by it where they cut a rollout short. NaN
    # (the base): the bot has none, and the game's standings rank them.
    cdef double evaluate(self, GameState state, int seat) noexcept nogil
    # Allocate what the bot needs (scratch states...) before a batch; Python level.
    cpdef prepare(self, GameState proto)


# Restricted play: write to out the actions of legal[0..n) that do not take `component`
# in `state`'s current decision and return how many; if every action takes it, all of
# them (a forced move stays playable).
cdef int drop_component(GameState state, int component, const int* legal, int n, int* out) noexcept nogil


cdef class PythonStrategy(Strategy):
    pass


cdef class RngView:
    cdef Rng own         # the stream, when the view owns it (Python-level play)
    cdef Rng* rng        # the stream in use: &own, or a batch loop's bot stream


@cython.final
cdef class Lineup:
    # Up to MAX_PLAYERS strategies addressable by index without the GIL (the batch loop's
    # view of the bots of a run, by strategy index).
    cdef Strategy s0, s1, s2, s3, s4, s5

    cdef inline int forbidden(self, int k) noexcept nogil:
        # The component strategy k never takes, or -1.
        if k == 0:
            return self.s0.forbid
        if k == 1:
            return self.s1.forbid
        if k == 2:
            return self.s2.forbid
        if k == 3:
            return self.s3.forbid
        if k == 4:
            return self.s4.forbid
        return self.s5.forbid

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
