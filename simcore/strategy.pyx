# cython: language_level=3
"""Strategy base classes: compiled (nogil `choose`) and plain-Python (`decide`)."""
import json
import math
import operator
import os
import signal
import threading
import traceback
from pathlib import Path

cimport cython
from libc.math cimport NAN
from libc.stdint cimport uint64_t
from simcore.rng cimport Rng, rng_below, rng_uniform, rng_seed
from simcore.state cimport GameState, MAX_PLAYERS, MAX_ACTIONS

from simcore.errors import UserError

__all__ = ["Strategy", "PythonStrategy", "DecideError", "RngView", "Lineup"]


cdef class Strategy:
    """Base of every bot. Subclasses set WEIGHTS (name -> default float) and GAMES (the
    game names they play, or ("*",) for any game) and override `choose`."""

    WEIGHTS = {}
    # A weight added after runs were written, whose declared default plays otherwise than
    # the bot did before it (in some game): name -> the value it had in effect then. A
    # held run that lacks such a weight resumes only when this run's value (as the bot
    # resolved it, see simcore.runner) is that one; any other added weight, at its default.
    WEIGHTS_BEFORE = {}
    GAMES = ("*",)
    DEFAULT_TABLES = True  # seated in `balance`'s default tables (every bot against every other)
    DESCRIPTION = ""

    def __init__(self, **weights):
        forbid = weights.pop("forbid", None)
        self.forbid_name = None if forbid is None else str(forbid).strip()
        self.forbid = -1
        declared = dict(type(self).WEIGHTS)
        if len(declared) > MAX_WEIGHTS:
            raise ValueError(f"{type(self).__name__} declares more than {MAX_WEIGHTS} weights")
        path = weights.pop("weights", None)
        if path is not None:
            weights = {**_load_weights(path), **weights}
        for name, value in weights.items():
            if name not in declared:
                allowed = ", ".join(declared) or "none"
                raise UserError(f"{type(self).__name__}: unknown weight {name!r} (allowed: {allowed})")
            try:
                declared[name] = float(value)
            except (TypeError, ValueError):
                raise UserError(f"{type(self).__name__}: weight {name}={value!r} is not a number")
            # Every bot's weights pass here: a NaN reached the search bot's C code (a
            # segfault at c=nan) and an infinity its loop bounds.
            if not math.isfinite(declared[name]):
                raise UserError(f"{type(self).__name__}: weight {name}={value!r} is not a finite number")
        self.weights = declared
        for i, value in enumerate(declared.values()):
            self.w[i] = value
        self.spec = type(self).__name__

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        with gil:
            raise NotImplementedError(f"{type(self).__name__} does not implement choose")

    cdef double evaluate(self, GameState state, int seat) noexcept nogil:
        return NAN

    cpdef prepare(self, GameState proto):
        pass

    def evaluates(self, GameState proto):
        """Whether the bot values positions of `proto`'s game (evaluate is not NaN)."""
        cdef double v = self.evaluate(proto, 0)
        return v == v

    def evaluation(self, GameState state, int seat):
        """The bot's value of `seat`'s position in `state` (evaluate), None if it has none."""
        cdef double v = self.evaluate(state, seat)
        return v if v == v else None

    def bind(self, GameState proto):
        """Make the bot ready to play `proto`'s game: resolve forbid=NAME against the
        game's components (UserError naming them if it is not one), then prepare()."""
        if self.forbid_name is not None:
            names = proto.component_names()
            if self.forbid_name not in names:
                allowed = ", ".join(names) or "none (this game names no components)"
                raise UserError(f"{self.spec}: forbid={self.forbid_name!r} is not a component "
                                f"of this game (allowed: {allowed})")
            self.forbid = names.index(self.forbid_name)
        self.prepare(proto)

    @property
    def plays_uniform(self):
        """True when the batch loop may draw this bot's moves itself (see `uniform`):
        a restricted bot chooses from its filtered list, so it never is."""
        return self.uniform and self.forbid < 0

    def set_spec(self, str spec):
        self.spec = spec

    def allowed(self, GameState state):
        """The legal actions of `state` this bot may play: all of them, less those that
        take its forbidden component unless that leaves none."""
        cdef int buf[MAX_ACTIONS]
        cdef int out[MAX_ACTIONS]
        cdef int n = state.legal_actions(buf)
        if self.forbid >= 0:
            n = drop_component(state, self.forbid, buf, n, out)
            return [out[i] for i in range(n)]
        return [buf[i] for i in range(n)]

    def choose_action(self, GameState state, rng):
        """Python entry: the action this bot picks in `state` (rng: an RngView), among
        the actions allowed() lets it play."""
        cdef int buf[MAX_ACTIONS]
        cdef int n = 0
        cdef RngView view = rng
        for a in self.allowed(state):
            buf[n] = a
            n += 1
        return self.choose(state, state.current_player(), buf, n, view.rng)


cdef int drop_component(GameState state, int component, const int* legal, int n, int* out) noexcept nogil:
    cdef int i, m = 0
    for i in range(n):
        if not state.action_takes(legal[i], component):
            out[m] = legal[i]
            m += 1
    if m == 0:
        for i in range(n):
            out[i] = legal[i]
        return n
    return m


def _load_weights(path):
    try:
        data = json.loads(Path(path).read_text())
    except OSError as e:
        raise UserError(f"weights file {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        raise UserError(f"weights file {path}: not valid JSON ({e.msg}, line {e.lineno})")
    if not isinstance(data, dict):
        raise UserError(f"weights file {path}: expected an object of name: number")
    return data


cdef class RngView:
    """A bot's random stream: lent to a Python bot for one decision, or owned (seeded)."""

    @staticmethod
    def seeded(seed):
        """A view owning a fresh stream seeded with `seed`."""
        cdef RngView view = RngView.__new__(RngView)
        rng_seed(&view.own, <uint64_t>seed)
        view.rng = &view.own
        return view

    def below(self, int n):
        """A uniform int in [0, n)."""
        if n <= 0:
            raise ValueError("below(n) needs n > 0")
        return rng_below(self.rng, n)

    def uniform(self):
        """A uniform float in [0, 1)."""
        return rng_uniform(self.rng)

    def choice(self, seq):
        return seq[rng_below(self.rng, len(seq))]


cdef class PythonStrategy(Strategy):
    """Subclass this in plain Python and define `decide(self, observation, legal, rng)`:
    `observation` is the dict of what the seat may see, `legal` the list of legal
    actions, `rng` an RngView (use it, not the random module, to stay reproducible).
    Return one of `legal`. It runs inside the same batch loop, taking the GIL per move."""

    cdef int choose(self, GameState state, int seat, const int* legal, int n, Rng* rng) except -1 nogil:
        cdef int action
        with gil:
            view = RngView.__new__(RngView)
            (<RngView>view).rng = rng
            options = [legal[i] for i in range(n)]
            observation = state.observation(seat)
            interrupts = _interrupts
            os._exit = _bot_exit  # see _bot_exit
            try:
                chosen = self.decide(observation, options, view)
            except (Exception, SystemExit) as e:
                what = (f"called os._exit({e.code!r})" if isinstance(e, _BotExit) else
                        f"called sys.exit({e.code!r})" if isinstance(e, SystemExit) else
                        f"raised {type(e).__name__}: {e}")
                raise DecideError(type(self).__name__, seat, what, traceback.format_exc(), self) from e
            except KeyboardInterrupt as e:
                if _interrupts != interrupts:
                    raise  # the user's Ctrl-C, delivered while the bot decided
                raise DecideError(type(self).__name__, seat, "raised KeyboardInterrupt (not a Ctrl-C)",
                                  traceback.format_exc(), self) from e
            finally:
                os._exit = _real_exit
            try:
                index = operator.index(chosen)  # an int or numpy integer; not a float or an array
            except TypeError:
                index = None
            if index not in options or isinstance(chosen, bool):
                raise DecideError(type(self).__name__, seat,
                                  f"returned {chosen!r}, not one of the legal actions {options}", bot=self)
            action = index
        return action

    def decide(self, observation, legal, rng):
        raise NotImplementedError(f"{type(self).__name__} must define decide(observation, legal, rng)")


# A Python bot's sys.exit(3) ended the whole command with its code and no message, and
# its os._exit(7) the process; a KeyboardInterrupt it raised read as the user's Ctrl-C.
# While a bot decides, os._exit raises instead (the runner's own exits keep the real
# one), and SIGINTs are counted, so that a KeyboardInterrupt with no SIGINT behind it is
# the bot's failure.
_real_exit = os._exit
_interrupts = 0


class _BotExit(SystemExit):
    """os._exit called by a bot while it decided."""


def _bot_exit(code):
    raise _BotExit(code)


def _count_interrupt(signum, frame):
    global _interrupts
    _interrupts += 1
    signal.default_int_handler(signum, frame)


if threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _count_interrupt)


class DecideError(ValueError):
    """A Python bot's decide raised, or returned no legal action: `what` it did, `seat`
    the seat it played, `details` the traceback of a raise. `bot` is the bot itself in
    the process where it failed (None in a copy sent from another process). Raised here,
    not by wrapping decide, so that it works for a bot of any class (with __slots__ too)."""

    def __init__(self, name, seat, what, details="", bot=None):
        super().__init__(name, seat, what, details)
        self.name, self.seat, self.what, self.details, self.bot = name, seat, what, details, bot

    def __str__(self):
        return f"{self.name}.decide {self.what}"

    def __reduce__(self):  # without the bot (not in args), which need not pickle
        return type(self), self.args


cdef class Lineup:
    def __init__(self, strategies):
        if len(strategies) > MAX_PLAYERS:
            raise ValueError(f"at most {MAX_PLAYERS} strategies, got {len(strategies)}")
        padded = list(strategies) + [None] * (MAX_PLAYERS - len(strategies))
        self.s0, self.s1, self.s2, self.s3, self.s4, self.s5 = padded
