# The game-state contract every game implements (see DESIGN.md, "State").
#
# A game is a cdef subclass of GameState owning one C struct. Everything the batch loop
# calls is a virtual `nogil` method: no Python object is touched while a game is played.
# Actions are small ints; a decision with many parts is split into several small ones,
# each with its own legal list.
#
# Invariants every game keeps (the checked build asserts them after every move):
# - current_player() is in [0, n_players) while the game is not terminal, -1 once it is;
# - legal_actions() writes at least one action whenever the game is not terminal;
# - the same seed and the same actions give the same game, bit for bit.
from libc.stdint cimport uint64_t
from simcore.batchjob cimport BatchJob
from simcore.rng cimport Rng

cdef extern from *:
    """
    #ifdef CHOCOSIM_CHECKED
    #define CHOCOSIM_IS_CHECKED 1
    #else
    #define CHOCOSIM_IS_CHECKED 0
    #endif
    """
    # True in the checked build (CHOCOSIM_CHECKED=1 at build time): the batch loop then
    # checks every action's legality and every game's invariants after every move.
    const bint CHECKED "CHOCOSIM_IS_CHECKED"

cdef enum:
    MAX_PLAYERS = 6      # largest table of any game
    MAX_ACTIONS = 512    # longest legal-action list of any decision
    MAX_FEATURES = 256   # per-seat feature counters of any game
    MAX_INTERIM = 64     # interim-score boundaries (rounds, days...) of any game


# The Python face of every state (state.pyx): the methods a PyGame author writes, with
# their signatures, answered from the C contract below. A base class because Cython
# gives a class's C and Python methods one namespace: the contract keeps the names.
cdef class StateAPI:
    pass


cdef class GameState(StateAPI):
    cdef readonly int n_players     # seats at the table, fixed by the params
    cdef readonly int n_features    # per-seat feature counters written by features()
    cdef readonly int n_interim     # round boundaries recorded by interim()
    # True when the params keep every feature counter within -128..127: results then
    # store the features as int8, not int16 (a fast game's part is a quarter smaller).
    # Set in __init__ by a game that can bound its counters; False by default.
    cdef readonly bint narrow_features
    cdef readonly object params     # the validated params model the state was built from
    # A game that keeps the current decision's legal list itself points these at the
    # list and its length, once, in __init__: the batch loop and the search's random
    # rollouts (play_out) then read the list in place instead of copying it out through
    # legal_actions (a block read back right after scalar writes stalls on store
    # forwarding). While the game runs, the list must be legal_actions()'s after reset,
    # apply, copy_into and determinize alike (conformance-checked). NULL otherwise.
    cdef const int* kept_legal
    cdef const int* kept_n_legal

    # Deal a new game from `seed` (chance comes only from the state's own Rng stream).
    cdef void reset(self, uint64_t seed) noexcept nogil
    # Seat to act, or -1 once the game is over.
    cdef int current_player(self) noexcept nogil
    # Write the legal actions of the current decision to out; return how many.
    cdef int legal_actions(self, int* out) noexcept nogil
    # Play a legal action and return the seat to act next (-1 once the game is over).
    # The rules proper: legality is checked by the callers that can be wrong (the
    # Python API always, the batch loop in the checked build).
    cdef int apply(self, int action) except -2 nogil
    # Seat that moved first this game (for the first-player effect).
    cdef int first_player(self) noexcept nogil
    # Turn position of `seat` at the start of the game: 0 for the seat that acts first,
    # 1 for the next in turn order, and so on. The base counts on from first_player()
    # in ascending seat order; a game whose turn order goes otherwise overrides it.
    cdef int turn_position(self, int seat) noexcept nogil
    # Why the game ended, an index into the game's END_REASONS.
    cdef int end_reason(self) noexcept nogil
    # Final scores and ranks (1 = winner; equal ranks share the victory). A one-player
    # game may be lost: its seat then ranks 2 and nobody wins (win 0).
    cdef void outcome(self, int* scores, int* ranks) noexcept nogil
    # The score `seat` would have if the game were scored now (greedy bots, standings).
    cdef int standing(self, int seat) noexcept nogil
    # The standings of `seat` recorded at each round boundary (n_interim values; a game
    # that ended early repeats its final standing for the boundaries it never reached).
    cdef void interim(self, int seat, int* out) noexcept nogil
    # The per-seat feature counters (n_features values, names in the game's FEATURES).
    cdef void features(self, int seat, int* out) noexcept nogil
    # The component (an index into the game's COMPONENTS: a card kind, a part, an
    # employee...) that playing `action` in the current decision takes, or -1 for none.
    # Restricted play forbids a bot the actions of one component to measure its worth.
    cdef int action_component(self, int action) noexcept nogil
    # Whether playing `action` takes `component`. The base: action_component(action) ==
    # component; a game whose action can take several components at once (a collect of
    # several cards) overrides it. Restricted play filters with this.
    cdef bint action_takes(self, int action, int component) noexcept nogil
    # What `observer` sees of `action` played now by the seat to move, as a small int
    # (below 4096) naming it in the search trees: two actions with one key are the
    # same move to `observer` (two hand cards of one kind; another seat's hidden
    # choice). Depends only on what `observer` has seen. The base: the action itself,
    # right for a game whose action numbers mean the same move in every world.
    cdef int action_key(self, int action, int observer) noexcept nogil
    # What `observer` saw of the chance outcomes of the last apply(): the cards drawn into
    # its own hand, the cards turned face up, the dice... folded to an int in [0, 2**30),
    # 0 when it saw none. Two worlds `observer` cannot tell apart before the move, in
    # which it sees the same after it, give the same key; another seat's private draw
    # is nothing to it. The search trees hang a seat's next decisions below the outcome
    # it saw (strategies/mcts.pyx). After determinize nothing counts as seen until the
    # next apply. The base: 0, a game whose search ignores chance (the examples); the
    # compiled games keep a simcore/seen.pxd record, a Python game defines
    # PyGame.outcome_key.
    cdef int outcome_key(self, int observer) noexcept nogil
    # Make `other` (same class, same params) an independent copy of this state.
    cdef void copy_into(self, GameState other) noexcept nogil
    # Resample everything `observer` cannot see (hidden hands, deck order, the future of
    # the chance stream), consistently with everything it has seen.
    cdef void determinize(self, int observer, Rng* rng) noexcept nogil
    # 0 if every invariant of the game holds, else the code of the first broken one.
    cdef int validate(self) noexcept nogil

    # Play the games of `job` with the batch loop compiled for this class (simcore/loop.pxi;
    # `lineup` is a simcore.strategy.Lineup) and return 1; the base returns 0 and the
    # generic loop, with a virtual call per step, plays them instead.
    cdef int play_batch(self, object lineup, BatchJob* job) except -1 nogil
    # Play on with uniformly random moves (a forced move draws nothing from `rng`) until
    # the game ends or `depth` moves are played (0: no limit); return the seat to move
    # then, -1 at the end: the search bot's (mcts) random rollout. The base runs
    # simcore/playout.pxi with a virtual call per step; a compiled game overrides it to
    # return play_out_uniform(self, rng, depth), the same template compiled for its own
    # class through simcore/loop.pxi (direct calls), with the same draws.
    cdef int play_out(self, Rng* rng, int depth) except -2 nogil

    # Raise AssertionError naming the broken invariant (checked build, tests).
    cdef int assert_valid(self) except -1 nogil
