# cython: language_level=3
"""Enemy Chocolatier (James Ernest; Cheapass Games 2006): the rules engine.

A turn: income is collected automatically when the turn begins ($5 = 1 Point on the cash
held, point income, dollar income; 20 points win at once), then the player decides
purchase by purchase: an action is a house id to buy, or STOP. A purchase beyond the
turn's limit spends a rain check, so spending one is no separate decision. A turn in
which nothing can be bought passes by itself (the only choice would be STOP); a turn
without any purchase earns a rain check.
"""
cimport cython
from libc.string cimport memset
from libc.stdint cimport uint64_t

from simcore.rng cimport Rng, rng_seed, rng_next, rng_below, shuffle_i8
from simcore.state cimport GameState, MAX_PLAYERS
from simcore.batchjob cimport BatchJob
from simcore.strategy cimport Lineup

from pathlib import Path

from simcore.games.enemy_chocolatier.params import ABILITIES, COLOURS, INGREDIENTS, EnemyParams
from simcore.meta import FeatureRoles

__all__ = ["EnemyState"]

cdef extern from *:
    """
    static inline int ec_ctz64(unsigned long long x) { return __builtin_ctzll(x); }
    """
    int ctz64 "ec_ctz64"(unsigned long long x) noexcept nogil

FEATURES = (
    "start_money", "turn_order", "won_points", "won_recipe", "points", "money",
    "recipe_progress", "houses_owned", "nbhds_closed", "nbhds_lost", "nbhds_held",
    "houses_bought_away", "houses_lost", "rain_checks_earned", "rain_checks_spent",
    "rain_checks_held", "income_dollars", "income_points",
) + tuple(f"ability_{a}" for a in ABILITIES)
N_FEATURES = len(FEATURES)


cdef inline uint64_t bit(int i) noexcept nogil:
    return (<uint64_t>1) << i


ctypedef fused Game:
    EnemyState
include "simcore/loop.pxi"


@cython.final
cdef class EnemyState(GameState):
    """Enemy Chocolatier, 2 to 6 players."""

    NAME = "enemy_chocolatier"
    TITLE = "Enemy Chocolatier"
    PLAYERS = (2, 6)
    PARAMS = EnemyParams
    DEFAULTS = Path(__file__).parent / "data" / "rules.toml"
    FEATURE_ROLES = FeatureRoles(
        positional=("start_money", "turn_order"),  # both follow from the turn order
        # The result and what a player holds at the end (houses, income, rain checks).
        outcomes=("won_*", "points", "money", "recipe_progress", "houses_owned", "nbhds_held",
                  "rain_checks_held", "income_*"),
        behaviours=("houses_*", "nbhds_*", "rain_checks_*"),
    )
    # Each later seat starts with this many dollars more (rulebook: 1).
    POSITION_KNOBS = {"start_money.step": (0, 1, 2, 3)}
    # A race to 20 points or a recipe, won during play: a bonus at the end changes no result.
    BONUS_DECIDES = False
    WON_IN_PLAY = ("points", "recipe", "cap")
    END_REASONS = ("points", "recipe", "cap")
    FEATURES = FEATURES
    # Restricted play: a purchase takes the colour of the house it buys (a recipe
    # ingredient, or gray); STOP takes nothing.
    COMPONENTS = COLOURS
    INVARIANTS = (
        "money is conserved between the players and the bank, and nobody's is negative",
        "every house has at most one owner and ingredient counts match the houses owned",
        "a neighbourhood is closed exactly when all its houses have one owner (and the "
        "open houses are those of the open neighbourhoods)",
        "each seat's income and abilities are those of the neighbourhoods it has closed",
        "while the game runs: a seat is to move, nobody has won yet, rain checks are not "
        "negative and purchases beyond the limit each spent a rain check",
    )

    def __init__(self, params):
        cdef int k, j, i, h, nb, a
        self.params = params
        memset(&self.cfg, 0, sizeof(EcConfig))
        board = params.board
        slots = list(board.slots)
        self.cfg.n_players = params.players
        self.cfg.n_seg = len(board.segments)
        self.cfg.n_slots = len(slots)
        self.cfg.n_nb = self.cfg.n_seg * self.cfg.n_slots
        h = 0
        for k, seg in enumerate(board.segments):
            for j, hood in enumerate(seg):
                nb = k * self.cfg.n_slots + j
                self.cfg.nb_first[nb] = h
                self.cfg.nb_len[nb] = len(hood.prices)
                self.cfg.nb_dollars[nb] = hood.dollars
                self.cfg.nb_points[nb] = hood.points
                for name in hood.abilities:
                    self.cfg.nb_abil[nb][ABILITIES.index(name)] += 1
                    self.cfg.nb_abil_mask[nb] |= 1u << ABILITIES.index(name)
                for price, colour in zip(hood.prices, hood.colours):
                    self.cfg.house_nb[h] = nb
                    self.cfg.nb_houses[nb][h >> 6] |= bit(h & 63)
                    self.cfg.price[h] = price
                    self.cfg.colour[h] = COLOURS.index(colour)
                    h += 1
        self.cfg.n_houses = h
        self.cfg.max_price = max(self.cfg.price[k] for k in range(h))
        for a in range(self.cfg.max_price + 1):
            for k in range(h):
                if self.cfg.price[k] <= a:
                    self.cfg.price_le[a][k >> 6] |= bit(k & 63)
        for a_name, b_name in board.inner_touch:
            i, j = slots.index(a_name), slots.index(b_name)
            self.cfg.inner_adj[i] |= bit(j)
            self.cfg.inner_adj[j] |= bit(i)
        self.cfg.n_next = len(board.next_touch)
        for i, (a_name, b_name) in enumerate(board.next_touch):
            self.cfg.next_a[i] = slots.index(a_name)
            self.cfg.next_b[i] = slots.index(b_name)
        self.cfg.ring_closed = board.ring_closed
        self.cfg.shuffle = board.shuffle_segments
        for name in board.factory_slots:
            j = slots.index(name)
            for k in range(self.cfg.n_seg):
                self.cfg.factory_mask |= bit(k * self.cfg.n_slots + j)
        self.cfg.start_first = params.start_money.first
        self.cfg.start_step = params.start_money.step
        for k, v in enumerate(params.compensation.by_position(self.cfg.n_players)):
            self.cfg.komi[k] = v
        self.cfg.base_income = params.income.base
        self.cfg.cash_per_point = params.income.cash_per_point
        self.cfg.buys = params.buys.per_turn
        self.cfg.buys_buy3 = params.buys.with_buy3
        self.cfg.buyout_price = params.buyout.price
        self.cfg.buyout_bank = params.buyout.to_bank
        self.cfg.ten_price = params.buyout.ten_price
        self.cfg.ten_bank = params.buyout.ten_to_bank
        self.cfg.rain_earned = params.rain_checks.earned
        self.cfg.win_points = params.win.points
        self.cfg.round_cap = params.sim.round_cap
        self.cfg.record_rounds = params.sim.record_rounds
        self.cfg.n_recipes = len(params.recipes)
        for k, card in enumerate(params.recipes):
            for a in range(N_ING):
                self.cfg.recipe[k][a] = card[a]
                for j in range(card[a], MAX_HOUSES + 1):
                    self.cfg.recipe_le[a][j] |= 1u << k
        self.n_players = params.players
        self.n_features = N_FEATURES
        self.n_interim = 2 * self.cfg.record_rounds
        self.reset(0)

    cdef int play_batch(self, object lineup, BatchJob* job) except -1 nogil:
        return play_games(self, <Lineup>lineup, job)

    cdef int play_out(self, Rng* rng, int depth) except -2 nogil:
        return play_out_uniform(self, rng, depth)

    # ---- setup ----

    cdef void reset(self, uint64_t seed) noexcept nogil:
        cdef int n = self.cfg.n_players
        cdef int k, p
        cdef signed char cards[MAX_RECIPES]
        memset(&self.s, 0, sizeof(Ec))
        memset(self.s.owner, -1, sizeof(self.s.owner))
        memset(self.s.closed_by, -1, sizeof(self.s.closed_by))
        rng_seed(&self.s.rng, seed)
        for k in range(self.cfg.n_seg):
            self.s.seg_at[k] = k
        if self.cfg.shuffle:
            shuffle_i8(&self.s.rng, self.s.seg_at, self.cfg.n_seg)
        self.place_segments()
        self.update_open()
        for k in range(self.cfg.n_recipes):
            cards[k] = k
        shuffle_i8(&self.s.rng, cards, self.cfg.n_recipes)
        for p in range(n):
            self.s.recipe[p] = cards[p]
        self.s.first = rng_below(&self.s.rng, n)
        for k in range(n):
            p = (self.s.first + k) % n
            self.s.money[p] = self.cfg.start_first + k * self.cfg.start_step
            self.s.start_money[p] = self.s.money[p]
            self.s.money_total += self.s.money[p]
        self.s.winner = -1
        if self.begin_turn(self.s.first) == 0:
            self.pass_turn()

    cdef void place_segments(self) noexcept nogil:
        # Inside a segment the touching places are fixed; across segments they depend on
        # which segment setup put next to which.
        cdef int ns = self.cfg.n_slots
        cdef int pos, nxt, a, b, j, i, na, nb
        for nb in range(self.cfg.n_nb):
            self.s.adj[nb] = 0
        for pos in range(self.cfg.n_seg):
            a = self.s.seg_at[pos]
            for j in range(ns):
                self.s.adj[a * ns + j] |= self.cfg.inner_adj[j] << (a * ns)
            nxt = pos + 1
            if nxt == self.cfg.n_seg:
                if not self.cfg.ring_closed:
                    continue
                nxt = 0
            if nxt == pos:
                continue
            b = self.s.seg_at[nxt]
            for i in range(self.cfg.n_next):
                na = a * ns + self.cfg.next_a[i]
                nb = b * ns + self.cfg.next_b[i]
                self.s.adj[na] |= bit(nb)
                self.s.adj[nb] |= bit(na)

    # ---- turns ----

    cdef int begin_turn(self, int p) noexcept nogil:
        # Income, then the purchase decisions. Returns 1 if `p` has a decision to make,
        # 0 if it cannot buy anything (the turn must be passed), -1 if it won on points.
        cdef int d
        self.s.to_move = p
        self.s.turn_buys = 0
        self.s.turn_rain = 0
        # $5 = 1 Point counts the cash held before this turn's money comes in.
        self.s.points[p] += (self.s.money[p] // self.cfg.cash_per_point) * self.s.abil[p][AB_CASH_POINTS]
        self.s.points[p] += self.income_points(p)
        d = self.income_dollars(p)
        self.s.money[p] += d
        self.s.bank -= d
        if self.s.points[p] >= self.cfg.win_points:
            self.finish(END_POINTS, p)
            return -1
        if self.find_offer():
            return 1
        return 0

    cdef int pass_turn(self) noexcept nogil:
        # End the turn of to_move and begin the next ones until a seat has a decision
        # (turns in which nothing can be bought pass by themselves).
        cdef int p = self.s.to_move
        cdef int r
        while True:
            if self.s.turn_buys == 0:
                self.s.rain[p] += self.cfg.rain_earned
                self.s.rain_got[p] += self.cfg.rain_earned
            p = (p + 1) % self.cfg.n_players
            if p == self.s.first:
                self.record_round()
                self.s.round += 1
                if self.s.round >= self.cfg.round_cap:
                    self.finish(END_CAP, -1)
                    return -1
            r = self.begin_turn(p)
            if r < 0:
                return -1
            if r > 0:
                return p

    cdef int current_player(self) noexcept nogil:
        return self.s.to_move

    cdef uint64_t available(self) noexcept nogil:
        cdef uint64_t avail = self.cfg.factory_mask
        cdef uint64_t m = self.s.closed_mask
        while m:
            avail |= self.s.adj[ctz64(m)]
            m &= m - 1
        return avail

    cdef uint64_t buyable(self, int p) noexcept nogil:
        cdef uint64_t closed = self.s.closed_mask
        cdef uint64_t avail = self.available()
        cdef uint64_t m
        # Buy Anywhere lifts the "touches the Factory or a closed one" condition, Buy
        # Closed the "not closed itself" one; neither gives the other.
        if self.s.abil[p][AB_BUY_ANYWHERE] > 0:
            avail = (~(<uint64_t>0)) >> (64 - self.cfg.n_nb)
        m = avail & ~closed
        if self.s.abil[p][AB_BUY_CLOSED] > 0:
            m |= avail & closed
        return m

    cdef int cost(self, int p, int h) noexcept nogil:
        return house_cost(&self.cfg, self.s.owner, &self.s.abil[0], h)

    cdef int buy_limit(self, int p) noexcept nogil:
        if self.s.abil[p][AB_BUY3] > 0 and self.cfg.buys_buy3 > self.cfg.buys:
            return self.cfg.buys_buy3
        return self.cfg.buys

    cdef void collect_houses(self, uint64_t m, uint64_t* out) noexcept nogil:
        cdef int w, nb
        for w in range(HW):
            out[w] = 0
        while m:
            nb = ctz64(m)
            m &= m - 1
            for w in range(HW):
                out[w] |= self.cfg.nb_houses[nb][w]

    cdef void update_open(self) noexcept nogil:
        # Openness changes only when a neighbourhood closes or reopens, so the houses
        # open to a seat without abilities are kept instead of found at every decision.
        self.collect_houses(self.available() & ~self.s.closed_mask, self.s.open_houses)

    cdef bint find_offer(self) noexcept nogil:
        # The houses to_move may buy now, as a set kept in the state: the check after each
        # purchase ("can it buy more?") and legal_actions share it, and sets of houses
        # keep the search free of per-house branches. True if there is any.
        cdef int p = self.s.to_move
        cdef int q, w, money = self.s.money[p]
        cdef uint64_t any_house = 0
        cdef uint64_t where[HW]
        cdef const uint64_t* cheap
        for w in range(HW):
            self.s.offer[w] = 0
        if self.s.turn_buys >= self.buy_limit(p) and self.s.rain[p] == 0:
            return False
        if self.s.abil[p][AB_BUY_CLOSED] > 0 or self.s.abil[p][AB_BUY_ANYWHERE] > 0:
            self.collect_houses(self.buyable(p), where)
        else:
            for w in range(HW):
                where[w] = self.s.open_houses[w]
        cheap = self.cfg.price_le[money if money < self.cfg.max_price else self.cfg.max_price]
        for w in range(HW):
            self.s.offer[w] = cheap[w] & ~self.s.taken[w]
        for q in range(self.cfg.n_players):
            if q != p and money >= (self.cfg.ten_price if self.s.abil[q][AB_TEN_HOUSES] > 0 else self.cfg.buyout_price):
                for w in range(HW):
                    self.s.offer[w] |= self.s.owned[q][w]
        for w in range(HW):
            self.s.offer[w] &= where[w]
            any_house |= self.s.offer[w]
        return any_house != 0

    cdef int legal_actions(self, int* out) noexcept nogil:
        cdef int n = 0, w
        cdef uint64_t x
        if self.s.to_move < 0:
            return 0
        for w in range(HW):
            x = self.s.offer[w]
            while x:
                out[n] = (w << 6) + ctz64(x)
                n += 1
                x &= x - 1
        out[n] = STOP
        return n + 1

    cdef int apply(self, int action) except -2 nogil:
        cdef int p = self.s.to_move
        cdef int h = action
        cdef int q, c, to_bank, nb, k, end
        cdef bint whole
        if action == STOP:
            return self.pass_turn()
        if self.s.turn_buys >= self.buy_limit(p):
            self.s.rain[p] -= 1
            self.s.rain_spent[p] += 1
            self.s.turn_rain += 1
        q = self.s.owner[h]
        c = self.cost(p, h)
        self.s.money[p] -= c
        if q >= 0:
            # A buy-out: the owner cannot refuse and gets the price less the bank's part.
            to_bank = self.cfg.ten_bank if self.s.abil[q][AB_TEN_HOUSES] > 0 else self.cfg.buyout_bank
            self.s.money[q] += c - to_bank
            self.s.bank += to_bank
            self.s.ingr[q][self.cfg.colour[h]] -= 1
            self.s.owned[q][h >> 6] &= ~bit(h & 63)
            self.s.n_away[p] += 1
            self.s.n_taken[q] += 1
        else:
            self.s.bank += c
        self.s.owner[h] = p
        self.s.owned[p][h >> 6] |= bit(h & 63)
        self.s.taken[h >> 6] |= bit(h & 63)
        self.s.ingr[p][self.cfg.colour[h]] += 1
        self.s.turn_buys += 1
        nb = self.cfg.house_nb[h]
        if self.s.closed_by[nb] >= 0:
            # Buy Closed: the neighbourhood reopens and its owner loses its rewards.
            self.gain(q, nb, -1)
            self.s.closed_by[nb] = -1
            self.s.closed_mask &= ~bit(nb)
            self.s.n_lost[q] += 1
            self.update_open()
        whole = True
        end = self.cfg.nb_first[nb] + self.cfg.nb_len[nb]
        for k in range(self.cfg.nb_first[nb], end):
            if self.s.owner[k] != p:
                whole = False
                break
        if whole:
            # Closed: its rewards act at once, and its neighbours open this very turn.
            self.s.closed_by[nb] = p
            self.s.closed_mask |= bit(nb)
            self.gain(p, nb, 1)
            self.s.n_closed[p] += 1
            self.update_open()
        if self.recipe_done(p):
            self.finish(END_RECIPE, p)
            return -1
        if self.cfg.colour[h] < N_ING:
            self.rule_out(p)
        if self.find_offer():
            return p
        return self.pass_turn()

    cdef void gain(self, int p, int nb, int sign) noexcept nogil:
        cdef int k
        if self.cfg.nb_dollars[nb] > 0:
            self.s.dollars[p] += sign * self.cfg.nb_dollars[nb]
            self.s.dollar_nbs[p] += sign
        if self.cfg.nb_points[nb] > 0:
            self.s.pts[p] += sign * self.cfg.nb_points[nb]
            self.s.point_nbs[p] += sign
        for k in range(N_ABIL):
            self.s.abil[p][k] += sign * self.cfg.nb_abil[nb][k]

    cdef int income_dollars(self, int p) noexcept nogil:
        # All $ +1 raises each money-producing neighbourhood, not the base income.
        return self.cfg.base_income + self.s.dollars[p] + self.s.dollar_nbs[p] * self.s.abil[p][AB_ALL_DOLLARS]

    cdef int income_points(self, int p) noexcept nogil:
        return self.s.pts[p] + self.s.point_nbs[p] * self.s.abil[p][AB_ALL_POINTS]

    cdef bint recipe_done(self, int p) noexcept nogil:
        cdef const int* need = self.cfg.recipe[self.s.recipe[p]]
        cdef int k
        for k in range(N_ING):
            if self.s.ingr[p][k] < need[k]:
                return False
        return True

    cdef void rule_out(self, int p) noexcept nogil:
        # The cards needing no more of each ingredient than p has (a table lookup each).
        cdef const int* have = self.s.ingr[p]
        self.s.ruled_out[p] |= (self.cfg.recipe_le[0][have[0]] & self.cfg.recipe_le[1][have[1]]
                                & self.cfg.recipe_le[2][have[2]] & self.cfg.recipe_le[3][have[3]])

    cdef int progress(self, int p) noexcept nogil:
        cdef const int* need = self.cfg.recipe[self.s.recipe[p]]
        cdef int k, t = 0
        for k in range(N_ING):
            t += self.s.ingr[p][k] if self.s.ingr[p][k] < need[k] else need[k]
        return t

    cdef int recipe_total(self, int p) noexcept nogil:
        cdef const int* need = self.cfg.recipe[self.s.recipe[p]]
        return need[0] + need[1] + need[2] + need[3]

    cdef void record_round(self) noexcept nogil:
        cdef int p, r = self.s.rounds_done
        if r >= self.cfg.record_rounds:
            return
        for p in range(self.cfg.n_players):
            self.s.rec_points[p][r] = self.s.points[p]
            self.s.rec_ingr[p][r] = self.progress(p)
        self.s.rounds_done = r + 1

    cdef void finish(self, int end, int winner) noexcept nogil:
        cdef int p, r
        self.s.end = end
        self.s.winner = winner
        self.s.to_move = -1
        for p in range(self.cfg.n_players):
            for r in range(self.s.rounds_done, self.cfg.record_rounds):
                self.s.rec_points[p][r] = self.s.points[p]
                self.s.rec_ingr[p][r] = self.progress(p)

    # ---- results ----

    cdef int first_player(self) noexcept nogil:
        return self.s.first

    cdef int end_reason(self) noexcept nogil:
        return self.s.end

    cdef int standing(self, int seat) noexcept nogil:
        # Per mille of the way to the nearer win: points against win_points, recipe
        # ingredients owned against those needed.
        cdef int a = self.s.points[seat] * 1000 // self.cfg.win_points
        cdef int b = self.progress(seat) * 1000 // self.recipe_total(seat)
        if b > a:
            a = b
        return a if a < 1000 else 1000

    cdef void outcome(self, int* scores, int* ranks) noexcept nogil:
        # The score is the points track (plus the house rule's bonus by turn position);
        # the winner ranks 1, everyone else 2. A capped game is a draw: everyone ranks 1
        # and shares the victory. The game is a race decided in play, so the bonus
        # changes no rank.
        cdef int p
        for p in range(self.cfg.n_players):
            scores[p] = self.s.points[p] + self.cfg.komi[self.turn_position(p)]
            if self.s.winner < 0 or p == self.s.winner:
                ranks[p] = 1
            else:
                ranks[p] = 2

    cdef void interim(self, int seat, int* out) noexcept nogil:
        cdef int r, n = self.cfg.record_rounds
        for r in range(n):
            out[r] = self.s.rec_points[seat][r]
            out[n + r] = self.s.rec_ingr[seat][r]

    cdef void features(self, int p, int* out) noexcept nogil:
        cdef int k, h, held = 0, owned = 0
        for k in range(self.cfg.n_nb):
            if self.s.closed_by[k] == p:
                held += 1
        for h in range(self.cfg.n_houses):
            if self.s.owner[h] == p:
                owned += 1
        out[0] = self.s.start_money[p]
        out[1] = (p - self.s.first + self.cfg.n_players) % self.cfg.n_players
        out[2] = self.s.winner == p and self.s.end == END_POINTS
        out[3] = self.s.winner == p and self.s.end == END_RECIPE
        out[4] = self.s.points[p]
        out[5] = self.s.money[p]
        out[6] = self.progress(p)
        out[7] = owned
        out[8] = self.s.n_closed[p]
        out[9] = self.s.n_lost[p]
        out[10] = held
        out[11] = self.s.n_away[p]
        out[12] = self.s.n_taken[p]
        out[13] = self.s.rain_got[p]
        out[14] = self.s.rain_spent[p]
        out[15] = self.s.rain[p]
        out[16] = self.income_dollars(p)
        out[17] = self.income_points(p)
        for k in range(N_ABIL):
            out[18 + k] = self.s.abil[p][k]

    cdef int action_component(self, int action) noexcept nogil:
        if action == STOP:
            return -1
        return self.cfg.colour[action]

    # ---- search support ----

    cdef void copy_into(self, GameState other) noexcept nogil:
        (<EnemyState>other).s = self.s

    cdef void determinize(self, int observer, Rng* rng) noexcept nogil:
        # Hidden from `observer`: the other players' recipe cards. They come from the
        # cards it does not hold, and none may be one a player's holdings ever completed
        # after its purchase (ruled_out: it would have won then; its current holdings
        # are among those). Rejection keeps the deal uniform over the consistent ones;
        # after 16 misses (late in a game) a matching found by augmenting paths, over
        # seats and cards in random order, deals a consistent one.
        cdef signed char pool[MAX_RECIPES]
        cdef int seats[MAX_PLAYERS]
        cdef int n = self.cfg.n_players
        cdef int m = 0, k, p, i, attempt, ns = 0
        cdef bint ok
        for k in range(self.cfg.n_recipes):
            if k != self.s.recipe[observer]:
                pool[m] = k
                m += 1
        for p in range(n):
            if p != observer:
                seats[ns] = p
                ns += 1
        for attempt in range(16):
            shuffle_i8(rng, pool, m)
            ok = True
            for i in range(ns):
                self.s.recipe[seats[i]] = pool[i]
                if (self.s.ruled_out[seats[i]] >> pool[i]) & 1:
                    ok = False
            if ok:
                rng_seed(&self.s.rng, rng_next(rng))
                return
        self.match_recipes(seats, ns, pool, m)
        rng_seed(&self.s.rng, rng_next(rng))

    cdef void match_recipes(self, const int* seats, int ns, const signed char* pool, int m) noexcept nogil:
        # Kuhn's augmenting paths: give each seat of `seats` a card of `pool` outside its
        # ruled_out set, one card each. The true deal is one such matching, so one exists.
        cdef int holder[MAX_RECIPES]     # index into seats of the card's holder, -1 free
        cdef int card_of[MAX_PLAYERS]    # index into pool of each seat's card
        cdef int stack[MAX_PLAYERS]
        cdef int next_card[MAX_PLAYERS]
        cdef int from_card[MAX_PLAYERS]
        cdef unsigned int visited
        cdef int i, s, c, depth, done
        for c in range(m):
            holder[c] = -1
        for i in range(ns):
            # Depth-first search for an augmenting path from seat i.
            visited = 0
            depth = 0
            stack[0] = i
            next_card[0] = 0
            done = 0
            while depth >= 0 and not done:
                s = stack[depth]
                if next_card[depth] >= m:
                    depth -= 1
                    continue
                c = next_card[depth]
                next_card[depth] += 1
                if (visited >> c) & 1 or (self.s.ruled_out[seats[s]] >> pool[c]) & 1:
                    continue
                visited |= 1u << c
                from_card[depth] = c
                if holder[c] < 0:
                    # Flip the path: each seat on it takes the card it reached.
                    while depth >= 0:
                        c = from_card[depth]
                        s = stack[depth]
                        holder[c] = s
                        card_of[s] = c
                        depth -= 1
                    done = 1
                else:
                    depth += 1
                    stack[depth] = holder[c]
                    next_card[depth] = 0
        for i in range(ns):
            self.s.recipe[seats[i]] = pool[card_of[i]]

    cdef void observe(self, int seat, EcObs* o) noexcept nogil:
        cdef int k
        o.seat = seat
        o.cfg = &self.cfg
        for k in range(N_ING):
            o.need[k] = self.cfg.recipe[self.s.recipe[seat]][k]
        o.limit = self.buy_limit(seat)
        o.turn_buys = self.s.turn_buys
        o.money = self.s.money
        o.points = self.s.points
        o.rain = self.s.rain
        o.ingr = self.s.ingr
        o.owner = self.s.owner
        o.closed_by = self.s.closed_by
        o.closed_mask = self.s.closed_mask
        o.adj = self.s.adj
        o.dollars = self.s.dollars
        o.dollar_nbs = self.s.dollar_nbs
        o.pts = self.s.pts
        o.point_nbs = self.s.point_nbs
        o.abil = &self.s.abil[0]  # &...[0]: Cython would route the bare array through a temp typed for ingr

    cdef int validate(self) noexcept nogil:
        cdef int n = self.cfg.n_players
        cdef int count[MAX_PLAYERS][N_COLOURS]
        cdef int dollars[MAX_PLAYERS]
        cdef int dollar_nbs[MAX_PLAYERS]
        cdef int pts[MAX_PLAYERS]
        cdef int point_nbs[MAX_PLAYERS]
        cdef int abil[MAX_PLAYERS][N_ABIL]
        cdef int p, h, k, nb, q, w, total = self.s.bank
        cdef uint64_t where[HW]
        cdef bint whole
        for p in range(n):
            total += self.s.money[p]
            if self.s.money[p] < 0:
                return 1
        if total != self.s.money_total:
            return 1
        memset(count, 0, sizeof(count))
        for h in range(self.cfg.n_houses):
            q = self.s.owner[h]
            if q < -1 or q >= n:
                return 2
            if ((self.s.taken[h >> 6] >> (h & 63)) & 1) != (q >= 0):
                return 2
            for p in range(n):
                if ((self.s.owned[p][h >> 6] >> (h & 63)) & 1) != (q == p):
                    return 2
            if q >= 0:
                count[q][self.cfg.colour[h]] += 1
        for p in range(n):
            for k in range(N_COLOURS):
                if count[p][k] != self.s.ingr[p][k]:
                    return 2
        for nb in range(self.cfg.n_nb):
            q = self.s.owner[self.cfg.nb_first[nb]]
            whole = q >= 0
            for h in range(self.cfg.nb_first[nb], self.cfg.nb_first[nb] + self.cfg.nb_len[nb]):
                if self.s.owner[h] != q:
                    whole = False
            if whole != (self.s.closed_by[nb] >= 0) or whole != ((self.s.closed_mask & bit(nb)) != 0):
                return 3
            if whole and self.s.closed_by[nb] != q:
                return 3
        self.collect_houses(self.available() & ~self.s.closed_mask, where)
        for w in range(HW):
            if where[w] != self.s.open_houses[w]:
                return 3
        memset(dollars, 0, sizeof(dollars))
        memset(dollar_nbs, 0, sizeof(dollar_nbs))
        memset(pts, 0, sizeof(pts))
        memset(point_nbs, 0, sizeof(point_nbs))
        memset(abil, 0, sizeof(abil))
        for nb in range(self.cfg.n_nb):
            q = self.s.closed_by[nb]
            if q < 0:
                continue
            if self.cfg.nb_dollars[nb] > 0:
                dollars[q] += self.cfg.nb_dollars[nb]
                dollar_nbs[q] += 1
            if self.cfg.nb_points[nb] > 0:
                pts[q] += self.cfg.nb_points[nb]
                point_nbs[q] += 1
            for k in range(N_ABIL):
                abil[q][k] += self.cfg.nb_abil[nb][k]
        for p in range(n):
            if (dollars[p] != self.s.dollars[p] or dollar_nbs[p] != self.s.dollar_nbs[p]
                    or pts[p] != self.s.pts[p] or point_nbs[p] != self.s.point_nbs[p]):
                return 4
            for k in range(N_ABIL):
                if abil[p][k] != self.s.abil[p][k]:
                    return 4
        if self.s.to_move >= 0:
            if self.s.to_move >= n:
                return 5
            for p in range(n):
                if self.s.points[p] >= self.cfg.win_points or self.recipe_done(p) or self.s.rain[p] < 0:
                    return 5
            if self.s.turn_buys > self.buy_limit(self.s.to_move) + self.s.turn_rain:
                return 5
        return 0

    # ---- Python API: names, descriptions, observation, trace, hand-built positions ----

    def feature_names(self):
        return list(FEATURES)

    def interim_names(self):
        r = range(1, self.cfg.record_rounds + 1)
        return [f"points_r{i}" for i in r] + [f"recipe_progress_r{i}" for i in r]

    def phase_label(self):
        return f"round {self.s.round + 1}"

    def nb_index(self, int segment, str slot):
        """The neighbourhood at place `slot` of segment `segment` (1-based, as listed in
        the params)."""
        return (segment - 1) * self.cfg.n_slots + list(self.params.board.slots).index(slot)

    def houses_of(self, int segment, str slot):
        """House ids of a neighbourhood, in the printed order of its prices."""
        nb = self.nb_index(segment, slot)
        return list(range(self.cfg.nb_first[nb], self.cfg.nb_first[nb] + self.cfg.nb_len[nb]))

    def _nb_name(self, int nb):
        return f"{nb // self.cfg.n_slots + 1}.{self.params.board.slots[nb % self.cfg.n_slots]}"

    def _house_name(self, int h):
        nb = self.cfg.house_nb[h]
        return f"house {h} ({self._nb_name(nb)} #{h - self.cfg.nb_first[nb] + 1}, ${self.cfg.price[h]} {COLOURS[self.cfg.colour[h]]})"

    def open_neighbourhoods(self):
        """Names (segment.slot) of the open neighbourhoods: touching the Factory or a
        closed one, and not closed."""
        cdef uint64_t m = self.available() & ~self.s.closed_mask
        return [self._nb_name(nb) for nb in range(self.cfg.n_nb) if m & bit(nb)]

    def buyable_neighbourhoods(self, int seat):
        """Names of the neighbourhoods where `seat` may buy, given its abilities."""
        cdef uint64_t m = self.buyable(seat)
        return [self._nb_name(nb) for nb in range(self.cfg.n_nb) if m & bit(nb)]

    def describe(self, int action):
        p = self.s.to_move
        if action == STOP:
            return "stop buying" + (" (earns a rain check)" if self.s.turn_buys == 0 else "")
        q = self.s.owner[action]
        text = f"buy {self._house_name(action)} for ${self.cost(p, action)}"
        if q >= 0:
            text += f" from seat {q}"
        if self.s.turn_buys >= self.buy_limit(p):
            text += ", spending a rain check"
        return text

    def _recipe(self, int p):
        return dict(zip(INGREDIENTS, (self.cfg.recipe[self.s.recipe[p]][k] for k in range(N_ING))))

    def _public(self):
        n = self.cfg.n_players
        return {
            "round": self.s.round + 1,
            "first": self.s.first,
            "to_move": self.s.to_move,
            "turn_buys": self.s.turn_buys,
            "placement": [self.s.seg_at[k] + 1 for k in range(self.cfg.n_seg)],
            "money": [self.s.money[p] for p in range(n)],
            "points": [self.s.points[p] for p in range(n)],
            "rain_checks": [self.s.rain[p] for p in range(n)],
            "ingredients": [{COLOURS[k]: self.s.ingr[p][k] for k in range(N_COLOURS)} for p in range(n)],
            "income": [{"dollars": self.income_dollars(p), "points": self.income_points(p)} for p in range(n)],
            "abilities": [{ABILITIES[k]: self.s.abil[p][k] for k in range(N_ABIL) if self.s.abil[p][k]}
                          for p in range(n)],
            "owners": [self.s.owner[h] for h in range(self.cfg.n_houses)],
            "closed_by": {self._nb_name(nb): self.s.closed_by[nb] for nb in range(self.cfg.n_nb)
                          if self.s.closed_by[nb] >= 0},
            "open": self.open_neighbourhoods(),
            "bank": self.s.bank,
            # Recipe cards (indices) each seat's holdings once completed: not its own.
            "ruled_out": [[r for r in range(self.cfg.n_recipes) if (self.s.ruled_out[p] >> r) & 1]
                          for p in range(n)],
        }

    def observation(self, int seat):
        """What `seat` may see, as plain Python values: the board, every seat's public
        counters, its own recipe only."""
        d = self._public()
        d["seat"] = seat
        d["recipe"] = self._recipe(seat)
        d["buy_limit"] = self.buy_limit(seat)
        d["stop_action"] = STOP
        return d

    def to_dict(self):
        """The whole state (the recipes included), for traces."""
        d = self._public()
        d["recipes"] = [self._recipe(p) for p in range(self.cfg.n_players)]
        d["standings"] = self.standings()
        d["winner"] = self.s.winner
        return d

    def render(self):
        """The board by ring position (each house as price, colour initial and owner, '.'
        for empty; [closed by seat k], open or unavailable), then the seats."""
        lines = [f"round {self.s.round + 1}, seat {self.s.to_move} to move"]
        for pos in range(self.cfg.n_seg):
            seg = self.s.seg_at[pos]
            for j in range(self.cfg.n_slots):
                nb = seg * self.cfg.n_slots + j
                houses = " ".join(
                    f"{self.cfg.price[h]}{COLOURS[self.cfg.colour[h]][0]}"
                    f"{'.' if self.s.owner[h] < 0 else self.s.owner[h]}"
                    for h in range(self.cfg.nb_first[nb], self.cfg.nb_first[nb] + self.cfg.nb_len[nb]))
                if self.s.closed_by[nb] >= 0:
                    status = f"closed by {self.s.closed_by[nb]}"
                else:
                    status = "open" if self.available() & bit(nb) else "unavailable"
                lines.append(f"  pos {pos + 1} seg {self._nb_name(nb):5} {houses:32} {status}")
        for p in range(self.cfg.n_players):
            r = self._recipe(p)
            have = {INGREDIENTS[k]: self.s.ingr[p][k] for k in range(N_ING)}
            lines.append(f"  seat {p}: ${self.s.money[p]}, {self.s.points[p]} points, "
                         f"{self.s.rain[p]} rain checks, income ${self.income_dollars(p)} "
                         f"+{self.income_points(p)} pts, has {have} of {r}")
        return "\n".join(lines)

    def set_position(self, owners=None, money=None, points=None, rain=None, recipes=None,
                     placement=None, int to_move=0, int first=0, int round=1,
                     int turn_buys=0, bint begin=False):
        """Lay out a hand-built position. owners: {house id: seat}; money, points, rain:
        per seat; recipes: recipe card index per seat; placement: segment numbers
        (1-based) at ring positions 1, 2, ...; round is 1-based. Neighbourhoods whose
        houses all have one owner are closed, with their rewards. With begin=True the
        turn of to_move begins now (income collected, as at the start of a turn);
        otherwise to_move is in its buying decisions, having bought turn_buys houses."""
        cdef int n = self.cfg.n_players
        cdef int p, h, nb, k
        memset(&self.s, 0, sizeof(Ec))
        memset(self.s.owner, -1, sizeof(self.s.owner))
        memset(self.s.closed_by, -1, sizeof(self.s.closed_by))
        rng_seed(&self.s.rng, 0)
        order = list(placement) if placement is not None else list(range(1, self.cfg.n_seg + 1))
        if sorted(order) != list(range(1, self.cfg.n_seg + 1)):
            raise ValueError(f"placement {order} is not an order of segments 1..{self.cfg.n_seg}")
        for k, seg in enumerate(order):
            self.s.seg_at[k] = seg - 1
        self.place_segments()
        for h, q in (owners or {}).items():
            if not (0 <= h < self.cfg.n_houses and 0 <= q < n):
                raise ValueError(f"house {h} / seat {q} out of range")
            self.s.owner[h] = q
            self.s.owned[q][h >> 6] |= bit(h & 63)
            self.s.taken[h >> 6] |= bit(h & 63)
            self.s.ingr[q][self.cfg.colour[h]] += 1
        for nb in range(self.cfg.n_nb):
            q = self.s.owner[self.cfg.nb_first[nb]]
            if q >= 0 and all(self.s.owner[h] == q for h in range(self.cfg.nb_first[nb], self.cfg.nb_first[nb] + self.cfg.nb_len[nb])):
                self.s.closed_by[nb] = q
                self.s.closed_mask |= bit(nb)
                self.gain(q, nb, 1)
        self.update_open()
        for p in range(n):
            self.s.money[p] = money[p] if money is not None else 0
            self.s.start_money[p] = self.s.money[p]
            self.s.money_total += self.s.money[p]
            self.s.points[p] = points[p] if points is not None else 0
            self.s.rain[p] = rain[p] if rain is not None else 0
            self.s.recipe[p] = recipes[p] if recipes is not None else p % self.cfg.n_recipes
            # The history of a laid-out position is unknown: only its holdings rule out.
            self.rule_out(p)
        self.s.first = first
        self.s.round = round - 1
        self.s.rounds_done = min(round - 1, self.cfg.record_rounds)
        self.s.winner = -1
        self.s.to_move = to_move
        if begin:
            if self.begin_turn(to_move) == 0:
                self.pass_turn()
        else:
            self.s.turn_buys = turn_buys
            self.s.turn_rain = max(0, turn_buys - self.buy_limit(to_move))
            self.find_offer()
        self.assert_valid()


# ---- the greedy bot's shortcut (see strategies/greedy.pyx) ----

from cpython.pycapsule cimport PyCapsule_New
from libc.limits cimport INT_MIN
from simcore.state cimport MAX_ACTIONS


cdef int standings_after(GameState state, int seat, const int* legal, int n, int* out) noexcept nogil:
    # The cast in argument position borrows the reference (no GIL needed).
    return purchases_after(<EnemyState>state, seat, legal, n, out)


cdef int purchases_after(EnemyState st, int seat, const int* legal, int n, int* out) noexcept nogil:
    # A purchase changes `seat`'s standing (points and recipe progress) only by the
    # ingredient it adds, and STOP not at all, unless the turns that pass by themselves
    # (nothing to buy) come round to `seat` and its income. They do not when the turn
    # surely goes on (a buy or a rain check remains, and a house offered in another
    # neighbourhood stays affordable), or another seat surely has a purchase to decide
    # when its turn comes (see others_buy). Closing a neighbourhood only opens more and
    # changes no other house's price; buying into a closed one (reopening it can close
    # off others) is left to be played, as is anything these tests cannot vouch for.
    cdef int p = st.s.to_move
    cdef int i, h, k, nb, colour, limit, rain, a = -1, b = -1
    cdef bint slots
    cdef int req[MAX_ACTIONS]
    cdef Others o
    if p != seat:
        for i in range(n):
            out[i] = INT_MIN
        return 0
    limit = st.buy_limit(p)
    rain = st.s.rain[p] - (st.s.turn_buys >= limit)
    slots = st.s.turn_buys + 1 < limit or rain > 0
    # This turn: the cheapest house offered (a), and the cheapest outside a's
    # neighbourhood (b).
    for i in range(n):
        if legal[i] != STOP:
            req[i] = st.cost(p, legal[i])
            if a < 0 or req[i] < req[a]:
                a = i
    for i in range(n):
        if legal[i] != STOP and st.cfg.house_nb[legal[i]] != st.cfg.house_nb[legal[a]] and (
                b < 0 or req[i] < req[b]):
            b = i
    others_of(st, p, &o)
    for i in range(n):
        h = legal[i]
        out[i] = INT_MIN
        if h == STOP:
            if others_buy(st, &o, -1):
                out[i] = st.standing(p)
            continue
        nb = st.cfg.house_nb[h]
        if st.s.closed_by[nb] >= 0:
            continue
        k = a if st.cfg.house_nb[legal[a]] != nb else b
        if not (slots and k >= 0 and req[k] <= st.s.money[p] - req[i]) and not others_buy(st, &o, nb):
            continue
        colour = st.cfg.colour[h]
        st.s.ingr[p][colour] += 1
        out[i] = st.standing(p)
        st.s.ingr[p][colour] -= 1
    return 0


cdef struct Others:
    # What the seats other than p can spend at their next turn, and the cheapest empty
    # houses open now: ua, and ub the cheapest outside ua's neighbourhood (-1: none).
    int p
    int rich             # the seat with the most money and dollar income
    int most             # its money and income
    int second           # the most of any other seat
    int ua
    int ub


cdef void others_of(EnemyState st, int p, Others* o) noexcept nogil:
    cdef int r, m, h, w
    cdef uint64_t x
    o.p = p
    o.rich = -1
    o.most = o.second = -1
    o.ua = o.ub = -1
    for r in range(st.cfg.n_players):
        if r == p:
            continue
        m = st.s.money[r] + st.income_dollars(r)
        if m > o.most:
            o.second = o.most
            o.most, o.rich = m, r
        elif m > o.second:
            o.second = m
    for w in range(HW):
        x = st.s.open_houses[w] & ~st.s.taken[w]
        while x:
            h = (w << 6) + ctz64(x)
            x &= x - 1
            if o.ua < 0 or st.cfg.price[h] < st.cfg.price[o.ua]:
                if o.ua >= 0 and st.cfg.house_nb[o.ua] != st.cfg.house_nb[h]:
                    o.ub = o.ua
                o.ua = h
            elif st.cfg.house_nb[h] != st.cfg.house_nb[o.ua] and (o.ub < 0 or st.cfg.price[h] < st.cfg.price[o.ub]):
                o.ub = h


cdef bint others_buy(EnemyState st, const Others* o, int nb) noexcept nogil:
    # Whether some seat other than p surely has a purchase to decide at its next turn
    # after p buys in neighbourhood nb (-1: after p stops): an empty house, or one of a
    # third seat's, open now outside nb, within that seat's money and dollar income.
    # Its turn may come only after turns that pass or end the game; either way the
    # turns do not come round to p. p's purchase leaves those houses open and priced.
    cdef int w = o.ua, q, m, k
    cdef uint64_t any_house
    if w >= 0 and st.cfg.house_nb[w] == nb:
        w = o.ub
    if w >= 0 and st.cfg.price[w] <= o.most:
        return True
    for q in range(st.cfg.n_players):
        if q == o.p:
            continue
        m = o.second if q == o.rich else o.most
        if m < (st.cfg.ten_price if st.s.abil[q][AB_TEN_HOUSES] > 0 else st.cfg.buyout_price):
            continue
        any_house = 0
        for k in range(HW):
            any_house |= st.s.open_houses[k] & st.s.owned[q][k] & ~(st.cfg.nb_houses[nb][k] if nb >= 0 else 0)
        if any_house:
            return True
    return False


STANDINGS_AFTER = PyCapsule_New(<void*>standings_after, b"chocosim.standings_after", NULL)
