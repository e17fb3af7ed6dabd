"""What a game declares about itself besides its rules, the same way for a compiled game
and a Python one: class attributes of its state class (a simcore.state.GameState or a
simcore.pygame.PyGame subclass), read by simcore.registry.spec_of.

    NAME, TITLE       the name commands know it by, and the printed one
    PLAYERS           (fewest, most) players
    PARAMS            its params model; a compiled game adds DEFAULTS, the TOML file of
                      their values, sources and docs (a Python game's are in the model)
    FEATURE_ROLES     how the analysis reads its features (a FeatureRoles, or None)
    POSITION_KNOBS    its own knobs that equalise turn positions: param -> candidate values
    BONUS_DECIDES     whether a score bonus can change who wins (False for a race)
    TIE_BREAKS        what breaks a tie on points, in order (see Victory)
    WON_IN_PLAY       END_REASONS whose winner the scores do not decide
"""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["DECLARED", "FeatureRoles", "Victory"]

# The metadata attributes both kinds of game declare (with the base classes' defaults).
DECLARED = ("NAME", "TITLE", "PLAYERS", "PARAMS", "FEATURE_ROLES", "POSITION_KNOBS", "BONUS_DECIDES",
            "TIE_BREAKS", "WON_IN_PLAY")


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


@dataclass(frozen=True)
class FeatureRoles:
    """How the analysis reads a game's per-seat features, declared by the game itself
    with shell-style name patterns (`scored_*`), so no central list names them.

    A feature is, by its first matching role: positional (set by the turn position,
    e.g. a starting amount by turn order: the position balance already says it), an
    outcome (the result, a part of the final score or a holding at the end: shown as a
    score breakdown, never as an effect on winning), setup (dealt before play, e.g. a
    solo target: win rate per value), a behaviour (what the player did: timings, counts
    of actions), or else a component (what the player took).
    """

    positional: tuple[str, ...] = ()
    outcomes: tuple[str, ...] = ()
    setup: tuple[str, ...] = ()
    behaviours: tuple[str, ...] = ()
    # 0 means "undefined for this seat" (e.g. the turn of a collect the game ended
    # before): such rows are dropped from the feature's analysis, not read as a value.
    zero_missing: tuple[str, ...] = ()
    # Regular expressions with one group: features whose names give the same group
    # carry the same information (a store's track, place and supplies) and make one
    # finding, named by the group.
    same_information: tuple[str, ...] = ()

    def role(self, name: str) -> str:
        for role, patterns in (("positional", self.positional), ("outcome", self.outcomes), ("setup", self.setup),
                               ("behaviour", self.behaviours)):
            if _matches(name, patterns):
                return role
        return "component"

    def missing_when_zero(self, name: str) -> bool:
        return _matches(name, self.zero_missing)

    def group(self, name: str) -> str:
        for pattern in self.same_information:
            if m := re.fullmatch(pattern, name):
                return m.group(1)
        return name


@dataclass(frozen=True)
class Victory:
    """How a game's winner follows from the end of play, declared by the game so that what
    another score bonus by turn position (compensation.points) would have decided can be
    worked out from games already played, as the game's own outcome decides them: the
    best final score wins, the bonus included; a tie on it goes to the seat with more of
    the first tie-break, then of the next; a tie on every one is a shared victory. A game
    that ended by an end reason of `in_play` was won whatever the scores.

    A tie-break is a per-seat feature column of the results (more wins the tie), or a
    function of the run's params (the manifest's, as JSON) giving a key to each turn
    position (a turn-order tie-break). What the declaration does not cover is found out
    on the games themselves: a recorded result the declaration does not give back is
    held as played whatever the bonus (analysis.experiments.komi)."""

    tie_breaks: tuple[str | Callable[[dict[str, Any]], Sequence[int]], ...] = ()
    in_play: tuple[str, ...] = ()  # end reasons whose winner the scores do not decide
