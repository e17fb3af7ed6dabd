# cython: language_level=3
"""Chocolate Factory (Dan Manfredini, v1.0.7): the rules engine.

A turn is a chain of small decisions (Pending.step): play a card; for a specialist keep
the die face or roll, then the Runner's change or the Sorter's direction; to or from the
factory (or a shift change first); then, going to the factory, move goods one at a time,
use the space ability and the Machinist's machine (in the order the player chooses);
going from it, the two abilities, then the goods. A decision whose only legal action is "stop" is taken by the engine, so
every decision a bot sees is a real choice. See README.md for every rules point decided.
"""
cimport cython
from libc.string cimport memset, memcpy, memmove, memcmp
from libc.stdint cimport uint64_t

from simcore.rng cimport Rng, rng_seed, rng_next, rng_below, rng_uniform, shuffle_i8
from simcore.state cimport GameState, MAX_PLAYERS
from simcore.seen cimport seen_move, seen_one, seen_all, seen_key
from simcore.batchjob cimport BatchJob
from simcore.strategy cimport Lineup

# What the outcomes a seat sees are, in its Seen record (simcore/seen.pxd): kind + value.
cdef enum:
    SEEN_DRAW = 1 << 16     # + the card drawn into the seat's hand
    SEEN_LOOK = 2 << 16     # + a specialist looked at in the Break Room
    SEEN_DIE = 3 << 16      # + a die rolled by a specialist's player
    SEEN_START = 4 << 16    # + start player * 64 + the die: a half's opening rolls

from pathlib import Path

from simcore.games.manfredini.params import (SPECIALISTS, RECIPES, TRUCKS, VARIANTS,
                                             PLANTATION_ABILITIES, CANDY_ABILITIES, ManfrediniParams)
from simcore.meta import FeatureRoles

__all__ = ["ManfrediniState", "GOODS", "ACTION_BASES"]

GOODS = (("sugar", "cacao", "chocolate") + RECIPES
         + tuple(f"decorated_{r}" for r in RECIPES))
ABILITY_NAMES = ("none", "mixer", "break_room", "outlet", "candy_machine", "decorating")
STEP_NAMES = ("card", "die", "runner", "sorter", "to_from", "transport", "ability", "pick",
              "discard", "load", "over", "order")
USES = ("mixer", "outlet_plantation", "break_room", "candy_machine", "decorating",
        "outlet_candy", "shift_change", "packer_stacks")
ACTION_BASES = {
    "card": A_CARD, "keep_face": A_KEEP_FACE, "roll": A_ROLL, "run": A_RUN, "cw": A_CW,
    "ccw": A_CCW, "to": A_TO, "from": A_FROM, "shift_add": A_SHIFT_ADD,
    "shift_remove": A_SHIFT_REMOVE, "stop": A_STOP, "mix": A_MIX, "sell": A_SELL,
    "recruit": A_RECRUIT, "pick": A_PICK, "make": A_MAKE, "deco": A_DECO,
    "deco_all": A_DECO_ALL, "discard": A_DISCARD, "move": A_MOVE,
    "space_first": A_SPACE_FIRST, "machine_first": A_MACHINE_FIRST,
}

# Components (ManfrediniState.COMPONENTS) after the six specialists.
cdef enum:
    C_MIXER = N_KINDS - 1
    C_BREAK
    C_OUTLET_PLANTATION
    C_DECORATE
    C_OUTLET_CANDY
    C_SHIFT
    C_RECIPE

# Machine ability of each half, for the Machinist.
cdef int[2] MACHINE_OF = [AB_MIXER, AB_MACHINE]
# The one action of each Plantation ability (by Ability).
cdef int[4] PLANTATION_ACTION = [A_STOP, A_MIX, A_RECRUIT, A_SELL + CACAO]
# The turn in progress as a turn begins: copied whole, a few vector moves where setting
# its fields one by one took a store each.
cdef Pending NEW_TURN
memset(&NEW_TURN, 0, sizeof(Pending))
NEW_TURN.step = ST_CARD
NEW_TURN.card = -1
NEW_TURN.space = -1
NEW_TURN.lock_good = -1
NEW_TURN.lock_truck = -1
NEW_TURN.stage = -1
NEW_TURN.ability = AB_NONE
NEW_TURN.recipe = -1


# ---- boxes (warehouse, trucks) ----

cdef inline int singles(const Box* b, int g) noexcept nogil:
    return b.n[g] - 2 * b.stacks[g]


cdef inline void take(Box* b, int g) noexcept nogil:
    if singles(b, g) > 0:
        b.used -= 1
    else:
        b.stacks[g] -= 1
    b.n[g] -= 1
    if b.n[g] == 0:
        b.mask &= ~(1u << g)


cdef inline void put(Box* b, int g, bint stacked) noexcept nogil:
    b.n[g] += 1
    b.mask |= 1u << g
    if stacked:
        b.stacks[g] += 1
    else:
        b.used += 1


cdef inline int box_total(const Box* b) noexcept nogil:
    cdef int g, n = 0
    for g in range(N_GOODS):
        n += b.n[g]
    return n


cdef extern from *:
    int popcount "__builtin_popcount"(unsigned int x) noexcept nogil


cdef inline int move_action(int g, int truck, bint stacked) noexcept nogil:
    return A_MOVE + (g * N_TRUCKS + truck) * 2 + stacked


cdef inline int truck_moves(unsigned int goods, int truck, bint room, bint packer,
                            const Box* dst, int* out) noexcept nogil:
    # The moves of each good of `goods` to or from `truck` (see gen_moves): unstacked if
    # the destination `dst` has room, stacked (Packer) onto a single identical good there.
    cdef int g, n = 0
    while goods:
        g = ctz(goods)
        goods &= goods - 1
        out[n] = move_action(g, truck, False)
        n += room
        if packer:
            out[n] = move_action(g, truck, True)
            n += singles(dst, g) > 0
    return n


cdef inline void sort_small(signed char* a, int n) noexcept nogil:
    # Counting sort of card ids or specialist kinds (all below N_CARD_IDS).
    cdef int count[N_CARD_IDS]
    cdef int i, k, j = 0
    memset(count, 0, sizeof(count))
    for i in range(n):
        count[a[i]] += 1
    for k in range(N_CARD_IDS):
        for i in range(count[k]):
            a[j] = k
            j += 1


# ---- scoring ----

cdef inline double binom(int n, int k) noexcept nogil:
    # n choose k as a double (0 outside 0 <= k <= n); n is at most a deck.
    cdef double r = 1.0
    cdef int i
    if k < 0 or k > n:
        return 0.0
    for i in range(k):
        r = r * (n - i) / (i + 1)
    return r


cdef int man_score(const MConfig* c, const Goods* g) noexcept nogil:
    cdef int t, k, total = 0
    cdef unsigned int bits, types = 0
    cdef const Box* b
    if c.variant == V_PLANTATION:
        # Every truck scores; only sugar and chocolate can be shipped there.
        for t in range(N_TRUCKS):
            total += g.truck[t].n[CHOC] * c.po_choc + g.truck[t].n[SUGAR] * c.po_sugar
        return total + g.coins * c.po_coin
    # Only the goods present (the box masks) are visited.
    for t in range(N_TRUCKS):
        if c.truck_coloured[t]:
            b = &g.truck[t]
            types |= b.mask
            bits = b.mask
            while bits:
                k = ctz(bits)
                bits &= bits - 1
                total += b.n[k] * c.good_points[k]
    # One bonus per distinct type; plain and decorated candy of a recipe are one type.
    total += c.sc_type * (popcount(types & ((1u << PLAIN) - 1))
                          + popcount(((types >> PLAIN) | (types >> DECO)) & ((1u << N_RECIPES) - 1)))
    return total + g.coins * c.sc_coin


cdef int man_icons(const MConfig* c, const Goods* g) noexcept nogil:
    cdef int t, free, n = 0
    for t in range(N_TRUCKS):
        free = c.truck_cap[t] - g.truck[t].used
        n += free if free < c.truck_icons[t] else c.truck_icons[t]
    return n


cdef int fill_box(Box* b, spec, int cap, str where) except -1:
    # A hand-built warehouse or truck: {good: count, "stacks": {good: pairs}}.
    spec = dict(spec or {})
    stacks = spec.pop("stacks", {})
    memset(b, 0, sizeof(Box))
    for name, n in spec.items():
        b.n[GOODS.index(name)] = n
    for name, n in stacks.items():
        b.stacks[GOODS.index(name)] = n
    for g in range(N_GOODS):
        b.used += b.n[g] - b.stacks[g]
        if b.n[g]:
            b.mask |= 1u << g
    if b.used > cap:
        raise ValueError(f"{where} holds {b.used} spaces of goods but has {cap}")
    return 0


ctypedef fused Game:
    ManfrediniState
include "simcore/loop.pxi"


@cython.final
cdef class ManfrediniState(GameState):
    """Chocolate Factory (Manfredini), 2 to 4 players; variants full, plantation, candy."""

    NAME = "manfredini"
    TITLE = "Chocolate Factory (Manfredini)"
    PLAYERS = (2, 4)
    PARAMS = ManfrediniParams
    DEFAULTS = Path(__file__).parent / "data" / "rules.toml"
    FEATURE_ROLES = FeatureRoles(
        outcomes=("scored_*", "coins", "unscored_goods"),  # the score, and its tie-breakers
        behaviours=("recruited_*", "kept_*", "played_*", "used_*", "seat_turns"),
    )
    # None: no amount of the rules depends on turn order (README, "Turn order").
    POSITION_KNOBS = {}
    # The most points, then the most coins, then the most goods left in the other trucks
    # and the warehouse, then a shared victory.
    TIE_BREAKS = ("coins", "unscored_goods")
    END_REASONS = ("scoring",)
    # What restricted play can forbid (action_component): the six specialists of the
    # deck (playing or recruiting one), the space abilities and the shift change (using
    # them), and the recipes (making one). The Temp is every player's start card.
    COMPONENTS = (tuple(SPECIALISTS[1:])
                  + ("mixer", "break_room", "outlet_plantation", "decorating", "outlet_candy",
                     "shift_change")
                  + tuple(RECIPES))
    INVARIANTS = (
        "every sugar, cacao/chocolate, coin, candy and pawn token is in exactly one place",
        "warehouses and trucks: spaces used = goods - stacks, within capacity",
        "every worker and specialist card is in exactly one place",
        "the seat to move is a player while the game runs",
        "every deck and hand is empty at the end of each half",
        "the legal list kept is the current decision's, and never stop alone",
        "each seat's knowledge groups count the cards they hold, their known kinds among them",
    )

    def __init__(self, params):
        cdef int k, r, t, n
        cdef MConfig* c = &self.cfg
        self.params = params
        memset(&self.cfg, 0, sizeof(MConfig))
        c.n_players = params.players
        c.variant = VARIANTS.index(params.variant)
        c.hand_size = params.hand_size
        c.warehouse = params.warehouse
        c.shift_cost = params.shift_change_cost
        c.lift_bonus = params.lift_bonus
        c.runner_reach = params.runner_reach
        c.machinist_choice = params.machinist_order == "choice"
        c.recipe_per_turn = params.candy.recipe_uses == "per_turn"
        c.shift_ability = params.shift_change_ability
        c.spaces = params.factory.spaces
        c.pawns = params.factory.pawns
        c.full = (1u << c.spaces) - 1
        for k in range(c.spaces):
            c.ability[0][k] = (AB_MIXER, AB_BREAK, AB_OUTLET)[
                PLANTATION_ABILITIES.index(params.factory.plantation[k])]
            c.ability[1][k] = (AB_MACHINE, AB_DECORATE, AB_OUTLET)[
                CANDY_ABILITIES.index(params.factory.candy[k])]
        for t, name in enumerate(TRUCKS):
            truck = getattr(params.trucks, name)
            c.truck_cap[t] = truck.capacity
            c.truck_icons[t] = truck.icons
            c.truck_coloured[t] = truck.coloured
            if truck.capacity > 0:
                c.truck_bits |= 1u << t
        n = 0
        for k in range(1, N_KINDS):
            for _ in range(getattr(params.specialists, SPECIALISTS[k])):
                c.spec_cards[n] = k
                n += 1
            c.spec_total[k] = getattr(params.specialists, SPECIALISTS[k])
        c.n_spec = n
        c.temp_cards = params.setup.temp_cards
        # Temps exist only where the Plantation Factory is played (candy-only deals
        # specialists from the deck instead).
        c.spec_total[<int>K_TEMP] = 0 if c.variant == V_CANDY else c.temp_cards * c.n_players
        for r, name in enumerate(RECIPES):
            rec = getattr(params.recipes, name)
            c.cost_sugar[r] = rec.sugar
            c.cost_choc[r] = rec.chocolate
            c.candies[r] = rec.candies
            c.uses[r] = rec.uses
            c.points[r] = rec.points
        c.supply_sugar = params.supply.sugar
        c.supply_cacao = params.supply.cacao
        c.supply_coins = params.supply.coins
        c.candy_tokens = params.supply.candy_per_recipe
        c.start_sugar = params.setup.sugar
        c.start_cacao = params.setup.cacao
        c.start_coins = params.setup.coins
        c.recipes_drawn = params.setup.recipes_drawn[c.n_players - 2]
        c.outlet_coins[0] = params.plantation.outlet_coins
        c.outlet_coins[1] = params.candy.outlet_coins
        c.break_cost = params.plantation.break_room_cost
        c.break_look = params.plantation.break_room_look
        c.deco_all_cost = params.candy.decorate_all_cost
        c.sc_good = params.scoring.good
        c.sc_deco = params.scoring.decorated
        c.sc_coin = params.scoring.coin
        c.sc_type = params.scoring.distinct_type
        for k in range(PLAIN):
            c.good_points[k] = c.sc_good
        for r in range(N_RECIPES):
            c.good_points[PLAIN + r] = c.points[r]
            c.good_points[DECO + r] = c.points[r] + c.sc_deco
        c.po_choc = params.plantation_only.chocolate
        c.po_sugar = params.plantation_only.sugar
        c.po_coin = params.plantation_only.coin
        c.co_specs = params.candy_only.specialists
        c.co_sugar = params.candy_only.sugar
        c.co_choc = params.candy_only.chocolate
        c.co_coins = params.candy_only.coins
        c.co_hand_first = not params.candy_only.specialists_in_opening_hand
        for k, v in enumerate(params.compensation.by_position(c.n_players)):
            c.komi[k] = v
        self.n_players = c.n_players
        self.n_features = len(self._feature_names())
        self.n_interim = 2 if c.variant == V_FULL else 1
        self.kept_legal = self.s.legal
        self.kept_n_legal = &self.s.n_legal
        self.reset(0)

    cdef int play_batch(self, object lineup, BatchJob* job) except -1 nogil:
        return play_games(self, <Lineup>lineup, job)

    cdef int play_out(self, Rng* rng, int depth) except -2 nogil:
        return play_out_uniform(self, rng, depth)

    # ---- setup ----

    cdef void reset(self, uint64_t seed) noexcept nogil:
        memset(&self.s, 0, sizeof(Man))
        rng_seed(&self.s.rng, seed)
        self.setup()

    cdef void setup(self) noexcept nogil:
        cdef MConfig* c = &self.cfg
        cdef signed char order[N_RECIPES]
        cdef int p, r, i, k
        self.s.sugar_pile = c.supply_sugar
        self.s.cacao_pile = c.supply_cacao
        self.s.coin_pile = c.supply_coins
        for r in range(N_RECIPES):
            order[r] = r
        shuffle_i8(&self.s.rng, order, N_RECIPES)
        for i in range(c.recipes_drawn):
            self.s.in_play |= 1u << order[i]
            self.s.candy_supply[order[i]] = c.candy_tokens
        memcpy(self.s.spec, c.spec_cards, c.n_spec)
        self.s.spec_len = c.n_spec
        shuffle_i8(&self.s.rng, self.s.spec, c.n_spec)
        # The coin comes with the Plantation's setup; the Candy Factory's gives none.
        k = c.co_coins if c.variant == V_CANDY else c.start_coins
        for p in range(c.n_players):
            self.s.g[p].coins = k
            self.s.coin_pile -= k
        if c.variant == V_CANDY:
            for p in range(c.n_players):
                for i in range(c.co_specs):
                    self.s.spec_len -= 1
                    k = self.s.spec[self.s.spec_len]
                    self.s.c[p].kept[k] += 1
            self.start_half(1)
            # Each player then loads his goods onto his trucks as he likes, seat by seat.
            self.s.t.step = ST_LOAD
            self.s.t.loads_left = c.co_sugar + c.co_choc
            self.s.to_move = 0
            self.s.n_legal = self.gen_legal(self.s.legal)
            return
        for p in range(c.n_players):
            for i in range(c.start_sugar):
                put(&self.s.g[p].wh, SUGAR, False)
            for i in range(c.start_cacao):
                put(&self.s.g[p].wh, CACAO, False)
            self.s.sugar_pile -= c.start_sugar
            self.s.cacao_pile -= c.start_cacao
        self.start_half(0)

    cdef void start_half(self, int half) noexcept nogil:
        # Fresh decks and hands, the die, the start player; the board is empty.
        cdef MConfig* c = &self.cfg
        cdef int p, i, k, n, start, best, nb, nc, r
        cdef int cand[MAX_PLAYERS]
        cdef int rolls[MAX_PLAYERS]
        cdef Cards* cd
        # Candy-only: "Set up Candy Factory as normal [the hand is drawn]. Then, each
        # player shuffles three random specialist workers into his deck."
        cdef bint late = half == 1 and c.variant == V_CANDY and c.co_hand_first
        self.s.half = half
        self.s.board = 0
        self.s.pawn_pile = c.pawns
        for p in range(c.n_players):
            cd = &self.s.c[p]
            memset(cd.played, 0, sizeof(cd.played))
            n = 0
            for i in range(c.spaces):
                cd.deck[n] = i
                n += 1
            if half == 1 and not late:
                for k in range(N_KINDS):
                    for i in range(cd.kept[k]):
                        cd.deck[n] = SPEC + k
                        n += 1
            shuffle_i8(&self.s.rng, cd.deck, n)
            self.s.g[p].hand_len = 0
            if half == 0:
                for i in range(c.temp_cards):
                    cd.hand[i] = SPEC + K_TEMP
                    cd.secret[i] = False
                self.s.g[p].hand_len = c.temp_cards
            while self.s.g[p].hand_len < c.hand_size and n > 0:
                n -= 1
                cd.hand[self.s.g[p].hand_len] = cd.deck[n]
                seen_one(&self.s.seen, p, SEEN_DRAW + cd.deck[n])
                cd.secret[self.s.g[p].hand_len] = False
                self.s.g[p].hand_len += 1
            if late:
                for k in range(N_KINDS):
                    for i in range(cd.kept[k]):
                        cd.deck[n] = SPEC + k
                        n += 1
                shuffle_i8(&self.s.rng, cd.deck, n)
            self.s.g[p].deck_len = n
            self.s.g[p].whistle = False
        if half == 0 or c.variant == V_CANDY:
            # Everyone rolls; the highest starts, ties roll again; the die keeps the last roll.
            nc = c.n_players
            for i in range(nc):
                cand[i] = i
            while True:
                best = -1
                for i in range(nc):
                    r = rng_below(&self.s.rng, c.spaces)
                    rolls[i] = r
                    if r > best:
                        best = r
                    self.s.die = r
                nb = 0
                for i in range(nc):
                    if rolls[i] == best:
                        cand[nb] = cand[i]
                        nb += 1
                nc = nb
                if nc == 1:
                    break
            start = cand[0]
            self.s.first = start
        else:
            self.s.die = rng_below(&self.s.rng, c.spaces)
            start = self.s.last_mover
        # The rolls are public: everyone sees who starts and the die left showing.
        seen_all(&self.s.seen, c.n_players, SEEN_START + start * 64 + self.s.die)
        self.begin_turn(start)

    # ---- turn flow ----

    cdef void begin_turn(self, int p) noexcept nogil:
        self.s.t = NEW_TURN
        self.s.to_move = p
        self.s.n_legal = self.gen_cards(self.s.legal)

    cdef void next_stage(self) noexcept nogil:
        if self.s.t.shift_visit:
            # The ability a shift change offered is done: on to the to/from choice.
            self.s.t.shift_visit = False
            self.s.t.space = -1
            self.s.t.ability = AB_NONE
            self.to_tofrom()
            return
        self.stages_from(self.s.t.to, self.s.t.stage + 1)

    cdef void stages_from(self, bint to, int stage) noexcept nogil:
        # To the factory: transport, space ability, Machinist. From it: space ability,
        # Machinist, then the pawn leaves and the goods travel. A stage whose only legal
        # action is stop (always listed first) is passed without asking. `to` and
        # `stage` come in registers: right after the to/from choice, the branch on them
        # (the one that choice makes unpredictable) waits on no store to the state.
        cdef Pending* t = &self.s.t
        cdef int kind
        while stage < 3:
            # What the stage does (0 transport, 1 space ability, 2 Machinist): to the
            # factory the stage itself, from it the one after, modulo 3.
            kind = stage + 1 - to
            kind -= 3 * (kind == 3)
            t.recipe = -1
            if t.machinist and kind != 0:
                # The two abilities of a Machinist turn, in the order the player chose
                # (asked as the first of them comes up, if the order can matter).
                if not t.ordered:
                    t.ordered = True
                    if self.cfg.machinist_choice and self.order_matters():
                        t.step = ST_ORDER
                        self.s.legal[0] = A_SPACE_FIRST
                        self.s.legal[1] = A_MACHINE_FIRST
                        self.s.n_legal = 2
                        t.stage = stage - 1
                        return
                if t.machine_first:
                    kind = 3 - kind
            if kind == 0:
                if not to:
                    self.s.board &= ~(1u << t.space)
                    self.s.pawn_pile += 1
                t.step = ST_TRANSPORT
                self.s.n_legal = self.gen_transport(self.s.legal)
            elif kind == 1:
                t.ability = self.cfg.ability[self.s.half][t.space]
                t.step = ST_ABILITY
                self.s.n_legal = self.gen_ability(self.s.legal)
            elif t.machinist:
                t.ability = MACHINE_OF[self.s.half]
                t.step = ST_ABILITY
                self.s.n_legal = self.gen_ability(self.s.legal)
            else:
                stage += 1
                continue
            if self.s.n_legal > 1:
                t.stage = stage
                return
            stage += 1
        t.stage = stage
        self.end_turn()

    cdef bint order_matters(self) noexcept nogil:
        # Whether the Machinist's order can change anything: two different abilities,
        # one of which can do something now (it may then enable the other).
        cdef Pending* t = &self.s.t
        cdef int machine = MACHINE_OF[self.s.half]
        cdef int space = self.cfg.ability[self.s.half][t.space]
        cdef int scratch[MAX_LEGAL]
        cdef bint usable
        if space == machine:
            return False
        t.ability = machine
        usable = self.gen_ability(scratch) > 1
        t.ability = space
        return usable or self.gen_ability(scratch) > 1

    cdef void stay(self, int n) noexcept nogil:
        # The transport or ability goes on with the list of n actions just written to
        # s.legal, unless only stop is left: the engine takes it.
        self.s.n_legal = n
        if n == 1:
            self.next_stage()

    cdef void end_turn(self) noexcept nogil:
        cdef int p = self.s.to_move
        cdef int i, q, n = self.cfg.n_players
        cdef Goods* g = &self.s.g[p]
        cdef Cards* cd = &self.s.c[p]
        self.s.f[p].turns += 1
        self.s.last_mover = p
        if not self.s.t.recruited:
            while g.hand_len < self.cfg.hand_size and g.deck_len > 0:
                g.deck_len -= 1
                cd.hand[g.hand_len] = cd.deck[g.deck_len]
                seen_one(&self.s.seen, p, SEEN_DRAW + cd.deck[g.deck_len])
                cd.secret[g.hand_len] = False
                g.hand_len += 1
        # Clockwise to the next player with a card; a player without cards is skipped.
        # (Wrapping by hand: a division per turn shows in profiles.)
        q = p
        for i in range(n):
            q += 1
            if q == n:
                q = 0
            if self.s.g[q].hand_len > 0:
                self.begin_turn(q)
                return
        self.end_half()

    cdef void end_half(self) noexcept nogil:
        cdef int p, k
        cdef Box* wh
        for p in range(self.cfg.n_players):
            self.s.interim[p][self.s.interims_done] = self.standing(p)
        self.s.interims_done += 1
        if self.cfg.variant != V_FULL or self.s.half == 1:
            self.finish()
            return
        # Transition: pawns, warehouse goods and whistle coins go back to their piles.
        self.s.board = 0
        self.s.pawn_pile = self.cfg.pawns
        for p in range(self.cfg.n_players):
            wh = &self.s.g[p].wh
            self.s.sugar_pile += wh.n[SUGAR]
            self.s.cacao_pile += wh.n[CACAO] + wh.n[CHOC]
            for k in range(N_RECIPES):
                self.s.candy_supply[k] += wh.n[PLAIN + k] + wh.n[DECO + k]
            memset(wh, 0, sizeof(Box))
            if self.s.g[p].whistle:
                self.s.g[p].whistle = False
                self.s.coin_pile += self.cfg.shift_cost
        self.s.t.step = ST_DISCARD
        self.s.to_move = -1
        self.transition_from(0)

    cdef void transition_from(self, int p0) noexcept nogil:
        # Seats from p0 keep their specialists if they fit the uncovered worker icons;
        # the first seat with too many discards down, one decision per card.
        cdef int p, k, held
        for p in range(p0, self.cfg.n_players):
            held = 0
            for k in range(N_KINDS):
                held += self.s.c[p].played[SPEC + k]
            if held > man_icons(&self.cfg, &self.s.g[p]):
                self.s.to_move = p
                self.s.n_legal = self.gen_legal(self.s.legal)
                return
            for k in range(N_KINDS):
                self.s.c[p].kept[k] = self.s.c[p].played[SPEC + k]
        self.start_half(1)

    cdef void finish(self) noexcept nogil:
        self.s.to_move = -1
        self.s.t.step = ST_OVER
        self.s.n_legal = 0

    # ---- decisions ----

    cdef int current_player(self) noexcept nogil:
        return self.s.to_move

    cdef int legal_actions(self, int* out) noexcept nogil:
        memcpy(out, self.s.legal, self.s.n_legal * sizeof(int))
        return self.s.n_legal

    cdef int probe(self, int number, bint ccw, bint to, int* tried) noexcept nogil:
        # Try spaces from `number` on: to the factory the first empty one, from it the
        # first occupied one. Every space tried counts towards the capacity.
        cdef unsigned int full = self.cfg.full
        if to and self.s.pawn_pile == 0:
            return -1
        return ring_probe((~self.s.board if to else self.s.board) & full, full, self.cfg.spaces,
                          number, ccw, tried)

    cdef int gen_legal(self, int* out) noexcept nogil:
        # The legal list of the current decision, whatever the step. The engine itself
        # writes each list where it sets the step (see apply); this is for the states
        # it did not reach by playing (determinize) and for validate.
        cdef Pending* t = &self.s.t
        cdef int p = self.s.to_move
        cdef int n = 0, i, k, g, tr
        cdef unsigned int seen = 0
        cdef Goods* gd
        if p < 0:
            return 0
        gd = &self.s.g[p]
        if t.step == ST_CARD:
            n = self.gen_cards(out)
        elif t.step == ST_DIE:
            out[0] = A_KEEP_FACE
            out[1] = A_ROLL
            n = 2
        elif t.step == ST_RUNNER:
            for k in range(-self.cfg.runner_reach, self.cfg.runner_reach + 1):
                out[n] = A_RUN + k
                n += 1
        elif t.step == ST_SORTER:
            out[0] = A_CW
            out[1] = A_CCW
            n = 2
        elif t.step == ST_TOFROM:
            n = self.gen_tofrom(out)
        elif t.step == ST_TRANSPORT:
            n = self.gen_transport(out)
        elif t.step == ST_ABILITY:
            n = self.gen_ability(out)
        elif t.step == ST_PICK:
            for i in range(t.n_look):
                k = t.look[i]
                if not (seen >> k) & 1:
                    seen |= 1u << k
                    out[n] = A_PICK + k
                    n += 1
        elif t.step == ST_DISCARD:
            for k in range(N_KINDS):
                if self.s.c[p].played[SPEC + k] > 0:
                    out[n] = A_DISCARD + k
                    n += 1
        elif t.step == ST_ORDER:
            out[0] = A_SPACE_FIRST
            out[1] = A_MACHINE_FIRST
            n = 2
        elif t.step == ST_LOAD:
            g = SUGAR if t.loads_left > self.cfg.co_choc else CHOC
            for tr in range(N_TRUCKS):
                if gd.truck[tr].used < self.cfg.truck_cap[tr]:
                    out[n] = move_action(g, tr, False)
                    n += 1
        return n

    # The generators of the frequent steps. Their lists are built without branches on
    # the data: each candidate is written, and kept by advancing n only if it is legal
    # (a data-dependent branch is mispredicted a good part of the time).

    cdef int gen_cards(self, int* out) noexcept nogil:
        # One action per distinct card in hand.
        cdef int p = self.s.to_move
        cdef int n = 0, i, k
        cdef unsigned int seen = 0
        for i in range(self.s.g[p].hand_len):
            k = self.s.c[p].hand[i]
            out[n] = A_CARD + k
            n += not (seen >> k) & 1
            seen |= 1u << k
        return n

    cdef int gen_tofrom(self, int* out) noexcept nogil:
        cdef Goods* gd = &self.s.g[self.s.to_move]
        cdef unsigned int board = self.s.board
        cdef int n = 0, i, k
        out[n] = A_TO
        n += (board != self.cfg.full) & (self.s.pawn_pile > 0)
        out[n] = A_FROM
        n += board != 0
        if not gd.whistle and gd.coins >= self.cfg.shift_cost:
            for i in range(self.cfg.spaces):
                # Remove the pawn of an occupied space, add one on a free space.
                k = (board >> i) & 1
                out[n] = A_SHIFT_ADD + i + k * (A_SHIFT_REMOVE - A_SHIFT_ADD)
                n += k | (self.s.pawn_pile > 0)
        return n

    cdef int gen_transport(self, int* out) noexcept nogil:
        # Stop first: a list of length 1 offers nothing else.
        out[0] = A_STOP
        if self.s.t.cap_left > 0:
            return 1 + self.gen_moves(out + 1)
        return 1

    cdef int gen_moves(self, int* out) noexcept nogil:
        cdef Pending* t = &self.s.t
        cdef Goods* gd = &self.s.g[self.s.to_move]
        cdef Box* wh = &gd.wh
        cdef Box* b
        cdef int n = 0, g, tr, k
        cdef unsigned int trucks
        cdef int ok, use, room, have
        cdef int wh_room = wh.used < self.cfg.warehouse
        # As in gen_cards, each move is written and kept only if legal (no branch on it):
        # unstacked needs a free space at the destination, stacked (Packer) a single
        # identical good there. (Whether the Packer was played is known for the whole
        # turn, so branching on it costs nothing.)
        # The trucks this turn may still use: any with spaces, or only the one already used.
        trucks = self.cfg.truck_bits
        if not t.trucker and t.lock_truck >= 0:
            trucks &= 1u << t.lock_truck
        if self.s.half == 0:
            if t.to:
                # From the piles: sugar or cacao, not both (the Trucker may mix).
                for g in range(CHOC):
                    ok = (((self.s.sugar_pile if g == SUGAR else self.s.cacao_pile) > 0)
                          & (t.trucker | (t.lock_good < 0) | (t.lock_good == g)))
                    out[n] = move_action(g, 0, False)
                    n += ok & wh_room
                    if t.packer:
                        out[n] = move_action(g, 0, True)
                        n += ok & (singles(wh, g) > 0)
                return n
            # From the warehouse onto a truck: only sugar and chocolate ship. Every
            # (truck, good) pair is written and kept if legal: no loop runs for as long
            # as the goods or trucks at hand (its exit would be mispredicted).
            for tr in range(N_TRUCKS):
                b = &gd.truck[tr]
                use = (trucks >> tr) & 1
                room = use & (b.used < self.cfg.truck_cap[tr])
                for k in range(2):
                    g = SUGAR if k == 0 else CHOC
                    have = wh.n[g] > 0
                    out[n] = move_action(g, tr, False)
                    n += have & room
                    if t.packer:
                        out[n] = move_action(g, tr, True)
                        n += have & use & (singles(b, g) > 0)
            return n
        if t.to:
            # Candy Factory: from a truck into the warehouse.
            while trucks:
                tr = ctz(trucks)
                trucks &= trucks - 1
                n += truck_moves(gd.truck[tr].mask, tr, wh_room, t.packer, wh, out + n)
        else:
            # From the warehouse onto a truck.
            while trucks:
                tr = ctz(trucks)
                trucks &= trucks - 1
                b = &gd.truck[tr]
                n += truck_moves(wh.mask, tr, b.used < self.cfg.truck_cap[tr], t.packer, b, out + n)
        return n

    cdef int gen_ability(self, int* out) noexcept nogil:
        cdef Pending* t = &self.s.t
        cdef Goods* gd = &self.s.g[self.s.to_move]
        cdef Box* wh = &gd.wh
        cdef int n = 1, r, cap = self.cfg.warehouse
        cdef unsigned int bits
        cdef unsigned int ok
        # Stop first: a list of length 1 offers nothing else.
        out[0] = A_STOP
        if self.s.half == 0:
            # Each Plantation ability offers one action: the three are tested together
            # and the space's one taken, with no branch on which space it is.
            # The Mixer needs room for the chocolate once a sugar and a cacao are taken
            # (taking one off a stack frees no space).
            ok = ((wh.n[SUGAR] > 0) & (wh.n[CACAO] > 0)
                  & (wh.used - (singles(wh, SUGAR) > 0) - (singles(wh, CACAO) > 0) + 1 <= cap)) << AB_MIXER
            ok |= ((self.s.coin_pile > 0) & (wh.n[CACAO] > 0)) << AB_OUTLET
            ok |= ((gd.coins >= self.cfg.break_cost) & (self.s.spec_len > 0)) << AB_BREAK
            out[1] = PLANTATION_ACTION[t.ability]
            return 1 + ((ok >> t.ability) & 1)
        # The Candy Factory's.
        if t.ability == AB_OUTLET:
            if self.s.coin_pile > 0:
                bits = wh.mask
                while bits:
                    out[n] = A_SELL + ctz(bits)
                    n += 1
                    bits &= bits - 1
        elif t.ability == AB_MACHINE:
            bits = self.s.in_play if t.recipe < 0 else 1u << t.recipe
            while bits:
                r = ctz(bits)
                bits &= bits - 1
                out[n] = A_MAKE + r
                n += (self.s.candy_supply[r] > 0) & (wh.n[SUGAR] >= self.cfg.cost_sugar[r]) \
                    & (wh.n[CHOC] >= self.cfg.cost_choc[r]) & (t.made[r] < self.cfg.uses[r])
        elif t.ability == AB_DECORATE:
            bits = (wh.mask >> PLAIN) & ((1u << N_RECIPES) - 1)
            if bits and gd.coins >= self.cfg.deco_all_cost:
                out[n] = A_DECO_ALL
                n += 1
            while bits:
                r = ctz(bits)
                bits &= bits - 1
                # A plain candy taken off a stack needs a space of its own once decorated.
                out[n] = A_DECO + r
                n += (singles(wh, PLAIN + r) > 0) | (wh.used < cap)
        return n

    cdef int apply(self, int action) except -2 nogil:
        # Every change of step below writes the legal list of the new step at once, where
        # the step is known, rather than dispatching on it again in a generic generator;
        # the frequent steps have their own generators, the rare ones use gen_legal.
        seen_move(&self.s.seen)
        self.act(action)
        return self.s.to_move

    cdef void act(self, int action) noexcept nogil:
        cdef Pending* t = &self.s.t
        cdef int p = self.s.to_move
        cdef Goods* gd = &self.s.g[p]
        cdef Cards* cd = &self.s.c[p]
        cdef int i, j, k, tried = 0, last
        cdef bint to
        if t.step == ST_CARD:
            k = action - A_CARD
            # The first copy of the card leaves the hand; the last card takes its slot.
            # (Scanned downwards keeping the lowest match: no branch on the hand.)
            last = gd.hand_len - 1
            j = last
            for i in range(last, -1, -1):
                j = i if cd.hand[i] == k else j
            if cd.secret[j]:
                self.reveal(p, j, k - SPEC)
            cd.hand[j] = cd.hand[last]
            cd.secret[j] = cd.secret[last]
            cd.tag[j] = cd.tag[last]
            gd.hand_len = last
            cd.played[k] += 1
            t.card = k
            if k < SPEC:
                t.number = k
                self.to_tofrom()
            else:
                k -= SPEC
                self.s.f[p].played_spec[k] += 1
                t.trucker = k == K_TRUCKER
                t.packer = k == K_PACKER
                t.machinist = k == K_MACHINIST
                t.step = ST_DIE
                self.s.n_legal = self.gen_legal(self.s.legal)
        elif t.step == ST_DIE:
            # A roll must be used: the number is set before any later choice.
            if action == A_ROLL:
                self.s.die = rng_below(&self.s.rng, self.cfg.spaces)
                seen_all(&self.s.seen, self.cfg.n_players, SEEN_DIE + self.s.die)
            t.number = self.s.die
            k = t.card - SPEC
            if k == K_RUNNER and self.cfg.runner_reach > 0:
                t.step = ST_RUNNER
                self.s.n_legal = self.gen_legal(self.s.legal)
            elif k == K_SORTER:
                t.step = ST_SORTER
                self.s.n_legal = self.gen_legal(self.s.legal)
            else:
                self.to_tofrom()
        elif t.step == ST_RUNNER:
            # The die is turned to the new value (1 and 8 adjacent).
            t.number = (t.number + action - A_RUN + self.cfg.spaces) % self.cfg.spaces
            self.s.die = t.number
            self.to_tofrom()
        elif t.step == ST_SORTER:
            t.ccw = action == A_CCW
            self.to_tofrom()
        elif t.step == ST_TOFROM:
            if action == A_TO or action == A_FROM:
                to = action == A_TO
                t.to = to
                t.space = self.probe(t.number, t.ccw, to, &tried)
                t.cap_left = tried + (self.cfg.lift_bonus if t.card == SPEC + K_LIFT else 0)
                # Going to the factory places a pawn (no branch on the choice just made).
                self.s.board |= (<unsigned int>to) << t.space
                self.s.pawn_pile -= to
                self.stages_from(to, 0)
            else:
                gd.coins -= self.cfg.shift_cost
                gd.whistle = True
                self.s.f[p].uses[6] += 1
                if action >= A_SHIFT_REMOVE:
                    k = action - A_SHIFT_REMOVE
                    self.s.board &= ~(1u << k)
                    self.s.pawn_pile += 1
                else:
                    k = action - A_SHIFT_ADD
                    self.s.board |= 1u << k
                    self.s.pawn_pile -= 1
                if self.cfg.shift_ability:
                    # The pawn entering (or leaving) the space is offered its ability;
                    # the turn then goes back to the to/from choice (see next_stage).
                    t.shift_visit = True
                    t.space = k
                    t.recipe = -1
                    t.ability = self.cfg.ability[self.s.half][k]
                    t.step = ST_ABILITY
                    self.stay(self.gen_ability(self.s.legal))
                else:
                    self.s.n_legal = self.gen_tofrom(self.s.legal)
        elif t.step == ST_TRANSPORT:
            if action == A_STOP:
                self.next_stage()
            else:
                self.move(action)
                self.stay(self.gen_transport(self.s.legal))
        elif t.step == ST_ABILITY:
            if action == A_STOP:
                self.next_stage()
            else:
                self.use_ability(action)
        elif t.step == ST_PICK:
            self.pick(action - A_PICK)
        elif t.step == ST_DISCARD:
            k = action - A_DISCARD
            cd.played[SPEC + k] -= 1
            self.s.spec_out[k] += 1
            self.transition_from(p)
        elif t.step == ST_LOAD:
            self.load(action)
        elif t.step == ST_ORDER:
            t.machine_first = action == A_MACHINE_FIRST
            self.next_stage()

    cdef inline void to_tofrom(self) noexcept nogil:
        self.s.t.step = ST_TOFROM
        self.s.n_legal = self.gen_tofrom(self.s.legal)

    cdef void move(self, int action) noexcept nogil:
        cdef Pending* t = &self.s.t
        cdef Goods* gd = &self.s.g[self.s.to_move]
        cdef int code = action - A_MOVE
        cdef bint stacked = code & 1
        cdef int tr = (code >> 1) % N_TRUCKS
        cdef int g = (code >> 1) // N_TRUCKS
        t.cap_left -= 1
        if stacked:
            self.s.f[self.s.to_move].uses[7] += 1
        if self.s.half == 0 and t.to:
            if g == SUGAR:
                self.s.sugar_pile -= 1
            else:
                self.s.cacao_pile -= 1
            put(&gd.wh, g, stacked)
            t.lock_good = g
        elif t.to:
            take(&gd.truck[tr], g)
            put(&gd.wh, g, stacked)
            t.lock_truck = tr
        else:
            take(&gd.wh, g)
            put(&gd.truck[tr], g, stacked)
            t.lock_truck = tr

    cdef void to_pile(self, int g) noexcept nogil:
        if g == SUGAR:
            self.s.sugar_pile += 1
        elif g < PLAIN:
            self.s.cacao_pile += 1
        else:
            self.s.candy_supply[(g - PLAIN) % N_RECIPES] += 1

    cdef void use_ability(self, int action) noexcept nogil:
        cdef Pending* t = &self.s.t
        cdef int p = self.s.to_move
        cdef Goods* gd = &self.s.g[p]
        cdef Box* wh = &gd.wh
        cdef int i, r, g, gain, room
        if action == A_MIX:
            take(wh, SUGAR)
            self.s.sugar_pile += 1
            take(wh, CACAO)
            put(wh, CHOC, False)
            self.s.f[p].uses[0] += 1
            self.next_stage()
        elif action >= A_SELL and action < A_SELL + N_GOODS:
            g = action - A_SELL
            take(wh, g)
            self.to_pile(g)
            gain = self.cfg.outlet_coins[self.s.half]
            if gain > self.s.coin_pile:
                gain = self.s.coin_pile
            gd.coins += gain
            self.s.coin_pile -= gain
            self.s.f[p].uses[1 if self.s.half == 0 else 5] += 1
            self.next_stage()
        elif action == A_RECRUIT:
            gd.coins -= self.cfg.break_cost
            self.s.coin_pile += self.cfg.break_cost
            self.s.f[p].uses[2] += 1
            t.n_look = self.cfg.break_look if self.cfg.break_look < self.s.spec_len else self.s.spec_len
            for i in range(t.n_look):
                self.s.spec_len -= 1
                t.look[i] = self.s.spec[self.s.spec_len]
                seen_one(&self.s.seen, p, SEEN_LOOK + t.look[i])
                # The looking seat now sees the card: it leaves that seat's group, if any.
                g = (self.s.spec_tag[self.s.spec_len] >> (8 * p)) & 0xFF
                if g >= T_GROUP:
                    self.leave_group(p, g - T_GROUP, t.look[i])
                self.s.look_tag[i] = ((self.s.spec_tag[self.s.spec_len] & ~(0xFFu << (8 * p)))
                                      | (<unsigned int>T_KNOWN << (8 * p)))
            t.step = ST_PICK
            self.s.n_legal = self.gen_legal(self.s.legal)
        elif action >= A_MAKE and action < A_MAKE + N_RECIPES:
            r = action - A_MAKE
            if t.recipe < 0:
                t.recipe = r
                t.uses_left = self.cfg.uses[r] - t.made[r]
            t.uses_left -= 1
            # Per turn, the uses made count against the arrow for the next machine too.
            t.made[r] += self.cfg.recipe_per_turn
            for i in range(self.cfg.cost_sugar[r]):
                take(wh, SUGAR)
                self.s.sugar_pile += 1
            for i in range(self.cfg.cost_choc[r]):
                take(wh, CHOC)
                self.s.cacao_pile += 1
            # Candy that finds no space stays on the recipe card.
            gain = self.cfg.candies[r]
            if gain > self.s.candy_supply[r]:
                gain = self.s.candy_supply[r]
            room = self.cfg.warehouse - wh.used
            if gain > room:
                gain = room
            for i in range(gain):
                put(wh, PLAIN + r, False)
            self.s.candy_supply[r] -= gain
            self.s.f[p].candies[r] += gain
            self.s.f[p].uses[3] += 1
            if t.uses_left == 0:
                self.next_stage()
            else:
                self.stay(self.gen_ability(self.s.legal))
        elif action >= A_DECO and action < A_DECO + N_RECIPES:
            r = action - A_DECO
            take(wh, PLAIN + r)
            put(wh, DECO + r, False)
            self.s.f[p].uses[4] += 1
            self.next_stage()
        elif action == A_DECO_ALL:
            gd.coins -= self.cfg.deco_all_cost
            self.s.coin_pile += self.cfg.deco_all_cost
            for r in range(N_RECIPES):
                # Plain stacks become decorated stacks: both candies of a stack are flipped.
                if wh.n[PLAIN + r]:
                    wh.n[DECO + r] += wh.n[PLAIN + r]
                    wh.stacks[DECO + r] += wh.stacks[PLAIN + r]
                    wh.n[PLAIN + r] = 0
                    wh.stacks[PLAIN + r] = 0
                    wh.mask = (wh.mask & ~(1u << (PLAIN + r))) | (1u << (DECO + r))
            self.s.f[p].uses[4] += 1
            self.next_stage()

    cdef void pick(self, int kind) noexcept nogil:
        # Keep one card; the others go to the bottom of the deck, seen by this seat. Every
        # other seat knows the kept card and those put back only together, as well as it
        # knew the cards looked at (see merge).
        cdef Pending* t = &self.s.t
        cdef int p = self.s.to_move
        cdef Goods* gd = &self.s.g[p]
        cdef int i, j, m, o, kept = -1
        cdef unsigned int tag = <unsigned int>T_KNOWN << (8 * p)
        cdef int kinds[MAX_LOOK]
        cdef int know[MAX_LOOK]
        for i in range(t.n_look):
            if t.look[i] == kind:
                kept = i
                break
        for o in range(self.cfg.n_players):
            if o != p:
                for i in range(t.n_look):
                    kinds[i] = t.look[i]
                    know[i] = (self.s.look_tag[i] >> (8 * o)) & 0xFF
                tag |= <unsigned int>self.merge(o, t.n_look, kinds, know) << (8 * o)
        self.s.c[p].hand[gd.hand_len] = kind + SPEC
        self.s.c[p].secret[gd.hand_len] = True
        self.s.c[p].tag[gd.hand_len] = tag
        gd.hand_len += 1
        self.s.f[p].recruited[kind] += 1
        m = t.n_look - 1
        memmove(&self.s.spec[m], &self.s.spec[0], self.s.spec_len)
        memmove(&self.s.spec_tag[m], &self.s.spec_tag[0], self.s.spec_len * sizeof(unsigned int))
        j = 0
        for i in range(t.n_look):
            if i != kept:
                self.s.spec[j] = t.look[i]
                self.s.spec_tag[j] = tag
                j += 1
        self.s.spec_len += m
        t.n_look = 0
        t.recruited = True
        self.next_stage()

    cdef int merge(self, int o, int n, const int* kinds, const int* know) noexcept nogil:
        # What seat o knows of n cards that now go together (o cannot tell which is
        # where): the kinds it knew exactly, the number it never saw, and the groups some
        # of them were in, all pooled into one group (the lowest of those, or a new one).
        # Returns the tag byte for the cards: unseen if o knew nothing of them (or has no
        # group left: it then forgets, as if it had never seen them).
        cdef int i, g, k, old
        cdef int add[N_KINDS + 1]
        cdef unsigned int touched = 0
        cdef bint any_known = False
        memset(add, 0, sizeof(add))
        for i in range(n):
            if know[i] == T_KNOWN:
                add[kinds[i]] += 1
                any_known = True
            elif know[i] == T_UNSEEN:
                add[N_KINDS] += 1
            else:
                touched |= 1u << (know[i] - T_GROUP)
        if touched:
            g = ctz(touched)
            touched &= touched - 1
            while touched:
                old = ctz(touched)
                touched &= touched - 1
                for k in range(N_KINDS + 1):
                    self.s.grp[o][g][k] += self.s.grp[o][old][k]
                    self.s.grp[o][old][k] = 0
                self.relabel(o, old, g)
        elif any_known and self.s.n_grp[o] < MAX_GROUPS:
            g = self.s.n_grp[o]
            self.s.n_grp[o] += 1
        else:
            return T_UNSEEN
        for k in range(N_KINDS + 1):
            self.s.grp[o][g][k] += add[k]
        return T_GROUP + g

    cdef void relabel(self, int o, int old, int new) noexcept nogil:
        # Every card of seat o's group `old` joins group `new` (-1: o forgets them).
        cdef int i, p
        cdef unsigned int sh = 8 * o
        cdef unsigned int mask = 0xFFu << sh
        cdef unsigned int was = <unsigned int>(T_GROUP + old) << sh
        cdef unsigned int now = <unsigned int>(T_GROUP + new if new >= 0 else T_UNSEEN) << sh
        for i in range(self.s.spec_len):
            if self.s.spec_tag[i] & mask == was:
                self.s.spec_tag[i] = (self.s.spec_tag[i] & ~mask) | now
        for i in range(self.s.t.n_look):
            if self.s.look_tag[i] & mask == was:
                self.s.look_tag[i] = (self.s.look_tag[i] & ~mask) | now
        for p in range(self.cfg.n_players):
            for i in range(self.s.g[p].hand_len):
                if self.s.c[p].secret[i] and self.s.c[p].tag[i] & mask == was:
                    self.s.c[p].tag[i] = (self.s.c[p].tag[i] & ~mask) | now

    cdef void reveal(self, int q, int j, int kind) noexcept nogil:
        # Seat q plays the recruit in hand slot j, face up. A seat that knew it only as
        # one of a group knows the rest of the group is one card fewer of that kind;
        # if q holds other recruits, which slot was played it cannot tell, so all of
        # q's recruits become one group first.
        cdef Cards* cd = &self.s.c[q]
        cdef int i, o, b, n, g
        cdef int kinds[MAX_HAND]
        cdef int know[MAX_HAND]
        cdef unsigned int sh
        for o in range(self.cfg.n_players):
            if o == q:
                continue
            sh = 8 * o
            n = 0
            for i in range(self.s.g[q].hand_len):
                if cd.secret[i]:
                    kinds[n] = cd.hand[i] - SPEC
                    know[n] = (cd.tag[i] >> sh) & 0xFF
                    n += 1
            if n > 1:
                b = self.merge(o, n, kinds, know)
                for i in range(self.s.g[q].hand_len):
                    if cd.secret[i]:
                        cd.tag[i] = (cd.tag[i] & ~(0xFFu << sh)) | (<unsigned int>b << sh)
            else:
                b = (cd.tag[j] >> sh) & 0xFF
            if b >= T_GROUP:
                self.leave_group(o, b - T_GROUP, kind)

    cdef void leave_group(self, int o, int g, int kind) noexcept nogil:
        # A card of seat o's group g, of this kind, is seen or leaves the group: one of
        # the known kinds if it is one, else one of those never seen.
        if self.s.grp[o][g][kind] > 0:
            self.s.grp[o][g][kind] -= 1
        else:
            self.s.grp[o][g][N_KINDS] -= 1

    cdef int check_groups(self) noexcept nogil:
        # Each seat's groups hold as many cards as they count (known kinds + unseen), and
        # the known kinds are among the kinds the cards really are.
        cdef signed char* where[MAX_SPEC + MAX_SEATS * (MAX_HAND + MAX_DECK) + MAX_LOOK]
        cdef int off[MAX_SPEC + MAX_SEATS * (MAX_HAND + MAX_DECK) + MAX_LOOK]
        cdef int tag[MAX_SPEC + MAX_SEATS * (MAX_HAND + MAX_DECK) + MAX_LOOK]
        cdef int held[MAX_GROUPS][N_KINDS]
        cdef int o, i, g, k, n, size
        for o in range(self.cfg.n_players):
            memset(held, 0, sizeof(held))
            n = self.spec_slots(o, where, off, tag)
            for i in range(n):
                if tag[i] >= T_GROUP:
                    held[tag[i] - T_GROUP][where[i][0] - off[i]] += 1
            for g in range(MAX_GROUPS):
                size = 0
                for k in range(N_KINDS):
                    size += held[g][k]
                    if self.s.grp[o][g][k] > held[g][k]:
                        return 1
                    size -= self.s.grp[o][g][k]
                if size != self.s.grp[o][g][N_KINDS]:
                    return 1
        return 0

    cdef void load(self, int action) noexcept nogil:
        cdef Pending* t = &self.s.t
        cdef int code = action - A_MOVE
        cdef int g = (code >> 1) // N_TRUCKS
        put(&self.s.g[self.s.to_move].truck[(code >> 1) % N_TRUCKS], g, False)
        if g == SUGAR:
            self.s.sugar_pile -= 1
        else:
            self.s.cacao_pile -= 1
        t.loads_left -= 1
        if t.loads_left == 0:
            if self.s.to_move + 1 == self.cfg.n_players:
                self.begin_turn(self.s.first)
                return
            self.s.to_move += 1
            t.loads_left = self.cfg.co_sugar + self.cfg.co_choc
        self.s.n_legal = self.gen_legal(self.s.legal)

    # ---- results ----

    cdef int first_player(self) noexcept nogil:
        return self.s.first

    cdef int end_reason(self) noexcept nogil:
        return 0

    cdef int standing(self, int seat) noexcept nogil:
        return man_score(&self.cfg, &self.s.g[seat])

    cdef void tiebreak(self, int seat, int* coins, int* others) noexcept nogil:
        # Coins, then the goods that do not score: other trucks and the warehouse.
        cdef Goods* g = &self.s.g[seat]
        cdef int t, n = box_total(&g.wh)
        for t in range(N_TRUCKS):
            if not self.cfg.truck_coloured[t] and self.cfg.variant != V_PLANTATION:
                n += box_total(&g.truck[t])
        coins[0] = g.coins
        others[0] = n

    cdef void outcome(self, int* scores, int* ranks) noexcept nogil:
        cdef int p, q, n = self.cfg.n_players
        cdef int coins[MAX_PLAYERS]
        cdef int others[MAX_PLAYERS]
        # Points (with the house rule's bonus by turn position), then coins, then the
        # goods that do not score.
        for p in range(n):
            scores[p] = self.standing(p) + self.cfg.komi[self.turn_position(p)]
            self.tiebreak(p, &coins[p], &others[p])
        for p in range(n):
            ranks[p] = 1
            for q in range(n):
                if scores[q] > scores[p] or (scores[q] == scores[p] and (
                        coins[q] > coins[p] or (coins[q] == coins[p] and others[q] > others[p]))):
                    ranks[p] += 1

    cdef void interim(self, int seat, int* out) noexcept nogil:
        cdef int i
        for i in range(self.n_interim):
            out[i] = self.s.interim[seat][i] if i < self.s.interims_done else self.standing(seat)

    cdef void features(self, int seat, int* out) noexcept nogil:
        cdef int i = 0, k, t
        cdef Feat* f = &self.s.f[seat]
        cdef Goods* g = &self.s.g[seat]
        cdef int scored[5]
        for k in range(1, N_KINDS):
            out[i] = f.recruited[k]
            i += 1
        for k in range(N_KINDS):
            out[i] = self.s.c[seat].kept[k]
            i += 1
        for k in range(N_KINDS):
            out[i] = f.played_spec[k]
            i += 1
        for k in range(N_RECIPES):
            out[i] = f.candies[k]
            i += 1
        out[i] = g.coins
        i += 1
        # Goods on the scoring trucks: sugar, cacao, chocolate, candies, decorated candies.
        memset(scored, 0, sizeof(scored))
        for t in range(N_TRUCKS):
            if self.cfg.truck_coloured[t] or self.cfg.variant == V_PLANTATION:
                for k in range(3):
                    scored[k] += g.truck[t].n[k]
                for k in range(N_RECIPES):
                    scored[3] += g.truck[t].n[PLAIN + k] + g.truck[t].n[DECO + k]
                    scored[4] += g.truck[t].n[DECO + k]
        for k in range(5):
            out[i] = scored[k]
            i += 1
        for k in range(8):
            out[i] = f.uses[k]
            i += 1
        out[i] = f.turns
        # The second tie-break (coins are the first): goods that do not score.
        self.tiebreak(seat, &k, &out[i + 1])

    cdef int action_component(self, int action) noexcept nogil:
        # Indices into COMPONENTS: specialists 0..5, then C_MIXER.., then the recipes.
        # Every action range is distinct, so the action alone says which it is.
        if A_CARD + SPEC + 1 <= action < A_CARD + SPEC + N_KINDS:
            return action - (A_CARD + SPEC + 1)
        if A_PICK + 1 <= action < A_PICK + N_KINDS:
            return action - (A_PICK + 1)
        if action == A_MIX:
            return C_MIXER
        if action == A_RECRUIT:
            return C_BREAK
        if A_SELL <= action < A_SELL + N_GOODS:
            return C_OUTLET_CANDY if self.s.half == 1 else C_OUTLET_PLANTATION
        if action == A_DECO_ALL or A_DECO <= action < A_DECO + N_RECIPES:
            return C_DECORATE
        if A_SHIFT_ADD <= action < A_STOP:
            return C_SHIFT
        if A_MAKE <= action < A_MAKE + N_RECIPES:
            return C_RECIPE + action - A_MAKE
        return -1

    # ---- search support ----

    cdef int action_key(self, int action, int observer) noexcept nogil:
        # The specialist another seat keeps at a Break Room pick is hidden from the
        # others: to them every pick is one move.
        if observer != self.s.to_move and self.s.t.step == ST_PICK:
            return A_PICK
        return action

    cdef int outcome_key(self, int observer) noexcept nogil:
        # A played recruit needs no outcome: its card action names it to every seat.
        return seen_key(&self.s.seen, observer)

    cdef void copy_into(self, GameState other) noexcept nogil:
        # One copy (a struct assignment goes through a temporary: two).
        memcpy(&(<ManfrediniState>other).s, &self.s, sizeof(Man))

    cdef int spec_slots(self, int observer, signed char** where, int* off, int* tag) noexcept nogil:
        # Every specialist slot whose kind `observer` does not know exactly, in a fixed
        # order: where its kind is stored (less off[i]), and what observer knows of it
        # (tag: unseen, or a group). Candy-only decks get their specialists unseen, so
        # there every specialist in a deck or in another hand is unseen; elsewhere the
        # specialists a seat holds were played face up, except recruits still in hand.
        cdef bint blind = self.cfg.variant == V_CANDY
        cdef unsigned int sh = 8 * observer
        cdef int p, i, b, n = 0
        cdef Cards* cd
        for i in range(self.s.spec_len):
            b = (self.s.spec_tag[i] >> sh) & 0xFF
            if b != T_KNOWN:
                where[n] = &self.s.spec[i]
                off[n] = 0
                tag[n] = b
                n += 1
        for p in range(self.cfg.n_players):
            cd = &self.s.c[p]
            if p != observer:
                for i in range(self.s.g[p].hand_len):
                    if cd.secret[i] or (blind and cd.hand[i] >= SPEC):
                        b = T_UNSEEN if blind else (cd.tag[i] >> sh) & 0xFF
                        if b != T_KNOWN:
                            where[n] = &cd.hand[i]
                            off[n] = SPEC
                            tag[n] = b
                            n += 1
            if blind:
                for i in range(self.s.g[p].deck_len):
                    if cd.deck[i] >= SPEC:
                        where[n] = &cd.deck[i]
                        off[n] = SPEC
                        tag[n] = T_UNSEEN
                        n += 1
        if self.s.t.step == ST_PICK and self.s.to_move != observer:
            for i in range(self.s.t.n_look):
                b = (self.s.look_tag[i] >> sh) & 0xFF
                if b != T_KNOWN:
                    where[n] = &self.s.t.look[i]
                    off[n] = 0
                    tag[n] = b
                    n += 1
        return n

    cdef void determinize(self, int observer, Rng* rng) noexcept nogil:
        # Unseen by `observer`: every deck order (its own included), the other hands
        # (their numbered cards, and specialists they drew, are reshuffled with their
        # decks), and the kinds of the specialists it does not know exactly (spec_slots).
        # Those it never saw are dealt from one pool; each of its groups then gets the
        # kinds it knows plus as many from that pool as it has cards never seen, shuffled
        # among the group's cards. Each pool is sorted before it is shuffled, so the
        # result depends only on what the pool holds, never on where the hidden cards
        # were: two states the observer cannot tell apart give the same world.
        cdef signed char* where[MAX_SPEC + MAX_SEATS * (MAX_HAND + MAX_DECK) + MAX_LOOK]
        cdef int off[MAX_SPEC + MAX_SEATS * (MAX_HAND + MAX_DECK) + MAX_LOOK]
        cdef int tag[MAX_SPEC + MAX_SEATS * (MAX_HAND + MAX_DECK) + MAX_LOOK]
        cdef signed char pool[MAX_SPEC + MAX_SEATS * (MAX_HAND + MAX_DECK) + MAX_LOOK]
        cdef signed char own[MAX_DECK + MAX_HAND]
        cdef int held[MAX_GROUPS][N_KINDS]
        cdef int p, i, k, g, n, m, ns, taken, h
        cdef Cards* cd
        cdef Goods* gd
        # Candy-only: the opening hands were drawn before the specialists joined.
        cdef bint late = self.s.half == 1 and self.cfg.variant == V_CANDY and self.cfg.co_hand_first
        n = self.spec_slots(observer, where, off, tag)
        memset(held, 0, sizeof(held))
        ns = 0
        for i in range(n):
            if tag[i] == T_UNSEEN:
                pool[ns] = where[i][0] - off[i]
                ns += 1
            else:
                held[tag[i] - T_GROUP][where[i][0] - off[i]] += 1
        # What the groups hold beyond the kinds known is what the observer never saw.
        for g in range(self.s.n_grp[observer]):
            for k in range(N_KINDS):
                for i in range(held[g][k] - self.s.grp[observer][g][k]):
                    pool[ns] = k
                    ns += 1
        sort_small(pool, ns)
        shuffle_i8(rng, pool, ns)
        taken = 0
        for i in range(n):
            if tag[i] == T_UNSEEN:
                where[i][0] = pool[taken] + off[i]
                taken += 1
        for g in range(self.s.n_grp[observer]):
            m = 0
            for k in range(N_KINDS):
                for i in range(self.s.grp[observer][g][k]):
                    own[m] = k
                    m += 1
            for i in range(self.s.grp[observer][g][N_KINDS]):
                own[m] = pool[taken]
                taken += 1
                m += 1
            sort_small(own, m)
            shuffle_i8(rng, own, m)
            m = 0
            for i in range(n):
                if tag[i] == T_GROUP + g:
                    where[i][0] = own[m] + off[i]
                    m += 1
        # The other seats' groups knew kinds of this world's past, not of the one
        # sampled: they forget them.
        for p in range(self.cfg.n_players):
            if p != observer and self.s.n_grp[p] > 0:
                for g in range(self.s.n_grp[p]):
                    self.relabel(p, g, -1)
                memset(self.s.grp[p], 0, sizeof(self.s.grp[p]))
                self.s.n_grp[p] = 0
        for p in range(self.cfg.n_players):
            cd = &self.s.c[p]
            gd = &self.s.g[p]
            m = 0
            if p != observer:
                for i in range(gd.hand_len):
                    if self.hidden_in_hand(cd, i):
                        own[m] = cd.hand[i]
                        m += 1
            h = m
            memcpy(&own[m], cd.deck, gd.deck_len)
            m += gd.deck_len
            sort_small(own, m)
            shuffle_i8(rng, own, m)
            if p != observer and late:
                self.spare_opening(p, own, h, m, rng)
            m = 0
            if p != observer:
                for i in range(gd.hand_len):
                    if self.hidden_in_hand(cd, i):
                        cd.hand[i] = own[m]
                        m += 1
            memcpy(cd.deck, &own[m], gd.deck_len)
            if self.cfg.variant == V_CANDY:
                # The specialists dealt unseen are those the resampled cards now hold.
                for i in range(N_KINDS):
                    cd.kept[i] = cd.played[SPEC + i]
                for i in range(gd.hand_len):
                    if cd.hand[i] >= SPEC:
                        cd.kept[cd.hand[i] - SPEC] += 1
                for i in range(gd.deck_len):
                    if cd.deck[i] >= SPEC:
                        cd.kept[cd.deck[i] - SPEC] += 1
        rng_seed(&self.s.rng, rng_next(rng))
        seen_move(&self.s.seen)
        self.s.n_legal = self.gen_legal(self.s.legal)

    cdef void spare_opening(self, int p, signed char* own, int h, int m, Rng* rng) noexcept nogil:
        # own[0, h) is seat p's hidden hand, own[h, m) its deck, shuffled. Its opening
        # hand held no specialist, so the hand holds at most `room` of them: the cards
        # drawn since, less those played since (the most there can be: every numbered
        # card it played came from the opening hand while one was left). If the shuffle
        # put more there, the hand's count of specialists k is drawn again from the
        # hypergeometric law cut at room, and the hand and deck dealt anew with k.
        cdef signed char specs[MAX_DECK + MAX_HAND]
        cdef signed char nums[MAX_DECK + MAX_HAND]
        cdef double weight[MAX_HAND + 1]
        cdef double total = 0.0, u
        cdef int opening = self.cfg.hand_size if self.cfg.hand_size < self.cfg.spaces else self.cfg.spaces
        cdef int played = 0, room, i, k, ns = 0, nn = 0, top
        for i in range(self.cfg.spaces):
            played += self.s.c[p].played[i]
        room = h - (opening - played if opening > played else 0)
        for i in range(h):
            ns += own[i] >= SPEC
        if ns <= room:
            return
        ns = 0
        for i in range(m):
            if own[i] >= SPEC:
                specs[ns] = own[i]
                ns += 1
            else:
                nums[nn] = own[i]
                nn += 1
        # weight[k] = C(ns, k) C(nn, h - k), up to a common factor.
        top = room if room < ns else ns
        for k in range(top + 1):
            weight[k] = binom(ns, k) * binom(nn, h - k)
            total += weight[k]
        u = rng_uniform(rng) * total
        k = 0
        while k < top and u >= weight[k]:
            u -= weight[k]
            k += 1
        memcpy(own, specs, k)
        memcpy(&own[k], nums, h - k)
        memcpy(&own[h], &specs[k], ns - k)
        memcpy(&own[h + ns - k], &nums[h - k], nn - (h - k))
        shuffle_i8(rng, own, h)
        shuffle_i8(rng, &own[h], m - h)

    cdef bint hidden_in_hand(self, const Cards* cd, int i) noexcept nogil:
        # A hand card another seat may have drawn from the deck: in the Plantation the
        # Temps start in hand (never in the deck) and recruits are pooled separately.
        return not cd.secret[i] and (self.s.half == 1 or cd.hand[i] < SPEC)

    cdef void observe(self, int seat, MObs* o) noexcept nogil:
        o.seat = seat
        o.half = self.s.half
        o.variant = self.cfg.variant
        o.n_players = self.cfg.n_players
        o.hand_len = self.s.g[seat].hand_len
        # The whole array in one move; the slots from hand_len on are not read.
        memcpy(o.hand, self.s.c[seat].hand, MAX_HAND)
        o.goods = self.s.g
        o.board = self.s.board
        o.in_play = self.s.in_play
        o.candy_supply = self.s.candy_supply
        o.t = &self.s.t
        o.cfg = &self.cfg
        o.die = self.s.die
        o.spec_len = self.s.spec_len
        o.pawn_pile = self.s.pawn_pile
        o.sugar_pile = self.s.sugar_pile
        o.cacao_pile = self.s.cacao_pile
        o.coin_pile = self.s.coin_pile

    cdef int validate(self) noexcept nogil:
        cdef MConfig* c = &self.cfg
        cdef int p, k, t, r, i, sugar, cacao, coins, pawns, used
        cdef int candy[N_RECIPES]
        cdef int spec[N_KINDS]
        cdef int num[MAX_SPACES]
        cdef int legal[MAX_LEGAL]
        cdef Goods* g
        cdef Cards* cd
        cdef Box* boxes[N_TRUCKS + 1]
        cdef int caps[N_TRUCKS + 1]
        # 1: tokens
        sugar = self.s.sugar_pile
        cacao = self.s.cacao_pile
        coins = self.s.coin_pile
        for r in range(N_RECIPES):
            candy[r] = self.s.candy_supply[r]
        for p in range(c.n_players):
            g = &self.s.g[p]
            coins += g.coins + (c.shift_cost if g.whistle else 0)
            boxes[0] = &g.wh
            for t in range(N_TRUCKS):
                boxes[t + 1] = &g.truck[t]
            for t in range(N_TRUCKS + 1):
                sugar += boxes[t].n[SUGAR]
                cacao += boxes[t].n[CACAO] + boxes[t].n[CHOC]
                for r in range(N_RECIPES):
                    candy[r] += boxes[t].n[PLAIN + r] + boxes[t].n[DECO + r]
        pawns = self.s.pawn_pile
        for i in range(c.spaces):
            pawns += (self.s.board >> i) & 1
        if sugar != c.supply_sugar or cacao != c.supply_cacao or coins != c.supply_coins \
                or pawns != c.pawns or self.s.pawn_pile < 0 or self.s.coin_pile < 0:
            return 1
        for r in range(N_RECIPES):
            if candy[r] != (c.candy_tokens if ((self.s.in_play >> r) & 1) else 0) or self.s.candy_supply[r] < 0:
                return 1
        # 2: boxes
        caps[0] = c.warehouse
        for t in range(N_TRUCKS):
            caps[t + 1] = c.truck_cap[t]
        for p in range(c.n_players):
            g = &self.s.g[p]
            boxes[0] = &g.wh
            for t in range(N_TRUCKS):
                boxes[t + 1] = &g.truck[t]
            for t in range(N_TRUCKS + 1):
                used = 0
                for k in range(N_GOODS):
                    if boxes[t].n[k] < 0 or boxes[t].stacks[k] < 0 or 2 * boxes[t].stacks[k] > boxes[t].n[k]:
                        return 2
                    used += boxes[t].n[k] - boxes[t].stacks[k]
                    if ((boxes[t].mask >> k) & 1) != (boxes[t].n[k] > 0):
                        return 2
                if used != boxes[t].used or used > caps[t]:
                    return 2
        # 3: cards
        for k in range(N_KINDS):
            spec[k] = self.s.spec_out[k]
        for i in range(self.s.spec_len):
            spec[self.s.spec[i]] += 1
        if self.s.t.step == ST_PICK:
            for i in range(self.s.t.n_look):
                spec[self.s.t.look[i]] += 1
        for p in range(c.n_players):
            g = &self.s.g[p]
            cd = &self.s.c[p]
            if g.hand_len < 0 or g.hand_len > MAX_HAND or g.deck_len < 0:
                return 3
            for i in range(c.spaces):
                num[i] = cd.played[i]
            for k in range(N_KINDS):
                spec[k] += cd.played[SPEC + k]
            for i in range(g.hand_len):
                if cd.hand[i] >= SPEC:
                    spec[cd.hand[i] - SPEC] += 1
                else:
                    num[cd.hand[i]] += 1
            for i in range(g.deck_len):
                if cd.deck[i] >= SPEC:
                    spec[cd.deck[i] - SPEC] += 1
                else:
                    num[cd.deck[i]] += 1
            for i in range(c.spaces):
                if num[i] != 1:
                    return 3
        for k in range(N_KINDS):
            if spec[k] != c.spec_total[k]:
                return 3
        # 4: seat to move
        if self.s.t.step == ST_OVER:
            if self.s.to_move != -1:
                return 4
        elif self.s.to_move < 0 or self.s.to_move >= c.n_players:
            return 4
        # 5: halves end with every card played
        if self.s.t.step == ST_OVER or self.s.t.step == ST_DISCARD:
            for p in range(c.n_players):
                if self.s.g[p].hand_len != 0 or self.s.g[p].deck_len != 0:
                    return 5
        # 6: the list written where the step was set is the one gen_legal gives
        i = self.gen_legal(legal)
        if i != self.s.n_legal or memcmp(legal, self.s.legal, i * sizeof(int)) != 0 \
                or (i == 1 and legal[0] == A_STOP):
            return 6
        # 7: each seat's knowledge groups
        if self.check_groups():
            return 7
        return 0

    # ---- Python API: names, descriptions, observation, trace, hand-built positions ----

    def _feature_names(self):
        return ([f"recruited_{k}" for k in SPECIALISTS[1:]]
                + [f"kept_{k}" for k in SPECIALISTS]
                + [f"played_{k}" for k in SPECIALISTS]
                + [f"candies_{r}" for r in RECIPES]
                + ["coins", "scored_sugar", "scored_cacao", "scored_chocolate", "scored_candies",
                   "scored_decorated"]
                + [f"used_{u}" for u in USES] + ["seat_turns", "unscored_goods"])

    def feature_names(self):
        return self._feature_names()

    def interim_names(self):
        return ["transition", "end"] if self.cfg.variant == V_FULL else ["end"]

    def phase_label(self):
        if self.s.t.step == ST_OVER:
            return "game over"
        if self.s.t.step == ST_LOAD:
            return "candy-only setup"
        if self.s.t.step == ST_DISCARD:
            return "factory transition"
        return "Plantation Factory" if self.s.half == 0 else "Candy Factory"

    @staticmethod
    def card_name(int card):
        return str(card + 1) if card < SPEC else SPECIALISTS[card - SPEC]

    def _card_id(self, name):
        if isinstance(name, int) or str(name).isdigit():
            k = int(name) - 1
            if not 0 <= k < self.cfg.spaces:
                raise ValueError(f"no worker card {name}")
            return k
        return SPEC + SPECIALISTS.index(name)

    def describe(self, int action):
        t = self.s.t
        p = self.s.to_move
        if t.step == ST_CARD:
            return f"play {self.card_name(action - A_CARD)}"
        if action == A_KEEP_FACE:
            return f"use the die face {self.s.die + 1}"
        if action == A_ROLL:
            return "roll the die"
        if t.step == ST_RUNNER:
            d = action - A_RUN
            return f"runner {d:+d}: space {(t.number + d) % self.cfg.spaces + 1}"
        if action == A_CW:
            return "clockwise"
        if action == A_CCW:
            return "counter-clockwise (sorter)"
        cdef int tried = 0, sp
        if action == A_TO or action == A_FROM:
            sp = self.probe(t.number, t.ccw, action == A_TO, &tried)
            bonus = self.cfg.lift_bonus if t.card == SPEC + K_LIFT else 0
            side = self.cfg.ability[self.s.half][sp]
            return (f"{'to' if action == A_TO else 'from'} the factory: space {sp + 1} "
                    f"({ABILITY_NAMES[side]}), capacity {tried + bonus}")
        if A_SHIFT_ADD <= action < A_SHIFT_REMOVE:
            return f"shift change: add a pawn on space {action - A_SHIFT_ADD + 1}"
        if A_SHIFT_REMOVE <= action < A_STOP:
            return f"shift change: remove the pawn from space {action - A_SHIFT_REMOVE + 1}"
        if action == A_STOP:
            if t.step == ST_TRANSPORT:
                return "stop transporting"
            return f"leave the {ABILITY_NAMES[t.ability]} unused"
        if action == A_MIX:
            return "mix a sugar and a cacao into a chocolate"
        if A_SELL <= action < A_SELL + N_GOODS:
            return f"sell a {GOODS[action - A_SELL]} at the outlet"
        if action == A_RECRUIT:
            return f"pay {self.cfg.break_cost} coin to recruit a specialist"
        if A_PICK <= action < A_PICK + N_KINDS:
            return f"keep the {SPECIALISTS[action - A_PICK]}"
        if A_MAKE <= action < A_MAKE + N_RECIPES:
            return f"make {RECIPES[action - A_MAKE]}"
        if A_DECO <= action < A_DECO + N_RECIPES:
            return f"decorate one {RECIPES[action - A_DECO]}"
        if action == A_DECO_ALL:
            return f"pay {self.cfg.deco_all_cost} coin to decorate every candy"
        if A_DISCARD <= action < A_DISCARD + N_KINDS:
            return f"discard the {SPECIALISTS[action - A_DISCARD]}"
        if action == A_SPACE_FIRST or action == A_MACHINE_FIRST:
            space = f"the space's {ABILITY_NAMES[self.cfg.ability[self.s.half][t.space]]}"
            machine = f"the machinist's {ABILITY_NAMES[MACHINE_OF[self.s.half]]}"
            first, then = (space, machine) if action == A_SPACE_FIRST else (machine, space)
            return f"{first} first, then {then}"
        code = action - A_MOVE
        g, tr, stacked = (code >> 1) // N_TRUCKS, (code >> 1) % N_TRUCKS, code & 1
        truck = f"truck {TRUCKS[tr]}"
        if t.step == ST_LOAD:
            where = f"setup -> {truck}"
        elif self.s.half == 0 and t.to:
            where = "pile -> warehouse"
        elif t.to:
            where = f"{truck} -> warehouse"
        else:
            where = f"warehouse -> {truck}"
        return f"move a {GOODS[g]}: {where}" + (" (stacked)" if stacked else "")

    def _box(self, Box b):
        out = {GOODS[g]: b.n[g] for g in range(N_GOODS) if b.n[g]}
        stacks = {GOODS[g]: b.stacks[g] for g in range(N_GOODS) if b.stacks[g]}
        if stacks:
            out["stacks"] = stacks
        return out

    def _public(self, int p):
        g = self.s.g[p]
        out = {
            "warehouse": self._box(g.wh),
            "trucks": {TRUCKS[t]: self._box(g.truck[t]) for t in range(N_TRUCKS)},
            "coins": g.coins,
            "whistle": bool(g.whistle),
            "hand_size": g.hand_len,
            "deck_size": g.deck_len,
            "played": [self.card_name(k) for k in range(N_CARD_IDS) for _ in range(self.s.c[p].played[k])],
            "uncovered_icons": man_icons(&self.cfg, &self.s.g[p]),
            "standing": self.standing(p),
        }
        if self.cfg.variant == V_FULL:
            # Played face up in the Plantation and kept at the transition: public (the
            # candy-only specialists are shuffled in unseen, so not shown there).
            c = self.s.c[p]
            out["kept"] = {SPECIALISTS[k]: c.kept[k] for k in range(N_KINDS) if c.kept[k]}
        return out

    def _turn(self, bint mine):
        t = self.s.t
        return {
            "step": STEP_NAMES[t.step],
            "card": self.card_name(t.card) if t.card >= 0 else None,
            "number": t.number + 1,
            "counter_clockwise": bool(t.ccw),
            "to": bool(t.to),
            "space": t.space + 1 if t.space >= 0 else None,
            "capacity_left": t.cap_left,
            "ability": ABILITY_NAMES[t.ability],
            # What comes after the step at hand: the stage reached (0..2, see
            # stages_from), the Machinist's order and whether a shift change's visit
            # goes back to the to/from choice. Two turns at the same ability can differ
            # only there (the space's ability first, or the machine first).
            "stage": t.stage,
            "machine_first": bool(t.machine_first),
            "shift_visit": bool(t.shift_visit),
            "recipe": RECIPES[t.recipe] if t.recipe >= 0 else None,
            "uses_left": t.uses_left,
            "looking_at": [SPECIALISTS[t.look[i]] for i in range(t.n_look)] if mine else t.n_look,
        }

    def _common(self):
        return {
            "half": ("plantation", "candy")[self.s.half],
            "to_move": self.s.to_move,
            "die": self.s.die + 1,
            "board": [i + 1 for i in range(self.cfg.spaces) if (self.s.board >> i) & 1],
            "recipes": [RECIPES[r] for r in range(N_RECIPES) if ((self.s.in_play >> r) & 1)],
            "candy_supply": {RECIPES[r]: self.s.candy_supply[r] for r in range(N_RECIPES) if ((self.s.in_play >> r) & 1)},
            "piles": {"sugar": self.s.sugar_pile, "cacao": self.s.cacao_pile,
                      "coins": self.s.coin_pile, "pawns": self.s.pawn_pile},
            "specialist_deck_size": self.s.spec_len,
        }

    def observation(self, int seat):
        """What `seat` may see, as plain Python values."""
        c = self.s.c[seat]
        out = self._common()
        out["seat"] = seat
        out["hand"] = [self.card_name(c.hand[i]) for i in range(self.s.g[seat].hand_len)]
        out["players"] = [self._public(p) for p in range(self.cfg.n_players)]
        out["turn"] = self._turn(seat == self.s.to_move)
        return out

    def to_dict(self):
        """The whole state (hidden parts included), for traces."""
        out = self._common()
        out["players"] = []
        for p in range(self.cfg.n_players):
            d = self._public(p)
            c = self.s.c[p]
            d["hand"] = [self.card_name(c.hand[i]) for i in range(self.s.g[p].hand_len)]
            d["deck"] = [self.card_name(c.deck[i]) for i in range(self.s.g[p].deck_len)]
            d["kept"] = {SPECIALISTS[k]: c.kept[k] for k in range(N_KINDS) if c.kept[k]}
            out["players"].append(d)
        out["specialist_deck"] = [SPECIALISTS[self.s.spec[i]] for i in range(self.s.spec_len)]
        out["turn"] = self._turn(True)
        return out

    def render(self):
        """A few readable lines: the board, then each seat's hand, warehouse and trucks."""
        d = self.to_dict()
        marks = "".join("o" if (self.s.board >> i) & 1 else "." for i in range(self.cfg.spaces))
        lines = [f"{self.phase_label()}: board [{marks}] die {d['die']}, recipes: {', '.join(d['recipes'])}"]
        for p, pl in enumerate(d["players"]):
            trucks = "  ".join(f"{k}{pl['trucks'][k] or '{}'}" for k in pl["trucks"])
            lines.append(f"  seat {p}: hand [{' '.join(pl['hand'])}] deck {len(pl['deck'])} "
                         f"coins {pl['coins']} warehouse {pl['warehouse'] or '{}'} trucks {trucks} "
                         f"({pl['standing']} points)")
        return "\n".join(lines)

    def set_position(self, *, int half=0, int to_move=0, int die=1, board=(), hands=None,
                     decks=None, warehouses=None, trucks=None, coins=None, whistle=None,
                     played=None, kept=None, recipes=None, spec_deck=None, int first=0,
                     last_mover=None):
        """Lay out a hand-built position, `to_move` about to play a card. Spaces and the die
        are 1-based; cards are "1".."8" or specialist names; decks and spec_deck list
        bottom to top; boxes are {good: count, "stacks": {good: pairs}}; trucks are
        {truck name: box} per seat; played lists the specialists played this half (the
        numbered cards in no hand or deck count as played); kept gives the specialists
        carried into the Candy Factory. Piles hold what is not placed; without spec_deck
        the unplaced specialists form the deck in canonical order, with it they are out
        of the game. Raises ValueError if a component runs short."""
        cdef int p, k, i, n = self.cfg.n_players
        cdef Cards* cd
        cdef Goods* g
        seats = range(n)
        hands = hands or [[] for _ in seats]
        decks = decks or [[] for _ in seats]
        warehouses = warehouses or [{} for _ in seats]
        trucks = trucks or [{} for _ in seats]
        coins = coins or [0] * n
        whistle = whistle or [False] * n
        played = played or [[] for _ in seats]
        kept = kept or [{} for _ in seats]
        if recipes is None:
            recipes = RECIPES[:self.cfg.recipes_drawn]
        memset(&self.s, 0, sizeof(Man))
        rng_seed(&self.s.rng, 0)
        self.s.half = half
        self.s.die = die - 1
        for sp in board:
            self.s.board |= 1u << (sp - 1)
        self.s.pawn_pile = self.cfg.pawns - len(board)
        for r in recipes:
            self.s.in_play |= 1u << RECIPES.index(r)
        spec_left = [self.cfg.spec_total[k] for k in range(N_KINDS)]
        for p in seats:
            cd = &self.s.c[p]
            g = &self.s.g[p]
            g.hand_len = len(hands[p])
            for i, name in enumerate(hands[p]):
                cd.hand[i] = self._card_id(name)
            g.deck_len = len(decks[p])
            for i, name in enumerate(decks[p]):
                cd.deck[i] = self._card_id(name)
            for i in range(self.cfg.spaces):
                cd.played[i] = 1
            for i in list(cd.hand[:g.hand_len]) + list(cd.deck[:g.deck_len]):
                if i < SPEC:
                    cd.played[i] -= 1
                else:
                    spec_left[i - SPEC] -= 1
            for name in played[p]:
                cd.played[SPEC + SPECIALISTS.index(name)] += 1
                spec_left[SPECIALISTS.index(name)] -= 1
            for name, v in kept[p].items():
                cd.kept[SPECIALISTS.index(name)] = v
            if min(cd.played[i] for i in range(self.cfg.spaces)) < 0:
                raise ValueError(f"seat {p} holds a numbered card twice")
            fill_box(&g.wh, warehouses[p], self.cfg.warehouse, f"seat {p} warehouse")
            for name, box in trucks[p].items():
                k = TRUCKS.index(name)
                fill_box(&g.truck[k], box, self.cfg.truck_cap[k], f"seat {p} truck {name}")
            g.coins = coins[p]
            g.whistle = whistle[p]
        if spec_deck is not None:
            self.s.spec_len = len(spec_deck)
            for i, name in enumerate(spec_deck):
                self.s.spec[i] = SPECIALISTS.index(name)
                spec_left[self.s.spec[i]] -= 1
            for k in range(N_KINDS):
                self.s.spec_out[k] = spec_left[k]
        else:
            for k in range(N_KINDS):
                for _ in range(spec_left[k]):
                    self.s.spec[self.s.spec_len] = k
                    self.s.spec_len += 1
        if min(spec_left) < 0:
            raise ValueError(f"more specialists placed than exist: {dict(zip(SPECIALISTS, spec_left))}")
        self.s.sugar_pile = self.cfg.supply_sugar
        self.s.cacao_pile = self.cfg.supply_cacao
        self.s.coin_pile = self.cfg.supply_coins
        for r in range(N_RECIPES):
            self.s.candy_supply[r] = self.cfg.candy_tokens if ((self.s.in_play >> r) & 1) else 0
        for p in seats:
            g = &self.s.g[p]
            self.s.coin_pile -= g.coins + (self.cfg.shift_cost if g.whistle else 0)
            for b in [g.wh] + [g.truck[k] for k in range(N_TRUCKS)]:
                self.s.sugar_pile -= b["n"][SUGAR]
                self.s.cacao_pile -= b["n"][CACAO] + b["n"][CHOC]
                for r in range(N_RECIPES):
                    self.s.candy_supply[r] -= b["n"][PLAIN + r] + b["n"][DECO + r]
        if min(self.s.sugar_pile, self.s.cacao_pile, self.s.coin_pile, self.s.pawn_pile,
               *[self.s.candy_supply[r] for r in range(N_RECIPES)]) < 0:
            raise ValueError("more tokens placed than the supply holds (or candy of a recipe not in play)")
        self.s.first = first
        self.s.last_mover = to_move if last_mover is None else last_mover
        self.s.interims_done = 1 if (half == 1 and self.cfg.variant == V_FULL) else 0
        self.begin_turn(to_move)
        self.assert_valid()


# ---- the greedy bot's shortcut (see strategies/greedy.pyx) ----

from cpython.pycapsule cimport PyCapsule_New
from libc.limits cimport INT_MIN


cdef int standings_after(GameState state, int seat, const int* legal, int n, int* out) noexcept nogil:
    # The cast in argument position borrows the reference (no GIL needed).
    return choices_after(<ManfrediniState>state, seat, legal, n, out)


cdef int choices_after(ManfrediniState st, int seat, const int* legal, int n, int* out) noexcept nogil:
    # A seat's standing is the score of its trucks and coins (man_score), and only its
    # own actions change those: a transport move or a candy-only load (a truck), a shift
    # change, an outlet sale, a Break Room recruit and decorating all candy (coins).
    # What the engine does by itself after an action (passing stages, ending the turn,
    # the half or the game, the transition) moves warehouse goods, pawns and cards, never
    # a truck or the seat's coins. So each action's standing is the score after its own
    # effect, made on the spot and undone: no action is left to be played. Action codes
    # are unique across steps except a move, which is read with the step.
    cdef Goods* g = &st.s.g[seat]
    cdef Pending* t = &st.s.t
    cdef int coins = g.coins, i, a, code, tr, good, now
    cdef Box box
    if st.s.to_move != seat:
        for i in range(n):
            out[i] = INT_MIN
        return 0
    now = man_score(&st.cfg, g)
    for i in range(n):
        a = legal[i]
        if a >= A_MOVE:
            if t.step == ST_TRANSPORT and st.s.half == 0 and t.to:
                out[i] = now    # from the piles into the warehouse
                continue
            code = (a - A_MOVE) >> 1
            tr = code % N_TRUCKS
            good = code // N_TRUCKS
            box = g.truck[tr]
            if t.step == ST_TRANSPORT and t.to:
                take(&g.truck[tr], good)
            else:
                put(&g.truck[tr], good, (a - A_MOVE) & 1)
            out[i] = man_score(&st.cfg, g)
            g.truck[tr] = box
            continue
        if a >= A_SHIFT_ADD and a < A_STOP:
            g.coins -= st.cfg.shift_cost
        elif a >= A_SELL and a < A_SELL + N_GOODS:
            g.coins += (st.cfg.outlet_coins[st.s.half] if st.cfg.outlet_coins[st.s.half] < st.s.coin_pile
                        else st.s.coin_pile)
        elif a == A_RECRUIT:
            g.coins -= st.cfg.break_cost
        elif a == A_DECO_ALL:
            g.coins -= st.cfg.deco_all_cost
        else:
            out[i] = now
            continue
        out[i] = man_score(&st.cfg, g)
        g.coins = coins
    return 0


cdef int determinize_draws(GameState state, int seat) noexcept nogil:
    return draws_of(<ManfrediniState>state, seat)


cdef int draws_of(ManfrediniState st, int o) noexcept nogil:
    # The draws determinize(o, rng) takes from rng, counted as it deals without dealing:
    # one per two cards of each shuffle (shuffle_i8: the unseen pool, each of o's groups,
    # each seat's hidden hand and deck), then one to seed the chance stream. -1 where
    # the deal itself decides how many (candy-only's late specialists: spare_opening).
    cdef signed char* where[MAX_SPEC + MAX_SEATS * (MAX_HAND + MAX_DECK) + MAX_LOOK]
    cdef int off[MAX_SPEC + MAX_SEATS * (MAX_HAND + MAX_DECK) + MAX_LOOK]
    cdef int tag[MAX_SPEC + MAX_SEATS * (MAX_HAND + MAX_DECK) + MAX_LOOK]
    cdef int held[MAX_GROUPS][N_KINDS]
    cdef int p, i, g, k, n, m, ns = 0, draws
    cdef Cards* cd
    if st.s.half == 1 and st.cfg.variant == V_CANDY and st.cfg.co_hand_first:
        return -1
    n = st.spec_slots(o, where, off, tag)
    memset(held, 0, sizeof(held))
    for i in range(n):
        if tag[i] == T_UNSEEN:
            ns += 1
        else:
            held[tag[i] - T_GROUP][where[i][0] - off[i]] += 1
    for g in range(st.s.n_grp[o]):
        for k in range(N_KINDS):
            if held[g][k] > st.s.grp[o][g][k]:
                ns += held[g][k] - st.s.grp[o][g][k]
    draws = ns >> 1
    for g in range(st.s.n_grp[o]):
        m = 0
        for k in range(N_KINDS + 1):
            m += st.s.grp[o][g][k]
        draws += m >> 1
    for p in range(st.cfg.n_players):
        cd = &st.s.c[p]
        m = st.s.g[p].deck_len
        if p != o:
            for i in range(st.s.g[p].hand_len):
                m += st.hidden_in_hand(cd, i)
        draws += m >> 1
    return draws + 1


STANDINGS_AFTER = PyCapsule_New(<void*>standings_after, b"chocosim.standings_after", NULL)
DETERMINIZE_DRAWS = PyCapsule_New(<void*>determinize_draws, b"chocosim.determinize_draws", NULL)
