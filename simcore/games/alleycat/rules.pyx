# cython: language_level=3
"""Chocolate Factory (Matthew Dunstan, Brett J. Gilbert; Alley Cat Games): the rules engine.

A day is: prepare (coal, display), a snake draft of packets, every factory run shift by
shift in turn order, Corner Shop and Department Store orders in turn order, Department
Store Agents, cleanup. Each complex choice is a sequence of small decisions (see Sub in
rules.pxd); every action code means one thing (see the A_* codes).
"""
cimport cython
from libc.string cimport memset, memcpy
from libc.stdint cimport uint64_t

cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil

from simcore.rng cimport Rng, rng_seed, rng_next, rng_below, shuffle_i8
from simcore.state cimport GameState
from simcore.seen cimport seen_move, seen_one, seen_all, seen_key

# What the outcomes a seat sees are, in its Seen record (simcore/seen.pxd): kind + value.
cdef enum:
    SEEN_PART = 1 << 24     # + place * 4096 + 1 + the part dealt there (0: none)
    SEEN_EMP = 2 << 24      # + place * 4096 + 1 + the employee dealt there (0: none)
    SEEN_DEMAND = 3 << 24   # + place * 4096 + each Demand face up (solo)
    SEEN_OFFER = 4 << 24    # + size * 4096 + 1 + the order drawn of that size (0: none left)
    SEEN_TAKEN = 5 << 24    # + the order another seat took from its offer
from simcore.batchjob cimport BatchJob
from simcore.strategy cimport Lineup

from pathlib import Path

from simcore.games.alleycat.params import (
    PIECES, STORES, STORE_TITLES, SIZES, EMPLOYEES, STORE_RULES, GOAL_KINDS,
    parse_option, parse_order, parse_store, parse_card, AlleyCatParams, final_day_order)
from simcore.meta import FeatureRoles

__all__ = ["AlleyCatState"]

# The state built last with a config converted from its params (see __init__).
_last_built = None

# The upgrade steps of the bookkeeping board: bean > cocoa > bar > wrapped > boxed, with
# the kind of bar or wrapped chosen.
cdef int[N_UPGRADES] UPG_FROM = [0, 1, 1, 2, 2, 3, 3, 4, 5]
cdef int[N_UPGRADES] UPG_TO = [1, 2, 3, 4, 5, 4, 5, 6, 6]
cdef int[N_PIECES] STAGE_OF = [0, 1, 2, 2, 3, 3, 4]
cdef int[N_PIECES] NONE_HELD = [0, 0, 0, 0, 0, 0, 0]
KIND_NAMES = ("converter", "upgrader", "repeater", "chute")


cdef int upg_from(int k) noexcept nogil:
    return UPG_FROM[k]


cdef int upg_to(int k) noexcept nogil:
    return UPG_TO[k]


cdef int stage_of(int piece) noexcept nogil:
    return STAGE_OF[piece]


cdef bint match_rec(const int* masks, int n, short* c) noexcept nogil:
    # Backtracking over at most MAX_SYMBOLS symbols and 7 kinds: tiny, and exact even
    # when classes overlap (a bar symbol next to a chunks symbol).
    cdef int t, m
    cdef bint ok
    if n == 0:
        return True
    m = masks[0]
    for t in range(N_PIECES):
        if (m >> t) & 1 and c[t] > 0:
            c[t] -= 1
            ok = match_rec(masks + 1, n - 1, c)
            c[t] += 1
            if ok:
                return True
    return False


cdef bint can_match(const int* masks, int n, const short* counts) noexcept nogil:
    cdef short c[N_PIECES]
    cdef int t
    if n == 1:
        # Most inputs are one piece: no search needed.
        for t in range(N_PIECES):
            if (masks[0] >> t) & 1 and counts[t] > 0:
                return True
        return False
    memcpy(c, counts, sizeof(c))
    return match_rec(masks, n, c)


cdef inline int total(const short* c) noexcept nogil:
    cdef int t, n = 0
    for t in range(N_PIECES):
        n += c[t]
    return n


cdef inline int present(const short* c) noexcept nogil:
    # Bit t set when the square holds a piece of kind t.
    cdef int t, m = 0
    for t in range(N_PIECES):
        if c[t] > 0:
            m |= 1 << t
    return m


cdef bint steps_fit(int* track, const int* steps, const int* count, const int* store, int n) noexcept nogil:
    # Whether the step objectives [0, n) can all be paid from `track`, each from its own
    # stores: a named store, or `count` different stores of the player's choice. Named
    # ones come first in the lists, so when the rest are tried stores differ only by
    # their track and a choice among stores at the same position is made in index order.
    cdef int m, z, y, picked
    cdef bint ok
    if n == 0:
        return True
    if store[0] >= 0:
        if track[store[0]] < steps[0]:
            return False
        track[store[0]] -= steps[0]
        ok = steps_fit(track, steps + 1, count + 1, store + 1, n - 1)
        track[store[0]] += steps[0]
        return ok
    for m in range(1, 1 << N_STORES):
        picked = 0
        ok = True
        for z in range(N_STORES):
            if (m >> z) & 1:
                picked += 1
                if track[z] < steps[0]:
                    ok = False
                for y in range(z):
                    if not (m >> y) & 1 and track[y] == track[z]:
                        ok = False
        if not ok or picked != count[0]:
            continue
        for z in range(N_STORES):
            if (m >> z) & 1:
                track[z] -= steps[0]
        ok = steps_fit(track, steps + 1, count + 1, store + 1, n - 1)
        for z in range(N_STORES):
            if (m >> z) & 1:
                track[z] += steps[0]
        if ok:
            return True
    return False


cdef void fill_card(AcCard* card, text):
    goals = parse_card(text)
    card.n_goals = len(goals)
    card.supply = -1
    for i, g in enumerate(goals):
        card.goal[i].kind = GOAL_KINDS.index(g["kind"])
        card.goal[i].amount = g["amount"]
        card.goal[i].size = g["size"]
        card.goal[i].stores = g["stores"]
        card.goal[i].store = g["store"]
        card.goal[i].rule = g["rule"]
        card.goal[i].mask = g["mask"]
        for t in range(N_PIECES):
            card.goal[i].need[t] = g["need"][t]
        if g["kind"] == "supply":
            card.supply = i


cdef bint part_can_work(const AcPart* k, const short* c, int kinds) noexcept nogil:
    # Whether part k can do anything with the pieces c (whose kinds are `kinds`): the
    # shift menu asks this of every slot at every decision, so one-piece inputs are a
    # bit test.
    cdef int o
    if kinds == 0:
        return False
    if k.kind == K_CONVERTER:
        for o in range(k.n_options):
            if k.n_in[o] == 1:
                if kinds & k.in_mask[o][0]:
                    return True
            elif can_match(k.in_mask[o], k.n_in[o], c):
                return True
        return False
    if k.kind == K_UPGRADER:
        return (kinds & ~(1 << BOXED)) != 0
    return True


cdef inline int shuffle_draws(int n) noexcept nogil:
    # The numbers shuffle_i8 draws for n cards: one per two swaps, n - 1 swaps.
    return n // 2 if n > 1 else 0


cdef void reshuffle(Rng* rng, signed char* a, int n) noexcept nogil:
    # Sort, then shuffle: the draw depends on which cards are hidden, not on how they lay.
    # Card ids are distinct and below 128: sorted through a bitmap (the search bots
    # determinize at every iteration); anything else by insertion.
    cdef int i, j
    cdef signed char x
    cdef uint64_t bits[2]
    bits[0] = 0
    bits[1] = 0
    for i in range(n):
        x = a[i]
        if x < 0 or (bits[x >> 6] >> (x & 63)) & 1:
            break
        bits[x >> 6] |= (<uint64_t>1) << (x & 63)
    else:
        i = 0
        for j in range(2):
            while bits[j]:
                a[i] = <signed char>(64 * j + __builtin_ctzll(bits[j]))
                bits[j] &= bits[j] - 1
                i += 1
        shuffle_i8(rng, a, n)
        return
    for i in range(1, n):
        x = a[i]
        j = i
        while j > 0 and a[j - 1] > x:
            a[j] = a[j - 1]
            j -= 1
        a[j] = x
    shuffle_i8(rng, a, n)


ctypedef fused Game:
    AlleyCatState
include "simcore/loop.pxi"


@cython.final
cdef class AlleyCatState(GameState):
    """Chocolate Factory (Alley Cat Games), 2 to 4 players, or the Factory Manager solo
    game with 1."""

    NAME = "alleycat"
    TITLE = "Chocolate Factory (Alley Cat Games)"
    PLAYERS = (1, 4)
    PARAMS = AlleyCatParams
    DEFAULTS = Path(__file__).parent / "data" / "rules.toml"
    FEATURE_ROLES = FeatureRoles(
        # Money by source adds up to the score (less compensation.points); the solo
        # objectives are the result.
        outcomes=("money_*", "stages_completed", "target_met", "demand_*_met", "objectives",
                  "objectives_met", "failed_*"),
        setup=("target", "demand_*"),
        behaviours=("day*_slot", "day*_employee", "covered_*", "orders_*"),
        # A store's track position, final place on it and supplies sold there.
        same_information=(r"(store_.+)_(?:track|place|supplies)",),
    )
    # None: no amount of the rules depends on turn order (README, "Turn order").
    POSITION_KNOBS = {}
    # The most money; a tie goes to the seat later in the final day's turn order. The
    # solo week is won or lost on its objectives.
    TIE_BREAKS = (final_day_order,)
    WON_IN_PLAY = ("solo_win", "solo_loss")
    END_REASONS = ("scoring", "solo_win", "solo_loss")
    # Each pending decision (observation()["decision"]) and the words every description
    # of its answers begins with (describe).
    DECISIONS = {
        "packet": ("take ",), "pick": ("keep ",), "place": ("place ",), "assign": ("assign the ",),
        "before the push": ("load and push the first tile", "use the "),
        "shift": ("operate ", "trade ", "use the ", "end the shift"),
        "target square": ("work on square ",), "option": ("option ",), "input": ("use ",),
        "output": ("make ",), "upgrade": ("upgrade ", "stop upgrading"), "copy": ("copy ",),
        "chute": ("chute to the store room: ",), "employee square": ("the ",),
        "move piece": ("move ",), "move to": ("to square ", "leave it on its square"),
        "orders": ("fulfil ", "skip (Clerk) ", "supply ", "done with orders"),
        "supply": ("supply ", "finish the supply"), "shop agent piece": ("pay the stage with ",),
        "dealer omit": ("do the stage without ",), "store agent": ("supply ", "no extra supply"),
        "keep": ("keep overnight: ",), "replace order": ("keep the ",),
        "chocolate order": ("supply ",), "supply as": ("supply as ",), "employee part": ("operate ",),
    }
    INVARIANTS = (
        "coal, money and chocolate counts are never negative",
        "each part is operated at most once a shift (the Chute excepted; twice by the Helpers)",
        "the belt keeps its length: tiles waiting and pushed out add up to the day's tiles",
        "store tracks stay within 0 .. track",
        "every part is in exactly one place (deck, display, a factory, covered, discarded)",
        "every employee card is in exactly one place (deck, display, a player, discarded)",
        "every Corner Shop order is in exactly one place (deck, on offer, held, completed)",
        "the seat to move is a player while the game runs and none once it is over",
        "held orders are at a stage within them",
        "solo: the Demands revealed are within those in play, one more each day to Friday",
    )

    def __init__(self, params):
        global _last_built
        self.params = params
        cdef AcConfig* c = &self.cfg
        cdef int i, k, o, j, z
        cdef AlleyCatState last = _last_built
        if last is not None and last.params is params:
            # The params are frozen: the config converted for them last time stands
            # (copy() builds a state per copy; parsing them is most of its cost).
            self.cfg = last.cfg
            self.n_players = last.n_players
            self.n_features = last.n_features
            self.n_interim = last.n_interim
            self.reset(0)
            return
        memset(&self.cfg, 0, sizeof(AcConfig))
        n = params.players
        self.n_players = n
        c.n = n
        c.days = len(params.coal_per_day)
        for i in range(c.days):
            c.coal_day[i] = params.coal_per_day[i]
            c.deck_day[i] = 0 if params.deck_per_day[i] == "A" else 1
        # Solo has no packets: every card of the display is on offer (see begin_day).
        sizes = [DISPLAY] if n == 1 else getattr(params.packets, f"players_{n}")
        c.n_packets = n
        for i in range(n):
            c.packet[i] = sizes[i]
        f = params.factory
        c.squares = f.squares
        c.slots = 2 * f.squares
        c.shifts = f.shifts
        c.beans = f.beans_per_load
        c.keep = params.solo.keep if n == 1 else f.keep
        c.coal_per_choc = f.coal_per_chocolate
        all_parts = self._all_parts()
        c.n_parts = len(all_parts)
        c.n_printed = len(params.parts.printed)
        # Each deck's ids are contiguous: its own parts, then the expansion's. The first
        # a_count of the shuffled deck are in play, the rest went back to the box.
        ex = params.master_chocolatier
        removed = params.expansion.removed if ex else 0
        c.a_first = c.n_printed
        c.a_total = len(params.parts.deck_a) + (len(params.expansion.deck_a) if ex else 0)
        c.a_count = c.a_total - removed
        c.b_first = c.a_first + c.a_total
        c.b_total = len(params.parts.deck_b) + (len(params.expansion.deck_b) if ex else 0)
        c.b_count = c.b_total - removed
        for i, part in enumerate(all_parts):
            c.parts[i].coal = part.coal
            c.parts[i].n_options = len(part.does)
            for o, text in enumerate(part.does):
                kind, amount, ins, outs, moves = parse_option(text)
                c.parts[i].kind = KIND_NAMES.index(kind)
                c.parts[i].amount = amount
                c.parts[i].moves[o] = moves
                c.parts[i].n_in[o] = len(ins)
                c.parts[i].n_out[o] = len(outs)
                for j, m in enumerate(ins):
                    c.parts[i].in_mask[o][j] = m
                for j, m in enumerate(outs):
                    c.parts[i].out_mask[o][j] = m
        for i, part in enumerate(params.parts.printed):
            c.printed_slot[i] = part.slot
        e = params.employees
        k = 0
        for z, store in enumerate(STORES):
            deck = getattr(e.decks, store)
            c.emp_deck_first[z] = k
            c.emp_deck_len[z] = len(deck)
            for name in deck:
                c.emp_kind[k] = EMPLOYEES.index(name)
                c.emp_store[k] = z
                k += 1
        ex = params.expansion
        c.n_emp_decks = N_STORES
        if params.master_chocolatier:
            c.n_emp_decks = N_STORES + 1
            c.emp_deck_first[EXTRA_DECK] = k
            c.emp_deck_len[EXTRA_DECK] = len(ex.employees)
            for name in ex.employees:
                c.emp_kind[k] = EMPLOYEES.index(name)
                c.emp_store[k] = -1
                k += 1
        sizes = ([c.n_emp_decks] if n == 1 else
                 getattr(ex.packets if params.master_chocolatier else params.packets, f"players_{n}"))
        for i in range(n):
            c.emp_packet[i] = sizes[i]
        c.owner_uses = ex.owner_uses
        c.helpers_uses = ex.helpers_uses
        c.prodigy_upgrades = ex.prodigy_upgrades
        c.n_emp_cards = k
        c.director_mult = e.director_multiplier
        c.miner_coal = e.miner_coal
        c.expert_miner_coal = e.expert_miner_coal
        c.operator_moves = e.operator_moves
        c.expert_operator_moves = e.expert_operator_moves
        c.salesman_bonus = e.salesman_bonus
        c.clerk_skips = e.clerk_skips
        c.decorator_upgrades = e.decorator_upgrades
        c.mechanic_div = e.mechanic_divisor
        c.shop_agent_uses = e.shop_agent_uses
        c.dealer_uses = e.dealer_uses
        c.dealer_fewer = e.dealer_fewer
        c.engineer_shifts = e.engineer_shifts
        c.supervisor_beans = e.supervisor_beans
        c.packer_uses = e.packer_uses
        c.technician_coal = e.technician_coal
        c.agent_saturday = e.store_agent_saturday
        c.act_before_push = e.act_before_push
        k = 0
        for z, size in enumerate(SIZES):
            texts = getattr(params.orders, size)
            c.order_first[z] = k
            c.order_count[z] = len(texts)
            for text in texts:
                c.orders[k].size = z
                stages = parse_order(text)
                c.orders[k].n_stages = len(stages)
                for j, (pieces, money) in enumerate(stages):
                    c.orders[k].n_pieces[j] = len(pieces)
                    c.orders[k].money[j] = money
                    for t in pieces:
                        c.orders[k].need[j][t] += 1
                k += 1
        c.n_orders = k
        c.n_start = len(params.orders.start)
        for i, size in enumerate(params.orders.start):
            c.start_size[i] = SIZES.index(size)
        st = params.stores
        c.sides_random = st.sides == "random"
        if not c.sides_random:
            letters = st.sides * 5 if len(st.sides) == 1 else st.sides
            for z in range(N_STORES):
                c.sides[z] = "ABCD".index(letters[z])
        for z, store in enumerate(STORES):
            side = getattr(st, store)
            for j, text in enumerate((side.a, side.b, side.c, side.d)):
                rule, mask, per, pairs = parse_store(text)
                c.side[z][j].rule = STORE_RULES.index(rule)
                c.side[z][j].mask = mask
                c.side[z][j].per = per
                c.side[z][j].n_pairs = len(pairs)
                for i, (m, steps) in enumerate(pairs):
                    c.side[z][j].pair_mask[i] = m
                    c.side[z][j].pair_steps[i] = steps
        c.track = st.track
        c.n_awards = len(st.awards)
        for i, money in enumerate(st.awards):
            c.awards[i] = money
        c.follow_div = st.follow_divisor
        for i, money in enumerate(st.diversity):
            c.diversity[i] = money
        c.most_orders = params.scoring.most_orders
        c.per_choc = params.scoring.per_chocolate
        c.per_coal = params.scoring.per_coal
        for i, money in enumerate(params.compensation.by_position(n)):
            c.komi[i] = money
        so = params.solo
        c.solo = n == 1
        c.initial = so.initial_demands
        c.daily = so.daily_demands
        for i in range(MAX_DAYS):
            c.discard[i] = STORES.index(so.discard[i]) if i < len(so.discard) else -1
        c.n_targets = len(so.targets)
        for i, text in enumerate(so.targets):
            fill_card(&c.targets[i], text)
        c.n_demands = len(so.demands)
        for i, text in enumerate(so.demands):
            fill_card(&c.demands[i], text)
        self.n_features = len(self.feature_names())
        self.n_interim = c.days
        self.reset(0)
        _last_built = self

    cdef int play_batch(self, object lineup, BatchJob* job) except -1 nogil:
        return play_games(self, <Lineup>lineup, job)

    cdef int play_out(self, Rng* rng, int depth) except -2 nogil:
        return play_out_uniform(self, rng, depth)

    # ---- setup and the day (nogil) ----

    cdef void reset(self, uint64_t seed) noexcept nogil:
        cdef AcConfig* c = &self.cfg
        cdef int p, i, z
        cdef signed char tmp[MAX_ORDERS]
        memset(&self.s, 0, sizeof(Ac))
        rng_seed(&self.s.rng, seed)
        for z in range(N_STORES):
            if c.sides_random:
                self.s.side[z] = rng_below(&self.s.rng, 2)
            else:
                self.s.side[z] = c.sides[z]
        for i in range(c.a_total):
            self.s.deck_a[i] = c.a_first + i
        for i in range(c.b_total):
            self.s.deck_b[i] = c.b_first + i
        shuffle_i8(&self.s.rng, self.s.deck_a, c.a_total)
        shuffle_i8(&self.s.rng, self.s.deck_b, c.b_total)
        for z in range(c.n_emp_decks):
            for i in range(c.emp_deck_len[z]):
                self.s.emp_deck[z][i] = c.emp_deck_first[z] + i
            shuffle_i8(&self.s.rng, self.s.emp_deck[z], c.emp_deck_len[z])
        for z in range(N_SIZES):
            for i in range(c.order_count[z]):
                tmp[i] = i
            shuffle_i8(&self.s.rng, tmp, c.order_count[z])
            for i in range(c.order_count[z]):
                self.s.odeck[z][i] = c.order_first[z] + tmp[i]
            self.s.olen[z] = c.order_count[z]
            self.s.ounseen[z] = c.order_count[z]
        for p in range(c.n):
            for i in range(MAX_SLOTS):
                self.s.seat[p].slot[i] = -1
            for i in range(c.n_printed):
                self.s.seat[p].slot[c.printed_slot[i]] = i
            self.s.seat[p].employee = -1
            self.s.seat[p].assigned = -1
            for i in range(MAX_DAYS):
                self.s.seat[p].part_day[i] = -1
                self.s.seat[p].slot_day[i] = -1
                self.s.seat[p].emp_day[i] = -1
            for i in range(MAX_HELD_ORDERS):
                self.s.seat[p].special[i] = -1
            for i in range(c.n_start):
                self.s.seat[p].order[i] = self.draw_order(c.start_size[i])
        self.s.n_held = c.n_start
        if c.solo:
            self.deal_solo()
        self.s.start = rng_below(&self.s.rng, c.n)
        self.s.first = self.s.start
        self.begin_day()

    cdef void deal_solo(self) noexcept nogil:
        # A Weekly Target, its Special Orders (held after the regular orders, never
        # replaced), and the Demand deck whose top cards are the Initial, then the Daily
        # Demands.
        cdef AcConfig* c = &self.cfg
        cdef AcSeat* a = &self.s.seat[0]
        cdef const AcCard* t
        cdef int i
        self.s.target = rng_below(&self.s.rng, c.n_targets)
        for i in range(c.n_demands):
            self.s.demand_deck[i] = i
        shuffle_i8(&self.s.rng, self.s.demand_deck, c.n_demands)
        self.s.n_cards = 1 + c.initial + c.daily
        self.s.revealed = 1 + c.initial
        t = &c.targets[self.s.target]
        for i in range(t.n_goals):
            if t.goal[i].kind == G_SPECIAL:
                a.order[self.s.n_held] = self.draw_order(t.goal[i].size)
                a.special[self.s.n_held - c.n_start] = a.order[self.s.n_held]
                a.stage[self.s.n_held] = 0
                self.s.n_held += 1

    cdef int draw_order(self, int z) noexcept nogil:
        cdef int id
        if self.s.olen[z] == 0:
            return -1
        id = self.s.odeck[z][self.s.ohead[z]]
        self.s.ohead[z] = (self.s.ohead[z] + 1) % MAX_ORDERS
        self.s.olen[z] -= 1
        if self.s.ounseen[z] > 0:
            self.s.ounseen[z] -= 1
        return id

    cdef void order_to_bottom(self, int id, int seen) noexcept nogil:
        cdef int z = self.cfg.orders[id].size
        cdef int slot = (self.s.ohead[z] + self.s.olen[z]) % MAX_ORDERS
        self.s.odeck[z][slot] = id
        self.s.oseen[z][slot] = seen
        self.s.olen[z] += 1

    cdef int seat_at(self, int index) noexcept nogil:
        return (self.s.start + index) % self.cfg.n

    cdef int draft_seat(self, int k) noexcept nogil:
        # Clockwise from the start player, the last player twice, then back.
        cdef int n = self.cfg.n
        return self.seat_at(k if k < n else 2 * n - 1 - k)

    cdef void begin_day(self) noexcept nogil:
        cdef AcConfig* c = &self.cfg
        cdef AcSeat* a
        cdef int p, i, z, first = 0
        for p in range(c.n):
            a = &self.s.seat[p]
            a.coal += c.coal_day[self.s.day]
            a.income += c.coal_day[self.s.day]
            a.employee = -1
            a.emp_uses = 0
            a.assigned = -1
            a.supplied = False
            a.money_today = 0
            self.s.has_part[p] = False
            self.s.has_emp[p] = False
        for i in range(DISPLAY):
            if c.deck_day[self.s.day] == 0:
                self.s.disp_part[i] = self.s.deck_a[self.s.a_pos]
                self.s.a_pos += 1
            else:
                self.s.disp_part[i] = self.s.deck_b[self.s.b_pos]
                self.s.b_pos += 1
        for z in range(c.n_emp_decks):
            self.s.disp_emp[z] = self.s.emp_deck[z][self.s.emp_pos[z]]
            self.s.emp_pos[z] += 1
        for z in range(c.n_emp_decks, MAX_DISP_EMP):
            self.s.disp_emp[z] = -1
        # Solo lays a part on each store's employee, so the extra one stays out of the
        # shuffle (it gets no part and is never discarded).
        shuffle_i8(&self.s.rng, self.s.disp_emp, DISPLAY if c.solo else c.n_emp_decks)
        if c.solo:
            if self.s.day < c.daily:
                self.s.revealed += 1
            self.solo_display()
            self.see_display()
        else:
            for i in range(c.n):
                self.s.pk_first[i] = first
                self.s.pk_len[i] = c.packet[i]
                self.s.pk_taken[i] = False
                self.s.pk_taken[c.n + i] = False
                first += c.packet[i]
            first = 0
            for i in range(c.n):
                self.s.pk_first[c.n + i] = first
                self.s.pk_len[c.n + i] = c.emp_packet[i]
                first += c.emp_packet[i]
        if not c.solo:
            self.see_display()
        self.s.draft_k = 0
        self.s.phase = PH_DRAFT
        self.s.sub = S_PACKET
        self.s.to_move = self.draft_seat(0)

    cdef void see_display(self) noexcept nogil:
        # The day's display is dealt face up: every seat sees each card where it lies
        # (the draft's actions name places, not cards); in solo, the Demands face up too.
        cdef int i
        cdef int n = self.cfg.n
        for i in range(DISPLAY):
            seen_all(&self.s.seen, n, SEEN_PART + i * 4096 + self.s.disp_part[i] + 1)
        for i in range(MAX_DISP_EMP):
            seen_all(&self.s.seen, n, SEEN_EMP + i * 4096 + self.s.disp_emp[i] + 1)
        if self.cfg.solo:
            for i in range(1, self.s.revealed):
                seen_all(&self.s.seen, n, SEEN_DEMAND + i * 4096 + self.s.demand_deck[i - 1])

    cdef void solo_display(self) noexcept nogil:
        # Part i lies on employee i. The day's store's employee leaves with its part; the
        # rest close up into one packet of parts and one of employees, to take one of each.
        cdef int i, m = 0, z = self.cfg.discard[self.s.day]
        for i in range(DISPLAY):
            if z >= 0 and self.cfg.emp_store[self.s.disp_emp[i]] == z:
                self.s.emp_discard[self.s.n_emp_discard] = self.s.disp_emp[i]
                self.s.n_emp_discard += 1
                self.s.part_discard[self.s.n_part_discard] = self.s.disp_part[i]
                self.s.n_part_discard += 1
            else:
                self.s.disp_emp[m] = self.s.disp_emp[i]
                self.s.disp_part[m] = self.s.disp_part[i]
                m += 1
        for i in range(m, DISPLAY):
            self.s.disp_emp[i] = -1
            self.s.disp_part[i] = -1
        for i in range(2):
            self.s.pk_first[i] = 0
            self.s.pk_len[i] = m
            self.s.pk_taken[i] = False
        if self.cfg.n_emp_decks > N_STORES:
            self.s.disp_emp[m] = self.s.disp_emp[EXTRA_DECK]
            if m != EXTRA_DECK:
                self.s.disp_emp[EXTRA_DECK] = -1
            self.s.pk_len[1] = m + 1

    cdef void take_card(self, int p, int j, int i) noexcept nogil:
        # Keep card i of packet j; the rest of the packet leaves the game.
        cdef int n = self.cfg.n, x, card
        for x in range(self.s.pk_len[j]):
            if j < n:
                card = self.s.disp_part[self.s.pk_first[j] + x]
                self.s.disp_part[self.s.pk_first[j] + x] = -1
                if x == i:
                    self.s.p_part = card
                else:
                    self.s.part_discard[self.s.n_part_discard] = card
                    self.s.n_part_discard += 1
            else:
                card = self.s.disp_emp[self.s.pk_first[j] + x]
                self.s.disp_emp[self.s.pk_first[j] + x] = -1
                if x == i:
                    self.hire(p, card)
                else:
                    self.s.emp_discard[self.s.n_emp_discard] = card
                    self.s.n_emp_discard += 1
        if j < n:
            self.s.has_part[p] = True
            self.s.sub = S_PLACE
        else:
            self.s.has_emp[p] = True
            self.next_draft()

    cdef void hire(self, int p, int card) noexcept nogil:
        cdef AcConfig* c = &self.cfg
        cdef AcSeat* a = &self.s.seat[p]
        cdef int k = c.emp_kind[card]
        a.employee = card
        a.emp_day[self.s.day] = k
        a.emp_uses = 0
        if k == E_MINER:
            a.coal += c.miner_coal
        elif k == E_EXPERT_MINER:
            a.coal += c.expert_miner_coal
        elif k == E_OPERATOR:
            a.emp_uses = c.operator_moves
        elif k == E_EXPERT_OPERATOR:
            a.emp_uses = c.expert_operator_moves
        elif k == E_CLERK:
            a.emp_uses = c.clerk_skips
        elif k == E_DECORATOR:
            a.emp_uses = c.decorator_upgrades
        elif k == E_SHOP_AGENT:
            a.emp_uses = c.shop_agent_uses
        elif k == E_DEALER:
            a.emp_uses = c.dealer_uses
        elif k == E_PACKER:
            a.emp_uses = c.packer_uses
        elif k == E_STORE_AGENT:
            a.emp_uses = 1
        elif k == E_OWNER:
            a.emp_uses = c.owner_uses
        elif k == E_HELPERS:
            a.emp_uses = c.helpers_uses
        elif k == E_PRODIGY:
            a.emp_uses = 1

    cdef void place_part(self, int p, int slot) noexcept nogil:
        cdef AcSeat* a = &self.s.seat[p]
        if a.slot[slot] >= 0:
            a.covered[a.n_covered] = a.slot[slot]
            a.n_covered += 1
            a.covers[slot] += 1
        a.slot[slot] = self.s.p_part
        a.part_day[self.s.day] = self.s.p_part
        a.slot_day[self.s.day] = slot
        self.next_draft()

    cdef void next_draft(self) noexcept nogil:
        self.s.draft_k += 1
        if self.s.draft_k == 2 * self.cfg.n:
            self.s.phase = PH_RUN
            self.s.turn = 0
            self.begin_run()
            return
        self.s.sub = S_PACKET
        self.s.to_move = self.draft_seat(self.s.draft_k)

    cdef int emp_kind(self, int p) noexcept nogil:
        cdef int e = self.s.seat[p].employee
        return -1 if e < 0 else self.cfg.emp_kind[e]

    cdef void begin_run(self) noexcept nogil:
        cdef int p = self.seat_at(self.s.turn)
        cdef AcSeat* a = &self.s.seat[p]
        cdef int k = self.emp_kind(p), s
        a.tiles = self.cfg.shifts + (self.cfg.engineer_shifts if k == E_ENGINEER else 0)
        a.shifts_left = a.tiles
        self.s.to_move = p
        if k == E_MECHANIC or k == E_TECHNICIAN:
            for s in range(self.cfg.slots):
                if self.assignable(p, s):
                    self.s.sub = S_ASSIGN
                    return
        self.open_run(p)

    cdef void open_run(self, int p) noexcept nogil:
        # Rulebook: an employee's action may be used "at any time" of Run Factory; only
        # the parts wait for the push. So before the day's first push the player may act
        # with the employee (on pieces left overnight, even those the push would send
        # out). Nothing to decide there: the first shift starts at once.
        if self.cfg.act_before_push and self.early_action(p):
            self.s.sub = S_OPEN
            self.s.to_move = p
            return
        self.start_shift(p)

    cdef bint early_action(self, int p) noexcept nogil:
        # The employee's action before the first push: not the Owner's or the Helpers',
        # which operate parts.
        cdef int k = self.emp_kind(p)
        return k != E_OWNER and k != E_HELPERS and self.employee_action(p)

    cdef void to_menu(self, int p) noexcept nogil:
        # Back to the shift's menu once a move is done, or, before the first push, to
        # the choice of another employee action or the push.
        cdef AcSeat* a = &self.s.seat[p]
        if self.s.phase == PH_RUN and a.shifts_left == a.tiles:
            self.open_run(p)
        else:
            self.s.sub = S_MENU

    cdef bint assignable(self, int p, int s) noexcept nogil:
        # The Mechanic only helps a part that costs coal; the Technician any part.
        cdef int id = self.s.seat[p].slot[s]
        if id < 0:
            return False
        return self.emp_kind(p) == E_TECHNICIAN or self.cfg.parts[id].coal > 0

    cdef void start_shift(self, int p) noexcept nogil:
        # Load a bean tile at the entrance, push: the last square's pieces go to the
        # store room, every square moves one to the right.
        cdef AcSeat* a = &self.s.seat[p]
        cdef int q, t, last = self.cfg.squares - 1
        a.shifts_left -= 1
        for t in range(N_PIECES):
            a.store[t] += a.belt[last][t]
        for q in range(last, 0, -1):
            memcpy(a.belt[q], a.belt[q - 1], sizeof(a.belt[q]))
        memset(a.belt[0], 0, sizeof(a.belt[0]))
        a.belt[0][BEAN] = self.cfg.supervisor_beans if self.emp_kind(p) == E_SUPERVISOR else self.cfg.beans
        memset(a.ops, 0, sizeof(a.ops))
        a.helped = -1
        self.s.sub = S_MENU
        self.s.to_move = p

    cdef void end_shift(self, int p) noexcept nogil:
        cdef AcSeat* a = &self.s.seat[p]
        cdef int q, t
        memset(a.ops, 0, sizeof(a.ops))
        if a.shifts_left > 0:
            self.start_shift(p)
            return
        if self.s.day == self.cfg.days - 1:
            # Saturday: everything in the factory goes to the store room.
            for q in range(self.cfg.squares):
                for t in range(N_PIECES):
                    a.store[t] += a.belt[q][t]
                    a.belt[q][t] = 0
        self.s.turn += 1
        if self.s.turn < self.cfg.n:
            self.begin_run()
        else:
            self.begin_orders()

    # ---- operating parts ----

    cdef int operate_cost(self, int p, int slot, int square) noexcept nogil:
        cdef AcSeat* a = &self.s.seat[p]
        cdef int c = self.cfg.parts[a.slot[slot]].coal
        cdef int d = self.cfg.mechanic_div
        if a.assigned == slot and self.emp_kind(p) == E_MECHANIC:
            c = (c + d - 1) // d
        if square != slot % self.cfg.squares:
            c += self.cfg.technician_coal
        return c

    cdef int targets(self, int p, int slot, int* out) noexcept nogil:
        # The square a part works on, and the next ones with the Technician on it.
        cdef int q = slot % self.cfg.squares, n = 1
        out[0] = q
        if self.s.seat[p].assigned == slot and self.emp_kind(p) == E_TECHNICIAN:
            if q > 0:
                out[n] = q - 1
                n += 1
            if q < self.cfg.squares - 1:
                out[n] = q + 1
                n += 1
        return n

    cdef bint can_operate_on(self, int p, int slot, int q, const int* kinds) noexcept nogil:
        # kinds: the present() mask of every square.
        cdef AcSeat* a = &self.s.seat[p]
        return (a.coal >= self.operate_cost(p, slot, q)
                and part_can_work(&self.cfg.parts[a.slot[slot]], a.belt[q], kinds[q]))

    cdef bint can_operate(self, int p, int slot, const int* kinds) noexcept nogil:
        cdef AcSeat* a = &self.s.seat[p]
        cdef int id = a.slot[slot], i, n
        cdef int sq[3]
        if id < 0:
            return False
        if self.cfg.parts[id].kind != K_CHUTE and a.ops[slot] > 0:
            return False
        n = self.targets(p, slot, sq)
        for i in range(n):
            if self.can_operate_on(p, slot, sq[i], kinds):
                return True
        return False

    cdef void begin_operation(self, int p, int slot, int square) noexcept nogil:
        cdef AcSeat* a = &self.s.seat[p]
        cdef const AcPart* k = &self.cfg.parts[a.slot[slot]]
        a.coal -= self.operate_cost(p, slot, square)
        a.ops[slot] += 1
        self.s.p_slot = slot
        self.s.p_square = square
        self.s.p_part = a.slot[slot]
        self.s.p_move = k.moves[0] and k.kind != K_CONVERTER
        if k.kind == K_CONVERTER:
            if k.n_options == 1:
                self.choose_option(p, 0)
            else:
                self.s.sub = S_OPTION
        elif k.kind == K_UPGRADER:
            self.s.p_left = k.amount
            self.s.p_first = True
            self.s.sub = S_UPGRADE
        elif k.kind == K_REPEATER:
            self.s.sub = S_COPY
        else:
            self.s.sub = S_CHUTE

    cdef void choose_option(self, int p, int o) noexcept nogil:
        self.s.p_option = o
        self.s.p_sym = 0
        if self.cfg.parts[self.s.p_part].moves[o]:
            # "move": a piece of the part's square goes to another square.
            self.s.p_move = True
            self.s.sub = S_MOVE_PIECE
            return
        self.advance_inputs(p)

    cdef void advance_inputs(self, int p) noexcept nogil:
        # Take the inputs symbol by symbol; a symbol naming one kind needs no decision
        # (any matching that exists uses one of that kind for it).
        cdef const AcPart* k = &self.cfg.parts[self.s.p_part]
        cdef short* sq = self.s.seat[p].belt[self.s.p_square]
        cdef int m, o = self.s.p_option
        while self.s.p_sym < k.n_in[o]:
            m = k.in_mask[o][self.s.p_sym]
            if m & (m - 1):
                self.s.sub = S_INPUT
                return
            sq[lowest_bit(m)] -= 1
            self.s.p_sym += 1
        self.s.p_sym = 0
        self.advance_outputs(p)

    cdef void advance_outputs(self, int p) noexcept nogil:
        cdef const AcPart* k = &self.cfg.parts[self.s.p_part]
        cdef short* sq = self.s.seat[p].belt[self.s.p_square]
        cdef int m, o = self.s.p_option
        while self.s.p_sym < k.n_out[o]:
            m = k.out_mask[o][self.s.p_sym]
            if m & (m - 1):
                self.s.sub = S_OUTPUT
                return
            sq[lowest_bit(m)] += 1
            self.s.p_sym += 1
        self.s.sub = S_MENU

    cdef bint input_ok(self, int p, int t) noexcept nogil:
        # Piece t for the current input symbol, if the other symbols can still be filled.
        cdef const AcPart* k = &self.cfg.parts[self.s.p_part]
        cdef short c[N_PIECES]
        cdef int o = self.s.p_option, i = self.s.p_sym
        if not (k.in_mask[o][i] >> t) & 1 or self.s.seat[p].belt[self.s.p_square][t] == 0:
            return False
        memcpy(c, self.s.seat[p].belt[self.s.p_square], sizeof(c))
        c[t] -= 1
        return match_rec(&k.in_mask[o][i + 1], k.n_in[o] - i - 1, c)

    cdef void after_upgrade(self, int p) noexcept nogil:
        self.s.p_left -= 1
        self.s.p_first = False
        if self.s.p_left == 0 or not upgradable(self.s.seat[p].belt[self.s.p_square]):
            self.to_menu(p)

    cdef bint employee_action(self, int p) noexcept nogil:
        # Whether today's employee has an action usable in this shift.
        cdef AcSeat* a = &self.s.seat[p]
        cdef int k = self.emp_kind(p), q, s
        if a.emp_uses <= 0:
            return False
        if k == E_OWNER or k == E_HELPERS:
            for s in range(self.cfg.slots):
                if self.free_slot_ok(p, s):
                    return True
            return False
        for q in range(self.cfg.squares):
            if self.emp_square_ok(p, k, q):
                return True
        return False

    cdef bint emp_square_ok(self, int p, int k, int q) noexcept nogil:
        cdef short* c = self.s.seat[p].belt[q]
        if k == E_OPERATOR or k == E_EXPERT_OPERATOR or k == E_PACKER:
            return total(c) > 0
        if k == E_DECORATOR or k == E_PRODIGY:
            return upgradable(c)
        return False

    cdef bint free_slot_ok(self, int p, int s) noexcept nogil:
        # The Owner: a part not yet operated this shift that costs coal, at no cost; the
        # Helpers: a part already operated once, again, paying as usual.
        cdef AcSeat* a = &self.s.seat[p]
        cdef int id = a.slot[s], q = s % self.cfg.squares
        if id < 0 or self.cfg.parts[id].kind == K_CHUTE:
            return False
        if not part_can_work(&self.cfg.parts[id], a.belt[q], present(a.belt[q])):
            return False
        if self.emp_kind(p) == E_OWNER:
            return a.ops[s] == 0 and self.operate_cost(p, s, q) > 0
        return a.ops[s] == 1 and a.coal >= self.operate_cost(p, s, q)

    # ---- orders ----

    cdef void begin_orders(self) noexcept nogil:
        self.s.phase = PH_ORDERS
        self.s.sub = S_ORDERS
        self.s.turn = 0
        self.s.to_move = self.seat_at(0)

    cdef const AcOrder* held(self, int p, int i) noexcept nogil:
        return &self.cfg.orders[self.s.seat[p].order[i]]

    cdef bint has_pieces(self, int p, const int* need) noexcept nogil:
        cdef int t
        for t in range(N_PIECES):
            if self.s.seat[p].store[t] < need[t]:
                return False
        return True

    cdef int refined_in_store(self, int p) noexcept nogil:
        cdef int t, n = 0
        for t in range(2, N_PIECES):
            n += self.s.seat[p].store[t]
        return n

    cdef bint dealer_omit_ok(self, int p, int i, int t, const int* omitted) noexcept nogil:
        # Dealer: the stage without the pieces `omitted` so far and one more of kind t.
        cdef const AcOrder* o = self.held(p, i)
        cdef int need[N_PIECES]
        cdef int u, st = self.s.seat[p].stage[i]
        for u in range(N_PIECES):
            need[u] = o.need[st][u] - omitted[u]
        if need[t] <= 0:
            return False
        need[t] -= 1
        return self.has_pieces(p, need)

    cdef void pay_stage(self, int p, int i, const int* need) noexcept nogil:
        cdef AcSeat* a = &self.s.seat[p]
        cdef const AcOrder* o = self.held(p, i)
        cdef int t
        for t in range(N_PIECES):
            a.store[t] -= need[t]
        a.money += o.money[a.stage[i]]
        a.money_today += o.money[a.stage[i]]
        if self.emp_kind(p) == E_SALESMAN:
            a.money += self.cfg.salesman_bonus
            a.money_today += self.cfg.salesman_bonus
            a.m_salesman += self.cfg.salesman_bonus
        a.stages_done += 1
        self.advance_stage(p, i)

    cdef void advance_stage(self, int p, int i) noexcept nogil:
        cdef AcSeat* a = &self.s.seat[p]
        cdef const AcOrder* o = self.held(p, i)
        a.stage[i] += 1
        if a.stage[i] == o.n_stages:
            a.done[a.n_done] = a.order[i]
            a.n_done += 1
            a.done_size[o.size] += 1
            a.order[i] = -1
            a.stage[i] = 0

    cdef const AcSide* side_of(self, int z) noexcept nogil:
        return &self.cfg.side[z][self.s.side[z]]

    cdef bint supply_ok(self, int p, int z, int t, int count, int first, int mask) noexcept nogil:
        # Whether piece t may be supplied next to store z after `count` pieces (the first
        # of kind `first`, the kinds in `mask`), keeping a way to finish the supply.
        cdef const AcSide* d = self.side_of(z)
        cdef const short* st = self.s.seat[p].store
        cdef int u, j, have = 0
        if st[t] == 0 or not (d.mask >> t) & 1:
            return False
        if d.rule == R_COUNT:
            for u in range(N_PIECES):
                if (d.mask >> u) & 1:
                    have += st[u]
            for j in range(count + 1, count + have + 1):
                if (d.per >> j) & 1:
                    return True
            return False
        if d.rule == R_CHAIN:
            return count < d.n_pairs and d.pair_mask[count] == 1 << t
        if d.rule == R_MATCH:
            # Set by set: a set's first piece needs its partner at hand, the second is it.
            for j in range(d.n_pairs):
                if (d.pair_mask[j] >> t) & 1:
                    if count % 2 == 1:
                        return (d.pair_mask[j] >> first) & 1 and t != first
                    return st[lowest_bit(d.pair_mask[j] & ~(1 << t))] > 0
            return False
        if d.rule == R_PAIRS:
            if count % 2 == 1:
                return t == first
            return not (mask >> t) & 1 and st[t] >= 2
        if d.rule == R_SAME:
            return count == 0 or t == first
        if d.rule == R_DIFFERENT:
            return not (mask >> t) & 1
        if d.rule == R_SETS:
            if count % d.per != 0:
                return True
            for u in range(N_PIECES):
                if (d.mask >> u) & 1:
                    have += st[u]
            return have >= d.per
        if d.rule == R_PAIR:
            if count >= 2:
                return False
            for j in range(d.n_pairs):
                if (d.pair_mask[j] >> t) & 1:
                    if count == 1:
                        return (d.pair_mask[j] >> first) & 1
                    for u in range(N_PIECES):
                        if (d.pair_mask[j] >> u) & 1:
                            have += st[u]
                    return have >= 2
            return False
        return True

    cdef bint can_supply(self, int p, int z) noexcept nogil:
        cdef const AcSide* d = self.side_of(z)
        cdef int t, w
        if d.rule == R_MONEY:
            return self.s.seat[p].money_today >= d.per
        if d.rule == R_AS:
            for w in range(N_STORES):
                if w != z and self.side_of(w).rule != R_AS and self.can_supply(p, w):
                    return True
            return False
        for t in range(N_PIECES):
            if self.supply_ok(p, z, t, 0, 0, 0):
                return True
        return False

    cdef bint supply_complete(self, int z) noexcept nogil:
        cdef const AcSide* d = self.side_of(z)
        if self.s.p_count == 0:
            return False
        if d.rule == R_SETS:
            return self.s.p_count % d.per == 0
        if d.rule == R_PAIR:
            return self.s.p_count == 2
        if d.rule == R_COUNT:
            return (d.per >> self.s.p_count) & 1
        if d.rule == R_MATCH or d.rule == R_PAIRS:
            return self.s.p_count % 2 == 0
        return True

    cdef void begin_supply(self, int p, int z, int mult) noexcept nogil:
        cdef int rule = self.side_of(z).rule
        self.s.p_store = z
        self.s.p_rule = z
        self.s.p_mult = mult
        self.s.p_count = 0
        self.s.p_kind = 0
        self.s.p_mask = 0
        memset(self.s.p_held, 0, sizeof(self.s.p_held))
        self.s.sub = S_SUPPLY
        if rule == R_AS:
            self.s.sub = S_AS_STORE
        elif rule == R_MONEY:
            # No pieces: the day's Corner Shop money decides the steps.
            self.finish_supply(p)

    cdef int supply_steps(self) noexcept nogil:
        # Steps the supply in progress earns (the Director's multiplier included).
        cdef int j, u, steps = self.s.p_count
        cdef const AcSide* d = self.side_of(self.s.p_rule)
        if d.rule == R_MONEY:
            steps = self.s.seat[self.s.to_move].money_today // d.per
        elif d.rule == R_CHAIN:
            steps = d.pair_steps[self.s.p_count - 1] if self.s.p_count > 0 else 0
        elif d.rule == R_PAIRS:
            steps = self.s.p_count // 2
        elif d.rule == R_MATCH:
            steps = 0
            for j in range(d.n_pairs):
                u = lowest_bit(d.pair_mask[j])
                steps += d.pair_steps[j] * min(self.s.p_held[u], self.s.p_held[lowest_bit(d.pair_mask[j] & ~(1 << u))])
        elif d.rule == R_SETS:
            steps = self.s.p_count // d.per
        elif d.rule == R_PAIR:
            steps = 0
            if self.s.p_count == 2:
                for j in range(d.n_pairs):
                    if (d.pair_mask[j] >> self.s.p_kind) & 1:
                        steps = d.pair_steps[j]
        return steps * self.s.p_mult

    cdef void finish_supply(self, int p) noexcept nogil:
        cdef AcSeat* a = &self.s.seat[p]
        cdef int z = self.s.p_store
        cdef int pos = a.track[z] + self.supply_steps()
        if pos > self.cfg.track:
            pos = self.cfg.track
        if pos != a.track[z]:
            # Arriving on a space puts the marker on top of those already there.
            a.track[z] = pos
            self.s.stamps += 1
            a.stamp[z] = self.s.stamps
        a.supplies[z] += 1
        if self.s.phase == PH_ORDERS:
            a.supplied = True
            self.s.sub = S_ORDERS
        else:
            self.s.turn += 1
            self.next_agent()

    cdef void next_agent(self) noexcept nogil:
        # Department Store Agents, in turn order, once everyone has fulfilled orders.
        cdef int p, z
        self.s.phase = PH_AGENT
        if self.s.day == self.cfg.days - 1 and not self.cfg.agent_saturday:
            # His card acts "at the start of Cleanup", which Saturday skips (rulebook).
            self.s.turn = self.cfg.n
        while self.s.turn < self.cfg.n:
            p = self.seat_at(self.s.turn)
            if self.emp_kind(p) == E_STORE_AGENT and self.s.seat[p].emp_uses > 0:
                self.s.seat[p].emp_uses = 0
                for z in range(N_STORES):
                    if z != self.cfg.emp_store[self.s.seat[p].employee] and self.can_supply(p, z):
                        self.s.sub = S_AGENT_STORE
                        self.s.to_move = p
                        return
            self.s.turn += 1
        if self.s.day == self.cfg.days - 1:
            self.finish()
            return
        self.s.phase = PH_CLEANUP
        self.s.turn = 0
        self.cleanup_seat()

    # ---- cleanup ----

    cdef void cleanup_seat(self) noexcept nogil:
        cdef int p = self.seat_at(self.s.turn)
        cdef AcSeat* a = &self.s.seat[p]
        cdef int n = total(a.store)
        if n > self.cfg.keep:
            memset(self.s.p_held, 0, sizeof(self.s.p_held))
            self.s.p_left = self.cfg.keep
            if self.cfg.keep > 0:
                self.s.sub = S_KEEP
                self.s.to_move = p
                return
            self.end_keep(p)
        self.next_replacement()

    cdef void end_keep(self, int p) noexcept nogil:
        # The pieces not kept become coal.
        cdef AcSeat* a = &self.s.seat[p]
        cdef int t
        a.coal += total(a.store) * self.cfg.coal_per_choc
        for t in range(N_PIECES):
            a.store[t] = self.s.p_held[t]

    cdef void next_replacement(self) noexcept nogil:
        # Each completed order is replaced by one of a fresh Small, Medium and Large.
        cdef int p = self.seat_at(self.s.turn)
        cdef AcSeat* a = &self.s.seat[p]
        cdef int i, z, offered
        for i in range(self.cfg.n_start):
            if a.order[i] >= 0:
                continue
            offered = 0
            for z in range(N_SIZES):
                self.s.p_drawn[z] = self.draw_order(z)
                offered += self.s.p_drawn[z] >= 0
                # The offer is the replacing seat's alone.
                seen_one(&self.s.seen, p, SEEN_OFFER + z * 4096 + self.s.p_drawn[z] + 1)
            if offered:
                self.s.p_order = i
                self.s.sub = S_REPLACE
                self.s.to_move = p
                return
        self.s.turn += 1
        if self.s.turn < self.cfg.n:
            self.cleanup_seat()
        else:
            self.end_day()

    cdef void end_day(self) noexcept nogil:
        cdef int p
        cdef int parts[6]
        cdef AcSeat* a
        for p in range(self.cfg.n):
            a = &self.s.seat[p]
            a.interim[self.s.day] = self.score_now(p, parts)
            if a.employee >= 0:
                self.s.emp_discard[self.s.n_emp_discard] = a.employee
                self.s.n_emp_discard += 1
                a.employee = -1
        self.s.start = (self.s.start + 1) % self.cfg.n
        self.s.day += 1
        self.begin_day()

    cdef void finish(self) noexcept nogil:
        cdef int p, k
        cdef int parts[6]
        self.s.phase = PH_OVER
        self.s.to_move = -1
        self.s.end = END_SCORING
        if self.cfg.solo:
            k = self.judge(self.s.met)
            self.s.end = END_SOLO_WIN if k == self.goal_count() else END_SOLO_LOSS
        for p in range(self.cfg.n):
            self.s.seat[p].interim[self.s.day] = self.score_now(p, parts)

    # ---- Factory Manager objectives ----

    cdef const AcCard* card(self, int j) noexcept nogil:
        if j == 0:
            return &self.cfg.targets[self.s.target]
        return &self.cfg.demands[self.s.demand_deck[j - 1]]

    cdef int goal_count(self) noexcept nogil:
        # Objectives on the cards face up.
        cdef int j, n = 0
        for j in range(self.s.revealed):
            n += self.card(j).n_goals
        return n

    cdef bint goal_ok(self, int p, const AcGoal* g, int t, int count, int mask) noexcept nogil:
        # Whether piece t may go next to chocolate order g after `count` pieces of the
        # kinds `mask`, keeping a way to finish it (exact orders are paid in one move).
        cdef const short* st = self.s.seat[p].store
        cdef int u, other = 0
        if not (g.mask >> t) & 1:
            return False
        if g.rule == SR_SAME:
            return st[t] >= g.amount
        if (mask >> t) & 1 or st[t] == 0:
            return False
        for u in range(N_PIECES):
            if u != t and (g.mask >> u) & 1 and not (mask >> u) & 1 and st[u] > 0:
                other += 1
        return other >= g.amount - count - 1

    cdef bint goal_payable(self, int p, int j) noexcept nogil:
        cdef const AcCard* k = self.card(j)
        cdef const AcGoal* g
        cdef int t
        if k.supply < 0 or self.s.goal_supplied[j]:
            return False
        g = &k.goal[k.supply]
        if g.rule == SR_EXACT:
            return self.has_pieces(p, g.need)
        for t in range(N_PIECES):
            if self.goal_ok(p, g, t, 0, 0):
                return True
        return False

    cdef void start_goal(self, int p, int j) noexcept nogil:
        cdef const AcCard* k = self.card(j)
        cdef const AcGoal* g = &k.goal[k.supply]
        cdef int t
        if g.rule == SR_EXACT:
            for t in range(N_PIECES):
                self.s.seat[p].store[t] -= g.need[t]
            self.s.goal_supplied[j] = True
            return
        self.s.p_goal = j
        self.s.p_count = 0
        self.s.p_mask = 0
        self.s.sub = S_GOAL

    cdef void goal_piece(self, int p, int t) noexcept nogil:
        # The pieces go back to the supply as they are chosen: each one offered keeps
        # the order completable, so the sequence always ends with it supplied.
        cdef const AcCard* k = self.card(self.s.p_goal)
        cdef const AcGoal* g = &k.goal[k.supply]
        if g.rule == SR_SAME:
            self.s.seat[p].store[t] -= g.amount
            self.s.p_count = g.amount
        else:
            self.s.seat[p].store[t] -= 1
            self.s.p_count += 1
            self.s.p_mask |= 1 << t
        if self.s.p_count == g.amount:
            self.s.goal_supplied[self.s.p_goal] = True
            self.s.sub = S_ORDERS

    cdef int judge(self, bint (*met)[MAX_GOALS]) noexcept nogil:
        # Objectives are paid in card order, each from what the earlier ones left (the
        # summary: nothing is counted twice): money and completed orders are spent,
        # markers moved back. An objective is met if it can be paid on top of every
        # earlier one that was met.
        cdef AcConfig* c = &self.cfg
        cdef AcSeat* a = &self.s.seat[0]
        cdef const AcCard* k
        cdef const AcGoal* g
        cdef int have[N_SIZES]
        cdef int spec[N_SIZES]
        cdef int track[N_STORES]
        cdef int steps[MAX_SOLO_CARDS * MAX_GOALS]
        cdef int count[MAX_SOLO_CARDS * MAX_GOALS]
        cdef int store[MAX_SOLO_CARDS * MAX_GOALS]
        cdef int j, i, z, x, y, money = a.money, anyc = 0, n_steps = 0, n_named = 0
        cdef int special = 0, n_met = 0, held = 0, all_done = 0
        cdef bint ok
        for z in range(N_SIZES):
            have[z] = a.done_size[z]
            spec[z] = 0
        # Special Orders are kept apart from the regular ones: they meet their own
        # objective and count for nothing else.
        for i in range(MAX_HELD_ORDERS):
            if a.special[i] < 0:
                continue
            for x in range(a.n_done):
                if a.done[x] == a.special[i]:
                    have[c.orders[a.special[i]].size] -= 1
        for z in range(N_SIZES):
            all_done += have[z]
        for z in range(N_STORES):
            track[z] = a.track[z]
        for j in range(MAX_SOLO_CARDS):
            for i in range(MAX_GOALS):
                met[j][i] = False
        for j in range(self.s.revealed):
            k = self.card(j)
            for i in range(k.n_goals):
                g = &k.goal[i]
                if g.kind == G_MONEY:
                    ok = money >= g.amount
                    if ok:
                        money -= g.amount
                elif g.kind == G_ORDERS:
                    if g.size >= 0:
                        ok = spec[g.size] + g.amount <= have[g.size]
                    else:
                        ok = True
                    held = anyc + g.amount
                    for z in range(N_SIZES):
                        held += spec[z]
                    ok = ok and held <= all_done
                    if ok:
                        if g.size >= 0:
                            spec[g.size] += g.amount
                        else:
                            anyc += g.amount
                elif g.kind == G_STEPS:
                    # Named stores first (see steps_fit): insert this one at the end of
                    # its group, try, and take it out again if it does not fit.
                    x = n_named if g.store >= 0 else n_steps
                    for y in range(n_steps, x, -1):
                        steps[y] = steps[y - 1]
                        count[y] = count[y - 1]
                        store[y] = store[y - 1]
                    steps[x] = g.amount
                    count[x] = g.stores
                    store[x] = g.store
                    ok = steps_fit(track, steps, count, store, n_steps + 1)
                    if ok:
                        n_steps += 1
                        n_named += g.store >= 0
                    else:
                        for y in range(x, n_steps):
                            steps[y] = steps[y + 1]
                            count[y] = count[y + 1]
                            store[y] = store[y + 1]
                elif g.kind == G_SUPPLY:
                    ok = self.s.goal_supplied[j]
                else:
                    ok = False
                    x = a.special[special]
                    for y in range(a.n_done):
                        if a.done[y] == x and x >= 0:
                            ok = True
                    special += 1
                met[j][i] = ok
                n_met += ok
        return n_met

    # ---- the contract: legal actions and apply ----

    cdef int current_player(self) noexcept nogil:
        return self.s.to_move

    cdef int legal_actions(self, int* out) noexcept nogil:
        cdef AcConfig* c = &self.cfg
        cdef int p = self.s.to_move
        cdef int n = 0, i, j, t, q, k, z, m, nt, sub
        cdef int sq[3]
        cdef int kinds[MAX_SQUARES]
        cdef AcSeat* a
        cdef const AcPart* part
        cdef const AcOrder* o
        if p < 0:
            return 0
        a = &self.s.seat[p]
        sub = self.s.sub
        if sub == S_PACKET:
            for j in range(2 * c.n):
                if not self.s.pk_taken[j] and not (self.s.has_part[p] if j < c.n else self.s.has_emp[p]):
                    out[n] = A_PACKET + j
                    n += 1
        elif sub == S_PICK:
            for i in range(self.s.pk_len[self.s.p_packet]):
                out[n] = A_PICK + i
                n += 1
        elif sub == S_PLACE:
            for i in range(c.slots):
                out[n] = A_SLOT + i
                n += 1
        elif sub == S_ASSIGN:
            for i in range(c.slots):
                if self.assignable(p, i):
                    out[n] = A_SLOT + i
                    n += 1
        elif sub == S_MENU:
            out[0] = A_DONE
            n = 1
            for q in range(c.squares):
                kinds[q] = present(a.belt[q])
            for i in range(c.slots):
                if self.can_operate(p, i, kinds):
                    out[n] = A_SLOT + i
                    n += 1
            if c.coal_per_choc > 0:
                for t in range(N_PIECES):
                    if a.store[t] > 0:
                        out[n] = A_TRADE + t
                        n += 1
            if self.employee_action(p):
                out[n] = A_EMPLOYEE
                n += 1
        elif sub == S_OPEN:
            out[0] = A_DONE
            out[1] = A_EMPLOYEE
            n = 2
        elif sub == S_TARGET:
            for q in range(c.squares):
                kinds[q] = present(a.belt[q])
            nt = self.targets(p, self.s.p_slot, sq)
            for i in range(nt):
                if self.can_operate_on(p, self.s.p_slot, sq[i], kinds):
                    out[n] = A_SQUARE + sq[i]
                    n += 1
        elif sub == S_OPTION:
            part = &c.parts[self.s.p_part]
            for i in range(part.n_options):
                if can_match(part.in_mask[i], part.n_in[i], a.belt[self.s.p_square]):
                    out[n] = A_OPTION + i
                    n += 1
        elif sub == S_INPUT:
            for t in range(N_PIECES):
                if self.input_ok(p, t):
                    out[n] = A_PIECE + t
                    n += 1
        elif sub == S_OUTPUT:
            m = c.parts[self.s.p_part].out_mask[self.s.p_option][self.s.p_sym]
            for t in range(N_PIECES):
                if (m >> t) & 1:
                    out[n] = A_PIECE + t
                    n += 1
        elif sub == S_UPGRADE:
            if not self.s.p_first:
                out[0] = A_DONE
                n = 1
            for k in range(N_UPGRADES):
                if a.belt[self.s.p_square][UPG_FROM[k]] > 0:
                    out[n] = A_UPGRADE + k
                    n += 1
        elif sub == S_COPY or sub == S_CHUTE or sub == S_MOVE_PIECE:
            for t in range(N_PIECES):
                if a.belt[self.s.p_square][t] > 0:
                    out[n] = A_PIECE + t
                    n += 1
        elif sub == S_EMP_SQUARE:
            for q in range(c.squares):
                if self.emp_square_ok(p, self.s.p_emp, q):
                    out[n] = A_SQUARE + q
                    n += 1
        elif sub == S_MOVE_TO:
            if self.s.p_move:
                # A part's move is optional once it has worked (the piece may stay).
                out[0] = A_DONE
                n = 1
            for q in range(c.squares):
                if q != self.s.p_square:
                    out[n] = A_SQUARE + q
                    n += 1
        elif sub == S_ORDERS:
            out[0] = A_DONE
            n = 1
            k = self.emp_kind(p)
            for i in range(self.s.n_held):
                if a.order[i] < 0:
                    continue
                o = self.held(p, i)
                if self.has_pieces(p, o.need[a.stage[i]]):
                    out[n] = A_ORDER + i
                    n += 1
                if a.emp_uses > 0:
                    if k == E_CLERK:
                        out[n] = A_SKIP + i
                        n += 1
                    elif k == E_SHOP_AGENT and self.refined_in_store(p) >= o.n_pieces[a.stage[i]]:
                        out[n] = A_SHOP_AGENT + i
                        n += 1
                    elif k == E_DEALER:
                        for t in range(N_PIECES):
                            if self.dealer_omit_ok(p, i, t, NONE_HELD):
                                out[n] = A_DEALER + i
                                n += 1
                                break
            if (a.employee >= 0 and c.emp_store[a.employee] >= 0 and not a.supplied
                    and self.can_supply(p, c.emp_store[a.employee])):
                out[n] = A_SUPPLY
                n += 1
            if c.solo:
                for j in range(self.s.revealed):
                    if self.goal_payable(p, j):
                        out[n] = A_GOAL + j
                        n += 1
        elif sub == S_GOAL:
            k = self.card(self.s.p_goal).supply
            for t in range(N_PIECES):
                if self.goal_ok(p, &self.card(self.s.p_goal).goal[k], t, self.s.p_count, self.s.p_mask):
                    out[n] = A_PIECE + t
                    n += 1
        elif sub == S_SUPPLY:
            if self.supply_complete(self.s.p_rule):
                out[0] = A_DONE
                n = 1
            for t in range(N_PIECES):
                if self.supply_ok(p, self.s.p_rule, t, self.s.p_count, self.s.p_kind, self.s.p_mask):
                    out[n] = A_PIECE + t
                    n += 1
        elif sub == S_FREE_SLOT:
            for i in range(c.slots):
                if self.free_slot_ok(p, i):
                    out[n] = A_SLOT + i
                    n += 1
        elif sub == S_AS_STORE:
            for z in range(N_STORES):
                if z != self.s.p_store and self.side_of(z).rule != R_AS and self.can_supply(p, z):
                    out[n] = A_STORE + z
                    n += 1
        elif sub == S_AGENT_PIECE:
            for t in range(2, N_PIECES):
                if a.store[t] > self.s.p_held[t]:
                    out[n] = A_PIECE + t
                    n += 1
        elif sub == S_DEALER_OMIT:
            for t in range(N_PIECES):
                if self.dealer_omit_ok(p, self.s.p_order, t, self.s.p_held):
                    out[n] = A_PIECE + t
                    n += 1
        elif sub == S_AGENT_STORE:
            out[0] = A_DONE
            n = 1
            for z in range(N_STORES):
                if z != c.emp_store[a.employee] and self.can_supply(p, z):
                    out[n] = A_STORE + z
                    n += 1
        elif sub == S_KEEP:
            for t in range(N_PIECES):
                if a.store[t] > 0:
                    out[n] = A_PIECE + t
                    n += 1
        elif sub == S_REPLACE:
            for z in range(N_SIZES):
                if self.s.p_drawn[z] >= 0:
                    out[n] = A_SIZE + z
                    n += 1
        return n

    cdef int apply(self, int action) except -2 nogil:
        cdef AcConfig* c = &self.cfg
        cdef int p = self.s.to_move
        cdef AcSeat* a = &self.s.seat[p]
        cdef int sub = self.s.sub, k, t, q, i, j, z, nt
        cdef int sq[3]
        cdef const AcOrder* o
        seen_move(&self.s.seen)
        if sub == S_PACKET:
            j = action - A_PACKET
            self.s.pk_taken[j] = True
            self.s.p_packet = j
            if self.s.pk_len[j] == 1:
                self.take_card(p, j, 0)
            else:
                self.s.sub = S_PICK
        elif sub == S_PICK:
            self.take_card(p, self.s.p_packet, action - A_PICK)
        elif sub == S_PLACE:
            self.place_part(p, action - A_SLOT)
        elif sub == S_ASSIGN:
            a.assigned = action - A_SLOT
            self.open_run(p)
        elif sub == S_OPEN:
            if action == A_DONE:
                self.start_shift(p)
            else:
                self.s.p_emp = self.emp_kind(p)
                self.s.sub = S_EMP_SQUARE
        elif sub == S_MENU:
            if action == A_DONE:
                self.end_shift(p)
            elif action < A_PIECE:
                i = action - A_SLOT
                nt = self.targets(p, i, sq)
                if nt > 1:
                    self.s.p_slot = i
                    self.s.sub = S_TARGET
                else:
                    self.begin_operation(p, i, sq[0])
            elif action < A_SQUARE:
                t = action - A_TRADE
                a.store[t] -= 1
                a.coal += c.coal_per_choc
            else:
                self.s.p_emp = self.emp_kind(p)
                if self.s.p_emp == E_OWNER or self.s.p_emp == E_HELPERS:
                    self.s.sub = S_FREE_SLOT
                else:
                    self.s.sub = S_EMP_SQUARE
        elif sub == S_FREE_SLOT:
            i = action - A_SLOT
            q = i % c.squares
            a.emp_uses -= 1
            if self.s.p_emp == E_OWNER:
                # begin_operation pays the cost: hand it over first.
                a.coal += self.operate_cost(p, i, q)
            else:
                a.helped = i
            self.begin_operation(p, i, q)
        elif sub == S_TARGET:
            self.begin_operation(p, self.s.p_slot, action - A_SQUARE)
        elif sub == S_OPTION:
            self.choose_option(p, action - A_OPTION)
        elif sub == S_INPUT:
            a.belt[self.s.p_square][action - A_PIECE] -= 1
            self.s.p_sym += 1
            self.advance_inputs(p)
        elif sub == S_OUTPUT:
            a.belt[self.s.p_square][action - A_PIECE] += 1
            self.s.p_sym += 1
            self.advance_outputs(p)
        elif sub == S_UPGRADE:
            if action == A_DONE:
                self.to_menu(p)
            else:
                k = action - A_UPGRADE
                a.belt[self.s.p_square][UPG_FROM[k]] -= 1
                a.belt[self.s.p_square][UPG_TO[k]] += 1
                if self.s.p_move:
                    self.s.p_kind = UPG_TO[k]
                    self.s.sub = S_MOVE_TO
                else:
                    self.after_upgrade(p)
        elif sub == S_COPY:
            a.belt[self.s.p_square][action - A_PIECE] += c.parts[self.s.p_part].amount
            self.s.sub = S_MENU
            if self.s.p_move:
                self.s.p_kind = action - A_PIECE
                self.s.sub = S_MOVE_TO
        elif sub == S_CHUTE:
            t = action - A_PIECE
            a.belt[self.s.p_square][t] -= 1
            a.store[t] += 1
            self.s.sub = S_MENU
        elif sub == S_EMP_SQUARE:
            q = action - A_SQUARE
            self.s.p_square = q
            self.s.p_move = False
            a.emp_uses -= 1
            if self.s.p_emp == E_PACKER:
                for t in range(N_PIECES):
                    a.belt[q][t] *= 2
                self.to_menu(p)
            elif self.s.p_emp == E_DECORATOR or self.s.p_emp == E_PRODIGY:
                # The Decorator's uses are single upgrades; the Prodigy's one use is several.
                self.s.p_left = c.prodigy_upgrades if self.s.p_emp == E_PRODIGY else 1
                self.s.p_first = True
                self.s.sub = S_UPGRADE
            else:
                self.s.sub = S_MOVE_PIECE
        elif sub == S_MOVE_PIECE:
            self.s.p_kind = action - A_PIECE
            self.s.sub = S_MOVE_TO
        elif sub == S_MOVE_TO:
            if action != A_DONE:
                a.belt[self.s.p_square][self.s.p_kind] -= 1
                a.belt[action - A_SQUARE][self.s.p_kind] += 1
            self.to_menu(p)
        elif sub == S_ORDERS:
            if action == A_DONE:
                self.s.turn += 1
                if self.s.turn < c.n:
                    self.s.to_move = self.seat_at(self.s.turn)
                else:
                    self.s.turn = 0
                    self.next_agent()
            elif action < A_SKIP:
                i = action - A_ORDER
                self.pay_stage(p, i, self.held(p, i).need[a.stage[i]])
            elif action < A_SHOP_AGENT:
                a.emp_uses -= 1
                self.advance_stage(p, action - A_SKIP)
            elif action < A_DEALER:
                i = action - A_SHOP_AGENT
                a.emp_uses -= 1
                self.s.p_order = i
                self.s.p_left = self.held(p, i).n_pieces[a.stage[i]]
                memset(self.s.p_held, 0, sizeof(self.s.p_held))
                self.s.sub = S_AGENT_PIECE
            elif action < A_SUPPLY:
                a.emp_uses -= 1
                self.s.p_order = action - A_DEALER
                self.s.p_left = c.dealer_fewer
                memset(self.s.p_held, 0, sizeof(self.s.p_held))
                self.s.sub = S_DEALER_OMIT
            elif action == A_SUPPLY:
                k = self.emp_kind(p)
                self.begin_supply(p, c.emp_store[a.employee], c.director_mult if k == E_DIRECTOR else 1)
            else:
                self.start_goal(p, action - A_GOAL)
        elif sub == S_GOAL:
            self.goal_piece(p, action - A_PIECE)
        elif sub == S_SUPPLY:
            if action == A_DONE:
                self.finish_supply(p)
            else:
                t = action - A_PIECE
                a.store[t] -= 1
                # The last piece: the kind a same-kind supply, a pair or a set goes on with.
                self.s.p_kind = t
                self.s.p_held[t] += 1
                self.s.p_count += 1
                self.s.p_mask |= 1 << t
        elif sub == S_AS_STORE:
            self.s.p_rule = action - A_STORE
            if self.side_of(self.s.p_rule).rule == R_MONEY:
                self.finish_supply(p)
            else:
                self.s.sub = S_SUPPLY
        elif sub == S_AGENT_PIECE:
            # The pieces stay in the store room until the stage is paid with them.
            self.s.p_held[action - A_PIECE] += 1
            self.s.p_left -= 1
            if self.s.p_left == 0:
                self.pay_stage(p, self.s.p_order, self.s.p_held)
                self.s.sub = S_ORDERS
        elif sub == S_DEALER_OMIT:
            self.s.p_held[action - A_PIECE] += 1
            self.s.p_left -= 1
            i = self.s.p_order
            o = self.held(p, i)
            if self.s.p_left == 0 or not self.dealer_can_omit_more(p, i):
                for t in range(N_PIECES):
                    self.s.p_held[t] = o.need[a.stage[i]][t] - self.s.p_held[t]
                self.pay_stage(p, i, self.s.p_held)
                self.s.sub = S_ORDERS
        elif sub == S_AGENT_STORE:
            if action == A_DONE:
                self.s.turn += 1
                self.next_agent()
            else:
                self.begin_supply(p, action - A_STORE, 1)
        elif sub == S_KEEP:
            t = action - A_PIECE
            a.store[t] -= 1
            self.s.p_held[t] += 1
            self.s.p_left -= 1
            if self.s.p_left == 0:
                self.end_keep(p)
                self.next_replacement()
        elif sub == S_REPLACE:
            z = action - A_SIZE
            a.order[self.s.p_order] = self.s.p_drawn[z]
            # The order taken lies face up: the others now see which of its size it is.
            seen_all(&self.s.seen, c.n, SEEN_TAKEN + self.s.p_drawn[z])
            a.stage[self.s.p_order] = 0
            for i in range(N_SIZES):
                if i != z and self.s.p_drawn[i] >= 0:
                    # Only the player who drew them saw them (his offer is his alone).
                    self.order_to_bottom(self.s.p_drawn[i], 1 << p)
                self.s.p_drawn[i] = -1
            self.next_replacement()
        return self.s.to_move

    cdef bint dealer_can_omit_more(self, int p, int i) noexcept nogil:
        cdef int t
        for t in range(N_PIECES):
            if self.dealer_omit_ok(p, i, t, self.s.p_held):
                return True
        return False

    # ---- restricted play: the component an action takes ----

    cdef int card_component(self, int j, int x) noexcept nogil:
        # Card x of packet j: a part (its id) or an employee (after the parts, by kind).
        cdef int i = self.s.pk_first[j] + x
        if j < self.cfg.n:
            return self.s.disp_part[i]
        return self.cfg.n_parts + self.cfg.emp_kind[self.s.disp_emp[i]]

    cdef int action_component(self, int action) noexcept nogil:
        # Components (component_names()): every part by id, then the employee kinds, the
        # Department Stores and the Corner Shop order sizes. Taken are: the part or the
        # employee kept in the draft (a packet when all its cards are one component),
        # operating a part, using the employee's action (Operator, Clerk, Dealer...),
        # supplying a store, fulfilling or choosing an order of a size.
        cdef AcConfig* c = &self.cfg
        cdef int p = self.s.to_move, sub = self.s.sub, j, x, k
        cdef int stores = c.n_parts + N_EMPLOYEES
        cdef AcSeat* a
        if p < 0:
            return -1
        a = &self.s.seat[p]
        if sub == S_PACKET:
            j = action - A_PACKET
            k = self.card_component(j, 0)
            for x in range(1, self.s.pk_len[j]):
                if self.card_component(j, x) != k:
                    return -1
            return k
        if sub == S_PICK:
            return self.card_component(self.s.p_packet, action - A_PICK)
        if (sub == S_MENU or sub == S_FREE_SLOT) and A_SLOT <= action < A_PIECE:
            return a.slot[action - A_SLOT]
        if action == A_EMPLOYEE or (sub == S_ORDERS and A_SKIP <= action < A_SUPPLY):
            return c.n_parts + self.emp_kind(p)
        if sub == S_ORDERS and A_ORDER <= action < A_SKIP:
            return stores + N_STORES + c.orders[a.order[action - A_ORDER]].size
        if action == A_SUPPLY:
            return stores + c.emp_store[a.employee]
        if sub == S_AGENT_STORE and A_STORE <= action < A_EMPLOYEE:
            return stores + action - A_STORE
        if sub == S_REPLACE:
            return stores + N_STORES + action - A_SIZE
        return -1

    # ---- results ----

    cdef void store_awards(self, int k, int* money, int* place) noexcept nogil:
        # Rank the markers on the track (higher first, then earlier arrival); each place
        # pays only if the one before was paid and it is at least that far divided by
        # follow_div, rounded up.
        cdef AcConfig* c = &self.cfg
        cdef int order[N_SEATS]
        cdef int m = 0, p, i, prev
        cdef bint paid = True
        for p in range(c.n):
            money[p] = 0
            place[p] = 0
            if self.s.seat[p].track[k] == 0:
                continue
            i = m
            while i > 0 and (self.s.seat[order[i - 1]].track[k] < self.s.seat[p].track[k] or
                             (self.s.seat[order[i - 1]].track[k] == self.s.seat[p].track[k]
                              and self.s.seat[order[i - 1]].stamp[k] > self.s.seat[p].stamp[k])):
                order[i] = order[i - 1]
                i -= 1
            order[i] = p
            m += 1
        for i in range(m):
            p = order[i]
            place[p] = i + 1
            if i >= c.n_awards:
                paid = False
            elif i > 0:
                prev = self.s.seat[order[i - 1]].track[k]
                paid = paid and self.s.seat[p].track[k] >= (prev + c.follow_div - 1) // c.follow_div
            if paid:
                money[p] = c.awards[i]

    cdef int score_now(self, int seat, int* parts) noexcept nogil:
        cdef AcConfig* c = &self.cfg
        cdef AcSeat* a = &self.s.seat[seat]
        cdef int money[N_SEATS]
        cdef int place[N_SEATS]
        cdef int p, k, q, best = 0, stores = 0, pieces
        parts[0] = a.money
        if c.solo:
            # Factory Manager has no final scoring: money comes only from orders.
            for k in range(1, 6):
                parts[k] = 0
            return parts[0]
        for p in range(c.n):
            if self.s.seat[p].n_done > best:
                best = self.s.seat[p].n_done
        parts[1] = c.most_orders if best > 0 and a.n_done == best else 0
        parts[2] = 0
        for k in range(N_STORES):
            # Off the track, a seat is paid nothing there (the bots score often).
            if a.track[k] > 0:
                self.store_awards(k, money, place)
                parts[2] += money[seat]
                stores += 1
        parts[3] = c.diversity[stores]
        # Pieces still on the belt count too: Saturday's sweep takes them to the store room.
        pieces = total(a.store)
        for q in range(c.squares):
            pieces += total(a.belt[q])
        parts[4] = pieces * c.per_choc
        parts[5] = a.coal * c.per_coal
        return parts[0] + parts[1] + parts[2] + parts[3] + parts[4] + parts[5]

    cdef int first_player(self) noexcept nogil:
        return self.s.first

    cdef int end_reason(self) noexcept nogil:
        return self.s.end

    cdef int standing(self, int seat) noexcept nogil:
        cdef int parts[6]
        return self.score_now(seat, parts)

    cdef void outcome(self, int* scores, int* ranks) noexcept nogil:
        # Money (with the house rule's bonus by turn position), then the later seat in
        # the final day's turn order.
        cdef int n = self.cfg.n, p, q
        cdef int parts[6]
        for p in range(n):
            scores[p] = self.score_now(p, parts) + self.cfg.komi[self.turn_position(p)]
        if self.cfg.solo:
            # A lost week has no winner: rank 2, so the seat's win is 0. The objectives
            # decide it, so the bonus changes only the score.
            ranks[0] = 1 if self.s.end == END_SOLO_WIN else 2
            return
        for p in range(n):
            ranks[p] = 1
            for q in range(n):
                if scores[q] > scores[p] or (scores[q] == scores[p] and
                        (q - self.s.start + n) % n > (p - self.s.start + n) % n):
                    ranks[p] += 1

    cdef void interim(self, int seat, int* out) noexcept nogil:
        cdef int d
        for d in range(self.cfg.days):
            out[d] = self.s.seat[seat].interim[d]

    cdef void features(self, int seat, int* out) noexcept nogil:
        # In the order of feature_names().
        cdef AcConfig* c = &self.cfg
        cdef AcSeat* a = &self.s.seat[seat]
        cdef int i = 0, d, k, s, n_deck = c.a_total + c.b_total
        cdef int parts[6]
        cdef int money[N_SEATS]
        cdef int place[N_SEATS]
        for k in range(n_deck):
            out[k] = 0
        for d in range(c.days):
            if a.part_day[d] >= c.a_first:
                out[a.part_day[d] - c.a_first] = d + 1
        i = n_deck
        for d in range(c.days):
            out[i] = a.slot_day[d] + 1
            i += 1
        for d in range(c.days):
            out[i] = a.emp_day[d] + 1
            i += 1
        for k in range(N_EMPLOYEES):
            out[i] = 0
            for d in range(c.days):
                out[i] += a.emp_day[d] == k
            i += 1
        for s in range(c.slots):
            out[i] = a.covers[s]
            i += 1
        for k in range(N_STORES):
            self.store_awards(k, money, place)
            out[i] = a.track[k]
            out[i + 1] = place[seat]
            out[i + 2] = a.supplies[k]
            i += 3
        for k in range(N_SIZES):
            out[i] = a.done_size[k]
            i += 1
        out[i] = a.stages_done
        self.score_now(seat, parts)
        out[i + 1] = parts[0] - a.m_salesman
        out[i + 2] = a.m_salesman
        for k in range(1, 6):
            out[i + 2 + k] = parts[k]
        if c.solo:
            self.solo_features(out + i + 8)

    cdef void solo_features(self, int* out) noexcept nogil:
        # target, demand_<j>, target_met, demand_<j>_met, objectives, objectives_met,
        # failed_<kind>: from the verdict of the end (all 0 before it).
        cdef const AcCard* k
        cdef int j, g, i, n = self.s.n_cards, all_met
        cdef int failed[5]
        memset(failed, 0, sizeof(failed))
        out[0] = self.s.target + 1
        for j in range(1, n):
            out[j] = self.s.demand_deck[j - 1] + 1
        i = n
        out[2 * n] = 0
        out[2 * n + 1] = 0
        for j in range(n):
            k = self.card(j)
            all_met = self.s.phase == PH_OVER
            for g in range(k.n_goals):
                out[2 * n] += 1
                if self.s.met[j][g]:
                    out[2 * n + 1] += 1
                else:
                    all_met = 0
                    failed[k.goal[g].kind] += self.s.phase == PH_OVER
            out[i] = all_met
            i += 1
        for g in range(5):
            out[2 * n + 2 + g] = failed[g]

    # ---- search support ----

    cdef void copy_into(self, GameState other) noexcept nogil:
        # One memcpy (a struct assignment goes through a stack temporary: twice the
        # bytes), and only the seats in play: the others stay zero from reset in a state
        # of the same params (a third of the bytes at 2 players, half solo).
        cdef Ac* d = &(<AlleyCatState>other).s
        cdef char* src = <char*>&self.s
        cdef char* dst = <char*>d
        cdef size_t used = <char*>&self.s.seat[self.cfg.n] - src
        cdef size_t tail = <char*>&self.s.seat[N_SEATS] - src
        memcpy(dst, src, used)
        memcpy(dst + tail, src + tail, sizeof(Ac) - tail)

    cdef void determinize(self, int observer, Rng* rng) noexcept nogil:
        # Hidden from everyone: the order of the undrawn parts (those back in the box
        # included) and employees, the Corner Shop cards never revealed at the top of each
        # order deck, the Daily Demands still face down, and the chance stream. Hidden from
        # `observer`: the orders another player has on offer, and those another player put
        # under a deck. Each hidden set is sorted before it is shuffled, so the result does
        # not depend on how the hidden cards lay (only on what `observer` has seen).
        cdef AcConfig* c = &self.cfg
        cdef signed char tmp[MAX_ORDERS + N_SIZES]
        cdef int slot[MAX_ORDERS]
        cdef int z, i, n, m, h
        cdef bint offer
        reshuffle(rng, &self.s.deck_a[self.s.a_pos], c.a_total - self.s.a_pos)
        reshuffle(rng, &self.s.deck_b[self.s.b_pos], c.b_total - self.s.b_pos)
        for z in range(c.n_emp_decks):
            reshuffle(rng, &self.s.emp_deck[z][self.s.emp_pos[z]], c.emp_deck_len[z] - self.s.emp_pos[z])
        for z in range(N_SIZES):
            h = self.s.ohead[z]
            n = 0
            for i in range(self.s.olen[z]):
                m = (h + i) % MAX_ORDERS
                if i < self.s.ounseen[z] or not (self.s.oseen[z][m] >> observer) & 1:
                    slot[n] = m
                    tmp[n] = self.s.odeck[z][m]
                    n += 1
            offer = self.s.sub == S_REPLACE and self.s.to_move != observer and self.s.p_drawn[z] >= 0
            if offer:
                tmp[n] = self.s.p_drawn[z]
            reshuffle(rng, tmp, n + offer)
            for i in range(n):
                self.s.odeck[z][slot[i]] = tmp[i]
            if offer:
                self.s.p_drawn[z] = tmp[n]
        if c.solo:
            # Daily Demands not yet revealed are any of the cards not seen.
            reshuffle(rng, &self.s.demand_deck[self.s.revealed - 1], c.n_demands - self.s.revealed + 1)
        rng_seed(&self.s.rng, rng_next(rng))
        seen_move(&self.s.seen)

    cdef void skip_determinize(self, int observer, Rng* rng) noexcept nogil:
        # `rng` advanced as determinize(observer, rng) advances it, without shuffling:
        # each reshuffle's draws (shuffle_draws), then one for the new chance stream.
        # wyrand's state is a counter, so k draws are one addition.
        cdef AcConfig* c = &self.cfg
        cdef uint64_t k = 1
        cdef int z, i, n
        k += shuffle_draws(c.a_total - self.s.a_pos) + shuffle_draws(c.b_total - self.s.b_pos)
        for z in range(c.n_emp_decks):
            k += shuffle_draws(c.emp_deck_len[z] - self.s.emp_pos[z])
        for z in range(N_SIZES):
            n = 0
            for i in range(self.s.olen[z]):
                n += i < self.s.ounseen[z] or not (self.s.oseen[z][(self.s.ohead[z] + i) % MAX_ORDERS] >> observer) & 1
            k += shuffle_draws(n + (self.s.sub == S_REPLACE and self.s.to_move != observer and self.s.p_drawn[z] >= 0))
        if c.solo:
            k += shuffle_draws(c.n_demands - self.s.revealed + 1)
        rng.s += k * <uint64_t>0xA0761D6478BD642F

    cdef void draw_marks(self, AcMarks* out) noexcept nogil:
        cdef int z
        out.a_pos, out.b_pos, out.revealed, out.rng = self.s.a_pos, self.s.b_pos, self.s.revealed, self.s.rng.s
        for z in range(N_EMP_DECKS):
            out.emp_pos[z] = self.s.emp_pos[z]
        for z in range(N_SIZES):
            out.ohead[z] = self.s.ohead[z]

    cdef bint drew_since(self, const AcMarks* before) noexcept nogil:
        # The only reads of what determinize shuffles are draws (draw_order, begin_day)
        # and the chance stream; a card put under an order deck is only written.
        cdef int z
        if (self.s.a_pos != before.a_pos or self.s.b_pos != before.b_pos
                or self.s.rng.s != before.rng or self.s.revealed != before.revealed):
            return True
        for z in range(N_EMP_DECKS):
            if self.s.emp_pos[z] != before.emp_pos[z]:
                return True
        for z in range(N_SIZES):
            if self.s.ohead[z] != before.ohead[z]:
                return True
        return False

    def determinize_advance(self, int observer, uint64_t seed):
        """Tests: how far determinize(observer) moves a bot stream seeded with `seed`,
        and how far skip_determinize says it does (the raw state differences)."""
        cdef Rng a, b
        cdef AlleyCatState copy = self.copy()
        rng_seed(&a, seed)
        b = a
        copy.determinize(observer, &a)
        self.skip_determinize(observer, &b)
        return a.s, b.s

    cdef int outcome_key(self, int observer) noexcept nogil:
        return seen_key(&self.s.seen, observer)

    cdef int validate(self) noexcept nogil:
        cdef AcConfig* c = &self.cfg
        cdef AcSeat* a
        cdef int count[MAX_EMPLOYEE_CARDS + MAX_ORDER_IDS + MAX_PARTS]
        cdef int p, i, q, t, z
        for p in range(c.n):
            a = &self.s.seat[p]
            if a.coal < 0 or a.money < 0:
                return 1
            for t in range(N_PIECES):
                if a.store[t] < 0:
                    return 1
                for q in range(c.squares):
                    if a.belt[q][t] < 0:
                        return 1
            for i in range(c.slots):
                if (a.ops[i] > (2 if i == a.helped else 1) and a.slot[i] >= 0
                        and c.parts[a.slot[i]].kind != K_CHUTE):
                    return 2
            if a.shifts_left < 0 or a.shifts_left > a.tiles:
                return 3
            for z in range(N_STORES):
                if a.track[z] < 0 or a.track[z] > c.track:
                    return 4
        # Parts: printed ones once per player, deck ones once.
        memset(count, 0, sizeof(count))
        for i in range(self.s.a_pos, c.a_total):
            count[self.s.deck_a[i]] += 1
        for i in range(self.s.b_pos, c.b_total):
            count[self.s.deck_b[i]] += 1
        for i in range(DISPLAY):
            if self.s.disp_part[i] >= 0:
                count[self.s.disp_part[i]] += 1
        for i in range(self.s.n_part_discard):
            count[self.s.part_discard[i]] += 1
        if self.s.phase == PH_DRAFT and self.s.sub == S_PLACE:
            count[self.s.p_part] += 1
        for p in range(c.n):
            a = &self.s.seat[p]
            for i in range(c.slots):
                if a.slot[i] >= 0:
                    count[a.slot[i]] += 1
            for i in range(a.n_covered):
                count[a.covered[i]] += 1
        for i in range(c.n_parts):
            if count[i] != (c.n if i < c.n_printed else 1):
                return 5
        memset(count, 0, sizeof(count))
        for z in range(c.n_emp_decks):
            for i in range(self.s.emp_pos[z], c.emp_deck_len[z]):
                count[self.s.emp_deck[z][i]] += 1
        for i in range(MAX_DISP_EMP):
            if self.s.disp_emp[i] >= 0:
                count[self.s.disp_emp[i]] += 1
        for i in range(self.s.n_emp_discard):
            count[self.s.emp_discard[i]] += 1
        for p in range(c.n):
            if self.s.seat[p].employee >= 0:
                count[self.s.seat[p].employee] += 1
        for i in range(c.n_emp_cards):
            if count[i] != 1:
                return 6
        memset(count, 0, sizeof(count))
        for z in range(N_SIZES):
            for i in range(self.s.olen[z]):
                count[self.s.odeck[z][(self.s.ohead[z] + i) % MAX_ORDERS]] += 1
            if self.s.sub == S_REPLACE and self.s.p_drawn[z] >= 0:
                count[self.s.p_drawn[z]] += 1
        for p in range(c.n):
            a = &self.s.seat[p]
            for i in range(self.s.n_held):
                if a.order[i] >= 0:
                    count[a.order[i]] += 1
                    if a.stage[i] < 0 or a.stage[i] >= c.orders[a.order[i]].n_stages:
                        return 9
            for i in range(a.n_done):
                count[a.done[i]] += 1
        for i in range(c.n_orders):
            if count[i] != 1:
                return 7
        if self.s.phase == PH_OVER:
            if self.s.to_move != -1:
                return 8
        elif self.s.to_move < 0 or self.s.to_move >= c.n:
            return 8
        if c.solo and (self.s.revealed != 1 + c.initial + min(self.s.day + 1, c.daily)
                       or self.s.n_cards != 1 + c.initial + c.daily):
            return 10
        return 0

    # ---- Python API: names, descriptions, observation, trace, hand-built positions ----

    def _all_parts(self):
        # By id: printed, deck A (and the expansion's A parts), deck B (and its B parts).
        p, e = self.params.parts, self.params.expansion
        ex = self.params.master_chocolatier
        return (list(p.printed) + list(p.deck_a) + (list(e.deck_a) if ex else [])
                + list(p.deck_b) + (list(e.deck_b) if ex else []))

    def part_names(self):
        """Names of the parts by id: printed, deck A, deck B (expansion parts after each deck's own)."""
        return [x.name for x in self._all_parts()]

    def order_texts(self):
        """Text of the Corner Shop orders by id: small, medium, large."""
        o = self.params.orders
        return list(o.small) + list(o.medium) + list(o.large)

    def slot_name(self, int slot):
        """T1.. above the belt, B1.. below it; slot k works on square k % squares."""
        q = self.cfg.squares
        return f"T{slot + 1}" if slot < q else f"B{slot - q + 1}"

    def feature_names(self):
        names = self.part_names()[self.cfg.n_printed:]
        out = [f"part_{n}_day" for n in names]
        out += [f"day{d + 1}_slot" for d in range(self.cfg.days)]
        out += [f"day{d + 1}_employee" for d in range(self.cfg.days)]
        out += [f"hired_{e}" for e in EMPLOYEES]
        out += [f"covered_{self.slot_name(s)}" for s in range(self.cfg.slots)]
        for store in STORES:
            out += [f"store_{store}_track", f"store_{store}_place", f"store_{store}_supplies"]
        out += [f"orders_{z}" for z in SIZES] + ["stages_completed"]
        out += ["money_orders", "money_salesman", "money_most_orders", "money_stores",
                "money_diversity", "money_chocolate", "money_coal"]
        if self.cfg.solo:
            # Card ids are 1-based indexes into solo.targets / solo.demands.
            n = 1 + self.cfg.initial + self.cfg.daily
            out += ["target"] + [f"demand_{j}" for j in range(1, n)]
            out += ["target_met"] + [f"demand_{j}_met" for j in range(1, n)]
            out += ["objectives", "objectives_met"] + [f"failed_{k}" for k in GOAL_KINDS]
        return out

    def interim_names(self):
        return [f"day_{d + 1}" for d in range(self.cfg.days)]

    def component_names(self):
        """What action_component() names, by index: every part (printed, deck A, deck B,
        by id), every employee kind, every Department Store, every order size."""
        return ([f"part_{n}" for n in self.part_names()] + [f"employee_{e}" for e in EMPLOYEES]
                + [f"store_{z}" for z in STORES] + [f"order_{z}" for z in SIZES])

    def phase_label(self):
        return f"day {self.s.day + 1}"

    def _piece_list(self, int p, int square):
        # square -1 = the store room.
        cdef AcSeat* a = &self.s.seat[p]
        out = []
        for t in range(N_PIECES):
            n = a.store[t] if square < 0 else a.belt[square][t]
            out += [PIECES[t]] * n
        return out

    def _employee_label(self, int card):
        z = self.cfg.emp_store[card]
        return f"{EMPLOYEES[self.cfg.emp_kind[card]]} ({STORES[z] if z >= 0 else 'no store'})"

    def _employee_name(self, int card):
        if card < 0:
            return None
        return EMPLOYEES[self.cfg.emp_kind[card]]

    def _seat_view(self, int p):
        cdef AcSeat* a = &self.s.seat[p]
        names = self.part_names()
        texts = self.order_texts()
        _, place = self.store_money()
        return {
            "coal": a.coal,
            "money": a.money,
            "belt": [self._piece_list(p, q) for q in range(self.cfg.squares)],
            "store_room": self._piece_list(p, -1),
            "parts": {self.slot_name(s): names[a.slot[s]] for s in range(self.cfg.slots) if a.slot[s] >= 0},
            "covered": [names[a.covered[i]] for i in range(a.n_covered)],
            "employee": self._employee_name(a.employee),
            "employee_uses": a.emp_uses,
            "assigned": self.slot_name(a.assigned) if a.assigned >= 0 else None,
            "supplied_today": bool(a.supplied),
            "shifts_left": a.shifts_left,
            "operated": [self.slot_name(s) for s in range(self.cfg.slots) if a.ops[s]],
            "orders": [None if a.order[i] < 0 else {"order": texts[a.order[i]], "stage": a.stage[i] + 1}
                       for i in range(self.cfg.n_start)],
            "special_orders": [None if a.order[i] < 0 else {"order": texts[a.order[i]], "stage": a.stage[i] + 1}
                               for i in range(self.cfg.n_start, self.s.n_held)],
            "completed": {SIZES[z]: a.done_size[z] for z in range(N_SIZES)},
            "tracks": {STORES[z]: [a.track[z], place[z][p]] for z in range(N_STORES)},
            "standing": self.standing(p),
        }

    def _display(self):
        names = self.part_names()
        n = self.cfg.n
        out = []
        for j in range(2 * n):
            cards = []
            for x in range(self.s.pk_len[j]):
                i = self.s.pk_first[j] + x
                card = self.s.disp_part[i] if j < n else self.s.disp_emp[i]
                if card >= 0:
                    cards.append(names[card] if j < n else self._employee_label(card))
            out.append({"kind": "parts" if j < n else "employees", "cards": cards,
                        "taken": bool(self.s.pk_taken[j])})
        return out

    def _pending(self):
        # The move in progress that the pending decision goes on with (all public: the
        # table watches it being made): without it two positions would look alike whose
        # next moves do different things (placing one part or another, say).
        cdef AcSeat* a = &self.s.seat[self.s.to_move] if self.s.to_move >= 0 else NULL
        cdef int sub = self.s.sub
        names = self.part_names()
        out = {}
        if a == NULL:
            return out
        if sub == S_PICK:
            j = self.s.p_packet
            out["packet"] = {"kind": "parts" if j < self.cfg.n else "employees", "number": j % self.cfg.n + 1}
        elif sub == S_PLACE:
            out["part"] = names[self.s.p_part]
        elif sub == S_TARGET:
            out |= {"slot": self.slot_name(self.s.p_slot), "part": names[a.slot[self.s.p_slot]]}
        elif sub in (S_OPTION, S_INPUT, S_OUTPUT, S_COPY):
            out |= {"slot": self.slot_name(self.s.p_slot), "part": names[self.s.p_part],
                    "square": self.s.p_square + 1}
            if sub in (S_INPUT, S_OUTPUT):
                # Symbols are filled in order; those naming one kind take no decision.
                out |= {"option": self._all_parts()[self.s.p_part].does[self.s.p_option],
                        "symbol": self.s.p_sym + 1}
            if sub == S_COPY:
                out["then_move"] = bool(self.s.p_move)
        elif sub == S_UPGRADE:
            out |= {"square": self.s.p_square + 1, "upgrades_left": self.s.p_left,
                    "then_move": bool(self.s.p_move)}
        elif sub == S_CHUTE or sub == S_MOVE_PIECE:
            out["square"] = self.s.p_square + 1
        elif sub == S_MOVE_TO:
            out |= {"square": self.s.p_square + 1, "piece": PIECES[self.s.p_kind]}
        elif sub == S_EMP_SQUARE or sub == S_FREE_SLOT:
            out["employee"] = EMPLOYEES[self.s.p_emp]
        elif sub == S_SUPPLY or sub == S_AS_STORE:
            out |= {"store": STORES[self.s.p_store], "times": self.s.p_mult,
                    "supplied": [PIECES[t] for t in range(N_PIECES) for _ in range(self.s.p_held[t])]}
            if sub == S_SUPPLY:
                out["rule_of"] = STORES[self.s.p_rule]
                out["last"] = PIECES[self.s.p_kind] if self.s.p_count else None
        elif sub == S_AGENT_PIECE or sub == S_DEALER_OMIT:
            i = self.s.p_order
            out |= {"order": self.order_texts()[a.order[i]], "stage": a.stage[i] + 1,
                    "left": self.s.p_left,
                    "chosen": [PIECES[t] for t in range(N_PIECES) for _ in range(self.s.p_held[t])]}
        elif sub == S_KEEP:
            out |= {"left": self.s.p_left,
                    "kept": [PIECES[t] for t in range(N_PIECES) for _ in range(self.s.p_held[t])]}
        elif sub == S_REPLACE:
            out["order_slot"] = self.s.p_order + 1
        elif sub == S_GOAL:
            out |= {"card": "target" if self.s.p_goal == 0 else f"demand {self.s.p_goal}",
                    "supplied": self.s.p_count,
                    "kinds": [PIECES[t] for t in range(N_PIECES) if (self.s.p_mask >> t) & 1]}
        return out

    def observation(self, int seat):
        """What `seat` may see, as plain Python values: everything but the order of the
        decks and the orders another player has on offer."""
        texts = self.order_texts()
        obs = {
            "seat": seat,
            "day": self.s.day + 1,
            "phase": ("draft", "run", "orders", "store agents", "cleanup", "over")[self.s.phase],
            "decision": SUB_NAMES[self.s.sub],
            "to_move": self.s.to_move,
            "start": self.s.start,
            "sides": {STORES[z]: "ABCD"[self.s.side[z]] for z in range(N_STORES)},
            "pending": self._pending(),
            "display": self._display(),
            "players": [self._seat_view(p) for p in range(self.cfg.n)],
            "deck_sizes": {
                "parts_a": self.cfg.a_count - self.s.a_pos,
                "parts_b": self.cfg.b_count - self.s.b_pos,
                "employees": [self.cfg.emp_deck_len[z] - self.s.emp_pos[z] for z in range(self.cfg.n_emp_decks)],
                "orders": [self.s.olen[z] for z in range(N_SIZES)],
            },
        }
        if self.s.sub == S_REPLACE and self.s.to_move == seat:
            obs["offer"] = [texts[i] if i >= 0 else None for i in self.s.p_drawn]
        if self.cfg.solo:
            obs["solo"] = self.objectives()
        return obs

    def card_text(self, int j):
        """Text of Factory Manager card j in play: 0 the Weekly Target, then the Demands."""
        so = self.params.solo
        return so.targets[self.s.target] if j == 0 else so.demands[self.s.demand_deck[j - 1]]

    def objectives(self):
        """The Factory Manager cards face up, each with its objectives and whether each
        holds if the week ended now (at the end: the verdict)."""
        cdef bint met[MAX_SOLO_CARDS][MAX_GOALS]
        if not self.cfg.solo:
            raise ValueError("objectives are the solo game's (players = 1)")
        self.judge(met)
        out = []
        for j in range(self.s.revealed):
            text = self.card_text(j)
            out.append({"card": "target" if j == 0 else f"demand {j}", "text": text,
                        "supplied": bool(self.s.goal_supplied[j]),
                        "met": [bool(met[j][g]) for g in range(len(parse_card(text)))]})
        return out

    def to_dict(self):
        """The whole state (deck orders and offers included), for traces."""
        names = self.part_names()
        texts = self.order_texts()
        d = self.observation(self.s.to_move)
        d.pop("seat")
        d["decks"] = {
            "parts_a": [names[self.s.deck_a[i]] for i in range(self.s.a_pos, self.cfg.a_count)],
            "parts_b": [names[self.s.deck_b[i]] for i in range(self.s.b_pos, self.cfg.b_count)],
            "parts_box": ([names[self.s.deck_a[i]] for i in range(self.cfg.a_count, self.cfg.a_total)]
                          + [names[self.s.deck_b[i]] for i in range(self.cfg.b_count, self.cfg.b_total)]),
            "employees": [[EMPLOYEES[self.cfg.emp_kind[self.s.emp_deck[z][i]]]
                           for i in range(self.s.emp_pos[z], self.cfg.emp_deck_len[z])]
                          for z in range(self.cfg.n_emp_decks)],
            "orders": [[texts[self.s.odeck[z][(self.s.ohead[z] + i) % MAX_ORDERS]] for i in range(self.s.olen[z])]
                       for z in range(N_SIZES)],
        }
        d["offer"] = ([texts[i] if i >= 0 else None for i in self.s.p_drawn]
                      if self.s.sub == S_REPLACE else [])
        if self.cfg.solo:
            d["decks"]["demands_unseen"] = [self.params.solo.demands[self.s.demand_deck[i]]
                                            for i in range(self.s.revealed - 1, self.cfg.n_demands)]
        return d

    def render(self):
        """A few readable lines per player: factory, belt, store room, orders, tracks."""
        d = self.to_dict()
        lines = [f"day {d['day']} ({d['phase']}), start player {d['start']}, sides "
                 + "".join(d["sides"].values())]
        for p, v in enumerate(d["players"]):
            belt = " | ".join(" ".join(sq) or "-" for sq in v["belt"])
            parts = ", ".join(f"{k} {n}" for k, n in v["parts"].items())
            orders = "; ".join("-" if o is None else f"{o['order']} (stage {o['stage']})" for o in v["orders"])
            tracks = " ".join(f"{k}:{t[0]}" for k, t in v["tracks"].items() if t[0])
            lines.append(f"  seat {p}: £{v['standing']} now, coal {v['coal']}, employee {v['employee']}")
            lines.append(f"    parts: {parts}")
            lines.append(f"    belt: [{belt}]  store room: {' '.join(v['store_room']) or '-'}")
            lines.append(f"    orders: {orders}  completed: {sum(v['completed'].values())}  tracks: {tracks or '-'}")
        return "\n".join(lines)

    def describe(self, int action):
        p = self.s.to_move
        sub = self.s.sub
        names = self.part_names()
        texts = self.order_texts()
        cdef AcSeat* a = &self.s.seat[p]
        if A_PACKET <= action < A_PICK:
            j = action - A_PACKET
            v = self._display()[j]
            return f"take {v['kind']} packet {j % self.cfg.n + 1}: {', '.join(v['cards'])}"
        if A_PICK <= action < A_ORDER:
            v = self._display()[self.s.p_packet]
            return f"keep {v['cards'][action - A_PICK]}"
        if A_SLOT <= action < A_PIECE:
            s = action - A_SLOT
            here = names[a.slot[s]] if a.slot[s] >= 0 else None
            if sub == S_PLACE:
                return f"place {names[self.s.p_part]} on {self.slot_name(s)}" + (f", covering {here}" if here else "")
            if sub == S_ASSIGN:
                return f"assign the {self._employee_name(a.employee)} to {here} on {self.slot_name(s)}"
            if sub == S_FREE_SLOT:
                how = "without coal (Owner)" if self.s.p_emp == E_OWNER else "a second time (Helpers)"
                return f"operate {here} on {self.slot_name(s)} {how}"
            return f"operate {here} on {self.slot_name(s)}"
        if A_PIECE <= action < A_TRADE:
            piece = PIECES[action - A_PIECE]
            verb = {S_INPUT: "use", S_OUTPUT: "make", S_COPY: "copy", S_CHUTE: "chute to the store room:",
                    S_MOVE_PIECE: "move", S_SUPPLY: "supply", S_AGENT_PIECE: "pay the stage with",
                    S_DEALER_OMIT: "do the stage without", S_KEEP: "keep overnight:",
                    S_GOAL: "supply"}[sub]
            return f"{verb} {piece}"
        if A_TRADE <= action < A_SQUARE:
            return f"trade {PIECES[action - A_TRADE]} for coal"
        if A_SQUARE <= action < A_OPTION:
            q = action - A_SQUARE
            if sub == S_TARGET:
                return f"work on square {q + 1}"
            if sub == S_MOVE_TO:
                return f"to square {q + 1}"
            return f"the {EMPLOYEES[self.s.p_emp]} works on square {q + 1}"
        if A_OPTION <= action < A_UPGRADE:
            o = action - A_OPTION
            part = self._all_parts()[self.s.p_part]
            return f"option {part.does[o]}"
        if A_UPGRADE <= action < A_PACKET:
            k = action - A_UPGRADE
            return f"upgrade {PIECES[UPG_FROM[k]]} to {PIECES[UPG_TO[k]]}"
        if A_ORDER <= action < A_SUPPLY:
            i = (action - A_ORDER) % MAX_HELD_ORDERS
            what = ("fulfil", "skip (Clerk)", "fulfil with any refined (Corner Shop Agent)",
                    "fulfil with fewer pieces (Dealer)")[(action - A_ORDER) // MAX_HELD_ORDERS]
            return f"{what} stage {a.stage[i] + 1} of {texts[a.order[i]]}"
        if action == A_SUPPLY:
            z = self.cfg.emp_store[a.employee]
            return f"supply {STORE_TITLES[z]}"
        if A_STORE <= action < A_EMPLOYEE:
            if sub == S_AS_STORE:
                return f"supply as {STORE_TITLES[action - A_STORE]}"
            return f"supply {STORE_TITLES[action - A_STORE]} (Department Store Agent)"
        if action == A_EMPLOYEE:
            return f"use the {self._employee_name(a.employee)}"
        if A_SIZE <= action < A_GOAL:
            return f"keep the {SIZES[action - A_SIZE]} order {texts[self.s.p_drawn[action - A_SIZE]]}"
        if A_GOAL <= action < N_ACTION_CODES:
            j = action - A_GOAL
            return f"supply the chocolate order of {'the target' if j == 0 else f'demand {j}'}: {self.card_text(j)}"
        return {S_MENU: "end the shift", S_OPEN: "load and push the first tile",
                S_UPGRADE: "stop upgrading", S_ORDERS: "done with orders",
                S_MOVE_TO: "leave it on its square",
                S_SUPPLY: "finish the supply", S_AGENT_STORE: "no extra supply"}[sub]

    def store_money(self):
        """(money, place) per store, each a list by seat, as if the game ended now."""
        cdef int money[N_SEATS]
        cdef int place[N_SEATS]
        m, pl = [], []
        for k in range(N_STORES):
            self.store_awards(k, money, place)
            m.append([money[p] for p in range(self.cfg.n)])
            pl.append([place[p] for p in range(self.cfg.n)])
        return m, pl

    def money_parts(self, int seat):
        """Money of `seat` as if scored now, by source."""
        cdef int parts[6]
        self.score_now(seat, parts)
        return dict(zip(("orders", "most_orders", "stores", "diversity", "chocolate", "coal"),
                        [parts[i] for i in range(6)]))

    # Hand-built positions (tests, examples). Pieces and parts are named; a part or an
    # employee card is taken from wherever it is in the decks or the display, so every
    # card stays accounted for.

    def set_seat(self, int seat, coal=None, money=None, belt=None, store=None, parts=None,
                 employee=None, orders=None, today=None):
        """Set parts of a player's position. belt: one list of piece names per square
        (square 1 by the entrance); store: piece names; parts: {slot name: part name}
        placed as in the draft (covering what is there); employee: a name, or (name,
        store) for the Director, hired now (gifts included); orders: one (size, index within the size, stage) per order
        slot, stage 1-based; today: Corner Shop money earned today (C sides), counted in
        money too."""
        cdef AcSeat* a = &self.s.seat[seat]
        cdef int q, t, i, card
        index = {name: t for t, name in enumerate(PIECES)}
        if coal is not None:
            a.coal = coal
        if money is not None:
            a.money = money
        if today is not None:
            a.money += today - a.money_today
            a.money_today = today
        if belt is not None:
            if len(belt) != self.cfg.squares:
                raise ValueError(f"the belt has {self.cfg.squares} squares")
            for q in range(self.cfg.squares):
                for t in range(N_PIECES):
                    a.belt[q][t] = 0
                for name in belt[q]:
                    a.belt[q][index[name]] += 1
        if store is not None:
            for t in range(N_PIECES):
                a.store[t] = 0
            for name in store:
                a.store[index[name]] += 1
        if parts is not None:
            slots = {self.slot_name(s): s for s in range(self.cfg.slots)}
            names = self.part_names()
            for slot, name in parts.items():
                self.s.p_part = self._take_part(names.index(name))
                if a.slot[slots[slot]] >= 0:
                    a.covered[a.n_covered] = a.slot[slots[slot]]
                    a.n_covered += 1
                a.slot[slots[slot]] = self.s.p_part
        if employee is not None:
            name, store = (employee, None) if isinstance(employee, str) else employee
            card = self._take_employee(EMPLOYEES.index(name), -1 if store is None else STORES.index(store))
            if a.employee >= 0:
                self.s.emp_discard[self.s.n_emp_discard] = a.employee
                self.s.n_emp_discard += 1
            self.hire(seat, card)
        if orders is not None:
            for i, (size, k, stage) in enumerate(orders):
                self._take_order(seat, i, self.cfg.order_first[SIZES.index(size)] + k)
                a.stage[i] = stage - 1

    def _take_order(self, int seat, int i, int id):
        # Order `id` goes to order slot i of `seat`; what was there takes its place (in
        # its deck, or in the slot of the player who held it).
        cdef int z = self.cfg.orders[id].size, p, j
        cdef int old = self.s.seat[seat].order[i]
        ring = [self.s.odeck[z][(self.s.ohead[z] + j) % MAX_ORDERS] for j in range(self.s.olen[z])]
        if id in ring:
            unseen = self.s.ounseen[z] - (ring.index(id) < self.s.ounseen[z])
            ring.remove(id)
            self._set_ring(z, ring)
            self.s.ounseen[z] = unseen
            if old >= 0:
                self.order_to_bottom(old, (1 << self.cfg.n) - 1)  # it was held face up
        else:
            for p in range(self.cfg.n):
                for j in range(self.cfg.n_start):
                    if self.s.seat[p].order[j] == id:
                        self.s.seat[p].order[j] = old
                        self.s.seat[p].stage[j] = 0
                        break
                else:
                    continue
                break
            else:
                raise ValueError(f"order {self.order_texts()[id]!r} is completed")
        self.s.seat[seat].order[i] = id

    def _set_ring(self, int z, ring):
        # Who saw each card goes with the card.
        seen = {self.s.odeck[z][(self.s.ohead[z] + j) % MAX_ORDERS]: self.s.oseen[z][(self.s.ohead[z] + j) % MAX_ORDERS]
                for j in range(self.s.olen[z])}
        unseen = min(self.s.ounseen[z], len(ring))
        self.s.ohead[z] = 0
        self.s.olen[z] = len(ring)
        self.s.ounseen[z] = unseen
        for j, id in enumerate(ring):
            self.s.odeck[z][j] = id
            self.s.oseen[z][j] = seen.get(id, 0)

    def _take_part(self, int id):
        cdef int i
        if id < self.cfg.n_printed:
            # Printed parts are on every board; a second copy comes from nowhere.
            raise ValueError("printed parts cannot be placed again")
        for i in range(DISPLAY):
            if self.s.disp_part[i] == id:
                self.s.disp_part[i] = -1
                return id
        # A part in the box swaps places with the next card of its deck.
        for i in range(self.s.a_pos, self.cfg.a_total):
            if self.s.deck_a[i] == id:
                self.s.deck_a[i] = self.s.deck_a[self.s.a_pos]
                self.s.deck_a[self.s.a_pos] = id
                self.s.a_pos += 1
                return id
        for i in range(self.s.b_pos, self.cfg.b_total):
            if self.s.deck_b[i] == id:
                self.s.deck_b[i] = self.s.deck_b[self.s.b_pos]
                self.s.deck_b[self.s.b_pos] = id
                self.s.b_pos += 1
                return id
        raise ValueError(f"part {self.part_names()[id]} is neither in a deck nor in the display")

    def _take_employee(self, int kind, int store):
        cdef int i, z, card
        for i in range(MAX_DISP_EMP):
            card = self.s.disp_emp[i]
            if card >= 0 and self.cfg.emp_kind[card] == kind and store in (-1, self.cfg.emp_store[card]):
                self.s.disp_emp[i] = -1
                return card
        for z in range(self.cfg.n_emp_decks):
            for i in range(self.s.emp_pos[z], self.cfg.emp_deck_len[z]):
                card = self.s.emp_deck[z][i]
                if self.cfg.emp_kind[card] == kind and store in (-1, z):
                    self.s.emp_deck[z][i] = self.s.emp_deck[z][self.s.emp_pos[z]]
                    self.s.emp_deck[z][self.s.emp_pos[z]] = card
                    self.s.emp_pos[z] += 1
                    return card
        raise ValueError(f"no {EMPLOYEES[kind]} left in the decks or the display")

    def set_solo(self, demands):
        """Put the Demands `demands` (indexes into solo.demands) in play in this order:
        Initial ones first, then Daily ones (revealed as the days come)."""
        cdef int i
        if not self.cfg.solo:
            raise ValueError("set_solo is for the solo game (players = 1)")
        deck = list(demands) + [self.s.demand_deck[i] for i in range(self.cfg.n_demands)
                                if self.s.demand_deck[i] not in demands]
        if sorted(deck) != list(range(self.cfg.n_demands)):
            raise ValueError("demands must be distinct indexes into solo.demands")
        for i, d in enumerate(deck):
            self.s.demand_deck[i] = d

    def complete_orders(self, int seat, sizes):
        """Count an order of each size named (drawn from its deck) as completed."""
        cdef AcSeat* a = &self.s.seat[seat]
        cdef int z, id
        for size in sizes:
            z = SIZES.index(size)
            id = self.draw_order(z)
            if id < 0:
                raise ValueError(f"the {size} deck is empty")
            a.done[a.n_done] = id
            a.n_done += 1
            a.done_size[z] += 1

    def set_track(self, int seat, store, int position):
        """Move a marker to `position` now (it arrives after every marker moved before)."""
        cdef int z = STORES.index(store)
        self.s.seat[seat].track[z] = position
        self.s.stamps += 1
        self.s.seat[seat].stamp[z] = self.s.stamps

    def enter(self, phase, int seat, day=None, start=None):
        """Jump to `phase` ("run", "orders" or "cleanup") with `seat` to act first; the
        players after it in turn order follow as in play. day is 1-based."""
        cdef int p, i
        if day is not None:
            self.s.day = day - 1
            if self.cfg.solo:
                self.s.revealed = 1 + self.cfg.initial + min(self.s.day + 1, self.cfg.daily)
        if start is not None:
            self.s.start = start
        # The day's draft counts as done: what is left of the display is discarded.
        for p in range(self.cfg.n):
            self.s.has_part[p] = True
            self.s.has_emp[p] = True
        for i in range(MAX_DISP_EMP):
            if i < DISPLAY and self.s.disp_part[i] >= 0:
                self.s.part_discard[self.s.n_part_discard] = self.s.disp_part[i]
                self.s.n_part_discard += 1
                self.s.disp_part[i] = -1
            if self.s.disp_emp[i] >= 0:
                self.s.emp_discard[self.s.n_emp_discard] = self.s.disp_emp[i]
                self.s.n_emp_discard += 1
                self.s.disp_emp[i] = -1
        self.s.turn = (seat - self.s.start) % self.cfg.n
        if phase == "run":
            self.s.phase = PH_RUN
            self.begin_run()
        elif phase == "orders":
            self.s.phase = PH_ORDERS
            self.s.sub = S_ORDERS
            self.s.to_move = seat
        elif phase == "cleanup":
            self.s.phase = PH_CLEANUP
            self.cleanup_seat()
        else:
            raise ValueError(f"unknown phase {phase!r}: run, orders or cleanup")
        self.assert_valid()


SUB_NAMES = ("packet", "pick", "place", "assign", "shift", "target square", "option", "input",
             "output", "upgrade", "copy", "chute", "employee square", "move piece", "move to",
             "orders", "supply", "shop agent piece", "dealer omit", "store agent", "keep",
             "replace order", "chocolate order", "supply as", "employee part", "before the push")
