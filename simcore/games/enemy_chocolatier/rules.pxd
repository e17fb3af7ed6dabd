# Enemy Chocolatier rules: the C config, the C state and the observation a seat may read.
#
# Indexing: neighbourhood nb = segment * n_slots + slot, house ids run segment by segment
# and place by place, both in the order of the params. They do not depend on where setup
# puts a segment: placement changes only which neighbourhoods touch across segments (adj).
# An action is a house id (buy it) or STOP (end the turn's buying).
#
# Invariants (validate() codes, INVARIANTS in rules.pyx):
# 1. money is conserved: sum(money) + bank == money_total, and nobody's money is negative;
# 2. every owner is a seat or -1 (one owner per house) and ingr[] counts exactly the
#    houses each seat owns, by colour;
# 3. closed_by[nb] == p (and bit nb of closed_mask) iff every house of nb is owned by p,
#    and open_houses are the houses of the open neighbourhoods;
# 4. the cached rewards of each seat are those of the neighbourhoods it has closed;
# 5. while the game runs: to_move is a seat, nobody has win_points points or a complete
#    recipe, rain checks are >= 0, and a seat has bought more than its limit only by
#    spending rain checks.
cimport cython
from libc.stdint cimport uint64_t
from simcore.rng cimport Rng
from simcore.state cimport GameState, MAX_PLAYERS

cdef enum:
    N_ING = 4            # pink Sugar, brown Chocolate, tan Nuts, red Love
    N_COLOURS = 5        # the ingredients, then gray (no ingredient)
    N_ABIL = 7
    MAX_NB = 64          # neighbourhoods are bits of a uint64_t
    MAX_HOUSES = 256
    HW = 4               # 64-bit words of a set of houses
    MAX_PRICE = 1000     # largest printed price (params.Price)
    STOP = MAX_HOUSES    # the "stop buying" action; 0..n_houses-1 buy that house
    MAX_SEG = 16
    MAX_SLOTS = 8
    MAX_TOUCH = 64       # cross-segment touching pairs
    MAX_RECIPES = 32
    MAX_RECORD = 32      # rounds of recorded interim values

cdef enum:
    # Abilities, in the order of params.ABILITIES.
    AB_BUY3 = 0
    AB_BUY_CLOSED = 1
    AB_BUY_ANYWHERE = 2
    AB_ALL_DOLLARS = 3   # +1 to each of the owner's dollar-income neighbourhoods
    AB_ALL_POINTS = 4    # +1 to each of the owner's point-income neighbourhoods
    AB_CASH_POINTS = 5   # $5 = 1 Point
    AB_TEN_HOUSES = 6    # $10 Houses

cdef enum:
    # End reasons, in the order of END_REASONS.
    END_POINTS = 0       # a player reached win_points at income
    END_RECIPE = 1       # a player completed the secret recipe with a purchase
    END_CAP = 2          # round_cap rounds passed: a draw (a simulation limit)


cdef struct EcConfig:
    # The params, converted once when the game is built (public knowledge).
    int n_players
    int n_seg
    int n_slots
    int n_nb
    int n_houses
    int nb_first[MAX_NB]             # first house id of each neighbourhood
    int nb_len[MAX_NB]               # its number of houses
    int nb_dollars[MAX_NB]           # dollar income while closed (0 = not a money producer)
    int nb_points[MAX_NB]            # point income while closed (0 = not a point producer)
    int nb_abil[MAX_NB][N_ABIL]      # abilities it gives while closed (counts)
    unsigned int nb_abil_mask[MAX_NB]  # ... as a set: bit k if it gives ability k
    int house_nb[MAX_HOUSES]
    int price[MAX_HOUSES]            # printed price of an empty house
    int colour[MAX_HOUSES]           # 0-3 ingredients, 4 gray
    uint64_t nb_houses[MAX_NB][HW]   # the houses of each neighbourhood, as a set
    int max_price
    uint64_t price_le[MAX_PRICE + 1][HW]  # houses whose printed price is <= m
    uint64_t inner_adj[MAX_SLOTS]    # slots (bits) touching each slot inside a segment
    int n_next                       # cross-segment pairs: slot next_a[i] of a segment
    int next_a[MAX_TOUCH]            # touches slot next_b[i] of the next segment
    int next_b[MAX_TOUCH]
    bint ring_closed                 # the last segment touches the first
    bint shuffle                     # segments placed at random at setup
    uint64_t factory_mask            # neighbourhoods touching the Factory
    int start_first
    int start_step
    int base_income
    int cash_per_point
    int buys
    int buys_buy3
    int buyout_price
    int buyout_bank
    int ten_price
    int ten_bank
    int rain_earned
    int win_points
    int round_cap
    int record_rounds
    int n_recipes
    int recipe[MAX_RECIPES][N_ING]
    unsigned int recipe_le[N_ING][MAX_HOUSES + 1]  # recipe cards (bits) needing <= m of ingredient k
    int komi[MAX_PLAYERS]            # compensation.points by turn position (house rule)


cdef struct Ec:
    Rng rng                          # the chance stream (placement, recipes, first player)
    int to_move                      # seat to act, -1 when over
    int first                        # seat that took the first turn
    int round                        # 0-based; a round starts at the first player's turn
    int end                          # End, valid when to_move == -1
    int winner                       # seat, -1 for a draw
    int turn_buys                    # houses bought so far this turn
    int turn_rain                    # rain checks spent so far this turn
    uint64_t offer[HW]               # houses to_move may buy now, found once per change of state
    int money[MAX_PLAYERS]
    int points[MAX_PLAYERS]
    int rain[MAX_PLAYERS]            # rain checks held
    int recipe[MAX_PLAYERS]          # index of the secret recipe card (hidden from others)
    int bank                         # dollars paid to the bank minus dollars it paid out
    int money_total                  # sum(money) + bank, fixed from setup
    int ingr[MAX_PLAYERS][N_COLOURS] # houses owned by colour
    signed char owner[MAX_HOUSES]    # seat, -1 = empty
    uint64_t owned[MAX_PLAYERS][HW]  # the same as sets: houses of each seat
    uint64_t taken[HW]               # houses of anybody
    signed char closed_by[MAX_NB]    # seat that closed it, -1 = not closed
    uint64_t closed_mask
    uint64_t adj[MAX_NB]             # neighbourhoods touching each one (set by placement)
    uint64_t open_houses[HW]         # houses of the open neighbourhoods, kept with closed_mask
    signed char seg_at[MAX_SEG]      # segment placed at each ring position
    # Rewards of the closed neighbourhoods each seat holds, kept up to date.
    int dollars[MAX_PLAYERS]         # printed dollar income
    int dollar_nbs[MAX_PLAYERS]      # money-producing neighbourhoods
    int pts[MAX_PLAYERS]             # printed point income
    int point_nbs[MAX_PLAYERS]       # point-producing neighbourhoods
    int abil[MAX_PLAYERS][N_ABIL]
    # Feature counters.
    int start_money[MAX_PLAYERS]
    int n_closed[MAX_PLAYERS]        # neighbourhoods this seat closed
    int n_lost[MAX_PLAYERS]          # closed neighbourhoods of this seat reopened by others
    int n_away[MAX_PLAYERS]          # houses bought away from other players
    int n_taken[MAX_PLAYERS]         # houses other players bought away from this seat
    int rain_got[MAX_PLAYERS]
    int rain_spent[MAX_PLAYERS]
    int rounds_done                  # round boundaries recorded
    int rec_points[MAX_PLAYERS][MAX_RECORD]
    int rec_ingr[MAX_PLAYERS][MAX_RECORD]
    # Recipe cards (bits) each seat's holdings have completed right after one of its
    # purchases: public, and none of them can be its own (it would have won then).
    unsigned int ruled_out[MAX_PLAYERS]


cdef struct EcObs:
    # What one seat may see: the whole board and every seat's public counters, but only
    # its own recipe. Pointers point into the state (valid until the next apply).
    int seat
    const EcConfig* cfg
    int need[N_ING]                  # my recipe
    int limit                        # houses I may buy this turn without rain checks
    int turn_buys
    const int* money
    const int* points
    const int* rain
    const int (*ingr)[N_COLOURS]
    const signed char* owner
    const signed char* closed_by
    uint64_t closed_mask
    const uint64_t* adj
    const int* dollars
    const int* dollar_nbs
    const int* pts
    const int* point_nbs
    const int (*abil)[N_ABIL]


cdef inline int house_cost(const EcConfig* c, const signed char* owner, const int (*abil)[N_ABIL],
                           int h) noexcept nogil:
    # The price of house h now: printed while empty, else a buy-out (dearer from an owner
    # with $10 Houses). Inline here so that the bots compute it without a call.
    cdef int q = owner[h]
    if q < 0:
        return c.price[h]
    if abil[q][AB_TEN_HOUSES] > 0:
        return c.ten_price
    return c.buyout_price


# final: the rules' own calls (cost, buyable...) are direct C calls, inlined by the compiler.
@cython.final
cdef class EnemyState(GameState):
    cdef EcConfig cfg
    cdef Ec s

    cdef void observe(self, int seat, EcObs* o) noexcept nogil
    # The price `seat` pays for house h now (printed price, or a buy-out).
    cdef int cost(self, int seat, int h) noexcept nogil
    # Houses `seat` may buy in a turn before it needs rain checks.
    cdef int buy_limit(self, int seat) noexcept nogil
    # Neighbourhoods touching the Factory or a closed neighbourhood (closed or not).
    cdef uint64_t available(self) noexcept nogil
    # Neighbourhoods whose houses `seat` may buy (openness and its abilities).
    cdef uint64_t buyable(self, int seat) noexcept nogil
    # Dollars and points `seat` collects at the start of its turn (income rules).
    cdef int income_dollars(self, int seat) noexcept nogil
    cdef int income_points(self, int seat) noexcept nogil
    # Ingredients of its recipe `seat` has (min(have, need) summed), and the total needed.
    cdef int progress(self, int seat) noexcept nogil
    cdef int recipe_total(self, int seat) noexcept nogil

    # True once `seat` owns every ingredient of its recipe.
    cdef bint recipe_done(self, int seat) noexcept nogil
    # Mark in ruled_out[seat] the recipe cards its holdings now complete.
    cdef void rule_out(self, int seat) noexcept nogil
    cdef void match_recipes(self, const int* seats, int ns, const signed char* pool, int m) noexcept nogil

    cdef void place_segments(self) noexcept nogil
    cdef void collect_houses(self, uint64_t nbs, uint64_t* out) noexcept nogil
    cdef void update_open(self) noexcept nogil
    cdef void gain(self, int seat, int nb, int sign) noexcept nogil
    cdef int begin_turn(self, int seat) noexcept nogil
    cdef int pass_turn(self) noexcept nogil
    cdef bint find_offer(self) noexcept nogil
    cdef void record_round(self) noexcept nogil
    cdef void finish(self, int end, int winner) noexcept nogil


# The greedy bot's shortcut (strategies/greedy.pyx, exported as STANDINGS_AFTER): the
# standing of `seat` after each of legal[0..n) in `state`, INT_MIN where only playing the
# action tells.
cdef int standings_after(GameState state, int seat, const int* legal, int n, int* out) noexcept nogil
