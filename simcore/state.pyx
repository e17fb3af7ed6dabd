# cython: language_level=3
"""The GameState base class: the nogil contract plus the Python API built on it."""
from libc.stdint cimport uint64_t
from simcore.batchjob cimport BatchJob
from simcore.rng cimport Rng, rng_below, rng_seed

__all__ = ["GameState", "StateAPI", "IllegalAction", "CHECKED_BUILD"]

CHECKED_BUILD = bool(CHECKED)


class IllegalAction(ValueError):
    """An action that is not in the current legal list."""


cdef class StateAPI:
    """The Python face of a game state, slower and always checked: play, traces, tests and
    Python bots use it. It answers with the names and signatures a PyGame author writes
    (simcore.pygame), so one vocabulary serves both kinds of game, plus what only the
    engine offers (new_game, turn_positions, standings, determinized, the name lists,
    check_invariants)."""

    def new_game(self, seed):
        """Deal the game of `seed` (an int in [0, 2**64))."""
        (<GameState>self).reset(<uint64_t>seed)

    def current_player(self):
        """The seat to act, -1 once the game is over."""
        return (<GameState>self).current_player()

    def is_terminal(self):
        return (<GameState>self).current_player() < 0

    def legal_actions(self):
        """The legal actions of the current decision, as a list of ints."""
        cdef int buf[MAX_ACTIONS]
        cdef int n = (<GameState>self).legal_actions(buf)
        return [buf[i] for i in range(n)]

    def _kept_legal_actions(self):
        """The legal list a game that keeps one (GameState.kept_legal) holds now, or None
        for a game that does not: the conformance suite checks it against
        legal_actions() after moves, copies and determinizations."""
        cdef GameState g = <GameState>self
        if g.kept_legal == NULL:
            return None
        return [g.kept_legal[i] for i in range(g.kept_n_legal[0])]

    def apply(self, int action):
        """Play `action` after checking it is legal; raises IllegalAction if not."""
        cdef GameState state = <GameState>self
        if state.current_player() < 0:
            raise IllegalAction("the game is over")
        legal = self.legal_actions()
        if action not in legal:
            raise IllegalAction(f"action {action} is not legal here: legal are {legal}")
        state.apply(action)
        if CHECKED:
            state.assert_valid()

    def scores(self):
        """The final score of each seat (the compensation bonus included)."""
        cdef int scores[MAX_PLAYERS]
        cdef int ranks[MAX_PLAYERS]
        cdef GameState state = <GameState>self
        state.outcome(scores, ranks)
        return [scores[i] for i in range(state.n_players)]

    def ranks(self):
        """Each seat's rank at the end: 1 wins, equal ranks share the victory."""
        cdef int scores[MAX_PLAYERS]
        cdef int ranks[MAX_PLAYERS]
        cdef GameState state = <GameState>self
        state.outcome(scores, ranks)
        return [ranks[i] for i in range(state.n_players)]

    def end_reason(self):
        """Why the game ended: a name of END_REASONS."""
        return type(self).END_REASONS[(<GameState>self).end_reason()]

    def first_player(self):
        """The seat that moved first this game."""
        return (<GameState>self).first_player()

    def turn_positions(self):
        """Each seat's turn position at the start of the game (0 = acts first)."""
        cdef GameState state = <GameState>self
        return [state.turn_position(i) for i in range(state.n_players)]

    def standing(self, int seat):
        """The score `seat` would have if the game were scored now."""
        return (<GameState>self).standing(seat)

    def standings(self):
        """standing() of every seat."""
        cdef GameState state = <GameState>self
        return [state.standing(i) for i in range(state.n_players)]

    def interim(self, int seat):
        """The standings of `seat` at each round boundary (names in interim_names())."""
        cdef int buf[MAX_INTERIM]
        cdef GameState state = <GameState>self
        state.interim(seat, buf)
        return [buf[i] for i in range(state.n_interim)]

    def features(self, int seat):
        """The per-seat feature counters of `seat` (names in feature_names())."""
        cdef int buf[MAX_FEATURES]
        cdef GameState state = <GameState>self
        state.features(seat, buf)
        return [buf[i] for i in range(state.n_features)]

    def action_component(self, int action):
        """The component index `action` takes in the current decision, or -1."""
        return (<GameState>self).action_component(action)

    def action_takes(self, int action, int component):
        """Whether `action` takes component `component` in the current decision."""
        return bool((<GameState>self).action_takes(action, component))

    def action_key(self, int action, int observer):
        """What `observer` sees of `action` played now by the seat to move."""
        return (<GameState>self).action_key(action, observer)

    def outcome_key(self, int observer):
        """What `observer` saw of the chance outcomes of the last move (0: none)."""
        return (<GameState>self).outcome_key(observer)

    def copy(self):
        """An independent copy of this state."""
        cdef GameState other = type(self)(self.params)
        (<GameState>self).copy_into(other)
        return other

    def determinize(self, int seat, rng):
        """Resample, in place, everything `seat` cannot see, drawing from `rng` (a
        simcore.pygame.Chance, or the stream lent to a Python bot: anything with
        below(n)); the state's own stream is seeded from two of its draws."""
        cdef Rng r
        rng_seed(&r, (<uint64_t>rng.below(1 << 32) << 32) | <uint64_t>rng.below(1 << 32))
        (<GameState>self).determinize(seat, &r)

    def determinized(self, int seat, seed):
        """A copy in which everything `seat` cannot see is resampled from `seed`."""
        cdef Rng r
        rng_seed(&r, <uint64_t>seed)
        cdef GameState other = self.copy()
        other.determinize(seat, &r)
        return other

    def check_invariants(self):
        """Raise AssertionError if any invariant of the game is broken."""
        (<GameState>self).assert_valid()

    def phase_label(self):
        """The current round (or day...) as text; traces show the state when it changes."""
        return ""

    def describe_outcome(self):
        """What chance produced in the last move, in words ("rolled 4"), for traces;
        "" when it produced nothing (or the game does not say)."""
        return ""

    def feature_names(self):
        return list(type(self).FEATURES)

    def component_names(self):
        """The components action_component() names, by index (restricted play)."""
        return list(type(self).COMPONENTS)

    def interim_names(self):
        return list(type(self).INTERIM)


# The random rollout compiled for the base: a virtual call per step.
ctypedef fused Game:
    GameState
include "simcore/playout.pxi"


cdef class GameState(StateAPI):
    """Base of every game's state. Subclasses implement the nogil methods and, in Python,
    `describe`, `observation`, `render` and `to_dict`; class attributes FEATURES,
    INTERIM, END_REASONS and INVARIANTS name what the int codes mean. A game's metadata
    is the class attributes a PyGame declares too (NAME ... WON_IN_PLAY, see
    simcore.pygame.PyGame), with DEFAULTS, the TOML file of its params' defaults;
    simcore.registry.spec_of reads them."""

    FEATURES = ()
    INTERIM = ()
    COMPONENTS = ()  # names of what action_component() returns, by index
    END_REASONS = ()
    INVARIANTS = ()
    NAME = ""
    TITLE = ""
    PLAYERS = (2, 2)
    PARAMS = None
    DEFAULTS = None
    FEATURE_ROLES = None
    POSITION_KNOBS = {}
    BONUS_DECIDES = True
    TIE_BREAKS = ()
    WON_IN_PLAY = ()

    cdef void reset(self, uint64_t seed) noexcept nogil:
        pass

    cdef int current_player(self) noexcept nogil:
        return -1

    cdef int legal_actions(self, int* out) noexcept nogil:
        return 0

    cdef int apply(self, int action) except -2 nogil:
        with gil:
            raise NotImplementedError("GameState.apply is abstract")

    cdef int first_player(self) noexcept nogil:
        return 0

    cdef int turn_position(self, int seat) noexcept nogil:
        return (seat - self.first_player() + self.n_players) % self.n_players

    cdef int end_reason(self) noexcept nogil:
        return 0

    cdef void outcome(self, int* scores, int* ranks) noexcept nogil:
        pass

    cdef int standing(self, int seat) noexcept nogil:
        return 0

    cdef void interim(self, int seat, int* out) noexcept nogil:
        pass

    cdef void features(self, int seat, int* out) noexcept nogil:
        pass

    cdef int action_component(self, int action) noexcept nogil:
        return -1

    cdef bint action_takes(self, int action, int component) noexcept nogil:
        return self.action_component(action) == component

    cdef int action_key(self, int action, int observer) noexcept nogil:
        return action

    cdef int outcome_key(self, int observer) noexcept nogil:
        return 0

    cdef void copy_into(self, GameState other) noexcept nogil:
        pass

    cdef void determinize(self, int observer, Rng* rng) noexcept nogil:
        pass

    cdef int validate(self) noexcept nogil:
        return 0

    cdef int play_batch(self, object lineup, BatchJob* job) except -1 nogil:
        return 0

    cdef int play_out(self, Rng* rng, int depth) except -2 nogil:
        return play_out_uniform(self, rng, depth)

    cdef int assert_valid(self) except -1 nogil:
        cdef int code = self.validate()
        if code != 0:
            with gil:
                names = type(self).INVARIANTS
                what = names[code - 1] if 0 < code <= len(names) else f"invariant {code}"
                raise AssertionError(f"{type(self).__name__}: broken invariant: {what}")
        return 0
