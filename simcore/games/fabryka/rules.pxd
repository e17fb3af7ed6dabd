# Fabryka Czekolady rules: the C state and the observation a seat may read.
cimport cython
from simcore.rng cimport Rng
from simcore.state cimport GameState

cdef enum:
    N_KINDS = 11         # biscuits, blueberries, strawberries, almonds (fillings 0-3),
                         # green, yellow, pink, pawns, meeples, dice, white
    N_FILLINGS = 4
    ALMONDS = 3          # the tie-break kind
    WHITE = 10
    MAX_CARDS = 128
    MAX_HAND = 16
    MAX_ROUNDS = 16
    N_SEATS = 2
    COLLECT = MAX_HAND   # the collect action; actions 0..hand_len-1 play that hand slot

cdef enum End:
    END_SCORING = 0      # four rounds played, points decide
    END_WHITE = 1        # a player collected white_to_win white chocolates


cdef struct FabConfig:
    # The params, converted once when the game is built.
    int n_cards
    signed char cards[MAX_CARDS]     # the deck in canonical order (kinds)
    int removed                      # cards set aside unseen at setup
    int hand_size
    int opening_belt
    int rounds
    int collect_count
    int white_to_win
    int set_points
    int majority[N_FILLINGS]
    int card_points[N_KINDS]         # per card; 0 for the fillings
    int komi[N_SEATS]                # compensation.points by turn position (house rule)


cdef struct Fab:
    Rng rng                          # the chance stream (deck order)
    signed char deck[MAX_CARDS]      # shuffled; [0, removed) is out of the game unseen
    int deck_pos                     # next card to deal
    signed char hand[N_SEATS][MAX_HAND]
    int hand_len[N_SEATS]
    signed char belt[MAX_CARDS]      # oldest first; collects take from the end
    int belt_len
    int collected[N_SEATS][N_KINDS]
    int card_points[N_SEATS]         # the points per card of each collection, kept by apply
    int round                        # 0-based
    int token                        # seat holding the first-player token this round
    int to_move                      # seat to act, -1 when over
    int turns_taken[N_SEATS]         # this round
    bint has_collected[N_SEATS]      # this round
    int end                          # End, valid when to_move == -1
    int white_winner                 # seat, or -1
    int rounds_done                  # round boundaries recorded in interim
    int collect_turn[N_SEATS][MAX_ROUNDS]  # turn (1-based, within the round) of each collect; 0 = none
    int interim[N_SEATS][MAX_ROUNDS]
    unsigned int moves               # moves applied (and determinizations), to stamp the deal
    unsigned int dealt               # 1 + moves when the last deal was made


cdef struct FabObs:
    # What one seat may see: its hand, the belt, both collections, the clock. The
    # pointers are into the state (read only, valid until the next move): the seat's
    # own hand and public cards, never the other hand or the pile.
    int seat
    int hand_len
    const signed char* hand
    int belt_len
    const signed char* belt
    const int* mine
    const int* theirs
    int round
    int my_turns_left                # including this one
    int their_turns_left
    bint i_collected
    bint they_collected


@cython.final
cdef class FabrykaState(GameState):
    cdef FabConfig cfg
    cdef Fab s
    # The current decision's legal list, kept up to date by every move (the batch loop
    # reads it in place: GameState.kept_legal): the play actions 0, 1, 2... of the hand,
    # with COLLECT in slot hand_len of the seat to move, counted only when legal. Outside
    # `s`, so that copies (the search bots make one an iteration) stay as small.
    cdef int keep[MAX_HAND + 1]
    cdef int n_keep
    cdef int keep_at                 # the slot holding COLLECT

    # Inline: the bots are compiled apart from the rules, and read only the fields they use.
    cdef inline void observe(self, int seat, FabObs* o) noexcept nogil:
        cdef int other = 1 - seat
        o.seat = seat
        o.hand_len = self.s.hand_len[seat]
        o.hand = self.s.hand[seat]
        o.belt_len = self.s.belt_len
        o.belt = self.s.belt
        o.mine = self.s.collected[seat]
        o.theirs = self.s.collected[other]
        o.round = self.s.round
        o.my_turns_left = self.cfg.hand_size + 1 - self.s.turns_taken[seat]
        o.their_turns_left = self.cfg.hand_size + 1 - self.s.turns_taken[other]
        o.i_collected = self.s.has_collected[seat]
        o.they_collected = self.s.has_collected[other]

    cdef inline void keep_legal(self) noexcept nogil:
        # Computed, not branched on (it flips unpredictably): a player who has not
        # collected must keep one turn for it; with an empty hand the collect is forced
        # (on an empty belt it takes nothing, which only house rules bring about),
        # otherwise it needs a card on the belt.
        cdef int p = self.s.to_move
        cdef int h = self.s.hand_len[p]
        self.keep[self.keep_at] = self.keep_at
        self.keep[h] = COLLECT
        self.keep_at = h
        self.n_keep = h + ((self.s.has_collected[p] == 0) & ((h == 0) | (self.s.belt_len > 0)))

    cdef void deal_round(self) noexcept nogil
    cdef void end_round(self) noexcept nogil
    cdef void finish(self, int end) noexcept nogil
    cdef void record_interim(self, int r0, int r1) noexcept nogil
    cdef list _kinds(self, const signed char* cards, int n)


# Score of a collection `mine` against the other player's `theirs` (majorities need
# strictly more; sets of the four fillings; points per card).
cdef int fab_score(const FabConfig* c, const int* mine, const int* theirs) noexcept nogil
# Both scores of collections a and b in one pass.
cdef void fab_scores(const FabConfig* c, const int* a, const int* b, int* sa, int* sb) noexcept nogil
