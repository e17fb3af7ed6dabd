# cython: language_level=3
"""`heuristic` for Fabryka Czekolady: values cards by how they change the score margin.

The value of cards to a player is the change of (his score - the other's score) if he
collected them, majorities and sets included, plus a per-kind bonus weight. It collects
when the belt is worth enough now (and more so if collecting also denies the opponent
cards he wants), demanding more the more turns it could still wait; otherwise it plays
the card that helps its own next collect and feeds the opponent's least.
It reads only its FabObs: its hand, the belt and both collections."""
from libc.string cimport memcpy
from simcore.rng cimport Rng, rng_below
from simcore.state cimport GameState
from simcore.strategy cimport Strategy
from simcore.games.fabryka.rules cimport (
    FabrykaState, FabObs, FabConfig, fab_score, N_KINDS, N_FILLINGS, WHITE, COLLECT)

from simcore.games.fabryka.params import KINDS

cdef enum:
    W_THRESHOLD = 0
    W_WAIT = 1
    W_DENY = 2
    W_VALUE = 3   # W_VALUE + kind: bonus per card of that kind

# A collect that reaches white_to_win white chocolates wins outright.
cdef double WIN = 1000.0


cdef inline int margin(const FabConfig* c, const int* a, const int* b) noexcept nogil:
    return fab_score(c, a, b) - fab_score(c, b, a)


cdef class FabrykaHeuristic(Strategy):
    NAME = "heuristic"
    GAMES = ("fabryka",)
    DESCRIPTION = "collects when the belt is worth enough to it (and to deny the opponent), else plays what helps its own next collect"
    WEIGHTS = {
        "collect_threshold": 4.0,   # margin gain a collect needs with no turn left to wait
        "wait": 1.5,                # extra gain demanded per further turn it could still wait
        "deny": 0.5,                # weight of what the opponent would gain from the same cards
        **{f"value_{k}": (3.0 if k == "white" else 0.0) for k in KINDS},  # bonus per card
    }

    cdef double collect_value(self, const FabConfig* c, FabObs* o) noexcept nogil:
        # Value to this seat of taking the top of the belt now, denial included.
        cdef int take[N_KINDS]
        cdef int mine[N_KINDS]
        cdef int theirs[N_KINDS]
        cdef int k, n = c.collect_count
        cdef double mine_gain, their_gain, bonus = 0.0
        if n > o.belt_len:
            n = o.belt_len
        for k in range(N_KINDS):
            take[k] = 0
        for k in range(o.belt_len - n, o.belt_len):
            take[o.belt[k]] += 1
        memcpy(mine, o.mine, sizeof(mine))
        memcpy(theirs, o.theirs, sizeof(theirs))
        for k in range(N_KINDS):
            mine[k] += take[k]
            theirs[k] += take[k]
            bonus += take[k] * self.w[W_VALUE + k]
        mine_gain = margin(c, mine, o.theirs) - margin(c, o.mine, o.theirs) + bonus
        if mine[WHITE] >= c.white_to_win:
            mine_gain += WIN
        if o.they_collected:
            return mine_gain
        their_gain = margin(c, theirs, o.mine) - margin(c, o.theirs, o.mine) + bonus
        if theirs[WHITE] >= c.white_to_win:
            their_gain += WIN
        return mine_gain + self.w[W_DENY] * their_gain

    cdef double card_value(self, const FabConfig* c, const int* a, const int* b, int k) noexcept nogil:
        # Change of a's margin over b if a collects one more card of kind k.
        cdef int f, low, at_low = 0
        cdef double v = self.w[W_VALUE + k]
        if k >= N_FILLINGS:
            v += c.card_points[k]
            if k == WHITE and a[WHITE] + 1 >= c.white_to_win:
                v += WIN
            return v
        if a[k] == b[k] or a[k] + 1 == b[k]:
            v += c.majority[k]   # wins a tied majority, or takes one from b
        low = a[0]
        for f in range(1, N_FILLINGS):
            if a[f] < low:
                low = a[f]
        for f in range(N_FILLINGS):
            at_low += a[f] == low
        if a[k] == low and at_low == 1:
            v += c.set_points
        return v

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        # The cast in argument position borrows the reference (no GIL needed).
        return self.decide(<FabrykaState>state, seat, legal, n, rng)

    cdef int decide(self, FabrykaState st, int seat, const int* legal, int n, Rng* rng) noexcept nogil:
        cdef const FabConfig* c = &st.cfg
        cdef FabObs o
        cdef int i, k, pick = legal[0], ties = 0
        cdef double v, best = 0.0
        cdef bint can_collect = legal[n - 1] == COLLECT
        if n == 1:
            return legal[0]
        st.observe(seat, &o)
        if can_collect:
            v = self.collect_value(c, &o)
            if v >= self.w[W_THRESHOLD] + self.w[W_WAIT] * (o.my_turns_left - 1):
                return COLLECT
        # Play: the card wanted in my own coming collect and least wanted by the
        # opponent's, whichever of us still collects this round.
        for i in range(o.hand_len):
            k = o.hand[i]
            v = 0.0
            if not o.i_collected:
                v += self.card_value(c, o.mine, o.theirs, k)
            if not o.they_collected:
                v -= (1.0 + self.w[W_DENY]) * self.card_value(c, o.theirs, o.mine, k)
            if ties == 0 or v > best:
                best = v
                pick = i
                ties = 1
            elif v == best:
                ties += 1
                if rng_below(rng, ties) == 0:
                    pick = i
        return pick


STRATEGIES = (FabrykaHeuristic,)
