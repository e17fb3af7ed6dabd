# cython: language_level=3
"""`heuristic` for Fabryka Czekolady: values cards by how they change the score margin.

The value of cards to a player is the change of (his score - the other's score) if he
collected them, majorities and sets included, plus a per-kind bonus weight. It collects
when the belt is worth enough now (and more so if collecting also denies the opponent
cards he wants), demanding more the more turns it could still wait; otherwise it plays
the card that helps its own next collect and feeds the opponent's least.
It reads only its FabObs: its hand, the belt and both collections."""
cimport cython
from libc.stdint cimport uint64_t
from libc.string cimport memcpy

from simcore.rng cimport Rng, rng_below
from simcore.state cimport GameState
from simcore.strategy cimport Strategy
from simcore.games.fabryka.rules cimport (
    FabrykaState, FabObs, FabConfig, N_KINDS, N_FILLINGS, N_SEATS, WHITE, COLLECT)

from simcore.games.fabryka.params import KINDS

cdef enum:
    W_THRESHOLD = 0
    W_WAIT = 1
    W_DENY = 2
    W_VALUE = 3   # W_VALUE + kind: bonus per card of that kind

# Per kind, what one card adds to the packed counts of collect_value: byte k for
# filling k, byte N_FILLINGS for white; the other kinds are valued per card. A byte
# holds any count a belt can reach (MAX_CARDS < 256).
cdef uint64_t[N_KINDS] TAKE_ONE = [1, 1 << 8, 1 << 16, 1 << 24, 0, 0, 0, 0, 0, 0, 1 << 32]

# A collect that reaches white_to_win white chocolates wins outright.
cdef double WIN = 1000.0


cdef inline int filling_gain(const FabConfig* c, const int* a, const int* b, const int* take) noexcept nogil:
    # Change of a's score minus b's from the fillings if a collects `take` (counts per
    # kind): majorities won or taken away, sets completed. The points per card are
    # constant per kind (FabrykaHeuristic.kind_value).
    cdef int k, after, d = 0, low_before = a[0], low_after = a[0] + take[0]
    for k in range(N_FILLINGS):
        after = a[k] + take[k]
        d += c.majority[k] * (((after > b[k]) - (a[k] > b[k])) - ((b[k] > after) - (b[k] > a[k])))
        low_before = min(low_before, a[k])
        low_after = min(low_after, after)
    return d + c.set_points * (low_after - low_before)


cdef inline uint64_t pack_collections(const int* a) noexcept nogil:
    # The counts the play values depend on (the fillings and white), a byte each.
    return (<uint64_t>a[0] | (<uint64_t>a[1] << 8) | (<uint64_t>a[2] << 16) | (<uint64_t>a[3] << 24)
            | (<uint64_t>a[WHITE] << 32))


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


@cython.final
cdef class FabrykaHeuristic(Strategy):
    cdef double kind_value[N_KINDS]
    # [I still collect][they still collect][kind]: the value of playing a card of a kind
    # whose worth does not depend on the collections; 0 for the fillings and white,
    # which play_values adds up each time.
    cdef double play_value[2][2][N_KINDS]
    # Per seat, the last play values worked out, and the collections and open collects
    # they were worked out for (pack_collections): a seat's play values change only when
    # someone collects, so most of its decisions in a rollout, and in the rollouts of
    # one search, look up the values of its decision before.
    cdef uint64_t cached_mine[N_SEATS]
    cdef uint64_t cached_theirs[N_SEATS]
    cdef double cached_value[N_SEATS][N_KINDS]

    NAME = "heuristic"
    GAMES = ("fabryka",)
    DESCRIPTION = "collects when the belt is worth enough to it (and to deny the opponent), else plays what helps its own next collect"
    WEIGHTS = {
        "collect_threshold": 4.0,   # margin gain a collect needs with no turn left to wait
        "wait": 1.5,                # extra gain demanded per further turn it could still wait
        "deny": 0.5,                # weight of what the opponent would gain from the same cards
        **{f"value_{k}": (3.0 if k == "white" else 0.0) for k in KINDS},  # bonus per card
    }
    # Where `chocosim tune` searches each weight: (low, high, scale).
    WEIGHT_RANGES = {
        "collect_threshold": (0.0, 16.0, "linear"),
        "wait": (0.0, 5.0, "linear"),
        "deny": (0.0, 2.0, "linear"),
        **{f"value_{k}": ((0.0, 10.0, "linear") if k == "white" else (-4.0, 4.0, "linear")) for k in KINDS},
    }

    cpdef prepare(self, GameState proto):
        # What a card of each kind is worth whoever takes it: its bonus weight plus its
        # points (0 for the fillings, whose worth depends on the collections).
        cdef FabrykaState st = <FabrykaState?>proto
        cdef int k, mine_open, theirs_open
        cdef double v
        for k in range(N_KINDS):
            self.kind_value[k] = self.w[W_VALUE + k] + st.cfg.card_points[k]
        for mine_open in range(2):
            for theirs_open in range(2):
                for k in range(N_KINDS):
                    v = 0.0
                    if k >= N_FILLINGS and k != WHITE:
                        if mine_open:
                            v += self.kind_value[k]
                        if theirs_open:
                            v -= (1.0 + self.w[W_DENY]) * self.kind_value[k]
                    self.play_value[mine_open][theirs_open][k] = v
        # No collection packs to all ones: the cache starts empty.
        for k in range(N_SEATS):
            self.cached_mine[k] = self.cached_theirs[k] = <uint64_t>-1

    cdef inline double collect_value(self, const FabConfig* c, FabObs* o) noexcept nogil:
        # Value to this seat of taking the top of the belt now, denial included. The
        # counts that matter (fillings, white) are added up in one register, a byte
        # each (TAKE_ONE): counting into an array in memory would stall the vector
        # loads of filling_gain that follow.
        cdef int take[N_FILLINGS]
        cdef int k, white, n = c.collect_count
        cdef uint64_t counts = 0
        cdef double mine_gain, their_gain, cards = 0.0
        if n > o.belt_len:
            n = o.belt_len
        for k in range(o.belt_len - n, o.belt_len):
            counts += TAKE_ONE[o.belt[k]]
            cards += self.kind_value[o.belt[k]]
        for k in range(N_FILLINGS):
            take[k] = (counts >> (8 * k)) & 0xFF
        white = (counts >> (8 * N_FILLINGS)) & 0xFF
        mine_gain = filling_gain(c, o.mine, o.theirs, take) + cards
        if o.mine[WHITE] + white >= c.white_to_win:
            mine_gain += WIN
        if o.they_collected:
            return mine_gain
        their_gain = filling_gain(c, o.theirs, o.mine, take) + cards
        if o.theirs[WHITE] + white >= c.white_to_win:
            their_gain += WIN
        return mine_gain + self.w[W_DENY] * their_gain

    cdef inline void changing_values(self, const FabConfig* c, const int* a, const int* b, double* out) noexcept nogil:
        # out[k] for the fillings k, out[N_FILLINGS] for white: the change of a's margin
        # over b if a collects one more card of that kind; the other kinds are worth
        # kind_value whatever the collections. Arithmetic rather than branches: who
        # leads a filling is a coin flip to the predictor.
        cdef SetInfo sets = set_info(a)
        cdef int k
        for k in range(N_FILLINGS):
            out[k] = (self.w[W_VALUE + k]
                      + c.majority[k] * ((a[k] == b[k]) | (a[k] + 1 == b[k]))  # wins a tie, or takes it
                      + c.set_points * ((a[k] == sets.low) & sets.single))     # completes a set
        out[N_FILLINGS] = self.kind_value[WHITE] + WIN * (a[WHITE] + 1 >= c.white_to_win)

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        # The cast in argument position borrows the reference (no GIL needed).
        return self.decide(<FabrykaState>state, seat, legal, n, rng)

    cdef inline void play_values(self, const FabConfig* c, FabObs* o, bint mine_open, bint theirs_open,
                                 double* value) noexcept nogil:
        # value[k]: what playing a card of kind k is worth to this seat: what it adds to
        # its own coming collect less what it would add to the opponent's.
        cdef double mine_v[N_FILLINGS + 1]
        cdef double their_v[N_FILLINGS + 1]
        cdef double deny = 1.0 + self.w[W_DENY]
        cdef int k
        memcpy(value, self.play_value[mine_open][theirs_open], N_KINDS * sizeof(double))
        if mine_open:
            self.changing_values(c, o.mine, o.theirs, mine_v)
            for k in range(N_FILLINGS):
                value[k] += mine_v[k]
            value[WHITE] += mine_v[N_FILLINGS]
        if theirs_open:
            self.changing_values(c, o.theirs, o.mine, their_v)
            for k in range(N_FILLINGS):
                value[k] -= deny * their_v[k]
            value[WHITE] -= deny * their_v[N_FILLINGS]

    cdef inline const double* cached_play_values(self, const FabConfig* c, FabObs* o) noexcept nogil:
        # play_values of this decision, worked out again only when the collections or who
        # still collects differ from the last call's.
        cdef uint64_t mine = pack_collections(o.mine) | (<uint64_t>(not o.i_collected) << 40)
        cdef uint64_t theirs = pack_collections(o.theirs) | (<uint64_t>(not o.they_collected) << 40)
        if mine != self.cached_mine[o.seat] or theirs != self.cached_theirs[o.seat]:
            self.play_values(c, o, not o.i_collected, not o.they_collected, self.cached_value[o.seat])
            self.cached_mine[o.seat] = mine
            self.cached_theirs[o.seat] = theirs
        return self.cached_value[o.seat]

    cdef inline int decide(self, FabrykaState st, int seat, const int* legal, int n, Rng* rng) noexcept nogil:
        cdef const FabConfig* c = &st.cfg
        cdef FabObs o
        cdef const double* value
        cdef int i = 0, first = 0, ties = 1
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
        value = self.cached_play_values(c, &o)
        # The best value, the first card with it and how many share it, in one pass.
        best = value[o.hand[0]]
        for i in range(1, o.hand_len):
            v = value[o.hand[i]]
            if v > best:
                best = v
                first = i
                ties = 1
            else:
                ties += v == best
        if ties == 1:
            return first
        ties = rng_below(rng, ties)
        for i in range(first, o.hand_len):
            if value[o.hand[i]] == best:
                if ties == 0:
                    break
                ties -= 1
        return i


STRATEGIES = (FabrykaHeuristic,)
