# cython: language_level=3
"""`heuristic` for Chocolate Factory (Manfredini): scores each small decision from what its
seat may see (its own hand, the public board, warehouses, trucks and coins).

A card, a die choice, a direction and to/from are all valued by the same estimate of the
turn they lead to: goods the worker can carry (its capacity, the room left, what there is
to carry) times their value, plus the space ability if it can be used. Goods go to the
coloured trucks, chocolate first; worker icons are kept uncovered while the Plantation
lasts; candy is made from the recipe with the best points for its cost.
"""
cimport cython
from libc.string cimport memset
from simcore.rng cimport Rng
from simcore.state cimport GameState
from simcore.strategy cimport Strategy
from simcore.games.manfredini.rules cimport (
    ManfrediniState, MObs, Goods, Box, MConfig,
    MAX_SPACES, N_GOODS, N_TRUCKS, N_RECIPES, SPEC, SUGAR, CACAO, CHOC, PLAIN, DECO,
    K_LIFT, K_SORTER, K_RUNNER, K_TRUCKER, K_MACHINIST, K_PACKER,
    AB_MIXER, AB_BREAK, AB_OUTLET, AB_MACHINE, AB_DECORATE, V_PLANTATION,
    ST_CARD, ST_DIE, ST_RUNNER, ST_SORTER, ST_TOFROM, ST_TRANSPORT, ST_ABILITY, ST_PICK,
    ST_DISCARD, ST_LOAD, ST_ORDER,
    A_CARD, A_KEEP_FACE, A_RUN, A_CCW, A_TO, A_FROM, A_STOP, A_MIX, A_SELL,
    A_RECRUIT, A_PICK, A_MAKE, A_DECO, A_DECO_ALL, A_DISCARD, A_MOVE, A_MACHINE_FIRST,
    ctz, ring_probe)

# Indices into self.w, in the order of WEIGHTS.
cdef enum:
    W_SUGAR = 0
    W_CACAO = 1
    W_CHOC = 2
    W_COIN = 3
    W_TAKE = 4
    W_ABILITY = 5
    W_RECRUIT_COINS = 6
    W_RECIPE = 7
    W_RECIPE_COST = 8
    W_COLOURED = 9
    W_ICON = 10
    W_PACK = 11
    W_ROLL = 12
    W_HOLD = 13
    W_CHOC_SHARE = 14
    W_DECO_ALL = 15
    W_ENDGAME = 16
    W_PICK = 17            # W_PICK + kind - 1: the six pick_* weights

# What a card changes in the value of the turn it leads to (turn_value): the numbered
# cards, the Temp, the Sorter and the Runner nothing; each of the other four something.
cdef enum:
    CL_PLAIN = 0
    CL_LIFT = 1
    CL_TRUCKER = 2
    CL_MACHINIST = 3
    CL_PACKER = 4
    N_CLASSES = 5


cdef struct Ctx:
    # What every candidate of one decision shares, computed once on first use: a card
    # decision values up to a hundred turns (every die face of a Runner), each of which
    # recomputed the recipe plan, the trucks' room and the goods to ship.
    bint planned
    int want[CHOC + 1]            # plan(): sugar and chocolate the planned recipe uses
    bint turn_ready               # the turn constants below
    int room_max                  # the most room on one truck (0 at least)
    int room_sum                  # room on all trucks (the Trucker's)
    int wh_free                   # free warehouse spaces
    int need                      # Candy Factory: sugar and chocolate the plan lacks
    int ship                      # shippable()
    double per_to                 # value of a good brought in, of one shipped
    double per_from
    unsigned int use_done         # bit 8 * to + ability: use[to][ability] computed
    double use[2][8]              # usable(ability, to)
    unsigned int dir_done[N_CLASSES][2]            # bit number: dir[class][ccw][number] computed
    double dir[N_CLASSES][2][MAX_SPACES]           # dir_value, memoized


# Final: its own calls (the fast path's per-turn helpers) are direct, and inlined.
@cython.final
cdef class ManfrediniHeuristic(Strategy):
    NAME = "heuristic"
    GAMES = ("manfredini",)
    DESCRIPTION = ("values every card, die choice, direction and to/from by the turn it leads to "
                   "(goods carried x their value + a usable space ability); ships chocolate first "
                   "to the coloured trucks, keeps worker icons free, makes the best-value candy")
    WEIGHTS = {
        "sugar_value": 1.0,          # a sugar on a truck
        "cacao_value": 0.3,          # a cacao (it cannot be shipped from the Plantation)
        "chocolate_value": 2.0,      # a chocolate on a truck: chocolate vs sugar
        "coin_value": 1.0,
        "take_value": 1.2,           # a good brought into the warehouse (not yet shipped)
        "ability_value": 1.0,        # a space ability that can be used this turn
        "recruit_min_coins": 1.0,    # when to recruit: coins needed before paying one
        "recipe_points": 1.0,        # recipe preference: weight of the points a use makes
        "recipe_cost": 0.8,          # ... against the goods it consumes
        "coloured_truck": 1.0,       # truck packing: prefer the trucks that score
        "icon_penalty": 1.5,         # truck packing: cost of covering a worker icon
        "pack": 1.0,                 # > 0: stack goods whenever the Packer allows
        "roll_margin": 0.0,          # roll when a fresh face is expected to beat the current by this
        "specialist_hold": 0.5,      # keep specialists for later unless they gain this much
        "chocolate_share": 0.6,      # mix until chocolate is this share of sugar + chocolate
        "decorate_all_min": 2.0,     # pay to decorate all when this many candies are plain
        "endgame_cards": 1.0,        # cards left (hand + deck) at which everything ships
        "pick_lift_operator": 0.9,
        "pick_sorter": 0.5,
        "pick_runner": 1.0,
        "pick_trucker": 0.8,
        "pick_machinist": 0.7,
        "pick_packer": 0.6,
    }
    # Where `chocosim tune` searches each weight: (low, high, scale). Values of goods,
    # coins and picks are relative, so each ranges over a few times its default.
    WEIGHT_RANGES = {
        **{k: (0.0, 4.0, "linear") for k in ("sugar_value", "cacao_value", "chocolate_value",
                                               "coin_value", "take_value", "ability_value",
                                               "recipe_points", "recipe_cost", "coloured_truck",
                                               "icon_penalty")},
        "recruit_min_coins": (0.0, 4.0, "linear"),
        "pack": (-1.0, 1.0, "linear"),
        "roll_margin": (-2.0, 2.0, "linear"),
        "specialist_hold": (0.0, 3.0, "linear"),
        "chocolate_share": (0.2, 0.9, "linear"),
        "decorate_all_min": (1.0, 5.0, "linear"),
        "endgame_cards": (0.0, 4.0, "linear"),
        **{f"pick_{k}": (0.0, 2.0, "linear") for k in ("lift_operator", "sorter", "runner", "trucker",
                                                       "machinist", "packer")},
    }

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        cdef MObs o
        cdef Ctx x
        cdef int i, best = legal[0]
        cdef double v, best_v = -1e300
        (<ManfrediniState>state).observe(seat, &o)
        start(&x)
        for i in range(n):
            v = self.fast_value(&o, &x, legal[i])
            if v > best_v:
                best_v = v
                best = legal[i]
        return best

    cdef double evaluate(self, GameState state, int seat) noexcept nogil:
        # A position: the points it would score now plus the goods still in its
        # warehouse at the values this bot gives them (search bots' cut-off rollouts).
        cdef MObs o
        cdef int g
        cdef double v = state.standing(seat)
        (<ManfrediniState>state).observe(seat, &o)
        for g in range(N_GOODS):
            v += o.goods[seat].wh.n[g] * self.good_value(&o, g)
        return v

    def values(self, GameState state, int seat):
        """[(action, value choose() ranks it by, value of the straightforward
        computation)] for each legal action of `seat`'s decision in `state` (the two
        must be the same float; see the tests)."""
        cdef MObs o
        cdef Ctx x
        cdef int a
        (<ManfrediniState>state).observe(seat, &o)
        start(&x)
        out = []
        for a in (<object>state).legal_actions():
            out.append((a, self.fast_value(&o, &x, a), self.value(&o, a)))
        return out

    # ---- the value of one action ----

    cdef double value(self, const MObs* o, int a) noexcept nogil:
        cdef int step = o.t.step
        cdef int k
        if step == ST_CARD:
            return self.card_value(o, a - A_CARD)
        if step == ST_DIE:
            k = o.t.card - SPEC
            if a == A_KEEP_FACE:
                return self.number_value(o, o.die, k)
            return self.roll_value(o, k) - self.w[W_ROLL]
        if step == ST_RUNNER:
            return self.dir_value(o, (o.t.number + a - A_RUN + o.cfg.spaces) % o.cfg.spaces,
                                  False, K_RUNNER)
        if step == ST_SORTER:
            return self.dir_value(o, o.t.number, a == A_CCW, K_SORTER)
        if step == ST_TOFROM:
            if a == A_TO or a == A_FROM:
                return self.turn_value(o, o.t.number, o.t.ccw, a == A_TO, o.t.card)
            return -1e9          # the heuristic does not call shift changes
        if step == ST_TRANSPORT:
            return 0.0 if a == A_STOP else self.move_value(o, a)
        if step == ST_ABILITY:
            return 0.0 if a == A_STOP else self.ability_value(o, a)
        if step == ST_PICK:
            return self.w[W_PICK + a - A_PICK - 1]
        if step == ST_DISCARD:
            k = a - A_DISCARD
            return -(self.w[W_PICK + k - 1] if k > 0 else 0.0)
        if step == ST_ORDER:
            # The Machinist's candy first at a Decorating Station, so it can be decorated;
            # elsewhere the space's ability first.
            if a == A_MACHINE_FIRST:
                return 1.0 if o.cfg.ability[o.half][o.t.space] == AB_DECORATE else -1.0
            return 0.0
        # ST_LOAD: coloured trucks first, the larger first.
        k = ((a - A_MOVE) >> 1) % N_TRUCKS
        return self.w[W_COLOURED] * o.cfg.truck_coloured[k] + 0.01 * o.cfg.truck_cap[k]

    # ---- the same values, with what a decision's candidates share computed once ----
    #
    # fast_value(o, x, a) == value(o, a), the same float (tests/games/manfredini/
    # test_manfredini_fast.py): every expression below is the reference's, in the same
    # order, with the parts that do not depend on the candidate read from x.

    cdef double fast_value(self, const MObs* o, Ctx* x, int a) noexcept nogil:
        cdef int step = o.t.step
        cdef int k
        if step == ST_CARD:
            return self.fast_card(o, x, a - A_CARD)
        if step == ST_DIE:
            k = o.t.card - SPEC
            if a == A_KEEP_FACE:
                return self.fast_number(o, x, o.die, k)
            return self.fast_roll(o, x, k) - self.w[W_ROLL]
        if step == ST_RUNNER:
            return self.fast_dir(o, x, (o.t.number + a - A_RUN + o.cfg.spaces) % o.cfg.spaces,
                                 False, CL_PLAIN)
        if step == ST_SORTER:
            return self.fast_dir(o, x, o.t.number, a == A_CCW, CL_PLAIN)
        if step == ST_TOFROM:
            if a == A_TO or a == A_FROM:
                return self.fast_turn(o, x, o.t.number, o.t.ccw, a == A_TO, card_class(o.t.card))
            return -1e9
        if step == ST_TRANSPORT:
            if a == A_STOP:
                return 0.0
            if not x.planned:
                self.prepare_plan(o, x)
            return self.move_value_for(o, a, x.want)
        return self.value(o, a)

    cdef double fast_card(self, const MObs* o, Ctx* x, int card) noexcept nogil:
        cdef int k
        if card < SPEC:
            return self.fast_number(o, x, card, -1)
        k = card - SPEC
        cdef double keep = self.fast_number(o, x, o.die, k)
        cdef double roll = self.fast_roll(o, x, k)
        return (keep if keep > roll else roll) - self.w[W_HOLD]

    cdef double fast_roll(self, const MObs* o, Ctx* x, int kind) noexcept nogil:
        # A roll needs the number value of every face: each direction's turn values of
        # the card's class are filled for all numbers at once, and read here.
        cdef int f, d, j, n = o.cfg.spaces, reach = o.cfg.runner_reach
        cdef int cl = card_class(SPEC + kind)
        cdef const double* cw
        cdef const double* cc
        cdef double v, best, total = 0.0
        if x.dir_done[cl][0] != o.cfg.full:
            self.fill_dirs(o, x, False, cl)
        cw = x.dir[cl][0]
        cc = x.dir[cl][1]
        if kind == K_RUNNER:
            for f in range(n):
                best = -1e9
                for d in range(-reach, reach + 1):
                    j = f + d
                    if j < 0:
                        j += n
                    elif j >= n:
                        j -= n
                    v = cw[j]
                    if v > best:
                        best = v
                total += best
        elif kind == K_SORTER:
            if x.dir_done[cl][1] != o.cfg.full:
                self.fill_dirs(o, x, True, cl)
            for f in range(n):
                best = cw[f]
                if cc[f] > best:
                    best = cc[f]
                total += best
        else:
            for f in range(n):
                total += cw[f]
        return total / n

    cdef void fill_dirs(self, const MObs* o, Ctx* x, bint ccw, int cl) noexcept nogil:
        # fast_dir of every number not yet known, for one direction and card class.
        cdef int f
        cdef double to, fr
        for f in range(o.cfg.spaces):
            if not (x.dir_done[cl][ccw] >> f) & 1:
                to = self.fast_turn(o, x, f, ccw, True, cl)
                fr = self.fast_turn(o, x, f, ccw, False, cl)
                x.dir[cl][ccw][f] = to if to > fr else fr
        x.dir_done[cl][ccw] = o.cfg.full

    cdef double fast_number(self, const MObs* o, Ctx* x, int number, int kind) noexcept nogil:
        cdef int d, reach = o.cfg.runner_reach
        cdef int cl = card_class(SPEC + kind if kind >= 0 else number)
        cdef double v, best
        if kind == K_RUNNER:
            best = -1e9
            for d in range(-reach, reach + 1):
                v = self.fast_dir(o, x, (number + d + o.cfg.spaces) % o.cfg.spaces, False, cl)
                if v > best:
                    best = v
            return best
        best = self.fast_dir(o, x, number, False, cl)
        if kind == K_SORTER:
            v = self.fast_dir(o, x, number, True, cl)
            if v > best:
                best = v
        return best

    cdef double fast_dir(self, const MObs* o, Ctx* x, int number, bint ccw, int cl) noexcept nogil:
        cdef double to, fr
        if (x.dir_done[cl][ccw] >> number) & 1:
            return x.dir[cl][ccw][number]
        to = self.fast_turn(o, x, number, ccw, True, cl)
        fr = self.fast_turn(o, x, number, ccw, False, cl)
        x.dir[cl][ccw][number] = to if to > fr else fr
        x.dir_done[cl][ccw] |= 1u << number
        return x.dir[cl][ccw][number]

    cdef inline double fast_turn(self, const MObs* o, Ctx* x, int number, bint ccw, bint to, int cl) noexcept nogil:
        cdef const MConfig* c = o.cfg
        cdef int tried = 0, cap, space, best_room, carry, ab
        cdef double v, per, u, m
        space = probe_scan(o, number, ccw, to, &tried)
        if space < 0:
            return -1e9
        if not x.turn_ready:
            self.prepare_turn(o, x)
        cap = tried + (c.lift_bonus if cl == CL_LIFT else 0)
        if to:
            carry = x.wh_free + (cap if cl == CL_PACKER else 0)
            if o.half == 1 and x.need < carry:
                carry = x.need
            per = x.per_to
        else:
            best_room = x.room_sum if cl == CL_TRUCKER else x.room_max
            if cl == CL_PACKER:
                best_room += cap
            carry = x.ship if x.ship < best_room else best_room
            per = x.per_from
        if carry > cap:
            carry = cap
        v = carry * per
        ab = c.ability[o.half][space]
        u = self.fast_usable(o, x, ab, to)
        if cl == CL_MACHINIST:
            m = self.fast_usable(o, x, AB_MIXER if o.half == 0 else AB_MACHINE, to)
            if c.machinist_choice and m >= 2.0 and ab == AB_DECORATE:
                u = 1.0
            v += self.w[W_ABILITY] * m
        return v + self.w[W_ABILITY] * u

    cdef inline double fast_usable(self, const MObs* o, Ctx* x, int ability, bint to) noexcept nogil:
        cdef unsigned int bit = 1u << (8 * to + ability)
        if not x.use_done & bit:
            x.use[to][ability] = self.usable_by_bits(o, ability, to)
            x.use_done |= bit
        return x.use[to][ability]

    cdef double usable_by_bits(self, const MObs* o, int ability, bint to) noexcept nogil:
        # usable(), with the recipes in play and the candy in the warehouse read from
        # their bit sets (Box.mask: bit g iff there is a good g).
        cdef const Box* wh = &o.goods[o.seat].wh
        cdef unsigned int bits
        cdef int r
        if ability == AB_MACHINE:
            bits = o.in_play
            while bits:
                r = ctz(bits)
                bits &= bits - 1
                if o.candy_supply[r] > 0 and \
                        wh.n[SUGAR] >= o.cfg.cost_sugar[r] and wh.n[CHOC] >= o.cfg.cost_choc[r]:
                    return 2.0
            return 0.5 if to else 0.0
        if ability == AB_DECORATE:
            return 1.0 if (wh.mask >> PLAIN) & ((1u << N_RECIPES) - 1) else 0.0
        return self.usable(o, ability, to)

    cdef void prepare_plan(self, const MObs* o, Ctx* x) noexcept nogil:
        # plan(), visiting only the recipes in play (in the same order).
        cdef const Goods* me = &o.goods[o.seat]
        cdef const MConfig* c = o.cfg
        cdef int t, r, k, made, best = -1, best_k = 0
        cdef int sugar = me.wh.n[SUGAR], choc = me.wh.n[CHOC]
        cdef unsigned int bits = o.in_play
        cdef double v, best_v = 0.0
        x.planned = True
        x.want[SUGAR] = 0
        x.want[CHOC] = 0
        if o.half == 0:
            return
        for t in range(N_TRUCKS):
            sugar += me.truck[t].n[SUGAR]
            choc += me.truck[t].n[CHOC]
        while bits:
            r = ctz(bits)
            bits &= bits - 1
            if o.candy_supply[r] == 0:
                continue
            k = c.uses[r]
            if c.cost_sugar[r] and sugar // c.cost_sugar[r] < k:
                k = sugar // c.cost_sugar[r]
            if c.cost_choc[r] and choc // c.cost_choc[r] < k:
                k = choc // c.cost_choc[r]
            made = k * c.candies[r]
            if made > o.candy_supply[r]:
                made = o.candy_supply[r]
            v = (self.w[W_RECIPE] * made * c.points[r]
                 - self.w[W_RECIPE_COST] * k * (c.cost_sugar[r] + c.cost_choc[r]))
            if k > 0 and v > best_v:
                best, best_v, best_k = r, v, k
        if best >= 0:
            x.want[SUGAR] = c.cost_sugar[best] * best_k
            x.want[CHOC] = c.cost_choc[best] * best_k

    cdef void prepare_turn(self, const MObs* o, Ctx* x) noexcept nogil:
        # turn_value's parts that depend on neither the card nor the space.
        cdef const Goods* me = &o.goods[o.seat]
        cdef const MConfig* c = o.cfg
        cdef int t, g, room
        cdef unsigned int bits
        cdef bint end = self.endgame(o)
        cdef double per
        if not x.planned:
            self.prepare_plan(o, x)
        x.room_max = 0
        x.room_sum = 0
        for t in range(N_TRUCKS):
            room = c.truck_cap[t] - me.truck[t].used
            x.room_sum += room
            if room > x.room_max:
                x.room_max = room
        x.wh_free = c.warehouse - me.wh.used
        x.need = 0
        for g in range(SUGAR, CHOC + 1):
            if g != CACAO and x.want[g] > me.wh.n[g]:
                x.need += x.want[g] - me.wh.n[g]
        if o.half == 0:
            x.ship = self.shippable(o, x.want)
        else:
            # shippable(): the warehouse's goods counted over its bit set.
            x.ship = 0
            bits = me.wh.mask
            while bits:
                g = ctz(bits)
                bits &= bits - 1
                x.ship += me.wh.n[g]
            if not end:
                for g in range(SUGAR, CHOC + 1):
                    if g != CACAO:
                        x.ship -= me.wh.n[g] if me.wh.n[g] < x.want[g] else x.want[g]
        x.per_to = 0.0 if end else self.w[W_TAKE]
        per = self.w[W_CHOC] if me.wh.n[CHOC] > 0 or o.half == 1 else self.w[W_SUGAR]
        if end:
            per *= 2.0
        x.per_from = per
        x.turn_ready = True

    # ---- cards, die and direction: the turn they lead to ----

    cdef double card_value(self, const MObs* o, int card) noexcept nogil:
        cdef int k
        if card < SPEC:
            return self.number_value(o, card, -1)
        k = card - SPEC
        cdef double keep = self.number_value(o, o.die, k)
        cdef double roll = self.roll_value(o, k)
        return (keep if keep > roll else roll) - self.w[W_HOLD]

    cdef double roll_value(self, const MObs* o, int kind) noexcept nogil:
        cdef int f
        cdef double total = 0.0
        for f in range(o.cfg.spaces):
            total += self.number_value(o, f, kind)
        return total / o.cfg.spaces

    cdef double number_value(self, const MObs* o, int number, int kind) noexcept nogil:
        # The best this number can do, with what the specialist `kind` adds.
        cdef int d, reach = o.cfg.runner_reach
        cdef double v, best
        if kind == K_RUNNER:
            best = -1e9
            for d in range(-reach, reach + 1):
                v = self.dir_value(o, (number + d + o.cfg.spaces) % o.cfg.spaces, False, kind)
                if v > best:
                    best = v
            return best
        best = self.dir_value(o, number, False, kind)
        if kind == K_SORTER:
            v = self.dir_value(o, number, True, kind)
            if v > best:
                best = v
        return best

    cdef double dir_value(self, const MObs* o, int number, bint ccw, int kind) noexcept nogil:
        cdef int card = SPEC + kind if kind >= 0 else number
        cdef double to = self.turn_value(o, number, ccw, True, card)
        cdef double fr = self.turn_value(o, number, ccw, False, card)
        return to if to > fr else fr

    cdef double turn_value(self, const MObs* o, int number, bint ccw, bint to, int card) noexcept nogil:
        cdef const Goods* me = &o.goods[o.seat]
        cdef const MConfig* c = o.cfg
        cdef int tried = 0, cap, space, t, room, best_room = 0, carry = 0, g
        cdef int want[N_GOODS]
        cdef double v, per, u, m
        want[SUGAR] = 0
        want[CHOC] = 0
        space = probe(o, number, ccw, to, &tried)
        if space < 0:
            return -1e9
        cap = tried + (c.lift_bonus if card == SPEC + K_LIFT else 0)
        for t in range(N_TRUCKS):
            room = c.truck_cap[t] - me.truck[t].used
            if card == SPEC + K_TRUCKER:
                best_room += room
            elif room > best_room:
                best_room = room
        if card == SPEC + K_PACKER:
            best_room += cap
        if o.half == 1:
            self.plan(o, want)
        if to:
            room = c.warehouse - me.wh.used + (cap if card == SPEC + K_PACKER else 0)
            if o.half == 0:
                carry = room
            else:
                # Sugar and chocolate the planned recipe still lacks in the warehouse.
                for g in range(SUGAR, CHOC + 1):
                    if g != CACAO and want[g] > me.wh.n[g]:
                        carry += want[g] - me.wh.n[g]
                if carry > room:
                    carry = room
            # On the last card nothing brought in can be shipped any more.
            per = 0.0 if self.endgame(o) else self.w[W_TAKE]
        else:
            carry = self.shippable(o, want)
            if carry > best_room:
                carry = best_room
            per = self.w[W_CHOC] if me.wh.n[CHOC] > 0 or o.half == 1 else self.w[W_SUGAR]
            if self.endgame(o):
                per *= 2.0
        if carry > cap:
            carry = cap
        v = carry * per
        u = self.usable(o, c.ability[o.half][space], to)
        if card == SPEC + K_MACHINIST:
            m = self.usable(o, AB_MIXER if o.half == 0 else AB_MACHINE, to)
            # Candy the machine makes first can then be decorated on the space.
            if c.machinist_choice and m >= 2.0 and c.ability[o.half][space] == AB_DECORATE:
                u = 1.0
            v += self.w[W_ABILITY] * m
        return v + self.w[W_ABILITY] * u

    cdef bint endgame(self, const MObs* o) noexcept nogil:
        cdef const Goods* me = &o.goods[o.seat]
        return me.hand_len + me.deck_len <= self.w[W_ENDGAME]

    cdef int shippable(self, const MObs* o, const int* want) noexcept nogil:
        # Goods the bot would load now: the Plantation's sugar and chocolate; in the Candy
        # Factory candy and what the planned recipe does not need (all on the last card).
        cdef const Box* wh = &o.goods[o.seat].wh
        cdef int g, n
        if o.half == 0:
            return wh.n[SUGAR] + wh.n[CHOC]
        n = box_count(wh)
        if not self.endgame(o):
            for g in range(SUGAR, CHOC + 1):
                if g != CACAO:
                    n -= wh.n[g] if wh.n[g] < want[g] else want[g]
        return n

    cdef double usable(self, const MObs* o, int ability, bint to) noexcept nogil:
        # 1 if the ability could do something useful now (or, going in, once goods arrive).
        cdef const Goods* me = &o.goods[o.seat]
        cdef const Box* wh = &me.wh
        cdef int r, g
        if ability == AB_MIXER:
            return 1.0 if (wh.n[SUGAR] > 0 or to) and (wh.n[CACAO] > 0 or to) else 0.0
        if ability == AB_BREAK:
            return 1.0 if me.coins >= self.w[W_RECRUIT_COINS] and o.spec_len > 0 else 0.0
        if ability == AB_OUTLET:
            if o.half == 0:
                return 1.0 if wh.n[CACAO] > wh.n[SUGAR] else 0.0
            return 0.5 if wh.n[CACAO] > 0 else 0.0
        if ability == AB_MACHINE:
            for r in range(N_RECIPES):
                if (o.in_play >> r) & 1 and o.candy_supply[r] > 0 and \
                        wh.n[SUGAR] >= o.cfg.cost_sugar[r] and wh.n[CHOC] >= o.cfg.cost_choc[r]:
                    return 2.0
            return 0.5 if to else 0.0
        if ability == AB_DECORATE:
            for r in range(N_RECIPES):
                if wh.n[PLAIN + r] > 0:
                    return 1.0
        return 0.0

    # ---- goods ----

    cdef double good_value(self, const MObs* o, int g) noexcept nogil:
        if g == SUGAR:
            return self.w[W_SUGAR]
        if g == CACAO:
            return self.w[W_CACAO]
        if g == CHOC:
            return self.w[W_CHOC]
        if g < DECO:
            return o.cfg.points[g - PLAIN]
        return o.cfg.points[g - DECO] + o.cfg.sc_deco

    cdef int plan(self, const MObs* o, int* want) noexcept nogil:
        # The recipe worth most for the sugar and chocolate this seat owns (warehouse and
        # trucks), and in want[SUGAR], want[CHOC] what its uses this visit consume.
        cdef const Goods* me = &o.goods[o.seat]
        cdef const MConfig* c = o.cfg
        cdef int t, r, k, made, best = -1, best_k = 0
        cdef int sugar = me.wh.n[SUGAR], choc = me.wh.n[CHOC]
        cdef double v, best_v = 0.0
        for t in range(N_TRUCKS):
            sugar += me.truck[t].n[SUGAR]
            choc += me.truck[t].n[CHOC]
        for r in range(N_RECIPES):
            if not (o.in_play >> r) & 1 or o.candy_supply[r] == 0:
                continue
            k = c.uses[r]
            if c.cost_sugar[r] and sugar // c.cost_sugar[r] < k:
                k = sugar // c.cost_sugar[r]
            if c.cost_choc[r] and choc // c.cost_choc[r] < k:
                k = choc // c.cost_choc[r]
            made = k * c.candies[r]
            if made > o.candy_supply[r]:
                made = o.candy_supply[r]
            v = (self.w[W_RECIPE] * made * c.points[r]
                 - self.w[W_RECIPE_COST] * k * (c.cost_sugar[r] + c.cost_choc[r]))
            if k > 0 and v > best_v:
                best, best_v, best_k = r, v, k
        want[SUGAR] = c.cost_sugar[best] * best_k if best >= 0 else 0
        want[CHOC] = c.cost_choc[best] * best_k if best >= 0 else 0
        return best

    cdef double move_value(self, const MObs* o, int a) noexcept nogil:
        cdef int want[N_GOODS]
        want[SUGAR] = 0
        want[CHOC] = 0
        if o.half == 1:
            self.plan(o, want)
        return self.move_value_for(o, a, want)

    cdef double move_value_for(self, const MObs* o, int a, const int* want) noexcept nogil:
        # move_value with the plan's want (sugar and chocolate) given.
        cdef const Goods* me = &o.goods[o.seat]
        cdef const MConfig* c = o.cfg
        cdef int code = a - A_MOVE
        cdef bint stacked = code & 1
        cdef int t = (code >> 1) % N_TRUCKS
        cdef int g = (code >> 1) // N_TRUCKS
        cdef int free
        cdef double v, bonus = self.w[W_PACK] * 0.01 if stacked else 0.0
        if o.half == 0 and o.t.to:
            # Balance sugar and cacao: the mixer needs one of each.
            if g == SUGAR:
                return 1.0 + bonus + (0.1 if me.wh.n[SUGAR] <= me.wh.n[CACAO] else 0.0)
            return 1.0 + bonus + (0.1 if me.wh.n[CACAO] < me.wh.n[SUGAR] else 0.0)
        if o.t.to:
            # Candy Factory: bring what the planned recipe needs, first from trucks that
            # do not score; leave the rest where it scores.
            if (g == SUGAR or g == CHOC) and me.wh.n[g] < want[g]:
                return 1.0 + (0.0 if c.truck_coloured[t] else 0.5) + bonus
            return -1.0 if c.truck_coloured[t] else 0.2 + bonus
        # Loading a truck.
        if o.half == 0 and g == SUGAR and not self.endgame(o) and me.wh.n[SUGAR] <= me.wh.n[CACAO]:
            return -1.0      # this sugar still has a cacao to mix with
        if o.half == 1 and (g == SUGAR or g == CHOC) and not self.endgame(o) and me.wh.n[g] <= want[g]:
            return -1.0      # keep it for the Candy Machine
        v = self.good_value(o, g) + bonus
        if c.variant != V_PLANTATION:
            v += self.w[W_COLOURED] * c.truck_coloured[t]
            free = c.truck_cap[t] - me.truck[t].used
            if o.half == 0 and not stacked and free <= c.truck_icons[t]:
                v -= self.w[W_ICON]
        v += 0.001 * (c.truck_cap[t] - me.truck[t].used)
        return v if v > 0.0 else 0.01

    # ---- abilities ----

    cdef double ability_value(self, const MObs* o, int a) noexcept nogil:
        cdef const Goods* me = &o.goods[o.seat]
        cdef const Box* wh = &me.wh
        cdef const MConfig* c = o.cfg
        cdef int r, g, plain = 0, sugar, choc
        cdef double share
        if a == A_MIX:
            sugar = wh.n[SUGAR]
            choc = wh.n[CHOC]
            for g in range(N_TRUCKS):
                sugar += me.truck[g].n[SUGAR]
                choc += me.truck[g].n[CHOC]
            share = choc / <double>(sugar + choc) if sugar + choc > 0 else 0.0
            return 1.0 if share < self.w[W_CHOC_SHARE] or \
                self.w[W_CHOC] > self.w[W_SUGAR] + self.w[W_CACAO] and c.variant == V_PLANTATION else -1.0
        if A_SELL <= a < A_SELL + N_GOODS:
            g = a - A_SELL
            if g == CACAO and (o.half == 1 or wh.n[CACAO] > wh.n[SUGAR] or self.endgame(o)):
                return c.outlet_coins[o.half] * self.w[W_COIN] - self.w[W_CACAO]
            return -1.0
        if a == A_RECRUIT:
            return 1.0 if me.coins >= self.w[W_RECRUIT_COINS] and not self.endgame(o) else -1.0
        if A_MAKE <= a < A_MAKE + N_RECIPES:
            r = a - A_MAKE
            return (self.w[W_RECIPE] * c.candies[r] * c.points[r]
                    - self.w[W_RECIPE_COST] * (c.cost_sugar[r] * self.w[W_SUGAR] + c.cost_choc[r] * self.w[W_CHOC] * 0.5))
        if A_DECO <= a < A_DECO + N_RECIPES:
            return 1.0 + 0.01 * c.points[a - A_DECO]
        if a == A_DECO_ALL:
            for r in range(N_RECIPES):
                plain += wh.n[PLAIN + r]
            return 2.0 if plain >= self.w[W_DECO_ALL] else -1.0
        return 0.0


cdef int probe(const MObs* o, int number, bint ccw, bint to, int* tried) noexcept nogil:
    # The space a pawn would end on and the spaces tried (ManfrediniState.probe, on the
    # public board).
    cdef int i, sp = number, n = o.cfg.spaces, step = -1 if ccw else 1
    cdef unsigned int want = o.board if to else ~o.board
    if to and o.pawn_pile == 0:
        return -1
    for i in range(n):
        if not (want >> sp) & 1:
            tried[0] = i + 1
            return sp
        sp = (sp + step + n) % n
    return -1



cdef inline void start(Ctx* x) noexcept nogil:
    # A new decision: nothing shared computed yet.
    x.planned = False
    x.turn_ready = False
    x.use_done = 0
    memset(x.dir_done, 0, sizeof(x.dir_done))


cdef inline int card_class(int card) noexcept nogil:
    if card == SPEC + K_LIFT:
        return CL_LIFT
    if card == SPEC + K_TRUCKER:
        return CL_TRUCKER
    if card == SPEC + K_MACHINIST:
        return CL_MACHINIST
    if card == SPEC + K_PACKER:
        return CL_PACKER
    return CL_PLAIN


cdef inline int probe_scan(const MObs* o, int number, bint ccw, bint to, int* tried) noexcept nogil:
    # probe() by the rules' bit scan (as ManfrediniState.probe).
    if to and o.pawn_pile == 0:
        return -1
    return ring_probe((~o.board if to else o.board) & o.cfg.full, o.cfg.full, o.cfg.spaces, number, ccw, tried)

cdef inline int box_count(const Box* b) noexcept nogil:
    cdef int g, n = 0
    for g in range(N_GOODS):
        n += b.n[g]
    return n


STRATEGIES = (ManfrediniHeuristic,)
