# cython: language_level=3
"""`heuristic` for Fabryka Czekolady: values cards by how they change the score margin.

The value of cards to a player is the change of (his score - the other's score) if he
collected them, majorities and sets included, plus a per-kind bonus weight. It collects
when the belt is worth enough now (and more so if collecting also denies the opponent
cards he wants), demanding more the more turns it could still wait; otherwise it plays
the card that helps its own next collect and feeds the opponent's least.
It reads only its FabObs: its hand, the belt and both collections."""
from simcore.rng cimport Rng, rng_below
from simcore.state cimport GameState
from simcore.strategy cimport Strategy
from simcore.games.fabryka.rules cimport (
    FabrykaState, FabObs, FabConfig, N_KINDS, N_FILLINGS, WHITE, COLLECT)

from simcore.games.fabryka.params import KINDS

cdef enum:
    W_THRESHOLD = 0
    W_WAIT = 1
    W_DENY = 2
    W_VALUE = 3   # W_VALUE + kind: bonus per card of that kind

# A collect that reaches white_to_win white chocolates wins outright.
cdef double WIN = 1000.0


cdef inline int gain(const FabConfig* c, const int* a, const int* b, const int* take) noexcept nogil:
    # Change of a's score minus b's if a collects `take` (counts per kind): majorities
    # won or taken away, sets completed, points per card.
    cdef int k, after, d = 0, low_before = a[0], low_after = a[0] + take[0]
    for k in range(N_FILLINGS):
        after = a[k] + take[k]
        d += c.majority[k] * (((after > b[k]) - (a[k] > b[k])) - ((b[k] > after) - (b[k] > a[k])))
        low_before = min(low_before, a[k])
        low_after = min(low_after, after)
    d += c.set_points * (low_after - low_before)
    for k in range(N_FILLINGS, N_KINDS):
        d += take[k] * c.card_points[k]
    return d


cdef struct SetInfo:
    int low        # the fewest cards of one filling: the number of full sets
    bint single    # only one filling is that low, so one more of it completes a set


cdef inline SetInfo set_info(const int* a) noexcept nogil:
    cdef SetInfo info
    cdef int f, at_low = 0
    info.low = a[0]
    for f in range(1, N_FILLINGS):
        if a[f] < info.low:
            info.low = a[f]
    for f in range(N_FILLINGS):
        at_low += a[f] == info.low
    info.single = at_low == 1
    return info


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
        cdef int k, n = c.collect_count
        cdef double mine_gain, their_gain, bonus = 0.0
        if n > o.belt_len:
            n = o.belt_len
        for k in range(N_KINDS):
            take[k] = 0
        for k in range(o.belt_len - n, o.belt_len):
            take[o.belt[k]] += 1
        for k in range(N_KINDS):
            bonus += take[k] * self.w[W_VALUE + k]
        mine_gain = gain(c, o.mine, o.theirs, take) + bonus
        if o.mine[WHITE] + take[WHITE] >= c.white_to_win:
            mine_gain += WIN
        if o.they_collected:
            return mine_gain
        their_gain = gain(c, o.theirs, o.mine, take) + bonus
        if o.theirs[WHITE] + take[WHITE] >= c.white_to_win:
            their_gain += WIN
        return mine_gain + self.w[W_DENY] * their_gain

    cdef void card_values(self, const FabConfig* c, const int* a, const int* b, double* out) noexcept nogil:
        # out[k]: change of a's margin over b if a collects one more card of kind k.
        # Arithmetic rather than branches on the kind: a hand's kinds are random.
        cdef SetInfo sets = set_info(a)
        cdef int k
        for k in range(N_FILLINGS):
            out[k] = (self.w[W_VALUE + k]
                      + c.majority[k] * ((a[k] == b[k]) | (a[k] + 1 == b[k]))  # wins a tie, or takes it
                      + c.set_points * ((a[k] == sets.low) & sets.single))     # completes a set
        for k in range(N_FILLINGS, N_KINDS):
            out[k] = self.w[W_VALUE + k] + c.card_points[k]
        out[WHITE] += WIN * (a[WHITE] + 1 >= c.white_to_win)

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        # The cast in argument position borrows the reference (no GIL needed).
        return self.decide(<FabrykaState>state, seat, legal, n, rng)

    cdef int decide(self, FabrykaState st, int seat, const int* legal, int n, Rng* rng) noexcept nogil:
        cdef const FabConfig* c = &st.cfg
        cdef FabObs o
        cdef double value[N_KINDS]
        cdef double mine_v[N_KINDS]
        cdef double their_v[N_KINDS]
        cdef int i = 0, k, ties = 0
        cdef double v, best
        cdef bint can_collect = legal[n - 1] == COLLECT
        if n == 1:
            return legal[0]
        st.observe(seat, &o)
        if can_collect:
            v = self.collect_value(c, &o)
            if v >= self.w[W_THRESHOLD] + self.w[W_WAIT] * (o.my_turns_left - 1):
                return COLLECT
        # Play: the card wanted in my own coming collect and least wanted by the
        # opponent's, whichever of us still collects this round; ties at random.
        for k in range(N_KINDS):
            value[k] = 0.0
        if not o.i_collected:
            self.card_values(c, o.mine, o.theirs, mine_v)
            for k in range(N_KINDS):
                value[k] += mine_v[k]
        if not o.they_collected:
            self.card_values(c, o.theirs, o.mine, their_v)
            for k in range(N_KINDS):
                value[k] -= (1.0 + self.w[W_DENY]) * their_v[k]
        best = value[o.hand[0]]
        for i in range(1, o.hand_len):
            if value[o.hand[i]] > best:
                best = value[o.hand[i]]
        for i in range(o.hand_len):
            ties += value[o.hand[i]] == best
        ties = rng_below(rng, ties) if ties > 1 else 0
        for i in range(o.hand_len):
            if value[o.hand[i]] == best:
                if ties == 0:
                    break
                ties -= 1
        return i


STRATEGIES = (FabrykaHeuristic,)
