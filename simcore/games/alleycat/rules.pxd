# Chocolate Factory (Alley Cat Games) rules: the C state, its config and the accessors
# bots read. Everything here is public information except the order of the decks
# (parts, employees, Corner Shop orders) and the chance stream.
cimport cython
from libc.stdint cimport uint64_t
from simcore.rng cimport Rng
from simcore.state cimport GameState
from simcore.seen cimport Seen

cdef enum:
    N_PIECES = 7            # bean, cocoa, chunks, fingers, caramel, nuts, boxed
    BEAN = 0
    COCOA = 1
    BOXED = 6
    REFINED_MASK = 0x7C     # chunks..boxed
    N_STORES = 5
    N_SIZES = 3
    N_EMPLOYEES = 19
    N_SEATS = 4
    N_UPGRADES = 9          # the upgrade steps of the bookkeeping board (UPG_FROM/UPG_TO)
    MAX_PARTS = 48
    MAX_OPTIONS = 4
    MAX_SYMBOLS = 6
    MAX_ORDERS = 32         # per size
    MAX_ORDER_IDS = 96      # N_SIZES * MAX_ORDERS
    MAX_STAGES = 4
    MAX_DAYS = 10
    MAX_SQUARES = 6
    MAX_SLOTS = 12
    MAX_DECK_EMPLOYEES = 12
    N_EMP_DECKS = 6         # one per store, then the Master Chocolatier's extra deck
    EXTRA_DECK = 5
    MAX_EMPLOYEE_CARDS = 72 # N_EMP_DECKS * MAX_DECK_EMPLOYEES
    MAX_HELD_ORDERS = 5     # Corner Shop orders in front of a player: 3 regular, Special Orders
    MAX_GOALS = 4           # objectives on one Factory Manager card
    MAX_TARGETS = 16
    MAX_DEMANDS = 32
    MAX_SOLO_CARDS = 12     # the Weekly Target, then the Demands in play
    MAX_DONE = 64           # completed orders of one player
    MAX_PACKETS = 8         # parts packets then employee packets
    DISPLAY = 5             # parts (and employees: one per store) laid out each day
    MAX_DISP_EMP = 6        # employees laid out: one per deck (the extra deck included)

# Actions: one code space for every decision, so each code means one thing.
cdef enum:
    A_DONE = 0              # end this decision sequence (shift, orders, supply, upgrades)
    A_SLOT = 1              # + slot: operate / place a part / assign an employee there
    A_PIECE = 13            # + piece: a chocolate (input, output, copy, chute, supply, keep...)
    A_TRADE = 20            # + piece: trade that store-room chocolate for coal
    A_SQUARE = 27           # + square: a belt square
    A_OPTION = 33           # + option of a converter
    A_UPGRADE = 37          # + upgrade step
    A_PACKET = 46           # + packet (parts packets first, then employee packets)
    A_PICK = 54             # + card of the chosen packet (up to MAX_DISP_EMP: the solo
                            #   display offers every card, 6 employees with the expansion)
    A_ORDER = 60            # + order slot: fulfil its next stage
    A_SKIP = 65             # + order slot: Clerk skips its next stage
    A_SHOP_AGENT = 70       # + order slot: Corner Shop Agent fulfils it with any refined
    A_DEALER = 75           # + order slot: Dealer fulfils it with fewer pieces
    A_SUPPLY = 80           # supply today's Department Store
    A_STORE = 81            # + store: Department Store Agent supplies that store
    A_EMPLOYEE = 86         # use today's employee's action (Operator, Decorator, Packer...)
    A_SIZE = 87             # + size: the replacement Corner Shop order kept
    A_GOAL = 90             # + solo card: supply that card's chocolate order
    N_ACTION_CODES = 102    # A_GOAL + MAX_SOLO_CARDS

cdef enum Kind:
    K_CONVERTER = 0
    K_UPGRADER = 1
    K_REPEATER = 2
    K_CHUTE = 3

cdef enum Rule:
    R_EACH = 0              # a step per matching piece
    R_SAME = 1              # pieces all of one kind, a step each
    R_DIFFERENT = 2         # pieces each of a different kind, a step each
    R_SETS = 3              # a step per `per` matching pieces
    R_PAIR = 4              # exactly two pieces of one class: that class's steps
    R_MONEY = 5             # C sides: a step per `per` of today's Corner Shop money, no pieces
    R_AS = 6                # Palace D: by the rule of another store in play, chosen each time
    R_COUNT = 7             # Fresh Fancies D: a count whose bit is set in `per`, a step each
    R_CHAIN = 8             # Salter's D: kinds pair_mask[0..] in order; steps by length
    R_MATCH = 9             # House of Luxury D: sets of the two kinds of pair_mask[j]
    R_PAIRS = 10            # Dunstan & Gilbert's D: matching pairs, each a different kind

cdef enum Emp:
    E_DIRECTOR = 0
    E_MINER = 1
    E_OPERATOR = 2
    E_SALESMAN = 3
    E_CLERK = 4
    E_DECORATOR = 5
    E_MECHANIC = 6
    E_SHOP_AGENT = 7
    E_EXPERT_MINER = 8
    E_EXPERT_OPERATOR = 9
    E_DEALER = 10
    E_ENGINEER = 11
    E_SUPERVISOR = 12
    E_STORE_AGENT = 13
    E_PACKER = 14
    E_TECHNICIAN = 15
    E_OWNER = 16            # Master Chocolatier: operate a part without paying coal
    E_HELPERS = 17          # operate a part a second time in a shift
    E_PRODIGY = 18          # upgrades on one belt square

cdef enum Phase:
    PH_DRAFT = 0
    PH_RUN = 1
    PH_ORDERS = 2
    PH_AGENT = 3            # Department Store Agents, after everyone fulfilled orders
    PH_CLEANUP = 4
    PH_OVER = 5

# The pending decision within a phase.
cdef enum Sub:
    S_PACKET = 0            # draft: a packet
    S_PICK = 1              # draft: the card kept from the packet
    S_PLACE = 2             # draft: the slot for the new part
    S_ASSIGN = 3            # Mechanic / Technician: the part he works on today
    S_MENU = 4              # a shift: operate a part, trade, employee action, or end it
    S_TARGET = 5            # Technician's part: the square it works on
    S_OPTION = 6            # converter: the option
    S_INPUT = 7             # converter: the piece for input symbol p_sym
    S_OUTPUT = 8            # converter: the piece for output symbol p_sym
    S_UPGRADE = 9           # upgrader / Decorator: an upgrade step, or done
    S_COPY = 10             # repeater: the piece copied
    S_CHUTE = 11            # chute: the piece sent to the store room
    S_EMP_SQUARE = 12       # Operator / Decorator / Packer: the square
    S_MOVE_PIECE = 13       # Operator: the piece moved
    S_MOVE_TO = 14          # Operator: where it goes
    S_ORDERS = 15           # fulfil orders menu
    S_SUPPLY = 16           # supplying a Department Store, piece by piece
    S_AGENT_PIECE = 17      # Corner Shop Agent: a refined piece for the stage
    S_DEALER_OMIT = 18      # Dealer: a piece the stage does without
    S_AGENT_STORE = 19      # Department Store Agent: the store, or done
    S_KEEP = 20             # cleanup: a store-room piece kept overnight
    S_REPLACE = 21          # cleanup: the size of the replacement order kept
    S_GOAL = 22             # solo chocolate order: its kind (same) or next piece (different)
    S_AS_STORE = 23         # Palace D: the store whose rule the supply follows
    S_FREE_SLOT = 24        # Owner / Helpers: the part operated
    S_OPEN = 25             # Run Factory before the day's first push: the employee's
                            #   action, or load and push (parts wait for the push)

cdef enum End:
    END_SCORING = 0
    END_SOLO_WIN = 1
    END_SOLO_LOSS = 2

cdef enum GoalKind:
    G_MONEY = 0             # Corner Shop money
    G_ORDERS = 1            # completed regular orders (of a size, or any)
    G_STEPS = 2             # markers moved back on `stores` different stores (or `store`)
    G_SUPPLY = 3            # a chocolate order supplied during the game
    G_SPECIAL = 4           # a Special Order completed

cdef enum SupplyRule:
    SR_EXACT = 0            # exactly the pieces `need`
    SR_SAME = 1             # `amount` pieces of one kind within `mask`
    SR_DIFFERENT = 2        # `amount` pieces of different kinds within `mask`


cdef struct AcPart:
    int kind                                 # Kind
    int coal
    int amount                               # upgrades (upgrader) or copies (repeater)
    int n_options
    bint moves[MAX_OPTIONS]                  # the option moves a piece to another square
                                             # (alone, or after an upgrade / a copy)
    int n_in[MAX_OPTIONS]
    int n_out[MAX_OPTIONS]
    int in_mask[MAX_OPTIONS][MAX_SYMBOLS]    # bit k: piece k fits the symbol
    int out_mask[MAX_OPTIONS][MAX_SYMBOLS]


cdef struct AcOrder:
    int size
    int n_stages
    int n_pieces[MAX_STAGES]
    int need[MAX_STAGES][N_PIECES]
    int money[MAX_STAGES]


cdef struct AcSide:
    int rule                                 # Rule
    int mask                                 # pieces accepted
    int per                                  # R_SETS: pieces per step
    int n_pairs
    int pair_mask[6]                         # R_PAIR, R_CHAIN, R_MATCH: classes, kinds or
    int pair_steps[6]                        # sets, and their steps


cdef struct AcGoal:
    int kind                                 # GoalKind
    int amount                               # money, orders, steps per store, or pieces
    int size                                 # G_ORDERS: size or -1 (any); G_SPECIAL: size
    int stores                               # G_STEPS: how many different stores
    int store                                # G_STEPS: the named store, or -1
    int rule                                 # G_SUPPLY: SupplyRule
    int mask                                 # G_SUPPLY same / different: kinds allowed
    int need[N_PIECES]                       # G_SUPPLY exact


cdef struct AcCard:
    int n_goals
    AcGoal goal[MAX_GOALS]
    int supply                               # index of its G_SUPPLY goal, -1


cdef struct AcConfig:
    # The params, converted once when the game is built.
    int n                                    # players
    int days
    int coal_day[MAX_DAYS]
    int deck_day[MAX_DAYS]                   # 0 = deck A, 1 = deck B
    int n_packets
    int packet[N_SEATS]                      # packet sizes for this table
    int squares
    int slots                                # 2 * squares; slot s works on square s % squares
    int shifts
    int beans
    int keep
    int coal_per_choc
    int n_parts
    AcPart parts[MAX_PARTS]                  # printed, then deck A, then deck B
    int n_printed
    int printed_slot[MAX_SLOTS]              # part id p < n_printed sits on this slot
    int a_first, a_count, b_first, b_count   # the decks in play (after the expansion's removal)
    int a_total, b_total                     # their cards, the ones left in the box included
    int n_emp_cards
    int emp_kind[MAX_EMPLOYEE_CARDS]         # card id -> Emp
    int emp_store[MAX_EMPLOYEE_CARDS]        # card id -> the store whose deck it is in, -1
    int n_emp_decks                          # N_STORES, + 1 with the expansion
    int emp_deck_first[N_EMP_DECKS]
    int emp_deck_len[N_EMP_DECKS]
    int emp_packet[N_SEATS]                  # employee packet sizes for this table
    int owner_uses, helpers_uses, prodigy_upgrades
    int director_mult, miner_coal, expert_miner_coal, operator_moves, expert_operator_moves
    int salesman_bonus, clerk_skips, decorator_upgrades, mechanic_div, shop_agent_uses
    int dealer_uses, dealer_fewer, engineer_shifts, supervisor_beans, packer_uses
    int technician_coal
    bint agent_saturday                      # the Department Store Agent supplies on Saturday too
    bint act_before_push                     # an employee's action may come before the first push
    int n_orders                             # order ids: size by size
    AcOrder orders[MAX_ORDER_IDS]
    int order_first[N_SIZES]
    int order_count[N_SIZES]
    int n_start
    int start_size[MAX_HELD_ORDERS]
    int sides_random                         # each store's side drawn from A and B
    int sides[N_STORES]                      # else the side of each store, 0..3
    AcSide side[N_STORES][4]                 # sides A, B, C, D
    int track
    int n_awards
    int awards[4]
    int follow_div
    int diversity[N_STORES + 1]
    int most_orders, per_choc, per_coal
    int komi[N_SEATS]                        # compensation.points by turn position (house rule)
    # Factory Manager (solo: n == 1).
    bint solo
    int initial                              # Initial Demands
    int daily                                # Daily Demands, one revealed a day from Monday
    int discard[MAX_DAYS]                    # store whose employee leaves the display, -1
    int n_targets
    AcCard targets[MAX_TARGETS]
    int n_demands
    AcCard demands[MAX_DEMANDS]


cdef struct AcSeat:
    short belt[MAX_SQUARES][N_PIECES]        # square 0 is by the entrance
    short store[N_PIECES]                    # the store room
    int coal
    int money                                # earned so far (Corner Shop stages, Salesman)
    int money_today                          # of it, earned today (C sides)
    signed char slot[MAX_SLOTS]              # part id, -1 = empty
    unsigned char ops[MAX_SLOTS]             # operations of each slot this shift
    int n_covered
    signed char covered[MAX_DAYS]            # parts covered by a later part (out of play)
    int employee                             # card id today, -1
    int emp_uses                             # uses left of today's action
    int assigned                             # Mechanic / Technician slot, -1
    int helped                               # slot the Helpers operated twice this shift, -1
    bint supplied                            # today's store supplied
    int shifts_left                          # tiles still beside the entrance
    int tiles                                # tiles today (shifts + Engineer)
    int order[MAX_HELD_ORDERS]               # order id, -1 = completed (a regular one is
                                             # replaced at cleanup, a Special Order never)
    int stage[MAX_HELD_ORDERS]               # next stage of that order
    int n_done
    signed char done[MAX_DONE]               # completed order ids
    int done_size[N_SIZES]
    int track[N_STORES]
    int stamp[N_STORES]                      # arrival on the current space (lower = earlier)
    int supplies[N_STORES]
    int income                               # coal received as daily income so far
    int m_salesman                           # part of money from the Salesman
    int stages_done
    int interim[MAX_DAYS]
    int part_day[MAX_DAYS]                   # part taken each day, -1
    int slot_day[MAX_DAYS]
    int emp_day[MAX_DAYS]                    # employee kind hired each day, -1
    int covers[MAX_SLOTS]                    # placements that covered a part, per slot
    int special[MAX_HELD_ORDERS]             # Special Order id dealt to held slot n_start + k, -1


cdef struct Ac:
    Rng rng
    Seen seen                                # what each seat saw of the last move's chance:
                                             # a day's display, its own order offer, another's
                                             # order taken, a Daily Demand turned up
    int day                                  # 0-based
    int start                                # start player today
    int first                                # start player of day 1
    int phase                                # Phase
    int sub                                  # Sub
    int to_move                              # -1 when over
    int turn                                 # index in turn order (run, orders, agents, cleanup)
    int draft_k                              # draft turn, 0 .. 2n-1
    int side[N_STORES]                       # 0 = A, 1 = B, 2 = C, 3 = D
    signed char deck_a[MAX_PARTS]
    signed char deck_b[MAX_PARTS]
    int a_pos, b_pos                         # next part to draw
    signed char emp_deck[N_EMP_DECKS][MAX_DECK_EMPLOYEES]
    int emp_pos[N_EMP_DECKS]
    signed char disp_part[DISPLAY]           # -1 once taken or discarded
    signed char disp_emp[MAX_DISP_EMP]
    int pk_first[MAX_PACKETS]                # packet j: display index of its first card
    int pk_len[MAX_PACKETS]
    bint pk_taken[MAX_PACKETS]
    bint has_part[N_SEATS]
    bint has_emp[N_SEATS]
    int n_part_discard
    signed char part_discard[MAX_PARTS]
    int n_emp_discard
    signed char emp_discard[MAX_EMPLOYEE_CARDS]
    signed char odeck[N_SIZES][MAX_ORDERS]   # a ring: head, len
    int ohead[N_SIZES]
    int olen[N_SIZES]
    int ounseen[N_SIZES]                     # cards from the head never revealed
    unsigned char oseen[N_SIZES][MAX_ORDERS] # by ring slot: bit p when seat p saw the card put
                                             # there (under the deck; ignored in the unseen head)
    int stamps                               # arrival counter of store markers
    int n_held                               # order slots: the regular ones, then Special Orders
    # Factory Manager: card 0 is the Weekly Target, card j > 0 is demand_deck[j - 1].
    int target
    signed char demand_deck[MAX_DEMANDS]     # shuffled; Initial, then Daily Demands, then the box
    int n_cards                              # cards in play (target + Initial + Daily)
    int revealed                             # cards face up: 1 + Initial + Daily revealed so far
    bint goal_supplied[MAX_SOLO_CARDS]       # that card's chocolate order was supplied
    bint met[MAX_SOLO_CARDS][MAX_GOALS]      # set at the end: each objective met
    int p_goal                               # the card whose chocolate order is in progress
    AcSeat seat[N_SEATS]
    # The pending decision.
    int p_packet
    int p_slot
    int p_square
    int p_part
    int p_option
    int p_sym
    int p_left
    bint p_first
    int p_emp                                # employee kind whose action is in progress
    int p_store
    int p_rule                               # the store whose supply rule applies (Palace D)
    bint p_move                              # the part at work may move its piece (S_MOVE_TO)
    int p_mult
    int p_count
    int p_kind                               # first piece supplied (R_SAME, R_PAIR)
    int p_mask                               # kinds supplied (R_DIFFERENT)
    int p_order
    int p_held[N_PIECES]                     # pieces set aside: supplied, kept, omitted
    int p_drawn[N_SIZES]                     # replacement orders on offer, -1 = none
    int end


cdef struct AcMarks:
    # Where the decks and the chance stream stood at a position (drew_since).
    int a_pos, b_pos, revealed
    int emp_pos[N_EMP_DECKS]
    int ohead[N_SIZES]
    uint64_t rng


@cython.final
cdef class AlleyCatState(GameState):
    cdef AcConfig cfg
    cdef Ac s

    # Setup and the day.
    cdef int draw_order(self, int size) noexcept nogil
    # Order `id` goes under its deck, seen by the seats of the bit mask `seen`.
    cdef void order_to_bottom(self, int id, int seen) noexcept nogil
    cdef int seat_at(self, int index) noexcept nogil
    cdef int draft_seat(self, int k) noexcept nogil
    cdef void deal_solo(self) noexcept nogil
    cdef void begin_day(self) noexcept nogil
    cdef void solo_display(self) noexcept nogil
    cdef void see_display(self) noexcept nogil
    cdef void take_card(self, int p, int packet, int i) noexcept nogil
    cdef void hire(self, int p, int card) noexcept nogil
    cdef void place_part(self, int p, int slot) noexcept nogil
    cdef void next_draft(self) noexcept nogil
    cdef int emp_kind(self, int p) noexcept nogil
    cdef void begin_run(self) noexcept nogil
    cdef void open_run(self, int p) noexcept nogil
    cdef bint early_action(self, int p) noexcept nogil
    cdef void to_menu(self, int p) noexcept nogil
    cdef bint assignable(self, int p, int slot) noexcept nogil
    cdef void start_shift(self, int p) noexcept nogil
    cdef void end_shift(self, int p) noexcept nogil
    # Operating parts.
    cdef bint can_operate_on(self, int p, int slot, int square, const int* kinds) noexcept nogil
    cdef bint can_operate(self, int p, int slot, const int* kinds) noexcept nogil
    cdef void begin_operation(self, int p, int slot, int square) noexcept nogil
    cdef void choose_option(self, int p, int o) noexcept nogil
    cdef void advance_inputs(self, int p) noexcept nogil
    cdef void advance_outputs(self, int p) noexcept nogil
    cdef bint input_ok(self, int p, int t) noexcept nogil
    cdef void after_upgrade(self, int p) noexcept nogil
    cdef bint employee_action(self, int p) noexcept nogil
    cdef bint emp_square_ok(self, int p, int kind, int square) noexcept nogil
    cdef bint free_slot_ok(self, int p, int slot) noexcept nogil
    # Orders.
    cdef void begin_orders(self) noexcept nogil
    cdef const AcOrder* held(self, int p, int i) noexcept nogil
    cdef bint has_pieces(self, int p, const int* need) noexcept nogil
    cdef int refined_in_store(self, int p) noexcept nogil
    cdef bint dealer_omit_ok(self, int p, int i, int t, const int* omitted) noexcept nogil
    cdef bint dealer_can_omit_more(self, int p, int i) noexcept nogil
    cdef void pay_stage(self, int p, int i, const int* need) noexcept nogil
    cdef void advance_stage(self, int p, int i) noexcept nogil
    cdef const AcSide* side_of(self, int store) noexcept nogil
    cdef bint supply_ok(self, int p, int store, int t, int count, int first, int mask) noexcept nogil
    cdef bint can_supply(self, int p, int store) noexcept nogil
    cdef bint supply_complete(self, int store) noexcept nogil
    cdef void begin_supply(self, int p, int store, int mult) noexcept nogil
    cdef int supply_steps(self) noexcept nogil
    cdef void finish_supply(self, int p) noexcept nogil
    cdef void next_agent(self) noexcept nogil
    # Cleanup and the end.
    cdef void cleanup_seat(self) noexcept nogil
    cdef void end_keep(self, int p) noexcept nogil
    cdef void next_replacement(self) noexcept nogil
    cdef void end_day(self) noexcept nogil
    cdef void finish(self) noexcept nogil
    # Restricted play: the component of card x of draft packet j.
    cdef int card_component(self, int j, int x) noexcept nogil
    # Factory Manager.
    cdef const AcCard* card(self, int j) noexcept nogil
    cdef int goal_count(self) noexcept nogil
    cdef void solo_features(self, int* out) noexcept nogil
    cdef bint goal_ok(self, int p, const AcGoal* g, int t, int count, int mask) noexcept nogil
    cdef bint goal_payable(self, int p, int j) noexcept nogil
    cdef void start_goal(self, int p, int j) noexcept nogil
    cdef void goal_piece(self, int p, int t) noexcept nogil
    # Which objectives of the cards in play hold if the week ended now, each paid
    # separately in card order (Target, Initial, Daily): writes met[card][goal] and
    # returns how many hold. Chocolate orders and Special Orders count once done.
    cdef int judge(self, bint (*met)[MAX_GOALS]) noexcept nogil
    # Money of `seat` if the game were scored now; parts[0..6): Corner Shop stages (the
    # Salesman's bonus included), most orders, stores, diversity, chocolate, coal.
    cdef int score_now(self, int seat, int* parts) noexcept nogil
    # Money and place (1.., 0 = not on the track) of every seat at store k.
    cdef void store_awards(self, int k, int* money, int* place) noexcept nogil

    # For bots: `rng` advanced as determinize(observer, rng) would (no shuffle), and
    # whether a card was drawn or the chance stream used since the marks of an earlier
    # position of this game (if not, nothing determinize shuffles was read on the way).
    cdef void skip_determinize(self, int observer, Rng* rng) noexcept nogil
    cdef void draw_marks(self, AcMarks* out) noexcept nogil
    cdef bint drew_since(self, const AcMarks* before) noexcept nogil
    # For bots: the coal an operation costs, and the squares a part can work on.
    cdef int operate_cost(self, int p, int slot, int square) noexcept nogil
    cdef int targets(self, int p, int slot, int* out) noexcept nogil


# Whether the pieces `counts` can fill the symbols masks[0..n) (one piece each).
cdef bint can_match(const int* masks, int n, const short* counts) noexcept nogil
# Upgrade step k: piece UPG_FROM[k] becomes UPG_TO[k].
cdef int upg_from(int k) noexcept nogil
cdef int upg_to(int k) noexcept nogil
cdef int stage_of(int piece) noexcept nogil


# Whether a piece on the square can take an upgrade (any but a boxed one); shared with the
# bots, inline so the rules' and the bots' loops pay no call.
cdef inline bint upgradable(const short* c) noexcept nogil:
    cdef int t
    for t in range(BOXED):
        if c[t] > 0:
            return True
    return False


# The lowest set bit of m (m != 0).
cdef inline int lowest_bit(int m) noexcept nogil:
    cdef int t = 0
    while not (m >> t) & 1:
        t += 1
    return t
