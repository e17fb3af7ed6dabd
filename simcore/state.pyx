# cython: language_level=3
"""The GameState base class: the nogil contract plus the Python API built on it."""
from libc.stdint cimport uint64_t
from simcore.batchjob cimport BatchJob
from simcore.rng cimport Rng, rng_seed

__all__ = ["GameState", "IllegalAction", "CHECKED_BUILD"]

CHECKED_BUILD = bool(CHECKED)


class IllegalAction(ValueError):
    """An action that is not in the current legal list."""


cdef class GameState:
    """Base of every game's state. Subclasses implement the nogil methods and, in Python,
    `describe_action`, `observation`, `render` and `to_dict`; class attributes FEATURES,
    INTERIM, END_REASONS and INVARIANTS name what the int codes mean."""

    FEATURES = ()
    INTERIM = ()
    COMPONENTS = ()  # names of what action_component() returns, by index
    END_REASONS = ()
    INVARIANTS = ()

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

    cdef int assert_valid(self) except -1 nogil:
        cdef int code = self.validate()
        if code != 0:
            with gil:
                names = type(self).INVARIANTS
                what = names[code - 1] if 0 < code <= len(names) else f"invariant {code}"
                raise AssertionError(f"{type(self).__name__}: broken invariant: {what}")
        return 0

    # ---- Python API: slower, always checked; used by play, traces, tests, Python bots ----

    def new_game(self, seed):
        """Deal the game of `seed` (an int in [0, 2**64))."""
        self.reset(<uint64_t>seed)

    @property
    def player(self):
        """Seat to act, or -1 when the game is over."""
        return self.current_player()

    @property
    def terminal(self):
        return self.current_player() < 0

    def legal(self):
        """The legal actions of the current decision, as a list of ints."""
        cdef int buf[MAX_ACTIONS]
        cdef int n = self.legal_actions(buf)
        return [buf[i] for i in range(n)]

    def apply_action(self, int action):
        """Play `action` after checking it is legal; raises IllegalAction if not."""
        if self.current_player() < 0:
            raise IllegalAction("the game is over")
        if action not in self.legal():
            raise IllegalAction(f"action {action} is not legal here: legal are {self.legal()}")
        self.apply(action)
        if CHECKED:
            self.assert_valid()

    def check_invariants(self):
        """Raise AssertionError if any invariant of the game is broken."""
        self.assert_valid()

    @property
    def first(self):
        return self.first_player()

    def turn_positions(self):
        """Each seat's turn position at the start of the game (0 = acts first)."""
        return [self.turn_position(i) for i in range(self.n_players)]

    @property
    def end_reason_name(self):
        return type(self).END_REASONS[self.end_reason()]

    def result(self):
        """(scores, ranks) of a finished game, as lists."""
        cdef int scores[MAX_PLAYERS]
        cdef int ranks[MAX_PLAYERS]
        self.outcome(scores, ranks)
        return [scores[i] for i in range(self.n_players)], [ranks[i] for i in range(self.n_players)]

    def standings(self):
        return [self.standing(i) for i in range(self.n_players)]

    def interim_scores(self, int seat):
        cdef int buf[MAX_INTERIM]
        self.interim(seat, buf)
        return [buf[i] for i in range(self.n_interim)]

    def feature_values(self, int seat):
        cdef int buf[MAX_FEATURES]
        self.features(seat, buf)
        return [buf[i] for i in range(self.n_features)]

    def clone(self):
        """An independent copy of this state."""
        cdef GameState other = type(self)(self.params)
        self.copy_into(other)
        return other

    def phase_label(self):
        """The current round (or day...) as text; traces show the state when it changes."""
        return ""

    def feature_names(self):
        return list(type(self).FEATURES)

    def component_names(self):
        """The components action_component() names, by index (restricted play)."""
        return list(type(self).COMPONENTS)

    def component_of(self, int action):
        """The component index `action` takes in the current decision, or -1."""
        return self.action_component(action)

    def takes(self, int action, int component):
        """Whether `action` takes component `component` in the current decision."""
        return bool(self.action_takes(action, component))

    def interim_names(self):
        return list(type(self).INTERIM)

    def key_of(self, int action, int observer):
        """What `observer` sees of `action` played now (action_key)."""
        return self.action_key(action, observer)

    def outcome_of(self, int observer):
        """What `observer` saw of the chance outcomes of the last move (outcome_key; 0: none)."""
        return self.outcome_key(observer)

    def determinized(self, int observer, seed):
        """A copy in which everything `observer` cannot see is resampled from `seed`."""
        cdef Rng r
        rng_seed(&r, <uint64_t>seed)
        cdef GameState other = self.clone()
        other.determinize(observer, &r)
        return other
