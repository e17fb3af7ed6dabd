# cython: language_level=3
"""`heuristic` for Chocolate Factory (Alley Cat Games), and `heuristic_v1`, the first
one, kept unchanged to measure it against.

Draft: scores each card directly (a part by what its best option adds per operation, an
employee by a weight per kind, the pieces it lets the player sell to its store and, solo,
the open step objectives his store could pay) and places a part where it covers the
least; solo, an employee is also valued by the look-ahead below after hiring him. Every
other decision is a one-move look-ahead on a copy of the state (a move that opens a chain
of small decisions, a converter's option, inputs and outputs or a supply, is valued after
completing the chain greedily; at 2-4 players a step that only moves pieces or trades one
for coal in the seat's own run, ending a shift, and operating a part whose chain it can
complete without the engine are valued from what they change, without a copy, the terms
the run fixes worked out once: the same value to the last bit). Ties keep the first legal
move, so a move that gains nothing is not played. A C side store is supplied only once no
Corner Shop stage can be paid, as it pays by the day's stage money.

The value of a position is money at the end of this game, in one currency set where the
decision is taken and applied to every candidate, whatever phase a move leads to:
- money earned, and (2-4 players) the store awards, the £12 and the diversity as they
  stand; steps on the tracks;
- the pieces that reach the store room before the seat's orders of the day (the store
  room, the belt squares that the pushes left today bring in, the whole belt on
  Saturday) first pay the Corner Shop stages and, solo, the chocolate orders they can:
  `ready` of the stage's money (or of an objective), and no more once the seat's orders
  of the day are over; then the next stage of every order is credited by the share of its
  pieces at hand, those on the belt after today for less;
- the pieces left: today's store supply, if still to come, by the steps it could take;
  the rest by stage, in the store room only the `keep` best (the others become coal);
- a coal and a piece are worth their use (the weights) while the game goes on; on the
  last day their end value takes over as the last shift nears: £1 each at 2-4 players,
  nothing solo. So the bot does not trade Saturday's order pieces for coal, and keeps
  coal at the end that buys less than £1;
- the beans still to load today are counted, so ending a shift is no gain by itself and
  a part runs whenever it gains more than it costs;
- solo: every objective of the face-up cards that holds, all of them, and, at `ready`,
  those that would also hold once today's payable stages, chocolate orders and planned
  supply are made (judged by the engine on the scratch copy); step objectives not met
  by the share the tracks show; an order held of a size an open orders objective names.

Measured (release build, seats rotated, 95% intervals, seeds not used to set the
weights; the rules of main as merged on 23 Nov: the revised solo cards of the assumed
components, the Agent idle on Saturday, employees acting before the first push):
- against `heuristic_v1`, one `heuristic` and the rest `heuristic_v1`, 2,000 games a table
  size: win share 0.701 [0.681, 0.721] at 2 players (fair 0.5), 0.525 [0.503, 0.547] at 3
  (fair 0.333), 0.430 [0.408, 0.452] at 4 (fair 0.25), each p < 1e-58 (z-test against
  the fair share); it scores £16.4 [15.0, 17.8], £14.2 [13.1, 15.4] and £13.0
  [11.9, 14.1] more than the others' mean;
- solo: 5.95% of 2,000 weeks won [5.00%, 7.07%] (6.66% [6.19%, 7.17%] of 10,000) at the
  default difficulty, with £40 of Corner Shop money a week and 5.8 of 8.1 objectives
  met; 2.85% [2.21%, 3.68%] of 2,000 (2.96% [2.65%, 3.31%] of 10,000) with one more
  Initial Demand; `heuristic_v1`: 1 and 0 of 2,000 (£27).

It reads only public information: factories, store rooms, coal, orders, tracks, the
display and the face-up solo cards. Deck order matters only to moves that can end the
day; for those the copy is determinized for its seat first (at 2-4 players, only for a
move whose look-ahead draws a card: the others are tried on the position itself, and
the bot's stream moves on as the determinization would have moved it)."""
cimport cython
from libc.math cimport NAN
from libc.string cimport memcpy, memcmp, memset
from libc.stdint cimport uint64_t
from simcore.rng cimport Rng, rng_seed
from simcore.state cimport GameState, MAX_ACTIONS
from simcore.strategy cimport Strategy
from simcore.games.alleycat.rules cimport (
    AlleyCatState, Ac, AcConfig, AcMarks, AcSeat, AcPart, AcOrder, N_PIECES, N_STORES, COCOA, R_DIFFERENT,
    K_CONVERTER, K_UPGRADER, K_REPEATER, K_CHUTE, stage_of, PH_ORDERS, S_PACKET, S_PICK,
    S_PLACE, S_ASSIGN, S_MENU, S_ORDERS, S_SUPPLY, S_AGENT_STORE, S_TARGET, S_OPTION,
    S_INPUT, S_OUTPUT, S_UPGRADE, S_COPY, S_CHUTE, S_EMP_SQUARE, S_MOVE_PIECE, S_MOVE_TO,
    S_AGENT_PIECE, S_DEALER_OMIT, S_GOAL, S_AS_STORE, S_FREE_SLOT, R_MONEY, A_ORDER, A_SUPPLY, A_PACKET, A_PICK, A_SLOT, E_MECHANIC, MAX_SOLO_CARDS,
    MAX_GOALS, AcCard, AcGoal, AcSide, G_STEPS, G_ORDERS, BEAN, S_OPEN, SR_EXACT, SR_SAME, E_SUPERVISOR, PH_DRAFT, PH_RUN,
    R_EACH, R_SAME, R_SETS, R_PAIR, MAX_HELD_ORDERS, MAX_DONE, E_DIRECTOR,
    N_SIZES, MAX_PARTS, MAX_ORDER_IDS, MAX_STAGES, N_SEATS, A_DONE, A_PIECE, A_TRADE, A_SQUARE, A_UPGRADE,
    N_UPGRADES, upg_from, upg_to, upgradable, lowest_bit)

from simcore.games.alleycat.params import EMPLOYEES

cdef enum:
    W_STAGE = 0           # + stage 0..4: bean, cocoa, bar, wrapped, boxed
    W_ROOM = 5
    W_COAL = 6
    W_STEP = 7
    W_ORDER = 8
    W_SIZE = 9            # + size
    W_PART = 12
    W_COVER = 13
    W_SQUARE = 14
    W_ACCESS = 15
    W_CHUTE = 16
    W_ORDER_BELT = 17
    W_EMP = 18            # + employee kind
    W_OBJECTIVE = 37      # after the 19 employee kinds
    W_WIN = 38
    W_STORE_GOAL = 39
    MAX_CHAIN = 64        # small decisions completed after a look-ahead move


# Where a tuner may search each weight, and on which scale: (low, high, "linear" | "log").
RANGES = {
    **{k: (0.0, 6.0, "linear") for k in ("bean", "cocoa", "bar", "wrapped", "boxed")},
    "store_room": (0.0, 3.0, "linear"),
    "ready": (0.5, 1.0, "linear"),
    "coal": (0.0, 3.0, "linear"),
    "store_step": (0.0, 6.0, "linear"),
    "order_progress": (0.0, 3.0, "linear"),
    **{f"order_{z}": (-3.0, 3.0, "linear") for z in ("small", "medium", "large")},
    "part": (0.0, 3.0, "linear"),
    "cover": (0.0, 3.0, "linear"),
    "square": (0.0, 2.0, "linear"),
    "store_access": (0.0, 2.0, "linear"),
    "chute": (0.0, 8.0, "linear"),
    "order_belt": (0.0, 1.0, "linear"),
    **{f"employee_{e}": (0.0, 6.0, "linear") for e in EMPLOYEES},
    "objective": (1.0, 40.0, "log"),
    "win": (1.0, 100.0, "log"),
    "store_goal": (0.0, 20.0, "linear"),
    "complete": (0.0, 15.0, "linear"),
    "store_plan": (0.0, 2.0, "linear"),
    "order_goal": (0.0, 1.0, "linear"),
}


cdef inline bint in_chain(int sub) noexcept nogil:
    # Decisions that only finish a move already chosen.
    return (sub == S_TARGET or sub == S_OPTION or sub == S_INPUT or sub == S_OUTPUT
            or sub == S_UPGRADE or sub == S_COPY or sub == S_CHUTE or sub == S_EMP_SQUARE
            or sub == S_MOVE_PIECE or sub == S_MOVE_TO or sub == S_SUPPLY
            or sub == S_AGENT_PIECE or sub == S_DEALER_OMIT or sub == S_GOAL
            or sub == S_AS_STORE or sub == S_FREE_SLOT)


cdef class AlleyCatHeuristicV1(Strategy):
    """The first heuristic, kept unchanged to measure its successor against. Its
    look-ahead values a position in money: money earned and store awards as they stand,
    each piece by its stage whatever the phase (more in the store room), coal in reserve,
    steps, the part of each order's next stage in the store room (and, for less, on the
    belt); on Saturday's last orders the final score. Solo, each objective that would
    hold if the week ended now is a bonus. Its currency changes at the last orders, so it
    trades Saturday's order pieces for coal, and it credits the next shift's free bean to
    ending a shift, so it ends shifts idle."""
    NAME = "heuristic_v1"
    GAMES = ("alleycat",)
    DEFAULT_TABLES = False  # a yardstick for the heuristic, not a player the balance stands for
    DESCRIPTION = ("the first heuristic (kept for comparison): drafts by card value, then a one-move "
                   "look-ahead valuing pieces by stage, coal, store steps and order progress")
    WEIGHTS = {
        # A piece by stage. A refined piece must be worth less than the money an order
        # pays for it (less the progress credit), or the bot would never sell.
        "bean": 0.3, "cocoa": 0.9, "bar": 1.5, "wrapped": 2.2, "boxed": 2.8,
        "store_room": 0.0,     # extra per refined piece already in the store room
        "coal": 0.5,           # a coal in reserve (bean and cocoa in the store room count as coal)
        "store_step": 1.2,     # a step on a Department Store track (store focus)
        "order_progress": 0.2, # share of a next stage's money per piece of it in the store room
        "order_small": 0.0, "order_medium": 0.5, "order_large": 1.0,  # holding an order of that size
        "part": 1.0,           # a part's gain per operation, for the draft
        "cover": 1.0,          # the value lost by covering a part
        "square": 0.3,         # per square a part sits away from the stage it works on
        "store_access": 0.4,   # per owned piece the employee's store accepts
        "chute": 3.0,          # keeping the Chute (free moves to the store room)
        "order_belt": 0.5,     # a belt piece counts this much of a store-room one for order progress
        **{f"employee_{e}": v for e, v in zip(EMPLOYEES, (
            3.0, 1.4, 0.8, 2.0, 1.5, 1.5, 1.5, 2.0, 2.8, 1.6, 2.0, 3.0, 2.5, 2.5, 2.5, 1.2,
            2.0, 1.5, 1.8))},
        # Solo: an objective that holds as things stand, and all of them (the win).
        # Worth more than the pieces a chocolate order takes, so the bot supplies it.
        "objective": 8.0, "win": 20.0,
        # Solo draft: per open step objective the employee's store could help pay.
        "store_goal": 2.0,
    }
    WEIGHT_RANGES = {k: RANGES[k] for k in WEIGHTS}

    cdef GameState seen     # the state as this seat may know it
    cdef GameState trial    # `seen` after a candidate move
    cdef GameState step     # `trial` after a candidate small decision of its chain
    # The draft values each card on every slot: each part's value and home square, for
    # the params of the states prepared for (they depend on nothing else).
    cdef double part_values[MAX_PARTS]
    cdef int home_squares[MAX_PARTS]

    cpdef prepare(self, GameState proto):
        cdef const AcConfig* c
        cdef int id
        if not isinstance(proto, AlleyCatState):
            raise TypeError("the alleycat heuristic plays only alleycat")
        if self.seen is None or self.seen.params is not proto.params:
            self.seen = proto.copy()
            self.trial = proto.copy()
            self.step = proto.copy()
        c = &(<AlleyCatState>proto).cfg
        for id in range(c.n_parts):
            self.part_values[id] = self.part_worth(c, id)
            self.home_squares[id] = self.home_of(c, id)

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        if self.seen is None:
            with gil:
                raise RuntimeError("AlleyCatHeuristic.prepare(state) was not called before choose")
        # The casts in argument position borrow the references (no GIL needed).
        return self.decide(<AlleyCatState>state, <AlleyCatState>self.seen, <AlleyCatState>self.trial,
                           <AlleyCatState>self.step, seat, legal, n, rng)

    # ---- the draft: cards valued directly ----

    @cython.final
    cdef double part_value(self, const AcConfig* c, int id) noexcept nogil:
        return self.part_values[id]

    @cython.final
    cdef int home_square(self, const AcConfig* c, int id) noexcept nogil:
        return self.home_squares[id]

    @cython.final
    cdef double part_worth(self, const AcConfig* c, int id) noexcept nogil:
        # What one operation adds at best, in piece values, less its coal.
        cdef const AcPart* k = &c.parts[id]
        cdef double best = 0.0, v
        cdef int o, i
        if k.kind == K_CHUTE:
            return self.w[W_CHUTE]
        if k.kind == K_UPGRADER:
            best = k.amount * (self.w[W_STAGE + 3] - self.w[W_STAGE + 2])
        elif k.kind == K_REPEATER:
            best = k.amount * self.w[W_STAGE + 2]
        else:
            for o in range(k.n_options):
                v = 0.0
                for i in range(k.n_out[o]):
                    v += self.mask_value(k.out_mask[o][i], True)
                for i in range(k.n_in[o]):
                    v -= self.mask_value(k.in_mask[o][i], False)
                if v > best:
                    best = v
        return best - k.coal * self.w[W_COAL]

    @cython.final
    cdef double mask_value(self, int mask, bint best) noexcept nogil:
        # An output symbol is worth its best piece, an input its cheapest.
        cdef int t
        cdef double v, out = -1.0
        for t in range(N_PIECES):
            if (mask >> t) & 1:
                v = self.w[W_STAGE + stage_of(t)]
                if out < 0 or (v > out if best else v < out):
                    out = v
        return out

    @cython.final
    cdef int home_of(self, const AcConfig* c, int id) noexcept nogil:
        # The square whose pieces a part wants: a piece reaches stage k after about k
        # shifts on the belt, so a part eating beans belongs near the entrance.
        cdef const AcPart* k = &c.parts[id]
        cdef int o, i, t, low = 4
        if k.kind != K_CONVERTER:
            return -1
        for o in range(k.n_options):
            for i in range(k.n_in[o]):
                for t in range(N_PIECES):
                    if (k.in_mask[o][i] >> t) & 1 and stage_of(t) < low:
                        low = stage_of(t)
        return low if low < c.squares else c.squares - 1

    @cython.final
    cdef double slot_value(self, AlleyCatState st, int seat, int id, int s) noexcept nogil:
        cdef const AcConfig* c = &st.cfg
        cdef int old = st.s.seat[seat].slot[s], home = self.home_square(c, id), d
        cdef double v = 0.0
        if old >= 0:
            v -= self.w[W_COVER] * self.part_value(c, old)
        if home >= 0:
            d = s % c.squares - home
            v -= self.w[W_SQUARE] * (d if d > 0 else -d)
        return v

    @cython.final
    cdef double employee_value(self, AlleyCatState st, int seat, int card) noexcept nogil:
        cdef const AcConfig* c = &st.cfg
        cdef const AcSeat* a = &st.s.seat[seat]
        cdef int z = c.emp_store[card], t, q, owned = 0
        cdef int mask
        if z < 0:
            # The expansion's employees open no store.
            return self.w[W_EMP + c.emp_kind[card]]
        mask = c.side[z][st.s.side[z]].mask
        for t in range(N_PIECES):
            if (mask >> t) & 1:
                owned += a.store[t]
                for q in range(c.squares):
                    owned += a.belt[q][t]
        return (self.w[W_EMP + c.emp_kind[card]] + self.w[W_ACCESS] * owned
                + self.w[W_STORE_GOAL] * self.open_store_goals(st, z))

    @cython.final
    cdef int open_store_goals(self, AlleyCatState st, int z) noexcept nogil:
        # Solo: face-up step objectives not met yet that store z could help pay (it is
        # named, or any store will do and z is still short of the steps).
        cdef bint met[MAX_SOLO_CARDS][MAX_GOALS]
        cdef const AcCard* k
        cdef const AcGoal* g
        cdef int j, i, n = 0
        if not st.cfg.solo:
            return 0
        st.judge(met)
        for j in range(st.s.revealed):
            k = st.card(j)
            for i in range(k.n_goals):
                g = &k.goal[i]
                if g.kind == G_STEPS and not met[j][i] and (
                        g.store == z or g.store < 0 and st.s.seat[0].track[z] < g.amount):
                    n += 1
        return n

    @cython.final
    cdef double card_value(self, AlleyCatState st, int seat, int packet, int i) noexcept nogil:
        cdef int x = st.s.pk_first[packet] + i, s, card
        cdef double best = -1e9, v
        if packet < st.cfg.n:
            card = st.s.disp_part[x]
            for s in range(st.cfg.slots):
                v = self.slot_value(st, seat, card, s)
                if v > best:
                    best = v
            return self.w[W_PART] * self.part_value(&st.cfg, card) + best
        return self.employee_value(st, seat, st.s.disp_emp[x])

    @cython.final
    cdef double packet_value(self, AlleyCatState st, int seat, int packet) noexcept nogil:
        cdef int i
        cdef double v, best = -1e9
        for i in range(st.s.pk_len[packet]):
            v = self.card_value(st, seat, packet, i)
            if v > best:
                best = v
        return best

    # ---- the value of a position, in money ----

    cdef double evaluate(self, GameState state, int seat) noexcept nogil:
        return self.value(<AlleyCatState>state, seat)

    cdef double value(self, AlleyCatState st, int seat) noexcept nogil:
        cdef const AcConfig* c = &st.cfg
        cdef const AcSeat* a = &st.s.seat[seat]
        cdef const AcOrder* o
        cdef int parts[6]
        cdef int t, q, i, z, k, total
        cdef int belt[N_PIECES]
        cdef double v, have
        if st.s.to_move < 0:
            return st.standing(seat) + self.objectives_value(st)
        total = st.score_now(seat, parts)
        if st.s.day == c.days - 1 and st.s.phase >= PH_ORDERS:
            # The last orders: pieces and coal are worth what the final scoring pays.
            v = total
        else:
            v = parts[0] + parts[1] + parts[2] + parts[3]
            for t in range(N_PIECES):
                k = 0
                for q in range(c.squares):
                    k += a.belt[q][t]
                belt[t] = k
                v += k * self.w[W_STAGE + stage_of(t)]
                if t <= COCOA:
                    v += a.store[t] * self.w[W_COAL] * c.coal_per_choc
                else:
                    v += a.store[t] * (self.w[W_STAGE + stage_of(t)] + self.w[W_ROOM])
            # Daily income and gifts arrive whatever the move; only coal spent or
            # traded for should count.
            v += (a.coal - a.income) * self.w[W_COAL]
            for i in range(st.s.n_held):
                if a.order[i] < 0:
                    continue
                # The next stage's pieces at hand: in the store room, and (for less,
                # as they still have to come out) on the belt: this also steers an
                # upgrade or a converter towards the kind an order wants.
                o = &c.orders[a.order[i]]
                have = 0.0
                for t in range(N_PIECES):
                    k = o.need[a.stage[i]][t]
                    if a.store[t] >= k:
                        have += k
                    else:
                        have += a.store[t] + self.w[W_ORDER_BELT] * min(belt[t], k - a.store[t])
                v += self.w[W_ORDER] * o.money[a.stage[i]] * have / o.n_pieces[a.stage[i]]
                v += self.w[W_SIZE + o.size]
        for z in range(N_STORES):
            v += self.w[W_STEP] * a.track[z]
        if st.s.sub == S_SUPPLY and st.s.to_move == seat:
            # Pieces are supplied one by one and the first can narrow what may follow
            # (one kind only, say): among equal moves, keep the most supply open.
            v += self.w[W_STEP] * st.supply_steps() + 1e-3 * self.supply_room(st, seat)
        return v + self.objectives_value(st)

    @cython.final
    cdef double objectives_value(self, AlleyCatState st) noexcept nogil:
        # The judge reads only the cards face up: what the bot may know.
        cdef bint met[MAX_SOLO_CARDS][MAX_GOALS]
        cdef int k
        if not st.cfg.solo:
            return 0.0
        k = st.judge(met)
        return self.w[W_OBJECTIVE] * k + (self.w[W_WIN] if k == st.goal_count() else 0.0)

    @cython.final
    cdef int supply_room(self, AlleyCatState st, int seat) noexcept nogil:
        # Pieces the supply in progress could still take.
        cdef int t, n = 0
        for t in range(N_PIECES):
            if st.supply_ok(seat, st.s.p_rule, t, st.s.p_count, st.s.p_kind, st.s.p_mask):
                n += st.s.seat[seat].store[t] if st.side_of(st.s.p_rule).rule != R_DIFFERENT else 1
        return n

    cdef int best_move(self, AlleyCatState st, AlleyCatState scratch, AlleyCatState inner, int seat,
                       const int* legal, int n, bint chain, double* value=NULL) noexcept nogil:
        # The legal move whose result is worth most to `seat` (the first on ties), and
        # its worth in `value`; with `chain`, each result's own chain of small decisions
        # is completed greedily first (in `inner`'s scratch space).
        cdef int i, pick = legal[0]
        cdef double v, best = 0.0
        cdef bint own = False
        for i in range(n):
            if own:
                own_restore(st, scratch, seat)
            else:
                st.copy_into(scratch)
            scratch.apply(legal[i])
            v = self.complete(scratch, inner, seat) if chain else NAN
            if v != v:
                v = self.value(scratch, seat)
            if i == 0 or v > best + 1e-9:
                best = v
                pick = legal[i]
            own = own_move(st, scratch, seat)
        if value != NULL:
            value[0] = best
        return pick

    @cython.final
    cdef double complete(self, AlleyCatState st, AlleyCatState scratch, int seat) noexcept nogil:
        # Plays out `st`'s chain greedily; returns the value of where it ends when its
        # last step was valued on the way (the same position), else NaN.
        cdef int legal[MAX_ACTIONS]
        cdef int n, k = 0
        cdef double v = NAN
        while st.s.to_move == seat and in_chain(st.s.sub) and k < MAX_CHAIN:
            n = st.legal_actions(legal)
            # A forced step needs no look-ahead (nothing is kept between values but
            # what depends on the position valued).
            if n == 1:
                st.apply(legal[0])
                v = NAN
            else:
                st.apply(self.best_move(st, scratch, scratch, seat, legal, n, False, &v))
            k += 1
        return v

    cdef int decide(self, AlleyCatState state, AlleyCatState seen, AlleyCatState trial,
                    AlleyCatState scratch, int seat, const int* legal, int n, Rng* rng) noexcept nogil:
        cdef int sub = state.s.sub, i, s, pick = legal[0]
        cdef double v, best = -1e18
        cdef const AcConfig* c = &state.cfg
        if n == 1:
            return legal[0]
        if sub == S_PACKET:
            for i in range(n):
                v = self.packet_value(state, seat, legal[i] - A_PACKET)
                if v > best:
                    best = v
                    pick = legal[i]
            return pick
        if sub == S_PICK:
            for i in range(n):
                v = self.card_value(state, seat, state.s.p_packet, legal[i] - A_PICK)
                if v > best:
                    best = v
                    pick = legal[i]
            return pick
        if sub == S_PLACE:
            for i in range(n):
                v = self.slot_value(state, seat, state.s.p_part, legal[i] - A_SLOT)
                if v > best:
                    best = v
                    pick = legal[i]
            return pick
        if sub == S_ASSIGN:
            # The Mechanic saves most on the dearest part, the Technician widens the best.
            for i in range(n):
                s = state.s.seat[seat].slot[legal[i] - A_SLOT]
                if state.emp_kind(seat) == E_MECHANIC:
                    v = c.parts[s].coal
                else:
                    v = self.part_value(c, s)
                if v > best:
                    best = v
                    pick = legal[i]
            return pick
        if state.s.phase >= PH_ORDERS:
            # Deck order matters only to moves that can end the day; before the orders
            # the moves are tried on copies of the state itself (best_move only reads it).
            state.copy_into(seen)
            seen.determinize(seat, rng)
            return self.look_ahead(state, seen, trial, scratch, seat, legal, n)
        return self.look_ahead(state, state, trial, scratch, seat, legal, n)

    @cython.final
    cdef int look_ahead(self, AlleyCatState state, AlleyCatState seen, AlleyCatState trial,
                        AlleyCatState scratch, int seat, const int* legal, int n) noexcept nogil:
        # The one-move look-ahead from `seen` (the state as the seat may know it).
        cdef int sub = state.s.sub
        cdef int kept[MAX_ACTIONS]
        if sub == S_ORDERS and self.c_side_early(state, seat, legal, n):
            # A C side pays by the day's Corner Shop money: the stages come first.
            n = self.without(A_SUPPLY, legal, n, kept)
            return self.best_move(seen, trial, scratch, seat, kept, n, True)
        return self.best_move(seen, trial, scratch, seat, legal, n, in_chain(sub) or sub == S_MENU
                              or sub == S_ORDERS or sub == S_AGENT_STORE)

    @cython.final
    cdef bint c_side_early(self, AlleyCatState st, int seat, const int* legal, int n) noexcept nogil:
        # Whether today's store is a C side while a Corner Shop stage can still be paid.
        cdef int i, e = st.s.seat[seat].employee
        cdef bint supply = False, stage = False
        for i in range(n):
            supply = supply or legal[i] == A_SUPPLY
            stage = stage or A_ORDER <= legal[i] < A_SUPPLY
        return supply and stage and st.side_of(st.cfg.emp_store[e]).rule == R_MONEY

    @cython.final
    cdef int without(self, int action, const int* legal, int n, int* out) noexcept nogil:
        cdef int i, m = 0
        for i in range(n):
            if legal[i] != action:
                out[m] = legal[i]
                m += 1
        return m


STRATEGIES = (AlleyCatHeuristic, AlleyCatHeuristicV1)


cdef inline void belt_sums(const AcSeat* a, int first, int end, int* out) noexcept nogil:
    # out[t]: the pieces of kind t on squares first..end-1. A square's seven counts are
    # summed as 16-bit lanes of two words (counts are small and never negative, so no
    # lane carries into the next): kinds 0-3, and 4-6 with a lane past the square's
    # end (the next square's first count, or the store room's) that is dropped.
    cdef uint64_t lo = 0, hi = 0, x
    cdef int q, t
    for q in range(first, end):
        memcpy(&x, &a.belt[q][0], 8)
        lo += x
        memcpy(&x, &a.belt[q][4], 8)
        hi += x
    for t in range(4):
        out[t] = (lo >> (16 * t)) & 0xFFFF
    for t in range(3):
        out[4 + t] = (hi >> (16 * t)) & 0xFFFF


cdef inline bint own_move(AlleyCatState st, AlleyCatState after, int seat) noexcept nogil:
    # Whether `after` is `st` after moves of `seat` in its own factory run only: the
    # same day's run, still its turn. Those moves change only its seat, the scalars at
    # the head of the state (the chance stream, the Seen record, phase, sub, to_move...)
    # and the pending decision at its tail: own_restore puts back just these.
    return (st.s.phase == PH_RUN and after.s.phase == PH_RUN and after.s.day == st.s.day
            and after.s.turn == st.s.turn and after.s.to_move == seat and st.s.to_move == seat)


cdef inline void own_restore(AlleyCatState st, AlleyCatState scratch, int seat) noexcept nogil:
    # `scratch` made `st` again after an own_move (the bytes copy_into would copy that
    # such a move can change: a seventh of them at 2 players).
    cdef char* src = <char*>&st.s
    cdef char* dst = <char*>&scratch.s
    cdef size_t head = <char*>&st.s.side - src
    cdef size_t tail = <char*>&st.s.seat[N_SEATS] - src
    memcpy(dst, src, head)
    memcpy(&scratch.s.seat[seat], &st.s.seat[seat], sizeof(AcSeat))
    memcpy(dst + tail, src + tail, sizeof(Ac) - tail)


cdef enum:
    W_READY = 5           # the new heuristic's use of slot 5 (the first one's store_room)
    W_COMPLETE = 40
    W_STORE_PLAN = 41
    W_ORDER_GOAL = 42


cdef struct Stages:
    # A Corner Shop order for orders_value: per stage its money, its pieces, and the
    # kinds it needs (kind order) with how many of each.
    int size
    int n_stages
    int money[MAX_STAGES]
    int n_pieces[MAX_STAGES]
    int n_kinds[MAX_STAGES]
    signed char kind[MAX_STAGES][N_PIECES]
    signed char need[MAX_STAGES][N_PIECES]


cdef struct Base:
    # A position of the mover's own run as delta_value values what a piece step there
    # leads to: the terms of value() no such step changes, and the pieces, coal and
    # orders the others are computed from.
    int split                 # belt squares below it reach the store room after today
    bint again                # to_menu would open the run again (before the first push)
    # Filled when a move first needs them (pieces), and (orders) a move that leaves the
    # kinds the orders need as they are:
    bint pieces
    bint has_orders
    double head               # money, steps and the beans still to load (value's sum before coal)
    bint today                # orders still to fulfil today
    int coal
    int pool[N_PIECES]        # value()'s pools before the orders
    int later[N_PIECES]
    double orders             # orders_value of them
    int pool_o[N_PIECES]      # the pools orders_value leaves
    int later_o[N_PIECES]
    int kinds                 # bit t: a stage still to pay of a held order needs kind t


cdef enum:
    CHAIN = 1 << N_PIECES     # piece_step: the step leaves a small decision pending
    MEMO_BITS = 8             # orders_value results kept for the run at hand: 256


cdef struct Memo:
    # orders_value of pools whose kinds the orders need are `pool` and `later`, in the
    # run context of `stamp`: its value and the pools it leaves of those kinds.
    int stamp
    int pool[N_PIECES]        # by the run context's kinds, in kind order (r_kind)
    int later[N_PIECES]
    double v
    int pool_o[N_PIECES]
    int later_o[N_PIECES]


cdef class AlleyCatHeuristic(AlleyCatHeuristicV1):
    NAME = "heuristic"
    GAMES = ("alleycat",)
    DEFAULT_TABLES = True
    DESCRIPTION = ("drafts by card value, then a one-move look-ahead valued in money at the end of this "
                   "game: the orders and objectives its pieces can pay, what is left by stage, coal, steps")
    # Slots 0-39 keep the first heuristic's order (the draft reads them by position);
    # slot 5 is `ready` here.
    WEIGHTS = {
        # A piece no order or objective takes, by stage, on top of what it is worth at
        # the end (2-4 players: £1 a chocolate; solo: nothing).
        "bean": 0.3, "cocoa": 0.9, "bar": 1.5, "wrapped": 2.2, "boxed": 2.8,
        "ready": 0.9,          # share of a stage's money its pieces at hand earn before it is paid
        "coal": 0.5,           # a coal, on top of its end value
        "store_step": 3.0,     # a step on a Department Store track before the last orders
        "order_progress": 1.6, # share of a stage's money per piece of it at hand (stage not yet payable)
        "order_small": 0.0, "order_medium": 0.5, "order_large": 1.0,  # holding an order of that size
        "part": 1.0, "cover": 1.0, "square": 0.3, "store_access": 0.4, "chute": 3.0,
        "order_belt": 0.8,     # a piece on the belt that reaches the store room after today
        **{f"employee_{e}": v for e, v in zip(EMPLOYEES, (
            3.0, 1.4, 0.8, 2.0, 1.5, 1.5, 1.5, 2.0, 2.8, 1.6, 2.0, 3.0, 2.5, 2.5, 2.5, 1.2,
            2.0, 1.5, 1.8))},
        # Solo: an objective met, all of them, and (draft) an employee per open step
        # objective his store could pay.
        "objective": 18.0, "win": 20.0, "store_goal": 10.0,
        "complete": 5.0,       # a payable stage that completes its order
        "store_plan": 0.5,     # share of the steps today's store could take from the pieces at hand
        "order_goal": 0.2,     # solo: share of an open orders objective per order held of its size
    }
    WEIGHT_RANGES = {k: RANGES[k] for k in WEIGHTS}

    # The currency of the decision at hand, set from the position where it is taken and
    # applied to every candidate: the same money whatever phase a move leads to.
    cdef double cv            # a coal
    cdef bint l_valid         # the currency below is that of `left` = l_left
    cdef double l_left
    # money_now's last position scored: its seat, the table's completed orders and
    # markers, and the money from most orders, store awards and diversity there.
    cdef bint k_valid
    cdef int k_seat, k_rest
    cdef int k_done[N_SEATS]
    cdef int k_track[N_SEATS][N_STORES]
    cdef int k_stamp[N_SEATS][N_STORES]
    cdef double gv[N_PIECES]  # a piece no order takes, by kind
    cdef double progress      # share of a stage's money per piece while it is not payable
    cdef double steps         # a step on a track
    cdef double coal_piece    # a chocolate turned into coal (at cleanup, or traded)
    cdef double kept_v[N_PIECES]  # a store-room piece kept overnight: max(gv, coal_piece)
    cdef int keep             # chocolates kept overnight; -1 on the last day (no night)
    # What the pieces at hand would pay today, as found by the last value(): money,
    # orders completed, chocolate orders supplied (solo).
    cdef int h_money
    cdef int h_n
    cdef int h_done[MAX_HELD_ORDERS]
    cdef bint h_goal[MAX_SOLO_CARDS]
    # Solo: in the draft and the run nothing the objectives are judged on changes before
    # the orders, so the judgement of the position now is made once per decision, and
    # the last judgement of a plan is kept for the next candidate with the same plan.
    cdef int sizes_wanted      # solo: bit z, an orders objective of size z is open
    cdef bint fixed
    cdef int f_now
    cdef double f_progress
    cdef bint m_valid
    cdef int m_money, m_n, m_store, m_gain, m_later
    cdef int m_done[MAX_HELD_ORDERS]
    cdef bint m_goal[MAX_SOLO_CARDS]
    cdef double m_progress
    # A decision from the orders on (2-4 players) tries its moves on the state itself
    # and determinizes a copy only for a move whose look-ahead draws a card (lazy): the
    # stream the determinization would start from, whether `seen` holds it yet, where
    # the decks stood, whether the move at hand drew, and how deep best_move is.
    cdef bint lazy
    cdef bint world
    cdef bint drew
    cdef int depth
    cdef Rng world_rng
    cdef AcMarks marks
    # The Corner Shop orders of the params prepared for, as orders_value (the bot's
    # most frequent loop) reads them: one compact copy instead of the order table of
    # each scratch state, and each stage's needs as the kinds it needs, in kind order.
    cdef Stages orders[MAX_ORDER_IDS]
    # The run context (2-4 players): while a decision of the seat's own run is taken,
    # every position it values in that run (same day and turn, still its move) has the
    # money, tracks, orders and stages of the decision's: head()'s money and steps are
    # worked out once (r_head), and orders_value's results are kept by the pools of
    # the kinds the orders need (r_kinds), from one decision to the next while the
    # seat's orders, stages and currency stay the same (r_stamp names them).
    cdef bint r_on
    cdef int r_seat, r_day, r_turn
    cdef double r_head
    cdef int r_kinds, r_stamp, r_gen, r_n_held, r_nk
    cdef int r_beans           # beans loaded a shift (the Supervisor's more)
    cdef bint r_supply         # today's store is still to supply (value()'s supply plan)
    cdef bint r_director
    cdef const AcSide* r_side
    cdef int r_kind[N_PIECES]  # the kinds of r_kinds, in kind order
    cdef int r_order[MAX_HELD_ORDERS]
    cdef int r_stage[MAX_HELD_ORDERS]
    cdef int gen               # bumped with every change of currency
    cdef Memo memo[1 << MEMO_BITS]

    cpdef prepare(self, GameState proto):
        cdef const AcConfig* c
        cdef int id, k, t, j
        if self.seen is None or self.seen.params is not proto.params:
            self.r_stamp += 1     # another order table: no kept result holds
            self.r_n_held = -1
        AlleyCatHeuristicV1.prepare(self, proto)
        # money_now's last scoring holds for any position of these params with the
        # same markers and completed orders, from one decision to the next.
        self.k_valid = False
        self.l_valid = False
        self.r_on = False
        c = &(<AlleyCatState>proto).cfg
        for id in range(c.n_orders):
            self.orders[id].size = c.orders[id].size
            self.orders[id].n_stages = c.orders[id].n_stages
            for k in range(c.orders[id].n_stages):
                self.orders[id].money[k] = c.orders[id].money[k]
                self.orders[id].n_pieces[k] = c.orders[id].n_pieces[k]
                j = 0
                for t in range(N_PIECES):
                    if c.orders[id].need[k][t] > 0:
                        self.orders[id].kind[k][j] = t
                        self.orders[id].need[k][j] = c.orders[id].need[k][t]
                        j += 1
                self.orders[id].n_kinds[k] = j

    @cython.final
    cdef void set_currency(self, AlleyCatState st, int seat) noexcept nogil:
        # `left`: how much of the game is still ahead to use a piece or a coal. Only on
        # the last day does it run out: at its last shift, and after it, pieces and coal
        # are worth what the final scoring pays.
        cdef const AcConfig* c = &st.cfg
        cdef const AcSeat* a = &st.s.seat[seat]
        cdef double left = 1.0, end_piece = 0.0 if c.solo else c.per_choc
        cdef double end_coal = 0.0 if c.solo else c.per_coal
        cdef int t
        cdef bint met[MAX_SOLO_CARDS][MAX_GOALS]
        if st.s.day == c.days - 1:
            if st.s.phase == PH_RUN and st.s.to_move == seat and st.s.sub != S_ASSIGN:
                left = min(1.0, a.shifts_left / <double>max(1, a.tiles - 1))
            elif st.s.phase > PH_RUN:
                left = 0.0
            self.keep = -1
        else:
            self.keep = c.keep
        # While the game goes on a coal or a piece is worth its use (the weights); the
        # end value takes over as the last shift nears. The same `left` gives the same
        # currency (for the params prepared for): kept from the last decision.
        self.r_on = False
        if not (self.l_valid and left == self.l_left):
            self.gen += 1
            self.l_valid = True
            self.l_left = left
            self.cv = (1.0 - left) * end_coal + left * self.w[W_COAL]
            self.coal_piece = self.cv * c.coal_per_choc
            for t in range(N_PIECES):
                self.gv[t] = (1.0 - left) * end_piece + left * self.w[W_STAGE + stage_of(t)]
                self.kept_v[t] = max(self.gv[t], self.coal_piece)
            self.progress = left * self.w[W_ORDER]
            self.steps = left * self.w[W_STEP]
        self.fixed = c.solo and st.s.phase <= PH_RUN
        self.m_valid = False
        self.sizes_wanted = 0
        if c.solo:
            self.f_now = st.judge(met)
            self.f_progress = self.steps_progress(st, met)
            self.sizes_wanted = self.open_sizes(st, met)

    def chain_values(self, AlleyCatState state, int seat):
        """Tests: each legal move of `state`, its chain of small decisions completed
        greedily on a copy, valued two ways for `seat`: as the look-ahead takes it
        (the value of the chain's last step, valued on the way, the store awards
        perhaps kept from the position valued before; None when the chain ended on a
        forced step or had none; in the run context of the seat's own run, as a decision
        enters it) and by valuing the position reached afresh."""
        cdef int legal[MAX_ACTIONS]
        cdef int n = state.legal_actions(legal), i
        cdef double taken, whole
        cdef AlleyCatState trial = state.copy(), step = state.copy()
        self.prepare(state)
        self.set_currency(state, seat)
        self.enter_run(state, seat)
        out = []
        for i in range(n):
            state.copy_into(trial)
            trial.apply(legal[i])
            taken = self.complete(trial, step, seat)
            whole = self.afresh(trial, seat)
            out.append((None if taken != taken else taken, whole))
        return out

    def run_values(self, AlleyCatState state, int seat):
        """Tests: each legal move of `state` with its chain of small decisions completed
        greedily on a copy, the position reached valued for `seat` two ways: by value()
        in the run context of the seat's own run, as a decision enters it (None when
        `state` is not in one, or the position reached has left it), and afresh."""
        cdef int legal[MAX_ACTIONS]
        cdef int n = state.legal_actions(legal), i
        cdef AlleyCatState trial = state.copy(), step = state.copy()
        self.prepare(state)
        self.set_currency(state, seat)
        self.enter_run(state, seat)
        out = []
        for i in range(n):
            state.copy_into(trial)
            trial.apply(legal[i])
            self.complete(trial, step, seat)
            out.append((self.value(trial, seat) if self.in_run(trial, seat) else None, self.afresh(trial, seat)))
        return out

    def afresh(self, AlleyCatState st, int seat):
        """value() of `st` with nothing kept: the store awards scored again, no run context."""
        cdef bint on = self.r_on
        cdef double v
        self.k_valid = False
        self.r_on = False
        v = self.value(st, seat)
        self.r_on = on
        return v

    cdef double evaluate(self, GameState state, int seat) noexcept nogil:
        # In the currency of the position valued, as a decision there would be: the
        # last decision's may be another seat's or another day's (on the last day a
        # coal or a piece is then valued at its use rather than its end value).
        if self.seen is None:
            # The order table comes from prepare; the search bot asks evaluates() first.
            with gil:
                self.prepare(state)
        self.set_currency(<AlleyCatState>state, seat)
        return self.value(<AlleyCatState>state, seat)

    cdef int decide(self, AlleyCatState state, AlleyCatState seen, AlleyCatState trial,
                    AlleyCatState scratch, int seat, const int* legal, int n, Rng* rng) noexcept nogil:
        cdef int i, pick = legal[0]
        cdef double v, best = -1e18
        self.set_currency(state, seat)
        if n > 1:
            self.enter_run(state, seat)
        if state.cfg.solo and state.s.sub == S_PICK and state.s.p_packet >= state.cfg.n and n > 1:
            # Solo: an employee also by what his store's supply today would add to the
            # objectives (the look-ahead's planned steps).
            for i in range(n):
                state.copy_into(trial)
                trial.apply(legal[i])
                v = self.card_value(state, seat, state.s.p_packet, legal[i] - A_PICK) + self.value(trial, seat)
                if v > best:
                    best = v
                    pick = legal[i]
            return pick
        if state.s.sub == S_OPEN and n > 1:
            # Before the day's first push: the employee's action, valued once its choices
            # are made, or the push (best_move only reads the state).
            return self.best_move(state, trial, scratch, seat, legal, n, True)
        if n > 1 and state.s.phase >= PH_ORDERS and not state.cfg.solo:
            # The first heuristic determinizes a copy for every such decision; only the
            # moves whose look-ahead draws a card read it, so they alone are valued on
            # it, made from the stream as it was (the same copy), and the stream moves
            # on as the determinization would have moved it.
            self.world_rng = rng[0]
            state.skip_determinize(seat, rng)
            state.draw_marks(&self.marks)
            self.lazy = True
            self.world = False
            pick = self.look_ahead(state, state, trial, scratch, seat, legal, n)
            self.lazy = False
            return pick
        return AlleyCatHeuristicV1.decide(self, state, seen, trial, scratch, seat, legal, n, rng)

    @cython.final
    cdef void enter_run(self, AlleyCatState st, int seat) noexcept nogil:
        # The run context for a decision at `st` (see r_on), if it is in the seat's own run.
        cdef const AcSeat* a = &st.s.seat[seat]
        cdef const Stages* o
        cdef int i, k, j, z, e
        cdef bint same
        if st.cfg.solo or st.s.phase != PH_RUN or st.s.to_move != seat:
            return
        self.r_seat = seat
        self.r_day = st.s.day
        self.r_turn = st.s.turn
        e = a.employee
        self.r_beans = st.cfg.supervisor_beans if st.emp_kind(seat) == E_SUPERVISOR else st.cfg.beans
        self.r_supply = e >= 0 and st.cfg.emp_store[e] >= 0 and not a.supplied
        self.r_side = st.side_of(st.cfg.emp_store[e]) if self.r_supply else NULL
        self.r_director = st.emp_kind(seat) == E_DIRECTOR
        # head()'s first terms, in its order.
        self.r_head = self.money_now(st, seat)
        for z in range(N_STORES):
            self.r_head += self.steps * a.track[z]
        same = self.r_gen == self.gen and self.r_n_held == st.s.n_held
        i = 0
        while same and i < st.s.n_held:
            same = self.r_order[i] == a.order[i] and self.r_stage[i] == a.stage[i]
            i += 1
        if not same:
            self.r_stamp += 1
            self.r_gen = self.gen
            self.r_n_held = st.s.n_held
            self.r_kinds = 0
            for i in range(st.s.n_held):
                self.r_order[i] = a.order[i]
                self.r_stage[i] = a.stage[i]
                if a.order[i] < 0:
                    continue
                o = &self.orders[a.order[i]]
                for k in range(a.stage[i], o.n_stages):
                    for j in range(o.n_kinds[k]):
                        self.r_kinds |= 1 << o.kind[k][j]
            self.r_nk = 0
            for k in range(N_PIECES):
                if (self.r_kinds >> k) & 1:
                    self.r_kind[self.r_nk] = k
                    self.r_nk += 1
        self.r_on = True

    @cython.final
    cdef bint in_run(self, AlleyCatState st, int seat) noexcept nogil:
        # Whether `st`, a position the decision at hand reached, is in its run context.
        return (self.r_on and st.s.phase == PH_RUN and st.s.to_move == seat and seat == self.r_seat
                and st.s.day == self.r_day and st.s.turn == self.r_turn)

    @cython.final
    cdef double run_orders(self, AlleyCatState st, int seat, int* pool, int* later) noexcept nogil:
        # orders_value in the run context (today: before the orders), kept by the pools
        # of the kinds it reads and takes (r_kinds): the same result, the same pools left.
        cdef int j, t, nk = self.r_nk
        cdef uint64_t h = 0
        cdef const int* kind = self.r_kind
        cdef Memo* m
        cdef bint hit
        for j in range(nk):
            t = kind[j]
            h = (h << 10) ^ (<uint64_t>pool[t] << 5) ^ <uint64_t>later[t]
        m = &self.memo[(h * 0x9E3779B97F4A7C15ULL) >> (64 - MEMO_BITS)]
        hit = m.stamp == self.r_stamp
        j = 0
        while hit and j < nk:
            t = kind[j]
            hit = m.pool[j] == pool[t] and m.later[j] == later[t]
            j += 1
        if hit:
            for j in range(nk):
                t = kind[j]
                pool[t] = m.pool_o[j]
                later[t] = m.later_o[j]
            return m.v
        m.stamp = self.r_stamp
        for j in range(nk):
            t = kind[j]
            m.pool[j] = pool[t]
            m.later[j] = later[t]
        m.v = self.orders_value(st, seat, pool, later, True)
        for j in range(nk):
            t = kind[j]
            m.pool_o[j] = pool[t]
            m.later_o[j] = later[t]
        return m.v

    cdef double value(self, AlleyCatState st, int seat) noexcept nogil:
        cdef const AcConfig* c = &st.cfg
        cdef const AcSeat* a = &st.s.seat[seat]
        cdef int pool[N_PIECES]      # in the store room before today's orders
        cdef int later[N_PIECES]     # on the belt after them
        cdef int e, gain, split
        cdef double v
        cdef bint today
        if self.in_run(st, seat):
            return self.run_value(st, seat)
        v = self.head(st, seat, pool, later, &split)
        v += a.coal * self.cv
        today = self.orders_ahead(st, seat)
        if c.solo:
            v += self.goals_value(st, pool, today)
        v += self.orders_value(st, seat, pool, later, today)
        # Today's supply, if still to come, from what the orders leave.
        e = a.employee
        gain = 0
        if today and e >= 0 and c.emp_store[e] >= 0 and not a.supplied:
            gain = self.supply_estimate(st.side_of(c.emp_store[e]), pool)
            if st.emp_kind(seat) == E_DIRECTOR:
                gain *= c.director_mult
            v += self.w[W_STORE_PLAN] * self.w[W_STEP] * gain
        if c.solo:
            v += self.objectives_now_and_planned(st, c.emp_store[e] if gain > 0 else -1, gain)
        v += self.rest_value(pool, later)
        if st.s.sub == S_SUPPLY and st.s.to_move == seat:
            v += self.w[W_STEP] * st.supply_steps() + 1e-3 * self.supply_room(st, seat)
        return v

    @cython.final
    cdef double run_value(self, AlleyCatState st, int seat) noexcept nogil:
        # value() of a position in the run context: its terms in value()'s order, those
        # the run fixes (money and steps, the beans a shift loads, the supply's store and
        # multiplier) as enter_run found them.
        cdef const AcSeat* a = &st.s.seat[seat]
        cdef int pool[N_PIECES]
        cdef int later[N_PIECES]
        cdef int t, gain, split = self.split_of(st, seat)
        cdef double v
        belt_sums(a, 0, split, later)
        belt_sums(a, split, st.cfg.squares, pool)
        for t in range(N_PIECES):
            pool[t] += a.store[t]
        v = self.r_head
        v += self.gv[BEAN] * a.shifts_left * self.r_beans
        return self.pieces_value(st, seat, pool, later, v)

    @cython.final
    cdef double pieces_value(self, AlleyCatState st, int seat, int* pool, int* later, double v) noexcept nogil:
        # run_value's terms after the beans still to load: coal, orders, today's supply
        # plan, the pieces left.
        cdef int gain
        v += st.s.seat[seat].coal * self.cv
        v += self.run_orders(st, seat, pool, later)
        if self.r_supply:
            gain = self.supply_estimate(self.r_side, pool)
            if self.r_director:
                gain *= st.cfg.director_mult
            v += self.w[W_STORE_PLAN] * self.w[W_STEP] * gain
        v += self.rest_value(pool, later)
        return v

    @cython.final
    cdef double output_value(self, AlleyCatState st, int seat, Base* b, int t) noexcept nogil:
        # delta_value of output piece t, the outputs after it completed as complete() does.
        cdef short c[N_PIECES]
        memcpy(c, st.s.seat[seat].belt[st.s.p_square], sizeof(c))
        c[t] += 1
        return self.outputs_value(st, seat, b, st.s.p_square, &st.cfg.parts[st.s.p_part], st.s.p_option,
                                  st.s.p_sym + 1, c, 0)

    @cython.final
    cdef double shift_end_value(self, AlleyCatState st, int seat, const Base* b) noexcept nogil:
        # run_value of the position after ending a shift that is not the run's last,
        # without copy or apply: start_shift's push (the last square's pieces to the
        # store room, the others one square on, the shift's beans at the entrance), one
        # shift fewer left (split_of then one square further). NaN anywhere else.
        cdef const AcSeat* a = &st.s.seat[seat]
        cdef int pool[N_PIECES]
        cdef int later[N_PIECES]
        cdef int t, left = a.shifts_left - 1, last = st.cfg.squares - 1, split
        cdef double v
        if not self.in_run(st, seat) or left < 0 or b.again:
            return NAN
        split = 0 if st.s.day == st.cfg.days - 1 else max(0, st.cfg.squares - left)
        # A piece on square q < last moves to q + 1: below the new split iff q + 1 is.
        belt_sums(a, 0, max(0, min(split - 1, last)), later)
        belt_sums(a, max(0, min(split - 1, last)), st.cfg.squares, pool)
        for t in range(N_PIECES):
            pool[t] += a.store[t]
        if split > 0:
            later[BEAN] += self.r_beans
        else:
            pool[BEAN] += self.r_beans
        v = self.r_head
        v += self.gv[BEAN] * left * self.r_beans
        return self.pieces_value(st, seat, pool, later, v)

    @cython.final
    cdef double head(self, AlleyCatState st, int seat, int* pool, int* later, int* split_out) noexcept nogil:
        # value()'s sum before coal: money, steps and the beans still to load; and the
        # pieces split into `pool` (in the store room before today's orders) and `later`
        # (on the belt after them) at square `split_out`.
        cdef const AcConfig* c = &st.cfg
        cdef const AcSeat* a = &st.s.seat[seat]
        cdef int t, q, z, split
        cdef double v
        # Money, and (2-4 players) the store awards, the £12 and the diversity as they stand.
        if self.in_run(st, seat):
            v = self.r_head
        else:
            v = self.money_now(st, seat)
            for z in range(N_STORES):
                v += self.steps * a.track[z]
        split = self.split_of(st, seat)
        belt_sums(a, 0, split, later)
        belt_sums(a, split, c.squares, pool)
        for t in range(N_PIECES):
            pool[t] += a.store[t]
        if st.s.phase == PH_RUN and st.s.to_move == seat:
            # Beans still to load today: the push that ends a shift is no gain by itself.
            v += self.gv[BEAN] * a.shifts_left * (c.supervisor_beans if st.emp_kind(seat) == E_SUPERVISOR
                                               else c.beans)
        split_out[0] = split
        return v

    @cython.final
    cdef int split_of(self, AlleyCatState st, int seat) noexcept nogil:
        # A piece on square q reaches the store room after squares - q pushes; the
        # pushes left today are the tiles still at the entrance while the seat runs its
        # factory, and all of them before its run. Saturday sweeps the belt in. The
        # squares below the one returned reach it after today.
        cdef const AcConfig* c = &st.cfg
        cdef int pushes = 0
        if st.s.phase == PH_DRAFT or (st.s.phase == PH_RUN and not self.ran(st, seat)):
            pushes = c.shifts
        elif st.s.phase == PH_RUN and st.s.to_move == seat:
            pushes = st.s.seat[seat].shifts_left
        return 0 if st.s.day == c.days - 1 else max(0, c.squares - pushes)

    # ---- delta evaluation: a piece step of the seat's own run valued without a copy ----

    @cython.final
    cdef bint by_delta(self, AlleyCatState st, int seat, const int* legal, int n) noexcept nogil:
        # Whether some move of `legal` is a step piece_step knows: in the mover's own
        # run, 2-4 players (solo, the objectives are judged on the state itself).
        cdef int sub = st.s.sub, i
        if st.cfg.solo or st.s.phase != PH_RUN or st.s.to_move != seat:
            return False
        if sub == S_MENU:
            return True      # A_DONE ends the shift (shift_end_value) whatever else is legal
        return (sub == S_INPUT or sub == S_OUTPUT or sub == S_CHUTE or sub == S_COPY
                or sub == S_UPGRADE or sub == S_MOVE_TO)

    @cython.final
    cdef void delta_base(self, AlleyCatState st, int seat, Base* b) noexcept nogil:
        # What piece_step reads; the rest when a move needs it (delta_pieces, delta_orders).
        b.split = self.split_of(st, seat)
        b.again = st.s.seat[seat].shifts_left == st.s.seat[seat].tiles
        b.pieces = False
        b.has_orders = False

    @cython.final
    cdef void delta_pieces(self, AlleyCatState st, int seat, Base* b) noexcept nogil:
        cdef const AcSeat* a = &st.s.seat[seat]
        cdef const Stages* o
        cdef int i, k, j
        b.pieces = True
        b.head = self.head(st, seat, b.pool, b.later, &b.split)
        b.coal = a.coal
        b.today = self.orders_ahead(st, seat)
        # orders_value reads and takes only the kinds of the stages still to pay.
        if self.in_run(st, seat):
            b.kinds = self.r_kinds
            return
        b.kinds = 0
        for i in range(st.s.n_held):
            if a.order[i] < 0:
                continue
            o = &self.orders[a.order[i]]
            for k in range(a.stage[i], o.n_stages):
                for j in range(o.n_kinds[k]):
                    b.kinds |= 1 << o.kind[k][j]

    @cython.final
    cdef void delta_orders(self, AlleyCatState st, int seat, Base* b) noexcept nogil:
        b.has_orders = True
        memcpy(b.pool_o, b.pool, sizeof(b.pool))
        memcpy(b.later_o, b.later, sizeof(b.later))
        if self.in_run(st, seat):
            b.orders = self.run_orders(st, seat, b.pool_o, b.later_o)
        else:
            b.orders = self.orders_value(st, seat, b.pool_o, b.later_o, b.today)

    @cython.final
    cdef double delta_value(self, AlleyCatState st, int seat, Base* b, int action, bint chain) noexcept nogil:
        # value() of `st` after `action` (a move of `seat` in its own run), from what the
        # move changes in its pieces and coal: value()'s sum, term by term in its order,
        # the orders valued again only if the move changes a kind they need. NaN when
        # the move is not a piece step piece_step knows, or (with `chain`) leaves a
        # small decision the look-ahead would complete.
        cdef int pool[N_PIECES]
        cdef int later[N_PIECES]
        cdef int coal = 0, changed
        if chain and st.s.sub == S_MENU and A_SLOT <= action < A_PIECE:
            return self.operation_value(st, seat, b, action - A_SLOT)
        if chain and st.s.sub == S_MENU and action == A_DONE:
            return self.shift_end_value(st, seat, b)
        if chain and st.s.sub == S_OUTPUT:
            return self.output_value(st, seat, b, action - A_PIECE)
        memset(pool, 0, sizeof(pool))
        memset(later, 0, sizeof(later))
        changed = self.piece_step(st, seat, b, action, pool, later, &coal)
        if changed < 0 or (chain and changed & CHAIN):
            return NAN
        return self.delta_sum(st, seat, b, pool, later, coal, changed)

    @cython.final
    cdef double operation_value(self, AlleyCatState st, int seat, Base* b, int slot) noexcept nogil:
        # delta_value of operating the part at `slot` from the shift menu, its chain
        # completed as complete() does it: a converter of one option whose inputs name
        # one kind each (outputs_value), an upgrader (upgrades_value), or the Chute or a
        # repeater, whose one decision (the piece) takes the best of its choices, the
        # first on ties, each valued by the delta as best_move values them (a single
        # choice, played as a forced step and valued whole, has the same value). NaN for
        # any other part, one that moves its piece, or one working on a square of the
        # Technician's choice.
        cdef const AcSeat* a = &st.s.seat[seat]
        cdef const AcPart* k = &st.cfg.parts[a.slot[slot]]
        cdef int pool[N_PIECES]
        cdef int later[N_PIECES]
        cdef short c[N_PIECES]
        cdef int sq[3]
        cdef int coal = 0, changed, t, q, cost
        cdef double v, best = 0.0
        cdef bint first = True
        if k.moves[0] or st.targets(seat, slot, sq) != 1:
            return NAN
        q = sq[0]
        cost = st.operate_cost(seat, slot, q)
        if k.kind == K_CONVERTER:
            # One option whose inputs each name one kind: taken as advance_inputs takes
            # them, then the outputs.
            if k.n_options != 1:
                return NAN
            memcpy(c, a.belt[q], sizeof(c))
            for t in range(k.n_in[0]):
                if k.in_mask[0][t] & (k.in_mask[0][t] - 1):
                    return NAN
                c[lowest_bit(k.in_mask[0][t])] -= 1
            return self.outputs_value(st, seat, b, q, k, 0, 0, c, -cost)
        if k.kind == K_UPGRADER:
            return self.upgrades_value(st, seat, b, slot, q, cost)
        for t in range(N_PIECES):
            # S_CHUTE's and S_COPY's legal moves, in their order.
            if a.belt[q][t] == 0:
                continue
            memset(pool, 0, sizeof(pool))
            memset(later, 0, sizeof(later))
            coal = -cost
            if k.kind == K_CHUTE:
                changed = 0
                if q < b.split:
                    later[t] -= 1
                    pool[t] += 1
                    changed = 1 << t
            else:
                memcpy(c, a.belt[q], sizeof(c))
                c[t] += k.amount
                changed = self.square_delta(q, c, a.belt[q], pool, later, b.split)
            v = self.delta_sum(st, seat, b, pool, later, coal, changed)
            if first or v > best + 1e-9:
                best = v
                first = False
        return best

    @cython.final
    cdef double outputs_value(self, AlleyCatState st, int seat, Base* b, int q, const AcPart* k, int o, int sym,
                              short* c, int coal) noexcept nogil:
        # The value complete() gives a converter's outputs from symbol `sym` of option
        # `o` on (square q holding `c` so far, `coal` spent): a symbol naming one kind
        # filled without a decision (advance_outputs), each other one decided by the
        # best of its kinds (legal_actions' order, the first on ties), each valued by
        # the delta with the one-kind symbols after it filled; the last decision's best,
        # or, with none, the value of where the outputs end.
        cdef short d[N_PIECES]
        cdef int m, t, j, pick
        cdef double v, best = NAN
        while True:
            while sym < k.n_out[o] and not (k.out_mask[o][sym] & (k.out_mask[o][sym] - 1)):
                c[lowest_bit(k.out_mask[o][sym])] += 1
                sym += 1
            if sym == k.n_out[o]:
                return best if best == best else self.square_value(st, seat, b, q, c, coal)
            m = k.out_mask[o][sym]
            pick = -1
            for t in range(N_PIECES):
                if not (m >> t) & 1:
                    continue
                memcpy(d, c, sizeof(d))
                d[t] += 1
                j = sym + 1
                while j < k.n_out[o] and not (k.out_mask[o][j] & (k.out_mask[o][j] - 1)):
                    d[lowest_bit(k.out_mask[o][j])] += 1
                    j += 1
                v = self.square_value(st, seat, b, q, d, coal)
                if pick < 0 or v > best + 1e-9:
                    best = v
                    pick = t
            c[pick] += 1
            sym += 1

    @cython.final
    cdef double square_value(self, AlleyCatState st, int seat, Base* b, int q, const short* c, int coal) noexcept nogil:
        # delta_sum of square q holding `c` and `coal` spent or gained.
        cdef int pool[N_PIECES]
        cdef int later[N_PIECES]
        cdef int changed
        memset(pool, 0, sizeof(pool))
        memset(later, 0, sizeof(later))
        changed = self.square_delta(q, c, st.s.seat[seat].belt[q], pool, later, b.split)
        return self.delta_sum(st, seat, b, pool, later, coal, changed)

    @cython.final
    cdef double upgrades_value(self, AlleyCatState st, int seat, Base* b, int slot, int q, int cost) noexcept nogil:
        # operation_value of an upgrader on square q: its upgrades chosen one by one as
        # complete() chooses them (each decision's moves in legal_actions' order, the
        # best by the delta, the first on ties; a single move played without a value),
        # until none is left, no piece can take one, or the best is to stop; the value of
        # the last decision's best, else (the last move forced) of where the chain ends.
        # NaN before the day's first push (stopping may open the run again).
        cdef const AcSeat* a = &st.s.seat[seat]
        cdef const AcPart* k = &st.cfg.parts[a.slot[slot]]
        cdef int pool[N_PIECES]
        cdef int later[N_PIECES]
        cdef short c[N_PIECES]
        cdef short d[N_PIECES]
        cdef int moves[N_UPGRADES + 1]
        cdef int n, i, j, changed, pick, left = k.amount
        cdef double v, best = NAN
        cdef bint first = True
        if b.again:
            return NAN
        memcpy(c, a.belt[q], sizeof(c))
        while True:
            n = 0
            if not first:
                moves[n] = -1          # A_DONE
                n += 1
            for j in range(N_UPGRADES):
                if c[upg_from(j)] > 0:
                    moves[n] = j
                    n += 1
            if n == 0:
                return NAN
            pick = moves[0]
            best = NAN
            if n > 1:
                for i in range(n):
                    memcpy(d, c, sizeof(d))
                    if moves[i] >= 0:
                        d[upg_from(moves[i])] -= 1
                        d[upg_to(moves[i])] += 1
                    memset(pool, 0, sizeof(pool))
                    memset(later, 0, sizeof(later))
                    changed = self.square_delta(q, d, a.belt[q], pool, later, b.split)
                    v = self.delta_sum(st, seat, b, pool, later, -cost, changed)
                    if i == 0 or v > best + 1e-9:
                        best = v
                        pick = moves[i]
            if pick < 0:
                break
            c[upg_from(pick)] -= 1
            c[upg_to(pick)] += 1
            left -= 1
            first = False
            if left == 0 or not upgradable(c):
                break
        if best == best:
            return best
        memset(pool, 0, sizeof(pool))
        memset(later, 0, sizeof(later))
        changed = self.square_delta(q, c, a.belt[q], pool, later, b.split)
        return self.delta_sum(st, seat, b, pool, later, -cost, changed)

    @cython.final
    cdef double delta_sum(self, AlleyCatState st, int seat, Base* b, int* pool, int* later, int coal,
                          int changed) noexcept nogil:
        # delta_value's sum for the changes `pool`, `later` and `coal` (of the kinds
        # `changed`) from b's position.
        cdef const AcConfig* c = &st.cfg
        cdef const AcSeat* a = &st.s.seat[seat]
        cdef int t, e, gain
        cdef double v, orders
        if not b.pieces:
            self.delta_pieces(st, seat, b)
        for t in range(N_PIECES):
            pool[t] += b.pool[t]
            later[t] += b.later[t]
        coal += b.coal
        v = b.head
        v += coal * self.cv
        if changed & b.kinds:
            if self.in_run(st, seat):
                orders = self.run_orders(st, seat, pool, later)
            else:
                orders = self.orders_value(st, seat, pool, later, b.today)
        else:
            if not b.has_orders:
                self.delta_orders(st, seat, b)
            orders = b.orders
            for t in range(N_PIECES):
                if (b.kinds >> t) & 1:
                    pool[t] = b.pool_o[t]
                    later[t] = b.later_o[t]
        v += orders
        e = a.employee
        if self.in_run(st, seat):
            if self.r_supply:
                gain = self.supply_estimate(self.r_side, pool)
                if self.r_director:
                    gain *= c.director_mult
                v += self.w[W_STORE_PLAN] * self.w[W_STEP] * gain
        elif b.today and e >= 0 and c.emp_store[e] >= 0 and not a.supplied:
            gain = self.supply_estimate(st.side_of(c.emp_store[e]), pool)
            if st.emp_kind(seat) == E_DIRECTOR:
                gain *= c.director_mult
            v += self.w[W_STORE_PLAN] * self.w[W_STEP] * gain
        v += self.rest_value(pool, later)
        return v

    @cython.final
    cdef int piece_step(self, AlleyCatState st, int seat, const Base* b, int action, int* pool, int* later,
                        int* coal) noexcept nogil:
        # What `action` does to `seat`'s pieces and coal, as apply does it (a trade, or a
        # step of a part's or employee's work on square p_square, with the symbols
        # that then need no decision), added to the pools (split at b.split) and
        # `coal`: the kinds changed (bit t), with CHAIN if a small decision is then
        # pending. -1 for any other move, or one that ends at to_menu before the day's
        # first push (the run may then open again: copy and apply).
        cdef const AcSeat* a = &st.s.seat[seat]
        cdef const AcPart* k = &st.cfg.parts[st.s.p_part]
        cdef int sub = st.s.sub, q = st.s.p_square, o = st.s.p_option, sym = st.s.p_sym, t, m
        cdef int pending = 0
        cdef short c[N_PIECES]
        if sub == S_MENU:
            if not A_TRADE <= action < A_SQUARE:
                return -1
            t = action - A_TRADE
            pool[t] -= 1
            coal[0] += st.cfg.coal_per_choc
            return 1 << t
        if sub == S_CHUTE:
            t = action - A_PIECE
            if q >= b.split:
                return 0          # from the belt's pool to the store room's
            later[t] -= 1
            pool[t] += 1
            return 1 << t
        memcpy(c, a.belt[q], sizeof(c))
        if sub == S_INPUT or sub == S_OUTPUT:
            # advance_inputs / advance_outputs: the symbols naming one kind are filled
            # without a decision.
            if sub == S_INPUT:
                c[action - A_PIECE] -= 1
                sym += 1
                while sym < k.n_in[o]:
                    m = k.in_mask[o][sym]
                    if m & (m - 1):
                        pending = CHAIN
                        break
                    c[lowest_bit(m)] -= 1
                    sym += 1
                sym = 0
            else:
                c[action - A_PIECE] += 1
                sym += 1
            while not pending and sym < k.n_out[o]:
                m = k.out_mask[o][sym]
                if m & (m - 1):
                    pending = CHAIN
                    break
                c[lowest_bit(m)] += 1
                sym += 1
        elif sub == S_COPY:
            c[action - A_PIECE] += k.amount
            if st.s.p_move:
                pending = CHAIN
        elif sub == S_UPGRADE:
            if action == A_DONE:
                if b.again:
                    return -1
            else:
                t = action - A_UPGRADE
                c[upg_from(t)] -= 1
                c[upg_to(t)] += 1
                # after_upgrade: another upgrade is asked for while some are left and
                # a piece can take one; else to_menu.
                if st.s.p_move or (st.s.p_left > 1 and upgradable(c)):
                    pending = CHAIN
                elif b.again:
                    return -1
        elif sub == S_MOVE_TO:
            if b.again:
                return -1
            # The piece moved changes a pool only if it crosses the split.
            t = st.s.p_kind
            if action == A_DONE or (action - A_SQUARE >= b.split) == (q >= b.split):
                return 0
            if q >= b.split:
                pool[t] -= 1
                later[t] += 1
            else:
                later[t] -= 1
                pool[t] += 1
            return 1 << t
        else:
            return -1
        return pending | self.square_delta(q, c, a.belt[q], pool, later, b.split)

    @cython.final
    cdef int square_delta(self, int q, const short* now, const short* was, int* pool, int* later,
                          int split) noexcept nogil:
        # Square q's pieces `now` instead of `was`, added to its pool: the kinds changed.
        cdef int t, d, changed = 0
        cdef int* to = pool if q >= split else later
        for t in range(N_PIECES):
            d = now[t] - was[t]
            if d:
                to[t] += d
                changed |= 1 << t
        return changed

    cdef int best_move(self, AlleyCatState st, AlleyCatState scratch, AlleyCatState inner, int seat,
                       const int* legal, int n, bint chain, double* value=NULL) noexcept nogil:
        # The first heuristic's, with each piece step of the seat's own run valued by
        # delta_value (no copy, no apply, only the terms it changes); the other moves
        # are copied, applied and valued whole.
        # Lazy (see decide): a move of the decision whose look-ahead drew a card anywhere
        # is valued again on the determinized copy, `seen`.
        cdef int i, pick = legal[0]
        cdef double v, best = 0.0
        cdef bint own = False, delta = self.by_delta(st, seat, legal, n)
        cdef bint top = self.lazy and self.depth == 0
        cdef Base b
        if delta:
            self.delta_base(st, seat, &b)
        self.depth += 1
        for i in range(n):
            v = self.delta_value(st, seat, &b, legal[i], chain) if delta else NAN
            if v != v:
                if own:
                    own_restore(st, scratch, seat)
                else:
                    st.copy_into(scratch)
                if top:
                    self.drew = False
                scratch.apply(legal[i])
                v = self.complete(scratch, inner, seat) if chain else NAN
                if v != v:
                    v = self.value(scratch, seat)
                own = own_move(st, scratch, seat)
                if self.lazy and scratch.drew_since(&self.marks):
                    self.drew = True
                if top and self.drew:
                    v = self.world_value(st, scratch, inner, seat, legal[i], chain)
                    own = False
            if i == 0 or v > best + 1e-9:
                best = v
                pick = legal[i]
        self.depth -= 1
        if value != NULL:
            value[0] = best
        return pick

    @cython.final
    cdef double world_value(self, AlleyCatState st, AlleyCatState scratch, AlleyCatState inner, int seat,
                            int action, bint chain) noexcept nogil:
        # best_move's value of `action` from `st` determinized for `seat` (made once a decision).
        cdef double v
        self.lazy = False
        if not self.world:
            st.copy_into(self.seen)
            (<AlleyCatState>self.seen).determinize(seat, &self.world_rng)
            self.world = True
        self.seen.copy_into(scratch)
        scratch.apply(action)
        v = self.complete(scratch, inner, seat) if chain else NAN
        if v != v:
            v = self.value(scratch, seat)
        self.lazy = True
        return v

    def delta_values(self, AlleyCatState state, int seat, bint chain=False):
        """Tests: each legal move of `state` valued for `seat` two ways: by delta_value
        (None where it does not answer; in the run context of the seat's own run, as a
        decision enters it) and by copying, applying and valuing the copy afresh; with
        `chain`, as the look-ahead values a move whose chain it completes: the chain
        completed greedily on the copy, which takes the value of its last step valued
        on the way, else is valued afresh."""
        cdef int legal[MAX_ACTIONS]
        cdef int n = state.legal_actions(legal), i
        cdef double d, taken
        cdef Base b
        cdef AlleyCatState trial = state.copy(), step = state.copy()
        cdef bint delta
        self.prepare(state)
        self.set_currency(state, seat)
        self.enter_run(state, seat)
        delta = self.by_delta(state, seat, legal, n)
        if delta:
            self.delta_base(state, seat, &b)
        out = []
        for i in range(n):
            d = self.delta_value(state, seat, &b, legal[i], chain) if delta else NAN
            state.copy_into(trial)
            trial.apply(legal[i])
            taken = self.complete(trial, step, seat) if chain else NAN
            out.append((legal[i], None if d != d else d, self.afresh(trial, seat) if taken != taken else taken))
        return out

    def lazy_check(self, AlleyCatState state, uint64_t seed):
        """Tests: the move chosen at `state` (the orders on, 2-4 players) and the bot
        stream's state after it, as decide takes it (lazily) and by looking ahead from a
        determinized copy, as the first heuristic does; and whether decide determinized."""
        cdef int legal[MAX_ACTIONS]
        cdef int n = state.legal_actions(legal), seat = state.s.to_move, lazy, eager
        cdef Rng a, b
        cdef AlleyCatState seen = state.copy(), trial = state.copy(), scratch = state.copy()
        self.prepare(state)
        rng_seed(&a, seed)
        b = a
        lazy = self.decide(state, <AlleyCatState>self.seen, trial, scratch, seat, legal, n, &a)
        self.set_currency(state, seat)
        state.copy_into(seen)
        seen.determinize(seat, &b)
        eager = self.look_ahead(state, seen, trial, scratch, seat, legal, n)
        return lazy, a.s, eager, b.s, self.world

    @cython.final
    cdef int money_now(self, AlleyCatState st, int seat) noexcept nogil:
        # score_now's money, most orders, store awards and diversity. The last three
        # change only with the table's markers and completed orders, seldom between
        # the positions of a decision: kept from the last position scored while those
        # are the same.
        cdef int parts[6]
        cdef int p, z
        cdef const AcSeat* b
        cdef bint same = self.k_valid and self.k_seat == seat
        p = 0
        while same and p < st.cfg.n:
            b = &st.s.seat[p]
            same = (b.n_done == self.k_done[p] and memcmp(b.track, self.k_track[p], sizeof(b.track)) == 0
                    and memcmp(b.stamp, self.k_stamp[p], sizeof(b.stamp)) == 0)
            p += 1
        if same:
            return st.s.seat[seat].money + self.k_rest
        st.score_now(seat, parts)
        self.k_valid = True
        self.k_seat = seat
        self.k_rest = parts[1] + parts[2] + parts[3]
        for p in range(st.cfg.n):
            b = &st.s.seat[p]
            self.k_done[p] = b.n_done
            for z in range(N_STORES):
                self.k_track[p][z] = b.track[z]
                self.k_stamp[p][z] = b.stamp[z]
        return parts[0] + parts[1] + parts[2] + parts[3]

    @cython.final
    cdef bint orders_ahead(self, AlleyCatState st, int seat) noexcept nogil:
        # Whether `seat` still fulfils orders today (or is doing so).
        if st.s.phase != PH_ORDERS:
            return st.s.phase < PH_ORDERS
        return st.s.to_move == seat or not self.ran(st, seat)

    @cython.final
    cdef bint ran(self, AlleyCatState st, int seat) noexcept nogil:
        # Whether `seat` has had its turn of the phase (PH_RUN or PH_ORDERS) today: its
        # place in turn order from the start player (seat_at's inverse) is not past it.
        return (seat - st.s.start + st.cfg.n) % st.cfg.n <= st.s.turn

    @cython.final
    cdef double orders_value(self, AlleyCatState st, int seat, int* pool, int* later, bint today) noexcept nogil:
        # With orders still to fulfil `today`, the stages the pieces at hand pay, dearest
        # first, at `ready` of their money (an order they complete at `complete` more);
        # then the next stage of each order, by the share of its pieces at hand (and,
        # for less, on the belt). The pieces counted leave the pools. Only the kinds a
        # stage needs are visited: the others would add exactly 0.0 (the pools are
        # never negative).
        cdef const AcSeat* a = &st.s.seat[seat]
        cdef const Stages* held[MAX_HELD_ORDERS]   # an order with a stage left, else NULL
        cdef const Stages* o
        cdef int stage[MAX_HELD_ORDERS]
        cdef int i, j, t, best, k, m, need, best_money = 0, n_held = st.s.n_held
        cdef double v = 0.0, have
        cdef bint ok
        self.h_money = 0
        self.h_n = 0
        # Whole arrays, of a size known here: copied inline, where a copy of n_held
        # entries was a call to the C library's memcpy and memset.
        memcpy(stage, a.stage, sizeof(stage))
        memset(held, 0, sizeof(held))
        for i in range(n_held):
            if a.order[i] >= 0:
                o = &self.orders[a.order[i]]
                v += self.w[W_SIZE + o.size]
                if i < st.cfg.n_start and (self.sizes_wanted >> o.size) & 1:
                    v += self.w[W_ORDER_GOAL] * self.w[W_OBJECTIVE]
                if stage[i] < o.n_stages:
                    held[i] = o
        while today:
            best = -1
            for i in range(n_held):
                o = held[i]
                if o == NULL:
                    continue
                k = stage[i]
                ok = True
                for j in range(o.n_kinds[k]):
                    if pool[o.kind[k][j]] < o.need[k][j]:
                        ok = False
                        break
                if ok and (best < 0 or o.money[k] > best_money):
                    best = i
                    best_money = o.money[k]
            if best < 0:
                break
            o = held[best]
            k = stage[best]
            for j in range(o.n_kinds[k]):
                pool[o.kind[k][j]] -= o.need[k][j]
            v += self.w[W_READY] * best_money
            self.h_money += best_money
            stage[best] += 1
            if stage[best] == o.n_stages:
                v += self.w[W_READY] * self.w[W_COMPLETE]
                self.h_done[self.h_n] = a.order[best]
                self.h_n += 1
                held[best] = NULL
        # A kind none of which is at hand, and a stage none of whose pieces are, add
        # exact zeros: skipped (adding a zero changes no sum but a zero's sign).
        for i in range(n_held):
            o = held[i]
            if o == NULL:
                continue
            k = stage[i]
            have = 0.0
            for j in range(o.n_kinds[k]):
                t = o.kind[k][j]
                if pool[t] == 0 and later[t] == 0:
                    continue
                need = o.need[k][j]
                m = min(pool[t], need)
                pool[t] -= m
                have += m
                m = min(later[t], need - m)
                later[t] -= m
                have += self.w[W_ORDER_BELT] * m
            if have != 0.0:
                v += self.progress * o.money[k] * have / o.n_pieces[k]
        return v

    @cython.final
    cdef double goals_value(self, AlleyCatState st, int* pool, bint today) noexcept nogil:
        # Solo: the chocolate order of each face-up card not supplied yet, as a stage
        # worth an objective: planned if the pieces at hand supply it `today`, else by
        # the share of its pieces at hand. Its pieces leave the pool.
        cdef const AcCard* k
        cdef const AcGoal* g
        cdef int j, t, best, have, need
        cdef double v = 0.0
        for j in range(st.s.revealed):
            k = st.card(j)
            self.h_goal[j] = False
            if k.supply < 0 or st.s.goal_supplied[j]:
                continue
            g = &k.goal[k.supply]
            have = 0
            need = 0
            if g.rule == SR_EXACT:
                for t in range(N_PIECES):
                    have += min(pool[t], g.need[t])
                    need += g.need[t]
                    pool[t] -= min(pool[t], g.need[t])
            elif g.rule == SR_SAME:
                need = g.amount
                best = -1
                for t in range(N_PIECES):
                    if (g.mask >> t) & 1 and (best < 0 or pool[t] > pool[best]):
                        best = t
                if best >= 0:
                    have = min(pool[best], need)
                    pool[best] -= have
            else:
                need = g.amount
                for t in range(N_PIECES):
                    if (g.mask >> t) & 1 and pool[t] > 0 and have < need:
                        have += 1
                        pool[t] -= 1
            if need > 0 and have == need and today:
                self.h_goal[j] = True
            elif need > 0:
                v += self.w[W_OBJECTIVE] * self.progress * have / need
        return v

    @cython.final
    cdef double steps_progress(self, AlleyCatState st, bint (*met)[MAX_GOALS]) noexcept nogil:
        # Solo: each step objective not met, by the share of it the tracks already show
        # (stores far enough along, or the named store's steps), at `order_progress`.
        cdef const AcSeat* a = &st.s.seat[0]
        cdef const AcCard* k
        cdef const AcGoal* g
        cdef int j, i, z, far
        cdef double v = 0.0
        for j in range(st.s.revealed):
            k = st.card(j)
            for i in range(k.n_goals):
                g = &k.goal[i]
                if g.kind != G_STEPS or met[j][i]:
                    continue
                if g.store >= 0:
                    v += min(a.track[g.store], g.amount) / <double>g.amount
                else:
                    far = 0
                    for z in range(N_STORES):
                        far += a.track[z] >= g.amount
                    v += min(far, g.stores) / <double>g.stores
        return self.progress * self.w[W_OBJECTIVE] * v

    @cython.final
    cdef int open_sizes(self, AlleyCatState st, bint (*met)[MAX_GOALS]) noexcept nogil:
        cdef const AcCard* k
        cdef int j, i, out = 0
        for j in range(st.s.revealed):
            k = st.card(j)
            for i in range(k.n_goals):
                if k.goal[i].kind == G_ORDERS and not met[j][i]:
                    out |= (1 << k.goal[i].size) if k.goal[i].size >= 0 else 7
        return out

    @cython.final
    cdef double objectives_now_and_planned(self, AlleyCatState st, int store, int gain) noexcept nogil:
        # Solo: the objectives of the face-up cards that hold now, and at `ready` those
        # that would also hold once today's payable stages are paid, the chocolate
        # orders at hand supplied and `gain` steps taken at `store` (-1: none), judged
        # by the engine on this scratch copy, then put back.
        cdef bint met[MAX_SOLO_CARDS][MAX_GOALS]
        cdef int now, later, all = st.goal_count(), j
        cdef bint planned = self.h_money > 0 or gain > 0
        cdef double v, progress
        if self.fixed:
            now = self.f_now
        else:
            now = st.judge(met)
        v = self.w[W_OBJECTIVE] * now + (self.w[W_WIN] if now == all else 0.0)
        for j in range(st.s.revealed):
            planned = planned or self.h_goal[j]
        if not planned:
            return v + (self.f_progress if self.fixed else self.steps_progress(st, met))
        if self.fixed and self.same_plan(st, store, gain):
            later, progress = self.m_later, self.m_progress
        else:
            later = self.judge_plan(st, store, gain, &progress)
            if self.fixed:
                self.keep_plan(st, store, gain, later, progress)
        return v + progress + self.w[W_READY] * (
            self.w[W_OBJECTIVE] * (later - now) + (self.w[W_WIN] if later == all and now != all else 0.0))

    @cython.final
    cdef int judge_plan(self, AlleyCatState st, int store, int gain, double* progress) noexcept nogil:
        # The objectives met once the plan is carried out, judged by the engine on this
        # scratch copy (put back after), and the step objectives' progress then.
        cdef bint met[MAX_SOLO_CARDS][MAX_GOALS]
        cdef AcSeat* a = &st.s.seat[0]
        cdef int money = a.money, n_done = a.n_done, track = 0, later, j, i
        cdef int done_size[N_SIZES]
        cdef bint supplied[MAX_SOLO_CARDS]
        for i in range(N_SIZES):
            done_size[i] = a.done_size[i]
        for j in range(st.s.revealed):
            supplied[j] = st.s.goal_supplied[j]
            st.s.goal_supplied[j] = supplied[j] or self.h_goal[j]
        a.money += self.h_money
        for i in range(self.h_n):
            if a.n_done < MAX_DONE:
                a.done[a.n_done] = self.h_done[i]
                a.n_done += 1
                a.done_size[st.cfg.orders[self.h_done[i]].size] += 1
        if store >= 0:
            track = a.track[store]
            a.track[store] = min(st.cfg.track, track + gain)
        later = st.judge(met)
        progress[0] = self.steps_progress(st, met)
        if store >= 0:
            a.track[store] = track
        a.money = money
        a.n_done = n_done
        for i in range(N_SIZES):
            a.done_size[i] = done_size[i]
        for j in range(st.s.revealed):
            st.s.goal_supplied[j] = supplied[j]
        return later

    @cython.final
    cdef bint same_plan(self, AlleyCatState st, int store, int gain) noexcept nogil:
        cdef int i
        if not (self.m_valid and self.m_money == self.h_money and self.m_n == self.h_n
                and self.m_store == store and self.m_gain == gain):
            return False
        for i in range(self.h_n):
            if self.m_done[i] != self.h_done[i]:
                return False
        for i in range(st.s.revealed):
            if self.m_goal[i] != self.h_goal[i]:
                return False
        return True

    @cython.final
    cdef void keep_plan(self, AlleyCatState st, int store, int gain, int later, double progress) noexcept nogil:
        cdef int i
        self.m_valid = True
        self.m_money, self.m_n, self.m_store, self.m_gain = self.h_money, self.h_n, store, gain
        for i in range(self.h_n):
            self.m_done[i] = self.h_done[i]
        for i in range(st.s.revealed):
            self.m_goal[i] = self.h_goal[i]
        self.m_later, self.m_progress = later, progress

    @cython.final
    cdef double rest_value(self, int* pool, int* later) noexcept nogil:
        # Pieces no order takes: on the belt by stage; in the store room only the
        # `keep` best survive the night, the rest become coal (or can be traded for it).
        cdef double v = 0.0
        cdef int t, m, left = self.keep
        # A kind of which there is none adds an exact zero: skipped (adding a zero
        # changes no sum but a zero's sign).
        for t in range(N_PIECES):
            if later[t]:
                v += later[t] * self.gv[t]
        if self.keep < 0:
            for t in range(N_PIECES):
                if pool[t]:
                    v += pool[t] * self.gv[t]
            return v
        for t in range(N_PIECES - 1, -1, -1):
            # Kinds by stage, best first (pieces are numbered by stage).
            if pool[t]:
                m = min(pool[t], left)
                left -= m
                v += m * self.kept_v[t] + (pool[t] - m) * self.coal_piece
        return v

    @cython.final
    cdef int supply_estimate(self, const AcSide* d, const int* pool) noexcept nogil:
        # Steps a supply by side `d`'s rule could take from `pool` (rules that need a
        # choice made elsewhere count nothing).
        cdef int t, j, n = 0, most = 0, kinds = 0, steps = 0
        for t in range(N_PIECES):
            if (d.mask >> t) & 1:
                n += pool[t]
                most = max(most, pool[t])
                kinds += pool[t] > 0
        if d.rule == R_EACH:
            return n
        if d.rule == R_SAME:
            return most
        if d.rule == R_DIFFERENT:
            return kinds
        if d.rule == R_SETS:
            return n // d.per
        if d.rule == R_PAIR:
            for j in range(d.n_pairs):
                n = 0
                for t in range(N_PIECES):
                    if (d.pair_mask[j] >> t) & 1:
                        n += pool[t]
                if n >= 2:
                    steps = max(steps, d.pair_steps[j])
            return steps
        return 0
