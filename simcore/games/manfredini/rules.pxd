# Chocolate Factory (Manfredini) rules: the C state and the observation a seat may read.
#
# Invariants (validate() codes, in order of ManfrediniState.INVARIANTS):
# - every sugar, cacao/chocolate, coin, candy and pawn token is in exactly one place;
# - each container's spaces in use = goods - stacks, stacks pair identical goods, and no
#   warehouse or truck holds more than its spaces;
# - every worker card of every player and every specialist card is in exactly one place;
# - the seat to move is a player while the game runs, -1 once it is over;
# - at the end of each half every deck and hand is empty;
# - the legal list kept (Man.legal, written where the step is set) is the one gen_legal
#   gives for the current decision, and a decision never offers stop alone;
# - each seat's knowledge groups (Man.grp) count as many cards as carry their tag, and
#   the kinds they know are among the kinds those cards are.
cimport cython
from libc.stdint cimport uint64_t
from simcore.rng cimport Rng
from simcore.state cimport GameState, MAX_PLAYERS
from simcore.seen cimport Seen

cdef enum:
    MAX_SPACES = 12      # factory spaces = die faces = numbered cards per player
    N_KINDS = 7          # specialist kinds: Temp, then the six of the specialist deck
    N_RECIPES = 10
    N_TRUCKS = 3
    MAX_HAND = 8
    MAX_LOOK = 6         # cards looked at in the Break Room
    MAX_SPEC = 64        # specialist deck
    MAX_DECK = 64        # a player's deck: numbered cards + specialists
    MAX_LEGAL = 160
    MAX_SEATS = 4        # largest table (the core's MAX_PLAYERS is larger): the state
                         # is zeroed for every game, so its arrays are sized to the game
    MAX_GROUPS = 16      # knowledge groups per seat (see Man.grp)

# What a seat knows of a specialist slot it cannot see (one byte per seat of a tag word):
# its kind nothing (unseen), exactly (known), or as one of a group of slots whose kinds it
# knows only together (group + g, see Man.grp).
cdef enum:
    T_UNSEEN = 0
    T_KNOWN = 1
    T_GROUP = 2

# Goods: the three raw goods, then plain candy of each recipe, then decorated candy.
cdef enum:
    SUGAR = 0
    CACAO = 1
    CHOC = 2
    PLAIN = 3                       # PLAIN + r: plain candy of recipe r
    DECO = PLAIN + N_RECIPES        # DECO + r: decorated candy of recipe r
    N_GOODS = DECO + N_RECIPES

# Cards: 0..spaces-1 are the numbered workers 1..spaces; SPEC + k is specialist kind k.
cdef enum:
    SPEC = 16
    N_CARD_IDS = SPEC + N_KINDS

cdef enum Kind:
    K_TEMP = 0
    K_LIFT = 1
    K_SORTER = 2
    K_RUNNER = 3
    K_TRUCKER = 4
    K_MACHINIST = 5
    K_PACKER = 6

cdef enum Ability:
    AB_NONE = 0
    AB_MIXER = 1
    AB_BREAK = 2
    AB_OUTLET = 3
    AB_MACHINE = 4
    AB_DECORATE = 5

cdef enum Variant:
    V_FULL = 0
    V_PLANTATION = 1
    V_CANDY = 2

# The decision being asked (Pending.step).
cdef enum Step:
    ST_CARD = 0          # play a card from hand
    ST_DIE = 1           # specialist: keep the die face or roll
    ST_RUNNER = 2        # Runner: change the number by -reach..+reach (0 = not used)
    ST_SORTER = 3        # Sorter: clockwise or counter-clockwise
    ST_TOFROM = 4        # to or from the factory, or a shift change first
    ST_TRANSPORT = 5     # move goods one at a time, then stop
    ST_ABILITY = 6       # a space ability (or the Machinist's machine): use it or stop
    ST_PICK = 7          # Break Room: keep one of the cards looked at
    ST_DISCARD = 8       # transition: discard a specialist beyond the uncovered icons
    ST_LOAD = 9          # candy-only setup: put the next good onto a truck
    ST_OVER = 10
    ST_ORDER = 11        # Machinist: the space's ability or the machine first

# Actions (small ints, one range per kind of decision).
cdef enum:
    A_CARD = 0           # + card id
    A_KEEP_FACE = 24
    A_ROLL = 25
    A_RUN = 28           # A_RUN + delta, delta in -2..2
    A_CW = 31
    A_CCW = 32
    A_TO = 33
    A_FROM = 34
    A_SHIFT_ADD = 36     # + space
    A_SHIFT_REMOVE = 48  # + space
    A_STOP = 60          # end transport, or leave an ability unused
    A_MIX = 61           # Chocolate Mixer: a sugar and a cacao become a chocolate
    A_SELL = 62          # + good: outlet
    A_RECRUIT = 86       # Break Room: pay and look at the top cards
    A_PICK = 88          # + kind: keep that card
    A_MAKE = 96          # + recipe: one use of the Candy Machine
    A_DECO = 106         # + recipe: decorate one candy
    A_DECO_ALL = 116     # pay and decorate every candy
    A_DISCARD = 118      # + kind
    A_SPACE_FIRST = 125  # Machinist: the space's ability, then the machine
    A_MACHINE_FIRST = 126  # Machinist: the machine, then the space's ability
    A_MOVE = 128         # + (good * N_TRUCKS + truck) * 2 + stacked (up to 266)


cdef struct Box:
    # A warehouse or a truck. A stack is two identical goods sharing one space.
    int n[N_GOODS]       # goods of each type (stacked ones included)
    int stacks[N_GOODS]  # stacked pairs of each type
    int used             # spaces in use = sum(n) - sum(stacks)
    unsigned int mask    # bit g set iff n[g] > 0 (the move lists walk only these)


cdef struct Goods:
    # Everything of a seat that every player sees.
    Box wh
    Box truck[N_TRUCKS]
    int coins
    bint whistle         # shift change used in this factory (its coin sits on the whistle)
    int hand_len
    int deck_len


cdef struct Cards:
    # A seat's cards; hand and deck are hidden from the other seats, the deck order from all.
    signed char hand[MAX_HAND]
    bint secret[MAX_HAND]            # a recruited specialist no other seat has seen
    unsigned int tag[MAX_HAND]       # of a secret card: what each seat knows of it (byte p)
    signed char deck[MAX_DECK]       # top = deck[deck_len - 1]
    int played[N_CARD_IDS]           # played this half, face up
    int kept[N_KINDS]                # specialists shuffled into the Candy Factory deck


cdef struct Feat:
    int recruited[N_KINDS]
    int played_spec[N_KINDS]
    int candies[N_RECIPES]
    int uses[8]          # mixer, outlet (plantation), break room, candy machine, decorating,
                         # outlet (candy), shift change, packer stacks
    int turns


cdef struct Pending:
    # The turn in progress: the card, the number and the transport being resolved.
    int step
    int card             # card id played, -1 before
    int number           # 0-based space the card or die points at
    bint ccw
    bint to              # transporting to the factory (else from)
    int space            # space entered or left
    int cap_left         # goods the worker may still transport
    int lock_good        # Plantation "to": the one raw good chosen, -1 before
    int lock_truck       # the one truck accessed this turn, -1 before
    bint trucker
    bint packer
    bint machinist
    bint ordered         # the Machinist's order is settled (asked, or nothing to ask)
    bint machine_first   # the Machinist's machine comes before the space's ability
    bint shift_visit     # ST_ABILITY offered by a shift change's pawn (then back to to/from)
    bint recruited       # no draw at the end of this turn
    int stage            # 0..2 through (transport, ability, machinist) or (ability, machinist,
                         # transport); the two abilities swap when machine_first
    int ability          # ability offered at ST_ABILITY
    int recipe           # Candy Machine recipe chosen this visit, -1 before
    int uses_left        # further uses of that recipe this visit
    signed char made[N_RECIPES]      # uses of each recipe this turn (recipe_uses = per_turn)
    int n_look
    signed char look[MAX_LOOK]
    int loads_left       # candy-only setup: goods still to load for this seat


cdef struct MConfig:
    # The params, converted once when the game is built.
    unsigned int full                # board bits of every space
    int n_players
    int variant
    int hand_size
    int warehouse
    int shift_cost
    int lift_bonus
    int runner_reach
    bint machinist_choice            # machinist_order = choice
    bint recipe_per_turn             # candy.recipe_uses = per_turn
    bint shift_ability               # shift_change_ability: the pawn's space offers its ability
    int spaces
    int pawns
    int ability[2][MAX_SPACES]       # per half (0 plantation, 1 candy)
    int truck_cap[N_TRUCKS]
    int truck_icons[N_TRUCKS]
    bint truck_coloured[N_TRUCKS]
    unsigned int truck_bits          # bit t: truck t has spaces
    int n_spec
    signed char spec_cards[MAX_SPEC] # the specialist deck in canonical order (kinds)
    int spec_total[N_KINDS]          # including the Temps of all players
    int cost_sugar[N_RECIPES]
    int cost_choc[N_RECIPES]
    int candies[N_RECIPES]
    int uses[N_RECIPES]
    int points[N_RECIPES]
    int supply_sugar
    int supply_cacao
    int supply_coins
    int candy_tokens
    int temp_cards
    int start_sugar
    int start_cacao
    int start_coins
    int recipes_drawn
    int outlet_coins[2]
    int break_cost
    int break_look
    int deco_all_cost
    int sc_good
    int sc_deco
    int sc_coin
    int sc_type
    int good_points[N_GOODS]         # points of one good on a coloured truck (full, candy)
    int po_choc
    int po_sugar
    int po_coin
    int co_specs
    int co_sugar
    int co_choc
    int co_coins
    bint co_hand_first               # candy-only: the hand is drawn before specialists join
    int komi[MAX_SEATS]              # compensation.points by turn position (house rule)


cdef struct Man:
    Rng rng                          # the chance stream: shuffles, recipes, the die
    int half                         # 0 plantation, 1 candy factory
    int to_move                      # seat to act, -1 when over
    int first                        # seat that moved first in the game
    int last_mover                   # seat that took the last turn so far
    int die                          # current face, 0-based
    unsigned int board               # bit i: a pawn on space i
    int pawn_pile
    int sugar_pile
    int cacao_pile                   # cacao/chocolate tokens
    int coin_pile
    int candy_supply[N_RECIPES]
    unsigned int in_play             # bit r: recipe card r drawn for this game
    int spec_len
    signed char spec[MAX_SPEC]       # specialist deck, top = spec[spec_len - 1]
    unsigned int spec_tag[MAX_SPEC]  # what each seat knows of this card's kind (byte p)
    unsigned int look_tag[MAX_LOOK]  # the same for the cards looked at in the Break Room
    # Knowledge groups of each seat: slots (deck, look or secret hand cards) whose kinds
    # the seat knows only together, as grp[p][g][kind] known kinds plus grp[p][g][N_KINDS]
    # kinds it never saw (drawn from its unseen pool). Made when a seat recruits from
    # cards another saw go to the bottom; merged when a card could be any of two groups.
    signed char grp[MAX_SEATS][MAX_GROUPS][N_KINDS + 1]
    int n_grp[MAX_SEATS]
    int spec_out[N_KINDS]            # specialists discarded at the transition
    Goods g[MAX_SEATS]
    Cards c[MAX_SEATS]
    Feat f[MAX_SEATS]
    Pending t
    int n_legal
    int legal[MAX_LEGAL]             # the legal list of the current decision
    int interim[MAX_SEATS][2]
    int interims_done
    Seen seen                        # what each seat saw of the last move's chance: its
                                     # draws, its Break Room look, the die, a new half's deal


cdef struct MObs:
    # What one seat may see: its own hand, everything public, and the turn in progress.
    int seat
    int half
    int variant
    int n_players
    int hand_len
    signed char hand[MAX_HAND]
    const Goods* goods               # goods[p] of every seat: public
    unsigned int board               # bit i: a pawn on space i
    unsigned int in_play             # bit r: recipe r in play
    const int* candy_supply
    const Pending* t                 # the turn in progress (look[] only when it is ours)
    const MConfig* cfg
    int die
    int spec_len
    int pawn_pile
    int sugar_pile
    int cacao_pile
    int coin_pile


# Final: the engine's own calls (next_stage, gen_legal, act...) are direct C calls the
# compiler can inline, not virtual ones.
@cython.final
cdef class ManfrediniState(GameState):
    cdef MConfig cfg
    cdef Man s

    cdef void observe(self, int seat, MObs* o) noexcept nogil
    # The space a pawn ends on and the spaces tried (the capacity before the Lift
    # Operator) when moving to (to=1) or from the factory from `number`; -1 if impossible.
    cdef int probe(self, int number, bint ccw, bint to, int* tried) noexcept nogil
    cdef void setup(self) noexcept nogil
    cdef void start_half(self, int half) noexcept nogil
    cdef int gen_legal(self, int* out) noexcept nogil
    cdef int gen_cards(self, int* out) noexcept nogil
    cdef int gen_tofrom(self, int* out) noexcept nogil
    cdef int gen_transport(self, int* out) noexcept nogil
    cdef void begin_turn(self, int p) noexcept nogil
    cdef void next_stage(self) noexcept nogil
    cdef void stages_from(self, bint to, int stage) noexcept nogil
    cdef void stay(self, int n) noexcept nogil
    cdef bint order_matters(self) noexcept nogil
    cdef void end_turn(self) noexcept nogil
    cdef void end_half(self) noexcept nogil
    cdef void finish(self) noexcept nogil
    cdef void tiebreak(self, int seat, int* coins, int* others) noexcept nogil
    cdef void transition_from(self, int p0) noexcept nogil
    cdef int gen_moves(self, int* out) noexcept nogil
    cdef int gen_ability(self, int* out) noexcept nogil
    cdef void act(self, int action) noexcept nogil
    cdef void to_tofrom(self) noexcept nogil
    cdef void move(self, int action) noexcept nogil
    cdef void to_pile(self, int g) noexcept nogil
    cdef void use_ability(self, int action) noexcept nogil
    cdef void pick(self, int kind) noexcept nogil
    cdef void load(self, int action) noexcept nogil
    cdef bint hidden_in_hand(self, const Cards* cd, int i) noexcept nogil
    cdef int spec_slots(self, int observer, signed char** where, int* off, int* tag) noexcept nogil
    cdef void spare_opening(self, int p, signed char* own, int h, int m, Rng* rng) noexcept nogil
    cdef int merge(self, int o, int n, const int* kinds, const int* know) noexcept nogil
    cdef void relabel(self, int o, int old, int new) noexcept nogil
    cdef void reveal(self, int q, int j, int kind) noexcept nogil
    cdef void leave_group(self, int o, int g, int kind) noexcept nogil
    cdef int check_groups(self) noexcept nogil


# Score of one seat's goods now (the variant's rules; coins included).
cdef int man_score(const MConfig* c, const Goods* g) noexcept nogil
# Uncovered worker icons over a seat's trucks (icons are covered last, see README).
cdef int man_icons(const MConfig* c, const Goods* g) noexcept nogil


# The greedy bot's shortcut (strategies/greedy.pyx, exported as STANDINGS_AFTER): the
# standing of `seat` after each of legal[0..n) in `state` when `seat` is to move (every
# action answered; INT_MIN for all otherwise). It reads only what `seat` sees.
cdef int standings_after(GameState state, int seat, const int* legal, int n, int* out) noexcept nogil
# Its companion (DETERMINIZE_DRAWS): how many draws determinize(seat, rng) takes from
# rng, -1 where only dealing tells.
cdef int determinize_draws(GameState state, int seat) noexcept nogil


cdef extern from *:
    int ctz "__builtin_ctz"(unsigned int x) noexcept nogil
    int clz "__builtin_clz"(unsigned int x) noexcept nogil


cdef inline int ring_probe(unsigned int target, unsigned int full, int n, int number, bint ccw,
                           int* tried) noexcept nogil:
    # The first space of `target` (a bit set of the n spaces) tried from `number` on, and
    # in tried[0] how many spaces were tried; -1 if none. The ring is rotated so that the
    # i-th space tried is bit i (clockwise) or bit n-1-i (counter-clockwise): one bit
    # scan, where a loop over the spaces mispredicts its exit. (The rules' probe and the
    # heuristic's look-ahead share it.)
    cdef int i, sp, sh
    cdef unsigned int ring
    if target == 0:
        return -1
    if ccw:
        sh = n - 1 - number
        ring = ((target << sh) | (target >> (n - sh))) & full
        i = n - 1 - (31 - clz(ring))
        sp = number - i
        if sp < 0:
            sp += n
    else:
        ring = ((target >> number) | (target << (n - number))) & full
        i = ctz(ring)
        sp = number + i
        if sp >= n:
            sp -= n
    tried[0] = i + 1
    return sp
