# cython: language_level=3
"""PyGameState: the GameState of a game written in Python (simcore.pygame.PyGame).

It calls the designer's Python methods from the nogil contract, taking the GIL for each
call, so the batch loop, every bot (random, greedy, the search bot, Python bots) and the
runner play a Python game exactly as they play a compiled one: same seeds, same result
parts. What the loop reads most is kept in C: the current seat and the legal list are
fetched once per move (the loop reads the list in place through kept_legal), and the
outcome, features and interim scores once, when the game ends.

The contract's noexcept methods cannot raise: a failure in one (a Ctrl-C too) is kept
and raised by the next apply(), which the loop always reaches (the state then offers seat
0 one action). A state and every copy made from it (a bot's look-ahead) keep their
failures in one list, so a failure on a bot's scratch copy ends the game it was made for.
Every value the game returns is checked by type and range: a dict is not a list, a float
(NaN, inf) is not an int.
"""
import json
import traceback

import numpy as np

from libc.stdint cimport uint64_t
from libc.string cimport memcpy, memset
from simcore.rng cimport Rng
from simcore.state cimport GameState, MAX_PLAYERS, MAX_ACTIONS, MAX_FEATURES, MAX_INTERIM
from simcore.strategy cimport RngView

from simcore import strategy as _strategy
from simcore.errors import UserError
from simcore.meta import DECLARED
from simcore.pygame import Chance, GameFailure, MOVE_LIMIT, PyGame, short_repr as _short

cdef enum:
    MAX_ACTION = 4096  # actions are below this (the search bots' action keys)
    SEEN_BYTES = 512   # a bit per action: MAX_ACTION / 8
    # A final score's bound: with the compensation bonus it still fits the results'
    # int32 score column.
    SCORE_LIMIT = 1 << 30

__all__ = ["PyGameState", "state_class"]


def state_class(game_cls):
    """The GameState subclass playing `game_cls`: names and metadata read from its class
    attributes, the engine's "move_limit" last among the end reasons."""
    name = game_cls.NAME or game_cls.__name__
    for what, names, most in (("FEATURES", game_cls.FEATURES, MAX_FEATURES),
                              ("INTERIM", game_cls.INTERIM, MAX_INTERIM)):
        if len(names) > most:
            raise UserError(f"game {name}: {what} has {len(names)} names; at most {most} are supported")
    return type(f"{game_cls.__name__}State", (PyGameState,), {
        **{attr: getattr(game_cls, attr) for attr in DECLARED},
        "GAME": game_cls,
        "FEATURES": tuple(game_cls.FEATURES),
        "INTERIM": tuple(game_cls.INTERIM),
        "COMPONENTS": tuple(game_cls.COMPONENTS),
        "END_REASONS": (*game_cls.END_REASONS, MOVE_LIMIT),
        "__module__": __name__,
    })


cdef class PyGameState(GameState):
    cdef readonly object game        # the designer's PyGame instance, None before a deal
    # [the first failure] once one happened (a GameFailure, or a KeyboardInterrupt kept
    # by a noexcept method): raised by the next apply(). Shared with every copy made from
    # this state, so that the failure of a bot's look-ahead reaches the game it played.
    cdef list faults
    cdef object interrupts           # the Ctrl-Cs counted when this game was dealt (simcore.strategy)
    cdef bint observed               # this game's first observation has been checked
    cdef str name                    # the game's name, for messages
    cdef int cur                     # seat to act, -1 once over
    cdef int n_legal
    cdef int legal_buf[MAX_ACTIONS]
    cdef long moves
    cdef long max_moves
    cdef int n_components
    cdef bint keyed                  # the game defines action_key
    cdef bint outcome_keyed          # the game defines outcome_key
    # Filled when the game ends (the loop reads them after the last move).
    cdef int sc[MAX_PLAYERS]
    cdef int rk[MAX_PLAYERS]
    cdef int pos[MAX_PLAYERS]
    cdef int reason
    cdef int first
    cdef int feats[MAX_PLAYERS * MAX_FEATURES]
    cdef int inter[MAX_PLAYERS * MAX_INTERIM]

    def __init__(self, params):
        cls = type(self).GAME
        self.name = cls.NAME or cls.__name__
        lo, hi = cls.PLAYERS
        if not lo <= params.players <= hi:
            allowed = f"{lo}" if lo == hi else f"{lo} to {hi}"
            raise UserError(f"{self.name} is played by {allowed} players, not {params.players}")
        self.params = params
        self.n_players = params.players
        self.n_features = len(type(self).FEATURES)
        self.n_interim = len(type(self).INTERIM)
        self.narrow_features = False
        self.max_moves = cls.MAX_MOVES
        self.n_components = len(type(self).COMPONENTS)
        self.keyed = cls.action_key is not PyGame.action_key
        self.outcome_keyed = cls.outcome_key is not PyGame.outcome_key
        self.kept_legal = self.legal_buf
        self.kept_n_legal = &self.n_legal
        self.game = None
        self.faults = []
        self.interrupts = None
        self.cur = -1
        self.n_legal = 0

    # ---- Python side: every call into the designer's code goes through here ----

    cdef _fault(self, failure):
        """Keep the first failure for the next apply() (of this state or of any copy
        sharing its list): a query's failure (standing, action_key...), which leaves the
        state as it was."""
        if not self.faults:
            self.faults.append(failure)

    cdef _keep(self, failure):
        """Keep the failure of this state's own deal or move, and offer seat 0 one action
        so the loop reaches the next apply()."""
        self._fault(failure)
        self.cur = 0
        self.n_legal = 1
        self.legal_buf[0] = 0

    cdef _raise_kept(self):
        if self.faults:
            raise self.faults[0]

    cdef object _call(self, str method, tuple args):
        """The game's `method`(*args); a raise becomes a GameFailure naming it."""
        try:
            return getattr(self.game, method)(*args)
        except Exception as e:
            raise _failure(self.name, method, e) from None
        except SystemExit as e:
            raise GameFailure(self.name, method, f"called sys.exit({e.code!r})", traceback.format_exc()) from None
        except KeyboardInterrupt as e:
            self._own_interrupt(method, e)
            raise

    cdef _own_interrupt(self, str method, error):
        """A KeyboardInterrupt with no Ctrl-C counted since the deal is the game's own
        raise (a GameFailure); else it is the user's, and passes."""
        if _strategy._interrupts == self.interrupts:
            raise _failure(self.name, method, error) from None

    cdef int _int(self, str method, object value, int lo, int hi) except? -9:
        """`value` as an int in [lo, hi), else a GameFailure naming `method`."""
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise GameFailure(self.name, method, f"returned {_short(value)}, not an int")
        v = value.__index__()
        if not lo <= v < hi:
            raise GameFailure(self.name, method, f"returned {v}, outside {lo}..{hi - 1}")
        return v

    cdef list _list(self, str method, object values, str what):
        """`values` as a list if it is one (or a tuple, a range, a 1-d array), else a
        GameFailure naming `method`: a dict or a set is not read as its keys."""
        if type(values) is list:
            return values
        if isinstance(values, (list, tuple, range)):
            return list(values)
        if isinstance(values, np.ndarray) and values.ndim == 1:
            return values.tolist()
        raise GameFailure(self.name, method, f"returned {_short(values)}, a {type(values).__name__}, not {what}")

    cdef _ints(self, str method, object values, int n, int lo, int hi, int* out):
        items = self._list(method, values, f"a list of {n} ints")
        if len(items) != n:
            raise GameFailure(self.name, method, f"returned {_short(values)}, not a list of {n} ints")
        for i, v in enumerate(items):
            out[i] = self._int(method, v, lo, hi)

    cdef str _str(self, str method, object value):
        if not isinstance(value, str):
            raise GameFailure(self.name, method, f"returned {_short(value)}, not a str")
        return value

    cdef _advance(self):
        """After a deal or a move: the seat to act and its legal list, or the outcome."""
        cdef Py_ssize_t i, n
        cdef long v
        cdef unsigned char seen[SEEN_BYTES]
        if self.moves >= self.max_moves:
            self._finish(True)
            return
        p = self._int("current_player", self._call("current_player", ()), -1, self.n_players)
        if p < 0:
            self._finish(False)
            return
        legal = self._list("legal_actions", self._call("legal_actions", ()), "a list of actions")
        if not 0 < len(legal) <= MAX_ACTIONS:
            raise GameFailure(self.name, "legal_actions", f"returned {_short(legal)} while the game is not "
                              f"over: expected 1 to {MAX_ACTIONS} actions")
        n = len(legal)
        memset(seen, 0, sizeof(seen))
        for i in range(n):
            a = (<list>legal)[i]
            # The common case (a plain int in range) is checked in C; _int says what
            # is wrong with anything else.
            v = a if type(a) is int and -1 < a < MAX_ACTION else self._int("legal_actions", a, 0, MAX_ACTION)
            if seen[v >> 3] & (1 << (v & 7)):
                raise GameFailure(self.name, "legal_actions", f"returned {_short(legal)}: {v} listed twice")
            seen[v >> 3] |= 1 << (v & 7)
            self.legal_buf[i] = v
        self.n_legal = n
        self.cur = p

    cdef _finish(self, bint capped):
        cdef int n = self.n_players, p
        cdef int raw[MAX_PLAYERS]
        if capped:
            for p in range(n):
                raw[p] = self._int("standing", self._call("standing", (p,)), -SCORE_LIMIT, SCORE_LIMIT + 1)
            self.reason = len(type(self).END_REASONS) - 1
        else:
            self._ints("scores", self._call("scores", ()), n, -SCORE_LIMIT, SCORE_LIMIT + 1, raw)
            why = self._call("end_reason", ())
            if why not in type(self).GAME.END_REASONS:
                raise GameFailure(self.name, "end_reason", f"returned {_short(why)}, not one of END_REASONS "
                                  f"{tuple(type(self).GAME.END_REASONS)}")
            self.reason = type(self).GAME.END_REASONS.index(why)
        self.first = self._int("first_player", self._call("first_player", ()), 0, n)
        for p in range(n):
            self.pos[p] = (p - self.first + n) % n
        bonus = self.params.compensation.by_position(n)
        final = [raw[p] + bonus[self.pos[p]] for p in range(n)]
        self._ints("rank", self._call("rank", (final,)), n, 1, n + 1, self.rk)
        for p in range(n):
            self.sc[p] = final[p]
            if self.n_features:
                self._ints("features", self._call("features", (p,)), self.n_features, -2**31, 2**31 - 1,
                           &self.feats[p * MAX_FEATURES])
            if self.n_interim:
                self._ints("interim", self._call("interim", (p,)), self.n_interim, -2**31, 2**31 - 1,
                           &self.inter[p * MAX_INTERIM])
        self.cur = -1
        self.n_legal = 0

    cdef _guarded(self):
        """_advance() for a noexcept caller: a failure is kept for the next
        apply()."""
        try:
            self._advance()
        except BaseException as e:  # KeyboardInterrupt too: raised by the next apply()
            self._keep(e)

    cdef _deal(self, uint64_t seed):
        self.faults = []  # a new list: copies of the last game keep theirs
        self.moves = 0
        self.observed = False
        self.game = None
        self.interrupts = _strategy._interrupts
        try:
            try:
                self.game = type(self).GAME(self.params, seed)
            except KeyboardInterrupt as e:
                self._own_interrupt("setup", e)
                raise
        except BaseException as e:
            # The constructor calls setup (a raise there is setup's; a Ctrl-C is kept).
            self._keep(_failure(self.name, "setup", e) if isinstance(e, Exception)
                       and not isinstance(e, GameFailure) else e)
            return
        self._guarded()

    cdef _move(self, int action):
        self._raise_kept()
        if self.cur < 0:
            raise GameFailure(self.name, "apply", "was called on a finished game")
        for i in range(self.n_legal):
            if self.legal_buf[i] == action:
                break
        else:
            raise GameFailure(self.name, "apply", f"got action {action}, not in legal_actions "
                              f"{[self.legal_buf[i] for i in range(self.n_legal)]}")
        self._call("apply", (action,))
        self.moves += 1
        self._advance()

    # ---- the nogil contract ----

    cdef void reset(self, uint64_t seed) noexcept nogil:
        with gil:
            self._deal(seed)

    cdef int current_player(self) noexcept nogil:
        return self.cur

    cdef int legal_actions(self, int* out) noexcept nogil:
        memcpy(out, self.legal_buf, self.n_legal * sizeof(int))
        return self.n_legal

    cdef int apply(self, int action) except -2 nogil:
        with gil:
            self._move(action)
        return self.cur

    cdef int first_player(self) noexcept nogil:
        return self.first

    cdef int turn_position(self, int seat) noexcept nogil:
        return self.pos[seat]

    cdef int end_reason(self) noexcept nogil:
        return self.reason

    cdef void outcome(self, int* scores, int* ranks) noexcept nogil:
        memcpy(scores, self.sc, self.n_players * sizeof(int))
        memcpy(ranks, self.rk, self.n_players * sizeof(int))

    cdef int standing(self, int seat) noexcept nogil:
        cdef int v = 0
        if self.cur < 0:
            return self.sc[seat]
        with gil:
            if not self.faults:
                try:
                    v = self._int("standing", self._call("standing", (seat,)), -SCORE_LIMIT, SCORE_LIMIT + 1)
                except BaseException as e:
                    self._fault(e)
        return v

    cdef void interim(self, int seat, int* out) noexcept nogil:
        memcpy(out, &self.inter[seat * MAX_INTERIM], self.n_interim * sizeof(int))

    cdef void features(self, int seat, int* out) noexcept nogil:
        memcpy(out, &self.feats[seat * MAX_FEATURES], self.n_features * sizeof(int))

    cdef int action_component(self, int action) noexcept nogil:
        cdef int c = -1
        if self.n_components == 0:  # no GIL taken for a game without components
            return -1
        with gil:
            if not self.faults:
                try:
                    c = self._int("action_component", self._call("action_component", (action,)),
                                  -1, len(type(self).COMPONENTS))
                except BaseException as e:
                    self._fault(e)
        return c

    cdef int action_key(self, int action, int observer) noexcept nogil:
        cdef int k = action
        if not self.keyed:  # no GIL taken for a game whose actions mean the same to all
            return action
        with gil:
            if not self.faults:
                try:
                    k = self._int("action_key", self._call("action_key", (action, observer)), 0, MAX_ACTION)
                except BaseException as e:
                    self._fault(e)
        return k

    cdef int outcome_key(self, int observer) noexcept nogil:
        cdef int k = 0
        if not self.outcome_keyed:
            return 0
        with gil:
            if not self.faults:
                try:
                    k = self._int("outcome_key", self._call("outcome_key", (observer,)), 0, 1 << 30)
                except BaseException as e:
                    self._fault(e)
        return k

    cdef void copy_into(self, GameState other) noexcept nogil:
        with gil:
            self._copy_to(<PyGameState>other)

    cdef _copy_to(self, PyGameState o):
        o.faults, o.interrupts = self.faults, self.interrupts
        o.game = None
        if self.game is not None and not self.faults:
            try:
                other = self._call("copy", ())
                if other is self.game or not isinstance(other, type(self).GAME):
                    raise GameFailure(self.name, "copy", "returned the game itself, not a copy" if other is self.game
                                      else f"returned {_short(other)}, not a {type(self).GAME.__name__}")
                # A stream of its own, whatever the game's copy() did with self.chance
                # (kept, shared or left out): a copy's draws never move the original's.
                other.chance = self.game.chance.copy()
                o.game = other
            except BaseException as e:
                self._fault(e)
        o.cur, o.n_legal, o.moves, o.reason, o.first = self.cur, self.n_legal, self.moves, self.reason, self.first
        memcpy(o.legal_buf, self.legal_buf, self.n_legal * sizeof(int))
        memcpy(o.sc, self.sc, sizeof(self.sc))
        memcpy(o.rk, self.rk, sizeof(self.rk))
        memcpy(o.pos, self.pos, sizeof(self.pos))
        if self.cur < 0:
            memcpy(o.feats, self.feats, sizeof(self.feats))
            memcpy(o.inter, self.inter, sizeof(self.inter))

    cdef void determinize(self, int observer, Rng* rng) noexcept nogil:
        if self.cur < 0:
            return
        with gil:
            if self.faults:
                return
            # The future of the chance stream is resampled (as a compiled game's is): a
            # search on this copy must not know the dice to come. Seeded from the bot's
            # stream without drawing from it, so the bot's own draws (its ties, its
            # rollouts) are those it makes in a game without chance.
            self.game.chance = Chance(rng[0].s)
            if type(self).GAME.HIDDEN_INFORMATION:
                view = RngView.__new__(RngView)
                (<RngView>view).rng = rng
                try:
                    self._call("determinize", (observer, view))
                except BaseException as e:
                    self._keep(e)
                    return
                finally:
                    (<RngView>view).rng = NULL  # the stream is lent for this call only
                self._guarded()

    # ---- Python API (play, traces, Python bots): a kept failure is raised first ----

    def observation(self, int seat):
        self._raise_kept()
        seen = self._call("observation", (seat,))
        if not self.observed:
            # The first observation of each game is checked: a bot, a trace or a report
            # may write it out. The conformance suite checks every one.
            self.observed = True
            try:
                json.dumps(seen)
            except (TypeError, ValueError) as e:
                raise GameFailure(self.name, "observation", f"returned what is not JSON-serialisable ({e})") from None
        return seen

    def describe(self, int action):
        self._raise_kept()
        return self._str("describe", self._call("describe", (action,)))

    def render(self):
        self._raise_kept()
        return "" if self.game is None else self._str("render", self._call("render", ()))

    def to_dict(self):
        self._raise_kept()
        if self.game is None:
            return {}
        found = self._call("to_dict", ())
        if not isinstance(found, dict):
            raise GameFailure(self.name, "to_dict", f"returned {_short(found)}, not a dict")
        return found

    def describe_outcome(self):
        self._raise_kept()
        return "" if self.game is None else self._str("describe_outcome", self._call("describe_outcome", ()))

    def phase_label(self):
        self._raise_kept()
        return "" if self.game is None else self._str("phase_label", self._call("phase_label", ()))


def _failure(name, method, error):
    """The GameFailure of `error`, raised in a call of the game's `method`: it names the
    game's own method the error came from when that is another one (`observation`
    called by the default `render`)."""
    inner, me, tb = method, None, error.__traceback__
    while tb is not None:
        here = tb.tb_frame.f_locals.get("self")
        name_here = tb.tb_frame.f_code.co_name
        if isinstance(here, PyGame) and (me is None or here is me) and not name_here.startswith("<"):
            me, inner = here, name_here
        tb = tb.tb_next
    where = method if inner in (method, "__init__") else f"{inner} (called by {method})"
    what = "raised KeyboardInterrupt (not a Ctrl-C)" if isinstance(error, KeyboardInterrupt) else \
        f"raised {type(error).__name__}: {error}"
    return GameFailure(name, where, what, "".join(traceback.format_exception(error)))
